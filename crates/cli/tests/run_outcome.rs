//! `parallax run` whatever happens around it: its exit status is the
//! program's when the disk fills up or its output pipe closes, and its
//! manifest and run record tell how the run ended when it is signalled,
//! killed outright, or when a rank of an MPI job is killed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{compile, have, parallax, preload, stderr, stdout, tmp};

/// Compiles the C program `source` as `dir/name`.
fn program(dir: &Path, name: &str, source: &str, extra: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let mut args = vec!["-O1", src.to_str().unwrap(), "-o", exe.to_str().unwrap()];
    args.extend_from_slice(extra);
    compile("gcc", &args);
    exe
}

/// A measured program (it starts a thread) that exits with status 7 and
/// writes nothing.
const SEVEN: &str = r#"
#include <pthread.h>
static void *work(void *a) { volatile double x = 0; for (int i = 0; i < 100000; i++) x += i; return a; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    return 7;
}
"#;

/// A measured program that writes its pid to the file `argv[1]`, then
/// sleeps for a minute (until killed).
const SLEEPER: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *work(void *a) { return a; }
int main(int argc, char **argv) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    FILE *f = fopen(argv[1], "w");
    fprintf(f, "%d", (int)getpid());
    fclose(f);
    for (int i = 0; i < 600; i++) usleep(100000);
    return 0;
}
"#;

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("run mount");
        assert!(
            o.status.success(),
            "this test mounts a small tmpfs to fill it (it needs root): {}",
            stderr(&o)
        );
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_leaves_the_programs_exit_status() {
    preload();
    let d = tmp("full-disk");
    // The program fills the disk that holds the experiment and the run
    // database, then exits with 5.
    let exe = program(
        &d,
        "fill",
        r#"
#include <pthread.h>
#include <stdio.h>
static void *work(void *a) { volatile double x = 0; for (int i = 0; i < 100000; i++) x += i; return a; }
int main(int argc, char **argv) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    static char block[1 << 16];
    FILE *f = fopen(argv[1], "w");
    while (f && fwrite(block, 1, sizeof block, f) == sizeof block) {}
    if (f) fclose(f);
    return 5;
}
"#,
        &["-lpthread"],
    );
    let disk = Tmpfs::mount(&d.join("disk"), "4m");
    let o = parallax()
        .args(["run", "--db"])
        .arg(disk.0.join("runs.sqlite"))
        .arg("--out")
        .arg(disk.0.join("exp"))
        .arg("--")
        .arg(&exe)
        .arg(disk.0.join("filler"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    // What the full disk cost was said, or nothing was lost: the runtime
    // reserves the room it writes into.
    let lost = stderr(&o).contains("No space left");
    if !lost {
        let r = parallax()
            .arg("report")
            .arg(disk.0.join("exp"))
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", stderr(&r));
        assert!(!stderr(&r).contains("warning"), "{}", stderr(&r));
    }
}

#[test]
fn a_closed_pipe_leaves_the_programs_exit_status() {
    preload();
    let d = tmp("closed-pipe");
    let seven = program(&d, "seven", SEVEN, &["-lpthread"]);
    // Both pipes closed before anything is written.
    let mut c = parallax()
        .args(["run", "--no-db", "--out"])
        .arg(d.join("exp1"))
        .arg("--")
        .arg(&seven)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(c.stdout.take());
    drop(c.stderr.take());
    assert_eq!(c.wait().unwrap().code(), Some(7));
    // `parallax run ... 2>&1 | head -1`: the pipe closes after one line.
    let o = Command::new("bash")
        .arg("-c")
        .arg(r#""$0" run --no-db --out "$1" -- "$2" 2>&1 | head -1; exit "${PIPESTATUS[0]}""#)
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .arg(d.join("exp2"))
        .arg(&seven)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("parallax: measuring"),
        "{}",
        stdout(&o)
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    // Standard output and error closed.
    let o = Command::new("bash")
        .arg("-c")
        .arg(r#""$0" run --no-db --out "$1" -- "$2" >&- 2>&-; echo "status $?""#)
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .arg(d.join("exp3"))
        .arg(&seven)
        .output()
        .unwrap();
    assert_eq!(stdout(&o).trim(), "status 7", "{}", stderr(&o));
    // A program that writes into the closed pipe dies of SIGPIPE, as it
    // would without Parallax: 128 + 13.
    let talker = program(
        &d,
        "talker",
        &SEVEN
            .replace(
                "return 7;",
                "for (int i = 0; i < 1000; i++) { puts(\"hello\"); fflush(stdout); } return 0;",
            )
            .replace(
                "#include <pthread.h>",
                "#include <pthread.h>\n#include <stdio.h>",
            ),
        &["-lpthread"],
    );
    let mut c = parallax()
        .args(["run", "--no-db", "--out"])
        .arg(d.join("exp4"))
        .arg("--")
        .arg(&talker)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(c.stdout.take());
    drop(c.stderr.take());
    assert_eq!(c.wait().unwrap().code(), Some(128 + 13));
}

/// Waits (at most a minute) until `f` holds.
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn db(file: &Path, args: &[&str]) -> String {
    let o = parallax()
        .arg("db")
        .arg("--db")
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// Starts `parallax run` of the sleeper; returns it and the program's pid
/// once the program has started measuring.
fn start_sleeper(d: &Path, exe: &Path, exp: &Path, db: &Path) -> (std::process::Child, i32) {
    let pidfile = d.join("pid");
    let _ = std::fs::remove_file(&pidfile);
    let c = parallax()
        .args(["run", "--db"])
        .arg(db)
        .arg("--out")
        .arg(exp)
        .arg("--")
        .arg(exe)
        .arg(&pidfile)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the program's pid", || {
        std::fs::read_to_string(&pidfile).is_ok_and(|s| !s.is_empty())
    });
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().parse().unwrap();
    (c, pid)
}

#[test]
fn a_killed_parallax_run_leaves_a_manifest_and_a_record_that_say_so() {
    preload();
    let d = tmp("kill-9");
    let exe = program(&d, "sleeper", SLEEPER, &["-lpthread"]);
    let (exp, file) = (d.join("exp"), d.join("runs.sqlite"));
    let (mut run, pid) = start_sleeper(&d, &exe, &exp, &file);
    run.kill().unwrap(); // SIGKILL
    run.wait().unwrap();
    // Safety: the program this test started, by its pid.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(manifest(&exp)["status"], "running");
    let o = parallax().arg("report").arg(&exp).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("did not finish: parallax run was killed"),
        "{}",
        stdout(&o)
    );
    let list = db(&file, &["list"]);
    assert!(
        list.contains("did not finish: parallax run was killed"),
        "{list}"
    );
    let show: Value = serde_json::from_str(&db(&file, &["show", "1", "--json"])).unwrap();
    assert_eq!(show["status"], "running");
    assert_eq!(show["state"], "did not finish: parallax run was killed");
}

#[test]
fn signals_to_parallax_run_end_the_program_and_the_run_is_recorded() {
    preload();
    let d = tmp("sigterm");
    let exe = program(&d, "sleeper", SLEEPER, &["-lpthread"]);
    let (exp, file) = (d.join("exp"), d.join("runs.sqlite"));
    for (sig, n) in [(libc::SIGTERM, 15), (libc::SIGHUP, 1), (libc::SIGINT, 2)] {
        let (mut run, pid) = start_sleeper(&d, &exe, &exp, &file);
        // While it runs, the manifest and the record say so.
        assert_eq!(manifest(&exp)["status"], "running");
        // Safety: the parallax run this test started, by its pid.
        unsafe { libc::kill(run.id() as i32, sig) };
        let st = run.wait().unwrap();
        assert_eq!(st.code(), Some(128 + n), "signal {n}: {st:?}");
        // Safety: probing the pid the program had: it is gone.
        assert_eq!(
            unsafe { libc::kill(pid, 0) },
            -1,
            "signal {n}: the program runs on"
        );
        let status = format!("killed by signal {n}");
        assert_eq!(manifest(&exp)["status"], status.as_str());
        let list = db(&file, &["list", "--json"]);
        let runs: Vec<Value> = serde_json::from_str(&list).unwrap();
        assert_eq!(runs.last().unwrap()["status"], status.as_str(), "{list}");
    }
}

#[test]
fn a_rank_killed_under_mpirun_leaves_a_manifest_and_a_record() {
    assert!(
        have("mpicc") && have("mpirun"),
        "Open MPI is not installed (scripts/setup.sh installs it)"
    );
    preload();
    let d = tmp("mpi-kill");
    let exe = d.join("killrank");
    std::fs::write(
        d.join("killrank.c"),
        r#"
#include <mpi.h>
#include <signal.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) raise(SIGKILL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"#,
    )
    .unwrap();
    compile(
        "mpicc",
        &[
            "-O1",
            d.join("killrank.c").to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    let (exp, file) = (d.join("exp"), d.join("runs.sqlite"));
    let o = Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["-np", "2"])
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .args(["run", "--db"])
        .arg(&file)
        .arg("--out")
        .arg(&exp)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", stderr(&o));
    let m = manifest(&exp);
    let status = m["status"].as_str().unwrap().to_string();
    assert!(status.starts_with("killed by signal"), "{m}");
    // Both ranks are in it; the killed one did not finish.
    let procs = m["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 2, "{m}");
    assert_eq!(procs[1]["finished_cleanly"], false, "{m}");
    let runs: Vec<Value> = serde_json::from_str(&db(&file, &["list", "--json"])).unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], status.as_str());
    assert_eq!(runs[0]["ranks"], 2);
}
