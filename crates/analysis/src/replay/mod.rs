//! Forward replay of all locations at once, with the exchange between them
//! as values posted under keys.
//!
//! A replay pass reads one location's events in order and, at an event
//! that depends on another location (a receive on its send, a barrier exit
//! on every arrival, a lock acquisition on the previous release), takes the
//! value that the other location posted under the event pair's key. If the
//! value is not there yet the pass reports itself blocked and is resumed
//! later. A [`Postings`] holds the posted values until every expected reader
//! took them, so memory is bounded by what is in flight, not by the trace.
//!
//! The values a pass computes depend only on its own events and on the
//! values it takes, never on when it runs, so every schedule (one thread,
//! a pool, ranks of an MPI job exchanging the posts) gives the same result.
//! When every unfinished location is blocked (a trace whose dependencies
//! form a cycle, or whose partner events were never recorded), the driver
//! forces the blocked event with the earliest measured time, which is again
//! independent of the schedule.
//!
//! Under the MPI executor, and on a pool of threads, the replay is
//! divided ([`divided`]): each member replays its share of the locations
//! against its own board and the members exchange what they posted.

use std::collections::VecDeque;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

mod divided;

use crate::executor::{Executor, Share};
use crate::wire::{Reader, Wire};

/// What a pass reports when it returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Status {
    /// Every event was processed.
    Done,
    /// Waiting for a value; `at_ns` is the measured time of the event
    /// that needs it (used to pick which blocked event to force).
    Blocked {
        /// Measured time of the blocked event.
        at_ns: f64,
    },
}

/// One location's replay.
pub trait LocationPass: Send {
    /// Key of a posted value.
    type Key: Eq + Hash + Send + Clone + Wire + Route;
    /// A posted value.
    type Value: Clone + Send;
    /// How posted values travel between the members of a divided replay.
    type Codec: Codec<Self::Value>;
    /// Processes events until done or blocked.
    fn resume(&mut self, board: &Postings<Self::Key, Self::Value>) -> Status;
    /// The next `resume` must process the blocked event without the value
    /// it waits for (its partner will never come).
    fn force(&mut self);
    /// The key whose value the pass waited for when `resume` last reported
    /// it blocked; `None` makes it wait for any new value.
    fn waiting_for(&self) -> Option<Self::Key>;
}

/// Where a key's readers are, when the key tells: the rank (process)
/// whose locations take it. An MPI replay keeps such a value on the
/// analysis rank that holds all of that rank's locations.
pub trait Route {
    /// The rank whose locations read the value, if only one's do.
    fn reader_rank(&self) -> Option<u32> {
        None
    }
}

