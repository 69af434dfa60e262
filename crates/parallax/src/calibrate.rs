//! Measuring the probes' own cost on this machine.
//!
//! Each probe kind runs in batches of 256 on a scratch thread state (same
//! code as a real probe, but its buffer is never written out), timed with
//! the probes' clock. A batch's time divided by 256 is one sample; the mean
//! and standard deviation over batches (after one warm-up batch, and leaving
//! out batches that the operating system disturbed) are what compensation
//! subtracts per event and what `parallax calibrate` shows.
//! Enters are timed as a nested run of 256 and leaves as the matching run of
//! 256 leaves, so each has its own cost.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use parallax_model::defs::{Mode, Probe};
use parallax_model::event::EventKind;
use parallax_model::experiment::Calibration;

use crate::clock;
use crate::thread::ThreadState;

const BATCH: usize = 256;

/// A flag shaped like the probes' global one, always off: timing a check of
/// it is timing a disabled probe.
static OFF: AtomicU8 = AtomicU8::new(0);

/// Measures every probe kind in `mode` over `batches` batches.
pub fn measure(mode: Mode, batches: usize) -> Vec<Calibration> {
    let batches = batches.max(2);
    let (t0, m0) = clock::sample();
    let mut st = ThreadState::new(256 << 10, 4096, 2 * BATCH);
    st.set_modes(mode.traces(), mode.profiles());
    let mut samples: [Vec<u64>; 5] = Default::default();
    for b in 0..=batches {
        let c0 = clock::now();
        let mut sink = 0u64;
        for _ in 0..BATCH {
            sink = sink.wrapping_add(clock::now());
        }
        let c1 = clock::now();
        for i in 0..BATCH {
            st.enter(i as u32 & 7);
        }
        let c2 = clock::now();
        for _ in 0..BATCH {
            st.leave();
        }
        let c3 = clock::now();
        for i in 0..BATCH {
            st.event(&EventKind::Mark {
                mark: 1,
                value: i as i64,
            });
        }
        let c4 = clock::now();
        for i in 0..BATCH {
            if OFF.load(Relaxed) != 0 {
                st.enter(i as u32);
            }
            std::hint::black_box(());
        }
        let c5 = clock::now();
        std::hint::black_box(sink);
        if b > 0 {
            for (k, (a, z)) in [(c0, c1), (c1, c2), (c2, c3), (c3, c4), (c4, c5)]
                .iter()
                .enumerate()
            {
                samples[k].push(z.saturating_sub(*a));
            }
        }
    }
    let (t1, m1) = clock::sample();
    let ns_per_tick = if t1 > t0 && m1 > m0 {
        (m1 - m0) as f64 / (t1 - t0) as f64
    } else {
        1.0
    };
    let probes = [
        Probe::ClockRead,
        Probe::Enter,
        Probe::Leave,
        Probe::Event,
        Probe::Disabled,
    ];
    probes
        .iter()
        .zip(samples.iter())
        .map(|(&probe, s)| {
            let per: Vec<f64> = s
                .iter()
                .map(|&t| t as f64 * ns_per_tick / BATCH as f64)
                .collect();
            let min = per.iter().cloned().fold(f64::INFINITY, f64::min);
            let kept = undisturbed(&per);
            let n = kept.len() as f64;
            let mean = kept.iter().sum::<f64>() / n;
            let var =
                kept.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0).max(1.0);
            Calibration {
                probe,
                mode,
                mean_ns: mean,
                sd_ns: var.sqrt(),
                min_ns: min,
                samples: per.len() as u32,
            }
        })
        .collect()
}

/// The batches that the operating system did not disturb: those within
/// five median absolute deviations of the median (a batch during which the
/// thread was preempted or interrupted costs many times more, and would
/// make the mean a measure of the machine's load, not of the probe).
fn undisturbed(per: &[f64]) -> Vec<f64> {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut sorted = per.to_vec();
    let m = median(&mut sorted);
    let mut dev: Vec<f64> = per.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&mut dev).max(m * 0.01);
    per.iter()
        .copied()
        .filter(|x| (x - m).abs() <= 5.0 * mad)
        .collect()
}

/// The clock's resolution: the smallest non-zero difference between two
/// consecutive reads, in ns, over `reads` reads.
pub fn clock_resolution_ns(reads: usize) -> f64 {
    let (t0, m0) = clock::sample();
    let mut best = u64::MAX;
    let mut prev = clock::now();
    for _ in 0..reads {
        let t = clock::now();
        if t > prev {
            best = best.min(t - prev);
        }
        prev = t;
    }
    let (t1, m1) = clock::sample();
    let ns_per_tick = if t1 > t0 && m1 > m0 {
        (m1 - m0) as f64 / (t1 - t0) as f64
    } else {
        1.0
    };
    best as f64 * ns_per_tick
}

/// Nanoseconds per tick of the probes' clock, measured over `ms`
/// milliseconds.
pub fn ns_per_tick(ms: u64) -> f64 {
    let (t0, m0) = clock::sample();
    while clock::mono_ns() < m0 + ms * 1_000_000 {}
    let (t1, m1) = clock::sample();
    if t1 > t0 {
        (m1 - m0) as f64 / (t1 - t0) as f64
    } else {
        1.0
    }
}

/// Selects the clock as a measurement would (for calibration outside one).
pub fn use_default_clock() {
    clock::select(true);
}
