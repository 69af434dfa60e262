//! `parallax compensate DIR`: the experiment without the probes'
//! perturbation, as a new experiment (trace and profile).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use serde_json::json;

use parallax_analysis::compensate::{
    self, Convention, Costs, Liberal, LocStats, LocSummary, Options, Summary,
};
use parallax_model::experiment::Experiment;

use parallax_report::text::fmt;

/// Arguments of `parallax compensate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The measured experiment.
    pub dir: PathBuf,
    /// Where to write the approximated experiment [default: DIR-compensated].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Cost of every probe in ns (the thesis's α), instead of the
    /// experiment's own calibration (needed for experiments imported from
    /// other tools without `import --probe-cost-ns`).
    #[arg(long, value_name = "NS", visible_alias = "alpha")]
    pub probe_cost_ns: Option<f64>,
    /// Cost of an enter probe in ns (with --leave-cost-ns and
    /// --event-cost-ns).
    #[arg(long, value_name = "NS", visible_alias = "alpha-enter",
          requires_all = ["leave_cost_ns", "event_cost_ns"], conflicts_with = "probe_cost_ns")]
    pub enter_cost_ns: Option<f64>,
    /// Cost of a leave probe in ns.
    #[arg(
        long,
        value_name = "NS",
        visible_alias = "alpha-leave",
        requires = "enter_cost_ns"
    )]
    pub leave_cost_ns: Option<f64>,
    /// Cost of any other event probe in ns.
    #[arg(
        long,
        value_name = "NS",
        visible_alias = "alpha-event",
        requires = "enter_cost_ns"
    )]
    pub event_cost_ns: Option<f64>,
    /// How the partner's probe counts where an event's time comes from
    /// another location: `consistent` removes it like every other probe;
    /// `literal` follows the thesis's fork/join rules as printed.
    #[arg(long, default_value = "consistent", value_parser = ["consistent", "literal"])]
    pub convention: String,
    /// Analysis threads (0: all cores; 1: sequential; the result is the
    /// same).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub threads: usize,
    /// How the passes run: seq, threads or mpi (the ranks of `mpirun -np
    /// N parallax compensate ...`, each writing its locations' events);
    /// the result is the same.
    #[arg(long, value_enum)]
    pub executor: Option<crate::executor::Kind>,
    /// Re-arrange what the probes re-ordered, first come, first served in
    /// approximated time instead of as measured: `locks` grants every lock
    /// to the thread that asked first (re-pairing acquisitions with
    /// releases, replaying until the order settles); `loops` hands the
    /// iterations of self-scheduled loops (parallax::sync::SelfScheduled)
    /// to the thread free first and replays the trace rewritten that way.
    /// Without a value (`--liberal`), both; `--liberal=loops` for one.
    #[arg(long, value_name = "WHAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "locks,loops",
          value_delimiter = ',', value_parser = ["locks", "loops"])]
    pub liberal: Option<Vec<String>>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    let exp = Experiment::open(&a.dir)
        .with_context(|| format!("cannot read the experiment {}", a.dir.display()))?;
    let out = a.out.clone().unwrap_or_else(|| {
        let name = a
            .dir
            .file_name()
            .map_or_else(|| "experiment".into(), |n| n.to_string_lossy().into_owned());
        a.dir.with_file_name(format!("{name}-compensated"))
    });
    if out.canonicalize().ok() == a.dir.canonicalize().ok() {
        anyhow::bail!("--out must differ from the experiment being compensated");
    }
    let costs = match (
        a.probe_cost_ns,
        a.enter_cost_ns,
        a.leave_cost_ns,
        a.event_cost_ns,
    ) {
        (Some(x), ..) => Some(Costs::uniform(check(x)?)),
        (None, Some(e), Some(l), Some(v)) => Some(Costs::per_kind(check(e)?, check(l)?, check(v)?)),
        _ => None,
    };
    let progress = parallax_report::term::Progress::new("compensating", 0);
    let opts = Options {
        progress: compensate::Progress::to(progress.messenger("compensating")),
        costs,
        convention: if a.convention == "literal" {
            Convention::Literal
        } else {
            Convention::Consistent
        },
        liberal: {
            let has = |w: &str| a.liberal.iter().flatten().any(|x| x == w);
            Liberal {
                locks: has("locks"),
                loops: has("loops"),
            }
        },
    };
    let run = crate::executor::start(a.executor, a.threads)?;
    // One process prepares the directory that every rank writes into.
    let prepared = if run.is_root() {
        Some(run.all_or_none(crate::experiment_dir::prepare(&out))?)
    } else {
        None
    };
    run.barrier();
    let started = std::time::Instant::now();
    let s = run.all_or_none(
        compensate::compensate(&exp, &out, &opts, run.exec)
            .with_context(|| format!("cannot compensate {}", a.dir.display())),
    )?;
    drop(progress);
    if !run.is_root() {
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let secs = started.elapsed().as_secs_f64();
    let command: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    crate::experiment_dir::write_manifest(&out, &command, "compensated", secs, None)?;
    if let Some(p) = prepared {
        p.commit();
    }
    if a.json {
        crate::console::out_json(&to_json(&s, &out))?;
    } else {
        // Region and loop names are the measured program's.
        crate::console::out(&parallax_output::text::inert_lines(&text(&s, &out, secs)))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn check(ns: f64) -> anyhow::Result<f64> {
    if ns.is_finite() && ns >= 0.0 {
        Ok(ns)
    } else {
        anyhow::bail!("a probe cost must be a number of ns >= 0, not {ns}")
    }
}

fn pct(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:+.1}%", 100.0 * part / whole)
    } else {
        "-".into()
    }
}

