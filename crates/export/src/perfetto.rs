//! Perfetto's native trace format: protobuf `TracePacket`s with
//! `TrackEvent`s, which ui.perfetto.dev and the trace processor open.
//!
//! Layout of the file (a `perfetto.protos.Trace`):
//!
//! - one `TrackDescriptor` per process (`process { pid, process_name }`)
//!   and per location (`thread { pid, tid, thread_name }`), and one counter
//!   track per metric and location, created where first used;
//! - each location's events on its own packet sequence
//!   (`trusted_packet_sequence_id`), in time order. The first packet of a
//!   sequence clears the incremental state and sets the location's track as
//!   the default track (`trace_packet_defaults`), so event packets carry no
//!   track id. Names are interned per sequence (`interned_data.event_names`,
//!   `debug_annotation_names`): an event carries a `name_iid`.
//! - regions are `TYPE_SLICE_BEGIN`/`TYPE_SLICE_END`, other events
//!   `TYPE_INSTANT` with their fields as debug annotations, metrics
//!   `TYPE_COUNTER` on counter tracks; messages and thread hand-offs carry
//!   `flow_ids` at the sender and `terminating_flow_ids` at the receiver,
//!   which Perfetto draws as arrows.
//!
//! Timestamps are ns since the experiment's start on Perfetto's default
//! clock. Field numbers are those of `perfetto_trace.proto`; the tests
//! decode the output with the descriptors of the `perfetto` Python package.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use parallax_model::event::EventKind;
use parallax_model::experiment::{Experiment, Process};

use crate::fields;
use crate::{Error, Summary};
use parallax_view::deps::{hash, FlowEnd, Flows};
use parallax_view::selection::Selection;
use parallax_view::trace::{self, Loc, Timebase};

/// A Perfetto trace as written here: its first packet is a track
/// descriptor.
const KIND: parallax_output::file::Kind =
    parallax_output::file::Kind::recognised_by("a Perfetto trace", starts_with_descriptor);

fn starts_with_descriptor(head: &[u8]) -> bool {
    if head.first() != Some(&(((f::TRACE_PACKET << 3) | 2) as u8)) {
        return false;
    }
    // Skip the packet's length (a varint), then the descriptor's key.
    let Some(len_end) = head[1..].iter().take(10).position(|b| b & 0x80 == 0) else {
        return false;
    };
    let key = (f::TRACK_DESCRIPTOR << 3) | 2;
    head[2 + len_end..].starts_with(&[((key & 0x7f) as u8) | 0x80, (key >> 7) as u8])
}

// Field numbers (perfetto.protos.*).
mod f {
    // Trace
    pub const TRACE_PACKET: u32 = 1;
    // TracePacket
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const TRACE_PACKET_DEFAULTS: u32 = 59;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const FIRST_PACKET_ON_SEQUENCE: u32 = 87;
    // TracePacketDefaults
    pub const TRACK_EVENT_DEFAULTS: u32 = 11;
    // TrackEventDefaults, TrackEvent
    pub const TRACK_UUID: u32 = 11;
    // TrackEvent
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    pub const COUNTER_VALUE: u32 = 30;
    pub const FLOW_IDS: u32 = 47;
    pub const TERMINATING_FLOW_IDS: u32 = 48;
    // DebugAnnotation
    pub const DA_NAME_IID: u32 = 1;
    pub const DA_UINT_VALUE: u32 = 3;
    pub const DA_INT_VALUE: u32 = 4;
    // InternedData
    pub const EVENT_NAMES: u32 = 2;
    pub const DEBUG_ANNOTATION_NAMES: u32 = 3;
    // EventName, DebugAnnotationName
    pub const IID: u32 = 1;
    pub const NAME: u32 = 2;
    // TrackDescriptor
    pub const TD_UUID: u32 = 1;
    pub const TD_NAME: u32 = 2;
    pub const TD_PROCESS: u32 = 3;
    pub const TD_THREAD: u32 = 4;
    pub const TD_PARENT_UUID: u32 = 5;
    pub const TD_COUNTER: u32 = 8;
    // ProcessDescriptor
    pub const PD_PID: u32 = 1;
    pub const PD_PROCESS_NAME: u32 = 6;
    // ThreadDescriptor
    pub const THD_PID: u32 = 1;
    pub const THD_TID: u32 = 2;
    pub const THD_THREAD_NAME: u32 = 5;
}

