//! The GASP 1.5 tool side: contexts, measurement control, user events, and
//! the mapping of GASP events to regions and generic events.
//!
//! `shim/gasp.c` takes the variadic arguments apart; here each event tag
//! becomes a region of its generic operation type, entered at `GASP_START`
//! and left at `GASP_END`, with the events that pair operations across
//! threads (barrier collectives, lock request/acquired/release, one-sided
//! puts and gets with their sizes, reductions' bytes). `GASP_ATOMIC`
//! events are marks. The tag numbers are those of `include/gasp_c.h` and
//! `include/gasp_upc.h`.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::Mutex;

use parallax::events::{self, CollectiveOp, NO_ROOT};
use parallax::RegionKind;
use parallax_model::event::EventKind;

/// A thread's context, one per `gasp_init` call.
struct Context {
    model: c_int,
    on: bool,
    /// Whether each open START was recorded (so that END pairs with it).
    open: Vec<bool>,
}

/// The arguments of an event, as `shim/gasp.c` decoded them.
#[repr(C)]
pub struct Args {
    a: [u64; 8],
    n: c_uint,
    text: *const c_char,
}

/// User events: (name, description), tag = `USEREVT_START` + index.
static USER: Mutex<Vec<(String, Option<CString>)>> = Mutex::new(Vec::new());

const USEREVT_START: c_uint = 0x10000;
const USEREVT_END: c_uint = 0x1ffff;
const START: c_int = 0;
const END: c_int = 1;

/// See `shim/gasp.c`.
#[no_mangle]
pub extern "C" fn parallax_pl_gasp_init(model: c_int) -> *mut c_void {
    parallax::contained(|| {
        Box::into_raw(Box::new(Context {
            model,
            on: true,
            open: Vec::new(),
        })) as *mut c_void
    })
    .unwrap_or(std::ptr::null_mut())
}

/// See `shim/gasp.c`.
///
/// # Safety
/// `ctx` comes from `parallax_pl_gasp_init`.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_gasp_control(ctx: *mut c_void, on: c_int) -> c_int {
    parallax::contained(|| {
        // Safety: per the contract; a context belongs to one thread.
        let c = unsafe { &mut *(ctx as *mut Context) };
        std::mem::replace(&mut c.on, on != 0) as c_int
    })
    .unwrap_or(0)
}

/// See `shim/gasp.c`.
///
/// # Safety
/// `name` and `desc` are null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_gasp_create_event(
    _ctx: *mut c_void,
    name: *const c_char,
    desc: *const c_char,
) -> c_uint {
    parallax::contained(|| {
        let name = cstr(name).unwrap_or_else(|| "user event".into());
        let desc = (!desc.is_null()).then(|| {
            // Safety: a NUL-terminated string from the caller.
            unsafe { CStr::from_ptr(desc) }.to_owned()
        });
        let mut u = USER.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = u.iter().position(|(n, d)| *n == name && *d == desc) {
            return USEREVT_START + i as c_uint;
        }
        if u.len() as c_uint > USEREVT_END - USEREVT_START {
            return USEREVT_END;
        }
        u.push((name, desc));
        USEREVT_START + (u.len() - 1) as c_uint
    })
    .unwrap_or(0)
}

/// See `shim/gasp.c`. The pointer stays valid for the life of the process.
#[no_mangle]
pub extern "C" fn parallax_pl_gasp_event_desc(_ctx: *mut c_void, tag: c_uint) -> *const c_char {
    parallax::contained(|| {
        let u = USER.lock().unwrap_or_else(|e| e.into_inner());
        match tag
            .checked_sub(USEREVT_START)
            .and_then(|i| u.get(i as usize))
        {
            // The CString's buffer does not move when the vector grows.
            Some((_, Some(d))) => d.as_ptr(),
            _ => std::ptr::null(),
        }
    })
    .unwrap_or(std::ptr::null())
}

