//! OTF2 import: an archive written by any OTF2 writer (Score-P, the
//! python3-otf2 writer, Parallax's own export) becomes a Parallax
//! experiment.
//!
//! - Location groups become processes: rank = the group's position among
//!   the location groups ordered by ref; locations become threads,
//!   numbered in ref order within their group.
//! - Timestamps stay OTF2 ticks; each process's clock is the archive's
//!   timer resolution (`Clock` and two `ClockSync` definitions spanning the
//!   trace), so times in ns match the archive's.
//! - Regions keep their names, files and lines; the kind comes from a
//!   `parallax:<kind>` description (Parallax's own archives), else from
//!   the OTF2 role, paradigm and name (`MPI_Send` is a send, ...).
//! - Events map one to one as in [`super::write`]; `ParameterInt` and
//!   `ParameterUnsignedInt` records of other parameters become marks, and
//!   records Parallax has no counterpart for (I/O, tasks, calling context,
//!   OpenMP legacy records) are not imported.
//! - Communicators become `Group` definitions of ranks (id = comm ref);
//!   metrics become `Metric` definitions (id = metric member ref).
//! - `--probe-cost-ns` is written as `Calibration` definitions (enter,
//!   leave and event probes) for compensation.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use parallax_model::defs::{ClockSource, Def, Mode, Probe, ProcessInfo};
use parallax_model::event::{CollectiveOp, Event, EventKind, NO_ROOT};
use parallax_model::experiment::{events_file, rank_dir, EventWriter, DEFS_FILE};
use parallax_model::file::{self, FileKind};
use parallax_model::region::RegionKind;

use super::ffi::{self as f, AttributeList, CallbackCode, LocationRef, TimeStamp};
use super::write::{ATTRIBUTES, EVENT_PARAMS};
use super::ImportOptions;
use crate::{Error, ErrorKind, Summary};

/// Region ids of marks (one per parameter) start here.
const MARK_BASE: u32 = 1 << 30;

#[derive(Default)]
struct Globals {
    strings: HashMap<u32, String>,
    clock: Option<(u64, u64, u64, u64)>,
    tree: HashMap<u32, (u32, u32)>,
    loc_groups: Vec<(u32, u32, u32)>,
    locations: Vec<(u64, u32, u8, u32)>,
    regions: Vec<(u32, u32, u32, u8, u8, u32, u32)>,
    groups: HashMap<u32, (u8, u8, Vec<u64>)>,
    comms: Vec<(u32, u32, u32)>,
    metric_members: HashMap<u32, (u32, u32, u8)>,
    metric_classes: HashMap<u32, Vec<u32>>,
    params: HashMap<u32, u32>,
    attrs: HashMap<u32, u32>,
}

impl Globals {
    fn s(&self, r: u32) -> String {
        self.strings.get(&r).cloned().unwrap_or_default()
    }
}

fn ud<'a, T>(p: *mut c_void) -> &'a mut T {
    // Safety: every callback gets back the pointer registered with it,
    // which points to a live T for the duration of the read.
    unsafe { &mut *(p as *mut T) }
}

