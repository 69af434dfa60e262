//! `parallax analyze DIR`: the bottlenecks of an experiment, ranked by
//! severity, with their causes and what to change.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::report::{wrap, wrap_separated, wrap_words};

use anyhow::Context;
use serde_json::{json, Value};

use parallax_analysis::bottleneck::{self, Baselines, Config, Finding, Report};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::Experiment;
use parallax_output::text::{inert, inert_lines};

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
    let progress = parallax_report::term::Progress::new("bottleneck analysis", 0);
    let mut rep = run.all_or_none(bottleneck::analyze(&exp, &cfg, run.exec).map_err(Into::into))?;
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
    Ok(std::process::ExitCode::SUCCESS)
}

fn finding_json(rank: usize, f: &Finding) -> Value {
    json!({
        "order": rank + 1,
        "pattern": f.pattern.name(),
        "severity_s": f.severity_s,
        "rank": f.at.rank,
        "thread": f.at.thread,
        "region": f.region,
        "path": f.path,
        "source": f.source,
        "instances": f.instances,
        "culprits": f.culprits.iter().map(|c| json!({
            "rank": c.at.rank,
            "thread": c.at.thread,
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

/// The report as JSON.
pub fn to_json(r: &Report) -> Value {
    json!({
        "wall_s": r.wall_s,
        "events": r.events,
        "findings": r.findings.iter().enumerate().map(|(i, f)| finding_json(i, f)).collect::<Vec<_>>(),
        "delays": r.delays.iter().map(|d| json!({
            "rank": d.at.rank, "thread": d.at.thread, "region": d.region,
            "direct_s": d.direct_s, "propagated_s": d.propagated_s,
        })).collect::<Vec<_>>(),
        "critical_path": {
            "length_s": r.critical_path_s,
            "regions": r.critical_path.iter().map(|p| json!({
                "region": p.region, "time_s": p.time_s, "share": p.share,
            })).collect::<Vec<_>>(),
        },
        "balance": r.balance.iter().map(|b| json!({
            "rank": b.at.rank, "thread": b.at.thread,
            "computation_s": b.computation_s,
            "communication_s": b.communication_s,
            "synchronization_s": b.synchronization_s,
        })).collect::<Vec<_>>(),
        "regions": r.regions.iter().map(|x| json!({
            "region": x.region, "locations": x.locations,
            "max_s": x.max_s, "mean_s": x.mean_s,
            "imbalance_s": x.max_s - x.mean_s,
            "max_over_mean": if x.mean_s > 0.0 { x.max_s / x.mean_s } else { 0.0 },
            "max_rank": x.max_at.rank, "max_thread": x.max_at.thread,
        })).collect::<Vec<_>>(),
        "blocks": r.blocks.iter().map(|b| json!({
            "comm": b.comm, "blocks": b.blocks, "imbalance_s": b.imbalance_s,
            "worst": b.worst.map(|w| json!({"rank": w.rank, "thread": w.thread})),
        })).collect::<Vec<_>>(),
        "locality": r.locality,
        "uncontrollable_s": r.uncontrollable_s,
        "unmatched": r.unmatched,
        "warnings": r.warnings,
    })
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

/// The report as text.
pub fn text(r: &Report, top: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Bottleneck analysis: {} events, wall time {}, {} finding(s)",
        r.events,
        ms(r.wall_s),
        r.findings.len()
    );
    if r.findings.is_empty() {
        let _ = writeln!(s, "\nNo bottleneck above the detection thresholds.");
    }
    for (i, f) in r.findings.iter().take(top).enumerate() {
        let pct = if r.wall_s > 0.0 {
            100.0 * f.severity_s / r.wall_s
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "\n{:>2}. {} {} ({:.1}% of wall) at rank {} thread {} in {}",
            i + 1,
            f.pattern.name(),
            ms(f.severity_s),
            pct,
            f.at.rank,
            f.at.thread,
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
                .map(|c| {
                    format!(
                        "rank {} thread {} ({})",
                        c.at.rank,
                        c.at.thread,
                        ms(c.severity_s)
                    )
                })
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
    if !r.delays.is_empty() {
        let _ = writeln!(
            s,
            "\nRoot causes (delay costs: computation that made others wait):"
        );
        for d in r.delays.iter().take(top) {
            let _ = writeln!(
                s,
                "  rank {:>3} thread {:>3}  {:<32} direct {:>12}  propagated {:>12}",
                d.at.rank,
                d.at.thread,
                inert(&d.region),
                ms(d.direct_s),
                ms(d.propagated_s)
            );
        }
    }
    if !r.critical_path.is_empty() {
        let _ = writeln!(s, "\nCritical path ({}):", ms(r.critical_path_s));
        for p in r.critical_path.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<40} {:>12} {:>6.1}%",
                inert(&p.region),
                ms(p.time_s),
                100.0 * p.share
            );
        }
    }
    let _ = writeln!(
        s,
        "\nLoad balance (computation / communication / synchronization):"
    );
    for b in r.balance.iter().take(top) {
        let _ = writeln!(
            s,
            "  rank {:>3} thread {:>3}  {:>12} {:>12} {:>12}",
            b.at.rank,
            b.at.thread,
            ms(b.computation_s),
            ms(b.communication_s),
            ms(b.synchronization_s)
        );
    }
    let imb: Vec<_> = r
        .regions
        .iter()
        .filter(|x| x.max_s > x.mean_s)
        .take(top)
        .collect();
    if !imb.is_empty() {
        let _ = writeln!(s, "\nRegions across locations (max − mean, max/mean):");
        for x in imb {
            let _ = writeln!(
                s,
                "  {:<40} {:>12} {:>6.2}  slowest rank {} thread {}",
                inert(&x.region),
                ms(x.max_s - x.mean_s),
                if x.mean_s > 0.0 {
                    x.max_s / x.mean_s
                } else {
                    0.0
                },
                x.max_at.rank,
                x.max_at.thread
            );
        }
    }
    for b in r.blocks.iter().filter(|b| b.imbalance_s > 0.0) {
        let worst = b.worst.map_or(String::new(), |w| {
            format!(", mostly rank {} thread {}", w.rank, w.thread)
        });
        let _ = writeln!(
            s,
            "Blocks between collectives of {:#x}: {} blocks, imbalance {}{worst}",
            b.comm,
            b.blocks,
            ms(b.imbalance_s)
        );
    }
    if let Some(l) = r.locality {
        let _ = writeln!(s, "One-sided accesses to the own rank: {:.1}%", 100.0 * l);
    }
    let _ = writeln!(
        s,
        "Waiting without a remote cause (uncontrollable): {}",
        ms(r.uncontrollable_s)
    );
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
