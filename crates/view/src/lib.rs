//! Read-side views of a Parallax experiment, shared by the analyses, the
//! exports, the run database and the reports:
//!
//! - [`trace`]: the locations and streaming over their events;
//! - [`selection`]: which locations a view shows;
//! - [`profile`]: call-path profiles of every location, from the runtime's
//!   own profiles or derived from the event trace, and their flat and
//!   merged views, in nanoseconds;
//! - [`deps`]: what an event of one location needs from, or posts for,
//!   events of other locations (messages, collectives, thread hand-offs),
//!   and the arrows trace formats draw between them;
//! - [`finding`]: what the bottleneck analysis finds, as the analysis,
//!   the run database and the reports all hold it;
//! - [`names`]: how every view names locations, regions and region kinds;
//! - [`fasthash`]: the hasher of small integer keys.
#![warn(missing_docs)]

pub mod deps;
pub mod fasthash;
pub mod finding;
pub mod names;
pub mod profile;
pub mod selection;
pub mod trace;
