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

use crate::buffer::Buffer;
use crate::calibrate;
use crate::clock;
use crate::config::{ClockChoice, Config};
use crate::failsafe::{self, Cause};
use crate::files;
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
/// The rank directory of the running measurement (a descriptor; -1:
/// none): thread files are made and written relative to it.
static DIR_FD: AtomicI32 = AtomicI32::new(-1);
/// The process that started the running measurement (a child made by
/// `vfork` shares this memory but is another process).
static MEASURED_PID: AtomicU32 = AtomicU32::new(0);
/// Set when a failure inside the runtime stopped measurement for good.
static STOPPED: AtomicBool = AtomicBool::new(false);
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
    defs_fd: i32,
    /// A buffer made at the start, for the first thread traced: its spill
    /// file is the longest part of setting a thread up, and the thread
    /// that started measuring should not pay for it at its next probe.
    spare: Option<Buffer>,
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
        if STOPPED.load(Acquire) {
            return Err(InitError::quiet("Parallax stopped measuring this process"));
        }
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
    let started = failsafe::contained(|| start(config))
        .unwrap_or_else(|| Err(InitError::quiet("internal error")));
    match started {
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
    failsafe::contained(|| {
        if PHASE.load(Acquire) != 0 || STOPPED.load(Acquire) {
            while PHASE.load(Acquire) == 1 && !STOPPED.load(Acquire) {
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
                        failsafe::tell_once(Cause::Start, format_args!("measurement is off: {e}"));
                    }
                }
            }
            Err(e) => {
                failsafe::tell_once(Cause::Config, format_args!("measurement is off: {e}"));
                if PHASE.compare_exchange(0, 3, AcqRel, Acquire).is_ok() {
                    FLAGS.store(0, Release);
                }
            }
        }
    });
}

/// Ends recording after a failure inside the runtime: probes record
/// nothing from now on, in any thread, and nothing waits for a start or
/// an end that will not complete.
pub(crate) fn stop() {
    STOPPED.store(true, Release);
    MODE_BITS.store(0, Release);
    FLAGS.store(0, Release);
}

/// Memory ran short: measurement stops, once, with one message.
pub(crate) fn stop_for_memory() {
    stop();
    failsafe::tell_once(
        Cause::Memory,
        format_args!("out of memory: measurement is off (the program goes on)"),
    );
}

/// The rank directory of the running measurement, as a descriptor.
pub(crate) fn dir_fd() -> i32 {
    DIR_FD.load(Acquire)
}

