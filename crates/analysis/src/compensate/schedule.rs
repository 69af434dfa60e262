//! Liberal re-scheduling of self-scheduled loops (thesis §5.1): the
//! iterations handed out again, first come first served, in approximated
//! time.
//!
//! A self-scheduled loop hands each iteration to whichever thread asks
//! first. Probes change who asks first, so the threads of a measured run
//! can share the iterations quite differently from a run without probes,
//! and the conservative approximation keeps the measured assignment. Here
//! each loop runs again in simulation: in index order, every iteration's
//! approximated work (from a first, conservative replay) goes to the
//! thread that is free first, ties round robin, and an await inside an
//! iteration completes after the simulated advance it waits for. The
//! measured trace is then rewritten with every iteration's events on the
//! thread the simulation chose, laid out one after the other with their
//! measured gaps (an await after the advance it waits for, at the least
//! costs seen), and replayed again: the second replay removes the probes
//! from the new arrangement with the usual rules.
//!
//! A loop is re-scheduled only if, on every thread that took part, its
//! iteration events form one run that ends with the event that found no
//! iteration left, its iterations have distinct numbers in the order they
//! were handed out (chunks: their first iteration), each iteration's
//! regions are balanced, and its only synchronization is advance and
//! await. Other loops keep their measured assignment, with a warning.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use parallax_model::clock::ClockMap;
use parallax_model::event::{Event, EventKind, NO_ITERATION};
use parallax_model::experiment::{self, EventWriter};
use parallax_model::Error;

use super::{Costs, Crowded};
use crate::pairing::Pairing;
use parallax_view::deps::Object;
use parallax_view::trace::{self, Loc, Stream};

/// Index of measured and of approximated times in pairs of them.
const M: usize = 0;
const A: usize = 1;

/// Directory of the rewritten event files, inside the output.
pub(super) const WORK_DIR: &str = ".rescheduled";

/// An advance or await inside an iteration.
#[derive(Clone, Copy, Debug)]
struct Item {
    wait: bool,
    var: u64,
    index: u64,
    /// Its event's number on the location.
    ord: u64,
    /// Time from the previous anchor (the iteration's start or the previous
    /// item) to the advance, or to the event before the await (where the
    /// wait began); measured and approximated, ns.
    pre: [f64; 2],
    /// The probe of the event before an await: 0 enter, 1 leave, 2 other.
    probe: u8,
}

/// One iteration as measured.
#[derive(Debug)]
struct Unit {
    index: u64,
    /// Its location (index in the locations) and the numbers there of its
    /// iteration event and of the next iteration event.
    loc: usize,
    start: u64,
    end: u64,
    items: Vec<Item>,
    /// Time from the last anchor to the next iteration event.
    tail: [f64; 2],
}

/// A location's part in a loop: its first iteration event and the one
/// that found no iteration left.
#[derive(Clone, Copy, Debug)]
struct Part {
    first: u64,
    first_t: [f64; 2],
    done: u64,
    done_m: f64,
}

#[derive(Debug, Default)]
struct Loop {
    units: Vec<Unit>,
    parts: BTreeMap<usize, Part>,
    /// Why it cannot be re-scheduled.
    bad: Option<String>,
}

impl Loop {
    fn fail(&mut self, why: impl Into<String>) {
        self.bad.get_or_insert_with(|| why.into());
    }
}

/// A loop whose iterations were handed out again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rescheduled {
    /// Rank of its process.
    pub rank: u32,
    /// The loop's id.
    pub loop_id: u64,
    /// Its iterations.
    pub iterations: u64,
    /// Per thread: iterations it ran in the measured run and in the
    /// re-simulation.
    pub threads: Vec<(u32, u64, u64)>,
}

/// What re-scheduling made: the locations to replay (rewritten ones in
/// place of the measured), the loops handed out again and the loops left
/// as measured.
pub(super) struct Plan {
    pub locs: Vec<Loc>,
    pub loops: Vec<Rescheduled>,
    pub warnings: Vec<String>,
}