fn text(s: &Summary, out: &std::path::Path, secs: f64) -> String {
    let mut t = String::new();
    let events: u64 = s.locations.iter().map(|l| l.stats.events).sum();
    let _ = writeln!(
        t,
        "Compensated {} events of {} locations in {:.2} s into {}",
        fmt::count(events),
        s.locations.len(),
        secs,
        out.display()
    );
    let _ = writeln!(
        t,
        "Run time: measured {}, approximated {} ({} of measured), uncertainty ±{}",
        fmt::ns(s.measured_ns),
        fmt::ns(s.approximated_ns),
        pct(s.approximated_ns - s.measured_ns, s.measured_ns),
        fmt::ns(
            s.locations
                .iter()
                .map(|l| l.stats.uncertainty_ns)
                .fold(0.0, f64::max)
        )
    );
    if let Some((lo, hi)) = approximated_range(s, |st| st.context_ns) {
        let _ = writeln!(
            t,
            "Probes' cost in context (loops timed at calibration): approximated between {} and {}",
            fmt::ns(lo),
            fmt::ns(hi)
        );
    }
    if let Some((lo, hi)) = approximated_range(s, |st| st.speed_ns) {
        let _ = writeln!(
            t,
            "Probes' cost at the cores' speed (timed in the run): approximated between {} and {}",
            fmt::ns(lo),
            fmt::ns(hi)
        );
    }
    let _ = writeln!(
        t,
        "Time-based models: one stream {}, independent locations {}",
        fmt::ns(s.sequential_model_ns),
        fmt::ns(s.concurrent_model_ns)
    );
    let cols: Vec<String> = [
        "rank",
        "thread",
        "events",
        "measured",
        "approximated",
        "probes",
        "flushes",
        "wait removed",
        "wait added",
        "deps",
    ]
    .iter()
    .map(|c| c.to_string())
    .collect();
    let rows: Vec<Vec<String>> = s
        .locations
        .iter()
        .map(|l| {
            let st = &l.stats;
            vec![
                l.rank.to_string(),
                l.thread.to_string(),
                fmt::count(st.events),
                fmt::ns(l.measured_ns()),
                fmt::ns(l.approximated_ns()),
                fmt::ns(st.probe_ns),
                fmt::ns(st.flush_ns),
                fmt::ns(st.wait_removed_ns),
                fmt::ns(st.wait_added_ns),
                fmt::count(st.dependencies),
            ]
        })
        .collect();
    t.push_str(&fmt::table(&cols, &rows, 100));
    if s.forced > 0 {
        let _ = writeln!(
            t,
            "{} events waited for partners that were never recorded; they kept their measured waiting.",
            s.forced
        );
    }
    for c in &s.crowded {
        let _ = writeln!(
            t,
            "Rank {}: up to {} threads at once on its host's {} cores (its own, and the \
             other ranks' there). They took turns, so its times lost the probes' share of the \
             cores; its start-up and wake-up delays kept the rest (waiting for a core was the \
             program's own).",
            c.rank, c.threads, c.cpus
        );
    }
    const LOOPS_SHOWN: usize = 5;
    for r in s.rescheduled.iter().take(LOOPS_SHOWN) {
        let list = |pick: fn(&(u32, u64, u64)) -> u64, sep: &str| {
            r.threads
                .iter()
                .map(|x| pick(x).to_string())
                .collect::<Vec<_>>()
                .join(sep)
        };
        let _ = writeln!(
            t,
            "Rank {}: self-scheduled loop {} handed out again: its {} iterations ran {} on \
             threads {}, now {}.",
            r.rank,
            r.loop_id,
            r.iterations,
            list(|x| x.1, " + "),
            list(|x| x.0.into(), ", "),
            list(|x| x.2, " + ")
        );
    }
    if s.rescheduled.len() > LOOPS_SHOWN {
        let _ = writeln!(
            t,
            "... and {} more self-scheduled loops handed out again (--json lists them all).",
            s.rescheduled.len() - LOOPS_SHOWN
        );
    }
    for w in &s.warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    let _ = writeln!(t, "See it with: parallax report {}", out.display());
    t
}

