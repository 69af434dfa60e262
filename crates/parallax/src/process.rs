//! Process-wide measurement state: start-up, the definitions file, the pool
//! of thread states, and the end of measurement (explicit, at exit, or on a
//! fatal signal).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering::*,
};
use std::sync::Mutex;

use parallax_model::defs::{Def, Mode, ProcessInfo};
use parallax_model::experiment::{self, DEFS_FILE, PROFILE_FILE};
use parallax_model::file::{self, FileKind};

use crate::calibrate;
use crate::clock;
use crate::config::{ClockChoice, Config};
use crate::signals;
use crate::thread::{self, ThreadState};

/// Probes read this first: 0 means "record nothing".
pub(crate) static FLAGS: AtomicU8 = AtomicU8::new(UNINIT);
pub(crate) const TRACE: u8 = 1;
pub(crate) const PROFILE: u8 = 2;
/// Not started yet: the first probe reads the environment.
pub(crate) const UNINIT: u8 = 0x80;

/// Start-up state: 0 none, 1 starting, 2 running, 3 finished.
static PHASE: AtomicU8 = AtomicU8::new(0);
static EPOCH: AtomicU32 = AtomicU32::new(0);
/// The mode of the current measurement, kept while the flow is off.
static MODE_BITS: AtomicU8 = AtomicU8::new(0);
static RANK: AtomicU32 = AtomicU32::new(0);
static PROFILE_FD: AtomicI32 = AtomicI32::new(-1);
static NEXT_THREAD: AtomicU32 = AtomicU32::new(0);
static FLUSHES: AtomicU64 = AtomicU64::new(0);
static LOST_BYTES: AtomicU64 = AtomicU64::new(0);
static PROFILE_DROPPED: AtomicU64 = AtomicU64::new(0);
static HOOKS: AtomicBool = AtomicBool::new(false);

/// Every thread state ever made, for flushers; states are never freed.
const POOL: usize = 4096;
static STATES: [AtomicPtr<ThreadState>; POOL] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; POOL];
static STATE_COUNT: AtomicU32 = AtomicU32::new(0);

/// Settings of the running measurement.
struct Running {
    config: Config,
    dir: PathBuf,
    defs_fd: i32,
}

static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

/// Pid of the measuring process this one was forked from (0: none); the
/// next measurement of this process is that of a descendant.
static FORKED_FROM: AtomicU32 = AtomicU32::new(0);
/// The rank directory a descendant claimed, kept for its later
/// measurements (`u32::MAX`: none).
static CLAIMED: AtomicU32 = AtomicU32::new(u32::MAX);
/// Whether child processes are measured (from the running configuration,
/// read by the fork handler).
static CHILDREN: AtomicBool = AtomicBool::new(false);
/// The socket whose abstract name says "this process is measured" (-1: none).
static GUARD_FD: AtomicI32 = AtomicI32::new(-1);

/// Why measurement could not start.
#[derive(Debug)]
pub struct InitError(String, bool);

impl InitError {
    fn loud(msg: impl Into<String>) -> InitError {
        InitError(msg.into(), false)
    }

