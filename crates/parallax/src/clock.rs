//! The probes' clock: raw invariant-TSC ticks where the CPU has them, else
//! CLOCK_MONOTONIC nanoseconds. Probes never make a system call; ticks are
//! mapped to time offline from clock samples (see `parallax_model::clock`).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use parallax_model::defs::ClockSource;

static USE_TSC: AtomicBool = AtomicBool::new(false);
static FENCED: AtomicBool = AtomicBool::new(false);

/// Current tick.
#[inline(always)]
pub fn now() -> u64 {
    read(USE_TSC.load(Relaxed), FENCED.load(Relaxed))
}

/// Current tick, from the TSC if `tsc`, between two load fences if
/// `fenced` (which the caller read from [`source`] and [`fenced`] once, so
/// that probes need not).
#[inline(always)]
pub fn read(tsc: bool, fenced: bool) -> u64 {
    if fenced {
        order();
        let t = read_unfenced(tsc);
        order();
        t
    } else {
        read_unfenced(tsc)
    }
}

#[inline(always)]
fn read_unfenced(tsc: bool) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if tsc {
        // Safety: `rdtsc` has no preconditions; it is only selected where
        // the CPU reports an invariant TSC.
        return unsafe { core::arch::x86_64::_rdtsc() };
    }
    let _ = tsc;
    mono_ns()
}

/// Keeps a clock read and the memory operations around it in program order
/// (`rdtsc` alone may run after later instructions and before earlier
/// ones): between a post's event and the store that publishes it, and
/// between the load that sees a post and the event that completes the wait,
/// so that the wait never seems to end before the post.
#[inline(always)]
pub fn order() {
    #[cfg(target_arch = "x86_64")]
    // Safety: `lfence` has no preconditions.
    unsafe {
        core::arch::x86_64::_mm_lfence()
    };
}

/// CLOCK_MONOTONIC in nanoseconds (async-signal-safe).
#[inline]
pub fn mono_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds since the epoch.
pub fn unix_ns() -> u64 {
    read_clock(libc::CLOCK_REALTIME)
}

fn read_clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The source in use.
pub fn source() -> ClockSource {
    if USE_TSC.load(Relaxed) {
        ClockSource::Tsc
    } else {
        ClockSource::Monotonic
    }
}

/// Whether this CPU has a TSC that ticks at a constant rate, also in deep
/// sleep states, so that its readings are a clock.
pub fn tsc_is_invariant() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let Some(flags) = info.lines().find(|l| l.starts_with("flags")) else {
        return false;
    };
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

/// Chooses the clock source, and whether reads are fenced.
pub(crate) fn select(tsc: bool, fenced: bool) {
    USE_TSC.store(tsc && tsc_is_invariant(), Relaxed);
    FENCED.store(fenced, Relaxed);
}

/// Whether probes are fenced (`PARALLAX_CLOCK=tsc-fenced`).
pub fn fenced() -> bool {
    FENCED.load(Relaxed)
}

/// A simultaneous reading of the tick clock and CLOCK_MONOTONIC; the tick is
/// read between two monotonic reads and paired with their midpoint.
pub fn sample() -> (u64, u64) {
    // The tightest of a few readings: one interrupted between its two
    // monotonic reads would be off by up to the interruption.
    let mut best = (0, 0, u64::MAX);
    for _ in 0..5 {
        let a = mono_ns();
        let t = now();
        let b = mono_ns();
        if b.saturating_sub(a) < best.2 {
            best = (t, a + (b - a) / 2, b.saturating_sub(a));
        }
    }
    (best.0, best.1)
}
