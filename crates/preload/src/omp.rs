//! The Rust side of the OpenMP wrappers (`shim/gomp.c`): regions named for
//! the construct and the function it is in.
//!
//! An OpenMP construct has no name of its own; its region is named for what
//! it is and where: `omp parallel @ main`, from the return address of the
//! runtime call that the compiler placed in the construct. The address is
//! recorded with the region (`CodeAddress`), so that `parallax run` resolves
//! it to the source line offline, as for compiler-instrumented functions.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int};
use std::sync::Mutex;

use parallax_model::defs::{Def, Entry};
use parallax_model::region::RegionKind;

use crate::capi::{active, text};

/// Regions by construct and call site, and the names given.
#[derive(Default)]
struct Sites {
    ids: HashMap<(String, usize), u32>,
    names: HashSet<String>,
}

static SITES: Mutex<Option<Sites>> = Mutex::new(None);

/// The readable name of the function holding a construct: the function a
/// compiler outlined a construct's body into is named for the function it
/// came from (gcc `main._omp_fn.0`, clang `main.omp_outlined`).
pub fn enclosing(function: &str) -> &str {
    for cut in ["._omp_fn.", ".omp_outlined", "._omp_cpyfn."] {
        if let Some(i) = function.find(cut) {
            if i > 0 {
                return &function[..i];
            }
        }
    }
    function
}

/// See `shim/pxl.h`.
///
/// # Safety
/// `what` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_omp_region(
    what: *const c_char,
    kind: c_int,
    site: usize,
) -> u32 {
    // Safety: per the contract.
    let what = unsafe { text(what) };
    parallax::contained(|| {
        let Some(kind) = u8::try_from(kind).ok().and_then(RegionKind::from_u8) else {
            return 0;
        };
        if !active() {
            return 0;
        }
        let mut sites = SITES.lock().unwrap_or_else(|e| e.into_inner());
        let sites = sites.get_or_insert_with(Sites::default);
        if let Some(&id) = sites.ids.get(&(what.clone(), site)) {
            return id;
        }
        let function = crate::symbols::name_of(site).map(|n| n.pretty);
        let base = match &function {
            Some(f) => format!("{what} @ {}", enclosing(f)),
            None => what.clone(),
        };
        // Two sites of one construct in one function: numbered in the
        // order met (`parallax run` names them by source line when the
        // program has line information).
        let mut name = base.clone();
        let mut k = 1;
        while sites.names.contains(&name) {
            k += 1;
            name = format!("{base} #{k}");
        }
        let id = parallax::register_region(&name, kind, "", 0);
        if id == 0 {
            return 0;
        }
        parallax::define(Def::Entry {
            region: id,
            entry: Entry::C,
        });
        if site != 0 {
            parallax::define(Def::CodeAddress {
                region: id,
                addr: site as u64,
            });
        }
        sites.names.insert(name);
        sites.ids.insert((what, site), id);
        id
    })
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::enclosing;

    #[test]
    fn outlined_bodies_are_named_for_their_function() {
        assert_eq!(enclosing("main._omp_fn.0"), "main");
        assert_eq!(enclosing("solve._omp_fn.12"), "solve");
        assert_eq!(enclosing("main.omp_outlined"), "main");
        assert_eq!(enclosing(".omp_outlined."), ".omp_outlined.");
        assert_eq!(enclosing("kernel"), "kernel");
    }
}
