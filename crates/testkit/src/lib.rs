//! Test support for Parallax's readers: valid experiments to start from
//! ([`base`]), hostile variants of them ([`corrupt`]), and running a
//! command under a time and a memory limit with a verdict on how it ended
//! ([`limits`]), and simulated programs of known timing written as
//! experiments ([`synth`]: ground truth for the analyses). Not part of any user-facing crate: the test suites of the
//! CLI and the benchmarks share it.
//!
//! Every choice is drawn from a [`rng::Rng`] seeded by the caller, so a
//! failing case is reproduced from its seed alone.

pub mod base;
pub mod corrupt;
pub mod fuzz;
pub mod limits;
pub mod rng;
pub mod synth;
