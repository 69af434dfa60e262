//! One location's events as OTF2 records, and the definitions they use.

use std::collections::HashMap;

use parallax_model::event::{EventKind, RegionId};
use parallax_model::experiment::Process;
use parallax_model::region::RegionKind;

use super::roles::{coll_op, role_paradigm};
use super::{Defs, LockIds, MetricName, RegionDef, RegionKey};
use super::{ATTR_ADDR, ATTR_LOCK, ATTR_LOOP, ATTR_TEAM, ATTR_VAR};
use crate::otf2::libotf2::consts as c;
use crate::otf2::libotf2::{
    AttributeList, CollectiveEnd as CollEnd, EvtWriter, Message, Otf2Error, RmaAtomic, RmaTransfer,
};
use crate::Error;
use parallax_view::trace::Loc;

/// Per-process lookups for the event loop.
#[derive(Default)]
pub(super) struct ProcMap {
    /// OTF2 region ref + 1 by Parallax region id (dense ids), 0 = not yet.
    dense: Vec<u32>,
    /// The same for ids too large to index.
    sparse: HashMap<RegionId, u32>,
}

/// The writer of one location's events.
pub(super) struct LocWriter<'w, 'a> {
    w: EvtWriter<'w>,
    attrs: &'a mut AttributeList,
    /// The location's process.
    p: &'a Process,
    /// The start of a buffer flush whose end has not come yet.
    pending_flush: Option<u64>,
    /// Records written.
    count: u64,
    /// The process's thread contingent.
    thread_comm: u32,
}

type Written = Result<(), Otf2Error>;

impl<'w, 'a> LocWriter<'w, 'a> {
    pub(super) fn new(
        w: EvtWriter<'w>,
        attrs: &'a mut AttributeList,
        p: &'a Process,
        thread_comm: u32,
    ) -> LocWriter<'w, 'a> {
        LocWriter {
            w,
            attrs,
            p,
            pending_flush: None,
            count: 0,
            thread_comm,
        }
    }

    /// Writes a flush still open and closes the writer; the records
    /// written.
    pub(super) fn finish(mut self) -> Result<u64, Error> {
        if let Some(b) = self.pending_flush.take() {
            self.w
                .buffer_flush(None, b, b)
                .map_err(|e| e.during("buffer flush"))?;
            self.count += 1;
        }
        self.w.close().map_err(|e| e.during("close event writer"))?;
        Ok(self.count)
    }

    /// Writes one event.
    #[inline]
    pub(super) fn event(
        &mut self,
        t: u64,
        kind: &EventKind,
        l: &Loc,
        pm: &mut ProcMap,
        defs: &mut Defs,
    ) -> Result<(), Error> {
        use EventKind::*;
        if let Some(b) = self.pending_flush {
            if !matches!(kind, FlushEnd) {
                self.pending_flush = None;
                self.count += 1;
                self.w
                    .buffer_flush(None, b, t)
                    .map_err(|e| e.during("buffer flush"))?;
            }
        }
        let written = match *kind {
            Enter { region } => self.w.enter(None, t, region_ref(region, self.p, pm, defs)),
            Leave { region } => self.w.leave(None, t, region_ref(region, self.p, pm, defs)),
            FlushBegin => {
                self.pending_flush = Some(t);
                return Ok(());
            }
            FlushEnd => match self.pending_flush.take() {
                Some(b) => self.w.buffer_flush(None, b, t),
                None => return Ok(()),
            },
            Send { .. }
            | Recv { .. }
            | IsendBegin { .. }
            | IsendComplete { .. }
            | IrecvBegin { .. }
            | IrecvComplete { .. }
            | CollectiveBegin
            | CollectiveEnd { .. } => self.message(t, kind, l, defs),
            LockRequest { .. } | LockAcquired { .. } | LockRelease { .. } => {
                self.lock(t, kind, defs)
            }
            SemPost { sem } => self.param(t, 1, sem, None),
            SemAcquired { sem } => self.param(t, 2, sem, None),
            Advance { var, index } => self.param(t, 3, index, Some((ATTR_VAR, var))),
            AwaitDone { var, index } => self.param(t, 4, index, Some((ATTR_VAR, var))),
            Iteration { loop_id, index } => self.param(t, 5, index, Some((ATTR_LOOP, loop_id))),
            Skipped { calls } => self.param(t, 6, calls, None),
            ThreadCreate { .. }
            | ThreadBegin { .. }
            | ThreadEnd { .. }
            | ThreadJoin { .. }
            | Fork { .. }
            | Join { .. } => self.thread(t, kind),
            Put { .. } | Get { .. } | Atomic { .. } | RmaComplete { .. } | ValueReached { .. } => {
                self.rma(t, kind, defs)
            }
            Metric { .. } | Mark { .. } => self.value(t, kind, l.process, defs),
        };
        self.count += 1;
        written.map_err(|e| e.during(kind.name()))
    }

