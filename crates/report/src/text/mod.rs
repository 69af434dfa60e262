//! The reports as text for the terminal, each module named for what it
//! renders; the `parallax` command loads the data and writes the text.
//! Names and cells are made inert ([`parallax_output::text::inert`]).

pub mod bottlenecks;
pub mod fmt;
pub mod profile;
pub mod revisions;
pub mod runs;
pub mod scaling;
pub mod wrap;
