//! Reading the database: run lists, run details, read-only SQL, and the
//! multi-run views (comparison, scaling). Findings are in [`crate::findings`].

use rusqlite::types::ValueRef;
use rusqlite::{params, params_from_iter};

use crate::{Db, Error, Result};

/// One run as listed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// Its id.
    pub id: i64,
    /// Experiment directory.
    pub dir: String,
    /// Program name.
    pub program: String,
    /// Command line, joined.
    pub command: String,
    /// Processes (ranks).
    pub ranks: i64,
    /// Locations (threads over all ranks).
    pub threads: i64,
    /// Start, ns since the epoch.
    pub start_unix_ns: Option<i64>,
    /// Wall time, s.
    pub wall_s: Option<f64>,
    /// Measurement mode.
    pub mode: Option<String>,
    /// How it ended.
    pub status: Option<String>,
    /// Hosts, comma-separated.
    pub hosts: String,
    /// Source revision.
    pub git_revision: Option<String>,
    /// Compiler.
    pub compiler: Option<String>,
    /// MPI library.
    pub mpi: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// The process that recorded it (JSON), if known.
    pub runner: Option<String>,
}

/// A call path's statistics in one run, summed over locations.
#[derive(Clone, Debug, PartialEq)]
pub struct PathStat {
    /// Region names from the top, joined with `/`.
    pub path: String,
    /// Visits.
    pub calls: i64,
    /// Inclusive time, ns.
    pub incl_ns: f64,
    /// Exclusive time, ns.
    pub excl_ns: f64,
    /// Share of the run's exclusive time, %.
    pub pct_excl: f64,
    /// Slowest location's inclusive time over the mean.
    pub imbalance: f64,
}

/// Regions × runs: one row per call path, one value per run.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareTable {
    /// The runs, in the order asked.
    pub runs: Vec<RunRow>,
    /// (call path, depth, value per run; `None` where a run never reached it).
    pub rows: Vec<(String, i64, Vec<Option<f64>>)>,
}

/// One run of a scaling series.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingPoint {
    /// The run.
    pub run: i64,
    /// Processes.
    pub ranks: i64,
    /// Locations.
    pub threads: i64,
    /// Wall time, s.
    pub wall_s: f64,
}

/// How much a `db query` statement may take.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Time, after which the statement is interrupted.
    pub timeout: std::time::Duration,
    /// Rows returned.
    pub max_rows: usize,
    /// Bytes of the result as text (and of any one value).
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: std::time::Duration::from_secs(10),
            max_rows: 100_000,
            max_bytes: 256 << 20,
        }
    }
}

/// What `compare` puts in each cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Exclusive time summed over locations.
    Exclusive,
    /// Inclusive time summed over locations.
    Inclusive,
    /// Inclusive time of the slowest location.
    MaxInclusive,
}

impl Metric {
    /// The metric named `s` (excl, incl, max).
    pub fn parse(s: &str) -> Option<Metric> {
        match s {
            "excl" => Some(Metric::Exclusive),
            "incl" => Some(Metric::Inclusive),
            "max" => Some(Metric::MaxInclusive),
            _ => None,
        }
    }

    fn column(self) -> &'static str {
        match self {
            Metric::Exclusive => "excl_ns",
            Metric::Inclusive => "incl_ns",
            Metric::MaxInclusive => "max_incl_ns",
        }
    }
}

const RUN_COLUMNS: &str =
    "id, dir, program, command, ranks, threads, start_unix_ns, wall_s, mode, \
     status, hosts, git_revision, compiler, mpi, runner";

