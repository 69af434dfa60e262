//! The page's data for one experiment: summary, regions, locations,
//! profiles, load balance, concurrency, timeline, communication matrix and
//! findings, as JSON. The trace is read in passes of bounded memory
//! ([`scan`]), whatever its length.

use std::collections::{BTreeMap, HashMap, HashSet};

use parallax_analysis::concurrency;
use parallax_analysis::executor::Executor;
use parallax_model::event::UNKNOWN_REGION;
use parallax_model::experiment::Experiment;
use parallax_model::region::Category;
use parallax_view::finding::Finding;
use parallax_view::profile::{ExperimentProfile, Source, Times};
use parallax_view::trace::{self, Loc};
use serde_json::{json, Value};

use super::bins::Slices;
use super::scan::{self, LocScan, Plan, Wanted};
use super::{source, timeline};
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
    /// When the page holds single visits of part of the run only: that
    /// part (ns) and the visits in it.
    pub detail: Option<(u64, u64, u64)>,
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

/// Single visits the page holds at most, by default: a trace of about
/// 10 M events opens in well under a second with all of its visits.
pub const MAX_VISITS: usize = 6_000_000;

/// How much of the trace the page holds in full detail.
#[derive(Clone, Copy, Debug)]
pub struct Detail {
    /// Single visits at most (also: arrow ends at most a quarter of it,
    /// busy-state changes for the exact concurrency profile at most as
    /// many).
    pub max_visits: usize,
    /// The time range (ns since the start of the run) to take the single
    /// visits from; the whole run by default.
    pub window: Option<(u64, u64)>,
}

impl Default for Detail {
    fn default() -> Detail {
        Detail {
            max_visits: MAX_VISITS,
            window: None,
        }
    }
}

