//! Process-wide measurement state: start-up, the definitions file, the pool
//! of thread states, and the end of measurement (explicit, at exit, or on a
//! fatal signal).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering::*};
use std::sync::Mutex;

use parallax_model::defs::{Def, Mode, ProcessInfo};
use parallax_model::file;

use crate::buffer::Buffer;
use crate::calibrate;
use crate::clock;
use crate::config::{ClockChoice, Config};
use crate::failsafe::{self, Cause};
use crate::files;
use crate::losses;
use crate::rank_dir::{self, Opened};
use crate::signals;
use crate::states;

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
pub(crate) static MODE_BITS: AtomicU8 = AtomicU8::new(0);
pub(crate) static RANK: AtomicU32 = AtomicU32::new(0);
pub(crate) static PROFILE_FD: AtomicI32 = AtomicI32::new(-1);
/// The rank directory of the running measurement (a descriptor; -1:
/// none): thread files are made and written relative to it.
static DIR_FD: AtomicI32 = AtomicI32::new(-1);
/// The process that started the running measurement (a child made by
/// `vfork` shares this memory but is another process).
static MEASURED_PID: AtomicU32 = AtomicU32::new(0);
/// Set when a failure inside the runtime stopped measurement for good.
static STOPPED: AtomicBool = AtomicBool::new(false);
pub(crate) static NEXT_THREAD: AtomicU32 = AtomicU32::new(0);
static FLUSHES: AtomicU64 = AtomicU64::new(0);
pub(crate) static LOST_BYTES: AtomicU64 = AtomicU64::new(0);
pub(crate) static PROFILE_DROPPED: AtomicU64 = AtomicU64::new(0);
static HOOKS: AtomicBool = AtomicBool::new(false);

/// Every thread state ever made, for flushers; states are never freed.
/// Settings of the running measurement.
pub(crate) struct Running {
    pub(crate) config: Config,
    defs_fd: i32,
    /// Buffers made ahead of the threads that will take them: a spill
    /// file is the longest part of setting a thread up, which a thread
    /// would otherwise pay for at its first probe (one made at the start,
    /// for the thread that started measuring; more on [`prepare_threads`]).
    pub(crate) spares: Vec<Buffer>,
}

/// Spare buffers made at most, whatever [`prepare_threads`] asks.
const MAX_SPARES: usize = 16;

/// Makes buffers ready for `threads` threads about to start (an OpenMP
/// team forked in the program's first parallel region, say): their first
/// probes then take a buffer made now instead of making one.
pub fn prepare_threads(threads: usize) {
    let mut guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(r) = guard.as_mut() else {
        return;
    };
    if MODE_BITS.load(Acquire) & TRACE == 0 {
        return;
    }
    let rank = RANK.load(Acquire);
    while r.spares.len() < threads.min(MAX_SPARES) {
        // Each under a name no thread has, renamed by the thread taking it.
        let placeholder = u32::MAX - r.spares.len() as u32;
        match Buffer::spilled(dir_fd(), rank, placeholder, r.config.buffer_bytes) {
            Ok(b) => {
                b.set_closed();
                r.spares.push(b);
            }
            Err(_) => break,
        }
    }
}

pub(crate) static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

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
    pub(crate) fn loud(msg: impl Into<String>) -> InitError {
        InitError(msg.into(), false)
    }

    pub(crate) fn quiet(msg: impl Into<String>) -> InitError {
        InitError(msg.into(), true)
    }
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InitError {}

/// The clock's ticks per second as the measurement found them (as f64
/// bits; 0 before).
static CLOCK_HZ: AtomicU64 = AtomicU64::new(0);