/// Whether the calling process is the one measuring (not a child made
/// by `vfork`, which shares this memory until it calls exec or `_exit`).
pub(crate) fn is_measuring_process() -> bool {
    // Safety: getpid has no preconditions.
    PHASE.load(Acquire) == 2 && MEASURED_PID.load(Acquire) == unsafe { libc::getpid() } as u32
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
    if failsafe::memory_short() {
        return Err(InitError::loud("out of memory"));
    }
    // Room for calibration and a first thread.
    if !failsafe::may_take(config.buffer_bytes + (2 << 20)) {
        return Err(InitError::loud(
            "the memory limit (ulimit -v) leaves too little room to measure without taking \
             memory the program may need",
        ));
    }
    guard_process()?;
    let own = std::process::id();
    let parent = match FORKED_FROM.load(Acquire) {
        // An image that replaced a measured one (exec) is a descendant: the
        // rank of the replaced image keeps what it recorded.
        0 if config.replaced_pid == Some(own) => Some(own),
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
    let dir_fd = open_dir(&dir)
        .map_err(|e| InitError::loud(format!("cannot open {}: {e}", dir.display())))?;
    // Closes what was opened when a later step fails.
    struct Opened(Vec<i32>);
    impl Drop for Opened {
        fn drop(&mut self) {
            for &fd in &self.0 {
                // Safety: descriptors this start opened and gave nobody.
                unsafe { libc::close(fd) };
            }
        }
    }
    let mut opened = Opened(vec![dir_fd]);
    let defs_fd = create(
        dir_fd,
        DEFS_FILE,
        &file::header(FileKind::Definitions, rank, 0),
    )
    .map_err(|e| {
        InitError::loud(format!(
            "cannot create {}: {e}",
            dir.join(DEFS_FILE).display()
        ))
    })?;
    opened.0.push(defs_fd);
    reserve_room(defs_fd);
    let profile_fd = if bits & PROFILE != 0 {
        let path = dir.join(PROFILE_FILE);
        create(
            dir_fd,
            PROFILE_FILE,
            &file::header(FileKind::Profile, rank, 0),
        )
        .map_err(|e| InitError::loud(format!("cannot create {}: {e}", path.display())))?
    } else {
        -1
    };
    opened.0.push(profile_fd);
    // The tick rate is learnt over the calibration. Calibration makes
    // scratch buffers: without memory for them, measurement does not start.
    let (t0, m0) = clock::sample();
    let u0 = clock::unix_ns();
    let calibration = if config.calibrate {
        let mut c = calibrate::measure(config.mode, 40);
        c.extend(calibrate::measure_hook_context(config.mode));
        c
    } else {
        // Without calibration, still learn the tick rate over 2 ms.
        let until = clock::mono_ns() + 2_000_000;
        while clock::mono_ns() < until {}
        Vec::new()
    };
    if failsafe::memory_short() {
        return Err(InitError::loud("out of memory"));
    }
    opened.0.clear();
    for (slot, fd) in [(&PROFILE_FD, profile_fd), (&DIR_FD, dir_fd)] {
        let old = slot.swap(fd, AcqRel);
        if old >= 0 {
            // Safety: the previous measurement's descriptor, no longer used.
            unsafe { libc::close(old) };
        }
    }
    MEASURED_PID.store(own, Release);
    RANK.store(rank, Release);
    NEXT_THREAD.store(0, Release);
    FLUSHES.store(0, Relaxed);
    LOST_BYTES.store(0, Relaxed);
    PROFILE_DROPPED.store(0, Relaxed);
    for a in LOSS.iter().flatten() {
        a.store(0, Relaxed);
    }
    EPOCH.fetch_add(1, AcqRel);

    // Arguments need not be UTF-8: kept as readable text, never refused.
    let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
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
    let mut defs = vec![
        Def::Process(info),
        Def::ClockSync {
            tick: t0,
            mono_ns: m0,
            unix_ns: u0,
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
    // Until a thread takes it, the spare holds nothing a reader would take.
    let spare = if bits & TRACE != 0 {
        Buffer::spilled(dir_fd, rank, 0, config.buffer_bytes).ok()
    } else {
        None
    };
    if let Some(b) = &spare {
        b.set_closed();
    }
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(Running {
        config: config.clone(),
        defs_fd,
        spare,
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
            Some("pxe" | "pxd" | "pxp" | "pxb" | "part")
        ) {
            std::fs::remove_file(p)?;
        }
    }
    Ok(())
}

/// Reserves room for the definitions to come, so that a disk that runs
/// full still takes the last ones (the losses, the end): as much as the
/// file system gives of a few sizes, beyond the end of the file.
fn reserve_room(fd: i32) {
    for bytes in [16 << 10, 4 << 10] {
        if !files::fits_size_limit(bytes) {
            continue;
        }
        // Safety: a descriptor of ours; KEEP_SIZE leaves the file's length.
        if unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, bytes as libc::off_t) } == 0 {
            return;
        }
    }
}

/// A descriptor of the directory `dir`, for files made relative to it.
fn open_dir(dir: &Path) -> std::io::Result<i32> {
    let c = CString::new(dir.as_os_str().as_bytes())?;
    // Safety: `c` is a valid NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Creates the file `name` of the directory `dir` (a descriptor) with
/// `header` and returns its descriptor (append mode, so that whole-block
/// writes from several threads never interleave).
fn create(dir: i32, name: &str, header: &[u8]) -> std::io::Result<i32> {
    let mut n = [0u8; files::NAME];
    n[..name.len()].copy_from_slice(name.as_bytes());
    files::create_whole(dir, &n, header, libc::O_WRONLY | libc::O_APPEND)
        .map_err(std::io::Error::from_raw_os_error)
}

fn write_defs_fd(fd: i32, defs: &[Def]) {
    let mut payload = Vec::new();
    for d in defs {
        d.encode(&mut payload);
    }
    let header = file::block_header(&payload);
    // A definitions file that cannot be written loses its facts, nothing
    // more; the reader says the process did not finish.
    let _ = files::write_all(fd, &[&header, &payload]);
}

/// Appends definitions to the running measurement's file.
pub(crate) fn write_defs(defs: &[Def]) {
    let guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = guard.as_ref() {
        write_defs_fd(r.defs_fd, defs);
    }
}

/// As [`write_defs`], unless the definitions file stays busy for a while
/// (its writer may be the interrupted code of this very thread): false
/// then, or if not measuring.
pub(crate) fn try_write_defs(defs: &[Def]) -> bool {
    let Some(guard) = failsafe::lock_briefly(&RUNNING, 1000) else {
        return false;
    };
    let Some(r) = guard.as_ref() else {
        return false;
    };
    write_defs_fd(r.defs_fd, defs);
    true
}

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
        stop_for_memory();
        return Err(NoState::Memory);
    }
    let (nodes, depth) = {
        let guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
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
                thread_not_measured(Loss::Memory, libc::ENOMEM);
                return Err(NoState::Memory);
            };
            let p = Box::into_raw(st);
            let i = STATE_COUNT.fetch_add(1, AcqRel) as usize;
            if i < POOL {
                STATES[i].store(p, Release);
            }
            p
        }
    };
    // Safety: claimed for this thread.
    let st = unsafe { &mut *p };
    if open_events(st).is_err() {
        st.close(true, false);
    }
    Ok(p)
}

