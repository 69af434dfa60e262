//! The profile report (`parallax report`, and after `parallax run` and
//! `demo`): the experiment's header, the concurrency profile, flat and
//! call-path profiles in total and per location.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use parallax_analysis::concurrency::Concurrency;
use parallax_model::defs::Probe;
use parallax_model::experiment::{Experiment, Process, CLOCK_PROPERTY};
use parallax_output::text::inert;
use parallax_view::names::{kind_label, LocationNames};
use parallax_view::profile::{ExperimentProfile, FlatRow, LocationProfile, PathRow, Source};

use super::fmt;
use super::wrap::{wrap, wrap_words, WIDTH};
use crate::term::Paint;

/// What the profile report shows besides the profiles, and how much.
pub struct Context {
    /// Rows per table.
    pub top: usize,
    /// Whether each location has a section.
    pub per_location: bool,
    /// How the run ended, when its manifest says.
    pub status: Option<String>,
    /// The concurrency profile, where the experiment has traces.
    pub concurrency: Option<Concurrency>,
}

/// columns wide, in the styles of `paint`.
pub fn text(exp: &Experiment, prof: &ExperimentProfile, more: &Context, paint: Paint) -> String {
    let (top, per_location) = (more.top, more.per_location);
    let names = LocationNames::new(exp);
    let mut s = String::new();
    summary(&mut s, exp, prof, more.status.as_deref());
    if let Some(c) = &more.concurrency {
        let hist: Vec<String> = (0..=c.locations)
            .filter(|&k| c.cu(k) >= 0.0005)
            .map(|k| format!("{k}: {:.1}%", 100.0 * c.cu(k)))
            .collect();
        let head = format!(
            "Concurrency CEFF {:.1}%, CAVG {:.2} of {} locations busy; time with k busy:",
            100.0 * c.ceff(),
            c.cavg(),
            c.locations,
        );
        wrap(&mut s, &head, &hist, 12);
    }
    let all = Whole::of(prof.locations.iter(), "(all locations)");
    let _ = writeln!(
        s,
        "\n{}",
        paint.bold("Flat profile, all locations (sorted by exclusive time)")
    );
    flat_table(&mut s, &paint, &all, &prof.flat_total(exp), top);
    let _ = writeln!(s, "\n{}", paint.bold("Call paths, all locations"));
    path_table(&mut s, &all, &prof.paths_total(exp), top * 2);
    let calls = calls_in_all(exp, prof);
    if !calls.is_empty() {
        let _ = writeln!(
            s,
            "\n{}",
            paint.bold("Calls not all recorded (throttled, beyond the depth limit, recording off)")
        );
        let _ = writeln!(s, "{:>14} {:>14}  region", "recorded", "in all");
        for c in calls.iter().take(top) {
            let _ = writeln!(
                s,
                "{:>14} {:>14}  {}",
                fmt::count(c.recorded),
                fmt::count(c.all),
                fmt::fit(&inert(&c.region), WIDTH - 31)
            );
        }
        if calls.len() > top {
            let _ = writeln!(s, "{:>31}… {} more", "", calls.len() - top);
        }
    }
    if per_location {
        for (i, l) in prof.locations.iter().enumerate() {
            let src = match l.source {
                Source::Runtime => "runtime profile",
                Source::Trace => "derived from the trace",
            };
            let head = format!("Location {}", inert(&names.label(l.rank, l.thread)));
            let _ = writeln!(
                s,
                "\n{} {}",
                paint.bold(&head),
                paint.dim(&format!("({src})"))
            );
            let whole = Whole::of(std::iter::once(l), "(whole location)");
            flat_table(&mut s, &paint, &whole, &prof.flat_location(exp, i), top);
            path_table(&mut s, &whole, &prof.paths_location(exp, i), top);
        }
    }
    for w in &prof.warnings {
        // Warnings are wrapped, never cut: every word of them matters.
        let words: Vec<String> = inert(w).split(' ').map(str::to_string).collect();
        let mut body = String::new();
        wrap_words(&mut body, "warning:", &words, 9);
        let body = body.replacen("warning:", &paint.warn("warning:"), 1);
        let _ = write!(s, "\n{body}");
    }
    s
}

