//! `parallax report DIR`: flat and call-path profiles per location and in
//! total.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use serde_json::{json, Value};

use parallax_analysis::concurrency::{self, Concurrency};
use parallax_model::experiment::Experiment;
use parallax_report::term::{Paint, Progress};
use parallax_report::text::profile::{self, calls_in_all, Whole};
use parallax_view::names::{kind_label, LocationNames};
use parallax_view::profile::{ExperimentProfile, FlatRow, PathRow, Source, Times};

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
    /// Threads deriving profiles from traces (0: all cores; 1:
    /// sequential; the result is the same).
    #[arg(long, default_value_t = 0, value_name = "N")]
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
    let run = crate::executor::start(a.executor, a.threads)?;
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

/// The whole report as text, at most `top` rows per table, in the styles
/// of `paint`.
pub fn text(
    exp: &Experiment,
    prof: &ExperimentProfile,
    top: usize,
    per_location: bool,
    paint: Paint,
) -> String {
    let progress = Progress::new("concurrency profile", 0);
    let concurrency = concurrency_of(exp);
    drop(progress);
    let more = profile::Context {
        top,
        per_location,
        status: crate::experiment_dir::run_state(&exp.dir),
        concurrency,
    };
    profile::text(exp, prof, &more, paint)
}

/// The concurrency profile, where the experiment has traces.
fn concurrency_of(exp: &Experiment) -> Option<Concurrency> {
    let c = concurrency::profile(exp).ok()?;
    (c.locations > 0 && c.total_ns > 0.0).then_some(c)
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
