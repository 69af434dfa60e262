//! Parallax's measurement API and runtime for Rust programs.
//!
//! Link this crate into a program to measure it: regions (blocks and
//! functions), explicit events (messages, collectives, locks, semaphores,
//! advance/await, marks with data) and instrumented synchronization
//! primitives. What is recorded is chosen when the program runs, by
//! environment variables (see [`config`]) or by [`init`]; `parallax run` sets
//! them for you.
//!
//! ```
//! #[parallax::instrument]
//! fn work(n: u64) -> u64 {
//!     let _g = parallax::region!("inner loop");
//!     (0..n).sum()
//! }
//! assert_eq!(work(10), 45);
//! ```
//!
//! Probes are cheap enough to leave in: with measurement off a probe is one
//! load and a branch; in trace mode an enter or leave is a clock read and a
//! few bytes written to a per-thread buffer (no lock, no atomic
//! read-modify-write, no allocation, no system call). A thread's buffer is
//! written to its own file when full (between flush-begin and flush-end
//! events), when the thread ends, when the process exits, and on fatal
//! signals; the buffer itself is mapped from a spill file of the
//! experiment, so that a process that is killed keeps what it recorded.
//!
//! Nothing the runtime does may abort, hang or change the result of the
//! program: a failure inside it (a panic, memory or files that run short)
//! stops measurement, or leaves a thread unmeasured, with one line on
//! stderr, and the experiment counts what could not be recorded.
//!
//! At start-up the runtime measures its own probe costs ([`calibrate`]) and
//! records them in the experiment, for perturbation compensation.
#![warn(missing_docs)]

mod buffer;
pub mod calibrate;
pub mod clock;
pub mod config;
pub mod events;
pub mod failsafe;
mod files;
mod losses;
pub mod preserving;
mod process;
mod profile;
mod rank_dir;
mod region;
mod signals;
mod spawn;
mod states;
pub mod sync;
mod thread;

pub use config::{Config, ConfigError, Mode};
pub use failsafe::contained;
pub use parallax_macros::instrument;
pub use parallax_model::defs::Def;
pub use parallax_model::region::RegionKind;
pub use process::{
    end_of_image, finish, init, mode, out_dir, prepare_threads, set_flow, InitError,
};
pub use region::{
    define, enter, enter_for_c, leave, register_region, Callsite, PreservingGuard, RegionGuard,
};
pub use spawn::{spawn, spawn_named, JoinHandle};
pub use states::label_thread;

/// Switches recording on (TraceFlow's `flowon`).
pub fn flow_on() {
    set_flow(true);
}

/// Switches recording off (TraceFlow's `flowoff`).
pub fn flow_off() {
    set_flow(false);
}

/// Enters a region for the rest of the enclosing block.
///
/// `region!("name")` makes a user region; `region!(Loop, "name")` names the
/// generic operation type. The region is left when the returned guard is
/// dropped.
#[macro_export]
macro_rules! region {
    ($name:expr) => {
        $crate::region!(User, $name)
    };
    ($kind:ident, $name:expr) => {{
        static __PARALLAX_SITE: $crate::Callsite =
            $crate::Callsite::new($name, $crate::RegionKind::$kind, file!(), line!());
        __PARALLAX_SITE.enter()
    }};
}

/// Enters a region with a probe that preserves the caller's registers
/// ([`preserving`]): `let _g = region_preserving!(Loop, "body");`. For
/// probes inside hot loops, where an ordinary probe would make the compiler
/// keep the loop's values in memory and so perturb the code around it.
#[macro_export]
macro_rules! region_preserving {
    ($kind:ident, $name:expr) => {{
        static __PARALLAX_SITE: $crate::Callsite =
            $crate::Callsite::new($name, $crate::RegionKind::$kind, file!(), line!());
        __PARALLAX_SITE.enter_preserving()
    }};
}

/// Records a user mark with a value: `mark!("iteration", i)`.
#[macro_export]
macro_rules! mark {
    ($name:expr, $value:expr) => {{
        static __PARALLAX_MARK: $crate::Callsite =
            $crate::Callsite::new($name, $crate::RegionKind::Mark, file!(), line!());
        let id = __PARALLAX_MARK.id();
        if id != 0 {
            $crate::events::mark(id, ($value) as i64);
        }
    }};
}

/// Support for the `#[instrument]` attribute.
///
/// /!\ Not a stable API: only the macro may use it. /!\
#[doc(hidden)]
pub mod __macro_support {
    pub use crate::region::{Callsite, RegionGuard};
    pub use parallax_model::region::RegionKind;

    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// Wraps a future so that each poll is a visit of the region.
    pub fn instrument_future<F: Future>(
        site: &'static Callsite,
        fut: F,
    ) -> impl Future<Output = F::Output> {
        struct Polled<F> {
            site: &'static Callsite,
            fut: F,
        }
        impl<F: Future> Future for Polled<F> {
            type Output = F::Output;
            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
                // Safety: `fut` is structurally pinned; it is never moved.
                let this = unsafe { self.get_unchecked_mut() };
                let _g = this.site.enter();
                unsafe { Pin::new_unchecked(&mut this.fut) }.poll(cx)
            }
        }
        Polled { site, fut }
    }
}
