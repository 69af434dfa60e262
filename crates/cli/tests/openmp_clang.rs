//! `parallax run` on an OpenMP program built by clang: LLVM's runtime,
//! libomp, reports its constructs through OMPT to the tool of the
//! interposition library (crates/preload/shim/ompt.c). The program is
//! compiled with the real clang and libomp (scripts/setup.sh installs them:
//! without them the test fails), and what was recorded is checked against
//! what it did.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use common::*;
use parallax_model::event::{CollectiveOp, Event, EventKind, NO_ITERATION};
use parallax_model::experiment::Process;

const TEAM_TAG: u64 = 0xA5 << 56;
const LOOP_TAG: u64 = 0xA6 << 56;

/// A team of 2 threads: a dynamic loop of 1000 iterations in chunks of 4,
/// a static loop (both end with their implicit barrier), an explicit
/// barrier and a critical section that each thread enters once; then a
/// second of sleep, after the team's end and before the program's.
const PROGRAM: &str = r#"
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    long dynamic[2] = {0, 0}, fixed[2] = {0, 0};
    int critical = 0, threads = 0;
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
#pragma omp for schedule(dynamic, 4)
        for (int i = 0; i < 1000; i++)
            dynamic[me] += i;
#pragma omp for schedule(static)
        for (int i = 0; i < 100; i++)
            fixed[me] += i;
#pragma omp barrier
#pragma omp critical
        {
            critical++;
            threads = omp_get_num_threads();
        }
    }
    usleep(1000000);
    printf("dynamic=%ld static=%ld critical=%d threads=%d\n", dynamic[0] + dynamic[1],
           fixed[0] + fixed[1], critical, threads);
    return 3;
}
"#;

/// The construct a region's name is of: `omp barrier` of `omp barrier @
/// main` or `omp barrier @ prog.c:12` (named by line where the program
/// has line information, by function where not).
fn construct(name: &str) -> &str {
    name.split(" @ ").next().unwrap_or(name)
}

/// Enters in `evs` of the regions of construct `name`, at any site.
fn enters_named(p: &Process, evs: &[Event], name: &str) -> usize {
    let ids: BTreeSet<u32> = p
        .regions
        .iter()
        .filter(|(_, r)| construct(&r.name) == name)
        .map(|(&id, _)| id)
        .collect();
    count(
        evs,
        |k| matches!(k, EventKind::Enter { region } if ids.contains(region)),
    )
}

