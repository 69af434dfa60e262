//! The critical path, carried forward along the replay.
//!
//! Each location holds the path that leads to its present moment: time per
//! region along its own events, and, where it waited for another location,
//! that location's path up to the moment it released the wait (the local
//! time before it is not critical, since waiting would have absorbed it).
//! A post carries a snapshot of the poster's path. Snapshots share their
//! past as immutable nodes, so taking one costs the regions touched since
//! the last; long chains are folded into one node now and then, which keeps
//! memory proportional to the number of regions, not of events.

use std::collections::BTreeMap;
use std::sync::Arc;

/// Folding depth: a chain longer than this is summed into one node.
const FOLD: u32 = 32;
/// Regions kept unsorted in the open segment before it becomes a node.
const SEGMENT: usize = 64;

/// An immutable piece of a path.
#[derive(Debug)]
pub struct Chain {
    pub(crate) base: Option<Arc<Chain>>,
    pub(crate) seg: Vec<(u32, f64)>,
    pub(crate) depth: u32,
}

/// A location's path so far.
#[derive(Debug, Default)]
pub struct Path {
    chain: Option<Arc<Chain>>,
    seg: Vec<(u32, f64)>,
}

impl Path {
    /// Adds `dt` ns in region `g`.
    #[inline]
    pub fn add(&mut self, g: u32, dt: f64) {
        if dt <= 0.0 {
            return;
        }
        if let Some(e) = self.seg.iter_mut().rev().find(|e| e.0 == g) {
            e.1 += dt;
            return;
        }
        if self.seg.len() >= SEGMENT {
            self.snapshot();
        }
        self.seg.push((g, dt));
    }

    /// The path so far, shareable.
    pub fn snapshot(&mut self) -> Option<Arc<Chain>> {
        if self.seg.is_empty() {
            return self.chain.clone();
        }
        let seg = std::mem::take(&mut self.seg);
        let depth = self.chain.as_ref().map_or(0, |c| c.depth) + 1;
        let node = if depth > FOLD {
            let mut sum = totals(&self.chain);
            for (g, t) in seg {
                *sum.entry(g).or_insert(0.0) += t;
            }
            Chain {
                base: None,
                seg: sum.into_iter().collect(),
                depth: 1,
            }
        } else {
            Chain {
                base: self.chain.take(),
                seg,
                depth,
            }
        };
        self.chain = Some(Arc::new(node));
        self.chain.clone()
    }

    /// Continues from another location's path (this one's past is not
    /// critical).
    pub fn adopt(&mut self, other: Option<Arc<Chain>>) {
        self.chain = other;
        self.seg.clear();
    }

    /// Time per region along the path.
    pub fn totals(&self) -> BTreeMap<u32, f64> {
        let mut m = totals(&self.chain);
        for &(g, t) in &self.seg {
            *m.entry(g).or_insert(0.0) += t;
        }
        m
    }
}

fn totals(c: &Option<Arc<Chain>>) -> BTreeMap<u32, f64> {
    let mut m = BTreeMap::new();
    let mut cur = c.as_deref();
    while let Some(n) = cur {
        for &(g, t) in &n.seg {
            *m.entry(g).or_insert(0.0) += t;
        }
        cur = n.base.as_deref();
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_share_and_fold() {
        let mut a = Path::default();
        for i in 0..1000u32 {
            a.add(i % 3, 1.0);
            a.snapshot();
        }
        let t = a.totals();
        assert_eq!(t.values().sum::<f64>(), 1000.0);
        assert_eq!(t[&0], 334.0);
        let mut b = Path::default();
        b.add(7, 5.0);
        b.adopt(a.snapshot());
        b.add(9, 2.0);
        let t = b.totals();
        assert_eq!(t.get(&7), None);
        assert_eq!(t[&9], 2.0);
        assert_eq!(t.values().sum::<f64>(), 1002.0);
    }
}
