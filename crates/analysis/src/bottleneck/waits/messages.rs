//! Messages: Late Sender (and Wrong Order among them), Late Receiver
//! through the receivers' answers to blocking sends.

use parallax_model::event::{Event, EventKind};
use parallax_model::region::{Category, RegionKind};

use std::collections::VecDeque;

use parallax_view::deps::{Channel, Message};
use parallax_view::fasthash::FastMap;

use super::{waiting, Frame, LocPass, RecvNeed, Transfer, WaitedFor, BATCH};
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

/// A location's message state: the blocking sends awaiting answers and
/// the answers it owes as a receiver (Late Receiver), the recent Late
/// Senders (Wrong Order) and the run of blocking transfers (serialized
/// transfers).
#[derive(Debug)]
pub(super) struct Messages {
    /// Blocking sends per channel.
    pub(super) blocking_sent: FastMap<Channel, u64>,
    /// The answers being collected per channel as a receiver.
    pub(super) answers_out: FastMap<Channel, Answers>,
    /// Answers taken but not all used.
    pub(super) answers_in: FastMap<Key, Answered>,
    /// Whether the answers of batches not full were posted (at the end).
    pub(super) flushed: bool,
    /// Time of the last message event (sent, received or completed).
    pub(super) last_msg: f64,
    /// A non-blocking receive posted right after a polling run of message
    /// waits (found by MPI_Iprobe or MPI_Improbe): its completion waited
    /// from the run's start.
    pub(super) probed_irecv: Option<u64>,
    /// Recent Late Sender instances, for Wrong Order.
    pub(super) ring: VecDeque<LateSend>,
    /// Blocking sends awaiting their answers, oldest first.
    pub(super) pending: VecDeque<Pending>,
    pub(super) run: Run,
}

impl Default for Messages {
    fn default() -> Messages {
        Messages {
            blocking_sent: FastMap::default(),
            answers_out: FastMap::default(),
            answers_in: FastMap::default(),
            flushed: false,
            last_msg: f64::NEG_INFINITY,
            probed_irecv: None,
            ring: VecDeque::new(),
            pending: VecDeque::new(),
            run: Run::default(),
        }
    }
}

/// A receiver's answers on one channel being collected: the number of
/// the batch and the enter times of its receives so far.
#[derive(Debug, Default)]
pub(super) struct Answers {
    batch: u64,
    enters: Vec<f64>,
}

/// A batch of answers taken: the receives' enter times and the answering
/// location.
#[derive(Debug)]
pub(super) struct Answered {
    enters: Vec<f64>,
    loc: u32,
}

/// A blocking send awaiting the receiver's answer: its batch and place
/// in it, its region's enter and leave (once known), its call path.
#[derive(Debug)]
pub(super) struct Pending {
    key: Key,
    pos: usize,
    enter: f64,
    leave: Option<f64>,
    path: u32,
}

/// A run of consecutive blocking transfers.
#[derive(Debug, Default)]
pub(super) struct Run {
    end: f64,
    peers: Vec<u32>,
    total: f64,
    longest: f64,
    path: u32,
}

