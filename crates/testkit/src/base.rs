//! Valid experiments to start from: small ones with every kind of
//! dependency the analyses follow (messages, collectives, locks, threads,
//! semaphores, counters), a deep recursion, and large ones written event
//! by event for measurements of memory against trace length.

use std::path::Path;

use crate::synth::{self, Machine, Op, Program};
use parallax_model::defs::{Def, Mode, Probe, ProcessInfo};
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{self, EventReader, EventWriter, Experiment};
use parallax_model::profile::CallTree;
use parallax_model::region::RegionKind;
use parallax_model::Error;
use parallax_view::profile::TreeBuilder;

/// Bytes per event block of the small experiments: small, so that their
/// files have several blocks to cut between.
pub const SMALL_BLOCKS: usize = 200;

/// Three MPI ranks passing messages around a ring, with a barrier, an
/// all-reduce and nested user regions, repeated; rank 0 also has a
/// runtime profile.
pub fn mpi(dir: &Path) -> Result<(), Error> {
    let n = 3u32;
    let mut p = Program {
        regions: vec!["main".into(), "solve".into(), "exchange".into()],
        locations: vec![Vec::new(); n as usize],
        threads: false,
    };
    for (r, ops) in p.locations.iter_mut().enumerate() {
        let r = r as u32;
        ops.push(Op::Enter(0));
        for it in 0..4u32 {
            ops.push(Op::Enter(1));
            ops.push(Op::Compute(1_000.0 * (r + 1) as f64));
            ops.push(Op::Leave);
            ops.push(Op::Enter(2));
            ops.push(Op::Send {
                to: (r + 1) % n,
                tag: it,
                bytes: 64,
            });
            ops.push(Op::Recv {
                from: (r + n - 1) % n,
                tag: it,
            });
            ops.push(Op::Leave);
            ops.push(Op::Barrier);
            ops.push(Op::Allreduce);
        }
        ops.push(Op::Leave);
    }
    let t = synth::simulate(&p, &Machine::with_alpha(30.0, 30.0, 40.0));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    synth::write(dir, &p, &t, [30.0, 30.0, 40.0])?;
    small_blocks(dir)?;
    profile_from_trace(&dir.join(experiment::rank_dir(0)))?;
    manifest(dir)
}

/// Three threads of one process: the first starts the others and joins
/// them; they take a lock, pass a semaphore and a counter along. The
/// process says it ran on one core, so that compensation counts the
/// probes' share of it.
pub fn threads(dir: &Path) -> Result<(), Error> {
    let mut p = Program {
        regions: vec!["main".into(), "work".into()],
        locations: vec![Vec::new(); 3],
        threads: true,
    };
    p.locations[0] = vec![
        Op::Enter(0),
        Op::Spawn(1),
        Op::Spawn(2),
        Op::Lock(7),
        Op::Compute(500.0),
        Op::Unlock(7),
        Op::Post(3),
        Op::Advance(5, 1),
        Op::Join(1),
        Op::Join(2),
        Op::Leave,
    ];
    for l in 1..3 {
        let mut ops = vec![Op::Enter(1)];
        for _ in 0..3 {
            ops.push(Op::Lock(7));
            ops.push(Op::Compute(300.0 * l as f64));
            ops.push(Op::Unlock(7));
        }
        if l == 1 {
            ops.push(Op::Wait(3));
        } else {
            ops.push(Op::Await(5, 1));
        }
        ops.push(Op::Leave);
        p.locations[l] = ops;
    }
    let t = synth::simulate(&p, &Machine::with_alpha(30.0, 30.0, 40.0));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    synth::write_with(dir, &p, &t, [30.0, 30.0, 40.0], &[("cpus", "1")])?;
    small_blocks(dir)?;
    manifest(dir)
}

/// One location that recurses `depth` levels into one region and back,
/// with a little time in each level, and the same again as a runtime
/// profile when `profile` is set.
pub fn deep(dir: &Path, depth: u32, profile: bool) -> Result<(), Error> {
    let pdir = dir.join(experiment::rank_dir(0));
    std::fs::create_dir_all(&pdir).map_err(|e| Error::io(&pdir, e))?;
    let mut w = EventWriter::create(&pdir.join(experiment::events_file(0)), 0, 0, 1 << 16)?;
    let mut b = TreeBuilder::new(0);
    let mut t = 1_000u64;
    for _ in 0..depth {
        w.push(&Event {
            time: t,
            kind: EventKind::Enter { region: 1 },
        })?;
        b.enter(1, t);
        t += 10;
    }
    for _ in 0..depth {
        w.push(&Event {
            time: t,
            kind: EventKind::Leave { region: 1 },
        })?;
        b.leave(t);
        t += 10;
    }
    b.seen(t);
    let mut defs = process_defs(0, t);
    defs.push(Def::Region {
        id: 1,
        kind: RegionKind::Function,
        name: "recurse".into(),
        file: "deep.c".into(),
        line: 3,
    });
    defs.push(w.finish()?.def(0));
    defs.push(Def::End {
        unix_ns: 1_700_000_000_000_000_000 + t,
    });
    experiment::write_defs(&pdir, 0, &defs)?;
    if profile {
        experiment::write_profiles(&pdir, 0, &[b.finish()])?;
    }
    manifest(dir)
}

