//! Which event each synchronization waited for: the pairing of acquisitions
//! with releases, waits with posts, awaits with advances, thread starts and
//! joins with creates and ends, value waits with the puts that set them;
//! and how many locations take part in each collective.
//!
//! Messages and collectives pair by counting along each location (the n-th
//! message on a channel, the n-th collective on a communicator), which a
//! replay does as it goes. Shared objects need the measured order across
//! locations, so a first pass lists every location's synchronization events
//! and an exchange step sorts them per object and pairs them:
//!
//! - lock: an acquisition waited for the release just before it;
//! - semaphore or condition variable: waits take the posts in order, first
//!   come first served, a wait before any unclaimed post taking an initial
//!   permit (no dependency);
//! - advance/await: an await of index i waited for the first advance to an
//!   index >= i;
//! - thread: its start waited for its create, a join for the thread's end;
//! - value: a wait on a memory word waited for the last put or atomic to it.

use std::collections::{BTreeMap, HashMap, VecDeque};

use parallax_model::event::EventKind;

use parallax_view::deps::{object_event, ObjectEvent, Role};

use parallax_view::deps::Object;

use crate::executor::Executor;
use crate::wire::{Reader, Wire};
use parallax_view::fasthash::FastMap;
use parallax_view::trace::{self, Loc, Prior};

/// Begins of a location's collectives not yet ended, oldest first: a
/// non-blocking collective ends in a later wait, so several can be open.
/// Holds at most 64, so a trace that lost its ends cannot make it grow.
#[derive(Debug)]
pub(crate) struct OpenCollectives<T>(VecDeque<T>);

impl<T> Default for OpenCollectives<T> {
    fn default() -> Self {
        OpenCollectives(VecDeque::new())
    }
}

impl<T> OpenCollectives<T> {
    /// A collective began with `v`.
    pub(crate) fn begin(&mut self, v: T) {
        if self.0.len() == 64 {
            self.0.pop_front();
        }
        self.0.push_back(v);
    }

    /// The oldest open collective ends: its begin.
    pub(crate) fn end(&mut self) -> Option<T> {
        self.0.pop_front()
    }
}

/// A producer event of a shared object: the `seq`-th of its kind on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Link {
    /// Object kind.
    pub object: Object,
    /// Object id.
    pub id: u64,
    /// Which producer event of the object.
    pub seq: u64,
}

/// What one synchronization event of a location does in a replay: it
/// waits for a producer ([`Sync::needs`]), or it is a producer that events
/// wait for ([`Sync::posts`]), or neither. (One link for either keeps it
/// at 32 bytes: pairing holds one for every listed event.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sync {
    link: Link,
    /// For a producer, how many events wait for it.
    readers: u32,
    role: SyncRole,
    /// A wait paired otherwise than measured (liberal): its measured
    /// waiting says nothing about its approximated one.
    pub repaired: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum SyncRole {
    #[default]
    None,
    Needs,
    Posts,
}

impl Sync {
    /// The producer this event waited for.
    pub fn needs(&self) -> Option<Link> {
        (self.role == SyncRole::Needs).then_some(self.link)
    }

    /// This event is a producer: its key and how many events wait for it.
    pub fn posts(&self) -> Option<(Link, u32)> {
        (self.role == SyncRole::Posts).then_some((self.link, self.readers))
    }

    fn set_needs(&mut self, link: Link) {
        (self.link, self.role) = (link, SyncRole::Needs);
    }

    fn set_posts(&mut self, link: Link, readers: u32) {
        (self.link, self.readers, self.role) = (link, readers, SyncRole::Posts);
    }
}

#[derive(Clone, Copy, Debug)]
struct ListedEvent {
    object: Object,
    id: u64,
    t: f64,
    /// Time of the location's previous event (when a wait began), and
    /// its probe: enter, leave, other.
    prev: f64,
    prev_probe: u8,
    loc: usize,
    ord: usize,
    role: Role,
    /// For sync variables, the index an advance reached (a producer) or an
    /// await needs (a consumer).
    index: u64,
}

impl ListedEvent {
    /// Where it sorts among events of the same time: producers first, in
    /// no order of their own; consumers by the index they need.
    fn rank(&self) -> (Role, u64) {
        match self.role {
            Role::Producer => (Role::Producer, 0),
            Role::Consumer => (Role::Consumer, self.index),
        }
    }
}

