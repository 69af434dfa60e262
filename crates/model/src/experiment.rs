//! Experiment directories: finding and reading the files of a run
//! (see FORMAT.md, "Experiment directory").
//!
//! Opening an experiment reads only definitions and block headers; event
//! streams are read block by block, so memory stays bounded whatever the
//! length of the trace.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::clock::ClockMap;
pub use crate::defs::Summary;
use crate::defs::{ClockSource, Def, Entry, Mode, Probe, ProcessInfo};
use crate::evcodec::{self, EventEncoder};
use crate::event::{Event, RegionId};
use crate::file::{self, BlockReader, FileKind, BLOCK_HEADER_LEN, HEADER_LEN};
use crate::profile::CallTree;
use crate::region::RegionKind;
use crate::spill;
use crate::{Error, ErrorKind};

/// Name of the human-readable summary at the top of an experiment.
pub const MANIFEST: &str = "manifest.json";

/// Largest manifest read (one entry per process: a large job's is some
/// megabytes).
pub const MANIFEST_MAX_BYTES: u64 = 64 << 20;

/// The text of the manifest of experiment `dir`, if it has one that is a
/// regular file of at most [`MANIFEST_MAX_BYTES`] (a manifest is not needed
/// to read an experiment: anything else is left alone).
pub fn manifest_text(dir: &Path) -> Option<String> {
    file::read_text(&dir.join(MANIFEST), MANIFEST_MAX_BYTES).ok()
}

/// Definitions file in a process directory.
pub const DEFS_FILE: &str = "defs.pxd";
/// Profile file in a process directory.
pub const PROFILE_FILE: &str = "profile.pxp";
/// Bytes before the records of an event block: base tick, then a clock
/// sample (tick, monotonic ns).
pub const EVENT_BLOCK_PREFIX: usize = 24;

/// Directory of rank `rank` inside an experiment.
pub fn rank_dir(rank: u32) -> String {
    format!("rank-{rank:05}")
}

/// Event file of thread `thread` inside a process directory.
pub fn events_file(thread: u32) -> String {
    format!("thread-{thread:05}.pxe")
}

/// A region as defined by its process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Generic operation type.
    pub kind: RegionKind,
    /// Name.
    pub name: String,
    /// Source file, may be empty.
    pub file: String,
    /// Source line, 0 if unknown.
    pub line: u32,
}

/// A probe cost measured by a process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Which probe.
    pub probe: Probe,
    /// In which mode.
    pub mode: Mode,
    /// Mean cost, ns.
    pub mean_ns: f64,
    /// Standard deviation of the batch means, ns.
    pub sd_ns: f64,
    /// Cheapest batch mean, ns.
    pub min_ns: f64,
    /// Batches measured.
    pub samples: u32,
    /// Tick at the middle of the measurement (0: unknown).
    pub tick: u64,
}

impl Calibration {
    /// The definition record that stores it.
    pub fn to_def(&self) -> Def {
        Def::Calibration {
            probe: self.probe,
            mode: self.mode,
            mean_ns: self.mean_ns,
            sd_ns: self.sd_ns,
            min_ns: self.min_ns,
            samples: self.samples,
            tick: self.tick,
        }
    }
}

/// An executable segment mapped into a process (see [`Def::Module`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// Load bias: run-time address minus the file's virtual address.
    pub base: u64,
    /// First run-time address of the segment.
    pub start: u64,
    /// Run-time address just past the segment.
    pub end: u64,
    /// The mapped file, may be empty.
    pub path: String,
}

/// A clock comparison with another process (see [`Def::ClockOffset`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockOffset {
    /// The rank compared with.
    pub reference: u32,
    /// This process's CLOCK_MONOTONIC time of the comparison, ns.
    pub local_ns: u64,
    /// The reference's clock minus this process's clock, ns.
    pub offset_ns: i64,
    /// Round trip of the best exchange, ns.
    pub rtt_ns: u64,
}

