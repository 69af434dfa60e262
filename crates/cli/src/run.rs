//! `parallax run -- CMD ARGS...`: run a program under measurement.
//!
//! An unmodified, dynamically linked program is measured by loading the
//! interposition library (`libparallax_preload.so`) into it with
//! `LD_PRELOAD`; a program linked with the `parallax` crate measures
//! itself. Both read the `PARALLAX_*` variables set here. MPI jobs work
//! both ways round:
//!
//! - `parallax run -- mpirun -np 4 ./app`: the launcher is not measured,
//!   the ranks it starts are, into one experiment;
//! - `mpirun -np 4 parallax run -- ./app`: each rank runs its own
//!   `parallax run`; they agree on one experiment directory, named after
//!   the launcher's job id unless `--out` is given. Rank 0 prepares the
//!   directory, writes the manifest and prints the report.
//!
//! See docs/interposition.md.

mod elf;
mod signals;
mod symbols;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use parallax::Mode;
use parallax_model::experiment::{Experiment, Process};

use crate::console;
use crate::demo::parse_mode;
use crate::experiment_dir;
use crate::runner::{self, Runner};

/// Arguments of `parallax run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to record.
    #[arg(long, default_value = "both", value_parser = parse_mode)]
    pub mode: Mode,
    /// Experiment directory [default: parallax-<program>-<date>-<time>, or
    /// parallax-<program>-job-<id> under an MPI launcher].
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Trace buffer per thread, e.g. 4m.
    #[arg(long)]
    pub buffer: Option<String>,
    /// How probes read the clock: tsc (the cheapest), tsc-fenced (a probe's
    /// cost depends less on the code around it and stays closer to its
    /// calibration: for runs to be compensated; about twice the cost) or
    /// monotonic [default: tsc where the CPU has an invariant one].
    #[arg(long, value_parser = ["tsc", "tsc-fenced", "monotonic"])]
    pub clock: Option<String>,
    /// Do not print the report when the program ends.
    #[arg(long)]
    pub no_report: bool,
    /// When to colour the report.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: crate::launcher::Color,
    /// Do not measure the processes the program starts (fork, exec);
    /// by default each is measured as a process of its own.
    #[arg(long)]
    pub no_children: bool,
    /// Measure only compiler-instrumented functions whose name matches
    /// PATTERN (`*` and `?` wildcards; repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
    /// Do not measure compiler-instrumented functions whose name matches
    /// PATTERN (repeatable; applies after --include).
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// A file of `include PATTERN` / `exclude PATTERN` lines.
    #[arg(long, value_name = "FILE")]
    pub filter_file: Option<PathBuf>,
    /// Stop measuring a function once a thread called it CALLS times at
    /// under MICROSECONDS per call, or `off` [default: 100000:10].
    #[arg(long, value_name = "CALLS:MICROSECONDS")]
    pub throttle: Option<String>,
    /// Which POSIX-thread calls are recorded: those the application makes
    /// (`app`), `all` (also those of MPI and other system libraries), `off`.
    #[arg(long, value_parser = ["app", "all", "off"])]
    pub pthread: Option<String>,
    #[command(flatten)]
    pub db: crate::db::Target,
    /// The program and its arguments (any bytes: they are passed on as
    /// they are).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

/// Programs that start the measured program rather than being it.
const LAUNCHERS: &[&str] = &[
    "mpirun",
    "mpiexec",
    "orterun",
    "oshrun",
    "shmemrun",
    "prterun",
    "mpiexec.hydra",
    "mpiexec.openmpi",
    "mpirun.openmpi",
    "mpiexec.mpich",
    "mpirun.mpich",
    "srun",
];

/// Where this process is, if an MPI launcher started it: (rank, ranks,
/// job id).
struct UnderLauncher {
    rank: u32,
    ranks: Option<u32>,
    job: String,
}

