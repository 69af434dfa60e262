//! The layering of ARCHITECTURE.md, checked against the code: every
//! workspace crate's dependencies on other Parallax crates (from `cargo
//! metadata`) are the ones the table allows, no Parallax crate is left out
//! of the table, and the analysis crate's modules follow its list of layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Crate → the Parallax crates it may use (normal and build dependencies;
/// tests and benchmarks may use more).
const MAY_USE: &[(&str, &[&str])] = &[
    ("parallax-model", &[]),
    ("parallax-macros", &[]),
    ("parallax", &["parallax-model", "parallax-macros"]),
    ("parallax-preload", &["parallax", "parallax-model"]),
    ("parallax-tracing", &["parallax"]),
    ("parallax-output", &[]),
    ("parallax-view", &["parallax-model"]),
    ("parallax-analysis", &["parallax-model", "parallax-view"]),
    (
        "parallax-export",
        &["parallax-model", "parallax-view", "parallax-output"],
    ),
    ("parallax-db", &["parallax-model", "parallax-view"]),
    (
        "parallax-report",
        &[
            "parallax-model",
            "parallax-view",
            "parallax-analysis",
            "parallax-export",
            "parallax-db",
            "parallax-output",
        ],
    ),
    (
        "parallax-cli",
        &[
            "parallax",
            "parallax-model",
            "parallax-view",
            "parallax-analysis",
            "parallax-export",
            "parallax-db",
            "parallax-report",
            "parallax-output",
        ],
    ),
    (
        "parallax-bench",
        &[
            "parallax",
            "parallax-model",
            "parallax-view",
            "parallax-analysis",
            "parallax-tracing",
        ],
    ),
    (
        "parallax-testkit",
        &["parallax-model", "parallax-view", "parallax-analysis"],
    ),
    ("parallax-workloads", &["parallax"]),
];

/// What links into a measured program: only these, and they only use
/// each other.
const IN_PROGRAMS: &[&str] = &[
    "parallax",
    "parallax-model",
    "parallax-macros",
    "parallax-preload",
];

fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|n| ours.contains(n))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn crates_use_only_what_the_architecture_allows() {
    let deps = workspace_dependencies();
    let table: BTreeMap<&str, BTreeSet<&str>> = MAY_USE
        .iter()
        .map(|(c, d)| (*c, d.iter().copied().collect()))
        .collect();
    let mut wrong = Vec::new();
    for (krate, uses) in &deps {
        let Some(allowed) = table.get(krate.as_str()) else {
            wrong.push(format!("{krate} is not in ARCHITECTURE.md's table"));
            continue;
        };
        for d in uses {
            if !allowed.contains(d.as_str()) {
                wrong.push(format!("{krate} uses {d}, which the table does not allow"));
            }
        }
    }
    for krate in table.keys() {
        if !deps.contains_key(*krate) {
            wrong.push(format!("{krate} is in the table but not in the workspace"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn measured_programs_link_only_the_runtime() {
    let deps = workspace_dependencies();
    for krate in IN_PROGRAMS {
        for d in &deps[*krate] {
            assert!(
                IN_PROGRAMS.contains(&d.as_str()),
                "{krate}, which links into measured programs, uses {d}"
            );
        }
    }
}

#[test]
fn the_table_is_the_one_in_architecture_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let md = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    // Each row of the crate table: `| `name` | what | may use |`.
    for (krate, uses) in MAY_USE {
        let short = krate.strip_prefix("parallax-").unwrap_or(krate);
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| `{short}` |")))
            .unwrap_or_else(|| panic!("no row for {short} in ARCHITECTURE.md"));
        let may_use = row.rsplit('|').nth(1).unwrap();
        for d in *uses {
            let d = d.strip_prefix("parallax-").unwrap_or(d);
            assert!(
                may_use.contains(&format!("`{d}`")),
                "ARCHITECTURE.md's row of {short} does not name {d}: {row}"
            );
        }
    }
}

/// Rust source of `path` without comments (doc links name modules
/// without using them).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    // A unit-test module may use anything of its crate.
    match out.find("#[cfg(test)]\nmod tests") {
        Some(i) => out[..i].to_string(),
        None => out,
    }
}

/// The Rust files under `dir`, at any depth.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// The analysis crate's top-level modules and, for each, the other
/// top-level modules its code names (`crate::m`, `crate::{m, ..}`).
fn analysis_modules() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../analysis/src");
    let mut files: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if p.is_dir() {
            files.entry(name).or_default().extend(rust_files(&p));
        } else if name != "lib" {
            files.entry(name).or_default().push(p);
        }
    }
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let mut uses = BTreeMap::new();
    for (m, paths) in &files {
        let mut used = BTreeSet::new();
        for p in paths {
            let code = code_of(p);
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let words: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group[..group.find('}').unwrap()]
                        .split(',')
                        .map(|w| w.trim().split("::").next().unwrap())
                        .collect(),
                    None => vec![rest
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap()],
                };
                used.extend(
                    words
                        .into_iter()
                        .filter(|w| names.contains(*w) && *w != m)
                        .map(String::from),
                );
            }
        }
        uses.insert(m.clone(), used);
    }
    uses
}

/// The line of ARCHITECTURE.md's analysis list that names each module,
/// counted from the bottom layer (the list's first line).
fn analysis_layers(modules: &BTreeSet<String>) -> BTreeMap<String, usize> {
    let arch = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md"),
    )
    .unwrap();
    let section = arch
        .split("## The analysis crate")
        .nth(1)
        .expect("ARCHITECTURE.md has the analysis crate's section");
    let list = section.split("\n\n").nth(2).expect("its list of modules");
    let mut layer = BTreeMap::new();
    for (i, item) in list.split("\n- ").enumerate() {
        for word in item.split('`').skip(1).step_by(2) {
            let m = word.trim_end_matches(".rs").trim_end_matches('/');
            if modules.contains(m) {
                layer.entry(m.to_string()).or_insert(i);
            }
        }
    }
    layer
}

#[test]
fn analysis_modules_use_only_their_layer_and_the_ones_below() {
    let uses = analysis_modules();
    let modules: BTreeSet<String> = uses.keys().cloned().collect();
    assert!(modules.contains("replay") && modules.contains("bottleneck"));
    let layer = analysis_layers(&modules);
    let unplaced: Vec<&String> = modules.iter().filter(|m| !layer.contains_key(*m)).collect();
    assert!(
        unplaced.is_empty(),
        "analysis modules missing from ARCHITECTURE.md's list: {unplaced:?}"
    );
    let mut wrong = Vec::new();
    for (m, used) in &uses {
        for u in used {
            if layer[u] > layer[m] {
                wrong.push(format!("{m} uses {u}, a layer above it"));
            }
            if uses[u].contains(m) {
                wrong.push(format!("{m} and {u} use each other"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
