//! The schema and its migrations.
//!
//! `PRAGMA user_version` holds the schema version. Each migration takes a
//! database from version `i` to `i + 1` and runs in the same transaction as
//! the version bump, so a database is always at exactly one version. A
//! database written by an older Parallax opens and is brought up to date;
//! one written by a newer Parallax is refused rather than misread.
//!
//! See docs/database.md for what each table holds.

/// Migration `i` takes version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// The version this code writes.
pub const VERSION: u32 = MIGRATIONS.len() as u32;

/// Version 1: runs, unified regions and call paths, sparse profiles, tags.
pub const V1: &str = r#"
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    dir TEXT NOT NULL,
    program TEXT NOT NULL,
    args TEXT NOT NULL DEFAULT '[]',
    hosts TEXT NOT NULL DEFAULT '',
    ranks INTEGER NOT NULL,
    threads INTEGER NOT NULL,
    start_unix_ns INTEGER,
    wall_s REAL,
    mode TEXT,
    status TEXT,
    parallax_version TEXT,
    recorded_unix_s INTEGER NOT NULL
);
CREATE TABLE regions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    UNIQUE (name, kind)
);
CREATE TABLE callpaths (
    id INTEGER PRIMARY KEY,
    parent INTEGER NOT NULL,
    region INTEGER NOT NULL REFERENCES regions(id),
    depth INTEGER NOT NULL,
    UNIQUE (parent, region)
);
CREATE TABLE locations (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    loc INTEGER NOT NULL,
    rank INTEGER NOT NULL,
    thread INTEGER NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run, loc)
) WITHOUT ROWID;
CREATE TABLE profile (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    loc INTEGER NOT NULL,
    callpath INTEGER NOT NULL REFERENCES callpaths(id),
    count INTEGER NOT NULL,
    incl_ns REAL NOT NULL,
    excl_ns REAL NOT NULL,
    min_ns REAL NOT NULL,
    max_ns REAL NOT NULL,
    sumsq_ns2 REAL NOT NULL,
    PRIMARY KEY (run, loc, callpath)
) WITHOUT ROWID;
CREATE TABLE tags (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (run, tag)
) WITHOUT ROWID;
"#;

/// Version 2: provenance (source revision, compiler, MPI), source places of
/// regions, derived metrics, findings, and the views that queries use.
/// Runs recorded under version 1 get their derived metrics from their
/// stored profiles.
pub const V2: &str = r#"
ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN git_revision TEXT;
ALTER TABLE runs ADD COLUMN compiler TEXT;
ALTER TABLE runs ADD COLUMN mpi TEXT;
ALTER TABLE regions ADD COLUMN file TEXT NOT NULL DEFAULT '';
ALTER TABLE regions ADD COLUMN line INTEGER NOT NULL DEFAULT 0;
CREATE TABLE run_metrics (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run, metric)
) WITHOUT ROWID;
CREATE TABLE findings (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    pattern TEXT NOT NULL,
    severity_s REAL NOT NULL,
    rank INTEGER,
    thread INTEGER,
    region TEXT,
    culprits TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (run, idx)
) WITHOUT ROWID;
CREATE VIEW callpath_names AS
WITH RECURSIVE p(id, path, depth, region) AS (
    SELECT c.id, r.name, 0, c.region FROM callpaths c JOIN regions r ON r.id = c.region
    WHERE c.parent = 0
    UNION ALL
    SELECT c.id, p.path || '/' || r.name, p.depth + 1, c.region
    FROM callpaths c JOIN p ON c.parent = p.id JOIN regions r ON r.id = c.region
)
SELECT id, path, depth, region FROM p;
CREATE VIEW callpath_stats AS
SELECT p.run, p.callpath,
    COUNT(*) AS locations,
    SUM(p.count) AS calls,
    SUM(p.incl_ns) AS incl_ns,
    SUM(p.excl_ns) AS excl_ns,
    MAX(p.incl_ns) AS max_incl_ns,
    SUM(p.incl_ns) / n.n AS mean_incl_ns,
    CASE WHEN SUM(p.incl_ns) > 0 THEN MAX(p.incl_ns) * n.n / SUM(p.incl_ns) END AS imbalance,
    CASE WHEN t.total > 0 THEN 100.0 * SUM(p.excl_ns) / t.total END AS pct_excl
FROM profile p
JOIN (SELECT run, COUNT(*) AS n FROM locations GROUP BY run) n ON n.run = p.run
JOIN (SELECT run, SUM(excl_ns) AS total FROM profile GROUP BY run) t ON t.run = p.run
GROUP BY p.run, p.callpath;
INSERT INTO run_metrics (run, metric, value)
SELECT p.run, 'time_ns.' || CASE
        WHEN r.kind IN ('user', 'function', 'loop', 'mark') THEN 'computation'
        WHEN r.kind IN ('send', 'recv', 'sendrecv', 'collective', 'put', 'get', 'atomic')
            THEN 'communication'
        WHEN r.kind = 'io' THEN 'io'
        WHEN r.kind = 'runtime' THEN 'measurement'
        ELSE 'synchronization' END AS cat,
    SUM(p.excl_ns)
FROM profile p JOIN callpaths c ON c.id = p.callpath JOIN regions r ON r.id = c.region
GROUP BY p.run, cat;
"#;

/// Version 3: which process records a run, so that a run recorded as
/// "running" whose process is gone reads as killed (JSON: host, boot id,
/// pid, start time).
pub const V3: &str = r#"
ALTER TABLE runs ADD COLUMN runner TEXT;
"#;
