//! OTF2 import.
use std::path::Path;

use crate::{Error, ErrorKind, Summary};

use super::ImportOptions;

pub fn import(_a: &Path, _out: &Path, _o: &ImportOptions) -> Result<Summary, Error> {
    Err(Error::new(ErrorKind::Unsupported, "OTF2 import: not yet"))
}