fn under_launcher() -> Option<UnderLauncher> {
    let var = |names: &[&str]| names.iter().find_map(|n| std::env::var(n).ok());
    let rank = crate::launcher::rank()?;
    let ranks = var(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"])
        .and_then(|s| s.trim().parse().ok());
    let job = var(&["OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "PMI_JOBID"])
        .or_else(|| {
            Some(format!(
                "{}.{}",
                std::env::var("SLURM_JOB_ID").ok()?,
                std::env::var("SLURM_STEP_ID").unwrap_or_default()
            ))
        })
        .unwrap_or_else(|| {
            // The launcher (or its daemon) is the parent of every local rank.
            format!("ppid{}", std::os::unix::process::parent_id())
        });
    Some(UnderLauncher { rank, ranks, job })
}

/// The path of program `name`, searched on PATH if it has no slash.
fn find_program(name: &OsStr) -> Option<PathBuf> {
    if name.as_encoded_bytes().contains(&b'/') {
        let p = PathBuf::from(name);
        return p.exists().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A program that cannot start, and the exit status a shell (and `env`)
/// gives for it: 127 if there is no such program, 126 if it is there but
/// cannot be run. `parallax run` exits with it.
#[derive(Debug)]
pub struct CannotStart {
    pub message: String,
    pub status: u8,
}

impl std::fmt::Display for CannotStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CannotStart {}

fn cannot_start(status: u8, message: String) -> anyhow::Error {
    CannotStart { message, status }.into()
}

/// Fails early, with a clear message, for a program that cannot start.
fn check_runnable(program: &OsStr) -> anyhow::Result<PathBuf> {
    let Some(path) = find_program(program) else {
        let program = program.to_string_lossy();
        if program.contains('/') {
            return Err(cannot_start(
                127,
                format!("cannot run `{program}`: no such file"),
            ));
        }
        let hint = if LAUNCHERS.contains(&program.as_ref()) {
            " (is MPI installed? On Debian: apt-get install openmpi-bin)"
        } else {
            ""
        };
        return Err(cannot_start(
            127,
            format!("cannot run `{program}`: not found on PATH{hint}"),
        ));
    };
    let program = program.to_string_lossy();
    let meta = std::fs::metadata(&path)
        .map_err(|e| cannot_start(126, format!("cannot run `{program}`: {e}")))?;
    if !meta.is_file() {
        return Err(cannot_start(
            126,
            format!("cannot run `{program}`: not a file"),
        ));
    }
    if !is_executable_file(&path) {
        return Err(cannot_start(
            126,
            format!("cannot run `{program}`: not executable (chmod +x?)"),
        ));
    }
    Ok(path)
}

/// The program a launcher command starts: the first argument after the
/// launcher that names an executable file.
fn launched_program(args: &[OsString]) -> Option<PathBuf> {
    args.iter()
        .filter(|a| !a.as_encoded_bytes().starts_with(b"-"))
        .filter_map(|a| find_program(a))
        .find(|p| is_executable_file(p))
}

/// The interposition library: `PARALLAX_PRELOAD`, else next to this
/// executable (target/<profile>/ in a build tree) or in ../lib.
pub(crate) fn preload_library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PARALLAX_PRELOAD") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.join("libparallax_preload.so"),
        dir.join("../lib/libparallax_preload.so"),
        dir.join("../lib/parallax/libparallax_preload.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// How the program will be measured.
enum Measure {
    /// Through the interposition library at this path.
    Preload(PathBuf),
    /// By the runtime linked into the program.
    Linked,
}

/// Decides how to measure `target` (the program, or what a launcher runs),
/// refusing what cannot be measured.
fn plan(target: &Path, shown: &str) -> anyhow::Result<Measure> {
    let kind = elf::inspect(target).with_context(|| format!("cannot read `{shown}`"))?;
    let (needed, runpath) = match kind {
        elf::Kind::Static => bail!(
            "`{shown}` is statically linked: LD_PRELOAD cannot measure it. Link it \
             dynamically (no -static), or link it with the `parallax` crate"
        ),
        elf::Kind::Unknown => bail!(
            "cannot run `{shown}`: not an executable program (neither an ELF executable \
             nor a #! script)"
        ),
        elf::Kind::Dynamic {
            has_runtime: true, ..
        } => return Ok(Measure::Linked),
        elf::Kind::Dynamic {
            needed, runpath, ..
        } => (needed, runpath),
        elf::Kind::Script => (Vec::new(), Vec::new()),
    };
    let lib = preload_library().ok_or_else(|| {
        anyhow::anyhow!(
            "cannot find libparallax_preload.so next to this parallax executable; build it \
             (cargo build -p parallax-preload) or set PARALLAX_PRELOAD"
        )
    })?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let dirs = elf::library_dirs(dir, &runpath);
    for lib_name in needed
        .iter()
        .filter(|n| n.starts_with("libmpi") || n.starts_with("liboshmem"))
    {
        if !dirs.iter().any(|d| d.join(lib_name).exists()) {
            bail!(
                "`{shown}` needs {lib_name}, which is not installed (is MPI installed? On \
                 Debian: apt-get install libopenmpi3 openmpi-bin)"
            );
        }
        // The wrappers' names are in the library's dynamic string table.
        let model: &[u8] = if lib_name.starts_with("libmpi") {
            b"\0MPI_Init\0"
        } else {
            b"\0shmem_init\0"
        };
        let text = std::fs::read(&lib).unwrap_or_default();
        if !elf::contains(&text, model) {
            console::warn(&format!(
                "`{shown}` uses {lib_name}, but {} was built without its wrappers (no \
                 mpicc/oshcc when it was built): those calls are not measured",
                lib.display()
            ));
        }
    }
    Ok(Measure::Preload(lib))
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let program = &a.command[0];
    // The command as text, for messages, the manifest and the database.
    let shown_command: Vec<String> = a
        .command
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let name = PathBuf::from(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    let path = check_runnable(program)?;
    let exe_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let launcher = LAUNCHERS.contains(&name.as_str()) || LAUNCHERS.contains(&exe_name.as_str());
    let (target, shown) = if launcher {
        match launched_program(&a.command[1..]) {
            Some(p) => {
                let s = p.to_string_lossy().into_owned();
                (p, s)
            }
            None => bail!(
                "cannot find the program that `{}` starts",
                shown_command.join(" ")
            ),
        }
    } else {
        (path.clone(), shown_command[0].clone())
    };
    let measure = plan(&target, &shown)?;
    let app_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(name.clone());

    let job = under_launcher();
    let out = match (&a.out, &job) {
        (Some(o), _) => o.clone(),
        (None, Some(j)) => PathBuf::from(format!("parallax-{app_name}-job-{}", sanitize(&j.job))),
        (None, None) => crate::default_dir(&app_name),
    };
    let prepared = match &job {
        None => Some(experiment_dir::prepare(&out)?),
        Some(j) => agree_on_directory(&out, j)?,
    };
    let out = std::fs::canonicalize(&out).unwrap_or(out);

    let mut cmd = Command::new(program);
    cmd.args(&a.command[1..])
        .env("PARALLAX_MODE", a.mode.name())
        .env("PARALLAX_OUT", &out)
        .env("PARALLAX_CHILDREN", if a.no_children { "0" } else { "1" })
        .env_remove("PARALLAX_PARENT_PID");
    if let Some(b) = &a.buffer {
        cmd.env("PARALLAX_BUFFER", b);
    }
    if let Some(c) = &a.clock {
        cmd.env("PARALLAX_CLOCK", c);
    }
    if !a.include.is_empty() {
        cmd.env("PARALLAX_FILTER_INCLUDE", a.include.join(","));
    }
    if !a.exclude.is_empty() {
        cmd.env("PARALLAX_FILTER_EXCLUDE", a.exclude.join(","));
    }
    if let Some(f) = &a.filter_file {
        let f = std::fs::canonicalize(f)
            .with_context(|| format!("cannot read the filter file {}", f.display()))?;
        cmd.env("PARALLAX_FILTER_FILE", f);
    }
    if let Some(t) = &a.throttle {
        cmd.env("PARALLAX_THROTTLE", t);
    }
    if let Some(p) = &a.pthread {
        cmd.env("PARALLAX_PTHREAD", p);
    }
    // A setting the runtime would refuse (its own, or one inherited from
    // this environment) is refused here, before the program starts.
    parallax::Config::from_lookup(|k| match cmd.get_envs().find(|(key, _)| *key == k) {
        Some((_, v)) => v.map(|v| v.to_string_lossy().into_owned()),
        None => std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()),
    })
    .map_err(|e| anyhow::anyhow!("cannot measure `{}`: {e}", shown_command[0]))?;
    let how = match &measure {
        Measure::Preload(lib) => {
            let mut v = lib.as_os_str().to_os_string();
            if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
                v.push(":");
                v.push(old);
            }
            cmd.env("LD_PRELOAD", v);
            "interposition"
        }
        Measure::Linked => "linked runtime",
    };
    let lead = job.as_ref().is_none_or(|j| j.rank == 0);
    let meta = |status: &str, wall_s: Option<f64>| parallax_db::RunMeta {
        program: app_name.clone(),
        command: shown_command.clone(),
        status: status.to_string(),
        wall_s,
        runner: Some(Runner::current().to_json().to_string()),
        ..Default::default()
    };
    // From here on the run exists: its manifest and record say "running"
    // until the program has ended, so that a killed `parallax run` leaves
    // both behind, reading as killed.
    let previous = prepared.as_ref().and_then(|p| p.previous());
    let mut begun = None;
    if lead {
        console::note(&format!(
            "measuring `{}` ({}, {how}) into {}",
            parallax_output::text::inert(&shown_command.join(" ")),
            a.mode.name(),
            out.display()
        ));
        if let Err(e) =
            experiment_dir::write_manifest(&out, &shown_command, runner::RUNNING, 0.0, previous)
        {
            console::warn(&format!("{e:#}"));
        }
        begun = crate::db::begin(&a.db, &out, meta(runner::RUNNING, None));
    }
    signals::catch();
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let status = format!("could not start: {e}");
            if lead {
                let _ = experiment_dir::write_manifest(&out, &shown_command, &status, 0.0, None);
                crate::db::finish(&a.db, begun, None, None, None, meta(&status, None));
            }
            // `prepared` puts the previous experiment back.
            return Err(e).with_context(|| format!("cannot run `{}`", shown_command[0]));
        }
    };
    let pid = child.id();
    signals::forward_to(pid);
    let status = wait(&mut child);
    signals::stop_forwarding();
    let wall = started.elapsed().as_secs_f64();
    let code = status.as_ref().map_or(ExitCode::FAILURE, exit_code);
    let ended = Ended {
        status: status.as_ref().map_or_else(
            |e| format!("unknown: cannot wait for the program: {e}"),
            describe,
        ),
        wall,
        pid,
    };
    // Whatever fails now is Parallax's: a message, never the exit status.
    let finishing = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let ctx = Finish {
            a: &a,
            command: &shown_command,
            out: &out,
            name: &name,
            target: &target,
            job: job.as_ref(),
            lead,
            mpi: launcher || job.is_some(),
            prepared,
            begun,
            meta: &meta,
        };
        ctx.finish(&ended)
    }));
    match finishing {
        Ok(Ok(())) => {}
        Ok(Err(e)) if console::is_broken_pipe(&e) => {}
        Ok(Err(e)) => console::note(&format!("{e:#}")),
        // The panic's message is out already.
        Err(_) => console::note("the run's summary is incomplete (see above)"),
    }
    Ok(code)
}

