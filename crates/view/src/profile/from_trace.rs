//! A location's call tree built from its event trace, streaming, in
//! memory bounded by the number of call paths.

use parallax_model::event::{EventKind, RegionId, OVERFLOW_REGION, SKIPPED_REGION};
use parallax_model::experiment::Process;
use parallax_model::profile::{CallTree, Node, Stats};
use parallax_model::Error;

/// A location's call tree derived from its trace, the problems met, and
/// the trace's first and last event, ticks.
pub type DerivedTree = (CallTree, Vec<String>, Option<(u64, u64)>);

/// Builds a location's call tree from its trace, streaming event by event.
/// Regions still open at the end are closed at the last event's time; a
/// damaged file gives a warning and the tree of what came before it.
pub fn tree_from_trace(p: &Process, thread: u32) -> Result<DerivedTree, Error> {
    let mut reader = p.events(thread)?;
    let mut b = TreeBuilder::new(thread);
    let mut warnings = Vec::new();
    let mut first = None;
    loop {
        let r = reader.each_in_block(|e| {
            first.get_or_insert(e.time);
            match e.kind {
                EventKind::Enter { region } => b.enter(region, e.time),
                EventKind::Leave { .. } => b.leave(e.time),
                EventKind::Skipped { calls } => b.skipped(calls),
                _ => {}
            }
            b.last = e.time;
        });
        match r {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                warnings.push(e.to_string());
                break;
            }
        }
    }
    if b.dropped > 0 {
        warnings.push(format!(
            "rank {} thread {thread}: more than {MAX_NODES} call paths; {} visits of the paths beyond them are counted in \"<other paths>\"",
            p.rank, b.dropped
        ));
    }
    let span = first.map(|f| (f, b.last));
    Ok((b.finish(), warnings, span))
}

/// Call paths a tree built from a trace holds at most: later new paths are
/// counted in one `<other paths>` node (as the runtime's profiles do), so
/// that a trace of ever new paths cannot grow the tree without bound. Depth
/// is not bounded otherwise: a recursion as deep as the nodes allow keeps
/// every level.
pub const MAX_NODES: usize = 1 << 20;

/// Builds a call tree from enter and leave events, in memory bounded by
/// [`MAX_NODES`].
#[derive(Debug)]
pub struct TreeBuilder {
    tree: CallTree,
    index: crate::fasthash::FastMap<(Option<u32>, RegionId), u32>,
    pub(super) stack: Vec<(u32, u64, u64)>,
    pub(super) last: u64,
    /// The node entered last and its key: a loop enters the same region
    /// under the same parent again and again, without a lookup.
    recent: Option<((Option<u32>, RegionId), u32)>,
    /// Visits counted in the overflow node.
    pub(super) dropped: u64,
}

impl TreeBuilder {
    /// An empty tree for `thread`.
    pub fn new(thread: u32) -> TreeBuilder {
        TreeBuilder {
            tree: CallTree {
                thread,
                nodes: Vec::new(),
            },
            index: Default::default(),
            stack: Vec::new(),
            last: 0,
            recent: None,
            dropped: 0,
        }
    }

    /// A region is entered at `t`.
    pub fn enter(&mut self, region: RegionId, t: u64) {
        let parent = self.stack.last().map(|f| f.0);
        let key = (parent, region);
        let id = match self.recent {
            Some((k, id)) if k == key => id,
            _ => {
                let id = match self.index.get(&key) {
                    Some(&id) => id,
                    None => self.add(key),
                };
                self.recent = Some((key, id));
                id
            }
        };
        self.stack.push((id, t, 0));
    }

    /// The node of a new path, or the overflow node once the tree is full
    /// (paths under it are counted in it too).
    fn add(&mut self, key: (Option<u32>, RegionId)) -> u32 {
        let overflow = (None, OVERFLOW_REGION);
        let full = self.tree.nodes.len() >= MAX_NODES;
        let under_overflow = key
            .0
            .is_some_and(|p| self.tree.nodes[p as usize].region == OVERFLOW_REGION);
        let key = if full || under_overflow {
            self.dropped += 1;
            overflow
        } else {
            key
        };
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        self.tree.nodes.push(Node {
            parent: key.0,
            region: key.1,
            stats: Stats::EMPTY,
        });
        let id = (self.tree.nodes.len() - 1) as u32;
        self.index.insert(key, id);
        id
    }

    /// The innermost region is left at `t` (a leave with nothing open is
    /// ignored).
    pub fn leave(&mut self, t: u64) {
        let Some((id, start, children)) = self.stack.pop() else {
            return;
        };
        let d = t.saturating_sub(start);
        self.tree.nodes[id as usize].stats.add(d, children);
        if let Some(p) = self.stack.last_mut() {
            p.2 = p.2.saturating_add(d);
        }
    }

    /// Counts `calls` calls that recorded nothing under the current path, in
    /// its [`SKIPPED_REGION`] node (no time).
    pub fn skipped(&mut self, calls: u64) {
        let parent = self.stack.last().map(|f| f.0);
        let id = match self.index.get(&(parent, SKIPPED_REGION)) {
            Some(&id) => id,
            None => self.add((parent, SKIPPED_REGION)),
        };
        let s = &mut self.tree.nodes[id as usize].stats;
        if s.count == 0 {
            s.min = 0;
        }
        s.count = s.count.saturating_add(calls);
    }

    /// Notes an event at `t` (where open regions close if the trace ends).
    pub fn seen(&mut self, t: u64) {
        self.last = t;
    }

    /// The tree, closing open regions at the last time seen.
    pub fn finish(mut self) -> CallTree {
        let t = self.last.max(self.stack.last().map_or(0, |f| f.1));
        while !self.stack.is_empty() {
            self.leave(t);
        }
        self.tree
    }
}
