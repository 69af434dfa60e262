//! The event record encoding (see FORMAT.md, "Event records").
//!
//! Each record starts with a head varint `delta << 2 | tag`, where `delta` is
//! the ticks since the previous record of the location (or since the block's
//! base time) and `tag` is 0 for a leave, 1 for an enter (a region varint
//! follows) and 2 for any other event (a code byte and the event's fields
//! follow). An enter/leave pair with short gaps takes 4 to 5 bytes.

use crate::event::{CollectiveOp, Event, EventKind, RegionId, UNKNOWN_REGION};
use crate::varint;
use crate::Error;

/// Bytes a writer must have free before encoding one record of any kind.
pub const MAX_RECORD: usize = 64;

/// Largest delta a head varint carries; larger gaps are clamped (2^62 ticks
/// is decades).
pub const MAX_DELTA: u64 = (1 << 62) - 1;

const TAG_LEAVE: u64 = 0;
const TAG_ENTER: u64 = 1;
const TAG_EXT: u64 = 2;

mod code {
    pub const FLUSH_BEGIN: u8 = 1;
    pub const FLUSH_END: u8 = 2;
    pub const SEND: u8 = 3;
    pub const RECV: u8 = 4;
    pub const ISEND_BEGIN: u8 = 5;
    pub const ISEND_COMPLETE: u8 = 6;
    pub const IRECV_BEGIN: u8 = 7;
    pub const IRECV_COMPLETE: u8 = 8;
    pub const COLLECTIVE_BEGIN: u8 = 9;
    pub const COLLECTIVE_END: u8 = 10;
    pub const LOCK_REQUEST: u8 = 11;
    pub const LOCK_ACQUIRED: u8 = 12;
    pub const LOCK_RELEASE: u8 = 13;
    pub const SEM_POST: u8 = 14;
    pub const SEM_ACQUIRED: u8 = 15;
    pub const ADVANCE: u8 = 16;
    pub const AWAIT_DONE: u8 = 17;
    pub const THREAD_CREATE: u8 = 18;
    pub const THREAD_BEGIN: u8 = 19;
    pub const THREAD_END: u8 = 20;
    pub const THREAD_JOIN: u8 = 21;
    pub const FORK: u8 = 22;
    pub const JOIN: u8 = 23;
    pub const PUT: u8 = 24;
    pub const GET: u8 = 25;
    pub const ATOMIC: u8 = 26;
    pub const RMA_COMPLETE: u8 = 27;
    pub const VALUE_REACHED: u8 = 28;
    pub const METRIC: u8 = 29;
    pub const MARK: u8 = 30;
    pub const ITERATION: u8 = 31;
    pub const SKIPPED: u8 = 32;
}

/// Writes an enter record.
///
/// # Safety
///
/// `p` must be valid for writes of [`MAX_RECORD`] bytes.
#[inline(always)]
pub unsafe fn put_enter(p: *mut u8, delta: u64, region: RegionId) -> *mut u8 {
    // Safety: two varints take at most 2 * varint::SLACK <= MAX_RECORD bytes;
    // the short form stores one word.
    unsafe {
        if delta < SHORT_DELTA && region < 128 {
            let (word, n) = short_head((delta << 2) | TAG_ENTER);
            let word = word | ((((region as u64) << 1) | 1) << (8 * n));
            p.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes());
            return p.add(n + 1);
        }
        let p = varint::put_unchecked(p, (delta.min(MAX_DELTA) << 2) | TAG_ENTER);
        varint::put_unchecked(p, region as u64)
    }
}

/// Deltas below this give a head of at most two bytes, which enter and
/// leave records write with a single store (the probes' common case).
const SHORT_DELTA: u64 = 1 << 12;

/// The varint of a head below 2^14 and its length (1 or 2), computed with
/// one comparison instead of the general length calculation.
#[inline(always)]
fn short_head(head: u64) -> (u64, usize) {
    let n = 1 + (head >= 128) as usize;
    ((((head << 1) | 1) << (n - 1)), n)
}

/// Writes a leave record.
///
/// # Safety
///
/// `p` must be valid for writes of [`MAX_RECORD`] bytes.
#[inline(always)]
pub unsafe fn put_leave(p: *mut u8, delta: u64) -> *mut u8 {
    // Safety: one varint takes at most varint::SLACK bytes.
    unsafe {
        if delta < SHORT_DELTA {
            let (word, n) = short_head(delta << 2);
            p.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes());
            return p.add(n);
        }
        varint::put_unchecked(p, (delta.min(MAX_DELTA) << 2) | TAG_LEAVE)
    }
}

