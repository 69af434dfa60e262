//! `parallax run` on unmodified MPI, OpenSHMEM and GASP programs: each test
//! compiles its program from workloads/ with the real compiler wrappers
//! (mpicc, oshcc), runs it with the real launchers, and checks the
//! recorded events against what the program did: call counts, bytes,
//! peers, tags, communicators, roots, requests, locks.
//!
//! The MPI and SHMEM tests are skipped (with a message) where Open MPI is
//! not installed; scripts/setup.sh installs it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use parallax_model::event::{CollectiveOp, EventKind, NO_ROOT};
use parallax_model::experiment::{Experiment, Process};

/// Environment for Open MPI as root, with every rank on two cores.
fn mpi_env(cmd: &mut Command) -> &mut Command {
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        // OSHMEM's UCX memory hooks outlive their library at finalize
        // (docs/interposition.md).
        .env("OMPI_MCA_opal_common_ucx_opal_mem_hooks", "0")
}

fn mpi_available() -> bool {
    require(&["mpicc", "mpirun"])
}

/// Compiles workloads/mpi/`name`.c with mpicc into `dir`.
fn mpicc(dir: &Path, name: &str) -> PathBuf {
    let exe = dir.join(name);
    compile(
        "mpicc",
        &[
            "-g",
            "-O1",
            &format!("mpi/{name}.c"),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    exe
}

/// `parallax run ARGS -- mpirun -np N PROGRAM...` (the launcher inside).
fn run_mpirun(out: &Path, args: &[&str], np: u32, prog: &[&str]) -> std::process::Output {
    preload();
    let mut cmd = parallax();
    cmd.args(["run", "--no-report", "--out"])
        .arg(out)
        .args(args)
        .args(["--", "mpirun", "-np", &np.to_string()])
        .args(prog);
    mpi_env(&mut cmd).output().unwrap()
}

/// A message as (from, to, tag, communicator, bytes), world ranks.
type Msg = (u32, u32, u32, u64, u64);

/// The sends and the receives of the experiment.
fn messages(exp: &Experiment) -> (Vec<Msg>, Vec<Msg>) {
    let (mut sends, mut recvs) = (Vec::new(), Vec::new());
    for p in &exp.processes {
        for evs in events(p).values() {
            for e in evs {
                match e.kind {
                    EventKind::Send {
                        peer,
                        tag,
                        comm,
                        bytes,
                    }
                    | EventKind::IsendBegin {
                        peer,
                        tag,
                        comm,
                        bytes,
                        ..
                    } => sends.push((p.rank, peer, tag, comm, bytes)),
                    EventKind::Recv {
                        peer,
                        tag,
                        comm,
                        bytes,
                    }
                    | EventKind::IrecvComplete {
                        peer,
                        tag,
                        comm,
                        bytes,
                        ..
                    } => recvs.push((peer, p.rank, tag, comm, bytes)),
                    _ => {}
                }
            }
        }
    }
    sends.sort();
    recvs.sort();
    (sends, recvs)
}

/// Every non-blocking request of each location completes after it starts.
fn assert_requests_complete(p: &Process) {
    for (t, evs) in events(p) {
        let mut open: BTreeMap<(bool, u64), usize> = BTreeMap::new();
        for e in &evs {
            match e.kind {
                EventKind::IsendBegin { request, .. } => {
                    *open.entry((true, request)).or_default() += 1
                }
                EventKind::IrecvBegin { request } => {
                    *open.entry((false, request)).or_default() += 1
                }
                EventKind::IsendComplete { request } => {
                    let n = open
                        .get_mut(&(true, request))
                        .expect("send completes after start");
                    *n -= 1;
                }
                EventKind::IrecvComplete { request, .. } => {
                    let n = open
                        .get_mut(&(false, request))
                        .expect("recv completes after start");
                    *n -= 1;
                }
                _ => {}
            }
        }
        assert!(
            open.values().all(|&n| n == 0),
            "rank {} thread {t}: requests left open: {open:?}",
            p.rank
        );
    }
}

fn process(exp: &Experiment, rank: u32) -> &Process {
    exp.processes.iter().find(|p| p.rank == rank).unwrap()
}

#[test]
fn mpi_point_to_point_matches_every_receive_to_its_send() {
    if !mpi_available() {
        return;
    }
    let d = tmp("mpi-p2p");
    let exe = mpicc(&d, "p2p");
    let out = d.join("exp");
    const ITERS: u64 = 5;
    let o = run_mpirun(&out, &["--mode", "trace"], 4, &[exe.to_str().unwrap(), "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    let ranks: Vec<u32> = exp.processes.iter().map(|p| p.rank).collect();
    assert_eq!(
        ranks,
        [0, 1, 2, 3],
        "one process per rank, the launcher not measured"
    );
    for p in &exp.processes {
        assert_eq!(
            p.locations.len(),
            1,
            "rank {}: only the main thread",
            p.rank
        );
        assert_balanced(p);
        assert_requests_complete(p);
        let evs = &events(p)[&0];
        for (name, n) in [
            ("MPI_Init", 1),
            ("MPI_Finalize", 1),
            ("MPI_Isend", ITERS as usize + 3),
            ("MPI_Irecv", ITERS as usize + 4),
            ("MPI_Waitall", ITERS as usize + 3),
            ("MPI_Issend", 1),
            ("MPI_Wait", 1),
            ("MPI_Waitany", 1),
            ("MPI_Startall", 3),
            ("MPI_Send_init", 1),
            ("MPI_Recv_init", 1),
            ("MPI_Request_free", 2),
            ("MPI_Sendrecv", 1),
            ("MPI_Comm_split", 1),
            ("MPI_Comm_free", 1),
        ] {
            assert_eq!(enters(p, evs, name), n, "rank {}: {name}", p.rank);
        }
        // Blocking ring, the ANY_SOURCE sends to 0, and one send in the
        // split communicator by its rank 0 (world ranks 0 and 1).
        let sends = ITERS as usize + (p.rank != 0) as usize + (p.rank < 2) as usize;
        assert_eq!(enters(p, evs, "MPI_Send"), sends, "rank {}", p.rank);
        assert!(enters(p, evs, "MPI_Test") >= 1);
        assert!(p
            .properties
            .iter()
            .any(|(k, v)| k == "mpi_world_size" && v == "4"));
    }
    let (sends, recvs) = messages(&exp);
    assert_eq!(sends, recvs, "every receive matches a send");
    let with_tag = |tag: u32| sends.iter().filter(|m| m.2 == tag).collect::<Vec<_>>();
    let ring = |tag: u32, n: usize, bytes: u64| {
        let m = with_tag(tag);
        assert_eq!(m.len(), n, "tag {tag}");
        for &&(from, to, _, comm, b) in &m {
            assert_eq!((to, comm, b), ((from + 1) % 4, 0, bytes), "tag {tag}");
        }
    };
    ring(10, 4 * ITERS as usize, 32);
    ring(20, 4 * ITERS as usize, 128);
    ring(30, 4, 100);
    for tag in 41..=43 {
        ring(tag, 4, 4);
    }
    ring(50, 12, 16);
    ring(60, 4, 4);
    for r in 1..4 {
        assert_eq!(
            with_tag(70 + r),
            [&(r, 0, 70 + r, 0, 12)],
            "ANY_SOURCE from {r}"
        );
    }
    // The split communicators: {0, 2} and {1, 3}, ids agreed by their
    // members, distinct from the world's and each other's.
    let split = with_tag(80);
    assert_eq!(split.len(), 2);
    let (even, odd) = (split[0], split[1]);
    assert_eq!((even.0, even.1, even.4), (0, 2, 20));
    assert_eq!((odd.0, odd.1, odd.4), (1, 3, 20));
    assert!(even.3 != 0 && odd.3 != 0 && even.3 != odd.3);
    assert_eq!(process(&exp, 2).groups.get(&even.3), Some(&vec![0, 2]));
    assert_eq!(process(&exp, 3).groups.get(&odd.3), Some(&vec![1, 3]));
    // Profile mode: the same calls, counted, without events.
    let prof = d.join("exp-profile");
    let o = run_mpirun(
        &prof,
        &["--mode", "profile"],
        4,
        &[exe.to_str().unwrap(), "5"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = parallax()
        .args(["report", "--json"])
        .arg(&prof)
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let calls = |name: &str| {
        r["total"]["flat"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["region"] == name)
            .map_or(0, |x| x["count"].as_u64().unwrap())
    };
    assert_eq!(calls("MPI_Isend"), 4 * (ITERS + 3));
    assert_eq!(calls("MPI_Waitall"), 4 * (ITERS + 3));
    assert_eq!(calls("MPI_Sendrecv"), 4);
    // Clock offsets to rank 0, at init and at finalize.
    for r in 1..4 {
        let p = process(&exp, r);
        assert_eq!(p.clock_offsets.len(), 2, "rank {r}");
        for c in &p.clock_offsets {
            assert_eq!(c.reference, 0);
            assert!(c.rtt_ns > 0);
            // One host, one CLOCK_MONOTONIC: the offset is within the
            // uncertainty of the exchange.
            assert!(c.offset_ns.unsigned_abs() <= c.rtt_ns, "rank {r}: {c:?}");
        }
    }
}

/// The collectives each rank of coll.c records, in order.
fn expected_collectives(
    rank: u32,
    world: u64,
    rev: u64,
) -> Vec<(CollectiveOp, u64, u32, u64, u64)> {
    use CollectiveOp::*;
    let n = 4u64;
    let r = rank as u64;
    let root = |x: u32| if rank == x { 1 } else { 0 };
    let int = 4u64;
    let mut one = vec![
        (
            Broadcast,
            world,
            1,
            root(1) * 4 * int,
            (1 - root(1)) * 4 * int,
        ),
        (Reduce, world, 2, 16, root(2) * 16),
        (Allreduce, world, NO_ROOT, 12, 12),
        (Gather, world, 0, 8, root(0) * 8 * n),
        (
            Gather,
            world,
            0,
            (1 + r) * int,
            root(0) * (1 + 2 + 3 + 4) * int,
        ),
        (Scatter, world, 0, root(0) * 8 * n, 8),
        (
            Scatter,
            world,
            0,
            root(0) * (1 + 2 + 3 + 4) * int,
            (1 + r) * int,
        ),
        (Allgather, world, NO_ROOT, int, n * int),
        (Allgather, world, NO_ROOT, (1 + r) * int, 10 * int),
        (Alltoall, world, NO_ROOT, n * int, n * int),
        (Alltoall, world, NO_ROOT, n * int, n * int),
        (Scan, world, NO_ROOT, int, int),
        (Scan, world, NO_ROOT, int, int),
        (ReduceScatter, world, NO_ROOT, n * int, int),
        (ReduceScatter, world, NO_ROOT, n * int, int),
        (Barrier, world, NO_ROOT, 0, 0),
    ];
    let mut all = one.clone();
    all.append(&mut one);
    all.push((Other, world, NO_ROOT, 0, 0)); // Comm_split
    all.push((Allreduce, rev, NO_ROOT, 20, 20));
    let rev_root = if rank == 3 { 1 } else { 0 };
    all.push((Broadcast, rev, 3, rev_root * 24, (1 - rev_root) * 24));
    all.push((Other, rev, NO_ROOT, 0, 0)); // Comm_free
    all
}

#[test]
fn mpi_collectives_under_the_launcher_record_bytes_roots_and_communicators() {
    if !mpi_available() {
        return;
    }
    let d = tmp("mpi-coll");
    let exe = mpicc(&d, "coll");
    preload();
    // `mpirun parallax run`: every rank runs parallax, which names the
    // experiment after the launcher's job.
    let mut cmd = Command::new("mpirun");
    cmd.args(["-np", "4"])
        .arg(env!("CARGO_BIN_EXE_parallax"))
        .args(["run", "--mode", "both", "--", exe.to_str().unwrap()])
        .current_dir(&d);
    let o = mpi_env(&mut cmd).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Flat profile"), "rank 0 reports");
    assert_eq!(
        stderr(&o).matches("parallax: measuring").count(),
        1,
        "only rank 0 talks: {}",
        stderr(&o)
    );
    let dirs: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("parallax-coll-job-")
        })
        .collect();
    assert_eq!(dirs.len(), 1, "one experiment for the job: {dirs:?}");
    let exp = open(&dirs[0]);
    assert_eq!(exp.processes.len(), 4);
    assert!(dirs[0].join("manifest.json").is_file());
    // The reversed communicator: one id, members in its rank order.
    let rev = process(&exp, 0)
        .groups
        .iter()
        .find(|(_, m)| **m == [3, 2, 1, 0])
        .map(|(&id, _)| id)
        .expect("reversed communicator defined");
    for p in &exp.processes {
        assert_eq!(
            p.groups.get(&rev),
            Some(&vec![3, 2, 1, 0]),
            "rank {}",
            p.rank
        );
        let evs = &events(p)[&0];
        let got: Vec<_> = evs
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::CollectiveEnd {
                    op,
                    comm,
                    root,
                    sent,
                    received,
                } => Some((op, comm, root, sent, received)),
                _ => None,
            })
            .collect();
        assert_eq!(got, expected_collectives(p.rank, 0, rev), "rank {}", p.rank);
        let begins = count(evs, |k| *k == EventKind::CollectiveBegin);
        assert_eq!(begins, got.len());
        assert_eq!(enters(p, evs, "MPI_Iallreduce"), 1);
        assert_eq!(enters(p, evs, "MPI_Barrier"), 1, "MPI_Pcontrol(0) hid one");
        assert_eq!(enters(p, evs, "MPI_Allreduce"), 2);
        assert_balanced(p);
    }
}

#[test]
fn mpi_threads_are_locations_of_their_rank() {
    if !mpi_available() {
        return;
    }
    let d = tmp("mpi-hybrid");
    let exe = mpicc(&d, "hybrid");
    let out = d.join("exp");
    let o = run_mpirun(
        &out,
        &["--mode", "trace"],
        2,
        &[exe.to_str().unwrap(), "2", "10"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    let (sends, recvs) = messages(&exp);
    assert_eq!(sends, recvs);
    for p in &exp.processes {
        let all = events(p);
        assert_eq!(all.len(), 3, "rank {}: main and 2 threads", p.rank);
        // Each thread sends on its own tag, with its own size.
        for evs in all.values() {
            let tags: Vec<(u32, u64)> = evs
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::IsendBegin { tag, bytes, .. } => Some((tag, bytes)),
                    _ => None,
                })
                .collect();
            if tags.is_empty() {
                continue;
            }
            assert_eq!(tags.len(), 10);
            assert!(tags
                .iter()
                .all(|&(t, b)| t == tags[0].0 && b == 4 * (t as u64 + 1)));
        }
        assert_requests_complete(p);
    }
}

#[test]
fn mpi_abort_and_segfault_keep_the_rank_events() {
    if !mpi_available() {
        return;
    }
    let d = tmp("mpi-abort");
    let exe = mpicc(&d, "abort");
    let out = d.join("exp");
    let o = run_mpirun(&out, &["--mode", "trace"], 2, &[exe.to_str().unwrap()]);
    assert!(!o.status.success());
    let exp = Experiment::open(&out).unwrap();
    let p = process(&exp, 1);
    assert!(p.properties.contains(&("mpi_abort".into(), "3".into())));
    assert!(p.end_unix_ns.is_some(), "written before MPI ended it");
    let evs = &events(p)[&0];
    assert_eq!(enters(p, evs, "MPI_Barrier"), 3);
    assert_eq!(enters(p, evs, "MPI_Allreduce"), 3);
    // A rank that dies of a segmentation fault keeps its events too.
    let out = d.join("exp-segv");
    let o = run_mpirun(
        &out,
        &["--mode", "trace"],
        2,
        &[exe.to_str().unwrap(), "segv"],
    );
    assert!(!o.status.success());
    let exp = Experiment::open(&out).unwrap();
    let p = process(&exp, 1);
    assert!(p.end_unix_ns.is_none(), "it did not finish");
    assert_eq!(total_enters(p, "MPI_Allreduce"), 3, "{}", stderr(&o));
}

#[test]
fn missing_mpi_launcher_or_library_is_explained() {
    let d = tmp("no-mpi");
    // A launcher that is not installed.
    let o = parallax()
        .args(["run", "--", "mpirun-not-installed", "-np", "2", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(127), "as a shell says it");
    assert!(stderr(&o).contains("not found on PATH"), "{}", stderr(&o));
    // A program that needs an MPI library that is not there.
    let lib = d.join("libmpi_fake.so.99");
    let src = d.join("f.c");
    std::fs::write(&src, "int MPI_fake(void) { return 1; }\n").unwrap();
    compile(
        "gcc",
        &[
            "-shared",
            "-fPIC",
            "-Wl,-soname,libmpi_fake.so.99",
            src.to_str().unwrap(),
            "-o",
            lib.to_str().unwrap(),
        ],
    );
    let main = d.join("m.c");
    std::fs::write(
        &main,
        "int MPI_fake(void); int main(void) { return MPI_fake(); }\n",
    )
    .unwrap();
    let exe = d.join("needs-mpi");
    compile(
        "gcc",
        &[
            main.to_str().unwrap(),
            lib.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ],
    );
    std::fs::remove_file(&lib).unwrap();
    preload();
    let o = parallax().args(["run", "--"]).arg(&exe).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("needs libmpi_fake.so.99, which is not installed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn openshmem_one_sided_atomics_locks_and_collectives() {
    if !require(&["mpicc", "mpirun", "oshcc"]) {
        return;
    }
    let d = tmp("shmem");
    let exe = d.join("oneside");
    compile(
        "oshcc",
        &["-g", "-O1", "shmem/oneside.c", "-o", exe.to_str().unwrap()],
    );
    let out = d.join("exp");
    preload();
    let mut cmd = parallax();
    cmd.args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&out)
        .args(["--", "oshrun", "-np", "4", exe.to_str().unwrap(), "5"]);
    let o = mpi_env(&mut cmd).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = open(&out);
    assert_eq!(exp.processes.len(), 4);
    const ITERS: usize = 5;
    // Symmetric ids: whatever the PE, one object has one id.
    let mut ids: BTreeMap<(&str, u64), Vec<u64>> = BTreeMap::new();
    for p in &exp.processes {
        let me = p.rank;
        let (next, prev) = ((me + 1) % 4, (me + 3) % 4);
        assert!(
            p.end_unix_ns.is_some(),
            "PE {me}: written before shmem_finalize"
        );
        assert_balanced(p);
        let evs = &events(p)[&0];
        for (name, n) in [
            ("shmem_init", 1),
            ("shmem_finalize", 1),
            ("shmem_long_put", ITERS),
            ("shmem_int_put_nbi", ITERS),
            ("shmem_int_p", 1),
            ("shmem_long_get", ITERS),
            ("shmem_int_get_nbi", ITERS),
            ("shmem_int_g", 1),
            ("shmem_quiet", 2),
            ("shmem_int_atomic_fetch_add", ITERS),
            ("shmem_int_atomic_inc", ITERS),
            ("shmem_long_fadd", 1),
            ("shmem_set_lock", ITERS),
            ("shmem_clear_lock", ITERS),
            ("shmem_int_atomic_fetch", ITERS),
            ("shmem_int_wait_until", (me == 0) as usize),
            ("shmem_barrier_all", 8),
            ("shmem_barrier", (me % 2 == 0) as usize),
            ("shmem_broadcast64", 1),
            ("shmem_fcollect64", 1),
            ("shmem_collect64", 1),
            ("shmem_alltoall64", 1),
            ("shmem_int_sum_to_all", 1),
            ("shmem_fence", 1),
        ] {
            assert_eq!(enters(p, evs, name), n, "PE {me}: {name}");
        }
        let mut puts = Vec::new();
        let mut gets = Vec::new();
        let mut atomics = Vec::new();
        let mut locks = Vec::new();
        let mut colls = Vec::new();
        for e in evs {
            match e.kind {
                EventKind::Put {
                    target,
                    bytes,
                    addr,
                } => puts.push((target, bytes, addr)),
                EventKind::Get {
                    target,
                    bytes,
                    addr,
                } => gets.push((target, bytes, addr)),
                EventKind::Atomic {
                    target,
                    bytes,
                    addr,
                } => atomics.push((target, bytes, addr)),
                EventKind::LockRequest { lock } => locks.push(("request", lock)),
                EventKind::LockAcquired { lock } => locks.push(("acquired", lock)),
                EventKind::LockRelease { lock } => locks.push(("release", lock)),
                EventKind::ValueReached { addr } => {
                    ids.entry(("waited", 0)).or_default().push(addr)
                }
                EventKind::CollectiveEnd {
                    op,
                    comm,
                    root,
                    sent,
                    received,
                } if op != CollectiveOp::Barrier || comm != 0 => {
                    colls.push((op, comm, root, sent, received))
                }
                _ => {}
            }
        }
        assert_eq!(puts.len(), 2 * ITERS + 1);
        assert!(puts[..ITERS].iter().all(|x| x.0 == next && x.1 == 64));
        assert!(puts[ITERS..2 * ITERS]
            .iter()
            .all(|x| x.0 == next && x.1 == 16));
        assert_eq!((puts[2 * ITERS].0, puts[2 * ITERS].1), (next, 4));
        assert_eq!(gets.len(), 2 * ITERS + 1);
        assert!(gets[..ITERS]
            .iter()
            .all(|x| x.0 == prev && x.1 == 64 && x.2 == puts[0].2));
        assert!(gets[ITERS..2 * ITERS]
            .iter()
            .all(|x| x.0 == prev && x.1 == 16 && x.2 == puts[ITERS].2));
        ids.entry(("dst", 0)).or_default().push(puts[0].2);
        ids.entry(("flag", 0)).or_default().push(puts[2 * ITERS].2);
        assert_eq!(atomics.len(), 3 * ITERS + 1);
        assert!(atomics.iter().all(|a| a.0 == 0));
        let counter = atomics[0].2;
        assert_eq!(
            atomics
                .iter()
                .filter(|a| a.2 == counter && a.1 == 4)
                .count(),
            3 * ITERS
        );
        ids.entry(("counter", 0)).or_default().push(counter);
        let rma_done = count(evs, |k| *k == EventKind::RmaComplete { target: u32::MAX });
        assert_eq!(rma_done, 2);
        // Locks: request, acquired, release on one lock, ITERS times.
        assert_eq!(locks.len(), 3 * ITERS);
        for c in locks.chunks(3) {
            assert_eq!([c[0].0, c[1].0, c[2].0], ["request", "acquired", "release"]);
            assert!(c.iter().all(|x| x.1 == locks[0].1));
        }
        ids.entry(("lock", 0)).or_default().push(locks[0].1);
        // Collectives other than barrier_all.
        let mut want = Vec::new();
        if me % 2 == 0 {
            let even = (1u64 << 61) | (1 << 32) | 2;
            want.push((CollectiveOp::Barrier, even, NO_ROOT, 0, 0));
            assert_eq!(p.groups.get(&even), Some(&vec![0, 2]));
        }
        let root = if me == 1 { (32, 0) } else { (0, 32) };
        want.extend([
            (CollectiveOp::Broadcast, 0, 1, root.0, root.1),
            (CollectiveOp::Allgather, 0, NO_ROOT, 16, 64),
            (CollectiveOp::Allgather, 0, NO_ROOT, 8 * (1 + me as u64), 0),
            (CollectiveOp::Alltoall, 0, NO_ROOT, 32, 32),
            (CollectiveOp::Allreduce, 0, NO_ROOT, 12, 12),
        ]);
        // shmem_malloc is not used: nothing of kind Other.
        assert_eq!(colls, want, "PE {me}");
    }
    for ((what, _), v) in &ids {
        assert!(
            v.iter().all(|x| x == &v[0]),
            "{what}: one id on every PE: {v:?}"
        );
    }
    assert_eq!(
        ids[&("waited", 0)][0],
        ids[&("counter", 0)][0],
        "waited on the counter"
    );

    // With Open MPI's defaults every OSHMEM program dies in shmem_finalize
    // here (docs/interposition.md); what it did before is all written.
    let out = d.join("exp-default");
    let mut cmd = parallax();
    cmd.args(["run", "--no-report", "--mode", "trace", "--out"])
        .arg(&out)
        .args(["--", "oshrun", "-np", "2", exe.to_str().unwrap(), "2"]);
    let o = mpi_env(&mut cmd)
        .env_remove("OMPI_MCA_opal_common_ucx_opal_mem_hooks")
        .output()
        .unwrap();
    let exp = open(&out);
    assert_eq!(exp.processes.len(), 2, "{}", stderr(&o));
    for p in &exp.processes {
        assert!(p.end_unix_ns.is_some());
        assert_eq!(total_enters(p, "shmem_long_put"), 2);
        assert_eq!(total_enters(p, "shmem_finalize"), 1);
    }
}

#[test]
fn gasp_events_of_a_runtime_become_regions_and_events() {
    let d = tmp("gasp");
    let exe = d.join("gasp_runtime");
    let inc = format!("-I{}", workspace().join("crates/preload/include").display());
    compile(
        "gcc",
        &[
            "-g",
            "-O1",
            &inc,
            "gasp_runtime.c",
            "-o",
            exe.to_str().unwrap(),
            "-lpthread",
        ],
    );
    // Without a tool the runtime runs on its own.
    let o = Command::new(&exe).output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("tool=0"), "{}", stdout(&o));
    let out = d.join("exp");
    let o = run(
        &out,
        &["--mode", "trace"],
        &[exe.to_str().unwrap(), "2", "4"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = values(&stdout(&o));
    assert_eq!(v["tool"], 1);
    assert_eq!(
        (v["control_was"], v["control_back"]),
        (1, 0),
        "gasp_control answers"
    );
    let exp = open(&out);
    let p = &exp.processes[0];
    assert_balanced(p);
    let lock = v["lock"];
    let mut threads = 0;
    for evs in events(p).values() {
        if enters(p, evs, "solve") == 0 {
            continue;
        }
        threads += 1;
        for (name, n) in [
            ("solve", 1),
            ("upc_notify", 4),
            ("upc_wait", 4),
            ("upc_barrier", 4),
            ("upc_lock", 4),
            ("upc_unlock", 4),
            ("upc_memget", 4),
            ("upc_memput", 4),
            ("shared write (non-blocking)", 4),
            ("shared read (non-blocking)", 4),
            ("upc_sync_nb", 4),
            ("upc_all_reduce", 1),
            ("upc_forall", 0),
        ] {
            assert_eq!(enters(p, evs, name), n, "{name}");
        }
        let c = |f: &dyn Fn(&EventKind) -> bool| count(evs, f);
        assert_eq!(c(&|k| *k == EventKind::LockRequest { lock }), 4);
        assert_eq!(c(&|k| *k == EventKind::LockAcquired { lock }), 4);
        assert_eq!(c(&|k| *k == EventKind::LockRelease { lock }), 4);
        let bytes = |want: u64| {
            c(&|k| matches!(k, EventKind::Put { bytes, target: u32::MAX, .. } if *bytes == want))
        };
        assert_eq!((bytes(256), bytes(64)), (4, 4));
        assert_eq!(c(&|k| matches!(k, EventKind::Get { bytes: 128, .. })), 4);
        assert_eq!(c(&|k| *k == EventKind::RmaComplete { target: u32::MAX }), 4);
        assert_eq!(c(&|k| *k == EventKind::CollectiveBegin), 9);
        assert_eq!(
            c(&|k| matches!(
                k,
                EventKind::CollectiveEnd {
                    op: CollectiveOp::Barrier,
                    ..
                }
            )),
            8
        );
        assert_eq!(
            c(&|k| matches!(
                k,
                EventKind::CollectiveEnd {
                    op: CollectiveOp::Reduce,
                    sent: 80,
                    ..
                }
            )),
            1
        );
        let iteration = region(p, "iteration").unwrap();
        let marks: Vec<i64> = evs
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Mark { mark, value } if mark == iteration => Some(value),
                _ => None,
            })
            .collect();
        assert_eq!(marks, [0, 1, 2, 3]);
    }
    assert_eq!(threads, 2);
    let barrier = &p.regions[&region(p, "upc_barrier").unwrap()];
    assert!(barrier.file.ends_with("gasp_runtime.c") && barrier.line > 0);
}

#[test]
fn mpi_loaded_with_dlopen_is_explained() {
    if !mpi_available() {
        return;
    }
    // Like a Python extension: a library that links MPI, opened at run
    // time by a program that does not.
    let d = tmp("mpi-dlopen");
    let use_c = d.join("use.c");
    std::fs::write(
        &use_c,
        "#include <mpi.h>\nint run(void) { MPI_Init(0, 0); return MPI_Finalize(); }\n",
    )
    .unwrap();
    let lib = d.join("libuse.so");
    compile(
        "mpicc",
        &[
            "-shared",
            "-fPIC",
            use_c.to_str().unwrap(),
            "-o",
            lib.to_str().unwrap(),
        ],
    );
    let host_c = d.join("host.c");
    std::fs::write(
        &host_c,
        format!(
            "#include <dlfcn.h>\nint main(void) {{ void *h = dlopen(\"{}\", RTLD_NOW); \
             int (*run)(void) = (int (*)(void))dlsym(h, \"run\"); return run(); }}\n",
            lib.display()
        ),
    )
    .unwrap();
    let host = d.join("host");
    compile(
        "gcc",
        &[
            host_c.to_str().unwrap(),
            "-o",
            host.to_str().unwrap(),
            "-ldl",
        ],
    );
    let o = run(&d.join("exp"), &[], &[host.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("MPI was loaded after the interposition library"),
        "{}",
        stderr(&o)
    );
}
