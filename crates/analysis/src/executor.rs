//! Executors: how an analysis's per-location passes run.
//!
//! Analyses are written as per-location passes (a function of one location
//! that reads only that location's events) and exchange steps (each location
//! sends messages to others, e.g. a send's time to its receiver). An
//! executor runs the passes on one thread or on a pool of threads; results
//! and message order do not depend on which, so every executor gives the
//! same output. The MPI executor (cargo feature `mpi`) spreads the
//! locations over the ranks of an MPI job by the size of their event
//! files: each rank runs the passes of its share, list results are
//! gathered to every rank, per-location results to rank 0, and replays
//! exchange their posts between ranks (see [`crate::replay`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use parallax_model::experiment::Experiment;
use parallax_model::Error;
use parallax_view::profile::ExperimentProfile;
use parallax_view::trace::Loc;

use crate::wire::{self, Wire};

/// Runs per-location passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    /// One location after another on the calling thread.
    Sequential,
    /// A pool of this many threads, each taking the next location.
    Threads(usize),
    /// The ranks of the MPI job this process is part of (MPI must be
    /// initialized, see [`crate::mpi::init`]); one analysis thread each.
    #[cfg(feature = "mpi")]
    Mpi,
}

impl Executor {
    /// A pool with one thread per core.
    pub fn pool() -> Executor {
        Executor::Threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// Whether this process prints and writes the shared outputs (always,
    /// except on MPI ranks other than 0).
    pub fn is_root(&self) -> bool {
        match *self {
            #[cfg(feature = "mpi")]
            Executor::Mpi => crate::mpi::rank() == 0,
            _ => true,
        }
    }

    /// The locations of `locs` whose passes this process runs, ascending:
    /// all of them, or under MPI this rank's share.
    pub fn share(&self, locs: &[Loc]) -> Share {
        let bytes = || locs.iter().map(|l| l.bytes).collect::<Vec<u64>>();
        match *self {
            #[cfg(feature = "mpi")]
            Executor::Mpi => {
                let owner = assign(&bytes(), crate::mpi::size());
                Share::owned(locs, &owner, crate::mpi::rank())
            }
            // The pool's workers replay contiguous parts, each against its
            // own board, as the ranks of an MPI job do: a worker's memory
            // stays its own.
            Executor::Threads(k) if k > 1 && locs.len() > 1 => {
                let owner = assign(&bytes(), k);
                let mut all = Share::all(locs.len());
                all.parts = (0..k)
                    .map(|w| Share::owned(locs, &owner, w))
                    .filter(|p| !p.ids.is_empty())
                    .collect();
                all
            }
            _ => Share::all(locs.len()),
        }
    }

    /// The experiment's profiles ([`ExperimentProfile::load`]), with the
    /// trees derived from traces built here (under MPI each rank reads its
    /// share of the traces; every rank gets the whole profile).
    pub fn load_profile(&self, exp: &Experiment) -> Result<ExperimentProfile, Error> {
        ExperimentProfile::load_by(exp, |d| {
            let built = self.map_locs(&d.need, |i| d.tree(exp, i));
            let spans = self.map_locs(&d.spanned, |i| d.span(exp, i));
            (built, spans)
        })
    }

    /// Runs `pass` for every location of `locs`; results in location
    /// order, on every rank (under MPI each rank runs its share and the
    /// results are gathered to all).
    pub fn map_locs<T, F>(&self, locs: &[Loc], pass: F) -> Vec<T>
    where
        T: Send + Wire,
        F: Fn(usize) -> T + Sync,
    {
        match *self {
            #[cfg(feature = "mpi")]
            Executor::Mpi => {
                let mine = self.share(locs);
                let local: Vec<T> = mine.iter().map(|&i| pass(i)).collect();
                let all = crate::mpi::all_gather(&wire::encode(&(mine.to_vec(), local)));
                merge(locs.len(), all).expect("every location ran on a rank")
            }
            _ => self.map(locs.len(), pass),
        }
    }

    /// Puts the results of this process's share (`mine`, from
    /// [`Executor::share`]) together in location order: `Some` on the root
    /// with all `n`, `None` on other MPI ranks.
    pub fn collect<T: Wire>(&self, mine: &[usize], n: usize, results: Vec<T>) -> Option<Vec<T>> {
        debug_assert_eq!(mine.len(), results.len());
        match *self {
            #[cfg(feature = "mpi")]
            Executor::Mpi => {
                let all = crate::mpi::gather(&wire::encode(&(mine.to_vec(), results)))?;
                Some(merge(n, all).expect("every location ran on a rank"))
            }
            _ => {
                debug_assert_eq!(n, results.len());
                Some(results)
            }
        }
    }

    /// Runs `pass` for every location `0..n`; results in location order.
    /// Under MPI every rank runs all of them (use [`Executor::map_locs`]
    /// to divide the work).
    pub fn map<T, F>(&self, n: usize, pass: F) -> Vec<T>
    where
        T: Send,
        F: Fn(usize) -> T + Sync,
    {
        match *self {
            Executor::Sequential => (0..n).map(pass).collect(),
            #[cfg(feature = "mpi")]
            Executor::Mpi => (0..n).map(pass).collect(),
            Executor::Threads(k) if k <= 1 || n <= 1 => (0..n).map(pass).collect(),
            Executor::Threads(k) => {
                let next = AtomicUsize::new(0);
                let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
                std::thread::scope(|s| {
                    for _ in 0..k.min(n) {
                        s.spawn(|| loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= n {
                                break;
                            }
                            let r = pass(i);
                            *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                        });
                    }
                });
                slots
                    .into_iter()
                    .map(|m| {
                        m.into_inner()
                            .unwrap_or_else(|e| e.into_inner())
                            .expect("every location ran")
                    })
                    .collect()
            }
        }
    }

