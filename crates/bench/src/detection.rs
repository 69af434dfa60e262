//! `parallax-bench detection`: how well the bottleneck analysis finds what
//! the ground-truth programs of workloads/bottlenecks inject, and how fast
//! it runs.
//!
//! Every `*.expect.json` there names a program (C+MPI, C+pthreads, or a
//! scenario of the Rust `bottlenecks` binary) and the findings it must
//! produce: pattern, location, culprit and, where the injection fixes it,
//! the severity. Each program is built, measured with `parallax run`,
//! analysed, and its findings matched: a finding is right if an expected
//! one has its pattern and location (and the expected culprit is among
//! its culprits); an expected finding is found if some finding is right
//! for it. Per pattern: precision (right findings / findings), recall
//! (found / expected) and the median relative error of the severity (the
//! matching findings' sum against the expected value).
//!
//! `--scale EVENTS` instead writes a synthetic MPI-like trace of that many
//! events, streaming, and analyses it in child processes with one and two
//! threads: events per second, peak memory, speedup, and whether the two
//! reports are identical.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use parallax_analysis::bottleneck::{self, Config, Finding, Pattern};
use parallax_analysis::executor::Executor;
use parallax_model::defs::{ClockSource, Def, Mode, ProcessInfo};
use parallax_model::event::{CollectiveOp, Event, EventKind, NO_ROOT};
use parallax_model::experiment::{self, EventWriter, Experiment};
use parallax_model::region::RegionKind;

/// Options of `detection`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Only programs whose file name contains this.
    #[arg(long)]
    pub only: Option<String>,
    /// Keep the experiments in this directory.
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// Measure speed and memory on a synthetic trace of this many events.
    #[arg(long)]
    pub scale: Option<u64>,
    /// Function calls per step of the synthetic trace (each step also
    /// sends and receives one message): the events per dependency.
    #[arg(long, default_value_t = 24)]
    pub calls: u64,
    /// Ranks of the synthetic trace.
    #[arg(long, default_value_t = 32)]
    pub ranks: u32,
    /// Where the synthetic trace goes (default: a temporary directory,
    /// removed afterwards).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

pub fn main(a: &Args) -> Result<(), String> {
    if let Some(n) = a.scale {
        return scale(a, n);
    }
    suite(a)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let o = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(())
}

/// One expected finding.
#[derive(Debug, Clone)]
struct Expected {
    pattern: String,
    at: (u32, u32),
    culprit: Option<(u32, u32)>,
    severity: Option<f64>,
}

fn at_of(v: &Value) -> Option<(u32, u32)> {
    Some((
        v.get("rank")?.as_u64()? as u32,
        v.get("thread")?.as_u64()? as u32,
    ))
}

