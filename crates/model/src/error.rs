//! The error type of the format readers.

use std::fmt;
use std::path::PathBuf;

/// Why a file or record could not be read.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    path: Option<PathBuf>,
    message: String,
}

/// The broad reason of an [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system refused an operation.
    Io,
    /// The file is not a Parallax file of the expected kind.
    NotParallax,
    /// The file was written by a format version this reader does not know.
    Version,
    /// The data is damaged (checksum, impossible value).
    Corrupt,
    /// The data ends in the middle of a block.
    Truncated,
    /// The data is sound but does not allow what was asked of it.
    Invalid,
}

impl Error {
    /// A new error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            path: None,
            message: message.into(),
        }
    }

    pub(crate) fn corrupt(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Corrupt, message)
    }

    /// An input/output error on `path`.
    pub fn io(path: &std::path::Path, err: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, err.to_string()).at(path)
    }

    /// The same error, naming the file it happened in.
    pub fn at(mut self, path: &std::path::Path) -> Error {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }

    /// The broad reason.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file, where known.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
