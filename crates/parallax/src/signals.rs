//! Flushing on fatal signals.
//!
//! On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT the handler writes every
//! thread's recorded events (and, as far as a stack buffer allows, its
//! profile), then puts back the handler that was there before and lets the
//! signal take its course. SIGTERM and SIGINT are handled the same way, but
//! only where the program left them at their default. This is best effort:
//! a thread that was in the middle of writing its own buffer is skipped, and
//! events recorded after the signal are lost (FORMAT.md, "What a crash can
//! lose").

use std::sync::atomic::{AtomicBool, Ordering::*};

const FATAL: [i32; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];
const POLITE: [i32; 2] = [libc::SIGTERM, libc::SIGINT];
const NSIG: usize = 65;

static mut OLD: [libc::sigaction; NSIG] = [const { unsafe { std::mem::zeroed() } }; NSIG];
static FLUSHED: AtomicBool = AtomicBool::new(false);

/// Takes the one flush of a dying process: true for the first caller (a
/// fatal signal's handler, or a process ending without `exit`).
pub(crate) fn claim_flush() -> bool {
    !FLUSHED.swap(true, AcqRel)
}

/// Installs the handlers (once per process).
pub(crate) fn install() {
    for sig in FATAL {
        set(sig, false);
    }
    for sig in POLITE {
        set(sig, true);
    }
}

fn set(sig: i32, only_if_default: bool) {
    // Safety: sigaction with valid pointers; OLD is written here, before the
    // handler can run, and only read by the handler afterwards.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
            return;
        }
        if only_if_default && old.sa_sigaction != libc::SIG_DFL {
            return;
        }
        if old.sa_sigaction == libc::SIG_IGN {
            return;
        }
        let slot = std::ptr::addr_of_mut!(OLD[sig as usize]);
        *slot = old;
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = handler as *const () as usize;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut new.sa_mask);
        libc::sigaction(sig, &new, std::ptr::null_mut());
    }
}

extern "C" fn handler(sig: i32, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if claim_flush() {
        crate::failsafe::contained(|| crate::states::close_all(false, true));
    }
    // Safety: restores the previous disposition recorded by `set`, then
    // either hands the signal to the previous handler or re-raises it.
    unsafe {
        let old = *std::ptr::addr_of!(OLD[sig as usize]);
        libc::sigaction(sig, &old, std::ptr::null_mut());
        let h = old.sa_sigaction;
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            if old.sa_flags & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(h);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(i32) = std::mem::transmute(h);
                f(sig);
            }
            return;
        }
        // Default action: a fault re-executes and now kills the process; other
        // signals are raised again.
        let fault = matches!(
            sig,
            libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE
        );
        let sent = info.is_null() || (*info).si_code <= 0;
        if !fault || sent {
            libc::raise(sig);
        }
    }
}
