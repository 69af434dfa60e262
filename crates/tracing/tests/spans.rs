//! `tracing` spans and events recorded into a real Parallax experiment,
//! read back with the model.

use std::collections::BTreeMap;

use parallax::{Config, Mode};
use parallax_model::event::EventKind;
use parallax_model::experiment::Experiment;

#[tracing::instrument]
fn leaf(i: u64) -> u64 {
    i * 2
}

fn work(rounds: u64) -> u64 {
    let mut s = 0;
    for r in 0..rounds {
        let _outer = tracing::info_span!("round", r).entered();
        for i in 0..3 {
            s += leaf(i);
        }
        tracing::info!(round = r, "round done");
    }
    s
}

#[test]
fn spans_are_regions_and_events_are_marks() {
    let dir = std::env::temp_dir().join(format!("parallax-tracing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    parallax::init(Config::new(Mode::Trace, &dir)).unwrap();
    parallax_tracing::init().unwrap();

    let other = std::thread::spawn(|| work(4));
    let s = work(5) + other.join().unwrap();
    assert_eq!(s, 9 * 6);
    // A span entered and exited out of measurement's reach leaves nothing open.
    let span = tracing::info_span!("late");
    parallax::finish().unwrap();
    drop(span.entered());

    let exp = Experiment::open(&dir).unwrap();
    assert!(exp.warnings().is_empty(), "{:?}", exp.warnings());
    let p = &exp.processes[0];
    let name = |id: u32| p.regions[&id].name.clone();
    let mut enters: BTreeMap<String, u64> = BTreeMap::new();
    let mut marks: Vec<i64> = Vec::new();
    for (&t, loc) in &p.locations {
        if loc.events.is_none() {
            continue;
        }
        let (evs, err) = p.events(t).unwrap().read_all();
        assert!(err.is_none());
        let mut depth = 0i64;
        for e in &evs {
            match e.kind {
                EventKind::Enter { region } => {
                    depth += 1;
                    *enters.entry(name(region)).or_default() += 1;
                }
                EventKind::Leave { .. } => depth -= 1,
                EventKind::Mark { mark, value } => {
                    assert!(name(mark).starts_with("event "), "{}", name(mark));
                    marks.push(value);
                }
                _ => {}
            }
            assert!(depth >= 0);
        }
        assert_eq!(depth, 0, "thread {t}");
    }
    assert_eq!(enters["round"], 9);
    assert_eq!(enters["leaf"], 27);
    assert!(!enters.contains_key("late"));
    marks.sort();
    assert_eq!(marks, vec![0, 0, 1, 1, 2, 2, 3, 3, 4]);
    let round = p.regions.values().find(|r| r.name == "round").unwrap();
    assert!(
        round.file.ends_with("spans.rs") && round.line > 0,
        "{round:?}"
    );
}
