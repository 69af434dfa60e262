//! Compensation against ground truth: programs of known timing simulated
//! without probes (the truth) and with probes (the measurement); the
//! compensated measurement must give back the truth, event by event.

use std::sync::{Arc, Mutex};

use parallax_analysis::compensate::{self, Convention, Liberal, Options};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::Experiment;
use parallax_testkit::synth::{self, Machine, Op, Program};

mod common;
use common::*;

fn pipeline() -> Program {
    // Rank 0 produces late (more work); ranks 1..3 receive, work, pass on.
    let n = 4;
    let mut locs = vec![Vec::new(); n];
    for it in 0..50 {
        for (r, ops) in locs.iter_mut().enumerate() {
            ops.push(Op::Enter(0));
            if r > 0 {
                ops.push(Op::Recv {
                    from: r as u32 - 1,
                    tag: 7,
                });
            }
            probes(ops, 10 + 5 * (r == 0) as usize, 100.0 + it as f64);
            if r + 1 < n {
                ops.push(Op::Send {
                    to: r as u32 + 1,
                    tag: 7,
                    bytes: 64,
                });
            }
            ops.push(Op::Leave);
        }
    }
    Program {
        regions: vec!["step".into(), "body".into()],
        locations: locs,
        threads: false,
    }
}

fn barriers() -> Program {
    // Uneven work between barriers and all-reduces; rank r has r+1 units.
    let n = 4;
    let mut locs = vec![Vec::new(); n];
    for it in 0..40 {
        for (r, ops) in locs.iter_mut().enumerate() {
            probes(ops, 5 * (r + 1), 200.0);
            ops.push(if it % 2 == 0 {
                Op::Barrier
            } else {
                Op::Allreduce
            });
        }
    }
    Program {
        regions: vec!["phase".into(), "body".into()],
        locations: locs,
        threads: false,
    }
}

fn locks() -> Program {
    // Three threads with the same work per iteration, started 1.5 us
    // apart: each waits for the previous one's critical section (with
    // probes inside), in the same order with and without probes.
    let mut locs = vec![Vec::new(); 3];
    for (t, ops) in locs.iter_mut().enumerate() {
        ops.push(Op::Compute(1500.0 * t as f64 + 1.0));
    }
    for _ in 0..30 {
        for ops in locs.iter_mut() {
            ops.push(Op::Compute(6000.0));
            ops.push(Op::Lock(0xabc));
            probes(ops, 4, 400.0);
            ops.push(Op::Unlock(0xabc));
            probes(ops, 3, 200.0);
        }
    }
    Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: true,
    }
}

fn forkjoin() -> Program {
    // Main spawns three threads with uneven work (k + 1 units), joins them
    // in order, five times over (new threads each round).
    let rounds = 5;
    let p = 3;
    let mut locs = vec![Vec::new(); 1 + rounds * p];
    for r in 0..rounds {
        let ids: Vec<u32> = (0..p).map(|k| (1 + r * p + k) as u32).collect();
        for (k, &c) in ids.iter().enumerate() {
            locs[0].push(Op::Spawn(c));
            probes(&mut locs[c as usize], 20 * (k + 1), 150.0);
        }
        for &c in &ids {
            locs[0].push(Op::Join(c));
        }
        probes(&mut locs[0], 3, 500.0);
    }
    Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: true,
    }
}

fn semaphores() -> Program {
    // A producer posts items that take 8 probed bodies each; a slower
    // consumer (12 bodies) waits on the semaphore for them.
    let mut locs = vec![Vec::new(); 3];
    locs[0] = vec![Op::Spawn(1), Op::Spawn(2), Op::Join(1), Op::Join(2)];
    for _ in 0..40 {
        probes(&mut locs[1], 8, 120.0);
        locs[1].push(Op::Post(0x5e));
        locs[2].push(Op::Wait(0x5e));
        probes(&mut locs[2], 5, 90.0);
    }
    Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: true,
    }
}