impl Db {
    fn runs_where(&self, cond: &str, args: &[&dyn rusqlite::ToSql]) -> Result<Vec<RunRow>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs {cond}");
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(args, |r| {
                let command: String = r.get(3)?;
                let command = serde_json::from_str::<Vec<String>>(&command)
                    .map(|v| v.join(" "))
                    .unwrap_or(command);
                Ok(RunRow {
                    id: r.get(0)?,
                    dir: r.get(1)?,
                    program: r.get(2)?,
                    command,
                    ranks: r.get(4)?,
                    threads: r.get(5)?,
                    start_unix_ns: r.get(6)?,
                    wall_s: r.get(7)?,
                    mode: r.get(8)?,
                    status: r.get(9)?,
                    hosts: r.get(10)?,
                    git_revision: r.get(11)?,
                    compiler: r.get(12)?,
                    mpi: r.get(13)?,
                    tags: Vec::new(),
                    runner: r.get(14)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let mut out: Vec<RunRow> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        let mut tags = self
            .conn
            .prepare("SELECT tag FROM tags WHERE run = ?1 ORDER BY tag")
            .map_err(|e| self.err(e))?;
        for r in &mut out {
            r.tags = tags
                .query_map([r.id], |x| x.get(0))
                .and_then(|m| m.collect())
                .map_err(|e| self.err(e))?;
        }
        Ok(out)
    }

    /// Runs, oldest first; only those with `tag` or whose program is
    /// `program` when given.
    pub fn list(&self, tag: Option<&str>, program: Option<&str>) -> Result<Vec<RunRow>> {
        self.runs_where(
            "WHERE (?1 IS NULL OR id IN (SELECT run FROM tags WHERE tag = ?1)) \
             AND (?2 IS NULL OR program = ?2) ORDER BY id",
            &[&tag, &program],
        )
    }

    /// One run, or an error naming the id.
    pub fn run(&self, id: i64) -> Result<RunRow> {
        self.runs_where("WHERE id = ?1", &[&id])?
            .pop()
            .ok_or_else(|| Error::new(format!("no run {id} in {}", self.path.display())))
    }

    /// Derived metrics of a run, by name.
    pub fn metrics(&self, id: i64) -> Result<Vec<(String, f64)>> {
        let mut st = self
            .conn
            .prepare("SELECT metric, value FROM run_metrics WHERE run = ?1 ORDER BY metric")
            .map_err(|e| self.err(e))?;
        let v = st
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|m| m.collect())
            .map_err(|e| self.err(e));
        v
    }

    /// The heaviest call paths of a run by exclusive time.
    pub fn top_paths(&self, id: i64, n: usize) -> Result<Vec<PathStat>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT n.path, s.calls, s.incl_ns, s.excl_ns, IFNULL(s.pct_excl, 0), IFNULL(s.imbalance, 0) \
                 FROM callpath_stats s JOIN callpath_names n ON n.id = s.callpath \
                 WHERE s.run = ?1 ORDER BY s.excl_ns DESC LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let v = st
            .query_map(params![id, n as i64], |r| {
                Ok(PathStat {
                    path: r.get(0)?,
                    calls: r.get(1)?,
                    incl_ns: r.get(2)?,
                    excl_ns: r.get(3)?,
                    pct_excl: r.get(4)?,
                    imbalance: r.get(5)?,
                })
            })
            .and_then(|m| m.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.err(e))?;
        Ok(v)
    }

    /// Adds and removes tags of run `id`.
    pub fn tag(&mut self, id: i64, add: &[String], remove: &[String]) -> Result<()> {
        self.run(id)?;
        let path = self.path.clone();
        let e = |e| Error::sql(&path, e);
        let tx = self.conn.transaction().map_err(e)?;
        for t in add {
            tx.execute(
                "INSERT OR IGNORE INTO tags (run, tag) VALUES (?1, ?2)",
                params![id, t],
            )
            .map_err(e)?;
        }
        for t in remove {
            tx.execute(
                "DELETE FROM tags WHERE run = ?1 AND tag = ?2",
                params![id, t],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    /// Removes runs (their profiles, metrics, tags and findings; the
    /// experiment directories stay). Returns how many existed.
    pub fn remove(&mut self, ids: &[i64]) -> Result<usize> {
        let path = self.path.clone();
        let e = |e| Error::sql(&path, e);
        let tx = self.conn.transaction().map_err(e)?;
        let mut n = 0;
        for id in ids {
            n += tx
                .execute("DELETE FROM runs WHERE id = ?1", [id])
                .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(n)
    }

    /// Runs one read-only SQL statement within `limits`: (column names,
    /// rows as text). Statements that would write, and text holding more
    /// than one statement, are refused.
    pub fn query(&self, sql: &str, limits: &Limits) -> Result<(Vec<String>, Vec<Vec<String>>)> {
        let mut batch = rusqlite::Batch::new(&self.conn, sql);
        let mut st = match batch.next() {
            Ok(Some(st)) => st,
            Ok(None) => return Err(Error::new("db query: no SQL statement given")),
            Err(e) => return Err(self.err(e)),
        };
        // A second statement is refused, not ignored (nor run).
        if !matches!(batch.next(), Ok(None)) {
            return Err(Error::new(
                "db query runs one statement; the text holds more than one (remove what \
                 follows the first `;`)",
            ));
        }
        if !st.readonly() {
            return Err(Error::new(
                "db query runs read-only statements only (SELECT, WITH, read-only PRAGMAs)",
            ));
        }
        let cols: Vec<String> = st.column_names().iter().map(|c| c.to_string()).collect();
        let n = cols.len();
        // A watchdog interrupts the statement when its time is up.
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let handle = self.conn.get_interrupt_handle();
        let timeout = limits.timeout;
        let watchdog = std::thread::spawn(move || {
            let late = matches!(
                wait.recv_timeout(timeout),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            );
            if late {
                handle.interrupt();
            }
            late
        });
        let result = self.collect_rows(&mut st, n, limits);
        drop(done);
        let interrupted = watchdog.join().unwrap_or(false);
        match result {
            Err(_) if interrupted => Err(Error::new(format!(
                "db query stopped the statement after {} s (--timeout SECONDS allows more)",
                timeout.as_secs_f64()
            ))),
            r => r.map(|rows| (cols, rows)),
        }
    }

    fn collect_rows(
        &self,
        st: &mut rusqlite::Statement<'_>,
        n: usize,
        limits: &Limits,
    ) -> Result<Vec<Vec<String>>> {
        let mut rows = st.query([]).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        let mut bytes = 0usize;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            if out.len() == limits.max_rows {
                return Err(Error::new(format!(
                    "db query: the statement returns more than {} rows; add a LIMIT, or raise \
                     --max-rows",
                    limits.max_rows
                )));
            }
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                let cell = match r.get_ref(i).map_err(|e| self.err(e))? {
                    ValueRef::Null => "NULL".to_string(),
                    ValueRef::Integer(v) => v.to_string(),
                    ValueRef::Real(v) => format!("{v}"),
                    ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    ValueRef::Blob(b) => format!("<{} bytes>", b.len()),
                };
                bytes += cell.len() + 8;
                row.push(cell);
            }
            if bytes > limits.max_bytes {
                return Err(Error::new(format!(
                    "db query: the statement's result exceeds {} MiB; select fewer columns or \
                     rows",
                    limits.max_bytes >> 20
                )));
            }
            out.push(row);
        }
        Ok(out)
    }

    /// Call paths × runs for `ids`, heaviest (over the runs) first, at most
    /// `top` rows.
    pub fn compare(&self, ids: &[i64], metric: Metric, top: usize) -> Result<CompareTable> {
        let runs = ids
            .iter()
            .map(|&id| self.run(id))
            .collect::<Result<Vec<_>>>()?;
        let marks = vec!["?"; ids.len()].join(",");
        let sql = format!(
            "SELECT n.path, n.depth, s.run, s.{} FROM callpath_stats s \
             JOIN callpath_names n ON n.id = s.callpath WHERE s.run IN ({marks})",
            metric.column()
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut by_path: std::collections::BTreeMap<String, (i64, Vec<Option<f64>>)> =
            Default::default();
        let rows = st
            .query_map(params_from_iter(ids.iter()), |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, f64>(3)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        for row in rows {
            let (path, depth, run, v) = row.map_err(|e| self.err(e))?;
            let e = by_path
                .entry(path)
                .or_insert_with(|| (depth, vec![None; ids.len()]));
            for (i, id) in ids.iter().enumerate() {
                if *id == run {
                    e.1[i] = Some(v);
                }
            }
        }
        let mut rows: Vec<(String, i64, Vec<Option<f64>>)> =
            by_path.into_iter().map(|(p, (d, v))| (p, d, v)).collect();
        let peak = |v: &[Option<f64>]| v.iter().flatten().copied().fold(0.0, f64::max);
        rows.sort_by(|a, b| peak(&b.2).total_cmp(&peak(&a.2)));
        rows.truncate(top);
        Ok(CompareTable { runs, rows })
    }

    /// The runs of `program` with a wall time, by size (locations, then
    /// ranks); the newest run of each size.
    pub fn scaling(&self, program: &str) -> Result<Vec<ScalingPoint>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT MAX(id), ranks, threads FROM runs WHERE program = ?1 AND wall_s IS NOT NULL \
                 GROUP BY ranks, threads ORDER BY threads, ranks",
            )
            .map_err(|e| self.err(e))?;
        let ids: Vec<(i64, i64, i64)> = st
            .query_map([program], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|m| m.collect())
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for (run, ranks, threads) in ids {
            let wall_s: f64 = self
                .conn
                .query_row("SELECT wall_s FROM runs WHERE id = ?1", [run], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            out.push(ScalingPoint {
                run,
                ranks,
                threads,
                wall_s,
            });
        }
        Ok(out)
    }
}
