//! A thread's state: the owner's part, the part other threads may touch,
//! and what a thread other than the owner (or a signal handler) does with
//! it: write out what the owner published, and close it.

use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering::*,
};

use parallax_model::evcodec;
use parallax_model::experiment::EVENT_BLOCK_PREFIX;
use parallax_model::file::{self, BLOCK_HEADER_LEN};

use super::tally::Tally;
use super::{clock_bits, Local, PROFILE, TRACE};
use crate::buffer::{Buffer, Header, Sink};
use crate::clock;
use crate::files;
use crate::process;
use crate::profile::{Profile, Published};
use crate::states;

/// Measurement state of one thread (one location). Laid out as declared,
/// the probes' fields first, in the first cache lines.
#[repr(C, align(64))]
pub(crate) struct ThreadState {
    /// Past this position a probe takes the cold path (flush, reopen or
    /// drop); set to null, by anyone, to force the cold path on the next
    /// probe.
    pub(super) limit: AtomicPtr<u8>,
    pub(super) own: UnsafeCell<Own>,
    pub(super) shared: Shared,
    /// Where the buffer points when the state has no buffer of its own;
    /// reached only through the buffer's pointers.
    pub(super) sink: UnsafeCell<Sink>,
}

// Safety: other threads touch only `limit` and `shared`, which are atomics
// or under the state's lock; `own` and `sink` are reached only by the owner
// (see `Local`).
unsafe impl Sync for ThreadState {}

/// The owner's part of a state.
#[repr(C)]
pub(crate) struct Own {
    /// The buffer's header, which holds the next write position in the
    /// buffer, published for flushers and for readers of a spill file.
    pub(super) hdr: *mut Header,
    /// Tick of the last record.
    pub(super) last: u64,
    /// What this thread records and how it reads the clock: `TRACE`,
    /// `PROFILE`, `TSC` and `FENCED` bits, tested together from one load.
    pub(super) mode: u8,
    pub(super) profile: Profile,
    /// The buffer's first byte for records and their room, as installed
    /// (the buffer itself is under the lock, in `Shared`).
    pub(super) start: *mut u8,
    pub(super) len: usize,
    /// The measurement the state was set up for.
    pub(super) epoch: u32,
    /// The signal stack of the thread that owns this state: the crash
    /// handler runs on it, and needs more room than the usual few pages
    /// (null until made; it is never released, like the state).
    pub(super) altstack: *mut u8,
    /// The tick from which the next enter or leave times the core's speed
    /// (`Local::meter`; never on calibration's scratch states), and the
    /// window of timings not written yet.
    pub(super) meter_at: u64,
    pub(super) meter_samples: u64,
    pub(super) meter_ticks: u64,
}

/// What any thread may touch of a state.
pub(super) struct Shared {
    /// Taken by whoever writes this state's data to disk or replaces its
    /// buffer.
    pub(super) lock: AtomicBool,
    /// Set once the final data was written; later data is dropped.
    pub(super) closed: AtomicBool,
    /// A thread owns this state.
    pub(super) in_use: AtomicBool,
    /// Whether the state has an event file (else its records are dropped:
    /// calibration's scratch states, states without a buffer).
    pub(super) events: AtomicBool,
    /// The `TRACE` and `PROFILE` bits of the owner's mode.
    pub(super) mode: AtomicU8,
    pub(super) thread: AtomicU32,
    /// Events recorded but not written (a write failed, or after close).
    pub(super) lost_bytes: AtomicU64,
    /// Why the last write failed (an error number; 0: none did), and the
    /// events and bytes that failed writes lost.
    pub(super) lost_errno: AtomicI32,
    pub(super) unwritten_events: AtomicU64,
    pub(super) unwritten_bytes: AtomicU64,
    /// What the event file holds, for its summary.
    pub(super) tally: Tally,
    /// The profile as others may read it (it lives as long as the state).
    pub(super) profile: *const Published,
    /// Held under `lock`.
    pub(super) locked: UnsafeCell<Locked>,
}

