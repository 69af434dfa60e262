//! Profiles of an experiment: one call tree per location, and views over
//! them (flat per region, merged call paths across locations).
//!
//! A location's tree comes from the runtime's profile where the run kept
//! one, and otherwise is derived from its event trace with the same
//! statistics (count, inclusive, exclusive, min, max, sum of squares), so
//! that a traced run and a profiled run report alike.

use std::collections::{BTreeMap, HashMap};

use parallax_model::clock::ClockMap;
use parallax_model::event::RegionId;
use parallax_model::experiment::{Experiment, Process};
use parallax_model::profile::{CallTree, Stats};
use parallax_model::region::{Category, RegionKind};
use parallax_model::Error;

mod from_trace;

use crate::names::region_name;

pub use from_trace::{tree_from_trace, DerivedTree, TreeBuilder, MAX_NODES};

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
    /// Its whole measured time, ns: from its first to its last event
    /// where it has a trace, else its process's measured time for the
    /// process's initial thread; unknown for another thread with only a
    /// profile.
    pub measured_ns: Option<f64>,
}

impl LocationProfile {
    /// Time in its top-level regions, ns: what its recorded regions cover.
    pub fn in_regions_ns(&self) -> f64 {
        self.tree
            .nodes
            .iter()
            .filter(|n| n.parent.is_none())
            .map(|n| n.stats.inclusive as f64 * self.clock.ns_per_tick)
            .sum()
    }

    /// Its time outside any recorded region (the program's own code where
    /// it is not instrumented), ns; 0 where the measured time is unknown.
    pub fn outside_ns(&self) -> f64 {
        self.measured_ns
            .map_or(0.0, |m| (m - self.in_regions_ns()).max(0.0))
    }

    /// What shares of this location are of: its measured time, or where
    /// that is unknown, its time in recorded regions.
    pub fn whole_ns(&self) -> f64 {
        self.measured_ns.unwrap_or(0.0).max(self.in_regions_ns())
    }
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
        self.count = self.count.saturating_add(o.count);
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

/// One node of a call-path profile merged across locations. A list of rows
/// is in tree order (each row after its parent, depth first); each row names
/// its parent by its index in the list, so that the list's size is linear
/// in the depth of the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct PathRow {
    /// Depth (0 for a top-level region).
    pub depth: usize,
    /// Index of the parent row in the same list; `None` at the top.
    pub parent: Option<usize>,
    /// The region's name.
    pub region: String,
    /// Statistics summed over locations.
    pub times: Times,
    /// Locations that visited it.
    pub locations: usize,
}

/// A tree derived from a trace and the problems met.
type TreeAndWarnings = (CallTree, Vec<String>);

/// The per-location work of loading a profile: the locations whose trees
/// must be derived from their traces (which gives their spans too), and
/// the traced locations with a runtime profile, whose span is needed.
#[derive(Debug)]
pub struct Derivations {
    /// Traced locations without a runtime profile.
    pub need: Vec<crate::trace::Loc>,
    /// Traced locations with a runtime profile.
    pub spanned: Vec<crate::trace::Loc>,
}

impl Derivations {
    /// The tree of `need[i]`, derived from its trace.
    pub fn tree(&self, exp: &Experiment, i: usize) -> Result<DerivedTree, Error> {
        let l = &self.need[i];
        tree_from_trace(&exp.processes[l.process], l.thread)
    }

