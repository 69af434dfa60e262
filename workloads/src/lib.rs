//! Workloads with known behaviour for Parallax's accuracy experiments.
//!
//! - [`livermore`]: the 24 Livermore Fortran Kernels, each runnable with no
//!   probes, with one region around the kernel (the reference time T) or
//!   with a region around every iteration of its innermost loops (the
//!   fully instrumented time T_m), for the sequential perturbation
//!   compensation experiments of Malony's thesis (ch. 3).
//! - [`parallel`]: kernels on 2 to 4 threads that synchronize (locks,
//!   barriers, semaphores, advance/await, fork/join), with one region
//!   around the kernel or with measured synchronization and a region per
//!   loop body, for the event-based compensation of ch. 4 and 5.
//!
//! The `livermore` and `parallel` binaries run them and print one JSON
//! line per run.
#![warn(missing_docs)]

pub mod livermore;
pub mod parallel;
