//! The synchronization a kernel uses, chosen by level: at `Raw` the
//! standard library's (nothing recorded), at `Full` the measured ones of
//! `parallax` (each operation a region with its events). A kernel is
//! written once against these; the branch on the level is taken the same
//! way every time, so the work between synchronizations is the same code.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use super::Level;

/// A value alone on its cache line: iterations that different threads run
/// at once then share no line (false sharing would make a body's loads
/// depend on where the other threads are, which the probes change).
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct Line<T>(pub(crate) T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A mutex holding a `T`.
pub(crate) enum Lock<T> {
    Plain(Mutex<T>),
    Measured(parallax::sync::Mutex<T>),
}

impl<T> Lock<T> {
    pub(crate) fn new(level: Level, value: T) -> Lock<T> {
        match level {
            Level::Raw => Lock::Plain(Mutex::new(value)),
            Level::Full => Lock::Measured(parallax::sync::Mutex::new(value)),
        }
    }

    /// Runs `f` holding the lock.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        match self {
            Lock::Plain(m) => f(&mut m.lock().unwrap_or_else(|e| e.into_inner())),
            Lock::Measured(m) => f(&mut m.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }

    pub(crate) fn into_inner(self) -> T {
        match self {
            Lock::Plain(m) => m.into_inner().unwrap_or_else(|e| e.into_inner()),
            Lock::Measured(m) => m.into_inner().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// A barrier for a fixed number of threads.
pub(crate) enum Barrier {
    Plain(std::sync::Barrier),
    Measured(parallax::sync::Barrier),
}

impl Barrier {
    pub(crate) fn new(level: Level, n: usize) -> Barrier {
        match level {
            Level::Raw => Barrier::Plain(std::sync::Barrier::new(n)),
            Level::Full => Barrier::Measured(parallax::sync::Barrier::new(n)),
        }
    }

    #[inline]
    pub(crate) fn wait(&self) {
        match self {
            Barrier::Plain(b) => {
                b.wait();
            }
            Barrier::Measured(b) => {
                b.wait();
            }
        }
    }
}

/// One advance/await flag per DOACROSS iteration (iteration `i` is
/// advanced to index `i + 1`: a flag starts at 0).
///
/// A single variable whose value only grows would not do: with
/// self-scheduling, iteration i+1 can advance before iteration i, and an
/// await of i would then pass before i advanced.
pub(crate) enum Flags {
    Plain(Vec<Line<AtomicU64>>),
    Measured(Vec<Line<parallax::sync::SyncVar>>),
}

impl Flags {
    pub(crate) fn new(level: Level, n: usize) -> Flags {
        match level {
            Level::Raw => Flags::Plain((0..n).map(|_| Line::default()).collect()),
            Level::Full => Flags::Measured(
                (0..n)
                    .map(|_| Line(parallax::sync::SyncVar::new()))
                    .collect(),
            ),
        }
    }

    #[inline]
    pub(crate) fn advance(&self, i: usize) {
        match self {
            Flags::Plain(v) => {
                v[i].fetch_max(i as u64 + 1, Ordering::Release);
            }
            Flags::Measured(v) => v[i].advance(i as u64 + 1),
        }
    }

    /// Waits until iteration `i` has advanced; spins, then yields, as
    /// `parallax::sync::SyncVar` does.
    #[inline]
    pub(crate) fn await_iteration(&self, i: usize) {
        match self {
            Flags::Plain(v) => {
                let mut spins = 0u32;
                while v[i].load(Ordering::Acquire) < i as u64 + 1 {
                    spins += 1;
                    if spins < 1000 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
            Flags::Measured(v) => v[i].await_index(i as u64 + 1),
        }
    }
}

/// The iteration counter of a self-scheduled loop of `n` iterations.
pub(crate) enum Schedule {
    Plain(AtomicU64, u64),
    Measured(parallax::sync::SelfScheduled),
}

impl Schedule {
    pub(crate) fn new(level: Level, n: usize) -> Schedule {
        match level {
            Level::Raw => Schedule::Plain(AtomicU64::new(0), n as u64),
            Level::Full => Schedule::Measured(parallax::sync::SelfScheduled::new(n as u64)),
        }
    }

    /// The calling thread's next iteration, `None` when all are taken.
    #[inline]
    pub(crate) fn next(&self) -> Option<usize> {
        match self {
            Schedule::Plain(next, n) => {
                let i = next.fetch_add(1, Ordering::Relaxed);
                (i < *n).then_some(i as usize)
            }
            Schedule::Measured(s) => s.next().map(|i| i as usize),
        }
    }
}

/// A counting semaphore.
pub(crate) enum Sem {
    /// The same construction as `parallax::sync::Semaphore`, unrecorded.
    Plain(Mutex<u64>, Condvar),
    Measured(parallax::sync::Semaphore),
}

impl Sem {
    pub(crate) fn new(level: Level, permits: u64) -> Sem {
        match level {
            Level::Raw => Sem::Plain(Mutex::new(permits), Condvar::new()),
            Level::Full => Sem::Measured(parallax::sync::Semaphore::new(permits)),
        }
    }

    #[inline]
    pub(crate) fn acquire(&self) {
        match self {
            Sem::Plain(count, cv) => {
                let mut c = count.lock().unwrap_or_else(|e| e.into_inner());
                while *c == 0 {
                    c = cv.wait(c).unwrap_or_else(|e| e.into_inner());
                }
                *c -= 1;
            }
            Sem::Measured(s) => s.acquire(),
        }
    }

    #[inline]
    pub(crate) fn release(&self) {
        match self {
            Sem::Plain(count, cv) => {
                *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                cv.notify_one();
            }
            Sem::Measured(s) => s.release(),
        }
    }
}

/// A thread started by [`spawn`].
pub(crate) enum Handle<T> {
    Plain(std::thread::JoinHandle<T>),
    Measured(parallax::JoinHandle<T>),
}

/// Starts `f` on a new thread, recording its creation at `Full`.
pub(crate) fn spawn<T: Send + 'static>(
    level: Level,
    f: impl FnOnce() -> T + Send + 'static,
) -> Handle<T> {
    match level {
        Level::Raw => Handle::Plain(std::thread::spawn(f)),
        Level::Full => Handle::Measured(parallax::spawn(f)),
    }
}

impl<T> Handle<T> {
    /// Waits for the thread (recording the join at `Full`); a panic in
    /// the thread goes on in the caller.
    pub(crate) fn join(self) -> T {
        let r = match self {
            Handle::Plain(h) => h.join(),
            Handle::Measured(h) => h.join(),
        };
        r.unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}
