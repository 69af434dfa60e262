//! Trace verification (as the Cray study verified its traces against
//! Flowtrace): the profile derived from a trace equals the runtime's own
//! profile of the same run; and the concurrency profile of a known workload.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use parallax_analysis::concurrency;
use parallax_analysis::executor::Executor;
use parallax_analysis::profile::tree_from_trace;
use parallax_model::experiment::Experiment;
use parallax_model::profile::{CallTree, Stats};

const SCENARIO: &str = "PARALLAX_TEST_SCENARIO";

fn run(scenario: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("parallax-verify-{scenario}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, scenario)
        .env("PARALLAX_MODE", "both")
        .env("PARALLAX_OUT", &dir)
        .env("PARALLAX_BUFFER", "16k")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Stats by call path (region ids from the top).
fn by_path(t: &CallTree) -> HashMap<Vec<u32>, Stats> {
    (0..t.nodes.len())
        .map(|i| (t.path(i), t.nodes[i].stats))
        .collect()
}

#[test]
fn trace_profile_equals_runtime_profile() {
    let dir = run("nested");
    let exp = Experiment::open(&dir).unwrap();
    let p = &exp.processes[0];
    let (trees, err) = p.profiles().unwrap();
    assert!(err.is_none());
    assert_eq!(trees.len(), 3);
    for rt in &trees {
        let (tt, warnings) = tree_from_trace(p, rt.thread).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let (a, b) = (by_path(rt), by_path(&tt));
        assert_eq!(a.len(), b.len(), "same call paths on thread {}", rt.thread);
        for (path, s) in &a {
            let t = &b[path];
            // Both come from the same clock readings: identical, not close.
            assert_eq!(s.count, t.count, "{path:?}");
            assert_eq!(
                (s.inclusive, s.exclusive, s.min, s.max),
                (t.inclusive, t.exclusive, t.min, t.max),
                "{path:?}"
            );
        }
    }
}

#[test]
fn concurrency_profile_of_an_imbalanced_pair() {
    let dir = run("imbalance");
    let exp = Experiment::open(&dir).unwrap();
    let seq = concurrency::profile(&exp, Executor::Sequential).unwrap();
    let par = concurrency::profile(&exp, Executor::Threads(2)).unwrap();
    assert_eq!(seq, par, "executors agree");
    assert_eq!(seq.locations, 3);
    let sum: f64 = seq.time_ns.iter().sum();
    assert!((sum - seq.total_ns).abs() < 1e-3 * seq.total_ns);
    // The main thread waits in join; worker 2 computes three times as long
    // as worker 1, which then waits at the barrier: one location is busy
    // about twice as long as two are.
    let (one, two) = (seq.time_ns[1], seq.time_ns[2]);
    assert!(one > 1.3 * two && one < 3.0 * two, "T1 {one} T2 {two}");
    assert!(
        seq.time_ns[3] < 0.05 * seq.total_ns,
        "the main thread is never busy with both"
    );
    assert!(seq.ceff() > 0.2 && seq.ceff() < 0.6, "CEFF {}", seq.ceff());
}

#[test]
fn child() {
    let Ok(s) = std::env::var(SCENARIO) else {
        return;
    };
    match s.as_str() {
        "nested" => {
            let h: Vec<_> = (0..2)
                .map(|w| {
                    parallax::spawn(move || {
                        for i in 0..3000u64 {
                            let _a = parallax::region!("outer");
                            for j in 0..(i % 4) {
                                let _b = parallax::region!("inner");
                                std::hint::black_box(j * w);
                            }
                            if i % 7 == 0 {
                                let _c = parallax::region!("rare");
                                let _d = parallax::region!("inner");
                            }
                        }
                    })
                })
                .collect();
            for t in h {
                t.join().unwrap();
            }
        }
        "imbalance" => {
            let barrier = std::sync::Arc::new(parallax::sync::Barrier::new(2));
            let h: Vec<_> = (1..=2u64)
                .map(|w| {
                    let b = barrier.clone();
                    parallax::spawn(move || {
                        for _ in 0..4 {
                            let _g = parallax::region!("work");
                            let n = if w == 1 { 2_000_000 } else { 6_000_000 };
                            let mut x = 1.0f64;
                            for k in 0..n {
                                x = (x + k as f64).sqrt();
                            }
                            std::hint::black_box(x);
                            drop(_g);
                            b.wait();
                        }
                    })
                })
                .collect();
            for t in h {
                t.join().unwrap();
            }
        }
        _ => panic!("unknown scenario {s}"),
    }
}