/// Opens the state's location for the current measurement: its event
/// file and its buffer (from a spill file, else from memory) when tracing.
fn open_events(st: &mut ThreadState) -> Result<(), NoState> {
    let bits = MODE_BITS.load(Acquire);
    let (trace, profile) = (bits & TRACE != 0, bits & PROFILE != 0);
    let rank = RANK.load(Acquire);
    let mut guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let r = guard.as_mut().ok_or(NoState::NotRunning)?;
    let thread = NEXT_THREAD.fetch_add(1, AcqRel);
    let mut events = None;
    if trace {
        match trace_files(st, rank, thread, r.config.buffer_bytes, &mut r.spare) {
            Ok(name) => events = Some(name),
            Err((loss, errno)) => {
                drop(guard);
                thread_not_measured(loss, errno);
                // Profiled all the same, if the mode says so; else the
                // thread records nothing in this measurement.
                thread::reset_for(st, thread, epoch(), None, false, profile);
                if profile {
                    define_location(thread);
                }
                return Ok(());
            }
        }
    }
    drop(guard);
    thread::reset_for(st, thread, epoch(), events, trace, profile);
    define_location(thread);
    Ok(())
}

/// Defines location `thread`, the calling thread.
fn define_location(thread: u32) {
    // Safety: gettid has no preconditions.
    let os_tid = unsafe { libc::syscall(libc::SYS_gettid) } as u32;
    let name = thread_name(os_tid);
    write_defs(&[Def::Location {
        thread,
        name,
        os_tid,
    }]);
}

/// The event file and the buffer of thread `thread`, for the state `st`:
/// the state's own spill file renamed, else a new one, else memory. The
/// event file's name, or what went wrong and the error number.
fn trace_files(
    st: &mut ThreadState,
    rank: u32,
    thread: u32,
    len: usize,
    spare: &mut Option<Buffer>,
) -> Result<[u8; files::NAME], (Loss, i32)> {
    let dir = dir_fd();
    let name = files::name(b"thread-", thread, b".pxe");
    files::create_in(dir, &name, &thread::event_file_header(rank, thread))
        .map_err(|e| (Loss::Files, e))?;
    // Flushers take the lock before they look at a state's buffer.
    st.lock();
    let mut taken = st.buffer().is_spilled() && st.buffer().take_over(dir, rank, thread);
    if !taken {
        if let Some(mut b) = spare.take() {
            if b.len() == len && b.take_over(dir, rank, thread) {
                st.buffer().unlink(dir);
                st.install(b);
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
                st.buffer().unlink(dir);
                st.install(buf);
            }
            Err(e) => made = Err(e),
        }
    }
    st.unlock();
    if let Err(e) = made {
        // Safety: a NUL-terminated name in the rank directory.
        unsafe { libc::unlinkat(dir, name.as_ptr() as *const libc::c_char, 0) };
        return Err((Loss::Memory, e.0));
    }
    Ok(name)
}

/// A thread's state was closed by a finished measurement and the thread
/// records again in a new one.
pub(crate) fn reopen_thread_state(st: &mut ThreadState) {
    if failsafe::memory_short() {
        stop_for_memory();
        return;
    }
    if open_events(st).is_err() {
        st.close(true, false);
    }
}

/// Counts a buffer flush.
pub(crate) fn note_flush() {
    FLUSHES.fetch_add(1, Relaxed);
}

/// A thread ended: keep its counters.
pub(crate) fn thread_ended(st: &mut ThreadState) {
    take_losses(st);
}

/// Moves a closed state's count of events not written to the process's.
fn take_losses(st: &mut ThreadState) {
    LOST_BYTES.fetch_add(std::mem::take(&mut st.lost_bytes), Relaxed);
    let errno = std::mem::take(&mut st.lost_errno);
    let (events, bytes) = std::mem::take(&mut st.unwritten);
    if bytes > 0 && errno != 0 {
        note_loss(Loss::Write, errno, 0, events, bytes);
    }
}

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
fn loss_defs(only: Option<u64>) -> Vec<Def> {
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
fn thread_not_measured(loss: Loss, errno: i32) {
    let key = note_loss(loss, errno, 1, 0, 0);
    write_defs(&loss_defs(key));
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
        let _ = files::write_all(fd, &[&header, payload]);
    };
    if crash {
        // Safety: only the one signal handler that flushes gets here.
        let buf = unsafe { &mut *std::ptr::addr_of_mut!(CRASH_BUF) };
        let n = st.profile.encode_into(st.thread, buf);
        write(&buf[..n]);
    } else {
        let mut buf = Vec::new();
        if buf.try_reserve_exact(st.profile.encoded_len()).is_err() {
            note_loss(Loss::Memory, libc::ENOMEM, 0, 0, 0);
            return;
        }
        buf.resize(st.profile.encoded_len(), 0);
        let n = st.profile.encode_into(st.thread, &mut buf);
        write(&buf[..n]);
    }
}