// Listings are gathered from every rank under the MPI executor.
impl Wire for Object {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u8).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => Object::Lock,
            1 => Object::Sem,
            2 => Object::SyncVar,
            3 => Object::ThreadStart,
            4 => Object::ThreadEnd,
            _ => Object::Value,
        }
    }
}

crate::wire::fields!(Link { object, id, seq });

impl crate::wire::Wire for ListedEvent {
    fn put(&self, out: &mut Vec<u8>) {
        let role = (self.role == Role::Consumer) as u8;
        (self.object, self.id, self.t, self.prev, self.prev_probe).put(out);
        (self.loc, self.ord, role, self.index).put(out);
    }
    fn get(r: &mut crate::wire::Reader<'_>) -> Self {
        use crate::wire::Wire;
        let (object, id, t, prev, prev_probe) = Wire::get(r);
        let (loc, ord, role, index): (usize, usize, u8, u64) = Wire::get(r);
        let role = if role == 0 {
            Role::Producer
        } else {
            Role::Consumer
        };
        ListedEvent {
            object,
            id,
            t,
            prev,
            prev_probe,
            loc,
            ord,
            role,
            index,
        }
    }
}

/// Lists a sync event and counts a collective. Kept out of line, so that
/// the walk over the enters and leaves around it stays tight.
#[inline(never)]
fn list(
    kind: EventKind,
    at: Prior,
    loc: &Loc,
    li: usize,
    t0: f64,
    recs: &mut Vec<ListedEvent>,
    colls: &mut BTreeMap<u64, u64>,
) {
    if let EventKind::CollectiveEnd { comm, .. } = kind {
        *colls.entry(comm).or_insert(0) += 1;
    }
    if let Some(ObjectEvent {
        object,
        id,
        role,
        index,
    }) = object_event(&kind, loc.rank)
    {
        let ns = |ticks: u64| loc.clock.ns(ticks) - t0;
        let ord = recs.len();
        recs.push(ListedEvent {
            object,
            id,
            t: ns(at.ticks),
            prev: at.prev.map_or(f64::NEG_INFINITY, ns),
            prev_probe: at.prev_probe,
            loc: li,
            ord,
            role,
            index,
        });
    }
}

/// What a pairing learned of the machine from the measured times: the
/// least costs and the threads at once. A trace rewritten from the
/// measured one, whose times were partly made up, takes them from the
/// measured pairing.
#[derive(Clone, Debug)]
pub struct MachineCosts {
    /// Per object kind, the least measured delay from a post to the
    /// completion of a wait that it decided (the wake-up delay), and from
    /// the start of a wait (the previous event) to its completion where
    /// that decided it (the wait's own cost), ns; infinite if unknown.
    pub latency: [f64; Object::COUNT],
    /// See `latency`; by the kind of the previous event's probe: enter,
    /// leave, other.
    pub own: [[f64; 3]; Object::COUNT],
    /// By process (index in the experiment): the most threads it created
    /// that ran at once, from their first to their last event.
    pub threads_at_once: Vec<u32>,
    /// The least measured time from a lock release to the event after it
    /// (the release's probe and the rest of the unlock), ns; infinite if
    /// unknown.
    pub unlock: f64,
}

impl Default for MachineCosts {
    fn default() -> MachineCosts {
        MachineCosts {
            latency: [f64::INFINITY; Object::COUNT],
            own: [[f64::INFINITY; 3]; Object::COUNT],
            threads_at_once: Vec::new(),
            unlock: f64::INFINITY,
        }
    }
}

/// The result of pairing: per location, one [`Sync`] per sync event in
/// order; per communicator, how many locations took part in each of its
/// collectives.
#[derive(Debug, Default)]
pub struct Pairing {
    /// By location, in event order.
    pub syncs: Vec<Vec<Sync>>,
    /// By communicator: each participating location's collective count,
    /// sorted.
    collectives: HashMap<u64, Vec<u64>>,
    /// The least costs and the threads at once.
    pub learned: MachineCosts,
    /// Problems met while reading.
    pub warnings: Vec<String>,
    /// By location: whether its writer's summary stood in for reading it
    /// (no synchronization on shared objects, collectives counted).
    pub summarized: Vec<bool>,
}

