//! Runs the parallel kernels and prints one JSON line per run.
//!
//! ```text
//! parallel [--kernels NAME,...|all] [--level raw,full|all] [--threads N]
//!          [--reps N] [--warmup N] [--scale test|bench] [--n N]
//!          [--passes N] [--distance D] [--steps B1,B2,B3] [--list]
//! ```
//!
//! - `--kernels`: kernel names (see `--list`), comma-separated, or `all`
//!   (default);
//! - `--level`: `raw`, `full` or both (default both); the levels of a
//!   kernel alternate, run by run;
//! - `--threads`: threads per kernel, at least 2 (default 2);
//! - `--reps`: timed runs per kernel and level (default 1);
//! - `--warmup`: untimed `raw` runs before a kernel's timed runs, outside
//!   the kernel's region (default 1);
//! - `--scale`: preset sizes (default `bench`); `--n`, `--passes`
//!   override them for every kernel chosen;
//! - `--distance`: dependence distance of the DOACROSS kernels (default
//!   1);
//! - `--steps`: grain steps of their bodies B1, B2, B3 (default 8,8,8;
//!   a step is about 2.5 ns).
//!
//! Each line: `{"kernel":"reduction","level":"raw","threads":2,"rep":0,
//! "n":2000,"passes":40,"distance":1,"steps":[8,8,8],"seconds":s,
//! "checksum":c,"bodies":b}` where `seconds` is the span of the `kernel:<name>`
//! region and `bodies` the loop bodies (body regions at `full`). What is
//! recorded comes from the environment (`PARALLAX_MODE`, ...), read
//! before the first kernel runs. The runner fails if two runs of a kernel
//! disagree on the checksum.

use std::process::ExitCode;

use parallax_workloads::parallel::{
    kernel, Kernel, Level, Run, Scale, Size, DOACROSS_STEPS, KERNELS,
};

struct Args {
    kernels: Vec<&'static Kernel>,
    levels: Vec<Level>,
    threads: usize,
    reps: usize,
    warmup: usize,
    scale: Scale,
    n: Option<usize>,
    passes: Option<usize>,
    distance: usize,
    steps: [u32; 3],
    list: bool,
}

const USAGE: &str = "usage: parallel [--kernels NAME,...|all] [--level raw,full|all] \
[--threads N] [--reps N] [--warmup N] [--scale test|bench] [--n N] [--passes N] \
[--distance D] [--steps B1,B2,B3] [--list]";

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        kernels: KERNELS.iter().collect(),
        levels: Level::ALL.to_vec(),
        threads: 2,
        reps: 1,
        warmup: 1,
        scale: Scale::Bench,
        n: None,
        passes: None,
        distance: 1,
        steps: DOACROSS_STEPS,
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
            "--level" | "--levels" => a.levels = parse_levels(&value)?,
            "--threads" => a.threads = count(&value, 2)?,
            "--reps" => a.reps = count(&value, 1)?,
            "--warmup" => a.warmup = count(&value, 0)?,
            "--n" => a.n = Some(count(&value, 1)?),
            "--passes" => a.passes = Some(count(&value, 1)?),
            "--distance" => a.distance = count(&value, 1)?,
            "--steps" => a.steps = parse_steps(&value)?,
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
    let mut out: Vec<&'static Kernel> = Vec::new();
    for part in s.split(',') {
        let k = kernel(part.trim()).ok_or_else(|| {
            let names: Vec<_> = KERNELS.iter().map(|k| k.name).collect();
            format!("--kernels: {part:?} is not one of {}", names.join(", "))
        })?;
        if !out.iter().any(|o| o.name == k.name) {
            out.push(k);
        }
    }
    Ok(out)
}

fn parse_steps(s: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|p| p.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("--steps {s:?}: expected three numbers, B1,B2,B3"))?;
    <[u32; 3]>::try_from(v).map_err(|_| format!("--steps {s:?}: expected three numbers, B1,B2,B3"))
}

fn parse_levels(s: &str) -> Result<Vec<Level>, String> {
    if s.trim() == "all" {
        return Ok(Level::ALL.to_vec());
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let l =
            Level::parse(part).ok_or_else(|| format!("--level: {part:?} is not raw or full"))?;
        if !out.contains(&l) {
            out.push(l);
        }
    }
    Ok(out)
}

fn run_of(a: &Args, k: &Kernel, level: Level) -> Run {
    let preset = k.size(a.scale);
    Run {
        level,
        threads: a.threads,
        size: Size {
            n: a.n.unwrap_or(preset.n),
            passes: a.passes.unwrap_or(preset.passes),
        },
        distance: a.distance,
        steps: a.steps,
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
    if args.list {
        for k in &args.kernels {
            let s = k.size(args.scale);
            println!(
                "{{\"kernel\":\"{}\",\"region\":\"{}\",\"n\":{},\"passes\":{},\"size\":\"{}\",\"description\":\"{}\"}}",
                k.name, k.region(), s.n, s.passes, k.size_doc, k.description
            );
        }
        return ExitCode::SUCCESS;
    }

    // Start measurement (and its calibration) now, not inside a kernel.
    parallax::mode();
    let mut failed = false;
    for k in &args.kernels {
        for _ in 0..args.warmup {
            k.warm_up(&run_of(&args, k, Level::Raw));
        }
        let mut reference = None;
        for rep in 0..args.reps {
            for &level in &args.levels {
                // The probes' cost as the machine is now (if measuring).
                parallax::calibrate::now();
                let run = run_of(&args, k, level);
                let o = k.run(&run);
                if *reference.get_or_insert(o.checksum) != o.checksum {
                    failed = true;
                    eprintln!(
                        "parallel: {} at {}: checksum {} differs from {:?}",
                        k.name,
                        level.name(),
                        o.checksum,
                        reference
                    );
                }
                println!(
                    "{{\"kernel\":\"{}\",\"level\":\"{}\",\"threads\":{},\"rep\":{},\"n\":{},\
                     \"passes\":{},\"distance\":{},\"steps\":{:?},\"seconds\":{:?},\"checksum\":{},\"bodies\":{}}}",
                    k.name,
                    level.name(),
                    run.threads,
                    rep,
                    run.size.n,
                    run.size.passes,
                    run.distance,
                    run.steps,
                    o.seconds,
                    o.checksum,
                    k.expected(&run).bodies
                );
            }
        }
    }
    if let Some(dir) = parallax::finish() {
        eprintln!("parallel: experiment in {}", dir.display());
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
    fn parses_names_and_levels() {
        let a = args("--kernels barrier,critical,barrier --level full --threads 3").unwrap();
        let names: Vec<_> = a.kernels.iter().map(|k| k.name).collect();
        assert_eq!(names, ["barrier", "critical"]);
        assert_eq!(
            (a.levels.as_slice(), a.threads),
            ([Level::Full].as_slice(), 3)
        );
        assert_eq!(args("").unwrap().kernels.len(), KERNELS.len());
        assert_eq!(args("--steps 4,40,4").unwrap().steps, [4, 40, 4]);
        for bad in [
            "--kernels nothing",
            "--level none",
            "--threads 1",
            "--distance 0",
            "--steps 1,2",
            "--steps 1,x,3",
            "--reps",
            "--frobnicate 2",
        ] {
            assert!(args(bad).is_err(), "{bad}");
        }
    }
}