/// What a process could not record for one reason (see
/// [`Def::Unrecorded`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unrecorded {
    /// Threads not traced (or not measured at all).
    pub threads: u64,
    /// Recorded events that could not be written.
    pub events: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// A location (thread) of a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Thread number within the process (0 is the first thread measured).
    pub thread: u32,
    /// Name, may be empty.
    pub name: String,
    /// Operating-system thread id, 0 if unknown.
    pub os_tid: u32,
    /// Its event file, if it has one.
    pub events: Option<PathBuf>,
    /// Its spill file, when the process stopped while this thread was
    /// recording (killed, or dead before the thread's buffer was written
    /// out): the events recorded since the event file's last block, which
    /// [`Process::events`] reads after that block. A location with one
    /// ended by a kill, and lost nothing it had recorded.
    pub spill: Option<PathBuf>,
}

/// The process property that names its clock where the clock source does
/// not say what it is: an imported trace's times are its writer's ticks.
pub const CLOCK_PROPERTY: &str = "clock";

/// Everything a process recorded except its events.
#[derive(Clone, Debug)]
pub struct Process {
    /// Its directory.
    pub dir: PathBuf,
    /// Rank.
    pub rank: u32,
    /// Facts recorded at start, if the definitions have them.
    pub info: Option<ProcessInfo>,
    /// The clock's source.
    pub clock_source: ClockSource,
    /// Tick-to-ns map.
    pub clock: ClockMap,
    /// Regions by id.
    pub regions: BTreeMap<RegionId, Region>,
    /// Locations by thread number.
    pub locations: BTreeMap<u32, Location>,
    /// Probe costs.
    pub calibration: Vec<Calibration>,
    /// Groups by id.
    pub groups: BTreeMap<u64, Vec<u32>>,
    /// Metrics by id: (name, unit).
    pub metrics: BTreeMap<u32, (String, String)>,
    /// Other facts.
    pub properties: Vec<(String, String)>,
    /// Executable segments mapped into the process, in the order recorded.
    pub modules: Vec<Module>,
    /// Run-time code addresses of regions (compiler-instrumented functions).
    pub code_addresses: BTreeMap<RegionId, u64>,
    /// How regions are entered, where not through `Entry::Guard`.
    pub entries: BTreeMap<RegionId, Entry>,
    /// What complete event files held, by thread number.
    pub summaries: BTreeMap<u32, Summary>,
    /// What the process could not record, by reason.
    pub unrecorded: BTreeMap<String, Unrecorded>,
    /// Calls of compiler-instrumented functions in all, recorded or not,
    /// by (thread, region) (see [`Def::Calls`]).
    pub calls: BTreeMap<(u32, RegionId), u64>,
    /// What calls whose hooks recorded nothing cost in place, timed in the
    /// run, in the order recorded (see [`Def::HookSkippedInRun`]).
    pub skipped_in_run: Vec<SkippedInRun>,
    /// How fast the locations' cores ran the runtime's code, timed in the
    /// run, in the order recorded (see [`Def::SpeedInRun`]).
    pub speed_in_run: Vec<SpeedInRun>,
    /// Clock comparisons with other ranks, in the order recorded.
    pub clock_offsets: Vec<ClockOffset>,
    /// Clean end, ns since the epoch; `None` if the process did not finish.
    pub end_unix_ns: Option<u64>,
    /// Whether a profile file exists.
    pub profile: Option<PathBuf>,
    /// Problems found while opening (damaged or cut-short files); the data
    /// before each problem is still used.
    pub warnings: Vec<String>,
}

/// One [`Def::SpeedInRun`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpeedInRun {
    /// The location's thread number.
    pub thread: u32,
    /// The last tick its window covers.
    pub tick: u64,
    /// Runs of the disabled-probe loop in the window.
    pub samples: u64,
    /// Their ticks in all.
    pub ticks: u64,
}

impl SpeedInRun {
    /// Checks of the disabled probe's flag in one run of the loop (the
    /// calibration's batch).
    pub const CHECKS: u64 = 256;

    /// One check's mean time in the window, ns, at `ns_per_tick`.
    pub fn check_ns(&self, ns_per_tick: f64) -> f64 {
        self.ticks as f64 * ns_per_tick / (self.samples.max(1) * Self::CHECKS) as f64
    }
}

