//! Compiler instrumentation: `__cyg_profile_func_enter` and
//! `__cyg_profile_func_exit`, which gcc and clang call at the entry and exit
//! of every function of code built with `-finstrument-functions` (C, C++,
//! Fortran).
//!
//! The hot path is a lookup of the function's address in a lock-free table
//! (open addressing, written only under a lock, read without one), a
//! per-thread shadow stack of one bit per frame that says whether the
//! entry was recorded (so that exits pair with entries whatever changes in
//! between: filters, throttling, flow on and off), a per-thread call count
//! and the runtime's enter or leave. The hooks themselves are C
//! (`shim/hooks.c`): a call that records nothing never leaves them; the
//! others come here ([`pxl_hook_enter`], [`pxl_hook_exit`]). A function seen for the first time is
//! named from the symbol tables ([`crate::symbols`]), checked against the
//! filter, and registered as a region with its address.
//!
//! A call whose hooks record nothing (a throttled or filtered function, a
//! frame beyond the depth limit, recording off) is counted, at the cost of
//! an increment, and the count goes into the trace before the thread's next
//! recorded call ([`parallax::events::skipped`]): compensation removes what
//! those hooks cost, as calibrated through [`calibration_hooks`].
//!
//! Throttling (as TAU does): when a thread has called a function
//! `PARALLAX_THROTTLE` times (rounded up to a power of two, checked again
//! at every doubling) and the calls took less than the given time each on
//! average (measured from the first call, so an upper bound of the
//! inclusive time), the function is not measured any more, in any thread,
//! and a `throttled` property of the process says so.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering::*};
use std::sync::Mutex;

use parallax::RegionKind;
use parallax_model::defs::Def;

use crate::settings;

const SLOTS: usize = 1 << 16;
/// Dense function numbers are 16 bits; beyond (or with the table three
/// quarters full) new functions are not measured.
const MAX_FUNCTIONS: u32 = (SLOTS as u32) * 3 / 4;
/// Frames deeper than this are not measured (`PXL_MAX_DEPTH` of the C hooks).
const MAX_DEPTH: usize = 4096;

/// Slot value: region id in bits 0..32, dense function number in 32..48.
/// One of calibration's functions: recorded under calibration's flags and
/// never throttled.
const CALIBRATION: u64 = 1 << 61;
const THROTTLED: u64 = 1 << 62;
const SKIP: u64 = 1 << 63;

/// Laid out as `struct pxl_slot` of the C hooks.
#[repr(C)]
struct Slot {
    key: AtomicUsize,
    val: AtomicU64,
}

/// Read by the C hooks (`shim/hooks.c`) as `pxl_hook_table`.
#[export_name = "pxl_hook_table"]
static TABLE: [Slot; SLOTS] = [const {
    Slot {
        key: AtomicUsize::new(0),
        val: AtomicU64::new(0),
    }
}; SLOTS];
static FUNCTIONS: AtomicU32 = AtomicU32::new(0);
/// The functions by dense function number.
static FUNCS: Mutex<Vec<Func>> = Mutex::new(Vec::new());

struct Func {
    /// For throttling reports.
    name: String,
    /// Its region; 0 if it has none (filtered out) or is calibration's.
    region: u32,
}
static REGISTER: Mutex<()> = Mutex::new(());

const UNKNOWN: u8 = 0;
const LIVE: u8 = 1;
const DEAD: u8 = 2;
/// Read by the C hooks as `pxl_hook_state`.
#[export_name = "pxl_hook_state"]
static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

extern "C" {
    /// The first slot to look at for function `f` (the C hooks' hash).
    fn pxl_hook_home(f: usize) -> u32;
    /// The slot value of function `f`, 0 if not in the table (the C hooks'
    /// lookup).
    fn pxl_hook_lookup(f: usize) -> u64;
}

fn home(f: usize) -> usize {
    // Safety: a pure function of its argument.
    unsafe { pxl_hook_home(f) as usize }
}

fn lookup(f: usize) -> u64 {
    // Safety: reads the table as the hooks do.
    unsafe { pxl_hook_lookup(f) }
}

