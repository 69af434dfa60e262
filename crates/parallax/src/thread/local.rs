//! The owning thread's side of its state: the probes' hot path, the cold
//! path that flushes a full buffer, and closing and resetting the state.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering::*};

use parallax_model::evcodec;
use parallax_model::event::{EventKind, RegionId};
use parallax_model::file;

use super::state::{Guard, Own, ThreadState};
use super::{clock_bits, fence, ALTSTACK, FENCED, PROFILE, RESERVE, TRACE, TSC};
use crate::buffer::Buffer;
use crate::clock;
use crate::files;
use crate::losses;
use crate::process;
use crate::states;

/// How often a thread times its core's speed, and how many timings make
/// one written window. The shared cores of virtual machines change speed
/// within milliseconds; one timing costs about 0.2 us.
const METER_EVERY_NS: u64 = 250_000;
const METER_WINDOW: u64 = 32;
/// Longer than any undisturbed timing (256 checks of a flag).
const METER_CEILING_NS: u64 = 10_000;

/// [`METER_EVERY_NS`] in the clock's ticks (the process's clock rate, once
/// known; nanoseconds before).
fn meter_every_ticks() -> u64 {
    let per_ns = process::ticks_per_ns();
    if per_ns > 0.0 {
        (METER_EVERY_NS as f64 * per_ns) as u64
    } else {
        METER_EVERY_NS
    }
}

/// The owning thread's handle on its state: the owner's part, and the
/// state for what it shares.
pub(crate) struct Local<'a> {
    pub(super) st: &'a ThreadState,
    pub(super) own: &'a mut Own,
}

