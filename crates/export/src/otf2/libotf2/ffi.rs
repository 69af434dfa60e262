//! Hand-written declarations of the part of libotf2's C API (OTF2 3.x,
//! `<otf2/otf2.h>`) that the export and import use, called only by the
//! safe wrapper beside this file. Handles are opaque.
#![allow(non_camel_case_types, non_snake_case, dead_code, missing_docs)]

use std::ffi::{c_char, c_void};

use super::consts::*;

#[repr(C)]
pub struct Archive {
    _p: [u8; 0],
}
#[repr(C)]
pub struct EvtWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct DefWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct GlobalDefWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct AttributeList {
    _p: [u8; 0],
}
#[repr(C)]
pub struct Reader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct EvtReader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct DefReader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct GlobalDefReader {
    _p: [u8; 0],
}
#[repr(C)]
pub struct EvtReaderCallbacks {
    _p: [u8; 0],
}
#[repr(C)]
pub struct GlobalDefReaderCallbacks {
    _p: [u8; 0],
}

pub type PreFlush = extern "C" fn(*mut c_void, u8, LocationRef, *mut c_void, bool) -> u8;
pub type PostFlush = extern "C" fn(*mut c_void, u8, LocationRef) -> TimeStamp;

#[repr(C)]
pub struct FlushCallbacks {
    pub pre: Option<PreFlush>,
    pub post: Option<PostFlush>,
}

pub type MemoryAllocate =
    extern "C" fn(*mut c_void, u8, LocationRef, *mut *mut c_void, u64) -> *mut c_void;
pub type MemoryFreeAll = extern "C" fn(*mut c_void, u8, LocationRef, *mut *mut c_void, bool);

#[repr(C)]
pub struct MemoryCallbacks {
    pub allocate: Option<MemoryAllocate>,
    pub free_all: Option<MemoryFreeAll>,
}

// === Global definition callbacks ===
pub type GdString = extern "C" fn(*mut c_void, StringRef, *const c_char) -> CallbackCode;
pub type GdClockProperties = extern "C" fn(*mut c_void, u64, u64, u64, u64) -> CallbackCode;
pub type GdSystemTreeNode =
    extern "C" fn(*mut c_void, u32, StringRef, StringRef, u32) -> CallbackCode;
pub type GdLocationGroup = extern "C" fn(*mut c_void, u32, StringRef, u8, u32, u32) -> CallbackCode;
pub type GdLocation =
    extern "C" fn(*mut c_void, LocationRef, StringRef, u8, u64, u32) -> CallbackCode;
pub type GdRegion = extern "C" fn(
    *mut c_void,
    RegionRef,
    StringRef,
    StringRef,
    StringRef,
    u8,
    u8,
    u32,
    StringRef,
    u32,
    u32,
) -> CallbackCode;
pub type GdGroup =
    extern "C" fn(*mut c_void, GroupRef, StringRef, u8, u8, u32, u32, *const u64) -> CallbackCode;
pub type GdComm =
    extern "C" fn(*mut c_void, CommRef, StringRef, GroupRef, CommRef, u32) -> CallbackCode;
pub type GdMetricMember = extern "C" fn(
    *mut c_void,
    u32,
    StringRef,
    StringRef,
    u8,
    u8,
    u8,
    u8,
    i64,
    StringRef,
) -> CallbackCode;
pub type GdMetricClass =
    extern "C" fn(*mut c_void, MetricRef, u8, *const u32, u8, u8) -> CallbackCode;
pub type GdParameter = extern "C" fn(*mut c_void, ParameterRef, StringRef, u8) -> CallbackCode;
pub type GdAttribute =
    extern "C" fn(*mut c_void, AttributeRef, StringRef, StringRef, u8) -> CallbackCode;

