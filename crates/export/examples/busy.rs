//! A program linked with Parallax that records many events quickly, to
//! measure export speed and size on a real trace:
//!
//! ```sh
//! cargo build --release -p parallax-export --example busy
//! parallax run --mode trace --out /tmp/busy -- target/release/examples/busy 2 1000000
//! ```
//!
//! Each of THREADS threads runs ITERATIONS iterations: a loop region with a
//! small function region in it; every 16th iteration a message event pair
//! and a mutex, every 256th a metric sample.

use std::sync::Arc;

use parallax::events;
use parallax::sync::Mutex;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let iterations: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let lock = Arc::new(Mutex::new(0u64));
    let metric = events::register_metric("progress", "iterations");
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let lock = lock.clone();
            parallax::spawn(move || work(w as u32, threads as u32, iterations, &lock, metric))
        })
        .collect();
    let mut sum = 0;
    for w in workers {
        sum += w.join().unwrap();
    }
    println!("checksum {sum}");
}

fn work(w: u32, n: u32, iterations: u64, lock: &Mutex<u64>, metric: u32) -> u64 {
    let mut x = w as u64;
    for i in 0..iterations {
        let _step = parallax::region!(Loop, "step");
        {
            let _k = parallax::region!(Function, "kernel");
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        if i % 16 == 0 {
            let peer = (w + 1) % n;
            {
                let _s = parallax::region!(Send, "MPI_Send");
                events::send(peer, 1, 0, 4096);
            }
            {
                let _r = parallax::region!(Recv, "MPI_Recv");
                events::recv((w + n - 1) % n, 1, 0, 4096);
            }
            *lock.lock().unwrap() += 1;
        }
        if i % 256 == 0 {
            events::metric(metric, i as i64);
        }
    }
    std::hint::black_box(x)
}
