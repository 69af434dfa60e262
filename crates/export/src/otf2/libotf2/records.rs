//! OTF2 records with more fields than a call takes comfortably, as read
//! and as written: definitions, and the arguments of some events. Field
//! names follow the OTF2 documentation; `id` is the record's own ref.

use super::consts::{AttributeRef, StringRef};
use super::consts::{CommRef, LocationRef, MetricRef, ParameterRef, RegionRef, RmaWinRef};

/// The timer of the archive.
#[derive(Clone, Copy, Debug)]
pub struct ClockProperties {
    /// Ticks per second.
    pub resolution: u64,
    /// The tick of the trace's start.
    pub offset: u64,
    /// Ticks from start to end.
    pub length: u64,
    /// ns since the Unix epoch at `offset`, or `UNDEFINED_U64`.
    pub realtime: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct SystemTreeNode {
    pub id: u32,
    pub name: StringRef,
    pub class: StringRef,
    pub parent: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct LocationGroup {
    pub id: u32,
    pub name: StringRef,
    pub kind: u8,
    /// The system tree node.
    pub parent: u32,
    pub creating_group: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Location {
    pub id: LocationRef,
    pub name: StringRef,
    pub kind: u8,
    pub events: u64,
    pub group: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub id: RegionRef,
    pub name: StringRef,
    pub canonical_name: StringRef,
    pub description: StringRef,
    pub role: u8,
    pub paradigm: u8,
    pub flags: u32,
    pub file: StringRef,
    pub begin_line: u32,
    pub end_line: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Group<'a> {
    pub id: u32,
    pub name: StringRef,
    pub kind: u8,
    pub paradigm: u8,
    pub flags: u32,
    pub members: &'a [u64],
}

#[derive(Clone, Copy, Debug)]
pub struct Comm {
    pub id: CommRef,
    pub name: StringRef,
    pub group: u32,
    pub parent: CommRef,
    pub flags: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct MetricMember {
    pub id: u32,
    pub name: StringRef,
    pub description: StringRef,
    pub kind: u8,
    pub mode: u8,
    pub value_type: u8,
    pub base: u8,
    pub exponent: i64,
    pub unit: StringRef,
}

#[derive(Clone, Copy, Debug)]
pub struct MetricClass<'a> {
    pub id: MetricRef,
    /// At most 255 (OTF2 counts them in a byte).
    pub members: &'a [u32],
    pub occurrence: u8,
    pub recorder_kind: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct Parameter {
    pub id: ParameterRef,
    pub name: StringRef,
    pub kind: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct Attribute {
    pub id: AttributeRef,
    pub name: StringRef,
    pub description: StringRef,
    pub kind: u8,
}

/// A point-to-point message event's fields.
#[derive(Clone, Copy, Debug)]
pub struct Message {
    /// The receiver of a send, the sender of a receive.
    pub peer: u32,
    pub comm: CommRef,
    pub tag: u32,
    pub bytes: u64,
}

/// The end of a collective operation.
#[derive(Clone, Copy, Debug)]
pub struct CollectiveEnd {
    pub op: u8,
    pub comm: CommRef,
    pub root: u32,
    pub sent: u64,
    pub received: u64,
}

/// A one-sided put or get.
#[derive(Clone, Copy, Debug)]
pub struct RmaTransfer {
    pub win: RmaWinRef,
    pub remote: u32,
    pub bytes: u64,
    pub matching: u64,
}

/// A one-sided atomic operation.
#[derive(Clone, Copy, Debug)]
pub struct RmaAtomic {
    pub win: RmaWinRef,
    pub remote: u32,
    pub kind: u8,
    pub sent: u64,
    pub received: u64,
    pub matching: u64,
}
