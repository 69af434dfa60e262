//! The rank directory of a measured process: claiming one (a descendant
//! of a measured process), emptying it of a previous run's files, and the
//! files a measurement opens there.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use parallax_model::experiment::{self, DEFS_FILE, PROFILE_FILE};
use parallax_model::file::{self, FileKind};

use crate::config::Config;
use crate::files;
use crate::process::InitError;

/// The rank directory and the files a measurement opens, closed on drop
/// unless kept (a later step of the start failed).
pub(crate) struct Opened {
    dir: i32,
    defs: i32,
    profile: i32,
}

impl Opened {
    pub(crate) fn new(config: &Config, rank: u32, profile: bool) -> Result<Opened, InitError> {
        let dir = config.out_dir.join(experiment::rank_dir(rank));
        prepare_dir(&dir)
            .map_err(|e| InitError::loud(format!("cannot create {}: {e}", dir.display())))?;
        let dir_fd = open_dir(&dir)
            .map_err(|e| InitError::loud(format!("cannot open {}: {e}", dir.display())))?;
        let mut opened = Opened {
            dir: dir_fd,
            defs: -1,
            profile: -1,
        };
        let make = |name: &str, kind: FileKind| {
            create(dir_fd, name, &file::header(kind, rank, 0)).map_err(|e| {
                InitError::loud(format!("cannot create {}: {e}", dir.join(name).display()))
            })
        };
        opened.defs = make(DEFS_FILE, FileKind::Definitions)?;
        reserve_room(opened.defs);
        if profile {
            opened.profile = make(PROFILE_FILE, FileKind::Profile)?;
        }
        Ok(opened)
    }

    /// The rank directory's descriptor, the definitions file's and the
    /// profile's (-1 if none), given away.
    pub(crate) fn keep(mut self) -> (i32, i32, i32) {
        let kept = (self.dir, self.defs, self.profile);
        (self.dir, self.defs, self.profile) = (-1, -1, -1);
        kept
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        for fd in [self.dir, self.defs, self.profile] {
            if fd >= 0 {
                // Safety: descriptors this start opened and gave nobody.
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// The rank of a descendant (see [`crate::config`]): its own rank if no
/// process has that directory yet, else, when children are measured, the
/// first free rank at or above the number of ranks.
pub(crate) fn claim_rank(config: &Config) -> Result<u32, InitError> {
    let out = &config.out_dir;
    std::fs::create_dir_all(out)
        .map_err(|e| InitError::loud(format!("cannot create {}: {e}", out.display())))?;
    let take = |r: u32| std::fs::create_dir(out.join(experiment::rank_dir(r)));
    let own = config.rank.unwrap_or(0);
    match take(own) {
        Ok(()) => return Ok(own),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(InitError::loud(format!(
                "cannot create a rank directory in {}: {e}",
                out.display()
            )))
        }
        Err(_) => {}
    }
    if !config.children {
        return Err(InitError::quiet(format!(
            "rank {own} is measured by a parent process and PARALLAX_CHILDREN is off"
        )));
    }
    let first = config.ranks.unwrap_or(0).max(own + 1);
    for r in first..first.saturating_add(1 << 20) {
        match take(r) {
            Ok(()) => return Ok(r),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(InitError::loud(format!(
                    "cannot create a rank directory in {}: {e}",
                    out.display()
                )))
            }
        }
    }
    Err(InitError::loud(
        "no free rank directory for a child process",
    ))
}

/// Empties a process directory of a previous run's files, creating it if
/// needed.
fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("pxe" | "pxd" | "pxp" | "pxb" | "part")
        ) {
            std::fs::remove_file(p)?;
        }
    }
    Ok(())
}

/// Reserves room for the definitions to come, so that a disk that runs
/// full still takes the last ones (the losses, the end): as much as the
/// file system gives of a few sizes, beyond the end of the file.
fn reserve_room(fd: i32) {
    for bytes in [16 << 10, 4 << 10] {
        if !files::fits_size_limit(bytes) {
            continue;
        }
        // Safety: a descriptor of ours; KEEP_SIZE leaves the file's length.
        if unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, bytes as libc::off_t) } == 0 {
            return;
        }
    }
}

/// A descriptor of the directory `dir`, for files made relative to it.
fn open_dir(dir: &Path) -> std::io::Result<i32> {
    let c = CString::new(dir.as_os_str().as_bytes())?;
    // Safety: `c` is a valid NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// Creates the file `name` of the directory `dir` (a descriptor) with
/// `header` and returns its descriptor (append mode, so that whole-block
/// writes from several threads never interleave).
fn create(dir: i32, name: &str, header: &[u8]) -> std::io::Result<i32> {
    let mut n = [0u8; files::NAME];
    n[..name.len()].copy_from_slice(name.as_bytes());
    files::create_whole(dir, &n, header, libc::O_WRONLY | libc::O_APPEND)
        .map_err(std::io::Error::from_raw_os_error)
}
