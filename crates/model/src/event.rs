//! Events: what happens at a location, at a time.
//!
//! Times are raw clock ticks of the recording process; the process's clock
//! definitions map them to nanoseconds (see [`crate::clock`]).

/// Region id as registered in a process's definitions.
pub type RegionId = u32;

/// A region id that no definition uses: the region of a `Leave` whose
/// `Enter` is not in the trace (it was cut off or never recorded).
pub const UNKNOWN_REGION: RegionId = u32::MAX;

/// The region of a profile node that counts the visits of call paths beyond
/// the runtime's node limit.
pub const OVERFLOW_REGION: RegionId = u32::MAX - 1;

/// The region of a profile node that counts calls under its parent's path
/// whose probes ran but recorded nothing (throttled or filtered functions,
/// frames beyond the depth limit, recording switched off): its count is
/// those calls, its times are zero.
pub const SKIPPED_REGION: RegionId = u32::MAX - 2;

/// How profiles and reports name [`SKIPPED_REGION`].
pub const SKIPPED_NAME: &str = "<calls not recorded>";

/// "No root" in a collective.
pub const NO_ROOT: u32 = u32::MAX;

/// One event of one location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Clock ticks of the recording process.
    pub time: u64,
    /// What happened.
    pub kind: EventKind,
}

/// The collective operation of a collective region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum CollectiveOp {
    /// Barrier.
    Barrier = 0,
    /// One to all.
    Broadcast = 1,
    /// All to one.
    Reduce = 2,
    /// All to all, result everywhere.
    Allreduce = 3,
    /// All to one, concatenated.
    Gather = 4,
    /// One to all, split.
    Scatter = 5,
    /// All to all, concatenated everywhere.
    Allgather = 6,
    /// Personalized all to all.
    Alltoall = 7,
    /// Prefix reduction.
    Scan = 8,
    /// Reduction then scatter.
    ReduceScatter = 9,
    /// Anything else.
    Other = 10,
}

impl CollectiveOp {
    /// The op with this number, if any.
    pub fn from_u8(v: u8) -> Option<CollectiveOp> {
        use CollectiveOp::*;
        [
            Barrier,
            Broadcast,
            Reduce,
            Allreduce,
            Gather,
            Scatter,
            Allgather,
            Alltoall,
            Scan,
            ReduceScatter,
            Other,
        ]
        .get(v as usize)
        .copied()
    }
}

/// What an event records. Fields name objects by ids that the programming
/// model gives them (ranks, lock addresses, request handles); analyses pair
/// events by these ids.
///
/// If you change a variant's fields or code, bump [`crate::file::VERSION`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each variant's doc names its fields
pub enum EventKind {
    /// A region begins.
    Enter { region: RegionId },
    /// The innermost open region ends. On disk a leave has no region id;
    /// readers fill it from their region stack.
    Leave { region: RegionId },
    /// The runtime starts writing a buffer (its own perturbation begins).
    FlushBegin,
    /// The runtime has written a buffer.
    FlushEnd,
    /// A blocking send (or the start of a non-blocking one without request).
    Send {
        peer: u32,
        tag: u32,
        comm: u64,
        bytes: u64,
    },
    /// A receive completed.
    Recv {
        peer: u32,
        tag: u32,
        comm: u64,
        bytes: u64,
    },
    /// A non-blocking send was started.
    IsendBegin {
        peer: u32,
        tag: u32,
        comm: u64,
        bytes: u64,
        request: u64,
    },
    /// A non-blocking send completed (wait/test).
    IsendComplete { request: u64 },
    /// A non-blocking receive was posted.
    IrecvBegin { request: u64 },
    /// A non-blocking receive completed, with its matched envelope.
    IrecvComplete {
        peer: u32,
        tag: u32,
        comm: u64,
        bytes: u64,
        request: u64,
    },
    /// A collective operation begins (inside its region).
    CollectiveBegin,
    /// A collective operation ends.
    CollectiveEnd {
        op: CollectiveOp,
        comm: u64,
        root: u32,
        sent: u64,
        received: u64,
    },
    /// A lock is requested.
    LockRequest { lock: u64 },
    /// A lock is held.
    LockAcquired { lock: u64 },
    /// A lock is released.
    LockRelease { lock: u64 },
    /// A semaphore or condition variable is posted/signalled.
    SemPost { sem: u64 },
    /// A wait on a semaphore or condition variable completed.
    SemAcquired { sem: u64 },
    /// A synchronization variable advanced to `index`.
    Advance { var: u64, index: u64 },
    /// An await of `index` on a synchronization variable was satisfied.
    AwaitDone { var: u64, index: u64 },
    /// A thread was created; the child records `ThreadBegin` with the token.
    ThreadCreate { token: u64 },
    /// This location is the thread created with `token`.
    ThreadBegin { token: u64 },
    /// This location's thread ends.
    ThreadEnd { token: u64 },
    /// The thread created with `token` was joined.
    ThreadJoin { token: u64 },
    /// A team of `size` members is forked.
    Fork { team: u64, size: u32 },
    /// The team is joined.
    Join { team: u64 },
    /// One-sided put to `target`.
    Put { target: u32, bytes: u64, addr: u64 },
    /// One-sided get from `target`.
    Get { target: u32, bytes: u64, addr: u64 },
    /// Remote atomic on `target`.
    Atomic { target: u32, bytes: u64, addr: u64 },
    /// Outstanding one-sided operations to `target` completed (`u32::MAX`: all).
    RmaComplete { target: u32 },
    /// A wait on a memory location was satisfied.
    ValueReached { addr: u64 },
    /// A sample of a metric.
    Metric { metric: u32, value: i64 },
    /// A user mark with data; `mark` is a region of kind `Mark`.
    Mark { mark: RegionId, value: i64 },
    /// A self-scheduled loop handed this location iteration `index`
    /// ([`NO_ITERATION`]: none was left, the location leaves the loop).
    /// What the location records until its next iteration event of the
    /// loop is that iteration's work.
    Iteration { loop_id: u64, index: u64 },
    /// `calls` calls whose probes ran but recorded nothing (throttled or
    /// filtered functions, frames beyond the depth limit, recording
    /// switched off) happened since this location's previous event: their
    /// probes' cost lies in the time before this event.
    Skipped { calls: u64 },
}

