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
fields!(parallax_view::deps::Channel {
    comm,
    src,
    dst,
    tag
});
fields!(parallax_view::deps::Message { channel, seq });
fields!(parallax_view::deps::Collective { comm, seq });

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

/// Implements [`Wire`] for a struct as its fields in order:
/// `fields!(Type { a, b })`. The destructuring makes a field added to the
/// struct a compile error where the macro is used.
macro_rules! fields {
    ($t:path { $($f:ident),* $(,)? }) => {
        impl $crate::wire::Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                let $t { $($f),* } = self;
                $($crate::wire::Wire::put($f, out);)*
            }
            fn get(r: &mut $crate::wire::Reader<'_>) -> Self {
                $(let $f = $crate::wire::Wire::get(r);)*
                $t { $($f),* }
            }
        }
    };
}
pub(crate) use fields;

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
