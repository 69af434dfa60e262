//! `parallax db`: the run database (list, show, tag, rm, query, compare,
//! scaling), and the hook that records every new experiment in it.

mod record;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;

use parallax_db::query::Metric;
use parallax_db::Db;
use parallax_output::file::Kind;

use parallax_output::text::inert;

use crate::runner::{self, Runner};
use parallax_report::text::fmt;
use parallax_report::text::runs;

pub use record::{begin, finish, record, Begun, Target};

/// Arguments of `parallax db`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The database file [default: $PARALLAX_DB, else
    /// ~/.local/share/parallax/runs.sqlite].
    #[arg(long, global = true, value_name = "FILE")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// What `parallax db` does.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// List the recorded runs.
    #[command(
        after_help = "Examples:\n  parallax db list\n  parallax db list --tag nightly --json"
    )]
    List {
        /// Only runs with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Only runs of this program.
        #[arg(long)]
        program: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one run: metadata, derived metrics, heaviest call paths,
    /// findings.
    #[command(
        after_help = "Examples:\n  parallax db show 12\n  parallax db show 12 --top 30 --json"
    )]
    Show {
        /// Run id.
        id: i64,
        /// Call paths shown.
        #[arg(long, default_value_t = 15)]
        top: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add (or with --remove, remove) tags of a run.
    #[command(
        after_help = "Examples:\n  parallax db tag 12 baseline v2\n  parallax db tag 12 --remove v2"
    )]
    Tag {
        /// Run id.
        id: i64,
        /// Tags to add.
        tags: Vec<String>,
        /// Tags to remove.
        #[arg(long, value_name = "TAG")]
        remove: Vec<String>,
    },
    /// Remove runs from the database (their experiment directories stay).
    #[command(after_help = "Examples:\n  parallax db rm 12 13")]
    Rm {
        /// Run ids.
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Run one read-only SQL statement (see docs/database.md for the
    /// schema and example queries).
    #[command(
        after_help = "Examples:\n  parallax db query 'select id, program, wall_s from runs'\n  parallax db query - --json < query.sql"
    )]
    Query {
        /// The statement (`-` reads it from standard input).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// Print JSON (an array of objects).
        #[arg(long)]
        json: bool,
        /// Stop the statement after this many seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_timeout)]
        timeout: f64,
        /// Refuse a result of more rows than this.
        #[arg(long, value_name = "N", default_value_t = 100_000)]
        max_rows: usize,
    },
    /// Call paths × runs, with each run's metadata (like Thicket).
    #[command(
        after_help = "Examples:\n  parallax db compare 12 13 14\n  parallax db compare --tag nightly --metric max --json"
    )]
    Compare {
        /// Run ids (default: every run with --tag, or the last 5).
        ids: Vec<i64>,
        /// Runs with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// excl (exclusive, summed over locations), incl (inclusive,
        /// summed), max (inclusive time of the slowest location).
        #[arg(long, default_value = "incl", value_parser = ["excl", "incl", "max"])]
        metric: String,
        /// Rows shown.
        #[arg(long, default_value_t = 25)]
        top: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Wall time, speedup and efficiency of a program's runs by size.
    #[command(
        after_help = "Examples:\n  parallax db scaling jacobi\n  parallax db scaling jacobi --svg scaling.svg --json"
    )]
    Scaling {
        /// Program name, as `db list` shows it.
        program: String,
        /// Also write the scaling chart as SVG.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Attach findings to a run: from a file (`parallax analyze --json`
    /// output), or by analysing the run's experiment directory.
    #[command(
        after_help = "Examples:\n  parallax db findings 12\n  parallax db findings 12 findings.json --json"
    )]
    Findings {
        /// Run id.
        id: i64,
        /// The JSON file (`{"findings": [...]}`) [default: analyse the run].
        file: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 1e6 => Ok(t),
        _ => Err(format!(
            "`{s}` is not a number of seconds between 0 and 1000000"
        )),
    }
}

