//! The vocabulary of Parallax and its native experiment format.
//!
//! Everything else in Parallax speaks these types: the runtime that records a
//! measured program writes them, and every offline tool (reports, analyses,
//! exports) reads them. The crate is small and has one dependency (a CRC), so
//! that it can link into measured programs.
//!
//! - [`region`]: regions and the generic operation types of PPW's model;
//! - [`event`]: events of a location;
//! - [`defs`]: definitions (regions, locations, clock, calibration);
//! - [`profile`]: call-path profiles;
//! - [`varint`], [`evcodec`], [`file`]: the byte-level codec, documented in
//!   `FORMAT.md` next to this crate;
//! - [`experiment`]: reading (and offline writing of) experiment
//!   directories; [`spill`]: the trace buffers a killed process left;
//! - [`clock`]: mapping ticks to nanoseconds.
//!
//! ```
//! use parallax_model::event::{Event, EventKind};
//! use parallax_model::evcodec::{decode_records, EventEncoder};
//!
//! let mut enc = EventEncoder::new(0);
//! enc.push(&Event { time: 10, kind: EventKind::Enter { region: 1 } });
//! enc.push(&Event { time: 25, kind: EventKind::Leave { region: 1 } });
//! let bytes = enc.take();
//! let mut got = Vec::new();
//! decode_records(&bytes, &mut 0, &mut Vec::new(), |e| got.push(e)).unwrap();
//! assert_eq!(got[1], Event { time: 25, kind: EventKind::Leave { region: 1 } });
//! ```
#![warn(missing_docs)]

pub mod clock;
pub mod defs;
mod error;
pub mod evcodec;
pub mod event;
pub mod experiment;
pub mod file;
pub mod profile;
pub mod region;
pub mod spill;
pub mod varint;

pub use error::{Error, ErrorKind};
