//! The locations of an experiment and streaming over their events, with
//! times in nanoseconds of experiment time (zero at the earliest start).

use std::path::PathBuf;

use parallax_model::clock::ClockMap;
use parallax_model::event::Event;
use parallax_model::experiment::{EventReader, Experiment};
use parallax_model::Error;

/// A location with an event stream.
#[derive(Clone, Debug)]
pub struct Loc {
    /// Index of its process in the experiment.
    pub process: usize,
    /// Rank of its process.
    pub rank: u32,
    /// Thread number in its process.
    pub thread: u32,
    /// Its event file.
    pub path: PathBuf,
    /// Size of the event file, a measure of the work it takes.
    pub bytes: u64,
    /// Its process's clock.
    pub clock: ClockMap,
}

/// The traced locations of `exp`, ordered by (rank, thread).
pub fn locations(exp: &Experiment) -> Vec<Loc> {
    let mut v = Vec::new();
    for (pi, p) in exp.processes.iter().enumerate() {
        for l in p.locations.values() {
            if let Some(path) = &l.events {
                let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
                v.push(Loc {
                    process: pi,
                    rank: p.rank,
                    thread: l.thread,
                    path: path.clone(),
                    bytes,
                    clock: p.clock,
                });
            }
        }
    }
    v
}

/// Calls `f` with every event of `loc` and its time in ns since `t0_ns`,
/// block by block (memory stays bounded). Returns the problem that ended
/// the stream early, if any; events before it were all delivered.
pub fn for_each_event(
    loc: &Loc,
    t0_ns: f64,
    mut f: impl FnMut(&Event, f64),
) -> Result<Option<Error>, Error> {
    let mut r = EventReader::open(&loc.path)?;
    let mut batch = Vec::new();
    loop {
        batch.clear();
        let more = r.next_block(&mut batch);
        for e in &batch {
            f(e, loc.clock.ns(e.time) - t0_ns);
        }
        match more {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Ok(Some(e)),
        }
    }
}

/// A location's events one at a time, read block by block: for passes that
/// stop at an event and resume there later (replays).
#[derive(Debug)]
pub struct Stream {
    reader: Option<EventReader>,
    batch: Vec<Event>,
    pos: usize,
    /// The problem that ended the stream early, if any.
    pub warning: Option<String>,
}

impl Stream {
    /// The events of `loc`.
    pub fn open(loc: &Loc) -> Result<Stream, Error> {
        Ok(Stream {
            reader: Some(EventReader::open(&loc.path)?),
            batch: Vec::new(),
            pos: 0,
            warning: None,
        })
    }

    /// The next event, without consuming it; `None` at the end.
    #[inline]
    pub fn peek(&mut self) -> Option<Event> {
        while self.pos >= self.batch.len() {
            let r = self.reader.as_mut()?;
            self.batch.clear();
            self.pos = 0;
            let more = match r.next_block(&mut self.batch) {
                Ok(m) => m,
                Err(e) => {
                    self.warning = Some(e.to_string());
                    false
                }
            };
            if !more {
                self.reader = None;
            }
        }
        Some(self.batch[self.pos])
    }

    /// Consumes the event `peek` returned.
    #[inline]
    pub fn advance(&mut self) {
        self.pos += 1;
    }
}
