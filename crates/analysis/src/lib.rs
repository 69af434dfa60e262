//! Parallax's offline analyses of experiments.
//!
//! - [`profile`]: call-path profiles of every location, from the runtime's
//!   own profiles or derived from the event trace, and their flat and
//!   merged views, in nanoseconds;
//! - [`concurrency`]: time with exactly k locations busy (CEFF, CAVG);
//! - [`executor`]: how per-location passes and exchange steps run (one
//!   thread or a pool, with identical results);
//! - [`trace`]: the traced locations and streaming over their events.
#![warn(missing_docs)]

pub mod concurrency;
pub mod executor;
pub mod profile;
pub mod trace;
