//! What a state's event file holds, counted by the owner as it records,
//! for the file's summary.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

use parallax_model::event::EventKind;

/// Collectives counted per communicator; a location that uses more
/// communicators gets no summary.
const TALLY_COMMS: usize = 8;

/// What a state's event file holds (see `Def::Summary`). Counted by the
/// owner, read by whoever closes the state: atomics, each written by one
/// thread only, so plain loads and stores.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) bytes: AtomicU64,
    pub(super) syncs: AtomicU64,
    /// Communicator plus one (0: free slot) and count.
    pub(super) comms: [(AtomicU64, AtomicU64); TALLY_COMMS],
    pub(super) overflow: AtomicBool,
}

impl Tally {
    pub(super) fn reset(&self, bytes: u64) {
        self.bytes.store(bytes, Relaxed);
        self.syncs.store(0, Relaxed);
        for (c, n) in &self.comms {
            c.store(0, Relaxed);
            n.store(0, Relaxed);
        }
        self.overflow.store(false, Relaxed);
    }

    #[inline]
    pub(super) fn count(&self, kind: &EventKind) {
        let bump = |a: &AtomicU64| a.store(a.load(Relaxed) + 1, Relaxed);
        if kind.is_shared_sync() {
            bump(&self.syncs);
        } else if let EventKind::CollectiveEnd { comm, .. } = *kind {
            let key = comm.wrapping_add(1);
            for (c, n) in &self.comms {
                match c.load(Relaxed) {
                    0 => {
                        c.store(key, Relaxed);
                        bump(n);
                        return;
                    }
                    k if k == key => {
                        bump(n);
                        return;
                    }
                    _ => {}
                }
            }
            self.overflow.store(true, Relaxed);
        }
    }

    /// The summary of location `thread`, if the counts are complete.
    pub(super) fn def(&self, thread: u32) -> Option<parallax_model::defs::Def> {
        if self.overflow.load(Relaxed) {
            return None;
        }
        let mut collectives: Vec<(u64, u64)> = self
            .comms
            .iter()
            .map(|(c, n)| (c.load(Relaxed), n.load(Relaxed)))
            .filter(|&(c, _)| c != 0)
            .map(|(c, n)| (c.wrapping_sub(1), n))
            .collect();
        collectives.sort_unstable();
        let summary = parallax_model::defs::Summary {
            bytes: self.bytes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            collectives,
        };
        Some(summary.def(thread))
    }
}
