//! Writes seed inputs for the fuzz targets: well-formed files and block
//! payloads of every record kind, so that fuzzing starts past the magic
//! numbers and checksums.
//!
//! `cargo run --example seed -- DIR` writes DIR/read_events, DIR/read_defs,
//! DIR/read_profile, DIR/compensate and DIR/analyze.

use std::path::Path;

use parallax_model::defs::{ClockSource, Def, Mode, Probe, ProcessInfo};
use parallax_model::evcodec::EventEncoder;
use parallax_model::event::{CollectiveOp, Event, EventKind};
use parallax_model::file::{header, push_block, FileKind};
use parallax_model::profile::{CallTree, Node, Stats};
use parallax_model::region::RegionKind;

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    let dir = Path::new(&dir);
    write(
        dir,
        "read_events",
        "all-kinds.pxe",
        &event_file(&all_kinds(), 3),
    );
    write(dir, "read_events", "pairs.pxe", &event_file(&pairs(), 2));
    let defs = all_defs();
    let mut payload = Vec::new();
    for d in &defs {
        d.encode(&mut payload);
    }
    write(dir, "read_defs", "records.bin", &payload);
    let mut file = header(FileKind::Definitions, 1, 0).to_vec();
    for d in &defs {
        let mut one = Vec::new();
        d.encode(&mut one);
        push_block(&mut file, &one);
    }
    write(dir, "read_defs", "defs.pxd", &file);
    let tree = tree();
    let mut payload = Vec::new();
    tree.encode(&mut payload);
    write(dir, "read_profile", "tree.bin", &payload);
    let mut file = header(FileKind::Profile, 1, 0).to_vec();
    push_block(&mut file, &payload);
    push_block(&mut file, &payload);
    write(dir, "read_profile", "profile.pxp", &file);
    // Experiments for the analyses (see parallax_testkit::fuzz for how the
    // bytes are read).
    for (name, bytes) in [("ranks", ranks_program()), ("threads", threads_program())] {
        write(dir, "compensate", name, &bytes);
        write(dir, "analyze", name, &bytes);
    }
}

/// Region kinds of the experiments: user, send, recv, barrier, lock,
/// unlock, thread create, thread join, semaphore wait, semaphore post.
const KINDS: [u8; 10] = [0, 3, 4, 8, 9, 10, 20, 21, 11, 12];

/// One event: location, time step (tens of ns), peer, id, operation and
/// its extra bytes.
fn ev(out: &mut Vec<u8>, loc: u8, peer: u8, id: u8, op: u8, extra: &[u8]) {
    out.extend_from_slice(&[loc, 3, peer, id, op]);
    out.extend_from_slice(extra);
}

/// Two ranks: one sends to the other inside regions, both meet at a
/// barrier, four times.
fn ranks_program() -> Vec<u8> {
    // Shape 2: two ranks; then kinds, clock 1 GHz, probes 5 ns, 2 cores.
    let mut b = vec![2];
    b.extend_from_slice(&KINDS);
    b.extend_from_slice(&[0, 0, 2]);
    for _ in 0..4 {
        for l in 0..2 {
            ev(&mut b, l, 0, 0, 0, &[0]);
        }
        ev(&mut b, 0, 0, 0, 0, &[1]);
        ev(&mut b, 0, 1, 0, 9, &[]);
        ev(&mut b, 0, 0, 0, 5, &[]);
        ev(&mut b, 1, 0, 0, 0, &[2]);
        ev(&mut b, 1, 0, 0, 10, &[]);
        ev(&mut b, 1, 0, 0, 5, &[]);
        for l in 0..2 {
            ev(&mut b, l, 0, 0, 0, &[3]);
            ev(&mut b, l, 0, 0, 11, &[0]);
            ev(&mut b, l, 0, 0, 5, &[]);
            ev(&mut b, l, 0, 0, 5, &[]);
        }
    }
    b
}

/// Three threads: the first starts the others, all take a lock, then the
/// first joins them.
fn threads_program() -> Vec<u8> {
    // Shape 5: three threads of one process; one core (crowded).
    let mut b = vec![5];
    b.extend_from_slice(&KINDS);
    b.extend_from_slice(&[0, 0, 1]);
    for t in 1..3 {
        ev(&mut b, 0, 0, t, 14, &[0]);
        ev(&mut b, t, 0, t, 14, &[1]);
    }
    for _ in 0..3 {
        for l in 0..3 {
            ev(&mut b, l, 0, 0, 0, &[4]);
            ev(&mut b, l, 0, 1, 12, &[]);
            ev(&mut b, l, 0, 0, 5, &[]);
            ev(&mut b, l, 0, 1, 13, &[]);
        }
    }
    for t in 1..3 {
        ev(&mut b, t, 0, t, 14, &[2]);
        ev(&mut b, 0, 0, t, 14, &[3]);
    }
    b
}

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).expect("create corpus directory");
    std::fs::write(d.join(format!("seed-{name}")), bytes).expect("write seed");
}

