//! Parallax's own runs: the same `region!` loop in trace, profile and off
//! modes, each run read back from disk to prove what was recorded.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use parallax::{Config, Mode};
use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use serde::Serialize;

use crate::stats::round;

/// Name of the benchmarked region.
pub const REGION: &str = "bench";

/// The loop a user would write: one region visit per iteration.
#[inline(never)]
pub fn region_loop(pairs: u64) -> Duration {
    let t = Instant::now();
    for i in 0..pairs {
        let _g = parallax::region!("bench");
        black_box(i);
    }
    t.elapsed()
}

/// Events read back from one experiment.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Readback {
    pub enter: u64,
    pub leave: u64,
    pub flush_begin: u64,
    pub flush_end: u64,
    /// Events of any other kind (there should be none).
    pub other: u64,
    /// Bytes of the thread-*.pxe files (headers and block framing included).
    pub file_bytes: u64,
    /// Event files read.
    pub files: u64,
    /// The runtime's own count of bytes it could not write.
    pub lost_bytes: u64,
    /// Buffer flushes the runtime counted.
    pub buffer_flushes: u64,
    /// Per thread file: enter+leave events.
    pub per_thread_pairs: Vec<u64>,
}

impl Readback {
    pub fn events(&self) -> u64 {
        self.enter + self.leave + self.flush_begin + self.flush_end + self.other
    }
}

/// Starts a measurement in `mode` with the default settings (1 MiB
/// buffer per thread, start-up calibration of the probes).
fn init(mode: Mode, dir: &Path) -> Result<(), String> {
    parallax::init(Config::new(mode, dir)).map_err(|e| format!("parallax::init({mode:?}): {e}"))
}

/// Ends the measurement; fails if none was writing an experiment.
fn finish() -> Result<PathBuf, String> {
    parallax::finish().ok_or_else(|| "parallax::finish: no measurement was running".to_string())
}

/// Reads every event file of the experiment in `dir`, counting events by
/// kind; fails on any damaged file.
pub fn read_back(dir: &Path) -> Result<Readback, String> {
    let exp = Experiment::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let warnings = exp.warnings();
    if !warnings.is_empty() {
        return Err(format!(
            "reading {}: {}",
            dir.display(),
            warnings.join("; ")
        ));
    }
    let mut r = Readback::default();
    let mut buf = Vec::new();
    for p in &exp.processes {
        for (k, v) in &p.properties {
            let n: u64 = v.parse().unwrap_or(0);
            match k.as_str() {
                "lost_bytes" => r.lost_bytes += n,
                "buffer_flushes" => r.buffer_flushes += n,
                _ => {}
            }
        }
        for (&thread, loc) in &p.locations {
            let Some(path) = &loc.events else { continue };
            r.files += 1;
            r.file_bytes += std::fs::metadata(path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .len();
            let mut reader = p.events(thread).map_err(|e| e.to_string())?;
            let mut pairs = 0;
            loop {
                buf.clear();
                let more = reader.next_block(&mut buf).map_err(|e| e.to_string())?;
                for ev in &buf {
                    match ev.kind {
                        EventKind::Enter { .. } => {
                            r.enter += 1;
                            pairs += 1;
                        }
                        EventKind::Leave { .. } => {
                            r.leave += 1;
                            pairs += 1;
                        }
                        EventKind::FlushBegin => r.flush_begin += 1,
                        EventKind::FlushEnd => r.flush_end += 1,
                        _ => r.other += 1,
                    }
                }
                if !more {
                    break;
                }
            }
            r.per_thread_pairs.push(pairs / 2);
        }
    }
    Ok(r)
}

/// One timed trace-mode run of `pairs` pairs, and what it wrote.
pub fn trace_run(dir: &Path, pairs: u64) -> Result<(Duration, Readback), String> {
    init(Mode::Trace, dir)?;
    let d = region_loop(pairs);
    finish()?;
    let r = read_back(dir)?;
    Ok((d, r))
}

/// The same loop through `tracing`'s span API, recorded by
/// `parallax-tracing` (set as the global subscriber by the caller): a new
/// span per iteration, or (`reuse`) one span entered and exited in every
/// iteration, as an instrumented future's span is at every poll.
#[inline(never)]
pub fn tracing_span_loop(pairs: u64, reuse: bool) -> Duration {
    let t = Instant::now();
    if reuse {
        let span = tracing::info_span!("bench");
        for i in 0..pairs {
            let _e = span.enter();
            black_box(i);
        }
    } else {
        for i in 0..pairs {
            let _s = tracing::info_span!("bench").entered();
            black_box(i);
        }
    }
    t.elapsed()
}

/// One timed trace-mode run of [`tracing_span_loop`], read back like
/// [`trace_run`].
pub fn tracing_trace_run(
    dir: &Path,
    pairs: u64,
    reuse: bool,
) -> Result<(Duration, Readback), String> {
    init(Mode::Trace, dir)?;
    let d = tracing_span_loop(pairs, reuse);
    finish()?;
    let r = read_back(dir)?;
    Ok((d, r))
}

/// One timed profile-mode run; returns the time and the visit count of
/// the benchmarked region read back from the profile.
pub fn profile_run(dir: &Path, pairs: u64) -> Result<(Duration, u64), String> {
    init(Mode::Profile, dir)?;
    let d = region_loop(pairs);
    finish()?;
    let exp = Experiment::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut visits = 0;
    for p in &exp.processes {
        let ids: Vec<u32> = p
            .regions
            .iter()
            .filter(|(_, r)| r.name == REGION)
            .map(|(&id, _)| id)
            .collect();
        let (trees, err) = p.profiles().map_err(|e| e.to_string())?;
        if let Some(e) = err {
            return Err(format!("profile of {}: {e}", dir.display()));
        }
        for t in &trees {
            for n in &t.nodes {
                if ids.contains(&n.region) {
                    visits += n.stats.count;
                }
            }
        }
    }
    Ok((d, visits))
}

/// One timed run with measurement off (initialized with `Mode::Off`).
pub fn disabled_run(dir: &Path, pairs: u64) -> Result<Duration, String> {
    init(Mode::Off, dir)?;
    let d = region_loop(pairs);
    // Off writes no experiment: nothing to return.
    parallax::finish();
    Ok(d)
}

/// Sustained trace throughput of `threads` threads.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    pub threads: usize,
    /// Wall time from the start signal until every thread ended (their
    /// last buffers written).
    pub seconds: f64,
    /// Pairs done by each thread.
    pub pairs: Vec<u64>,
    /// Events read back from disk (enter, leave, flush begin/end).
    pub events: u64,
    /// Enter+leave events expected from the pairs done.
    pub expected_enter_leave: u64,
    /// Expected minus read enter+leave events.
    pub lost: i64,
    /// Bytes the runtime reported it could not write.
    pub lost_bytes: u64,
    pub flush_pairs: u64,
    pub file_bytes: u64,
    pub events_per_s: f64,
    /// Decimal megabytes (10^6 bytes) per second.
    pub mb_per_s: f64,
    pub bytes_per_event: f64,
    /// Mean time per pair inside each thread (flushes included).
    pub ns_per_pair: Vec<f64>,
}

