//! Messages: Late Sender (and Wrong Order among them), Late Receiver
//! through the receivers' answers to blocking sends.

use parallax_model::event::{Event, EventKind};
use parallax_model::region::{Category, RegionKind};

use super::{next, waiting, LocPass, Need, Pending, RecvNeed, BATCH, RING, WRONG_ORDER_GAP};
use crate::bottleneck::posts::{Key, Val};
use crate::bottleneck::regions;
use crate::bottleneck::Pattern;
use crate::replay::Board;

impl LocPass<'_> {
    /// A send (blocking, or the start of a non-blocking one) on channel
    /// (comm, peer, tag): posts its time for the receive.
    pub(super) fn send(
        &mut self,
        t: f64,
        blocking_call: bool,
        (comm, peer, tag): (u64, u32, u32),
        bytes: u64,
        board: &Board<Key, Val>,
    ) {
        let rank = self.loc.rank;
        let me = self.index;
        let seq = next(&mut self.send_seq, (comm, peer, tag));
        let enter = self.enter_time(t);
        self.last_msg = t;
        let chain = self.cp.snapshot();
        let blocking = blocking_call
            && self
                .stack
                .last()
                .is_some_and(|f| f.kind == RegionKind::Send);
        let note = self.note();
        board.post(
            Key::Msg(comm, rank, peer, tag, seq),
            Val::Send {
                t: enter,
                loc: me,
                setup: self.setup_end,
                blocking,
                note,
                chain,
            },
            1,
        );
        if blocking {
            let n = next(&mut self.blocking_sent, (comm, peer, tag));
            self.pending.push_back(Pending {
                key: Key::Back(comm, rank, peer, tag, n / BATCH),
                pos: (n % BATCH) as usize,
                enter,
                leave: None,
                path: self.top_path(),
            });
        }
        self.activity += 1;
        if let Some(f) = self.stack.last_mut() {
            f.xfer = Some((peer, bytes));
        }
    }

    /// A receive (blocking, or the completion of a non-blocking one) on
    /// channel (comm, peer, tag): needs its send.
    pub(super) fn receive(&mut self, e: &Event, t: f64, (comm, peer, tag): (u64, u32, u32)) {
        use EventKind::*;
        let rank = self.loc.rank;
        let seq = next(&mut self.recv_seq, (comm, peer, tag));
        // A blocking receive right after a probe (no message in
        // between) waited in the probe, and so did a non-blocking
        // one posted right after it; so did a wait that completes
        // a polling loop of its call path.
        let after_probe = match e.kind {
            Recv { .. } => true,
            IrecvComplete { request, .. } => self.probed_irecv.take() == Some(request),
            _ => false,
        };
        let probe = self.probe.take().filter(|p| {
            (after_probe && p.kind == RegionKind::Wait || self.polled(p)) && self.last_msg < p.start
        });
        self.last_msg = t;
        self.need = Some(Need::Recv(RecvNeed {
            key: Key::Msg(comm, peer, rank, tag, seq),
            chan: (comm, peer, tag),
            enter: probe.map_or_else(|| self.enter_time(t), |p| p.start),
            probe: probe.map(|p| p.path),
        }));
        self.activity += 1;
        if matches!(e.kind, Recv { .. }) {
            if let Some(f) = self.stack.last_mut() {
                if f.kind == RegionKind::Recv {
                    f.xfer = Some((peer, 0));
                }
            }
        }
    }

    /// The receive got its send's value.
    pub(super) fn received(&mut self, t: f64, n: RecvNeed, v: Val, board: &Board<Key, Val>) {
        let Val::Send {
            t: s,
            loc: src,
            setup,
            blocking,
            note,
            chain,
        } = v
        else {
            return self.mismatch(Need::Recv(n));
        };
        let RecvNeed {
            chan, enter, probe, ..
        } = n;
        let me = self.index;
        let path = self.top_path();
        let g = self.stack.last().map_or(regions::OUTSIDE, |f| f.g);
        let total = waiting(enter, s, t, setup, self.setup_end);
        let before = self.stack.last().map_or(0.0, |f| f.ls);
        if let Some(f) = self.stack.last_mut() {
            f.ls = f.ls.max(total);
        }
        let wait = (total - before).max(0.0);
        let path = probe.unwrap_or(path);
        if wait > 0.0 {
            self.record(Pattern::LateSender, path, wait, Some(src));
            self.charge(src, &note, wait);
            self.cp.adopt(chain);
            self.cp.add(g, t - s.min(t));
        }
        // Wrong Order: an earlier Late Sender waited for a message
        // sent after this one, which was already there (in an
        // earlier call: one call waiting for several, MPI_Waitall,
        // reports them in no particular order), and the receives
        // came one after the other: once the location computed
        // after the Late Sender (more than a small share of its
        // waiting), the receives that follow are of a later phase,
        // which no reordering of receives brings forward.
        // Scalasca compares the send times only.
        let comp = self.res.categories[Category::Computation as usize];
        self.ring
            .retain(|&(.., w, _, c0)| comp - c0 <= WRONG_ORDER_GAP * w);
        let mut i = 0;
        while i < self.ring.len() {
            let (sl, p, c, w, call, _) = self.ring[i];
            if sl > s && call != enter {
                self.res
                    .waits
                    .entry((Pattern::WrongOrder, p))
                    .or_default()
                    .add(w, Some(c));
                self.ring.remove(i);
            } else {
                i += 1;
            }
        }
        if wait > 0.0 {
            if self.ring.len() == RING {
                self.ring.pop_front();
            }
            self.ring.push_back((s, path, src, wait, enter, comp));
        }
        self.setup_end = f64::NEG_INFINITY;
        if blocking {
            // The sender learns when this receive was posted.
            let (comm, peer, tag) = chan;
            let e = self.answers_out.entry(chan).or_insert((0, Vec::new()));
            e.1.push(enter);
            if e.1.len() as u64 == BATCH {
                let enters = std::mem::take(&mut e.1);
                let key = Key::Back(comm, peer, self.loc.rank, tag, e.0);
                e.0 += 1;
                board.post(key, Val::Back { enters, loc: me }, 1);
            }
        }
    }
}
