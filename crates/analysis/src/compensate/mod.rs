//! Perturbation compensation: the experiment as it would have run without
//! its probes (Malony, *Performance Observability*, ch. 3-5).
//!
//! Each location's events are replayed in order. An event's approximated
//! time t_a is the previous event's t_a plus the measured gap minus the
//! cost α of the previous event's probe (time-based, eq. 3.7 of the
//! thesis); the runtime's flushes are removed whole. An event that waited
//! on another location (a receive, a collective's exit, a lock acquisition,
//! a semaphore or condition wait, an await, a thread's start or join, a
//! wait on a memory word) cannot complete before its partner's approximated
//! post: if it measurably waited, its waiting is recomputed from the
//! partner (it may shrink, vanish or grow); if it did not, it still cannot
//! complete before the partner's post plus the delay this location has seen
//! between such posts and completions (event-based, ch. 4-5). The measured
//! pairing of every dependency is kept (the conservative approximation,
//! always feasible). See docs/compensation.md.

pub mod costs;
pub(crate) mod pass;
mod posts;
mod profile_only;
mod schedule;
mod sharing;
mod stats;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use parallax_model::defs::Def;
use parallax_model::experiment::{self, EventWriter, Experiment};
use parallax_model::{Error, ErrorKind};

pub use costs::{context_range, Costs};
pub use schedule::Rescheduled;
pub use stats::LocStats;

use crate::executor::Executor;
use crate::pairing;
use crate::replay::{self, Postings};
use parallax_view::trace;
use sharing::Sharing;

/// Property that marks an experiment as compensated.
pub const COMPENSATED: &str = "parallax.compensated";

/// How the probe of a time basis on another location is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Convention {
    /// Every probe executed between two events is removed, including the
    /// partner's probe at a fork, join or other cross-location basis (as
    /// eq. 3.7 does along one thread, and ch. 4 at synchronization).
    #[default]
    Consistent,
    /// As the thesis's fork/join rules are printed (sec. 3.3.3.2): the
    /// basis event's own probe is not removed at a cross-location basis.
    Literal,
}

/// Options of a compensation.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Probe costs to use instead of the processes' own calibration.
    pub costs: Option<Costs>,
    /// Probe counting at cross-location bases.
    pub convention: Convention,
    /// What the approximation may re-arrange (the thesis's liberal
    /// option); nothing by default (conservative).
    pub liberal: Liberal,
    /// Told what a liberal compensation is doing, replay by replay.
    pub progress: Progress,
}

/// Where a liberal compensation reports each replay it starts (a liberal
/// compensation may replay the trace many times); nowhere by default.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<Tell>>);

type Tell = dyn Fn(&str) + Send + Sync;

impl Progress {
    /// Reports to `f`.
    pub fn to(f: impl Fn(&str) + Send + Sync + 'static) -> Progress {
        Progress(Some(Arc::new(f)))
    }

    fn tell(&self, what: impl FnOnce() -> String) {
        if let Some(f) = &self.0 {
            f(&what());
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(..)"
        } else {
            "Progress(none)"
        })
    }
}

/// What a liberal approximation re-arranges, first come, first served in
/// approximated time instead of in the measured order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Liberal {
    /// Grant every lock to the thread that asked first.
    pub locks: bool,
    /// Hand the iterations of self-scheduled loops to the thread free
    /// first.
    pub loops: bool,
}

impl Liberal {
    /// Locks and loops.
    pub const ALL: Liberal = Liberal {
        locks: true,
        loops: true,
    };

    /// Whether anything is re-arranged.
    pub fn any(&self) -> bool {
        self.locks || self.loops
    }
}

/// Figures of one compensated location.
#[derive(Clone, Debug, PartialEq)]
pub struct LocSummary {
    /// Rank of its process.
    pub rank: u32,
    /// Thread number.
    pub thread: u32,
    /// What its replay found.
    pub stats: LocStats,
}

impl LocSummary {
    /// Measured time from its first to its last event, ns.
    pub fn measured_ns(&self) -> f64 {
        span(self.stats.first.map(|f| f.0), self.stats.last.map(|l| l.0))
    }

