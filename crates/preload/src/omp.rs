//! The Rust side of the OpenMP wrappers (`shim/gomp.c`) and OMPT tool
//! (`shim/ompt.c`): regions named for the construct and the function it is
//! in.
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
/// came from (gcc `main._omp_fn.0`, recent clang `main.omp_outlined`;
/// clang 14 names them for nothing, see `anonymous`).
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

/// Outlined bodies whose names do not say their function (by run-time
/// start address), and the function each was outlined from.
static OUTLINED: Mutex<Option<HashMap<usize, String>>> = Mutex::new(None);

/// Whether the name of an outlined body says nothing of its function:
/// clang 14 outlines the constructs of a file into `.omp_outlined.`,
/// `.omp_outlined..1`, ... (and `.omp_outlined._debug__` with -g), and
/// tasks into `.omp_task_entry.`.
fn anonymous(function: &str) -> bool {
    function.starts_with(".omp_")
}

/// The name of the function holding the code at `site`, for a construct of
/// a team forked at `ctx` (0 if none): the function `site` is in, or, if
/// that is a body outlined under an anonymous name, the function that the
/// team's fork is in (which the fork's own region learnt the same way when
/// it is in such a body too: a nested team).
fn function_name(site: usize, ctx: usize) -> Option<String> {
    let (start, name) = crate::symbols::function_at(site)?;
    let own = enclosing(&name.pretty);
    if !anonymous(own) {
        return Some(own.to_string());
    }
    let fork = if ctx == 0 {
        None
    } else {
        crate::symbols::function_at(ctx)
    };
    let mut outlined = OUTLINED.lock().unwrap_or_else(|e| e.into_inner());
    let outlined = outlined.get_or_insert_with(HashMap::new);
    if let Some(n) = outlined.get(&start) {
        return Some(n.clone());
    }
    let parent = fork.and_then(|(fstart, fname)| {
        let f = enclosing(&fname.pretty);
        if anonymous(f) {
            outlined.get(&fstart).cloned()
        } else {
            Some(f.to_string())
        }
    });
    match parent {
        Some(p) => {
            outlined.insert(start, p.clone());
            Some(p)
        }
        None => Some(own.to_string()),
    }
}

/// See `shim/pxl.h`: the calling thread is thread `num` of an OpenMP team.
#[no_mangle]
pub extern "C" fn parallax_pl_omp_thread(num: u32) {
    parallax::contained(|| parallax::label_thread(&format!("OpenMP thread {num}")));
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
    unsafe { parallax_pl_omp_region_in(what, kind, site, 0) }
}

/// See `shim/pxl.h`.
///
/// # Safety
/// `what` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn parallax_pl_omp_region_in(
    what: *const c_char,
    kind: c_int,
    site: usize,
    ctx: usize,
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
        let base = match function_name(site, ctx) {
            Some(f) => format!("{what} @ {f}"),
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
    use super::{anonymous, enclosing};

    #[test]
    fn outlined_bodies_are_named_for_their_function() {
        assert_eq!(enclosing("main._omp_fn.0"), "main");
        assert_eq!(enclosing("solve._omp_fn.12"), "solve");
        assert_eq!(enclosing("main.omp_outlined"), "main");
        assert_eq!(enclosing(".omp_outlined."), ".omp_outlined.");
        assert_eq!(enclosing("kernel"), "kernel");
        assert!(anonymous(enclosing(".omp_outlined..3")));
        assert!(anonymous(enclosing(".omp_outlined._debug__")));
        assert!(anonymous(enclosing(".omp_task_entry.")));
        assert!(!anonymous(enclosing("main.omp_outlined")));
        assert!(!anonymous(enclosing("main")));
    }
}
