//! The runtime's rule under hostile conditions: whatever happens inside
//! Parallax, the measured program's standard output, standard error (apart
//! from at most one line of Parallax's) and exit status are those of the
//! program run without it. Each test builds its C program, runs it plain,
//! under `LD_PRELOAD` and under `parallax run`, and compares.

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use parallax_model::event::EventKind;

/// A C program of the test, compiled with compiler instrumentation.
fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    compile(
        "gcc",
        &[
            "-O1",
            "-g",
            "-finstrument-functions",
            "-pthread",
            c.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    exe
}

/// How a program is run: plain, with the interposition library, or under
/// `parallax run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    Plain,
    Preload,
    Run,
}

/// A run of `exe ARGS` the way `how` says, into experiment `out`, with
/// `env` added and, if `shell` is not empty, the shell commands `shell`
/// (limits) run first in the same process.
#[derive(Clone)]
struct Launch<'a> {
    exe: &'a Path,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    unset: Vec<&'a str>,
    shell: &'a str,
    mode: &'a str,
    /// Shell commands run first and last in a mount namespace of the run's
    /// own (file systems mounted for it vanish with it).
    namespace: Option<(String, String)>,
}

impl<'a> Launch<'a> {
    fn new(exe: &'a Path) -> Launch<'a> {
        Launch {
            exe,
            args: Vec::new(),
            env: Vec::new(),
            unset: Vec::new(),
            shell: "",
            mode: "trace",
            namespace: None,
        }
    }

    fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .push((k.as_ref().to_os_string(), v.as_ref().to_os_string()));
        self
    }

    fn shell(mut self, s: &'a str) -> Self {
        self.shell = s;
        self
    }

    fn namespace(mut self, setup: String, after: String) -> Self {
        self.namespace = Some((setup, after));
        self
    }

    fn mode(mut self, m: &'a str) -> Self {
        self.mode = m;
        self
    }

    fn unset(mut self, k: &'a str) -> Self {
        self.unset.push(k);
        self
    }

    fn run(&self, how: How, out: &Path) -> Output {
        let mut argv: Vec<OsString> = Vec::new();
        if how == How::Run {
            preload();
            argv.push(env!("CARGO_BIN_EXE_parallax").into());
            argv.extend(
                [
                    "run",
                    "--no-report",
                    "--no-db",
                    "--mode",
                    self.mode,
                    "--out",
                ]
                .map(OsString::from),
            );
            argv.push(out.into());
            argv.push("--".into());
        }
        argv.push(self.exe.into());
        argv.extend(self.args.iter().cloned());
        let mut cmd = if let Some((setup, after)) = &self.namespace {
            let mut c = Command::new("unshare");
            c.args(["-rm", "sh", "-c"])
                .arg(format!(
                    "{setup}\n{}\n\"$@\"\nst=$?\n{after}\nexit $st",
                    self.shell
                ))
                .arg("sh")
                .args(&argv);
            c
        } else if self.shell.is_empty() {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        } else {
            // The limits apply to the program (and to `parallax run`), not
            // to the test.
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("{}\nexec \"$@\"", self.shell))
                .arg("sh")
                .args(&argv);
            c
        };
        for k in [
            "LD_PRELOAD",
            "PARALLAX_MODE",
            "PARALLAX_OUT",
            "PARALLAX_PARENT_PID",
        ] {
            cmd.env_remove(k);
        }
        if how == How::Preload {
            cmd.env("LD_PRELOAD", preload())
                .env("PARALLAX_MODE", self.mode)
                .env("PARALLAX_OUT", out);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        for k in &self.unset {
            cmd.env_remove(k);
        }
        // A test started in the background by a shell inherits SIGINT and
        // SIGQUIT ignored; the programs start with them at their default,
        // as from a terminal.
        // Safety: only async-signal-safe calls between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                for sig in [libc::SIGINT, libc::SIGQUIT] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        cmd.output().unwrap()
    }
}

/// The lines of `parallax run` itself (not of the runtime in the program).
fn is_launcher_line(l: &str) -> bool {
    [
        "parallax: measuring `",
        "parallax: experiment in ",
        "parallax: resolved ",
        "parallax: warning: ",
    ]
    .iter()
    .any(|p| l.starts_with(p))
        || (l.starts_with("parallax: `") && (l.contains("` ended (") || l.contains("recorded")))
}

