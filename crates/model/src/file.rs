//! File headers and checksummed blocks, shared by every Parallax file
//! (see FORMAT.md, "Files and blocks").

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::{Error, ErrorKind};

/// Current version of every Parallax file. Bump it when any record, header or
/// numbering in this crate changes meaning.
pub const VERSION: u16 = 9;

/// Length of a file header.
pub const HEADER_LEN: usize = 16;

/// Length of a block header.
pub const BLOCK_HEADER_LEN: usize = 16;

/// Marks the start of every block ("PBLK" in little-endian order).
pub const BLOCK_MAGIC: [u8; 4] = *b"PBLK";

/// Largest payload a block may declare; anything larger is corruption.
pub const MAX_BLOCK: usize = 1 << 30;

/// The most a block reader of a stream of unknown length allocates before
/// it has read the bytes.
const RESERVE_AT_ONCE: usize = 64 << 20;

/// Opens `path` for reading if it is a regular file, with its length.
///
/// A FIFO, a device (`/dev/zero`), a socket or a directory is refused
/// with an error naming the file and what it is, before anything is read:
/// such a file can block the opening or the reading forever, or never
/// end. The file is opened non-blocking (opening a FIFO then returns at
/// once) and checked with `fstat` on the open descriptor, so a file
/// swapped after a check of its path is caught too. Symbolic links are
/// followed.
pub fn open_regular(path: &Path) -> Result<(File, u64), Error> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = f.metadata().map_err(|e| Error::io(path, e))?;
    let t = meta.file_type();
    if !t.is_file() {
        let what = if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() {
            "a character device"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(Error::new(
            ErrorKind::Io,
            format!("{what}, not a regular file: not read"),
        )
        .at(path));
    }
    // Reads of a regular file never block, whatever the flag says.
    Ok((f, meta.len()))
}

/// The text of the regular file `path`, refused if it is longer than
/// `limit` bytes or not UTF-8: for the small files a command is given
/// (baselines, findings, manifests).
pub fn read_text(path: &Path, limit: u64) -> Result<String, Error> {
    let (f, len) = open_regular(path)?;
    if len > limit {
        return Err(Error::new(
            ErrorKind::Invalid,
            format!("{len} bytes: too long for this file (at most {limit})"),
        )
        .at(path));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // One byte more than allowed tells a file that grew since.
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::Invalid,
            format!("grew past {limit} bytes while read"),
        )
        .at(path));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::Invalid, "not UTF-8 text").at(path))
}

/// The kinds of Parallax files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// One location's event stream (`.pxe`).
    Events,
    /// One process's definitions (`.pxd`).
    Definitions,
    /// One process's call-path profiles (`.pxp`).
    Profile,
    /// One location's trace buffer, mapped by the runtime (`.pxb`).
    Spill,
}

impl FileKind {
    /// The magic number at the start of files of this kind.
    pub fn magic(self) -> [u8; 4] {
        match self {
            FileKind::Events => *b"PLXE",
            FileKind::Definitions => *b"PLXD",
            FileKind::Profile => *b"PLXP",
            FileKind::Spill => *b"PLXB",
        }
    }

    /// Human name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Events => "event",
            FileKind::Definitions => "definitions",
            FileKind::Profile => "profile",
            FileKind::Spill => "spill",
        }
    }
}

/// The 16-byte header of a file: magic, version, and the rank and thread it
/// belongs to (thread 0 for process-wide files).
pub fn header(kind: FileKind, rank: u32, thread: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(&kind.magic());
    h[4..6].copy_from_slice(&VERSION.to_le_bytes());
    h[8..12].copy_from_slice(&rank.to_le_bytes());
    h[12..16].copy_from_slice(&thread.to_le_bytes());
    h
}

