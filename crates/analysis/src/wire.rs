//! A byte encoding of the values that analysis ranks exchange: posts on a
//! replay's board, per-location results gathered to the root, listings
//! of the pairing pass.
//!
//! Decoding gives back exactly the encoded value (floats bit for bit,
//! maps entry by entry in their iteration order), so an analysis spread
//! over ranks computes with the same numbers as on one. Little-endian
//! throughout; the format is never stored, only sent between ranks of
//! one job running the same binary.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// A value that can be sent to another analysis rank.
pub trait Wire: Sized {
    /// Appends the encoding of `self` to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// Decodes a value from the front of `r`.
    fn get(r: &mut Reader<'_>) -> Self;
}

/// A cursor over received bytes. Bytes come from ranks of the same job,
/// so a short buffer is a bug, not an input error: it panics.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        a
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        self.bytes(N).try_into().expect("split_at gave N bytes")
    }
}

/// Encodes one value.
pub fn encode<T: Wire>(v: &T) -> Vec<u8> {
    let mut out = Vec::new();
    v.put(&mut out);
    out
}

/// Decodes a value that fills all of `buf`.
pub fn decode<T: Wire>(buf: &[u8]) -> T {
    let mut r = Reader::new(buf);
    let v = T::get(&mut r);
    assert!(r.is_empty(), "trailing bytes after a decoded value");
    v
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            #[inline]
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(r: &mut Reader<'_>) -> Self {
                <$t>::from_le_bytes(r.array())
            }
        }
    )*};
}

int!(u8, i8, u16, i32, u32, u64, i64, f64);

impl Wire for usize {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u64).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        u64::get(r) as usize
    }
}

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        u8::get(r) != 0
    }
}

impl Wire for () {
    fn put(&self, _: &mut Vec<u8>) {}
    fn get(_: &mut Reader<'_>) -> Self {}
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let n = usize::get(r);
        String::from_utf8_lossy(r.bytes(n)).into_owned()
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.put(out);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        (u8::get(r) != 0).then(|| T::get(r))
    }
}

impl<T: Wire> Wire for Box<T> {
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        Box::new(T::get(r))
    }
}

// Sharing is not kept: the receiver gets its own copy.
impl<T: Wire> Wire for Arc<T> {
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        Arc::new(T::get(r))
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for v in self {
            v.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let n = usize::get(r);
        (0..n).map(|_| T::get(r)).collect()
    }
}

impl<T: Wire> Wire for VecDeque<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for v in self {
            v.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let n = usize::get(r);
        (0..n).map(|_| T::get(r)).collect()
    }
}

impl<T: Wire + Copy + Default, const N: usize> Wire for [T; N] {
    fn put(&self, out: &mut Vec<u8>) {
        for v in self {
            v.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let mut a = [T::default(); N];
        for v in &mut a {
            *v = T::get(r);
        }
        a
    }
}

impl<K: Wire + Ord, V: Wire> Wire for BTreeMap<K, V> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for (k, v) in self {
            k.put(out);
            v.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let n = usize::get(r);
        (0..n).map(|_| (K::get(r), V::get(r))).collect()
    }
}

// Entries go in the sender's iteration order; readers of these maps sort
// or sum integers, so the receiver's own order does not change a result.
impl<K: Wire + Eq + Hash, V: Wire, S: BuildHasher + Default> Wire for HashMap<K, V, S> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for (k, v) in self {
            k.put(out);
            v.put(out);
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let n = usize::get(r);
        let mut m = HashMap::with_capacity_and_hasher(n, S::default());
        for _ in 0..n {
            let k = K::get(r);
            m.insert(k, V::get(r));
        }
        m
    }
}

macro_rules! tuple {
    ($($n:tt $t:ident),*) => {
        impl<$($t: Wire),*> Wire for ($($t,)*) {
            fn put(&self, out: &mut Vec<u8>) {
                $(self.$n.put(out);)*
            }
            fn get(r: &mut Reader<'_>) -> Self {
                ($($t::get(r),)*)
            }
        }
    };
}

tuple!(0 A, 1 B);
tuple!(0 A, 1 B, 2 C);
tuple!(0 A, 1 B, 2 C, 3 D);
tuple!(0 A, 1 B, 2 C, 3 D, 4 E);

impl Wire for parallax_model::profile::CallTree {
    fn put(&self, out: &mut Vec<u8>) {
        let mut b = Vec::new();
        self.encode(&mut b);
        b.len().put(out);
        out.extend_from_slice(&b);
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let n = usize::get(r);
        parallax_model::profile::CallTree::decode(r.bytes(n)).expect("a tree encoded by a rank")
    }
}