/// One [`Def::HookSkippedInRun`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkippedInRun {
    /// The location's thread number.
    pub thread: u32,
    /// The last tick it covers.
    pub tick: u64,
    /// The calls that recorded nothing it covers.
    pub calls: u64,
    /// How many of them did the hooks' work twice.
    pub decoys: u64,
    /// What one such call cost in place, picoseconds.
    pub ps: u64,
}

/// A whole experiment.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// Its directory.
    pub dir: PathBuf,
    /// Its processes, by rank.
    pub processes: Vec<Process>,
}

impl Experiment {
    /// Opens the experiment in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Experiment, Error> {
        let dir = dir.as_ref();
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        let mut processes = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let path = entry.path();
            // Anything named like the definitions counts (a FIFO, a link):
            // opening it then says what is wrong with it.
            if std::fs::symlink_metadata(path.join(DEFS_FILE)).is_ok() {
                processes.push(Process::open(&path)?);
            }
        }
        if processes.is_empty() {
            return Err(Error::new(
                ErrorKind::NotParallax,
                "not a Parallax experiment: no rank-*/defs.pxd below it".to_string(),
            )
            .at(dir));
        }
        processes.sort_by_key(|p| p.rank);
        Ok(Experiment {
            dir: dir.to_path_buf(),
            processes,
        })
    }

    /// Earliest start (monotonic ns) over all processes: the zero of
    /// experiment time.
    pub fn t0_ns(&self) -> f64 {
        self.processes
            .iter()
            .map(|p| p.clock.ns0)
            .fold(f64::INFINITY, f64::min)
    }

    /// All locations as (process index, location).
    pub fn locations(&self) -> impl Iterator<Item = (usize, &Location)> {
        self.processes
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.locations.values().map(move |l| (i, l)))
    }

    /// Every warning of every process.
    pub fn warnings(&self) -> Vec<String> {
        self.processes
            .iter()
            .flat_map(|p| p.warnings.iter().cloned())
            .collect()
    }
}

