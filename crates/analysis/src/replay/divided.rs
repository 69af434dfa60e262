//! The replay divided between members with a board each.
//!
//! Under the MPI executor each rank replays its share of the locations
//! against its own board ([`super::run_share`]); the thread pool's workers do the
//! same, with messages passed in memory, so that no worker touches the
//! memory of another. Passes run until none of them can
//! go on; then the ranks exchange everything posted and taken since the
//! last round, so every board sees every contribution and every take and
//! drops an entry once its last reader, wherever it runs, took it. A round
//! in which nobody posted anything is a global standstill: the blocked
//! event with the least (measured time, location) over all ranks is forced,
//! exactly the choice one process would make.

use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{
    earlier, lock, run_alone, run_ready, Codec, Entry, LocationPass, Outcome, Postings, Route,
};
use crate::executor::Share;
use crate::wire::{Reader, Wire};

impl<K: Eq + Hash + Clone + Wire + Route, V: Clone> Postings<K, V> {
    /// Starts recording what other ranks must learn; values that only
    /// locations of `share` read stay here.
    fn start_log(&self, share: &Share) {
        let mut whole = share.whole_ranks().to_vec();
        whole.sort_unstable();
        // A board logs one replay: set once.
        let _ = self.whole.set(whole);
        self.logging.store(true, Ordering::SeqCst);
    }

    /// What other ranks must learn since the last call: the contributions
    /// to shared entries (tag 0: key, count, merged value) and their takes
    /// (tag 1: key), then the entries made and still held (tag 2: key,
    /// value, expected, missing, readers left), which become shared; and
    /// how many contributions that is (none: nothing new).
    fn drain_log(&self, codec: &mut impl Codec<V>) -> (Vec<u8>, u64) {
        let (merged, taken, mut contributions, fresh) = {
            let mut l = lock(&self.log);
            let l = &mut *l;
            (
                std::mem::take(&mut l.merged),
                std::mem::take(&mut l.taken),
                std::mem::take(&mut l.contributions),
                std::mem::take(&mut l.fresh),
            )
        };
        // Contributions before takes: a rank takes a value only once its
        // own contributions are in. Both before the new entries, which the
        // receiver decodes after them (chain nodes are named in the order
        // they are encoded).
        let mut out = Vec::new();
        for (k, (v, n)) in merged {
            out.push(0);
            k.put(&mut out);
            n.put(&mut out);
            codec.put(&v, &mut out);
        }
        for k in taken {
            out.push(1);
            k.put(&mut out);
        }
        let mut m = lock(&self.map);
        for k in fresh {
            let Some(e) = m.get_mut(&k) else { continue };
            if e.shared {
                continue;
            }
            e.shared = true;
            out.push(2);
            k.put(&mut out);
            e.value.is_some().put(&mut out);
            if let Some(v) = &e.value {
                codec.put(v, &mut out);
            }
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

    /// Applies rank `from`'s news, in the order recorded.
    fn apply(&self, from: u32, r: &mut Reader<'_>, codec: &mut impl Codec<V>) {
        while !r.is_empty() {
            match u8::get(r) {
                0 => {
                    let k = K::get(r);
                    let n = u32::get(r);
                    let v = codec.get(from, r);
                    if let Some(e) = lock(&self.map).get_mut(&k) {
                        self.add(&k, e, &v, n);
                    }
                }
                1 => {
                    let k = K::get(r);
                    let mut m = lock(&self.map);
                    if let Some(e) = m.get_mut(&k) {
                        e.readers = e.readers.saturating_sub(1);
                        if e.readers == 0 {
                            m.remove(&k);
                        }
                    }
                }
                _ => {
                    let k = K::get(r);
                    let v = bool::get(r).then(|| codec.get(from, r));
                    let (expected, missing, readers): (u32, u32, u32) = Wire::get(r);
                    let mut m = lock(&self.map);
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
                                self.completed(&k);
                            }
                        }
                        None => {
                            if missing == 0 {
                                self.completed(&k);
                            }
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
                        }
                    }
                }
            }
        }
    }
}