/// Waits for the program, through interruptions.
fn wait(child: &mut std::process::Child) -> std::io::Result<std::process::ExitStatus> {
    loop {
        match child.wait() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// How the program ended.
struct Ended {
    status: String,
    wall: f64,
    pid: u32,
}

/// What finishing a run needs.
struct Finish<'a, M> {
    a: &'a Args,
    /// The command, as shown (arguments that are not UTF-8 made lossy).
    command: &'a [String],
    out: &'a Path,
    name: &'a str,
    target: &'a Path,
    job: Option<&'a UnderLauncher>,
    lead: bool,
    /// Whether the MPI library's version is recorded.
    mpi: bool,
    prepared: Option<experiment_dir::Prepared>,
    begun: Option<crate::db::Begun>,
    meta: &'a M,
}

impl<M: Fn(&str, Option<f64>) -> parallax_db::RunMeta> Finish<'_, M> {
    /// After the program: the manifest and the record get how it ended,
    /// the functions are named, and the report is printed.
    fn finish(self, ended: &Ended) -> anyhow::Result<()> {
        let (a, out, status) = (self.a, self.out, ended.status.as_str());
        let manifest = || {
            if let Err(e) =
                experiment_dir::write_manifest(out, self.command, status, ended.wall, None)
            {
                console::warn(&format!("{e:#}"));
            }
        };
        if self.lead {
            // First the status, in case this process is killed next (an MPI
            // launcher ending the job sends SIGKILL soon after SIGTERM).
            manifest();
            // The new experiment exists: the previous one goes.
            if let Some(p) = self.prepared {
                p.commit();
            }
        }
        let hurried = signals::received().is_some();
        // Name the instrumented functions: every process here, or under a
        // launcher this rank's own (rank 0 also takes the child processes).
        if let Some(j) = self.job {
            if j.rank == 0 && !hurried {
                wait_for_ranks(out, j.ranks.unwrap_or(1));
            }
        }
        let mine = |p: &Process| match self.job {
            None => true,
            Some(j) => {
                p.info.as_ref().is_some_and(|i| i.pid == ended.pid)
                    || (j.rank == 0 && p.rank >= j.ranks.unwrap_or(1))
            }
        };
        if !hurried {
            if let Some(s) = symbols::resolve_experiment(out, mine) {
                // Said once per run, as the other messages: every rank's
                // would read alike.
                if self.lead {
                    console::note(&s);
                }
            }
        }
        if !self.lead {
            return Ok(());
        }
        console::note(&format!(
            "`{}` ended ({status}) after {:.2} s",
            self.name, ended.wall
        ));
        let mut meta = (self.meta)(status, Some(ended.wall));
        meta.mpi = (self.mpi && !hurried).then(mpi_version).flatten();
        let exp = match Experiment::open(out) {
            Ok(exp) => exp,
            Err(_) => {
                crate::db::finish(&a.db, self.begun, None, None, None, meta);
                console::note(&format!(
                    "`{}` recorded nothing: it made no call that Parallax measures (build it with \
                     -finstrument-functions for its functions; threads, MPI and OpenSHMEM calls \
                     are measured as they are)",
                    self.name
                ));
                return Ok(());
            }
        };
        // With the processes the other ranks finished meanwhile.
        manifest();
        for p in &exp.processes {
            for (k, v) in &p.properties {
                if k == "throttled" {
                    console::note(&format!("rank {}: throttled {v}", p.rank));
                }
            }
        }
        let prof = if a.no_report || hurried {
            None
        } else {
            Some(parallax_analysis::executor::Executor::pool().load_profile(&exp)?)
        };
        // Recorded before the report, which a closed pipe cuts short.
        crate::db::finish(
            &a.db,
            self.begun,
            Some(&exp),
            prof.as_ref(),
            Some(self.target),
            meta,
        );
        if let Some(p) = &prof {
            console::out(&crate::report::text(&exp, p, 10, false, a.color.paint()))?;
        }
        console::note(&format!(
            "experiment in {} (`parallax report {}` for all locations)",
            out.display(),
            out.display()
        ));
        Ok(())
    }
}