/// Checks that `measured` (run as `how`) gave the program's output and
/// status of `plain`, with at most `messages` lines of the runtime on
/// stderr; returns those lines.
fn assert_same(
    what: &str,
    how: How,
    plain: &Output,
    measured: &Output,
    messages: usize,
) -> Vec<String> {
    use std::os::unix::process::ExitStatusExt;
    // `parallax run` reports a program killed by a signal as a shell does.
    let want = match (plain.status.code(), plain.status.signal()) {
        (None, Some(sig)) if how == How::Run => Some(128 + sig),
        (code, _) => code,
    };
    assert_eq!(
        measured.status.code(),
        want,
        "{what} ({how:?}): exit status; stderr: {}",
        stderr(measured)
    );
    if how != How::Run {
        assert_eq!(
            measured.status.signal(),
            plain.status.signal(),
            "{what} ({how:?}): signal"
        );
    }
    assert_eq!(
        stdout(measured),
        stdout(plain),
        "{what} ({how:?}): stdout; stderr: {}",
        stderr(measured)
    );
    let text = stderr(measured);
    let mut program = Vec::new();
    let mut ours = Vec::new();
    for l in text.lines() {
        if how == How::Run && is_launcher_line(l) {
            continue;
        }
        if l.starts_with("parallax: ") {
            ours.push(l.to_string());
        } else {
            program.push(l);
        }
    }
    let plain_err = stderr(plain);
    let plain_lines: Vec<&str> = plain_err.lines().collect();
    assert_eq!(
        program, plain_lines,
        "{what} ({how:?}): the program's stderr"
    );
    assert!(
        ours.len() <= messages,
        "{what} ({how:?}): {} lines of Parallax, at most {messages} expected: {ours:?}",
        ours.len()
    );
    ours
}

/// Reads the experiment, which must exist and have no warnings.
fn read(out: &Path) -> parallax_model::experiment::Experiment {
    open(out)
}

/// Events `work` entered in the experiment, over all processes.
fn work_calls(out: &Path) -> usize {
    read(out)
        .processes
        .iter()
        .map(|p| total_enters(p, "work"))
        .sum()
}

const ARGS_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sum;
__attribute__((noinline)) void work(int i) { sum += i; }

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    for (int i = 0; i < n; i++)
        work(i);
    printf("argc=%d sum=%ld\n", argc, sum);
    for (int i = 2; i < argc; i++)
        printf("arg%d len=%zu\n", i, strlen(argv[i]));
    fprintf(stderr, "program: done\n");
    return 3;
}
"#;

#[test]
fn arguments_and_environment_that_are_not_utf8() {
    let d = tmp("hostile-utf8");
    let exe = build(&d, "args", ARGS_C);
    let bad = OsStr::from_bytes(b"caf\xe9 \xff\xfe");
    let launch = Launch::new(&exe)
        .arg("50")
        .arg(bad)
        .arg("plain")
        .env("SOME_VARIABLE", bad)
        .env("PARALLAX_EXCLUDE_PROGRAMS", bad)
        .env("PARALLAX_FILTER_EXCLUDE", bad)
        .unset("HOME");
    let plain = launch.run(How::Plain, &d.join("none"));
    assert_eq!(plain.status.code(), Some(3));
    for how in [How::Preload, How::Run] {
        // An experiment directory whose name is not UTF-8 either.
        let mut name = OsString::from(format!("exp-{how:?}-"));
        name.push(OsStr::from_bytes(b"\xff"));
        let out = d.join(name);
        let o = launch.run(how, &out);
        assert_same("non-UTF-8 arguments", how, &plain, &o, 0);
        assert_eq!(work_calls(&out), 50, "{how:?}");
        let exp = read(&out);
        let info = exp.processes[0].info.as_ref().unwrap();
        assert_eq!(info.args[1], "caf\u{fffd} \u{fffd}\u{fffd}", "{how:?}");
    }
}

/// Calls of `work` per rank, and whether each rank ended cleanly.
fn work_by_rank(out: &Path) -> Vec<(u32, usize, bool)> {
    read(out)
        .processes
        .iter()
        .map(|p| (p.rank, total_enters(p, "work"), p.end_unix_ns.is_some()))
        .collect()
}