/// Checks a file header and returns its (rank, thread).
pub fn parse_header(kind: FileKind, bytes: &[u8]) -> Result<(u32, u32), Error> {
    if bytes.len() < HEADER_LEN {
        return Err(Error::new(
            ErrorKind::Truncated,
            format!(
                "{} file is shorter than its {HEADER_LEN}-byte header",
                kind.name()
            ),
        ));
    }
    if bytes[0..4] != kind.magic() {
        return Err(Error::new(
            ErrorKind::NotParallax,
            format!(
                "not a Parallax {} file (magic {:?}, expected {:?})",
                kind.name(),
                String::from_utf8_lossy(&bytes[0..4]),
                String::from_utf8_lossy(&kind.magic())
            ),
        ));
    }
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != VERSION {
        return Err(Error::new(
            ErrorKind::Version,
            format!("format version {version}; this Parallax reads version {VERSION}"),
        ));
    }
    let rank = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    let thread = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
    Ok((rank, thread))
}

/// The header of a block whose payload is `payload`.
pub fn block_header(payload: &[u8]) -> [u8; BLOCK_HEADER_LEN] {
    let mut h = [0u8; BLOCK_HEADER_LEN];
    h[0..4].copy_from_slice(&BLOCK_MAGIC);
    h[4..8].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    h[8..12].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    h
}

/// Appends a whole block (header and payload) to `out`.
pub fn push_block(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(&block_header(payload));
    out.extend_from_slice(payload);
}

/// Reads the blocks of a file after its header, one at a time, with memory
/// bounded by the largest block.
///
/// A file that ends inside a block gives a [`ErrorKind::Truncated`] error
/// last; a damaged block gives a [`ErrorKind::Corrupt`] error and ends the
/// reading, since nothing after it can be trusted to be aligned. Either way
/// every block before it was delivered intact.
///
/// A reader that knows the file's length ([`BlockReader::with_len`]) reads
/// the file as it was at that length: a block that claims more bytes than
/// are left is [`ErrorKind::Truncated`] before anything is allocated for
/// it, so a block costs at most the bytes the file really has.
#[derive(Debug)]
pub struct BlockReader<R> {
    inner: R,
    offset: u64,
    /// The file's length, where known.
    end: Option<u64>,
    buf: Vec<u8>,
    done: bool,
}

impl<R: std::io::Read> BlockReader<R> {
    /// Blocks of `inner`, which is positioned `offset` bytes into its file.
    pub fn new(inner: R, offset: u64) -> BlockReader<R> {
        BlockReader {
            inner,
            offset,
            end: None,
            buf: Vec::new(),
            done: false,
        }
    }

    /// Blocks of `inner`, positioned `offset` bytes into its file of
    /// `len` bytes (nothing past `len` is read).
    pub fn with_len(inner: R, offset: u64, len: u64) -> BlockReader<R> {
        BlockReader {
            end: Some(len),
            ..BlockReader::new(inner, offset)
        }
    }

    /// The next block's payload, `Ok(None)` at the end of the file.
    pub fn next_block(&mut self) -> Result<Option<&[u8]>, Error> {
        let mut buf = std::mem::take(&mut self.buf);
        let r = self.read_into(&mut buf);
        self.buf = buf;
        Ok(r?.then_some(&self.buf[..]))
    }

