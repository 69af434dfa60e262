//! Offline resolution of compiler-instrumented functions: each region that
//! the interposition library registered with a code address (a
//! `CodeAddress` definition) is looked up, through the process's load map
//! (`Module` definitions), in the file's debug information and symbol
//! table, and redefined with its demangled name and source file and line
//! (a new `Region` record appended to the process's definitions).

use std::collections::BTreeMap;
use std::path::Path;

use parallax::RegionKind;
use parallax_model::defs::Def;
use parallax_model::experiment::{self, Process};

/// What resolving one process did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Regions redefined.
    pub resolved: usize,
    /// Regions whose file had no line information for them.
    pub without_lines: usize,
    /// Files that could not be read.
    pub problems: Vec<String>,
}

/// Resolves the code addresses of process `p` (unless done before) and
/// appends the results to its definitions.
pub fn resolve(p: &Process) -> anyhow::Result<Outcome> {
    let mut out = Outcome::default();
    // Group the addresses still to resolve by module.
    let mut by_module: BTreeMap<(String, u64), Vec<(u32, u64)>> = BTreeMap::new();
    for (&region, &addr) in &p.code_addresses {
        let Some(r) = p.regions.get(&region) else {
            continue;
        };
        if !r.file.is_empty() || r.line != 0 {
            continue; // resolved already
        }
        let Some(m) = p.module_of(addr) else {
            continue;
        };
        by_module
            .entry((m.path.clone(), m.base))
            .or_default()
            .push((region, addr));
    }
    let mut defs = Vec::new();
    // Construct names in use: two constructs on one line stay apart.
    let mut taken: std::collections::HashSet<String> =
        p.regions.values().map(|r| r.name.clone()).collect();
    for ((path, base), items) in by_module {
        let loader = match addr2line::Loader::new(&path) {
            Ok(l) => l,
            Err(e) => {
                out.problems.push(format!("{path}: {e}"));
                continue;
            }
        };
        for (region, addr) in items {
            let old = &p.regions[&region];
            // A function's address is its first instruction; a construct's
            // (an OpenMP region) is the return address of a call in it, one
            // past the call.
            let function = old.kind == RegionKind::Function;
            let vaddr = addr.wrapping_sub(base).wrapping_sub(u64::from(!function));
            let (file, line) = match loader.find_location(vaddr) {
                Ok(Some(l)) => (l.file.unwrap_or("").to_string(), l.line.unwrap_or(0)),
                _ => (String::new(), 0),
            };
            if !function {
                if file.is_empty() {
                    out.without_lines += 1;
                    continue;
                }
                out.resolved += 1;
                defs.push(Def::Region {
                    id: region,
                    kind: old.kind,
                    name: construct_name(&old.name, &file, line, &mut taken),
                    file,
                    line,
                });
                continue;
            }
            // The run-time name is already demangled, unless the program had
            // no demangler or no symbol for it.
            let unnamed = ["0x", "_Z", "_R"].iter().any(|p| old.name.starts_with(p));
            let name = if unnamed {
                function_name(&loader, vaddr).unwrap_or_else(|| old.name.clone())
            } else {
                old.name.clone()
            };
            if file.is_empty() {
                out.without_lines += 1;
                if name == old.name {
                    continue;
                }
            }
            out.resolved += 1;
            defs.push(Def::Region {
                id: region,
                kind: RegionKind::Function,
                name,
                file,
                line,
            });
        }
    }
    if !defs.is_empty() {
        experiment::append_defs(&p.dir, &defs)?;
    }
    Ok(out)
}

/// The name of a construct's region (`omp barrier @ main`, see the
/// interposition library's `omp.rs`) with its place in the source:
/// `omp barrier @ solver.c:41`.
/// `taken` has the names in use, and gets this one.
fn construct_name(
    name: &str,
    file: &str,
    line: u32,
    taken: &mut std::collections::HashSet<String>,
) -> String {
    let what = name.split(" @ ").next().unwrap_or(name);
    let base = file.rsplit('/').next().unwrap_or(file);
    let first = format!("{what} @ {base}:{line}");
    let mut name = first.clone();
    let mut k = 1;
    while taken.contains(&name) {
        k += 1;
        name = format!("{first} #{k}");
    }
    taken.insert(name.clone());
    name
}

/// The demangled name of the function at `vaddr`: from the debug
/// information (the outermost frame at that address), else the symbol
/// table.
fn function_name(loader: &addr2line::Loader, vaddr: u64) -> Option<String> {
    if let Ok(mut frames) = loader.find_frames(vaddr) {
        let mut last = None;
        while let Ok(Some(f)) = frames.next() {
            if let Some(n) = f.function.as_ref().and_then(|n| n.demangle().ok()) {
                last = Some(n.into_owned());
            }
        }
        if last.is_some() {
            return last;
        }
    }
    loader
        .find_symbol(vaddr)
        .map(|s| addr2line::demangle_auto(s.into(), None).into_owned())
}

/// Resolves every process of the experiment in `dir` that `wanted` selects;
/// returns a one-line summary, if anything was to resolve.
pub fn resolve_experiment(dir: &Path, wanted: impl Fn(&Process) -> bool) -> Option<String> {
    let exp = experiment::Experiment::open(dir).ok()?;
    let (mut resolved, mut no_lines, mut problems) = (0, 0, Vec::new());
    for p in exp.processes.iter().filter(|p| wanted(p)) {
        if p.code_addresses.is_empty() {
            continue;
        }
        match resolve(p) {
            Ok(o) => {
                resolved += o.resolved;
                no_lines += o.without_lines;
                problems.extend(o.problems);
            }
            Err(e) => problems.push(format!("rank {}: {e:#}", p.rank)),
        }
    }
    if resolved == 0 && no_lines == 0 && problems.is_empty() {
        return None;
    }
    let mut s =
        format!("resolved {resolved} instrumented functions and constructs to source lines");
    if no_lines > 0 {
        s += &format!("; {no_lines} without line information (build with -g to get them)");
    }
    for p in problems {
        s += &format!("; cannot read {p}");
    }
    Some(s)
}
