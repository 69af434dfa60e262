//! A synthetic MPI-like experiment written with the model's offline
//! writers: `ranks` processes of one thread, each iteration a computation
//! whose length grows with rank % 4 (load imbalance), a send to the next
//! rank, a receive from the previous one, and a barrier. Ten events per
//! rank and iteration, so the size of a test or benchmark trace is chosen
//! exactly.
#![allow(dead_code)]

use std::path::Path;

use parallax_model::defs::{ClockSource, Def, Mode, ProcessInfo};
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{events_file, rank_dir, write_defs, EventWriter};
use parallax_model::region::RegionKind;

/// Events per rank and iteration.
pub const EVENTS_PER_ITERATION: u64 = 10;

/// Writes the experiment into `dir` (which must not hold one); returns the
/// number of events written.
pub fn mpi_like(dir: &Path, ranks: u32, iterations: u64) -> u64 {
    let c = 20_000u64; // ns of computation per unit
    let period = 4 * c + 4_000;
    let start_unix = 1_790_000_000_000_000_000u64;
    let mut total = 0;
    for r in 0..ranks {
        let pdir = dir.join(rank_dir(r));
        std::fs::create_dir_all(&pdir).unwrap();
        let end = 1_000 + iterations * period + 1_000;
        let region = |id: u32, kind: RegionKind, name: &str, line: u32| Def::Region {
            id,
            kind,
            name: name.into(),
            file: "synth.c".into(),
            line,
        };
        let defs = vec![
            Def::Process(ProcessInfo {
                rank: r,
                ranks,
                pid: 10_000 + r,
                host: format!("node{}", r / 64),
                program: "synth".into(),
                args: vec![iterations.to_string()],
                start_unix_ns: start_unix,
                mode: Mode::Trace,
                version: "synthetic".into(),
            }),
            Def::Clock {
                source: ClockSource::Monotonic,
                nominal_hz: 1e9,
            },
            Def::ClockSync {
                tick: 0,
                mono_ns: 5_000_000_000,
                unix_ns: start_unix,
            },
            Def::ClockSync {
                tick: end,
                mono_ns: 5_000_000_000 + end,
                unix_ns: start_unix + end,
            },
            region(1, RegionKind::Function, "main", 1),
            region(2, RegionKind::Function, "compute", 10),
            region(3, RegionKind::Send, "MPI_Send", 20),
            region(4, RegionKind::Recv, "MPI_Recv", 21),
            region(5, RegionKind::Barrier, "MPI_Barrier", 22),
            Def::Location {
                thread: 0,
                name: "main".into(),
                os_tid: 10_000 + r,
            },
            Def::End {
                unix_ns: start_unix + end,
            },
        ];
        write_defs(&pdir, r, &defs).unwrap();
        let mut w = EventWriter::create(&pdir.join(events_file(0)), r, 0, 64 << 10).unwrap();
        let mut push = |time: u64, kind: EventKind| {
            w.push(&Event { time, kind }).unwrap();
            total += 1;
        };
        let next = (r + 1) % ranks;
        let prev = (r + ranks - 1) % ranks;
        let comp = |rank: u32| c * (1 + (rank % 4) as u64);
        push(1_000, EventKind::Enter { region: 1 });
        for i in 0..iterations {
            let t = 1_000 + i * period;
            let sent = t + comp(r);
            push(t, EventKind::Enter { region: 2 });
            push(sent, EventKind::Leave { region: 2 });
            push(sent, EventKind::Enter { region: 3 });
            let msg = |peer| EventKind::Send {
                peer,
                tag: 7,
                comm: 0,
                bytes: 4096 + 64 * r as u64,
            };
            push(sent + 200, msg(next));
            push(sent + 1_000, EventKind::Leave { region: 3 });
            push(sent + 1_000, EventKind::Enter { region: 4 });
            let arrived = (sent + 1_000).max(t + comp(prev) + 1_500) + 200;
            push(
                arrived,
                EventKind::Recv {
                    peer: prev,
                    tag: 7,
                    comm: 0,
                    bytes: 4096 + 64 * prev as u64,
                },
            );
            push(arrived, EventKind::Leave { region: 4 });
            push(arrived, EventKind::Enter { region: 5 });
            push(t + period - 100, EventKind::Leave { region: 5 });
        }
        push(end - 500, EventKind::Leave { region: 1 });
        w.finish().unwrap();
    }
    total
}

/// One process of one thread (named `thread`, of program `program`) that
/// visits the regions `regions` (name, source file, line) one after
/// another, `reps` times, 1 µs each: an experiment whose names and source
/// places are whatever a test needs. Returns the number of events.
pub fn named_regions(
    dir: &Path,
    regions: &[(&str, &str, u32)],
    thread: &str,
    program: &str,
    reps: u64,
) -> u64 {
    let pdir = dir.join(rank_dir(0));
    std::fs::create_dir_all(&pdir).unwrap();
    let start_unix = 1_790_000_000_000_000_000u64;
    let end = 1_000 + reps * regions.len() as u64 * 1_000 + 1_000;
    let mut defs = vec![
        Def::Process(ProcessInfo {
            rank: 0,
            ranks: 1,
            pid: 4242,
            host: "node0".into(),
            program: program.into(),
            args: vec![],
            start_unix_ns: start_unix,
            mode: Mode::Trace,
            version: "synthetic".into(),
        }),
        Def::Clock {
            source: ClockSource::Monotonic,
            nominal_hz: 1e9,
        },
        Def::ClockSync {
            tick: 0,
            mono_ns: 5_000_000_000,
            unix_ns: start_unix,
        },
        Def::ClockSync {
            tick: end,
            mono_ns: 5_000_000_000 + end,
            unix_ns: start_unix + end,
        },
        Def::Location {
            thread: 0,
            name: thread.into(),
            os_tid: 4242,
        },
        Def::End {
            unix_ns: start_unix + end,
        },
    ];
    for (i, (name, file, line)) in regions.iter().enumerate() {
        defs.push(Def::Region {
            id: i as u32 + 1,
            kind: RegionKind::Function,
            name: name.to_string(),
            file: file.to_string(),
            line: *line,
        });
    }
    write_defs(&pdir, 0, &defs).unwrap();
    let mut w = EventWriter::create(&pdir.join(events_file(0)), 0, 0, 64 << 10).unwrap();
    let mut n = 0;
    let mut t = 1_000;
    for _ in 0..reps {
        for i in 0..regions.len() as u32 {
            for kind in [
                EventKind::Enter { region: i + 1 },
                EventKind::Leave { region: i + 1 },
            ] {
                w.push(&Event { time: t, kind }).unwrap();
                n += 1;
                t += 500;
            }
        }
    }
    w.finish().unwrap();
    n
}
