//! The configuration variables as the manual gives them: README.md's table
//! is the runtime's own (the table heading crates/parallax/src/config.rs),
//! and every `PARALLAX_*` variable the code reads is documented.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The rows of the first table after the line `heading`, each line first
/// stripped of `prefix` and trimmed.
fn table(text: &str, prefix: &str, heading: &str) -> Vec<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_prefix(prefix).unwrap_or(l).trim())
        .collect();
    let at = lines
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("no line {heading:?}"));
    let rows: Vec<String> = lines[at + 1..]
        .iter()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.to_string())
        .collect();
    assert!(rows.len() > 2, "no table after {heading:?}");
    rows
}

/// Every `PARALLAX_*` name in `text` that follows `before` (`"` for the
/// string literals of code).
fn names_after(text: &str, before: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let needle = format!("{before}PARALLAX_");
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        let tail = &rest[i + before.len()..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(tail.len());
        out.insert(tail[..end].trim_end_matches('_').to_string());
        rest = &tail[end..];
    }
    out
}

fn names(text: &str) -> BTreeSet<String> {
    names_after(text, "")
}

/// The text of every source file under `rel` with one of `exts`.
fn sources(rel: &str, exts: &[&str]) -> String {
    fn walk(dir: &Path, exts: &[&str], out: &mut String) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, exts, out);
            } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
                out.push_str(&std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = String::new();
    walk(&root().join(rel), exts, &mut out);
    out
}

#[test]
fn the_readme_configuration_table_is_the_runtimes() {
    let readme = table(&read("README.md"), "", "### Configuration");
    let code = table(
        &read("crates/parallax/src/config.rs"),
        "//!",
        "Measurement configuration, from the environment or from code.",
    );
    assert_eq!(readme, code, "README.md's table differs from config.rs's");
    // Each variable the runtime reads has its row.
    let read_by_runtime = names_after(&sources("crates/parallax/src", &["rs"]), "\"");
    let rows = names(&code.join("\n"));
    let missing: Vec<_> = read_by_runtime.difference(&rows).collect();
    assert!(missing.is_empty(), "not in the table: {missing:?}");
}

#[test]
fn every_variable_the_code_reads_is_documented() {
    let code = [
        sources("crates/parallax/src", &["rs"]),
        sources("crates/preload/src", &["rs"]),
        sources("crates/preload/shim", &["c", "h"]),
        sources("crates/cli/src", &["rs"]),
        sources("crates/db/src", &["rs"]),
    ]
    .concat();
    let documented = names(
        &[
            read("README.md"),
            read("docs/interposition.md"),
            read("docs/analysis.md"),
        ]
        .concat(),
    );
    let missing: Vec<_> = names_after(&code, "\"")
        .difference(&documented)
        .cloned()
        .collect();
    assert!(
        missing.is_empty(),
        "read by the code, in no manual: {missing:?}"
    );
}
