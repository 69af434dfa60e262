//! From the locations' replay results to the report: findings through the
//! detection filters, global analyses (load balance at three levels,
//! frequency, serialized transfers), delay costs and the critical path.

use std::collections::{BTreeMap, HashMap};

use parallax_model::region::{Category, RegionKind};

use super::filters::{self, Config, Entry};
use super::hints;
use super::regions::{self, Table};
use super::waits::{add_part, LocResult, PathStats};
use super::{
    Balance, BlockBalance, Culprit, DelayCost, Detection, Finding, PathShare, Pattern,
    RegionBalance, Report, Where,
};
use crate::executor::Executor;
use parallax_view::names::LocationNames;
use parallax_view::trace::Loc;

const NS: f64 = 1e-9;

fn is_computation(k: RegionKind) -> bool {
    k.category() == Category::Computation && k != RegionKind::Mark
}

/// Names of a call path, outermost first.
fn path_names(table: &Table, paths: &[PathStats], mut p: u32) -> Vec<String> {
    let mut v = Vec::new();
    while p != 0 {
        let s = &paths[p as usize];
        v.push(table.name(s.region).to_string());
        p = s.parent;
    }
    v.reverse();
    v
}

struct Ctx<'a> {
    locs: &'a [Loc],
    /// Per location: whether it is its process's initial thread.
    main: &'a [bool],
    names: &'a LocationNames,
    table: &'a Table,
    cfg: &'a Config,
    wall_ns: f64,
}

