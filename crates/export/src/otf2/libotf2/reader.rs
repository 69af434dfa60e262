//! An archive opened for reading and its readers of global definitions,
//! local definitions and events.

use std::ffi::{c_void, CStr};

use super::consts::LocationRef;
use super::ffi;
use super::global_defs::{GlobalDefCallbacks, GlobalDefs};
use super::reader_events::{Events, EvtCallbacks};
use super::Otf2Error;

/// An OTF2 archive open for reading, closed on drop.
pub struct Reader {
    raw: *mut ffi::Reader,
}

impl Reader {
    /// Opens the archive of the anchor file `anchor`; `None` when libotf2
    /// cannot.
    pub fn open(anchor: &CStr) -> Option<Reader> {
        // Safety: the path is NUL-terminated and outlives the call.
        let raw = unsafe { ffi::OTF2_Reader_Open(anchor.as_ptr()) };
        (!raw.is_null()).then_some(Reader { raw })
    }

    /// One process reads the whole archive.
    pub fn serial_collectives(&mut self) -> Result<(), Otf2Error> {
        // Safety: the reader is live.
        Otf2Error::check(unsafe { ffi::OTF2_Reader_SetSerialCollectiveCallbacks(self.raw) })
    }

    pub fn global_def_reader(&self) -> Option<GlobalDefReader<'_>> {
        // Safety: the reader is live.
        let raw = unsafe { ffi::OTF2_Reader_GetGlobalDefReader(self.raw) };
        (!raw.is_null()).then_some(GlobalDefReader { reader: self, raw })
    }

    /// Selects `location` for reading its definitions and events.
    pub fn select_location(&mut self, location: LocationRef) -> Result<(), Otf2Error> {
        // Safety: the reader is live.
        Otf2Error::check(unsafe { ffi::OTF2_Reader_SelectLocation(self.raw, location) })
    }

    pub fn open_def_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the reader is live.
        Otf2Error::check(unsafe { ffi::OTF2_Reader_OpenDefFiles(self.raw) })
    }

    /// Closes the local definition files; no definition reader is left
    /// (they borrow the reader).
    pub fn close_def_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the reader is live.
        Otf2Error::check(unsafe { ffi::OTF2_Reader_CloseDefFiles(self.raw) })
    }

    pub fn open_evt_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the reader is live.
        Otf2Error::check(unsafe { ffi::OTF2_Reader_OpenEvtFiles(self.raw) })
    }

    /// Closes the event files; no event reader is left.
    pub fn close_evt_files(&mut self) -> Result<(), Otf2Error> {
        // Safety: the reader is live.
        Otf2Error::check(unsafe { ffi::OTF2_Reader_CloseEvtFiles(self.raw) })
    }

    /// The local definition reader of a selected location (definition
    /// files open), if it has definitions.
    pub fn def_reader(&self, location: LocationRef) -> Option<DefReader<'_>> {
        // Safety: the reader is live.
        let raw = unsafe { ffi::OTF2_Reader_GetDefReader(self.raw, location) };
        (!raw.is_null()).then_some(DefReader { reader: self, raw })
    }

    /// The event reader of a selected location (event files open), if it
    /// has events.
    pub fn evt_reader(&self, location: LocationRef) -> Option<EvtReader<'_>> {
        // Safety: the reader is live.
        let raw = unsafe { ffi::OTF2_Reader_GetEvtReader(self.raw, location) };
        (!raw.is_null()).then_some(EvtReader { reader: self, raw })
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // Safety: the handle came from OTF2_Reader_Open and is closed once;
        // every reader borrowing it is gone.
        unsafe {
            ffi::OTF2_Reader_Close(self.raw);
        }
    }
}

/// The reader of the global definitions, closed on drop.
pub struct GlobalDefReader<'a> {
    reader: &'a Reader,
    raw: *mut ffi::GlobalDefReader,
}

impl GlobalDefReader<'_> {
    /// Reads every global definition into `handler`; the number read.
    pub fn read_all<H: GlobalDefs>(&mut self, handler: &mut H) -> Result<u64, Otf2Error> {
        let callbacks = GlobalDefCallbacks::<H>::new()?;
        let data: *mut H = handler;
        // Safety: the readers are live; the callbacks are `H`'s and the
        // user data the `&mut H` borrowed for this call, which the
        // callbacks use only during the read below.
        Otf2Error::check(unsafe {
            ffi::OTF2_Reader_RegisterGlobalDefCallbacks(
                self.reader.raw,
                self.raw,
                callbacks.as_raw(),
                data.cast::<c_void>(),
            )
        })?;
        let mut n = 0u64;
        // Safety: as above.
        Otf2Error::check(unsafe {
            ffi::OTF2_Reader_ReadAllGlobalDefinitions(self.reader.raw, self.raw, &mut n)
        })?;
        Ok(n)
    }
}

impl Drop for GlobalDefReader<'_> {
    fn drop(&mut self) {
        // Safety: the handle belongs to the live reader and is closed once.
        unsafe {
            ffi::OTF2_Reader_CloseGlobalDefReader(self.reader.raw, self.raw);
        }
    }
}

/// A location's local definition reader, closed on drop.
pub struct DefReader<'a> {
    reader: &'a Reader,
    raw: *mut ffi::DefReader,
}

impl DefReader<'_> {
    /// Reads the location's definitions (libotf2 keeps its mapping tables
    /// for the location's events); the number read.
    pub fn read_all(&mut self) -> Result<u64, Otf2Error> {
        let mut n = 0u64;
        // Safety: both handles are live; no callbacks are registered.
        Otf2Error::check(unsafe {
            ffi::OTF2_Reader_ReadAllLocalDefinitions(self.reader.raw, self.raw, &mut n)
        })?;
        Ok(n)
    }
}

impl Drop for DefReader<'_> {
    fn drop(&mut self) {
        // Safety: the handle belongs to the live reader and is closed once.
        unsafe {
            ffi::OTF2_Reader_CloseDefReader(self.reader.raw, self.raw);
        }
    }
}

/// A location's event reader, closed on drop.
pub struct EvtReader<'a> {
    reader: &'a Reader,
    raw: *mut ffi::EvtReader,
}

impl EvtReader<'_> {
    /// Reads every event of the location into `handler` through
    /// `callbacks`; the number read. A callback that stops the read makes
    /// it an error.
    pub fn read_all<H: Events>(
        &mut self,
        callbacks: &EvtCallbacks<H>,
        handler: &mut H,
    ) -> Result<u64, Otf2Error> {
        let data: *mut H = handler;
        // Safety: the readers are live; the callbacks are `H`'s and the
        // user data the `&mut H` borrowed for this call; each read
        // registers its own, so no later read calls back into this one.
        Otf2Error::check(unsafe {
            ffi::OTF2_Reader_RegisterEvtCallbacks(
                self.reader.raw,
                self.raw,
                callbacks.as_raw(),
                data.cast::<c_void>(),
            )
        })?;
        let mut n = 0u64;
        // Safety: as above.
        Otf2Error::check(unsafe {
            ffi::OTF2_Reader_ReadAllLocalEvents(self.reader.raw, self.raw, &mut n)
        })?;
        Ok(n)
    }
}

impl Drop for EvtReader<'_> {
    fn drop(&mut self) {
        // Safety: the handle belongs to the live reader and is closed once.
        unsafe {
            ffi::OTF2_Reader_CloseEvtReader(self.reader.raw, self.raw);
        }
    }
}