/// Stops measurement and writes everything: every thread's last block and
/// profile, a final clock sample and the end record. Returns the experiment
/// directory, if a measurement was running.
pub fn finish() -> Option<PathBuf> {
    failsafe::contained(finish_measurement).flatten()
}

fn finish_measurement() -> Option<PathBuf> {
    if PHASE.compare_exchange(2, 1, AcqRel, Acquire).is_err() {
        return None;
    }
    FLAGS.store(0, Release);
    close_all(true, false);
    let mut guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    // Again: a thread may have set up its state while this waited for
    // the lock. Then the spill files are no longer needed.
    close_all(true, false);
    remove_spills();
    if let Some(mut b) = guard.as_mut().and_then(|r| r.spare.take()) {
        b.unlink(dir_fd());
    }
    let out = guard.take().map(|r| {
        // The probes' cost again: the machine's speed may have changed since
        // start-up, and compensation charges each event the costs of the
        // calibration nearest to it in time. Then their cost in context,
        // here rather than at start-up, where it would delay the program.
        let calibrate = r.config.calibrate && !STOPPED.load(Acquire) && !failsafe::memory_short();
        let mut defs: Vec<Def> = if calibrate {
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
        defs.extend(loss_defs(None));
        if STOPPED.load(Acquire) {
            defs.push(Def::Unrecorded {
                reason: "measurement stopped early after a failure inside Parallax".into(),
                threads: 0,
                events: 0,
                bytes: 0,
            });
        }
        defs.push(Def::End {
            unix_ns: clock::unix_ns(),
        });
        write_defs_fd(r.defs_fd, &defs);
        // Safety: the measurement's own descriptors.
        unsafe {
            libc::close(r.defs_fd);
            for slot in [&PROFILE_FD, &DIR_FD] {
                let fd = slot.swap(-1, AcqRel);
                if fd >= 0 {
                    libc::close(fd);
                }
            }
        }
        r.config.out_dir
    });
    drop(guard);
    PHASE.store(3, Release);
    out
}

/// This process image ends without `exit` (`_exit`, or exec): what was
/// recorded is written the way a signal handler can (`_exit` may be called
/// from one): without allocating or waiting, a thread busy writing left to
/// its spill file; then the end is recorded. Returns whether this process
/// measured at some time (a program it becomes by exec is then a
/// descendant). Does nothing in a child made by `vfork`, which shares its
/// parent's memory.
pub fn end_of_image() -> bool {
    failsafe::contained(end_image).unwrap_or(false)
}

fn end_image() -> bool {
    // Safety: getpid has no preconditions.
    let own = unsafe { libc::getpid() } as u32;
    if MEASURED_PID.load(Acquire) != own {
        return false;
    }
    if !is_measuring_process() || PHASE.compare_exchange(2, 1, AcqRel, Acquire).is_err() {
        return true;
    }
    FLAGS.store(0, Release);
    if signals::claim_flush() {
        close_all(false, true);
    }
    let running = match RUNNING.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    if let Some(r) = running.as_ref().and_then(|g| g.as_ref()) {
        let (tick, mono) = clock::sample();
        let mut payload = [0u8; parallax_model::defs::END_RECORDS_LEN];
        let n = parallax_model::defs::encode_end(tick, mono, clock::unix_ns(), &mut payload);
        let header = file::block_header(&payload[..n]);
        let _ = files::write_all(r.defs_fd, &[&header, &payload[..n]]);
    }
    drop(running);
    PHASE.store(3, Release);
    true
}

/// The measurement ended cleanly: every state's spill file goes (their
/// records were written out); the memory stays.
fn remove_spills() {
    let dir = dir_fd();
    let n = (STATE_COUNT.load(Acquire) as usize).min(POOL);
    for slot in &STATES[..n] {
        let p = slot.load(Acquire);
        if p.is_null() {
            continue;
        }
        // Safety: states are never freed; the lock orders this with a
        // thread that sets its state up.
        let st = unsafe { &mut *p };
        st.lock();
        st.remove_spill(dir);
        st.unlock();
    }
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
            take_losses(st);
        }
    }
}

extern "C" fn at_exit() {
    finish();
}

extern "C" fn after_fork_in_child() {
    failsafe::contained(forked);
}

fn forked() {
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
    let d = DIR_FD.swap(-1, AcqRel);
    if d >= 0 {
        // Safety: the child's copy of the parent's descriptor.
        unsafe { libc::close(d) };
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
        String::new()
    } else {
        own
    }
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