/// The members of a replay divided into parts that share no board: the
/// ranks of an MPI job, or a thread pool's workers.
pub(super) trait Ranks {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Every member's message, in rank order, on every member.
    fn all_gather(&self, msg: &[u8]) -> Vec<Vec<u8>>;
}

#[cfg(feature = "mpi")]
pub(super) struct MpiRanks;

#[cfg(feature = "mpi")]
impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        crate::mpi::rank()
    }
    fn size(&self) -> usize {
        crate::mpi::size()
    }
    fn all_gather(&self, msg: &[u8]) -> Vec<Vec<u8>> {
        crate::mpi::all_gather(msg)
    }
}

/// A thread pool's workers as ranks: messages pass through shared slots.
struct Pool {
    /// Each round's messages, by rank, in one of two sets by the round's
    /// parity: a worker writes round r + 2's only after everyone passed
    /// round r + 1's barrier, so after everyone read round r's.
    slots: [Mutex<Vec<Vec<u8>>>; 2],
    barrier: Barrier,
}

struct Worker<'a> {
    pool: &'a Pool,
    rank: usize,
    round: std::cell::Cell<usize>,
}

impl Ranks for Worker<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.pool.barrier.n
    }
    fn all_gather(&self, msg: &[u8]) -> Vec<Vec<u8>> {
        let slots = &self.pool.slots[self.round.get() % 2];
        self.round.set(self.round.get() + 1);
        lock(slots)[self.rank] = msg.to_vec();
        self.pool.barrier.wait();
        lock(slots).clone()
    }
}

/// A barrier for the pool's rounds, which come every few microseconds:
/// waiting workers spin and yield before they sleep (a wake-up costs more
/// than a round's work, and varies much more).
struct Barrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl Barrier {
    fn new(n: usize) -> Barrier {
        Barrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // Reset before the release: a worker let through sees it.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        crate::backoff::wait_until(|| self.generation.load(Ordering::Acquire) != generation);
    }
}

/// The thread pool's replay: each worker replays its part of the passes
/// (contiguous, in order) against a board of its own, exchanging with the
/// others as MPI ranks do. Values posted on one worker are read on another
/// from a copy, so no worker's memory is written by the others.
pub(super) fn run_parts<P: LocationPass>(
    passes: &mut [P],
    parts: &[Share],
    board: &Postings<P::Key, P::Value>,
) -> Outcome {
    let k = parts.len();
    let pool = Pool {
        slots: [
            Mutex::new(vec![Vec::new(); k]),
            Mutex::new(vec![Vec::new(); k]),
        ],
        barrier: Barrier::new(k),
    };
    let boards: Vec<Postings<P::Key, P::Value>> =
        (0..k).map(|_| Postings::new(board.combine)).collect();
    let mut chunks = Vec::with_capacity(k);
    let mut rest = passes;
    for part in parts {
        let (mine, others) = rest.split_at_mut(part.len());
        chunks.push(mine);
        rest = others;
    }
    let outcomes: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .zip(parts)
            .zip(&boards)
            .enumerate()
            .map(|(rank, ((mine, part), b))| {
                let pool = &pool;
                s.spawn(move || {
                    // The others would wait for it at the next exchange:
                    // a failing worker ends the process, as a failing rank
                    // ends an MPI job (the panic has been reported).
                    let me = Worker {
                        pool,
                        rank,
                        round: Default::default(),
                    };
                    let run = || run_ranks(mine, part, b, &me);
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                        .unwrap_or_else(|_| std::process::abort())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| std::process::abort()))
            .collect()
    });
    outcomes.into_iter().next().unwrap_or_default()
}

