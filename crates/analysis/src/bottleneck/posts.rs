//! What the wait-state passes post for each other on the replay's board
//! (keys and values: a send's time, a receiver's answers, merged arrivals
//! at a collective, a shared object's producer), and how the values
//! travel between analysis ranks.
//!
//! A value carries its poster's critical path, a chain of immutable nodes
//! whose past every later post shares. Between ranks a node travels once:
//! [`PathPieceNames`] names it (the rank that first sent it, its number there)
//! and sends the name after that, whichever rank sends it on. Every rank
//! decodes every rank's messages in order, so all know the same names.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use parallax_view::deps::{Channel, Collective, Message};

use super::path::PathPiece;
use crate::pairing::Link;
use crate::replay::{Codec, Route};
use crate::wire::{Reader, Wire};

/// What a value on the board is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A message.
    Msg(Message),
    /// The receiver's answers to the `batch`-th batch of blocking sends
    /// on a channel.
    Back(Channel, u64),
    /// The arrivals at a collective.
    Coll(Collective),
    /// A producer of a shared object.
    Obj(Link),
}

/// A producer's note: what it computed since its previous
/// synchronization, and the waiting in that interval with its culprits.
pub type Note = Arc<Interval>;

/// Merged arrivals at one collective.
#[derive(Clone, Debug)]
pub struct Arrival {
    /// Latest enter time and its location.
    pub(crate) last: (f64, u32),
    pub(crate) last_chain: Option<Arc<PathPiece>>,
    pub(crate) last_note: Note,
    pub(crate) last_nonroot: Option<(f64, u32)>,
    pub(crate) nonroot_note: Option<Note>,
    pub(crate) root: Option<(f64, u32)>,
    pub(crate) root_note: Option<Note>,
    /// Communication since the previous barrier, summed.
    pub(crate) activity: u64,
    /// Lowest and highest rank taking part.
    pub(crate) ranks: (u32, u32),
    /// Work since the previous collective: largest (ns, location), sum ns.
    pub(crate) work_max: (u64, u32),
    pub(crate) work_sum: u64,
    /// Latest end of set-up (MPI_Init) of a location that came straight
    /// from it.
    pub(crate) setup: f64,
}

/// A value on the board.
#[derive(Clone, Debug)]
pub enum PostedValue {
    Send {
        t: f64,
        loc: u32,
        setup: f64,
        blocking: bool,
        note: Note,
        chain: Option<Arc<PathPiece>>,
    },
    Back {
        enters: Vec<f64>,
        loc: u32,
    },
    Arr(Box<Arrival>),
    Post {
        t: f64,
        loc: u32,
        setup: f64,
        note: Note,
        chain: Option<Arc<PathPiece>>,
    },
}

fn later(a: (f64, u32), b: (f64, u32)) -> bool {
    b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).is_gt()
}

/// Merges two contributions; independent of their order.
pub fn combine(a: &mut PostedValue, b: &PostedValue) {
    if let (PostedValue::Arr(x), PostedValue::Arr(y)) = (a, b) {
        if later(x.last, y.last) {
            x.last = y.last;
            x.last_chain = y.last_chain.clone();
            x.last_note = y.last_note.clone();
        }
        if let Some(q) = y.last_nonroot {
            if x.last_nonroot.is_none_or(|p| later(p, q)) {
                x.last_nonroot = Some(q);
                x.nonroot_note = y.nonroot_note.clone();
            }
        }
        if x.root.is_none() {
            x.root = y.root;
            x.root_note = y.root_note.clone();
        }
        x.activity += y.activity;
        x.ranks = (x.ranks.0.min(y.ranks.0), x.ranks.1.max(y.ranks.1));
        if (y.work_max.0, y.work_max.1) > (x.work_max.0, x.work_max.1) {
            x.work_max = y.work_max;
        }
        x.work_sum += y.work_sum;
        x.setup = x.setup.max(y.setup);
    }
}

/// What the location did since its previous synchronization: the note a
/// producer keeps to charge the waiting it causes.
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub(crate) comp: Vec<(u32, f64)>,
    /// Waiting in it and who caused it.
    pub(crate) waits: Vec<(u32, f64)>,
}

impl Interval {
    /// Its computation and its waiting, summed, ns.
    pub(super) fn totals(&self) -> (f64, f64) {
        let sum = |v: &[(u32, f64)]| v.iter().map(|e| e.1).sum();
        (sum(&self.comp), sum(&self.waits))
    }
}

impl Wire for Key {
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            Key::Msg(m) => (0u8, m).put(out),
            Key::Back(c, batch) => (1u8, c, batch).put(out),
            Key::Coll(c) => (2u8, c).put(out),
            Key::Obj(l) => (3u8, l).put(out),
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => Key::Msg(Wire::get(r)),
            1 => {
                let (c, batch) = Wire::get(r);
                Key::Back(c, batch)
            }
            2 => Key::Coll(Wire::get(r)),
            _ => Key::Obj(Link::get(r)),
        }
    }
}

// Messages are read by their receiver, answers to blocking sends by the
// sender; collectives and shared objects have no single reading rank.
impl Route for Key {
    fn reader_rank(&self) -> Option<u32> {
        match *self {
            Key::Msg(m) => Some(m.channel.dst),
            Key::Back(c, _) => Some(c.src),
            _ => None,
        }
    }
}

crate::wire::fields!(Interval { comp, waits });

/// Naming epochs, unique in the process: a node's name from an earlier
/// epoch is void.
static EPOCHS: AtomicU32 = AtomicU32::new(1);

/// One rank's codec of the values: the chain nodes already sent or
/// received in this epoch, by the rank that named them, in their order
/// (a rank numbers its nodes 0, 1, ... in each epoch).
pub struct PathPieceNames {
    epoch: u32,
    got: Vec<Vec<Arc<PathPiece>>>,
    me: u32,
}