/// The experiment's header: what ran, how it ended, what the probes cost.
fn summary(s: &mut String, exp: &Experiment, prof: &ExperimentProfile, status: Option<&str>) {
    let nloc: usize = exp.processes.iter().map(|p| p.locations.len()).sum();
    let _ = writeln!(
        s,
        "Experiment  {}\n            {} process{}, {} location{}",
        fmt::fit(&exp.dir.display().to_string(), WIDTH - 12),
        exp.processes.len(),
        if exp.processes.len() == 1 { "" } else { "es" },
        nloc,
        if nloc == 1 { "" } else { "s" }
    );
    if let Some(info) = exp.processes.first().and_then(|p| p.info.as_ref()) {
        let mut cmd = info.program.clone();
        for a in &info.args {
            cmd.push(' ');
            cmd.push_str(a);
        }
        let _ = writeln!(s, "Program     {}", fmt::fit(&cmd, WIDTH - 12));
        let _ = writeln!(
            s,
            "Mode        {} (Parallax {}, host {})",
            info.mode.name(),
            inert(&info.version),
            inert(&info.host)
        );
    }
    if let Some(state) = status {
        let _ = writeln!(s, "Status      {}", fmt::fit(state, WIDTH - 12));
    }
    let killed = exp.processes.iter().filter(|p| p.killed()).count();
    let unfinished = exp
        .processes
        .iter()
        .filter(|p| p.end_unix_ns.is_none() && !p.killed())
        .count();
    if killed > 0 {
        let _ = writeln!(
            s,
            "Note        {killed} process(es) were killed while measuring: every event they recorded\n            up to then is kept (from their spill files)"
        );
    }
    if unfinished > 0 {
        let _ = writeln!(
            s,
            "Note        {unfinished} process(es) did not finish measuring cleanly (crash or kill):\n            data up to the last written block"
        );
    }
    let untraced: u64 = exp
        .processes
        .iter()
        .flat_map(|p| p.unrecorded.values())
        .map(|u| u.threads)
        .sum();
    if untraced > 0 {
        let _ = writeln!(
            s,
            "Note        {untraced} thread(s) were not traced: the profiles below leave them out (see the\n            warnings at the end)"
        );
    }
    if let Some(p) = exp.processes.first() {
        probe_costs(s, p);
    }
    let wall: f64 = prof
        .locations
        .iter()
        .flat_map(|l| {
            l.tree
                .nodes
                .iter()
                .filter(|n| n.parent.is_none())
                .map(move |n| n.stats.inclusive as f64 * l.clock.ns_per_tick)
        })
        .fold(0.0, f64::max);
    let _ = writeln!(s, "Longest top-level region  {}", fmt::ns(wall));
}

/// The clock and what the probes of process `p` cost.
fn probe_costs(s: &mut String, p: &Process) {
    let ghz = 1.0 / p.clock.ns_per_tick;
    let cal = |probe: Probe| p.calibration.iter().find(|c| c.probe == probe);
    let mut lines = Vec::new();
    for probes in [
        &[Probe::Enter, Probe::Leave, Probe::Event, Probe::ClockRead][..],
        &[Probe::HookPair, Probe::HookSkipped][..],
    ] {
        let mut line = String::new();
        for &probe in probes {
            if let Some(c) = cal(probe) {
                let _ = write!(line, "{} {:.1}±{:.1}  ", probe.name(), c.mean_ns, c.sd_ns);
            }
        }
        if !line.is_empty() {
            lines.push(line);
        }
    }
    for (what, min, max) in [
        (
            "hook_pair",
            Probe::HookPairInContextMin,
            Probe::HookPairInContextMax,
        ),
        (
            "hook_skipped",
            Probe::HookSkippedInContextMin,
            Probe::HookSkippedInContextMax,
        ),
    ] {
        if let (Some(lo), Some(hi), Some(last)) = (cal(min), cal(max), lines.last_mut()) {
            let _ = write!(
                last,
                "{what} in place {:.1}-{:.1}  ",
                lo.mean_ns, hi.mean_ns
            );
        }
    }
    let clock = match p.properties.iter().find(|(k, _)| k == CLOCK_PROPERTY) {
        Some((_, name)) => name.clone(),
        None => format!("{:?}", p.clock_source),
    };
    let _ = writeln!(s, "Clock       {clock}, {ghz:.3} GHz");
    if let Some(last) = lines.last_mut() {
        last.push_str("(ns, at start)");
    }
    let runs = &p.skipped_in_run;
    let calls: u64 = runs.iter().map(|r| r.calls).sum();
    if calls > 0 {
        let ps: f64 = runs.iter().map(|r| r.calls as f64 * r.ps as f64).sum();
        lines.push(format!(
            "hook_skipped timed in the run {:.1} ns (over {} calls, {} samples)",
            ps / calls as f64 / 1000.0,
            fmt::count(calls),
            runs.len()
        ));
    }
    if let Some(line) = speed_line(p, cal(Probe::Disabled).map(|c| c.mean_ns)) {
        lines.push(line);
    }
    for (i, line) in lines.iter().enumerate() {
        let head = if i == 0 {
            "Probe cost  "
        } else {
            "            "
        };
        let _ = writeln!(s, "{head}{}", fmt::fit(line, WIDTH - 12));
    }
}