impl Ctx<'_> {
    fn at(&self, i: u32) -> Where {
        self.locs
            .get(i as usize)
            .map_or(Where { rank: 0, thread: 0 }, |l| Where {
                rank: l.rank,
                thread: l.thread,
            })
    }

    /// How a location is named in findings and hints.
    fn label(&self, at: Where) -> String {
        self.names.label(at.rank, at.thread)
    }

    fn bar_ns(&self) -> f64 {
        (self.cfg.hotspot * self.wall_ns).max(self.cfg.min_severity_s / NS)
    }

    fn site(&self, region: u32) -> String {
        let name = self.table.name(region);
        match self
            .table
            .regions
            .get(region as usize)
            .and_then(|r| r.source.as_ref())
        {
            Some(src) => format!("{name} ({src})"),
            None => name.to_string(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finding(
        &self,
        pattern: Pattern,
        loc: u32,
        res: &LocResult,
        path: u32,
        ns: f64,
        instances: u64,
        culprits: &[(u32, f64)],
        detection: Option<Detection>,
    ) -> Finding {
        let region = res
            .paths
            .get(path as usize)
            .map_or(regions::OUTSIDE, |p| p.region);
        let mut cs: Vec<Culprit> = culprits
            .iter()
            .filter(|c| c.1 >= self.cfg.culprit_share * ns)
            .map(|&(l, t)| Culprit {
                at: self.at(l),
                severity_s: t * NS,
            })
            .collect();
        cs.sort_by(|a, b| b.severity_s.total_cmp(&a.severity_s).then(a.at.cmp(&b.at)));
        let first = cs.first().map(|c| self.label(c.at));
        Finding {
            pattern,
            severity_s: ns * NS,
            at: self.at(loc),
            region: self.table.name(region).to_string(),
            path: path_names(self.table, &res.paths, path),
            source: self
                .table
                .regions
                .get(region as usize)
                .and_then(|r| r.source.clone()),
            instances,
            culprits: cs,
            detection,
            hint: hints::hint(pattern, &self.site(region), first.as_deref()),
        }
    }
}

/// Builds the report from every location's results; `main` tells, per
/// location, whether it is its process's initial thread.
pub fn assemble(
    locs: &[Loc],
    main: &[bool],
    names: &LocationNames,
    table: &Table,
    results: Vec<LocResult>,
    cfg: &Config,
    _exec: Executor,
) -> Report {
    let first = results
        .iter()
        .filter_map(|r| r.first)
        .fold(f64::INFINITY, f64::min);
    let last = results
        .iter()
        .filter_map(|r| r.last)
        .fold(f64::NEG_INFINITY, f64::max);
    let wall_ns = if last >= first { last - first } else { 0.0 };
    let cx = Ctx {
        locs,
        main,
        names,
        table,
        cfg,
        wall_ns,
    };
    let mut rep = Report {
        wall_s: wall_ns * NS,
        ..Report::default()
    };
    let mut findings = Vec::new();
    let mut results = results;
    unpaired_conditions(&mut results);
    rep.uncontrollable_s += competing_rma(&mut results) * NS;
    for (li, res) in results.iter().enumerate() {
        let li = li as u32;
        rep.events += res.events;
        rep.unmatched += res.unmatched;
        rep.warnings.extend(res.warning.iter().cloned());
        let waited = wait_findings(&cx, li, res, &mut findings);
        frequency_findings(&cx, li, res, &waited, &mut findings);
        uncontrollable(&cx, res, &waited, &mut rep.uncontrollable_s);
        let span = match (res.first, res.last) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => 0.0,
        };
        rep.measured_s += span * NS;
        rep.balance.push(Balance {
            at: cx.at(li),
            measured_s: span * NS,
            computation_s: res.categories[Category::Computation as usize] * NS,
            communication_s: res.categories[Category::Communication as usize] * NS,
            synchronization_s: res.categories[Category::Synchronization as usize] * NS,
        });
        rep.locality_counts(res.rma);
    }
    imbalance(&cx, &results, &mut rep, &mut findings);
    delays(&cx, &results, &mut rep);
    critical(&cx, &results, &mut rep);
    blocks(&cx, &results, &mut rep);
    findings.sort_by(|a, b| {
        b.severity_s
            .total_cmp(&a.severity_s)
            .then(a.pattern.cmp(&b.pattern))
            .then(a.at.cmp(&b.at))
            .then(a.path.cmp(&b.path))
    });
    rep.findings = findings;
    rep
}

/// Location `li`'s wait states and other per-path patterns of its replay
/// worth a finding; returns the waiting of each call path.
fn wait_findings(
    cx: &Ctx,
    li: u32,
    res: &LocResult,
    findings: &mut Vec<Finding>,
) -> HashMap<u32, f64> {
    let (cfg, table) = (cx.cfg, cx.table);
    // Wait states and the per-path patterns of the replay.
    let mut waited: HashMap<u32, f64> = HashMap::new();
    let mut keys: Vec<_> = res.waits.keys().copied().collect();
    keys.sort();
    for (pattern, path) in keys {
        let agg = &res.waits[&(pattern, path)];
        if pattern.is_wait_state() {
            *waited.entry(path).or_insert(0.0) += agg.ns;
        }
        // A redundant barrier is worth a finding when it recurs.
        if (pattern == Pattern::RedundantBarrier && agg.instances < 10) || agg.ns < cx.bar_ns() {
            continue;
        }
        let mut culprits = agg.culprits.clone();
        culprits.sort_by_key(|c| c.0);
        let ps = &res.paths[path as usize];
        let detection = if pattern.is_wait_state() {
            let kind = table.kind(ps.region);
            let e = Entry {
                visits: ps.visits,
                total: ps.incl * NS,
                min: ps.min * NS,
                max: ps.max * NS,
            };
            let (method, flagged, expected) =
                filters::judge(cfg, kind.name(), cx.locs.len() as u32, &e);
            // A competing transfer's instances were each found half
            // again slower than the path's fastest, with a competitor
            // overlapping: the replay's own test. Two transfers sharing
            // a target equally lose at most half of their time, so the
            // share of the entry could never reach `wait_share`.
            let replay = agg.ns >= cfg.wait_share * ps.incl || pattern == Pattern::CompetingRma;
            let jitter = agg.ns * NS < cfg.min_instance_wait_s * agg.instances as f64
                || (agg.instances as f64)
                    < cfg.min_instance_share * ps.visits.saturating_sub(ps.idle) as f64;
            if (!flagged && !replay) || jitter {
                continue;
            }
            Some(Detection {
                method: if flagged { method } else { "replay" },
                mean_s: if ps.visits > 0 {
                    e.total / ps.visits as f64
                } else {
                    0.0
                },
                expected_s: expected,
            })
        } else {
            None
        };
        findings.push(cx.finding(
            pattern,
            li,
            res,
            path,
            agg.ns,
            agg.instances,
            &culprits,
            detection,
        ));
    }
    waited
}

/// Location `li`'s short, very frequent events and many small transfers
/// to one target.
fn frequency_findings(
    cx: &Ctx,
    li: u32,
    res: &LocResult,
    waited: &HashMap<u32, f64>,
    findings: &mut Vec<Finding>,
) {
    let (cfg, locs) = (cx.cfg, cx.locs);
    // Frequency: short, very frequent events, unless they are mostly
    // waiting that a wait state explains (a loop polling MPI_Test).
    let mut flagged_paths = Vec::new();
    for (p, s) in res.paths.iter().enumerate().skip(1) {
        let polled = waited.get(&(p as u32)).is_some_and(|&w| w >= 0.5 * s.incl);
        if s.visits >= cfg.frequent_count
            && !polled
            && s.incl * NS / (s.visits as f64) <= cfg.frequent_mean_s
            && s.incl >= cx.bar_ns()
        {
            flagged_paths.push(p as u32);
            findings.push(cx.finding(
                Pattern::FrequentSmallEvents,
                li,
                res,
                p as u32,
                s.incl,
                s.visits,
                &[],
                None,
            ));
        }
    }
    // Many small transfers to one target.
    let mut small: Vec<_> = res.small.iter().collect();
    small.sort_by_key(|e| *e.0);
    for (&target, &(count, ns, path)) in small {
        if count >= cfg.frequent_count && ns >= cx.bar_ns() && !flagged_paths.contains(&path) {
            let culprit = locs.iter().position(|l| l.rank == target && l.thread == 0);
            let cs: Vec<(u32, f64)> = culprit.map(|c| (c as u32, ns)).into_iter().collect();
            findings.push(cx.finding(
                Pattern::FrequentSmallEvents,
                li,
                res,
                path,
                ns,
                count,
                &cs,
                None,
            ));
        }
    }
}

/// Adds location `res`'s uncontrollable time to `total_s`.
fn uncontrollable(cx: &Ctx, res: &LocResult, waited: &HashMap<u32, f64>, total_s: &mut f64) {
    let table = cx.table;
    // What PPW calls uncontrollable: time in communication and
    // synchronization beyond the fastest visit that no wait explains.
    // A join waits for the joined thread's work, its cause by
    // construction.
    for (p, s) in res.paths.iter().enumerate().skip(1) {
        let cat = table.category(s.region);
        if s.visits > 0
            && matches!(cat, Category::Communication | Category::Synchronization)
            && table.kind(s.region) != RegionKind::ThreadJoin
        {
            let extra =
                s.incl - s.visits as f64 * s.min - waited.get(&(p as u32)).copied().unwrap_or(0.0);
            *total_s += extra.max(0.0) * NS;
        }
    }
}

impl Report {
    fn locality_counts(&mut self, rma: (u64, u64)) {
        if rma.0 + rma.1 == 0 {
            return;
        }
        // Kept as a running ratio over (local, total) in the two fields of
        // an f64 would lose counts; recompute from the sums instead.
        let (l, t) = self.rma_sums;
        self.rma_sums = (l + rma.0, t + rma.0 + rma.1);
        self.locality = Some(self.rma_sums.0 as f64 / self.rma_sums.1 as f64);
    }
}

/// Condition waits that pairing left without a post (one broadcast woke
/// several waiters) become waits on the condition's posters, in the
/// proportions the paired waits on the same condition found.
fn unpaired_conditions(results: &mut [LocResult]) {
    let mut posters: BTreeMap<u64, BTreeMap<u32, f64>> = BTreeMap::new();
    for r in results.iter() {
        let mut v: Vec<_> = r.cond_posters.iter().collect();
        v.sort_by_key(|e| *e.0);
        for (&(obj, loc), &ns) in v {
            *posters.entry(obj).or_default().entry(loc).or_insert(0.0) += ns;
        }
    }
    for r in results.iter_mut() {
        let mut v: Vec<_> = r.cond_unpaired.iter().map(|(k, v)| (*k, *v)).collect();
        v.sort_by_key(|e| e.0);
        for ((path, obj), (ns, n)) in v {
            if ns <= 0.0 {
                continue;
            }
            let agg = r.waits.entry((Pattern::ConditionWait, path)).or_default();
            agg.ns += ns;
            agg.instances += n;
            let Some(p) = posters.get(&obj) else {
                continue;
            };
            let total: f64 = p.values().sum();
            for (&loc, &w) in p {
                add_part(&mut agg.culprits, loc, ns * w / total);
            }
        }
    }
}

/// Slow one-sided transfers with competitors become Competing RMA waits:
/// their time beyond the call path's fastest, charged to the competitors
/// by overlap. Returns the excess of those without any (uncontrollable).
fn competing_rma(results: &mut [LocResult]) -> f64 {
    let mut alone = 0.0;
    for r in results.iter_mut() {
        let mut by_req: BTreeMap<u64, Vec<(u32, f64)>> = BTreeMap::new();
        for (&(q, loc), &ns) in &r.rma_competitors {
            by_req.entry(q).or_default().push((loc, ns));
        }
        for (q, &(_, start, end, path)) in r.rma_slow.iter().enumerate() {
            let min = r.paths.get(path as usize).map_or(0.0, |p| p.min);
            let excess = (end - start - min).max(0.0);
            let Some(cs) = by_req.get(&(q as u64)) else {
                alone += excess;
                continue;
            };
            if excess <= 0.0 {
                continue;
            }
            let total: f64 = cs.iter().map(|c| c.1).sum();
            let agg = r.waits.entry((Pattern::CompetingRma, path)).or_default();
            agg.ns += excess;
            agg.instances += 1;
            for &(loc, ns) in cs {
                add_part(&mut agg.culprits, loc, excess * ns / total);
            }
        }
    }
    alone
}

/// Peer groups: the initial threads of all processes (an MPI program's
/// ranks), and the other threads. A thread's number says nothing here:
/// the runtime numbers threads in the order they first record, and a
/// pool's worker often records before the main thread.
fn group(cx: &Ctx, li: usize) -> usize {
    usize::from(!cx.main.get(li).copied().unwrap_or(false))
}

/// By (peer group, region): (location, exclusive time, its heaviest path).
type PerRegion = BTreeMap<(usize, u32), Vec<(u32, f64, u32)>>;

/// By communicator: blocks, imbalance, (times slowest, location).
type Blocks = BTreeMap<u64, (u64, f64, Vec<(u64, u32)>)>;

/// Load balance per region (event level) and per location (high level).
///
/// A region's time is compared across the locations of one peer group
/// that ran it, never with locations that did not. A location's
/// computation is compared within its team: the locations of its peer
/// group that ran the region it computed most in (its dominant region),
/// or, when that is the time outside any region, those whose dominant
/// region is also outside. A pool's workers are thus compared with each
/// other, not with a thread that only wrote the result.
fn imbalance(cx: &Ctx, results: &[LocResult], rep: &mut Report, findings: &mut Vec<Finding>) {
    // Exclusive computation per (group, region, location), and each
    // location's dominant computation region (OUTSIDE included) with its
    // heaviest path.
    let mut per: PerRegion = BTreeMap::new();
    let mut dominant: Vec<(u32, u32)> = Vec::with_capacity(results.len());
    for (li, res) in results.iter().enumerate() {
        let mut by_region: BTreeMap<u32, (f64, u32, f64)> = BTreeMap::new();
        let outside = res.paths.first().map_or(0.0, |s| s.excl);
        for (p, s) in res.paths.iter().enumerate().skip(1) {
            if is_computation(cx.table.kind(s.region)) && s.excl > 0.0 {
                let e = by_region.entry(s.region).or_insert((0.0, p as u32, 0.0));
                e.0 += s.excl;
                if s.excl > e.2 {
                    e.1 = p as u32;
                    e.2 = s.excl;
                }
            }
        }
        let top = by_region
            .iter()
            .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(b.0.cmp(a.0)))
            .filter(|e| e.1 .0 > outside)
            .map_or((regions::OUTSIDE, 0), |(&r, e)| (r, e.1));
        dominant.push(top);
        let g = group(cx, li);
        for (r, (t, p, _)) in by_region {
            per.entry((g, r)).or_default().push((li as u32, t, p));
        }
    }
    let mut flagged: Vec<u32> = Vec::new();
    for ((_, region), v) in &per {
        if v.len() < 2 {
            continue;
        }
        let mean = v.iter().map(|e| e.1).sum::<f64>() / v.len() as f64;
        let &(ml, max, mp) = v
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .expect("two or more");
        rep.regions.push(RegionBalance {
            region: cx.table.name(*region).to_string(),
            locations: v.len(),
            max_s: max * NS,
            mean_s: mean * NS,
            max_at: cx.at(ml),
        });
        if max - mean >= cx.bar_ns() && max >= cx.cfg.imbalance_ratio * mean {
            flagged.push(ml);
            let res = &results[ml as usize];
            findings.push(cx.finding(
                Pattern::LoadImbalance,
                ml,
                res,
                mp,
                max - mean,
                1,
                &[(ml, max - mean)],
                None,
            ));
        }
    }
    rep.regions.sort_by(|a, b| {
        (b.max_s - b.mean_s)
            .total_cmp(&(a.max_s - a.mean_s))
            .then(a.region.cmp(&b.region))
    });
    // High level: computation per location within its team.
    let comp = |i: usize| results[i].categories[Category::Computation as usize];
    let teams: std::collections::BTreeSet<(usize, u32)> = dominant
        .iter()
        .enumerate()
        .map(|(li, d)| (group(cx, li), d.0))
        .collect();
    for &(g, region) in &teams {
        let ran = |i: usize| {
            if region == regions::OUTSIDE {
                dominant[i].0 == regions::OUTSIDE
            } else {
                per.get(&(g, region))
                    .is_some_and(|v| v.iter().any(|e| e.0 as usize == i))
            }
        };
        let team: Vec<usize> = (0..results.len())
            .filter(|&i| group(cx, i) == g && ran(i))
            .collect();
        if team.len() < 2 {
            continue;
        }
        let mean = team.iter().map(|&i| comp(i)).sum::<f64>() / team.len() as f64;
        let Some(&ml) = team
            .iter()
            .filter(|&&i| dominant[i].0 == region)
            .max_by(|&&a, &&b| comp(a).total_cmp(&comp(b)).then(b.cmp(&a)))
        else {
            continue;
        };
        let max = comp(ml);
        if max - mean >= cx.bar_ns()
            && max >= cx.cfg.imbalance_ratio * mean
            && !flagged.contains(&(ml as u32))
        {
            flagged.push(ml as u32);
            findings.push(cx.finding(
                Pattern::LoadImbalance,
                ml as u32,
                &results[ml],
                dominant[ml].1,
                max - mean,
                1,
                &[(ml as u32, max - mean)],
                None,
            ));
        }
    }
}

