//! `parallax-bench overhead`: nanoseconds per region enter+leave pair.
//!
//! All configurations run in one process, interleaved: each round runs
//! every configuration once (in an order that rotates from round to round)
//! so that machine noise touches them all alike; the reported figure is the
//! median over rounds of the time per pair. Every run's records are read
//! back (Parallax's files, fastrace's reporter, puffin's frames,
//! tracing-chrome's JSON) and counted against the pairs done.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{json, Value};

use crate::stats::{round, Summary};
use crate::{floor, machine, parallax_runs, peers};

/// Options of `overhead`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Enter+leave pairs per timed run.
    #[arg(long, default_value_t = 1_000_000)]
    pub pairs: u64,
    /// Timed rounds (each runs every configuration once).
    #[arg(long, default_value_t = 15)]
    pub reps: usize,
    /// Untimed rounds before the timed ones.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Pairs per timed run of the tracing peer (default: --pairs / 10;
    /// tracing-chrome costs microseconds and ~140 bytes of JSON per pair,
    /// and its writer thread must drain before the next run).
    #[arg(long)]
    pub tracing_pairs: Option<u64>,
    /// Local spans per fastrace root span, and inner scopes per outer
    /// puffin scope.
    #[arg(long, default_value_t = 1000)]
    pub spans_per_root: u64,
    /// Seconds each thread runs in the throughput test (0 to skip it).
    #[arg(long, default_value_t = 1.5)]
    pub throughput_secs: f64,
    /// Thread counts of the throughput test.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2])]
    pub throughput_threads: Vec<usize>,
    /// Skip the peer tracers.
    #[arg(long)]
    pub no_peers: bool,
    /// Directory for experiments and peer files (default: a new directory
    /// under the system's temporary directory, removed at the end).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Keep the output directory.
    #[arg(long)]
    pub keep: bool,
    /// Print the results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Config {
    Floor,
    Trace,
    Profile,
    Disabled,
    Fastrace,
    Puffin,
    Tracing,
    /// `tracing` spans recorded by parallax-tracing in trace mode: a new
    /// span per pair, and one span entered and exited per pair.
    TracingParallax,
    TracingParallaxEnter,
    TracingPerfetto,
}

impl Config {
    fn name(self) -> &'static str {
        match self {
            Config::Floor => "floor",
            Config::Trace => "trace",
            Config::Profile => "profile",
            Config::Disabled => "disabled",
            Config::Fastrace => "fastrace",
            Config::Puffin => "puffin",
            Config::Tracing => "tracing",
            Config::TracingParallax => "tracing_parallax",
            Config::TracingParallaxEnter => "tracing_parallax_enter",
            Config::TracingPerfetto => "tracing_perfetto",
        }
    }
}

/// What one peer recorded over all timed runs.
#[derive(Clone, Debug, Default, Serialize)]
struct Recorded {
    expected: u64,
    recorded: u64,
    /// Runs whose count differed from the pairs done.
    short_runs: u64,
}

impl Recorded {
    fn add(&mut self, expected: u64, got: u64) {
        self.expected += expected;
        self.recorded += got;
        if got != expected {
            self.short_runs += 1;
        }
    }

    fn all(&self) -> bool {
        self.short_runs == 0 && self.recorded == self.expected
    }
}

fn progress(msg: &str) {
    eprintln!("[overhead] {msg}");
}

/// Runs the benchmark and prints its results.
pub fn main(args: &Args) -> Result<(), String> {
    let (dir, temp) = match &args.out_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("parallax-bench-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = run(args, &dir);
    if temp && !args.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = result?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print_table(&report);
    }
    Ok(())
}

