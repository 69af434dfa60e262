//! What the `parallax` command writes, and what it leaves alone: an
//! experiment directory is replaced only when it holds nothing but an
//! earlier experiment (which survives a command that fails), and output
//! files are never written through a symbolic link nor over a file of
//! another kind.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{parallax, preload, stderr, tmp};

fn demo(out: &Path) -> Output {
    parallax()
        .args([
            "demo",
            "--no-db",
            "--threads",
            "2",
            "--iterations",
            "3",
            "--out",
        ])
        .arg(out)
        .output()
        .unwrap()
}

/// Every file below `dir` with its content, sorted.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_directory_with_anything_but_an_experiment_is_never_replaced() {
    let d = tmp("out-foreign");
    // A manifest.json of the user's, a rank- directory of the user's, and
    // a real experiment with one file of the user's added.
    let own_manifest = d.join("own-manifest");
    std::fs::create_dir_all(&own_manifest).unwrap();
    std::fs::write(own_manifest.join("manifest.json"), "{\"mine\": true}").unwrap();
    std::fs::write(own_manifest.join("thesis.tex"), "chapter 1").unwrap();
    let rank_named = d.join("rank-named");
    std::fs::create_dir_all(rank_named.join("rank-backup")).unwrap();
    std::fs::write(rank_named.join("rank-backup/data.csv"), "1,2,3").unwrap();
    let mixed = d.join("mixed");
    assert!(demo(&mixed).status.success());
    std::fs::write(mixed.join("notes.txt"), "keep me").unwrap();
    let inside = d.join("inside");
    assert!(demo(&inside).status.success());
    std::fs::write(inside.join("rank-00000/notes.txt"), "keep me too").unwrap();

    // Sources for compensate and import.
    let source = d.join("source");
    assert!(demo(&source).status.success());
    let trace = d.join("trace.otf2");
    let o = parallax()
        .arg("export")
        .arg(&source)
        .args(["--format", "otf2", "--out"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    for (dir, named) in [
        (&own_manifest, "thesis.tex"),
        (&rank_named, "rank-backup/"),
        (&mixed, "notes.txt"),
        (&inside, "rank-00000/notes.txt"),
    ] {
        let before = contents(dir);
        let o = demo(dir);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(
            stderr(&o).contains(named) && stderr(&o).contains("did not write"),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        preload();
        let run = parallax()
            .args(["run", "--no-db", "--out"])
            .arg(dir)
            .args(["--", "true"])
            .output()
            .unwrap();
        let compensate = parallax()
            .arg("compensate")
            .arg(&source)
            .arg("--out")
            .arg(dir)
            .output()
            .unwrap();
        let import = parallax()
            .arg("import")
            .arg(&trace)
            .args(["--no-db", "--out"])
            .arg(dir)
            .output()
            .unwrap();
        for (what, o) in [("run", run), ("compensate", compensate), ("import", import)] {
            let shown = format!("{what} into {}: {}", dir.display(), stderr(&o));
            assert_eq!(o.status.code(), Some(2), "{shown}");
            assert!(stderr(&o).contains(named), "{shown}");
        }
        assert_eq!(contents(dir), before, "{} was changed", dir.display());
    }
    // A link to a directory is not followed either.
    let link = d.join("link");
    std::os::unix::fs::symlink(&mixed, &link).unwrap();
    let o = demo(&link);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
}

#[test]
fn an_experiment_is_replaced_only_once_the_new_one_exists() {
    preload();
    let d = tmp("out-replace");
    let exp = d.join("exp");
    assert!(demo(&exp).status.success());
    let before = contents(&exp);
    // `run` fails after preparing the directory (the filter file is
    // missing): the earlier experiment is still there, unchanged.
    let o = parallax()
        .args(["run", "--no-db", "--filter-file"])
        .arg(d.join("no-such-filter"))
        .arg("--out")
        .arg(&exp)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("filter file"), "{}", stderr(&o));
    assert_eq!(contents(&exp), before);
    // A run that works replaces it, and nothing of the old one is left
    // beside it.
    let o = parallax()
        .args(["run", "--no-db", "--out"])
        .arg(&exp)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!exp.join("rank-00000").exists());
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(exp.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "exit 0");
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["exp"], "{left:?}");
}

#[test]
fn outputs_never_go_through_links_nor_over_other_files() {
    let d = tmp("out-files");
    let exp = d.join("exp");
    assert!(demo(&exp).status.success());
    let victim = d.join("victim");
    let precious = b"the user's own file\n";
    for format in [
        "csv", "json", "hatchet", "folded", "svg", "chrome", "perfetto", "otf2", "html",
    ] {
        let name = if format == "otf2" {
            "t.otf2".to_string()
        } else {
            format!("out.{format}")
        };
        // The HTML report is written by a command of its own.
        let export = |out: &Path| {
            let mut cmd = parallax();
            if format == "html" {
                cmd.arg("html").arg(&exp).arg("-o");
            } else {
                cmd.arg("export")
                    .arg(&exp)
                    .args(["--format", format, "--out"]);
            }
            cmd.arg(out).output().unwrap()
        };
        std::fs::write(&victim, precious).unwrap();
        // A link at the destination: refused, its target untouched.
        let link = d.join(&name);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let o = export(&link);
        assert_eq!(o.status.code(), Some(2), "{format}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("symbolic link"),
            "{format}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(&victim).unwrap(), precious, "{format}");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        std::fs::remove_file(&link).unwrap();
        // A file of something else: refused, untouched.
        std::fs::write(&link, precious).unwrap();
        let o = export(&link);
        assert_eq!(o.status.code(), Some(2), "{format}: {}", stderr(&o));
        assert!(stderr(&o).contains("not "), "{format}: {}", stderr(&o));
        assert_eq!(std::fs::read(&link).unwrap(), precious, "{format}");
        std::fs::remove_file(&link).unwrap();
        // Written, then written again over its own earlier output.
        for round in 0..2 {
            let o = export(&link);
            assert!(o.status.success(), "{format} round {round}: {}", stderr(&o));
            assert!(std::fs::metadata(&link).unwrap().len() > 0);
        }
        let hidden: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "{format}: left {hidden:?}");
    }
    // The same for the chart of `db scaling`.
    let db = d.join("runs.sqlite");
    for _ in 0..2 {
        let o = parallax()
            .args(["demo", "--threads", "2", "--iterations", "2", "--db"])
            .arg(&db)
            .arg("--out")
            .arg(d.join("scaled"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    std::fs::write(&victim, precious).unwrap();
    let chart = d.join("scaling.svg");
    std::os::unix::fs::symlink(&victim, &chart).unwrap();
    let o = parallax()
        .arg("db")
        .arg("--db")
        .arg(&db)
        .args(["scaling", "demo", "--svg"])
        .arg(&chart)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), precious);
}
