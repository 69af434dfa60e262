//! `parallax export` and `parallax import` end to end: experiments made by
//! the real CLI, read back by the real tools (otf2-print, python3-otf2,
//! Python's protobuf with Perfetto's descriptors, pandas).
//!
//! Needs what `scripts/setup.sh` installs (Debian's libotf2-trace-dev,
//! otf2-tools, python3-otf2, python3-protobuf, python3-pandas, and the
//! perfetto wheel).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{parallax, preload, report_json, stderr, tmp_path};

use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use serde_json::Value;

fn tmp(name: &str) -> PathBuf {
    tmp_path(&format!("export-{name}"))
}

fn py_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../export/tests/py")
        .join(name)
}

/// Runs Debian's python3 (which has python3-otf2, protobuf and pandas).
fn python(args: &[&std::ffi::OsStr]) -> String {
    let o = Command::new("/usr/bin/python3")
        .args(args)
        .output()
        .expect("/usr/bin/python3 is missing: run scripts/setup.sh");
    assert!(
        o.status.success(),
        "python failed (run scripts/setup.sh to install what the tests need):\n{}",
        stderr(&o)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn export(dir: &Path, format: &str, out: &Path, extra: &[&str]) -> String {
    let o = parallax()
        .arg("export")
        .arg(dir)
        .args(["--format", format, "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "export {format}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("parallax: wrote"), "{e}");
    e
}

// === The test workload ===

/// The demo (threads, a contended mutex, a barrier), made once.
fn demo() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tmp("demo");
        let o = parallax()
            .args(["demo", "--threads", "3", "--iterations", "12", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        dir
    })
}

/// Two ranks of an MPI-like program that records every kind of event,
/// each measured by `parallax run`, put together in one experiment.
fn ranks() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tmp("ranks");
        let exe = Path::new(env!("CARGO_BIN_EXE_parallax"))
            .parent()
            .unwrap()
            .join("examples/every_event");
        preload();
        for rank in 0..2 {
            let out = if rank == 0 {
                dir.clone()
            } else {
                tmp("ranks-1")
            };
            let o = parallax()
                .args(["run", "--mode", "trace", "--no-report", "--out"])
                .arg(&out)
                .arg("--")
                .arg(&exe)
                .arg(rank.to_string())
                .env("PARALLAX_RANK", rank.to_string())
                .env("PARALLAX_RANKS", "2")
                .output()
                .unwrap();
            assert!(o.status.success(), "rank {rank}: {}", stderr(&o));
            if rank == 1 {
                std::fs::rename(out.join("rank-00001"), dir.join("rank-00001")).unwrap();
            }
        }
        dir
    })
}

/// Iterations of examples/every_event.rs.
const STEPS: u64 = 6;

// === What the experiment holds, read with the model ===

/// Per location (rank, thread): events by kind name, enters by region name,
/// and the first and last times in ns since the experiment's start.
#[derive(Debug, Default)]
struct Truth {
    kinds: BTreeMap<String, u64>,
    enters: BTreeMap<String, u64>,
    first_ns: u64,
    last_ns: u64,
    /// The last time OTF2 has a record for: a flush is one record there,
    /// at its begin.
    last_record_ns: u64,
    events: u64,
    /// (peer, bytes) of sends and receives, in order.
    sends: Vec<(u32, u64)>,
    recvs: Vec<(u32, u64)>,
}

fn truth(dir: &Path) -> BTreeMap<(u32, u32), Truth> {
    let exp = Experiment::open(dir).unwrap();
    let t0 = exp.t0_ns();
    let mut out = BTreeMap::new();
    for p in &exp.processes {
        for l in p.locations.values() {
            if l.events.is_none() {
                continue;
            }
            let (events, err) = p.events(l.thread).unwrap().read_all();
            assert!(err.is_none());
            let mut t = Truth::default();
            for (i, e) in events.iter().enumerate() {
                let ns = (p.clock.ns(e.time) - t0).round().max(0.0) as u64;
                if i == 0 {
                    t.first_ns = ns;
                }
                t.last_ns = ns;
                if !matches!(e.kind, EventKind::FlushEnd) {
                    t.last_record_ns = ns;
                }
                t.events += 1;
                *t.kinds.entry(e.kind.name().to_string()).or_default() += 1;
                match e.kind {
                    EventKind::Enter { region } => {
                        *t.enters.entry(p.region_name(region)).or_default() += 1
                    }
                    EventKind::Send { peer, bytes, .. }
                    | EventKind::IsendBegin { peer, bytes, .. } => t.sends.push((peer, bytes)),
                    EventKind::Recv { peer, bytes, .. }
                    | EventKind::IrecvComplete { peer, bytes, .. } => t.recvs.push((peer, bytes)),
                    _ => {}
                }
            }
            out.insert((p.rank, l.thread), t);
        }
    }
    out
}

