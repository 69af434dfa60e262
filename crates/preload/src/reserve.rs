//! The library's memory allocator: the system's, with an emergency reserve.
//!
//! Everything Rust allocates in this library goes through it. When the
//! system refuses (a tight `ulimit -v`, an exhausted machine), the request
//! is served from a fixed reserve instead of aborting the program, and the
//! runtime is told that memory is short: measurement stops at its next
//! chance, with one message, and the program goes on. The reserve is only
//! ever handed out, never reused; it is there to let the runtime stop
//! cleanly, not to keep measuring.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering::*};

/// Bytes of the reserve.
const RESERVE: usize = 256 << 10;

#[repr(C, align(64))]
struct Reserve(UnsafeCell<[u8; RESERVE]>);

// Safety: disjoint parts of the reserve are handed out by an atomic bump.
unsafe impl Sync for Reserve {}

static BYTES: Reserve = Reserve(UnsafeCell::new([0; RESERVE]));
static USED: AtomicUsize = AtomicUsize::new(0);

/// The system's allocator, backed by the reserve.
pub struct WithReserve;

fn base() -> usize {
    BYTES.0.get() as usize
}

fn in_reserve(p: *mut u8) -> bool {
    let a = p as usize;
    a >= base() && a < base() + RESERVE
}

/// `layout` from the reserve, or null when it is used up.
fn from_reserve(layout: Layout) -> *mut u8 {
    parallax::failsafe::note_memory_short();
    let mut used = USED.load(Relaxed);
    loop {
        let start = (base() + used).next_multiple_of(layout.align()) - base();
        let Some(end) = start.checked_add(layout.size()).filter(|&e| e <= RESERVE) else {
            return std::ptr::null_mut();
        };
        match USED.compare_exchange_weak(used, end, AcqRel, Relaxed) {
            // Safety: `start..end` lies within the reserve and is ours.
            Ok(_) => return unsafe { (BYTES.0.get() as *mut u8).add(start) },
            Err(u) => used = u,
        }
    }
}

// Safety: every pointer handed out is valid for its layout: from the
// system's allocator, or from a part of the reserve given to nobody else
// (zeroed, since the reserve is never reused).
unsafe impl GlobalAlloc for WithReserve {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Safety: as the caller promises.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            from_reserve(layout)
        } else {
            p
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // Safety: as the caller promises.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            from_reserve(layout)
        } else {
            p
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if !in_reserve(p) {
            // Safety: `p` came from the system's allocator with `layout`.
            unsafe { System.dealloc(p, layout) };
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_reserve(p) {
            // Safety: as the caller promises.
            let q = unsafe { System.realloc(p, layout, new_size) };
            if !q.is_null() {
                return q;
            }
        }
        let Ok(new) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        // Safety: a valid layout.
        let q = unsafe { self.alloc(new) };
        if !q.is_null() {
            // Safety: both blocks are valid for the bytes copied, and
            // distinct; the old one is released after the copy.
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
        }
        q
    }
}
