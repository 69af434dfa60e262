//! Looks for libotf2 when the `otf2` feature is on, and sets `cfg(have_otf2)`
//! when it is there. Without it the crate builds, and its OTF2 entry points
//! say that this build lacks OTF2 support.
//!
//! `PARALLAX_NO_OTF2=1` builds without OTF2 even where the library is
//! installed (to test that path).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(have_otf2)");
    println!("cargo::rerun-if-env-changed=PARALLAX_NO_OTF2");
    println!("cargo::rerun-if-env-changed=OTF2_CONFIG");
    if std::env::var_os("CARGO_FEATURE_OTF2").is_none() {
        return;
    }
    if std::env::var("PARALLAX_NO_OTF2").is_ok_and(|v| v == "1") {
        println!("cargo::warning=PARALLAX_NO_OTF2=1: building without OTF2 support");
        return;
    }
    match find() {
        Some(libdir) => {
            println!("cargo::rustc-cfg=have_otf2");
            if let Some(d) = libdir {
                println!("cargo::rustc-link-search=native={d}");
            }
            println!("cargo::rustc-link-lib=otf2");
        }
        None => {
            // Built again when the library is installed later: installing
            // libotf2-trace-dev adds /usr/include/otf2, which changes the
            // directory (cargo compares the newest modification below it).
            for d in ["/usr/include", "/usr/local/include", "/usr/local/lib"] {
                if Path::new(d).is_dir() {
                    println!("cargo::rerun-if-changed={d}");
                }
            }
            println!(
                "cargo::warning=libotf2 not found: building without OTF2 support (install libotf2-trace-dev; the next build picks it up)"
            )
        }
    }
}

/// `Some(library directory, if not a default one)` when libotf2 is there.
fn find() -> Option<Option<String>> {
    // otf2-config names the library directory of a custom installation.
    let config = std::env::var("OTF2_CONFIG").unwrap_or_else(|_| "otf2-config".to_string());
    if let Ok(out) = Command::new(&config).arg("--ldflags").output() {
        if out.status.success() {
            let flags = String::from_utf8_lossy(&out.stdout).to_string();
            for f in flags.split_whitespace() {
                if let Some(d) = f.strip_prefix("-L") {
                    if Path::new(d).join("libotf2.so").exists() {
                        println!("cargo::rerun-if-changed={d}/libotf2.so");
                        return Some(Some(d.to_string()));
                    }
                }
            }
        }
    }
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ] {
        let lib = Path::new(d).join("libotf2.so");
        if lib.exists() && Path::new("/usr/include/otf2/otf2.h").exists()
            || lib.exists() && d == "/usr/local/lib"
        {
            println!("cargo::rerun-if-changed={}", lib.display());
            return Some(None);
        }
    }
    None
}
