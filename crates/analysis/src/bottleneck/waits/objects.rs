//! Shared objects: locks (and convoys), condition variables and
//! semaphores, values waited on, thread joins.

use parallax_model::event::{is_team, Event, EventKind};
use parallax_model::region::RegionKind;

use super::{behind, waiting, LocPass, ObjNeed, WaitedFor};
use crate::bottleneck::posts::Note;
use crate::bottleneck::posts::{Key, PostedValue};
use crate::bottleneck::regions;
use crate::bottleneck::Pattern;
use crate::replay::Postings;

/// Consecutive joins closer than this form one group, ns.
const JOIN_GAP_NS: f64 = 100_000.0;

/// A location's shared-object state.
#[derive(Debug)]
pub(super) struct Objects {
    /// Synchronization events on shared objects met.
    pub(super) syncs_met: u64,
    /// When the lock being acquired was requested.
    pub(super) lock_request: Option<f64>,
    /// Time of the last lock or semaphore acquisition.
    pub(super) last_got: f64,
    pub(super) join: Option<JoinGroup>,
}

impl Default for Objects {
    fn default() -> Objects {
        Objects {
            syncs_met: 0,
            lock_request: None,
            last_got: f64::NEG_INFINITY,
            join: None,
        }
    }
}

/// A group of consecutive joins.
#[derive(Debug)]
pub(super) struct JoinGroup {
    start: f64,
    pub(super) last_leave: f64,
    path: u32,
    ends: Vec<JoinEnd>,
    waits: f64,
}

/// A thread joined: when it ended, its location and its note.
#[derive(Clone, Debug)]
struct JoinEnd {
    end: f64,
    loc: u32,
    note: Note,
}

impl LocPass<'_> {
    /// A synchronization on a shared object: posts for the consumer
    /// pairing chose, needs its own producer's post.
    pub(super) fn shared_sync(&mut self, e: &Event, t: f64, board: &Postings<Key, PostedValue>) {
        use EventKind::*;
        let me = self.index;
        let s = self
            .pairing
            .sync(self.index as usize, self.objs.syncs_met as usize);
        self.objs.syncs_met += 1;
        if let Some((link, readers)) = s.posts() {
            let chain = self.history.cp.snapshot();
            let note = self.note();
            board.post(
                Key::Obj(link),
                PostedValue::Post {
                    t,
                    loc: me,
                    setup: self.setup_end,
                    note,
                    chain,
                },
                readers,
            );
        }
        if let Some(link) = s.needs() {
            // A lock or semaphore taken after failing attempts in a
            // loop (trylock, trywait) waited from the first.
            let polled = self.poll_start();
            let (pattern, enter) = match e.kind {
                LockAcquired { .. } => {
                    let asked = self.objs.lock_request.take().unwrap_or(t);
                    (
                        Some(Pattern::LockWait),
                        polled.map_or(asked, |s| s.min(asked)),
                    )
                }
                SemAcquired { .. } => (
                    Some(Pattern::ConditionWait),
                    polled.unwrap_or_else(|| self.enter_time(t)),
                ),
                // A thread of an OpenMP team waits for the fork from its
                // last event before (outside any region: idle).
                AwaitDone { var, .. } if is_team(var) => {
                    (Some(Pattern::IdleThreads), self.enter_time(t))
                }
                AwaitDone { .. } | ValueReached { .. } => {
                    (Some(Pattern::WaitOnValue), self.enter_time(t))
                }
                ThreadJoin { .. } => (Some(Pattern::JoinWait), self.enter_time(t)),
                _ => (None, t),
            };
            self.need = Some(WaitedFor::Obj(ObjNeed {
                key: Key::Obj(link),
                pattern,
                enter,
                obj: link.id,
            }));
        } else if let SemAcquired { sem } = e.kind {
            // Released without a post of its own: one broadcast wakes
            // every waiter, but pairing gives each post to one wait.
            // Its culprits are the condition's posters (see
            // global.rs).
            if self
                .calls
                .stack
                .last()
                .is_some_and(|f| f.kind == RegionKind::SemWait)
            {
                let wait = t - self.enter_time(t);
                let path = self.top_path();
                let e = self
                    .res
                    .cond_unpaired
                    .entry((path, sem))
                    .or_insert((0.0, 0));
                e.0 += wait.max(0.0);
                e.1 += 1;
            }
        }
    }

    /// The synchronization got its producer's post.
    pub(super) fn object_taken(&mut self, t: f64, n: ObjNeed, v: PostedValue) {
        let PostedValue::Post {
            t: p,
            loc: src,
            setup,
            note,
            chain,
        } = v
        else {
            return self.mismatch(WaitedFor::Obj(n));
        };
        let ObjNeed {
            pattern,
            enter,
            obj,
            ..
        } = n;
        let me = self.index;
        let path = self.top_path();
        let g = self.calls.stack.last().map_or(regions::OUTSIDE, |f| f.g);
        let wait = waiting(enter, p, t, setup, self.setup_end);
        if let Some(pattern) = pattern {
            if pattern == Pattern::JoinWait {
                self.join(enter, path, p, src, wait, note);
            } else if src != me {
                if pattern == Pattern::LockWait {
                    // In a convoy the previous holder itself waited
                    // for the lock: that part of the wait is on
                    // whoever held it then.
                    self.record_parts(pattern, path, wait, &behind(me, src, &note, wait));
                } else {
                    self.record(pattern, path, wait, Some(src));
                }
                self.charge(src, &note, wait);
                if pattern == Pattern::ConditionWait {
                    *self.res.cond_posters.entry((obj, src)).or_insert(0.0) += wait;
                }
            }
        }
        // A thread's path begins with its creator's.
        if (p > enter || self.res.events == 0) && src != me {
            self.history.cp.adopt(chain);
            self.history.cp.add(g, t - p.min(t));
        }
    }

    pub(super) fn join(
        &mut self,
        enter: f64,
        path: u32,
        end: f64,
        src: u32,
        wait: f64,
        note: Note,
    ) {
        let cont = self
            .objs
            .join
            .as_ref()
            .is_some_and(|j| enter - j.last_leave <= JOIN_GAP_NS);
        if !cont {
            self.close_join();
            self.objs.join = Some(JoinGroup {
                start: enter,
                last_leave: enter,
                path,
                ends: Vec::new(),
                waits: 0.0,
            });
        }
        if let Some(j) = self.objs.join.as_mut() {
            j.ends.push(JoinEnd {
                end,
                loc: src,
                note,
            });
            j.waits += wait;
        }
    }

    /// A join group's waiting: for one join, all of it; for several, the
    /// time the last thread ended after the first (what a balanced split
    /// would have saved).
    pub(super) fn close_join(&mut self) {
        let Some(j) = self.objs.join.take() else {
            return;
        };
        let Some(JoinEnd {
            end: emax,
            loc: culprit,
            note,
        }) = j
            .ends
            .iter()
            .max_by(|a, b| a.end.total_cmp(&b.end))
            .cloned()
        else {
            return;
        };
        let ns = if j.ends.len() == 1 {
            j.waits
        } else {
            let emin = j.ends.iter().map(|e| e.end).fold(f64::INFINITY, f64::min);
            (emax - emin.max(j.start)).max(0.0)
        };
        if ns > 0.0 && culprit != self.index {
            self.res
                .waits
                .entry((Pattern::JoinWait, j.path))
                .or_default()
                .add(ns, Some(culprit));
            self.charge(culprit, &note, ns);
        }
    }
}
