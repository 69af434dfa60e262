//! Source lines around a finding's region, embedded in the page. The path
//! comes from the experiment (or a findings file) and may name anything,
//! so only a few lines of a regular file with a source-code extension are
//! read, with a bound, and a file that could block (a FIFO, a device) is
//! never read: it is opened without blocking and checked to be a regular
//! file before reading.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Bytes read from a source file at most: lines past them are not shown.
pub const MAX_READ: u64 = 1 << 20;
/// Lines shown before and after the region's line.
const BEFORE: u64 = 5;
const AFTER: u64 = 6;
/// Characters of one line shown at most.
const LINE_CHARS: usize = 400;

/// Extensions (compared without case) of the files embedded.
pub const EXTENSIONS: [&str; 33] = [
    "c", "h", "i", "cc", "cp", "cpp", "cxx", "c++", "hh", "hp", "hpp", "hxx", "h++", "ipp", "tpp",
    "inl", "cu", "cuh", "f", "for", "ftn", "fpp", "f77", "f90", "f95", "f03", "f08", "rs", "go",
    "java", "py", "jl", "chpl",
];

/// The lines around `line` of `file` (the first line's number and the
/// lines), or why they are not embedded.
pub fn lines(file: &str, line: u64) -> Result<(u64, Vec<String>), String> {
    if line == 0 {
        return Err("no line number".into());
    }
    let path = Path::new(file);
    if !has_source_extension(path) {
        return Err(format!(
            "not a source file (only files named *.{} are embedded)",
            EXTENSIONS.join(", *.")
        ));
    }
    // The file itself must be named as a source file: a link named
    // `x.c` to any other file is not read.
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot be read here ({e})"))?;
    if !has_source_extension(&real) {
        return Err(format!(
            "links to {}, which is not a source file",
            real.display()
        ));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(&real)
        .map_err(|e| format!("cannot be read here ({e})"))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot be read here ({e})"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    (&mut f)
        .take(MAX_READ)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read here ({e})"))?;
    let complete = bytes.len() < MAX_READ as usize;
    let text = String::from_utf8_lossy(&bytes);
    let mut all: Vec<&str> = text.lines().collect();
    if !complete {
        // The last line of a cut-short read may be half of one.
        all.pop();
    }
    let count = all.len() as u64;
    if line > count {
        return Err(if complete {
            format!("line {line} is past the end of the file ({count} lines)")
        } else {
            format!(
                "line {line} is past the first {} MiB of the file, the most read",
                MAX_READ >> 20
            )
        });
    }
    let first = line.saturating_sub(BEFORE).max(1);
    let last = (line + AFTER).min(count);
    let shown: Vec<String> = all[first as usize - 1..last as usize]
        .iter()
        .map(|l| match l.char_indices().nth(LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &l[..cut]),
            None => l.to_string(),
        })
        .collect();
    Ok((first, shown))
}

fn has_source_extension(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("px-src-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn lines_around_the_region() {
        let d = dir("ok");
        let f = d.join("k.F90");
        let text: String = (1..=30).map(|i| format!("line {i}\r\n")).collect();
        std::fs::write(&f, text).unwrap();
        let (first, l) = lines(f.to_str().unwrap(), 10).unwrap();
        assert_eq!(first, 5);
        assert_eq!(l.len(), 12);
        assert_eq!((l[0].as_str(), l[11].as_str()), ("line 5", "line 16"));
        let (first, l) = lines(f.to_str().unwrap(), 2).unwrap();
        assert_eq!((first, l.len()), (1, 8));
        let (_, l) = lines(f.to_str().unwrap(), 30).unwrap();
        assert_eq!(l.last().map(String::as_str), Some("line 30"));
        assert!(lines(f.to_str().unwrap(), 32)
            .unwrap_err()
            .contains("past the end"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn only_regular_source_files_are_read() {
        let d = dir("bad");
        let secret = d.join("secret");
        std::fs::write(&secret, "root:hash\n").unwrap();
        let e = lines(secret.to_str().unwrap(), 1).unwrap_err();
        assert!(e.contains("not a source file"), "{e}");
        let link = d.join("innocent.c");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let e = lines(link.to_str().unwrap(), 1).unwrap_err();
        assert!(e.contains("not a source file"), "{e}");
        // A FIFO would block a reader until someone writes to it.
        let fifo = d.join("pipe.c");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = lines(fifo.to_str().unwrap(), 1).unwrap_err();
        assert_eq!(e, "not a regular file");
        let dev = d.join("zero.c");
        std::os::unix::fs::symlink("/dev/zero", &dev).unwrap();
        assert!(lines(dev.to_str().unwrap(), 1).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reading_stops_after_a_bound() {
        let d = dir("big");
        let f = d.join("big.c");
        let line = format!("{}\n", "x".repeat(999));
        std::fs::write(&f, line.repeat(3000)).unwrap();
        let (_, l) = lines(f.to_str().unwrap(), 100).unwrap();
        assert!(l.iter().all(|x| x.chars().count() <= LINE_CHARS + 1));
        let e = lines(f.to_str().unwrap(), 2000).unwrap_err();
        assert!(e.contains("past the first 1 MiB"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
