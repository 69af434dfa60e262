//! `parallax doctor`: what this installation and this machine can do, and
//! how to get what is missing.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use clap::Parser;
use serde_json::json;

/// Check what this Parallax and this machine can measure and export.
///
/// Examples:
///   parallax doctor            # one line per capability, with how to get what is missing
///   parallax doctor --json     # the same for scripts
#[derive(Parser, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Print the checks as JSON.
    #[arg(long)]
    json: bool,
    /// Print only the capabilities that are missing.
    #[arg(long)]
    brief: bool,
}

/// One capability and whether it is there.
struct Check {
    name: &'static str,
    ok: bool,
    /// What was found, or why not.
    detail: String,
    /// How to get it, when missing.
    fix: &'static str,
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let checks = [
        preload(),
        otf2(),
        openmp(),
        tsc(),
        perf_software(),
        perf_hardware(),
        tool(
            "MPI",
            "mpirun",
            &["--version"],
            "apt-get install openmpi-bin libopenmpi-dev",
        ),
        tool(
            "OpenSHMEM",
            "oshrun",
            &["--version"],
            "apt-get install openmpi-bin libopenmpi-dev (Open MPI's OSHMEM)",
        ),
        tool(
            "C compiler",
            "gcc",
            &["--version"],
            "apt-get install build-essential",
        ),
        tool(
            "Fortran compiler",
            "gfortran",
            &["--version"],
            "apt-get install gfortran",
        ),
        tool(
            "OTF2 tools",
            "otf2-print",
            &["--version"],
            "apt-get install otf2-tools",
        ),
        tool(
            "Chromium (opens HTML reports headless)",
            "chromium",
            &["--version"],
            "apt-get install chromium",
        ),
    ];
    if a.json {
        let v: Vec<_> = checks
            .iter()
            .map(|c| json!({"name": c.name, "ok": c.ok, "detail": c.detail, "fix": (!c.ok).then_some(c.fix)}))
            .collect();
        crate::console::out_json(&json!({"checks": v}))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    for c in checks.iter().filter(|c| !(a.brief && c.ok)) {
        let mark = if c.ok { "ok     " } else { "missing" };
        s += &format!("{mark}  {}: {}\n", c.name, c.detail);
        if !c.ok {
            s += &format!("         to get it: {}\n", c.fix);
        }
    }
    let missing = checks.iter().filter(|c| !c.ok).count();
    if a.brief && missing == 0 {
        s += "doctor: everything Parallax can use is here\n";
    }
    crate::console::out(&s)?;
    Ok(ExitCode::SUCCESS)
}

fn preload() -> Check {
    let found = crate::run::preload_library();
    Check {
        name: "interposition library",
        ok: found.is_some(),
        detail: match &found {
            Some(p) => format!("{} (measures unmodified programs)", p.display()),
            None => "not found next to this parallax: `parallax run` can only measure \
                     programs linked with the parallax crate"
                .into(),
        },
        fix: "scripts/install.sh (or cargo build --release -p parallax-preload)",
    }
}

fn otf2() -> Check {
    let installed = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/local/lib",
    ]
    .iter()
    .any(|d| Path::new(d).join("libotf2.so").exists());
    let ok = parallax_export::otf2::AVAILABLE;
    Check {
        name: "OTF2 export and import",
        ok,
        detail: match (ok, installed) {
            (true, _) => "built with libotf2".into(),
            (false, true) => "libotf2 is installed but this parallax was built without it".into(),
            (false, false) => "libotf2 is not installed".into(),
        },
        fix: if installed {
            "rebuild: scripts/install.sh"
        } else {
            "apt-get install libotf2-trace-dev otf2-tools, then scripts/install.sh"
        },
    }
}

/// OpenMP runtimes: gcc's libgomp (observed through its entry points) and
/// LLVM's libomp (through OMPT), where installed.
fn openmp() -> Check {
    let found = |lib: &str| {
        [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib",
            "/usr/local/lib",
        ]
        .iter()
        .any(|d| Path::new(d).join(lib).exists())
    };
    let (gomp, omp) = (
        found("libgomp.so.1"),
        found("libomp.so.5") || found("libomp.so"),
    );
    let say = |yes: bool| if yes { "installed" } else { "not installed" };
    Check {
        name: "OpenMP",
        ok: gomp && omp,
        detail: format!(
            "gcc's libgomp {}, LLVM's libomp (clang -fopenmp) {}",
            say(gomp),
            say(omp)
        ),
        fix: "apt-get install libgomp1 libomp-dev",
    }
}

fn tsc() -> Check {
    let ok = parallax::clock::tsc_is_invariant();
    Check {
        name: "invariant TSC",
        ok,
        detail: if ok {
            "probes read the time stamp counter (a few ns)".into()
        } else {
            "probes read CLOCK_MONOTONIC instead (slower, about 20 ns)".into()
        },
        fix: "a CPU with constant_tsc and nonstop_tsc (a hardware property)",
    }
}

/// `perf_event_open` for this thread: the kernel's answer.
fn perf_open(kind: u32, config: u64) -> Result<(), std::io::Error> {
    // perf_event_attr, version 0 layout (64 bytes): type, size, config at
    // 0, 4, 8; the flag bits at 40 (exclude_kernel is bit 5, exclude_hv 6).
    let mut attr = [0u8; 64];
    attr[0..4].copy_from_slice(&kind.to_ne_bytes());
    attr[4..8].copy_from_slice(&64u32.to_ne_bytes());
    attr[8..16].copy_from_slice(&config.to_ne_bytes());
    let flags: u64 = (1 << 5) | (1 << 6);
    attr[40..48].copy_from_slice(&flags.to_ne_bytes());
    // Safety: attr is a valid perf_event_attr of the size it declares; the
    // descriptor returned is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Safety: fd is the descriptor just opened.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

fn paranoid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn perf_software() -> Check {
    // PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK.
    let r = perf_open(1, 1);
    Check {
        name: "perf events (software)",
        ok: r.is_ok(),
        detail: match r {
            Ok(()) => format!(
                "task clock, context switches, page faults (perf_event_paranoid {})",
                paranoid()
            ),
            Err(e) => format!("refused: {e} (perf_event_paranoid {})", paranoid()),
        },
        fix: "sysctl kernel.perf_event_paranoid=2 (or lower), outside a seccomp sandbox",
    }
}

fn perf_hardware() -> Check {
    // PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES.
    let r = perf_open(0, 0);
    Check {
        name: "hardware counters",
        ok: r.is_ok(),
        detail: match r {
            Ok(()) => "cycles, instructions, cache misses".into(),
            Err(e) => format!("not available: {e} (common in virtual machines)"),
        },
        fix: "a machine (or VM) that exposes the CPU's performance counters",
    }
}

/// A program on the PATH, with the first line of its version.
fn tool(name: &'static str, program: &str, args: &[&str], fix: &'static str) -> Check {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    match out {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            Check {
                name,
                ok: true,
                detail: format!(
                    "{program}: {}",
                    first
                        .trim()
                        .chars()
                        .filter(|c| !c.is_control())
                        .collect::<String>()
                ),
                fix,
            }
        }
        Err(_) => Check {
            name,
            ok: false,
            detail: format!("{program} not found"),
            fix,
        },
    }
}
