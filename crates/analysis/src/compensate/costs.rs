//! The probe costs (α) that compensation removes, per event kind.

use parallax_model::defs::{Entry, Mode, Probe};
use std::sync::Arc;

use parallax_model::event::{Event, EventKind, RegionId};
use parallax_model::experiment::{Calibration, Process, SkippedInRun, SpeedInRun};

/// What one probe costs, ns: the mean of the runtime's calibrations, and
/// its standard deviation (the uncertainty of each removal).
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// An enter probe (mean over the run).
    pub enter_ns: f64,
    /// A leave probe (mean over the run).
    pub leave_ns: f64,
    /// Any other event probe (messages, locks, collectives, marks).
    pub event_ns: f64,
    /// Standard deviation of one probe's cost.
    pub sd_ns: f64,
    /// How far a probe's cost in a program may stray from its calibration:
    /// the least and the greatest ratio of a probe pair's cost inside
    /// loops of different kinds of work to its calibrated cost
    /// (`PairInContextMin`/`Max`), if measured.
    pub context: Option<(f64, f64)>,
    /// How each region (by id, below [`DENSE_REGIONS`]) is entered, by
    /// [`Entry`] number.
    pub regions: Arc<[u8]>,
    /// The same for larger ids, ascending by id (a table by id would be as
    /// large as the largest id a file names).
    pub far_regions: Arc<[(RegionId, u8)]>,
    /// The costs of each calibration, from the tick on where it is the
    /// nearest in time (at least one).
    pub phases: Arc<[Phase]>,
    /// The phase of the last event asked about.
    phase: usize,
    /// What calls that recorded nothing cost in place, timed in the run,
    /// by thread and tick ([`InRun`]).
    pub in_run: Arc<[InRun]>,
    /// The part of `in_run` of the location these costs are for
    /// ([`Costs::for_thread`]), and the sample of the last event asked
    /// about within it.
    own: std::ops::Range<usize>,
    at: usize,
    /// How fast the cores ran the calibration's disabled-probe loop in the
    /// run, by thread and tick ([`Speed`]), and the part of it of this
    /// location.
    pub speed: Arc<[Speed]>,
    own_speed: std::ops::Range<usize>,
    /// The time of the last event asked about.
    tick: u64,
}

/// How fast a thread's core ran, timed in the run: one disabled-probe
/// check took `ns` on average in the window up to `tick` (see
/// [`SpeedInRun`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    /// The thread's number.
    pub thread: u32,
    /// The last tick of its window.
    pub tick: u64,
    /// One check, ns.
    pub ns: f64,
}

impl Speed {
    fn of(s: &SpeedInRun, ns_per_tick: f64) -> Speed {
        Speed {
            thread: s.thread,
            tick: s.tick,
            ns: s.check_ns(ns_per_tick),
        }
    }
}

/// A core's speed against its calibration's is taken within these bounds
/// (a window the operating system interrupted says nothing of the
/// probes).
const SPEED_BOUNDS: (f64, f64) = (0.33, 3.0);

/// What a call whose hooks recorded nothing cost a thread in place, up to
/// a tick, timed in the run (see [`SkippedInRun`]): the work done twice
/// in the timing's blocks shared among the calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InRun {
    /// The thread's number.
    pub thread: u32,
    /// The last tick it covers.
    pub tick: u64,
    /// The calls it covers.
    pub calls: u64,
    /// One call's cost, ns.
    pub ns: f64,
}

impl InRun {
    /// The mean cost of `samples` by their calls, if they cover any.
    fn mean(samples: &[InRun]) -> Option<f64> {
        let calls: u64 = samples.iter().map(|r| r.calls).sum();
        let cost: f64 = samples.iter().map(|r| r.calls as f64 * r.ns).sum();
        (calls > 0).then(|| cost / calls as f64)
    }

    fn of(s: &SkippedInRun) -> InRun {
        let share = (s.calls + s.decoys) as f64 / s.calls.max(1) as f64;
        InRun {
            thread: s.thread,
            tick: s.tick,
            calls: s.calls,
            ns: s.ps as f64 / 1000.0 * share,
        }
    }
}

/// Region ids below this have their entry in a table by id.
pub const DENSE_REGIONS: RegionId = 1 << 20;

