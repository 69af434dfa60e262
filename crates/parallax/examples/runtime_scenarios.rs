//! The runtime's end-to-end scenarios, each run in a process of its own by
//! crates/parallax/tests/runtime.rs (`runtime_scenarios NAME`), which reads
//! the experiment back.

use std::path::Path;

use parallax_model::event::EventKind;

#[path = "../tests/read_back/mod.rs"]
mod read_back;
use read_back::{count, events, open, region_id};

fn main() {
    let s = std::env::args().nth(1).expect("a scenario name");
    match s.as_str() {
        "workers" => workers(),
        "flood" => flood(),
        "flow" => flow(),
        "segv" | "abort" | "term" | "int" => crash(&s),
        "exit_in_thread" => exit_in_thread(),
        "exit_while_recording" => exit_while_recording(),
        "thread_exit" => thread_exit(),
        "fork" => fork(),
        "condvar" => condvar(),
        "condvar_timeout" => condvar_timeout(),
        "barrier_again" => barrier_again(),
        _ => panic!("unknown scenario {s}"),
    }
}

/// A thread waits on a condition until the main thread sets the flag and
/// notifies it.
fn condvar() {
    use std::sync::Arc;
    let pair = Arc::new((
        parallax::sync::Mutex::new(false),
        parallax::sync::Condvar::new(),
    ));
    let p = pair.clone();
    let h = parallax::spawn(move || {
        let (m, cv) = &*p;
        let mut ready = m.lock().unwrap();
        while !*ready {
            ready = cv.wait(ready).unwrap();
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (m, cv) = &*pair;
    *m.lock().unwrap() = true;
    cv.notify_one();
    h.join().unwrap();
    parallax::finish();
}

/// The main thread's first timed wait times out (nobody notifies); its
/// second is notified by a thread started after it.
fn condvar_timeout() {
    use std::sync::Arc;
    use std::time::Duration;
    let pair = Arc::new((
        parallax::sync::Mutex::new(false),
        parallax::sync::Condvar::new(),
    ));
    let (m, cv) = &*pair;
    let g = m.lock().unwrap();
    let (g, t) = cv.wait_timeout(g, Duration::from_millis(5)).unwrap();
    assert!(t.timed_out());
    drop(g);
    let p = pair.clone();
    let h = parallax::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let (m, cv) = &*p;
        *m.lock().unwrap() = true;
        cv.notify_one();
    });
    let mut ready = m.lock().unwrap();
    while !*ready {
        ready = cv.wait_timeout(ready, Duration::from_secs(60)).unwrap().0;
    }
    drop(ready);
    h.join().unwrap();
    parallax::finish();
}

/// A barrier waited on twice, then another made in its place (one address).
fn barrier_again() {
    let mut slot = Box::new(parallax::sync::Barrier::new(1));
    let first = &*slot as *const _ as usize;
    slot.wait();
    slot.wait();
    *slot = parallax::sync::Barrier::new(1);
    assert_eq!(&*slot as *const _ as usize, first);
    slot.wait();
    slot.wait();
}

fn workers() {
    use std::sync::Arc;
    let lock = Arc::new(parallax::sync::Mutex::new(0u64));
    let barrier = Arc::new(parallax::sync::Barrier::new(3));
    let handles: Vec<_> = (0..3)
        .map(|w| {
            let (lock, barrier) = (lock.clone(), barrier.clone());
            parallax::spawn_named(Some(format!("worker-{w}")), move || {
                for i in 0..100u64 {
                    let _s = parallax::region!("step");
                    {
                        let _w = parallax::region!("work");
                        std::hint::black_box((0..(w + 1) * 1000).sum::<u64>());
                    }
                    *lock.lock().unwrap() += i;
                    barrier.wait();
                    parallax::mark!("iteration", 7);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

fn flood() {
    let h: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(|| {
                for i in 0..200_000u64 {
                    let _g = parallax::region!("tiny");
                    if i % 200 == 0 {
                        parallax::mark!("progress", i / 200);
                    }
                }
            })
        })
        .collect();
    for t in h {
        t.join().unwrap();
    }
}

fn flow() {
    let outer = parallax::region!("outer");
    parallax::flow_off();
    for _ in 0..10 {
        let _g = parallax::region!("hidden");
    }
    drop(outer);
    parallax::flow_on();
    for _ in 0..20 {
        let _g = parallax::region!("recorded");
    }
}

fn crash(kind: &str) {
    // A shell starts background jobs with SIGINT ignored, which the
    // runtime leaves alone (and the raise below would do nothing): the
    // scenario is a program that takes the default, as interactive ones do.
    // Safety: sets a disposition before the runtime starts.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
    for _ in 0..5000 {
        let _g = parallax::region!("before crash");
    }
    let _open = parallax::region!("crashing");
    // Safety: deliberately fatal.
    unsafe {
        match kind {
            "segv" => {
                let p = std::hint::black_box(std::ptr::null_mut::<u64>());
                p.write_volatile(1);
            }
            "abort" => std::process::abort(),
            "term" => {
                libc::raise(libc::SIGTERM);
            }
            _ => {
                libc::raise(libc::SIGINT);
            }
        }
    }
    std::thread::sleep(std::time::Duration::from_secs(5));
}

fn exit_in_thread() {
    let t = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let _g = parallax::region!("last words");
        std::process::exit(3);
    });
    for _ in 0..1000 {
        let _g = parallax::region!("main loop");
    }
    t.join().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(5));
}

fn exit_while_recording() {
    // Measuring (calibration done) before the threads start.
    drop(parallax::region!("start"));
    let go = std::sync::Arc::new(std::sync::Barrier::new(5));
    for _ in 0..4 {
        let go = go.clone();
        std::thread::spawn(move || {
            go.wait();
            loop {
                let _g = parallax::region!("spin");
            }
        });
    }
    go.wait();
    std::thread::sleep(std::time::Duration::from_millis(30));
    std::process::exit(7);
}

fn thread_exit() {
    std::thread::spawn(|| {
        for _ in 0..100 {
            let _g = parallax::region!("short-lived");
        }
    })
    .join()
    .unwrap();
    // The process is still running: the thread's events and profile must
    // already be on disk.
    let p = open(Path::new(&std::env::var("PARALLAX_OUT").unwrap()));
    let id = region_id(&p, "short-lived");
    let evs = events(&p);
    let n: usize = evs
        .values()
        .map(|e| count(e, |k| *k == EventKind::Enter { region: id }))
        .sum();
    assert_eq!(n, 100);
    let (trees, _) = p.profiles().unwrap();
    assert_eq!(trees.len(), 1, "the ended thread's profile");
}

fn fork() {
    for _ in 0..10 {
        let _g = parallax::region!("before fork");
    }
    let _open = parallax::region!("forking");
    // Safety: the child only records regions and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        for _ in 0..30 {
            let _g = parallax::region!("in child");
        }
        std::process::exit(0);
    }
    let mut status = 0;
    // Safety: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(status, 0);
    for _ in 0..20 {
        let _g = parallax::region!("after fork");
    }
}
