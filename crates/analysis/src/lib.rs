//! Parallax's offline analyses of experiments.
//!
//! - [`profile`]: call-path profiles of every location, from the runtime's
//!   own profiles or derived from the event trace, and their flat and
//!   merged views, in nanoseconds.
#![warn(missing_docs)]

pub mod profile;
