//! Messages: Late Sender (and Wrong Order among them), Late Receiver
//! through the receivers' answers to blocking sends.

use parallax_model::event::{Event, EventKind};
use parallax_model::region::{Category, RegionKind};

use parallax_view::deps::Message;

use super::{waiting, Frame, LateSend, LocPass, Pending, RecvNeed, WaitedFor, BATCH};
use crate::bottleneck::posts::{Key, PostedValue};
use crate::bottleneck::regions;
use crate::bottleneck::Pattern;
use crate::replay::Postings;

/// Consecutive transfers closer than this form one run, ns.
const RUN_GAP_NS: f64 = 50_000.0;
/// A transfer of at most this many bytes is small.
const SMALL_BYTES: u64 = 1024;
/// Late Sender instances remembered for Wrong Order.
const RING: usize = 100;
/// Computation after a Late Sender, as a share of its waiting, beyond
/// which the receives that follow belong to a later phase (a halo
/// exchange's next step) rather than to a reorderable sequence.
const WRONG_ORDER_GAP: f64 = 0.01;
/// A one-sided transfer is a request for competitors when it takes this
/// long, ns, and half again its call path's fastest.
const RMA_SLOW_NS: f64 = 20_000.0;
/// Requests kept per location.
const RMA_REQUESTS: usize = 1 << 16;

