//! Parallel kernels on 2 to 4 threads whose threads depend on each other,
//! for the event-based perturbation compensation of Malony's thesis
//! (ch. 4 and 5): fork/join with uneven work, a reduction under a lock
//! (Livermore 3 as the FX/80 ran it), a probe inside a critical section
//! (Livermore 17), barrier-heavy phases, DOACROSS loops with advance/await
//! (forward and backward, §5.2) and producer/consumer semaphores.
//!
//! Each kernel runs at two levels chosen at run time:
//!
//! - [`Level::Raw`]: one region `kernel:<name>` around the whole kernel on
//!   the calling thread, which spawns and joins the threads inside it;
//!   nothing else is recorded: the threads and their synchronization are
//!   the standard library's. Its time is the reference T.
//! - [`Level::Full`]: the same region; threads made with
//!   `parallax::spawn`, synchronization through `parallax::sync` (every
//!   lock, barrier wait, semaphore operation, advance and await recorded
//!   with the events that pair them), and a region of kind Loop around
//!   every loop body. Its time is the measured T_m.
//!
//! The kernels are written once against the primitives of `prims`, which
//! are the standard ones or the measured ones by level, so that the work
//! between synchronizations is the same code at both levels, and every
//! shared result is an order-independent integer sum: both levels give
//! the same checksum whatever the interleaving. [`Kernel::expected`] gives
//! the number of each kind of event a `Full` run records.

use std::time::Instant;

use parallax::{Callsite, RegionKind};

mod kernels;
mod prims;

use kernels::Direction;

/// How much of a kernel is instrumented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Only the kernel's region, on the calling thread.
    Raw,
    /// Measured threads and synchronization, and a region per loop body.
    Full,
}

impl Level {
    /// Both levels.
    pub const ALL: [Level; 2] = [Level::Raw, Level::Full];

    /// `raw` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Raw => "raw",
            Level::Full => "full",
        }
    }

    /// The level named `s` (any case).
    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// The size of one run of a kernel; what `n` counts depends on the kernel
/// (see [`Kernel::size_doc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Size {
    /// Work items (per thread, per phase, or in all, by kernel).
    pub n: usize,
    /// Rounds, phases or repetitions of the whole loop.
    pub passes: usize,
}

/// Preset sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scale {
    /// Milliseconds in all, for tests.
    Test,
    /// At least 5 ms per run at level `Raw` on this project's machine.
    Bench,
}

impl Scale {
    /// `test` or `bench`.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Test => "test",
            Scale::Bench => "bench",
        }
    }

    /// The scale named `s`.
    pub fn parse(s: &str) -> Option<Scale> {
        [Scale::Test, Scale::Bench]
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// What one run is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Instrumentation.
    pub level: Level,
    /// Threads (2 to 4 for the experiments; at least 2).
    pub threads: usize,
    /// Problem size.
    pub size: Size,
    /// Dependence distance of the DOACROSS kernels (at least 1).
    pub distance: usize,
    /// Grain steps (about 2.5 ns each) of the bodies B1, B2 and B3 of the
    /// DOACROSS kernels, [`DOACROSS_STEPS`] unless a study varies them as
    /// the thesis's FIXED-1 (B2 varied) and FIXED-2 (B1 and B3 varied)
    /// sets do (§5.2.3, table 5.2).
    pub steps: [u32; 3],
}

/// The grain steps of the DOACROSS bodies B1, B2 and B3 by default.
pub const DOACROSS_STEPS: [u32; 3] = kernels::DOACROSS_STEPS;

/// What one run gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Wall time of the kernel's region, from just after entering it to
    /// just before leaving it, in seconds.
    pub seconds: f64,
    /// The same at every level and in every run of the same size.
    pub checksum: u64,
}

/// The events a `Full` run records, by kind (all threads together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// Entries into loop-body regions.
    pub bodies: u64,
    /// Threads created (and joined).
    pub threads: u64,
    /// Lock acquisitions (each with a request and a release).
    pub locks: u64,
    /// Barrier waits (collective ends of kind barrier).
    pub barrier_waits: u64,
    /// Advances (each with its await, but for the first `distance`
    /// iterations of a loop).
    pub advances: u64,
    /// Completed awaits.
    pub awaits: u64,
    /// Semaphore posts.
    pub sem_posts: u64,
    /// Semaphore acquisitions.
    pub sem_acquisitions: u64,
    /// Iteration events of self-scheduled loops: one per iteration handed
    /// out, and one per thread and loop that found none left.
    pub iterations: u64,
}