#[test]
fn the_test_workload_records_every_event_kind() {
    let t = truth(ranks());
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for l in t.values() {
        for (k, n) in &l.kinds {
            *kinds.entry(k.clone()).or_default() += n;
        }
    }
    for k in [
        "enter",
        "leave",
        "send",
        "recv",
        "isend_begin",
        "isend_complete",
        "irecv_begin",
        "irecv_complete",
        "collective_begin",
        "collective_end",
        "lock_request",
        "lock_acquired",
        "lock_release",
        "sem_post",
        "sem_acquired",
        "advance",
        "await_done",
        "iteration",
        "thread_create",
        "thread_begin",
        "thread_end",
        "thread_join",
        "fork",
        "join",
        "put",
        "get",
        "atomic",
        "rma_complete",
        "value_reached",
        "metric",
        "mark",
    ] {
        assert!(
            kinds.get(k).copied().unwrap_or(0) > 0,
            "no {k} in {kinds:?}"
        );
    }
    assert_eq!(
        t.keys().filter(|k| k.0 == 1).count(),
        2,
        "rank 1: 2 threads"
    );
}

// === Chrome JSON ===

#[test]
fn chrome_json_has_every_event_with_its_time() {
    for dir in [demo(), ranks()] {
        let out = tmp("chrome").with_extension("json");
        export(dir, "chrome", &out, &[]);
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let evs = v["traceEvents"].as_array().unwrap();
        let truth = truth(dir);
        for (&(rank, thread), t) in &truth {
            let mine: Vec<&Value> = evs
                .iter()
                .filter(|e| e["pid"] == rank && e["tid"] == thread && e["ph"] != "M")
                .collect();
            let count = |ph: &str| mine.iter().filter(|e| e["ph"] == ph).count() as u64;
            let enters = t.kinds.get("enter").copied().unwrap_or(0);
            let leaves = t.kinds.get("leave").copied().unwrap_or(0);
            let flushes = t.kinds.get("flush_begin").copied().unwrap_or(0);
            assert_eq!(count("B"), enters + flushes);
            assert_eq!(count("E"), leaves + flushes);
            assert_eq!(
                count("i") + count("C"),
                t.events - enters - leaves - 2 * flushes
            );
            for (name, n) in &t.enters {
                let got = mine
                    .iter()
                    .filter(|e| e["ph"] == "B" && e["name"] == name.as_str())
                    .count() as u64;
                assert_eq!(got, *n, "{name}");
            }
            let ts: Vec<f64> = mine
                .iter()
                .filter(|e| e["ph"] != "s" && e["ph"] != "f")
                .map(|e| e["ts"].as_f64().unwrap())
                .collect();
            assert!((ts[0] * 1000.0 - t.first_ns as f64).abs() < 1.5);
            assert!((ts[ts.len() - 1] * 1000.0 - t.last_ns as f64).abs() < 1.5);
            assert!(ts.windows(2).all(|w| w[0] <= w[1]));
        }
        // Every flow that starts also ends.
        let starts = evs.iter().filter(|e| e["ph"] == "s").count();
        let ends = evs.iter().filter(|e| e["ph"] == "f").count();
        assert_eq!(starts, ends);
        assert!(starts > 0);
    }
}

// === Perfetto ===

