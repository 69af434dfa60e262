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
    /// Its name while a replay across ranks sends it.
    pub(crate) name: crate::wire::NodeName,
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
    chain: Option<Arc<Chain>>,
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
    pub fn snapshot(&mut self) -> Option<Arc<Chain>> {
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
            Chain {
                base: None,
                seg: sum.into_iter().collect(),
                depth: 1,
                name: Default::default(),
            }
        } else {
            Chain {
                base: self.chain.take(),
                seg,
                depth,
                name: Default::default(),
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
