//! `parallax baseline`: bottleneck-free micro-benchmarks of the
//! synchronization constructs on this machine, stored for the analysis's
//! baseline filter (PPW: "the minimal amount of time needed by a given
//! operation to complete its execution under ideal circumstances").
//!
//! Each construct runs uncontended (a free lock, a posted semaphore, a
//! variable already set, a finished thread) or perfectly balanced (a
//! barrier of threads that do nothing else); the time per operation is
//! the least over repeated batches, which drops the machine's noise.

use std::path::PathBuf;
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::Instant;

use anyhow::Context;

use parallax_analysis::bottleneck::Baselines;
use parallax_output::file::Kind;

/// A baselines file, by its first line.
const KIND: Kind = Kind::starting_with("a baselines file", &[b"# construct locations "]);

/// Arguments of `parallax baseline`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to store the baselines (default: $PARALLAX_BASELINES, else
    /// ~/.config/parallax/baselines.txt).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Largest barrier size measured (default: twice the cores).
    #[arg(long)]
    pub max_threads: Option<usize>,
}

/// Where `parallax baseline` stores its result and `analyze` looks for it.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PARALLAX_BASELINES") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".config/parallax/baselines.txt"))
}

/// Least time per operation, s, over `batches` batches of `n`.
fn least(batches: usize, n: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / n as f64);
    }
    best
}

fn barrier(threads: usize, iters: usize) -> f64 {
    let b = Arc::new(Barrier::new(threads));
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let hs: Vec<_> = (1..threads)
            .map(|_| {
                let b = b.clone();
                std::thread::spawn(move || {
                    for _ in 0..iters {
                        b.wait();
                    }
                })
            })
            .collect();
        let t = Instant::now();
        for _ in 0..iters {
            b.wait();
        }
        best = best.min(t.elapsed().as_secs_f64() / iters as f64);
        for h in hs {
            let _ = h.join();
        }
    }
    best
}

/// Measures every construct.
pub fn measure(max_threads: usize) -> Baselines {
    let mut b = Baselines::default();
    let m = Mutex::new(0u64);
    let lock = least(20, 20_000, || {
        *m.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    });
    b.times.insert(("lock".into(), 1), lock);
    let cv = Condvar::new();
    let sem = least(20, 20_000, || {
        let mut c = m.lock().unwrap_or_else(|e| e.into_inner());
        *c += 1;
        cv.notify_one();
        *c -= 1;
    });
    b.times.insert(("sem_wait".into(), 1), sem);
    let v = std::sync::atomic::AtomicU64::new(1);
    let val = least(20, 100_000, || {
        while v.load(std::sync::atomic::Ordering::Acquire) < 1 {}
    });
    b.times.insert(("await".into(), 1), val);
    b.times.insert(("wait_on_value".into(), 1), val);
    let join = least(5, 50, || {
        let h = std::thread::spawn(|| {});
        std::thread::sleep(std::time::Duration::from_micros(50));
        let t = Instant::now();
        let _ = h.join();
        std::hint::black_box(t.elapsed());
    });
    b.times.insert(("thread_join".into(), 1), join);
    let mut n = 2;
    while n <= max_threads.max(2) {
        b.times
            .insert(("barrier".into(), n as u32), barrier(n, 2000));
        n *= 2;
    }
    b
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let b = measure(a.max_threads.unwrap_or(2 * cores));
    let path = a
        .out
        .or_else(default_path)
        .ok_or_else(|| anyhow::anyhow!("no --out and no HOME to store the baselines in"))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    parallax_output::file::write(&path, KIND, b.to_text().as_bytes())
        .with_context(|| format!("cannot store the baselines in {}", path.display()))?;
    let mut s = format!("Baselines stored in {}\n", path.display());
    for ((c, n), t) in &b.times {
        s.push_str(&format!(
            "  {c:<14} {n:>3} location(s)  {:>10.3} µs\n",
            t * 1e6
        ));
    }
    crate::console::out(&s)?;
    Ok(std::process::ExitCode::SUCCESS)
}
