//! `parallax analyze`, `scaling`, `compare` and `baseline` end to end: the
//! ground-truth programs of workloads/bottlenecks are compiled, measured
//! with `parallax run` and analysed; the findings must name the injected
//! bottleneck, its location and its culprit, and the bottleneck-free
//! program must give none.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// Compiles workloads/bottlenecks/`src` with `cc` and measures it (under
/// `mpirun -np ranks` if given) into a fresh experiment.
fn measure(name: &str, cc: &str, src: &str, ranks: Option<u32>) -> PathBuf {
    let d = tmp(name);
    let exe = d.join(name);
    let mut args = vec!["-O1", "-pthread", "-o", exe.to_str().unwrap()];
    let src = workloads().join("bottlenecks").join(src);
    args.push(src.to_str().unwrap());
    compile(cc, &args);
    let out = d.join("exp");
    let exe = exe.to_str().unwrap().to_string();
    let np = ranks.map(|r| r.to_string());
    let cmd: Vec<&str> = match &np {
        Some(n) => vec![
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            n,
            &exe,
        ],
        None => vec![&exe],
    };
    let o = run(&out, &["--mode", "trace"], &cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn analyze(dir: &Path, extra: &[&str]) -> Value {
    let o = parallax()
        .arg("analyze")
        .arg(dir)
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn findings<'a>(v: &'a Value, pattern: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["pattern"] == pattern)
        .collect()
}

fn at(f: &Value) -> (u64, u64) {
    (f["rank"].as_u64().unwrap(), f["thread"].as_u64().unwrap())
}

#[test]
fn lock_contention_names_the_holder_with_a_hint() {
    let exp = measure("bn-lock", "gcc", "pthreads/lock.c", None);
    let v = analyze(&exp, &[]);
    let w = findings(&v, "lock_wait");
    assert_eq!(w.len(), 1, "{v:#}");
    assert_eq!(at(w[0]), (0, 2));
    assert_eq!(at(&w[0]["culprits"][0]), (0, 1));
    let s = w[0]["severity_s"].as_f64().unwrap();
    // 30 ms held, asked for 1 ms later, ten times; sleeps overshoot on a busy machine.
    assert!((0.1..1.0).contains(&s), "severity {s}");
    assert_eq!(w[0]["region"], "pthread_mutex_lock");
    assert!(w[0]["hint"].as_str().unwrap().contains("critical section"));
    // The holder's computation inside the lock caused the waiting.
    let d = &v["delays"][0];
    assert_eq!(
        (d["rank"].as_u64(), d["thread"].as_u64()),
        (Some(0), Some(1))
    );
    // Ranked by severity.
    let sev: Vec<f64> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity_s"].as_f64().unwrap())
        .collect();
    assert!(sev.windows(2).all(|w| w[0] >= w[1]));
    // Same result on the thread pool, and a readable text form.
    assert_eq!(analyze(&exp, &["--threads", "2"]), v);
    let o = parallax().arg("analyze").arg(&exp).output().unwrap();
    let text = stdout(&o);
    assert!(
        text.contains("lock_wait") && text.contains("caused by: thread 1"),
        "{text}"
    );
}

#[test]
fn a_lock_convoy_names_the_long_holder_in_every_wait() {
    let exp = measure("bn-convoy", "gcc", "pthreads/lock_convoy.c", None);
    let v = analyze(&exp, &[]);
    let mut waiters = Vec::new();
    for f in findings(&v, "lock_wait") {
        // The heaviest culprit of each wait is thread 1, the long holder.
        let top = f["culprits"]
            .as_array()
            .unwrap()
            .iter()
            .max_by(|a, b| {
                let s = |c: &Value| c["severity_s"].as_f64().unwrap();
                s(a).total_cmp(&s(b))
            })
            .unwrap();
        assert_eq!(at(top), (0, 1), "{f:#}");
        waiters.push(at(f).1);
    }
    waiters.sort();
    assert_eq!(waiters, [2, 3, 4], "{v:#}");
}

#[test]
fn trylock_and_trywait_loops_are_waits_for_the_holder_and_the_poster() {
    for (src, pattern, region) in [
        ("pthreads/trylock.c", "lock_wait", "pthread_mutex_trylock"),
        ("pthreads/trywait.c", "condition_wait", "sem_trywait"),
    ] {
        let exp = measure(pattern, "gcc", src, None);
        let v = analyze(&exp, &[]);
        // One finding at the polling call, the heaviest of its kind (a
        // loaded machine may add a short wait elsewhere).
        let all = findings(&v, pattern);
        let w: Vec<_> = all.iter().filter(|f| f["region"] == region).collect();
        assert_eq!(w.len(), 1, "{src}: {v:#}");
        let severity = |f: &Value| f["severity_s"].as_f64().unwrap();
        assert!(
            all.iter().all(|f| severity(f) <= severity(w[0])),
            "{src}: {v:#}"
        );
        assert_eq!((at(w[0]), at(&w[0]["culprits"][0])), ((0, 2), (0, 1)));
        let s = w[0]["severity_s"].as_f64().unwrap();
        assert!((0.2..1.0).contains(&s), "{src}: severity {s}");
        assert!(
            findings(&v, "frequent_small_events").is_empty(),
            "{src}: {v:#}"
        );
    }
}

#[test]
fn a_bottleneck_free_program_has_no_finding() {
    let exp = measure("bn-clean", "gcc", "pthreads/clean.c", None);
    let v = analyze(&exp, &[]);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0, "{v:#}");
    assert!(v["events"].as_u64().unwrap() > 100);
    assert!(v["critical_path"]["length_s"].as_f64().unwrap() > 0.05);
}

