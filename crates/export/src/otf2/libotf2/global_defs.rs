//! Reading global definitions: what a reader of them implements, and the
//! trampolines through which libotf2 calls it.

use std::borrow::Cow;
use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;

use super::consts::{self as c, CallbackCode, LocationRef, StringRef};
use super::ffi;
use super::records::{
    Attribute, ClockProperties, Comm, Group, Location, LocationGroup, MetricClass, MetricMember,
    Parameter, Region, SystemTreeNode,
};
use super::Otf2Error;

/// Receives the global definitions of an archive, one call per record, in
/// the archive's order.
pub trait GlobalDefs {
    fn string(&mut self, id: StringRef, s: Cow<'_, str>);
    fn clock_properties(&mut self, c: ClockProperties);
    fn system_tree_node(&mut self, n: SystemTreeNode);
    fn location_group(&mut self, g: LocationGroup);
    fn location(&mut self, l: Location);
    fn region(&mut self, r: Region);
    fn group(&mut self, g: Group<'_>);
    fn comm(&mut self, c: Comm);
    fn metric_member(&mut self, m: MetricMember);
    fn metric_class(&mut self, c: MetricClass<'_>);
    fn parameter(&mut self, p: Parameter);
    fn attribute(&mut self, a: Attribute);
}

/// libotf2's callback table, filled with the trampolines of `H`.
pub(super) struct GlobalDefCallbacks<H> {
    raw: *mut ffi::GlobalDefReaderCallbacks,
    handler: PhantomData<fn(&mut H)>,
}

impl<H: GlobalDefs> GlobalDefCallbacks<H> {
    pub(super) fn new() -> Result<GlobalDefCallbacks<H>, Otf2Error> {
        // Safety: no arguments; the result is checked for NULL.
        let raw = unsafe { ffi::OTF2_GlobalDefReaderCallbacks_New() };
        if raw.is_null() {
            return Err(Otf2Error::NoMemory);
        }
        let table = GlobalDefCallbacks {
            raw,
            handler: PhantomData,
        };
        // Safety: the table is live; each trampoline has the C signature
        // of its record.
        unsafe {
            use ffi::*;
            for code in [
                OTF2_GlobalDefReaderCallbacks_SetStringCallback(raw, string::<H>),
                OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(raw, clock::<H>),
                OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(raw, tree::<H>),
                OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(raw, loc_group::<H>),
                OTF2_GlobalDefReaderCallbacks_SetLocationCallback(raw, location::<H>),
                OTF2_GlobalDefReaderCallbacks_SetRegionCallback(raw, region::<H>),
                OTF2_GlobalDefReaderCallbacks_SetGroupCallback(raw, group::<H>),
                OTF2_GlobalDefReaderCallbacks_SetCommCallback(raw, comm::<H>),
                OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(raw, metric_member::<H>),
                OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(raw, metric_class::<H>),
                OTF2_GlobalDefReaderCallbacks_SetParameterCallback(raw, parameter::<H>),
                OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(raw, attribute::<H>),
            ] {
                Otf2Error::check(code)?;
            }
        }
        Ok(table)
    }

    pub(super) fn as_raw(&self) -> *const ffi::GlobalDefReaderCallbacks {
        self.raw
    }
}

impl<H> Drop for GlobalDefCallbacks<H> {
    fn drop(&mut self) {
        // Safety: the table came from OTF2_GlobalDefReaderCallbacks_New and
        // is freed once.
        unsafe { ffi::OTF2_GlobalDefReaderCallbacks_Delete(self.raw) }
    }
}

/// The handler registered as the callbacks' user data.
///
/// # Safety
///
/// `d` must be the `&mut H` registered with these callbacks, live for the
/// read that calls back.
unsafe fn handler<'a, H>(d: *mut c_void) -> &'a mut H {
    &mut *d.cast::<H>()
}

/// A slice from libotf2's (count, pointer), empty for NULL.
///
/// # Safety
///
/// A non-NULL `p` must point to `n` elements live for `'a`.
pub(super) unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

// Safety of every trampoline below: libotf2 passes back the user data
// registered with the callbacks (see `handler`) and arrays of the counts
// it passes beside them.

extern "C" fn string<H: GlobalDefs>(d: *mut c_void, id: u32, s: *const c_char) -> CallbackCode {
    let s = if s.is_null() {
        Cow::Borrowed("")
    } else {
        // Safety: libotf2 passes a NUL-terminated string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy()
    };
    // Safety: see above.
    unsafe { handler::<H>(d) }.string(id, s);
    c::CALLBACK_SUCCESS
}

#[allow(clippy::too_many_arguments)]
extern "C" fn group<H: GlobalDefs>(
    d: *mut c_void,
    id: u32,
    name: u32,
    kind: u8,
    paradigm: u8,
    flags: u32,
    n: u32,
    members: *const u64,
) -> CallbackCode {
    // Safety: see above.
    let members = unsafe { slice(members, n as usize) };
    let g = Group {
        id,
        name,
        kind,
        paradigm,
        flags,
        members,
    };
    // Safety: see above.
    unsafe { handler::<H>(d) }.group(g);
    c::CALLBACK_SUCCESS
}

extern "C" fn metric_class<H: GlobalDefs>(
    d: *mut c_void,
    id: u32,
    n: u8,
    members: *const u32,
    occurrence: u8,
    recorder_kind: u8,
) -> CallbackCode {
    // Safety: see above.
    let members = unsafe { slice(members, n as usize) };
    let c = MetricClass {
        id,
        members,
        occurrence,
        recorder_kind,
    };
    // Safety: see above.
    unsafe { handler::<H>(d) }.metric_class(c);
    c::CALLBACK_SUCCESS
}

/// Defines the trampoline `$name` of a record whose callback's arguments
/// after the user data are the fields of `$record`, in order: it gives
/// the record to the handler's `$method`.
macro_rules! record_trampolines {
    ($($name:ident => $method:ident($record:ident { $($field:ident: $ty:ty),* });)*) => {
        $(
            #[allow(clippy::too_many_arguments)]
            extern "C" fn $name<H: GlobalDefs>(d: *mut c_void, $($field: $ty),*) -> CallbackCode {
                // Safety: see above.
                unsafe { handler::<H>(d) }.$method($record { $($field),* });
                c::CALLBACK_SUCCESS
            }
        )*
    };
}

record_trampolines! {
    clock => clock_properties(ClockProperties {
        resolution: u64, offset: u64, length: u64, realtime: u64
    });
    tree => system_tree_node(SystemTreeNode { id: u32, name: u32, class: u32, parent: u32 });
    loc_group => location_group(LocationGroup {
        id: u32, name: u32, kind: u8, parent: u32, creating_group: u32
    });
    location => location(Location {
        id: LocationRef, name: u32, kind: u8, events: u64, group: u32
    });
    region => region(Region {
        id: u32, name: u32, canonical_name: u32, description: u32, role: u8, paradigm: u8,
        flags: u32, file: u32, begin_line: u32, end_line: u32
    });
    comm => comm(Comm { id: u32, name: u32, group: u32, parent: u32, flags: u32 });
    metric_member => metric_member(MetricMember {
        id: u32, name: u32, description: u32, kind: u8, mode: u8, value_type: u8, base: u8,
        exponent: i64, unit: u32
    });
    parameter => parameter(Parameter { id: u32, name: u32, kind: u8 });
    attribute => attribute(Attribute { id: u32, name: u32, description: u32, kind: u8 });
}