    /// Approximated time from its first to its last event, ns.
    pub fn approximated_ns(&self) -> f64 {
        span(self.stats.first.map(|f| f.1), self.stats.last.map(|l| l.1))
    }
}

fn span(a: Option<f64>, b: Option<f64>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    }
}

/// What a compensation did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Per location, in (rank, thread) order.
    pub locations: Vec<LocSummary>,
    /// Measured time of the whole experiment (first to last event), ns.
    pub measured_ns: f64,
    /// Approximated time of the whole experiment, ns.
    pub approximated_ns: f64,
    /// Time-based models of the whole run (thesis sec. 3.3.2), ns: one
    /// stream (T_m - αN over all events) and independent concurrency (the
    /// location longest after removal).
    pub sequential_model_ns: f64,
    /// See `sequential_model_ns`.
    pub concurrent_model_ns: f64,
    /// Blocked events processed without their partner (never recorded, or
    /// dependencies in a cycle).
    pub forced: u64,
    /// Posts that no event took.
    pub unclaimed: usize,
    /// Problems met (damaged files, missing partners).
    pub warnings: Vec<String>,
    /// Processes whose host ran more threads than it had cores: their
    /// times lost the probes' share of the cores, and their threads'
    /// start-up and wake-up delays kept the rest.
    pub crowded: Vec<Crowded>,
    /// Self-scheduled loops whose iterations were handed out again
    /// (liberal).
    pub rescheduled: Vec<Rescheduled>,
}

/// A process whose host ran more threads than it had cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crowded {
    /// Its rank.
    pub rank: u32,
    /// The most threads running at once on its host: of each process
    /// there, the most threads it created that were alive at once, or 1.
    pub threads: u32,
    /// The cores it could run on.
    pub cpus: u32,
}

impl Summary {
    /// Total over locations of a per-location figure.
    pub fn total(&self, f: impl Fn(&LocStats) -> f64) -> f64 {
        self.locations.iter().map(|l| f(&l.stats)).sum()
    }
}

/// Compensates the traced experiment `exp` into a new experiment at `out`
/// (trace and profile), or, for an experiment with profiles only, its
/// profiles (the time-based model per call path).
pub fn compensate(
    exp: &Experiment,
    out: &Path,
    opts: &Options,
    exec: Executor,
) -> Result<Summary, Error> {
    if exp
        .processes
        .iter()
        .any(|p| p.properties.iter().any(|(k, _)| k == COMPENSATED))
    {
        return Err(Error::new(
            ErrorKind::Invalid,
            "this experiment is already compensated".to_string(),
        )
        .at(&exp.dir));
    }
    let mut costs = Vec::new();
    for p in &exp.processes {
        costs.push(
            opts.costs
                .clone()
                .or_else(|| Costs::calibrated(p))
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::Invalid,
                        format!(
                            "rank {} recorded no probe calibration (an imported experiment?): \
                     give the probe cost with --probe-cost-ns, or import with --probe-cost-ns",
                            p.rank
                        ),
                    )
                    .at(&p.dir)
                })?,
        );
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let locs = trace::locations(exp);
    if locs.is_empty() {
        return profile_only::compensate(exp, out, &costs);
    }
    if opts.liberal.any() && !matches!(exec, Executor::Sequential | Executor::Threads(_)) {
        return Err(Error::new(
            ErrorKind::Invalid,
            "liberal compensation runs on one machine (sequential or threads executor)",
        ));
    }
    let mut run = replay_all(exp, &locs, &costs, out, opts, exec, None)?;
    let mut rescheduled = Vec::new();
    let mut warnings = Vec::new();
    if opts.liberal.loops {
        // Liberal: the self-scheduled loops' iterations handed out again
        // from the approximated times just made, then replayed once more.
        if let Some(plan) = schedule::plan(&locs, out, &run.pairing, &costs, &run.crowded)? {
            warnings = plan.warnings;
            if !plan.loops.is_empty() {
                opts.progress
                    .tell(|| format!("handing out {} loops' iterations again", plan.loops.len()));
                let learned = run.pairing.learned.clone();
                drop(run);
                run = replay_all(exp, &plan.locs, &costs, out, opts, exec, Some(&learned))?;
                let dir = out.join(schedule::WORK_DIR);
                std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            }
            rescheduled = plan.loops;
        }
    }
    let Run {
        pairing,
        crowded,
        mine,
        finished,
        outcome,
        unsettled,
    } = run;
    warnings.extend(unsettled);
    // Under MPI each rank wrote its locations' events; rank 0 writes the
    // rest.
    let Some(finished) = exec.collect(&mine, locs.len(), finished) else {
        return Ok(Summary::default());
    };
    warnings.splice(0..0, pairing.warnings.iter().cloned());
    let mut trees = vec![Vec::new(); exp.processes.len()];
    let mut locations = Vec::new();
    for (loc, (tree, stats)) in locs.iter().zip(finished) {
        if let Some(w) = &stats.warning {
            warnings.push(w.clone());
        }
        if stats.unmatched > 0 {
            warnings.push(format!(
                "rank {} thread {}: {} events waited for a partner that was not recorded",
                loc.rank, loc.thread, stats.unmatched
            ));
        }
        trees[loc.process].push(tree);
        locations.push(LocSummary {
            rank: loc.rank,
            thread: loc.thread,
            stats,
        });
    }
    for (p, trees) in exp.processes.iter().zip(&trees) {
        let first = locations
            .iter()
            .filter(|l| l.rank == p.rank)
            .filter_map(|l| l.stats.first.map(|f| f.1))
            .fold(f64::INFINITY, f64::min);
        write_process(p, out, trees, first, opts)?;
    }
    let mut summary = summarize(locations, outcome, warnings, &costs, exp);
    summary.crowded = crowded.into_iter().flatten().collect();
    summary.rescheduled = rescheduled;
    Ok(summary)
}

