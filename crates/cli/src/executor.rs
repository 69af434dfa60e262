//! `--executor`: how an analysis command runs its per-location passes.

use parallax_analysis::executor::Executor;

/// The `--executor` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One location after another.
    Seq,
    /// A pool of `--threads` threads (all cores if 0).
    Threads,
    /// The ranks of the MPI job the command runs in (`mpirun -np N
    /// parallax ...`); needs a build with the `mpi` feature.
    Mpi,
}

/// The executor in use; under MPI it keeps MPI initialized until dropped
/// at the end of the command.
#[derive(Debug)]
pub struct Running {
    pub exec: Executor,
    #[cfg(feature = "mpi")]
    _session: Option<parallax_analysis::mpi::Session>,
}

impl Running {
    /// Whether this process prints and writes the shared outputs: the
    /// root of an MPI executor; with another executor under a launcher
    /// (`mpirun -np 4 parallax report ...`, every rank doing the same
    /// work), rank 0 only.
    pub fn is_root(&self) -> bool {
        #[cfg(feature = "mpi")]
        if self.exec == Executor::Mpi {
            return self.exec.is_root();
        }
        self.exec.is_root() && crate::launcher::speaks()
    }
}

/// The executor for `kind`; without one, `threads` decides: 0 a pool of
/// all cores, 1 sequential, more a pool of that many.
pub fn start(kind: Option<Kind>, threads: usize) -> anyhow::Result<Running> {
    let pool = |n: usize| match n {
        0 => Executor::pool(),
        1 => Executor::Sequential,
        n => Executor::Threads(n),
    };
    let exec = match kind {
        None => pool(threads),
        Some(Kind::Seq) => Executor::Sequential,
        Some(Kind::Threads) if threads == 0 => Executor::pool(),
        Some(Kind::Threads) => Executor::Threads(threads),
        Some(Kind::Mpi) => return start_mpi(),
    };
    Ok(Running {
        exec,
        #[cfg(feature = "mpi")]
        _session: None,
    })
}

impl Running {
    /// Waits for every rank (under MPI; at once otherwise).
    pub fn barrier(&self) {
        #[cfg(feature = "mpi")]
        if self.exec == Executor::Mpi {
            parallax_analysis::mpi::barrier();
        }
    }

    /// Passes `r` on; under MPI an error ends the whole job, since the
    /// other ranks would wait for this one in the next exchange.
    pub fn all_or_none<T>(&self, r: anyhow::Result<T>) -> anyhow::Result<T> {
        #[cfg(feature = "mpi")]
        if let (Executor::Mpi, Err(e)) = (self.exec, &r) {
            crate::console::note(&format!("{e:#}"));
            parallax_analysis::mpi::abort(2);
        }
        r
    }
}

#[cfg(feature = "mpi")]
fn start_mpi() -> anyhow::Result<Running> {
    let session = parallax_analysis::mpi::init();
    anyhow::ensure!(session.is_some(), "MPI was already initialized");
    // A rank that panics must not wait in MPI_Finalize for the others,
    // which wait for it: the job ends.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        parallax_analysis::mpi::abort(101);
    }));
    Ok(Running {
        exec: Executor::Mpi,
        _session: session,
    })
}

#[cfg(not(feature = "mpi"))]
fn start_mpi() -> anyhow::Result<Running> {
    anyhow::bail!(
        "this parallax was built without MPI: build it with \
         `cargo build --release -p parallax-cli --features mpi`"
    )
}
