//! Wait-state patterns, cause analysis and the critical path on simulated
//! programs of known timing: each program injects one bottleneck, and the
//! analysis must find it with its culprit and severity, on every executor.

use std::path::PathBuf;

use parallax_analysis::bottleneck::{self, Config, Pattern, Report};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::Experiment;
use parallax_testkit::synth::{self, Machine, Op, Program};

const MS: f64 = 1e6;

fn analyze(name: &str, p: &Program) -> Report {
    let dir = std::env::temp_dir().join(format!("parallax-patterns-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let m = Machine::with_alpha(0.0, 0.0, 0.0);
    let t = synth::simulate(p, &m);
    synth::write(&dir, p, &t, [0.0; 3]).unwrap();
    let exp = Experiment::open(&dir).unwrap();
    let cfg = Config::default();
    let seq = bottleneck::analyze(&exp, &cfg, Executor::Sequential).unwrap();
    let par = bottleneck::analyze(&exp, &cfg, Executor::Threads(2)).unwrap();
    assert_eq!(seq, par, "executors disagree");
    let _ = std::fs::remove_dir_all(PathBuf::from(&dir));
    seq
}

fn only(r: &Report, p: Pattern) -> Vec<&bottleneck::Finding> {
    r.findings.iter().filter(|f| f.pattern == p).collect()
}

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol * want, "got {got}, want {want}");
}

#[test]
fn late_sender_blames_the_sender_and_its_computation() {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for _ in 0..10 {
        a.extend([Op::Enter(0), Op::Compute(10.0 * MS), Op::Leave]);
        a.push(Op::Send {
            to: 1,
            tag: 0,
            bytes: 8,
        });
        b.push(Op::Recv { from: 0, tag: 0 });
        b.extend([Op::Enter(1), Op::Compute(0.5 * MS), Op::Leave]);
    }
    let p = Program {
        regions: vec!["solve".into(), "post".into()],
        locations: vec![a, b],
        threads: false,
    };
    let r = analyze("ls", &p);
    let ls = only(&r, Pattern::LateSender);
    assert_eq!(ls.len(), 1, "{:#?}", r.findings);
    assert_eq!((ls[0].at.rank, ls[0].region.as_str()), (1, "MPI_Recv"));
    assert_eq!(ls[0].culprits[0].at.rank, 0);
    assert_eq!(ls[0].instances, 10);
    // The first receive waits 10 ms, the others 9.5 ms (rank 1's own work).
    close(ls[0].severity_s, 0.0955, 0.02);
    assert!(only(&r, Pattern::WrongOrder).is_empty());
    // Rank 0's `solve` caused the waiting.
    let d = &r.delays[0];
    assert_eq!((d.at.rank, d.region.as_str()), (0, "solve"));
    close(d.direct_s, ls[0].severity_s, 0.01);
    // The critical path runs through rank 0's computation.
    assert_eq!(r.critical_path[0].region, "solve");
    assert!(r.critical_path[0].share > 0.9);
}

#[test]
fn wrong_order_is_a_late_sender_with_an_earlier_message_waiting() {
    let a = vec![
        Op::Send {
            to: 1,
            tag: 1,
            bytes: 8,
        },
        Op::Enter(0),
        Op::Compute(20.0 * MS),
        Op::Leave,
        Op::Send {
            to: 1,
            tag: 2,
            bytes: 8,
        },
    ];
    let b = vec![Op::Recv { from: 0, tag: 2 }, Op::Recv { from: 0, tag: 1 }];
    let p = Program {
        regions: vec!["work".into()],
        locations: vec![a, b],
        threads: false,
    };
    let r = analyze("wo", &p);
    let wo = only(&r, Pattern::WrongOrder);
    assert_eq!(wo.len(), 1, "{:#?}", r.findings);
    close(wo[0].severity_s, 0.020, 0.02);
    // Scalasca's hierarchy: Wrong Order is part of Late Sender.
    close(only(&r, Pattern::LateSender)[0].severity_s, 0.020, 0.02);
}

