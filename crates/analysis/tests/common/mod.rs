//! What the compensation tests share: simulated programs written as
//! experiments, compensated, and compared event by event.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use parallax_analysis::compensate::{self, Options};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::Experiment;
use parallax_testkit::synth::{self, Machine, Op, Program, Trace};

pub const ALPHA: [f64; 3] = [41.0, 37.0, 63.0];

pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("parallax-comp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Events of every location of an experiment, with times in ns.
pub fn read(dir: &Path) -> Trace {
    let exp = Experiment::open(dir).unwrap();
    let mut out = Vec::new();
    for p in &exp.processes {
        for l in p.locations.values() {
            let (evs, err) = p.events(l.thread).unwrap().read_all();
            assert!(err.is_none(), "{err:?}");
            out.push(
                evs.into_iter()
                    .map(|mut e| {
                        e.time = p.clock.ns(e.time).round() as u64;
                        e
                    })
                    .collect(),
            );
        }
    }
    out
}

/// Simulates `p` with and without probes, compensates the measurement and
/// returns (truth, measured, compensated) and the summary.
pub fn run(name: &str, p: &Program, exec: Executor) -> (Trace, Trace, Trace, compensate::Summary) {
    let truth = synth::simulate(p, &Machine::with_alpha(0.0, 0.0, 0.0));
    let measured = synth::simulate(p, &Machine::with_alpha(ALPHA[0], ALPHA[1], ALPHA[2]));
    let (mdir, cdir, s) = compensated(name, p, &measured, &[], exec);
    (truth, read(&mdir), read(&cdir), s)
}

/// Writes `trace`, a measured run of `p`, as an experiment `measured`
/// under a fresh directory `name` (calibrated at [`ALPHA`], each process
/// recording `properties`): the directory and the experiment.
pub fn written(
    name: &str,
    p: &Program,
    trace: &Trace,
    properties: &[(&str, &str)],
) -> (PathBuf, Experiment) {
    let dir = tmp(name);
    let mdir = dir.join("measured");
    std::fs::create_dir_all(&mdir).unwrap();
    synth::write_with(&mdir, p, trace, ALPHA, properties).unwrap();
    let exp = Experiment::open(&mdir).unwrap();
    (dir, exp)
}

/// Writes `trace` as [`written`] does and compensates it with `exec`: the
/// measured and the compensated experiments' directories, and the summary.
pub fn compensated(
    name: &str,
    p: &Program,
    trace: &Trace,
    properties: &[(&str, &str)],
    exec: Executor,
) -> (PathBuf, PathBuf, compensate::Summary) {
    let (dir, exp) = written(name, p, trace, properties);
    let mdir = dir.join("measured");
    let cdir = dir.join("compensated");
    let s = compensate::compensate(&exp, &cdir, &Options::default(), exec).unwrap();
    (mdir, cdir, s)
}

/// The time of a trace's last event, ns.
pub fn end(t: &Trace) -> f64 {
    t.iter().flatten().map(|e| e.time).max().unwrap() as f64
}

/// Largest difference between two traces' event times, in ns, and where
/// it is, after checking that they have the same events.
pub fn max_error(a: &Trace, b: &Trace) -> (f64, String) {
    assert_eq!(a.len(), b.len());
    let mut worst = (0.0f64, String::new());
    for (l, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.len(), y.len());
        for (i, (e, f)) in x.iter().zip(y).enumerate() {
            assert_eq!(e.kind.name(), f.kind.name());
            let d = (e.time as f64 - f.time as f64).abs();
            if d > worst.0 {
                worst = (d, format!("location {l} event {i} {}", e.kind.name()));
            }
        }
    }
    worst
}

/// Work between probes: `k` small regions of `d` ns.
pub fn probes(ops: &mut Vec<Op>, k: usize, d: f64) {
    for _ in 0..k {
        ops.push(Op::Enter(1));
        ops.push(Op::Compute(d));
        ops.push(Op::Leave);
    }
}
