//! Measuring the probes' own cost on this machine.
//!
//! Each probe kind runs in batches of 256, timed with the probes' clock, on
//! a scratch thread state: for that time the calling thread's probes write
//! into a buffer that is never written out. Enters and leaves go through
//! the entry points a program calls: a `region!` guard, and the C entry
//! points when the interposition library registered them (a C program
//! calls them across a shared library's boundary, which costs more), and
//! the register-preserving probes (`region_preserving!`). A
//! batch's time divided by 256 is one sample; the mean and standard
//! deviation over batches (after one warm-up batch, and leaving out batches
//! that the operating system disturbed) are what compensation subtracts per
//! event and what `parallax calibrate` shows. Enters are timed as a nested
//! run of 256 and leaves as the matching run of 256 leaves, so each has its
//! own cost.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;

use parallax_model::defs::{Mode, Probe};
use parallax_model::event::EventKind;
use parallax_model::experiment::Calibration;

use crate::clock;
use crate::process::{PROFILE, TRACE};
use crate::region::{self, Callsite, PreservingGuard, RegionGuard};
use crate::thread::{self, NewState, ThreadState};

const BATCH: usize = 256;
// The speed windows say how long batches of disabled probes took.
const _: () = assert!(BATCH as u64 == parallax_model::experiment::SpeedInRun::CHECKS);

/// A flag shaped like the probes' global one, always off: timing a check of
/// it is timing a disabled probe.
static OFF: AtomicU8 = AtomicU8::new(0);

/// The probes' flags while calibrating (the process's own may be unset).
static CAL: AtomicU8 = AtomicU8::new(0);

/// The call site that calibration enters.
static SITE: Callsite = Callsite::with_id(1, "calibration");

/// The C entry points as a C program calls them.
#[derive(Clone, Copy, Debug)]
pub struct CEntry {
    /// `parallax_pl_enter`, reading the calibration's flags ([`c_enter`]).
    pub enter: extern "C" fn(u32) -> c_int,
    /// `parallax_pl_leave`.
    pub leave: extern "C" fn(),
    /// `parallax_pl_enter_preserving` reading the calibration's flags: a
    /// register-preserving trampoline taking the region in edi.
    pub enter_preserving: unsafe extern "C" fn(),
    /// `parallax_pl_leave_preserving`.
    pub leave_preserving: unsafe extern "C" fn(),
    /// Functions built with compiler instrumentation, if the library has
    /// its hooks.
    pub hooks: Option<HookEntry>,
}

/// One small C function built three times, as a program's code is: without
/// instrumentation, with `-finstrument-functions` and its calls recorded,
/// and with it but its calls not recorded (as a throttled function's).
/// Each is called as `f(x)` and returns `x` plus a constant.
#[derive(Clone, Copy, Debug)]
pub struct HookEntry {
    /// Without instrumentation.
    pub plain: extern "C" fn(u32) -> u32,
    /// Instrumented, recorded under the calibration's flags.
    pub recorded: extern "C" fn(u32) -> u32,
    /// Instrumented, recording nothing.
    pub skipped: extern "C" fn(u32) -> u32,
    /// Whether the hooks can run on this thread now (not once its
    /// thread-local state is gone, at the process's exit).
    pub ready: fn() -> bool,
    /// Sets this thread's count of calls not recorded yet and returns the
    /// count it replaces (calibration sets it aside while it runs).
    pub swap_skipped: fn(u64) -> u64,
}

static C_ENTRY: OnceLock<CEntry> = OnceLock::new();

/// Registers the C entry points (the interposition library does, when it
/// is loaded), so that calibrations time them too.
pub fn set_c_entry(entry: CEntry) {
    let _ = C_ENTRY.set(entry);
}

/// The body of `parallax_pl_enter`, under the calibration's flags: the
/// interposition library builds its calibration copy of the entry point
/// from it.
#[inline(always)]
pub fn c_enter(id: u32) -> c_int {
    region::enter_code(CAL.load(Relaxed), id)
}