/// Writes any event as one record with the given delta.
///
/// # Safety
///
/// `p` must be valid for writes of [`MAX_RECORD`] bytes.
#[inline(always)]
pub unsafe fn put_event(p: *mut u8, delta: u64, kind: &EventKind) -> *mut u8 {
    // Safety: the longest record (head, code byte, five varints, and the
    // last varint's word store) is 55 bytes <= MAX_RECORD.
    unsafe {
        match *kind {
            EventKind::Enter { region } => put_enter(p, delta, region),
            EventKind::Leave { .. } => put_leave(p, delta),
            _ => {
                let (c, fields, n) = fields_of(kind);
                let mut p = varint::put_unchecked(p, (delta.min(MAX_DELTA) << 2) | TAG_EXT);
                p.write(c);
                p = p.add(1);
                for &f in &fields[..n] {
                    p = varint::put_unchecked(p, f);
                }
                p
            }
        }
    }
}

/// The code byte and fields of an extended event (not enter or leave).
#[inline(always)]
fn fields_of(kind: &EventKind) -> (u8, [u64; 5], usize) {
    use EventKind::*;
    let z = 0;
    match *kind {
        Enter { .. } | Leave { .. } => (0, [z; 5], 0),
        FlushBegin => (code::FLUSH_BEGIN, [z; 5], 0),
        FlushEnd => (code::FLUSH_END, [z; 5], 0),
        Send {
            peer,
            tag,
            comm,
            bytes,
        } => (code::SEND, [peer as u64, tag as u64, comm, bytes, z], 4),
        Recv {
            peer,
            tag,
            comm,
            bytes,
        } => (code::RECV, [peer as u64, tag as u64, comm, bytes, z], 4),
        IsendBegin {
            peer,
            tag,
            comm,
            bytes,
            request,
        } => (
            code::ISEND_BEGIN,
            [peer as u64, tag as u64, comm, bytes, request],
            5,
        ),
        IsendComplete { request } => (code::ISEND_COMPLETE, [request, z, z, z, z], 1),
        IrecvBegin { request } => (code::IRECV_BEGIN, [request, z, z, z, z], 1),
        IrecvComplete {
            peer,
            tag,
            comm,
            bytes,
            request,
        } => (
            code::IRECV_COMPLETE,
            [peer as u64, tag as u64, comm, bytes, request],
            5,
        ),
        CollectiveBegin => (code::COLLECTIVE_BEGIN, [z; 5], 0),
        CollectiveEnd {
            op,
            comm,
            root,
            sent,
            received,
        } => (
            code::COLLECTIVE_END,
            [op as u64, comm, root as u64, sent, received],
            5,
        ),
        LockRequest { lock } => (code::LOCK_REQUEST, [lock, z, z, z, z], 1),
        LockAcquired { lock } => (code::LOCK_ACQUIRED, [lock, z, z, z, z], 1),
        LockRelease { lock } => (code::LOCK_RELEASE, [lock, z, z, z, z], 1),
        SemPost { sem } => (code::SEM_POST, [sem, z, z, z, z], 1),
        SemAcquired { sem } => (code::SEM_ACQUIRED, [sem, z, z, z, z], 1),
        Advance { var, index } => (code::ADVANCE, [var, index, z, z, z], 2),
        AwaitDone { var, index } => (code::AWAIT_DONE, [var, index, z, z, z], 2),
        ThreadCreate { token } => (code::THREAD_CREATE, [token, z, z, z, z], 1),
        ThreadBegin { token } => (code::THREAD_BEGIN, [token, z, z, z, z], 1),
        ThreadEnd { token } => (code::THREAD_END, [token, z, z, z, z], 1),
        ThreadJoin { token } => (code::THREAD_JOIN, [token, z, z, z, z], 1),
        Fork { team, size } => (code::FORK, [team, size as u64, z, z, z], 2),
        Join { team } => (code::JOIN, [team, z, z, z, z], 1),
        Put {
            target,
            bytes,
            addr,
        } => (code::PUT, [target as u64, bytes, addr, z, z], 3),
        Get {
            target,
            bytes,
            addr,
        } => (code::GET, [target as u64, bytes, addr, z, z], 3),
        Atomic {
            target,
            bytes,
            addr,
        } => (code::ATOMIC, [target as u64, bytes, addr, z, z], 3),
        RmaComplete { target } => (code::RMA_COMPLETE, [target as u64, z, z, z, z], 1),
        ValueReached { addr } => (code::VALUE_REACHED, [addr, z, z, z, z], 1),
        Metric { metric, value } => (
            code::METRIC,
            [metric as u64, varint::zigzag(value), z, z, z],
            2,
        ),
        Mark { mark, value } => (code::MARK, [mark as u64, varint::zigzag(value), z, z, z], 2),
        Iteration { loop_id, index } => (code::ITERATION, [loop_id, index, z, z, z], 2),
        Skipped { calls } => (code::SKIPPED, [calls, z, z, z, z], 1),
    }
}

