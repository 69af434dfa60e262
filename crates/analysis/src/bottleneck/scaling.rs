//! Analyses of several experiments: scalability (parallel efficiency of the
//! run and of each region against the smallest run) and revision
//! comparison (the run and its ten longest regions), aware of run-to-run
//! noise.

use std::collections::BTreeMap;

use parallax_model::experiment::Experiment;
use parallax_model::Error;

use parallax_view::profile::ExperimentProfile;

/// What the multi-experiment analyses need of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Its directory.
    pub name: String,
    /// Processing elements: ranks if more than one, else threads.
    pub pes: u32,
    /// Wall time of the run, s.
    pub wall_s: f64,
    /// Per region: the largest inclusive time over locations, s.
    pub regions: BTreeMap<String, f64>,
}

/// Reads the figures of `exp`: wall time from the processes' start and
/// end, region times from the profiles (or the traces).
pub fn summarize(exp: &Experiment) -> Result<RunSummary, Error> {
    let prof = ExperimentProfile::load(exp)?;
    let mut regions: BTreeMap<String, f64> = BTreeMap::new();
    let mut loc_total: Vec<f64> = Vec::new();
    for i in 0..prof.locations.len() {
        let mut top = 0.0;
        for r in prof.flat_location(exp, i) {
            let e = regions.entry(r.region).or_insert(0.0);
            *e = e.max(r.times.inclusive * 1e-9);
            top += r.times.exclusive * 1e-9;
        }
        loc_total.push(top);
    }
    let mut wall = 0.0f64;
    for p in &exp.processes {
        if let (Some(info), Some(end)) = (&p.info, p.end_unix_ns) {
            wall = wall.max(end.saturating_sub(info.start_unix_ns) as f64 * 1e-9);
        }
    }
    if wall == 0.0 {
        wall = loc_total.iter().copied().fold(0.0, f64::max);
    }
    let ranks = exp.processes.len() as u32;
    let threads = exp
        .processes
        .iter()
        .map(|p| p.locations.len() as u32)
        .max()
        .unwrap_or(1);
    Ok(RunSummary {
        name: exp.dir.display().to_string(),
        pes: if ranks > 1 { ranks } else { threads.max(1) },
        wall_s: wall,
        regions,
    })
}

/// Efficiency of one run against the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalePoint {
    /// The run.
    pub name: String,
    /// Its processing elements.
    pub pes: u32,
    /// Its wall time, s.
    pub wall_s: f64,
    /// Strong scaling: p0·T0 / (p·T); 1 is ideal.
    pub efficiency: f64,
    /// Weak scaling: T0 / T; 1 is ideal.
    pub weak_efficiency: f64,
    /// Strong-scaling efficiency per region present in both.
    pub regions: BTreeMap<String, f64>,
}

/// Efficiencies of `runs` against the one with the fewest processing
/// elements (PPW's reference), in order of processing elements.
pub fn scaling(runs: &[RunSummary]) -> Vec<ScalePoint> {
    let mut runs: Vec<&RunSummary> = runs.iter().collect();
    runs.sort_by(|a, b| a.pes.cmp(&b.pes).then(a.name.cmp(&b.name)));
    let Some(r0) = runs.first().copied() else {
        return Vec::new();
    };
    let eff = |p0: u32, t0: f64, p: u32, t: f64| {
        if t > 0.0 && p > 0 {
            p0 as f64 * t0 / (p as f64 * t)
        } else {
            0.0
        }
    };
    runs.iter()
        .map(|r| ScalePoint {
            name: r.name.clone(),
            pes: r.pes,
            wall_s: r.wall_s,
            efficiency: eff(r0.pes, r0.wall_s, r.pes, r.wall_s),
            weak_efficiency: if r.wall_s > 0.0 {
                r0.wall_s / r.wall_s
            } else {
                0.0
            },
            regions: r
                .regions
                .iter()
                .filter_map(|(k, &t)| {
                    r0.regions
                        .get(k)
                        .map(|&t0| (k.clone(), eff(r0.pes, t0, r.pes, t)))
                })
                .collect(),
        })
        .collect()
}

