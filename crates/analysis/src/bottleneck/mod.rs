//! Automatic bottleneck analysis: what is slow, why, and what to change.
//!
//! One forward replay of every location ([`crate::replay`]) finds the wait
//! states (Scalasca's patterns: a receive waiting for a late send, a
//! barrier waiting for the last arrival, a lock waiting for its holder,
//! ...), each with its waiting time, call path and the location that
//! caused it. The same replay sends each waiting time back to the event
//! that caused it, so the culprit charges it to the computation it did
//! since its previous synchronization (delay costs, direct and
//! propagated), and carries the critical path along the dependencies.
//! Per-location figures gathered on the way feed the global analyses:
//! load balance, frequency, serialized transfers, redundant barriers.
//!
//! Findings pass PPW's filters ([`filters`]) and are ranked by severity,
//! each with a resolution hint ([`hints`]). See docs/analysis.md.

pub mod filters;
mod global;
pub mod hints;
mod path;
mod posts;
pub mod profiles;
mod regions;
mod rma;
pub mod scaling;
mod waits;

use std::collections::BTreeMap;

use parallax_model::experiment::Experiment;
use parallax_model::Error;

use crate::executor::Executor;
use crate::pairing;
use crate::replay::{self, Postings};
use crate::wire::{Reader, Wire};
use parallax_view::names::LocationNames;
use parallax_view::trace;

pub use filters::{Baselines, Config};
pub use parallax_view::finding::{Culprit, Detection, Finding, Pattern, Where};

/// Computation of one location charged with waiting it caused elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayCost {
    /// The delaying location.
    pub at: Where,
    /// Region whose computation delayed.
    pub region: String,
    /// Waiting caused directly, s.
    pub direct_s: f64,
    /// Waiting caused through other wait states it caused, s.
    pub propagated_s: f64,
}

/// Share of a region in the critical path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathShare {
    /// Region (`-` for time outside any region).
    pub region: String,
    /// Time on the critical path, s.
    pub time_s: f64,
    /// Fraction of the critical path.
    pub share: f64,
}

/// Computation, communication and synchronization of one location.
#[derive(Clone, Debug, PartialEq)]
pub struct Balance {
    /// Where.
    pub at: Where,
    /// Its measured time (first to last event), s: what the three parts
    /// are shares of.
    pub measured_s: f64,
    /// Computation (time outside communication and synchronization), s.
    pub computation_s: f64,
    /// Communication, s.
    pub communication_s: f64,
    /// Synchronization, s.
    pub synchronization_s: f64,
}

/// Imbalance of one region across the locations that ran it.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionBalance {
    /// Region.
    pub region: String,
    /// Locations that ran it.
    pub locations: usize,
    /// Largest and mean exclusive time, s.
    pub max_s: f64,
    /// See `max_s`.
    pub mean_s: f64,
    /// The location with the largest time.
    pub max_at: Where,
}

/// Imbalance of the program blocks between the collectives of one
/// communicator or barrier.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockBalance {
    /// Communicator (or barrier) id, as recorded.
    pub comm: u64,
    /// Its readable name (`MPI_COMM_WORLD (4 ranks)`, `barrier #1 (...)`).
    pub name: String,
    /// Blocks seen.
    pub blocks: u64,
    /// Sum over blocks of (largest − mean) work, s.
    pub imbalance_s: f64,
    /// The location most often the slowest.
    pub worst: Option<Where>,
}

/// Everything an analysis found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Findings, most severe first.
    pub findings: Vec<Finding>,
    /// Wall time of the run (first to last event), s.
    pub wall_s: f64,
    /// Events analysed.
    pub events: u64,
    /// Computation that caused waiting, most costly first.
    pub delays: Vec<DelayCost>,
    /// The critical path's regions, largest first.
    pub critical_path: Vec<PathShare>,
    /// Its length, s.
    pub critical_path_s: f64,
    /// High-level load balance per location.
    pub balance: Vec<Balance>,
    /// Event-level load balance per region.
    pub regions: Vec<RegionBalance>,
    /// Block-level load balance per communicator.
    pub blocks: Vec<BlockBalance>,
    /// One-sided accesses to the own rank over all one-sided accesses,
    /// when any were recorded.
    pub locality: Option<f64>,
    /// Waiting with no remote cause found (PPW's "uncontrollable"), s,
    /// summed over locations.
    pub uncontrollable_s: f64,
    /// The locations' measured time summed, s: the total that sums over
    /// locations are shares of.
    pub measured_s: f64,
    /// How locations are named.
    pub names: LocationNames,
    /// Made from profiles alone (the run has no trace): only the
    /// analyses of [`profiles::FROM_PROFILES`] ran.
    pub from_profiles: bool,
    /// Dependencies whose partner event was never recorded.
    pub unmatched: u64,
    /// Problems met while reading.
    pub warnings: Vec<String>,
    /// One-sided accesses: local, all.
    rma_sums: (u64, u64),
}

