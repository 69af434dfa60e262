//! Resource bounds of the reading commands, each on a real experiment run
//! through the real CLI under a time and a memory limit: hostile sizes
//! (time spans, ranks, region ids) cost no memory, files that are not
//! regular are refused by name, memory is linear in the call depth and
//! does not grow with the number of events.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use parallax_model::defs::Def;
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{self, EventReader, EventWriter};
use parallax_testkit::limits::{self, Limits, Outcome};
use parallax_testkit::{base, corrupt};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("parallax-bounds-{name}-{}", std::process::id()));
    corrupt::remove(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `parallax ARGS` under `limits`.
fn run(args: &[&dyn AsRef<OsStr>], limits: &Limits) -> Outcome {
    let mut c = Command::new(env!("CARGO_BIN_EXE_parallax"));
    for a in args {
        c.arg(a.as_ref());
    }
    c.env("NO_COLOR", "1")
        .env("PARALLAX_DB", "/nonexistent/none.sqlite");
    limits::run(&mut c, limits).unwrap()
}

/// Checks that the command gave a result or a clear error within the
/// limits, and returns its outcome.
fn bounded(what: &str, args: &[&dyn AsRef<OsStr>], limits: &Limits) -> Outcome {
    let o = run(args, limits);
    let p = o.problems(limits.memory);
    assert!(
        p.is_empty(),
        "{what}: {} (peak {} MiB)\n{}",
        p.join("; "),
        o.max_rss >> 20,
        o.stderr_tail()
    );
    o
}

/// Replaces the events of `path` (rank, thread kept) with `events`.
fn rewrite_events(path: &Path, events: &[Event]) {
    let r = EventReader::open(path).unwrap();
    let (rank, thread) = (r.rank, r.thread);
    drop(r);
    let mut w = EventWriter::create(path, rank, thread, 4096).unwrap();
    for e in events {
        w.push(e).unwrap();
    }
    w.finish().unwrap();
}

/// Process directory `rank-00000` of `dir`.
fn rank0(dir: &Path) -> PathBuf {
    dir.join(experiment::rank_dir(0))
}

#[test]
fn compensation_of_an_implausible_timestamp_costs_no_memory() {
    // Threads on one core: compensation counts the probes' share of the
    // core in bins of a quarter millisecond. One event 2^50 ticks (13
    // days) after the others.
    let d = tmp("timestamp");
    let exp = d.join("exp");
    base::threads(&exp).unwrap();
    let f = rank0(&exp).join(experiment::events_file(1));
    let (mut events, _) = EventReader::open(&f).unwrap().read_all();
    let last = events.last().unwrap().time;
    events.push(Event {
        time: last + (1 << 50),
        kind: EventKind::FlushBegin,
    });
    events.push(Event {
        time: last + (1 << 50) + 10,
        kind: EventKind::FlushEnd,
    });
    rewrite_events(&f, &events);
    let lim = Limits {
        time: Duration::from_secs(60),
        memory: 1 << 30,
    };
    let o = bounded(
        "compensate",
        &[&"compensate", &exp, &"--out", &d.join("c")],
        &lim,
    );
    assert_eq!(o.status, Some(0), "{}", o.stderr);
    corrupt::remove(&d);
}

#[test]
fn a_rank_of_ffffffff_costs_no_memory() {
    // The header of rank 1's definitions says rank 0xffffffff: the replay
    // of compensation (two worker threads) and of the HTML report's
    // analysis keep the ranks whose locations stay on one worker.
    let d = tmp("rank");
    let exp = d.join("exp");
    base::mpi(&exp).unwrap();
    let p1 = exp.join(experiment::rank_dir(1));
    let (_, defs) = experiment::read_defs(&p1).unwrap();
    experiment::write_defs(&p1, u32::MAX, &defs).unwrap();
    let lim = Limits {
        time: Duration::from_secs(60),
        memory: 1 << 30,
    };
    bounded(
        "compensate",
        &[
            &"compensate",
            &exp,
            &"--threads",
            &"2",
            &"--out",
            &d.join("c"),
        ],
        &lim,
    );
    bounded("analyze", &[&"analyze", &"--threads", &"2", &exp], &lim);
    corrupt::remove(&d);
}

#[test]
fn an_entry_of_a_huge_region_id_costs_no_memory() {
    let d = tmp("entry");
    let exp = d.join("exp");
    base::threads(&exp).unwrap();
    let p = rank0(&exp);
    let (rank, mut defs) = experiment::read_defs(&p).unwrap();
    defs.push(Def::Entry {
        region: u32::MAX - 2,
        entry: parallax_model::defs::Entry::Preserving,
    });
    experiment::write_defs(&p, rank, &defs).unwrap();
    let lim = Limits {
        time: Duration::from_secs(60),
        memory: 1 << 30,
    };
    bounded(
        "compensate",
        &[&"compensate", &exp, &"--out", &d.join("c")],
        &lim,
    );
    corrupt::remove(&d);
}

#[test]
fn files_that_are_not_regular_are_named_not_read() {
    let d = tmp("odd");
    let exp = d.join("exp");
    base::mpi(&exp).unwrap();
    let p = rank0(&exp);
    // An event file that is a FIFO, one that is /dev/zero; the profile a
    // FIFO.
    corrupt::mkfifo(&p.join(experiment::events_file(7))).unwrap();
    std::os::unix::fs::symlink("/dev/zero", p.join(experiment::events_file(8))).unwrap();
    std::fs::remove_file(p.join(experiment::PROFILE_FILE)).unwrap();
    corrupt::mkfifo(&p.join(experiment::PROFILE_FILE)).unwrap();
    let lim = Limits::new(60);
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    for (what, args) in [
        ("report", vec![&"report" as &dyn AsRef<OsStr>, &exp]),
        ("analyze", vec![&"analyze", &exp]),
        (
            "export",
            vec![
                &"export",
                &exp,
                &"--format",
                &"csv",
                &"--out",
                &out.join("x"),
            ],
        ),
        (
            "compensate",
            vec![&"compensate", &exp, &"--out", &out.join("c")],
        ),
    ] {
        let o = bounded(what, &args, &lim);
        assert_eq!(o.status, Some(0), "{what}: {}", o.stderr);
        for name in [
            "thread-00007.pxe: a FIFO",
            "thread-00008.pxe: a character device",
        ] {
            if what == "report" {
                // Warnings are wrapped: compare words.
                let words = String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                assert!(
                    words.contains(name),
                    "{what}: {}",
                    String::from_utf8_lossy(&o.stdout)
                );
            }
        }
    }
    // Files given on the command line.
    let fifo = d.join("fifo");
    corrupt::mkfifo(&fifo).unwrap();
    let o = bounded(
        "analyze --baselines FIFO",
        &[&"analyze", &"--baselines", &fifo, &exp],
        &lim,
    );
    assert_eq!(o.status, Some(2));
    assert!(
        o.stderr.contains("fifo: a FIFO, not a regular file"),
        "{}",
        o.stderr
    );
    corrupt::remove(&d);
}

#[test]
fn a_sparse_file_whose_block_claims_a_gigabyte_costs_no_memory() {
    let d = tmp("sparse");
    let exp = d.join("exp");
    base::threads(&exp).unwrap();
    let f = rank0(&exp).join(experiment::events_file(0));
    corrupt::odd_file_of_kind(&f, 4).unwrap();
    // Far less than the gigabyte the block claims.
    let lim = Limits {
        time: Duration::from_secs(60),
        memory: 512 << 20,
    };
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let o = bounded("report", &[&"report", &exp], &lim);
    // The warning may be wrapped: compare its words.
    let words = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(words.contains("block of 1073741824 bytes"), "{words}");
    bounded(
        "export perfetto",
        &[
            &"export",
            &exp,
            &"--format",
            &"perfetto",
            &"--out",
            &out.join("p"),
        ],
        &lim,
    );
    bounded("analyze", &[&"analyze", &exp], &lim);
    corrupt::remove(&d);
}

#[test]
fn huge_profile_statistics_give_a_flame_graph() {
    // Times of 2^62 ns in every node of a profile: their sum overflows 64
    // bits in the flame graph tool unless scaled.
    let d = tmp("huge-stats");
    let exp = d.join("exp");
    base::mpi(&exp).unwrap();
    let p = rank0(&exp);
    let (mut trees, err) = experiment::Process::open(&p).unwrap().profiles().unwrap();
    assert!(err.is_none());
    for t in trees.iter_mut() {
        for n in t.nodes.iter_mut() {
            n.stats.count = 1 << 49;
            n.stats.inclusive = 1 << 62;
            n.stats.exclusive = 1 << 62;
            n.stats.max = 1 << 62;
        }
    }
    experiment::write_profiles(&p, 0, &trees).unwrap();
    let svg = d.join("x.svg");
    let o = bounded(
        "export svg",
        &[&"export", &exp, &"--format", &"svg", &"--out", &svg],
        &Limits::new(60),
    );
    assert_eq!(o.status, Some(0), "{}", o.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("main") && text.contains("× 2^"),
        "no scaled graph"
    );
    corrupt::remove(&d);
}

#[test]
fn long_region_names_are_shown_bounded() {
    // A 3,000-deep recursion whose region's name is 64 KiB long: a path of
    // 64 such frames per CSV row would take 12 GB.
    let d = tmp("long-names");
    let exp = d.join("exp");
    base::deep(&exp, 3_000, true).unwrap();
    let p = rank0(&exp);
    let (rank, mut defs) = experiment::read_defs(&p).unwrap();
    for def in defs.iter_mut() {
        if let Def::Region { name, .. } = def {
            *name = "recurse_".repeat(8192);
        }
    }
    experiment::write_defs(&p, rank, &defs).unwrap();
    let lim = Limits::new(120);
    for f in ["csv", "json", "folded", "hatchet"] {
        let file = d.join(format!("x.{f}"));
        let o = bounded(
            f,
            &[&"export", &exp, &"--format", &f, &"--out", &file],
            &lim,
        );
        assert_eq!(o.status, Some(0), "{f}: {}", o.stderr);
        let size = std::fs::metadata(&file).unwrap().len();
        // A name shown at most 4 KiB a row, a path 64 frames of 256 bytes.
        assert!(size < 3_000 * 25_000, "{f}: {size} bytes");
    }
    let o = bounded("report --json", &[&"report", &"--json", &exp], &lim);
    assert!(o.stdout_len < 3_000 * 2 * 5_000, "{} bytes", o.stdout_len);
    corrupt::remove(&d);
}

/// Peak resident set of `report` and of every export of `exp`, and the
/// size of each output, by name.
fn report_and_exports(exp: &Path, out: &Path, lim: &Limits) -> Vec<(String, u64, u64)> {
    let mut v = Vec::new();
    let o = bounded("report", &[&"report", &exp], lim);
    v.push(("report".to_string(), o.max_rss, o.stdout_len));
    let o = bounded("report --json", &[&"report", &"--json", &exp], lim);
    assert_eq!(o.status, Some(0), "{}", o.stderr);
    v.push(("report --json".to_string(), o.max_rss, o.stdout_len));
    for f in [
        "otf2", "perfetto", "chrome", "folded", "svg", "csv", "json", "hatchet",
    ] {
        let file = out.join(format!("x.{f}"));
        let o = bounded(f, &[&"export", &exp, &"--format", &f, &"--out", &file], lim);
        assert_eq!(o.status, Some(0), "{f}: {}", o.stderr);
        let size = if f == "otf2" {
            dir_size(&out.join("x"))
        } else {
            std::fs::metadata(&file).unwrap().len()
        };
        v.push((f.to_string(), o.max_rss, size));
    }
    v
}

fn dir_size(d: &Path) -> u64 {
    std::fs::read_dir(d)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                dir_size(&p)
            } else {
                std::fs::metadata(&p).map_or(0, |m| m.len())
            }
        })
        .sum()
}