/// What only the holder of a state's lock touches.
pub(super) struct Locked {
    pub(super) buf: Buffer,
    /// The event file's name in the rank directory (NUL-terminated), when
    /// `Shared::events` is set.
    pub(super) events_name: [u8; files::NAME],
}

/// A state's lock, held; released on drop.
pub(crate) struct Guard<'a> {
    pub(super) shared: &'a Shared,
}

impl Guard<'_> {
    pub(super) fn locked(&mut self) -> &mut Locked {
        // Safety: the lock is held, and this borrow ends with the guard's.
        unsafe { &mut *self.shared.locked.get() }
    }

    /// The state's buffer (replaced only through [`Local::install`]).
    pub(crate) fn buffer(&mut self) -> &mut Buffer {
        &mut self.locked().buf
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.shared.lock.store(false, Release);
    }
}

impl ThreadState {
    /// A new state writing into its sink, made without aborting: `None` if
    /// memory is short.
    pub(crate) fn try_new(max_nodes: usize, max_depth: usize) -> Option<NewState> {
        let profile = Profile::try_new(max_nodes, max_depth)?;
        let layout = std::alloc::Layout::new::<ThreadState>();
        // Safety: a non-zero-sized layout; the memory is written before use
        // and freed as a Box of the same layout.
        let mut st = unsafe {
            let p = std::alloc::alloc(layout) as *mut ThreadState;
            if p.is_null() {
                return None;
            }
            p.write(ThreadState {
                limit: AtomicPtr::new(ptr::null_mut()),
                own: UnsafeCell::new(Own {
                    hdr: ptr::null_mut(),
                    last: 0,
                    mode: TRACE | clock_bits(),
                    profile,
                    start: ptr::null_mut(),
                    len: 0,
                    epoch: 0,
                    altstack: ptr::null_mut(),
                    meter_at: 0,
                    meter_samples: 0,
                    meter_ticks: 0,
                }),
                shared: Shared {
                    lock: AtomicBool::new(false),
                    closed: AtomicBool::new(false),
                    in_use: AtomicBool::new(true),
                    events: AtomicBool::new(false),
                    mode: AtomicU8::new(TRACE),
                    thread: AtomicU32::new(0),
                    lost_bytes: AtomicU64::new(0),
                    lost_errno: AtomicI32::new(0),
                    unwritten_events: AtomicU64::new(0),
                    unwritten_bytes: AtomicU64::new(0),
                    tally: Tally::default(),
                    profile: ptr::null(),
                    // Replaced below, once the sink has its place.
                    locked: UnsafeCell::new(Locked {
                        buf: Buffer::dangling(),
                        events_name: [0; files::NAME],
                    }),
                },
                sink: UnsafeCell::new(Sink::new()),
            });
            NewState(ptr::NonNull::new_unchecked(p))
        };
        // Safety: nobody else has the new state.
        let own = unsafe { &mut *st.own.get() };
        // Safety: as above.
        unsafe { (*st.0.as_ptr()).shared.profile = own.profile.published() };
        let sink = Buffer::sink(st.sink.get());
        let mut local = st.local();
        let mut g = local.st.lock();
        local.install(&mut g, sink);
        drop(g);
        Some(st)
    }