    fn quiet(msg: impl Into<String>) -> InitError {
        InitError(msg.into(), true)
    }
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InitError {}

/// Whether probes record now.
#[inline]
pub(crate) fn active() -> bool {
    let f = FLAGS.load(Relaxed);
    f != 0 && f & UNINIT == 0
}

/// Current measurement number (each `init` starts a new one).
pub(crate) fn epoch() -> u32 {
    EPOCH.load(Acquire)
}

/// Starts measurement with `config`. Fails if a measurement is running.
pub fn init(config: Config) -> Result<(), InitError> {
    loop {
        match PHASE.compare_exchange(0, 1, AcqRel, Acquire) {
            Ok(_) => break,
            Err(3) => {
                if PHASE.compare_exchange(3, 1, AcqRel, Acquire).is_ok() {
                    break;
                }
            }
            Err(1) => std::hint::spin_loop(),
            Err(_) => {
                return Err(InitError::quiet(
                    "Parallax is already measuring this process",
                ))
            }
        }
    }
    match start(config) {
        Ok(bits) => {
            PHASE.store(2, Release);
            MODE_BITS.store(bits, Release);
            FLAGS.store(bits, Release);
            Ok(())
        }
        Err(e) => {
            FLAGS.store(0, Release);
            PHASE.store(3, Release);
            Err(e)
        }
    }
}

/// First probe of a process that did not call `init`: configure from the
/// environment. Errors are reported once on stderr and leave measurement
/// off; they never fail the program.
#[cold]
#[inline(never)]
pub(crate) fn init_from_env() {
    if PHASE.load(Acquire) != 0 {
        while PHASE.load(Acquire) == 1 {
            std::hint::spin_loop();
        }
        return;
    }
    match Config::from_env() {
        Ok(c) if c.mode == Mode::Off => {
            if PHASE.compare_exchange(0, 3, AcqRel, Acquire).is_ok() {
                FLAGS.store(0, Release);
            }
        }
        Ok(c) => {
            if let Err(e) = init(c) {
                if !e.1 {
                    eprintln!("parallax: measurement is off: {e}");
                }
            }
        }
        Err(e) => {
            eprintln!("parallax: measurement is off: {e}");
            if PHASE.compare_exchange(0, 3, AcqRel, Acquire).is_ok() {
                FLAGS.store(0, Release);
            }
        }
    }
}

fn start(config: Config) -> Result<u8, InitError> {
    let bits = match config.mode {
        Mode::Off => 0,
        Mode::Profile => PROFILE,
        Mode::Trace => TRACE,
        Mode::Both => TRACE | PROFILE,
    };
    clock::select(
        config.clock != ClockChoice::Monotonic,
        config.clock == ClockChoice::Fenced,
    );
    if bits == 0 {
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = None;
        return Ok(0);
    }
    guard_process()?;
    let own = std::process::id();
    let parent = match FORKED_FROM.load(Acquire) {
        0 => config.parent_pid.filter(|&p| p != own),
        p => Some(p),
    };
    let rank = match (parent, CLAIMED.load(Acquire)) {
        (None, _) => config.rank.unwrap_or(0),
        (Some(_), u32::MAX) => {
            let r = claim_rank(&config)?;
            CLAIMED.store(r, Release);
            r
        }
        (Some(_), r) => r,
    };
    CHILDREN.store(config.children, Release);
    let dir = config.out_dir.join(experiment::rank_dir(rank));
    prepare_dir(&dir)
        .map_err(|e| InitError::loud(format!("cannot create {}: {e}", dir.display())))?;
    let defs_fd = create(
        &dir.join(DEFS_FILE),
        &file::header(FileKind::Definitions, rank, 0),
    )
    .map_err(|e| {
        InitError::loud(format!(
            "cannot create {}: {e}",
            dir.join(DEFS_FILE).display()
        ))
    })?;
    let profile_fd = if bits & PROFILE != 0 {
        let path = dir.join(PROFILE_FILE);
        create(&path, &file::header(FileKind::Profile, rank, 0))
            .map_err(|e| InitError::loud(format!("cannot create {}: {e}", path.display())))?
    } else {
        -1
    };
    let old = PROFILE_FD.swap(profile_fd, AcqRel);
    if old >= 0 {
        // Safety: the previous measurement's descriptor, no longer used.
        unsafe { libc::close(old) };
    }
    RANK.store(rank, Release);
    NEXT_THREAD.store(0, Release);
    FLUSHES.store(0, Relaxed);
    LOST_BYTES.store(0, Relaxed);
    PROFILE_DROPPED.store(0, Relaxed);
    EPOCH.fetch_add(1, AcqRel);

    let mut args = std::env::args();
    let program = args.next().unwrap_or_default();
    let info = ProcessInfo {
        rank,
        ranks: config.ranks.unwrap_or(0),
        pid: std::process::id(),
        host: hostname(),
        program,
        args: args.collect(),
        start_unix_ns: clock::unix_ns(),
        mode: config.mode,
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let (t0, m0) = clock::sample();
    let mut defs = vec![
        Def::Process(info),
        Def::ClockSync {
            tick: t0,
            mono_ns: m0,
            unix_ns: clock::unix_ns(),
        },
    ];
    // The cores the process may run on: compensation needs to know whether
    // its threads outnumbered them.
    if let Ok(n) = std::thread::available_parallelism() {
        defs.push(Def::Property {
            key: "cpus".into(),
            value: n.to_string(),
        });
    }
    if parent.is_some() {
        // Safety: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() };
        defs.push(Def::Property {
            key: "parent_pid".into(),
            value: ppid.to_string(),
        });
    }
    let calibration = if config.calibrate {
        calibrate::measure(config.mode, 40)
    } else {
        // Without calibration, still learn the tick rate over 2 ms.
        let until = clock::mono_ns() + 2_000_000;
        while clock::mono_ns() < until {}
        Vec::new()
    };
    let (t1, m1) = clock::sample();
    let hz = if m1 > m0 && t1 > t0 {
        (t1 - t0) as f64 * 1e9 / (m1 - m0) as f64
    } else {
        1e9
    };
    defs.push(Def::Clock {
        source: clock::source(),
        nominal_hz: hz,
    });
    defs.push(Def::ClockSync {
        tick: t1,
        mono_ns: m1,
        unix_ns: clock::unix_ns(),
    });
    defs.extend(calibration.iter().map(|c| c.to_def()));
    defs.extend(crate::region::known());
    write_defs_fd(defs_fd, &defs);
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(Running {
        config: config.clone(),
        dir,
        defs_fd,
    });
    if !HOOKS.swap(true, AcqRel) {
        // Safety: registering plain extern "C" functions.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(after_fork_in_child));
        }
        if config.signals {
            signals::install();
        }
    }
    Ok(bits)
}

/// Makes sure no other copy of the runtime measures this process (a
/// program linked with the `parallax` crate that also gets the
/// interposition library, which holds a copy of its own): the first to start
/// binds an abstract socket named after the process, the second fails to.
fn guard_process() -> Result<(), InitError> {
    if GUARD_FD.load(Acquire) >= 0 {
        return Ok(());
    }
    // Safety: plain socket calls on a local, zeroed address.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Ok(()); // no sockets: nothing to guard with
        }
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let name = format!("parallax-measuring-{}", std::process::id());
        for (d, s) in addr.sun_path[1..].iter_mut().zip(name.bytes()) {
            *d = s as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
        if libc::bind(fd, &addr as *const _ as *const libc::sockaddr, len as u32) != 0 {
            let in_use = std::io::Error::last_os_error().raw_os_error() == Some(libc::EADDRINUSE);
            libc::close(fd);
            if in_use {
                return Err(InitError::quiet(
                    "another copy of the Parallax runtime measures this process",
                ));
            }
            return Ok(());
        }
        GUARD_FD.store(fd, Release);
    }
    Ok(())
}

