//! Recording an experiment: one transaction per run.

use std::collections::HashMap;
use std::path::Path;

use parallax_model::event::{
    RegionId, OVERFLOW_REGION, SKIPPED_NAME, SKIPPED_REGION, UNKNOWN_REGION,
};
use parallax_model::experiment::Experiment;
use parallax_model::region::Category;
use parallax_view::profile::{ExperimentProfile, Times};
use rusqlite::{params, OptionalExtension, TransactionBehavior};

use crate::{Db, Result};
use parallax_view::finding::Finding;

/// What the experiment does not say about a run.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    /// Program name shown in lists (e.g. the file name of the program).
    pub program: String,
    /// The command line that produced the run.
    pub command: Vec<String>,
    /// How it ended ("exit 0", "killed by signal 9", "imported").
    pub status: String,
    /// Wall time of the run, seconds.
    pub wall_s: Option<f64>,
    /// Source revision of the program.
    pub git_revision: Option<String>,
    /// Compiler that built the program.
    pub compiler: Option<String>,
    /// MPI library version.
    pub mpi: Option<String>,
    /// User tags.
    pub tags: Vec<String>,
    /// Findings of the bottleneck analysis.
    pub findings: Vec<Finding>,
    /// The process that records the run (JSON; see the `runner` column).
    pub runner: Option<String>,
}

impl Db {
    /// Records `exp` (with its loaded profile) as a new run; returns its id.
    pub fn record(
        &mut self,
        exp: &Experiment,
        prof: &ExperimentProfile,
        meta: &RunMeta,
    ) -> Result<i64> {
        self.store(None, exp, prof, meta)
    }

    /// Records a run that starts now in `dir`, before it has an
    /// experiment: its metadata (`meta.status` says "running") and tags.
    /// [`Db::complete`] or [`Db::set_status`] finish the record.
    pub fn begin(&mut self, dir: &Path, meta: &RunMeta) -> Result<i64> {
        let path = self.path.clone();
        let e = |e| crate::Error::sql(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        tx.execute(
            "INSERT INTO runs (dir, program, ranks, threads, start_unix_ns, wall_s, status, \
             parallax_version, recorded_unix_s, command, mpi, runner) \
             VALUES (?1, ?2, 0, 0, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                dir.to_string_lossy(),
                meta.program,
                now.as_nanos() as i64,
                meta.wall_s,
                meta.status,
                env!("CARGO_PKG_VERSION"),
                now.as_secs() as i64,
                serde_json::to_string(&meta.command).unwrap_or_default(),
                meta.mpi,
                meta.runner,
            ],
        )
        .map_err(e)?;
        let run = tx.last_insert_rowid();
        insert_tags(&tx, run, &meta.tags).map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(run)
    }

    /// Completes run `id` (from [`Db::begin`]) with its experiment; a run
    /// removed meanwhile is recorded anew. Returns the run's id.
    pub fn complete(
        &mut self,
        id: i64,
        exp: &Experiment,
        prof: &ExperimentProfile,
        meta: &RunMeta,
    ) -> Result<i64> {
        self.store(Some(id), exp, prof, meta)
    }

