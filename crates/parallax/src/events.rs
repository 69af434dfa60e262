//! Explicit events: messages, collectives, locks, semaphores, advance and
//! await, threads, one-sided operations, metrics and marks.
//!
//! Each function records one event on the calling thread at the current
//! time. Record them inside a region of the matching kind (a `Send` inside
//! a region of kind [`RegionKind::Send`], ...) so that analyses see how long
//! the operation took; the [`crate::sync`] wrappers do both for you.

use std::sync::atomic::Ordering::Relaxed;

use parallax_model::event::EventKind;

pub use parallax_model::event::{CollectiveOp, NO_ROOT};
pub use parallax_model::region::RegionKind;

use crate::process::{self, FLAGS, UNINIT};
use crate::thread;

/// Records `kind` on the calling thread. Returns whether it was recorded.
#[inline(always)]
pub fn record(kind: EventKind) -> bool {
    record_with(kind, When::Now)
}

/// Records `kind` on the calling thread at the time of the thread's
/// previous record: for an event known only once the call that made it
/// returned (a non-blocking send's request), which the call's own enter
/// dated. Returns whether it was recorded.
pub fn record_prior(kind: EventKind) -> bool {
    record_with(kind, When::Prior)
}

/// Records a thread's first event (its begin), with the runtime's setting
/// up of the thread bracketed after it (see `thread::first_event`).
fn record_first(kind: EventKind) -> bool {
    record_with(kind, When::First)
}

/// The time an event is recorded at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    /// Now.
    Now,
    /// Now, as the thread's first event.
    First,
    /// At the thread's previous record.
    Prior,
}

#[inline(always)]
fn record_with(kind: EventKind, when: When) -> bool {
    let f = FLAGS.load(Relaxed);
    if f == 0 {
        return false;
    }
    if f & UNINIT != 0 {
        process::init_from_env();
    }
    match when {
        When::Now => thread::with(|st| st.event(&kind)).is_some(),
        When::First => thread::first_event(&kind),
        When::Prior => thread::with(|st| st.event_prior(&kind)).is_some(),
    }
}

/// This thread is the one created with `token`: its first event, with the
/// runtime's setting up of the thread recorded after it as its own work.
pub fn thread_begin(token: u64) {
    record_first(EventKind::ThreadBegin { token });
}

/// A blocking send of `bytes` to `peer` with `tag` on communicator `comm`.
pub fn send(peer: u32, tag: u32, comm: u64, bytes: u64) {
    record(EventKind::Send {
        peer,
        tag,
        comm,
        bytes,
    });
}

/// A completed receive of `bytes` from `peer`.
pub fn recv(peer: u32, tag: u32, comm: u64, bytes: u64) {
    record(EventKind::Recv {
        peer,
        tag,
        comm,
        bytes,
    });
}

/// The end of a collective (call `collective_begin` at its start).
pub fn collective_end(op: CollectiveOp, comm: u64, root: u32, sent: u64, received: u64) {
    record(EventKind::CollectiveEnd {
        op,
        comm,
        root,
        sent,
        received,
    });
}

/// The start of a collective.
pub fn collective_begin() {
    record(EventKind::CollectiveBegin);
}

/// A lock was requested.
pub fn lock_request(lock: u64) {
    record(EventKind::LockRequest { lock });
}

/// A lock is now held.
pub fn lock_acquired(lock: u64) {
    record(EventKind::LockAcquired { lock });
}

/// A lock was released.
pub fn lock_release(lock: u64) {
    record(EventKind::LockRelease { lock });
}

/// A semaphore or condition was posted.
pub fn sem_post(sem: u64) {
    record(EventKind::SemPost { sem });
}

/// A wait on a semaphore or condition completed.
pub fn sem_acquired(sem: u64) {
    record(EventKind::SemAcquired { sem });
}

/// Synchronization variable `var` advanced to `index`.
pub fn advance(var: u64, index: u64) {
    record(EventKind::Advance { var, index });
}

/// An await of `index` on `var` was satisfied.
pub fn await_done(var: u64, index: u64) {
    record(EventKind::AwaitDone { var, index });
}

