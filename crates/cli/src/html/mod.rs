//! `parallax html DIR [-o FILE]`: the experiment as one self-contained
//! HTML report, and its charts as standalone SVG.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;

use parallax_analysis::bottleneck;
use parallax_analysis::executor::Executor;
use parallax_analysis::profile::ExperimentProfile;
use parallax_db::query::Metric;
use parallax_db::{Db, Finding, RunMeta};
use parallax_model::experiment::Experiment;
use parallax_report::html::{self, Options, Runs};

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
    let findings = match &a.findings {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("cannot read {}", f.display()))?;
            Finding::parse_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?
        }
        None if a.no_analysis => Vec::new(),
        None => analyze(&exp)?,
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
            let wall_s = std::fs::read_to_string(d.join(parallax_model::experiment::MANIFEST))
                .ok()
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
    };
    let (page, built) = html::page(&exp, &opts)?;
    let out = a.out.clone().unwrap_or_else(|| {
        let d = a.dirs[0]
            .canonicalize()
            .unwrap_or_else(|_| a.dirs[0].clone());
        d.with_extension("html")
    });
    std::fs::write(&out, &page).with_context(|| format!("cannot write {}", out.display()))?;
    for w in &built.warnings {
        eprintln!("parallax: warning: {w}");
    }
    eprintln!(
        "parallax: wrote {} ({:.1} MB; {} events, {} visits, {} arrows) in {:.2} s",
        out.display(),
        page.len() as f64 / 1e6,
        built.events,
        built.visits,
        built.arrows,
        started.elapsed().as_secs_f64()
    );
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
            std::fs::write(&f, text).with_context(|| format!("cannot write {}", f.display()))?;
        }
        eprintln!("parallax: SVG charts in {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The findings of `parallax analyze` on `exp`, in the form its `--json`
/// prints; none for an experiment without a trace.
pub fn analyze(exp: &Experiment) -> anyhow::Result<Vec<Finding>> {
    if !exp.locations().any(|(_, l)| l.events.is_some()) {
        return Ok(Vec::new());
    }
    let progress = parallax_report::term::Progress::new("bottleneck analysis", 0);
    let mut cfg = bottleneck::Config::default();
    if let Some(p) = crate::baseline::default_path().filter(|p| p.is_file()) {
        let (b, _) = bottleneck::Baselines::load(&p)
            .with_context(|| format!("cannot read {}", p.display()))?;
        cfg.baselines = b;
    }
    let rep = bottleneck::analyze(exp, &cfg, Executor::pool())?;
    drop(progress);
    let json = crate::analyze::to_json(&rep).to_string();
    Finding::parse_json(&json).map_err(|e| anyhow::anyhow!("analysis output: {e}"))
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
