//! Hostile variants of a valid experiment: each a copy with one thing
//! broken, chosen by a seed.
//!
//! The kinds of damage:
//!
//! - files cut at a block boundary (or a few bytes around one) and at a
//!   random byte;
//! - bytes flipped at random;
//! - blocks re-encoded with valid checksums around hostile values: huge
//!   region ids, ranks, threads, counts, tokens, lock ids, communicator
//!   ids and timestamps, times out of order between blocks, leaves without
//!   enters and enters without leaves, definitions with impossible clocks,
//!   costs, properties and group members, profiles with huge statistics;
//! - block lengths set to `0xffffffff`, `2^30` or one past the file's end;
//! - files of the wrong kind: a FIFO, a symbolic link to `/dev/zero`, a
//!   directory, an empty file, a sparse 1 GiB file whose block claims
//!   2^30 bytes, an unreadable file, a dangling or looping link;
//! - experiments of odd shape: two processes of one rank, a process
//!   directory without definitions, the experiment directory itself a FIFO,
//!   a manifest of the wrong kind or with hostile JSON.

use std::io::Write;
use std::path::{Path, PathBuf};

use parallax_model::defs::{Def, Entry, Mode, Probe, Summary};
use parallax_model::evcodec::EventEncoder;
use parallax_model::event::{CollectiveOp, Event, EventKind};
use parallax_model::experiment::{self, EventReader, EVENT_BLOCK_PREFIX};
use parallax_model::file::{self, FileKind, BLOCK_HEADER_LEN, HEADER_LEN};
use parallax_model::profile::CallTree;
use parallax_model::region::RegionKind;

use crate::rng::Rng;