impl Pairing {
    /// What the `n`-th sync event of location `loc` does (nothing, if
    /// pairing did not list it).
    pub fn sync(&self, loc: usize, n: usize) -> Sync {
        self.syncs
            .get(loc)
            .and_then(|s| s.get(n))
            .copied()
            .unwrap_or_default()
    }

    /// How many locations took part in the `seq`-th collective on `comm`.
    pub fn members(&self, comm: u64, seq: u64) -> u32 {
        self.collectives.get(&comm).map_or(1, |counts| {
            (counts.len() - counts.partition_point(|&c| c <= seq)) as u32
        })
    }
}

/// Approximated request times of lock acquisitions, by (location index,
/// sync event number): the order in which a liberal pairing grants a lock.
pub type Requests = parallax_view::fasthash::FastMap<(usize, usize), f64>;

/// Lists and pairs the synchronization events of `locs`.
pub fn pair(locs: &[Loc], t0: f64, exec: Executor) -> Pairing {
    pair_with(locs, t0, exec, None)
}

/// Like [`pair`], but a location whose writer summarized its file with no
/// synchronization on shared objects is not read: its collectives are
/// counted from the summary. A replay on this pairing must check that
/// each such location's events agree with its summary
/// ([`Pairing::summarized`]).
pub fn pair_summarized(locs: &[Loc], t0: f64, exec: Executor) -> Pairing {
    list_and_pair(locs, t0, exec, None, true)
}

/// Like [`pair`]; with `requests`, every lock is granted first come, first
/// served in the order of those request times (where each acquisition has
/// one) instead of the measured order: each acquisition waits for the
/// release that ends the critical section granted before it.
pub fn pair_with(locs: &[Loc], t0: f64, exec: Executor, requests: Option<&Requests>) -> Pairing {
    list_and_pair(locs, t0, exec, requests, false)
}

fn list_and_pair(
    locs: &[Loc],
    t0: f64,
    exec: Executor,
    requests: Option<&Requests>,
    summaries: bool,
) -> Pairing {
    // Per-location pass: the sync events and the collective counts.
    type Listed = (Vec<ListedEvent>, BTreeMap<u64, u64>, Option<String>, f64);
    let summary = |li: usize| {
        let s = locs[li].summary.as_ref()?;
        (summaries && s.syncs == 0).then_some(s)
    };
    let listed: Vec<Listed> = exec.map_locs(locs, |li| {
        let loc = &locs[li];
        if let Some(s) = summary(li) {
            return (
                Vec::new(),
                s.collectives.iter().copied().collect(),
                None,
                f64::INFINITY,
            );
        }
        // As many as the writer counted, so that the list is not copied as
        // it grows: a hint, believed up to what the file can hold (a
        // synchronization record takes at least three bytes) and to a
        // bound, past which the list grows as it goes.
        let hint = loc
            .summary
            .as_ref()
            .map_or(0, |s| s.syncs.min(s.bytes / 3).min(1 << 20));
        let mut recs = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
        let mut colls = BTreeMap::new();
        let mut unlock = f64::INFINITY;
        // Times in ticks, converted only for the sync events: most events
        // are enters and leaves, which only their successors look at.
        let r = trace::walk_others(loc, |kind, at, next| {
            if let (EventKind::LockRelease { .. }, Some(n)) = (kind, next) {
                unlock = unlock.min(loc.clock.ns(n) - loc.clock.ns(at.ticks));
            }
            list(kind, at, loc, li, t0, &mut recs, &mut colls);
        });
        let warning = match r {
            Ok(None) => None,
            Ok(Some(e)) | Err(e) => Some(e.to_string()),
        };
        (recs, colls, warning, unlock)
    });
    // Exchange: every object's events in one place, in measured order.
    let mut out = Pairing {
        summarized: (0..locs.len()).map(|li| summary(li).is_some()).collect(),
        ..Pairing::default()
    };
    let mut lists = Vec::with_capacity(listed.len());
    let mut lens = Vec::with_capacity(listed.len());
    for (recs, colls, warning, unlock) in listed {
        out.learned.unlock = out.learned.unlock.min(unlock);
        lens.push(recs.len());
        lists.push(recs);
        for (comm, c) in colls {
            out.collectives.entry(comm).or_default().push(c);
        }
        out.warnings.extend(warning);
    }
    for counts in out.collectives.values_mut() {
        counts.sort_unstable();
    }
    let (objects, mut all) = by_object(lists);
    // Only now that the lists are gone: at the peak, the grouped events
    // and the pairing, not the lists too.
    out.syncs = lens.iter().map(|&n| vec![Sync::default(); n]).collect();
    out.learned.threads_at_once = threads_at_once(locs, &objects, &all);
    let mut learned = [ObjectCosts::default(); Object::COUNT];
    let mut singles: Vec<(Object, (f64, f64, u8))> = Vec::new();
    for &((object, id), span) in &objects {
        let recs = &mut all[span.0..span.1];
        // Producers first at equal times: a release recorded in the same
        // tick as the next acquisition came before it.
        recs.sort_by(|a, b| {
            a.t.total_cmp(&b.t)
                .then(a.rank().cmp(&b.rank()))
                .then(a.loc.cmp(&b.loc))
                .then(a.ord.cmp(&b.ord))
        });
        // The costs are learned from the measured pairing: a re-paired
        // wait's measured times belong to another partner.
        let (l, single) = pair_object(object, id, recs, &mut out.syncs);
        learned[object as usize].merge(&l);
        singles.extend(single.map(|w| (object, w)));
        if let (Object::Lock, Some(req)) = (object, requests) {
            let before = partners(recs, &out.syncs);
            for r in recs.iter() {
                out.syncs[r.loc][r.ord] = Sync::default();
            }
            let recs = first_come_first_served(recs.to_vec(), req);
            pair_object(object, id, &recs, &mut out.syncs);
            for (k, p) in partners(&recs, &out.syncs) {
                out.syncs[k.0][k.1].repaired = before.get(&k) != Some(&p);
            }
        }
    }
    for (object, w) in singles {
        learned[object as usize].judge(w);
    }
    for (k, l) in learned.iter().enumerate() {
        out.learned.latency[k] = l.latency;
        out.learned.own[k] = l.own;
    }
    out
}

