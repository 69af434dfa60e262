//! `parallax compensate` on real runs: a threaded C program and an MPI
//! program measured by `parallax run`, compensated by the real CLI; the
//! approximated experiment keeps every event, shortens the run, respects
//! every message's order, and is the same whatever the analysis threads.

mod common;
mod synth;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;
use parallax_model::event::{Event, EventKind};
use serde_json::Value;

fn compensate(dir: &Path, out: &Path, extra: &[&str]) -> Value {
    let o = parallax()
        .arg("compensate")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// Every location's events: (rank, thread) -> events.
fn all_events(dir: &Path) -> BTreeMap<(u32, u32), Vec<parallax_model::event::Event>> {
    let exp = open(dir);
    let mut out = BTreeMap::new();
    for p in &exp.processes {
        for (t, evs) in events(p) {
            out.insert((p.rank, t), evs);
        }
    }
    out
}

fn check_same_events(a: &Path, b: &Path) {
    let (x, y) = (all_events(a), all_events(b));
    assert_eq!(x.len(), y.len());
    for (k, ev) in &x {
        let kinds: Vec<_> = ev.iter().map(|e| e.kind).collect();
        let kinds2: Vec<_> = y[k].iter().map(|e| e.kind).collect();
        assert_eq!(kinds, kinds2, "location {k:?} keeps its events in order");
    }
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for r in std::fs::read_dir(dir).unwrap().flatten() {
        if !r.file_name().to_string_lossy().starts_with("rank-") {
            continue;
        }
        for f in std::fs::read_dir(r.path()).unwrap().flatten() {
            let name = format!(
                "{}/{}",
                r.file_name().to_string_lossy(),
                f.file_name().to_string_lossy()
            );
            out.insert(name, std::fs::read(f.path()).unwrap());
        }
    }
    out
}

/// Builds the threaded C workload `program` (workloads/c/`program`.c)
/// and traces it with `args` under `parallax run`: the test's directory
/// and the experiment.
fn traced_c(program: &str, args: &[&str]) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = tmp(&format!("comp-{program}"));
    let exe = dir.join(program);
    let source = format!("{program}.c");
    compile(
        "cc",
        &["-O1", &source, "-o", exe.to_str().unwrap(), "-lpthread"],
    );
    preload();
    let exp = dir.join("exp");
    let mut argv = vec![exe.to_str().unwrap()];
    argv.extend(args);
    let o = run(&exp, &["--mode", "trace"], &argv);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, exp)
}

#[test]
fn threaded_c_program_is_compensated() {
    let (dir, exp) = traced_c("pthreads", &["3", "200"]);
    let one = compensate(&exp, &dir.join("c1"), &["--threads", "1"]);
    let two = compensate(&exp, &dir.join("c2"), &["--threads", "2"]);
    assert_eq!(
        files(&dir.join("c1")),
        files(&dir.join("c2")),
        "same output"
    );
    assert_eq!(one["approximated_ns"], two["approximated_ns"]);
    // The range from the probes' cost in context holds the approximation.
    let a = one["approximated_ns"].as_f64().unwrap();
    let range = &one["approximated_range_ns"];
    let (lo, hi) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
    assert!(lo <= a && a <= hi && lo < hi, "{range} {a}");
    // The measured files' summaries are not carried over to the new files.
    assert!(!open(&exp).processes[0].summaries.is_empty());
    assert!(open(&dir.join("c1")).processes[0].summaries.is_empty());
    let measured = one["measured_ns"].as_f64().unwrap();
    let approx = one["approximated_ns"].as_f64().unwrap();
    assert!(approx > 0.0 && approx < measured, "{approx} < {measured}");
    let locs = one["locations"].as_array().unwrap();
    assert_eq!(locs.len(), 4, "main and three workers");
    let deps: u64 = locs
        .iter()
        .map(|l| l["dependencies"].as_u64().unwrap())
        .sum();
    // Each worker: 200 rounds of mutex, rwlocks, spin lock, semaphore and
    // barrier, each a dependency on another thread's post.
    assert!(deps > 3 * 200 * 3, "{deps}");
    assert_eq!(one["forced"], 0);
    for l in locs {
        assert!(l["probe_ns"].as_f64().unwrap() > 0.0);
    }
    check_same_events(&exp, &dir.join("c1"));
    // The approximated experiment is an experiment: report reads it, and
    // it cannot be compensated twice.
    report_json(&dir.join("c1"));
    let again = parallax()
        .arg("compensate")
        .arg(dir.join("c1"))
        .arg("--out")
        .arg(dir.join("c3"))
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already compensated"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn self_scheduled_c_loops_are_handed_out_again() {
    let (dir, exp) = traced_c("selfsched", &["2", "400", "2"]);
    let kept = compensate(&exp, &dir.join("c"), &[]);
    assert_eq!(kept["rescheduled"], serde_json::json!([]));
    check_same_events(&exp, &dir.join("c"));
    let moved = compensate(&exp, &dir.join("l"), &["--liberal=loops"]);
    assert_eq!(moved["warnings"], serde_json::json!([]), "{moved}");
    let loops = moved["rescheduled"].as_array().unwrap();
    assert_eq!(loops.len(), 2, "one loop per pass: {moved}");
    let after = all_events(&dir.join("l"));
    for lp in loops {
        assert_eq!(lp["iterations"], 400);
        let threads = lp["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 2);
        for side in ["measured", "rescheduled"] {
            let n: u64 = threads.iter().map(|t| t[side].as_u64().unwrap()).sum();
            assert_eq!(n, 400, "{side}: {lp}");
        }
        // Each thread now records the iterations the re-simulation gave
        // it, and the one that found none left.
        for t in threads {
            let thread = t["thread"].as_u64().unwrap() as u32;
            let taken = after[&(0, thread)]
                .iter()
                .filter(|e| {
                    matches!(e.kind, EventKind::Iteration { loop_id, .. }
                        if loop_id == lp["loop"].as_u64().unwrap())
                })
                .count() as u64;
            assert_eq!(taken, t["rescheduled"].as_u64().unwrap() + 1, "{t}");
        }
    }
    // Every event is kept, on whichever thread now runs it, and each
    // thread's times stay in order.
    let count = |m: &BTreeMap<(u32, u32), Vec<Event>>| {
        let mut c: BTreeMap<&'static str, u64> = BTreeMap::new();
        for e in m.values().flatten() {
            *c.entry(e.kind.name()).or_default() += 1;
        }
        c
    };
    assert_eq!(count(&all_events(&exp)), count(&after));
    for evs in after.values() {
        assert!(evs.windows(2).all(|w| w[0].time <= w[1].time));
    }
    let a = moved["approximated_ns"].as_f64().unwrap();
    assert!(a > 0.0 && a < moved["measured_ns"].as_f64().unwrap());
    // The liberal approximation is an experiment too.
    report_json(&dir.join("l"));
}

#[test]
fn mpi_messages_keep_their_order_after_compensation() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    let dir = tmp("comp-mpi");
    let exe = dir.join("p2p");
    compile("mpicc", &["-O1", "mpi/p2p.c", "-o", exe.to_str().unwrap()]);
    preload();
    let exp = dir.join("exp");
    let mut cmd: Command = parallax();
    cmd.args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&exp)
        .args(["--", "mpirun", "-np", "3"])
        .arg(&exe)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join("c");
    let s = compensate(&exp, &out, &[]);
    assert_eq!(s["forced"], 0, "every receive found its send");
    let removed: f64 = s["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["probe_ns"].as_f64().unwrap())
        .sum();
    assert!(removed > 0.0);
    check_same_events(&exp, &out);
    // No receive completes before its send, in measured or approximated
    // times (messages matched in order per channel).
    for d in [&exp, &out] {
        let mut receives = 0;
        let mut late = 0;
        for (k, (sends, recvs)) in message_times(&open(d)) {
            assert!(
                sends.len() >= recvs.len(),
                "{k:?}: a send for every receive"
            );
            receives += recvs.len();
            late += sends
                .iter()
                .zip(&recvs)
                .filter(|(s, r)| *r + 1.0 < **s)
                .count();
        }
        assert!(receives > 20, "{receives}");
        assert_eq!(late, 0, "{}: receives before their sends", d.display());
    }
}

