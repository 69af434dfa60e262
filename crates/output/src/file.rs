//! Output files (reports, exports, charts, manifests) written safely.
//!
//! The rule every Parallax command follows when it writes a file:
//!
//! - the bytes go to a new temporary file beside the destination, created
//!   exclusively (it never opens an existing file or follows a link), and
//!   the temporary file is renamed over the destination once complete: a
//!   reader sees the old file or the new one, and a write that fails (a
//!   full disk) leaves the destination as it was;
//! - the destination may be absent, an empty regular file, or a regular
//!   file holding an earlier output of the same kind (recognised by its
//!   first bytes, see [`Kind`]); anything else is refused with an error
//!   that names it: a symbolic link (never written through), a directory,
//!   a device or FIFO, or a file of another kind, which Parallax did not
//!   write;
//! - renaming replaces the directory entry itself: a link put in its place
//!   meanwhile is replaced, never followed.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many first bytes of an existing file its kind is recognised by.
pub const HEAD: usize = 4096;

/// What an output file holds, and how an earlier one is recognised.
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    name: &'static str,
    test: Test,
}

#[derive(Clone, Copy, Debug)]
enum Test {
    Prefix(&'static [&'static [u8]]),
    Func(fn(&[u8]) -> bool),
}

impl Kind {
    /// Files that start with one of `prefixes`; `name` says what they
    /// hold, with its article ("a CSV profile").
    pub const fn starting_with(name: &'static str, prefixes: &'static [&'static [u8]]) -> Kind {
        Kind {
            name,
            test: Test::Prefix(prefixes),
        }
    }

    /// Files whose first bytes (at most [`HEAD`]) `test` accepts.
    pub const fn recognised_by(name: &'static str, test: fn(&[u8]) -> bool) -> Kind {
        Kind {
            name,
            test: Test::Func(test),
        }
    }

    /// An HTML page.
    pub const HTML: Kind = Kind::recognised_by("an HTML page", is_html);

    /// An SVG image.
    pub const SVG: Kind = Kind::recognised_by("an SVG image", is_svg);

    /// What the kind holds, with its article, for messages.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether a file starting with `head` is of this kind.
    pub fn recognises(&self, head: &[u8]) -> bool {
        match self.test {
            Test::Prefix(p) => p.iter().any(|p| head.starts_with(p)),
            Test::Func(f) => f(head),
        }
    }
}

fn starts_with_ignoring_case(head: &[u8], prefix: &[u8]) -> bool {
    head.len() >= prefix.len() && head[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn is_html(head: &[u8]) -> bool {
    starts_with_ignoring_case(head.trim_ascii_start(), b"<!doctype html")
}

fn is_svg(head: &[u8]) -> bool {
    let h = head.trim_ascii_start();
    h.starts_with(b"<svg") || (h.starts_with(b"<?xml") && h.windows(4).any(|w| w == b"<svg"))
}

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, message)
}

/// Checks that `path` may be replaced by an output of `kind` (see the
/// module's rule); the error says why not.
pub fn check_replaceable(path: &Path, kind: Kind) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let shown = path.display();
    let t = meta.file_type();
    if t.is_symlink() {
        return Err(refused(format!(
            "{shown} is a symbolic link; Parallax never writes through one: remove it or choose \
             another file"
        )));
    }
    if t.is_dir() {
        return Err(refused(format!(
            "{shown} is a directory: choose a file name"
        )));
    }
    if !t.is_file() {
        let what = if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a device"
        };
        return Err(refused(format!(
            "{shown} is {what}, not a regular file: choose another file"
        )));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    // O_NOFOLLOW: a link put there since the check is not read through.
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let mut head = Vec::with_capacity(HEAD);
    (&mut f).take(HEAD as u64).read_to_end(&mut head)?;
    if kind.recognises(&head) {
        Ok(())
    } else {
        Err(refused(format!(
            "{shown} exists and is not {} that Parallax wrote; it was left as it is: remove it or \
             choose another file",
            kind.name
        )))
    }
}

