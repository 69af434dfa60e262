//! What a call whose compiler hooks record nothing (a throttled or
//! filtered function, a frame beyond the depth limit) costs the program,
//! timed in the run itself.
//!
//! Such a call costs a few nanoseconds alone, but in place it costs what
//! the processor cannot overlap with the program's own work, anywhere
//! from nothing to more than alone: no calibration outside the program
//! knows. So the hooks time it where it is paid. A thread's calls that
//! record nothing are grouped in blocks of [`BLOCK`]; in some blocks the
//! hooks do their work twice (the second time on a decoy shadow, the same
//! instructions), and the difference in the thread's CPU time between a
//! block done twice and its neighbour done once, per call, is what the
//! work costs there. The median over pairs, with the calls it covers, is
//! written as `Def::HookSkippedInRun` ([`parallax::events::skipped_cost`]); compensation removes it per call,
//! the decoys' work included.

use std::cell::RefCell;

/// Calls that record nothing per block.
const BLOCK: u64 = 1 << 16;
/// Blocks per round: blocks 1 and 2 are a timed pair (the work once, then
/// twice), blocks 5 and 6 another (twice, then once), so that a steady
/// change of the machine's speed cancels out.
const ROUND: u8 = 8;
/// The phase before the thread's first block.
const IDLE: u8 = u8::MAX;
/// Pairs a sample needs, and holds at most.
const MIN_PAIRS: usize = 16;
const MAX_PAIRS: usize = 64;
/// After its first, a thread says a sample at most this often (ns) unless
/// it has [`MAX_PAIRS`].
const EVERY_NS: u64 = 50_000_000;

/// A thread's blocks and the sample they make.
struct Blocks {
    /// The current block's place in its round, or [`IDLE`].
    phase: u8,
    /// Set while calibration runs on this thread: its calls are not timed.
    paused: bool,
    /// Thread CPU time at the current block's start, ns.
    start: u64,
    /// CPU time of the first block of the current pair, ns.
    first: u64,
    /// Per pair: what a call cost more done twice, picoseconds.
    diffs: [f32; MAX_PAIRS],
    pairs: usize,
    /// The calls of the sample's blocks, and those of its blocks done twice.
    calls: u64,
    decoys: u64,
    /// When the thread said its last sample (monotonic ns; 0: none yet).
    said: u64,
    /// The thread's number, learnt at its first block (at the process's
    /// end the runtime may no longer say it).
    thread: Option<u32>,
}

thread_local! {
    static BLOCKS: RefCell<Blocks> = const {
        RefCell::new(Blocks {
            phase: IDLE,
            paused: false,
            start: 0,
            first: 0,
            diffs: [0.0; MAX_PAIRS],
            pairs: 0,
            calls: 0,
            decoys: 0,
            said: 0,
            thread: None,
        })
    };
}

fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `t` is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The time of a block in which the thread synchronized.
const UNTIMED: u64 = u64::MAX;

/// The end of a block, when the thread's count of calls that recorded
/// nothing reached `*mark` (now `skipped`; `dirty` if the thread
/// synchronized meanwhile): times it, sets the next block's end and
/// whether the hooks do their work twice in it.
pub(crate) fn block_end(skipped: u64, dirty: bool, mark: &mut u64, twice: &mut u64) {
    *mark = skipped.saturating_add(BLOCK);
    let now = thread_cpu_ns();
    let _ = BLOCKS.try_with(|b| {
        let Ok(mut b) = b.try_borrow_mut() else {
            return;
        };
        if b.paused {
            *mark = u64::MAX;
            *twice = 0;
            return;
        }
        let ended = b.phase;
        let took = now.saturating_sub(b.start);
        b.start = now;
        if ended == IDLE {
            if b.thread.is_none() {
                b.thread = parallax::events::thread_number();
            }
            b.phase = 0;
            *twice = 0;
            return;
        }
        // A block in which the thread synchronized is not timed: its time
        // holds whatever waiting came with it.
        let took = if dirty { UNTIMED } else { took };
        match ended {
            1 => b.first = took,
            // Not doubled after a block that synchronized: no pair.
            5 => b.first = if *twice != 0 { took } else { UNTIMED },
            2 | 6 if took != UNTIMED && b.first != UNTIMED => {
                let (once, double) = if ended == 2 {
                    (b.first, took)
                } else {
                    (took, b.first)
                };
                if b.pairs < MAX_PAIRS {
                    let i = b.pairs;
                    b.diffs[i] = ((double as f64 - once as f64) * 1000.0 / BLOCK as f64) as f32;
                    b.pairs += 1;
                }
            }
            _ => {}
        }
        b.calls += BLOCK;
        if *twice != 0 {
            b.decoys += BLOCK;
        }
        b.phase = (ended + 1) % ROUND;
        // The work is done twice only in a pair that can still be timed:
        // after a clean first block, or (for a pair that starts doubled)
        // after a clean block, so that a thread that synchronizes in every
        // block pays nothing for the timing.
        *twice = match b.phase {
            2 => b.first != UNTIMED,
            5 => !dirty,
            _ => false,
        } as u64;
        if b.pairs >= MAX_PAIRS
            || (b.pairs >= MIN_PAIRS
                && (b.said == 0 || parallax::clock::mono_ns().saturating_sub(b.said) >= EVERY_NS))
        {
            say_sample(&mut b);
        }
    });
}

/// Stops timing this thread's blocks while calibration runs its calls, or
/// starts again (called in pairs).
pub(crate) fn pause(mark: &mut u64, twice: &mut u64) {
    let _ = BLOCKS.try_with(|b| {
        let Ok(mut b) = b.try_borrow_mut() else {
            return;
        };
        b.paused = !b.paused;
        b.phase = IDLE;
        *twice = 0;
        *mark = if b.paused { u64::MAX } else { 0 };
    });
}

/// Says the calling thread's sample so far (at its end, or at the
/// process's).
pub(crate) fn say() {
    let _ = BLOCKS.try_with(|b| {
        if let Ok(mut b) = b.try_borrow_mut() {
            say_sample(&mut b);
        }
    });
}

fn say_sample(b: &mut Blocks) {
    let pairs = std::mem::take(&mut b.pairs);
    let (calls, decoys) = (std::mem::take(&mut b.calls), std::mem::take(&mut b.decoys));
    if pairs == 0 {
        return;
    }
    b.said = parallax::clock::mono_ns().max(1);
    let d = &mut b.diffs[..pairs];
    d.sort_by(f32::total_cmp);
    let median = if pairs % 2 == 1 {
        d[pairs / 2]
    } else {
        (d[pairs / 2 - 1] + d[pairs / 2]) / 2.0
    };
    let Some(thread) = b.thread.or_else(parallax::events::thread_number) else {
        return;
    };
    parallax::events::skipped_cost(
        thread,
        parallax::clock::now(),
        calls,
        decoys,
        median.max(0.0) as u64,
    );
}