fn path_of(a: &Args) -> anyhow::Result<PathBuf> {
    parallax_db::resolve(a.db.as_deref())
        .context("no database path: set --db or PARALLAX_DB (HOME is not set)")
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let path = path_of(&a)?;
    if let Command::Query {
        sql,
        json,
        timeout,
        max_rows,
    } = &a.command
    {
        let sql = if sql == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .context("cannot read the statement from standard input")?;
            s
        } else {
            sql.clone()
        };
        // Opened once for writing first, so an older schema is migrated.
        drop(Db::open(&path)?);
        let db = Db::open_read_only(&path)?;
        let limits = parallax_db::Limits {
            timeout: std::time::Duration::from_secs_f64(*timeout),
            max_rows: *max_rows,
            ..Default::default()
        };
        let (cols, rows) = db.query(&sql, &limits)?;
        if *json {
            let v: Vec<_> = rows
                .iter()
                .map(|r| {
                    cols.iter()
                        .cloned()
                        .zip(r.iter().map(|c| json!(c)))
                        .collect::<serde_json::Map<_, _>>()
                })
                .collect();
            crate::console::out_json(&v)?;
        } else {
            crate::console::out(&fmt::table(&cols, &rows, 100))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut db = Db::open(&path)?;
    match a.command {
        Command::List { tag, program, json } => {
            let runs = db.list(tag.as_deref(), program.as_deref())?;
            if json {
                let v: Vec<_> = runs.iter().map(run_json).collect();
                crate::console::out_json(&v)?;
            } else if runs.is_empty() {
                crate::console::out(&format!("No runs in {}\n", inert(&path.to_string_lossy())))?;
            } else {
                let states: Vec<String> = runs.iter().map(status).collect();
                crate::console::out(&parallax_report::text::runs::list(&runs, &states))?;
            }
        }
        Command::Show { id, top, json } => show(&db, id, top, json)?,
        Command::Tag { id, tags, remove } => {
            db.tag(id, &tags, &remove)?;
            let r = db.run(id)?;
            crate::console::out(&format!("run {id}: tags {}\n", inert(&r.tags.join(","))))?;
        }
        Command::Rm { ids } => {
            let n = db.remove(&ids)?;
            crate::console::out(&format!("removed {n} run(s)\n"))?;
            if n < ids.len() {
                anyhow::bail!("{} of the ids were not in the database", ids.len() - n);
            }
        }
        Command::Query { .. } => unreachable!("handled above"),
        Command::Compare {
            ids,
            tag,
            metric,
            top,
            json,
        } => {
            let ids = if !ids.is_empty() {
                ids
            } else {
                let runs = db.list(tag.as_deref(), None)?;
                let skip = if tag.is_some() {
                    0
                } else {
                    runs.len().saturating_sub(5)
                };
                runs.iter().skip(skip).map(|r| r.id).collect()
            };
            anyhow::ensure!(!ids.is_empty(), "no runs to compare");
            let m = Metric::parse(&metric).unwrap_or(Metric::Inclusive);
            let t = db.compare(&ids, m, top)?;
            if json {
                crate::console::out_json(&compare_json(&t, &metric))?;
            } else {
                crate::console::out(&runs::compare(&t, &metric))?;
            }
        }
        Command::Scaling { program, svg, json } => {
            let pts = db.scaling(&program)?;
            anyhow::ensure!(!pts.is_empty(), "no runs of `{program}` with a wall time");
            let base = &pts[0];
            if json {
                let v: Vec<_> = pts
                    .iter()
                    .map(|p| {
                        let s = base.wall_s / p.wall_s.max(1e-12);
                        let e = s * base.threads as f64 / p.threads.max(1) as f64;
                        json!({"run": p.run, "ranks": p.ranks, "locations": p.threads,
                               "wall_s": p.wall_s, "speedup": s, "efficiency": e})
                    })
                    .collect();
                crate::console::out_json(&v)?;
            }
            let cols = ["run", "ranks", "locs", "wall", "speedup", "efficiency"].map(String::from);
            let rows: Vec<Vec<String>> = pts
                .iter()
                .map(|p| {
                    let s = base.wall_s / p.wall_s.max(1e-12);
                    let e = s * base.threads as f64 / p.threads.max(1) as f64;
                    vec![
                        p.run.to_string(),
                        p.ranks.to_string(),
                        p.threads.to_string(),
                        fmt::ns(p.wall_s * 1e9),
                        format!("{s:.2}"),
                        format!("{:.0}%", 100.0 * e),
                    ]
                })
                .collect();
            if !json {
                crate::console::out(&fmt::table(&cols, &rows, 100))?;
            }
            if let Some(f) = svg {
                let series: Vec<(f64, f64)> =
                    pts.iter().map(|p| (p.threads as f64, p.wall_s)).collect();
                let text = parallax_report::svg::scaling(&program, &series);
                parallax_output::file::write(&f, Kind::SVG, text.as_bytes())
                    .with_context(|| format!("cannot write {}", f.display()))?;
                crate::console::note(&format!("scaling chart in {}", f.display()));
            }
        }
        Command::Findings { id, file, json } => {
            let f = match file {
                Some(file) => parallax_db::findings::read_file(&file)
                    .map_err(|e| anyhow::anyhow!("cannot read findings: {e}"))?,
                None => {
                    let dir = db.run(id)?.dir;
                    let exp = parallax_model::experiment::Experiment::open(&dir)
                        .with_context(|| format!("cannot read the experiment {dir}"))?;
                    crate::html::analyze(&exp)?
                }
            };
            db.set_findings(id, &f)?;
            if json {
                let v: Vec<_> = f.iter().map(parallax_db::findings::to_json).collect();
                crate::console::out_json(&json!({"run": id, "findings": v}))?;
            } else {
                crate::console::out(&format!("run {id}: {} finding(s)\n", f.len()))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How run `r` stands: its status, or that it did not finish when it
/// says "running" and its `parallax run` is gone.
fn status(r: &parallax_db::RunRow) -> String {
    let runner = r
        .runner
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .and_then(|v| Runner::from_json(&v));
    runner::describe(r.status.as_deref().unwrap_or("-"), runner.as_ref())
}

/// `db compare --json`: the runs, and each call path's value per run
/// (null where a run never reached it).
fn compare_json(t: &parallax_db::query::CompareTable, metric: &str) -> serde_json::Value {
    json!({
        "metric": metric,
        "runs": t.runs.iter().map(run_json).collect::<Vec<_>>(),
        "paths": t.rows.iter().map(|(path, depth, values)| {
            json!({"path": path, "depth": depth, "values_ns": values})
        }).collect::<Vec<_>>(),
    })
}

fn run_json(r: &parallax_db::RunRow) -> serde_json::Value {
    json!({
        "id": r.id, "dir": r.dir, "program": r.program, "command": r.command,
        "ranks": r.ranks, "threads": r.threads, "start_unix_ns": r.start_unix_ns,
        "wall_s": r.wall_s, "mode": r.mode, "status": r.status, "state": status(r),
        "hosts": r.hosts, "git_revision": r.git_revision, "compiler": r.compiler, "mpi": r.mpi,
        "tags": r.tags,
    })
}

fn show(db: &Db, id: i64, top: usize, json: bool) -> anyhow::Result<()> {
    let r = db.run(id)?;
    let metrics = db.metrics(id)?;
    let paths = db.top_paths(id, top)?;
    let findings = db.findings(id)?;
    if json {
        let mut v = run_json(&r);
        v["metrics"] = metrics.iter().map(|(k, x)| (k.clone(), json!(x))).collect();
        v["top_paths"] = paths
            .iter()
            .map(|p| json!({"path": p.path, "calls": p.calls, "incl_ns": p.incl_ns, "excl_ns": p.excl_ns, "pct_excl": p.pct_excl, "imbalance": p.imbalance}))
            .collect();
        v["findings"] = findings
            .iter()
            .map(parallax_db::findings::to_json)
            .collect();
        return crate::console::out_json(&v);
    }
    let s = runs::show(&r, &status(&r), &metrics, &paths, &findings);
    crate::console::out(&s)
}