extern "C" fn gd_string(d: *mut c_void, r: u32, s: *const c_char) -> CallbackCode {
    let s = if s.is_null() {
        String::new()
    } else {
        // Safety: OTF2 passes a NUL-terminated string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    };
    ud::<Globals>(d).strings.insert(r, s);
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_clock(d: *mut c_void, res: u64, off: u64, len: u64, rt: u64) -> CallbackCode {
    ud::<Globals>(d).clock = Some((res, off, len, rt));
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_tree(d: *mut c_void, r: u32, name: u32, _class: u32, parent: u32) -> CallbackCode {
    ud::<Globals>(d).tree.insert(r, (name, parent));
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_loc_group(
    d: *mut c_void,
    r: u32,
    name: u32,
    _t: u8,
    parent: u32,
    _c: u32,
) -> CallbackCode {
    ud::<Globals>(d).loc_groups.push((r, name, parent));
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_location(
    d: *mut c_void,
    r: u64,
    name: u32,
    t: u8,
    _n: u64,
    g: u32,
) -> CallbackCode {
    ud::<Globals>(d).locations.push((r, name, t, g));
    f::CALLBACK_SUCCESS
}
#[allow(clippy::too_many_arguments)]
extern "C" fn gd_region(
    d: *mut c_void,
    r: u32,
    name: u32,
    _canonical: u32,
    desc: u32,
    role: u8,
    paradigm: u8,
    _flags: u32,
    file: u32,
    line: u32,
    _end: u32,
) -> CallbackCode {
    ud::<Globals>(d)
        .regions
        .push((r, name, desc, role, paradigm, file, line));
    f::CALLBACK_SUCCESS
}
#[allow(clippy::too_many_arguments)]
extern "C" fn gd_group(
    d: *mut c_void,
    r: u32,
    _name: u32,
    t: u8,
    paradigm: u8,
    _flags: u32,
    n: u32,
    members: *const u64,
) -> CallbackCode {
    let m = if members.is_null() || n == 0 {
        Vec::new()
    } else {
        // Safety: OTF2 passes `n` members.
        unsafe { std::slice::from_raw_parts(members, n as usize) }.to_vec()
    };
    ud::<Globals>(d).groups.insert(r, (t, paradigm, m));
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_comm(d: *mut c_void, r: u32, name: u32, g: u32, _p: u32, _f: u32) -> CallbackCode {
    ud::<Globals>(d).comms.push((r, name, g));
    f::CALLBACK_SUCCESS
}
#[allow(clippy::too_many_arguments)]
extern "C" fn gd_metric_member(
    d: *mut c_void,
    r: u32,
    name: u32,
    _desc: u32,
    _t: u8,
    _mode: u8,
    value_type: u8,
    _base: u8,
    _exp: i64,
    unit: u32,
) -> CallbackCode {
    ud::<Globals>(d)
        .metric_members
        .insert(r, (name, unit, value_type));
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_metric_class(
    d: *mut c_void,
    r: u32,
    n: u8,
    m: *const u32,
    _o: u8,
    _k: u8,
) -> CallbackCode {
    let m = if m.is_null() || n == 0 {
        Vec::new()
    } else {
        // Safety: OTF2 passes `n` members.
        unsafe { std::slice::from_raw_parts(m, n as usize) }.to_vec()
    };
    ud::<Globals>(d).metric_classes.insert(r, m);
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_parameter(d: *mut c_void, r: u32, name: u32, _t: u8) -> CallbackCode {
    ud::<Globals>(d).params.insert(r, name);
    f::CALLBACK_SUCCESS
}
extern "C" fn gd_attribute(d: *mut c_void, r: u32, name: u32, _desc: u32, _t: u8) -> CallbackCode {
    ud::<Globals>(d).attrs.insert(r, name);
    f::CALLBACK_SUCCESS
}

/// What a parameter means to the import.
#[derive(Clone, Copy)]
enum Param {
    /// One of `EVENT_PARAMS`.
    Event(usize),
    /// A mark.
    Mark(u32),
}

/// The state of the location being read.
struct LocReader {
    w: Option<EventWriter>,
    error: Option<Error>,
    count: u64,
    last: u64,
    pending_flush_end: Option<u64>,
    attr_lock: Option<u32>,
    attr_team: Option<u32>,
    attr_addr: Option<u32>,
    attr_var: Option<u32>,
    attr_loop: Option<u32>,
    params: HashMap<u32, Param>,
    metric_classes: HashMap<u32, Vec<(u32, u8)>>,
    teams: Vec<u64>,
    next_team: u64,
}

impl LocReader {
    fn push(&mut self, t: u64, kind: EventKind) -> CallbackCode {
        if let Some(end) = self.pending_flush_end {
            if t >= end {
                self.pending_flush_end = None;
                self.emit(end, EventKind::FlushEnd);
            }
        }
        self.emit(t, kind)
    }

    fn emit(&mut self, t: u64, kind: EventKind) -> CallbackCode {
        let Some(w) = self.w.as_mut() else {
            return f::CALLBACK_INTERRUPT;
        };
        self.last = self.last.max(t);
        match w.push(&Event { time: t, kind }) {
            Ok(()) => {
                self.count += 1;
                f::CALLBACK_SUCCESS
            }
            Err(e) => {
                self.error = Some(e.into());
                f::CALLBACK_INTERRUPT
            }
        }
    }

    fn attr(&self, list: *mut AttributeList, a: Option<u32>) -> Option<u64> {
        let a = a?;
        if list.is_null() {
            return None;
        }
        let mut v = 0u64;
        // Safety: `list` is the live attribute list of the current record.
        (unsafe { f::OTF2_AttributeList_GetUint64(list, a, &mut v) } == f::SUCCESS).then_some(v)
    }
}

type L = LocationRef;
type T = TimeStamp;
type A = *mut AttributeList;

extern "C" fn ev_enter(_: L, t: T, _: u64, d: *mut c_void, _: A, r: u32) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::Enter { region: r })
}
extern "C" fn ev_leave(_: L, t: T, _: u64, d: *mut c_void, _: A, r: u32) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::Leave { region: r })
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_send(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    peer: u32,
    comm: u32,
    tag: u32,
    len: u64,
) -> CallbackCode {
    let kind = EventKind::Send {
        peer,
        tag,
        comm: comm as u64,
        bytes: len,
    };
    ud::<LocReader>(d).push(t, kind)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_recv(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    peer: u32,
    comm: u32,
    tag: u32,
    len: u64,
) -> CallbackCode {
    let kind = EventKind::Recv {
        peer,
        tag,
        comm: comm as u64,
        bytes: len,
    };
    ud::<LocReader>(d).push(t, kind)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_isend(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    peer: u32,
    comm: u32,
    tag: u32,
    len: u64,
    request: u64,
) -> CallbackCode {
    let kind = EventKind::IsendBegin {
        peer,
        tag,
        comm: comm as u64,
        bytes: len,
        request,
    };
    ud::<LocReader>(d).push(t, kind)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_irecv(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    peer: u32,
    comm: u32,
    tag: u32,
    len: u64,
    request: u64,
) -> CallbackCode {
    let kind = EventKind::IrecvComplete {
        peer,
        tag,
        comm: comm as u64,
        bytes: len,
        request,
    };
    ud::<LocReader>(d).push(t, kind)
}
extern "C" fn ev_isend_complete(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    request: u64,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::IsendComplete { request })
}
extern "C" fn ev_irecv_request(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    request: u64,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::IrecvBegin { request })
}
extern "C" fn ev_coll_begin(_: L, t: T, _: u64, d: *mut c_void, _: A) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::CollectiveBegin)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_coll_end(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    op: u8,
    comm: u32,
    root: u32,
    sent: u64,
    received: u64,
) -> CallbackCode {
    let kind = EventKind::CollectiveEnd {
        op: coll_op(op),
        comm: comm as u64,
        root: if root == f::UNDEFINED_U32 {
            NO_ROOT
        } else {
            root
        },
        sent,
        received,
    };
    ud::<LocReader>(d).push(t, kind)
}
extern "C" fn ev_fork(_: L, t: T, _: u64, d: *mut c_void, a: A, _m: u8, n: u32) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let team = match s.attr(a, s.attr_team) {
        Some(v) => v,
        None => {
            s.next_team += 1;
            s.next_team
        }
    };
    s.teams.push(team);
    s.push(t, EventKind::Fork { team, size: n })
}
extern "C" fn ev_join(_: L, t: T, _: u64, d: *mut c_void, a: A, _m: u8) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let top = s.teams.pop().unwrap_or(0);
    let team = s.attr(a, s.attr_team).unwrap_or(top);
    s.push(t, EventKind::Join { team })
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_acquire(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    _m: u8,
    id: u32,
    _o: u32,
) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let lock = s.attr(a, s.attr_lock).unwrap_or(id as u64);
    s.push(t, EventKind::LockAcquired { lock })
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_release(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    _m: u8,
    id: u32,
    _o: u32,
) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let lock = s.attr(a, s.attr_lock).unwrap_or(id as u64);
    s.push(t, EventKind::LockRelease { lock })
}
extern "C" fn ev_thread_create(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    _c: u32,
    seq: u64,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::ThreadCreate { token: seq })
}
extern "C" fn ev_thread_begin(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    _c: u32,
    seq: u64,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::ThreadBegin { token: seq })
}
extern "C" fn ev_thread_wait(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    _c: u32,
    seq: u64,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::ThreadJoin { token: seq })
}
extern "C" fn ev_thread_end(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    _c: u32,
    seq: u64,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::ThreadEnd { token: seq })
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_put(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    _w: u32,
    target: u32,
    bytes: u64,
    _m: u64,
) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let addr = s.attr(a, s.attr_addr).unwrap_or(0);
    s.push(
        t,
        EventKind::Put {
            target,
            bytes,
            addr,
        },
    )
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_get(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    _w: u32,
    target: u32,
    bytes: u64,
    _m: u64,
) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let addr = s.attr(a, s.attr_addr).unwrap_or(0);
    s.push(
        t,
        EventKind::Get {
            target,
            bytes,
            addr,
        },
    )
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_atomic(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    _w: u32,
    target: u32,
    _k: u8,
    sent: u64,
    received: u64,
    _m: u64,
) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let addr = s.attr(a, s.attr_addr).unwrap_or(0);
    s.push(
        t,
        EventKind::Atomic {
            target,
            bytes: sent.max(received),
            addr,
        },
    )
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_rma_sync(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    _w: u32,
    remote: u32,
    _k: u8,
) -> CallbackCode {
    ud::<LocReader>(d).push(t, EventKind::RmaComplete { target: remote })
}
extern "C" fn ev_wait_change(_: L, t: T, _: u64, d: *mut c_void, a: A, _w: u32) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let addr = s.attr(a, s.attr_addr).unwrap_or(0);
    s.push(t, EventKind::ValueReached { addr })
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_metric(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    _: A,
    class: u32,
    n: u8,
    types: *const u8,
    values: *const u64,
) -> CallbackCode {
    let s = ud::<LocReader>(d);
    if types.is_null() || values.is_null() {
        return f::CALLBACK_SUCCESS;
    }
    // Safety: OTF2 passes `n` types and values.
    let (types, values) = unsafe {
        (
            std::slice::from_raw_parts(types, n as usize),
            std::slice::from_raw_parts(values, n as usize),
        )
    };
    let members = s.metric_classes.get(&class).cloned().unwrap_or_default();
    for i in 0..n as usize {
        let metric = members.get(i).map_or(class, |m| m.0);
        let raw = values[i];
        let value = match types[i] {
            f::TYPE_DOUBLE => f64::from_bits(raw).round() as i64,
            _ => raw as i64,
        };
        if s.push(t, EventKind::Metric { metric, value }) != f::CALLBACK_SUCCESS {
            return f::CALLBACK_INTERRUPT;
        }
    }
    f::CALLBACK_SUCCESS
}
extern "C" fn ev_param(_: L, t: T, _: u64, d: *mut c_void, a: A, p: u32, v: u64) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let kind = match s.params.get(&p) {
        Some(Param::Event(0)) => EventKind::LockRequest {
            lock: s.attr(a, s.attr_lock).unwrap_or(v),
        },
        Some(Param::Event(1)) => EventKind::SemPost { sem: v },
        Some(Param::Event(2)) => EventKind::SemAcquired { sem: v },
        Some(Param::Event(3)) => EventKind::Advance {
            var: s.attr(a, s.attr_var).unwrap_or(0),
            index: v,
        },
        Some(Param::Event(4)) => EventKind::AwaitDone {
            var: s.attr(a, s.attr_var).unwrap_or(0),
            index: v,
        },
        Some(Param::Event(6)) => EventKind::Skipped { calls: v },
        Some(Param::Event(_)) => EventKind::Iteration {
            loop_id: s.attr(a, s.attr_loop).unwrap_or(0),
            index: v,
        },
        Some(Param::Mark(r)) => EventKind::Mark {
            mark: *r,
            value: v as i64,
        },
        None => EventKind::Mark {
            mark: MARK_BASE + p,
            value: v as i64,
        },
    };
    s.push(t, kind)
}
extern "C" fn ev_flush(_: L, t: T, _: u64, d: *mut c_void, _: A, stop: T) -> CallbackCode {
    let s = ud::<LocReader>(d);
    let r = s.push(t, EventKind::FlushBegin);
    s.pending_flush_end = Some(stop.max(t));
    r
}

