//! What the locations' compensation replays post for each other: a
//! producer's approximated and measured times, under the key of the
//! dependency (a message, a collective's arrivals or root, a shared
//! object's producer), and their encoding between analysis ranks.

use parallax_view::deps::{Collective, Message};

use crate::pairing::Link;
use crate::replay::Route;
use crate::wire::{Reader, Wire};

/// What a dependent event waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A message.
    Msg(Message),
    /// Every arrival at a collective.
    Arrivals(Collective),
    /// The root's arrival at a collective.
    Root(Collective),
    /// A producer of a shared object.
    Obj(Link),
}

/// A post: the producer's approximated and measured times, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    pub ta: f64,
    pub tm: f64,
}

/// Merges arrivals: the latest of each.
pub fn latest(a: &mut Stamp, b: &Stamp) {
    a.ta = a.ta.max(b.ta);
    a.tm = a.tm.max(b.tm);
}

crate::wire::fields!(Stamp { ta, tm });

impl Wire for Key {
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            Key::Msg(m) => (0u8, m).put(out),
            Key::Arrivals(c) => (1u8, c).put(out),
            Key::Root(c) => (2u8, c).put(out),
            Key::Obj(l) => (3u8, l).put(out),
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => Key::Msg(Wire::get(r)),
            1 => Key::Arrivals(Wire::get(r)),
            2 => Key::Root(Wire::get(r)),
            _ => Key::Obj(Link::get(r)),
        }
    }
}

impl Route for Key {
    fn reader_rank(&self) -> Option<u32> {
        match *self {
            Key::Msg(m) => Some(m.channel.dst),
            _ => None,
        }
    }
}
