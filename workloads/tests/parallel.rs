//! The parallel kernels compute the same checksum at both levels and in
//! every run, and the `parallel` runner under `PARALLAX_MODE=trace`
//! records exactly the events each level promises: at `raw` the kernel's
//! region and nothing else, at `full` every thread, lock, barrier wait,
//! semaphore operation, advance, await and loop body.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use parallax_model::event::{CollectiveOp, EventKind};
use parallax_model::experiment::Experiment;
use parallax_model::region::RegionKind;
use parallax_workloads::parallel::{Expected, Level, Run, Scale, DOACROSS_STEPS, KERNELS};
use serde_json::Value;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("parallax-par-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn checksums_agree_across_levels_and_runs() {
    // Measurement off: the `Full` primitives and probes are present but
    // record nothing; the interleavings differ from run to run.
    for threads in 2..=4 {
        for k in &KERNELS {
            let sums: Vec<u64> = [Level::Raw, Level::Full, Level::Raw, Level::Full]
                .into_iter()
                .map(|level| {
                    let run = Run {
                        level,
                        threads,
                        size: k.size(Scale::Test),
                        distance: 2,
                        steps: [4, 12, 4],
                    };
                    k.run(&run).checksum
                })
                .collect();
            assert!(
                sums.iter().all(|&s| s == sums[0]),
                "{} on {threads} threads: {sums:?}",
                k.name
            );
        }
    }
}

/// Events inside one visit of a kernel's region, all threads together.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    /// All events but flushes, the region's own enter and leave included.
    events: u64,
    bodies: u64,
    creates: u64,
    begins: u64,
    ends: u64,
    joins: u64,
    lock_requests: u64,
    locks: u64,
    lock_releases: u64,
    barrier_waits: u64,
    advances: u64,
    awaits: u64,
    sem_posts: u64,
    sem_acquisitions: u64,
    iterations: u64,
    /// Awaits without an advance of the same variable and index before
    /// them (in time), and pairs recorded twice.
    unpaired: u64,
}

fn run_traced(dir: &PathBuf, threads: usize, distance: usize) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_parallel"))
        .args(["--scale", "test", "--level", "raw,full", "--reps", "1"])
        // Warm-up runs leave no visit of the kernel's region.
        .args(["--warmup", "1", "--threads", &threads.to_string()])
        .args(["--distance", &distance.to_string()])
        .env("PARALLAX_MODE", "trace")
        .env("PARALLAX_OUT", dir)
        .env("PARALLAX_BUFFER", "16k")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "runner failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The visits of every kernel region, in order, with what happened inside
/// each on any thread (by time: the threads are spawned and joined inside
/// the region).
fn visits(exp: &Experiment) -> Vec<(String, Tally)> {
    assert_eq!(exp.processes.len(), 1);
    let p = &exp.processes[0];
    let streams: BTreeMap<u32, Vec<_>> = p
        .locations
        .values()
        .filter(|l| l.events.is_some())
        .map(|l| {
            let (events, err) = p.events(l.thread).unwrap().read_all();
            assert!(err.is_none(), "{err:?}");
            (l.thread, events)
        })
        .collect();
    // The kernel regions are entered and left on the first thread.
    let main = streams.values().next().unwrap();
    // Every await completes after the advance of its (variable, index)
    // in the same kernel run (variables are addresses, reused from one
    // run to the next).
    let mut advanced: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
    for events in streams.values() {
        for e in events {
            if let EventKind::Advance { var, index } = e.kind {
                advanced.entry((var, index)).or_default().push(e.time);
            }
        }
    }
    let mut awaited = std::collections::BTreeSet::new();
    let mut windows = Vec::new();
    let mut open = None;
    for e in main {
        match e.kind {
            EventKind::Enter { region } if p.region_name(region).starts_with("kernel:") => {
                assert!(open.is_none(), "kernel regions do not nest");
                open = Some((p.region_name(region), e.time));
            }
            EventKind::Leave { region } if p.region_name(region).starts_with("kernel:") => {
                let (name, t0) = open.take().unwrap();
                windows.push((name, t0, e.time, Tally::default()));
            }
            _ => {}
        }
    }
    assert!(open.is_none());
    for events in streams.values() {
        for e in events {
            if matches!(e.kind, EventKind::FlushBegin | EventKind::FlushEnd) {
                continue;
            }
            let w = windows
                .iter_mut()
                .find(|w| w.1 <= e.time && e.time <= w.2)
                .unwrap_or_else(|| panic!("event outside every kernel: {e:?}"));
            let t = &mut w.3;
            t.events += 1;
            match e.kind {
                EventKind::Enter { region } if p.regions[&region].kind == RegionKind::Loop => {
                    t.bodies += 1
                }
                EventKind::ThreadCreate { .. } => t.creates += 1,
                EventKind::ThreadBegin { .. } => t.begins += 1,
                EventKind::ThreadEnd { .. } => t.ends += 1,
                EventKind::ThreadJoin { .. } => t.joins += 1,
                EventKind::LockRequest { .. } => t.lock_requests += 1,
                EventKind::LockAcquired { .. } => t.locks += 1,
                EventKind::LockRelease { .. } => t.lock_releases += 1,
                EventKind::CollectiveEnd {
                    op: CollectiveOp::Barrier,
                    ..
                } => t.barrier_waits += 1,
                EventKind::Advance { .. } => t.advances += 1,
                EventKind::Iteration { .. } => t.iterations += 1,
                EventKind::AwaitDone { var, index } => {
                    t.awaits += 1;
                    let start = w.1;
                    let before = advanced.get(&(var, index)).is_some_and(|ts| {
                        ts.iter().filter(|&&a| start <= a && a <= e.time).count() == 1
                    });
                    if !before || !awaited.insert((start, var, index)) {
                        t.unpaired += 1;
                    }
                }
                EventKind::SemPost { .. } => t.sem_posts += 1,
                EventKind::SemAcquired { .. } => t.sem_acquisitions += 1,
                _ => {}
            }
        }
    }
    windows.into_iter().map(|(n, _, _, t)| (n, t)).collect()
}

