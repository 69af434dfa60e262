//! Competing one-sided transfers: PPW's request/reply step. A blocking
//! put or get that took longer than its call path's fastest is a request
//! {target, start, end}; every location that did one-sided transfers
//! answers with its own transfers to the same target inside that window,
//! found in a second streaming pass over its events (only when there are
//! requests). Transfers of others in the window are the culprits; a slow
//! transfer with none is PPW's "uncontrollable". Under MPI the requests
//! are gathered to every rank and each rank answers for its own
//! locations, reading only their files.

use std::collections::BTreeMap;

use parallax_model::event::EventKind;

use super::waits::LocResult;
use crate::executor::Executor;
use parallax_view::trace::{self, Loc};

/// One request: location and its request number there, target rank,
/// window.
#[derive(Clone, Copy, Debug)]
struct Request {
    loc: u32,
    local: usize,
    target: u32,
    start: f64,
    end: f64,
}

/// A location's requests {target, start, end}, and whether it did
/// one-sided transfers at all.
type Asked = (bool, Vec<(u32, f64, f64)>);

/// Adds, for each location of this process's share (`mine`, with its
/// `results`) with slow transfers, the competitors found in the other
/// locations' traces to its `rma_competitors`: by (request, competitor),
/// overlapping time ns.
pub fn competitors(
    locs: &[Loc],
    t0: f64,
    mine: &[usize],
    results: &mut [LocResult],
    exec: Executor,
) {
    let local = |li: usize| mine.binary_search(&li).ok().map(|k| &results[k]);
    // Every location's requests, and whether it did one-sided transfers.
    let asked: Vec<Asked> = exec.map_locs(locs, |li| {
        local(li).map_or((false, Vec::new()), |r| {
            let slow = r.rma_slow.iter().map(|&(t, s, e, _)| (t, s, e)).collect();
            (r.rma.0 + r.rma.1 > 0, slow)
        })
    });
    let mut reqs: Vec<Request> = Vec::new();
    for (li, (_, slow)) in asked.iter().enumerate() {
        for (local, &(target, start, end)) in slow.iter().enumerate() {
            reqs.push(Request {
                loc: li as u32,
                local,
                target,
                start,
                end,
            });
        }
    }
    if reqs.is_empty() {
        return;
    }
    // Requests by target, sorted by start.
    let mut by_target: BTreeMap<u32, Vec<(usize, Request)>> = BTreeMap::new();
    for (i, q) in reqs.iter().enumerate() {
        by_target.entry(q.target).or_default().push((i, *q));
    }
    for v in by_target.values_mut() {
        v.sort_by(|a, b| a.1.start.total_cmp(&b.1.start).then(a.0.cmp(&b.0)));
    }
    // Replies: per location, (request, overlap ns) for its transfers.
    let replies: Vec<Vec<(usize, f64)>> = exec.map_locs(locs, |li| {
        if !asked[li].0 {
            return Vec::new();
        }
        let mut out: BTreeMap<usize, f64> = BTreeMap::new();
        let mut open: Option<f64> = None;
        let mut depth = 0usize;
        let mut pending: Vec<(u32, f64)> = Vec::new();
        let loc = &locs[li];
        let _ = trace::for_each_event(loc, |e| {
            let t = loc.clock.ns(e.time) - t0;
            match e.kind {
                EventKind::Enter { .. } => {
                    if depth == 0 {
                        open = Some(t);
                    }
                    depth += 1;
                }
                EventKind::Put { target, .. }
                | EventKind::Get { target, .. }
                | EventKind::Atomic { target, .. } => pending.push((target, t)),
                EventKind::Leave { .. } => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        // The outermost region around the transfers is its span.
                        let s = open.take().unwrap_or(t);
                        for (target, at) in pending.drain(..) {
                            overlap(&by_target, li as u32, target, s.min(at), t, &mut out);
                        }
                    }
                }
                _ => {}
            }
        });
        for (target, at) in pending.drain(..) {
            overlap(&by_target, li as u32, target, at, at, &mut out);
        }
        out.into_iter().collect()
    });
    for (li, rs) in replies.into_iter().enumerate() {
        for (qi, ns) in rs {
            let q = reqs[qi];
            let Ok(k) = mine.binary_search(&(q.loc as usize)) else {
                continue;
            };
            let r = &mut results[k];
            *r.rma_competitors
                .entry((q.local as u64, li as u32))
                .or_insert(0.0) += ns;
        }
    }
}

/// Adds the overlap of a transfer of `loc` to `target` over [s, e] with
/// every other location's request on that target.
fn overlap(
    by_target: &BTreeMap<u32, Vec<(usize, Request)>>,
    loc: u32,
    target: u32,
    s: f64,
    e: f64,
    out: &mut BTreeMap<usize, f64>,
) {
    let Some(v) = by_target.get(&target) else {
        return;
    };
    // Requests that start before this transfer ends.
    let upto = v.partition_point(|q| q.1.start <= e);
    for &(i, q) in &v[..upto] {
        if q.loc != loc && q.end >= s {
            let o = (q.end.min(e) - q.start.max(s)).max(0.0);
            *out.entry(i).or_insert(0.0) += o.max(1.0);
        }
    }
}
