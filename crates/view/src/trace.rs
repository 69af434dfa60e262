//! The locations of an experiment and streaming over their events: the
//! one way every analysis, export and report reads events.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use parallax_model::clock::ClockMap;
use parallax_model::evcodec::{self, Record};
use parallax_model::event::{Event, EventKind, RegionId};
use parallax_model::experiment::{EventReader, Experiment, Summary};
use parallax_model::{Error, ErrorKind};

use crate::selection::{BadSelection, Selection};

/// A location of an experiment: a thread of a process.
#[derive(Clone, Debug)]
pub struct Loc {
    /// Index of its process in the experiment (`exp.processes[process]`).
    pub process: usize,
    /// Rank of its process.
    pub rank: u32,
    /// Thread number in its process.
    pub thread: u32,
    /// Thread name (may be empty).
    pub name: String,
    /// Its event file, if it has one.
    pub events: Option<PathBuf>,
    /// Its spill file: the events recorded after the event file's, when
    /// its process was killed (the only file of a thread killed before its
    /// first flush).
    pub spill: Option<PathBuf>,
    /// Size of the event file, else of the spill file: a measure of the
    /// work it takes.
    pub bytes: u64,
    /// Its process's clock.
    pub clock: ClockMap,
    /// What the writer recorded of the event file, if the file is still
    /// as long as when it did.
    pub summary: Option<Summary>,
    /// The number of its first event whose measured time was made up (the
    /// liberal re-scheduling of a loop moved events here): from there on,
    /// its waits and posts carry no measured timing.
    pub rewritten_from: Option<u64>,
}

/// Every location of `exp`, ordered by (rank, thread).
fn every(exp: &Experiment) -> Vec<Loc> {
    let mut v = Vec::new();
    for (pi, p) in exp.processes.iter().enumerate() {
        for l in p.locations.values() {
            let path = l.events.as_ref().or(l.spill.as_ref());
            let bytes = path
                .and_then(|path| std::fs::metadata(path).ok())
                .map_or(0, |m| m.len());
            let summary = path
                .and_then(|_| p.summaries.get(&l.thread))
                .filter(|s| s.bytes == bytes);
            v.push(Loc {
                process: pi,
                rank: p.rank,
                thread: l.thread,
                name: l.name.clone(),
                events: l.events.clone(),
                spill: l.spill.clone(),
                bytes,
                clock: p.clock,
                summary: summary.cloned(),
                rewritten_from: None,
            });
        }
    }
    v
}

/// The traced locations of `exp` (those with events), ordered by (rank,
/// thread).
pub fn locations(exp: &Experiment) -> Vec<Loc> {
    let mut v = every(exp);
    v.retain(Loc::has_events);
    v
}

/// The locations of `exp` in `sel`, with events or not, ordered by (rank,
/// thread). Fails when `sel` names locations that do not exist.
pub fn selected(exp: &Experiment, sel: &Selection) -> Result<Vec<Loc>, BadSelection> {
    let mut v = every(exp);
    let have: Vec<(u32, u32)> = v.iter().map(|l| (l.rank, l.thread)).collect();
    sel.check(&have)?;
    v.retain(|l| sel.contains(l.rank, l.thread));
    Ok(v)
}

/// Each of `locs` with whether it is the first of its rank: trace formats
/// describe a process before its first thread.
pub fn first_of_rank(locs: &[Loc]) -> impl Iterator<Item = (bool, &Loc)> {
    let mut seen = HashSet::new();
    locs.iter().map(move |l| (seen.insert(l.rank), l))
}

/// Total bytes of the event files of `locs` (spill files not counted).
pub fn native_bytes(locs: &[Loc]) -> u64 {
    locs.iter()
        .filter(|l| l.events.is_some())
        .map(|l| l.bytes)
        .sum()
}

impl Loc {
    /// Whether it has an event file or a spill file.
    pub fn has_events(&self) -> bool {
        self.events.is_some() || self.spill.is_some()
    }

    /// The file its events start in (empty without events).
    pub fn path(&self) -> &Path {
        self.events
            .as_deref()
            .or(self.spill.as_deref())
            .unwrap_or(Path::new(""))
    }

    /// A reader of its events: the event file's, then the spill file's.
    pub fn reader(&self) -> Result<EventReader, Error> {
        if !self.has_events() {
            return Err(Error::new(
                ErrorKind::Io,
                format!("thread {} has no event file", self.thread),
            ));
        }
        EventReader::open_parts(self.events.as_deref(), self.spill.as_deref())
    }

