//! Regions and the generic operation types of PPW's event model.
//!
//! Every construct of every programming model (an MPI call, a pthread mutex,
//! a SHMEM put, a user function) is a region whose [`RegionKind`] says which
//! generic operation it performs; analyses speak only of these kinds, so a
//! new programming model needs an adapter, not a new analysis.

/// The generic operation type of a region.
///
/// If you change the numbering, bump [`crate::file::VERSION`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RegionKind {
    /// A user-defined block (`region!`).
    User = 0,
    /// A function (`#[instrument]`, compiler instrumentation).
    Function = 1,
    /// A loop or loop body.
    Loop = 2,
    /// Point-to-point send (blocking or initiation).
    Send = 3,
    /// Point-to-point receive (blocking or initiation).
    Recv = 4,
    /// Send and receive in one call.
    SendRecv = 5,
    /// Completion of non-blocking operations (wait/test families).
    Wait = 6,
    /// A collective other than a barrier.
    Collective = 7,
    /// A barrier.
    Barrier = 8,
    /// Lock acquisition (mutex lock, set_lock, rwlock, spin lock).
    Lock = 9,
    /// Lock release.
    Unlock = 10,
    /// Semaphore or condition-variable wait.
    SemWait = 11,
    /// Semaphore post or condition signal/broadcast.
    SemPost = 12,
    /// Advance of a synchronization variable (DOACROSS producer side).
    Advance = 13,
    /// Await of a synchronization variable (DOACROSS consumer side).
    Await = 14,
    /// One-sided put.
    Put = 15,
    /// One-sided get.
    Get = 16,
    /// Remote atomic operation.
    Atomic = 17,
    /// Wait until a memory location holds a value.
    WaitOnValue = 18,
    /// Completion of one-sided operations (quiet, fence, flush).
    RmaSync = 19,
    /// Thread or task creation.
    ThreadCreate = 20,
    /// Thread or task join.
    ThreadJoin = 21,
    /// Fork of a team (parallel region begin).
    Fork = 22,
    /// Join of a team (parallel region end).
    Join = 23,
    /// File or device I/O.
    Io = 24,
    /// Set-up and tear-down of a programming model (MPI_Init, ...).
    Setup = 25,
    /// The measurement runtime's own work (buffer flushes).
    Runtime = 26,
    /// A named mark (user event with data) or metric; not entered.
    Mark = 27,
}

/// What kind of time a region's time is, for load-balance and overhead
/// breakdowns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Useful work.
    Computation,
    /// Moving data between locations.
    Communication,
    /// Waiting for other locations.
    Synchronization,
    /// Input/output.
    Io,
    /// The measurement itself.
    Measurement,
}

impl RegionKind {
    /// All kinds, in numbering order.
    pub const ALL: [RegionKind; 28] = [
        RegionKind::User,
        RegionKind::Function,
        RegionKind::Loop,
        RegionKind::Send,
        RegionKind::Recv,
        RegionKind::SendRecv,
        RegionKind::Wait,
        RegionKind::Collective,
        RegionKind::Barrier,
        RegionKind::Lock,
        RegionKind::Unlock,
        RegionKind::SemWait,
        RegionKind::SemPost,
        RegionKind::Advance,
        RegionKind::Await,
        RegionKind::Put,
        RegionKind::Get,
        RegionKind::Atomic,
        RegionKind::WaitOnValue,
        RegionKind::RmaSync,
        RegionKind::ThreadCreate,
        RegionKind::ThreadJoin,
        RegionKind::Fork,
        RegionKind::Join,
        RegionKind::Io,
        RegionKind::Setup,
        RegionKind::Runtime,
        RegionKind::Mark,
    ];

    /// The kind with this number, if any.
    pub fn from_u8(v: u8) -> Option<RegionKind> {
        RegionKind::ALL.get(v as usize).copied()
    }

    /// The category of time spent in regions of this kind.
    pub fn category(self) -> Category {
        use RegionKind::*;
        match self {
            User | Function | Loop | Mark => Category::Computation,
            Send | Recv | SendRecv | Collective | Put | Get | Atomic => Category::Communication,
            Wait | Barrier | Lock | Unlock | SemWait | SemPost | Advance | Await | WaitOnValue
            | RmaSync | ThreadCreate | ThreadJoin | Fork | Join | Setup => {
                Category::Synchronization
            }
            Io => Category::Io,
            Runtime => Category::Measurement,
        }
    }

    /// Lower-case name used in reports and JSON.
    pub fn name(self) -> &'static str {
        use RegionKind::*;
        match self {
            User => "user",
            Function => "function",
            Loop => "loop",
            Send => "send",
            Recv => "recv",
            SendRecv => "sendrecv",
            Wait => "wait",
            Collective => "collective",
            Barrier => "barrier",
            Lock => "lock",
            Unlock => "unlock",
            SemWait => "sem_wait",
            SemPost => "sem_post",
            Advance => "advance",
            Await => "await",
            Put => "put",
            Get => "get",
            Atomic => "atomic",
            WaitOnValue => "wait_on_value",
            RmaSync => "rma_sync",
            ThreadCreate => "thread_create",
            ThreadJoin => "thread_join",
            Fork => "fork",
            Join => "join",
            Io => "io",
            Setup => "setup",
            Runtime => "runtime",
            Mark => "mark",
        }
    }
}

impl Category {
    /// Lower-case name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Category::Computation => "computation",
            Category::Communication => "communication",
            Category::Synchronization => "synchronization",
            Category::Io => "io",
            Category::Measurement => "measurement",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_matches_all() {
        for (i, k) in RegionKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
            assert_eq!(RegionKind::from_u8(i as u8), Some(*k));
        }
        assert_eq!(RegionKind::from_u8(RegionKind::ALL.len() as u8), None);
    }
}