impl Process {
    /// Opens the process directory `dir`.
    pub fn open(dir: &Path) -> Result<Process, Error> {
        let defs_path = dir.join(DEFS_FILE);
        let mut warnings = Vec::new();
        let (mut f, len) = file::open_regular(&defs_path)?;
        let (rank, _) = read_header(&mut f, FileKind::Definitions, &defs_path)?;
        let mut p = Process {
            dir: dir.to_path_buf(),
            rank,
            info: None,
            clock_source: ClockSource::Monotonic,
            clock: ClockMap::IDENTITY,
            regions: BTreeMap::new(),
            locations: BTreeMap::new(),
            calibration: Vec::new(),
            groups: BTreeMap::new(),
            metrics: BTreeMap::new(),
            properties: Vec::new(),
            modules: Vec::new(),
            code_addresses: BTreeMap::new(),
            entries: BTreeMap::new(),
            summaries: BTreeMap::new(),
            unrecorded: BTreeMap::new(),
            calls: BTreeMap::new(),
            skipped_in_run: Vec::new(),
            speed_in_run: Vec::new(),
            clock_offsets: Vec::new(),
            end_unix_ns: None,
            profile: None,
            warnings: Vec::new(),
        };
        let mut nominal_hz = 1e9;
        let mut syncs = Vec::new();
        let mut blocks = BlockReader::with_len(BufReader::new(f), HEADER_LEN as u64, len);
        loop {
            let block = match blocks.next_block() {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => {
                    warnings.push(e.at(&defs_path).to_string());
                    break;
                }
            };
            let defs = match Def::decode_all(block) {
                Ok(d) => d,
                Err(e) => {
                    warnings.push(e.at(&defs_path).to_string());
                    break;
                }
            };
            for d in defs {
                match d {
                    Def::Process(info) => p.info = Some(info),
                    Def::Clock {
                        source,
                        nominal_hz: hz,
                    } => {
                        p.clock_source = source;
                        nominal_hz = hz;
                    }
                    Def::ClockSync { tick, mono_ns, .. } => syncs.push((tick, mono_ns)),
                    Def::Calibration {
                        probe,
                        mode,
                        mean_ns,
                        sd_ns,
                        min_ns,
                        samples,
                        tick,
                    } => p.calibration.push(Calibration {
                        probe,
                        mode,
                        mean_ns,
                        sd_ns,
                        min_ns,
                        samples,
                        tick,
                    }),
                    Def::Region {
                        id,
                        kind,
                        name,
                        file,
                        line,
                    } => {
                        p.regions.insert(
                            id,
                            Region {
                                kind,
                                name,
                                file,
                                line,
                            },
                        );
                    }
                    Def::Location {
                        thread,
                        name,
                        os_tid,
                    } => {
                        p.locations.insert(
                            thread,
                            Location {
                                thread,
                                name,
                                os_tid,
                                events: None,
                                spill: None,
                            },
                        );
                    }
                    Def::Group { id, members } => {
                        p.groups.insert(id, members);
                    }
                    Def::Metric { id, name, unit } => {
                        p.metrics.insert(id, (name, unit));
                    }
                    Def::Property { key, value } => p.properties.push((key, value)),
                    Def::End { unix_ns } => p.end_unix_ns = Some(unix_ns),
                    Def::Module {
                        base,
                        start,
                        end,
                        path,
                    } => p.modules.push(Module {
                        base,
                        start,
                        end,
                        path,
                    }),
                    Def::CodeAddress { region, addr } => {
                        p.code_addresses.insert(region, addr);
                    }
                    Def::Entry { region, entry } => {
                        p.entries.insert(region, entry);
                    }
                    Def::Summary { thread, summary } => {
                        p.summaries.insert(thread, summary);
                    }
                    Def::Calls {
                        thread,
                        region,
                        calls,
                    } => {
                        p.calls.insert((thread, region), calls);
                    }
                    Def::HookSkippedInRun {
                        thread,
                        tick,
                        calls,
                        decoys,
                        ps,
                    } => p.skipped_in_run.push(SkippedInRun {
                        thread,
                        tick,
                        calls,
                        decoys,
                        ps,
                    }),
                    Def::SpeedInRun {
                        thread,
                        tick,
                        samples,
                        ticks,
                    } => p.speed_in_run.push(SpeedInRun {
                        thread,
                        tick,
                        samples,
                        ticks,
                    }),
                    Def::Unrecorded {
                        reason,
                        threads,
                        events,
                        bytes,
                    } => {
                        p.unrecorded.insert(
                            reason,
                            Unrecorded {
                                threads,
                                events,
                                bytes,
                            },
                        );
                    }
                    Def::ClockOffset {
                        reference,
                        local_ns,
                        offset_ns,
                        rtt_ns,
                    } => p.clock_offsets.push(ClockOffset {
                        reference,
                        local_ns,
                        offset_ns,
                        rtt_ns,
                    }),
                }
            }
        }
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        for entry in entries {
            let path = entry.map_err(|e| Error::io(dir, e))?.path();
            let ext = path.extension().and_then(|e| e.to_str());
            if matches!(ext, Some("pxe" | "pxp")) {
                // Only regular files are read: a FIFO or a device could
                // block a reader or never end.
                if let Err(e) = file::open_regular(&path) {
                    warnings.push(format!("{e}; skipped"));
                    continue;
                }
            }
            match ext {
                Some("pxe") => {
                    let thread = match event_file_syncs(&path, &mut syncs) {
                        Ok(t) => t,
                        Err(e) => {
                            warnings.push(e.to_string());
                            continue;
                        }
                    };
                    p.location(thread).events = Some(path);
                }
                Some("pxb") => match spill::read(&path) {
                    Ok(s) if s.live => {
                        if s.dropped > 0 {
                            warnings.push(format!(
                                "{}: {} bytes after the last complete record could not be read",
                                path.display(),
                                s.dropped
                            ));
                        }
                        p.location(s.thread).spill = Some(path);
                    }
                    Ok(_) => {}
                    Err(e) => warnings.push(e.to_string()),
                },
                Some("pxp") => p.profile = Some(path),
                _ => {}
            }
        }
        for (reason, u) in &p.unrecorded {
            if u.threads > 0 {
                warnings.push(format!(
                    "rank {}: {} thread{} not traced: {reason}",
                    p.rank,
                    u.threads,
                    if u.threads == 1 { " was" } else { "s were" }
                ));
            }
            if u.events > 0 || u.bytes > 0 {
                warnings.push(format!(
                    "rank {}: {} recorded events ({} bytes) could not be written: {reason}",
                    p.rank, u.events, u.bytes
                ));
            }
            if u.threads == 0 && u.events == 0 && u.bytes == 0 {
                warnings.push(format!("rank {}: {reason}", p.rank));
            }
        }
        p.clock = ClockMap::fit(&syncs, nominal_hz);
        p.warnings = warnings;
        Ok(p)
    }