    /// Delivers messages: `outboxes[i]` holds (destination, message) pairs
    /// sent by location `i`. Each location's inbox lists messages by sender
    /// location, then in the order sent, whatever the executor.
    pub fn exchange<M: Send>(&self, n: usize, outboxes: Vec<Vec<(usize, M)>>) -> Vec<Vec<M>> {
        let mut inboxes: Vec<Vec<M>> = (0..n).map(|_| Vec::new()).collect();
        for out in outboxes {
            for (dest, m) in out {
                if let Some(inbox) = inboxes.get_mut(dest) {
                    inbox.push(m);
                }
            }
        }
        inboxes
    }
}

/// How long each step of an analysis took on this process, printed to
/// stderr when PARALLAX_EXCHANGE_STATS is set.
pub struct Phases {
    rank: Option<usize>,
    last: std::time::Instant,
}

impl Phases {
    /// Starts timing (nothing is kept unless PARALLAX_EXCHANGE_STATS is set).
    pub fn new(exec: Executor) -> Phases {
        let on = std::env::var_os("PARALLAX_EXCHANGE_STATS").is_some();
        let rank = match exec {
            #[cfg(feature = "mpi")]
            Executor::Mpi => crate::mpi::rank(),
            _ => 0,
        };
        Phases {
            rank: on.then_some(rank),
            last: std::time::Instant::now(),
        }
    }

    /// The step `name` ended now.
    pub fn done(&mut self, name: &str) {
        if let Some(rank) = self.rank {
            let now = std::time::Instant::now();
            // Not eprintln!, which panics when stderr is a closed pipe.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "rank {rank}: {name} {:.3} s",
                (now - self.last).as_secs_f64()
            );
            self.last = now;
        }
    }
}

/// The locations whose passes one process runs, ascending (dereferences
/// to their indices).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Share {
    ids: Vec<usize>,
    /// Ranks whose traced locations are all in the share, ascending.
    whole: Vec<u32>,
    /// How a thread pool divides the share: contiguous parts in order,
    /// covering it (none: one worker, or workers sharing one board).
    pub(crate) parts: Vec<Share>,
}

