//! An archive opened for reading and its readers of global definitions,
//! local definitions and events.

use std::ffi::{c_void, CStr};

use super::consts::{ErrorCode, LocationRef};
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

/// Defines the reader of a part of an archive: a libotf2 handle of type
/// `$raw` that borrows the archive's reader and is closed by `$close` on
/// drop.
macro_rules! part_reader {
    ($(#[$doc:meta])* $name:ident($raw:ident), closed by $close:ident) => {
        $(#[$doc])*
        pub struct $name<'a> {
            reader: &'a Reader,
            raw: *mut ffi::$raw,
        }

        impl Drop for $name<'_> {
            fn drop(&mut self) {
                // Safety: the handle belongs to the live reader and is
                // closed once.
                unsafe {
                    ffi::$close(self.reader.raw, self.raw);
                }
            }
        }
    };
}

part_reader!(
    /// The reader of the global definitions, closed on drop.
    GlobalDefReader(GlobalDefReader), closed by OTF2_Reader_CloseGlobalDefReader
);
part_reader!(
    /// A location's local definition reader, closed on drop.
    DefReader(DefReader), closed by OTF2_Reader_CloseDefReader
);
part_reader!(
    /// A location's event reader, closed on drop.
    EvtReader(EvtReader), closed by OTF2_Reader_CloseEvtReader
);

/// Reads every record of the part reader `raw` of `reader` into the
/// handler `data`: `register` gives libotf2 the `callbacks` and the
/// handler, `read` reads; the number read.
///
/// # Safety
///
/// `reader` and `raw` must be live, and `callbacks` the table of the
/// handler `data` points to, borrowed for this call: each read registers
/// its own, so no later read calls back into this one.
unsafe fn read_all_with<R, C>(
    reader: *mut ffi::Reader,
    raw: *mut R,
    callbacks: *const C,
    data: *mut c_void,
    register: unsafe extern "C" fn(*mut ffi::Reader, *mut R, *const C, *mut c_void) -> ErrorCode,
    read: unsafe extern "C" fn(*mut ffi::Reader, *mut R, *mut u64) -> ErrorCode,
) -> Result<u64, Otf2Error> {
    Otf2Error::check(register(reader, raw, callbacks, data))?;
    let mut n = 0u64;
    Otf2Error::check(read(reader, raw, &mut n))?;
    Ok(n)
}

impl GlobalDefReader<'_> {
    /// Reads every global definition into `handler`; the number read.
    pub fn read_all<H: GlobalDefs>(&mut self, handler: &mut H) -> Result<u64, Otf2Error> {
        let callbacks = GlobalDefCallbacks::<H>::new()?;
        let data: *mut H = handler;
        // Safety: the readers are live; the callbacks are `H`'s and the
        // user data the `&mut H` borrowed for this call.
        unsafe {
            read_all_with(
                self.reader.raw,
                self.raw,
                callbacks.as_raw(),
                data.cast::<c_void>(),
                ffi::OTF2_Reader_RegisterGlobalDefCallbacks,
                ffi::OTF2_Reader_ReadAllGlobalDefinitions,
            )
        }
    }
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
        // user data the `&mut H` borrowed for this call.
        unsafe {
            read_all_with(
                self.reader.raw,
                self.raw,
                callbacks.as_raw(),
                data.cast::<c_void>(),
                ffi::OTF2_Reader_RegisterEvtCallbacks,
                ffi::OTF2_Reader_ReadAllLocalEvents,
            )
        }
    }
}
