//! `parallax html DIR [-o FILE]`: the experiment as one self-contained
//! HTML report, and its charts as standalone SVG.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use parallax_output::file::Kind;

use parallax_analysis::bottleneck;
use parallax_analysis::executor::Executor;
use parallax_db::query::Metric;
use parallax_db::{Db, RunMeta};
use parallax_model::experiment::Experiment;
use parallax_report::html::{self, Detail, Options, Runs};
use parallax_view::finding::Finding;
use parallax_view::profile::ExperimentProfile;
use parallax_view::trace;

/// Arguments of `parallax html`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The experiment directory; more directories are compared with it
    /// (run comparison and scaling). With --runs and no directory, the
    /// last of those runs is the one shown in full.
    #[arg(required_unless_present = "runs")]
    pub dirs: Vec<PathBuf>,
    /// The HTML file to write [default: DIR.html].
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The compensated experiment (`parallax compensate DIR --out DIR2`),
    /// shown beside the measured one.
    #[arg(long, value_name = "DIR2")]
    pub compensated: Option<PathBuf>,
    /// Findings to show (`parallax analyze DIR --json` output) [default:
    /// the bottleneck analysis of DIR, when it has a trace].
    #[arg(long, value_name = "FILE")]
    pub findings: Option<PathBuf>,
    /// Show no findings rather than run the bottleneck analysis.
    #[arg(long, conflicts_with = "findings")]
    pub no_analysis: bool,
    /// Compare with these runs of the run database (ids, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub runs: Vec<i64>,
    /// The run database for --runs [default: $PARALLAX_DB, else
    /// ~/.local/share/parallax/runs.sqlite].
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// Also write the charts (timeline overview, profile bars, load
    /// balance, scaling) as standalone SVG files into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Page title.
    #[arg(long)]
    pub title: Option<String>,
    /// Single visits the timeline holds at most; past them it shows, per
    /// slice of the run, the region each location was in for most of it.
    #[arg(long, value_name = "N", default_value_t = html::MAX_VISITS)]
    pub max_visits: usize,
    /// Take the timeline's single visits from this part of the run (times
    /// since its start, e.g. 1.2..1.25 in seconds, or 1200ms..1250ms),
    /// and open the timeline there.
    #[arg(long, value_name = "START..END", value_parser = parse_window)]
    pub window: Option<(u64, u64)>,
}

/// Event files the bottleneck analysis runs on by default, at most: its
/// memory grows with the trace (about 4.5 times the files' size).
const ANALYSIS_MAX_BYTES: u64 = 128 << 20;

/// `START..END` in ns: times with a unit (ns, us, ms, s; s by default).
fn parse_window(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or("expected START..END, e.g. 1.2..1.25 (seconds) or 1200ms..1250ms")?;
    let (a, b) = (duration_ns(a)?, duration_ns(b)?);
    if a >= b {
        return Err(format!("the window's start is not before its end: {s}"));
    }
    Ok((a, b))
}

fn duration_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let scale = match unit.trim() {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        u => return Err(format!("unknown unit {u:?} in {s:?} (ns, us, ms or s)")),
    };
    let v: f64 = num.parse().map_err(|_| format!("not a time: {s:?}"))?;
    let ns = v * scale;
    if !ns.is_finite() || ns >= u64::MAX as f64 {
        return Err(format!("not a time: {s:?}"));
    }
    Ok(ns.round() as u64)
}

fn open(dir: &Path) -> anyhow::Result<Experiment> {
    Experiment::open(dir).with_context(|| format!("cannot read the experiment {}", dir.display()))
}

