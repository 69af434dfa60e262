//! The archive's global definition writer.

use std::ffi::CStr;
use std::marker::PhantomData;

use super::archive::Archive;
use super::consts::{CommRef, RmaWinRef, StringRef};
use super::ffi;
use super::records::{
    Attribute, ClockProperties, Comm, Group, Location, LocationGroup, MetricClass, MetricMember,
    Parameter, Region, SystemTreeNode,
};
use super::Otf2Error;

/// Writes the global definitions; the archive owns the handle and writes
/// what it holds when closed.
pub struct GlobalDefWriter<'a> {
    raw: *mut ffi::GlobalDefWriter,
    archive: PhantomData<&'a Archive>,
}

impl GlobalDefWriter<'_> {
    pub(super) fn new<'a>(raw: *mut ffi::GlobalDefWriter) -> GlobalDefWriter<'a> {
        GlobalDefWriter {
            raw,
            archive: PhantomData,
        }
    }

    pub fn clock_properties(&mut self, c: &ClockProperties) -> Result<(), Otf2Error> {
        // Safety: the writer is live (its archive is borrowed).
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteClockProperties(
                self.raw,
                c.resolution,
                c.offset,
                c.length,
                c.realtime,
            )
        })
    }

    pub fn string(&mut self, id: StringRef, s: &CStr) -> Result<(), Otf2Error> {
        // Safety: the writer is live; the string is NUL-terminated.
        Otf2Error::check(unsafe { ffi::OTF2_GlobalDefWriter_WriteString(self.raw, id, s.as_ptr()) })
    }

    pub fn system_tree_node(&mut self, n: &SystemTreeNode) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteSystemTreeNode(self.raw, n.id, n.name, n.class, n.parent)
        })
    }

    pub fn location_group(&mut self, g: &LocationGroup) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteLocationGroup(
                self.raw,
                g.id,
                g.name,
                g.kind,
                g.parent,
                g.creating_group,
            )
        })
    }

    pub fn location(&mut self, l: &Location) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteLocation(
                self.raw, l.id, l.name, l.kind, l.events, l.group,
            )
        })
    }

    pub fn region(&mut self, r: &Region) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteRegion(
                self.raw,
                r.id,
                r.name,
                r.canonical_name,
                r.description,
                r.role,
                r.paradigm,
                r.flags,
                r.file,
                r.begin_line,
                r.end_line,
            )
        })
    }

    pub fn group(&mut self, g: &Group<'_>) -> Result<(), Otf2Error> {
        let n = u32::try_from(g.members.len()).map_err(|_| Otf2Error::TooMany)?;
        // Safety: the writer is live; `members` holds `n` refs.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteGroup(
                self.raw,
                g.id,
                g.name,
                g.kind,
                g.paradigm,
                g.flags,
                n,
                g.members.as_ptr(),
            )
        })
    }

    pub fn comm(&mut self, c: &Comm) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteComm(self.raw, c.id, c.name, c.group, c.parent, c.flags)
        })
    }

    pub fn rma_win(
        &mut self,
        id: RmaWinRef,
        name: StringRef,
        comm: CommRef,
        flags: u32,
    ) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteRmaWin(self.raw, id, name, comm, flags)
        })
    }

    pub fn metric_member(&mut self, m: &MetricMember) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteMetricMember(
                self.raw,
                m.id,
                m.name,
                m.description,
                m.kind,
                m.mode,
                m.value_type,
                m.base,
                m.exponent,
                m.unit,
            )
        })
    }

    pub fn metric_class(&mut self, c: &MetricClass<'_>) -> Result<(), Otf2Error> {
        let n = u8::try_from(c.members.len()).map_err(|_| Otf2Error::TooMany)?;
        // Safety: the writer is live; `members` holds `n` refs.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteMetricClass(
                self.raw,
                c.id,
                n,
                c.members.as_ptr(),
                c.occurrence,
                c.recorder_kind,
            )
        })
    }

    pub fn parameter(&mut self, p: &Parameter) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteParameter(self.raw, p.id, p.name, p.kind)
        })
    }

    pub fn attribute(&mut self, a: &Attribute) -> Result<(), Otf2Error> {
        // Safety: the writer is live.
        Otf2Error::check(unsafe {
            ffi::OTF2_GlobalDefWriter_WriteAttribute(self.raw, a.id, a.name, a.description, a.kind)
        })
    }
}