/// Number of fields of an extended event code, or `None` for an unknown code.
fn field_count(c: u8) -> Option<usize> {
    Some(match c {
        code::FLUSH_BEGIN | code::FLUSH_END | code::COLLECTIVE_BEGIN => 0,
        code::SEND | code::RECV => 4,
        code::ISEND_BEGIN | code::IRECV_COMPLETE | code::COLLECTIVE_END => 5,
        code::ISEND_COMPLETE
        | code::IRECV_BEGIN
        | code::LOCK_REQUEST
        | code::LOCK_ACQUIRED
        | code::LOCK_RELEASE
        | code::SEM_POST
        | code::SEM_ACQUIRED
        | code::THREAD_CREATE
        | code::THREAD_BEGIN
        | code::THREAD_END
        | code::THREAD_JOIN
        | code::JOIN
        | code::RMA_COMPLETE
        | code::VALUE_REACHED
        | code::SKIPPED => 1,
        code::ADVANCE
        | code::AWAIT_DONE
        | code::FORK
        | code::METRIC
        | code::MARK
        | code::ITERATION => 2,
        code::PUT | code::GET | code::ATOMIC => 3,
        _ => return None,
    })
}

/// The event of an extended code with its fields; `None` where a field is out
/// of its range.
fn from_fields(c: u8, f: &[u64; 5]) -> Option<EventKind> {
    use EventKind::*;
    let u32_ = |v: u64| u32::try_from(v).ok();
    Some(match c {
        code::FLUSH_BEGIN => FlushBegin,
        code::FLUSH_END => FlushEnd,
        code::SEND => Send {
            peer: u32_(f[0])?,
            tag: u32_(f[1])?,
            comm: f[2],
            bytes: f[3],
        },
        code::RECV => Recv {
            peer: u32_(f[0])?,
            tag: u32_(f[1])?,
            comm: f[2],
            bytes: f[3],
        },
        code::ISEND_BEGIN => IsendBegin {
            peer: u32_(f[0])?,
            tag: u32_(f[1])?,
            comm: f[2],
            bytes: f[3],
            request: f[4],
        },
        code::ISEND_COMPLETE => IsendComplete { request: f[0] },
        code::IRECV_BEGIN => IrecvBegin { request: f[0] },
        code::IRECV_COMPLETE => IrecvComplete {
            peer: u32_(f[0])?,
            tag: u32_(f[1])?,
            comm: f[2],
            bytes: f[3],
            request: f[4],
        },
        code::COLLECTIVE_BEGIN => CollectiveBegin,
        code::COLLECTIVE_END => CollectiveEnd {
            op: CollectiveOp::from_u8(u8::try_from(f[0]).ok()?)?,
            comm: f[1],
            root: u32_(f[2])?,
            sent: f[3],
            received: f[4],
        },
        code::LOCK_REQUEST => LockRequest { lock: f[0] },
        code::LOCK_ACQUIRED => LockAcquired { lock: f[0] },
        code::LOCK_RELEASE => LockRelease { lock: f[0] },
        code::SEM_POST => SemPost { sem: f[0] },
        code::SEM_ACQUIRED => SemAcquired { sem: f[0] },
        code::ADVANCE => Advance {
            var: f[0],
            index: f[1],
        },
        code::AWAIT_DONE => AwaitDone {
            var: f[0],
            index: f[1],
        },
        code::ITERATION => Iteration {
            loop_id: f[0],
            index: f[1],
        },
        code::SKIPPED => Skipped { calls: f[0] },
        code::THREAD_CREATE => ThreadCreate { token: f[0] },
        code::THREAD_BEGIN => ThreadBegin { token: f[0] },
        code::THREAD_END => ThreadEnd { token: f[0] },
        code::THREAD_JOIN => ThreadJoin { token: f[0] },
        code::FORK => Fork {
            team: f[0],
            size: u32_(f[1])?,
        },
        code::JOIN => Join { team: f[0] },
        code::PUT => Put {
            target: u32_(f[0])?,
            bytes: f[1],
            addr: f[2],
        },
        code::GET => Get {
            target: u32_(f[0])?,
            bytes: f[1],
            addr: f[2],
        },
        code::ATOMIC => Atomic {
            target: u32_(f[0])?,
            bytes: f[1],
            addr: f[2],
        },
        code::RMA_COMPLETE => RmaComplete {
            target: u32_(f[0])?,
        },
        code::VALUE_REACHED => ValueReached { addr: f[0] },
        code::METRIC => Metric {
            metric: u32_(f[0])?,
            value: varint::unzigzag(f[1]),
        },
        code::MARK => Mark {
            mark: u32_(f[0])?,
            value: varint::unzigzag(f[1]),
        },
        _ => return None,
    })
}