    /// Reads the next block's payload into `buf` (replacing its contents:
    /// a caller that keeps the payload keeps no copy of it); `Ok(false)`
    /// at the end of the file.
    pub fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<bool, Error> {
        if self.done {
            return Ok(false);
        }
        let left = self.end.map(|e| e.saturating_sub(self.offset));
        if left == Some(0) {
            self.done = true;
            return Ok(false);
        }
        let mut h = [0u8; BLOCK_HEADER_LEN];
        let want = left.map_or(BLOCK_HEADER_LEN, |l| {
            l.min(BLOCK_HEADER_LEN as u64) as usize
        });
        let got = self.fill(&mut h[..want])?;
        if got == 0 {
            self.done = true;
            return Ok(false);
        }
        if got < BLOCK_HEADER_LEN {
            return Err(self.fail(
                ErrorKind::Truncated,
                format!("file ends {got} bytes into a block header"),
            ));
        }
        if h[0..4] != BLOCK_MAGIC {
            return Err(self.fail(ErrorKind::Corrupt, "block marker missing".into()));
        }
        let len = u32::from_le_bytes(h[4..8].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
        if len > MAX_BLOCK {
            return Err(self.fail(
                ErrorKind::Corrupt,
                format!("block length {len} is impossible"),
            ));
        }
        if let Some(left) = left {
            let payload = left - BLOCK_HEADER_LEN as u64;
            if len as u64 > payload {
                return Err(self.fail(
                    ErrorKind::Truncated,
                    format!(
                        "block of {len} bytes, but the file ends {payload} bytes after its header"
                    ),
                ));
            }
        }
        buf.clear();
        // At once: grown a step at a time, a large block would be copied
        // at every step. Where the file's length is unknown, up to a bound,
        // so that a damaged header claiming a huge block in a short stream
        // costs no huge allocation.
        buf.reserve(if left.is_some() {
            len
        } else {
            len.min(RESERVE_AT_ONCE)
        });
        let got = (&mut self.inner)
            .take(len as u64)
            .read_to_end(buf)
            .map_err(|e| self.fail(ErrorKind::Io, e.to_string()))?;
        if got < len {
            return Err(self.fail(
                ErrorKind::Truncated,
                format!("file ends {got} bytes into a block of {len} bytes"),
            ));
        }
        if crc32fast::hash(buf) != crc {
            return Err(self.fail(ErrorKind::Corrupt, "block checksum mismatch".into()));
        }
        self.offset += (BLOCK_HEADER_LEN + len) as u64;
        Ok(true)
    }

    /// Reads as much of `out` as the file has; returns how much.
    fn fill(&mut self, out: &mut [u8]) -> Result<usize, Error> {
        let mut n = 0;
        while n < out.len() {
            match self.inner.read(&mut out[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.fail(ErrorKind::Io, e.to_string())),
            }
        }
        Ok(n)
    }

    fn fail(&mut self, kind: ErrorKind, what: String) -> Error {
        self.done = true;
        Error::new(kind, format!("{what} (block at byte {})", self.offset))
    }
}

/// Little-endian u64 at `at` in `b`, if there.
pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_failures() {
        let h = header(FileKind::Events, 3, 7);
        assert_eq!(parse_header(FileKind::Events, &h).unwrap(), (3, 7));
        assert_eq!(
            parse_header(FileKind::Profile, &h).unwrap_err().kind(),
            ErrorKind::NotParallax
        );
        assert_eq!(
            parse_header(FileKind::Events, &h[..5]).unwrap_err().kind(),
            ErrorKind::Truncated
        );
        assert_eq!(
            parse_header(FileKind::Events, &[]).unwrap_err().kind(),
            ErrorKind::Truncated
        );
        let mut other = h;
        other[4] = 99;
        assert_eq!(
            parse_header(FileKind::Events, &other).unwrap_err().kind(),
            ErrorKind::Version
        );
    }

    #[test]
    fn blocks_stop_at_truncation_and_corruption() {
        let mut body = Vec::new();
        push_block(&mut body, b"first");
        push_block(&mut body, b"second block");
        assert_eq!(
            read_all(&body),
            (vec![b"first".to_vec(), b"second block".to_vec()], None)
        );
        for cut in 0..body.len() {
            let (ok, err) = read_all(&body[..cut]);
            let complete = if cut >= 21 + 28 {
                2
            } else if cut >= 21 {
                1
            } else {
                0
            };
            assert_eq!(ok.len(), complete, "cut {cut}");
            let at_boundary = cut == 0 || cut == 21 || cut == 49;
            assert_eq!(
                err,
                if at_boundary {
                    None
                } else {
                    Some(ErrorKind::Truncated)
                }
            );
        }
        let mut bad = body.clone();
        bad[BLOCK_HEADER_LEN + 5 + BLOCK_HEADER_LEN + 2] ^= 1;
        let (ok, err) = read_all(&bad);
        assert_eq!(ok.len(), 1);
        assert_eq!(err, Some(ErrorKind::Corrupt));
    }

    fn read_all(bytes: &[u8]) -> (Vec<Vec<u8>>, Option<ErrorKind>) {
        let mut r = BlockReader::new(bytes, 16);
        let mut ok = Vec::new();
        loop {
            match r.next_block() {
                Ok(Some(b)) => ok.push(b.to_vec()),
                Ok(None) => return (ok, None),
                Err(e) => return (ok, Some(e.kind())),
            }
        }
    }
}