/// A thread's shadow stack, in the C hooks' initial-exec thread-local
/// (`struct pxl_shadow`): one bit per frame, set if its entry was
/// recorded; the calls that recorded nothing since the thread's last
/// recorded one; its counts. It has no destructor, so the hooks keep
/// working while the process exits, after the thread-local destructors ran
/// (the program's own late calls, the last calibration).
#[repr(C)]
struct Shadow {
    depth: u64,
    skipped: u64,
    /// Calls by dense function number, `len` of them: memory of the
    /// thread's own, given back by [`CountsRelease`] when the thread ends
    /// (the C hooks count there too).
    counts: *mut Count,
    len: u64,
    /// The thread's number, once it has counts ([`NO_THREAD`] if it could
    /// not have one then).
    thread: u64,
    /// The value of `skipped` that ends the current block of calls that
    /// record nothing ([`pxl_hook_block`]).
    mark: u64,
    /// Non-zero while the hooks do their not-recording work twice.
    twice: u64,
    /// Set when the thread records a synchronization ([`synchronized`]).
    dirty: u64,
    bits: [u64; MAX_DEPTH / 64],
}

extern "C" {
    /// The calling thread's shadow.
    fn pxl_shadow() -> *mut Shadow;
}

/// `Shadow::thread` of a thread without a location.
const NO_THREAD: u64 = u64::MAX;

/// A thread's calls of one function (`struct pxl_count`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Count {
    /// Calls while the function was measured (for throttling; wraps).
    calls: u32,
    /// Counted by the hooks' second copy of their work while it is timed
    /// ([`crate::skip_cost`]); never read.
    decoy: u32,
    /// Time of the first, ns.
    first_ns: u64,
    /// Calls in all, recorded or not.
    all: u64,
    /// Calls recorded.
    recorded: u64,
}

/// Says how often the thread called each function it did not always
/// record, and gives its counts back, when it ends (registered with the
/// first count).
struct CountsRelease;

impl Drop for CountsRelease {
    fn drop(&mut self) {
        let mut counted = COUNTED.lock().unwrap_or_else(|e| e.into_inner());
        // Safety: only this thread changes its shadow, and no hook is
        // running on it while its thread-locals are destroyed; the lock
        // keeps the process's end from reading it meanwhile.
        let s = unsafe { &mut *pxl_shadow() };
        if let Some(i) = counted.iter().position(|&p| p == s as *mut Shadow as usize) {
            counted.swap_remove(i);
            say_counts(s);
        }
        crate::skip_cost::say();
        let counts = std::mem::replace(&mut s.counts, std::ptr::null_mut());
        free_counts(counts, std::mem::take(&mut s.len) as usize);
    }
}

/// The shadows of the threads that have counts, by address: those of the
/// threads still running when the process ends (a pool's workers) are
/// said then ([`say_running_threads`]). Locked while a thread grows or
/// gives back its counts.
static COUNTED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Writes how often the thread of shadow `s` called each function it did
/// not always record.
fn say_counts(s: &Shadow) {
    if s.counts.is_null() || s.thread == NO_THREAD {
        return;
    }
    // Volatile: the thread may still be counting (at the process's end).
    let read = |p: *const u64| unsafe { std::ptr::read_volatile(p) };
    let _ = parallax::contained(|| {
        let not_all: Vec<(u32, u64)> = {
            let funcs = FUNCS.lock().unwrap_or_else(|e| e.into_inner());
            (0..s.len as usize)
                .zip(funcs.iter())
                .filter_map(|(i, f)| {
                    // Safety: `i` is within the thread's counts, which
                    // stay while COUNTED is locked.
                    let c = unsafe { s.counts.add(i) };
                    let (all, recorded) = unsafe {
                        (
                            read(std::ptr::addr_of!((*c).all)),
                            read(std::ptr::addr_of!((*c).recorded)),
                        )
                    };
                    (all != recorded && f.region != 0).then_some((f.region, all))
                })
                .collect()
        };
        parallax::events::calls(s.thread as u32, &not_all);
    });
}

/// At the process's end, before the runtime's own end: the counts of the
/// threads still running.
extern "C" fn say_running_threads() {
    let _ = parallax::contained(|| {
        crate::skip_cost::say();
        let mut counted = COUNTED.lock().unwrap_or_else(|e| e.into_inner());
        for p in counted.drain(..) {
            // Safety: a registered shadow, whose thread has not ended (it
            // would have unregistered it).
            say_counts(unsafe { &*(p as *const Shadow) });
        }
    });
}

/// Frees counts made by [`Shadow::grow`].
fn free_counts(p: *mut Count, len: usize) {
    if !p.is_null() {
        // Safety: `p` and `len` came from a leaked boxed slice.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len)) });
    }
}

thread_local! {
    static RELEASE: CountsRelease = const { CountsRelease };
    /// Set while this thread registers a function (a hook called from a
    /// signal handler then does not wait for itself).
    static REGISTERING: Cell<bool> = const { Cell::new(false) };
}

