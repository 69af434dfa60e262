//! Summaries of repeated measurements.

use serde::Serialize;

/// Median, spread and samples of one configuration's repetitions
/// (rounded to 3 decimals).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Median absolute deviation from the median.
    pub mad: f64,
    pub samples: Vec<f64>,
}

/// The median of `xs` (mean of the two middle values for an even count);
/// NaN for no values.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl Summary {
    pub fn of(samples: &[f64]) -> Summary {
        let m = median(samples);
        let dev: Vec<f64> = samples.iter().map(|x| (x - m).abs()).collect();
        Summary {
            median: round(m, 3),
            min: round(samples.iter().copied().fold(f64::INFINITY, f64::min), 3),
            max: round(samples.iter().copied().fold(f64::NEG_INFINITY, f64::max), 3),
            mad: round(median(&dev), 3),
            samples: samples.iter().map(|&x| round(x, 3)).collect(),
        }
    }
}

/// Rounds to `digits` decimals, for readable JSON.
pub fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let s = Summary::of(&[1.0, 2.0, 10.0]);
        assert_eq!((s.median, s.min, s.max, s.mad), (2.0, 1.0, 10.0, 1.0));
    }
}
