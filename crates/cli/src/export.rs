//! `parallax export DIR --format F --out PATH`: an experiment in another
//! tool's format.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use parallax_export::{Format, Options};
use parallax_model::experiment::Experiment;
use parallax_view::selection::Selection;

/// Arguments of `parallax export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The experiment directory.
    pub dir: PathBuf,
    /// Output format: otf2 (Vampir, Scalasca), perfetto (ui.perfetto.dev),
    /// chrome (trace event JSON), folded (flame graph input), svg (flame
    /// graph), csv, json (pandas), hatchet (Hatchet's literal tree).
    #[arg(long, value_parser = parse_format)]
    pub format: Format,
    /// Output file (for otf2: the anchor file NAME.otf2, with a directory
    /// NAME beside it).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Export only this location, RANK:THREAD (or every thread of RANK);
    /// may be repeated.
    #[arg(long = "location", value_name = "R:T")]
    pub locations: Vec<String>,
    /// Profile formats: merge call paths over the locations instead of one
    /// tree per location.
    #[arg(long)]
    pub merged: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("`{s}` is not one of {}", names.join(", "))
    })
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    if a.format == Format::Otf2 && !parallax_export::otf2_available() {
        anyhow::bail!(parallax_export::otf2::MISSING);
    }
    let exp = Experiment::open(&a.dir)
        .with_context(|| format!("cannot read the experiment {}", a.dir.display()))?;
    let mut selection = Selection::default();
    for l in &a.locations {
        selection.add(l)?;
    }
    let opts = Options {
        format: a.format,
        selection,
        merged: a.merged,
    };
    let summary = parallax_export::export(&exp, &opts, &a.out)
        .with_context(|| format!("cannot export to {}", a.out.display()))?;
    for w in &summary.warnings {
        crate::console::warn(w);
    }
    crate::console::note(&format!(
        "wrote {} ({}): {}",
        a.out.display(),
        a.format.name(),
        summary.describe(a.format)
    ));
    Ok(ExitCode::SUCCESS)
}
