//! The `user` suite of `parallax-bench accuracy`: compensation judged on
//! programs measured the way users measure them.
//!
//! The C, C++ and Fortran programs of workloads/user are built by their
//! Makefile with `-O2 -g -finstrument-functions` (mpicc for MPI). Each has
//! a function `timed_kernel` whose wall time the program takes itself
//! (clock_gettime(CLOCK_MONOTONIC) around the call) and prints as a JSON
//! line, one per rank. Every kernel runs, alternately and `reps` times
//! each:
//!
//! - plain: the same binary with nothing preloaded (the compiler's hooks
//!   are the C library's empty ones): T, the largest printed time of a
//!   run (over its ranks);
//! - measured under `parallax run` with its default settings, and with
//!   `--throttle off`: T_m, the largest inclusive time of `timed_kernel`
//!   over the experiment's locations; `parallax compensate` then writes
//!   the approximated experiment, where the same figure is T_a.
//!
//! Figures are medians over the repetitions; the error of a kernel is
//! T_a/T - 1, beside the uncompensated T_m/T - 1.
//!
//! The `openmp` suite is the same for workloads/user/openmp.c (static,
//! self-scheduled, ordered and critical loops of a team of two, built by
//! gcc with `-fopenmp`), compensated with the liberal model of loops
//! (`--liberal=loops`: the chunks handed out again in approximated time).
//! Beside it, the program built without the hooks (`openmp_plain`) runs
//! plain and under `parallax run --mode profile` and `--mode trace`: the
//! whole-run overhead of the OpenMP recording alone, from the times the
//! program printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use parallax_model::experiment::Experiment;
use parallax_view::profile::ExperimentProfile;

use super::{printed_seconds, run_ok, Tools};
use crate::stats::{chance_error, median, round};

/// The function whose time every program of the suite reports.
const KERNEL_FUNCTION: &str = "timed_kernel";

/// The plain time each kernel is sized for, seconds: at least 0.3 s is
/// asked of every kernel, and this machine's speed varies by a few
/// percent from run to run.
const TARGET_S: f64 = 0.5;

/// The same, for `--quick` (a check that everything runs).
const QUICK_TARGET_S: f64 = 0.02;

/// Plain runs at the pilot size, to size a kernel.
const PILOTS: usize = 3;

use super::suites::{Spec, Suite, OPENMP, USER};

/// One kernel under one setting; times in seconds.
#[derive(Clone, Debug, Serialize)]
pub struct UserKernel {
    /// `program kernel`, unique in the suite.
    pub id: String,
    pub program: String,
    pub name: String,
    /// c, c++ or fortran.
    pub language: String,
    /// hooks, pthread, mpi or mpi+threads.
    pub path: String,
    /// default or throttle-off.
    pub settings: String,
    /// fine, medium or coarse (sequential kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granularity: Option<String>,
    /// MPI ranks (1 for a program without MPI).
    pub ranks: usize,
    /// The program's size argument (iterations or rounds).
    pub size: u64,
    /// T_m / T.
    pub dilation: f64,
    /// Dilation band: "<=2", "2-10" or ">=10".
    pub band: String,
    #[serde(rename = "T")]
    pub t: f64,
    #[serde(rename = "T_m")]
    pub t_m: f64,
    #[serde(rename = "T_a")]
    pub t_a: f64,
    /// T_a / T - 1.
    pub error: f64,
    /// T_m / T - 1.
    pub measured_error: f64,
    /// The least and largest T_a_i / T - 1 over the measured runs (T the
    /// median of the plain runs).
    pub error_min: f64,
    pub error_max: f64,
    /// The |T_a/T - 1| an exact compensation would show by chance, from
    /// how the plain runs varied ([`chance_error`]).
    pub chance_error: f64,
    /// Every plain run's T, measured run's T_m and its T_a, in run order.
    #[serde(rename = "T_reps")]
    pub t_reps: Vec<f64>,
    #[serde(rename = "T_m_reps")]
    pub t_m_reps: Vec<f64>,
    #[serde(rename = "T_a_reps")]
    pub t_a_reps: Vec<f64>,
    /// The kernel's time as the program printed it in the measured runs
    /// (median): T_m as the program saw it.
    #[serde(rename = "T_m_printed")]
    pub t_m_printed: f64,
    /// Events recorded per measured run (median).
    pub events: u64,
    /// Functions the interposition library stopped measuring (throttled),
    /// per measured run (median).
    pub throttled_functions: u64,
    /// Locations where the kernel function was recorded.
    pub locations: usize,
    /// Measured runs whose range of T_a at the fastest and slowest speed
    /// the cores ran at (`parallax compensate`'s speed range) holds T, of
    /// the runs that have one.
    pub within_speed_range: usize,
    pub with_speed_range: usize,
}