#[test]
fn perfetto_trace_decodes_with_the_official_descriptors() {
    for dir in [demo(), ranks()] {
        let out = tmp("perfetto").with_extension("pftrace");
        export(dir, "perfetto", &out, &[]);
        let s: Value = serde_json::from_str(&python(&[
            py_script("perfetto_summary.py").as_os_str(),
            out.as_os_str(),
        ]))
        .unwrap();
        assert_eq!(s["errors"], serde_json::json!([]), "{s}");
        let truth = truth(dir);
        let tracks = s["tracks"].as_array().unwrap();
        let threads: Vec<&Value> = tracks.iter().filter(|t| t["kind"] == "thread").collect();
        assert_eq!(threads.len(), truth.len());
        let mut flows = 0u64;
        for (&(rank, thread), t) in &truth {
            let track = threads
                .iter()
                .find(|x| {
                    x["pid"] == rank + 1
                        && x["name"]
                            .as_str()
                            .unwrap()
                            .starts_with(&format!("thread {thread}"))
                })
                .unwrap();
            let key = format!("{}:{}", track["pid"], track["tid"]);
            let e = &s["events"][&key];
            let n = |k: &str| t.kinds.get(k).copied().unwrap_or(0);
            let flushes = n("flush_begin");
            assert_eq!(e["begin"], n("enter") + flushes, "{key}");
            assert_eq!(e["end"], n("leave") + flushes, "{key}");
            assert_eq!(e["counter"], n("metric"));
            assert_eq!(
                e["instant"].as_u64().unwrap() + e["counter"].as_u64().unwrap(),
                t.events - n("enter") - n("leave") - 2 * flushes
            );
            for (name, c) in &t.enters {
                assert_eq!(e["names"][name], *c, "{key} {name}");
            }
            assert_eq!(e["first_ts"], t.first_ns);
            assert_eq!(e["last_ts"], t.last_ns);
            assert_eq!(e["depth"], 0);
            let sent: u64 = t.sends.iter().map(|s| s.1).sum();
            let got = e["annotations"]["send.bytes"].as_u64().unwrap_or(0)
                + e["annotations"]["isend_begin.bytes"].as_u64().unwrap_or(0);
            assert_eq!(got, sent);
            flows += t.sends.len() as u64 + n("thread_create") + n("thread_end");
        }
        assert_eq!(s["flows"]["matched"], flows, "{}", s["flows"]);
        assert_eq!(s["flows"]["started"], flows);
    }
}

// === Flame graphs and profiles ===

