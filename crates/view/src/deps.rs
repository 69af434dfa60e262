//! What an event of one location needs from events of other locations and
//! what it posts for them: the one place that says which events depend on
//! which, for compensation, bottleneck analysis and the arrows of trace
//! exports alike.
//!
//! Messages and collectives pair by counting along each location: the n-th
//! receive on a channel takes the channel's n-th send (MPI's
//! non-overtaking rule), and the n-th collective on a communicator meets
//! every member's n-th. [`Sequencer`] counts them as a location's events go
//! by. A shared object (lock, semaphore, synchronization variable, thread
//! start or end, memory word) is named with the event's role on it
//! ([`object_event`]); which producer a consumer took depends on the
//! measured order across locations, which the analyses' pairing works out.

use parallax_model::event::{CollectiveOp, EventKind};

use crate::fasthash::FastMap;

/// A point-to-point channel: messages from `src` to `dst` on (comm, tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Channel {
    /// Communicator.
    pub comm: u64,
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Tag.
    pub tag: u32,
}

/// The `seq`-th message of a channel, counting from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    /// Its channel.
    pub channel: Channel,
    /// Which message of the channel.
    pub seq: u64,
}

/// The `seq`-th collective on communicator `comm`, counting from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Collective {
    /// Communicator.
    pub comm: u64,
    /// Which collective of the communicator.
    pub seq: u64,
}

/// What kind of shared object an event acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Object {
    /// A lock, by address.
    #[default]
    Lock,
    /// A semaphore or condition variable, by address.
    Sem,
    /// A synchronization variable (advance/await), by address.
    SyncVar,
    /// A thread's start, by its creation token.
    ThreadStart,
    /// A thread's end, by its creation token.
    ThreadEnd,
    /// A memory word of a rank: (rank << 48) ^ address.
    Value,
}

impl Object {
    /// Number of kinds.
    pub const COUNT: usize = 6;
}

/// Whether an event makes what others wait for, or waits for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A release, post, advance, creation, end or write.
    Producer,
    /// An acquisition, wait, await, start, join or value reached.
    Consumer,
}

/// An event's action on a shared object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectEvent {
    /// The object's kind.
    pub object: Object,
    /// The object: an address, a creation token or a memory word.
    pub id: u64,
    /// What the event does on it.
    pub role: Role,
    /// For a synchronization variable, the index advanced to or awaited;
    /// else 0.
    pub index: u64,
}

/// What one event needs from or posts for other locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    /// A send, or the start of a non-blocking one: its receive needs it.
    Sends(Message),
    /// A receive, or the completion of a non-blocking one: needs its send.
    Receives(Message),
    /// The end of a collective: the members' arrivals meet there.
    Collective {
        /// Which collective.
        at: Collective,
        /// Its operation.
        op: CollectiveOp,
        /// Its root rank, or `NO_ROOT`.
        root: u32,
    },
    /// An action on a shared object.
    Object(ObjectEvent),
}

/// The word that names memory `addr` of rank `rank`.
pub fn value_id(rank: u32, addr: u64) -> u64 {
    ((rank as u64) << 48) ^ addr
}

/// The action on a shared object of an event of a location of `rank`, if
/// it is one.
pub fn object_event(kind: &EventKind, rank: u32) -> Option<ObjectEvent> {
    use EventKind::*;
    let (object, id, role, index) = match *kind {
        LockRelease { lock } => (Object::Lock, lock, Role::Producer, 0),
        LockAcquired { lock } => (Object::Lock, lock, Role::Consumer, 0),
        SemPost { sem } => (Object::Sem, sem, Role::Producer, 0),
        SemAcquired { sem } => (Object::Sem, sem, Role::Consumer, 0),
        Advance { var, index } => (Object::SyncVar, var, Role::Producer, index),
        AwaitDone { var, index } => (Object::SyncVar, var, Role::Consumer, index),
        ThreadCreate { token } => (Object::ThreadStart, token, Role::Producer, 0),
        ThreadBegin { token } => (Object::ThreadStart, token, Role::Consumer, 0),
        ThreadEnd { token } => (Object::ThreadEnd, token, Role::Producer, 0),
        ThreadJoin { token } => (Object::ThreadEnd, token, Role::Consumer, 0),
        Put { target, addr, .. } | Atomic { target, addr, .. } => {
            (Object::Value, value_id(target, addr), Role::Producer, 0)
        }
        ValueReached { addr } => (Object::Value, value_id(rank, addr), Role::Consumer, 0),
        _ => return None,
    };
    Some(ObjectEvent {
        object,
        id,
        role,
        index,
    })
}