/// The `index` of an [`EventKind::Iteration`] event that found no
/// iteration left.
pub const NO_ITERATION: u64 = u64::MAX;

/// The top byte of an OpenMP team's id: the `team` of its `Fork` and
/// `Join`, and the `var` of the fork's `Advance` that the team's other
/// threads await to begin (no address has it).
pub const TEAM_TAG: u8 = 0xA5;

/// Whether synchronization variable or team `id` is an OpenMP team's.
pub fn is_team(id: u64) -> bool {
    (id >> 56) as u8 == TEAM_TAG
}

impl EventKind {
    /// Whether this event takes part in synchronization on a shared object
    /// (lock, semaphore or condition variable, synchronization variable,
    /// thread start and end, memory word), whose pairing with its partner
    /// needs the measured order across locations.
    pub fn is_shared_sync(&self) -> bool {
        use EventKind::*;
        matches!(
            self,
            LockAcquired { .. }
                | LockRelease { .. }
                | SemPost { .. }
                | SemAcquired { .. }
                | Advance { .. }
                | AwaitDone { .. }
                | ThreadCreate { .. }
                | ThreadBegin { .. }
                | ThreadEnd { .. }
                | ThreadJoin { .. }
                | Put { .. }
                | Atomic { .. }
                | ValueReached { .. }
        )
    }

    /// Short lower-case name.
    pub fn name(&self) -> &'static str {
        use EventKind::*;
        match self {
            Enter { .. } => "enter",
            Leave { .. } => "leave",
            FlushBegin => "flush_begin",
            FlushEnd => "flush_end",
            Send { .. } => "send",
            Recv { .. } => "recv",
            IsendBegin { .. } => "isend_begin",
            IsendComplete { .. } => "isend_complete",
            IrecvBegin { .. } => "irecv_begin",
            IrecvComplete { .. } => "irecv_complete",
            CollectiveBegin => "collective_begin",
            CollectiveEnd { .. } => "collective_end",
            LockRequest { .. } => "lock_request",
            LockAcquired { .. } => "lock_acquired",
            LockRelease { .. } => "lock_release",
            SemPost { .. } => "sem_post",
            SemAcquired { .. } => "sem_acquired",
            Advance { .. } => "advance",
            AwaitDone { .. } => "await_done",
            ThreadCreate { .. } => "thread_create",
            ThreadBegin { .. } => "thread_begin",
            ThreadEnd { .. } => "thread_end",
            ThreadJoin { .. } => "thread_join",
            Fork { .. } => "fork",
            Join { .. } => "join",
            Put { .. } => "put",
            Get { .. } => "get",
            Atomic { .. } => "atomic",
            RmaComplete { .. } => "rma_complete",
            ValueReached { .. } => "value_reached",
            Metric { .. } => "metric",
            Mark { .. } => "mark",
            Iteration { .. } => "iteration",
            Skipped { .. } => "skipped",
        }
    }
}
