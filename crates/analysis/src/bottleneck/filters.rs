//! PPW's detection filters, with explicit defaults.
//!
//! A profile entry (a call path of a location) is a *hotspot* when the
//! time lost there is at least `hotspot` of the run's wall time (and
//! `min_severity_s`). It is then judged by its *baseline* when one was
//! measured for its construct on this machine (`parallax baseline`): mean
//! time per visit above `baseline_ratio` times the baseline. Without a
//! baseline the *deviation* test applies, with both thresholds explicit
//! because the thesis's printed test (min/avg "exceeds" a threshold) can
//! never hold: max/mean above `deviation_max`, or mean/min above
//! `deviation_min`. A wait state found by the replay also passes when its
//! waiting is at least `wait_share` of the time spent in the entry: the
//! replay measured the waiting itself, which a profile cannot. Waiting of
//! less than `min_instance_wait_s` per instance on average is the jitter
//! of the machine (scheduling, interrupts), however often it recurs; so is
//! waiting at fewer than `min_instance_share` of an entry's visits (a
//! location descheduled now and then).

use std::collections::BTreeMap;
use std::path::Path;

/// Thresholds of the analysis.
#[derive(Clone, Debug)]
pub struct Config {
    /// Fraction of the wall time a finding must lose.
    pub hotspot: f64,
    /// Least time a finding must lose, s.
    pub min_severity_s: f64,
    /// Mean over baseline above which an entry is slow.
    pub baseline_ratio: f64,
    /// Max over mean above which an entry deviates.
    pub deviation_max: f64,
    /// Mean over min above which an entry deviates.
    pub deviation_min: f64,
    /// Waiting over entry time above which a wait state stands alone.
    pub wait_share: f64,
    /// Least mean waiting per instance of a wait state, s.
    pub min_instance_wait_s: f64,
    /// Least share of an entry's visits that must wait.
    pub min_instance_share: f64,
    /// Visits and mean time per visit that make an event frequent and
    /// short (s).
    pub frequent_count: u64,
    /// See `frequent_count`.
    pub frequent_mean_s: f64,
    /// Largest over mean time above which work is imbalanced.
    pub imbalance_ratio: f64,
    /// Share of a finding's severity a culprit needs to be named.
    pub culprit_share: f64,
    /// Measured baselines.
    pub baselines: Baselines,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            hotspot: 0.05,
            min_severity_s: 0.001,
            baseline_ratio: 2.0,
            deviation_max: 2.0,
            deviation_min: 2.0,
            wait_share: 0.5,
            min_instance_wait_s: 20e-6,
            min_instance_share: 0.005,
            frequent_count: 10_000,
            frequent_mean_s: 10e-6,
            imbalance_ratio: 1.1,
            culprit_share: 0.05,
            baselines: Baselines::default(),
        }
    }
}

/// Bottleneck-free times of constructs on one machine: by construct (a
/// region kind's name) and number of locations, s per visit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Baselines {
    /// (construct, locations) → seconds.
    pub times: BTreeMap<(String, u32), f64>,
}

impl Baselines {
    /// The baseline of `construct` for `locations` (the nearest count
    /// measured at or below it, else the smallest above).
    pub fn get(&self, construct: &str, locations: u32) -> Option<f64> {
        let mut below = None;
        let mut above = None;
        for ((c, n), &t) in &self.times {
            if c != construct {
                continue;
            }
            if *n <= locations {
                below = Some(t);
            } else if above.is_none() {
                above = Some(t);
            }
        }
        below.or(above)
    }

    /// Parses the text form: one `construct locations seconds` per line,
    /// `#` comments. Bad lines are returned as warnings, never a panic.
    pub fn parse(text: &str) -> (Baselines, Vec<String>) {
        let mut b = Baselines::default();
        let mut warnings = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let parsed = match f.as_slice() {
                [c, n, t] => n
                    .parse::<u32>()
                    .ok()
                    .zip(t.parse::<f64>().ok())
                    .map(|(n, t)| (c, n, t)),
                _ => None,
            };
            match parsed {
                Some((c, n, t)) if t.is_finite() && t >= 0.0 => {
                    b.times.insert((c.to_string(), n), t);
                }
                _ => warnings.push(format!(
                    "baselines line {}: expected `construct locations seconds`",
                    i + 1
                )),
            }
        }
        (b, warnings)
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut s = String::from("# construct locations seconds-per-visit\n");
        for ((c, n), t) in &self.times {
            s.push_str(&format!("{c} {n} {t:.9e}\n"));
        }
        s
    }

    /// Reads a baselines file (a regular file of at most
    /// [`MAX_BASELINES_BYTES`]).
    pub fn load(path: &Path) -> Result<(Baselines, Vec<String>), parallax_model::Error> {
        let text = parallax_model::file::read_text(path, MAX_BASELINES_BYTES)?;
        Ok(Baselines::parse(&text))
    }
}

/// The longest baselines file read: `parallax baseline` writes a few
/// hundred bytes.
pub const MAX_BASELINES_BYTES: u64 = 16 << 20;

/// A profile entry's figures, s.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// Visits.
    pub visits: u64,
    /// Total time.
    pub total: f64,
    /// Shortest visit.
    pub min: f64,
    /// Longest visit.
    pub max: f64,
}

/// How an entry is judged: the method and whether it is flagged.
pub fn judge(
    cfg: &Config,
    construct: &str,
    locations: u32,
    e: &Entry,
) -> (&'static str, bool, Option<f64>) {
    let mean = if e.visits > 0 {
        e.total / e.visits as f64
    } else {
        0.0
    };
    if let Some(b) = cfg.baselines.get(construct, locations) {
        let slow = b > 0.0 && mean / b > cfg.baseline_ratio;
        return ("baseline", slow, Some(b));
    }
    let dev = mean > 0.0
        && (e.max / mean > cfg.deviation_max || (e.min > 0.0 && mean / e.min > cfg.deviation_min));
    ("deviation", dev, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_round_trip_and_bad_lines() {
        let (b, w) = Baselines::parse("barrier 2 1e-6\nlock 1 5e-8 # x\nbad line\nsend two 1\n");
        assert_eq!(w.len(), 2);
        assert_eq!(b.get("barrier", 4), Some(1e-6));
        assert_eq!(b.get("lock", 1), Some(5e-8));
        assert_eq!(b.get("recv", 2), None);
        let (c, w) = Baselines::parse(&b.to_text());
        assert!(w.is_empty());
        assert_eq!(c, b);
    }

    #[test]
    fn deviation_uses_both_thresholds() {
        let cfg = Config::default();
        let e = |min, max| Entry {
            visits: 10,
            total: 10.0,
            min,
            max,
        };
        assert!(!judge(&cfg, "x", 1, &e(0.9, 1.1)).1);
        assert!(judge(&cfg, "x", 1, &e(0.9, 2.5)).1);
        assert!(judge(&cfg, "x", 1, &e(0.4, 1.1)).1);
    }
}
