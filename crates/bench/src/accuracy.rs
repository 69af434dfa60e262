//! `parallax-bench accuracy`: perturbation compensation judged against
//! the run without probes, as Malony's thesis judged it (ch. 3 and 5).
//!
//! Every kernel of the workloads folder runs at two levels:
//!
//! - raw: probes only where the kernel begins and ends (sequential
//!   kernels), or no probes at all (parallel kernels; the program times
//!   itself): the reference time T;
//! - full: a probe around every loop body and on every synchronization:
//!   the measured time T_m, the span of the kernel's region in the trace.
//!
//! The full experiment is then compensated and the kernel region's span in
//! the approximated trace is T_a. Each figure is the median over the
//! repetitions; the error of a kernel is T_a/T - 1 (and T_m/T - 1
//! uncompensated).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use parallax_analysis::compensate::{self, Liberal, Options};
use parallax_analysis::executor::Executor;
use parallax_model::defs::Entry;
use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;
use parallax_view::trace;

use crate::stats::{chance_error, median, round};

mod suites;
mod user;

/// Arguments of `accuracy`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Repetitions of each kernel and level (a Livermore kernel runs 8
    /// short runs per repetition, a thread kernel 3 runs, an MPI kernel 1).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Suites to run: rust (Livermore in Rust), c (Livermore in C),
    /// threads (parallel Rust kernels), mpi (parallel MPI kernels), user
    /// (C, C++ and Fortran programs of workloads/user built with
    /// -finstrument-functions and measured by `parallax run` with its own
    /// default settings and with --throttle off; --clock, --buffer,
    /// --threads and --ranks do not apply to them), openmp (the OpenMP
    /// loops of workloads/user/openmp.c built by gcc, compensated with
    /// --liberal=loops, and the whole-run overhead of the same program
    /// without hooks in profile and trace mode).
    #[arg(long, value_delimiter = ',', default_value = "rust,c,threads,mpi")]
    pub suites: Vec<String>,
    /// Livermore kernels to run (numbers 1 to 24) [default: all].
    #[arg(long, value_delimiter = ',')]
    pub kernels: Vec<u32>,
    /// Thread counts of the parallel thread kernels.
    #[arg(long, value_delimiter = ',', default_value = "2,4")]
    pub threads: Vec<usize>,
    /// Rank counts of the MPI kernels.
    #[arg(long, value_delimiter = ',', default_value = "2,4")]
    pub ranks: Vec<usize>,
    /// Small sizes (a check that everything runs, not a measurement).
    #[arg(long)]
    pub quick: bool,
    /// How the measured runs' probes read the clock (PARALLAX_CLOCK):
    /// tsc-fenced, whose probes' cost depends less on the code around
    /// them, or tsc, the cheapest, whose probes partly run beside it.
    #[arg(long, default_value = "tsc-fenced", value_parser = ["tsc", "tsc-fenced"])]
    pub clock: String,
    /// Trace buffer of each measured thread (PARALLAX_BUFFER).
    #[arg(long, default_value = "4m")]
    pub buffer: String,
    /// Where experiments are written; given, every kernel's experiment and
    /// its compensation are kept there for a look [default: a temporary
    /// directory, removed as it goes].
    #[arg(long)]
    pub work: Option<PathBuf>,
}

/// One kernel's figures, seconds.
#[derive(Clone, Debug, Serialize)]
pub struct Kernel {
    pub name: String,
    /// `sequential` or `parallel`.
    pub kind: &'static str,
    /// Suite it came from.
    pub suite: String,
    /// Threads or ranks (1 for sequential kernels).
    pub width: usize,
    #[serde(rename = "T")]
    pub t: f64,
    #[serde(rename = "T_m")]
    pub t_m: f64,
    #[serde(rename = "T_a")]
    pub t_a: f64,
    /// T of each repetition, seconds.
    #[serde(rename = "T_reps")]
    pub t_reps: Vec<f64>,
    /// T_m / T - 1.
    pub measured_error: f64,
    /// T_a / T - 1.
    pub compensated_error: f64,
    /// The |T_a/T - 1| that an exact compensation would show by chance,
    /// from how T varied over the repetitions ([`chance_error`]).
    pub chance_error: f64,
    /// Probe events per run at the full level.
    pub events: u64,
    /// Innermost iterations per region at the full level (Livermore
    /// kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    /// T_a if the probes had cost what a probe pair costs in the dearest
    /// and in the cheapest loop timed at calibration: what compensation
    /// removed (T_m - T_a) scaled by those ratios.
    #[serde(rename = "T_a_low", skip_serializing_if = "Option::is_none")]
    pub t_a_low: Option<f64>,
    /// See `t_a_low`.
    #[serde(rename = "T_a_high", skip_serializing_if = "Option::is_none")]
    pub t_a_high: Option<f64>,
    /// T_a with the iterations of its self-scheduled loops handed out
    /// again (`compensate --liberal=loops`), for kernels that have such
    /// loops.
    #[serde(rename = "T_a_liberal", skip_serializing_if = "Option::is_none")]
    pub t_a_liberal: Option<f64>,
}

