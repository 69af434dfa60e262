//! Prefix varints: the integer encoding of every Parallax record.
//!
//! A value is stored little-endian in `n` bytes (1 to 9). The low bits of the
//! first byte say how many: `n - 1` zero bits followed by a one bit, so the
//! length is `trailing_zeros(first byte) + 1`; a first byte of zero means nine
//! bytes (a full 64-bit value follows it). Up to eight bytes, the payload is
//! `value << n` of the little-endian word, which gives 7 payload bits per byte:
//!
//! | bytes | value range | first byte |
//! |---|---|---|
//! | 1 | < 2^7 | `xxxxxxx1` |
//! | 2 | < 2^14 | `xxxxxx10` |
//! | 3 | < 2^21 | `xxxxx100` |
//! | ... | ... | ... |
//! | 8 | < 2^56 | `10000000` |
//! | 9 | any u64 | `00000000`, then 8 bytes |
//!
//! Unlike LEB128 the encoder has no loop and no data-dependent branch for
//! values below 2^56: it computes one word and stores eight bytes at once,
//! which is what the runtime's hot path needs. Decoding is one load and a
//! shift.

/// Bytes a writer must have free after its position before calling
/// [`put_unchecked`]: the encoder always stores a whole word (plus one).
pub const SLACK: usize = 9;

/// Largest encoded length of one value.
pub const MAX_LEN: usize = 9;

/// How many bytes `v` takes.
#[inline(always)]
pub fn len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    if bits > 56 {
        9
    } else {
        bits.div_ceil(7)
    }
}

/// Writes `v` at `p` and returns the position after it.
///
/// # Safety
///
/// `p` must be valid for writes of [`SLACK`] bytes.
#[inline(always)]
pub unsafe fn put_unchecked(p: *mut u8, v: u64) -> *mut u8 {
    let bits = 64 - (v | 1).leading_zeros();
    if bits <= 56 {
        let n = bits.div_ceil(7);
        let word = ((v << 1) | 1) << (n - 1);
        // Safety: the caller guarantees SLACK writable bytes at `p`.
        unsafe {
            p.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes());
            p.add(n as usize)
        }
    } else {
        put_long(p, v)
    }
}

#[cold]
#[inline(never)]
unsafe fn put_long(p: *mut u8, v: u64) -> *mut u8 {
    // Safety: as for `put_unchecked`.
    unsafe {
        p.write(0);
        p.add(1).cast::<[u8; 8]>().write_unaligned(v.to_le_bytes());
        p.add(9)
    }
}

/// Appends `v` to `out`.
#[inline]
pub fn put(out: &mut Vec<u8>, v: u64) {
    out.reserve(SLACK);
    let start = out.len();
    // Safety: `reserve` made SLACK bytes of spare capacity; `set_len` covers
    // only the bytes the encoder reports as written, all initialized.
    unsafe {
        let p = out.as_mut_ptr().add(start);
        let end = put_unchecked(p, v);
        out.set_len(start + end.offset_from(p) as usize);
    }
}

/// Appends a signed value, zigzag-mapped so that small magnitudes stay short.
#[inline]
pub fn put_signed(out: &mut Vec<u8>, v: i64) {
    put(out, zigzag(v));
}

/// Maps a signed value to an unsigned one with small magnitudes first.
#[inline(always)]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline(always)]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads one value from the front of `buf`: the value and its length, or
/// `None` when `buf` ends inside it.
#[inline]
pub fn get(buf: &[u8]) -> Option<(u64, usize)> {
    if buf.len() >= MAX_LEN {
        // Safety: MAX_LEN bytes at the front of `buf`.
        return Some(unsafe { get_unchecked(buf.as_ptr()) });
    }
    // Near the end: the same decoding of a copy padded with zeros, which
    // only a value longer than what is left reaches.
    let mut padded = [0u8; MAX_LEN];
    padded[..buf.len()].copy_from_slice(buf);
    // Safety: `padded` holds MAX_LEN bytes.
    let (v, n) = unsafe { get_unchecked(padded.as_ptr()) };
    (n <= buf.len()).then_some((v, n))
}

/// Reads one value at `p` without bounds checks: the value and its length.
///
/// # Safety
///
/// `p` must be valid for reads of [`MAX_LEN`] bytes.
#[inline(always)]
pub unsafe fn get_unchecked(p: *const u8) -> (u64, usize) {
    // Safety: the caller guarantees MAX_LEN readable bytes at `p`.
    unsafe {
        let first = p.read();
        if first == 0 {
            let v = p.add(1).cast::<[u8; 8]>().read_unaligned();
            return (u64::from_le_bytes(v), 9);
        }
        let n = first.trailing_zeros() as usize + 1;
        let word = u64::from_le_bytes(p.cast::<[u8; 8]>().read_unaligned());
        (mask(word >> n, n), n)
    }
}

/// Reads one value at offset `i` of `buf`, like [`get`].
#[inline(always)]
pub fn get_at(buf: &[u8], i: usize) -> Option<(u64, usize)> {
    buf.get(i..).and_then(get)
}

/// The payload bits of an `n`-byte value (1 to 8; an 8-byte value's
/// shifted word holds only its payload).
const MASKS: [u64; 9] = {
    let mut m = [u64::MAX; 9];
    let mut n = 1;
    while n < 8 {
        m[n] = (1u64 << (7 * n)) - 1;
        n += 1;
    }
    m
};

#[inline(always)]
fn mask(v: u64, n: usize) -> u64 {
    // One load instead of a variable shift and a branch: decoding runs for
    // every record of every trace.
    v & MASKS[n.min(8)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lengths_follow_the_table() {
        let cases = [
            (0u64, 1usize),
            (127, 1),
            (128, 2),
            ((1 << 14) - 1, 2),
            (1 << 14, 3),
            ((1 << 56) - 1, 8),
            (1 << 56, 9),
            (u64::MAX, 9),
        ];
        for (v, n) in cases {
            let mut out = Vec::new();
            put(&mut out, v);
            assert_eq!(out.len(), n, "length of {v}");
            assert_eq!(len(v), n, "len() of {v}");
            assert_eq!(get(&out), Some((v, n)), "decode of {v}");
        }
    }

    #[test]
    fn truncated_input_is_none() {
        let mut out = Vec::new();
        put(&mut out, 1 << 40);
        for cut in 0..out.len() {
            assert_eq!(get(&out[..cut]), None, "cut at {cut}");
        }
    }

    proptest! {
        #[test]
        fn round_trip(values in proptest::collection::vec(any::<u64>(), 0..64)) {
            let mut out = Vec::new();
            for &v in &values { put(&mut out, v); }
            let mut at = 0;
            for &v in &values {
                let (got, n) = get(&out[at..]).unwrap();
                prop_assert_eq!(got, v);
                at += n;
            }
            prop_assert_eq!(at, out.len());
        }

        #[test]
        fn zigzag_round_trip(v in any::<i64>()) {
            prop_assert_eq!(unzigzag(zigzag(v)), v);
        }

        #[test]
        fn get_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
            let _ = get(&bytes);
        }

        #[test]
        fn a_short_tail_reads_as_a_long_buffer(bytes in proptest::collection::vec(any::<u8>(), 0..12)) {
            // Fewer than MAX_LEN bytes take the padded path, more the direct one.
            let mut long = bytes.clone();
            long.extend([0x55u8; MAX_LEN]);
            let direct = get(&long).filter(|&(_, n)| n <= bytes.len());
            prop_assert_eq!(get(&bytes), direct);
        }
    }
}
