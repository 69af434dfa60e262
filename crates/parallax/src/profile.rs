//! The per-thread call-path tree of profile mode.
//!
//! Nodes live in one array, parents before children; each node keeps the
//! child it entered last, so a loop that calls the same function again finds
//! its node with one comparison. Memory is bounded: once `max_nodes` paths
//! exist, new paths are counted in one overflow node, and frames deeper than
//! `max_depth` are counted but not profiled.
//!
//! The owning thread updates its profile while another thread may encode
//! it (closing every state at exit, or in a signal handler). So everything
//! the encoder reads is held in atomics, which the owner updates with
//! relaxed loads and stores (plain moves, as plain fields would be), and
//! the node array never moves under a reader: when it grows, the old one is
//! kept until the profile is dropped. The owner's own bookkeeping is in
//! [`Profile`]; what any thread may read is [`Published`].

use std::alloc::{self, Layout};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};

use parallax_model::event::{RegionId, OVERFLOW_REGION, SKIPPED_REGION};
use parallax_model::profile::{self, Stats};

const NONE: u32 = u32::MAX;
/// Nodes the tree grows by, at least.
const NODES_AT_ONCE: usize = 256;
const ROOT: u32 = 0;

/// [`Stats`] in atomics: written by the owner only, read by anyone.
struct AtomicStats {
    count: AtomicU64,
    inclusive: AtomicU64,
    exclusive: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    /// The bits of an `f64`.
    sum_sq: AtomicU64,
}

impl AtomicStats {
    fn new(s: &Stats) -> AtomicStats {
        AtomicStats {
            count: AtomicU64::new(s.count),
            inclusive: AtomicU64::new(s.inclusive),
            exclusive: AtomicU64::new(s.exclusive),
            min: AtomicU64::new(s.min),
            max: AtomicU64::new(s.max),
            sum_sq: AtomicU64::new(s.sum_sq.to_bits()),
        }
    }

    #[inline(always)]
    fn load(&self) -> Stats {
        Stats {
            count: self.count.load(Relaxed),
            inclusive: self.inclusive.load(Relaxed),
            exclusive: self.exclusive.load(Relaxed),
            min: self.min.load(Relaxed),
            max: self.max.load(Relaxed),
            sum_sq: f64::from_bits(self.sum_sq.load(Relaxed)),
        }
    }

    /// Adds one visit as [`Stats::add`] does, storing only what changes.
    /// Owner only.
    #[inline(always)]
    fn add(&self, inclusive: u64, children: u64) {
        let set = |a: &AtomicU64, v: u64| a.store(v, Relaxed);
        let get = |a: &AtomicU64| a.load(Relaxed);
        set(&self.count, get(&self.count) + 1);
        set(
            &self.inclusive,
            get(&self.inclusive).saturating_add(inclusive),
        );
        let own = inclusive.saturating_sub(children);
        set(&self.exclusive, get(&self.exclusive).saturating_add(own));
        if inclusive < get(&self.min) {
            set(&self.min, inclusive);
        }
        if inclusive > get(&self.max) {
            set(&self.max, inclusive);
        }
        let d = inclusive as f64;
        set(
            &self.sum_sq,
            (f64::from_bits(get(&self.sum_sq)) + d * d).to_bits(),
        );
    }

    /// Owner only.
    #[inline(always)]
    fn store(&self, s: &Stats) {
        self.count.store(s.count, Relaxed);
        self.inclusive.store(s.inclusive, Relaxed);
        self.exclusive.store(s.exclusive, Relaxed);
        self.min.store(s.min, Relaxed);
        self.max.store(s.max, Relaxed);
        self.sum_sq.store(s.sum_sq.to_bits(), Relaxed);
    }
}

/// One call path. `region` and `parent` are set before the node is
/// published and never change; the links are the owner's.
struct Node {
    region: AtomicU32,
    parent: AtomicU32,
    first_child: AtomicU32,
    next_sibling: AtomicU32,
    hot: AtomicU32,
    stats: AtomicStats,
}

impl Node {
    fn new(region: RegionId, parent: u32) -> Node {
        Node {
            region: AtomicU32::new(region),
            parent: AtomicU32::new(parent),
            first_child: AtomicU32::new(NONE),
            next_sibling: AtomicU32::new(NONE),
            hot: AtomicU32::new(NONE),
            stats: AtomicStats::new(&Stats::EMPTY),
        }
    }