/// Delay costs: computation charged with the waiting it caused.
fn delays(cx: &Ctx, results: &[LocResult], rep: &mut Report) {
    let mut rows: BTreeMap<(Where, String), (f64, f64)> = BTreeMap::new();
    for res in results {
        // Sorted, so that sums over locations run in one order.
        let mut delay: Vec<_> = res.delay.iter().collect();
        delay.sort_by_key(|e| *e.0);
        for (&(l, g), &ns) in delay {
            let e = rows
                .entry((cx.at(l), cx.table.name(g).to_string()))
                .or_insert((0.0, 0.0));
            e.0 += ns;
        }
        let mut propagated: Vec<_> = res.propagated.iter().collect();
        propagated.sort_by_key(|e| *e.0);
        for (&l, &ns) in propagated {
            let e = rows
                .entry((cx.at(l), "*".to_string()))
                .or_insert((0.0, 0.0));
            e.1 += ns;
        }
    }
    rep.delays = rows
        .into_iter()
        .map(|((at, region), (d, p))| DelayCost {
            at,
            region,
            direct_s: d * NS,
            propagated_s: p * NS,
        })
        .collect();
    rep.delays.sort_by(|a, b| {
        (b.direct_s + b.propagated_s)
            .total_cmp(&(a.direct_s + a.propagated_s))
            .then(a.at.cmp(&b.at))
            .then(a.region.cmp(&b.region))
    });
}

