//! Signals to `parallax run` while its program runs: SIGINT, SIGTERM,
//! SIGHUP and SIGQUIT go on to the program, and `parallax run` stays to
//! finish the manifest and the run record once the program has ended.
//!
//! A signal that a process sent (`kill`, an MPI launcher ending a job) is
//! forwarded. One the terminal sent (Ctrl-C, a hang-up) is not: the
//! terminal signals its whole foreground process group, the program
//! included, and a second copy would be one too many. A signal ignored
//! when `parallax run` started (`nohup`) stays ignored, by the program too.

use std::sync::atomic::{AtomicI32, Ordering};

/// The program's pid while it runs, else 0.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The last of the signals below that arrived, else 0.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    RECEIVED.store(sig, Ordering::SeqCst);
    // si_code <= 0: sent by a process (SI_USER, SI_QUEUE, SI_TKILL); the
    // kernel's (a terminal's) are positive.
    // Safety: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_process = info.is_null() || unsafe { (*info).si_code } <= 0;
    let child = CHILD.load(Ordering::SeqCst);
    if from_process && child > 0 {
        // Safety: kill is async-signal-safe.
        unsafe { libc::kill(child, sig) };
    }
}

/// Catches the signals (those not ignored) from now on.
pub fn catch() {
    for sig in SIGNALS {
        // Safety: a zeroed sigaction is a valid start; the handler only
        // touches atomics and calls kill.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Forwards the signals to `pid` from now on, and the one that arrived
/// before it started, if any.
pub fn forward_to(pid: u32) {
    let pid = pid as i32;
    CHILD.store(pid, Ordering::SeqCst);
    let early = RECEIVED.load(Ordering::SeqCst);
    if early != 0 {
        // Safety: kill with a pid of our own child.
        unsafe { libc::kill(pid, early) };
    }
}

/// The program has been waited for: its pid may be reused, so nothing
/// more is forwarded.
pub fn stop_forwarding() {
    CHILD.store(0, Ordering::SeqCst);
}

/// The signal that asked `parallax run` to end, if one came: the rest of
/// its work is then kept short (an MPI launcher may follow with SIGKILL).
pub fn received() -> Option<i32> {
    Some(RECEIVED.load(Ordering::SeqCst)).filter(|&s| s != 0)
}
