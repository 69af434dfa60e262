//! Names that a measured program chooses (its regions, its thread, its own
//! file name and arguments) and tags that people give reach every text
//! output of `parallax` inert: no control character gets to the terminal,
//! SVG files stay well-formed XML, and CSV cells are never formulas.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{have, parallax, stderr, stdout, tmp};

/// The program's own file name: it colours the terminal red.
const PROGRAM: &str = "app\x1b[31mred";

/// The thread's name (a thread's cannot hold a NUL).
const THREAD: &str = "th\x1b[2Jread\nname\x01end";

/// Region names: terminal escapes (window title, clear screen, a C1 CSI, a
/// bidirectional override, DEL, a NUL), a newline, and formulas.
const REGIONS: [&str; 12] = [
    "reg\x1b]0;pwned\x07ion",
    "\x1b[2J\x1b[Hcleared",
    "new\nline",
    "c1\u{9b}31mcsi",
    "rlo\u{202e}txt.exe",
    "del\x7fnul\\0x",
    "=HYPERLINK(\"http://evil.invalid\",\"click\")",
    "+1+2",
    "-3",
    "@SUM(A1:A9)",
    "\tTAB",
    "\rCR",
];

/// A tag that sets the window title.
const TAG: &str = "tag\x1b]2;title\x07";

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_parallax"))
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

/// Fails if `text` holds a control character other than a newline, or a
/// bidirectional override.
fn assert_inert(what: &str, text: &[u8]) {
    let text = String::from_utf8_lossy(text);
    for (i, c) in text.char_indices() {
        let bad = (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(
            !bad,
            "{what}: raw {c:?} at byte {i}: {:?}",
            &text[i.saturating_sub(40)..(i + 40).min(text.len())]
        );
    }
}

fn ok(what: &str, o: Output) -> Output {
    assert!(o.status.success(), "{what}: {}", stderr(&o));
    assert_inert(&format!("{what} (stdout)"), &o.stdout);
    assert_inert(&format!("{what} (stderr)"), &o.stderr);
    o
}

/// Parses every file in `files` as XML with python3's xml.etree.
fn assert_xml(files: &[PathBuf]) {
    assert!(have("python3"), "python3 checks the SVG files: install it");
    let o = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E\nfor p in sys.argv[1:]: E.parse(p)",
        ])
        .args(files)
        .output()
        .unwrap();
    assert!(o.status.success(), "not XML: {}", stderr(&o));
}

/// The cells of a CSV file (RFC 4180 quoting).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut cell) = (Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    rows
}

/// Runs the example, named [`PROGRAM`], with the hostile names into the
/// experiment `exp` and the database `db` in a fresh directory for `test`;
/// returns (directory, exp, db, `parallax run`'s output).
fn measure(test: &str) -> (PathBuf, PathBuf, PathBuf, Output) {
    common::preload();
    let d = tmp(test);
    let program = d.join(PROGRAM);
    std::fs::copy(example("hostile_names"), &program).unwrap();
    let (exp, db) = (d.join("exp"), d.join("runs.sqlite"));
    let o = parallax()
        .args(["run", "--tag", TAG, "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&exp)
        .arg("--")
        .arg(&program)
        .arg(THREAD)
        .args(REGIONS)
        .output()
        .unwrap();
    (d, exp, db, o)
}

#[test]
fn hostile_names_reach_every_text_output_and_svg_inert() {
    let (d, exp, db, o) = measure("hostile");
    let o = ok("run", o);
    // The names are there, visibly escaped.
    assert!(
        stdout(&o).contains("reg\\x1b]0;pwned\\x07ion"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("app\\x1b[31mred"), "{}", stderr(&o));

    let run =
        |what: &str, args: &[&str]| ok(what, parallax().args(args).arg(&exp).output().unwrap());
    let report = run("report", &["report"]);
    // The thread's name as the system keeps it (15 bytes) heads its
    // location.
    for shown in [
        "th\\x1b[2Jread\\nname (thread 1)",
        "c1\\u{9b}31mcsi",
        "rlo\\u{202e}txt.exe",
    ] {
        assert!(
            stdout(&report).contains(shown),
            "{shown}: {}",
            stdout(&report)
        );
    }
    run("report --json", &["report", "--json"]);
    run("analyze", &["analyze"]);
    run(
        "compensate",
        &["compensate", "--out", d.join("comp").to_str().unwrap()],
    );

    let db_cmd = |what: &str, args: &[&str]| {
        ok(
            what,
            parallax()
                .arg("db")
                .arg("--db")
                .arg(&db)
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let list = db_cmd("db list", &["list"]);
    assert!(
        stdout(&list).contains("tag\\x1b]2;title\\x07"),
        "{}",
        stdout(&list)
    );
    db_cmd("db show", &["show", "1"]);
    db_cmd("db tag", &["tag", "1", "\x1b[5mblink"]);
    db_cmd("db compare", &["compare", "1"]);
    db_cmd("db query", &["query", "SELECT name FROM regions"]);

    // SVG: the flame graph, the scaling chart, the report's charts.
    let flame = d.join("flame.svg");
    run(
        "export svg",
        &[
            "export",
            "--format",
            "svg",
            "--out",
            flame.to_str().unwrap(),
        ],
    );
    let scaling = d.join("scaling.svg");
    db_cmd(
        "db scaling",
        &["scaling", PROGRAM, "--svg", scaling.to_str().unwrap()],
    );
    let charts = d.join("charts");
    let o = parallax()
        .arg("html")
        .arg(&exp)
        .arg("-o")
        .arg(d.join("report.html"))
        .arg("--svg")
        .arg(&charts)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut svgs = vec![flame, scaling];
    svgs.extend(
        std::fs::read_dir(&charts)
            .unwrap()
            .map(|e| e.unwrap().path()),
    );
    assert!(svgs.len() > 3, "{svgs:?}");
    for s in &svgs {
        assert_inert(&s.display().to_string(), &std::fs::read(s).unwrap());
    }
    assert_xml(&svgs);
}

#[test]
fn csv_cells_that_spreadsheets_take_for_formulas_are_text() {
    let (d, exp, _, o) = measure("hostile-csv");
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = d.join("profile.csv");
    let o = parallax()
        .arg("export")
        .arg(&exp)
        .args(["--format", "csv", "--out"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = csv_rows(&std::fs::read_to_string(&csv).unwrap());
    let head = &rows[0];
    let col = |name: &str| head.iter().position(|c| c == name).unwrap();
    let (region, count, incl) = (col("region"), col("count"), col("inclusive_ns"));
    let mut formulas = 0;
    for r in &rows[1..] {
        for cell in [&r[col("location")], &r[col("path")], &r[region]] {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "formula cell {cell:?}"
            );
        }
        if let Some(f) = r[region].strip_prefix('\'') {
            assert!(REGIONS.contains(&f), "{f:?}");
            formulas += 1;
        }
        r[count].parse::<u64>().unwrap();
        r[incl].parse::<f64>().unwrap();
    }
    // Six formula-like regions, on the worker's location.
    assert_eq!(formulas, 6, "{rows:?}");
}