/// Probe costs that apply from a tick on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// First tick.
    pub from_tick: u64,
    /// Enter and leave probes of each [`Entry`], by its number.
    pub entry_ns: [(f64, f64); Entry::ALL.len()],
    /// Any other event probe.
    pub event_ns: f64,
    /// One call whose compiler hooks recorded nothing
    /// ([`EventKind::Skipped`]), in place ([`in_place`]).
    pub skipped_ns: f64,
    /// One check of a disabled probe, the yardstick of the core's speed
    /// ([`Speed`]); 0 if not calibrated.
    pub disabled_ns: f64,
}

impl Costs {
    /// How much shorter and how much longer a time from which `removed_ns`
    /// of probe cost was taken would be if those probes had cost what a
    /// pair costs in the dearest and in the cheapest context
    /// ([`Costs::context`]); `None` without that measurement.
    pub fn context_range(&self, removed_ns: f64) -> Option<(f64, f64)> {
        self.context.map(|ratios| context_range(ratios, removed_ns))
    }
    /// The same cost for every probe.
    pub fn uniform(ns: f64) -> Costs {
        Costs::per_kind(ns, ns, ns)
    }

    /// These costs of enters, leaves and other events, whatever the entry
    /// and the time.
    pub fn per_kind(enter_ns: f64, leave_ns: f64, event_ns: f64) -> Costs {
        Costs {
            enter_ns,
            leave_ns,
            event_ns,
            sd_ns: 0.0,
            context: None,
            regions: Arc::new([]),
            far_regions: Arc::new([]),
            phases: Arc::new([Phase {
                from_tick: 0,
                entry_ns: [(enter_ns, leave_ns); Entry::ALL.len()],
                event_ns,
                skipped_ns: 0.0,
                disabled_ns: 0.0,
            }]),
            phase: 0,
            in_run: Arc::new([]),
            own: 0..0,
            at: 0,
            speed: Arc::new([]),
            own_speed: 0..0,
            tick: 0,
        }
    }

    /// These costs for location `thread` of their process: its calls that
    /// recorded nothing cost what the run timed on it, where it did.
    pub fn for_thread(mut self, thread: u32) -> Costs {
        let start = self.in_run.partition_point(|r| r.thread < thread);
        let end = self.in_run.partition_point(|r| r.thread <= thread);
        self.own = start..end;
        self.at = start;
        let start = self.speed.partition_point(|r| r.thread < thread);
        let end = self.speed.partition_point(|r| r.thread <= thread);
        self.own_speed = start..end;
        self
    }

