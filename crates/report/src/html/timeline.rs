//! The timeline's data: every region visit of every location, with levels
//! of detail computed here so that the page draws a whole run at once and
//! decodes single visits only where someone zooms in.
//!
//! For each location:
//! - `lod[k]`: for each of `bins[k]` equal slices of the run, the region
//!   that was innermost for most of the slice (0 when nothing was open);
//!   the page summarizes rows of many locations from these too;
//! - `long`: visits of at least 1/2048 of the run, always at hand;
//! - `tiles`: the other visits in start order, in packs of [`TILE`], each
//!   with its time range, inflated on demand.
//!
//! Messages and thread hand-offs are paired as the exports pair them
//! ([`parallax_export::stream::Flows`]) and drawn as arrows.

use std::collections::HashMap;

use parallax_export::stream::{self, FlowEnd, Flows, Loc};
use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use serde_json::{json, Value};

use super::pack::Columns;

/// Visits per tile.
pub const TILE: usize = 16_384;
/// Long visits kept at hand per location, at most.
const LONG_MAX: usize = 2048;
/// Bin counts of the levels of detail, coarse to fine; a level is kept
/// while locations × bins stays under [`LOD_BUDGET`].
const LEVELS: [usize; 4] = [1024, 8192, 65_536, 524_288];
const LOD_BUDGET: usize = 4 << 20;

/// One region visit, in ns since the start of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visit {
    /// Enter.
    pub start: u64,
    /// Leave.
    pub end: u64,
    /// Index in the report's region table.
    pub region: u32,
    /// Nesting depth (0 at the top).
    pub depth: u32,
}

/// What one pass over a location's events gives.
#[derive(Debug, Default)]
pub struct LocTrace {
    /// Visits in start order.
    pub visits: Vec<Visit>,
    /// Arrow ends: (id, is start, time, bytes, kind 0 message / 1 thread).
    pub flows: Vec<(u64, bool, u64, u64, u8)>,
    /// Bytes and messages sent to each rank (point-to-point and one-sided).
    pub sent: HashMap<u32, (u64, u64)>,
    /// Last event time.
    pub end: u64,
    /// Events read.
    pub events: u64,
    /// The problem that ended the stream early.
    pub warning: Option<String>,
}

/// Reads one location. `region` maps (process index, region id) to the
/// report's region index.
pub fn scan(
    exp: &Experiment,
    loc: &Loc,
    region: &dyn Fn(usize, u32) -> u32,
) -> Result<LocTrace, parallax_export::Error> {
    let mut t = LocTrace::default();
    let mut open: Vec<usize> = Vec::new();
    let mut flows = Flows::default();
    let (n, warning) = stream::for_each_event(exp, loc, |ns, e| {
        t.end = ns;
        match e.kind {
            EventKind::Enter { region: r } => {
                open.push(t.visits.len());
                t.visits.push(Visit {
                    start: ns,
                    end: ns,
                    region: region(loc.process, r),
                    depth: open.len() as u32 - 1,
                });
            }
            EventKind::Leave { .. } => {
                if let Some(i) = open.pop() {
                    t.visits[i].end = ns;
                }
            }
            EventKind::Send { peer, bytes, .. } | EventKind::IsendBegin { peer, bytes, .. } => {
                let c = t.sent.entry(peer).or_default();
                c.0 += 1;
                c.1 += bytes;
            }
            EventKind::Put { target, bytes, .. } | EventKind::Atomic { target, bytes, .. } => {
                let c = t.sent.entry(target).or_default();
                c.0 += 1;
                c.1 += bytes;
            }
            _ => {}
        }
        let bytes = match e.kind {
            EventKind::Send { bytes, .. }
            | EventKind::IsendBegin { bytes, .. }
            | EventKind::Recv { bytes, .. }
            | EventKind::IrecvComplete { bytes, .. } => bytes,
            _ => 0,
        };
        let kind = u8::from(matches!(
            e.kind,
            EventKind::ThreadCreate { .. }
                | EventKind::ThreadBegin { .. }
                | EventKind::ThreadEnd { .. }
                | EventKind::ThreadJoin { .. }
        ));
        match flows.of(loc.rank, &e.kind) {
            Some(FlowEnd::Start(id)) => t.flows.push((id, true, ns, bytes, kind)),
            Some(FlowEnd::End(id)) => t.flows.push((id, false, ns, bytes, kind)),
            None => {}
        }
        Ok(())
    })?;
    // Regions still open end with the stream.
    for i in open {
        t.visits[i].end = t.end;
    }
    t.events = n;
    t.warning = warning;
    Ok(t)
}