/// The median and worst |T_a/T - 1| of a group of kernels.
#[derive(Debug, Serialize)]
pub struct UserGroup {
    pub kernels: usize,
    pub median_abs_error: f64,
    pub worst_abs_error: f64,
    /// The same uncompensated: median |T_m/T - 1|.
    pub median_abs_measured_error: f64,
    pub median_chance_error: f64,
}

/// What the suite found.
#[derive(Debug, Serialize)]
pub struct UserReport {
    /// `user` or `openmp`.
    pub suite: String,
    /// Plain and measured runs of each kernel and setting.
    pub reps: usize,
    /// The plain time each kernel was sized for, seconds.
    pub target_t_s: f64,
    /// How long the suite took, seconds.
    pub seconds: f64,
    pub kernels: Vec<UserKernel>,
    /// By setting, then by `path` and by dilation `band`.
    pub summary: BTreeMap<String, BTreeMap<&'static str, BTreeMap<String, UserGroup>>>,
    /// Kernels that could not be measured, with the reason.
    pub failed: Vec<String>,
    /// The whole-run overhead of the program without hooks (`openmp`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overhead: Vec<Overhead>,
}

/// The whole-run overhead of one kernel of a program without hooks: the
/// time it printed, plain and measured in each mode (medians of
/// interleaved runs), seconds.
#[derive(Clone, Debug, Serialize)]
pub struct Overhead {
    pub program: String,
    pub kernel: String,
    pub size: u64,
    #[serde(rename = "T")]
    pub t: f64,
    #[serde(rename = "T_profile")]
    pub t_profile: f64,
    #[serde(rename = "T_trace")]
    pub t_trace: f64,
    /// T_profile / T - 1 and T_trace / T - 1.
    pub profile: f64,
    pub trace: f64,
    #[serde(rename = "T_reps")]
    pub t_reps: Vec<f64>,
    #[serde(rename = "T_profile_reps")]
    pub t_profile_reps: Vec<f64>,
    #[serde(rename = "T_trace_reps")]
    pub t_trace_reps: Vec<f64>,
}

/// The measured figures of one run.
struct Measured {
    t_m: f64,
    t_a: f64,
    /// How much shorter and longer T_a would be at the fastest and
    /// slowest speed the cores ran at (`parallax compensate`'s `speed_ns`,
    /// the widest over locations), seconds.
    speed: Option<(f64, f64)>,
    printed: f64,
    events: u64,
    throttled: u64,
    locations: usize,
}

/// Runs the `user` suite: `work` holds the programs and, while each runs,
/// its experiments (kept when `keep`).
pub fn run(
    tools: &Tools,
    work: &Path,
    reps: usize,
    quick: bool,
    keep: bool,
) -> Result<UserReport, String> {
    run_suite(&USER, tools, work, reps, quick, keep)
}

/// Runs the `openmp` suite, as [`run`].
pub fn run_openmp(
    tools: &Tools,
    work: &Path,
    reps: usize,
    quick: bool,
    keep: bool,
) -> Result<UserReport, String> {
    run_suite(&OPENMP, tools, work, reps, quick, keep)
}

