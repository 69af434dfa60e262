//! `parallax report DIR`: flat and call-path profiles per location and in
//! total.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use serde_json::{json, Value};

use parallax_analysis::concurrency::{self, Concurrency};
use parallax_analysis::executor::Executor;
use parallax_analysis::profile::{ExperimentProfile, FlatRow, PathRow, Source, Times};
use parallax_model::defs::Probe;
use parallax_model::experiment::Experiment;
use parallax_report::term::{Paint, Progress};

use crate::fmt;

/// Width of the text report.
pub(crate) const WIDTH: usize = 100;

/// Arguments of `parallax report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The experiment directory.
    pub dir: PathBuf,
    /// Print JSON instead of text (every row, whatever --top says).
    #[arg(long)]
    pub json: bool,
    /// Rows per table in text output.
    #[arg(long, default_value_t = 12)]
    pub top: usize,
    /// Leave out the per-location sections.
    #[arg(long)]
    pub total_only: bool,
    /// Threads deriving profiles from traces (with --executor threads).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// How profiles are derived from traces: seq, threads or mpi (the
    /// ranks of `mpirun -np N parallax report ...`); the result is the
    /// same.
    #[arg(long, value_enum)]
    pub executor: Option<crate::executor::Kind>,
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    let exp = Experiment::open(&a.dir)
        .with_context(|| format!("cannot read the experiment {}", a.dir.display()))?;
    // Profiles derived from a long trace take a while: a spinner says so.
    let progress = Progress::new("reading profiles", 0);
    let run = crate::executor::start(a.executor, a.threads, Executor::Sequential)?;
    let prof = run.all_or_none(ExperimentProfile::load_with(&exp, run.exec).map_err(Into::into))?;
    drop(progress);
    if !run.is_root() {
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if a.json {
        crate::out(&(serde_json::to_string_pretty(&to_json(&exp, &prof))? + "\n"))?;
    } else {
        crate::out(&text(&exp, &prof, a.top, !a.total_only))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The whole report as text, at most `top` rows per table and 100
/// columns wide; coloured when stdout is a terminal.
pub fn text(exp: &Experiment, prof: &ExperimentProfile, top: usize, per_location: bool) -> String {
    let paint = Paint::stdout();
    let mut s = String::new();
    summary(&mut s, exp, prof);
    let progress = Progress::new("concurrency profile", 0);
    let conc = concurrency_of(exp);
    drop(progress);
    if let Some(c) = conc {
        let hist: Vec<String> = (0..=c.locations)
            .filter(|&k| c.cu(k) >= 0.0005)
            .map(|k| format!("{k}: {:.1}%", 100.0 * c.cu(k)))
            .collect();
        let head = format!(
            "Concurrency CEFF {:.1}%, CAVG {:.2} of {} locations busy; time with k busy:",
            100.0 * c.ceff(),
            c.cavg(),
            c.locations,
        );
        wrap(&mut s, &head, &hist, 12);
    }
    let _ = writeln!(
        s,
        "\n{}",
        paint.bold("Flat profile, all locations (sorted by exclusive time)")
    );
    flat_table(&mut s, &paint, &prof.flat_total(exp), top);
    let _ = writeln!(s, "\n{}", paint.bold("Call paths, all locations"));
    path_table(&mut s, &prof.paths_total(exp), top * 2);
    if per_location {
        for (i, l) in prof.locations.iter().enumerate() {
            let name = if l.name.is_empty() {
                String::new()
            } else {
                format!(" \"{}\"", l.name)
            };
            let src = match l.source {
                Source::Runtime => "runtime profile",
                Source::Trace => "derived from the trace",
            };
            let head = format!("Location {}:{}{}", l.rank, l.thread, name);
            let _ = writeln!(
                s,
                "\n{} {}",
                paint.bold(&head),
                paint.dim(&format!("({src})"))
            );
            flat_table(&mut s, &paint, &prof.flat_location(exp, i), top);
            path_table(&mut s, &prof.paths_location(exp, i), top);
        }
    }
    for w in &prof.warnings {
        // Warnings are wrapped, never cut: every word of them matters.
        let words: Vec<String> = w.split(' ').map(str::to_string).collect();
        let mut body = String::new();
        wrap_words(&mut body, "warning:", &words, 9);
        let body = body.replacen("warning:", &paint.warn("warning:"), 1);
        let _ = write!(s, "\n{body}");
    }
    s
}

/// `head` then `items` separated by commas, wrapped at [`WIDTH`] with
/// continuation lines indented by `indent`.
pub(crate) fn wrap(s: &mut String, head: &str, items: &[String], indent: usize) {
    wrap_separated(s, head, items, ",", indent);
}

/// `head` then `items`, each but the last followed by `sep`, wrapped at
/// [`WIDTH`] with continuation lines indented by `indent`.
pub(crate) fn wrap_separated(
    s: &mut String,
    head: &str,
    items: &[String],
    sep: &str,
    indent: usize,
) {
    let n = items.len();
    let pieces: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            if i + 1 < n {
                format!("{it}{sep}")
            } else {
                it.clone()
            }
        })
        .collect();
    wrap_words(s, head, &pieces, indent);
}