fn run(args: &Args, dir: &Path) -> Result<Value, String> {
    if args.pairs == 0 || args.reps == 0 {
        return Err("--pairs and --reps must be at least 1".into());
    }
    let pairs = args.pairs;
    let tracing_pairs = args.tracing_pairs.unwrap_or(pairs / 10).max(1);
    let per_root = args.spans_per_root.max(1);
    let machine = machine::describe();
    progress(&format!(
        "{} ({} CPUs), {} pairs x {} rounds (+{} warm-up)",
        machine.cpu, machine.nproc, pairs, args.reps, args.warmup
    ));

    parallax::calibrate::use_clock(false);
    let ns_per_tick = parallax::calibrate::ns_per_tick(20);
    let clock_source = format!("{:?}", parallax::clock::source()).to_lowercase();
    let rdtsc: Vec<f64> = (0..5).map(|_| floor::clock_read_ns(1_000_000)).collect();
    let rdtsc_ns = crate::stats::median(&rdtsc);

    let trace_dir = dir.join("trace");
    let profile_dir = dir.join("profile");
    let off_dir = dir.join("off");
    let tracing_dir = dir.join("tracing-parallax");
    let chrome = dir.join("tracing-chrome.json");
    let perfetto = dir.join("tracing-perfetto.pftrace");

    // The global subscriber, as parallax-tracing's users set it; the
    // tracing peers run under a thread default of their own instead.
    parallax_tracing::init().map_err(|e| format!("parallax_tracing::init: {e}"))?;
    let mut configs = vec![
        Config::Floor,
        Config::Trace,
        Config::Profile,
        Config::Disabled,
        Config::TracingParallax,
        Config::TracingParallaxEnter,
    ];
    if !args.no_peers {
        peers::fastrace_setup();
        peers::puffin_setup();
        configs.extend([
            Config::Fastrace,
            Config::Puffin,
            Config::Tracing,
            Config::TracingPerfetto,
        ]);
    }

    let mut samples: BTreeMap<Config, Vec<f64>> = BTreeMap::new();
    let mut trace_read = parallax_runs::Readback::default();
    let mut trace_runs = 0u64;
    let mut trace_short_runs = 0u64;
    let mut profile_rec = Recorded::default();
    let mut fastrace_rec = Recorded::default();
    let mut puffin_rec = Recorded::default();
    let mut tracing_rec = Recorded::default();
    let mut tracing_bytes = 0u64;
    let mut tracing_parallax_rec = Recorded::default();
    let mut tracing_enter_rec = Recorded::default();
    let mut perfetto_rec = Recorded::default();
    let mut perfetto_bytes = 0u64;

    let rounds = args.warmup + args.reps;
    for round_no in 0..rounds {
        let timed = round_no >= args.warmup;
        let mut line = Vec::new();
        for k in 0..configs.len() {
            let c = configs[(round_no + k) % configs.len()];
            let (d, n) = match c {
                Config::Floor => (floor::run(pairs), pairs),
                Config::Trace => {
                    let (d, r) = parallax_runs::trace_run(&trace_dir, pairs)?;
                    if timed {
                        if r.enter != pairs || r.leave != pairs || r.other != 0 {
                            trace_short_runs += 1;
                        }
                        trace_runs += 1;
                        accumulate(&mut trace_read, &r);
                    }
                    (d, pairs)
                }
                Config::Profile => {
                    let (d, visits) = parallax_runs::profile_run(&profile_dir, pairs)?;
                    if timed {
                        profile_rec.add(pairs, visits);
                    }
                    (d, pairs)
                }
                Config::Disabled => (parallax_runs::disabled_run(&off_dir, pairs)?, pairs),
                Config::Fastrace => {
                    let (d, got) = peers::fastrace_run(pairs, per_root);
                    if timed {
                        fastrace_rec.add(pairs, got);
                    }
                    (d, pairs)
                }
                Config::Puffin => {
                    let (d, got) = peers::puffin_run(pairs, per_root)?;
                    if timed {
                        puffin_rec.add(pairs, got);
                    }
                    (d, pairs)
                }
                Config::Tracing => {
                    let (d, size, (b, e)) = peers::tracing_run(&chrome, tracing_pairs)?;
                    if timed {
                        tracing_rec.add(tracing_pairs, b.min(e));
                        tracing_bytes += size;
                    }
                    (d, tracing_pairs)
                }
                Config::TracingParallax | Config::TracingParallaxEnter => {
                    let reuse = c == Config::TracingParallaxEnter;
                    let (d, r) = parallax_runs::tracing_trace_run(&tracing_dir, pairs, reuse)?;
                    if timed {
                        let exact = r.enter == pairs && r.leave == pairs && r.other == 0;
                        let rec = if reuse {
                            &mut tracing_enter_rec
                        } else {
                            &mut tracing_parallax_rec
                        };
                        rec.add(pairs, if exact { pairs } else { r.enter.min(r.leave) });
                    }
                    (d, pairs)
                }
                Config::TracingPerfetto => {
                    let (d, size, (b, e)) = peers::perfetto_run(&perfetto, tracing_pairs)?;
                    if timed {
                        perfetto_rec.add(tracing_pairs, b.min(e));
                        perfetto_bytes += size;
                    }
                    (d, tracing_pairs)
                }
            };
            let ns = d.as_nanos() as f64 / n as f64;
            line.push(format!("{} {:.2}", c.name(), ns));
            if timed {
                samples.entry(c).or_default().push(ns);
            }
        }
        progress(&format!(
            "{} {}/{}: {}",
            if timed { "round" } else { "warm-up" },
            if timed {
                round_no + 1 - args.warmup
            } else {
                round_no + 1
            },
            if timed { args.reps } else { args.warmup },
            line.join(", ")
        ));
    }
    let _ = std::fs::remove_file(&chrome);
    let _ = std::fs::remove_file(&perfetto);

    // One more run of fastrace with a single root for all pairs, to show
    // what its per-root cap does (not part of the medians).
    let fastrace_single_root = if args.no_peers {
        None
    } else {
        let (d, got) = peers::fastrace_run(pairs, pairs);
        Some(json!({
            "pairs": pairs,
            "recorded": got,
            "ns_per_pair": round(d.as_nanos() as f64 / pairs as f64, 2),
        }))
    };

    let calibration = parallax_runs::calibration(&trace_dir)?;

    let mut throughput = serde_json::Map::new();
    if args.throughput_secs > 0.0 {
        for &t in &args.throughput_threads {
            progress(&format!(
                "throughput: {t} thread(s) x {:.1} s",
                args.throughput_secs
            ));
            let tp =
                parallax_runs::throughput(&dir.join(format!("tp-{t}")), t, args.throughput_secs)?;
            progress(&format!(
                "  {:.1} M events/s, {:.1} MB/s, lost {}",
                tp.events_per_s / 1e6,
                tp.mb_per_s,
                tp.lost
            ));
            let mut v = serde_json::to_value(&tp).map_err(|e| e.to_string())?;
            // The floor tracer on as many threads, for comparison.
            let fl = floor::parallel(t, args.throughput_secs.min(0.5));
            v["floor_ns_per_pair"] = json!(fl.iter().map(|&x| round(x, 2)).collect::<Vec<_>>());
            throughput.insert(format!("threads_{t}"), v);
        }
    }

    let summary: BTreeMap<&str, Summary> = samples
        .iter()
        .map(|(c, s)| (c.name(), Summary::of(s)))
        .collect();
    let med = |c: Config| summary.get(c.name()).map(|s| round(s.median, 2));
    let floor_ns = med(Config::Floor).unwrap_or(f64::NAN);
    let trace_ns = med(Config::Trace).unwrap_or(f64::NAN);
    let profile_ns = med(Config::Profile).unwrap_or(f64::NAN);
    let disabled_ns = med(Config::Disabled).unwrap_or(f64::NAN);
    let events = trace_read.events();
    let bytes_per_event = trace_read.file_bytes as f64 / events.max(1) as f64;
    let expected_el = 2 * pairs * trace_runs;
    let trace_lost = expected_el as i64 - (trace_read.enter + trace_read.leave) as i64;

    let tracing_parallax_ns = med(Config::TracingParallax).unwrap_or(f64::NAN);
    let tracing_enter_ns = med(Config::TracingParallaxEnter).unwrap_or(f64::NAN);
    let peer_ns: Vec<(&str, Option<f64>)> = [
        Config::Fastrace,
        Config::Puffin,
        Config::Tracing,
        Config::TracingPerfetto,
    ]
    .iter()
    .map(|&c| (c.name(), med(c)))
    .collect();
    let below_peers = peer_ns.iter().filter_map(|(_, v)| *v).all(|p| trace_ns < p);
    let no_loss_2 = throughput
        .get("threads_2")
        .map(|t| t["lost"] == json!(0) && t["lost_bytes"] == json!(0));

    let mut report = json!({
        "benchmark": "overhead",
        "unit": "ns per enter+leave pair (median over rounds)",
        "machine": machine,
        "settings": {
            "pairs": pairs,
            "reps": args.reps,
            "warmup_rounds": args.warmup,
            "tracing_pairs": tracing_pairs,
            "spans_per_root": per_root,
            "buffer_bytes": parallax::Config::new(parallax::Mode::Trace, dir).buffer_bytes,
            "throughput_secs": args.throughput_secs,
        },
        "clock_source": clock_source,
        "rdtsc_ns": round(rdtsc_ns, 2),
        "ns_per_tick": round(ns_per_tick, 5),
        "floor_ns_per_pair": floor_ns,
        "parallax": {
            "trace": trace_ns,
            "profile": profile_ns,
            "disabled": disabled_ns,
            "bytes_per_event": round(bytes_per_event, 3),
            "trace_over_floor": round(trace_ns / floor_ns, 3),
            "profile_over_floor": round(profile_ns / floor_ns, 3),
            "trace_events": {
                "runs": trace_runs,
                "enter": trace_read.enter,
                "leave": trace_read.leave,
                "expected_enter_leave": expected_el,
                "flush_begin": trace_read.flush_begin,
                "flush_end": trace_read.flush_end,
                "other": trace_read.other,
                "file_bytes": trace_read.file_bytes,
                "record_bytes_per_enter_leave": round(
                    trace_read.file_bytes as f64 / (trace_read.enter + trace_read.leave).max(1) as f64, 3),
                "lost": trace_lost,
                "lost_bytes": trace_read.lost_bytes,
                "runs_not_exact": trace_short_runs,
            },
            "profile_visits": profile_rec,
            "calibration_ns": calibration,
            "tracing_spans": {
                "ns_per_pair": tracing_parallax_ns,
                "over_trace": round(tracing_parallax_ns / trace_ns, 3),
                "recorded": tracing_parallax_rec,
                "subscriber": "parallax-tracing ParallaxSubscriber, global default, trace mode; a new span per pair",
            },
            "tracing_span_enters": {
                "ns_per_pair": tracing_enter_ns,
                "over_trace": round(tracing_enter_ns / trace_ns, 3),
                "recorded": tracing_enter_rec,
                "subscriber": "parallax-tracing ParallaxSubscriber, global default, trace mode; one span entered and exited per pair",
            },
        },
        "peers": peer_ns.iter().filter(|(_, v)| v.is_some())
            .map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "throughput": throughput,
        "spread": summary,
    });
    if !args.no_peers {
        report["peers_recorded_all"] = json!({
            "fastrace": fastrace_rec.all(),
            "puffin": puffin_rec.all(),
            "tracing": tracing_rec.all(),
            "tracing_perfetto": perfetto_rec.all(),
        });
        report["peers_detail"] = json!({
            "fastrace": {
                "recorded": fastrace_rec,
                "local_spans_per_root": per_root,
                "single_root": fastrace_single_root,
            },
            "puffin": {
                "recorded": puffin_rec,
                "inner_scopes_per_outer_scope": per_root,
            },
            "tracing": {
                "recorded": tracing_rec,
                "pairs_per_run": tracing_pairs,
                "subscriber": "tracing-subscriber Registry + tracing-chrome ChromeLayer (Chrome JSON file), thread default",
                "file_bytes_per_event": round(tracing_bytes as f64 / (2 * tracing_rec.expected).max(1) as f64, 1),
            },
            "tracing_perfetto": {
                "recorded": perfetto_rec,
                "pairs_per_run": tracing_pairs,
                "subscriber": "tracing-subscriber Registry + tracing-perfetto PerfettoLayer (Mutex<File>), thread default",
                "file_bytes_per_event": round(perfetto_bytes as f64 / (2 * perfetto_rec.expected).max(1) as f64, 1),
            },
        });
    }
    report["targets"] = json!({
        "trace_le_1_3x_floor": trace_ns <= 1.3 * floor_ns,
        "trace_below_every_peer": if args.no_peers { Value::Null } else { json!(below_peers) },
        "profile_le_2x_floor": profile_ns <= 2.0 * floor_ns,
        "disabled_le_2ns": disabled_ns <= 2.0,
        "bytes_per_event_le_4": bytes_per_event <= 4.0,
        "no_loss_trace_runs": trace_lost == 0 && trace_read.lost_bytes == 0 && trace_short_runs == 0,
        "no_loss_2_threads": no_loss_2,
        "tracing_span_enter_exit_le_1_5x_trace": tracing_enter_ns <= 1.5 * trace_ns && tracing_enter_rec.all(),
        "tracing_spans_10x_below_tracing_chrome": med(Config::Tracing).map(|c| tracing_parallax_ns * 10.0 <= c),
    });
    Ok(report)
}