/// The rank of a descendant (see [`crate::config`]): its own rank if no
/// process has that directory yet, else, when children are measured, the
/// first free rank at or above the number of ranks.
fn claim_rank(config: &Config) -> Result<u32, InitError> {
    let out = &config.out_dir;
    std::fs::create_dir_all(out)
        .map_err(|e| InitError::loud(format!("cannot create {}: {e}", out.display())))?;
    let take = |r: u32| std::fs::create_dir(out.join(experiment::rank_dir(r)));
    let own = config.rank.unwrap_or(0);
    match take(own) {
        Ok(()) => return Ok(own),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(InitError::loud(format!(
                "cannot create a rank directory in {}: {e}",
                out.display()
            )))
        }
        Err(_) => {}
    }
    if !config.children {
        return Err(InitError::quiet(format!(
            "rank {own} is measured by a parent process and PARALLAX_CHILDREN is off"
        )));
    }
    let first = config.ranks.unwrap_or(0).max(own + 1);
    for r in first..first.saturating_add(1 << 20) {
        match take(r) {
            Ok(()) => return Ok(r),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(InitError::loud(format!(
                    "cannot create a rank directory in {}: {e}",
                    out.display()
                )))
            }
        }
    }
    Err(InitError::loud(
        "no free rank directory for a child process",
    ))
}

