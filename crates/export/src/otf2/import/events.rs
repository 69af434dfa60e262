//! One location's OTF2 events as Parallax events.

use parallax_model::event::{Event, EventKind, NO_ROOT};
use parallax_model::experiment::EventWriter;

use super::globals::{EventMaps, Param};
use super::kinds::coll_op;
use super::MARK_BASE;
use crate::otf2::libotf2::consts as f;
use crate::otf2::libotf2::{
    Attributes, CollectiveEnd, Events, Message, MetricRef, ParameterRef, RegionRef, RmaAtomic,
    RmaTransfer, StringRef, TimeStamp,
};
use crate::Error;

/// What a callback tells the reader.
type Flow = std::ops::ControlFlow<()>;
const GO_ON: Flow = Flow::Continue(());
const STOP: Flow = Flow::Break(());

/// Program arguments kept from a `ProgramBegin` record.
const MAX_ARGS: usize = 256;

/// The refs of the attributes Parallax's export writes, where defined.
#[derive(Clone, Copy)]
struct AttrRefs {
    lock: Option<u32>,
    team: Option<u32>,
    addr: Option<u32>,
    var: Option<u32>,
    loop_id: Option<u32>,
}

/// The state of the location being read.
pub(super) struct LocReader<'m> {
    w: Option<EventWriter>,
    /// Why the read stopped, if writing failed.
    pub(super) error: Option<Error>,
    /// Events written.
    pub(super) count: u64,
    last: u64,
    /// The end of a buffer flush, written before the first event at or
    /// after it.
    pending_flush_end: Option<u64>,
    attrs: AttrRefs,
    maps: &'m EventMaps,
    /// Teams forked and not yet joined.
    teams: Vec<u64>,
    next_team: u64,
    /// The program, as its `ProgramBegin` record names it, with its
    /// arguments (string refs).
    pub(super) program: Option<(StringRef, Vec<StringRef>)>,
    /// Its exit status, from its `ProgramEnd` record.
    pub(super) exit_status: Option<i64>,
}

