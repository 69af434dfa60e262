//! Hostile inputs against every command that reads an experiment or a file
//! given to it: `report`, `report --json`, `analyze`, `analyze --json`,
//! `compensate`, `export` in every format, `html`, `scaling`, `compare`,
//! `import` of broken OTF2 archives (recording into a run database), and
//! `analyze --baselines` / `html --findings` with odd files.
//!
//! Each case is one command on one variant of a valid experiment (see
//! `parallax_testkit::corrupt`), run under a time limit and a 1 GiB
//! address-space limit. It passes when the command gives a result or a
//! clear error: no panic, no signal, no timeout, no peak resident set over
//! 1 GiB, no failure without a message.
//!
//! `html` runs in a campaign of its own (the HTML report is built apart
//! from the other commands). The short form (the default) runs at least
//! 1,100 cases of the other commands and 200 of `html`. The long form:
//!
//! ```text
//! PARALLAX_ADVERSARIAL_CASES=20000 cargo test -p parallax-cli --test adversarial -- --nocapture
//! ```
//!
//! `PARALLAX_ADVERSARIAL_SEED` changes the first seed (default 1); a
//! failure prints the seed of its variant, and
//! `PARALLAX_ADVERSARIAL_ONLY=SEED` runs that variant alone.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use parallax_testkit::limits::{self, Limits};
use parallax_testkit::{base, corrupt, rng::Rng};

/// Cases of the short form: of every reading command but `html`, and of
/// `html`.
const SHORT_CASES: usize = 1_100;
const SHORT_HTML_CASES: usize = 200;

