//! The floor: the least a tracer can do per region visit.
//!
//! Each enter and each leave reads the TSC and stores the value into a
//! preallocated per-thread buffer at a wrapping index: no region id, no
//! bounds check, no flush. Any real tracer does at least this much, so its
//! cost per pair is the reference the others are compared with.

use std::cell::Cell;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Slots of the per-thread buffer (a power of two: the index wraps).
const SLOTS: usize = 1 << 16;

thread_local! {
    static BUF: Cell<*mut u64> = const { Cell::new(std::ptr::null_mut()) };
    static IDX: Cell<usize> = const { Cell::new(0) };
}

/// One clock read: the TSC where there is one.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // Safety: rdtsc has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static T0: OnceLock<Instant> = OnceLock::new();
        T0.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

#[cold]
#[inline(never)]
fn alloc() -> *mut u64 {
    // The buffer lives as long as the process (threads of a benchmark are
    // few); leaking it keeps the hot path free of a destructor check.
    let p = Box::leak(vec![0u64; SLOTS].into_boxed_slice()).as_mut_ptr();
    BUF.with(|b| b.set(p));
    p
}

/// Records one timestamp.
#[inline(always)]
fn record() {
    let mut p = BUF.with(|b| b.get());
    if p.is_null() {
        p = alloc();
    }
    let t = ticks();
    IDX.with(|i| {
        let n = i.get();
        // Safety: the index is masked into the buffer.
        unsafe { *p.add(n & (SLOTS - 1)) = t };
        i.set(n.wrapping_add(1));
    });
}

/// A region visit of the floor tracer: enter now, leave on drop.
pub struct Guard(());

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        record();
    }
}

/// Enters a region of the floor tracer.
#[inline(always)]
pub fn enter() -> Guard {
    record();
    Guard(())
}

/// Runs `pairs` enter+leave pairs of the floor tracer.
#[inline(never)]
pub fn run(pairs: u64) -> Duration {
    let t = Instant::now();
    for i in 0..pairs {
        let _g = enter();
        black_box(i);
    }
    t.elapsed()
}

/// Runs the floor tracer on `threads` threads at once for `secs` seconds
/// each; returns each thread's mean ns per pair (what contention between
/// threads costs even the minimal tracer on this machine).
pub fn parallel(threads: usize, secs: f64) -> Vec<f64> {
    let dur = Duration::from_secs_f64(secs);
    let go = std::sync::Arc::new(std::sync::Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let go = go.clone();
            std::thread::spawn(move || {
                go.wait();
                let t = Instant::now();
                let mut n = 0u64;
                while t.elapsed() < dur {
                    run(4096);
                    n += 4096;
                }
                t.elapsed().as_nanos() as f64 / n as f64
            })
        })
        .collect();
    handles.into_iter().filter_map(|h| h.join().ok()).collect()
}

/// Cost of one clock read, ns, over `reads` back-to-back reads.
#[inline(never)]
pub fn clock_read_ns(reads: u64) -> f64 {
    let t = Instant::now();
    let mut sum = 0u64;
    for _ in 0..reads {
        sum = sum.wrapping_add(ticks());
    }
    black_box(sum);
    t.elapsed().as_nanos() as f64 / reads.max(1) as f64
}

/// Timestamps recorded so far on this thread (for tests).
#[cfg(test)]
fn recorded() -> usize {
    IDX.with(|i| i.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_two_stamps_per_pair() {
        let before = recorded();
        run(1000);
        assert_eq!(recorded() - before, 2000);
        assert!(clock_read_ns(1000) > 0.0);
    }
}
