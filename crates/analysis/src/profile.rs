//! Profiles of an experiment: one call tree per location, and views over
//! them (flat per region, merged call paths across locations).
//!
//! A location's tree comes from the runtime's profile where the run kept
//! one, and otherwise is derived from its event trace with the same
//! statistics (count, inclusive, exclusive, min, max, sum of squares), so
//! that a traced run and a profiled run report alike.

use std::collections::{BTreeMap, HashMap};

use parallax_model::clock::ClockMap;
use parallax_model::event::{EventKind, RegionId, OVERFLOW_REGION, UNKNOWN_REGION};
use parallax_model::experiment::{Experiment, Process};
use parallax_model::profile::{CallTree, Node, Stats};
use parallax_model::region::{Category, RegionKind};
use parallax_model::Error;

/// Where a location's profile came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The runtime's profile file.
    Runtime,
    /// Derived from the event trace.
    Trace,
}

/// The profile of one location.
#[derive(Clone, Debug)]
pub struct LocationProfile {
    /// Rank of its process.
    pub rank: u32,
    /// Thread number within the process.
    pub thread: u32,
    /// Thread name, may be empty.
    pub name: String,
    /// The call tree, in ticks.
    pub tree: CallTree,
    /// Tick-to-ns map of its process.
    pub clock: ClockMap,
    /// Index of its process in the experiment.
    pub process: usize,
    /// Where it came from.
    pub source: Source,
}

/// Statistics of a region or path in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Times {
    /// Visits.
    pub count: u64,
    /// Inclusive time, ns.
    pub inclusive: f64,
    /// Exclusive time, ns.
    pub exclusive: f64,
    /// Shortest visit, ns.
    pub min: f64,
    /// Longest visit, ns.
    pub max: f64,
    /// Sum of squared visit times, ns².
    pub sum_sq: f64,
}

impl Times {
    /// Statistics in ticks of `clock` as nanoseconds.
    pub fn from_stats(s: &Stats, clock: &ClockMap) -> Times {
        let k = clock.ns_per_tick;
        Times {
            count: s.count,
            inclusive: s.inclusive as f64 * k,
            exclusive: s.exclusive as f64 * k,
            min: if s.count == 0 { 0.0 } else { s.min as f64 * k },
            max: s.max as f64 * k,
            sum_sq: s.sum_sq * k * k,
        }
    }

    fn merge(&mut self, o: &Times) {
        if o.count == 0 {
            return;
        }
        self.min = if self.count == 0 {
            o.min
        } else {
            self.min.min(o.min)
        };
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.inclusive += o.inclusive;
        self.exclusive += o.exclusive;
        self.sum_sq += o.sum_sq;
    }

    /// Mean inclusive time per visit, ns.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.inclusive / self.count as f64
        }
    }

    /// Sample standard deviation of the inclusive time per visit, ns.
    pub fn std_dev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let m = self.inclusive / n;
        ((self.sum_sq / n - m * m).max(0.0) * n / (n - 1.0)).sqrt()
    }
}

/// One row of a flat profile.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatRow {
    /// Region name.
    pub region: String,
    /// Its generic operation type.
    pub kind: Option<RegionKind>,
    /// Statistics.
    pub times: Times,
}

/// One node of a call-path profile merged across locations.
#[derive(Clone, Debug, PartialEq)]
pub struct PathRow {
    /// Depth (0 for a top-level region).
    pub depth: usize,
    /// Region names from the top.
    pub path: Vec<String>,
    /// Statistics summed over locations.
    pub times: Times,
    /// Locations that visited it.
    pub locations: usize,
}

/// Profiles of all locations of an experiment.
#[derive(Clone, Debug)]
pub struct ExperimentProfile {
    /// One per location, ordered by (rank, thread).
    pub locations: Vec<LocationProfile>,
    /// Problems met while reading; the data before each was used.
    pub warnings: Vec<String>,
}

impl ExperimentProfile {
    /// Loads the profile of every location: the runtime's where present,
    /// else derived from the trace.
    pub fn load(exp: &Experiment) -> Result<ExperimentProfile, Error> {
        Self::load_with(exp, crate::executor::Executor::Sequential)
    }