#[test]
fn folded_stacks_and_flame_graph_add_up_to_the_profile() {
    let dir = demo();
    let r = report_json(dir);
    let total_excl: f64 = r["total"]["flat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["exclusive_ns"].as_f64().unwrap())
        .sum();
    for merged in [false, true] {
        let out = tmp("folded").with_extension("folded");
        let extra: &[&str] = if merged { &["--merged"] } else { &[] };
        export(dir, "folded", &out, extra);
        let text = std::fs::read_to_string(&out).unwrap();
        let mut sum = 0.0;
        for line in text.lines() {
            let (stack, v) = line.rsplit_once(' ').unwrap();
            sum += v.parse::<f64>().unwrap();
            let frames: Vec<&str> = stack.split(';').collect();
            if merged {
                assert!(!frames[0].starts_with("rank "), "{line}");
            } else {
                assert!(frames[0].starts_with("rank 0 thread "), "{line}");
            }
        }
        // Rounding to integer ns per line.
        assert!(
            (sum - total_excl).abs() <= text.lines().count() as f64,
            "{sum} vs {total_excl}"
        );
        assert!(text.contains("worker;iteration;compute "), "{text}");
    }
    // One location.
    let out = tmp("folded1").with_extension("folded");
    export(dir, "folded", &out, &["--location", "0:1"]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.lines().all(|l| l.starts_with("rank 0 thread 1")));
    assert!(text.contains(";update;Mutex::lock "), "{text}");
    // The SVG is a flame graph with the regions in it (those wider than a
    // tenth of a pixel: the lock's microseconds may not be).
    let svg = tmp("flame").with_extension("svg");
    export(dir, "svg", &svg, &[]);
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<?xml") && s.contains("<svg"));
    for name in ["compute", "Barrier::wait", "update"] {
        assert!(s.contains(name), "{name}");
    }
    // A bad location is an error that says what is wrong.
    let o = parallax()
        .arg("export")
        .arg(dir)
        .args(["--format", "folded", "--location", "7:0", "--out"])
        .arg(tmp("none"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no location 7:0"), "{}", stderr(&o));
}

#[test]
fn csv_and_json_profiles_load_in_pandas_in_one_call() {
    let dir = demo();
    let r = report_json(dir);
    let csv = tmp("profile").with_extension("csv");
    let json = tmp("profile").with_extension("json");
    let hatchet = tmp("hatchet").with_extension("json");
    export(dir, "csv", &csv, &[]);
    export(dir, "json", &json, &[]);
    export(dir, "hatchet", &hatchet, &["--merged"]);
    let code = r#"
import json, sys
import pandas as pd
a = pd.read_csv(sys.argv[1])
b = pd.read_json(sys.argv[2])
h = json.load(open(sys.argv[3]))
def walk(n):
    return n["metrics"]["time"] + sum(walk(c) for c in n.get("children", []))
print(json.dumps({
    "rows": [len(a), len(b)],
    "columns": list(a.columns),
    "excl": [float(a.exclusive_ns.sum()), float(b.exclusive_ns.sum())],
    "compute_calls": int(a[a.region == "compute"]["count"].sum()),
    "locations": sorted(int(x) for x in a.thread.unique()),
    "hatchet_excl": sum(walk(n) for n in h),
    "hatchet_roots": [n["frame"]["name"] for n in h],
}))
"#;
    let got: Value = serde_json::from_str(&python(&[
        "-c".as_ref(),
        code.as_ref(),
        csv.as_os_str(),
        json.as_os_str(),
        hatchet.as_os_str(),
    ]))
    .unwrap();
    let total_excl: f64 = r["total"]["flat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["exclusive_ns"].as_f64().unwrap())
        .sum();
    let paths: usize = r["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["paths"].as_array().unwrap().len())
        .sum();
    assert_eq!(got["rows"], serde_json::json!([paths, paths]));
    for i in 0..2 {
        assert!((got["excl"][i].as_f64().unwrap() - total_excl).abs() < 1.0);
    }
    assert!((got["hatchet_excl"].as_f64().unwrap() - total_excl).abs() < 1.0);
    assert_eq!(got["compute_calls"], 36);
    assert_eq!(got["locations"], serde_json::json!([0, 1, 2, 3]));
    for c in [
        "rank",
        "thread",
        "path",
        "region",
        "kind",
        "inclusive_ns",
        "exclusive_ns",
    ] {
        assert!(got["columns"].as_array().unwrap().iter().any(|x| x == c));
    }
}

// === OTF2 ===

/// The OTF2 record (python3-otf2 class name) of a Parallax event kind.
fn otf2_kind(k: &str) -> Option<&'static str> {
    Some(match k {
        "enter" => "Enter",
        "leave" => "Leave",
        "send" => "MpiSend",
        "recv" => "MpiRecv",
        "isend_begin" => "MpiIsend",
        "isend_complete" => "MpiIsendComplete",
        "irecv_begin" => "MpiIrecvRequest",
        "irecv_complete" => "MpiIrecv",
        "collective_begin" => "MpiCollectiveBegin",
        "collective_end" => "MpiCollectiveEnd",
        "lock_request" | "sem_post" | "sem_acquired" | "advance" | "await_done" | "iteration" => {
            "ParameterUnsignedInt"
        }
        "lock_acquired" => "ThreadAcquireLock",
        "lock_release" => "ThreadReleaseLock",
        "thread_create" => "ThreadCreate",
        "thread_begin" => "ThreadBegin",
        "thread_end" => "ThreadEnd",
        "thread_join" => "ThreadWait",
        "fork" => "ThreadFork",
        "join" => "ThreadJoin",
        "put" => "RmaPut",
        "get" => "RmaGet",
        "atomic" => "RmaAtomic",
        "rma_complete" => "RmaSync",
        "value_reached" => "RmaWaitChange",
        "metric" => "Metric",
        "mark" => "ParameterInt",
        "flush_begin" => "BufferFlush",
        _ => return None,
    })
}

fn otf2_export(dir: &Path, name: &str) -> PathBuf {
    let out = tmp(name).join("trace.otf2");
    let e = export(dir, "otf2", &out, &[]);
    assert!(e.contains("events/s"), "{e}");
    assert!(out.is_file() && out.with_extension("").is_dir());
    out
}

#[test]
fn otf2_archive_reads_back_with_python_otf2() {
    for dir in [demo(), ranks()] {
        let out = otf2_export(dir, "otf2-py");
        let s: Value = serde_json::from_str(&python(&[
            py_script("otf2_summary.py").as_os_str(),
            out.as_os_str(),
        ]))
        .unwrap();
        assert_eq!(s["errors"], serde_json::json!([]));
        assert_eq!(s["clock"]["resolution"], 1_000_000_000u64);
        let truth = truth(dir);
        let exp = Experiment::open(dir).unwrap();
        let locs = s["locations"].as_object().unwrap();
        assert_eq!(locs.len(), truth.len());
        for (&(rank, thread), t) in &truth {
            let key = locs
                .keys()
                .find(|k| k.starts_with(&format!("rank {rank}/thread {thread}")))
                .unwrap_or_else(|| panic!("no location {rank}:{thread} in {locs:?}"));
            let l = &locs[key];
            let mut want: BTreeMap<&str, u64> = BTreeMap::new();
            for (k, n) in &t.kinds {
                if let Some(o) = otf2_kind(k) {
                    *want.entry(o).or_default() += n;
                }
            }
            let got: BTreeMap<&str, u64> = l["kinds"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(got, want, "{key}");
            for (name, n) in &t.enters {
                assert_eq!(l["enters"][name], *n, "{key} {name}");
            }
            assert_eq!(l["first"], t.first_ns, "{key}");
            assert_eq!(l["last"], t.last_record_ns, "{key}");
            let sends: Vec<(u32, u64)> = l["sends"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| (x[0].as_u64().unwrap() as u32, x[1].as_u64().unwrap()))
                .collect();
            let recvs: Vec<(u32, u64)> = l["recvs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| (x[0].as_u64().unwrap() as u32, x[1].as_u64().unwrap()))
                .collect();
            assert_eq!(sends, t.sends, "{key}");
            assert_eq!(recvs, t.recvs, "{key}");
        }
        // Every region of the experiment that was entered is defined.
        let regions: Vec<&str> = s["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        for t in truth.values() {
            for name in t.enters.keys() {
                assert!(regions.contains(&name.as_str()), "{name}");
            }
        }
        if dir == ranks() {
            assert_eq!(s["region_roles"]["MPI_Send"], "RegionRole.POINT2POINT");
            assert_eq!(s["region_roles"]["MPI_Barrier"], "RegionRole.BARRIER");
            assert_eq!(s["comms"]["comm 0"], 2, "{}", s["comms"]);
            let r0 = &locs
                .iter()
                .find(|(k, _)| k.starts_with("rank 0/"))
                .unwrap()
                .1;
            assert_eq!(r0["metric_sum"], (0..STEPS).map(|i| 1000 * i).sum::<u64>());
            assert_eq!(r0["params"]["step"], STEPS);
            assert_eq!(r0["rma_bytes"], STEPS * (32 + 16));
        }
        assert!(exp.processes.len() <= 2);
    }
}

#[test]
fn otf2_archive_reads_back_with_otf2_print() {
    let dir = ranks();
    let out = otf2_export(dir, "otf2-print");
    let o = Command::new("otf2-print")
        .arg(&out)
        .output()
        .expect("otf2-print is missing: run scripts/setup.sh");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // Event lines: NAME  LOCATION  TIMESTAMP  ATTRIBUTES.
    let mut per_loc: BTreeMap<u64, u64> = BTreeMap::new();
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    let mut first: BTreeMap<u64, u64> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3
            || !f[0]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            continue;
        }
        let (Ok(loc), Ok(ts)) = (f[1].parse::<u64>(), f[2].parse::<u64>()) else {
            continue;
        };
        *per_loc.entry(loc).or_default() += 1;
        *names.entry(f[0].to_string()).or_default() += 1;
        first.entry(loc).or_insert(ts);
    }
    let truth = truth(dir);
    for (&(rank, thread), t) in &truth {
        let loc = ((rank as u64) << 32) | thread as u64;
        let flushes = t.kinds.get("flush_begin").copied().unwrap_or(0);
        assert_eq!(per_loc[&loc], t.events - flushes, "{rank}:{thread}");
        assert_eq!(first[&loc], t.first_ns);
    }
    let sum = |k: &str| -> u64 {
        truth
            .values()
            .map(|t| t.kinds.get(k).copied().unwrap_or(0))
            .sum()
    };
    assert_eq!(names["ENTER"], sum("enter"));
    assert_eq!(names["LEAVE"], sum("leave"));
    assert_eq!(names["MPI_SEND"], sum("send"));
    assert_eq!(names["MPI_IRECV"], sum("irecv_complete"));
    assert_eq!(names["MPI_COLLECTIVE_END"], sum("collective_end"));
    assert_eq!(names["THREAD_ACQUIRE_LOCK"], sum("lock_acquired"));
    assert_eq!(names["RMA_PUT"], sum("put"));
    // The definitions: clock properties at 1 GHz, one location group per
    // rank, communicators.
    let o = Command::new("otf2-print")
        .arg("-G")
        .arg(&out)
        .output()
        .unwrap();
    let defs = String::from_utf8_lossy(&o.stdout);
    assert!(defs.contains("Ticks per Seconds: 1000000000"), "{defs}");
    assert_eq!(defs.matches("\nLOCATION_GROUP ").count(), 2);
    assert!(defs.contains("Name: \"comm 0\""));
}

// === OTF2 import ===

/// The events of every location as (ns since start, event with names for
/// region ids and communicator ids replaced by `comm`'s numbering).
type Stream = BTreeMap<(u32, u32), Vec<(u64, String)>>;

fn streams(dir: &Path, raw_ticks: bool) -> (Stream, Vec<BTreeMap<u64, u64>>) {
    let exp = Experiment::open(dir).unwrap();
    let t0 = exp.t0_ns();
    let mut out = Stream::new();
    let mut comms = Vec::new();
    for p in &exp.processes {
        let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
        for l in p.locations.values() {
            if l.events.is_none() {
                continue;
            }
            let (events, err) = p.events(l.thread).unwrap().read_all();
            assert!(err.is_none());
            let v = events
                .iter()
                .map(|e| {
                    let t = if raw_ticks {
                        e.time
                    } else {
                        (p.clock.ns(e.time) - t0).round().max(0.0) as u64
                    };
                    let mut k = e.kind;
                    let name = match k {
                        EventKind::Enter { region }
                        | EventKind::Leave { region }
                        | EventKind::Mark { mark: region, .. } => p.region_name(region),
                        EventKind::Metric { metric, .. } => p.metrics[&metric].0.clone(),
                        _ => String::new(),
                    };
                    match &mut k {
                        EventKind::Enter { region }
                        | EventKind::Leave { region }
                        | EventKind::Mark { mark: region, .. } => *region = 0,
                        EventKind::Metric { metric, .. } => *metric = 0,
                        EventKind::Send { comm, .. }
                        | EventKind::Recv { comm, .. }
                        | EventKind::IsendBegin { comm, .. }
                        | EventKind::IrecvComplete { comm, .. }
                        | EventKind::CollectiveEnd { comm, .. } => {
                            let n = seen.len() as u64;
                            *comm = *seen.entry(*comm).or_insert(n);
                        }
                        _ => {}
                    }
                    (t, format!("{k:?} {name}"))
                })
                .collect();
            out.insert((p.rank, l.thread), v);
        }
        comms.push(seen);
    }
    (out, comms)
}

#[test]
fn otf2_round_trip_preserves_every_event() {
    let dir = ranks();
    let out = otf2_export(dir, "round-trip");
    let back = tmp("round-trip-back");
    let o = parallax()
        .arg("import")
        .arg(&out)
        .arg("--out")
        .arg(&back)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (a, ca) = streams(dir, false);
    let (b, cb) = streams(&back, true);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (loc, ev) in &a {
        let got = &b[loc];
        assert_eq!(ev.len(), got.len(), "{loc:?}");
        for (x, y) in ev.iter().zip(got) {
            assert_eq!(x, y, "{loc:?}");
        }
    }
    // Communicators map one to one (numbered by first use).
    assert_eq!(
        ca.iter().map(|m| m.len()).collect::<Vec<_>>(),
        cb.iter().map(|m| m.len()).collect::<Vec<_>>()
    );
    // Thread names and the report survive as well.
    let r = report_json(&back);
    let names: Vec<&str> = r["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"helper"), "{names:?}");
}

#[test]
fn otf2_archive_of_another_writer_imports_for_report() {
    let dir = tmp("pywriter");
    std::fs::create_dir_all(&dir).unwrap();
    let expect: Value = serde_json::from_str(&python(&[
        py_script("write_otf2.py").as_os_str(),
        dir.as_os_str(),
    ]))
    .unwrap();
    let back = tmp("pywriter-back");
    let o = parallax()
        .arg("import")
        .arg(dir.join("traces.otf2"))
        .args(["--probe-cost-ns", "25", "--out"])
        .arg(&back)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let truth = truth(&back);
    for (loc, kinds) in expect["locations"].as_object().unwrap() {
        let (r, t) = loc.split_once(':').unwrap();
        let t = &truth[&(r.parse().unwrap(), t.parse().unwrap())];
        for (k, n) in kinds.as_object().unwrap() {
            let got = if k == "compute" {
                t.enters.get("compute").copied().unwrap_or(0)
            } else {
                t.kinds.get(k).copied().unwrap_or(0)
            };
            assert_eq!(got, n.as_u64().unwrap(), "{loc} {k}");
        }
    }
    let sent: u64 = truth
        .values()
        .flat_map(|t| t.sends.iter())
        .filter(|s| s.1 >= 1000)
        .map(|s| s.1)
        .sum();
    assert_eq!(sent, expect["bytes"].as_u64().unwrap());
    // The 1 MHz timer maps to ns: compute takes 50 us on rank 0.
    let r = report_json(&back);
    let flat = r["locations"][0]["flat"].as_array().unwrap();
    let compute = flat.iter().find(|x| x["region"] == "compute").unwrap();
    assert_eq!(compute["count"], 5);
    assert!((compute["mean_ns"].as_f64().unwrap() - 50_000.0).abs() < 1.0);
    assert_eq!(
        flat.iter().find(|x| x["region"] == "MPI_Send").unwrap()["kind"],
        "send"
    );
    // The probe cost is there for compensation.
    let exp = Experiment::open(&back).unwrap();
    for p in &exp.processes {
        assert!(p
            .calibration
            .iter()
            .any(|c| c.mean_ns == 25.0 && c.probe == parallax_model::defs::Probe::Enter));
        assert_eq!(p.groups.get(&1).map(|g| g.len()), Some(2), "{:?}", p.groups);
    }
    // And it exports again.
    let pf = tmp("pywriter").with_extension("pftrace");
    export(&back, "perfetto", &pf, &[]);
    // Compensation takes the imported probe cost and pairs every message
    // and collective of the other writer's trace.
    let comp = tmp("pywriter-comp");
    let o = parallax()
        .arg("compensate")
        .arg(&back)
        .arg("--json")
        .arg("--out")
        .arg(&comp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let c: Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert_eq!(c["forced"], 0, "{c}");
    let deps: u64 = c["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["dependencies"].as_u64().unwrap())
        .sum();
    assert!(deps > 0, "{c}");
    // (Its times are made up: collectives end a fixed time after each
    // member's own arrival, so the approximation may make them wait.)
    // Bottleneck analysis reads it too.
    let o = parallax()
        .args(["analyze", "--json"])
        .arg(&back)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let a: Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert!(a["findings"].is_array(), "{a}");
}

#[test]
fn import_explains_what_it_cannot_read() {
    let bad = tmp("not-otf2").with_extension("otf2");
    std::fs::write(&bad, "not an archive").unwrap();
    let o = parallax()
        .arg("import")
        .arg(&bad)
        .arg("--out")
        .arg(tmp("not-otf2-out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot import"), "{}", stderr(&o));
    let o = parallax()
        .args(["import", "/no/such/trace.otf2", "--out"])
        .arg(tmp("none-out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no such OTF2 anchor file"),
        "{}",
        stderr(&o)
    );
}
