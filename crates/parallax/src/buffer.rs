//! A thread's trace buffer: a header page and room for records, mapped
//! from the thread's spill file in the experiment directory (FORMAT.md,
//! "Spill files"), so that what the thread recorded since its last block
//! survives a process that is killed; or from anonymous memory where no
//! spill file can be made. The header holds what a reader of a leftover
//! spill file needs, the write position above all: probes publish it there.
//!
//! Every mapping is checked: a buffer that cannot be made is an error, never
//! an abort. A state without a buffer writes into a small sink of its own,
//! whose records are dropped at once.

use std::ffi::CStr;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};

use parallax_model::evcodec::MAX_RECORD;
use parallax_model::file::{self, FileKind, HEADER_LEN};
use parallax_model::spill;

/// The header page's fields (FORMAT.md, "Spill files"), as the runtime
/// writes them through memory.
#[repr(C)]
pub(crate) struct Header {
    file: [u8; HEADER_LEN],
    /// The byte after the last complete record.
    pub(crate) pos: AtomicPtr<u8>,
    start: AtomicU64,
    len: AtomicU64,
    /// The tick the first record's delta counts from.
    pub(crate) base: AtomicU64,
    /// `spill::LIVE` while the thread records here.
    state: AtomicU64,
}

const _: () = {
    assert!(std::mem::offset_of!(Header, pos) == spill::POS_AT);
    assert!(std::mem::offset_of!(Header, start) == spill::START_AT);
    assert!(std::mem::offset_of!(Header, len) == spill::LEN_AT);
    assert!(std::mem::offset_of!(Header, base) == spill::BASE_AT);
    assert!(std::mem::offset_of!(Header, state) == spill::STATE_AT);
    assert!(std::mem::size_of::<Header>() <= spill::DATA_OFFSET);
};

/// Room a sink has for records: the record that crossed the limit and a
/// few more.
pub(crate) const SINK: usize = 4 * MAX_RECORD;

/// Where a buffer's memory comes from.
enum Memory {
    /// A shared mapping of the spill file named `name` in the rank
    /// directory.
    Spill { name: [u8; NAME] },
    /// An anonymous private mapping.
    Anonymous,
    /// The state's sink (`map` points into the state itself).
    Sink,
}

pub(crate) const NAME: usize = crate::files::NAME;

/// A header page and `len` bytes for records.
pub(crate) struct Buffer {
    /// The header page; the records follow at `spill::DATA_OFFSET`.
    map: *mut u8,
    /// Bytes mapped (0 for a sink).
    mapped: usize,
    len: usize,
    memory: Memory,
}

// Safety: the mapping belongs to the buffer; sharing is ordered by the
// thread state's lock.
unsafe impl Send for Buffer {}

/// Why a buffer could not be made: the system's error number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused(pub i32);

