//! The runtime end to end: each scenario runs in a child process (a fresh
//! runtime), and the parent reads the experiment back with the real reader.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};

use parallax_model::defs::Probe;
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{Experiment, Process, Summary};

mod read_back;
use read_back::{count, events, open, region_id};

/// The program of the scenarios (examples/runtime_scenarios.rs), built
/// once beside the tests.
fn scenarios() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let deps = std::env::current_exe().unwrap();
            let profile = deps.parent().unwrap().parent().unwrap();
            let mut cargo = Command::new(env!("CARGO"));
            cargo.args([
                "build",
                "--quiet",
                "-p",
                "parallax",
                "--example",
                "runtime_scenarios",
            ]);
            if profile.ends_with("release") {
                cargo.arg("--release");
            }
            assert!(cargo.status().expect("run cargo").success());
            profile.join("examples").join("runtime_scenarios")
        })
        .clone()
}

/// Runs `scenario` in a child process with measurement configured by `env`;
/// returns its exit status and experiment directory.
fn run(scenario: &str, mode: &str, env: &[(&str, &str)]) -> (ExitStatus, PathBuf, String) {
    // One directory per call: tests running the same scenario run at once.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "parallax-rt-{scenario}-{mode}-{}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(scenarios())
        .arg(scenario)
        .env("PARALLAX_MODE", mode)
        .env("PARALLAX_OUT", &dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status,
        dir,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn is_flush(e: &Event) -> bool {
    matches!(e.kind, EventKind::FlushBegin | EventKind::FlushEnd)
}

/// Checks that every location's summary agrees with its file (length,
/// shared-object synchronizations, collectives); returns the number of
/// such synchronizations in all.
fn summarized(p: &Process, all: &HashMap<u32, Vec<Event>>) -> u64 {
    let mut syncs = 0;
    for (t, evs) in all {
        let s = p
            .summaries
            .get(t)
            .unwrap_or_else(|| panic!("no summary of {t}"));
        let path = p.locations[t].events.as_ref().unwrap();
        let mut counted = Summary {
            bytes: std::fs::metadata(path).unwrap().len(),
            ..Summary::default()
        };
        for e in evs {
            counted.count(&e.kind);
        }
        assert_eq!(*s, counted, "thread {t}");
        syncs += s.syncs;
    }
    syncs
}

#[test]
fn threads_regions_locks_and_barriers_are_recorded_exactly() {
    recorded_exactly(&[]);
}

#[test]
fn fenced_clock_reads_record_the_same() {
    recorded_exactly(&[("PARALLAX_CLOCK", "tsc-fenced")]);
}

fn recorded_exactly(env: &[(&str, &str)]) {
    let (status, dir, err) = run("workers", "trace", env);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    assert!(p.end_unix_ns.is_some(), "clean end recorded");
    let all = events(&p);
    assert_eq!(all.len(), 4, "main and three workers");
    assert!(summarized(&p, &all) > 0, "the workers' locks");
    let step = region_id(&p, "step");
    let work = region_id(&p, "work");
    let mut workers = 0;
    for evs in all.values() {
        // Enter and leave balance and pair up with their region.
        let enters = count(evs, |k| matches!(k, EventKind::Enter { .. }));
        let leaves = count(evs, |k| matches!(k, EventKind::Leave { .. }));
        assert_eq!(enters, leaves);
        assert!(
            evs.windows(2).all(|w| w[0].time <= w[1].time),
            "monotone times"
        );
        let steps = count(evs, |k| *k == EventKind::Enter { region: step });
        if steps == 0 {
            continue;
        }
        workers += 1;
        assert_eq!(steps, 100);
        assert_eq!(count(evs, |k| *k == EventKind::Leave { region: step }), 100);
        assert_eq!(count(evs, |k| *k == EventKind::Enter { region: work }), 100);
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::LockRequest { .. })),
            100
        );
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::LockAcquired { .. })),
            100
        );
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::LockRelease { .. })),
            100
        );
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::CollectiveEnd { .. })),
            100
        );
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::Mark { value: 7, .. })),
            100
        );
        assert_eq!(
            count(evs, |k| matches!(k, EventKind::ThreadBegin { .. })),
            1
        );
        assert_eq!(count(evs, |k| matches!(k, EventKind::ThreadEnd { .. })), 1);
    }
    assert_eq!(workers, 3);
    let main = &all[&0];
    assert_eq!(
        count(main, |k| matches!(k, EventKind::ThreadCreate { .. })),
        3
    );
    assert_eq!(
        count(main, |k| matches!(k, EventKind::ThreadJoin { .. })),
        3
    );
    // Every lock acquisition is of the one mutex, and never overlaps
    // another thread's hold (the mutex works and times are comparable).
    let mut holds = Vec::new();
    for evs in all.values() {
        let mut start = None;
        for e in evs {
            match e.kind {
                EventKind::LockAcquired { .. } => start = Some(e.time),
                EventKind::LockRelease { .. } => holds.push((start.take().unwrap(), e.time)),
                _ => {}
            }
        }
    }
    holds.sort();
    assert_eq!(holds.len(), 300);
    assert!(
        holds.windows(2).all(|w| w[0].1 <= w[1].0),
        "lock holds overlap"
    );
    // Calibration was recorded for every probe kind (those of the C entry
    // points and the compiler hooks only where the interposition library
    // is loaded), at the start and at the end; the pair in context once, at
    // the end, the least cost no more than the greatest.
    for probe in Probe::ALL {
        let cs: Vec<_> = p.calibration.iter().filter(|c| c.probe == probe).collect();
        if matches!(
            probe,
            Probe::EnterC
                | Probe::LeaveC
                | Probe::EnterCPreserving
                | Probe::LeaveCPreserving
                | Probe::EnterHook
                | Probe::LeaveHook
                | Probe::HookPair
                | Probe::HookSkipped
                | Probe::HookSkippedInContextMin
                | Probe::HookSkippedInContextMax
                | Probe::HookPairInContextMin
                | Probe::HookPairInContextMax
        ) {
            assert!(cs.is_empty(), "{probe:?}: {cs:?}");
            continue;
        }
        let times = match probe {
            Probe::PairInContextMin | Probe::PairInContextMax => 1,
            _ => 2,
        };
        assert_eq!(cs.len(), times, "{probe:?}: {cs:?}");
        for c in cs {
            assert!(
                c.mean_ns > 0.0 || probe == Probe::Disabled,
                "{probe:?}: {c:?}"
            );
        }
    }
    let in_context = |probe| {
        p.calibration
            .iter()
            .find(|c| c.probe == probe)
            .map(|c| c.mean_ns)
    };
    assert!(in_context(Probe::PairInContextMin) <= in_context(Probe::PairInContextMax));
}