/// Seconds a command may take on an input of a few kilobytes (debug build,
/// two busy cores).
const SECONDS: u64 = 30;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// A fresh scratch directory for one campaign.
fn scratch(which: Commands) -> PathBuf {
    let name = if which == Commands::Html {
        "html"
    } else {
        "readers"
    };
    let d = std::env::temp_dir().join(format!(
        "parallax-adversarial-{name}-{}",
        std::process::id()
    ));
    corrupt::remove(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One command to run: a name for reports and its arguments.
struct Cmd {
    name: String,
    args: Vec<OsString>,
}

fn cmd(name: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> Cmd {
    Cmd {
        name: name.to_string(),
        args: args.iter().map(|a| a.as_ref().to_os_string()).collect(),
    }
}

/// Which commands a campaign runs.
#[derive(Clone, Copy, PartialEq)]
enum Commands {
    /// Every reading command but `html`.
    Readers,
    /// `html` (a campaign of its own: the HTML report is built apart).
    Html,
}

/// The reading commands of `which` on the experiment `dir`, writing under
/// `out`.
fn experiment_commands(which: Commands, dir: &Path, out: &Path) -> Vec<Cmd> {
    if which == Commands::Html {
        return vec![
            cmd("html", &[&"html", &dir, &"--out", &out.join("report.html")]),
            cmd(
                "html --no-analysis",
                &[
                    &"html",
                    &"--no-analysis",
                    &dir,
                    &"--out",
                    &out.join("r2.html"),
                ],
            ),
        ];
    }
    let mut v = vec![
        cmd("report", &[&"report", &dir]),
        cmd("report --json", &[&"report", &"--json", &dir]),
        cmd("analyze", &[&"analyze", &dir]),
        cmd("analyze --json", &[&"analyze", &"--json", &dir]),
        cmd(
            "compensate",
            &[&"compensate", &dir, &"--out", &out.join("compensated")],
        ),
        cmd("scaling", &[&"scaling", &dir, &dir]),
        cmd("compare", &[&"compare", &dir, &dir]),
    ];
    for f in [
        "otf2", "perfetto", "chrome", "folded", "svg", "csv", "json", "hatchet",
    ] {
        v.push(cmd(
            &format!("export {f}"),
            &[
                &"export",
                &dir,
                &"--format",
                &f,
                &"--out",
                &out.join(format!("out.{f}")),
            ],
        ));
    }
    v
}

/// A case that went wrong.
struct Failure {
    seed: u64,
    what: String,
    command: String,
    problems: Vec<String>,
    stderr: String,
}

struct Run {
    scratch: PathBuf,
    limits: Limits,
    cases: AtomicUsize,
    passed: AtomicUsize,
    errors: AtomicUsize,
    failures: Mutex<Vec<Failure>>,
}

impl Run {
    fn exec(&self, seed: u64, what: &str, c: &Cmd) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_parallax"));
        command
            .args(&c.args)
            .env("PARALLAX_DB", self.scratch.join("default.sqlite"))
            .env("HOME", &self.scratch)
            .env("NO_COLOR", "1");
        let o = limits::run(&mut command, &self.limits).expect("run parallax");
        self.cases.fetch_add(1, Ordering::Relaxed);
        let problems = o.problems(self.limits.memory);
        if problems.is_empty() {
            self.passed.fetch_add(1, Ordering::Relaxed);
            if o.status != Some(0) {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            self.failures.lock().unwrap().push(Failure {
                seed,
                what: what.to_string(),
                command: c.name.clone(),
                problems,
                stderr: o.stderr_tail(),
            });
        }
    }
}

/// The valid experiments variants start from, made once.
fn bases(scratch: &Path) -> Vec<PathBuf> {
    let mpi = scratch.join("base-mpi");
    base::mpi(&mpi).unwrap();
    let threads = scratch.join("base-threads");
    base::threads(&threads).unwrap();
    let deep = scratch.join("base-deep");
    base::deep(&deep, 3_000, true).unwrap();
    vec![mpi, threads, deep]
}

/// An OTF2 archive exported from `exp`, at `dir/trace.otf2`.
fn otf2_archive(exp: &Path, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let anchor = dir.join("trace.otf2");
    let st = Command::new(env!("CARGO_BIN_EXE_parallax"))
        .args(["export"])
        .arg(exp)
        .args(["--format", "otf2", "--out"])
        .arg(&anchor)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "the OTF2 export of a valid experiment failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    anchor
}

/// Every regular file below `dir`.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_below(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A broken copy of the OTF2 archive in `archive_dir` at `out`: one of its
/// files cut, flipped or replaced by an odd file. Returns the new anchor
/// and what was broken.
fn otf2_variant(archive_dir: &Path, out: &Path, seed: u64) -> (PathBuf, String) {
    let mut rng = Rng::new(seed);
    corrupt::copy_dir(archive_dir, out).unwrap();
    let files = files_below(out);
    let f = rng.pick(&files).clone();
    let name = f.strip_prefix(out).unwrap().display().to_string();
    let bytes = std::fs::read(&f).unwrap();
    let what = match rng.below(4) {
        0 => {
            let at = rng.index(bytes.len().max(1));
            std::fs::write(&f, &bytes[..at]).unwrap();
            format!("cut at byte {at} of {}", bytes.len())
        }
        1 | 2 => {
            let mut b = bytes.clone();
            let mut at = Vec::new();
            for _ in 0..1 + rng.below(8) {
                if b.is_empty() {
                    break;
                }
                let i = rng.index(b.len());
                let mask = (1 + rng.below(255)) as u8;
                b[i] ^= mask;
                at.push(i);
            }
            std::fs::write(&f, &b).unwrap();
            format!("bytes flipped at {at:?}")
        }
        _ => corrupt::odd_file_of_kind(&f, rng.below(corrupt::ODD_FILES)).unwrap(),
    };
    (out.join("trace.otf2"), format!("{name}: {what}"))
}

#[test]
fn readers_give_results_or_clear_errors_on_hostile_inputs() {
    campaign(Commands::Readers, SHORT_CASES);
}

#[test]
fn html_gives_a_page_or_a_clear_error_on_hostile_inputs() {
    campaign(Commands::Html, SHORT_HTML_CASES);
}

/// Runs cases of `which` until `short` of them ran (or as many as
/// `PARALLAX_ADVERSARIAL_CASES` says).
fn campaign(which: Commands, short: usize) {
    let target = env_u64("PARALLAX_ADVERSARIAL_CASES").map_or(short, |n| n as usize);
    let first = env_u64("PARALLAX_ADVERSARIAL_SEED").unwrap_or(1);
    let only = env_u64("PARALLAX_ADVERSARIAL_ONLY");
    let scratch = scratch(which);
    let bases = bases(&scratch);
    let archive = otf2_archive(&bases[0], &scratch.join("base-otf2"));
    let archive_dir = archive.parent().unwrap().to_path_buf();
    let run = Run {
        scratch: scratch.clone(),
        limits: Limits::new(SECONDS),
        cases: AtomicUsize::new(0),
        passed: AtomicUsize::new(0),
        errors: AtomicUsize::new(0),
        failures: Mutex::new(Vec::new()),
    };
    // Seeds are taken in order by two workers; a seed makes one variant and
    // runs every command on it.
    let next = AtomicUsize::new(0);
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                if run.cases.load(Ordering::Relaxed) >= target {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed) as u64;
                let seed = match only {
                    Some(s) if i == 0 => s,
                    Some(_) => return,
                    None => first + i,
                };
                one_seed(which, &run, &bases, &archive_dir, seed);
            });
        }
    });
    let failures = run.failures.into_inner().unwrap();
    let cases = run.cases.load(Ordering::Relaxed);
    eprintln!(
        "adversarial: {cases} cases in {:.0} s: {} passed ({} with a clear error), {} failed",
        started.elapsed().as_secs_f64(),
        run.passed.load(Ordering::Relaxed),
        run.errors.load(Ordering::Relaxed),
        failures.len()
    );
    for f in &failures {
        eprintln!(
            "FAILED seed {} ({}): `parallax {}`: {}\n  {}",
            f.seed,
            f.what,
            f.command,
            f.problems.join("; "),
            f.stderr.replace('\n', "\n  ")
        );
    }
    if failures.is_empty() {
        corrupt::remove(&scratch);
    }
    assert!(only.is_some() || cases >= target, "only {cases} cases ran");
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed (seeds above; rerun one with PARALLAX_ADVERSARIAL_ONLY=SEED)",
        failures.len()
    );
}

