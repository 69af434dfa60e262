//! Call-path profiles (see FORMAT.md, "Profile blocks").
//!
//! A profile is a tree of call paths; each node holds the statistics of one
//! region reached through one path. Times are in ticks of the recording
//! process's clock.

use crate::event::RegionId;
use crate::varint;
use crate::Error;

/// Statistics of one call path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Completed visits.
    pub count: u64,
    /// Time inside the region, children included.
    pub inclusive: u64,
    /// Time inside the region, children excluded.
    pub exclusive: u64,
    /// Shortest inclusive time of one visit.
    pub min: u64,
    /// Longest inclusive time of one visit.
    pub max: u64,
    /// Sum of squared inclusive times of visits (ticks²), for the variance.
    pub sum_sq: f64,
}

impl Stats {
    /// No visits yet.
    pub const EMPTY: Stats = Stats {
        count: 0,
        inclusive: 0,
        exclusive: 0,
        min: u64::MAX,
        max: 0,
        sum_sq: 0.0,
    };

    /// Adds one visit of `inclusive` ticks of which `children` were spent in
    /// children.
    #[inline(always)]
    pub fn add(&mut self, inclusive: u64, children: u64) {
        self.count += 1;
        // Saturating: a damaged trace's times can be anything.
        self.inclusive = self.inclusive.saturating_add(inclusive);
        self.exclusive = self
            .exclusive
            .saturating_add(inclusive.saturating_sub(children));
        self.min = self.min.min(inclusive);
        self.max = self.max.max(inclusive);
        let d = inclusive as f64;
        self.sum_sq += d * d;
    }

    /// Adds another node's statistics (same region, e.g. another location).
    pub fn merge(&mut self, o: &Stats) {
        // Saturating: a damaged profile's counts can be anything.
        self.count = self.count.saturating_add(o.count);
        self.inclusive = self.inclusive.saturating_add(o.inclusive);
        self.exclusive = self.exclusive.saturating_add(o.exclusive);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum_sq += o.sum_sq;
    }

    /// Mean inclusive time per visit, in ticks.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.inclusive as f64 / self.count as f64
        }
    }

    /// Standard deviation of the inclusive time per visit, in ticks.
    pub fn std_dev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.inclusive as f64 / n;
        ((self.sum_sq / n - mean * mean).max(0.0) * n / (n - 1.0)).sqrt()
    }
}

/// One node of a call tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Index of the parent node, `None` for a top-level region.
    pub parent: Option<u32>,
    /// The region.
    pub region: RegionId,
    /// Its statistics.
    pub stats: Stats,
}

/// The call tree of one location. Parents precede their children.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallTree {
    /// Thread number of the location within its process.
    pub thread: u32,
    /// The nodes, parents first.
    pub nodes: Vec<Node>,
}

/// Largest encoding of one node: seven varints and an f64.
pub const MAX_NODE_LEN: usize = 7 * crate::varint::MAX_LEN + 8;

/// Largest encoding of a tree's header (thread and node count).
pub const MAX_HEADER_LEN: usize = 2 * crate::varint::MAX_LEN;

/// Writes a tree header; the node count always takes the nine-byte varint
/// form, so that a writer can fill it in after the nodes.
///
/// # Safety
///
/// `p` must be valid for writes of [`MAX_HEADER_LEN`] bytes.
pub unsafe fn put_header(p: *mut u8, thread: u32, count: u64) -> *mut u8 {
    // Safety: a varint and a nine-byte count fit in MAX_HEADER_LEN.
    unsafe {
        let p = varint::put_unchecked(p, thread as u64);
        p.write(0);
        p.add(1)
            .cast::<[u8; 8]>()
            .write_unaligned(count.to_le_bytes());
        p.add(9)
    }
}

/// Writes one node.
///
/// # Safety
///
/// `p` must be valid for writes of [`MAX_NODE_LEN`] bytes.
pub unsafe fn put_node(p: *mut u8, parent: Option<u32>, region: RegionId, s: &Stats) -> *mut u8 {
    // Safety: seven varints and eight bytes fit in MAX_NODE_LEN.
    unsafe {
        let mut p = varint::put_unchecked(p, parent.map_or(0, |q| q as u64 + 1));
        p = varint::put_unchecked(p, region as u64);
        for v in [s.count, s.inclusive, s.exclusive, s.min, s.max] {
            p = varint::put_unchecked(p, v);
        }
        p.cast::<[u8; 8]>().write_unaligned(s.sum_sq.to_le_bytes());
        p.add(8)
    }
}