    /// A message or collective event's record.
    fn message(&mut self, t: u64, kind: &EventKind, l: &Loc, defs: &mut Defs) -> Written {
        use EventKind::*;
        let w = &mut self.w;
        match *kind {
            Send {
                peer,
                tag,
                comm,
                bytes,
            } => w.mpi_send(None, t, otf2_message(peer, tag, comm, bytes, l, defs)),
            Recv {
                peer,
                tag,
                comm,
                bytes,
            } => w.mpi_recv(None, t, otf2_message(peer, tag, comm, bytes, l, defs)),
            IsendBegin {
                peer,
                tag,
                comm,
                bytes,
                request,
            } => w.mpi_isend(
                None,
                t,
                otf2_message(peer, tag, comm, bytes, l, defs),
                request,
            ),
            IsendComplete { request } => w.mpi_isend_complete(None, t, request),
            IrecvBegin { request } => w.mpi_irecv_request(None, t, request),
            IrecvComplete {
                peer,
                tag,
                comm,
                bytes,
                request,
            } => w.mpi_irecv(
                None,
                t,
                otf2_message(peer, tag, comm, bytes, l, defs),
                request,
            ),
            CollectiveBegin => w.mpi_collective_begin(None, t),
            CollectiveEnd {
                op,
                comm,
                root,
                sent,
                received,
            } => {
                let end = CollEnd {
                    op: coll_op(op),
                    comm: comm_ref(comm, l, defs),
                    root,
                    sent,
                    received,
                };
                w.mpi_collective_end(None, t, end)
            }
            _ => unreachable!("only message events come here"),
        }
    }

    /// A lock event's record: OTF2's acquire and release (pthread
    /// paradigm, dense lock ids), a parameter for a request.
    fn lock(&mut self, t: u64, kind: &EventKind, defs: &mut Defs) -> Written {
        use EventKind::*;
        match *kind {
            LockRequest { lock } => self.param(t, 0, lock, Some((ATTR_LOCK, lock))),
            LockAcquired { lock } => {
                let e = lock_entry(lock, defs);
                let (id, order) = (e.id, e.acquisitions);
                e.acquisitions += 1;
                self.attrs.add_u64(ATTR_LOCK, lock)?;
                let a = Some(&mut *self.attrs);
                self.w
                    .thread_acquire_lock(a, t, c::PARADIGM_PTHREAD, id, order)
            }
            LockRelease { lock } => {
                let e = lock_entry(lock, defs);
                let (id, order) = (e.id, e.acquisitions.saturating_sub(1));
                self.attrs.add_u64(ATTR_LOCK, lock)?;
                let a = Some(&mut *self.attrs);
                self.w
                    .thread_release_lock(a, t, c::PARADIGM_PTHREAD, id, order)
            }
            _ => unreachable!("only lock events come here"),
        }
    }

    /// A thread event's record: creation and joins on the process's thread
    /// contingent, fork and join of a team (OpenMP paradigm).
    fn thread(&mut self, t: u64, kind: &EventKind) -> Written {
        use EventKind::*;
        let (w, tc) = (&mut self.w, self.thread_comm);
        match *kind {
            ThreadCreate { token } => w.thread_create(None, t, tc, token),
            ThreadBegin { token } => w.thread_begin(None, t, tc, token),
            ThreadEnd { token } => w.thread_end(None, t, tc, token),
            ThreadJoin { token } => w.thread_wait(None, t, tc, token),
            Fork { team, size } => {
                self.attrs.add_u64(ATTR_TEAM, team)?;
                w.thread_fork(Some(&mut *self.attrs), t, c::PARADIGM_OPENMP, size)
            }
            Join { team } => {
                self.attrs.add_u64(ATTR_TEAM, team)?;
                w.thread_join(Some(&mut *self.attrs), t, c::PARADIGM_OPENMP)
            }
            _ => unreachable!("only thread events come here"),
        }
    }

    /// A one-sided (RMA) event's record, on window 0.
    fn rma(&mut self, t: u64, kind: &EventKind, defs: &mut Defs) -> Written {
        use EventKind::*;
        defs.uses_rma = true;
        let matching = self.count;
        let (w, a) = (&mut self.w, &mut *self.attrs);
        match *kind {
            Put {
                target,
                bytes,
                addr,
            } => {
                a.add_u64(ATTR_ADDR, addr)?;
                w.rma_put(Some(a), t, transfer(target, bytes, matching))
            }
            Get {
                target,
                bytes,
                addr,
            } => {
                a.add_u64(ATTR_ADDR, addr)?;
                w.rma_get(Some(a), t, transfer(target, bytes, matching))
            }
            Atomic {
                target,
                bytes,
                addr,
            } => {
                a.add_u64(ATTR_ADDR, addr)?;
                let atomic = RmaAtomic {
                    win: 0,
                    remote: target,
                    kind: c::RMA_ATOMIC_TYPE_ACCUMULATE,
                    sent: bytes,
                    received: 0,
                    matching,
                };
                w.rma_atomic(Some(a), t, atomic)
            }
            RmaComplete { target } => w.rma_sync(None, t, 0, target, c::RMA_SYNC_TYPE_MEMORY),
            ValueReached { addr } => {
                a.add_u64(ATTR_ADDR, addr)?;
                w.rma_wait_change(Some(a), t, 0)
            }
            _ => unreachable!("only one-sided events come here"),
        }
    }