/// Empties a process directory of a previous run's files, creating it if
/// needed.
fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("pxe" | "pxd" | "pxp")
        ) {
            std::fs::remove_file(p)?;
        }
    }
    Ok(())
}

/// Creates `path` with `header` and returns its descriptor (append mode, so
/// that whole-block writes from several threads never interleave).
fn create(path: &Path, header: &[u8]) -> std::io::Result<i32> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND | libc::O_CLOEXEC;
    // Safety: `c` is a valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags, 0o644) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if !write_all(fd, &[header]) {
        let e = std::io::Error::last_os_error();
        // Safety: our own descriptor.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    Ok(fd)
}

/// Writes all of `parts` to `fd`; false if the system refused. Allocates
/// nothing: safe in signal handlers.
pub(crate) fn write_all(fd: i32, parts: &[&[u8]]) -> bool {
    let mut iov = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }; 4];
    let n = parts.len().min(4);
    for (v, p) in iov.iter_mut().zip(parts) {
        *v = libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        };
    }
    let mut first = 0;
    while first < n {
        // Safety: the iovecs point into live slices.
        let w = unsafe { libc::writev(fd, iov[first..n].as_ptr(), (n - first) as i32) };
        if w < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        let mut w = w as usize;
        while first < n && w >= iov[first].iov_len {
            w -= iov[first].iov_len;
            first += 1;
        }
        if first < n {
            // Safety: advancing within the same slice.
            iov[first].iov_base =
                unsafe { (iov[first].iov_base as *mut u8).add(w) } as *mut libc::c_void;
            iov[first].iov_len -= w;
        }
    }
    true
}

fn write_defs_fd(fd: i32, defs: &[Def]) {
    let mut payload = Vec::new();
    for d in defs {
        d.encode(&mut payload);
    }
    let header = file::block_header(&payload);
    write_all(fd, &[&header, &payload]);
}

/// Appends definitions to the running measurement's file.
pub(crate) fn write_defs(defs: &[Def]) {
    let guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = guard.as_ref() {
        write_defs_fd(r.defs_fd, defs);
    }
}

/// A state for the calling thread, with its event file open; `None` if
/// measurement is not running or the file cannot be created.
pub(crate) fn new_thread_state() -> Option<*mut ThreadState> {
    let (buf, nodes, depth) = {
        let guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        let c = &guard.as_ref()?.config;
        (c.buffer_bytes, c.profile_nodes, c.max_depth)
    };
    let p = match thread::claim(&STATES, &STATE_COUNT) {
        Some(p) => p,
        None => {
            let p = Box::into_raw(Box::new(ThreadState::new(buf, nodes, depth)));
            let i = STATE_COUNT.fetch_add(1, AcqRel) as usize;
            if i < POOL {
                STATES[i].store(p, Release);
            }
            p
        }
    };
    // Safety: claimed for this thread.
    let st = unsafe { &mut *p };
    if !open_events(st) {
        st.close(true, false);
    }
    Some(p)
}

