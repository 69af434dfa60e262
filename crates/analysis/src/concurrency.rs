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
/// memory holds a few blocks per location, whatever the traces' length.
/// Where there are several locations and cores, each location's trace is
/// read on a thread of its own (at most [`THREADED`] locations), handing
/// its changes to the merge in batches ([`merge_threaded`]).
pub fn profile(exp: &Experiment) -> Result<Concurrency, Error> {
    let locs = trace::locations(exp);
    let t0 = exp.t0_ns();
    let mut streams = Vec::with_capacity(locs.len());
    for l in &locs {
        streams.push(Changes::new(exp, l, t0)?);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = streams.len();
    let (figures, streams) = if cores < 2 || !(2..=THREADED).contains(&n) {
        (merge(n, |i| streams[i].next_or_end()), streams)
    } else {
        merge_threaded(streams, Changes::next_or_end)
    };
    let warnings = streams
        .iter()
        .filter_map(|s| s.stream.warning.clone())
        .collect();
    let (time_ns, span) = figures;
    Ok(Concurrency {
        locations: n,
        time_ns,
        total_ns: span.map_or(0.0, |(first, last)| last - first),
        warnings,
    })
}

/// [`merge`] of the changes `next` draws from each of `streams`, each
/// drawn on a thread of its own and handed over in batches; the streams
/// come back with the figures.
fn merge_threaded<S: Send>(
    streams: Vec<S>,
    next: fn(&mut S) -> Option<(f64, i32)>,
) -> (Figures, Vec<S>) {
    std::thread::scope(|scope| {
        let mut readers = Vec::with_capacity(streams.len());
        let mut handles = Vec::with_capacity(streams.len());
        for mut s in streams {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(f64, i32)>>(2);
            readers.push(Batches {
                rx,
                batch: Vec::new(),
                at: 0,
            });
            handles.push(scope.spawn(move || {
                loop {
                    let batch: Vec<(f64, i32)> =
                        std::iter::from_fn(|| next(&mut s)).take(BATCH).collect();
                    let last = batch.len() < BATCH;
                    if (!batch.is_empty() && tx.send(batch).is_err()) || last {
                        break;
                    }
                }
                s
            }));
        }
        let figures = merge(readers.len(), |i| readers[i].next());
        drop(readers);
        let streams = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        (figures, streams)
    })
}

/// Time with exactly k locations busy (k = 0..=n), and the first and last
/// change's times.
type Figures = (Vec<f64>, Option<(f64, f64)>);

/// Locations whose traces are read on threads of their own, at most.
const THREADED: usize = 64;

/// Changes handed from a location's reader to the merge at a time.
const BATCH: usize = 4096;

/// A location's changes as its reader thread hands them over.
struct Batches {
    rx: std::sync::mpsc::Receiver<Vec<(f64, i32)>>,
    batch: Vec<(f64, i32)>,
    at: usize,
}

impl Batches {
    fn next(&mut self) -> Option<(f64, i32)> {
        if self.at == self.batch.len() {
            self.batch = self.rx.recv().ok()?;
            self.at = 0;
        }
        self.at += 1;
        self.batch.get(self.at - 1).copied()
    }
}

/// Time with exactly k of `n` locations busy, from each location's changes
/// in time order (`next(i)`, `None` once location `i` has no more), merged
/// by time; and the first and last change's times.
fn merge(n: usize, mut next: impl FnMut(usize) -> Option<(f64, i32)>) -> Figures {
    let mut heap = std::collections::BinaryHeap::new();
    for i in 0..n {
        if let Some((t, d)) = next(i) {
            heap.push(std::cmp::Reverse(Change(t, d, i)));
        }
    }
    let mut time_ns = vec![0.0; n + 1];
    let mut k: i64 = 0;
    let mut span: Option<(f64, f64)> = None;
    while let Some(std::cmp::Reverse(Change(t, d, i))) = heap.pop() {
        let (_, prev) = *span.get_or_insert((t, t));
        time_ns[k.clamp(0, n as i64) as usize] += t - prev;
        k += d as i64;
        if let Some(s) = &mut span {
            s.1 = t;
        }
        if let Some((t, d)) = next(i) {
            heap.push(std::cmp::Reverse(Change(t, d, i)));
        }
    }
    (time_ns, span)
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
    fn threads_merge_as_one_does() {
        // Three locations, one with many batches' worth of changes, busy
        // and idle in turns at times that interleave.
        let changes = |n: usize, step: f64, start: f64| -> Vec<(f64, i32)> {
            (0..n)
                .map(|i| (start + i as f64 * step, if i % 2 == 0 { 1 } else { -1 }))
                .collect()
        };
        let all = [
            changes(3 * BATCH + 17, 1.0, 0.0),
            changes(BATCH, 3.5, 0.25),
            changes(2, 100.0, 7.0),
        ];
        let mut one: Vec<std::vec::IntoIter<(f64, i32)>> =
            all.iter().map(|c| c.clone().into_iter()).collect();
        let direct = merge(3, |i| one[i].next());
        let streams = all.iter().map(|c| c.clone().into_iter()).collect();
        let (threaded, left) = merge_threaded(streams, Iterator::next);
        assert_eq!(direct, threaded);
        assert!(left.into_iter().all(|mut s| s.next().is_none()));
        assert!(direct.0[2] > 0.0 && direct.0[3] > 0.0, "{direct:?}");
    }

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
