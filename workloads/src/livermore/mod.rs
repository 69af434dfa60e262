//! The 24 Livermore Fortran Kernels (F. H. McMahon, *The Livermore Fortran
//! Kernels: a computer test of the numerical performance range*,
//! UCRL-53745, LLNL, 1986), written in Rust from their published Fortran
//! definitions, each runnable at three instrumentation levels.
//!
//! Malony's thesis (ch. 3) validates time-based perturbation compensation
//! on these loops: a *raw* run, with probes only where the kernel begins
//! and ends, gives the reference time T; a *full* run, with probes
//! throughout the loop, gives the measured time T_m and N probe events;
//! T_a = T_m - αN should come back to T. [`Level`] selects the
//! instrumentation at run time:
//!
//! - [`Level::None`]: no probes;
//! - [`Level::Raw`]: one region around the whole kernel (2 events);
//! - [`Level::Full`]: that region, and inside it one region around every
//!   block of [`set_block`] iterations of the kernel's innermost loop(s)
//!   (by default one iteration: 2 + 2 × [`Kernel::iterations`] events),
//!   with register-preserving probes ([`parallax::preserving`]), so that
//!   the compiler builds the loop as without them.
//!
//! # Keeping the arithmetic the same at every level
//!
//! Each kernel's loops are one `#[inline(never)]` function, and every
//! level runs the very same machine code: the block boundary reads the
//! level through [`std::hint::black_box`], so the compiler cannot make a
//! copy of the loop without the probes (nor hoist the test out of it), and
//! below `Full` the boundary is an opaque no-op. Only the probes differ
//! between `Raw` and `Full`. (Compiled as two copies, one per level, the
//! loops came out different: with measurement off, the copy with probes
//! ran up to 1.40 times slower than the other in Rust and from 0.68 to
//! 1.25 times its time in C, a change of the code that the trace cannot
//! show and compensation cannot remove.) Every innermost iteration also
//! passes its index through [`std::hint::black_box`], which the compiler
//! must treat as reading and writing any memory: it cannot vectorize, fuse
//! or reorder iterations, so the work of an iteration is the same scalar
//! code with or without the probe around it (the probe's own call is
//! opaque too). Floating-point operations are never contracted or
//! reordered by rustc, so every level computes bit-identical results;
//! [`Outcome::checksum`] shows it. The kernels run scalar, like the
//! thesis's C and scalar Fortran categories, not vectorized.
//!
//! # Sizes
//!
//! A run allocates and fills the kernel's arrays (deterministically, not
//! timed), then times `passes` executions of the kernel over them, as the
//! LFK's own `Loop` count does, with the arrays at sizes close to the
//! LFK's so that they stay in cache. [`Scale::Bench`] sizes take about
//! 5-15 ms per run at level `Raw` on the 2-core VM this project runs on
//! (and 2.5 to 65 times longer at level `Full` in trace mode);
//! [`Scale::Test`] sizes take microseconds. The data is chosen so that
//! thousands of passes over the same arrays stay finite and clear of
//! subnormal numbers (whose arithmetic would be far slower).

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use parallax::{Callsite, RegionKind};

/// One step of an innermost loop: at every `size`-th step a block of
/// iterations ends and the next begins. At level `Full` the block is a
/// region: the previous block's region is left and a new one entered.
/// Below `Full` the step counts all the same and the block boundary is an
/// opaque no-op. The level is read through `black_box` at every boundary,
/// so every level runs the same loop code and only the probes differ.
macro_rules! body {
    ($blk:ident, $name:literal) => {
        $blk.left -= 1;
        if $blk.left == 0 {
            $blk.left = $blk.size;
            if std::hint::black_box($blk.full) {
                $blk.open = None;
                $blk.open = Some(parallax::region_preserving!(Loop, $name));
            } else {
                std::hint::black_box(());
            }
        }
    };
}

/// Iterations per probed block at level `Full` ([`set_block`]).
static BLOCK: AtomicUsize = AtomicUsize::new(1);

/// Sets how many innermost iterations each region of level `Full` spans:
/// 1 (the default) puts a region around every iteration.
pub fn set_block(iterations: usize) {
    BLOCK.store(iterations.max(1), Relaxed);
}

/// The blocks of one kernel run ([`body!`]); the open block's region is
/// left when the run ends.
pub(crate) struct Blocks {
    left: usize,
    size: usize,
    open: Option<parallax::PreservingGuard>,
    full: bool,
}

impl Blocks {
    /// The blocks of a run at level `Full` (`full`) or below.
    pub(crate) fn new(full: bool) -> Blocks {
        Blocks {
            left: 1,
            size: BLOCK.load(Relaxed),
            open: None,
            full,
        }
    }
}

mod data;
mod k01_08;
mod k09_16;
mod k17_24;

