//! Equal slices of a run, filled with intervals in time order as a trace
//! is read: per slice, the region that was innermost for most of it
//! ([`Dominant`]), or the time a location was busy ([`Busy`]). Their size is
//! fixed when they are made, whatever the number of events.

use std::collections::HashMap;

/// `bins` equal slices of `[0, span)` in integer ns: slice k is
/// `[edge(k), edge(k + 1))`; times from `span` on are in the last.
#[derive(Clone, Copy, Debug)]
pub struct Slices {
    span: u64,
    bins: usize,
}

/// The slice last split into, with its bounds: the usual interval lies in
/// it and costs no division.
type Cursor = (usize, u64, u64);

impl Slices {
    /// `bins` (at least 1) slices of `[0, span)` (at least 1 ns).
    pub fn new(span: u64, bins: usize) -> Slices {
        Slices {
            span: span.max(1),
            bins: bins.max(1),
        }
    }

    /// How many slices.
    pub fn count(&self) -> usize {
        self.bins
    }

    /// Start of slice `k` (`span` for `k == bins`).
    pub fn edge(&self, k: usize) -> u64 {
        // ceil(k * span / bins): the first integer time of slice k.
        (k as u128 * self.span as u128).div_ceil(self.bins as u128) as u64
    }

    /// The slice of time `t`.
    pub fn of(&self, t: u64) -> usize {
        ((t as u128 * self.bins as u128 / self.span as u128) as usize).min(self.bins - 1)
    }

    /// Calls `f(k, d)` for the `d` ns of `[a, b)` in each slice k, in
    /// order.
    #[inline]
    fn split(&self, cur: &mut Cursor, mut a: u64, b: u64, mut f: impl FnMut(usize, u64)) {
        while a < b {
            if a < cur.1 || a >= cur.2 {
                let k = self.of(a);
                let end = if k + 1 == self.bins {
                    u64::MAX
                } else {
                    self.edge(k + 1)
                };
                *cur = (k, self.edge(k), end);
            }
            let piece_end = b.min(cur.2);
            f(cur.0, piece_end - a);
            a = piece_end;
        }
    }
}

/// Per slice, the region (index + 1) innermost for most of it; 0 when no
/// region was open.
#[derive(Debug)]
pub struct Dominant {
    slices: Slices,
    out: Vec<u32>,
    cur: Cursor,
    /// The slice being filled, and its time per region.
    filling: Option<usize>,
    acc: Vec<(u32, u64)>,
    /// Where each region is in `acc`, once it holds many.
    index: HashMap<u32, usize>,
}

/// Regions of one slice searched in order before an index is kept.
const FEW: usize = 16;

