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
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Folding depth: a chain longer than this is summed into one node.
const FOLD: u32 = 32;
/// Regions kept unsorted in the open segment before it becomes a node.
const SEGMENT: usize = 64;

/// An immutable piece of a path.
#[derive(Debug)]
pub struct PathPiece {
    pub(crate) base: Option<Arc<PathPiece>>,
    pub(crate) seg: Vec<(u32, f64)>,
    pub(crate) depth: u32,
    /// Its name while a replay across ranks sends it.
    pub(crate) name: NodeName,
}

impl PathPiece {
    /// A node on `base` (not yet named).
    pub(crate) fn node(
        base: Option<Arc<PathPiece>>,
        seg: Vec<(u32, f64)>,
        depth: u32,
    ) -> PathPiece {
        PathPiece {
            base,
            seg,
            depth,
            name: NodeName::default(),
        }
    }
}

/// The name a chain node was sent or received under in one naming epoch
/// (see [`super::posts::PathPieceNames`]): kept in the node, so that sending it
/// again costs no lookup. Only the thread replaying the node's location
/// names it.
#[derive(Debug, Default)]
pub struct NodeName {
    /// Epoch (upper 32 bits; 0: never named) and number (lower 32 bits).
    at: AtomicU64,
    /// The rank that named it first.
    rank: AtomicU32,
}

impl NodeName {
    /// The (rank, number) it was named under in `epoch`, if it was.
    pub(crate) fn get(&self, epoch: u32) -> Option<(u32, u64)> {
        let at = self.at.load(Ordering::Relaxed);
        ((at >> 32) as u32 == epoch).then(|| (self.rank.load(Ordering::Relaxed), at & 0xffff_ffff))
    }

    pub(crate) fn set(&self, epoch: u32, (rank, n): (u32, u64)) {
        assert!(n <= u32::MAX as u64, "a node number fits 32 bits");
        self.rank.store(rank, Ordering::Relaxed);
        self.at.store((epoch as u64) << 32 | n, Ordering::Relaxed);
    }
}

/// Where a region's entry was found in a list of (region, time) that
/// only grows until it is emptied: valid while the list has not been
/// emptied since (its generation is the same). Accounting adds to the
/// same few regions event after event; a slot spares the search.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot {
    gen: u32,
    ix: u32,
}

/// Adds `dt` to region `g`'s entry of `list` (generation `gen`, never 0),
/// through `slot` if it is still valid; `false` if `g` has no entry.
#[inline(always)]
pub fn add_at(list: &mut [(u32, f64)], gen: u32, slot: &mut Slot, g: u32, dt: f64) -> bool {
    if slot.gen == gen {
        // The region is checked too: generations wrap.
        if let Some(e) = list.get_mut(slot.ix as usize).filter(|e| e.0 == g) {
            e.1 += dt;
            return true;
        }
    }
    match list.iter().rposition(|e| e.0 == g) {
        Some(ix) => {
            list[ix].1 += dt;
            *slot = Slot { gen, ix: ix as u32 };
            true
        }
        None => false,
    }
}

/// Appends region `g`'s entry to `list` and points `slot` at it.
#[inline]
pub fn push_at(list: &mut Vec<(u32, f64)>, gen: u32, slot: &mut Slot, g: u32, dt: f64) {
    *slot = Slot {
        gen,
        ix: list.len() as u32,
    };
    list.push((g, dt));
}

/// A location's path so far.
#[derive(Debug)]
pub struct Path {
    chain: Option<Arc<PathPiece>>,
    seg: Vec<(u32, f64)>,
    /// Times `seg` was emptied, plus one (see [`Slot`]).
    gen: u32,
}

impl Default for Path {
    fn default() -> Path {
        Path {
            chain: None,
            seg: Vec::new(),
            gen: 1,
        }
    }
}

impl Path {
    /// Adds `dt` ns in region `g`.
    #[inline]
    pub fn add(&mut self, g: u32, dt: f64) {
        self.add_in(g, dt, &mut Slot::default());
    }

    /// [`Path::add`], through the slot where `g` was last found.
    #[inline(always)]
    pub fn add_in(&mut self, g: u32, dt: f64, slot: &mut Slot) {
        if dt <= 0.0 || add_at(&mut self.seg, self.gen, slot, g, dt) {
            return;
        }
        if self.seg.len() >= SEGMENT {
            self.snapshot();
        }
        push_at(&mut self.seg, self.gen, slot, g, dt);
    }

    /// The path so far, shareable.
    pub fn snapshot(&mut self) -> Option<Arc<PathPiece>> {
        if self.seg.is_empty() {
            return self.chain.clone();
        }
        // An exact copy: the open segment keeps its room for the next.
        let seg = self.seg.clone();
        self.seg.clear();
        self.gen = self.gen.wrapping_add(1).max(1);
        let depth = self.chain.as_ref().map_or(0, |c| c.depth) + 1;
        let node = if depth > FOLD {
            let mut sum = totals(&self.chain);
            for (g, t) in seg {
                *sum.entry(g).or_insert(0.0) += t;
            }
            PathPiece::node(None, sum.into_iter().collect(), 1)
        } else {
            PathPiece::node(self.chain.take(), seg, depth)
        };
        self.chain = Some(Arc::new(node));
        self.chain.clone()
    }

    /// Continues from another location's path (this one's past is not
    /// critical).
    pub fn adopt(&mut self, other: Option<Arc<PathPiece>>) {
        self.chain = other;
        self.seg.clear();
        self.gen = self.gen.wrapping_add(1).max(1);
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

fn totals(c: &Option<Arc<PathPiece>>) -> BTreeMap<u32, f64> {
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