impl LocPass<'_> {
    /// A send (blocking, or the start of a non-blocking one) of message
    /// `msg`: posts its time for the receive.
    pub(super) fn send(
        &mut self,
        t: f64,
        blocking_call: bool,
        msg: Message,
        bytes: u64,
        board: &Postings<Key, PostedValue>,
    ) {
        let me = self.index;
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
            Key::Msg(msg),
            PostedValue::Send {
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
            let sent = self.blocking_sent.entry(msg.channel).or_insert(0);
            let n = *sent;
            *sent += 1;
            self.pending.push_back(Pending {
                key: Key::Back(msg.channel, n / BATCH),
                pos: (n % BATCH) as usize,
                enter,
                leave: None,
                path: self.top_path(),
            });
        }
        self.activity += 1;
        if let Some(f) = self.stack.last_mut() {
            f.xfer = Some((msg.channel.dst, bytes));
        }
    }

    /// A receive (blocking, or the completion of a non-blocking one) of
    /// message `msg`: needs its send.
    pub(super) fn receive(&mut self, e: &Event, t: f64, msg: Message) {
        use EventKind::*;
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
        self.need = Some(WaitedFor::Recv(RecvNeed {
            msg,
            enter: probe.map_or_else(|| self.enter_time(t), |p| p.start),
            probe: probe.map(|p| p.path),
        }));
        self.activity += 1;
        if matches!(e.kind, Recv { .. }) {
            if let Some(f) = self.stack.last_mut() {
                if f.kind == RegionKind::Recv {
                    f.xfer = Some((msg.channel.src, 0));
                }
            }
        }
    }

    /// The receive got its send's value.
    pub(super) fn received(
        &mut self,
        t: f64,
        n: RecvNeed,
        v: PostedValue,
        board: &Postings<Key, PostedValue>,
    ) {
        let PostedValue::Send {
            t: s,
            loc: src,
            setup,
            blocking,
            note,
            chain,
        } = v
        else {
            return self.mismatch(WaitedFor::Recv(n));
        };
        let RecvNeed {
            msg, enter, probe, ..
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
            .retain(|l| comp - l.comp <= WRONG_ORDER_GAP * l.wait);
        let mut i = 0;
        while i < self.ring.len() {
            let l = self.ring[i];
            if l.sent > s && l.call != enter {
                self.res
                    .waits
                    .entry((Pattern::WrongOrder, l.path))
                    .or_default()
                    .add(l.wait, Some(l.sender));
                self.ring.remove(i);
            } else {
                i += 1;
            }
        }
        if wait > 0.0 {
            if self.ring.len() == RING {
                self.ring.pop_front();
            }
            self.ring.push_back(LateSend {
                sent: s,
                path,
                sender: src,
                wait,
                call: enter,
                comp,
            });
        }
        self.setup_end = f64::NEG_INFINITY;
        if blocking {
            // The sender learns when this receive was posted.
            let e = self
                .answers_out
                .entry(msg.channel)
                .or_insert((0, Vec::new()));
            e.1.push(enter);
            if e.1.len() as u64 == BATCH {
                let enters = std::mem::take(&mut e.1);
                let key = Key::Back(msg.channel, e.0);
                e.0 += 1;
                board.post(key, PostedValue::Back { enters, loc: me }, 1);
            }
        }
    }

    pub(super) fn close_run(&mut self) {
        let r = std::mem::take(&mut self.run);
        let mut peers = r.peers;
        peers.sort_unstable();
        peers.dedup();
        if peers.len() >= 3 {
            let ns = r.total - r.longest;
            self.res
                .waits
                .entry((Pattern::SerializedTransfers, r.path))
                .or_default()
                .add(ns, None);
        }
    }

    /// A blocking transfer region ended: extend or close the run.
    pub(super) fn transfer(&mut self, f: &Frame, t: f64, peer: u32) {
        let dur = (t - f.enter - f.wait).max(0.0);
        if self.run.peers.is_empty()
            || f.enter - self.run.end > RUN_GAP_NS
            || self.run.peers.last() == Some(&peer)
        {
            self.close_run();
            self.run.path = f.path;
        }
        self.run.end = t;
        self.run.peers.push(peer);
        self.run.total += dur;
        self.run.longest = self.run.longest.max(dur);
    }

    /// Takes the answers that are there; with `wait`, blocks on the first
    /// one missing.
    pub(super) fn answers(&mut self, board: &Postings<Key, PostedValue>, wait: bool) -> bool {
        while let Some(p) = self.pending.front() {
            if p.leave.is_none() && !wait {
                return true;
            }
            let key = p.key;
            if let std::collections::hash_map::Entry::Vacant(slot) = self.answers_in.entry(key) {
                match board.take(&key) {
                    Some(PostedValue::Back { enters, loc }) => {
                        slot.insert((enters, loc));
                    }
                    Some(_) => {
                        self.pending.pop_front();
                        self.res.unmatched += 1;
                        continue;
                    }
                    None if wait && self.force => {
                        self.force = false;
                        self.pending.pop_front();
                        self.res.unmatched += 1;
                        continue;
                    }
                    None => {
                        if wait {
                            self.missing = Some(key);
                        }
                        return !wait;
                    }
                }
            }
            let p = self.pending.pop_front().expect("front exists");
            let (r, loc, done) = match self.answers_in.get(&key) {
                Some((enters, loc)) => {
                    (enters.get(p.pos).copied(), *loc, p.pos + 1 >= enters.len())
                }
                None => (None, 0, true),
            };
            if done {
                self.answers_in.remove(&key);
            }
            // Late Receiver: the send was still blocked when the receive
            // was posted.
            let leave = p.leave.unwrap_or(p.enter);
            match r {
                Some(r) if r > p.enter && leave >= r => {
                    self.res
                        .waits
                        .entry((Pattern::LateReceiver, p.path))
                        .or_default()
                        .add(r - p.enter, Some(loc));
                }
                Some(_) => {}
                None => self.res.unmatched += 1,
            }
        }
        true
    }

    /// Now and then, takes the answers that are there, which keeps the
    /// sends awaiting theirs few.
    #[inline]
    pub(super) fn poll_answers(&mut self, board: &Postings<Key, PostedValue>) {
        if self.pending.len() > 64 && (self.res.events & 63) == 0 {
            self.answers(board, false);
        }
    }

    /// Posts the answers of channels whose batch is not full: the stream
    /// is over.
    pub(super) fn flush(&mut self, board: &Postings<Key, PostedValue>) {
        if self.flushed {
            return;
        }
        self.flushed = true;
        let mut out: Vec<_> = self.answers_out.drain().collect();
        out.sort_by_key(|e| e.0);
        for (channel, (batch, enters)) in out {
            if !enters.is_empty() {
                let key = Key::Back(channel, batch);
                board.post(
                    key,
                    PostedValue::Back {
                        enters,
                        loc: self.index,
                    },
                    1,
                );
            }
        }
    }

    /// A region `f` that sends, receives or transfers was left at `t`:
    /// blocking sends awaiting answers learn their leave; blocking
    /// transfers extend the run of serialized ones; slow one-sided
    /// transfers and small sends are counted.
    pub(super) fn transfer_left(&mut self, f: &Frame, t: f64) {
        let kind = f.kind;
        if matches!(kind, RegionKind::Send | RegionKind::SendRecv) {
            for p in self.pending.iter_mut().rev() {
                if p.leave.is_some() {
                    break;
                }
                p.leave = Some(t);
            }
        }
        if let Some((peer, bytes)) = f.xfer {
            let blocking = matches!(
                kind,
                RegionKind::Send | RegionKind::Recv | RegionKind::Put | RegionKind::Get
            );
            if blocking {
                self.transfer(f, t, peer);
            }
            // A blocking one-sided transfer slower than its
            // fastest: a request for the competing-transfer
            // step (rma.rs).
            let d = t - f.enter;
            if matches!(kind, RegionKind::Put | RegionKind::Get)
                && d > RMA_SLOW_NS
                && d > 1.5 * self.res.paths[f.path as usize].min
                && self.res.rma_slow.len() < RMA_REQUESTS
            {
                self.res.rma_slow.push((peer, f.enter, t, f.path));
            }
            if kind == RegionKind::Send && bytes <= SMALL_BYTES {
                let e = self.res.small.entry(peer).or_insert((0, 0.0, f.path));
                e.0 += 1;
                e.1 += t - f.enter;
            }
        }
    }
}
