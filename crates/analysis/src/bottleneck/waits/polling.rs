//! Polling loops: failing waits of one call path in a row (MPI_Test,
//! MPI_Iprobe, trylock, trywait) are one wait, from the first one's start.

use parallax_model::region::RegionKind;

use super::{Frame, LocPass};

/// Failing waits (MPI_Test, trylock) of one call path closer than this
/// are a polling loop, ns ...
const POLL_GAP_NS: f64 = 5_000.0;
/// ... and may be further apart once in this many waits.
const POLL_WAITS_PER_GAP: u64 = 100;

/// Failing waits of one call path in a row (message waits, lock or
/// semaphore attempts): a polling loop while the times between them stay
/// short.
#[derive(Clone, Copy, Debug)]
pub(super) struct Poll {
    /// The first one's enter.
    pub(super) start: f64,
    pub(super) path: u32,
    /// A message wait (MPI), or a lock or semaphore attempt.
    pub(super) kind: RegionKind,
    /// The last one's leave.
    left: f64,
    /// Waits in the run, and long times between them (above
    /// `POLL_GAP_NS`).
    waits: u64,
    long: u64,
}

impl Poll {
    /// Whether a wait of `path` entered at `enter` goes on polling: the
    /// time since the last wait is short (a loop around the test), or long
    /// times are rare in the run (a flush of the trace buffer, the process
    /// preempted now and then), not computation between every few tests.
    fn goes_on(&self, path: u32, enter: f64) -> bool {
        path == self.path
            && (enter - self.left <= POLL_GAP_NS
                || (self.long + 1) * POLL_WAITS_PER_GAP <= self.waits)
    }
}

impl LocPass<'_> {
    /// Whether the current region is a wait that completes polling run `p`
    /// (of its call path, so of its kind).
    pub(super) fn polled(&self, p: &Poll) -> bool {
        self.calls
            .stack
            .last()
            .is_some_and(|f| p.goes_on(f.path, f.enter))
    }

    /// The start of the polling run that the current region completes, if
    /// any, taking it.
    pub(super) fn poll_start(&mut self) -> Option<f64> {
        let p = self.probe.take()?;
        if self.polled(&p) {
            Some(p.start)
        } else {
            self.probe = Some(p);
            None
        }
    }

    /// A wait region (message wait, lock or semaphore attempt) `f` was
    /// left at `t`: a failing one extends or starts the polling run.
    pub(super) fn wait_left(&mut self, f: &Frame, t: f64) {
        let kind = f.kind;
        let failed = match kind {
            RegionKind::Wait => self.msgs.last_msg < f.enter,
            _ => self.objs.last_got < f.enter,
        };
        // Failing waits of one call path in quick succession are one
        // wait: a polling loop.
        if failed {
            self.res.paths[f.path as usize].idle += 1;
            self.probe = Some(match self.probe {
                Some(p) if p.goes_on(f.path, f.enter) => Poll {
                    left: t,
                    waits: p.waits + 1,
                    long: p.long + u64::from(f.enter - p.left > POLL_GAP_NS),
                    ..p
                },
                _ => Poll {
                    start: f.enter,
                    path: f.path,
                    kind,
                    left: t,
                    waits: 1,
                    long: 0,
                },
            });
        } else if kind == RegionKind::Wait {
            self.probe = None;
        }
    }
}