/// `head` then `words` separated by spaces, wrapped at [`WIDTH`] with
/// continuation lines indented by `indent`; a word longer than a line
/// stands alone on its line.
pub(crate) fn wrap_words(s: &mut String, head: &str, words: &[String], indent: usize) {
    let mut line = head.to_string();
    for w in words {
        let len = line.chars().count();
        if len > indent && len + 1 + w.chars().count() > WIDTH {
            let _ = writeln!(s, "{line}");
            line = " ".repeat(indent - 1);
        }
        line.push(' ');
        line.push_str(w);
    }
    let _ = writeln!(s, "{line}");
}

/// The concurrency profile, where the experiment has traces.
fn concurrency_of(exp: &Experiment) -> Option<Concurrency> {
    let c = concurrency::profile(exp, Executor::pool()).ok()?;
    (c.locations > 0 && c.total_ns > 0.0).then_some(c)
}

fn summary(s: &mut String, exp: &Experiment, prof: &ExperimentProfile) {
    let nloc: usize = exp.processes.iter().map(|p| p.locations.len()).sum();
    let _ = writeln!(
        s,
        "Experiment  {}\n            {} process{}, {} location{}",
        fmt::fit(&exp.dir.display().to_string(), WIDTH - 12),
        exp.processes.len(),
        if exp.processes.len() == 1 { "" } else { "es" },
        nloc,
        if nloc == 1 { "" } else { "s" }
    );
    if let Some(info) = exp.processes.first().and_then(|p| p.info.as_ref()) {
        let mut cmd = info.program.clone();
        for a in &info.args {
            cmd.push(' ');
            cmd.push_str(a);
        }
        let _ = writeln!(s, "Program     {}", fmt::fit(&cmd, WIDTH - 12));
        let _ = writeln!(
            s,
            "Mode        {} (Parallax {}, host {})",
            info.mode.name(),
            info.version,
            info.host
        );
    }
    let killed = exp.processes.iter().filter(|p| p.killed()).count();
    let unfinished = exp
        .processes
        .iter()
        .filter(|p| p.end_unix_ns.is_none() && !p.killed())
        .count();
    if killed > 0 {
        let _ = writeln!(
            s,
            "Note        {killed} process(es) were killed while measuring: every event they recorded\n            up to then is kept (from their spill files)"
        );
    }
    if unfinished > 0 {
        let _ = writeln!(
            s,
            "Note        {unfinished} process(es) did not finish measuring cleanly (crash or kill):\n            data up to the last written block"
        );
    }
    let untraced: u64 = exp
        .processes
        .iter()
        .flat_map(|p| p.unrecorded.values())
        .map(|u| u.threads)
        .sum();
    if untraced > 0 {
        let _ = writeln!(
            s,
            "Note        {untraced} thread(s) were not traced: the profiles below leave them out (see the\n            warnings at the end)"
        );
    }
    if let Some(p) = exp.processes.first() {
        let ghz = 1.0 / p.clock.ns_per_tick;
        let mut costs = String::new();
        for probe in [Probe::Enter, Probe::Leave, Probe::Event, Probe::ClockRead] {
            if let Some(c) = p.calibration.iter().find(|c| c.probe == probe) {
                let _ = write!(costs, "{} {:.1}±{:.1}  ", probe.name(), c.mean_ns, c.sd_ns);
            }
        }
        let _ = writeln!(s, "Clock       {:?}, {:.3} GHz", p.clock_source, ghz);
        if !costs.is_empty() {
            let line = format!("{costs}(ns, at start)");
            let _ = writeln!(s, "Probe cost  {}", fmt::fit(&line, WIDTH - 12));
        }
    }
    let wall: f64 = prof
        .locations
        .iter()
        .flat_map(|l| {
            l.tree
                .nodes
                .iter()
                .filter(|n| n.parent.is_none())
                .map(move |n| n.stats.inclusive as f64 * l.clock.ns_per_tick)
        })
        .fold(0.0, f64::max);
    let _ = writeln!(s, "Longest top-level region  {}", fmt::ns(wall));
}

