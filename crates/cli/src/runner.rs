//! The process that runs a measurement (`parallax run`), named so that a
//! later command can tell whether it still runs: a manifest or run record
//! that says "running" after its process is gone belongs to a
//! `parallax run` that was killed.

use serde_json::{json, Value};

/// A process, by host, boot, pid and start time (a pid alone may have
/// been reused since).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runner {
    pub host: String,
    pub boot: String,
    pub pid: u32,
    /// Start time in clock ticks since boot (field 22 of /proc/PID/stat).
    pub start: u64,
}

/// Whether a runner still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Alive,
    Gone,
    /// On another host: this one cannot tell.
    Unknown,
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // Safety: the buffer is valid for its length; gethostname writes at
    // most that much.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// (state letter, start ticks) of process `pid`, from /proc.
fn stat(pid: &str) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: the
    // fields after it follow the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    // Field 3 was `state`; the start time is field 22.
    let start = f.nth(18)?.parse().ok()?;
    Some((state, start))
}

impl Runner {
    /// This process.
    pub fn current() -> Runner {
        Runner {
            host: host_name(),
            boot: boot_id(),
            pid: std::process::id(),
            start: stat("self").map_or(0, |s| s.1),
        }
    }

    /// Whether it still runs (a zombie does not).
    pub fn state(&self) -> State {
        if self.host != host_name() {
            return State::Unknown;
        }
        if !self.boot.is_empty() && self.boot != boot_id() {
            return State::Gone;
        }
        match stat(&self.pid.to_string()) {
            Some((state, start)) if state != 'Z' && start == self.start => State::Alive,
            _ => State::Gone,
        }
    }

    pub fn to_json(&self) -> Value {
        json!({"host": self.host, "boot": self.boot, "pid": self.pid, "start": self.start})
    }

    pub fn from_json(v: &Value) -> Option<Runner> {
        Some(Runner {
            host: v.get("host")?.as_str()?.to_string(),
            boot: v.get("boot")?.as_str()?.to_string(),
            pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
            start: v.get("start")?.as_u64()?,
        })
    }
}

/// How a run that was recorded as `status` by `runner` stands now: the
/// status itself, unless it says "running" and its `parallax run` is gone.
pub fn describe(status: &str, runner: Option<&Runner>) -> String {
    if status != RUNNING {
        return status.to_string();
    }
    match runner.map(Runner::state) {
        Some(State::Alive) => RUNNING.to_string(),
        Some(State::Unknown) => format!(
            "running on {} (or killed: this host cannot tell)",
            runner.map_or("", |r| r.host.as_str())
        ),
        Some(State::Gone) | None => KILLED.to_string(),
    }
}

/// The status of a run that has not ended.
pub const RUNNING: &str = "running";

/// How a run whose `parallax run` vanished is shown.
pub const KILLED: &str = "did not finish: parallax run was killed";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_finished_child_does_not() {
        let me = Runner::current();
        assert!(me.start > 0);
        assert_eq!(me.state(), State::Alive);
        assert_eq!(Runner::from_json(&me.to_json()), Some(me.clone()));
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let start = stat(&pid.to_string()).map_or(0, |s| s.1);
        let mut child = child;
        child.wait().unwrap();
        let gone = Runner {
            pid,
            start,
            ..me.clone()
        };
        assert_eq!(gone.state(), State::Gone);
        assert_eq!(describe(RUNNING, Some(&gone)), KILLED);
        assert_eq!(describe("exit 0", Some(&gone)), "exit 0");
        let elsewhere = Runner {
            host: "elsewhere.invalid".into(),
            ..me
        };
        assert_eq!(elsewhere.state(), State::Unknown);
    }
}
