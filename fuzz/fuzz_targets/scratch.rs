//! The directory a fuzz target writes its experiments in: one per target
//! and process, emptied before each input.

use std::path::PathBuf;

/// The target's directory, empty; in /dev/shm where there is one (memory,
/// not disk: an input is written and read in a few milliseconds).
pub fn fresh(target: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let d = base.join(format!("parallax-fuzz-{target}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create the scratch directory");
    d
}
