//! Parallax's exports to the tools people already use, and its OTF2 import.
//!
//! Every export reads a Parallax experiment ([`Experiment`]) and writes one
//! file in another tool's format:
//!
//! | [`Format`] | for | reads |
//! |---|---|---|
//! | `Otf2` | Vampir, Scalasca, otf2-print (through Debian's libotf2) | events |
//! | `Perfetto` | ui.perfetto.dev, trace processor (native TrackEvent protobuf) | events |
//! | `Chrome` | chrome://tracing, Perfetto, speedscope (trace event JSON) | events |
//! | `Folded` | flame graph tools (`inferno`, `flamegraph.pl`, speedscope) | profiles |
//! | `Svg` | a browser: an interactive flame graph | profiles |
//! | `Csv`, `Json` | pandas (`read_csv`, `read_json`), spreadsheets | profiles |
//! | `Hatchet` | Hatchet's `GraphFrame.from_literal` | profiles |
//!
//! Trace exports stream: they read each location's events block by block
//! and never hold a whole trace in memory. Profile exports use the call
//! trees of [`ExperimentProfile`] (the runtime's profile, or one derived
//! from the trace).
//!
//! Timestamps in every export are nanoseconds since the start of the
//! experiment ([`Experiment::t0_ns`]), each process's ticks mapped by its own
//! clock fit.
//!
//! OTF2 needs the C library `libotf2`; `build.rs` looks for it when the
//! `otf2` feature is on. Without it, [`otf2_available`] is false and the
//! OTF2 entry points return [`ErrorKind::Unsupported`].
//!
//! ```no_run
//! use parallax_export::{export, Format, Options};
//! use parallax_model::experiment::Experiment;
//!
//! let exp = Experiment::open("parallax-demo")?;
//! let summary = export(&exp, &Options::new(Format::Perfetto), "demo.pftrace".as_ref())?;
//! eprintln!("{} events, {:.1} bytes/event", summary.events, summary.bytes_per_event());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod chrome;
mod error;
mod fields;
mod folded;
pub mod otf2;
mod perfetto;
mod table;

use std::path::Path;
use std::time::Instant;

pub use error::{Error, ErrorKind};
use parallax_model::experiment::Experiment;
use parallax_output::file::{Kind, OutputFile};
use parallax_view::profile::ExperimentProfile;
use parallax_view::selection::Selection;
use parallax_view::trace::{self, Streamed};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An OTF2 archive (needs libotf2).
    Otf2,
    /// A Perfetto protobuf trace (TrackEvent).
    Perfetto,
    /// Chrome's trace event format (JSON).
    Chrome,
    /// Folded stacks, one call path and its exclusive ns per line.
    Folded,
    /// An SVG flame graph.
    Svg,
    /// A CSV call-path profile.
    Csv,
    /// A JSON call-path profile (an array of records).
    Json,
    /// A call tree in Hatchet's literal format (JSON).
    Hatchet,
}

impl Format {
    /// Every format, in the order of `Format::name`'s documentation.
    pub const ALL: [Format; 8] = [
        Format::Otf2,
        Format::Perfetto,
        Format::Chrome,
        Format::Folded,
        Format::Svg,
        Format::Csv,
        Format::Json,
        Format::Hatchet,
    ];

    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Otf2 => "otf2",
            Format::Perfetto => "perfetto",
            Format::Chrome => "chrome",
            Format::Folded => "folded",
            Format::Svg => "svg",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Hatchet => "hatchet",
        }
    }

    /// The format named `s`.
    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Whether the format is written from events (else from profiles).
    pub fn is_trace(self) -> bool {
        matches!(self, Format::Otf2 | Format::Perfetto | Format::Chrome)
    }
}

/// What to export and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The output format.
    pub format: Format,
    /// The locations to export.
    pub selection: Selection,
    /// Profile formats: merge call paths over the selected locations
    /// instead of keeping one tree per location.
    pub merged: bool,
}

impl Options {
    /// Every location, one tree per location.
    pub fn new(format: Format) -> Options {
        Options {
            format,
            selection: Selection::default(),
            merged: false,
        }
    }
}

/// What an export did, for the speed and size report.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Events read (trace formats).
    pub events: u64,
    /// Rows or call paths written (profile formats).
    pub rows: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Wall time of the export, seconds.
    pub seconds: f64,
    /// Bytes of the native event files of the exported locations.
    pub native_bytes: u64,
    /// Problems met on the way; the data before each was exported.
    pub warnings: Vec<String>,
    /// Of an import: how long the imported trace lasted, ns.
    pub span_ns: Option<u64>,
}

