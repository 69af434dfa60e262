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
use crate::trace::{self, Loc};

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
    share: Vec<f32>,
}

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
        let mut sum = self.at(bin) * (edge - from);
        while edge < to {
            bin += 1;
            let next = (edge + BIN_NS).min(to);
            sum += self.at(bin) * (next - edge);
            edge = next;
        }
        sum
    }

    /// The share in bin `bin` (0 outside the run).
    #[inline]
    fn at(&self, bin: i64) -> f64 {
        usize::try_from(bin)
            .ok()
            .and_then(|i| self.share.get(i))
            .map_or(0.0, |&s| s as f64)
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
        let mut probes: Vec<f64> = Vec::new();
        for &(loc, costs) in locs {
            // Its own copy: it follows the calibration phases in time.
            let mut costs = costs.clone();
            trace::for_each_event(loc, 0.0, |e, t| {
                let i = ((t - start).max(0.0) / BIN_NS) as usize;
                if probes.len() <= i {
                    probes.resize(i + 1, 0.0);
                }
                probes[i] += costs.of(e);
            })?;
        }
        let capacity = cpus.max(1) as f64 * BIN_NS;
        Ok(Sharing {
            start,
            share: probes
                .iter()
                .map(|&p| (p / capacity).min(MAX_SHARE) as f32)
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_average_over_bins() {
        let s = Sharing {
            start: 1000.0,
            share: vec![0.5, 0.1],
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
}
