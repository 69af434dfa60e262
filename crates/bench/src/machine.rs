//! What the benchmark ran on.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// `model name` of the first CPU in /proc/cpuinfo.
    pub cpu: String,
    /// CPUs this process may run on.
    pub nproc: usize,
    /// The kernel's clock source.
    pub clocksource: String,
    /// Whether /proc/cpuinfo lists constant_tsc and nonstop_tsc.
    pub invariant_tsc: bool,
    pub os: String,
    pub arch: String,
}

pub fn describe() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let clocksource =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
    Machine {
        cpu,
        nproc: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        clocksource,
        invariant_tsc: parallax::clock::tsc_is_invariant(),
        os: std::env::consts::OS.into(),
        arch: std::env::consts::ARCH.into(),
    }
}