fn cstr(p: *const c_char) -> Option<String> {
    // Safety: NUL-terminated strings from the GASP runtime (or null).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// What a tag is: region name, kind.
fn describe(tag: c_uint, text: Option<&str>) -> (String, RegionKind) {
    use RegionKind::*;
    let (name, kind) = match tag {
        0x100 => return (text.unwrap_or("<C function>").to_string(), Function),
        0x101 => ("malloc", Function),
        0x102 => ("realloc", Function),
        0x103 => ("free", Function),
        0x200 | 0x201 => ("upc_global_exit", Setup),
        0x210 => ("upc_notify", Barrier),
        0x211 => ("upc_wait", Barrier),
        0x212 => ("upc_barrier", Barrier),
        0x213 => ("upc_fence", RmaSync),
        0x220 => ("upc_forall", Loop),
        0x230 => ("upc_global_alloc", Function),
        0x231 => ("upc_all_alloc", Collective),
        0x232 => ("upc_alloc", Function),
        0x233 => ("upc_free", Function),
        0x234 => ("upc_global_lock_alloc", Function),
        0x235 => ("upc_all_lock_alloc", Collective),
        0x236 => ("upc_lock_free", Function),
        0x237 => ("upc_lock", Lock),
        0x238 => ("upc_lock_attempt", Lock),
        0x239 => ("upc_unlock", Unlock),
        0x23a => ("upc_memcpy", Put),
        0x23b => ("upc_memget", Get),
        0x23c => ("upc_memput", Put),
        0x23d => ("upc_memset", Put),
        0x240 => ("shared read", Get),
        0x241 => ("shared write", Put),
        0x250 => ("shared read (non-blocking)", Get),
        0x252 => ("shared write (non-blocking)", Put),
        0x254 => ("upc_sync_nb", RmaSync),
        0x270 => ("upc_all_broadcast", Collective),
        0x271 => ("upc_all_scatter", Collective),
        0x272 => ("upc_all_gather", Collective),
        0x273 => ("upc_all_gather_all", Collective),
        0x274 => ("upc_all_exchange", Collective),
        0x275 => ("upc_all_permute", Collective),
        0x276 => ("upc_all_reduce", Collective),
        0x277 => ("upc_all_prefix_reduce", Collective),
        t if (USEREVT_START..=USEREVT_END).contains(&t) => {
            let u = USER.lock().unwrap_or_else(|e| e.into_inner());
            let name = u
                .get((t - USEREVT_START) as usize)
                .map(|(n, _)| n.clone())
                .unwrap_or_else(|| format!("user event {t:#x}"));
            return (name, User);
        }
        t => return (format!("GASP event {t:#x}"), User),
    };
    (name.to_string(), kind)
}

/// Bytes of one element of a UPC reduction type.
fn reduction_size(t: u64) -> u64 {
    [1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 16]
        .get(t as usize)
        .copied()
        .unwrap_or(1)
}

/// The generic events of tag `tag` at START (`end` false) or END.
fn events_of(tag: c_uint, end: bool, a: &[u64]) -> Vec<EventKind> {
    use EventKind::*;
    let arg = |i: usize| a.get(i).copied().unwrap_or(0);
    let barrier = CollectiveEnd {
        op: CollectiveOp::Barrier,
        comm: 0,
        root: NO_ROOT,
        sent: 0,
        received: 0,
    };
    let coll = |op, bytes| CollectiveEnd {
        op,
        comm: 0,
        root: NO_ROOT,
        sent: bytes,
        received: bytes,
    };
    let unknown = u32::MAX;
    match (tag, end) {
        (0x212, false) | (0x210, false) => vec![CollectiveBegin],
        (0x212, true) | (0x211, true) => vec![barrier],
        (0x213, true) => vec![RmaComplete { target: unknown }],
        (0x231 | 0x235, false) => vec![CollectiveBegin],
        (0x231 | 0x235, true) => vec![coll(CollectiveOp::Other, 0)],
        (0x237, false) => vec![LockRequest { lock: arg(0) }],
        (0x237, true) => vec![LockAcquired { lock: arg(0) }],
        (0x238, true) if arg(1) != 0 => {
            vec![LockRequest { lock: arg(0) }, LockAcquired { lock: arg(0) }]
        }
        (0x239, false) => vec![LockRelease { lock: arg(0) }],
        // memcpy, memput, memset: the destination is shared.
        (0x23a | 0x23c | 0x23d, true) => vec![Put {
            target: unknown,
            bytes: arg(2),
            addr: arg(0),
        }],
        (0x23b, true) => vec![Get {
            target: unknown,
            bytes: arg(2),
            addr: arg(1),
        }],
        (0x240 | 0x250, true) => vec![Get {
            target: unknown,
            bytes: arg(3),
            addr: arg(2),
        }],
        (0x241 | 0x252, true) => vec![Put {
            target: unknown,
            bytes: arg(3),
            addr: arg(1),
        }],
        (0x254, true) => vec![RmaComplete { target: unknown }],
        (0x270..=0x277, false) => vec![CollectiveBegin],
        (0x270, true) => vec![coll(CollectiveOp::Broadcast, arg(2))],
        (0x271, true) => vec![coll(CollectiveOp::Scatter, arg(2))],
        (0x272, true) => vec![coll(CollectiveOp::Gather, arg(2))],
        (0x273, true) => vec![coll(CollectiveOp::Allgather, arg(2))],
        (0x274, true) => vec![coll(CollectiveOp::Alltoall, arg(2))],
        (0x275, true) => vec![coll(CollectiveOp::Other, arg(3))],
        (0x276, true) => vec![coll(CollectiveOp::Reduce, arg(3) * reduction_size(arg(7)))],
        (0x277, true) => vec![coll(CollectiveOp::Scan, arg(3) * reduction_size(arg(7)))],
        _ => Vec::new(),
    }
}

/// A mark's value: the first integer in the event's text, else its first
/// argument.
fn mark_value(text: Option<&str>, a: &[u64]) -> i64 {
    if let Some(t) = text {
        let digits: String = t
            .trim_start_matches(|c: char| !(c.is_ascii_digit() || c == '-'))
            .chars()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .map(|(_, c)| c)
            .collect();
        if let Ok(v) = digits.parse() {
            return v;
        }
    }
    a.first().map_or(0, |&v| v as i64)
}

/// See `shim/gasp.c`.
///
/// # Safety
/// `ctx` comes from `parallax_pl_gasp_init`; `args` is valid; `file` is
/// null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_gasp_event(
    ctx: *mut c_void,
    tag: c_uint,
    ty: c_int,
    file: *const c_char,
    line: c_int,
    _col: c_int,
    args: *const Args,
) {
    parallax::contained(|| {
        // Safety: per the contract.
        let (c, args) = unsafe { (&mut *(ctx as *mut Context), &*args) };
        let _ = c.model;
        let text = cstr(args.text);
        let a = &args.a[..(args.n as usize).min(8)];
        // Non-blocking operations that completed at once: nothing to record.
        if matches!(tag, 0x251 | 0x253) || (tag == 0x254 && a.first() == Some(&0)) {
            return;
        }
        match ty {
            START => {
                let rec = c.on && crate::capi::active() && {
                    let (name, kind) = describe(tag, text.as_deref());
                    let file = cstr(file).unwrap_or_default();
                    let id = crate::capi::region(&name, kind, &file, line.max(0) as u32);
                    parallax::enter(id)
                };
                c.open.push(rec);
                if rec {
                    for e in events_of(tag, false, a) {
                        events::record(e);
                    }
                }
            }
            END => {
                if c.open.pop() == Some(true) {
                    for e in events_of(tag, true, a) {
                        events::record(e);
                    }
                    parallax::leave();
                }
            }
            _ => {
                if !c.on || !crate::capi::active() {
                    return;
                }
                let (name, _) = describe(tag, text.as_deref());
                let file = cstr(file).unwrap_or_default();
                let id = crate::capi::region(&name, RegionKind::Mark, &file, line.max(0) as u32);
                if id != 0 {
                    events::mark(id, mark_value(text.as_deref(), a));
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_values_come_from_the_text() {
        assert_eq!(mark_value(Some("iteration 42 of 50"), &[]), 42);
        assert_eq!(mark_value(Some("delta -7"), &[]), -7);
        assert_eq!(mark_value(Some("none"), &[9]), 9);
        assert_eq!(mark_value(None, &[]), 0);
    }

    #[test]
    fn reductions_count_bytes_by_type() {
        let e = events_of(0x276, true, &[0, 0, 0, 10, 1, 0, 0, 9]);
        assert_eq!(
            e,
            vec![EventKind::CollectiveEnd {
                op: CollectiveOp::Reduce,
                comm: 0,
                root: NO_ROOT,
                sent: 80,
                received: 80
            }]
        );
    }
}