fn expected(v: &Value) -> Vec<Expected> {
    v.get("findings")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| {
                    Some(Expected {
                        pattern: f.get("pattern")?.as_str()?.to_string(),
                        at: at_of(f)?,
                        culprit: f.get("culprit").and_then(at_of),
                        severity: f.get("severity_s").and_then(Value::as_f64),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn matches(e: &Expected, f: &Finding) -> bool {
    f.pattern.name() == e.pattern
        && (f.at.rank, f.at.thread) == e.at
        && e.culprit
            .is_none_or(|c| f.culprits.iter().any(|x| (x.at.rank, x.at.thread) == c))
}

#[derive(Default)]
struct Tally {
    findings: u64,
    right: u64,
    expected: u64,
    found: u64,
    errors: Vec<f64>,
}

/// The compilers an OpenMP program is built with: each build is a program
/// of the suite.
const OPENMP_COMPILERS: [&str; 2] = ["gcc", "clang"];

/// By OpenMP thread number, the location of each thread of the first
/// process (named `main` and `OpenMP thread N` by the interposition
/// library).
fn openmp_threads(exp: &Experiment) -> BTreeMap<u32, u32> {
    let mut m = BTreeMap::new();
    if let Some(p) = exp.processes.first() {
        for l in p.locations.values() {
            let num = if l.name == "main" {
                Some(0)
            } else {
                l.name
                    .strip_prefix("OpenMP thread ")
                    .and_then(|n| n.parse().ok())
            };
            if let Some(n) = num {
                m.insert(n, l.thread);
            }
        }
    }
    m
}

/// Builds a program (an OpenMP one with `compiler`) and measures it into
/// `out`.
fn measure(
    spec: &Path,
    v: &Value,
    compiler: Option<&str>,
    build: &Path,
    out: &Path,
) -> Result<(), String> {
    let ws = workspace();
    let parallax = ws.join("target/release/parallax");
    let stem = spec
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".expect.json"))
        .ok_or("bad expect file name")?;
    let dir = spec.parent().ok_or("no parent")?;
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut cmd = Command::new(&parallax);
    cmd.args(["run", "--mode", "trace", "--no-report", "--no-db", "--out"])
        .arg(out)
        .arg("--");
    let bin = build.join(format!("{kind}_{stem}{}", compiler.unwrap_or("")));
    match kind {
        "openmp" => {
            run(Command::new(compiler.unwrap_or("gcc"))
                .args(["-O1", "-fopenmp", "-o"])
                .arg(&bin)
                .arg(dir.join(format!("{stem}.c"))))?;
            cmd.arg(&bin);
        }
        "mpi" | "shmem" => {
            let (cc, launcher) = if kind == "mpi" {
                ("mpicc", "mpirun")
            } else {
                ("oshcc", "oshrun")
            };
            run(Command::new(cc)
                .arg("-O1")
                .arg("-o")
                .arg(&bin)
                .arg(dir.join(format!("{stem}.c"))))?;
            let ranks = v.get("ranks").and_then(Value::as_u64).unwrap_or(2);
            if kind == "shmem" {
                // Without UCX's memory hooks Open MPI's OpenSHMEM ends
                // cleanly (docs/interposition.md).
                cmd.env("OMPI_MCA_opal_common_ucx_opal_mem_hooks", "0");
            }
            cmd.args([launcher, "--allow-run-as-root", "--oversubscribe", "-np"])
                .arg(ranks.to_string())
                .arg(&bin);
        }
        "pthreads" => {
            run(Command::new("cc")
                .args(["-O1", "-pthread", "-o"])
                .arg(&bin)
                .arg(dir.join(format!("{stem}.c"))))?;
            cmd.arg(&bin);
        }
        "rust" => {
            cmd.arg(ws.join("target/release/bottlenecks"));
            for a in v
                .get("args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                cmd.arg(a.as_str().unwrap_or(""));
            }
        }
        k => return Err(format!("{}: unknown kind {k:?}", spec.display())),
    }
    run(&mut cmd)
}

fn suite(a: &Args) -> Result<(), String> {
    let ws = workspace();
    run(Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "parallax-cli",
            "-p",
            "parallax-preload",
            "-p",
            "parallax-workloads",
            "--bin",
            "parallax",
            "--bin",
            "bottlenecks",
            "--lib",
        ])
        .current_dir(&ws))?;
    let root = ws.join("workloads/bottlenecks");
    let mut specs = Vec::new();
    for sub in ["mpi", "openmp", "pthreads", "rust", "shmem"] {
        let Ok(rd) = std::fs::read_dir(root.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.to_string_lossy().to_string();
            if name.ends_with(".expect.json")
                && a.only.as_ref().is_none_or(|o| name.contains(o.as_str()))
            {
                specs.push(p);
            }
        }
    }
    specs.sort();
    let tmp = std::env::temp_dir().join(format!("parallax-detection-{}", std::process::id()));
    let keep = a.keep.clone().unwrap_or_else(|| tmp.join("exp"));
    let build = tmp.join("bin");
    std::fs::create_dir_all(&build).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&keep).map_err(|e| e.to_string())?;
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut programs = Vec::new();
    let mut runs: Vec<(&PathBuf, Option<&str>)> = Vec::new();
    for spec in &specs {
        if spec.parent().is_some_and(|d| d.ends_with("openmp")) {
            runs.extend(OPENMP_COMPILERS.iter().map(|&c| (spec, Some(c))));
        } else {
            runs.push((spec, None));
        }
    }
    for (spec, compiler) in runs {
        let text = std::fs::read_to_string(spec).map_err(|e| e.to_string())?;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", spec.display()))?;
        let mut rel = spec
            .strip_prefix(&root)
            .unwrap_or(spec)
            .display()
            .to_string();
        if let Some(c) = compiler {
            rel = format!("{rel} [{c}]");
        }
        let out = keep.join(rel.replace(['/', '.', ' ', '[', ']'], "_"));
        let _ = std::fs::remove_dir_all(&out);
        measure(spec, &v, compiler, &build, &out)?;
        let exp = Experiment::open(&out).map_err(|e| e.to_string())?;
        let rep = bottleneck::analyze(&exp, &Config::default(), Executor::Sequential)
            .map_err(|e| e.to_string())?;
        let mut exp_f = expected(&v);
        if compiler.is_some() {
            // An OpenMP program's findings name OpenMP thread numbers.
            let threads = openmp_threads(&exp);
            let loc = |(r, t): (u32, u32)| (r, threads.get(&t).copied().unwrap_or(u32::MAX));
            for e in &mut exp_f {
                e.at = loc(e.at);
                e.culprit = e.culprit.map(loc);
            }
        }
        let mut wrong = Vec::new();
        for f in &rep.findings {
            let t = tallies.entry(f.pattern.name().to_string()).or_default();
            t.findings += 1;
            if exp_f.iter().any(|e| matches(e, f)) {
                t.right += 1;
            } else {
                wrong.push(format!(
                    "{} at {}/{} ({:.3} s)",
                    f.pattern.name(),
                    f.at.rank,
                    f.at.thread,
                    f.severity_s
                ));
            }
        }
        let mut missed = Vec::new();
        for e in &exp_f {
            let t = tallies.entry(e.pattern.clone()).or_default();
            t.expected += 1;
            let hits: Vec<&Finding> = rep.findings.iter().filter(|f| matches(e, f)).collect();
            if hits.is_empty() {
                missed.push(format!("{} at {}/{}", e.pattern, e.at.0, e.at.1));
                continue;
            }
            t.found += 1;
            if let Some(s) = e.severity {
                let got: f64 = hits.iter().map(|f| f.severity_s).sum();
                t.errors.push((got - s).abs() / s);
            }
        }
        programs.push(json!({
            "program": rel,
            "findings": rep.findings.iter().map(|f| json!({
                "pattern": f.pattern.name(), "rank": f.at.rank, "thread": f.at.thread,
                "severity_s": f.severity_s,
            })).collect::<Vec<_>>(),
            "false": wrong,
            "missed": missed,
        }));
        if !a.json {
            eprintln!(
                "{rel}: {} finding(s), {} false, {} missed",
                rep.findings.len(),
                wrong.len(),
                missed.len()
            );
        }
    }
    if a.keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let mut patterns = serde_json::Map::new();
    for p in Pattern::ALL {
        let t = tallies.remove(p.name()).unwrap_or_default();
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        patterns.insert(
            p.name().to_string(),
            json!({
                "precision": ratio(t.right, t.findings),
                "recall": ratio(t.found, t.expected),
                "severity_error": median(t.errors),
                "findings": t.findings,
                "expected": t.expected,
            }),
        );
    }
    let v = json!({"patterns": patterns, "programs": programs});
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
    } else {
        println!(
            "{:<24} {:>9} {:>7} {:>9} {:>9}",
            "pattern", "precision", "recall", "sev.err", "expected"
        );
        let f = |x: &Value| x.as_f64().map_or("-".to_string(), |x| format!("{x:.3}"));
        for (k, x) in &patterns {
            println!(
                "{k:<24} {:>9} {:>7} {:>9} {:>9}",
                f(&x["precision"]),
                f(&x["recall"]),
                f(&x["severity_error"]),
                x["expected"]
            );
        }
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

// === synthetic scale test ===

/// Writes a synthetic trace of about `events` events: in each step every
/// rank makes `calls` function calls (rank 1's take a fifth longer), sends
/// to the next rank, receives from the previous one, and every 16 steps
/// joins a barrier. Streaming: memory does not grow with the trace.
pub(crate) fn generate(dir: &Path, events: u64, calls: u64, ranks: u32) -> Result<u64, String> {
    let err = |e: parallax_model::Error| e.to_string();
    let regions = [
        (1, RegionKind::Function, "compute"),
        (2, RegionKind::Send, "MPI_Send"),
        (3, RegionKind::Recv, "MPI_Recv"),
        (4, RegionKind::Barrier, "MPI_Barrier"),
        (5, RegionKind::Function, "kernel"),
    ];
    // 8 + 2 * calls events a step, 4 more every 16th.
    let per_step = 8 + 2 * calls;
    let steps = events / ranks.max(1) as u64 * 16 / (16 * per_step + 4);
    let step_ns = 10_000u64;
    let end = steps * step_ns + 1_000_000;
    let mut total = 0;
    for rank in 0..ranks {
        let pdir = dir.join(experiment::rank_dir(rank));
        std::fs::create_dir_all(&pdir).map_err(|e| e.to_string())?;
        let mut defs = vec![
            Def::Process(ProcessInfo {
                rank,
                ranks,
                pid: 1 + rank,
                host: "synthetic".into(),
                program: "synthetic".into(),
                args: Vec::new(),
                start_unix_ns: 0,
                mode: Mode::Trace,
                version: env!("CARGO_PKG_VERSION").into(),
            }),
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
                tick: end,
                mono_ns: end,
                unix_ns: end,
            },
        ];
        for (id, kind, name) in regions {
            defs.push(Def::Region {
                id,
                kind,
                name: name.into(),
                file: String::new(),
                line: 0,
            });
        }
        defs.push(Def::Location {
            thread: 0,
            name: String::new(),
            os_tid: 0,
        });
        experiment::write_defs(&pdir, rank, &defs).map_err(err)?;
        let mut w = EventWriter::create(&pdir.join(experiment::events_file(0)), rank, 0, 1 << 16)
            .map_err(err)?;
        let next = (rank + 1) % ranks;
        let prev = (rank + ranks - 1) % ranks;
        let work = if rank == 1 { 6_000 } else { 5_000 };
        let mut push = |time: u64, kind: EventKind| w.push(&Event { time, kind });
        for s in 0..steps {
            let t = 1_000_000 + s * step_ns;
            push(t, EventKind::Enter { region: 1 }).map_err(err)?;
            // The kernel calls share the compute time evenly.
            let slice = work / (calls + 1);
            for c in 0..calls {
                let at = t + 1 + c * slice;
                push(at, EventKind::Enter { region: 5 }).map_err(err)?;
                push(at + slice / 2, EventKind::Leave { region: 5 }).map_err(err)?;
            }
            push(t + work, EventKind::Leave { region: 1 }).map_err(err)?;
            push(t + 6_100, EventKind::Enter { region: 2 }).map_err(err)?;
            let msg = EventKind::Send {
                peer: next,
                tag: 0,
                comm: 0,
                bytes: 64,
            };
            push(t + 6_150, msg).map_err(err)?;
            push(t + 6_300, EventKind::Leave { region: 2 }).map_err(err)?;
            push(t + 6_400, EventKind::Enter { region: 3 }).map_err(err)?;
            let recv = EventKind::Recv {
                peer: prev,
                tag: 0,
                comm: 0,
                bytes: 64,
            };
            // The receive from rank 1 completes after its send.
            let done = if prev == 1 { 7_400 } else { 6_600 };
            push(t + done, recv).map_err(err)?;
            push(t + done + 50, EventKind::Leave { region: 3 }).map_err(err)?;
            total += per_step;
            if s % 16 == 15 {
                push(t + 8_000, EventKind::Enter { region: 4 }).map_err(err)?;
                push(t + 8_010, EventKind::CollectiveBegin).map_err(err)?;
                let end = EventKind::CollectiveEnd {
                    op: CollectiveOp::Barrier,
                    comm: 0,
                    root: NO_ROOT,
                    sent: 0,
                    received: 0,
                };
                push(t + 9_000, end).map_err(err)?;
                push(t + 9_050, EventKind::Leave { region: 4 }).map_err(err)?;
                total += 4;
            }
        }
        let summary = w.finish().map_err(err)?;
        experiment::append_defs(&pdir, &[summary.def(0)]).map_err(err)?;
    }
    Ok(total)
}

