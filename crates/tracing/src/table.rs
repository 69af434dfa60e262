//! Region ids by callsite: a table read without a lock on every span.
//!
//! Open addressing over the callsite's metadata address, written only under
//! a lock (once per callsite), read with one acquire load per probe.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::*};
use std::sync::Mutex;

use tracing_core::Metadata;

const SLOTS: usize = 1 << 12;
/// Callsites beyond this are looked up under the lock (a program with more
/// than 3,072 span and event callsites pays a little more for the rest).
const FULL: usize = SLOTS * 3 / 4;

struct Slot {
    key: AtomicUsize,
    region: AtomicU32,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        key: AtomicUsize::new(0),
        region: AtomicU32::new(0),
    }
}; SLOTS];
static USED: AtomicUsize = AtomicUsize::new(0);
static OVERFLOW: Mutex<Vec<(usize, u32)>> = Mutex::new(Vec::new());
static WRITE: Mutex<()> = Mutex::new(());

#[inline(always)]
fn home(key: usize) -> usize {
    ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize
}

/// The region of callsite `meta`, registered by `register` on first use.
/// A callsite seen while Parallax did not measure (`register` gave 0) is
/// asked again next time.
#[inline]
pub fn region(meta: &'static Metadata<'static>, register: impl FnOnce() -> u32) -> u32 {
    let key = meta as *const Metadata<'static> as usize;
    let mut i = home(key);
    loop {
        let s = &TABLE[i];
        let k = s.key.load(Acquire);
        if k == key {
            return s.region.load(Relaxed);
        }
        if k == 0 {
            break;
        }
        i = (i + 1) & (SLOTS - 1);
    }
    insert(key, register)
}

#[cold]
#[inline(never)]
fn insert(key: usize, register: impl FnOnce() -> u32) -> u32 {
    let _g = WRITE.lock().unwrap_or_else(|e| e.into_inner());
    let mut overflow = OVERFLOW.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, r)) = overflow.iter().find(|(k, _)| *k == key) {
        return r;
    }
    // Another thread may have inserted it since the lock-free look.
    let mut i = home(key);
    while TABLE[i].key.load(Acquire) != 0 {
        if TABLE[i].key.load(Relaxed) == key {
            return TABLE[i].region.load(Relaxed);
        }
        i = (i + 1) & (SLOTS - 1);
    }
    let region = register();
    if region == 0 {
        return 0;
    }
    if USED.load(Relaxed) >= FULL {
        overflow.push((key, region));
        return region;
    }
    USED.fetch_add(1, Relaxed);
    TABLE[i].region.store(region, Relaxed);
    TABLE[i].key.store(key, Release);
    region
}