    /// Makes this node `n`, with atomic stores only.
    fn set(&self, n: &Node) {
        for (a, b) in [
            (&self.region, &n.region),
            (&self.parent, &n.parent),
            (&self.first_child, &n.first_child),
            (&self.next_sibling, &n.next_sibling),
            (&self.hot, &n.hot),
        ] {
            a.store(b.load(Relaxed), Relaxed);
        }
        self.stats.store(&n.stats.load());
    }

    fn copy(&self) -> Node {
        Node {
            region: AtomicU32::new(self.region.load(Relaxed)),
            parent: AtomicU32::new(self.parent.load(Relaxed)),
            first_child: AtomicU32::new(self.first_child.load(Relaxed)),
            next_sibling: AtomicU32::new(self.next_sibling.load(Relaxed)),
            hot: AtomicU32::new(self.hot.load(Relaxed)),
            stats: AtomicStats::new(&self.stats.load()),
        }
    }
}

/// An open visit.
struct Frame {
    node: AtomicU32,
    start: AtomicU64,
    /// Time spent in children that returned.
    children: AtomicU64,
}

/// A node array, with the array it replaced (kept: a reader may still be
/// in it). Immutable once published, but for its nodes' atomics.
struct Array {
    nodes: NonNull<Node>,
    cap: usize,
    older: *mut Array,
}

impl Array {
    /// Room for `cap` nodes, none initialized; `None` if memory is short.
    fn try_new(cap: usize, older: *mut Array) -> Option<NonNull<Array>> {
        let layout = Layout::array::<Node>(cap).ok()?;
        // Safety: `cap` > 0, so the layout is not zero-sized.
        let nodes = NonNull::new(unsafe { alloc::alloc(layout) } as *mut Node)?;
        let array = Box::new(Array { nodes, cap, older });
        Some(NonNull::from(Box::leak(array)))
    }
}

/// What any thread may read of a profile: the published nodes and the
/// open frames. Lives as long as its [`Profile`].
pub(crate) struct Published {
    array: AtomicPtr<Array>,
    /// Nodes initialized in the current array (stored after each new one).
    len: AtomicUsize,
    /// The open frames first, each followed by a free one (node `NONE`)
    /// unless all `max_depth` are open.
    frames: NonNull<Frame>,
    max_depth: usize,
    /// Visits that were merged into the overflow node or were too deep.
    pub(crate) dropped: AtomicU64,
}

// Safety: every field another thread reads is an atomic, or immutable
// while it may be read (the arrays, the frames).
unsafe impl Sync for Published {}
unsafe impl Send for Published {}

impl Published {
    /// Bytes [`Published::encode_into`] needs for every node.
    pub(crate) fn encoded_len(&self) -> usize {
        profile::MAX_HEADER_LEN + self.len.load(Acquire) * profile::MAX_NODE_LEN
    }

    /// The initialized nodes.
    fn nodes(&self) -> &[Node] {
        // `len` first: any array published after `len` nodes were
        // initialized holds at least those (a new array starts as a copy).
        let len = self.len.load(Acquire);
        let a = self.array.load(Acquire);
        // Safety: arrays live as long as the profile, and the first `len`
        // nodes of this one are initialized (above).
        unsafe { std::slice::from_raw_parts((*a).nodes.as_ptr(), len.min((*a).cap)) }
    }

    /// The open frames, outermost first.
    fn frames(&self) -> &[Frame] {
        // Safety: all `max_depth` frames are initialized and live as long as
        // the profile.
        let all = unsafe { std::slice::from_raw_parts(self.frames.as_ptr(), self.max_depth) };
        let depth = all
            .iter()
            .position(|f| f.node.load(Relaxed) == NONE)
            .unwrap_or(all.len());
        &all[..depth]
    }

