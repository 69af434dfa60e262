//! The MPI executor (`mpirun -np N parallax ... --executor mpi`) against
//! the sequential one: byte-identical JSON from analyze, report and
//! compensate, and identical compensated experiments, for 1 to 8 analysis
//! ranks and experiments of 2 to 64 locations; and a 64-rank MPI job
//! measured by `parallax run` and analyzed by 4 ranks.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parallax_testkit::synth::{self, Machine, Op, Program};

use common::{compile, message_times, open, parallax, preload, stderr, tmp};

fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &ranks.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}

fn ok(o: Output) -> Vec<u8> {
    assert!(o.status.success(), "{}", stderr(&o));
    o.stdout
}

/// `parallax ARGS --executor seq`.
fn seq(args: &[&str]) -> Vec<u8> {
    ok(parallax()
        .args(args)
        .args(["--executor", "seq"])
        .output()
        .unwrap())
}

/// `mpirun -np RANKS parallax ARGS --executor mpi`.
fn mpi(ranks: usize, args: &[&str]) -> Vec<u8> {
    ok(mpirun(ranks)
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .args(args)
        .args(["--executor", "mpi"])
        .output()
        .unwrap())
}

/// Ranks in a ring: compute (one rank `slow` times longer), send to the
/// next, receive from the previous; rank 0 collects a message from every
/// rank every 4th step; an all-reduce every 3rd step and a barrier every
/// 5th.
fn ring(n: u32, steps: u32, slow: f64) -> Program {
    let mut locations = Vec::new();
    for r in 0..n {
        let mut ops = vec![Op::Enter(0)];
        for s in 0..steps {
            let work = 20_000.0 + 1_000.0 * ((r * 7 + s * 3) % 5) as f64;
            ops.push(Op::Compute(if r == n / 2 { work * slow } else { work }));
            ops.push(Op::Send {
                to: (r + 1) % n,
                tag: 1,
                bytes: 64,
            });
            ops.push(Op::Recv {
                from: (r + n - 1) % n,
                tag: 1,
            });
            if s % 4 == 3 {
                if r == 0 {
                    for from in 1..n {
                        ops.push(Op::Recv { from, tag: 2 });
                    }
                } else {
                    ops.push(Op::Send {
                        to: 0,
                        tag: 2,
                        bytes: 8,
                    });
                }
            }
            if s % 3 == 2 {
                ops.push(Op::Allreduce);
            }
            if s % 5 == 4 {
                ops.push(Op::Barrier);
            }
        }
        ops.push(Op::Leave);
        locations.push(ops);
    }
    Program {
        regions: vec!["main".into()],
        locations,
        threads: false,
    }
}

/// Threads of one process: thread 0 starts the others and joins them;
/// each worker takes a shared lock, posts a semaphore that thread 0
/// waits on, and waits for its predecessor's progress (advance/await).
fn threads(n: u32, steps: u64) -> Program {
    let mut main = vec![Op::Enter(0)];
    main.extend((1..n).map(Op::Spawn));
    for _ in 0..steps * (n as u64 - 1) {
        main.push(Op::Wait(9));
        main.push(Op::Compute(3_000.0));
    }
    main.extend((1..n).map(Op::Join));
    main.push(Op::Leave);
    let mut locations = vec![main];
    for w in 1..n {
        let mut ops = vec![Op::Enter(1)];
        for s in 0..steps {
            ops.push(Op::Compute(10_000.0 + 2_000.0 * w as f64));
            if w > 1 {
                ops.push(Op::Await(w as u64 - 1, s + 1));
            }
            ops.push(Op::Lock(7));
            ops.push(Op::Compute(1_500.0));
            ops.push(Op::Unlock(7));
            ops.push(Op::Advance(w as u64, s + 1));
            ops.push(Op::Post(9));
        }
        ops.push(Op::Leave);
        locations.push(ops);
    }
    Program {
        regions: vec!["main".into(), "worker".into()],
        locations,
        threads: true,
    }
}

/// Ranks 1 and 2 put to rank 0: rank 1 five times alone (1 ms each),
/// then both five times at once (2 ms each); rank 0 waits for them at a
/// barrier.
fn puts() -> Program {
    let put = |ns| Op::Put { target: 0, ns };
    let mut one: Vec<Op> = (0..5).map(|_| put(1e6)).collect();
    let mut two = vec![Op::Compute(5e6)];
    one.extend((0..5).map(|_| put(2e6)));
    two.extend((0..5).map(|_| put(2e6)));
    one.push(Op::Barrier);
    two.push(Op::Barrier);
    Program {
        regions: vec![],
        locations: vec![vec![Op::Compute(1e6), Op::Barrier], one, two],
        threads: false,
    }
}

fn experiment(dir: &Path, name: &str, p: &Program) -> PathBuf {
    let m = Machine::with_alpha(40.0, 40.0, 60.0);
    let exp = dir.join(name);
    std::fs::create_dir_all(&exp).unwrap();
    synth::write(&exp, p, &synth::simulate(p, &m), m.alpha).unwrap();
    exp
}

