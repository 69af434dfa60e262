//! Writes one of the test experiments, for measurements by hand:
//!
//! ```text
//! cargo run --release -p parallax-testkit --example experiment -- large DIR 10000000
//! cargo run --release -p parallax-testkit --example experiment -- deep DIR 100000
//! cargo run --release -p parallax-testkit --example experiment -- mpi DIR
//! ```
//!
//! `large DIR N`: N events over two threads; `deep DIR N`: a recursion N
//! deep (`deep-profile` adds a runtime profile); `mpi DIR`, `threads DIR`:
//! the small experiments the adversarial tests start from;
//! `variant DIR SEED BASE`: the hostile variant of experiment BASE that
//! the adversarial tests make from SEED.

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: experiment large|deep|deep-profile|mpi|threads DIR [N] | variant DIR SEED BASE";
    let (kind, dir) = match (args.first(), args.get(1)) {
        (Some(k), Some(d)) => (k.as_str(), PathBuf::from(d)),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let n: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    if dir.exists() {
        eprintln!("{} exists", dir.display());
        std::process::exit(2);
    }
    let r = match kind {
        "large" => parallax_testkit::base::large(&dir, n, 2),
        "deep" => parallax_testkit::base::deep(&dir, n as u32, false),
        "deep-profile" => parallax_testkit::base::deep(&dir, n as u32, true),
        "mpi" => parallax_testkit::base::mpi(&dir),
        "threads" => parallax_testkit::base::threads(&dir),
        "variant" => {
            let base = PathBuf::from(args.get(3).map_or("", String::as_str));
            match parallax_testkit::corrupt::variant(&base, &dir, n) {
                Ok(what) => {
                    println!("{what}");
                    Ok(())
                }
                Err(e) => Err(parallax_model::Error::io(&dir, e)),
            }
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    if let Err(e) = r {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
