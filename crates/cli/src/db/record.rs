//! Recording new experiments in the run database. A failure here never
//! fails the command that measured: the experiment directory is complete
//! either way, so it is a warning.

use std::path::{Path, PathBuf};
use std::time::Instant;

use parallax_analysis::profile::ExperimentProfile;
use parallax_db::{meta, Db, RunMeta};
use parallax_model::experiment::Experiment;

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

/// Records `exp` unless `--no-db`; `program` is the measured program's
/// file (for its source revision and compiler). Prints the run id, or a
/// warning.
pub fn record(
    t: &Target,
    exp: &Experiment,
    prof: Option<&ExperimentProfile>,
    program: Option<&Path>,
    mut meta: RunMeta,
) {
    if t.no_db {
        return;
    }
    let Some(path) = parallax_db::resolve(t.db.as_deref()) else {
        eprintln!(
            "parallax: warning: run not recorded: no database path (set --db or PARALLAX_DB)"
        );
        return;
    };
    let started = Instant::now();
    let loaded;
    let prof = match prof {
        Some(p) => p,
        None => match ExperimentProfile::load(exp) {
            Ok(p) => {
                loaded = p;
                &loaded
            }
            Err(e) => {
                eprintln!(
                    "parallax: warning: run not recorded in {}: {e}",
                    path.display()
                );
                return;
            }
        },
    };
    if let Some(p) = program {
        meta.git_revision = meta::git_revision(p);
        meta.compiler = meta::compiler(p);
    }
    meta.tags.extend(t.tags.iter().cloned());
    let r = Db::open(&path).and_then(|mut db| db.record(exp, prof, &meta));
    match r {
        Ok(id) => eprintln!(
            "parallax: recorded as run {id} in {} ({:.0} ms)",
            path.display(),
            started.elapsed().as_secs_f64() * 1e3
        ),
        Err(e) => eprintln!("parallax: warning: run not recorded: {e}"),
    }
}