/// Plans the re-scheduling of the self-scheduled loops in `locs`, whose
/// conservative approximation is in `out`; writes the rewritten event
/// files under `out`/[`WORK_DIR`]. `None` if the trace has no such loop.
/// Loops of `crowded` processes keep their assignment: the re-simulation
/// gives every thread a core of its own.
pub(super) fn plan(
    locs: &[Loc],
    out: &Path,
    pairing: &Pairing,
    costs: &[Costs],
    crowded: &[Option<Crowded>],
) -> Result<Option<Plan>, Error> {
    let mut loops: BTreeMap<u64, Loop> = BTreeMap::new();
    for (li, loc) in locs.iter().enumerate() {
        if has_iterations(loc)? {
            scan(li, loc, &approximated(out, loc), &mut loops)?;
        }
    }
    if loops.is_empty() {
        return Ok(None);
    }
    let inputs = Inputs {
        locs,
        pairing,
        costs,
        crowded,
    };
    // Loops left as measured, by rank and reason.
    let mut kept: BTreeMap<(u32, String), Vec<u64>> = BTreeMap::new();
    let mut report = Vec::new();
    let mut arrangement = Arrangement::default();
    for id in in_order_of_start(&loops) {
        let lp = loops.get_mut(&id).expect("listed");
        check(lp, locs);
        let rank = lp.parts.keys().next().map_or(0, |&l| locs[l].rank);
        let iterations = lp.units.len() as u64;
        match reschedule(lp, &inputs, &mut arrangement) {
            Ok(threads) => report.push(Rescheduled {
                rank,
                loop_id: id,
                iterations,
                threads,
            }),
            Err(why) => kept.entry((rank, why)).or_default().push(id),
        }
    }
    let warnings = kept_warnings(kept);
    let locs = if report.is_empty() {
        locs.to_vec()
    } else {
        rewrite_all(locs, out, &arrangement.spans)?
    };
    Ok(Some(Plan {
        locs,
        loops: report,
        warnings,
    }))
}

/// What re-scheduling a loop needs besides the loop.
struct Inputs<'a> {
    locs: &'a [Loc],
    pairing: &'a Pairing,
    costs: &'a [Costs],
    crowded: &'a [Option<Crowded>],
}

/// The loops re-scheduled so far, per location.
#[derive(Default)]
struct Arrangement {
    /// The loops it re-runs, in the order they start there.
    spans: BTreeMap<usize, Vec<Span>>,
    /// How much later than measured its events now come, ns.
    shift: HashMap<usize, f64>,
}

impl Arrangement {
    /// When each location of `lp` is free to take its first iteration, in
    /// the times of `space`: measured times move with the loops before.
    fn ready(&self, lp: &Loop, space: usize) -> Vec<(usize, f64)> {
        lp.parts
            .iter()
            .map(|(&l, p)| {
                let s = if space == M {
                    self.shift.get(&l).copied().unwrap_or(0.0)
                } else {
                    0.0
                };
                (l, p.first_t[space] + s)
            })
            .collect()
    }
}

/// The loops' ids in the order they start (measured), ids breaking ties;
/// a loop no location left has no start.
fn in_order_of_start(loops: &BTreeMap<u64, Loop>) -> Vec<u64> {
    let mut order: Vec<(f64, u64)> = loops
        .iter()
        .filter_map(|(&id, lp)| {
            let t = lp.parts.values().map(|p| p.first_t[M]).reduce(f64::min)?;
            Some((t, id))
        })
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order.into_iter().map(|(_, id)| id).collect()
}