/// A replay of every location: its pairing, the crowded processes, the
/// locations this executor replayed and what it found.
struct Run {
    pairing: pairing::Pairing,
    crowded: Vec<Option<Crowded>>,
    mine: crate::executor::Share,
    finished: Finished,
    outcome: replay::Outcome,
    /// Liberal locks: a warning if the grant order was still changing
    /// when the replays stopped.
    unsettled: Option<String>,
}

/// Pairs and replays `locs`, writing the approximated events into `out`;
/// liberal, grants locks in the order of their approximated requests,
/// replaying again until that order no longer changes. Locations partly
/// rewritten from the measured ones take the least costs of the
/// `measured` pairing.
fn replay_all(
    exp: &Experiment,
    locs: &[trace::Loc],
    costs: &[Costs],
    out: &Path,
    opts: &Options,
    exec: Executor,
    measured: Option<&pairing::MachineCosts>,
) -> Result<Run, Error> {
    let t0 = exp.t0_ns();
    let mine = exec.share(locs);
    let pair = |requests: Option<&pairing::Requests>| {
        let mut p = pairing::pair_with(locs, t0, exec, requests);
        if let Some(m) = measured {
            p.learned = m.clone();
        }
        p
    };
    let mut pairing = pair(None);
    let crowded = crowded(exp, &pairing);
    let shares = shares(exp, locs, costs, &crowded)?;
    let rounds = if opts.liberal.locks {
        LIBERAL_ROUNDS
    } else {
        1
    };
    let mut round = 0;
    let mut regranted = 0;
    loop {
        round += 1;
        if opts.liberal.locks {
            opts.progress.tell(|| match round {
                1 => "replaying".to_string(),
                _ => format!("replaying again ({round}), {regranted} lock grants re-ordered"),
            });
        }
        let (finished, outcome, requests) =
            replay_once(locs, &mine, &pairing, costs, &shares, out, opts, exec)?;
        let next = opts.liberal.locks.then(|| pair(Some(&requests)));
        regranted = next.as_ref().map_or(0, |n| changed(&pairing, n));
        match next {
            Some(next) if regranted > 0 && round < rounds => pairing = next,
            _ => {
                let unsettled = (regranted > 0).then(|| {
                    format!(
                        "after {round} replays the lock grants were still re-ordered \
                         ({regranted} more would change): the liberal lock order is not settled"
                    )
                });
                return Ok(Run {
                    pairing,
                    crowded,
                    mine,
                    finished,
                    outcome,
                    unsettled,
                });
            }
        }
    }
}

