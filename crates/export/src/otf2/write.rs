//! OTF2 export: one OTF2 location per Parallax location, written location
//! by location through libotf2's event writers, then the global
//! definitions.
//!
//! The mapping (documented for users in docs/export.md):
//!
//! - system tree: `machine` > one node per host; one location group
//!   (`PROCESS`) per rank, ref = rank; one location (`CPU_THREAD`) per
//!   thread, ref = rank << 32 | thread.
//! - regions: one per distinct (name, kind, file, line); role and paradigm
//!   from the region kind (and an `MPI_`/`shmem` name prefix); the
//!   description is `parallax:<kind>` so that an import restores the kind.
//! - time: ns since the experiment's start; clock properties declare a
//!   1 GHz timer, offset 0, and the trace length.
//! - events: enter/leave; MPI send/recv/isend/irecv(+request)/completions;
//!   collective begin/end on communicators (one per Parallax communicator
//!   id, members from its `Group` definition, else every rank); thread
//!   create/begin/end/wait on a per-process thread contingent; fork/join
//!   (OpenMP paradigm); lock acquire/release (pthread paradigm); RMA
//!   put/get/atomic/sync/wait-change on one window; metrics (one metric
//!   class per Parallax metric); buffer flushes. Marks become `ParameterInt`
//!   records of a parameter named after the mark.
//! - Parallax fields OTF2 lacks travel as attributes (`parallax:lock`,
//!   `parallax:team`, `parallax:addr`, `parallax:var`), and the events OTF2
//!   lacks (lock request, semaphore post/acquired, advance, await) as
//!   `ParameterUnsignedInt` records of parameters named `parallax:<event>`,
//!   so that an OTF2 round trip loses nothing.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;
use std::ptr;

use parallax_model::event::{CollectiveOp, EventKind, RegionId};
use parallax_model::experiment::Experiment;
use parallax_model::region::RegionKind;

use super::ffi::{self as f, ErrorCode};
use super::place;
use crate::stream::{self, Loc};
use crate::{Error, ErrorKind, Selection, Summary};

/// Attribute refs (fixed).
const ATTR_LOCK: u32 = 0;
const ATTR_TEAM: u32 = 1;
const ATTR_ADDR: u32 = 2;
const ATTR_VAR: u32 = 3;
const ATTR_LOOP: u32 = 4;
pub(super) const ATTRIBUTES: [&str; 5] = [
    "parallax:lock",
    "parallax:team",
    "parallax:addr",
    "parallax:var",
    "parallax:loop",
];

/// Parameters of the events OTF2 lacks (fixed refs 0..).
pub(super) const EVENT_PARAMS: [&str; 7] = [
    "parallax:lock_request",
    "parallax:sem_post",
    "parallax:sem_acquired",
    "parallax:advance",
    "parallax:await_done",
    "parallax:iteration",
    "parallax:skipped",
];

fn check(code: ErrorCode, what: &str) -> Result<(), Error> {
    if code == f::SUCCESS {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Otf2,
            format!("libotf2: {what}: {}", f::error_name(code)),
        ))
    }
}

/// Interned strings of the global definitions.
#[derive(Default)]
struct Strings {
    map: HashMap<String, u32>,
    list: Vec<CString>,
}

impl Strings {
    fn get(&mut self, s: &str) -> u32 {
        if let Some(&r) = self.map.get(s) {
            return r;
        }
        let r = self.list.len() as u32;
        let c = CString::new(s.replace('\0', " ")).expect("no NUL");
        self.list.push(c);
        self.map.insert(s.to_string(), r);
        r
    }
}

struct RegionDef {
    name: u32,
    description: u32,
    role: u8,
    paradigm: u8,
    file: u32,
    line: u32,
}

/// Everything the global definitions need, gathered while writing events.
#[derive(Default)]
struct Defs {
    strings: Strings,
    regions: Vec<RegionDef>,
    region_keys: HashMap<(String, RegionKind, String, u32), u32>,
    /// Parallax communicator id -> OTF2 comm ref.
    comms: HashMap<u64, u32>,
    /// Lock id -> dense OTF2 lock id, and acquisitions so far.
    locks: HashMap<u64, (u32, u32)>,
    /// (process index, metric id) -> metric class ref.
    metrics: HashMap<(usize, u32), u32>,
    metric_names: Vec<(String, String)>,
    /// The first ref of Parallax communicators (the thread contingents,
    /// one per process, come first).
    comm_base: u32,
    /// Some locations that used each communicator (to tell a team of
    /// threads of one process from a communicator of ranks).
    comm_users: HashMap<u64, std::collections::BTreeSet<(u32, u32)>>,
    /// Mark parameters by name -> parameter ref.
    params: HashMap<String, u32>,
    uses_rma: bool,
}

/// Per-process lookups for the event loop.
struct ProcMap {
    /// OTF2 region ref + 1 by Parallax region id (dense ids), 0 = not yet.
    dense: Vec<u32>,
    /// The same for ids too large to index.
    sparse: HashMap<RegionId, u32>,
}

pub fn export(exp: &Experiment, sel: &Selection, out: &Path) -> Result<Summary, Error> {
    let (dir, name) = place::destination(out)?;
    let stage = place::Stage::new(&dir, &name)?;
    let summary = write_archive(exp, sel, out, stage.dir(), &name)?;
    stage.put(&dir, &name)?;
    Ok(summary)
}

