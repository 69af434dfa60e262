//! `parallax import TRACE.otf2 --out DIR`: an OTF2 archive written by
//! another tool as a Parallax experiment.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use parallax_export::otf2::ImportOptions;

use crate::experiment_dir;

/// Arguments of `parallax import`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The OTF2 anchor file (NAME.otf2).
    pub trace: PathBuf,
    /// Experiment directory to create (replaced if it holds an earlier
    /// experiment).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Cost of one probe in ns in the measurement that wrote the trace,
    /// recorded as calibration so that compensation can remove it.
    #[arg(long, value_name = "NS")]
    pub probe_cost_ns: Option<f64>,
    #[command(flatten)]
    pub db: crate::db::Target,
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    if !parallax_export::otf2_available() {
        anyhow::bail!(parallax_export::otf2::MISSING);
    }
    if let Some(c) = a.probe_cost_ns {
        anyhow::ensure!(
            c.is_finite() && c >= 0.0,
            "--probe-cost-ns must be a non-negative number of ns"
        );
    }
    let prepared = experiment_dir::prepare(&a.out)?;
    let opts = ImportOptions {
        probe_cost_ns: a.probe_cost_ns,
    };
    let summary = parallax_export::otf2::import(&a.trace, &a.out, &opts)
        .with_context(|| format!("cannot import {}", a.trace.display()))?;
    let command: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The run's wall time is the imported trace's, not the import's.
    let wall_s = summary.span_ns.map(|ns| ns as f64 / 1e9);
    experiment_dir::write_manifest(&a.out, &command, "imported", wall_s.unwrap_or(0.0), None)?;
    prepared.commit();
    for w in &summary.warnings {
        crate::console::warn(w);
    }
    if let Ok(exp) = parallax_model::experiment::Experiment::open(&a.out) {
        // The program the trace names, else the archive's name.
        let named = exp
            .processes
            .first()
            .and_then(|p| p.info.as_ref())
            .map(|i| i.program.as_str())
            .filter(|p| !p.starts_with("imported from "))
            .and_then(|p| Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned());
        let meta = parallax_db::RunMeta {
            program: named.unwrap_or_else(|| {
                a.trace
                    .file_stem()
                    .map_or_else(|| "imported".into(), |s| s.to_string_lossy().into_owned())
            }),
            command,
            status: "imported".into(),
            wall_s,
            ..Default::default()
        };
        crate::db::record(&a.db, &exp, None, None, meta);
    }
    crate::console::note(&format!(
        "imported {} events from {} into {} in {:.3} s",
        summary.events,
        a.trace.display(),
        a.out.display(),
        summary.seconds
    ));
    Ok(ExitCode::SUCCESS)
}
