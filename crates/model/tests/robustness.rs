//! Robustness of the native format's readers, end to end through files:
//! round trips of every event kind through `EventWriter` and `Experiment`,
//! files cut at every byte, files with damaged bytes, and the worked example
//! of FORMAT.md.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use parallax_model::defs::{ClockSource, Def, Mode, ProcessInfo};
use parallax_model::evcodec::EventEncoder;
use parallax_model::event::{CollectiveOp, Event, EventKind, UNKNOWN_REGION};
use parallax_model::experiment::{
    events_file, rank_dir, EventReader, EventWriter, Experiment, DEFS_FILE, EVENT_BLOCK_PREFIX,
};
use parallax_model::file::{self, FileKind, BLOCK_HEADER_LEN, HEADER_LEN};
use parallax_model::region::RegionKind;
use parallax_model::ErrorKind;
use proptest::prelude::*;

/// A directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "parallax-model-test-{name}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Index of each kind; the match is exhaustive, so a new kind fails to
/// compile here until the generators below know it.
fn kind_index(k: &EventKind) -> usize {
    use EventKind::*;
    match k {
        Enter { .. } => 0,
        Leave { .. } => 1,
        FlushBegin => 2,
        FlushEnd => 3,
        Send { .. } => 4,
        Recv { .. } => 5,
        IsendBegin { .. } => 6,
        IsendComplete { .. } => 7,
        IrecvBegin { .. } => 8,
        IrecvComplete { .. } => 9,
        CollectiveBegin => 10,
        CollectiveEnd { .. } => 11,
        LockRequest { .. } => 12,
        LockAcquired { .. } => 13,
        LockRelease { .. } => 14,
        SemPost { .. } => 15,
        SemAcquired { .. } => 16,
        Advance { .. } => 17,
        AwaitDone { .. } => 18,
        ThreadCreate { .. } => 19,
        ThreadBegin { .. } => 20,
        ThreadEnd { .. } => 21,
        ThreadJoin { .. } => 22,
        Fork { .. } => 23,
        Join { .. } => 24,
        Put { .. } => 25,
        Get { .. } => 26,
        Atomic { .. } => 27,
        RmaComplete { .. } => 28,
        ValueReached { .. } => 29,
        Metric { .. } => 30,
        Mark { .. } => 31,
        Iteration { .. } => 32,
        Skipped { .. } => 33,
    }
}

const KINDS: usize = 34;

/// The extended kind number `i` (2 to 33, as in [`kind_index`]) with fields
/// taken from `f`.
fn extended(i: usize, f: [u64; 5]) -> EventKind {
    use EventKind::*;
    let w = |v: u64| v as u32;
    let kind = match i {
        2 => FlushBegin,
        3 => FlushEnd,
        4 => Send {
            peer: w(f[0]),
            tag: w(f[1]),
            comm: f[2],
            bytes: f[3],
        },
        5 => Recv {
            peer: w(f[0]),
            tag: w(f[1]),
            comm: f[2],
            bytes: f[3],
        },
        6 => IsendBegin {
            peer: w(f[0]),
            tag: w(f[1]),
            comm: f[2],
            bytes: f[3],
            request: f[4],
        },
        7 => IsendComplete { request: f[0] },
        8 => IrecvBegin { request: f[0] },
        9 => IrecvComplete {
            peer: w(f[0]),
            tag: w(f[1]),
            comm: f[2],
            bytes: f[3],
            request: f[4],
        },
        10 => CollectiveBegin,
        11 => CollectiveEnd {
            op: CollectiveOp::from_u8((f[0] % 11) as u8).expect("11 ops"),
            comm: f[1],
            root: w(f[2]),
            sent: f[3],
            received: f[4],
        },
        12 => LockRequest { lock: f[0] },
        13 => LockAcquired { lock: f[0] },
        14 => LockRelease { lock: f[0] },
        15 => SemPost { sem: f[0] },
        16 => SemAcquired { sem: f[0] },
        17 => Advance {
            var: f[0],
            index: f[1],
        },
        18 => AwaitDone {
            var: f[0],
            index: f[1],
        },
        19 => ThreadCreate { token: f[0] },
        20 => ThreadBegin { token: f[0] },
        21 => ThreadEnd { token: f[0] },
        22 => ThreadJoin { token: f[0] },
        23 => Fork {
            team: f[0],
            size: w(f[1]),
        },
        24 => Join { team: f[0] },
        25 => Put {
            target: w(f[0]),
            bytes: f[1],
            addr: f[2],
        },
        26 => Get {
            target: w(f[0]),
            bytes: f[1],
            addr: f[2],
        },
        27 => Atomic {
            target: w(f[0]),
            bytes: f[1],
            addr: f[2],
        },
        28 => RmaComplete { target: w(f[0]) },
        29 => ValueReached { addr: f[0] },
        30 => Metric {
            metric: w(f[0]),
            value: f[1] as i64,
        },
        31 => Mark {
            mark: w(f[0]),
            value: f[1] as i64,
        },
        32 => Iteration {
            loop_id: f[0],
            index: f[1],
        },
        33 => Skipped { calls: f[0] },
        _ => unreachable!("kind {i}"),
    };
    assert_eq!(kind_index(&kind), i);
    kind
}

