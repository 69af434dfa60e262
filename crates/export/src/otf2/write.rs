//! OTF2 export.
use std::path::Path;

use parallax_model::experiment::Experiment;

use crate::{Error, ErrorKind, Selection, Summary};

pub fn export(_exp: &Experiment, _sel: &Selection, _out: &Path) -> Result<Summary, Error> {
    Err(Error::new(ErrorKind::Unsupported, "OTF2 export: not yet"))
}
