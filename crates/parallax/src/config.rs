//! Measurement configuration, from the environment or from code.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `PARALLAX_MODE` | `off`, `profile`, `trace` or `both` | `off` |
//! | `PARALLAX_OUT` | experiment directory | `parallax-<program>` |
//! | `PARALLAX_BUFFER` | trace buffer per thread, bytes (`k`/`m` suffixes) | `1m` |
//! | `PARALLAX_PROFILE_NODES` | call-path nodes per thread before paths are merged | `65536` |
//! | `PARALLAX_MAX_DEPTH` | deepest call path profiled | `1024` |
//! | `PARALLAX_CALIBRATE` | measure probe costs at start (`0` to skip) | `1` |
//! | `PARALLAX_CLOCK` | `tsc`, `tsc-fenced` or `monotonic` | `tsc` where invariant |
//! | `PARALLAX_SIGNALS` | flush on fatal signals (`0` to leave handlers alone) | `1` |
//! | `PARALLAX_RANK` | rank of this process | the MPI launcher's variables, else 0 |
//! | `PARALLAX_RANKS` | ranks of the run | the MPI launcher's variables |
//! | `PARALLAX_CHILDREN` | measure child processes (`1`) or leave them alone (`0`) | `0` |
//! | `PARALLAX_PARENT_PID` | set by the interposition library: the process that started the tree of processes being measured | unset |
//! | `PARALLAX_REPLACED_PID` | set by the interposition library for the program a measured process runs with exec: that process | unset |
//!
//! A process is a *descendant* when `PARALLAX_PARENT_PID` names another
//! process, when it was forked from a measuring process, or when it is the
//! program a measured process became by exec (`PARALLAX_REPLACED_PID` names
//! it). A descendant
//! takes the rank directory of its rank if nobody has it yet (a program
//! started by a measured shell script); otherwise, with `PARALLAX_CHILDREN=1`,
//! it is measured as a process of its own under the first free rank at or
//! above the number of ranks (1 without MPI), and without it, it is not
//! measured.

use std::fmt;
use std::path::PathBuf;

pub use parallax_model::defs::Mode;

/// Which clock probes read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockChoice {
    /// The invariant TSC where the CPU has one, else CLOCK_MONOTONIC.
    Auto,
    /// As `Auto`, each probe between load fences, and its clock read
    /// between two more: a probe then runs beside neither the code before
    /// it nor the code after it, so that its cost depends less on the code
    /// around it and stays closer to what calibration measures (for
    /// perturbation compensation), at about twice the cost.
    Fenced,
    /// CLOCK_MONOTONIC.
    Monotonic,
}

/// How a process is measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// What is recorded.
    pub mode: Mode,
    /// Experiment directory.
    pub out_dir: PathBuf,
    /// Trace buffer per thread, bytes.
    pub buffer_bytes: usize,
    /// Call-path nodes per thread.
    pub profile_nodes: usize,
    /// Deepest call path profiled.
    pub max_depth: usize,
    /// Measure probe costs at start.
    pub calibrate: bool,
    /// Clock.
    pub clock: ClockChoice,
    /// Flush on fatal signals.
    pub signals: bool,
    /// Rank, if known.
    pub rank: Option<u32>,
    /// Number of ranks, if known.
    pub ranks: Option<u32>,
    /// Measure child processes as processes of their own.
    pub children: bool,
    /// The root of the measured process tree, if this process may be a
    /// descendant of it (see the module docs).
    pub parent_pid: Option<u32>,
    /// The process whose measured image was replaced by exec: this process,
    /// if it is now another program (a descendant, see the module docs).
    pub replaced_pid: Option<u32>,
}

