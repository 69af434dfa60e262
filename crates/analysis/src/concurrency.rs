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

use crate::executor::Executor;
use crate::trace::{self, Loc};

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

/// Busy-state changes of one location: (time ns, +1 or -1).
type Transitions = Vec<(f64, i32)>;

/// The busy-state changes of `loc`, and the problem that cut its stream
/// short, if any.
fn transitions(
    exp: &Experiment,
    loc: &Loc,
    t0: f64,
) -> Result<(Transitions, Option<String>), Error> {
    let p = &exp.processes[loc.process];
    let waiting = |r: u32| p.regions.get(&r).is_some_and(|d| waits(d.kind));
    let mut out = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    let mut flushing = false;
    let mut busy = false;
    let mut last = 0.0;
    let set = |now_busy: bool, t: f64, out: &mut Vec<(f64, i32)>, busy: &mut bool| {
        if now_busy != *busy {
            out.push((t, if now_busy { 1 } else { -1 }));
            *busy = now_busy;
        }
    };
    let err = trace::for_each_event(loc, t0, |e, t| {
        match e.kind {
            EventKind::Enter { region } => stack.push(region),
            EventKind::Leave { .. } => {
                stack.pop();
            }
            EventKind::FlushBegin => flushing = true,
            EventKind::FlushEnd => flushing = false,
            _ => {}
        }
        let idle = flushing || stack.last().is_some_and(|&r| waiting(r));
        set(!idle, t, &mut out, &mut busy);
        last = t;
    })?;
    set(false, last, &mut out, &mut busy);
    Ok((out, err.map(|e| e.to_string())))
}

/// The concurrency profile of all traced locations.
pub fn profile(exp: &Experiment, ex: Executor) -> Result<Concurrency, Error> {
    let locs = trace::locations(exp);
    let t0 = exp.t0_ns();
    let per = ex.map_locs(&locs, |i| transitions(exp, &locs[i], t0));
    let mut all = Vec::new();
    let mut warnings = Vec::new();
    for r in per {
        let (t, w) = r?;
        all.extend(t);
        warnings.extend(w);
    }
    Ok(from_transitions(locs.len(), all, warnings))
}

/// The profile of `n` locations from all their busy-state changes (time
/// ns, +1 on becoming busy, -1 on becoming idle), in any order.
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