fn doacross() -> Program {
    // Iterations dealt round-robin to two threads; iteration i awaits the
    // advance of iteration i - 1 before its dependent part (B2) and
    // advances after it, as in the thesis's backward DOACROSS loop.
    let mut locs = vec![Vec::new(); 3];
    locs[0] = vec![Op::Spawn(1), Op::Spawn(2), Op::Join(1), Op::Join(2)];
    for i in 0..60u64 {
        let ops = &mut locs[1 + (i % 2) as usize];
        probes(ops, 3, 100.0 + (i % 7) as f64 * 30.0);
        if i > 0 {
            ops.push(Op::Await(0xd0, i));
        }
        probes(ops, 2, 80.0);
        ops.push(Op::Advance(0xd0, i + 1));
        probes(ops, 4, 60.0);
    }
    Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: true,
    }
}

fn reordered_locks() -> Program {
    // Thread 0 asks for the lock first without probes, but its 20 probed
    // bodies before the request make it ask second with them.
    let mut locs = vec![Vec::new(); 2];
    for _ in 0..10 {
        locs[0].push(Op::Compute(1000.0));
        probes(&mut locs[0], 20, 50.0);
        locs[0].push(Op::Lock(7));
        probes(&mut locs[0], 4, 400.0);
        locs[0].push(Op::Unlock(7));
        locs[0].push(Op::Compute(4000.0));
        locs[1].push(Op::Compute(2100.0));
        probes(&mut locs[1], 2, 50.0);
        locs[1].push(Op::Lock(7));
        probes(&mut locs[1], 4, 400.0);
        locs[1].push(Op::Unlock(7));
        locs[1].push(Op::Compute(4000.0));
    }
    Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: true,
    }
}

fn check(name: &str, p: &Program) {
    let (truth, measured, comp, s) = run(name, p, Executor::Sequential);
    let (before, _) = max_error(&truth, &measured);
    let (after, at) = max_error(&truth, &comp);
    assert!(before > 10_000.0, "{name}: probes perturb ({before} ns)");
    assert!(
        after <= 2.0,
        "{name}: compensated events within 2 ns of the truth, worst {after} ns at {at} \
         (measured: {before} ns)"
    );
    assert_eq!(s.forced, 0, "{name}");
    assert!(s.total(|l| l.dependencies as f64) > 0.0, "{name}");
}

#[test]
fn message_pipeline_is_recovered_exactly() {
    check("pipeline", &pipeline());
}

#[test]
fn barriers_and_allreduces_are_recovered_exactly() {
    check("barriers", &barriers());
}

#[test]
fn lock_handoffs_are_recovered_exactly() {
    check("locks", &locks());
}

#[test]
fn fork_join_is_recovered_exactly() {
    check("forkjoin", &forkjoin());
}

/// Compensates `p` measured on `measured` (probes and all) and returns
/// the largest difference from the probe-free run, before and after.
fn against_truth(name: &str, p: &Program, measured: &Machine) -> (f64, f64, String) {
    let (before, after, at, _) = against_truth_with(name, p, measured, &[]);
    (before, after, at)
}

/// As [`against_truth`], the process recording `properties`; also
/// returns the compensation's summary.
fn against_truth_with(
    name: &str,
    p: &Program,
    measured: &Machine,
    properties: &[(&str, &str)],
) -> (f64, f64, String, compensate::Summary) {
    let truth = synth::simulate(p, &Machine::with_alpha(0.0, 0.0, 0.0));
    let trace = synth::simulate(p, measured);
    let (mdir, cdir, s) = compensated(name, p, &trace, properties, Executor::Sequential);
    let (before, _) = max_error(&truth, &read(&mdir));
    let (after, at) = max_error(&truth, &read(&cdir));
    (before, after, at, s)
}

#[test]
fn a_thread_waiting_for_a_core_starts_after_the_least_delay() {
    // Every second thread created waits 40 µs for a core in the measured
    // run (another thread's probes held it), not in the probe-free one.
    let loaded = Machine {
        queued: 40_000.0,
        ..Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2])
    };
    let (before, after, at) = against_truth("queued", &forkjoin(), &loaded);
    assert!(before > 40_000.0, "the queued starts perturb ({before} ns)");
    assert!(after <= 2.0, "worst {after} ns at {at}");
}

