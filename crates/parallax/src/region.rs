//! Regions: call sites registered once, entered and left by guards.

use std::sync::atomic::{AtomicU32, Ordering::*};
use std::sync::Mutex;

use parallax_model::defs::{Def, Entry};
use parallax_model::event::RegionId;
use parallax_model::region::RegionKind;

use crate::preserving;
use crate::process::{self, FLAGS, UNINIT};
use crate::thread;

/// A static description of a region at one place in the source; the
/// `region!` macro and `#[instrument]` make one per call site. Its id is
/// assigned when it is first entered while measuring.
#[derive(Debug)]
pub struct Callsite {
    id: AtomicU32,
    name: &'static str,
    kind: RegionKind,
    file: &'static str,
    line: u32,
}

static NEXT_REGION: AtomicU32 = AtomicU32::new(1);
/// Every region defined in this process. A region keeps its id for the
/// life of the process; each new measurement writes all of them again.
static KNOWN: Mutex<Vec<Def>> = Mutex::new(Vec::new());

fn define_region(id: RegionId, kind: RegionKind, name: &str, file: &str, line: u32) {
    let def = Def::Region {
        id,
        kind,
        name: name.to_string(),
        file: file.to_string(),
        line,
    };
    process::write_defs(std::slice::from_ref(&def));
    KNOWN.lock().unwrap_or_else(|e| e.into_inner()).push(def);
}

/// The definitions of every region registered so far.
pub(crate) fn known() -> Vec<Def> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

impl Callsite {
    /// A call site of region `name`.
    pub const fn new(
        name: &'static str,
        kind: RegionKind,
        file: &'static str,
        line: u32,
    ) -> Callsite {
        Callsite {
            id: AtomicU32::new(0),
            name,
            kind,
            file,
            line,
        }
    }

    /// A call site whose region already has id `id` (calibration's).
    pub(crate) const fn with_id(id: RegionId, name: &'static str) -> Callsite {
        Callsite {
            id: AtomicU32::new(id),
            name,
            kind: RegionKind::User,
            file: "",
            line: 0,
        }
    }

    /// Enters the region; leaving happens when the guard is dropped.
    #[inline(always)]
    pub fn enter(&'static self) -> RegionGuard {
        self.enter_as(FLAGS.load(Relaxed))
    }

    /// [`Callsite::enter`] under flags `f` (calibration times the probe
    /// with flags of its own).
    #[inline(always)]
    pub(crate) fn enter_as(&'static self, f: u8) -> RegionGuard {
        let id = self.id_under(f, Entry::Guard);
        RegionGuard {
            active: id != 0 && thread::with(|st| st.enter(id)).is_some(),
        }
    }

    /// The region's id under flags `f`, registering it (entered through
    /// `entry`) on first use; 0 if not recording.
    #[inline(always)]
    fn id_under(&'static self, f: u8, entry: Entry) -> RegionId {
        if f == 0 {
            return 0;
        }
        match self.id.load(Relaxed) {
            id if id != 0 && f & UNINIT == 0 => id,
            _ => self.register_as(entry),
        }
    }

    /// The region's id, registering it on first use; 0 if it was never
    /// registered and measurement is off.
    #[inline(always)]
    pub fn id(&'static self) -> RegionId {
        match self.id.load(Relaxed) {
            0 => self.register(),
            id => id,
        }
    }

    /// Enters the region with a probe that preserves the caller's
    /// registers ([`crate::preserving`]); leaving happens when the guard is
    /// dropped.
    #[inline(always)]
    pub fn enter_preserving(&'static self) -> PreservingGuard {
        self.enter_preserving_as(FLAGS.load(Relaxed))
    }

    /// [`Callsite::enter_preserving`] under flags `f`.
    #[inline(always)]
    pub(crate) fn enter_preserving_as(&'static self, f: u8) -> PreservingGuard {
        let id = self.id_under(f, Entry::Preserving);
        PreservingGuard {
            active: id != 0 && preserving::enter_as(f, id),
        }
    }

    /// The region's id, registering it if needed; 0 if not measuring.
    #[cold]
    #[inline(never)]
    pub fn register(&'static self) -> RegionId {
        self.register_as(Entry::Guard)
    }

    /// [`Callsite::register`], for a region entered through `entry`.
    #[cold]
    #[inline(never)]
    fn register_as(&'static self, entry: Entry) -> RegionId {
        crate::failsafe::contained(|| self.register_now(entry)).unwrap_or(0)
    }