/// The MPI library's version as its launcher reports it (first line of
/// `mpirun --version`), for the run database.
fn mpi_version() -> Option<String> {
    let o = Command::new("mpirun").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().find(|l| !l.trim().is_empty())?.trim();
    Some(line.to_string())
}

/// A job id as part of a directory name.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Under a launcher: rank 0 prepares the directory and marks it with the
/// job id; the other ranks wait for that mark, so that nobody writes into a
/// directory that is about to be emptied.
fn agree_on_directory(
    out: &Path,
    j: &UnderLauncher,
) -> anyhow::Result<Option<experiment_dir::Prepared>> {
    let marker = out.join(experiment_dir::JOB_MARKER);
    if j.rank == 0 {
        let prepared = experiment_dir::prepare(out)?;
        parallax_output::file::write(&marker, experiment_dir::JOB_MARKER_KIND, j.job.as_bytes())
            .with_context(|| format!("cannot write {}", marker.display()))?;
        return Ok(Some(prepared));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if parallax_model::file::read_text(&marker, 4096).is_ok_and(|s| s == j.job) {
            return Ok(None);
        }
        if Instant::now() > deadline {
            bail!(
                "rank {}: rank 0 did not prepare {} for this job within 120 s (does rank 0 run \
                 `parallax run` with the same --out?)",
                j.rank,
                out.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Rank 0 waits (a few seconds at most) for the processes of ranks below
/// `ranks` to finish writing, so that the report sees them all.
fn wait_for_ranks(out: &Path, ranks: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let done = Experiment::open(out).is_ok_and(|e| {
            (0..ranks).all(|r| {
                e.processes
                    .iter()
                    .any(|p| p.rank == r && p.end_unix_ns.is_some())
            })
        });
        if done {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn describe(s: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "unknown status".into(),
    }
}

/// The program's own exit code, or 128 + signal as a shell would report.
fn exit_code(s: &std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(sig)) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
        _ => ExitCode::FAILURE,
    }
}
