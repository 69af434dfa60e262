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

/// The error that an exact estimate of the median of `samples` would show
/// by chance: the mean of |median(A)/median(B) - 1| over resamplings, A
/// and B each `samples.len()` draws (with replacement) from the samples.
/// The repetitions of a kernel's raw run give the chance error of its
/// T_a/T: how far the medians of two sets of raw runs land apart on this
/// machine. Deterministic (a fixed seed).
pub fn chance_error(samples: &[f64]) -> f64 {
    const RESAMPLES: usize = 2000;
    let n = samples.len();
    if n < 2 {
        return f64::NAN;
    }
    let mut state = 0x5eed_u64;
    let mut draw = |buf: &mut Vec<f64>| {
        buf.clear();
        for _ in 0..n {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            buf.push(samples[(z % n as u64) as usize]);
        }
        median(buf)
    };
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let total: f64 = (0..RESAMPLES)
        .map(|_| (draw(&mut a) / draw(&mut b) - 1.0).abs())
        .sum();
    total / RESAMPLES as f64
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

    #[test]
    fn chance_errors() {
        assert_eq!(chance_error(&[5.0; 5]), 0.0);
        assert!(chance_error(&[5.0]).is_nan());
        let narrow = chance_error(&[1.0, 1.01, 0.99, 1.0, 1.02]);
        let wide = chance_error(&[1.0, 1.5, 0.7, 1.0, 1.3]);
        assert!(narrow > 0.0 && narrow < 0.02, "{narrow}");
        assert!(wide > 5.0 * narrow, "{wide} vs {narrow}");
    }
}