const ENDS_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sum;
__attribute__((noinline)) void work(int i) { sum += i; }

static void calls(int n) {
    for (int i = 0; i < n; i++)
        work(i);
}

/* How the image ends after `n` calls. */
static void end(const char *how, const char *self, int n) {
    calls(n);
    printf("%s after %d calls\n", how, n);
    fflush(stdout);
    char *args[] = {(char *)self, "image", "7", NULL};
    if (!strcmp(how, "_exit"))
        _exit(5);
    if (!strcmp(how, "_Exit"))
        _Exit(6);
    if (!strcmp(how, "execv"))
        execv(self, args);
    if (!strcmp(how, "execl"))
        execl(self, self, "image", "7", (char *)NULL);
    if (!strcmp(how, "execvp"))
        execvp(self, args);
    if (!strcmp(how, "execle")) {
        extern char **environ;
        execle(self, self, "image", "7", (char *)NULL, environ);
    }
    fprintf(stderr, "no such ending: %s\n", how);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        /* The program an exec starts: its own calls, and a normal end. */
        calls(atoi(argv[2]));
        printf("image after %s calls\n", argv[2]);
        return 0;
    }
    const char *how = argv[1];
    int n = atoi(argv[2]);
    if (!strcmp(argv[3], "self"))
        end(how, argv[0], n);
    calls(2);
    pid_t pid = strcmp(argv[3], "vfork") ? fork() : vfork();
    if (pid == 0) {
        if (!strcmp(argv[3], "vfork"))
            _exit(3);
        end(how, argv[0], n);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    calls(3);
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
"#;

#[test]
fn exit_without_atexit_and_exec_keep_what_was_recorded() {
    let d = tmp("hostile-ends");
    let exe = build(&d, "ends", ENDS_C);
    let self_ends = ["_exit", "_Exit", "execv", "execl", "execvp", "execle"];
    for how in self_ends {
        let launch = Launch::new(&exe).arg(how).arg("40").arg("child");
        let plain = launch.run(How::Plain, &d.join("none"));
        assert!(plain.status.success(), "{how}: {}", stderr(&plain));
        // A child ends so: measured as a process of its own under
        // `parallax run`, and the program it becomes by exec as another.
        let out = d.join(format!("run-{how}"));
        let o = launch.run(How::Run, &out);
        assert_same(how, How::Run, &plain, &o, 0);
        let want: Vec<(u32, usize, bool)> = if how.starts_with("exec") {
            vec![(0, 5, true), (1, 40, true), (2, 7, true)]
        } else {
            vec![(0, 5, true), (1, 40, true)]
        };
        assert_eq!(work_by_rank(&out), want, "{how}");
        let r = report_json(&out);
        for p in r["processes"].as_array().unwrap() {
            assert_eq!(p["finished_cleanly"], true, "{how}: {p}");
        }
        // The measured process itself ends so, under plain LD_PRELOAD
        // (children measured, as `parallax run` does).
        let launch = Launch::new(&exe)
            .arg(how)
            .arg("40")
            .arg("self")
            .env("PARALLAX_CHILDREN", "1");
        let plain = launch.run(How::Plain, &d.join("none"));
        let out = d.join(format!("preload-{how}"));
        let o = launch.run(How::Preload, &out);
        assert_same(how, How::Preload, &plain, &o, 0);
        let want: Vec<(u32, usize, bool)> = if how.starts_with("exec") {
            vec![(0, 40, true), (1, 7, true)]
        } else {
            vec![(0, 40, true)]
        };
        assert_eq!(work_by_rank(&out), want, "{how} (LD_PRELOAD)");
    }
    // A child made by vfork that calls _exit shares its parent's memory: the
    // parent's measurement goes on.
    let launch = Launch::new(&exe).arg("_exit").arg("1").arg("vfork");
    let plain = launch.run(How::Plain, &d.join("none"));
    for how in [How::Preload, How::Run] {
        let out = d.join(format!("vfork-{how:?}"));
        let o = launch.run(how, &out);
        assert_same("vfork", how, &plain, &o, 0);
        assert_eq!(work_by_rank(&out), [(0, 5, true)], "vfork {how:?}");
    }
}

const MEMORY_C: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long sum;
__attribute__((noinline)) void work(int i) { __atomic_fetch_add(&sum, i, __ATOMIC_RELAXED); }

static void *worker(void *arg) {
    for (int i = 0; i < 1000; i++)
        work(i);
    return arg;
}

/* The most address space the process held, KiB. */
static long peak(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmPeak:", 7))
            kb = atol(line + 7);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    /* The program's own need comes after Parallax started. */
    char *block = malloc(4 << 20);
    if (!block) {
        printf("no memory\n");
        return 2;
    }
    memset(block, 1, 4 << 20);
    free(block);
    printf("sum=%ld\n", sum);
    if (argc > 1)
        fprintf(stderr, "peak %ld\n", peak());
    return 0;
}
"#;

#[test]
fn a_tight_memory_limit() {
    let d = tmp("hostile-memory");
    let exe = build(&d, "memory", MEMORY_C);
    // What the program needs with the library loaded (measurement off).
    let o = Launch::new(&exe)
        .arg("peak")
        .mode("off")
        .run(How::Preload, &d.join("none"));
    let peak: u64 = stderr(&o)
        .split_whitespace()
        .nth(1)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no peak: {}", stderr(&o)));
    // Limits from a little above that need to plenty: the program always
    // runs as it does alone (`parallax run` itself would run under the
    // limit too: only the library is under test here).
    for margin in [512u64, 2048, 8192, 32768, 131072, 262144] {
        let limit = format!("ulimit -v {}", peak + margin);
        let launch = Launch::new(&exe).shell(&limit);
        let plain = launch.run(How::Plain, &d.join("none"));
        assert_eq!(stdout(&plain), "sum=1498500\n", "{limit}");
        let out = d.join(format!("exp-{margin}"));
        let o = launch.run(How::Preload, &out);
        let said = assert_same(&limit, How::Preload, &plain, &o, 1);
        // Whatever was measured reads back, and what was not is counted.
        if let Ok(exp) = parallax_model::experiment::Experiment::open(&out) {
            let p = &exp.processes[0];
            let untraced: u64 = p.unrecorded.values().map(|u| u.threads).sum();
            let traced = p.locations.values().filter(|l| l.events.is_some()).count() as u64;
            assert_eq!(traced + untraced, 4, "{limit}: {:?}", p.unrecorded);
            assert_eq!(said.is_empty(), untraced == 0, "{limit}: {said:?}");
        } else {
            assert_eq!(said.len(), 1, "{limit}: measurement off is said");
        }
    }
}

const KILL_C: &str = r#"
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long sum;
__attribute__((noinline)) void work(int i) { __atomic_fetch_add(&sum, i, __ATOMIC_RELAXED); }

static sem_t done;
static int per_thread;

static void *worker(void *arg) {
    for (int i = 0; i < per_thread; i++)
        work(i);
    sem_post(&done);
    for (;;)
        pause();
    return arg;
}

int main(int argc, char **argv) {
    int n = atoi(argv[1]), threads = atoi(argv[2]);
    per_thread = atoi(argv[3]);
    sem_init(&done, 0, 0);
    for (int k = 0; k < threads; k++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
    }
    for (int i = 0; i < n; i++)
        work(i);
    for (int k = 0; k < threads; k++)
        sem_wait(&done);
    printf("recorded %d calls\n", n + threads * per_thread);
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
"#;

#[test]
fn sigkill_keeps_every_event_recorded_up_to_the_kill() {
    let d = tmp("hostile-sigkill");
    let exe = build(&d, "killed", KILL_C);
    // A short program (everything still in the buffers), and a long one
    // with small buffers (blocks written, and the rest in the buffers).
    for (n, threads, per_thread, buffer) in [
        (10, 0, 0, "1m"),
        (7, 2, 5, "1m"),
        (300_000, 2, 100_000, "64k"),
    ] {
        let launch = Launch::new(&exe)
            .arg(n.to_string())
            .arg(threads.to_string())
            .arg(per_thread.to_string())
            .env("PARALLAX_BUFFER", buffer)
            .env("PARALLAX_THROTTLE", "off");
        let plain = launch.run(How::Plain, &d.join("none"));
        let calls = n + threads * per_thread;
        for how in [How::Preload, How::Run] {
            let what = format!("{calls} calls, {how:?}");
            let out = d.join(format!("exp-{n}-{how:?}"));
            let o = launch.run(how, &out);
            assert_same(&what, how, &plain, &o, 0);
            let exp = read(&out);
            let p = &exp.processes[0];
            assert!(p.killed(), "{what}");
            assert_eq!(p.locations.len(), 1 + threads, "{what}");
            assert_balanced_up_to_the_kill(p);
            assert_eq!(total_enters(p, "work"), calls, "{what}");
            let leaves: usize = events(p)
                .values()
                .map(|e| {
                    let id = region(p, "work").unwrap();
                    count(e, |k| *k == EventKind::Leave { region: id })
                })
                .sum();
            assert_eq!(leaves, calls, "{what}");
            let r = report_json(&out);
            assert_eq!(r["processes"][0]["killed"], true, "{what}");
            assert!(
                r["warnings"].as_array().unwrap().is_empty(),
                "{what}: {}",
                r["warnings"]
            );
            let flat = r["total"]["flat"].as_array().unwrap();
            let work = flat.iter().find(|x| x["region"] == "work").unwrap();
            assert_eq!(work["count"], calls as u64, "{what}");
        }
    }
}

/// Times never decrease and leaves match enters on every location (the
/// regions open at the kill stay open).
fn assert_balanced_up_to_the_kill(p: &parallax_model::experiment::Process) {
    for (t, evs) in events(p) {
        let mut depth = 0i64;
        for e in &evs {
            match e.kind {
                EventKind::Enter { .. } => depth += 1,
                EventKind::Leave { region } => {
                    depth -= 1;
                    assert_ne!(region, parallax_model::event::UNKNOWN_REGION, "thread {t}");
                }
                _ => {}
            }
            assert!(depth >= 0, "thread {t}: leave without enter");
        }
        assert!(evs.windows(2).all(|w| w[0].time <= w[1].time), "thread {t}");
    }
}

const THREADS_C: &str = r#"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long sum;
__attribute__((noinline)) void work(int i) { __atomic_fetch_add(&sum, i, __ATOMIC_RELAXED); }

static void *worker(void *arg) {
    for (int i = 0; i < 10; i++)
        work(i);
    return arg;
}

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    int hog = argc > 2 && !strcmp(argv[2], "hog");
    work(0);
    /* The program takes every descriptor left before its threads start. */
    int fds[4096], held = 0;
    while (hog && held < 4096 && (fds[held] = open("/dev/null", O_RDONLY)) >= 0)
        held++;
    pthread_t *t = malloc(n * sizeof *t);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            printf("thread %d not created\n", i);
            return 1;
        }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < held; i++)
        close(fds[i]);
    printf("sum=%ld held=%s\n", sum, held > 0 ? "some" : "none");
    return 0;
}
"#;

