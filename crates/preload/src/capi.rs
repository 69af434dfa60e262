//! The Rust entry points that the C wrappers record through (declared in
//! `shim/pxl.h`). The names carry a long prefix so that no program symbol
//! can interpose on them.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::Mutex;

use parallax::events::{self, CollectiveOp};
use parallax::{Def, Mode, RegionKind};
use parallax_model::defs::Entry;
use parallax_model::event::EventKind;

/// # Safety
/// `p` is null or NUL-terminated.
pub(crate) unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // Safety: per the contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Whether this process records now (starting measurement on first use).
pub(crate) fn active() -> bool {
    !crate::dead() && parallax::mode() != Mode::Off
}

static REGIONS: Mutex<BTreeMap<(String, u8), u32>> = Mutex::new(BTreeMap::new());

/// The id of region `name` of kind `kind`, registered once per process.
pub(crate) fn region(name: &str, kind: RegionKind, file: &str, line: u32) -> u32 {
    if !active() {
        return 0;
    }
    let mut m = REGIONS.lock().unwrap_or_else(|e| e.into_inner());
    let key = (name.to_string(), kind as u8);
    if let Some(&id) = m.get(&key) {
        return id;
    }
    let id = parallax::register_region(name, kind, file, line);
    if id != 0 {
        m.insert(key, id);
    }
    id
}

/// See `shim/pxl.h`.
///
/// # Safety
/// `name` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_region(name: *const c_char, kind: c_int) -> u32 {
    parallax::contained(|| {
        // Safety: per the contract.
        unsafe { c_region(name, kind, Entry::C) }
    })
    .unwrap_or(0)
}

/// The public API's region (`include/parallax.h`): as [`parallax_pl_region`],
/// with the source file and line of its site.
///
/// # Safety
/// `name` and `file` are null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_region_at(
    name: *const c_char,
    kind: c_int,
    file: *const c_char,
    line: u32,
) -> u32 {
    // Safety: per the contract.
    unsafe { c_region_at(name, kind, Entry::C, &text(file), line) }
}

/// A region named and kinded by a C caller, entered through `entry`: its
/// probes cost what that entry point's probes cost.
///
/// # Safety
/// `name` is null or NUL-terminated.
unsafe fn c_region(name: *const c_char, kind: c_int, entry: Entry) -> u32 {
    // Safety: per the contract.
    unsafe { c_region_at(name, kind, entry, "", 0) }
}

/// [`c_region`] at a place in the source.
///
/// # Safety
/// `name` is null or NUL-terminated.
unsafe fn c_region_at(
    name: *const c_char,
    kind: c_int,
    entry: Entry,
    file: &str,
    line: u32,
) -> u32 {
    let Some(kind) = u8::try_from(kind).ok().and_then(RegionKind::from_u8) else {
        return 0;
    };
    if !active() {
        return 0;
    }
    // Safety: per the contract.
    let id = region(&unsafe { text(name) }, kind, file, line);
    if id != 0 {
        parallax::define(Def::Entry { region: id, entry });
    }
    id
}

/// See `shim/pxl.h`: 0 if not recorded, 1 if recorded in the profile
/// only, 3 if traced too (events are worth recording).
#[no_mangle]
pub extern "C" fn parallax_pl_enter(id: u32) -> c_int {
    parallax::contained(|| parallax::enter_for_c(id)).unwrap_or(0)
}

/// `parallax_pl_enter` under the calibration's flags, for the runtime's
/// calibration of the C entry points (registered at load).
extern "C" fn calibration_enter(id: u32) -> c_int {
    parallax::contained(|| parallax::calibrate::c_enter(id)).unwrap_or(0)
}

/// The C entry points, as calibration times them.
pub(crate) fn calibration_entry() -> parallax::calibrate::CEntry {
    parallax::calibrate::CEntry {
        enter: calibration_enter,
        leave: parallax_pl_leave,
        enter_preserving: parallax_calibration_enter_preserving,
        leave_preserving: parallax_pl_leave_preserving,
        hooks: Some(crate::cyg::calibration_hooks()),
    }
}

// The register-preserving C entry points (see `shim/pxl.h`): trampolines
// that keep every register but eax around these bodies.
extern "C" fn enter_preserving_body(id: u32) -> u32 {
    parallax::contained(|| parallax::enter_for_c(id) as u32).unwrap_or(0)
}

extern "C" fn calibration_enter_preserving_body(id: u32) -> u32 {
    parallax::contained(|| parallax::calibrate::c_enter(id) as u32).unwrap_or(0)
}

extern "C" fn leave_preserving_body() {
    parallax::contained(|| {
        parallax::leave();
    });
}

parallax::preserving_trampoline!(
    #[no_mangle]
    parallax_pl_enter_preserving,
    enter_preserving_body
);
parallax::preserving_trampoline!(
    #[no_mangle]
    parallax_pl_leave_preserving,
    leave_preserving_body
);
parallax::preserving_trampoline!(
    parallax_calibration_enter_preserving,
    calibration_enter_preserving_body
);

