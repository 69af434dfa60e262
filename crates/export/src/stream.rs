//! Streaming an experiment's events location by location, with times in
//! nanoseconds since the start of the experiment, and the pairing of
//! messages and thread hand-offs that trace formats draw as arrows.

use std::collections::{HashMap, HashSet};

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

/// Which end of an arrow an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowEnd {
    /// The arrow starts here.
    Start(u64),
    /// The arrow ends here.
    End(u64),
}

/// Gives messages and thread hand-offs arrow ids that both ends compute
/// independently: the n-th send from rank a to rank b with a tag on a
/// communicator matches the n-th receive at b from a with that tag and
/// communicator (MPI's non-overtaking rule), and a thread's creation
/// matches its beginning by token.
#[derive(Debug, Default)]
pub struct Flows {
    sends: HashMap<(u64, u32, u32, u32), u64>,
    recvs: HashMap<(u64, u32, u32, u32), u64>,
}

impl Flows {
    /// Channels (communicator, sender, receiver, tag) counted so far: what
    /// its memory grows with.
    pub fn channels(&self) -> usize {
        self.sends.len() + self.recvs.len()
    }

    /// The arrow end of event `kind` at rank `rank`, if it has one.
    pub fn of(&mut self, rank: u32, kind: &EventKind) -> Option<FlowEnd> {
        use EventKind::*;
        Some(match *kind {
            Send {
                peer, tag, comm, ..
            }
            | IsendBegin {
                peer, tag, comm, ..
            } => {
                let key = (comm, rank, peer, tag);
                let n = self.sends.entry(key).or_insert(0);
                *n += 1;
                FlowEnd::Start(hash(&[1, comm, rank as u64, peer as u64, tag as u64, *n]))
            }
            Recv {
                peer, tag, comm, ..
            }
            | IrecvComplete {
                peer, tag, comm, ..
            } => {
                let key = (comm, peer, rank, tag);
                let n = self.recvs.entry(key).or_insert(0);
                *n += 1;
                FlowEnd::End(hash(&[1, comm, peer as u64, rank as u64, tag as u64, *n]))
            }
            ThreadCreate { token } => FlowEnd::Start(hash(&[2, rank as u64, token])),
            ThreadBegin { token } => FlowEnd::End(hash(&[2, rank as u64, token])),
            ThreadEnd { token } => FlowEnd::Start(hash(&[3, rank as u64, token])),
            ThreadJoin { token } => FlowEnd::End(hash(&[3, rank as u64, token])),
            _ => return None,
        })
    }
}

/// A 64-bit mix of `v` (splitmix64 steps), never 0.
pub fn hash(v: &[u64]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    for &x in v {
        h ^= x;
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    h.max(1)
}

/// Name of metric `id` of process `p`, a placeholder without a definition.
pub fn metric_name(p: &Process, id: u32) -> String {
    p.metrics
        .get(&id)
        .map_or_else(|| format!("metric {id}"), |m| m.0.clone())
}

/// Name of a region of process `p`, with placeholders for ids without a
/// definition.
pub fn region_name(p: &Process, id: u32) -> String {
    match id {
        parallax_model::event::UNKNOWN_REGION => "<unknown>".to_string(),
        parallax_model::event::OVERFLOW_REGION => "<other paths>".to_string(),
        parallax_model::event::SKIPPED_REGION => parallax_model::event::SKIPPED_NAME.to_string(),
        _ => p.region_name(id),
    }
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
    fn sends_and_receives_pair_up() {
        let mut a = Flows::default();
        let mut b = Flows::default();
        let send = EventKind::Send {
            peer: 1,
            tag: 7,
            comm: 0,
            bytes: 8,
        };
        let recv = EventKind::Recv {
            peer: 0,
            tag: 7,
            comm: 0,
            bytes: 8,
        };
        let s1 = a.of(0, &send);
        let s2 = a.of(0, &send);
        assert_ne!(s1, s2);
        let (Some(FlowEnd::Start(x)), Some(FlowEnd::End(y))) = (s1, b.of(1, &recv)) else {
            panic!("no flow");
        };
        assert_eq!(x, y);
    }

    #[test]
    fn selection_parses() {
        let mut s = Selection::default();
        s.add("1:2").unwrap();
        s.add("3").unwrap();
        assert!(s.add("x").is_err());
        assert!(s.contains(1, 2) && !s.contains(1, 3) && s.contains(3, 9));
    }
}
