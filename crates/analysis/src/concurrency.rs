//! The concurrency profile: how long exactly k locations were busy, and
//! Cedar's figures over it (seed 002: CEFF, CU_k, CAVG).
//!
//! A location is busy from its first to its last event except while its
//! innermost region is a synchronization (waiting at a barrier, for a lock,
//! a message completion, a join, ...) or the runtime's own flush. This is
//! the event-based counterpart of Cedar's sampled CEFF: it counts
//! activity, not useful work.

use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use parallax_model::region::{Category, RegionKind};
use parallax_model::Error;

use parallax_view::fasthash::FastSet;
use parallax_view::trace::{self, Loc, Stream};

/// Time with exactly k locations busy, and the figures derived from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Concurrency {
    /// Locations considered (n).
    pub locations: usize,
    /// `time_ns[k]`: time with exactly k locations busy (k = 0..=n).
    pub time_ns: Vec<f64>,
    /// The span of the run, T = Σ time_ns.
    pub total_ns: f64,
    /// Problems that cut a location's stream short.
    pub warnings: Vec<String>,
}

impl Concurrency {
    /// CEFF = Σ k·T_k / (n·T), as a fraction.
    pub fn ceff(&self) -> f64 {
        if self.total_ns <= 0.0 || self.locations == 0 {
            return 0.0;
        }
        let busy: f64 = self
            .time_ns
            .iter()
            .enumerate()
            .map(|(k, t)| k as f64 * t)
            .sum();
        busy / (self.locations as f64 * self.total_ns)
    }

    /// CU_k = T_k / T, as a fraction.
    pub fn cu(&self, k: usize) -> f64 {
        if self.total_ns <= 0.0 {
            0.0
        } else {
            self.time_ns.get(k).copied().unwrap_or(0.0) / self.total_ns
        }
    }

    /// CAVG = n·CEFF: the average number of busy locations, an upper bound
    /// on speedup.
    pub fn cavg(&self) -> f64 {
        self.locations as f64 * self.ceff()
    }
}

/// Whether time with a region of `kind` innermost counts as waiting rather
/// than busy: synchronization and the runtime's own work, except posting
/// a semaphore and unlocking, which never wait.
pub fn waits(kind: RegionKind) -> bool {
    matches!(
        kind.category(),
        Category::Synchronization | Category::Measurement
    ) && kind != RegionKind::SemPost
        && kind != RegionKind::Unlock
}

/// The busy-state changes of one location in time order, read from its
/// trace one event at a time.
struct Changes<'a> {
    stream: Stream,
    loc: &'a Loc,
    t0: f64,
    /// The regions of the location's process in which it waits.
    waiting: FastSet<u32>,
    /// Open regions, each with whether the location waits in it.
    stack: Vec<bool>,
    flushing: bool,
    busy: bool,
    last: f64,
    done: bool,
}