/// Opens the state's location for the current measurement.
fn open_events(st: &mut ThreadState) -> bool {
    let bits = MODE_BITS.load(Acquire);
    let thread = NEXT_THREAD.fetch_add(1, AcqRel);
    let rank = RANK.load(Acquire);
    let mut fd = -1;
    {
        let guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        let Some(r) = guard.as_ref() else {
            return false;
        };
        if bits & TRACE != 0 {
            let path = r.dir.join(experiment::events_file(thread));
            match create(&path, &thread::event_file_header(rank, thread)) {
                Ok(f) => fd = f,
                Err(e) => {
                    eprintln!(
                        "parallax: cannot create {}: {e}; thread {thread} is not traced",
                        path.display()
                    );
                    return false;
                }
            }
        }
    }
    thread::reset_for(
        st,
        thread,
        epoch(),
        fd,
        bits & TRACE != 0,
        bits & PROFILE != 0,
    );
    let name = std::thread::current().name().unwrap_or("").to_string();
    // Safety: gettid has no preconditions.
    let os_tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    write_defs(&[Def::Location {
        thread,
        name,
        os_tid,
    }]);
    true
}

/// A thread's state was closed by a finished measurement and the thread
/// records again in a new one.
pub(crate) fn reopen_thread_state(st: &mut ThreadState) {
    if !open_events(st) {
        st.close(true, false);
    }
}

/// Counts a buffer flush.
pub(crate) fn note_flush() {
    FLUSHES.fetch_add(1, Relaxed);
}

/// A thread ended: keep its counters.
pub(crate) fn thread_ended(st: &ThreadState) {
    LOST_BYTES.fetch_add(st.lost_bytes, Relaxed);
}

/// Where profiles are encoded in a signal handler, which may neither
/// allocate nor use much stack (it may run on a small alternate stack).
/// Only the handler that won `signals::FLUSHED` touches it.
static mut CRASH_BUF: [u8; 1 << 20] = [0; 1 << 20];

/// Encodes and writes a state's profile. In a crash, uses a static buffer
/// and writes as much of the tree as fits.
pub(crate) fn write_profile(st: &mut ThreadState, crash: bool) {
    let fd = PROFILE_FD.load(Acquire);
    if fd < 0 {
        return;
    }
    if !crash {
        st.profile.close_open_frames(clock::now());
    }
    PROFILE_DROPPED.fetch_add(st.profile.dropped, Relaxed);
    let write = |payload: &[u8]| {
        let header = file::block_header(payload);
        write_all(fd, &[&header, payload]);
    };
    if crash {
        // Safety: only the one signal handler that flushes gets here.
        let buf = unsafe { &mut *std::ptr::addr_of_mut!(CRASH_BUF) };
        let n = st.profile.encode_into(st.thread, buf);
        write(&buf[..n]);
    } else {
        let mut buf = vec![0u8; st.profile.encoded_len()];
        let n = st.profile.encode_into(st.thread, &mut buf);
        write(&buf[..n]);
    }
}

/// Stops measurement and writes everything: every thread's last block and
/// profile, a final clock sample and the end record. Returns the experiment
/// directory, if a measurement was running.
pub fn finish() -> Option<PathBuf> {
    if PHASE.compare_exchange(2, 1, AcqRel, Acquire).is_err() {
        return None;
    }
    FLAGS.store(0, Release);
    close_all(true, false);
    let mut guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let out = guard.take().map(|r| {
        // The probes' cost again: the machine's speed may have changed since
        // start-up, and compensation charges each event the costs of the
        // calibration nearest to it in time. Then their cost in context,
        // here rather than at start-up, where it would delay the program.
        let mut defs: Vec<Def> = if r.config.calibrate {
            let mode = r.config.mode;
            let mut cal = calibrate::measure(mode, 40);
            cal.extend(calibrate::measure_context(mode));
            cal.iter().map(|c| c.to_def()).collect()
        } else {
            Vec::new()
        };
        let (tick, mono_ns) = clock::sample();
        defs.push(Def::ClockSync {
            tick,
            mono_ns,
            unix_ns: clock::unix_ns(),
        });
        let mut prop = |k: &str, v: u64| {
            defs.push(Def::Property {
                key: k.into(),
                value: v.to_string(),
            });
        };
        prop("buffer_flushes", FLUSHES.load(Relaxed));
        prop("lost_bytes", LOST_BYTES.load(Relaxed));
        prop("profile_visits_merged", PROFILE_DROPPED.load(Relaxed));
        defs.push(Def::End {
            unix_ns: clock::unix_ns(),
        });
        write_defs_fd(r.defs_fd, &defs);
        // Safety: the measurement's own descriptors.
        unsafe {
            libc::close(r.defs_fd);
            let p = PROFILE_FD.swap(-1, AcqRel);
            if p >= 0 {
                libc::close(p);
            }
        }
        r.config.out_dir
    });
    drop(guard);
    PHASE.store(3, Release);
    out
}

