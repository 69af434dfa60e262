//! OTF2's region roles, paradigms and collective operations for Parallax's
//! region kinds and operations.

use parallax_model::event::CollectiveOp;
use parallax_model::region::RegionKind;

use crate::otf2::libotf2::consts as f;

/// OTF2 region role and paradigm of a Parallax region.
pub(super) fn role_paradigm(kind: RegionKind, name: &str) -> (u8, u8) {
    use RegionKind::*;
    let model = if name.starts_with("MPI_") {
        f::PARADIGM_MPI
    } else if name.starts_with("shmem") {
        f::PARADIGM_SHMEM
    } else {
        f::PARADIGM_USER
    };
    let sync_model = if model == f::PARADIGM_USER {
        f::PARADIGM_PTHREAD
    } else {
        model
    };
    match kind {
        User => (f::ROLE_CODE, f::PARADIGM_USER),
        Function => (f::ROLE_FUNCTION, model),
        Loop => (f::ROLE_LOOP, f::PARADIGM_USER),
        Send | Recv | SendRecv | Wait => (f::ROLE_POINT2POINT, f::PARADIGM_MPI),
        Collective => {
            let n = name.to_ascii_lowercase();
            let role = if n.contains("bcast") || n.contains("scatter") && !n.contains("reduce") {
                f::ROLE_COLL_ONE2ALL
            } else if n.contains("gather") && !n.contains("all")
                || n.ends_with("reduce") && !n.contains("all")
            {
                f::ROLE_COLL_ALL2ONE
            } else {
                f::ROLE_COLL_ALL2ALL
            };
            (
                role,
                if model == f::PARADIGM_USER {
                    f::PARADIGM_MPI
                } else {
                    model
                },
            )
        }
        Barrier => (f::ROLE_BARRIER, sync_model),
        Lock | Unlock | SemWait | SemPost => (f::ROLE_FUNCTION, sync_model),
        Advance | Await => (f::ROLE_ORDERED, f::PARADIGM_USER),
        Put | Get => (f::ROLE_DATA_TRANSFER, model),
        Atomic => (f::ROLE_ATOMIC, model),
        WaitOnValue | RmaSync => (f::ROLE_RMA, model),
        ThreadCreate => (f::ROLE_THREAD_CREATE, f::PARADIGM_PTHREAD),
        ThreadJoin => (f::ROLE_THREAD_WAIT, f::PARADIGM_PTHREAD),
        Fork => (f::ROLE_PARALLEL, f::PARADIGM_OPENMP),
        Join => (f::ROLE_IMPLICIT_BARRIER, f::PARADIGM_OPENMP),
        Io => (f::ROLE_FILE_IO, f::PARADIGM_USER),
        Setup => (f::ROLE_FUNCTION, model),
        Runtime => (f::ROLE_ARTIFICIAL, f::PARADIGM_MEASUREMENT_SYSTEM),
        Mark => (f::ROLE_ARTIFICIAL, f::PARADIGM_USER),
    }
}

/// OTF2's collective operation for a Parallax one. `Other` has no OTF2
/// counterpart and is written as `CREATE_HANDLE` (17), which the import maps
/// back.
pub(super) fn coll_op(op: CollectiveOp) -> u8 {
    use CollectiveOp::*;
    match op {
        Barrier => f::COLL_BARRIER,
        Broadcast => f::COLL_BCAST,
        Reduce => f::COLL_REDUCE,
        Allreduce => f::COLL_ALLREDUCE,
        Gather => f::COLL_GATHER,
        Scatter => f::COLL_SCATTER,
        Allgather => f::COLL_ALLGATHER,
        Alltoall => f::COLL_ALLTOALL,
        Scan => f::COLL_SCAN,
        ReduceScatter => f::COLL_REDUCE_SCATTER,
        Other => 17,
    }
}
