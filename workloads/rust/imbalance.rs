//! A threaded program linked with Parallax, for tests and examples: worker k
//! computes k+1 units per iteration, updates a shared table under one mutex
//! and waits at a barrier.
//!
//! Usage: imbalance [THREADS] [ITERATIONS] [crash]
//! With `crash` as third argument the program dies of SIGSEGV after its
//! work, to show that what was recorded survives.

use std::sync::Arc;

use parallax::sync::{Barrier, Mutex};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let iterations: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let crash = args.get(3).is_some_and(|s| s == "crash");
    let table = Arc::new(Mutex::new(vec![0u64; 16]));
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let (table, barrier) = (table.clone(), barrier.clone());
            parallax::spawn(move || work(w, iterations, &table, &barrier))
        })
        .collect();
    let mut sum = 0.0;
    for w in workers {
        sum += w.join().unwrap();
    }
    println!("checksum {sum:.3}");
    if crash {
        // Safety: deliberately fatal, to test crash handling.
        unsafe { std::ptr::null_mut::<u64>().write_volatile(1) };
    }
}

#[parallax::instrument]
fn work(w: usize, iterations: usize, table: &Mutex<Vec<u64>>, barrier: &Barrier) -> f64 {
    let mut x = 1.0;
    for i in 0..iterations {
        x = compute(x, (w + 1) * 5_000);
        table.lock().unwrap()[i % 16] += 1;
        barrier.wait();
    }
    x
}

#[parallax::instrument]
fn compute(mut x: f64, n: usize) -> f64 {
    for k in 0..n {
        x = (x + k as f64).sqrt();
    }
    x
}
