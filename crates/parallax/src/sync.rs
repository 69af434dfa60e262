//! Synchronization primitives that record what they do: each operation is a
//! region of the matching generic operation type with the events that let
//! analyses pair acquire with release and wait with post.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{
    Condvar as StdCondvar, LockResult, MutexGuard, OnceLock, PoisonError, WaitTimeoutResult,
};
use std::time::Duration;

use parallax_model::event::{CollectiveOp, NO_ITERATION, NO_ROOT};
use parallax_model::region::RegionKind;

use crate::clock;
use crate::events;
use crate::region::Callsite;

static LOCK_SITE: Callsite = Callsite::new("Mutex::lock", RegionKind::Lock, file!(), line!());
static UNLOCK_SITE: Callsite = Callsite::new("Mutex::unlock", RegionKind::Unlock, file!(), line!());
static BARRIER_SITE: Callsite =
    Callsite::new("Barrier::wait", RegionKind::Barrier, file!(), line!());
static SEM_WAIT_SITE: Callsite =
    Callsite::new("Semaphore::acquire", RegionKind::SemWait, file!(), line!());
static SEM_POST_SITE: Callsite =
    Callsite::new("Semaphore::release", RegionKind::SemPost, file!(), line!());
static COND_WAIT_SITE: Callsite =
    Callsite::new("Condvar::wait", RegionKind::SemWait, file!(), line!());
static COND_TIMED_SITE: Callsite = Callsite::new(
    "Condvar::wait_timeout",
    RegionKind::SemWait,
    file!(),
    line!(),
);
static NOTIFY_ONE_SITE: Callsite =
    Callsite::new("Condvar::notify_one", RegionKind::SemPost, file!(), line!());
static NOTIFY_ALL_SITE: Callsite =
    Callsite::new("Condvar::notify_all", RegionKind::SemPost, file!(), line!());
static ADVANCE_SITE: Callsite =
    Callsite::new("SyncVar::advance", RegionKind::Advance, file!(), line!());
static AWAIT_SITE: Callsite = Callsite::new("SyncVar::await", RegionKind::Await, file!(), line!());

fn id_of<T: ?Sized>(x: &T) -> u64 {
    x as *const T as *const u8 as usize as u64
}

/// A mutex whose lock, hold and unlock are recorded (lock id: its address).
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    inner: std::sync::Mutex<T>,
}

/// Holds a [`Mutex`]; records the release on drop.
#[derive(Debug)]
#[must_use = "the lock is released when this guard is dropped"]
pub struct Guard<'a, T: ?Sized> {
    inner: Option<MutexGuard<'a, T>>,
    id: u64,
}

impl<T> Mutex<T> {
    /// A new mutex.
    pub const fn new(value: T) -> Mutex<T> {
        Mutex {
            inner: std::sync::Mutex::new(value),
        }
    }

    /// The value, consuming the mutex.
    pub fn into_inner(self) -> LockResult<T> {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Locks, recording the request, the acquisition and the time waited.
    pub fn lock(&self) -> LockResult<Guard<'_, T>> {
        let id = id_of(self);
        let region = LOCK_SITE.enter();
        events::lock_request(id);
        let r = self.inner.lock();
        clock::order();
        events::lock_acquired(id);
        drop(region);
        map_lock(r, |g| Guard { inner: Some(g), id })
    }
}

impl<T: ?Sized> std::ops::Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.inner
            .as_ref()
            .expect("guard holds the lock until dropped")
    }
}

impl<T: ?Sized> std::ops::DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.inner
            .as_mut()
            .expect("guard holds the lock until dropped")
    }
}

impl<T: ?Sized> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        // Empty once a condition wait took the lock over.
        if let Some(g) = self.inner.take() {
            let _r = UNLOCK_SITE.enter();
            events::lock_release(self.id);
            clock::order();
            drop(g);
        }
    }
}