/// Writes the archive `name` into `dir`; `out` names it in errors.
fn write_archive(
    exp: &Experiment,
    sel: &Selection,
    out: &Path,
    dir: &Path,
    name: &str,
) -> Result<Summary, Error> {
    let locs = stream::locations(exp, sel)?;
    let cdir = cpath(dir)?;
    let cname = CString::new(name).map_err(|_| bad_path(out))?;
    let mut summary = Summary::default();
    let mut defs = Defs::default();
    for p in EVENT_PARAMS {
        let r = defs.params.len() as u32;
        defs.params.insert(p.to_string(), r);
    }
    // Communicator 0 is every rank, whether or not the trace uses it.
    defs.comm_base = exp.processes.len() as u32;
    defs.comms.insert(0, defs.comm_base);
    let ranks: Vec<u32> = exp.processes.iter().map(|p| p.rank).collect();
    let mut procs: Vec<ProcMap> = exp
        .processes
        .iter()
        .map(|_| ProcMap {
            dense: Vec::new(),
            sparse: HashMap::new(),
        })
        .collect();
    // Safety: every pointer passed below is either a handle the library
    // returned (checked for NULL) or a NUL-terminated string that outlives
    // the call; writers are closed before the archive.
    unsafe {
        let archive = f::OTF2_Archive_Open(
            cdir.as_ptr(),
            cname.as_ptr(),
            f::FILEMODE_WRITE,
            1 << 20,
            4 << 20,
            f::SUBSTRATE_POSIX,
            f::COMPRESSION_NONE,
        );
        if archive.is_null() {
            return Err(Error::new(
                ErrorKind::Otf2,
                "libotf2 could not create the archive (does the directory exist and is it writable?)",
            )
            .at(out));
        }
        let guard = ArchiveGuard(archive);
        let flush = f::FlushCallbacks {
            pre: Some(pre_flush),
            post: Some(post_flush),
        };
        check(
            f::OTF2_Archive_SetFlushCallbacks(archive, &flush, ptr::null_mut()),
            "set flush callbacks",
        )?;
        let memory = f::MemoryCallbacks {
            allocate: Some(chunk_allocate),
            free_all: Some(chunk_free_all),
        };
        check(
            f::OTF2_Archive_SetMemoryCallbacks(archive, &memory, ptr::null_mut()),
            "set memory callbacks",
        )?;
        check(
            f::OTF2_Archive_SetSerialCollectiveCallbacks(archive),
            "set collective callbacks",
        )?;
        let creator = CString::new(format!("Parallax {}", env!("CARGO_PKG_VERSION"))).unwrap();
        f::OTF2_Archive_SetCreator(archive, creator.as_ptr());
        let desc = CString::new(format!("Parallax experiment {}", exp.dir.display()))
            .unwrap_or_else(|_| CString::new("Parallax experiment").unwrap());
        f::OTF2_Archive_SetDescription(archive, desc.as_ptr());
        let host = exp
            .processes
            .first()
            .and_then(|p| p.info.as_ref())
            .map_or("localhost".to_string(), |i| i.host.clone());
        let chost = CString::new(host).unwrap_or_else(|_| CString::new("localhost").unwrap());
        f::OTF2_Archive_SetMachineName(archive, chost.as_ptr());
        check(f::OTF2_Archive_OpenEvtFiles(archive), "open event files")?;
        let attrs = f::OTF2_AttributeList_New();
        let attrs_guard = AttrGuard(attrs);
        let mut counts: Vec<u64> = Vec::with_capacity(locs.len());
        let mut max_t = 0u64;
        for l in &locs {
            let w = f::OTF2_Archive_GetEvtWriter(archive, loc_ref(l));
            if w.is_null() {
                return Err(Error::new(ErrorKind::Otf2, "libotf2: no event writer"));
            }
            let pm = &mut procs[l.process];
            let mut st = LocState {
                w,
                attrs,
                pending_flush: None,
                count: 0,
                thread_comm: l.process as u32,
            };
            let (n, warn) = stream::for_each_event(exp, l, |t, e| {
                max_t = max_t.max(t);
                st.event(t, &e.kind, l, pm, &mut defs)
            })?;
            if let Some(b) = st.pending_flush.take() {
                check(
                    f::OTF2_EvtWriter_BufferFlush(w, ptr::null_mut(), b, b),
                    "buffer flush",
                )?;
                st.count += 1;
            }
            check(
                f::OTF2_Archive_CloseEvtWriter(archive, w),
                "close event writer",
            )?;
            summary.events += n;
            counts.push(st.count);
            if let Some(wn) = warn {
                summary.warnings.push(wn);
            }
        }
        drop(attrs_guard);
        check(f::OTF2_Archive_CloseEvtFiles(archive), "close event files")?;
        // Local definition files (empty: every id is global), which readers
        // such as otf2-print expect.
        check(
            f::OTF2_Archive_OpenDefFiles(archive),
            "open definition files",
        )?;
        for l in &locs {
            let dw = f::OTF2_Archive_GetDefWriter(archive, loc_ref(l));
            if dw.is_null() {
                return Err(Error::new(ErrorKind::Otf2, "libotf2: no definition writer"));
            }
            check(
                f::OTF2_Archive_CloseDefWriter(archive, dw),
                "close definition writer",
            )?;
        }
        check(
            f::OTF2_Archive_CloseDefFiles(archive),
            "close definition files",
        )?;
        let gw = f::OTF2_Archive_GetGlobalDefWriter(archive);
        if gw.is_null() {
            return Err(Error::new(
                ErrorKind::Otf2,
                "libotf2: no global definition writer",
            ));
        }
        write_globals(gw, exp, &locs, &counts, &ranks, &mut defs, max_t)?;
        let archive = guard.release();
        check(f::OTF2_Archive_Close(archive), "close archive")?;
    }
    Ok(summary)
}

