//! What the page shows of one location's trace, from one pass over its
//! events, in memory that does not grow with their number: levels of
//! detail ([`bins`](super::bins)), the longest visits, single visits and
//! message ends up to a quota (the *detail*: every visit that starts
//! before the first one that did not fit), busy time for the concurrency
//! profile, bytes sent per rank, and the longest visit of the regions that
//! findings name.
//!
//! The pass also counts the visits and message ends per slice of the run,
//! so that when a location's quota ran out early a second pass
//! ([`detail`]) can take the single visits of all locations up to the
//! same time, as many as the page holds.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use parallax_model::evcodec;
use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use parallax_view::deps::{FlowEnd, Flows};
use parallax_view::trace::{self, Loc, Timebase};

use super::bins::{Busy, Counts, Dominant, Slices};

/// Open regions the timeline follows at most, as the runtime's profile
/// does by default (`PARALLAX_MAX_DEPTH`); deeper visits are counted but
/// not shown.
pub const MAX_DEPTH: usize = 1024;

/// Message channels (communicator, sender, receiver, tag) followed at most
/// to pair messages into arrows; the detail ends where a location has more.
const MAX_CHANNELS: usize = 1 << 16;

/// One region visit, in ns since the start of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Visit {
    /// Enter.
    pub start: u64,
    /// Leave.
    pub end: u64,
    /// Index in the report's region table.
    pub region: u32,
    /// Nesting depth (0 at the top).
    pub depth: u32,
}

/// One end of an arrow: (id, is start, time, bytes, kind 0 message / 1
/// thread).
pub type Flow = (u64, bool, u64, u64, u8);

/// What every location's pass keeps, fixed before the passes start.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The run's length, ns: the levels' slices divide `[0, span)`.
    pub span: u64,
    /// Slices per level of detail.
    pub levels: Vec<usize>,
    /// Slices of busy time.
    pub busy_bins: usize,
    /// Visits at least this long are long.
    pub long_min: u64,
    /// Long visits kept.
    pub long_max: usize,
    /// Single visits kept.
    pub visits: usize,
    /// Arrow ends kept.
    pub flows: usize,
    /// Busy-state changes kept for the exact concurrency profile.
    pub transitions: usize,
    /// Only the detail is wanted (the second pass): no summaries, and the
    /// reading stops once the window is over and its visits have ended.
    pub detail_only: bool,
    /// The detail is taken from `[window.0, window.1)`.
    pub window: (u64, u64),
    /// Ranks of the experiment: sends to others are not in the matrix.
    pub ranks: u32,
}

/// The regions (report indices) whose longest visit a location's findings
/// need; `any`: its longest visit of any region.
#[derive(Clone, Debug, Default)]
pub struct Wanted {
    /// Regions.
    pub regions: HashSet<u32>,
    /// Any region.
    pub any: bool,
}

/// One location's share of the page.
#[derive(Debug, Default)]
pub struct LocScan {
    /// Per level, each slice's region (index + 1, 0 for none).
    pub lod: Vec<Vec<u32>>,
    /// Busy ns per slice of `Plan::busy_bins`.
    pub busy: Vec<u64>,
    /// First and last busy time.
    pub busy_range: Option<(u64, u64)>,
    /// Busy-state changes (ns, +1 / -1) while within the quota; `None`
    /// past it.
    pub transitions: Option<Vec<(f64, i32)>>,
    /// The longest visits, in start order.
    pub long: Vec<Visit>,
    /// Single visits in start order, all those that start in the window
    /// before `cut`.
    pub visits: Vec<Visit>,
    /// Arrow ends in the window before `cut`.
    pub flows: Vec<Flow>,
    /// The time of the first visit or arrow end of the window that was not
    /// kept, if any.
    pub cut: Option<u64>,
    /// Visits and arrow ends of the window per slice of `Plan::busy_bins`.
    pub items: Vec<u32>,
    /// Visits open when the window began (they are part of it).
    pub crossing: u32,
    /// Deepest nesting + 1.
    pub depth: u32,
    /// Visits in all.
    pub visits_total: u64,
    /// Visits deeper than [`MAX_DEPTH`].
    pub too_deep: u64,
    /// Messages and bytes sent to each rank (point-to-point and one-sided).
    pub sent: HashMap<u32, (u64, u64)>,
    /// Messages to ranks outside the experiment.
    pub sent_elsewhere: u64,
    /// The longest visit of each wanted region.
    pub longest: HashMap<u32, Visit>,
    /// The longest visit of any region, if wanted.
    pub longest_any: Option<Visit>,
    /// Last event time.
    pub end: u64,
    /// Events read.
    pub events: u64,
    /// The problem that ended the stream early.
    pub warning: Option<String>,
}

