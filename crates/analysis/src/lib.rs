//! Parallax's offline analyses of experiments.
//!
//! - [`compensate`]: the experiment without its probes' perturbation;
//! - [`concurrency`]: time with exactly k locations busy (CEFF, CAVG);
//! - [`executor`]: how per-location passes and exchange steps run (one
//!   thread or a pool, with identical results);
//! - [`replay`]: all locations replayed together, exchanging values at
//!   their dependencies, and [`pairing`]: which event each
//!   synchronization waited for;
//! - [`wire`]: the byte encoding of what analysis ranks exchange, and
//!   `mpi` (cargo feature `mpi`): the MPI job the MPI executor runs in.
#![warn(missing_docs)]

mod backoff;
pub mod bottleneck;
pub mod compensate;
pub mod concurrency;
pub mod executor;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod pairing;
pub mod replay;
pub mod wire;