/// One step of a generated event sequence: a kind number, its fields and
/// the ticks since the previous event.
type Op = (usize, [u64; 5], u64);

/// Events from `ops`, starting at `start`. Enters and leaves nest: a leave
/// carries the region of the innermost open enter (or [`UNKNOWN_REGION`]
/// when none is open), which is what a reader reconstructs.
fn build(start: u64, ops: &[Op]) -> Vec<Event> {
    let mut time = start;
    let mut stack = Vec::new();
    ops.iter()
        .map(|&(i, f, delta)| {
            time += delta;
            let kind = match i {
                0 => {
                    let region = f[0] as u32;
                    stack.push(region);
                    EventKind::Enter { region }
                }
                1 => EventKind::Leave {
                    region: stack.pop().unwrap_or(UNKNOWN_REGION),
                },
                _ => extended(i, f),
            };
            Event { time, kind }
        })
        .collect()
}

/// Every kind at least once, enters and leaves paired.
fn every_kind() -> Vec<Event> {
    let mut ops: Vec<Op> = vec![(0, [7; 5], 0)];
    for i in 2..KINDS {
        let f = [i as u64, 1 << (i % 60), u64::MAX - i as u64, 3, 1 << 40];
        ops.push((i, f, (i as u64) * 131));
    }
    ops.push((1, [0; 5], 1 << 33));
    ops.push((1, [0; 5], 5)); // a leave with nothing open
    build(1_000_000, &ops)
}

fn field() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..300,
        any::<u64>(),
        Just(u64::MAX),
        Just(u32::MAX as u64)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    // Enters and leaves are as likely as all other kinds together.
    let kind = prop_oneof![0usize..2, 0usize..KINDS];
    let delta = prop_oneof![0u64..64, 0u64..(1 << 20), 0u64..(1 << 40)];
    (kind, proptest::array::uniform5(field()), delta)
}

fn events() -> impl Strategy<Value = Vec<Event>> {
    (0u64..(1 << 60), proptest::collection::vec(op(), 0..160))
        .prop_map(|(start, ops)| build(start, &ops))
}

/// The definitions of rank 0 with `threads` locations, as blocks of a few
/// records each.
fn defs(threads: u32) -> Vec<Def> {
    let mut d = vec![
        Def::Process(ProcessInfo {
            rank: 0,
            ranks: 1,
            pid: 4242,
            host: "test-host".into(),
            program: "/bin/test".into(),
            args: vec!["--flag".into()],
            start_unix_ns: 1_700_000_000_000_000_000,
            mode: Mode::Trace,
            version: "0.1.0".into(),
        }),
        Def::Clock {
            source: ClockSource::Monotonic,
            nominal_hz: 1e9,
        },
        Def::ClockSync {
            tick: 0,
            mono_ns: 0,
            unix_ns: 1_700_000_000_000_000_000,
        },
    ];
    for id in 0..8 {
        d.push(Def::Region {
            id,
            kind: RegionKind::ALL[id as usize],
            name: format!("region {id}"),
            file: "src/main.rs".into(),
            line: id * 10,
        });
    }
    for thread in 0..threads {
        d.push(Def::Location {
            thread,
            name: format!("t{thread}"),
            os_tid: 100 + thread,
        });
    }
    d
}

