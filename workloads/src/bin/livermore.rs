//! Runs Livermore kernels at chosen instrumentation levels and prints one
//! JSON line per kernel and level: its name, level, size, loop-body
//! iterations, median seconds over the repetitions, and checksum.
//!
//! ```text
//! livermore [--kernels LIST] [--levels LIST] [--reps N] [--warmup N]
//!           [--scale test|bench] [--n N] [--passes N] [--block N] [--list]
//! ```
//!
//! - `--kernels`: numbers and ranges, `1,3,5-7`, or `all` (default);
//! - `--levels`: `none`, `raw`, `full`, comma-separated, or `all`
//!   (default);
//! - `--reps`: timed runs per kernel and level (default 5); the levels of
//!   a kernel alternate, run by run;
//! - `--warmup`: untimed runs at level `none` before a kernel's timed runs
//!   (default 1; they record nothing);
//! - `--scale`: preset sizes (default `bench`); `--n`, `--passes` override
//!   them for every kernel chosen;
//! - `--block`: innermost iterations in each region of level `full`
//!   (default 1: a region around every iteration);
//! - `--list`: print the kernels and their sizes, run nothing.
//!
//! What is recorded comes from the environment (`PARALLAX_MODE`,
//! `PARALLAX_OUT`, ...), read before the first kernel runs so that start-up
//! and calibration stay out of every timing. Each run fills fresh data, so
//! every run of a kernel must give the same checksum; the runner fails if
//! one does not.

use std::fmt::Write as _;
use std::process::ExitCode;

use parallax_workloads::livermore::{kernel, Kernel, Level, Outcome, Scale, Size, KERNELS};

struct Args {
    kernels: Vec<&'static Kernel>,
    levels: Vec<Level>,
    reps: usize,
    warmup: usize,
    scale: Scale,
    n: Option<usize>,
    passes: Option<usize>,
    list: bool,
}

const USAGE: &str = "usage: livermore [--kernels 1,3,5-7|all] [--levels none,raw,full|all] \
[--reps N] [--warmup N] [--scale test|bench] [--n N] [--passes N] [--block N] [--list]";

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        kernels: KERNELS.iter().collect(),
        levels: Level::ALL.to_vec(),
        reps: 5,
        warmup: 1,
        scale: Scale::Bench,
        n: None,
        passes: None,
        list: false,
    };
    while let Some(flag) = it.next() {
        if flag == "--list" {
            a.list = true;
            continue;
        }
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.to_string());
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let count = |v: &str, min: usize| {
            v.parse::<usize>()
                .ok()
                .filter(|&c| c >= min)
                .ok_or_else(|| format!("{flag} {v:?}: expected a number >= {min}"))
        };
        match flag.as_str() {
            "--kernels" => a.kernels = parse_kernels(&value)?,
            "--levels" => a.levels = parse_levels(&value)?,
            "--reps" => a.reps = count(&value, 1)?,
            "--warmup" => a.warmup = count(&value, 0)?,
            "--n" => a.n = Some(count(&value, 1)?),
            "--passes" => a.passes = Some(count(&value, 1)?),
            "--block" => parallax_workloads::livermore::set_block(count(&value, 1)?),
            "--scale" => {
                a.scale = Scale::parse(&value)
                    .ok_or_else(|| format!("--scale {value:?}: expected test or bench"))?
            }
            _ => return Err(format!("unknown argument {flag:?}\n{USAGE}")),
        }
    }
    Ok(a)
}

fn parse_kernels(s: &str) -> Result<Vec<&'static Kernel>, String> {
    if s.trim() == "all" {
        return Ok(KERNELS.iter().collect());
    }
    let bad = |p: &str| format!("--kernels: {p:?} is not a kernel number (1-24) or range");
    let mut out = Vec::new();
    for part in s.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi) = match (lo.trim().parse::<u32>(), hi.trim().parse::<u32>()) {
            (Ok(lo), Ok(hi)) if lo <= hi => (lo, hi),
            _ => return Err(bad(part)),
        };
        for num in lo..=hi {
            let k = kernel(num).ok_or_else(|| bad(part))?;
            if !out.iter().any(|o: &&Kernel| o.number == num) {
                out.push(k);
            }
        }
    }
    Ok(out)
}

fn parse_levels(s: &str) -> Result<Vec<Level>, String> {
    if s.trim() == "all" {
        return Ok(Level::ALL.to_vec());
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let l = Level::parse(part)
            .ok_or_else(|| format!("--levels: {part:?} is not none, raw or full"))?;
        if !out.contains(&l) {
            out.push(l);
        }
    }
    Ok(out)
}