/// What a finished child process used: CPU seconds (user + system) and
/// peak resident memory (KiB), from `wait4`.
#[derive(Clone, Copy, Debug)]
struct Usage {
    cpu_s: f64,
    peak_rss_kib: u64,
}

/// `struct rusage` of Linux on 64-bit targets: two `timeval`s, then
/// fourteen longs, `ru_maxrss` (KiB) first.
#[repr(C)]
struct RUsage {
    utime: [i64; 2],
    stime: [i64; 2],
    rest: [i64; 14],
}

extern "C" {
    fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut RUsage) -> i32;
}

/// Runs `cmd` to its end: its standard output, wall seconds and usage.
fn run_measured(cmd: &mut Command) -> Result<(Vec<u8>, f64, Usage), String> {
    use std::io::Read;
    use std::process::Stdio;
    let t = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let drain = std::thread::spawn(move || {
        let mut err = Vec::new();
        let _ = stderr.read_to_end(&mut err);
        err
    });
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .ok_or("no stdout")?
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    let mut status = 0i32;
    let mut ru = RUsage {
        utime: [0; 2],
        stime: [0; 2],
        rest: [0; 14],
    };
    // SAFETY: the child is ours and not reaped yet; `ru` has the layout
    // wait4 writes.
    let pid = unsafe { wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let secs = t.elapsed().as_secs_f64();
    let err = drain.join().unwrap_or_default();
    if pid < 0 || status != 0 {
        return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&err)));
    }
    let tv = |v: [i64; 2]| v[0] as f64 + v[1] as f64 * 1e-6;
    let usage = Usage {
        cpu_s: tv(ru.utime) + tv(ru.stime),
        peak_rss_kib: ru.rest[0].max(0) as u64,
    };
    Ok((out, secs, usage))
}

