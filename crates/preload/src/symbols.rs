//! The load map and run-time names of code addresses.
//!
//! Every executable segment of every loaded file (the program, position
//! independent or not, and its shared libraries) is recorded once as a
//! `Module` definition, so that offline tools can map a run-time address to
//! a file and a virtual address. At run time the name of a function comes
//! from the file's symbol table (`.symtab`, else `.dynsym`), demangled with
//! the C++ runtime's `__cxa_demangle` when the program has one; the filter
//! of compiler-instrumented functions needs it. Source files and lines are
//! resolved offline from the debug information.
//!
//! Everything here is cold: it runs once per module and once per function.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

use parallax_model::defs::Def;

/// A loaded file's executable segment and, once read, its functions.
struct Module {
    /// Load bias.
    base: usize,
    start: usize,
    end: usize,
    path: String,
    /// (virtual address, size, symbol), sorted; `None` until read.
    syms: Option<Vec<(u64, u64, String)>>,
}

static MODULES: Mutex<Vec<Module>> = Mutex::new(Vec::new());

/// A function's names: demangled and as in the symbol table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    /// Demangled (or the symbol itself).
    pub pretty: String,
    /// The symbol.
    pub symbol: String,
}

/// The names of the function at run-time address `addr`, recording the
/// load map first if `addr` is in a module not seen yet; `None` if no
/// symbol covers it.
pub fn name_of(addr: usize) -> Option<Name> {
    function_at(addr).map(|(_, name)| name)
}

/// The run-time address where the function at `addr` starts, and its
/// names (see `name_of`).
pub fn function_at(addr: usize) -> Option<(usize, Name)> {
    let mut mods = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    if !mods.iter().any(|m| m.start <= addr && addr < m.end) {
        scan(&mut mods);
    }
    let m = mods.iter_mut().find(|m| m.start <= addr && addr < m.end)?;
    let syms = m
        .syms
        .get_or_insert_with(|| read_symbols(&m.path).unwrap_or_default());
    let vaddr = (addr - m.base) as u64;
    let i = syms.partition_point(|s| s.0 <= vaddr).checked_sub(1)?;
    let (start, size, sym) = &syms[i];
    if *size != 0 && vaddr >= start + size {
        return None;
    }
    Some((
        m.base + *start as usize,
        Name {
            pretty: demangle(sym),
            symbol: sym.clone(),
        },
    ))
}

/// Records the executable segments of modules not recorded yet.
fn scan(mods: &mut Vec<Module>) {
    let mut found: Vec<(usize, usize, usize, String)> = Vec::new();
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // Safety: the loader passes a valid info; `data` is our vector.
        let (info, found) = unsafe {
            (
                &*info,
                &mut *(data as *mut Vec<(usize, usize, usize, String)>),
            )
        };
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // Safety: a NUL-terminated name owned by the loader.
            unsafe { CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        for i in 0..info.dlpi_phnum as usize {
            // Safety: dlpi_phdr has dlpi_phnum entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 {
                let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
                found.push((
                    info.dlpi_addr as usize,
                    start,
                    start + ph.p_memsz as usize,
                    name.clone(),
                ));
            }
        }
        0
    }
    // Safety: the callback only reads the loader's data.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut found as *mut _ as *mut c_void) };
    let exe = std::fs::read_link("/proc/self/exe")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    for (i, (base, start, end, name)) in found.into_iter().enumerate() {
        if mods.iter().any(|m| m.start == start && m.end == end) {
            continue;
        }
        // The first module is the program; its name is empty.
        let path = if name.is_empty() && i == 0 {
            exe.clone()
        } else {
            name
        };
        if path.starts_with("linux-vdso") || path.is_empty() {
            continue;
        }
        parallax::define(Def::Module {
            base: base as u64,
            start: start as u64,
            end: end as u64,
            path: path.clone(),
        });
        mods.push(Module {
            base,
            start,
            end,
            path,
            syms: None,
        });
    }
}

/// The function symbols of an ELF file, sorted by address. `None` if the
/// file cannot be read, or memory is short for it.
fn read_symbols(path: &str) -> Option<Vec<(u64, u64, String)>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut data = Vec::new();
    data.try_reserve_exact(usize::try_from(len).ok()?).ok()?;
    f.read_to_end(&mut data).ok()?;
    let mut syms = elf_functions(&data)?;
    syms.sort_by_key(|s| s.0);
    syms.dedup_by_key(|s| s.0);
    Some(syms)
}

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