/// A condition variable for [`Mutex`]: a wait releases the mutex, waits
/// for a notification (recorded as acquiring the condition, id: its
/// address) and takes the mutex again; a notification is a post on the
/// condition.
#[derive(Debug, Default)]
pub struct Condvar {
    inner: StdCondvar,
}

impl Condvar {
    /// A new condition variable.
    pub const fn new() -> Condvar {
        Condvar {
            inner: StdCondvar::new(),
        }
    }

    /// Releases `guard`'s lock, waits for a notification (or a spurious
    /// wake-up: check the condition in a loop) and locks again.
    pub fn wait<'a, T>(&self, guard: Guard<'a, T>) -> LockResult<Guard<'a, T>> {
        let _r = COND_WAIT_SITE.enter();
        let (id, inner) = release(guard);
        let r = self.inner.wait(inner);
        self.relocked(id, true);
        map_lock(r, |g| Guard { inner: Some(g), id })
    }

    /// As [`Condvar::wait`], for at most `dur`; a wait that times out
    /// took no notification (and is recorded without one).
    pub fn wait_timeout<'a, T>(
        &self,
        guard: Guard<'a, T>,
        dur: Duration,
    ) -> LockResult<(Guard<'a, T>, WaitTimeoutResult)> {
        let _r = COND_TIMED_SITE.enter();
        let (id, inner) = release(guard);
        let r = self.inner.wait_timeout(inner, dur);
        let timed_out = match &r {
            Ok((_, t)) => t.timed_out(),
            Err(p) => p.get_ref().1.timed_out(),
        };
        self.relocked(id, !timed_out);
        map_lock(r, |(g, t)| (Guard { inner: Some(g), id }, t))
    }

    /// Records the end of a wait: the notification taken, if one ended
    /// it, and mutex `id` locked again.
    fn relocked(&self, id: u64, notified: bool) {
        clock::order();
        if notified {
            events::sem_acquired(id_of(self));
        }
        events::lock_request(id);
        events::lock_acquired(id);
    }

    /// Wakes one waiting thread.
    pub fn notify_one(&self) {
        let _r = NOTIFY_ONE_SITE.enter();
        events::sem_post(id_of(self));
        clock::order();
        self.inner.notify_one();
    }

    /// Wakes every waiting thread.
    pub fn notify_all(&self) {
        let _r = NOTIFY_ALL_SITE.enter();
        events::sem_post(id_of(self));
        clock::order();
        self.inner.notify_all();
    }
}

/// `r` with `f` applied to what it holds, poisoned or not.
fn map_lock<A, B>(r: LockResult<A>, f: impl FnOnce(A) -> B) -> LockResult<B> {
    match r {
        Ok(a) => Ok(f(a)),
        Err(p) => Err(PoisonError::new(f(p.into_inner()))),
    }
}

/// Takes the lock out of `guard` for a condition wait, recording its
/// release.
fn release<'a, T>(mut guard: Guard<'a, T>) -> (u64, MutexGuard<'a, T>) {
    let inner = guard
        .inner
        .take()
        .expect("guard holds the lock until dropped");
    events::lock_release(guard.id);
    clock::order();
    (guard.id, inner)
}

/// A barrier whose waits are recorded as collectives of kind barrier (group
/// id: see [`barrier_id`]).
#[derive(Debug)]
pub struct Barrier {
    inner: std::sync::Barrier,
    n: usize,
    id: OnceLock<u64>,
}

/// Barriers made so far: a barrier's generation.
static BARRIERS: AtomicU64 = AtomicU64::new(0);

/// A new group id for a barrier at `address` (Rust's or a C program's):
/// the address with the barrier's generation, counted over the process,
/// in the 16 bits above any user-space address. Collectives pair by
/// counting along each thread on a group id, so two barriers that lived at
/// the same address one after the other (a barrier made per phase or per
/// call) must not share one.
pub fn barrier_id(address: u64) -> u64 {
    let generation = BARRIERS.fetch_add(1, Ordering::Relaxed) + 1;
    (address & ((1 << 48) - 1)) | (generation & 0xffff) << 48
}

