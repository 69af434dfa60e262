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

mod events;
mod globals;
mod roles;

use std::collections::{BTreeSet, HashMap};
use std::ffi::CString;
use std::path::Path;

use parallax_model::experiment::Experiment;
use parallax_model::region::RegionKind;

use super::libotf2::{Archive, AttributeList, LocationRef, Otf2Error};
use super::place;
use crate::{Error, ErrorKind, Summary};
use events::{LocWriter, ProcMap};
use parallax_view::selection::Selection;
use parallax_view::trace::{self, Loc, Timebase};

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

/// A region's global definition, its strings interned.
struct RegionDef {
    name: u32,
    description: u32,
    role: u8,
    paradigm: u8,
    file: u32,
    line: u32,
}

/// What makes two Parallax regions one OTF2 region.
#[derive(Clone, PartialEq, Eq, Hash)]
struct RegionKey {
    name: String,
    kind: RegionKind,
    file: String,
    line: u32,
}

/// A Parallax lock's dense OTF2 id and its acquisitions so far.
struct LockIds {
    id: u32,
    acquisitions: u32,
}

/// A metric's name and unit.
struct MetricName {
    name: String,
    unit: String,
}

/// Everything the global definitions need, gathered while writing events.
#[derive(Default)]
struct Defs {
    strings: Strings,
    regions: Vec<RegionDef>,
    region_keys: HashMap<RegionKey, u32>,
    /// Parallax communicator id -> OTF2 comm ref.
    comms: HashMap<u64, u32>,
    locks: HashMap<u64, LockIds>,
    /// (process index, metric id) -> metric class ref.
    metrics: HashMap<(usize, u32), u32>,
    metric_names: Vec<MetricName>,
    /// The first ref of Parallax communicators (the thread contingents,
    /// one per process, come first).
    comm_base: u32,
    /// Some locations (rank, thread) that used each communicator (to tell
    /// a team of threads of one process from a communicator of ranks).
    comm_users: HashMap<u64, BTreeSet<(u32, u32)>>,
    /// Mark parameters by name -> parameter ref.
    params: HashMap<String, u32>,
    uses_rma: bool,
}

impl Defs {
    /// The definitions before any event: the event parameters, and
    /// communicator 0 (every rank, whether or not the trace uses it).
    fn new(processes: usize) -> Defs {
        let mut defs = Defs::default();
        for p in EVENT_PARAMS {
            let r = defs.params.len() as u32;
            defs.params.insert(p.to_string(), r);
        }
        defs.comm_base = processes as u32;
        defs.comms.insert(0, defs.comm_base);
        defs
    }
}

/// What writing the events found besides the definitions.
struct EventTotals {
    /// Records written per location, in `locs` order.
    counts: Vec<u64>,
    /// The last event's time.
    max_t: u64,
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
    let locs = trace::selected(exp, sel)?;
    let cdir = cpath(dir)?;
    let cname = CString::new(name).map_err(|_| bad_path(out))?;
    let mut summary = Summary::default();
    let mut defs = Defs::new(exp.processes.len());
    let Some(mut archive) = Archive::create(&cdir, &cname, 1 << 20, 4 << 20) else {
        return Err(Error::new(
            ErrorKind::Otf2,
            "libotf2 could not create the archive (does the directory exist and is it writable?)",
        )
        .at(out));
    };
    set_up(&mut archive, exp)?;
    archive
        .open_evt_files()
        .map_err(|e| e.during("open event files"))?;
    let totals = write_events(&archive, exp, &locs, &mut defs, &mut summary)?;
    archive
        .close_evt_files()
        .map_err(|e| e.during("close event files"))?;
    write_local_defs(&mut archive, &locs)?;
    let Some(mut gw) = archive.global_def_writer() else {
        return Err(Error::new(
            ErrorKind::Otf2,
            "libotf2: no global definition writer",
        ));
    };
    globals::write(&mut gw, exp, &locs, &totals, &mut defs)?;
    archive.close().map_err(|e| e.during("close archive"))?;
    Ok(summary)
}

/// The archive's callbacks and descriptive properties.
fn set_up(archive: &mut Archive, exp: &Experiment) -> Result<(), Error> {
    archive
        .flush_when_full()
        .map_err(|e| e.during("set flush callbacks"))?;
    archive
        .bound_buffers()
        .map_err(|e| e.during("set memory callbacks"))?;
    archive
        .serial_collectives()
        .map_err(|e| e.during("set collective callbacks"))?;
    let creator = CString::new(format!("Parallax {}", env!("CARGO_PKG_VERSION"))).unwrap();
    let desc = CString::new(format!("Parallax experiment {}", exp.dir.display()))
        .unwrap_or_else(|_| CString::new("Parallax experiment").unwrap());
    let host = exp
        .processes
        .first()
        .and_then(|p| p.info.as_ref())
        .map_or("localhost".to_string(), |i| i.host.clone());
    let chost = CString::new(host).unwrap_or_else(|_| CString::new("localhost").unwrap());
    let described: Result<(), Otf2Error> = archive
        .set_creator(&creator)
        .and_then(|()| archive.set_description(&desc))
        .and_then(|()| archive.set_machine_name(&chost));
    described.map_err(|e| e.during("archive properties"))
}

/// Writes every location's events (event files open).
fn write_events(
    archive: &Archive,
    exp: &Experiment,
    locs: &[Loc],
    defs: &mut Defs,
    summary: &mut Summary,
) -> Result<EventTotals, Error> {
    let mut procs: Vec<ProcMap> = exp.processes.iter().map(|_| ProcMap::default()).collect();
    let mut attrs = AttributeList::new()
        .ok_or_else(|| Error::new(ErrorKind::Otf2, "libotf2: no attribute list"))?;
    let mut totals = EventTotals {
        counts: Vec::with_capacity(locs.len()),
        max_t: 0,
    };
    for l in locs {
        let Some(w) = archive.evt_writer(loc_ref(l)) else {
            return Err(Error::new(ErrorKind::Otf2, "libotf2: no event writer"));
        };
        let pm = &mut procs[l.process];
        let p = &exp.processes[l.process];
        let mut lw = LocWriter::new(w, &mut attrs, p, l.process as u32);
        let max_t = &mut totals.max_t;
        let mut tb = Timebase::new(exp, l);
        let read = trace::try_for_each_event(l, |e| {
            let t = tb.ns(e.time);
            *max_t = (*max_t).max(t);
            lw.event(t, &e.kind, l, pm, defs)
        })?;
        totals.counts.push(lw.finish()?);
        summary.add_read(read);
    }
    Ok(totals)
}

/// Local definition files (empty: every id is global), which readers such
/// as otf2-print expect.
fn write_local_defs(archive: &mut Archive, locs: &[Loc]) -> Result<(), Error> {
    archive
        .open_def_files()
        .map_err(|e| e.during("open definition files"))?;
    for l in locs {
        let Some(dw) = archive.def_writer(loc_ref(l)) else {
            return Err(Error::new(ErrorKind::Otf2, "libotf2: no definition writer"));
        };
        dw.close()
            .map_err(|e| e.during("close definition writer"))?;
    }
    archive
        .close_def_files()
        .map_err(|e| e.during("close definition files"))
}

fn loc_ref(l: &Loc) -> LocationRef {
    ((l.rank as u64) << 32) | l.thread as u64
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
