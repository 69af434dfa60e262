//! Runs `parallax-bench accuracy --quick --json` on a few kernels of every
//! suite (Livermore in Rust and in C, threads, MPI) and checks the report:
//! every kernel measured raw, full and compensated, the summary counting
//! them, and the compensation speed given for both kinds of kernel.

use std::process::Command;

use serde_json::Value;

#[test]
fn accuracy_json_measures_every_suite() {
    let out = Command::new(env!("CARGO_BIN_EXE_parallax-bench"))
        .args(["accuracy", "--quick", "--json", "--reps", "2"])
        .args(["--suites", "rust,c,threads,mpi", "--kernels", "1,3"])
        .args(["--threads", "2", "--ranks", "2"])
        .env_remove("PARALLAX_MODE")
        .output()
        .expect("run parallax-bench");
    assert!(
        out.status.success(),
        "parallax-bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let kernels = r["kernels"].as_array().expect("kernels");
    let positive = |v: &Value| v.as_f64().is_some_and(|x| x.is_finite() && x > 0.0);
    let count = |kind: &str, suite: &str| {
        kernels
            .iter()
            .filter(|k| k["kind"] == kind && k["suite"] == suite)
            .count()
    };
    // Two Livermore kernels in each language; the seven thread kernels and
    // the four MPI kernels.
    assert_eq!(count("sequential", "rust"), 2);
    assert_eq!(count("sequential", "c"), 2);
    assert_eq!(count("parallel", "threads"), 7);
    assert_eq!(count("parallel", "mpi"), 4);
    for k in kernels {
        assert!(k["name"].as_str().is_some_and(|n| !n.is_empty()), "{k}");
        for t in ["T", "T_m", "T_a"] {
            assert!(positive(&k[t]), "{t} of {k}");
        }
        assert!(k["events"].as_u64().is_some_and(|e| e > 0), "{k}");
    }
    for (kind, n) in [("sequential", 4), ("parallel", 11)] {
        assert_eq!(r["summary"][kind]["kernels"], n, "{kind}");
        assert!(
            positive(&r["compensation_events_per_s_by_kind"][kind]),
            "{kind}"
        );
    }
    assert!(positive(&r["compensation_events_per_s"]));
    // The DOACROSS kernels' self-scheduled loops, and only theirs, are also
    // compensated with their iterations handed out again.
    for k in kernels {
        let doacross = k["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("doacross"));
        assert_eq!(positive(&k["T_a_liberal"]), doacross, "{k}");
    }
    assert_eq!(r["summary"]["parallel_liberal_loops"]["kernels"], 11);
}