/// See `shim/pxl.h`: a region whose probes preserve the caller's registers.
///
/// # Safety
/// `name` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_region_preserving(name: *const c_char, kind: c_int) -> u32 {
    parallax::contained(|| {
        // Safety: per the contract.
        unsafe { c_region(name, kind, Entry::CPreserving) }
    })
    .unwrap_or(0)
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_leave() {
    parallax::contained(|| {
        parallax::leave();
    });
}

/// The event of extended code `code` (FORMAT.md) with fields `a..e`.
pub(crate) fn event(code: c_int, a: u64, b: u64, c: u64, d: u64, e: u64) -> Option<EventKind> {
    use EventKind::*;
    let (pa, tb) = (a as u32, b as u32);
    Some(match code {
        3 => Send {
            peer: pa,
            tag: tb,
            comm: c,
            bytes: d,
        },
        4 => Recv {
            peer: pa,
            tag: tb,
            comm: c,
            bytes: d,
        },
        5 => IsendBegin {
            peer: pa,
            tag: tb,
            comm: c,
            bytes: d,
            request: e,
        },
        6 => IsendComplete { request: a },
        7 => IrecvBegin { request: a },
        8 => IrecvComplete {
            peer: pa,
            tag: tb,
            comm: c,
            bytes: d,
            request: e,
        },
        9 => CollectiveBegin,
        10 => CollectiveEnd {
            op: CollectiveOp::from_u8(a as u8).unwrap_or(CollectiveOp::Other),
            comm: b,
            root: c as u32,
            sent: d,
            received: e,
        },
        11 => LockRequest { lock: a },
        12 => LockAcquired { lock: a },
        13 => LockRelease { lock: a },
        14 => SemPost { sem: a },
        15 => SemAcquired { sem: a },
        16 => Advance { var: a, index: b },
        17 => AwaitDone { var: a, index: b },
        18 => ThreadCreate { token: a },
        19 => ThreadBegin { token: a },
        20 => ThreadEnd { token: a },
        21 => ThreadJoin { token: a },
        22 => Fork { team: a, size: tb },
        23 => Join { team: a },
        24 => Put {
            target: pa,
            bytes: b,
            addr: c,
        },
        25 => Get {
            target: pa,
            bytes: b,
            addr: c,
        },
        26 => Atomic {
            target: pa,
            bytes: b,
            addr: c,
        },
        27 => RmaComplete { target: pa },
        28 => ValueReached { addr: a },
        29 => Metric {
            metric: pa,
            value: b as i64,
        },
        30 => Mark {
            mark: pa,
            value: b as i64,
        },
        31 => Iteration {
            loop_id: a,
            index: b,
        },
        _ => return None,
    })
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_event(code: c_int, a: u64, b: u64, c: u64, d: u64, e: u64) {
    crate::cyg::synchronized();
    parallax::contained(|| {
        // The event's clock read stays after what the caller did before (a wait
        // that just ended) and before what it does next (a release to publish).
        parallax::clock::order();
        match event(code, a, b, c, d, e) {
            Some(EventKind::ThreadBegin { token }) => events::thread_begin(token),
            Some(k) => {
                events::record(k);
            }
            None => {}
        }
        parallax::clock::order();
    });
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_calibrate() {
    parallax::contained(|| {
        parallax::calibrate::now();
    });
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_event_prior(code: c_int, a: u64, b: u64, c: u64, d: u64, e: u64) {
    crate::cyg::synchronized();
    parallax::contained(|| {
        if let Some(k) = event(code, a, b, c, d, e) {
            events::record_prior(k);
        }
    });
}

/// See `shim/pxl.h`.
///
/// # Safety
/// `members` points to `n` values (or `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_group(id: u64, members: *const u32, n: usize) {
    parallax::contained(|| {
        if !active() {
            return;
        }
        let members = if n == 0 || members.is_null() {
            Vec::new()
        } else {
            // Safety: per the contract.
            unsafe { std::slice::from_raw_parts(members, n) }.to_vec()
        };
        parallax::define(Def::Group { id, members });
    });
}

/// See `shim/pxl.h`.
///
/// # Safety
/// `key` and `value` are null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_property(key: *const c_char, value: *const c_char) {
    parallax::contained(|| {
        if active() {
            // Safety: per the contract.
            let (key, value) = unsafe { (text(key), text(value)) };
            parallax::define(Def::Property { key, value });
        }
    });
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_clock_offset(
    reference: u32,
    local_ns: u64,
    offset_ns: i64,
    rtt_ns: u64,
) {
    parallax::contained(|| {
        if active() {
            parallax::define(Def::ClockOffset {
                reference,
                local_ns,
                offset_ns,
                rtt_ns,
            });
        }
    });
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_now_ns() -> u64 {
    parallax::clock::mono_ns()
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_finish() {
    parallax::contained(|| {
        parallax::finish();
    });
}

/// See `shim/pxl.h` and `shim/process.c`.
#[no_mangle]
pub extern "C" fn parallax_pl_image_ends() -> c_int {
    parallax::contained(|| !crate::dead() && parallax::end_of_image()).unwrap_or(false) as c_int
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_flow(on: c_int) {
    parallax::contained(|| {
        if !crate::dead() {
            parallax::set_flow(on != 0);
        }
    });
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_active() -> c_int {
    parallax::contained(|| active() as c_int).unwrap_or(0)
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_pthread_mode() -> c_int {
    parallax::contained(|| {
        if crate::dead() {
            return 0;
        }
        crate::settings::get().pthread as c_int
    })
    .unwrap_or(0)
}

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);
static THREADS: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());
/// By address: each initialized barrier's size and group id.
static BARRIERS: Mutex<BTreeMap<u64, (u32, u64)>> = Mutex::new(BTreeMap::new());

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_thread_token() -> u64 {
    parallax::contained(|| NEXT_TOKEN.fetch_add(1, Relaxed)).unwrap_or(0)
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_thread_created(tid: u64, token: u64) {
    parallax::contained(|| {
        THREADS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(tid, token);
    });
}

/// See `shim/pxl.h`.
#[no_mangle]
pub extern "C" fn parallax_pl_thread_joined(tid: u64) -> u64 {
    parallax::contained(|| {
        THREADS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&tid)
            .unwrap_or(0)
    })
    .unwrap_or(0)
}

/// See `shim/pxl.h`. A barrier initialized again at the same address is a
/// new group (see `parallax::sync::barrier_id`).
#[no_mangle]
pub extern "C" fn parallax_pl_barrier_init(barrier: u64, count: u32) {
    parallax::contained(|| {
        BARRIERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(barrier, (count, parallax::sync::barrier_id(barrier)));
    });
}

/// See `shim/pxl.h`.
///
/// # Safety
/// `count` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_barrier(barrier: u64, count: *mut u32) -> u64 {
    parallax::contained(|| {
        let (n, id) = BARRIERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&barrier)
            .copied()
            .unwrap_or((0, barrier));
        // Safety: as the caller promises.
        unsafe { *count = n };
        id
    })
    .unwrap_or(0)
}

/// Fields of one probe's calibration as [`parallax_pl_calibration_table`] writes
/// them: probe number, mean, standard deviation and least cost (ns), and
/// batches timed.
pub const CALIBRATION_FIELDS: usize = 5;

/// Times every probe path of this library in mode `mode` (1 profile, 2
/// trace, 3 both) over `batches` batches, with fenced clock reads if
/// `fenced`: the runtime's own probes, the C entry points and the compiler
/// hooks, as a program that this library measures pays them. Writes up to
/// `max` calibrations of [`CALIBRATION_FIELDS`] doubles each to `out` and
/// returns how many. For `parallax calibrate`, which loads this library
/// without measuring.
///
/// # Safety
/// `out` is valid for writes of `max * CALIBRATION_FIELDS` doubles.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_calibration_table(
    mode: c_int,
    batches: u32,
    fenced: c_int,
    out: *mut f64,
    max: u32,
) -> u32 {
    let mode = match mode {
        1 => Mode::Profile,
        2 => Mode::Trace,
        3 => Mode::Both,
        _ => return 0,
    };
    parallax::contained(|| {
        parallax::calibrate::use_clock(fenced != 0);
        parallax::calibrate::set_c_entry(calibration_entry());
        let mut cal = parallax::calibrate::measure(mode, batches as usize);
        cal.extend(parallax::calibrate::measure_hook_context(mode));
        let mut n = 0;
        for c in cal.iter().take(max as usize) {
            let fields = [
                c.probe as u8 as f64,
                c.mean_ns,
                c.sd_ns,
                c.min_ns,
                c.samples as f64,
            ];
            // Safety: per the contract, record n < max fits.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    fields.as_ptr(),
                    out.add(n * CALIBRATION_FIELDS),
                    CALIBRATION_FIELDS,
                )
            };
            n += 1;
        }
        n as u32
    })
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_to_its_event() {
        for code in 3..=31 {
            let k = event(code, 1, 2, 3, 4, 5).unwrap_or_else(|| panic!("code {code}"));
            // The model's encoder numbers the event by the same code.
            let mut enc = parallax_model::evcodec::EventEncoder::new(0);
            enc.push(&parallax_model::event::Event { time: 0, kind: k });
            let bytes = enc.take();
            assert_eq!(bytes[1] as c_int, code, "{k:?}");
        }
        assert!(event(32, 0, 0, 0, 0, 0).is_none());
        assert!(event(1, 0, 0, 0, 0, 0).is_none());
    }
}