/// The data of `exp` for the page, with `findings` placed on its timeline.
pub fn experiment(
    exp: &Experiment,
    findings: &[Finding],
    detail: &Detail,
    built: &mut Built,
) -> Result<Value, super::Error> {
    let pool = Executor::pool();
    let prof = pool.load_profile(exp)?;
    built.warnings.extend(prof.warnings.iter().cloned());

    // Regions unified by (name, kind) across processes.
    let mut index: HashMap<(String, &'static str), u32> = HashMap::new();
    let mut regions: Vec<Value> = Vec::new();
    let mut waiting: Vec<bool> = Vec::new();
    let mut by_process: Vec<HashMap<u32, u32>> = vec![HashMap::new(); exp.processes.len()];
    let mut intern = |pi: usize, id: u32, by_process: &mut Vec<HashMap<u32, u32>>| -> u32 {
        if let Some(&g) = by_process[pi].get(&id) {
            return g;
        }
        let p = &exp.processes[pi];
        let (name, kind, file, line) = match p.regions.get(&id) {
            Some(r) => (r.name.clone(), r.kind.name(), r.file.clone(), r.line),
            None => (
                parallax_view::names::region_name(p, id),
                "user",
                String::new(),
                0,
            ),
        };
        let def = p.regions.get(&id);
        let cat = def.map_or(Category::Computation, |r| r.kind.category());
        let waits = def.is_some_and(|r| concurrency::waits(r.kind));
        let n = regions.len() as u32;
        let g = *index.entry((name.clone(), kind)).or_insert_with(|| {
            regions.push(
                json!({"name": name, "kind": kind, "cat": cat.name(), "file": file, "line": line}),
            );
            waiting.push(waits);
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

    // The timeline: the run's length first, then one pass per traced
    // location. Regions the definitions and profiles do not name are
    // shown as unknown.
    let tlocs = trace::locations(exp);
    let unknown: Vec<u32> = (0..exp.processes.len())
        .map(|pi| intern(pi, UNKNOWN_REGION, &mut by_process))
        .collect();
    let n = tlocs.len();
    let progress = Progress::new("reading the trace", 2 * n as u64);
    let extents: Vec<Result<(u64, u64), parallax_export::Error>> = pool.map(n, |i| {
        let r = scan::extent(exp, &tlocs[i]);
        progress.inc(1);
        r
    });
    let extents = extents.into_iter().collect::<Result<Vec<_>, _>>()?;
    let span = extents.iter().map(|e| e.0).max().unwrap_or(0).max(1);
    // Every event takes a byte at least: slices much finer than a
    // location's events would show nothing more.
    let most_events = extents.iter().map(|e| e.1).max().unwrap_or(0);
    let quota = (detail.max_visits / n.max(1)).min(u32::MAX as usize - 1);
    let window = detail.window.unwrap_or((0, u64::MAX));
    let plan = Plan {
        span,
        levels: timeline::levels(n, most_events),
        busy_bins: timeline::busy_bins(n, most_events),
        long_min: timeline::long_min(span),
        long_max: timeline::long_max(n),
        visits: quota,
        flows: quota / 4,
        transitions: quota,
        detail_only: false,
        window,
        ranks: exp.processes.iter().map(|p| p.rank + 1).max().unwrap_or(0),
    };
    let region_of = |name: &str| {
        regions
            .iter()
            .position(|r| r.get("name").and_then(Value::as_str) == Some(name))
            .map(|r| r as u32)
    };
    let mut wanted = vec![Wanted::default(); n];
    for f in findings {
        if let Some(row) = finding_row(f, &tlocs) {
            match f.known_region().map(region_of) {
                Some(Some(r)) => {
                    wanted[row].regions.insert(r);
                }
                Some(None) => {}
                None => wanted[row].any = true,
            }
        }
    }
    // Region ids are small numbers: most are looked up in a table.
    let dense: Vec<Vec<u32>> = by_process
        .iter()
        .zip(&unknown)
        .map(|(m, &unk)| {
            let len = m
                .keys()
                .filter(|&&id| id < DENSE)
                .max()
                .map_or(0, |&id| id + 1);
            let mut v = vec![unk; len as usize];
            for (&id, &g) in m.iter().filter(|(&id, _)| id < DENSE) {
                v[id as usize] = g;
            }
            v
        })
        .collect();
    let region_in = |pi: usize| {
        let (d, m, unk) = (&dense[pi], &by_process[pi], unknown[pi]);
        move |id: u32| match d.get(id as usize) {
            Some(&g) => g,
            None => m.get(&id).copied().unwrap_or(unk),
        }
    };
    let scans: Vec<Result<LocScan, parallax_export::Error>> = pool.map(n, |i| {
        let r = scan::scan(
            exp,
            &tlocs[i],
            &plan,
            &region_in(tlocs[i].process),
            &|g| waiting.get(g as usize).copied().unwrap_or(false),
            &wanted[i],
        );
        progress.inc(1);
        r
    });
    drop(progress);
    let mut scans: Vec<LocScan> = scans.into_iter().collect::<Result<_, _>>()?;

    // The detail ends where the first location's ran out, so that it is
    // the same time range for all. When a location ran out early (one
    // thread alone at the start of a run, say), a second pass takes the
    // single visits of every location up to the time at which, by the
    // first pass's counts, all of them fill the page's share.
    let mut cut = scans.iter().filter_map(|s| s.cut).min();
    if cut.is_some() {
        if let Some((until, last)) = detail_end(&scans, &plan, detail.max_visits) {
            let first = Slices::new(plan.span, plan.busy_bins).of(window.0);
            let again = Plan {
                window: (window.0, until),
                ..plan.clone()
            };
            for s in &mut scans {
                s.visits = Vec::new();
                s.flows = Vec::new();
            }
            let progress = Progress::new("reading single visits", n as u64);
            let rows: Vec<Result<LocScan, parallax_export::Error>> = pool.map(n, |i| {
                let s = &scans[i];
                let quota: u64 = s.items[first..last].iter().map(|&c| c as u64).sum::<u64>()
                    + s.crossing as u64
                    + 1;
                let r = scan::detail(
                    exp,
                    &tlocs[i],
                    &again,
                    quota as usize,
                    &region_in(tlocs[i].process),
                );
                progress.inc(1);
                r
            });
            drop(progress);
            for (s, d) in scans.iter_mut().zip(rows) {
                let d = d?;
                s.visits = d.visits;
                s.flows = d.flows;
                s.cut = d.cut;
            }
            cut = scans
                .iter()
                .filter_map(|s| s.cut)
                .min()
                .or((until < window.1).then_some(until));
        }
    }
    let t1 = cut.unwrap_or(window.1).min(span);
    for s in &mut scans {
        let v = s.visits.partition_point(|v| v.start < t1);
        s.visits.truncate(v);
        let f = s.flows.partition_point(|f| f.2 < t1);
        s.flows.truncate(f);
    }
    let complete = cut.is_none() && detail.window.is_none();
    for (i, t) in scans.iter().enumerate() {
        if let Some(w) = &t.warning {
            built.warnings.push(format!("{}: {w}", tlocs[i].label()));
        }
    }
    let deep: u64 = scans.iter().map(|s| s.too_deep).sum();
    if deep > 0 {
        built.warnings.push(format!(
            "{deep} visits nested deeper than {} regions are not shown",
            scan::MAX_DEPTH
        ));
    }
    let elsewhere: u64 = scans.iter().map(|s| s.sent_elsewhere).sum();
    if elsewhere > 0 {
        built.warnings.push(format!(
            "{elsewhere} messages to ranks outside the experiment are not in the matrix"
        ));
    }
    let rows: Vec<&LocScan> = scans.iter().collect();
    let visits: u64 = scans.iter().map(|s| s.visits_total).sum();
    let kept: u64 = scans.iter().map(|s| s.visits.len() as u64).sum();
    let timeline = if scans.is_empty() {
        Value::Null
    } else {
        let levels = if complete {
            timeline::levels_needed(&plan.levels, n, visits)
        } else {
            plan.levels.len()
        };
        let mut layout = timeline::layout(&rows, levels);
        let arrows = timeline::arrows(&rows);
        built.charts.span = span as f64;
        built.charts.timeline = scans
            .iter()
            .zip(&tlocs)
            .map(|(t, l)| (format!("{}:{}", l.rank, l.thread), t.lod[0].clone()))
            .collect();
        built.events += scans.iter().map(|t| t.events).sum::<u64>();
        built.visits += visits;
        built.arrows += arrows.len() as u64;
        if !complete {
            built.detail = Some((window.0.min(t1), t1, kept));
        }
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
            "span": span, "levels": &plan.levels[..levels], "labels": labels, "short": short,
            "loc": row_loc, "arrows": arrows.encode(), "narrows": arrows.len(),
            "detail": {
                "t0": window.0.min(t1), "t1": t1, "complete": complete,
                "visits": visits, "kept": kept, "max_visits": detail.max_visits,
                "window": detail.window.is_some(),
            },
        });
        if let (Some(v), Some(l)) = (v.as_object_mut(), layout.as_object_mut()) {
            v.append(l);
        }
        v
    };

    // Communication matrix by rank.
    let mut cells: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for (i, t) in scans.iter().enumerate() {
        for (&peer, &(n, b)) in &t.sent {
            let c = cells.entry((tlocs[i].rank, peer)).or_default();
            c.0 += n;
            c.1 += b;
        }
    }
    let matrix = json!({
        "ranks": plan.ranks,
        "cells": cells.iter().map(|(&(s, d), &(n, b))| json!([s, d, n, b])).collect::<Vec<_>>(),
    });

    let conc = super::concurrency::profile(&rows, span);

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
    let mut sources = Sources::default();
    let findings: Vec<Value> = findings
        .iter()
        .map(|f| place_finding(f, &tlocs, &scans, &regions, &mut sources))
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
    let manifest = parallax_model::experiment::manifest_text(&exp.dir)
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

/// Region ids below this are looked up in a table.
const DENSE: u32 = 1 << 16;

/// The end of the detail that fits `budget` visits and arrow ends over
/// all locations, by the first pass's counts per slice: the end of the
/// last slice of the window that fits, and the index of the slice after
/// it. `None` when not even the window's first slice fits.
fn detail_end(scans: &[LocScan], plan: &Plan, budget: usize) -> Option<(u64, usize)> {
    let slices = Slices::new(plan.span, plan.busy_bins);
    let first = slices.of(plan.window.0);
    let mut total: u64 = scans.iter().map(|s| s.crossing as u64).sum();
    let mut k = first;
    while k < slices.count() {
        let add: u64 = scans
            .iter()
            .map(|s| s.items.get(k).copied().unwrap_or(0) as u64)
            .sum();
        if total + add > budget as u64 {
            break;
        }
        total += add;
        k += 1;
    }
    if k == first {
        return None;
    }
    let until = if k == slices.count() {
        plan.window.1
    } else {
        slices.edge(k).min(plan.window.1)
    };
    Some((until, k))
}

/// The timeline row of a finding's location.
fn finding_row(f: &Finding, tlocs: &[Loc]) -> Option<usize> {
    tlocs
        .iter()
        .position(|l| l.rank == f.at.rank && l.thread == f.at.thread)
}

/// Source files embedded at most: each is read once, whatever the number
/// of findings.
const MAX_SOURCES: usize = 64;

/// A source's first line shown and the lines, or why it is not embedded.
type Lines = Result<(u64, Vec<String>), String>;

/// The source files read so far, and what each gave.
#[derive(Default)]
struct Sources {
    read: HashMap<(String, u64), Lines>,
    files: HashSet<String>,
}

impl Sources {
    fn lines(&mut self, file: &str, line: u64) -> Lines {
        let key = (file.to_string(), line);
        if let Some(r) = self.read.get(&key) {
            return r.clone();
        }
        if !self.files.contains(file) && self.files.len() >= MAX_SOURCES {
            return Err(format!(
                "the sources of {MAX_SOURCES} files are embedded at most"
            ));
        }
        self.files.insert(file.to_string());
        let r = source::lines(file, line);
        self.read.insert(key, r.clone());
        r
    }
}

/// A finding with where it shows: its location's timeline row, the
/// longest visit of its region there, and the region's source lines.
fn place_finding(
    f: &Finding,
    tlocs: &[Loc],
    scans: &[LocScan],
    regions: &[Value],
    sources: &mut Sources,
) -> Value {
    let mut v = parallax_db::findings::to_json(f);
    let name = f.known_region();
    let region = name.and_then(|name| {
        regions
            .iter()
            .position(|r| r.get("name").and_then(Value::as_str) == Some(name))
    });
    if let Some(row) = finding_row(f, tlocs) {
        v["row"] = json!(row);
        let s = &scans[row];
        let visit = match (name, region) {
            (None, _) => s.longest_any,
            (Some(_), Some(r)) => s.longest.get(&(r as u32)).copied(),
            (Some(_), None) => None,
        };
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
        match sources.lines(&file, line) {
            Ok((first, lines)) => v["source"] = json!({"first": first, "lines": lines}),
            Err(why) => v["source_note"] = json!(why),
        }
    }
    v
}
