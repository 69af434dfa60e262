//! A small experiment made from the bytes (`parallax_testkit::fuzz`: ranks
//! or threads, region kinds, clock, probe costs, cores, and each
//! location's messages, collectives, locks, threads, semaphores and time
//! steps), compensated on one thread and on two. Nothing may panic; every
//! failure must be an `Error`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parallax_analysis::compensate::{compensate, Options};
use parallax_analysis::executor::Executor;
use parallax_model::experiment::Experiment;

mod scratch;

fuzz_target!(|data: &[u8]| {
    let dir = scratch::fresh("compensate");
    let exp = dir.join("exp");
    parallax_testkit::fuzz::experiment_from_bytes(&exp, data).expect("write the experiment");
    let Ok(e) = Experiment::open(&exp) else {
        return;
    };
    for (i, exec) in [Executor::Sequential, Executor::Threads(2)]
        .into_iter()
        .enumerate()
    {
        let out = dir.join(format!("out{i}"));
        let _ = compensate(&e, &out, &Options::default(), exec);
    }
});
