//! Creating experiment directories and their manifest.
//!
//! A directory given as `--out` is used if it is new or empty. One that
//! holds an earlier experiment is replaced, and only if it verifiably holds
//! nothing but Parallax's own files: a manifest of Parallax's schema, the
//! job marker, Parallax's temporary files, and `rank-NNNNN` directories of
//! files with a Parallax magic number. Anything else, or an experiment
//! whose `parallax run` still runs, is refused and left as it is.
//!
//! The earlier experiment is not deleted first: it is renamed aside (to
//! `.NAME.parallax-previous-PID` beside it) and deleted once the new one
//! is complete ([`Prepared::commit`]); a command that fails before that
//! puts it back.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use parallax_model::experiment::{Experiment, MANIFEST};
use parallax_output::file::{Kind, TEMPORARY_MARK};

use crate::runner::{self, Runner};

/// Marker of the MPI job that prepared an experiment directory (see
/// `parallax run` under a launcher).
pub const JOB_MARKER: &str = ".parallax-job";

/// A manifest: JSON. It is only ever replaced inside a directory that
/// [`prepare`] made ready, by the command that made it ready.
const MANIFEST_KIND: Kind = Kind::starting_with("a Parallax manifest", &[b"{"]);

/// The job marker holds a job id: short text.
pub const JOB_MARKER_KIND: Kind = Kind::recognised_by("a Parallax job marker", |h| {
    h.len() <= 256 && !h.contains(&0)
});

/// What the manifest of `dir` says, if it has one of Parallax's schema.
pub fn read_manifest(dir: &Path) -> Option<Value> {
    let text = parallax_model::experiment::manifest_text(dir)?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v.get("parallax_version")?.as_str()?;
    v.get("status")?.as_str()?;
    Some(v)
}

/// How the run of the experiment in `dir` stands, from its manifest: its
/// status, or that its `parallax run` was killed while the manifest still
/// says "running" ([`runner::describe`]).
pub fn run_state(dir: &Path) -> Option<String> {
    let m = read_manifest(dir)?;
    let status = m["status"].as_str()?;
    Some(runner::describe(
        status,
        Runner::from_json(&m["runner"]).as_ref(),
    ))
}

fn is_rank_dir(name: &str) -> bool {
    name.strip_prefix("rank-")
        .is_some_and(|d| d.len() >= 5 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `p` is a regular file (not a link) that Parallax's runtime
/// writes in a process directory: it starts with a Parallax magic number
/// ("PLX" and a letter), or is empty and named as the runtime names its
/// files.
fn is_parallax_file(p: &Path) -> bool {
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return false;
    };
    if !m.is_file() {
        return false;
    }
    if m.len() == 0 {
        return matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("pxd" | "pxe" | "pxp" | "pxb" | "part")
        );
    }
    let mut head = [0u8; 4];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head[..3] == b"PLX" && head[3].is_ascii_uppercase())
}

fn is_regular(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
}

/// The entries of `dir` (as shown to people) that Parallax did not write;
/// empty for an experiment (or an empty directory).
pub fn foreign_entries(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut foreign = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let p = e.path();
        let ours = match name.as_str() {
            MANIFEST => is_regular(&p) && read_manifest(dir).is_some(),
            JOB_MARKER => is_regular(&p) && std::fs::metadata(&p).is_ok_and(|m| m.len() <= 256),
            n if n.starts_with('.') && n.contains(TEMPORARY_MARK) => is_regular(&p),
            n if is_rank_dir(n) => {
                let real_dir = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
                if real_dir {
                    // Named one by one: the directory itself is Parallax's.
                    for f in std::fs::read_dir(&p)? {
                        let f = f?;
                        if !is_parallax_file(&f.path()) {
                            foreign.push(format!("{name}/{}", f.file_name().to_string_lossy()));
                        }
                    }
                }
                real_dir
            }
            _ => false,
        };
        if !ours {
            let slash = if p.is_dir() { "/" } else { "" };
            foreign.push(format!("{name}{slash}"));
        }
    }
    foreign.sort();
    Ok(foreign)
}

