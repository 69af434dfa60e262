//! Resolution hints: PPW's Table 5-3 and more, one per pattern, naming
//! where to change the code.

use super::Pattern;

/// What to change for a finding of `pattern` at `site` (a region and,
/// when known, its source location), caused by `culprit` (a location).
pub fn hint(pattern: Pattern, site: &str, culprit: Option<&str>) -> String {
    let by = culprit.map_or(String::new(), |c| format!(" on {c}"));
    use Pattern::*;
    match pattern {
        LateSender => format!(
            "{site} waits for a send posted late{by}: do less computation before that send, more before this receive, or receive with MPI_Irecv and wait later"
        ),
        LateReceiver => format!(
            "the send at {site} blocks until the receive is posted{by}: do less computation before that receive, more before this send, or send with MPI_Isend"
        ),
        WrongOrder => format!(
            "{site} waits for a message sent late{by} while an earlier-sent one is already there: receive in the order the messages are sent, or use MPI_ANY_SOURCE / non-blocking receives"
        ),
        WaitAtBarrier => format!(
            "the barrier at {site} waits for the last arrival{by}: distribute the work before it evenly, or replace it with point-to-point synchronization"
        ),
        WaitAtNxN => format!(
            "the all-to-all collective at {site} waits for the last arrival{by}: balance the work before it, or use the non-blocking form and overlap"
        ),
        LateBroadcast => format!(
            "the one-to-all collective at {site} waits for its root{by}: let the root reach it sooner (move its other work after the call)"
        ),
        EarlyReduce => format!(
            "the root of the all-to-one collective at {site} waits for the senders{by}: let the root do more work before the call"
        ),
        LockWait => format!(
            "the lock at {site} is held by another thread{by}: hold it for less time (move work out of the critical section), split it into several locks, or do more local work before requesting it"
        ),
        WaitOnValue => format!(
            "{site} waits for a value written late{by}: set it earlier, or do more local work before the wait"
        ),
        CompetingRma => format!(
            "blocking one-sided transfers at {site} compete with others to the same target: use non-blocking puts/gets"
        ),
        JoinWait => format!(
            "the join at {site} waits for a thread that ends later than its peers{by}: split the work evenly over the threads, or use a work queue"
        ),
        ConditionWait => format!(
            "{site} waits for a signal given late{by}: signal as soon as the condition holds, or do more work before waiting"
        ),
        IdleThreads => format!(
            "the team's threads are idle at {site} until the fork{by}, whose thread ran outside parallel regions: parallelize that serial part, or give these threads work meanwhile (the serial part bounds the speedup)"
        ),
        LoadImbalance => format!(
            "{site} takes longer{by} than on average over the locations that run it: split its work evenly (smaller chunks, dynamic scheduling)"
        ),
        FrequentSmallEvents => format!(
            "{site} is very frequent and short{by}: combine small transfers into bulk ones, batch the calls, or leave it out of the instrumentation"
        ),
        SerializedTransfers => format!(
            "blocking transfers at {site} to different peers run one after another: use non-blocking transfers (MPI_Isend/Irecv, async gets) and wait for all at once"
        ),
        RedundantBarrier => format!(
            "the barrier at {site} follows the previous one with no communication in between: remove it"
        ),
    }
}