/// Hands `lp`'s iterations out again and places them in `arrangement`;
/// returns, per thread, its iterations before and after, or why the loop
/// keeps its measured assignment.
fn reschedule(
    lp: &mut Loop,
    inputs: &Inputs,
    arrangement: &mut Arrangement,
) -> Result<Vec<(u32, u64, u64)>, String> {
    if let Some(why) = &lp.bad {
        return Err(why.clone());
    }
    let locs = inputs.locs;
    let process = locs[*lp.parts.keys().next().expect("checked")].process;
    if let Some(c) = inputs.crowded.get(process).copied().flatten() {
        return Err(format!(
            "up to {} threads at once on {} cores: re-simulating the loop would give each \
             thread a core",
            c.threads, c.cpus
        ));
    }
    let c = AwaitCosts::new(inputs.pairing, &inputs.costs[process]);
    // The assignment comes from approximated times; the measured times of
    // the new arrangement follow it.
    let chosen = simulate(lp, &arrangement.ready(lp, A), A, None, &c)?.assign;
    let mut laid = simulate(lp, &arrangement.ready(lp, M), M, Some(&chosen), &c)?;
    let mut threads = Vec::new();
    for (&l, p) in &lp.parts {
        let before = lp.units.iter().filter(|u| u.loc == l).count() as u64;
        let after = chosen.iter().filter(|&&c| c == l).count() as u64;
        threads.push((locs[l].thread, before, after));
        let end = laid.end[&l];
        arrangement.shift.insert(l, end - p.done_m);
        arrangement.spans.entry(l).or_default().push(Span {
            first: p.first,
            done: p.done,
            done_new: end,
            units: Vec::new(),
        });
    }
    for (k, unit) in std::mem::take(&mut lp.units).into_iter().enumerate() {
        let span = arrangement
            .spans
            .get_mut(&chosen[k])
            .and_then(|v| v.last_mut())
            .expect("every chosen location has a part");
        span.units.push(Placed {
            unit,
            start_new: laid.start[k],
            waits_new: std::mem::take(&mut laid.waits[k]),
        });
    }
    Ok(threads)
}

/// One warning per rank and reason for the loops left as measured.
fn kept_warnings(kept: BTreeMap<(u32, String), Vec<u64>>) -> Vec<String> {
    kept.into_iter()
        .map(|((rank, why), ids)| {
            let which = match &ids[..] {
                [id] => format!("self-scheduled loop {id}"),
                [first, .., last] => {
                    format!("{} self-scheduled loops ({first} to {last})", ids.len())
                }
                [] => unreachable!("a loop was kept"),
            };
            format!("rank {rank}: {which}: iterations left where they ran ({why})")
        })
        .collect()
}

/// Rewrites the event files of the locations with `spans` under
/// `out`/[`WORK_DIR`]; returns the locations to replay.
fn rewrite_all(
    locs: &[Loc],
    out: &Path,
    spans: &BTreeMap<usize, Vec<Span>>,
) -> Result<Vec<Loc>, Error> {
    let dir = out.join(WORK_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut new_locs = locs.to_vec();
    for (&l, spans) in spans {
        let path = dir.join(format!(
            "{}-{}",
            experiment::rank_dir(locs[l].rank),
            experiment::events_file(locs[l].thread)
        ));
        rewrite(locs, l, spans, &path)?;
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        new_locs[l] = Loc {
            events: Some(path),
            spill: None,
            bytes,
            summary: None,
            rewritten_from: spans.first().map(|s| s.first),
            ..locs[l].clone()
        };
    }
    Ok(new_locs)
}

/// Whether `loc` recorded an iteration of a self-scheduled loop.
fn has_iterations(loc: &Loc) -> Result<bool, Error> {
    let mut any = false;
    trace::walk_others(loc, |k, _, _| {
        any |= matches!(k, EventKind::Iteration { .. });
    })?;
    Ok(any)
}

/// The approximated events of `loc` in the output `out` (ticks are
/// nanoseconds).
fn approximated(out: &Path, loc: &Loc) -> Loc {
    Loc {
        events: Some(
            out.join(experiment::rank_dir(loc.rank))
                .join(experiment::events_file(loc.thread)),
        ),
        spill: None,
        clock: ClockMap::IDENTITY,
        summary: None,
        ..loc.clone()
    }
}

/// The loop a location is inside, and its iteration under way.
struct Open {
    id: u64,
    first: u64,
    first_t: [f64; 2],
    unit: Option<Unit>,
    depth: i64,
    anchor: [f64; 2],
}

/// The event before the current one: its times and its probe (0 enter,
/// 1 leave, 2 other).
#[derive(Clone, Copy)]
struct Before {
    t: [f64; 2],
    probe: u8,
}

/// Reads location `li`'s measured events and their approximated times in
/// lockstep and adds its iterations to `loops`.
fn scan(li: usize, loc: &Loc, approx: &Loc, loops: &mut BTreeMap<u64, Loop>) -> Result<(), Error> {
    let mut m = Stream::open(loc)?;
    let mut a = Stream::open(approx)?;
    let mut s = Scan {
        li,
        loops,
        open: None,
        left: HashSet::new(),
        before: None,
        ord: 0,
    };
    while let Some(em) = m.peek() {
        let Some(ea) = a.peek() else {
            break;
        };
        if std::mem::discriminant(&em.kind) != std::mem::discriminant(&ea.kind) {
            break;
        }
        let t = [loc.clock.ns(em.time), ea.time as f64];
        match em.kind {
            EventKind::Iteration { loop_id, index } => s.iteration(loop_id, index, t),
            kind => s.inside(kind, t),
        }
        let probe = match em.kind {
            EventKind::Enter { .. } => 0,
            EventKind::Leave { .. } => 1,
            _ => 2,
        };
        s.before = Some(Before { t, probe });
        s.ord += 1;
        m.advance();
        a.advance();
    }
    if let Some(o) = s.open.take() {
        s.fail(o.id, "a thread's trace ends inside it");
    }
    Ok(())
}

/// One location's scan: the loops found so far and where it is in them.
struct Scan<'s> {
    /// The location's index.
    li: usize,
    loops: &'s mut BTreeMap<u64, Loop>,
    open: Option<Open>,
    /// Loops the location has left.
    left: HashSet<u64>,
    before: Option<Before>,
    /// The current event's number on the location.
    ord: u64,
}