    /// Encodes the tree as a profile block payload into `out`, as many
    /// nodes as fit (parents come first, so any prefix is a tree), and
    /// returns the length. With `close_at`, the visits in progress count as
    /// if they ended then. Allocates nothing: usable in signal handlers.
    /// The owner may go on meanwhile: each value read is one it wrote.
    pub(crate) fn encode_into(&self, thread: u32, close_at: Option<u64>, out: &mut [u8]) -> usize {
        if out.len() < profile::MAX_HEADER_LEN {
            return 0;
        }
        let nodes = self.nodes();
        let mut open = match close_at {
            Some(t) => OpenVisits::new(self.frames(), t),
            None => OpenVisits::new(&[], 0),
        };
        let base = out.as_mut_ptr();
        let room = out.len();
        let mut written = 0u64;
        // Safety: every write is preceded by a check that the largest
        // encoding of the item fits in `out`.
        unsafe {
            let mut p = profile::put_header(base, thread, 0);
            for (i, n) in nodes.iter().enumerate().skip(1) {
                if (p.offset_from(base) as usize) + profile::MAX_NODE_LEN > room {
                    break;
                }
                let mut stats = n.stats.load();
                open.add_to(i as u32, &mut stats);
                // Node 0 is the hidden root: indices shift by one.
                let parent = match n.parent.load(Relaxed) {
                    ROOT => None,
                    q => Some(q - 1),
                };
                p = profile::put_node(p, parent, n.region.load(Relaxed), &stats);
                written += 1;
            }
            profile::put_header(base, thread, written);
            p.offset_from(base) as usize
        }
    }
}

/// The visits in progress, ended at one time for an encoding (the profile
/// itself is left as it is: its owner may go on).
struct OpenVisits<'a> {
    frames: &'a [Frame],
    end: u64,
    /// Frames before this one belong to nodes already encoded.
    next: usize,
}

impl OpenVisits<'_> {
    fn new(frames: &[Frame], end: u64) -> OpenVisits<'_> {
        OpenVisits {
            frames,
            end,
            next: 0,
        }
    }

    fn length(&self, k: usize) -> u64 {
        self.frames
            .get(k)
            .map_or(0, |f| self.end.saturating_sub(f.start.load(Relaxed)))
    }

    /// Adds to `stats` the open visits of `node`, innermost first, as
    /// leaving them one by one would. Call in node order: a deeper frame's
    /// node comes no earlier in the array (a child is made after its
    /// parent; the overflow node, last, may repeat), so one pass over the
    /// frames serves the whole encoding.
    fn add_to(&mut self, node: u32, stats: &mut Stats) {
        let node_of = |k: usize| self.frames.get(k).map(|f| f.node.load(Relaxed));
        while node_of(self.next).is_some_and(|n| n < node) {
            self.next += 1;
        }
        let first = self.next;
        while node_of(self.next) == Some(node) {
            self.next += 1;
        }
        for k in (first..self.next).rev() {
            let f = &self.frames[k];
            let children = f.children.load(Relaxed).saturating_add(self.length(k + 1));
            stats.add(self.length(k), children);
        }
    }
}

/// The owner's side of a profile.
pub(crate) struct Profile {
    published: NonNull<Published>,
    /// The current array's nodes: `len` in the tree, `filled` ever
    /// initialized, room for `cap`.
    nodes: NonNull<Node>,
    len: usize,
    filled: usize,
    cap: usize,
    frames: NonNull<Frame>,
    depth: usize,
    /// Frames beyond `max_depth` now open.
    deep: u64,
    cur: u32,
    overflow: u32,
    max_nodes: usize,
    max_depth: usize,
}

// Safety: a profile is used by one thread at a time; what others read
// through `Published` is made for that.
unsafe impl Send for Profile {}

impl Profile {
    /// An empty profile, made without aborting: `None` if memory is short.
    pub(crate) fn try_new(max_nodes: usize, max_depth: usize) -> Option<Profile> {
        let mut frames = Vec::new();
        frames.try_reserve_exact(max_depth).ok()?;
        frames.extend((0..max_depth).map(|_| Frame {
            node: AtomicU32::new(NONE),
            start: AtomicU64::new(0),
            children: AtomicU64::new(0),
        }));
        let frames = Box::leak(frames.into_boxed_slice());
        let frames = NonNull::from(frames).cast::<Frame>();
        let Some(array) = Array::try_new(NODES_AT_ONCE, ptr::null_mut()) else {
            // Safety: leaked just above, as a slice of `max_depth`.
            drop(unsafe {
                Box::from_raw(ptr::slice_from_raw_parts_mut(frames.as_ptr(), max_depth))
            });
            return None;
        };
        let published = Box::new(Published {
            array: AtomicPtr::new(array.as_ptr()),
            len: AtomicUsize::new(0),
            frames,
            max_depth,
            dropped: AtomicU64::new(0),
        });
        let mut p = Profile {
            published: NonNull::from(Box::leak(published)),
            // Safety: just made.
            nodes: unsafe { array.as_ref() }.nodes,
            len: 0,
            filled: 0,
            cap: NODES_AT_ONCE,
            frames,
            depth: 0,
            deep: 0,
            cur: ROOT,
            overflow: NONE,
            max_nodes: max_nodes.max(2),
            max_depth,
        };
        p.reset();
        Some(p)
    }

