//! The page's data for one experiment: summary, regions, locations,
//! profiles, load balance, concurrency, timeline, communication matrix and
//! findings, as JSON.

use std::collections::{BTreeMap, HashMap};

use parallax_analysis::concurrency;
use parallax_analysis::executor::Executor;
use parallax_analysis::profile::{ExperimentProfile, Source, Times};
use parallax_db::Finding;
use parallax_export::stream::{self, Loc};
use parallax_export::Selection;
use parallax_model::experiment::Experiment;
use parallax_model::region::Category;
use serde_json::{json, Value};

use super::timeline::{self, LocTrace};
use crate::svg;
use crate::term::Progress;

/// Figures about what was built, for the command to print.
#[derive(Clone, Debug, Default)]
pub struct Built {
    /// Events read.
    pub events: u64,
    /// Region visits on the timeline.
    pub visits: u64,
    /// Arrows (messages and thread hand-offs).
    pub arrows: u64,
    /// Problems met (cut-short streams); the data before each was used.
    pub warnings: Vec<String>,
    /// The charts' data, for standalone SVG.
    pub charts: Charts,
}

/// What the standalone SVG charts show.
#[derive(Clone, Debug, Default)]
pub struct Charts {
    /// Heaviest regions by exclusive time over all locations.
    pub flat: Vec<(String, f64)>,
    /// Time per category of each location.
    pub load: Vec<(String, [f64; 5])>,
    /// Run length, ns.
    pub span: f64,
    /// Each traced location's coarsest level of detail.
    pub timeline: Vec<(String, Vec<u32>)>,
    /// Region names by index.
    pub regions: Vec<String>,
}

impl Charts {
    /// The charts as (file name, SVG text).
    pub fn files(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            (
                "profile.svg",
                svg::bars("Exclusive time by region, all locations", &self.flat),
            ),
            (
                "load-balance.svg",
                svg::load_balance("Time per location by category", &self.load),
            ),
        ];
        if !self.timeline.is_empty() {
            v.push((
                "timeline.svg",
                svg::timeline(
                    "Timeline overview",
                    self.span,
                    &self.timeline,
                    &self.regions,
                ),
            ));
        }
        v
    }
}

const CATS: [Category; 5] = [
    Category::Computation,
    Category::Communication,
    Category::Synchronization,
    Category::Io,
    Category::Measurement,
];