/// The critical path ends at the location that ended last.
fn critical(cx: &Ctx, results: &[LocResult], rep: &mut Report) {
    let Some(end) = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.last.is_some())
        .max_by(|a, b| {
            a.1.last
                .unwrap_or(0.0)
                .total_cmp(&b.1.last.unwrap_or(0.0))
                .then(b.0.cmp(&a.0))
        })
    else {
        return;
    };
    let total: f64 = end.1.critical.values().sum();
    rep.critical_path_s = total * NS;
    let mut by_name: BTreeMap<String, f64> = BTreeMap::new();
    for (&g, &t) in &end.1.critical {
        *by_name.entry(cx.table.name(g).to_string()).or_insert(0.0) += t;
    }
    rep.critical_path = by_name
        .into_iter()
        .map(|(region, t)| PathShare {
            region,
            time_s: t * NS,
            share: if total > 0.0 { t / total } else { 0.0 },
        })
        .collect();
    rep.critical_path
        .sort_by(|a, b| b.time_s.total_cmp(&a.time_s).then(a.region.cmp(&b.region)));
}

/// Block-level balance per communicator.
fn blocks(cx: &Ctx, results: &[LocResult], rep: &mut Report) {
    let mut by: Blocks = BTreeMap::new();
    // Where each communicator or barrier was first met: location, call
    // path, members.
    let mut sites: BTreeMap<u64, (usize, u32, u64)> = BTreeMap::new();
    for (li, res) in results.iter().enumerate() {
        for (&comm, &(n, imb, worst)) in &res.blocks {
            let e = by.entry(comm).or_insert((0, 0.0, Vec::new()));
            e.0 = e.0.max(n);
            e.1 += imb;
            e.2.push((worst, li as u32));
        }
        for (&comm, &(path, members)) in &res.coll_sites {
            sites.entry(comm).or_insert((li, path, members));
        }
    }
    let names = object_names(cx, results, &sites);
    rep.blocks = by
        .into_iter()
        .map(|(comm, (blocks, imb, worst))| BlockBalance {
            comm,
            name: names
                .get(&comm)
                .cloned()
                .unwrap_or_else(|| format!("communicator {comm:#x}")),
            blocks,
            imbalance_s: imb * NS,
            worst: worst
                .iter()
                .filter(|w| w.0 > 0)
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                .map(|w| cx.at(w.1)),
        })
        .collect();
    rep.blocks.sort_by(|a, b| {
        b.imbalance_s
            .total_cmp(&a.imbalance_s)
            .then(a.comm.cmp(&b.comm))
    });
}

