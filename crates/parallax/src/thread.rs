//! Per-thread measurement state and the probes' hot path.
//!
//! Each thread owns a [`ThreadState`]: a trace buffer ([`Buffer`], mapped
//! from the thread's spill file), a call-path profile and the file its
//! events go to. The hot path touches only its own state: no lock, no
//! atomic read-modify-write, no allocation, no system call. The write
//! position is published with a plain (release) store into the buffer's
//! header, so that a flusher at process exit or in a signal handler can
//! write out what the thread recorded without stopping it, and so that a
//! reader finds it in the spill file of a process that was killed.
//!
//! States are never freed: when a thread ends its state goes back to a pool
//! for the next thread, so a flusher that still holds a pointer to it reads
//! valid memory.

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering::*};

use parallax_model::evcodec::{self, MAX_RECORD};
use parallax_model::event::{EventKind, RegionId};
use parallax_model::experiment::EVENT_BLOCK_PREFIX;
use parallax_model::file::{self, FileKind, BLOCK_HEADER_LEN};

use crate::buffer::{Buffer, Header, Sink};
use crate::clock;
use crate::files;
use crate::process;
use crate::profile::Profile;

/// Measurement state of one thread (one location). Laid out as declared,
/// the probes' fields first, in the first cache lines.
#[repr(C, align(64))]
pub(crate) struct ThreadState {
    // --- hot: the probes read and write these ---
    /// The buffer's header, which holds the next write position in the
    /// buffer, published for flushers and for readers of a spill file.
    hdr: *mut Header,
    /// Past this position a probe takes the cold path (flush, reopen or
    /// drop); set to null to force the cold path on the next probe.
    limit: AtomicPtr<u8>,
    /// Tick of the last record.
    last: u64,
    /// What this thread records and how it reads the clock: `TRACE`,
    /// `PROFILE`, `TSC` and `FENCED` bits, tested together from one load.
    mode: u8,
    pub(crate) profile: Profile,
    // --- cold ---
    buf: Buffer,
    /// The event file's name in the rank directory (NUL-terminated), when
    /// `events` is set.
    events_name: [u8; files::NAME],
    /// Whether the state has an event file (else its records are dropped:
    /// calibration's scratch states, states without a buffer).
    events: bool,
    pub(crate) thread: u32,
    epoch: u32,
    /// Taken by whoever writes this state's data to disk.
    lock: AtomicBool,
    /// Set once the final data was written; later data is dropped.
    closed: AtomicBool,
    /// A thread owns this state.
    in_use: AtomicBool,
    /// Events recorded but not written (a write failed, or after close).
    pub(crate) lost_bytes: u64,
    /// Why the last write failed (an error number; 0: none did), and the
    /// events and bytes that failed writes lost.
    pub(crate) lost_errno: i32,
    pub(crate) unwritten: (u64, u64),
    /// What the event file holds, for its summary.
    tally: Tally,
    /// The signal stack of the thread that owns this state: the crash
    /// handler runs on it, and needs more room than the usual few pages
    /// (null until made; it is never released, like the state).
    altstack: *mut u8,
    /// Where `buf` points when the state has no buffer of its own.
    sink: Sink,
}

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

impl ThreadState {
    /// A new state writing into its sink (see [`ThreadState::install`]),
    /// made without aborting: `None` if memory is short.
    pub(crate) fn try_new(max_nodes: usize, max_depth: usize) -> Option<Box<ThreadState>> {
        let profile = Profile::try_new(max_nodes, max_depth)?;
        let layout = std::alloc::Layout::new::<ThreadState>();
        // Safety: a non-zero-sized layout; the memory is written before use
        // and handed to a Box of the same layout.
        let mut st = unsafe {
            let p = std::alloc::alloc(layout) as *mut ThreadState;
            if p.is_null() {
                return None;
            }
            p.write(ThreadState {
                hdr: ptr::null_mut(),
                limit: AtomicPtr::new(ptr::null_mut()),
                last: 0,
                mode: TRACE | clock_bits(),
                profile,
                // Replaced below, once the sink has its place.
                buf: Buffer::dangling(),
                events_name: [0; files::NAME],
                events: false,
                thread: 0,
                epoch: 0,
                lock: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                in_use: AtomicBool::new(true),
                lost_bytes: 0,
                lost_errno: 0,
                unwritten: (0, 0),
                tally: Tally::default(),
                altstack: ptr::null_mut(),
                sink: Sink::new(),
            });
            Box::from_raw(p)
        };
        let sink = Buffer::sink(&mut st.sink);
        st.install(sink);
        Some(st)
    }

