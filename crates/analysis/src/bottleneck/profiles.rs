//! The analyses a run without a trace still allows: load balance per
//! location and per region, and the load-imbalance findings, from the
//! call-path profiles alone, and frequent short calls. Wait states, their
//! culprits, delay costs and the critical path need the events' order and
//! are left out.

use parallax_model::experiment::Experiment;
use parallax_model::region::Category;

use super::global;
use super::regions::Table;
use super::waits::{LocResult, PathStats};
use super::{Config, Report};
use crate::executor::Executor;
use parallax_view::names::LocationNames;
use parallax_view::profile::{ExperimentProfile, Times};
use parallax_view::trace::Loc;

/// What is analysed from profiles; the other analyses need a trace.
pub const FROM_PROFILES: &[&str] = &[
    "load balance per location and per region",
    "load_imbalance",
    "frequent_small_events (calls)",
];

/// What needs a trace.
pub const NEED_TRACE: &[&str] = &[
    "wait states and their culprits",
    "delay costs",
    "critical path",
    "uncontrollable waiting",
    "frequent_small_events (transfers)",
    "serialized_transfers",
    "redundant_barrier",
    "block balance",
];

/// The profile-based part of the analysis of `exp`.
pub fn analyze(exp: &Experiment, prof: &ExperimentProfile, cfg: &Config) -> Report {
    let table = Table::new(exp);
    let mut locs = Vec::new();
    let mut main = Vec::new();
    let mut results = Vec::new();
    for l in &prof.locations {
        let loc = Loc {
            process: l.process,
            rank: l.rank,
            thread: l.thread,
            name: l.name.clone(),
            events: None,
            spill: None,
            bytes: 0,
            clock: l.clock,
            summary: None,
            rewritten_from: None,
        };
        let initial = super::is_initial_thread(exp, &loc);
        let mut res = LocResult::default();
        res.paths.push(PathStats {
            parent: 0,
            region: super::regions::OUTSIDE,
            visits: 0,
            idle: 0,
            incl: 0.0,
            excl: 0.0,
            min: 0.0,
            max: 0.0,
        });
        let mut top = 0.0;
        for n in &l.tree.nodes {
            let t = Times::from_stats(&n.stats, &l.clock);
            let g = table.global(l.process, n.region);
            res.paths.push(PathStats {
                parent: n.parent.map_or(0, |q| q + 1),
                region: g,
                visits: t.count,
                idle: 0,
                incl: t.inclusive,
                excl: t.exclusive,
                min: t.min,
                max: t.max,
            });
            res.categories[table.category(g) as usize] += t.exclusive;
            if n.parent.is_none() {
                top += t.inclusive;
            }
        }
        // The time outside recorded regions is known where the location's
        // measured time is (a trace, or its process's start and end).
        let outside = l.outside_ns();
        res.paths[0].excl = outside;
        res.categories[Category::Computation as usize] += outside;
        res.first = Some(0.0);
        res.last = Some(l.measured_ns.unwrap_or(top).max(top));
        locs.push(loc);
        main.push(initial);
        results.push(res);
    }
    let names = LocationNames::new(exp);
    let mut rep = global::assemble(
        &locs,
        &main,
        &names,
        &table,
        results,
        cfg,
        Executor::Sequential,
    );
    rep.names = names;
    rep.from_profiles = true;
    // Time beyond each call path's fastest visit is not waiting without
    // a cause when no wait state could be looked for.
    rep.uncontrollable_s = 0.0;
    rep.warnings.extend(prof.warnings.iter().cloned());
    rep
}
