//! Synthetic experiments: programs of known timing, simulated with or
//! without probe costs and written as experiments, as ground truth for
//! compensation and bottleneck detection and as large inputs for scale
//! tests.
//!
//! A [`Program`] lists, per location, operations with durations. The
//! simulator runs them as a discrete-event simulation (the location with
//! the earliest time goes next), records the events the runtime would
//! record (a region around each MPI call, lock or barrier, with its
//! message, lock or collective event inside), and charges every recorded
//! event `α` after its timestamp, as a real probe does. Simulating with
//! α = 0 gives the run without probes, the truth that compensation of the
//! same program simulated with α > 0 must recover.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use parallax_model::defs::{ClockSource, Def, Mode, Probe, ProcessInfo};
use parallax_model::event::{CollectiveOp, Event, EventKind, NO_ITERATION, NO_ROOT};
use parallax_model::experiment::{self, EventWriter};
use parallax_model::region::RegionKind;
use parallax_model::Error;

/// Communicator id of all ranks.
pub const WORLD: u64 = 1 << 63;

/// One operation of a location.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Computes for this many ns.
    Compute(f64),
    /// Enters user region `i` (an index into [`Program::regions`]).
    Enter(u32),
    /// Leaves the innermost user region.
    Leave,
    /// Sends a message to location `to` (eager: returns at once).
    Send {
        /// Destination location.
        to: u32,
        /// Tag.
        tag: u32,
        /// Size.
        bytes: u64,
    },
    /// Receives the next message from location `from` with `tag`.
    Recv {
        /// Source location.
        from: u32,
        /// Tag.
        tag: u32,
    },
    /// A barrier of all locations.
    Barrier,
    /// An all-reduce of all locations (synchronizes like a barrier).
    Allreduce,
    /// Acquires lock `id`.
    Lock(u64),
    /// Releases lock `id`.
    Unlock(u64),
    /// Starts location `child` (a thread), which until then waits.
    Spawn(u32),
    /// Waits for location `child` to finish.
    Join(u32),
    /// Posts semaphore `id`.
    Post(u64),
    /// Waits on semaphore `id` (first come, first served).
    Wait(u64),
    /// Advances synchronization variable `var` to `index`.
    Advance(u64, u64),
    /// Waits until `var` reaches `index`.
    Await(u64, u64),
    /// A blocking one-sided put of 1 MiB to location (rank) `target`,
    /// lasting `ns` (contention is the program's to state).
    Put {
        /// Target rank.
        target: u32,
        /// Duration, ns.
        ns: f64,
    },
    /// Takes part in self-scheduled loop `l` (an index into the loops
    /// given to [`simulate_with_loops`]): takes its next iteration and runs
    /// it, again and again, until none is left. Each take is an iteration
    /// event, costing only its probe.
    Loop(u32),
}

/// Self-scheduled loops: each loop's iterations, each a list of operations.
pub type Loops = [Vec<Vec<Op>>];

/// A program: its user regions and each location's operations.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// User region names.
    pub regions: Vec<String>,
    /// Operations per location.
    pub locations: Vec<Vec<Op>>,
    /// Locations are threads of one process (else ranks of an MPI job).
    pub threads: bool,
}

/// Costs of the simulated machine and probes, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    /// Probe cost of an enter, a leave and any other event.
    pub alpha: [f64; 3],
    /// From a send to the message's availability at the receiver.
    pub latency: f64,
    /// A receive whose message is there.
    pub recv: f64,
    /// From the last arrival to every exit of a barrier.
    pub barrier: f64,
    /// Taking a free lock.
    pub lock: f64,
    /// From a release to the next holder's acquisition.
    pub handoff: f64,
    /// From a create to the thread's start, and from its end to the join.
    pub thread: f64,
    /// From a post, advance or thread end to the waiter's wake-up.
    pub wake: f64,
    /// More start-up delay for every second thread created: the time it
    /// waits for a core that another thread holds.
    pub queued: f64,
    /// More wake-up delay for every second semaphore wait and await that
    /// sleeps: the time the woken thread waits for a core.
    pub slow_wake: f64,
    /// Every computation and probe takes this many times longer: the
    /// threads take turns on fewer cores (each gets 1/stretch of one).
    pub stretch: f64,
    /// More time for an unlock that finds another thread waiting for the
    /// lock: the system call that wakes a sleeping waiter.
    pub wake_on_unlock: f64,
}

