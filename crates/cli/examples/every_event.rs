//! One rank of an MPI-like program that records every kind of event
//! through the `parallax` API (two ranks make a whole run): the export
//! tests' workload (crates/cli/tests/export.rs).

use parallax::events::{self, record};
use parallax_model::event::{CollectiveOp, EventKind, NO_ROOT};

/// Iterations of the main loop (the export tests count on it).
const STEPS: u64 = 6;

/// The workload of one rank: `every_event RANK`.
fn main() {
    let rank: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .expect("usage: every_event RANK (0 or 1)");
    let other = 1 - rank;
    events::define_group(0, vec![0, 1]);
    let metric = events::register_metric("flops", "1");
    {
        let _g = parallax::region!(Setup, "MPI_Init");
    }
    let lock = std::sync::Arc::new(parallax::sync::Mutex::new(0u64));
    let helper = {
        let lock = lock.clone();
        parallax::spawn_named(Some("helper".into()), move || {
            for _ in 0..STEPS {
                let _g = parallax::region!(Function, "help");
                *lock.lock().unwrap() += 1;
            }
        })
    };
    for i in 0..STEPS {
        let _it = parallax::region!(Loop, "step");
        {
            let _c = parallax::region!(Function, "compute");
            std::hint::black_box((0..20_000u64).sum::<u64>());
        }
        let bytes = 1024 * (i + 1);
        if rank == 0 {
            let _g = parallax::region!(Send, "MPI_Send");
            events::send(other, 7, 0, bytes);
        } else {
            let _g = parallax::region!(Recv, "MPI_Recv");
            events::recv(other, 7, 0, bytes);
        }
        {
            let _g = parallax::region!(Send, "MPI_Isend");
            record(EventKind::IsendBegin {
                peer: other,
                tag: 9,
                comm: 0,
                bytes: 64,
                request: 100 + i,
            });
        }
        {
            let _g = parallax::region!(Recv, "MPI_Irecv");
            record(EventKind::IrecvBegin { request: 200 + i });
        }
        {
            let _g = parallax::region!(Wait, "MPI_Waitall");
            record(EventKind::IsendComplete { request: 100 + i });
            record(EventKind::IrecvComplete {
                peer: other,
                tag: 9,
                comm: 0,
                bytes: 64,
                request: 200 + i,
            });
        }
        {
            let _g = parallax::region!(Collective, "MPI_Allreduce");
            events::collective_begin();
            events::collective_end(CollectiveOp::Allreduce, 0, NO_ROOT, 8, 8);
        }
        {
            let _g = parallax::region!(Collective, "MPI_Bcast");
            events::collective_begin();
            let (s, r) = if rank == 0 { (256, 0) } else { (0, 256) };
            events::collective_end(CollectiveOp::Broadcast, 0, 0, s, r);
        }
        {
            let _g = parallax::region!(Barrier, "MPI_Barrier");
            events::collective_begin();
            events::collective_end(CollectiveOp::Barrier, 0, NO_ROOT, 0, 0);
        }
        events::metric(metric, 1000 * i as i64);
        parallax::mark!("step", i);
        {
            let _g = parallax::region!(Put, "shmem_put");
            record(EventKind::Put {
                target: other,
                bytes: 32,
                addr: 0x1000 + i,
            });
        }
        {
            let _g = parallax::region!(Get, "shmem_get");
            record(EventKind::Get {
                target: other,
                bytes: 16,
                addr: 0x2000 + i,
            });
        }
        {
            let _g = parallax::region!(Atomic, "shmem_atomic_add");
            record(EventKind::Atomic {
                target: other,
                bytes: 8,
                addr: 0x3000,
            });
        }
        {
            let _g = parallax::region!(RmaSync, "shmem_quiet");
            record(EventKind::RmaComplete { target: u32::MAX });
        }
        {
            let _g = parallax::region!(WaitOnValue, "shmem_wait_until");
            record(EventKind::ValueReached { addr: 0x4000 });
        }
        {
            let _g = parallax::region!(Fork, "parallel");
            record(EventKind::Fork { team: 5, size: 2 });
            record(EventKind::Join { team: 5 });
        }
        events::sem_post(0x77);
        events::sem_acquired(0x77);
        events::advance(0x88, i);
        events::await_done(0x88, i);
        events::iteration(0x99, i);
        *lock.lock().unwrap() += 1;
    }
    helper.join().unwrap();
    {
        let _g = parallax::region!(Setup, "MPI_Finalize");
    }
}
