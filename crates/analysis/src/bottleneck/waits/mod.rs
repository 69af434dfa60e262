//! One location's replay for bottleneck analysis: its wait states, the
//! delay costs charged to it, its part of the critical path and the
//! figures the global analyses need, in one forward pass over its events.
//!
//! Dependencies go through the board as in compensation: a send posts its
//! region's enter time under the message's key and the receive takes it
//! (Late Sender); collective arrivals are merged into one value per
//! instance (Wait at Barrier / N×N, Late Broadcast, Early Reduce); a shared
//! object's producer posts its time for the consumer pairing chose (locks,
//! condition variables, values, joins). Every post carries a note of the
//! computation the producer did since its previous synchronization, so the
//! consumer charges the waiting it finds to that computation (delay
//! costs). For Late Receiver the receiver answers a blocking send with its
//! own enter time, in batches per channel; the sender takes the answers
//! as they come and waits for the rest at the end of its stream. Nothing
//! depends on when a value is taken, so every executor gives the same
//! result; integer sums keep merged values independent of the order of
//! contributions.

mod collectives;
mod delay;
mod messages;
mod objects;
mod polling;
mod result;

use collectives::Collectives;
use delay::behind;
use messages::Messages;
use objects::Objects;
use polling::Poll;
pub(crate) use result::{add_part, LocResult, PathStats};

use std::sync::Arc;

use parallax_model::event::{CollectiveOp, Event, EventKind, RegionId};
use parallax_model::region::{Category, RegionKind};

use super::path::{self, Path, Slot};
use super::posts::{Interval, Key, PathPieceNames, PostedValue};
use super::regions::{self, Table};
use super::Pattern;
use crate::pairing::Pairing;
use crate::replay::{LocationPass, Postings, Status};
use parallax_view::deps::{Dep, Message, Sequencer};
use parallax_view::fasthash::FastMap;
use parallax_view::trace::{Loc, Stream};

/// Answers awaited before the pass waits for the oldest.
const PENDING_MAX: usize = 1 << 16;
/// Answers to blocking sends per post.
const BATCH: u64 = 64;

#[derive(Clone, Copy, Debug)]
struct Frame {
    g: u32,
    kind: RegionKind,
    path: u32,
    enter: f64,
    /// Waiting found inside it, ns.
    wait: f64,
    /// The longest Late Sender waiting inside it: a wait for several
    /// receives (MPI_Waitall) counts its latest sender's, as in Scalasca.
    ls: f64,
    /// A transfer inside it.
    xfer: Option<Transfer>,
    /// Its region's category.
    cat: Category,
    /// The last region entered from it: loops enter the same one again
    /// and again.
    child: Child,
}

/// A region entered from a frame (id in its process's definitions) and
/// its call path, kept to find the path again without a lookup.
#[derive(Clone, Copy, Debug, Default)]
struct Child {
    region: RegionId,
    /// 0 while none was entered (no call path has number 0 as a child).
    path: u32,
}

/// A transfer inside a region: the peer location's rank and the bytes
/// sent (0 if unknown).
#[derive(Clone, Copy, Debug)]
struct Transfer {
    peer: u32,
    bytes: u64,
}

/// What a call path's frames start with: its region, the region's kind
/// and category, and where the region was last found in the interval's
/// computation and in the critical path's open segment.
#[derive(Clone, Copy, Debug)]
struct PathMeta {
    g: u32,
    kind: RegionKind,
    cat: Category,
    slots: [Slot; 2],
}

/// The dependency the current event waits for, worked out once even if
/// the event blocks.
#[derive(Debug)]
enum WaitedFor {
    Recv(RecvNeed),
    Coll(CollNeed),
    Obj(ObjNeed),
}

impl WaitedFor {
    fn key(&self) -> Key {
        match self {
            WaitedFor::Recv(n) => Key::Msg(n.msg),
            WaitedFor::Coll(n) => n.key,
            WaitedFor::Obj(n) => n.key,
        }
    }
}

/// A receive waits for its message's send.
#[derive(Debug)]
struct RecvNeed {
    /// The message.
    msg: Message,
    enter: f64,
    /// Where the waiting happened, if not in the receive itself (a probe
    /// before it).
    probe: Option<u32>,
}

/// A collective's end waits for every member's arrival.
#[derive(Debug)]
struct CollNeed {
    key: Key,
    op: CollectiveOp,
    root: u32,
    enter: f64,
    me_root: bool,
}