    /// The location of thread `thread`, known from now on.
    fn location(&mut self, thread: u32) -> &mut Location {
        self.locations.entry(thread).or_insert_with(|| Location {
            thread,
            name: String::new(),
            os_tid: 0,
            events: None,
            spill: None,
        })
    }

    /// Whether the process stopped while it measured (no `End`) and every
    /// thread that was recording then left its spill file: it was killed,
    /// and every event it recorded was kept.
    pub fn killed(&self) -> bool {
        self.end_unix_ns.is_none() && self.locations.values().any(|l| l.spill.is_some())
    }

    /// The module whose segment holds run-time address `addr` (the latest
    /// recorded, if segments were recorded more than once).
    pub fn module_of(&self, addr: u64) -> Option<&Module> {
        self.modules
            .iter()
            .rev()
            .find(|m| m.start <= addr && addr < m.end)
    }

    /// Name of a region as reports show it (at most [`MAX_SHOWN_NAME`]
    /// bytes), or a placeholder for an unknown id.
    pub fn region_name(&self, id: RegionId) -> String {
        match self.regions.get(&id) {
            Some(r) => shortened(&r.name, MAX_SHOWN_NAME),
            None => format!("<region {id}>"),
        }
    }

    /// The call trees of this process's profile file, and the problem that
    /// stopped reading it early, if any.
    pub fn profiles(&self) -> Result<(Vec<CallTree>, Option<Error>), Error> {
        let Some(path) = &self.profile else {
            return Ok((Vec::new(), None));
        };
        let (mut f, len) = file::open_regular(path)?;
        read_header(&mut f, FileKind::Profile, path)?;
        let mut blocks = BlockReader::with_len(BufReader::new(f), HEADER_LEN as u64, len);
        let mut trees = Vec::new();
        loop {
            match blocks.next_block() {
                Ok(Some(b)) => match CallTree::decode(b) {
                    Ok(t) => trees.push(t),
                    Err(e) => return Ok((trees, Some(e.at(path)))),
                },
                Ok(None) => return Ok((trees, None)),
                Err(e) => return Ok((trees, Some(e.at(path)))),
            }
        }
    }

    /// A reader of the events of thread `thread`: its event file, then
    /// what its spill file holds beyond it.
    pub fn events(&self, thread: u32) -> Result<EventReader, Error> {
        let loc = self.locations.get(&thread);
        let events = loc.and_then(|l| l.events.as_deref());
        let spill = loc.and_then(|l| l.spill.as_deref());
        if events.is_none() && spill.is_none() {
            return Err(
                Error::new(ErrorKind::Io, format!("thread {thread} has no event file"))
                    .at(&self.dir),
            );
        }
        EventReader::open_parts(events, spill)
    }
}

/// Longest region name reports show, in bytes: a longer one (only a
/// damaged or crafted file has them) is cut, so that what a report writes
/// per call path stays bounded.
pub const MAX_SHOWN_NAME: usize = 4096;

