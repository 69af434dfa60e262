//! Parallax's collective operations, region kinds and thread names for
//! OTF2's.

use parallax_model::event::CollectiveOp;
use parallax_model::region::RegionKind;

use crate::otf2::libotf2::consts as f;

/// Parallax's collective op for an OTF2 one.
pub(super) fn coll_op(op: u8) -> CollectiveOp {
    use CollectiveOp::*;
    match op {
        f::COLL_BARRIER => Barrier,
        f::COLL_BCAST => Broadcast,
        f::COLL_GATHER | f::COLL_GATHERV => Gather,
        f::COLL_SCATTER | f::COLL_SCATTERV => Scatter,
        f::COLL_ALLGATHER | f::COLL_ALLGATHERV => Allgather,
        f::COLL_ALLTOALL | f::COLL_ALLTOALLV | f::COLL_ALLTOALLW => Alltoall,
        f::COLL_ALLREDUCE => Allreduce,
        f::COLL_REDUCE => Reduce,
        f::COLL_REDUCE_SCATTER | f::COLL_REDUCE_SCATTER_BLOCK => ReduceScatter,
        f::COLL_SCAN | f::COLL_EXSCAN => Scan,
        _ => Other,
    }
}

/// The Parallax kind of an OTF2 region.
pub(super) fn region_kind(name: &str, desc: &str, role: u8, paradigm: u8) -> RegionKind {
    if let Some(k) = desc.strip_prefix("parallax:") {
        if let Some(k) = RegionKind::ALL.iter().find(|x| x.name() == k) {
            return *k;
        }
    }
    let n = name.to_ascii_lowercase();
    use RegionKind::*;
    match role {
        f::ROLE_POINT2POINT => {
            if n.contains("sendrecv") {
                SendRecv
            } else if n.contains("wait") || n.contains("test") {
                Wait
            } else if n.contains("recv") {
                Recv
            } else if n.contains("send") {
                Send
            } else {
                Wait
            }
        }
        f::ROLE_BARRIER | f::ROLE_IMPLICIT_BARRIER => Barrier,
        f::ROLE_COLL_ONE2ALL | f::ROLE_COLL_ALL2ONE | f::ROLE_COLL_ALL2ALL | f::ROLE_COLL_OTHER => {
            Collective
        }
        f::ROLE_LOOP => Loop,
        f::ROLE_PARALLEL => Fork,
        f::ROLE_THREAD_CREATE | f::ROLE_TASK_CREATE => ThreadCreate,
        f::ROLE_THREAD_WAIT | f::ROLE_TASK_WAIT => ThreadJoin,
        f::ROLE_FILE_IO | f::ROLE_FILE_IO_METADATA => Io,
        f::ROLE_ATOMIC => Atomic,
        f::ROLE_CRITICAL => Lock,
        f::ROLE_DATA_TRANSFER | f::ROLE_RMA => {
            if n.contains("get") {
                Get
            } else if n.contains("put") {
                Put
            } else {
                RmaSync
            }
        }
        f::ROLE_ARTIFICIAL if paradigm == f::PARADIGM_MEASUREMENT_SYSTEM => Runtime,
        _ if n.starts_with("mpi_init") || n.starts_with("mpi_finalize") => Setup,
        _ if n.contains("unlock") => Unlock,
        _ if n.contains("mutex_lock") || n.ends_with("_lock") || n == "lock" => Lock,
        _ if n.contains("pthread_create") => ThreadCreate,
        _ if n.contains("pthread_join") => ThreadJoin,
        f::ROLE_FUNCTION | f::ROLE_WRAPPER => Function,
        _ => User,
    }
}

/// A thread's own name from an OTF2 location name: Parallax's exports
/// write `thread N (NAME)`.
pub(super) fn thread_name(s: &str) -> String {
    if let Some(rest) = s.strip_prefix("thread ") {
        if let Some((num, name)) = rest.split_once(" (") {
            if num.chars().all(|c| c.is_ascii_digit()) {
                return name.strip_suffix(')').unwrap_or(name).to_string();
            }
        } else if rest.chars().all(|c| c.is_ascii_digit()) {
            return String::new();
        }
    }
    s.to_string()
}
