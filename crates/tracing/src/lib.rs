//! Records the spans and events of code instrumented with [`tracing`]
//! into Parallax, so that a Rust program already instrumented that way is
//! measured, traced, profiled and analysed like any other.
//!
//! ```no_run
//! parallax_tracing::init().expect("no other global subscriber");
//! let _s = tracing::info_span!("solve").entered();   // a Parallax region
//! tracing::info!(residual = 42, "converged");        // a Parallax mark
//! ```
//!
//! Each span callsite is a region (kind `User`, with the callsite's file
//! and line); entering a span enters the region and exiting leaves it. An
//! event is a mark named after its callsite's name, with the value of its
//! first integer field (0 if none). Measurement starts as any Parallax
//! measurement does (`PARALLAX_MODE`, `parallax run`, or
//! `parallax::init`).
//!
//! [`ParallaxSubscriber`] is a whole subscriber, not a layer over
//! `tracing-subscriber`'s registry: it gives every span of a callsite the
//! same id (the region's), which `tracing` allows, so creating, entering
//! and closing a span allocate nothing and take no lock, and a span costs
//! little more than Parallax's own probe pair. Spans must be entered and
//! exited in nested order on each thread (as guards and `#[instrument]`
//! do); an exit always leaves the innermost entered span. Span fields are
//! not recorded.
//!
//! [`tracing`]: https://docs.rs/tracing

mod table;

use std::cell::Cell;

use tracing_core::span::{Attributes, Id, Record};
use tracing_core::subscriber::{Interest, Subscriber};
use tracing_core::{field, Event, Metadata};

use parallax::RegionKind;

/// A `tracing` subscriber that records into Parallax.
#[derive(Debug, Default, Clone, Copy)]
pub struct ParallaxSubscriber {
    _private: (),
}

impl ParallaxSubscriber {
    /// The subscriber.
    pub fn new() -> ParallaxSubscriber {
        ParallaxSubscriber::default()
    }
}

/// Sets [`ParallaxSubscriber`] as the global default subscriber (the
/// cheapest way to use it: a global subscriber is reached without reference
/// counting).
pub fn init() -> Result<(), tracing_core::dispatcher::SetGlobalDefaultError> {
    tracing_core::dispatcher::set_global_default(tracing_core::Dispatch::new(
        ParallaxSubscriber::new(),
    ))
}

/// Span ids: the region id in the low 32 bits, and this bit so that a
/// span of a callsite Parallax does not record (id 0) still has a nonzero
/// id.
const SPAN: u64 = 1 << 32;

thread_local! {
    /// One bit per entered span of this thread, innermost lowest: whether
    /// its enter was recorded (so that its exit leaves a region only then,
    /// whatever happened to measurement in between).
    static ENTERED: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
}

/// Spans nested deeper than this on a thread are not recorded.
const MAX_DEPTH: u32 = 64;

fn region_of(meta: &'static Metadata<'static>, kind: RegionKind) -> u32 {
    table::region(meta, || {
        parallax::register_region(
            meta.name(),
            kind,
            meta.file().unwrap_or(""),
            meta.line().unwrap_or(0),
        )
    })
}

impl Subscriber for ParallaxSubscriber {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        // Registered now, off the hot path, where measurement is on.
        let kind = if meta.is_span() {
            RegionKind::User
        } else {
            RegionKind::Mark
        };
        let _ = region_of(meta, kind);
        Interest::always()
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    #[inline]
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        Id::from_u64(SPAN | region_of(span.metadata(), RegionKind::User) as u64)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mark = region_of(event.metadata(), RegionKind::Mark);
        if mark == 0 {
            return;
        }
        let mut value = FirstInteger(None);
        event.record(&mut value);
        parallax::events::mark(mark, value.0.unwrap_or(0));
    }

    #[inline]
    fn enter(&self, span: &Id) {
        let region = span.into_u64() as u32;
        let recorded = region != 0 && parallax::enter(region);
        ENTERED.with(|e| {
            let (bits, depth) = e.get();
            let bits = if depth < MAX_DEPTH {
                (bits << 1) | recorded as u64
            } else {
                bits
            };
            if depth >= MAX_DEPTH && recorded {
                // Too deep to remember: not recorded after all.
                parallax::leave();
            }
            e.set((bits, depth + 1));
        });
    }

    #[inline]
    fn exit(&self, _: &Id) {
        ENTERED.with(|e| {
            let (bits, depth) = e.get();
            if depth == 0 {
                return;
            }
            if depth <= MAX_DEPTH {
                if bits & 1 != 0 {
                    parallax::leave();
                }
                e.set((bits >> 1, depth - 1));
            } else {
                e.set((bits, depth - 1));
            }
        });
    }

    fn clone_span(&self, id: &Id) -> Id {
        id.clone()
    }

    fn try_close(&self, _: Id) -> bool {
        // Spans share their callsite's id and hold nothing to free.
        false
    }
}

/// The first integer field of an event.
struct FirstInteger(Option<i64>);

impl field::Visit for FirstInteger {
    fn record_i64(&mut self, _: &field::Field, value: i64) {
        self.0.get_or_insert(value);
    }

    fn record_u64(&mut self, _: &field::Field, value: u64) {
        self.0.get_or_insert(value as i64);
    }

    fn record_debug(&mut self, _: &field::Field, _: &dyn std::fmt::Debug) {}
}
