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
mod symbols;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use parallax::Mode;
use parallax_analysis::profile::ExperimentProfile;
use parallax_model::experiment::{Experiment, Process};

use crate::demo::parse_mode;
use crate::experiment_dir;

/// Arguments of `parallax run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to record.
    #[arg(long, default_value = "both", value_parser = parse_mode)]
    pub mode: Mode,
    /// Experiment directory [default: parallax-<program>-<date>-<time>, or
    /// parallax-<program>-job-<id> under an MPI launcher].
    #[arg(long)]
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
    let rank = var(&[
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "SLURM_PROCID",
    ])?;
    let rank = rank.trim().parse().ok()?;
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

/// Fails early, with a clear message, for a program that cannot start.
fn check_runnable(program: &OsStr) -> anyhow::Result<PathBuf> {
    let Some(path) = find_program(program) else {
        let program = program.to_string_lossy();
        if program.contains('/') {
            bail!("cannot run `{program}`: no such file");
        }
        let hint = if LAUNCHERS.contains(&program.as_ref()) {
            " (is MPI installed? On Debian: apt-get install openmpi-bin)"
        } else {
            ""
        };
        bail!("cannot run `{program}`: not found on PATH{hint}");
    };
    let program = program.to_string_lossy();
    let meta =
        std::fs::metadata(&path).map_err(|e| anyhow::anyhow!("cannot run `{program}`: {e}"))?;
    if !meta.is_file() {
        bail!("cannot run `{program}`: not a file");
    }
    if !is_executable_file(&path) {
        bail!("cannot run `{program}`: not executable (chmod +x?)");
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
fn preload_library() -> Option<PathBuf> {
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
            eprintln!(
                "parallax: warning: `{shown}` uses {lib_name}, but {} was built without its \
                 wrappers (no mpicc/oshcc when it was built): those calls are not measured",
                lib.display()
            );
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
    match &job {
        None => experiment_dir::prepare(&out)?,
        Some(j) => agree_on_directory(&out, j)?,
    }
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
    if lead {
        eprintln!(
            "parallax: measuring `{}` ({}, {how}) into {}",
            shown_command.join(" "),
            a.mode.name(),
            out.display()
        );
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run `{}`", shown_command[0]))?;
    let pid = child.id();
    let status = child
        .wait()
        .with_context(|| format!("cannot wait for `{}`", shown_command[0]))?;
    let wall = started.elapsed().as_secs_f64();
    let status_text = describe(&status);

    // Name the instrumented functions: every process here, or under a
    // launcher this rank's own (rank 0 also takes the child processes).
    if let Some(j) = &job {
        if j.rank == 0 {
            wait_for_ranks(&out, j.ranks.unwrap_or(1));
        }
    }
    let mine = |p: &Process| match &job {
        None => true,
        Some(j) => {
            p.info.as_ref().is_some_and(|i| i.pid == pid)
                || (j.rank == 0 && p.rank >= j.ranks.unwrap_or(1))
        }
    };
    if let Some(s) = symbols::resolve_experiment(&out, mine) {
        eprintln!("parallax: {s}");
    }
    if !lead {
        return Ok(exit_code(&status));
    }
    // From here on nothing may change the program's exit status: a step
    // that fails (a full disk) is a warning.
    if let Err(e) = experiment_dir::write_manifest(&out, &shown_command, &status_text, wall) {
        eprintln!("parallax: warning: {e:#}");
    }
    eprintln!("parallax: `{name}` ended ({status_text}) after {wall:.2} s");
    let meta = parallax_db::RunMeta {
        program: app_name.clone(),
        command: shown_command.clone(),
        status: status_text.clone(),
        wall_s: Some(wall),
        mpi: (launcher || job.is_some()).then(mpi_version).flatten(),
        ..Default::default()
    };
    if let Err(e) = after_run(&a, &out, &name, &target, meta) {
        eprintln!("parallax: warning: {e:#}");
    }
    Ok(exit_code(&status))
}

/// Reads the experiment after the run: throttled functions, the run
/// database, the report.
fn after_run(
    a: &Args,
    out: &Path,
    name: &str,
    target: &Path,
    meta: parallax_db::RunMeta,
) -> anyhow::Result<()> {
    match Experiment::open(out) {
        Ok(exp) => {
            for p in &exp.processes {
                for (k, v) in &p.properties {
                    if k == "throttled" {
                        eprintln!("parallax: rank {}: throttled {v}", p.rank);
                    }
                }
            }
            let prof = if a.no_report {
                None
            } else {
                Some(ExperimentProfile::load(&exp)?)
            };
            // Recorded before the report, which a closed pipe cuts short.
            crate::db::record(&a.db, &exp, prof.as_ref(), Some(target), meta);
            if let Some(p) = &prof {
                crate::out(&crate::report::text(&exp, p, 10, false))?;
            }
            eprintln!(
                "parallax: experiment in {} (`parallax report {}` for all locations)",
                out.display(),
                out.display()
            );
        }
        Err(_) => eprintln!(
            "parallax: `{name}` recorded nothing: it made no call that Parallax measures \
             (build it with -finstrument-functions for its functions; threads, MPI and \
             OpenSHMEM calls are measured as they are)"
        ),
    }
    Ok(())
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

/// Marker of the job that prepared an experiment directory.
const JOB_MARKER: &str = ".parallax-job";

/// Under a launcher: rank 0 prepares the directory and marks it with the
/// job id; the other ranks wait for that mark, so that nobody writes into a
/// directory that is about to be emptied.
fn agree_on_directory(out: &Path, j: &UnderLauncher) -> anyhow::Result<()> {
    let marker = out.join(JOB_MARKER);
    if j.rank == 0 {
        experiment_dir::prepare(out)?;
        std::fs::write(&marker, &j.job)
            .with_context(|| format!("cannot write {}", marker.display()))?;
        return Ok(());
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if std::fs::read_to_string(&marker).is_ok_and(|s| s == j.job) {
            return Ok(());
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
