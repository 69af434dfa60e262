//! The C Livermore kernels (workloads/c/livermore/lfk.c, built with the
//! workloads' Makefile) compute bit for bit what the Rust ones do, at
//! every level, at the test and the benchmark sizes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use parallax_workloads::livermore::{Level, Scale, KERNELS};
use serde_json::Value;

fn build_lfk() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parallax-lfk-c-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new("make")
        .arg("-C")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")))
        .arg(format!("O={}", dir.display()))
        .arg("lfk")
        .output()
        .expect("run make");
    assert!(
        out.status.success(),
        "make lfk: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("lfk")
}

/// Checksum bits of every kernel and level of `lfk` at `scale`.
fn c_checksums(lfk: &Path, scale: &str) -> BTreeMap<(String, String), String> {
    let out = Command::new(lfk)
        .args(["--scale", scale, "--level", "all", "--warmup", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let key = (
                v["kernel"].as_str().unwrap().to_string(),
                v["level"].as_str().unwrap().to_string(),
            );
            (key, v["checksum_bits"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn c_kernels_match_the_rust_ones_bit_for_bit() {
    let lfk = build_lfk();
    for scale in [Scale::Test, Scale::Bench] {
        let c = c_checksums(&lfk, scale.name());
        assert_eq!(c.len(), 3 * 24);
        for k in &KERNELS {
            let rust = format!(
                "{:016x}",
                k.run(k.size(scale), Level::None).checksum.to_bits()
            );
            for level in ["none", "raw", "full"] {
                assert_eq!(
                    c[&(k.region().to_string(), level.to_string())],
                    rust,
                    "kernel {} at {level}, {} size",
                    k.number,
                    scale.name()
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(lfk.parent().unwrap());
}
