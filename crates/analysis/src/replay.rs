//! Forward replay of all locations at once, with the exchange between them
//! as values posted under keys.
//!
//! A replay pass reads one location's events in order and, at an event
//! that depends on another location (a receive on its send, a barrier exit
//! on every arrival, a lock acquisition on the previous release), takes the
//! value that the other location posted under the event pair's key. If the
//! value is not there yet the pass reports itself blocked and is resumed
//! later. A [`Board`] holds the posted values until every expected reader
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
//! Under the MPI executor each rank replays its share of the locations
//! against its own board ([`run_share`]). Passes run until none of them can
//! go on; then the ranks exchange everything posted and taken since the
//! last round, so every board sees every contribution and every take and
//! drops an entry once its last reader, wherever it runs, took it. A round
//! in which nobody posted anything is a global standstill: the blocked
//! event with the least (measured time, location) over all ranks is forced,
//! exactly the choice one process would make.

use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

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
pub trait Pass: Send {
    /// Key of a posted value.
    type Key: Eq + Hash + Send + Clone + Wire + Route;
    /// A posted value.
    type Value: Clone + Send + Wire;
    /// Processes events until done or blocked; returns whether at least
    /// one event was processed.
    fn resume(&mut self, board: &Board<Self::Key, Self::Value>) -> (Status, bool);
    /// The next `resume` must process the blocked event without the value
    /// it waits for (its partner will never come).
    fn force(&mut self);
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
pub struct Board<K, V> {
    map: Mutex<crate::fasthash::FastMap<K, Entry<V>>>,
    combine: fn(&mut V, &V),
    version: AtomicU64,
    /// Workers asleep on `cond` (or about to be): completions notify only
    /// when there are some, a wake-up being a system call.
    sleepers: AtomicU32,
    wake: Mutex<()>,
    cond: Condvar,
    /// Set while a replay across ranks runs.
    logging: AtomicBool,
    log: Mutex<Log<K, V>>,
}

/// What other ranks must learn at the next exchange: the keys of entries
/// made since the last one (sent whole, as they are then, if still held:
/// one taken by all its readers on this rank is never sent), and encoded
/// operations on shared entries: tag 0, a contribution (key, value);
/// tag 1, a take (key).
struct Log<K, V> {
    fresh: Vec<K>,
    /// Ranks whose locations are all on this analysis rank.
    whole: Share,
    buf: Vec<u8>,
    contributions: u64,
    put: Option<fn(&K, &V, &mut Vec<u8>)>,
    key: Option<fn(&K, &mut Vec<u8>)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<K: Eq + Hash + Clone, V: Clone> Board<K, V> {
    /// An empty board; contributions to one key are merged by `combine`,
    /// which must not depend on their order (a maximum, a sum).
    pub fn new(combine: fn(&mut V, &V)) -> Board<K, V> {
        Board {
            map: Mutex::new(Default::default()),
            combine,
            version: AtomicU64::new(0),
            sleepers: AtomicU32::new(0),
            wake: Mutex::new(()),
            cond: Condvar::new(),
            logging: AtomicBool::new(false),
            log: Mutex::new(Log {
                fresh: Vec::new(),
                whole: Share::default(),
                buf: Vec::new(),
                contributions: 0,
                put: None,
                key: None,
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
                if logging {
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
            let mut l = lock(&self.log);
            let l = &mut *l;
            if let Some(put) = l.put {
                l.buf.push(0);
                put(&key, &value, &mut l.buf);
                l.contributions += 1;
            }
        }
        self.add(e, &value);
    }

    /// Merges one contribution into `e`; wakes waiting workers when that
    /// completes it.
    fn add(&self, e: &mut Entry<V>, value: &V) {
        match &mut e.value {
            Some(v) => (self.combine)(v, value),
            None => e.value = Some(value.clone()),
        }
        e.missing = e.missing.saturating_sub(1);
        if e.missing == 0 {
            self.completed();
        }
    }

    fn completed(&self) {
        self.version.fetch_add(1, Ordering::SeqCst);
        // A worker counts itself a sleeper before it checks the version
        // (both sequentially consistent), so either it sees this change or
        // this sees it and notifies under `wake`, which it holds until it
        // waits.
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _w = lock(&self.wake);
            self.cond.notify_all();
        }
    }

    /// Takes the complete value under `key`, if it is there.
    pub fn take(&self, key: &K) -> Option<V> {
        let mut m = lock(&self.map);
        let e = m.get_mut(key)?;
        if e.missing > 0 {
            return None;
        }
        if e.shared {
            let mut l = lock(&self.log);
            let l = &mut *l;
            if let Some(put) = l.key {
                l.buf.push(1);
                put(key, &mut l.buf);
            }
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

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
impl<K: Eq + Hash + Clone + Wire + Route, V: Clone + Wire> Board<K, V> {
    /// Starts recording what other ranks must learn; values that only
    /// locations of `share` read stay here.
    fn start_log(&self, share: &Share) {
        let mut l = lock(&self.log);
        l.whole = share.clone();
        l.put = Some(|k, v, out| {
            k.put(out);
            v.put(out);
        });
        l.key = Some(|k, out| k.put(out));
        self.logging.store(true, Ordering::SeqCst);
    }

    /// What other ranks must learn since the last call: the operations on
    /// shared entries, then the entries made and still held (tag 2: key,
    /// value, expected, missing, readers left), which become shared; and
    /// how many contributions that is (none: nothing new).
    fn drain_log(&self) -> (Vec<u8>, u64) {
        let mut m = lock(&self.map);
        let mut l = lock(&self.log);
        // Operations first: they were encoded first, and a chain node they
        // sent may be named by number in an entry below.
        let mut out = std::mem::take(&mut l.buf);
        let mut contributions = std::mem::take(&mut l.contributions);
        for k in std::mem::take(&mut l.fresh) {
            let Some(e) = m.get_mut(&k) else { continue };
            if e.shared || k.reader_rank().is_some_and(|r| l.whole.has_whole(r)) {
                continue;
            }
            e.shared = true;
            out.push(2);
            k.put(&mut out);
            e.value.put(&mut out);
            (e.expected, e.missing, e.readers).put(&mut out);
            contributions += 1;
        }
        (out, contributions)
    }

    /// Entries held that every rank holds, and that only this one does.
    fn held(&self) -> (usize, usize) {
        let m = lock(&self.map);
        let shared = m.values().filter(|e| e.shared).count();
        (shared, m.len() - shared)
    }

    /// Applies another rank's news, in the order recorded.
    fn apply(&self, r: &mut Reader<'_>) {
        let mut m = lock(&self.map);
        while !r.is_empty() {
            match u8::get(r) {
                0 => {
                    let k = K::get(r);
                    let v = V::get(r);
                    if let Some(e) = m.get_mut(&k) {
                        self.add(e, &v);
                    }
                }
                1 => {
                    let k = K::get(r);
                    if let Some(e) = m.get_mut(&k) {
                        e.readers = e.readers.saturating_sub(1);
                        if e.readers == 0 {
                            m.remove(&k);
                        }
                    }
                }
                _ => {
                    let k = K::get(r);
                    let v = Option::<V>::get(r);
                    let (expected, missing, readers): (u32, u32, u32) = Wire::get(r);
                    match m.get_mut(&k) {
                        // Contributions made on several ranks in one
                        // round: none can have been taken yet.
                        Some(e) => {
                            e.shared = true;
                            if let Some(v) = v {
                                match &mut e.value {
                                    Some(x) => (self.combine)(x, &v),
                                    None => e.value = Some(v),
                                }
                            }
                            // Each side lacks what the other brought.
                            let before = e.missing;
                            e.missing = (before + missing).saturating_sub(e.expected);
                            e.readers = e.readers.min(readers);
                            if e.missing == 0 && before > 0 {
                                self.completed();
                            }
                        }
                        None => {
                            m.insert(
                                k,
                                Entry {
                                    value: v,
                                    expected,
                                    missing,
                                    readers,
                                    shared: true,
                                },
                            );
                            if missing == 0 {
                                self.completed();
                            }
                        }
                    }
                }
            }
        }
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

struct Shared {
    finished: bool,
    /// The board version each idle worker last scanned at; `None` while it
    /// works.
    idle_at: Vec<Option<u64>>,
    blocked: Vec<Option<f64>>,
}

/// Replays `passes` (every location, in location order) to the end with
/// `exec`'s threads. Under MPI use [`run_share`].
pub fn run<P: Pass>(passes: &mut [P], board: &Board<P::Key, P::Value>, exec: Executor) -> Outcome {
    run_share(passes, &Share::all(passes.len()), board, exec)
}

/// Replays `passes`, the passes of locations `ids` (this process's share,
/// from [`Executor::share`]), to the end. Every rank of an MPI job calls
/// it with its own share; the outcome is the job's, the same on all.
pub fn run_share<P: Pass>(
    passes: &mut [P],
    ids: &Share,
    board: &Board<P::Key, P::Value>,
    exec: Executor,
) -> Outcome {
    assert_eq!(passes.len(), ids.len(), "one location index per pass");
    let n = passes.len();
    let workers = match exec {
        Executor::Sequential => 1,
        Executor::Threads(k) => k.clamp(1, n.max(1)),
        #[cfg(feature = "mpi")]
        Executor::Mpi => return run_ranks(passes, ids, board),
    };
    let force: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let forced = AtomicU64::new(0);
    let shared = Mutex::new(Shared {
        finished: n == 0,
        idle_at: vec![None; workers],
        blocked: vec![None; n],
    });
    // Worker w owns a contiguous run of the passes: neighbouring locations
    // (ranks that exchange most, threads of one process) stay on one
    // worker, so fewer waits cross workers.
    let mut parts: Vec<Vec<(usize, &mut P)>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, p) in passes.iter_mut().enumerate() {
        parts[i * workers / n.max(1)].push((i, p));
    }
    let work = |w: usize, mine: Vec<(usize, &mut P)>| {
        worker(w, mine, board, &force, &forced, &shared);
    };
    if workers == 1 {
        for mine in parts {
            work(0, mine);
        }
    } else {
        std::thread::scope(|s| {
            for (w, mine) in parts.into_iter().enumerate() {
                s.spawn(move || work(w, mine));
            }
        });
    }
    Outcome {
        forced: forced.load(Ordering::Relaxed),
        unclaimed: board.pending(),
    }
}

/// The MPI replay: local rounds to a standstill, then an exchange of the
/// round's operations between all ranks, until every location is done.
#[cfg(feature = "mpi")]
fn run_ranks<P: Pass>(passes: &mut [P], ids: &Share, board: &Board<P::Key, P::Value>) -> Outcome {
    if crate::mpi::size() == 1 {
        return run(passes, board, Executor::Sequential);
    }
    board.start_log(ids);
    crate::wire::chain_numbers(true);
    let mut done = vec![false; passes.len()];
    let mut blocked: Vec<Option<f64>> = vec![None; passes.len()];
    let mut forced = 0u64;
    let me = crate::mpi::rank();
    let mut stats = ExchangeStats::default();
    let started = std::time::Instant::now();
    loop {
        loop {
            let seen = board.version.load(Ordering::SeqCst);
            let mut progressed = false;
            for (j, p) in passes.iter_mut().enumerate() {
                if done[j] {
                    continue;
                }
                let (status, moved) = p.resume(board);
                progressed |= moved;
                match status {
                    Status::Done => {
                        done[j] = true;
                        blocked[j] = None;
                    }
                    Status::Blocked { at_ns } => blocked[j] = Some(at_ns),
                }
            }
            if !progressed && board.version.load(Ordering::SeqCst) == seen {
                break;
            }
        }
        // Header: contributions made, then the earliest blocked event
        // (time, location) if any; then the operations.
        let (ops, posts) = board.drain_log();
        let earliest = blocked
            .iter()
            .zip(ids)
            .filter_map(|(b, &i)| b.map(|t| (t, i as u64)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut msg = Vec::with_capacity(ops.len() + 32);
        posts.put(&mut msg);
        earliest.put(&mut msg);
        msg.extend_from_slice(&ops);
        drop(ops);
        let t = std::time::Instant::now();
        let all = crate::mpi::all_gather(&msg);
        stats.rounds += 1;
        stats.sent += msg.len() as u64;
        stats.received += all.iter().map(|b| b.len() as u64).sum::<u64>() - msg.len() as u64;
        stats.waiting += t.elapsed().as_secs_f64();
        drop(msg);
        let mut total = 0u64;
        let mut pick: Option<(f64, u64)> = None;
        for (rank, buf) in all.iter().enumerate() {
            let mut r = Reader::new(buf);
            total += u64::get(&mut r);
            if let Some(e) = Option::<(f64, u64)>::get(&mut r) {
                if pick.is_none_or(|p| e.0.total_cmp(&p.0).then(e.1.cmp(&p.1)).is_lt()) {
                    pick = Some(e);
                }
            }
            if rank != me {
                crate::wire::chains_from(rank as u32);
                board.apply(&mut r);
            }
        }
        // Numbers given to chain nodes are forgotten now and then, by
        // every rank at the same round.
        if stats.rounds % 1024 == 0 {
            crate::wire::chain_numbers(true);
        }
        if total > 0 {
            continue;
        }
        // Nothing new anywhere: every rank is at a standstill.
        match pick {
            None => break,
            Some((_, i)) => {
                forced += 1;
                if let Ok(j) = ids.binary_search(&(i as usize)) {
                    blocked[j] = None;
                    passes[j].force();
                }
            }
        }
    }
    crate::wire::chain_numbers(false);
    // Values never taken: those every rank holds, and each rank's own.
    let (shared, own) = board.held();
    let unclaimed = shared
        + crate::mpi::all_gather(&crate::wire::encode(&own))
            .iter()
            .map(|b| crate::wire::decode::<usize>(b))
            .sum::<usize>();
    if std::env::var_os("PARALLAX_EXCHANGE_STATS").is_some() {
        eprintln!(
            "rank {me}: {} locations, {} rounds, {} B sent, {} B received, \
             {:.3} s in exchanges of {:.3} s",
            ids.len(),
            stats.rounds,
            stats.sent,
            stats.received,
            stats.waiting,
            started.elapsed().as_secs_f64()
        );
    }
    Outcome { forced, unclaimed }
}

/// What one rank's replay exchanged (printed to stderr when
/// PARALLAX_EXCHANGE_STATS is set).
#[cfg(feature = "mpi")]
#[derive(Debug, Default)]
struct ExchangeStats {
    rounds: u64,
    sent: u64,
    received: u64,
    /// Seconds in the exchange collective (waiting for the slowest rank
    /// included).
    waiting: f64,
}

fn worker<P: Pass>(
    me: usize,
    mut mine: Vec<(usize, &mut P)>,
    board: &Board<P::Key, P::Value>,
    force: &[AtomicBool],
    forced: &AtomicU64,
    shared: &Mutex<Shared>,
) {
    let mut done = vec![false; mine.len()];
    let alone = lock(shared).idle_at.len() == 1;
    loop {
        let seen = board.version.load(Ordering::SeqCst);
        let mut progressed = false;
        for (j, (i, p)) in mine.iter_mut().enumerate() {
            if done[j] {
                continue;
            }
            if force[*i].swap(false, Ordering::SeqCst) {
                p.force();
            }
            let (status, moved) = p.resume(board);
            progressed |= moved;
            let mut s = lock(shared);
            match status {
                Status::Done => {
                    done[j] = true;
                    s.blocked[*i] = None;
                }
                Status::Blocked { at_ns } => s.blocked[*i] = Some(at_ns),
            }
        }
        if progressed {
            continue;
        }
        // Another worker usually completes a value within microseconds:
        // watch for it a while before going to sleep.
        if !alone && spin_until_changed(&board.version, seen) {
            continue;
        }
        // Posts notify under `wake` when there are sleepers, so counting
        // in, checking the version and going to sleep under it loses no
        // wake-up.
        let mut w = lock(&board.wake);
        board.sleepers.fetch_add(1, Ordering::SeqCst);
        if board.version.load(Ordering::SeqCst) != seen {
            board.sleepers.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let mut s = lock(shared);
        if s.finished {
            board.sleepers.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        s.idle_at[me] = Some(seen);
        // Stuck everywhere only if every worker is idle and has scanned
        // since the last post.
        if s.idle_at.iter().all(|v| *v == Some(seen)) {
            s.idle_at[me] = None;
            let pick = s
                .blocked
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.map(|t| (t, i)))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            match pick {
                None => s.finished = true,
                Some((_, i)) => {
                    s.blocked[i] = None;
                    force[i].store(true, Ordering::SeqCst);
                    forced.fetch_add(1, Ordering::Relaxed);
                    board.version.fetch_add(1, Ordering::SeqCst);
                }
            }
            let finished = s.finished;
            drop(s);
            board.sleepers.fetch_sub(1, Ordering::SeqCst);
            board.cond.notify_all();
            if finished {
                return;
            }
            continue;
        }
        drop(s);
        loop {
            w = board.cond.wait(w).unwrap_or_else(|e| e.into_inner());
            let mut s = lock(shared);
            if s.finished {
                board.sleepers.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            if board.version.load(Ordering::SeqCst) != seen {
                s.idle_at[me] = None;
                break;
            }
        }
        board.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Spins briefly while `version` is still `seen`; true once it changed.
fn spin_until_changed(version: &AtomicU64, seen: u64) -> bool {
    for i in 0..SPINS {
        if version.load(Ordering::SeqCst) != seen {
            return true;
        }
        if i % 64 == 63 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    false
}

/// Checks of the board's version before an idle worker sleeps: some tens
/// of microseconds.
const SPINS: u32 = 4096;