#[test]
fn full_buffers_are_flushed_without_losing_events() {
    let (status, dir, err) = run("flood", "trace", &[("PARALLAX_BUFFER", "8k")]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    let all = events(&p);
    summarized(&p, &all);
    let mut flooders = 0;
    for evs in all.values() {
        let n = count(evs, |k| matches!(k, EventKind::Enter { .. }));
        if n == 200_000 {
            flooders += 1;
            assert_eq!(count(evs, |k| matches!(k, EventKind::Leave { .. })), n);
            let begins = count(evs, |k| *k == EventKind::FlushBegin);
            assert!(begins > 50, "small buffer flushed often: {begins}");
            assert_eq!(begins, count(evs, |k| *k == EventKind::FlushEnd));
            let marks: Vec<i64> = evs
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::Mark { value, .. } => Some(value),
                    _ => None,
                })
                .collect();
            assert_eq!(
                marks,
                (0..1000).collect::<Vec<_>>(),
                "marks in order, none lost"
            );
            assert!(evs.iter().filter(|e| !is_flush(e)).count() >= 401_000);
        }
    }
    assert_eq!(flooders, 2);
    let lost = p
        .properties
        .iter()
        .find(|(k, _)| k == "lost_bytes")
        .unwrap();
    assert_eq!(lost.1, "0");
}