/// The state of the location being written.
struct LocState {
    w: *mut f::EvtWriter,
    attrs: *mut f::AttributeList,
    pending_flush: Option<u64>,
    count: u64,
    thread_comm: u32,
}

impl LocState {
    /// Writes one event.
    ///
    /// # Safety
    ///
    /// `self.w` and `self.attrs` must be live handles.
    #[inline]
    unsafe fn event(
        &mut self,
        t: u64,
        kind: &EventKind,
        l: &Loc,
        pm: &mut ProcMap,
        defs: &mut Defs,
    ) -> Result<(), Error> {
        use EventKind::*;
        let w = self.w;
        let a = self.attrs;
        let none = ptr::null_mut();
        if let Some(b) = self.pending_flush {
            if !matches!(kind, FlushEnd) {
                self.pending_flush = None;
                self.count += 1;
                check(f::OTF2_EvtWriter_BufferFlush(w, none, b, t), "buffer flush")?;
            }
        }
        let code = match *kind {
            Enter { region } => {
                f::OTF2_EvtWriter_Enter(w, none, t, region_ref(region, l, pm, defs))
            }
            Leave { region } => {
                f::OTF2_EvtWriter_Leave(w, none, t, region_ref(region, l, pm, defs))
            }
            FlushBegin => {
                self.pending_flush = Some(t);
                return Ok(());
            }
            FlushEnd => match self.pending_flush.take() {
                Some(b) => f::OTF2_EvtWriter_BufferFlush(w, none, b, t),
                None => return Ok(()),
            },
            Send { .. }
            | Recv { .. }
            | IsendBegin { .. }
            | IsendComplete { .. }
            | IrecvBegin { .. }
            | IrecvComplete { .. }
            | CollectiveBegin
            | CollectiveEnd { .. } => self.message(t, kind, l, defs),
            LockRequest { lock } => self.param(t, 0, lock, a, Some((ATTR_LOCK, lock))),
            LockAcquired { lock } => {
                let e = lock_entry(lock, defs);
                let (id, order) = (e.0, e.1);
                e.1 += 1;
                f::OTF2_AttributeList_AddUint64(a, ATTR_LOCK, lock);
                f::OTF2_EvtWriter_ThreadAcquireLock(w, a, t, f::PARADIGM_PTHREAD, id, order)
            }
            LockRelease { lock } => {
                let e = lock_entry(lock, defs);
                let (id, order) = (e.0, e.1.saturating_sub(1));
                f::OTF2_AttributeList_AddUint64(a, ATTR_LOCK, lock);
                f::OTF2_EvtWriter_ThreadReleaseLock(w, a, t, f::PARADIGM_PTHREAD, id, order)
            }
            SemPost { sem } => self.param(t, 1, sem, a, None),
            SemAcquired { sem } => self.param(t, 2, sem, a, None),
            Advance { var, index } => self.param(t, 3, index, a, Some((ATTR_VAR, var))),
            AwaitDone { var, index } => self.param(t, 4, index, a, Some((ATTR_VAR, var))),
            Iteration { loop_id, index } => self.param(t, 5, index, a, Some((ATTR_LOOP, loop_id))),
            Skipped { calls } => self.param(t, 6, calls, a, None),
            ThreadCreate { token } => {
                f::OTF2_EvtWriter_ThreadCreate(w, none, t, self.thread_comm, token)
            }
            ThreadBegin { token } => {
                f::OTF2_EvtWriter_ThreadBegin(w, none, t, self.thread_comm, token)
            }
            ThreadEnd { token } => f::OTF2_EvtWriter_ThreadEnd(w, none, t, self.thread_comm, token),
            ThreadJoin { token } => {
                f::OTF2_EvtWriter_ThreadWait(w, none, t, self.thread_comm, token)
            }
            Fork { team, size } => {
                f::OTF2_AttributeList_AddUint64(a, ATTR_TEAM, team);
                f::OTF2_EvtWriter_ThreadFork(w, a, t, f::PARADIGM_OPENMP, size)
            }
            Join { team } => {
                f::OTF2_AttributeList_AddUint64(a, ATTR_TEAM, team);
                f::OTF2_EvtWriter_ThreadJoin(w, a, t, f::PARADIGM_OPENMP)
            }
            Put { .. } | Get { .. } | Atomic { .. } | RmaComplete { .. } | ValueReached { .. } => {
                self.rma(t, kind, defs)
            }
            Metric { .. } | Mark { .. } => self.value(t, kind, l, defs),
        };
        self.count += 1;
        check(code, kind.name())
    }

