//! The concurrency profile shown in the page, from the locations' passes:
//! exact, from every busy-state change, while the trace has few enough of
//! them; otherwise estimated from each location's busy time per slice of
//! the run, which keeps the memory fixed.

use parallax_analysis::concurrency::{self, Concurrency};
use serde_json::{json, Value};

use super::bins::Slices;
use super::scan::LocScan;

/// The profile of `rows` (busy slices of `[0, span)`), as the page's
/// JSON; `None` when no location was ever busy.
pub fn profile(rows: &[&LocScan], span: u64) -> Option<Value> {
    let n = rows.len();
    let exact = rows.iter().all(|r| r.transitions.is_some());
    let (c, slice_ns) = if exact {
        let all: Vec<(f64, i32)> = rows
            .iter()
            .flat_map(|r| r.transitions.iter().flatten().copied())
            .collect();
        (concurrency::from_transitions(n, all, Vec::new()), None)
    } else {
        let bins = rows.first().map_or(1, |r| r.busy.len().max(1));
        (estimate(rows, span, bins), Some(span as f64 / bins as f64))
    };
    if c.locations == 0 || c.total_ns <= 0.0 {
        return None;
    }
    Some(json!({
        "locations": c.locations,
        "time_ns": c.time_ns.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>(),
        "ceff": c.ceff(),
        "cavg": c.cavg(),
        "exact": exact,
        "slice_ns": slice_ns,
    }))
}

/// Time with k locations busy, from busy time per slice: within a slice
/// of width w where the locations were busy s·w in all, k = ⌊s⌋ for
/// (1 − frac s)·w and ⌊s⌋ + 1 for the rest. Exact for slices in which no
/// location changes state, and CEFF (the mean of k) is exact in any case.
fn estimate(rows: &[&LocScan], span: u64, bins: usize) -> Concurrency {
    let n = rows.len();
    let lo = rows.iter().filter_map(|r| r.busy_range).map(|r| r.0).min();
    let hi = rows.iter().filter_map(|r| r.busy_range).map(|r| r.1).max();
    let mut time_ns = vec![0.0; n + 1];
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Concurrency {
            locations: n,
            time_ns,
            total_ns: 0.0,
            warnings: Vec::new(),
        };
    };
    let slices = Slices::new(span, bins);
    for k in 0..bins {
        let a = slices.edge(k).max(lo);
        let b = slices.edge(k + 1).min(hi);
        if b <= a {
            continue;
        }
        let w = (b - a) as f64;
        let busy: u64 = rows
            .iter()
            .map(|r| r.busy.get(k).copied().unwrap_or(0))
            .sum();
        let s = (busy as f64 / w).clamp(0.0, n as f64);
        let k0 = (s.floor() as usize).min(n);
        let frac = s - k0 as f64;
        time_ns[k0] += w * (1.0 - frac);
        if k0 < n {
            time_ns[k0 + 1] += w * frac;
        }
    }
    Concurrency {
        locations: n,
        time_ns,
        total_ns: (hi - lo) as f64,
        warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(busy: Vec<u64>, range: (u64, u64), changes: Option<Vec<(f64, i32)>>) -> LocScan {
        LocScan {
            busy,
            busy_range: Some(range),
            transitions: changes,
            ..LocScan::default()
        }
    }

    #[test]
    fn estimate_matches_exact_when_changes_fall_on_slice_edges() {
        // Span 100 in 4 slices: a busy 0..50, b busy 25..100.
        let a = row(
            vec![25, 25, 0, 0],
            (0, 50),
            Some(vec![(0.0, 1), (50.0, -1)]),
        );
        let b = row(
            vec![0, 25, 25, 25],
            (25, 100),
            Some(vec![(25.0, 1), (100.0, -1)]),
        );
        let exact = profile(&[&a, &b], 100).unwrap();
        assert_eq!(exact["time_ns"], json!([0.0, 75.0, 25.0]));
        assert_eq!(exact["exact"], json!(true));
        let a = row(a.busy.clone(), (0, 50), None);
        let est = profile(&[&a, &b], 100).unwrap();
        assert_eq!(est["time_ns"], exact["time_ns"]);
        assert_eq!(est["exact"], json!(false));
        assert_eq!(est["slice_ns"], json!(25.0));
    }

    #[test]
    fn estimate_keeps_the_mean_within_a_slice() {
        // One slice of 100: a busy 40, b busy 60: s = 1.
        let a = row(vec![40], (0, 100), None);
        let b = row(vec![60], (0, 100), None);
        let est = profile(&[&a, &b], 100).unwrap();
        assert_eq!(est["time_ns"], json!([0.0, 100.0, 0.0]));
        assert!((est["ceff"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    }
}