/// Reads every file under `dir` once.
fn read_tree(dir: &Path) -> Result<(), String> {
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            read_tree(&p)?;
        } else {
            let mut f = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            std::io::copy(&mut f, &mut std::io::sink()).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn scale(a: &Args, events: u64) -> Result<(), String> {
    let tmp = std::env::temp_dir().join(format!("parallax-scale-{}", std::process::id()));
    let dir = a.dir.clone().unwrap_or_else(|| tmp.clone());
    if !dir.join(experiment::rank_dir(0)).is_dir() {
        let t = Instant::now();
        let n = generate(&dir, events, a.calls, a.ranks)?;
        eprintln!("wrote {n} events in {:.1} s", t.elapsed().as_secs_f64());
    }
    // The command users run, as they run it.
    run(Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "-p", "parallax-cli"])
        .args(["--bin", "parallax"])
        .current_dir(workspace()))?;
    let cli = workspace().join("target/release/parallax");
    // `parallax analyze D --json` on this many threads, measured.
    let analyze = |threads: usize| {
        let mut cmd = Command::new(&cli);
        cmd.arg("analyze").arg(&dir).arg("--json");
        if threads > 1 {
            cmd.args(["--executor", "threads", "--threads", &threads.to_string()]);
        }
        run_measured(&mut cmd)
    };
    // Every timed run reads the trace from the page cache: the first one
    // would otherwise read it from disk.
    read_tree(&dir)?;
    let runs = [analyze(1)?, analyze(2)?];
    // The machine's own limit for two cores: two one-thread analyses at
    // once (they share nothing but the hardware) against one alone.
    let t = Instant::now();
    let pair: Vec<_> = std::thread::scope(|s| {
        let one = || analyze(1);
        let handles = [s.spawn(one), s.spawn(one)];
        handles.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("a pair run panicked".into()))
        })
    })
    .into_iter()
    .collect::<Result<_, String>>()?;
    let pair_s = t.elapsed().as_secs_f64();
    if pair.iter().any(|r| r.0 != runs[0].0) {
        return Err("two analyses at once printed another report".into());
    }
    if a.dir.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let report: Value = serde_json::from_slice(&runs[0].0).map_err(|e| e.to_string())?;
    let ev = report["events"].as_f64().unwrap_or(0.0);
    let (s1, s2) = (runs[0].1, runs[1].1);
    let (u1, u2) = (runs[0].2, runs[1].2);
    let out = json!({
        "events": report["events"],
        "seconds_1": s1,
        "seconds_2": s2,
        "events_per_s_1": ev / s1,
        "cpu_seconds_1": u1.cpu_s,
        "cpu_seconds_2": u2.cpu_s,
        "events_per_cpu_s_1": ev / u1.cpu_s,
        "load_average": std::fs::read_to_string("/proc/loadavg").ok().and_then(|l| l.split_whitespace().next().map(str::to_string)),
        "speedup_2": s1 / s2,
        // Two analyses at once: how much two cores give here at best.
        "seconds_pair": pair_s,
        "ceiling_2": 2.0 * s1 / pair_s,
        "peak_rss_mib_1": u1.peak_rss_kib as f64 / 1024.0,
        "peak_rss_mib_2": u2.peak_rss_kib as f64 / 1024.0,
        "identical": runs[0].0 == runs[1].0,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
    );
    Ok(())
}
