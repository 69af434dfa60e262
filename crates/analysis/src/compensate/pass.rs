//! One location's compensation replay: every event's approximated time
//! t_a from the previous event's (time-based) and, for an event that
//! waited on another location, from that location's approximated post
//! (event-based), as in Malony's thesis ch. 3-5.

use parallax_model::event::{CollectiveOp, Event, EventKind, NO_ROOT};
use parallax_model::experiment::EventWriter;
use parallax_model::profile::CallTree;

use super::costs::{follows_its_enter, Costs, InContext};
use super::posts::{Key, Stamp};
use super::sharing::Sharing;
use super::stats::LocStats;
use super::Convention;
use crate::pairing::{OpenCollectives, Pairing};
use crate::replay::{LocationPass, Postings, Status};
use parallax_view::deps::{Dep, Object, Sequencer};
use parallax_view::profile::TreeBuilder;
use parallax_view::trace::{Loc, Stream};

/// Kinds of dependency, each with its own learned costs: messages,
/// collectives, then one per kind of shared object.
#[derive(Clone, Copy, Debug)]
enum Class {
    Message,
    Collective,
    Object(Object),
}

impl Class {
    fn index(self) -> usize {
        match self {
            Class::Message => 0,
            Class::Collective => 1,
            Class::Object(o) => 2 + o as usize,
        }
    }
}

const CLASSES: usize = 2 + Object::COUNT;

/// The current event's dependency and posts, worked out once even if the
/// event blocks and is resumed.
#[derive(Debug, Default)]
struct Current {
    ready: bool,
    needs: Option<Need>,
    posts: Vec<Post>,
    /// Paired otherwise than measured (liberal).
    repaired: bool,
    /// A collective arrival contributed before the wait.
    arrival: Option<Post>,
}

/// What an event waits for: the post's key and the dependency's class.
#[derive(Clone, Copy, Debug)]
struct Need {
    key: Key,
    class: Class,
}

/// A contribution to the board: its key and stamp, the contributions
/// that make the value and the readers that take it.
#[derive(Debug)]
struct Post {
    key: Key,
    stamp: Stamp,
    expected: u32,
    readers: u32,
}

/// The previous event, from which the next one's time follows.
#[derive(Clone, Copy, Debug)]
struct Prev {
    /// Its measured time, ns.
    tm: f64,
    /// Its approximated time, ns.
    ta: f64,
    /// The cost of its probe, ns.
    alpha: f64,
}

/// The sums over one bin of `Sharing` so far (see `LocPass::removed`).
#[derive(Clone, Copy, Debug)]
struct BinSums {
    /// The bin's number.
    bin: i64,
    /// The location's own probe cost in it, ns.
    own: f64,
    /// The probes' share of the cores over it, ns.
    share: f64,
}

/// A thread's end, posted after the stream's last event.
#[derive(Clone, Copy, Debug)]
struct EndPost {
    key: Key,
    readers: u32,
}

pub struct LocPass<'a> {
    pub loc: &'a Loc,
    pairing: &'a Pairing,
    costs: Costs,
    convention: Convention,
    events: Stream,
    /// The location's number in the pairing.
    index: usize,
    /// Number of the next sync event, and of the current one.
    sync_next: usize,
    sync_cur: usize,
    /// Each lock acquisition's sync event number and approximated request
    /// time (the previous event's), for a liberal re-pairing.
    pub requests: Vec<(usize, f64)>,
    cur: Current,
    force: bool,
    /// The key it waits for while blocked.
    missing: Option<Key>,
    prev: Option<Prev>,
    flushing: bool,
    /// Names its messages and collectives.
    deps: Sequencer,
    coll_begins: OpenCollectives<Stamp>,
    /// Per class: cheapest measured cost of the operation when it did not
    /// wait, and cheapest delay from a partner's post to the completion.
    own_min: [f64; CLASSES],
    latency_min: [f64; CLASSES],
    /// Probe cost not yet removed, ns (see `settle`).
    debt: f64,
    /// The probes' share of the cores, where the process's host ran more
    /// threads than cores (`crowded`): every stretch of time loses at
    /// least that share (see `sharing`).
    sharing: Option<&'a Sharing>,
    /// The sums of the current bin of `sharing`.
    shared: BinSums,
    /// How much a probe costs here against its calibration (see
    /// `InContext`), and the calibrated cost of the previous event if it
    /// was an enter.
    in_context: InContext,
    prev_enter: Option<f64>,
    /// Calls counted by the previous event, if a `Skipped` one: their cost
    /// is known once the stretch after it is.
    prev_skipped: u64,
    /// The previous event was a lock release; the least time seen from a
    /// release to the next event (the rest of the unlock), ns.
    after_release: bool,
    unlock_least: f64,
    /// A thread's end is posted with the stream's last event: what follows
    /// it is the runtime's own teardown.
    end_post: Option<EndPost>,
    writer: Option<EventWriter>,
    last_tick: u64,
    tree: TreeBuilder,
    pub stats: LocStats,
}