/// Parallax's collective op for an OTF2 one.
fn coll_op(op: u8) -> CollectiveOp {
    use CollectiveOp::*;
    match op {
        f::COLL_BARRIER => Barrier,
        f::COLL_BCAST => Broadcast,
        f::COLL_GATHER | f::COLL_GATHERV => Gather,
        f::COLL_SCATTER | f::COLL_SCATTERV => Scatter,
        f::COLL_ALLGATHER | f::COLL_ALLGATHERV => Allgather,
        f::COLL_ALLTOALL | f::COLL_ALLTOALLV | f::COLL_ALLTOALLW => Alltoall,
        f::COLL_ALLREDUCE => Allreduce,
        f::COLL_REDUCE => Reduce,
        f::COLL_REDUCE_SCATTER | f::COLL_REDUCE_SCATTER_BLOCK => ReduceScatter,
        f::COLL_SCAN | f::COLL_EXSCAN => Scan,
        _ => Other,
    }
}

/// The Parallax kind of an OTF2 region.
fn region_kind(name: &str, desc: &str, role: u8, paradigm: u8) -> RegionKind {
    if let Some(k) = desc.strip_prefix("parallax:") {
        if let Some(k) = RegionKind::ALL.iter().find(|x| x.name() == k) {
            return *k;
        }
    }
    let n = name.to_ascii_lowercase();
    use RegionKind::*;
    match role {
        f::ROLE_POINT2POINT => {
            if n.contains("sendrecv") {
                SendRecv
            } else if n.contains("wait") || n.contains("test") {
                Wait
            } else if n.contains("recv") {
                Recv
            } else if n.contains("send") {
                Send
            } else {
                Wait
            }
        }
        f::ROLE_BARRIER | f::ROLE_IMPLICIT_BARRIER => Barrier,
        f::ROLE_COLL_ONE2ALL | f::ROLE_COLL_ALL2ONE | f::ROLE_COLL_ALL2ALL | f::ROLE_COLL_OTHER => {
            Collective
        }
        f::ROLE_LOOP => Loop,
        f::ROLE_PARALLEL => Fork,
        f::ROLE_THREAD_CREATE | f::ROLE_TASK_CREATE => ThreadCreate,
        f::ROLE_THREAD_WAIT | f::ROLE_TASK_WAIT => ThreadJoin,
        f::ROLE_FILE_IO | f::ROLE_FILE_IO_METADATA => Io,
        f::ROLE_ATOMIC => Atomic,
        f::ROLE_CRITICAL => Lock,
        f::ROLE_DATA_TRANSFER | f::ROLE_RMA => {
            if n.contains("get") {
                Get
            } else if n.contains("put") {
                Put
            } else {
                RmaSync
            }
        }
        f::ROLE_ARTIFICIAL if paradigm == f::PARADIGM_MEASUREMENT_SYSTEM => Runtime,
        _ if n.starts_with("mpi_init") || n.starts_with("mpi_finalize") => Setup,
        _ if n.contains("unlock") => Unlock,
        _ if n.contains("mutex_lock") || n.ends_with("_lock") || n == "lock" => Lock,
        _ if n.contains("pthread_create") => ThreadCreate,
        _ if n.contains("pthread_join") => ThreadJoin,
        f::ROLE_FUNCTION | f::ROLE_WRAPPER => Function,
        _ => User,
    }
}