    /// What other threads may read; it lives as long as this profile.
    pub(crate) fn published(&self) -> &Published {
        // Safety: freed only when the profile is dropped.
        unsafe { self.published.as_ref() }
    }

    #[inline(always)]
    fn node(&self, i: u32) -> &Node {
        debug_assert!((i as usize) < self.len);
        // Safety: nodes below `len` are initialized.
        unsafe { &*self.nodes.as_ptr().add(i as usize) }
    }

    #[inline(always)]
    fn frame(&self, k: usize) -> &Frame {
        debug_assert!(k < self.max_depth);
        // Safety: all `max_depth` frames are initialized.
        unsafe { &*self.frames.as_ptr().add(k) }
    }

    fn count_dropped(&self) {
        let d = &self.published().dropped;
        d.store(d.load(Relaxed) + 1, Relaxed);
    }

    /// Forgets everything (a new measurement).
    pub(crate) fn reset(&mut self) {
        self.len = 0;
        self.put(Node::new(0, NONE));
        for k in 0..self.depth {
            self.frame(k).node.store(NONE, Relaxed);
        }
        self.depth = 0;
        self.cur = ROOT;
        self.deep = 0;
        self.overflow = NONE;
        self.published().dropped.store(0, Relaxed);
    }

    #[inline(always)]
    pub(crate) fn enter(&mut self, region: RegionId, t: u64) {
        if self.depth >= self.max_depth {
            self.deep += 1;
            self.count_dropped();
            return;
        }
        let cur = self.cur;
        let hot = self.node(cur).hot.load(Relaxed);
        let child = if hot != NONE && self.node(hot).region.load(Relaxed) == region {
            hot
        } else {
            let c = self.find_or_add(region);
            self.node(cur).hot.store(c, Relaxed);
            c
        };
        let f = self.frame(self.depth);
        f.start.store(t, Relaxed);
        f.children.store(0, Relaxed);
        f.node.store(child, Relaxed);
        self.depth += 1;
        self.cur = child;
    }

    #[inline(always)]
    pub(crate) fn leave(&mut self, t: u64) {
        if self.deep > 0 {
            self.deep -= 1;
            return;
        }
        if self.depth == 0 {
            return;
        }
        self.depth -= 1;
        let f = self.frame(self.depth);
        let d = t.saturating_sub(f.start.load(Relaxed));
        let children = f.children.load(Relaxed);
        let node = f.node.load(Relaxed);
        f.node.store(NONE, Relaxed);
        self.node(node).stats.add(d, children);
        if self.depth > 0 {
            let parent = self.frame(self.depth - 1);
            let c = &parent.children;
            c.store(c.load(Relaxed).wrapping_add(d), Relaxed);
            self.cur = parent.node.load(Relaxed);
        } else {
            self.cur = ROOT;
        }
    }

    /// Counts `calls` calls under the current path whose probes recorded
    /// nothing, in its [`SKIPPED_REGION`] child (no time: their probes'
    /// cost is in the path's own time, for compensation to remove).
    pub(crate) fn skipped(&mut self, calls: u64) {
        if self.deep > 0 {
            return;
        }
        let c = self.find_or_add(SKIPPED_REGION);
        if c != self.overflow {
            let stats = &self.node(c).stats;
            let mut s = stats.load();
            s.count += calls;
            s.min = 0;
            stats.store(&s);
        }
    }

    #[cold]
    #[inline(never)]
    fn find_or_add(&mut self, region: RegionId) -> u32 {
        let cur = self.cur;
        let mut c = self.node(cur).first_child.load(Relaxed);
        while c != NONE {
            if self.node(c).region.load(Relaxed) == region {
                return c;
            }
            c = self.node(c).next_sibling.load(Relaxed);
        }
        if cur == self.overflow {
            self.count_dropped();
            return cur;
        }
        // One node is always kept free, for the overflow node: when memory
        // runs short, new paths go there as when the tree is full.
        if self.len < self.max_nodes && self.len + 2 > self.cap && !self.grow() {
            self.max_nodes = self.max_nodes.min(self.len);
        }
        if self.len >= self.max_nodes || self.len >= self.cap {
            self.count_dropped();
            if self.overflow == NONE && self.len < self.cap {
                self.overflow = self.push_child(ROOT, OVERFLOW_REGION);
            }
            return if self.overflow == NONE {
                cur
            } else {
                self.overflow
            };
        }
        self.push_child(cur, region)
    }