// An error crosses as its message: receivers only report it.
impl Wire for parallax_model::Error {
    fn put(&self, out: &mut Vec<u8>) {
        self.to_string().put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        parallax_model::Error::new(parallax_model::ErrorKind::Invalid, String::get(r))
    }
}

impl<T: Wire, E: Wire> Wire for Result<T, E> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ok(v) => {
                out.push(0);
                v.put(out);
            }
            Err(e) => {
                out.push(1);
                e.put(out);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => Ok(T::get(r)),
            _ => Err(E::get(r)),
        }
    }
}

// === impl Wire for the analyses' exchanged types ===

/// Fields of a struct with public-to-the-crate fields, in order; the
/// destructuring makes a field added to the struct a compile error here.
macro_rules! fields {
    ($t:path { $($f:ident),* $(,)? }) => {
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                let $t { $($f),* } = self;
                $($f.put(out);)*
            }
            fn get(r: &mut Reader<'_>) -> Self {
                $(let $f = Wire::get(r);)*
                $t { $($f),* }
            }
        }
    };
}

use crate::bottleneck::path::Chain;
use crate::bottleneck::waits::{self, Agg, Arrival, Interval, LocResult, PathStats, Val};
use crate::bottleneck::Pattern;
use crate::compensate::pass::{self as cpass, LocStats, Stamp};
use crate::pairing::{Link, Object};

impl Wire for Object {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u8).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => Object::Lock,
            1 => Object::Sem,
            2 => Object::SyncVar,
            3 => Object::ThreadStart,
            4 => Object::ThreadEnd,
            _ => Object::Value,
        }
    }
}

fields!(Link { object, id, seq });
fields!(Stamp { ta, tm });

impl Wire for cpass::Key {
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            cpass::Key::Msg {
                comm,
                src,
                dst,
                tag,
                seq,
            } => {
                out.push(0);
                (comm, src, dst, tag, seq).put(out);
            }
            cpass::Key::Arrivals { comm, seq } => {
                out.push(1);
                (comm, seq).put(out);
            }
            cpass::Key::Root { comm, seq } => {
                out.push(2);
                (comm, seq).put(out);
            }
            cpass::Key::Obj(l) => {
                out.push(3);
                l.put(out);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => {
                let (comm, src, dst, tag, seq) = Wire::get(r);
                cpass::Key::Msg {
                    comm,
                    src,
                    dst,
                    tag,
                    seq,
                }
            }
            1 => {
                let (comm, seq) = Wire::get(r);
                cpass::Key::Arrivals { comm, seq }
            }
            2 => {
                let (comm, seq) = Wire::get(r);
                cpass::Key::Root { comm, seq }
            }
            _ => cpass::Key::Obj(Link::get(r)),
        }
    }
}

fields!(LocStats {
    events,
    first,
    last,
    probe_ns,
    uncertainty_ns,
    context_ns,
    flush_ns,
    wait_removed_ns,
    wait_added_ns,
    dependencies,
    unmatched,
    clamped,
    warning,
});

impl Wire for waits::Key {
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            waits::Key::Msg(c, s, d, t, q) => {
                out.push(0);
                (c, s, d, t, q).put(out);
            }
            waits::Key::Back(c, s, d, t, q) => {
                out.push(1);
                (c, s, d, t, q).put(out);
            }
            waits::Key::Coll(c, q) => {
                out.push(2);
                (c, q).put(out);
            }
            waits::Key::Obj(l) => {
                out.push(3);
                l.put(out);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => {
                let (c, s, d, t, q) = Wire::get(r);
                waits::Key::Msg(c, s, d, t, q)
            }
            1 => {
                let (c, s, d, t, q) = Wire::get(r);
                waits::Key::Back(c, s, d, t, q)
            }
            2 => {
                let (c, q) = Wire::get(r);
                waits::Key::Coll(c, q)
            }
            _ => waits::Key::Obj(Link::get(r)),
        }
    }
}

// Messages are read by their receiver, answers to blocking sends by the
// sender; collectives and shared objects have no single reading rank.
impl crate::replay::Route for waits::Key {
    fn reader_rank(&self) -> Option<u32> {
        match *self {
            waits::Key::Msg(_, _, dst, _, _) => Some(dst),
            waits::Key::Back(_, src, _, _, _) => Some(src),
            _ => None,
        }
    }
}

impl crate::replay::Route for cpass::Key {
    fn reader_rank(&self) -> Option<u32> {
        match *self {
            cpass::Key::Msg { dst, .. } => Some(dst),
            _ => None,
        }
    }
}

impl Wire for Pattern {
    fn put(&self, out: &mut Vec<u8>) {
        let i = Pattern::ALL.iter().position(|p| p == self);
        (i.expect("every pattern is in ALL") as u8).put(out)
    }
    fn get(r: &mut Reader<'_>) -> Self {
        Pattern::ALL[u8::get(r) as usize]
    }
}

