//! Peer tracers measured with the same loop as Parallax: one span or scope
//! per iteration, recorded for real, and counted afterwards from what each
//! tracer delivered.
//!
//! - fastrace: a `LocalSpan` per pair under a root `Span` per chunk of
//!   pairs (fastrace keeps at most 10,240 local spans per root and drops
//!   the rest, so one root for a whole run would not record everything).
//!   A reporter counts the span records it receives.
//! - puffin: a `profile_scope!` per pair inside an outer scope per chunk
//!   (puffin hands a thread's stream to its global profiler each time the
//!   outermost scope closes, so a flat loop would pay a lock per pair). A
//!   frame sink parses the finished frame's streams and counts the scopes.
//! - tracing: an `info_span!(..).entered()` per pair, with a `Registry`
//!   and tracing-chrome's layer writing Chrome JSON to a file; the file is
//!   parsed afterwards and its begin/end events counted.
//! - tracing + tracing-perfetto: the same spans with a `Registry` and
//!   tracing-perfetto's layer writing Perfetto trace packets to a file (as
//!   its documentation sets it up, through a `Mutex<File>`); the packets
//!   are decoded afterwards and their slice begins and ends counted.

use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tracing_subscriber::layer::SubscriberExt;

/// Name of the benchmarked span or scope in every peer.
const NAME: &str = "bench";

// === fastrace ===

static FASTRACE_BENCH: AtomicU64 = AtomicU64::new(0);
static FASTRACE_OTHER: AtomicU64 = AtomicU64::new(0);

struct CountingReporter;

impl fastrace::collector::Reporter for CountingReporter {
    fn report(&mut self, spans: Vec<fastrace::collector::SpanRecord>) {
        let bench = spans.iter().filter(|s| s.name == NAME).count() as u64;
        FASTRACE_BENCH.fetch_add(bench, Relaxed);
        FASTRACE_OTHER.fetch_add(spans.len() as u64 - bench, Relaxed);
    }
}

/// Installs the counting reporter (once per process).
pub fn fastrace_setup() {
    fastrace::set_reporter(CountingReporter, fastrace::collector::Config::default());
}

#[inline(never)]
fn fastrace_loop(pairs: u64, per_root: u64) -> Duration {
    use fastrace::prelude::*;
    let t = Instant::now();
    let mut left = pairs;
    while left > 0 {
        let n = left.min(per_root);
        let root = Span::root("fastrace-root", SpanContext::random());
        {
            let _parent = root.set_local_parent();
            for i in 0..n {
                let _s = LocalSpan::enter_with_local_parent(NAME);
                black_box(i);
            }
        }
        drop(root);
        left -= n;
    }
    t.elapsed()
}

/// Times `pairs` local spans (a root per `per_root`), then flushes the
/// collector and returns the time and the spans the reporter received.
pub fn fastrace_run(pairs: u64, per_root: u64) -> (Duration, u64) {
    let before = FASTRACE_BENCH.load(Relaxed);
    let d = fastrace_loop(pairs, per_root.max(1));
    fastrace::flush();
    (d, FASTRACE_BENCH.load(Relaxed) - before)
}

// === puffin ===

static PUFFIN_INNER: AtomicU64 = AtomicU64::new(0);
static PUFFIN_TOP: AtomicU64 = AtomicU64::new(0);
static PUFFIN_ERRORS: AtomicU64 = AtomicU64::new(0);

/// Turns puffin's scopes on and installs a sink that counts the scopes of
/// each finished frame by parsing its streams.
pub fn puffin_setup() {
    puffin::set_scopes_on(true);
    puffin::GlobalProfiler::lock().add_sink(Box::new(|frame| {
        // Without puffin's `packing` feature this cannot fail.
        #[allow(irrefutable_let_patterns)]
        let Ok(frame) = frame.unpacked() else {
            PUFFIN_ERRORS.fetch_add(1, Relaxed);
            return;
        };
        for s in frame.thread_streams.values() {
            for top in puffin::Reader::from_start(&s.stream) {
                let Ok(top) = top else {
                    PUFFIN_ERRORS.fetch_add(1, Relaxed);
                    break;
                };
                PUFFIN_TOP.fetch_add(1, Relaxed);
                match puffin::Reader::with_offset(&s.stream, top.child_begin_position) {
                    Ok(children) => {
                        let n = children.filter(|c| c.is_ok()).count();
                        PUFFIN_INNER.fetch_add(n as u64, Relaxed);
                    }
                    Err(_) => {
                        PUFFIN_ERRORS.fetch_add(1, Relaxed);
                    }
                }
            }
        }
    }));
}

#[inline(never)]
fn puffin_loop(pairs: u64, per_outer: u64) -> Duration {
    let t = Instant::now();
    let mut left = pairs;
    while left > 0 {
        let n = left.min(per_outer);
        puffin::profile_scope!("puffin-chunk");
        for i in 0..n {
            puffin::profile_scope!("bench");
            black_box(i);
        }
        left -= n;
    }
    t.elapsed()
}