#[test]
fn threads_that_outnumber_the_cores_keep_their_measured_delays() {
    // The same late starts on a process that recorded 2 cores for its 3
    // threads at once: waiting for a core was the program's own, so the
    // approximation keeps it (and differs from the run without it by at
    // least the 40 µs of a late start).
    let loaded = Machine {
        queued: 40_000.0,
        ..Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2])
    };
    // Three threads a round, each working 100 µs or more: alive at once.
    let mut p = forkjoin();
    for ops in p.locations.iter_mut().skip(1) {
        probes(ops, 20, 5_000.0);
    }
    let (_, enough, _, s) = against_truth_with("cores-4", &p, &loaded, &[("cpus", "4")]);
    assert!(enough <= 2.0, "4 cores: worst {enough} ns");
    assert!(s.crowded.is_empty());
    let (_, crowded, _, s) = against_truth_with("cores-2", &p, &loaded, &[("cpus", "2")]);
    assert_eq!(
        s.crowded,
        [compensate::Crowded {
            rank: 0,
            threads: 3,
            cpus: 2
        }]
    );
    assert!(
        crowded >= 40_000.0,
        "2 cores: the late starts stay ({crowded} ns off)"
    );
}

/// How far the compensated end of `p` lands from the probe-free one
/// (relative), both run with every computation and probe `stretch` times
/// longer (threads or ranks taking turns on fewer cores), on a host that
/// recorded `cpus` cores.
fn taking_turns(name: &str, p: &Program, stretch: f64, cpus: &str) -> f64 {
    let turns = |alpha: [f64; 3]| Machine {
        stretch,
        ..Machine::with_alpha(alpha[0], alpha[1], alpha[2])
    };
    let truth = synth::simulate(p, &turns([0.0; 3]));
    let trace = synth::simulate(p, &turns(ALPHA));
    let cpus = [("cpus", cpus)];
    let name = format!("turns-{name}-{}", cpus[0].1);
    let (_, cdir, _) = compensated(&name, p, &trace, &cpus, Executor::Sequential);
    // A pass that blocks is stepped again: the thread pool, whose passes
    // block at other points, gives the same approximation.
    let (_, pdir, _) = compensated(
        &format!("{name}-pool"),
        p,
        &trace,
        &cpus,
        Executor::Threads(2),
    );
    assert_eq!(read(&cdir), read(&pdir), "{name}");
    (end(&read(&cdir)) - end(&truth)) / end(&truth)
}

/// Checks that `p`, taking turns on 2 cores (`stretch`), is compensated
/// to the probe-free run, where its own probes alone leave it long (on 4
/// cores the host was not crowded).
fn loses_the_probes_share(name: &str, p: &Program, stretch: f64) {
    let own = taking_turns(name, p, stretch, "4");
    let shared = taking_turns(name, p, stretch, "2");
    assert!(own > 0.03, "own probes only: {own}");
    assert!(shared.abs() < 0.01, "with the probes' share: {shared}");
}

#[test]
fn threads_taking_turns_on_the_cores_lose_the_probes_share() {
    // Three threads at once on 2 cores, each getting 2/3 of a core: in
    // the measured run every stretch of a thread's time holds the other
    // threads' probes too, and removing its own probes alone leaves them.
    let mut locs = vec![Vec::new(); 4];
    for c in 1..4u32 {
        locs[0].push(Op::Spawn(c));
        probes(&mut locs[c as usize], 3_000, 300.0);
    }
    for c in 1..4u32 {
        locs[0].push(Op::Join(c));
    }
    let p = Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: true,
    };
    loses_the_probes_share("threads", &p, 1.5);
}

