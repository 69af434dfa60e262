//! Thread creation and join, recorded so that analyses can link a child
//! location to its creator.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parallax_model::event::EventKind;
use parallax_model::region::RegionKind;

use crate::events::record;
use crate::region::Callsite;

static CREATE_SITE: Callsite =
    Callsite::new("thread::spawn", RegionKind::ThreadCreate, file!(), line!());
static JOIN_SITE: Callsite =
    Callsite::new("thread::join", RegionKind::ThreadJoin, file!(), line!());
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// A measured thread's handle.
#[derive(Debug)]
pub struct JoinHandle<T> {
    inner: std::thread::JoinHandle<T>,
    token: u64,
}

/// Like [`std::thread::spawn`], recording the creation in the parent and the
/// thread's begin and end in the child.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_named(None, f)
}

/// Like [`spawn`], naming the thread (the name appears in reports).
pub fn spawn_named<F, T>(name: Option<String>, f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let token = NEXT_TOKEN.fetch_add(1, Relaxed);
    let _r = CREATE_SITE.enter();
    record(EventKind::ThreadCreate { token });
    let mut b = std::thread::Builder::new();
    if let Some(n) = name {
        b = b.name(n);
    }
    let inner = b
        .spawn(move || {
            crate::events::thread_begin(token);
            let r = f();
            record(EventKind::ThreadEnd { token });
            r
        })
        .expect("the operating system could not create a thread");
    JoinHandle { inner, token }
}

impl<T> JoinHandle<T> {
    /// Waits for the thread, recording the join.
    pub fn join(self) -> std::thread::Result<T> {
        let _r = JOIN_SITE.enter();
        let r = self.inner.join();
        record(EventKind::ThreadJoin { token: self.token });
        r
    }
}
