//! Provenance of a run that the experiment does not hold: the source
//! revision of the program and the compiler that built it. Both are read
//! from files (no subprocess), so recording stays cheap.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The git revision (commit id) of the repository holding `program`, if it
/// lives in one: `.git` is looked for in the program's directory and its
/// parents.
pub fn git_revision(program: &Path) -> Option<String> {
    let start = std::fs::canonicalize(program).ok()?;
    let mut dir = start.parent();
    while let Some(d) = dir {
        let dotgit = d.join(".git");
        if let Some(gitdir) = git_dir(&dotgit) {
            return head_commit(&gitdir);
        }
        dir = d.parent();
    }
    None
}

/// The git directory that `.git` names: itself, or the `gitdir:` of a
/// worktree's `.git` file.
fn git_dir(dotgit: &Path) -> Option<PathBuf> {
    if dotgit.is_dir() {
        return Some(dotgit.to_path_buf());
    }
    let text = std::fs::read_to_string(dotgit).ok()?;
    let rel = text.strip_prefix("gitdir:")?.trim();
    Some(dotgit.parent()?.join(rel))
}

fn head_commit(gitdir: &Path) -> Option<String> {
    let head = std::fs::read_to_string(gitdir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
        return is_commit(head).then(|| head.to_string());
    };
    // A worktree keeps refs in the common directory.
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .ok()
        .map(|c| gitdir.join(c.trim()))
        .unwrap_or_else(|| gitdir.to_path_buf());
    for dir in [gitdir, common.as_path()] {
        if let Ok(s) = std::fs::read_to_string(dir.join(name)) {
            let s = s.trim();
            if is_commit(s) {
                return Some(s.to_string());
            }
        }
        if let Ok(packed) = std::fs::read_to_string(dir.join("packed-refs")) {
            for line in packed.lines() {
                if let Some((id, r)) = line.split_once(' ') {
                    if r == name && is_commit(id) {
                        return Some(id.to_string());
                    }
                }
            }
        }
    }
    None
}

fn is_commit(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The compilers that built `program`, from its ELF `.comment` section
/// (e.g. "GCC: (Debian 12.2.0-14) 12.2.0; rustc version 1.85.0"). `None`
/// for a file that is not a 64-bit little-endian ELF or has no comment.
pub fn compiler(program: &Path) -> Option<String> {
    let mut f = File::open(program).ok()?;
    let mut eh = [0u8; 64];
    f.read_exact(&mut eh).ok()?;
    if &eh[..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let shoff = u64::from_le_bytes(eh[0x28..0x30].try_into().ok()?);
    let shentsize = u16::from_le_bytes([eh[0x3a], eh[0x3b]]) as u64;
    let shnum = u16::from_le_bytes([eh[0x3c], eh[0x3d]]) as u64;
    let shstrndx = u16::from_le_bytes([eh[0x3e], eh[0x3f]]) as u64;
    if shentsize != 64 || shnum == 0 || shnum > 4096 || shstrndx >= shnum {
        return None;
    }
    let mut sh = vec![0u8; (shentsize * shnum) as usize];
    f.seek(SeekFrom::Start(shoff)).ok()?;
    f.read_exact(&mut sh).ok()?;
    let section = |i: u64| -> Option<(u32, u64, u64)> {
        let s = sh.get((i * shentsize) as usize..(i * shentsize + 64) as usize)?;
        let name = u32::from_le_bytes(s[0..4].try_into().ok()?);
        let off = u64::from_le_bytes(s[0x18..0x20].try_into().ok()?);
        let size = u64::from_le_bytes(s[0x20..0x28].try_into().ok()?);
        Some((name, off, size))
    };
    let (_, stroff, strsize) = section(shstrndx)?;
    let names = read_at(&mut f, stroff, strsize.min(1 << 20))?;
    for i in 0..shnum {
        let (name, off, size) = section(i)?;
        let n = names.get(name as usize..)?;
        if n.starts_with(b".comment\0") {
            let text = read_at(&mut f, off, size.min(1 << 16))?;
            let mut seen: Vec<String> = Vec::new();
            for s in text.split(|&b| b == 0) {
                let s = String::from_utf8_lossy(s).trim().to_string();
                if !s.is_empty() && !seen.contains(&s) {
                    seen.push(s);
                }
            }
            return (!seen.is_empty()).then(|| seen.join("; "));
        }
    }
    None
}

fn read_at(f: &mut File, off: u64, len: u64) -> Option<Vec<u8>> {
    let mut v = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(off)).ok()?;
    f.read_exact(&mut v).ok()?;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_has_a_compiler_and_garbage_has_none() {
        let exe = std::env::current_exe().unwrap();
        let c = compiler(&exe);
        assert!(c.is_some_and(|c| c.contains("rustc") || c.contains("GCC")));
        let junk = std::env::temp_dir().join(format!("parallax-db-junk-{}", std::process::id()));
        let mut bytes = b"\x7fELF\x02\x01".to_vec();
        bytes.resize(200, 0xff);
        std::fs::write(&junk, &bytes).unwrap();
        assert_eq!(compiler(&junk), None);
        let _ = std::fs::remove_file(&junk);
    }

    #[test]
    fn damaged_elf_files_never_panic() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let junk = std::env::temp_dir().join(format!("parallax-db-elf-{}", std::process::id()));
        // Cut short anywhere, and with header bytes overwritten.
        let mut x = 0x9e37_79b9u32;
        for i in 0..200 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            assert!(exe.len() > 1 << 16);
            let mut b = exe[..(x as usize % (1 << 16))].to_vec();
            if i % 2 == 0 && b.len() > 64 {
                let at = (x >> 8) as usize % 64;
                b[at] = (x >> 3) as u8;
            }
            std::fs::write(&junk, &b).unwrap();
            // Linkers put the section headers at the end: a file cut
            // before them has no readable comment.
            assert_eq!(compiler(&junk), None, "cut to {} bytes", b.len());
        }
        let _ = std::fs::remove_file(&junk);
    }

    #[test]
    fn revision_of_a_repository_checkout() {
        let d = std::env::temp_dir().join(format!("parallax-db-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join(".git/refs/heads")).unwrap();
        std::fs::create_dir_all(d.join("bin")).unwrap();
        std::fs::write(d.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let id = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(
            d.join(".git/packed-refs"),
            format!("{id} refs/heads/main\n"),
        )
        .unwrap();
        std::fs::write(d.join("bin/app"), b"").unwrap();
        assert_eq!(git_revision(&d.join("bin/app")).as_deref(), Some(id));
        let _ = std::fs::remove_dir_all(&d);
    }
}