#[test]
fn few_file_descriptors_and_many_threads() {
    let d = tmp("hostile-fds");
    let exe = build(&d, "threads", THREADS_C);
    let limit = "ulimit -n 64";
    // 400 threads under 64 descriptors: each thread's files take one only
    // while they are written, so every thread is traced.
    let launch = Launch::new(&exe).arg("400").shell(limit);
    let plain = launch.run(How::Plain, &d.join("none"));
    assert_eq!(stdout(&plain), "sum=18000 held=none\n");
    for how in [How::Preload, How::Run] {
        let out = d.join(format!("all-{how:?}"));
        let o = launch.run(how, &out);
        assert_same("400 threads", how, &plain, &o, 0);
        let exp = read(&out);
        let p = &exp.processes[0];
        assert_eq!(p.locations.len(), 401, "{how:?}");
        assert_eq!(total_enters(p, "work"), 4001, "{how:?}");
        assert!(p.unrecorded.is_empty(), "{how:?}: {:?}", p.unrecorded);
    }
    // The program holds every descriptor while its threads run: they
    // cannot be traced; the run says so once, the experiment counts them,
    // and every later command warns.
    let launch = Launch::new(&exe).arg("400").arg("hog").shell(limit);
    let plain = launch.run(How::Plain, &d.join("none"));
    assert_eq!(stdout(&plain), "sum=18000 held=some\n");
    for how in [How::Preload, How::Run] {
        let out = d.join(format!("hog-{how:?}"));
        let o = launch.run(how, &out);
        let said = assert_same("400 threads, no descriptors", how, &plain, &o, 1);
        assert_eq!(said.len(), 1, "{how:?}: said once");
        assert!(said[0].contains("not traced"), "{said:?}");
        let exp = parallax_model::experiment::Experiment::open(&out).unwrap();
        let p = &exp.processes[0];
        let untraced: u64 = p.unrecorded.values().map(|u| u.threads).sum();
        let traced = p.locations.values().filter(|l| l.events.is_some()).count() as u64;
        assert_eq!((traced, untraced), (1, 400), "{how:?}: {:?}", p.unrecorded);
        let warns = |o: &Output| {
            assert!(o.status.success(), "{}", stderr(o));
            format!("{}{}", stdout(o), stderr(o))
        };
        let r = report_json(&out);
        assert_eq!(
            r["processes"][0]["unrecorded"][0]["threads"], 400,
            "{how:?}"
        );
        let w = r["warnings"].as_array().unwrap();
        assert!(
            w.iter()
                .any(|w| w.as_str().unwrap().contains("400 threads were not traced")),
            "{w:?}"
        );
        let text = warns(&parallax().arg("report").arg(&out).output().unwrap());
        assert!(
            text.contains("400 threads were not traced"),
            "report: {text}"
        );
        let text = warns(&parallax().arg("analyze").arg(&out).output().unwrap());
        assert!(
            text.contains("400 threads were not traced"),
            "analyze: {text}"
        );
        let html = d.join(format!("hog-{how:?}.html"));
        let o = parallax()
            .arg("html")
            .arg(&out)
            .arg("--out")
            .arg(&html)
            .output()
            .unwrap();
        assert!(warns(&o).contains("400 threads were not traced"), "html");
    }
}

