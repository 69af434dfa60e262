-- A run database as Parallax wrote it at schema version 1 (before
-- provenance, derived metrics and findings), with one run of two
-- locations. The db tests open it with the current version.
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
INSERT INTO runs VALUES (1, '/old/spark98', 'spark98', '[]', 'node0', 1, 2,
    1700000000000000000, 75.0, 'both', 'exit 0', '0.0.9', 1700000100);
INSERT INTO regions VALUES (1, 'main', 'function'), (2, 'local_smvp', 'function'),
    (3, 'assemble_matrix', 'function'), (4, 'zero_vector', 'function'), (5, 'MPI_Allreduce', 'collective');
INSERT INTO callpaths VALUES (1, 0, 1, 0), (2, 1, 2, 1), (3, 1, 3, 1), (4, 1, 4, 1), (5, 2, 5, 2);
INSERT INTO locations VALUES (1, 0, 0, 0, 'main'), (1, 1, 0, 1, 'worker');
INSERT INTO profile VALUES
    (1, 0, 1, 1, 74.27e9, 0.0, 74.27e9, 74.27e9, 0),
    (1, 0, 2, 100, 50.37e9, 45.0e9, 0.4e9, 0.6e9, 0),
    (1, 0, 5, 100, 5.37e9, 5.37e9, 0.01e9, 0.1e9, 0),
    (1, 0, 3, 1, 23.21e9, 23.21e9, 23.21e9, 23.21e9, 0),
    (1, 0, 4, 10, 0.69e9, 0.69e9, 0.05e9, 0.09e9, 0),
    (1, 1, 1, 1, 30.0e9, 30.0e9, 30.0e9, 30.0e9, 0);
INSERT INTO tags VALUES (1, 'baseline');
PRAGMA user_version = 1;