/// A synchronization on a shared object waits for its producer.
#[derive(Debug)]
struct ObjNeed {
    key: Key,
    pattern: Option<Pattern>,
    enter: f64,
    /// The object's id.
    obj: u64,
}

/// The call path: the regions open and the call paths met.
#[derive(Debug)]
struct Calls {
    stack: Vec<Frame>,
    /// The last top-level region entered.
    root_child: Child,
    /// By call path (index in `res.paths`).
    meta: Vec<PathMeta>,
    /// Call path by parent path and region.
    path_ix: FastMap<(u32, u32), u32>,
}

/// What the waiting of others is charged to: the interval since the
/// location's last synchronization point (delay costs) and its critical
/// path.
#[derive(Debug)]
struct History {
    /// Computation since the last synchronization point, and the waiting
    /// found at that point.
    interval: Interval,
    /// Times the interval was begun anew, plus one (see [`Slot`]).
    gen: u32,
    /// Waiting found at the current event: it opens the next interval.
    ev_waits: Vec<(u32, f64)>,
    /// The interval that ended at the current event, shared by its posts.
    note: Option<Arc<Interval>>,
    cp: Path,
}

pub struct LocPass<'a> {
    index: u32,
    process: usize,
    loc: &'a Loc,
    pairing: &'a Pairing,
    table: &'a Table,
    t0: f64,
    events: Stream,
    /// Names its messages and collectives.
    deps: Sequencer,
    /// The prepared dependency of the current event; `ready` once prepared.
    need: Option<WaitedFor>,
    ready: bool,
    force: bool,
    /// The key it waits for while blocked.
    missing: Option<Key>,
    prev: Option<f64>,
    /// Its start, or the end of its last set-up region (MPI_Init), until
    /// it synchronized with others in time (a receive, a collective, a
    /// wait for a partner; a free lock or a post does not).
    setup_end: f64,
    /// A wait that completed nothing (MPI_Probe), or a polling run of them
    /// (MPI_Test, trylock). A receive or acquisition right after it waited
    /// from there.
    probe: Option<Poll>,
    calls: Calls,
    msgs: Messages,
    colls: Collectives,
    objs: Objects,
    history: History,
    res: LocResult,
}

/// Waiting of an event entered at `enter` and done at `done` for a partner
/// that got there at `partner`, without the part due to the partner's
/// start or set-up (thread start, MPI_Init) ending late, if it came
/// straight from it: start-up skew is not a bottleneck of the program.
/// If this location is still starting too (`mine`), the skew is the
/// difference of the two starts.
fn waiting(enter: f64, partner: f64, done: f64, setup: f64, mine: f64) -> f64 {
    let end = partner.min(done);
    let skew = if mine.is_finite() {
        setup - mine
    } else {
        setup.min(end) - enter
    };
    (end - enter - skew.max(0.0)).max(0.0)
}

fn ns_u64(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v.round() as u64
    } else {
        0
    }
}

