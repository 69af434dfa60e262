//! Call-path profiles as tables (CSV, JSON records) and as a Hatchet
//! literal tree.
//!
//! One row per (location, call path), or per call path with `--merged`.
//! Columns: `rank`, `thread`, `location`, `depth`, `path` (frames joined
//! by `;`), `region`, `kind`, `category`, `count`, `inclusive_ns`,
//! `exclusive_ns`, `min_ns`, `max_ns`, `mean_ns`, `sd_ns`, `locations`.
//! `pandas.read_csv(path)` and `pandas.read_json(path)` read them in one
//! call; merged rows have empty (null) rank and thread. Text cells that a
//! spreadsheet would take for a formula are written as text (see [`csv`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use parallax_analysis::profile::{ExperimentProfile, Times};
use parallax_model::experiment::Experiment;
use parallax_model::region::RegionKind;
use serde_json::{json, Value};

use crate::{Error, Format, Options, Summary};

use parallax_output::file::Kind;

/// The first line of a CSV profile.
const CSV_HEADER: &str = "rank,thread,location,depth,path,region,kind,category,count,inclusive_ns,exclusive_ns,min_ns,max_ns,mean_ns,sd_ns,locations";

fn kind(format: Format) -> Kind {
    const CSV: &[&[u8]] = &[CSV_HEADER.as_bytes()];
    // Records' keys come sorted (or in the order written).
    const JSON: &[&[u8]] = &[b"[\n{\"category\":", b"[\n{\"rank\":", b"[\n]"];
    match format {
        Format::Csv => Kind::starting_with("a CSV profile", CSV),
        Format::Json => Kind::starting_with("a JSON profile", JSON),
        _ => Kind::recognised_by("a Hatchet tree", is_hatchet),
    }
}

/// A Hatchet literal: an array whose first node, after any nesting of
/// first children, has a frame (or an empty array).
fn is_hatchet(head: &[u8]) -> bool {
    let text: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let Some(mut rest) = text.strip_prefix(b"[") else {
        return false;
    };
    while let Some(r) = rest.strip_prefix(b"{\"children\":[") {
        rest = r;
    }
    rest.is_empty() || rest.starts_with(b"{\"frame\":") || rest.starts_with(b"]")
}

/// One call path's statistics.
pub struct PathTimes {
    /// Region names from the top.
    pub path: Vec<String>,
    /// Statistics in ns.
    pub times: Times,
    /// Locations that visited it.
    pub locations: usize,
    /// Rank and thread, if it is one location's.
    pub location: Option<(u32, u32, String)>,
}

/// A group of call paths: one location's (with its label), or merged.
pub type Group = (Option<String>, Vec<PathTimes>);

/// The call paths of the selected locations: one group per location
/// (labelled), or one merged group (label `None`) with `--merged`.
pub fn selected_profiles(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
) -> Result<Vec<Group>, Error> {
    // Fails for a selection naming no location.
    let locs = crate::stream::locations(exp, &opts.selection)?;
    let mut groups = Vec::new();
    let mut merged: BTreeMap<Vec<String>, (Times, usize)> = BTreeMap::new();
    for (i, l) in prof.locations.iter().enumerate() {
        if !opts.selection.contains(l.rank, l.thread) {
            continue;
        }
        let rows = prof.paths_location(exp, i);
        if opts.merged {
            for r in rows {
                let e = merged.entry(r.path).or_default();
                merge(&mut e.0, &r.times);
                e.1 += 1;
            }
        } else {
            let label = locs
                .iter()
                .find(|x| x.rank == l.rank && x.thread == l.thread)
                .map(|x| x.label())
                .unwrap_or_else(|| format!("rank {} thread {}", l.rank, l.thread));
            let rows = rows
                .into_iter()
                .map(|r| PathTimes {
                    path: r.path,
                    times: r.times,
                    locations: 1,
                    location: Some((l.rank, l.thread, l.name.clone())),
                })
                .collect();
            groups.push((Some(label), rows));
        }
    }
    if opts.merged {
        let rows = merged
            .into_iter()
            .map(|(path, (times, locations))| PathTimes {
                path,
                times,
                locations,
                location: None,
            })
            .collect();
        groups.push((None, rows));
    }
    Ok(groups)
}

fn merge(a: &mut Times, o: &Times) {
    if o.count == 0 && o.inclusive == 0.0 {
        return;
    }
    a.min = if a.count == 0 {
        o.min
    } else {
        a.min.min(o.min)
    };
    a.max = a.max.max(o.max);
    a.count += o.count;
    a.inclusive += o.inclusive;
    a.exclusive += o.exclusive;
    a.sum_sq += o.sum_sq;
}

/// Region kinds by name, over all processes (first definition wins).
fn kinds(exp: &Experiment) -> BTreeMap<String, RegionKind> {
    let mut m = BTreeMap::new();
    for p in &exp.processes {
        for r in p.regions.values() {
            m.entry(r.name.clone()).or_insert(r.kind);
        }
    }
    m
}