    /// Makes `buf` the state's buffer, empty (the previous one is
    /// released). Call with the lock held, or before the state is shared.
    pub(crate) fn install(&mut self, buf: Buffer) {
        self.buf = buf;
        self.hdr = self.buf.header();
        self.rewind(self.last);
        self.limit.store(self.normal_limit(), Relaxed);
    }

    /// The state's buffer, for [`ThreadState::install`]ing another or
    /// taking it over for a new thread.
    pub(crate) fn buffer(&mut self) -> &mut Buffer {
        &mut self.buf
    }

    /// Gives the calling thread this state's signal stack (made on first
    /// use; untouched pages cost nothing; none if memory is short).
    pub(crate) fn install_altstack(&mut self) {
        if self.altstack.is_null() {
            self.altstack = crate::buffer::map_anonymous(ALTSTACK).unwrap_or(ptr::null_mut());
        }
        if self.altstack.is_null() {
            return;
        }
        let ss = libc::stack_t {
            ss_sp: self.altstack as *mut libc::c_void,
            ss_flags: 0,
            ss_size: ALTSTACK,
        };
        // Safety: the stack lives as long as the state, which is never freed.
        unsafe { libc::sigaltstack(&ss, ptr::null_mut()) };
    }

    pub(crate) fn set_modes(&mut self, trace: bool, profile: bool) {
        self.mode =
            if trace { TRACE } else { 0 } | if profile { PROFILE } else { 0 } | clock_bits();
    }

    fn traces(&self) -> bool {
        self.mode & TRACE != 0
    }

    fn profiles(&self) -> bool {
        self.mode & PROFILE != 0
    }

    #[inline(always)]
    fn pos(&self) -> &AtomicPtr<u8> {
        // Safety: `hdr` points to the header of the state's buffer, which
        // lives as long as it is the state's.
        unsafe { &(*self.hdr).pos }
    }

    fn block_base(&self) -> u64 {
        // Safety: as in `pos`.
        unsafe { (*self.hdr).base.load(Relaxed) }
    }

    fn start(&self) -> *mut u8 {
        self.buf.start()
    }

    fn normal_limit(&self) -> *mut u8 {
        // Safety: every buffer is longer than RESERVE.
        unsafe { self.start().add(self.buf.len() - RESERVE) }
    }

    /// Empties the buffer; the next block starts at `base`.
    fn rewind(&mut self, base: u64) {
        // Safety: as in `pos`.
        unsafe { (*self.hdr).base.store(base, Relaxed) };
        self.pos().store(self.start(), Release);
        self.last = base;
    }

    // === hot path ===

    #[inline(always)]
    pub(crate) fn enter(&mut self, region: RegionId) {
        fence(self.mode);
        // After the cold path, which may have reopened the state with new
        // modes.
        let p = self.room();
        let m = self.mode;
        let t = clock::read(m & TSC != 0, m & FENCED != 0).max(self.last);
        if m & TRACE != 0 {
            // Safety: `room` left at least RESERVE bytes after `p`.
            let p = unsafe { evcodec::put_enter(p, t - self.last, region) };
            self.pos().store(p, Release);
            self.last = t;
        }
        if m & PROFILE != 0 {
            self.profile.enter(region, t);
        }
        fence(m);
    }

    #[inline(always)]
    pub(crate) fn leave(&mut self) {
        fence(self.mode);
        // After the cold path, which may have reopened the state with new
        // modes.
        let p = self.room();
        let m = self.mode;
        let t = clock::read(m & TSC != 0, m & FENCED != 0).max(self.last);
        if m & TRACE != 0 {
            // Safety: as in `enter`.
            let p = unsafe { evcodec::put_leave(p, t - self.last) };
            self.pos().store(p, Release);
            self.last = t;
        }
        if m & PROFILE != 0 {
            self.profile.leave(t);
        }
        fence(m);
    }

    /// Records an event other than enter/leave (those keep the profile too).
    #[inline(always)]
    pub(crate) fn event(&mut self, kind: &EventKind) {
        if self.mode & TRACE != 0 {
            fence(self.mode);
            let p = self.room();
            let m = self.mode;
            let t = clock::read(m & TSC != 0, m & FENCED != 0).max(self.last);
            // Safety: as in `enter`.
            let p = unsafe { evcodec::put_event(p, t - self.last, kind) };
            self.pos().store(p, Release);
            self.last = t;
            self.tally.count(kind);
            fence(m);
        }
    }