fn to_json(s: &Summary, out: &std::path::Path) -> serde_json::Value {
    json!({
        "out": out.display().to_string(),
        "measured_ns": s.measured_ns,
        "approximated_ns": s.approximated_ns,
        "approximated_range_ns": approximated_range(s, |st| st.context_ns).map(|(lo, hi)| [lo, hi]),
        "approximated_speed_range_ns": approximated_range(s, |st| st.speed_ns).map(|(lo, hi)| [lo, hi]),
        "sequential_model_ns": s.sequential_model_ns,
        "concurrent_model_ns": s.concurrent_model_ns,
        "forced": s.forced,
        "unclaimed": s.unclaimed,
        "warnings": s.warnings,
        "crowded": s.crowded.iter().map(|c| json!({
            "rank": c.rank,
            "threads": c.threads,
            "cpus": c.cpus,
        })).collect::<Vec<_>>(),
        "rescheduled": s.rescheduled.iter().map(|r| json!({
            "rank": r.rank,
            "loop": r.loop_id,
            "iterations": r.iterations,
            "threads": r.threads.iter().map(|&(thread, measured, rescheduled)| json!({
                "thread": thread,
                "measured": measured,
                "rescheduled": rescheduled,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "locations": s.locations.iter().map(|l| {
            let st = &l.stats;
            json!({
                "rank": l.rank,
                "thread": l.thread,
                "events": st.events,
                "measured_ns": l.measured_ns(),
                "approximated_ns": l.approximated_ns(),
                "probe_ns": st.probe_ns,
                "uncertainty_ns": st.uncertainty_ns,
                "context_ns": st.context_ns.map(|(shorter, longer)| [shorter, longer]),
                "speed_ns": st.speed_ns.map(|(shorter, longer)| [shorter, longer]),
                "flush_ns": st.flush_ns,
                "wait_removed_ns": st.wait_removed_ns,
                "wait_added_ns": st.wait_added_ns,
                "dependencies": st.dependencies,
                "unmatched": st.unmatched,
                "clamped": st.clamped,
            })
        }).collect::<Vec<_>>(),
    })
}

/// The run's approximated time had every removed probe cost the least and
/// the most that `range` of a location's figures allows (the loops timed
/// at calibration, the cores' speed in the run): the range of the location
/// that ends last.
pub(crate) fn approximated_range(
    s: &Summary,
    range: impl Fn(&LocStats) -> Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let last = s
        .locations
        .iter()
        .filter(|l| l.stats.last.is_some())
        .max_by(|a, b| {
            let end = |l: &LocSummary| l.stats.last.map_or(0.0, |x| x.1);
            end(a).total_cmp(&end(b))
        })?;
    let (shorter, longer) = range(&last.stats)?;
    Some((
        (s.approximated_ns - shorter).max(0.0),
        s.approximated_ns + longer,
    ))
}