fn otf2_err(what: &str, code: f::ErrorCode) -> Error {
    Error::new(
        ErrorKind::Otf2,
        format!("libotf2: {what}: {}", f::error_name(code)),
    )
}

/// Closes the reader on every return.
struct ReaderGuard(*mut f::Reader);

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        // Safety: the handle came from OTF2_Reader_Open and is closed once.
        unsafe {
            f::OTF2_Reader_Close(self.0);
        }
    }
}

/// Checks every file of the archive of `anchor` before libotf2 opens any:
/// the anchor, the global definitions beside it and each file of the
/// archive's directory must be regular files (a FIFO or a device would
/// block libotf2 or never end).
fn check_archive(anchor: &Path) -> Result<(), Error> {
    let regular = |p: &Path| {
        parallax_model::file::open_regular(p)
            .map(drop)
            .map_err(|e| Error::new(ErrorKind::Otf2, e.to_string()))
    };
    if std::fs::symlink_metadata(anchor).is_err() {
        return Err(Error::new(ErrorKind::Usage, "no such OTF2 anchor file").at(anchor));
    }
    regular(anchor)?;
    let defs = anchor.with_extension("def");
    if std::fs::symlink_metadata(&defs).is_ok() {
        regular(&defs)?;
    }
    let dir = anchor.with_extension("");
    if std::fs::symlink_metadata(&dir).is_ok() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        for e in entries {
            regular(&e.map_err(|e| Error::io(&dir, e))?.path())?;
        }
    }
    Ok(())
}