    /// [`ExperimentProfile::load`], with the profiles derived from traces
    /// built by `exec` (under MPI each rank reads its share of the traces;
    /// every rank gets the whole profile).
    pub fn load_with(
        exp: &Experiment,
        exec: crate::executor::Executor,
    ) -> Result<ExperimentProfile, Error> {
        let mut runtime = Vec::new();
        for p in &exp.processes {
            let (trees, err) = p.profiles()?;
            let have: HashMap<u32, CallTree> = trees.into_iter().map(|t| (t.thread, t)).collect();
            runtime.push((have, err));
        }
        let need: Vec<crate::trace::Loc> = crate::trace::locations(exp)
            .into_iter()
            .filter(|l| !runtime[l.process].0.contains_key(&l.thread))
            .collect();
        let built = exec.map_locs(&need, |i| {
            tree_from_trace(&exp.processes[need[i].process], need[i].thread)
        });
        type Derived = Result<(CallTree, Vec<String>), Error>;
        let mut derived: HashMap<(usize, u32), Derived> = need
            .iter()
            .map(|l| (l.process, l.thread))
            .zip(built)
            .collect();
        let mut locations = Vec::new();
        let mut warnings = exp.warnings();
        for ((pi, p), (mut have, err)) in exp.processes.iter().enumerate().zip(runtime) {
            if let Some(e) = err {
                warnings.push(e.to_string());
            }
            for loc in p.locations.values() {
                let (tree, source) = match have.remove(&loc.thread) {
                    Some(t) => (t, Source::Runtime),
                    None if loc.events.is_some() => {
                        let (t, w) = derived
                            .remove(&(pi, loc.thread))
                            .expect("every traced location was derived")?;
                        warnings.extend(w);
                        (t, Source::Trace)
                    }
                    None => continue,
                };
                locations.push(LocationProfile {
                    rank: p.rank,
                    thread: loc.thread,
                    name: loc.name.clone(),
                    tree,
                    clock: p.clock,
                    process: pi,
                    source,
                });
            }
        }
        Ok(ExperimentProfile {
            locations,
            warnings,
        })
    }

    /// Flat profile of one location (by index), heaviest exclusive first.
    pub fn flat_location(&self, exp: &Experiment, i: usize) -> Vec<FlatRow> {
        self.flat_of(exp, std::slice::from_ref(&self.locations[i]))
    }

    /// Flat profile over all locations, heaviest exclusive first.
    pub fn flat_total(&self, exp: &Experiment) -> Vec<FlatRow> {
        self.flat_of(exp, &self.locations)
    }

    fn flat_of(&self, exp: &Experiment, locs: &[LocationProfile]) -> Vec<FlatRow> {
        // Regions are keyed by name: ids are per process.
        let mut rows: BTreeMap<String, FlatRow> = BTreeMap::new();
        for l in locs {
            let p = &exp.processes[l.process];
            for (i, n) in l.tree.nodes.iter().enumerate() {
                let name = region_name(p, n.region);
                let row = rows.entry(name.clone()).or_insert_with(|| FlatRow {
                    region: name,
                    kind: p.regions.get(&n.region).map(|r| r.kind),
                    times: Times::default(),
                });
                let mut t = Times::from_stats(&n.stats, &l.clock);
                // A recursive region's inclusive time counts once: only
                // visits with no ancestor of the same region add to it.
                if has_ancestor(&l.tree, i, n.region) {
                    t.inclusive = 0.0;
                }
                row.times.merge(&t);
            }
        }
        let mut v: Vec<FlatRow> = rows.into_values().collect();
        v.sort_by(|a, b| b.times.exclusive.total_cmp(&a.times.exclusive));
        v
    }

    /// The call-path profile of one location, in tree order.
    pub fn paths_location(&self, exp: &Experiment, i: usize) -> Vec<PathRow> {
        self.paths_of(exp, std::slice::from_ref(&self.locations[i]))
    }

    /// Call paths merged over all locations (by region names), in tree
    /// order with heavier siblings first.
    pub fn paths_total(&self, exp: &Experiment) -> Vec<PathRow> {
        self.paths_of(exp, &self.locations)
    }

    fn paths_of(&self, exp: &Experiment, locs: &[LocationProfile]) -> Vec<PathRow> {
        let mut merged: BTreeMap<Vec<String>, (Times, usize)> = BTreeMap::new();
        for l in locs {
            let p = &exp.processes[l.process];
            let mut names: Vec<Vec<String>> = Vec::with_capacity(l.tree.nodes.len());
            for n in &l.tree.nodes {
                let mut path = match n.parent {
                    Some(q) => names[q as usize].clone(),
                    None => Vec::new(),
                };
                path.push(region_name(p, n.region));
                let e = merged.entry(path.clone()).or_default();
                e.0.merge(&Times::from_stats(&n.stats, &l.clock));
                e.1 += 1;
                names.push(path);
            }
        }
        // Order: depth-first, heavier inclusive first among siblings.
        let mut children: BTreeMap<Vec<String>, Vec<Vec<String>>> = BTreeMap::new();
        for path in merged.keys() {
            children
                .entry(path[..path.len() - 1].to_vec())
                .or_default()
                .push(path.clone());
        }
        for c in children.values_mut() {
            c.sort_by(|a, b| merged[b].0.inclusive.total_cmp(&merged[a].0.inclusive));
        }
        let mut out = Vec::new();
        let mut stack: Vec<Vec<String>> = children.get(&Vec::new()).cloned().unwrap_or_default();
        stack.reverse();
        while let Some(path) = stack.pop() {
            let (times, locations) = merged[&path];
            if let Some(c) = children.get(&path) {
                stack.extend(c.iter().rev().cloned());
            }
            out.push(PathRow {
                depth: path.len() - 1,
                path,
                times,
                locations,
            });
        }
        out
    }