/// Encodes events into a growable buffer; the offline twin of the runtime's
/// buffer writer (same records, same deltas).
#[derive(Debug, Default)]
pub struct EventEncoder {
    buf: Vec<u8>,
    last: u64,
}

impl EventEncoder {
    /// An encoder whose first delta is taken from `base`.
    pub fn new(base: u64) -> EventEncoder {
        EventEncoder {
            buf: Vec::new(),
            last: base,
        }
    }

    /// Appends one event. Times earlier than the previous event's are
    /// recorded as a zero delta (the format keeps times monotone).
    pub fn push(&mut self, ev: &Event) {
        let delta = ev.time.saturating_sub(self.last);
        self.last = self.last.max(ev.time);
        self.buf.reserve(MAX_RECORD);
        let start = self.buf.len();
        // Safety: MAX_RECORD bytes were reserved; only the bytes the encoder
        // wrote become part of the vector.
        unsafe {
            let p = self.buf.as_mut_ptr().add(start);
            let end = put_event(p, delta, &ev.kind);
            self.buf.set_len(start + end.offset_from(p) as usize);
        }
    }

    /// Time of the last event pushed (or the base).
    pub fn last_time(&self) -> u64 {
        self.last
    }

    /// Bytes encoded so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was encoded.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The encoded records, leaving the encoder empty with its time kept.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// The records encoded so far.
    pub fn records(&self) -> &[u8] {
        &self.buf
    }

    /// Empties the encoder, keeping its memory; the next delta is taken
    /// from `base`.
    pub fn restart(&mut self, base: u64) {
        self.buf.clear();
        self.last = base;
    }
}

/// One record as read, before leaves get their region: what a reader that
/// only looks for some events needs (it keeps no region stack).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Record {
    /// An enter of the region.
    Enter(RegionId),
    /// A leave of the innermost open region.
    Leave,
    /// Any other event.
    Other(EventKind),
}

impl Record {
    /// The event kind, a leave getting its region from `stack`, which holds
    /// the open regions (an enter pushes its own).
    #[inline]
    pub fn resolve(self, stack: &mut Vec<RegionId>) -> EventKind {
        match self {
            Record::Enter(region) => {
                stack.push(region);
                EventKind::Enter { region }
            }
            Record::Leave => EventKind::Leave {
                region: stack.pop().unwrap_or(UNKNOWN_REGION),
            },
            Record::Other(kind) => kind,
        }
    }
}

/// Walks the records of one event block.
///
/// `time` is the block's base time on entry and the last record's time on
/// return; each record is passed to `out` with its time, in order. On a
/// malformed record the records before it have been delivered and the error
/// says at which byte the block went wrong.
pub fn walk_records(
    buf: &[u8],
    time: &mut u64,
    mut out: impl FnMut(u64, Record),
) -> Result<(), Error> {
    let mut t = *time;
    let mut i = 0;
    let r = loop {
        if i >= buf.len() {
            break Ok(());
        }
        match read_record(buf, i) {
            Ok((delta, rec, end)) => {
                t = t.saturating_add(delta);
                i = end;
                out(t, rec);
            }
            Err(e) => break Err(e),
        }
    };
    *time = t;
    r
}