/// Self-scheduled loop `loop_id` handed this thread iteration `index`
/// ([`NO_ITERATION`](parallax_model::event::NO_ITERATION): none was left).
pub fn iteration(loop_id: u64, index: u64) {
    record(EventKind::Iteration { loop_id, index });
}

/// A one-sided put of `bytes` to address `addr` of rank `target` (record
/// it inside a region of kind [`RegionKind::Put`]).
pub fn put(target: u32, bytes: u64, addr: u64) {
    record(EventKind::Put {
        target,
        bytes,
        addr,
    });
}

/// A one-sided get of `bytes` from address `addr` of rank `target` (inside
/// a region of kind [`RegionKind::Get`]).
pub fn get(target: u32, bytes: u64, addr: u64) {
    record(EventKind::Get {
        target,
        bytes,
        addr,
    });
}

/// `calls` calls on this thread whose probes ran but recorded nothing
/// (throttled or filtered functions, frames beyond the depth limit,
/// recording switched off) since its last event: compensation removes
/// their probes' cost. Returns whether they were recorded.
pub fn skipped(calls: u64) -> bool {
    let f = FLAGS.load(Relaxed);
    if f == 0 || f & UNINIT != 0 || calls == 0 {
        return false;
    }
    thread::with(|st| st.skipped(calls)).is_some()
}

/// The calling thread's number in its process (its location, made if it
/// has none yet), if it is measured.
pub fn thread_number() -> Option<u32> {
    let f = FLAGS.load(Relaxed);
    if f == 0 || f & UNINIT != 0 {
        return None;
    }
    thread::with(|st| st.thread())
}

/// Location `thread` called each `(region, calls)` of `calls` (compiler-
/// instrumented functions) that many times in all, recorded or not (see
/// [`parallax_model::defs::Def::Calls`]): said once, when the thread ends,
/// in one write.
pub fn calls(thread: u32, calls: &[(u32, u64)]) {
    if process::active() && !calls.is_empty() {
        let defs: Vec<_> = calls
            .iter()
            .map(|&(region, calls)| parallax_model::defs::Def::Calls {
                thread,
                region,
                calls,
            })
            .collect();
        process::write_defs(&defs);
    }
}

/// What a call whose compiler hooks recorded nothing cost location
/// `thread` in place, timed in the run (see
/// [`parallax_model::defs::Def::HookSkippedInRun`]): written now, once.
/// Waits only a moment for the definitions file (a hook in a signal
/// handler may have interrupted its writer on this thread); false if the
/// figure could not be written.
pub fn skipped_cost(thread: u32, tick: u64, calls: u64, decoys: u64, ps: u64) -> bool {
    process::active()
        && process::try_write_defs(&[parallax_model::defs::Def::HookSkippedInRun {
            thread,
            tick,
            calls,
            decoys,
            ps,
        }])
}

/// A user mark with a value: `mark` is a region of kind
/// [`RegionKind::Mark`] (see the `mark!` macro).
pub fn mark(mark: u32, value: i64) {
    record(EventKind::Mark { mark, value });
}

/// A metric sample (see [`register_metric`]).
pub fn metric(metric: u32, value: i64) {
    record(EventKind::Metric { metric, value });
}

/// Defines a metric and returns its id; 0 if not measuring.
pub fn register_metric(name: &str, unit: &str) -> u32 {
    use std::sync::atomic::AtomicU32;
    static NEXT: AtomicU32 = AtomicU32::new(1);
    if FLAGS.load(Relaxed) & UNINIT != 0 {
        process::init_from_env();
    }
    if !process::active() {
        return 0;
    }
    let id = NEXT.fetch_add(1, Relaxed);
    process::write_defs(&[parallax_model::defs::Def::Metric {
        id,
        name: name.into(),
        unit: unit.into(),
    }]);
    id
}

/// Defines a group (communicator or team) with its members.
pub fn define_group(id: u64, members: Vec<u32>) {
    if process::active() {
        process::write_defs(&[parallax_model::defs::Def::Group { id, members }]);
    }
}