#[test]
fn profile_mode_counts_every_visit() {
    let (status, dir, err) = run("workers", "profile", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    assert!(
        p.locations.values().all(|l| l.events.is_none()),
        "no event files in profile mode"
    );
    let (trees, err) = p.profiles().unwrap();
    assert!(err.is_none());
    assert_eq!(trees.len(), 4);
    let step = region_id(&p, "step");
    let work = region_id(&p, "work");
    let mut per_worker = 0;
    for t in &trees {
        for (i, n) in t.nodes.iter().enumerate() {
            if t.path(i).ends_with(&[step, work]) {
                assert_eq!(n.stats.count, 100);
                assert!(n.stats.min <= n.stats.max && n.stats.inclusive >= n.stats.exclusive);
                per_worker += 1;
            }
        }
    }
    assert_eq!(per_worker, 3);
}

#[test]
fn both_modes_agree_on_counts() {
    let (status, dir, err) = run("workers", "both", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    let all = events(&p);
    let (trees, _) = p.profiles().unwrap();
    for t in &trees {
        let evs = &all[&t.thread];
        let mut by_region: HashMap<u32, u64> = HashMap::new();
        for n in &t.nodes {
            *by_region.entry(n.region).or_default() += n.stats.count;
        }
        for (&r, &c) in &by_region {
            let entered = count(evs, |k| *k == EventKind::Enter { region: r }) as u64;
            assert_eq!(
                entered,
                c,
                "thread {} region {}",
                t.thread,
                p.region_name(r)
            );
        }
    }
}

#[test]
fn flow_off_records_nothing_in_between() {
    let (status, dir, err) = run("flow", "trace", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    let evs = &events(&p)[&0];
    let on = region_id(&p, "recorded");
    assert_eq!(count(evs, |k| *k == EventKind::Enter { region: on }), 20);
    assert!(
        !p.regions.values().any(|r| r.name == "hidden"),
        "never entered while on"
    );
    let outer = region_id(&p, "outer");
    assert_eq!(
        count(evs, |k| *k == EventKind::Leave { region: outer }),
        1,
        "left although off"
    );
}

#[test]
fn off_mode_writes_nothing_and_bad_config_says_why() {
    let (status, dir, _) = run("workers", "off", &[]);
    assert!(status.success());
    assert!(!dir.exists());
    let (status, dir, err) = run("workers", "fast", &[]);
    assert!(status.success(), "a bad setting never fails the program");
    assert!(!dir.exists());
    assert!(err.contains("PARALLAX_MODE=\"fast\" is not valid"), "{err}");
}

#[test]
fn crashes_keep_what_was_recorded() {
    for (scenario, signal) in [("segv", 11), ("abort", 6), ("term", 15), ("int", 2)] {
        let (status, dir, err) = run(scenario, "both", &[("PARALLAX_BUFFER", "16k")]);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal), "{scenario}: {err}");
        let p = open(&dir);
        assert!(p.summaries.is_empty(), "{scenario}: no summary in a crash");
        let evs = &events(&p)[&0];
        let before = region_id(&p, "before crash");
        assert_eq!(
            count(evs, |k| *k == EventKind::Enter { region: before }),
            5000,
            "{scenario}"
        );
        assert_eq!(
            count(evs, |k| *k == EventKind::Leave { region: before }),
            5000,
            "{scenario}"
        );
        let (trees, _) = p.profiles().unwrap();
        let visits: u64 = trees[0]
            .nodes
            .iter()
            .filter(|n| n.region == before)
            .map(|n| n.stats.count)
            .sum();
        assert_eq!(visits, 5000, "{scenario}: profile written in the handler");
    }
}

#[test]
fn exit_from_a_thread_keeps_all_threads_events() {
    let (status, dir, err) = run("exit_in_thread", "trace", &[("PARALLAX_BUFFER", "16k")]);
    assert_eq!(status.code(), Some(3), "{err}");
    let p = open(&dir);
    let all = events(&p);
    let main_loop = region_id(&p, "main loop");
    assert_eq!(
        count(&all[&0], |k| *k == EventKind::Enter { region: main_loop }),
        1000
    );
    let last = region_id(&p, "last words");
    assert!(all
        .values()
        .any(|e| count(e, |k| *k == EventKind::Enter { region: last }) == 1));
}

/// Threads record flat out, flushing small buffers, while the main thread
/// ends the process: each time, the exit status is the program's, every
/// thread's events and profile are readable and agree (the profile counts
/// no visit the trace did not record, but the one in progress).
#[test]
fn exit_while_threads_record_keeps_every_thread_readable() {
    for round in 0..8 {
        let (status, dir, err) = run(
            "exit_while_recording",
            "both",
            &[("PARALLAX_BUFFER", "16k")],
        );
        assert_eq!(status.code(), Some(7), "round {round}: {err}");
        let p = open(&dir);
        let spin = region_id(&p, "spin");
        let all = events(&p);
        let (trees, _) = p.profiles().unwrap();
        assert_eq!(trees.len(), 5, "round {round}: a profile per thread");
        let busy = all
            .iter()
            .filter(|(_, e)| count(e, |k| *k == EventKind::Enter { region: spin }) > 0)
            .count();
        assert_eq!(busy, 4, "round {round}: every worker's events");
        for tree in &trees {
            let Some(evs) = all.get(&tree.thread) else {
                continue;
            };
            let entered = count(evs, |k| *k == EventKind::Enter { region: spin }) as u64;
            let visits: u64 = tree
                .nodes
                .iter()
                .filter(|n| n.region == spin)
                .map(|n| n.stats.count)
                .sum();
            assert!(
                visits <= entered + 1,
                "round {round}, thread {}: {visits} visits, {entered} recorded",
                tree.thread
            );
        }
    }
}

#[test]
fn a_thread_that_ends_has_written_everything_before_exit() {
    let (status, _dir, err) = run("thread_exit", "both", &[]);
    assert!(status.success(), "{err}");
}

/// A forked child is measured as a process of its own (the next free rank,
/// with its parent's pid) when children are measured, and not otherwise.
#[test]
fn forked_children_are_their_own_process_or_left_alone() {
    let (status, dir, err) = run("fork", "trace", &[("PARALLAX_CHILDREN", "1")]);
    assert!(status.success(), "{err}");
    let exp = Experiment::open(&dir).unwrap();
    assert!(exp.warnings().is_empty(), "{:?}", exp.warnings());
    assert_eq!(exp.processes.len(), 2, "{err}");
    let (parent, child) = (&exp.processes[0], &exp.processes[1]);
    assert_eq!((parent.rank, child.rank), (0, 1));
    let parent_pid = parent.info.as_ref().unwrap().pid;
    assert!(child
        .properties
        .contains(&("parent_pid".to_string(), parent_pid.to_string())));
    assert!(child.end_unix_ns.is_some() && parent.end_unix_ns.is_some());
    let in_child = region_id(child, "in child");
    let evs = &events(child)[&0];
    assert_eq!(
        count(evs, |k| *k == EventKind::Enter { region: in_child }),
        30
    );
    let pe = &events(parent)[&0];
    let before = region_id(parent, "before fork");
    let after = region_id(parent, "after fork");
    assert_eq!(count(pe, |k| *k == EventKind::Enter { region: before }), 10);
    assert_eq!(count(pe, |k| *k == EventKind::Enter { region: after }), 20);
    assert!(parent.regions.values().all(|r| r.name != "in child"));

    let (status, dir, err) = run("fork", "trace", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    assert_eq!(p.rank, 0);
    assert!(p.regions.values().all(|r| r.name != "in child"));
}

/// A process that the interposition library marked as a descendant takes
/// its own rank when free, another one when children are measured, and
/// stays unmeasured otherwise.
#[test]
fn descendants_take_a_free_rank() {
    let env = [("PARALLAX_PARENT_PID", "1"), ("PARALLAX_RANK", "0")];
    let (status, dir, err) = run("workers", "trace", &env);
    assert!(status.success(), "{err}");
    assert_eq!(open(&dir).rank, 0, "rank 0 was free");
    // Rank 0 is taken now: a second descendant in the same experiment.
    let again = |children: &str| {
        let out = Command::new(scenarios())
            .arg("workers")
            .env("PARALLAX_MODE", "trace")
            .env("PARALLAX_OUT", &dir)
            .env("PARALLAX_CHILDREN", children)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success());
        let e = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!e.contains("parallax:"), "quiet: {e}");
    };
    again("0");
    assert_eq!(Experiment::open(&dir).unwrap().processes.len(), 1);
    again("1");
    let exp = Experiment::open(&dir).unwrap();
    let ranks: Vec<u32> = exp.processes.iter().map(|p| p.rank).collect();
    assert_eq!(ranks, [0, 1]);
}

