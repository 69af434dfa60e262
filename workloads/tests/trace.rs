//! The `livermore` runner under `PARALLAX_MODE=trace` records exactly the
//! probes of each level: 2 events per kernel run at `raw`, and 2 + 2 × its
//! loop-body iterations at `full`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use parallax_workloads::livermore::{Scale, KERNELS};
use serde_json::Value;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("parallax-lfk-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// One visit of a kernel's region: probe events inside it (its own enter
/// and leave included), body regions entered, and flushes by the runtime.
#[derive(Debug, Default)]
struct Visit {
    probe_events: u64,
    body_enters: u64,
    flushes: u64,
}

#[test]
fn event_counts_are_exact_per_level() {
    const REPS: usize = 2;
    let dir = tmp("trace");
    let out = Command::new(env!("CARGO_BIN_EXE_livermore"))
        .args(["--scale", "test", "--levels", "raw,full", "--warmup", "1"])
        .args(["--reps", &REPS.to_string()])
        .env("PARALLAX_MODE", "trace")
        .env("PARALLAX_OUT", &dir)
        // Small buffers, so that some flushes happen inside kernels.
        .env("PARALLAX_BUFFER", "16k")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "runner failed: {stderr}");

    // The runner's own report: one line per kernel and level.
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 * 24);
    for (line, (k, level)) in lines
        .iter()
        .zip(KERNELS.iter().flat_map(|k| [(k, "raw"), (k, "full")]))
    {
        assert_eq!(line["kernel"], k.number);
        assert_eq!(line["level"], level);
        assert_eq!(line["mode"], "trace");
        assert_eq!(line["region"], k.region());
        assert_eq!(line["iterations"], k.iterations(k.size(Scale::Test)));
        assert!(line["seconds"].as_f64().unwrap() > 0.0);
    }

    // The trace.
    let exp = Experiment::open(&dir).unwrap();
    assert!(exp.warnings().is_empty(), "{:?}", exp.warnings());
    assert_eq!(exp.processes.len(), 1);
    let p = &exp.processes[0];
    let mut visits: BTreeMap<String, Vec<Visit>> = BTreeMap::new();
    let mut flushes_total = 0;
    for loc in p.locations.values().filter(|l| l.events.is_some()) {
        let (events, err) = p.events(loc.thread).unwrap().read_all();
        assert!(err.is_none(), "{err:?}");
        // The kernel being visited, and the open body regions inside it.
        let mut current: Option<(String, Visit)> = None;
        let mut depth = 0;
        for e in events {
            match (e.kind, current.as_mut()) {
                (EventKind::Enter { region }, None) => {
                    let name = p.region_name(region);
                    assert!(KERNELS.iter().any(|k| k.region() == name), "{name}");
                    let v = Visit {
                        probe_events: 1,
                        ..Visit::default()
                    };
                    current = Some((name, v));
                }
                (EventKind::Enter { region }, Some((kernel, v))) => {
                    let name = p.region_name(region);
                    assert!(
                        name.starts_with(&format!("{kernel} body")),
                        "{name} inside {kernel}"
                    );
                    assert_eq!(depth, 0, "body regions do not nest");
                    depth += 1;
                    v.probe_events += 1;
                    v.body_enters += 1;
                }
                (EventKind::Leave { region }, Some((kernel, v))) => {
                    v.probe_events += 1;
                    if depth == 1 {
                        depth = 0;
                        assert!(p.region_name(region).starts_with(kernel.as_str()));
                    } else {
                        assert_eq!(&p.region_name(region), kernel);
                        let (kernel, v) = current.take().unwrap();
                        visits.entry(kernel).or_default().push(v);
                    }
                }
                (EventKind::FlushBegin | EventKind::FlushEnd, cur) => {
                    flushes_total += 1;
                    if let Some((_, v)) = cur {
                        v.flushes += 1;
                    }
                }
                (kind, _) => panic!("unexpected event {kind:?}"),
            }
        }
        assert!(current.is_none(), "a kernel region was left open");
    }
    assert!(flushes_total > 0, "expected flushes with a 16k buffer");

    for k in &KERNELS {
        let n = k.iterations(k.size(Scale::Test));
        let v = &visits[k.region()];
        // Levels alternate run by run: raw, full, raw, full.
        assert_eq!(v.len(), 2 * REPS, "kernel {}", k.number);
        for (i, visit) in v.iter().enumerate() {
            let (want, bodies) = if i % 2 == 0 { (2, 0) } else { (2 + 2 * n, n) };
            assert_eq!(
                (visit.probe_events, visit.body_enters),
                (want, bodies),
                "kernel {} visit {i}: {visit:?}",
                k.number
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