/// The functions (address, size, name) of a little-endian ELF64 file, from
/// its `.symtab` or, if stripped, its `.dynsym`. `None` for anything else.
pub fn elf_functions(d: &[u8]) -> Option<Vec<(u64, u64, String)>> {
    if d.get(0..4)? != b"\x7fELF" || *d.get(4)? != 2 || *d.get(5)? != 1 {
        return None;
    }
    let shoff = u64_at(d, 0x28)? as usize;
    let shentsize = u16_at(d, 0x3a)? as usize;
    let shnum = u16_at(d, 0x3c)? as usize;
    if shentsize < 64 {
        return None;
    }
    let section = |i: usize| -> Option<(u32, usize, usize, u32, usize)> {
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let ty = u32_at(d, h + 4)?;
        let off = u64_at(d, h + 0x18)? as usize;
        let size = u64_at(d, h + 0x20)? as usize;
        let link = u32_at(d, h + 0x28)?;
        let entsize = u64_at(d, h + 0x38)? as usize;
        Some((ty, off, size, link, entsize))
    };
    const SYMTAB: u32 = 2;
    const DYNSYM: u32 = 11;
    let mut out = Vec::new();
    for want in [SYMTAB, DYNSYM] {
        for i in 0..shnum {
            let Some((ty, off, size, link, entsize)) = section(i) else {
                continue;
            };
            if ty != want || entsize < 24 {
                continue;
            }
            let Some((_, str_off, str_size, _, _)) = section(link as usize) else {
                continue;
            };
            let strtab = d.get(str_off..str_off.checked_add(str_size)?)?;
            for k in 0..size / entsize {
                let e = off + k * entsize;
                let (Some(name), Some(info), Some(shndx), Some(value), Some(sz)) = (
                    u32_at(d, e),
                    d.get(e + 4),
                    u16_at(d, e + 6),
                    u64_at(d, e + 8),
                    u64_at(d, e + 16),
                ) else {
                    break;
                };
                let ty = info & 0xf;
                // Functions and indirect functions that are defined here.
                if !(ty == 2 || ty == 10) || shndx == 0 || value == 0 {
                    continue;
                }
                let Some(rest) = strtab.get(name as usize..) else {
                    continue;
                };
                let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                let s = String::from_utf8_lossy(&rest[..end]);
                // Versioned dynamic names keep their version out.
                let s = s.split('@').next().unwrap_or("").to_string();
                // Memory short: the names read so far are all there is.
                if parallax::failsafe::memory_short() || out.try_reserve(1).is_err() {
                    return Some(out);
                }
                if !s.is_empty() {
                    out.push((value, sz, s));
                }
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    Some(out)
}

type CxaDemangle =
    unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

/// A readable form of a symbol: C++ (when the program has the C++ runtime),
/// gfortran module procedures (`__mod_MOD_f` as `mod::f`), others as they
/// are.
pub fn demangle(sym: &str) -> String {
    if let Some(rest) = sym.strip_prefix("__") {
        if let Some((m, f)) = rest.split_once("_MOD_") {
            return format!("{m}::{f}");
        }
    }
    if sym.starts_with("_Z") {
        // Safety: dlsym with a NUL-terminated name; the function, if there,
        // has the signature of the Itanium C++ ABI.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__cxa_demangle".as_ptr()) };
        if !f.is_null() {
            let f: CxaDemangle = unsafe { std::mem::transmute(f) };
            if let Ok(c) = std::ffi::CString::new(sym) {
                let mut status: c_int = -1;
                // Safety: a valid name; the result is malloc'ed, freed here.
                let p = unsafe {
                    f(
                        c.as_ptr(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        &mut status,
                    )
                };
                if !p.is_null() {
                    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
                    unsafe { libc::free(p as *mut c_void) };
                    if status == 0 {
                        return s;
                    }
                }
            }
        }
    }
    sym.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_symbols() {
        // The test binary is an ELF file with this very function in it.
        let exe = std::fs::read("/proc/self/exe").unwrap();
        let syms = elf_functions(&exe).unwrap();
        assert!(syms.iter().any(|s| s.2.contains("reads_its_own_symbols")));
        assert!(elf_functions(b"not an elf file").is_none());
        assert!(elf_functions(&exe[..100]).is_none() || elf_functions(&exe[..100]) == Some(vec![]));
        for cut in [0, 64, 1000, exe.len() / 2] {
            let _ = elf_functions(&exe[..cut]);
        }
    }

    #[test]
    fn names_its_own_functions() {
        let n = name_of(names_its_own_functions as *const () as usize).unwrap();
        assert!(n.symbol.contains("names_its_own_functions"), "{n:?}");
        assert_eq!(demangle("__grid_MOD_step"), "grid::step");
        assert_eq!(demangle("plain"), "plain");
    }
}