fn accumulate(total: &mut parallax_runs::Readback, r: &parallax_runs::Readback) {
    total.enter += r.enter;
    total.leave += r.leave;
    total.flush_begin += r.flush_begin;
    total.flush_end += r.flush_end;
    total.other += r.other;
    total.file_bytes += r.file_bytes;
    total.files += r.files;
    total.lost_bytes += r.lost_bytes;
    total.buffer_flushes += r.buffer_flushes;
}

fn print_table(r: &Value) {
    let f = |v: &Value| match v.as_f64() {
        Some(x) => format!("{x:>9.2}"),
        None => format!("{:>9}", "-"),
    };
    let floor = r["floor_ns_per_pair"].as_f64().unwrap_or(f64::NAN);
    let ratio = |v: &Value| match v.as_f64() {
        Some(x) => format!("{:>6.2}x", x / floor),
        None => String::new(),
    };
    println!(
        "machine: {} ({} CPUs, clocksource {})",
        r["machine"]["cpu"].as_str().unwrap_or("?"),
        r["machine"]["nproc"],
        r["machine"]["clocksource"].as_str().unwrap_or("?")
    );
    println!(
        "rdtsc {} ns/read, {} ns/tick; {} pairs x {} rounds, medians",
        r["rdtsc_ns"], r["ns_per_tick"], r["settings"]["pairs"], r["settings"]["reps"]
    );
    println!();
    println!(
        "{:<22} {:>9}  {:>7}  recorded all",
        "configuration", "ns/pair", "/floor"
    );
    let rows: Vec<(&str, &Value, String)> = vec![
        (
            "floor (rdtsc+store)",
            &r["floor_ns_per_pair"],
            String::new(),
        ),
        (
            "parallax trace",
            &r["parallax"]["trace"],
            yes(r["targets"]["no_loss_trace_runs"].as_bool()),
        ),
        ("parallax profile", &r["parallax"]["profile"], String::new()),
        (
            "parallax disabled",
            &r["parallax"]["disabled"],
            String::new(),
        ),
        (
            "parallax via tracing",
            &r["parallax"]["tracing_spans"]["ns_per_pair"],
            yes(r["parallax"]["tracing_spans"]["recorded"]["short_runs"]
                .as_u64()
                .map(|n| n == 0)),
        ),
        (
            "  same span re-entered",
            &r["parallax"]["tracing_span_enters"]["ns_per_pair"],
            yes(
                r["parallax"]["tracing_span_enters"]["recorded"]["short_runs"]
                    .as_u64()
                    .map(|n| n == 0),
            ),
        ),
        (
            "fastrace",
            &r["peers"]["fastrace"],
            yes(r["peers_recorded_all"]["fastrace"].as_bool()),
        ),
        (
            "puffin",
            &r["peers"]["puffin"],
            yes(r["peers_recorded_all"]["puffin"].as_bool()),
        ),
        (
            "tracing + chrome",
            &r["peers"]["tracing"],
            yes(r["peers_recorded_all"]["tracing"].as_bool()),
        ),
        (
            "tracing + perfetto",
            &r["peers"]["tracing_perfetto"],
            yes(r["peers_recorded_all"]["tracing_perfetto"].as_bool()),
        ),
    ];
    for (name, v, rec) in rows {
        if v.is_null() {
            continue;
        }
        println!("{name:<22} {}  {}  {rec}", f(v), ratio(v));
    }
    println!();
    println!(
        "parallax trace: {} bytes/event on disk; events {} enter + {} leave (expected {}), {} flush pairs, lost {}",
        r["parallax"]["bytes_per_event"],
        r["parallax"]["trace_events"]["enter"],
        r["parallax"]["trace_events"]["leave"],
        r["parallax"]["trace_events"]["expected_enter_leave"],
        r["parallax"]["trace_events"]["flush_begin"],
        r["parallax"]["trace_events"]["lost"],
    );
    if let Some(tp) = r["throughput"].as_object() {
        for (k, t) in tp {
            println!(
                "throughput {k}: {:.1} M events/s, {:.1} MB/s, {} events in {:.2} s, lost {}; ns/pair per thread {} (floor alone {})",
                t["events_per_s"].as_f64().unwrap_or(0.0) / 1e6,
                t["mb_per_s"].as_f64().unwrap_or(0.0),
                t["events"],
                t["seconds"].as_f64().unwrap_or(0.0),
                t["lost"],
                t["ns_per_pair"],
                t["floor_ns_per_pair"],
            );
        }
    }
    println!();
    println!("targets:");
    if let Some(t) = r["targets"].as_object() {
        for (k, v) in t {
            println!("  {k:<26} {v}");
        }
    }
}

fn yes(b: Option<bool>) -> String {
    match b {
        Some(true) => "yes".into(),
        Some(false) => "NO".into(),
        None => String::new(),
    }
}
