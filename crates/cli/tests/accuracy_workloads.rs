//! The C and MPI programs of the accuracy suite (workloads/c/livermore,
//! workloads/mpi/accuracy.c), built with the workloads' Makefile and
//! measured by `parallax run` through the interposition library: every
//! level computes the same checksum, and the trace holds exactly the
//! probes of its level and the MPI operations of each kernel.
//!
//! The MPI test is skipped (with a message) where Open MPI is not
//! installed; scripts/setup.sh installs it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use parallax_model::event::{CollectiveOp, EventKind};
use parallax_model::experiment::Process;
use parallax_model::region::RegionKind;
use serde_json::Value;

/// Builds `target` of workloads/Makefile into `dir`; returns the program.
fn make(target: &str, dir: &Path) -> PathBuf {
    let o = Command::new("make")
        .arg("-C")
        .arg(workloads())
        .arg(format!("O={}", dir.display()))
        .arg(target)
        .output()
        .expect("run make");
    assert!(o.status.success(), "make {target}: {}", stderr(&o));
    dir.join(target)
}

fn lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// For every visit of a region called `kernel...`/`lfk..` (by `is_kernel`)
/// on the location's stream: its name and the events inside it, its own
/// enter and leave included, flushes not.
fn visits(
    p: &Process,
    events: &[parallax_model::event::Event],
    is_kernel: impl Fn(&str) -> bool,
) -> Vec<(String, BTreeMap<&'static str, u64>)> {
    let mut out = Vec::new();
    let mut open: Option<(String, BTreeMap<&'static str, u64>)> = None;
    for e in events {
        if matches!(e.kind, EventKind::FlushBegin | EventKind::FlushEnd) {
            continue;
        }
        if let EventKind::Enter { region } = e.kind {
            if is_kernel(&p.region_name(region)) {
                assert!(open.is_none(), "kernel regions do not nest");
                open = Some((p.region_name(region), BTreeMap::new()));
            }
        }
        if let Some((_, t)) = open.as_mut() {
            *t.entry("events").or_default() += 1;
            if let EventKind::Enter { region } = e.kind {
                if p.regions[&region].kind == RegionKind::Loop
                    && p.region_name(region).contains("body")
                {
                    *t.entry("bodies").or_default() += 1;
                }
            }
        }
        if let EventKind::Leave { region } = e.kind {
            if is_kernel(&p.region_name(region)) {
                out.push(open.take().expect("a kernel region left before entered"));
            }
        }
    }
    assert!(open.is_none(), "a kernel region was left open");
    out
}

#[test]
fn livermore_in_c_records_exactly_the_probes_of_each_level() {
    let d = tmp("acc-lfk");
    let lfk = make("lfk", &d);
    let out = d.join("exp");
    let o = parallax()
        .args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&out)
        .arg("--")
        .arg(&lfk)
        .args([
            "--scale", "test", "--level", "all", "--reps", "1", "--warmup", "0",
        ])
        // Small buffers, so that some flushes happen inside kernels.
        .env("PARALLAX_BUFFER", "16k")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = lines(&o);
    assert_eq!(lines.len(), 3 * 24);

    let exp = open(&out);
    assert_eq!(exp.processes.len(), 1);
    let p = &exp.processes[0];
    let streams = events(p);
    assert_eq!(streams.len(), 1, "one thread");
    let evs = streams.values().next().unwrap();
    let visits = visits(p, evs, |n| n.starts_with("lfk") && !n.contains(' '));
    // Level none makes no visit; raw and full one each.
    assert_eq!(visits.len(), 2 * 24);

    for (k, runs) in lines.chunks(3).enumerate() {
        let name = format!("lfk{:02}", k + 1);
        let levels: Vec<_> = runs.iter().map(|r| r["level"].as_str().unwrap()).collect();
        assert_eq!(levels, ["none", "raw", "full"]);
        for r in runs {
            assert_eq!(r["kernel"], name.as_str());
            assert_eq!(r["checksum_bits"], runs[0]["checksum_bits"], "{name}");
        }
        let iterations = runs[0]["iterations"].as_u64().unwrap();
        assert!(iterations > 0);
        let (raw, full) = (&visits[2 * k], &visits[2 * k + 1]);
        assert_eq!((&raw.0, &full.0), (&name, &name));
        assert_eq!(raw.1["events"], 2, "{name} raw");
        assert_eq!(raw.1.get("bodies"), None, "{name} raw");
        assert_eq!(full.1["events"], 2 + 2 * iterations, "{name} full");
        assert_eq!(full.1["bodies"], iterations, "{name} full");
    }
    assert!(
        evs.iter().any(|e| e.kind == EventKind::FlushBegin),
        "expected flushes with a 16k buffer"
    );
}

/// Environment for Open MPI as root, with every rank on two cores.
fn mpi_env(cmd: &mut Command) -> &mut Command {
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
}

/// MPI operations and bodies of one rank.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    barriers: u64,
    allreduces: u64,
    reduces: u64,
    sends: u64,
    recvs: u64,
    bodies: u64,
    kernel_visits: u64,
}