impl Refused {
    fn last() -> Refused {
        Refused(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

impl Buffer {
    /// A placeholder, to be replaced before use.
    pub(crate) const fn dangling() -> Buffer {
        Buffer {
            map: ptr::null_mut(),
            mapped: 0,
            len: 0,
            memory: Memory::Sink,
        }
    }

    /// A buffer in `sink`, the state's own bytes: one record at a time,
    /// dropped at the next probe.
    pub(crate) fn sink(sink: *mut Sink) -> Buffer {
        let map = sink as *mut u8;
        let b = Buffer {
            map,
            mapped: 0,
            len: SINK,
            memory: Memory::Sink,
        };
        b.init(0, 0);
        b
    }

    /// An anonymous buffer with `len` bytes for records, every page
    /// touched now (not by a probe, whose cost would then include a page
    /// fault).
    pub(crate) fn anonymous(len: usize) -> Result<Buffer, Refused> {
        let mapped = spill::DATA_OFFSET + len;
        let map = map_anonymous(mapped)?;
        let b = Buffer {
            map,
            mapped,
            len,
            memory: Memory::Anonymous,
        };
        b.fill();
        b.init(0, 0);
        Ok(b)
    }

    /// A buffer mapped from a new spill file of thread `thread` of rank
    /// `rank` in the directory `dir` (a descriptor), with `len` bytes for
    /// records, every page touched now. Its blocks are allocated first:
    /// a file system that runs full must not turn a probe's write into a
    /// SIGBUS.
    pub(crate) fn spilled(dir: i32, rank: u32, thread: u32, len: usize) -> Result<Buffer, Refused> {
        let mapped = spill::DATA_OFFSET + len;
        if !crate::files::fits_size_limit(mapped as u64) {
            return Err(Refused(libc::EFBIG));
        }
        let name = name_of(thread);
        // Made as NAME.part, renamed once its header is written.
        let part = crate::files::part(&name);
        let cname = name_str(&part);
        // Safety: plain file calls with a NUL-terminated name, checked.
        unsafe {
            let fd = libc::openat(
                dir,
                cname.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return Err(Refused::last());
            }
            let fail = |fd: i32| {
                let e = Refused::last();
                libc::close(fd);
                libc::unlinkat(dir, cname.as_ptr(), 0);
                Err(e)
            };
            if libc::fallocate(fd, 0, 0, mapped as libc::off_t) != 0 {
                return fail(fd);
            }
            let map = libc::mmap(
                ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if map == libc::MAP_FAILED {
                return fail(fd);
            }
            libc::close(fd);
            let b = Buffer {
                map: map as *mut u8,
                mapped,
                len,
                memory: Memory::Spill { name },
            };
            b.fill();
            b.init(rank, thread);
            if libc::renameat(dir, cname.as_ptr(), dir, name_str(&name).as_ptr()) != 0 {
                let e = Refused::last();
                libc::unlinkat(dir, cname.as_ptr(), 0);
                return Err(e);
            }
            Ok(b)
        }
    }

    fn fill(&self) {
        // Safety: the records' bytes are mapped and writable.
        unsafe { ptr::write_bytes(self.start(), 0xff, self.len) };
    }

    /// Writes the header: a live, empty buffer of thread `thread`.
    fn init(&self, rank: u32, thread: u32) {
        let h = self.header();
        // Safety: the header page is mapped and ours.
        unsafe {
            (*h).file = file::header(FileKind::Spill, rank, thread);
            (*h).start.store(self.start() as u64, Relaxed);
            (*h).len.store(self.len as u64, Relaxed);
            (*h).base.store(0, Relaxed);
            (*h).pos.store(self.start(), Relaxed);
            (*h).state.store(spill::LIVE, Release);
        }
    }

    pub(crate) fn header(&self) -> *mut Header {
        self.map as *mut Header
    }

    /// The first byte for records.
    pub(crate) fn start(&self) -> *mut u8 {
        match self.memory {
            // Safety: within the sink.
            Memory::Sink => unsafe { self.map.add(std::mem::size_of::<Header>()) },
            // Safety: within the mapping.
            _ => unsafe { self.map.add(spill::DATA_OFFSET) },
        }
    }

    /// Bytes for records.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is mapped from a spill file.
    pub(crate) fn is_spilled(&self) -> bool {
        matches!(self.memory, Memory::Spill { .. })
    }

    /// The buffer's records were all written out (or never will be): a
    /// reader of a leftover spill file skips it.
    pub(crate) fn set_closed(&self) {
        // Safety: the header is mapped.
        unsafe { (*self.header()).state.store(spill::CLOSED, Release) };
    }

    /// The buffer now belongs to thread `thread` of rank `rank`, recording:
    /// its spill file is renamed to that thread's name. False if the file
    /// could not be renamed (the buffer is then not to be used).
    pub(crate) fn take_over(&mut self, dir: i32, rank: u32, thread: u32) -> bool {
        if let Memory::Spill { name } = &mut self.memory {
            let new = name_of(thread);
            // Safety: NUL-terminated names in the same directory.
            let r = unsafe {
                libc::renameat(dir, name_str(name).as_ptr(), dir, name_str(&new).as_ptr())
            };
            if r != 0 {
                return false;
            }
            *name = new;
        }
        self.init(rank, thread);
        true
    }

    /// Removes the spill file (the measurement ended cleanly); the memory
    /// stays, for a thread that still writes into it.
    pub(crate) fn unlink(&mut self, dir: i32) {
        if let Memory::Spill { name } = &self.memory {
            // Safety: a NUL-terminated name.
            unsafe { libc::unlinkat(dir, name_str(name).as_ptr(), 0) };
            self.memory = Memory::Anonymous;
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.mapped > 0 {
            // Safety: our own mapping, no longer referenced.
            unsafe { libc::munmap(self.map as *mut libc::c_void, self.mapped) };
        }
    }
}

/// `len` bytes of fresh anonymous memory, untouched.
pub(crate) fn map_anonymous(len: usize) -> Result<*mut u8, Refused> {
    // Safety: a fresh private mapping, checked.
    let map = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(Refused::last());
    }
    Ok(map as *mut u8)
}

/// The bytes of a state's sink: a header and room for a few records.
#[repr(C)]
pub(crate) struct Sink {
    header: std::mem::MaybeUninit<Header>,
    bytes: [u8; SINK],
}

impl Sink {
    pub(crate) const fn new() -> Sink {
        Sink {
            header: std::mem::MaybeUninit::uninit(),
            bytes: [0; SINK],
        }
    }
}

/// `thread-NNNNN.pxb` (as `spill::spill_file` names it), NUL-terminated,
/// made without allocating.
fn name_of(thread: u32) -> [u8; NAME] {
    crate::files::name(b"thread-", thread, b".pxb")
}

fn name_str(name: &[u8; NAME]) -> &CStr {
    CStr::from_bytes_until_nul(name).unwrap_or(c"")
}