/// The time of a location's last event and the bytes of its records, from
/// its blocks without decoding them but the last: the passes' slices need
/// the run's length before they start, and a location's bytes bound its
/// events.
pub fn extent(exp: &Experiment, loc: &Loc) -> Result<(u64, u64), parallax_export::Error> {
    if !loc.has_events() {
        return Ok((0, 0));
    }
    let mut r = loc.reader()?;
    let mut tb = Timebase::new(exp, loc);
    let (mut buf, mut last) = (Vec::new(), Vec::new());
    let mut last_at: Option<(u64, usize)> = None;
    let (mut end, mut bytes) = (0, 0);
    // A damaged block ends the reading here as it ends the passes.
    while let Ok(Some((base, at))) = r.next_records(&mut buf) {
        end = end.max(tb.ns(base));
        bytes += buf.len().saturating_sub(at) as u64;
        std::mem::swap(&mut buf, &mut last);
        last_at = Some((base, at));
    }
    if let Some((mut time, at)) = last_at {
        let _ = evcodec::walk_records(last.get(at..).unwrap_or(&[]), &mut time, |_, _| {});
        end = end.max(tb.ns(time));
    }
    Ok((end, bytes))
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    start: u64,
    region: u32,
    /// Its place in the detail, or `NONE`.
    kept: u32,
}

const NONE: u32 = u32::MAX;

/// Reads location `loc`. `region` maps its process's region ids to the
/// report's region indices, `waits` tells the report's regions in which a
/// location counts as waiting.
pub fn scan(
    exp: &Experiment,
    loc: &Loc,
    plan: &Plan,
    region: &dyn Fn(u32) -> u32,
    waits: &dyn Fn(u32) -> bool,
    wanted: &Wanted,
) -> Result<LocScan, parallax_export::Error> {
    let mut s = State::new(plan, wanted);
    let mut stopped = false;
    let mut tb = Timebase::new(exp, loc);
    let r = trace::try_for_each_event(loc, |e| {
        s.event(
            tb.ns(e.time).min(plan.span),
            &e.kind,
            loc.rank,
            region,
            waits,
        );
        if s.done() {
            stopped = true;
            return Err(parallax_export::Error::new(
                parallax_export::ErrorKind::Input,
                "the window's visits have ended",
            ));
        }
        Ok(())
    });
    let (n, warning) = match r {
        Ok(read) => (read.events, read.problem.map(|e| e.to_string())),
        Err(_) if stopped => (s.events, None),
        Err(e) => return Err(e),
    };
    Ok(s.finish(n, warning))
}

/// The second pass over `loc` for the single visits and arrow ends of
/// `plan.window` only, at most `quota` of each (its count from the first
/// pass, so that none is left out).
pub fn detail(
    exp: &Experiment,
    loc: &Loc,
    plan: &Plan,
    quota: usize,
    region: &dyn Fn(u32) -> u32,
) -> Result<LocScan, parallax_export::Error> {
    let plan = Plan {
        levels: Vec::new(),
        busy_bins: 1,
        long_max: 0,
        visits: quota,
        flows: quota,
        transitions: 0,
        detail_only: true,
        ..plan.clone()
    };
    scan(exp, loc, &plan, region, &|_| false, &Wanted::default())
}