pub fn import(anchor: &Path, out: &Path, opts: &ImportOptions) -> Result<Summary, Error> {
    let started = Instant::now();
    check_archive(anchor)?;
    let cpath = CString::new(anchor.as_os_str().as_encoded_bytes().to_vec())
        .map_err(|_| Error::new(ErrorKind::Usage, "bad path").at(anchor))?;
    let mut g = Globals::default();
    let mut summary = Summary::default();
    // Safety: handles come from the library and are checked for NULL; the
    // user data pointers outlive the reads that use them.
    unsafe {
        let reader = f::OTF2_Reader_Open(cpath.as_ptr());
        if reader.is_null() {
            return Err(Error::new(ErrorKind::Otf2, "libotf2 cannot open this archive").at(anchor));
        }
        let _guard = ReaderGuard(reader);
        let rc = f::OTF2_Reader_SetSerialCollectiveCallbacks(reader);
        if rc != f::SUCCESS {
            return Err(otf2_err("collective callbacks", rc).at(anchor));
        }
        let gdr = f::OTF2_Reader_GetGlobalDefReader(reader);
        if gdr.is_null() {
            return Err(
                Error::new(ErrorKind::Otf2, "the archive has no global definitions").at(anchor),
            );
        }
        let cb = f::OTF2_GlobalDefReaderCallbacks_New();
        f::OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, gd_string);
        f::OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, gd_clock);
        f::OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, gd_tree);
        f::OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, gd_loc_group);
        f::OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, gd_location);
        f::OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, gd_region);
        f::OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, gd_group);
        f::OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, gd_comm);
        f::OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, gd_metric_member);
        f::OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, gd_metric_class);
        f::OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cb, gd_parameter);
        f::OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, gd_attribute);
        let rc = f::OTF2_Reader_RegisterGlobalDefCallbacks(
            reader,
            gdr,
            cb,
            &mut g as *mut _ as *mut c_void,
        );
        let mut n = 0u64;
        let rc2 = if rc == f::SUCCESS {
            f::OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &mut n)
        } else {
            rc
        };
        f::OTF2_GlobalDefReaderCallbacks_Delete(cb);
        if rc2 != f::SUCCESS {
            return Err(otf2_err("reading the global definitions", rc2).at(anchor));
        }
        f::OTF2_Reader_CloseGlobalDefReader(reader, gdr);

        // Processes and threads.
        g.loc_groups.sort();
        g.locations.sort();
        let mut rank_of: HashMap<u32, u32> = HashMap::new();
        for (i, lg) in g.loc_groups.iter().enumerate() {
            rank_of.insert(lg.0, i as u32);
        }
        let mut threads: Vec<(u64, u32, u32)> = Vec::new(); // (loc, rank, thread)
        let mut per_rank: HashMap<u32, u32> = HashMap::new();
        for &(l, _, t, grp) in &g.locations {
            if t == 3 {
                continue; // metric locations hold no events of a thread
            }
            let Some(&rank) = rank_of.get(&grp) else {
                continue;
            };
            let th = per_rank.entry(rank).or_insert(0);
            threads.push((l, rank, *th));
            *th += 1;
        }
        if threads.is_empty() {
            return Err(Error::new(ErrorKind::Otf2, "the archive defines no locations").at(anchor));
        }
        let ranks = g.loc_groups.len() as u32;

        // Definitions of every process.
        let (res, off, len, realtime) = g.clock.unwrap_or((1_000_000_000, 0, 0, f::UNDEFINED_U64));
        let res = if res == 0 { 1_000_000_000 } else { res };
        let mut common: Vec<Def> = Vec::new();
        common.push(Def::Clock {
            source: ClockSource::Monotonic,
            nominal_hz: res as f64,
        });
        let base_ns = 1_000_000_000u64;
        let unix0 = if realtime == f::UNDEFINED_U64 {
            0
        } else {
            realtime
        };
        let span_ns = (len as f64 * 1e9 / res as f64) as u64;
        common.push(Def::ClockSync {
            tick: off,
            mono_ns: base_ns,
            unix_ns: unix0,
        });
        if len > 0 {
            common.push(Def::ClockSync {
                tick: off + len,
                mono_ns: base_ns + span_ns,
                unix_ns: if unix0 > 0 { unix0 + span_ns } else { 0 },
            });
        }
        if let Some(c) = opts.probe_cost_ns {
            for probe in [Probe::Enter, Probe::Leave, Probe::Event] {
                common.push(Def::Calibration {
                    probe,
                    mode: Mode::Trace,
                    mean_ns: c,
                    sd_ns: 0.0,
                    min_ns: c,
                    samples: 1,
                    tick: 0,
                });
            }
        }
        for &(r, name, desc, role, paradigm, file, line) in &g.regions {
            let name = g.s(name);
            let kind = region_kind(&name, &g.s(desc), role, paradigm);
            common.push(Def::Region {
                id: r,
                kind,
                name,
                file: if file == f::UNDEFINED_U32 {
                    String::new()
                } else {
                    g.s(file)
                },
                line,
            });
        }
        let mut params: HashMap<u32, Param> = HashMap::new();
        for (&p, &name) in &g.params {
            let name = g.s(name);
            match EVENT_PARAMS.iter().position(|x| *x == name) {
                Some(i) => {
                    params.insert(p, Param::Event(i));
                }
                None => {
                    params.insert(p, Param::Mark(MARK_BASE + p));
                    common.push(Def::Region {
                        id: MARK_BASE + p,
                        kind: RegionKind::Mark,
                        name,
                        file: String::new(),
                        line: 0,
                    });
                }
            }
        }
        for (&m, &(name, unit, _)) in &g.metric_members {
            common.push(Def::Metric {
                id: m,
                name: g.s(name),
                unit: g.s(unit),
            });
        }
        // Communicators as groups of ranks: COMM_GROUP members index the
        // COMM_LOCATIONS group of the same paradigm.
        for &(c, _, grp) in &g.comms {
            let Some((t, paradigm, members)) = g.groups.get(&grp) else {
                continue;
            };
            let locs = g
                .groups
                .values()
                .find(|x| x.0 == f::GROUP_TYPE_COMM_LOCATIONS && x.1 == *paradigm)
                .map(|x| x.2.clone())
                .unwrap_or_default();
            let ranks_of: Vec<u32> = match *t {
                f::GROUP_TYPE_COMM_GROUP => members
                    .iter()
                    .filter_map(|&i| locs.get(i as usize))
                    .filter_map(|l| threads.iter().find(|x| x.0 == *l))
                    .map(|x| {
                        if *paradigm == f::PARADIGM_MPI {
                            x.1
                        } else {
                            x.2
                        }
                    })
                    .collect(),
                f::GROUP_TYPE_COMM_SELF => Vec::new(),
                _ => continue,
            };
            common.push(Def::Group {
                id: c as u64,
                members: ranks_of,
            });
        }
        let metric_classes: HashMap<u32, Vec<(u32, u8)>> = g
            .metric_classes
            .iter()
            .map(|(&c, ms)| {
                (
                    c,
                    ms.iter()
                        .map(|m| (*m, g.metric_members.get(m).map_or(f::TYPE_INT64, |x| x.2)))
                        .collect(),
                )
            })
            .collect();
        let attr = |name: &str| -> Option<u32> {
            g.attrs
                .iter()
                .find(|(_, &n)| g.strings.get(&n).is_some_and(|s| s == name))
                .map(|(&r, _)| r)
        };
        let attrs: Vec<Option<u32>> = ATTRIBUTES.iter().map(|a| attr(a)).collect();

        // One directory and definitions file per process.
        std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
        let program = format!("imported from {}", anchor.display());
        for (i, lg) in g.loc_groups.iter().enumerate() {
            let rank = i as u32;
            let dir = out.join(rank_dir(rank));
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            let host = g
                .tree
                .get(&lg.2)
                .map_or("unknown".to_string(), |n| g.s(n.0));
            let mut defs = vec![Def::Process(ProcessInfo {
                rank,
                ranks,
                pid: 0,
                host,
                program: program.clone(),
                args: Vec::new(),
                start_unix_ns: unix0,
                mode: Mode::Trace,
                version: env!("CARGO_PKG_VERSION").to_string(),
            })];
            defs.extend(common.iter().cloned());
            defs.push(Def::Property {
                key: "otf2.location_group".into(),
                value: g.s(lg.1),
            });
            for &(l, r, th) in &threads {
                if r == rank {
                    let name = g
                        .locations
                        .iter()
                        .find(|x| x.0 == l)
                        .map_or(String::new(), |x| thread_name(&g.s(x.1)));
                    defs.push(Def::Location {
                        thread: th,
                        name,
                        os_tid: 0,
                    });
                }
            }
            defs.push(Def::End {
                unix_ns: if unix0 > 0 { unix0 + span_ns } else { 0 },
            });
            write_defs(&dir.join(DEFS_FILE), rank, &defs)?;
        }

        // Events, location by location.
        for &(l, _, _) in &threads {
            let rc = f::OTF2_Reader_SelectLocation(reader, l);
            if rc != f::SUCCESS {
                return Err(otf2_err("select location", rc).at(anchor));
            }
        }
        let have_defs = f::OTF2_Reader_OpenDefFiles(reader) == f::SUCCESS;
        let rc = f::OTF2_Reader_OpenEvtFiles(reader);
        if rc != f::SUCCESS {
            return Err(otf2_err("open event files", rc).at(anchor));
        }
        let mut evt_readers = Vec::new();
        for &(l, _, _) in &threads {
            if have_defs {
                let dr = f::OTF2_Reader_GetDefReader(reader, l);
                if !dr.is_null() {
                    let mut n = 0u64;
                    f::OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &mut n);
                    f::OTF2_Reader_CloseDefReader(reader, dr);
                }
            }
            evt_readers.push(f::OTF2_Reader_GetEvtReader(reader, l));
        }
        if have_defs {
            f::OTF2_Reader_CloseDefFiles(reader);
        }
        let cbs = f::OTF2_EvtReaderCallbacks_New();
        f::OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, ev_enter);
        f::OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, ev_leave);
        f::OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, ev_send);
        f::OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, ev_recv);
        f::OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, ev_isend);
        f::OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, ev_irecv);
        f::OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, ev_isend_complete);
        f::OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, ev_irecv_request);
        f::OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, ev_coll_begin);
        f::OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, ev_coll_end);
        f::OTF2_EvtReaderCallbacks_SetThreadForkCallback(cbs, ev_fork);
        f::OTF2_EvtReaderCallbacks_SetThreadJoinCallback(cbs, ev_join);
        f::OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(cbs, ev_acquire);
        f::OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(cbs, ev_release);
        f::OTF2_EvtReaderCallbacks_SetThreadCreateCallback(cbs, ev_thread_create);
        f::OTF2_EvtReaderCallbacks_SetThreadBeginCallback(cbs, ev_thread_begin);
        f::OTF2_EvtReaderCallbacks_SetThreadWaitCallback(cbs, ev_thread_wait);
        f::OTF2_EvtReaderCallbacks_SetThreadEndCallback(cbs, ev_thread_end);
        f::OTF2_EvtReaderCallbacks_SetRmaPutCallback(cbs, ev_put);
        f::OTF2_EvtReaderCallbacks_SetRmaGetCallback(cbs, ev_get);
        f::OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cbs, ev_atomic);
        f::OTF2_EvtReaderCallbacks_SetRmaSyncCallback(cbs, ev_rma_sync);
        f::OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(cbs, ev_wait_change);
        f::OTF2_EvtReaderCallbacks_SetMetricCallback(cbs, ev_metric);
        f::OTF2_EvtReaderCallbacks_SetParameterIntCallback(cbs, ev_param);
        f::OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(cbs, ev_param);
        f::OTF2_EvtReaderCallbacks_SetBufferFlushCallback(cbs, ev_flush);
        let mut result = Ok(());
        for (i, &(_, rank, th)) in threads.iter().enumerate() {
            let er = evt_readers[i];
            if er.is_null() {
                summary
                    .warnings
                    .push(format!("location {rank}:{th}: no events in the archive"));
                continue;
            }
            let path = out.join(rank_dir(rank)).join(events_file(th));
            let w = match EventWriter::create(&path, rank, th, 1 << 16) {
                Ok(w) => w,
                Err(e) => {
                    result = Err(e.into());
                    break;
                }
            };
            let mut st = LocReader {
                w: Some(w),
                error: None,
                count: 0,
                last: 0,
                pending_flush_end: None,
                attr_lock: attrs[0],
                attr_team: attrs[1],
                attr_addr: attrs[2],
                attr_var: attrs[3],
                attr_loop: attrs[4],
                params: params.clone(),
                metric_classes: metric_classes.clone(),
                teams: Vec::new(),
                next_team: 0,
            };
            let rc = f::OTF2_Reader_RegisterEvtCallbacks(
                reader,
                er,
                cbs,
                &mut st as *mut _ as *mut c_void,
            );
            let mut n = 0u64;
            let rc = if rc == f::SUCCESS {
                f::OTF2_Reader_ReadAllLocalEvents(reader, er, &mut n)
            } else {
                rc
            };
            if let Some(end) = st.pending_flush_end.take() {
                st.emit(end.max(st.last), EventKind::FlushEnd);
            }
            if let Some(e) = st.error.take() {
                result = Err(e);
                break;
            }
            if rc != f::SUCCESS {
                summary.warnings.push(format!(
                    "location {rank}:{th}: reading stopped after {} events: {}",
                    st.count,
                    f::error_name(rc)
                ));
            }
            summary.events += st.count;
            if let Some(w) = st.w.take() {
                if let Err(e) = w.finish() {
                    result = Err(e.into());
                    break;
                }
            }
            f::OTF2_Reader_CloseEvtReader(reader, er);
        }
        f::OTF2_EvtReaderCallbacks_Delete(cbs);
        f::OTF2_Reader_CloseEvtFiles(reader);
        result?;
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// A thread's own name from an OTF2 location name: Parallax's exports
/// write `thread N (NAME)`.
fn thread_name(s: &str) -> String {
    if let Some(rest) = s.strip_prefix("thread ") {
        if let Some((num, name)) = rest.split_once(" (") {
            if num.chars().all(|c| c.is_ascii_digit()) {
                return name.strip_suffix(')').unwrap_or(name).to_string();
            }
        } else if rest.chars().all(|c| c.is_ascii_digit()) {
            return String::new();
        }
    }
    s.to_string()
}

/// Writes a definitions file: header and one block of records.
fn write_defs(path: &Path, rank: u32, defs: &[Def]) -> Result<(), Error> {
    let mut payload = Vec::new();
    for d in defs {
        d.encode(&mut payload);
    }
    let mut bytes = file::header(FileKind::Definitions, rank, 0).to_vec();
    file::push_block(&mut bytes, &payload);
    let mut f = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(&bytes).map_err(|e| Error::io(path, e))
}