/// Reads the record at byte `i` of a block's records: its delta (ticks
/// since the previous record), the record and the byte after it.
#[inline(always)]
pub fn read_record(buf: &[u8], i: usize) -> Result<(u64, Record, usize), Error> {
    // Enters and leaves, most records, take a short path that the caller
    // inlines; the rest go through `read_other`.
    match read_plain(buf, i) {
        Some((delta, Some(region), end)) => Ok((delta, Record::Enter(region), end)),
        Some((delta, None, end)) => Ok((delta, Record::Leave, end)),
        None => read_other(buf, i),
    }
}

/// The enter (`Some(region)`) or leave at byte `i` of a block's records,
/// with its delta and the byte after it; `None` for any other record, or
/// one within [`MAX_RECORD`] bytes of the block's end (read those with
/// [`read_record`]).
#[inline(always)]
pub fn read_plain(buf: &[u8], i: usize) -> Option<(u64, Option<RegionId>, usize)> {
    if i.checked_add(MAX_RECORD)? > buf.len() {
        return None;
    }
    // Safety: a head and a region take at most 18 bytes, within the
    // MAX_RECORD bytes at `i`.
    let p = unsafe { buf.as_ptr().add(i) };
    let (head, n) = unsafe { varint::get_unchecked(p) };
    match head & 3 {
        TAG_LEAVE => Some((head >> 2, None, i + n)),
        TAG_ENTER => {
            let (region, m) = unsafe { varint::get_unchecked(p.add(n)) };
            let region = u32::try_from(region).ok()?;
            Some((head >> 2, Some(region), i + n + m))
        }
        _ => None,
    }
}

/// [`read_record`] for any record, with every length checked.
#[inline(never)]
fn read_other(buf: &[u8], mut i: usize) -> Result<(u64, Record, usize), Error> {
    let at = i;
    let (head, n) = varint::get_at(buf, i).ok_or_else(|| bad("record cut short", at))?;
    i += n;
    let rec = match head & 3 {
        TAG_LEAVE => Record::Leave,
        TAG_ENTER => {
            let (region, n) = varint::get_at(buf, i).ok_or_else(|| bad("enter cut short", at))?;
            i += n;
            let region = u32::try_from(region).map_err(|_| bad("region id out of range", at))?;
            Record::Enter(region)
        }
        TAG_EXT => {
            let c = *buf.get(i).ok_or_else(|| bad("event code missing", at))?;
            i += 1;
            let count = field_count(c).ok_or_else(|| bad("unknown event code", at))?;
            let mut fields = [0u64; 5];
            for f in fields.iter_mut().take(count) {
                let (v, n) =
                    varint::get_at(buf, i).ok_or_else(|| bad("event fields cut short", at))?;
                *f = v;
                i += n;
            }
            let kind =
                from_fields(c, &fields).ok_or_else(|| bad("event field out of range", at))?;
            Record::Other(kind)
        }
        _ => return Err(bad("reserved record tag", at)),
    };
    Ok((head >> 2, rec, i))
}

#[cold]
fn bad(what: &str, at: usize) -> Error {
    Error::corrupt(format!("{what} at byte {at} of an event block"))
}

