//! `parallax scaling DIR...`: parallel efficiency of runs of one program
//! at different sizes, overall and per region, against the smallest run.

use std::path::PathBuf;

use anyhow::Context;
use serde_json::json;

use parallax_analysis::bottleneck::scaling::{self, RunSummary};
use parallax_model::experiment::Experiment;

/// Arguments of `parallax scaling`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiments of the same program at different sizes.
    #[arg(required = true, num_args = 2..)]
    pub dirs: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Regions shown per run in text output.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

/// Reads each experiment's figures.
pub fn summaries(dirs: &[PathBuf]) -> anyhow::Result<Vec<RunSummary>> {
    dirs.iter()
        .map(|d| {
            let exp = Experiment::open(d)
                .with_context(|| format!("cannot read the experiment {}", d.display()))?;
            Ok(scaling::summarize(&exp)?)
        })
        .collect()
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    let pts = scaling::scaling(&summaries(&a.dirs)?);
    if a.json {
        let v = json!({"runs": pts.iter().map(|p| json!({
            "experiment": p.name, "pes": p.pes, "wall_s": p.wall_s,
            "efficiency": p.efficiency, "weak_efficiency": p.weak_efficiency,
            "regions": p.regions,
        })).collect::<Vec<_>>()});
        crate::console::out_json(&v)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let s = parallax_report::text::scaling::text(&pts, a.top);
    crate::console::out(&s)?;
    Ok(std::process::ExitCode::SUCCESS)
}