    /// A label for people: `rank 0 thread 1 (worker-0)`.
    pub fn label(&self) -> String {
        format!("rank {} {}", self.rank, self.thread_name())
    }

    /// Its name within its process: `thread 1 (worker-0)`.
    pub fn thread_name(&self) -> String {
        if self.name.is_empty() {
            format!("thread {}", self.thread)
        } else {
            format!("thread {} ({})", self.thread, self.name)
        }
    }
}

/// Maps a location's ticks to integer ns since the experiment's start,
/// never going backwards: the time trace formats write.
#[derive(Clone, Copy, Debug)]
pub struct Timebase {
    clock: ClockMap,
    t0: f64,
    last: u64,
}

impl Timebase {
    /// The time base of `loc` in `exp`.
    pub fn new(exp: &Experiment, loc: &Loc) -> Timebase {
        let t0 = exp.t0_ns();
        Timebase {
            clock: loc.clock,
            t0: if t0.is_finite() { t0 } else { 0.0 },
            last: 0,
        }
    }

    /// Nanoseconds since the experiment's start of `tick`.
    #[inline]
    pub fn ns(&mut self, tick: u64) -> u64 {
        let v = (self.clock.ns(tick) - self.t0).round();
        let v = if v > 0.0 { v as u64 } else { 0 };
        self.last = self.last.max(v);
        self.last
    }
}

/// How far the stream of a location's events went.
#[derive(Debug, Default)]
pub struct Streamed {
    /// The events delivered.
    pub events: u64,
    /// The problem that ended the stream early, if any: the events before
    /// it were all delivered.
    pub problem: Option<Error>,
}

/// Calls `f` with every event of `loc`, as each is decoded (no list of a
/// block's events is made: memory stays that of one block's bytes), until
/// `f` fails: its error is returned. A location without events has none.
/// Times are the location's clock ticks (`loc.clock.ns`, [`Timebase`]).
pub fn try_for_each_event<E: From<Error>>(
    loc: &Loc,
    mut f: impl FnMut(&Event) -> Result<(), E>,
) -> Result<Streamed, E> {
    let mut out = Streamed::default();
    if !loc.has_events() {
        return Ok(out);
    }
    let mut r = loc.reader()?;
    // The first error of `f`: the rest of its block is passed over.
    let mut failed = None;
    loop {
        let read = r.each_in_block(|e| {
            if failed.is_none() {
                out.events += 1;
                if let Err(err) = f(&e) {
                    failed = Some(err);
                }
            }
        });
        if let Some(err) = failed {
            return Err(err);
        }
        match read {
            Ok(true) => {}
            Ok(false) => return Ok(out),
            Err(e) => {
                out.problem = Some(e);
                return Ok(out);
            }
        }
    }
}

/// [`try_for_each_event`] with an `f` that cannot fail.
pub fn for_each_event(loc: &Loc, mut f: impl FnMut(&Event)) -> Result<Streamed, Error> {
    try_for_each_event(loc, |e| {
        f(e);
        Ok::<(), Error>(())
    })
}

/// Where a record stands in its location's stream: its time and its
/// predecessor's (clock ticks; `None` for the first record) and the kind of
/// its predecessor's probe: 0 enter, 1 leave, 2 any other.
#[derive(Clone, Copy, Debug)]
pub struct Prior {
    /// The record's time.
    pub ticks: u64,
    /// The time of the record before it.
    pub prev: Option<u64>,
    /// The probe of the record before it.
    pub prev_probe: u8,
}

