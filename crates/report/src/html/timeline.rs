//! The timeline's data, from the locations' passes ([`scan`](super::scan)),
//! in a size that does not grow with the number of events:
//!
//! - `lod[k]`: for each of `levels[k]` equal slices of the run, the region
//!   that was innermost for most of the slice (0 when nothing was open),
//!   row after row; the page summarizes rows of many locations from these
//!   too;
//! - `long`: the longest visits of each location, always at hand;
//! - `tiles`: the other visits of the detail (every visit that starts in
//!   `detail.t0 .. detail.t1`) in start order, in packs of [`TILE`], each
//!   with its time range, inflated on demand;
//! - arrows: messages and thread hand-offs of the detail, paired as the
//!   exports pair them ([`parallax_view::deps::Flows`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use serde_json::{json, Value};

use super::pack::Columns;
use super::scan::{LocScan, Visit};

/// Visits per tile.
pub const TILE: usize = 16_384;
/// Long visits kept per location, at most.
pub const LONG_MAX: usize = 2048;
/// Long visits kept in all, at most (but one per location).
pub const LONG_TOTAL: usize = 1 << 18;
/// Bin counts of the levels of detail, coarse to fine; a level is kept
/// while locations × bins stays under [`LOD_BUDGET`].
const LEVELS: [usize; 4] = [1024, 8192, 65_536, 524_288];
/// Slices of all levels' finest over all locations, at most.
pub const LOD_BUDGET: usize = 4 << 20;
/// Slices of busy time over all locations, at most.
pub const BUSY_BUDGET: usize = 1 << 20;

/// The bin counts of the levels of detail for `locations` locations of at
/// most `events` events each: those that fit the budget, and no finer than
/// eight slices per event.
pub fn levels(locations: usize, events: u64) -> Vec<usize> {
    let n = locations.max(1);
    let v: Vec<usize> = LEVELS
        .iter()
        .copied()
        .enumerate()
        .filter(|&(i, b)| b * n <= LOD_BUDGET && (i == 0 || b as u64 / 8 <= events))
        .map(|(_, b)| b)
        .collect();
    if v.is_empty() {
        vec![(LOD_BUDGET / n).clamp(16, LEVELS[0])]
    } else {
        v
    }
}

/// Slices of busy time per location for `locations` locations of at most
/// `events` events each.
pub fn busy_bins(locations: usize, events: u64) -> usize {
    (BUSY_BUDGET / locations.max(1))
        .min(events.saturating_mul(8).try_into().unwrap_or(usize::MAX))
        .clamp(16, 1 << 16)
}

/// Long visits kept per location for `locations` locations.
pub fn long_max(locations: usize) -> usize {
    (LONG_TOTAL / locations.max(1)).clamp(1, LONG_MAX)
}

/// The shortest visit counted as long in a run of `span` ns: 1/2048 of
/// it.
pub fn long_min(span: u64) -> u64 {
    (span / 2048).max(1)
}

/// How many of `levels` the page needs when it has every visit of
/// `visits` over `locations` locations: a level finer than eight slices
/// per visit adds nothing to drawing the visits themselves.
pub fn levels_needed(levels: &[usize], locations: usize, visits: u64) -> usize {
    let per_loc = visits / locations.max(1) as u64;
    levels
        .iter()
        .enumerate()
        .filter(|&(i, &b)| i == 0 || b as u64 / 8 <= per_loc)
        .count()
}

/// The timeline for the page: per level of detail one pack of every row's
/// slices (row after row); the long visits of all rows in one pack (row
/// after row, with per-row counts); the other kept visits of all rows in
/// time tiles of [`TILE`] visits, each with its time range.
pub fn layout(rows: &[&LocScan], levels: usize) -> Value {
    let lod: Vec<String> = (0..levels)
        .map(|k| {
            let mut c = Columns::new(1);
            for r in rows {
                for &v in &r.lod[k] {
                    c.push(&[v as u64]);
                }
            }
            c.encode()
        })
        .collect();
    let mut long = Columns::new(5);
    let mut long_count = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        for v in &r.long {
            long.push(&[
                v.start,
                v.end - v.start,
                v.region as u64,
                v.depth as u64,
                i as u64,
            ]);
        }
        long_count.push(r.long.len());
    }
    json!({
        "lod": lod,
        "long": long.encode(),
        "nlong": long.len(),
        "long_count": long_count,
        "tiles": tiles(rows),
        "depth": rows.iter().map(|r| r.depth).collect::<Vec<_>>(),
    })
}