impl Kernel {
    /// T_a / T - 1 with the liberal T_a where there is one.
    fn liberal_error(&self) -> f64 {
        self.t_a_liberal
            .map_or(self.compensated_error, |l| round(l / self.t - 1.0, 4))
    }
}

#[derive(Debug, Serialize)]
struct Group {
    kernels: usize,
    /// Kernels whose T lies between T_a_low and T_a_high.
    within_context_range: usize,
    median_abs_error: f64,
    worst_abs_error: f64,
    median_abs_measured_error: f64,
    /// Median of the kernels' chance errors: the median |T_a/T - 1| that
    /// an exact compensation would show on this machine.
    median_chance_error: f64,
    /// Kernels whose |T_a/T - 1| is within their chance error.
    within_chance: usize,
    /// Kernels whose probes made them less than twice as long (T_m < 2 T),
    /// short of what the protocol asks of a fully instrumented run.
    below_twice: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    machine: crate::machine::Machine,
    reps: usize,
    /// PARALLAX_CLOCK of the measured runs.
    clock: String,
    /// PARALLAX_BUFFER of the measured runs.
    buffer: String,
    kernels: Vec<Kernel>,
    summary: BTreeMap<&'static str, Group>,
    compensation_events_per_s: f64,
    /// The same, over the runs of the sequential kernels (one location
    /// each) and over those of the parallel ones (threads, ranks and
    /// their synchronization).
    compensation_events_per_s_by_kind: BTreeMap<&'static str, f64>,
    /// The user programs' suite, where it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<user::UserReport>,
    /// The OpenMP programs' suite, where it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    openmp: Option<user::UserReport>,
}

/// Where the workload binaries and the interposition library are.
struct Tools {
    bin: PathBuf,
    root: PathBuf,
}

impl Tools {
    fn find() -> Result<Tools, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let bin = exe
            .parent()
            .ok_or("no directory of the executable")?
            .to_path_buf();
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .map_err(|e| e.to_string())?;
        Ok(Tools { bin, root })
    }

    /// Builds the workloads and the interposition library in this profile,
    /// and the `parallax` command if `cli`.
    fn build(&self, cli: bool) -> Result<(), String> {
        let release = self.bin.ends_with("release");
        let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        c.current_dir(&self.root).args([
            "build",
            "-q",
            "-p",
            "parallax-workloads",
            "-p",
            "parallax-preload",
        ]);
        if cli {
            c.args(["-p", "parallax-cli"]);
        }
        if release {
            c.arg("--release");
        }
        run_ok(&mut c, "building the workloads")?;
        Ok(())
    }

    /// Builds the C workload `target` of workloads/Makefile into `dir`.
    fn make(&self, target: &str, dir: &Path) -> Result<PathBuf, String> {
        run_ok(
            Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(self.root.join("workloads"))
                .arg(format!("O={}", dir.display()))
                .arg(target),
            &format!("make -C workloads {target}"),
        )?;
        Ok(dir.join(target))
    }

    fn preload(&self) -> PathBuf {
        self.bin.join("libparallax_preload.so")
    }
}