fn run_suite(
    suite: &Suite,
    tools: &Tools,
    work: &Path,
    reps: usize,
    quick: bool,
    keep: bool,
) -> Result<UserReport, String> {
    let started = Instant::now();
    let dir = work.join("user");
    let programs = make(tools, &dir)?;
    let parallax = tools.bin.join("parallax");
    let target = if quick { QUICK_TARGET_S } else { TARGET_S };
    let mut kernels = Vec::new();
    let mut overhead = Vec::new();
    let mut failed = Vec::new();
    for spec in suite.specs {
        let id = format!("{} {}", spec.program, spec.kernel);
        let ctx = Ctx {
            suite,
            spec,
            exe: programs.join(spec.program),
            parallax: &parallax,
            dir: &dir,
            keep,
        };
        match ctx.kernel(reps, target, quick) {
            Ok(rows) => kernels.extend(rows),
            Err(e) => {
                eprintln!("accuracy: {} {id}: {e}", suite.name);
                failed.push(format!("{id}: {e}"));
            }
        }
        if let Some(program) = suite.overhead_program {
            let ctx = Ctx {
                exe: programs.join(program),
                ..ctx
            };
            match ctx.overhead(program, reps, target, quick) {
                Ok(row) => overhead.push(row),
                Err(e) => failed.push(format!("{program} {}: {e}", spec.kernel)),
            }
        }
    }
    let mut summary = BTreeMap::new();
    for &(settings, _) in suite.settings {
        let of: Vec<&UserKernel> = kernels.iter().filter(|k| k.settings == settings).collect();
        let mut by: BTreeMap<&'static str, BTreeMap<String, UserGroup>> = BTreeMap::new();
        by.insert("path", groups(&of, |k| k.path.clone()));
        by.insert("band", groups(&of, |k| k.band.clone()));
        summary.insert(settings.to_string(), by);
    }
    Ok(UserReport {
        suite: suite.name.to_string(),
        reps,
        target_t_s: target,
        seconds: round(started.elapsed().as_secs_f64(), 1),
        kernels,
        summary,
        failed,
        overhead,
    })
}

/// Builds the programs of workloads/user into `dir`.
fn make(tools: &Tools, dir: &Path) -> Result<PathBuf, String> {
    run_ok(
        Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(tools.root.join("workloads/user"))
            .arg(format!("O={}", dir.display())),
        "make -C workloads/user",
    )?;
    Ok(dir.to_path_buf())
}

/// The dilation band of `d` = T_m/T.
fn band(d: f64) -> &'static str {
    if d <= 2.0 {
        "<=2"
    } else if d < 10.0 {
        "2-10"
    } else {
        ">=10"
    }
}

fn groups(ks: &[&UserKernel], key: fn(&UserKernel) -> String) -> BTreeMap<String, UserGroup> {
    let mut by: BTreeMap<String, Vec<&UserKernel>> = BTreeMap::new();
    for k in ks {
        by.entry(key(k)).or_default().push(k);
    }
    by.into_iter()
        .map(|(name, ks)| {
            let errs: Vec<f64> = ks.iter().map(|k| k.error.abs()).collect();
            let meas: Vec<f64> = ks.iter().map(|k| k.measured_error.abs()).collect();
            let chance: Vec<f64> = ks.iter().map(|k| k.chance_error).collect();
            let g = UserGroup {
                kernels: ks.len(),
                median_abs_error: round(median(&errs), 4),
                worst_abs_error: round(errs.iter().copied().fold(0.0, f64::max), 4),
                median_abs_measured_error: round(median(&meas), 4),
                median_chance_error: round(median(&chance), 4),
            };
            (name, g)
        })
        .collect()
}

/// Times in seconds rounded to the microsecond, for the report.
fn rounded(v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| round(x, 6)).collect()
}