/// Analyses the experiment in `exp`.
pub fn analyze(exp: &Experiment, cfg: &Config, exec: Executor) -> Result<Report, Error> {
    // Locations whose writer summarized them are not read before the
    // replay; if one turns out not to match its summary (a file damaged
    // in place, say), the analysis runs again reading every location.
    match analyze_with(exp, cfg, exec, true)? {
        Some(report) => Ok(report),
        None => Ok(analyze_with(exp, cfg, exec, false)?.unwrap_or_default()),
    }
}

/// [`analyze`], trusting the writers' summaries or not; `None` if one
/// proved wrong.
fn analyze_with(
    exp: &Experiment,
    cfg: &Config,
    exec: Executor,
    summaries: bool,
) -> Result<Option<Report>, Error> {
    let mut phases = crate::executor::Phases::new(exec);
    let locs = trace::locations(exp);
    let t0 = exp.t0_ns();
    let table = regions::Table::new(exp);
    let pairing = if summaries {
        pairing::pair_summarized(&locs, t0, exec)
    } else {
        pairing::pair(&locs, t0, exec)
    };
    phases.done("pairing");
    let mine = exec.share(&locs);
    let mut passes = Vec::with_capacity(mine.len());
    for &i in &mine {
        passes.push(waits::LocPass::new(&locs[i], i, &pairing, &table, t0)?);
    }
    let board = Postings::new(posts::combine);
    let outcome = replay::run_share(&mut passes, &mine, &board, exec);
    if pairing.summarized.iter().any(|&s| s) {
        let agree = exec.map_locs(&locs, |li| {
            mine.binary_search(&li)
                .is_ok_and(|k| passes[k].agrees_with_summary())
        });
        if agree.iter().any(|&a| !a) {
            return Ok(None);
        }
    }
    let mut results: Vec<waits::LocResult> = passes.into_iter().map(|p| p.finish()).collect();
    phases.done("replay");
    rma::competitors(&locs, t0, &mine, &mut results, exec);
    phases.done("competing transfers");
    // Under MPI the report is assembled on rank 0 only.
    let Some(results) = exec.collect(&mine, locs.len(), results) else {
        phases.done("collection");
        return Ok(Some(Report::default()));
    };
    phases.done("collection");
    let names = LocationNames::new(exp);
    let main: Vec<bool> = locs.iter().map(|l| is_initial_thread(exp, l)).collect();
    let mut report = global::assemble(&locs, &main, &names, &table, results, cfg, exec);
    report.names = names;
    phases.done("global analyses");
    report.unmatched += outcome.forced;
    report.warnings.extend(pairing.warnings.iter().cloned());
    report.warnings.extend(exp.warnings());
    Ok(Some(report))
}

/// Whether `l` is its process's initial thread.
pub(crate) fn is_initial_thread(exp: &Experiment, l: &trace::Loc) -> bool {
    parallax_view::profile::initial_thread(&exp.processes[l.process], l.thread)
}

/// Findings counted per pattern, for summaries.
pub fn by_pattern(findings: &[Finding]) -> BTreeMap<Pattern, (usize, f64)> {
    let mut m = BTreeMap::new();
    for f in findings {
        let e = m.entry(f.pattern).or_insert((0, 0.0));
        e.0 += 1;
        e.1 += f.severity_s;
    }
    m
}

impl Wire for Pattern {
    fn put(&self, out: &mut Vec<u8>) {
        let i = Pattern::ALL.iter().position(|p| p == self);
        (i.expect("every pattern is in ALL") as u8).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        Pattern::ALL[u8::get(r) as usize]
    }
}
