//! The run database's views (`parallax db list`, `db show`, `db compare`)
//! as text.

use parallax_db::query::PathStat;
use parallax_db::{CompareTable, RunRow};
use parallax_output::text::inert;
use parallax_view::finding::Finding;

use super::fmt;

/// The runs of `parallax db list`, one row each; `states[i]` says how run
/// `i` stands.
pub fn list(runs: &[RunRow], states: &[String]) -> String {
    let cols = [
        "id",
        "program",
        "ranks",
        "locs",
        "wall",
        "started (UTC)",
        "status",
        "tags",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .zip(states)
        .map(|(r, state)| {
            vec![
                r.id.to_string(),
                r.program.clone(),
                r.ranks.to_string(),
                r.threads.to_string(),
                r.wall_s.map(|w| fmt::ns(w * 1e9)).unwrap_or_default(),
                r.start_unix_ns
                    .map(|t| fmt::date_time(t / 1_000_000_000))
                    .unwrap_or_default(),
                state.clone(),
                r.tags.join(","),
            ]
        })
        .collect();
    fmt::table(&cols, &rows, 100)
}

/// Run `r` in full: its metadata (`state`: how it stands), derived
/// metrics, heaviest call paths and findings.
pub fn show(
    r: &RunRow,
    state: &str,
    metrics: &[(String, f64)],
    paths: &[PathStat],
    findings: &[Finding],
) -> String {
    let mut s = String::new();
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    let lines = [
        ("Run", format!("{} ({})", r.id, r.dir)),
        ("Command", r.command.clone()),
        ("Program", r.program.clone()),
        (
            "Size",
            format!(
                "{} rank(s), {} location(s) on {}",
                r.ranks, r.threads, r.hosts
            ),
        ),
        (
            "Started",
            r.start_unix_ns
                .map(|t| fmt::date_time(t / 1_000_000_000) + " UTC")
                .unwrap_or_else(|| "-".into()),
        ),
        (
            "Wall",
            r.wall_s
                .map(|w| fmt::ns(w * 1e9))
                .unwrap_or_else(|| "-".into()),
        ),
        ("Status", format!("{} (mode {})", state, opt(&r.mode))),
        ("Revision", opt(&r.git_revision)),
        ("Compiler", opt(&r.compiler)),
        ("MPI", opt(&r.mpi)),
        ("Tags", r.tags.join(",")),
    ];
    for (k, v) in lines {
        s += &format!("{k:<10}{}\n", fmt::fit(&v, 90));
    }
    s += "\nDerived metrics\n";
    for (k, v) in metrics {
        let shown = if k.starts_with("time_ns.") {
            fmt::ns(*v)
        } else {
            format!("{v:.3}")
        };
        s += &format!("  {:<32}{shown}\n", inert(k));
    }
    s += "\nHeaviest call paths (exclusive, summed over locations)\n";
    let cols = [
        "excl%",
        "exclusive",
        "inclusive",
        "calls",
        "imbal",
        "call path",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            vec![
                format!("{:.1}%", p.pct_excl),
                fmt::ns(p.excl_ns),
                fmt::ns(p.incl_ns),
                fmt::count(p.calls.max(0) as u64),
                format!("{:.2}", p.imbalance),
                p.path.clone(),
            ]
        })
        .collect();
    s += &fmt::table(&cols, &rows, 100);
    if !findings.is_empty() {
        s += "\nFindings\n";
        for f in findings {
            s += &format!(
                "  {:<24} {:>10}  rank {} thread {}  {}\n",
                f.pattern.name(),
                fmt::ns(f.severity_s * 1e9),
                f.at.rank,
                f.at.thread,
                inert(&f.region)
            );
        }
    }
    s
}

/// The runs of `t`, then its call paths × runs table of `metric` time.
pub fn compare(t: &CompareTable, metric: &str) -> String {
    let mut s = String::from("Runs\n");
    let cols = [
        "run", "program", "ranks", "locs", "wall", "revision", "tags",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = t
        .runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.program.clone(),
                r.ranks.to_string(),
                r.threads.to_string(),
                r.wall_s.map(|w| fmt::ns(w * 1e9)).unwrap_or_default(),
                r.git_revision
                    .as_deref()
                    .map(|g| g.chars().take(10).collect())
                    .unwrap_or_default(),
                r.tags.join(","),
            ]
        })
        .collect();
    s += &fmt::table(&cols, &rows, 100);
    s += &format!("\nCall paths × runs ({metric} time)\n");
    let mut cols: Vec<String> = t.runs.iter().map(|r| format!("run {}", r.id)).collect();
    cols.push("call path".into());
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|(path, depth, v)| {
            let mut row: Vec<String> = v
                .iter()
                .map(|x| x.map(fmt::ns).unwrap_or_else(|| "-".into()))
                .collect();
            let _ = depth;
            row.push(path.clone());
            row
        })
        .collect();
    s += &fmt::table(&cols, &rows, 100);
    s
}