// A chain sent whole (no naming on): its nodes one by one from the newest,
// so the receiver rebuilds the same nodes and sums them in the same order.
impl Wire for Chain {
    fn put(&self, out: &mut Vec<u8>) {
        self.base.put(out);
        self.seg.put(out);
        self.depth.put(out);
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let (base, seg, depth) = Wire::get(r);
        Chain {
            base,
            seg,
            depth,
            name: NodeName::default(),
        }
    }
}
fields!(Interval { comp, waits });

/// The name a chain node was sent or received under in one naming epoch
/// (see [`Chains`]): kept in the node, so that sending it again costs no
/// lookup. Only the thread replaying the node's location names it.
#[derive(Debug, Default)]
pub struct NodeName {
    /// Epoch (upper 32 bits; 0: never named) and number (lower 32 bits).
    at: AtomicU64,
    /// The rank that named it first.
    rank: AtomicU32,
}

impl NodeName {
    fn get(&self, epoch: u32) -> Option<(u32, u64)> {
        let at = self.at.load(Ordering::Relaxed);
        ((at >> 32) as u32 == epoch).then(|| (self.rank.load(Ordering::Relaxed), at & 0xffff_ffff))
    }
    fn set(&self, epoch: u32, (rank, n): (u32, u64)) {
        assert!(n <= u32::MAX as u64, "a node number fits 32 bits");
        self.rank.store(rank, Ordering::Relaxed);
        self.at.store((epoch as u64) << 32 | n, Ordering::Relaxed);
    }
}

/// Chain nodes already sent or received, while a replay across ranks runs:
/// nodes are immutable and every post shares its past with the previous
/// one, so a node travels once and is named by (the rank that first sent
/// it, its number there) after that, by whichever rank sends it on. Every
/// rank receives every rank's messages in order, so all know the same
/// names, and a rank's nodes are numbered 0, 1, ... in each epoch.
struct Chains {
    /// This epoch, unique in the process: names of earlier ones are void.
    epoch: u32,
    /// Named nodes by the rank that named them, in their order.
    got: Vec<Vec<Arc<Chain>>>,
    /// This rank.
    me: u32,
    /// The rank whose message is being decoded.
    from: u32,
}

impl Chains {
    fn of(&mut self, rank: u32) -> &mut Vec<Arc<Chain>> {
        let r = rank as usize;
        if self.got.len() <= r {
            self.got.resize_with(r + 1, Vec::new);
        }
        &mut self.got[r]
    }
}

thread_local! {
    static CHAINS: std::cell::RefCell<Option<Chains>> = const { std::cell::RefCell::new(None) };
}

static EPOCHS: AtomicU32 = AtomicU32::new(1);

/// Starts (`Some(rank)`, this rank) or ends (`None`) naming chain nodes on
/// this thread; every rank does it at the same round, and starting again
/// forgets every name (which bounds the tables).
pub(crate) fn chain_numbers(me: Option<u32>) {
    CHAINS.with(|c| {
        let mut c = c.borrow_mut();
        match (me, c.as_mut()) {
            (None, _) => *c = None,
            (Some(me), Some(t)) => {
                t.got.iter_mut().for_each(Vec::clear);
                t.me = me;
                t.epoch = EPOCHS.fetch_add(1, Ordering::Relaxed);
            }
            (Some(me), None) => {
                *c = Some(Chains {
                    epoch: EPOCHS.fetch_add(1, Ordering::Relaxed),
                    got: Vec::new(),
                    me,
                    from: 0,
                })
            }
        }
    });
}

/// The rank whose operations are decoded next.
pub(crate) fn chains_from(rank: u32) {
    CHAINS.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.from = rank;
        }
    });
}

/// A chain: none (0), whole without names (1), by the name of its newest
/// node (2), or (3) the nodes not yet named, oldest first, after what
/// they rest on (a chain sent as 0 or 2), named in that order.
fn put_chain(c: &Option<Arc<Chain>>, out: &mut Vec<u8>) {
    let Some(c) = c else {
        out.push(0);
        return;
    };
    let Some((me, epoch)) = CHAINS.with(|t| t.borrow().as_ref().map(|t| (t.me, t.epoch))) else {
        out.push(1);
        c.put(out);
        return;
    };
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
    put_chain(&fresh[fresh.len() - 1].base, out);
    CHAINS.with(|t| {
        let mut t = t.borrow_mut();
        let mine = t.as_mut().expect("chain numbers are on").of(me);
        let first = mine.len() as u64;
        (first, fresh.len() as u64).put(out);
        for (i, node) in fresh.iter().rev().enumerate() {
            node.seg.put(out);
            node.depth.put(out);
            node.name.set(epoch, (me, first + i as u64));
            mine.push(Arc::clone(node));
        }
    });
}

