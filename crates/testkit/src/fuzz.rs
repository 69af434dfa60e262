//! Small experiments made from arbitrary bytes, for fuzzing the analyses:
//! the bytes choose the shape (ranks or threads), the definitions (region
//! kinds, clock, probe costs, cores) and each location's events with their
//! fields and time steps, so that every input is an experiment that opens
//! and most reach the analyses' pairing and replay.

use std::path::Path;

use parallax_model::defs::{ClockSource, Def, Mode, Probe, ProcessInfo};
use parallax_model::event::{CollectiveOp, Event, EventKind};
use parallax_model::experiment::{self, EventWriter};
use parallax_model::region::RegionKind;
use parallax_model::Error;

/// Reads the input a byte at a time; zeros once it is used up.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..8 {
            v = (v << 8) | self.u8() as u64;
        }
        v
    }

    /// A small value most of the time, any value now and then.
    fn field(&mut self, small: u64) -> u64 {
        match self.u8() {
            255 => self.u64(),
            254 => u32::MAX as u64,
            b => b as u64 % small.max(1),
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Region ids of the experiments: 1..=REGIONS.
const REGIONS: u32 = 10;

/// Most events written per location.
const MAX_EVENTS: usize = 4096;

/// Writes the experiment that `data` describes into `dir` (created).
pub fn experiment_from_bytes(dir: &Path, data: &[u8]) -> Result<(), Error> {
    let mut b = Bytes(data);
    let shape = b.u8();
    let threads_mode = shape & 1 == 1;
    let locations = 1 + (shape >> 1) as usize % 4;
    let ranks: Vec<u32> = if threads_mode {
        vec![0]
    } else {
        (0..locations as u32).collect()
    };
    let per_rank = if threads_mode { locations } else { 1 };
    // Region kinds, clock, costs and cores, shared by every process.
    let kinds: Vec<RegionKind> = (0..REGIONS)
        .map(|_| RegionKind::from_u8(b.u8() % 28).unwrap_or(RegionKind::User))
        .collect();
    let hz = [1e9, 2.5e9, 1.0, 0.0, f64::NAN][b.u8() as usize % 5];
    let cost = [5.0, 0.0, 30.0, 1e6, -1.0][b.u8() as usize % 5];
    let cpus = b.u8() % 4;
    // Events, dealt to the locations.
    let mut events: Vec<Vec<Event>> = vec![Vec::new(); locations];
    let mut time = vec![1_000u64; locations];
    while !b.is_empty() && events.iter().map(Vec::len).sum::<usize>() < MAX_EVENTS * locations {
        let l = b.u8() as usize % locations;
        let step = match b.u8() {
            255 => b.u64(),
            s => s as u64 * 10,
        };
        time[l] = time[l].saturating_add(step);
        let peer = b.field(locations as u64) as u32;
        let id = b.field(4);
        let kinds_of: Vec<EventKind> = match b.u8() % 20 {
            0..=4 => vec![EventKind::Enter {
                region: 1 + b.field(REGIONS as u64) as u32,
            }],
            5..=8 => vec![EventKind::Leave { region: 0 }],
            9 => vec![EventKind::Send {
                peer,
                tag: id as u32,
                comm: WORLD,
                bytes: 8,
            }],
            10 => vec![EventKind::Recv {
                peer,
                tag: id as u32,
                comm: WORLD,
                bytes: 8,
            }],
            11 => vec![
                EventKind::CollectiveBegin,
                EventKind::CollectiveEnd {
                    op: CollectiveOp::from_u8(b.u8() % 10).unwrap_or(CollectiveOp::Barrier),
                    comm: if id == 3 { b.u64() } else { WORLD },
                    root: peer,
                    sent: 8,
                    received: 8,
                },
            ],
            12 => vec![
                EventKind::LockRequest { lock: id },
                EventKind::LockAcquired { lock: id },
            ],
            13 => vec![EventKind::LockRelease { lock: id }],
            14 => vec![match b.u8() % 4 {
                0 => EventKind::ThreadCreate { token: id },
                1 => EventKind::ThreadBegin { token: id },
                2 => EventKind::ThreadEnd { token: id },
                _ => EventKind::ThreadJoin { token: id },
            }],
            15 => vec![match b.u8() % 2 {
                0 => EventKind::SemPost { sem: id },
                _ => EventKind::SemAcquired { sem: id },
            }],
            16 => vec![match b.u8() % 2 {
                0 => EventKind::Advance {
                    var: id,
                    index: b.field(8),
                },
                _ => EventKind::AwaitDone {
                    var: id,
                    index: b.field(8),
                },
            }],
            17 => vec![match b.u8() % 4 {
                0 => EventKind::IsendBegin {
                    peer,
                    tag: 0,
                    comm: WORLD,
                    bytes: 8,
                    request: id,
                },
                1 => EventKind::IsendComplete { request: id },
                2 => EventKind::IrecvBegin { request: id },
                _ => EventKind::IrecvComplete {
                    peer,
                    tag: 0,
                    comm: WORLD,
                    bytes: 8,
                    request: id,
                },
            }],
            18 => vec![match b.u8() % 4 {
                0 => EventKind::Fork {
                    team: id,
                    size: b.field(8) as u32,
                },
                1 => EventKind::Join { team: id },
                2 => EventKind::Iteration {
                    loop_id: id,
                    index: b.field(16),
                },
                _ => EventKind::Put {
                    target: peer,
                    bytes: 64,
                    addr: id,
                },
            }],
            _ => vec![EventKind::FlushBegin, EventKind::FlushEnd],
        };
        for kind in kinds_of {
            events[l].push(Event {
                time: time[l],
                kind,
            });
        }
    }
    for (ri, &rank) in ranks.iter().enumerate() {
        let pdir = dir.join(experiment::rank_dir(rank));
        std::fs::create_dir_all(&pdir).map_err(|e| Error::io(&pdir, e))?;
        let mut defs = vec![
            Def::Process(ProcessInfo {
                rank,
                ranks: ranks.len() as u32,
                pid: 1,
                host: "fuzz".into(),
                program: "fuzz".into(),
                args: Vec::new(),
                start_unix_ns: 0,
                mode: Mode::Trace,
                version: "fuzz".into(),
            }),
            Def::Clock {
                source: ClockSource::Tsc,
                nominal_hz: hz,
            },
            Def::Property {
                key: "cpus".into(),
                value: cpus.to_string(),
            },
            Def::Group {
                id: WORLD,
                members: (0..ranks.len() as u32).collect(),
            },
        ];
        for probe in [Probe::Enter, Probe::Leave, Probe::Event] {
            defs.push(Def::Calibration {
                probe,
                mode: Mode::Trace,
                mean_ns: cost,
                sd_ns: 0.0,
                min_ns: cost,
                samples: 1,
                tick: 0,
            });
        }
        for (k, kind) in kinds.iter().enumerate() {
            defs.push(Def::Region {
                id: k as u32 + 1,
                kind: *kind,
                name: format!("r{k}"),
                file: String::new(),
                line: 0,
            });
        }
        for th in 0..per_rank {
            let l = ri * per_rank + th;
            defs.push(Def::Location {
                thread: th as u32,
                name: String::new(),
                os_tid: 0,
            });
            let path = pdir.join(experiment::events_file(th as u32));
            let mut w = EventWriter::create(&path, rank, th as u32, 256)?;
            for e in &events[l] {
                w.push(e)?;
            }
            defs.push(w.finish()?.def(th as u32));
            let end = events[l].last().map_or(1_000, |e| e.time);
            defs.push(Def::ClockSync {
                tick: 0,
                mono_ns: 0,
                unix_ns: 0,
            });
            defs.push(Def::ClockSync {
                tick: end,
                mono_ns: end,
                unix_ns: end,
            });
        }
        defs.push(Def::End { unix_ns: 1 });
        experiment::write_defs(&pdir, rank, &defs)?;
    }
    Ok(())
}

/// Communicator id of all ranks (as in `crate::synth`).
pub const WORLD: u64 = 1 << 63;
