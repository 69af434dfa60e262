//! OpenMP programs built by gcc, measured through libgomp's entry points
//! with no change to their build: every construct's count against what the
//! program did.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::*;
use parallax_model::event::{CollectiveOp, Event, EventKind, NO_ITERATION};
use parallax_model::experiment::Process;
use parallax_model::region::RegionKind;

const N: u64 = 1000;

/// workloads/c/omp_constructs.c built by gcc with OpenMP.
fn constructs(name: &str) -> (PathBuf, PathBuf) {
    require(&["gcc"]);
    let d = tmp(name);
    let exe = d.join("omp_constructs");
    compile(
        "gcc",
        &[
            "-g",
            "-O1",
            "-fopenmp",
            "omp_constructs.c",
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    (d, exe)
}

/// `src` written to `d/file` (the same each call) and built with
/// `compiler -O1 -fopenmp EXTRA` into `d/STEM-COMPILER`.
fn build(d: &Path, file: &str, src: &str, compiler: &str, extra: &[&str]) -> PathBuf {
    let path = d.join(file);
    std::fs::write(&path, src).unwrap();
    let stem = file.split('.').next().unwrap_or(file);
    let exe = d.join(format!("{stem}-{compiler}"));
    let mut args = vec![
        "-O1",
        "-fopenmp",
        path.to_str().unwrap(),
        "-o",
        exe.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    compile(compiler, &args);
    exe
}

/// Enters of the regions whose name starts with `prefix`, over all
/// locations.
fn enters_of(p: &Process, evs: &BTreeMap<u32, Vec<Event>>, prefix: &str) -> usize {
    let ids: BTreeSet<u32> = p
        .regions
        .iter()
        .filter(|(_, r)| r.name.starts_with(prefix))
        .map(|(&id, _)| id)
        .collect();
    evs.values()
        .flatten()
        .filter(|e| matches!(e.kind, EventKind::Enter { region } if ids.contains(&region)))
        .count()
}

/// The chunks each loop handed out: by loop, the first iterations taken by
/// each location, and how many locations found none left.
type Loops = BTreeMap<u64, (Chunks, usize)>;

/// First iterations by location.
type Chunks = BTreeMap<u32, Vec<u64>>;

fn loops(evs: &BTreeMap<u32, Vec<Event>>) -> Loops {
    let mut out = Loops::new();
    for (&t, es) in evs {
        for e in es {
            if let EventKind::Iteration { loop_id, index } = e.kind {
                let l = out.entry(loop_id).or_default();
                if index == NO_ITERATION {
                    l.1 += 1;
                } else {
                    l.0.entry(t).or_default().push(index);
                }
            }
        }
    }
    out
}

/// The first iterations of libgomp's guided chunks of `n` iterations for
/// `threads` threads and least chunk `chunk`: each takes the remaining
/// iterations divided by the threads, rounded up, and at least `chunk`.
fn guided_starts(n: u64, threads: u64, chunk: u64) -> Vec<u64> {
    let (mut next, mut starts) = (0, Vec::new());
    while next < n {
        starts.push(next);
        let q = (n - next).div_ceil(threads).max(chunk);
        next = (next + q).min(n);
    }
    starts
}

/// Each location ran its chunks on one OpenMP thread, as the program saw
/// them: `owner` is the program's thread number of each iteration.
fn chunks_match_owners(per_loc: &BTreeMap<u32, Vec<u64>>, owner: &[u8]) {
    for (t, firsts) in per_loc {
        let who: BTreeSet<u8> = firsts.iter().map(|&f| owner[f as usize]).collect();
        assert_eq!(who.len(), 1, "location {t} ran chunks of threads {who:?}");
    }
}

#[test]
fn every_construct_of_a_gcc_program_is_recorded_as_often_as_it_ran() {
    let (d, exe) = constructs("omp-gcc");
    let plain = std::process::Command::new(&exe).output().unwrap();
    assert!(plain.status.success());
    let out = d.join("exp");
    let o = run(&out, &["--mode", "both"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The program's own output, unchanged apart from the order the
    // threads took the iterations in.
    let said = stdout(&o);
    let last = |s: &str| s.lines().last().unwrap_or("").to_string();
    assert_eq!(last(&said), last(&stdout(&plain)));
    let line = |key: &str| -> Vec<u8> {
        said.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {said}"))
            .bytes()
            .map(|b| b - b'0')
            .collect()
    };
    let (dyn_owner, guided_owner) = (line("dynamic="), line("guided="));

    let exp = open(&out);
    let p = &exp.processes[0];
    assert_balanced(p);
    let evs = events(p);
    // Locations named by OpenMP thread number.
    let names: BTreeSet<&str> = p.locations.values().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        BTreeSet::from(["main", "OpenMP thread 1", "OpenMP thread 2"])
    );

    // Four teams: forked once each, an implicit task per member.
    assert_eq!(enters_of(p, &evs, "omp fork @"), 4);
    assert_eq!(enters_of(p, &evs, "omp parallel @"), 3 + 2 + 2 + 2);
    let count_all =
        |f: &dyn Fn(&EventKind) -> bool| -> usize { evs.values().map(|es| count(es, f)).sum() };
    assert_eq!(count_all(&|k| matches!(k, EventKind::Fork { .. })), 4);
    // The workers wait for their fork: 2 + 1 + 1 + 1.
    let teams: BTreeSet<u64> = evs
        .values()
        .flatten()
        .filter_map(|e| match e.kind {
            EventKind::Fork { team, .. } => Some(team),
            _ => None,
        })
        .collect();
    let fork_waits =
        count_all(&|k| matches!(k, EventKind::AwaitDone { var, index: 1 } if teams.contains(var)));
    assert_eq!(fork_waits, 5);

    // Loops: dynamic,4 in 250 chunks; guided,2 as libgomp hands them out;
    // the combined dynamic loop of 100 in chunks of 1; 3 sections; the
    // ordered loop of 10. Every member of a team finds the loop's end once.
    let ls = loops(&evs);
    let mut by_size: BTreeMap<usize, Vec<(&Chunks, usize)>> = BTreeMap::new();
    for (per_loc, ends) in ls.values() {
        let n = per_loc.values().map(Vec::len).sum();
        by_size.entry(n).or_default().push((per_loc, *ends));
    }
    let firsts = |per_loc: &BTreeMap<u32, Vec<u64>>| -> Vec<u64> {
        let mut v: Vec<u64> = per_loc.values().flatten().copied().collect();
        v.sort_unstable();
        v
    };
    let guided = guided_starts(N, 3, 2);
    let expect: [(usize, Vec<u64>, usize); 5] = [
        (250, (0..N).step_by(4).collect(), 3),
        (guided.len(), guided, 3),
        (100, (0..100).collect(), 2),
        (3, vec![0, 1, 2], 2),
        (10, (0..10).collect(), 2),
    ];
    assert_eq!(ls.len(), expect.len(), "{by_size:?}");
    for (n, starts, ends) in &expect {
        let found = by_size
            .get(n)
            .and_then(|v| v.iter().find(|(per_loc, _)| firsts(per_loc) == *starts))
            .unwrap_or_else(|| panic!("no loop of {n} chunks from {starts:?}: {by_size:?}"));
        assert_eq!(found.1, *ends, "loop of {n} chunks");
    }
    let dynamic = &by_size[&250][0].0;
    chunks_match_owners(dynamic, &dyn_owner);
    let guided = &by_size[&expect[1].0]
        .iter()
        .find(|(l, _)| firsts(l) == expect[1].1)
        .unwrap()
        .0;
    chunks_match_owners(guided, &guided_owner);

    // Barriers, as collectives of their team: the first team's dynamic and
    // guided loops', the static loop's, the explicit one and the implicit
    // one at its end (3 threads × 5); the other teams' implicit ends
    // (2 × 3). gcc leaves out the ordered loop's, which the region's end
    // follows at once.
    let barriers = count_all(&|k| {
        matches!(
            k,
            EventKind::CollectiveEnd {
                op: CollectiveOp::Barrier,
                ..
            }
        )
    });
    assert_eq!(barriers, 15 + 6);
    let kinds: BTreeMap<RegionKind, usize> =
        p.regions.values().fold(BTreeMap::new(), |mut m, r| {
            *m.entry(r.kind).or_default() += 1;
            m
        });
    assert!(kinds.contains_key(&RegionKind::Barrier), "{kinds:?}");

    // The critical section: requested, taken and released once per thread.
    assert_eq!(enters_of(p, &evs, "omp critical @"), 3);
    assert_eq!(
        count_all(&|k| matches!(k, EventKind::LockAcquired { .. })),
        3
    );
    assert_eq!(
        count_all(&|k| matches!(k, EventKind::LockRelease { .. })),
        3
    );

    // The ordered loop: iteration i waits for i - 1 (not the first) and
    // lets i + 1 go.
    let ordered_loop = *ls
        .iter()
        .find(|(_, (l, _))| firsts(l) == (0..10).collect::<Vec<_>>())
        .unwrap()
        .0;
    // The indices the loop's events of one kind name, in order.
    let indices = |of: fn(&EventKind) -> Option<(u64, u64)>| -> Vec<u64> {
        let mut v: Vec<u64> = evs
            .values()
            .flatten()
            .filter_map(|e| of(&e.kind))
            .filter(|&(var, _)| var == ordered_loop)
            .map(|(_, index)| index)
            .collect();
        v.sort_unstable();
        v
    };
    let awaited = indices(|k| match *k {
        EventKind::AwaitDone { var, index } => Some((var, index)),
        _ => None,
    });
    assert_eq!(awaited, (1..10).collect::<Vec<_>>());
    let advanced = indices(|k| match *k {
        EventKind::Advance { var, index } => Some((var, index)),
        _ => None,
    });
    assert_eq!(advanced, (1..=10).collect::<Vec<_>>());

    // The analyses take it whole.
    for cmd in [
        vec!["analyze".to_string(), out.display().to_string()],
        vec![
            "compensate".into(),
            out.display().to_string(),
            "-o".into(),
            d.join("comp").display().to_string(),
        ],
    ] {
        let o = parallax().args(&cmd).output().unwrap();
        assert!(o.status.success(), "{cmd:?}: {}", stderr(&o));
    }
}

/// In profile mode the same regions are counted, without events.
#[test]
fn a_gcc_program_profiled_counts_its_constructs() {
    let (d, exe) = constructs("omp-gcc-profile");
    let out = d.join("exp");
    let o = run(&out, &["--mode", "profile"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report_json(&out);
    let flat = r["total"]["flat"].as_array().expect("flat profile");
    let calls = |prefix: &str| -> u64 {
        flat.iter()
            .filter(|f| f["region"].as_str().is_some_and(|n| n.starts_with(prefix)))
            .map(|f| f["count"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(calls("omp parallel @"), 9, "{flat:?}");
    assert_eq!(calls("omp fork @"), 4);
    assert_eq!(calls("omp critical @"), 3);
    assert_eq!(calls("omp for (dynamic) @"), 3 + 2 + 2);
    assert_eq!(calls("omp for (guided) @"), 3);
    assert_eq!(calls("omp sections @"), 2);
}

/// An OpenMP program starts measuring when it is loaded, before its own
/// code runs: its first parallel region, often inside the program's own
/// timing, does not pay for the start (calibration, files). The buffers
/// made ahead for its team are gone afterwards.
#[test]
fn an_openmp_program_is_measured_from_its_start() {
    require(&["gcc"]);
    const SRC: &str = r#"
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    printf("main_ns=%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
    volatile int s = 0;
#pragma omp parallel num_threads(3)
    s += 1;
    return 0;
}
"#;
    let d = tmp("omp-start");
    let exe = build(&d, "start.c", SRC, "gcc", &[]);
    let out = d.join("exp");
    let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let main_ns = values(&stdout(&o))["main_ns"] as f64;
    let exp = open(&out);
    let p = &exp.processes[0];
    let started = p
        .calibration
        .iter()
        .map(|c| p.clock.ns(c.tick))
        .reduce(f64::min)
        .expect("a calibration");
    assert!(
        started < main_ns,
        "measurement started {:.3} ms after main",
        (started - main_ns) / 1e6
    );
    assert_eq!(events(p).len(), 3, "the team's three threads");
    let leftovers: Vec<String> = std::fs::read_dir(&p.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pxb") || n.ends_with(".part"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// MPI + OpenMP: each rank's team is measured under its rank, with its
/// messages and its barriers; the analyses and the OTF2 export (read
/// back by otf2-print) take the whole.
#[test]
fn a_hybrid_mpi_openmp_program_is_measured_per_rank() {
    if !require(&["mpicc", "mpirun", "otf2-print"]) {
        return;
    }
    const SRC: &str = r#"
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double local = 0, total = 0;
    for (int step = 0; step < 4; step++) {
#pragma omp parallel for schedule(dynamic, 8) num_threads(2) reduction(+ : local)
        for (int i = 0; i < 400; i++)
            for (int k = 0; k < 2000 * (rank + 1); k++)
                local += (i ^ k) * 1e-9;
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("total=%.0f\n", total * 1e9);
    MPI_Finalize();
    return 0;
}
"#;
    let d = tmp("omp-hybrid");
    let src = d.join("hybrid.c");
    std::fs::write(&src, SRC).unwrap();
    let exe = d.join("hybrid");
    compile(
        "mpicc",
        &[
            "-O1",
            "-fopenmp",
            src.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    preload();
    let exp = d.join("exp");
    let o = parallax()
        .args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&exp)
        .args(["--", "mpirun", "--bind-to", "none", "-np", "2"])
        .arg(&exe)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("total="), "{}", stdout(&o));
    let e = open(&exp);
    assert_eq!(e.processes.len(), 2);
    for p in &e.processes {
        assert_balanced(p);
        let evs = events(p);
        assert_eq!(evs.len(), 2, "rank {}: a team of two", p.rank);
        // Four teams, each thread in each; 400 iterations in chunks of 8.
        assert_eq!(total_enters(p, "MPI_Allreduce"), 4, "rank {}", p.rank);
        let forks: usize = evs
            .values()
            .map(|es| count(es, |k| matches!(k, EventKind::Fork { .. })))
            .sum();
        assert_eq!(forks, 4, "rank {}", p.rank);
        let chunks: usize = evs
            .values()
            .map(|es| {
                count(
                    es,
                    |k| matches!(k, EventKind::Iteration { index, .. } if *index != NO_ITERATION),
                )
            })
            .sum();
        assert_eq!(chunks, 4 * 50, "rank {}", p.rank);
    }
    let o = parallax().arg("analyze").arg(&exp).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let otf2 = d.join("trace.otf2");
    let o = parallax()
        .args(["export", "--format", "otf2", "--out"])
        .arg(&otf2)
        .arg(&exp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = std::process::Command::new("otf2-print")
        .arg(&otf2)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let forks = text
        .lines()
        .filter(|l| l.starts_with("THREAD_FORK"))
        .count();
    let joins = text
        .lines()
        .filter(|l| l.starts_with("THREAD_JOIN"))
        .count();
    assert_eq!(
        (forks, joins),
        (8, 8),
        "forks and joins of both ranks' teams"
    );
}

/// The bottleneck analysis on OpenMP programs built by gcc and by clang
/// (workloads/bottlenecks/openmp): waits at a barrier for the late thread,
/// a critical section's holder, and threads idle in the serial part.
#[test]
fn openmp_bottlenecks_are_found_with_their_causes() {
    require(&["gcc", "clang"]);
    let d = tmp("omp-bottlenecks");
    for compiler in ["gcc", "clang"] {
        let analyze = |name: &str| -> (serde_json::Value, BTreeMap<String, u64>) {
            let exe = d.join(format!("{name}-{compiler}"));
            let src = workspace().join(format!("workloads/bottlenecks/openmp/{name}.c"));
            compile(
                compiler,
                &[
                    "-O1",
                    "-fopenmp",
                    src.to_str().unwrap(),
                    "-o",
                    exe.to_str().unwrap(),
                ],
            );
            let out = d.join(format!("exp-{name}-{compiler}"));
            let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
            assert!(o.status.success(), "{}", stderr(&o));
            let o = parallax()
                .arg("analyze")
                .arg(&out)
                .arg("--json")
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            // Locations by OpenMP thread number.
            let p = &open(&out).processes[0];
            let threads = p
                .locations
                .values()
                .map(|l| (l.name.clone(), l.thread as u64))
                .collect();
            (v, threads)
        };
        let found = |v: &serde_json::Value, pattern: &str| -> Vec<(u64, u64, f64)> {
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["pattern"] == pattern)
                .map(|f| {
                    (
                        f["thread"].as_u64().unwrap(),
                        f["culprits"][0]["thread"].as_u64().unwrap(),
                        f["severity_s"].as_f64().unwrap(),
                    )
                })
                .collect()
        };
        let omp = |threads: &BTreeMap<String, u64>, n: u32| -> u64 {
            let name = if n == 0 {
                "main".to_string()
            } else {
                format!("OpenMP thread {n}")
            };
            threads[&name]
        };

        // Threads 0 and 1 wait 200 ms at the barrier for thread 2.
        let (v, th) = analyze("barrier");
        let mut w = found(&v, "wait_at_barrier");
        w.sort_by_key(|f| f.0);
        assert_eq!(w.len(), 2, "{compiler}: {v:#}");
        for (f, me) in w.iter().zip([omp(&th, 0), omp(&th, 1)]) {
            assert_eq!((f.0, f.1), (me, omp(&th, 2)), "{compiler}: {v:#}");
            assert!((0.15..0.6).contains(&f.2), "{compiler}: {f:?}");
        }

        // Thread 0 waits 250 ms for the critical section thread 1 holds.
        let (v, th) = analyze("critical");
        let w = found(&v, "lock_wait");
        assert_eq!(w.len(), 1, "{compiler}: {v:#}");
        assert_eq!((w[0].0, w[0].1), (omp(&th, 0), omp(&th, 1)), "{compiler}");
        assert!((0.2..0.6).contains(&w[0].2), "{compiler}: {w:?}");

        // Thread 1 idles through two serial parts of 100 ms on main.
        let (v, th) = analyze("serial");
        let w = found(&v, "idle_threads");
        assert_eq!(w.len(), 1, "{compiler}: {v:#}");
        assert_eq!((w[0].0, w[0].1), (omp(&th, 1), omp(&th, 0)), "{compiler}");
        assert!((0.15..0.6).contains(&w[0].2), "{compiler}: {w:?}");
        assert!(found(&v, "wait_on_value").is_empty(), "{compiler}: {v:#}");
    }
}

/// Explicit tasks of a C++ program built by gcc (whose class arguments
/// libgomp copies with the compiler's copy function) and by clang (OMPT's
/// task callbacks): each task's work is a region wherever it runs, and the
/// program computes what it computes without Parallax.
#[test]
fn tasks_are_regions_where_they_run() {
    require(&["g++", "clang++"]);
    const SRC: &str = r#"
#include <atomic>
#include <cstdio>
#include <string>
static std::atomic<long> sum{0};
struct Item {
    std::string name;
    long v;
};
int main() {
    long undeferred = 0;
#pragma omp parallel num_threads(3)
#pragma omp single
    {
        for (long i = 0; i < 20; i++) {
            Item it{"item" + std::to_string(i), i};
#pragma omp task firstprivate(it)
            sum += it.v * (long)it.name.size();
        }
        for (long i = 0; i < 10; i++) {
#pragma omp task firstprivate(i)
            sum += i;
        }
#pragma omp taskwait
        for (long i = 0; i < 5; i++) {
#pragma omp task if (0)
            undeferred += i;
        }
    }
    std::printf("sum=%ld undeferred=%ld\n", sum.load(), undeferred);
    return 0;
}
"#;
    let d = tmp("omp-tasks");
    for compiler in ["g++", "clang++"] {
        let exe = build(&d, "tasks.cpp", SRC, compiler, &[]);
        let plain = std::process::Command::new(&exe).output().unwrap();
        assert_eq!(stdout(&plain), "sum=1140 undeferred=10\n");
        let out = d.join(format!("exp-{compiler}"));
        let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
        assert!(o.status.success(), "{compiler}: {}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&plain), "{compiler}");
        let exp = open(&out);
        let p = &exp.processes[0];
        assert_balanced(p);
        let evs = events(p);
        assert_eq!(enters_of(p, &evs, "omp task @"), 20 + 10 + 5, "{compiler}");
        assert_eq!(enters_of(p, &evs, "omp taskwait @"), 1, "{compiler}");
    }
}

/// A Fortran OpenMP program (gfortran, libgomp): its loops, critical
/// sections and the Fortran bindings of the lock functions.
#[test]
fn a_fortran_openmp_program_is_measured() {
    require(&["gfortran"]);
    const SRC: &str = r#"
program p
  use omp_lib
  implicit none
  integer :: i, n
  real(8) :: s
  integer(omp_lock_kind) :: l
  s = 0
  n = 0
  call omp_init_lock(l)
  !$omp parallel do schedule(dynamic,10) reduction(+:s) num_threads(2)
  do i = 1, 1000
     s = s + sqrt(real(i,8))
  end do
  !$omp end parallel do
  !$omp parallel num_threads(2)
  call omp_set_lock(l)
  n = n + 1
  call omp_unset_lock(l)
  !$omp critical
  n = n + 1
  !$omp end critical
  !$omp end parallel
  print '(F12.3, I4)', s, n
end program
"#;
    let d = tmp("omp-fortran");
    // The module files go to the test's directory.
    let modules = format!("-J{}", d.display());
    let exe = build(&d, "p.f90", SRC, "gfortran", &[&modules]);
    let plain = std::process::Command::new(&exe).output().unwrap();
    let out = d.join("exp");
    let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&plain));
    let exp = open(&out);
    let p = &exp.processes[0];
    assert_balanced(p);
    let evs = events(p);
    assert_eq!(enters_of(p, &evs, "omp_set_lock @"), 2);
    assert_eq!(enters_of(p, &evs, "omp_unset_lock @"), 2);
    assert_eq!(enters_of(p, &evs, "omp critical @"), 2);
    // Lock acquisitions in OpenMP's regions (libgfortran's own I/O locks
    // are the application's pthread calls).
    let omp_regions: BTreeSet<u32> = p
        .regions
        .iter()
        .filter(|(_, r)| r.name.starts_with("omp"))
        .map(|(&id, _)| id)
        .collect();
    let mut locks = 0;
    for es in evs.values() {
        let mut stack = Vec::new();
        for e in es {
            match e.kind {
                EventKind::Enter { region } => stack.push(region),
                EventKind::Leave { .. } => {
                    stack.pop();
                }
                EventKind::LockAcquired { .. }
                    if stack.last().is_some_and(|r| omp_regions.contains(r)) =>
                {
                    locks += 1
                }
                _ => {}
            }
        }
    }
    assert_eq!(locks, 4, "two omp locks and two critical sections");
    let chunks: usize = evs
        .values()
        .map(|es| {
            count(
                es,
                |k| matches!(k, EventKind::Iteration { index, .. } if *index != NO_ITERATION),
            )
        })
        .sum();
    assert_eq!(chunks, 100, "1000 iterations in chunks of 10");
}

/// Runs `cmd` (with `env`) plainly and under `parallax run`, each killed
/// after 60 s: the same output and exit status.
fn same_as_plain(d: &std::path::Path, name: &str, cmd: &[&str], env: &[(&str, &str)]) {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let finish = |mut c: Command| -> (Option<i32>, String) {
        let mut child = c
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                let mut out = String::new();
                std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
                return (s.code(), out);
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{name}: hung");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut plain = Command::new(cmd[0]);
    plain.args(&cmd[1..]);
    let plain = finish(plain);
    let out = d.join(format!("exp-{name}"));
    let mut measured = parallax();
    measured
        .args(["run", "--no-report", "--no-db", "--out"])
        .arg(&out)
        .arg("--")
        .args(cmd);
    let measured = finish(measured);
    assert_eq!(measured, plain, "{name}");
    let o = parallax().arg("report").arg(&out).output().unwrap();
    assert!(o.status.success(), "{name}: {}", stderr(&o));
}

/// gcc programs that take libgomp's unusual paths run as without
/// Parallax: a cancelled parallel region (the barrier that ends the
/// implicit tasks must not wait), a detached task (libgomp writes into its
/// data), task reductions of a parallel region (libgomp reads them from the
/// region's data), an OpenMP library opened with RTLD_LOCAL (the runtime is
/// found in its scope), and a chain of tasks run at once, each with a large
/// argument (no more stack than without Parallax).
#[test]
fn unusual_openmp_paths_run_as_without_parallax() {
    require(&["gcc"]);
    let d = tmp("omp-unusual");
    let build = |name: &str, src: &str, extra: &[&str]| -> String {
        build(&d, &format!("{name}.c"), src, "gcc", extra)
            .display()
            .to_string()
    };
    let cancel = build(
        "cancel",
        r#"
#include <stdio.h>
#include <omp.h>
int main(void) {
    int x = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
#pragma omp cancel parallel
        }
#pragma omp barrier
#pragma omp atomic
        x += 10;
    }
    printf("done %d\n", x >= 0);
    return 0;
}
"#,
        &[],
    );
    same_as_plain(&d, "cancel", &[&cancel], &[("OMP_CANCELLATION", "true")]);
    let detach = build(
        "detach",
        r#"
#include <stdio.h>
#include <omp.h>
int main(void) {
    int n = 0;
#pragma omp parallel num_threads(2)
    {
        omp_event_handle_t ev;
#pragma omp single
        {
#pragma omp task detach(ev)
            n += 1;
#pragma omp task
            omp_fulfill_event(ev);
        }
    }
    printf("n=%d\n", n);
    return 0;
}
"#,
        &[],
    );
    same_as_plain(&d, "detach", &[&detach], &[]);
    let reductions = build(
        "reductions",
        r#"
#include <stdio.h>
int main(void) {
    long s = 0;
#pragma omp parallel num_threads(3) reduction(task, + : s)
    {
#pragma omp single
        for (int i = 0; i < 50; i++) {
#pragma omp task in_reduction(+ : s)
            s += i;
        }
    }
    printf("s=%ld\n", s);
    return 0;
}
"#,
        &[],
    );
    same_as_plain(&d, "reductions", &[&reductions], &[]);
    let lib = d.join("libwork.so");
    let lib_src = d.join("work.c");
    std::fs::write(
        &lib_src,
        r#"
int work(int n) {
    int s = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : s)
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}
"#,
    )
    .unwrap();
    compile(
        "gcc",
        &[
            "-O1",
            "-fopenmp",
            "-shared",
            "-fPIC",
            lib_src.to_str().unwrap(),
            "-o",
            lib.to_str().unwrap(),
        ],
    );
    let opener = build(
        "opener",
        r#"
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 1;
    int (*work)(int) = (int (*)(int))dlsym(h, "work");
    printf("%d\n", work(1000));
    return 0;
}
"#,
        &["-ldl"],
    );
    same_as_plain(&d, "opener", &[&opener, lib.to_str().unwrap()], &[]);
    let deep = build(
        "deep",
        r#"
#include <stdio.h>
#include <stdlib.h>
#define N 15000
static long rec(int d, int depth) {
    int a[N];
    for (int i = 0; i < N; i++)
        a[i] = d;
    long r = 0;
    if (d >= depth)
        return a[N - 1];
#pragma omp task firstprivate(a) shared(r) final(1)
    r = a[0] + rec(d + 1, depth);
#pragma omp taskwait
    return r;
}
int main(int argc, char **argv) {
    long r = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    r = rec(0, atoi(argv[1]));
    printf("r=%ld\n", r);
    return 0;
}
"#,
        &[],
    );
    same_as_plain(&d, "deep", &[&deep, "50"], &[]);
}

/// A team forked where its thread no longer records (an exit handler, past
/// the main thread's end) is not recorded on its other threads either: a
/// trace has every team's fork with its implicit tasks.
#[test]
fn teams_of_exit_handlers_are_recorded_whole_or_not_at_all() {
    require(&["gcc", "clang"]);
    const SRC: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static void team(void) {
    int s = 0;
#pragma omp parallel num_threads(2) reduction(+ : s)
    s += 1;
    printf("%d\n", s);
}
static void at_exit(void) { team(); }
__attribute__((destructor)) static void last(void) { team(); }
int main(void) {
    atexit(at_exit);
    team();
    return 0;
}
"#;
    let d = tmp("omp-exit");
    for compiler in ["gcc", "clang"] {
        let exe = build(&d, "exit.c", SRC, compiler, &[]);
        let out = d.join(format!("exp-{compiler}"));
        let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), "2\n2\n2\n", "{compiler}");
        let exp = open(&out);
        let p = &exp.processes[0];
        assert_balanced(p);
        let evs = events(p);
        let forks = enters_of(p, &evs, "omp fork @");
        assert!(forks >= 1, "{compiler}: main's team");
        assert_eq!(
            enters_of(p, &evs, "omp parallel @"),
            2 * forks,
            "{compiler}"
        );
    }
}
