//! How every view names what it shows: locations (by thread name where the
//! program gave one, with rank and thread numbers as far as they tell
//! locations apart), and the kinds of synchronization regions, so that
//! `report`, `analyze` and their JSON say the same thing.

use std::collections::BTreeMap;

use parallax_model::event::{
    RegionId, OVERFLOW_REGION, SKIPPED_NAME, SKIPPED_REGION, UNKNOWN_REGION,
};
use parallax_model::experiment::{Experiment, Process};
use parallax_model::region::RegionKind;

/// The names of an experiment's locations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocationNames {
    /// Thread names by (rank, thread), where given.
    names: BTreeMap<(u32, u32), String>,
    /// More than one process.
    ranks: bool,
    /// A process with more than one location, or a location other than
    /// thread 0.
    threads: bool,
}

impl LocationNames {
    /// The names of `exp`'s locations.
    pub fn new(exp: &Experiment) -> LocationNames {
        let mut names = BTreeMap::new();
        let mut threads = false;
        for p in &exp.processes {
            threads |= p.locations.len() > 1 || p.locations.keys().any(|&t| t != 0);
            for l in p.locations.values() {
                if !l.name.is_empty() {
                    names.insert((p.rank, l.thread), l.name.clone());
                }
            }
        }
        LocationNames {
            names,
            ranks: exp.processes.len() > 1,
            threads,
        }
    }

    /// The thread name of a location, if it has one.
    pub fn name(&self, rank: u32, thread: u32) -> Option<&str> {
        self.names.get(&(rank, thread)).map(String::as_str)
    }

    /// The numbers that tell a location apart: `rank 1 thread 2`, `rank
    /// 1` where every process has one location, `thread 2` in a single
    /// process.
    pub fn numbers(&self, rank: u32, thread: u32) -> String {
        match (self.ranks, self.threads) {
            (true, true) => format!("rank {rank} thread {thread}"),
            (true, false) => format!("rank {rank}"),
            (false, _) if rank != 0 => format!("rank {rank} thread {thread}"),
            (false, _) => format!("thread {thread}"),
        }
    }

    /// How a location is named everywhere: its thread name with its
    /// numbers (`worker-2 (thread 2)`), or its numbers alone.
    pub fn label(&self, rank: u32, thread: u32) -> String {
        match self.name(rank, thread) {
            Some(n) => format!("{n} ({})", self.numbers(rank, thread)),
            None => self.numbers(rank, thread),
        }
    }
}

/// Names of regions that wait on or signal a condition variable (the
/// interposed POSIX calls and the `parallax::sync` ones): their kind is
/// the semaphore's, since both pair a post with a wait, but they are not
/// semaphores.
const CONDITION_WAITS: &[&str] = &[
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "Condvar::wait",
    "Condvar::wait_timeout",
];
const CONDITION_SIGNALS: &[&str] = &[
    "pthread_cond_signal",
    "pthread_cond_broadcast",
    "Condvar::notify_one",
    "Condvar::notify_all",
];

/// The label of a region's kind: the kind's own name, except that a
/// condition variable's wait and signal are `cond_wait` and `cond_signal`
/// rather than the semaphore's `sem_wait` and `sem_post`.
pub fn kind_label(kind: RegionKind, region: &str) -> &'static str {
    match kind {
        RegionKind::SemWait if CONDITION_WAITS.contains(&region) => "cond_wait",
        RegionKind::SemPost if CONDITION_SIGNALS.contains(&region) => "cond_signal",
        k => k.name(),
    }
}

/// Name of region `id` of process `p`, with placeholders for the ids the
/// runtime gives paths it did not record.
pub fn region_name(p: &Process, id: RegionId) -> String {
    match id {
        UNKNOWN_REGION => "<unknown>".to_string(),
        OVERFLOW_REGION => "<other paths>".to_string(),
        SKIPPED_REGION => SKIPPED_NAME.to_string(),
        _ => p.region_name(id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_only_as_far_as_they_tell_locations_apart() {
        let mut n = LocationNames {
            ranks: true,
            threads: false,
            ..Default::default()
        };
        assert_eq!(n.label(3, 0), "rank 3");
        n.threads = true;
        n.names.insert((0, 2), "worker-2".into());
        assert_eq!(n.label(0, 2), "worker-2 (rank 0 thread 2)");
        assert_eq!(n.label(1, 0), "rank 1 thread 0");
        n.ranks = false;
        assert_eq!(n.label(0, 2), "worker-2 (thread 2)");
    }

    #[test]
    fn condition_variables_are_not_semaphores() {
        assert_eq!(
            kind_label(RegionKind::SemWait, "pthread_cond_wait"),
            "cond_wait"
        );
        assert_eq!(kind_label(RegionKind::SemWait, "sem_wait"), "sem_wait");
        assert_eq!(
            kind_label(RegionKind::SemPost, "Condvar::notify_all"),
            "cond_signal"
        );
        assert_eq!(kind_label(RegionKind::Lock, "pthread_mutex_lock"), "lock");
    }
}
