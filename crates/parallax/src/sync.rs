//! Synchronization primitives that record what they do: each operation is a
//! region of the matching generic operation type with the events that let
//! analyses pair acquire with release and wait with post.

use std::collections::BTreeMap;
use std::panic::Location;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{
    Condvar as StdCondvar, LockResult, MutexGuard, OnceLock, PoisonError, WaitTimeoutResult,
};
use std::time::Duration;

use parallax_model::event::{CollectiveOp, RegionId, NO_ITERATION, NO_ROOT};
use parallax_model::region::RegionKind;

use crate::clock;
use crate::events;
use crate::process::FLAGS;
use crate::region;

/// An operation of these primitives. Each call site of one gets a region
/// of its own, named after the operation and placed at the caller's file
/// and line (`#[track_caller]`), so that a report or a finding points at
/// the code that locked or waited, not at this file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Lock,
    Unlock,
    Barrier,
    SemWait,
    SemPost,
    CondWait,
    CondTimed,
    NotifyOne,
    NotifyAll,
    Advance,
    Await,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Lock => "Mutex::lock",
            Op::Unlock => "Mutex::unlock",
            Op::Barrier => "Barrier::wait",
            Op::SemWait => "Semaphore::acquire",
            Op::SemPost => "Semaphore::release",
            Op::CondWait => "Condvar::wait",
            Op::CondTimed => "Condvar::wait_timeout",
            Op::NotifyOne => "Condvar::notify_one",
            Op::NotifyAll => "Condvar::notify_all",
            Op::Advance => "SyncVar::advance",
            Op::Await => "SyncVar::await",
        }
    }

    fn kind(self) -> RegionKind {
        match self {
            Op::Lock => RegionKind::Lock,
            Op::Unlock => RegionKind::Unlock,
            Op::Barrier => RegionKind::Barrier,
            Op::SemWait | Op::CondWait | Op::CondTimed => RegionKind::SemWait,
            Op::SemPost | Op::NotifyOne | Op::NotifyAll => RegionKind::SemPost,
            Op::Advance => RegionKind::Advance,
            Op::Await => RegionKind::Await,
        }
    }
}

/// Slots of the table of call sites already registered: more than the
/// call sites of these primitives in most programs; the rest go through
/// [`SITES`].
const SLOTS: usize = 512;
/// Slots tried after a key's own.
const PROBES: usize = 8;

/// Call site (its `Location`'s address and the operation) → region id,
/// read without a lock. A slot's id is written before its key, both once.
static KEYS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static IDS: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];

/// Every call site registered, by operation, file, line and column: one
/// region per site even where the same site has several `Location`s
/// (generic code compiled in several units).
static SITES: std::sync::Mutex<BTreeMap<Site, RegionId>> = std::sync::Mutex::new(BTreeMap::new());