/// A configuration value that makes no sense.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// What was expected.
    pub expected: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A value may be huge: the message shows its start.
        const SHOWN: usize = 40;
        let mut shown: String = self.value.chars().take(SHOWN).collect();
        if shown.len() < self.value.len() {
            shown.push_str(&format!("... ({} bytes)", self.value.len()));
        }
        write!(
            f,
            "{}={:?} is not valid: expected {}",
            self.variable, shown, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Defaults for `mode`, writing to `out_dir`.
    pub fn new(mode: Mode, out_dir: impl Into<PathBuf>) -> Config {
        Config {
            mode,
            out_dir: out_dir.into(),
            buffer_bytes: 1 << 20,
            profile_nodes: 1 << 16,
            max_depth: 1024,
            calibrate: true,
            clock: ClockChoice::Auto,
            signals: true,
            rank: None,
            ranks: None,
            children: false,
            parent_pid: None,
            replaced_pid: None,
        }
    }

    /// The configuration the environment asks for.
    pub fn from_env() -> Result<Config, ConfigError> {
        // A value that is not UTF-8 is read lossily, so that a bad one is
        // reported rather than ignored; the directory keeps its bytes.
        let mut c =
            Config::from_lookup(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()))?;
        if let Some(out) = std::env::var_os("PARALLAX_OUT").filter(|o| !o.is_empty()) {
            c.out_dir = PathBuf::from(out);
        }
        Ok(c)
    }

    /// The configuration given by `get` (a variable lookup), for tests and
    /// launchers.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let mode = match get("PARALLAX_MODE") {
            None => Mode::Off,
            Some(v) => Mode::parse(&v).ok_or(ConfigError {
                variable: "PARALLAX_MODE",
                value: v,
                expected: "off, profile, trace or both",
            })?,
        };
        let out = get("PARALLAX_OUT")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(default_out);
        let mut c = Config::new(mode, out);
        if let Some(v) = get("PARALLAX_BUFFER") {
            let n = parse_size(&v).filter(|&n| (4096..=1 << 30).contains(&n));
            c.buffer_bytes = n.ok_or(ConfigError {
                variable: "PARALLAX_BUFFER",
                value: v,
                expected: "a size from 4k to 1g, like 4m",
            })?;
        }
        if let Some(v) = get("PARALLAX_PROFILE_NODES") {
            let n = parse_size(&v).filter(|&n| (16..=1 << 26).contains(&n));
            c.profile_nodes = n.ok_or(ConfigError {
                variable: "PARALLAX_PROFILE_NODES",
                value: v,
                expected: "a count from 16 to 67108864",
            })?;
        }
        if let Some(v) = get("PARALLAX_MAX_DEPTH") {
            let n = parse_size(&v).filter(|&n| (1..=1 << 20).contains(&n));
            c.max_depth = n.ok_or(ConfigError {
                variable: "PARALLAX_MAX_DEPTH",
                value: v,
                expected: "a depth from 1 to 1048576",
            })?;
        }
        if let Some(v) = get("PARALLAX_CALIBRATE") {
            c.calibrate = parse_bool(&v).ok_or(ConfigError {
                variable: "PARALLAX_CALIBRATE",
                value: v,
                expected: "0 or 1",
            })?;
        }
        if let Some(v) = get("PARALLAX_SIGNALS") {
            c.signals = parse_bool(&v).ok_or(ConfigError {
                variable: "PARALLAX_SIGNALS",
                value: v,
                expected: "0 or 1",
            })?;
        }
        if let Some(v) = get("PARALLAX_CLOCK") {
            c.clock = match v.trim().to_ascii_lowercase().as_str() {
                "tsc" | "auto" => ClockChoice::Auto,
                "tsc-fenced" | "fenced" => ClockChoice::Fenced,
                "monotonic" => ClockChoice::Monotonic,
                _ => {
                    return Err(ConfigError {
                        variable: "PARALLAX_CLOCK",
                        value: v,
                        expected: "tsc, tsc-fenced or monotonic",
                    })
                }
            };
        }
        let rank_vars = [
            "PARALLAX_RANK",
            "OMPI_COMM_WORLD_RANK",
            "PMIX_RANK",
            "PMI_RANK",
            "SLURM_PROCID",
        ];
        for var in rank_vars {
            if let Some(v) = get(var) {
                c.rank = Some(v.trim().parse().map_err(|_| ConfigError {
                    variable: var,
                    value: v.clone(),
                    expected: "a rank number",
                })?);
                break;
            }
        }
        let size_vars = [
            "PARALLAX_RANKS",
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "SLURM_NTASKS",
        ];
        c.ranks = size_vars.iter().find_map(|v| get(v)?.trim().parse().ok());
        if let Some(v) = get("PARALLAX_CHILDREN") {
            c.children = parse_bool(&v).ok_or(ConfigError {
                variable: "PARALLAX_CHILDREN",
                value: v,
                expected: "0 or 1",
            })?;
        }
        c.parent_pid = get("PARALLAX_PARENT_PID").and_then(|v| v.trim().parse().ok());
        c.replaced_pid = get("PARALLAX_REPLACED_PID").and_then(|v| v.trim().parse().ok());
        Ok(c)
    }
}

fn default_out() -> String {
    let prog = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "program".into());
    format!("parallax-{prog}")
}

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mul) = match s.as_bytes().last()? {
        b'k' => (&s[..s.len() - 1], 1 << 10),
        b'm' => (&s[..s.len() - 1], 1 << 20),
        b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (&s[..], 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mul)
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "on" | "true" => Some(true),
        "0" | "no" | "off" | "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_lookup(|k| vars.iter().find(|v| v.0 == k).map(|v| v.1.to_string()))
    }

    #[test]
    fn defaults_and_values() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.mode, Mode::Off);
        assert_eq!(c.buffer_bytes, 1 << 20);
        let c = cfg(&[
            ("PARALLAX_MODE", "Trace"),
            ("PARALLAX_BUFFER", "64k"),
            ("PARALLAX_OUT", "/tmp/x"),
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "8"),
        ])
        .unwrap();
        assert_eq!(c.mode, Mode::Trace);
        assert_eq!(c.buffer_bytes, 64 << 10);
        assert_eq!(c.out_dir, PathBuf::from("/tmp/x"));
        assert_eq!((c.rank, c.ranks), (Some(3), Some(8)));
        assert!(!c.children && c.parent_pid.is_none());
        let c = cfg(&[("PARALLAX_CHILDREN", "1"), ("PARALLAX_PARENT_PID", "77")]).unwrap();
        assert!(c.children);
        assert_eq!(c.parent_pid, Some(77));
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = cfg(&[("PARALLAX_MODE", "fast")]).unwrap_err();
        assert_eq!(e.variable, "PARALLAX_MODE");
        assert!(e.to_string().contains("off, profile, trace or both"));
        assert_eq!(
            cfg(&[("PARALLAX_BUFFER", "12")]).unwrap_err().variable,
            "PARALLAX_BUFFER"
        );
        assert_eq!(
            cfg(&[("PARALLAX_CLOCK", "hpet")]).unwrap_err().variable,
            "PARALLAX_CLOCK"
        );
        assert_eq!(
            cfg(&[("PARALLAX_CLOCK", "TSC-fenced")]).unwrap().clock,
            ClockChoice::Fenced
        );
        assert_eq!(cfg(&[("PMI_RANK", "x")]).unwrap_err().variable, "PMI_RANK");
    }
}
