//! An archive opened for writing, its file phases and its local definition
//! writers; the buffer callbacks libotf2 calls while writing.

use std::ffi::{c_void, CStr};
use std::ptr;

use super::consts::{self as c, LocationRef};
use super::evt_writer::EvtWriter;
use super::ffi;
use super::global_writer::GlobalDefWriter;
use super::Otf2Error;

/// An OTF2 archive being written; closed (and its global definitions
/// written out) by [`Archive::close`], or on drop.
pub struct Archive {
    raw: *mut ffi::Archive,
}

impl Archive {
    /// Creates archive `name` in the directory `dir` (POSIX files, no
    /// compression) with chunks of the given sizes for event and
    /// definition buffers; `None` when libotf2 refuses.
    pub fn create(dir: &CStr, name: &CStr, event_chunk: u64, def_chunk: u64) -> Option<Archive> {
        // Safety: both strings are NUL-terminated and outlive the call.
        let raw = unsafe {
            ffi::OTF2_Archive_Open(
                dir.as_ptr(),
                name.as_ptr(),
                c::FILEMODE_WRITE,
                event_chunk,
                def_chunk,
                c::SUBSTRATE_POSIX,
                c::COMPRESSION_NONE,
            )
        };
        (!raw.is_null()).then_some(Archive { raw })
    }

    /// Makes libotf2 write a full buffer out (instead of failing) and
    /// record no flush events of its own.
    pub fn flush_when_full(&mut self) -> Result<(), Otf2Error> {
        // libotf2 keeps the table's address: it must outlive the archive.
        static FLUSH: ffi::FlushCallbacks = ffi::FlushCallbacks {
            pre: Some(pre_flush),
            post: Some(post_flush),
        };
        // Safety: the archive is live; the table is static and the
        // callbacks use no user data.
        Otf2Error::check(unsafe {
            ffi::OTF2_Archive_SetFlushCallbacks(self.raw, &FLUSH, ptr::null_mut())
        })
    }

    /// Bounds each writer's buffer to [`CHUNKS_PER_BUFFER`] chunks.
    pub fn bound_buffers(&mut self) -> Result<(), Otf2Error> {
        // libotf2 keeps the table's address: it must outlive the archive.
        static MEMORY: ffi::MemoryCallbacks = ffi::MemoryCallbacks {
            allocate: Some(chunk_allocate),
            free_all: Some(chunk_free_all),
        };
        // Safety: the archive is live; the table is static and the
        // callbacks keep their state in libotf2's per-buffer slot.
        Otf2Error::check(unsafe {
            ffi::OTF2_Archive_SetMemoryCallbacks(self.raw, &MEMORY, ptr::null_mut())
        })
    }

    /// One process writes the whole archive.
    pub fn serial_collectives(&mut self) -> Result<(), Otf2Error> {
        // Safety: the archive is live.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_SetSerialCollectiveCallbacks(self.raw) })
    }

    pub fn set_creator(&mut self, s: &CStr) -> Result<(), Otf2Error> {
        // Safety: the archive is live; libotf2 copies the string.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_SetCreator(self.raw, s.as_ptr()) })
    }

    pub fn set_description(&mut self, s: &CStr) -> Result<(), Otf2Error> {
        // Safety: the archive is live; libotf2 copies the string.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_SetDescription(self.raw, s.as_ptr()) })
    }

    pub fn set_machine_name(&mut self, s: &CStr) -> Result<(), Otf2Error> {
        // Safety: the archive is live; libotf2 copies the string.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_SetMachineName(self.raw, s.as_ptr()) })
    }