    /// A message or collective event's record.
    ///
    /// # Safety
    ///
    /// As for [`Self::event`].
    unsafe fn message(&mut self, t: u64, kind: &EventKind, l: &Loc, defs: &mut Defs) -> ErrorCode {
        use EventKind::*;
        let (w, none) = (self.w, ptr::null_mut());
        match *kind {
            Send {
                peer,
                tag,
                comm,
                bytes,
            } => f::OTF2_EvtWriter_MpiSend(w, none, t, peer, comm_ref(comm, l, defs), tag, bytes),
            Recv {
                peer,
                tag,
                comm,
                bytes,
            } => f::OTF2_EvtWriter_MpiRecv(w, none, t, peer, comm_ref(comm, l, defs), tag, bytes),
            IsendBegin {
                peer,
                tag,
                comm,
                bytes,
                request,
            } => f::OTF2_EvtWriter_MpiIsend(
                w,
                none,
                t,
                peer,
                comm_ref(comm, l, defs),
                tag,
                bytes,
                request,
            ),
            IsendComplete { request } => f::OTF2_EvtWriter_MpiIsendComplete(w, none, t, request),
            IrecvBegin { request } => f::OTF2_EvtWriter_MpiIrecvRequest(w, none, t, request),
            IrecvComplete {
                peer,
                tag,
                comm,
                bytes,
                request,
            } => f::OTF2_EvtWriter_MpiIrecv(
                w,
                none,
                t,
                peer,
                comm_ref(comm, l, defs),
                tag,
                bytes,
                request,
            ),
            CollectiveBegin => f::OTF2_EvtWriter_MpiCollectiveBegin(w, none, t),
            CollectiveEnd {
                op,
                comm,
                root,
                sent,
                received,
            } => f::OTF2_EvtWriter_MpiCollectiveEnd(
                w,
                none,
                t,
                coll_op(op),
                comm_ref(comm, l, defs),
                root,
                sent,
                received,
            ),
            _ => unreachable!("only message events come here"),
        }
    }

    /// A one-sided (RMA) event's record.
    ///
    /// # Safety
    ///
    /// As for [`Self::event`].
    unsafe fn rma(&mut self, t: u64, kind: &EventKind, defs: &mut Defs) -> ErrorCode {
        use EventKind::*;
        let (w, a, none) = (self.w, self.attrs, ptr::null_mut());
        defs.uses_rma = true;
        match *kind {
            Put {
                target,
                bytes,
                addr,
            } => {
                defs.uses_rma = true;
                f::OTF2_AttributeList_AddUint64(a, ATTR_ADDR, addr);
                f::OTF2_EvtWriter_RmaPut(w, a, t, 0, target, bytes, self.count)
            }
            Get {
                target,
                bytes,
                addr,
            } => {
                defs.uses_rma = true;
                f::OTF2_AttributeList_AddUint64(a, ATTR_ADDR, addr);
                f::OTF2_EvtWriter_RmaGet(w, a, t, 0, target, bytes, self.count)
            }
            Atomic {
                target,
                bytes,
                addr,
            } => {
                defs.uses_rma = true;
                f::OTF2_AttributeList_AddUint64(a, ATTR_ADDR, addr);
                f::OTF2_EvtWriter_RmaAtomic(
                    w,
                    a,
                    t,
                    0,
                    target,
                    f::RMA_ATOMIC_TYPE_ACCUMULATE,
                    bytes,
                    0,
                    self.count,
                )
            }
            RmaComplete { target } => {
                defs.uses_rma = true;
                f::OTF2_EvtWriter_RmaSync(w, none, t, 0, target, f::RMA_SYNC_TYPE_MEMORY)
            }
            ValueReached { addr } => {
                defs.uses_rma = true;
                f::OTF2_AttributeList_AddUint64(a, ATTR_ADDR, addr);
                f::OTF2_EvtWriter_RmaWaitChange(w, a, t, 0)
            }
            _ => unreachable!("only one-sided events come here"),
        }
    }

    /// A metric sample's or a mark's record.
    ///
    /// # Safety
    ///
    /// As for [`Self::event`].
    unsafe fn value(&mut self, t: u64, kind: &EventKind, l: &Loc, defs: &mut Defs) -> ErrorCode {
        use EventKind::*;
        let (w, none) = (self.w, ptr::null_mut());
        match *kind {
            Metric { metric, value } => {
                let next = defs.metrics.len() as u32;
                let r = *defs.metrics.entry((l.process, metric)).or_insert_with(|| {
                    let (name, unit) =
                        l.p.metrics
                            .get(&metric)
                            .cloned()
                            .unwrap_or_else(|| (format!("metric {metric}"), String::new()));
                    defs.metric_names.push((name, unit));
                    next
                });
                let ty = [f::TYPE_INT64];
                let v = [value as u64];
                f::OTF2_EvtWriter_Metric(w, none, t, r, 1, ty.as_ptr(), v.as_ptr())
            }
            Mark { mark, value } => {
                let name = stream::region_name(l.p, mark);
                let next = defs.params.len() as u32;
                let p = *defs.params.entry(name).or_insert(next);
                f::OTF2_EvtWriter_ParameterInt(w, none, t, p, value)
            }
            _ => unreachable!("only metrics and marks come here"),
        }
    }

