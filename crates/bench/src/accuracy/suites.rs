//! The kernels of the `user` and `openmp` suites of `parallax-bench
//! accuracy` (accuracy/user.rs runs them): the programs of workloads/user,
//! their sizes, and the settings they are measured with.

/// How a kernel's program synchronizes: which probes of the interposition
/// library it exercises besides the compiler's hooks.
#[derive(Clone, Copy, Debug)]
pub(super) enum ProbePath {
    Hooks,
    Pthread,
    Mpi,
    MpiThreads,
    OpenMp,
}

impl ProbePath {
    pub(super) fn name(self) -> &'static str {
        match self {
            ProbePath::Hooks => "hooks",
            ProbePath::Pthread => "pthread",
            ProbePath::Mpi => "mpi",
            ProbePath::MpiThreads => "mpi+threads",
            ProbePath::OpenMp => "openmp",
        }
    }
}

/// A suite: its kernels, the settings each is measured with (a name and
/// the options of `parallax run`), the options of `parallax compensate`,
/// and the program without hooks whose whole-run overhead is timed.
pub(super) struct Suite {
    pub(super) name: &'static str,
    pub(super) specs: &'static [Spec],
    pub(super) settings: &'static [(&'static str, &'static [&'static str])],
    pub(super) compensate: &'static [&'static str],
    pub(super) overhead_program: Option<&'static str>,
}

pub(super) const USER: Suite = Suite {
    name: "user",
    specs: SPECS,
    settings: SETTINGS,
    compensate: &[],
    overhead_program: None,
};

pub(super) const OPENMP: Suite = Suite {
    name: "openmp",
    specs: OPENMP_SPECS,
    settings: &[("default", &[])],
    compensate: &["--liberal=loops"],
    overhead_program: Some("openmp_plain"),
};

const fn omp(kernel: &'static str, pilot: u64) -> Spec {
    Spec {
        program: "openmp",
        kernel,
        language: "c",
        path: ProbePath::OpenMp,
        granularity: None,
        ranks: 0,
        pilot,
    }
}

/// The kernels of the `openmp` suite.
const OPENMP_SPECS: &[Spec] = &[
    omp("static", 40),
    omp("dynamic", 60),
    omp("ordered", 80),
    omp("critical", 100),
];

/// One kernel of the suite.
pub(super) struct Spec {
    /// The program in workloads/user (its Makefile target).
    pub(super) program: &'static str,
    /// Its first argument.
    pub(super) kernel: &'static str,
    pub(super) language: &'static str,
    pub(super) path: ProbePath,
    /// fine, medium or coarse, for the sequential kernels.
    pub(super) granularity: Option<&'static str>,
    /// MPI ranks (0: not an MPI program).
    pub(super) ranks: usize,
    /// The size of the pilot run (its second argument), which the kernel's
    /// size is scaled from: about 0.05-0.2 s here.
    pub(super) pilot: u64,
}

const fn seq(
    program: &'static str,
    language: &'static str,
    grain: &'static str,
    pilot: u64,
) -> Spec {
    Spec {
        program,
        kernel: grain,
        language,
        path: ProbePath::Hooks,
        granularity: Some(grain),
        ranks: 0,
        pilot,
    }
}

/// The kernels, in the order they run.
const SPECS: &[Spec] = &[
    seq("seq_c", "c", "fine", 1_500_000),
    seq("seq_c", "c", "medium", 1_500_000),
    seq("seq_c", "c", "coarse", 300_000),
    seq("seq_cpp", "c++", "fine", 1_500_000),
    seq("seq_cpp", "c++", "medium", 1_500_000),
    seq("seq_cpp", "c++", "coarse", 300_000),
    seq("seq_f90", "fortran", "fine", 1_500_000),
    seq("seq_f90", "fortran", "medium", 1_500_000),
    seq("seq_f90", "fortran", "coarse", 300_000),
    Spec {
        program: "threads",
        kernel: "barrier",
        language: "c",
        path: ProbePath::Pthread,
        granularity: None,
        ranks: 0,
        pilot: 2_000,
    },
    Spec {
        program: "threads",
        kernel: "mutex",
        language: "c",
        path: ProbePath::Pthread,
        granularity: None,
        ranks: 0,
        pilot: 20_000,
    },
    Spec {
        program: "threads",
        kernel: "condvar",
        language: "c",
        path: ProbePath::Pthread,
        granularity: None,
        ranks: 0,
        pilot: 20_000,
    },
    Spec {
        program: "mpi",
        kernel: "p2p",
        language: "c",
        path: ProbePath::Mpi,
        granularity: None,
        ranks: 2,
        pilot: 400,
    },
    Spec {
        program: "mpi",
        kernel: "coll",
        language: "c",
        path: ProbePath::Mpi,
        granularity: None,
        ranks: 2,
        pilot: 400,
    },
    Spec {
        program: "hybrid",
        kernel: "forkjoin",
        language: "c",
        path: ProbePath::MpiThreads,
        granularity: None,
        ranks: 2,
        pilot: 50,
    },
];

/// The settings every kernel is measured with: a name and the options of
/// `parallax run`.
const SETTINGS: &[(&str, &[&str])] = &[("default", &[]), ("throttle-off", &["--throttle", "off"])];
