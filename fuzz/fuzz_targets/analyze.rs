//! A small experiment made from the bytes (`parallax_testkit::fuzz`), read
//! by the analyses `parallax analyze` and `parallax report` run: the
//! bottleneck analysis (waits, culprits, critical path, load balance) on
//! one thread and on two, the profiles with their flat and call-path
//! views, and the concurrency profile. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parallax_analysis::bottleneck::{analyze, Config};
use parallax_analysis::concurrency;
use parallax_analysis::executor::Executor;
use parallax_analysis::profile::ExperimentProfile;
use parallax_model::experiment::Experiment;

mod scratch;

fuzz_target!(|data: &[u8]| {
    let dir = scratch::fresh("analyze");
    let exp = dir.join("exp");
    parallax_testkit::fuzz::experiment_from_bytes(&exp, data).expect("write the experiment");
    let Ok(e) = Experiment::open(&exp) else {
        return;
    };
    for exec in [Executor::Sequential, Executor::Threads(2)] {
        let _ = analyze(&e, &Config::default(), exec);
    }
    if let Ok(p) = ExperimentProfile::load(&e) {
        let _ = p.flat_total(&e);
        let _ = p.paths_total(&e);
        for i in 0..p.locations.len() {
            let _ = p.categories(&e, i);
        }
    }
    let _ = concurrency::profile(&e);
});