/// A call site: operation, file, line, column.
type Site = (Op, &'static str, u32, u32);

/// The region of `op` called at `at`; 0 when not measuring.
#[inline]
fn site(op: Op, at: &'static Location<'static>) -> RegionId {
    if FLAGS.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    let key = (at as *const Location<'static> as usize) << 4 | op as usize;
    let home = (key >> 4).wrapping_mul(0x9E37_79B9) % SLOTS;
    for i in 0..PROBES {
        let s = (home + i) % SLOTS;
        match KEYS[s].load(Ordering::Acquire) {
            k if k == key => return IDS[s].load(Ordering::Relaxed),
            0 => break,
            _ => {}
        }
    }
    register_site(op, at, key, home)
}

/// Registers the region of `op` at `at` (once per site) and remembers it
/// under `key`.
#[cold]
#[inline(never)]
fn register_site(op: Op, at: &'static Location<'static>, key: usize, home: usize) -> RegionId {
    let mut sites = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let id = match sites.get(&(op, at.file(), at.line(), at.column())) {
        Some(&id) => id,
        None => {
            let id = region::register_region(op.name(), op.kind(), at.file(), at.line());
            if id == 0 {
                // Not measuring (yet): nothing to remember.
                return 0;
            }
            sites.insert((op, at.file(), at.line(), at.column()), id);
            id
        }
    };
    // Remembered while holding the lock: one writer at a time.
    for i in 0..PROBES {
        let s = (home + i) % SLOTS;
        let k = KEYS[s].load(Ordering::Relaxed);
        if k == key {
            break;
        }
        if k == 0 {
            IDS[s].store(id, Ordering::Relaxed);
            KEYS[s].store(key, Ordering::Release);
            break;
        }
    }
    id
}

/// A region of one call site, left on drop.
struct Entered(bool);

impl Entered {
    #[inline]
    fn new(id: RegionId) -> Entered {
        Entered(id != 0 && region::enter(id))
    }
}

impl Drop for Entered {
    #[inline]
    fn drop(&mut self) {
        if self.0 {
            region::leave();
        }
    }
}

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
    /// Where the lock was taken: its release is recorded there too.
    at: &'static Location<'static>,
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
    #[track_caller]
    pub fn lock(&self) -> LockResult<Guard<'_, T>> {
        let id = id_of(self);
        let at = Location::caller();
        let region = Entered::new(site(Op::Lock, at));
        events::lock_request(id);
        let r = self.inner.lock();
        clock::order();
        events::lock_acquired(id);
        drop(region);
        map_lock(r, |g| Guard {
            inner: Some(g),
            id,
            at,
        })
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
            let _r = Entered::new(site(Op::Unlock, self.at));
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
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: Guard<'a, T>) -> LockResult<Guard<'a, T>> {
        let _r = Entered::new(site(Op::CondWait, Location::caller()));
        let (id, at, inner) = release(guard);
        let r = self.inner.wait(inner);
        self.relocked(id, true);
        map_lock(r, |g| Guard {
            inner: Some(g),
            id,
            at,
        })
    }

    /// As [`Condvar::wait`], for at most `dur`; a wait that times out
    /// took no notification (and is recorded without one).
    #[track_caller]
    pub fn wait_timeout<'a, T>(
        &self,
        guard: Guard<'a, T>,
        dur: Duration,
    ) -> LockResult<(Guard<'a, T>, WaitTimeoutResult)> {
        let _r = Entered::new(site(Op::CondTimed, Location::caller()));
        let (id, at, inner) = release(guard);
        let r = self.inner.wait_timeout(inner, dur);
        let timed_out = match &r {
            Ok((_, t)) => t.timed_out(),
            Err(p) => p.get_ref().1.timed_out(),
        };
        self.relocked(id, !timed_out);
        map_lock(r, |(g, t)| {
            let g = Guard {
                inner: Some(g),
                id,
                at,
            };
            (g, t)
        })
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
    #[track_caller]
    pub fn notify_one(&self) {
        let _r = Entered::new(site(Op::NotifyOne, Location::caller()));
        events::sem_post(id_of(self));
        clock::order();
        self.inner.notify_one();
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        let _r = Entered::new(site(Op::NotifyAll, Location::caller()));
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
/// release; returns the lock's id, where it was taken, and the lock.
fn release<'a, T>(mut guard: Guard<'a, T>) -> (u64, &'static Location<'static>, MutexGuard<'a, T>) {
    let inner = guard
        .inner
        .take()
        .expect("guard holds the lock until dropped");
    events::lock_release(guard.id);
    clock::order();
    (guard.id, guard.at, inner)
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
    #[track_caller]
    pub fn wait(&self) -> bool {
        let _r = Entered::new(site(Op::Barrier, Location::caller()));
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
    #[track_caller]
    pub fn acquire(&self) {
        let _r = Entered::new(site(Op::SemWait, Location::caller()));
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
    #[track_caller]
    pub fn release(&self) {
        let _r = Entered::new(site(Op::SemPost, Location::caller()));
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
    #[track_caller]
    pub fn advance(&self, index: u64) {
        let _r = Entered::new(site(Op::Advance, Location::caller()));
        events::advance(id_of(self), index);
        clock::order();
        self.value.fetch_max(index, Ordering::Release);
    }

    /// Waits until the variable reaches `index`.
    #[track_caller]
    pub fn await_index(&self, index: u64) {
        let _r = Entered::new(site(Op::Await, Location::caller()));
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