impl Dominant {
    /// Empty slices.
    pub fn new(slices: Slices) -> Dominant {
        Dominant {
            slices,
            out: vec![0; slices.count()],
            cur: (0, 0, 0),
            filling: None,
            acc: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// Region `region` was innermost over `[a, b)`; intervals come in
    /// time order and do not overlap.
    #[inline]
    pub fn add(&mut self, a: u64, b: u64, region: u32) {
        let slices = self.slices;
        let mut cur = self.cur;
        slices.split(&mut cur, a, b, |k, d| self.put(k, d, region));
        self.cur = cur;
    }

    #[inline]
    fn put(&mut self, k: usize, d: u64, region: u32) {
        if self.filling != Some(k) {
            self.flush();
            self.filling = Some(k);
        }
        if self.acc.len() < FEW {
            match self.acc.iter_mut().find(|e| e.0 == region) {
                Some(e) => e.1 += d,
                None => {
                    self.acc.push((region, d));
                    if self.acc.len() == FEW {
                        self.index = self.acc.iter().enumerate().map(|(i, e)| (e.0, i)).collect();
                    }
                }
            }
        } else {
            match self.index.get(&region) {
                Some(&i) => self.acc[i].1 += d,
                None => {
                    self.index.insert(region, self.acc.len());
                    self.acc.push((region, d));
                }
            }
        }
    }

    fn flush(&mut self) {
        if let Some(k) = self.filling.take() {
            // The first of equals wins: the same answer however the
            // slice's intervals were split.
            let mut best: Option<(u32, u64)> = None;
            for &(r, d) in &self.acc {
                if best.is_none_or(|b| d > b.1) {
                    best = Some((r, d));
                }
            }
            if let Some((r, _)) = best {
                self.out[k] = r.saturating_add(1);
            }
            self.acc.clear();
            self.index.clear();
        }
    }

    /// The slices' regions.
    pub fn finish(mut self) -> Vec<u32> {
        self.flush();
        self.out
    }
}

/// Per slice, the ns a location was busy.
#[derive(Debug)]
pub struct Busy {
    slices: Slices,
    out: Vec<u64>,
    cur: Cursor,
}

impl Busy {
    /// Empty slices.
    pub fn new(slices: Slices) -> Busy {
        Busy {
            slices,
            out: vec![0; slices.count()],
            cur: (0, 0, 0),
        }
    }

    /// The location was busy over `[a, b)`.
    #[inline]
    pub fn add(&mut self, a: u64, b: u64) {
        let slices = self.slices;
        let mut cur = self.cur;
        let out = &mut self.out;
        slices.split(&mut cur, a, b, |k, d| out[k] += d);
        self.cur = cur;
    }

    /// Busy ns per slice.
    pub fn finish(self) -> Vec<u64> {
        self.out
    }
}

/// Per slice, a count of things that happened in it.
#[derive(Debug)]
pub struct Counts {
    slices: Slices,
    out: Vec<u32>,
    cur: Cursor,
}

impl Counts {
    /// Empty slices.
    pub fn new(slices: Slices) -> Counts {
        Counts {
            slices,
            out: vec![0; slices.count()],
            cur: (0, 0, 0),
        }
    }

    /// One more thing at `t`.
    #[inline]
    pub fn add(&mut self, t: u64) {
        let slices = self.slices;
        let mut cur = self.cur;
        let out = &mut self.out;
        slices.split(&mut cur, t, t.saturating_add(1), |k, _| {
            out[k] = out[k].saturating_add(1)
        });
        self.cur = cur;
    }

    /// Counts per slice.
    pub fn finish(self) -> Vec<u32> {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_span_exactly() {
        let s = Slices::new(10, 3);
        assert_eq!(
            (0..=3).map(|k| s.edge(k)).collect::<Vec<_>>(),
            [0, 4, 7, 10]
        );
        for t in 0..10 {
            let k = s.of(t);
            assert!(s.edge(k) <= t && t < s.edge(k + 1), "{t} in {k}");
        }
        assert_eq!(s.of(1_000), 2);
    }

    #[test]
    fn innermost_region_wins_its_slice() {
        // main 0..100 with a child 10..40 and another 60..65: innermost
        // main 0..10, child 10..40, main 40..60, other 60..65, main 65..100.
        let fill = |span, bins| {
            let mut d = Dominant::new(Slices::new(span, bins));
            for (a, b, r) in [
                (0, 10, 0),
                (10, 40, 1),
                (40, 60, 0),
                (60, 65, 2),
                (65, 100, 0),
            ] {
                d.add(a, b, r);
            }
            d.finish()
        };
        assert_eq!(fill(100, 4), vec![2, 2, 1, 1]);
        assert_eq!(fill(200, 2), vec![1, 0]);
        // One slice per ns.
        let fine = fill(100, 100);
        assert_eq!(
            (fine[5], fine[10], fine[39], fine[40], fine[62]),
            (1, 2, 2, 1, 3)
        );
    }

    #[test]
    fn many_regions_in_one_slice() {
        let mut d = Dominant::new(Slices::new(1_000_000, 1));
        for r in 0..1000u32 {
            d.add(r as u64 * 100, r as u64 * 100 + 50 + (r == 777) as u64, r);
        }
        assert_eq!(d.finish(), vec![778]);
    }

    #[test]
    fn counts_per_slice() {
        let mut c = Counts::new(Slices::new(100, 4));
        for t in [0, 1, 24, 25, 99, 500] {
            c.add(t);
        }
        assert_eq!(c.finish(), vec![3, 1, 0, 2]);
    }

    #[test]
    fn busy_time_per_slice() {
        let mut b = Busy::new(Slices::new(100, 4));
        b.add(10, 60);
        b.add(90, 200);
        assert_eq!(b.finish(), vec![15, 25, 10, 110]);
    }
}