/// `s` if at most `max` bytes long, else its longest prefix that leaves
/// room for `…` and ends on a character boundary, then `…`.
pub fn shortened(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Reads one location's events block by block: the blocks of its event
/// file, then, if it has one, its spill file's records as a last block.
#[derive(Debug)]
pub struct EventReader {
    path: PathBuf,
    blocks: Option<BlockReader<BufReader<File>>>,
    /// The spill file, until its records were delivered.
    spill: Option<PathBuf>,
    /// Base tick of the last block read: a spill file whose records were
    /// already written as that block (the process died between the two)
    /// adds nothing.
    last_base: Option<u64>,
    /// The block being decoded (for `each_in_block`).
    block: Vec<u8>,
    stack: Vec<RegionId>,
    done: bool,
    /// Rank recorded in the file header.
    pub rank: u32,
    /// Thread recorded in the file header.
    pub thread: u32,
}

impl EventReader {
    /// Opens the event file `path`.
    pub fn open(path: &Path) -> Result<EventReader, Error> {
        EventReader::open_parts(Some(path), None)
    }

    /// Opens a location's event file and spill file (at least one).
    pub fn open_parts(events: Option<&Path>, spill: Option<&Path>) -> Result<EventReader, Error> {
        let (path, blocks, rank, thread) = match events {
            Some(path) => {
                let (mut f, len) = file::open_regular(path)?;
                let (rank, thread) = read_header(&mut f, FileKind::Events, path)?;
                let r = BlockReader::with_len(
                    BufReader::with_capacity(1 << 16, f),
                    HEADER_LEN as u64,
                    len,
                );
                (path, Some(r), rank, thread)
            }
            None => {
                let path = spill.expect("an event file or a spill file");
                let s = spill::read(path)?;
                (path, None, s.rank, s.thread)
            }
        };
        Ok(EventReader {
            path: path.to_path_buf(),
            blocks,
            spill: spill.map(Path::to_path_buf),
            last_base: None,
            block: Vec::new(),
            stack: Vec::new(),
            done: false,
            rank,
            thread,
        })
    }

    /// Appends the next block's events to `out`; `Ok(false)` at the end.
    ///
    /// On a damaged or cut-short block the error is returned and the events
    /// of all earlier blocks have been delivered; later calls return
    /// `Ok(false)`.
    pub fn next_block(&mut self, out: &mut Vec<Event>) -> Result<bool, Error> {
        self.each_in_block(|e| out.push(e))
    }

    /// Calls `f` with each event of the next block as it is decoded (no
    /// copy of the block's events); `Ok(false)` at the end. Errors as
    /// [`EventReader::next_block`].
    pub fn each_in_block(&mut self, f: impl FnMut(Event)) -> Result<bool, Error> {
        let mut block = std::mem::take(&mut self.block);
        let next = self.read_next(&mut block);
        self.block = block;
        let Some(mut time) = next? else {
            return Ok(false);
        };
        // The good prefix of a damaged block is kept: it was checksummed, so
        // only the encoder (not the disk) can have produced the bad record.
        let records = &self.block[EVENT_BLOCK_PREFIX..];
        let r = evcodec::decode_records(records, &mut time, &mut self.stack, f);
        self.settle(r)
    }

    /// Reads the next block into `out` (replacing its contents) and
    /// returns the block's base time and the byte of `out` where its
    /// records begin; `None` at the end. For readers that decode one record
    /// at a time with [`evcodec::read_record`], keeping their own region
    /// stack.
    pub fn next_records(&mut self, out: &mut Vec<u8>) -> Result<Option<(u64, usize)>, Error> {
        let time = self.read_next(out)?;
        Ok(time.map(|t| (t, EVENT_BLOCK_PREFIX)))
    }

    /// The next block of the event file, else the spill file's records as
    /// a block (prefix without a clock sample), into `buf`; its base time.
    fn read_next(&mut self, buf: &mut Vec<u8>) -> Result<Option<u64>, Error> {
        let cut_short = match self.blocks.as_mut() {
            Some(blocks) => match read_block(blocks, buf, &mut self.done, &self.path) {
                Ok(Some(t)) => {
                    self.last_base = Some(t);
                    return Ok(Some(t));
                }
                Ok(None) => None,
                Err(e) => Some(e),
            },
            None => None,
        };
        // A block cut short by the end of the file was being written when
        // the process died: its records are all still in the spill file.
        let cut = cut_short
            .as_ref()
            .is_some_and(|e| e.kind() == ErrorKind::Truncated);
        let Some(path) = self.spill.take().filter(|_| cut_short.is_none() || cut) else {
            return cut_short.map_or(Ok(None), Err);
        };
        let s = spill::read(&path)?;
        if !s.live || s.records.is_empty() || self.last_base.is_some_and(|b| s.base <= b) {
            return Ok(None);
        }
        self.done = false;
        buf.clear();
        buf.extend_from_slice(&s.base.to_le_bytes());
        buf.extend_from_slice(&[0u8; 16]);
        buf.extend_from_slice(&s.records);
        self.last_base = Some(s.base);
        Ok(Some(s.base))
    }

    fn settle(&mut self, r: Result<(), Error>) -> Result<bool, Error> {
        r.map(|()| true).map_err(|e| {
            self.done = true;
            self.spill = None;
            e.at(&self.path)
        })
    }

    /// All remaining events, and the problem that stopped the reading, if
    /// any. Use only for small traces; prefer [`EventReader::next_block`].
    pub fn read_all(mut self) -> (Vec<Event>, Option<Error>) {
        let mut out = Vec::new();
        loop {
            match self.next_block(&mut out) {
                Ok(true) => {}
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }
}

/// Reads the next event block's payload into `buf` (replacing its
/// contents) and returns its base time; `None` at the end. A bad block ends
/// the reading (`done`): the region stack (and so the regions of later
/// leaves) cannot be trusted past it.
fn read_block(
    blocks: &mut BlockReader<BufReader<File>>,
    buf: &mut Vec<u8>,
    done: &mut bool,
    path: &Path,
) -> Result<Option<u64>, Error> {
    if *done {
        return Ok(None);
    }
    match blocks.read_into(buf) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(e) => {
            *done = true;
            return Err(e.at(path));
        }
    }
    match file::u64_at(buf, 0).filter(|_| buf.len() >= EVENT_BLOCK_PREFIX) {
        Some(time) => Ok(Some(time)),
        None => {
            *done = true;
            Err(Error::corrupt(format!(
                "event block of {} bytes is shorter than its {EVENT_BLOCK_PREFIX}-byte prefix",
                buf.len()
            ))
            .at(path))
        }
    }
}

/// Writes a location's event file from whole events, offline (analysis
/// results, tests, imports). The runtime writes the same layout through its
/// own buffers. The file is open only while a block is written: a replay
/// writes every location at once, and an experiment can have more
/// locations than a process may hold files open.
#[derive(Debug)]
pub struct EventWriter {
    enc: EventEncoder,
    block_base: u64,
    block_bytes: usize,
    path: PathBuf,
    /// What the file holds so far (its bytes once written).
    summary: Summary,
}

impl EventWriter {
    /// Creates `path` for location (`rank`, `thread`), with blocks of about
    /// `block_bytes` bytes.
    pub fn create(path: &Path, rank: u32, thread: u32, block_bytes: usize) -> Result<Self, Error> {
        std::fs::write(path, file::header(FileKind::Events, rank, thread))
            .map_err(|e| Error::io(path, e))?;
        Ok(EventWriter {
            enc: EventEncoder::new(0),
            block_base: 0,
            block_bytes: block_bytes.max(64),
            path: path.to_path_buf(),
            summary: Summary {
                bytes: HEADER_LEN as u64,
                ..Summary::default()
            },
        })
    }

    /// Appends one event.
    pub fn push(&mut self, ev: &Event) -> Result<(), Error> {
        if self.enc.is_empty() {
            self.block_base = ev.time;
            self.enc.restart(ev.time);
        }
        self.enc.push(ev);
        self.summary.count(&ev.kind);
        if self.enc.len() >= self.block_bytes {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<(), Error> {
        if self.enc.is_empty() {
            return Ok(());
        }
        let records = self.enc.records();
        let mut payload = Vec::with_capacity(EVENT_BLOCK_PREFIX + records.len());
        payload.extend_from_slice(&self.block_base.to_le_bytes());
        payload.extend_from_slice(&[0u8; 16]);
        payload.extend_from_slice(records);
        let mut block = Vec::with_capacity(BLOCK_HEADER_LEN + payload.len());
        file::push_block(&mut block, &payload);
        let r = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(&block))
            .map_err(|e| Error::io(&self.path, e));
        self.summary.bytes += block.len() as u64;
        let base = self.enc.last_time();
        self.enc.restart(base);
        r
    }

    /// Writes what is buffered; returns what the file holds, for the
    /// process's `Summary` definition of the location.
    pub fn finish(mut self) -> Result<Summary, Error> {
        self.flush_block()?;
        Ok(self.summary)
    }
}

/// Appends `defs` as one block to the definitions file of the process
/// directory `dir`, after checking its header: how offline tools add facts
/// (resolved symbols) to a process that has finished.
pub fn append_defs(dir: &Path, defs: &[Def]) -> Result<(), Error> {
    let path = dir.join(DEFS_FILE);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    read_header(&mut f, FileKind::Definitions, &path)?;
    let mut payload = Vec::new();
    for d in defs {
        d.encode(&mut payload);
    }
    let mut block = Vec::with_capacity(BLOCK_HEADER_LEN + payload.len());
    file::push_block(&mut block, &payload);
    f.write_all(&block).map_err(|e| Error::io(&path, e))
}

/// The definitions of the process directory `dir`, in file order, with its
/// rank: what a tool that writes a derived experiment copies.
pub fn read_defs(dir: &Path) -> Result<(u32, Vec<Def>), Error> {
    let path = dir.join(DEFS_FILE);
    let (mut f, len) = file::open_regular(&path)?;
    let (rank, _) = read_header(&mut f, FileKind::Definitions, &path)?;
    let mut blocks = BlockReader::with_len(BufReader::new(f), HEADER_LEN as u64, len);
    let mut defs = Vec::new();
    while let Some(b) = blocks.next_block().map_err(|e| e.at(&path))? {
        defs.extend(Def::decode_all(b).map_err(|e| e.at(&path))?);
    }
    Ok((rank, defs))
}

/// Writes `defs` as the definitions file of the process directory `dir`.
pub fn write_defs(dir: &Path, rank: u32, defs: &[Def]) -> Result<(), Error> {
    let path = dir.join(DEFS_FILE);
    let mut payload = Vec::new();
    for d in defs {
        d.encode(&mut payload);
    }
    let mut bytes = file::header(FileKind::Definitions, rank, 0).to_vec();
    file::push_block(&mut bytes, &payload);
    std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))
}

/// Writes `trees` (one per location) as the profile file of the process
/// directory `dir`.
pub fn write_profiles(dir: &Path, rank: u32, trees: &[CallTree]) -> Result<(), Error> {
    let path = dir.join(PROFILE_FILE);
    let mut bytes = file::header(FileKind::Profile, rank, 0).to_vec();
    let mut payload = Vec::new();
    for t in trees {
        payload.clear();
        t.encode(&mut payload);
        file::push_block(&mut bytes, &payload);
    }
    std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))
}