#[test]
fn ranks_taking_turns_on_their_hosts_cores_lose_the_probes_share() {
    // Four ranks, each a process of one thread, on one host of 2 cores:
    // alone each is not crowded, together they are.
    let mut locs = vec![Vec::new(); 4];
    for ops in &mut locs {
        probes(ops, 3_000, 300.0);
    }
    let p = Program {
        regions: vec!["outer".into(), "body".into()],
        locations: locs,
        threads: false,
    };
    loses_the_probes_share("ranks", &p, 2.0);
}

#[test]
fn probes_dearer_than_calibrated_are_followed_in_place() {
    // The measured run's probes cost a fifth more than the calibration
    // written with the trace says (a core slower than the one that
    // calibrated). Each lock request follows its region's enter with
    // nothing between: those pairs show the probes' cost in place.
    let dear = ALPHA.map(|a| a * 1.2);
    let p = locks();
    let truth = synth::simulate(&p, &Machine::with_alpha(0.0, 0.0, 0.0));
    let trace = synth::simulate(&p, &Machine::with_alpha(dear[0], dear[1], dear[2]));
    let (_, cdir, _) = compensated("dear", &p, &trace, &[], Executor::Sequential);
    let (measured, approximated) = (end(&trace), end(&read(&cdir)));
    // At the calibrated cost a fifth of the probes' time would stay.
    let probes = measured - end(&truth);
    let left = approximated - end(&truth);
    assert!(probes > 0.0);
    assert!(
        left.abs() < 0.05 * probes,
        "{left} ns of {probes} ns of probes left"
    );
}

#[test]
fn locks_cost_their_least_where_probes_made_waiters_sleep() {
    // In the measured run only, an unlock that finds a waiter pays 2 µs
    // to wake it (the probes lengthened the critical sections until the
    // waiters slept).
    let loaded = Machine {
        wake_on_unlock: 2_000.0,
        ..Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2])
    };
    let (before, after, at) = against_truth("wake-unlock", &locks(), &loaded);
    assert!(before > 2_000.0, "the wakes perturb ({before} ns)");
    assert!(after <= 2.0, "worst {after} ns at {at}");
}

#[test]
fn a_waiter_woken_late_wakes_after_the_least_delay() {
    // Every second semaphore wait and await wakes 30 µs late in the
    // measured run only.
    let loaded = Machine {
        slow_wake: 30_000.0,
        ..Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2])
    };
    for (name, p) in [("slow-sem", semaphores()), ("slow-await", doacross())] {
        let (before, after, at) = against_truth(name, &p, &loaded);
        assert!(
            before > 30_000.0,
            "{name}: late wake-ups perturb ({before} ns)"
        );
        assert!(after <= 2.0, "{name}: worst {after} ns at {at}");
    }
}

#[test]
fn semaphore_waits_are_recovered_exactly() {
    check("semaphores", &semaphores());
}

#[test]
fn advance_await_pipeline_is_recovered_exactly() {
    check("doacross", &doacross());
}

#[test]
fn liberal_mode_grants_locks_in_approximated_order() {
    let p = reordered_locks();
    let truth = synth::simulate(&p, &Machine::with_alpha(0.0, 0.0, 0.0));
    let measured = synth::simulate(&p, &Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2]));
    let (dir, exp) = written("liberal", &p, &measured, &[]);
    let told = Arc::new(Mutex::new(Vec::new()));
    let run = |name: &str, liberal: bool| {
        let log = told.clone();
        let opts = Options {
            liberal: Liberal {
                locks: liberal,
                loops: false,
            },
            progress: compensate::Progress::to(move |m| log.lock().unwrap().push(m.to_string())),
            ..Options::default()
        };
        let s = compensate::compensate(&exp, &dir.join(name), &opts, Executor::Sequential).unwrap();
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        max_error(&truth, &read(&dir.join(name)))
    };
    let (conservative, _) = run("c", false);
    assert!(
        told.lock().unwrap().is_empty(),
        "one replay, nothing to tell"
    );
    let (liberal, at) = run("l", true);
    // Keeping the measured order makes thread 0 wait for thread 1's
    // critical section every round; granting in approximated order is exact.
    assert!(conservative > 1000.0, "{conservative}");
    assert!(liberal <= 2.0, "{liberal} at {at}");
    // The first replay in the measured order, then again with the locks
    // re-granted, until the order holds.
    let told = told.lock().unwrap();
    assert_eq!(told[0], "replaying");
    assert!(told.len() >= 2, "{told:?}");
    assert!(
        told[1..]
            .iter()
            .all(|m| m.starts_with("replaying again") && m.contains("lock grants re-ordered")),
        "{told:?}"
    );
}