#[test]
fn bad_settings_are_said_once() {
    let d = tmp("hostile-settings");
    let exe = build(&d, "args", ARGS_C);
    let huge = "x".repeat(100 << 10);
    let plain = Launch::new(&exe).arg("20").run(How::Plain, &d.join("none"));
    // Settings that leave measurement off: said once, whether or not the
    // program ever makes a call that would start measuring.
    for (var, value) in [
        ("PARALLAX_MODE", "bogus"),
        ("PARALLAX_MODE", huge.as_str()),
        ("PARALLAX_BUFFER", "12"),
        ("PARALLAX_CLOCK", "hpet"),
        ("PARALLAX_RANK", "first"),
        ("PARALLAX_CALIBRATE", "maybe"),
        ("PARALLAX_PROFILE_NODES", "-1"),
        ("PARALLAX_OUT", "/proc/version/exp"),
    ] {
        for calls in ["20", "0"] {
            let launch = Launch::new(&exe).arg(calls).env(var, value);
            let plain = launch.run(How::Plain, &d.join("none"));
            let out = d.join("exp");
            let mut launch = launch;
            if var == "PARALLAX_MODE" {
                launch = launch.mode(value);
            }
            let o = launch.run(How::Preload, &out);
            let said = assert_same(var, How::Preload, &plain, &o, 1);
            assert_eq!(said.len(), 1, "{var}: said once");
            let named = if var == "PARALLAX_OUT" {
                "/proc/version"
            } else {
                var
            };
            assert!(said[0].contains(named), "{said:?}");
            assert!(
                said[0].len() < 600,
                "a huge value is cut: {}",
                said[0].len()
            );
            assert!(!out.exists(), "{var}: nothing measured");
        }
    }
    // Settings of the interposition library that fall back to a default:
    // said once, in one line, and the program is measured.
    let launch = Launch::new(&exe)
        .arg("20")
        .env("PARALLAX_THROTTLE", "often")
        .env("PARALLAX_PTHREAD", "some")
        .env("PARALLAX_FILTER_FILE", d.join("no such file"));
    let out = d.join("exp-defaults");
    let o = launch.run(How::Preload, &out);
    let said = assert_same("library settings", How::Preload, &plain, &o, 1);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(work_calls(&out), 20);
    // `parallax run` refuses them before the program starts.
    for (var, value) in [("PARALLAX_CLOCK", "hpet"), ("PARALLAX_BUFFER", "12")] {
        let o = Launch::new(&exe)
            .arg("20")
            .env(var, value)
            .run(How::Run, &d.join("exp-run"));
        assert_eq!(o.status.code(), Some(2), "{var}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "the program did not run");
        assert!(stderr(&o).contains(var), "{}", stderr(&o));
    }
    // A program that a measured one starts with a bad setting says so.
    let script = d.join("start.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nPARALLAX_MODE=bogus exec {} 20\n", exe.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Launch::new(&script).run(How::Run, &d.join("exp-child"));
    let said = assert_same("a child's bad setting", How::Run, &plain, &o, 1);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("PARALLAX_MODE"), "{said:?}");
}

const SIGNALS_C: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile long sum;
__attribute__((noinline)) void work(int i) { sum += i; }

__attribute__((no_instrument_function)) static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* After the program's end (and Parallax's, whose exit handler runs
 * first): the signal is still to come, as it may be during the end. */
