//! The per-thread call-path tree of profile mode.
//!
//! Nodes live in one vector, parents before children; each node keeps the
//! child it entered last, so a loop that calls the same function again finds
//! its node with one comparison. Memory is bounded: once `max_nodes` paths
//! exist, new paths are counted in one overflow node, and frames deeper than
//! `max_depth` are counted but not profiled.

use parallax_model::event::{RegionId, OVERFLOW_REGION, SKIPPED_REGION};
use parallax_model::profile::{self, Stats};

const NONE: u32 = u32::MAX;
/// Nodes the tree grows by.
const NODES_AT_ONCE: usize = 256;
const ROOT: u32 = 0;

#[derive(Clone, Debug)]
struct Node {
    region: RegionId,
    parent: u32,
    first_child: u32,
    next_sibling: u32,
    hot: u32,
    stats: Stats,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    node: u32,
    start: u64,
    children: u64,
}

/// Laid out as declared: the probes' fields first.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Profile {
    nodes: Vec<Node>,
    stack: Vec<Frame>,
    deep: u64,
    cur: u32,
    overflow: u32,
    max_nodes: usize,
    max_depth: usize,
    /// Visits that were merged into the overflow node or were too deep.
    pub(crate) dropped: u64,
}

impl Profile {
    /// An empty profile, made without aborting: `None` if memory is short
    /// for its frame stack.
    pub(crate) fn try_new(max_nodes: usize, max_depth: usize) -> Option<Profile> {
        let mut stack = Vec::new();
        stack.try_reserve_exact(max_depth).ok()?;
        let mut nodes = Vec::new();
        nodes.try_reserve(NODES_AT_ONCE).ok()?;
        let mut p = Profile {
            nodes,
            stack,
            cur: ROOT,
            deep: 0,
            max_nodes: max_nodes.max(2),
            max_depth,
            overflow: NONE,
            dropped: 0,
        };
        p.reset();
        Some(p)
    }

    /// Forgets everything (a new measurement).
    pub(crate) fn reset(&mut self) {
        self.nodes.clear();
        self.nodes.push(node(0, NONE));
        self.stack.clear();
        self.cur = ROOT;
        self.deep = 0;
        self.overflow = NONE;
        self.dropped = 0;
    }

    #[inline(always)]
    pub(crate) fn enter(&mut self, region: RegionId, t: u64) {
        if self.stack.len() >= self.max_depth {
            self.deep += 1;
            self.dropped += 1;
            return;
        }
        let cur = self.cur as usize;
        let hot = self.nodes[cur].hot;
        let child = if hot != NONE && self.nodes[hot as usize].region == region {
            hot
        } else {
            let c = self.find_or_add(region);
            self.nodes[cur].hot = c;
            c
        };
        // Capacity was reserved for max_depth frames: no allocation here.
        self.stack.push(Frame {
            node: child,
            start: t,
            children: 0,
        });
        self.cur = child;
    }

    #[inline(always)]
    pub(crate) fn leave(&mut self, t: u64) {
        if self.deep > 0 {
            self.deep -= 1;
            return;
        }
        let Some(f) = self.stack.pop() else { return };
        let d = t.saturating_sub(f.start);
        self.nodes[f.node as usize].stats.add(d, f.children);
        match self.stack.last_mut() {
            Some(p) => {
                p.children += d;
                self.cur = p.node;
            }
            None => self.cur = ROOT,
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
            let s = &mut self.nodes[c as usize].stats;
            s.count += calls;
            s.min = 0;
        }
    }

    #[cold]
    #[inline(never)]
    fn find_or_add(&mut self, region: RegionId) -> u32 {
        let cur = self.cur;
        let mut c = self.nodes[cur as usize].first_child;
        while c != NONE {
            if self.nodes[c as usize].region == region {
                return c;
            }
            c = self.nodes[c as usize].next_sibling;
        }
        if cur == self.overflow {
            self.dropped += 1;
            return cur;
        }
        // One node is always kept free, for the overflow node: when memory
        // runs short, new paths go there as when the tree is full.
        if self.nodes.len() < self.max_nodes
            && self.nodes.len() + 2 > self.nodes.capacity()
            && self.nodes.try_reserve(NODES_AT_ONCE).is_err()
        {
            self.max_nodes = self.max_nodes.min(self.nodes.len());
        }
        if self.nodes.len() >= self.max_nodes {
            self.dropped += 1;
            if self.overflow == NONE {
                self.overflow = self.push_child(ROOT, OVERFLOW_REGION);
            }
            return self.overflow;
        }
        self.push_child(cur, region)
    }