/// One compared quantity.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// What (`(run)` for the whole run).
    pub what: String,
    /// Mean time in A and in B, s.
    pub a_s: f64,
    /// See `a_s`.
    pub b_s: f64,
    /// (B − A) / A.
    pub relative: f64,
    /// Whether the change exceeds the noise.
    pub significant: bool,
}

/// A revision comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Relative run-to-run noise used as the significance bar.
    pub noise: f64,
    /// The whole run first, then the ten longest regions.
    pub changes: Vec<Change>,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Relative spread (max − min) / mean of repeated runs.
fn spread(v: &[f64]) -> f64 {
    let m = mean(v);
    if v.len() < 2 || m <= 0.0 {
        return 0.0;
    }
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    (hi - lo) / m
}

/// Compares revision A (one or more repeated runs) with revision B. A
/// change is significant when it exceeds the larger of `noise_floor` and
/// the spread of the repeated runs of either side.
pub fn compare(a: &[RunSummary], b: &[RunSummary], noise_floor: f64) -> Comparison {
    let walls = |s: &[RunSummary]| s.iter().map(|r| r.wall_s).collect::<Vec<_>>();
    let (wa, wb) = (walls(a), walls(b));
    let noise = noise_floor.max(spread(&wa)).max(spread(&wb));
    let change = |what: String, va: &[f64], vb: &[f64]| {
        let (ma, mb) = (mean(va), mean(vb));
        let n = noise.max(spread(va)).max(spread(vb));
        let relative = if ma > 0.0 { (mb - ma) / ma } else { 0.0 };
        Change {
            what,
            a_s: ma,
            b_s: mb,
            relative,
            significant: relative.abs() > n,
        }
    };
    let mut changes = vec![change("(run)".into(), &wa, &wb)];
    // The ten longest regions over both revisions.
    let mut longest: BTreeMap<String, f64> = BTreeMap::new();
    for r in a.iter().chain(b) {
        for (k, &t) in &r.regions {
            let e = longest.entry(k.clone()).or_insert(0.0);
            *e = e.max(t);
        }
    }
    let mut top: Vec<(String, f64)> = longest.into_iter().collect();
    top.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    for (k, _) in top.into_iter().take(10) {
        let get = |s: &[RunSummary]| {
            s.iter()
                .map(|r| r.regions.get(&k).copied().unwrap_or(0.0))
                .collect::<Vec<_>>()
        };
        changes.push(change(k.clone(), &get(a), &get(b)));
    }
    Comparison { noise, changes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, pes: u32, wall: f64, work: f64) -> RunSummary {
        RunSummary {
            name: name.into(),
            pes,
            wall_s: wall,
            regions: [("work".to_string(), work)].into_iter().collect(),
        }
    }

    #[test]
    fn efficiency_is_exact() {
        let pts = scaling(&[run("b", 4, 30.0, 25.0), run("a", 2, 50.0, 50.0)]);
        assert_eq!(pts[0].name, "a");
        assert!((pts[0].efficiency - 1.0).abs() < 1e-12);
        assert!((pts[1].efficiency - 2.0 * 50.0 / (4.0 * 30.0)).abs() < 1e-12);
        assert!((pts[1].weak_efficiency - 50.0 / 30.0).abs() < 1e-12);
        assert!((pts[1].regions["work"] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn comparison_respects_noise() {
        let a = [run("a1", 2, 10.0, 5.0), run("a2", 2, 11.0, 5.0)];
        let b = [run("b1", 2, 10.5, 2.0)];
        let c = compare(&a, &b, 0.02);
        assert!((c.noise - 1.0 / 10.5).abs() < 1e-12);
        assert!(!c.changes[0].significant);
        assert_eq!(c.changes[1].what, "work");
        assert!(c.changes[1].significant);
        assert!((c.changes[1].relative + 0.6).abs() < 1e-12);
    }
}