// === Event callbacks: (location, time, position, user data, attributes, ...) ===
pub type EvRegion = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    RegionRef,
) -> CallbackCode;
pub type EvMpiSend = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    u32,
    CommRef,
    u32,
    u64,
) -> CallbackCode;
pub type EvMpiIsend = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    u32,
    CommRef,
    u32,
    u64,
    u64,
) -> CallbackCode;
pub type EvRequest = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    u64,
) -> CallbackCode;
pub type EvNoArgs =
    extern "C" fn(LocationRef, TimeStamp, u64, *mut c_void, *mut AttributeList) -> CallbackCode;
pub type EvCollEnd = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    u8,
    CommRef,
    u32,
    u64,
    u64,
) -> CallbackCode;
pub type EvFork = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    u8,
    u32,
) -> CallbackCode;
pub type EvJoin =
    extern "C" fn(LocationRef, TimeStamp, u64, *mut c_void, *mut AttributeList, u8) -> CallbackCode;
pub type EvLock = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    u8,
    u32,
    u32,
) -> CallbackCode;
pub type EvThread = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    CommRef,
    u64,
) -> CallbackCode;
pub type EvRmaPut = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    RmaWinRef,
    u32,
    u64,
    u64,
) -> CallbackCode;
pub type EvRmaAtomic = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    RmaWinRef,
    u32,
    u8,
    u64,
    u64,
    u64,
) -> CallbackCode;
pub type EvRmaSync = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    RmaWinRef,
    u32,
    u8,
) -> CallbackCode;
pub type EvRmaWaitChange = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    RmaWinRef,
) -> CallbackCode;
pub type EvMetric = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    MetricRef,
    u8,
    *const u8,
    *const u64,
) -> CallbackCode;
pub type EvParameter = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    ParameterRef,
    u64,
) -> CallbackCode;
pub type EvParameterInt = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    ParameterRef,
    i64,
) -> CallbackCode;
pub type EvBufferFlush = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    TimeStamp,
) -> CallbackCode;
pub type EvProgramBegin = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    StringRef,
    u32,
    *const StringRef,
) -> CallbackCode;
pub type EvProgramEnd = extern "C" fn(
    LocationRef,
    TimeStamp,
    u64,
    *mut c_void,
    *mut AttributeList,
    i64,
) -> CallbackCode;
pub type EvUnknown =
    extern "C" fn(LocationRef, TimeStamp, u64, *mut c_void, *mut AttributeList) -> CallbackCode;