/// Measures every probe kind in `mode` over `batches` batches.
pub fn measure(mode: Mode, batches: usize) -> Vec<Calibration> {
    let batches = batches.max(2);
    let (t0, m0) = clock::sample();
    let c_entry = C_ENTRY.get().copied();
    let mut samples: [Vec<u64>; 14] = Default::default();
    let measured = on_scratch(mode, || {
        for b in 0..=batches {
            let mut c = [0u64; 15];
            let mut disabled = 0;
            let n = time_batch(c_entry, &mut c, &mut disabled);
            // The first batch warms caches and branch predictors up.
            if b > 0 {
                for k in 0..n {
                    // The disabled probes are timed within their function.
                    let t = if k == 4 {
                        disabled
                    } else {
                        c[k + 1].saturating_sub(c[k])
                    };
                    samples[k].push(t);
                }
            }
        }
    });
    if measured.is_none() {
        return Vec::new();
    }
    let (t1, m1) = clock::sample();
    let ns_per_tick = ns_per_tick_over((t0, m0), (t1, m1));
    // The hooks' costs: each batch of instrumented calls less the batch of
    // plain calls just before it.
    let [.., plain, recorded, skipped] = &mut samples;
    for s in [&mut *recorded, &mut *skipped] {
        for (x, p) in s.iter_mut().zip(plain.iter()) {
            *x = x.saturating_sub(*p);
        }
    }
    let probes = [
        Probe::ClockRead,
        Probe::Enter,
        Probe::Leave,
        Probe::Event,
        Probe::Disabled,
        Probe::EnterPreserving,
        Probe::LeavePreserving,
        Probe::EnterC,
        Probe::LeaveC,
        Probe::EnterCPreserving,
        Probe::LeaveCPreserving,
        Probe::ClockRead,
        Probe::HookPair,
        Probe::HookSkipped,
    ];
    let tick = t0 + t1.saturating_sub(t0) / 2;
    let mut out: Vec<Calibration> = probes
        .iter()
        .zip(samples.iter())
        .enumerate()
        // The plain calls are only the hooks' baseline.
        .filter(|(k, (_, s))| *k != 11 && !s.is_empty())
        .map(|(_, (&probe, s))| {
            let per: Vec<f64> = s
                .iter()
                .map(|&t| t as f64 * ns_per_tick / BATCH as f64)
                .collect();
            summarize(probe, mode, &per, tick)
        })
        .collect();
    split_hook_pair(&mut out, mode, batches as u32, tick);
    out
}

/// The ticks of a batch of checks of a probe flag that is off: what a
/// disabled probe costs ([`Probe::Disabled`]), and the yardstick by which
/// each thread times its core's speed in the run (`Local::meter`). One
/// function for both, so that the two run the same instructions.
#[inline(never)]
pub(crate) fn disabled_batch_ticks() -> u64 {
    let t0 = clock::now();
    for i in 0..BATCH {
        if OFF.load(Relaxed) != 0 {
            thread::with(|st| st.enter(i as u32));
        }
        std::hint::black_box(());
    }
    clock::now().saturating_sub(t0)
}

/// Times one batch of each probe kind there is: `c[k]` to `c[k + 1]` is
/// the batch of the `k`-th in [`measure`]'s order; returns how many were
/// timed.
#[inline(always)]
fn time_batch(c_entry: Option<CEntry>, c: &mut [u64; 15], disabled: &mut u64) -> usize {
    c[0] = clock::now();
    let mut sink = 0u64;
    for _ in 0..BATCH {
        sink = sink.wrapping_add(clock::now());
    }
    c[1] = clock::now();
    let f = CAL.load(Relaxed);
    let guards: [RegionGuard; BATCH] = std::array::from_fn(|_| SITE.enter_as(f));
    c[2] = clock::now();
    drop(guards);
    c[3] = clock::now();
    for i in 0..BATCH {
        thread::with(|st| {
            st.event(&EventKind::Mark {
                mark: 1,
                value: i as i64,
            })
        });
    }
    c[4] = clock::now();
    *disabled = disabled_batch_ticks();
    c[5] = clock::now();
    let preserving: [PreservingGuard; BATCH] = std::array::from_fn(|_| SITE.enter_preserving_as(f));
    c[6] = clock::now();
    drop(preserving);
    c[7] = clock::now();
    let mut n = 7;
    if let Some(e) = c_entry {
        let enter = std::hint::black_box(e.enter);
        let leave = std::hint::black_box(e.leave);
        for i in 0..BATCH {
            sink = sink.wrapping_add(enter(1 + (i as u32 & 7)) as u64);
        }
        c[8] = clock::now();
        for _ in 0..BATCH {
            leave();
        }
        c[9] = clock::now();
        for i in 0..BATCH {
            sink = sink.wrapping_add(call_preserving(e.enter_preserving, 1 + (i as u32 & 7)));
        }
        c[10] = clock::now();
        for _ in 0..BATCH {
            call_preserving(e.leave_preserving, 0);
        }
        c[11] = clock::now();
        n = 11;
        if let Some(h) = e.hooks.filter(|h| (h.ready)()) {
            let pending = (h.swap_skipped)(0);
            for (k, f) in [h.plain, h.recorded, h.skipped].into_iter().enumerate() {
                let f = std::hint::black_box(f);
                c[11 + k] = clock::now();
                for i in 0..BATCH {
                    sink = sink.wrapping_add(f(i as u32) as u64);
                }
            }
            c[14] = clock::now();
            (h.swap_skipped)(pending);
            n = 14;
        }
    }
    std::hint::black_box(sink);
    n
}

