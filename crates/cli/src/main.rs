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
#[command(
    name = "parallax",
    version,
    about,
    long_about = None,
    after_help = "Examples:\n  parallax run -- ./app args\n  parallax report parallax-app\n  parallax analyze parallax-app\n  parallax export parallax-app --format otf2 -o trace.otf2\n  parallax html parallax-app -o report.html"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Measure a built-in multithreaded workload (load imbalance, a
    /// contended lock, a barrier) and print its report.
    #[command(
        after_help = "Examples:\n  parallax demo\n  parallax demo --threads 8 --iterations 200 -o demo-exp\n  parallax demo --json"
    )]
    Demo(demo::Args),
    /// Print the flat and call-path profiles of an experiment, per location
    /// and in total.
    #[command(
        after_help = "Examples:\n  parallax report exp\n  parallax report exp --top 20 --total-only\n  parallax report exp --json\n  parallax report exp --color never"
    )]
    Report(report::Args),
    /// Measure the cost of Parallax's probes and clock on this machine.
    #[command(
        after_help = "Examples:\n  parallax calibrate\n  parallax calibrate --fenced --json"
    )]
    Calibrate(calibrate::Args),
    /// Remove the probes' perturbation from an experiment: a new
    /// experiment (trace and profile) approximating the run without them.
    #[command(
        after_help = "Examples:\n  parallax compensate exp\n  parallax compensate exp -o exp-approx --json\n  parallax compensate imported --probe-cost-ns 35\n  parallax compensate exp --liberal=locks"
    )]
    Compensate(compensate::Args),
    /// Run a program under measurement: `parallax run -- ./app args`.
    ///
    /// An unmodified, dynamically linked program (C, C++, Fortran; threads,
    /// MPI, OpenSHMEM, GASP; functions built with -finstrument-functions) is
    /// measured through the interposition library (LD_PRELOAD); a program
    /// linked with the `parallax` crate measures itself. Works around an MPI
    /// launcher (`parallax run -- mpirun -np 4 ./app`) and under one
    /// (`mpirun -np 4 parallax run -- ./app`).
    #[command(
        after_help = "Examples:\n  parallax run -- ./app input.dat\n  parallax run --mode trace -o exp -- mpirun -np 4 ./app\n  mpirun -np 4 parallax run -o exp -- ./app\n  parallax run --throttle off --clock tsc-fenced -- ./app\n  parallax run --exclude 'std::*' -- ./app"
    )]
    Run(run::Args),
    /// Write an experiment in another tool's format: OTF2, Perfetto, Chrome
    /// JSON, folded stacks, SVG flame graph, CSV/JSON/Hatchet profiles.
    #[command(
        after_help = "Examples:\n  parallax export exp --format otf2 -o trace.otf2\n  parallax export exp --format perfetto -o trace.perfetto\n  parallax export exp --format folded -o stacks.txt\n  parallax export exp --format csv --location 0:1 -o rank0-thread1.csv"
    )]
    Export(export::Args),
    /// Read an OTF2 archive written by another tool into an experiment.
    #[command(
        after_help = "Examples:\n  parallax import scorep-run/traces.otf2 -o exp\n  parallax import trace.otf2 -o exp --probe-cost-ns 30"
    )]
    Import(import::Args),
    /// The run database: list, show, tag, remove, query and compare the
    /// recorded runs.
    #[command(
        after_help = "Examples:\n  parallax db list\n  parallax db show 12\n  parallax db compare --tag nightly --json\n  parallax db query 'select id, program, wall_s from runs'"
    )]
    Db(db::Args),
    /// Write an experiment as one self-contained HTML report (summary,
    /// profiles, timeline, communication, load balance, concurrency,
    /// findings, run comparison) that opens offline in a browser.
    #[command(
        after_help = "Examples:\n  parallax html exp -o report.html\n  parallax html exp --compensated exp-compensated -o report.html\n  parallax html --runs 3,4,5 -o runs.html"
    )]
    Html(html::Args),
    /// Find the bottlenecks of a traced run: wait states with their
    /// culprits, root causes, critical path, load balance, hints.
    #[command(
        after_help = "Examples:\n  parallax analyze exp\n  parallax analyze exp --top 5\n  parallax analyze exp --json"
    )]
    Analyze(analyze::Args),
    /// Measure bottleneck-free baselines of synchronization constructs on
    /// this machine, for `analyze`.
    #[command(
        after_help = "Examples:\n  parallax baseline\n  parallax baseline --max-threads 8 -o baselines.txt"
    )]
    Baseline(baseline::Args),
    /// Parallel efficiency of runs at different sizes.
    #[command(
        after_help = "Examples:\n  parallax scaling run-1 run-2 run-4 run-8\n  parallax scaling run-1 run-2 --json"
    )]
    Scaling(scaling::Args),
    /// Compare two revisions: the run and its ten longest regions.
    #[command(
        after_help = "Examples:\n  parallax compare before after\n  parallax compare before after --json"
    )]
    Compare(compare::Args),
    /// What this installation and machine can do (OTF2, MPI, perf events,
    /// TSC, ...) and how to get what is missing.
    #[command(after_help = "Examples:\n  parallax doctor\n  parallax doctor --json")]
    Doctor(doctor::Args),
    /// Check compensation on a program: run it without Parallax and under
    /// `parallax run`, alternately, compensate each measured run and
    /// compare the approximated run times with the plain ones.
    #[command(
        after_help = "Examples:\n  parallax validate -- ./app input.dat\n  parallax validate --runs 9 --throttle off -- ./app\n  parallax validate --json -- mpirun -np 4 ./app"
    )]
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
            // A program that cannot start: the status a shell gives.
            ExitCode::from(e.downcast_ref::<run::CannotStart>().map_or(2, |c| c.status))
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command's help ends with examples, and every example is a
    /// command line that parses.
    #[test]
    fn every_help_has_examples_that_parse() {
        fn walk(
            cmd: &clap::Command,
            path: &str,
            lines: &mut Vec<String>,
            missing: &mut Vec<String>,
        ) {
            let help = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let examples: Vec<&str> = help
                .lines()
                .skip_while(|l| *l != "Examples:")
                .skip(1)
                .map(str::trim)
                .collect();
            if examples.is_empty() {
                missing.push(path.to_string());
            }
            lines.extend(examples.iter().map(|e| e.to_string()));
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                walk(sub, &format!("{path} {}", sub.get_name()), lines, missing);
            }
        }
        let (mut lines, mut missing) = (Vec::new(), Vec::new());
        walk(&Cli::command(), "parallax", &mut lines, &mut missing);
        assert!(missing.is_empty(), "no examples in the help of {missing:?}");
        for line in lines {
            // `mpirun -np 4 parallax run ...`: the part from `parallax` on.
            let from = line.find("parallax ").expect("an example runs parallax");
            let words = shell_words(&line[from..]);
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("example `{line}` does not parse: {e}");
            }
        }
    }

    /// The words of a shell command line of single-quoted and bare words,
    /// up to a redirection.
    fn shell_words(line: &str) -> Vec<String> {
        let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
        for c in line.chars() {
            match c {
                '\'' => (quoted, any) = (!quoted, true),
                c if c.is_whitespace() && !quoted => {
                    if any {
                        words.push(std::mem::take(&mut word));
                    }
                    any = false;
                }
                '<' | '>' if !quoted => break,
                c => (word, any) = (word + &c.to_string(), true),
            }
        }
        if any {
            words.push(word);
        }
        words
    }
}