/// Removes the experiment in `dir` and the directory, deleting only what
/// [`foreign_entries`] accepts: whatever else turned up is left (then the
/// directory stays, and the error says so).
fn remove_experiment(dir: &Path) -> anyhow::Result<()> {
    for e in std::fs::read_dir(dir)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let p = e.path();
        if is_rank_dir(&name) && std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            for f in std::fs::read_dir(&p)?.flatten() {
                if is_parallax_file(&f.path()) {
                    std::fs::remove_file(f.path())?;
                }
            }
            let _ = std::fs::remove_dir(&p);
        } else if (name == MANIFEST
            || name == JOB_MARKER
            || (name.starts_with('.') && name.contains(TEMPORARY_MARK)))
            && is_regular(&p)
        {
            std::fs::remove_file(&p)?;
        }
    }
    std::fs::remove_dir(dir).with_context(|| {
        format!(
            "cannot remove {}: it holds files that Parallax did not write",
            dir.display()
        )
    })
}

/// Refuses, with what is in the way, a directory that is not only a
/// finished (or abandoned) Parallax experiment.
fn check_replaceable(dir: &Path) -> anyhow::Result<()> {
    let foreign = foreign_entries(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if !foreign.is_empty() {
        let mut shown: Vec<String> = foreign
            .iter()
            .take(5)
            .map(|n| parallax_output::text::inert(n).into_owned())
            .collect();
        if foreign.len() > 5 {
            shown.push(format!("and {} more", foreign.len() - 5));
        }
        bail!(
            "{} is not an experiment that Parallax can replace: it holds {} that Parallax did \
             not write; it was left as it is: choose another --out, or move them away",
            dir.display(),
            shown.join(", ")
        );
    }
    if let Some(m) = read_manifest(dir) {
        if let Some(r) = Runner::from_json(&m["runner"]) {
            if m["status"] == runner::RUNNING && r.state() == runner::State::Alive {
                bail!(
                    "{} is the experiment of a parallax run that is still running (pid {}); \
                     choose another --out",
                    dir.display(),
                    r.pid
                );
            }
        }
    }
    Ok(())
}

/// An experiment directory made ready for a new experiment.
#[derive(Debug)]
pub struct Prepared {
    dir: PathBuf,
    /// The earlier experiment, renamed aside until the new one is complete.
    previous: Option<PathBuf>,
    done: bool,
}

/// Whether `dir` is the working directory or one of its parents (which a
/// rename would pull from under this process and the measured program).
fn holds_working_directory(dir: &Path) -> bool {
    match (std::fs::canonicalize(dir), std::env::current_dir()) {
        (Ok(d), Ok(cwd)) => cwd.starts_with(d),
        _ => true,
    }
}

/// Makes `dir` ready for a new experiment: creates it, uses it if empty,
/// or puts aside the experiment it holds. Refuses a link, a file, a
/// directory with anything else in it, and an experiment still being
/// written.
pub fn prepare(dir: &Path) -> anyhow::Result<Prepared> {
    let shown = dir.display();
    let mut prepared = Prepared {
        dir: dir.to_path_buf(),
        previous: None,
        done: false,
    };
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {shown}"))?;
            return Ok(prepared);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {shown}")),
        Ok(m) if m.file_type().is_symlink() => bail!(
            "{shown} is a symbolic link; Parallax does not write experiments through one: \
             choose another --out"
        ),
        Ok(m) if !m.is_dir() => {
            bail!("{shown} exists and is not a directory; choose another --out")
        }
        Ok(_) => {}
    }
    let empty = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {shown}"))?
        .next()
        .is_none();
    if empty {
        return Ok(prepared);
    }
    check_replaceable(dir)?;
    let aside = dir.file_name().and_then(|name| {
        let name = format!(
            ".{}.parallax-previous-{}",
            name.to_string_lossy(),
            std::process::id()
        );
        Some(dir.with_file_name(name)).filter(|_| !holds_working_directory(dir))
    });
    match aside {
        Some(a) if std::fs::rename(dir, &a).is_ok() => {
            // Absolute: the manifest names it to whoever reads it.
            prepared.previous = Some(std::fs::canonicalize(&a).unwrap_or(a));
            std::fs::create_dir(dir).with_context(|| format!("cannot create {shown}"))?;
        }
        // Not movable (a mount point, the working directory): emptied in
        // place, of Parallax's files only.
        _ => {
            remove_experiment(dir)?;
            std::fs::create_dir(dir).with_context(|| format!("cannot create {shown}"))?;
        }
    }
    Ok(prepared)
}

