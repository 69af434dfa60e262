//! A location's event writer and the attribute lists its records carry.
//!
//! Each record takes `Option<&mut AttributeList>`: the attributes added to
//! the list since its last record go with this one (libotf2 then empties
//! the list).

use std::ptr;

use super::archive::Archive;
use super::consts::{AttributeRef, CommRef, MetricRef, ParameterRef, RegionRef, RmaWinRef};
use super::consts::{ErrorCode, TimeStamp};
use super::ffi;
use super::records::{CollectiveEnd, Message, RmaAtomic, RmaTransfer};
use super::Otf2Error;

/// A list of attributes for the next record that takes it.
pub struct AttributeList {
    raw: *mut ffi::AttributeList,
}

impl AttributeList {
    /// An empty list; `None` when libotf2 cannot allocate one.
    pub fn new() -> Option<AttributeList> {
        // Safety: no arguments; the result is checked for NULL.
        let raw = unsafe { ffi::OTF2_AttributeList_New() };
        (!raw.is_null()).then_some(AttributeList { raw })
    }

    #[inline]
    pub fn add_u64(&mut self, attribute: AttributeRef, value: u64) -> Result<(), Otf2Error> {
        // Safety: the list is live.
        Otf2Error::check(unsafe { ffi::OTF2_AttributeList_AddUint64(self.raw, attribute, value) })
    }
}

impl Drop for AttributeList {
    fn drop(&mut self) {
        // Safety: the list came from OTF2_AttributeList_New and is freed
        // once.
        unsafe {
            ffi::OTF2_AttributeList_Delete(self.raw);
        }
    }
}

/// The list's handle, or NULL for none.
#[inline]
fn list(a: Option<&mut AttributeList>) -> *mut ffi::AttributeList {
    a.map_or(ptr::null_mut(), |a| a.raw)
}

/// The event writer of one location, closed by [`EvtWriter::close`] or on
/// drop.
pub struct EvtWriter<'a> {
    archive: &'a Archive,
    raw: *mut ffi::EvtWriter,
}

/// Defines record methods: each passes its arguments, after the writer,
/// the attribute list and the time, to the libotf2 function named.
macro_rules! records {
    ($($(#[$doc:meta])* $name:ident => $ffi:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(
                &mut self,
                a: Option<&mut AttributeList>,
                t: TimeStamp,
                $($arg: $ty),*
            ) -> Result<(), Otf2Error> {
                // Safety: the writer is live and the list, if any, too.
                self.status(unsafe { ffi::$ffi(self.raw, list(a), t, $($arg),*) })
            }
        )*
    };
}

/// Defines record methods that take a record of several fields: each
/// passes, after the writer, the attribute list and the time, the fields
/// named, in order, and the arguments after the record to the libotf2
/// function named.
macro_rules! record_structs {
    ($($name:ident => $ffi:ident(
        $r:ident: $rec:ident { $($field:ident),* } $(, $arg:ident: $ty:ty)*
    );)*) => {
        $(
            #[inline]
            pub fn $name(
                &mut self,
                a: Option<&mut AttributeList>,
                t: TimeStamp,
                $r: $rec,
                $($arg: $ty),*
            ) -> Result<(), Otf2Error> {
                // Safety: the writer is live and the list, if any, too.
                self.status(unsafe { ffi::$ffi(self.raw, list(a), t, $($r.$field,)* $($arg),*) })
            }
        )*
    };
}