#[test]
fn computing_between_the_receives_is_no_wrong_order() {
    // Location 2 runs a step ahead of location 0: its next message is
    // there while 1 waits for 0's, but 1 computes on what it received
    // before it receives again (a halo exchange's next step).
    let send = |to| Op::Send {
        to,
        tag: 0,
        bytes: 8,
    };
    let work = |ms: f64| [Op::Enter(0), Op::Compute(ms * MS), Op::Leave];
    let mut late = Vec::new();
    let mut early = Vec::new();
    let mut mid = Vec::new();
    for _ in 0..3 {
        late.extend(work(20.0));
        late.push(send(1));
        early.push(send(1));
        mid.push(Op::Recv { from: 2, tag: 0 });
        mid.push(Op::Recv { from: 0, tag: 0 });
        mid.extend(work(1.0));
    }
    let p = Program {
        regions: vec!["work".into()],
        locations: vec![late, mid, early],
        threads: false,
    };
    let r = analyze("halo", &p);
    assert!(
        only(&r, Pattern::WrongOrder).is_empty(),
        "{:#?}",
        r.findings
    );
    close(only(&r, Pattern::LateSender)[0].severity_s, 0.058, 0.05);
    // Without the computation the same receives are Wrong Order.
    let mut p = p;
    p.locations[1].retain(|op| !matches!(op, Op::Enter(_) | Op::Compute(_) | Op::Leave));
    let r = analyze("halo-tight", &p);
    assert_eq!(only(&r, Pattern::WrongOrder).len(), 1, "{:#?}", r.findings);
}

#[test]
fn barrier_waits_for_the_overloaded_location() {
    let mut locs = vec![Vec::new(); 4];
    for _ in 0..5 {
        for (i, l) in locs.iter_mut().enumerate() {
            let extra = if i == 2 { 8.0 * MS } else { 0.0 };
            l.extend([
                Op::Enter(0),
                Op::Compute(2.0 * MS + extra),
                Op::Leave,
                Op::Barrier,
            ]);
        }
    }
    let p = Program {
        regions: vec!["step".into()],
        locations: locs,
        threads: false,
    };
    let r = analyze("bar", &p);
    let w = only(&r, Pattern::WaitAtBarrier);
    assert_eq!(w.len(), 3, "{:#?}", r.findings);
    for f in &w {
        assert_ne!(f.at.rank, 2);
        assert_eq!(f.culprits.len(), 1);
        assert_eq!(f.culprits[0].at.rank, 2);
        close(f.severity_s, 0.040, 0.02);
    }
    let li = only(&r, Pattern::LoadImbalance);
    assert_eq!(li.len(), 1);
    assert_eq!((li[0].at.rank, li[0].region.as_str()), (2, "step"));
    // max − mean over 4 locations: 8 ms × 3/4 per step.
    close(li[0].severity_s, 0.030, 0.02);
    assert_eq!(r.blocks.len(), 1);
    assert_eq!(r.blocks[0].worst.map(|w| w.rank), Some(2));
}

#[test]
fn allreduce_is_wait_at_nxn() {
    let mut locs = vec![Vec::new(); 3];
    for _ in 0..4 {
        for (i, l) in locs.iter_mut().enumerate() {
            let work = if i == 0 { 10.0 * MS } else { 1.0 * MS };
            l.extend([Op::Compute(work), Op::Allreduce]);
        }
    }
    let p = Program {
        regions: vec![],
        locations: locs,
        threads: false,
    };
    let r = analyze("nxn", &p);
    let w = only(&r, Pattern::WaitAtNxN);
    assert_eq!(w.len(), 2, "{:#?}", r.findings);
    for f in w {
        assert_eq!(f.culprits[0].at.rank, 0);
        close(f.severity_s, 0.036, 0.02);
    }
}

