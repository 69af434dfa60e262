//! `parallax compare A B`: two revisions of a program, the whole run and
//! its ten longest regions, judged against run-to-run noise.

use std::path::PathBuf;

use serde_json::json;

use parallax_analysis::bottleneck::scaling;

/// Arguments of `parallax compare`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Revision A: an experiment, or repeated runs separated by commas.
    pub a: String,
    /// Revision B, likewise.
    pub b: String,
    /// Least relative change taken for real; repeated runs raise it to
    /// their own spread.
    #[arg(long, default_value_t = 0.05)]
    pub noise: f64,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn dirs(s: &str) -> Vec<PathBuf> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

pub fn main(a: Args) -> anyhow::Result<std::process::ExitCode> {
    anyhow::ensure!(a.noise >= 0.0, "--noise must not be negative");
    let ra = crate::scaling::summaries(&dirs(&a.a))?;
    let rb = crate::scaling::summaries(&dirs(&a.b))?;
    anyhow::ensure!(
        !ra.is_empty() && !rb.is_empty(),
        "each revision needs an experiment"
    );
    let c = scaling::compare(&ra, &rb, a.noise);
    if a.json {
        let v = json!({"noise": c.noise, "changes": c.changes.iter().map(|x| json!({
            "what": x.what, "a_s": x.a_s, "b_s": x.b_s,
            "relative": x.relative, "significant": x.significant,
        })).collect::<Vec<_>>()});
        crate::console::out_json(&v)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let s = parallax_report::text::revisions::text(&c, ra.len(), rb.len());
    crate::console::out(&s)?;
    Ok(std::process::ExitCode::SUCCESS)
}
