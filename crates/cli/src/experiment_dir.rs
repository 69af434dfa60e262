//! Creating experiment directories and their manifest.

use std::path::Path;

use anyhow::{bail, Context};
use serde_json::json;

use parallax_model::experiment::{Experiment, MANIFEST};

/// Makes `dir` ready for a new experiment: creates it, or empties it if it
/// holds a previous experiment. Refuses to touch a directory with other
/// content.
pub fn prepare(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        let mut entries =
            std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        let is_experiment = dir.join(MANIFEST).exists()
            || std::fs::read_dir(dir)?
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("rank-"));
        if entries.next().is_some() {
            if !is_experiment {
                bail!(
                    "{} exists and is not a Parallax experiment; choose another --out",
                    dir.display()
                );
            }
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot replace {}", dir.display()))?;
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// Writes `manifest.json`: a human-readable summary of the run.
pub fn write_manifest(
    dir: &Path,
    command: &[String],
    status: &str,
    wall_s: f64,
) -> anyhow::Result<()> {
    let exp = Experiment::open(dir).ok();
    let processes: Vec<_> = exp
        .iter()
        .flat_map(|e| e.processes.iter())
        .map(|p| {
            let info = p.info.as_ref();
            json!({
                "rank": p.rank,
                "host": info.map(|i| i.host.clone()),
                "pid": info.map(|i| i.pid),
                "mode": info.map(|i| i.mode.name()),
                "locations": p.locations.len(),
                "start_unix_ns": info.map(|i| i.start_unix_ns),
                "end_unix_ns": p.end_unix_ns,
                "finished_cleanly": p.end_unix_ns.is_some(),
                "clock": {
                    "source": format!("{:?}", p.clock_source).to_lowercase(),
                    "ns_per_tick": p.clock.ns_per_tick,
                },
                "probe_costs_ns": probe_costs(p),
            })
        })
        .collect();
    let m = json!({
        "parallax_version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "status": status,
        "wall_seconds": wall_s,
        "processes": processes,
    });
    let text = serde_json::to_string_pretty(&m)?;
    std::fs::write(dir.join(MANIFEST), text + "\n")
        .with_context(|| format!("cannot write the manifest in {}", dir.display()))
}

/// Each probe's cost: the mean over the process's calibrations (at start,
/// at the end and whenever the program asked), the largest standard
/// deviation, and how many there were.
fn probe_costs(
    p: &parallax_model::experiment::Process,
) -> serde_json::Map<String, serde_json::Value> {
    let mut by: std::collections::BTreeMap<&str, Vec<(f64, f64)>> = Default::default();
    for c in &p.calibration {
        by.entry(c.probe.name())
            .or_default()
            .push((c.mean_ns, c.sd_ns));
    }
    by.into_iter()
        .map(|(name, v)| {
            let mean = v.iter().map(|x| x.0).sum::<f64>() / v.len() as f64;
            let sd = v.iter().map(|x| x.1).fold(0.0, f64::max);
            (
                name.to_string(),
                json!({"mean": mean, "sd": sd, "calibrations": v.len()}),
            )
        })
        .collect()
}