/// How much of a kernel is instrumented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// No probes at all.
    None,
    /// A region around the whole kernel: probes at its begin and end only.
    Raw,
    /// The kernel's region and a region around every block of iterations
    /// of its innermost loop bodies ([`set_block`]).
    Full,
}

impl Level {
    /// The three levels, least instrumented first.
    pub const ALL: [Level; 3] = [Level::None, Level::Raw, Level::Full];

    /// Lower-case name: `none`, `raw` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Raw => "raw",
            Level::Full => "full",
        }
    }

    /// The level named `s` (as [`Level::name`] spells it, any case).
    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// The problem size of one run of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Size {
    /// The kernel's loop length (its `n` in the LFK).
    pub n: usize,
    /// Executions of the whole kernel in one timed run (the LFK's `Loop`).
    pub passes: usize,
}

/// Preset sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scale {
    /// Small: a few thousand iterations, for tests.
    Test,
    /// About 5-15 ms per run at level `Raw` on this project's machine.
    Bench,
}

impl Scale {
    /// Lower-case name: `test` or `bench`.
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

/// What one run of a kernel gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Wall time of the kernel, including its probes, in seconds.
    pub seconds: f64,
    /// A sum over the kernel's results; bit-identical at every level.
    pub checksum: f64,
    /// Iterations of the innermost loop bodies ([`Kernel::iterations`]).
    pub iterations: u64,
}

/// One of the 24 kernels.
#[derive(Debug)]
pub struct Kernel {
    /// Its number in the LFK, 1 to 24.
    pub number: u32,
    /// Its name in the LFK.
    pub name: &'static str,
    /// Smallest `n` the kernel accepts.
    pub min_n: usize,
    test: Size,
    bench: Size,
    per_pass: fn(usize) -> u64,
    exec: fn(Size, &'static Callsite, Level) -> (f64, f64),
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

    /// Name of the region around the whole kernel (`lfk01` ... `lfk24`);
    /// the regions around loop bodies are named after it
    /// (`lfk01 body`, `lfk14 body 2`, ...).
    pub fn region(&self) -> &'static str {
        REGION_NAMES[self.number as usize - 1]
    }

    /// Whether the kernel can run at `size`.
    pub fn accepts(&self, size: Size) -> bool {
        size.n >= self.min_n && size.passes >= 1
    }

    /// Iterations of the innermost loop bodies in one run at `size`: the
    /// number of body regions a `Full` run enters.
    pub fn iterations(&self, size: Size) -> u64 {
        (self.per_pass)(size.n) * size.passes as u64
    }

    /// Fills the kernel's data for `size` and runs it once at `level`.
    ///
    /// # Panics
    ///
    /// If the kernel does not accept `size` ([`Kernel::accepts`]).
    pub fn run(&'static self, size: Size, level: Level) -> Outcome {
        assert!(
            self.accepts(size),
            "kernel {} needs n >= {} and passes >= 1, not {size:?}",
            self.number,
            self.min_n
        );
        let (seconds, checksum) = (self.exec)(size, &self.site, level);
        Outcome {
            seconds,
            checksum,
            iterations: self.iterations(size),
        }
    }
}

/// The kernel numbered `number` (1 to 24).
pub fn kernel(number: u32) -> Option<&'static Kernel> {
    KERNELS.get((number as usize).checked_sub(1)?)
}

/// A kernel: its data, filled at a size, and its loops.
trait Lfk: Sized {
    /// Deterministic data for `size`.
    fn new(size: Size) -> Self;
    /// All passes of the kernel; `full` puts a region around each block of
    /// innermost iterations. Implementations are `#[inline(never)]`.
    fn run(&mut self, full: bool);
    /// A sum over the results.
    fn checksum(&self) -> f64;
}