/// Synchronization events that `next` pairs otherwise than `now`.
fn changed(now: &pairing::Pairing, next: &pairing::Pairing) -> usize {
    now.syncs
        .iter()
        .zip(&next.syncs)
        .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y).count())
        .sum()
}

/// The host a process ran on: processes of no known host each their own.
fn host_of(exp: &Experiment, i: usize) -> (Option<&str>, usize) {
    match exp.processes[i].info.as_ref() {
        Some(info) => (Some(info.host.as_str()), 0),
        None => (None, i),
    }
}

/// By process: whether the threads running on its host outnumbered the
/// host's cores at some time (the `cpus` each process recorded), so that
/// its threads waited for cores in a run without probes too. A process
/// counts the most threads it created that were alive at once, or itself
/// if it created none (an MPI rank, which polls while it waits); the
/// processes of one host add up.
fn crowded(exp: &Experiment, pairing: &pairing::Pairing) -> Vec<Option<Crowded>> {
    let load = |i: usize| {
        pairing
            .learned
            .threads_at_once
            .get(i)
            .copied()
            .unwrap_or(0)
            .max(1)
    };
    let mut hosts: BTreeMap<(Option<&str>, usize), u32> = BTreeMap::new();
    for i in 0..exp.processes.len() {
        *hosts.entry(host_of(exp, i)).or_default() += load(i);
    }
    exp.processes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cpus = p
                .properties
                .iter()
                .find(|(k, _)| k == "cpus")
                .and_then(|(_, v)| v.parse::<u32>().ok())?;
            let threads = hosts[&host_of(exp, i)];
            (threads > cpus).then_some(Crowded {
                rank: p.rank,
                threads,
                cpus,
            })
        })
        .collect()
}

/// By process: the probes' share of its host's cores where the host was
/// crowded, counted over the host's crowded processes (one count per host,
/// which its processes share).
fn shares(
    exp: &Experiment,
    locs: &[trace::Loc],
    costs: &[Costs],
    crowded: &[Option<Crowded>],
) -> Result<Vec<Option<Arc<Sharing>>>, Error> {
    let mut hosts: BTreeMap<(Option<&str>, usize), Arc<Sharing>> = BTreeMap::new();
    let mut out = Vec::with_capacity(exp.processes.len());
    for (i, c) in crowded.iter().enumerate() {
        let Some(c) = c else {
            out.push(None);
            continue;
        };
        let host = host_of(exp, i);
        if let std::collections::btree_map::Entry::Vacant(v) = hosts.entry(host) {
            let mine: Vec<(&trace::Loc, &Costs)> = locs
                .iter()
                .filter(|l| crowded[l.process].is_some() && host_of(exp, l.process) == host)
                .map(|l| (l, &costs[l.process]))
                .collect();
            v.insert(Arc::new(Sharing::measure(&mine, c.cpus)?));
        }
        out.push(hosts.get(&host).cloned());
    }
    Ok(out)
}

/// Replays at most this many times in liberal mode: each replay settles
/// the grant order at least one hand-off further along a chain of
/// contended hand-offs.
const LIBERAL_ROUNDS: usize = 64;

type Finished = Vec<(parallax_model::profile::CallTree, LocStats)>;

/// One replay of the locations `mine` with `pairing`, writing their events
/// into `out`; returns what each pass found, the replay's outcome and the
/// lock requests' approximated times.
#[allow(clippy::too_many_arguments)]
fn replay_once(
    locs: &[trace::Loc],
    mine: &crate::executor::Share,
    pairing: &pairing::Pairing,
    costs: &[Costs],
    shares: &[Option<Arc<Sharing>>],
    out: &Path,
    opts: &Options,
    exec: Executor,
) -> Result<(Finished, replay::Outcome, pairing::Requests), Error> {
    let mut passes = Vec::with_capacity(mine.len());
    for &i in mine {
        let loc = &locs[i];
        let dir = out.join(experiment::rank_dir(loc.rank));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let path = dir.join(experiment::events_file(loc.thread));
        let w = EventWriter::create(&path, loc.rank, loc.thread, 1 << 16)?;
        passes.push(pass::LocPass::new(
            loc,
            i,
            pairing,
            costs[loc.process].clone().for_thread(loc.thread),
            shares.get(loc.process).and_then(Option::as_deref),
            opts.convention,
            Some(w),
        )?);
    }
    let board = Postings::new(posts::latest);
    let outcome = replay::run_share(&mut passes, mine, &board, exec);
    let mut requests = pairing::Requests::default();
    for (p, &i) in passes.iter().zip(mine) {
        requests.extend(p.requests.iter().map(|&(ord, t)| ((i, ord), t)));
    }
    let finished = passes
        .into_iter()
        .map(|p| p.finish())
        .collect::<Result<Vec<_>, _>>()?;
    Ok((finished, outcome, requests))
}

