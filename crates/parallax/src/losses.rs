//! What a measurement could not record, counted without locks or
//! allocation (also in signal handlers) and written with the experiment.

use std::sync::atomic::{AtomicU64, Ordering::*};

use parallax_model::defs::Def;

use crate::failsafe::{self, Cause};
use crate::process;

/// What a measurement could not record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loss {
    /// A thread's files could not be made.
    Files = 1,
    /// Memory was short for a thread.
    Memory = 2,
    /// Events could not be written.
    Write = 3,
}

/// Losses by (kind, error number), counted without locks or allocation
/// (also in signal handlers): key (`kind << 32 | errno`, 0 for a free
/// slot), then threads, events, bytes.
const LOSSES: usize = 8;
static LOSS: [[AtomicU64; 4]; LOSSES] = [const { [const { AtomicU64::new(0) }; 4] }; LOSSES];

/// Counts `threads` threads, and `events` events of `bytes` bytes, lost to
/// `loss` (error number `errno`); returns the slot's key, if a slot was
/// free.
pub(crate) fn note_loss(
    loss: Loss,
    errno: i32,
    threads: u64,
    events: u64,
    bytes: u64,
) -> Option<u64> {
    let key = (loss as u64) << 32 | errno as u32 as u64;
    for [k, counts @ ..] in &LOSS {
        let found = match k.compare_exchange(0, key, AcqRel, Acquire) {
            Ok(_) => true,
            Err(old) => old == key,
        };
        if found {
            for (c, n) in counts.iter().zip([threads, events, bytes]) {
                c.fetch_add(n, Relaxed);
            }
            return Some(key);
        }
    }
    None
}

/// The `Unrecorded` definitions of the losses counted (those of `only`,
/// if given).
pub(crate) fn loss_defs(only: Option<u64>) -> Vec<Def> {
    LOSS.iter()
        .map(|slot| slot.each_ref().map(|a| a.load(Acquire)))
        .filter(|&[k, ..]| k != 0 && only.is_none_or(|o| o == k))
        .map(|[k, threads, events, bytes]| Def::Unrecorded {
            reason: loss_reason(k),
            threads,
            events,
            bytes,
        })
        .collect()
}

fn loss_reason(key: u64) -> String {
    let errno = key as u32 as i32;
    let why = std::io::Error::from_raw_os_error(errno);
    match key >> 32 {
        _ if errno == libc::EFBIG => "the file size limit (ulimit -f) was reached".into(),
        1 => format!("cannot make files in the experiment directory: {why}"),
        2 => "not enough memory (or a memory limit, ulimit -v, left too little room)".into(),
        _ => format!("cannot write to the experiment directory: {why}"),
    }
}

/// A thread is not traced (or not measured) for `loss`: counted in the
/// experiment at once, and told once.
pub(crate) fn thread_not_measured(loss: Loss, errno: i32) {
    let key = note_loss(loss, errno, 1, 0, 0);
    process::write_defs(&loss_defs(key));
    let cause = if loss == Loss::Memory {
        Cause::Memory
    } else {
        Cause::Files
    };
    let why = loss_reason((loss as u64) << 32 | errno as u32 as u64);
    failsafe::tell_once(
        cause,
        format_args!(
            "a thread is not traced: {why}; the experiment counts such threads (the program goes on)"
        ),
    );
}

/// Events could not be written (error number `errno`): told once.
pub(crate) fn tell_write_loss(errno: i32) {
    let why = loss_reason((Loss::Write as u64) << 32 | errno as u32 as u64);
    failsafe::tell_once(
        Cause::Write,
        format_args!(
            "events are lost: {why}; the experiment counts what is lost (the program goes on)"
        ),
    );
}

/// Forgets the losses counted (a new measurement).
pub(crate) fn reset() {
    for a in LOSS.iter().flatten() {
        a.store(0, Relaxed);
    }
}