/// The calibration of `probe` from its costs per call, one per batch:
/// mean and deviation of the batches no interruption disturbed.
fn summarize(probe: Probe, mode: Mode, per: &[f64], tick: u64) -> Calibration {
    let min = per.iter().cloned().fold(f64::INFINITY, f64::min);
    let kept = undisturbed(per);
    let n = kept.len() as f64;
    let mean = kept.iter().sum::<f64>() / n;
    let var = kept.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0).max(1.0);
    Calibration {
        probe,
        mode,
        mean_ns: mean,
        sd_ns: var.sqrt(),
        min_ns: min,
        samples: per.len() as u32,
        tick,
    }
}

/// The hook pair split into its entry and exit as the runtime's own enter
/// and leave split: where in the pair the time stamps fall.
fn split_hook_pair(out: &mut Vec<Calibration>, mode: Mode, batches: u32, tick: u64) {
    let mean = |p: Probe| {
        out.iter()
            .find(|c| c.probe == p)
            .map(|c| (c.mean_ns, c.sd_ns))
    };
    let (Some((pair, sd)), Some((enter, _)), Some((leave, _))) = (
        mean(Probe::HookPair),
        mean(Probe::Enter),
        mean(Probe::Leave),
    ) else {
        return;
    };
    let share = if enter + leave > 0.0 {
        enter / (enter + leave)
    } else {
        0.5
    };
    for (probe, part) in [(Probe::EnterHook, share), (Probe::LeaveHook, 1.0 - share)] {
        out.push(Calibration {
            probe,
            mode,
            mean_ns: pair * part,
            sd_ns: sd * part,
            min_ns: pair * part,
            samples: batches,
            tick,
        });
    }
}

/// Runs `f` with the calling thread's probes writing, under the
/// calibration's flags for `mode`, into a scratch state whose buffer is
/// never written out.
/// `None`, with memory noted as short, if there is no memory for it.
fn on_scratch<R>(mode: Mode, f: impl FnOnce() -> R) -> Option<R> {
    let buffer = crate::buffer::Buffer::anonymous(256 << 10).ok();
    let Some((mut scratch, buffer)) = ThreadState::try_new(4096, 2 * BATCH).zip(buffer) else {
        crate::failsafe::note_memory_short();
        return None;
    };
    let mut local = scratch.local();
    let mut g = local.state().lock();
    local.install(&mut g, buffer);
    drop(g);
    local.set_modes(mode.traces(), mode.profiles());
    local.never_meter();
    let st: *mut ThreadState = scratch.into_raw();
    let flags = if mode.traces() { TRACE } else { 0 } | if mode.profiles() { PROFILE } else { 0 };
    CAL.store(flags, Relaxed);
    let own = thread::swap_state(st);
    let r = f();
    thread::swap_state(own);
    CAL.store(0, Relaxed);
    // Safety: the scratch state is no thread's any more, and no flusher
    // knows it.
    drop(unsafe { NewState::from_raw(st) });
    Some(r)
}

/// Iterations of a context loop, and rounds of each loop timed.
const CONTEXT_ITERATIONS: usize = 1024;
const CONTEXT_ROUNDS: usize = 5;
/// The kinds of loop of [`context_work`].
const CONTEXTS: usize = 5;

/// One iteration's work in a loop of kind `kind`: a dependent integer
/// multiply chain, updates of an array, data-dependent branches, a
/// floating-point multiply-add chain over loaded values, a square-root
/// chain. A probe costs differently in each: the out-of-order core runs it
/// beside some work and not other, and it disturbs the branch predictor.
#[inline(always)]
fn context_work(kind: usize, i: usize, data: &mut [f64; 2048]) -> u64 {
    match kind {
        0 => {
            let mut x = i as u64;
            for _ in 0..8 {
                x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23) ^ 0x5851_f42d_4c95_7f2d;
            }
            x
        }
        1 => {
            let mut s = 0.0;
            for k in 0..16 {
                let j = (i * 16 + k) % data.len();
                data[j] += 1.0;
                s += data[j];
            }
            s as u64
        }
        2 => {
            let (mut x, mut c) = (i as u64, 0u64);
            for _ in 0..16 {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                if (x >> 60) & 1 == 1 {
                    c += 3;
                } else {
                    c ^= 5;
                }
            }
            c
        }
        3 => {
            let mut s = 0.0;
            for k in 0..16 {
                let j = (i * 16 + k) % 512;
                s = s * 0.999 + data[j] * data[(j + 7) % data.len()];
            }
            s as u64
        }
        _ => {
            let mut s = 1.0 + i as f64;
            for _ in 0..8 {
                s = (s * 1.0001).sqrt() + 0.5;
            }
            s as u64
        }
    }
}

