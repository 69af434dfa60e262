//! What the bottleneck analysis finds, in one type that the analysis
//! produces, the run database stores and reads back, and the reports show:
//! a [`Finding`] of some [`Pattern`] at a location ([`Where`]), with the
//! locations that caused it ([`Culprit`]).
//!
//! A finding read back from the run database or from a findings file holds
//! what they keep: no call path, detection or instances from the database,
//! and an empty hint where none was kept.

/// A bottleneck pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// A receive waited for a send that started later.
    LateSender,
    /// A blocking send waited for a receive that was posted later.
    LateReceiver,
    /// A late sender while an earlier-sent message was already waiting.
    WrongOrder,
    /// Waiting in a barrier for the last arrival.
    WaitAtBarrier,
    /// Waiting in an all-to-all collective for the last arrival.
    WaitAtNxN,
    /// Waiting in a one-to-all collective for its root.
    LateBroadcast,
    /// The root of an all-to-one collective waiting for the senders.
    EarlyReduce,
    /// Waiting for a lock held by another location.
    LockWait,
    /// Waiting for a memory word or synchronization variable to be set.
    WaitOnValue,
    /// Blocking one-sided transfers slowed by others to the same target.
    CompetingRma,
    /// A join waiting for a thread that ended later than its peers.
    JoinWait,
    /// Waiting on a condition variable or semaphore for its signal.
    ConditionWait,
    /// A thread of an OpenMP team idle until the team is forked: the
    /// initial thread ran outside parallel regions (the serial part).
    IdleThreads,
    /// Work unevenly spread over locations.
    LoadImbalance,
    /// Short, very frequent events, or many small transfers to one target.
    FrequentSmallEvents,
    /// Consecutive blocking transfers to different targets.
    SerializedTransfers,
    /// A barrier with no communication since the previous one.
    RedundantBarrier,
}

impl Pattern {
    /// Every pattern.
    pub const ALL: [Pattern; 17] = [
        Pattern::LateSender,
        Pattern::LateReceiver,
        Pattern::WrongOrder,
        Pattern::WaitAtBarrier,
        Pattern::WaitAtNxN,
        Pattern::LateBroadcast,
        Pattern::EarlyReduce,
        Pattern::LockWait,
        Pattern::WaitOnValue,
        Pattern::CompetingRma,
        Pattern::JoinWait,
        Pattern::ConditionWait,
        Pattern::IdleThreads,
        Pattern::LoadImbalance,
        Pattern::FrequentSmallEvents,
        Pattern::SerializedTransfers,
        Pattern::RedundantBarrier,
    ];

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        use Pattern::*;
        match self {
            LateSender => "late_sender",
            LateReceiver => "late_receiver",
            WrongOrder => "wrong_order",
            WaitAtBarrier => "wait_at_barrier",
            WaitAtNxN => "wait_at_nxn",
            LateBroadcast => "late_broadcast",
            EarlyReduce => "early_reduce",
            LockWait => "lock_wait",
            WaitOnValue => "wait_on_value",
            CompetingRma => "competing_rma",
            JoinWait => "join_wait",
            ConditionWait => "condition_wait",
            IdleThreads => "idle_threads",
            LoadImbalance => "load_imbalance",
            FrequentSmallEvents => "frequent_small_events",
            SerializedTransfers => "serialized_transfers",
            RedundantBarrier => "redundant_barrier",
        }
    }

    /// The pattern with this name.
    pub fn parse(s: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Whether the replay measures it as waiting at one event.
    pub fn is_wait_state(self) -> bool {
        (self as usize) <= Pattern::IdleThreads as usize
    }
}

/// A location by rank and thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Where {
    /// Rank of its process.
    pub rank: u32,
    /// Thread number.
    pub thread: u32,
}

/// A location that caused (part of) a finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Culprit {
    /// Where.
    pub at: Where,
    /// The part of the finding's severity it caused, s.
    pub severity_s: f64,
}

/// How PPW's detection filter judged a finding's profile entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// `baseline`, `deviation` or `replay` (the waiting itself).
    pub method: &'static str,
    /// Mean time per visit of the entry, s.
    pub mean_s: f64,
    /// Expected time per visit from the baseline, s.
    pub expected_s: Option<f64>,
}

/// One bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Its pattern.
    pub pattern: Pattern,
    /// Time lost, s.
    pub severity_s: f64,
    /// Where the time was lost.
    pub at: Where,
    /// Innermost region (empty when unknown).
    pub region: String,
    /// Call path, outermost first.
    pub path: Vec<String>,
    /// Source location of the region, if known (`file:line`).
    pub source: Option<String>,
    /// Instances (events) that make it up.
    pub instances: u64,
    /// Who caused it, largest share first.
    pub culprits: Vec<Culprit>,
    /// How the detection filter judged it.
    pub detection: Option<Detection>,
    /// What to change (empty when unknown).
    pub hint: String,
}

impl Finding {
    /// Its region, unless unknown (a finding read back without one).
    pub fn known_region(&self) -> Option<&str> {
        (!self.region.is_empty()).then_some(self.region.as_str())
    }
}