#[test]
fn late_sender_between_mpi_ranks() {
    let exp = measure("bn-ls", "mpicc", "mpi/late_sender.c", Some(2));
    rank_1_waits_for_rank_0_in(&exp, "MPI_Recv");
}

#[test]
fn a_late_sender_is_waited_for_in_the_probe_before_the_receive() {
    let exp = measure("bn-probe", "mpicc", "mpi/probe.c", Some(2));
    rank_1_waits_for_rank_0_in(&exp, "MPI_Probe");
}

#[test]
fn a_late_sender_polled_with_mpi_test_is_one_wait_not_frequent_calls() {
    let exp = measure("bn-test", "mpicc", "mpi/late_sender_test.c", Some(2));
    let v = rank_1_waits_for_rank_0_in(&exp, "MPI_Test");
    assert!(findings(&v, "frequent_small_events").is_empty(), "{v:#}");
}

#[test]
fn a_late_sender_waited_for_by_probing_is_found_at_the_probe() {
    let exp = measure("bn-iprobe", "mpicc", "mpi/late_sender_iprobe.c", Some(2));
    rank_1_waits_for_rank_0_in(&exp, "MPI_Iprobe");
}

#[test]
fn a_receive_posted_after_polling_with_a_matched_probe_waited_in_the_probe() {
    let exp = measure("bn-improbe", "mpicc", "mpi/late_sender_improbe.c", Some(2));
    let v = rank_1_waits_for_rank_0_in(&exp, "MPI_Improbe");
    assert!(findings(&v, "frequent_small_events").is_empty(), "{v:#}");
}

#[test]
fn a_matched_probe_and_its_receive_are_recorded() {
    let exp = measure("bn-mprobe", "mpicc", "mpi/late_sender_mprobe.c", Some(2));
    let v = rank_1_waits_for_rank_0_in(&exp, "MPI_Mprobe");
    assert_eq!(v["unmatched"], 0);
}

#[test]
fn a_late_root_of_a_nonblocking_broadcast_is_waited_for_in_mpi_wait() {
    let exp = measure("bn-ibcast", "mpicc", "mpi/ibcast.c", Some(4));
    let v = analyze(&exp, &[]);
    let mut w: Vec<_> = findings(&v, "late_broadcast")
        .iter()
        .map(|f| (at(f), at(&f["culprits"][0]), f["region"].as_str().unwrap()))
        .collect();
    w.sort();
    let expected: Vec<_> = (1..4).map(|r| ((r, 0), (0, 0), "MPI_Wait")).collect();
    assert_eq!(w, expected, "{v:#}");
}

#[test]
fn a_join_waiting_for_its_thread_is_not_uncontrollable() {
    // The main thread waits 50 ms in its first join: for the thread's work.
    let exp = measure("bn-join-u", "gcc", "pthreads/join.c", None);
    let v = analyze(&exp, &[]);
    let u = v["uncontrollable_s"].as_f64().unwrap();
    assert!(u < 0.01, "uncontrollable {u}");
    assert_eq!(findings(&v, "join_wait").len(), 1, "{v:#}");
}

