//! Recording new experiments in the run database. A failure here never
//! fails the command that measured: the experiment directory is complete
//! either way, so it is a warning.
//!
//! `parallax run` records its run when the program starts (status
//! "running", with the process that runs it) and completes the record when
//! the program has ended: a run whose `parallax run` is killed stays in the
//! database and reads as such.

use std::path::{Path, PathBuf};
use std::time::Instant;

use parallax_db::{meta, Db, RunMeta};
use parallax_model::experiment::Experiment;
use parallax_view::profile::ExperimentProfile;

use crate::console;

/// Where (and whether) `run`, `demo` and `import` record their experiment.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Target {
    /// Record the run in this database file [default: $PARALLAX_DB, else
    /// ~/.local/share/parallax/runs.sqlite].
    #[arg(long, value_name = "FILE", conflicts_with = "no_db")]
    pub db: Option<PathBuf>,
    /// Do not record the run in the run database.
    #[arg(long)]
    pub no_db: bool,
    /// Tag the recorded run (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

impl Target {
    /// The database file, unless `--no-db`; warns when there is none.
    fn path(&self) -> Option<PathBuf> {
        if self.no_db {
            return None;
        }
        let p = parallax_db::resolve(self.db.as_deref());
        if p.is_none() {
            console::warn("run not recorded: no database path (set --db or PARALLAX_DB)");
        }
        p
    }
}

/// A run recorded as started, to complete when it ends.
#[derive(Debug)]
pub struct Begun {
    id: i64,
}

/// Records a run starting now in `dir` (unless `--no-db`); `meta.status`
/// says it runs. A failure is a warning.
pub fn begin(t: &Target, dir: &Path, mut meta: RunMeta) -> Option<Begun> {
    let path = t.path()?;
    meta.tags.extend(t.tags.iter().cloned());
    match Db::open(&path).and_then(|mut db| db.begin(dir, &meta)) {
        Ok(id) => Some(Begun { id }),
        Err(e) => {
            console::warn(&format!("run not recorded: {e}"));
            None
        }
    }
}

/// Records `exp` unless `--no-db`; `program` is the measured program's
/// file (for its source revision and compiler). Prints the run id, or a
/// warning.
pub fn record(
    t: &Target,
    exp: &Experiment,
    prof: Option<&ExperimentProfile>,
    program: Option<&Path>,
    meta: RunMeta,
) {
    finish(t, None, Some(exp), prof, program, meta);
}

/// Completes the record of a run (`begun`, else a new record) with its
/// experiment, or, for a run that left none, with how it ended.
pub fn finish(
    t: &Target,
    begun: Option<Begun>,
    exp: Option<&Experiment>,
    prof: Option<&ExperimentProfile>,
    program: Option<&Path>,
    mut meta: RunMeta,
) {
    let Some(path) = t.path() else {
        return;
    };
    let started = Instant::now();
    if let Some(p) = program {
        meta.git_revision = meta::git_revision(p);
        meta.compiler = meta::compiler(p);
    }
    meta.tags.extend(t.tags.iter().cloned());
    let id = begun.map(|b| b.id);
    let r = match exp {
        Some(exp) => {
            let loaded;
            let prof = match prof {
                Some(p) => p,
                None => match ExperimentProfile::load(exp) {
                    Ok(p) => {
                        loaded = p;
                        &loaded
                    }
                    Err(e) => {
                        // The run stays recorded as it started, if it was.
                        if let Some(id) = id {
                            let _ = Db::open(&path)
                                .and_then(|mut db| db.set_status(id, &meta.status, meta.wall_s));
                        }
                        console::warn(&format!("run not recorded in {}: {e}", path.display()));
                        return;
                    }
                },
            };
            Db::open(&path).and_then(|mut db| match id {
                Some(id) => db.complete(id, exp, prof, &meta),
                None => db.record(exp, prof, &meta),
            })
        }
        None => match id {
            Some(id) => Db::open(&path)
                .and_then(|mut db| db.set_status(id, &meta.status, meta.wall_s))
                .map(|()| id),
            None => return,
        },
    };
    match r {
        Ok(id) => console::note(&format!(
            "recorded as run {id} in {} ({:.0} ms)",
            path.display(),
            started.elapsed().as_secs_f64() * 1e3
        )),
        Err(e) => console::warn(&format!("run not recorded: {e}")),
    }
}