    /// Time per category (computation, communication, ...) of location `i`,
    /// from exclusive times.
    pub fn categories(&self, exp: &Experiment, i: usize) -> BTreeMap<Category, f64> {
        let l = &self.locations[i];
        let p = &exp.processes[l.process];
        let mut out = BTreeMap::new();
        for n in &l.tree.nodes {
            let cat = p
                .regions
                .get(&n.region)
                .map_or(Category::Computation, |r| r.kind.category());
            *out.entry(cat).or_insert(0.0) += Times::from_stats(&n.stats, &l.clock).exclusive;
        }
        out
    }
}

fn has_ancestor(tree: &CallTree, i: usize, region: RegionId) -> bool {
    let mut p = tree.nodes[i].parent;
    while let Some(q) = p {
        let n = &tree.nodes[q as usize];
        if n.region == region {
            return true;
        }
        p = n.parent;
    }
    false
}

fn region_name(p: &Process, id: RegionId) -> String {
    match id {
        UNKNOWN_REGION => "<unknown>".to_string(),
        OVERFLOW_REGION => "<other paths>".to_string(),
        _ => p.region_name(id),
    }
}

/// Builds a location's call tree from its trace, streaming block by block.
/// Regions still open at the end are closed at the last event's time; a
/// damaged file gives a warning and the tree of what came before it.
pub fn tree_from_trace(p: &Process, thread: u32) -> Result<(CallTree, Vec<String>), Error> {
    let mut reader = p.events(thread)?;
    let mut b = TreeBuilder::new(thread);
    let mut warnings = Vec::new();
    let mut batch = Vec::new();
    loop {
        batch.clear();
        let more = match reader.next_block(&mut batch) {
            Ok(m) => m,
            Err(e) => {
                warnings.push(e.to_string());
                false
            }
        };
        for e in &batch {
            match e.kind {
                EventKind::Enter { region } => b.enter(region, e.time),
                EventKind::Leave { .. } => b.leave(e.time),
                _ => {}
            }
            b.last = e.time;
        }
        if !more {
            break;
        }
    }
    Ok((b.finish(), warnings))
}

/// Call paths a tree built from a trace holds at most, as the runtime's
/// profile (`PARALLAX_PROFILE_NODES`): later new paths are counted in one
/// `<other paths>` node, so that a trace of ever new paths cannot grow the
/// tree without bound.
pub const MAX_NODES: usize = 1 << 16;

/// Open regions a tree built from a trace follows at most, as the
/// runtime's profile (`PARALLAX_MAX_DEPTH`): deeper visits are not
/// profiled.
pub const MAX_DEPTH: usize = 1024;

/// Builds a call tree from enter and leave events, in memory bounded by
/// [`MAX_NODES`] and [`MAX_DEPTH`].
#[derive(Debug)]
pub struct TreeBuilder {
    tree: CallTree,
    index: crate::fasthash::FastMap<(Option<u32>, RegionId), u32>,
    stack: Vec<(u32, u64, u64)>,
    /// Open regions beyond [`MAX_DEPTH`].
    deep: u64,
    last: u64,
    /// The node entered last and its key: a loop enters the same region
    /// under the same parent again and again, without a lookup.
    recent: Option<((Option<u32>, RegionId), u32)>,
}

impl TreeBuilder {
    /// An empty tree for `thread`.
    pub fn new(thread: u32) -> TreeBuilder {
        TreeBuilder {
            tree: CallTree {
                thread,
                nodes: Vec::new(),
            },
            index: Default::default(),
            stack: Vec::new(),
            deep: 0,
            last: 0,
            recent: None,
        }
    }

    /// A region is entered at `t`.
    pub fn enter(&mut self, region: RegionId, t: u64) {
        if self.stack.len() >= MAX_DEPTH {
            self.deep += 1;
            return;
        }
        let parent = self.stack.last().map(|f| f.0);
        let key = (parent, region);
        let id = match self.recent {
            Some((k, id)) if k == key => id,
            _ => {
                let id = match self.index.get(&key) {
                    Some(&id) => id,
                    None => self.add(key),
                };
                self.recent = Some((key, id));
                id
            }
        };
        self.stack.push((id, t, 0));
    }

