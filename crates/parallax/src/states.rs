//! The pool of thread states: a state for each thread that records,
//! set up with its files for the running measurement, reused when its
//! thread ends, and closed and written out together at the end.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering::*};

use parallax_model::defs::Def;

use crate::buffer::Buffer;
use crate::failsafe;
use crate::files;
use crate::losses::{self, Loss};
use crate::process::{self, PROFILE, TRACE};
use crate::thread::{self, Local, ThreadState};
use parallax_model::file;

const POOL: usize = 4096;
static STATES: [AtomicPtr<ThreadState>; POOL] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; POOL];
static STATE_COUNT: AtomicU32 = AtomicU32::new(0);

/// Why a thread has no state.
pub(crate) enum NoState {
    /// Measurement is not running.
    NotRunning,
    /// Memory is short: the thread stays unmeasured.
    Memory,
}

/// A state for the calling thread, set up for the current measurement.
/// A thread whose files cannot be made is not traced (it is still
/// profiled, if the mode says so), and counted.
pub(crate) fn new_thread_state() -> Result<*mut ThreadState, NoState> {
    if failsafe::memory_short() {
        process::stop_for_memory();
        return Err(NoState::Memory);
    }
    let (nodes, depth) = {
        let guard = process::RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        let c = &guard.as_ref().ok_or(NoState::NotRunning)?.config;
        (c.profile_nodes, c.max_depth)
    };
    let p = match thread::claim(&STATES, &STATE_COUNT) {
        Some(p) => p,
        None => {
            let made = failsafe::may_take(thread::STATE_BYTES)
                .then(|| ThreadState::try_new(nodes, depth))
                .flatten();
            let Some(st) = made else {
                losses::thread_not_measured(Loss::Memory, libc::ENOMEM);
                return Err(NoState::Memory);
            };
            let p = st.into_raw();
            let i = STATE_COUNT.fetch_add(1, AcqRel) as usize;
            if i < POOL {
                STATES[i].store(p, Release);
            }
            p
        }
    };
    // Safety: claimed for this thread, which owns it from now on.
    let mut st = unsafe { (*p).local_unchecked() };
    if open_events(&mut st).is_err() {
        st.close();
    }
    Ok(p)
}

/// Opens the state's location for the current measurement: its event
/// file and its buffer (from a spill file, else from memory) when tracing.
fn open_events(st: &mut Local<'_>) -> Result<(), NoState> {
    let bits = process::MODE_BITS.load(Acquire);
    let (trace, profile) = (bits & TRACE != 0, bits & PROFILE != 0);
    let rank = process::RANK.load(Acquire);
    let mut guard = process::RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let r = guard.as_mut().ok_or(NoState::NotRunning)?;
    let thread = process::NEXT_THREAD.fetch_add(1, AcqRel);
    let mut events = None;
    if trace {
        match trace_files(st, rank, thread, r.config.buffer_bytes, &mut r.spares) {
            Ok(name) => events = Some(name),
            Err((loss, errno)) => {
                drop(guard);
                losses::thread_not_measured(loss, errno);
                // Profiled all the same, if the mode says so; else the
                // thread records nothing in this measurement.
                st.reset_for(thread, process::epoch(), None, false, profile);
                if profile {
                    define_location(thread);
                }
                return Ok(());
            }
        }
    }
    drop(guard);
    st.reset_for(thread, process::epoch(), events, trace, profile);
    define_location(thread);
    Ok(())
}

/// Defines location `thread`, the calling thread.
fn define_location(thread: u32) {
    // Safety: gettid has no preconditions.
    let os_tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    let name = thread_name(os_tid);
    process::write_defs(&[Def::Location {
        thread,
        name,
        os_tid,
    }]);
}

/// The event file and the buffer of thread `thread`, for the state `st`:
/// the state's own spill file renamed, else a new one, else memory. The
/// event file's name, or what went wrong and the error number.
fn trace_files(
    st: &mut Local<'_>,
    rank: u32,
    thread: u32,
    len: usize,
    spares: &mut Vec<Buffer>,
) -> Result<[u8; files::NAME], (Loss, i32)> {
    let dir = process::dir_fd();
    let name = files::name(b"thread-", thread, b".pxe");
    files::create_in(dir, &name, &thread::event_file_header(rank, thread))
        .map_err(|e| (Loss::Files, e))?;
    // Flushers take the lock before they look at a state's buffer.
    let mut g = st.state().lock();
    let own = g.buffer();
    let mut taken = own.is_spilled() && own.take_over(dir, rank, thread);
    if !taken {
        if let Some(mut b) = spares.pop() {
            if b.len() == len && b.take_over(dir, rank, thread) {
                g.buffer().unlink(dir);
                st.install(&mut g, b);
                taken = true;
            } else {
                b.unlink(dir);
            }
        }
    }
    let mut made = Ok(());
    if !taken && !failsafe::may_take(len + parallax_model::spill::DATA_OFFSET) {
        made = Err(crate::buffer::Refused(libc::ENOMEM));
    } else if !taken {
        match Buffer::spilled(dir, rank, thread, len).or_else(|_| Buffer::anonymous(len)) {
            Ok(buf) => {
                g.buffer().unlink(dir);
                st.install(&mut g, buf);
            }
            Err(e) => made = Err(e),
        }
    }
    drop(g);
    if let Err(e) = made {
        // Safety: a NUL-terminated name in the rank directory.
        unsafe { libc::unlinkat(dir, name.as_ptr() as *const libc::c_char, 0) };
        return Err((Loss::Memory, e.0));
    }
    Ok(name)
}

/// A thread's state was closed by a finished measurement and the thread
/// records again in a new one.
pub(crate) fn reopen_thread_state(st: &mut Local<'_>) {
    if failsafe::memory_short() {
        process::stop_for_memory();
        return;
    }
    if open_events(st).is_err() {
        st.close();
    }
}