fn run_ok(c: &mut Command, what: &str) -> Result<String, String> {
    let out = c.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Spans of every instance of every region whose name starts with
/// `prefix`, on the first location of rank 0, in ns, by region name.
fn spans(dir: &Path, prefix: &str) -> Result<BTreeMap<String, Vec<f64>>, String> {
    let exp = Experiment::open(dir).map_err(|e| e.to_string())?;
    let locs = trace::locations(&exp);
    let loc = locs
        .iter()
        .find(|l| l.rank == 0)
        .ok_or_else(|| format!("{}: no trace of rank 0", dir.display()))?;
    let p = &exp.processes[loc.process];
    let wanted: BTreeMap<u32, String> = p
        .regions
        .iter()
        .filter(|(_, r)| r.name.starts_with(prefix))
        .map(|(&id, r)| (id, r.name.clone()))
        .collect();
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut stack: Vec<(u32, f64)> = Vec::new();
    trace::for_each_event(loc, |e| {
        let t = loc.clock.ns(e.time);
        match e.kind {
            EventKind::Enter { region } => stack.push((region, t)),
            EventKind::Leave { .. } => {
                if let Some((r, t0)) = stack.pop() {
                    if let Some(name) = wanted.get(&r) {
                        out.entry(name.clone()).or_default().push(t - t0);
                    }
                }
            }
            _ => {}
        }
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Compensates `dir` into `dir`-compensated and returns the output, with
/// the ratios of a probe pair's cost in context to its calibration that the
/// experiment recorded (its first process's); adds the run's (events,
/// seconds) to `timing`.
fn compensate_dir(
    dir: &Path,
    timing: &mut Vec<(u64, f64)>,
) -> Result<(PathBuf, Option<(f64, f64)>), String> {
    compensate_with(dir, "compensated", &Options::default(), timing)
}

/// As [`compensate_dir`], with `opts`, into `dir`.`ext`.
fn compensate_with(
    dir: &Path,
    ext: &str,
    opts: &Options,
    timing: &mut Vec<(u64, f64)>,
) -> Result<(PathBuf, Option<(f64, f64)>), String> {
    let exp = Experiment::open(dir).map_err(|e| e.to_string())?;
    let out = dir.with_extension(ext);
    let _ = std::fs::remove_dir_all(&out);
    let t = std::time::Instant::now();
    let s = compensate::compensate(&exp, &out, opts, Executor::Sequential)
        .map_err(|e| format!("compensating {}: {e}", dir.display()))?;
    let events = s.locations.iter().map(|l| l.stats.events).sum::<u64>();
    timing.push((events, t.elapsed().as_secs_f64()));
    let context = exp
        .processes
        .first()
        .and_then(compensate::Costs::calibrated)
        .and_then(|c| c.context);
    Ok((out, context))
}

/// Compensation's speed, events/s: the median over the runs of at least
/// 10^6 events (smaller ones measure the opening and closing of files), or
/// over all runs if none is that large.
fn compensation_speed(timing: &[(u64, f64)]) -> f64 {
    let rate = |&(e, s): &(u64, f64)| e as f64 / s.max(1e-9);
    let large: Vec<f64> = timing
        .iter()
        .filter(|t| t.0 >= 1_000_000)
        .map(rate)
        .collect();
    if large.is_empty() {
        median(&timing.iter().map(rate).collect::<Vec<_>>())
    } else {
        median(&large)
    }
}

/// The JSON lines a workload printed: (kernel name, seconds).
fn printed_seconds(stdout: &str, key: &str) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let (Some(k), Some(s)) = (v[key].as_str(), v["seconds"].as_f64()) {
            out.entry(k.to_string()).or_default().push(s * 1e9);
        }
    }
    out
}

/// The slowdown the full level of a Livermore kernel aims at, T_m/T: the
/// issue's protocol asks for at least 2.
const SLOWDOWN: f64 = 2.2;

/// A count the Livermore runners print for a kernel run (`iterations`,
/// `passes`).
fn printed_count(stdout: &str, key: &str) -> Option<u64> {
    stdout
        .lines()
        .find_map(|line| serde_json::from_str::<serde_json::Value>(line).ok()?[key].as_u64())
}

/// About how long a raw run of a Livermore kernel lasts. This machine's
/// speed drifts by tens of percent over tens of milliseconds; short runs
/// let raw and full alternate before it does. With the code the same at
/// both levels and nothing recorded, the median of full over raw strayed
/// from 1 by up to 54 % (typically 3 %) in 7 runs of the preset length
/// (5 to 20 ms), and by at most 2.6 % (typically 0.8 %) in 56 runs of an
/// eighth of it.
const RUN_NS: f64 = 1e6;

/// Raw and full runs of a thread kernel per repetition asked for
/// (`--reps`): their raw times vary most (the error of chance of 5 runs
/// was 1.3 to 8 %, a median of 3.9 % in one suite; 2.6 % with 15).
const THREAD_RUNS_PER_REP: usize = 3;

/// Raw and full runs of a Livermore kernel per repetition asked for
/// (`--reps`): as many short runs as it takes to measure about as long as
/// the preset length would.
const RUNS_PER_REP: usize = 8;

/// Innermost iterations per probed block so that a probe pair (enter and
/// leave through `entry`, at the cost the pilot run's calibration
/// measured) per block makes the kernel at least [`SLOWDOWN`] times slower:
/// raw time `t_ns` over `iterations`.
fn block_for(pilot: &Path, entry: Entry, t_ns: f64, iterations: u64) -> Result<usize, String> {
    let exp = Experiment::open(pilot).map_err(|e| e.to_string())?;
    let p = exp.processes.first().ok_or("no process")?;
    let c = compensate::Costs::calibrated(p).ok_or("no calibration")?;
    let (enter, leave) = c.phases[0].entry_ns[entry as usize];
    let per_iteration = t_ns / iterations.max(1) as f64;
    Ok(((enter + leave) / ((SLOWDOWN - 1.0) * per_iteration))
        .floor()
        .max(1.0) as usize)
}

struct Ctx {
    tools: Tools,
    work: PathBuf,
    reps: usize,
    quick: bool,
    /// Keep each kernel's experiment and its compensation (`--work`).
    keep: bool,
    clock: String,
    buffer: String,
    /// Livermore kernels chosen (empty: all).
    livermore_kernels: Vec<u32>,
    /// (events, seconds) of every compensation run, by kind of kernel.
    timing: BTreeMap<&'static str, Vec<(u64, f64)>>,
    kernels: Vec<Kernel>,
}

impl Ctx {
    /// Where the compensation runs of kernels of kind `kind` are timed.
    fn timed(&mut self, kind: &'static str) -> &mut Vec<(u64, f64)> {
        self.timing.entry(kind).or_default()
    }

    fn trace_env(&self, c: &mut Command, dir: &Path) {
        c.env("PARALLAX_MODE", "trace")
            .env("PARALLAX_OUT", dir)
            .env("PARALLAX_CLOCK", &self.clock)
            .env("PARALLAX_BUFFER", &self.buffer)
            .env_remove("PARALLAX_RANK");
    }

    /// Adds one kernel from the raw spans, measured spans and compensated
    /// spans of its region.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        suite: &str,
        name: &str,
        kind: &'static str,
        width: usize,
        t: &[f64],
        t_m: &[f64],
        t_a: &[f64],
        events: u64,
        context: Option<(f64, f64)>,
    ) -> &mut Kernel {
        let chance = round(chance_error(t), 4);
        let t_reps = t.iter().map(|x| x / 1e9).collect();
        let (t, t_m, t_a) = (median(t), median(t_m), median(t_a));
        // What compensation removed from the kernel, scaled by the ratios.
        let range = context.map(|ratios| {
            let (shorter, longer) = compensate::context_range(ratios, (t_m - t_a).max(0.0));
            ((t_a - shorter) / 1e9, (t_a + longer) / 1e9)
        });
        self.kernels.push(Kernel {
            name: name.to_string(),
            kind,
            suite: suite.to_string(),
            width,
            t: t / 1e9,
            t_m: t_m / 1e9,
            t_a: t_a / 1e9,
            t_reps,
            measured_error: round(t_m / t - 1.0, 4),
            compensated_error: round(t_a / t - 1.0, 4),
            chance_error: chance,
            events,
            block: None,
            t_a_low: range.map(|r| r.0),
            t_a_high: range.map(|r| r.1),
            t_a_liberal: None,
        });
        self.kernels.last_mut().expect("just pushed")
    }

    /// Sequential Livermore kernels, each in a process of its own: its raw
    /// and full runs, each about [`RUN_NS`] long, alternate
    /// [`RUNS_PER_REP`] × `reps` times, so that T and T_m are measured
    /// close in time (this machine's speed drifts by half from one second
    /// to the next) and the probes are calibrated before each run. The full
    /// level puts a region around every block of B innermost iterations, B
    /// sized by a pilot raw run so that the probes make the kernel at least
    /// [`SLOWDOWN`] times slower (T_m/T).
    fn livermore(&mut self, suite: &str, exe: &Path, preload: bool) -> Result<(), String> {
        let runs = self.reps * RUNS_PER_REP;
        let reps = runs.to_string();
        let numbers: Vec<u32> = if self.livermore_kernels.is_empty() {
            (1..=24).collect()
        } else {
            self.livermore_kernels.clone()
        };
        for number in numbers {
            let run = |levels: &str,
                       reps: &str,
                       passes: Option<u64>,
                       block: usize|
             -> Result<(PathBuf, String), String> {
                let dir = self.work.join(format!("{suite}-{number:02}"));
                let _ = std::fs::remove_dir_all(&dir);
                let mut c = Command::new(exe);
                c.args(["--kernels", &number.to_string(), "--levels", levels])
                    .args(["--reps", reps, "--block", &block.to_string()]);
                if self.quick {
                    c.args(["--scale", "test"]);
                }
                if let Some(p) = passes {
                    c.args(["--passes", &p.to_string()]);
                }
                self.trace_env(&mut c, &dir);
                if preload {
                    c.env("LD_PRELOAD", self.tools.preload());
                }
                let what = format!("{} --kernels {number} --levels {levels}", exe.display());
                Ok((dir, run_ok(&mut c, &what)?))
            };
            let kernel_spans = |dir: &Path| -> Result<(String, Vec<f64>), String> {
                spans(dir, "lfk")?
                    .into_iter()
                    .find(|(n, _)| !n.contains(' '))
                    .ok_or_else(|| format!("{}: no kernel region", dir.display()))
            };
            let (pilot_dir, pilot_out) = run("raw", "1", None, 1)?;
            let (_, pilot) = kernel_spans(&pilot_dir)?;
            let printed = |key| {
                printed_count(&pilot_out, key)
                    .ok_or_else(|| format!("{suite} kernel {number}: no {key} printed"))
            };
            let (iterations, pilot_passes) = (printed("iterations")?, printed("passes")?);
            // Passes for a raw run of about RUN_NS (never more than the preset).
            let passes = ((pilot_passes as f64 * RUN_NS / median(&pilot)).round() as u64)
                .clamp(1, pilot_passes);
            let entry = if preload {
                Entry::CPreserving
            } else {
                Entry::Preserving
            };
            let mut block = block_for(&pilot_dir, entry, median(&pilot), iterations)?;
            // Raw and full alternate: the kernel region's instances are
            // raw, full, raw, full, ... Smaller blocks until the full level
            // is at least twice as slow (the pilot's raw time can differ
            // from that of the blocked code).
            let (dir, name, both) = loop {
                let (dir, _) = run("raw,full", &reps, Some(passes), block)?;
                let (name, both) = kernel_spans(&dir)?;
                if block == 1 || median(&odd(&both)) >= 2.05 * median(&even(&both)) {
                    break (dir, name, both);
                }
                block = block * 2 / 3;
            };
            let (comp_dir, context) = compensate_dir(&dir, self.timed("sequential"))?;
            let (_, comp) = kernel_spans(&comp_dir)?;
            let t = even(&both);
            let events =
                kernel_events(&dir).get(&name).map_or(0, |c| c.events) / runs.max(1) as u64;
            self.add(
                suite,
                &name,
                "sequential",
                1,
                &t,
                &odd(&both),
                &odd(&comp),
                events,
                context,
            )
            .block = Some(block);
            if !self.keep {
                for d in [&dir, &comp_dir] {
                    let _ = std::fs::remove_dir_all(d);
                }
            }
        }
        Ok(())
    }

    /// The parallel thread kernels on `threads` threads, in one process
    /// whose raw and full runs of each kernel alternate
    /// [`THREAD_RUNS_PER_REP`] × `reps` times (as the sequential kernels
    /// do), each run after a calibration.
    fn threads(&mut self, threads: usize) -> Result<(), String> {
        let exe = self.tools.bin.join("parallel");
        let dir = self.work.join(format!("threads{threads}"));
        let _ = std::fs::remove_dir_all(&dir);
        let runs = self.reps * THREAD_RUNS_PER_REP;
        let mut c = Command::new(&exe);
        c.args(["--level", "raw,full", "--threads", &threads.to_string()])
            .args(["--reps", &runs.to_string()]);
        if self.quick {
            c.args(["--scale", "test"]);
        }
        self.trace_env(&mut c, &dir);
        run_ok(&mut c, "parallel --level raw,full")?;
        let both = spans(&dir, "kernel:")?;
        let (comp_dir, context) = compensate_dir(&dir, self.timed("parallel"))?;
        let comp = spans(&comp_dir, "kernel:")?;
        let events = kernel_events(&dir);
        // Kernels with self-scheduled loops are also compensated with
        // their iterations handed out again.
        let loops = |name: &String| events.get(name).is_some_and(|c| c.iterations > 0);
        let liberal = if !both.keys().any(loops) {
            None
        } else {
            let opts = Options {
                liberal: Liberal {
                    locks: false,
                    loops: true,
                },
                ..Options::default()
            };
            Some(compensate_with(&dir, "liberal", &opts, &mut Vec::new())?.0)
        };
        let liberal_spans = match &liberal {
            Some(d) => spans(d, "kernel:")?,
            None => BTreeMap::new(),
        };
        for (name, both) in &both {
            let Some(comp) = comp.get(name) else {
                continue;
            };
            let (t, t_m, t_a) = (even(both), odd(both), odd(comp));
            // The region's events over its raw and full runs, per full
            // run (a raw run adds only its region's enter and leave).
            let per = events.get(name).map_or(0, |c| c.events) / runs.max(1) as u64;
            let short = name.trim_start_matches("kernel:");
            let k = self.add(
                "threads", short, "parallel", threads, &t, &t_m, &t_a, per, context,
            );
            if loops(name) {
                k.t_a_liberal = liberal_spans.get(name).map(|s| median(&odd(s)) / 1e9);
            }
        }
        if !self.keep {
            for d in [Some(&dir), Some(&comp_dir), liberal.as_ref()]
                .into_iter()
                .flatten()
            {
                let _ = std::fs::remove_dir_all(d);
            }
        }
        Ok(())
    }

    /// The MPI kernels on `ranks` ranks: raw without the interposition
    /// library (the program's own timing), full under it.
    fn mpi(&mut self, ranks: usize) -> Result<(), String> {
        let exe = self.tools.make("accuracy", &self.work)?;
        let reps = self.reps.to_string();
        let np = ranks.to_string();
        let mpirun = |c: &mut Command| {
            c.args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "none",
                "-np",
            ])
            .arg(&np);
        };
        let scale: &[&str] = if self.quick {
            &["--scale", "test"]
        } else {
            &[]
        };
        let mut c = Command::new("mpirun");
        mpirun(&mut c);
        c.arg(&exe)
            .args(["--level", "raw", "--reps", &reps])
            .args(scale);
        let raw = printed_seconds(&run_ok(&mut c, "mpirun accuracy --level raw")?, "kernel");
        let dir = self.work.join(format!("mpi{ranks}-full"));
        let _ = std::fs::remove_dir_all(&dir);
        let mut c = Command::new("mpirun");
        mpirun(&mut c);
        c.args([
            "-x",
            "LD_PRELOAD",
            "-x",
            "PARALLAX_MODE",
            "-x",
            "PARALLAX_OUT",
            "-x",
            "PARALLAX_CLOCK",
        ])
        .arg(&exe)
        .args(["--level", "full", "--reps", &reps])
        .args(scale)
        .env("LD_PRELOAD", self.tools.preload());
        self.trace_env(&mut c, &dir);
        run_ok(&mut c, "mpirun accuracy --level full")?;
        let full = spans(&dir, "kernel:")?;
        let (comp_dir, context) = compensate_dir(&dir, self.timed("parallel"))?;
        let comp = spans(&comp_dir, "kernel:")?;
        let events = kernel_events(&dir);
        for (name, t) in &raw {
            let region = format!("kernel:{name}");
            let (Some(t_m), Some(t_a)) = (full.get(&region), comp.get(&region)) else {
                continue;
            };
            let per = events.get(&region).map_or(0, |c| c.events) / self.reps.max(1) as u64;
            self.add("mpi", name, "parallel", ranks, t, t_m, t_a, per, context);
        }
        Ok(())
    }
}