/// Copies the experiment (or any directory of regular files) `from` to
/// `to`, which must not exist.
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let t = e.file_type()?;
        let dest = to.join(e.file_name());
        if t.is_dir() {
            copy_dir(&e.path(), &dest)?;
        } else if t.is_file() {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

/// Removes what a variant made at `path` (a directory, a file, a FIFO, a
/// link), making unreadable files readable again first.
pub fn remove(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                remove(&e.path());
            }
        }
        let _ = std::fs::remove_dir(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// The native files of an experiment directory, sorted: definitions,
/// profiles and event files of every process directory.
pub fn native_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        if !e.path().is_dir() {
            continue;
        }
        if let Ok(inner) = std::fs::read_dir(e.path()) {
            for f in inner.flatten() {
                let p = f.path();
                if matches!(
                    p.extension().and_then(|x| x.to_str()),
                    Some("pxd" | "pxp" | "pxe")
                ) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// Where the blocks of a native file start (the offsets of their headers)
/// and the file's length.
pub fn block_starts(bytes: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = HEADER_LEN;
    while at + BLOCK_HEADER_LEN <= bytes.len() && bytes[at..at + 4] == file::BLOCK_MAGIC {
        out.push(at);
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
        at += BLOCK_HEADER_LEN + len;
    }
    out
}

/// Makes variant `seed` of the experiment `base` at `out` (which must not
/// exist) and says what it broke.
pub fn variant(base: &Path, out: &Path, seed: u64) -> std::io::Result<String> {
    let mut rng = Rng::new(seed);
    copy_dir(base, out)?;
    let files = native_files(out);
    let file = rng.pick(&files).clone();
    let name = file
        .strip_prefix(out)
        .unwrap_or(&file)
        .display()
        .to_string();
    let what = match rng.below(20) {
        0..=2 => cut_at_block(&file, &mut rng)?,
        3 => cut_anywhere(&file, &mut rng)?,
        4..=5 => flip(&file, &mut rng)?,
        6..=9 => {
            let events: Vec<&PathBuf> = files.iter().filter(|f| is(f, "pxe")).collect();
            let f = (*rng.pick(&events)).clone();
            let what = hostile_events(&f, &mut rng)?;
            return Ok(format!(
                "{}: {what}",
                f.strip_prefix(out).unwrap_or(&f).display()
            ));
        }
        10..=12 => {
            let defs: Vec<&PathBuf> = files.iter().filter(|f| is(f, "pxd")).collect();
            let f = (*rng.pick(&defs)).clone();
            let what = hostile_defs(&f, &mut rng)?;
            return Ok(format!(
                "{}: {what}",
                f.strip_prefix(out).unwrap_or(&f).display()
            ));
        }
        13 => match files.iter().find(|f| is(f, "pxp")) {
            Some(f) => {
                let what = hostile_profile(f, &mut rng)?;
                return Ok(format!(
                    "{}: {what}",
                    f.strip_prefix(out).unwrap_or(f).display()
                ));
            }
            None => flip(&file, &mut rng)?,
        },
        14 => block_length(&file, &mut rng)?,
        15..=17 => odd_file(&file, &mut rng)?,
        _ => {
            let what = odd_shape(out, &mut rng)?;
            return Ok(what);
        }
    };
    Ok(format!("{name}: {what}"))
}

fn is(p: &Path, ext: &str) -> bool {
    p.extension().and_then(|x| x.to_str()) == Some(ext)
}

fn cut_at_block(file: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let bytes = std::fs::read(file)?;
    let mut points = vec![0, HEADER_LEN];
    for s in block_starts(&bytes) {
        points.push(s);
        points.push(s + BLOCK_HEADER_LEN);
    }
    points.push(bytes.len());
    let at = *rng.pick(&points) as i64 + *rng.pick(&[0i64, 0, 0, -1, 1, 7, 8, 15, 23, 24, 25]);
    let at = (at.max(0) as usize).min(bytes.len());
    std::fs::write(file, &bytes[..at])?;
    Ok(format!("cut at byte {at} of {}", bytes.len()))
}

fn cut_anywhere(file: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let bytes = std::fs::read(file)?;
    let at = rng.index(bytes.len().max(1));
    std::fs::write(file, &bytes[..at])?;
    Ok(format!("cut at byte {at} of {}", bytes.len()))
}

fn flip(file: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let mut bytes = std::fs::read(file)?;
    if bytes.is_empty() {
        return Ok("empty, left alone".into());
    }
    let mut at = Vec::new();
    for _ in 0..1 + rng.below(4) {
        let i = rng.index(bytes.len());
        let mask = (1 + rng.below(255)) as u8;
        bytes[i] ^= mask;
        at.push(format!("{i}^{mask:#04x}"));
    }
    std::fs::write(file, &bytes)?;
    Ok(format!("bytes flipped at {}", at.join(",")))
}

/// Sets one block's length field to a value that cannot be right.
fn block_length(file: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let mut bytes = std::fs::read(file)?;
    let starts = block_starts(&bytes);
    let Some(&s) = starts.get(rng.index(starts.len().max(1))) else {
        return cut_anywhere(file, rng);
    };
    let rest = (bytes.len() - s - BLOCK_HEADER_LEN) as u32;
    let len = *rng.pick(&[u32::MAX, 1 << 30, (1 << 30) + 1, rest + 1, rest + 4096, 0]);
    bytes[s + 4..s + 8].copy_from_slice(&len.to_le_bytes());
    std::fs::write(file, &bytes)?;
    Ok(format!("block at byte {s} claims {len} bytes"))
}

/// Writes events as blocks of at most `per_block` events each, with the
/// base times given, and valid checksums.
fn encode_events(rank: u32, thread: u32, chunks: &[(u64, Vec<Event>)]) -> Vec<u8> {
    let mut out = file::header(FileKind::Events, rank, thread).to_vec();
    for (base, events) in chunks {
        let mut enc = EventEncoder::new(*base);
        for e in events {
            enc.push(e);
        }
        let mut payload = Vec::with_capacity(EVENT_BLOCK_PREFIX + enc.len());
        payload.extend_from_slice(&base.to_le_bytes());
        payload.extend_from_slice(&[0u8; 16]);
        payload.extend_from_slice(enc.records());
        file::push_block(&mut out, &payload);
    }
    out
}

/// An extended event of any kind with hostile fields.
fn hostile_event(rng: &mut Rng) -> EventKind {
    use EventKind::*;
    let a = rng.hostile_u32();
    let b = rng.hostile_u64();
    let c = rng.hostile_u64();
    match rng.below(24) {
        0 => Send {
            peer: a,
            tag: rng.hostile_u32(),
            comm: b,
            bytes: c,
        },
        1 => Recv {
            peer: a,
            tag: rng.hostile_u32(),
            comm: b,
            bytes: c,
        },
        2 => IsendBegin {
            peer: a,
            tag: 0,
            comm: b,
            bytes: 8,
            request: c,
        },
        3 => IsendComplete { request: b },
        4 => IrecvBegin { request: b },
        5 => IrecvComplete {
            peer: a,
            tag: 1,
            comm: b,
            bytes: c,
            request: rng.hostile_u64(),
        },
        6 => CollectiveBegin,
        7 => CollectiveEnd {
            op: *rng.pick(&[
                CollectiveOp::Barrier,
                CollectiveOp::Allreduce,
                CollectiveOp::Broadcast,
            ]),
            comm: b,
            root: a,
            sent: c,
            received: rng.hostile_u64(),
        },
        8 => LockRequest { lock: b },
        9 => LockAcquired { lock: b },
        10 => LockRelease { lock: b },
        11 => SemPost { sem: b },
        12 => SemAcquired { sem: b },
        13 => Advance { var: b, index: c },
        14 => AwaitDone { var: b, index: c },
        15 => ThreadCreate { token: b },
        16 => ThreadBegin { token: b },
        17 => ThreadEnd { token: b },
        18 => ThreadJoin { token: b },
        19 => Fork { team: b, size: a },
        20 => Join { team: b },
        21 => Put {
            target: a,
            bytes: c,
            addr: b,
        },
        22 => Metric {
            metric: a,
            value: b as i64,
        },
        _ => Iteration {
            loop_id: b,
            index: c,
        },
    }
}

/// Rewrites an event file with one kind of hostile content, every block
/// checksummed.
fn hostile_events(path: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let r = EventReader::open(path).map_err(std::io::Error::other)?;
    let (rank, thread) = (r.rank, r.thread);
    let (mut events, _) = r.read_all();
    if events.is_empty() {
        events.push(Event {
            time: 1000,
            kind: EventKind::Enter { region: 1 },
        });
    }
    let n = events.len();
    let mut rank = rank;
    let mut thread = thread;
    // Base times of the blocks: normally each block's first event's.
    let mut bases: Option<Vec<u64>> = None;
    let what = match rng.below(14) {
        0 => {
            let v = rng.hostile_u32();
            for e in events.iter_mut() {
                if let EventKind::Enter { region } = &mut e.kind {
                    if rng.chance(0.3) {
                        *region = v;
                    }
                }
            }
            format!("enters of region {v}")
        }
        1 => {
            let k = 1 + rng.below(6) as usize;
            for _ in 0..k {
                let at = rng.index(n + 1);
                let time = events.get(at).map_or(events[n - 1].time, |e| e.time);
                events.insert(
                    at,
                    Event {
                        time,
                        kind: hostile_event(rng),
                    },
                );
            }
            format!("{k} extended events with hostile fields")
        }
        2 => {
            let at = rng.index(n);
            let jump = *rng.pick(&[1u64 << 40, 1 << 50, 1 << 61, u64::MAX / 2, u64::MAX]);
            for e in events[at..].iter_mut() {
                e.time = e.time.saturating_add(jump);
            }
            format!("times from event {at} on moved {jump} ticks later")
        }
        3 => {
            let at = rng.index(n);
            let t = events[at]
                .time
                .saturating_add(*rng.pick(&[1u64 << 45, 1 << 62]));
            events[at].time = t;
            format!("event {at} at the implausible time {t}")
        }
        4 => {
            // Blocks whose base times go back: times out of order.
            let k = n.div_ceil(4).max(1);
            let mut b = Vec::new();
            for (i, c) in events.chunks(k).enumerate() {
                b.push(if i % 2 == 1 { 0 } else { c[0].time });
            }
            bases = Some(b);
            "block base times out of order".to_string()
        }
        5 => {
            let k = 1 + rng.below(50) as usize;
            for _ in 0..k {
                let at = rng.index(n + 1);
                let time = events.get(at).map_or(events[n - 1].time, |e| e.time);
                events.insert(
                    at,
                    Event {
                        time,
                        kind: EventKind::Leave { region: 0 },
                    },
                );
            }
            format!("{k} leaves without enters")
        }
        6 => {
            let depth = *rng.pick(&[1_000usize, 5_000, 20_000]);
            let region = rng.hostile_u32() % 8;
            let time = events[n - 1].time;
            events.extend((0..depth).map(|i| Event {
                time: time + i as u64,
                kind: EventKind::Enter {
                    region: region + (i % 3) as u32,
                },
            }));
            format!("{depth} enters never left")
        }
        7 => {
            let copy = events.clone();
            events.extend(copy);
            "every event twice, the second time going back".to_string()
        }
        8 => {
            rank = rng.hostile_u32();
            format!("header rank {rank}")
        }
        9 => {
            thread = rng.hostile_u32();
            format!("header thread {thread}")
        }
        10 => {
            events.retain(|e| !matches!(e.kind, EventKind::Leave { .. }));
            "every leave removed".to_string()
        }
        12 => {
            // Ids that agree in their low bits, which weak hashes of
            // integer keys put in one bucket.
            let k = *rng.pick(&[5_000u64, 40_000]);
            let shift = *rng.pick(&[32u32, 40, 48]);
            let mut time = events[n - 1].time;
            for i in 0..k {
                let lock = (i + 1) << shift;
                for kind in [
                    EventKind::LockAcquired { lock },
                    EventKind::LockRelease { lock },
                    EventKind::SemPost { sem: lock },
                    EventKind::ThreadCreate { token: lock },
                ] {
                    time += 3;
                    events.push(Event { time, kind });
                }
            }
            format!("{k} locks, semaphores and threads with ids i << {shift}")
        }
        13 => {
            let k = *rng.pick(&[2_000u32, 4_000]);
            let mut time = events[n - 1].time;
            for i in 0..k {
                for kind in [
                    EventKind::Enter {
                        region: (i + 1) << 20,
                    },
                    EventKind::Leave { region: 0 },
                ] {
                    time += 3;
                    events.push(Event { time, kind });
                }
            }
            format!("{k} regions with ids i << 20")
        }
        _ => {
            let k = 1 + rng.below(200) as usize;
            for _ in 0..k {
                events.push(Event {
                    time: events[events.len() - 1].time + rng.below(1 << 20),
                    kind: hostile_event(rng),
                });
            }
            format!("{k} hostile extended events at the end")
        }
    };
    let per = (events.len() / 4).max(1);
    let chunks: Vec<(u64, Vec<Event>)> = events
        .chunks(per)
        .enumerate()
        .map(|(i, c)| {
            let base = bases
                .as_ref()
                .and_then(|b| b.get(i).copied())
                .unwrap_or(c[0].time);
            (base, c.to_vec())
        })
        .collect();
    std::fs::write(path, encode_events(rank, thread, &chunks))?;
    Ok(what)
}

/// Rewrites a definitions file with one hostile change, checksummed.
fn hostile_defs(path: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let dir = path.parent().expect("a process directory");
    let (mut rank, mut defs) = experiment::read_defs(dir).map_err(std::io::Error::other)?;
    let what = match rng.below(16) {
        0 => {
            rank = *rng.pick(&[u32::MAX, u32::MAX - 1, 1 << 31, 1 << 24]);
            format!("header rank {rank}")
        }
        1 => {
            let v = rng.hostile_u32();
            for d in defs.iter_mut() {
                if let Def::Location { thread, .. } | Def::Summary { thread, .. } = d {
                    *thread = v;
                }
            }
            format!("locations numbered {v}")
        }
        2 => {
            let v = rng.hostile_u32();
            for d in defs.iter_mut() {
                if let Def::Region { id, .. } = d {
                    if rng.chance(0.5) {
                        *id = v;
                    }
                }
            }
            format!("regions numbered {v}")
        }
        3 => {
            let region = rng.hostile_u32();
            defs.push(Def::Entry {
                region,
                entry: *rng.pick(&Entry::ALL),
            });
            format!("an entry record for region {region}")
        }
        4 => {
            let n = rng.below(5000) as usize;
            let v = rng.hostile_u32();
            defs.push(Def::Group {
                id: rng.hostile_u64(),
                members: vec![v; n],
            });
            defs.push(Def::Group {
                id: 1 << 63,
                members: (0..n as u32).map(|i| i.wrapping_mul(v)).collect(),
            });
            format!("groups of {n} members like {v}")
        }
        5 => {
            let hz = *rng.pick(&[0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300, 1e300]);
            for d in defs.iter_mut() {
                if let Def::Clock { nominal_hz, .. } = d {
                    *nominal_hz = hz;
                }
            }
            defs.retain(|d| !matches!(d, Def::ClockSync { .. }) || rng.chance(0.3));
            format!("clock of {hz} Hz")
        }
        6 => {
            let (tick, ns) = (rng.hostile_u64(), rng.hostile_u64());
            defs.push(Def::ClockSync {
                tick,
                mono_ns: ns,
                unix_ns: rng.hostile_u64(),
            });
            format!("a clock sample at tick {tick}, {ns} ns")
        }
        7 => {
            let v = *rng.pick(&[f64::NAN, f64::INFINITY, -1e9, 1e30, 0.0, -0.0]);
            for d in defs.iter_mut() {
                if let Def::Calibration {
                    mean_ns, min_ns, ..
                } = d
                {
                    *mean_ns = v;
                    *min_ns = v;
                }
            }
            defs.push(Def::Calibration {
                probe: *rng.pick(&Probe::ALL),
                mode: Mode::Trace,
                mean_ns: v,
                sd_ns: v,
                min_ns: v,
                samples: rng.hostile_u32(),
                tick: rng.hostile_u64(),
            });
            format!("probe costs of {v} ns")
        }
        8 => {
            let v = rng.pick(&["0", "4294967295", "-1", "1e9", ""]).to_string();
            defs.retain(|d| !matches!(d, Def::Property { key, .. } if key == "cpus"));
            defs.push(Def::Property {
                key: "cpus".into(),
                value: v.clone(),
            });
            format!("cpus property {v:?}")
        }
        9 => {
            let v = rng.hostile_u32();
            for d in defs.iter_mut() {
                if let Def::Process(info) = d {
                    info.rank = v;
                    info.ranks = rng.hostile_u32();
                }
            }
            format!("process record of rank {v}")
        }
        10 => {
            let len = *rng.pick(&[0usize, 1 << 16, 1 << 20]);
            let name: String = (0..len)
                .map(|i| ['a', '\n', '\u{1b}', 'é', ';', '"', '<'][i % 7])
                .collect();
            for d in defs.iter_mut() {
                if let Def::Region { name: n, .. } = d {
                    *n = name.clone();
                }
            }
            format!("region names of {len} characters")
        }
        11 => {
            let bytes = rng.hostile_u64();
            let syncs = rng.hostile_u64();
            let k = rng.below(3000) as usize;
            let collectives = (0..k as u64).map(|c| (c, rng.hostile_u64())).collect();
            let mut threads = Vec::new();
            for d in defs.iter_mut() {
                if let Def::Summary { thread, summary } = d {
                    threads.push(*thread);
                    // Keep the file's real length sometimes: a summary is
                    // believed only where it matches.
                    if rng.chance(0.5) {
                        summary.bytes = bytes;
                    }
                    summary.syncs = syncs;
                    summary.collectives = std::mem::take(&mut Vec::new());
                }
            }
            defs.push(Def::Summary {
                thread: threads.first().copied().unwrap_or(0),
                summary: Summary {
                    bytes,
                    syncs,
                    collectives,
                },
            });
            format!("summaries of {syncs} syncs and {k} collectives")
        }
        12 => {
            defs.push(Def::ClockOffset {
                reference: rng.hostile_u32(),
                local_ns: rng.hostile_u64(),
                offset_ns: rng.hostile_u64() as i64,
                rtt_ns: rng.hostile_u64(),
            });
            defs.push(Def::Module {
                base: rng.hostile_u64(),
                start: rng.hostile_u64(),
                end: rng.hostile_u64(),
                path: "/dev/zero".into(),
            });
            defs.push(Def::CodeAddress {
                region: rng.hostile_u32(),
                addr: rng.hostile_u64(),
            });
            "clock offsets, modules and code addresses out of range".into()
        }
        13 => {
            defs.retain(|d| matches!(d, Def::Process(_)));
            "only the process record kept".into()
        }
        14 => {
            let kind = RegionKind::from_u8(rng.below(28) as u8).unwrap_or(RegionKind::Barrier);
            for d in defs.iter_mut() {
                if let Def::Region { kind: k, .. } = d {
                    *k = kind;
                }
            }
            format!("every region a {}", kind.name())
        }
        _ => {
            defs.push(Def::End {
                unix_ns: rng.hostile_u64(),
            });
            let copy = defs.clone();
            defs.extend(copy);
            "every definition twice".into()
        }
    };
    experiment::write_defs(dir, rank, &defs).map_err(std::io::Error::other)?;
    Ok(what)
}

/// Rewrites a profile file with hostile trees, checksummed.
fn hostile_profile(path: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    let (rank, _) = file::parse_header(FileKind::Profile, &bytes).map_err(std::io::Error::other)?;
    let mut trees = Vec::new();
    for s in block_starts(&bytes) {
        let len = u32::from_le_bytes(bytes[s + 4..s + 8].try_into().expect("4 bytes")) as usize;
        let payload = &bytes[s + BLOCK_HEADER_LEN..s + BLOCK_HEADER_LEN + len];
        if let Ok(t) = CallTree::decode(payload) {
            trees.push(t);
        }
    }
    if trees.is_empty() {
        return flip(path, rng);
    }
    let what = match rng.below(5) {
        0 => {
            let v = rng.hostile_u64();
            for t in trees.iter_mut() {
                for n in t.nodes.iter_mut() {
                    n.stats.count = v;
                    n.stats.inclusive = v;
                    n.stats.exclusive = rng.hostile_u64();
                    n.stats.max = v;
                    n.stats.min = rng.hostile_u64();
                    n.stats.sum_sq = *rng.pick(&[f64::NAN, f64::INFINITY, -1.0, 1e300]);
                }
            }
            format!("statistics of {v}")
        }
        1 => {
            let v = rng.hostile_u32();
            for t in trees.iter_mut() {
                t.thread = v;
                for n in t.nodes.iter_mut() {
                    n.region = rng.hostile_u32();
                }
            }
            format!("trees of thread {v} with hostile regions")
        }
        2 => {
            let depth = *rng.pick(&[1_000u32, 10_000, 50_000]);
            let t = &mut trees[0];
            let base = t.nodes.len() as u32;
            for i in 0..depth {
                let parent = if i == 0 { None } else { Some(base + i - 1) };
                let mut stats = parallax_model::profile::Stats::EMPTY;
                stats.add(1000, 10);
                t.nodes.push(parallax_model::profile::Node {
                    parent,
                    region: 1 + i % 3,
                    stats,
                });
            }
            format!("a path {depth} deep")
        }
        3 => {
            let copy = trees.clone();
            trees.extend(copy);
            "every tree twice".into()
        }
        _ => {
            // A node count beyond the block, behind a valid checksum.
            let mut out = file::header(FileKind::Profile, rank, 0).to_vec();
            let mut payload = Vec::new();
            trees[0].encode(&mut payload);
            let count = rng.hostile_u64();
            // The count is the nine-byte varint after the thread's varint.
            let at = payload.iter().position(|&b| b == 0).unwrap_or(1);
            if payload.len() >= at + 9 {
                payload[at + 1..at + 9].copy_from_slice(&count.to_le_bytes());
            }
            file::push_block(&mut out, &payload);
            std::fs::write(path, out)?;
            return Ok(format!("node count {count}"));
        }
    };
    experiment::write_profiles(path.parent().expect("a process directory"), rank, &trees)
        .map_err(std::io::Error::other)?;
    Ok(what)
}

/// Replaces `file` with something that is not a regular file of its kind.
pub fn odd_file(file: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let kind = rng.below(9);
    odd_file_of_kind(file, kind)
}

/// The kinds of [`odd_file_of_kind`].
pub const ODD_FILES: u64 = 9;

/// Replaces `file` with odd file number `kind` (below [`ODD_FILES`]).
pub fn odd_file_of_kind(file: &Path, kind: u64) -> std::io::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let kind_of = |p: &Path| -> FileKind {
        match p.extension().and_then(|x| x.to_str()) {
            Some("pxd") => FileKind::Definitions,
            Some("pxp") => FileKind::Profile,
            _ => FileKind::Events,
        }
    };
    let _ = std::fs::remove_file(file);
    Ok(match kind {
        0 => {
            mkfifo(file)?;
            "a FIFO".into()
        }
        1 => {
            std::os::unix::fs::symlink("/dev/zero", file)?;
            "a link to /dev/zero".into()
        }
        2 => {
            std::fs::create_dir(file)?;
            "a directory".into()
        }
        3 => {
            std::fs::write(file, b"")?;
            "an empty file".into()
        }
        4 => {
            // A sparse 1 GiB file whose one block claims 2^30 bytes.
            let mut f = std::fs::File::create(file)?;
            f.write_all(&file::header(kind_of(file), 0, 0))?;
            let mut h = [0u8; BLOCK_HEADER_LEN];
            h[0..4].copy_from_slice(&file::BLOCK_MAGIC);
            h[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
            f.write_all(&h)?;
            f.set_len(1 << 30)?;
            "a sparse 1 GiB file whose block claims 2^30 bytes".into()
        }
        5 => {
            std::fs::write(file, file::header(kind_of(file), 0, 0))?;
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o000))?;
            "unreadable".into()
        }
        6 => {
            std::os::unix::fs::symlink("/nonexistent/parallax-testkit", file)?;
            "a dangling link".into()
        }
        7 => {
            std::os::unix::fs::symlink(file, file)?;
            "a link to itself".into()
        }
        _ => {
            std::os::unix::fs::symlink("/dev/urandom", file)?;
            "a link to /dev/urandom".into()
        }
    })
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(std::io::Error::other)?;
    // Safety: a valid C string.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o644) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// An experiment of odd shape.
fn odd_shape(dir: &Path, rng: &mut Rng) -> std::io::Result<String> {
    let ranks: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v
    };
    let first = ranks[0].clone();
    Ok(match rng.below(8) {
        6 => {
            let m = dir.join(experiment::MANIFEST);
            let what = odd_file_of_kind(&m, rng.below(ODD_FILES))?;
            format!("{}: {what}", experiment::MANIFEST)
        }
        7 => {
            let m = dir.join(experiment::MANIFEST);
            let text = match rng.below(3) {
                0 => "{\"wall_seconds\": 1e999, \"status\": [[[[[]]]]]}".to_string(),
                1 => "[".repeat(100_000),
                _ => format!(
                    "{{\"wall_seconds\": -1, \"x\": \"{}\"}}",
                    "y".repeat(1 << 20)
                ),
            };
            std::fs::write(&m, &text)?;
            format!("{} of {} hostile bytes", experiment::MANIFEST, text.len())
        }
        0 => {
            copy_dir(&first, &dir.join("rank-copy"))?;
            "a second process of the same rank".into()
        }
        1 => {
            std::fs::remove_file(first.join(experiment::DEFS_FILE))?;
            format!("{} without definitions", first.display())
        }
        2 => {
            // Another copy of an event file: two files of one thread.
            let f = native_files(dir)
                .into_iter()
                .find(|f| is(f, "pxe"))
                .expect("an event file");
            std::fs::copy(&f, f.with_file_name("thread-99999.pxe"))?;
            "two event files of one thread".into()
        }
        3 => {
            let fifo = dir.join("rank-77777");
            std::fs::create_dir(&fifo)?;
            mkfifo(&fifo.join(experiment::DEFS_FILE))?;
            "a process directory whose definitions are a FIFO".into()
        }
        4 => {
            remove(dir);
            mkfifo(dir)?;
            "the experiment directory is a FIFO".into()
        }
        _ => {
            let p = dir.join("rank-55555");
            std::fs::create_dir(&p)?;
            for i in 0..200 {
                mkfifo(&p.join(format!("thread-{i:05}.pxe")))?;
            }
            copy_file_bytes(
                &first.join(experiment::DEFS_FILE),
                &p.join(experiment::DEFS_FILE),
            )?;
            "a process with 200 FIFOs for event files".into()
        }
    })
}

fn copy_file_bytes(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to).map(|_| ())
}
