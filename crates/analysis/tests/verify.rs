//! Trace verification (as the Cray study verified its traces against
//! Flowtrace): the profile derived from a trace equals the runtime's own
//! profile of the same run; and the concurrency profile of a known workload.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use parallax_analysis::concurrency;
use parallax_model::experiment::Experiment;
use parallax_model::profile::{CallTree, Stats};
use parallax_view::profile::tree_from_trace;

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
        let (tt, warnings, _) = tree_from_trace(p, rt.thread).unwrap();
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
    let seq = concurrency::profile(&exp).unwrap();
    assert_eq!(seq.locations, 3);
    let sum: f64 = seq.time_ns.iter().sum();
    assert!((sum - seq.total_ns).abs() < 1e-3 * seq.total_ns);
    // Timing on a shared machine varies; the split itself is checked
    // exactly on a synthetic trace below.
    assert!(
        seq.time_ns[3] < 0.05 * seq.total_ns,
        "the main thread is never busy with both"
    );
    assert!(seq.ceff() > 0.0 && seq.ceff() <= 1.0, "CEFF {}", seq.ceff());
}

#[test]
fn concurrency_profile_of_a_known_trace_is_exact() {
    use parallax_model::defs::{ClockSource, Def};
    use parallax_model::event::{Event, EventKind};
    use parallax_model::experiment::{events_file, rank_dir, EventWriter, DEFS_FILE};
    use parallax_model::file::{self, FileKind};
    use parallax_model::region::RegionKind;

    let dir =
        std::env::temp_dir().join(format!("parallax-verify-synthetic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let rank = dir.join(rank_dir(0));
    std::fs::create_dir_all(&rank).unwrap();
    let mut bytes = file::header(FileKind::Definitions, 0, 0).to_vec();
    let mut payload = Vec::new();
    let defs = [
        Def::Clock {
            source: ClockSource::Monotonic,
            nominal_hz: 1e9,
        },
        Def::ClockSync {
            tick: 0,
            mono_ns: 0,
            unix_ns: 0,
        },
        Def::ClockSync {
            tick: 1_000_000,
            mono_ns: 1_000_000,
            unix_ns: 1_000_000,
        },
        Def::Region {
            id: 1,
            kind: RegionKind::Function,
            name: "work".into(),
            file: String::new(),
            line: 0,
        },
        Def::Region {
            id: 2,
            kind: RegionKind::Barrier,
            name: "wait".into(),
            file: String::new(),
            line: 0,
        },
    ];
    for d in &defs {
        d.encode(&mut payload);
    }
    file::push_block(&mut bytes, &payload);
    std::fs::write(rank.join(DEFS_FILE), bytes).unwrap();
    let enter = |time, region| Event {
        time,
        kind: EventKind::Enter { region },
    };
    let leave = |time, region| Event {
        time,
        kind: EventKind::Leave { region },
    };
    // Location 0 works from 0 to 100; location 1 works to 40, then waits;
    // location 2 waits all along.
    let traces = [
        vec![enter(0, 1), leave(100, 1)],
        vec![enter(0, 1), leave(40, 1), enter(40, 2), leave(100, 2)],
        vec![enter(0, 2), leave(100, 2)],
    ];
    for (t, evs) in traces.iter().enumerate() {
        let mut w =
            EventWriter::create(&rank.join(events_file(t as u32)), 0, t as u32, 4096).unwrap();
        for e in evs {
            w.push(e).unwrap();
        }
        w.finish().unwrap();
    }
    let exp = Experiment::open(&dir).unwrap();
    let c = concurrency::profile(&exp).unwrap();
    assert_eq!(c.locations, 3);
    assert_eq!(c.total_ns, 100.0);
    assert_eq!(c.time_ns, vec![0.0, 60.0, 40.0, 0.0]);
    assert!((c.ceff() - 140.0 / 300.0).abs() < 1e-12);
    assert!((c.cavg() - 1.4).abs() < 1e-12);
    let _ = std::fs::remove_dir_all(&dir);
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