pub fn main(mut a: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    if a.dirs.is_empty() {
        let path = parallax_db::resolve(a.db.as_deref()).context("no database path: set --db")?;
        let last = a
            .runs
            .last()
            .copied()
            .context("--runs needs at least one id")?;
        a.dirs.push(PathBuf::from(Db::open(&path)?.run(last)?.dir));
    }
    let exp = open(&a.dirs[0])?;
    let compensated = a.compensated.as_deref().map(open).transpose()?;
    let mut findings_note = None;
    let findings = match &a.findings {
        Some(f) => parallax_db::findings::read_file(f)
            .map_err(|e| anyhow::anyhow!("cannot read findings: {e}"))?,
        None if a.no_analysis => Vec::new(),
        None => {
            let bytes = trace::native_bytes(&trace::locations(&exp));
            if bytes > ANALYSIS_MAX_BYTES {
                let dir = a.dirs[0].display();
                let note = format!(
                    "The bottleneck analysis was not run: the trace has {:.0} MB of events, \
                     more than the {} MB it runs on by default (its memory grows with the \
                     trace). To see its findings: parallax analyze {dir} --json > findings.json, \
                     then parallax html {dir} --findings findings.json.",
                    bytes as f64 / 1e6,
                    ANALYSIS_MAX_BYTES >> 20
                );
                crate::console::note(&note);
                findings_note = Some(note);
                Vec::new()
            } else {
                analyze(&exp)?
            }
        }
    };
    let runs = if !a.runs.is_empty() {
        let path = parallax_db::resolve(a.db.as_deref()).context("no database path: set --db")?;
        let db = Db::open(&path)?;
        Some(compare(&db, &a.runs)?)
    } else if a.dirs.len() > 1 {
        // Directories are compared through a database in memory, with the
        // same queries as `parallax db compare`.
        let mut db = Db::open(Path::new(":memory:"))?;
        let mut ids = Vec::new();
        for d in &a.dirs {
            let e = open(d)?;
            let prof = ExperimentProfile::load(&e)?;
            let program = e
                .processes
                .first()
                .and_then(|p| p.info.as_ref())
                .map(|i| {
                    Path::new(&i.program)
                        .file_name()
                        .map_or(i.program.clone(), |n| n.to_string_lossy().into_owned())
                })
                .unwrap_or_default();
            let wall_s = parallax_model::experiment::manifest_text(d)
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|m| m.get("wall_seconds").and_then(|w| w.as_f64()));
            let meta = RunMeta {
                program,
                command: vec![d.display().to_string()],
                wall_s,
                ..Default::default()
            };
            ids.push(db.record(&e, &prof, &meta)?);
        }
        Some(compare(&db, &ids)?)
    } else {
        None
    };
    let opts = Options {
        title: a.title.clone(),
        findings,
        compensated: compensated.as_ref(),
        runs,
        detail: Detail {
            max_visits: a.max_visits,
            window: a.window,
        },
        findings_note,
    };
    let (page, built) = html::page(&exp, &opts)?;
    let out = a.out.clone().unwrap_or_else(|| {
        let d = a.dirs[0]
            .canonicalize()
            .unwrap_or_else(|_| a.dirs[0].clone());
        d.with_extension("html")
    });
    parallax_output::file::write(&out, Kind::HTML, page.as_bytes())
        .with_context(|| format!("cannot write {}", out.display()))?;
    for w in &built.warnings {
        crate::console::warn(w);
    }
    if let Some((t0, t1, kept)) = built.detail {
        crate::console::note(&format!(
            "the timeline holds single visits for {:.6} s to {:.6} s ({kept} of {} \
             visits), summaries elsewhere: --window START..END for another part, \
             --max-visits N for more",
            t0 as f64 / 1e9,
            t1 as f64 / 1e9,
            built.visits
        ));
    }
    crate::console::note(&format!(
        "wrote {} ({:.1} MB; {} events, {} visits, {} arrows) in {:.2} s",
        out.display(),
        page.len() as f64 / 1e6,
        built.events,
        built.visits,
        built.arrows,
        started.elapsed().as_secs_f64()
    ));
    if let Some(dir) = &a.svg {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut files = built.charts.files();
        if let Some(r) = &opts.runs {
            let pts: Vec<(f64, f64)> = r
                .scaling
                .iter()
                .map(|p| (p.threads as f64, p.wall_s))
                .collect();
            if pts.len() > 1 {
                let name = r.table.runs.first().map_or("runs", |x| x.program.as_str());
                files.push(("scaling.svg", parallax_report::svg::scaling(name, &pts)));
            }
        }
        for (name, text) in files {
            let f = dir.join(name);
            parallax_output::file::write(&f, Kind::SVG, text.as_bytes())
                .with_context(|| format!("cannot write {}", f.display()))?;
        }
        crate::console::note(&format!("SVG charts in {}", dir.display()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The findings of `parallax analyze` on `exp`; none for an experiment
/// without a trace.
pub fn analyze(exp: &Experiment) -> anyhow::Result<Vec<Finding>> {
    if !exp
        .locations()
        .any(|(_, l)| l.events.is_some() || l.spill.is_some())
    {
        return Ok(Vec::new());
    }
    let progress = parallax_report::term::Progress::new("bottleneck analysis", 0);
    // One location after another: the result is the same, and a thread
    // pool took 30 times longer on 2 cores (35 s against 1.2 s for the 11 M
    // events of 64 threads).
    let mut cfg = bottleneck::Config::default();
    if let Some(p) = crate::baseline::default_path().filter(|p| p.is_file()) {
        let (b, _) = bottleneck::Baselines::load(&p)
            .with_context(|| format!("cannot read {}", p.display()))?;
        cfg.baselines = b;
    }
    let rep = bottleneck::analyze(exp, &cfg, Executor::Sequential)?;
    drop(progress);
    Ok(rep.findings)
}

fn compare(db: &Db, ids: &[i64]) -> anyhow::Result<Runs> {
    let table = db.compare(ids, Metric::Inclusive, 40)?;
    let program = table
        .runs
        .first()
        .map(|r| r.program.clone())
        .unwrap_or_default();
    let scaling = db
        .scaling(&program)?
        .into_iter()
        .filter(|p| ids.contains(&p.run))
        .collect();
    Ok(Runs {
        metric: "incl".into(),
        table,
        scaling,
    })
}
