//! `parallax calibrate`: the cost of Parallax's probes on this machine, as a
//! table shaped like the Cray tracing overhead table (mean, variance and
//! standard deviation, in clock ticks and in ns). The probes that only the
//! interposition library makes (the C entry points and the compiler hooks)
//! are timed inside it: this command loads it, without measuring, and asks.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;

use parallax::calibrate;
use parallax::Mode;
use parallax_model::defs::Probe;
use parallax_model::experiment::Calibration;

/// Arguments of `parallax calibrate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Batches of 256 probes measured per probe kind and mode.
    #[arg(long, default_value_t = 200)]
    pub batches: usize,
    /// Fenced probes (each between load fences, its clock read between two
    /// more), as a measurement with PARALLAX_CLOCK=tsc-fenced makes them.
    #[arg(long)]
    pub fenced: bool,
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    calibrate::use_clock(a.fenced);
    let ns_per_tick = calibrate::ns_per_tick(20);
    let resolution = calibrate::clock_resolution_ns(100_000);
    let source = parallax::clock::source();
    let modes = [Mode::Trace, Mode::Profile, Mode::Both];
    let library = crate::run::preload_library();
    let table = library.as_deref().and_then(library_table);
    if table.is_none() {
        crate::console::note(
            "the interposition library was not found or did not load: the C entry points' and \
             the compiler hooks' costs are not shown (set PARALLAX_PRELOAD to its path)",
        );
    }
    let results: Vec<_> = modes
        .iter()
        .map(|&m| {
            let mut c = calibrate::measure(m, a.batches);
            c.extend(calibrate::measure_context(m));
            // The paths only the library has, as it times them.
            if let Some(f) = table {
                let own: Vec<Probe> = c.iter().map(|x| x.probe).collect();
                c.extend(
                    library_calibration(f, m, a.batches, a.fenced)
                        .into_iter()
                        .filter(|x| !own.contains(&x.probe)),
                );
            }
            (m, c)
        })
        .collect();
    if a.json {
        let v = json!({
            "clock": {
                "source": format!("{source:?}").to_lowercase(),
                "fenced": a.fenced,
                "ns_per_tick": ns_per_tick,
                "ghz": 1.0 / ns_per_tick,
                "resolution_ns": resolution,
            },
            "probes": results.iter().flat_map(|(m, cs)| cs.iter().map(move |c| json!({
                "mode": m.name(),
                "probe": c.probe.name(),
                "mean_ns": c.mean_ns,
                "sd_ns": c.sd_ns,
                "var_ns2": c.sd_ns * c.sd_ns,
                "min_ns": c.min_ns,
                "mean_ticks": c.mean_ns / ns_per_tick,
                "batches": c.samples,
            }))).collect::<Vec<_>>(),
        });
        crate::console::out_json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Clock: {:?}{}, {:.4} GHz ({:.4} ns per tick), smallest step between reads {:.1} ns",
        source,
        if a.fenced { " (fenced reads)" } else { "" },
        1.0 / ns_per_tick,
        ns_per_tick,
        resolution
    );
    let _ = writeln!(
        s,
        "Probe costs, {} batches of 256 per probe; mean, variance and standard deviation of the",
        a.batches
    );
    let _ = writeln!(s, "per-probe cost of a batch (variance in unit²).\n");
    let _ = writeln!(
        s,
        "{:<8} {:<11} {:<5} {:>9} {:>11} {:>9} {:>9}",
        "mode", "probe", "unit", "mean", "variance", "sd", "min"
    );
    for (m, cs) in &results {
        for c in cs {
            for (unit, k) in [("ticks", 1.0 / ns_per_tick), ("ns", 1.0)] {
                let _ = writeln!(
                    s,
                    "{:<8} {:<11} {:<5} {:>9.2} {:>11.4} {:>9.3} {:>9.2}",
                    m.name(),
                    c.probe.name(),
                    unit,
                    c.mean_ns * k,
                    (c.sd_ns * k).powi(2),
                    c.sd_ns * k,
                    c.min_ns * k
                );
            }
        }
    }
    crate::console::out(&s)?;
    Ok(ExitCode::SUCCESS)
}

/// `parallax_pl_calibration_table` of the interposition library.
type TableFn = unsafe extern "C" fn(i32, u32, i32, *mut f64, u32) -> u32;

/// Fields per calibration in the library's table.
const FIELDS: usize = 5;

/// Loads the interposition library at `path` (it measures nothing: no
/// `PARALLAX_MODE` reaches it here) and finds its calibration entry point.
fn library_table(path: &std::path::Path) -> Option<TableFn> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    if std::env::var_os("PARALLAX_MODE").is_some() {
        // The library would start measuring this process.
        return None;
    }
    // Its own definitions first: the C library's empty stand-ins for the
    // compiler hooks would otherwise answer its calibration's calls (a
    // measured program has the library preloaded, ahead of them).
    // Safety: a path; the library is kept loaded for the process's life.
    let h = unsafe {
        libc::dlopen(
            c.as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
        )
    };
    if h.is_null() {
        return None;
    }
    // Safety: a NUL-terminated name.
    let f = unsafe { libc::dlsym(h, c"parallax_pl_calibration_table".as_ptr()) };
    // Safety: the symbol has this signature (crates/preload/src/capi.rs).
    (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, TableFn>(f) })
}

/// The library's calibration of every probe in mode `m`.
fn library_calibration(f: TableFn, m: Mode, batches: usize, fenced: bool) -> Vec<Calibration> {
    let mode = match m {
        Mode::Profile => 1,
        Mode::Trace => 2,
        _ => 3,
    };
    let max = Probe::ALL.len();
    let mut buf = vec![0f64; max * FIELDS];
    let batches = u32::try_from(batches).unwrap_or(u32::MAX);
    // Safety: `buf` holds `max` records.
    let n = unsafe { f(mode, batches, fenced as i32, buf.as_mut_ptr(), max as u32) } as usize;
    buf.chunks(FIELDS)
        .take(n.min(max))
        .filter_map(|r| {
            Some(Calibration {
                probe: *Probe::ALL.get(r[0] as usize)?,
                mode: m,
                mean_ns: r[1],
                sd_ns: r[2],
                min_ns: r[3],
                samples: r[4] as u32,
                tick: 0,
            })
        })
        .collect()
}
