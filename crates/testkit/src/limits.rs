//! Running a command under a time limit and an address-space limit, and
//! judging how it ended.
//!
//! The limit on memory is `RLIMIT_AS`, set in the child before it runs
//! the program: an allocation beyond it fails inside the command (Rust
//! aborts with "memory allocation of N bytes failed"), which the verdict
//! reports. The time limit kills the command's process group. The peak
//! resident set comes from the kernel's accounting of the child
//! (`wait4`'s `ru_maxrss`).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long and how much memory a command may take.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall time before the command is killed.
    pub time: Duration,
    /// Address space (bytes) the command may map.
    pub memory: u64,
}

impl Limits {
    /// The limits of the adversarial tests: 1 GiB of address space and
    /// `secs` seconds.
    pub fn new(secs: u64) -> Limits {
        Limits {
            time: Duration::from_secs(secs),
            memory: 1 << 30,
        }
    }
}

/// How a command ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Exit status, if it exited.
    pub status: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Whether it was killed for running out of time.
    pub timed_out: bool,
    /// Peak resident set, bytes.
    pub max_rss: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// What it printed (at most [`KEEP`] bytes of each stream).
    pub stdout: Vec<u8>,
    /// How many bytes it printed on stdout in all.
    pub stdout_len: u64,
    /// What it printed on stderr, lossily decoded.
    pub stderr: String,
}

/// Bytes of each output stream kept; the rest is read and dropped.
pub const KEEP: usize = 1 << 20;

/// Runs `cmd` (its stdin empty) under `limits`.
pub fn run(cmd: &mut Command, limits: &Limits) -> std::io::Result<Outcome> {
    let memory = limits.memory;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Safety: the closure only calls async-signal-safe functions (setrlimit,
    // setpgid) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let set = |what, v: u64| {
                let l = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                if libc::setrlimit(what, &l) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            };
            set(libc::RLIMIT_AS, memory)?;
            set(libc::RLIMIT_CORE, 0)?;
            // A group of its own, so that a timeout kills what it started.
            libc::setpgid(0, 0);
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut keep = Vec::new();
            let mut total = 0u64;
            let mut buf = [0u8; 1 << 16];
            loop {
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        total += n as u64;
                        let room = KEEP.saturating_sub(keep.len());
                        keep.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
            }
            (keep, total)
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let mut status = 0;
    // Safety: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    loop {
        // Safety: waits for our own child, writing into live locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if !timed_out && started.elapsed() > limits.time {
            timed_out = true;
            // Safety: signals the process group this function created.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let elapsed = started.elapsed();
    let (stdout, stdout_len) = out.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default().0).into_owned();
    let (exited, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Ok(Outcome {
        status: exited,
        signal,
        timed_out,
        max_rss: usage.ru_maxrss as u64 * 1024,
        elapsed,
        stdout,
        stdout_len,
        stderr,
    })
}

impl Outcome {
    /// What is wrong with how the command ended, for a reading command
    /// given hostile input: a panic, a signal (an allocation beyond the
    /// memory limit aborts), a timeout, a peak resident set above `memory`,
    /// or a failure without a message. Empty: a result (exit 0) or a clear
    /// error (a non-zero exit with a message).
    pub fn problems(&self, memory: u64) -> Vec<String> {
        let mut p = Vec::new();
        if self.timed_out {
            p.push(format!(
                "no result in {:.1} s (killed)",
                self.elapsed.as_secs_f64()
            ));
        } else if let Some(s) = self.signal {
            p.push(format!("killed by signal {s}"));
        }
        if self.status == Some(101) || self.stderr.contains("panicked") {
            p.push("panicked".into());
        }
        if self.stderr.contains("memory allocation of") {
            p.push("an allocation failed".into());
        }
        if self.max_rss > memory {
            p.push(format!("peak resident set {} MiB", self.max_rss >> 20));
        }
        if let Some(s) = self.status {
            if s != 0 && self.stderr.trim().is_empty() {
                p.push(format!("exit status {s} without a message"));
            }
        }
        p
    }

    /// The last lines of stderr, for a failure message.
    pub fn stderr_tail(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    }
}
