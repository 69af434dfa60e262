//! The run database through the `parallax` command: recording by demo and
//! run, the db subcommands, the top-down queries of docs/database.md,
//! migration of an older file, concurrent writers, and damaged files.

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::{compile, parallax, preload, stderr, stdout, tmp};

fn demo(db: &Path, out: &Path, threads: &str, tags: &[&str]) -> Output {
    let mut c = parallax();
    c.args(["demo", "--iterations", "6", "--threads", threads, "--db"])
        .arg(db)
        .arg("--out")
        .arg(out);
    for t in tags {
        c.args(["--tag", t]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

fn db(db: &Path, args: &[&str]) -> Output {
    parallax()
        .arg("db")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

fn query(file: &Path, sql: &str) -> Vec<Value> {
    let text = ok(db(file, &["query", "--json", sql]));
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

fn one(file: &Path, sql: &str) -> String {
    let rows = query(file, sql);
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    let row = rows[0].as_object().unwrap();
    row.values().next().unwrap().as_str().unwrap().to_string()
}

#[test]
fn runs_are_recorded_listed_tagged_compared_and_removed() {
    let d = tmp("db-cmds");
    let f = d.join("runs.sqlite");
    let e = demo(&f, &d.join("a"), "3", &["first"]);
    assert!(stderr(&e).contains("recorded as run 1"), "{}", stderr(&e));
    demo(&f, &d.join("b"), "2", &[]);

    let list = ok(db(&f, &["list"]));
    assert_eq!(list.lines().count(), 3, "{list}");
    assert!(list.lines().all(|l| l.len() <= 100));
    let show: Value = serde_json::from_str(&ok(db(&f, &["show", "1", "--json"]))).unwrap();
    assert_eq!(show["program"], "demo");
    assert_eq!(show["threads"], 4);
    assert_eq!(show["tags"], serde_json::json!(["first"]));
    // The demo's program is the parallax binary, built by rustc.
    assert!(show["compiler"].as_str().unwrap().contains("rustc"));
    assert!(show["metrics"]["time_ns.computation"].as_f64().unwrap() > 0.0);
    // Of the 4 locations, main computes (almost) nothing, so the slowest
    // computes at least 4/3 of the mean whatever preemption does to the
    // workers' shares.
    let imbalance = show["metrics"]["imbalance.computation"].as_f64().unwrap();
    assert!(imbalance > 1.3 && imbalance <= 4.0, "{imbalance}");

    // Call paths are shared by both runs, and profiles are sparse.
    assert_eq!(
        one(&f, "SELECT CAST(COUNT(DISTINCT p.run) AS TEXT) FROM profile p JOIN callpath_names n ON n.id = p.callpath WHERE n.path = 'worker/iteration/compute'"),
        "2"
    );
    assert_eq!(
        one(
            &f,
            "SELECT CAST(COUNT(*) AS TEXT) FROM profile WHERE count = 0 AND incl_ns = 0"
        ),
        "0"
    );
    assert_eq!(
        one(&f, "SELECT CAST(COUNT(*) AS TEXT) FROM (SELECT path FROM callpath_names GROUP BY path HAVING COUNT(*) > 1)"),
        "0"
    );

    ok(db(&f, &["tag", "2", "small", "second"]));
    ok(db(&f, &["tag", "1", "--remove", "first"]));
    let tagged = ok(db(&f, &["list", "--tag", "small"]));
    assert_eq!(tagged.lines().count(), 2, "{tagged}");
    assert!(ok(db(&f, &["list", "--tag", "first"])).starts_with("No runs"));

    let cmp = ok(db(&f, &["compare", "1", "2", "--metric", "excl"]));
    assert!(
        cmp.contains("run 1") && cmp.contains("run 2") && cmp.contains("worker/iteration/compute"),
        "{cmp}"
    );
    assert!(cmp.lines().all(|l| l.chars().count() <= 100), "{cmp}");
    // The same table as JSON: both runs, and each path's value per run.
    let cmp: Value = serde_json::from_str(&ok(db(
        &f,
        &["compare", "1", "2", "--metric", "excl", "--json"],
    )))
    .unwrap();
    assert_eq!(cmp["runs"].as_array().unwrap().len(), 2, "{cmp}");
    let compute = cmp["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().unwrap().ends_with("iteration/compute"))
        .unwrap_or_else(|| panic!("{cmp}"));
    assert!(compute["values_ns"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v.as_f64().unwrap() > 0.0));
    let sc: Value = serde_json::from_str(&ok(db(&f, &["scaling", "demo", "--json"]))).unwrap();
    assert_eq!(sc.as_array().unwrap().len(), 2, "{sc}");
    assert_eq!(sc[0]["speedup"].as_f64(), Some(1.0), "{sc}");
    let svg = d.join("scaling.svg");
    let sc = ok(db(&f, &["scaling", "demo", "--svg", svg.to_str().unwrap()]));
    assert_eq!(sc.lines().count(), 3, "{sc}");
    assert_eq!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .matches("<circle")
            .count(),
        2
    );

    let findings = d.join("f.json");
    std::fs::write(&findings, r#"{"findings":[{"pattern":"wait_at_barrier","severity_s":0.01,"rank":0,"thread":1,"region":"Barrier::wait","culprits":[{"rank":0,"thread":3}]},{"no":"pattern"}]}"#).unwrap();
    assert!(ok(db(&f, &["findings", "1", findings.to_str().unwrap()])).contains("1 finding"));
    let show: Value = serde_json::from_str(&ok(db(&f, &["show", "1", "--json"]))).unwrap();
    assert_eq!(show["findings"][0]["culprits"][0]["thread"], 3);

    // Without a file, the run's experiment is analysed (the demo's
    // workers wait at the barrier for the slowest).
    assert!(ok(db(&f, &["findings", "2"])).contains("finding"));
    let show: Value = serde_json::from_str(&ok(db(&f, &["show", "2", "--json"]))).unwrap();
    let patterns: Vec<&str> = show["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["pattern"].as_str())
        .collect();
    assert!(!patterns.is_empty(), "{show}");

    // Read-only: a statement that writes is refused and changes nothing.
    let w = db(&f, &["query", "DELETE FROM runs"]);
    assert_eq!(w.status.code(), Some(2));
    assert!(stderr(&w).contains("read-only"), "{}", stderr(&w));
    assert_eq!(one(&f, "SELECT CAST(COUNT(*) AS TEXT) FROM runs"), "2");

    ok(db(&f, &["rm", "2"]));
    assert_eq!(
        one(
            &f,
            "SELECT CAST(COUNT(*) AS TEXT) FROM profile WHERE run = 2"
        ),
        "0"
    );
    assert_eq!(ok(db(&f, &["list"])).lines().count(), 2);
    assert_eq!(db(&f, &["show", "2"]).status.code(), Some(2));
}

/// The SQL blocks of docs/database.md that start with `-- NAME:`.
fn doc_query(name: &str) -> String {
    let doc = std::fs::read_to_string(common::workspace().join("docs/database.md")).unwrap();
    let mut blocks = doc
        .split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap());
    blocks
        .find(|b| b.starts_with(&format!("-- {name}:")))
        .unwrap_or_else(|| panic!("no {name} in docs/database.md"))
        .to_string()
}

#[test]
fn top_down_queries_of_the_docs_find_what_the_report_finds() {
    let d = tmp("db-q");
    let f = d.join("runs.sqlite");
    let exp = d.join("demo");
    demo(&f, &exp, "3", &[]);
    let report: Value = serde_json::from_str(&stdout(
        &parallax()
            .args(["report", "--json"])
            .arg(&exp)
            .output()
            .unwrap(),
    ))
    .unwrap();
    let paths = report["total"]["paths"].as_array().unwrap();
    let kind_of = |name: &str| {
        report["total"]["flat"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["region"] == name)
            .and_then(|r| r["kind"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let incl = |p: &Value| p["inclusive_ns"].as_f64().unwrap();
    // Rows name their parent by index in the list.
    let joined = |p: &Value| {
        let mut names = vec![p["region"].as_str().unwrap()];
        let mut at = p["parent"].as_u64();
        while let Some(q) = at {
            names.push(paths[q as usize]["region"].as_str().unwrap());
            at = paths[q as usize]["parent"].as_u64();
        }
        names.reverse();
        names.join("/")
    };
    let top = paths
        .iter()
        .filter(|p| kind_of(p["region"].as_str().unwrap()) == "function")
        .max_by(|a, b| incl(a).total_cmp(&incl(b)))
        .unwrap();
    let top_path = joined(top);
    let inner = paths
        .iter()
        .filter(|p| joined(p).starts_with(&format!("{top_path}/")))
        .max_by(|a, b| incl(a).total_cmp(&incl(b)))
        .unwrap();

    let q1 = query(&f, &doc_query("Q1"));
    assert_eq!(q1[0]["path"], Value::from(top_path.clone()), "{q1:?}");
    let below = paths
        .iter()
        .filter(|p| joined(p).starts_with(&format!("{top_path}/")))
        .count();
    assert_eq!(q1.len(), 1 + below, "{q1:?}");
    let q2 = query(&f, &doc_query("Q2"));
    assert_eq!(q2.len(), 1);
    assert_eq!(q2[0]["path"], Value::from(joined(inner)), "{q2:?}");
    assert_eq!(top_path, "worker");
}

#[test]
fn a_database_of_schema_version_1_opens_and_is_migrated() {
    let d = tmp("db-v1");
    let f = d.join("old.sqlite");
    let sql = std::fs::read_to_string(common::workspace().join("crates/cli/tests/data/db-v1.sql"))
        .unwrap();
    rusqlite::Connection::open(&f)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    let list = ok(db(&f, &["list"]));
    assert!(
        list.contains("spark98") && list.contains("baseline"),
        "{list}"
    );
    assert_eq!(
        one(
            &f,
            "SELECT CAST(user_version AS TEXT) FROM pragma_user_version"
        ),
        "3"
    );
    let show: Value = serde_json::from_str(&ok(db(&f, &["show", "1", "--json"]))).unwrap();
    // Derived from the old profile by the migration: 45 + 23.21 + 0.69 + 30
    // s of computation, 5.37 s of communication.
    let comp = show["metrics"]["time_ns.computation"].as_f64().unwrap();
    assert!((comp - 98.9e9).abs() < 1e6, "{comp}");
    assert!((show["metrics"]["time_ns.communication"].as_f64().unwrap() - 5.37e9).abs() < 1e6);
    assert_eq!(show["top_paths"][0]["path"], "main/local_smvp");
    // A new run goes in beside it.
    demo(&f, &d.join("new"), "2", &[]);
    assert_eq!(ok(db(&f, &["list"])).lines().count(), 3);
}

#[test]
fn concurrent_runs_are_all_recorded() {
    preload();
    let d = tmp("db-conc");
    // The program lives in a git checkout: its revision is recorded.
    let repo = d.join("repo");
    std::fs::create_dir_all(repo.join(".git/refs/heads")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let commit = "3f6b2c0de1a95e4f7b8c9d0a1b2c3d4e5f607182";
    std::fs::write(repo.join(".git/refs/heads/main"), format!("{commit}\n")).unwrap();
    let exe = repo.join("pthreads");
    compile(
        "gcc",
        &[
            "-O1",
            "pthreads.c",
            "-o",
            exe.to_str().unwrap(),
            "-lpthread",
        ],
    );
    let f = d.join("runs.sqlite");
    let children: Vec<_> = (0..3)
        .map(|i| {
            parallax()
                .args(["run", "--no-report", "--mode", "profile", "--db"])
                .arg(&f)
                .arg("--out")
                .arg(d.join(format!("exp{i}")))
                .args(["--", exe.to_str().unwrap(), "2", "50"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("recorded as run"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    }
    assert_eq!(
        one(
            &f,
            "SELECT group_concat(id) FROM (SELECT id FROM runs ORDER BY id)"
        ),
        "1,2,3"
    );
    // Every run has all its locations and a profile for each.
    assert_eq!(
        one(&f, "SELECT CAST(COUNT(*) AS TEXT) FROM runs r WHERE (SELECT COUNT(DISTINCT loc) FROM profile p WHERE p.run = r.id) <> r.threads"),
        "0"
    );
    assert_eq!(one(&f, "SELECT program FROM runs WHERE id = 2"), "pthreads");
    assert_eq!(one(&f, "SELECT DISTINCT git_revision FROM runs"), commit);
    assert!(one(&f, "SELECT DISTINCT compiler FROM runs").contains("GCC"));
}

#[test]
fn a_damaged_database_is_reported_and_nothing_is_lost() {
    let d = tmp("db-bad");
    let f = d.join("runs.sqlite");
    let junk: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&f, &junk).unwrap();
    let exp = d.join("demo");
    let o = demo(&f, &exp, "2", &[]);
    assert!(
        stderr(&o).contains("not a SQLite database"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("Flat profile"));
    // The experiment is whole and the file untouched.
    let r = parallax()
        .args(["report", "--total-only"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(r.status.success() && stdout(&r).contains("compute"));
    assert_eq!(std::fs::read(&f).unwrap(), junk);
    for args in [&["list"][..], &["query", "SELECT 1"]] {
        let o = db(&f, args);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("damaged or not a SQLite database"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(&f).unwrap(), junk);
}

#[test]
fn default_path_environment_and_no_db() {
    let d = tmp("db-env");
    let home = d.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |extra: &[&str], env: &[(&str, &Path)]| {
        let mut c = parallax();
        c.args(["demo", "--iterations", "3", "--threads", "2", "--out"])
            .arg(d.join("exp"))
            .args(extra)
            .env_remove("PARALLAX_DB")
            .env_remove("XDG_DATA_HOME")
            .env("HOME", &home);
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    run(&["--no-db"], &[]);
    assert!(!home.join(".local").exists());
    run(&[], &[]);
    let default = home.join(".local/share/parallax/runs.sqlite");
    assert!(default.is_file());
    let env_db = d.join("env.sqlite");
    run(&[], &[("PARALLAX_DB", &env_db)]);
    assert!(env_db.is_file());
    assert_eq!(
        one(&default, "SELECT CAST(COUNT(*) AS TEXT) FROM runs"),
        "1"
    );
    assert_eq!(one(&env_db, "SELECT CAST(COUNT(*) AS TEXT) FROM runs"), "1");
}

#[test]
fn the_database_file_alone_holds_every_run() {
    preload();
    let d = tmp("db-copy");
    let f = d.join("runs.sqlite");
    demo(&f, &d.join("demo"), "2", &[]);
    let exe = d.join("pthreads");
    compile(
        "gcc",
        &[
            "-O1",
            "pthreads.c",
            "-o",
            exe.to_str().unwrap(),
            "-lpthread",
        ],
    );
    let o = parallax()
        .args(["run", "--no-report", "--db"])
        .arg(&f)
        .arg("--out")
        .arg(d.join("run"))
        .args(["--", exe.to_str().unwrap(), "2", "5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let trace = d.join("t.otf2");
    let o = parallax()
        .arg("export")
        .arg(d.join("demo"))
        .args(["--format", "otf2", "--out"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = parallax()
        .arg("import")
        .arg(&trace)
        .arg("--db")
        .arg(&f)
        .arg("--out")
        .arg(d.join("imported"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Only the main file is copied, not its write-ahead log.
    let copy = d.join("copy.sqlite");
    std::fs::copy(&f, &copy).unwrap();
    let c = rusqlite::Connection::open(&copy).unwrap();
    let programs: Vec<String> = c
        .prepare("SELECT program FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(programs, ["demo", "pthreads", "t"]);
    let paths: i64 = c
        .query_row("SELECT COUNT(*) FROM profile", [], |r| r.get(0))
        .unwrap();
    assert!(paths > 0);
}

#[test]
fn db_query_runs_one_statement_within_its_bounds() {
    let d = tmp("db-query");
    let f = d.join("runs.sqlite");
    demo(&f, &d.join("demo"), "2", &[]);
    // A second statement is refused, not ignored, and not run.
    let o = db(&f, &["query", "SELECT 1; DROP TABLE runs"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("one statement"), "{}", stderr(&o));
    assert_eq!(one(&f, "SELECT CAST(COUNT(*) AS TEXT) FROM runs"), "1");
    // A trailing semicolon or comment is one statement still.
    assert_eq!(one(&f, "SELECT 'x'; -- done"), "x");
    // A statement that would run forever is stopped.
    let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                   SELECT COUNT(*) FROM c";
    let started = std::time::Instant::now();
    let o = db(&f, &["query", "--timeout", "1", endless]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("after 1 s"), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() < 30);
    // So is one that returns rows without end.
    let rows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c";
    let o = db(&f, &["query", "--max-rows", "1000", rows]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("more than 1000 rows"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let o = db(&f, &["query", &format!("{rows} LIMIT 1000")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1001);
}