    /// Moves the tree to a larger array; the old one stays for readers.
    fn grow(&mut self) -> bool {
        let cap = (self.cap * 2).max(self.len + NODES_AT_ONCE);
        let old = self.published().array.load(Relaxed);
        let Some(new) = Array::try_new(cap, old) else {
            return false;
        };
        // Safety: just made, with room for `cap` > `len` nodes.
        let nodes = unsafe { new.as_ref() }.nodes;
        for i in 0..self.len {
            // Safety: as above.
            unsafe { nodes.as_ptr().add(i).write(self.node(i as u32).copy()) };
        }
        (self.nodes, self.cap, self.filled) = (nodes, cap, self.len);
        self.published().array.store(new.as_ptr(), Release);
        true
    }

    fn push_child(&mut self, parent: u32, region: RegionId) -> u32 {
        let id = self.len as u32;
        let n = Node::new(region, parent);
        let first = &self.node(parent).first_child;
        n.next_sibling.store(first.load(Relaxed), Relaxed);
        first.store(id, Relaxed);
        self.put(n);
        id
    }

    /// Appends `n` to the tree (there is room) and publishes it.
    fn put(&mut self, n: Node) {
        let i = self.len;
        debug_assert!(i < self.cap);
        // Safety: `i` < `cap`; below `filled` the node is initialized and a
        // reader may still look at it (after a reset): then atomics only.
        unsafe {
            let slot = self.nodes.as_ptr().add(i);
            if i < self.filled {
                (*slot).set(&n);
            } else {
                slot.write(n);
                self.filled = i + 1;
            }
        }
        self.len = i + 1;
        self.published().len.store(self.len, Release);
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        // Safety: everything was leaked by `try_new` and `grow` for this
        // profile; with it gone, nobody reads it.
        unsafe {
            let published = Box::from_raw(self.published.as_ptr());
            let mut a = published.array.load(Relaxed);
            while !a.is_null() {
                let array = Box::from_raw(a);
                let layout = Layout::array::<Node>(array.cap).expect("made with this layout");
                alloc::dealloc(array.nodes.as_ptr() as *mut u8, layout);
                a = array.older;
            }
            drop(Box::from_raw(ptr::slice_from_raw_parts_mut(
                self.frames.as_ptr(),
                self.max_depth,
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parallax_model::profile::CallTree;

    fn decode_at(p: &Published, close_at: Option<u64>) -> CallTree {
        let mut buf = vec![0u8; p.encoded_len()];
        let n = p.encode_into(7, close_at, &mut buf);
        CallTree::decode(&buf[..n]).unwrap()
    }

    fn decode(p: &Profile) -> CallTree {
        decode_at(p.published(), None)
    }

    fn find(t: &CallTree, path: &[u32]) -> Stats {
        let i = (0..t.nodes.len()).find(|&i| t.path(i) == path).unwrap();
        t.nodes[i].stats
    }

    #[test]
    fn builds_call_paths_with_exclusive_times() {
        let mut p = Profile::try_new(100, 10).unwrap();
        p.enter(1, 0);
        p.enter(2, 10);
        p.leave(30);
        p.enter(2, 40);
        p.leave(45);
        p.enter(3, 50);
        p.enter(2, 60);
        p.leave(70);
        p.leave(80);
        p.leave(100);
        let t = decode(&p);
        assert_eq!(t.thread, 7);
        let main = find(&t, &[1]);
        assert_eq!((main.count, main.inclusive, main.exclusive), (1, 100, 45));
        let a = find(&t, &[1, 2]);
        assert_eq!((a.count, a.inclusive, a.min, a.max), (2, 25, 5, 20));
        let b = find(&t, &[1, 3, 2]);
        assert_eq!((b.count, b.inclusive), (1, 10));
        assert_eq!(find(&t, &[1, 3]).exclusive, 20);
    }

    #[test]
    fn open_visits_count_as_ended_when_encoded_and_stay_open() {
        let mut p = Profile::try_new(100, 10).unwrap();
        p.enter(1, 0);
        p.enter(2, 10);
        p.leave(30);
        p.enter(3, 40);
        p.enter(4, 50);
        let t = decode_at(p.published(), Some(100));
        let main = find(&t, &[1]);
        assert_eq!((main.count, main.inclusive, main.exclusive), (1, 100, 20));
        let c = find(&t, &[1, 3]);
        assert_eq!((c.count, c.inclusive, c.exclusive), (1, 60, 10));
        assert_eq!(find(&t, &[1, 3, 4]).inclusive, 50);
        // Without a time, only ended visits; the owner goes on.
        assert_eq!(find(&decode(&p), &[1]).count, 0);
        p.leave(60);
        p.leave(70);
        p.leave(80);
        let main = find(&decode(&p), &[1]);
        assert_eq!((main.count, main.inclusive), (1, 80));
    }

    #[test]
    fn bounded_nodes_and_depth() {
        let mut p = Profile::try_new(4, 3).unwrap();
        for r in 0..10 {
            p.enter(r, 0);
            p.leave(1);
        }
        // Root, three paths, then everything else in one overflow node.
        let t = decode(&p);
        assert_eq!(t.nodes.len(), 4);
        assert_eq!(t.nodes[3].region, OVERFLOW_REGION);
        assert_eq!(t.nodes[3].stats.count, 7);
        let mut q = Profile::try_new(100, 3).unwrap();
        for r in 0..6 {
            q.enter(r, r as u64);
        }
        for r in 0..6 {
            q.leave(10 + r as u64);
        }
        assert_eq!(decode(&q).nodes.len(), 3);
        assert_eq!(q.published().dropped.load(Relaxed), 3);
    }

    #[test]
    fn grows_past_its_first_array_and_resets() {
        let mut p = Profile::try_new(10_000, 4).unwrap();
        for r in 0..3 * NODES_AT_ONCE as u32 {
            p.enter(r, 0);
            p.leave(2);
        }
        let t = decode(&p);
        assert_eq!(t.nodes.len(), 3 * NODES_AT_ONCE);
        assert!(t
            .nodes
            .iter()
            .all(|n| n.stats.count == 1 && n.stats.inclusive == 2));
        p.reset();
        p.enter(5, 0);
        p.leave(1);
        assert_eq!(decode(&p).nodes.len(), 1);
    }

    #[test]
    fn truncated_encoding_is_a_valid_tree() {
        let mut p = Profile::try_new(100, 10).unwrap();
        for r in 0..20 {
            p.enter(r, 0);
        }
        let mut buf = vec![0u8; 200];
        let n = p.published().encode_into(0, Some(5), &mut buf);
        let t = CallTree::decode(&buf[..n]).unwrap();
        assert!(!t.nodes.is_empty() && t.nodes.len() < 20);
    }

    /// The owner records while another thread encodes: under Miri, any
    /// access that is not synchronized fails the test.
    #[test]
    fn another_thread_encodes_while_the_owner_records() {
        let rounds: u32 = if cfg!(miri) { 40 } else { 20_000 };
        let mut p = Profile::try_new(1 << 12, 8).unwrap();
        // Safety: a separate allocation that outlives the scope below.
        let published: &Published = unsafe { &*(p.published() as *const Published) };
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..rounds {
                    // New paths now and then: the array grows meanwhile.
                    p.enter(i % 3, u64::from(i));
                    p.enter(i % 700, u64::from(i));
                    p.leave(u64::from(i) + 1);
                    p.leave(u64::from(i) + 2);
                }
                done.store(true, Release);
            });
            let mut buf = Vec::new();
            loop {
                let finished = done.load(Acquire);
                buf.resize(published.encoded_len(), 0);
                let n = published.encode_into(1, Some(u64::MAX / 2), &mut buf);
                let t = CallTree::decode(&buf[..n]).unwrap();
                assert!(t.nodes.len() <= 1 + 3 + 3 * 700);
                if finished {
                    break;
                }
            }
        });
        let t = decode(&p);
        let calls: u64 = t
            .nodes
            .iter()
            .filter(|n| n.parent.is_none())
            .map(|n| n.stats.count)
            .sum();
        assert_eq!(calls, u64::from(rounds));
    }
}