impl Local<'_> {
    /// Makes `buf` the state's buffer, empty (the previous one is
    /// released), with the lock held.
    pub(crate) fn install(&mut self, g: &mut Guard<'_>, buf: Buffer) {
        let locked = g.locked();
        locked.buf = buf;
        self.own.hdr = locked.buf.header();
        self.own.start = locked.buf.start();
        self.own.len = locked.buf.len();
        self.rewind(self.own.last);
        self.st.limit.store(self.normal_limit(), Relaxed);
    }

    /// Gives the calling thread this state's signal stack (made on first
    /// use; untouched pages cost nothing; none if memory is short).
    pub(crate) fn install_altstack(&mut self) {
        if self.own.altstack.is_null() {
            self.own.altstack = crate::buffer::map_anonymous(ALTSTACK).unwrap_or(ptr::null_mut());
        }
        if self.own.altstack.is_null() {
            return;
        }
        let ss = libc::stack_t {
            ss_sp: self.own.altstack as *mut libc::c_void,
            ss_flags: 0,
            ss_size: ALTSTACK,
        };
        // Safety: the stack lives as long as the state, which is never freed.
        unsafe { libc::sigaltstack(&ss, ptr::null_mut()) };
    }

    pub(crate) fn set_modes(&mut self, trace: bool, profile: bool) {
        let bits = if trace { TRACE } else { 0 } | if profile { PROFILE } else { 0 };
        self.own.mode = bits | clock_bits();
        self.st.shared.mode.store(bits, Relaxed);
    }

    /// This state never times its core's speed (calibration's scratch
    /// states: their figures would be written as some location's).
    pub(crate) fn never_meter(&mut self) {
        self.own.meter_at = u64::MAX;
    }

    /// The location number of this thread.
    pub(crate) fn thread(&self) -> u32 {
        self.st.thread()
    }

    pub(super) fn traces(&self) -> bool {
        self.own.mode & TRACE != 0
    }

    fn profiles(&self) -> bool {
        self.own.mode & PROFILE != 0
    }

    #[inline(always)]
    fn pos(&self) -> &AtomicPtr<u8> {
        // Safety: `hdr` points to the header of the state's buffer, which
        // lives as long as it is the state's (only the owner replaces it).
        unsafe { &(*self.own.hdr).pos }
    }

    fn normal_limit(&self) -> *mut u8 {
        // Safety: every buffer is longer than RESERVE.
        unsafe { self.own.start.add(self.own.len - RESERVE) }
    }

    /// Empties the buffer; the next block starts at `base`.
    pub(super) fn rewind(&mut self, base: u64) {
        // Safety: as in `pos`.
        unsafe { (*self.own.hdr).base.store(base, Relaxed) };
        self.pos().store(self.own.start, Release);
        self.own.last = base;
    }

    pub(super) fn pending(&self) -> usize {
        self.pos().load(Acquire) as usize - self.own.start as usize
    }

    // === hot path ===

    #[inline(always)]
    pub(crate) fn enter(&mut self, region: RegionId) {
        fence(self.own.mode);
        // After the cold path, which may have reopened the state with new
        // modes.
        let p = self.room();
        let m = self.own.mode;
        let t = clock::read(m & TSC != 0, m & FENCED != 0).max(self.own.last);
        if t >= self.own.meter_at {
            self.meter(t);
        }
        if m & TRACE != 0 {
            // Safety: `room` left at least RESERVE bytes after `p`.
            let p = unsafe { evcodec::put_enter(p, t - self.own.last, region) };
            self.pos().store(p, Release);
            self.own.last = t;
        }
        if m & PROFILE != 0 {
            self.own.profile.enter(region, t);
        }
        fence(m);
    }

    #[inline(always)]
    pub(crate) fn leave(&mut self) {
        fence(self.own.mode);
        // After the cold path, which may have reopened the state with new
        // modes.
        let p = self.room();
        let m = self.own.mode;
        let t = clock::read(m & TSC != 0, m & FENCED != 0).max(self.own.last);
        if t >= self.own.meter_at {
            self.meter(t);
        }
        if m & TRACE != 0 {
            // Safety: as in `enter`.
            let p = unsafe { evcodec::put_leave(p, t - self.own.last) };
            self.pos().store(p, Release);
            self.own.last = t;
        }
        if m & PROFILE != 0 {
            self.own.profile.leave(t);
        }
        fence(m);
    }

    /// Times the core's speed with calibration's disabled-probe loop, at
    /// most every [`METER_EVERY_NS`]; every [`METER_WINDOW`] timings are
    /// written as a `Def::SpeedInRun` (reports and compensation show the
    /// range of probe costs they allow).
    #[cold]
    #[inline(never)]
    fn meter(&mut self, t: u64) {
        // Once to bring the loop into the caches, once timed, as
        // calibration times it.
        crate::calibrate::disabled_batch_ticks();
        let took = crate::calibrate::disabled_batch_ticks();
        let every = meter_every_ticks();
        // A timing the operating system interrupted (longer than any
        // undisturbed run of the loop) says nothing of the core's speed.
        if took <= every / (METER_EVERY_NS / METER_CEILING_NS) {
            self.own.meter_samples += 1;
            self.own.meter_ticks += took;
        }
        self.own.meter_at = t.saturating_add(every);
        if self.own.meter_samples >= METER_WINDOW {
            process::try_write_speed(
                self.thread(),
                t,
                std::mem::take(&mut self.own.meter_samples),
                std::mem::take(&mut self.own.meter_ticks),
            );
        }
    }

    /// Records an event other than enter/leave (those keep the profile too).
    #[inline(always)]
    pub(crate) fn event(&mut self, kind: &EventKind) {
        if self.own.mode & TRACE != 0 {
            fence(self.own.mode);
            let p = self.room();
            let m = self.own.mode;
            let t = clock::read(m & TSC != 0, m & FENCED != 0).max(self.own.last);
            // Safety: as in `enter`.
            let p = unsafe { evcodec::put_event(p, t - self.own.last, kind) };
            self.pos().store(p, Release);
            self.own.last = t;
            self.st.shared.tally.count(kind);
            fence(m);
        }
    }

    /// `calls` calls whose probes recorded nothing happened since the last
    /// record: an event at that record's time (no clock read), so that
    /// their cost lies in the stretch after it; in the profile, a count
    /// under the current path.
    pub(crate) fn skipped(&mut self, calls: u64) {
        if self.traces() {
            self.event_at(self.own.last, &EventKind::Skipped { calls });
        }
        if self.profiles() {
            self.own.profile.skipped(calls);
        }
    }

    /// Records `kind` at the time of the last record.
    pub(crate) fn event_prior(&mut self, kind: &EventKind) {
        if self.traces() {
            self.event_at(self.own.last, kind);
        }
    }

    /// Records `kind` at tick `t` (no earlier than the last record).
    pub(super) fn event_at(&mut self, t: u64, kind: &EventKind) {
        let p = self.room();
        let t = t.max(self.own.last);
        // Safety: as in `enter`.
        let p = unsafe { evcodec::put_event(p, t - self.own.last, kind) };
        self.pos().store(p, Release);
        self.own.last = t;
        self.st.shared.tally.count(kind);
    }

    /// Records `kind`, a mark of the runtime's own work, at tick `t`
    /// (no earlier than the last record), where there is room for it.
    fn mark(&mut self, t: u64, kind: &EventKind) {
        let p = self.pos().load(Relaxed);
        // Safety: RESERVE leaves room for this record, or the buffer was
        // just emptied.
        let p = unsafe { evcodec::put_event(p, t - self.own.last, kind) };
        self.pos().store(p, Release);
        self.own.last = t;
    }

    /// The write position, after taking the cold path if the buffer has no
    /// room for a record or the state was closed.
    #[inline(always)]
    fn room(&mut self) -> *mut u8 {
        let p = self.pos().load(Relaxed);
        if p <= self.st.limit.load(Relaxed) {
            return p;
        }
        self.cold();
        self.pos().load(Relaxed)
    }

    // === cold path ===

    /// The buffer is full, or the state was closed.
    #[cold]
    #[inline(never)]
    fn cold(&mut self) {
        // Pairs with the release store of a null limit when the state is
        // closed: the close is then seen below.
        std::sync::atomic::fence(Acquire);
        let sh = &self.st.shared;
        if sh.closed.load(Acquire) {
            // Measurement finished (or restarted): drop what came after.
            sh.lost_bytes.fetch_add(self.pending() as u64, Relaxed);
            self.rewind(self.own.last);
            self.st.limit.store(self.normal_limit(), Relaxed);
            if process::epoch() != self.own.epoch && process::active() {
                reopen(self);
            }
            return;
        }
        if !sh.events.load(Relaxed) {
            // A scratch state (calibration) or one without a buffer:
            // nothing is kept.
            self.rewind(self.own.last);
            return;
        }
        let t0 = clock::now().max(self.own.last);
        self.mark(t0, &EventKind::FlushBegin);
        let mut g = self.st.lock();
        if !sh.closed.load(Relaxed) {
            self.st.write_block(g.locked());
        }
        drop(g);
        let errno = sh.lost_errno.load(Relaxed);
        if errno != 0 {
            losses::tell_write_loss(errno);
        }
        self.rewind(t0);
        let t1 = clock::now().max(t0);
        self.mark(t1, &EventKind::FlushEnd);
        process::note_flush();
    }

    /// Writes everything this state holds (last block, profile) and closes
    /// it; the last write, the runtime's own work, is bracketed as a flush
    /// (a second, small block holds its end) if there is room.
    pub(crate) fn close(&mut self) {
        let st = self.st;
        let mut g = st.lock();
        if st.shared.closed.load(Relaxed) {
            return;
        }
        if self.traces() {
            let p = self.pos().load(Relaxed);
            let mark = st.shared.events.load(Relaxed) && p <= st.limit.load(Relaxed);
            let t0 = clock::now().max(self.own.last);
            if mark {
                self.mark(t0, &EventKind::FlushBegin);
            }
            st.write_block(g.locked());
            if mark {
                self.rewind(t0);
                let t1 = clock::now().max(t0);
                self.mark(t1, &EventKind::FlushEnd);
                st.write_block(g.locked());
            }
        }
        st.write_summaries(Some(clock::now()), false);
        st.mark_closed(g.locked());
    }

    /// Prepares the state for a new thread or a new measurement: thread
    /// number, event file (its name, if the thread is traced), modes, empty
    /// buffer and profile.
    pub(crate) fn reset_for(
        &mut self,
        thread: u32,
        epoch: u32,
        events: Option<[u8; files::NAME]>,
        trace: bool,
        prof: bool,
    ) {
        let sh = &self.st.shared;
        sh.thread.store(thread, Relaxed);
        self.own.epoch = epoch;
        sh.events.store(events.is_some(), Relaxed);
        self.st.lock().locked().events_name = events.unwrap_or([0; files::NAME]);
        self.set_modes(trace, prof);
        self.own.profile.reset();
        self.st.take_losses();
        sh.tally.reset(if events.is_some() {
            file::HEADER_LEN as u64
        } else {
            0
        });
        let now = clock::now();
        self.rewind(now);
        sh.closed.store(false, Release);
        self.st.limit.store(self.normal_limit(), Relaxed);
    }
}

impl<'a> Local<'a> {
    /// The state, as other threads see it.
    pub(crate) fn state(&self) -> &'a ThreadState {
        self.st
    }
}

fn reopen(st: &mut Local<'_>) {
    crate::failsafe::contained(|| states::reopen_thread_state(st));
}