    /// `calls` calls whose probes recorded nothing happened since the last
    /// record: an event at that record's time (no clock read), so that
    /// their cost lies in the stretch after it; in the profile, a count
    /// under the current path.
    pub(crate) fn skipped(&mut self, calls: u64) {
        if self.traces() {
            self.event_at(self.last, &EventKind::Skipped { calls });
        }
        if self.profiles() {
            self.profile.skipped(calls);
        }
    }

    /// Records `kind` at the time of the last record.
    pub(crate) fn event_prior(&mut self, kind: &EventKind) {
        if self.traces() {
            self.event_at(self.last, kind);
        }
    }

    /// Records `kind` at tick `t` (no earlier than the last record).
    fn event_at(&mut self, t: u64, kind: &EventKind) {
        let p = self.room();
        let t = t.max(self.last);
        // Safety: as in `enter`.
        let p = unsafe { evcodec::put_event(p, t - self.last, kind) };
        self.pos().store(p, Release);
        self.last = t;
        self.tally.count(kind);
    }

    /// The write position, after taking the cold path if the buffer has no
    /// room for a record or the state was closed from outside.
    #[inline(always)]
    fn room(&mut self) -> *mut u8 {
        let p = self.pos().load(Relaxed);
        if p <= self.limit.load(Relaxed) {
            return p;
        }
        self.cold();
        self.pos().load(Relaxed)
    }

    // === cold path ===

    /// The buffer is full, or the state was closed from outside.
    #[cold]
    #[inline(never)]
    fn cold(&mut self) {
        if self.closed.load(Acquire) {
            // Measurement finished (or restarted): drop what came after.
            self.lost_bytes += self.pending() as u64;
            self.rewind(self.last);
            self.limit.store(self.normal_limit(), Relaxed);
            if process::epoch() != self.epoch && process::active() {
                reopen(self);
            }
            return;
        }
        if !self.events {
            // A scratch state (calibration) or one without a buffer:
            // nothing is kept.
            self.rewind(self.last);
            return;
        }
        let t0 = clock::now().max(self.last);
        let p = self.pos().load(Relaxed);
        // Safety: RESERVE leaves room for this record.
        let p = unsafe { evcodec::put_event(p, t0 - self.last, &EventKind::FlushBegin) };
        self.pos().store(p, Release);
        self.last = t0;
        self.lock();
        if !self.closed.load(Relaxed) {
            self.write_block();
        }
        self.unlock();
        if self.lost_errno != 0 {
            process::tell_write_loss(self.lost_errno);
        }
        self.rewind(t0);
        let t1 = clock::now().max(t0);
        let p = self.pos().load(Relaxed);
        // Safety: the buffer was just emptied.
        let p = unsafe { evcodec::put_event(p, t1 - t0, &EventKind::FlushEnd) };
        self.pos().store(p, Release);
        self.last = t1;
        process::note_flush();
    }

    fn pending(&self) -> usize {
        self.pos().load(Acquire) as usize - self.start() as usize
    }