#[test]
fn executors_write_identical_experiments() {
    let p = barriers();
    let (_, _, a, sa) = run("exec-seq", &p, Executor::Sequential);
    let (_, _, b, sb) = run("exec-par", &p, Executor::Threads(3));
    assert_eq!(a, b);
    assert_eq!(sa.approximated_ns, sb.approximated_ns);
}

#[test]
fn literal_convention_keeps_the_partners_probe() {
    let p = pipeline();
    let measured = synth::simulate(&p, &Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2]));
    let dir = tmp("literal");
    synth::write(&dir.join("m"), &p, &measured, ALPHA).unwrap_or_else(|_| {
        std::fs::create_dir_all(dir.join("m")).unwrap();
        synth::write(&dir.join("m"), &p, &measured, ALPHA).unwrap()
    });
    let exp = Experiment::open(dir.join("m")).unwrap();
    let opts = |c| Options {
        convention: c,
        ..Options::default()
    };
    let cons = compensate::compensate(
        &exp,
        &dir.join("c"),
        &opts(Convention::Consistent),
        Executor::Sequential,
    )
    .unwrap();
    let lit = compensate::compensate(
        &exp,
        &dir.join("l"),
        &opts(Convention::Literal),
        Executor::Sequential,
    )
    .unwrap();
    // Each of the 150 waiting receives keeps one send probe (63 ns) more;
    // along the chain of 3 ranks that is at most 3 x 50 x 63 ns.
    let extra = lit.approximated_ns - cons.approximated_ns;
    assert!(extra > 0.0 && extra <= 3.0 * 50.0 * 63.0 + 1.0, "{extra}");
}

#[test]
fn an_already_compensated_experiment_is_refused() {
    let p = locks();
    let (_, _, _, _) = run("twice", &p, Executor::Sequential);
    let dir = std::env::temp_dir()
        .join(format!("parallax-comp-twice-{}", std::process::id()))
        .join("compensated");
    let exp = Experiment::open(&dir).unwrap();
    let e = compensate::compensate(
        &exp,
        &dir.join("again"),
        &Options::default(),
        Executor::Sequential,
    )
    .unwrap_err();
    assert!(e.to_string().contains("already compensated"), "{e}");
}

/// A process that calibrated twice (at ticks 1000 and 100,000) and enters
/// region 2 through the register-preserving probes: each event loses the
/// cost of its own entry point, from the calibration nearest in time.
#[test]
fn each_event_loses_its_entry_points_cost_from_the_nearest_calibration() {
    use parallax_model::defs::Probe;
    let mut cals = Vec::new();
    // (probe, cost at tick 1000, cost at tick 100,000)
    for (probe, early, late) in [
        (Probe::Enter, 10.0, 20.0),
        (Probe::Leave, 11.0, 21.0),
        (Probe::Event, 12.0, 22.0),
        (Probe::EnterPreserving, 30.0, 50.0),
        (Probe::LeavePreserving, 31.0, 51.0),
    ] {
        cals.extend([(probe, 1000, early), (probe, 100_000, late)]);
    }
    // Every event's probe but the last one's is removed: early, enter 10,
    // preserving enter 30 and leave 31, leave 11; late, 20, 50, 51.
    let removed = removed_from_nests("entries", true, &cals);
    assert!(
        (removed - (10.0 + 30.0 + 31.0 + 11.0 + 20.0 + 50.0 + 51.0)).abs() < 1e-6,
        "{removed}"
    );
}

