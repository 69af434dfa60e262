//! A small, seeded random number generator (SplitMix64): the same seed
//! gives the same cases on every machine.

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// An index into a slice of `n` elements (`n` > 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// A value a hostile file would hold: an edge of a range, a large
    /// power of two, or something random.
    pub fn hostile_u64(&mut self) -> u64 {
        const EDGES: [u64; 12] = [
            0,
            1,
            u32::MAX as u64 - 1,
            u32::MAX as u64,
            1 << 31,
            1 << 32,
            1 << 40,
            1 << 62,
            i64::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
            1 << 20,
        ];
        match self.below(3) {
            0 => *self.pick(&EDGES),
            1 => 1u64 << self.below(64),
            _ => self.next_u64(),
        }
    }

    /// A hostile value that fits in 32 bits.
    pub fn hostile_u32(&mut self) -> u32 {
        const EDGES: [u32; 7] = [0, 1, u32::MAX, u32::MAX - 1, 1 << 31, 1 << 20, 65_536];
        match self.below(3) {
            0 => *self.pick(&EDGES),
            1 => 1u32 << self.below(32),
            _ => self.next_u64() as u32,
        }
    }
}
