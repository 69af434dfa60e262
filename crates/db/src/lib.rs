//! Parallax's run database: every experiment that `parallax run`, `demo`
//! or `import` produces, kept in one SQLite file so that runs can be
//! listed, tagged, queried and compared.
//!
//! What a run stores:
//!
//! - its metadata (program, arguments, hosts, ranks, threads, start time,
//!   source revision, compiler and MPI versions, tags);
//! - its call-path profile per location, sparsely (only the paths a
//!   location visited), with regions and call paths unified across runs:
//!   a call path is a row of `callpaths` shared by every run that reached
//!   it, so runs compare node by node;
//! - derived metrics (time per category, imbalance) and findings.
//!
//! Writers take SQLite's write lock for the whole of a run (WAL journal,
//! busy timeout), so concurrent `parallax run`s each record completely.
//! A file that is not a database gives a clear error and is never written.
//!
//! The schema is in [`schema`] and docs/database.md.
#![warn(missing_docs)]

pub mod findings;
pub mod meta;
pub mod query;
pub mod record;
pub mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub use query::{CompareTable, Limits, RunRow, ScalingPoint};
pub use record::RunMeta;

/// Environment variable naming the database file.
pub const ENV: &str = "PARALLAX_DB";

/// How long a writer waits for another writer before giving up.
const BUSY: Duration = Duration::from_secs(30);

/// An error of the run database, with the file it concerns.
#[derive(Debug)]
pub struct Error {
    /// What went wrong, in words.
    pub message: String,
    /// The underlying SQLite error, if any.
    pub source: Option<rusqlite::Error>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(s) = &self.source {
            write!(f, ": {s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl Error {
    fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            source: None,
        }
    }

    fn sql(path: &Path, e: rusqlite::Error) -> Error {
        let damaged = matches!(
            &e,
            rusqlite::Error::SqliteFailure(f, _)
                if matches!(f.code, rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
        );
        let message = if damaged {
            format!(
                "the run database {} is damaged or not a SQLite database; it was left as it \
                 is (move it away, or choose another file with --db or {ENV}, or skip it with --no-db)",
                path.display()
            )
        } else {
            format!("run database {}", path.display())
        };
        Error {
            message,
            source: Some(e),
        }
    }
}

/// Result of the database's operations.
pub type Result<T> = std::result::Result<T, Error>;

/// The default database file: `$XDG_DATA_HOME/parallax/runs.sqlite`, else
/// `~/.local/share/parallax/runs.sqlite`.
pub fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("parallax").join("runs.sqlite"))
}