/// Times `pairs` scopes (inside an outer scope per `per_outer`) in one
/// frame and returns the time and the inner scopes the sink counted.
pub fn puffin_run(pairs: u64, per_outer: u64) -> Result<(Duration, u64), String> {
    puffin::GlobalProfiler::lock().new_frame();
    let before = PUFFIN_INNER.load(Relaxed);
    let errors = PUFFIN_ERRORS.load(Relaxed);
    let d = puffin_loop(pairs, per_outer.max(1));
    puffin::GlobalProfiler::lock().new_frame();
    if PUFFIN_ERRORS.load(Relaxed) != errors {
        return Err("puffin: a recorded frame could not be parsed".into());
    }
    Ok((d, PUFFIN_INNER.load(Relaxed) - before))
}

// === tracing + tracing-chrome ===

#[inline(never)]
fn tracing_loop(pairs: u64) -> Duration {
    let t = Instant::now();
    for i in 0..pairs {
        let _s = tracing::info_span!("bench").entered();
        black_box(i);
    }
    t.elapsed()
}

#[derive(Deserialize)]
struct ChromeEvent {
    ph: String,
    #[serde(default)]
    name: Option<String>,
}

/// Span begin and end events of the benchmarked span in a Chrome JSON
/// trace file.
pub fn count_chrome_events(path: &Path) -> Result<(u64, u64), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let events: Vec<ChromeEvent> =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut begin = 0;
    let mut end = 0;
    for e in events.iter().filter(|e| e.name.as_deref() == Some(NAME)) {
        match e.ph.as_str() {
            "B" => begin += 1,
            "E" => end += 1,
            _ => {}
        }
    }
    Ok((begin, end))
}

/// Times `pairs` spans with a fresh Chrome-JSON-writing subscriber set as
/// this thread's default, waits for the file to be complete, and returns
/// the time, the file's size and the begin/end events it holds.
pub fn tracing_run(path: &Path, pairs: u64) -> Result<(Duration, u64, (u64, u64)), String> {
    let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new().file(path).build();
    let subscriber = tracing_subscriber::registry().with(layer);
    let d = tracing::subscriber::with_default(subscriber, || tracing_loop(pairs));
    // Dropping the guard makes the writer thread finish the file.
    drop(guard);
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let counts = count_chrome_events(path)?;
    Ok((d, size, counts))
}

// === tracing + tracing-perfetto ===

/// Times `pairs` spans with a fresh Perfetto-writing subscriber set as this
/// thread's default, and returns the time, the file's size and the slice
/// begin/end events of the benchmarked span it holds.
pub fn perfetto_run(path: &Path, pairs: u64) -> Result<(Duration, u64, (u64, u64)), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let layer = tracing_perfetto::PerfettoLayer::new(std::sync::Mutex::new(file));
    let subscriber = tracing_subscriber::registry().with(layer);
    let d = tracing::subscriber::with_default(subscriber, || tracing_loop(pairs));
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let counts = count_perfetto_slices(&bytes)
        .ok_or_else(|| format!("{}: not a Perfetto trace", path.display()))?;
    Ok((d, bytes.len() as u64, counts))
}

/// One protobuf field: its number and, for a length-delimited field, its
/// bytes (varints give their value in `varint`).
struct Field<'a> {
    number: u64,
    bytes: &'a [u8],
    varint: u64,
}

fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The fields of a protobuf message, in order; `None` if malformed.
fn fields(b: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let key = varint(b, &mut at)?;
        let (number, wire) = (key >> 3, key & 7);
        let (bytes, value): (&[u8], u64) = match wire {
            0 => (&[], varint(b, &mut at)?),
            1 => {
                at += 8;
                (&[], 0)
            }
            2 => {
                let n = varint(b, &mut at)? as usize;
                let s = b.get(at..at.checked_add(n)?)?;
                at += n;
                (s, 0)
            }
            5 => {
                at += 4;
                (&[], 0)
            }
            _ => return None,
        };
        if at > b.len() {
            return None;
        }
        out.push(Field {
            number,
            bytes,
            varint: value,
        });
    }
    Some(out)
}

/// Slice begins and ends named [`NAME`] in a Perfetto trace (`Trace.packet`
/// is field 1, `TracePacket.track_event` 11, `TrackEvent.type` 9 with
/// begin 1 and end 2, and `TrackEvent.name` 23).
fn count_perfetto_slices(trace: &[u8]) -> Option<(u64, u64)> {
    let (mut begin, mut end) = (0, 0);
    for packet in fields(trace)?.iter().filter(|f| f.number == 1) {
        for event in fields(packet.bytes)?.iter().filter(|f| f.number == 11) {
            let ev = fields(event.bytes)?;
            let named = ev
                .iter()
                .any(|f| f.number == 23 && f.bytes == NAME.as_bytes());
            match ev.iter().find(|f| f.number == 9).map(|f| f.varint) {
                Some(1) if named => begin += 1,
                Some(2) if named => end += 1,
                _ => {}
            }
        }
    }
    Some((begin, end))
}