#[test]
fn clang_openmp_constructs_are_recorded_through_ompt() {
    assert!(
        have("clang"),
        "clang is not installed: scripts/setup.sh installs it and LLVM's OpenMP runtime \
         (libomp-dev), which this test needs"
    );
    let d = tmp("openmp-clang");
    let src = d.join("team.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = d.join("team");
    // Fails with clang's message if libomp (omp.h, libomp.so) is missing.
    compile(
        "clang",
        &[
            "-fopenmp",
            "-O1",
            "-g",
            src.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );

    // The program's output and exit status, alone and measured.
    let plain = Command::new(&exe).output().unwrap();
    assert_eq!(plain.status.code(), Some(3), "{}", stderr(&plain));
    assert_eq!(
        stdout(&plain),
        "dynamic=499500 static=4950 critical=2 threads=2\n"
    );
    let out = d.join("exp");
    let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&plain));

    let exp = open(&out);
    assert_eq!(exp.processes.len(), 1);
    let p = &exp.processes[0];
    assert_balanced(p);
    let all = events(p);
    assert_eq!(all.len(), 2, "the master and one worker: {:?}", all.keys());

    // The fork: on the master, a team of 2 that the worker awaits.
    let forks: Vec<(u32, u64, u32)> = all
        .iter()
        .flat_map(|(&t, evs)| {
            evs.iter().filter_map(move |e| match e.kind {
                EventKind::Fork { team, size } => Some((t, team, size)),
                _ => None,
            })
        })
        .collect();
    assert_eq!(forks.len(), 1, "{forks:?}");
    let (master, team, size) = forks[0];
    assert_eq!(team >> 56, TEAM_TAG >> 56, "{team:#x}");
    assert_eq!(size, 2);
    let worker = *all.keys().find(|&&t| t != master).unwrap();
    let advance = EventKind::Advance {
        var: team,
        index: 1,
    };
    let await_done = EventKind::AwaitDone {
        var: team,
        index: 1,
    };
    let join = EventKind::Join { team };
    assert_eq!(count(&all[&master], |k| *k == join), 1, "the team's join");
    assert_eq!(count(&all[&worker], |k| *k == join), 0);
    assert_eq!(count(&all[&master], |k| *k == advance), 1);
    assert_eq!(count(&all[&worker], |k| *k == advance), 0);
    assert_eq!(count(&all[&worker], |k| *k == await_done), 1);
    assert_eq!(count(&all[&master], |k| *k == await_done), 0);
    assert_eq!(enters_named(p, &all[&master], "omp fork"), 1);
    assert_eq!(enters_named(p, &all[&worker], "omp fork"), 0);

    // Every thread: its implicit task, both loops, the implicit barriers
    // that end them and the region, the explicit barrier, the critical
    // section once.
    for (&t, evs) in &all {
        for (name, n) in [
            ("omp parallel", 1),
            ("omp for (dynamic)", 1),
            ("omp for (static)", 1),
            ("omp implicit barrier", 3),
            ("omp barrier", 1),
            ("omp critical", 1),
            ("omp critical end", 1),
        ] {
            assert_eq!(enters_named(p, evs, name), n, "thread {t}: {name}");
        }
        // Each barrier is a collective of the team, of its size.
        assert_eq!(count(evs, |k| *k == EventKind::CollectiveBegin), 4);
        let barrier = EventKind::CollectiveEnd {
            op: CollectiveOp::Barrier,
            comm: team,
            root: u32::MAX,
            sent: 0,
            received: 2,
        };
        assert_eq!(count(evs, |k| *k == barrier), 4, "thread {t}");
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::CollectiveEnd { .. })),
            4
        );
        // The critical section: requested, acquired, released, in order.
        let locks: Vec<&EventKind> = evs
            .iter()
            .map(|e| &e.kind)
            .filter(|k| {
                matches!(
                    k,
                    EventKind::LockRequest { .. }
                        | EventKind::LockAcquired { .. }
                        | EventKind::LockRelease { .. }
                )
            })
            .collect();
        assert!(
            matches!(
                locks[..],
                [
                    EventKind::LockRequest { lock: a },
                    EventKind::LockAcquired { lock: b },
                    EventKind::LockRelease { lock: c },
                ] if a == b && b == c
            ),
            "thread {t}: {locks:?}"
        );
    }
    let lock = |t: u32| {
        all[&t]
            .iter()
            .find_map(|e| match e.kind {
                EventKind::LockAcquired { lock } => Some(lock),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(lock(master), lock(worker), "one critical section");

    // The dynamic loop: a chunk of 4 iterations per Iteration event, each
    // handed out once over the two threads, inside the loop's region; then
    // one with none left per thread. The static loop has none.
    let dynamic: BTreeSet<u32> = p
        .regions
        .iter()
        .filter(|(_, r)| construct(&r.name) == "omp for (dynamic)")
        .map(|(&id, _)| id)
        .collect();
    let mut loops = BTreeSet::new();
    let mut firsts = Vec::new();
    for (&t, evs) in &all {
        let mut stack = Vec::new();
        let mut ends = 0;
        for e in evs {
            match e.kind {
                EventKind::Enter { region } => stack.push(region),
                EventKind::Leave { .. } => {
                    stack.pop();
                }
                EventKind::Iteration { loop_id, index } => {
                    assert!(
                        stack.last().is_some_and(|r| dynamic.contains(r)),
                        "thread {t}: an iteration outside the dynamic loop"
                    );
                    assert_eq!(ends, 0, "thread {t}: a chunk after the last");
                    loops.insert(loop_id);
                    if index == NO_ITERATION {
                        ends += 1;
                    } else {
                        firsts.push(index);
                    }
                }
                _ => {}
            }
        }
        assert_eq!(ends, 1, "thread {t}");
    }
    assert_eq!(loops.len(), 1, "one loop, alike on both threads: {loops:?}");
    let l = *loops.first().unwrap();
    assert_eq!(l >> 56, LOOP_TAG >> 56, "{l:#x}");
    firsts.sort();
    assert_eq!(firsts, (0..1000).step_by(4).collect::<Vec<u64>>());

    // The barrier that ends the region ends on the worker when the team
    // has all arrived (as on the master), not when the runtime reports it
    // (at the program's end, a second later).
    let ends: BTreeMap<u32, f64> = all
        .iter()
        .map(|(&t, evs)| {
            let mut depth = 0;
            let mut top = None;
            let mut end = None;
            for e in evs {
                match e.kind {
                    EventKind::Enter { region } => {
                        if depth == 0 {
                            top = Some(region);
                        }
                        depth += 1;
                    }
                    EventKind::Leave { .. } => {
                        depth -= 1;
                        let name = &p.regions[&top.unwrap()].name;
                        if depth == 0 && construct(name) == "omp implicit barrier" {
                            end = Some(p.clock.ns(e.time));
                        }
                    }
                    _ => {}
                }
            }
            (
                t,
                end.unwrap_or_else(|| panic!("thread {t}: no barrier at the end")),
            )
        })
        .collect();
    let gap_ms = (ends[&worker] - ends[&master]).abs() / 1e6;
    assert!(
        gap_ms < 500.0,
        "the team's barrier ended {gap_ms:.1} ms apart"
    );
}
