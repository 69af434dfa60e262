//! Per-thread measurement state and the probes' hot path.
//!
//! Each thread owns a [`ThreadState`]: a trace buffer ([`Buffer`], mapped
//! from the thread's spill file), a call-path profile and the file its
//! events go to. The hot path touches only its own state: no lock, no
//! atomic read-modify-write, no allocation, no system call.
//!
//! A state has two parts. [`Own`] is the owner's alone, reached only
//! through [`Local`], which the thread-local pointer hands to the owning
//! thread. [`Shared`] is what other threads may touch: a flusher at process
//! exit or in a signal handler writes out, under the state's lock, the
//! records the owner published (the write position is published with a
//! release store into the buffer's header, which also lets a reader find
//! them in the spill file of a process that was killed), reads the profile
//! through its published view, and closes the state; it never writes where
//! the owner writes. The owner sees the close at its next probe.
//!
//! States are never freed: when a thread ends its state goes back to a pool
//! for the next thread, so a flusher that still holds a pointer to it reads
//! valid memory.

mod local;
mod state;
mod tally;

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering::*};

use parallax_model::evcodec::MAX_RECORD;
use parallax_model::event::EventKind;
use parallax_model::file::{self, FileKind};

use crate::clock;
use crate::process;
use crate::states;

pub(crate) use local::Local;
pub(crate) use state::{NewState, ThreadState};

/// Memory a new state takes besides its buffer, at most: the state, its
/// signal stack, a first share of its profile.
pub(crate) const STATE_BYTES: usize = ALTSTACK + (256 << 10);

/// Size of the signal stack given to measured threads.
const ALTSTACK: usize = 256 << 10;

const TRACE: u8 = 1;
const PROFILE: u8 = 2;
const TSC: u8 = 4;
const FENCED: u8 = 8;

/// With a fenced clock, a probe starts after the code before it has
/// finished and ends before the code after it starts: none of its work
/// hides in the stalls of a latency-bound loop around it, so it costs
/// there what calibration measures (a fence around the clock read alone
/// left the rest of the probe to overlap the program).
#[inline(always)]
fn fence(mode: u8) {
    if mode & FENCED != 0 {
        clock::order();
    }
}

/// The `TSC` and `FENCED` bits of the clock in use.
fn clock_bits() -> u8 {
    let tsc = clock::source() == parallax_model::defs::ClockSource::Tsc;
    (if tsc { TSC } else { 0 }) | if clock::fenced() { FENCED } else { 0 }
}

/// Room kept free behind `limit`: the record that crossed it and a
/// flush-begin record.
const RESERVE: usize = 3 * MAX_RECORD;

// === the thread-local pointer ===

/// Marks a thread whose state was already released (its thread-local
/// destructors are running).
const GONE: *mut ThreadState = ptr::without_provenance_mut(1);
/// Marks a thread that got no state (memory was short): it stays
/// unmeasured rather than trying again at every probe.
const REFUSED: *mut ThreadState = ptr::without_provenance_mut(2);

thread_local! {
    static STATE: Cell<*mut ThreadState> = const { Cell::new(ptr::null_mut()) };
    static EXIT: ExitGuard = const { ExitGuard };
}

struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let p = STATE.with(|s| s.replace(GONE));
        if (p as usize) <= (REFUSED as usize) {
            return;
        }
        crate::failsafe::contained(|| {
            // Safety: `p` is this thread's own state, and no probe of the
            // thread runs any more.
            let st = unsafe { &*p };
            unsafe { st.local_unchecked() }.close();
            states::thread_ended(st);
            st.shared.in_use.store(false, Release);
        });
    }
}

/// Runs `f` on this thread's state, creating it on first use; does nothing
/// for a thread whose state is gone or if measurement cannot start.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&mut Local<'_>) -> R) -> Option<R> {
    let p = STATE.with(|s| s.get());
    let p = if (p as usize) <= (REFUSED as usize) {
        attach(p)?
    } else {
        p
    };
    // Safety: the state belongs to this thread until the thread ends.
    Some(f(&mut unsafe { (*p).local_unchecked() }))
}

/// The calling thread's state, if it has one.
pub(crate) fn current() -> *mut ThreadState {
    let p = STATE.try_with(|s| s.get()).unwrap_or(GONE);
    if (p as usize) <= (REFUSED as usize) {
        ptr::null_mut()
    } else {
        p
    }
}

/// Makes `p` this thread's state and returns the previous one (calibration
/// points the probes at a scratch state for a while).
pub(crate) fn swap_state(p: *mut ThreadState) -> *mut ThreadState {
    STATE.with(|s| s.replace(p))
}