const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_INSTANT: u64 = 3;
const TYPE_COUNTER: u64 = 4;
const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

/// Interned-name ids of event kinds start here (region ids are below).
const KIND_IID_BASE: u64 = 1 << 33;

/// A protobuf message being built.
#[derive(Default)]
pub(crate) struct Pb {
    pub buf: Vec<u8>,
}

impl Pb {
    #[inline]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    #[inline]
    fn key(&mut self, field: u32, wire: u32) {
        self.varint(((field as u64) << 3) | wire as u64);
    }

    #[inline]
    fn uint(&mut self, field: u32, v: u64) {
        self.key(field, 0);
        self.varint(v);
    }

    #[inline]
    fn int(&mut self, field: u32, v: i64) {
        self.uint(field, v as u64);
    }

    #[inline]
    fn fixed64(&mut self, field: u32, v: u64) {
        self.key(field, 1);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    fn string(&mut self, field: u32, s: &str) {
        self.bytes(field, s.as_bytes());
    }

    /// Starts a nested message; returns the position to pass to `end`.
    /// Reserves a 2-byte length, enough for every message but long names.
    #[inline]
    fn begin(&mut self, field: u32) -> usize {
        self.key(field, 2);
        self.buf.extend_from_slice(&[0, 0]);
        self.buf.len()
    }

    /// Ends the nested message begun at `at`, writing its length.
    #[inline]
    fn end(&mut self, at: usize) {
        let len = self.buf.len() - at;
        if len < 0x80 {
            // One length byte suffices: drop the second one.
            self.buf[at - 2] = len as u8;
            self.buf.remove(at - 1);
        } else if len < 0x4000 {
            self.buf[at - 2] = (len as u8 & 0x7f) | 0x80;
            self.buf[at - 1] = (len >> 7) as u8;
        } else {
            let tail = self.buf.split_off(at);
            self.buf.truncate(at - 2);
            self.varint(len as u64);
            self.buf.extend_from_slice(&tail);
        }
    }
}

/// Writes a Perfetto trace.
pub fn export(exp: &Experiment, sel: &Selection, out: &Path) -> Result<Summary, Error> {
    let locs = trace::selected(exp, sel)?;
    let mut w = crate::create(out, KIND)?;
    let io = |e| Error::io(out, e);
    let mut pb = Pb::default();
    // Descriptors first.
    for (i, (first, l)) in trace::first_of_rank(&locs).enumerate() {
        if first {
            process_descriptor(&mut pb, &exp.processes[l.process], l);
            packet(&mut w, &pb.buf).map_err(io)?;
        }
        thread_descriptor(&mut pb, l, i);
        packet(&mut w, &pb.buf).map_err(io)?;
    }
    let mut summary = Summary::default();
    let mut flows = Flows::default();
    for (i, l) in locs.iter().enumerate() {
        let mut seq = Sequence::new(&exp.processes[l.process], l, i as u64 + 2);
        seq.start(&mut pb);
        packet(&mut w, &pb.buf).map_err(io)?;
        let mut tb = Timebase::new(exp, l);
        let read = trace::try_for_each_event(l, |e| {
            seq.event(&mut w, &mut pb, &mut flows, tb.ns(e.time), &e.kind)
                .map_err(io)
        })?;
        summary.add_read(read);
    }
    crate::finish(w, out)?;
    Ok(summary)
}

/// Puts the track descriptor of `l`'s process `p` in `pb`.
fn process_descriptor(pb: &mut Pb, p: &Process, l: &Loc) {
    pb.buf.clear();
    let td = pb.begin(f::TRACK_DESCRIPTOR);
    pb.uint(f::TD_UUID, process_uuid(l.rank));
    let pd = pb.begin(f::TD_PROCESS);
    pb.int(f::PD_PID, pid(l));
    let name = match &p.info {
        Some(info) => format!("rank {}: {} (pid {})", l.rank, info.program, info.pid),
        None => format!("rank {}", l.rank),
    };
    pb.string(f::PD_PROCESS_NAME, &name);
    pb.end(pd);
    pb.end(td);
}

/// Puts the track descriptor of location `l`, the `i`-th, in `pb`.
fn thread_descriptor(pb: &mut Pb, l: &Loc, i: usize) {
    pb.buf.clear();
    let td = pb.begin(f::TRACK_DESCRIPTOR);
    pb.uint(f::TD_UUID, thread_uuid(l));
    pb.uint(f::TD_PARENT_UUID, process_uuid(l.rank));
    let thd = pb.begin(f::TD_THREAD);
    pb.int(f::THD_PID, pid(l));
    // Unique per location, and apart from the pids (ranks + 1).
    pb.int(f::THD_TID, 1_000_000 + i as i64);
    pb.string(f::THD_THREAD_NAME, &l.thread_name());
    pb.end(thd);
    pb.end(td);
}

/// Perfetto's pid of `l`'s process: its rank + 1, as pid 0 is the idle
/// task's.
fn pid(l: &Loc) -> i64 {
    l.rank as i64 + 1
}

/// One location's packet sequence and the names already interned on it.
struct Sequence<'a> {
    /// The location's process.
    p: &'a Process,
    loc: &'a Loc,
    id: u64,
    track: u64,
    interned: Interned,
    /// Metrics whose counter track is described.
    counters: HashSet<u32>,
    /// Debug annotation names interned, by index in [`ARG_NAMES`].
    annotations: [bool; ARG_NAMES.len()],
}