/// The loops timed right after a calibration (the hooks in context, a
/// few milliseconds later) belong to it: they make no phase of their own
/// in which the probes would cost the mean of every calibration.
#[test]
fn loops_timed_after_a_calibration_belong_to_it() {
    use parallax_model::defs::Probe;
    let cals = [
        (Probe::Enter, 1000, 10.0),
        (Probe::Leave, 1000, 11.0),
        (Probe::HookPairInContextMin, 1400, 5.0),
        (Probe::HookPairInContextMax, 1400, 9.0),
        (Probe::Enter, 100_000, 20.0),
        (Probe::Leave, 100_000, 21.0),
    ];
    // Early: two enters of 10 and two leaves of 11; late: 20, 20, 21.
    let removed = removed_from_nests("context", false, &cals);
    assert!(
        (removed - (2.0 * 10.0 + 2.0 * 11.0 + 2.0 * 20.0 + 21.0)).abs() < 1e-6,
        "{removed}"
    );
}

/// Compensates a process with calibrations `cals` (probe, tick, cost)
/// whose one thread runs the same nest r1 { r2 { } }, 100 ns apart, at
/// ticks 2000 and 100,000 (r2 entered through the register-preserving
/// probes if `preserving`); returns the probe time removed.
fn removed_from_nests(
    name: &str,
    preserving: bool,
    cals: &[(parallax_model::defs::Probe, u64, f64)],
) -> f64 {
    use parallax_model::defs::{ClockSource, Def, Entry, Mode, ProcessInfo};
    use parallax_model::event::{Event, EventKind};
    use parallax_model::experiment::{self, EventWriter};
    use parallax_model::region::RegionKind;

    let dir = tmp(name);
    let pdir = dir.join(experiment::rank_dir(0));
    std::fs::create_dir_all(&pdir).unwrap();
    let mut defs = vec![
        Def::Process(ProcessInfo {
            rank: 0,
            ranks: 1,
            pid: 1,
            host: "h".into(),
            program: "p".into(),
            args: Vec::new(),
            start_unix_ns: 1,
            mode: Mode::Trace,
            version: "0".into(),
        }),
        Def::Clock {
            source: ClockSource::Monotonic,
            nominal_hz: 1e9,
        },
        Def::ClockSync {
            tick: 0,
            mono_ns: 0,
            unix_ns: 1,
        },
        Def::ClockSync {
            tick: 200_000,
            mono_ns: 200_000,
            unix_ns: 200_001,
        },
        Def::Location {
            thread: 0,
            name: String::new(),
            os_tid: 0,
        },
    ];
    if preserving {
        defs.push(Def::Entry {
            region: 2,
            entry: Entry::Preserving,
        });
    }
    for id in [1, 2] {
        defs.push(Def::Region {
            id,
            kind: RegionKind::Loop,
            name: format!("r{id}"),
            file: String::new(),
            line: 0,
        });
    }
    for &(probe, tick, mean_ns) in cals {
        defs.push(Def::Calibration {
            probe,
            mode: Mode::Trace,
            mean_ns,
            sd_ns: 0.0,
            min_ns: mean_ns,
            samples: 1,
            tick,
        });
    }
    experiment::write_defs(&pdir, 0, &defs).unwrap();
    let mut w = EventWriter::create(&pdir.join(experiment::events_file(0)), 0, 0, 1 << 16).unwrap();
    for base in [2000u64, 100_000] {
        for (dt, kind) in [
            (0, EventKind::Enter { region: 1 }),
            (100, EventKind::Enter { region: 2 }),
            (200, EventKind::Leave { region: 2 }),
            (300, EventKind::Leave { region: 1 }),
        ] {
            w.push(&Event {
                time: base + dt,
                kind,
            })
            .unwrap();
        }
    }
    w.finish().unwrap();
    let exp = Experiment::open(&dir).unwrap();
    let out = dir.join("c");
    let s = compensate::compensate(&exp, &out, &Options::default(), Executor::Sequential).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    s.locations[0].stats.probe_ns
}
