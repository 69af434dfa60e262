//! The probes' share of the cores of a host that ran more threads than it
//! had cores.
//!
//! There the threads took turns on the cores, and a thread's measured time
//! holds, besides its own probes, the time it waited for a core while
//! other threads ran their work and their probes. While the cores were all
//! busy, every stretch of a thread's time (computing, waiting for a core,
//! being woken) grew by the same proportion: the share p of the cores'
//! time that went to probes (the thesis's proportional-overhead case,
//! Lemma 2: the approximation divides the measured offsets by the
//! dilation). p is counted from the trace in bins of a quarter
//! millisecond: the calibrated cost of every probe recorded in the bin by
//! the host's crowded processes, over the cores' time in it. Within a bin,
//! a location's stretches lose together the larger of its own probes and
//! p times their length (where cores idled, the latter falls short), and a
//! wake-up delay kept as measured loses its share p (`pass::LocPass`).

use parallax_model::Error;

use super::costs::Costs;
use parallax_view::trace::{self, Loc};

/// Width of the bins, ns: shorter than the scheduler's time slices, long
/// enough to hold thousands of probes.
const BIN_NS: f64 = 250_000.0;

/// At most this share is taken as the probes': a bin whose calibrated
/// probe cost would exceed it was not all spent in probes.
const MAX_SHARE: f64 = 0.9;

/// The probes' share of the cores of one host, over time.
#[derive(Clone, Debug, Default)]
pub struct Sharing {
    /// Start of the first bin, ns (measured, the clock of `Loc::clock`).
    start: f64,
    /// The share by bin.
    share: Bins,
}

/// The share of each bin: all bins from the first, where the run's bins
/// are not many more than those that hold probes; else only those (a
/// trace with an implausible timestamp spans years of bins, nearly all
/// empty).
#[derive(Clone, Debug)]
enum Bins {
    Dense(Vec<f32>),
    /// Bins with probes, ascending, and their share.
    Sparse(Vec<(i64, f32)>),
}

impl Default for Bins {
    fn default() -> Bins {
        Bins::Dense(Vec::new())
    }
}

/// Bins kept all from the first while at most this many per bin with
/// probes, plus [`DENSE_BINS`]: a bound on the memory and the walks of
/// empty bins that a trace's time span can cost.
const DENSE_PER_BIN: usize = 64;

/// Bins always kept all from the first (16 s of run).
const DENSE_BINS: usize = 1 << 16;

impl Sharing {
    /// The bin of measured time `t_ns`.
    #[inline]
    pub fn bin(&self, t_ns: f64) -> i64 {
        // The floor, without a call to the C library's (every event of a
        // crowded location asks).
        let x = (t_ns - self.start) / BIN_NS;
        let i = x as i64;
        i - ((i as f64) > x) as i64
    }

    /// The probes' mean share of the cores over measured times
    /// `from..to`, ns (0 outside the run).
    pub fn share(&self, from: f64, to: f64) -> f64 {
        if to <= from {
            return self.at(self.bin(from));
        }
        self.over(from, to) / (to - from)
    }

    /// The probes' share of the cores summed over measured times
    /// `from..to`, ns: the probes' time among `to - from` of one core's.
    #[inline]
    pub fn over(&self, from: f64, to: f64) -> f64 {
        let mut bin = self.bin(from);
        let mut edge = (bin + 1) as f64 * BIN_NS + self.start;
        if to <= edge {
            // Most stretches lie within one bin.
            return self.at(bin) * (to - from);
        }
        if let Bins::Sparse(bins) = &self.share {
            return self.over_sparse(bins, from, to);
        }
        let mut sum = self.at(bin) * (edge - from);
        while edge < to {
            bin += 1;
            let next = (edge + BIN_NS).min(to);
            sum += self.at(bin) * (next - edge);
            edge = next;
        }
        sum
    }

    /// [`Sharing::over`] on sparse bins: only the bins with probes are
    /// walked.
    fn over_sparse(&self, bins: &[(i64, f32)], from: f64, to: f64) -> f64 {
        let (first, last) = (self.bin(from), self.bin(to));
        let mut sum = 0.0;
        let at = bins.partition_point(|b| b.0 < first);
        for &(b, share) in bins[at..].iter().take_while(|b| b.0 <= last) {
            let lo = (b as f64 * BIN_NS + self.start).max(from);
            let hi = ((b + 1) as f64 * BIN_NS + self.start).min(to);
            if hi > lo {
                sum += share as f64 * (hi - lo);
            }
        }
        sum
    }

