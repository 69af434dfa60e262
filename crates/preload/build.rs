//! Builds the C shim of the interposition library: the entry points that
//! Rust cannot define (C variadics, caller addresses, handles and macros of
//! mpi.h and shmem.h) and that must be exported from the cdylib.
//!
//! - `shim/hooks.c`, `shim/pthread.c`, `shim/process.c`, `shim/gasp.c`,
//!   `shim/omp.c`, `shim/gomp.c` and `shim/ompt.c` (which declares the
//!   OMPT interface itself: no OpenMP runtime's header is needed) are
//!   always built,
//!   and `shim/calibrate.c` with `-finstrument-functions` (the calls that
//!   calibrate the compiler hooks).
//! - `shim/mpi.c` is built against the mpi.h of the `mpicc` found on PATH
//!   (or `PARALLAX_MPICC`), when there is one: `mpicc -showme:compile`
//!   (Open MPI) or `mpicc -show` (MPICH) gives the include flags.
//!   `PARALLAX_NO_MPI=1` skips it.
//! - `shim/shmem.c` likewise with `oshcc` (`PARALLAX_OSHCC`,
//!   `PARALLAX_NO_SHMEM=1`), when shmem.h and pshmem.h are there.
//!
//! The library must load into programs without MPI or SHMEM, so every
//! symbol that the MPI and SHMEM objects take from those libraries
//! (`PMPI_*`, `pshmem_*`, and the data behind handles such as
//! `MPI_COMM_WORLD`) is made weak with `objcopy`: it resolves to null when
//! the library is absent, and the wrappers, never called then, never use it.
//!
//! rustc exports only Rust symbols from a cdylib; a second version script
//! (`exports.map`) exports the C entry points.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(pxl_mpi, pxl_shmem)");
    for v in [
        "PARALLAX_MPICC",
        "PARALLAX_OSHCC",
        "PARALLAX_NO_MPI",
        "PARALLAX_NO_SHMEM",
        "CC",
    ] {
        println!("cargo::rerun-if-env-changed={v}");
    }
    for f in [
        "shim/pxl.h",
        "shim/hooks.c",
        "shim/pthread.c",
        "shim/process.c",
        "shim/gasp.c",
        "shim/omp.h",
        "shim/omp.c",
        "shim/gomp.c",
        "shim/ompt.c",
        "shim/calibrate.c",
        "shim/mpi.c",
        "shim/shmem.c",
        "include/gasp.h",
        "include/gasp_c.h",
        "include/gasp_upc.h",
        "exports.map",
    ] {
        println!("cargo::rerun-if-changed={f}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));

    let mut objects = compile(
        &[
            "shim/hooks.c",
            "shim/pthread.c",
            "shim/process.c",
            "shim/gasp.c",
            "shim/omp.c",
            "shim/gomp.c",
            "shim/ompt.c",
        ],
        &[],
    );
    // The functions through which calibration times the compiler hooks.
    objects.extend(compile(
        &["shim/calibrate.c"],
        &["-finstrument-functions".into()],
    ));

    if let Some(flags) = model_flags("PARALLAX_NO_MPI", "PARALLAX_MPICC", "mpicc", "mpi.h") {
        let objs = compile(&["shim/mpi.c"], &flags);
        weaken(&objs, &out);
        objects.extend(objs);
        println!("cargo::rustc-cfg=pxl_mpi");
    } else {
        println!("cargo::warning=no mpicc with mpi.h found: building without MPI wrappers");
    }
    if let Some(flags) = model_flags("PARALLAX_NO_SHMEM", "PARALLAX_OSHCC", "oshcc", "pshmem.h") {
        let objs = compile(&["shim/shmem.c"], &flags);
        weaken(&objs, &out);
        objects.extend(objs);
        println!("cargo::rustc-cfg=pxl_shmem");
    } else {
        println!("cargo::warning=no oshcc with shmem.h found: building without OpenSHMEM wrappers");
    }

    let mut b = cc::Build::new();
    for o in &objects {
        b.object(o);
    }
    b.link_lib_modifier("+whole-archive");
    b.compile("pxl_shim");
    let map =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir")).join("exports.map");
    println!(
        "cargo::rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
}

/// Compiles `files` into object files.
fn compile(files: &[&str], flags: &[String]) -> Vec<PathBuf> {
    let mut b = cc::Build::new();
    b.include("include")
        .include("shim")
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-fno-omit-frame-pointer")
        .flag("-fvisibility=default");
    for f in flags {
        b.flag(f);
    }
    for f in files {
        b.file(f);
    }
    b.compile_intermediates()
}

/// The include flags of a model's compiler wrapper, if it exists and its
/// headers have `header`.
fn model_flags(skip: &str, var: &str, default: &str, header: &str) -> Option<Vec<String>> {
    if std::env::var(skip).is_ok_and(|v| v == "1") {
        return None;
    }
    let wrapper = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let run = |args: &[&str]| -> Option<String> {
        let o = Command::new(&wrapper).args(args).output().ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    // Open MPI's wrappers answer -showme:compile; MPICH's -show prints the
    // whole command line.
    let text = run(&["-showme:compile"]).or_else(|| run(&["-show"]))?;
    let flags: Vec<String> = text
        .split_whitespace()
        .filter(|f| f.starts_with("-I") || f.starts_with("-D"))
        .map(str::to_string)
        .collect();
    let mut dirs: Vec<PathBuf> = flags
        .iter()
        .filter_map(|f| f.strip_prefix("-I"))
        .map(PathBuf::from)
        .collect();
    dirs.push(PathBuf::from("/usr/include"));
    dirs.iter()
        .any(|d| d.join(header).is_file())
        .then_some(flags)
}

/// Makes every symbol the objects take from elsewhere weak, except the
/// library's own Rust entry points.
fn weaken(objects: &[PathBuf], out: &Path) {
    for o in objects {
        let nm = Command::new("nm")
            .args(["-u", "--format=just-symbols"])
            .arg(o)
            .output()
            .expect("nm (binutils) is needed to build the MPI and SHMEM wrappers");
        assert!(nm.status.success(), "nm failed on {}", o.display());
        let list: String = String::from_utf8_lossy(&nm.stdout)
            .lines()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .filter(|s| !s.starts_with("parallax_pl_") && *s != "_GLOBAL_OFFSET_TABLE_")
            .map(|s| format!("{s}\n"))
            .collect();
        if list.is_empty() {
            continue;
        }
        let file = out.join(format!(
            "{}.weak",
            o.file_name().unwrap_or_default().to_string_lossy()
        ));
        std::fs::write(&file, list).expect("write the weak-symbol list");
        let st = Command::new("objcopy")
            .arg(format!("--weaken-symbols={}", file.display()))
            .arg(o)
            .status()
            .expect("objcopy (binutils) is needed to build the MPI and SHMEM wrappers");
        assert!(st.success(), "objcopy failed on {}", o.display());
    }
}