fn size_of(a: &Args, k: &Kernel) -> Size {
    let preset = k.size(a.scale);
    Size {
        n: a.n.unwrap_or(preset.n),
        passes: a.passes.unwrap_or(preset.passes),
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// A JSON number, or null for what JSON cannot hold.
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else {
        "null".to_string()
    }
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    for k in &args.kernels {
        if !k.accepts(size_of(&args, k)) {
            eprintln!(
                "livermore: kernel {} needs n >= {} (got {:?})",
                k.number,
                k.min_n,
                size_of(&args, k)
            );
            return ExitCode::from(2);
        }
    }
    if args.list {
        for k in &args.kernels {
            let s = size_of(&args, k);
            println!(
                "{{\"kernel\":{},\"name\":\"{}\",\"region\":\"{}\",\"n\":{},\"passes\":{},\"iterations\":{}}}",
                k.number,
                k.name,
                k.region(),
                s.n,
                s.passes,
                k.iterations(s)
            );
        }
        return ExitCode::SUCCESS;
    }

    // Start measurement (and its calibration) now, not inside a kernel.
    let mode = parallax::mode();
    let mut failed = false;
    for k in &args.kernels {
        let size = size_of(&args, k);
        for _ in 0..args.warmup {
            k.run(size, Level::None);
        }
        let mut runs: Vec<Vec<Outcome>> = vec![Vec::new(); args.levels.len()];
        for _ in 0..args.reps {
            for (i, &level) in args.levels.iter().enumerate() {
                // The probes' cost as the machine is now (if measuring).
                parallax::calibrate::now();
                runs[i].push(k.run(size, level));
            }
        }
        let reference = runs[0][0].checksum;
        let mut raw_median = None;
        for (i, &level) in args.levels.iter().enumerate() {
            let mut secs: Vec<f64> = runs[i].iter().map(|o| o.seconds).collect();
            let med = median(&mut secs);
            if level == Level::Raw {
                raw_median = Some(med);
            }
            let agree = runs[i]
                .iter()
                .all(|o| o.checksum.to_bits() == reference.to_bits());
            if !agree {
                failed = true;
                eprintln!(
                    "livermore: kernel {} gave different checksums at level {}: {:?}",
                    k.number,
                    level.name(),
                    runs[i].iter().map(|o| o.checksum).collect::<Vec<_>>()
                );
            }
            let mut line = format!(
                "{{\"kernel\":{},\"name\":\"{}\",\"region\":\"{}\",\"level\":\"{}\",\"mode\":\"{}\",\
                 \"n\":{},\"passes\":{},\"iterations\":{},\"reps\":{},\"seconds\":{},\
                 \"min_seconds\":{},\"max_seconds\":{},\"checksum\":{},\"checksum_bits\":\"{:016x}\"",
                k.number,
                k.name,
                k.region(),
                level.name(),
                mode.name(),
                size.n,
                size.passes,
                k.iterations(size),
                args.reps,
                num(med),
                num(secs[0]),
                num(secs[secs.len() - 1]),
                num(reference),
                runs[i][0].checksum.to_bits(),
            );
            if let (Level::Full, Some(raw)) = (level, raw_median) {
                let _ = write!(line, ",\"slowdown_vs_raw\":{}", num(med / raw));
            }
            line.push('}');
            println!("{line}");
        }
    }
    if let Some(dir) = parallax::finish() {
        eprintln!("livermore: experiment in {}", dir.display());
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        parse_args(s.split_whitespace().map(String::from))
    }

    #[test]
    fn parses_lists_and_ranges() {
        let a = args("--kernels 3,1-2,2 --levels raw,full --reps 3 --scale test").unwrap();
        let nums: Vec<u32> = a.kernels.iter().map(|k| k.number).collect();
        assert_eq!(nums, [3, 1, 2]);
        assert_eq!(a.levels, [Level::Raw, Level::Full]);
        assert_eq!((a.reps, a.scale), (3, Scale::Test));
        assert_eq!(args("").unwrap().kernels.len(), 24);
        for bad in [
            "--kernels 0",
            "--kernels 25",
            "--kernels 5-3",
            "--levels half",
            "--reps 0",
            "--scale huge",
            "--frobnicate 1",
            "--reps",
        ] {
            assert!(args(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