/// The kernel's time a run printed: the largest over its ranks, seconds.
fn printed(stdout: &str, kernel: &str) -> Result<f64, String> {
    printed_seconds(stdout, "kernel")
        .remove(kernel)
        .and_then(|v| v.into_iter().reduce(f64::max))
        .map(|ns| ns / 1e9)
        .ok_or_else(|| format!("the program printed no time for {kernel}"))
}

/// The largest inclusive time of [`KERNEL_FUNCTION`] over the locations of
/// the experiment in `dir`, seconds, and on how many locations it ran.
fn kernel_time(dir: &Path) -> Result<(f64, usize), String> {
    let exp = Experiment::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let prof = ExperimentProfile::load(&exp).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut most: Option<f64> = None;
    let mut locations = 0;
    for i in 0..prof.locations.len() {
        if let Some(row) = prof
            .flat_location(&exp, i)
            .into_iter()
            .find(|r| r.region == KERNEL_FUNCTION && r.times.count > 0)
        {
            locations += 1;
            most = Some(most.map_or(row.times.inclusive, |m| m.max(row.times.inclusive)));
        }
    }
    most.map(|ns| (ns / 1e9, locations))
        .ok_or_else(|| format!("{}: no location recorded {KERNEL_FUNCTION}", dir.display()))
}

/// Functions the measured processes stopped measuring.
fn throttled(dir: &Path) -> u64 {
    Experiment::open(dir).map_or(0, |exp| {
        exp.processes
            .iter()
            .flat_map(|p| &p.properties)
            .filter(|(k, _)| k == "throttled")
            .count() as u64
    })
}

/// A command without Parallax in its environment: nothing preloaded, no
/// PARALLAX_* variable of the bench's own environment.
fn clean(program: &Path) -> Command {
    let mut c = Command::new(program);
    c.env_remove("LD_PRELOAD");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("PARALLAX_") {
            c.env_remove(k);
        }
    }
    c
}

struct Ctx<'a> {
    suite: &'a Suite,
    spec: &'a Spec,
    exe: PathBuf,
    parallax: &'a Path,
    dir: &'a Path,
    keep: bool,
}

