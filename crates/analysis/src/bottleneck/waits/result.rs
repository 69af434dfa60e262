//! What one location's replay found: waiting per (pattern, call path)
//! with its culprits, visits per call path, delay costs and the figures
//! the global analyses need; gathered to the root between ranks.

use std::collections::BTreeMap;

use crate::bottleneck::Pattern;
use parallax_view::fasthash::FastMap;

/// Waiting time summed for one (pattern, call path).
#[derive(Clone, Debug, Default)]
pub struct WaitTotal {
    pub ns: f64,
    pub instances: u64,
    /// Culprit locations and their part, ns.
    pub culprits: Vec<(u32, f64)>,
}

impl WaitTotal {
    pub(super) fn add(&mut self, ns: f64, culprit: Option<u32>) {
        self.add_parts(ns, culprit.map(|c| (c, ns)).as_slice());
    }

    /// One instance of `ns`, its culprits' parts in `parts`.
    pub(super) fn add_parts(&mut self, ns: f64, parts: &[(u32, f64)]) {
        self.ns += ns;
        self.instances += 1;
        for &(c, part) in parts {
            add_part(&mut self.culprits, c, part);
        }
    }
}

/// Adds `part` to location `loc`'s entry of `list`, making it if needed.
pub(crate) fn add_part(list: &mut Vec<(u32, f64)>, loc: u32, part: f64) {
    match list.iter_mut().find(|e| e.0 == loc) {
        Some(e) => e.1 += part,
        None => list.push((loc, part)),
    }
}

/// Visits of one call path.
#[derive(Clone, Debug)]
pub struct PathStats {
    pub parent: u32,
    pub region: u32,
    pub visits: u64,
    /// Visits of a wait that completed nothing (a probe, a failing test or
    /// trylock).
    pub idle: u64,
    pub incl: f64,
    pub excl: f64,
    pub min: f64,
    pub max: f64,
}

impl PathStats {
    /// Call path `region` under `parent`, not visited yet.
    pub(super) fn unvisited(parent: u32, region: u32) -> PathStats {
        PathStats {
            parent,
            region,
            visits: 0,
            idle: 0,
            incl: 0.0,
            excl: 0.0,
            min: f64::INFINITY,
            max: 0.0,
        }
    }
}

/// What one location's replay found.
#[derive(Debug, Default)]
pub struct LocResult {
    pub events: u64,
    pub first: Option<f64>,
    pub last: Option<f64>,
    pub paths: Vec<PathStats>,
    pub waits: FastMap<(Pattern, u32), WaitTotal>,
    /// Delay costs found by this location: by (delaying location,
    /// region), ns.
    pub delay: FastMap<(u32, u32), f64>,
    /// Delay costs propagated to the locations that delayed the delaying
    /// ones, ns.
    pub propagated: FastMap<u32, f64>,
    pub critical: std::collections::BTreeMap<u32, f64>,
    /// Per category: time, ns.
    pub categories: [f64; 5],
    /// Small sends by target: count, time ns, path.
    pub small: FastMap<u32, (u64, f64, u32)>,
    /// Block imbalance by communicator: blocks, (max − mean) ns, times
    /// this location was the slowest.
    pub blocks: FastMap<u64, (u64, f64, u64)>,
    /// By communicator: the call path of its first collective here and
    /// its members.
    pub coll_sites: FastMap<u64, (u32, u64)>,
    /// One-sided accesses: to the own rank, to others.
    pub rma: (u64, u64),
    /// Condition waits released without a paired post: by (call path,
    /// condition), waiting ns and instances.
    pub cond_unpaired: FastMap<(u32, u64), (f64, u64)>,
    /// Paired condition waits by (condition, poster): waiting ns.
    pub cond_posters: FastMap<(u64, u32), f64>,
    /// Slow blocking one-sided transfers: target rank, start, end, path.
    pub rma_slow: Vec<(u32, f64, f64, u32)>,
    /// Competitors of its slow transfers: by (request number, location),
    /// overlapping time ns (filled by rma.rs).
    pub rma_competitors: BTreeMap<(u64, u32), f64>,
    pub unmatched: u64,
    pub warning: Option<String>,
}

crate::wire::fields!(WaitTotal {
    ns,
    instances,
    culprits,
});
crate::wire::fields!(PathStats {
    parent,
    region,
    visits,
    idle,
    incl,
    excl,
    min,
    max,
});
crate::wire::fields!(LocResult {
    events,
    first,
    last,
    paths,
    waits,
    delay,
    propagated,
    critical,
    categories,
    small,
    blocks,
    coll_sites,
    rma,
    cond_unpaired,
    cond_posters,
    rma_slow,
    rma_competitors,
    unmatched,
    warning,
});