    /// A `ParameterUnsignedInt` of one of the `EVENT_PARAMS`.
    unsafe fn param(
        &mut self,
        t: u64,
        which: u32,
        value: u64,
        a: *mut f::AttributeList,
        attr: Option<(u32, u64)>,
    ) -> ErrorCode {
        match attr {
            Some((r, v)) => {
                f::OTF2_AttributeList_AddUint64(a, r, v);
                f::OTF2_EvtWriter_ParameterUnsignedInt(self.w, a, t, which, value)
            }
            None => {
                f::OTF2_EvtWriter_ParameterUnsignedInt(self.w, ptr::null_mut(), t, which, value)
            }
        }
    }
}

/// The dense OTF2 id of a Parallax lock and its acquisitions so far.
fn lock_entry(lock: u64, defs: &mut Defs) -> &mut (u32, u32) {
    let n = defs.locks.len() as u32;
    defs.locks.entry(lock).or_insert((n, 0))
}

fn comm_ref(comm: u64, l: &Loc, defs: &mut Defs) -> u32 {
    let n = defs.comm_base + defs.comms.len() as u32;
    let users = defs.comm_users.entry(comm).or_default();
    if users.len() < 64 {
        users.insert((l.rank, l.thread));
    }
    *defs.comms.entry(comm).or_insert(n)
}

#[inline]
fn region_ref(region: RegionId, l: &Loc, pm: &mut ProcMap, defs: &mut Defs) -> u32 {
    match pm.dense.get(region as usize) {
        Some(&r) if r > 0 => return r - 1,
        _ => {}
    }
    if let Some(&r) = pm.sparse.get(&region) {
        return r;
    }
    let r = new_region_ref(region, l, defs);
    if region < 1 << 20 {
        if pm.dense.len() <= region as usize {
            pm.dense.resize(region as usize + 1, 0);
        }
        pm.dense[region as usize] = r + 1;
    } else {
        pm.sparse.insert(region, r);
    }
    r
}

#[cold]
fn new_region_ref(region: RegionId, l: &Loc, defs: &mut Defs) -> u32 {
    let (name, kind, file, line) = match l.p.regions.get(&region) {
        Some(r) => (r.name.clone(), r.kind, r.file.clone(), r.line),
        None => (
            stream::region_name(l.p, region),
            RegionKind::User,
            String::new(),
            0,
        ),
    };
    let key = (name.clone(), kind, file.clone(), line);
    let r = match defs.region_keys.get(&key) {
        Some(&r) => r,
        None => {
            let r = defs.regions.len() as u32;
            let (role, paradigm) = role_paradigm(kind, &name);
            let d = RegionDef {
                name: defs.strings.get(&name),
                description: defs.strings.get(&format!("parallax:{}", kind.name())),
                role,
                paradigm,
                file: if file.is_empty() {
                    f::UNDEFINED_U32
                } else {
                    defs.strings.get(&file)
                },
                line,
            };
            defs.regions.push(d);
            defs.region_keys.insert(key, r);
            r
        }
    };
    r
}

/// OTF2 region role and paradigm of a Parallax region.
fn role_paradigm(kind: RegionKind, name: &str) -> (u8, u8) {
    use RegionKind::*;
    let model = if name.starts_with("MPI_") {
        f::PARADIGM_MPI
    } else if name.starts_with("shmem") {
        f::PARADIGM_SHMEM
    } else {
        f::PARADIGM_USER
    };
    let sync_model = if model == f::PARADIGM_USER {
        f::PARADIGM_PTHREAD
    } else {
        model
    };
    match kind {
        User => (f::ROLE_CODE, f::PARADIGM_USER),
        Function => (f::ROLE_FUNCTION, model),
        Loop => (f::ROLE_LOOP, f::PARADIGM_USER),
        Send | Recv | SendRecv | Wait => (f::ROLE_POINT2POINT, f::PARADIGM_MPI),
        Collective => {
            let n = name.to_ascii_lowercase();
            let role = if n.contains("bcast") || n.contains("scatter") && !n.contains("reduce") {
                f::ROLE_COLL_ONE2ALL
            } else if n.contains("gather") && !n.contains("all")
                || n.ends_with("reduce") && !n.contains("all")
            {
                f::ROLE_COLL_ALL2ONE
            } else {
                f::ROLE_COLL_ALL2ALL
            };
            (
                role,
                if model == f::PARADIGM_USER {
                    f::PARADIGM_MPI
                } else {
                    model
                },
            )
        }
        Barrier => (f::ROLE_BARRIER, sync_model),
        Lock | Unlock | SemWait | SemPost => (f::ROLE_FUNCTION, sync_model),
        Advance | Await => (f::ROLE_ORDERED, f::PARADIGM_USER),
        Put | Get => (f::ROLE_DATA_TRANSFER, model),
        Atomic => (f::ROLE_ATOMIC, model),
        WaitOnValue | RmaSync => (f::ROLE_RMA, model),
        ThreadCreate => (f::ROLE_THREAD_CREATE, f::PARADIGM_PTHREAD),
        ThreadJoin => (f::ROLE_THREAD_WAIT, f::PARADIGM_PTHREAD),
        Fork => (f::ROLE_PARALLEL, f::PARADIGM_OPENMP),
        Join => (f::ROLE_IMPLICIT_BARRIER, f::PARADIGM_OPENMP),
        Io => (f::ROLE_FILE_IO, f::PARADIGM_USER),
        Setup => (f::ROLE_FUNCTION, model),
        Runtime => (f::ROLE_ARTIFICIAL, f::PARADIGM_MEASUREMENT_SYSTEM),
        Mark => (f::ROLE_ARTIFICIAL, f::PARADIGM_USER),
    }
}

