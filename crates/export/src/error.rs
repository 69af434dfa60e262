//! The error type of exports and imports.

use std::fmt;
use std::path::{Path, PathBuf};

/// An export or import that failed.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
}

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing a file failed.
    Io,
    /// The experiment could not be read.
    Input,
    /// The request makes no sense (an unknown location, a bad option).
    Usage,
    /// This build cannot do it (OTF2 without libotf2).
    Unsupported,
    /// The OTF2 library reported an error, or an OTF2 archive is unusable.
    Otf2,
}

impl Error {
    /// A new error.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            path: None,
        }
    }

    pub(crate) fn io(path: &Path, e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, e.to_string()).at(path)
    }

    /// The same error, about `path`.
    pub fn at(mut self, path: &Path) -> Error {
        self.path.get_or_insert_with(|| path.to_path_buf());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}", p.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

impl From<parallax_model::Error> for Error {
    fn from(e: parallax_model::Error) -> Error {
        Error::new(ErrorKind::Input, e.to_string())
    }
}

impl From<parallax_view::selection::BadSelection> for Error {
    fn from(e: parallax_view::selection::BadSelection) -> Error {
        Error::new(ErrorKind::Usage, e.0)
    }
}
