//! Helpers of the interposition tests: building the preload library and
//! the C test programs of workloads/, running `parallax run`, and reading
//! what was recorded.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{Experiment, Process};

pub fn parallax() -> Command {
    Command::new(env!("CARGO_BIN_EXE_parallax"))
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn workloads() -> PathBuf {
    workspace().join("workloads")
}

/// Builds libparallax_preload.so next to the parallax binary (`cargo test`
/// builds test harnesses, not cdylibs), once per test binary.
pub fn preload() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let bin = Path::new(env!("CARGO_BIN_EXE_parallax"));
            let dir = bin.parent().unwrap();
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "--quiet", "-p", "parallax-preload"])
                .current_dir(workspace());
            if dir.ends_with("release") {
                cmd.arg("--release");
            }
            let st = cmd.status().expect("run cargo");
            assert!(st.success(), "cargo build -p parallax-preload failed");
            let lib = dir.join("libparallax_preload.so");
            assert!(lib.is_file(), "{} missing", lib.display());
            lib
        })
        .clone()
}

/// A path for one test to create (a file or a directory); nothing is
/// there yet.
pub fn tmp_path(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("parallax-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_file(&d);
    d
}

/// A fresh directory for one test.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("parallax-ip-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles with `compiler` and `args`, panicking with the compiler's
/// message. Sources named without a directory are in workloads/c, others
/// relative to workloads/ (`mpi/ring.c`), unless absolute.
pub fn compile(compiler: &str, args: &[&str]) {
    let mut cmd = Command::new(compiler);
    for a in args {
        let src = [".c", ".cpp", ".f90"].iter().any(|s| a.ends_with(s)) && !a.starts_with('/');
        if src && !a.contains('/') {
            cmd.arg(workloads().join("c").join(a));
        } else if src {
            cmd.arg(workloads().join(a));
        } else {
            cmd.arg(a);
        }
    }
    let o = cmd.output().unwrap_or_else(|e| panic!("{compiler}: {e}"));
    assert!(
        o.status.success(),
        "{compiler} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `parallax report --json` of the experiment `dir`, checked to succeed.
pub fn report_json(dir: &Path) -> serde_json::Value {
    let o = parallax()
        .args(["report", "--json"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `parallax run ARGS -- CMD` into `out`.
pub fn run(out: &Path, args: &[&str], cmd: &[&str]) -> Output {
    preload();
    parallax()
        .args(["run", "--no-report", "--out"])
        .arg(out)
        .args(args)
        .arg("--")
        .args(cmd)
        .output()
        .unwrap()
}

pub fn open(dir: &Path) -> Experiment {
    let e = Experiment::open(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert!(e.warnings().is_empty(), "{:?}", e.warnings());
    e
}

/// Every event of every location of `p`, by thread.
pub fn events(p: &Process) -> BTreeMap<u32, Vec<Event>> {
    p.locations
        .iter()
        .filter(|(_, l)| l.events.is_some())
        .map(|(&t, _)| {
            let (ev, err) = p.events(t).unwrap().read_all();
            assert!(err.is_none(), "thread {t}: {err:?}");
            (t, ev)
        })
        .collect()
}

/// The id of the region called `name` in `p`.
pub fn region(p: &Process, name: &str) -> Option<u32> {
    p.regions
        .iter()
        .find(|(_, r)| r.name == name)
        .map(|(&id, _)| id)
}

pub fn count(evs: &[Event], f: impl Fn(&EventKind) -> bool) -> usize {
    evs.iter().filter(|e| f(&e.kind)).count()
}

/// Enters of region `name` in `evs`.
pub fn enters(p: &Process, evs: &[Event], name: &str) -> usize {
    match region(p, name) {
        Some(id) => count(evs, |k| *k == EventKind::Enter { region: id }),
        None => 0,
    }
}

/// Enters of region `name` over all locations of `p`.
pub fn total_enters(p: &Process, name: &str) -> usize {
    events(p).values().map(|e| enters(p, e, name)).sum()
}

/// Checks that enters and leaves nest properly on every location and that
/// times never decrease.
pub fn assert_balanced(p: &Process) {
    for (t, evs) in events(p) {
        let mut depth = 0i64;
        for e in &evs {
            match e.kind {
                EventKind::Enter { .. } => depth += 1,
                EventKind::Leave { .. } => depth -= 1,
                _ => {}
            }
            assert!(
                depth >= 0,
                "rank {} thread {t}: leave without enter",
                p.rank
            );
        }
        assert_eq!(depth, 0, "rank {} thread {t}: unbalanced", p.rank);
        assert!(evs.windows(2).all(|w| w[0].time <= w[1].time));
    }
}

/// `key=value` pairs printed by a test program.
pub fn values(text: &str) -> BTreeMap<String, u64> {
    text.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// Whether every tool a test needs is installed. A missing tool fails the
/// test (scripts/setup.sh installs them all), unless the run opts out of it
/// by name in `PARALLAX_TEST_SKIP` (comma-separated, or `all`): then the
/// skip is printed and the test returns.
pub fn require(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    let skip = std::env::var("PARALLAX_TEST_SKIP").unwrap_or_default();
    let opted_out = |t: &str| skip.split(',').any(|s| s.trim() == t || s.trim() == "all");
    if missing.iter().all(|t| opted_out(t)) {
        eprintln!("SKIPPED (PARALLAX_TEST_SKIP): needs {}", missing.join(", "));
        return false;
    }
    panic!(
        "{} not installed: scripts/setup.sh installs it (PARALLAX_TEST_SKIP={} skips this test)",
        missing.join(", "),
        missing.join(",")
    );
}

/// Whether a tool is installed.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A message channel: (communicator, sender rank, receiver rank, tag).
pub type Channel = (u64, u32, u32, u32);

/// Per channel, the times (ns) of its sends and of its receives, each in
/// the order recorded: the n-th send pairs with the n-th receive.
pub fn message_times(exp: &Experiment) -> BTreeMap<Channel, (Vec<f64>, Vec<f64>)> {
    let mut out: BTreeMap<Channel, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for p in &exp.processes {
        for evs in events(p).values() {
            for e in evs {
                let t = p.clock.ns(e.time);
                match e.kind {
                    EventKind::Send {
                        peer, tag, comm, ..
                    }
                    | EventKind::IsendBegin {
                        peer, tag, comm, ..
                    } => out.entry((comm, p.rank, peer, tag)).or_default().0.push(t),
                    EventKind::Recv {
                        peer, tag, comm, ..
                    }
                    | EventKind::IrecvComplete {
                        peer, tag, comm, ..
                    } => out.entry((comm, peer, p.rank, tag)).or_default().1.push(t),
                    _ => {}
                }
            }
        }
    }
    out
}