    fn register_now(&'static self, entry: Entry) -> RegionId {
        if FLAGS.load(Relaxed) & UNINIT != 0 {
            process::init_from_env();
        }
        if !process::active() {
            return 0;
        }
        // Hold the list while checking, so that two threads registering
        // the same site define it once.
        let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        let id = self.id.load(Acquire);
        if id != 0 {
            return id;
        }
        let id = NEXT_REGION.fetch_add(1, Relaxed);
        let mut defs = vec![Def::Region {
            id,
            kind: self.kind,
            name: self.name.to_string(),
            file: self.file.to_string(),
            line: self.line,
        }];
        if entry != Entry::Guard {
            defs.push(Def::Entry { region: id, entry });
        }
        process::write_defs(&defs);
        known.extend(defs);
        self.id.store(id, Release);
        id
    }
}

/// Registers a region known only at run time (a name from a string) and
/// returns its id; 0 if not measuring. Each call defines a new id: keep it.
pub fn register_region(name: &str, kind: RegionKind, file: &str, line: u32) -> RegionId {
    if FLAGS.load(Relaxed) & UNINIT != 0 {
        process::init_from_env();
    }
    if !process::active() {
        return 0;
    }
    crate::failsafe::contained(|| {
        let id = NEXT_REGION.fetch_add(1, Relaxed);
        define_region(id, kind, name, file, line);
        id
    })
    .unwrap_or(0)
}

/// Records a definition for this process (a load-map segment, a code
/// address, a clock offset, a fact): written now if measuring, and again at
/// the start of every later measurement of this process (like regions).
/// Cold: takes a lock and may write to the definitions file.
pub fn define(def: Def) {
    if FLAGS.load(Relaxed) & UNINIT != 0 {
        process::init_from_env();
    }
    crate::failsafe::contained(|| {
        let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        if process::active() {
            process::write_defs(std::slice::from_ref(&def));
        }
        if known.try_reserve(1).is_ok() {
            known.push(def);
        }
    });
}

/// Whether the definitions lists are free (checked in a forked child, whose
/// other threads are gone).
pub(crate) fn known_is_free() -> bool {
    KNOWN.try_lock().is_ok()
}

/// Leaves the region on drop.
#[must_use = "the region is left when this guard is dropped"]
#[derive(Debug)]
pub struct RegionGuard {
    active: bool,
}

impl Drop for RegionGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.active {
            thread::with(|st| st.leave());
        }
    }
}

/// Leaves a region entered with a register-preserving probe on drop.
#[must_use = "the region is left when this guard is dropped"]
#[derive(Debug)]
pub struct PreservingGuard {
    active: bool,
}

impl Drop for PreservingGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.active {
            preserving::leave();
        }
    }
}

/// Enters region `id` (from [`register_region`]) on this thread. Pair every
/// call with [`leave`]; prefer guards where the language allows.
#[inline(always)]
pub fn enter(id: RegionId) -> bool {
    enter_as(FLAGS.load(Relaxed), id)
}

/// [`enter`] under flags `f`.
#[inline(always)]
pub(crate) fn enter_as(f: u8, id: RegionId) -> bool {
    if f == 0 || id == 0 {
        return false;
    }
    if f & UNINIT != 0 {
        process::init_from_env();
    }
    thread::with(|st| st.enter(id)).is_some()
}

/// The enter probe of the C entry points: 0 if not recorded, 1 if recorded
/// in the profile only, 3 if traced too.
#[inline(always)]
pub fn enter_for_c(id: RegionId) -> i32 {
    enter_code(FLAGS.load(Relaxed), id)
}

/// [`enter_for_c`] under flags `f`.
#[inline(always)]
pub(crate) fn enter_code(f: u8, id: RegionId) -> i32 {
    if !enter_as(f, id) {
        return 0;
    }
    // The first probe of a process configured it: its flags are now set.
    let f = if f & UNINIT != 0 {
        FLAGS.load(Relaxed)
    } else {
        f
    };
    if f & process::TRACE != 0 {
        3
    } else {
        1
    }
}

/// Leaves the innermost region entered with [`enter`] (when it returned
/// true).
#[inline(always)]
pub fn leave() {
    thread::with(|st| st.leave());
}