/// Scans an event file's block prefixes for clock samples (tick, ns), and
/// returns the file's thread number.
fn event_file_syncs(path: &Path, syncs: &mut Vec<(u64, u64)>) -> Result<u32, Error> {
    let (mut f, len) = file::open_regular(path)?;
    let (_, thread) = read_header(&mut f, FileKind::Events, path)?;
    let mut at = HEADER_LEN as u64;
    let mut h = [0u8; BLOCK_HEADER_LEN + EVENT_BLOCK_PREFIX];
    while at + h.len() as u64 <= len {
        f.seek(SeekFrom::Start(at))
            .map_err(|e| Error::io(path, e))?;
        f.read_exact(&mut h).map_err(|e| Error::io(path, e))?;
        if h[0..4] != file::BLOCK_MAGIC {
            break;
        }
        let n = u32::from_le_bytes(h[4..8].try_into().expect("4 bytes")) as u64;
        let tick = file::u64_at(&h, BLOCK_HEADER_LEN + 8).unwrap_or(0);
        let ns = file::u64_at(&h, BLOCK_HEADER_LEN + 16).unwrap_or(0);
        if at + BLOCK_HEADER_LEN as u64 + n > len {
            break;
        }
        // A block too short for its prefix has no clock sample (the bytes
        // read past it belong to the next block).
        if ns != 0 && n >= EVENT_BLOCK_PREFIX as u64 {
            syncs.push((tick, ns));
        }
        at += BLOCK_HEADER_LEN as u64 + n;
    }
    Ok(thread)
}

fn read_header(f: &mut File, kind: FileKind, path: &Path) -> Result<(u32, u32), Error> {
    let mut h = [0u8; HEADER_LEN];
    let mut n = 0;
    while n < HEADER_LEN {
        match f.read(&mut h[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    file::parse_header(kind, &h[..n]).map_err(|e| e.at(path))
}