impl Summary {
    /// Counts one location's events as [`trace::try_for_each_event`]
    /// read them, with the problem that stopped the reading, if any.
    pub(crate) fn add_read(&mut self, read: Streamed) {
        self.events += read.events;
        self.warnings.extend(read.problem.map(|e| e.to_string()));
    }

    /// Events per second.
    pub fn events_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.events as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Bytes written per event.
    pub fn bytes_per_event(&self) -> f64 {
        if self.events > 0 {
            self.bytes as f64 / self.events as f64
        } else {
            0.0
        }
    }

    /// Bytes per event of the native format for the same events.
    pub fn native_bytes_per_event(&self) -> f64 {
        if self.events > 0 {
            self.native_bytes as f64 / self.events as f64
        } else {
            0.0
        }
    }

    /// One line for people: speed and size.
    pub fn describe(&self, format: Format) -> String {
        if format.is_trace() {
            format!(
                "{} events in {:.3} s ({:.2} M events/s); {} bytes, {:.2} bytes/event (native {:.2} bytes/event)",
                self.events,
                self.seconds,
                self.events_per_second() / 1e6,
                self.bytes,
                self.bytes_per_event(),
                self.native_bytes_per_event()
            )
        } else {
            format!(
                "{} rows in {:.3} s; {} bytes",
                self.rows, self.seconds, self.bytes
            )
        }
    }
}

/// Whether this build can write and read OTF2.
pub fn otf2_available() -> bool {
    otf2::AVAILABLE
}

/// Exports `exp` to `out` as `opts` says.
pub fn export(exp: &Experiment, opts: &Options, out: &Path) -> Result<Summary, Error> {
    let started = Instant::now();
    let mut summary = match opts.format {
        Format::Otf2 => otf2::export(exp, &opts.selection, out)?,
        Format::Perfetto => perfetto::export(exp, &opts.selection, out)?,
        Format::Chrome => chrome::export(exp, &opts.selection, out)?,
        Format::Folded | Format::Svg | Format::Csv | Format::Json | Format::Hatchet => {
            let prof = ExperimentProfile::load(exp)?;
            let mut s = match opts.format {
                Format::Folded | Format::Svg => folded::export(exp, &prof, opts, out)?,
                _ => table::export(exp, &prof, opts, out)?,
            };
            s.warnings.extend(prof.warnings.iter().cloned());
            s
        }
    };
    summary.seconds = started.elapsed().as_secs_f64();
    summary.bytes = output_bytes(out);
    if opts.format == Format::Otf2 {
        // The anchor file, and the archive's directory and definitions
        // beside it.
        if let (Some(dir), Some(stem)) = (out.parent(), out.file_stem()) {
            summary.bytes += output_bytes(&dir.join(stem));
            let mut def = stem.to_os_string();
            def.push(".def");
            summary.bytes += output_bytes(&dir.join(def));
        }
    }
    if opts.format.is_trace() {
        // The export succeeded: the selection names no missing location.
        let locs = trace::selected(exp, &opts.selection).unwrap_or_default();
        summary.native_bytes = trace::native_bytes(&locs);
    }
    Ok(summary)
}

/// Size of a file, or of every file below a directory (an OTF2 archive).
fn output_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    if meta.is_file() {
        return meta.len();
    }
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            total += output_bytes(&e.path());
        }
    }
    total
}

/// An export being written (see [`parallax_output::file`]: beside its
/// destination, replacing only an earlier export of the same kind).
pub(crate) type Output = std::io::BufWriter<OutputFile>;

/// Starts writing `path` as a file of `kind`, with a clear error.
pub(crate) fn create(path: &Path, kind: Kind) -> Result<Output, Error> {
    let f = OutputFile::create(path, kind).map_err(|e| Error::io(path, e))?;
    Ok(std::io::BufWriter::with_capacity(1 << 20, f))
}

/// Puts the complete export in place of its destination.
pub(crate) fn finish(w: Output, path: &Path) -> Result<(), Error> {
    let f = w
        .into_inner()
        .map_err(|e| Error::io(path, e.into_error()))?;
    f.commit().map_err(|e| Error::io(path, e))
}