impl Scan<'_> {
    fn fail(&mut self, id: u64, why: impl Into<String>) {
        self.loops.entry(id).or_default().fail(why);
    }

    /// An iteration event of `loop_id` at times `t`: it ends the iteration
    /// under way and starts iteration `index` or, if none was left, ends
    /// the location's part in the loop.
    fn iteration(&mut self, loop_id: u64, index: u64, t: [f64; 2]) {
        let Some(mut o) = self.enter(loop_id, t) else {
            return;
        };
        let ord = self.ord;
        let lp = self.loops.entry(loop_id).or_default();
        if let Some(mut u) = o.unit.take() {
            if o.depth != 0 {
                lp.fail("an iteration leaves regions open");
            }
            u.end = ord;
            u.tail = [t[M] - o.anchor[M], t[A] - o.anchor[A]];
            lp.units.push(u);
        }
        if index == NO_ITERATION {
            lp.parts.insert(
                self.li,
                Part {
                    first: o.first,
                    first_t: o.first_t,
                    done: ord,
                    done_m: t[M],
                },
            );
            self.left.insert(loop_id);
        } else {
            o.unit = Some(Unit {
                index,
                loc: self.li,
                start: ord,
                end: ord,
                items: Vec::new(),
                tail: [0.0; 2],
            });
            o.anchor = t;
            o.depth = 0;
            self.open = Some(o);
        }
    }

    /// The loop an iteration event of `loop_id` at `t` belongs to: the
    /// open one, or a new one when none is open; `None` (both loops
    /// failing) when another loop is open.
    fn enter(&mut self, loop_id: u64, t: [f64; 2]) -> Option<Open> {
        match self.open.take() {
            Some(o) if o.id == loop_id => Some(o),
            Some(o) => {
                let why = "its iterations and another loop's interleave on one thread";
                self.fail(o.id, why);
                self.fail(loop_id, why);
                None
            }
            None => {
                if self.left.contains(&loop_id) {
                    self.fail(loop_id, "a thread took part in it twice");
                }
                Some(Open {
                    id: loop_id,
                    first: self.ord,
                    first_t: t,
                    unit: None,
                    depth: 0,
                    anchor: t,
                })
            }
        }
    }

    /// An event other than an iteration event at times `t`: inside an
    /// iteration, regions must balance and the only synchronization be
    /// advances and awaits, which become the iteration's items.
    fn inside(&mut self, kind: EventKind, t: [f64; 2]) {
        let Some(o) = self.open.as_mut() else {
            return;
        };
        let u = o.unit.as_mut().expect("an open loop has an iteration");
        let why = match kind {
            EventKind::Enter { .. } => {
                o.depth += 1;
                return;
            }
            EventKind::Leave { .. } => {
                o.depth -= 1;
                if o.depth >= 0 {
                    return;
                }
                "an iteration leaves a region it did not enter".to_string()
            }
            EventKind::Advance { var, index } | EventKind::AwaitDone { var, index } => {
                let wait = matches!(kind, EventKind::AwaitDone { .. });
                // An await's wait began at the event before it.
                let from = match self.before {
                    Some(b) if wait => b,
                    _ => Before { t, probe: 2 },
                };
                u.items.push(Item {
                    wait,
                    var,
                    index,
                    ord: self.ord,
                    pre: [from.t[M] - o.anchor[M], from.t[A] - o.anchor[A]],
                    probe: from.probe,
                });
                o.anchor = t;
                return;
            }
            EventKind::FlushBegin
            | EventKind::FlushEnd
            | EventKind::Metric { .. }
            | EventKind::Mark { .. } => return,
            other => format!("its iterations hold a {} event", other.name()),
        };
        let id = o.id;
        self.fail(id, why);
    }
}

