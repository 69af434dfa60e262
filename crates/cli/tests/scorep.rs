//! Traces written by Score-P: a real archive (tests/data/scorep-ping-pong)
//! imports with every call's generic operation type the one Parallax's own
//! wrappers give it, and analyzes to the same categories as Parallax's own
//! trace of MPI calls.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use parallax_model::experiment::Experiment;

fn archive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scorep-ping-pong/traces.otf2")
}

/// Imports the Score-P archive into a new directory.
fn imported(name: &str) -> PathBuf {
    let out = tmp(name);
    let o = parallax()
        .arg("import")
        .arg(archive())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// Every region of every process: name → kind name.
fn kinds(exp: &Experiment) -> BTreeMap<String, &'static str> {
    exp.processes
        .iter()
        .flat_map(|p| p.regions.values())
        .map(|r| (r.name.clone(), r.kind.name()))
        .collect()
}

#[test]
fn score_p_waits_tests_and_probes_are_waits() {
    let exp = open(&imported("scorep-kinds"));
    let kinds = kinds(&exp);
    let waits = [
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Waitany",
        "MPI_Waitsome",
        "MPI_Test",
        "MPI_Testall",
        "MPI_Testany",
        "MPI_Testsome",
        "MPI_Probe",
        "MPI_Iprobe",
    ];
    for w in waits {
        assert_eq!(kinds.get(w).copied(), Some("wait"), "{w}");
    }
    let expect = [
        ("MPI_Send", "send"),
        ("MPI_Isend", "send"),
        ("MPI_Recv", "recv"),
        ("MPI_Irecv", "recv"),
        ("MPI_Sendrecv", "sendrecv"),
        ("MPI_Barrier", "barrier"),
        ("MPI_Allreduce", "collective"),
        ("MPI_Init", "setup"),
        ("MPI_Finalize", "setup"),
        ("MPI_Test_cancelled", "function"),
        ("int main(int, char**)", "function"),
    ];
    for (name, kind) in expect {
        assert_eq!(kinds.get(name).copied(), Some(kind), "{name}");
    }
}

/// Open MPI as root, any number of ranks on two cores.
fn mpi_env(cmd: &mut Command) -> &mut Command {
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
}

#[test]
fn score_p_calls_get_the_kinds_and_categories_of_parallax_own_trace() {
    if !require(&["mpicc", "mpirun"]) {
        return;
    }
    // Parallax's own trace of the point-to-point calls of workloads/mpi/p2p.c.
    let dir = tmp("scorep-own");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("p2p");
    compile("mpicc", &["-O1", "mpi/p2p.c", "-o", exe.to_str().unwrap()]);
    preload();
    let own = dir.join("exp");
    let mut cmd = parallax();
    cmd.args(["run", "--no-report", "--no-db", "--mode", "trace", "--out"])
        .arg(&own)
        .args(["--", "mpirun", "-np", "2"])
        .arg(&exe);
    let o = mpi_env(&mut cmd).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let own_flat = flat(&own);
    let scorep = imported("scorep-categories");
    let theirs = kinds(&open(&scorep));
    let mut compared = 0;
    for (region, (kind, _)) in own_flat.iter().filter(|(r, _)| r.starts_with("MPI_")) {
        assert_eq!(
            theirs.get(region).copied(),
            Some(kind.as_str()),
            "{region}: Parallax's own trace says {kind}"
        );
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} MPI calls compared");
    // The calls the Score-P run made fall in the same categories.
    for (region, (kind, category)) in flat(&scorep) {
        if let Some((own_kind, own_category)) = own_flat.get(&region) {
            assert_eq!((&kind, &category), (own_kind, own_category), "{region}");
        }
    }
}

/// `report --json`'s flat profile: region → (kind, category).
fn flat(dir: &Path) -> BTreeMap<String, (String, String)> {
    let v = report_json(dir);
    v["total"]["flat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("region"), (s("kind"), s("category")))
        })
        .collect()
}

#[test]
fn score_p_runs_carry_their_own_program_time_and_clock() {
    let dir = imported("scorep-meta");
    let exp = open(&dir);
    for p in &exp.processes {
        let info = p.info.as_ref().unwrap();
        // The program its ProgramBegin records name.
        assert_eq!(
            info.program,
            "/g/g92/bhatele1/umd/traces/score-p/ping-pong.otf2"
        );
        // Its ProgramEnd records say the exit status is undefined.
        assert!(!p.properties.iter().any(|(k, _)| k == "otf2.exit_status"));
    }
    let text = stdout(&parallax().arg("report").arg(&dir).output().unwrap());
    assert!(
        text.contains("Clock       the OTF2 archive's timer, 2.095 GHz"),
        "{text}"
    );
    // The wall time is the trace's (418,210,708 ticks at 2,095,197,216 per
    // second), not the import's.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let wall = manifest["wall_seconds"].as_f64().unwrap();
    assert!((wall - 0.199_604).abs() < 1e-5, "wall {wall}");
    // The archive gives no date: the run's start is unknown, not 1970.
    let db = dir.with_extension("sqlite");
    let o = parallax()
        .args(["import", "--db"])
        .arg(&db)
        .arg(archive())
        .arg("--out")
        .arg(dir.with_extension("again"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let list = stdout(
        &parallax()
            .args(["db", "list", "--db"])
            .arg(&db)
            .output()
            .unwrap(),
    );
    assert!(list.contains("ping-pong.otf2"), "{list}");
    assert!(list.contains("199.604 ms"), "{list}");
    assert!(!list.contains("1970"), "{list}");
}