/// The encoding of a replay's values between its members (MPI ranks, a
/// pool's workers): each member makes one for the whole replay, so an
/// encoding may refer to what earlier messages carried.
pub trait Codec<V> {
    /// The codec of member `me`.
    fn new(me: u32) -> Self;
    /// Appends `v` to a message.
    fn put(&mut self, v: &V, out: &mut Vec<u8>);
    /// Decodes a value of member `from`'s message.
    fn get(&mut self, from: u32, r: &mut Reader<'_>) -> V;
    /// Called by every member at the same round, now and then: what the
    /// codec learnt from earlier messages may be forgotten.
    fn forget(&mut self) {}
}

/// Values sent as their [`Wire`] encoding, each on its own.
#[derive(Debug)]
pub struct AsIs;

impl<V: Wire> Codec<V> for AsIs {
    fn new(_: u32) -> Self {
        AsIs
    }
    fn put(&mut self, v: &V, out: &mut Vec<u8>) {
        v.put(out)
    }
    fn get(&mut self, _: u32, r: &mut Reader<'_>) -> V {
        V::get(r)
    }
}

struct Entry<V> {
    value: Option<V>,
    /// Contributions in all, and still expected before the value is
    /// complete.
    expected: u32,
    missing: u32,
    /// Takes still expected before the entry is dropped.
    readers: u32,
    /// Under MPI: every rank holds the entry, so contributions and takes
    /// must be told to the others.
    shared: bool,
}

/// Values posted by passes for other passes.
pub struct Postings<K, V> {
    map: Mutex<Entries<K, V>>,
    combine: fn(&mut V, &V),
    version: AtomicU64,
    /// Which passes wait for what, and which can run.
    sched: Mutex<Sched<K>>,
    /// Set while a replay across ranks runs.
    logging: AtomicBool,
    /// Then, ascending: the ranks whose locations are all on this analysis
    /// rank (the values only they read stay here). A list, not a table by
    /// rank: ranks are whatever the files say, up to 2^32 - 1.
    whole: std::sync::OnceLock<Vec<u32>>,
    log: Mutex<Log<K, V>>,
}

/// What other ranks must learn at the next exchange: the keys of entries
/// made since the last one (sent whole, as they are then, if still held:
/// one taken by all its readers on this rank is never sent), the
/// contributions to shared entries, merged per key, and the takes of
/// shared entries.
struct Log<K, V> {
    /// Keys of new entries that other ranks read.
    fresh: Vec<K>,
    /// Contributions to shared entries since the last exchange: merged
    /// value and how many.
    merged: parallax_view::fasthash::FastMap<K, (V, u32)>,
    taken: Vec<K>,
    contributions: u64,
}

type Entries<K, V> = parallax_view::fasthash::FastMap<K, Entry<V>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<K: Eq + Hash + Clone + Route, V: Clone> Postings<K, V> {
    /// An empty board; contributions to one key are merged by `combine`,
    /// which must not depend on their order (a maximum, a sum).
    pub fn new(combine: fn(&mut V, &V)) -> Postings<K, V> {
        Postings {
            map: Mutex::new(Default::default()),
            combine,
            version: AtomicU64::new(0),
            sched: Mutex::new(Sched::default()),
            logging: AtomicBool::new(false),
            whole: std::sync::OnceLock::new(),
            log: Mutex::new(Log {
                fresh: Vec::new(),
                merged: Default::default(),
                taken: Vec::new(),
                contributions: 0,
            }),
        }
    }

    /// Posts `value` under `key` for `readers` takes.
    pub fn post(&self, key: K, value: V, readers: u32) {
        self.contribute(key, value, 1, readers);
    }

    /// Adds one of `expected` contributions to `key`; the merged value can
    /// be taken `readers` times once all have arrived. Every contributor
    /// must give the same `expected` and `readers`.
    pub fn contribute(&self, key: K, value: V, expected: u32, readers: u32) {
        if readers == 0 {
            return;
        }
        let logging = self.logging.load(Ordering::Relaxed);
        let mut m = lock(&self.map);
        let e = match m.get_mut(&key) {
            Some(e) => e,
            None => {
                if logging && !self.stays(&key) {
                    lock(&self.log).fresh.push(key.clone());
                }
                m.entry(key.clone()).or_insert(Entry {
                    value: None,
                    expected: expected.max(1),
                    missing: expected.max(1),
                    readers,
                    shared: false,
                })
            }
        };
        if e.shared {
            // Merged before sending: a merge does not depend on order, and
            // only the merged value's parts travel.
            let mut l = lock(&self.log);
            match l.merged.get_mut(&key) {
                Some((v, n)) => {
                    (self.combine)(v, &value);
                    *n += 1;
                }
                None => {
                    l.merged.insert(key.clone(), (value.clone(), 1));
                }
            }
            l.contributions += 1;
        }
        self.add(&key, e, &value, 1);
    }

    /// Merges one contribution into `e`; wakes waiting workers when that
    /// completes it.
    fn add(&self, key: &K, e: &mut Entry<V>, value: &V, count: u32) {
        match &mut e.value {
            Some(v) => (self.combine)(v, value),
            None => e.value = Some(value.clone()),
        }
        e.missing = e.missing.saturating_sub(count);
        if e.missing == 0 {
            self.completed(key);
        }
    }

    /// An entry became complete (called with the map locked): the passes
    /// waiting for it, and those waiting for anything, can run.
    fn completed(&self, key: &K) {
        self.version.fetch_add(1, Ordering::SeqCst);
        let mut s = lock(&self.sched);
        let s = &mut *s;
        let mut woke = std::mem::take(&mut s.any);
        if let Some(v) = s.by_key.remove(key) {
            woke.extend(v);
        }
        for i in woke {
            s.parked[i] = None;
            s.ready.push_back(i);
        }
    }

    /// Parks pass `i`, blocked at measured time `at_ns` waiting for `key`
    /// (or for anything, if `None`, after the board's version `seen`),
    /// unless what it waits for came in the meantime; then it can run again.
    fn park(&self, i: usize, at_ns: f64, key: Option<K>, seen: u64) {
        // Completions happen under the entries' lock: held until the
        // schedule is.
        let m = lock(&self.map);
        let here = match &key {
            Some(k) => m.get(k).is_some_and(|e| e.missing == 0),
            None => self.version.load(Ordering::SeqCst) != seen,
        };
        let mut s = lock(&self.sched);
        drop(m);
        if here {
            s.ready.push_back(i);
            return;
        }
        s.parked[i] = Some(at_ns);
        match key {
            Some(k) => s.by_key.entry(k).or_default().push(i),
            None => s.any.push(i),
        }
    }

    /// Whether only locations of this analysis rank read `key`'s value.
    fn stays(&self, key: &K) -> bool {
        let whole = self.whole.get().map_or(&[][..], Vec::as_slice);
        key.reader_rank()
            .is_some_and(|r| whole.binary_search(&r).is_ok())
    }

    /// Takes the complete value under `key`, if it is there.
    pub fn take(&self, key: &K) -> Option<V> {
        let mut m = lock(&self.map);
        let e = m.get_mut(key)?;
        if e.missing > 0 {
            return None;
        }
        if e.shared {
            lock(&self.log).taken.push(key.clone());
        }
        e.readers -= 1;
        if e.readers == 0 {
            m.remove(key).and_then(|e| e.value)
        } else {
            e.value.clone()
        }
    }

    /// Entries still held (values posted but not taken by every reader).
    pub fn pending(&self) -> usize {
        lock(&self.map).len()
    }
}

/// What a replay reports about its own run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Blocked events processed without their partner's value.
    pub forced: u64,
    /// Values posted that no pass took (partners never recorded).
    pub unclaimed: usize,
}