/// Closes every live thread state. `wait`: wait for busy writers.
pub(crate) fn close_all(wait: bool, crash: bool) {
    let n = (STATE_COUNT.load(Acquire) as usize).min(POOL);
    for slot in &STATES[..n] {
        let p = slot.load(Acquire);
        if p.is_null() {
            continue;
        }
        // Safety: states are never freed; the lock inside `close` orders
        // this with the owner's own writes.
        let st = unsafe { &mut *p };
        if st.in_use_now() {
            st.close(wait, crash);
            LOST_BYTES.fetch_add(std::mem::take(&mut st.lost_bytes), Relaxed);
        }
    }
}

extern "C" fn at_exit() {
    finish();
}

extern "C" fn after_fork_in_child() {
    // The child shares the parent's files: it must not write to them (its
    // thread states still point at the parent's).
    let was_measuring = PHASE.load(Acquire) == 2;
    FLAGS.store(0, Release);
    MODE_BITS.store(0, Release);
    PHASE.store(3, Release);
    let n = (STATE_COUNT.load(Acquire) as usize).min(POOL);
    for slot in &STATES[..n] {
        let p = slot.load(Acquire);
        if !p.is_null() {
            // Safety: single-threaded child right after fork.
            unsafe { (*p).forget_after_fork() };
        }
    }
    if !was_measuring || !CHILDREN.load(Acquire) {
        return;
    }
    // Measured as a process of its own, from its next probe on, if no
    // thread of the parent held the runtime's locks at the fork (they would
    // never be released in the child).
    let Ok(mut running) = RUNNING.try_lock() else {
        return;
    };
    if !crate::region::known_is_free() {
        return;
    }
    if let Some(r) = running.take() {
        // Safety: the child's copies of the parent's descriptors.
        unsafe {
            libc::close(r.defs_fd);
            let p = PROFILE_FD.swap(-1, AcqRel);
            if p >= 0 {
                libc::close(p);
            }
        }
    }
    drop(running);
    // Safety: getppid has no preconditions.
    FORKED_FROM.store(unsafe { libc::getppid() } as u32, Release);
    CLAIMED.store(u32::MAX, Release);
    let g = GUARD_FD.swap(-1, AcqRel);
    if g >= 0 {
        // Safety: the child's copy of the parent's guard socket.
        unsafe { libc::close(g) };
    }
    PHASE.store(0, Release);
    FLAGS.store(UNINIT, Release);
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // Safety: `buf` is writable for its length.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The directory of the running measurement.
pub fn out_dir() -> Option<PathBuf> {
    let guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    guard.as_ref().map(|r| r.config.out_dir.clone())
}

/// Current mode (`Off` when not measuring or while the flow is off).
pub fn mode() -> Mode {
    if FLAGS.load(Relaxed) & UNINIT != 0 {
        init_from_env();
    }
    match FLAGS.load(Relaxed) & (TRACE | PROFILE) {
        0 => Mode::Off,
        TRACE => Mode::Trace,
        PROFILE => Mode::Profile,
        _ => Mode::Both,
    }
}

/// Switches recording on or off for the whole process (like TraceFlow's
/// `flowon`/`flowoff`): regions entered while off are not recorded, and
/// regions open when it goes off are still left properly.
pub fn set_flow(on: bool) {
    if FLAGS.load(Relaxed) & UNINIT != 0 {
        init_from_env();
    }
    if PHASE.load(Acquire) == 2 {
        FLAGS.store(if on { MODE_BITS.load(Acquire) } else { 0 }, Release);
    }
}
