//! What the locations' compensation replays post for each other: a
//! producer's approximated and measured times, under the key of the
//! dependency (a message, a collective's arrivals or root, a shared
//! object's producer), and their encoding between analysis ranks.

use crate::pairing::Link;
use crate::replay::Route;
use crate::wire::{Reader, Wire};

/// What a dependent event waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// The `seq`-th message from `src` to `dst` on (comm, tag).
    Msg {
        comm: u64,
        src: u32,
        dst: u32,
        tag: u32,
        seq: u64,
    },
    /// Every arrival at the `seq`-th collective on `comm`.
    Arrivals { comm: u64, seq: u64 },
    /// The root's arrival at the `seq`-th collective on `comm`.
    Root { comm: u64, seq: u64 },
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
            Key::Msg {
                comm,
                src,
                dst,
                tag,
                seq,
            } => {
                out.push(0);
                (comm, src, dst, tag, seq).put(out);
            }
            Key::Arrivals { comm, seq } => {
                out.push(1);
                (comm, seq).put(out);
            }
            Key::Root { comm, seq } => {
                out.push(2);
                (comm, seq).put(out);
            }
            Key::Obj(l) => {
                out.push(3);
                l.put(out);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => {
                let (comm, src, dst, tag, seq) = Wire::get(r);
                Key::Msg {
                    comm,
                    src,
                    dst,
                    tag,
                    seq,
                }
            }
            1 => {
                let (comm, seq) = Wire::get(r);
                Key::Arrivals { comm, seq }
            }
            2 => {
                let (comm, seq) = Wire::get(r);
                Key::Root { comm, seq }
            }
            _ => Key::Obj(Link::get(r)),
        }
    }
}

impl Route for Key {
    fn reader_rank(&self) -> Option<u32> {
        match *self {
            Key::Msg { dst, .. } => Some(dst),
            _ => None,
        }
    }
}