/// The interned name of an event, and the name itself if this is its
/// first use on the sequence.
struct EventName {
    iid: u64,
    new: Option<String>,
}

impl<'a> Sequence<'a> {
    fn new(p: &'a Process, loc: &'a Loc, id: u64) -> Self {
        Sequence {
            p,
            loc,
            id,
            track: thread_uuid(loc),
            interned: Interned::default(),
            counters: HashSet::new(),
            annotations: [false; ARG_NAMES.len()],
        }
    }

    /// Puts the sequence's first packet in `pb`: it clears the incremental
    /// state and sets the location's track as the default.
    fn start(&self, pb: &mut Pb) {
        pb.buf.clear();
        pb.uint(f::SEQUENCE_ID, self.id);
        pb.uint(f::SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        pb.uint(f::FIRST_PACKET_ON_SEQUENCE, 1);
        let d = pb.begin(f::TRACE_PACKET_DEFAULTS);
        let te = pb.begin(f::TRACK_EVENT_DEFAULTS);
        pb.uint(f::TRACK_UUID, self.track);
        pb.end(te);
        pb.end(d);
    }

    /// Writes the packet of an event of `kind` at `t` ns, after the
    /// descriptor of its counter track if it is a metric's first value.
    #[inline]
    fn event(
        &mut self,
        w: &mut impl Write,
        pb: &mut Pb,
        flows: &mut Flows,
        t: u64,
        kind: &EventKind,
    ) -> std::io::Result<()> {
        if let EventKind::Metric { metric, .. } = *kind {
            if self.counters.insert(metric) {
                self.counter_descriptor(pb, metric);
                packet(w, &pb.buf)?;
            }
        }
        pb.buf.clear();
        pb.uint(f::TIMESTAMP, t);
        pb.uint(f::SEQUENCE_ID, self.id);
        pb.uint(f::SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        let name = self.name(kind);
        let args = match kind {
            EventKind::Enter { .. }
            | EventKind::Leave { .. }
            | EventKind::Metric { .. }
            | EventKind::FlushBegin
            | EventKind::FlushEnd => Vec::new(),
            k => fields::args(k),
        };
        self.intern(pb, &name, &args);
        self.track_event(pb, flows, kind, name.iid, &args);
        packet(w, &pb.buf)
    }

    /// Puts the descriptor of the counter track of `metric` in `pb`.
    fn counter_descriptor(&self, pb: &mut Pb, metric: u32) {
        pb.buf.clear();
        let td = pb.begin(f::TRACK_DESCRIPTOR);
        pb.uint(f::TD_UUID, counter_uuid(self.loc, metric));
        pb.uint(f::TD_PARENT_UUID, self.track);
        pb.string(f::TD_NAME, &fields::metric_name(self.p, metric));
        let c = pb.begin(f::TD_COUNTER);
        pb.end(c);
        pb.end(td);
    }

    /// The interned name of an event of `kind` (0 for events shown
    /// without a name).
    #[inline]
    fn name(&mut self, kind: &EventKind) -> EventName {
        let interned = &mut self.interned;
        let (iid, new) = match *kind {
            EventKind::Enter { region } | EventKind::Mark { mark: region, .. } => {
                let iid = region as u64 + 1;
                let p = self.p;
                (
                    iid,
                    interned
                        .insert(iid)
                        .then(|| parallax_view::names::region_name(p, region)),
                )
            }
            EventKind::Leave { .. } | EventKind::Metric { .. } => (0, None),
            EventKind::FlushBegin | EventKind::FlushEnd => {
                let iid = KIND_IID_BASE;
                (
                    iid,
                    interned.insert(iid).then(|| "parallax flush".to_string()),
                )
            }
            ref k => {
                let iid = KIND_IID_BASE + 1 + kind_index(k);
                (iid, interned.insert(iid).then(|| k.name().to_string()))
            }
        };
        EventName { iid, new }
    }

    /// Adds to `pb` the interned data of the names an event needs that the
    /// sequence has not sent yet: its own and its arguments'.
    #[inline]
    fn intern(&mut self, pb: &mut Pb, name: &EventName, args: &[(&str, u64)]) {
        let new_args: Vec<usize> = args
            .iter()
            .map(|(a, _)| arg_index(a))
            .filter(|&a| !std::mem::replace(&mut self.annotations[a], true))
            .collect();
        if name.new.is_none() && new_args.is_empty() {
            return;
        }
        let id = pb.begin(f::INTERNED_DATA);
        if let Some(new) = &name.new {
            let en = pb.begin(f::EVENT_NAMES);
            pb.uint(f::IID, name.iid);
            pb.string(f::NAME, new);
            pb.end(en);
        }
        for a in new_args {
            let dn = pb.begin(f::DEBUG_ANNOTATION_NAMES);
            pb.uint(f::IID, a as u64 + 1);
            pb.string(f::NAME, ARG_NAMES[a]);
            pb.end(dn);
        }
        pb.end(id);
    }

    /// Adds to `pb` the `TrackEvent` of an event of `kind` named `iid`
    /// with arguments `args`.
    #[inline]
    fn track_event(
        &self,
        pb: &mut Pb,
        flows: &mut Flows,
        kind: &EventKind,
        iid: u64,
        args: &[(&str, u64)],
    ) {
        let te = pb.begin(f::TRACK_EVENT);
        match *kind {
            EventKind::Enter { .. } | EventKind::FlushBegin => {
                pb.uint(f::TYPE, TYPE_SLICE_BEGIN);
                pb.uint(f::NAME_IID, iid);
            }
            EventKind::Leave { .. } | EventKind::FlushEnd => {
                pb.uint(f::TYPE, TYPE_SLICE_END);
            }
            EventKind::Metric { metric, value } => {
                pb.uint(f::TYPE, TYPE_COUNTER);
                pb.uint(f::TRACK_UUID, counter_uuid(self.loc, metric));
                pb.int(f::COUNTER_VALUE, value);
            }
            ref k => {
                pb.uint(f::TYPE, TYPE_INSTANT);
                pb.uint(f::NAME_IID, iid);
                for (a, v) in args {
                    let da = pb.begin(f::DEBUG_ANNOTATIONS);
                    pb.uint(f::DA_NAME_IID, arg_index(a) as u64 + 1);
                    if *a == "value" {
                        pb.int(f::DA_INT_VALUE, *v as i64);
                    } else {
                        pb.uint(f::DA_UINT_VALUE, *v);
                    }
                    pb.end(da);
                }
                match flows.of(self.loc.rank, k) {
                    Some(FlowEnd::Start(id)) => pb.fixed64(f::FLOW_IDS, id),
                    Some(FlowEnd::End(id)) => pb.fixed64(f::TERMINATING_FLOW_IDS, id),
                    None => {}
                }
            }
        }
        pb.end(te);
    }
}

/// The interned-name ids already sent on a sequence: a bitmap for small
/// ids (region ids), a set for the rest.
#[derive(Default)]
struct Interned {
    dense: Vec<bool>,
    sparse: HashSet<u64>,
}

impl Interned {
    /// Marks `iid` as sent; true if it was not yet.
    #[inline]
    fn insert(&mut self, iid: u64) -> bool {
        if iid < 1 << 20 {
            let i = iid as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, false);
            }
            !std::mem::replace(&mut self.dense[i], true)
        } else {
            self.sparse.insert(iid)
        }
    }
}