impl PathPieceNames {
    fn of(&mut self, rank: u32) -> &mut Vec<Arc<PathPiece>> {
        let r = rank as usize;
        if self.got.len() <= r {
            self.got.resize_with(r + 1, Vec::new);
        }
        &mut self.got[r]
    }

    /// A chain: none (0), by the name of its newest node (2), or (3) the
    /// nodes not yet named, oldest first, after what they rest on (a chain
    /// sent as 0 or 2), named in that order.
    fn put_chain(&mut self, c: &Option<Arc<PathPiece>>, out: &mut Vec<u8>) {
        let Some(c) = c else {
            out.push(0);
            return;
        };
        let epoch = self.epoch;
        if let Some(name) = c.name.get(epoch) {
            out.push(2);
            name.put(out);
            return;
        }
        let mut fresh = vec![c];
        while let Some(b) = &fresh[fresh.len() - 1].base {
            if b.name.get(epoch).is_some() {
                break;
            }
            fresh.push(b);
        }
        out.push(3);
        self.put_chain(&fresh[fresh.len() - 1].base, out);
        let me = self.me;
        let mine = self.of(me);
        let first = mine.len() as u64;
        (first, fresh.len() as u64).put(out);
        for (i, node) in fresh.iter().rev().enumerate() {
            node.seg.put(out);
            node.depth.put(out);
            node.name.set(epoch, (me, first + i as u64));
            mine.push(Arc::clone(node));
        }
    }

    fn get_chain(&mut self, from: u32, r: &mut Reader<'_>) -> Option<Arc<PathPiece>> {
        match u8::get(r) {
            0 => None,
            2 => {
                let (rank, n): (u32, u64) = Wire::get(r);
                Some(self.of(rank)[n as usize].clone())
            }
            _ => {
                let mut base = self.get_chain(from, r);
                let (first, k): (u64, u64) = Wire::get(r);
                let epoch = self.epoch;
                let theirs = self.of(from);
                assert_eq!(theirs.len() as u64, first, "chain nodes arrive in order");
                for i in 0..k {
                    let (seg, depth) = Wire::get(r);
                    let c = Arc::new(PathPiece::node(base.take(), seg, depth));
                    c.name.set(epoch, (from, first + i));
                    theirs.push(c.clone());
                    base = Some(c);
                }
                base
            }
        }
    }

    fn put_arrival(&mut self, a: &Arrival, out: &mut Vec<u8>) {
        let Arrival {
            last,
            last_chain,
            last_note,
            last_nonroot,
            nonroot_note,
            root,
            root_note,
            activity,
            ranks,
            work_max,
            work_sum,
            setup,
        } = a;
        last.put(out);
        self.put_chain(last_chain, out);
        last_note.put(out);
        last_nonroot.put(out);
        nonroot_note.put(out);
        root.put(out);
        root_note.put(out);
        (*activity, *ranks, *work_max, *work_sum, *setup).put(out);
    }

    fn get_arrival(&mut self, from: u32, r: &mut Reader<'_>) -> Arrival {
        let last = Wire::get(r);
        let last_chain = self.get_chain(from, r);
        let (last_note, last_nonroot, nonroot_note, root, root_note) = Wire::get(r);
        let (activity, ranks, work_max, work_sum, setup) = Wire::get(r);
        Arrival {
            last,
            last_chain,
            last_note,
            last_nonroot,
            nonroot_note,
            root,
            root_note,
            activity,
            ranks,
            work_max,
            work_sum,
            setup,
        }
    }
}

impl Codec<PostedValue> for PathPieceNames {
    fn new(me: u32) -> Self {
        PathPieceNames {
            epoch: EPOCHS.fetch_add(1, Ordering::Relaxed),
            got: Vec::new(),
            me,
        }
    }

    fn put(&mut self, v: &PostedValue, out: &mut Vec<u8>) {
        match v {
            PostedValue::Send {
                t,
                loc,
                setup,
                blocking,
                note,
                chain,
            } => {
                out.push(0);
                (*t, *loc, *setup, *blocking).put(out);
                note.put(out);
                self.put_chain(chain, out);
            }
            PostedValue::Back { enters, loc } => {
                out.push(1);
                enters.put(out);
                loc.put(out);
            }
            PostedValue::Arr(a) => {
                out.push(2);
                self.put_arrival(a, out);
            }
            PostedValue::Post {
                t,
                loc,
                setup,
                note,
                chain,
            } => {
                out.push(3);
                (*t, *loc, *setup).put(out);
                note.put(out);
                self.put_chain(chain, out);
            }
        }
    }

    fn get(&mut self, from: u32, r: &mut Reader<'_>) -> PostedValue {
        match u8::get(r) {
            0 => {
                let (t, loc, setup, blocking) = Wire::get(r);
                let note = Wire::get(r);
                let chain = self.get_chain(from, r);
                PostedValue::Send {
                    t,
                    loc,
                    setup,
                    blocking,
                    note,
                    chain,
                }
            }
            1 => {
                let (enters, loc) = Wire::get(r);
                PostedValue::Back { enters, loc }
            }
            2 => PostedValue::Arr(Box::new(self.get_arrival(from, r))),
            _ => {
                let (t, loc, setup) = Wire::get(r);
                let note = Wire::get(r);
                let chain = self.get_chain(from, r);
                PostedValue::Post {
                    t,
                    loc,
                    setup,
                    note,
                    chain,
                }
            }
        }
    }

    /// Every name is forgotten: a new epoch.
    fn forget(&mut self) {
        self.got.iter_mut().for_each(Vec::clear);
        self.epoch = EPOCHS.fetch_add(1, Ordering::Relaxed);
    }
}
