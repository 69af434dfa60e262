//! OTF2 export and import through the reference OTF2 library (libotf2).
//!
//! Built only where `build.rs` found libotf2 (`cfg(have_otf2)`); elsewhere
//! [`AVAILABLE`] is false and both entry points return
//! [`ErrorKind::Unsupported`] with what to install.

use std::path::Path;

use parallax_model::experiment::Experiment;

#[cfg(not(have_otf2))]
use crate::ErrorKind;
use crate::{Error, Summary};
use parallax_view::selection::Selection;

#[cfg(have_otf2)]
mod export;
#[cfg(have_otf2)]
mod import;
#[cfg(have_otf2)]
mod libotf2;
#[cfg(have_otf2)]
mod place;

/// Whether this build has OTF2 support.
pub const AVAILABLE: bool = cfg!(have_otf2);

/// The message of a build without OTF2.
pub const MISSING: &str = "this parallax was built without OTF2 support: install libotf2-trace-dev (Debian; or OTF2 from the Score-P project) and rebuild";

/// Options of an OTF2 import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Cost of one probe (enter, leave or other event) in ns, written as
    /// calibration definitions so that compensation can remove it.
    pub probe_cost_ns: Option<f64>,
}

/// Writes the selected locations of `exp` as an OTF2 archive: `out` is the
/// anchor file (`NAME.otf2`); its definitions and events go to the
/// directory `NAME` beside it.
pub fn export(exp: &Experiment, sel: &Selection, out: &Path) -> Result<Summary, Error> {
    #[cfg(have_otf2)]
    {
        export::export(exp, sel, out)
    }
    #[cfg(not(have_otf2))]
    {
        let _ = (exp, sel, out);
        Err(Error::new(ErrorKind::Unsupported, MISSING))
    }
}

/// Reads the OTF2 archive whose anchor file is `anchor` into a new Parallax
/// experiment in `out`.
pub fn import(anchor: &Path, out: &Path, opts: &ImportOptions) -> Result<Summary, Error> {
    #[cfg(have_otf2)]
    {
        import::import(anchor, out, opts)
    }
    #[cfg(not(have_otf2))]
    {
        let _ = (anchor, out, opts);
        Err(Error::new(ErrorKind::Unsupported, MISSING))
    }
}