/// The replay's schedule: the passes that can run, and the parked ones
/// with what they wait for (a value's key, or anything new).
struct Sched<K> {
    ready: VecDeque<usize>,
    by_key: parallax_view::fasthash::FastMap<K, Vec<usize>>,
    any: Vec<usize>,
    /// A parked pass's blocked event time; `None` for the others.
    parked: Vec<Option<f64>>,
    /// Passes to force at their next run.
    force: Vec<bool>,
    forced: u64,
}

impl<K> Default for Sched<K> {
    fn default() -> Self {
        Sched {
            ready: VecDeque::new(),
            by_key: Default::default(),
            any: Vec::new(),
            parked: Vec::new(),
            force: Vec::new(),
            forced: 0,
        }
    }
}

impl<K: Eq + Hash> Sched<K> {
    /// Every one of `n` passes ready to run.
    fn start(&mut self, n: usize) {
        *self = Sched {
            ready: (0..n).collect(),
            parked: vec![None; n],
            force: vec![false; n],
            ..Sched::default()
        };
    }

    /// The parked pass with the least (blocked time, location), `ids`
    /// giving each pass's location.
    fn earliest(&self, ids: &[usize]) -> Option<(f64, usize)> {
        self.parked
            .iter()
            .zip(ids)
            .filter_map(|(b, &loc)| b.map(|t| (t, loc)))
            .min_by(earlier)
    }