/// An output file being written: a temporary file beside the destination
/// until [`OutputFile::commit`] renames it over the destination. Dropped
/// without a commit, the temporary file is removed and the destination
/// stays as it was.
#[derive(Debug)]
pub struct OutputFile {
    file: Option<File>,
    tmp: PathBuf,
    path: PathBuf,
    kind: Kind,
}

/// A temporary file's name beside `path`: hidden, naming the process, and
/// unique within it.
fn temporary_beside(path: &Path) -> io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", path.display()),
        )
    })?;
    let mut base = name.to_string_lossy().into_owned();
    // Within the 255 bytes of a file name, with room for the suffix.
    while base.len() > 180 {
        base.pop();
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = format!(".{base}{}{}-{n}", TEMPORARY_MARK, std::process::id());
    Ok(path.with_file_name(tmp))
}

/// What the names of temporary files contain (`.NAME.parallax-tmp-PID-N`),
/// so that an experiment directory holding one left by a killed process is
/// still recognised as Parallax's.
pub const TEMPORARY_MARK: &str = ".parallax-tmp-";

impl OutputFile {
    /// Starts writing `path`, which must be replaceable by an output of
    /// `kind` ([`check_replaceable`]).
    pub fn create(path: &Path, kind: Kind) -> io::Result<OutputFile> {
        check_replaceable(path, kind)?;
        let tmp = temporary_beside(path)?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        Ok(OutputFile {
            file: Some(file),
            tmp,
            path: path.to_path_buf(),
            kind,
        })
    }

    /// The destination.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Puts the complete file in place of the destination (checked again
    /// first: it may have changed while the file was written).
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("committed once");
        file.sync_data()?;
        drop(file);
        check_replaceable(&self.path, self.kind)?;
        std::fs::rename(&self.tmp, &self.path)?;
        // Renamed: nothing left for drop to remove.
        self.tmp = PathBuf::new();
        Ok(())
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("output file already committed"))
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` as the file `path` of `kind`, by the module's rule.
pub fn write(path: &Path, kind: Kind, bytes: &[u8]) -> io::Result<()> {
    let mut f = OutputFile::create(path, kind)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: Kind = Kind::starting_with("a test file", &[b"TEST"]);

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("parallax-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_only_files_of_its_kind_and_never_follows_links() {
        let d = dir("rules");
        let out = d.join("out");
        write(&out, TEXT, b"TEST 1").unwrap();
        write(&out, TEXT, b"TEST 2").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"TEST 2");
        // An empty file may be replaced, another kind may not.
        let empty = d.join("empty");
        std::fs::write(&empty, b"").unwrap();
        write(&empty, TEXT, b"TEST").unwrap();
        let other = d.join("other");
        std::fs::write(&other, b"precious").unwrap();
        let e = write(&other, TEXT, b"TEST").unwrap_err();
        assert!(e.to_string().contains("not a test file"), "{e}");
        assert_eq!(std::fs::read(&other).unwrap(), b"precious");
        // A link, even to a file of the kind, is refused and its target kept.
        let target = d.join("target");
        std::fs::write(&target, b"TEST target").unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write(&link, TEXT, b"TEST").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"TEST target");
        let e = write(&d, TEXT, b"TEST").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        // Nothing temporary is left behind.
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(TEMPORARY_MARK))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_unfinished_file_leaves_the_destination_alone() {
        let d = dir("drop");
        let out = d.join("out");
        std::fs::write(&out, b"TEST old").unwrap();
        {
            let mut f = OutputFile::create(&out, TEXT).unwrap();
            f.write_all(b"TEST half").unwrap();
        }
        assert_eq!(std::fs::read(&out).unwrap(), b"TEST old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn common_kinds() {
        assert!(Kind::HTML.recognises(b"<!DOCTYPE html>\n<html>"));
        assert!(Kind::SVG.recognises(b"<?xml version=\"1.0\"?>\n<svg xmlns="));
        assert!(!Kind::SVG.recognises(b"#!/bin/sh\n"));
    }
}