/// The data of `exp` for the page, with `findings` placed on its timeline.
pub fn experiment(
    exp: &Experiment,
    findings: &[Finding],
    built: &mut Built,
) -> Result<Value, super::Error> {
    let prof = ExperimentProfile::load(exp)?;
    built.warnings.extend(prof.warnings.iter().cloned());

    // Regions unified by (name, kind) across processes.
    let mut index: HashMap<(String, &'static str), u32> = HashMap::new();
    let mut regions: Vec<Value> = Vec::new();
    let mut by_process: Vec<HashMap<u32, u32>> = vec![HashMap::new(); exp.processes.len()];
    let mut intern = |pi: usize, id: u32, by_process: &mut Vec<HashMap<u32, u32>>| -> u32 {
        if let Some(&g) = by_process[pi].get(&id) {
            return g;
        }
        let p = &exp.processes[pi];
        let (name, kind, file, line) = match p.regions.get(&id) {
            Some(r) => (r.name.clone(), r.kind.name(), r.file.clone(), r.line),
            None => (stream::region_name(p, id), "user", String::new(), 0),
        };
        let cat = p
            .regions
            .get(&id)
            .map_or(Category::Computation, |r| r.kind.category());
        let n = regions.len() as u32;
        let g = *index.entry((name.clone(), kind)).or_insert_with(|| {
            regions.push(
                json!({"name": name, "kind": kind, "cat": cat.name(), "file": file, "line": line}),
            );
            n
        });
        by_process[pi].insert(id, g);
        g
    };
    for (pi, p) in exp.processes.iter().enumerate() {
        for &id in p.regions.keys() {
            intern(pi, id, &mut by_process);
        }
    }

    // Profiles: each location's call tree, in ns.
    let mut locs = Vec::new();
    let mut trees = Vec::new();
    let mut cats = Vec::new();
    for (i, l) in prof.locations.iter().enumerate() {
        locs.push(json!({
            "rank": l.rank, "thread": l.thread, "name": l.name,
            "source": match l.source { Source::Runtime => "runtime", Source::Trace => "trace" },
        }));
        let nodes: Vec<Value> = l
            .tree
            .nodes
            .iter()
            .map(|n| {
                let t = Times::from_stats(&n.stats, &l.clock);
                json!([
                    n.parent.map_or(-1, |p| p as i64),
                    intern(l.process, n.region, &mut by_process),
                    t.count,
                    round(t.inclusive),
                    round(t.exclusive),
                    round(t.min),
                    round(t.max)
                ])
            })
            .collect();
        trees.push(Value::Array(nodes));
        let c = prof.categories(exp, i);
        let row: [f64; 5] = CATS.map(|k| c.get(&k).copied().unwrap_or(0.0));
        cats.push(json!(row.map(round)));
        built
            .charts
            .load
            .push((format!("{}:{}", l.rank, l.thread), row));
    }

    // The timeline, one pass per traced location.
    let tlocs = stream::locations(exp, &Selection::default())?;
    let tlocs: Vec<Loc> = tlocs.into_iter().filter(|l| l.has_events).collect();
    let map: Vec<HashMap<u32, u32>> = by_process.clone();
    let progress = Progress::new("reading the trace", tlocs.len() as u64);
    let traces: Vec<Result<LocTrace, parallax_export::Error>> =
        Executor::pool().map(tlocs.len(), |i| {
            let r = timeline::scan(exp, &tlocs[i], &|pi, id| {
                map[pi].get(&id).copied().unwrap_or(u32::MAX)
            });
            progress.inc(1);
            r
        });
    drop(progress);
    let mut traces: Vec<LocTrace> = traces.into_iter().collect::<Result<_, _>>()?;
    // Visits of regions defined after the pass began (none in practice)
    // fall back to the region table here.
    for (i, t) in traces.iter_mut().enumerate() {
        for v in &mut t.visits {
            if v.region == u32::MAX {
                v.region = intern(tlocs[i].process, u32::MAX, &mut by_process);
            }
        }
        if let Some(w) = &t.warning {
            built.warnings.push(format!("{}: {w}", tlocs[i].label()));
        }
    }
    let timeline = if traces.is_empty() {
        Value::Null
    } else {
        let span = traces.iter().map(|t| t.end).max().unwrap_or(0).max(1);
        let visits: usize = traces.iter().map(|t| t.visits.len()).sum();
        let levels = timeline::levels(traces.len(), visits);
        let progress = Progress::new("levels of detail", 0);
        let rows: Vec<&[timeline::Visit]> = traces.iter().map(|t| t.visits.as_slice()).collect();
        let mut layout = timeline::layout(&rows, span, &levels);
        drop(progress);
        let arrows = timeline::arrows(&traces);
        built.charts.span = span as f64;
        built.charts.timeline = traces
            .iter()
            .zip(&tlocs)
            .map(|(t, l)| {
                (
                    format!("{}:{}", l.rank, l.thread),
                    timeline::dominant(&t.visits, span, levels[0]),
                )
            })
            .collect();
        built.events += traces.iter().map(|t| t.events).sum::<u64>();
        built.visits += visits as u64;
        built.arrows += arrows.len() as u64;
        // Timeline rows name profile locations by index.
        let row_loc: Vec<i64> = tlocs
            .iter()
            .map(|l| {
                prof.locations
                    .iter()
                    .position(|p| p.rank == l.rank && p.thread == l.thread)
                    .map_or(-1, |x| x as i64)
            })
            .collect();
        let labels: Vec<String> = tlocs.iter().map(Loc::label).collect();
        let short: Vec<String> = tlocs
            .iter()
            .map(|l| format!("{}:{}", l.rank, l.thread))
            .collect();
        let mut v = json!({
            "span": span, "levels": levels, "labels": labels, "short": short, "loc": row_loc,
            "arrows": arrows.encode(), "narrows": arrows.len(),
        });
        if let (Some(v), Some(l)) = (v.as_object_mut(), layout.as_object_mut()) {
            v.append(l);
        }
        v
    };

    // Communication matrix by rank.
    let mut cells: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for (i, t) in traces.iter().enumerate() {
        for (&peer, &(n, b)) in &t.sent {
            let c = cells.entry((tlocs[i].rank, peer)).or_default();
            c.0 += n;
            c.1 += b;
        }
    }
    let matrix = json!({
        "ranks": exp.processes.iter().map(|p| p.rank + 1).max().unwrap_or(0),
        "cells": cells.iter().map(|(&(s, d), &(n, b))| json!([s, d, n, b])).collect::<Vec<_>>(),
    });

    let conc = concurrency::profile(exp)
        .ok()
        .filter(|c| c.locations > 0 && c.total_ns > 0.0)
        .map(|c| {
            json!({"locations": c.locations, "time_ns": c.time_ns.iter().map(|x| round(*x)).collect::<Vec<_>>(),
                   "ceff": c.ceff(), "cavg": c.cavg()})
        });

    built.charts.flat = prof
        .flat_total(exp)
        .into_iter()
        .take(20)
        .map(|r| (r.region, r.times.exclusive))
        .collect();
    built.charts.regions = regions
        .iter()
        .map(|r| {
            r.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let findings: Vec<Value> = findings
        .iter()
        .map(|f| place_finding(f, &tlocs, &traces, &regions))
        .collect();

    Ok(json!({
        "summary": summary(exp, &prof),
        "regions": regions,
        "locs": locs,
        "trees": trees,
        "cats": cats,
        "concurrency": conc,
        "timeline": timeline,
        "matrix": matrix,
        "findings": findings,
        "warnings": built.warnings,
    }))
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn summary(exp: &Experiment, prof: &ExperimentProfile) -> Value {
    let info = exp.processes.first().and_then(|p| p.info.as_ref());
    let mut hosts: Vec<String> = exp
        .processes
        .iter()
        .filter_map(|p| p.info.as_ref().map(|i| i.host.clone()))
        .collect();
    hosts.sort();
    hosts.dedup();
    let probes: Vec<Value> = exp
        .processes
        .first()
        .map(|p| {
            p.calibration
                .iter()
                .map(|c| json!({"probe": c.probe.name(), "mean_ns": c.mean_ns, "sd_ns": c.sd_ns}))
                .collect()
        })
        .unwrap_or_default();
    let manifest = std::fs::read_to_string(exp.dir.join(parallax_model::experiment::MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    json!({
        "dir": exp.dir.display().to_string(),
        "program": info.map(|i| i.program.clone()),
        "args": info.map(|i| i.args.clone()),
        "mode": info.map(|i| i.mode.name()),
        "version": info.map(|i| i.version.clone()),
        "start_unix_ns": info.map(|i| i.start_unix_ns),
        "ranks": exp.processes.len(),
        "locations": prof.locations.len(),
        "hosts": hosts,
        "probes": probes,
        "wall_s": manifest.as_ref().and_then(|m| m.get("wall_seconds")).cloned(),
        "status": manifest.as_ref().and_then(|m| m.get("status")).cloned(),
        "unfinished": exp.processes.iter().filter(|p| p.end_unix_ns.is_none() && !p.killed()).count(),
        "killed": exp.processes.iter().filter(|p| p.killed()).count(),
    })
}

/// A finding with where it shows: its location's timeline row, the
/// longest visit of its region there, and the region's source lines.
fn place_finding(f: &Finding, tlocs: &[Loc], traces: &[LocTrace], regions: &[Value]) -> Value {
    let mut v = f.to_json();
    let row = tlocs
        .iter()
        .position(|l| Some(l.rank) == f.rank && f.thread.is_none_or(|t| t == l.thread));
    let region = f.region.as_deref().and_then(|name| {
        regions
            .iter()
            .position(|r| r.get("name").and_then(Value::as_str) == Some(name))
    });
    if let Some(row) = row {
        v["row"] = json!(row);
        let visit = traces[row]
            .visits
            .iter()
            .filter(|x| region.is_none_or(|r| x.region as usize == r))
            .max_by_key(|x| x.end - x.start);
        if let Some(x) = visit {
            v["t0"] = json!(x.start);
            v["t1"] = json!(x.end);
        }
    }
    // The region's source place from its definition, else the one the
    // analysis gave (`file:line`).
    let defined = region.and_then(|r| regions.get(r)).and_then(|r| {
        let file = r.get("file").and_then(Value::as_str).unwrap_or("");
        let line = r.get("line").and_then(Value::as_u64).unwrap_or(0);
        (!file.is_empty()).then(|| (file.to_string(), line))
    });
    let given = f.source.as_deref().and_then(|s| {
        let (file, line) = s.rsplit_once(':')?;
        Some((file.to_string(), line.parse::<u64>().ok()?))
    });
    v["source"] = Value::Null;
    if let Some((file, line)) = defined.or(given) {
        v["file"] = json!(file);
        v["line"] = json!(line);
        if let Some(src) = source_lines(&file, line) {
            v["source"] = src;
        }
    }
    v
}

/// Lines around `line` of `file`, if it can be read here.
fn source_lines(file: &str, line: u64) -> Option<Value> {
    if file.is_empty() || line == 0 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let first = line.saturating_sub(6).max(1);
    let lines: Vec<&str> = text.lines().skip(first as usize - 1).take(12).collect();
    Some(json!({"first": first, "lines": lines}))
}
