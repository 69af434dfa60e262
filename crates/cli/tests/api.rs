//! The public API for C, C++ and Fortran (crates/preload/include), used as
//! a program's author would: compiled with the header, run plainly and
//! under `parallax run`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use parallax_model::event::EventKind;
use parallax_model::experiment::Process;

fn include() -> PathBuf {
    workspace().join("crates/preload/include")
}

/// Marks of `p` by name: (count, values in order).
fn marks(p: &Process, name: &str) -> Vec<i64> {
    let Some(id) = region(p, name) else {
        return Vec::new();
    };
    events(p)
        .values()
        .flatten()
        .filter_map(|e| match e.kind {
            EventKind::Mark { mark, value } if mark == id => Some(value),
            _ => None,
        })
        .collect()
}

/// Runs `exe` plainly and measured: the same output and exit status; the
/// experiment's single process.
fn plain_and_measured(d: &Path, exe: &Path) -> (String, Process) {
    let plain = Command::new(exe).output().unwrap();
    let out = d.join("exp");
    let m = run(&out, &["--mode", "both"], &[exe.to_str().unwrap()]);
    assert_eq!(plain.status.code(), m.status.code(), "{}", stderr(&m));
    assert_eq!(stdout(&plain), stdout(&m), "{}", stderr(&m));
    let exp = open(&out);
    assert_eq!(exp.processes.len(), 1);
    let p = exp.processes.into_iter().next().unwrap();
    assert_balanced(&p);
    (stdout(&plain), p)
}

#[test]
fn c_regions_marks_phases_and_flow_control() {
    let d = tmp("api-c");
    let exe = d.join("regions");
    let inc = format!("-I{}", include().display());
    compile(
        "gcc",
        &["-O2", &inc, "api/regions.c", "-o", exe.to_str().unwrap()],
    );
    let (out, p) = plain_and_measured(&d, &exe);
    assert_eq!(out, "checksum=2497612\n");
    assert_eq!(total_enters(&p, "step"), 10);
    let step = &p.regions[&region(&p, "step").unwrap()];
    assert_eq!(step.kind.name(), "loop");
    assert!(
        step.file.ends_with("api/regions.c") && step.line == 19,
        "{step:?}"
    );
    assert_eq!(marks(&p, "iteration"), (0..10).collect::<Vec<i64>>());
    assert_eq!(marks(&p, "phase: setup").len(), 1);
    // Flow control: the regions between off and on are not recorded.
    assert_eq!(total_enters(&p, "hidden"), 0);
}

#[test]
fn cpp_scoped_regions_close_on_every_return() {
    let d = tmp("api-cpp");
    let exe = d.join("regions");
    let inc = format!("-I{}", include().display());
    compile(
        "g++",
        &["-O2", &inc, "api/regions.cpp", "-o", exe.to_str().unwrap()],
    );
    let (_, p) = plain_and_measured(&d, &exe);
    assert_eq!(total_enters(&p, "outer"), 3);
    assert_eq!(total_enters(&p, "inner"), 21);
    assert_eq!(
        p.regions[&region(&p, "outer").unwrap()].kind.name(),
        "function"
    );
}

#[test]
fn fortran_module_regions_and_marks() {
    if !require(&["gfortran"]) {
        return;
    }
    let d = tmp("api-f90");
    let inc = include();
    let obj = d.join("parallax_fortran.o");
    compile(
        "gcc",
        &[
            "-O2",
            "-c",
            &format!("-I{}", inc.display()),
            inc.join("parallax_fortran.c").to_str().unwrap(),
            "-o",
            obj.to_str().unwrap(),
        ],
    );
    let exe = d.join("regions");
    compile(
        "gfortran",
        &[
            "-O2",
            &format!("-J{}", d.display()),
            inc.join("parallax.f90").to_str().unwrap(),
            "api/regions.f90",
            obj.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    let (_, p) = plain_and_measured(&d, &exe);
    assert_eq!(total_enters(&p, "solve"), 1);
    assert_eq!(total_enters(&p, "sweep"), 4);
    assert_eq!(marks(&p, "residual"), vec![1, 2, 3, 4]);
    assert_eq!(marks(&p, "phase: setup").len(), 1);
}
