//! `parallax validate -- CMD ARGS`: how close compensation comes to the
//! program's own run without Parallax, on the user's program.
//!
//! The program runs plainly (nothing preloaded, no PARALLAX_* variable)
//! and under `parallax run`, alternately, N times each. Each measured run
//! is compensated, and its approximated whole-run time is its measured
//! wall time less what compensation removed between the run's first and
//! last event (T_m - T_a of the experiment). What lies outside those
//! events (process start-up, library loading, Parallax's own start-up and
//! end) stays as measured.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};
use serde_json::{json, Value};

use parallax::Mode;
use parallax_analysis::compensate::{self, Options, Summary};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::{manifest_text, Experiment};

use crate::console::note;
use crate::demo::parse_mode;

/// Arguments of `parallax validate`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  parallax validate -- ./app input.dat
  parallax validate --runs 9 --throttle off -- ./app
  parallax validate --mode trace --clock tsc-fenced --json -- ./app > check.json
  parallax validate -- mpirun -np 4 ./app

The approximated time of a measured run is its wall time less what
compensation removed between its first and its last recorded event. Process
start-up, library loading and Parallax's own start-up and end lie outside
those events and stay as measured (shown as \"outside the events\"). MPI
jobs are compared as whole runs: the plain runs give no per-rank times;
per rank, the measured and approximated times between each rank's first and
last event are shown. The program runs with empty input (stdin from
/dev/null); its output is shown once, from the first plain run.")]
pub struct Args {
    /// Plain runs and measured runs, N of each, alternately.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,
    /// What to record, as `parallax run --mode` [default: both].
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
    /// Trace buffer per thread, as `parallax run --buffer`.
    #[arg(long)]
    pub buffer: Option<String>,
    /// How probes read the clock, as `parallax run --clock`.
    #[arg(long, value_parser = ["tsc", "tsc-fenced", "monotonic"])]
    pub clock: Option<String>,
    /// CALLS:MICROSECONDS or `off`, as `parallax run --throttle`.
    #[arg(long, value_name = "CALLS:MICROSECONDS")]
    pub throttle: Option<String>,
    /// Which POSIX-thread calls are recorded, as `parallax run --pthread`.
    #[arg(long, value_parser = ["app", "all", "off"])]
    pub pthread: Option<String>,
    /// Measure only matching compiler-instrumented functions, as `parallax
    /// run --include` (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
    /// Do not measure matching functions, as `parallax run --exclude`
    /// (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// A filter file, as `parallax run --filter-file`.
    #[arg(long, value_name = "FILE")]
    pub filter_file: Option<PathBuf>,
    /// Do not measure the processes the program starts, as `parallax run
    /// --no-children`.
    #[arg(long)]
    pub no_children: bool,
    /// Do not show the program's output.
    #[arg(long)]
    pub quiet: bool,
    /// Keep every measured experiment and its compensation in DIR (a new
    /// or empty directory) [default: a temporary directory, removed].
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Print JSON instead of text (the program's output then goes to
    /// stderr).
    #[arg(long)]
    pub json: bool,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

impl Args {
    /// The options given to `parallax run` for the measured runs.
    fn run_options(&self) -> anyhow::Result<Vec<String>> {
        let mut o = Vec::new();
        let mut pair = |k: &str, v: &str| {
            o.push(k.to_string());
            o.push(v.to_string());
        };
        if let Some(m) = self.mode {
            pair("--mode", m.name());
        }
        for (k, v) in [
            ("--buffer", &self.buffer),
            ("--clock", &self.clock),
            ("--throttle", &self.throttle),
            ("--pthread", &self.pthread),
        ] {
            if let Some(v) = v {
                pair(k, v);
            }
        }
        for p in &self.include {
            pair("--include", p);
        }
        for p in &self.exclude {
            pair("--exclude", p);
        }
        if let Some(f) = &self.filter_file {
            // The measured runs start in this directory too, but an
            // absolute path says which file was meant whatever happens.
            let f = std::fs::canonicalize(f)
                .with_context(|| format!("cannot read the filter file {}", f.display()))?;
            pair("--filter-file", &f.to_string_lossy());
        }
        if self.no_children {
            o.push("--no-children".into());
        }
        Ok(o)
    }
}

/// How much of a stream is kept: its beginning (to show the program's
/// output) and its end (to show why it failed).
const HEAD: usize = 256 << 10;
const TAIL: usize = 16 << 10;

/// The output of one stream of a run, bounded.
#[derive(Default)]
struct Captured {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
}

impl Captured {
    fn read(mut r: impl Read) -> Captured {
        let mut c = Captured::default();
        let mut buf = [0u8; 8192];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            c.total += n as u64;
            let room = (HEAD - c.head.len()).min(n);
            c.head.extend_from_slice(&buf[..room]);
            c.tail.extend_from_slice(&buf[room..n]);
            if c.tail.len() > 2 * TAIL {
                c.tail.drain(..c.tail.len() - TAIL);
            }
        }
        c
    }

    /// All that was kept, with a note where bytes were left out.
    fn shown(&self) -> Vec<u8> {
        let mut v = self.head.clone();
        let kept = (self.head.len() + self.tail.len()) as u64;
        if self.total > kept {
            v.extend_from_slice(
                format!("\n[... {} bytes not shown ...]\n", self.total - kept).as_bytes(),
            );
        }
        v.extend_from_slice(&self.tail);
        v
    }

    /// The last lines kept, for an error message.
    fn last_lines(&self, n: usize) -> String {
        let text = if self.tail.is_empty() {
            String::from_utf8_lossy(&self.head).into_owned()
        } else {
            String::from_utf8_lossy(&self.tail).into_owned()
        };
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

/// One run of a command: how it ended, its wall time (spawn to exit) and
/// its output.
struct Ran {
    status: ExitStatus,
    secs: f64,
    out: Captured,
    err: Captured,
}

/// Runs `c` with empty input, its output captured.
fn run_captured(c: &mut Command, shown: &str) -> anyhow::Result<Ran> {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = c.spawn().with_context(|| format!("cannot run `{shown}`"))?;
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let (out, err) = std::thread::scope(|s| {
        let o = s.spawn(|| Captured::read(out));
        let e = s.spawn(|| Captured::read(err));
        (o.join(), e.join())
    });
    let status = child
        .wait()
        .with_context(|| format!("cannot wait for `{shown}`"))?;
    let secs = started.elapsed().as_secs_f64();
    Ok(Ran {
        status,
        secs,
        out: out.unwrap_or_default(),
        err: err.unwrap_or_default(),
    })
}

fn describe(s: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// The environment without Parallax: no PARALLAX_* variable (a program
/// linked with the runtime then records nothing) and no interposition
/// library in LD_PRELOAD.
fn without_parallax(c: &mut Command) {
    for (k, v) in std::env::vars_os() {
        let key = k.to_string_lossy();
        if key.starts_with("PARALLAX_") {
            c.env_remove(&k);
        } else if key == "LD_PRELOAD" {
            let kept: Vec<String> = v
                .to_string_lossy()
                .split([':', ' '])
                .filter(|l| !l.is_empty() && !l.ends_with("libparallax_preload.so"))
                .map(String::from)
                .collect();
            if kept.is_empty() {
                c.env_remove("LD_PRELOAD");
            } else {
                c.env("LD_PRELOAD", kept.join(":"));
            }
        }
    }
}

/// A directory for the experiments: `keep` (new or empty), or a new
/// temporary one. The second value says whether to remove it at the end.
fn work_dir(keep: Option<&Path>) -> anyhow::Result<(PathBuf, bool)> {
    if let Some(k) = keep {
        if k.exists() {
            let empty = std::fs::read_dir(k)
                .with_context(|| format!("cannot read {}", k.display()))?
                .next()
                .is_none();
            if !empty {
                bail!("--keep {}: the directory is not empty", k.display());
            }
        }
        std::fs::create_dir_all(k).with_context(|| format!("cannot create {}", k.display()))?;
        return Ok((k.to_path_buf(), false));
    }
    let base = std::env::temp_dir();
    for i in 0..1000 {
        let d = base.join(format!("parallax-validate-{}-{i}", std::process::id()));
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok((d, true)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", d.display())),
        }
    }
    bail!("cannot create a temporary directory in {}", base.display())
}

/// The measured wall time `parallax run` wrote in the experiment's
/// manifest (the program's spawn to its exit), seconds.
fn manifest_wall(dir: &Path) -> Option<f64> {
    let text = manifest_text(dir)?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["wall_seconds"].as_f64()
}

/// Figures of one measured run, seconds.
struct Measured {
    wall: f64,
    /// What compensation removed between the first and the last event.
    removed: f64,
    /// Wall time outside the first to last event.
    outside: f64,
    /// Per rank: (rank, measured, approximated) from its first to its last
    /// event.
    ranks: Vec<(u32, f64, f64)>,
    /// The approximated time had every probe cost its calibration at the
    /// fastest and at the slowest speed the cores ran at in the run.
    speed_range: Option<(f64, f64)>,
}

impl Measured {
    fn approximated(&self) -> f64 {
        self.wall - self.removed
    }

    fn of(wall: f64, s: &Summary) -> Measured {
        let mut ranks: Vec<(u32, f64, f64)> = Vec::new();
        let mut rank_ids: Vec<u32> = s.locations.iter().map(|l| l.rank).collect();
        rank_ids.dedup();
        for r in rank_ids {
            let (mut m0, mut m1, mut a0, mut a1) = (
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
            );
            for l in s.locations.iter().filter(|l| l.rank == r) {
                if let (Some(f), Some(e)) = (l.stats.first, l.stats.last) {
                    (m0, a0) = (m0.min(f.0), a0.min(f.1));
                    (m1, a1) = (m1.max(e.0), a1.max(e.1));
                }
            }
            if m1 >= m0 && a1 >= a0 {
                ranks.push((r, (m1 - m0) / 1e9, (a1 - a0) / 1e9));
            }
        }
        let removed = ((s.measured_ns - s.approximated_ns) / 1e9).max(0.0);
        let outside = (wall - s.measured_ns / 1e9).max(0.0);
        let speed_range = crate::compensate::approximated_range(s, |st| st.speed_ns)
            .map(|(lo, hi)| (lo / 1e9 + outside, hi / 1e9 + outside));
        Measured {
            wall,
            removed,
            outside,
            ranks,
            speed_range,
        }
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// Median, least and largest of `xs`.
fn spread(xs: &[f64]) -> Value {
    json!({"median": median(xs), "min": min(xs), "max": max(xs)})
}

/// Each of `xs` relative to `reference`, minus 1.
fn relative(xs: &[f64], reference: f64) -> Vec<f64> {
    xs.iter().map(|x| x / reference - 1.0).collect()
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    if a.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let options = a.run_options()?;
    let shown = a.command.join(" ");
    let parallax = std::env::current_exe().context("cannot find this parallax executable")?;
    let (work, temporary) = work_dir(a.keep.as_deref())?;
    let result = validate(&a, &options, &shown, &parallax, &work);
    if temporary {
        let _ = std::fs::remove_dir_all(&work);
    }
    let (plain, measured) = result?;
    let report = to_json(&a, &options, &plain, &measured);
    if a.json {
        crate::console::out_json(&report)?;
    } else {
        crate::console::out(&text(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The runs: plain wall times and measured figures, alternately.
fn validate(
    a: &Args,
    options: &[String],
    shown: &str,
    parallax: &Path,
    work: &Path,
) -> anyhow::Result<(Vec<f64>, Vec<Measured>)> {
    let n = a.runs;
    let mut plain = Vec::new();
    let mut measured = Vec::new();
    for i in 1..=n {
        let mut c = Command::new(&a.command[0]);
        c.args(&a.command[1..]);
        without_parallax(&mut c);
        let ran = run_captured(&mut c, shown)?;
        note(&format!(
            "validate: run {i}/{n} without Parallax: {:.3} s ({})",
            ran.secs,
            describe(&ran.status)
        ));
        if !ran.status.success() {
            bail!(
                "`{shown}` failed without Parallax ({}) in run {i}: nothing to validate.{}",
                describe(&ran.status),
                last_words(&ran)
            );
        }
        if i == 1 && !a.quiet {
            show_output(&ran, a.json)?;
        }
        plain.push(ran.secs);

        let exp = work.join(format!("run-{i}"));
        let comp = work.join(format!("run-{i}-compensated"));
        let mut c = Command::new(parallax);
        c.args(["run", "--no-report", "--no-db", "--out"])
            .arg(&exp)
            .args(options)
            .arg("--")
            .args(&a.command);
        without_parallax(&mut c);
        let ran = run_captured(&mut c, shown)?;
        let wall = manifest_wall(&exp);
        let Some(wall) = wall.filter(|_| ran.status.success()) else {
            let how = if wall.is_some() {
                format!("it ended with {}", describe(&ran.status))
            } else {
                "`parallax run` did not run it".to_string()
            };
            bail!(
                "`{shown}` failed under `parallax run{}` in run {i} ({how}), although it ran \
                 without Parallax.{}",
                options.iter().map(|o| format!(" {o}")).collect::<String>(),
                last_words(&ran)
            );
        };
        let exp_data = Experiment::open(&exp).with_context(|| {
            format!(
                "`{shown}` recorded nothing under `parallax run` (build it with \
                 -finstrument-functions, or measure threads or MPI calls); see {}",
                exp.display()
            )
        })?;
        let summary =
            compensate::compensate(&exp_data, &comp, &Options::default(), Executor::pool())
                .with_context(|| format!("cannot compensate {}", exp.display()))?;
        let m = Measured::of(wall, &summary);
        note(&format!(
            "validate: run {i}/{n} under parallax run: {wall:.3} s, approximated {:.3} s",
            m.approximated()
        ));
        measured.push(m);
        if a.keep.is_none() {
            for d in [&exp, &comp] {
                let _ = std::fs::remove_dir_all(d);
            }
        }
    }
    Ok((plain, measured))
}

/// The end of a failed run's error output, for its error message.
fn last_words(ran: &Ran) -> String {
    let mut s = String::new();
    for (name, c) in [("stderr", &ran.err), ("stdout", &ran.out)] {
        let lines = c.last_lines(12);
        if !lines.trim().is_empty() {
            let _ = write!(s, "\nIts last {name} lines:\n{lines}");
        }
    }
    s
}

/// The program's output of its first run, once: its stdout on stdout (on
/// stderr with --json), its stderr on stderr.
fn show_output(ran: &Ran, json: bool) -> anyhow::Result<()> {
    use std::io::Write;
    let out = ran.out.shown();
    if json {
        std::io::stderr().write_all(&out)?;
    } else {
        std::io::stdout().write_all(&out)?;
        std::io::stdout().flush()?;
    }
    std::io::stderr().write_all(&ran.err.shown())?;
    Ok(())
}

fn to_json(a: &Args, options: &[String], plain: &[f64], measured: &[Measured]) -> Value {
    let t = median(plain);
    let wall: Vec<f64> = measured.iter().map(|m| m.wall).collect();
    let approx: Vec<f64> = measured.iter().map(Measured::approximated).collect();
    let removed: Vec<f64> = measured.iter().map(|m| m.removed).collect();
    let outside: Vec<f64> = measured.iter().map(|m| m.outside).collect();
    let mut rank_ids: Vec<u32> = measured
        .iter()
        .flat_map(|m| m.ranks.iter().map(|r| r.0))
        .collect();
    rank_ids.sort_unstable();
    rank_ids.dedup();
    let ranks: Vec<Value> = rank_ids
        .iter()
        .map(|&r| {
            let of = |pick: fn(&(u32, f64, f64)) -> f64| -> Vec<f64> {
                measured
                    .iter()
                    .filter_map(|m| m.ranks.iter().find(|x| x.0 == r).map(pick))
                    .collect()
            };
            let (m, ap) = (of(|x| x.1), of(|x| x.2));
            json!({
                "rank": r,
                "measured_s": m,
                "approximated_s": ap,
                "measured": spread(&m),
                "approximated": spread(&ap),
            })
        })
        .collect();
    let speed: Vec<Value> = measured
        .iter()
        .map(|m| {
            m.speed_range
                .map_or(Value::Null, |(lo, hi)| json!([lo, hi]))
        })
        .collect();
    let within_speed = measured
        .iter()
        .filter(|m| m.speed_range.is_some_and(|(lo, hi)| (lo..=hi).contains(&t)))
        .count();
    let noise = relative(plain, t);
    let errors = relative(&approx, t);
    let measured_errors = relative(&wall, t);
    let error = median(&approx) / t - 1.0;
    json!({
        "command": a.command,
        "run_options": options,
        "runs": a.runs,
        "plain_s": plain,
        "measured_s": wall,
        "approximated_s": approx,
        "removed_s": removed,
        "outside_events_s": outside,
        "plain": spread(plain),
        "measured": spread(&wall),
        "approximated": spread(&approx),
        "error": {
            "approximated": error,
            "approximated_min": min(&errors),
            "approximated_max": max(&errors),
            "measured": median(&wall) / t - 1.0,
            "measured_min": min(&measured_errors),
            "measured_max": max(&measured_errors),
        },
        "noise": {"plain_min": min(&noise), "plain_max": max(&noise)},
        "within_noise": min(&noise) <= error && error <= max(&noise),
        "approximated_speed_range_s": speed,
        "plain_within_speed_range": within_speed,
        "ranks": ranks,
    })
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", 100.0 * x)
}

fn text(r: &Value) -> String {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let mut s = String::new();
    let command: Vec<&str> = r["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let options: Vec<&str> = r["run_options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let n = r["runs"].as_u64().unwrap_or(0);
    let _ = writeln!(
        s,
        "Validated `{}`: {n} runs without Parallax and {n} under `parallax run{}`, each compensated",
        command.join(" "),
        options.iter().map(|o| format!(" {o}")).collect::<String>()
    );
    let _ = writeln!(
        s,
        "  {:<26} {:>10} {:>10} {:>10}   against the plain median",
        "wall time (s)", "median", "min", "max"
    );
    let row = |s: &mut String, name: &str, key: &str, err: Option<(f64, f64, f64)>| {
        let v = &r[key];
        let rel = err.map_or(String::new(), |(m, lo, hi)| {
            format!("{} (runs {} .. {})", pct(m), pct(lo), pct(hi))
        });
        let _ = writeln!(
            s,
            "  {:<26} {:>10.4} {:>10.4} {:>10.4}   {rel}",
            name,
            f(&v["median"]),
            f(&v["min"]),
            f(&v["max"])
        );
    };
    let e = &r["error"];
    let noise = (
        0.0,
        f(&r["noise"]["plain_min"]),
        f(&r["noise"]["plain_max"]),
    );
    row(&mut s, "plain", "plain", Some(noise));
    row(
        &mut s,
        "measured",
        "measured",
        Some((
            f(&e["measured"]),
            f(&e["measured_min"]),
            f(&e["measured_max"]),
        )),
    );
    row(
        &mut s,
        "approximated",
        "approximated",
        Some((
            f(&e["approximated"]),
            f(&e["approximated_min"]),
            f(&e["approximated_max"]),
        )),
    );
    let verdict = if r["within_noise"].as_bool() == Some(true) {
        "within"
    } else {
        "outside"
    };
    let _ = writeln!(
        s,
        "Error of the approximated time: {} ({verdict} the plain runs' own spread, {} .. {})",
        pct(f(&e["approximated"])),
        pct(noise.1),
        pct(noise.2)
    );
    let _ = writeln!(
        s,
        "Approximated = measured wall time - what compensation removed between the first and \
         the last event (median {:.4} s); {:.4} s (median) of each measured run lay outside \
         those events (start-up, library loading, Parallax's own start and end) and was kept.",
        median(&values(&r["removed_s"])),
        median(&values(&r["outside_events_s"]))
    );
    let ranges: Vec<(f64, f64)> = r["approximated_speed_range_s"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| Some((v[0].as_f64()?, v[1].as_f64()?)))
        .collect();
    if !ranges.is_empty() {
        let lo: Vec<f64> = ranges.iter().map(|x| x.0).collect();
        let hi: Vec<f64> = ranges.iter().map(|x| x.1).collect();
        let _ = writeln!(
            s,
            "Had every probe cost its calibration at the fastest and at the slowest speed the \
             cores ran at (timed in each run), the approximated time would lie between {:.4} \
             and {:.4} s (medians); the plain median lies in that range in {} of {} runs.",
            median(&lo),
            median(&hi),
            r["plain_within_speed_range"],
            ranges.len()
        );
    }
    let ranks = r["ranks"].as_array().map_or(&[][..], Vec::as_slice);
    if ranks.len() > 1 {
        let _ = writeln!(
            s,
            "Per rank, first to last event (median s; there are no per-rank plain times):"
        );
        for k in ranks {
            let _ = writeln!(
                s,
                "  rank {:<5} measured {:>10.4}  approximated {:>10.4}",
                k["rank"],
                f(&k["measured"]["median"]),
                f(&k["approximated"]["median"])
            );
        }
    }
    s
}

fn values(v: &Value) -> Vec<f64> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .collect()
}