/// Appends one `Trace.packet`.
#[inline]
fn packet(w: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    let mut head = [0u8; 11];
    head[0] = ((f::TRACE_PACKET << 3) | 2) as u8;
    let mut n = 1;
    let mut v = body.len() as u64;
    while v >= 0x80 {
        head[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    head[n] = v as u8;
    w.write_all(&head[..n + 1])?;
    w.write_all(body)
}

fn process_uuid(rank: u32) -> u64 {
    hash(&[10, rank as u64])
}

fn thread_uuid(l: &Loc) -> u64 {
    hash(&[11, l.rank as u64, l.thread as u64])
}

fn counter_uuid(l: &Loc, metric: u32) -> u64 {
    hash(&[12, l.rank as u64, l.thread as u64, metric as u64])
}

/// Names of event fields shown as debug annotations.
const ARG_NAMES: [&str; 19] = [
    "peer", "tag", "comm", "bytes", "request", "op", "root", "sent", "received", "lock", "sem",
    "var", "index", "token", "team", "size", "target", "addr", "value",
];

fn arg_index(a: &str) -> usize {
    match a {
        "metric" | "mark" => ARG_NAMES.len() - 1,
        _ => ARG_NAMES
            .iter()
            .position(|x| *x == a)
            .unwrap_or(ARG_NAMES.len() - 1),
    }
}

/// A small number per event kind, for interning its name.
fn kind_index(k: &EventKind) -> u64 {
    // The names are unique; their order in this list is the index.
    const NAMES: [&str; 32] = [
        "enter",
        "leave",
        "flush_begin",
        "flush_end",
        "send",
        "recv",
        "isend_begin",
        "isend_complete",
        "irecv_begin",
        "irecv_complete",
        "collective_begin",
        "collective_end",
        "lock_request",
        "lock_acquired",
        "lock_release",
        "sem_post",
        "sem_acquired",
        "advance",
        "await_done",
        "thread_create",
        "thread_begin",
        "thread_end",
        "thread_join",
        "fork",
        "join",
        "put",
        "get",
        "atomic",
        "rma_complete",
        "value_reached",
        "metric",
        "mark",
    ];
    NAMES.iter().position(|n| *n == k.name()).unwrap_or(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_lengths() {
        for len in [0usize, 1, 127, 128, 300, 16383, 16384, 70000] {
            let mut pb = Pb::default();
            pb.uint(1, 5);
            let at = pb.begin(2);
            pb.buf.extend(std::iter::repeat_n(7u8, len));
            pb.end(at);
            // key 0x12, then the varint length, then the bytes.
            let mut want = Pb::default();
            want.uint(1, 5);
            want.bytes(2, &vec![7u8; len]);
            assert_eq!(pb.buf, want.buf, "len {len}");
        }
    }
}
