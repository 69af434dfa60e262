//! Runs `parallax-bench overhead --json` with tiny counts and checks the
//! report: every key present, and every event of every run recorded.

use std::process::Command;

use serde_json::Value;

#[test]
fn overhead_json_has_every_key_and_loses_nothing() {
    let dir = std::env::temp_dir().join(format!("parallax-bench-test-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_parallax-bench"))
        .args([
            "overhead",
            "--json",
            "--pairs",
            "1000",
            "--reps",
            "3",
            "--tracing-pairs",
            "500",
            "--spans-per-root",
            "300",
            "--throughput-secs",
            "0.05",
            "--out-dir",
        ])
        .arg(&dir)
        .env_remove("PARALLAX_MODE")
        .output()
        .expect("run parallax-bench");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "parallax-bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");

    let num = |v: &Value, what: &str| {
        assert!(
            v.as_f64().is_some_and(|x| x.is_finite() && x >= 0.0),
            "{what}: {v}"
        );
    };
    num(&r["floor_ns_per_pair"], "floor_ns_per_pair");
    for k in ["trace", "profile", "disabled", "bytes_per_event"] {
        num(&r["parallax"][k], k);
    }
    for k in ["fastrace", "puffin", "tracing"] {
        num(&r["peers"][k], k);
        assert_eq!(
            r["peers_recorded_all"][k],
            Value::Bool(true),
            "{k} lost spans"
        );
    }
    for k in ["rdtsc_ns", "ns_per_tick"] {
        num(&r[k], k);
    }
    assert!(r["machine"]["cpu"].is_string());
    assert!(r["machine"]["nproc"].as_u64().unwrap() >= 1);
    num(&r["parallax"]["trace_over_floor"], "trace_over_floor");
    num(&r["parallax"]["profile_over_floor"], "profile_over_floor");

    // Every enter and leave of the timed trace runs is on disk.
    let ev = &r["parallax"]["trace_events"];
    assert_eq!(ev["enter"], 3000);
    assert_eq!(ev["leave"], 3000);
    assert_eq!(ev["expected_enter_leave"], 6000);
    assert_eq!(ev["lost"], 0);
    assert_eq!(ev["other"], 0);
    assert_eq!(ev["flush_begin"], ev["flush_end"]);
    assert_eq!(r["parallax"]["profile_visits"]["recorded"], 3000);

    // fastrace keeps at most 10,240 local spans per root: a root for more
    // than that records only part of them, which the report shows.
    let single = &r["peers_detail"]["fastrace"]["single_root"];
    assert_eq!(single["recorded"], 1000);

    for t in ["threads_1", "threads_2"] {
        let tp = &r["throughput"][t];
        assert_eq!(tp["lost"], 0, "{t}");
        assert_eq!(tp["lost_bytes"], 0, "{t}");
        assert!(tp["events"].as_u64().unwrap() >= tp["expected_enter_leave"].as_u64().unwrap());
        num(&tp["events_per_s"], "events_per_s");
        num(&tp["mb_per_s"], "mb_per_s");
    }
    for k in [
        "trace_le_1_3x_floor",
        "profile_le_2x_floor",
        "disabled_le_2ns",
        "bytes_per_event_le_4",
        "no_loss_2_threads",
    ] {
        assert!(r["targets"][k].is_boolean(), "targets.{k}");
    }
    assert_eq!(r["targets"]["no_loss_trace_runs"], Value::Bool(true));
    assert_eq!(r["targets"]["no_loss_2_threads"], Value::Bool(true));
}