struct State<'a> {
    plan: &'a Plan,
    wanted: &'a Wanted,
    out: LocScan,
    lod: Vec<Dominant>,
    busy: Busy,
    items: Counts,
    /// Open regions that are in the detail.
    open_kept: usize,
    events: u64,
    long: BinaryHeap<Reverse<(u64, u64, u32, u32)>>,
    stack: Vec<Frame>,
    /// Open regions beyond [`MAX_DEPTH`].
    deep: u64,
    /// Since when the innermost region has been innermost.
    cursor: u64,
    flushing: bool,
    busy_since: Option<u64>,
    /// The window has begun: open regions were taken into the detail.
    started: bool,
    flows: Flows,
    now: u64,
}

impl<'a> State<'a> {
    fn new(plan: &'a Plan, wanted: &'a Wanted) -> State<'a> {
        State {
            plan,
            wanted,
            out: LocScan {
                transitions: Some(Vec::new()),
                // The second pass knows how many visits it takes: no
                // copies while the list grows.
                visits: Vec::with_capacity(if plan.detail_only { plan.visits } else { 0 }),
                ..LocScan::default()
            },
            lod: plan
                .levels
                .iter()
                .map(|&b| Dominant::new(Slices::new(plan.span, b)))
                .collect(),
            busy: Busy::new(Slices::new(plan.span, plan.busy_bins)),
            items: Counts::new(Slices::new(plan.span, plan.busy_bins)),
            open_kept: 0,
            events: 0,
            long: BinaryHeap::new(),
            stack: Vec::new(),
            deep: 0,
            cursor: 0,
            flushing: false,
            busy_since: None,
            started: false,
            flows: Flows::default(),
            now: 0,
        }
    }

    /// Whether an item of the detail at `t` (a visit's start, an arrow
    /// end) is taken: it is in the window, and counted, and if it is
    /// before the cut, whether `room` says it fits; the first that does
    /// not fit is the cut. Visits open when the window begins are counted
    /// apart (`crossing`).
    fn take(&mut self, t: u64, room: bool, crossing: bool) -> bool {
        if !self.started || t >= self.plan.window.1 {
            return false;
        }
        if crossing {
            self.out.crossing += 1;
        } else {
            self.items.add(t);
        }
        if self.out.cut.is_some() {
            return false;
        }
        if !room {
            self.out.cut = Some(t);
        }
        room
    }

    fn keep_visit(&mut self, start: u64, region: u32, depth: usize, crossing: bool) -> u32 {
        let room = self.out.visits.len() < self.plan.visits;
        if !self.take(start, room, crossing) {
            return NONE;
        }
        self.out.visits.push(Visit {
            start,
            end: start,
            region,
            depth: depth as u32,
        });
        self.open_kept += 1;
        (self.out.visits.len() - 1) as u32
    }

    /// The second pass has all it needs: the window is over and its
    /// visits have ended.
    fn done(&self) -> bool {
        self.plan.detail_only && self.now >= self.plan.window.1 && self.open_kept == 0
    }

    /// The innermost region changes at `t`.
    #[inline]
    fn innermost_until(&mut self, t: u64) {
        if let Some(top) = self.stack.last() {
            if t > self.cursor {
                for d in &mut self.lod {
                    d.add(self.cursor, t, top.region);
                }
            }
        }
        self.cursor = t;
    }

    #[inline]
    fn event(
        &mut self,
        t: u64,
        kind: &EventKind,
        rank: u32,
        region: &dyn Fn(u32) -> u32,
        waits: &dyn Fn(u32) -> bool,
    ) {
        self.now = t;
        self.events += 1;
        if !self.started && t >= self.plan.window.0 {
            // Regions open when the window begins are part of it.
            self.started = true;
            for i in 0..self.stack.len() {
                let f = self.stack[i];
                self.stack[i].kept = self.keep_visit(f.start, f.region, i, true);
            }
        }
        match *kind {
            EventKind::Enter { region: r } => {
                self.out.visits_total += 1;
                if self.stack.len() >= MAX_DEPTH {
                    self.deep += 1;
                    self.out.too_deep += 1;
                } else {
                    let g = region(r);
                    self.innermost_until(t);
                    let depth = self.stack.len();
                    let kept = self.keep_visit(t, g, depth, false);
                    self.stack.push(Frame {
                        start: t,
                        region: g,
                        kept,
                    });
                    self.out.depth = self.out.depth.max(depth as u32 + 1);
                }
            }
            EventKind::Leave { .. } => {
                if self.deep > 0 {
                    self.deep -= 1;
                } else if !self.stack.is_empty() {
                    self.innermost_until(t);
                    self.close(t);
                }
            }
            EventKind::FlushBegin => self.flushing = true,
            EventKind::FlushEnd => self.flushing = false,
            _ => self.other(t, kind, rank),
        }
        if !self.plan.detail_only {
            let idle = self.flushing || self.stack.last().is_some_and(|f| waits(f.region));
            self.set_busy(!idle, t);
        }
    }

    /// Leaves the innermost open region at `t`.
    fn close(&mut self, t: u64) {
        let Some(f) = self.stack.pop() else { return };
        let depth = self.stack.len() as u32;
        if f.kept != NONE {
            self.out.visits[f.kept as usize].end = t;
            self.open_kept -= 1;
        }
        if self.plan.detail_only {
            return;
        }
        let v = Visit {
            start: f.start,
            end: t,
            region: f.region,
            depth,
        };
        let d = t - f.start;
        if d >= self.plan.long_min && self.plan.long_max > 0 {
            self.long.push(Reverse((d, f.start, depth, f.region)));
            if self.long.len() > self.plan.long_max {
                self.long.pop();
            }
        }
        let longer = |x: &Visit| d > x.end - x.start;
        if self.wanted.any && self.out.longest_any.as_ref().is_none_or(longer) {
            self.out.longest_any = Some(v);
        }
        if self.wanted.regions.contains(&f.region)
            && self.out.longest.get(&f.region).is_none_or(longer)
        {
            self.out.longest.insert(f.region, v);
        }
    }

    fn other(&mut self, t: u64, kind: &EventKind, rank: u32) {
        let count = |peer: u32, bytes: u64, out: &mut LocScan| {
            if peer < self.plan.ranks {
                let c = out.sent.entry(peer).or_default();
                c.0 += 1;
                c.1 += bytes;
            } else {
                out.sent_elsewhere += 1;
            }
        };
        match *kind {
            EventKind::Send { peer, bytes, .. } | EventKind::IsendBegin { peer, bytes, .. }
                if !self.plan.detail_only =>
            {
                count(peer, bytes, &mut self.out)
            }
            EventKind::Put { target, bytes, .. } | EventKind::Atomic { target, bytes, .. }
                if !self.plan.detail_only =>
            {
                count(target, bytes, &mut self.out)
            }
            _ => {}
        }
        if t >= self.plan.window.1 {
            return;
        }
        // Arrows are paired by counting messages from the start of the
        // run; past the cut they are only counted.
        if self.out.cut.is_some() {
            if self.started && is_flow(kind) {
                self.items.add(t);
            }
            return;
        }
        if self.flows.channels() >= MAX_CHANNELS {
            self.out.cut = Some(t);
            return;
        }
        let bytes = match *kind {
            EventKind::Send { bytes, .. }
            | EventKind::IsendBegin { bytes, .. }
            | EventKind::Recv { bytes, .. }
            | EventKind::IrecvComplete { bytes, .. } => bytes,
            _ => 0,
        };
        let thread = u8::from(matches!(
            kind,
            EventKind::ThreadCreate { .. }
                | EventKind::ThreadBegin { .. }
                | EventKind::ThreadEnd { .. }
                | EventKind::ThreadJoin { .. }
        ));
        let end = match self.flows.of(rank, kind) {
            Some(FlowEnd::Start(id)) => (id, true),
            Some(FlowEnd::End(id)) => (id, false),
            None => return,
        };
        let room = self.out.flows.len() < self.plan.flows;
        if self.take(t, room, false) {
            self.out.flows.push((end.0, end.1, t, bytes, thread));
        }
    }

    fn set_busy(&mut self, busy: bool, t: u64) {
        if busy == self.busy_since.is_some() {
            return;
        }
        match self.busy_since.take() {
            Some(since) => self.busy.add(since, t),
            None => {
                self.busy_since = Some(t);
                let r = self.out.busy_range.get_or_insert((t, t));
                r.0 = r.0.min(t);
            }
        }
        if let Some(r) = &mut self.out.busy_range {
            r.1 = r.1.max(t);
        }
        let over = self
            .out
            .transitions
            .as_ref()
            .is_some_and(|v| v.len() >= self.plan.transitions);
        if over {
            self.out.transitions = None;
        }
        if let Some(v) = &mut self.out.transitions {
            v.push((t as f64, if busy { 1 } else { -1 }));
        }
    }

    fn finish(mut self, events: u64, warning: Option<String>) -> LocScan {
        if self.plan.detail_only {
            // Only the window's visits are of use; they ended when the
            // reading stopped, unless the stream ended first.
            let end = self.now;
            while !self.stack.is_empty() {
                self.close(end);
            }
            let mut out = self.out;
            out.events = events;
            out.warning = warning;
            return out;
        }
        let end = self.now;
        // Regions still open end with the stream.
        self.deep = 0;
        self.innermost_until(end);
        while !self.stack.is_empty() {
            self.close(end);
        }
        self.set_busy(false, end);
        let mut out = self.out;
        out.end = end;
        out.events = events;
        out.warning = warning;
        out.lod = self.lod.into_iter().map(Dominant::finish).collect();
        out.busy = self.busy.finish();
        out.items = self.items.finish();
        let mut long: Vec<Visit> = self
            .long
            .into_iter()
            .map(|Reverse((d, start, depth, region))| Visit {
                start,
                end: start + d,
                region,
                depth,
            })
            .collect();
        // Parents first: they start no later and are shallower.
        long.sort_by_key(|v| (v.start, v.depth));
        out.long = long;
        out
    }
}

