//! Parallax's interposition library, `libparallax_preload.so`: measures an
//! unmodified, dynamically linked program when `parallax run` loads it with
//! `LD_PRELOAD`.
//!
//! - [`cyg`]: the hooks of compiler instrumentation
//!   (`-finstrument-functions`, gcc and clang, C, C++ and Fortran), with a
//!   name filter and automatic throttling of tiny, very frequent functions;
//!   addresses are named from the symbol tables at run time and resolved
//!   to source lines offline through the recorded load map ([`symbols`]).
//! - POSIX threads (`shim/pthread.c`), MPI through PMPI (`shim/mpi.c`),
//!   OpenSHMEM through pshmem (`shim/shmem.c`) and the GASP 1.5 tool
//!   interface (`shim/gasp.c`, [`gasp`]): C entry points, because they need
//!   C variadics, caller addresses or the handles and macros of mpi.h and
//!   shmem.h; they record through the Rust functions of [`capi`].
//!
//! Everything is recorded with the `parallax` runtime linked into this
//! library, configured by the `PARALLAX_*` variables that `parallax run`
//! sets (see `docs/interposition.md` for the whole list and for what each
//! wrapper records). No Rust code here may unwind into C, nor abort the
//! program: every entry point runs its body in `parallax::contained`, which
//! turns a panic into the end of measurement with one message; and memory
//! comes from an allocator with an emergency reserve ([`reserve`]).

pub mod capi;
pub mod cyg;
mod filter;
pub mod gasp;
pub mod omp;
pub mod reserve;
mod settings;
mod skip_cost;
pub mod symbols;

#[global_allocator]
static ALLOCATOR: reserve::WithReserve = reserve::WithReserve;

use std::sync::atomic::{AtomicU8, Ordering::*};

/// Whether this process is measured: not decided yet, being decided, or
/// decided (measured, or never: a launcher such as `mpirun`, or
/// measurement off).
static DECISION: AtomicU8 = AtomicU8::new(UNDECIDED);
const UNDECIDED: u8 = 0;
const DECIDING: u8 = 1;
const MEASURED: u8 = 2;
const NOT_MEASURED: u8 = 3;

/// Whether this process is not measured: the wrappers and hooks then
/// return at once. Decided once, at load ([`on_load`]) or at the first
/// call of a wrapper or hook if that comes earlier (the constructor of a
/// library initialized before this one, such as libgfortran's, may lock a
/// mutex); a call made while it is being decided is not measured.
pub(crate) fn dead() -> bool {
    match DECISION.load(Acquire) {
        MEASURED => false,
        UNDECIDED => !decide(),
        _ => true,
    }
}

#[cold]
#[inline(never)]
fn decide() -> bool {
    if DECISION
        .compare_exchange(UNDECIDED, DECIDING, AcqRel, Acquire)
        .is_err()
    {
        return DECISION.load(Acquire) == MEASURED;
    }
    // A panic in this library is caught where the program called in and
    // said in one line (`parallax::contained`); the standard library's own
    // report of it (a backtrace) would be more lines in the program's
    // output. This library holds its own copy of the standard library:
    // the hook is not the program's.
    std::panic::set_hook(Box::new(|_| {}));
    let measured = parallax::contained(start).unwrap_or(false);
    DECISION.store(if measured { MEASURED } else { NOT_MEASURED }, Release);
    measured
}

/// Programs that start other programs (MPI and SHMEM launchers, their
/// daemons): not measured, so that the ranks they start are the only
/// processes of the experiment. `PARALLAX_EXCLUDE_PROGRAMS` adds names.
const LAUNCHERS: &[&str] = &[
    "mpirun",
    "mpiexec",
    "orterun",
    "orted",
    "oshrun",
    "shmemrun",
    "prterun",
    "prted",
    "prte",
    "mpiexec.hydra",
    "mpiexec.openmpi",
    "mpirun.openmpi",
    "mpiexec.mpich",
    "mpirun.mpich",
    "hydra_pmi_proxy",
    "hydra_nameserver",
    "srun",
];

/// Runs when the library is loaded, before the program's own constructors
/// (though after those of the libraries initialized before this one).
extern "C" fn on_load() {
    if !dead() && openmp_loaded() {
        // An OpenMP program's first probe is often its first parallel
        // region, inside the program's own timing: the start of
        // measurement (files, calibration: milliseconds) is paid now
        // instead. Other programs start at their first probe, so that
        // a process that records nothing (a shell of a script) leaves
        // nothing behind. Its team's threads find their buffers made.
        if capi::active() {
            parallax::prepare_threads(openmp_team());
        }
    }
}

/// The threads an OpenMP program's first team will have: OMP_NUM_THREADS
/// (its first level), else one per processor.
fn openmp_team() -> usize {
    std::env::var("OMP_NUM_THREADS")
        .ok()
        .and_then(|v| v.split(',').next()?.trim().parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether an OpenMP runtime (gcc's libgomp, LLVM's libomp) is loaded.
fn openmp_loaded() -> bool {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        found: *mut libc::c_void,
    ) -> libc::c_int {
        // Safety: the loader passes a valid record, whose name is null or
        // NUL-terminated; `found` is the bool below.
        unsafe {
            let name = (*info).dlpi_name;
            if name.is_null() {
                return 0;
            }
            let name = std::ffi::CStr::from_ptr(name).to_bytes();
            let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
            if base.starts_with(b"libgomp.so") || base.starts_with(b"libomp.so") {
                *(found as *mut bool) = true;
                return 1;
            }
        }
        0
    }
    let mut found = false;
    // Safety: the callback reads only what the loader hands it.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut found as *mut bool as *mut libc::c_void) };
    found
}

/// Decides whether this process is measured, and makes ready to measure
/// it.
fn start() -> bool {
    let var = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    if var("PARALLAX_MODE").is_none() {
        return false;
    }
    let exe = std::fs::read_link("/proc/self/exe")
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let extra = var("PARALLAX_EXCLUDE_PROGRAMS").unwrap_or_default();
    let excluded = LAUNCHERS.contains(&exe.as_str())
        || extra
            .split(',')
            .any(|e| !e.trim().is_empty() && e.trim() == exe);
    if excluded {
        // Keep the runtime of this copy off for good.
        let _ = parallax::init(parallax::Config::new(parallax::Mode::Off, "."));
        return false;
    }
    // A bad setting is said now, once, even if the program never makes a
    // call that would start measuring.
    match parallax::Config::from_env() {
        Ok(c) if c.mode == parallax::Mode::Off => return false,
        Ok(_) => {}
        Err(e) => {
            parallax::failsafe::tell_once(
                parallax::failsafe::Cause::Config,
                format_args!("measurement is off: {e}"),
            );
            return false;
        }
    }
    parallax::calibrate::set_c_entry(capi::calibration_entry());
    // The first measured process of a tree says so to its descendants (see
    // parallax::config): they then take a rank directory of their own.
    if std::env::var_os("PARALLAX_PARENT_PID").is_none() {
        std::env::set_var("PARALLAX_PARENT_PID", std::process::id().to_string());
    }
    true
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;
