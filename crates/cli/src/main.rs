//! The `parallax` command: glue between the command line and the Parallax
//! libraries.

mod analyze;
mod baseline;
mod calibrate;
mod compare;
mod compensate;
mod console;
mod db;
mod demo;
mod doctor;
mod executor;
mod experiment_dir;
mod export;
mod html;
mod import;
mod launcher;
mod report;
mod run;
mod runner;
mod scaling;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Parallax measures parallel programs (threads, MPI, OpenSHMEM) with probes
/// cheap enough to leave on, and reports where their time goes.
#[derive(Parser, Debug)]
#[command(name = "parallax", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Measure a built-in multithreaded workload (load imbalance, a
    /// contended lock, a barrier) and print its report.
    Demo(demo::Args),
    /// Print the flat and call-path profiles of an experiment, per location
    /// and in total.
    Report(report::Args),
    /// Measure the cost of Parallax's probes and clock on this machine.
    Calibrate(calibrate::Args),
    /// Remove the probes' perturbation from an experiment: a new
    /// experiment (trace and profile) approximating the run without them.
    Compensate(compensate::Args),
    /// Run a program under measurement: `parallax run -- ./app args`.
    ///
    /// An unmodified, dynamically linked program (C, C++, Fortran; threads,
    /// MPI, OpenSHMEM, GASP; functions built with -finstrument-functions) is
    /// measured through the interposition library (LD_PRELOAD); a program
    /// linked with the `parallax` crate measures itself. Works around an MPI
    /// launcher (`parallax run -- mpirun -np 4 ./app`) and under one
    /// (`mpirun -np 4 parallax run -- ./app`).
    Run(run::Args),
    /// Write an experiment in another tool's format: OTF2, Perfetto, Chrome
    /// JSON, folded stacks, SVG flame graph, CSV/JSON/Hatchet profiles.
    Export(export::Args),
    /// Read an OTF2 archive written by another tool into an experiment.
    Import(import::Args),
    /// The run database: list, show, tag, remove, query and compare the
    /// recorded runs.
    Db(db::Args),
    /// Write an experiment as one self-contained HTML report (summary,
    /// profiles, timeline, communication, load balance, concurrency,
    /// findings, run comparison) that opens offline in a browser.
    Html(html::Args),
    /// Find the bottlenecks of a traced run: wait states with their
    /// culprits, root causes, critical path, load balance, hints.
    Analyze(analyze::Args),
    /// Measure bottleneck-free baselines of synchronization constructs on
    /// this machine, for `analyze`.
    Baseline(baseline::Args),
    /// Parallel efficiency of runs at different sizes.
    Scaling(scaling::Args),
    /// Compare two revisions: the run and its ten longest regions.
    Compare(compare::Args),
    /// What this installation and machine can do (OTF2, MPI, perf events,
    /// TSC, ...) and how to get what is missing.
    Doctor(doctor::Args),
    /// Check compensation on a program: run it without Parallax and under
    /// `parallax run`, alternately, compensate each measured run and
    /// compare the approximated run times with the plain ones.
    Validate(validate::Args),
}

// The analyses allocate many small values (exchanged notes, call-path
// chains); mimalloc serves them faster than the system allocator,
// especially from several threads.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Lets an offline command hold as many files open as the system allows:
/// a replay reads every location of an experiment at once, and the soft
/// limit (often 1024) is below the locations of a large run. Not for `run`
/// and `validate`, whose program would inherit it.
fn raise_open_file_limit() {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // Safety: `l` is a valid rlimit to fill and then to read.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        Command::Run(_) | Command::Demo(_) | Command::Validate(_)
    ) {
        raise_open_file_limit();
    }
    let result = match cli.command {
        Command::Demo(a) => demo::main(a),
        Command::Report(a) => report::main(a),
        Command::Calibrate(a) => calibrate::main(a),
        Command::Compensate(a) => compensate::main(a),
        Command::Run(a) => run::main(a),
        Command::Export(a) => export::main(a),
        Command::Import(a) => import::main(a),
        Command::Db(a) => db::main(a),
        Command::Html(a) => html::main(a),
        Command::Analyze(a) => analyze::main(a),
        Command::Baseline(a) => baseline::main(a),
        Command::Scaling(a) => scaling::main(a),
        Command::Compare(a) => compare::main(a),
        Command::Doctor(a) => doctor::main(a),
        Command::Validate(a) => validate::main(a),
    };
    match result {
        Ok(code) => code,
        // The reader went away: nothing more to say (as `head` expects).
        Err(e) if console::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            console::note(&format!("{e:#}"));
            ExitCode::from(2)
        }
    }
}

/// A default experiment directory name for `what`, unique per second.
fn default_dir(what: &str) -> PathBuf {
    PathBuf::from(format!(
        "parallax-{what}-{}",
        parallax_report::text::fmt::timestamp_for_name()
    ))
}
