//! How long a large experiment's HTML report takes to build and to open in
//! headless Chromium, and how big it is.
//!
//! ```sh
//! cargo build --release -p parallax-cli --example html_bench
//! target/release/examples/html_bench /tmp/bench 4 250000     # 10 M events, 4 ranks
//! target/release/examples/html_bench /tmp/bench 1000 1000    # 10 M events, 1000 ranks
//! target/release/examples/html_bench /tmp/bench --exp DIR    # an existing experiment
//! ```
//!
//! Writes a synthetic MPI-like experiment (ten events per rank and
//! iteration), builds its report, opens it three times in a fresh browser
//! and prints, as JSON, the size, the build time and the open times: from
//! navigation start to the summary and timeline overview drawn (the page's
//! `pxReady`), and the time to draw single visits after zooming in.

#[path = "../tests/cdp/mod.rs"]
mod cdp;
#[path = "../tests/synth/mod.rs"]
mod synth;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use parallax_model::experiment::Experiment;
use parallax_report::html::{self, Options};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .map_or("/tmp/parallax-html-bench", String::as_str),
    );
    let ranks: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4);
    let iterations: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(250_000);
    let given = (args.get(2).map(String::as_str) == Some("--exp")).then(|| PathBuf::from(&args[3]));
    let name = match &given {
        Some(d) => d
            .file_name()
            .map_or("exp".into(), |n| n.to_string_lossy().into_owned()),
        None => format!("synth-{ranks}x{iterations}"),
    };
    let exp_dir = given.clone().unwrap_or_else(|| dir.join(&name));
    let t = Instant::now();
    let mut events = 0;
    if given.is_none() {
        let _ = std::fs::remove_dir_all(&exp_dir);
        std::fs::create_dir_all(&exp_dir).expect("create the experiment directory");
        events = synth::mpi_like(&exp_dir, ranks, iterations);
    }
    std::fs::create_dir_all(&dir).expect("create the output directory");
    let write_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let exp = Experiment::open(&exp_dir).expect("open");
    let (page, built) = html::page(&exp, &Options::default()).expect("build the report");
    let build_s = t.elapsed().as_secs_f64();
    let file = dir.join(format!("{name}.html"));
    if given.is_some() {
        events = built.events;
    }
    std::fs::write(&file, &page).expect("write the report");

    let bin = cdp::chromium().expect("chromium");
    let mut opens = Vec::new();
    let mut zooms = Vec::new();
    for _ in 0..3 {
        let mut b = cdp::Browser::launch(&bin, 1400, 900).expect("chromium starts");
        let t = Instant::now();
        b.open(&file).expect("open");
        let ready = b
            .wait_for("window.pxReady", Duration::from_secs(120))
            .expect("page ready");
        let wall = t.elapsed().as_secs_f64();
        assert!(b.errors().is_empty(), "{:?}", b.errors());
        opens.push((ready.as_f64().unwrap_or(f64::NAN) / 1e3, wall));
        // Zoom to a thousandth of the run, in the middle of the part with
        // single visits (all of it for a trace that fits), and wait for
        // them.
        b.eval("document.getElementById('nav-timeline').click()")
            .expect("timeline");
        let t = Instant::now();
        b.eval("(() => { const t = pxState.timelines[0], d = t.detail; const w = Math.min(t.t.span * 0.001, (d.t1 - d.t0) * 0.01); const a = (d.t0 + d.t1) / 2; t.setView(a, a + w); })()")
            .expect("zoom");
        b.wait_for(
            "pxState.timelines[0].mode === 'visits'",
            Duration::from_secs(120),
        )
        .expect("visits drawn");
        zooms.push(t.elapsed().as_secs_f64());
        b.screenshot(&dir.join(format!("{name}-zoomed.png")))
            .expect("screenshot");
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let out = serde_json::json!({
        "experiment": exp_dir,
        "locations": exp.locations().count(),
        "events": events,
        "visits": built.visits,
        "arrows": built.arrows,
        "write_experiment_s": write_s,
        "build_report_s": build_s,
        "html_bytes": page.len(),
        "open_to_ready_s": opens.iter().map(|o| o.0).collect::<Vec<_>>(),
        "open_to_ready_median_s": med(opens.iter().map(|o| o.0).collect()),
        "navigate_to_ready_wall_median_s": med(opens.iter().map(|o| o.1).collect()),
        "zoom_to_visits_median_s": med(zooms),
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}