/// The counts along one location that name its messages and collectives.
/// (Channels are counted whole, ranks included, so that one sequencer can
/// also follow several locations of different ranks: an export's arrows.)
#[derive(Clone, Debug, Default)]
pub struct Sequencer {
    sent: FastMap<Channel, u64>,
    received: FastMap<Channel, u64>,
    collectives: FastMap<u64, u64>,
}

impl Sequencer {
    /// What event `kind` of this location, of rank `rank`, needs or posts;
    /// counts it. Call it with every event of the location, in order.
    #[inline]
    pub fn of(&mut self, rank: u32, kind: &EventKind) -> Option<Dep> {
        use EventKind::*;
        match *kind {
            Send {
                peer, tag, comm, ..
            }
            | IsendBegin {
                peer, tag, comm, ..
            } => {
                let channel = Channel {
                    comm,
                    src: rank,
                    dst: peer,
                    tag,
                };
                let seq = count(&mut self.sent, channel);
                Some(Dep::Sends(Message { channel, seq }))
            }
            Recv {
                peer, tag, comm, ..
            }
            | IrecvComplete {
                peer, tag, comm, ..
            } => {
                let channel = Channel {
                    comm,
                    src: peer,
                    dst: rank,
                    tag,
                };
                let seq = count(&mut self.received, channel);
                Some(Dep::Receives(Message { channel, seq }))
            }
            CollectiveEnd { op, comm, root, .. } => {
                let seq = count(&mut self.collectives, comm);
                let at = Collective { comm, seq };
                Some(Dep::Collective { at, op, root })
            }
            ref k => object_event(k, rank).map(Dep::Object),
        }
    }

    /// Channels and communicators counted so far: what its memory grows
    /// with.
    pub fn len(&self) -> usize {
        self.sent.len() + self.received.len() + self.collectives.len()
    }

    /// Whether nothing was counted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every communicator with the number of collectives ended on it, in
    /// order of communicator.
    pub fn collectives(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.collectives.iter().map(|(&c, &n)| (c, n)).collect();
        v.sort_unstable();
        v
    }
}

/// The count of `k` before this one.
#[inline]
fn count<K: std::hash::Hash + Eq>(m: &mut FastMap<K, u64>, k: K) -> u64 {
    let c = m.entry(k).or_insert(0);
    *c += 1;
    *c - 1
}

/// Which end of an arrow an event is, under the arrow's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowEnd {
    /// The arrow starts here (a send, a thread's creation or end).
    Start(u64),
    /// The arrow ends here (a receive, a thread's start or join).
    End(u64),
}

/// The arrows that trace formats draw between dependent events of
/// different locations: messages (send to receive) and thread hand-offs
/// (creation to start, end to join). Each end computes the arrow's id on
/// its own, so locations can be written one after another.
#[derive(Debug, Default)]
pub struct Flows(Sequencer);

impl Flows {
    /// Channels and communicators counted so far: what its memory grows
    /// with.
    pub fn channels(&self) -> usize {
        self.0.len()
    }