impl<'a> Changes<'a> {
    fn new(exp: &'a Experiment, loc: &'a Loc, t0: f64) -> Result<Changes<'a>, Error> {
        let p = &exp.processes[loc.process];
        let waiting = p
            .regions
            .iter()
            .filter(|(_, d)| waits(d.kind))
            .map(|(&r, _)| r)
            .collect();
        Ok(Changes {
            stream: Stream::open(loc)?,
            loc,
            t0,
            waiting,
            stack: Vec::new(),
            flushing: false,
            busy: false,
            last: 0.0,
            done: false,
        })
    }

    /// The next change of the location between busy (+1) and idle (-1),
    /// with its time.
    fn next(&mut self) -> Option<(f64, i32)> {
        loop {
            // Most events are plain enters and leaves, read without
            // decoding the whole record.
            let ticks = match self.stream.next_plain() {
                Some((ticks, Some(region))) => {
                    self.stack.push(self.waiting.contains(&region));
                    ticks
                }
                Some((ticks, None)) => {
                    self.stack.pop();
                    ticks
                }
                None => {
                    let e = self.stream.peek()?;
                    self.stream.advance();
                    match e.kind {
                        EventKind::Enter { region } => {
                            self.stack.push(self.waiting.contains(&region))
                        }
                        EventKind::Leave { .. } => {
                            self.stack.pop();
                        }
                        EventKind::FlushBegin => self.flushing = true,
                        EventKind::FlushEnd => self.flushing = false,
                        _ => {}
                    }
                    e.time
                }
            };
            // Never back in time (a damaged file's blocks may be out of
            // order): the changes of all locations are merged by time.
            let t = (self.loc.clock.ns(ticks) - self.t0).max(self.last);
            self.last = t;
            let idle = self.flushing || self.stack.last().copied().unwrap_or(false);
            if idle == self.busy {
                self.busy = !idle;
                return Some((t, if idle { -1 } else { 1 }));
            }
        }
    }

    /// [`Changes::next`], then, once the stream is over, the location's
    /// last change to idle.
    fn next_or_end(&mut self) -> Option<(f64, i32)> {
        if let Some(c) = self.next() {
            return Some(c);
        }
        if !self.done {
            self.done = true;
            if self.busy {
                self.busy = false;
                return Some((self.last, -1));
            }
        }
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Change(f64, i32, usize);

impl Eq for Change {}

impl PartialOrd for Change {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Change {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0
            .total_cmp(&o.0)
            .then(self.1.cmp(&o.1))
            .then(self.2.cmp(&o.2))
    }
}

/// The concurrency profile of all traced locations: the busy-state changes
/// of every location merged in time order as the traces are read, so that
/// memory holds one block per location, whatever the traces' length.
pub fn profile(exp: &Experiment) -> Result<Concurrency, Error> {
    let locs = trace::locations(exp);
    let t0 = exp.t0_ns();
    let mut streams = Vec::with_capacity(locs.len());
    for l in &locs {
        streams.push(Changes::new(exp, l, t0)?);
    }
    let mut heap = std::collections::BinaryHeap::new();
    for (i, s) in streams.iter_mut().enumerate() {
        if let Some((t, d)) = s.next_or_end() {
            heap.push(std::cmp::Reverse(Change(t, d, i)));
        }
    }
    let n = locs.len();
    let mut time_ns = vec![0.0; n + 1];
    let mut k: i64 = 0;
    // The first change's time, and the last's.
    let mut span: Option<(f64, f64)> = None;
    while let Some(std::cmp::Reverse(Change(t, d, i))) = heap.pop() {
        let (_, prev) = *span.get_or_insert((t, t));
        time_ns[k.clamp(0, n as i64) as usize] += t - prev;
        k += d as i64;
        if let Some(s) = &mut span {
            s.1 = t;
        }
        if let Some((t, d)) = streams[i].next_or_end() {
            heap.push(std::cmp::Reverse(Change(t, d, i)));
        }
    }
    let warnings = streams
        .iter()
        .filter_map(|s| s.stream.warning.clone())
        .collect();
    Ok(Concurrency {
        locations: n,
        time_ns,
        total_ns: span.map_or(0.0, |(first, last)| last - first),
        warnings,
    })
}

/// The profile of `n` locations from all their busy-state changes (time
/// ns, +1 on becoming busy, -1 on becoming idle), in any order: for a
/// caller that already holds them (few enough to keep).
pub fn from_transitions(n: usize, mut all: Vec<(f64, i32)>, warnings: Vec<String>) -> Concurrency {
    // Ends before starts at equal times: a hand-off is not double counted.
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut time_ns = vec![0.0; n + 1];
    let mut k: i64 = 0;
    let mut prev = all.first().map_or(0.0, |x| x.0);
    let start = prev;
    for (t, d) in &all {
        time_ns[k.clamp(0, n as i64) as usize] += t - prev;
        k += *d as i64;
        prev = *t;
    }
    Concurrency {
        locations: n,
        time_ns,
        total_ns: prev - start,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cedar_figures() {
        // Two locations: both busy 6 s, one busy 2 s, none 2 s.
        let c = Concurrency {
            locations: 2,
            time_ns: vec![2.0, 2.0, 6.0],
            total_ns: 10.0,
            warnings: vec![],
        };
        assert!((c.ceff() - 0.7).abs() < 1e-12);
        assert!((c.cavg() - 1.4).abs() < 1e-12);
        assert!((c.cu(2) - 0.6).abs() < 1e-12);
    }
}