/// How fast the process's cores ran in the run against calibration (see
/// [`parallax_model::defs::Def::SpeedInRun`]): the fastest and slowest
/// window's time of a disabled probe against `calibrated_ns`, the
/// start-up calibration's.
fn speed_line(p: &Process, calibrated_ns: Option<f64>) -> Option<String> {
    let calibrated_ns = calibrated_ns.filter(|&c| c > 0.0)?;
    let windows = &p.speed_in_run;
    let ns: Vec<f64> = windows
        .iter()
        .map(|w| w.check_ns(p.clock.ns_per_tick))
        .collect();
    if ns.is_empty() {
        return None;
    }
    let lo = ns.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = ns.iter().cloned().fold(0.0, f64::max);
    Some(format!(
        "speed in the run: disabled probe {:.2}-{:.2} ns, {:.2}-{:.2}x calibrated ({} windows)",
        lo,
        hi,
        lo / calibrated_ns,
        hi / calibrated_ns,
        windows.len()
    ))
}

/// The whole time of one location or of several, which a table's shares
/// are of: their measured time, and the part outside recorded regions.
pub struct Whole {
    label: &'static str,
    /// Measured time, ns (time in regions where it is unknown).
    pub ns: f64,
    /// Time outside any recorded region, ns.
    pub outside_ns: f64,
    /// Locations whose measured time is unknown (only a profile of a
    /// thread other than the initial one).
    unknown: usize,
}

impl Whole {
    /// The whole of `locs`, labelled `label` in tables.
    pub fn of<'a>(locs: impl Iterator<Item = &'a LocationProfile>, label: &'static str) -> Whole {
        let mut w = Whole {
            label,
            ns: 0.0,
            outside_ns: 0.0,
            unknown: 0,
        };
        for l in locs {
            w.ns += l.whole_ns();
            w.outside_ns += l.outside_ns();
            w.unknown += usize::from(l.measured_ns.is_none());
        }
        w
    }

    fn share(&self, ns: f64) -> f64 {
        if self.ns > 0.0 {
            100.0 * ns / self.ns
        } else {
            0.0
        }
    }
}

/// Label of the time outside any recorded region.
pub const OUTSIDE: &str = "(outside recorded regions)";