/// The lock and condition events, in order, of the location that entered
/// region `name`.
fn syncs_of(p: &Process, all: &HashMap<u32, Vec<Event>>, name: &str) -> Vec<EventKind> {
    let region = region_id(p, name);
    let evs = all
        .values()
        .find(|evs| evs.iter().any(|e| e.kind == EventKind::Enter { region }))
        .unwrap_or_else(|| panic!("no location entered {name}"));
    evs.iter()
        .map(|e| e.kind)
        .filter(|k| {
            matches!(
                k,
                EventKind::LockRequest { .. }
                    | EventKind::LockAcquired { .. }
                    | EventKind::LockRelease { .. }
                    | EventKind::SemPost { .. }
                    | EventKind::SemAcquired { .. }
            )
        })
        .collect()
}

/// The lock a waiter requested first and the condition it was notified
/// on, from its events.
fn lock_and_condition(waiter: &[EventKind]) -> (u64, u64) {
    let lock = match waiter[0] {
        EventKind::LockRequest { lock } => lock,
        ref k => panic!("first {k:?}"),
    };
    let cv = waiter
        .iter()
        .find_map(|k| match *k {
            EventKind::SemAcquired { sem } => Some(sem),
            _ => None,
        })
        .expect("notified");
    (lock, cv)
}

