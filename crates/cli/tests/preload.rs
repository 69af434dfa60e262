//! `parallax run` on unmodified C, C++ and Fortran programs through the
//! interposition library: POSIX threads, compiler instrumentation (names,
//! source lines, filters, throttling), and programs that crash, exit from a
//! thread or start children. Each test compiles its program from
//! workloads/c with the real compilers and checks the recorded events
//! against what the program did.

mod common;

use common::*;
use parallax_model::defs::{Entry, Probe};
use parallax_model::event::{CollectiveOp, EventKind, SKIPPED_REGION};
use parallax_model::experiment::Process;

const THREADS: u64 = 3;
const ITERS: u64 = 20;

#[test]
fn pthread_calls_are_recorded_with_their_objects() {
    let d = tmp("pthreads");
    let exe = d.join("pthreads");
    compile(
        "gcc",
        &[
            "-O1",
            "-g",
            "pthreads.c",
            "-o",
            exe.to_str().unwrap(),
            "-lpthread",
        ],
    );
    let out = d.join("exp");
    let o = run(
        &out,
        &["--mode", "trace"],
        &[exe.to_str().unwrap(), "3", "20"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = values(&stdout(&o));
    let exp = open(&out);
    assert_eq!(exp.processes.len(), 1);
    let p = &exp.processes[0];
    assert!(p.end_unix_ns.is_some());
    assert_balanced(p);
    let all = events(p);
    assert_eq!(all.len() as u64, 1 + THREADS, "main and the workers");
    let ev_count =
        |f: &dyn Fn(&EventKind) -> bool| -> u64 { all.values().map(|e| count(e, f) as u64).sum() };
    let n = THREADS * ITERS;
    // Regions: exact call counts.
    for (name, calls) in [
        ("pthread_create", THREADS),
        ("pthread_join", THREADS),
        ("pthread_rwlock_rdlock", n),
        ("pthread_rwlock_wrlock", n),
        ("pthread_rwlock_unlock", 2 * n),
        ("pthread_spin_lock", n),
        ("pthread_spin_unlock", n),
        ("pthread_mutex_trylock", n),
        ("sem_wait", n),
        ("sem_post", n),
        ("pthread_barrier_wait", n + 1),
        ("pthread_cond_broadcast", 1),
        ("pthread_cond_wait", v["cond_waits"]),
    ] {
        assert_eq!(total_enters(p, name) as u64, calls, "{name}");
    }
    // Mutex: every lock and successful trylock acquires `mutex`; the flag
    // mutex is taken by main and each worker, and again after each wait.
    let mutex = v["mutex"];
    let acquired = |id: u64| ev_count(&|k| *k == EventKind::LockAcquired { lock: id });
    let released = |id: u64| ev_count(&|k| *k == EventKind::LockRelease { lock: id });
    assert_eq!(acquired(mutex), n + v["trylock_ok"]);
    assert_eq!(released(mutex), n + v["trylock_ok"]);
    let flag = v["flag_mutex"];
    assert_eq!(acquired(flag), 1 + THREADS + v["cond_waits"]);
    assert_eq!(released(flag), 1 + THREADS + v["cond_waits"]);
    assert_eq!(acquired(v["rwlock"]), 2 * n);
    assert_eq!(released(v["rwlock"]), 2 * n);
    assert_eq!(acquired(v["spin"]), n);
    // Acquire and release alternate on each lock within a thread.
    for evs in all.values() {
        let mut held = false;
        for e in evs {
            match e.kind {
                EventKind::LockAcquired { lock } if lock == mutex => {
                    assert!(!held);
                    held = true
                }
                EventKind::LockRelease { lock } if lock == mutex => {
                    assert!(held);
                    held = false
                }
                _ => {}
            }
        }
    }
    // Semaphore: as many posts as completed waits, on the same object.
    let sem = v["sem"];
    assert_eq!(ev_count(&|k| *k == EventKind::SemPost { sem }), n);
    assert_eq!(ev_count(&|k| *k == EventKind::SemAcquired { sem }), n);
    // Condition: one broadcast; every wait that returned acquired it.
    let cond = v["flag_cond"];
    assert_eq!(ev_count(&|k| *k == EventKind::SemPost { sem: cond }), 1);
    assert_eq!(
        ev_count(&|k| *k == EventKind::SemAcquired { sem: cond }),
        v["cond_waits"]
    );
    // Barrier: a collective on the barrier's group with its size; made
    // again at the same address, a group of its own.
    let mut groups = std::collections::BTreeMap::<(u64, u64), u64>::new();
    for e in all.values().flatten() {
        if let EventKind::CollectiveEnd {
            op: CollectiveOp::Barrier,
            comm,
            root: u32::MAX,
            sent: 0,
            received,
        } = e.kind
        {
            *groups.entry((comm, received)).or_default() += 1;
        }
    }
    let groups: Vec<_> = groups.into_iter().collect();
    assert_eq!(groups.len(), 2, "{groups:?}");
    for &((comm, _), _) in &groups {
        assert_eq!(comm & ((1 << 48) - 1), v["barrier"], "{groups:?}");
    }
    let (first, again) = if groups[0].0 .1 == THREADS {
        (groups[0], groups[1])
    } else {
        (groups[1], groups[0])
    };
    assert_eq!(first, ((first.0 .0, THREADS), n));
    assert_eq!(again, ((again.0 .0, 1), 1));
    // Threads: each create token begins a location and is joined.
    let mut created = Vec::new();
    let mut begun = Vec::new();
    let mut joined = Vec::new();
    for evs in all.values() {
        for e in evs {
            match e.kind {
                EventKind::ThreadCreate { token } => created.push(token),
                EventKind::ThreadBegin { token } => begun.push(token),
                EventKind::ThreadJoin { token } => joined.push(token),
                _ => {}
            }
        }
    }
    created.sort();
    begun.sort();
    joined.sort();
    assert_eq!(created.len() as u64, THREADS);
    assert_eq!(created, begun);
    assert_eq!(created, joined);
}

#[test]
fn pthread_recording_can_be_switched_off() {
    let d = tmp("pthreads-off");
    let exe = d.join("pthreads");
    compile(
        "gcc",
        &[
            "-O1",
            "pthreads.c",
            "-o",
            exe.to_str().unwrap(),
            "-lpthread",
        ],
    );
    let out = d.join("exp");
    let o = run(
        &out,
        &["--mode", "trace", "--pthread", "off"],
        &[exe.to_str().unwrap(), "2", "5"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("recorded nothing"), "{}", stderr(&o));
}

/// Builds calls.c with libkern.so, both instrumented, with `cc` and
/// `flags`; returns the program.
fn build_calls(d: &std::path::Path, cc: &str, flags: &[&str]) -> std::path::PathBuf {
    let lib = d.join("libkern.so");
    let exe = d.join("calls");
    let mut a = vec!["-g", "-O1", "-finstrument-functions", "-fPIC", "-shared"];
    a.extend(["kern.c", "-o", lib.to_str().unwrap()]);
    compile(cc, &a);
    let inc = format!("-I{}", workloads().join("c").display());
    let mut a = vec!["-g", "-O1", "-finstrument-functions", &inc];
    a.extend(flags);
    a.extend(["calls.c", "-o", exe.to_str().unwrap()]);
    let ldir = format!("-L{}", d.display());
    let rpath = format!("-Wl,-rpath,{}", d.display());
    a.extend([ldir.as_str(), rpath.as_str(), "-lkern", "-lpthread"]);
    compile(cc, &a);
    exe
}

#[test]
fn instrumented_functions_have_exact_counts_names_and_lines() {
    for (cc, flags, mode) in [
        ("gcc", vec!["-pie", "-fPIE"], "trace"),
        ("gcc", vec!["-no-pie", "-fno-PIE"], "profile"),
        ("clang", vec![], "both"),
    ] {
        if !require(&[cc]) {
            continue;
        }
        let d = tmp(&format!("calls-{cc}-{mode}"));
        let exe = build_calls(&d, cc, &flags);
        let out = d.join("exp");
        let o = run(
            &out,
            &["--mode", mode, "--throttle", "off"],
            &[exe.to_str().unwrap(), "10", "50"],
        );
        assert!(o.status.success(), "{cc}: {}", stderr(&o));
        assert!(stderr(&o).contains("resolved"), "{}", stderr(&o));
        let exp = open(&out);
        let p = &exp.processes[0];
        assert!(!p.modules.is_empty(), "load map recorded");
        // Names and source lines, from the executable and the library.
        for (name, file) in [
            ("main", "calls.c"),
            ("solve", "calls.c"),
            ("step", "calls.c"),
            ("kernel", "calls.c"),
            ("tiny", "calls.c"),
            ("lib_scale", "kern.c"),
            ("lib_inner", "kern.c"),
        ] {
            let id = region(p, name).unwrap_or_else(|| panic!("{cc}: no region {name}"));
            let r = &p.regions[&id];
            assert!(r.file.ends_with(file), "{cc}: {name} in {:?}", r.file);
            assert!(r.line > 0, "{cc}: {name} has no line");
        }
        let src = std::fs::read_to_string(workloads().join("c/calls.c")).unwrap();
        let kernel_line = src
            .lines()
            .position(|l| l.contains("static double kernel(int i)"))
            .unwrap() as u32
            + 1;
        let kr = &p.regions[&region(p, "kernel").unwrap()];
        assert!(
            (kernel_line..=kernel_line + 1).contains(&kr.line),
            "{cc}: kernel at line {} (defined at {kernel_line})",
            kr.line
        );
        // Exact counts, in the profile and the trace.
        let expect = [
            ("main", 1),
            ("solve", 1),
            ("step", 10),
            ("kernel", 500),
            ("tiny", 5000),
            ("lib_scale", 10),
            ("lib_inner", 10),
        ];
        let o = parallax()
            .args(["report", "--json"])
            .arg(&out)
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let flat = r["total"]["flat"].as_array().unwrap();
        for (name, n) in expect {
            let calls = flat
                .iter()
                .find(|x| x["region"] == name)
                .map_or(0, |x| x["count"].as_u64().unwrap());
            assert_eq!(calls, n, "{cc} {mode}: {name}");
        }
        if mode != "profile" {
            assert_balanced(p);
            for (name, n) in expect {
                assert_eq!(
                    total_enters(p, name),
                    n as usize,
                    "{cc}: {name} in the trace"
                );
            }
        }
        // Call paths, with their counts.
        let paths = r["total"]["paths"].as_array().unwrap();
        // Rows name their parent by index.
        let path_of = |mut i: usize| {
            let mut p = Vec::new();
            loop {
                p.push(paths[i]["region"].as_str().unwrap());
                match paths[i]["parent"].as_u64() {
                    Some(q) => i = q as usize,
                    None => break,
                }
            }
            p.reverse();
            p
        };
        let path_count = |path: &[&str]| {
            (0..paths.len())
                .find(|&i| path_of(i) == path)
                .map_or(0, |i| paths[i]["count"].as_u64().unwrap())
        };
        assert_eq!(
            path_count(&["main", "solve", "step", "kernel"]),
            500,
            "{cc}"
        );
        assert_eq!(path_count(&["main", "solve", "step", "tiny"]), 5000, "{cc}");
        assert_eq!(
            path_count(&["main", "solve", "step", "lib_scale", "lib_inner"]),
            10,
            "{cc}"
        );
    }
}

#[test]
fn cpp_and_fortran_functions_are_named() {
    let d = tmp("cpp-fortran");
    let cls = d.join("classes");
    compile(
        "g++",
        &[
            "-g",
            "-O1",
            "-finstrument-functions",
            "classes.cpp",
            "-o",
            cls.to_str().unwrap(),
        ],
    );
    let out = d.join("exp-cpp");
    let o = run(&out, &["--mode", "profile"], &[cls.to_str().unwrap(), "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    let p = &exp.processes[0];
    let relax = region(p, "grid::Mesh::relax(int)").expect("demangled method");
    assert!(p.regions[&relax].file.ends_with("classes.cpp"));
    assert!(
        region(p, "int grid::twice<int>(int)").is_some(),
        "{:?}",
        p.regions
    );
    let (trees, _) = p.profiles().unwrap();
    let visits: u64 = trees
        .iter()
        .flat_map(|t| t.nodes.iter())
        .filter(|n| n.region == relax)
        .map(|n| n.stats.count)
        .sum();
    assert_eq!(visits, 5);

    if !require(&["gfortran"]) {
        return;
    }
    let heat = d.join("heat");
    // Module files go next to the program, not into the working directory.
    let modules = format!("-J{}", d.display());
    compile(
        "gfortran",
        &[
            "-g",
            "-O1",
            "-finstrument-functions",
            &modules,
            "heat.f90",
            "-o",
            heat.to_str().unwrap(),
        ],
    );
    let out = d.join("exp-f90");
    let o = run(&out, &["--mode", "trace"], &[heat.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    let p = &exp.processes[0];
    assert_eq!(total_enters(p, "heat::relax"), 4, "{:?}", p.regions);
    assert!(p.regions[&region(p, "heat::relax").unwrap()]
        .file
        .ends_with("heat.f90"));
}

#[test]
fn filters_and_throttling_choose_what_is_measured() {
    let d = tmp("filters");
    let exe = build_calls(&d, "gcc", &[]);
    let exe = exe.to_str().unwrap();
    // Exclude the tiny function.
    let out = d.join("exclude");
    let o = run(
        &out,
        &["--mode", "trace", "--exclude", "tin?"],
        &[exe, "4", "20"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &open(&out).processes[0];
    assert!(region(p, "tiny").is_none());
    assert_eq!(total_enters(p, "kernel"), 80);
    assert_balanced(p);
    // Every call that ran the hooks without recording is counted.
    assert_eq!(skipped_calls(p), 800);
    // Only solve and step, from a filter file.
    let file = d.join("filter.txt");
    std::fs::write(
        &file,
        "# only the solver\ninclude solve\ninclude st*\nexclude stop\n",
    )
    .unwrap();
    let out = d.join("include");
    let o = run(
        &out,
        &["--mode", "trace", "--filter-file", file.to_str().unwrap()],
        &[exe, "4", "20"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &open(&out).processes[0];
    let mut names: Vec<&str> = p.regions.values().map(|r| r.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["solve", "step"]);
    assert_eq!(total_enters(p, "step"), 4);
    // Throttling: tiny is called 10 times per kernel; with a threshold of
    // 1024 calls it stops being measured, the others do not.
    let out = d.join("throttle");
    let o = run(
        &out,
        &["--mode", "both", "--throttle", "1000:10"],
        &[exe, "20", "50"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("throttled tiny: "),
        "the run says what was throttled: {}",
        stderr(&o)
    );
    let p = &open(&out).processes[0];
    assert!(p
        .properties
        .iter()
        .any(|(k, v)| k == "throttled" && v.starts_with("tiny:")));
    assert!(!p
        .properties
        .iter()
        .any(|(k, v)| k == "throttled" && !v.starts_with("tiny:")));
    // Checked at the 1024th call (the threshold rounded up to a power of
    // two), which is the first one not recorded.
    assert_eq!(total_enters(p, "tiny"), 1023);
    assert_eq!(total_enters(p, "kernel"), 1000);
    assert_balanced(p);
    // The calls after it, counted in the trace and in the profile, under
    // the path that made them; the hooks' costs were calibrated.
    assert_eq!(skipped_calls(p), 10_000 - 1023);
    let (trees, err) = p.profiles().unwrap();
    assert!(err.is_none(), "{err:?}");
    let in_profile: u64 = trees
        .iter()
        .flat_map(|t| &t.nodes)
        .filter(|n| n.region == SKIPPED_REGION)
        .map(|n| n.stats.count)
        .sum();
    assert_eq!(in_profile, 10_000 - 1023);
    // Each function's calls in all, where some were not recorded: `tiny`
    // only, on the one thread that called it.
    let tiny = region(p, "tiny").unwrap();
    let calls: Vec<_> = p.calls.iter().collect();
    assert_eq!(calls, [(&(0, tiny), &10_000)], "{:?}", p.calls);
    let report = parallax().arg("report").arg(&out).output().unwrap();
    let text = stdout(&report);
    let line = text
        .lines()
        .skip_while(|l| !l.starts_with("Calls not all recorded"))
        .find(|l| l.ends_with(" tiny"))
        .unwrap_or_else(|| panic!("no line of tiny's calls in\n{text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words, ["1,023", "10,000", "tiny"]);
    for probe in [
        Probe::HookPair,
        Probe::HookSkipped,
        Probe::EnterHook,
        Probe::LeaveHook,
    ] {
        let c = p.calibration.iter().find(|c| c.probe == probe);
        assert!(c.is_some_and(|c| c.mean_ns > 0.0), "{probe:?}: {c:?}");
    }
    let pair = |probe| {
        p.calibration
            .iter()
            .find(|c| c.probe == probe)
            .unwrap()
            .mean_ns
    };
    assert!(pair(Probe::HookSkipped) < pair(Probe::HookPair));
    assert!(pair(Probe::HookSkippedInContextMin) <= pair(Probe::HookSkippedInContextMax));
    assert!(pair(Probe::HookPairInContextMin) <= pair(Probe::HookPairInContextMax));
    let kernel = region(p, "kernel").unwrap();
    assert_eq!(p.entries.get(&kernel), Some(&Entry::Hook));
}

/// The calls counted by the `skipped` events of every location of `p`.
#[test]
fn calls_that_record_nothing_are_timed_in_the_run() {
    let d = tmp("skip-cost");
    let exe = build_calls(&d, "gcc", &[]);
    let out = d.join("exp");
    // A million calls of tiny and 100,000 of kernel, each throttled after
    // 1023: blocks of 65,536 such calls, every fourth done twice, timed in
    // pairs.
    let o = run(
        &out,
        &["--mode", "trace", "--throttle", "1000:10"],
        &[exe.to_str().unwrap(), "100", "1000"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &open(&out).processes[0];
    let skipped = skipped_calls(p);
    assert_eq!(skipped, 1_100_000 - 2 * 1023);
    let samples = &p.skipped_in_run;
    assert!(
        !samples.is_empty(),
        "no timing of calls that record nothing"
    );
    let calls: u64 = samples.iter().map(|s| s.calls).sum();
    let decoys: u64 = samples.iter().map(|s| s.decoys).sum();
    // Whole blocks, within the calls made; a quarter of them done twice.
    assert!(calls % 65_536 == 0 && calls <= skipped, "{samples:?}");
    assert!(calls >= 8 * 65_536, "{samples:?}");
    assert!(decoys * 8 >= calls && decoys * 3 <= calls, "{samples:?}");
    // A call's hooks cost more than nothing and far less than a
    // microsecond.
    for s in samples {
        assert!(s.ps > 0 && s.ps < 1_000_000, "{s:?}");
        assert_eq!(s.thread, 0);
    }
}

/// Every thread that records times its core's speed every quarter of a
/// millisecond with calibration's disabled-probe loop; the windows are in
/// the experiment, the report shows them against the calibration, and
/// compensation says what they make of the approximated time.
#[test]
fn the_cores_speed_is_timed_in_the_run() {
    let d = tmp("speed");
    let exe = build_calls(&d, "gcc", &[]);
    let out = d.join("exp");
    let o = run(
        &out,
        &["--throttle", "off"],
        &[exe.to_str().unwrap(), "100", "1000"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &open(&out).processes[0];
    let windows = &p.speed_in_run;
    // 1.1 million recorded calls take far longer than a few windows of
    // 32 timings a quarter of a millisecond apart.
    assert!(windows.len() >= 3, "{windows:?}");
    let calibrated = p
        .calibration
        .iter()
        .find(|c| c.probe == Probe::Disabled)
        .unwrap()
        .mean_ns;
    for w in windows.windows(2) {
        assert!(w[0].tick < w[1].tick, "{w:?}");
        assert!(w[1].tick - w[0].tick >= 32 * 200_000, "{w:?}");
    }
    for w in windows {
        assert_eq!((w.thread, w.samples), (0, 32), "{w:?}");
        // The same loop as calibrated: within a few times its calibration
        // however the machine's speed changed.
        let ns = w.check_ns(p.clock.ns_per_tick);
        assert!(
            ns > calibrated / 5.0 && ns < calibrated * 5.0,
            "{ns} ns against {calibrated} ns calibrated"
        );
    }
    let report = parallax().arg("report").arg(&out).output().unwrap();
    assert!(
        stdout(&report).contains(&format!("({} windows)", windows.len())),
        "{}",
        stdout(&report)
    );
    let c = parallax()
        .args(["compensate", "--json", "-o"])
        .arg(d.join("exp-a"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", stderr(&c));
    let j: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
    let range = &j["approximated_speed_range_ns"];
    let (lo, hi) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
    assert!(0.0 <= lo && lo <= hi, "{range}");
    let loc = &j["locations"][0];
    let (shorter, longer) = (
        loc["speed_ns"][0].as_f64().unwrap(),
        loc["speed_ns"][1].as_f64().unwrap(),
    );
    assert!(
        shorter >= 0.0 && longer >= 0.0 && shorter + longer > 0.0,
        "{loc}"
    );
}

#[test]
fn blocks_with_a_synchronization_are_not_timed() {
    let d = tmp("skip-cost-sync");
    let src = d.join("lock_calls.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\n\
         static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
         __attribute__((noinline)) static long tiny(long x) { return x * 3 + 1; }\n\
         static void *loop(void *arg) {\n\
             long x = (long)arg;\n\
             for (long i = 0; i < 2000000; i++) {\n\
                 x = tiny(x) & 0xffff;\n\
                 if (i % 1000 == 0) { pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); }\n\
             }\n\
             return (void *)x;\n\
         }\n\
         int main(void) {\n\
             pthread_t t;\n\
             void *x;\n\
             pthread_create(&t, 0, loop, 0);\n\
             pthread_join(t, &x);\n\
             return x == (void *)12345;\n\
         }\n",
    )
    .unwrap();
    let exe = d.join("lock_calls");
    compile(
        "gcc",
        &[
            "-O1",
            "-finstrument-functions",
            "-pthread",
            src.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    let out = d.join("exp");
    let o = run(&out, &["--mode", "trace"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &open(&out).processes[0];
    // Two million calls of tiny on a thread, all but the first 131,071
    // throttled (the default threshold, rounded up), a lock
    // every thousand: every block of 65,536 holds a synchronization, so
    // none is timed (and none is done twice).
    assert_eq!(skipped_calls(p), 2_000_000 - 131_071);
    assert!(p.skipped_in_run.is_empty(), "{:?}", p.skipped_in_run);
}

fn skipped_calls(p: &Process) -> u64 {
    events(p)
        .values()
        .flatten()
        .map(|e| match e.kind {
            EventKind::Skipped { calls } => calls,
            _ => 0,
        })
        .sum()
}

#[test]
fn crashes_and_exits_keep_what_was_recorded() {
    let d = tmp("crashes");
    let exe = build_calls(&d, "gcc", &[]);
    let exe = exe.to_str().unwrap();
    for (how, code) in [
        ("segv", 128 + 11),
        ("abort", 128 + 6),
        ("exit-in-thread", 7),
    ] {
        let out = d.join(how);
        let o = run(
            &out,
            &["--mode", "both", "--throttle", "off"],
            &[exe, "5", "20", how],
        );
        assert_eq!(o.status.code(), Some(code), "{how}: {}", stderr(&o));
        let exp = open(&out);
        let p = &exp.processes[0];
        assert_eq!(total_enters(p, "step"), 5, "{how}");
        assert_eq!(total_enters(p, "kernel"), 100, "{how}");
        // Names are resolved even though the program died.
        assert!(p.regions[&region(p, "kernel").unwrap()].line > 0, "{how}");
        assert_eq!(p.end_unix_ns.is_some(), how == "exit-in-thread", "{how}");
    }
}

#[test]
fn children_are_measured_as_processes_of_their_own() {
    let d = tmp("children");
    let exe = build_calls(&d, "gcc", &[]);
    let exe = exe.to_str().unwrap();
    // fork without exec: the child solves 2 steps.
    let out = d.join("fork");
    let o = run(
        &out,
        &["--mode", "trace", "--throttle", "off"],
        &[exe, "3", "10", "fork"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    assert_eq!(exp.processes.len(), 2);
    let (parent, child) = (&exp.processes[0], &exp.processes[1]);
    assert_eq!((parent.rank, child.rank), (0, 1));
    assert_eq!(total_enters(parent, "step"), 3);
    assert_eq!(total_enters(child, "step"), 2);
    assert!(child.properties.iter().any(|(k, _)| k == "parent_pid"));
    // fork and exec (system): the shell is not measured (it records
    // nothing), the program it starts is, with its own rank.
    let out = d.join("system");
    let o = run(
        &out,
        &["--mode", "trace", "--throttle", "off"],
        &[exe, "4", "10", "system"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    let steps: Vec<(u32, usize)> = exp
        .processes
        .iter()
        .map(|p| (p.rank, total_enters(p, "step")))
        .collect();
    assert_eq!(steps, [(0, 4), (1, 3)]);
    let child = &exp.processes[1];
    assert!(
        child.regions[&region(child, "step").unwrap()].line > 0,
        "resolved too"
    );
    // Excluded by option.
    let out = d.join("no-children");
    let o = run(
        &out,
        &["--mode", "trace", "--no-children"],
        &[exe, "4", "10", "system"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(open(&out).processes.len(), 1);
}

#[test]
fn programs_that_cannot_be_measured_get_a_clear_error() {
    let d = tmp("errors");
    let exe = d.join("static");
    let src = d.join("s.c");
    std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
    compile(
        "gcc",
        &[
            "-static",
            src.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    let o = run(&d.join("exp"), &[], &[exe.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("statically linked"), "{}", stderr(&o));
    let junk = d.join("junk");
    std::fs::write(&junk, [0u8, 1, 2, 3]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = run(&d.join("exp"), &[], &[junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not an executable program"),
        "{}",
        stderr(&o)
    );
}

/// A loop of an OpenMP team whose worker threads outlive `main` (libgomp
/// keeps its pool): each thread's calls in all are said, those still
/// running when the process ends included, and add up to every call.
#[test]
fn calls_in_all_count_every_call_of_every_thread() {
    const SRC: &str = r#"
#include <stdio.h>
static double f(int i) { return i * 0.5; }
int main(void) {
    double s = 0;
#pragma omp parallel for reduction(+:s) num_threads(3)
    for (int i = 0; i < 600000; i++)
        s += f(i);
    printf("%.1f\n", s);
    return 0;
}
"#;
    let d = tmp("calls-in-all");
    let src = d.join("team.c");
    std::fs::write(&src, SRC).unwrap();
    let exe = d.join("team");
    compile(
        "gcc",
        &[
            "-O1",
            "-fopenmp",
            "-finstrument-functions",
            src.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    let out = d.join("exp");
    let o = run(&out, &["--throttle", "1000:10"], &[exe.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Threads that recorded every call of theirs have no record; the
    // report adds their recorded calls.
    let r = report_json(&out);
    let f = r["total"]["calls_not_all_recorded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["region"] == "f")
        .cloned()
        .unwrap_or_else(|| panic!("no f in {}", r["total"]["calls_not_all_recorded"]));
    assert_eq!(f["all"], 600_000, "{f}");
    assert!(f["recorded"].as_u64().unwrap() < 600_000, "{f}");
}