/// Columns: excl% 6, exclusive 10, inclusive 10, calls 11, mean 10, sd
/// 10, kind 13, then the region in what is left of [`WIDTH`]. The first
/// rows are the whole measured time and the time outside any recorded
/// region (labelled from the kind column on, which they leave empty);
/// shares are of the whole.
fn flat_table(s: &mut String, paint: &Paint, whole: &Whole, rows: &[FlatRow], top: usize) {
    const REGION: usize = WIDTH - 80;
    let head = format!(
        "  {:>6} {:>10} {:>10} {:>11} {:>10} {:>10}  {:<13} region",
        "excl%", "exclusive", "inclusive", "calls", "mean", "sd", "kind"
    );
    let _ = writeln!(s, "{}", paint.dim(&head));
    let _ = writeln!(
        s,
        "  {:>6} {:>10} {:>10} {:>11} {:>10} {:>10}  {}",
        "100.0%",
        "",
        fmt::ns(whole.ns),
        "",
        "",
        "",
        whole.label
    );
    if whole.unknown > 0 {
        let _ = writeln!(
            s,
            "  {}",
            paint.dim(&format!(
                "(measured time unknown for {} location(s) with only a profile: their time \
                 in regions stands for it)",
                whole.unknown
            ))
        );
    }
    let pct = whole.share(whole.outside_ns);
    let _ = writeln!(
        s,
        "  {} {:>10} {:>10} {:>11} {:>10} {:>10}  {}",
        paint.share(pct, &format!("{pct:>5.1}%")),
        fmt::ns(whole.outside_ns),
        fmt::ns(whole.outside_ns),
        "",
        "",
        "",
        OUTSIDE
    );
    for r in rows.iter().take(top) {
        let t = &r.times;
        let pct = whole.share(t.exclusive);
        let _ = writeln!(
            s,
            "  {} {:>10} {:>10} {:>11} {:>10} {:>10}  {:<13} {}",
            paint.share(pct, &format!("{pct:>5.1}%")),
            fmt::ns(t.exclusive),
            fmt::ns(t.inclusive),
            fmt::count(t.count),
            fmt::ns(t.mean()),
            fmt::ns(t.std_dev()),
            r.kind.map_or("", |k| kind_label(k, &r.region)),
            fmt::fit(&r.region, REGION)
        );
    }
    if rows.len() > top {
        let _ = writeln!(
            s,
            "  ... {} more regions (--top N shows more)",
            rows.len() - top
        );
    }
}

/// The call paths under a root row of the whole measured time (its
/// exclusive time is the time outside any recorded region).
fn path_table(s: &mut String, whole: &Whole, rows: &[PathRow], top: usize) {
    let _ = writeln!(
        s,
        "  {:>11} {:>11} {:>11} {:>5}  call path",
        "inclusive", "exclusive", "calls", "locs"
    );
    let _ = writeln!(
        s,
        "  {:>11} {:>11} {:>11} {:>5}  {}",
        fmt::ns(whole.ns),
        fmt::ns(whole.outside_ns),
        "",
        "",
        whole.label
    );
    for r in rows.iter().take(top) {
        let name = r.region.as_str();
        let indent = "  ".repeat(r.depth.min(20) + 1);
        let _ = writeln!(
            s,
            "  {:>11} {:>11} {:>11} {:>5}  {}{}",
            fmt::ns(r.times.inclusive),
            fmt::ns(r.times.exclusive),
            fmt::count(r.times.count),
            r.locations,
            indent,
            fmt::fit(name, (WIDTH - 45).saturating_sub(indent.len()).max(12))
        );
    }
    if rows.len() > top {
        let _ = writeln!(s, "  ... {} more call paths", rows.len() - top);
    }
}

/// A compiler-instrumented function's calls, summed over the locations.
pub struct Calls {
    /// The function.
    pub region: String,
    /// Its calls recorded.
    pub recorded: u64,
    /// Its calls in all.
    pub all: u64,
}

/// The functions that some location called more often than it recorded
/// (the runtime's `Calls` records), most calls first.
pub fn calls_in_all(exp: &Experiment, prof: &ExperimentProfile) -> Vec<Calls> {
    let mut unrecorded: BTreeMap<String, u64> = BTreeMap::new();
    for (i, l) in prof.locations.iter().enumerate() {
        let p = &exp.processes[l.process];
        let mut flat = None;
        for (&(_, r), &all) in p.calls.range((l.thread, 0)..=(l.thread, u32::MAX)) {
            let name = p.region_name(r);
            let rows = flat.get_or_insert_with(|| prof.flat_location(exp, i));
            let recorded = rows
                .iter()
                .find(|x| x.region == name)
                .map_or(0, |x| x.times.count);
            *unrecorded.entry(name).or_default() += all.saturating_sub(recorded);
        }
    }
    let total = if unrecorded.is_empty() {
        Vec::new()
    } else {
        prof.flat_total(exp)
    };
    let mut v: Vec<Calls> = unrecorded
        .into_iter()
        .map(|(region, more)| {
            let recorded = total
                .iter()
                .find(|x| x.region == region)
                .map_or(0, |x| x.times.count);
            Calls {
                region,
                recorded,
                all: recorded + more,
            }
        })
        .collect();
    v.sort_by(|a, b| b.all.cmp(&a.all).then_with(|| a.region.cmp(&b.region)));
    v
}
