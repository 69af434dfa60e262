//! Workloads with known behaviour for Parallax's accuracy experiments.
//!
//! - [`livermore`]: the 24 Livermore Fortran Kernels, each runnable with no
//!   probes, with one region around the kernel (the reference time T) or
//!   with a region around every iteration of its innermost loops (the
//!   fully instrumented time T_m), for the sequential perturbation
//!   compensation experiments of Malony's thesis (ch. 3).
//!
//! The `livermore` binary runs them and prints one JSON line per kernel
//! and level.
#![warn(missing_docs)]

pub mod livermore;