/// The clock's ticks per nanosecond; 0 before a measurement starts.
pub(crate) fn ticks_per_ns() -> f64 {
    f64::from_bits(CLOCK_HZ.load(Relaxed)) / 1e9
}

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
    let (parent, rank) = parent_and_rank(&config)?;
    CHILDREN.store(config.children, Release);
    let files = Opened::new(&config, rank, bits & PROFILE != 0)?;
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
    let (dir_fd, defs_fd, profile_fd) = files.keep();
    for (slot, fd) in [(&PROFILE_FD, profile_fd), (&DIR_FD, dir_fd)] {
        let old = slot.swap(fd, AcqRel);
        if old >= 0 {
            // Safety: the previous measurement's descriptor, no longer used.
            unsafe { libc::close(old) };
        }
    }
    begin_epoch(rank);

    let mut defs = process_defs(&config, rank, parent.is_some());
    let first_sync = Def::ClockSync {
        tick: t0,
        mono_ns: m0,
        unix_ns: u0,
    };
    defs.insert(1, first_sync);
    let (t1, m1) = clock::sample();
    let hz = if m1 > m0 && t1 > t0 {
        (t1 - t0) as f64 * 1e9 / (m1 - m0) as f64
    } else {
        1e9
    };
    CLOCK_HZ.store(hz.to_bits(), Relaxed);
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
    // Until a thread takes it, a spare holds nothing a reader would take.
    let spares: Vec<Buffer> = if bits & TRACE != 0 {
        Buffer::spilled(dir_fd, rank, u32::MAX, config.buffer_bytes)
            .ok()
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    for b in &spares {
        b.set_closed();
    }
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(Running {
        config: config.clone(),
        defs_fd,
        spares,
    });
    install_hooks(&config);
    Ok(bits)
}

/// The measuring process this one descends from, if any, and this
/// process's rank.
fn parent_and_rank(config: &Config) -> Result<(Option<u32>, u32), InitError> {
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
            let r = rank_dir::claim_rank(config)?;
            CLAIMED.store(r, Release);
            r
        }
        (Some(_), r) => r,
    };
    Ok((parent, rank))
}

/// A new measurement of rank `rank` begins: its counters start at zero.
fn begin_epoch(rank: u32) {
    MEASURED_PID.store(std::process::id(), Release);
    RANK.store(rank, Release);
    NEXT_THREAD.store(0, Release);
    FLUSHES.store(0, Relaxed);
    LOST_BYTES.store(0, Relaxed);
    PROFILE_DROPPED.store(0, Relaxed);
    losses::reset();
    EPOCH.fetch_add(1, AcqRel);
}

/// The definitions that describe the measured process.
fn process_defs(config: &Config, rank: u32, descendant: bool) -> Vec<Def> {
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
    let mut defs = vec![Def::Process(info)];
    // The cores the process may run on: compensation needs to know whether
    // its threads outnumbered them.
    if let Ok(n) = std::thread::available_parallelism() {
        defs.push(Def::Property {
            key: "cpus".into(),
            value: n.to_string(),
        });
    }
    if descendant {
        // Safety: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() };
        defs.push(Def::Property {
            key: "parent_pid".into(),
            value: ppid.to_string(),
        });
    }
    defs
}

/// The exit and fork handlers, and the signal handlers if asked for, once
/// per process.
fn install_hooks(config: &Config) {
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

fn write_defs_fd(fd: i32, defs: &[Def]) {
    let mut payload = Vec::new();
    for d in defs {
        d.encode(&mut payload);
    }
    write_defs_block(fd, &payload);
}

/// Appends encoded definitions as one block, without allocating. A
/// definitions file that cannot be written loses its facts, nothing more;
/// the reader says the process did not finish.
fn write_defs_block(fd: i32, payload: &[u8]) {
    let header = file::block_header(payload);
    let _ = files::write_all(fd, &[&header, payload]);
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

/// Writes how fast location `thread`'s core ran ([`Def::SpeedInRun`])
/// without allocating: a probe in a signal handler may have interrupted
/// the allocator. Gives up if the definitions file stays busy a moment.
pub(crate) fn try_write_speed(thread: u32, tick: u64, samples: u64, ticks: u64) {
    let Some(guard) = failsafe::lock_briefly(&RUNNING, 1000) else {
        return;
    };
    if let Some(r) = guard.as_ref() {
        let mut payload = [0u8; parallax_model::defs::SPEED_RECORD_LEN];
        let n = parallax_model::defs::encode_speed(thread, tick, samples, ticks, &mut payload);
        write_defs_block(r.defs_fd, &payload[..n]);
    }
}

/// Counts a buffer flush.
pub(crate) fn note_flush() {
    FLUSHES.fetch_add(1, Relaxed);
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
    states::close_all(true, false);
    let mut guard = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    // Again: a thread may have set up its state while this waited for
    // the lock. Then the spill files are no longer needed.
    states::close_all(true, false);
    states::remove_spills();
    if let Some(r) = guard.as_mut() {
        for mut b in r.spares.drain(..) {
            b.unlink(dir_fd());
        }
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
        defs.extend(losses::loss_defs(None));
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
        states::close_all(false, true);
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
        write_defs_block(r.defs_fd, &payload[..n]);
    }
    drop(running);
    PHASE.store(3, Release);
    true
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
    states::forget_after_fork();
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