    fn push_child(&mut self, parent: u32, region: RegionId) -> u32 {
        let id = self.nodes.len() as u32;
        let mut n = node(region, parent);
        n.next_sibling = self.nodes[parent as usize].first_child;
        self.nodes[parent as usize].first_child = id;
        self.nodes.push(n);
        id
    }

    /// Closes the open frames at `t`, as if each region were left then, so
    /// that a profile written at exit counts the visits in progress.
    pub(crate) fn close_open_frames(&mut self, t: u64) {
        self.deep = 0;
        while !self.stack.is_empty() {
            self.leave(t);
        }
    }

    /// Bytes [`Profile::encode_into`] needs for every node.
    pub(crate) fn encoded_len(&self) -> usize {
        profile::MAX_HEADER_LEN + self.nodes.len() * profile::MAX_NODE_LEN
    }

    /// Encodes the tree as a profile block payload into `out`, as many
    /// nodes as fit (parents come first, so any prefix is a tree), and
    /// returns the length. Allocates nothing: usable in signal handlers.
    pub(crate) fn encode_into(&self, thread: u32, out: &mut [u8]) -> usize {
        if out.len() < profile::MAX_HEADER_LEN {
            return 0;
        }
        let base = out.as_mut_ptr();
        let room = out.len();
        // Safety: every write is preceded by a check that the largest
        // encoding of the item fits in `out`.
        unsafe {
            let mut p = profile::put_header(base, thread, 0);
            let mut written = 0u64;
            for n in &self.nodes[1..] {
                if (p.offset_from(base) as usize) + profile::MAX_NODE_LEN > room {
                    break;
                }
                // Node 0 is the hidden root: indices shift by one.
                let parent = if n.parent == ROOT {
                    None
                } else {
                    Some(n.parent - 1)
                };
                p = profile::put_node(p, parent, n.region, &n.stats);
                written += 1;
            }
            let end = p.offset_from(base) as usize;
            profile::put_header(base, thread, written);
            end
        }
    }
}

fn node(region: RegionId, parent: u32) -> Node {
    Node {
        region,
        parent,
        first_child: NONE,
        next_sibling: NONE,
        hot: NONE,
        stats: Stats::EMPTY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parallax_model::profile::CallTree;

    fn decode(p: &Profile) -> CallTree {
        let mut buf = vec![0u8; p.encoded_len()];
        let n = p.encode_into(7, &mut buf);
        CallTree::decode(&buf[..n]).unwrap()
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
        let find = |path: &[u32]| {
            let i = (0..t.nodes.len()).find(|&i| t.path(i) == path).unwrap();
            t.nodes[i].stats
        };
        let main = find(&[1]);
        assert_eq!((main.count, main.inclusive, main.exclusive), (1, 100, 45));
        let a = find(&[1, 2]);
        assert_eq!((a.count, a.inclusive, a.min, a.max), (2, 25, 5, 20));
        let b = find(&[1, 3, 2]);
        assert_eq!((b.count, b.inclusive), (1, 10));
        assert_eq!(find(&[1, 3]).exclusive, 20);
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
        assert_eq!(q.dropped, 3);
    }

    #[test]
    fn truncated_encoding_is_a_valid_tree() {
        let mut p = Profile::try_new(100, 10).unwrap();
        for r in 0..20 {
            p.enter(r, 0);
        }
        p.close_open_frames(5);
        let mut buf = vec![0u8; 200];
        let n = p.encode_into(0, &mut buf);
        let t = CallTree::decode(&buf[..n]).unwrap();
        assert!(!t.nodes.is_empty() && t.nodes.len() < 20);
    }
}