/// The bin counts kept for `locations` locations with `visits` visits in
/// all.
pub fn levels(locations: usize, visits: usize) -> Vec<usize> {
    let per_loc = visits / locations.max(1);
    let mut v: Vec<usize> = LEVELS
        .iter()
        .copied()
        .filter(|&b| b * locations.max(1) <= LOD_BUDGET && (b == LEVELS[0] || b / 8 <= per_loc))
        .collect();
    if v.is_empty() {
        v.push(LEVELS[0].min(LOD_BUDGET / locations.max(1)).max(16));
    }
    v
}

/// For each of `bins` slices of `[0, span)`, the region (index + 1) that
/// was innermost for most of it, 0 if none.
pub fn dominant(visits: &[Visit], span: u64, bins: usize) -> Vec<u32> {
    let mut out = vec![0u32; bins];
    let width = (span.max(1) as f64) / bins as f64;
    // The slice being filled and its time per region (few regions each).
    let mut cur = 0usize;
    let mut acc: Vec<(u32, f64)> = Vec::new();
    let flush = |cur: usize, acc: &mut Vec<(u32, f64)>, out: &mut Vec<u32>| {
        if let Some(best) = acc.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            if let Some(o) = out.get_mut(cur) {
                *o = best.0 + 1;
            }
        }
        acc.clear();
    };
    let mut add = |a: u64, b: u64, region: u32| {
        if b <= a {
            return;
        }
        let (a, b) = (a as f64, b as f64);
        let mut x = a;
        while x < b {
            let k = ((x / width) as usize).min(bins - 1);
            if k != cur {
                flush(cur, &mut acc, &mut out);
                cur = k;
            }
            let edge = if k + 1 == bins {
                b
            } else {
                ((k + 1) as f64 * width).min(b)
            };
            let d = (edge - x).max(0.0);
            match acc.iter_mut().find(|e| e.0 == region) {
                Some(e) => e.1 += d,
                None => acc.push((region, d)),
            }
            if edge <= x {
                break;
            }
            x = edge;
        }
    };
    // Innermost region over time: a sweep over visits in start order with
    // the stack of open ones.
    let mut stack: Vec<Visit> = Vec::new();
    let mut cursor = 0u64;
    for v in visits {
        while let Some(top) = stack.last().copied() {
            if top.end > v.start {
                break;
            }
            add(cursor.max(top.start), top.end, top.region);
            cursor = cursor.max(top.end);
            stack.pop();
        }
        if let Some(top) = stack.last() {
            add(cursor.max(top.start), v.start, top.region);
        }
        cursor = cursor.max(v.start);
        stack.push(*v);
    }
    while let Some(top) = stack.pop() {
        add(cursor.max(top.start), top.end, top.region);
        cursor = cursor.max(top.end);
    }
    flush(cur, &mut acc, &mut out);
    out
}

/// The timeline for the page: per level of detail one pack of every row's
/// bins (row after row); the long visits of all rows in one pack (row
/// after row, with per-row counts); the other visits of all rows in time
/// tiles of [`TILE`] visits, each with its time range. Rows are `rows[i]`'s
/// visits in start order.
pub fn layout(rows: &[&[Visit]], span: u64, levels: &[usize]) -> Value {
    let ex = parallax_analysis::executor::Executor::pool();
    let lod: Vec<String> = levels
        .iter()
        .map(|&b| {
            let per = ex.map(rows.len(), |i| dominant(rows[i], span, b));
            let mut c = Columns::new(1);
            for v in per.iter().flatten() {
                c.push(&[*v as u64]);
            }
            c.encode()
        })
        .collect();
    let mut long = Columns::new(5);
    let mut long_count = Vec::with_capacity(rows.len());
    let mut short: Vec<(u64, u64, u32, u32, u32)> = Vec::new();
    for (r, visits) in rows.iter().enumerate() {
        let min = long_min(visits, span);
        let mut n = 0;
        for v in visits.iter() {
            if v.end - v.start >= min {
                long.push(&[
                    v.start,
                    v.end - v.start,
                    v.region as u64,
                    v.depth as u64,
                    r as u64,
                ]);
                n += 1;
            } else {
                short.push((v.start, v.end, v.region, v.depth, r as u32));
            }
        }
        long_count.push(n);
    }
    // Stable: a parent, which starts no later than its child, stays first.
    short.sort_by_key(|v| v.0);
    let tiles: Vec<Value> = short
        .chunks(TILE)
        .map(|chunk| {
            let mut c = Columns::new(5);
            let mut prev = 0;
            let mut t1 = 0;
            for v in chunk {
                c.push(&[v.0 - prev, v.1 - v.0, v.2 as u64, v.3 as u64, v.4 as u64]);
                prev = v.0;
                t1 = t1.max(v.1);
            }
            json!({"t0": chunk[0].0, "t1": t1, "n": chunk.len(), "data": c.encode()})
        })
        .collect();
    json!({
        "lod": lod,
        "long": long.encode(),
        "nlong": long.len(),
        "long_count": long_count,
        "tiles": tiles,
        "depth": rows.iter().map(|v| v.iter().map(|x| x.depth + 1).max().unwrap_or(0)).collect::<Vec<_>>(),
    })
}