/// Readable names of communicators and barriers: `MPI_COMM_WORLD (4
/// ranks)`, `MPI_COMM_SELF (rank 2)`, `communicator #1 (2 ranks)` for the
/// others in the order of their ids, and `barrier #1 (Barrier::wait at
/// main.rs:12, 4 threads)` for thread barriers, named after where they
/// were first waited at.
fn object_names(
    cx: &Ctx,
    results: &[LocResult],
    sites: &BTreeMap<u64, (usize, u32, u64)>,
) -> BTreeMap<u64, String> {
    let mut out = BTreeMap::new();
    let (mut comms, mut barriers) = (0, 0);
    for (&comm, &(li, path, members)) in sites {
        let paths = &results[li].paths;
        let region = paths
            .get(path as usize)
            .map_or(regions::OUTSIDE, |p| p.region);
        let name = cx.table.name(region);
        let parallel_model = ["MPI_", "shmem_", "pshmem_"]
            .iter()
            .any(|p| name.starts_with(p));
        let label = if parallel_model {
            if comm == 0 && name.starts_with("MPI_") {
                format!("MPI_COMM_WORLD ({members} ranks)")
            } else if comm >> 63 == 1 && name.starts_with("MPI_") {
                format!("MPI_COMM_SELF (rank {})", comm & 0xffff_ffff)
            } else {
                comms += 1;
                format!("communicator #{comms} ({members} ranks)")
            }
        } else {
            barriers += 1;
            let site = match cx
                .table
                .regions
                .get(region as usize)
                .and_then(|r| r.source.as_ref())
            {
                Some(src) => format!("{name} at {src}"),
                None => {
                    // A call without a source line (an interposed call) is
                    // placed by its caller.
                    let parent = paths.get(path as usize).map_or(0, |p| p.parent);
                    match paths.get(parent as usize).filter(|_| parent != 0) {
                        Some(p) => format!("{name} in {}", cx.table.name(p.region)),
                        None => name.to_string(),
                    }
                }
            };
            format!("barrier #{barriers} ({site}, {members} threads)")
        };
        out.insert(comm, label);
    }
    out
}