    pub(crate) fn lock(&self) {
        while self
            .lock
            .compare_exchange_weak(false, true, Acquire, Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }

    pub(crate) fn try_lock(&self) -> bool {
        self.lock
            .compare_exchange(false, true, Acquire, Relaxed)
            .is_ok()
    }

    pub(crate) fn unlock(&self) {
        self.lock.store(false, Release);
    }

    pub(crate) fn in_use_now(&self) -> bool {
        self.in_use.load(Acquire)
    }

    /// In a forked child: the state's files belong to the parent, and so
    /// does a buffer mapped from its spill file, which the child must not
    /// write into: the state writes into its sink.
    pub(crate) fn forget_after_fork(&mut self) {
        self.events = false;
        self.closed.store(true, Release);
        if self.buf.is_spilled() {
            let sink = Buffer::sink(&mut self.sink);
            self.install(sink);
        }
        self.limit.store(ptr::null_mut(), Relaxed);
        self.lock.store(false, Release);
    }

    /// The measurement ended cleanly: the spill file is no longer needed.
    /// Call with the lock held, the state closed.
    pub(crate) fn remove_spill(&mut self, dir: i32) {
        self.buf.unlink(dir);
    }

    /// Writes the buffer's records as one block. Call with the lock held.
    /// Allocates nothing: safe in a signal handler.
    fn write_block(&mut self) {
        let len = self.pending();
        if len == 0 || !self.events {
            return;
        }
        // Safety: `len` bytes from the start were written by the owner and
        // published before `pos`.
        let records = unsafe { std::slice::from_raw_parts(self.start(), len) };
        let (tick, mono) = clock::sample();
        let mut prefix = [0u8; EVENT_BLOCK_PREFIX];
        prefix[0..8].copy_from_slice(&self.block_base().to_le_bytes());
        prefix[8..16].copy_from_slice(&tick.to_le_bytes());
        prefix[16..24].copy_from_slice(&mono.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&prefix);
        crc.update(records);
        let mut header = [0u8; BLOCK_HEADER_LEN];
        header[0..4].copy_from_slice(&file::BLOCK_MAGIC);
        header[4..8].copy_from_slice(&((EVENT_BLOCK_PREFIX + len) as u32).to_le_bytes());
        header[8..12].copy_from_slice(&crc.finalize().to_le_bytes());
        match files::append_to(
            process::dir_fd(),
            &self.events_name,
            &[&header, &prefix, records],
        ) {
            Ok(()) => {
                let bytes = self.tally.bytes.load(Relaxed);
                let written = (BLOCK_HEADER_LEN + EVENT_BLOCK_PREFIX + len) as u64;
                self.tally.bytes.store(bytes + written, Relaxed);
            }
            Err(e) => {
                self.lost_bytes += len as u64;
                self.lost_errno = e;
                let mut events = 0;
                let _ = evcodec::walk_records(records, &mut 0, |_, _| events += 1);
                self.unwritten.0 += events;
                self.unwritten.1 += len as u64;
            }
        }
    }

    /// Writes everything this state holds (last block, profile) and closes
    /// it. With `wait`, waits for a concurrent writer; without (signal
    /// handlers), gives up if one is busy.
    pub(crate) fn close(&mut self, wait: bool, crash: bool) {
        if wait {
            self.lock();
        } else if !self.try_lock() {
            return;
        }
        if !self.closed.load(Relaxed) {
            if self.traces() {
                // The last write is the runtime's own work too: bracket it
                // (a second, small block holds its end) unless there is no
                // room left or the process is crashing.
                let p = self.pos().load(Relaxed);
                let mark = !crash && self.events && p <= self.limit.load(Relaxed);
                let t0 = clock::now().max(self.last);
                if mark {
                    // Safety: `p` is within the limit, RESERVE is after it.
                    let p =
                        unsafe { evcodec::put_event(p, t0 - self.last, &EventKind::FlushBegin) };
                    self.pos().store(p, Release);
                    self.last = t0;
                }
                self.write_block();
                if mark {
                    self.rewind(t0);
                    let t1 = clock::now().max(t0);
                    let p = self.pos().load(Relaxed);
                    // Safety: the buffer was just emptied.
                    let p = unsafe { evcodec::put_event(p, t1 - t0, &EventKind::FlushEnd) };
                    self.pos().store(p, Release);
                    self.last = t1;
                    self.write_block();
                }
            }
            // What the file holds, unless something was lost (or the
            // process is crashing: the summary would need to allocate).
            if self.traces() && !crash && self.events && self.lost_bytes == 0 {
                if let Some(def) = self.tally.def(self.thread) {
                    process::write_defs(&[def]);
                }
            }
            if self.profiles() {
                process::write_profile(self, crash);
            }
            // Everything the spill file held is written out (or counted
            // as lost): a reader must not take it again.
            self.buf.set_closed();
            self.events = false;
            self.closed.store(true, Release);
            self.limit.store(ptr::null_mut(), Relaxed);
        }
        self.unlock();
    }
}

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
            // Safety: `p` is this thread's own state.
            let st = unsafe { &mut *p };
            st.close(true, false);
            process::thread_ended(st);
            st.in_use.store(false, Release);
        });
    }
}

/// Runs `f` on this thread's state, creating it on first use; does nothing
/// for a thread whose state is gone or if measurement cannot start.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&mut ThreadState) -> R) -> Option<R> {
    let p = STATE.with(|s| s.get());
    let p = if (p as usize) <= (REFUSED as usize) {
        attach(p)?
    } else {
        p
    };
    // Safety: the state belongs to this thread until the thread ends; other
    // threads only read the published part of it.
    Some(f(unsafe { &mut *p }))
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
    let st = match crate::failsafe::contained(process::new_thread_state)? {
        Ok(st) => st,
        Err(process::NoState::NotRunning) => return None,
        Err(process::NoState::Memory) => {
            STATE.with(|s| s.set(REFUSED));
            return None;
        }
    };
    // Safety: the state was just claimed for this thread.
    unsafe { (*st).install_altstack() };
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
        if fresh && st.traces() && st.pending() == 0 && t0 <= st.last {
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
            .in_use
            .compare_exchange(false, true, AcqRel, Relaxed)
            .is_ok()
        {
            return Some(p);
        }
    }
    None
}