/// The shortest visit of `visits` kept as long: at least 1/2048 of the run,
/// raised so that at most [`LONG_MAX`] are.
fn long_min(visits: &[Visit], span: u64) -> u64 {
    let min = (span / 2048).max(1);
    let mut d: Vec<u64> = visits
        .iter()
        .map(|v| v.end - v.start)
        .filter(|&d| d >= min)
        .collect();
    if d.len() <= LONG_MAX {
        return min;
    }
    let k = d.len() - LONG_MAX;
    let (_, nth, _) = d.select_nth_unstable(k);
    *nth + 1
}

/// Pairs arrow ends across locations: (from loc, from ns, to loc, to ns,
/// bytes, kind), by start time.
pub fn arrows(traces: &[LocTrace]) -> Columns {
    let mut starts: HashMap<u64, (usize, u64, u64, u8)> = HashMap::new();
    for (li, t) in traces.iter().enumerate() {
        for &(id, is_start, ns, bytes, kind) in &t.flows {
            if is_start {
                starts.insert(id, (li, ns, bytes, kind));
            }
        }
    }
    let mut v: Vec<[u64; 6]> = Vec::new();
    for (li, t) in traces.iter().enumerate() {
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
    fn innermost_region_wins_its_slice() {
        // main 0..100 with a child 10..40 and another 60..65.
        let visits = [v(0, 100, 0, 0), v(10, 40, 1, 1), v(60, 65, 2, 1)];
        assert_eq!(dominant(&visits, 100, 4), vec![2, 2, 1, 1]);
        assert_eq!(dominant(&visits, 200, 2), vec![1, 0]);
    }

    #[test]
    fn long_visits_are_few() {
        // 5000 short visits under one that spans the run.
        let mut visits = vec![v(0, 1_000_000, 0, 0)];
        visits.extend((0..5000).map(|i| v(i * 200, i * 200 + 100 + (i % 3), 1, 1)));
        assert_eq!(long_min(&visits, 1_000_000), 488);
        let r = layout(&[&visits], 1_000_000, &[1024]);
        assert_eq!(r["nlong"], json!(1));
        assert_eq!(r["long_count"], json!([1]));
        let tiled: u64 = r["tiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["n"].as_u64().unwrap())
            .sum();
        assert_eq!(r["nlong"].as_u64().unwrap() + tiled, 5001);
    }

    #[test]
    fn many_long_visits_are_capped() {
        let visits: Vec<Visit> = (0..5000)
            .map(|i| v(i * 200, i * 200 + 100 + i % 7, 1, 0))
            .collect();
        let min = long_min(&visits, 200_000);
        assert!(visits.iter().filter(|x| x.end - x.start >= min).count() <= LONG_MAX);
    }

    #[test]
    fn levels_stay_within_budget() {
        assert_eq!(levels(2, 10), vec![1024]);
        assert_eq!(levels(4, 10_000_000), vec![1024, 8192, 65_536, 524_288]);
        let l = levels(1000, 10_000_000);
        assert!(l.iter().all(|b| b * 1000 <= LOD_BUDGET) && !l.is_empty());
        assert!(!levels(100_000, 1).is_empty());
    }
}