/// An event file whose events are split into blocks of `per_block` events.
fn event_file(events: &[Event], per_block: usize) -> Vec<u8> {
    let mut file = header(FileKind::Events, 1, 2).to_vec();
    for chunk in events.chunks(per_block) {
        let base = chunk[0].time;
        let mut enc = EventEncoder::new(base);
        for e in chunk {
            enc.push(e);
        }
        let mut payload = base.to_le_bytes().to_vec();
        payload.extend_from_slice(&(base + 1).to_le_bytes());
        payload.extend_from_slice(&1_000_000u64.to_le_bytes());
        payload.extend_from_slice(&enc.take());
        push_block(&mut file, &payload);
    }
    file
}

fn pairs() -> Vec<Event> {
    (0..8u64)
        .map(|i| Event {
            time: 100 + i * 50,
            kind: if i % 2 == 0 {
                EventKind::Enter { region: i as u32 }
            } else {
                EventKind::Leave {
                    region: i as u32 - 1,
                }
            },
        })
        .collect()
}

fn all_kinds() -> Vec<Event> {
    use EventKind::*;
    let kinds = [
        Enter { region: 3 },
        FlushBegin,
        FlushEnd,
        Send {
            peer: 1,
            tag: 7,
            comm: 0,
            bytes: 1 << 20,
        },
        Recv {
            peer: 2,
            tag: 8,
            comm: 5,
            bytes: 9,
        },
        IsendBegin {
            peer: 1,
            tag: 2,
            comm: 3,
            bytes: 4,
            request: 99,
        },
        IsendComplete { request: 99 },
        IrecvBegin { request: 100 },
        IrecvComplete {
            peer: 0,
            tag: 1,
            comm: 2,
            bytes: 3,
            request: 100,
        },
        CollectiveBegin,
        CollectiveEnd {
            op: CollectiveOp::Allreduce,
            comm: 1,
            root: u32::MAX,
            sent: 8,
            received: 8,
        },
        LockRequest { lock: 0xdead_beef },
        LockAcquired { lock: 0xdead_beef },
        LockRelease { lock: 0xdead_beef },
        SemPost { sem: 4 },
        SemAcquired { sem: 4 },
        Advance { var: 1, index: 17 },
        AwaitDone { var: 1, index: 16 },
        Iteration {
            loop_id: 2,
            index: 7,
        },
        ThreadCreate { token: 5 },
        ThreadBegin { token: 5 },
        ThreadEnd { token: 5 },
        ThreadJoin { token: 5 },
        Fork { team: 1, size: 4 },
        Join { team: 1 },
        Put {
            target: 3,
            bytes: 64,
            addr: 0x1000,
        },
        Get {
            target: 3,
            bytes: 64,
            addr: 0x2000,
        },
        Atomic {
            target: 2,
            bytes: 8,
            addr: 0x3000,
        },
        RmaComplete { target: u32::MAX },
        ValueReached { addr: 0x4000 },
        Metric {
            metric: 2,
            value: -5,
        },
        Mark {
            mark: 9,
            value: i64::MIN,
        },
        Leave { region: 3 },
    ];
    kinds
        .iter()
        .enumerate()
        .map(|(i, &kind)| Event {
            time: 1000 + (i as u64) * (i as u64) * 977,
            kind,
        })
        .collect()
}

fn all_defs() -> Vec<Def> {
    vec![
        Def::Process(ProcessInfo {
            rank: 1,
            ranks: 4,
            pid: 1234,
            host: "node-1".into(),
            program: "/bin/app".into(),
            args: vec!["-n".into(), "10".into()],
            start_unix_ns: 1_700_000_000_000_000_000,
            mode: Mode::Both,
            version: "0.1.0".into(),
        }),
        Def::Clock {
            source: ClockSource::Tsc,
            nominal_hz: 2.1e9,
        },
        Def::ClockSync {
            tick: 99,
            mono_ns: 100,
            unix_ns: 101,
        },
        Def::Calibration {
            probe: Probe::Enter,
            mode: Mode::Trace,
            mean_ns: 7.5,
            sd_ns: 0.25,
            min_ns: 7.0,
            samples: 20,
            tick: 1_000,
        },
        Def::Region {
            id: 7,
            kind: RegionKind::Barrier,
            name: "barrier".into(),
            file: "src/x.rs".into(),
            line: 42,
        },
        Def::Location {
            thread: 2,
            name: "worker".into(),
            os_tid: 4321,
        },
        Def::Group {
            id: 5,
            members: vec![0, 1, 3],
        },
        Def::Metric {
            id: 1,
            name: "bytes".into(),
            unit: "B".into(),
        },
        Def::Property {
            key: "throttled".into(),
            value: "f".into(),
        },
        Def::End { unix_ns: 5 },
    ]
}

fn tree() -> CallTree {
    let mut a = Stats::EMPTY;
    a.add(100, 30);
    a.add(50, 0);
    let mut b = Stats::EMPTY;
    b.add(30, 0);
    CallTree {
        thread: 2,
        nodes: vec![
            Node {
                parent: None,
                region: 1,
                stats: a,
            },
            Node {
                parent: Some(0),
                region: 2,
                stats: b,
            },
            Node {
                parent: Some(1),
                region: 3,
                stats: b,
            },
            Node {
                parent: Some(0),
                region: 4,
                stats: Stats::EMPTY,
            },
        ],
    }
}