#[test]
fn tests_between_chunks_of_computation_are_not_polling() {
    // Rank 1 computes in 2 ms chunks and tests for the message after each;
    // rank 0 sends it 10 ms in, while rank 1 computes: nobody waits.
    let d = tmp("bn-overlap");
    let src = d.join("overlap.c");
    std::fs::write(
        &src,
        r#"#include <mpi.h>
#include <time.h>
static void work_ms(long ms) {
    struct timespec ts = {0, ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}
int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 10; i++) {
        if (rank == 0) {
            work_ms(10);
            MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            work_ms(12);
        } else {
            MPI_Request req;
            int done = 0;
            MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req);
            while (!done) {
                work_ms(2);
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            }
            while (done++ < 6)
                work_ms(2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"#,
    )
    .unwrap();
    let exe = d.join("overlap");
    compile(
        "mpicc",
        &["-O1", "-o", exe.to_str().unwrap(), src.to_str().unwrap()],
    );
    let out = d.join("exp");
    let exe = exe.to_str().unwrap();
    let o = run(
        &out,
        &["--mode", "trace"],
        &["mpirun", "--allow-run-as-root", "-np", "2", exe],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = analyze(&out, &[]);
    assert!(findings(&v, "late_sender").is_empty(), "{v:#}");
}

/// The one Late Sender of a 2-rank program whose rank 0 sends 30 ms late,
/// ten times: at rank 1, in `region`, caused by rank 0. Returns the analysis.
fn rank_1_waits_for_rank_0_in(exp: &Path, region: &str) -> Value {
    let v = analyze(exp, &[]);
    let w = findings(&v, "late_sender");
    assert_eq!(w.len(), 1, "{v:#}");
    assert_eq!((at(w[0]), at(&w[0]["culprits"][0])), ((1, 0), (0, 0)));
    let s = w[0]["severity_s"].as_f64().unwrap();
    // A busy machine only sleeps longer.
    assert!((0.18..1.0).contains(&s), "severity {s}");
    assert_eq!(w[0]["region"], region);
    v
}

#[test]
fn scaling_compare_and_baseline_run_on_real_experiments() {
    let a = measure("bn-join", "gcc", "pthreads/join.c", None);
    let b = measure("bn-barrier", "gcc", "pthreads/barrier.c", None);
    let o = parallax()
        .args(["scaling", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!((runs[0]["efficiency"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    let o = parallax()
        .args(["compare", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changes"][0]["what"], "(run)");
    assert!(v["changes"].as_array().unwrap().len() > 1);
    let file = tmp("bn-baselines").join("b.txt");
    let o = parallax()
        .args(["baseline", "--max-threads", "2", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.lines().any(|l| l.starts_with("barrier 2 ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("lock 1 ")), "{text}");
    // The analysis reads them.
    let v = analyze(&a, &["--baselines", file.to_str().unwrap()]);
    assert_eq!(findings(&v, "join_wait").len(), 1, "{v:#}");
}

#[test]
fn text_findings_fit_100_columns() {
    let dir = tmp("analyze-width");
    let exp = dir.join("demo");
    let o = parallax()
        .args(["demo", "--no-db", "--out"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = parallax().arg("analyze").arg(&exp).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("hint:"), "{text}");
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

/// Copies the directory tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn writers_summarize_each_event_file_and_a_wrong_summary_changes_nothing() {
    use parallax_model::experiment::{append_defs, events_file, rank_dir, Summary};
    use parallax_model::file;

    // What the runtime wrote agrees with the files: their length, their
    // synchronizations on shared objects and their collectives.
    let mpi = measure("bn-sum-mpi", "mpicc", "mpi/barrier.c", Some(4));
    let lock = measure("bn-sum-lock", "gcc", "pthreads/lock.c", None);
    for (dir, syncs) in [(&mpi, false), (&lock, true)] {
        let exp = open(dir);
        let mut total = Summary::default();
        for p in &exp.processes {
            for (t, evs) in events(p) {
                let s = p
                    .summaries
                    .get(&t)
                    .unwrap_or_else(|| panic!("no summary of {t}"));
                let path = p.locations[&t].events.as_ref().unwrap();
                assert_eq!(s.bytes, std::fs::metadata(path).unwrap().len());
                let mut counted = Summary {
                    bytes: s.bytes,
                    ..Summary::default()
                };
                for e in &evs {
                    counted.count(&e.kind);
                }
                assert_eq!(*s, counted, "rank {} thread {t}", p.rank);
                total.syncs += s.syncs;
                total.collectives.extend(s.collectives.iter().copied());
            }
        }
        assert_eq!(total.syncs > 0, syncs, "{}", dir.display());
        assert!(syncs || !total.collectives.is_empty(), "{}", dir.display());
    }
    // Summaries that say there is no synchronization on shared objects
    // (the files are as long as they say) are found out in the replay,
    // and the analysis runs again reading the files, on any executor.
    let truth = analyze(&lock, &[]);
    assert_eq!(findings(&truth, "lock_wait").len(), 1, "{truth:#}");
    let wrong = lock.with_file_name("exp-wrong");
    copy_tree(&lock, &wrong);
    let p = open(&wrong).processes.remove(0);
    let lies: Vec<_> = p
        .summaries
        .iter()
        .map(|(&t, s)| {
            let mut s = s.clone();
            s.syncs = 0;
            s.def(t)
        })
        .collect();
    append_defs(&p.dir, &lies).unwrap();
    assert!(open(&wrong).processes[0]
        .summaries
        .values()
        .all(|s| s.syncs == 0));
    assert_eq!(analyze(&wrong, &[]), truth);
    assert_eq!(analyze(&wrong, &["--threads", "2"]), truth);
    let truth = analyze(&mpi, &[]);
    assert!(!findings(&truth, "wait_at_barrier").is_empty(), "{truth:#}");
    // A file longer than its summary says (here by an empty block) is
    // read instead.
    let longer = mpi.with_file_name("exp-longer");
    copy_tree(&mpi, &longer);
    let ev = longer.join(rank_dir(2)).join(events_file(0));
    let mut bytes = std::fs::read(&ev).unwrap();
    file::push_block(&mut bytes, &[0u8; 24]);
    std::fs::write(&ev, bytes).unwrap();
    assert_eq!(analyze(&longer, &[]), truth);
}