    /// A metric sample's or a mark's record.
    fn value(&mut self, t: u64, kind: &EventKind, process: usize, defs: &mut Defs) -> Written {
        use EventKind::*;
        match *kind {
            Metric { metric, value } => {
                let next = defs.metrics.len() as u32;
                let r = *defs.metrics.entry((process, metric)).or_insert_with(|| {
                    let (name, unit) = self
                        .p
                        .metrics
                        .get(&metric)
                        .cloned()
                        .unwrap_or_else(|| (format!("metric {metric}"), String::new()));
                    defs.metric_names.push(MetricName { name, unit });
                    next
                });
                self.w.metric(None, t, r, &[c::TYPE_INT64], &[value as u64])
            }
            Mark { mark, value } => {
                let name = parallax_view::names::region_name(self.p, mark);
                let next = defs.params.len() as u32;
                let p = *defs.params.entry(name).or_insert(next);
                self.w.parameter_int(None, t, p, value)
            }
            _ => unreachable!("only metrics and marks come here"),
        }
    }

    /// A `ParameterUnsignedInt` of `EVENT_PARAMS[which]`, with an
    /// attribute if given.
    fn param(&mut self, t: u64, which: u32, value: u64, attr: Option<(u32, u64)>) -> Written {
        match attr {
            Some((r, v)) => {
                self.attrs.add_u64(r, v)?;
                let a = Some(&mut *self.attrs);
                self.w.parameter_unsigned_int(a, t, which, value)
            }
            None => self.w.parameter_unsigned_int(None, t, which, value),
        }
    }
}

/// A put's or get's fields on window 0.
fn transfer(target: u32, bytes: u64, matching: u64) -> RmaTransfer {
    RmaTransfer {
        win: 0,
        remote: target,
        bytes,
        matching,
    }
}

/// The dense OTF2 id of a Parallax lock and its acquisitions so far.
fn lock_entry(lock: u64, defs: &mut Defs) -> &mut LockIds {
    let n = defs.locks.len() as u32;
    defs.locks.entry(lock).or_insert(LockIds {
        id: n,
        acquisitions: 0,
    })
}

/// The OTF2 message of a Parallax message event's fields.
fn otf2_message(peer: u32, tag: u32, comm: u64, bytes: u64, l: &Loc, defs: &mut Defs) -> Message {
    Message {
        peer,
        comm: comm_ref(comm, l, defs),
        tag,
        bytes,
    }
}

fn comm_ref(comm: u64, l: &Loc, defs: &mut Defs) -> u32 {
    let n = defs.comm_base + defs.comms.len() as u32;
    let users = defs.comm_users.entry(comm).or_default();
    if users.len() < 64 {
        users.insert((l.rank, l.thread));
    }
    *defs.comms.entry(comm).or_insert(n)
}

#[inline]
fn region_ref(region: RegionId, p: &Process, pm: &mut ProcMap, defs: &mut Defs) -> u32 {
    match pm.dense.get(region as usize) {
        Some(&r) if r > 0 => return r - 1,
        _ => {}
    }
    if let Some(&r) = pm.sparse.get(&region) {
        return r;
    }
    let r = new_region_ref(region, p, defs);
    if region < 1 << 20 {
        if pm.dense.len() <= region as usize {
            pm.dense.resize(region as usize + 1, 0);
        }
        pm.dense[region as usize] = r + 1;
    } else {
        pm.sparse.insert(region, r);
    }
    r
}

#[cold]
fn new_region_ref(region: RegionId, p: &Process, defs: &mut Defs) -> u32 {
    let key = match p.regions.get(&region) {
        Some(r) => RegionKey {
            name: r.name.clone(),
            kind: r.kind,
            file: r.file.clone(),
            line: r.line,
        },
        None => RegionKey {
            name: parallax_view::names::region_name(p, region),
            kind: RegionKind::User,
            file: String::new(),
            line: 0,
        },
    };
    if let Some(&r) = defs.region_keys.get(&key) {
        return r;
    }
    let r = defs.regions.len() as u32;
    let (role, paradigm) = role_paradigm(key.kind, &key.name);
    let d = RegionDef {
        name: defs.strings.get(&key.name),
        description: defs.strings.get(&format!("parallax:{}", key.kind.name())),
        role,
        paradigm,
        file: if key.file.is_empty() {
            c::UNDEFINED_U32
        } else {
            defs.strings.get(&key.file)
        },
        line: key.line,
    };
    defs.regions.push(d);
    defs.region_keys.insert(key, r);
    r
}