/// Marks `lp` bad unless its iterations have distinct numbers (handed out
/// in their order: 0, 1, 2, ... or, for chunks, each chunk's first
/// iteration), each ran on a location that left the loop, all in one
/// process.
fn check(lp: &mut Loop, locs: &[Loc]) {
    lp.units.sort_by_key(|u| u.index);
    if lp.units.windows(2).any(|w| w[0].index == w[1].index) {
        lp.fail("two of its iterations have the same number");
    }
    if lp.units.iter().any(|u| !lp.parts.contains_key(&u.loc)) {
        lp.fail("a thread that ran iterations did not leave it");
    }
    let mut processes = lp.parts.keys().map(|&l| locs[l].process);
    if let Some(p) = processes.next() {
        if processes.any(|q| q != p) {
            lp.fail("its threads belong to different processes");
        }
    } else {
        lp.fail("no thread left it");
    }
}

/// The least costs of an await, measured and approximated: its own cost
/// from the start of the wait (by the probe before it: enter, leave,
/// other) and the delay after the advance it waited for.
struct AwaitCosts {
    own: [[f64; 3]; 2],
    delay: [f64; 2],
}

impl AwaitCosts {
    fn new(p: &Pairing, c: &Costs) -> AwaitCosts {
        let k = Object::SyncVar as usize;
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        let own_m = p.learned.own[k].map(finite);
        let probes = [c.enter_ns, c.leave_ns, c.event_ns];
        let delay_m = finite(p.learned.latency[k]);
        AwaitCosts {
            own: [
                own_m,
                std::array::from_fn(|i| (own_m[i] - probes[i]).max(0.0)),
            ],
            delay: [delay_m, (delay_m - c.event_ns).max(0.0)],
        }
    }
}

/// A loop run in simulation: the location of each iteration, when it
/// started and when each of its awaits completed, and when each location
/// left the loop.
struct Layout {
    assign: Vec<usize>,
    start: Vec<f64>,
    waits: Vec<Vec<f64>>,
    end: HashMap<usize, f64>,
}

/// Runs `lp`'s iterations in index order on its locations, which are free
/// from `ready` on, with the times of `space`: each on the location
/// `assign` gives, or (`None`) on the one free first, ties going round
/// robin.
fn simulate(
    lp: &Loop,
    ready: &[(usize, f64)],
    space: usize,
    assign: Option<&[usize]>,
    c: &AwaitCosts,
) -> Result<Layout, String> {
    let mut free = ready.to_vec();
    let slot_of: HashMap<usize, usize> = free.iter().enumerate().map(|(s, f)| (f.0, s)).collect();
    let mut last = free.len() - 1;
    // Per variable: the time of its advance to each index.
    let mut advanced: HashMap<u64, BTreeMap<u64, f64>> = HashMap::new();
    let mut out = Layout {
        assign: Vec::with_capacity(lp.units.len()),
        start: Vec::with_capacity(lp.units.len()),
        waits: Vec::with_capacity(lp.units.len()),
        end: HashMap::new(),
    };
    for (k, u) in lp.units.iter().enumerate() {
        let slot = match assign {
            Some(a) => slot_of[&a[k]],
            None => {
                let n = free.len();
                let mut best = (last + 1) % n;
                for j in 2..=n {
                    let s = (last + j) % n;
                    if free[s].1 < free[best].1 {
                        best = s;
                    }
                }
                best
            }
        };
        last = slot;
        let mut t = free[slot].1;
        out.assign.push(free[slot].0);
        out.start.push(t);
        let mut waits = Vec::new();
        for it in &u.items {
            if it.wait {
                let began = t + it.pre[space];
                let posted = advanced
                    .get(&it.var)
                    .and_then(|m| m.range(it.index..).next())
                    .map(|(_, &t)| t)
                    .ok_or("an await waits for an advance outside the loop's earlier iterations")?;
                t = (began + c.own[space][it.probe as usize]).max(posted + c.delay[space]);
                waits.push(t);
            } else {
                t += it.pre[space];
                let at = advanced
                    .entry(it.var)
                    .or_default()
                    .entry(it.index)
                    .or_insert(t);
                *at = at.min(t);
            }
        }
        out.waits.push(waits);
        free[slot].1 = t + u.tail[space];
    }
    out.end = free.into_iter().collect();
    Ok(out)
}

