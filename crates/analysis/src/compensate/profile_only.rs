//! Compensation of an experiment that has profiles but no trace: each call
//! path loses the probes of its own visits (exclusive time) and, in its
//! inclusive time, those of every visit below it too (the time-based model
//! per call path, as profilers such as TAU apply it). Each visit costs the
//! probes of the way its region is entered ([`Costs::pair_ns`]); the calls
//! that recorded nothing under a path (its `SKIPPED_REGION` node) cost the
//! path what their hooks cost ([`Costs::skipped_ns`]).

use std::path::Path;

use parallax_model::event::{RegionId, SKIPPED_REGION};
use parallax_model::experiment::{self, Experiment};
use parallax_model::profile::CallTree;
use parallax_model::Error;

use super::costs::Costs;
use super::{LocStats, LocSummary, Summary};

/// Removes `costs` per visit from every process's profiles.
pub(super) fn compensate(exp: &Experiment, out: &Path, costs: &[Costs]) -> Result<Summary, Error> {
    let mut locations = Vec::new();
    let mut warnings = Vec::new();
    for (p, c) in exp.processes.iter().zip(costs) {
        let (mut trees, err) = p.profiles()?;
        warnings.extend(err.map(|e| e.to_string()));
        let ticks_per_ns = 1.0 / p.clock.ns_per_tick;
        let cost = |region: RegionId| c.pair_ns(region) * ticks_per_ns;
        let skipped = c.skipped_ns() * ticks_per_ns;
        for t in &mut trees {
            let removed = compensate_tree(t, &cost, skipped);
            let root_ns = t
                .nodes
                .iter()
                .filter(|n| n.parent.is_none())
                .map(|n| n.stats.inclusive as f64 * p.clock.ns_per_tick)
                .sum::<f64>();
            let visits: u64 = t
                .nodes
                .iter()
                .filter(|n| n.region != SKIPPED_REGION)
                .map(|n| n.stats.count)
                .sum();
            locations.push(LocSummary {
                rank: p.rank,
                thread: t.thread,
                stats: LocStats {
                    events: 2 * visits,
                    first: Some((0.0, 0.0)),
                    last: Some((root_ns + removed / ticks_per_ns, root_ns)),
                    probe_ns: removed / ticks_per_ns,
                    uncertainty_ns: 2.0 * visits as f64 * c.sd_ns,
                    context_ns: c.context_range(removed / ticks_per_ns),
                    ..LocStats::default()
                },
            });
        }
        let dir = out.join(experiment::rank_dir(p.rank));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let (rank, mut defs) = experiment::read_defs(&p.dir)?;
        // No event file is written: the measured ones' summaries go.
        defs.retain(|d| !matches!(d, parallax_model::defs::Def::Summary { .. }));
        defs.push(parallax_model::defs::Def::Property {
            key: super::COMPENSATED.to_string(),
            value: "profile".to_string(),
        });
        experiment::write_defs(&dir, rank, &defs)?;
        experiment::write_profiles(&dir, rank, &trees)?;
    }
    let measured_ns = locations
        .iter()
        .map(|l| l.measured_ns())
        .fold(0.0, f64::max);
    let approximated_ns = locations
        .iter()
        .map(|l| l.approximated_ns())
        .fold(0.0, f64::max);
    Ok(Summary {
        measured_ns,
        approximated_ns,
        sequential_model_ns: approximated_ns,
        concurrent_model_ns: approximated_ns,
        forced: 0,
        unclaimed: 0,
        warnings,
        locations,
        crowded: Vec::new(),
        rescheduled: Vec::new(),
    })
}

/// Removes `cost(region)` ticks per visit of each node, and from a node of
/// calls not recorded `skipped` ticks per call (from its parent's exclusive
/// time); returns the ticks removed from the top-level paths' inclusive
/// time.
fn compensate_tree(t: &mut CallTree, cost: &dyn Fn(RegionId) -> f64, skipped: f64) -> f64 {
    // Probe cost of each node's own visits, and at or below each node;
    // parents precede children, so one backward sweep adds children into
    // parents.
    let own: Vec<f64> = t
        .nodes
        .iter()
        .map(|n| {
            let calls = n.stats.count as f64;
            match (n.region, n.parent) {
                (SKIPPED_REGION, Some(_)) => skipped * calls,
                (SKIPPED_REGION, None) => 0.0,
                (r, _) => cost(r) * calls,
            }
        })
        .collect();
    let mut below = own.clone();
    let mut excl = own.clone();
    for i in (0..t.nodes.len()).rev() {
        if let Some(p) = t.nodes[i].parent {
            below[p as usize] += below[i];
            if t.nodes[i].region == SKIPPED_REGION {
                excl[p as usize] += own[i];
            }
        }
    }
    let mut top = 0.0;
    for (i, n) in t.nodes.iter_mut().enumerate() {
        if n.region == SKIPPED_REGION {
            continue;
        }
        let s = &mut n.stats;
        let incl = below[i].round() as u64;
        if n.parent.is_none() {
            top += incl.min(s.inclusive) as f64;
        }
        // Per visit the minimum and maximum lose at least their own probes.
        let per_visit = cost(n.region).round() as u64;
        s.inclusive = s.inclusive.saturating_sub(incl);
        s.exclusive = s.exclusive.saturating_sub(excl[i].round() as u64);
        s.min = s.min.saturating_sub(per_visit);
        s.max = s.max.saturating_sub(per_visit);
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use parallax_model::profile::{Node, Stats};

    #[test]
    fn inclusive_loses_the_probes_below() {
        let mut s0 = Stats::EMPTY;
        s0.add(1000, 600);
        let mut s1 = Stats::EMPTY;
        for _ in 0..10 {
            s1.add(60, 0);
        }
        let mut t = CallTree {
            thread: 0,
            nodes: vec![
                Node {
                    parent: None,
                    region: 1,
                    stats: s0,
                },
                Node {
                    parent: Some(0),
                    region: 2,
                    stats: s1,
                },
            ],
        };
        let top = compensate_tree(&mut t, &|_| 10.0, 0.0);
        assert_eq!(top, 110.0);
        assert_eq!(t.nodes[0].stats.inclusive, 890);
        assert_eq!(t.nodes[0].stats.exclusive, 390);
        assert_eq!(t.nodes[1].stats.inclusive, 500);
        assert_eq!(t.nodes[1].stats.min, 50);
    }

    #[test]
    fn calls_not_recorded_cost_their_parent() {
        let mut s0 = Stats::EMPTY;
        s0.add(10_000, 0);
        let mut s1 = Stats::EMPTY;
        s1.count = 1000;
        s1.min = 0;
        let mut t = CallTree {
            thread: 0,
            nodes: vec![
                Node {
                    parent: None,
                    region: 1,
                    stats: s0,
                },
                Node {
                    parent: Some(0),
                    region: SKIPPED_REGION,
                    stats: s1,
                },
            ],
        };
        // A visit's pair costs 10, a call not recorded 4.
        let top = compensate_tree(&mut t, &|_| 10.0, 4.0);
        assert_eq!(top, 4010.0);
        assert_eq!(t.nodes[0].stats.inclusive, 10_000 - 4010);
        assert_eq!(t.nodes[0].stats.exclusive, 10_000 - 4010);
        assert_eq!(t.nodes[1].stats.count, 1000);
        assert_eq!(t.nodes[1].stats.inclusive, 0);
    }
}
