//! Parallax's presentation layer, for the `parallax` command.
//!
//! - [`html`]: one self-contained HTML file per experiment (summary,
//!   profiles, timeline with levels of detail computed here, messages,
//!   communication matrix, load balance, concurrency, findings, measured
//!   and compensated side by side, run comparison and scaling). It needs no
//!   network: the page's script and style are inline and written for it.
//! - [`svg`]: the same charts as standalone SVG files, for papers.
//! - [`text`]: the reports as text (profiles, bottlenecks, revision
//!   comparison, scaling, the run database's views) and the formatting of
//!   times, counts and tables they share.
//! - [`term`]: colour on a terminal (plain text in a pipe) and progress
//!   for steps that take more than about a second.
#![warn(missing_docs)]

pub mod html;
pub mod svg;
pub mod term;
pub mod text;
