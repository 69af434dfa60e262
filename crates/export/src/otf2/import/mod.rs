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

mod events;
mod globals;
mod kinds;

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use parallax_model::defs::Def;
use parallax_model::experiment::{events_file, rank_dir, EventWriter, DEFS_FILE};
use parallax_model::file::{self, FileKind};

use super::libotf2::{EvtCallbacks, Reader, StringRef};
use super::ImportOptions;
use crate::{Error, ErrorKind, Summary};
use events::LocReader;
use globals::{EventMaps, Globals, Thread};

/// Region ids of marks (one per parameter) start here.
const MARK_BASE: u32 = 1 << 30;

pub fn import(anchor: &Path, out: &Path, opts: &ImportOptions) -> Result<Summary, Error> {
    let started = Instant::now();
    check_archive(anchor)?;
    let cpath = CString::new(anchor.as_os_str().as_encoded_bytes().to_vec())
        .map_err(|_| Error::new(ErrorKind::Usage, "bad path").at(anchor))?;
    let mut summary = Summary::default();
    let Some(mut reader) = Reader::open(&cpath) else {
        return Err(Error::new(ErrorKind::Otf2, "libotf2 cannot open this archive").at(anchor));
    };
    reader
        .serial_collectives()
        .map_err(|e| e.during("collective callbacks").at(anchor))?;
    let mut g = read_globals(&reader, anchor)?;
    g.sort();
    let threads = g.threads();
    if threads.is_empty() {
        return Err(Error::new(ErrorKind::Otf2, "the archive defines no locations").at(anchor));
    }
    let (mut common, clock) = g.clock();
    let maps = g.common_defs(&threads, opts, &mut common);
    for rank in 0..g.loc_groups.len() as u32 {
        let dir = out.join(rank_dir(rank));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    }
    // The events first: they name the program (`ProgramBegin`), which the
    // definitions hold.
    let programs = read_events(&mut reader, &threads, &maps, anchor, out, &mut summary)?;
    for (i, lg) in g.loc_groups.iter().enumerate() {
        let rank = i as u32;
        let program = match programs.get(&rank) {
            Some((name, args, exit_status)) => Program {
                name: g.s(*name),
                args: args.iter().map(|&a| g.s(a)).collect(),
                exit_status: *exit_status,
            },
            None => Program {
                name: format!("imported from {}", anchor.display()),
                ..Program::default()
            },
        };
        let defs = g.process_defs(rank, lg, &threads, &common, &clock, &program);
        write_defs(&out.join(rank_dir(rank)).join(DEFS_FILE), rank, &defs)?;
    }
    summary.span_ns = Some(clock.span_ns);
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// A program as a `ProgramBegin` record names it (string refs), with the
/// exit status of its `ProgramEnd`.
type NamedProgram = (StringRef, Vec<StringRef>, Option<i64>);

/// A process's program as its trace names it.
#[derive(Clone, Debug, Default)]
pub(super) struct Program {
    /// Its name (a path, as the writer saw it).
    pub(super) name: String,
    /// Its arguments.
    pub(super) args: Vec<String>,
    /// Its exit status, if the trace recorded its end.
    pub(super) exit_status: Option<i64>,
}

/// Reads the archive's global definitions.
fn read_globals(reader: &Reader, anchor: &Path) -> Result<Globals, Error> {
    let Some(mut gdr) = reader.global_def_reader() else {
        return Err(
            Error::new(ErrorKind::Otf2, "the archive has no global definitions").at(anchor),
        );
    };
    let mut g = Globals::default();
    gdr.read_all(&mut g)
        .map_err(|e| e.during("reading the global definitions").at(anchor))?;
    Ok(g)
}

/// Reads every thread's events into its event file; the program of each
/// rank whose trace names it.
fn read_events(
    reader: &mut Reader,
    threads: &[Thread],
    maps: &EventMaps,
    anchor: &Path,
    out: &Path,
    summary: &mut Summary,
) -> Result<BTreeMap<u32, NamedProgram>, Error> {
    for t in threads {
        reader
            .select_location(t.loc)
            .map_err(|e| e.during("select location").at(anchor))?;
    }
    if reader.open_def_files().is_ok() {
        // Local definitions (mapping tables) are libotf2's own business; a
        // location whose are unreadable still reads.
        for t in threads {
            if let Some(mut dr) = reader.def_reader(t.loc) {
                let _ = dr.read_all();
            }
        }
        let _ = reader.close_def_files();
    }
    reader
        .open_evt_files()
        .map_err(|e| e.during("open event files").at(anchor))?;
    let result = read_locations(reader, threads, maps, out, summary);
    let _ = reader.close_evt_files();
    result
}

/// Reads each thread's events (event files open); the program of each
/// rank whose trace names it.
fn read_locations(
    reader: &Reader,
    threads: &[Thread],
    maps: &EventMaps,
    out: &Path,
    summary: &mut Summary,
) -> Result<BTreeMap<u32, NamedProgram>, Error> {
    let mut programs = BTreeMap::new();
    let callbacks = EvtCallbacks::<LocReader>::new().map_err(|e| e.during("event callbacks"))?;
    let evt_readers: Vec<_> = threads.iter().map(|t| reader.evt_reader(t.loc)).collect();
    for (t, er) in threads.iter().zip(evt_readers) {
        let (rank, th) = (t.rank, t.thread);
        let Some(mut er) = er else {
            summary
                .warnings
                .push(format!("location {rank}:{th}: no events in the archive"));
            continue;
        };
        let path = out.join(rank_dir(rank)).join(events_file(th));
        let w = EventWriter::create(&path, rank, th, 1 << 16)?;
        let mut st = LocReader::new(w, maps);
        let read = er.read_all(&callbacks, &mut st);
        let w = st.finish();
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        if let Err(e) = read {
            summary.warnings.push(format!(
                "location {rank}:{th}: reading stopped after {} events: {e}",
                st.count
            ));
        }
        summary.events += st.count;
        if let Some((name, args)) = st.program.take() {
            programs.entry(rank).or_insert((name, args, st.exit_status));
        }
        if let Some(w) = w {
            w.finish()?;
        }
    }
    Ok(programs)
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
