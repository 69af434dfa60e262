//! The built library: it exports the entry points of every wrapper family
//! it was built with, and loads into any program (one without MPI or SHMEM
//! too, whose symbols the library takes weakly), measuring or not.

use std::path::PathBuf;
use std::process::Command;

/// Builds the cdylib (`cargo test` only builds test harnesses) and returns
/// its path.
fn library() -> PathBuf {
    let st = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "parallax-preload"])
        .status()
        .unwrap();
    assert!(st.success());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let lib = target.join("debug/libparallax_preload.so");
    assert!(lib.is_file(), "{}", lib.display());
    lib
}

#[test]
fn exports_and_loads_anywhere() {
    let lib = library();
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .unwrap();
    let syms = String::from_utf8_lossy(&nm.stdout);
    for s in [
        "__cyg_profile_func_enter",
        "__cyg_profile_func_exit",
        "pthread_create",
        "pthread_mutex_lock",
        "sem_post",
        "gasp_event_notify",
        "gasp_init",
        "ompt_start_tool",
        "__kmpc_dispatch_init_4",
        "__kmpc_dispatch_next_8u",
        "__kmpc_for_static_init_4",
        "__kmpc_end_critical",
        "__kmpc_end_ordered",
        "GOMP_parallel",
        "GOMP_loop_nonmonotonic_dynamic_next",
        "omp_set_lock",
    ] {
        assert!(syms.contains(&format!(" {s}\n")), "{s} not exported");
    }
    let mpi = Command::new("sh")
        .args(["-c", "command -v mpicc"])
        .status()
        .is_ok_and(|s| s.success());
    if mpi {
        for s in ["MPI_Init", "MPI_Send", "MPI_Waitall", "MPI_Allreduce"] {
            assert!(syms.contains(&format!(" {s}\n")), "{s} not exported");
        }
    }
    let dir = std::env::temp_dir().join(format!("parallax-preload-lib-{}", std::process::id()));
    for mode in ["off", "trace"] {
        let _ = std::fs::remove_dir_all(&dir);
        let o = Command::new("sh")
            .args(["-c", "echo loaded; ls / > /dev/null"])
            .env("LD_PRELOAD", &lib)
            .env("PARALLAX_MODE", mode)
            .env("PARALLAX_OUT", &dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), "loaded\n");
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