impl<'a> EvtWriter<'a> {
    pub(super) fn new(archive: &'a Archive, raw: *mut ffi::EvtWriter) -> EvtWriter<'a> {
        EvtWriter { archive, raw }
    }

    #[inline]
    fn status(&self, code: ErrorCode) -> Result<(), Otf2Error> {
        Otf2Error::check(code)
    }

    records! {
        enter => OTF2_EvtWriter_Enter(region: RegionRef);
        leave => OTF2_EvtWriter_Leave(region: RegionRef);
        mpi_isend_complete => OTF2_EvtWriter_MpiIsendComplete(request: u64);
        mpi_irecv_request => OTF2_EvtWriter_MpiIrecvRequest(request: u64);
        mpi_collective_begin => OTF2_EvtWriter_MpiCollectiveBegin();
        thread_fork => OTF2_EvtWriter_ThreadFork(model: u8, team_size: u32);
        thread_join => OTF2_EvtWriter_ThreadJoin(model: u8);
        thread_acquire_lock => OTF2_EvtWriter_ThreadAcquireLock(model: u8, lock: u32, order: u32);
        thread_release_lock => OTF2_EvtWriter_ThreadReleaseLock(model: u8, lock: u32, order: u32);
        thread_create => OTF2_EvtWriter_ThreadCreate(contingent: CommRef, sequence: u64);
        thread_begin => OTF2_EvtWriter_ThreadBegin(contingent: CommRef, sequence: u64);
        thread_wait => OTF2_EvtWriter_ThreadWait(contingent: CommRef, sequence: u64);
        thread_end => OTF2_EvtWriter_ThreadEnd(contingent: CommRef, sequence: u64);
        rma_sync => OTF2_EvtWriter_RmaSync(win: RmaWinRef, remote: u32, kind: u8);
        rma_wait_change => OTF2_EvtWriter_RmaWaitChange(win: RmaWinRef);
        parameter_int => OTF2_EvtWriter_ParameterInt(parameter: ParameterRef, value: i64);
        parameter_unsigned_int =>
            OTF2_EvtWriter_ParameterUnsignedInt(parameter: ParameterRef, value: u64);
        /// A flush of the measurement's buffer from `t` to `stop`.
        buffer_flush => OTF2_EvtWriter_BufferFlush(stop: TimeStamp);
    }

    record_structs! {
        mpi_send => OTF2_EvtWriter_MpiSend(m: Message { peer, comm, tag, bytes });
        mpi_recv => OTF2_EvtWriter_MpiRecv(m: Message { peer, comm, tag, bytes });
        mpi_isend => OTF2_EvtWriter_MpiIsend(m: Message { peer, comm, tag, bytes }, request: u64);
        mpi_irecv => OTF2_EvtWriter_MpiIrecv(m: Message { peer, comm, tag, bytes }, request: u64);
        mpi_collective_end =>
            OTF2_EvtWriter_MpiCollectiveEnd(c: CollectiveEnd { op, comm, root, sent, received });
        rma_put => OTF2_EvtWriter_RmaPut(r: RmaTransfer { win, remote, bytes, matching });
        rma_get => OTF2_EvtWriter_RmaGet(r: RmaTransfer { win, remote, bytes, matching });
        rma_atomic => OTF2_EvtWriter_RmaAtomic(r: RmaAtomic {
            win, remote, kind, sent, received, matching
        });
    }

    /// A sample of the metric class `metric`: one type and value per
    /// member (at most 255).
    #[inline]
    pub fn metric(
        &mut self,
        a: Option<&mut AttributeList>,
        t: TimeStamp,
        metric: MetricRef,
        types: &[u8],
        values: &[u64],
    ) -> Result<(), Otf2Error> {
        let n = types.len().min(values.len()).min(u8::MAX as usize);
        // Safety: the writer is live, the list too, and both arrays hold
        // at least `n` elements.
        self.status(unsafe {
            ffi::OTF2_EvtWriter_Metric(
                self.raw,
                list(a),
                t,
                metric,
                n as u8,
                types.as_ptr(),
                values.as_ptr(),
            )
        })
    }

    pub fn close(self) -> Result<(), Otf2Error> {
        let (archive, raw) = (self.archive.as_raw(), self.raw);
        std::mem::forget(self);
        // Safety: the writer belongs to the live archive and, `self`
        // forgotten, is closed once.
        Otf2Error::check(unsafe { ffi::OTF2_Archive_CloseEvtWriter(archive, raw) })
    }
}

impl Drop for EvtWriter<'_> {
    fn drop(&mut self) {
        // Safety: as in `close`, which forgets `self`.
        unsafe {
            ffi::OTF2_Archive_CloseEvtWriter(self.archive.as_raw(), self.raw);
        }
    }
}
