//! `parallax analyze DIR`: the bottlenecks of an experiment, ranked by
//! severity, with their causes and what to change.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::report::{wrap, wrap_separated, wrap_words};

use anyhow::Context;
use serde_json::{json, Value};

use parallax_analysis::bottleneck::{
    self, profiles, Balance, Baselines, Config, Finding, RegionBalance, Report, Where,
};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::Experiment;
use parallax_output::text::{inert, inert_lines};
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
    /// Analysis threads (1: sequential; the result is the same).
    #[arg(long, default_value_t = 1)]
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
    let run = crate::executor::start(a.executor, a.threads, Executor::Sequential)?;
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
        crate::console::out(&text(&rep, a.top))?;
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

/// `part` over `whole`, 0 for an empty whole.
fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
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

/// The load-balance rows, most computation first: an overloaded location
/// heads the table.
fn balance_rows(r: &Report) -> Vec<&Balance> {
    let mut v: Vec<&Balance> = r.balance.iter().collect();
    v.sort_by(|a, b| {
        b.computation_s
            .total_cmp(&a.computation_s)
            .then(a.at.cmp(&b.at))
    });
    v
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

/// The line that ends a table cut to `top` of `total` rows.
fn more(s: &mut String, total: usize, top: usize, what: &str) {
    if total > top {
        let _ = writeln!(s, "  … {} more {what} (--top N shows more)", total - top);
    }
}

/// The report as text, each table cut to `top` rows.
pub fn text(r: &Report, top: usize) -> String {
    let mut s = String::new();
    let name = |at: Where| r.names.label(at.rank, at.thread);
    if r.from_profiles {
        let _ = writeln!(
            s,
            "Bottleneck analysis from profiles only (the run has no trace), {} finding(s)",
            r.findings.len()
        );
        wrap(
            &mut s,
            "Not analysed (they need a trace; measure with --mode trace or both):",
            &profiles::NEED_TRACE
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>(),
            4,
        );
    } else {
        let _ = writeln!(
            s,
            "Bottleneck analysis: {} events, wall time {}, {} finding(s)",
            r.events,
            ms(r.wall_s),
            r.findings.len()
        );
    }
    if r.findings.is_empty() {
        let _ = writeln!(s, "\nNo bottleneck above the detection thresholds.");
    }
    for (i, f) in r.findings.iter().take(top).enumerate() {
        let _ = writeln!(
            s,
            "\n{:>2}. {} {} ({:.1}% of wall) at {} in {}",
            i + 1,
            f.pattern.name(),
            ms(f.severity_s),
            100.0 * share(f.severity_s, r.wall_s),
            name(f.at),
            crate::fmt::fit(&f.region, 40)
        );
        if f.path.len() > 1 {
            let path: Vec<String> = f.path.iter().map(|x| inert(x).into_owned()).collect();
            wrap_separated(&mut s, "    path:", &path, " >", 10);
        }
        if let Some(src) = &f.source {
            let _ = writeln!(s, "    source: {}", inert(src));
        }
        if !f.culprits.is_empty() {
            let c: Vec<String> = f
                .culprits
                .iter()
                .map(|c| format!("{} ({})", name(c.at), ms(c.severity_s)))
                .collect();
            wrap(&mut s, "    caused by:", &c, 15);
        }
        if let Some(d) = &f.detection {
            let exp = d
                .expected_s
                .map_or(String::new(), |e| format!(", expected {}", ms(e)));
            let _ = writeln!(
                s,
                "    detected by: {} (mean {} per visit{exp}), {} instance(s)",
                d.method,
                ms(d.mean_s),
                f.instances
            );
        }
        let words: Vec<String> = f.hint.split_whitespace().map(str::to_string).collect();
        wrap_words(&mut s, "    hint:", &words, 10);
    }
    if r.findings.len() > top {
        let _ = writeln!(s);
        more(&mut s, r.findings.len(), top, "findings");
    }
    if !r.delays.is_empty() {
        let _ = writeln!(
            s,
            "\nRoot causes (delay costs: computation that made others wait):"
        );
        for d in r.delays.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<28} {:<24} direct {:>12}  propagated {:>12}",
                crate::fmt::fit(&name(d.at), 28),
                crate::fmt::fit(&d.region, 24),
                ms(d.direct_s),
                ms(d.propagated_s)
            );
        }
        more(&mut s, r.delays.len(), top, "root causes");
    }
    if !r.critical_path.is_empty() {
        let _ = writeln!(s, "\nCritical path ({}):", ms(r.critical_path_s));
        for p in r.critical_path.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<40} {:>12} {:>6.1}%",
                crate::fmt::fit(&p.region, 40),
                ms(p.time_s),
                100.0 * p.share
            );
        }
        more(&mut s, r.critical_path.len(), top, "regions");
    }
    let _ = writeln!(
        s,
        "\nLoad balance (most computation first; shares of each location's measured time):"
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>12} {:>18} {:>18} {:>18}",
        "location", "measured", "computation", "communication", "synchronization"
    );
    let part = |v: f64, b: &Balance| format!("{} {:>3.0}%", ms(v), 100.0 * share(v, b.measured_s));
    let rows = balance_rows(r);
    for b in rows.iter().take(top) {
        let _ = writeln!(
            s,
            "  {:<28} {:>12} {:>18} {:>18} {:>18}",
            crate::fmt::fit(&name(b.at), 28),
            ms(b.measured_s),
            part(b.computation_s, b),
            part(b.communication_s, b),
            part(b.synchronization_s, b)
        );
    }
    more(&mut s, rows.len(), top, "locations");
    let imb: Vec<_> = r.regions.iter().filter(|x| x.max_s > x.mean_s).collect();
    if !imb.is_empty() {
        let _ = writeln!(
            s,
            "\nRegions across the locations that run them (max − mean, max/mean):"
        );
        for x in imb.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<32} {:>12} {:>6.2} of {:>3} locations, slowest {}",
                crate::fmt::fit(&x.region, 32),
                ms(x.max_s - x.mean_s),
                share(x.max_s, x.mean_s),
                x.locations,
                name(x.max_at)
            );
        }
        more(&mut s, imb.len(), top, "regions");
    }
    let blocks: Vec<_> = r.blocks.iter().filter(|b| b.imbalance_s > 0.0).collect();
    if !blocks.is_empty() {
        let _ = writeln!(
            s,
            "\nBlocks between collectives (sum over blocks of max − mean work):"
        );
        for b in blocks.iter().take(top) {
            let worst = b
                .worst
                .map_or(String::new(), |w| format!(", mostly {}", name(w)));
            let _ = writeln!(
                s,
                "  {}: {} blocks, imbalance {}{worst}",
                b.name,
                b.blocks,
                ms(b.imbalance_s)
            );
        }
        more(&mut s, blocks.len(), top, "communicators");
    }
    if let Some(l) = r.locality {
        let _ = writeln!(s, "One-sided accesses to the own rank: {:.1}%", 100.0 * l);
    }
    if !r.from_profiles {
        let _ = writeln!(
            s,
            "Waiting without a remote cause (uncontrollable): {}, {:.1}% of the {} locations' \
             measured time",
            ms(r.uncontrollable_s),
            100.0 * share(r.uncontrollable_s, r.measured_s),
            r.balance.len()
        );
    }
    if r.unmatched > 0 {
        let _ = writeln!(
            s,
            "Dependencies whose partner was not recorded: {}",
            r.unmatched
        );
    }
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {}", inert(w));
    }
    // Names reach the hints too: what is left of a name's control
    // characters is made visible here.
    fit_lines(&inert_lines(&s))
}

/// `text` with every line longer than 100 columns wrapped at word
/// boundaries, continuation lines indented under the line's first word.
fn fit_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.chars().count() <= crate::report::WIDTH {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let mut words = line.split_whitespace().map(str::to_string);
        let head = format!("{}{}", " ".repeat(lead), words.next().unwrap_or_default());
        let rest: Vec<String> = words.collect();
        wrap_words(&mut out, &head, &rest, lead + 5);
    }
    out
}
