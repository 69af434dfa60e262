//! The crate layering of ARCHITECTURE.md, checked against `cargo metadata`:
//! every workspace crate's dependencies on other Parallax crates are the
//! ones the table allows, and no Parallax crate is left out of the table.

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
    ("parallax-analysis", &["parallax-model"]),
    (
        "parallax-export",
        &["parallax-model", "parallax-analysis", "parallax-output"],
    ),
    ("parallax-db", &["parallax-model", "parallax-analysis"]),
    (
        "parallax-report",
        &[
            "parallax-model",
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
            "parallax-analysis",
            "parallax-tracing",
        ],
    ),
    ("parallax-testkit", &["parallax-model", "parallax-analysis"]),
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
