//! Ground-truth Rust programs with injected bottlenecks, measured by the
//! `parallax` crate: `bottlenecks SCENARIO` with SCENARIO one of lock,
//! barrier, value, join, clean, semaphore, condvar, competing (see the `*.expect.json` next
//! to this file for what each must produce).
//!
//! Injected work is sleeping, so that its length survives a machine shared
//! by more threads than cores. Workers are numbered in creation order: the
//! runtime numbers a thread at its first event, so each spawn waits until
//! the new thread has recorded one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parallax::sync::{Barrier, Condvar, Mutex, Semaphore, SyncVar};

static STARTED: AtomicUsize = AtomicUsize::new(0);

fn work_ms(ms: u64) {
    let _r = parallax::region!(User, "work");
    std::thread::sleep(Duration::from_millis(ms));
}

/// Spawns `f` as the next numbered thread.
fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> parallax::JoinHandle<T> {
    let before = STARTED.load(Ordering::SeqCst);
    let h = parallax::spawn(move || {
        parallax::mark!("started", 0);
        STARTED.fetch_add(1, Ordering::SeqCst);
        f()
    });
    while STARTED.load(Ordering::SeqCst) == before {
        std::thread::yield_now();
    }
    h
}

fn lock() {
    let m = Arc::new(Mutex::new(0u64));
    let go = Arc::new(Barrier::new(2));
    // Steps in which the holder has taken the lock: a plain atomic, which
    // records nothing. The waiter asks for the lock only once the holder
    // has it for the step, so it waits 29–30 ms every step: timing
    // alone cannot order them (a 1 ms sleep sometimes lasts 4 on a busy
    // machine, and a waiter that finds the lock free once ends a step
    // before the holder).
    let held = Arc::new(AtomicUsize::new(0));
    let (m1, g1, h1) = (m.clone(), go.clone(), held.clone());
    let holder = spawn(move || {
        g1.wait();
        for i in 0..10 {
            let mut g = m1.lock().unwrap();
            h1.store(i + 1, Ordering::SeqCst);
            work_ms(30);
            *g += 1;
            drop(g);
            work_ms(1);
        }
    });
    let waiter = spawn(move || {
        go.wait();
        for i in 0..10 {
            work_ms(1);
            while held.load(Ordering::SeqCst) <= i {
                std::thread::sleep(Duration::from_micros(100));
            }
            *m.lock().unwrap() += 1;
        }
    });
    holder.join().unwrap();
    waiter.join().unwrap();
}

fn barrier() {
    let b = Arc::new(Barrier::new(4));
    let hs: Vec<_> = (1..=4u64)
        .map(|id| {
            let b = b.clone();
            spawn(move || {
                for _ in 0..10 {
                    work_ms(if id == 2 { 25 } else { 5 });
                    b.wait();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

fn value() {
    let v = Arc::new(SyncVar::new());
    let v1 = v.clone();
    let producer = spawn(move || {
        for i in 1..=10 {
            work_ms(30);
            v1.advance(i);
        }
    });
    let consumer = spawn(move || {
        for i in 1..=10 {
            v.await_index(i);
            work_ms(1);
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();
}

fn join() {
    let hs: Vec<_> = (1..=4u64)
        .map(|id| spawn(move || work_ms(if id == 3 { 250 } else { 50 })))
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

fn clean() {
    let b = Arc::new(Barrier::new(4));
    let m = Arc::new(Mutex::new(0u64));
    let hs: Vec<_> = (1..=4u64)
        .map(|id| {
            let (b, m) = (b.clone(), m.clone());
            spawn(move || {
                for _ in 0..10 {
                    work_ms(50);
                    *m.lock().unwrap() += id;
                    b.wait();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

fn semaphore() {
    // The consumer takes an item that the producer releases after 30 ms
    // of work, ten times; the next item is made once this one is taken.
    let items = Arc::new(Semaphore::new(0));
    let taken = Arc::new(AtomicUsize::new(0));
    let (i1, t1) = (items.clone(), taken.clone());
    let producer = spawn(move || {
        for i in 0..10 {
            work_ms(30);
            i1.release();
            while t1.load(Ordering::SeqCst) <= i {
                std::thread::yield_now();
            }
        }
    });
    let consumer = spawn(move || {
        for _ in 0..10 {
            items.acquire();
            taken.fetch_add(1, Ordering::SeqCst);
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();
}

fn condvar() {
    // The consumer waits for a notification that the producer gives after
    // 30 ms of work, ten times; the next round starts once the consumer
    // took this one.
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let taken = Arc::new(AtomicUsize::new(0));
    let (p1, t1) = (pair.clone(), taken.clone());
    let producer = spawn(move || {
        for i in 0..10 {
            work_ms(30);
            let (m, cv) = &*p1;
            *m.lock().unwrap() = true;
            cv.notify_one();
            while t1.load(Ordering::SeqCst) <= i {
                std::thread::yield_now();
            }
        }
    });
    let consumer = spawn(move || {
        let (m, cv) = &*pair;
        for _ in 0..10 {
            let mut ready = m.lock().unwrap();
            while !*ready {
                ready = cv.wait(ready).unwrap();
            }
            *ready = false;
            drop(ready);
            taken.fetch_add(1, Ordering::SeqCst);
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();
}

/// Ends after `ms` of a transfer's own time at the `active` transfers'
/// port: the port's bandwidth is shared equally by the transfers on it, so
/// two at once take twice as long (the injected contention; the port records
/// nothing).
fn transfer(active: &AtomicUsize, ms: f64) {
    let n = active.fetch_add(1, Ordering::SeqCst) + 1;
    let mut done = 0.0;
    let mut sharing = n as f64;
    while done < ms {
        let t = std::time::Instant::now();
        std::thread::sleep(Duration::from_micros(100));
        done += t.elapsed().as_secs_f64() * 1e3 / sharing;
        sharing = active.load(Ordering::SeqCst) as f64;
    }
    active.fetch_sub(1, Ordering::SeqCst);
}

fn competing() {
    // Two threads put 1 ms blocks into the memory of rank 1 through one
    // port: each first alone (the other works), then both at once, when
    // each block takes about twice as long.
    let port = Arc::new(AtomicUsize::new(0));
    let put = |port: &AtomicUsize, block: u64| {
        let _r = parallax::region!(Put, "put_block");
        parallax::events::put(1, 1 << 20, block << 20);
        transfer(port, 1.0);
    };
    let hs: Vec<_> = [(0u64, 20u64), (15, 5)]
        .into_iter()
        .map(|(before, after)| {
            let port = port.clone();
            spawn(move || {
                if before > 0 {
                    work_ms(before);
                }
                (0..10).for_each(|b| put(&port, b));
                work_ms(after);
                (10..50).for_each(|b| put(&port, b));
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    match scenario.as_str() {
        "lock" => lock(),
        "barrier" => barrier(),
        "value" => value(),
        "join" => join(),
        "clean" => clean(),
        "semaphore" => semaphore(),
        "condvar" => condvar(),
        "competing" => competing(),
        _ => {
            eprintln!(
                "usage: bottlenecks lock|barrier|value|join|clean|semaphore|condvar|competing"
            );
            std::process::exit(2);
        }
    }
    parallax::finish();
}