/// An object and where its events lie in the list of all.
type Span = ((Object, u64), (usize, usize));

/// Every location's listed events grouped by object: the objects in key
/// order, each with its span of the list, which holds each object's events
/// in location order (a counting sort: one lookup and one move per event).
fn by_object(lists: Vec<Vec<ListedEvent>>) -> (Vec<Span>, Vec<ListedEvent>) {
    let mut slots: FastMap<(Object, u64), usize> = FastMap::default();
    let mut counts: Vec<usize> = Vec::new();
    // Objects are far fewer than 2^32; a slot a listed event.
    let mut slot_of: Vec<u32> = Vec::with_capacity(lists.iter().map(Vec::len).sum());
    for r in lists.iter().flatten() {
        let next = slots.len();
        let slot = *slots.entry((r.object, r.id)).or_insert(next);
        if slot == counts.len() {
            counts.push(0);
        }
        counts[slot] += 1;
        slot_of.push(slot as u32);
    }
    let mut keys: Vec<((Object, u64), usize)> = slots.into_iter().collect();
    keys.sort_unstable_by_key(|&(k, _)| k);
    let mut start = vec![0; counts.len()];
    let mut objects = Vec::with_capacity(keys.len());
    let mut at = 0;
    for (key, slot) in keys {
        start[slot] = at;
        objects.push((key, (at, at + counts[slot])));
        at += counts[slot];
    }
    let Some(&first) = lists.iter().flatten().next() else {
        return (objects, Vec::new());
    };
    let mut all = vec![first; at];
    for (r, &slot) in lists.iter().flatten().zip(&slot_of) {
        let i = &mut start[slot as usize];
        all[*i] = *r;
        *i += 1;
    }
    (objects, all)
}

/// By process, the most created threads alive at once: each from its
/// start (the wait on its creation) to its end (the post its join waits
/// for).
fn threads_at_once(locs: &[Loc], objects: &[Span], all: &[ListedEvent]) -> Vec<u32> {
    let processes = locs.iter().map(|l| l.process + 1).max().unwrap_or(0);
    let mut changes: Vec<(usize, f64, i32)> = Vec::new();
    for &((object, _), span) in objects {
        for r in &all[span.0..span.1] {
            let step = match (object, r.role) {
                (Object::ThreadStart, Role::Consumer) => 1,
                (Object::ThreadEnd, Role::Producer) => -1,
                _ => continue,
            };
            changes.push((locs[r.loc].process, r.t, step));
        }
    }
    // Ends before starts at equal times.
    changes.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut most = vec![0u32; processes];
    let mut alive = 0i64;
    let mut current = usize::MAX;
    for (p, _, step) in changes {
        if p != current {
            (current, alive) = (p, 0);
        }
        alive += step as i64;
        most[p] = most[p].max(alive.max(0) as u32);
    }
    most
}