impl Barrier {
    /// A barrier for `n` threads.
    pub fn new(n: usize) -> Barrier {
        Barrier {
            inner: std::sync::Barrier::new(n),
            n,
            id: OnceLock::new(),
        }
    }

    /// The group id, fixed at the first wait (the barrier may move before).
    fn id(&self) -> u64 {
        *self.id.get_or_init(|| barrier_id(id_of(self)))
    }

    /// Waits for all threads; true for one of them (the leader).
    pub fn wait(&self) -> bool {
        let _r = BARRIER_SITE.enter();
        events::collective_begin();
        clock::order();
        let leader = self.inner.wait().is_leader();
        clock::order();
        events::collective_end(CollectiveOp::Barrier, self.id(), NO_ROOT, 0, self.n as u64);
        leader
    }
}

/// A counting semaphore; acquire and release are recorded (id: its
/// address).
#[derive(Debug, Default)]
pub struct Semaphore {
    count: std::sync::Mutex<u64>,
    cv: StdCondvar,
}

impl Semaphore {
    /// A semaphore holding `permits`.
    pub fn new(permits: u64) -> Semaphore {
        Semaphore {
            count: std::sync::Mutex::new(permits),
            cv: StdCondvar::new(),
        }
    }

    /// Takes one permit, waiting for it.
    pub fn acquire(&self) {
        let _r = SEM_WAIT_SITE.enter();
        let mut c = self.count.lock().unwrap_or_else(|e| e.into_inner());
        while *c == 0 {
            c = self.cv.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        *c -= 1;
        drop(c);
        clock::order();
        events::sem_acquired(id_of(self));
    }

    /// Returns one permit.
    pub fn release(&self) {
        let _r = SEM_POST_SITE.enter();
        events::sem_post(id_of(self));
        clock::order();
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cv.notify_one();
    }
}

/// A synchronization variable for DOACROSS-style pipelines: producers
/// `advance` it to an index, consumers `await` an index.
#[derive(Debug, Default)]
pub struct SyncVar {
    value: AtomicU64,
}

impl SyncVar {
    /// A variable at index 0.
    pub const fn new() -> SyncVar {
        SyncVar {
            value: AtomicU64::new(0),
        }
    }

    /// Sets the variable to `index` (indices only grow).
    pub fn advance(&self, index: u64) {
        let _r = ADVANCE_SITE.enter();
        events::advance(id_of(self), index);
        clock::order();
        self.value.fetch_max(index, Ordering::Release);
    }

    /// Waits until the variable reaches `index`.
    pub fn await_index(&self, index: u64) {
        let _r = AWAIT_SITE.enter();
        let mut spins = 0u32;
        while self.value.load(Ordering::Acquire) < index {
            spins += 1;
            if spins < 1000 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        clock::order();
        events::await_done(id_of(self), index);
    }
}

/// Loops made so far: each [`SelfScheduled`] loop gets its own id, so that
/// a loop made where an earlier one lay in memory is not taken for it.
static LOOPS: AtomicU64 = AtomicU64::new(1);

/// A self-scheduled loop of `n` iterations: each thread takes the next
/// iteration from a shared counter when it is free (dynamic scheduling of
/// one iteration at a time). Every hand-out is recorded, so that
/// `parallax compensate --liberal` can hand the iterations out again in
/// the order the threads would have asked for them without probes.
#[derive(Debug)]
pub struct SelfScheduled {
    next: AtomicU64,
    n: u64,
    id: u64,
}

impl SelfScheduled {
    /// A loop of iterations `0..n`.
    pub fn new(n: u64) -> SelfScheduled {
        SelfScheduled {
            next: AtomicU64::new(0),
            n,
            id: LOOPS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The next iteration for the calling thread, `None` when all are
    /// taken (the thread leaves the loop).
    pub fn next(&self) -> Option<u64> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let taken = (i < self.n).then_some(i);
        events::iteration(self.id, taken.unwrap_or(NO_ITERATION));
        taken
    }
}