/// Whether an event of `kind` can be an end of an arrow.
fn is_flow(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Send { .. }
            | EventKind::IsendBegin { .. }
            | EventKind::Recv { .. }
            | EventKind::IrecvComplete { .. }
            | EventKind::ThreadCreate { .. }
            | EventKind::ThreadBegin { .. }
            | EventKind::ThreadEnd { .. }
            | EventKind::ThreadJoin { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(visits: usize) -> Plan {
        Plan {
            span: 1000,
            levels: vec![10],
            busy_bins: 10,
            long_min: 100,
            long_max: 2,
            visits,
            flows: 10,
            transitions: 100,
            detail_only: false,
            window: (0, u64::MAX),
            ranks: 2,
        }
    }

    fn run(plan: &Plan, events: &[(u64, EventKind)]) -> LocScan {
        let wanted = Wanted {
            regions: [2].into_iter().collect(),
            any: true,
        };
        let mut s = State::new(plan, &wanted);
        for (t, k) in events {
            s.event(*t, k, 0, &|r| r, &|r| r == 9);
        }
        s.finish(events.len() as u64, None)
    }

    fn enter(region: u32) -> EventKind {
        EventKind::Enter { region }
    }

    const LEAVE: EventKind = EventKind::Leave { region: 0 };

    /// main 0..1000 with work 100..400 (a child 150..160) and a wait
    /// 500..900.
    fn events() -> Vec<(u64, EventKind)> {
        vec![
            (0, enter(1)),
            (100, enter(2)),
            (150, enter(3)),
            (160, LEAVE),
            (400, LEAVE),
            (500, enter(9)),
            (900, LEAVE),
            (1000, LEAVE),
        ]
    }

    #[test]
    fn one_pass_gives_every_summary() {
        let s = run(&plan(100), &events());
        assert_eq!(s.lod, vec![vec![2, 3, 3, 3, 2, 10, 10, 10, 10, 2]]);
        assert_eq!(s.busy, vec![100, 100, 100, 100, 100, 0, 0, 0, 0, 100]);
        assert_eq!(s.busy_range, Some((0, 1000)));
        assert_eq!(
            s.transitions,
            Some(vec![(0.0, 1), (500.0, -1), (900.0, 1), (1000.0, -1)])
        );
        // The two longest: main and the wait.
        let long: Vec<(u64, u64)> = s.long.iter().map(|v| (v.start, v.end)).collect();
        assert_eq!(long, vec![(0, 1000), (500, 900)]);
        assert_eq!(s.visits.len(), 4);
        assert_eq!(s.cut, None);
        assert_eq!(s.depth, 3);
        assert_eq!(
            s.longest[&2],
            Visit {
                start: 100,
                end: 400,
                region: 2,
                depth: 1
            }
        );
        assert_eq!(s.longest_any.map(|v| v.region), Some(1));
    }

    #[test]
    fn the_detail_ends_at_the_first_visit_that_does_not_fit() {
        let s = run(&plan(2), &events());
        assert_eq!(s.cut, Some(150));
        let kept: Vec<(u64, u64)> = s.visits.iter().map(|v| (v.start, v.end)).collect();
        assert_eq!(kept, vec![(0, 1000), (100, 400)]);
        // The summaries are whole all the same, and every visit counted.
        assert_eq!(s.lod[0][5], 10);
        assert_eq!(s.visits_total, 4);
        assert_eq!(s.items, vec![1, 2, 0, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn the_second_pass_takes_the_window_and_stops_after_it() {
        let mut p = plan(2);
        p.window = (0, 450);
        p.detail_only = true;
        p.visits = 3;
        p.levels.clear();
        let wanted = Wanted::default();
        let mut s = State::new(&p, &wanted);
        let mut read = 0;
        for (t, k) in events() {
            s.event(t, &k, 0, &|r| r, &|_| false);
            read += 1;
            if s.done() {
                break;
            }
        }
        // main (kept) is open to the end: everything is read.
        assert_eq!(read, 8);
        let out = s.finish(read, None);
        let kept: Vec<(u64, u64)> = out.visits.iter().map(|v| (v.start, v.end)).collect();
        assert_eq!(kept, vec![(0, 1000), (100, 400), (150, 160)]);
        assert_eq!(out.cut, None);
        // Without main, the reading stops at the first event past the
        // window.
        let mut s = State::new(&p, &wanted);
        let mut read = 0;
        for (t, k) in events().into_iter().skip(1) {
            s.event(t, &k, 0, &|r| r, &|_| false);
            read += 1;
            if s.done() {
                break;
            }
        }
        assert_eq!(read, 5);
    }

    #[test]
    fn a_window_takes_the_regions_open_at_its_start() {
        let mut p = plan(100);
        p.window = (155, 600);
        let s = run(&p, &events());
        let kept: Vec<(u64, u64, u32)> =
            s.visits.iter().map(|v| (v.start, v.end, v.depth)).collect();
        assert_eq!(
            kept,
            vec![(0, 1000, 0), (100, 400, 1), (150, 160, 2), (500, 900, 1)]
        );
        assert_eq!(s.cut, None);
    }

    #[test]
    fn deep_nesting_and_many_changes_stay_bounded() {
        let mut p = plan(10);
        p.transitions = 3;
        let mut ev = Vec::new();
        for i in 0..(MAX_DEPTH as u64 + 50) {
            ev.push((i, enter(if i % 2 == 0 { 9 } else { 4 })));
        }
        for i in 0..(MAX_DEPTH as u64 + 50) {
            ev.push((5000 + i, LEAVE));
        }
        let s = run(&p, &ev);
        assert_eq!(s.too_deep, 50);
        assert_eq!(s.depth as usize, MAX_DEPTH);
        assert_eq!(s.visits.len(), 10);
        assert_eq!(s.transitions, None);
        assert!(s.long.len() <= 2);
    }
}