impl<'a> LocPass<'a> {
    pub fn new(
        loc: &'a Loc,
        index: usize,
        pairing: &'a Pairing,
        table: &'a Table,
        t0: f64,
    ) -> Result<LocPass<'a>, parallax_model::Error> {
        let root = PathStats::unvisited(0, regions::OUTSIDE);
        Ok(LocPass {
            index: index as u32,
            process: loc.process,
            loc,
            pairing,
            table,
            t0,
            events: Stream::open(loc)?,
            deps: Sequencer::default(),
            need: None,
            ready: false,
            force: false,
            missing: None,
            prev: None,
            setup_end: f64::NEG_INFINITY,
            probe: None,
            calls: Calls {
                stack: Vec::new(),
                root_child: Child::default(),
                meta: vec![PathMeta {
                    g: regions::OUTSIDE,
                    kind: RegionKind::Function,
                    cat: Category::Computation,
                    slots: Default::default(),
                }],
                path_ix: FastMap::default(),
            },
            msgs: Messages::default(),
            colls: Collectives::default(),
            objs: Objects::default(),
            history: History {
                interval: Interval::default(),
                gen: 1,
                ev_waits: Vec::new(),
                note: None,
                cp: Path::default(),
            },
            res: LocResult {
                paths: vec![root],
                ..LocResult::default()
            },
        })
    }

    /// Whether the events replayed agree with the summary that stood in
    /// for reading them in the pairing, if one did: all read without a
    /// problem, no synchronization on shared objects, the same collectives.
    pub fn agrees_with_summary(&self) -> bool {
        if !self
            .pairing
            .summarized
            .get(self.index as usize)
            .copied()
            .unwrap_or(false)
        {
            return true;
        }
        let Some(s) = &self.loc.summary else {
            return false;
        };
        self.res.warning.is_none()
            && self.objs.syncs_met == 0
            && self.deps.collectives() == s.collectives
    }

    pub fn finish(mut self) -> LocResult {
        self.close_join();
        self.close_run();
        // A region still open at the end counts up to the last event.
        let last = self.prev.unwrap_or(0.0);
        while let Some(f) = self.calls.stack.pop() {
            self.leave_stats(f, last);
        }
        self.res.critical = self.history.cp.totals();
        self.res.unmatched += self.msgs.pending.len() as u64;
        self.res
    }

    fn path_of(&mut self, parent: u32, g: u32) -> u32 {
        let n = self.res.paths.len() as u32;
        let paths = &mut self.res.paths;
        let (meta, table) = (&mut self.calls.meta, self.table);
        *self.calls.path_ix.entry((parent, g)).or_insert_with(|| {
            let kind = table.kind(g);
            meta.push(PathMeta {
                g,
                kind,
                cat: kind.category(),
                slots: Default::default(),
            });
            paths.push(PathStats::unvisited(parent, g));
            n
        })
    }

    fn top_path(&self) -> u32 {
        self.calls.stack.last().map_or(0, |f| f.path)
    }

    /// Enter time of the innermost region (or of this event outside any).
    fn enter_time(&self, t: f64) -> f64 {
        self.calls
            .stack
            .last()
            .map_or(self.prev.unwrap_or(t), |f| f.enter)
    }

    /// The time since the previous event belongs to the innermost region.
    #[inline(always)]
    fn account(&mut self, t: f64) {
        let Some(p) = self.prev else {
            self.res.first = Some(t);
            return;
        };
        let dt = t - p;
        if dt <= 0.0 {
            return;
        }
        let (g, path, cat) = self
            .calls
            .stack
            .last()
            .map_or((regions::OUTSIDE, 0, Category::Computation), |f| {
                (f.g, f.path, f.cat)
            });
        let slots = &mut self.calls.meta[path as usize].slots;
        self.res.paths[path as usize].excl += dt;
        self.res.categories[cat as usize] += dt;
        if cat == Category::Computation {
            let (comp, gen) = (&mut self.history.interval.comp, self.history.gen);
            if !path::add_at(comp, gen, &mut slots[0], g, dt) {
                path::push_at(comp, gen, &mut slots[0], g, dt);
            }
        }
        self.history.cp.add_in(g, dt, &mut slots[1]);
    }

    /// The note kept by a producer, shared by the posts of one event. The
    /// interval ends here (`finish_event` starts the next).
    fn note(&mut self) -> Arc<Interval> {
        self.history
            .note
            .get_or_insert_with(|| {
                self.history.gen = self.history.gen.wrapping_add(1).max(1);
                Arc::new(std::mem::take(&mut self.history.interval))
            })
            .clone()
    }

    fn record(&mut self, pattern: Pattern, path: u32, ns: f64, culprit: Option<u32>) {
        self.record_parts(pattern, path, ns, culprit.map(|c| (c, ns)).as_slice());
    }

    /// Records `ns` of waiting once, its culprits' parts in `parts`.
    fn record_parts(&mut self, pattern: Pattern, path: u32, ns: f64, parts: &[(u32, f64)]) {
        if ns <= 0.0 {
            return;
        }
        self.setup_end = f64::NEG_INFINITY;
        self.res
            .waits
            .entry((pattern, path))
            .or_default()
            .add_parts(ns, parts);
        if let Some(f) = self.calls.stack.last_mut() {
            f.wait += ns;
        }
        self.history.ev_waits.extend_from_slice(parts);
    }

    /// Works out the current event's dependency and makes its posts.
    fn prepare(&mut self, e: &Event, t: f64, board: &Postings<Key, PostedValue>) {
        use EventKind::*;
        self.account(t);
        self.ready = true;
        self.need = None;
        let rank = self.loc.rank;
        match (self.deps.of(rank, &e.kind), e.kind) {
            (Some(Dep::Sends(m)), Send { bytes, .. } | IsendBegin { bytes, .. }) => {
                let blocking_call = matches!(e.kind, Send { .. });
                self.send(t, blocking_call, m, bytes, board)
            }
            (Some(Dep::Receives(m)), _) => self.receive(e, t, m),
            (Some(Dep::Collective { at, op, root }), _) => {
                self.collective_end(t, op, at, root, board)
            }
            (_, IsendComplete { .. }) => self.msgs.last_msg = t,
            (_, IrecvBegin { request }) => {
                let last_msg = self.msgs.last_msg;
                self.msgs.probed_irecv = self
                    .probe
                    .filter(|p| p.kind == RegionKind::Wait && last_msg < p.start)
                    .map(|_| request);
            }
            (_, CollectiveBegin) => {
                self.colls.begins.begin(t);
            }
            (_, LockRequest { .. }) => self.objs.lock_request = Some(t),
            (_, ThreadBegin { .. }) => self.setup_end = t,
            (_, Put { target, .. } | Get { target, .. } | Atomic { target, .. }) => {
                self.colls.activity += 1;
                if target == rank {
                    self.res.rma.0 += 1;
                } else {
                    self.res.rma.1 += 1;
                }
            }
            _ => {}
        }
        if matches!(e.kind, LockAcquired { .. } | SemAcquired { .. }) {
            self.objs.last_got = t;
        }
        if e.kind.is_shared_sync() {
            self.shared_sync(e, t, board);
        }
    }

    /// Uses the value the current event waited for.
    fn resolve(&mut self, t: f64, v: PostedValue, board: &Postings<Key, PostedValue>) {
        match self.need.take() {
            Some(WaitedFor::Recv(n)) => self.received(t, n, v, board),
            Some(WaitedFor::Coll(n)) => self.collective_done(t, n, v),
            Some(WaitedFor::Obj(n)) => self.object_taken(t, n, v),
            None => self.res.unmatched += 1,
        }
    }

    /// A value of the wrong kind for `need`: the trace's ids collide.
    fn mismatch(&mut self, need: WaitedFor) {
        self.need = Some(need);
        self.res.unmatched += 1;
    }

    fn leave_stats(&mut self, f: Frame, t: f64) {
        let d = (t - f.enter).max(0.0);
        let s = &mut self.res.paths[f.path as usize];
        s.visits += 1;
        s.incl += d;
        s.min = s.min.min(d);
        s.max = s.max.max(d);
    }

    /// An enter's region bookkeeping.
    #[inline(always)]
    fn enter(&mut self, region: RegionId, t: f64) {
        let cached = self
            .calls
            .stack
            .last()
            .map_or(self.calls.root_child, |f| f.child);
        let path = if cached.region == region && cached.path != 0 {
            cached.path
        } else {
            let g = self.table.global(self.process, region);
            self.path_of(self.top_path(), g)
        };
        let child = Child { region, path };
        match self.calls.stack.last_mut() {
            Some(f) => f.child = child,
            None => self.calls.root_child = child,
        }
        let m = &self.calls.meta[path as usize];
        self.calls.stack.push(Frame {
            g: m.g,
            kind: m.kind,
            cat: m.cat,
            path,
            enter: t,
            wait: 0.0,
            ls: 0.0,
            xfer: None,
            child: Child::default(),
        });
    }

    /// A leave's region bookkeeping.
    #[inline(always)]
    fn leave(&mut self, t: f64) {
        if let Some(f) = self.calls.stack.pop() {
            self.leave_stats(f, t);
            if f.xfer.is_some()
                || matches!(
                    f.kind,
                    RegionKind::Send
                        | RegionKind::SendRecv
                        | RegionKind::Setup
                        | RegionKind::ThreadJoin
                        | RegionKind::Wait
                        | RegionKind::Lock
                        | RegionKind::SemWait
                )
            {
                self.leave_special(f, t);
            }
        }
    }

    /// What leaving a communication, set-up or join region adds.
    #[inline(never)]
    fn leave_special(&mut self, f: Frame, t: f64) {
        let kind = f.kind;
        self.transfer_left(&f, t);
        if kind == RegionKind::Setup {
            self.setup_end = t;
        }
        if matches!(
            kind,
            RegionKind::Wait | RegionKind::Lock | RegionKind::SemWait
        ) {
            self.wait_left(&f, t);
        }
        if kind == RegionKind::ThreadJoin {
            if let Some(j) = self.objs.join.as_mut() {
                j.last_leave = t;
            }
        }
    }

    /// Region bookkeeping after the event's dependency is resolved.
    fn finish_event(&mut self, e: &Event, t: f64) {
        match e.kind {
            EventKind::Enter { region } => self.enter(region, t),
            EventKind::Leave { .. } => self.leave(t),
            EventKind::Put { target, .. } | EventKind::Get { target, .. } => {
                if let Some(f) = self.calls.stack.last_mut() {
                    f.xfer = Some(Transfer {
                        peer: target,
                        bytes: 0,
                    });
                }
            }
            _ => {}
        }
        // A synchronization point starts a new interval.
        if self.history.note.take().is_some() {
            self.history.gen = self.history.gen.wrapping_add(1).max(1);
            self.history.interval = Interval {
                comp: Vec::new(),
                waits: std::mem::take(&mut self.history.ev_waits),
            };
        }
    }

    /// Processes event `e` at time `t`; false if it must wait.
    fn step(&mut self, e: &Event, t: f64, board: &Postings<Key, PostedValue>) -> bool {
        if !self.ready {
            self.prepare(e, t, board);
        }
        let key = self.need.as_ref().map(WaitedFor::key);
        if let Some(key) = key {
            match board.take(&key) {
                Some(v) => self.resolve(t, v, board),
                None if self.force => {
                    self.res.unmatched += 1;
                    // A condition wait whose signal was not paired (a
                    // broadcast releases several waiters) still waited.
                    if let Some(WaitedFor::Obj(ObjNeed {
                        pattern: Some(Pattern::ConditionWait),
                        enter,
                        ..
                    })) = self.need
                    {
                        let path = self.top_path();
                        self.record(Pattern::ConditionWait, path, t - enter, None);
                    }
                    self.need = None;
                }
                None => {
                    self.missing = Some(key);
                    return false;
                }
            }
        }
        self.need = None;
        self.force = false;
        if self.history.note.is_none() && key.is_some() {
            // A consumer is a synchronization point too.
            self.history.note = Some(Arc::new(Interval::default()));
        }
        self.finish_event(e, t);
        self.ready = false;
        self.res.events += 1;
        self.res.last = Some(t);
        self.prev = Some(t);
        true
    }

    /// Runs through the enters and leaves up to the next other event:
    /// region bookkeeping only.
    #[inline(never)]
    fn run_plain(&mut self, board: &Postings<Key, PostedValue>) {
        while let Some((ticks, region)) = self.events.next_plain() {
            let t = self.ns(ticks);
            self.account(t);
            match region {
                Some(r) => self.enter(r, t),
                None => self.leave(t),
            }
            self.res.events += 1;
            self.res.last = Some(t);
            self.prev = Some(t);
            self.poll_answers(board);
        }
    }

    /// A time in clock ticks in ns of experiment time (the clock map's own
    /// arithmetic, in 64 bits: ticks are within 2^63 of its reference).
    #[inline]
    fn ns(&self, ticks: u64) -> f64 {
        let c = &self.loc.clock;
        let d = ticks.wrapping_sub(c.tick0) as i64;
        (c.ns0 - self.t0) + d as f64 * c.ns_per_tick
    }
}