    pub fn open_evt_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the archive is live.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_OpenEvtFiles(self.raw) })
    }

    /// Closes the event files; no event writer is left (they borrow the
    /// archive).
    pub fn close_evt_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the archive is live.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_CloseEvtFiles(self.raw) })
    }

    pub fn open_def_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the archive is live.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_OpenDefFiles(self.raw) })
    }

    pub fn close_def_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the archive is live.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_CloseDefFiles(self.raw) })
    }

    /// The event writer of `location` (event files open).
    pub fn evt_writer(&self, location: LocationRef) -> Option<EvtWriter<'_>> {
        // Safety: the archive is live.
        let raw = unsafe { ffi::OTF2_Archive_GetEvtWriter(self.raw, location) };
        (!raw.is_null()).then(|| EvtWriter::new(self, raw))
    }

    /// The local definition writer of `location` (definition files open).
    pub fn def_writer(&self, location: LocationRef) -> Option<DefWriter<'_>> {
        // Safety: the archive is live.
        let raw = unsafe { ffi::OTF2_Archive_GetDefWriter(self.raw, location) };
        (!raw.is_null()).then_some(DefWriter { archive: self, raw })
    }

    /// The global definition writer; the archive writes its definitions
    /// out when closed.
    pub fn global_def_writer(&self) -> Option<GlobalDefWriter<'_>> {
        // Safety: the archive is live.
        let raw = unsafe { ffi::OTF2_Archive_GetGlobalDefWriter(self.raw) };
        (!raw.is_null()).then(|| GlobalDefWriter::new(raw))
    }

    pub(super) fn as_raw(&self) -> *mut ffi::Archive {
        self.raw
    }

    /// Closes the archive, writing out what libotf2 still holds.
    pub fn close(self) -> Result<(), Otf2Error> {
        let raw = self.raw;
        std::mem::forget(self);
        // Safety: the handle is live and, `self` forgotten, closed once.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_Close(raw) })
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        // Safety: the handle is live and closed only here (`close` forgets
        // `self`).
        unsafe {
            ffi::OTF2_Archive_Close(self.raw);
        }
    }
}

/// A location's local definition writer (Parallax writes none: every id
/// is global, but readers such as otf2-print expect the file).
pub struct DefWriter<'a> {
    archive: &'a Archive,
    raw: *mut ffi::DefWriter,
}

impl DefWriter<'_> {
    pub fn close(self) -> Result<(), Otf2Error> {
        let (archive, raw) = (self.archive.raw, self.raw);
        std::mem::forget(self);
        // Safety: the writer belongs to the live archive and, `self`
        // forgotten, is closed once.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_CloseDefWriter(archive, raw) })
    }
}

impl Drop for DefWriter<'_> {
    fn drop(&mut self) {
        // Safety: as in `close`, which forgets `self`.
        unsafe {
            ffi::OTF2_Archive_CloseDefWriter(self.archive.raw, self.raw);
        }
    }
}

/// Asked before a buffer is written out: flush it.
extern "C" fn pre_flush(_: *mut c_void, _: u8, _: LocationRef, _: *mut c_void, _: bool) -> u8 {
    c::FLUSH
}

/// Asked for the time of a flush record after a buffer was written out:
/// none (Parallax records its own flushes).
extern "C" fn post_flush(_: *mut c_void, _: u8, _: LocationRef) -> u64 {
    0
}

/// Chunks a writer's buffer holds before libotf2 writes them out (its own
/// pool holds up to 128 MiB per writer, so that memory would grow with the
/// events of a location up to that).
pub const CHUNKS_PER_BUFFER: usize = 8;

/// The chunks of one buffer: (address, size).
type Chunks = Vec<(*mut u8, usize)>;

/// libotf2 asks for a chunk of a buffer; none past [`CHUNKS_PER_BUFFER`],
/// which makes it flush the buffer and free its chunks.
extern "C" fn chunk_allocate(
    _: *mut c_void,
    _: u8,
    _: u64,
    per_buffer: *mut *mut c_void,
    size: u64,
) -> *mut c_void {
    // Safety: `per_buffer` is libotf2's slot for this buffer, NULL at first
    // and afterwards the list made here.
    unsafe {
        if (*per_buffer).is_null() {
            *per_buffer = Box::into_raw(Box::new(Chunks::new())).cast();
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        let Ok(layout) = std::alloc::Layout::from_size_align(size as usize, 16) else {
            return ptr::null_mut();
        };
        if chunks.len() >= CHUNKS_PER_BUFFER || size == 0 {
            return ptr::null_mut();
        }
        let p = std::alloc::alloc(layout);
        if !p.is_null() {
            chunks.push((p, size as usize));
        }
        p.cast()
    }
}

/// libotf2 wrote a buffer out (or closes it, `last`): its chunks are freed.
extern "C" fn chunk_free_all(
    _: *mut c_void,
    _: u8,
    _: u64,
    per_buffer: *mut *mut c_void,
    last: bool,
) {
    // Safety: the list was made by `chunk_allocate` for this buffer, and
    // each chunk with the layout freed here.
    unsafe {
        if (*per_buffer).is_null() {
            return;
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        for (p, size) in chunks.drain(..) {
            std::alloc::dealloc(p, std::alloc::Layout::from_size_align_unchecked(size, 16));
        }
        if last {
            drop(Box::from_raw((*per_buffer).cast::<Chunks>()));
            *per_buffer = ptr::null_mut();
        }
    }
}