/// Prepares a state for a new thread or a new measurement: thread number,
/// event file (its name, if the thread is traced), modes, empty buffer and
/// profile.
pub(crate) fn reset_for(
    st: &mut ThreadState,
    thread: u32,
    epoch: u32,
    events: Option<[u8; files::NAME]>,
    trace: bool,
    prof: bool,
) {
    st.thread = thread;
    st.epoch = epoch;
    st.events = events.is_some();
    st.events_name = events.unwrap_or([0; files::NAME]);
    st.set_modes(trace, prof);
    st.profile.reset();
    st.lost_bytes = 0;
    st.lost_errno = 0;
    st.unwritten = (0, 0);
    st.tally.reset(if st.events {
        file::HEADER_LEN as u64
    } else {
        0
    });
    let now = clock::now();
    st.rewind(now);
    st.closed.store(false, Release);
    st.limit.store(st.normal_limit(), Relaxed);
}

fn reopen(st: &mut ThreadState) {
    crate::failsafe::contained(|| process::reopen_thread_state(st));
}

/// Collectives counted per communicator; a location that uses more
/// communicators gets no summary.
const TALLY_COMMS: usize = 8;

/// What a state's event file holds (see `Def::Summary`). Counted by the
/// owner, read by whoever closes the state: atomics, each written by one
/// thread only, so plain loads and stores.
#[derive(Default)]
struct Tally {
    bytes: AtomicU64,
    syncs: AtomicU64,
    /// Communicator plus one (0: free slot) and count.
    comms: [(AtomicU64, AtomicU64); TALLY_COMMS],
    overflow: AtomicBool,
}

impl Tally {
    fn reset(&self, bytes: u64) {
        self.bytes.store(bytes, Relaxed);
        self.syncs.store(0, Relaxed);
        for (c, n) in &self.comms {
            c.store(0, Relaxed);
            n.store(0, Relaxed);
        }
        self.overflow.store(false, Relaxed);
    }

    #[inline]
    fn count(&self, kind: &EventKind) {
        let bump = |a: &AtomicU64| a.store(a.load(Relaxed) + 1, Relaxed);
        if kind.is_shared_sync() {
            bump(&self.syncs);
        } else if let EventKind::CollectiveEnd { comm, .. } = *kind {
            let key = comm.wrapping_add(1);
            for (c, n) in &self.comms {
                match c.load(Relaxed) {
                    0 => {
                        c.store(key, Relaxed);
                        bump(n);
                        return;
                    }
                    k if k == key => {
                        bump(n);
                        return;
                    }
                    _ => {}
                }
            }
            self.overflow.store(true, Relaxed);
        }
    }

    /// The summary of location `thread`, if the counts are complete.
    fn def(&self, thread: u32) -> Option<parallax_model::defs::Def> {
        if self.overflow.load(Relaxed) {
            return None;
        }
        let mut collectives: Vec<(u64, u64)> = self
            .comms
            .iter()
            .map(|(c, n)| (c.load(Relaxed), n.load(Relaxed)))
            .filter(|&(c, _)| c != 0)
            .map(|(c, n)| (c.wrapping_sub(1), n))
            .collect();
        collectives.sort_unstable();
        let summary = parallax_model::defs::Summary {
            bytes: self.bytes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            collectives,
        };
        Some(summary.def(thread))
    }
}

/// Writes the header of a new event file.
pub(crate) fn event_file_header(rank: u32, thread: u32) -> [u8; file::HEADER_LEN] {
    file::header(FileKind::Events, rank, thread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_state_never_overflows() {
        let mut st = ThreadState::try_new(16, 16).unwrap();
        st.install(Buffer::anonymous(4096).unwrap());
        for i in 0..100_000u32 {
            st.enter(i % 7);
            st.event(&EventKind::Mark { mark: 1, value: -1 });
            st.leave();
        }
        assert!(st.pending() <= st.buf.len());
    }

    #[test]
    fn a_state_without_a_buffer_records_into_its_sink() {
        let mut st = ThreadState::try_new(16, 16).unwrap();
        for i in 0..10_000u32 {
            st.enter(i % 7);
            st.event(&EventKind::Send {
                peer: u32::MAX,
                tag: u32::MAX,
                comm: u64::MAX,
                bytes: u64::MAX,
            });
            st.leave();
            assert!(st.pending() <= st.buf.len());
        }
    }
}
