//! Liberal re-scheduling of self-scheduled loops against ground truth:
//! iterations handed out again in approximated time must land where a
//! run without probes puts them.

use parallax_analysis::compensate::{self, Liberal, Options};
use parallax_analysis::executor::Executor;
use parallax_testkit::synth::{self, Machine, Op, Program, Trace};

mod common;
use common::*;

/// Main starts two threads that share self-scheduled loop 0, whose
/// iterations `body` makes, and joins them, the second after 40 µs of
/// work (so that the measured run shows what a join costs when its thread
/// has ended).
fn self_scheduled(n: usize, body: impl Fn(usize) -> Vec<Op>) -> (Program, Vec<Vec<Vec<Op>>>) {
    let p = Program {
        regions: vec!["outer".into(), "body".into()],
        locations: vec![
            vec![
                Op::Spawn(1),
                Op::Spawn(2),
                Op::Join(1),
                Op::Compute(40_000.0),
                Op::Join(2),
            ],
            vec![Op::Loop(0)],
            vec![Op::Loop(0)],
        ],
        threads: true,
    };
    (p, vec![(0..n).map(body).collect()])
}

/// Iteration `k` of uneven length, in a region: every 50th takes 20 µs,
/// the others 200 to 500 ns. While one thread runs a long one, the other
/// runs short ones, fewer of them with probes: who takes which changes.
fn uneven(k: usize) -> Vec<Op> {
    let ns = if k % 50 == 0 {
        20_000.0
    } else {
        200.0 + (k * 7919 % 31) as f64 * 10.0
    };
    vec![Op::Enter(1), Op::Compute(ns), Op::Leave]
}

/// Compensates `p` (with `loops`) measured with probes, conservatively
/// and liberally, and checks that keeping the measured assignment leaves
/// the run microseconds off while handing the iterations out again lands
/// within 2 ns of the probe-free run: the liberal summary.
fn rescheduled(name: &str, p: &Program, loops: &synth::Loops) -> compensate::Summary {
    let truth = synth::simulate_with_loops(p, loops, &Machine::with_alpha(0.0, 0.0, 0.0));
    let measured =
        synth::simulate_with_loops(p, loops, &Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2]));
    let taken = |t: &Trace| -> Vec<Vec<u64>> {
        t.iter()
            .map(|l| {
                l.iter()
                    .filter_map(|e| match e.kind {
                        parallax_model::event::EventKind::Iteration { index, .. } => Some(index),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    };
    assert_ne!(
        taken(&truth),
        taken(&measured),
        "{name}: the probes change who takes which iteration"
    );
    let (dir, exp) = written(name, p, &measured, &[]);
    let run = |out: &str, liberal: bool| {
        let opts = Options {
            liberal: Liberal {
                locks: false,
                loops: liberal,
            },
            ..Options::default()
        };
        let s = compensate::compensate(&exp, &dir.join(out), &opts, Executor::Sequential).unwrap();
        assert!(!dir.join(out).join(".rescheduled").exists());
        let comp = read(&dir.join(out));
        if liberal {
            assert_eq!(
                taken(&comp),
                taken(&truth),
                "{name}: iterations handed out as without probes"
            );
        }
        let (err, at) = max_error_by_kind(&truth, &comp);
        (err, at, s)
    };
    let (conservative, _, _) = run("c", false);
    let (liberal, at, s) = run("l", true);
    // The thread pool's passes block at other points: the same result.
    let opts = Options {
        liberal: Liberal::ALL,
        ..Options::default()
    };
    compensate::compensate(&exp, &dir.join("pool"), &opts, Executor::Threads(2)).unwrap();
    assert_eq!(read(&dir.join("l")), read(&dir.join("pool")), "{name}");
    assert!(
        conservative > 1000.0,
        "{name}: measured assignment kept: {conservative} ns off"
    );
    assert!(
        liberal <= 2.0,
        "{name}: re-scheduled: worst {liberal} ns at {at}"
    );
    s
}

/// As [`max_error`] for traces whose locations may hold different events
/// (then infinite).
fn max_error_by_kind(a: &Trace, b: &Trace) -> (f64, String) {
    let same = a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len() && x.iter().zip(y).all(|(e, f)| e.kind.name() == f.kind.name())
        });
    if same {
        max_error(a, b)
    } else {
        (f64::INFINITY, "different events".into())
    }
}

#[test]
fn liberal_mode_hands_self_scheduled_iterations_out_again() {
    let (p, loops) = self_scheduled(300, uneven);
    let s = rescheduled("doall", &p, &loops);
    assert_eq!(s.rescheduled.len(), 1);
    assert_eq!(s.rescheduled[0].iterations, 300);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn liberal_mode_re_schedules_doacross_iterations_after_their_advances() {
    // Iteration k advances its own variable after B1 and awaits iteration
    // k - 1's before B3 (the thesis's forward loop).
    let (p, loops) = self_scheduled(200, |k| {
        let mut ops = uneven(k);
        ops.push(Op::Advance(0x100 + k as u64, 1));
        ops.extend(uneven(k + 5));
        if k > 0 {
            ops.push(Op::Await(0x100 + k as u64 - 1, 1));
        }
        ops.extend(uneven(k + 11));
        ops
    });
    let s = rescheduled("doacross-ss", &p, &loops);
    assert_eq!(s.rescheduled.len(), 1);
}

/// Measures `p` (with `loops`) with probes, writes it with `properties`
/// and compensates it with every liberal option: the measured trace, the
/// compensated one and the summary.
fn liberal_all(
    name: &str,
    p: &Program,
    loops: &synth::Loops,
    properties: &[(&str, &str)],
) -> (Trace, Trace, compensate::Summary) {
    let measured =
        synth::simulate_with_loops(p, loops, &Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2]));
    let (dir, exp) = written(name, p, &measured, properties);
    let opts = Options {
        liberal: Liberal::ALL,
        ..Options::default()
    };
    let s = compensate::compensate(&exp, &dir.join("l"), &opts, Executor::Sequential).unwrap();
    (measured, read(&dir.join("l")), s)
}

#[test]
fn loops_whose_iterations_hold_other_synchronization_keep_their_assignment() {
    // A lock inside the iterations: re-scheduling them would need the
    // lock's order re-simulated too.
    let (p, loops) = self_scheduled(100, |k| {
        let mut ops = uneven(k);
        ops.extend([Op::Lock(7), Op::Compute(50.0), Op::Unlock(7)]);
        ops
    });
    let truth = synth::simulate_with_loops(&p, &loops, &Machine::with_alpha(0.0, 0.0, 0.0));
    let (measured, comp, s) = liberal_all("ss-locked", &p, &loops, &[]);
    assert!(s.rescheduled.is_empty());
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("loop 1") && w.contains("lock_request")),
        "{:?}",
        s.warnings
    );
    // The measured events stay where they were.
    assert_eq!(comp.len(), truth.len());
    for (c, m) in comp.iter().zip(&measured) {
        assert_eq!(c.len(), m.len());
    }
}

#[test]
fn loops_of_threads_that_outnumber_the_cores_keep_their_assignment() {
    // Two threads on one core took turns: handing the iterations to the
    // thread free first would give each a core of its own.
    let (p, loops) = self_scheduled(300, uneven);
    let (_, _, s) = liberal_all("ss-crowded", &p, &loops, &[("cpus", "1")]);
    assert_eq!(s.crowded.len(), 1);
    assert!(s.rescheduled.is_empty());
    assert!(
        s.warnings.iter().any(|w| w.contains("on 1 cores")),
        "{:?}",
        s.warnings
    );
}
