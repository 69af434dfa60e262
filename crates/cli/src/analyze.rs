//! `parallax analyze DIR`: the bottlenecks of an experiment, ranked by
//! severity, with their causes and what to change.

use std::path::PathBuf;

use anyhow::Context;
use serde_json::{json, Value};

use parallax_analysis::bottleneck::{
    self, profiles, Baselines, Config, Finding, RegionBalance, Report, Where,
};
use parallax_model::experiment::Experiment;
use parallax_report::text::bottlenecks::{self, balance_rows, share};
use parallax_view::profile::ExperimentProfile;

/// Arguments of `parallax analyze`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The experiment directory (a trace).
    pub dir: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Findings and rows per table in text output.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Analysis threads (0: all cores; 1: sequential; the result is the
    /// same).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub threads: usize,
    /// How the passes run: seq, threads (--threads of them) or mpi
    /// (the ranks of `mpirun -np N parallax analyze ...`); the result is
    /// the same.
    #[arg(long, value_enum)]
    pub executor: Option<crate::executor::Kind>,
    /// Baselines measured by `parallax baseline` (default: the file it
    /// writes, if present).
    #[arg(long)]
    pub baselines: Option<PathBuf>,
    /// Least share of the wall time a finding must lose.
    #[arg(long)]
    pub hotspot: Option<f64>,
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    let exp = Experiment::open(&a.dir)
        .with_context(|| format!("cannot read the experiment {}", a.dir.display()))?;
    let mut cfg = Config::default();
    if let Some(h) = a.hotspot {
        anyhow::ensure!((0.0..=1.0).contains(&h), "--hotspot must be within 0..1");
        cfg.hotspot = h;
    }
    let mut warnings = Vec::new();
    let path = a.baselines.clone().or_else(|| {
        let p = crate::baseline::default_path()?;
        p.is_file().then_some(p)
    });
    if let Some(p) = path {
        let (b, w) = Baselines::load(&p).with_context(|| format!("cannot read {}", p.display()))?;
        cfg.baselines = b;
        warnings.extend(w);
    }
    let run = crate::executor::start(a.executor, a.threads)?;
    let traced = exp
        .processes
        .iter()
        .any(|p| p.locations.values().any(|l| l.events.is_some()));
    let progress = parallax_report::term::Progress::new("bottleneck analysis", 0);
    let mut rep = if traced {
        run.all_or_none(bottleneck::analyze(&exp, &cfg, run.exec).map_err(Into::into))?
    } else {
        // Without a trace, what the profiles allow.
        let prof = run.all_or_none(ExperimentProfile::load(&exp).map_err(Into::into))?;
        profiles::analyze(&exp, &prof, &cfg)
    };
    drop(progress);
    if !run.is_root() {
        return Ok(std::process::ExitCode::SUCCESS);
    }
    rep.warnings.extend(warnings);
    if a.json {
        crate::console::out_json(&to_json(&rep))?;
    } else {
        crate::console::out(&bottlenecks::text(&rep, a.top))?;
    }
    if rep.from_profiles {
        crate::console::warn(&format!(
            "{} has no trace: wait states, their causes and the critical path were \
             not analysed; measure with `parallax run --mode trace` or `--mode both` (the default)",
            a.dir.display()
        ));
        return Ok(std::process::ExitCode::from(NO_TRACE));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// Exit status of an analysis of a run without a trace: only part of it
/// could run.
pub const NO_TRACE: u8 = 3;

fn finding_json(r: &Report, rank: usize, f: &Finding) -> Value {
    json!({
        "order": rank + 1,
        "pattern": f.pattern.name(),
        "severity_s": f.severity_s,
        "share_of_wall": share(f.severity_s, r.wall_s),
        "rank": f.at.rank,
        "thread": f.at.thread,
        "location": r.names.label(f.at.rank, f.at.thread),
        "region": f.region,
        "path": f.path,
        "source": f.source,
        "instances": f.instances,
        "culprits": f.culprits.iter().map(|c| json!({
            "rank": c.at.rank,
            "thread": c.at.thread,
            "location": r.names.label(c.at.rank, c.at.thread),
            "severity_s": c.severity_s,
        })).collect::<Vec<_>>(),
        "detection": f.detection.as_ref().map(|d| json!({
            "method": d.method,
            "mean_s": d.mean_s,
            "expected_s": d.expected_s,
        })),
        "hint": f.hint,
    })
}

/// The location fields of a JSON row: rank, thread, its label.
fn at_json(r: &Report, at: Where) -> Value {
    json!({"rank": at.rank, "thread": at.thread, "location": r.names.label(at.rank, at.thread)})
}

/// `row` with the location fields of `at` added.
fn with_at(r: &Report, at: Where, mut row: Value) -> Value {
    if let (Value::Object(m), Value::Object(a)) = (&mut row, at_json(r, at)) {
        m.extend(a);
    }
    row
}

/// The report as JSON: every row of every table (text output cuts them
/// at `--top`), largest first, with each table's length in `counts`.
pub fn to_json(r: &Report) -> Value {
    let regions: Vec<&RegionBalance> = r.regions.iter().collect();
    json!({
        "wall_s": r.wall_s,
        "events": r.events,
        "trace": !r.from_profiles,
        "skipped": if r.from_profiles { profiles::NEED_TRACE.to_vec() } else { Vec::new() },
        "findings": r.findings.iter().enumerate().map(|(i, f)| finding_json(r, i, f)).collect::<Vec<_>>(),
        "delays": r.delays.iter().map(|d| with_at(r, d.at, json!({
            "region": d.region,
            "direct_s": d.direct_s, "propagated_s": d.propagated_s,
        }))).collect::<Vec<_>>(),
        "critical_path": {
            "length_s": r.critical_path_s,
            "regions": r.critical_path.iter().map(|p| json!({
                "region": p.region, "time_s": p.time_s, "share": p.share,
            })).collect::<Vec<_>>(),
        },
        "balance": balance_rows(r).iter().map(|b| with_at(r, b.at, json!({
            "measured_s": b.measured_s,
            "computation_s": b.computation_s,
            "communication_s": b.communication_s,
            "synchronization_s": b.synchronization_s,
            "computation_share": share(b.computation_s, b.measured_s),
        }))).collect::<Vec<_>>(),
        "regions": regions.iter().map(|x| json!({
            "region": x.region, "locations": x.locations,
            "max_s": x.max_s, "mean_s": x.mean_s,
            "imbalance_s": x.max_s - x.mean_s,
            "max_over_mean": share(x.max_s, x.mean_s),
            "max_rank": x.max_at.rank, "max_thread": x.max_at.thread,
            "max_location": r.names.label(x.max_at.rank, x.max_at.thread),
        })).collect::<Vec<_>>(),
        "blocks": r.blocks.iter().map(|b| json!({
            "comm": b.comm, "name": b.name, "blocks": b.blocks, "imbalance_s": b.imbalance_s,
            "worst": b.worst.map(|w| at_json(r, w)),
        })).collect::<Vec<_>>(),
        "counts": {
            "findings": r.findings.len(),
            "delays": r.delays.len(),
            "critical_path": r.critical_path.len(),
            "balance": r.balance.len(),
            "regions": r.regions.len(),
            "blocks": r.blocks.len(),
        },
        "locality": r.locality,
        "uncontrollable_s": r.uncontrollable_s,
        "measured_s": r.measured_s,
        "unmatched": r.unmatched,
        "warnings": r.warnings,
    })
}
