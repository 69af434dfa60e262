//! What `report` and `analyze` show a person, on real programs: an MPI
//! Jacobi solver with one overloaded rank, a rayon program, the
//! ground-truth programs of workloads/bottlenecks and the demo. Each
//! table's rows, shares and means must be of the right population and
//! total, cut tables must say what they leave out, and every view names
//! locations and synchronization objects alike.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::*;
use serde_json::Value;

fn mpirun() -> Command {
    let mut c = Command::new("mpirun");
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]);
    c
}

/// workloads/mpi/jacobi_overloaded.c, compiled once.
fn jacobi() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe = tmp("views-jacobi").join("jacobi");
        compile(
            "mpicc",
            &[
                "-O1",
                "mpi/jacobi_overloaded.c",
                "-o",
                exe.to_str().unwrap(),
                "-lm",
            ],
        );
        exe
    })
    .clone()
}

/// The Jacobi solver on 4 ranks measured in `mode` into a fresh
/// experiment.
fn measure_jacobi(name: &str, mode: &str) -> PathBuf {
    let out = tmp(name).join("exp");
    let exe = jacobi();
    let o = run(
        &out,
        &["--mode", mode],
        &[
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "--mca",
            "mpi_yield_when_idle",
            "1",
            "-np",
            "4",
            exe.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// A program of the workspace built by cargo (a binary of `package`, or
/// an example of the CLI), next to the parallax binary.
fn built(package: &str, what: &str, name: &str) -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_parallax"));
    let dir = bin.parent().unwrap();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--quiet", "-p", package, what, name])
        .current_dir(workspace());
    if dir.ends_with("release") {
        cmd.arg("--release");
    }
    assert!(cmd.status().unwrap().success(), "cargo build {what} {name}");
    let exe = if what == "--example" {
        dir.join("examples").join(name)
    } else {
        dir.join(name)
    };
    assert!(exe.is_file(), "{} missing", exe.display());
    exe
}

/// The rayon program measured under `parallax run`.
fn measure_rayon(name: &str) -> PathBuf {
    let exe = built("parallax-cli", "--example", "rayon_smooth");
    let out = tmp(name).join("exp");
    let o = run(
        &out,
        &["--mode", "both"],
        &[exe.to_str().unwrap(), "64", "20", "2"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// A ground-truth program of workloads/bottlenecks (C with pthreads or
/// MPI) measured as its expectation says; returns the experiment and the
/// expectation.
fn measure_truth(name: &str) -> (PathBuf, Value) {
    let root = workloads().join("bottlenecks");
    let expect: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(format!("{name}.expect.json"))).unwrap(),
    )
    .unwrap();
    let d = tmp(&format!("views-{}", name.replace('/', "-")));
    let out = d.join("exp");
    let o = match expect["kind"].as_str().unwrap() {
        "rust" => {
            let exe = built("parallax-workloads", "--bin", "bottlenecks");
            let args: Vec<&str> = expect["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            let mut cmd = vec![exe.to_str().unwrap()];
            cmd.extend(args);
            let cmd: Vec<String> = cmd.into_iter().map(str::to_string).collect();
            let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
            run(&out, &["--mode", "trace"], &cmd)
        }
        kind => {
            let exe = d.join("prog");
            let cc = if kind == "mpi" { "mpicc" } else { "gcc" };
            let src = root.join(format!("{name}.c"));
            compile(
                cc,
                &[
                    "-O1",
                    "-pthread",
                    "-o",
                    exe.to_str().unwrap(),
                    src.to_str().unwrap(),
                ],
            );
            let np = expect["ranks"].as_u64().unwrap_or(1).to_string();
            let exe = exe.to_str().unwrap();
            let cmd: Vec<&str> = if kind == "mpi" {
                vec![
                    "mpirun",
                    "--allow-run-as-root",
                    "--oversubscribe",
                    "-np",
                    &np,
                    exe,
                ]
            } else {
                vec![exe]
            };
            run(&out, &["--mode", "trace"], &cmd)
        }
    };
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    (out, expect)
}

fn parallax_out(args: &[&str], dir: &Path) -> Output {
    parallax().args(args).arg(dir).output().unwrap()
}

fn analyze_json(dir: &Path) -> Value {
    let o = parallax_out(&["analyze", "--json"], dir);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The lines of section `head` of a text report (up to the next blank
/// line or unindented line).
fn section<'a>(text: &'a str, head: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(head))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect()
}

#[test]
fn analyze_without_a_trace_says_so_runs_what_profiles_allow_and_fails() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    let exp = measure_jacobi("views-profile", "profile");
    let o = parallax_out(&["analyze"], &exp);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let (text, err) = (stdout(&o), stderr(&o));
    assert!(err.contains("has no trace"), "{err}");
    assert!(
        err.contains("--mode trace") && err.contains("both"),
        "{err}"
    );
    assert!(
        text.contains("from profiles only") && text.contains("Not analysed"),
        "{text}"
    );
    assert!(text.contains("wait states"), "{text}");
    // Load balance ran, over the four ranks' measured time.
    let rows = section(&text, "Load balance");
    assert_eq!(rows.len(), 5, "{text}");
    let o = parallax_out(&["analyze", "--json"], &exp);
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trace"], false);
    assert!(!v["skipped"].as_array().unwrap().is_empty());
    let balance = v["balance"].as_array().unwrap();
    assert_eq!(balance.len(), 4, "{v:#}");
    for b in balance {
        assert!(f(&b["measured_s"]) > 0.1, "{b}");
        assert!(f(&b["computation_s"]) > 0.0, "{b}");
    }
    // The overloaded rank computes most.
    assert_eq!(balance[0]["rank"], 3, "{v:#}");
}

#[test]
fn cut_tables_are_largest_first_and_count_what_they_leave_out() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    let exp = measure_jacobi("views-top", "trace");
    let o = parallax_out(&["analyze", "--top", "3"], &exp);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // The overloaded rank heads the load balance, the fourth is counted.
    let rows = section(&text, "Load balance");
    assert!(rows[1].contains("rank 3"), "{text}");
    assert_eq!(rows.len(), 5, "{text}");
    assert!(rows[4].contains("… 1 more locations"), "{text}");
    let v = analyze_json(&exp);
    for table in ["findings", "delays", "balance", "regions", "blocks"] {
        assert_eq!(
            v["counts"][table].as_u64().unwrap() as usize,
            v[table].as_array().unwrap().len(),
            "{table}"
        );
    }
    assert_eq!(
        v["counts"]["critical_path"].as_u64().unwrap() as usize,
        v["critical_path"]["regions"].as_array().unwrap().len()
    );
    // Every table cut in the text says so, and lists its largest rows.
    let sorted = |key: &str, rows: &[Value]| {
        rows.windows(2)
            .all(|w| f(&w[0][key]) + 1e-12 >= f(&w[1][key]))
    };
    assert!(sorted("computation_s", v["balance"].as_array().unwrap()));
    assert!(sorted("severity_s", v["findings"].as_array().unwrap()));
    assert!(sorted("imbalance_s", v["regions"].as_array().unwrap()));
    assert!(sorted("imbalance_s", v["blocks"].as_array().unwrap()));
    assert!(sorted(
        "time_s",
        v["critical_path"]["regions"].as_array().unwrap()
    ));
    let o = parallax_out(&["analyze", "--top", "1"], &exp);
    let text = stdout(&o);
    for (head, n) in [
        ("Load balance", v["balance"].as_array().unwrap().len()),
        ("Root causes", v["delays"].as_array().unwrap().len()),
        (
            "Critical path",
            v["critical_path"]["regions"].as_array().unwrap().len(),
        ),
    ] {
        let rows = section(&text, head);
        if n > 1 {
            assert!(
                rows.last().unwrap().contains(&format!("… {} more", n - 1)),
                "{head}: {text}"
            );
        }
    }
    let n = v["findings"].as_array().unwrap().len();
    if n > 1 {
        assert!(
            text.contains(&format!("… {} more findings", n - 1)),
            "{text}"
        );
    }
}

/// Checks that hold for any analysis: means over the locations that ran
/// a region, shares of the right totals, counts that match.
fn audit(name: &str, exp: &Path, v: &Value) {
    let report = report_json(exp);
    // Exclusive time of each region per location, from the profiles.
    let mut ran: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for l in report["locations"].as_array().unwrap() {
        for r in l["flat"].as_array().unwrap() {
            let t = f(&r["exclusive_ns"]) * 1e-9;
            if t > 0.0 {
                ran.entry(r["region"].as_str().unwrap().to_string())
                    .or_default()
                    .push(t);
            }
        }
    }
    for r in v["regions"].as_array().unwrap() {
        let region = r["region"].as_str().unwrap();
        let times = &ran[region];
        let n = r["locations"].as_u64().unwrap() as usize;
        assert!(
            n >= 2 && n <= times.len(),
            "{name}: {region} over {n} of {}",
            times.len()
        );
        // A mean over locations that ran it lies within their times: a
        // location that never ran it would pull it below the least.
        let least = times.iter().copied().fold(f64::INFINITY, f64::min);
        let most = times.iter().copied().fold(0.0, f64::max);
        let mean = f(&r["mean_s"]);
        assert!(
            mean >= least * 0.999 && mean <= most * 1.001,
            "{name}: {region} mean {mean} outside [{least}, {most}]"
        );
    }
    let wall = f(&v["wall_s"]);
    let mut measured = 0.0;
    for b in v["balance"].as_array().unwrap() {
        let m = f(&b["measured_s"]);
        measured += m;
        let parts = f(&b["computation_s"]) + f(&b["communication_s"]) + f(&b["synchronization_s"]);
        assert!(parts <= m * 1.001 + 1e-6, "{name}: parts {parts} of {m}");
        assert!(
            m <= wall * 1.001 + 1e-6,
            "{name}: {m} beyond the wall {wall}"
        );
    }
    assert!((f(&v["measured_s"]) - measured).abs() <= 1e-6 * measured.max(1.0));
    assert!(f(&v["uncontrollable_s"]) <= measured * 1.001, "{name}");
    for x in v["findings"].as_array().unwrap() {
        let share = f(&x["share_of_wall"]);
        assert!((0.0..=1.001).contains(&share), "{name}: {x}");
        // Named as the report names the location.
        let label = x["location"].as_str().unwrap();
        let loc = report["locations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["rank"] == x["rank"] && l["thread"] == x["thread"])
            .unwrap();
        assert_eq!(loc["location"], label, "{name}");
    }
    // The load imbalance found is the one injected, and only that.
    let mut found: Vec<(u64, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["pattern"] == "load_imbalance")
        .map(|x| (x["rank"].as_u64().unwrap(), x["thread"].as_u64().unwrap()))
        .collect();
    found.sort();
    let mut expected: Vec<(u64, u64)> = v["_expected"]
        .as_array()
        .map(|e| {
            e.iter()
                .filter(|x| x["pattern"] == "load_imbalance")
                .map(|x| (x["rank"].as_u64().unwrap(), x["thread"].as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    expected.sort();
    if v.get("_expected").is_some() {
        if name.starts_with("mpi/") {
            // Four ranks on two cores: a rank held off its core is late
            // for real now and then (docs/analysis.md); the injected one
            // must be there.
            assert!(expected.iter().all(|e| found.contains(e)), "{name}: {v:#}");
        } else {
            assert_eq!(found, expected, "{name}: {v:#}");
        }
    }
}

#[test]
fn every_table_is_of_the_right_population_on_the_ground_truth_programs() {
    if !require(&["gcc", "mpicc", "mpirun"]) {
        return;
    }
    for name in [
        "pthreads/lock",
        "pthreads/barrier",
        "pthreads/join",
        "pthreads/task_queue",
        "mpi/barrier",
        "mpi/halo",
        "rust/barrier",
        "rust/lock",
        "rust/join",
    ] {
        let (exp, expect) = measure_truth(name);
        let mut v = analyze_json(&exp);
        v["_expected"] = expect["findings"].clone();
        audit(name, &exp, &v);
    }
}

#[test]
fn a_balanced_rayon_pool_is_not_load_imbalance() {
    let exp = measure_rayon("views-rayon");
    let v = analyze_json(&exp);
    audit("rayon", &exp, &v);
    // `smooth` ran on the pool's two workers, compared with each other
    // (not with the main thread or the writer, which never ran it).
    let smooth: Vec<&Value> = v["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["region"] == "smooth")
        .collect();
    assert_eq!(smooth.len(), 1, "{v:#}");
    assert_eq!(smooth[0]["locations"], 2, "{v:#}");
    let imbalance: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["pattern"] == "load_imbalance")
        .collect();
    assert!(imbalance.is_empty(), "{v:#}");
    // The writer (named by the program) is named so.
    let text = stdout(&parallax_out(&["analyze"], &exp));
    assert!(text.contains("writer (thread "), "{text}");
}

#[test]
fn locations_are_named_alike_in_report_and_analyze() {
    let dir = tmp("views-names").join("demo");
    let o = parallax()
        .args([
            "demo",
            "--no-db",
            "--threads",
            "3",
            "--iterations",
            "20",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v = analyze_json(&dir);
    let report = report_json(&dir);
    let named = report["locations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["name"].as_str().unwrap().starts_with("worker-"))
        .count();
    assert_eq!(named, 3, "{report:#}");
    for l in report["locations"].as_array().unwrap() {
        let label = l["location"].as_str().unwrap();
        let name = l["name"].as_str().unwrap();
        if !name.is_empty() {
            assert_eq!(label, format!("{name} (thread {})", l["thread"]));
        }
    }
    let labels: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["location"].as_str().unwrap())
        .collect();
    assert!(labels.iter().any(|l| l.starts_with("worker-")), "{v:#}");
    let text = stdout(&parallax_out(&["analyze"], &dir));
    assert!(!text.contains("rank 0 thread"), "{text}");
    assert!(text.contains(" at worker-"), "{text}");
    let rtext = stdout(&parallax_out(&["report"], &dir));
    assert!(rtext.contains("Location worker-0 (thread "), "{rtext}");
}

#[test]
fn communicators_and_barriers_have_readable_names() {
    if !require(&["gcc", "mpicc", "mpirun"]) {
        return;
    }
    let exp = measure_jacobi("views-comm", "trace");
    let v = analyze_json(&exp);
    let world = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["comm"] == 0)
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(world["name"], "MPI_COMM_WORLD (4 ranks)");
    let text = stdout(&parallax_out(&["analyze"], &exp));
    assert!(text.contains("MPI_COMM_WORLD (4 ranks): "), "{text}");
    assert!(!text.contains("0x"), "{text}");
    let (exp, _) = measure_truth("pthreads/barrier");
    let v = analyze_json(&exp);
    let b = &v["blocks"][0];
    let name = b["name"].as_str().unwrap();
    assert!(
        name.starts_with("barrier #1 (pthread_barrier_wait") && name.ends_with("threads)"),
        "{name}"
    );
    assert!(b["comm"].as_u64().is_some());
    let text = stdout(&parallax_out(&["analyze"], &exp));
    assert!(!text.contains("0x"), "{text}");
}

#[test]
fn condition_variables_are_labelled_as_such() {
    if !require(&["gcc"]) {
        return;
    }
    let kind = |exp: &Path, region: &str| -> String {
        let r = report_json(exp);
        r["total"]["flat"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["region"] == region)
            .unwrap_or_else(|| panic!("no {region}: {r:#}"))["kind"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (cond, _) = measure_truth("pthreads/cond");
    assert_eq!(kind(&cond, "pthread_cond_wait"), "cond_wait");
    assert_eq!(kind(&cond, "pthread_cond_signal"), "cond_signal");
    assert_eq!(kind(&cond, "pthread_mutex_lock"), "lock");
    let text = stdout(&parallax_out(&["report"], &cond));
    let line = text
        .lines()
        .find(|l| l.ends_with(" pthread_cond_wait"))
        .unwrap();
    assert!(
        line.contains("cond_wait") && !line.contains("sem_wait"),
        "{line}"
    );
    let (sem, _) = measure_truth("pthreads/semaphore");
    assert_eq!(kind(&sem, "sem_wait"), "sem_wait");
    assert_eq!(kind(&sem, "sem_post"), "sem_post");
    let (rust, _) = measure_truth("rust/condvar");
    assert_eq!(kind(&rust, "Condvar::wait"), "cond_wait");
    assert_eq!(kind(&rust, "Condvar::notify_one"), "cond_signal");
}

#[test]
fn a_location_s_shares_are_of_its_whole_measured_time() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    let exp = measure_jacobi("views-root", "both");
    let r = report_json(&exp);
    for l in r["locations"].as_array().unwrap() {
        let measured = f(&l["measured_ns"]);
        let outside = f(&l["outside_ns"]);
        // The sweeps are outside any recorded region: a good part.
        assert!(outside > 0.0 && outside < measured, "{l:#}");
        let shares: f64 = l["flat"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| f(&x["share"]))
            .sum();
        let total = shares + outside / measured;
        assert!((total - 1.0).abs() < 0.01, "{total}: {l:#}");
    }
    assert!(f(&r["total"]["outside_ns"]) > 0.0);
    let text = stdout(&parallax_out(&["report"], &exp));
    assert!(text.contains("(outside recorded regions)"), "{text}");
    assert!(text.contains("(whole location)"), "{text}");
    // MPI_Init is a share of the whole run, not of the MPI calls.
    let init = r["total"]["flat"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["region"] == "MPI_Init")
        .unwrap();
    assert!(f(&init["share"]) < 0.75, "{init:#}");
}

#[test]
fn a_launcher_s_ranks_say_things_once_and_colour_only_when_asked() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    preload();
    let exp = tmp("views-launch").join("exp");
    let exe = jacobi();
    // `mpirun -np 2 parallax run`: one report, one set of messages,
    // no colour in the file mpirun writes to.
    let o = mpirun()
        .args(["-np", "2"])
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .args(["run", "--no-db", "--out"])
        .arg(&exp)
        .args(["--", exe.to_str().unwrap(), "64", "5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(out.matches("Flat profile").count(), 1, "{out}");
    assert_eq!(err.matches("ended (exit 0)").count(), 1, "{err}");
    assert_eq!(err.matches("measuring `").count(), 1, "{err}");
    assert!(!out.contains('\x1b'), "{out}");
    for cmd in ["report", "analyze"] {
        let o = mpirun()
            .args(["-np", "2"])
            .arg(env!("CARGO_BIN_EXE_parallax"))
            .arg(cmd)
            .arg(&exp)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        let head = if cmd == "report" {
            "Flat profile"
        } else {
            "Bottleneck analysis"
        };
        assert_eq!(text.matches(head).count(), 1, "{cmd}: {text}");
        assert!(!text.contains('\x1b'), "{cmd}: {text}");
    }
    let o = mpirun()
        .args(["-np", "2"])
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .args(["report", "--color", "always"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(stdout(&o).contains("\x1b[1mFlat profile"), "{}", stdout(&o));
    let o = parallax()
        .args(["report", "--color", "never"])
        .arg(&exp)
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(!stdout(&o).contains('\x1b'));
}

#[test]
fn a_wait_on_a_parallax_sync_primitive_points_at_the_caller_s_line() {
    let (exp, _) = measure_truth("rust/lock");
    let v = analyze_json(&exp);
    let w: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["pattern"] == "lock_wait")
        .collect();
    assert_eq!(w.len(), 1, "{v:#}");
    // The waiter's lock call in the program, found by its text.
    let src = std::fs::read_to_string(workloads().join("bottlenecks/rust/main.rs")).unwrap();
    let line = src
        .lines()
        .position(|l| l.contains("*m.lock().unwrap() += 1;"))
        .unwrap()
        + 1;
    let source = w[0]["source"].as_str().unwrap();
    assert!(
        source.ends_with(&format!("bottlenecks/rust/main.rs:{line}")),
        "{source}"
    );
    assert_eq!(w[0]["region"], "Mutex::lock");
    assert!(w[0]["hint"].as_str().unwrap().contains("main.rs"), "{v:#}");
    // No region of the primitives is placed in the runtime's own file.
    let report = report_json(&exp);
    let text = stdout(&parallax_out(&["analyze"], &exp));
    assert!(!text.contains("sync.rs"), "{text}");
    assert!(!report.to_string().contains("src/sync.rs"));
}