impl Ctx<'_> {
    /// The program's command line at size `n`: under mpirun for an MPI
    /// program (every rank may use every core: the hybrid kernel's threads
    /// would otherwise share one).
    fn command_line(&self, n: u64) -> Vec<String> {
        let mut v = Vec::new();
        if self.spec.ranks > 0 {
            v.extend(
                [
                    "mpirun",
                    "--allow-run-as-root",
                    "--oversubscribe",
                    "--bind-to",
                    "none",
                    "-np",
                ]
                .map(String::from),
            );
            v.push(self.spec.ranks.to_string());
        }
        v.push(self.exe.display().to_string());
        v.push(self.spec.kernel.to_string());
        v.push(n.to_string());
        v
    }

    fn what(&self) -> String {
        format!("{} {}", self.spec.program, self.spec.kernel)
    }

    /// One plain run: T, seconds.
    fn plain(&self, n: u64) -> Result<f64, String> {
        let line = self.command_line(n);
        let mut c = clean(Path::new(&line[0]));
        c.args(&line[1..]);
        let out = run_ok(&mut c, &format!("{} (plain)", self.what()))?;
        printed(&out, self.spec.kernel)
    }

    /// One measured run under `parallax run OPTIONS`, compensated.
    fn measured(
        &self,
        n: u64,
        settings: &str,
        options: &[&str],
        rep: usize,
    ) -> Result<Measured, String> {
        let name = format!(
            "{}-{}-{settings}-{rep}",
            self.spec.program, self.spec.kernel
        );
        let exp = self.dir.join(&name);
        let comp = self.dir.join(format!("{name}-compensated"));
        for d in [&exp, &comp] {
            let _ = std::fs::remove_dir_all(d);
        }
        let mut c = clean(self.parallax);
        c.args(["run", "--no-report", "--no-db", "--out"])
            .arg(&exp)
            .args(options)
            .arg("--")
            .args(self.command_line(n));
        let out = run_ok(
            &mut c,
            &format!("parallax run {settings} -- {}", self.what()),
        )?;
        let printed = printed(&out, self.spec.kernel)?;
        let mut c = clean(self.parallax);
        c.arg("compensate")
            .arg(&exp)
            .arg("--out")
            .arg(&comp)
            .arg("--json")
            .args(self.suite.compensate);
        let summary = run_ok(&mut c, &format!("parallax compensate ({})", self.what()))?;
        let summary: serde_json::Value = serde_json::from_str(&summary)
            .map_err(|e| format!("parallax compensate --json: {e}"))?;
        let locs = summary["locations"].as_array().cloned().unwrap_or_default();
        let events = locs.iter().filter_map(|l| l["events"].as_u64()).sum();
        let speed = locs
            .iter()
            .filter_map(|l| Some((l["speed_ns"][0].as_f64()?, l["speed_ns"][1].as_f64()?)))
            .reduce(|a, b| (a.0.max(b.0), a.1.max(b.1)))
            .map(|(shorter, longer)| (shorter * 1e-9, longer * 1e-9));
        let (t_m, locations) = kernel_time(&exp)?;
        let (t_a, _) = kernel_time(&comp)?;
        let throttled = throttled(&exp);
        if !self.keep {
            for d in [&exp, &comp] {
                let _ = std::fs::remove_dir_all(d);
            }
        }
        Ok(Measured {
            t_m,
            t_a,
            speed,
            printed,
            events,
            throttled,
            locations,
        })
    }

    /// Sizes the kernel from pilot runs (with `quick`, a twentieth of the
    /// pilot size), then runs it plain and under every setting in turn,
    /// `reps` times: one row per setting.
    fn kernel(&self, reps: usize, target: f64, quick: bool) -> Result<Vec<UserKernel>, String> {
        let n = self.size(target, quick)?;
        let settings = self.suite.settings;
        let mut t = Vec::new();
        let mut runs: Vec<Vec<Measured>> = settings.iter().map(|_| Vec::new()).collect();
        for rep in 0..reps {
            t.push(self.plain(n)?);
            let mut line = format!("plain {:.3} s", t[rep]);
            for (i, &(settings, options)) in settings.iter().enumerate() {
                let m = self.measured(n, settings, options, rep)?;
                line += &format!(", {settings} T_m {:.3} s T_a {:.3} s", m.t_m, m.t_a);
                runs[i].push(m);
            }
            eprintln!(
                "accuracy: {} {} {}/{reps}: {line}",
                self.suite.name,
                self.what(),
                rep + 1
            );
        }
        let t_med = median(&t);
        if !quick && t_med < 0.3 {
            eprintln!(
                "accuracy: {} {}: warning: T = {t_med:.3} s, under the 0.3 s asked of a kernel",
                self.suite.name,
                self.what()
            );
        }
        Ok(settings
            .iter()
            .zip(runs)
            .map(|(&(settings, _), ms)| self.row(settings, n, &t, &ms))
            .collect())
    }

    /// The program's whole-run overhead in profile and in trace mode:
    /// runs of `program` plain and measured, interleaved, `reps` times.
    fn overhead(
        &self,
        program: &str,
        reps: usize,
        target: f64,
        quick: bool,
    ) -> Result<Overhead, String> {
        let n = self.size(target, quick)?;
        let (mut t, mut tp, mut tt) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..reps {
            t.push(self.plain(n)?);
            tp.push(self.printed_under(n, "profile")?);
            tt.push(self.printed_under(n, "trace")?);
            eprintln!(
                "accuracy: {} {program} {} {}/{reps}: plain {:.3} s, profile {:.3} s, trace {:.3} s",
                self.suite.name,
                self.spec.kernel,
                rep + 1,
                t[rep],
                tp[rep],
                tt[rep]
            );
        }
        let (m, mp, mt) = (median(&t), median(&tp), median(&tt));
        Ok(Overhead {
            program: program.to_string(),
            kernel: self.spec.kernel.to_string(),
            size: n,
            t: round(m, 6),
            t_profile: round(mp, 6),
            t_trace: round(mt, 6),
            profile: round(mp / m - 1.0, 4),
            trace: round(mt / m - 1.0, 4),
            t_reps: rounded(&t),
            t_profile_reps: rounded(&tp),
            t_trace_reps: rounded(&tt),
        })
    }

    /// The kernel's time as the program printed it under `parallax run
    /// --mode MODE`, seconds.
    fn printed_under(&self, n: u64, mode: &str) -> Result<f64, String> {
        let exp = self.dir.join(format!(
            "{}-{}-{mode}",
            self.exe.file_name().unwrap_or_default().to_string_lossy(),
            self.spec.kernel
        ));
        let _ = std::fs::remove_dir_all(&exp);
        let mut c = clean(self.parallax);
        c.args(["run", "--no-report", "--no-db", "--mode", mode, "--out"])
            .arg(&exp)
            .arg("--")
            .args(self.command_line(n));
        let out = run_ok(
            &mut c,
            &format!("parallax run --mode {mode} -- {}", self.what()),
        );
        let _ = std::fs::remove_dir_all(&exp);
        printed(&out?, self.spec.kernel)
    }

    /// The kernel's size for `target` seconds: from pilot runs, or with
    /// `quick` a twentieth of the pilot size.
    fn size(&self, target: f64, quick: bool) -> Result<u64, String> {
        Ok(if quick {
            (self.spec.pilot / 20).max(1)
        } else {
            // The fastest of three pilot runs, so that a run slowed by the
            // machine does not leave the kernel short of the target.
            let mut fastest = f64::INFINITY;
            for _ in 0..PILOTS {
                fastest = fastest.min(self.plain(self.spec.pilot)?);
            }
            let n = ((self.spec.pilot as f64 * target / fastest.max(1e-6)).round() as u64).max(1);
            eprintln!(
                "accuracy: {} {}: size {n} (pilot {}: {fastest:.3} s)",
                self.suite.name,
                self.what(),
                self.spec.pilot
            );
            n
        })
    }

    fn row(&self, settings: &str, n: u64, t: &[f64], ms: &[Measured]) -> UserKernel {
        let s = self.spec;
        let pick = |f: fn(&Measured) -> f64| ms.iter().map(f).collect::<Vec<f64>>();
        let (t_m_reps, t_a_reps) = (pick(|m| m.t_m), pick(|m| m.t_a));
        let (t_med, t_m, t_a) = (median(t), median(&t_m_reps), median(&t_a_reps));
        let errors: Vec<f64> = t_a_reps.iter().map(|x| x / t_med - 1.0).collect();
        let count = |f: fn(&Measured) -> u64| {
            median(&ms.iter().map(|m| f(m) as f64).collect::<Vec<_>>()).round() as u64
        };
        let dilation = t_m / t_med;
        UserKernel {
            id: format!("{} {}", s.program, s.kernel),
            program: s.program.to_string(),
            name: s.kernel.to_string(),
            language: s.language.to_string(),
            path: s.path.name().to_string(),
            settings: settings.to_string(),
            granularity: s.granularity.map(String::from),
            ranks: s.ranks.max(1),
            size: n,
            dilation: round(dilation, 3),
            band: band(dilation).to_string(),
            t: round(t_med, 6),
            t_m: round(t_m, 6),
            t_a: round(t_a, 6),
            error: round(t_a / t_med - 1.0, 4),
            measured_error: round(dilation - 1.0, 4),
            error_min: round(errors.iter().copied().fold(f64::INFINITY, f64::min), 4),
            error_max: round(errors.iter().copied().fold(f64::NEG_INFINITY, f64::max), 4),
            chance_error: round(chance_error(t), 4),
            t_reps: rounded(t),
            t_m_reps: rounded(&t_m_reps),
            t_a_reps: rounded(&t_a_reps),
            t_m_printed: round(median(&pick(|m| m.printed)), 6),
            events: count(|m| m.events),
            throttled_functions: count(|m| m.throttled),
            locations: ms.iter().map(|m| m.locations).max().unwrap_or(0),
            within_speed_range: ms
                .iter()
                .filter(|m| {
                    m.speed.is_some_and(|(shorter, longer)| {
                        (m.t_a - shorter..=m.t_a + longer).contains(&t_med)
                    })
                })
                .count(),
            with_speed_range: ms.iter().filter(|m| m.speed.is_some()).count(),
        }
    }
}