__attribute__((no_instrument_function)) static void wait_for_it(void) {
    for (;;)
        pause();
}

__attribute__((no_instrument_function)) static void caught(int sig) {
    (void)sig;
    write(1, "caught\n", 7);
    _exit(7);
}

__attribute__((no_instrument_function)) static void arm(timer_t timer, long us) {
    struct itimerspec at;
    memset(&at, 0, sizeof at);
    at.it_value.tv_sec = us / 1000000;
    at.it_value.tv_nsec = (us % 1000000) * 1000 + 1;
    timer_settime(timer, 0, &at, NULL);
}

/* argv: when ("run": from the start of the loop, "end": from the end of
 * main), signal number (0: SIGTERM to a handler of the program's that
 * calls _exit), delay in microseconds. The loop runs for 100 ms; the
 * signal comes from a timer: during Parallax's start (the first probe sets
 * measurement up and calibrates), the loop and its flushes, or the end
 * (Parallax's exit handler) and after it. */
__attribute__((no_instrument_function)) int main(int argc, char **argv) {
    int end = !strcmp(argv[1], "end");
    int sig = atoi(argv[2]);
    long us = atol(argv[3]);
    atexit(wait_for_it);
    if (sig == 0) {
        signal(SIGTERM, caught);
        sig = SIGTERM;
    }
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = sig;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0)
        return 9;
    printf("ready\n");
    fflush(stdout);
    double t0 = now();
    if (!end)
        arm(timer, us);
    for (int i = 0; now() - t0 < 0.1; i++)
        work(i);
    printf("done\n");
    fflush(stdout);
    if (end)
        arm(timer, us);
    return 0;
}
"#;

