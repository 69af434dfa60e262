//! What `parallax run` needs to know about a program file before running
//! it: is it an executable at all, is it dynamically linked (LD_PRELOAD
//! needs the dynamic loader), which libraries does it need, and does it
//! carry the Parallax runtime itself.

use std::path::{Path, PathBuf};

/// What a program file is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// A script started by an interpreter (`#!`).
    Script,
    /// A dynamically linked ELF executable, with its `DT_NEEDED` libraries
    /// and whether it contains the Parallax runtime (a Rust program linked
    /// with the `parallax` crate).
    Dynamic {
        needed: Vec<String>,
        runpath: Vec<String>,
        has_runtime: bool,
    },
    /// An ELF executable without a program interpreter.
    Static,
    /// Anything else.
    Unknown,
}

/// A string that every program linked with the Parallax runtime contains
/// (the name of one of the variables it reads at start).
const RUNTIME_MARKER: &[u8] = b"PARALLAX_PROFILE_NODES";

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        d.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        d.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        d.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Whether `needle` (not empty) occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let first = needle[0];
    let mut at = 0;
    while let Some(p) = hay[at..].iter().position(|&b| b == first) {
        let s = at + p;
        if hay[s..].starts_with(needle) {
            return true;
        }
        at = s + 1;
    }
    false
}

/// Reads and classifies the program file `path`.
pub fn inspect(path: &Path) -> std::io::Result<Kind> {
    let data = std::fs::read(path)?;
    Ok(classify(&data))
}

/// Classifies the bytes of a program file.
pub fn classify(d: &[u8]) -> Kind {
    if d.starts_with(b"#!") {
        return Kind::Script;
    }
    if !d.starts_with(b"\x7fELF") {
        return Kind::Unknown;
    }
    // 64-bit little-endian only (the machines Parallax runs on).
    if d.get(4) != Some(&2) || d.get(5) != Some(&1) {
        return Kind::Unknown;
    }
    parse64(d).unwrap_or(Kind::Unknown)
}

fn parse64(d: &[u8]) -> Option<Kind> {
    let phoff = u64_at(d, 0x20)? as usize;
    let phentsize = u16_at(d, 0x36)? as usize;
    let phnum = u16_at(d, 0x38)? as usize;
    let mut interp = false;
    let mut dynamic = None;
    let mut loads = Vec::new();
    for i in 0..phnum {
        let h = phoff.checked_add(i.checked_mul(phentsize)?)?;
        let ty = u32_at(d, h)?;
        let off = u64_at(d, h + 8)?;
        let vaddr = u64_at(d, h + 16)?;
        let filesz = u64_at(d, h + 32)?;
        match ty {
            1 => loads.push((vaddr, off, filesz)),
            2 => dynamic = Some((off as usize, filesz as usize)),
            3 => interp = true,
            _ => {}
        }
    }
    if !interp {
        return Some(Kind::Static);
    }
    let to_off = |vaddr: u64| {
        loads
            .iter()
            .find(|(v, _, sz)| *v <= vaddr && vaddr < v + sz)
            .map(|(v, off, _)| (vaddr - v + off) as usize)
    };
    let mut needed_at = Vec::new();
    let mut runpath_at = Vec::new();
    let mut strtab = None;
    if let Some((off, size)) = dynamic {
        let mut e = off;
        while e + 16 <= off + size {
            let tag = u64_at(d, e)?;
            let val = u64_at(d, e + 8)?;
            match tag {
                0 => break,
                1 => needed_at.push(val as usize),
                5 => strtab = to_off(val),
                15 | 29 => runpath_at.push(val as usize),
                _ => {}
            }
            e += 16;
        }
    }
    let string = |at: usize| -> Option<String> {
        let s = d.get(strtab?.checked_add(at)?..)?;
        let end = s.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&s[..end]).into_owned())
    };
    Some(Kind::Dynamic {
        needed: needed_at.into_iter().filter_map(string).collect(),
        runpath: runpath_at
            .into_iter()
            .filter_map(string)
            .flat_map(|s| s.split(':').map(str::to_string).collect::<Vec<_>>())
            .collect(),
        has_runtime: contains(d, RUNTIME_MARKER),
    })
}

/// Where the dynamic loader would look for a library of a program in
/// `program_dir` with run paths `runpath`: its run paths, LD_LIBRARY_PATH,
/// the directories of /etc/ld.so.conf.d and the default ones.
pub fn library_dirs(program_dir: &Path, runpath: &[String]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = runpath
        .iter()
        .map(|r| PathBuf::from(r.replace("$ORIGIN", &program_dir.to_string_lossy())))
        .collect();
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    if let Ok(entries) = std::fs::read_dir("/etc/ld.so.conf.d") {
        for e in entries.flatten() {
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                dirs.extend(
                    text.lines()
                        .map(str::trim)
                        .filter(|l| l.starts_with('/'))
                        .map(PathBuf::from),
                );
            }
        }
    }
    for d in [
        "/lib",
        "/usr/lib",
        "/lib64",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/local/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_real_files() {
        let sh = classify(&std::fs::read("/bin/sh").unwrap());
        match sh {
            Kind::Dynamic {
                needed,
                has_runtime,
                ..
            } => {
                assert!(
                    needed.iter().any(|n| n.starts_with("libc.so")),
                    "{needed:?}"
                );
                assert!(!has_runtime);
            }
            k => panic!("/bin/sh is {k:?}"),
        }
        // This test binary links the Parallax runtime, probes included.
        std::hint::black_box(parallax::mode as fn() -> parallax::Mode);
        match classify(&std::fs::read("/proc/self/exe").unwrap()) {
            Kind::Dynamic { has_runtime, .. } => assert!(has_runtime),
            k => panic!("{k:?}"),
        }
        assert_eq!(classify(b"#!/bin/sh\necho"), Kind::Script);
        assert_eq!(classify(b"plain text"), Kind::Unknown);
        let sh = std::fs::read("/bin/sh").unwrap();
        for cut in [5, 64, 200, 1000] {
            let _ = classify(&sh[..cut]);
        }
    }
}
