//! What happens when the runtime itself fails: the measured program must
//! not notice. A panic is contained where the program calls into the
//! runtime and ends the measurement; a shortage (memory, files) leaves a
//! thread or the process unmeasured; and each cause is told once on
//! stderr, however often it happens, with a write that can neither fail
//! the program nor raise SIGPIPE in it.

use std::fmt::Write as _;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};

/// Causes of trouble, each told at most once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Cause {
    /// A configuration value makes no sense.
    Config = 1,
    /// Measurement could not start (directory, files).
    Start = 2,
    /// A thread's files could not be created.
    Files = 4,
    /// Memory ran short.
    Memory = 8,
    /// A panic inside the runtime.
    Internal = 16,
    /// Events could not be written.
    Write = 32,
}

static TOLD: AtomicU32 = AtomicU32::new(0);

/// Set by an allocator that had to serve the runtime from its reserve
/// (see [`memory_short`]).
static MEMORY_SHORT: AtomicBool = AtomicBool::new(false);

/// Says `msg` on stderr as `parallax: MSG`, unless `cause` was told
/// before. Returns whether it was said.
pub fn tell_once(cause: Cause, msg: std::fmt::Arguments<'_>) -> bool {
    if TOLD.fetch_or(cause as u32, AcqRel) & cause as u32 != 0 {
        return false;
    }
    say(msg);
    true
}

/// Writes one line on stderr without allocating, with SIGPIPE held off (a
/// closed pipe must not kill the program) and without failing.
fn say(msg: std::fmt::Arguments<'_>) {
    let mut line = Line::default();
    let _ = write!(line, "parallax: {msg}");
    let bytes = line.finish();
    // Safety: plain signal-mask and write calls on local data.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        libc::sigpending(&mut pending);
        let was_pending = libc::sigismember(&pending, libc::SIGPIPE) == 1;
        let mut at = 0;
        while at < bytes.len() {
            let w = libc::write(
                2,
                bytes[at..].as_ptr() as *const libc::c_void,
                bytes.len() - at,
            );
            if w > 0 {
                at += w as usize;
            } else if w < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            } else {
                break;
            }
        }
        if !was_pending {
            // Take back the SIGPIPE our write raised, if it raised one.
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigpending(&mut pending);
            if libc::sigismember(&pending, libc::SIGPIPE) == 1 {
                libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero);
            }
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
}

/// A line of text in a fixed buffer; what does not fit is cut, and the
/// cut is marked with `...`.
struct Line {
    buf: [u8; LINE],
    len: usize,
    cut: bool,
}

const LINE: usize = 512;
/// Kept free for `...` and the newline.
const TAIL: usize = 4;

impl Default for Line {
    fn default() -> Line {
        Line {
            buf: [0; LINE],
            len: 0,
            cut: false,
        }
    }
}

impl Line {
    /// The line with its ending.
    fn finish(&mut self) -> &[u8] {
        if self.cut {
            self.buf[self.len..self.len + 3].copy_from_slice(b"...");
            self.len += 3;
        }
        self.buf[self.len] = b'\n';
        &self.buf[..self.len + 1]
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.cut {
            return Ok(());
        }
        let room = LINE - TAIL - self.len;
        let mut n = s.len().min(room);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        self.cut = n < s.len();
        Ok(())
    }
}

/// Runs `f` where the program calls into the runtime: a panic inside is
/// caught, ends the measurement and is told once; `None` then.
#[inline(always)]
pub fn contained<R>(f: impl FnOnce() -> R) -> Option<R> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            panicked(payload);
            None
        }
    }
}

#[cold]
#[inline(never)]
fn panicked(payload: Box<dyn std::any::Any + Send>) {
    crate::process::stop();
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    tell_once(
        Cause::Internal,
        format_args!("internal error ({what}); measurement is off"),
    );
    // The payload may own memory; dropping it could itself fail.
    std::mem::forget(payload);
}

/// Locks `m` if it frees within `tries` attempts (yielding between them),
/// for code that may run where its holder is the interrupted code of the
/// calling thread (a hook in a signal handler): waiting would never end.
/// A poisoned lock is taken as it is.
pub fn lock_briefly<T>(
    m: &std::sync::Mutex<T>,
    tries: u32,
) -> Option<std::sync::MutexGuard<'_, T>> {
    for _ in 0..tries {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    None
}

/// Tells the runtime that an allocator served it from an emergency
/// reserve: memory is short, and measurement stops at the next chance
/// (the interposition library's allocator calls this; it allocates
/// nothing).
pub fn note_memory_short() {
    MEMORY_SHORT.store(true, Release);
}

/// Address space the runtime leaves to the program under a limit on it
/// (`ulimit -v`): it never takes the last of it, which the program may
/// need later.
pub const LEAVE_TO_PROGRAM: u64 = 64 << 20;

/// Whether the runtime may take `bytes` more of the address space: always
/// without a limit (a refused mapping is handled where it is made); under
/// one, only if [`LEAVE_TO_PROGRAM`] stays free after it.
pub(crate) fn may_take(bytes: usize) -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // Safety: getrlimit writes the struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return true;
    }
    let Some(used) = address_space_used() else {
        return false;
    };
    used.saturating_add(bytes as u64)
        .saturating_add(LEAVE_TO_PROGRAM)
        <= lim.rlim_cur
}

/// Bytes of address space the process uses (`/proc/self/statm`), read
/// without allocating.
fn address_space_used() -> Option<u64> {
    let mut buf = [0u8; 128];
    // Safety: plain file calls on a NUL-terminated path and a local buffer.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/statm".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len());
        libc::close(fd);
        n
    };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    let pages = text
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0u64, |v, &d| {
            v.saturating_mul(10).saturating_add((d - b'0') as u64)
        });
    // Safety: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some(pages.saturating_mul(page))
}

/// Whether memory ran short (see [`note_memory_short`]).
pub fn memory_short() -> bool {
    MEMORY_SHORT.load(Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_on_a_character() {
        let mut l = Line::default();
        let _ = write!(l, "{}", "é".repeat(600));
        let text = std::str::from_utf8(l.finish()).unwrap();
        assert!(text.ends_with("é...\n"), "{text}");
        assert!(text.len() <= LINE);
        let mut l = Line::default();
        let _ = write!(l, "short");
        assert_eq!(l.finish(), b"short\n");
    }
}
