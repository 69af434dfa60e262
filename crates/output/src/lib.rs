//! How Parallax's offline tools write what they produce.
//!
//! - [`file`]: output files written beside their destination and renamed
//!   over it, never through a symbolic link at the last component, and
//!   replacing only an earlier file of the same kind.
//! - [`text`]: untrusted strings (region, thread and program names,
//!   arguments, tags) made inert for a terminal and for XML.
#![warn(missing_docs)]

pub mod file;
pub mod text;