#[link(name = "otf2")]
extern "C" {
    pub fn OTF2_Error_GetName(code: ErrorCode) -> *const c_char;
    pub fn OTF2_Error_GetDescription(code: ErrorCode) -> *const c_char;

    // Archive (writing)
    pub fn OTF2_Archive_Open(
        path: *const c_char,
        name: *const c_char,
        mode: u8,
        chunk_events: u64,
        chunk_defs: u64,
        substrate: u8,
        compression: u8,
    ) -> *mut Archive;
    pub fn OTF2_Archive_Close(a: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_SetFlushCallbacks(
        a: *mut Archive,
        cb: *const FlushCallbacks,
        data: *mut c_void,
    ) -> ErrorCode;
    pub fn OTF2_Archive_SetMemoryCallbacks(
        a: *mut Archive,
        cb: *const MemoryCallbacks,
        data: *mut c_void,
    ) -> ErrorCode;
    pub fn OTF2_Archive_SetSerialCollectiveCallbacks(a: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_SetCreator(a: *mut Archive, s: *const c_char) -> ErrorCode;
    pub fn OTF2_Archive_SetDescription(a: *mut Archive, s: *const c_char) -> ErrorCode;
    pub fn OTF2_Archive_SetMachineName(a: *mut Archive, s: *const c_char) -> ErrorCode;
    pub fn OTF2_Archive_SetProperty(
        a: *mut Archive,
        name: *const c_char,
        value: *const c_char,
        overwrite: bool,
    ) -> ErrorCode;
    pub fn OTF2_Archive_OpenEvtFiles(a: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_CloseEvtFiles(a: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_OpenDefFiles(a: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_CloseDefFiles(a: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_GetEvtWriter(a: *mut Archive, loc: LocationRef) -> *mut EvtWriter;
    pub fn OTF2_Archive_CloseEvtWriter(a: *mut Archive, w: *mut EvtWriter) -> ErrorCode;
    pub fn OTF2_Archive_GetDefWriter(a: *mut Archive, loc: LocationRef) -> *mut DefWriter;
    pub fn OTF2_Archive_CloseDefWriter(a: *mut Archive, w: *mut DefWriter) -> ErrorCode;
    pub fn OTF2_Archive_GetGlobalDefWriter(a: *mut Archive) -> *mut GlobalDefWriter;

    // Attribute lists
    pub fn OTF2_AttributeList_New() -> *mut AttributeList;
    pub fn OTF2_AttributeList_Delete(l: *mut AttributeList) -> ErrorCode;
    pub fn OTF2_AttributeList_AddUint64(
        l: *mut AttributeList,
        a: AttributeRef,
        v: u64,
    ) -> ErrorCode;
    pub fn OTF2_AttributeList_GetUint64(
        l: *const AttributeList,
        a: AttributeRef,
        v: *mut u64,
    ) -> ErrorCode;
    pub fn OTF2_AttributeList_GetNumberOfElements(l: *const AttributeList) -> u32;

    // Global definitions
    pub fn OTF2_GlobalDefWriter_WriteClockProperties(
        w: *mut GlobalDefWriter,
        resolution: u64,
        offset: u64,
        length: u64,
        realtime: u64,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteString(
        w: *mut GlobalDefWriter,
        s: StringRef,
        v: *const c_char,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteSystemTreeNode(
        w: *mut GlobalDefWriter,
        s: u32,
        name: StringRef,
        class: StringRef,
        parent: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocationGroup(
        w: *mut GlobalDefWriter,
        s: u32,
        name: StringRef,
        kind: u8,
        parent: u32,
        creating: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocation(
        w: *mut GlobalDefWriter,
        s: LocationRef,
        name: StringRef,
        kind: u8,
        events: u64,
        group: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteRegion(
        w: *mut GlobalDefWriter,
        s: RegionRef,
        name: StringRef,
        canonical: StringRef,
        description: StringRef,
        role: u8,
        paradigm: u8,
        flags: u32,
        file: StringRef,
        begin: u32,
        end: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteGroup(
        w: *mut GlobalDefWriter,
        s: GroupRef,
        name: StringRef,
        kind: u8,
        paradigm: u8,
        flags: u32,
        n: u32,
        members: *const u64,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteComm(
        w: *mut GlobalDefWriter,
        s: CommRef,
        name: StringRef,
        group: GroupRef,
        parent: CommRef,
        flags: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteRmaWin(
        w: *mut GlobalDefWriter,
        s: RmaWinRef,
        name: StringRef,
        comm: CommRef,
        flags: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteMetricMember(
        w: *mut GlobalDefWriter,
        s: u32,
        name: StringRef,
        description: StringRef,
        kind: u8,
        mode: u8,
        value_type: u8,
        base: u8,
        exponent: i64,
        unit: StringRef,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteMetricClass(
        w: *mut GlobalDefWriter,
        s: MetricRef,
        n: u8,
        members: *const u32,
        occurrence: u8,
        recorder: u8,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteParameter(
        w: *mut GlobalDefWriter,
        s: ParameterRef,
        name: StringRef,
        kind: u8,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteAttribute(
        w: *mut GlobalDefWriter,
        s: AttributeRef,
        name: StringRef,
        description: StringRef,
        kind: u8,
    ) -> ErrorCode;

    // Events
    pub fn OTF2_EvtWriter_Enter(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        r: RegionRef,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_Leave(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        r: RegionRef,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiSend(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        receiver: u32,
        comm: CommRef,
        tag: u32,
        len: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiIsend(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        receiver: u32,
        comm: CommRef,
        tag: u32,
        len: u64,
        request: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiIsendComplete(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        request: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiIrecvRequest(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        request: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiRecv(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        sender: u32,
        comm: CommRef,
        tag: u32,
        len: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiIrecv(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        sender: u32,
        comm: CommRef,
        tag: u32,
        len: u64,
        request: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiCollectiveBegin(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiCollectiveEnd(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        op: u8,
        comm: CommRef,
        root: u32,
        sent: u64,
        received: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadFork(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        model: u8,
        n: u32,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadJoin(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        model: u8,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadAcquireLock(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        model: u8,
        lock: u32,
        order: u32,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadReleaseLock(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        model: u8,
        lock: u32,
        order: u32,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadCreate(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        contingent: CommRef,
        seq: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadBegin(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        contingent: CommRef,
        seq: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadWait(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        contingent: CommRef,
        seq: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ThreadEnd(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        contingent: CommRef,
        seq: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_RmaPut(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        win: RmaWinRef,
        remote: u32,
        bytes: u64,
        matching: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_RmaGet(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        win: RmaWinRef,
        remote: u32,
        bytes: u64,
        matching: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_RmaAtomic(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        win: RmaWinRef,
        remote: u32,
        kind: u8,
        sent: u64,
        received: u64,
        matching: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_RmaSync(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        win: RmaWinRef,
        remote: u32,
        kind: u8,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_RmaWaitChange(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        win: RmaWinRef,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_Metric(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        metric: MetricRef,
        n: u8,
        types: *const u8,
        values: *const u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ParameterInt(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        p: ParameterRef,
        v: i64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_ParameterUnsignedInt(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        p: ParameterRef,
        v: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_BufferFlush(
        w: *mut EvtWriter,
        a: *mut AttributeList,
        t: TimeStamp,
        stop: TimeStamp,
    ) -> ErrorCode;

    // Reading
    pub fn OTF2_Reader_Open(path: *const c_char) -> *mut Reader;
    pub fn OTF2_Reader_Close(r: *mut Reader) -> ErrorCode;
    pub fn OTF2_Reader_SetSerialCollectiveCallbacks(r: *mut Reader) -> ErrorCode;
    pub fn OTF2_Reader_GetNumberOfLocations(r: *mut Reader, n: *mut u64) -> ErrorCode;
    pub fn OTF2_Reader_GetGlobalDefReader(r: *mut Reader) -> *mut GlobalDefReader;
    pub fn OTF2_Reader_RegisterGlobalDefCallbacks(
        r: *mut Reader,
        d: *mut GlobalDefReader,
        cb: *const GlobalDefReaderCallbacks,
        data: *mut c_void,
    ) -> ErrorCode;
    pub fn OTF2_Reader_ReadAllGlobalDefinitions(
        r: *mut Reader,
        d: *mut GlobalDefReader,
        n: *mut u64,
    ) -> ErrorCode;
    pub fn OTF2_Reader_CloseGlobalDefReader(r: *mut Reader, d: *mut GlobalDefReader) -> ErrorCode;
    pub fn OTF2_Reader_SelectLocation(r: *mut Reader, loc: LocationRef) -> ErrorCode;
    pub fn OTF2_Reader_OpenDefFiles(r: *mut Reader) -> ErrorCode;
    pub fn OTF2_Reader_CloseDefFiles(r: *mut Reader) -> ErrorCode;
    pub fn OTF2_Reader_OpenEvtFiles(r: *mut Reader) -> ErrorCode;
    pub fn OTF2_Reader_CloseEvtFiles(r: *mut Reader) -> ErrorCode;
    pub fn OTF2_Reader_GetDefReader(r: *mut Reader, loc: LocationRef) -> *mut DefReader;
    pub fn OTF2_Reader_ReadAllLocalDefinitions(
        r: *mut Reader,
        d: *mut DefReader,
        n: *mut u64,
    ) -> ErrorCode;
    pub fn OTF2_Reader_CloseDefReader(r: *mut Reader, d: *mut DefReader) -> ErrorCode;
    pub fn OTF2_Reader_GetEvtReader(r: *mut Reader, loc: LocationRef) -> *mut EvtReader;
    pub fn OTF2_Reader_RegisterEvtCallbacks(
        r: *mut Reader,
        e: *mut EvtReader,
        cb: *const EvtReaderCallbacks,
        data: *mut c_void,
    ) -> ErrorCode;
    pub fn OTF2_Reader_ReadAllLocalEvents(
        r: *mut Reader,
        e: *mut EvtReader,
        n: *mut u64,
    ) -> ErrorCode;
    pub fn OTF2_Reader_CloseEvtReader(r: *mut Reader, e: *mut EvtReader) -> ErrorCode;

    pub fn OTF2_GlobalDefReaderCallbacks_New() -> *mut GlobalDefReaderCallbacks;
    pub fn OTF2_GlobalDefReaderCallbacks_Delete(c: *mut GlobalDefReaderCallbacks);
    pub fn OTF2_GlobalDefReaderCallbacks_SetStringCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdString,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdClockProperties,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdSystemTreeNode,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdLocationGroup,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdLocation,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdRegion,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdGroup,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetCommCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdComm,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdMetricMember,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdMetricClass,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetParameterCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdParameter,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(
        c: *mut GlobalDefReaderCallbacks,
        f: GdAttribute,
    ) -> ErrorCode;

    pub fn OTF2_EvtReaderCallbacks_New() -> *mut EvtReaderCallbacks;
    pub fn OTF2_EvtReaderCallbacks_Delete(c: *mut EvtReaderCallbacks);
    pub fn OTF2_EvtReaderCallbacks_SetUnknownCallback(
        c: *mut EvtReaderCallbacks,
        f: EvUnknown,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetEnterCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRegion,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetLeaveCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRegion,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiSendCallback(
        c: *mut EvtReaderCallbacks,
        f: EvMpiSend,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIsendCallback(
        c: *mut EvtReaderCallbacks,
        f: EvMpiIsend,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRequest,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRequest,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiRecvCallback(
        c: *mut EvtReaderCallbacks,
        f: EvMpiSend,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(
        c: *mut EvtReaderCallbacks,
        f: EvMpiIsend,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(
        c: *mut EvtReaderCallbacks,
        f: EvNoArgs,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
        c: *mut EvtReaderCallbacks,
        f: EvCollEnd,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadForkCallback(
        c: *mut EvtReaderCallbacks,
        f: EvFork,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadJoinCallback(
        c: *mut EvtReaderCallbacks,
        f: EvJoin,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(
        c: *mut EvtReaderCallbacks,
        f: EvLock,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(
        c: *mut EvtReaderCallbacks,
        f: EvLock,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadCreateCallback(
        c: *mut EvtReaderCallbacks,
        f: EvThread,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadBeginCallback(
        c: *mut EvtReaderCallbacks,
        f: EvThread,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadWaitCallback(
        c: *mut EvtReaderCallbacks,
        f: EvThread,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetThreadEndCallback(
        c: *mut EvtReaderCallbacks,
        f: EvThread,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetRmaPutCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRmaPut,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetRmaGetCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRmaPut,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRmaAtomic,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetRmaSyncCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRmaSync,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(
        c: *mut EvtReaderCallbacks,
        f: EvRmaWaitChange,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetMetricCallback(
        c: *mut EvtReaderCallbacks,
        f: EvMetric,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetParameterIntCallback(
        c: *mut EvtReaderCallbacks,
        f: EvParameterInt,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(
        c: *mut EvtReaderCallbacks,
        f: EvParameter,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetBufferFlushCallback(
        c: *mut EvtReaderCallbacks,
        f: EvBufferFlush,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetProgramBeginCallback(
        c: *mut EvtReaderCallbacks,
        f: EvProgramBegin,
    ) -> ErrorCode;
    pub fn OTF2_EvtReaderCallbacks_SetProgramEndCallback(
        c: *mut EvtReaderCallbacks,
        f: EvProgramEnd,
    ) -> ErrorCode;
}
