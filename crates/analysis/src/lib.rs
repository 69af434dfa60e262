//! Parallax's offline analyses of experiments.
//!
//! - [`profile`]: call-path profiles of every location, from the runtime's
//!   own profiles or derived from the event trace, and their flat and
//!   merged views, in nanoseconds;
//! - [`compensate`]: the experiment without its probes' perturbation;
//! - [`concurrency`]: time with exactly k locations busy (CEFF, CAVG);
//! - [`names`]: how every view names locations and region kinds;
//! - [`executor`]: how per-location passes and exchange steps run (one
//!   thread or a pool, with identical results);
//! - [`trace`]: the traced locations and streaming over their events;
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
pub mod fasthash;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod names;
pub mod pairing;
pub mod profile;
pub mod replay;
pub mod trace;
pub mod wire;