/// The `recursion` example (workloads/rust/recursion.rs), built next to
/// the parallax binary by `cargo test`.
fn recursion_program() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_parallax"));
    let p = bin.parent().unwrap().join("examples").join("recursion");
    assert!(
        p.is_file(),
        "{} missing: `cargo test -p parallax-cli` builds it",
        p.display()
    );
    p
}

#[test]
fn report_and_exports_are_linear_in_the_call_depth() {
    // A program recursing 100,000 calls deep, measured by `parallax run`
    // (trace and profile, the profile raised to keep the whole path); then
    // the same without its profile, so that the tree is built from the
    // trace.
    let depth = 100_000u64;
    let d = tmp("deep");
    let measured = d.join("measured");
    let o = Command::new(env!("CARGO_BIN_EXE_parallax"))
        .args(["run", "--no-db", "--no-report", "--out"])
        .arg(&measured)
        .arg("--")
        .arg(recursion_program())
        .arg(depth.to_string())
        .env("PARALLAX_MAX_DEPTH", "200000")
        .env("PARALLAX_PROFILE_NODES", "262144")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let from_trace = d.join("from-trace");
    corrupt::copy_dir(&measured, &from_trace).unwrap();
    std::fs::remove_file(rank0(&from_trace).join(experiment::PROFILE_FILE)).unwrap();
    for (name, exp) in [("profile", &measured), ("trace", &from_trace)] {
        let out = d.join(format!("out-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        let lim = Limits {
            time: Duration::from_secs(120),
            memory: 2 << 30,
        };
        let rows = report_and_exports(exp, &out, &lim);
        for (what, rss, size) in rows {
            eprintln!(
                "depth {depth} ({name}): {what}: peak {} MiB, {size} bytes",
                rss >> 20
            );
            assert!(rss < 256 << 20, "{what}: peak {} MiB", rss >> 20);
            // Each node's row, frame or record takes a bounded number of
            // bytes (a folded line and a CSV path are bounded in frames):
            // with a full path per node, the CSV alone would take 40 GB.
            assert!(size < 1000 * depth, "{what}: {size} bytes");
        }
        // The whole recursion is there, the paths bounded.
        let csv = std::fs::read_to_string(out.join("x.csv")).unwrap();
        assert_eq!(
            csv.lines().count() as u64,
            depth + 1,
            "a row per call and a header"
        );
        let last = csv.lines().last().unwrap();
        assert!(last.contains(";…;"), "{last}");
        let folded = std::fs::read_to_string(out.join("x.folded")).unwrap();
        assert!(folded.lines().any(|l| l.contains(";… ")), "no cut line");
    }
    corrupt::remove(&d);
}

#[test]
fn report_and_exports_do_not_grow_with_the_events() {
    // The same program, ten times longer.
    let lim = Limits {
        time: Duration::from_secs(300),
        memory: 2 << 30,
    };
    let mut peaks = Vec::new();
    for events in [300_000u64, 3_000_000] {
        let d = tmp(&format!("events-{events}"));
        let exp = d.join("exp");
        base::large(&exp, events, 2).unwrap();
        let out = d.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let r = report_and_exports(&exp, &out, &lim);
        for (what, rss, _) in &r {
            eprintln!("{events} events: {what}: peak {} MiB", rss >> 20);
        }
        peaks.push(r);
        corrupt::remove(&d);
    }
    for (small, large) in peaks[0].iter().zip(&peaks[1]) {
        // Ten times the events: the same memory, give or take 16 MiB.
        assert!(
            large.1 < small.1 + (16 << 20),
            "{}: {} MiB for 300,000 events, {} MiB for 3,000,000",
            small.0,
            small.1 >> 20,
            large.1 >> 20
        );
    }
}