#[test]
fn signals_at_every_phase() {
    let d = tmp("hostile-signals");
    let exe = build(&d, "signals", SIGNALS_C);
    // Small buffers: the loop flushes all the time.
    let phases = [
        ("run", 0u64),
        ("run", 200),
        ("run", 1_000),
        ("run", 3_000),
        ("run", 10_000),
        ("run", 25_000),
        ("end", 0),
        ("end", 300),
        ("end", 2_000),
    ];
    let signals = [
        0,
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGSEGV,
        libc::SIGABRT,
        libc::SIGKILL,
        libc::SIGUSR1,
        libc::SIGQUIT,
    ];
    for sig in signals {
        for (when, us) in phases {
            let what = format!("signal {sig} {us} us into the {when}");
            let launch = Launch::new(&exe)
                .arg(when)
                .arg(sig.to_string())
                .arg(us.to_string())
                .env("PARALLAX_BUFFER", "4k")
                .env("PARALLAX_THROTTLE", "off")
                .shell("ulimit -c 0");
            let plain = launch.run(How::Plain, &d.join("none"));
            for how in [How::Preload, How::Run] {
                let out = d.join(format!("exp-{sig}-{when}-{us}-{how:?}"));
                let o = launch.run(how, &out);
                assert_same(&what, how, &plain, &o, 0);
                // What was recorded reads back.
                if out.join("rank-00000").join("defs.pxd").exists() {
                    let r = parallax()
                        .args(["report", "--json"])
                        .arg(&out)
                        .output()
                        .unwrap();
                    assert!(r.status.success(), "{what} ({how:?}): {}", stderr(&r));
                }
            }
        }
    }
}

