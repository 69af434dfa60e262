//! `parallax validate` on a small C program built with
//! -finstrument-functions: the report's structure and the consistency of
//! its figures (not how accurate compensation is), the program's output
//! shown once, and failures reported as such.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

/// A program with a few thousand calls of instrumented functions that
/// prints one line.
const PROGRAM: &str = r#"
#include <stdio.h>
__attribute__((noinline)) unsigned long leaf(unsigned long x) {
    for (int i = 0; i < 20; i++) x = (x ^ (x >> 29)) * 0x9E3779B97F4A7C15ul;
    return x;
}
__attribute__((noinline)) unsigned long work(long n) {
    unsigned long x = 1;
    for (long i = 0; i < n; i++) x = leaf(x + i);
    return x;
}
int main(void) {
    printf("validate-marker %lu\n", work(200000));
    return 0;
}
"#;

fn program(d: &Path) -> PathBuf {
    let src = d.join("calls.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = d.join("calls");
    compile(
        "gcc",
        &[
            "-O2",
            "-g",
            "-finstrument-functions",
            "-o",
            exe.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
    );
    exe
}

fn validate(args: &[&str], cmd: &[&str]) -> Output {
    preload();
    parallax()
        .arg("validate")
        .args(args)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("not a number: {x}")))
        .collect()
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn validate_json_has_every_run_and_consistent_figures() {
    let d = tmp("validate-json");
    let exe = program(&d);
    let keep = d.join("kept");
    let o = validate(
        &["--runs", "3", "--json", "--keep", keep.to_str().unwrap()],
        &[exe.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    // With --json the program's output goes to stderr, once.
    assert_eq!(
        stderr(&o).matches("validate-marker").count(),
        1,
        "{}",
        stderr(&o)
    );
    assert_eq!(r["runs"], 3);
    assert_eq!(r["command"][0], exe.to_str().unwrap());
    let plain = numbers(&r["plain_s"]);
    let measured = numbers(&r["measured_s"]);
    let approx = numbers(&r["approximated_s"]);
    let removed = numbers(&r["removed_s"]);
    let outside = numbers(&r["outside_events_s"]);
    for v in [&plain, &measured, &approx, &removed, &outside] {
        assert_eq!(v.len(), 3, "{r}");
    }
    assert!(plain.iter().all(|&t| t > 0.0 && t.is_finite()), "{r}");
    assert!(measured.iter().all(|&t| t > 0.0 && t.is_finite()), "{r}");
    for i in 0..3 {
        // Approximated = measured - removed, removed >= 0, and what lay
        // outside the events is part of the measured time.
        assert!(removed[i] >= 0.0 && outside[i] >= 0.0, "{r}");
        assert!((approx[i] - (measured[i] - removed[i])).abs() < 1e-9, "{r}");
        assert!(removed[i] + outside[i] <= measured[i] + 1e-9, "{r}");
    }
    // The program made 200,000 calls of `leaf`: their probes were removed.
    assert!(removed.iter().all(|&x| x > 0.0), "{r}");
    let t = median(&plain);
    assert_eq!(r["plain"]["median"].as_f64(), Some(t));
    let err = r["error"]["approximated"].as_f64().unwrap();
    assert!((err - (median(&approx) / t - 1.0)).abs() < 1e-12, "{r}");
    let lo = r["error"]["approximated_min"].as_f64().unwrap();
    let hi = r["error"]["approximated_max"].as_f64().unwrap();
    assert!(lo <= err && err <= hi, "{r}");
    let (nlo, nhi) = (
        r["noise"]["plain_min"].as_f64().unwrap(),
        r["noise"]["plain_max"].as_f64().unwrap(),
    );
    assert!(nlo <= 0.0 && nhi >= 0.0, "{r}");
    assert_eq!(r["within_noise"].as_bool(), Some(nlo <= err && err <= nhi));
    // Per run, the approximated time at the cores' fastest and slowest
    // speed, where the run timed it; the plain median is counted in it.
    let ranges = r["approximated_speed_range_s"].as_array().unwrap();
    assert_eq!(ranges.len(), 3, "{r}");
    let mut within = 0;
    for x in ranges.iter().filter(|x| !x.is_null()) {
        let (lo, hi) = (x[0].as_f64().unwrap(), x[1].as_f64().unwrap());
        assert!(0.0 <= lo && lo <= hi, "{r}");
        within += (lo..=hi).contains(&t) as u64;
    }
    assert_eq!(r["plain_within_speed_range"].as_u64(), Some(within), "{r}");
    // One process: one rank, measured and approximated in every run.
    let ranks = r["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 1, "{r}");
    assert_eq!(ranks[0]["rank"], 0);
    assert_eq!(numbers(&ranks[0]["approximated_s"]).len(), 3);
    // --keep: every measured experiment and its compensation are there.
    for i in 1..=3 {
        assert!(keep.join(format!("run-{i}/manifest.json")).is_file());
        assert!(keep.join(format!("run-{i}-compensated")).is_dir());
    }
}

#[test]
fn validate_text_shows_the_output_once_and_passes_run_options() {
    let d = tmp("validate-text");
    let exe = program(&d);
    let o = validate(
        &["--runs", "2", "--throttle", "off", "--mode", "trace"],
        &[exe.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches("validate-marker").count(), 1, "{out}");
    assert!(
        out.contains("under `parallax run --mode trace --throttle off`"),
        "{out}"
    );
    for row in [
        "plain",
        "measured",
        "approximated",
        "Error of the approximated time",
    ] {
        assert!(out.contains(row), "{row}: {out}");
    }
    // Progress: each run on stderr.
    let err = stderr(&o);
    assert!(err.contains("run 2/2 under parallax run"), "{err}");

    let o = validate(&["--runs", "1", "--quiet"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("validate-marker"), "{}", stdout(&o));
    assert!(!stderr(&o).contains("validate-marker"), "{}", stderr(&o));
}

#[test]
fn validate_reports_a_failing_program() {
    // Fails on its own.
    let o = validate(
        &["--runs", "2"],
        &["sh", "-c", "echo broken-input >&2; exit 3"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("failed without Parallax (exit 3) in run 1"),
        "{err}"
    );
    assert!(err.contains("broken-input"), "{err}");
    // Fails only when measured (it refuses to run with anything preloaded).
    let o = validate(
        &["--runs", "2"],
        &[
            "sh",
            "-c",
            "test -z \"$LD_PRELOAD\" || { echo preloaded >&2; exit 4; }",
        ],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("failed under `parallax run` in run 1 (it ended with exit 4)"),
        "{err}"
    );
    assert!(err.contains("preloaded"), "{err}");
    // A program that does not exist.
    let o = validate(&["--runs", "1"], &["/nonexistent/program"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cannot run `/nonexistent/program`"),
        "{}",
        stderr(&o)
    );
}