/// The even-numbered values (the raw runs of alternating raw and full runs).
fn even(v: &[f64]) -> Vec<f64> {
    v.iter().step_by(2).copied().collect()
}

/// The odd-numbered values (the full runs).
fn odd(v: &[f64]) -> Vec<f64> {
    v.iter().skip(1).step_by(2).copied().collect()
}

/// Events recorded inside the instances of a kernel's region.
#[derive(Clone, Copy, Debug, Default)]
struct Counted {
    /// All of them: an indication of the probe density.
    events: u64,
    /// Iteration events of self-scheduled loops.
    iterations: u64,
}

/// Events recorded inside each top-level region instance of rank 0's first
/// location, summed per region name, over all locations of the run (all
/// locations' events between the region's enter and leave).
fn kernel_events(dir: &Path) -> BTreeMap<String, Counted> {
    let Ok(exp) = Experiment::open(dir) else {
        return BTreeMap::new();
    };
    let locs = trace::locations(&exp);
    // Time windows of the kernel regions on rank 0's first location.
    let mut windows: Vec<(f64, f64, String)> = Vec::new();
    if let Some(loc) = locs.iter().find(|l| l.rank == 0) {
        let p = &exp.processes[loc.process];
        let mut stack: Vec<(u32, f64)> = Vec::new();
        let _ = trace::for_each_event(loc, |e| {
            let t = loc.clock.ns(e.time);
            match e.kind {
                EventKind::Enter { region } => stack.push((region, t)),
                EventKind::Leave { .. } => {
                    if let Some((r, t0)) = stack.pop() {
                        let name = p.region_name(r);
                        if stack.is_empty()
                            && (name.starts_with("kernel:") || name.starts_with("lfk"))
                        {
                            windows.push((t0, t, name));
                        }
                    }
                }
                _ => {}
            }
        });
    }
    let mut out = BTreeMap::new();
    for loc in &locs {
        let mut k = 0;
        let _ = trace::for_each_event(loc, |e| {
            let t = loc.clock.ns(e.time);
            while k < windows.len() && windows[k].1 < t {
                k += 1;
            }
            if k < windows.len() && windows[k].0 <= t {
                let c: &mut Counted = out.entry(windows[k].2.clone()).or_default();
                c.events += 1;
                c.iterations += matches!(e.kind, EventKind::Iteration { .. }) as u64;
            }
        });
    }
    out
}