impl CallTree {
    /// Appends this tree as one block payload to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.reserve(MAX_HEADER_LEN + self.nodes.len() * MAX_NODE_LEN);
        // Safety: the reservation covers the header and every node; only the
        // bytes written become part of the vector.
        unsafe {
            let base = out.as_mut_ptr().add(start);
            let mut p = put_header(base, self.thread, self.nodes.len() as u64);
            for n in &self.nodes {
                p = put_node(p, n.parent, n.region, &n.stats);
            }
            out.set_len(start + p.offset_from(base) as usize);
        }
    }

    /// Decodes one block payload.
    pub fn decode(buf: &[u8]) -> Result<CallTree, Error> {
        let mut at = 0;
        let bad = |at: usize, what: &str| {
            Error::corrupt(format!("{what} at byte {at} of a profile block"))
        };
        let next = |at: &mut usize| -> Result<u64, Error> {
            let (v, n) = varint::get(&buf[*at..]).ok_or_else(|| bad(*at, "record cut short"))?;
            *at += n;
            Ok(v)
        };
        let thread = u32::try_from(next(&mut at)?).map_err(|_| bad(at, "thread out of range"))?;
        let count = next(&mut at)?;
        // Each node takes at least 15 bytes: a bound on what we allocate.
        if count > (buf.len() / 15) as u64 + 1 {
            return Err(bad(at, "node count beyond the block"));
        }
        let mut nodes = Vec::with_capacity(count as usize);
        for i in 0..count {
            let parent = match next(&mut at)? {
                0 => None,
                p if p <= i => Some((p - 1) as u32),
                _ => return Err(bad(at, "parent after child")),
            };
            let region =
                u32::try_from(next(&mut at)?).map_err(|_| bad(at, "region out of range"))?;
            let mut v = [0u64; 5];
            for x in &mut v {
                *x = next(&mut at)?;
            }
            let sq = buf
                .get(at..at + 8)
                .ok_or_else(|| bad(at, "record cut short"))?;
            at += 8;
            let sum_sq = f64::from_le_bytes(sq.try_into().expect("8 bytes"));
            let stats = Stats {
                count: v[0],
                inclusive: v[1],
                exclusive: v[2],
                min: v[3],
                max: v[4],
                sum_sq,
            };
            nodes.push(Node {
                parent,
                region,
                stats,
            });
        }
        if at != buf.len() {
            return Err(bad(at, "trailing bytes"));
        }
        Ok(CallTree { thread, nodes })
    }

    /// The path of node `i` from the top: region ids, outermost first.
    pub fn path(&self, mut i: usize) -> Vec<RegionId> {
        let mut p = Vec::new();
        while let Some(n) = self.nodes.get(i) {
            p.push(n.region);
            match n.parent {
                Some(q) => i = q as usize,
                None => break,
            }
        }
        p.reverse();
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let mut a = Stats::EMPTY;
        a.add(100, 30);
        a.add(50, 0);
        let mut b = Stats::EMPTY;
        b.add(30, 0);
        let tree = CallTree {
            thread: 2,
            nodes: vec![
                Node {
                    parent: None,
                    region: 1,
                    stats: a,
                },
                Node {
                    parent: Some(0),
                    region: 2,
                    stats: b,
                },
            ],
        };
        let mut buf = Vec::new();
        tree.encode(&mut buf);
        assert_eq!(CallTree::decode(&buf).unwrap(), tree);
        assert_eq!(tree.path(1), vec![1, 2]);
        for cut in 0..buf.len() {
            assert!(CallTree::decode(&buf[..cut]).is_err());
        }
    }

    #[test]
    fn stats_moments() {
        let mut s = Stats::EMPTY;
        for d in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            s.add(d, 0);
        }
        assert_eq!(s.count, 8);
        assert_eq!((s.min, s.max), (2, 9));
        assert!((s.mean() - 5.0).abs() < 1e-12);
        // Sample standard deviation of the classic example: sqrt(32/7).
        assert!((s.std_dev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-9);
    }
}