impl<'m> LocReader<'m> {
    pub(super) fn new(w: EventWriter, maps: &'m EventMaps) -> LocReader<'m> {
        let a = &maps.attrs;
        LocReader {
            w: Some(w),
            error: None,
            count: 0,
            last: 0,
            pending_flush_end: None,
            attrs: AttrRefs {
                lock: a[0],
                team: a[1],
                addr: a[2],
                var: a[3],
                loop_id: a[4],
            },
            maps,
            teams: Vec::new(),
            program: None,
            exit_status: None,
            next_team: 0,
        }
    }

    /// Writes a flush end still pending (at the last event's time at the
    /// latest) and takes the writer.
    pub(super) fn finish(&mut self) -> Option<EventWriter> {
        if let Some(end) = self.pending_flush_end.take() {
            let _ = self.emit(end.max(self.last), EventKind::FlushEnd);
        }
        self.w.take()
    }

    fn push(&mut self, t: u64, kind: EventKind) -> Flow {
        if let Some(end) = self.pending_flush_end {
            if t >= end {
                self.pending_flush_end = None;
                let _ = self.emit(end, EventKind::FlushEnd);
            }
        }
        self.emit(t, kind)
    }

    fn emit(&mut self, t: u64, kind: EventKind) -> Flow {
        let Some(w) = self.w.as_mut() else {
            return STOP;
        };
        self.last = self.last.max(t);
        match w.push(&Event { time: t, kind }) {
            Ok(()) => {
                self.count += 1;
                GO_ON
            }
            Err(e) => {
                self.error = Some(e.into());
                STOP
            }
        }
    }

    /// The value of the attribute `r`, if defined and on the record.
    fn attr(a: &Attributes<'_>, r: Option<u32>) -> Option<u64> {
        a.get_u64(r?)
    }

    /// A parameter's record: one of the events OTF2 lacks, or a mark.
    fn parameter(&mut self, t: TimeStamp, a: &Attributes<'_>, p: ParameterRef, v: u64) -> Flow {
        let at = self.attrs;
        let kind = match self.maps.params.get(&p) {
            Some(Param::Event(0)) => EventKind::LockRequest {
                lock: Self::attr(a, at.lock).unwrap_or(v),
            },
            Some(Param::Event(1)) => EventKind::SemPost { sem: v },
            Some(Param::Event(2)) => EventKind::SemAcquired { sem: v },
            Some(Param::Event(3)) => EventKind::Advance {
                var: Self::attr(a, at.var).unwrap_or(0),
                index: v,
            },
            Some(Param::Event(4)) => EventKind::AwaitDone {
                var: Self::attr(a, at.var).unwrap_or(0),
                index: v,
            },
            Some(Param::Event(6)) => EventKind::Skipped { calls: v },
            Some(Param::Event(_)) => EventKind::Iteration {
                loop_id: Self::attr(a, at.loop_id).unwrap_or(0),
                index: v,
            },
            Some(Param::Mark(r)) => EventKind::Mark {
                mark: *r,
                value: v as i64,
            },
            None => EventKind::Mark {
                mark: MARK_BASE + p,
                value: v as i64,
            },
        };
        self.push(t, kind)
    }

    /// A put's, get's or atomic's address.
    fn addr(&self, a: &Attributes<'_>) -> u64 {
        Self::attr(a, self.attrs.addr).unwrap_or(0)
    }
}

impl Events for LocReader<'_> {
    fn enter(&mut self, t: TimeStamp, _: &Attributes<'_>, region: RegionRef) -> Flow {
        self.push(t, EventKind::Enter { region })
    }
    fn leave(&mut self, t: TimeStamp, _: &Attributes<'_>, region: RegionRef) -> Flow {
        self.push(t, EventKind::Leave { region })
    }
    fn mpi_send(&mut self, t: TimeStamp, _: &Attributes<'_>, m: Message) -> Flow {
        let (peer, tag, comm, bytes) = (m.peer, m.tag, m.comm as u64, m.bytes);
        self.push(
            t,
            EventKind::Send {
                peer,
                tag,
                comm,
                bytes,
            },
        )
    }
    fn mpi_recv(&mut self, t: TimeStamp, _: &Attributes<'_>, m: Message) -> Flow {
        let (peer, tag, comm, bytes) = (m.peer, m.tag, m.comm as u64, m.bytes);
        self.push(
            t,
            EventKind::Recv {
                peer,
                tag,
                comm,
                bytes,
            },
        )
    }
    fn mpi_isend(&mut self, t: TimeStamp, _: &Attributes<'_>, m: Message, request: u64) -> Flow {
        let (peer, tag, comm, bytes) = (m.peer, m.tag, m.comm as u64, m.bytes);
        let kind = EventKind::IsendBegin {
            peer,
            tag,
            comm,
            bytes,
            request,
        };
        self.push(t, kind)
    }
    fn mpi_irecv(&mut self, t: TimeStamp, _: &Attributes<'_>, m: Message, request: u64) -> Flow {
        let (peer, tag, comm, bytes) = (m.peer, m.tag, m.comm as u64, m.bytes);
        let kind = EventKind::IrecvComplete {
            peer,
            tag,
            comm,
            bytes,
            request,
        };
        self.push(t, kind)
    }
    fn mpi_isend_complete(&mut self, t: TimeStamp, _: &Attributes<'_>, request: u64) -> Flow {
        self.push(t, EventKind::IsendComplete { request })
    }
    fn mpi_irecv_request(&mut self, t: TimeStamp, _: &Attributes<'_>, request: u64) -> Flow {
        self.push(t, EventKind::IrecvBegin { request })
    }
    fn mpi_collective_begin(&mut self, t: TimeStamp, _: &Attributes<'_>) -> Flow {
        self.push(t, EventKind::CollectiveBegin)
    }
    fn mpi_collective_end(&mut self, t: TimeStamp, _: &Attributes<'_>, c: CollectiveEnd) -> Flow {
        let kind = EventKind::CollectiveEnd {
            op: coll_op(c.op),
            comm: c.comm as u64,
            root: if c.root == f::UNDEFINED_U32 {
                NO_ROOT
            } else {
                c.root
            },
            sent: c.sent,
            received: c.received,
        };
        self.push(t, kind)
    }
    fn thread_fork(&mut self, t: TimeStamp, a: &Attributes<'_>, _: u8, size: u32) -> Flow {
        let team = match Self::attr(a, self.attrs.team) {
            Some(v) => v,
            None => {
                self.next_team += 1;
                self.next_team
            }
        };
        self.teams.push(team);
        self.push(t, EventKind::Fork { team, size })
    }
    fn thread_join(&mut self, t: TimeStamp, a: &Attributes<'_>, _: u8) -> Flow {
        let top = self.teams.pop().unwrap_or(0);
        let team = Self::attr(a, self.attrs.team).unwrap_or(top);
        self.push(t, EventKind::Join { team })
    }
    fn thread_acquire_lock(&mut self, t: TimeStamp, a: &Attributes<'_>, id: u32) -> Flow {
        let lock = Self::attr(a, self.attrs.lock).unwrap_or(id as u64);
        self.push(t, EventKind::LockAcquired { lock })
    }
    fn thread_release_lock(&mut self, t: TimeStamp, a: &Attributes<'_>, id: u32) -> Flow {
        let lock = Self::attr(a, self.attrs.lock).unwrap_or(id as u64);
        self.push(t, EventKind::LockRelease { lock })
    }
    fn thread_create(&mut self, t: TimeStamp, _: &Attributes<'_>, token: u64) -> Flow {
        self.push(t, EventKind::ThreadCreate { token })
    }
    fn thread_begin(&mut self, t: TimeStamp, _: &Attributes<'_>, token: u64) -> Flow {
        self.push(t, EventKind::ThreadBegin { token })
    }
    fn thread_wait(&mut self, t: TimeStamp, _: &Attributes<'_>, token: u64) -> Flow {
        self.push(t, EventKind::ThreadJoin { token })
    }
    fn thread_end(&mut self, t: TimeStamp, _: &Attributes<'_>, token: u64) -> Flow {
        self.push(t, EventKind::ThreadEnd { token })
    }
    fn rma_put(&mut self, t: TimeStamp, a: &Attributes<'_>, r: RmaTransfer) -> Flow {
        let (target, bytes, addr) = (r.remote, r.bytes, self.addr(a));
        self.push(
            t,
            EventKind::Put {
                target,
                bytes,
                addr,
            },
        )
    }
    fn rma_get(&mut self, t: TimeStamp, a: &Attributes<'_>, r: RmaTransfer) -> Flow {
        let (target, bytes, addr) = (r.remote, r.bytes, self.addr(a));
        self.push(
            t,
            EventKind::Get {
                target,
                bytes,
                addr,
            },
        )
    }
    fn rma_atomic(&mut self, t: TimeStamp, a: &Attributes<'_>, r: RmaAtomic) -> Flow {
        let (target, bytes, addr) = (r.remote, r.sent.max(r.received), self.addr(a));
        self.push(
            t,
            EventKind::Atomic {
                target,
                bytes,
                addr,
            },
        )
    }
    fn rma_sync(&mut self, t: TimeStamp, _: &Attributes<'_>, remote: u32) -> Flow {
        self.push(t, EventKind::RmaComplete { target: remote })
    }
    fn rma_wait_change(&mut self, t: TimeStamp, a: &Attributes<'_>) -> Flow {
        let addr = self.addr(a);
        self.push(t, EventKind::ValueReached { addr })
    }
    fn metric(
        &mut self,
        t: TimeStamp,
        _: &Attributes<'_>,
        class: MetricRef,
        types: &[u8],
        values: &[u64],
    ) -> Flow {
        let maps = self.maps;
        let members = maps.metric_classes.get(&class).map_or(&[][..], |m| &m[..]);
        for (i, (&ty, &raw)) in types.iter().zip(values).enumerate() {
            let metric = members.get(i).map_or(class, |m| m.0);
            let value = match ty {
                f::TYPE_DOUBLE => f64::from_bits(raw).round() as i64,
                _ => raw as i64,
            };
            self.push(t, EventKind::Metric { metric, value })?;
        }
        GO_ON
    }
    fn parameter_int(&mut self, t: TimeStamp, a: &Attributes<'_>, p: ParameterRef, v: i64) -> Flow {
        self.parameter(t, a, p, v as u64)
    }
    fn parameter_unsigned_int(
        &mut self,
        t: TimeStamp,
        a: &Attributes<'_>,
        p: ParameterRef,
        v: u64,
    ) -> Flow {
        self.parameter(t, a, p, v)
    }
    fn buffer_flush(&mut self, t: TimeStamp, _: &Attributes<'_>, stop: TimeStamp) -> Flow {
        let r = self.push(t, EventKind::FlushBegin);
        self.pending_flush_end = Some(stop.max(t));
        r
    }
    fn program_begin(
        &mut self,
        _: TimeStamp,
        _: &Attributes<'_>,
        name: StringRef,
        args: &[StringRef],
    ) -> Flow {
        // Bounded: a hostile archive may claim any number of arguments.
        let args = args.iter().take(MAX_ARGS).copied().collect();
        self.program.get_or_insert((name, args));
        GO_ON
    }
    fn program_end(&mut self, _: TimeStamp, _: &Attributes<'_>, exit_status: i64) -> Flow {
        // OTF2's undefined status: the writer did not know it.
        self.exit_status = (exit_status != i64::MIN).then_some(exit_status);
        GO_ON
    }
}