/// OTF2's collective operation for a Parallax one. `Other` has no OTF2
/// counterpart and is written as `CREATE_HANDLE` (17), which the import maps
/// back.
pub(super) fn coll_op(op: CollectiveOp) -> u8 {
    use CollectiveOp::*;
    match op {
        Barrier => f::COLL_BARRIER,
        Broadcast => f::COLL_BCAST,
        Reduce => f::COLL_REDUCE,
        Allreduce => f::COLL_ALLREDUCE,
        Gather => f::COLL_GATHER,
        Scatter => f::COLL_SCATTER,
        Allgather => f::COLL_ALLGATHER,
        Alltoall => f::COLL_ALLTOALL,
        Scan => f::COLL_SCAN,
        ReduceScatter => f::COLL_REDUCE_SCATTER,
        Other => 17,
    }
}

fn loc_ref(l: &Loc) -> u64 {
    ((l.rank as u64) << 32) | l.thread as u64
}

/// Writes the global definitions.
///
/// # Safety
///
/// `gw` must be a live global definition writer.
unsafe fn write_globals(
    gw: *mut f::GlobalDefWriter,
    exp: &Experiment,
    locs: &[Loc],
    counts: &[u64],
    ranks: &[u32],
    defs: &mut Defs,
    max_t: u64,
) -> Result<(), Error> {
    let realtime = exp
        .processes
        .iter()
        .filter_map(|p| p.info.as_ref().map(|i| i.start_unix_ns))
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(f::UNDEFINED_U64);
    check(
        f::OTF2_GlobalDefWriter_WriteClockProperties(gw, 1_000_000_000, 0, max_t + 1, realtime),
        "clock properties",
    )?;
    // Names first, so that every string exists before it is referenced.
    let s = &mut defs.strings;
    let machine = s.get("machine");
    let node_class = s.get("node");
    let mut hosts: Vec<String> = Vec::new();
    let mut proc_host: HashMap<u32, u32> = HashMap::new();
    for p in &exp.processes {
        let h = p
            .info
            .as_ref()
            .map_or("localhost".to_string(), |i| i.host.clone());
        let i = match hosts.iter().position(|x| *x == h) {
            Some(i) => i,
            None => {
                hosts.push(h);
                hosts.len() - 1
            }
        };
        proc_host.insert(p.rank, i as u32 + 1);
    }
    let host_names: Vec<u32> = hosts.iter().map(|h| s.get(h)).collect();
    let group_names: Vec<(u32, u32)> = exp
        .processes
        .iter()
        .map(|p| (p.rank, s.get(&format!("rank {}", p.rank))))
        .collect();
    let loc_names: Vec<u32> = locs
        .iter()
        .map(|l| {
            if l.name.is_empty() {
                s.get(&format!("thread {}", l.thread))
            } else {
                s.get(&format!("thread {} ({})", l.thread, l.name))
            }
        })
        .collect();
    let mpi_locations = s.get("MPI locations");
    let pthread_locations = s.get("pthread locations");
    let comm_names: Vec<(u64, u32, u32)> = {
        let mut v: Vec<(u64, u32)> = defs.comms.iter().map(|(&c, &r)| (c, r)).collect();
        v.sort_by_key(|x| x.1);
        v.into_iter()
            .map(|(c, r)| (c, r, s.get(&format!("comm {c}"))))
            .collect()
    };
    let thread_comm_names: Vec<u32> = exp
        .processes
        .iter()
        .map(|p| s.get(&format!("threads of rank {}", p.rank)))
        .collect();
    let win_name = s.get("parallax one-sided window");
    let metric_strs: Vec<(u32, u32)> = defs
        .metric_names
        .iter()
        .map(|(n, u)| (s.get(n), s.get(u)))
        .collect();
    let mut params: Vec<(String, u32)> = defs.params.iter().map(|(k, &v)| (k.clone(), v)).collect();
    params.sort_by_key(|x| x.1);
    let param_strs: Vec<u32> = params.iter().map(|(n, _)| s.get(n)).collect();
    let attr_strs: Vec<u32> = ATTRIBUTES.iter().map(|a| s.get(a)).collect();
    let empty = s.get("");
    for (i, c) in s.list.iter().enumerate() {
        check(
            f::OTF2_GlobalDefWriter_WriteString(gw, i as u32, c.as_ptr()),
            "string",
        )?;
    }
    // System tree, location groups, locations.
    check(
        f::OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, machine, machine, f::UNDEFINED_U32),
        "system tree node",
    )?;
    for (i, &n) in host_names.iter().enumerate() {
        check(
            f::OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, i as u32 + 1, n, node_class, 0),
            "system tree node",
        )?;
    }
    for &(rank, name) in &group_names {
        check(
            f::OTF2_GlobalDefWriter_WriteLocationGroup(
                gw,
                rank,
                name,
                f::LOCATION_GROUP_TYPE_PROCESS,
                proc_host[&rank],
                f::UNDEFINED_U32,
            ),
            "location group",
        )?;
    }
    for (i, l) in locs.iter().enumerate() {
        check(
            f::OTF2_GlobalDefWriter_WriteLocation(
                gw,
                loc_ref(l),
                loc_names[i],
                f::LOCATION_TYPE_CPU_THREAD,
                counts[i],
                l.rank,
            ),
            "location",
        )?;
    }
    for (i, r) in defs.regions.iter().enumerate() {
        check(
            f::OTF2_GlobalDefWriter_WriteRegion(
                gw,
                i as u32,
                r.name,
                r.name,
                r.description,
                r.role,
                r.paradigm,
                0,
                r.file,
                r.line,
                r.line,
            ),
            "region",
        )?;
    }
    // Groups: the MPI locations (first location of each rank, in rank
    // order) and communicator groups of ranks; the pthread locations and
    // one group per process of its threads.
    let mut first_loc: Vec<(u32, u64)> = Vec::new();
    for l in locs {
        if !first_loc.iter().any(|x| x.0 == l.rank) {
            first_loc.push((l.rank, loc_ref(l)));
        }
    }
    for &r in ranks {
        if !first_loc.iter().any(|x| x.0 == r) {
            first_loc.push((r, (r as u64) << 32));
        }
    }
    first_loc.sort();
    let rank_index: HashMap<u32, u64> = first_loc
        .iter()
        .enumerate()
        .map(|(i, x)| (x.0, i as u64))
        .collect();
    let mpi_members: Vec<u64> = first_loc.iter().map(|x| x.1).collect();
    check(
        f::OTF2_GlobalDefWriter_WriteGroup(
            gw,
            0,
            mpi_locations,
            f::GROUP_TYPE_COMM_LOCATIONS,
            f::PARADIGM_MPI,
            0,
            mpi_members.len() as u32,
            mpi_members.as_ptr(),
        ),
        "group",
    )?;
    let all_threads: Vec<u64> = locs.iter().map(loc_ref).collect();
    check(
        f::OTF2_GlobalDefWriter_WriteGroup(
            gw,
            1,
            pthread_locations,
            f::GROUP_TYPE_COMM_LOCATIONS,
            f::PARADIGM_PTHREAD,
            0,
            all_threads.len() as u32,
            all_threads.as_ptr(),
        ),
        "group",
    )?;
    let mut next_group = 2u32;
    let mut comm_groups = Vec::new();
    for &(c, r, name) in &comm_names {
        // A communicator used by several threads of one rank only (and not
        // defined as a group of ranks) is a team of threads, such as a
        // barrier's: its members are those threads.
        let users = defs.comm_users.get(&c);
        let defined = exp.processes.iter().find_map(|p| p.groups.get(&c));
        let team = c != 0
            && defined.is_none()
            && users.is_some_and(|u| {
                u.len() > 1 && u.iter().all(|x| x.0 == u.iter().next().unwrap().0)
            });
        let (members, paradigm): (Vec<u64>, u8) = if team {
            let u = users.unwrap();
            let m = locs
                .iter()
                .enumerate()
                .filter(|(_, l)| u.contains(&(l.rank, l.thread)))
                .map(|(i, _)| i as u64)
                .collect();
            (m, f::PARADIGM_PTHREAD)
        } else {
            let m = match defined {
                Some(m) => m
                    .iter()
                    .filter_map(|r| rank_index.get(r).copied())
                    .collect(),
                None => (0..mpi_members.len() as u64).collect(),
            };
            (m, f::PARADIGM_MPI)
        };
        check(
            f::OTF2_GlobalDefWriter_WriteGroup(
                gw,
                next_group,
                name,
                f::GROUP_TYPE_COMM_GROUP,
                paradigm,
                0,
                members.len() as u32,
                members.as_ptr(),
            ),
            "group",
        )?;
        comm_groups.push((r, name, next_group));
        next_group += 1;
    }
    let mut thread_groups = Vec::new();
    for (pi, p) in exp.processes.iter().enumerate() {
        let members: Vec<u64> = locs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.rank == p.rank)
            .map(|(i, _)| i as u64)
            .collect();
        check(
            f::OTF2_GlobalDefWriter_WriteGroup(
                gw,
                next_group,
                thread_comm_names[pi],
                f::GROUP_TYPE_COMM_GROUP,
                f::PARADIGM_PTHREAD,
                0,
                members.len() as u32,
                members.as_ptr(),
            ),
            "group",
        )?;
        thread_groups.push((pi, next_group));
        next_group += 1;
    }
    // Communicators: one thread contingent per process (ref = process
    // index), then the Parallax communicators.
    for &(pi, g) in &thread_groups {
        check(
            f::OTF2_GlobalDefWriter_WriteComm(
                gw,
                pi as u32,
                thread_comm_names[pi],
                g,
                f::UNDEFINED_U32,
                0,
            ),
            "comm",
        )?;
    }
    for &(r, name, g) in &comm_groups {
        check(
            f::OTF2_GlobalDefWriter_WriteComm(gw, r, name, g, f::UNDEFINED_U32, 0),
            "comm",
        )?;
    }
    if defs.uses_rma {
        check(
            f::OTF2_GlobalDefWriter_WriteRmaWin(gw, 0, win_name, defs.comm_base, 0),
            "rma window",
        )?;
    }
    for (i, &(name, unit)) in metric_strs.iter().enumerate() {
        check(
            f::OTF2_GlobalDefWriter_WriteMetricMember(
                gw,
                i as u32,
                name,
                empty,
                f::METRIC_TYPE_USER,
                f::METRIC_ABSOLUTE_POINT,
                f::TYPE_INT64,
                f::BASE_DECIMAL,
                0,
                unit,
            ),
            "metric member",
        )?;
        let m = [i as u32];
        check(
            f::OTF2_GlobalDefWriter_WriteMetricClass(
                gw,
                i as u32,
                1,
                m.as_ptr(),
                f::METRIC_ASYNCHRONOUS,
                f::RECORDER_KIND_CPU,
            ),
            "metric class",
        )?;
    }
    for (i, (name, r)) in params.iter().enumerate() {
        let kind = if name.starts_with("parallax:") {
            f::PARAMETER_TYPE_UINT64
        } else {
            f::PARAMETER_TYPE_INT64
        };
        check(
            f::OTF2_GlobalDefWriter_WriteParameter(gw, *r, param_strs[i], kind),
            "parameter",
        )?;
    }
    for (i, &n) in attr_strs.iter().enumerate() {
        check(
            f::OTF2_GlobalDefWriter_WriteAttribute(gw, i as u32, n, empty, f::TYPE_UINT64),
            "attribute",
        )?;
    }
    Ok(())
}

