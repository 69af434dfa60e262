//! `parallax demo`: a small multithreaded program, measured in this process.
//!
//! Each worker iterates: a computation whose size grows with the worker's
//! number (load imbalance), an update of a shared histogram under one mutex
//! (contention), and a barrier (where the imbalance shows up as waiting).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

use parallax::sync::{Barrier, Mutex};
use parallax::{Config, Mode};
use parallax_model::experiment::Experiment;
use parallax_view::profile::ExperimentProfile;

use crate::experiment_dir;

/// Arguments of `parallax demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiment directory (replaced if it holds an earlier experiment).
    #[arg(short, long, default_value = "parallax-demo")]
    pub out: PathBuf,
    /// What to record.
    #[arg(long, default_value = "both", value_parser = parse_mode)]
    pub mode: Mode,
    /// Worker threads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Iterations per worker.
    #[arg(long, default_value_t = 60)]
    pub iterations: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// When to colour the text.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: crate::launcher::Color,
    #[command(flatten)]
    pub db: crate::db::Target,
}

pub fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s)
        .filter(|m| *m != Mode::Off)
        .ok_or_else(|| format!("`{s}` is not one of profile, trace, both"))
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(a.threads >= 1, "--threads must be at least 1");
    let prepared = experiment_dir::prepare(&a.out)?;
    let mut config = Config::new(a.mode, &a.out);
    config.rank = Some(0);
    config.ranks = Some(1);
    parallax::init(config).context("cannot start measuring")?;
    crate::console::note(&format!(
        "measuring the demo workload ({} threads, {} iterations) into {}",
        a.threads,
        a.iterations,
        a.out.display()
    ));
    let started = Instant::now();
    run_workload(a.threads, a.iterations);
    let wall = started.elapsed().as_secs_f64();
    parallax::finish();
    let command: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    experiment_dir::write_manifest(&a.out, &command, "exit 0", wall, None)?;
    prepared.commit();
    let exp = Experiment::open(&a.out)?;
    let prof = ExperimentProfile::load(&exp)?;
    let meta = parallax_db::RunMeta {
        program: "demo".into(),
        command: command.clone(),
        status: "exit 0".into(),
        wall_s: Some(wall),
        ..Default::default()
    };
    let exe = std::env::current_exe().ok();
    crate::db::record(&a.db, &exp, Some(&prof), exe.as_deref(), meta);
    if a.json {
        crate::report::write_json(
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
            &exp,
            &prof,
        )?;
    } else {
        crate::console::out(&crate::report::text(&exp, &prof, 10, true, a.color.paint()))?;
        crate::console::out(&format!(
            "\nThe demo ran for {wall:.2} s. Worker k computes k+1 units per iteration, so faster\nworkers wait at the barrier; all share one mutex. Experiment: {}\n",
            a.out.display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The workload: `threads` workers, `iterations` each.
pub fn run_workload(threads: usize, iterations: usize) {
    let histogram = Arc::new(Mutex::new([0u64; 64]));
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let (histogram, barrier) = (histogram.clone(), barrier.clone());
            parallax::spawn_named(Some(format!("worker-{w}")), move || {
                worker(w, iterations, &histogram, &barrier);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("demo worker panicked");
    }
}

#[parallax::instrument]
fn worker(w: usize, iterations: usize, histogram: &Mutex<[u64; 64]>, barrier: &Barrier) {
    let mut x = 1.0f64 + w as f64;
    for i in 0..iterations {
        let _it = parallax::region!(Loop, "iteration");
        x = compute(x, (w + 1) * 40_000);
        update(histogram, x, i);
        barrier.wait();
    }
    std::hint::black_box(x);
}

/// Floating-point work of `n` steps.
#[parallax::instrument]
fn compute(mut x: f64, n: usize) -> f64 {
    for k in 0..n {
        x = (x * 1.000_001 + k as f64 * 1e-9).sqrt() + 0.5;
    }
    x
}

/// Adds to the shared histogram while holding its lock for a while.
#[parallax::instrument]
fn update(histogram: &Mutex<[u64; 64]>, x: f64, i: usize) {
    let mut h = histogram.lock().unwrap_or_else(|e| e.into_inner());
    for k in 0..2000 {
        let b = ((x.to_bits() >> 7) as usize + k + i) % 64;
        h[b] = h[b].wrapping_add(k as u64);
    }
}