impl<'a> LocPass<'a> {
    pub fn new(
        loc: &'a Loc,
        index: usize,
        pairing: &'a Pairing,
        costs: Costs,
        sharing: Option<&'a Sharing>,
        convention: Convention,
        writer: Option<EventWriter>,
    ) -> Result<LocPass<'a>, parallax_model::Error> {
        let (enter_ns, leave_ns, event_ns) = (costs.enter_ns, costs.leave_ns, costs.event_ns);
        Ok(LocPass {
            loc,
            pairing,
            costs,
            sharing,
            shared: BinSums {
                bin: i64::MIN,
                own: 0.0,
                share: 0.0,
            },
            in_context: InContext::default(),
            prev_enter: None,
            prev_skipped: 0,
            after_release: false,
            unlock_least: (pairing.learned.unlock - event_ns).max(0.0),
            convention,
            events: Stream::open(loc)?,
            index,
            sync_next: 0,
            sync_cur: 0,
            requests: Vec::new(),
            cur: Current::default(),
            force: false,
            missing: None,
            prev: None,
            flushing: false,
            deps: Sequencer::default(),
            coll_begins: OpenCollectives::default(),
            // Shared objects start from the least costs seen on any
            // location (the pairing pass measured them), less the probes
            // inside them; messages and collectives learn as they go.
            own_min: std::array::from_fn(|i| match i.checked_sub(2) {
                Some(o) => {
                    let [e, l, v] = pairing.learned.own[o];
                    let least = (e - enter_ns).min(l - leave_ns).min(v - event_ns);
                    least.max(0.0)
                }
                None => f64::INFINITY,
            }),
            latency_min: std::array::from_fn(|i| match i.checked_sub(2) {
                Some(o) => (pairing.learned.latency[o] - event_ns).max(0.0),
                None => f64::INFINITY,
            }),
            debt: 0.0,
            end_post: None,
            writer,
            last_tick: 0,
            tree: TreeBuilder::new(loc.thread),
            stats: LocStats::default(),
        })
    }

    /// Writes what is left and returns the location's approximated call
    /// tree.
    pub fn finish(self) -> Result<(CallTree, LocStats), parallax_model::Error> {
        if let Some(w) = self.writer {
            w.finish()?;
        }
        let mut stats = self.stats;
        if stats.probe_ns > 0.0 {
            stats.context_ns = self.costs.context_range(stats.probe_ns);
            stats.speed_ns = self.costs.speed_range(stats.probe_ns);
        }
        let mut tree = self.tree;
        tree.seen(self.last_tick);
        Ok((tree.finish(), stats))
    }

    /// Works out what event `e` waits for and posts.
    fn prepare(&mut self, e: &Event, tm: f64) {
        let rank = self.loc.rank;
        let tm = self.posted_tm(tm);
        let mut c = Current {
            ready: true,
            ..Current::default()
        };
        match self.deps.of(rank, &e.kind) {
            Some(Dep::Sends(m)) => c.posts.push(Post {
                key: Key::Msg(m),
                stamp: Stamp { ta: 0.0, tm },
                expected: 1,
                readers: 1,
            }),
            Some(Dep::Receives(m)) => {
                c.needs = Some(Need {
                    key: Key::Msg(m),
                    class: Class::Message,
                })
            }
            Some(Dep::Collective { at: coll, op, root }) => {
                let n = self.pairing.members(coll.comm, coll.seq);
                let begin = self.coll_begins.end().unwrap_or_else(|| {
                    let p = self.previous(tm);
                    Stamp { ta: p.ta, tm: p.tm }
                });
                let arrivals = Key::Arrivals(coll);
                let rooted = root != NO_ROOT && n > 1;
                let arrive = |key, expected, readers| Post {
                    key,
                    stamp: begin,
                    expected,
                    readers,
                };
                let wait = |key| Need {
                    key,
                    class: Class::Collective,
                };
                match op {
                    CollectiveOp::Broadcast | CollectiveOp::Scatter if rooted => {
                        if root == rank {
                            c.arrival = Some(arrive(Key::Root(coll), 1, n - 1));
                        } else {
                            c.needs = Some(wait(Key::Root(coll)));
                        }
                    }
                    CollectiveOp::Reduce | CollectiveOp::Gather if rooted => {
                        c.arrival = Some(arrive(arrivals, n, 1));
                        if root == rank {
                            c.needs = Some(wait(arrivals));
                        }
                    }
                    _ => {
                        c.arrival = Some(arrive(arrivals, n, n));
                        c.needs = Some(wait(arrivals));
                    }
                }
            }
            Some(Dep::Object(_)) => {
                self.sync_cur = self.sync_next;
                self.sync_next += 1;
                let s = self.pairing.sync(self.index, self.sync_cur);
                c.repaired = s.repaired;
                c.needs = s.needs().map(|l| Need {
                    key: Key::Obj(l),
                    class: Class::Object(l.object),
                });
                if let Some((l, readers)) = s.posts() {
                    c.posts.push(Post {
                        key: Key::Obj(l),
                        stamp: Stamp { ta: 0.0, tm },
                        expected: 1,
                        readers,
                    });
                }
            }
            None => {}
        }
        self.cur = c;
    }

    /// The previous event, or, before the first, one at `tm` that cost
    /// nothing.
    fn previous(&self, tm: f64) -> Prev {
        self.prev.unwrap_or(Prev {
            tm,
            ta: tm,
            alpha: 0.0,
        })
    }

    /// Processes event `e` at measured time `tm`; false if it must wait.
    fn step(&mut self, e: &Event, tm: f64, board: &Postings<Key, Stamp>) -> bool {
        if matches!(e.kind, EventKind::Enter { .. } | EventKind::Leave { .. }) {
            // Most events: time-based only, nothing to wait for or post.
            let Prev {
                tm: ptm,
                ta: pta,
                alpha: palpha,
            } = self.previous(tm);
            let palpha = palpha + self.skipped_cost(e.time);
            let (removed, shared) = self.removed(ptm, tm, palpha);
            self.shared = shared;
            let mut gap = (tm - ptm) - removed;
            if self.after_release {
                // The rest of an unlock costs its least: more is the wake
                // of a waiter that the probes put to sleep.
                let least = self.unlock_least;
                self.unlock_least = least.min(gap.max(0.0));
                gap = gap.min(least);
            }
            let ta = self.settle(pta + gap, pta);
            self.done(e, tm, ta, palpha, false);
            return true;
        }
        if !self.cur.ready {
            self.prepare(e, tm);
        }
        if let Some(a) = self.cur.arrival.take() {
            board.contribute(a.key, a.stamp, a.expected, a.readers);
        }
        let Prev {
            tm: ptm,
            ta: pta,
            alpha: palpha,
        } = self.previous(tm);
        let palpha = palpha + self.skipped_cost(e.time);
        // Time-based: the measured gap without the previous probe, or
        // nothing at all for the runtime's own flush.
        let flush_end = self.flushing && matches!(e.kind, EventKind::FlushEnd);
        let (removed, shared) = self.removed(ptm, tm, palpha);
        let local = if flush_end {
            pta
        } else {
            pta + (tm - ptm) - removed
        };
        let mut ta = local;
        if self.cur.repaired && self.cur.needs.is_none() {
            // Re-paired to wait for nobody: its measured waiting goes too.
            ta = pta + self.least(Class::Object(Object::Lock).index()).0;
        }
        if let Some(Need { key, class }) = self.cur.needs {
            match board.take(&key) {
                Some(p) => {
                    ta = self.resolve(local, tm, ptm, pta, palpha, p, class.index());
                    self.stats.dependencies += 1;
                }
                None if self.force => {
                    self.stats.unmatched += 1;
                }
                None => {
                    self.missing = Some(key);
                    return false;
                }
            }
        }
        self.force = false;
        if !flush_end {
            self.shared = shared;
        }
        if let EventKind::LockAcquired { .. } = e.kind {
            self.requests.push((self.sync_cur, pta));
        }
        match e.kind {
            EventKind::FlushBegin => self.flushing = true,
            EventKind::FlushEnd => self.flushing = false,
            _ => {}
        }
        let ta = if self.prev.is_some() {
            self.settle(ta, pta)
        } else {
            ta
        };
        if let EventKind::CollectiveBegin = e.kind {
            let tm = self.posted_tm(tm);
            self.coll_begins.begin(Stamp { ta, tm });
        }
        for mut p in std::mem::take(&mut self.cur.posts) {
            if matches!(e.kind, EventKind::ThreadEnd { .. }) {
                self.end_post = Some(EndPost {
                    key: p.key,
                    readers: p.readers,
                });
                continue;
            }
            p.stamp.ta = ta;
            board.contribute(p.key, p.stamp, p.expected, p.readers);
        }
        self.cur.ready = false;
        self.cur.needs = None;
        self.done(e, tm, ta, palpha, flush_end);
        true
    }

    /// What the calls counted by the previous event cost over the stretch
    /// after it, up to tick `to` ([`Costs::skipped_until`]).
    fn skipped_cost(&mut self, to: u64) -> f64 {
        if self.prev_skipped == 0 {
            return 0.0;
        }
        self.prev_skipped as f64 * self.costs.skipped_until(to)
    }

    /// What a measured stretch `ptm..tm` after a probe of cost `palpha`
    /// loses: the probe and the cost still owed. In a crowded process,
    /// over each bin of `Sharing` the location's stretches lose together
    /// the larger of its own probes and the probes' share of the cores
    /// over them (per stretch, a short one after a probe would lose its
    /// whole probe although the share that dilated it was small). Also
    /// returns the bin's sums with this stretch, to keep once the event is
    /// done (an event that blocks is stepped again).
    fn removed(&self, ptm: f64, tm: f64, palpha: f64) -> (f64, BinSums) {
        let Some(s) = self.sharing else {
            return (palpha + self.debt, self.shared);
        };
        let bin = s.bin(ptm);
        let (own, share) = if bin == self.shared.bin {
            (self.shared.own, self.shared.share)
        } else {
            (0.0, 0.0)
        };
        let (own2, share2) = (own + palpha, share + s.over(ptm, tm));
        let lost = own2.max(share2) - own.max(share) + self.debt;
        let sums = BinSums {
            bin,
            own: own2,
            share: share2,
        };
        (lost, sums)
    }

    /// Whether the event being processed lies where liberal re-scheduling
    /// made up the measured times.
    fn rewritten(&self) -> bool {
        self.loc
            .rewritten_from
            .is_some_and(|from| self.stats.events >= from)
    }

    /// The measured time a post of the event being processed carries:
    /// none (infinite) where it was made up, so that its partners take the
    /// least costs.
    fn posted_tm(&self, tm: f64) -> f64 {
        if self.rewritten() {
            f64::INFINITY
        } else {
            tm
        }
    }

    /// Whether the process's host ran more threads than cores: waiting for
    /// a core was the program's own, so start-up and wake-up delays stay as
    /// measured, less the probes' share.
    fn crowded(&self) -> bool {
        self.sharing.is_some()
    }

    /// The share of a crowded process's cores that went to probes over
    /// `from..to` (0 elsewhere).
    fn share(&self, from: f64, to: f64) -> f64 {
        self.sharing.map_or(0.0, |s| s.share(from, to))
    }

    /// Bookkeeping of an event resolved at `ta`, and its output.
    /// An event's time `ta`, kept no earlier than the previous event's
    /// `pta`. Probe cost that a measured gap was too short to hold (its
    /// probe overlapped the next one's) is owed to the following gaps, so
    /// that every probe's cost is removed once (eq. 3.7 of the thesis,
    /// with times kept in order).
    fn settle(&mut self, ta: f64, pta: f64) -> f64 {
        if ta < pta {
            self.debt = pta - ta;
            self.stats.clamped += 1;
            pta
        } else {
            self.debt = 0.0;
            ta
        }
    }

    fn done(&mut self, e: &Event, tm: f64, ta: f64, palpha: f64, flush_end: bool) {
        if let Some(p) = self.prev {
            if flush_end {
                self.stats.flush_ns += tm - p.tm;
            } else if palpha > 0.0 {
                self.stats.probe_ns += palpha;
                self.stats.uncertainty_ns += self.costs.sd_ns;
            }
        }
        self.emit(e, ta);
        self.stats.events += 1;
        if self.stats.first.is_none() {
            self.stats.first = Some((tm, ta));
        }
        self.stats.last = Some((tm, ta));
        if let (Some(a), Some(p)) = (self.prev_enter, self.prev) {
            if follows_its_enter(&e.kind) && a > 0.0 {
                self.in_context.sample((tm - p.tm) / a);
            }
        }
        self.after_release = matches!(e.kind, EventKind::LockRelease { .. });
        self.prev_skipped = match e.kind {
            EventKind::Skipped { calls } => calls,
            _ => 0,
        };
        let alpha = self.costs.of(e);
        self.prev_enter = match e.kind {
            EventKind::Enter { region } if self.costs.guarded(region) => Some(alpha),
            _ => None,
        };
        self.prev = Some(Prev {
            tm,
            ta,
            alpha: alpha * self.in_context.ratio,
        });
    }

    /// The approximated time of a dependent event whose partner posted
    /// `p`: it cannot complete before the partner's post plus the delay
    /// from post to completion; if it measurably waited for the partner,
    /// that waiting is replaced by what the approximation needs.
    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &mut self,
        local: f64,
        tm: f64,
        ptm: f64,
        pta: f64,
        palpha: f64,
        p: Stamp,
        class: usize,
    ) -> f64 {
        let basis_alpha = match self.convention {
            Convention::Consistent => self.costs.event_ns,
            Convention::Literal => 0.0,
        };
        let (own_least, latency_least) = self.least(class);
        if self.cur.repaired || self.rewritten() || p.tm == f64::INFINITY {
            // Re-paired or re-scheduled (liberal): this pair was never
            // measured; the least costs of each side make the completion.
            return match self.prev {
                Some(_) => (pta + own_least).max(p.ta + latency_least),
                None => p.ta + latency_least,
            };
        }
        if self.prev.is_none() {
            // A location that starts on its partner's post (a thread on
            // its create) starts after the least start-up delay seen: the
            // operating system's own. A longer one is time waiting for a
            // core, which the probes kept busy (a thread created while
            // another one ran its probes found no free core until that
            // one ended), unless the threads outnumbered the cores.
            let delay = (tm - p.tm - basis_alpha).max(0.0);
            return p.ta
                + if self.crowded() {
                    delay * (1.0 - self.share(p.tm, tm))
                } else {
                    delay.min(latency_least)
                };
        }
        // The measured completion is the later of two bounds: the
        // operation's own cost after the previous event, and the delay
        // after the partner's post. Which one decided it is judged from
        // the least costs of each kind seen deciding before (none yet:
        // zero); the deciding side's measured value is this instance's
        // cost, and the other side's cost is its least decided value.
        let own = tm - ptm - palpha;
        let latency = tm - p.tm - basis_alpha;
        if p.tm > tm {
            // The post after the completion (clocks of two hosts that
            // disagree): the measured pair says nothing; the least costs
            // of each side make the completion.
            return (pta + own_least).max(p.ta + latency_least);
        }
        let waited = p.tm + basis_alpha + latency_least > ptm + palpha + own_least;
        // The least delay after a post, but never more than this very
        // instance took: the measurement shows it possible.
        let floor = latency_least.min(latency.max(0.0));
        if waited {
            self.latency_min[class] = self.latency_min[class].min(latency.max(0.0));
        } else {
            self.own_min[class] = self.own_min[class].min(own.max(0.0));
        }
        let ta = if class == Class::Object(Object::Lock).index() {
            // A lock is taken at its least cost after the request or its
            // least hand-off after the release, whichever is later (the
            // thesis's constant lock costs), crowded hosts too. A dearer
            // acquisition in the measured run paid for the interleaving
            // that the probes made: a lock word and data that moved
            // between cores at every hand-off, a waiter put to sleep. A
            // lock released before it was asked for (by this thread, or
            // free by then) is taken with no hand-off.
            let (o, l) = self.least(class);
            if p.ta <= pta {
                pta + o
            } else {
                (pta + o).max(p.ta + l)
            }
        } else if waited {
            // A waiter on a shared object wakes after the least delay
            // seen: beyond the operating system's wake-up, a thread woken
            // in the measured run waited for a core that probes kept busy,
            // or woke from a deeper sleep after a wait that probes made
            // longer (unless the threads outnumbered the cores: then the
            // wait for a core was the program's own). A message's or a
            // collective's delay after its post holds its transfer, which
            // grows with the data, so it stays while the waiter still
            // waits for the post; if the post now comes first, the waiter
            // finds it there after the least delay.
            let object = class >= Class::Object(Object::Lock).index();
            let delay = if (object && !self.crowded()) || p.ta <= pta {
                floor
            } else {
                latency.max(0.0) * (1.0 - self.share(p.tm, tm))
            };
            (pta + own_least).max(p.ta + delay)
        } else {
            local.max(p.ta + floor)
        };
        let change = (ta - pta) - own;
        if change < 0.0 {
            self.stats.wait_removed_ns -= change;
        } else {
            self.stats.wait_added_ns += change;
        }
        ta
    }

    /// The least own cost and wake-up delay of dependency class `class`
    /// seen deciding a wait so far, ns (zero while unknown).
    fn least(&self, class: usize) -> (f64, f64) {
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        (finite(self.own_min[class]), finite(self.latency_min[class]))
    }

    fn emit(&mut self, e: &Event, ta: f64) {
        let tick = round_tick(ta).max(self.last_tick);
        self.last_tick = tick;
        match e.kind {
            EventKind::Enter { region } => self.tree.enter(region, tick),
            EventKind::Leave { .. } => self.tree.leave(tick),
            EventKind::Skipped { calls } => self.tree.skipped(calls),
            _ => {}
        }
        if let Some(w) = self.writer.as_mut() {
            if let Err(err) = w.push(&Event {
                time: tick,
                kind: e.kind,
            }) {
                self.stats.warning.get_or_insert(err.to_string());
                self.writer = None;
            }
        }
    }
}