impl LocationPass for LocPass<'_> {
    type Key = Key;
    type Value = PostedValue;
    type Codec = PathPieceNames;

    fn resume(&mut self, board: &Postings<Key, PostedValue>) -> Status {
        loop {
            if self.msgs.pending.len() > PENDING_MAX && !self.answers(board, true) {
                let at = self.prev.unwrap_or(0.0);
                return Status::Blocked { at_ns: at };
            }
            if !self.ready && !self.force {
                self.run_plain(board);
            }
            let Some(e) = self.events.peek() else {
                if let Some(w) = self.events.warning.take() {
                    self.res.warning = Some(w);
                }
                // The stream is done; the answers still due are awaited.
                self.flush(board);
                if self.answers(board, true) {
                    return Status::Done;
                }
                let at = self.prev.unwrap_or(0.0);
                return Status::Blocked { at_ns: at };
            };
            let t = self.ns(e.time);
            if !self.step(&e, t, board) {
                return Status::Blocked { at_ns: t };
            }
            self.events.advance();
            self.poll_answers(board);
        }
    }

    fn force(&mut self) {
        self.force = true;
    }

    fn waiting_for(&self) -> Option<Key> {
        self.missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_that_waited_behind_the_waiter_takes_that_part() {
        // Holder 3 computed 1 ms and waited 3 ms: 2 behind location 1 (the
        // waiter now), 1 behind location 2.
        let note = Interval {
            comp: vec![(3, 1.0)],
            waits: vec![(1, 2.0), (2, 1.0)],
        };
        let parts = behind(1, 3, &note, 4.0);
        assert_eq!(parts, [(3, 3.0), (2, 1.0)]);
        // Another waiter puts that part on location 1.
        assert_eq!(behind(4, 3, &note, 4.0), [(3, 1.0), (1, 2.0), (2, 1.0)]);
    }
}
