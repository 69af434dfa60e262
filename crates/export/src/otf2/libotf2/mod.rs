//! A safe interface to the part of libotf2 that the export and import use.
//!
//! Every handle the library hands out is owned by a Rust value that
//! closes or frees it when dropped (`Archive`, `EvtWriter`, `DefWriter`,
//! `AttributeList`, `Reader`, `EvtReader`, ...); a handle that belongs to
//! another (a writer to its archive, a reader to its reader) borrows it,
//! so it cannot outlive it. Calls return
//! `Result<_, Otf2Error>` instead of status codes. Reading calls back
//! into a [`GlobalDefs`] or [`Events`] implementation through
//! trampolines defined once here. All of the crate's `unsafe` code is in
//! this module.

mod archive;
pub mod consts;
mod evt_writer;
mod ffi;
mod global_defs;
mod global_writer;
mod reader;
mod reader_events;
mod records;

use std::ffi::{c_char, CStr};
use std::fmt;

pub use archive::Archive;
pub use consts::{LocationRef, MetricRef, ParameterRef, RegionRef, StringRef, TimeStamp};
pub use evt_writer::{AttributeList, EvtWriter};
pub use global_defs::GlobalDefs;
pub use global_writer::GlobalDefWriter;
pub use reader::Reader;
pub use reader_events::{Attributes, Events, EvtCallbacks};
pub use records::{
    Attribute, ClockProperties, CollectiveEnd, Comm, Group, Location, LocationGroup, Message,
    MetricClass, MetricMember, Parameter, Region, RmaAtomic, RmaTransfer, SystemTreeNode,
};

use crate::{Error, ErrorKind};

/// A failed libotf2 call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Otf2Error {
    /// The library returned this error code.
    Code(consts::ErrorCode),
    /// The library could not allocate a handle.
    NoMemory,
    /// More members than a record can hold.
    TooMany,
}

impl Otf2Error {
    /// `Ok` for the library's success code, else the error.
    #[inline]
    fn check(code: consts::ErrorCode) -> Result<(), Otf2Error> {
        if code == consts::SUCCESS {
            Ok(())
        } else {
            Err(Otf2Error::Code(code))
        }
    }

    /// The crate's error for this failure while doing `what`.
    #[cold]
    pub fn during(self, what: &str) -> Error {
        Error::new(ErrorKind::Otf2, format!("libotf2: {what}: {self}"))
    }
}

impl fmt::Display for Otf2Error {
    /// The library's name and description of the error code.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = match *self {
            Otf2Error::Code(c) => c,
            Otf2Error::NoMemory => return f.write_str("out of memory"),
            Otf2Error::TooMany => return f.write_str("more members than OTF2 allows"),
        };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // Safety: the library returns static NUL-terminated strings.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        // Safety: both functions accept any code and return a static
        // string or NULL.
        let (name, description) = unsafe {
            (
                ffi::OTF2_Error_GetName(code),
                ffi::OTF2_Error_GetDescription(code),
            )
        };
        write!(f, "{} ({})", text(name), text(description))
    }
}
