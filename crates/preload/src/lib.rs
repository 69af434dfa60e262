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
pub mod reserve;
mod settings;
pub mod symbols;

#[global_allocator]
static ALLOCATOR: reserve::WithReserve = reserve::WithReserve;

use std::sync::atomic::{AtomicBool, Ordering::*};

/// Set when this process must not be measured at all (a launcher such as
/// `mpirun`, or measurement off): the wrappers and hooks return at once.
static DEAD: AtomicBool = AtomicBool::new(false);

/// Whether this process is never measured.
pub(crate) fn dead() -> bool {
    DEAD.load(Relaxed)
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

/// Runs when the library is loaded, before the program's own constructors.
extern "C" fn on_load() {
    // A panic in this library is caught where the program called in and
    // said in one line (`parallax::contained`); the standard library's own
    // report of it (a backtrace) would be more lines in the program's
    // output. This library holds its own copy of the standard library:
    // the hook is not the program's.
    std::panic::set_hook(Box::new(|_| {}));
    if parallax::contained(start).is_none() {
        DEAD.store(true, Release);
    }
}

/// Decides whether this process is measured.
fn start() {
    let var = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    if var("PARALLAX_MODE").is_none() {
        DEAD.store(true, Release);
        return;
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
        DEAD.store(true, Release);
        // Keep the runtime of this copy off for good.
        let _ = parallax::init(parallax::Config::new(parallax::Mode::Off, "."));
        return;
    }
    // A bad setting is said now, once, even if the program never makes a
    // call that would start measuring.
    match parallax::Config::from_env() {
        Ok(c) if c.mode == parallax::Mode::Off => {
            DEAD.store(true, Release);
            return;
        }
        Ok(_) => {}
        Err(e) => {
            parallax::failsafe::tell_once(
                parallax::failsafe::Cause::Config,
                format_args!("measurement is off: {e}"),
            );
            DEAD.store(true, Release);
            return;
        }
    }
    parallax::calibrate::set_c_entry(capi::calibration_entry());
    // The first measured process of a tree says so to its descendants (see
    // parallax::config): they then take a rank directory of their own.
    if std::env::var_os("PARALLAX_PARENT_PID").is_none() {
        std::env::set_var("PARALLAX_PARENT_PID", std::process::id().to_string());
    }
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;