/// The suite's table and summary as text.
pub fn print_text(r: &UserReport) {
    println!(
        "{} programs (-O2 -finstrument-functions, parallax run): {} plain and measured runs each, {:.0} s",
        r.suite, r.reps, r.seconds
    );
    println!(
        "{:<12} {:<8} {:<8} {:<9} {:<13} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8} {:>17} {:>7}",
        "path",
        "language",
        "program",
        "kernel",
        "settings",
        "T (ms)",
        "T_m (ms)",
        "T_a (ms)",
        "T_m/T",
        "T_a/T-1",
        "T_m/T-1",
        "T_a/T-1 min..max",
        "chance"
    );
    for k in &r.kernels {
        println!(
            "{:<12} {:<8} {:<8} {:<9} {:<13} {:>9.1} {:>9.1} {:>9.1} {:>7.2} {:>7.1}% {:>7.0}% {:>7.1}%..{:>6.1}% {:>6.1}%",
            k.path,
            k.language,
            k.program,
            k.name,
            k.settings,
            k.t * 1e3,
            k.t_m * 1e3,
            k.t_a * 1e3,
            k.dilation,
            100.0 * k.error,
            100.0 * k.measured_error,
            100.0 * k.error_min,
            100.0 * k.error_max,
            100.0 * k.chance_error
        );
    }
    for (settings, by) in &r.summary {
        for (what, groups) in by {
            for (key, g) in groups {
                println!(
                    "{settings}, {what} {key}: {} kernels, median |T_a/T - 1| {:.1}%, worst {:.1}% (uncompensated median {:.0}%); by chance alone {:.1}%",
                    g.kernels,
                    100.0 * g.median_abs_error,
                    100.0 * g.worst_abs_error,
                    100.0 * g.median_abs_measured_error,
                    100.0 * g.median_chance_error
                );
            }
        }
    }
    let within: usize = r.kernels.iter().map(|k| k.within_speed_range).sum();
    let with: usize = r.kernels.iter().map(|k| k.with_speed_range).sum();
    println!(
        "T within the approximated range at the cores' fastest and slowest speed: {within} of {with} measured runs"
    );
    if !r.overhead.is_empty() {
        println!("whole-run overhead without the hooks (printed times, medians):");
        println!(
            "{:<14} {:<9} {:>9} {:>12} {:>10} {:>10} {:>8}",
            "program", "kernel", "T (ms)", "profile (ms)", "trace (ms)", "profile", "trace"
        );
        for o in &r.overhead {
            println!(
                "{:<14} {:<9} {:>9.1} {:>12.1} {:>10.1} {:>9.1}% {:>7.1}%",
                o.program,
                o.kernel,
                o.t * 1e3,
                o.t_profile * 1e3,
                o.t_trace * 1e3,
                100.0 * o.profile,
                100.0 * o.trace
            );
        }
    }
    for f in &r.failed {
        println!("failed: {f}");
    }
}
