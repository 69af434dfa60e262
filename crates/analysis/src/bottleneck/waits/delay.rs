//! Delay costs: the waiting a location caused is charged to what it did
//! in the interval before its post (its note): its computation directly,
//! and its own waiting, in proportion, to whoever caused that.

use super::{add_part, LocPass};
use crate::bottleneck::posts::Interval;
use crate::bottleneck::regions;

/// Who caused `wait` of `me` for a post of `src` with `note`: `src` for
/// its computation in the note's interval, and for the waiting in it
/// whoever caused that, in proportion. Waiting `src` did behind `me` is
/// put on `src`: a location is never the culprit of its own wait.
pub(super) fn behind(me: u32, src: u32, note: &Interval, wait: f64) -> Vec<(u32, f64)> {
    let (comp, waits) = note.totals();
    if waits <= 0.0 {
        return vec![(src, wait)];
    }
    let total = comp + waits;
    let mut parts = vec![(src, wait * comp / total)];
    for &(l, c) in &note.waits {
        add_part(&mut parts, if l == me { src } else { l }, wait * c / total);
    }
    parts
}

impl LocPass<'_> {
    /// Charges `wait` caused by location `culprit` to the interval its
    /// note describes: its computation directly, its own waiting to whoever
    /// caused that (propagation).
    pub(super) fn charge(&mut self, culprit: u32, note: &Interval, wait: f64) {
        if wait <= 0.0 {
            return;
        }
        let (comp, waits) = note.totals();
        let total = comp + waits;
        if total <= 0.0 {
            *self
                .res
                .delay
                .entry((culprit, regions::OUTSIDE))
                .or_insert(0.0) += wait;
            return;
        }
        for &(g, c) in &note.comp {
            *self.res.delay.entry((culprit, g)).or_insert(0.0) += wait * c / total;
        }
        for &(l, c) in &note.waits {
            *self.res.propagated.entry(l).or_insert(0.0) += wait * c / total;
        }
    }
}