/// Runs `threads` threads doing pairs at full speed for `secs` seconds each
/// in trace mode with the default buffer, then reads everything back.
pub fn throughput(dir: &Path, threads: usize, secs: f64) -> Result<Throughput, String> {
    init(Mode::Trace, dir)?;
    let go = Arc::new(Barrier::new(threads + 1));
    let dur = Duration::from_secs_f64(secs);
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let go = go.clone();
            std::thread::Builder::new()
                .name(format!("bench-{i}"))
                .spawn(move || {
                    go.wait();
                    let t = Instant::now();
                    let mut n = 0u64;
                    while t.elapsed() < dur {
                        region_loop(4096);
                        n += 4096;
                    }
                    (n, t.elapsed())
                })
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    go.wait();
    let t0 = Instant::now();
    let mut pairs = Vec::new();
    let mut ns_per_pair = Vec::new();
    for h in handles {
        let (n, d) = h.join().map_err(|_| "a benchmark thread panicked")?;
        pairs.push(n);
        ns_per_pair.push(d.as_nanos() as f64 / n.max(1) as f64);
    }
    let seconds = t0.elapsed().as_secs_f64();
    finish()?;
    let r = read_back(dir)?;
    let expected = 2 * pairs.iter().sum::<u64>();
    let events = r.events();
    Ok(Throughput {
        threads,
        seconds: round(seconds, 4),
        pairs,
        events,
        expected_enter_leave: expected,
        lost: expected as i64 - (r.enter + r.leave) as i64,
        lost_bytes: r.lost_bytes,
        flush_pairs: r.flush_begin.min(r.flush_end),
        file_bytes: r.file_bytes,
        events_per_s: round(events as f64 / seconds, 0),
        mb_per_s: round(r.file_bytes as f64 / seconds / 1e6, 2),
        bytes_per_event: round(r.file_bytes as f64 / events.max(1) as f64, 3),
        ns_per_pair: ns_per_pair.iter().map(|&x| round(x, 2)).collect(),
    })
}

/// The probe costs Parallax measured at start-up in the experiment in
/// `dir` (mean ns by probe).
pub fn calibration(dir: &Path) -> Result<BTreeMap<String, f64>, String> {
    let exp = Experiment::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(exp
        .processes
        .iter()
        .flat_map(|p| p.calibration.iter())
        .map(|c| {
            (
                format!("{:?}", c.probe).to_lowercase(),
                (c.mean_ns * 100.0).round() / 100.0,
            )
        })
        .collect())
}