/// Each consumer's producer as (location, event number), by the consumer's
/// (location, event number), under the pairing in `syncs`.
fn partners(
    recs: &[ListedEvent],
    syncs: &[Vec<Sync>],
) -> HashMap<(usize, usize), Option<(usize, usize)>> {
    let mut producers: HashMap<u64, (usize, usize)> = HashMap::new();
    for r in recs {
        if let Some((l, _)) = syncs[r.loc][r.ord].posts() {
            producers.insert(l.seq, (r.loc, r.ord));
        }
    }
    recs.iter()
        .filter(|r| r.role != Role::Producer)
        .map(|r| {
            let p = syncs[r.loc][r.ord]
                .needs()
                .and_then(|l| producers.get(&l.seq).copied());
            ((r.loc, r.ord), p)
        })
        .collect()
}

/// A lock's events re-sequenced as critical sections in the order of
/// their requests: each acquisition followed by its own release (the next
/// release on its location), so that "the release just before" is the
/// previous holder's. Without a request time for every acquisition the
/// measured sequence stays.
fn first_come_first_served(recs: Vec<ListedEvent>, req: &Requests) -> Vec<ListedEvent> {
    let mut acquisitions: Vec<(f64, usize)> = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        if r.role != Role::Producer {
            match req.get(&(r.loc, r.ord)) {
                Some(&t) => acquisitions.push((t, i)),
                None => return recs,
            }
        }
    }
    acquisitions.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(recs[a.1].loc.cmp(&recs[b.1].loc))
            .then(recs[a.1].ord.cmp(&recs[b.1].ord))
    });
    // Each location's releases, by event number.
    let mut releases: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, r) in recs.iter().enumerate() {
        if r.role == Role::Producer {
            releases.entry(r.loc).or_default().push(i);
        }
    }
    // A location's requests are in its own order, so a cursor per
    // location finds each release.
    let mut cursor: HashMap<usize, usize> = HashMap::new();
    let mut used = vec![false; recs.len()];
    let mut order = Vec::with_capacity(recs.len());
    for &(_, a) in &acquisitions {
        order.push(a);
        used[a] = true;
        let mine = releases.get(&recs[a].loc).map_or(&[][..], |v| v.as_slice());
        let c = cursor.entry(recs[a].loc).or_insert(0);
        while *c < mine.len() && recs[mine[*c]].ord < recs[a].ord {
            *c += 1;
        }
        if let Some(&rel) = mine.get(*c) {
            order.push(rel);
            used[rel] = true;
            *c += 1;
        }
    }
    order.extend((0..recs.len()).filter(|&i| !used[i]));
    order.into_iter().map(|i| recs[i]).collect()
}

/// What the waits on shared objects of one kind showed of their costs.
#[derive(Clone, Copy)]
struct ObjectCosts {
    /// The least delay from a post to the completion of a wait that it
    /// decided, and from a wait's start (by the probe that started it) to
    /// its completion where that decided it, ns.
    latency: f64,
    own: [f64; 3],
    /// The least of each over all waits.
    min_a: f64,
    min_b: f64,
}

impl Default for ObjectCosts {
    fn default() -> ObjectCosts {
        ObjectCosts {
            latency: f64::INFINITY,
            own: [f64::INFINITY; 3],
            min_a: f64::INFINITY,
            min_b: f64::INFINITY,
        }
    }
}

impl ObjectCosts {
    /// Counts wait `w` (delay from the post, from the start, the start's
    /// probe) as decided by whichever side is closer to its least.
    fn judge(&mut self, w: (f64, f64, u8)) {
        let (a, b, probe) = w;
        // A wait with no start (a thread's first event) is decided by its
        // post.
        if b.is_infinite() || a - self.min_a <= b - self.min_b {
            self.latency = self.latency.min(a);
        } else {
            let o = &mut self.own[probe as usize];
            *o = o.min(b);
        }
    }