impl Share {
    /// Locations `0..n`, all of them.
    pub fn all(n: usize) -> Share {
        Share {
            ids: (0..n).collect(),
            whole: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// The locations that `owner` gives to `me`.
    fn owned(locs: &[Loc], owner: &[usize], me: usize) -> Share {
        let ids: Vec<usize> = (0..locs.len()).filter(|&i| owner[i] == me).collect();
        let split: std::collections::HashSet<u32> = (0..locs.len())
            .filter(|&i| owner[i] != me)
            .map(|i| locs[i].rank)
            .collect();
        let mut whole: Vec<u32> = ids
            .iter()
            .map(|&i| locs[i].rank)
            .filter(|r| !split.contains(r))
            .collect();
        whole.dedup();
        Share {
            ids,
            whole,
            parts: Vec::new(),
        }
    }

    /// The share cut into `k` contiguous parts of about equal counts, for
    /// passes that come without their locations (no rank is whole in any).
    pub(crate) fn split(&self, k: usize) -> Vec<Share> {
        let n = self.ids.len();
        let k = k.clamp(1, n.max(1));
        (0..k)
            .map(|w| Share {
                ids: self.ids[w * n / k..(w + 1) * n / k].to_vec(),
                whole: Vec::new(),
                parts: Vec::new(),
            })
            .collect()
    }

    /// The ranks whose traced locations are all in the share, ascending (a
    /// value only their locations read need not leave this process).
    pub fn whole_ranks(&self) -> &[u32] {
        &self.whole
    }
}

impl std::ops::Deref for Share {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        &self.ids
    }
}

impl<'a> IntoIterator for &'a Share {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.ids.iter()
    }
}

/// The owner of each location when `ranks` ranks share them: contiguous
/// runs of locations (threads of one process stay together, so their
/// lock and thread hand-offs stay on one rank) cut where the running sum
/// of event-file bytes crosses a multiple of the total over `ranks`; a
/// location goes to the share its middle byte falls in.
pub fn assign(bytes: &[u64], ranks: usize) -> Vec<usize> {
    let ranks = ranks.max(1) as u128;
    // One byte each at least: empty files still cost a pass.
    let total: u128 = bytes.iter().map(|&b| b.max(1) as u128).sum();
    let mut before = 0u128;
    bytes
        .iter()
        .map(|&b| {
            let b = b.max(1) as u128;
            let mid2 = 2 * before + b;
            before += b;
            ((mid2 * ranks) / (2 * total)).min(ranks - 1) as usize
        })
        .collect()
}

/// Per-rank (locations, results) lists merged into location order.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn merge<T: Wire>(n: usize, parts: Vec<Vec<u8>>) -> Option<Vec<T>> {
    let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for p in parts {
        let (ids, vals): (Vec<usize>, Vec<T>) = wire::decode(&p);
        for (i, v) in ids.into_iter().zip(vals) {
            slots[i] = Some(v);
        }
    }
    slots.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executors_agree() {
        let f = |i: usize| (0..=i as u64 * 1000).sum::<u64>();
        let seq = Executor::Sequential.map(37, f);
        for k in [1, 2, 3, 8] {
            assert_eq!(Executor::Threads(k).map(37, f), seq);
        }
        let out = vec![
            vec![(1, "a"), (2, "b")],
            vec![(1, "c")],
            vec![(0, "d"), (1, "e")],
        ];
        let inboxes = Executor::Threads(2).exchange(3, out);
        assert_eq!(inboxes, vec![vec!["d"], vec!["a", "c", "e"], vec!["b"]]);
    }

    #[test]
    fn shares_follow_bytes_not_counts() {
        // One big location and three small: the big one alone on a rank.
        assert_eq!(assign(&[900, 100, 100, 100], 2), vec![0, 1, 1, 1]);
        assert_eq!(assign(&[100, 100, 100, 900], 2), vec![0, 0, 0, 1]);
        // Equal sizes split evenly, in order.
        assert_eq!(assign(&[5; 8], 4), vec![0, 0, 1, 1, 2, 2, 3, 3]);
        // More ranks than locations: some ranks get none.
        assert_eq!(assign(&[1, 1], 4), vec![1, 3]);
        assert_eq!(assign(&[], 3), Vec::<usize>::new());
        // Results come back in location order, whoever computed them.
        let a = wire::encode(&(vec![2usize, 0], vec![20u32, 0]));
        let b = wire::encode(&(vec![1usize], vec![10u32]));
        assert_eq!(merge::<u32>(3, vec![a.clone(), b]), Some(vec![0, 10, 20]));
        assert_eq!(merge::<u32>(3, vec![a]), None);
    }
}
