//! Collectives: Wait at Barrier, Wait at N×N, Late Broadcast, Early
//! Reduce, redundant barriers and the imbalance of blocks between them.

use parallax_model::event::{CollectiveOp, NO_ROOT};

use parallax_view::deps::Collective;

use super::{ns_u64, waiting, CollNeed, LocPass, WaitedFor};
use crate::bottleneck::posts::{Arrival, Key, PostedValue};
use crate::bottleneck::regions;
use crate::bottleneck::Pattern;
use crate::pairing::OpenCollectives;
use crate::replay::Postings;

/// A location's collective state: the collectives begun and not ended,
/// and what it did since its last collective and barrier (block
/// imbalance, redundant barriers).
#[derive(Debug, Default)]
pub(super) struct Collectives {
    /// Begin times of collectives not yet ended, oldest first.
    pub(super) begins: OpenCollectives<f64>,
    pub(super) last_end: Option<f64>,
    pub(super) seen_barrier: bool,
    /// Communication (messages, collectives other than barriers,
    /// one-sided transfers) since the last barrier.
    pub(super) activity: u64,
}

impl LocPass<'_> {
    /// A collective's end: contributes this member's arrival and needs
    /// everyone's.
    pub(super) fn collective_end(
        &mut self,
        t: f64,
        op: CollectiveOp,
        at: Collective,
        root: u32,
        board: &Postings<Key, PostedValue>,
    ) {
        let rank = self.loc.rank;
        let me = self.index;
        // Completed by a test after a polling loop: waited from
        // the loop's start.
        let polled = self.poll_start().filter(|&s| self.msgs.last_msg < s);
        self.msgs.last_msg = t;
        let n = self.pairing.members(at.comm, at.seq);
        let enter = polled.unwrap_or_else(|| self.enter_time(t));
        // A non-blocking collective arrived when it began, in an
        // earlier call; it waits in the call that completes it.
        let arrive = match self.colls.begins.end() {
            Some(b) if b < enter => b,
            _ => enter,
        };
        if op != CollectiveOp::Barrier {
            self.colls.activity += 1;
        }
        let work = arrive - self.colls.last_end.or(self.res.first).unwrap_or(arrive);
        if n > 1 {
            let me_root = root != NO_ROOT && root == rank;
            let chain = self.history.cp.snapshot();
            let note = self.note();
            let arrival = Arrival {
                last: (arrive, me),
                last_chain: chain,
                last_note: note.clone(),
                last_nonroot: (!me_root).then_some((arrive, me)),
                nonroot_note: (!me_root).then(|| note.clone()),
                root: me_root.then_some((arrive, me)),
                root_note: me_root.then_some(note),
                activity: self.colls.activity,
                ranks: (rank, rank),
                work_max: (ns_u64(work), me),
                work_sum: ns_u64(work),
                setup: self.setup_end,
            };
            board.contribute(Key::Coll(at), PostedValue::Arr(Box::new(arrival)), n, n);
            self.need = Some(WaitedFor::Coll(CollNeed {
                key: Key::Coll(at),
                op,
                root,
                enter,
                me_root,
            }));
        }
    }

    /// The collective got every member's arrival.
    pub(super) fn collective_done(&mut self, t: f64, n: CollNeed, v: PostedValue) {
        let PostedValue::Arr(a) = v else {
            return self.mismatch(WaitedFor::Coll(n));
        };
        let CollNeed {
            key,
            op,
            root,
            enter,
            me_root,
        } = n;
        let me = self.index;
        let path = self.top_path();
        let g = self.calls.stack.last().map_or(regions::OUTSIDE, |f| f.g);
        let (comm, seq) = match key {
            Key::Coll(c) => (c.comm, c.seq),
            _ => (0, 0),
        };
        let n = self.pairing.members(comm, seq).max(1);
        let last = a.last;
        let culprit = match op {
            CollectiveOp::Barrier => Some((Pattern::WaitAtBarrier, Some(last), Some(&a.last_note))),
            CollectiveOp::Broadcast | CollectiveOp::Scatter if root != NO_ROOT => {
                (!me_root).then_some((Pattern::LateBroadcast, a.root, a.root_note.as_ref()))
            }
            CollectiveOp::Reduce | CollectiveOp::Gather if root != NO_ROOT => me_root.then_some((
                Pattern::EarlyReduce,
                a.last_nonroot,
                a.nonroot_note.as_ref(),
            )),
            _ if root == NO_ROOT => Some((Pattern::WaitAtNxN, Some(last), Some(&a.last_note))),
            _ => None,
        };
        let mut wait = 0.0;
        if let Some((pattern, Some((tl, culprit)), note)) = culprit {
            if culprit != me {
                wait = waiting(enter, tl, t, a.setup, self.setup_end);
                self.record(pattern, path, wait, Some(culprit));
                if let Some(note) = note {
                    self.charge(culprit, note, wait);
                }
            }
        }
        // The path goes through the last arrival.
        if last.1 != me && last.0 > enter {
            self.history.cp.adopt(a.last_chain.clone());
            self.history.cp.add(g, t - last.0.min(t));
        }
        // Where the communicator or barrier was first met, and its
        // size: what names it.
        let top = self.top_path();
        self.res
            .coll_sites
            .entry(comm)
            .or_insert((top, u64::from(n)));
        // Block-level balance, counted once by the slowest.
        let b = self.res.blocks.entry(comm).or_insert((0, 0.0, 0));
        b.0 += 1;
        if a.work_max.1 == me {
            let imb = a.work_max.0 as f64 - a.work_sum as f64 / n as f64;
            b.1 += imb.max(0.0);
            b.2 += 1;
        }
        if op == CollectiveOp::Barrier {
            // Redundant: no communication anywhere since the
            // previous barrier, between processes. What removing
            // it saves is its own cost, not the waiting, which
            // would move to the next one.
            if self.colls.seen_barrier && a.activity == 0 && a.ranks.0 != a.ranks.1 {
                self.res
                    .waits
                    .entry((Pattern::RedundantBarrier, path))
                    .or_default()
                    .add((t - enter - wait).max(0.0), None);
            }
            self.colls.seen_barrier = true;
            self.colls.activity = 0;
        }
        self.colls.last_end = Some(t);
        self.setup_end = f64::NEG_INFINITY;
    }
}
