//! The probe costs (α) that compensation removes, per event kind.

use parallax_model::defs::{Mode, Probe};
use std::sync::Arc;

use parallax_model::event::{EventKind, RegionId};
use parallax_model::experiment::Process;

/// What one probe costs, ns: the mean of the runtime's calibration, and
/// its standard deviation (the uncertainty of each removal).
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// An enter probe.
    pub enter_ns: f64,
    /// A leave probe.
    pub leave_ns: f64,
    /// Any other event probe (messages, locks, collectives, marks).
    pub event_ns: f64,
    /// Standard deviation of one probe's cost.
    pub sd_ns: f64,
    /// An enter probe through the C entry points.
    pub c_enter_ns: f64,
    /// A leave probe through the C entry points.
    pub c_leave_ns: f64,
    /// Whether a region (by id) is entered through the C entry points.
    pub c_regions: Arc<[bool]>,
}

impl Costs {
    /// The same cost for every probe.
    pub fn uniform(ns: f64) -> Costs {
        Costs {
            enter_ns: ns,
            leave_ns: ns,
            event_ns: ns,
            sd_ns: 0.0,
            c_enter_ns: ns,
            c_leave_ns: ns,
            c_regions: Arc::new([]),
        }
    }

    /// The costs a process measured in its own mode, if it recorded them:
    /// the mean of its calibrations (at start-up, and at the end of a
    /// measurement that finished cleanly).
    pub fn calibrated(p: &Process) -> Option<Costs> {
        let mode = p.info.as_ref().map_or(Mode::Trace, |i| i.mode);
        let mine = |probe: Probe| p.calibration.iter().filter(move |c| c.probe == probe);
        let pick = |probe: Probe| {
            let own: Vec<_> = mine(probe).filter(|c| c.mode == mode).collect();
            let all = if own.is_empty() {
                mine(probe).filter(|c| c.mode.traces()).take(1).collect()
            } else {
                own
            };
            (!all.is_empty()).then(|| {
                let n = all.len() as f64;
                (
                    all.iter().map(|c| c.mean_ns).sum::<f64>() / n,
                    all.iter().map(|c| c.sd_ns).fold(0.0, f64::max),
                )
            })
        };
        let (enter, leave) = (pick(Probe::Enter)?, pick(Probe::Leave)?);
        let event = pick(Probe::Event).unwrap_or(enter);
        let c_enter = pick(Probe::EnterC).unwrap_or(enter);
        let c_leave = pick(Probe::LeaveC).unwrap_or(leave);
        let top = p.c_entry.iter().next_back().map_or(0, |&r| r as usize + 1);
        let mut c_regions = vec![false; top];
        for &r in &p.c_entry {
            c_regions[r as usize] = true;
        }
        Some(Costs {
            enter_ns: enter.0,
            leave_ns: leave.0,
            event_ns: event.0,
            sd_ns: [enter.1, leave.1, event.1, c_enter.1, c_leave.1]
                .into_iter()
                .fold(0.0, f64::max),
            c_enter_ns: c_enter.0,
            c_leave_ns: c_leave.0,
            c_regions: c_regions.into(),
        })
    }

    /// The cost of the probe that recorded `e`. The runtime's own flush
    /// events cost nothing here: the whole flush is removed.
    #[inline]
    pub fn of(&self, e: &EventKind) -> f64 {
        let c = |r: RegionId| self.c_regions.get(r as usize).copied().unwrap_or(false);
        match e {
            EventKind::Enter { region } if c(*region) => self.c_enter_ns,
            EventKind::Leave { region } if c(*region) => self.c_leave_ns,
            EventKind::Enter { .. } => self.enter_ns,
            EventKind::Leave { .. } => self.leave_ns,
            EventKind::FlushBegin | EventKind::FlushEnd => 0.0,
            _ => self.event_ns,
        }
    }
}