/// One kernel.
#[derive(Debug)]
pub struct Kernel {
    /// Short name (`reduction`); its region is `kernel:<name>`.
    pub name: &'static str,
    /// What it models.
    pub description: &'static str,
    /// What [`Size::n`] and [`Size::passes`] count.
    pub size_doc: &'static str,
    test: Size,
    bench: Size,
    prepare: fn(&Run) -> kernels::Work,
    expected: fn(&Run) -> Expected,
    region: &'static str,
    site: Callsite,
}

impl Kernel {
    /// The preset size at `scale`.
    pub fn size(&self, scale: Scale) -> Size {
        match scale {
            Scale::Test => self.test,
            Scale::Bench => self.bench,
        }
    }

    /// The name of the kernel's region (`kernel:reduction`).
    pub fn region(&self) -> &'static str {
        self.region
    }

    /// The events a `Full` run of `run` records.
    pub fn expected(&self, run: &Run) -> Expected {
        (self.expected)(run)
    }

    /// Fills the kernel's data, then runs it once as `run` says.
    ///
    /// # Panics
    ///
    /// With fewer than 2 threads, a distance of 0 or an empty size.
    pub fn run(&'static self, run: &Run) -> Outcome {
        let work = self.prepare(run);
        let region = self.site.enter();
        let t0 = Instant::now();
        let checksum = work();
        let seconds = t0.elapsed().as_secs_f64();
        drop(region);
        Outcome { seconds, checksum }
    }

    /// Runs the kernel once outside its region (a warm-up that leaves no
    /// visit of the kernel in a trace); returns the checksum.
    ///
    /// # Panics
    ///
    /// As [`Kernel::run`].
    pub fn warm_up(&'static self, run: &Run) -> u64 {
        self.prepare(run)()
    }

    fn prepare(&self, run: &Run) -> kernels::Work {
        assert!(
            run.threads >= 2 && run.distance >= 1 && run.size.n >= 1 && run.size.passes >= 1,
            "{}: needs 2 or more threads, a distance and a size: {run:?}",
            self.name
        );
        (self.prepare)(run)
    }
}

