//! Where an OTF2 archive goes. An archive is three entries beside each
//! other: the anchor file `NAME.otf2`, the global definitions `NAME.def`
//! and the directory `NAME` of per-location files. libotf2 refuses to
//! overwrite and follows links, so the archive is written into a new
//! hidden directory beside its destination and moved into place when
//! complete, replacing only an earlier OTF2 archive (the rule of
//! [`parallax_output::file`]).

use std::path::{Path, PathBuf};

use parallax_output::file::{check_replaceable, Kind, TEMPORARY_MARK};

use crate::{Error, ErrorKind};

/// An anchor file: a version byte, then OTF2's byte-order mark and name.
const ANCHOR: Kind = Kind::recognised_by("an OTF2 anchor file", |h| {
    h.len() >= 6 && &h[2..6] == b"OTF2"
});

/// A definitions or event file: a version byte, then the byte-order mark.
const DATA: Kind = Kind::recognised_by("an OTF2 file", |h| {
    h.len() >= 2 && h[0] == 3 && matches!(h[1], 0x42 | 0x23)
});

/// The files of an archive's directory.
fn is_archive_file(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|x| x.to_str()),
        Some("evt" | "def" | "snap" | "thumb")
    )
}

/// The archive's directory and name for the anchor file `out`
/// (`DIR/NAME.otf2`), once checked that an archive may go there.
pub fn destination(out: &Path) -> Result<(PathBuf, String), Error> {
    let bad = || {
        Error::new(
            ErrorKind::Usage,
            "the OTF2 output must be an anchor file named NAME.otf2",
        )
        .at(out)
    };
    if out.extension().and_then(|e| e.to_str()) != Some("otf2") {
        return Err(bad());
    }
    let name = out
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty() && !s.starts_with('.'))
        .ok_or_else(bad)?
        .to_string();
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    check(&dir, &name)?;
    Ok((dir, name))
}

fn refused(message: String) -> Error {
    Error::new(ErrorKind::Usage, message)
}

/// Checks that the archive `NAME` in `dir` is absent or an earlier OTF2
/// archive.
fn check(dir: &Path, name: &str) -> Result<(), Error> {
    let anchor = dir.join(format!("{name}.otf2"));
    let defs = dir.join(format!("{name}.def"));
    for (p, k) in [(&anchor, ANCHOR), (&defs, DATA)] {
        check_replaceable(p, k).map_err(|e| refused(e.to_string()))?;
    }
    let data = dir.join(name);
    match std::fs::symlink_metadata(&data) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&data, e)),
        Ok(m) if !m.is_dir() => Err(refused(format!(
            "{} exists and is not the directory of an OTF2 archive; choose another --out",
            data.display()
        ))),
        Ok(_) => {
            let entries = std::fs::read_dir(&data).map_err(|e| Error::io(&data, e))?;
            for e in entries {
                let p = e.map_err(|e| Error::io(&data, e))?.path();
                let regular = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file());
                if !regular || !is_archive_file(&p) {
                    return Err(refused(format!(
                        "{} holds {}, which is not part of an OTF2 archive; choose another --out",
                        data.display(),
                        p.file_name().unwrap_or_default().to_string_lossy()
                    )));
                }
            }
            Ok(())
        }
    }
}

/// A new, hidden directory beside the destination where libotf2 writes;
/// removed with what it holds unless [`Stage::put`] moved the archive out.
pub struct Stage {
    dir: PathBuf,
}

impl Stage {
    /// Creates the stage for archive `name` in `dir`.
    pub fn new(dir: &Path, name: &str) -> Result<Stage, Error> {
        for n in 0.. {
            let p = dir.join(format!(".{name}{TEMPORARY_MARK}{}-{n}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(Stage { dir: p }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {}
                Err(e) => return Err(Error::io(&p, e)),
            }
        }
        unreachable!("the loop returns")
    }

    /// Where libotf2 writes.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Replaces the archive `name` in `dir` (checked again) by the staged
    /// one.
    pub fn put(self, dir: &Path, name: &str) -> Result<(), Error> {
        check(dir, name)?;
        let data = dir.join(name);
        if data.is_dir() {
            // Only the files `check` accepted, then the directory itself.
            let entries = std::fs::read_dir(&data).map_err(|e| Error::io(&data, e))?;
            for e in entries.flatten() {
                std::fs::remove_file(e.path()).map_err(|x| Error::io(&e.path(), x))?;
            }
            std::fs::remove_dir(&data).map_err(|e| Error::io(&data, e))?;
        }
        for entry in [
            format!("{name}.otf2"),
            format!("{name}.def"),
            name.to_string(),
        ] {
            let from = self.dir.join(&entry);
            if from.exists() {
                let to = dir.join(&entry);
                std::fs::rename(&from, &to).map_err(|e| Error::io(&to, e))?;
            }
        }
        Ok(())
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // Created here, exclusively: what it still holds is ours.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