/// Ticks of one context loop of kind `kind`, with a register-preserving
/// probe pair around every iteration if `PROBED`.
#[inline(never)]
fn context_loop<const PROBED: bool>(kind: usize, data: &mut [f64; 2048]) -> u64 {
    let f = CAL.load(Relaxed);
    let t0 = clock::now();
    let mut acc = 0u64;
    for i in 0..CONTEXT_ITERATIONS {
        // Opaque, so that neither loop is vectorized across iterations.
        let i = std::hint::black_box(i);
        if PROBED {
            let _g = SITE.enter_preserving_as(f);
            acc = acc.wrapping_add(context_work(kind, i, data));
        } else {
            acc = acc.wrapping_add(context_work(kind, i, data));
        }
    }
    std::hint::black_box(acc);
    clock::now().saturating_sub(t0)
}

/// The cost of a register-preserving probe pair inside loops of different
/// kinds of work ([`context_work`]): for each kind, the median over rounds
/// of the loop's time with a pair around every iteration minus its time
/// without, per iteration. Returns the cheapest and the dearest kind's as
/// `PairInContextMin` and `PairInContextMax`: how far the cost of a probe
/// in a program can stray from its calibration, for the uncertainty of a
/// compensation. Takes a few milliseconds.
pub fn measure_context(mode: Mode) -> Vec<Calibration> {
    let (t0, m0) = clock::sample();
    let mut data = [0.5f64; 2048];
    let mut costs = [0.0f64; CONTEXTS];
    let measured = on_scratch(mode, || {
        for (kind, cost) in costs.iter_mut().enumerate() {
            let (mut plain, mut probed) = (Vec::new(), Vec::new());
            // One untimed round of each, then alternating rounds.
            context_loop::<false>(kind, &mut data);
            context_loop::<true>(kind, &mut data);
            for _ in 0..CONTEXT_ROUNDS {
                plain.push(context_loop::<false>(kind, &mut data) as f64);
                probed.push(context_loop::<true>(kind, &mut data) as f64);
            }
            *cost = (median(&mut probed) - median(&mut plain)) / CONTEXT_ITERATIONS as f64;
        }
    });
    if measured.is_none() {
        return Vec::new();
    }
    let (t1, m1) = clock::sample();
    let ns_per_tick = ns_per_tick_over((t0, m0), (t1, m1));
    let ns: Vec<f64> = costs.iter().map(|c| c.max(0.0) * ns_per_tick).collect();
    let lo = ns.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ns.iter().copied().fold(0.0, f64::max);
    in_context(
        mode,
        (t0, t1),
        &[(Probe::PairInContextMin, lo), (Probe::PairInContextMax, hi)],
    )
}

/// Calibrations of context loops timed between ticks `t0` and `t1`: one
/// figure each, no spread.
fn in_context(mode: Mode, (t0, t1): (u64, u64), figures: &[(Probe, f64)]) -> Vec<Calibration> {
    figures
        .iter()
        .map(|&(probe, v)| Calibration {
            probe,
            mode,
            mean_ns: v,
            sd_ns: 0.0,
            min_ns: v,
            samples: CONTEXT_ROUNDS as u32,
            tick: t0 + t1.saturating_sub(t0) / 2,
        })
        .collect()
}

/// Ticks of one context loop of kind `kind` whose every iteration passes
/// its work's result through `f` (so that the call lies in the loop's
/// chain of work, as a program's calls lie in its own).
#[inline(never)]
fn context_loop_calling(kind: usize, data: &mut [f64; 2048], f: extern "C" fn(u32) -> u32) -> u64 {
    let f = std::hint::black_box(f);
    let t0 = clock::now();
    let mut acc = 0u64;
    for i in 0..CONTEXT_ITERATIONS {
        let i = std::hint::black_box(i) ^ acc as usize;
        acc = acc.wrapping_add(f(context_work(kind, i, data) as u32) as u64);
    }
    std::hint::black_box(acc);
    clock::now().saturating_sub(t0)
}