    /// The arrow end of event `kind` at rank `rank`, if it has one. Call
    /// it with every event of a location, in order.
    pub fn of(&mut self, rank: u32, kind: &EventKind) -> Option<FlowEnd> {
        let message = |m: Message| {
            let c = m.channel;
            hash(&[
                1,
                c.comm,
                c.src as u64,
                c.dst as u64,
                c.tag as u64,
                m.seq + 1,
            ])
        };
        match self.0.of(rank, kind)? {
            Dep::Sends(m) => Some(FlowEnd::Start(message(m))),
            Dep::Receives(m) => Some(FlowEnd::End(message(m))),
            Dep::Object(o) => {
                let tag = match o.object {
                    Object::ThreadStart => 2,
                    Object::ThreadEnd => 3,
                    _ => return None,
                };
                let id = hash(&[tag, rank as u64, o.id]);
                Some(match o.role {
                    Role::Producer => FlowEnd::Start(id),
                    Role::Consumer => FlowEnd::End(id),
                })
            }
            Dep::Collective { .. } => None,
        }
    }
}

/// A 64-bit mix of `v` (splitmix64 steps), never 0: ids of arrows and
/// of other things trace formats name by number.
pub fn hash(v: &[u64]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    for &x in v {
        h ^= x;
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    h.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(peer: u32, tag: u32) -> EventKind {
        EventKind::Send {
            peer,
            tag,
            comm: 0,
            bytes: 8,
        }
    }

    fn recv(peer: u32, tag: u32) -> EventKind {
        EventKind::Recv {
            peer,
            tag,
            comm: 0,
            bytes: 8,
        }
    }

    #[test]
    fn the_nth_receive_of_a_channel_takes_its_nth_send() {
        let (mut a, mut b) = (Sequencer::default(), Sequencer::default());
        let sends: Vec<_> = [send(1, 5), send(1, 6), send(1, 5)]
            .iter()
            .map(|k| a.of(0, k))
            .collect();
        let recvs: Vec<_> = [recv(0, 5), recv(0, 5), recv(0, 6)]
            .iter()
            .map(|k| b.of(1, k))
            .collect();
        let key = |d: Option<Dep>| match d {
            Some(Dep::Sends(m) | Dep::Receives(m)) => (m.channel, m.seq),
            other => panic!("not a message: {other:?}"),
        };
        assert_eq!(key(sends[0]), key(recvs[0]));
        assert_eq!(key(sends[2]), key(recvs[1]));
        assert_eq!(key(sends[1]), key(recvs[2]));
        assert_ne!(key(sends[0]), key(sends[2]));
    }

    #[test]
    fn arrows_join_sends_to_receives_and_creations_to_starts() {
        let (mut a, mut b) = (Flows::default(), Flows::default());
        let (Some(FlowEnd::Start(s)), Some(FlowEnd::End(r))) =
            (a.of(0, &send(1, 5)), b.of(1, &recv(0, 5)))
        else {
            panic!("a message is an arrow");
        };
        assert_eq!(s, r);
        let create = a.of(0, &EventKind::ThreadCreate { token: 9 });
        let begin = b.of(0, &EventKind::ThreadBegin { token: 9 });
        let other_rank = b.of(1, &EventKind::ThreadBegin { token: 9 });
        let (Some(FlowEnd::Start(c)), Some(FlowEnd::End(t)), Some(FlowEnd::End(o))) =
            (create, begin, other_rank)
        else {
            panic!("a thread hand-off is an arrow");
        };
        assert_eq!(c, t);
        assert_ne!(c, o, "tokens are per process");
        assert_eq!(a.of(0, &EventKind::LockRelease { lock: 1 }), None);
        assert_eq!(a.channels(), 1);
    }

    #[test]
    fn one_flows_follows_locations_of_several_ranks() {
        let (mut senders, mut receiver) = (Flows::default(), Flows::default());
        let from0 = senders.of(0, &send(2, 5));
        let from1 = senders.of(1, &send(2, 5));
        let first = receiver.of(2, &recv(1, 5));
        let (Some(FlowEnd::Start(s0)), Some(FlowEnd::Start(s1)), Some(FlowEnd::End(r))) =
            (from0, from1, first)
        else {
            panic!("messages are arrows");
        };
        assert_eq!(r, s1, "rank 1's first message to rank 2");
        assert_ne!(r, s0);
    }
}
