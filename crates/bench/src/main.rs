//! `parallax-bench`: benchmarks of the Parallax runtime.
//!
//! Each benchmark is a subcommand; `overhead` measures the cost of one
//! region enter+leave pair in Parallax's modes against a minimal tracer
//! (the floor) and against peer tracers, all in one process.

mod accuracy;
mod detection;
mod floor;
mod machine;
mod overhead;
mod parallax_runs;
mod peers;
mod stats;
mod synth;

use clap::{Parser, Subcommand};

/// Benchmarks of the Parallax measurement runtime.
#[derive(Parser, Debug)]
#[command(name = "parallax-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Cost per region enter+leave pair: floor, Parallax modes, peers,
    /// bytes per event and sustained trace throughput.
    Overhead(overhead::Args),
    /// Bottleneck detection on the ground-truth programs of
    /// workloads/bottlenecks: precision, recall and severity error per
    /// pattern; with --scale, speed and memory on a synthetic trace.
    Detection(detection::Args),
    /// Compensation against probe-free runs: T, T_m and T_a of the
    /// Livermore kernels (Rust and C) and of parallel kernels on threads
    /// and MPI ranks.
    Accuracy(accuracy::Args),
    /// Writes a synthetic MPI-like experiment of L locations and about E
    /// events (messages, barriers, an injected late sender) for scale
    /// tests.
    Synth(synth::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Overhead(args) => overhead::main(&args),
        Command::Detection(args) => detection::main(&args),
        Command::Accuracy(args) => accuracy::main(&args),
        Command::Synth(args) => synth::main(&args),
    };
    if let Err(e) = result {
        eprintln!("parallax-bench: {e}");
        std::process::exit(1);
    }
}