/// Decodes the records of one event block into events (see
/// [`walk_records`]); `stack` holds the open regions across blocks, so
/// that leaves get their region.
pub fn decode_records(
    buf: &[u8],
    time: &mut u64,
    stack: &mut Vec<RegionId>,
    mut out: impl FnMut(Event),
) -> Result<(), Error> {
    walk_records(buf, time, |time, rec| {
        out(Event {
            time,
            kind: rec.resolve(stack),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_events() -> Vec<Event> {
        use EventKind::*;
        let kinds = [
            Enter { region: 3 },
            Send {
                peer: 1,
                tag: 7,
                comm: 0,
                bytes: 1 << 20,
            },
            Recv {
                peer: 2,
                tag: 8,
                comm: 5,
                bytes: 9,
            },
            IsendBegin {
                peer: 1,
                tag: 2,
                comm: 3,
                bytes: 4,
                request: 99,
            },
            IsendComplete { request: 99 },
            IrecvBegin { request: 100 },
            IrecvComplete {
                peer: 0,
                tag: 1,
                comm: 2,
                bytes: 3,
                request: 100,
            },
            CollectiveBegin,
            CollectiveEnd {
                op: CollectiveOp::Allreduce,
                comm: 1,
                root: crate::event::NO_ROOT,
                sent: 8,
                received: 8,
            },
            LockRequest { lock: 0xdead_beef },
            LockAcquired { lock: 0xdead_beef },
            LockRelease { lock: 0xdead_beef },
            SemPost { sem: 4 },
            SemAcquired { sem: 4 },
            Advance { var: 1, index: 17 },
            AwaitDone { var: 1, index: 16 },
            Iteration {
                loop_id: 3,
                index: 9,
            },
            Iteration {
                loop_id: 3,
                index: crate::event::NO_ITERATION,
            },
            Skipped { calls: 131_072 },
            ThreadCreate { token: 5 },
            ThreadBegin { token: 5 },
            ThreadEnd { token: 5 },
            ThreadJoin { token: 5 },
            Fork { team: 1, size: 4 },
            Join { team: 1 },
            Put {
                target: 3,
                bytes: 64,
                addr: 0x1000,
            },
            Get {
                target: 3,
                bytes: 64,
                addr: 0x2000,
            },
            Atomic {
                target: 2,
                bytes: 8,
                addr: 0x3000,
            },
            RmaComplete { target: u32::MAX },
            ValueReached { addr: 0x4000 },
            Metric {
                metric: 2,
                value: -5,
            },
            Mark {
                mark: 9,
                value: i64::MIN,
            },
            FlushBegin,
            FlushEnd,
            Leave { region: 3 },
        ];
        let mut t = 1_000;
        kinds
            .iter()
            .enumerate()
            .map(|(i, &kind)| {
                t += (i as u64) * 37 + 1;
                Event { time: t, kind }
            })
            .collect()
    }

    #[test]
    fn every_event_kind_round_trips() {
        let events = sample_events();
        let mut enc = EventEncoder::new(900);
        for e in &events {
            enc.push(e);
        }
        let bytes = enc.take();
        let mut got = Vec::new();
        let mut time = 900;
        decode_records(&bytes, &mut time, &mut Vec::new(), |e| got.push(e)).unwrap();
        assert_eq!(got, events);
    }

    #[test]
    fn short_forms_equal_general_varints() {
        for delta in [0u64, 1, 31, 32, 100, 4095, 4096, 1 << 20] {
            for region in [0u32, 1, 127, 128, 1 << 20] {
                let mut fast = [0u8; MAX_RECORD];
                let mut general = Vec::new();
                varint::put(&mut general, (delta << 2) | TAG_ENTER);
                varint::put(&mut general, region as u64);
                // Safety: the buffer has MAX_RECORD bytes.
                let n = unsafe {
                    put_enter(fast.as_mut_ptr(), delta, region).offset_from(fast.as_ptr())
                };
                assert_eq!(&fast[..n as usize], &general[..], "enter {delta} {region}");
                let mut general = Vec::new();
                varint::put(&mut general, delta << 2);
                let n = unsafe { put_leave(fast.as_mut_ptr(), delta).offset_from(fast.as_ptr()) };
                assert_eq!(&fast[..n as usize], &general[..], "leave {delta}");
            }
        }
    }

    #[test]
    fn enter_leave_pairs_are_small() {
        let mut enc = EventEncoder::new(0);
        let mut t = 0;
        for _ in 0..1000 {
            t += 40;
            enc.push(&Event {
                time: t,
                kind: EventKind::Enter { region: 5 },
            });
            t += 40;
            enc.push(&Event {
                time: t,
                kind: EventKind::Leave { region: 5 },
            });
        }
        // 2-byte head + 1-byte region, then a 2-byte head.
        assert_eq!(enc.len(), 1000 * 5);
    }

    #[test]
    fn corrupt_records_are_errors_not_panics() {
        let events = sample_events();
        let mut enc = EventEncoder::new(0);
        for e in &events {
            enc.push(e);
        }
        let bytes = enc.take();
        for cut in 0..bytes.len() {
            let mut time = 0;
            let _ = decode_records(&bytes[..cut], &mut time, &mut Vec::new(), |_| {});
        }
        let mut bad = bytes.clone();
        bad[0] = 0b111; // one-byte head 3: delta 0, reserved tag
        let mut n = 0;
        let err = decode_records(&bad, &mut 0, &mut Vec::new(), |_| n += 1).unwrap_err();
        assert!(err.to_string().contains("reserved record tag"), "{err}");
        assert_eq!(n, 0);
    }
}
