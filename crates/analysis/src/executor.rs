//! Executors: how an analysis's per-location passes run.
//!
//! Analyses are written as per-location passes (a function of one location
//! that reads only that location's events) and exchange steps (each location
//! sends messages to others, e.g. a send's time to its receiver). An
//! executor runs the passes on one thread or on a pool of threads; results
//! and message order do not depend on which, so every executor gives the
//! same output. An executor across MPI ranks implements the same two
//! operations.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs per-location passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    /// One location after another on the calling thread.
    Sequential,
    /// A pool of this many threads, each taking the next location.
    Threads(usize),
}

impl Executor {
    /// A pool with one thread per core.
    pub fn pool() -> Executor {
        Executor::Threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// Runs `pass` for every location `0..n`; results in location order.
    pub fn map<T, F>(&self, n: usize, pass: F) -> Vec<T>
    where
        T: Send,
        F: Fn(usize) -> T + Sync,
    {
        match *self {
            Executor::Sequential => (0..n).map(pass).collect(),
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
}
