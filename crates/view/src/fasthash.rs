//! A fast hasher for the small integer keys of analyses (region ids, call
//! tree nodes, message channels): the standard library's SipHash resists
//! keys chosen to collide, at several times the cost. This one mixes every
//! bit of a key into the bits that choose its bucket, so that families of
//! ids that differ only in their high bits (addresses, ids shifted left)
//! spread like any others; keys computed to collide against this very
//! function could still slow a table down.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing of integer words.
#[derive(Clone, Copy, Debug, Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The table's bucket comes from the low bits, which after the
        // multiplication depend only on the keys' low bits: ids that agree
        // there (lock addresses 2^32 apart, as a damaged or crafted trace
        // may hold by the thousand) would all fall in one bucket. Mixing
        // the high bits down spreads them.
        let h = self.0;
        let h = (h ^ (h >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 29)
    }
}

/// A `HashMap` with [`WordHasher`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// A set of small integer keys, hashed with [`WordHasher`].
pub type FastSet<K> = std::collections::HashSet<K, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault};

    #[test]
    fn keys_differing_in_high_bits_spread_over_buckets() {
        // The low 16 bits choose a bucket among 65,536; ids 2^32, 2^40 or
        // 2^48 apart must not all choose the same.
        let b = BuildHasherDefault::<WordHasher>::default();
        for shift in [32u32, 40, 48] {
            let buckets: std::collections::HashSet<u64> = (1..=4096u64)
                .map(|i| b.hash_one(i << shift) & 0xffff)
                .collect();
            assert!(
                buckets.len() > 3000,
                "shift {shift}: {} buckets",
                buckets.len()
            );
        }
    }
}