    /// Unparks pass `i` to run it without what it waits for.
    fn force(&mut self, i: usize) {
        self.parked[i] = None;
        self.any.retain(|&j| j != i);
        self.by_key.retain(|_, v| {
            v.retain(|&j| j != i);
            !v.is_empty()
        });
        self.force[i] = true;
        self.forced += 1;
        self.ready.push_back(i);
    }
}

/// Orders blocked events by (measured time, location): the first is forced.
fn earlier(a: &(f64, usize), b: &(f64, usize)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Replays `passes` (every location, in location order) to the end with
/// `exec`'s threads. Under MPI use [`run_share`].
pub fn run<P: LocationPass>(
    passes: &mut [P],
    board: &Postings<P::Key, P::Value>,
    exec: Executor,
) -> Outcome {
    run_share(passes, &Share::all(passes.len()), board, exec)
}

/// Replays `passes`, the passes of locations `ids` (this process's share,
/// from [`Executor::share`]), to the end. Every rank of an MPI job calls
/// it with its own share; the outcome is the job's, the same on all.
pub fn run_share<P: LocationPass>(
    passes: &mut [P],
    ids: &Share,
    board: &Postings<P::Key, P::Value>,
    exec: Executor,
) -> Outcome {
    assert_eq!(passes.len(), ids.len(), "one location index per pass");
    match exec {
        Executor::Threads(k) if k > 1 && passes.len() > 1 => {
            if ids.parts.len() > 1 {
                divided::run_parts(passes, &ids.parts, board)
            } else {
                divided::run_parts(passes, &ids.split(k), board)
            }
        }
        #[cfg(feature = "mpi")]
        Executor::Mpi => divided::run_ranks(passes, ids, board, &divided::MpiRanks),
        _ => run_alone(passes, ids, board),
    }
}

/// One process replays all of `passes`: when none can go on, the blocked
/// event with the least (measured time, location) is forced, the choice
/// any division of the work comes to.
fn run_alone<P: LocationPass>(
    passes: &mut [P],
    ids: &[usize],
    board: &Postings<P::Key, P::Value>,
) -> Outcome {
    lock(&board.sched).start(passes.len());
    loop {
        run_ready(passes, board);
        let mut s = lock(&board.sched);
        let Some((_, loc)) = s.earliest(ids) else {
            break;
        };
        let i = ids.binary_search(&loc).expect("a pass of this share");
        s.force(i);
    }
    Outcome {
        forced: lock(&board.sched).forced,
        unclaimed: board.pending(),
    }
}

/// Runs the passes that can run, each until it blocks (then it is parked
/// until what it waits for comes), until none can.
fn run_ready<P: LocationPass>(passes: &mut [P], board: &Postings<P::Key, P::Value>) {
    loop {
        let next = {
            let mut s = lock(&board.sched);
            s.ready
                .pop_front()
                .map(|i| (i, std::mem::take(&mut s.force[i])))
        };
        let Some((i, force)) = next else {
            return;
        };
        let p = &mut passes[i];
        if force {
            p.force();
        }
        let seen = board.version.load(Ordering::SeqCst);
        if let Status::Blocked { at_ns } = p.resume(board) {
            board.park(i, at_ns, p.waiting_for(), seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Route for u64 {}

    /// A scripted pass: posts and takes at given measured times.
    #[derive(Clone, Debug)]
    enum Op {
        Post(u64, u64),
        Take(u64),
        /// Blocks without naming what it waits for, until `key` is there.
        Poll(u64),
    }

    #[derive(Clone, Debug)]
    struct Script {
        ops: Vec<(f64, Op)>,
        at: usize,
        force: bool,
        missing: Option<u64>,
        /// What each take got (`None`: forced).
        got: Vec<Option<u64>>,
    }

    impl Script {
        fn new(ops: Vec<(f64, Op)>) -> Script {
            Script {
                ops,
                at: 0,
                force: false,
                missing: None,
                got: Vec::new(),
            }
        }
    }

    impl LocationPass for Script {
        type Key = u64;
        type Value = u64;
        type Codec = AsIs;

        fn resume(&mut self, board: &Postings<u64, u64>) -> Status {
            while let Some((t, op)) = self.ops.get(self.at).cloned() {
                match op {
                    Op::Post(k, v) => board.post(k, v, 1),
                    Op::Take(k) | Op::Poll(k) => match board.take(&k) {
                        Some(v) => self.got.push(Some(v)),
                        None if self.force => self.got.push(None),
                        None => {
                            self.missing = matches!(op, Op::Take(_)).then_some(k);
                            return Status::Blocked { at_ns: t };
                        }
                    },
                }
                self.force = false;
                self.at += 1;
            }
            Status::Done
        }

        fn force(&mut self) {
            self.force = true;
        }

        fn waiting_for(&self) -> Option<u64> {
            self.missing
        }
    }

    fn replay(scripts: &[Script], exec: Executor) -> (Vec<Vec<Option<u64>>>, Outcome) {
        let mut passes = scripts.to_vec();
        let board = Postings::new(|a: &mut u64, b: &u64| *a += *b);
        let outcome = run(&mut passes, &board, exec);
        (passes.into_iter().map(|p| p.got).collect(), outcome)
    }

    /// Every executor gives the sequential result.
    fn check(scripts: &[Script]) -> (Vec<Vec<Option<u64>>>, Outcome) {
        let seq = replay(scripts, Executor::Sequential);
        for k in [2, 3, 8] {
            assert_eq!(replay(scripts, Executor::Threads(k)), seq, "{k} threads");
        }
        seq
    }

    #[test]
    fn a_pipeline_passes_values_along() {
        // Pass i takes what pass i-1 posted and posts it on, plus i.
        let n = 40u64;
        let mut scripts = vec![Script::new(vec![(0.0, Op::Post(0, 1))])];
        for i in 1..n {
            let ops = (0..50u64)
                .flat_map(|r| {
                    let key = |j: u64| 1000 * r + j;
                    let t = r as f64;
                    let mut v = vec![(t, Op::Take(key(i - 1)))];
                    v.push((t, Op::Post(key(i), i)));
                    v
                })
                .collect();
            scripts.push(Script::new(ops));
        }
        for r in 1..50u64 {
            scripts[0].ops.push((r as f64, Op::Post(1000 * r, 1)));
        }
        let (got, outcome) = check(&scripts);
        assert_eq!(outcome.forced, 0);
        assert_eq!(outcome.unclaimed, 50, "the last pass's posts go unread");
        assert_eq!(got[5], vec![Some(4); 50]);
    }

    #[test]
    fn a_cycle_is_broken_at_its_earliest_event() {
        // Each waits for the other: the earlier wait (pass 1, at 3 ns) is
        // forced, then pass 0 gets its value.
        let scripts = vec![
            Script::new(vec![(5.0, Op::Take(1)), (6.0, Op::Post(0, 7))]),
            Script::new(vec![(3.0, Op::Take(0)), (4.0, Op::Post(1, 9))]),
        ];
        let (got, outcome) = check(&scripts);
        assert_eq!(got, vec![vec![Some(9)], vec![None]]);
        assert_eq!(outcome.forced, 1);
        assert_eq!(outcome.unclaimed, 1, "pass 0's post comes too late");
    }

    #[test]
    fn a_pass_that_names_no_key_is_woken_by_any_value() {
        let scripts = vec![
            Script::new(vec![(1.0, Op::Poll(3)), (2.0, Op::Take(4))]),
            Script::new(vec![(0.5, Op::Post(9, 1)), (0.6, Op::Post(3, 2))]),
            Script::new(vec![(0.7, Op::Take(9)), (0.8, Op::Post(4, 5))]),
        ];
        let (got, outcome) = check(&scripts);
        assert_eq!(got, vec![vec![Some(2), Some(5)], vec![], vec![Some(1)]]);
        assert_eq!(outcome, Outcome::default());
    }
}
