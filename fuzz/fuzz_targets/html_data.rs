//! Arbitrary bytes as a small experiment (one or two ranks of one or two
//! threads: region names, a stream of enters, leaves, messages, thread
//! hand-offs and flushes with arbitrary time steps, a findings list), the
//! HTML report built from it with an arbitrary level of detail. Nothing
//! may panic, and the page's data must be inert in its script element,
//! parse as JSON, and hold no more single visits than asked for.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use parallax_db::Finding;
use parallax_model::defs::{ClockSource, Def, Mode, ProcessInfo};
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{events_file, rank_dir, write_defs, EventWriter, Experiment};
use parallax_model::region::RegionKind;
use parallax_report::html::{self, Detail, Options};

/// The input, read a byte at a time (zeros once it runs out).
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
        // Mostly small, sometimes huge.
        match self.u8() {
            255 => u64::from_le_bytes(std::array::from_fn(|_| self.u8())),
            b => b as u64 * (1 + self.u8() as u64),
        }
    }

    fn text(&mut self) -> String {
        let n = (self.u8() % 12) as usize;
        let raw: Vec<u8> = (0..n).map(|_| self.u8()).collect();
        String::from_utf8_lossy(&raw).into_owned()
    }
}

/// Source places regions may name: none of them may be read but a
/// regular file with a source extension (none exists here).
const FILES: [&str; 4] = ["", "kernel.c", "/dev/zero", "/proc/self/mem.f90"];

const KINDS: [RegionKind; 5] = [
    RegionKind::Function,
    RegionKind::Barrier,
    RegionKind::Send,
    RegionKind::Lock,
    RegionKind::Runtime,
];

fn write(dir: &Path, b: &mut Bytes) -> Vec<String> {
    let ranks = 1 + (b.u8() % 2) as u32;
    let threads = 1 + (b.u8() % 2) as u32;
    let nregions = 1 + (b.u8() % 5) as u32;
    let names: Vec<String> = (0..nregions).map(|_| b.text()).collect();
    for r in 0..ranks {
        let pdir = dir.join(rank_dir(r));
        std::fs::create_dir_all(&pdir).unwrap();
        let mut defs = vec![
            Def::Process(ProcessInfo {
                rank: r,
                ranks,
                pid: 100 + r,
                host: b.text(),
                program: b.text(),
                args: vec![b.text()],
                start_unix_ns: 1_790_000_000_000_000_000,
                mode: Mode::Trace,
                version: "fuzz".into(),
            }),
            Def::Clock {
                source: ClockSource::Monotonic,
                nominal_hz: 1e9,
            },
            Def::ClockSync {
                tick: 0,
                mono_ns: 1_000,
                unix_ns: 1_790_000_000_000_000_000,
            },
        ];
        for (i, name) in names.iter().enumerate() {
            defs.push(Def::Region {
                id: i as u32 + 1,
                kind: KINDS[b.u8() as usize % KINDS.len()],
                name: name.clone(),
                file: FILES[b.u8() as usize % FILES.len()].into(),
                line: b.u8() as u32,
            });
        }
        for t in 0..threads {
            defs.push(Def::Location {
                thread: t,
                name: b.text(),
                os_tid: 1000 + t,
            });
        }
        write_defs(&pdir, r, &defs).unwrap();
        for t in 0..threads {
            let block = 64 + b.u8() as usize * 8;
            let mut w = EventWriter::create(&pdir.join(events_file(t)), r, t, block).unwrap();
            let mut time = b.u64();
            for _ in 0..(b.u8() as usize * 4) {
                time = time.saturating_add(b.u64());
                let x = b.u8();
                let kind = match x % 10 {
                    0..=3 => EventKind::Enter {
                        region: (b.u8() as u32) % (nregions + 2),
                    },
                    4..=6 => EventKind::Leave { region: 0 },
                    7 => EventKind::Send {
                        peer: (b.u8() % 4) as u32,
                        tag: (b.u8() % 2) as u32,
                        comm: 0,
                        bytes: b.u64(),
                    },
                    8 => EventKind::Recv {
                        peer: (b.u8() % 4) as u32,
                        tag: (b.u8() % 2) as u32,
                        comm: 0,
                        bytes: b.u64(),
                    },
                    _ => match b.u8() % 4 {
                        0 => EventKind::ThreadCreate { token: 1 },
                        1 => EventKind::ThreadBegin { token: 1 },
                        2 => EventKind::FlushBegin,
                        _ => EventKind::FlushEnd,
                    },
                };
                w.push(&Event { time, kind }).unwrap();
            }
            w.finish().unwrap();
        }
    }
    names
}

fn dir() -> PathBuf {
    std::env::temp_dir().join(format!("parallax-fuzz-html-{}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let dir = dir();
    let _ = std::fs::remove_dir_all(&dir);
    let mut b = Bytes(data);
    let names = write(&dir, &mut b);
    let exp = Experiment::open(&dir).unwrap();
    let max_visits = b.u8() as usize;
    let window = match b.u8() % 3 {
        0 => None,
        _ => {
            let a = b.u64();
            Some((a, a.saturating_add(1 + b.u64())))
        }
    };
    let findings: Vec<Finding> = (0..b.u8() % 3)
        .map(|_| Finding {
            pattern: "fuzz".into(),
            severity_s: 0.001,
            rank: Some((b.u8() % 3) as u32),
            thread: Some((b.u8() % 3) as u32),
            region: names.get(b.u8() as usize % (names.len() + 1)).cloned(),
            culprits: Vec::new(),
            hint: None,
            source: Some(format!(
                "{}:{}",
                FILES[b.u8() as usize % FILES.len()],
                b.u8()
            )),
        })
        .collect();
    let opts = Options {
        title: Some(b.text()),
        findings,
        detail: Detail { max_visits, window },
        ..Options::default()
    };
    let (page, built) = html::page(&exp, &opts).unwrap();
    // The data element ends where the page put its end, and nothing in it
    // could end it or open a comment.
    let open = "<script id=\"px-data\" type=\"application/json\">";
    let start = page.find(open).unwrap() + open.len();
    let len = page[start..].find("</script>").unwrap();
    let json = &page[start..start + len];
    assert!(!json.contains('<') && !json.contains('>'), "{json}");
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(page.matches("</script>").count(), 2);
    if let Some(d) = doc["measured"]["timeline"]["detail"].as_object() {
        let kept = d["kept"].as_u64().unwrap();
        assert!(
            kept <= max_visits as u64 + 8,
            "{kept} visits kept of {max_visits}"
        );
        assert!(kept <= built.visits);
    }
    std::fs::remove_dir_all(&dir).unwrap();
});