/// Function entry, from the C hook when the call may be recorded: `val` is
/// the function's slot value (0: not looked up, or not in the table).
#[no_mangle]
extern "C" fn pxl_hook_enter(f: usize, val: u64) {
    parallax::contained(|| {
        let st = STATE.load(Relaxed);
        if st != LIVE && (st == DEAD || !go_live()) {
            return;
        }
        let mut val = if val == 0 { lookup(f) } else { val };
        if val == 0 {
            val = register(f);
        }
        // Safety: the C hooks' thread-local, valid for the thread's life.
        let s = unsafe { pxl_shadow() };
        // Safety: only this thread touches its shadow. No reference to it
        // is held across the runtime's calls, which may start measuring
        // and calibrate, and so run these hooks again on this thread.
        let (d, wanted) = unsafe {
            let s = &mut *s;
            let d = s.depth as usize;
            s.depth += 1;
            let wanted = d < MAX_DEPTH && val & (SKIP | THROTTLED) == 0 && val != 0 && s.count(val);
            (d, wanted)
        };
        let rec = wanted && {
            // Safety: as above.
            flush_skipped(unsafe { &mut *s });
            if val & CALIBRATION != 0 {
                parallax::calibrate::c_enter(val as u32) != 0
            } else {
                parallax::enter(val as u32)
            }
        };
        // Safety: as above.
        let s = unsafe { &mut *s };
        if d < MAX_DEPTH {
            let (w, b) = (d / 64, 1u64 << (d % 64));
            if rec {
                s.bits[w] |= b;
            } else {
                s.bits[w] &= !b;
            }
        }
        if !rec {
            s.skipped += 1;
        }
        s.locate(val);
        if let Some(c) = s.function(val) {
            c.all += 1;
            c.recorded += rec as u64;
        }
    });
}

/// A call that records nothing of a function beyond the thread's counts,
/// from the C hook: counted once there is room.
#[no_mangle]
extern "C" fn pxl_hook_count_far(val: u64) {
    parallax::contained(|| {
        // Safety: as in the entry hook.
        let s = unsafe { &mut *pxl_shadow() };
        let i = ((val >> 32) & 0xffff) as usize;
        if s.grow(i) {
            s.locate(val);
            if let Some(c) = s.function(val) {
                c.all += 1;
            }
        }
    });
}

/// The end of a block of calls that recorded nothing, from the C hook
/// ([`crate::skip_cost`]).
#[no_mangle]
extern "C" fn pxl_hook_block() {
    parallax::contained(|| {
        // Safety: as in the entry hook.
        let s = unsafe { &mut *pxl_shadow() };
        let dirty = std::mem::take(&mut s.dirty) != 0;
        crate::skip_cost::block_end(s.skipped, dirty, &mut s.mark, &mut s.twice);
    });
}

/// The calling thread records a synchronization (a message, a lock, a
/// collective, a thread's start or end), where it may wait: the current
/// block of calls that record nothing is not timed ([`crate::skip_cost`]).
pub(crate) fn synchronized() {
    // Safety: the C hooks' thread-local; only this thread writes it.
    unsafe { (*pxl_shadow()).dirty = 1 };
}

/// Function exit, from the C hook when the frame's entry was recorded
/// (the hook has popped it).
#[no_mangle]
extern "C" fn pxl_hook_exit() {
    parallax::contained(|| {
        // Safety: as in the entry hook.
        flush_skipped(unsafe { &mut *pxl_shadow() });
        parallax::leave();
    });
}

/// Records the calls counted in `s.skipped`, if any, and forgets them
/// once recorded (while recording is off they wait for the next recorded
/// call); the current block's end moves with them.
#[inline(always)]
fn flush_skipped(s: &mut Shadow) {
    if s.skipped != 0 {
        let n = std::mem::take(&mut s.skipped);
        if parallax::events::skipped(n) {
            s.mark = s.mark.saturating_sub(n);
        } else {
            s.skipped += n;
        }
    }
}

impl Shadow {
    /// Learns the thread's number for its counts, at a call of the
    /// program's (not calibration's, whose calls run on a scratch state):
    /// a thread that calls measured functions is a location, even if none
    /// of its calls records anything.
    fn locate(&mut self, val: u64) {
        if self.thread == NO_THREAD && self.len > 0 && val & CALIBRATION == 0 {
            self.thread = parallax::events::thread_number().map_or(NO_THREAD, u64::from);
        }
    }

    /// The counts of the function of slot value `val`, if the thread has
    /// them.
    fn function(&mut self, val: u64) -> Option<&mut Count> {
        let i = (val >> 32) & 0xffff;
        // Safety: `i` is within the thread's counts.
        (val != 0 && i < self.len).then(|| unsafe { &mut *self.counts.add(i as usize) })
    }

