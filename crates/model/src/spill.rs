//! Spill files (`thread-NNNNN.pxb`, see FORMAT.md, "Spill files"): the
//! trace buffer of a thread, mapped from a file of the experiment so that
//! what a thread recorded since its last block survives a process that is
//! killed. The runtime writes them through memory; a reader recovers the
//! records of a spill file whose thread was still recording.

use std::io::Read;
use std::path::Path;

use crate::evcodec;
use crate::file::{self, FileKind, HEADER_LEN};
use crate::Error;

/// Bytes before the records: the header page.
pub const DATA_OFFSET: usize = 4096;
/// Byte of the header holding the write position (an address of the
/// writer's memory, u64 LE): the byte after the last complete record.
pub const POS_AT: usize = 16;
/// Byte of the header holding the address of the first record byte.
pub const START_AT: usize = 24;
/// Byte of the header holding the bytes available for records.
pub const LEN_AT: usize = 32;
/// Byte of the header holding the base tick of the records.
pub const BASE_AT: usize = 40;
/// Byte of the header holding the state: [`LIVE`] or [`CLOSED`].
pub const STATE_AT: usize = 48;
/// The thread records into this file.
pub const LIVE: u64 = 1;
/// The thread's records were written out (or it never recorded here).
pub const CLOSED: u64 = 0;

/// Spill file of thread `thread` inside a process directory.
pub fn spill_file(thread: u32) -> String {
    format!("thread-{thread:05}.pxb")
}

/// What a spill file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spill {
    /// Rank of the file header.
    pub rank: u32,
    /// Thread of the file header.
    pub thread: u32,
    /// Whether the thread was still recording when the file was last
    /// written (the process stopped without writing its records out).
    pub live: bool,
    /// The tick the first record's delta counts from.
    pub base: u64,
    /// The complete, valid records, in order.
    pub records: Vec<u8>,
    /// Bytes after the valid records up to the write position (a record
    /// the reader could not decode, and what followed it).
    pub dropped: usize,
}

/// Reads the spill file `path`: its header and, if its thread was live, its
/// records up to the write position, each checked; a record that does not
/// decode ends them (it and what follows are counted in `dropped`).
pub fn read(path: &Path) -> Result<Spill, Error> {
    let (mut f, size) = file::open_regular(path)?;
    let mut h = [0u8; DATA_OFFSET];
    let got = read_up_to(&mut f, &mut h).map_err(|e| Error::io(path, e))?;
    let (rank, thread) =
        file::parse_header(FileKind::Spill, &h[..got.min(HEADER_LEN)]).map_err(|e| e.at(path))?;
    if got < DATA_OFFSET {
        return Err(Error::new(
            crate::ErrorKind::Truncated,
            format!("spill file is shorter than its {DATA_OFFSET}-byte header"),
        )
        .at(path));
    }
    let word = |at: usize| file::u64_at(&h, at).unwrap_or(0);
    let (pos, start, len, base) = (word(POS_AT), word(START_AT), word(LEN_AT), word(BASE_AT));
    let live = word(STATE_AT) == LIVE;
    let mut spill = Spill {
        rank,
        thread,
        live,
        base,
        records: Vec::new(),
        dropped: 0,
    };
    if !live {
        return Ok(spill);
    }
    let n = pos.wrapping_sub(start);
    if pos < start || n > len || DATA_OFFSET as u64 + n > size {
        return Err(Error::corrupt(format!(
            "spill file write position {pos:#x} is outside its {len} bytes of records at {start:#x}"
        ))
        .at(path));
    }
    let mut records = Vec::new();
    records
        .try_reserve_exact(n as usize)
        .map_err(|_| Error::corrupt(format!("spill file claims {n} bytes of records")).at(path))?;
    (&mut f)
        .take(n)
        .read_to_end(&mut records)
        .map_err(|e| Error::io(path, e))?;
    // Every record is checked: a damaged or torn one ends the records.
    let mut end = 0;
    while end < records.len() {
        match evcodec::read_record(&records, end) {
            Ok((_, _, next)) => end = next,
            Err(_) => break,
        }
    }
    spill.dropped = records.len() - end;
    records.truncate(end);
    spill.records = records;
    Ok(spill)
}

fn read_up_to(f: &mut std::fs::File, out: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < out.len() {
        match f.read(&mut out[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