    /// The share in bin `bin` (0 outside the run).
    #[inline]
    fn at(&self, bin: i64) -> f64 {
        match &self.share {
            Bins::Dense(v) => usize::try_from(bin)
                .ok()
                .and_then(|i| v.get(i))
                .map_or(0.0, |&s| s as f64),
            Bins::Sparse(v) => v
                .binary_search_by_key(&bin, |b| b.0)
                .map_or(0.0, |i| v[i].1 as f64),
        }
    }

    /// Counts the probes of the locations `locs`, each with its process's
    /// probe costs, that ran on `cpus` cores.
    pub fn measure(locs: &[(&Loc, &Costs)], cpus: u32) -> Result<Sharing, Error> {
        let mut firsts = Vec::new();
        for (l, _) in locs {
            if let Some(e) = trace::Stream::open(l)?.peek() {
                firsts.push(l.clock.ns(e.time));
            }
        }
        let Some(start) = firsts.into_iter().reduce(f64::min) else {
            return Ok(Sharing::default());
        };
        // Probe time by bin, for the bins that have probes: what memory
        // holds grows with the events, never with the time they span.
        let mut probes: parallax_view::fasthash::FastMap<u64, f64> = Default::default();
        for &(loc, costs) in locs {
            // Its own copy: it follows the calibration phases in time.
            let mut costs = costs.clone();
            // The bin being summed, taken out of the map while events
            // fall in it (they come in time order, mostly many to a bin);
            // the sums are made in the order of the events either way.
            let mut cur: Option<(u64, f64)> = None;
            trace::for_each_event(loc, |e| {
                let t = loc.clock.ns(e.time);
                let i = ((t - start).max(0.0) / BIN_NS) as u64;
                let c = costs.of(e);
                match &mut cur {
                    Some((b, sum)) if *b == i => *sum += c,
                    _ => {
                        if let Some((b, sum)) = cur.take() {
                            probes.insert(b, sum);
                        }
                        cur = Some((i, probes.remove(&i).unwrap_or(0.0) + c));
                    }
                }
            })?;
            if let Some((b, sum)) = cur {
                probes.insert(b, sum);
            }
        }
        let capacity = cpus.max(1) as f64 * BIN_NS;
        let share = |p: f64| (p / capacity).min(MAX_SHARE) as f32;
        let mut bins: Vec<(u64, f64)> = probes.into_iter().collect();
        bins.sort_unstable_by_key(|b| b.0);
        let span = bins.last().map_or(0, |b| b.0 as usize + 1);
        let share = if span <= DENSE_PER_BIN * bins.len() + DENSE_BINS {
            let mut v = vec![0.0f32; span];
            for (b, p) in bins {
                v[b as usize] = share(p);
            }
            Bins::Dense(v)
        } else {
            Bins::Sparse(
                bins.into_iter()
                    .map(|(b, p)| (b.min(i64::MAX as u64) as i64, share(p)))
                    .collect(),
            )
        };
        Ok(Sharing { start, share })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_average_over_bins() {
        let s = Sharing {
            start: 1000.0,
            share: Bins::Dense(vec![0.5, 0.1]),
        };
        assert_eq!(s.share(0.0, 500.0), 0.0);
        assert_eq!(s.share(1000.0, 1000.0), 0.5);
        let mid = 1000.0 + BIN_NS;
        let mean = s.share(mid - 100.0, mid + 300.0);
        assert!(
            (mean - (0.5 * 100.0 + 0.1 * 300.0) / 400.0).abs() < 1e-6,
            "{mean}"
        );
        assert_eq!(s.share(1000.0 + 5.0 * BIN_NS, 1000.0 + 6.0 * BIN_NS), 0.0);
    }

    #[test]
    fn sparse_bins_give_what_dense_bins_give() {
        let dense = Sharing {
            start: 1000.0,
            share: Bins::Dense(vec![0.5, 0.0, 0.0, 0.25, 0.1]),
        };
        let sparse = Sharing {
            start: 1000.0,
            share: Bins::Sparse(vec![(0, 0.5), (3, 0.25), (4, 0.1)]),
        };
        for (a, b) in [
            (0.0, 500.0),
            (1000.0, 1100.0),
            (1000.0 + BIN_NS - 10.0, 1000.0 + 3.5 * BIN_NS),
            (900.0, 1000.0 + 10.0 * BIN_NS),
            (1000.0 + 4.5 * BIN_NS, 1000.0 + 4.5 * BIN_NS),
        ] {
            let (x, y) = (dense.share(a, b), sparse.share(a, b));
            assert!((x - y).abs() < 1e-9, "{a}..{b}: {x} vs {y}");
        }
    }
}