    /// The owner's handle.
    ///
    /// # Safety
    ///
    /// Only the thread that owns the state may call this (or the one thread
    /// of a forked child, whose other states have no owner left), and not
    /// while another `Local` of the state is alive.
    pub(crate) unsafe fn local_unchecked(&self) -> Local<'_> {
        Local {
            st: self,
            // Safety: the caller's promise: nobody else reaches `own`.
            own: unsafe { &mut *self.own.get() },
        }
    }

    pub(crate) fn lock(&self) -> Guard<'_> {
        while self
            .shared
            .lock
            .compare_exchange_weak(false, true, Acquire, Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        Guard {
            shared: &self.shared,
        }
    }

    pub(crate) fn try_lock(&self) -> Option<Guard<'_>> {
        self.shared
            .lock
            .compare_exchange(false, true, Acquire, Relaxed)
            .is_ok()
            .then_some(Guard {
                shared: &self.shared,
            })
    }

    pub(crate) fn in_use_now(&self) -> bool {
        self.shared.in_use.load(Acquire)
    }

    /// The location number of the state's thread.
    pub(crate) fn thread(&self) -> u32 {
        self.shared.thread.load(Relaxed)
    }

    /// The profile, as any thread may read it.
    pub(crate) fn profile(&self) -> &Published {
        // Safety: the profile lives as long as the state.
        unsafe { &*self.shared.profile }
    }

    /// Takes the state's count of what it could not write: bytes lost,
    /// the last write's error number, and the events and bytes that
    /// failed writes lost.
    pub(crate) fn take_losses(&self) -> (u64, i32, u64, u64) {
        let sh = &self.shared;
        (
            sh.lost_bytes.swap(0, Relaxed),
            sh.lost_errno.swap(0, Relaxed),
            sh.unwritten_events.swap(0, Relaxed),
            sh.unwritten_bytes.swap(0, Relaxed),
        )
    }

    /// The measurement ended cleanly: the spill file is no longer needed
    /// (the memory stays, for an owner that still writes into it).
    pub(crate) fn remove_spill(&self, dir: i32) {
        let mut g = self.lock();
        g.locked().buf.unlink(dir);
    }

    /// In a forked child: the state's files belong to the parent, and so
    /// does a buffer mapped from its spill file, which the child must not
    /// write into: the state writes into its sink.
    ///
    /// # Safety
    ///
    /// Only in the one thread of a forked child (no owner runs).
    pub(crate) unsafe fn forget_after_fork(&self) {
        self.shared.events.store(false, Relaxed);
        self.shared.closed.store(true, Release);
        // The parent's lock, if one of its threads held it, is void here.
        self.shared.lock.store(false, Release);
        // Safety: the caller's promise.
        let mut local = unsafe { self.local_unchecked() };
        let mut g = self.lock();
        if g.locked().buf.is_spilled() {
            local.install(&mut g, Buffer::sink(self.sink.get()));
        }
        drop(g);
        self.limit.store(ptr::null_mut(), Relaxed);
    }

    /// Writes the records the owner published as one block. Allocates
    /// nothing: safe in a signal handler.
    pub(super) fn write_block(&self, locked: &mut Locked) {
        let sh = &self.shared;
        let buf = &locked.buf;
        // Safety: the header of the state's buffer, mapped while it is.
        let hdr = unsafe { &*buf.header() };
        let len = hdr.pos.load(Acquire) as usize - buf.start() as usize;
        if len == 0 || !sh.events.load(Relaxed) {
            return;
        }
        // Safety: the owner wrote these `len` bytes and published them
        // before `pos`; it writes only after them.
        let records = unsafe { std::slice::from_raw_parts(buf.start(), len) };
        let (tick, mono) = clock::sample();
        let mut prefix = [0u8; EVENT_BLOCK_PREFIX];
        prefix[0..8].copy_from_slice(&hdr.base.load(Relaxed).to_le_bytes());
        prefix[8..16].copy_from_slice(&tick.to_le_bytes());
        prefix[16..24].copy_from_slice(&mono.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&prefix);
        crc.update(records);
        let mut header = [0u8; BLOCK_HEADER_LEN];
        header[0..4].copy_from_slice(&file::BLOCK_MAGIC);
        header[4..8].copy_from_slice(&((EVENT_BLOCK_PREFIX + len) as u32).to_le_bytes());
        header[8..12].copy_from_slice(&crc.finalize().to_le_bytes());
        let parts: [&[u8]; 3] = [&header, &prefix, records];
        match files::append_to(process::dir_fd(), &locked.events_name, &parts) {
            Ok(()) => {
                let written = (BLOCK_HEADER_LEN + EVENT_BLOCK_PREFIX + len) as u64;
                sh.tally.bytes.fetch_add(written, Relaxed);
            }
            Err(e) => {
                sh.lost_bytes.fetch_add(len as u64, Relaxed);
                sh.lost_errno.store(e, Relaxed);
                let mut events = 0;
                let _ = evcodec::walk_records(records, &mut 0, |_, _| events += 1);
                sh.unwritten_events.fetch_add(events, Relaxed);
                sh.unwritten_bytes.fetch_add(len as u64, Relaxed);
            }
        }
    }

    /// Writes out what the owner published and closes the state, from any
    /// thread or a signal handler, writing nothing where the owner writes:
    /// its last records are not bracketed as a flush, and its visits in
    /// progress count as ended now (unless `crash`: then, as nothing may be
    /// allocated, neither they nor the event file's summary are written).
    /// `wait`: wait for a busy writer, else give up.
    pub(crate) fn close_from_outside(&self, wait: bool, crash: bool) {
        let guard = if wait {
            Some(self.lock())
        } else {
            self.try_lock()
        };
        let Some(mut g) = guard else { return };
        if self.shared.closed.load(Relaxed) {
            return;
        }
        self.write_block(g.locked());
        let close_at = (!crash).then(clock::now);
        self.write_summaries(close_at, crash);
        self.mark_closed(g.locked());
    }

    /// The event file's summary, unless something was lost, and the
    /// profile, with its visits in progress ended at `close_at`.
    pub(super) fn write_summaries(&self, close_at: Option<u64>, crash: bool) {
        let sh = &self.shared;
        let mode = sh.mode.load(Relaxed);
        let clean = sh.lost_bytes.load(Relaxed) == 0;
        if mode & TRACE != 0 && !crash && sh.events.load(Relaxed) && clean {
            if let Some(def) = sh.tally.def(self.thread()) {
                process::write_defs(&[def]);
            }
        }
        if mode & PROFILE != 0 {
            states::write_profile(self, close_at, crash);
        }
    }

    /// Everything the spill file held is written out (or counted as lost):
    /// a reader must not take it again; later records are dropped.
    pub(super) fn mark_closed(&self, locked: &mut Locked) {
        locked.buf.set_closed();
        self.shared.events.store(false, Relaxed);
        self.shared.closed.store(true, Release);
        self.limit.store(ptr::null_mut(), Release);
    }
}