const LONG_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>

static volatile long sum;
__attribute__((noinline)) void work(int i) { sum += i; }

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    for (int i = 0; i < n; i++)
        work(i);
    printf("sum=%ld\n", sum);
    fprintf(stderr, "program: done\n");
    return 4;
}
"#;

/// Whether `unshare -rm` can mount a file system here (a mount namespace
/// of the test's own); the tests that need it fail loudly without.
fn mount_namespaces() {
    let o = Command::new("unshare")
        .args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"])
        .output()
        .expect("unshare (util-linux) is needed for the file system tests");
    assert!(
        o.status.success(),
        "unshare -rm cannot mount a tmpfs here (user namespaces off?): {}",
        stderr(&o)
    );
}

#[test]
fn full_disk_read_only_directory_and_file_size_limit() {
    mount_namespaces();
    let d = tmp("hostile-disk");
    let exe = build(&d, "long", LONG_C);
    let mnt = d.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let base = Launch::new(&exe)
        .arg("300000")
        .env("PARALLAX_THROTTLE", "off")
        .env("PARALLAX_BUFFER", "16k");
    let plain = base.run(How::Plain, &d.join("none"));
    assert_eq!(plain.status.code(), Some(4));
    let out = mnt.join("exp");
    // A full disk: a 64 KiB file system fills up while the program runs.
    for how in [How::Preload, How::Run] {
        let saved = d.join(format!("full-{how:?}"));
        let launch = base.clone().namespace(
            format!("mount -t tmpfs -o size=64k tmpfs {}", mnt.display()),
            format!("cp -a {} {}", out.display(), saved.display()),
        );
        let o = launch.run(how, &out);
        let said = assert_same("full disk", how, &plain, &o, 1);
        assert_eq!(said.len(), 1, "{how:?}");
        assert!(said[0].contains("No space left on device"), "{said:?}");
        let exp = parallax_model::experiment::Experiment::open(&saved).unwrap();
        let lost: u64 = exp.processes[0].unrecorded.values().map(|u| u.events).sum();
        assert!(lost > 0, "{how:?}: {:?}", exp.processes[0].unrecorded);
        let w = exp.warnings();
        assert!(
            w.iter()
                .any(|w| w.contains("could not be written") && w.contains("No space")),
            "{how:?}: {w:?}"
        );
        let r = parallax()
            .args(["report", "--json"])
            .arg(&saved)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", stderr(&r));
    }
    // A directory nothing can be written to: measurement is off, said once;
    // `parallax run` refuses before the program starts.
    let launch = base.clone().namespace(
        format!("mount -t tmpfs -o ro,size=64k tmpfs {}", mnt.display()),
        String::new(),
    );
    let o = launch.run(How::Preload, &out);
    let said = assert_same("read-only directory", How::Preload, &plain, &o, 1);
    assert_eq!(said.len(), 1);
    assert!(said[0].contains("Read-only file system"), "{said:?}");
    let o = launch.run(How::Run, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "the program did not run");
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
    // The file size limit (ulimit -f, 512-byte blocks): no write crosses
    // it (its SIGXFSZ would kill the program); what does not fit is
    // counted.
    for how in [How::Preload, How::Run] {
        let out = d.join(format!("fsize-{how:?}"));
        let launch = base.clone().shell("ulimit -f 128");
        let plain = launch.run(How::Plain, &d.join("none"));
        let o = launch.run(how, &out);
        let said = assert_same("file size limit", how, &plain, &o, 1);
        assert_eq!(said.len(), 1, "{how:?}");
        assert!(said[0].contains("ulimit -f"), "{said:?}");
        let exp = parallax_model::experiment::Experiment::open(&out).unwrap();
        let lost: u64 = exp.processes[0].unrecorded.values().map(|u| u.events).sum();
        assert!(lost > 0, "{how:?}");
        for e in std::fs::read_dir(out.join("rank-00000")).unwrap() {
            let len = e.unwrap().metadata().unwrap().len();
            assert!(len <= 128 * 512, "a file of {len} bytes");
        }
    }
}
