//! The fields of events as trace formats show them.

use parallax_model::event::EventKind;
use parallax_model::experiment::Process;

/// Name of metric `id` of process `p`, a placeholder without a definition.
pub fn metric_name(p: &Process, id: u32) -> String {
    p.metrics
        .get(&id)
        .map_or_else(|| format!("metric {id}"), |m| m.0.clone())
}

/// The fields of an event other than enter/leave, as (name, value) pairs,
/// for formats that show them as arguments.
pub fn args(kind: &EventKind) -> Vec<(&'static str, u64)> {
    use EventKind::*;
    match *kind {
        Send {
            peer,
            tag,
            comm,
            bytes,
        }
        | Recv {
            peer,
            tag,
            comm,
            bytes,
        } => vec![
            ("peer", peer as u64),
            ("tag", tag as u64),
            ("comm", comm),
            ("bytes", bytes),
        ],
        IsendBegin {
            peer,
            tag,
            comm,
            bytes,
            request,
        }
        | IrecvComplete {
            peer,
            tag,
            comm,
            bytes,
            request,
        } => vec![
            ("peer", peer as u64),
            ("tag", tag as u64),
            ("comm", comm),
            ("bytes", bytes),
            ("request", request),
        ],
        IsendComplete { request } | IrecvBegin { request } => vec![("request", request)],
        CollectiveEnd {
            op,
            comm,
            root,
            sent,
            received,
        } => vec![
            ("op", op as u64),
            ("comm", comm),
            ("root", root as u64),
            ("sent", sent),
            ("received", received),
        ],
        LockRequest { lock } | LockAcquired { lock } | LockRelease { lock } => {
            vec![("lock", lock)]
        }
        SemPost { sem } | SemAcquired { sem } => vec![("sem", sem)],
        Advance { var, index } | AwaitDone { var, index } => {
            vec![("var", var), ("index", index)]
        }
        Iteration { loop_id, index } => vec![("loop", loop_id), ("index", index)],
        Skipped { calls } => vec![("calls", calls)],
        ThreadCreate { token }
        | ThreadBegin { token }
        | ThreadEnd { token }
        | ThreadJoin { token } => vec![("token", token)],
        Fork { team, size } => vec![("team", team), ("size", size as u64)],
        Join { team } => vec![("team", team)],
        Put {
            target,
            bytes,
            addr,
        }
        | Get {
            target,
            bytes,
            addr,
        }
        | Atomic {
            target,
            bytes,
            addr,
        } => vec![("target", target as u64), ("bytes", bytes), ("addr", addr)],
        RmaComplete { target } => vec![("target", target as u64)],
        ValueReached { addr } => vec![("addr", addr)],
        Metric { metric, value } => vec![("metric", metric as u64), ("value", value as u64)],
        Mark { mark, value } => vec![("mark", mark as u64), ("value", value as u64)],
        Enter { .. } | Leave { .. } | FlushBegin | FlushEnd | CollectiveBegin => Vec::new(),
    }
}