/// The kept visits that are not long, all rows merged in start order (a
/// parent, which starts no later than its child, first), in tiles.
fn tiles(rows: &[&LocScan]) -> Vec<Value> {
    let long: Vec<HashSet<&Visit>> = rows.iter().map(|r| r.long.iter().collect()).collect();
    let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.visits.is_empty())
        .map(|(i, r)| Reverse((r.visits[0].start, i, 0)))
        .collect();
    let mut out = Vec::new();
    let mut c = Columns::new(5);
    let (mut t0, mut t1, mut prev) = (0, 0, 0);
    let mut flush = |c: &mut Columns, t0: u64, t1: u64| {
        if !c.is_empty() {
            out.push(json!({"t0": t0, "t1": t1, "n": c.len(), "data": c.encode()}));
            *c = Columns::new(5);
        }
    };
    while let Some(Reverse((_, row, i))) = heap.pop() {
        let r = rows[row];
        if let Some(next) = r.visits.get(i + 1) {
            heap.push(Reverse((next.start, row, i + 1)));
        }
        let v = &r.visits[i];
        if long[row].contains(v) {
            continue;
        }
        if c.is_empty() {
            t0 = v.start;
            t1 = v.end;
            prev = v.start;
        }
        c.push(&[
            v.start - prev,
            v.end - v.start,
            v.region as u64,
            v.depth as u64,
            row as u64,
        ]);
        prev = v.start;
        t1 = t1.max(v.end);
        if c.len() == TILE {
            flush(&mut c, t0, t1);
        }
    }
    flush(&mut c, t0, t1);
    out
}

/// Pairs arrow ends across locations: (from loc, from ns, to loc, to ns,
/// bytes, kind), by start time.
pub fn arrows(rows: &[&LocScan]) -> Columns {
    let mut starts: HashMap<u64, (usize, u64, u64, u8)> = HashMap::new();
    for (li, t) in rows.iter().enumerate() {
        for &(id, is_start, ns, bytes, kind) in &t.flows {
            if is_start {
                starts.insert(id, (li, ns, bytes, kind));
            }
        }
    }
    let mut v: Vec<[u64; 6]> = Vec::new();
    for (li, t) in rows.iter().enumerate() {
        for &(id, is_start, ns, bytes, kind) in &t.flows {
            if !is_start {
                if let Some(&(from, t0, b0, k)) = starts.get(&id) {
                    v.push([
                        from as u64,
                        t0,
                        li as u64,
                        ns,
                        b0.max(bytes),
                        k.max(kind) as u64,
                    ]);
                }
            }
        }
    }
    v.sort_by_key(|a| a[1]);
    let mut c = Columns::new(6);
    for a in &v {
        c.push(a);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(start: u64, end: u64, region: u32, depth: u32) -> Visit {
        Visit {
            start,
            end,
            region,
            depth,
        }
    }

    #[test]
    fn long_visits_are_not_tiled_again() {
        let a = LocScan {
            visits: vec![v(0, 1000, 0, 0), v(10, 20, 1, 1), v(30, 40, 1, 1)],
            long: vec![v(0, 1000, 0, 0)],
            lod: vec![vec![1; 4]],
            ..LocScan::default()
        };
        let b = LocScan {
            visits: vec![v(5, 15, 2, 0), v(25, 26, 2, 0)],
            lod: vec![vec![3; 4]],
            ..LocScan::default()
        };
        let r = layout(&[&a, &b], 1);
        assert_eq!(r["nlong"], json!(1));
        assert_eq!(r["long_count"], json!([1, 0]));
        let tiles = r["tiles"].as_array().unwrap();
        assert_eq!(tiles.len(), 1);
        assert_eq!(
            (&tiles[0]["n"], &tiles[0]["t0"], &tiles[0]["t1"]),
            (&json!(4), &json!(5), &json!(40))
        );
        assert_eq!(r["depth"], json!([0, 0]));
    }

    #[test]
    fn tiles_hold_at_most_tile_visits() {
        let a = LocScan {
            visits: (0..(2 * TILE as u64 + 1))
                .map(|i| v(i, i + 1, 0, 0))
                .collect(),
            lod: vec![vec![0; 4]],
            ..LocScan::default()
        };
        let t = tiles(&[&a]);
        let n: Vec<u64> = t.iter().map(|x| x["n"].as_u64().unwrap()).collect();
        assert_eq!(n, vec![TILE as u64, TILE as u64, 1]);
    }

    #[test]
    fn budgets_hold_for_any_number_of_locations() {
        assert_eq!(levels(2, 1 << 30), vec![1024, 8192, 65_536, 524_288]);
        assert_eq!(levels(2, 1024), vec![1024, 8192]);
        assert_eq!(levels(2, 1023), vec![1024]);
        assert_eq!(levels(2, 0), vec![1024]);
        for n in [1, 7, 64, 1000, 100_000, 10_000_000] {
            let l = levels(n, u64::MAX);
            assert!(!l.is_empty());
            assert!(
                l.iter().all(|b| b * n <= LOD_BUDGET || *b == 16),
                "{n}: {l:?}"
            );
            assert!(long_max(n) >= 1 && (long_max(n) * n <= LONG_TOTAL || long_max(n) == 1));
            let bb = busy_bins(n, u64::MAX);
            assert!(bb * n <= BUSY_BUDGET || bb == 16);
        }
        assert_eq!(busy_bins(1, 10), 80);
        assert_eq!(levels_needed(&levels(2, 10), 2, 10), 1);
        assert_eq!(levels_needed(&levels(4, 1 << 30), 4, 40_000_000), 4);
    }
}