    /// The costs a process measured in its own mode, if it recorded them:
    /// each calibration (at start-up, at the end of a measurement that
    /// finished cleanly, and whenever the program asked for one) applies
    /// to the events nearest to it in time.
    pub fn calibrated(p: &Process) -> Option<Costs> {
        let mode = p.info.as_ref().map_or(Mode::Trace, |i| i.mode);
        let in_context =
            |c: &&Calibration| matches!(c.probe, Probe::PairInContextMin | Probe::PairInContextMax);
        let own: Vec<&Calibration> = p
            .calibration
            .iter()
            .filter(|c| c.mode == mode && !in_context(c))
            .collect();
        let cal: Vec<&Calibration> = if own.is_empty() {
            // Another mode's, as long as it traced: the first measurement.
            let first = p.calibration.iter().find(|c| c.mode.traces())?;
            p.calibration
                .iter()
                .filter(|c| c.mode == first.mode && c.tick == first.tick)
                .collect()
        } else {
            own
        };
        // A calibration is the probes timed together; the loops timed
        // right after it (the hooks in context) belong to it, not to a
        // phase of their own.
        let mut ticks: Vec<u64> = cal
            .iter()
            .filter(|c| c.probe == Probe::Enter)
            .map(|c| c.tick)
            .collect();
        ticks.sort_unstable();
        ticks.dedup();
        let owner = |t: u64| {
            let i = ticks.partition_point(|&m| m <= t);
            ticks[i.saturating_sub(1)]
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let mut phases = Vec::new();
        for (i, &tick) in ticks.iter().enumerate() {
            // A probe that this calibration could not time (the hooks, at
            // the process's exit) costs what the others measured.
            let at = |probe: Probe| {
                cal.iter()
                    .find(|c| c.probe == probe && owner(c.tick) == tick)
                    .map(|c| c.mean_ns)
                    .or_else(|| {
                        let all: Vec<f64> = cal
                            .iter()
                            .filter(|c| c.probe == probe)
                            .map(|c| c.mean_ns)
                            .collect();
                        (!all.is_empty()).then(|| mean(&all))
                    })
            };
            let (Some(enter), Some(leave)) = (at(Probe::Enter), at(Probe::Leave)) else {
                continue;
            };
            let mut entry_ns = [(enter, leave); Entry::ALL.len()];
            for entry in Entry::ALL {
                let (e, l) = entry.probes();
                entry_ns[entry as usize] = (at(e).unwrap_or(enter), at(l).unwrap_or(leave));
            }
            // Compiler hooks: what a recorded call costs in place, shared
            // between entry and exit as calibrated alone.
            let hook = &mut entry_ns[Entry::Hook as usize];
            let alone = hook.0 + hook.1;
            let range = at(Probe::HookPairInContextMin).zip(at(Probe::HookPairInContextMax));
            if alone > 0.0 && range.is_some() {
                let k = in_place(Some(alone), range) / alone;
                *hook = (hook.0 * k, hook.1 * k);
            }
            phases.push(Phase {
                from_tick: if i == 0 {
                    0
                } else {
                    ticks[i - 1] + (tick - ticks[i - 1]) / 2
                },
                entry_ns,
                event_ns: at(Probe::Event).unwrap_or(enter),
                skipped_ns: in_place(
                    at(Probe::HookSkipped),
                    at(Probe::HookSkippedInContextMin).zip(at(Probe::HookSkippedInContextMax)),
                ),
                disabled_ns: at(Probe::Disabled).unwrap_or(0.0),
            });
        }
        if phases.is_empty() {
            return None;
        }
        let top = p
            .entries
            .range(..DENSE_REGIONS)
            .next_back()
            .map_or(0, |(&r, _)| r as usize + 1);
        let mut regions = vec![Entry::Guard as u8; top];
        let mut far_regions = Vec::new();
        for (&r, &entry) in &p.entries {
            match regions.get_mut(r as usize) {
                Some(x) => *x = entry as u8,
                None => far_regions.push((r, entry as u8)),
            }
        }
        let over = |f: &dyn Fn(&Phase) -> f64| mean(&phases.iter().map(f).collect::<Vec<_>>());
        // The context ratios, against the register-preserving pair they
        // timed, as calibrated nearest to them in time.
        let ratio = |probe: Probe| {
            let c = p
                .calibration
                .iter()
                .find(|c| c.probe == probe && c.mode == mode)?;
            let phase = phases.iter().rev().find(|ph| ph.from_tick <= c.tick)?;
            let (e, l) = phase.entry_ns[Entry::Preserving as usize];
            Some(c.mean_ns / (e + l)).filter(|r| r.is_finite())
        };
        let context = ratio(Probe::PairInContextMin).zip(ratio(Probe::PairInContextMax));
        Some(Costs {
            enter_ns: over(&|p| p.entry_ns[0].0),
            leave_ns: over(&|p| p.entry_ns[0].1),
            event_ns: over(&|p| p.event_ns),
            sd_ns: cal.iter().map(|c| c.sd_ns).fold(0.0, f64::max),
            context,
            regions: regions.into(),
            far_regions: far_regions.into(),
            phases: phases.into(),
            phase: 0,
            in_run: {
                let mut v: Vec<InRun> = p.skipped_in_run.iter().map(InRun::of).collect();
                v.sort_by_key(|r| (r.thread, r.tick));
                v.into()
            },
            own: 0..0,
            at: 0,
            speed: {
                let mut v: Vec<Speed> = p
                    .speed_in_run
                    .iter()
                    .map(|s| Speed::of(s, p.clock.ns_per_tick))
                    .collect();
                v.sort_by_key(|r| (r.thread, r.tick));
                v.into()
            },
            own_speed: 0..0,
            tick: 0,
        })
    }

    /// A visit's enter and leave probes of region `r`, ns, over the run
    /// (the mean of the calibrations): what a profile's visit removes.
    pub fn pair_ns(&self, r: RegionId) -> f64 {
        let e = self.entry(r) as usize;
        self.mean_over_phases(|p| p.entry_ns[e].0 + p.entry_ns[e].1)
    }

    /// One call whose hooks recorded nothing, ns, over the run: as timed
    /// in the run where it was (the mean over its samples by calls), else
    /// as calibrated.
    pub fn skipped_ns(&self) -> f64 {
        InRun::mean(&self.in_run).unwrap_or_else(|| self.mean_over_phases(|p| p.skipped_ns))
    }

    fn mean_over_phases(&self, f: impl Fn(&Phase) -> f64) -> f64 {
        self.phases.iter().map(f).sum::<f64>() / self.phases.len().max(1) as f64
    }

    /// What one call whose hooks recorded nothing cost in place, ns, over
    /// the stretch from the last event asked about ([`Costs::of`]) to tick
    /// `to`: as timed in the run on this location if it was
    /// ([`Costs::for_thread`]), the mean of the samples that cover the
    /// stretch by their calls; else by the calibration of that event.
    pub fn skipped_until(&mut self, to: u64) -> f64 {
        if self.own.is_empty() {
            return self.phases[self.phase].skipped_ns;
        }
        // Sample i covers the ticks after sample i - 1's up to its own.
        while self.at + 1 < self.own.end && self.in_run[self.at].tick < self.tick {
            self.at += 1;
        }
        let covering = &self.in_run[self.at..self.own.end];
        let last = covering
            .iter()
            .position(|r| r.tick >= to)
            .unwrap_or(covering.len() - 1);
        InRun::mean(&covering[..=last]).unwrap_or(covering[0].ns)
    }

    /// Whether region `r` is entered through the runtime's own guards (not
    /// through the C entry points or the register-preserving probes).
    pub fn guarded(&self, r: RegionId) -> bool {
        self.entry(r) == Entry::Guard as u8
    }

    /// How region `r` is entered, by [`Entry`] number.
    #[inline]
    pub fn entry(&self, r: RegionId) -> u8 {
        match self.regions.get(r as usize) {
            Some(&x) => x,
            None if self.far_regions.is_empty() => Entry::Guard as u8,
            None => self
                .far_regions
                .binary_search_by_key(&r, |f| f.0)
                .map_or(Entry::Guard as u8, |i| self.far_regions[i].1),
        }
    }

    /// The cost of the probe that recorded `e`, from the calibration
    /// nearest in time (events come in time order on a location). The
    /// runtime's own flush events cost nothing here: the whole flush is
    /// removed.
    #[inline]
    pub fn of(&mut self, e: &Event) -> f64 {
        while self.phase + 1 < self.phases.len() && e.time >= self.phases[self.phase + 1].from_tick
        {
            self.phase += 1;
        }
        self.tick = e.time;
        let ph = &self.phases[self.phase];
        let entry = |r: RegionId| self.entry(r) as usize;
        match e.kind {
            EventKind::Enter { region } => ph.entry_ns[entry(region)].0,
            EventKind::Leave { region } => ph.entry_ns[entry(region)].1,
            EventKind::FlushBegin | EventKind::FlushEnd => 0.0,
            // The calls it counts lie in the stretch after it: their cost
            // depends on that stretch ([`Costs::skipped_in_place`]).
            EventKind::Skipped { .. } => 0.0,
            _ => ph.event_ns,
        }
    }

    /// How much shorter and how much longer a time from which `removed_ns`
    /// of probe cost was taken would be if every probe had cost its
    /// calibration scaled by the fastest and by the slowest speed this
    /// location's core ran at in the run (the 5th and 95th percentiles of
    /// its [`Speed`] windows against the calibration nearest in time);
    /// `None` without three windows.
    pub fn speed_range(&self, removed_ns: f64) -> Option<(f64, f64)> {
        let own = &self.speed[self.own_speed.clone()];
        let mut ratios: Vec<f64> = own
            .iter()
            .filter_map(|s| {
                let ph = self.phases.iter().rev().find(|p| p.from_tick <= s.tick)?;
                (ph.disabled_ns > 0.0).then(|| s.ns / ph.disabled_ns)
            })
            .map(|r| r.clamp(SPEED_BOUNDS.0, SPEED_BOUNDS.1))
            .collect();
        if ratios.len() < 3 {
            return None;
        }
        ratios.sort_by(f64::total_cmp);
        let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
        Some(context_range((at(0.05), at(0.95)), removed_ns))
    }
}

/// What a call of an instrumented function costs in place, ns, from its
/// cost alone (back-to-back calls) and in loops of different kinds of work
/// (the cheapest and the dearest kind): the middle of the loops' range.
/// The hooks' work depends on nothing the program computes, so the
/// processor runs it beside the program's own: in place it costs a
/// fraction of its cost alone, and that fraction does not grow with the
/// work around it (the processor looks only so far ahead). Never more than
/// alone; the cost alone where the loops were not timed.
pub fn in_place(alone: Option<f64>, in_context: Option<(f64, f64)>) -> f64 {
    let alone = alone.unwrap_or(0.0).max(0.0);
    match in_context {
        Some((lo, hi)) => ((lo.max(0.0) + hi.max(0.0)) / 2.0).min(alone),
        None => alone,
    }
}

/// [`Costs::context_range`] for the context ratios `(lo, hi)`.
pub fn context_range((lo, hi): (f64, f64), removed_ns: f64) -> (f64, f64) {
    (
        removed_ns * (hi - 1.0).max(0.0),
        removed_ns * (1.0 - lo).max(0.0),
    )
}

/// Whether the runtime records an event of kind `k` right after entering
/// the region of its operation, with nothing of the program between: a
/// lock request or release, the start of a collective or barrier, a
/// semaphore post, an advance. The measured time from that enter to the
/// event is the enter probe's cost in place, where both are the Rust
/// runtime's own probes (`Costs::guarded`): the C entry points of the
/// interposition library do more work around an event than around an
/// enter.
pub(super) fn follows_its_enter(k: &EventKind) -> bool {
    matches!(
        k,
        EventKind::LockRequest { .. }
            | EventKind::LockRelease { .. }
            | EventKind::CollectiveBegin
            | EventKind::SemPost { .. }
            | EventKind::Advance { .. }
    )
}

/// The probes' cost in place against their calibration, from the enters
/// whose next event follows with nothing between (`follows_its_enter`):
/// the running median of measured over calibrated cost, tracked a small
/// step at a time. This machine's cores change speed from minute to
/// minute and differ from each other (a fenced probe cost 56, 67 and
/// 77 ns within an hour on one core, and 56 and 70 ns on two threads of
/// one run), so a calibration at start-up or between runs can be off by
/// a fifth for a thread; a location with such pairs follows its own.
#[derive(Clone, Copy, Debug)]
pub(super) struct InContext {
    pub(super) ratio: f64,
    /// The first samples, whose median starts the ratio.
    first: [f64; InContext::FIRST],
    seen: usize,
}

impl Default for InContext {
    fn default() -> InContext {
        InContext {
            ratio: 1.0,
            first: [0.0; InContext::FIRST],
            seen: 0,
        }
    }
}

impl InContext {
    const FIRST: usize = 9;
    /// Step of the running median after the first samples.
    const STEP: f64 = 0.004;
    /// The ratio stays within these bounds.
    const BOUNDS: (f64, f64) = (0.5, 2.0);

    pub(super) fn sample(&mut self, r: f64) {
        if !r.is_finite() {
            return;
        }
        if self.seen < Self::FIRST {
            self.first[self.seen] = r;
            self.seen += 1;
            let mut v = self.first;
            let v = &mut v[..self.seen];
            v.sort_by(f64::total_cmp);
            self.ratio = v[v.len() / 2];
        } else if r > self.ratio {
            self.ratio += Self::STEP;
        } else if r < self.ratio {
            self.ratio -= Self::STEP;
        }
        self.ratio = self.ratio.clamp(Self::BOUNDS.0, Self::BOUNDS.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_cost_the_middle_of_their_range_in_place() {
        assert_eq!(in_place(Some(5.0), Some((0.0, 1.0))), 0.5);
        // Never more than alone, never less than nothing.
        assert_eq!(in_place(Some(5.0), Some((4.0, 12.0))), 5.0);
        assert_eq!(in_place(Some(5.0), Some((-2.0, -1.0))), 0.0);
        // Loops not timed: the cost alone.
        assert_eq!(in_place(Some(5.0), None), 5.0);
        assert_eq!(in_place(None, None), 0.0);
    }
}
