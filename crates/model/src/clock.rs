//! Mapping a process's clock ticks to nanoseconds.
//!
//! The runtime stores raw ticks and, now and then, a simultaneous reading of
//! the tick clock and CLOCK_MONOTONIC (at start, at every buffer flush, at
//! the end). A least-squares line through those readings maps ticks to
//! monotonic nanoseconds, which are comparable across the processes of one
//! host.

/// A tick-to-nanosecond map of one process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockMap {
    /// Tick of the reference point.
    pub tick0: u64,
    /// Monotonic ns at the reference point.
    pub ns0: f64,
    /// Nanoseconds per tick.
    pub ns_per_tick: f64,
}

impl ClockMap {
    /// The identity map (ticks are nanoseconds).
    pub const IDENTITY: ClockMap = ClockMap {
        tick0: 0,
        ns0: 0.0,
        ns_per_tick: 1.0,
    };

    /// Fits a map through `(tick, mono_ns)` samples; with fewer than two
    /// distinct ticks (or a fit that makes no sense) the nominal frequency
    /// gives the slope.
    pub fn fit(samples: &[(u64, u64)], nominal_hz: f64) -> ClockMap {
        let nominal = if nominal_hz.is_finite() && nominal_hz > 0.0 {
            1e9 / nominal_hz
        } else {
            1.0
        };
        let Some(&(t0, n0)) = samples.iter().min_by_key(|s| s.0) else {
            return ClockMap {
                tick0: 0,
                ns0: 0.0,
                ns_per_tick: nominal,
            };
        };
        // Work relative to the first sample so that f64 keeps every digit.
        let pts: Vec<(f64, f64)> = samples
            .iter()
            .map(|&(t, n)| (t.wrapping_sub(t0) as f64, n as f64 - n0 as f64))
            .collect();
        let k = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let slope = if sxx > 0.0 { sxy / sxx } else { f64::NAN };
        let ns_per_tick = if slope.is_finite() && slope > 0.0 {
            slope
        } else {
            nominal
        };
        let ns0 = n0 as f64 + (my - ns_per_tick * mx);
        ClockMap {
            tick0: t0,
            ns0,
            ns_per_tick,
        }
    }

    /// Monotonic nanoseconds at `tick`.
    #[inline]
    pub fn ns(&self, tick: u64) -> f64 {
        // Ticks are within 2^63 of each other: the wrapped difference is
        // the signed distance (and converts faster than an i128).
        let d = tick.wrapping_sub(self.tick0) as i64;
        self.ns0 + d as f64 * self.ns_per_tick
    }

    /// The tick at `ns` (the nearest): the inverse of [`ClockMap::ns`].
    pub fn tick(&self, ns: f64) -> u64 {
        let d = ((ns - self.ns0) / self.ns_per_tick).round() as i64;
        self.tick0.wrapping_add(d as u64)
    }

    /// A duration of `ticks` in nanoseconds.
    #[inline]
    pub fn duration_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_line_exactly() {
        let samples: Vec<(u64, u64)> = (0..5)
            .map(|i| (1_000_000 + i * 2_000_000, 5_000 + i * 1_000_000))
            .collect();
        let m = ClockMap::fit(&samples, 1e9);
        assert!((m.ns_per_tick - 0.5).abs() < 1e-12);
        assert!((m.ns(3_000_000) - 1_005_000.0).abs() < 1e-6);
    }

    #[test]
    fn falls_back_to_nominal() {
        let m = ClockMap::fit(&[(100, 7)], 2e9);
        assert_eq!(m.ns_per_tick, 0.5);
        assert_eq!(m.ns(102), 8.0);
        assert_eq!(ClockMap::fit(&[], 0.0).ns_per_tick, 1.0);
    }

    #[test]
    fn tick_inverts_ns() {
        let m = ClockMap {
            tick0: 1_000,
            ns0: 5e9,
            ns_per_tick: 0.37,
        };
        for t in [0, 999, 1_000, 1_001, 123_456_789_012] {
            assert_eq!(m.tick(m.ns(t)), t);
        }
        assert_eq!(m.tick(5e9 + 0.37 * 10.4), 1_010);
    }
}