/// Columns: excl% 6, exclusive 10, inclusive 10, calls 11, mean 10, sd
/// 10, kind 13, then the region in what is left of [`WIDTH`].
fn flat_table(s: &mut String, paint: &Paint, rows: &[FlatRow], top: usize) {
    const REGION: usize = WIDTH - 80;
    let total: f64 = rows.iter().map(|r| r.times.exclusive).sum();
    let head = format!(
        "  {:>6} {:>10} {:>10} {:>11} {:>10} {:>10}  {:<13} region",
        "excl%", "exclusive", "inclusive", "calls", "mean", "sd", "kind"
    );
    let _ = writeln!(s, "{}", paint.dim(&head));
    for r in rows.iter().take(top) {
        let t = &r.times;
        let pct = if total > 0.0 {
            100.0 * t.exclusive / total
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  {} {:>10} {:>10} {:>11} {:>10} {:>10}  {:<13} {}",
            paint.share(pct, &format!("{pct:>5.1}%")),
            fmt::ns(t.exclusive),
            fmt::ns(t.inclusive),
            fmt::count(t.count),
            fmt::ns(t.mean()),
            fmt::ns(t.std_dev()),
            r.kind.map_or("", |k| k.name()),
            fmt::fit(&r.region, REGION)
        );
    }
    if rows.len() > top {
        let _ = writeln!(
            s,
            "  ... {} more regions (--top N shows more)",
            rows.len() - top
        );
    }
}

fn path_table(s: &mut String, rows: &[PathRow], top: usize) {
    let _ = writeln!(
        s,
        "  {:>11} {:>11} {:>11} {:>5}  call path",
        "inclusive", "exclusive", "calls", "locs"
    );
    for r in rows.iter().take(top) {
        let name = r.path.last().map(String::as_str).unwrap_or("");
        let indent = "  ".repeat(r.depth.min(20));
        let _ = writeln!(
            s,
            "  {:>11} {:>11} {:>11} {:>5}  {}{}",
            fmt::ns(r.times.inclusive),
            fmt::ns(r.times.exclusive),
            fmt::count(r.times.count),
            r.locations,
            indent,
            fmt::fit(name, (WIDTH - 45).saturating_sub(indent.len()).max(12))
        );
    }
    if rows.len() > top {
        let _ = writeln!(s, "  ... {} more call paths", rows.len() - top);
    }
}

fn times_json(t: &Times) -> Value {
    json!({
        "count": t.count,
        "inclusive_ns": t.inclusive,
        "exclusive_ns": t.exclusive,
        "min_ns": t.min,
        "max_ns": t.max,
        "mean_ns": t.mean(),
        "sd_ns": t.std_dev(),
    })
}

fn flat_json(rows: &[FlatRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                let mut v = times_json(&r.times);
                v["region"] = json!(r.region);
                v["kind"] = json!(r.kind.map(|k| k.name()));
                v["category"] = json!(r.kind.map(|k| k.category().name()));
                v
            })
            .collect(),
    )
}

fn paths_json(rows: &[PathRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                let mut v = times_json(&r.times);
                v["path"] = json!(r.path);
                v["locations"] = json!(r.locations);
                v
            })
            .collect(),
    )
}

/// The whole report as JSON.
pub fn to_json(exp: &Experiment, prof: &ExperimentProfile) -> Value {
    let processes: Vec<Value> = exp
        .processes
        .iter()
        .map(|p| {
            let info = p.info.as_ref();
            json!({
                "rank": p.rank,
                "program": info.map(|i| i.program.clone()),
                "args": info.map(|i| i.args.clone()),
                "host": info.map(|i| i.host.clone()),
                "mode": info.map(|i| i.mode.name()),
                "finished_cleanly": p.end_unix_ns.is_some(),
                "killed": p.killed(),
                "unrecorded": p.unrecorded.iter().map(|(reason, u)| json!({
                    "reason": reason,
                    "threads": u.threads,
                    "events": u.events,
                    "bytes": u.bytes,
                })).collect::<Vec<_>>(),
                "clock_ns_per_tick": p.clock.ns_per_tick,
                "calibration": p.calibration.iter().map(|c| json!({
                    "probe": c.probe.name(),
                    "mode": c.mode.name(),
                    "mean_ns": c.mean_ns,
                    "sd_ns": c.sd_ns,
                    "min_ns": c.min_ns,
                    "samples": c.samples,
                })).collect::<Vec<_>>(),
                "properties": p.properties.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    let locations: Vec<Value> = prof
        .locations
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "rank": l.rank,
                "thread": l.thread,
                "name": l.name,
                "source": match l.source { Source::Runtime => "runtime", Source::Trace => "trace" },
                "flat": flat_json(&prof.flat_location(exp, i)),
                "paths": paths_json(&prof.paths_location(exp, i)),
                "categories_ns": prof.categories(exp, i).iter().map(|(c, v)| (c.name().to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    let conc = concurrency_of(exp).map(|c| {
        json!({
            "locations": c.locations,
            "total_ns": c.total_ns,
            "time_ns_with_k_busy": c.time_ns,
            "ceff": c.ceff(),
            "cavg": c.cavg(),
        })
    });
    json!({
        "experiment": exp.dir,
        "concurrency": conc,
        "processes": processes,
        "total": {"flat": flat_json(&prof.flat_total(exp)), "paths": paths_json(&prof.paths_total(exp))},
        "locations": locations,
        "warnings": prof.warnings,
    })
}
