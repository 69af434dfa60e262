//! Running under an MPI launcher (`mpirun -np 4 parallax ...`): which rank
//! this process is, so that what is said once per run is said once (by
//! rank 0), and whether its output may be coloured.

use parallax_report::term::{colour_stdout, Paint};

/// The rank an MPI launcher gave this process, if one started it.
pub fn rank() -> Option<u32> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|n| std::env::var(n).ok())
    .and_then(|r| r.trim().parse().ok())
}

/// Whether this process speaks for the run: not started by a launcher, or
/// its rank 0.
pub fn speaks() -> bool {
    rank().is_none_or(|r| r == 0)
}

/// `--color`: when text output is coloured.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Color {
    /// When stdout is a terminal, `NO_COLOR` is unset and no MPI launcher
    /// started this process (a launcher hands its ranks a terminal of its
    /// own even when its output goes to a file).
    #[default]
    Auto,
    /// Always, also into a file or a pipe.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// The styles this choice gives stdout.
    pub fn paint(self) -> Paint {
        match self {
            Color::Always => Paint::new(true),
            Color::Never => Paint::plain(),
            Color::Auto => Paint::new(rank().is_none() && colour_stdout()),
        }
    }
}
