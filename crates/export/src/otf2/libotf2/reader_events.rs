//! Reading events: what a reader of them implements, the attributes of
//! the current record, and the trampolines through which libotf2 calls
//! the reader.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::ControlFlow;

use super::consts::{self as c, CallbackCode, CommRef, LocationRef, MetricRef, ParameterRef};
use super::consts::{AttributeRef, RegionRef, RmaWinRef, StringRef, TimeStamp};
use super::ffi;
use super::global_defs::slice;
use super::records::{CollectiveEnd, Message, RmaAtomic, RmaTransfer};
use super::Otf2Error;

/// What a callback tells the reader: go on, or stop reading.
pub type Flow = ControlFlow<()>;

/// Receives the events of one location, in order. `t` is the record's
/// time; `a` its attributes.
pub trait Events {
    fn enter(&mut self, t: TimeStamp, a: &Attributes<'_>, region: RegionRef) -> Flow;
    fn leave(&mut self, t: TimeStamp, a: &Attributes<'_>, region: RegionRef) -> Flow;
    fn mpi_send(&mut self, t: TimeStamp, a: &Attributes<'_>, m: Message) -> Flow;
    fn mpi_recv(&mut self, t: TimeStamp, a: &Attributes<'_>, m: Message) -> Flow;
    fn mpi_isend(&mut self, t: TimeStamp, a: &Attributes<'_>, m: Message, request: u64) -> Flow;
    fn mpi_irecv(&mut self, t: TimeStamp, a: &Attributes<'_>, m: Message, request: u64) -> Flow;
    fn mpi_isend_complete(&mut self, t: TimeStamp, a: &Attributes<'_>, request: u64) -> Flow;
    fn mpi_irecv_request(&mut self, t: TimeStamp, a: &Attributes<'_>, request: u64) -> Flow;
    fn mpi_collective_begin(&mut self, t: TimeStamp, a: &Attributes<'_>) -> Flow;
    fn mpi_collective_end(&mut self, t: TimeStamp, a: &Attributes<'_>, c: CollectiveEnd) -> Flow;
    fn thread_fork(&mut self, t: TimeStamp, a: &Attributes<'_>, model: u8, size: u32) -> Flow;
    fn thread_join(&mut self, t: TimeStamp, a: &Attributes<'_>, model: u8) -> Flow;
    fn thread_acquire_lock(&mut self, t: TimeStamp, a: &Attributes<'_>, lock: u32) -> Flow;
    fn thread_release_lock(&mut self, t: TimeStamp, a: &Attributes<'_>, lock: u32) -> Flow;
    fn thread_create(&mut self, t: TimeStamp, a: &Attributes<'_>, sequence: u64) -> Flow;
    fn thread_begin(&mut self, t: TimeStamp, a: &Attributes<'_>, sequence: u64) -> Flow;
    fn thread_wait(&mut self, t: TimeStamp, a: &Attributes<'_>, sequence: u64) -> Flow;
    fn thread_end(&mut self, t: TimeStamp, a: &Attributes<'_>, sequence: u64) -> Flow;
    fn rma_put(&mut self, t: TimeStamp, a: &Attributes<'_>, r: RmaTransfer) -> Flow;
    fn rma_get(&mut self, t: TimeStamp, a: &Attributes<'_>, r: RmaTransfer) -> Flow;
    fn rma_atomic(&mut self, t: TimeStamp, a: &Attributes<'_>, r: RmaAtomic) -> Flow;
    fn rma_sync(&mut self, t: TimeStamp, a: &Attributes<'_>, remote: u32) -> Flow;
    fn rma_wait_change(&mut self, t: TimeStamp, a: &Attributes<'_>) -> Flow;
    /// A sample of the metric class `class`: its members' types and values.
    fn metric(
        &mut self,
        t: TimeStamp,
        a: &Attributes<'_>,
        class: MetricRef,
        types: &[u8],
        values: &[u64],
    ) -> Flow;
    fn parameter_int(&mut self, t: TimeStamp, a: &Attributes<'_>, p: ParameterRef, v: i64) -> Flow;
    fn parameter_unsigned_int(
        &mut self,
        t: TimeStamp,
        a: &Attributes<'_>,
        p: ParameterRef,
        v: u64,
    ) -> Flow;
    /// The measurement flushed its buffer from `t` to `stop`.
    fn buffer_flush(&mut self, t: TimeStamp, a: &Attributes<'_>, stop: TimeStamp) -> Flow;
    /// The program started, named `name` with the arguments `args`.
    fn program_begin(
        &mut self,
        t: TimeStamp,
        a: &Attributes<'_>,
        name: StringRef,
        args: &[StringRef],
    ) -> Flow;
    /// The program ended with `exit_status`.
    fn program_end(&mut self, t: TimeStamp, a: &Attributes<'_>, exit_status: i64) -> Flow;
}

/// The attributes of the record being read.
pub struct Attributes<'a> {
    raw: *mut ffi::AttributeList,
    record: PhantomData<&'a ffi::AttributeList>,
}

impl Attributes<'_> {
    /// The value of `attribute` if the record carries it as a `u64`.
    #[inline]
    pub fn get_u64(&self, attribute: AttributeRef) -> Option<u64> {
        if self.raw.is_null() {
            return None;
        }
        let mut v = 0u64;
        // Safety: the list is the live list of the current record.
        let code = unsafe { ffi::OTF2_AttributeList_GetUint64(self.raw, attribute, &mut v) };
        (code == c::SUCCESS).then_some(v)
    }
}

/// libotf2's event callback table, filled with the trampolines of `H`;
/// made once and used for every location.
pub struct EvtCallbacks<H> {
    raw: *mut ffi::EvtReaderCallbacks,
    handler: PhantomData<fn(&mut H)>,
}

impl<H: Events> EvtCallbacks<H> {
    pub fn new() -> Result<EvtCallbacks<H>, Otf2Error> {
        // Safety: no arguments; the result is checked for NULL.
        let raw = unsafe { ffi::OTF2_EvtReaderCallbacks_New() };
        if raw.is_null() {
            return Err(Otf2Error::NoMemory);
        }
        let table = EvtCallbacks {
            raw,
            handler: PhantomData,
        };
        // Safety: the table is live; each trampoline has the C signature
        // of its record.
        unsafe {
            use ffi::*;
            for code in [
                OTF2_EvtReaderCallbacks_SetEnterCallback(raw, enter::<H>),
                OTF2_EvtReaderCallbacks_SetLeaveCallback(raw, leave::<H>),
                OTF2_EvtReaderCallbacks_SetMpiSendCallback(raw, send::<H>),
                OTF2_EvtReaderCallbacks_SetMpiRecvCallback(raw, recv::<H>),
                OTF2_EvtReaderCallbacks_SetMpiIsendCallback(raw, isend::<H>),
                OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(raw, irecv::<H>),
                OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(raw, isend_complete::<H>),
                OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(raw, irecv_request::<H>),
                OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(raw, coll_begin::<H>),
                OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(raw, coll_end::<H>),
                OTF2_EvtReaderCallbacks_SetThreadForkCallback(raw, fork::<H>),
                OTF2_EvtReaderCallbacks_SetThreadJoinCallback(raw, join::<H>),
                OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(raw, acquire::<H>),
                OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(raw, release::<H>),
                OTF2_EvtReaderCallbacks_SetThreadCreateCallback(raw, thread_create::<H>),
                OTF2_EvtReaderCallbacks_SetThreadBeginCallback(raw, thread_begin::<H>),
                OTF2_EvtReaderCallbacks_SetThreadWaitCallback(raw, thread_wait::<H>),
                OTF2_EvtReaderCallbacks_SetThreadEndCallback(raw, thread_end::<H>),
                OTF2_EvtReaderCallbacks_SetRmaPutCallback(raw, put::<H>),
                OTF2_EvtReaderCallbacks_SetRmaGetCallback(raw, get::<H>),
                OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(raw, atomic::<H>),
                OTF2_EvtReaderCallbacks_SetRmaSyncCallback(raw, rma_sync::<H>),
                OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(raw, wait_change::<H>),
                OTF2_EvtReaderCallbacks_SetMetricCallback(raw, metric::<H>),
                OTF2_EvtReaderCallbacks_SetParameterIntCallback(raw, param_int::<H>),
                OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(raw, param_uint::<H>),
                OTF2_EvtReaderCallbacks_SetBufferFlushCallback(raw, flush::<H>),
                OTF2_EvtReaderCallbacks_SetProgramBeginCallback(raw, program_begin::<H>),
                OTF2_EvtReaderCallbacks_SetProgramEndCallback(raw, program_end::<H>),
            ] {
                Otf2Error::check(code)?;
            }
        }
        Ok(table)
    }

    pub(super) fn as_raw(&self) -> *const ffi::EvtReaderCallbacks {
        self.raw
    }
}

impl<H> Drop for EvtCallbacks<H> {
    fn drop(&mut self) {
        // Safety: the table came from OTF2_EvtReaderCallbacks_New and is
        // freed once.
        unsafe { ffi::OTF2_EvtReaderCallbacks_Delete(self.raw) }
    }
}

type L = LocationRef;
type T = TimeStamp;
type A = *mut ffi::AttributeList;

/// Calls `f` with the handler registered as user data `d` and the
/// record's attributes `a`; its flow becomes libotf2's callback code.
#[inline(always)]
fn call<H>(d: *mut c_void, a: A, f: impl FnOnce(&mut H, &Attributes<'_>) -> Flow) -> CallbackCode {
    // Safety: libotf2 passes back the `&mut H` registered with these
    // callbacks by `EvtReader::read_all`, live for that read; `a` is the
    // current record's list (or NULL).
    let h = unsafe { &mut *d.cast::<H>() };
    let attrs = Attributes {
        raw: a,
        record: PhantomData,
    };
    match f(h, &attrs) {
        ControlFlow::Continue(()) => c::CALLBACK_SUCCESS,
        ControlFlow::Break(()) => c::CALLBACK_INTERRUPT,
    }
}

/// Defines the trampoline `$name` of a record whose callback takes the
/// arguments `$arg` after the common ones (location, time, position, user
/// data, attributes): it gives the handler `$h`, the time `$t` and the
/// attributes `$a` to `$call`.
macro_rules! trampolines {
    ($($name:ident($($arg:ident: $ty:ty),*) |$h:ident, $t:ident, $a:ident| $call:expr;)*) => {
        $(
            #[allow(clippy::too_many_arguments)]
            extern "C" fn $name<H: Events>(
                _: L,
                $t: T,
                _: u64,
                d: *mut c_void,
                a: A,
                $($arg: $ty),*
            ) -> CallbackCode {
                call(d, a, |$h: &mut H, $a| $call)
            }
        )*
    };
}

trampolines! {
    enter(r: u32) |h, t, a| h.enter(t, a, r);
    leave(r: u32) |h, t, a| h.leave(t, a, r);
    send(peer: u32, comm: CommRef, tag: u32, bytes: u64)
        |h, t, a| h.mpi_send(t, a, Message { peer, comm, tag, bytes });
    recv(peer: u32, comm: CommRef, tag: u32, bytes: u64)
        |h, t, a| h.mpi_recv(t, a, Message { peer, comm, tag, bytes });
    isend(peer: u32, comm: CommRef, tag: u32, bytes: u64, request: u64)
        |h, t, a| h.mpi_isend(t, a, Message { peer, comm, tag, bytes }, request);
    irecv(peer: u32, comm: CommRef, tag: u32, bytes: u64, request: u64)
        |h, t, a| h.mpi_irecv(t, a, Message { peer, comm, tag, bytes }, request);
    isend_complete(request: u64) |h, t, a| h.mpi_isend_complete(t, a, request);
    irecv_request(request: u64) |h, t, a| h.mpi_irecv_request(t, a, request);
    coll_begin() |h, t, a| h.mpi_collective_begin(t, a);
    coll_end(op: u8, comm: CommRef, root: u32, sent: u64, received: u64)
        |h, t, a| h.mpi_collective_end(t, a, CollectiveEnd { op, comm, root, sent, received });
    fork(model: u8, size: u32) |h, t, a| h.thread_fork(t, a, model, size);
    join(model: u8) |h, t, a| h.thread_join(t, a, model);
    acquire(_model: u8, lock: u32, _order: u32) |h, t, a| h.thread_acquire_lock(t, a, lock);
    release(_model: u8, lock: u32, _order: u32) |h, t, a| h.thread_release_lock(t, a, lock);
    thread_create(_contingent: CommRef, sequence: u64) |h, t, a| h.thread_create(t, a, sequence);
    thread_begin(_contingent: CommRef, sequence: u64) |h, t, a| h.thread_begin(t, a, sequence);
    thread_wait(_contingent: CommRef, sequence: u64) |h, t, a| h.thread_wait(t, a, sequence);
    thread_end(_contingent: CommRef, sequence: u64) |h, t, a| h.thread_end(t, a, sequence);
    put(win: RmaWinRef, remote: u32, bytes: u64, matching: u64)
        |h, t, a| h.rma_put(t, a, RmaTransfer { win, remote, bytes, matching });
    get(win: RmaWinRef, remote: u32, bytes: u64, matching: u64)
        |h, t, a| h.rma_get(t, a, RmaTransfer { win, remote, bytes, matching });
    atomic(win: RmaWinRef, remote: u32, kind: u8, sent: u64, received: u64, matching: u64)
        |h, t, a| h.rma_atomic(t, a, RmaAtomic { win, remote, kind, sent, received, matching });
    rma_sync(_win: RmaWinRef, remote: u32, _kind: u8) |h, t, a| h.rma_sync(t, a, remote);
    wait_change(_win: RmaWinRef) |h, t, a| h.rma_wait_change(t, a);
    param_int(p: ParameterRef, v: i64) |h, t, a| h.parameter_int(t, a, p, v);
    param_uint(p: ParameterRef, v: u64) |h, t, a| h.parameter_unsigned_int(t, a, p, v);
    flush(stop: T) |h, t, a| h.buffer_flush(t, a, stop);
    program_end(status: i64) |h, t, a| h.program_end(t, a, status);
}

#[allow(clippy::too_many_arguments)]
extern "C" fn program_begin<H: Events>(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    name: StringRef,
    n: u32,
    args: *const StringRef,
) -> CallbackCode {
    // Safety: libotf2 passes `n` arguments at `args`.
    let args = unsafe { slice(args, n as usize) };
    call(d, a, |h: &mut H, a| h.program_begin(t, a, name, args))
}

#[allow(clippy::too_many_arguments)]
extern "C" fn metric<H: Events>(
    _: L,
    t: T,
    _: u64,
    d: *mut c_void,
    a: A,
    class: MetricRef,
    n: u8,
    types: *const u8,
    values: *const u64,
) -> CallbackCode {
    // Safety: libotf2 passes `n` types and values (NULL gives none).
    let (types, values) = unsafe { (slice(types, n as usize), slice(values, n as usize)) };
    let n = if types.is_empty() || values.is_empty() {
        0
    } else {
        n as usize
    };
    call(d, a, |h: &mut H, a| {
        h.metric(t, a, class, &types[..n], &values[..n])
    })
}