#[test]
fn lock_wait_names_the_holder() {
    let a = vec![
        Op::Lock(7),
        Op::Enter(0),
        Op::Compute(20.0 * MS),
        Op::Leave,
        Op::Unlock(7),
    ];
    // (Pairing needs the release after the acquisition in time.)
    let b = vec![
        Op::Compute(1.0 * MS),
        Op::Lock(7),
        Op::Compute(0.01 * MS),
        Op::Unlock(7),
    ];
    let p = Program {
        regions: vec!["critical".into()],
        locations: vec![a, b],
        threads: true,
    };
    let r = analyze("lock", &p);
    let w = only(&r, Pattern::LockWait);
    assert_eq!(w.len(), 1, "{:#?}", r);
    assert_eq!((w[0].at.thread, w[0].culprits[0].at.thread), (1, 0));
    close(w[0].severity_s, 0.019, 0.02);
    assert_eq!(r.delays[0].region, "critical");
}

#[test]
fn a_balanced_program_has_no_finding() {
    let mut locs = vec![Vec::new(); 4];
    for it in 0..20 {
        for (i, l) in locs.iter_mut().enumerate() {
            let n = locs_len();
            l.extend([Op::Enter(0), Op::Compute(3.0 * MS), Op::Leave]);
            l.push(Op::Send {
                to: ((i + 1) % n) as u32,
                tag: it,
                bytes: 64,
            });
            l.push(Op::Recv {
                from: ((i + n - 1) % n) as u32,
                tag: it,
            });
            l.push(Op::Allreduce);
        }
    }
    let p = Program {
        regions: vec!["step".into()],
        locations: locs,
        threads: false,
    };
    let r = analyze("clean", &p);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(r.events > 0);
    close(r.critical_path_s, r.wall_s, 0.05);
}

fn locs_len() -> usize {
    4
}

/// Rank 0 waits in one call (MPI_Waitall) for a message from rank 1,
/// sent at `first` ms, and one from rank 2, sent at `second` ms, which
/// the call reports in that order.
fn wait_for_two(name: &str, first: f64, second: f64) -> Report {
    use parallax_model::event::{Event, EventKind};
    let p = Program {
        regions: vec![],
        locations: vec![vec![]; 3],
        threads: false,
    };
    let (send, recv) = (1, 2);
    let ev = |ms: f64, kind| Event {
        time: (ms * MS) as u64 + 1_000_000,
        kind,
    };
    let msg = |peer| EventKind::Send {
        peer,
        tag: 0,
        comm: 0,
        bytes: 8,
    };
    let got = |peer| EventKind::Recv {
        peer,
        tag: 0,
        comm: 0,
        bytes: 8,
    };
    let sender = |ms: f64| {
        vec![
            ev(ms, EventKind::Enter { region: send }),
            ev(ms + 0.01, msg(0)),
            ev(ms + 0.02, EventKind::Leave { region: send }),
        ]
    };
    let last = first.max(second) + 0.03;
    let t = vec![
        vec![
            ev(0.0, EventKind::Enter { region: recv }),
            ev(last, got(1)),
            ev(last, got(2)),
            ev(last + 0.01, EventKind::Leave { region: recv }),
        ],
        sender(first),
        sender(second),
    ];
    let dir = std::env::temp_dir().join(format!("parallax-patterns-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    synth::write(&dir, &p, &t, [0.0; 3]).unwrap();
    let exp = Experiment::open(&dir).unwrap();
    let r = bottleneck::analyze(&exp, &Config::default(), Executor::Sequential).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    r
}

#[test]
fn a_wait_for_several_receives_counts_its_latest_sender() {
    let r = wait_for_two("waitall", 10.0, 20.0);
    let ls = only(&r, Pattern::LateSender);
    assert_eq!(ls.len(), 1, "{:#?}", r.findings);
    close(ls[0].severity_s, 0.020, 0.01);
    let mut c: Vec<_> = ls[0]
        .culprits
        .iter()
        .map(|c| (c.at.rank, c.severity_s))
        .collect();
    c.sort_by_key(|c| c.0);
    assert_eq!(c.len(), 2);
    close(c[0].1, 0.010, 0.01);
    close(c[1].1, 0.010, 0.01);
    // Reported in the opposite order of sending: still one wait, and not
    // a Wrong Order (the call waited for both at once).
    let r = wait_for_two("waitall-rev", 20.0, 10.0);
    close(only(&r, Pattern::LateSender)[0].severity_s, 0.020, 0.01);
    assert!(
        only(&r, Pattern::WrongOrder).is_empty(),
        "{:#?}",
        r.findings
    );
}

#[test]
fn competing_puts_to_one_target_are_found_with_their_competitor() {
    let c = competing_puts(4.0);
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].at.rank, c[0].region.as_str()), (1, "shmem_putmem"));
    assert_eq!(c[0].culprits[0].at.rank, 2);
    close(c[0].severity_s, 0.015, 0.01);
    // Two transfers sharing the target equally: each lost half its time,
    // less than the wait share of other wait states, still found.
    let c = competing_puts(2.0);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].culprits[0].at.rank, 2);
    close(c[0].severity_s, 0.005, 0.01);
}