#[cold]
#[inline(never)]
fn attach(p: *mut ThreadState) -> Option<*mut ThreadState> {
    if !p.is_null() || !process::active() {
        return None;
    }
    // The exit hook first: a thread whose destructors already ran (a
    // probe in a late destructor) is not measured.
    EXIT.try_with(|_| ()).ok()?;
    let st = match crate::failsafe::contained(states::new_thread_state)? {
        Ok(st) => st,
        Err(states::NoState::NotRunning) => return None,
        Err(states::NoState::Memory) => {
            STATE.with(|s| s.set(REFUSED));
            return None;
        }
    };
    // Safety: the state was just claimed for this thread.
    unsafe { (*st).local_unchecked() }.install_altstack();
    STATE.with(|s| s.set(st));
    Some(st)
}

/// Records `kind`, a thread's first event, at the time the thread asked
/// for it; if the thread had no state yet, the runtime's setting it up
/// (a buffer, an event file, a signal stack) follows as a flush interval,
/// which analyses remove like any other of the runtime's own work.
pub(crate) fn first_event(kind: &EventKind) -> bool {
    let t0 = clock::now();
    let fresh = STATE.with(|s| s.get()).is_null();
    with(|st| {
        if fresh && st.traces() && st.pending() == 0 && t0 <= st.own.last {
            st.rewind(t0);
            st.event_at(t0, kind);
            st.event_at(t0, &EventKind::FlushBegin);
            st.event(&EventKind::FlushEnd);
        } else {
            st.event(kind);
        }
    })
    .is_some()
}

/// Gives a state from the pool (or a new one) to the calling thread.
pub(crate) fn claim(
    pool: &[AtomicPtr<ThreadState>],
    count: &AtomicU32,
) -> Option<*mut ThreadState> {
    let n = (count.load(Acquire) as usize).min(pool.len());
    for slot in &pool[..n] {
        let p = slot.load(Acquire);
        if p.is_null() {
            continue;
        }
        // Safety: pooled states are never freed.
        let st = unsafe { &*p };
        if st
            .shared
            .in_use
            .compare_exchange(false, true, AcqRel, Relaxed)
            .is_ok()
        {
            return Some(p);
        }
    }
    None
}

/// Writes the header of a new event file.
pub(crate) fn event_file_header(rank: u32, thread: u32) -> [u8; file::HEADER_LEN] {
    file::header(FileKind::Events, rank, thread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;
    use std::sync::atomic::AtomicBool;

    fn scratch(buffer: usize) -> NewState {
        let mut st = ThreadState::try_new(16, 16).unwrap();
        if buffer > 0 {
            let mut local = st.local();
            let mut g = local.st.lock();
            local.install(&mut g, Buffer::anonymous(buffer).unwrap());
        }
        st
    }

    #[test]
    fn scratch_state_never_overflows() {
        let mut st = scratch(4096);
        let mut st = st.local();
        let rounds = if cfg!(miri) { 2_000 } else { 100_000u32 };
        for i in 0..rounds {
            st.enter(i % 7);
            st.event(&EventKind::Mark { mark: 1, value: -1 });
            st.leave();
        }
        assert!(st.pending() <= st.own.len);
    }

    #[test]
    fn a_state_without_a_buffer_records_into_its_sink() {
        let mut st = scratch(0);
        let mut st = st.local();
        let rounds = if cfg!(miri) { 200 } else { 10_000u32 };
        for i in 0..rounds {
            st.enter(i % 7);
            st.event(&EventKind::Send {
                peer: u32::MAX,
                tag: u32::MAX,
                comm: u64::MAX,
                bytes: u64::MAX,
            });
            st.leave();
            assert!(st.pending() <= st.own.len);
        }
    }

    /// The owner records while another thread writes out and closes its
    /// state: under Miri, any access that is not synchronized fails the
    /// test. (With no rank directory, the write fails and its records are
    /// counted as lost, which reads every one of them.)
    #[test]
    fn another_thread_closes_a_state_while_its_owner_records() {
        let rounds: u32 = if cfg!(miri) { 30 } else { 100_000 };
        let mut st = scratch(1 << 14);
        {
            let mut local = st.local();
            local.set_modes(true, true);
            local.st.shared.events.store(true, Relaxed);
        }
        let shared: &ThreadState = &st;
        let started = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                // Safety: this thread is the state's only owner.
                let mut local = unsafe { shared.local_unchecked() };
                for i in 0..rounds {
                    local.enter(i % 5);
                    local.event(&EventKind::Mark { mark: 1, value: 0 });
                    local.leave();
                    started.store(true, Release);
                }
            });
            while !started.load(Acquire) {
                std::hint::spin_loop();
            }
            shared.close_from_outside(true, false);
        });
        assert!(st.shared.closed.load(Acquire));
        let (lost, errno, events, bytes) = st.take_losses();
        assert!(errno != 0 && events > 0 && bytes > 0 && lost >= bytes);
    }
}