/// A thread ended: keep its counters.
pub(crate) fn thread_ended(st: &ThreadState) {
    take_losses(st);
}

/// Moves a closed state's count of events not written to the process's.
fn take_losses(st: &ThreadState) {
    let (lost, errno, events, bytes) = st.take_losses();
    process::LOST_BYTES.fetch_add(lost, Relaxed);
    if bytes > 0 && errno != 0 {
        losses::note_loss(Loss::Write, errno, 0, events, bytes);
    }
}

/// Where profiles are encoded in a signal handler, which may neither
/// allocate nor use much stack (it may run on a small alternate stack).
/// Only the handler that won `signals::FLUSHED` touches it.
static mut CRASH_BUF: [u8; 1 << 20] = [0; 1 << 20];

/// Encodes and writes a state's profile, its visits in progress ended at
/// `close_at`. In a crash, uses a static buffer and writes as much of the
/// tree as fits.
pub(crate) fn write_profile(st: &ThreadState, close_at: Option<u64>, crash: bool) {
    let fd = process::PROFILE_FD.load(Acquire);
    if fd < 0 {
        return;
    }
    let profile = st.profile();
    process::PROFILE_DROPPED.fetch_add(profile.dropped.load(Relaxed), Relaxed);
    let write = |payload: &[u8]| {
        let header = file::block_header(payload);
        let _ = files::write_all(fd, &[&header, payload]);
    };
    if crash {
        // Safety: only the one signal handler that flushes gets here.
        let buf = unsafe { &mut *std::ptr::addr_of_mut!(CRASH_BUF) };
        let n = profile.encode_into(st.thread(), close_at, buf);
        write(&buf[..n]);
    } else {
        let mut buf = Vec::new();
        let len = profile.encoded_len();
        if buf.try_reserve_exact(len).is_err() {
            losses::note_loss(Loss::Memory, libc::ENOMEM, 0, 0, 0);
            return;
        }
        buf.resize(len, 0);
        let n = profile.encode_into(st.thread(), close_at, &mut buf);
        write(&buf[..n]);
    }
}

/// The measurement ended cleanly: every state's spill file goes (their
/// records were written out); the memory stays.
pub(crate) fn remove_spills() {
    let dir = process::dir_fd();
    let n = (STATE_COUNT.load(Acquire) as usize).min(POOL);
    for slot in &STATES[..n] {
        let p = slot.load(Acquire);
        if p.is_null() {
            continue;
        }
        // Safety: states are never freed.
        unsafe { &*p }.remove_spill(dir);
    }
}

/// Closes every live thread state: the calling thread's as its owner,
/// unless `crash` (a signal handler may have interrupted its probe), the
/// others from outside. `wait`: wait for busy writers.
pub(crate) fn close_all(wait: bool, crash: bool) {
    let mine = thread::current();
    let n = (STATE_COUNT.load(Acquire) as usize).min(POOL);
    for slot in &STATES[..n] {
        let p = slot.load(Acquire);
        if p.is_null() {
            continue;
        }
        // Safety: states are never freed.
        let st = unsafe { &*p };
        if !st.in_use_now() {
            continue;
        }
        if p == mine && !crash {
            // Safety: the calling thread's own state, outside its probes.
            unsafe { st.local_unchecked() }.close();
        } else {
            st.close_from_outside(wait, crash);
        }
        take_losses(st);
    }
}

/// In a forked child: every state forgets the parent's files.
pub(crate) fn forget_after_fork() {
    let n = (STATE_COUNT.load(Acquire) as usize).min(POOL);
    for slot in &STATES[..n] {
        let p = slot.load(Acquire);
        if !p.is_null() {
            // Safety: single-threaded child right after fork.
            unsafe { (*p).forget_after_fork() };
        }
    }
}

/// The name of the calling thread (`os_tid`): `main` for the process's
/// first thread, else the name the system knows (which Rust's named
/// threads and `pthread_setname_np` set), empty when it is the one every
/// thread inherits. Read from the system rather than from the standard
/// library, whose thread handle is gone in a thread's last destructors.
fn thread_name(os_tid: u32) -> String {
    // Safety: getpid has no preconditions.
    if os_tid == unsafe { libc::getpid() } as u32 {
        return "main".into();
    }
    let read = |thread: libc::pthread_t| {
        let mut buf = [0u8; 64];
        // Safety: `buf` is writable for its length.
        let r = unsafe {
            libc::pthread_getname_np(thread, buf.as_mut_ptr() as *mut libc::c_char, buf.len())
        };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        (r == 0).then(|| String::from_utf8_lossy(&buf[..end]).into_owned())
    };
    // Safety: pthread_self has no preconditions.
    let own = read(unsafe { libc::pthread_self() }).unwrap_or_default();
    let inherited = std::fs::read("/proc/self/comm").unwrap_or_default();
    let inherited = String::from_utf8_lossy(&inherited);
    if own == inherited.trim_end_matches('\n') {
        LABEL.with(|l| l.take()).unwrap_or_default()
    } else {
        own
    }
}

thread_local! {
    /// What the calling thread is, for the name of its location when the
    /// thread has no name of its own ([`label_thread`]).
    static LABEL: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Names the calling thread's location `label` (`OpenMP thread 2`) if it
/// has none yet and the thread has no name of its own: a runtime that
/// made the thread (an OpenMP team's) knows what it is.
pub fn label_thread(label: &str) {
    // A location is named once, when the thread first records; later
    // labels would only be kept, unused.
    if !thread::current().is_null() {
        return;
    }
    LABEL.with(|l| l.set(Some(label.to_string())));
}