/// A Late Sender instance, remembered for Wrong Order.
#[derive(Clone, Copy, Debug)]
pub(super) struct LateSend {
    /// When the message was sent.
    sent: f64,
    /// Call path of the receive.
    path: u32,
    /// The sending location.
    sender: u32,
    /// The receive's waiting, ns.
    wait: f64,
    /// Enter time of the receiving call.
    call: f64,
    /// The receiving location's computation time when it ended.
    comp: f64,
}

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
        self.msgs.last_msg = t;
        let chain = self.history.cp.snapshot();
        let blocking = blocking_call
            && self
                .calls
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
            let sent = self.msgs.blocking_sent.entry(msg.channel).or_insert(0);
            let n = *sent;
            *sent += 1;
            self.msgs.pending.push_back(Pending {
                key: Key::Back(msg.channel, n / BATCH),
                pos: (n % BATCH) as usize,
                enter,
                leave: None,
                path: self.top_path(),
            });
        }
        self.colls.activity += 1;
        if let Some(f) = self.calls.stack.last_mut() {
            f.xfer = Some(Transfer {
                peer: msg.channel.dst,
                bytes,
            });
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
            IrecvComplete { request, .. } => self.msgs.probed_irecv.take() == Some(request),
            _ => false,
        };
        let probe = self.probe.take().filter(|p| {
            (after_probe && p.kind == RegionKind::Wait || self.polled(p))
                && self.msgs.last_msg < p.start
        });
        self.msgs.last_msg = t;
        self.need = Some(WaitedFor::Recv(RecvNeed {
            msg,
            enter: probe.map_or_else(|| self.enter_time(t), |p| p.start),
            probe: probe.map(|p| p.path),
        }));
        self.colls.activity += 1;
        if matches!(e.kind, Recv { .. }) {
            if let Some(f) = self.calls.stack.last_mut() {
                if f.kind == RegionKind::Recv {
                    f.xfer = Some(Transfer {
                        peer: msg.channel.src,
                        bytes: 0,
                    });
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
        let g = self.calls.stack.last().map_or(regions::OUTSIDE, |f| f.g);
        let total = waiting(enter, s, t, setup, self.setup_end);
        let before = self.calls.stack.last().map_or(0.0, |f| f.ls);
        if let Some(f) = self.calls.stack.last_mut() {
            f.ls = f.ls.max(total);
        }
        let wait = (total - before).max(0.0);
        let path = probe.unwrap_or(path);
        if wait > 0.0 {
            self.record(Pattern::LateSender, path, wait, Some(src));
            self.charge(src, &note, wait);
            self.history.cp.adopt(chain);
            self.history.cp.add(g, t - s.min(t));
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
        self.msgs
            .ring
            .retain(|l| comp - l.comp <= WRONG_ORDER_GAP * l.wait);
        let mut i = 0;
        while i < self.msgs.ring.len() {
            let l = self.msgs.ring[i];
            if l.sent > s && l.call != enter {
                self.res
                    .waits
                    .entry((Pattern::WrongOrder, l.path))
                    .or_default()
                    .add(l.wait, Some(l.sender));
                self.msgs.ring.remove(i);
            } else {
                i += 1;
            }
        }
        if wait > 0.0 {
            if self.msgs.ring.len() == RING {
                self.msgs.ring.pop_front();
            }
            self.msgs.ring.push_back(LateSend {
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
            let a = self.msgs.answers_out.entry(msg.channel).or_default();
            a.enters.push(enter);
            if a.enters.len() as u64 == BATCH {
                let enters = std::mem::take(&mut a.enters);
                let key = Key::Back(msg.channel, a.batch);
                a.batch += 1;
                board.post(key, PostedValue::Back { enters, loc: me }, 1);
            }
        }
    }

    pub(super) fn close_run(&mut self) {
        let r = std::mem::take(&mut self.msgs.run);
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
        if self.msgs.run.peers.is_empty()
            || f.enter - self.msgs.run.end > RUN_GAP_NS
            || self.msgs.run.peers.last() == Some(&peer)
        {
            self.close_run();
            self.msgs.run.path = f.path;
        }
        self.msgs.run.end = t;
        self.msgs.run.peers.push(peer);
        self.msgs.run.total += dur;
        self.msgs.run.longest = self.msgs.run.longest.max(dur);
    }

    /// Takes the answers that are there; with `wait`, blocks on the first
    /// one missing.
    pub(super) fn answers(&mut self, board: &Postings<Key, PostedValue>, wait: bool) -> bool {
        while let Some(p) = self.msgs.pending.front() {
            if p.leave.is_none() && !wait {
                return true;
            }
            let key = p.key;
            if let std::collections::hash_map::Entry::Vacant(slot) = self.msgs.answers_in.entry(key)
            {
                match board.take(&key) {
                    Some(PostedValue::Back { enters, loc }) => {
                        slot.insert(Answered { enters, loc });
                    }
                    Some(_) => {
                        self.msgs.pending.pop_front();
                        self.res.unmatched += 1;
                        continue;
                    }
                    None if wait && self.force => {
                        self.force = false;
                        self.msgs.pending.pop_front();
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
            let p = self.msgs.pending.pop_front().expect("front exists");
            let (r, loc, done) = match self.msgs.answers_in.get(&key) {
                Some(a) => (
                    a.enters.get(p.pos).copied(),
                    a.loc,
                    p.pos + 1 >= a.enters.len(),
                ),
                None => (None, 0, true),
            };
            if done {
                self.msgs.answers_in.remove(&key);
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
        if self.msgs.pending.len() > 64 && (self.res.events & 63) == 0 {
            self.answers(board, false);
        }
    }

    /// Posts the answers of channels whose batch is not full: the stream
    /// is over.
    pub(super) fn flush(&mut self, board: &Postings<Key, PostedValue>) {
        if self.msgs.flushed {
            return;
        }
        self.msgs.flushed = true;
        let mut out: Vec<_> = self.msgs.answers_out.drain().collect();
        out.sort_by_key(|e| e.0);
        for (channel, Answers { batch, enters }) in out {
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
            for p in self.msgs.pending.iter_mut().rev() {
                if p.leave.is_some() {
                    break;
                }
                p.leave = Some(t);
            }
        }
        if let Some(Transfer { peer, bytes }) = f.xfer {
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