impl Machine {
    /// A machine with these probe costs and fixed operation costs.
    pub fn with_alpha(enter: f64, leave: f64, event: f64) -> Machine {
        Machine {
            alpha: [enter, leave, event],
            latency: 800.0,
            recv: 300.0,
            barrier: 500.0,
            lock: 40.0,
            handoff: 120.0,
            thread: 20_000.0,
            wake: 1_500.0,
            queued: 0.0,
            slow_wake: 0.0,
            stretch: 1.0,
            wake_on_unlock: 0.0,
        }
    }
}

/// Built-in regions, after the user's.
const CALL_REGIONS: [(&str, RegionKind); 13] = [
    ("MPI_Send", RegionKind::Send),
    ("MPI_Recv", RegionKind::Recv),
    ("MPI_Barrier", RegionKind::Barrier),
    ("MPI_Allreduce", RegionKind::Collective),
    ("lock", RegionKind::Lock),
    ("unlock", RegionKind::Unlock),
    ("thread::spawn", RegionKind::ThreadCreate),
    ("thread::join", RegionKind::ThreadJoin),
    ("sem_post", RegionKind::SemPost),
    ("sem_wait", RegionKind::SemWait),
    ("advance", RegionKind::Advance),
    ("await", RegionKind::Await),
    ("shmem_putmem", RegionKind::Put),
];

/// Indexes of the built-in regions in [`CALL_REGIONS`].
mod call {
    pub const SEND: usize = 0;
    pub const RECV: usize = 1;
    pub const BARRIER: usize = 2;
    pub const ALLREDUCE: usize = 3;
    pub const LOCK: usize = 4;
    pub const UNLOCK: usize = 5;
    pub const SPAWN: usize = 6;
    pub const JOIN: usize = 7;
    pub const POST: usize = 8;
    pub const WAIT: usize = 9;
    pub const ADVANCE: usize = 10;
    pub const AWAIT: usize = 11;
    pub const PUT: usize = 12;
}

/// Events per location, times in ns.
pub type Trace = Vec<Vec<Event>>;

/// Region id of built-in region `k` in a program with `user` regions.
fn call_region(user: usize, k: usize) -> u32 {
    (user + k + 1) as u32
}

/// Simulates `p` on `m`. Locations start at time 1 ms.
pub fn simulate(p: &Program, m: &Machine) -> Trace {
    simulate_with_loops(p, &[], m)
}

/// Simulates `p`, whose locations take part in the self-scheduled `loops`
/// ([`Op::Loop`]), on `m`.
pub fn simulate_with_loops(p: &Program, loops: &Loops, m: &Machine) -> Trace {
    Sim::new(p, loops, m).run()
}

/// Where a location is in the iteration of a self-scheduled loop it runs.
#[derive(Clone, Copy, Debug)]
struct InLoop {
    lp: usize,
    iteration: usize,
    /// Its next operation in the iteration.
    pc: usize,
}

/// A barrier episode's arrivals so far and the latest arrival time.
#[derive(Clone, Copy, Debug)]
struct Arrivals {
    count: usize,
    latest: f64,
}

/// A lock: free since when (`None` while held), and the locations waiting
/// for it in order of request.
#[derive(Debug)]
struct Lock {
    free_since: Option<f64>,
    waiting: VecDeque<usize>,
}

/// A semaphore: the times of the posts not yet taken, and the locations
/// waiting in order of arrival.
#[derive(Debug, Default)]
struct Semaphore {
    posts: VecDeque<f64>,
    waiting: VecDeque<usize>,
}

