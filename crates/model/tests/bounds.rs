//! The readers' resource bounds: files that are not regular files are
//! refused at once with an error naming them, and a block costs at most the
//! bytes its file really has (memory counted by this binary's allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use parallax_model::defs::{Def, Mode, ProcessInfo};
use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{self, EventReader, EventWriter, Experiment};
use parallax_model::file::{self, FileKind, BLOCK_HEADER_LEN};
use parallax_model::ErrorKind;

/// The system allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// Safety: every call goes to the system allocator unchanged; the counters
// only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = HELD.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new > l.size() {
                let now = HELD.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HELD.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Bytes allocated at the peak of `f`, above what was held before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed) - before)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "parallax-model-bounds-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // Safety: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// A one-process experiment with one event file, in `dir`.
fn experiment(dir: &Path) -> PathBuf {
    let p = dir.join(experiment::rank_dir(0));
    std::fs::create_dir_all(&p).unwrap();
    let defs = vec![
        Def::Process(ProcessInfo {
            rank: 0,
            ranks: 1,
            pid: 1,
            host: "h".into(),
            program: "p".into(),
            args: Vec::new(),
            start_unix_ns: 0,
            mode: Mode::Trace,
            version: "v".into(),
        }),
        Def::Location {
            thread: 0,
            name: String::new(),
            os_tid: 0,
        },
    ];
    experiment::write_defs(&p, 0, &defs).unwrap();
    let mut w = EventWriter::create(&p.join(experiment::events_file(0)), 0, 0, 256).unwrap();
    for i in 0..100 {
        w.push(&Event {
            time: 10 * i,
            kind: if i % 2 == 0 {
                EventKind::Enter { region: 1 }
            } else {
                EventKind::Leave { region: 1 }
            },
        })
        .unwrap();
    }
    w.finish().unwrap();
    p
}

/// `f`'s result, or a failure if it takes more than ten seconds (a reader
/// blocked on a FIFO stays blocked: its thread is left behind).
fn within_10s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what}: no answer in 10 s"))
}

#[test]
fn files_that_are_not_regular_are_refused_by_name() {
    let dir = tmp("odd");
    let p = experiment(&dir);
    // An event file that is a FIFO, another that is /dev/zero, a profile
    // that is a FIFO: opening the experiment skips them with a warning.
    mkfifo(&p.join(experiment::events_file(1)));
    std::os::unix::fs::symlink("/dev/zero", p.join(experiment::events_file(2))).unwrap();
    mkfifo(&p.join(experiment::PROFILE_FILE));
    let d = dir.clone();
    let exp = within_10s("opening", move || Experiment::open(&d).unwrap());
    let proc0 = &exp.processes[0];
    assert!(proc0.profile.is_none());
    assert_eq!(
        proc0
            .locations
            .values()
            .filter(|l| l.events.is_some())
            .count(),
        1
    );
    let w = proc0.warnings.join("\n");
    assert!(
        w.contains("thread-00001.pxe: a FIFO, not a regular file"),
        "{w}"
    );
    assert!(
        w.contains("thread-00002.pxe: a character device, not a regular file"),
        "{w}"
    );
    assert!(w.contains("profile.pxp: a FIFO"), "{w}");
    // Read directly, each is an error naming the file.
    for (name, what) in [
        (experiment::events_file(1), "a FIFO"),
        (experiment::events_file(2), "a character device"),
    ] {
        let path = p.join(&name);
        let e = within_10s("reading", move || EventReader::open(&path).unwrap_err());
        assert_eq!(e.kind(), ErrorKind::Io);
        assert!(
            e.to_string().contains(&name) && e.to_string().contains(what),
            "{e}"
        );
    }
    // Definitions that are a FIFO, or a directory, fail the whole open.
    std::fs::remove_file(p.join(experiment::DEFS_FILE)).unwrap();
    mkfifo(&p.join(experiment::DEFS_FILE));
    let d = dir.clone();
    let e = within_10s("opening", move || Experiment::open(&d).unwrap_err());
    assert!(e.to_string().contains("defs.pxd: a FIFO"), "{e}");
    std::fs::remove_file(p.join(experiment::DEFS_FILE)).unwrap();
    std::fs::create_dir(p.join(experiment::DEFS_FILE)).unwrap();
    let d = dir.clone();
    let e = within_10s("opening", move || Experiment::open(&d).unwrap_err());
    assert!(e.to_string().contains("defs.pxd: a directory"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn small_text_files_are_bounded() {
    let dir = tmp("text");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let e = within_10s("reading a FIFO", move || {
        file::read_text(&fifo, 1 << 20).unwrap_err()
    });
    assert!(e.to_string().contains("a FIFO"), "{e}");
    let z = dir.join("zero");
    std::os::unix::fs::symlink("/dev/zero", &z).unwrap();
    let e = within_10s("reading /dev/zero", move || {
        file::read_text(&z, 1 << 20).unwrap_err()
    });
    assert!(e.to_string().contains("character device"), "{e}");
    let big = dir.join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let (e, peak) = peak_of(|| file::read_text(&big, 1 << 20).unwrap_err());
    assert!(e.to_string().contains("too long"), "{e}");
    assert!(peak < 1 << 20, "{peak} bytes allocated");
    let ok = dir.join("ok");
    std::fs::write(&ok, "fine\n").unwrap();
    assert_eq!(file::read_text(&ok, 100).unwrap(), "fine\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_block_claiming_more_than_its_file_costs_nothing() {
    let dir = tmp("sparse");
    let path = dir.join("sparse.pxe");
    // A sparse 1 GiB file whose one block claims 2^30 bytes: 32 bytes more
    // than the file has.
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&file::header(FileKind::Events, 0, 0)).unwrap();
    let mut h = [0u8; BLOCK_HEADER_LEN];
    h[0..4].copy_from_slice(&file::BLOCK_MAGIC);
    h[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
    f.write_all(&h).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let ((events, err), peak) = peak_of(|| EventReader::open(&path).unwrap().read_all());
    assert!(events.is_empty());
    let err = err.expect("an error");
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert!(
        err.to_string().contains("block of 1073741824 bytes"),
        "{err}"
    );
    assert!(
        peak < 1 << 20,
        "{peak} bytes allocated for a block the file cannot hold"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