/// Calls `f` with every record of `loc` other than enters and leaves, where
/// it stands, and the time of the record after it (clock ticks; `None` for
/// the last): for passes that look at a few kinds of event (enters and
/// leaves only move the time on, in a tight loop). Returns the problem that
/// ended the stream early, if any; records before it were all delivered.
pub fn walk_others(
    loc: &Loc,
    mut f: impl FnMut(EventKind, Prior, Option<u64>),
) -> Result<Option<Error>, Error> {
    let mut r = loc.reader()?;
    let mut block = Vec::new();
    let mut last: Option<u64> = None;
    let mut probe = 2u8;
    // The record waiting for the time of the next one.
    let mut pending: Option<(EventKind, Prior)> = None;
    let last_one = |pending: Option<(EventKind, Prior)>,
                    f: &mut dyn FnMut(EventKind, Prior, Option<u64>)| {
        if let Some((kind, at)) = pending {
            f(kind, at, None);
        }
    };
    loop {
        let (mut t, mut i) = match r.next_records(&mut block) {
            Ok(Some(at)) => at,
            Ok(None) => {
                last_one(pending, &mut f);
                return Ok(None);
            }
            Err(e) => {
                last_one(pending, &mut f);
                return Ok(Some(e));
            }
        };
        loop {
            let start = i;
            while let Some((delta, region, end)) = evcodec::read_plain(&block, i) {
                t = t.saturating_add(delta);
                i = end;
                probe = region.is_none() as u8;
                if let Some((kind, at)) = pending.take() {
                    f(kind, at, Some(t));
                }
            }
            if i > start {
                last = Some(t);
            }
            if i >= block.len() {
                break;
            }
            let (delta, rec, next) = match evcodec::read_record(&block, i) {
                Ok(r) => r,
                Err(e) => {
                    last_one(pending, &mut f);
                    return Ok(Some(e.at(loc.path())));
                }
            };
            t = t.saturating_add(delta);
            i = next;
            if let Some((kind, at)) = pending.take() {
                f(kind, at, Some(t));
            }
            probe = match rec {
                Record::Enter(_) => 0,
                Record::Leave => 1,
                Record::Other(kind) => {
                    let at = Prior {
                        ticks: t,
                        prev: last,
                        prev_probe: probe,
                    };
                    pending = Some((kind, at));
                    2
                }
            };
            last = Some(t);
        }
    }
}

/// A location's events one at a time, decoded as they are asked for (a
/// block's bytes at a time in memory): for passes that stop at an event and
/// resume there later (replays).
#[derive(Debug)]
pub struct Stream {
    reader: Option<EventReader>,
    path: PathBuf,
    block: Vec<u8>,
    /// Byte of the next record in `block`.
    pos: usize,
    /// Time of the last event consumed (or the block's base time).
    time: u64,
    stack: Vec<RegionId>,
    /// The next event, decoded by `peek`, and the byte after its record.
    next: Option<(Event, usize)>,
    /// The problem that ended the stream early, if any.
    pub warning: Option<String>,
}

impl Stream {
    /// The events of `loc`.
    pub fn open(loc: &Loc) -> Result<Stream, Error> {
        Ok(Stream {
            reader: Some(loc.reader()?),
            path: loc.path().to_path_buf(),
            block: Vec::new(),
            pos: 0,
            time: 0,
            stack: Vec::new(),
            next: None,
            warning: None,
        })
    }

    /// The next event, without consuming it; `None` at the end.
    #[inline(always)]
    pub fn peek(&mut self) -> Option<Event> {
        if let Some((e, _)) = self.next {
            return Some(e);
        }
        while self.pos >= self.block.len() {
            let r = self.reader.as_mut()?;
            self.pos = 0;
            match r.next_records(&mut self.block) {
                Ok(Some((base, start))) => (self.time, self.pos) = (base, start),
                Ok(None) => {
                    self.block.clear();
                    self.reader = None;
                }
                Err(e) => {
                    self.block.clear();
                    self.warning = Some(e.to_string());
                    self.reader = None;
                }
            }
        }
        match evcodec::read_record(&self.block, self.pos) {
            Ok((delta, rec, end)) => {
                let e = Event {
                    time: self.time.saturating_add(delta),
                    kind: rec.resolve(&mut self.stack),
                };
                self.next = Some((e, end));
                Some(e)
            }
            Err(err) => {
                // The events before a damaged record count; the ones after
                // it cannot be placed.
                self.warning = Some(err.at(&self.path).to_string());
                self.block.clear();
                self.pos = 0;
                self.reader = None;
                None
            }
        }
    }

    /// Consumes the next event if it is an enter or a leave that reads
    /// without checks (most do): its time in ticks and, for an enter, its
    /// region. `None` leaves the stream as it was; `peek` reads the rest.
    #[inline(always)]
    pub fn next_plain(&mut self) -> Option<(u64, Option<RegionId>)> {
        if self.next.is_some() {
            return None;
        }
        let (delta, region, end) = evcodec::read_plain(&self.block, self.pos)?;
        self.time = self.time.saturating_add(delta);
        self.pos = end;
        match region {
            Some(r) => self.stack.push(r),
            None => {
                self.stack.pop();
            }
        }
        Some((self.time, region))
    }

    /// Consumes the event `peek` returned.
    #[inline]
    pub fn advance(&mut self) {
        if let Some((e, end)) = self.next.take() {
            self.time = e.time;
            self.pos = end;
        }
    }
}