/// Makes the variant of `seed` and runs its commands of `which`.
fn one_seed(which: Commands, run: &Run, bases: &[PathBuf], archive_dir: &Path, seed: u64) {
    let work = run.scratch.join(format!("case-{seed}"));
    corrupt::remove(&work);
    std::fs::create_dir_all(&work).unwrap();
    let mut rng = Rng::new(seed ^ 0x5eed);
    match rng.below(20) {
        // Broken OTF2 archives, imported and recorded.
        0..=1 if which == Commands::Readers => {
            let (anchor, what) = otf2_variant(archive_dir, &work.join("archive"), seed);
            let c = cmd(
                "import",
                &[
                    &"import",
                    &anchor,
                    &"--out",
                    &work.join("imported"),
                    &"--db",
                    &work.join("runs.sqlite"),
                ],
            );
            run.exec(seed, &what, &c);
            // What was imported is read like any experiment.
            if work.join("imported").is_dir() {
                run.exec(
                    seed,
                    &what,
                    &cmd("report (imported)", &[&"report", &work.join("imported")]),
                );
            }
        }
        // Odd files given as --baselines and --findings.
        2 => {
            let f = work.join("given");
            std::fs::write(&f, b"").unwrap();
            let what = match rng.below(3) {
                0 => corrupt::odd_file_of_kind(&f, rng.below(corrupt::ODD_FILES)).unwrap(),
                1 => {
                    let junk: Vec<u8> = (0..rng.below(1 << 16))
                        .map(|_| rng.next_u64() as u8)
                        .collect();
                    std::fs::write(&f, junk).unwrap();
                    "random bytes".into()
                }
                _ => {
                    let mut s = String::new();
                    for _ in 0..rng.below(2000) {
                        s.push_str(&format!(
                            "{} {} {}\n",
                            rng.pick(&["barrier", "lock", "recv", "x"]),
                            rng.hostile_u64(),
                            rng.pick(&["1e300", "-1", "nan", "inf", "0", "1e-9"])
                        ));
                    }
                    std::fs::write(&f, s).unwrap();
                    "hostile numbers".into()
                }
            };
            let b = &bases[rng.index(bases.len())];
            if which == Commands::Readers {
                run.exec(
                    seed,
                    &format!("--baselines {what}"),
                    &cmd("analyze --baselines", &[&"analyze", &"--baselines", &f, b]),
                );
            } else {
                run.exec(
                    seed,
                    &format!("--findings {what}"),
                    &cmd(
                        "html --findings",
                        &[
                            &"html",
                            b,
                            &"--findings",
                            &f,
                            &"--out",
                            &work.join("f.html"),
                        ],
                    ),
                );
            }
        }
        _ => {
            let b = &bases[rng.index(bases.len())];
            let dir = work.join("exp");
            let what = corrupt::variant(b, &dir, seed).unwrap();
            let what = format!("{}: {what}", b.file_name().unwrap().to_string_lossy());
            let out = work.join("out");
            std::fs::create_dir_all(&out).unwrap();
            for c in experiment_commands(which, &dir, &out) {
                run.exec(seed, &what, &c);
            }
        }
    }
    corrupt::remove(&work);
}
