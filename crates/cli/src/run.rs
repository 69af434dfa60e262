//! `parallax run -- CMD ARGS...`: run a program under measurement.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{bail, Context};

use parallax::Mode;
use parallax_analysis::profile::ExperimentProfile;
use parallax_model::experiment::Experiment;

use crate::demo::parse_mode;
use crate::experiment_dir;

/// Arguments of `parallax run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to record.
    #[arg(long, default_value = "both", value_parser = parse_mode)]
    pub mode: Mode,
    /// Experiment directory [default: parallax-<program>-<date>-<time>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Trace buffer per thread, e.g. 4m.
    #[arg(long)]
    pub buffer: Option<String>,
    /// Do not print the report when the program ends.
    #[arg(long)]
    pub no_report: bool,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let program = &a.command[0];
    let name = PathBuf::from(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".into());
    check_runnable(program)?;
    let out = a.out.clone().unwrap_or_else(|| crate::default_dir(&name));
    experiment_dir::prepare(&out)?;
    let out = std::fs::canonicalize(&out).unwrap_or(out);
    let mut cmd = Command::new(program);
    cmd.args(&a.command[1..])
        .env("PARALLAX_MODE", a.mode.name())
        .env("PARALLAX_OUT", &out);
    if let Some(b) = &a.buffer {
        cmd.env("PARALLAX_BUFFER", b);
    }
    eprintln!(
        "parallax: measuring `{}` ({}) into {}",
        a.command.join(" "),
        a.mode.name(),
        out.display()
    );
    let started = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("cannot run `{program}`"))?;
    let wall = started.elapsed().as_secs_f64();
    let status_text = describe(&status);
    experiment_dir::write_manifest(&out, &a.command, &status_text, wall)?;
    eprintln!("parallax: `{name}` ended ({status_text}) after {wall:.2} s");
    match Experiment::open(&out) {
        Ok(exp) => {
            if !a.no_report {
                let prof = ExperimentProfile::load(&exp)?;
                crate::out(&crate::report::text(&exp, &prof, 10, false))?;
            }
            eprintln!("parallax: experiment in {} (`parallax report {}` for all locations)", out.display(), out.display());
        }
        Err(_) => eprintln!(
            "parallax: `{name}` recorded nothing. Programs measured this way must be linked with the \
             `parallax` crate (which reads the PARALLAX_* variables set here)."
        ),
    }
    Ok(exit_code(&status))
}

/// Fails early, with a clear message, for a program that cannot start.
fn check_runnable(program: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        match std::env::var_os("PATH").map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(program))
                .find(|c| c.is_file())
        }) {
            Some(Some(p)) => p,
            _ => bail!("cannot run `{program}`: not found on PATH"),
        }
    };
    let meta =
        std::fs::metadata(&path).map_err(|e| anyhow::anyhow!("cannot run `{program}`: {e}"))?;
    if !meta.is_file() {
        bail!("cannot run `{program}`: not a file");
    }
    if meta.permissions().mode() & 0o111 == 0 {
        bail!("cannot run `{program}`: not executable (chmod +x?)");
    }
    Ok(())
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