    /// The first and last event of `spanned[i]`, ticks.
    pub fn span(&self, exp: &Experiment, i: usize) -> Option<(u64, u64)> {
        let l = &self.spanned[i];
        trace_span(&exp.processes[l.process], l.thread)
    }
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
        Self::load_by(exp, |derive| {
            let built = (0..derive.need.len())
                .map(|i| derive.tree(exp, i))
                .collect();
            let spans = (0..derive.spanned.len())
                .map(|i| derive.span(exp, i))
                .collect();
            (built, spans)
        })
    }

    /// [`ExperimentProfile::load`], with the per-location work (the trees
    /// derived from traces, the other traces' spans) done by `run`, which
    /// returns [`Derivations::tree`] of every needed location and
    /// [`Derivations::span`] of every spanned one, in order; an analysis
    /// spreads them over threads or ranks.
    pub fn load_by(
        exp: &Experiment,
        run: impl FnOnce(&Derivations) -> (Vec<Result<DerivedTree, Error>>, Vec<Option<(u64, u64)>>),
    ) -> Result<ExperimentProfile, Error> {
        let mut runtime = Vec::new();
        for p in &exp.processes {
            let (trees, err) = p.profiles()?;
            let have: HashMap<u32, CallTree> = trees.into_iter().map(|t| (t.thread, t)).collect();
            runtime.push((have, err));
        }
        let (need, spanned) = crate::trace::locations(exp)
            .into_iter()
            .partition(|l| !runtime[l.process].0.contains_key(&l.thread));
        let derive = Derivations { need, spanned };
        let (built, spans) = run(&derive);
        let Derivations { need, spanned } = derive;
        // Every traced location's first and last event, ticks.
        let mut spans: HashMap<(usize, u32), Option<(u64, u64)>> = spanned
            .iter()
            .map(|l| (l.process, l.thread))
            .zip(spans)
            .collect();
        let built: Vec<Result<TreeAndWarnings, Error>> = need
            .iter()
            .zip(built)
            .map(|(l, b)| {
                b.map(|(tree, warnings, span)| {
                    spans.insert((l.process, l.thread), span);
                    (tree, warnings)
                })
            })
            .collect();
        let mut derived: HashMap<(usize, u32), Result<TreeAndWarnings, Error>> = need
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
                    None if loc.events.is_some() || loc.spill.is_some() => {
                        let (t, w) = derived
                            .remove(&(pi, loc.thread))
                            .expect("every traced location was derived")?;
                        warnings.extend(w);
                        (t, Source::Trace)
                    }
                    None => continue,
                };
                let measured_ns = match spans.get(&(pi, loc.thread)).copied().flatten() {
                    Some((a, b)) => Some(b.saturating_sub(a) as f64 * p.clock.ns_per_tick),
                    None if initial_thread(p, loc.thread) => p
                        .info
                        .as_ref()
                        .zip(p.end_unix_ns)
                        .map(|(i, e)| e.saturating_sub(i.start_unix_ns) as f64),
                    None => None,
                };
                locations.push(LocationProfile {
                    rank: p.rank,
                    thread: loc.thread,
                    name: loc.name.clone(),
                    tree,
                    clock: p.clock,
                    process: pi,
                    source,
                    measured_ns,
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
            let nested = nested_in_same_region(&l.tree);
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
                if nested[i] {
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

    /// Call paths merged over the locations `keep` accepts, in the order
    /// of [`ExperimentProfile::paths_total`].
    pub fn paths_where(
        &self,
        exp: &Experiment,
        keep: impl Fn(&LocationProfile) -> bool,
    ) -> Vec<PathRow> {
        let locs: Vec<&LocationProfile> = self.locations.iter().filter(|l| keep(l)).collect();
        self.paths_of(exp, locs)
    }

    fn paths_of<'a>(
        &self,
        exp: &Experiment,
        locs: impl IntoIterator<Item = &'a LocationProfile>,
    ) -> Vec<PathRow> {
        // The merged tree: a node per (merged parent, region name), names
        // interned, so that memory and time are linear in the nodes of the
        // trees merged, whatever their depth.
        struct Merged {
            parent: Option<u32>,
            name: u32,
            times: Times,
            locations: usize,
        }
        let mut names: Vec<String> = Vec::new();
        let mut name_ids: HashMap<String, u32> = HashMap::new();
        let mut nodes: Vec<Merged> = Vec::new();
        let mut index: HashMap<(Option<u32>, u32), u32> = HashMap::new();
        for l in locs {
            let p = &exp.processes[l.process];
            let mut by_region: HashMap<RegionId, u32> = HashMap::new();
            let mut merged_of: Vec<u32> = Vec::with_capacity(l.tree.nodes.len());
            for (i, n) in l.tree.nodes.iter().enumerate() {
                let name = *by_region.entry(n.region).or_insert_with(|| {
                    let s = region_name(p, n.region);
                    match name_ids.get(&s) {
                        Some(&id) => id,
                        None => {
                            let id = names.len() as u32;
                            names.push(s.clone());
                            name_ids.insert(s, id);
                            id
                        }
                    }
                });
                // Parents precede their children in a call tree.
                let parent = n
                    .parent
                    .filter(|&q| (q as usize) < i)
                    .map(|q| merged_of[q as usize]);
                let m = *index.entry((parent, name)).or_insert_with(|| {
                    nodes.push(Merged {
                        parent,
                        name,
                        times: Times::default(),
                        locations: 0,
                    });
                    (nodes.len() - 1) as u32
                });
                let node = &mut nodes[m as usize];
                node.times.merge(&Times::from_stats(&n.stats, &l.clock));
                node.locations += 1;
                merged_of.push(m);
            }
        }
        drop(index);
        // Order: depth-first, heavier inclusive first among siblings (ties
        // by name), without recursion.
        let mut roots: Vec<u32> = Vec::new();
        let mut children: Vec<Vec<u32>> = (0..nodes.len()).map(|_| Vec::new()).collect();
        for (i, n) in nodes.iter().enumerate() {
            match n.parent {
                Some(q) => children[q as usize].push(i as u32),
                None => roots.push(i as u32),
            }
        }
        let heavier = |a: &u32, b: &u32| {
            let (a, b) = (&nodes[*a as usize], &nodes[*b as usize]);
            b.times
                .inclusive
                .total_cmp(&a.times.inclusive)
                .then_with(|| names[a.name as usize].cmp(&names[b.name as usize]))
        };
        roots.sort_by(heavier);
        for c in children.iter_mut() {
            c.sort_by(heavier);
        }
        let mut out: Vec<PathRow> = Vec::with_capacity(nodes.len());
        // (node, its parent's row, depth)
        let mut stack: Vec<(u32, Option<usize>, usize)> =
            roots.iter().rev().map(|&r| (r, None, 0)).collect();
        while let Some((i, parent, depth)) = stack.pop() {
            let n = &nodes[i as usize];
            let row = out.len();
            out.push(PathRow {
                depth,
                parent,
                region: names[n.name as usize].clone(),
                times: n.times,
                locations: n.locations,
            });
            for &c in children[i as usize].iter().rev() {
                stack.push((c, Some(row), depth + 1));
            }
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

/// Whether thread `thread` of `p` is the process's initial thread: its
/// system thread id is the process id; where either is unknown, its number
/// is 0 (the runtime numbers threads in the order they first record, so
/// another thread may be 0).
pub fn initial_thread(p: &Process, thread: u32) -> bool {
    let tid = p.locations.get(&thread).map_or(0, |l| l.os_tid);
    match p.info.as_ref().map(|i| i.pid) {
        Some(pid) if pid != 0 && tid != 0 => tid == pid,
        _ => thread == 0,
    }
}

/// The times of the first and the last event of a location's trace, in
/// ticks; `None` for an empty or unreadable one.
fn trace_span(p: &Process, thread: u32) -> Option<(u64, u64)> {
    let mut reader = p.events(thread).ok()?;
    let mut span: Option<(u64, u64)> = None;
    loop {
        let more = reader
            .each_in_block(|e| span = Some(span.map_or((e.time, e.time), |(a, _)| (a, e.time))))
            .unwrap_or(false);
        if !more {
            return span;
        }
    }
}

/// For each node of `tree`, whether one of its ancestors is of the same
/// region: one walk of the tree with a count of each region on the current
/// path (linear in the nodes, whatever the depth).
fn nested_in_same_region(tree: &CallTree) -> Vec<bool> {
    let n = tree.nodes.len();
    // Children lists in one array (parents precede their children).
    let mut first = vec![u32::MAX; n];
    let mut next = vec![u32::MAX; n];
    let mut roots = Vec::new();
    for i in (0..n).rev() {
        match tree.nodes[i].parent.filter(|&q| (q as usize) < i) {
            Some(q) => {
                next[i] = first[q as usize];
                first[q as usize] = i as u32;
            }
            None => roots.push(i as u32),
        }
    }
    let mut out = vec![false; n];
    let mut open: HashMap<RegionId, u32> = HashMap::new();
    // (node, entering): a node is entered, its children walked, then left.
    let mut stack: Vec<(u32, bool)> = roots.iter().rev().map(|&r| (r, true)).collect();
    while let Some((i, entering)) = stack.pop() {
        let region = tree.nodes[i as usize].region;
        if entering {
            let c = open.entry(region).or_insert(0);
            out[i as usize] = *c > 0;
            *c += 1;
            stack.push((i, false));
            let mut ch = first[i as usize];
            while ch != u32::MAX {
                stack.push((ch, true));
                ch = next[ch as usize];
            }
        } else if let Some(c) = open.get_mut(&region) {
            *c -= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use parallax_model::event::OVERFLOW_REGION;

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
        const DEEP: u64 = 1000;
        for i in 0..DEEP {
            b.enter(i as u32, i);
        }
        for i in 0..DEEP {
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
        assert!(other.stats.count > MAX_NODES as u64 - DEEP);
        // The outermost region kept its whole visit.
        assert_eq!(t.nodes[0].stats.inclusive, 2000 + DEEP - 1);
    }

    #[test]
    fn a_tree_from_a_trace_is_bounded_in_call_paths() {
        // Every enter a new path: past the bound, visits go to one node.
        let mut b = TreeBuilder::new(0);
        let n = MAX_NODES as u32 + 1000;
        for r in 0..n {
            b.enter(r, r as u64);
            b.leave(r as u64 + 1);
        }
        assert_eq!(b.dropped, 1000);
        let t = b.finish();
        assert_eq!(t.nodes.len(), MAX_NODES + 1);
        let o = &t.nodes[MAX_NODES];
        assert_eq!(
            (o.region, o.parent, o.stats.count),
            (OVERFLOW_REGION, None, 1000)
        );
    }

    #[test]
    fn paths_name_their_parents_and_nesting_is_found_without_recursion() {
        // A recursion 200,000 deep: one node per level, each the child of
        // the one before, each but the first nested in its own region.
        let mut b = TreeBuilder::new(0);
        let depth = 200_000u64;
        for i in 0..depth {
            b.enter(7, i);
        }
        b.seen(2 * depth);
        let t = b.finish();
        assert_eq!(t.nodes.len(), depth as usize);
        let nested = nested_in_same_region(&t);
        assert!(!nested[0] && nested[1..].iter().all(|&x| x));
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