#[test]
fn imported_experiments_need_a_probe_cost() {
    // An experiment exported to OTF2 and imported back has no calibration
    // of its own: compensation asks for --probe-cost-ns, and accepts it
    // (and its older name --alpha).
    let dir = tmp("comp-import");
    let exp = dir.join("exp");
    let o = parallax()
        .args(["demo", "--out"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let archive = dir.join("demo.otf2");
    let o = parallax()
        .args(["export", "--format", "otf2", "--out"])
        .arg(&archive)
        .arg(&exp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let imported = dir.join("imported");
    let o = parallax()
        .arg("import")
        .arg(&archive)
        .arg("--out")
        .arg(&imported)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = parallax()
        .arg("compensate")
        .arg(&imported)
        .arg("--out")
        .arg(dir.join("c"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--probe-cost-ns"), "{}", stderr(&o));
    let s = compensate(&imported, &dir.join("c"), &["--probe-cost-ns", "30"]);
    assert!(s["approximated_ns"].as_f64().unwrap() < s["measured_ns"].as_f64().unwrap());
    check_same_events(&imported, &dir.join("c"));
    // The demo's barrier imbalance is found in the imported experiment.
    let o = parallax()
        .args(["analyze", "--json"])
        .arg(&imported)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let a: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let patterns: Vec<&str> = a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["pattern"].as_str().unwrap())
        .collect();
    assert!(patterns.contains(&"wait_at_barrier"), "{patterns:?}");
}

#[test]
fn more_locations_than_open_files_allowed_are_compensated() {
    use std::os::unix::process::CommandExt;
    let d = tmp("compensate-wide");
    let exp = d.join("wide");
    let events = synth::mpi_like(&exp, 300, 3);
    let out = d.join("wide-a");
    let mut c = parallax();
    c.arg("compensate")
        .arg(&exp)
        .arg("--out")
        .arg(&out)
        .args(["--alpha", "20", "--json"]);
    // Safety: only setrlimit, which is async-signal-safe, runs in the child.
    unsafe {
        c.pre_exec(|| {
            // Fewer than a reader and a writer for each of the 300 locations.
            let l = libc::rlimit {
                rlim_cur: 400,
                rlim_max: 400,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &l) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let compensated: u64 = v["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["events"].as_u64().unwrap())
        .sum();
    assert_eq!(compensated, events);
    let written: usize = all_events(&out).values().map(Vec::len).sum();
    assert_eq!(written as u64, events);
}

#[test]
fn bad_arguments_are_explained() {
    let dir = tmp("comp-bad");
    let o = parallax()
        .arg("compensate")
        .arg(dir.join("missing"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read the experiment"),
        "{}",
        stderr(&o)
    );
    let o = parallax()
        .args(["compensate", "x", "--alpha", "-3"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
}
