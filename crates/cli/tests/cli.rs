//! The `parallax` command end to end, on real programs and real files.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{parallax, preload, report_json, stderr, stdout, tmp_path};

/// A test program built from the workloads folder by `cargo test`.
fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_parallax"))
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    tmp_path(name)
}

/// Calls of `region` in a flat profile (JSON rows).
fn calls(flat: &Value, region: &str) -> u64 {
    flat.as_array()
        .unwrap()
        .iter()
        .find(|r| r["region"] == region)
        .map_or(0, |r| r["count"].as_u64().unwrap())
}

#[test]
fn demo_measures_and_reports_the_workload() {
    let dir = tmp("demo");
    let o = parallax()
        .args(["demo", "--threads", "3", "--iterations", "30", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for needle in [
        "Flat profile, all locations",
        "Call paths",
        "Barrier::wait",
        "compute",
        "Mutex::lock",
        "Location worker-0 (thread ",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(dir.join("manifest.json").is_file());
    let r = report_json(&dir);
    assert_eq!(
        r["locations"].as_array().unwrap().len(),
        4,
        "main and 3 workers"
    );
    let total = &r["total"]["flat"];
    assert_eq!(calls(total, "compute"), 90);
    assert_eq!(calls(total, "Barrier::wait"), 90);
    assert_eq!(calls(total, "iteration"), 90);
    assert_eq!(calls(total, "thread::join"), 3);
    // The imbalance shows: the last worker computes most and waits least.
    let per = |loc: &Value, region: &str| {
        loc["flat"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["region"] == region)
            .unwrap()["exclusive_ns"]
            .as_f64()
            .unwrap()
    };
    let locs: Vec<&Value> = r["locations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| calls(&l["flat"], "compute") > 0)
        .collect();
    let fastest = locs.iter().find(|l| l["name"] == "worker-0").unwrap();
    let slowest = locs.iter().find(|l| l["name"] == "worker-2").unwrap();
    // Shortest visits: three threads share two cores, so totals can be
    // stretched by preemption, but the quickest of thirty visits is not.
    let min = |loc: &Value| {
        loc["flat"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["region"] == "compute")
            .unwrap()["min_ns"]
            .as_f64()
            .unwrap()
    };
    assert!(
        min(slowest) > 1.5 * min(fastest),
        "{} vs {}",
        min(slowest),
        min(fastest)
    );
    // Over thirty iterations the fastest worker's waiting (some 0.5 ms an
    // iteration) outweighs the slowest one's waiting for a one-off stall
    // of another worker, such as a thread's set-up creating its event file
    // (milliseconds where many files were just deleted).
    assert!(
        per(fastest, "Barrier::wait") > per(slowest, "Barrier::wait"),
        "{} vs {}",
        per(fastest, "Barrier::wait"),
        per(slowest, "Barrier::wait")
    );
    // A second demo into the same directory replaces the first.
    let o = parallax()
        .args(["demo", "--threads", "2", "--iterations", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(report_json(&dir)["locations"].as_array().unwrap().len(), 3);
}

#[test]
fn run_measures_a_linked_program_and_keeps_its_exit_code() {
    preload();
    for mode in ["trace", "profile", "both"] {
        let dir = tmp(&format!("run-{mode}"));
        let o = parallax()
            .args(["run", "--mode", mode, "--out"])
            .arg(&dir)
            .arg("--")
            .arg(example("imbalance"))
            .args(["3", "7"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("checksum"),
            "the program's own output passes through"
        );
        let r = report_json(&dir);
        let total = &r["total"]["flat"];
        assert_eq!(calls(total, "compute"), 21, "{mode}");
        assert_eq!(calls(total, "work"), 3, "{mode}");
        assert_eq!(calls(total, "Mutex::lock"), 21, "{mode}");
        let source = if mode == "trace" { "trace" } else { "runtime" };
        assert!(r["locations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["source"] == source));
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["status"], "exit 0");
    }
}

#[test]
fn run_with_fenced_clock_reads_records_their_cost() {
    preload();
    // The cheapest calibrated clock read of each run, ns.
    let clock_read = |clock: &[&str]| {
        let dir = tmp(&format!("run-clock-{}", clock.len()));
        let o = parallax()
            .args(["run", "--mode", "trace", "--no-report", "--out"])
            .arg(&dir)
            .args(clock)
            .arg("--")
            .arg(example("imbalance"))
            .args(["3", "7"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{clock:?}: {}", stderr(&o));
        let exp = parallax_model::experiment::Experiment::open(&dir).unwrap();
        let p = &exp.processes[0];
        p.calibration
            .iter()
            .filter(|c| c.probe == parallax_model::defs::Probe::ClockRead)
            .map(|c| c.min_ns)
            .fold(f64::INFINITY, f64::min)
    };
    let plain = clock_read(&[]);
    let fenced = clock_read(&["--clock", "tsc-fenced"]);
    assert!(plain.is_finite() && fenced.is_finite());
    assert!(fenced > plain, "fenced {fenced} ns, plain {plain} ns");
    let o = parallax()
        .args(["run", "--clock", "hpet", "--", "true"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("tsc-fenced"), "{}", stderr(&o));
}

#[test]
fn run_of_a_crashing_program_keeps_its_events() {
    preload();
    let dir = tmp("crash");
    let o = parallax()
        .args(["run", "--mode", "trace", "--out"])
        .arg(&dir)
        .arg("--")
        .arg(example("imbalance"))
        .args(["2", "5", "crash"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(128 + 11), "{}", stderr(&o));
    assert!(stderr(&o).contains("killed by signal 11"), "{}", stderr(&o));
    let r = report_json(&dir);
    assert_eq!(calls(&r["total"]["flat"], "compute"), 10);
    assert_eq!(r["processes"][0]["finished_cleanly"], false);
}

#[test]
fn run_explains_what_cannot_run() {
    preload();
    let o = parallax()
        .args(["run", "--", "no-such-program-xyz"])
        .output()
        .unwrap();
    // The statuses a shell gives: 127 not found, 126 not runnable.
    assert_eq!(o.status.code(), Some(127));
    assert!(stderr(&o).contains("not found on PATH"), "{}", stderr(&o));
    let f = tmp("not-exec");
    std::fs::write(&f, "data").unwrap();
    let o = parallax().args(["run", "--"]).arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(126));
    assert!(stderr(&o).contains("not executable"), "{}", stderr(&o));
    let dir = tmp("unlinked");
    let o = parallax()
        .args(["run", "--out"])
        .arg(&dir)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(stderr(&o).contains("recorded nothing"), "{}", stderr(&o));
    let o = parallax()
        .args(["run", "--mode", "fast", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("profile, trace, both"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn report_survives_damaged_files_and_refuses_non_experiments() {
    preload();
    let dir = tmp("damaged");
    let o = parallax()
        .args(["run", "--mode", "trace", "--buffer", "4k", "--out"])
        .arg(&dir)
        .arg("--")
        .arg(example("imbalance"))
        .args(["2", "200"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let full = calls(&report_json(&dir)["total"]["flat"], "compute");
    assert_eq!(full, 400);
    // Cut a worker's event file in the middle of a block.
    let rank = dir.join("rank-00000");
    let victim = std::fs::read_dir(&rank)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pxe"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let len = std::fs::metadata(&victim).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&victim)
        .unwrap();
    f.set_len(len * 2 / 3).unwrap();
    let o = parallax().args(["report"]).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Words only: a long path wraps the warning anywhere.
    let words = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("warning:") && words.contains("file ends"),
        "{}",
        stdout(&o)
    );
    let cut = calls(&report_json(&dir)["total"]["flat"], "compute");
    assert!(
        cut < full && cut > full / 3,
        "kept the complete blocks: {cut} of {full}"
    );
    // Not an experiment at all.
    let empty = tmp("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = parallax().args(["report"]).arg(&empty).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a Parallax experiment"),
        "{}",
        stderr(&o)
    );
    let o = parallax()
        .args(["report", "/nonexistent/dir"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/dir"), "{}", stderr(&o));
}

#[test]
fn calibrate_prints_a_table_and_json() {
    preload();
    let o = parallax()
        .args(["calibrate", "--batches", "20"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let t = stdout(&o);
    assert!(
        t.contains("clock_read") && t.contains("enter") && t.contains("variance"),
        "{t}"
    );
    let o = parallax()
        .args(["calibrate", "--json", "--batches", "20"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let probes = v["probes"].as_array().unwrap();
    // Every probe in 3 modes: clock read, enter, leave, event, disabled,
    // the register-preserving enter and leave, the pair in the cheapest and
    // the dearest loop, and, timed inside the interposition library, the
    // four C entry points and the compiler hooks (pair, pair recording
    // nothing, the pair's enter and leave, and the pair recording nothing
    // in the cheapest and dearest loop with how much of it hides there).
    assert_eq!(probes.len(), 3 * 21, "21 probes in 3 modes");
    assert!(probes.iter().any(|p| p["probe"] == "enter_preserving"));
    let in_context = |name: &str| {
        probes
            .iter()
            .find(|p| p["mode"] == "trace" && p["probe"] == name)
            .and_then(|p| p["mean_ns"].as_f64())
            .unwrap()
    };
    assert!(in_context("pair_in_context_min") <= in_context("pair_in_context_max"));
    for name in [
        "enter_c",
        "hook_pair",
        "hook_skipped",
        "enter_hook",
        "leave_hook",
    ] {
        assert!(in_context(name) > 0.0, "{name}");
    }
    // A call that records nothing costs less than one that records.
    assert!(in_context("hook_skipped") < in_context("hook_pair"));
    let enter = probes
        .iter()
        .find(|p| p["mode"] == "trace" && p["probe"] == "enter")
        .unwrap();
    assert!(enter["mean_ns"].as_f64().unwrap() > 0.0);
    assert!(v["clock"]["ns_per_tick"].as_f64().unwrap() > 0.0);
}

#[test]
fn help_explains_every_command() {
    let o = parallax().arg("--help").output().unwrap();
    let h = stdout(&o);
    for c in ["demo", "report", "calibrate", "run"] {
        assert!(h.contains(c), "{h}");
    }
    let o = parallax().args(["run", "--help"]).output().unwrap();
    assert!(stdout(&o).contains("--mode"));
    let o = parallax().arg("frobnicate").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn doctor_reports_what_this_machine_has_and_how_to_get_the_rest() {
    preload();
    let o = parallax().args(["doctor", "--json"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let check = |name: &str| {
        checks
            .iter()
            .find(|c| c["name"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no check {name}: {v}"))
    };
    // scripts/setup.sh installs all of these, and the test built the
    // interposition library next to this parallax.
    for name in [
        "interposition library",
        "OTF2 export",
        "MPI",
        "OpenSHMEM",
        "C compiler",
        "OpenMP",
    ] {
        assert_eq!(check(name)["ok"], true, "{name}: {v}");
    }
    // Whatever the machine, every missing capability says how to get it.
    for c in checks {
        assert_eq!(c["ok"].as_bool().unwrap(), c["fix"].is_null(), "{c}");
    }
    // The text form says the same, a line per check.
    let o = parallax().arg("doctor").output().unwrap();
    let text = stdout(&o);
    assert_eq!(
        text.lines().filter(|l| !l.starts_with(' ')).count(),
        checks.len(),
        "{text}"
    );
}