/// What a `full` visit must hold.
fn tally_of(x: &Expected) -> Tally {
    // Every measured operation is a region: enter, leave and its events.
    let events = 2 // the kernel's region
        + 2 * x.bodies
        + x.threads * (3 + 2 + 3) // create (region and event), begin, end, join (region and event)
        + x.locks * (4 + 3) // lock region, request, acquired; unlock region, release
        + x.barrier_waits * 4 // region, collective begin and end
        + x.advances * 3
        + x.awaits * 3
        + x.sem_posts * 3
        + x.sem_acquisitions * 3
        + x.iterations; // a bare event
    Tally {
        events,
        bodies: x.bodies,
        creates: x.threads,
        begins: x.threads,
        ends: x.threads,
        joins: x.threads,
        lock_requests: x.locks,
        locks: x.locks,
        lock_releases: x.locks,
        barrier_waits: x.barrier_waits,
        advances: x.advances,
        awaits: x.awaits,
        sem_posts: x.sem_posts,
        sem_acquisitions: x.sem_acquisitions,
        iterations: x.iterations,
        unpaired: 0,
    }
}

#[test]
fn event_counts_are_exact_per_level() {
    for (threads, distance) in [(2, 1), (3, 2), (4, 1)] {
        let dir = tmp(&format!("trace-{threads}"));
        let lines = run_traced(&dir, threads, distance);
        let exp = Experiment::open(&dir).unwrap();
        assert!(exp.warnings().is_empty(), "{:?}", exp.warnings());
        let visits = visits(&exp);
        assert_eq!(lines.len(), 2 * KERNELS.len());
        assert_eq!(visits.len(), lines.len());

        for (i, k) in KERNELS.iter().enumerate() {
            let (raw, full) = (&lines[2 * i], &lines[2 * i + 1]);
            assert_eq!(
                (raw["kernel"].as_str(), full["kernel"].as_str()),
                (Some(k.name), Some(k.name))
            );
            assert_eq!(
                (&raw["level"], &full["level"]),
                (&Value::from("raw"), &Value::from("full"))
            );
            assert_eq!(raw["threads"], threads);
            assert_eq!(raw["checksum"], full["checksum"], "{}: checksums", k.name);
            assert!(raw["seconds"].as_f64().unwrap() > 0.0);

            // Raw: the kernel's region alone.
            let (name, tally) = &visits[2 * i];
            assert_eq!(name, k.region());
            assert_eq!(
                *tally,
                Tally {
                    events: 2,
                    ..Tally::default()
                },
                "{} raw on {threads} threads",
                k.name
            );

            // Full: everything, exactly.
            let run = Run {
                level: Level::Full,
                threads,
                size: k.size(Scale::Test),
                distance,
                steps: DOACROSS_STEPS,
            };
            let expected = k.expected(&run);
            assert_eq!(full["bodies"], expected.bodies);
            let (name, tally) = &visits[2 * i + 1];
            assert_eq!(name, k.region());
            assert_eq!(
                *tally,
                tally_of(&expected),
                "{} full on {threads} threads, distance {distance}",
                k.name
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