fn get_chain(r: &mut Reader<'_>) -> Option<Arc<Chain>> {
    match u8::get(r) {
        0 => None,
        1 => Some(Arc::get(r)),
        2 => {
            let (rank, n): (u32, u64) = Wire::get(r);
            CHAINS.with(|t| {
                let mut t = t.borrow_mut();
                let t = t.as_mut().expect("chain numbers are on");
                Some(t.of(rank)[n as usize].clone())
            })
        }
        _ => {
            let mut base = get_chain(r);
            let (first, k): (u64, u64) = Wire::get(r);
            CHAINS.with(|t| {
                let mut t = t.borrow_mut();
                let t = t.as_mut().expect("chain numbers are on");
                let (from, epoch) = (t.from, t.epoch);
                let theirs = t.of(from);
                assert_eq!(theirs.len() as u64, first, "chain nodes arrive in order");
                for i in 0..k {
                    let (seg, depth) = Wire::get(r);
                    let c = Arc::new(Chain {
                        base: base.take(),
                        seg,
                        depth,
                        name: NodeName::default(),
                    });
                    c.name.set(epoch, (from, first + i));
                    theirs.push(c.clone());
                    base = Some(c);
                }
            });
            base
        }
    }
}

impl Wire for Arrival {
    fn put(&self, out: &mut Vec<u8>) {
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
        } = self;
        last.put(out);
        put_chain(last_chain, out);
        last_note.put(out);
        last_nonroot.put(out);
        nonroot_note.put(out);
        root.put(out);
        root_note.put(out);
        (*activity, *ranks, *work_max, *work_sum, *setup).put(out);
    }
    fn get(r: &mut Reader<'_>) -> Self {
        let last = Wire::get(r);
        let last_chain = get_chain(r);
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

impl Wire for Val {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Val::Send {
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
                put_chain(chain, out);
            }
            Val::Back { enters, loc } => {
                out.push(1);
                enters.put(out);
                loc.put(out);
            }
            Val::Arr(a) => {
                out.push(2);
                a.put(out);
            }
            Val::Post {
                t,
                loc,
                setup,
                note,
                chain,
            } => {
                out.push(3);
                (*t, *loc, *setup).put(out);
                note.put(out);
                put_chain(chain, out);
            }
        }
    }
    fn get(r: &mut Reader<'_>) -> Self {
        match u8::get(r) {
            0 => {
                let (t, loc, setup, blocking) = Wire::get(r);
                let note = Wire::get(r);
                let chain = get_chain(r);
                Val::Send {
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
                Val::Back { enters, loc }
            }
            2 => Val::Arr(Wire::get(r)),
            _ => {
                let (t, loc, setup) = Wire::get(r);
                let note = Wire::get(r);
                let chain = get_chain(r);
                Val::Post {
                    t,
                    loc,
                    setup,
                    note,
                    chain,
                }
            }
        }
    }
}

fields!(Agg {
    ns,
    instances,
    culprits,
});
fields!(PathStats {
    parent,
    region,
    visits,
    idle,
    incl,
    excl,
    min,
    max,
});
fields!(LocResult {
    events,
    first,
    last,
    paths,
    waits,
    delay,
    propagated,
    critical,
    categories,
    small,
    blocks,
    coll_sites,
    rma,
    cond_unpaired,
    cond_posters,
    rma_slow,
    rma_competitors,
    unmatched,
    warning,
});

#[cfg(test)]
mod tests {
    use super::*;

    fn round<T: Wire + PartialEq + std::fmt::Debug>(v: T) {
        assert_eq!(decode::<T>(&encode(&v)), v);
    }

    #[test]
    fn values_come_back_bit_for_bit() {
        round(0x0123_4567_89ab_cdefu64);
        assert_eq!(
            decode::<f64>(&encode(&-0.0f64)).to_bits(),
            (-0.0f64).to_bits()
        );
        let nan = f64::from_bits(0x7ff8_0000_dead_beef);
        assert_eq!(decode::<f64>(&encode(&nan)).to_bits(), nan.to_bits());
        round(String::from("rank 3 thread 0: ü"));
        round(vec![Some((1u32, 2.5f64)), None]);
        round([1.0f64, 2.0, 3.0]);
        let m: BTreeMap<u64, u64> = [(3, 4), (1, 2)].into_iter().collect();
        round(m);
        let h: HashMap<(u32, u32), f64> = [((1, 2), 3.0), ((4, 5), 6.0)].into_iter().collect();
        round(h);
        round(Ok::<u8, String>(7));
        round(Err::<u8, String>("no".into()));
    }
}