/// A state just made, owned: freed on drop unless given away with
/// [`NewState::into_raw`]. (Held by pointer, not as a `Box`: the state's
/// buffer may point into it.)
pub(crate) struct NewState(ptr::NonNull<ThreadState>);

impl NewState {
    /// The owner's handle.
    pub(crate) fn local(&mut self) -> Local<'_> {
        // Safety: `&mut self` excludes every other access.
        unsafe { self.0.as_ref().local_unchecked() }
    }

    /// Gives the state away: it is never freed.
    pub(crate) fn into_raw(self) -> *mut ThreadState {
        std::mem::ManuallyDrop::new(self).0.as_ptr()
    }

    /// Takes back a state given away by [`NewState::into_raw`].
    ///
    /// # Safety
    ///
    /// `p` came from `into_raw`, and nothing uses it any more but the
    /// result.
    pub(crate) unsafe fn from_raw(p: *mut ThreadState) -> NewState {
        // Safety: the caller's promise.
        NewState(unsafe { ptr::NonNull::new_unchecked(p) })
    }
}

impl std::ops::Deref for NewState {
    type Target = ThreadState;
    fn deref(&self) -> &ThreadState {
        // Safety: alive until dropped.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for NewState {
    fn drop(&mut self) {
        // Safety: made in `try_new` with a Box's layout; nobody else holds it.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}
