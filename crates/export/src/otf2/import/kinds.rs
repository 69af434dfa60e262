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

/// The Parallax kind of an OTF2 region: Parallax's own, written in its
/// description; else that of a well-known call of its name (writers give
/// some of them a role that says less: Score-P marks `MPI_Wait` and the
/// test family as FUNCTION); else from its role.
pub(super) fn region_kind(name: &str, desc: &str, role: u8, paradigm: u8) -> RegionKind {
    if let Some(k) = desc.strip_prefix("parallax:") {
        if let Some(k) = RegionKind::ALL.iter().find(|x| x.name() == k) {
            return *k;
        }
    }
    let n = name.to_ascii_lowercase();
    if let Some(k) = known_call(&n) {
        return k;
    }
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

/// The kind Parallax's own wrappers give the call named `n` (lower case):
/// MPI, POSIX threads and semaphores, OpenSHMEM.
fn known_call(n: &str) -> Option<RegionKind> {
    use RegionKind::*;
    Some(match n {
        "mpi_init" | "mpi_init_thread" | "mpi_finalize" | "shmem_init" | "shmem_init_thread"
        | "shmem_finalize" | "start_pes" | "mpi_send_init" | "mpi_bsend_init"
        | "mpi_ssend_init" | "mpi_rsend_init" | "mpi_recv_init" | "mpi_request_free" => Setup,
        // Communicators are made and freed by all their members at once.
        "mpi_comm_dup"
        | "mpi_comm_dup_with_info"
        | "mpi_comm_split"
        | "mpi_comm_split_type"
        | "mpi_comm_create"
        | "mpi_comm_create_group"
        | "mpi_comm_free"
        | "mpi_cart_create"
        | "mpi_cart_sub"
        | "mpi_graph_create"
        | "mpi_dist_graph_create"
        | "mpi_dist_graph_create_adjacent"
        | "mpi_intercomm_create"
        | "mpi_intercomm_merge" => Collective,
        "mpi_wait" | "mpi_waitall" | "mpi_waitany" | "mpi_waitsome" | "mpi_test"
        | "mpi_testall" | "mpi_testany" | "mpi_testsome" | "mpi_probe" | "mpi_iprobe"
        | "mpi_mprobe" | "mpi_improbe" => Wait,
        "mpi_send" | "mpi_bsend" | "mpi_ssend" | "mpi_rsend" | "mpi_isend" | "mpi_ibsend"
        | "mpi_issend" | "mpi_irsend" | "mpi_start" | "mpi_startall" => Send,
        "mpi_recv" | "mpi_irecv" | "mpi_mrecv" | "mpi_imrecv" => Recv,
        "mpi_sendrecv" | "mpi_sendrecv_replace" => SendRecv,
        "mpi_barrier" | "mpi_ibarrier" | "pthread_barrier_wait" | "shmem_barrier_all" => Barrier,
        "pthread_mutex_lock"
        | "pthread_mutex_trylock"
        | "pthread_mutex_timedlock"
        | "pthread_spin_lock"
        | "pthread_spin_trylock"
        | "pthread_rwlock_rdlock"
        | "pthread_rwlock_wrlock"
        | "pthread_rwlock_tryrdlock"
        | "pthread_rwlock_trywrlock"
        | "pthread_rwlock_timedrdlock"
        | "pthread_rwlock_timedwrlock"
        | "shmem_set_lock"
        | "shmem_test_lock" => Lock,
        "pthread_mutex_unlock"
        | "pthread_spin_unlock"
        | "pthread_rwlock_unlock"
        | "shmem_clear_lock" => Unlock,
        "pthread_cond_wait"
        | "pthread_cond_timedwait"
        | "sem_wait"
        | "sem_timedwait"
        | "sem_trywait" => SemWait,
        "pthread_cond_signal" | "pthread_cond_broadcast" | "sem_post" => SemPost,
        "pthread_create" => ThreadCreate,
        "pthread_join" | "pthread_tryjoin_np" | "pthread_timedjoin_np" => ThreadJoin,
        "shmem_quiet" | "shmem_fence" => RmaSync,
        "shmem_wait" | "shmem_wait_until" => WaitOnValue,
        _ => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_known_by_name_whatever_role_the_writer_gave() {
        let mpi = f::PARADIGM_MPI;
        // Score-P's roles: the wait and test families are FUNCTION.
        for name in ["MPI_Wait", "MPI_Waitall", "MPI_Testsome", "MPI_Iprobe"] {
            assert_eq!(
                region_kind(name, "", f::ROLE_FUNCTION, mpi),
                RegionKind::Wait
            );
        }
        assert_eq!(
            region_kind("MPI_Test_cancelled", "", f::ROLE_FUNCTION, mpi),
            RegionKind::Function
        );
        assert_eq!(
            region_kind("MPI_Isend", "", f::ROLE_POINT2POINT, mpi),
            RegionKind::Send
        );
        let pthread = f::PARADIGM_PTHREAD;
        let cases = [
            ("pthread_mutex_trylock", RegionKind::Lock),
            ("pthread_cond_wait", RegionKind::SemWait),
            ("pthread_cond_broadcast", RegionKind::SemPost),
            ("pthread_join", RegionKind::ThreadJoin),
        ];
        for (name, kind) in cases {
            assert_eq!(
                region_kind(name, "", f::ROLE_FUNCTION, pthread),
                kind,
                "{name}"
            );
        }
        // A region's own description wins.
        assert_eq!(
            region_kind("MPI_Wait", "parallax:function", f::ROLE_FUNCTION, mpi),
            RegionKind::Function
        );
    }
}