/// The replay divided into parts with a board each: local rounds to a
/// standstill, then an exchange of the round's operations between all
/// parts, until every location is done.
pub(super) fn run_ranks<P: LocationPass, R: Ranks>(
    passes: &mut [P],
    ids: &Share,
    board: &Postings<P::Key, P::Value>,
    ranks: &R,
) -> Outcome {
    if ranks.size() == 1 {
        return run_alone(passes, ids, board);
    }
    board.start_log(ids);
    let me = ranks.rank();
    let mut codec = P::Codec::new(me as u32);
    lock(&board.sched).start(passes.len());
    let mut forced = 0u64;
    let mut stats = ExchangeStats::default();
    let started = std::time::Instant::now();
    loop {
        // Run what can run here, then tell the others.
        let t = std::time::Instant::now();
        run_ready(passes, board);
        stats.work += t.elapsed().as_secs_f64();
        // Header: contributions made, then the earliest blocked event
        // (time, location) if any; then the operations.
        let t = std::time::Instant::now();
        let (ops, posts) = board.drain_log(&mut codec);
        stats.drain += t.elapsed().as_secs_f64();
        let earliest = lock(&board.sched)
            .earliest(ids)
            .map(|(t, loc)| (t, loc as u64));
        let mut msg = Vec::with_capacity(ops.len() + 32);
        posts.put(&mut msg);
        earliest.put(&mut msg);
        msg.extend_from_slice(&ops);
        drop(ops);
        let t = std::time::Instant::now();
        let all = ranks.all_gather(&msg);
        stats.rounds += 1;
        stats.sent += msg.len() as u64;
        stats.received += all.iter().map(|b| b.len() as u64).sum::<u64>() - msg.len() as u64;
        stats.waiting += t.elapsed().as_secs_f64();
        drop(msg);
        let t = std::time::Instant::now();
        let mut total = 0u64;
        let mut pick: Option<(f64, usize)> = None;
        for (rank, buf) in all.iter().enumerate() {
            let mut r = Reader::new(buf);
            total += u64::get(&mut r);
            if let Some((t, loc)) = Option::<(f64, u64)>::get(&mut r) {
                let e = (t, loc as usize);
                if pick.is_none_or(|p| earlier(&e, &p).is_lt()) {
                    pick = Some(e);
                }
            }
            if rank != me {
                board.apply(rank as u32, &mut r, &mut codec);
            }
        }
        stats.apply += t.elapsed().as_secs_f64();
        // What the codecs learnt is forgotten now and then, by every
        // rank at the same round (which bounds what they keep).
        if stats.rounds % 1024 == 0 {
            codec.forget();
        }
        if total > 0 {
            continue;
        }
        // Nothing new anywhere: every rank is at a standstill.
        match pick {
            None => break,
            Some((_, i)) => {
                forced += 1;
                if let Ok(j) = ids.binary_search(&i) {
                    lock(&board.sched).force(j);
                }
            }
        }
    }
    drop(codec);
    // Values never taken: those every rank holds, and each rank's own.
    let (shared, own) = board.held();
    let unclaimed = shared
        + ranks
            .all_gather(&crate::wire::encode(&own))
            .iter()
            .map(|b| crate::wire::decode::<usize>(b))
            .sum::<usize>();
    if std::env::var_os("PARALLAX_EXCHANGE_STATS").is_some() {
        // Not eprintln!, which panics when stderr is a closed pipe.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "rank {me}: {} locations, {} rounds, {} B sent, {} B received, \
             {:.3} s in exchanges of {:.3} s (replay {:.3} s, encoding {:.3} s, \
             decoding {:.3} s)",
            ids.len(),
            stats.rounds,
            stats.sent,
            stats.received,
            stats.waiting,
            started.elapsed().as_secs_f64(),
            stats.work,
            stats.drain,
            stats.apply,
        );
    }
    Outcome { forced, unclaimed }
}

/// What one rank's replay exchanged (printed to stderr when
/// PARALLAX_EXCHANGE_STATS is set).
#[derive(Debug, Default)]
struct ExchangeStats {
    rounds: u64,
    sent: u64,
    received: u64,
    /// Seconds in the exchange collective (waiting for the slowest rank
    /// included).
    waiting: f64,
    /// Seconds replaying, encoding what others must learn, decoding theirs.
    work: f64,
    drain: f64,
    apply: f64,
}