/// The cost of a call of a function built with `-finstrument-functions`
/// inside loops of different kinds of work ([`context_work`]), with hooks
/// that record nothing and with hooks that record: for each kind, the
/// median over rounds of the loop calling the instrumented function less
/// the loop calling it built plainly, per iteration. Returns the cheapest
/// and the dearest kind's as `HookSkippedInContextMin`/`Max` and
/// `HookPairInContextMin`/`Max` (nothing without the interposition
/// library's hooks, or where they cannot run now). Takes a few
/// milliseconds.
pub fn measure_hook_context(mode: Mode) -> Vec<Calibration> {
    let Some(h) = C_ENTRY.get().and_then(|e| e.hooks).filter(|h| (h.ready)()) else {
        return Vec::new();
    };
    let (t0, m0) = clock::sample();
    let mut data = [0.5f64; 2048];
    // Per kind: the hooks' cost in place, ticks per iteration.
    let mut in_place = |f: extern "C" fn(u32) -> u32| {
        let mut costs = [0.0f64; CONTEXTS];
        for (kind, cost) in costs.iter_mut().enumerate() {
            let (mut plain, mut hooked) = (Vec::new(), Vec::new());
            context_loop_calling(kind, &mut data, h.plain);
            context_loop_calling(kind, &mut data, f);
            for _ in 0..CONTEXT_ROUNDS {
                plain.push(context_loop_calling(kind, &mut data, h.plain) as f64);
                hooked.push(context_loop_calling(kind, &mut data, f) as f64);
            }
            *cost = (median(&mut hooked) - median(&mut plain)) / CONTEXT_ITERATIONS as f64;
        }
        costs
    };
    let pending = (h.swap_skipped)(0);
    let skipped = in_place(h.skipped);
    (h.swap_skipped)(pending);
    let recorded = on_scratch(mode, || in_place(h.recorded));
    let (t1, m1) = clock::sample();
    let ns_per_tick = ns_per_tick_over((t0, m0), (t1, m1));
    let range = |costs: &[f64; CONTEXTS]| {
        let ns = costs.iter().map(|c| c.max(0.0) * ns_per_tick);
        (
            ns.clone().fold(f64::INFINITY, f64::min),
            ns.fold(0.0, f64::max),
        )
    };
    let (lo, hi) = range(&skipped);
    let mut figures = vec![
        (Probe::HookSkippedInContextMin, lo),
        (Probe::HookSkippedInContextMax, hi),
    ];
    if let Some(recorded) = recorded {
        let (lo, hi) = range(&recorded);
        figures.push((Probe::HookPairInContextMin, lo));
        figures.push((Probe::HookPairInContextMax, hi));
    }
    in_context(mode, (t0, t1), &figures)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Calls the register-preserving trampoline `f` with `id` in edi, as the C
/// entry points' callers do; its result.
#[inline(always)]
fn call_preserving(f: unsafe extern "C" fn(), id: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let out: u32;
        // Safety: `f` preserves every register but eax and realigns the
        // stack; the red zone is stepped over.
        unsafe {
            std::arch::asm!(
                "sub rsp, 128",
                "call {f}",
                "add rsp, 128",
                f = in(reg) f,
                in("edi") id,
                lateout("eax") out,
            );
        }
        out as u64
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (f, id);
        0
    }
}

/// Measures the probes again now, if this process is measuring, and
/// records the result: compensation takes each event's probe costs from
/// the calibration nearest in time, so a long run that calls this at quiet
/// points (between phases or repetitions) follows a machine whose speed
/// changes. The calling thread records the time spent here as the
/// runtime's own work, which compensation removes. Takes about a
/// millisecond.
pub fn now() {
    let mode = crate::process::mode();
    if mode == Mode::Off {
        return;
    }
    crate::failsafe::contained(|| {
        crate::events::record(EventKind::FlushBegin);
        let defs: Vec<_> = measure(mode, 8).iter().map(|c| c.to_def()).collect();
        crate::process::write_defs(&defs);
        crate::events::record(EventKind::FlushEnd);
    });
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
    let ns_per_tick = ns_per_tick_over((t0, m0), (t1, m1));
    best as f64 * ns_per_tick
}

/// Nanoseconds per tick between two clock samples ([`clock::sample`]),
/// 1 if the samples cannot tell.
fn ns_per_tick_over((t0, m0): (u64, u64), (t1, m1): (u64, u64)) -> f64 {
    if t1 > t0 && m1 > m0 {
        (m1 - m0) as f64 / (t1 - t0) as f64
    } else {
        1.0
    }
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

/// Selects the clock as a measurement would (for calibration outside
/// one): the TSC where invariant, its reads fenced if `fenced`.
pub fn use_clock(fenced: bool) {
    clock::select(true, fenced);
}
