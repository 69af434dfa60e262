//! Reading a scenario's experiment back: shared by the runtime tests and
//! the scenarios that check their own experiment while they run.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;

use parallax_model::event::{Event, EventKind};
use parallax_model::experiment::{Experiment, Process};

/// Every event of every location of the only process, by thread.
pub fn events(p: &Process) -> HashMap<u32, Vec<Event>> {
    p.locations
        .keys()
        .filter(|t| p.locations[t].events.is_some())
        .map(|&t| {
            let (ev, err) = p.events(t).unwrap().read_all();
            assert!(err.is_none(), "thread {t}: {err:?}");
            (t, ev)
        })
        .collect()
}

pub fn count(evs: &[Event], f: impl Fn(&EventKind) -> bool) -> usize {
    evs.iter().filter(|e| f(&e.kind)).count()
}

pub fn region_id(p: &Process, name: &str) -> u32 {
    *p.regions
        .iter()
        .find(|(_, r)| r.name == name)
        .unwrap_or_else(|| panic!("no region {name}"))
        .0
}

pub fn open(dir: &Path) -> Process {
    let exp = Experiment::open(dir).unwrap();
    assert_eq!(exp.processes.len(), 1);
    assert!(exp.warnings().is_empty(), "{:?}", exp.warnings());
    exp.processes.into_iter().next().unwrap()
}