    /// Counts a call of a measured function; false if the function was
    /// just throttled.
    #[inline(always)]
    fn count(&mut self, val: u64) -> bool {
        let i = ((val >> 32) & 0xffff) as usize;
        if i >= self.len as usize && !self.grow(i) {
            return true;
        }
        // Safety: `i` is within the thread's counts.
        let c = unsafe { &mut (*self.counts.add(i)).calls };
        *c = c.wrapping_add(1);
        let c = *c;
        if c.is_power_of_two() {
            return self.check(i, c, val);
        }
        true
    }

    /// Makes room for the counts of function `i`; false if it cannot now
    /// (once the thread's destructors ran, as the process exits; without
    /// memory; while the process's end reads the counts): the call is then
    /// not counted.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) -> bool {
        if RELEASE.try_with(|_| ()).is_err() {
            return false;
        }
        // Another thread holds the lock for a moment; this one, if it
        // holds it (a hook in a signal handler), forever.
        let Some(mut counted) = parallax::failsafe::lock_briefly(&COUNTED, 10_000) else {
            return false;
        };
        let n = (i + 1).max(FUNCTIONS.load(Relaxed) as usize);
        let mut v: Vec<Count> = Vec::new();
        if v.try_reserve_exact(n).is_err() {
            return false;
        }
        if !self.counts.is_null() {
            // Safety: the old counts, `len` of them.
            v.extend_from_slice(unsafe {
                std::slice::from_raw_parts(self.counts, self.len as usize)
            });
        }
        v.resize(n, Count::default());
        if self.len == 0 {
            if counted.try_reserve(1).is_err() {
                return false;
            }
            counted.push(self as *mut Shadow as usize);
            self.thread = NO_THREAD;
        }
        free_counts(self.counts, self.len as usize);
        self.len = n as u64;
        self.counts = Box::into_raw(v.into_boxed_slice()).cast();
        true
    }

    #[cold]
    #[inline(never)]
    fn check(&mut self, i: usize, calls: u32, val: u64) -> bool {
        if val & CALIBRATION != 0 {
            return true;
        }
        let now = parallax::clock::mono_ns();
        if calls == 1 {
            // Safety: `i` is within the thread's counts (see `count`).
            unsafe { (*self.counts.add(i)).first_ns = now };
            return true;
        }
        let s = settings::get();
        if s.throttle_calls == 0 || calls < s.throttle_calls {
            return true;
        }
        // Safety: as above.
        let first = unsafe { (*self.counts.add(i)).first_ns };
        let per_call = now.saturating_sub(first) / calls as u64;
        if per_call >= s.throttle_ns {
            return true;
        }
        throttle(val, i, calls, per_call);
        false
    }
}

#[cold]
#[inline(never)]
fn throttle(val: u64, i: usize, calls: u32, per_call_ns: u64) {
    let f = (0..SLOTS).find_map(|k| {
        let s = &TABLE[k];
        (s.val.load(Relaxed) & !(THROTTLED | SKIP) == val & !(THROTTLED | SKIP)).then_some(s)
    });
    let Some(slot) = f else { return };
    if slot.val.fetch_or(THROTTLED, AcqRel) & THROTTLED != 0 {
        return;
    }
    let name = FUNCS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(i)
        .map(|f| f.name.clone())
        .unwrap_or_default();
    parallax::define(Def::Property {
        key: "throttled".into(),
        value: format!(
            "{name}: {calls} calls on one thread at under {:.2} us each",
            per_call_ns as f64 / 1000.0
        ),
    });
}

#[cold]
#[inline(never)]
fn go_live() -> bool {
    let live = !crate::dead() && parallax::mode() != parallax::Mode::Off;
    let _ = STATE.compare_exchange(UNKNOWN, if live { LIVE } else { DEAD }, AcqRel, Acquire);
    STATE.load(Acquire) == LIVE
}

/// Registers function `f`: its slot value, or 0 if it cannot be recorded
/// now (not measuring, or registering already on this thread).
#[cold]
#[inline(never)]
fn register(f: usize) -> u64 {
    // While recording is off (MPI_Pcontrol, flow off) a new function is not
    // registered: its calls are not recorded, and asking again is cheap.
    if parallax::mode() == parallax::Mode::Off {
        return 0;
    }
    if REGISTERING.with(|r| r.replace(true)) {
        return 0;
    }
    let v = register_locked(f);
    REGISTERING.with(|r| r.set(false));
    v
}