/// The database file to use: `explicit`, else `PARALLAX_DB`, else the
/// default path.
pub fn resolve(explicit: Option<&Path>) -> Option<PathBuf> {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| {
            std::env::var_os(ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .or_else(default_path)
}

/// An open run database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
    writable: bool,
}

/// How long closing waits for other connections to let the write-ahead log
/// be checkpointed.
const CHECKPOINT_WAIT: Duration = Duration::from_secs(1);

impl Drop for Db {
    /// A writer moves the write-ahead log into the main file when done, so
    /// that the file alone (a copy, a backup) is the whole database. If
    /// other connections hold the log, a later writer does it.
    fn drop(&mut self) {
        if self.writable {
            let _ = self.conn.busy_timeout(CHECKPOINT_WAIT);
            let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
        }
    }
}

impl Db {
    /// Opens (creating if needed) the database at `path` and brings its
    /// schema up to date.
    pub fn open(path: &Path) -> Result<Db> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::new(format!(
                    "cannot create {} for the run database: {e}",
                    dir.display()
                ))
            })?;
        }
        let conn = Connection::open(path).map_err(|e| Error::sql(path, e))?;
        let db = Db {
            conn,
            path: path.to_path_buf(),
            writable: true,
        };
        db.configure()?;
        db.migrate()?;
        Ok(db)
    }

    /// Opens an existing database for reading only (`db query`): nothing
    /// the statements do can change it.
    pub fn open_read_only(path: &Path) -> Result<Db> {
        if !path.exists() {
            return Err(Error::new(format!(
                "no run database at {} (runs are recorded there by parallax run, demo and import)",
                path.display()
            )));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| Error::sql(path, e))?;
        let db = Db {
            conn,
            path: path.to_path_buf(),
            writable: false,
        };
        db.conn.busy_timeout(BUSY).map_err(|e| db.err(e))?;
        // No single value larger than a query's whole result may be.
        db.conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            Limits::default().max_bytes as i32,
        );
        db.conn
            .execute_batch("PRAGMA query_only = ON;")
            .map_err(|e| db.err(e))?;
        let v = db.version()?;
        if v < schema::VERSION {
            return Err(Error::new(format!(
                "the run database {} has schema version {v}; open it once with a writing command \
                 (parallax db list) to bring it to version {}",
                path.display(),
                schema::VERSION
            )));
        }
        Ok(db)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version stored in the file.
    pub fn version(&self) -> Result<u32> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> Error {
        Error::sql(&self.path, e)
    }

    fn configure(&self) -> Result<()> {
        self.conn.busy_timeout(BUSY).map_err(|e| self.err(e))?;
        // Reading the header first: a file that is not a database fails
        // here, before anything is written to it.
        let v = self.version()?;
        // WAL lets readers and one writer work at once, and stays set in
        // the file; commits then need no fsync (synchronous = NORMAL). The
        // log is checkpointed when the writer is done (see `drop`), not by
        // SQLite when the connection closes, which would take a lock other
        // connections may hold.
        if v < schema::VERSION {
            self.switch_to_wal()?;
        }
        self.conn
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )
            .map_err(|e| self.err(e))?;
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|e| self.err(e))
    }

    /// SQLite does not call the busy handler for a change of journal
    /// mode: when processes open a fresh file at once, all but one get
    /// "database is locked" at once. So wait here as the busy timeout would.
    fn switch_to_wal(&self) -> Result<()> {
        let start = std::time::Instant::now();
        loop {
            match self.conn.execute_batch("PRAGMA journal_mode = WAL;") {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy && start.elapsed() < BUSY =>
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
                r => return r.map_err(|e| self.err(e)),
            }
        }
    }

    fn migrate(&self) -> Result<()> {
        if self.version()? == schema::VERSION {
            return Ok(());
        }
        // The write lock first, then the version: two processes opening a
        // fresh file migrate it once.
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err(e))?;
        let r = self.migrate_locked();
        let end = if r.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let e = self.conn.execute_batch(end).map_err(|e| self.err(e));
        r.and(e)
    }

    fn migrate_locked(&self) -> Result<()> {
        let v = self.version()?;
        if v > schema::VERSION {
            return Err(Error::new(format!(
                "the run database {} has schema version {v}, newer than this Parallax knows ({}); \
                 use a newer parallax or another --db",
                self.path.display(),
                schema::VERSION
            )));
        }
        for (i, m) in schema::MIGRATIONS.iter().enumerate().skip(v as usize) {
            self.conn.execute_batch(m).map_err(|e| self.err(e))?;
            self.conn
                .execute_batch(&format!("PRAGMA user_version = {}", i + 1))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("parallax-db-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn every_version_migrates_to_the_latest() {
        for start in 0..=schema::VERSION {
            let p = tmp(&format!("mig{start}"));
            {
                let c = Connection::open(&p).unwrap();
                for (i, m) in schema::MIGRATIONS.iter().enumerate().take(start as usize) {
                    c.execute_batch(m).unwrap();
                    c.execute_batch(&format!("PRAGMA user_version = {}", i + 1))
                        .unwrap();
                }
            }
            let db = Db::open(&p).unwrap();
            assert_eq!(db.version().unwrap(), schema::VERSION);
            let n: i64 = db
                .conn
                .query_row("SELECT COUNT(*) FROM callpath_stats", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 0);
            let _ = std::fs::remove_file(&p);
        }
    }

    #[test]
    fn newer_schema_is_refused() {
        let p = tmp("newer");
        Connection::open(&p)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
        let e = Db::open(&p).err().expect("refused");
        assert!(e.to_string().contains("newer"), "{e}");
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn processes_opening_a_fresh_file_at_once_all_succeed() {
        // Threads with their own connections take the file locks as
        // processes do. Before the WAL switch waited, about one opening in
        // 40 failed here.
        for round in 0..100 {
            let p = tmp(&format!("fresh{round}"));
            let opens: Vec<_> = (0..3)
                .map(|_| {
                    let p = p.clone();
                    std::thread::spawn(move || Db::open(&p).map(|db| db.version().unwrap()))
                })
                .collect();
            for o in opens {
                match o.join().unwrap() {
                    Ok(v) => assert_eq!(v, schema::VERSION),
                    Err(e) => panic!("round {round}: {e}"),
                }
            }
            for end in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{end}", p.display()));
            }
        }
    }

    #[test]
    fn garbage_is_reported_and_left_alone() {
        let p = tmp("garbage");
        let junk = vec![0x5au8; 8192];
        std::fs::write(&p, &junk).unwrap();
        let e = Db::open(&p).err().expect("refused");
        assert!(e.to_string().contains("not a SQLite database"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), junk);
        let _ = std::fs::remove_file(&p);
    }
}