    fn merge(&mut self, o: &ObjectCosts) {
        self.latency = self.latency.min(o.latency);
        for (a, b) in self.own.iter_mut().zip(o.own) {
            *a = a.min(b);
        }
        self.min_a = self.min_a.min(o.min_a);
        self.min_b = self.min_b.min(o.min_b);
    }
}

/// Pairs the events of one object, sorted by measured time; returns what
/// its waits showed of their costs, and its wait if it had only one (one
/// wait alone cannot tell which side decided it: it is judged against
/// the least values of all objects of its kind).
fn pair_object(
    object: Object,
    id: u64,
    recs: &[ListedEvent],
    syncs: &mut [Vec<Sync>],
) -> (ObjectCosts, Option<(f64, f64, u8)>) {
    let link = |seq: u64| Link { object, id, seq };
    let mut readers: Vec<u32> = Vec::new();
    let mut producers: Vec<&ListedEvent> = Vec::new();
    let mut needs = |r: &ListedEvent, p: Option<usize>, readers: &mut Vec<u32>| {
        if let Some(p) = p {
            readers[p] += 1;
            syncs[r.loc][r.ord].set_needs(link(p as u64));
        }
    };
    match object {
        Object::Lock | Object::Value => {
            for r in recs {
                match r.role {
                    Role::Producer => {
                        producers.push(r);
                        readers.push(0);
                    }
                    Role::Consumer => {
                        let last = producers.len().checked_sub(1);
                        needs(r, last, &mut readers);
                    }
                }
            }
        }
        Object::Sem => {
            let mut free: VecDeque<usize> = VecDeque::new();
            for r in recs {
                match r.role {
                    Role::Producer => {
                        free.push_back(producers.len());
                        producers.push(r);
                        readers.push(0);
                    }
                    Role::Consumer => {
                        let p = free.pop_front();
                        needs(r, p, &mut readers);
                    }
                }
            }
        }
        Object::SyncVar => {
            // The advances in measured order, with the highest index reached
            // so far, so that an await finds its first sufficient advance.
            let mut high: Vec<u64> = Vec::new();
            for r in recs {
                match r.role {
                    Role::Producer => {
                        let h = high.last().copied().unwrap_or(0).max(r.index);
                        high.push(h);
                        producers.push(r);
                        readers.push(0);
                    }
                    Role::Consumer => {
                        let p = high.partition_point(|&h| h < r.index);
                        needs(r, (p < producers.len()).then_some(p), &mut readers);
                    }
                }
            }
        }
        Object::ThreadStart | Object::ThreadEnd => {
            // One producer per token; consumers may come in any order.
            let p = recs.iter().position(|r| r.role == Role::Producer);
            if let Some(pi) = p {
                producers.push(&recs[pi]);
                readers.push(0);
            }
            for r in recs.iter().filter(|r| r.role != Role::Producer) {
                needs(r, p.map(|_| 0), &mut readers);
            }
        }
    }
    for (seq, (p, n)) in producers.iter().zip(readers).enumerate() {
        if n > 0 {
            syncs[p.loc][p.ord].set_posts(link(seq as u64), n);
        }
    }
    // Each completion is the later of the wait's start plus its own cost
    // and the post plus the wake-up delay: measured from the post (a) or
    // from the start (b), one of the two is exact. The instances closest
    // to the least of each say which side decided them; each side's
    // least decided value is returned (infinite if none).
    let waits: Vec<(f64, f64, u8)> = recs
        .iter()
        .filter_map(|r| {
            let l = syncs[r.loc][r.ord].needs()?;
            let p = producers[l.seq as usize];
            // A re-paired wait (liberal) may come before its post.
            (p.t <= r.t).then_some((r.t - p.t, r.t - r.prev, r.prev_probe))
        })
        .collect();
    let mut learned = ObjectCosts {
        min_a: waits.iter().map(|w| w.0).fold(f64::INFINITY, f64::min),
        min_b: waits.iter().map(|w| w.1).fold(f64::INFINITY, f64::min),
        ..ObjectCosts::default()
    };
    if let [single] = waits[..] {
        return (learned, Some(single));
    }
    for &w in &waits {
        learned.judge(w);
    }
    (learned, None)
}