/// The figures of `ks`, with each kernel's T_a / T - 1 as `error` gives it.
fn group(ks: &[&Kernel], error: fn(&Kernel) -> f64) -> Group {
    let errs: Vec<f64> = ks.iter().map(|k| error(k).abs()).collect();
    let meas: Vec<f64> = ks.iter().map(|k| k.measured_error.abs()).collect();
    let chance: Vec<f64> = ks.iter().map(|k| k.chance_error).collect();
    Group {
        kernels: ks.len(),
        within_context_range: ks
            .iter()
            .filter(|k| matches!((k.t_a_low, k.t_a_high), (Some(lo), Some(hi)) if lo <= k.t && k.t <= hi))
            .count(),
        median_abs_error: round(median(&errs), 4),
        worst_abs_error: round(errs.iter().copied().fold(0.0, f64::max), 4),
        median_abs_measured_error: round(median(&meas), 4),
        median_chance_error: round(median(&chance), 4),
        within_chance: ks
            .iter()
            .filter(|k| error(k).abs() <= k.chance_error)
            .count(),
        below_twice: ks.iter().filter(|k| k.measured_error < 1.0).count(),
    }
}

pub fn main(a: &Args) -> Result<(), String> {
    if let Some(k) = a.kernels.iter().find(|k| !(1..=24).contains(*k)) {
        return Err(format!(
            "--kernels {k}: Livermore kernels are numbered 1 to 24"
        ));
    }
    let tools = Tools::find()?;
    eprintln!("accuracy: building the workloads");
    tools.build(a.suites.iter().any(|s| s == "user" || s == "openmp"))?;
    let temp = a.work.is_none();
    let work = a.work.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("parallax-accuracy-{}", std::process::id()))
    });
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut ctx = Ctx {
        tools,
        work: work.clone(),
        reps: a.reps.max(1),
        quick: a.quick,
        keep: !temp,
        clock: a.clock.clone(),
        buffer: a.buffer.clone(),
        livermore_kernels: a.kernels.clone(),
        timing: BTreeMap::new(),
        kernels: Vec::new(),
    };
    let mut problems = Vec::new();
    let mut user_report = None;
    let mut openmp_report = None;
    for suite in &a.suites {
        eprintln!("accuracy: suite {suite}");
        let r = match suite.as_str() {
            "rust" => {
                let exe = ctx.tools.bin.join("livermore");
                ctx.livermore("rust", &exe, false)
            }
            "c" => ctx
                .tools
                .make("lfk", &work)
                .and_then(|exe| ctx.livermore("c", &exe, true)),
            "threads" => a.threads.iter().try_for_each(|&n| ctx.threads(n)),
            "mpi" => a.ranks.iter().try_for_each(|&n| ctx.mpi(n)),
            "user" => user::run(&ctx.tools, &work, ctx.reps, a.quick, ctx.keep).and_then(|r| {
                let failed = r.failed.join("\n");
                user_report = Some(r);
                if failed.is_empty() {
                    Ok(())
                } else {
                    Err(failed)
                }
            }),
            "openmp" => {
                user::run_openmp(&ctx.tools, &work, ctx.reps, a.quick, ctx.keep).and_then(|r| {
                    let failed = r.failed.join("\n");
                    openmp_report = Some(r);
                    if failed.is_empty() {
                        Ok(())
                    } else {
                        Err(failed)
                    }
                })
            }
            other => Err(format!(
                "unknown suite {other:?} (rust, c, threads, mpi, user, openmp)"
            )),
        };
        if let Err(e) = r {
            problems.push(format!("{suite}: {e}"));
        }
    }
    let seq: Vec<&Kernel> = ctx
        .kernels
        .iter()
        .filter(|k| k.kind == "sequential")
        .collect();
    let par: Vec<&Kernel> = ctx
        .kernels
        .iter()
        .filter(|k| k.kind == "parallel")
        .collect();
    let mut summary = BTreeMap::new();
    summary.insert("sequential", group(&seq, |k| k.compensated_error));
    summary.insert("parallel", group(&par, |k| k.compensated_error));
    if par.iter().any(|k| k.t_a_liberal.is_some()) {
        summary.insert("parallel_liberal_loops", group(&par, Kernel::liberal_error));
    }
    let report = Report {
        machine: crate::machine::describe(),
        reps: ctx.reps,
        clock: ctx.clock.clone(),
        buffer: ctx.buffer.clone(),
        summary,
        compensation_events_per_s: round(
            compensation_speed(&ctx.timing.values().flatten().copied().collect::<Vec<_>>()),
            0,
        ),
        compensation_events_per_s_by_kind: ctx
            .timing
            .iter()
            .map(|(&k, t)| (k, round(compensation_speed(t), 0)))
            .collect(),
        kernels: ctx.kernels,
        user: user_report,
        openmp: openmp_report,
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print_text(&report);
    }
    if temp {
        let _ = std::fs::remove_dir_all(&work);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn print_text(r: &Report) {
    let suites: Vec<&user::UserReport> = r.user.iter().chain(&r.openmp).collect();
    for u in &suites {
        user::print_text(u);
    }
    if !suites.is_empty() && r.kernels.is_empty() {
        return;
    }
    println!("probes' clock: {}", r.clock);
    println!(
        "{:<8} {:<14} {:>5} {:>6} {:>11} {:>11} {:>11} {:>9} {:>9} {:>8}",
        "suite",
        "kernel",
        "width",
        "block",
        "T (ms)",
        "T_m (ms)",
        "T_a (ms)",
        "T_m/T",
        "T_a/T",
        "chance"
    );
    for k in &r.kernels {
        println!(
            "{:<8} {:<14} {:>5} {:>6} {:>11.3} {:>11.3} {:>11.3} {:>9.3} {:>9.3} {:>7.1}%",
            k.suite,
            k.name,
            k.width,
            k.block.map_or("-".to_string(), |b| b.to_string()),
            k.t * 1e3,
            k.t_m * 1e3,
            k.t_a * 1e3,
            1.0 + k.measured_error,
            1.0 + k.compensated_error,
            100.0 * k.chance_error
        );
    }
    for k in r.kernels.iter().filter(|k| k.t_a_liberal.is_some()) {
        println!(
            "{} {} on {}: T_a {:.3} ms, T_a/T {:.3} with its iterations handed out again (--liberal=loops)",
            k.suite,
            k.name,
            k.width,
            k.t_a_liberal.unwrap_or(0.0) * 1e3,
            1.0 + k.liberal_error()
        );
    }
    for (kind, g) in &r.summary {
        println!(
            "{kind}: {} kernels, median |T_a/T - 1| {:.2}%, worst {:.2}% (uncompensated median {:.1}%); by chance alone {:.2}% (median), {} kernels within it; T within the context range in {}; T_m under 2 T in {}",
            g.kernels,
            100.0 * g.median_abs_error,
            100.0 * g.worst_abs_error,
            100.0 * g.median_abs_measured_error,
            100.0 * g.median_chance_error,
            g.within_chance,
            g.within_context_range,
            g.below_twice
        );
    }
    let by_kind: Vec<String> = r
        .compensation_events_per_s_by_kind
        .iter()
        .map(|(k, v)| format!("{k} kernels {:.1}", v / 1e6))
        .collect();
    println!(
        "compensation: {:.1} M events/s on one core ({})",
        r.compensation_events_per_s / 1e6,
        by_kind.join(", ")
    );
}