fn summarize(
    locations: Vec<LocSummary>,
    outcome: replay::Outcome,
    warnings: Vec<String>,
    _costs: &[Costs],
    _exp: &Experiment,
) -> Summary {
    let ends = |f: &dyn Fn(&LocStats) -> Option<(f64, f64)>, pick: fn(&(f64, f64)) -> f64| {
        locations
            .iter()
            .filter_map(|l| f(&l.stats).map(|x| pick(&x)))
            .collect::<Vec<f64>>()
    };
    let min = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
    let max = |v: Vec<f64>| v.into_iter().fold(f64::NEG_INFINITY, f64::max);
    let measured_ns = (max(ends(&|s| s.last, |x| x.0)) - min(ends(&|s| s.first, |x| x.0))).max(0.0);
    let approximated_ns =
        (max(ends(&|s| s.last, |x| x.1)) - min(ends(&|s| s.first, |x| x.1))).max(0.0);
    let removed: f64 = locations
        .iter()
        .map(|l| l.stats.probe_ns + l.stats.flush_ns)
        .sum();
    let concurrent_model_ns = locations
        .iter()
        .map(|l| l.measured_ns() - l.stats.probe_ns - l.stats.flush_ns)
        .fold(0.0, f64::max);
    Summary {
        crowded: Vec::new(),
        rescheduled: Vec::new(),
        measured_ns: if measured_ns.is_finite() {
            measured_ns
        } else {
            0.0
        },
        approximated_ns: if approximated_ns.is_finite() {
            approximated_ns
        } else {
            0.0
        },
        sequential_model_ns: (measured_ns - removed).max(0.0),
        concurrent_model_ns,
        forced: outcome.forced,
        unclaimed: outcome.unclaimed,
        warnings,
        locations,
    }
}

/// Writes the definitions and profile of process `p` of the compensated
/// experiment: its own definitions, with a clock whose ticks are the
/// approximated nanoseconds.
fn write_process(
    p: &experiment::Process,
    out: &Path,
    trees: &[parallax_model::profile::CallTree],
    first_ns: f64,
    opts: &Options,
) -> Result<(), Error> {
    let dir = out.join(experiment::rank_dir(p.rank));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let (rank, defs) = experiment::read_defs(&p.dir)?;
    let mut unix_minus_mono = 0i128;
    let mut kept = Vec::new();
    for d in defs {
        match d {
            Def::ClockSync {
                mono_ns, unix_ns, ..
            } => unix_minus_mono = unix_ns as i128 - mono_ns as i128,
            // The summaries describe the measured event files, not these.
            Def::Clock { .. } | Def::ClockOffset { .. } | Def::Summary { .. } => {}
            d => kept.push(d),
        }
    }
    let start = if first_ns.is_finite() {
        first_ns.max(0.0) as u64
    } else {
        0
    };
    let sync = |t: u64| Def::ClockSync {
        tick: t,
        mono_ns: t,
        unix_ns: (t as i128 + unix_minus_mono).max(0) as u64,
    };
    let mut defs = vec![
        Def::Clock {
            source: parallax_model::defs::ClockSource::Monotonic,
            nominal_hz: 1e9,
        },
        sync(start),
        sync(start + 1_000_000_000),
    ];
    defs.extend(kept);
    defs.push(Def::Property {
        key: COMPENSATED.to_string(),
        value: match opts.convention {
            Convention::Consistent => "consistent",
            Convention::Literal => "literal",
        }
        .to_string(),
    });
    experiment::write_defs(&dir, rank, &defs)?;
    experiment::write_profiles(&dir, rank, trees)
}
