//! `parallax report DIR`: flat and call-path profiles per location and in
//! total.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use serde_json::{json, Value};

use parallax_analysis::concurrency::{self, Concurrency};
use parallax_analysis::executor::Executor;
use parallax_model::defs::Probe;
use parallax_model::experiment::Experiment;
use parallax_output::text::inert;
use parallax_report::term::{Paint, Progress};
use parallax_view::names::{kind_label, LocationNames};
use parallax_view::profile::{ExperimentProfile, FlatRow, LocationProfile, PathRow, Source, Times};

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
    /// When to colour the text.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: crate::launcher::Color,
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    let exp = Experiment::open(&a.dir).with_context(|| {
        // A manifest without processes: say how its run went.
        let state = crate::experiment_dir::run_state(&a.dir)
            .map_or(String::new(), |s| format!(" (its run: {s})"));
        format!("cannot read the experiment {}{state}", a.dir.display())
    })?;
    // Profiles derived from a long trace take a while: a spinner says so.
    let progress = Progress::new("reading profiles", 0);
    let run = crate::executor::start(a.executor, a.threads, Executor::Sequential)?;
    let prof = run.all_or_none(run.exec.load_profile(&exp).map_err(Into::into))?;
    drop(progress);
    if !run.is_root() {
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if a.json {
        write_json(
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
            &exp,
            &prof,
        )?;
    } else {
        crate::console::out(&text(&exp, &prof, a.top, !a.total_only, a.color.paint()))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The whole report as text, at most `top` rows per table and 100
/// columns wide, in the styles of `paint`.
pub fn text(
    exp: &Experiment,
    prof: &ExperimentProfile,
    top: usize,
    per_location: bool,
    paint: Paint,
) -> String {
    let names = LocationNames::new(exp);
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
    let all = Whole::of(prof.locations.iter(), "(all locations)");
    let _ = writeln!(
        s,
        "\n{}",
        paint.bold("Flat profile, all locations (sorted by exclusive time)")
    );
    flat_table(&mut s, &paint, &all, &prof.flat_total(exp), top);
    let _ = writeln!(s, "\n{}", paint.bold("Call paths, all locations"));
    path_table(&mut s, &all, &prof.paths_total(exp), top * 2);
    let calls = calls_in_all(exp, prof);
    if !calls.is_empty() {
        let _ = writeln!(
            s,
            "\n{}",
            paint.bold("Calls not all recorded (throttled, beyond the depth limit, recording off)")
        );
        let _ = writeln!(s, "{:>14} {:>14}  region", "recorded", "in all");
        for c in calls.iter().take(top) {
            let _ = writeln!(
                s,
                "{:>14} {:>14}  {}",
                fmt::count(c.recorded),
                fmt::count(c.all),
                fmt::fit(&inert(&c.region), WIDTH - 31)
            );
        }
        if calls.len() > top {
            let _ = writeln!(s, "{:>31}… {} more", "", calls.len() - top);
        }
    }
    if per_location {
        for (i, l) in prof.locations.iter().enumerate() {
            let src = match l.source {
                Source::Runtime => "runtime profile",
                Source::Trace => "derived from the trace",
            };
            let head = format!("Location {}", inert(&names.label(l.rank, l.thread)));
            let _ = writeln!(
                s,
                "\n{} {}",
                paint.bold(&head),
                paint.dim(&format!("({src})"))
            );
            let whole = Whole::of(std::iter::once(l), "(whole location)");
            flat_table(&mut s, &paint, &whole, &prof.flat_location(exp, i), top);
            path_table(&mut s, &whole, &prof.paths_location(exp, i), top);
        }
    }
    for w in &prof.warnings {
        // Warnings are wrapped, never cut: every word of them matters.
        let words: Vec<String> = inert(w).split(' ').map(str::to_string).collect();
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
    let c = concurrency::profile(exp).ok()?;
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
            inert(&info.version),
            inert(&info.host)
        );
    }
    if let Some(state) = crate::experiment_dir::run_state(&exp.dir) {
        let _ = writeln!(s, "Status      {}", fmt::fit(&state, WIDTH - 12));
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
        let cal = |probe: Probe| p.calibration.iter().find(|c| c.probe == probe);
        let mut lines = Vec::new();
        for probes in [
            &[Probe::Enter, Probe::Leave, Probe::Event, Probe::ClockRead][..],
            &[Probe::HookPair, Probe::HookSkipped][..],
        ] {
            let mut line = String::new();
            for &probe in probes {
                if let Some(c) = cal(probe) {
                    let _ = write!(line, "{} {:.1}±{:.1}  ", probe.name(), c.mean_ns, c.sd_ns);
                }
            }
            if !line.is_empty() {
                lines.push(line);
            }
        }
        for (what, min, max) in [
            (
                "hook_pair",
                Probe::HookPairInContextMin,
                Probe::HookPairInContextMax,
            ),
            (
                "hook_skipped",
                Probe::HookSkippedInContextMin,
                Probe::HookSkippedInContextMax,
            ),
        ] {
            if let (Some(lo), Some(hi), Some(last)) = (cal(min), cal(max), lines.last_mut()) {
                let _ = write!(
                    last,
                    "{what} in place {:.1}-{:.1}  ",
                    lo.mean_ns, hi.mean_ns
                );
            }
        }
        let _ = writeln!(s, "Clock       {:?}, {:.3} GHz", p.clock_source, ghz);
        if let Some(last) = lines.last_mut() {
            last.push_str("(ns, at start)");
        }
        let runs = &p.skipped_in_run;
        let calls: u64 = runs.iter().map(|r| r.calls).sum();
        if calls > 0 {
            let ps: f64 = runs.iter().map(|r| r.calls as f64 * r.ps as f64).sum();
            lines.push(format!(
                "hook_skipped timed in the run {:.1} ns (over {} calls, {} samples)",
                ps / calls as f64 / 1000.0,
                fmt::count(calls),
                runs.len()
            ));
        }
        for (i, line) in lines.iter().enumerate() {
            let head = if i == 0 {
                "Probe cost  "
            } else {
                "            "
            };
            let _ = writeln!(s, "{head}{}", fmt::fit(line, WIDTH - 12));
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

/// The whole time of one location or of several, which a table's shares
/// are of: their measured time, and the part outside recorded regions.
struct Whole {
    label: &'static str,
    /// Measured time, ns (time in regions where it is unknown).
    ns: f64,
    /// Time outside any recorded region, ns.
    outside_ns: f64,
    /// Locations whose measured time is unknown (only a profile of a
    /// thread other than the initial one).
    unknown: usize,
}

impl Whole {
    fn of<'a>(locs: impl Iterator<Item = &'a LocationProfile>, label: &'static str) -> Whole {
        let mut w = Whole {
            label,
            ns: 0.0,
            outside_ns: 0.0,
            unknown: 0,
        };
        for l in locs {
            w.ns += l.whole_ns();
            w.outside_ns += l.outside_ns();
            w.unknown += usize::from(l.measured_ns.is_none());
        }
        w
    }

    fn share(&self, ns: f64) -> f64 {
        if self.ns > 0.0 {
            100.0 * ns / self.ns
        } else {
            0.0
        }
    }
}

/// Label of the time outside any recorded region.
pub(crate) const OUTSIDE: &str = "(outside recorded regions)";

/// Columns: excl% 6, exclusive 10, inclusive 10, calls 11, mean 10, sd
/// 10, kind 13, then the region in what is left of [`WIDTH`]. The first
/// rows are the whole measured time and the time outside any recorded
/// region (labelled from the kind column on, which they leave empty);
/// shares are of the whole.
fn flat_table(s: &mut String, paint: &Paint, whole: &Whole, rows: &[FlatRow], top: usize) {
    const REGION: usize = WIDTH - 80;
    let head = format!(
        "  {:>6} {:>10} {:>10} {:>11} {:>10} {:>10}  {:<13} region",
        "excl%", "exclusive", "inclusive", "calls", "mean", "sd", "kind"
    );
    let _ = writeln!(s, "{}", paint.dim(&head));
    let _ = writeln!(
        s,
        "  {:>6} {:>10} {:>10} {:>11} {:>10} {:>10}  {}",
        "100.0%",
        "",
        fmt::ns(whole.ns),
        "",
        "",
        "",
        whole.label
    );
    if whole.unknown > 0 {
        let _ = writeln!(
            s,
            "  {}",
            paint.dim(&format!(
                "(measured time unknown for {} location(s) with only a profile: their time \
                 in regions stands for it)",
                whole.unknown
            ))
        );
    }
    let pct = whole.share(whole.outside_ns);
    let _ = writeln!(
        s,
        "  {} {:>10} {:>10} {:>11} {:>10} {:>10}  {}",
        paint.share(pct, &format!("{pct:>5.1}%")),
        fmt::ns(whole.outside_ns),
        fmt::ns(whole.outside_ns),
        "",
        "",
        "",
        OUTSIDE
    );
    for r in rows.iter().take(top) {
        let t = &r.times;
        let pct = whole.share(t.exclusive);
        let _ = writeln!(
            s,
            "  {} {:>10} {:>10} {:>11} {:>10} {:>10}  {:<13} {}",
            paint.share(pct, &format!("{pct:>5.1}%")),
            fmt::ns(t.exclusive),
            fmt::ns(t.inclusive),
            fmt::count(t.count),
            fmt::ns(t.mean()),
            fmt::ns(t.std_dev()),
            r.kind.map_or("", |k| kind_label(k, &r.region)),
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

/// The call paths under a root row of the whole measured time (its
/// exclusive time is the time outside any recorded region).
fn path_table(s: &mut String, whole: &Whole, rows: &[PathRow], top: usize) {
    let _ = writeln!(
        s,
        "  {:>11} {:>11} {:>11} {:>5}  call path",
        "inclusive", "exclusive", "calls", "locs"
    );
    let _ = writeln!(
        s,
        "  {:>11} {:>11} {:>11} {:>5}  {}",
        fmt::ns(whole.ns),
        fmt::ns(whole.outside_ns),
        "",
        "",
        whole.label
    );
    for r in rows.iter().take(top) {
        let name = r.region.as_str();
        let indent = "  ".repeat(r.depth.min(20) + 1);
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

/// A flat row, with its share of `whole_ns` (the measured time).
/// A compiler-instrumented function's calls, summed over the locations.
struct Calls {
    region: String,
    recorded: u64,
    all: u64,
}

/// The functions that some location called more often than it recorded
/// (the runtime's `Calls` records), most calls first.
fn calls_in_all(exp: &Experiment, prof: &ExperimentProfile) -> Vec<Calls> {
    let mut unrecorded: BTreeMap<String, u64> = BTreeMap::new();
    for (i, l) in prof.locations.iter().enumerate() {
        let p = &exp.processes[l.process];
        let mut flat = None;
        for (&(_, r), &all) in p.calls.range((l.thread, 0)..=(l.thread, u32::MAX)) {
            let name = p.region_name(r);
            let rows = flat.get_or_insert_with(|| prof.flat_location(exp, i));
            let recorded = rows
                .iter()
                .find(|x| x.region == name)
                .map_or(0, |x| x.times.count);
            *unrecorded.entry(name).or_default() += all.saturating_sub(recorded);
        }
    }
    let total = if unrecorded.is_empty() {
        Vec::new()
    } else {
        prof.flat_total(exp)
    };
    let mut v: Vec<Calls> = unrecorded
        .into_iter()
        .map(|(region, more)| {
            let recorded = total
                .iter()
                .find(|x| x.region == region)
                .map_or(0, |x| x.times.count);
            Calls {
                region,
                recorded,
                all: recorded + more,
            }
        })
        .collect();
    v.sort_by(|a, b| b.all.cmp(&a.all).then_with(|| a.region.cmp(&b.region)));
    v
}

fn flat_json(r: &FlatRow, whole_ns: f64) -> Value {
    let mut v = times_json(&r.times);
    v["region"] = json!(r.region);
    v["share"] = json!(if whole_ns > 0.0 {
        r.times.exclusive / whole_ns
    } else {
        0.0
    });
    v["kind"] = json!(r.kind.map(|k| kind_label(k, &r.region)));
    v["category"] = json!(r.kind.map(|k| k.category().name()));
    v
}

fn path_json(r: &PathRow) -> Value {
    // The parent by its index in the list: a full path per row would make
    // the output quadratic in the depth.
    let mut v = times_json(&r.times);
    v["region"] = json!(r.region);
    v["depth"] = json!(r.depth);
    v["parent"] = json!(r.parent);
    v["locations"] = json!(r.locations);
    v
}

/// Writes `items` as a JSON array, one compact item per line indented by
/// `indent` spaces (the rows are made and written one at a time).
fn array<T>(
    w: &mut dyn Write,
    indent: usize,
    items: impl IntoIterator<Item = T>,
    item: impl Fn(T) -> Value,
) -> std::io::Result<()> {
    let pad = " ".repeat(indent);
    let mut first = true;
    for x in items {
        w.write_all(if first { b"[\n" } else { b",\n" })?;
        first = false;
        w.write_all(pad.as_bytes())?;
        w.write_all(b"  ")?;
        crate::console::write_json(&mut *w, &item(x))?;
    }
    if first {
        w.write_all(b"[]")
    } else {
        write!(w, "\n{pad}]")
    }
}

/// Writes the whole report as JSON: an object with `experiment`,
/// `concurrency`, `processes`, `total` (`flat`, `paths`), `locations` and
/// `warnings`, its rows written as they are made, so that memory stays that
/// of the profiles (see `PathRow`: paths name their parent by index).
pub fn write_json(
    w: &mut dyn Write,
    exp: &Experiment,
    prof: &ExperimentProfile,
) -> std::io::Result<()> {
    let processes = exp.processes.iter().map(|p| {
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
    });
    let conc = concurrency_of(exp).map(|c| {
        json!({
            "locations": c.locations,
            "total_ns": c.total_ns,
            "time_ns_with_k_busy": c.time_ns,
            "ceff": c.ceff(),
            "cavg": c.cavg(),
        })
    });
    let names = LocationNames::new(exp);
    let all = Whole::of(prof.locations.iter(), "(all locations)");
    let item = |w: &mut dyn Write, v: &Value| crate::console::write_json(w, v);
    w.write_all(b"{\n  \"experiment\": ")?;
    item(w, &json!(exp.dir))?;
    w.write_all(b",\n  \"status\": ")?;
    item(w, &json!(crate::experiment_dir::run_state(&exp.dir)))?;
    w.write_all(b",\n  \"concurrency\": ")?;
    item(w, &json!(conc))?;
    w.write_all(b",\n  \"processes\": ")?;
    array(w, 2, processes, |v| v)?;
    write!(
        w,
        ",\n  \"total\": {{\n    \"measured_ns\": {},\n    \"outside_ns\": {},\n    \"flat\": ",
        json!(all.ns),
        json!(all.outside_ns)
    )?;
    array(w, 4, &prof.flat_total(exp), |r| flat_json(r, all.ns))?;
    w.write_all(b",\n    \"paths\": ")?;
    array(w, 4, &prof.paths_total(exp), path_json)?;
    w.write_all(b",\n    \"calls_not_all_recorded\": ")?;
    array(
        w,
        4,
        &calls_in_all(exp, prof),
        |c| json!({"region": c.region, "recorded": c.recorded, "all": c.all}),
    )?;
    w.write_all(b"\n  },\n  \"locations\": ")?;
    let mut first = true;
    for (i, l) in prof.locations.iter().enumerate() {
        w.write_all(if first { b"[\n" } else { b",\n" })?;
        first = false;
        let head = json!({
            "rank": l.rank,
            "thread": l.thread,
            "name": l.name,
            "location": names.label(l.rank, l.thread),
            "measured_ns": l.measured_ns,
            "outside_ns": l.outside_ns(),
            "source": match l.source { Source::Runtime => "runtime", Source::Trace => "trace" },
            "categories_ns": prof.categories(exp, i).iter().map(|(c, v)| (c.name().to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        });
        // The object without its closing brace, then its rows.
        let mut head_text = Vec::new();
        item(&mut head_text, &head)?;
        w.write_all(b"    ")?;
        w.write_all(&head_text[..head_text.len() - 1])?;
        w.write_all(b",\n      \"flat\": ")?;
        let whole = l.whole_ns();
        array(w, 6, &prof.flat_location(exp, i), |r| flat_json(r, whole))?;
        w.write_all(b",\n      \"paths\": ")?;
        array(w, 6, &prof.paths_location(exp, i), path_json)?;
        w.write_all(b"\n    }")?;
    }
    w.write_all(if first { b"[]" } else { b"\n  ]" })?;
    w.write_all(b",\n  \"warnings\": ")?;
    array(w, 2, &prof.warnings, |x| json!(x))?;
    w.write_all(b"\n}\n")?;
    w.flush()
}