impl Prepared {
    /// Where the earlier experiment waits until [`Prepared::commit`].
    pub fn previous(&self) -> Option<&Path> {
        self.previous.as_deref()
    }

    /// The new experiment is complete: the earlier one is deleted. A
    /// failure is a warning; the earlier experiment then stays aside.
    pub fn commit(mut self) {
        self.done = true;
        if let Some(p) = self.previous.take() {
            if let Err(e) = remove_experiment(&p) {
                crate::console::warn(&format!(
                    "the previous experiment stays in {}: {e:#}",
                    p.display()
                ));
            }
        }
    }
}

impl Drop for Prepared {
    /// Not committed: the command failed before its experiment was
    /// complete. What it wrote is removed and the earlier experiment put
    /// back.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let Some(p) = self.previous.take() else {
            return;
        };
        let back = remove_experiment(&self.dir).and_then(|()| {
            std::fs::rename(&p, &self.dir).with_context(|| format!("cannot rename {}", p.display()))
        });
        if let Err(e) = back {
            crate::console::warn(&format!(
                "the previous experiment of {} stays in {}: {e:#}",
                self.dir.display(),
                p.display()
            ));
        }
    }
}

/// Writes `manifest.json`: a human-readable summary of the run, and which
/// process wrote it (so that a "running" status outlived by its process
/// reads as a killed run).
pub fn write_manifest(
    dir: &Path,
    command: &[String],
    status: &str,
    wall_s: f64,
    previous: Option<&Path>,
) -> anyhow::Result<()> {
    let exp = Experiment::open(dir).ok();
    let processes: Vec<_> = exp
        .iter()
        .flat_map(|e| e.processes.iter())
        .map(|p| {
            let info = p.info.as_ref();
            json!({
                "rank": p.rank,
                "host": info.map(|i| i.host.clone()),
                "pid": info.map(|i| i.pid),
                "mode": info.map(|i| i.mode.name()),
                "locations": p.locations.len(),
                "start_unix_ns": info.map(|i| i.start_unix_ns),
                "end_unix_ns": p.end_unix_ns,
                "finished_cleanly": p.end_unix_ns.is_some(),
                "clock": {
                    "source": format!("{:?}", p.clock_source).to_lowercase(),
                    "ns_per_tick": p.clock.ns_per_tick,
                },
                "probe_costs_ns": probe_costs(p),
            })
        })
        .collect();
    let mut m = json!({
        "parallax_version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "status": status,
        "wall_seconds": wall_s,
        "runner": Runner::current().to_json(),
        "processes": processes,
    });
    if let Some(p) = previous {
        m["previous_experiment"] = json!(p);
    }
    let text = serde_json::to_string_pretty(&m)? + "\n";
    parallax_output::file::write(&dir.join(MANIFEST), MANIFEST_KIND, text.as_bytes())
        .with_context(|| format!("cannot write the manifest in {}", dir.display()))
}

/// Each probe's cost: the mean over the process's calibrations (at start,
/// at the end and whenever the program asked), the largest standard
/// deviation, and how many there were.
fn probe_costs(
    p: &parallax_model::experiment::Process,
) -> serde_json::Map<String, serde_json::Value> {
    let mut by: std::collections::BTreeMap<&str, Vec<(f64, f64)>> = Default::default();
    for c in &p.calibration {
        by.entry(c.probe.name())
            .or_default()
            .push((c.mean_ns, c.sd_ns));
    }
    by.into_iter()
        .map(|(name, v)| {
            let mean = v.iter().map(|x| x.0).sum::<f64>() / v.len() as f64;
            let sd = v.iter().map(|x| x.1).fold(0.0, f64::max);
            (
                name.to_string(),
                json!({"mean": mean, "sd": sd, "calibrations": v.len()}),
            )
        })
        .collect()
}
