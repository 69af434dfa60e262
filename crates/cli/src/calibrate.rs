//! `parallax calibrate`: the cost of Parallax's probes on this machine, as a
//! table shaped like the Cray tracing overhead table (mean, variance and
//! standard deviation, in clock ticks and in ns).

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::json;

use parallax::calibrate;
use parallax::Mode;

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
    let results: Vec<_> = modes
        .iter()
        .map(|&m| {
            let mut c = calibrate::measure(m, a.batches);
            c.extend(calibrate::measure_context(m));
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