fn exec<K: Lfk>(size: Size, site: &'static Callsite, level: Level) -> (f64, f64) {
    let mut data = K::new(size);
    let k = black_box(&mut data);
    let t0 = Instant::now();
    match level {
        Level::None => k.run(false),
        Level::Raw => {
            let _g = site.enter();
            k.run(false);
        }
        Level::Full => {
            let _g = site.enter();
            k.run(true);
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    (seconds, black_box(&data).checksum())
}

const REGION_NAMES: [&str; 24] = [
    "lfk01", "lfk02", "lfk03", "lfk04", "lfk05", "lfk06", "lfk07", "lfk08", "lfk09", "lfk10",
    "lfk11", "lfk12", "lfk13", "lfk14", "lfk15", "lfk16", "lfk17", "lfk18", "lfk19", "lfk20",
    "lfk21", "lfk22", "lfk23", "lfk24",
];

macro_rules! kernels {
    ($( $num:literal $ty:ty, $name:literal, min $min:literal,
        test ($tn:literal, $tp:literal), bench ($bn:literal, $bp:literal),
        $per_pass:expr; )*) => {
        /// The 24 kernels, in LFK order.
        pub static KERNELS: [Kernel; 24] = [$(
            Kernel {
                number: $num,
                name: $name,
                min_n: $min,
                test: Size { n: $tn, passes: $tp },
                bench: Size { n: $bn, passes: $bp },
                per_pass: $per_pass,
                exec: exec::<$ty>,
                site: Callsite::new(REGION_NAMES[$num - 1], RegionKind::Loop, file!(), line!()),
            },
        )*];
    };
}

kernels! {
    1 k01_08::K01, "hydro fragment", min 1,
        test (101, 2), bench (1001, 3400), |n| n as u64;
    2 k01_08::K02, "ICCG excerpt (incomplete Cholesky conjugate gradient)", min 2,
        test (101, 2), bench (1001, 3700), k01_08::k02_per_pass;
    3 k01_08::K03, "inner product", min 1,
        test (101, 2), bench (1001, 6900), |n| n as u64;
    4 k01_08::K04, "banded linear equations", min 9,
        test (101, 2), bench (1001, 11000), k01_08::k04_per_pass;
    5 k01_08::K05, "tri-diagonal elimination, below diagonal", min 2,
        test (101, 2), bench (1001, 1800), |n| n as u64 - 1;
    6 k01_08::K06, "general linear recurrence equations", min 2,
        test (31, 2), bench (101, 500), |n| (n * (n - 1) / 2) as u64;
    7 k01_08::K07, "equation of state fragment", min 1,
        test (101, 2), bench (1001, 2500), |n| n as u64;
    8 k01_08::K08, "ADI integration", min 2,
        test (51, 2), bench (101, 5500), |n| 2 * (n as u64 - 1);
    9 k09_16::K09, "integrate predictors", min 1,
        test (51, 2), bench (101, 22000), |n| n as u64;
    10 k09_16::K10, "difference predictors", min 1,
        test (51, 2), bench (101, 21000), |n| n as u64;
    11 k09_16::K11, "first sum", min 1,
        test (101, 2), bench (1001, 2700), |n| n as u64 - 1;
    12 k09_16::K12, "first difference", min 1,
        test (101, 2), bench (1001, 9600), |n| n as u64;
    13 k09_16::K13, "2-D PIC (particle in cell)", min 1,
        test (64, 2), bench (64, 12000), |n| n as u64;
    14 k09_16::K14, "1-D PIC (particle in cell)", min 1,
        test (101, 2), bench (1001, 750), |n| 3 * n as u64;
    15 k09_16::K15, "casual Fortran", min 2,
        test (21, 2), bench (101, 2000), |n| 6 * (n as u64 - 1);
    16 k09_16::K16, "Monte Carlo search loop", min 8,
        test (75, 2), bench (75, 10600), k09_16::k16_per_pass;
    17 k17_24::K17, "implicit, conditional computation", min 2,
        test (101, 2), bench (101, 20000), |n| n as u64 - 1;
    18 k17_24::K18, "2-D explicit hydrodynamics fragment", min 2,
        test (21, 2), bench (100, 1300), |n| 15 * (n as u64 - 1);
    19 k17_24::K19, "general linear recurrence equations", min 1,
        test (101, 2), bench (101, 10500), |n| 2 * n as u64;
    20 k17_24::K20, "discrete ordinates transport", min 1,
        test (101, 2), bench (1000, 210), |n| n as u64;
    21 k17_24::K21, "matrix*matrix product", min 1,
        test (5, 2), bench (101, 70), |n| 625 * n as u64;
    22 k17_24::K22, "Planckian distribution", min 1,
        test (101, 2), bench (101, 7000), |n| n as u64;
    23 k17_24::K23, "2-D implicit hydrodynamics fragment", min 2,
        test (21, 2), bench (100, 1700), |n| 5 * (n as u64 - 1);
    24 k17_24::K24, "location of first minimum in array", min 2,
        test (101, 2), bench (1001, 5300), |n| n as u64 - 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_order() {
        for (i, k) in KERNELS.iter().enumerate() {
            assert_eq!(k.number as usize, i + 1);
            assert_eq!(kernel(k.number).unwrap().number, k.number);
            assert!(k.accepts(k.size(Scale::Test)) && k.accepts(k.size(Scale::Bench)));
            assert_eq!(k.region(), format!("lfk{:02}", k.number));
        }
        assert!(kernel(0).is_none() && kernel(25).is_none());
    }

    #[test]
    fn levels_parse() {
        for l in Level::ALL {
            assert_eq!(Level::parse(l.name()), Some(l));
        }
        assert_eq!(Level::parse(" FULL "), Some(Level::Full));
        assert_eq!(Level::parse("half"), None);
    }
}