/// An iteration placed on a location: its measured events, the new
/// measured time of its iteration event and of each of its awaits.
struct Placed {
    unit: Unit,
    start_new: f64,
    waits_new: Vec<f64>,
}

/// A location's part in a re-scheduled loop: the numbers of its first
/// iteration event and of the one that found none left, that one's new
/// measured time, and the iterations it now runs.
struct Span {
    first: u64,
    done: u64,
    done_new: f64,
    units: Vec<Placed>,
}

/// Writes location `l`'s events with `spans` in place of its measured
/// part in each re-scheduled loop into `path`; later events move with the
/// location's new end of the loop.
fn rewrite(locs: &[Loc], l: usize, spans: &[Span], path: &Path) -> Result<(), Error> {
    let loc = &locs[l];
    let mut own = Stream::open(loc)?;
    let mut w = EventWriter::create(path, loc.rank, loc.thread, 1 << 16)?;
    let mut sources: HashMap<usize, (Stream, u64)> = HashMap::new();
    let mut last = 0u64;
    let mut push = |w: &mut EventWriter, time: u64, kind: EventKind| {
        last = last.max(time);
        w.push(&Event { time: last, kind })
    };
    // Ticks added to the measured times of the events being copied.
    let mut shift = 0u64;
    let mut spans = spans.iter().peekable();
    let mut ord = 0u64;
    while let Some(e) = own.peek() {
        let Some(span) = spans.next_if(|s| s.first == ord) else {
            push(&mut w, e.time.wrapping_add(shift), e.kind)?;
            own.advance();
            ord += 1;
            continue;
        };
        for p in &span.units {
            let u = &p.unit;
            let (src, at) = match sources.entry(u.loc) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert((Stream::open(&locs[u.loc])?, 0))
                }
            };
            while *at < u.start && src.peek().is_some() {
                src.advance();
                *at += 1;
            }
            let clock = &locs[u.loc].clock;
            let mut base = 0u64;
            let mut waits = u
                .items
                .iter()
                .filter(|i| i.wait)
                .map(|i| i.ord)
                .zip(&p.waits_new)
                .peekable();
            while *at < u.end {
                let Some(e) = src.peek() else {
                    break;
                };
                // The iteration event and each await have a new time; the
                // events after one keep their measured gaps to it.
                let placed = if *at == u.start {
                    Some(&p.start_new)
                } else {
                    waits.next_if(|w| w.0 == *at).map(|w| w.1)
                };
                if let Some(&ns) = placed {
                    base = clock.tick(ns).wrapping_sub(e.time);
                }
                let time = e.time.wrapping_add(base);
                push(&mut w, time, e.kind)?;
                src.advance();
                *at += 1;
            }
        }
        // The location's own iterations went elsewhere; it leaves the
        // loop when its last new iteration ends.
        while ord < span.done && own.peek().is_some() {
            own.advance();
            ord += 1;
        }
        if let Some(e) = own.peek() {
            let t = loc.clock.tick(span.done_new);
            shift = t.wrapping_sub(e.time);
            push(&mut w, t, e.kind)?;
            own.advance();
            ord += 1;
        }
    }
    w.finish()?;
    Ok(())
}