/// A definitions file: its header, then blocks of up to three records.
fn defs_file(defs: &[Def]) -> Vec<u8> {
    let mut out = file::header(FileKind::Definitions, 0, 0).to_vec();
    for chunk in defs.chunks(3) {
        let mut payload = Vec::new();
        for d in chunk {
            d.encode(&mut payload);
        }
        file::push_block(&mut out, &payload);
    }
    out
}

/// Writes an experiment of rank 0 with one event file per entry of
/// `threads`; returns the paths of the event files.
fn write_experiment(dir: &Path, threads: &[Vec<Event>], block_bytes: usize) -> Vec<PathBuf> {
    let rank = dir.join(rank_dir(0));
    std::fs::create_dir_all(&rank).unwrap();
    std::fs::write(rank.join(DEFS_FILE), defs_file(&defs(threads.len() as u32))).unwrap();
    threads
        .iter()
        .enumerate()
        .map(|(t, evs)| {
            let path = rank.join(events_file(t as u32));
            let mut w = EventWriter::create(&path, 0, t as u32, block_bytes).unwrap();
            for e in evs {
                w.push(e).unwrap();
            }
            w.finish().unwrap();
            path
        })
        .collect()
}

/// Events of one file, and the kind of the error that ended the reading.
fn read_file(path: &Path) -> Result<(Vec<Event>, Option<ErrorKind>), ErrorKind> {
    let r = EventReader::open(path).map_err(|e| e.kind())?;
    let (events, err) = r.read_all();
    Ok((events, err.map(|e| e.kind())))
}