/// The kernel called `name`.
pub fn kernel(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

fn n(r: &Run) -> u64 {
    r.size.n as u64
}

fn passes(r: &Run) -> u64 {
    r.size.passes as u64
}

fn threads(r: &Run) -> u64 {
    r.threads as u64
}

/// The kernels.
pub static KERNELS: [Kernel; 7] = [
    Kernel {
        name: "forkjoin",
        description: "fork/join with uneven work: thread k does (k+1) units",
        size_doc: "n: bodies of thread 0 per round (thread k does (k+1)n); passes: rounds",
        test: Size { n: 200, passes: 2 },
        bench: Size {
            n: 8000,
            passes: 10,
        },
        prepare: kernels::forkjoin,
        expected: |r| Expected {
            bodies: passes(r) * n(r) * threads(r) * (threads(r) + 1) / 2,
            threads: passes(r) * threads(r),
            ..Expected::default()
        },
        region: "kernel:forkjoin",
        site: Callsite::new("kernel:forkjoin", RegionKind::User, file!(), line!()),
    },
    Kernel {
        name: "reduction",
        description: "Livermore 3-like inner product; partial sums added under a mutex, \
                      outside the body probes",
        size_doc: "n: blocks of 128 elements; passes: sweeps over the vectors",
        test: Size { n: 200, passes: 2 },
        bench: Size {
            n: 2000,
            passes: 80,
        },
        prepare: kernels::reduction,
        expected: |r| Expected {
            bodies: passes(r) * n(r),
            threads: threads(r),
            locks: passes(r) * n(r),
            ..Expected::default()
        },
        region: "kernel:reduction",
        site: Callsite::new("kernel:reduction", RegionKind::User, file!(), line!()),
    },
    Kernel {
        name: "critical",
        description: "Livermore 17-like: the body probe inside the critical section",
        size_doc: "n: iterations (dealt round-robin); passes: sweeps",
        test: Size { n: 200, passes: 2 },
        bench: Size {
            n: 20000,
            passes: 4,
        },
        prepare: kernels::critical,
        expected: |r| Expected {
            bodies: passes(r) * n(r),
            threads: threads(r),
            locks: passes(r) * n(r),
            ..Expected::default()
        },
        region: "kernel:critical",
        site: Callsite::new("kernel:critical", RegionKind::User, file!(), line!()),
    },
    Kernel {
        name: "barrier",
        description: "many short phases separated by a barrier",
        size_doc: "n: points (bodies) per thread and phase; passes: phases",
        test: Size { n: 20, passes: 10 },
        bench: Size {
            n: 200,
            passes: 800,
        },
        prepare: kernels::barrier,
        expected: |r| Expected {
            bodies: passes(r) * n(r) * threads(r),
            threads: threads(r),
            barrier_waits: passes(r) * threads(r),
            ..Expected::default()
        },
        region: "kernel:barrier",
        site: Callsite::new("kernel:barrier", RegionKind::User, file!(), line!()),
    },
    Kernel {
        name: "doacross-forward",
        description: "self-scheduled DOACROSS loop, dependence from B1 to B3 \
                      (advance after B1, await before B3)",
        size_doc: "n: iterations per loop; passes: loops",
        test: Size { n: 200, passes: 2 },
        bench: Size {
            n: 20000,
            passes: 2,
        },
        prepare: |r| kernels::doacross(r, Direction::Forward),
        expected: doacross_expected,
        region: "kernel:doacross-forward",
        site: Callsite::new(
            "kernel:doacross-forward",
            RegionKind::User,
            file!(),
            line!(),
        ),
    },
    Kernel {
        name: "doacross-backward",
        description: "self-scheduled DOACROSS loop, dependence inside B2 \
                      (await before B2, advance after it)",
        size_doc: "n: iterations per loop; passes: loops",
        test: Size { n: 200, passes: 2 },
        bench: Size {
            n: 20000,
            passes: 2,
        },
        prepare: |r| kernels::doacross(r, Direction::Backward),
        expected: doacross_expected,
        region: "kernel:doacross-backward",
        site: Callsite::new(
            "kernel:doacross-backward",
            RegionKind::User,
            file!(),
            line!(),
        ),
    },
    Kernel {
        name: "semaphore",
        description: "one producer, the other threads consumers, each through a \
                      ring of 4 slots guarded by two counting semaphores",
        size_doc: "n: items; passes: repetitions",
        test: Size { n: 50, passes: 2 },
        bench: Size { n: 1000, passes: 2 },
        prepare: kernels::semaphore,
        expected: |r| Expected {
            bodies: 2 * passes(r) * n(r) * kernels::SEMAPHORE_BATCH,
            threads: passes(r) * threads(r),
            sem_posts: 2 * passes(r) * n(r),
            sem_acquisitions: 2 * passes(r) * n(r),
            ..Expected::default()
        },
        region: "kernel:semaphore",
        site: Callsite::new("kernel:semaphore", RegionKind::User, file!(), line!()),
    },
];

fn doacross_expected(r: &Run) -> Expected {
    Expected {
        bodies: 3 * passes(r) * n(r),
        threads: passes(r) * threads(r),
        advances: passes(r) * n(r),
        awaits: passes(r) * n(r).saturating_sub(r.distance as u64),
        iterations: passes(r) * (n(r) + threads(r)),
        ..Expected::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_regions() {
        for k in &KERNELS {
            assert_eq!(kernel(k.name).unwrap().name, k.name);
            assert_eq!(k.region(), format!("kernel:{}", k.name));
        }
        assert!(kernel("nothing").is_none());
        assert_eq!(Level::parse(" FULL"), Some(Level::Full));
        assert_eq!(Scale::parse("bench"), Some(Scale::Bench));
    }

    #[test]
    fn grain_is_a_fixed_function() {
        use super::kernels::{grain, mix};
        assert_eq!(grain(7, 0), 7);
        assert_eq!(grain(grain(7, 3), 2), grain(7, 5));
        assert_ne!(mix(1), mix(2));
    }
}