/// Writes a CSV, JSON or Hatchet profile.
pub fn export(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
    out: &Path,
) -> Result<Summary, Error> {
    let groups = selected_profiles(exp, prof, opts)?;
    let kinds = kinds(exp);
    let mut w = crate::create(out, kind(opts.format))?;
    let io = |e| Error::io(out, e);
    let mut rows = 0u64;
    match opts.format {
        Format::Csv => {
            writeln!(w, "{CSV_HEADER}").map_err(io)?;
            for (_, group) in &groups {
                for r in group {
                    let (rank, thread, name) = match &r.location {
                        Some((a, b, n)) => (a.to_string(), b.to_string(), n.clone()),
                        None => (String::new(), String::new(), String::new()),
                    };
                    let region = r.path.last().cloned().unwrap_or_default();
                    let kind = kinds.get(&region);
                    let t = &r.times;
                    writeln!(
                        w,
                        "{rank},{thread},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                        csv(&name),
                        r.path.len().saturating_sub(1),
                        csv(&r.path.join(";")),
                        csv(&region),
                        kind.map_or("", |k| k.name()),
                        kind.map_or("", |k| k.category().name()),
                        t.count,
                        num(t.inclusive),
                        num(t.exclusive),
                        num(t.min),
                        num(t.max),
                        num(t.mean()),
                        num(t.std_dev()),
                        r.locations
                    )
                    .map_err(io)?;
                    rows += 1;
                }
            }
        }
        Format::Json => {
            // An array of records, written one by one.
            w.write_all(b"[").map_err(io)?;
            for (_, group) in &groups {
                for r in group {
                    let region = r.path.last().cloned().unwrap_or_default();
                    let kind = kinds.get(&region);
                    let t = &r.times;
                    let v = json!({
                        "rank": r.location.as_ref().map(|l| l.0),
                        "thread": r.location.as_ref().map(|l| l.1),
                        "location": r.location.as_ref().map_or("", |l| l.2.as_str()),
                        "depth": r.path.len().saturating_sub(1),
                        "path": r.path.join(";"),
                        "region": region,
                        "kind": kind.map(|k| k.name()),
                        "category": kind.map(|k| k.category().name()),
                        "count": t.count,
                        "inclusive_ns": t.inclusive,
                        "exclusive_ns": t.exclusive,
                        "min_ns": t.min,
                        "max_ns": t.max,
                        "mean_ns": t.mean(),
                        "sd_ns": t.std_dev(),
                        "locations": r.locations,
                    });
                    if rows > 0 {
                        w.write_all(b",").map_err(io)?;
                    }
                    w.write_all(b"\n").map_err(io)?;
                    serde_json::to_writer(&mut w, &v)
                        .map_err(|e| Error::io(out, std::io::Error::other(e)))?;
                    rows += 1;
                }
            }
            w.write_all(b"\n]\n").map_err(io)?;
        }
        _ => {
            let mut roots = Vec::new();
            for (label, group) in &groups {
                let tree = hatchet_tree(group, &kinds);
                rows += group.len() as u64;
                match label {
                    Some(l) => {
                        let inc: f64 = group
                            .iter()
                            .filter(|r| r.path.len() == 1)
                            .map(|r| r.times.inclusive)
                            .sum();
                        roots.push(json!({
                            "frame": {"name": l, "type": "location"},
                            "metrics": {"time (inc)": inc, "time": 0.0, "count": 0},
                            "children": tree,
                        }));
                    }
                    None => roots.extend(tree),
                }
            }
            serde_json::to_writer_pretty(&mut w, &Value::Array(roots))
                .map_err(|e| Error::io(out, std::io::Error::other(e)))?;
            w.write_all(b"\n").map_err(io)?;
        }
    }
    crate::finish(w, out)?;
    Ok(Summary {
        rows,
        ..Summary::default()
    })
}

/// The nested literal of Hatchet: `[{frame, metrics, children}]`.
fn hatchet_tree(rows: &[PathTimes], kinds: &BTreeMap<String, RegionKind>) -> Vec<Value> {
    // Rows come in tree order (parents first); build by path.
    let mut nodes: Vec<(Vec<String>, Value)> = Vec::new();
    let mut index: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut children: Vec<Vec<usize>> = Vec::new();
    let mut roots = Vec::new();
    for r in rows {
        let name = r.path.last().cloned().unwrap_or_default();
        let v = json!({
            "frame": {"name": name, "type": kinds.get(&name).map_or("region", |k| k.name())},
            "metrics": {"time (inc)": r.times.inclusive, "time": r.times.exclusive, "count": r.times.count},
        });
        let i = nodes.len();
        nodes.push((r.path.clone(), v));
        children.push(Vec::new());
        index.insert(r.path.clone(), i);
        match index.get(&r.path[..r.path.len().saturating_sub(1)]) {
            Some(&p) if r.path.len() > 1 => children[p].push(i),
            _ => roots.push(i),
        }
    }
    fn build(i: usize, nodes: &[(Vec<String>, Value)], children: &[Vec<usize>]) -> Value {
        let mut v = nodes[i].1.clone();
        let c: Vec<Value> = children[i]
            .iter()
            .map(|&c| build(c, nodes, children))
            .collect();
        if !c.is_empty() {
            v["children"] = Value::Array(c);
        }
        v
    }
    roots
        .into_iter()
        .map(|i| build(i, &nodes, &children))
        .collect()
}

/// A text field of the CSV, quoted when needed. A spreadsheet reads a
/// cell starting with `=`, `+`, `-` or `@` (or a tab or carriage return
/// before one) as a formula: such a name gets a leading `'`, which makes
/// it text, and is quoted. Numbers are written by [`num`] and stay
/// numbers.
fn csv(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number in ns, with at most three decimals.
fn num(v: f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    format!("{r}")
}