#[test]
fn a_condition_wait_releases_is_notified_and_locks_again() {
    let (status, dir, err) = run("condvar", "trace", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    let all = events(&p);
    let waiter = syncs_of(&p, &all, "Condvar::wait");
    let notifier = syncs_of(&p, &all, "Condvar::notify_one");
    // The waiter: lock, release in the wait, notified, lock again, release.
    let (lock, cv) = lock_and_condition(&waiter);
    assert_eq!(
        waiter,
        [
            EventKind::LockRequest { lock },
            EventKind::LockAcquired { lock },
            EventKind::LockRelease { lock },
            EventKind::SemAcquired { sem: cv },
            EventKind::LockRequest { lock },
            EventKind::LockAcquired { lock },
            EventKind::LockRelease { lock },
        ]
    );
    assert!(
        notifier.contains(&EventKind::SemPost { sem: cv }),
        "{notifier:?}"
    );
}

#[test]
fn a_condition_wait_that_times_out_takes_no_notification() {
    let (status, dir, err) = run("condvar_timeout", "trace", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    let all = events(&p);
    let kinds = syncs_of(&p, &all, "Condvar::wait_timeout");
    let (lock, cv) = lock_and_condition(&kinds);
    let (req, got, rel) = (
        EventKind::LockRequest { lock },
        EventKind::LockAcquired { lock },
        EventKind::LockRelease { lock },
    );
    // Timed out (no notification), unlocked; locked again, notified.
    assert_eq!(
        kinds,
        [
            req,
            got,
            rel,
            req,
            got,
            rel,
            req,
            got,
            rel,
            EventKind::SemAcquired { sem: cv },
            req,
            got,
            rel
        ]
    );
}

#[test]
fn barriers_made_again_at_one_address_are_distinct_groups() {
    let (status, dir, err) = run("barrier_again", "trace", &[]);
    assert!(status.success(), "{err}");
    let p = open(&dir);
    let all = events(&p);
    let groups: Vec<(u64, u64)> = all
        .values()
        .flatten()
        .filter_map(|e| match e.kind {
            EventKind::CollectiveEnd { comm, received, .. } => Some((comm, received)),
            _ => None,
        })
        .collect();
    // Two waits on each barrier, of size 1 each.
    assert_eq!(groups.len(), 4, "{groups:?}");
    assert_eq!(groups[0], groups[1]);
    assert_eq!(groups[2], groups[3]);
    assert_ne!(groups[0].0, groups[2].0, "one group id for two barriers");
    assert_eq!(groups[0].1, 1);
}
