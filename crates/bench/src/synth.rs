//! `parallax-bench synth`: a synthetic MPI-like experiment for scale tests
//! of the analyses (the distributed ones in particular).
//!
//! Every location is a rank that in each step computes in a function with
//! `--calls` kernel calls, sends to the next rank and receives from the
//! previous one, and every 16th step joins a barrier. Rank 1 computes a
//! fifth longer: its successor waits at every receive (Late Sender) and
//! everyone at the barriers (Wait at Barrier), so the analyses find waits
//! with a known culprit. The experiment is written while generated, so any
//! size fits in memory.

use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `parallax-bench synth`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Locations (ranks).
    #[arg(long, default_value_t = 64)]
    pub locations: u32,
    /// Events in all, about.
    #[arg(long, default_value_t = 1_000_000)]
    pub events: u64,
    /// Kernel calls per step (two events each).
    #[arg(long, default_value_t = 4)]
    pub calls: u64,
    /// The experiment directory to write.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn main(a: &Args) -> Result<(), String> {
    if a.locations < 2 {
        return Err("--locations must be at least 2 (messages go around a ring)".into());
    }
    if a.out.exists() {
        return Err(format!("{} exists already", a.out.display()));
    }
    let started = Instant::now();
    let events = crate::detection::generate(&a.out, a.events, a.calls, a.locations)?;
    let bytes: u64 = walk(&a.out);
    println!(
        "{}: {} locations, {} events, {:.1} MB, written in {:.1} s",
        a.out.display(),
        a.locations,
        events,
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |rd| {
        rd.flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}
