//! Streaming an experiment's events location by location, with times in
//! nanoseconds since the start of the experiment, and the pairing of
//! messages and thread hand-offs that trace formats draw as arrows.

use std::collections::HashSet;

use parallax_model::clock::ClockMap;
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{Experiment, Process};

use crate::{Error, ErrorKind, Selection};

/// One location to export.
#[derive(Clone, Debug)]
pub struct Loc<'a> {
    /// Index of its process in the experiment.
    pub process: usize,
    /// Its process.
    pub p: &'a Process,
    /// Rank of its process.
    pub rank: u32,
    /// Thread number.
    pub thread: u32,
    /// Thread name (may be empty).
    pub name: String,
    /// Whether it has an event file.
    pub has_events: bool,
}

impl Loc<'_> {
    /// A label for people: `rank 0 thread 1 (worker-0)`.
    pub fn label(&self) -> String {
        if self.name.is_empty() {
            format!("rank {} thread {}", self.rank, self.thread)
        } else {
            format!("rank {} thread {} ({})", self.rank, self.thread, self.name)
        }
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

/// Each of `locs` with whether it is the first of its rank: trace formats
/// describe a process before its first thread.
pub fn first_of_rank<'l, 'a>(locs: &'l [Loc<'a>]) -> impl Iterator<Item = (bool, &'l Loc<'a>)> {
    let mut seen = HashSet::new();
    locs.iter().map(move |l| (seen.insert(l.rank), l))
}

/// The selected locations, ordered by (rank, thread). Fails when the
/// selection names locations that do not exist.
pub fn locations<'a>(exp: &'a Experiment, sel: &Selection) -> Result<Vec<Loc<'a>>, Error> {
    let mut out = Vec::new();
    for (pi, p) in exp.processes.iter().enumerate() {
        for l in p.locations.values() {
            if sel.contains(p.rank, l.thread) {
                out.push(Loc {
                    process: pi,
                    p,
                    rank: p.rank,
                    thread: l.thread,
                    name: l.name.clone(),
                    has_events: l.events.is_some() || l.spill.is_some(),
                });
            }
        }
    }
    for &(r, t) in &sel.locations {
        if !out
            .iter()
            .any(|l| l.rank == r && t.is_none_or(|t| t == l.thread))
        {
            let what = match t {
                Some(t) => format!("location {r}:{t}"),
                None => format!("rank {r}"),
            };
            return Err(Error::new(
                ErrorKind::Usage,
                format!("the experiment has no {what}"),
            ));
        }
    }
    Ok(out)
}

/// Total bytes of the event files of the selected locations.
pub fn native_bytes(exp: &Experiment, sel: &Selection) -> u64 {
    exp.processes
        .iter()
        .flat_map(|p| {
            p.locations
                .values()
                .filter(move |l| sel.contains(p.rank, l.thread))
        })
        .filter_map(|l| l.events.as_ref())
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|m| m.len())
        .sum()
}

/// Maps a process's ticks to integer ns since the experiment's start,
/// never going backwards.
#[derive(Clone, Copy, Debug)]
pub struct Timebase {
    clock: ClockMap,
    t0: f64,
    last: u64,
}

impl Timebase {
    /// The time base of process `p` in `exp`.
    pub fn new(exp: &Experiment, p: &Process) -> Timebase {
        let t0 = exp.t0_ns();
        Timebase {
            clock: p.clock,
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

/// Calls `f` with every event of location `loc` and its time in ns since
/// the experiment's start, as each is decoded (no list of a block's
/// events is made: memory stays that of one block's bytes). Returns the
/// number of events and the problem that stopped the reading early, if
/// any (the events before it were delivered).
pub fn for_each_event<F>(
    exp: &Experiment,
    loc: &Loc,
    mut f: F,
) -> Result<(u64, Option<String>), Error>
where
    F: FnMut(u64, &Event) -> Result<(), Error>,
{
    if !loc.has_events {
        return Ok((0, None));
    }
    let mut reader = loc.p.events(loc.thread)?;
    let mut tb = Timebase::new(exp, loc.p);
    let mut n = 0u64;
    // The first error of `f`: the events after it are passed over.
    let mut failed = None;
    loop {
        let r = reader.each_in_block(|e| {
            if failed.is_none() {
                n += 1;
                if let Err(err) = f(tb.ns(e.time), &e) {
                    failed = Some(err);
                }
            }
        });
        if let Some(err) = failed {
            return Err(err);
        }
        match r {
            Ok(true) => {}
            Ok(false) => return Ok((n, None)),
            Err(e) => return Ok((n, Some(e.to_string()))),
        }
    }
}

/// Name of metric `id` of process `p`, a placeholder without a definition.
pub fn metric_name(p: &Process, id: u32) -> String {
    p.metrics
        .get(&id)
        .map_or_else(|| format!("metric {id}"), |m| m.0.clone())
}

/// The fields of an event other than enter/leave, as (name, value) pairs,
/// for formats that show them as arguments.
pub fn args(kind: &EventKind) -> Vec<(&'static str, u64)> {
    use EventKind::*;
    match *kind {
        Send {
            peer,
            tag,
            comm,
            bytes,
        }
        | Recv {
            peer,
            tag,
            comm,
            bytes,
        } => vec![
            ("peer", peer as u64),
            ("tag", tag as u64),
            ("comm", comm),
            ("bytes", bytes),
        ],
        IsendBegin {
            peer,
            tag,
            comm,
            bytes,
            request,
        }
        | IrecvComplete {
            peer,
            tag,
            comm,
            bytes,
            request,
        } => vec![
            ("peer", peer as u64),
            ("tag", tag as u64),
            ("comm", comm),
            ("bytes", bytes),
            ("request", request),
        ],
        IsendComplete { request } | IrecvBegin { request } => vec![("request", request)],
        CollectiveEnd {
            op,
            comm,
            root,
            sent,
            received,
        } => vec![
            ("op", op as u64),
            ("comm", comm),
            ("root", root as u64),
            ("sent", sent),
            ("received", received),
        ],
        LockRequest { lock } | LockAcquired { lock } | LockRelease { lock } => {
            vec![("lock", lock)]
        }
        SemPost { sem } | SemAcquired { sem } => vec![("sem", sem)],
        Advance { var, index } | AwaitDone { var, index } => {
            vec![("var", var), ("index", index)]
        }
        Iteration { loop_id, index } => vec![("loop", loop_id), ("index", index)],
        Skipped { calls } => vec![("calls", calls)],
        ThreadCreate { token }
        | ThreadBegin { token }
        | ThreadEnd { token }
        | ThreadJoin { token } => vec![("token", token)],
        Fork { team, size } => vec![("team", team), ("size", size as u64)],
        Join { team } => vec![("team", team)],
        Put {
            target,
            bytes,
            addr,
        }
        | Get {
            target,
            bytes,
            addr,
        }
        | Atomic {
            target,
            bytes,
            addr,
        } => vec![("target", target as u64), ("bytes", bytes), ("addr", addr)],
        RmaComplete { target } => vec![("target", target as u64)],
        ValueReached { addr } => vec![("addr", addr)],
        Metric { metric, value } => vec![("metric", metric as u64), ("value", value as u64)],
        Mark { mark, value } => vec![("mark", mark as u64), ("value", value as u64)],
        Enter { .. } | Leave { .. } | FlushBegin | FlushEnd | CollectiveBegin => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_parses() {
        let mut s = Selection::default();
        s.add("1:2").unwrap();
        s.add("3").unwrap();
        assert!(s.add("x").is_err());
        assert!(s.contains(1, 2) && !s.contains(1, 3) && s.contains(3, 9));
    }
}