    /// The node of a new path, or the overflow node once the tree is full
    /// (paths under it are counted in it too).
    fn add(&mut self, key: (Option<u32>, RegionId)) -> u32 {
        let overflow = (None, OVERFLOW_REGION);
        let full = self.tree.nodes.len() >= MAX_NODES;
        let under_overflow = key
            .0
            .is_some_and(|p| self.tree.nodes[p as usize].region == OVERFLOW_REGION);
        let key = if full || under_overflow {
            overflow
        } else {
            key
        };
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        self.tree.nodes.push(Node {
            parent: key.0,
            region: key.1,
            stats: Stats::EMPTY,
        });
        let id = (self.tree.nodes.len() - 1) as u32;
        self.index.insert(key, id);
        id
    }

    /// The innermost region is left at `t` (a leave with nothing open is
    /// ignored).
    pub fn leave(&mut self, t: u64) {
        if self.deep > 0 {
            self.deep -= 1;
            return;
        }
        let Some((id, start, children)) = self.stack.pop() else {
            return;
        };
        let d = t.saturating_sub(start);
        self.tree.nodes[id as usize].stats.add(d, children);
        if let Some(p) = self.stack.last_mut() {
            p.2 += d;
        }
    }

    /// Notes an event at `t` (where open regions close if the trace ends).
    pub fn seen(&mut self, t: u64) {
        self.last = t;
    }

    /// The tree, closing open regions at the last time seen.
    pub fn finish(mut self) -> CallTree {
        let t = self.last.max(self.stack.last().map_or(0, |f| f.1));
        while !self.stack.is_empty() {
            self.leave(t);
        }
        self.tree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_matches_hand_computed_tree() {
        let mut b = TreeBuilder::new(0);
        b.enter(1, 0);
        b.enter(2, 10);
        b.leave(30);
        b.enter(2, 40);
        b.leave(45);
        b.leave(100);
        let t = b.finish();
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(
            (t.nodes[0].stats.inclusive, t.nodes[0].stats.exclusive),
            (100, 75)
        );
        assert_eq!(
            (
                t.nodes[1].stats.count,
                t.nodes[1].stats.min,
                t.nodes[1].stats.max
            ),
            (2, 5, 20)
        );
    }

    #[test]
    fn a_trace_of_ever_new_paths_keeps_a_bounded_tree() {
        let mut b = TreeBuilder::new(0);
        // Ever deeper, then ever new siblings.
        for i in 0..(MAX_DEPTH as u64 + 10) {
            b.enter(i as u32, i);
        }
        for i in 0..(MAX_DEPTH as u64 + 10) {
            b.leave(2000 + i);
        }
        for i in 0..(2 * MAX_NODES as u64) {
            b.enter(5000 + i as u32, 10_000 + 2 * i);
            b.leave(10_001 + 2 * i);
        }
        assert_eq!(b.stack.len(), 0);
        let t = b.finish();
        assert!(t.nodes.len() <= MAX_NODES + 1, "{}", t.nodes.len());
        let other = t
            .nodes
            .iter()
            .find(|n| n.region == OVERFLOW_REGION)
            .expect("an overflow node");
        assert!(other.stats.count > MAX_NODES as u64 - MAX_DEPTH as u64);
        // The outermost region kept its whole visit.
        assert_eq!(t.nodes[0].stats.inclusive, 2000 + MAX_DEPTH as u64 + 9);
    }

    #[test]
    fn open_regions_are_closed_at_the_end() {
        let mut b = TreeBuilder::new(0);
        b.enter(1, 5);
        b.enter(2, 7);
        b.last = 20;
        let t = b.finish();
        assert_eq!(t.nodes[0].stats.inclusive, 15);
        assert_eq!(t.nodes[1].stats.inclusive, 13);
    }

    #[test]
    fn times_merge_and_moments() {
        let clock = ClockMap {
            tick0: 0,
            ns0: 0.0,
            ns_per_tick: 2.0,
        };
        let mut s = Stats::EMPTY;
        s.add(10, 0);
        s.add(20, 0);
        let t = Times::from_stats(&s, &clock);
        assert_eq!((t.inclusive, t.min, t.max), (60.0, 20.0, 40.0));
        let mut m = Times::default();
        m.merge(&t);
        m.merge(&t);
        assert_eq!(m.count, 4);
        assert!((m.mean() - 30.0).abs() < 1e-9);
        // Visits of 20, 40, 20, 40 ns: population variance 100.
        assert!((m.std_dev() - (100.0f64 * 4.0 / 3.0).sqrt()).abs() < 1e-9);
    }
}