    /// Sets how run `id` ended, for a run that left no experiment.
    pub fn set_status(&mut self, id: i64, status: &str, wall_s: Option<f64>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET status = ?2, wall_s = ?3 WHERE id = ?1",
                params![id, status, wall_s],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Records `exp` as run `id`, or as a new run.
    fn store(
        &mut self,
        id: Option<i64>,
        exp: &Experiment,
        prof: &ExperimentProfile,
        meta: &RunMeta,
    ) -> Result<i64> {
        let path = self.path.clone();
        let e = |e| crate::Error::sql(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let first = exp.processes.first().and_then(|p| p.info.as_ref());
        let mut hosts: Vec<&str> = exp
            .processes
            .iter()
            .filter_map(|p| p.info.as_ref().map(|i| i.host.as_str()))
            .collect();
        hosts.sort();
        hosts.dedup();
        let dir = std::fs::canonicalize(&exp.dir).unwrap_or_else(|_| exp.dir.clone());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let begun: Option<i64> = match id {
            Some(id) => tx
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()
                .map_err(e)?,
            None => None,
        };
        let args = serde_json::to_string(&first.map(|i| i.args.clone()).unwrap_or_default())
            .unwrap_or_default();
        let hosts = hosts.join(",");
        let (dir, ranks, locations) = (
            dir.to_string_lossy(),
            exp.processes.len() as i64,
            prof.locations.len() as i64,
        );
        let (start, mode) = (
            // 0: the start is not known (an imported trace's).
            first.map(|i| i.start_unix_ns as i64).filter(|&t| t > 0),
            first.map(|i| i.mode.name()),
        );
        let (version, command) = (
            first.map(|i| i.version.clone()),
            serde_json::to_string(&meta.command).unwrap_or_default(),
        );
        let values: [&dyn rusqlite::ToSql; 18] = [
            &dir,
            &meta.program,
            &args,
            &hosts,
            &ranks,
            &locations,
            &start,
            &meta.wall_s,
            &mode,
            &meta.status,
            &version,
            &(now as i64),
            &command,
            &meta.git_revision,
            &meta.compiler,
            &meta.mpi,
            &meta.runner,
            &begun,
        ];
        // A begun run's row is filled in (it keeps its id and tags).
        if begun.is_some() {
            tx.execute(
                "UPDATE runs SET dir = ?1, program = ?2, args = ?3, hosts = ?4, ranks = ?5, \
                 threads = ?6, start_unix_ns = COALESCE(?7, start_unix_ns), wall_s = ?8, \
                 mode = ?9, status = ?10, parallax_version = COALESCE(?11, parallax_version), \
                 recorded_unix_s = ?12, command = ?13, git_revision = ?14, compiler = ?15, \
                 mpi = ?16, runner = ?17 WHERE id = ?18",
                &values[..],
            )
        } else {
            tx.execute(
                "INSERT INTO runs (dir, program, args, hosts, ranks, threads, start_unix_ns, \
                 wall_s, mode, status, parallax_version, recorded_unix_s, command, git_revision, \
                 compiler, mpi, runner) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                &values[..17],
            )
        }
        .map_err(e)?;
        let run = match begun {
            Some(id) => id,
            None => tx.last_insert_rowid(),
        };
        {
            let mut ins_loc = tx
                .prepare("INSERT INTO locations (run, loc, rank, thread, name) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(e)?;
            let mut ins_prof = tx
                .prepare(
                    "INSERT INTO profile (run, loc, callpath, count, incl_ns, excl_ns, min_ns, max_ns, sumsq_ns2) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
                     ON CONFLICT (run, loc, callpath) DO UPDATE SET \
                     count = count + excluded.count, incl_ns = incl_ns + excluded.incl_ns, \
                     excl_ns = excl_ns + excluded.excl_ns, min_ns = MIN(min_ns, excluded.min_ns), \
                     max_ns = MAX(max_ns, excluded.max_ns), sumsq_ns2 = sumsq_ns2 + excluded.sumsq_ns2",
                )
                .map_err(e)?;
            let mut paths = Unifier::new(&tx);
            for (li, l) in prof.locations.iter().enumerate() {
                ins_loc
                    .execute(params![run, li as i64, l.rank, l.thread, l.name])
                    .map_err(e)?;
                let p = &exp.processes[l.process];
                // Regions of one name (two static functions `helper`, two
                // barriers of one function) share a call path here: their
                // times add up.
                let mut node_path: Vec<i64> = Vec::with_capacity(l.tree.nodes.len());
                for (ni, n) in l.tree.nodes.iter().enumerate() {
                    // A parent after its child would be a damaged tree: such
                    // a node hangs at the top.
                    let parent = n
                        .parent
                        .and_then(|q| node_path.get(q as usize).copied())
                        .filter(|_| n.parent.is_some_and(|q| (q as usize) < ni))
                        .unwrap_or(0);
                    let region = paths.region(l.process, p, n.region).map_err(e)?;
                    let cp = paths.callpath(parent, region).map_err(e)?;
                    node_path.push(cp);
                    if n.stats.count == 0 && n.stats.inclusive == 0 {
                        continue;
                    }
                    let t = Times::from_stats(&n.stats, &l.clock);
                    ins_prof
                        .execute(params![
                            run,
                            li as i64,
                            cp,
                            t.count as i64,
                            t.inclusive,
                            t.exclusive,
                            t.min,
                            t.max,
                            t.sum_sq
                        ])
                        .map_err(e)?;
                }
            }
            let mut ins_metric = tx
                .prepare("INSERT INTO run_metrics (run, metric, value) VALUES (?1, ?2, ?3)")
                .map_err(e)?;
            for (name, v) in derived_metrics(exp, prof) {
                ins_metric.execute(params![run, name, v]).map_err(e)?;
            }
        }
        insert_tags(&tx, run, &meta.tags).map_err(e)?;
        crate::findings::insert(&tx, run, &meta.findings).map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(run)
    }
}

fn insert_tags(tx: &rusqlite::Transaction<'_>, run: i64, tags: &[String]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare("INSERT OR IGNORE INTO tags (run, tag) VALUES (?1, ?2)")?;
    for t in tags {
        ins.execute(params![run, t])?;
    }
    Ok(())
}

/// Derived metrics of a run: time per category summed over locations, and
/// per category the imbalance max/mean over locations.
fn derived_metrics(exp: &Experiment, prof: &ExperimentProfile) -> Vec<(String, f64)> {
    let n = prof.locations.len();
    let per: Vec<_> = (0..n).map(|i| prof.categories(exp, i)).collect();
    let mut out = Vec::new();
    for c in [
        Category::Computation,
        Category::Communication,
        Category::Synchronization,
        Category::Io,
        Category::Measurement,
    ] {
        let v: Vec<f64> = per
            .iter()
            .map(|m| m.get(&c).copied().unwrap_or(0.0))
            .collect();
        let sum: f64 = v.iter().sum();
        if sum <= 0.0 {
            continue;
        }
        let max = v.iter().copied().fold(0.0, f64::max);
        out.push((format!("time_ns.{}", c.name()), sum));
        out.push((format!("imbalance.{}", c.name()), max * n as f64 / sum));
    }
    out
}

/// Maps a process's regions and a tree's nodes to the rows shared by all
/// runs.
struct Unifier<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    regions: HashMap<(usize, RegionId), i64>,
    paths: HashMap<(i64, i64), i64>,
    depth: HashMap<i64, i64>,
}

impl<'a> Unifier<'a> {
    fn new(tx: &'a rusqlite::Transaction<'a>) -> Unifier<'a> {
        Unifier {
            tx,
            regions: HashMap::new(),
            paths: HashMap::new(),
            depth: HashMap::new(),
        }
    }

    fn region(
        &mut self,
        pi: usize,
        p: &parallax_model::experiment::Process,
        id: RegionId,
    ) -> rusqlite::Result<i64> {
        if let Some(&r) = self.regions.get(&(pi, id)) {
            return Ok(r);
        }
        let (name, kind, file, line) = match (id, p.regions.get(&id)) {
            (UNKNOWN_REGION, _) => ("<unknown>".to_string(), "user", String::new(), 0),
            (OVERFLOW_REGION, _) => ("<other paths>".to_string(), "user", String::new(), 0),
            (SKIPPED_REGION, _) => (SKIPPED_NAME.to_string(), "user", String::new(), 0),
            (_, Some(r)) => (r.name.clone(), r.kind.name(), r.file.clone(), r.line),
            (_, None) => (p.region_name(id), "user", String::new(), 0),
        };
        self.tx.execute(
            "INSERT INTO regions (name, kind, file, line) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (name, kind) DO UPDATE SET file = excluded.file, line = excluded.line \
             WHERE excluded.file <> ''",
            params![name, kind, file, line],
        )?;
        let r: i64 = self.tx.query_row(
            "SELECT id FROM regions WHERE name = ?1 AND kind = ?2",
            params![name, kind],
            |r| r.get(0),
        )?;
        self.regions.insert((pi, id), r);
        Ok(r)
    }

    fn callpath(&mut self, parent: i64, region: i64) -> rusqlite::Result<i64> {
        if let Some(&c) = self.paths.get(&(parent, region)) {
            return Ok(c);
        }
        let found: Option<i64> = self
            .tx
            .query_row(
                "SELECT id FROM callpaths WHERE parent = ?1 AND region = ?2",
                params![parent, region],
                |r| r.get(0),
            )
            .optional()?;
        let id = match found {
            Some(id) => id,
            None => {
                let depth = if parent == 0 {
                    0
                } else {
                    match self.depth.get(&parent) {
                        Some(d) => d + 1,
                        None => {
                            self.tx.query_row(
                                "SELECT depth FROM callpaths WHERE id = ?1",
                                [parent],
                                |r| r.get::<_, i64>(0),
                            )? + 1
                        }
                    }
                };
                self.tx.execute(
                    "INSERT INTO callpaths (parent, region, depth) VALUES (?1, ?2, ?3)",
                    params![parent, region, depth],
                )?;
                let id = self.tx.last_insert_rowid();
                self.depth.insert(id, depth);
                id
            }
        };
        self.paths.insert((parent, region), id);
        Ok(id)
    }
}