/// `locations` threads of one process with `events` events in all, written
/// as they are made (memory does not grow with `events`): a loop of calls
/// to eight functions, each followed by taking a lock.
pub fn large(dir: &Path, events: u64, locations: u32) -> Result<(), Error> {
    let pdir = dir.join(experiment::rank_dir(0));
    std::fs::create_dir_all(&pdir).map_err(|e| Error::io(&pdir, e))?;
    let per = events / locations.max(1) as u64;
    let mut end = 0;
    let mut defs = Vec::new();
    for th in 0..locations {
        let mut w = EventWriter::create(&pdir.join(experiment::events_file(th)), 0, th, 1 << 20)?;
        let mut t = 1_000u64;
        let mut n = 0u64;
        let mut i = 0u64;
        let push = |w: &mut EventWriter, t: &mut u64, n: &mut u64, kind| {
            *t += 7 + (*t % 13);
            *n += 1;
            w.push(&Event { time: *t, kind })
        };
        while n + 8 <= per {
            let f = 2 + (i % 8) as u32;
            for kind in [
                EventKind::Enter { region: 1 },
                EventKind::Enter { region: f },
                EventKind::Leave { region: f },
                EventKind::Enter { region: 11 },
                EventKind::LockAcquired { lock: 9 },
                EventKind::Leave { region: 11 },
                EventKind::LockRelease { lock: 9 },
                EventKind::Leave { region: 1 },
            ] {
                push(&mut w, &mut t, &mut n, kind)?;
            }
            i += 1;
        }
        end = end.max(t);
        defs.push(Def::Location {
            thread: th,
            name: format!("worker-{th}"),
            os_tid: 0,
        });
        defs.push(w.finish()?.def(th));
    }
    let mut all = process_defs(0, end);
    all.push(Def::Region {
        id: 1,
        kind: RegionKind::Function,
        name: "step".into(),
        file: String::new(),
        line: 0,
    });
    for f in 2..10u32 {
        all.push(Def::Region {
            id: f,
            kind: RegionKind::Function,
            name: format!("kernel_{f}"),
            file: String::new(),
            line: 0,
        });
    }
    all.push(Def::Region {
        id: 11,
        kind: RegionKind::Lock,
        name: "pthread_mutex_lock".into(),
        file: String::new(),
        line: 0,
    });
    all.extend(defs);
    all.push(Def::End {
        unix_ns: 1_700_000_000_000_000_000 + end,
    });
    experiment::write_defs(&pdir, 0, &all)?;
    manifest(dir)
}

/// The definitions every process of these experiments starts with: who
/// it is, a clock of nanoseconds, probe costs.
fn process_defs(rank: u32, end: u64) -> Vec<Def> {
    let mut defs = vec![Def::Process(ProcessInfo {
        rank,
        ranks: 1,
        pid: 4242,
        host: "testhost".into(),
        program: "/nonexistent/testkit-program".into(),
        args: Vec::new(),
        start_unix_ns: 1_700_000_000_000_000_000,
        mode: Mode::Trace,
        version: "testkit".into(),
    })];
    defs.extend(synth::clock_defs(end));
    for probe in [Probe::Enter, Probe::Leave, Probe::Event] {
        defs.push(Def::Calibration {
            probe,
            mode: Mode::Trace,
            mean_ns: 5.0,
            sd_ns: 0.0,
            min_ns: 5.0,
            samples: 1,
            tick: 0,
        });
    }
    defs
}

/// Rewrites every event file of `dir` with blocks of [`SMALL_BLOCKS`]
/// bytes (the summaries of the definitions then no longer match the files'
/// sizes, and readers do without them).
fn small_blocks(dir: &Path) -> Result<(), Error> {
    let exp = Experiment::open(dir)?;
    for p in &exp.processes {
        for l in p.locations.values() {
            let Some(path) = &l.events else { continue };
            let (events, err) = EventReader::open(path)?.read_all();
            if let Some(e) = err {
                return Err(e);
            }
            let mut w = EventWriter::create(path, p.rank, l.thread, SMALL_BLOCKS)?;
            for e in &events {
                w.push(e)?;
            }
            w.finish()?;
        }
    }
    Ok(())
}

/// Writes the call trees of the traced locations of process directory
/// `pdir` as its runtime profile.
fn profile_from_trace(pdir: &Path) -> Result<(), Error> {
    let p = experiment::Process::open(pdir)?;
    let mut trees: Vec<CallTree> = Vec::new();
    for l in p.locations.values() {
        if l.events.is_some() {
            let (t, _, _) = parallax_view::profile::tree_from_trace(&p, l.thread)?;
            trees.push(t);
        }
    }
    experiment::write_profiles(pdir, p.rank, &trees)
}

/// A manifest like the one `parallax run` writes.
fn manifest(dir: &Path) -> Result<(), Error> {
    let path = dir.join(experiment::MANIFEST);
    std::fs::write(
        &path,
        "{\n  \"status\": \"exited\",\n  \"wall_seconds\": 0.5,\n  \"command\": [\"testkit\"]\n}\n",
    )
    .map_err(|e| Error::io(&path, e))
}