fn counts(p: &Process) -> Counts {
    let mut c = Counts::default();
    for evs in events(p).values() {
        for e in evs {
            match e.kind {
                EventKind::CollectiveEnd { op, .. } => match op {
                    CollectiveOp::Barrier => c.barriers += 1,
                    CollectiveOp::Allreduce => c.allreduces += 1,
                    CollectiveOp::Reduce => c.reduces += 1,
                    other => panic!("unexpected collective {other:?}"),
                },
                EventKind::Send { .. } => c.sends += 1,
                EventKind::Recv { .. } => c.recvs += 1,
                EventKind::Enter { region } => {
                    let r = &p.regions[&region];
                    if r.kind == RegionKind::Loop {
                        c.bodies += 1;
                    } else if r.name.starts_with("kernel:") {
                        c.kernel_visits += 1;
                    }
                }
                _ => {}
            }
        }
    }
    c
}

#[test]
fn mpi_accuracy_kernels_record_every_collective_message_and_body() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    const NP: u64 = 3;
    let d = tmp("acc-mpi");
    let exe = make("accuracy", &d);
    let args = ["--scale", "test", "--reps", "1", "--warmup", "0"];
    let np = NP.to_string();

    // Raw: no interposition library.
    let mut cmd = Command::new("mpirun");
    cmd.args(["-np", &np])
        .arg(&exe)
        .args(args)
        .args(["--level", "raw"]);
    let o = mpi_env(&mut cmd).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let raw = lines(&o);

    // Full: under `parallax run`, the launcher inside.
    preload();
    let out = d.join("exp");
    let mut cmd = parallax();
    cmd.args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&out)
        .args(["--", "mpirun", "-np", &np])
        .arg(&exe)
        .args(args)
        .args(["--level", "full"]);
    let o = mpi_env(&mut cmd).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let full = lines(&o);

    let names = ["barrier", "forkjoin", "pipeline", "reduce"];
    assert_eq!(raw.len(), names.len());
    assert_eq!(full.len(), names.len());
    let mut size = BTreeMap::new();
    for ((r, f), name) in raw.iter().zip(&full).zip(names) {
        assert_eq!(
            (r["kernel"].as_str(), f["kernel"].as_str()),
            (Some(name), Some(name))
        );
        assert_eq!(
            (r["level"].as_str(), f["level"].as_str()),
            (Some("raw"), Some("full"))
        );
        assert_eq!(r["ranks"], NP);
        assert_eq!(r["checksum"], f["checksum"], "{name}");
        assert_eq!(r["bodies"], f["bodies"], "{name}");
        assert!(f["seconds"].as_f64().unwrap() > 0.0);
        size.insert(
            name,
            (r["n"].as_u64().unwrap(), r["passes"].as_u64().unwrap()),
        );
    }

    let exp = open(&out);
    assert_eq!(exp.processes.len(), NP as usize);
    let mut total_bodies = 0;
    for p in &exp.processes {
        assert_balanced(p);
        let r = p.rank as u64;
        let (bn, bp) = size["barrier"];
        let (fn_, fp) = size["forkjoin"];
        let (pn, pp) = size["pipeline"];
        let (rn, rp) = size["reduce"];
        let c = counts(p);
        total_bodies += c.bodies;
        let want = Counts {
            // Two around each kernel, and the phases of `barrier`.
            barriers: 2 * 4 + bp,
            allreduces: fp,
            // One checksum per kernel, and the sweeps of `reduce`.
            reduces: 4 + rp,
            sends: if r + 1 < NP { pp } else { 0 },
            recvs: if r > 0 { pp } else { 0 },
            bodies: bn * bp
                + (r + 1) * fn_ * fp
                + if r == 0 { 4 * pn * pp } else { pn * pp }
                + rn * rp,
            kernel_visits: if r == 0 { 4 } else { 0 },
        };
        assert_eq!(c, want, "rank {r}");
    }
    let bodies: u64 = full.iter().map(|f| f["bodies"].as_u64().unwrap()).sum();
    assert_eq!(total_bodies, bodies);

    // On rank 0 each kernel's region opens right after the first barrier
    // and closes right after the second.
    let p = exp.processes.iter().find(|p| p.rank == 0).unwrap();
    let streams = events(p);
    let evs = streams.values().next().unwrap();
    let kind_of = |region| p.regions[&region].kind;
    let mut last_left = None;
    let mut checked = 0;
    for e in evs {
        match e.kind {
            EventKind::Enter { region } | EventKind::Leave { region }
                if p.region_name(region).starts_with("kernel:") =>
            {
                assert_eq!(last_left, Some(RegionKind::Barrier), "{e:?}");
                checked += 1;
            }
            EventKind::Leave { region } => last_left = Some(kind_of(region)),
            EventKind::Enter { .. } => last_left = None,
            _ => {}
        }
    }
    assert_eq!(checked, 2 * 4);
    let per_kernel = visits(p, evs, |n| n.starts_with("kernel:"));
    let visited: Vec<_> = per_kernel.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(visited, names.map(|n| format!("kernel:{n}")));
}
