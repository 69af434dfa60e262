//! The runtime's file operations, safe in signal handlers (no allocation)
//! and harmless to the program: a write never crosses the file size limit
//! (`ulimit -f`), whose SIGXFSZ would kill it.

/// Length of a file name buffer ([`name`]).
pub(crate) const NAME: usize = 32;

/// `PREFIX`, `n` in at least five digits, `SUFFIX`, NUL-terminated, made
/// without allocating (`thread-00042.pxe`).
pub(crate) fn name(prefix: &[u8], n: u32, suffix: &[u8]) -> [u8; NAME] {
    let mut digits = [0u8; 10];
    let mut len = 0;
    let mut v = n;
    while v > 0 || len < 5 {
        digits[len] = b'0' + (v % 10) as u8;
        v /= 10;
        len += 1;
    }
    let mut out = [0u8; NAME];
    let bytes = prefix
        .iter()
        .chain(digits[..len].iter().rev())
        .chain(suffix);
    for (o, &b) in out.iter_mut().zip(bytes) {
        *o = b;
    }
    out
}

/// Whether a file may grow to `size` bytes under the process's file size
/// limit.
pub(crate) fn fits_size_limit(size: u64) -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // Safety: getrlimit writes the struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) } != 0 {
        return true;
    }
    lim.rlim_cur == libc::RLIM_INFINITY || size <= lim.rlim_cur
}

/// Whether `len` more bytes may be appended to the open file `fd` under
/// the file size limit.
pub(crate) fn may_append(fd: i32, len: u64) -> bool {
    // Safety: fstat writes the struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return true;
    }
    fits_size_limit((st.st_size as u64).saturating_add(len))
}

/// Writes all of `parts` to `fd`. Allocates nothing: safe in signal
/// handlers. On failure, the system's error number (`EFBIG` for a write
/// the file size limit forbids, which is not attempted).
pub(crate) fn write_all(fd: i32, parts: &[&[u8]]) -> Result<(), i32> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    if !may_append(fd, total as u64) {
        return Err(libc::EFBIG);
    }
    let mut iov = [libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }; 4];
    let n = parts.len().min(4);
    for (v, p) in iov.iter_mut().zip(parts) {
        *v = libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        };
    }
    let mut first = 0;
    while first < n {
        // Safety: the iovecs point into live slices.
        let w = unsafe { libc::writev(fd, iov[first..n].as_ptr(), (n - first) as i32) };
        if w < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if w == 0 {
            return Err(libc::EIO);
        }
        let mut w = w as usize;
        while first < n && w >= iov[first].iov_len {
            w -= iov[first].iov_len;
            first += 1;
        }
        if first < n {
            // Safety: advancing within the same slice.
            iov[first].iov_base =
                unsafe { (iov[first].iov_base as *mut u8).add(w) } as *mut libc::c_void;
            iov[first].iov_len -= w;
        }
    }
    Ok(())
}

/// Appends `parts` to the file `name` (from [`name`]) in the directory
/// `dir` (a descriptor), opened for this write only: a thread's event file
/// takes no descriptor between its writes.
pub(crate) fn append_to(dir: i32, name: &[u8; NAME], parts: &[&[u8]]) -> Result<(), i32> {
    if dir < 0 {
        // No experiment directory (measurement ended, or a scratch state).
        return Err(libc::EBADF);
    }
    // Safety: a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr() as *const libc::c_char,
            libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // Safety: fstat writes the struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let size = (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_size);
    let r = write_all(fd, parts);
    if let (Err(_), Some(size)) = (r, size) {
        // A write cut short (a full disk) leaves no torn block behind.
        // Safety: our own descriptor.
        unsafe { libc::ftruncate(fd, size) };
    }
    // Safety: our own descriptor.
    unsafe { libc::close(fd) };
    r
}

/// Creates the file `name` in the directory `dir` with `header` (replacing
/// an earlier one), and closes it.
pub(crate) fn create_in(dir: i32, name: &[u8; NAME], header: &[u8]) -> Result<(), i32> {
    let fd = create_whole(dir, name, header, libc::O_WRONLY)?;
    // Safety: our own descriptor.
    unsafe { libc::close(fd) };
    Ok(())
}

/// Creates the file `name` in the directory `dir` with `header` and
/// returns its descriptor (opened with `flags`). The file appears under
/// its name only with its header written, so that a process killed in
/// between leaves no file a reader would refuse: it is made as
/// `NAME.part` ([`part`]) and renamed.
pub(crate) fn create_whole(
    dir: i32,
    name: &[u8; NAME],
    header: &[u8],
    flags: i32,
) -> Result<i32, i32> {
    if !fits_size_limit(header.len() as u64) {
        return Err(libc::EFBIG);
    }
    let part = part(name);
    // Safety: NUL-terminated names; our own descriptor.
    unsafe {
        let fd = libc::openat(
            dir,
            part.as_ptr() as *const libc::c_char,
            flags | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return Err(errno());
        }
        let r = write_all(fd, &[header]).and_then(|()| {
            let moved = libc::renameat(
                dir,
                part.as_ptr() as *const libc::c_char,
                dir,
                name.as_ptr() as *const libc::c_char,
            );
            if moved == 0 {
                Ok(())
            } else {
                Err(errno())
            }
        });
        if let Err(e) = r {
            libc::close(fd);
            libc::unlinkat(dir, part.as_ptr() as *const libc::c_char, 0);
            return Err(e);
        }
        Ok(fd)
    }
}

/// `NAME.part`: the name of a file while it is made.
pub(crate) fn part(name: &[u8; NAME]) -> [u8; NAME] {
    let mut out = *name;
    let end = name.iter().position(|&b| b == 0).unwrap_or(NAME);
    for (o, &b) in out[end..].iter_mut().zip(b".part\0") {
        *o = b;
    }
    out
}

/// The calling thread's last error number.
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_named_after_their_file() {
        let n = part(&name(b"thread-", u32::MAX, b".pxb"));
        assert_eq!(&n[..27], b"thread-4294967295.pxb.part\0");
    }

    #[test]
    fn names_have_five_digits_at_least() {
        let n = name(b"thread-", 42, b".pxe");
        assert_eq!(&n[..17], b"thread-00042.pxe\0");
        let n = name(b"thread-", u32::MAX, b".pxb");
        assert_eq!(&n[..22], b"thread-4294967295.pxb\0");
        assert_eq!(
            std::str::from_utf8(&n[..21]).unwrap(),
            parallax_model::spill::spill_file(u32::MAX)
        );
    }
}