/// The end offset of each block of a well-formed file, and how many events
/// the file holds up to the end of each block.
fn block_layout(path: &Path) -> (Vec<usize>, Vec<usize>) {
    let bytes = std::fs::read(path).unwrap();
    let mut ends = Vec::new();
    let mut at = HEADER_LEN;
    while at < bytes.len() {
        let n = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        at += BLOCK_HEADER_LEN + n;
        ends.push(at);
    }
    assert_eq!(at, bytes.len());
    let mut r = EventReader::open(path).unwrap();
    let mut out = Vec::new();
    let mut counts = Vec::new();
    while r.next_block(&mut out).unwrap() {
        counts.push(out.len());
    }
    assert_eq!(counts.len(), ends.len());
    (ends, counts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// (a) Whole experiments round-trip, every event of every thread.
    #[test]
    fn experiments_round_trip(
        threads in proptest::collection::vec(events(), 1..4),
        block_bytes in 64usize..600,
    ) {
        let dir = TempDir::new("round-trip");
        write_experiment(dir.path(), &threads, block_bytes);
        let exp = Experiment::open(dir.path()).unwrap();
        prop_assert_eq!(exp.processes.len(), 1);
        let p = &exp.processes[0];
        prop_assert_eq!(p.rank, 0);
        prop_assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        prop_assert_eq!(p.regions.len(), 8);
        prop_assert_eq!(p.info.as_ref().map(|i| i.pid), Some(4242));
        for (t, want) in threads.iter().enumerate() {
            let loc = &p.locations[&(t as u32)];
            prop_assert_eq!(&loc.name, &format!("t{t}"));
            // An empty stream still gets a file, of its header alone.
            prop_assert!(loc.events.is_some());
            let r = p.events(t as u32).unwrap();
            prop_assert_eq!((r.rank, r.thread), (0, t as u32));
            let (got, err) = r.read_all();
            prop_assert!(err.is_none(), "{:?}", err);
            prop_assert_eq!(&got, want);
        }
    }

    /// (c) Damaged bytes never panic, and every block before the first
    /// damaged one is read intact.
    #[test]
    fn damaged_files_keep_their_good_blocks(
        evs in events(),
        block_bytes in 64usize..300,
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let dir = TempDir::new("damage");
        let path = write_experiment(dir.path(), std::slice::from_ref(&evs), block_bytes).remove(0);
        let (ends, counts) = block_layout(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        // Bytes no reader looks at: the file header's reserved, rank and
        // thread fields (rank and thread are only reported), and each block
        // header's reserved field.
        let ignored = |at: usize| {
            if at < HEADER_LEN {
                return at >= 6;
            }
            let start = ends.iter().rev().find(|&&e| e <= at).copied().unwrap_or(HEADER_LEN);
            (12..16).contains(&(at - start))
        };
        let mut first_bad_block = None::<usize>;
        let mut header_bad = false;
        for (ix, x) in &flips {
            let at = ix.index(bytes.len());
            bytes[at] ^= x;
            if ignored(at) {
                continue;
            }
            if at < HEADER_LEN {
                header_bad = true;
            } else {
                let k = ends.iter().position(|&e| at < e).unwrap();
                first_bad_block = Some(first_bad_block.map_or(k, |b| b.min(k)));
            }
        }
        std::fs::write(&path, &bytes).unwrap();
        let got = read_file(&path);
        // Opening the whole experiment must not panic either.
        let _ = Experiment::open(dir.path());
        if header_bad {
            let kind = got.unwrap_err();
            prop_assert!(matches!(kind, ErrorKind::NotParallax | ErrorKind::Version), "{kind:?}");
            return Ok(());
        }
        let (got, err) = got.unwrap();
        match first_bad_block {
            None => {
                prop_assert_eq!(err, None);
                prop_assert_eq!(got, evs);
            }
            Some(k) => {
                let good = if k == 0 { 0 } else { counts[k - 1] };
                prop_assert!(
                    matches!(err, Some(ErrorKind::Corrupt | ErrorKind::Truncated)),
                    "{err:?}"
                );
                prop_assert_eq!(&got[..], &evs[..good]);
            }
        }
    }

    /// Arbitrary bytes after a valid header never panic the readers.
    #[test]
    fn garbage_after_a_header_is_an_error(body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let dir = TempDir::new("garbage");
        let rank = dir.path().join(rank_dir(0));
        std::fs::create_dir_all(&rank).unwrap();
        let mut defs = file::header(FileKind::Definitions, 0, 0).to_vec();
        defs.extend_from_slice(&body);
        std::fs::write(rank.join(DEFS_FILE), &defs).unwrap();
        let mut ev = file::header(FileKind::Events, 0, 0).to_vec();
        ev.extend_from_slice(&body);
        std::fs::write(rank.join(events_file(0)), &ev).unwrap();
        let mut prof = file::header(FileKind::Profile, 0, 0).to_vec();
        prof.extend_from_slice(&body);
        std::fs::write(rank.join("profile.pxp"), &prof).unwrap();
        let exp = Experiment::open(dir.path()).unwrap();
        let p = &exp.processes[0];
        let _ = p.profiles().unwrap();
        let _ = read_file(&rank.join(events_file(0))).unwrap();
    }
}

/// (b) A file cut at any byte gives exactly the events of its complete
/// blocks, then a `Truncated` error unless the cut falls between blocks.
#[test]
fn truncated_event_files_keep_their_complete_blocks() {
    let evs = every_kind();
    let dir = TempDir::new("truncate");
    let path = write_experiment(dir.path(), std::slice::from_ref(&evs), 64).remove(0);
    let (ends, counts) = block_layout(&path);
    assert!(ends.len() >= 4, "want several blocks, got {}", ends.len());
    let bytes = std::fs::read(&path).unwrap();
    let cut_path = dir.path().join("cut.pxe");
    for cut in 0..=bytes.len() {
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let got = read_file(&cut_path);
        if cut < HEADER_LEN {
            assert_eq!(got.unwrap_err(), ErrorKind::Truncated, "cut at {cut}");
            continue;
        }
        let (got, err) = got.unwrap();
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        let want = if complete == 0 {
            0
        } else {
            counts[complete - 1]
        };
        assert_eq!(got[..], evs[..want], "cut at {cut}");
        let at_boundary = cut == HEADER_LEN || ends.contains(&cut);
        let want_err = if at_boundary {
            None
        } else {
            Some(ErrorKind::Truncated)
        };
        assert_eq!(err, want_err, "cut at {cut}");
    }
}

/// A cut-short definitions file keeps the definitions of its complete
/// blocks and says what happened in a warning.
#[test]
fn truncated_definitions_keep_their_complete_blocks() {
    let dir = TempDir::new("truncate-defs");
    write_experiment(dir.path(), &[every_kind()], 64);
    let defs_path = dir.path().join(rank_dir(0)).join(DEFS_FILE);
    let bytes = std::fs::read(&defs_path).unwrap();
    let all = defs(1);
    for cut in 0..=bytes.len() {
        std::fs::write(&defs_path, &bytes[..cut]).unwrap();
        let exp = Experiment::open(dir.path());
        if cut < HEADER_LEN {
            assert_eq!(
                exp.unwrap_err().kind(),
                ErrorKind::Truncated,
                "cut at {cut}"
            );
            continue;
        }
        let p = &exp.unwrap().processes[0];
        // Blocks hold three records each, in order.
        let mut at = HEADER_LEN;
        let mut complete = 0;
        let mut whole = cut == HEADER_LEN;
        for chunk in all.chunks(3) {
            let mut payload = Vec::new();
            for d in chunk {
                d.encode(&mut payload);
            }
            at += BLOCK_HEADER_LEN + payload.len();
            if at > cut {
                break;
            }
            complete += chunk.len();
            whole = at == cut;
        }
        let regions = all[..complete]
            .iter()
            .filter(|d| matches!(d, Def::Region { .. }))
            .count();
        assert_eq!(p.regions.len(), regions, "cut at {cut}");
        assert_eq!(p.info.is_some(), complete >= 1, "cut at {cut}");
        assert_eq!(
            p.warnings.is_empty(),
            whole,
            "cut at {cut}: {:?}",
            p.warnings
        );
    }
}

/// A block whose checksum is right but whose records are not (only a
/// faulty writer makes one) gives the events before the bad record, an
/// error, and then nothing more.
#[test]
fn a_bad_record_ends_the_reading() {
    let dir = TempDir::new("bad-record");
    let path = dir.path().join(events_file(0));
    let mut out = file::header(FileKind::Events, 0, 0).to_vec();
    let block = |records: &[u8]| {
        let mut p = 100u64.to_le_bytes().to_vec();
        p.extend_from_slice(&[0; 16]);
        p.extend_from_slice(records);
        p
    };
    // enter region 5 at +0, then a record with the reserved tag 3.
    file::push_block(&mut out, &block(&[0x03, 0x0b, 0x07]));
    // A good block after it, which must not be read.
    file::push_block(&mut out, &block(&[0x03, 0x0b]));
    std::fs::write(&path, &out).unwrap();
    let mut r = EventReader::open(&path).unwrap();
    let mut got = Vec::new();
    let err = r.next_block(&mut got).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt);
    assert!(err.to_string().contains("reserved record tag"), "{err}");
    assert_eq!(
        got,
        vec![Event {
            time: 100,
            kind: EventKind::Enter { region: 5 }
        }]
    );
    assert!(!r.next_block(&mut got).unwrap());
    assert_eq!(got.len(), 1);
}

/// An event block too short for its 24-byte prefix is an error, not a block
/// without records.
#[test]
fn an_event_block_shorter_than_its_prefix_is_corrupt() {
    let dir = TempDir::new("short-block");
    let path = dir.path().join(events_file(0));
    for len in [0, 7, 8, EVENT_BLOCK_PREFIX - 1] {
        let mut out = file::header(FileKind::Events, 0, 0).to_vec();
        file::push_block(&mut out, &vec![0u8; len]);
        std::fs::write(&path, &out).unwrap();
        let (got, err) = read_file(&path).unwrap();
        assert!(got.is_empty());
        assert_eq!(err, Some(ErrorKind::Corrupt), "payload of {len} bytes");
    }
}

/// (d) The worked example of FORMAT.md ("Worked example"): an event file of
/// rank 1, thread 2, with one block holding an enter of region 5 at tick
/// 1000 and its leave at tick 1040.
#[test]
fn format_md_worked_example() {
    let dir = TempDir::new("example");
    let path = dir.path().join(events_file(2));
    let mut w = EventWriter::create(&path, 1, 2, 4096).unwrap();
    w.push(&Event {
        time: 1000,
        kind: EventKind::Enter { region: 5 },
    })
    .unwrap();
    w.push(&Event {
        time: 1040,
        kind: EventKind::Leave { region: 5 },
    })
    .unwrap();
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    #[rustfmt::skip]
    let want: &[u8] = &[
        // file header: "PLXE", version 9, reserved, rank 1, thread 2
        0x50, 0x4c, 0x58, 0x45, 0x09, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
        // block header: "PBLK", payload length 28, CRC-32, reserved
        0x50, 0x42, 0x4c, 0x4b, 0x1c, 0x00, 0x00, 0x00,
        0x48, 0x03, 0x2e, 0x46, 0x00, 0x00, 0x00, 0x00,
        // block prefix: base tick 1000, no clock sample (tick 0, ns 0)
        0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        // enter: head 0<<2|1 = 1, region 5; leave: head 40<<2|0 = 160
        0x03, 0x0b, 0x82, 0x02,
    ];
    assert_eq!(hex(&bytes), hex(want));
    let (got, err) = read_file(&path).unwrap();
    assert!(err.is_none());
    assert_eq!(
        got,
        vec![
            Event {
                time: 1000,
                kind: EventKind::Enter { region: 5 }
            },
            Event {
                time: 1040,
                kind: EventKind::Leave { region: 5 }
            },
        ]
    );
}

/// The extended-record example of FORMAT.md: a send 300 ticks after the
/// previous record, to peer 3 with tag 7 on communicator 0, of 1 MiB.
#[test]
fn format_md_extended_record_example() {
    let mut enc = EventEncoder::new(0);
    let kind = EventKind::Send {
        peer: 3,
        tag: 7,
        comm: 0,
        bytes: 1 << 20,
    };
    enc.push(&Event { time: 300, kind });
    // head 300<<2|2 = 1202 (2 bytes), code 3, then peer, tag, comm, bytes.
    assert_eq!(hex(&enc.take()), "ca 12 03 07 0f 01 04 00 80");
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Load map, code addresses and clock offsets are read back, and a block
/// appended offline (resolved symbols) replaces the regions it names.
#[test]
fn load_map_and_resolved_symbols_read_back() {
    let dir = TempDir::new("loadmap");
    write_experiment(dir.path(), &[Vec::new()], 64);
    let rank = dir.path().join(rank_dir(0));
    parallax_model::experiment::append_defs(
        &rank,
        &[
            Def::Module {
                base: 0x1000,
                start: 0x2000,
                end: 0x3000,
                path: "/bin/test".into(),
            },
            Def::CodeAddress {
                region: 3,
                addr: 0x2468,
            },
            Def::ClockOffset {
                reference: 0,
                local_ns: 10,
                offset_ns: -5,
                rtt_ns: 2,
            },
        ],
    )
    .unwrap();
    let p = &Experiment::open(dir.path()).unwrap().processes[0];
    assert_eq!(p.module_of(0x2468).unwrap().path, "/bin/test");
    assert!(p.module_of(0x3000).is_none());
    assert_eq!(p.code_addresses.get(&3), Some(&0x2468));
    assert_eq!(p.clock_offsets[0].offset_ns, -5);
    assert_eq!(p.region_name(3), "region 3");
    parallax_model::experiment::append_defs(
        &rank,
        &[Def::Region {
            id: 3,
            kind: RegionKind::Function,
            name: "resolved".into(),
            file: "a.c".into(),
            line: 7,
        }],
    )
    .unwrap();
    let p = &Experiment::open(dir.path()).unwrap().processes[0];
    assert_eq!(p.region_name(3), "resolved");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let err = parallax_model::experiment::append_defs(dir.path(), &[]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
}

fn enter(region: u64) -> Op {
    (0, [region, 0, 0, 0, 0], 7)
}

fn leave() -> Op {
    (1, [0; 5], 5)
}

/// A spill file of thread `thread` as the runtime leaves it: `live`, base
/// tick `base`, records `records` up to the write position, and `tail`
/// bytes after it (left over from earlier use).
fn spill_file(thread: u32, live: bool, base: u64, records: &[u8], tail: &[u8]) -> Vec<u8> {
    use parallax_model::spill::*;
    let mut out = vec![0u8; DATA_OFFSET];
    out[..HEADER_LEN].copy_from_slice(&file::header(FileKind::Spill, 0, thread));
    let start = 0x7f00_0000_0000u64;
    let room = (records.len() + tail.len()) as u64 + 64;
    for (at, v) in [
        (POS_AT, start + records.len() as u64),
        (START_AT, start),
        (LEN_AT, room),
        (BASE_AT, base),
        (STATE_AT, if live { LIVE } else { CLOSED }),
    ] {
        out[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(records);
    out.extend_from_slice(tail);
    out.resize(DATA_OFFSET + room as usize, 0xff);
    out
}

/// The records of `events`, from `base`.
fn records_of(base: u64, events: &[Event]) -> Vec<u8> {
    let mut enc = EventEncoder::new(base);
    for e in events {
        enc.push(e);
    }
    enc.take()
}

#[test]
fn a_live_spill_file_is_the_last_block() {
    let dir = TempDir::new("spill");
    let all = build(1_000, &[enter(1), enter(2), leave(), leave(), enter(3)]);
    let (written, spilled) = all.split_at(2);
    let paths = write_experiment(dir.path(), &[written.to_vec()], 1 << 20);
    let rank = paths[0].parent().unwrap().to_path_buf();
    let base = spilled[0].time;
    let send = EventKind::Send {
        peer: 1,
        tag: 2,
        comm: 3,
        bytes: 1 << 40,
    };
    // The last record is cut short: its head and code, not its fields.
    let mut torn = records_of(
        base,
        &[Event {
            time: base,
            kind: send,
        }],
    );
    torn.truncate(3);
    let mut records = records_of(base, spilled);
    let whole = records.len();
    records.extend_from_slice(&torn);
    let spill = rank.join(parallax_model::spill::spill_file(0));
    std::fs::write(&spill, spill_file(0, true, base, &records, &[0x01, 0x02])).unwrap();
    let exp = Experiment::open(dir.path()).unwrap();
    let p = &exp.processes[0];
    assert!(p.killed());
    assert_eq!(p.locations[&0].spill.as_deref(), Some(spill.as_path()));
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("3 bytes"), "{:?}", p.warnings);
    let (events, err) = p.events(0).unwrap().read_all();
    assert!(err.is_none(), "{err:?}");
    assert_eq!(events, all, "every whole record, after the event file's");
    let s = parallax_model::spill::read(&spill).unwrap();
    assert_eq!((s.records.len(), s.dropped), (whole, 3));
    // Closed: nothing is taken from it.
    std::fs::write(&spill, spill_file(0, false, base, &records, &[])).unwrap();
    let exp = Experiment::open(dir.path()).unwrap();
    assert!(exp.processes[0].locations[&0].spill.is_none());
    assert!(!exp.processes[0].killed());
    // The records were written as the event file's last block already
    // (same base tick): not taken twice.
    let written_base = written[0].time;
    let again = records_of(written_base, written);
    std::fs::write(&spill, spill_file(0, true, written_base, &again, &[])).unwrap();
    let exp = Experiment::open(dir.path()).unwrap();
    let (events, err) = exp.processes[0].events(0).unwrap().read_all();
    assert!(err.is_none());
    assert_eq!(events, written);
    // A write position outside the records: the file is corrupt, said, and
    // the event file reads as it is.
    let mut bad = spill_file(0, true, base, &records, &[]);
    bad[parallax_model::spill::POS_AT..][..8].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&spill, bad).unwrap();
    let exp = Experiment::open(dir.path()).unwrap();
    assert_eq!(exp.warnings().len(), 1, "{:?}", exp.warnings());
    let (events, _) = exp.processes[0].events(0).unwrap().read_all();
    assert_eq!(events, written);
}

#[test]
fn a_block_cut_short_gives_way_to_the_spill_file() {
    let dir = TempDir::new("spill-cut");
    let ops: Vec<Op> = (0..200).flat_map(|i| [enter(i % 8), leave()]).collect();
    let all = build(5_000, &ops);
    let paths = write_experiment(dir.path(), std::slice::from_ref(&all), 64);
    let (ends, counts) = block_layout(&paths[0]);
    assert!(ends.len() >= 3);
    // The process died while it wrote its last block, whose records were
    // still in its buffer.
    let last = ends.len() - 1;
    let kept = counts[last - 1];
    let bytes = std::fs::read(&paths[0]).unwrap();
    std::fs::write(&paths[0], &bytes[..ends[last - 1] + 10]).unwrap();
    let tail = &all[kept..];
    let base = tail[0].time;
    let spill = paths[0].with_file_name(parallax_model::spill::spill_file(0));
    std::fs::write(
        &spill,
        spill_file(0, true, base, &records_of(base, tail), &[]),
    )
    .unwrap();
    let exp = Experiment::open(dir.path()).unwrap();
    let (events, err) = exp.processes[0].events(0).unwrap().read_all();
    assert!(err.is_none(), "{err:?}");
    assert_eq!(events, all);
}