struct Sim<'a> {
    p: &'a Program,
    loops: &'a Loops,
    m: &'a Machine,
    /// Per loop, its next iteration; per location, the iteration of a loop
    /// it runs.
    next_iteration: Vec<usize>,
    inside: Vec<Option<InLoop>>,
    t: Vec<f64>,
    pc: Vec<usize>,
    phase: Vec<u8>,
    out: Trace,
    /// Messages in flight per (from, to, tag): availability times.
    mail: HashMap<(u32, u32, u32), VecDeque<f64>>,
    /// Per barrier episode, its arrivals.
    arrivals: HashMap<u64, Arrivals>,
    episode: Vec<u64>,
    locks: HashMap<u64, Lock>,
    /// Threads: when each child may start (once spawned), when it ended.
    start: Vec<Option<f64>>,
    ended: Vec<Option<f64>>,
    /// Threads created so far.
    spawned: u64,
    /// Semaphore waits and awaits that slept so far.
    woken: u64,
    sems: HashMap<u64, Semaphore>,
    /// Synchronization variables: advances (index, time) in order.
    vars: HashMap<u64, Vec<(u64, f64)>>,
}

impl<'a> Sim<'a> {
    fn new(p: &'a Program, loops: &'a Loops, m: &'a Machine) -> Sim<'a> {
        let n = p.locations.len();
        Sim {
            p,
            loops,
            m,
            next_iteration: vec![0; loops.len()],
            inside: vec![None; n],
            t: vec![1e6; n],
            pc: vec![0; n],
            phase: vec![0; n],
            out: vec![Vec::new(); n],
            mail: HashMap::new(),
            arrivals: HashMap::new(),
            episode: vec![0; n],
            locks: HashMap::new(),
            start: (0..n as u32)
                .map(|i| {
                    let child = p.locations.iter().flatten().any(|o| *o == Op::Spawn(i));
                    (!child).then_some(1e6)
                })
                .collect(),
            ended: vec![None; n],
            spawned: 0,
            woken: 0,
            sems: HashMap::new(),
            vars: HashMap::new(),
        }
    }

    /// The wake-up delay of a semaphore wait or await that would complete
    /// at `own` by itself and whose post came at `posted`: every second
    /// one that sleeps wakes late.
    fn wake(&mut self, own: f64, posted: f64) -> f64 {
        if posted + self.m.wake <= own {
            return self.m.wake;
        }
        self.woken += 1;
        if self.woken % 2 == 0 {
            self.m.wake + self.m.slow_wake
        } else {
            self.m.wake
        }
    }

    fn record(&mut self, i: usize, kind: EventKind) {
        let a = match kind {
            EventKind::Enter { .. } => self.m.alpha[0],
            EventKind::Leave { .. } => self.m.alpha[1],
            _ => self.m.alpha[2],
        };
        let time = self.t[i].round() as u64;
        self.out[i].push(Event { time, kind });
        self.t[i] += a * self.m.stretch;
    }

    fn run(mut self) -> Trace {
        let n = self.p.locations.len();
        loop {
            // The earliest location that can move.
            let mut best: Option<usize> = None;
            for i in 0..n {
                if self.ended[i].is_none()
                    && self.start[i].is_some()
                    && self.ready(i)
                    && best.is_none_or(|b| self.t[i] < self.t[b])
                {
                    best = Some(i);
                }
            }
            let Some(i) = best else { break };
            if self.threaded(i) && self.pc[i] == 0 && self.phase[i] == 0 && self.out[i].is_empty() {
                self.t[i] = self.start[i].unwrap_or(self.t[i]);
                let token = i as u64 + 1;
                self.record(i, EventKind::ThreadBegin { token });
            }
            if self.op(i).is_none() {
                if self.threaded(i) {
                    let token = i as u64 + 1;
                    self.record(i, EventKind::ThreadEnd { token });
                }
                self.ended[i] = Some(self.t[i]);
                continue;
            }
            self.step(i);
        }
        self.out
    }

    /// Whether location `i` is a thread started by another.
    fn threaded(&self, i: usize) -> bool {
        let me = i as u32;
        self.p
            .locations
            .iter()
            .flatten()
            .any(|o| *o == Op::Spawn(me))
    }

    /// Whether location `i`'s next step can run now.
    fn ready(&self, i: usize) -> bool {
        let Some(op) = self.op(i) else {
            return true;
        };
        match (op, self.phase[i]) {
            (Op::Recv { from, tag }, 1) => self
                .mail
                .get(&(from, i as u32, tag))
                .is_some_and(|q| !q.is_empty()),
            (Op::Barrier | Op::Allreduce, 1) => self
                .arrivals
                .get(&self.episode[i])
                .is_some_and(|a| a.count == self.p.locations.len()),
            (Op::Lock(id), 1) => self
                .locks
                .get(&id)
                .is_some_and(|l| l.free_since.is_some() && l.waiting.front() == Some(&i)),
            (Op::Join(c), 1) => self.ended.get(c as usize).is_some_and(|e| e.is_some()),
            (Op::Wait(id), 1) => self
                .sems
                .get(&id)
                .is_some_and(|s| !s.posts.is_empty() && s.waiting.front() == Some(&i)),
            (Op::Await(var, index), 1) => self
                .vars
                .get(&var)
                .is_some_and(|v| v.iter().any(|a| a.0 >= index)),
            _ => true,
        }
    }

    /// Location `i`'s next operation: in the iteration of a loop it runs,
    /// taking the next one at its end.
    fn op(&self, i: usize) -> Option<Op> {
        match self.inside[i] {
            Some(at) => Some(
                self.loops[at.lp][at.iteration]
                    .get(at.pc)
                    .copied()
                    .unwrap_or(Op::Loop(at.lp as u32)),
            ),
            None => self.p.locations[i].get(self.pc[i]).copied(),
        }
    }

    /// Runs location `i`'s next step: its next operation, or the first
    /// or second half of one that may wait (the wait lies between them).
    fn step(&mut self, i: usize) {
        let op = self.op(i).expect("a location with an operation left");
        let done = match op {
            Op::Loop(l) => return self.take_iteration(i, l as usize),
            Op::Compute(d) => {
                self.t[i] += d * self.m.stretch;
                true
            }
            Op::Enter(r) => {
                self.record(i, EventKind::Enter { region: r + 1 });
                true
            }
            Op::Leave => {
                self.leave(i);
                true
            }
            Op::Send { to, tag, bytes } => {
                self.send(i, to, tag, bytes);
                true
            }
            Op::Recv { from, tag } => self.recv(i, from, tag),
            Op::Barrier | Op::Allreduce => self.collective(i, op == Op::Barrier),
            Op::Lock(id) => self.lock(i, id),
            Op::Unlock(id) => {
                self.unlock(i, id);
                true
            }
            Op::Spawn(c) => {
                self.spawn(i, c);
                true
            }
            Op::Join(c) => self.join(i, c),
            Op::Put { target, ns } => {
                self.put(i, target, ns);
                true
            }
            Op::Post(id) => {
                self.post(i, id);
                true
            }
            Op::Wait(id) => self.wait(i, id),
            Op::Advance(var, index) => {
                self.advance(i, var, index);
                true
            }
            Op::Await(var, index) => self.await_index(i, var, index),
        };
        if done {
            match self.inside[i].as_mut() {
                Some(at) => at.pc += 1,
                None => self.pc[i] += 1,
            }
            self.phase[i] = 0;
        } else {
            self.phase[i] = 1;
        }
    }

    /// Whether location `i` is in the second half of an operation that may
    /// wait: the first half entered its region and queued it.
    fn waiting(&self, i: usize) -> bool {
        self.phase[i] != 0
    }

    /// Records location `i`'s entry into built-in region `k`.
    fn enter_call(&mut self, i: usize, k: usize) {
        let region = call_region(self.p.regions.len(), k);
        self.record(i, EventKind::Enter { region });
    }

    fn leave(&mut self, i: usize) {
        self.record(i, EventKind::Leave { region: 0 });
    }

    /// The communicator of every message and collective.
    fn comm(&self) -> u64 {
        if self.p.threads {
            1
        } else {
            WORLD
        }
    }

    /// Location `i` takes the next iteration of loop `l` (the event that
    /// finds none left ends its part in the loop).
    fn take_iteration(&mut self, i: usize, l: usize) {
        let k = self.next_iteration[l];
        self.next_iteration[l] += 1;
        let taken = k < self.loops[l].len();
        self.record(
            i,
            EventKind::Iteration {
                loop_id: l as u64 + 1,
                index: if taken { k as u64 } else { NO_ITERATION },
            },
        );
        self.inside[i] = taken.then_some(InLoop {
            lp: l,
            iteration: k,
            pc: 0,
        });
        if !taken {
            self.pc[i] += 1;
        }
    }

    fn send(&mut self, i: usize, to: u32, tag: u32, bytes: u64) {
        self.enter_call(i, call::SEND);
        let comm = self.comm();
        self.record(
            i,
            EventKind::Send {
                peer: to,
                tag,
                comm,
                bytes,
            },
        );
        let avail = self.t[i] + self.m.latency;
        let me = i as u32;
        self.mail.entry((me, to, tag)).or_default().push_back(avail);
        self.leave(i);
    }

    /// A receive; whether it completed (else it waits for its message).
    fn recv(&mut self, i: usize, from: u32, tag: u32) -> bool {
        if !self.waiting(i) {
            self.enter_call(i, call::RECV);
            return false;
        }
        let me = i as u32;
        let avail = self
            .mail
            .get_mut(&(from, me, tag))
            .and_then(|q| q.pop_front())
            .unwrap_or(self.t[i]);
        self.t[i] = (self.t[i] + self.m.recv).max(avail);
        let comm = self.comm();
        self.record(
            i,
            EventKind::Recv {
                peer: from,
                tag,
                comm,
                bytes: 0,
            },
        );
        self.leave(i);
        true
    }

    /// A barrier or all-reduce; whether it completed (else it waits for
    /// every location's arrival).
    fn collective(&mut self, i: usize, barrier: bool) -> bool {
        if !self.waiting(i) {
            let k = if barrier {
                call::BARRIER
            } else {
                call::ALLREDUCE
            };
            self.enter_call(i, k);
            self.record(i, EventKind::CollectiveBegin);
            let t = self.t[i];
            let a = self.arrivals.entry(self.episode[i]).or_insert(Arrivals {
                count: 0,
                latest: f64::NEG_INFINITY,
            });
            a.count += 1;
            a.latest = a.latest.max(t);
            return false;
        }
        let last = self.arrivals[&self.episode[i]].latest;
        self.t[i] = self.t[i].max(last + self.m.barrier);
        let op = if barrier {
            CollectiveOp::Barrier
        } else {
            CollectiveOp::Allreduce
        };
        let comm = self.comm();
        self.record(
            i,
            EventKind::CollectiveEnd {
                op,
                comm,
                root: NO_ROOT,
                sent: 0,
                received: 0,
            },
        );
        self.leave(i);
        self.episode[i] += 1;
        true
    }

    /// Acquiring lock `id`; whether it completed (else it waits its turn).
    fn lock(&mut self, i: usize, id: u64) -> bool {
        if !self.waiting(i) {
            self.enter_call(i, call::LOCK);
            self.record(i, EventKind::LockRequest { lock: id });
            let l = self.locks.entry(id).or_insert(Lock {
                free_since: Some(0.0),
                waiting: VecDeque::new(),
            });
            l.waiting.push_back(i);
            return false;
        }
        let l = self.locks.get_mut(&id).expect("requested");
        let since = l.free_since.take().unwrap_or(0.0);
        l.waiting.pop_front();
        let cost = if since > 0.0 { self.m.handoff } else { 0.0 };
        self.t[i] = (self.t[i] + self.m.lock).max(since + cost);
        self.record(i, EventKind::LockAcquired { lock: id });
        self.leave(i);
        true
    }

    fn unlock(&mut self, i: usize, id: u64) {
        self.enter_call(i, call::UNLOCK);
        self.record(i, EventKind::LockRelease { lock: id });
        let t = self.t[i];
        if let Some(l) = self.locks.get_mut(&id) {
            l.free_since = Some(t);
            if !l.waiting.is_empty() {
                self.t[i] += self.m.wake_on_unlock;
            }
        }
        self.leave(i);
    }

    /// Starts thread `c`: every second one waits `queued` longer.
    fn spawn(&mut self, i: usize, c: u32) {
        self.enter_call(i, call::SPAWN);
        self.record(
            i,
            EventKind::ThreadCreate {
                token: c as u64 + 1,
            },
        );
        self.spawned += 1;
        let queued = if self.spawned % 2 == 0 {
            self.m.queued
        } else {
            0.0
        };
        let at = self.t[i] + self.m.thread + queued;
        if let Some(s) = self.start.get_mut(c as usize) {
            *s = Some(at);
            self.t[c as usize] = at;
        }
        self.leave(i);
    }

    /// Joining thread `c`; whether it completed (else it waits for the
    /// thread's end).
    fn join(&mut self, i: usize, c: u32) -> bool {
        if !self.waiting(i) {
            self.enter_call(i, call::JOIN);
            return false;
        }
        let end = self.ended[c as usize].unwrap_or(self.t[i]);
        self.t[i] = (self.t[i] + self.m.lock).max(end + self.m.thread);
        self.record(
            i,
            EventKind::ThreadJoin {
                token: c as u64 + 1,
            },
        );
        self.leave(i);
        true
    }

    fn put(&mut self, i: usize, target: u32, ns: f64) {
        self.enter_call(i, call::PUT);
        self.record(
            i,
            EventKind::Put {
                target,
                bytes: 1 << 20,
                addr: 0,
            },
        );
        self.t[i] += ns;
        self.leave(i);
    }

    fn post(&mut self, i: usize, id: u64) {
        self.enter_call(i, call::POST);
        self.record(i, EventKind::SemPost { sem: id });
        let t = self.t[i];
        self.sems.entry(id).or_default().posts.push_back(t);
        self.leave(i);
    }

    /// A wait on semaphore `id`; whether it completed (else it waits for
    /// a post and its turn).
    fn wait(&mut self, i: usize, id: u64) -> bool {
        if !self.waiting(i) {
            self.enter_call(i, call::WAIT);
            self.sems.entry(id).or_default().waiting.push_back(i);
            return false;
        }
        let s = self.sems.get_mut(&id).expect("waited");
        let posted = s.posts.pop_front().unwrap_or(0.0);
        s.waiting.pop_front();
        let own = self.t[i] + self.m.lock;
        self.t[i] = own.max(posted + self.wake(own, posted));
        self.record(i, EventKind::SemAcquired { sem: id });
        self.leave(i);
        true
    }

    fn advance(&mut self, i: usize, var: u64, index: u64) {
        self.enter_call(i, call::ADVANCE);
        self.record(i, EventKind::Advance { var, index });
        let t = self.t[i];
        self.vars.entry(var).or_default().push((index, t));
        self.leave(i);
    }

    /// An await of `var` reaching `index`; whether it completed (else it
    /// waits for the advance).
    fn await_index(&mut self, i: usize, var: u64, index: u64) -> bool {
        if !self.waiting(i) {
            self.enter_call(i, call::AWAIT);
            return false;
        }
        let at = self.vars[&var]
            .iter()
            .find(|a| a.0 >= index)
            .map_or(self.t[i], |a| a.1);
        let own = self.t[i] + self.m.lock;
        self.t[i] = own.max(at + self.wake(own, at));
        self.record(i, EventKind::AwaitDone { var, index });
        self.leave(i);
        true
    }
}

/// Writes trace `t` of program `p` as an experiment in `dir` (which must
/// exist), recording `alpha` as the probes' calibration. Locations are
/// ranks, or threads of rank 0 if the program says so.
pub fn write(dir: &Path, p: &Program, t: &Trace, alpha: [f64; 3]) -> Result<(), Error> {
    write_with(dir, p, t, alpha, &[])
}

/// As [`write`], each process also recording `properties` (key, value).
pub fn write_with(
    dir: &Path,
    p: &Program,
    t: &Trace,
    alpha: [f64; 3],
    properties: &[(&str, &str)],
) -> Result<(), Error> {
    let ranks: Vec<(u32, Vec<u32>)> = if p.threads {
        vec![(0, (0..t.len() as u32).collect())]
    } else {
        (0..t.len() as u32).map(|r| (r, vec![0])).collect()
    };
    let n = t.len() as u32;
    for (rank, threads) in ranks {
        let pdir = dir.join(experiment::rank_dir(rank));
        std::fs::create_dir_all(&pdir).map_err(|e| Error::io(&pdir, e))?;
        let end = threads
            .iter()
            .map(|&th| {
                let i = if p.threads { th } else { rank } as usize;
                t[i].last().map_or(0, |e| e.time)
            })
            .max()
            .unwrap_or(0);
        let mut defs = vec![Def::Process(ProcessInfo {
            rank,
            ranks: if p.threads { 1 } else { n },
            pid: 1000 + rank,
            host: "synthetic".into(),
            program: "synthetic".into(),
            args: Vec::new(),
            start_unix_ns: 1_700_000_000_000_000_000,
            mode: Mode::Trace,
            version: env!("CARGO_PKG_VERSION").into(),
        })];
        defs.extend(clock_defs(end));
        for (key, value) in properties {
            defs.push(Def::Property {
                key: key.to_string(),
                value: value.to_string(),
            });
        }
        for (probe, a) in [
            (Probe::Enter, alpha[0]),
            (Probe::Leave, alpha[1]),
            (Probe::Event, alpha[2]),
        ] {
            defs.push(Def::Calibration {
                probe,
                mode: Mode::Trace,
                mean_ns: a,
                sd_ns: 0.0,
                min_ns: a,
                samples: 1,
                tick: 0,
            });
        }
        for (k, name) in p.regions.iter().enumerate() {
            defs.push(Def::Region {
                id: k as u32 + 1,
                kind: RegionKind::User,
                name: name.clone(),
                file: String::new(),
                line: 0,
            });
        }
        for (k, (name, kind)) in CALL_REGIONS.iter().enumerate() {
            defs.push(Def::Region {
                id: call_region(p.regions.len(), k),
                kind: *kind,
                name: name.to_string(),
                file: String::new(),
                line: 0,
            });
        }
        defs.push(Def::Group {
            id: if p.threads { 1 } else { WORLD },
            members: (0..n).collect(),
        });
        for &th in &threads {
            defs.push(Def::Location {
                thread: th,
                name: String::new(),
                os_tid: 0,
            });
            let i = if p.threads { th } else { rank } as usize;
            let path = pdir.join(experiment::events_file(th));
            let mut w = EventWriter::create(&path, rank, th, 1 << 16)?;
            for e in &t[i] {
                w.push(e)?;
            }
            defs.push(w.finish()?.def(th));
        }
        defs.push(Def::End {
            unix_ns: 1_700_000_000_000_000_000 + end,
        });
        experiment::write_defs(&pdir, rank, &defs)?;
    }
    Ok(())
}

/// A 1 GHz monotonic clock whose ticks are nanoseconds, synchronized at
/// the start and just after `end`.
pub fn clock_defs(end: u64) -> [Def; 3] {
    [
        Def::Clock {
            source: ClockSource::Monotonic,
            nominal_hz: 1e9,
        },
        Def::ClockSync {
            tick: 0,
            mono_ns: 0,
            unix_ns: 1_700_000_000_000_000_000,
        },
        Def::ClockSync {
            tick: end + 1,
            mono_ns: end + 1,
            unix_ns: 1_700_000_000_000_000_000 + end + 1,
        },
    ]
}