extern "C" fn pre_flush(
    _: *mut std::ffi::c_void,
    _: u8,
    _: u64,
    _: *mut std::ffi::c_void,
    _: bool,
) -> u8 {
    f::FLUSH
}

extern "C" fn post_flush(_: *mut std::ffi::c_void, _: u8, _: u64) -> u64 {
    0
}

/// Chunks a writer's buffer holds before libotf2 writes them out (its own
/// pool holds up to 128 MiB per writer, so that memory would grow with the
/// events of a location up to that).
const CHUNKS_PER_BUFFER: usize = 8;

/// The chunks of one buffer: (address, size).
type Chunks = Vec<(*mut u8, usize)>;

/// libotf2 asks for a chunk of a buffer; none past [`CHUNKS_PER_BUFFER`],
/// which makes it flush the buffer and free its chunks.
extern "C" fn chunk_allocate(
    _: *mut std::ffi::c_void,
    _: u8,
    _: u64,
    per_buffer: *mut *mut std::ffi::c_void,
    size: u64,
) -> *mut std::ffi::c_void {
    // Safety: `per_buffer` is libotf2's slot for this buffer, NULL at first
    // and afterwards the list made here.
    unsafe {
        if (*per_buffer).is_null() {
            *per_buffer = Box::into_raw(Box::new(Chunks::new())).cast();
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        let Ok(layout) = std::alloc::Layout::from_size_align(size as usize, 16) else {
            return ptr::null_mut();
        };
        if chunks.len() >= CHUNKS_PER_BUFFER || size == 0 {
            return ptr::null_mut();
        }
        let p = std::alloc::alloc(layout);
        if !p.is_null() {
            chunks.push((p, size as usize));
        }
        p.cast()
    }
}

/// libotf2 wrote a buffer out (or closes it, `last`): its chunks are freed.
extern "C" fn chunk_free_all(
    _: *mut std::ffi::c_void,
    _: u8,
    _: u64,
    per_buffer: *mut *mut std::ffi::c_void,
    last: bool,
) {
    // Safety: the list was made by `chunk_allocate` for this buffer, and
    // each chunk with the layout freed here.
    unsafe {
        if (*per_buffer).is_null() {
            return;
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        for (p, size) in chunks.drain(..) {
            std::alloc::dealloc(p, std::alloc::Layout::from_size_align_unchecked(size, 16));
        }
        if last {
            drop(Box::from_raw((*per_buffer).cast::<Chunks>()));
            *per_buffer = ptr::null_mut();
        }
    }
}

/// Closes the archive on early return.
struct ArchiveGuard(*mut f::Archive);

impl ArchiveGuard {
    fn release(self) -> *mut f::Archive {
        let a = self.0;
        std::mem::forget(self);
        a
    }
}

impl Drop for ArchiveGuard {
    fn drop(&mut self) {
        // Safety: the handle came from OTF2_Archive_Open and is closed once.
        unsafe {
            f::OTF2_Archive_Close(self.0);
        }
    }
}

struct AttrGuard(*mut f::AttributeList);

impl Drop for AttrGuard {
    fn drop(&mut self) {
        // Safety: the list came from OTF2_AttributeList_New.
        unsafe {
            f::OTF2_AttributeList_Delete(self.0);
        }
    }
}

fn bad_path(out: &Path) -> Error {
    Error::new(
        ErrorKind::Usage,
        "the OTF2 output must be an anchor file named NAME.otf2",
    )
    .at(out)
}

fn cpath(p: &Path) -> Result<CString, Error> {
    CString::new(p.as_os_str().as_encoded_bytes().to_vec()).map_err(|_| bad_path(p))
}
