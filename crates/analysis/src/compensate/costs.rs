//! The probe costs (α) that compensation removes, per event kind.

use parallax_model::defs::{Mode, Probe};
use parallax_model::event::EventKind;
use parallax_model::experiment::Process;

/// What one probe costs, ns: the mean of the runtime's calibration, and
/// its standard deviation (the uncertainty of each removal).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// An enter probe.
    pub enter_ns: f64,
    /// A leave probe.
    pub leave_ns: f64,
    /// Any other event probe (messages, locks, collectives, marks).
    pub event_ns: f64,
    /// Standard deviation of one probe's cost.
    pub sd_ns: f64,
}

impl Costs {
    /// The same cost for every probe.
    pub fn uniform(ns: f64) -> Costs {
        Costs {
            enter_ns: ns,
            leave_ns: ns,
            event_ns: ns,
            sd_ns: 0.0,
        }
    }

    /// The costs a process measured at start-up in its own mode, if it
    /// recorded them.
    pub fn calibrated(p: &Process) -> Option<Costs> {
        let mode = p.info.as_ref().map_or(Mode::Trace, |i| i.mode);
        let pick = |probe: Probe| {
            let mine = p.calibration.iter().filter(|c| c.probe == probe);
            mine.clone()
                .find(|c| c.mode == mode)
                .or_else(|| mine.clone().find(|c| c.mode.traces()))
                .copied()
        };
        let (enter, leave) = (pick(Probe::Enter)?, pick(Probe::Leave)?);
        let event = pick(Probe::Event).unwrap_or(enter);
        Some(Costs {
            enter_ns: enter.mean_ns,
            leave_ns: leave.mean_ns,
            event_ns: event.mean_ns,
            sd_ns: enter.sd_ns.max(leave.sd_ns).max(event.sd_ns),
        })
    }

    /// The cost of the probe that recorded `e`. The runtime's own flush
    /// events cost nothing here: the whole flush is removed.
    pub fn of(&self, e: &EventKind) -> f64 {
        match e {
            EventKind::Enter { .. } => self.enter_ns,
            EventKind::Leave { .. } => self.leave_ns,
            EventKind::FlushBegin | EventKind::FlushEnd => 0.0,
            _ => self.event_ns,
        }
    }
}