fn register_locked(f: usize) -> u64 {
    let _g = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    let v = lookup(f);
    if v != 0 {
        return v;
    }
    let n = FUNCTIONS.load(Relaxed);
    if n >= MAX_FUNCTIONS {
        if n == MAX_FUNCTIONS {
            FUNCTIONS.store(n + 1, Relaxed);
            parallax::define(Def::Property {
                key: "functions_not_measured".into(),
                value: format!("more than {MAX_FUNCTIONS} instrumented functions"),
            });
        }
        return SKIP;
    }
    let names = crate::symbols::name_of(f);
    let (pretty, symbol) = match names {
        Some(n) => (n.pretty, n.symbol),
        None => (format!("{f:#x}"), String::new()),
    };
    let mut val = (n as u64) << 32;
    if !settings::get().filter.wants(&pretty, &symbol) {
        val |= SKIP;
    } else {
        let id = parallax::register_region(&pretty, RegionKind::Function, "", 0);
        if id == 0 {
            return 0;
        }
        parallax::define(Def::CodeAddress {
            region: id,
            addr: f as u64,
        });
        parallax::define(Def::Entry {
            region: id,
            entry: parallax_model::defs::Entry::Hook,
        });
        val |= id as u64;
        // After the runtime's own (it registered at its start, which the
        // region's registration made sure of), so it runs first.
        static AT_EXIT: std::sync::Once = std::sync::Once::new();
        // Safety: registering a plain extern "C" function.
        AT_EXIT.call_once(|| unsafe {
            libc::atexit(say_running_threads);
        });
    }
    insert(f, val, pretty);
    val
}

/// Enters function `f` in the table with slot value `val` (whose dense
/// function number is the next one) and its name. Under [`REGISTER`].
fn insert(f: usize, val: u64, name: String) {
    let region = if val & (SKIP | CALIBRATION) != 0 {
        0
    } else {
        val as u32
    };
    FUNCS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Func { name, region });
    FUNCTIONS.fetch_add(1, Relaxed);
    let mut i = home(f);
    while TABLE[i].key.load(Relaxed) != 0 {
        i = (i + 1) & (SLOTS - 1);
    }
    TABLE[i].val.store(val, Relaxed);
    TABLE[i].key.store(f, Release);
}

extern "C" {
    fn pxl_cal_plain(x: u32) -> u32;
    fn pxl_cal_recorded(x: u32) -> u32;
    fn pxl_cal_skipped(x: u32) -> u32;
}

extern "C" fn cal_plain(x: u32) -> u32 {
    // Safety: a C function of shim/calibrate.c, callable with any value.
    unsafe { pxl_cal_plain(x) }
}

extern "C" fn cal_recorded(x: u32) -> u32 {
    // Safety: as above.
    unsafe { pxl_cal_recorded(x) }
}

extern "C" fn cal_skipped(x: u32) -> u32 {
    // Safety: as above.
    unsafe { pxl_cal_skipped(x) }
}

fn hooks_ready() -> bool {
    STATE.load(Relaxed) == LIVE
}

/// Sets the thread's count of calls that recorded nothing to `n` and
/// returns what it was: calibration's calls, counted from 0, stay out of
/// it. Their blocks are not timed ([`crate::skip_cost::pause`]).
fn swap_skipped(n: u64) -> u64 {
    // Safety: only this thread touches its shadow; nothing holds it
    // between calls of the hooks.
    let s = unsafe { &mut *pxl_shadow() };
    crate::skip_cost::pause(&mut s.mark, &mut s.twice);
    std::mem::replace(&mut s.skipped, n)
}

/// The instrumented functions that calibration times, entered in the table
/// as functions the hooks know: one recorded under calibration's flags
/// (into the calibration's scratch region, never throttled), one that
/// records nothing. Also makes the hooks live: this process is measured,
/// and the first measurement's calibration runs them before the process's
/// measurement is up.
pub(crate) fn calibration_hooks() -> parallax::calibrate::HookEntry {
    let _g = REGISTER.lock().unwrap_or_else(|e| e.into_inner());
    let recorded = pxl_cal_recorded as *const () as usize;
    if lookup(recorded) == 0 {
        // The region of the calibration's scratch records.
        let calibration_region = 1;
        for (f, flags) in [
            (recorded, CALIBRATION | calibration_region),
            (
                pxl_cal_skipped as *const () as usize,
                CALIBRATION | THROTTLED,
            ),
        ] {
            let n = FUNCTIONS.load(Relaxed) as u64;
            insert(f, flags | (n << 32), "(calibration)".into());
        }
    }
    let _ = STATE.compare_exchange(UNKNOWN, LIVE, AcqRel, Acquire);
    parallax::calibrate::HookEntry {
        plain: cal_plain,
        recorded: cal_recorded,
        skipped: cal_skipped,
        ready: hooks_ready,
        swap_skipped,
    }
}