/// `ns` rounded to the nearest tick (halves away from zero), 0 if negative:
/// `f64::round` without a call to the C library's (once per event).
#[inline]
fn round_tick(ns: f64) -> u64 {
    let x = ns.max(0.0);
    let whole = x as u64;
    // The fraction of a double is exact, and so is this difference.
    whole.saturating_add((x - whole as f64 >= 0.5) as u64)
}

impl LocationPass for LocPass<'_> {
    type Key = Key;
    type Value = Stamp;
    type Codec = crate::replay::AsIs;

    fn resume(&mut self, board: &Postings<Key, Stamp>) -> Status {
        while let Some(e) = self.events.peek() {
            let tm = self.loc.clock.ns(e.time);
            if !self.step(&e, tm, board) {
                return Status::Blocked { at_ns: tm };
            }
            self.events.advance();
        }
        if let Some(w) = self.events.warning.take() {
            self.stats.warning = Some(w);
        }
        if let (Some(end), Some((tm, ta))) = (self.end_post.take(), self.stats.last) {
            let tm = self.posted_tm(tm);
            board.post(end.key, Stamp { ta, tm }, end.readers);
        }
        Status::Done
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
    use super::round_tick;

    #[test]
    fn ticks_round_as_the_c_library_does() {
        let tricky = [
            0.0,
            -0.0,
            -3.7,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            1e9 + 0.4999,
            1e9 + 0.5,
            4503599627370495.5,
            9007199254740993.0,
            1.8446744073709552e19,
            1e30,
            f64::NAN,
            f64::INFINITY,
        ];
        let mut x = 0.123_f64;
        let spread = (0..10_000).map(|_| {
            x = (x * 7919.0 + 0.37) % 1e7;
            x
        });
        for v in tricky.into_iter().chain(spread) {
            assert_eq!(round_tick(v), v.max(0.0).round() as u64, "{v}");
        }
    }
}