/// Every file under `dir` but the manifest (which records the command
/// line), by path relative to it.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.file_name().is_some_and(|n| n != "manifest.json") {
                out.insert(
                    p.strip_prefix(root).unwrap().into(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut m = BTreeMap::new();
    walk(dir, dir, &mut m);
    m
}

/// analyze, report and compensate of `exp` on `ranks` analysis ranks
/// give what they give sequentially (compensate: for the ranks in
/// `comp_ranks`).
fn check_identical(exp: &Path, ranks: &[usize], comp_ranks: &[usize]) {
    let e = exp.to_str().unwrap();
    let analyze = seq(&["analyze", e, "--json"]);
    let report = seq(&["report", e, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&analyze).unwrap();
    // The waits the slow location causes are charged to it.
    let delays = v["delays"].as_array().unwrap();
    assert!(
        delays.iter().any(|d| d["direct_s"].as_f64().unwrap() > 0.0),
        "{e}: {v}"
    );
    for &n in ranks {
        assert!(
            analyze == mpi(n, &["analyze", e, "--json"]),
            "{e}: analyze on {n} ranks"
        );
        assert!(
            report == mpi(n, &["report", e, "--json"]),
            "{e}: report on {n} ranks"
        );
    }
    let out = exp.with_extension("seq");
    let o = out.to_str().unwrap();
    let comp = seq(&["compensate", e, "--out", o, "--json"]);
    let want = files(&out);
    assert!(want
        .keys()
        .any(|p| p.extension().is_some_and(|x| x == "pxe")));
    for &n in comp_ranks {
        let out_n = exp.with_extension(format!("mpi{n}"));
        let got = mpi(
            n,
            &["compensate", e, "--out", out_n.to_str().unwrap(), "--json"],
        );
        // The summary names its output directory.
        let got = String::from_utf8(got)
            .unwrap()
            .replace(out_n.to_str().unwrap(), o);
        assert_eq!(
            String::from_utf8_lossy(&comp),
            got,
            "{e}: compensate on {n} ranks"
        );
        let have = files(&out_n);
        assert_eq!(
            want.keys().collect::<Vec<_>>(),
            have.keys().collect::<Vec<_>>()
        );
        for (p, bytes) in &want {
            assert!(
                *bytes == have[p],
                "{e}: {} differs on {n} ranks",
                p.display()
            );
        }
    }
}

#[test]
fn mpi_executor_matches_the_sequential_one() {
    let d = tmp("mpi-exec");
    // Two ranks: every dependency crosses between analysis ranks.
    let two = experiment(&d, "ring2", &ring(2, 40, 1.5));
    check_identical(&two, &[1, 2, 3, 4, 5, 6, 7, 8], &[2, 3]);
    // Threads of one process split over ranks: lock hand-offs,
    // semaphores, advance/await and joins cross them.
    let thr = experiment(&d, "threads7", &threads(7, 12));
    check_identical(&thr, &[1, 2, 3, 4, 5, 6, 7, 8], &[2, 5]);
    // Competing puts: requests and replies cross analysis ranks.
    let rma = experiment(&d, "puts", &puts());
    let v: serde_json::Value =
        serde_json::from_slice(&seq(&["analyze", rma.to_str().unwrap(), "--json"])).unwrap();
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["pattern"] == "competing_rma" && f["rank"] == 1),
        "{v:#}"
    );
    check_identical(&rma, &[1, 2, 3], &[2, 3]);
    // Many locations, uneven sizes (rank 0 collects more).
    let wide = experiment(&d, "ring64", &ring(64, 12, 2.0));
    check_identical(&wide, &[2, 3, 8], &[4, 8]);
}

#[test]
fn a_64_rank_job_measured_and_analyzed_on_4_ranks() {
    let d = tmp("mpi-64");
    let exe = d.join("stencil");
    compile(
        "mpicc",
        &["-O1", "mpi/stencil.c", "-o", exe.to_str().unwrap(), "-lm"],
    );
    preload();
    let exp = d.join("exp");
    let o = parallax()
        .args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&exp)
        .args(["--", "mpirun", "--oversubscribe", "-np", "64"])
        .arg(&exe)
        .args(["64", "20"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Each rank wrote its own files.
    let e = open(&exp);
    assert_eq!(e.processes.len(), 64);
    let ranks: Vec<u32> = e.processes.iter().map(|p| p.rank).collect();
    assert_eq!(ranks, (0..64).collect::<Vec<u32>>());
    // After clock alignment no message is received before it was sent:
    // the n-th send on a channel pairs with the n-th receive on it.
    let mut pairs = 0;
    for (k, (ss, rs)) in message_times(&e) {
        assert_eq!(ss.len(), rs.len(), "channel {k:?}");
        for (s, r) in ss.iter().zip(&rs) {
            assert!(
                r + 1.0 >= *s,
                "channel {k:?}: received at {r} ns, sent at {s} ns"
            );
            pairs += 1;
        }
    }
    // 20 iterations, a halo message each way between the 63 neighbours.
    assert_eq!(pairs, 20 * 63 * 2);
    let x = exp.to_str().unwrap();
    let want = seq(&["analyze", x, "--json"]);
    assert!(
        want == mpi(4, &["analyze", x, "--json"]),
        "analyze on 4 ranks"
    );
    let v: serde_json::Value = serde_json::from_slice(&want).unwrap();
    assert!(v["events"].as_u64().unwrap() > 64 * 20 * 8, "{v}");
}
