//! Runs `parallax-bench accuracy --suites user --quick --json` (the C,
//! C++ and Fortran programs of workloads/user, built with
//! -finstrument-functions and measured by `parallax run`) and checks the
//! report: every kernel under both settings, with finite figures, and the
//! summaries by path and by dilation band. No accuracy is asked of it:
//! the quick sizes measure nothing.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

/// (program, kernel, language, path) of every kernel of the suite.
const KERNELS: &[(&str, &str, &str, &str)] = &[
    ("seq_c", "fine", "c", "hooks"),
    ("seq_c", "medium", "c", "hooks"),
    ("seq_c", "coarse", "c", "hooks"),
    ("seq_cpp", "fine", "c++", "hooks"),
    ("seq_cpp", "medium", "c++", "hooks"),
    ("seq_cpp", "coarse", "c++", "hooks"),
    ("seq_f90", "fine", "fortran", "hooks"),
    ("seq_f90", "medium", "fortran", "hooks"),
    ("seq_f90", "coarse", "fortran", "hooks"),
    ("threads", "barrier", "c", "pthread"),
    ("threads", "mutex", "c", "pthread"),
    ("threads", "condvar", "c", "pthread"),
    ("mpi", "p2p", "c", "mpi"),
    ("mpi", "coll", "c", "mpi"),
    ("hybrid", "forkjoin", "c", "mpi+threads"),
];

const SETTINGS: &[&str] = &["default", "throttle-off"];

fn finite(v: &Value) -> bool {
    v.as_f64().is_some_and(f64::is_finite)
}

fn positive(v: &Value) -> bool {
    v.as_f64().is_some_and(|x| x.is_finite() && x > 0.0)
}

#[test]
fn accuracy_user_json_has_every_kernel() {
    let out = Command::new(env!("CARGO_BIN_EXE_parallax-bench"))
        .args(["accuracy", "--suites", "user", "--quick", "--json"])
        .args(["--reps", "2"])
        .env_remove("PARALLAX_MODE")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("run parallax-bench");
    assert!(
        out.status.success(),
        "parallax-bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let u = &r["user"];
    assert_eq!(u["reps"], 2);
    assert!(positive(&u["seconds"]), "{u}");
    assert_eq!(u["failed"].as_array().map(Vec::len), Some(0), "{u}");
    let kernels = u["kernels"].as_array().expect("user kernels");
    assert_eq!(kernels.len(), KERNELS.len() * SETTINGS.len());
    for &(program, name, language, path) in KERNELS {
        for &settings in SETTINGS {
            let k = kernels
                .iter()
                .find(|k| k["program"] == program && k["name"] == name && k["settings"] == settings)
                .unwrap_or_else(|| panic!("no {program} {name} {settings}"));
            assert_eq!(k["language"], language, "{k}");
            assert_eq!(k["path"], path, "{k}");
            for f in ["T", "T_m", "T_a", "T_m_printed", "dilation"] {
                assert!(positive(&k[f]), "{f} of {k}");
            }
            for f in [
                "error",
                "measured_error",
                "error_min",
                "error_max",
                "chance_error",
            ] {
                assert!(finite(&k[f]), "{f} of {k}");
            }
            for f in ["T_reps", "T_m_reps", "T_a_reps"] {
                let v = k[f].as_array().unwrap_or_else(|| panic!("{f} of {k}"));
                assert_eq!(v.len(), 2, "{f} of {k}");
                assert!(v.iter().all(positive), "{f} of {k}");
            }
            let e = k["error"].as_f64().unwrap();
            assert!(
                k["error_min"].as_f64().unwrap() <= e + 1e-3
                    && e <= k["error_max"].as_f64().unwrap() + 1e-3,
                "{k}"
            );
            assert!(k["size"].as_u64().is_some_and(|n| n > 0), "{k}");
            assert!(k["events"].as_u64().is_some_and(|n| n > 0), "{k}");
            // The kernel function ran on every rank.
            let ranks = if path.starts_with("mpi") { 2 } else { 1 };
            assert_eq!(k["ranks"], ranks, "{k}");
            assert_eq!(k["locations"], ranks, "{k}");
            let band = k["band"].as_str().unwrap();
            assert!(["<=2", "2-10", ">=10"].contains(&band), "{k}");
        }
    }
    for &settings in SETTINGS {
        let s = &u["summary"][settings];
        let paths: BTreeSet<&str> = s["path"]
            .as_object()
            .unwrap_or_else(|| panic!("summary of {settings}: {u}"))
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            paths,
            BTreeSet::from(["hooks", "pthread", "mpi", "mpi+threads"]),
            "{settings}"
        );
        let mut counted = 0;
        for g in s["band"].as_object().expect("bands").values() {
            counted += g["kernels"].as_u64().unwrap();
            for f in [
                "median_abs_error",
                "worst_abs_error",
                "median_abs_measured_error",
            ] {
                assert!(finite(&g[f]), "{f} of {g}");
            }
        }
        assert_eq!(counted as usize, KERNELS.len(), "{settings}");
    }
}