/// The Competing RMA findings when rank 1 puts to rank 0 five times alone
/// (1 ms each), then five times while rank 2 puts to rank 0 too
/// (`together_ms` each).
fn competing_puts(together_ms: f64) -> Vec<bottleneck::Finding> {
    use parallax_model::defs::{ClockSource, Def};
    use parallax_model::event::{Event, EventKind};
    use parallax_model::experiment::{self, EventWriter};
    use parallax_model::region::RegionKind;
    let dir = std::env::temp_dir().join(format!(
        "parallax-patterns-rma-{}-{together_ms}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let put = |target| EventKind::Put {
        target,
        bytes: 1 << 20,
        addr: 64,
    };
    let mut traces: Vec<Vec<(f64, EventKind)>> = vec![
        vec![
            (0.0, EventKind::Enter { region: 2 }),
            (60.0, EventKind::Leave { region: 2 }),
        ],
        vec![],
        vec![],
    ];
    for i in 0..5 {
        let t = 2.0 * i as f64;
        traces[1].extend([
            (t, EventKind::Enter { region: 1 }),
            (t + 0.01, put(0)),
            (t + 1.0, EventKind::Leave { region: 1 }),
        ]);
    }
    for i in 0..5 {
        let t = 20.0 + 6.0 * i as f64;
        for r in [1, 2] {
            traces[r].extend([
                (t, EventKind::Enter { region: 1 }),
                (t + 0.01, put(0)),
                (t + together_ms, EventKind::Leave { region: 1 }),
            ]);
        }
    }
    for (rank, evs) in traces.iter().enumerate() {
        let pdir = dir.join(experiment::rank_dir(rank as u32));
        std::fs::create_dir_all(&pdir).unwrap();
        let defs = [
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
                tick: 1 << 40,
                mono_ns: 1 << 40,
                unix_ns: 1 << 40,
            },
            Def::Region {
                id: 1,
                kind: RegionKind::Put,
                name: "shmem_putmem".into(),
                file: String::new(),
                line: 0,
            },
            Def::Region {
                id: 2,
                kind: RegionKind::User,
                name: "main".into(),
                file: String::new(),
                line: 0,
            },
            Def::Location {
                thread: 0,
                name: String::new(),
                os_tid: 0,
            },
        ];
        experiment::write_defs(&pdir, rank as u32, &defs).unwrap();
        let mut w =
            EventWriter::create(&pdir.join(experiment::events_file(0)), rank as u32, 0, 4096)
                .unwrap();
        for &(ms, kind) in evs {
            w.push(&Event {
                time: (ms * MS) as u64 + 1_000_000,
                kind,
            })
            .unwrap();
        }
        w.finish().unwrap();
    }
    let exp = Experiment::open(&dir).unwrap();
    let cfg = Config::default();
    let r = bottleneck::analyze(&exp, &cfg, Executor::Sequential).unwrap();
    assert_eq!(
        r,
        bottleneck::analyze(&exp, &cfg, Executor::Threads(2)).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
    only(&r, Pattern::CompetingRma)
        .into_iter()
        .cloned()
        .collect()
}
