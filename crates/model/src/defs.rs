//! Definitions: what the ids in event streams mean, and what a process knows
//! about itself (see FORMAT.md, "Definition records").
//!
//! A process appends definition records to its `.pxd` file as they arise
//! (a region when it is first entered, a clock sample at every flush), so the
//! file is complete up to the last write even if the process dies.

use crate::event::EventKind;
use crate::region::RegionKind;
use crate::varint;
use crate::Error;

/// Which clock a process's ticks come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ClockSource {
    /// The CPU's invariant time-stamp counter.
    Tsc = 0,
    /// CLOCK_MONOTONIC in nanoseconds.
    Monotonic = 1,
}

/// What a calibration record measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Probe {
    /// One read of the clock.
    ClockRead = 0,
    /// An enter probe.
    Enter = 1,
    /// A leave probe.
    Leave = 2,
    /// An extended event probe (message, lock, mark, ...).
    Event = 3,
    /// A probe whose recording is switched off.
    Disabled = 4,
    /// An enter probe made through the C entry points (`parallax_pl_enter`,
    /// called across a shared library's boundary).
    EnterC = 5,
    /// A leave probe made through the C entry points (`parallax_pl_leave`).
    LeaveC = 6,
    /// An enter probe that preserves the caller's registers.
    EnterPreserving = 7,
    /// A leave probe that preserves the caller's registers.
    LeavePreserving = 8,
    /// A register-preserving enter probe through the C entry points.
    EnterCPreserving = 9,
    /// A register-preserving leave probe through the C entry points.
    LeaveCPreserving = 10,
    /// A register-preserving enter and leave pair around each iteration of
    /// a loop, in the kind of loop where it cost least: its cost in
    /// context (with the loop's own time taken out).
    PairInContextMin = 11,
    /// As `PairInContextMin`, in the kind of loop where it cost most.
    PairInContextMax = 12,
    /// The entry hook of compiler instrumentation
    /// (`__cyg_profile_func_enter`) as an instrumented function pays it:
    /// its share of [`Probe::HookPair`], by the ratio of the runtime's own
    /// enter and leave.
    EnterHook = 13,
    /// The exit hook (`__cyg_profile_func_exit`), likewise.
    LeaveHook = 14,
    /// A call of a function built with `-finstrument-functions`, with both
    /// hooks recording, less the same call without instrumentation: the
    /// whole cost a recorded call pays.
    HookPair = 15,
    /// The same for a call whose hooks record nothing (a throttled or
    /// filtered function, a frame beyond the depth limit, recording off):
    /// what each [`crate::event::EventKind::Skipped`] call cost.
    HookSkipped = 16,
    /// A call whose hooks record nothing, timed inside loops of different
    /// kinds of work against the same loops calling the function built
    /// plainly, in the kind of loop where it cost least: the processor
    /// runs the hooks beside the loop's own work, so in place they can cost
    /// far less than alone ([`Probe::HookSkipped`]).
    HookSkippedInContextMin = 17,
    /// As `HookSkippedInContextMin`, in the kind of loop where it cost most.
    HookSkippedInContextMax = 18,
    /// A call whose hooks both record ([`Probe::HookPair`]), timed inside
    /// the loops of `HookSkippedInContextMin`, in the kind of loop where
    /// it cost least.
    HookPairInContextMin = 19,
    /// As `HookPairInContextMin`, in the kind of loop where it cost most.
    HookPairInContextMax = 20,
}

impl Probe {
    /// All probes, in numbering order.
    pub const ALL: [Probe; 21] = [
        Probe::ClockRead,
        Probe::Enter,
        Probe::Leave,
        Probe::Event,
        Probe::Disabled,
        Probe::EnterC,
        Probe::LeaveC,
        Probe::EnterPreserving,
        Probe::LeavePreserving,
        Probe::EnterCPreserving,
        Probe::LeaveCPreserving,
        Probe::PairInContextMin,
        Probe::PairInContextMax,
        Probe::EnterHook,
        Probe::LeaveHook,
        Probe::HookPair,
        Probe::HookSkipped,
        Probe::HookSkippedInContextMin,
        Probe::HookSkippedInContextMax,
        Probe::HookPairInContextMin,
        Probe::HookPairInContextMax,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Probe::ClockRead => "clock_read",
            Probe::Enter => "enter",
            Probe::Leave => "leave",
            Probe::Event => "event",
            Probe::Disabled => "disabled",
            Probe::EnterC => "enter_c",
            Probe::LeaveC => "leave_c",
            Probe::EnterPreserving => "enter_preserving",
            Probe::LeavePreserving => "leave_preserving",
            Probe::EnterCPreserving => "enter_c_preserving",
            Probe::LeaveCPreserving => "leave_c_preserving",
            Probe::PairInContextMin => "pair_in_context_min",
            Probe::PairInContextMax => "pair_in_context_max",
            Probe::EnterHook => "enter_hook",
            Probe::LeaveHook => "leave_hook",
            Probe::HookPair => "hook_pair",
            Probe::HookSkipped => "hook_skipped",
            Probe::HookSkippedInContextMin => "hook_skipped_in_context_min",
            Probe::HookSkippedInContextMax => "hook_skipped_in_context_max",
            Probe::HookPairInContextMin => "hook_pair_in_context_min",
            Probe::HookPairInContextMax => "hook_pair_in_context_max",
        }
    }
}

/// How a region's enter and leave probes are made (and so what they cost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Entry {
    /// The runtime's own probes (`region!` guards): `Probe::Enter`/`Leave`.
    Guard = 0,
    /// The C entry points: `Probe::EnterC`/`LeaveC`.
    C = 1,
    /// Probes that preserve the caller's registers:
    /// `Probe::EnterPreserving`/`LeavePreserving`.
    Preserving = 2,
    /// Register-preserving probes through the C entry points:
    /// `Probe::EnterCPreserving`/`LeaveCPreserving`.
    CPreserving = 3,
    /// The hooks of compiler instrumentation: `Probe::EnterHook`/`LeaveHook`.
    Hook = 4,
}

impl Entry {
    /// Every entry, in numbering order.
    pub const ALL: [Entry; 5] = [
        Entry::Guard,
        Entry::C,
        Entry::Preserving,
        Entry::CPreserving,
        Entry::Hook,
    ];

    /// The probes that measure this entry's enter and leave.
    pub fn probes(self) -> (Probe, Probe) {
        match self {
            Entry::Guard => (Probe::Enter, Probe::Leave),
            Entry::C => (Probe::EnterC, Probe::LeaveC),
            Entry::Preserving => (Probe::EnterPreserving, Probe::LeavePreserving),
            Entry::CPreserving => (Probe::EnterCPreserving, Probe::LeaveCPreserving),
            Entry::Hook => (Probe::EnterHook, Probe::LeaveHook),
        }
    }
}

/// The measurement mode of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// No recording.
    Off = 0,
    /// Call-path profiles only.
    Profile = 1,
    /// Event traces only.
    Trace = 2,
    /// Both.
    Both = 3,
}

impl Mode {
    /// Whether events are traced.
    pub fn traces(self) -> bool {
        matches!(self, Mode::Trace | Mode::Both)
    }

    /// Whether call-path profiles are kept.
    pub fn profiles(self) -> bool {
        matches!(self, Mode::Profile | Mode::Both)
    }

    /// Lower-case name, as in `PARALLAX_MODE`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Profile => "profile",
            Mode::Trace => "trace",
            Mode::Both => "both",
        }
    }

    /// Parses a `PARALLAX_MODE` value.
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "0" => Some(Mode::Off),
            "profile" => Some(Mode::Profile),
            "trace" => Some(Mode::Trace),
            "both" | "trace+profile" | "profile+trace" => Some(Mode::Both),
            _ => None,
        }
    }

    fn from_u8(v: u8) -> Option<Mode> {
        [Mode::Off, Mode::Profile, Mode::Trace, Mode::Both]
            .get(v as usize)
            .copied()
    }
}

/// Facts about the measured process, recorded once at start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// MPI rank (or 0).
    pub rank: u32,
    /// Number of ranks in the job, 0 if unknown.
    pub ranks: u32,
    /// Operating-system process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// Program path.
    pub program: String,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Wall-clock start, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// Measurement mode.
    pub mode: Mode,
    /// Parallax version that measured it.
    pub version: String,
}

/// One definition record.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)] // each variant's doc names its fields
pub enum Def {
    /// The process.
    Process(ProcessInfo),
    /// The clock the ticks come from, with its nominal frequency (ticks/s).
    Clock {
        source: ClockSource,
        nominal_hz: f64,
    },
    /// A simultaneous reading of the tick clock, CLOCK_MONOTONIC and the
    /// wall clock; several of these map ticks to time.
    ClockSync {
        tick: u64,
        mono_ns: u64,
        unix_ns: u64,
    },
    /// The measured cost of a probe in `mode`, in ns over `samples` batches.
    Calibration {
        probe: Probe,
        mode: Mode,
        mean_ns: f64,
        sd_ns: f64,
        min_ns: f64,
        samples: u32,
        /// Tick at the middle of the measurement (0: unknown).
        tick: u64,
    },
    /// A region.
    Region {
        id: u32,
        kind: RegionKind,
        name: String,
        file: String,
        line: u32,
    },
    /// A location (thread) of this process.
    Location {
        thread: u32,
        name: String,
        os_tid: u32,
    },
    /// A group of ranks (a communicator) or of threads (a barrier team).
    Group { id: u64, members: Vec<u32> },
    /// A metric.
    Metric { id: u32, name: String, unit: String },
    /// A fact worth keeping that has no record of its own.
    Property { key: String, value: String },
    /// The process finished measuring cleanly at `unix_ns`.
    End { unix_ns: u64 },
    /// An executable segment of a file mapped into the process: run-time
    /// addresses `start..end` hold the file's code at virtual addresses
    /// `start - base .. end - base` (`base` is the load bias; 0 for a
    /// position-dependent executable). `path` may be empty if unknown.
    Module {
        base: u64,
        start: u64,
        end: u64,
        path: String,
    },
    /// Region `region` is the code (a function) at run-time address `addr`;
    /// offline tools resolve it to a symbol and source line through the
    /// process's `Module` records.
    CodeAddress { region: u32, addr: u64 },
    /// Region `region` is entered and left through `entry` (regions without
    /// this record through `Entry::Guard`).
    Entry { region: u32, entry: Entry },
    /// A clock comparison with process `reference` (a rank) by ping-pong:
    /// at CLOCK_MONOTONIC time `local_ns` of this process, the reference's
    /// CLOCK_MONOTONIC read `local_ns + offset_ns`, give or take half of
    /// the round trip `rtt_ns`.
    ClockOffset {
        reference: u32,
        local_ns: u64,
        offset_ns: i64,
        rtt_ns: u64,
    },
    /// What the event file of location `thread` held when it was complete.
    /// Analyses that need these counts read them here instead of the file.
    Summary { thread: u32, summary: Summary },
    /// What the process could not record for `reason` (running totals:
    /// the last record of a reason counts): `threads` threads that were not
    /// traced (or not measured at all), and `events` recorded events, of
    /// `bytes` bytes, that could not be written.
    Unrecorded {
        reason: String,
        threads: u64,
        events: u64,
        bytes: u64,
    },
    /// Location `thread` called region `region` (a compiler-instrumented
    /// function) `calls` times in all, recorded or not; its profile counts
    /// only the recorded calls, fewer when the function was throttled, a
    /// frame lay beyond the depth limit or recording was off. Written when
    /// the thread ends.
    Calls {
        thread: u32,
        region: u32,
        calls: u64,
    },
    /// What a call whose compiler hooks recorded nothing cost location
    /// `thread` in place, timed in the run: the median over pairs of
    /// blocks of such calls, one block with the hooks' work done once and
    /// one with it done twice, of the difference per call, in
    /// picoseconds of the thread's CPU time. Covers `calls` such calls,
    /// `decoys` of which did the work twice, up to tick `tick`.
    HookSkippedInRun {
        thread: u32,
        tick: u64,
        calls: u64,
        decoys: u64,
        ps: u64,
    },
    /// How fast location `thread`'s core ran the runtime's code, timed in
    /// the run: `samples` runs of the disabled-probe loop that calibration
    /// times ([`Probe::Disabled`], 256 checks each) took `ticks` in all,
    /// in the window that ends at tick `tick`. A machine whose cores are
    /// shared (another virtual machine on the sibling hardware thread)
    /// runs such code up to twice as fast or slow from one millisecond to
    /// the next; every probe's cost follows.
    SpeedInRun {
        thread: u32,
        tick: u64,
        samples: u64,
        ticks: u64,
    },
}

/// What a location's event file held when it was complete, at `bytes`
/// bytes (see [`Def::Summary`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The file's length then.
    pub bytes: u64,
    /// Events of synchronization on shared objects (see
    /// [`EventKind::is_shared_sync`]).
    pub syncs: u64,
    /// Collectives ended, (communicator, count), by communicator.
    pub collectives: Vec<(u64, u64)>,
}

impl Summary {
    /// Counts one more event.
    #[inline]
    pub fn count(&mut self, kind: &EventKind) {
        if kind.is_shared_sync() {
            self.syncs += 1;
        } else if let EventKind::CollectiveEnd { comm, .. } = *kind {
            match self.collectives.binary_search_by_key(&comm, |c| c.0) {
                Ok(i) => self.collectives[i].1 += 1,
                Err(i) => self.collectives.insert(i, (comm, 1)),
            }
        }
    }

    /// The definition of location `thread`.
    pub fn def(self, thread: u32) -> Def {
        Def::Summary {
            thread,
            summary: self,
        }
    }
}

mod code {
    pub const PROCESS: u8 = 1;
    pub const CLOCK: u8 = 2;
    pub const CLOCK_SYNC: u8 = 3;
    pub const CALIBRATION: u8 = 4;
    pub const REGION: u8 = 5;
    pub const LOCATION: u8 = 6;
    pub const GROUP: u8 = 7;
    pub const METRIC: u8 = 8;
    pub const PROPERTY: u8 = 9;
    pub const END: u8 = 10;
    pub const MODULE: u8 = 11;
    pub const CODE_ADDRESS: u8 = 12;
    pub const CLOCK_OFFSET: u8 = 13;
    pub const ENTRY: u8 = 14;
    pub const SUMMARY: u8 = 15;
    pub const UNRECORDED: u8 = 16;
    pub const CALLS: u8 = 17;
    pub const HOOK_SKIPPED_IN_RUN: u8 = 18;
    pub const SPEED_IN_RUN: u8 = 19;
}

/// Room [`encode_end`] needs: two code bytes, four varints and the slack
/// of the last one.
pub const END_RECORDS_LEN: usize = 2 + 4 * varint::SLACK + varint::SLACK;

/// Encodes a final clock sample (`ClockSync`) and `End` into `out` without
/// allocating, for a writer that may not (a process that ends in a signal
/// handler); returns their length. They decode as
/// `[ClockSync { tick, mono_ns, unix_ns }, End { unix_ns }]`.
pub fn encode_end(tick: u64, mono_ns: u64, unix_ns: u64, out: &mut [u8; END_RECORDS_LEN]) -> usize {
    let base = out.as_mut_ptr();
    // Safety: every varint is written with SLACK bytes left in `out`
    // (END_RECORDS_LEN counts them).
    unsafe {
        *base = code::CLOCK_SYNC;
        let mut p = base.add(1);
        for v in [tick, mono_ns, unix_ns] {
            p = varint::put_unchecked(p, v);
        }
        *p = code::END;
        p = varint::put_unchecked(p.add(1), unix_ns);
        p.offset_from(base) as usize
    }
}

/// Room [`encode_speed`] needs: a code byte and four varints with the
/// slack of the last one.
pub const SPEED_RECORD_LEN: usize = 1 + 4 * varint::SLACK + varint::SLACK;

/// Encodes [`Def::SpeedInRun`] into `out` without allocating, for a probe
/// that may run in a signal handler; returns its length.
pub fn encode_speed(
    thread: u32,
    tick: u64,
    samples: u64,
    ticks: u64,
    out: &mut [u8; SPEED_RECORD_LEN],
) -> usize {
    let base = out.as_mut_ptr();
    // Safety: every varint is written with SLACK bytes left in `out`
    // (SPEED_RECORD_LEN counts them).
    unsafe {
        *base = code::SPEED_IN_RUN;
        let mut p = base.add(1);
        for v in [thread as u64, tick, samples, ticks] {
            p = varint::put_unchecked(p, v);
        }
        p.offset_from(base) as usize
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    varint::put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

impl Def {
    /// Appends this record's encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Def::Process(p) => {
                out.push(code::PROCESS);
                varint::put(out, p.rank as u64);
                varint::put(out, p.ranks as u64);
                varint::put(out, p.pid as u64);
                put_str(out, &p.host);
                put_str(out, &p.program);
                varint::put(out, p.args.len() as u64);
                for a in &p.args {
                    put_str(out, a);
                }
                varint::put(out, p.start_unix_ns);
                out.push(p.mode as u8);
                put_str(out, &p.version);
            }
            Def::Clock { source, nominal_hz } => {
                out.push(code::CLOCK);
                out.push(*source as u8);
                out.extend_from_slice(&nominal_hz.to_le_bytes());
            }
            Def::ClockSync {
                tick,
                mono_ns,
                unix_ns,
            } => {
                out.push(code::CLOCK_SYNC);
                varint::put(out, *tick);
                varint::put(out, *mono_ns);
                varint::put(out, *unix_ns);
            }
            Def::Calibration {
                probe,
                mode,
                mean_ns,
                sd_ns,
                min_ns,
                samples,
                tick,
            } => {
                out.push(code::CALIBRATION);
                out.push(*probe as u8);
                out.push(*mode as u8);
                for v in [mean_ns, sd_ns, min_ns] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
                varint::put(out, *samples as u64);
                varint::put(out, *tick);
            }
            Def::Region {
                id,
                kind,
                name,
                file,
                line,
            } => {
                out.push(code::REGION);
                varint::put(out, *id as u64);
                out.push(*kind as u8);
                put_str(out, name);
                put_str(out, file);
                varint::put(out, *line as u64);
            }
            Def::Location {
                thread,
                name,
                os_tid,
            } => {
                out.push(code::LOCATION);
                varint::put(out, *thread as u64);
                put_str(out, name);
                varint::put(out, *os_tid as u64);
            }
            Def::Group { id, members } => {
                out.push(code::GROUP);
                varint::put(out, *id);
                varint::put(out, members.len() as u64);
                for m in members {
                    varint::put(out, *m as u64);
                }
            }
            Def::Metric { id, name, unit } => {
                out.push(code::METRIC);
                varint::put(out, *id as u64);
                put_str(out, name);
                put_str(out, unit);
            }
            Def::Property { key, value } => {
                out.push(code::PROPERTY);
                put_str(out, key);
                put_str(out, value);
            }
            Def::End { unix_ns } => {
                out.push(code::END);
                varint::put(out, *unix_ns);
            }
            Def::Module {
                base,
                start,
                end,
                path,
            } => {
                out.push(code::MODULE);
                varint::put(out, *base);
                varint::put(out, *start);
                varint::put(out, *end);
                put_str(out, path);
            }
            Def::CodeAddress { region, addr } => {
                out.push(code::CODE_ADDRESS);
                varint::put(out, *region as u64);
                varint::put(out, *addr);
            }
            Def::Entry { region, entry } => {
                out.push(code::ENTRY);
                varint::put(out, *region as u64);
                out.push(*entry as u8);
            }
            Def::ClockOffset {
                reference,
                local_ns,
                offset_ns,
                rtt_ns,
            } => {
                out.push(code::CLOCK_OFFSET);
                varint::put(out, *reference as u64);
                varint::put(out, *local_ns);
                varint::put_signed(out, *offset_ns);
                varint::put(out, *rtt_ns);
            }
            Def::Unrecorded {
                reason,
                threads,
                events,
                bytes,
            } => {
                out.push(code::UNRECORDED);
                put_str(out, reason);
                varint::put(out, *threads);
                varint::put(out, *events);
                varint::put(out, *bytes);
            }
            Def::Calls {
                thread,
                region,
                calls,
            } => {
                out.push(code::CALLS);
                varint::put(out, *thread as u64);
                varint::put(out, *region as u64);
                varint::put(out, *calls);
            }
            Def::HookSkippedInRun {
                thread,
                tick,
                calls,
                decoys,
                ps,
            } => {
                out.push(code::HOOK_SKIPPED_IN_RUN);
                varint::put(out, *thread as u64);
                varint::put(out, *tick);
                varint::put(out, *calls);
                varint::put(out, *decoys);
                varint::put(out, *ps);
            }
            Def::SpeedInRun {
                thread,
                tick,
                samples,
                ticks,
            } => {
                let mut b = [0u8; SPEED_RECORD_LEN];
                let n = encode_speed(*thread, *tick, *samples, *ticks, &mut b);
                out.extend_from_slice(&b[..n]);
            }
            Def::Summary { thread, summary } => {
                out.push(code::SUMMARY);
                varint::put(out, *thread as u64);
                varint::put(out, summary.bytes);
                varint::put(out, summary.syncs);
                varint::put(out, summary.collectives.len() as u64);
                for &(comm, count) in &summary.collectives {
                    varint::put(out, comm);
                    varint::put(out, count);
                }
            }
        }
    }

    /// Decodes all records of one definitions block.
    pub fn decode_all(buf: &[u8]) -> Result<Vec<Def>, Error> {
        let mut r = Reader { buf, at: 0 };
        let mut out = Vec::new();
        while r.at < buf.len() {
            out.push(r.def()?);
        }
        Ok(out)
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn bad(&self, what: &str) -> Error {
        Error::corrupt(format!("{what} at byte {} of a definitions block", self.at))
    }

    fn byte(&mut self) -> Result<u8, Error> {
        let b = *self
            .buf
            .get(self.at)
            .ok_or_else(|| self.bad("record cut short"))?;
        self.at += 1;
        Ok(b)
    }

    fn u64(&mut self) -> Result<u64, Error> {
        let (v, n) =
            varint::get(&self.buf[self.at..]).ok_or_else(|| self.bad("record cut short"))?;
        self.at += n;
        Ok(v)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        let v = self.u64()?;
        u32::try_from(v).map_err(|_| self.bad("value out of range"))
    }

    fn f64(&mut self) -> Result<f64, Error> {
        let b = self
            .buf
            .get(self.at..self.at + 8)
            .ok_or_else(|| self.bad("record cut short"))?;
        self.at += 8;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn len(&mut self) -> Result<usize, Error> {
        let n = self.u64()?;
        if n > (self.buf.len() - self.at) as u64 {
            return Err(self.bad("length beyond the block"));
        }
        Ok(n as usize)
    }

    fn str(&mut self) -> Result<String, Error> {
        let n = self.len()?;
        let s = &self.buf[self.at..self.at + n];
        self.at += n;
        String::from_utf8(s.to_vec()).map_err(|_| self.bad("string is not UTF-8"))
    }

    fn def(&mut self) -> Result<Def, Error> {
        Ok(match self.byte()? {
            code::PROCESS => {
                let rank = self.u32()?;
                let ranks = self.u32()?;
                let pid = self.u32()?;
                let host = self.str()?;
                let program = self.str()?;
                let n = self.len()?;
                let args = (0..n).map(|_| self.str()).collect::<Result<_, _>>()?;
                let start_unix_ns = self.u64()?;
                let mode = Mode::from_u8(self.byte()?).ok_or_else(|| self.bad("unknown mode"))?;
                let version = self.str()?;
                Def::Process(ProcessInfo {
                    rank,
                    ranks,
                    pid,
                    host,
                    program,
                    args,
                    start_unix_ns,
                    mode,
                    version,
                })
            }
            code::CLOCK => {
                let source = match self.byte()? {
                    0 => ClockSource::Tsc,
                    1 => ClockSource::Monotonic,
                    _ => return Err(self.bad("unknown clock source")),
                };
                Def::Clock {
                    source,
                    nominal_hz: self.f64()?,
                }
            }
            code::CLOCK_SYNC => Def::ClockSync {
                tick: self.u64()?,
                mono_ns: self.u64()?,
                unix_ns: self.u64()?,
            },
            code::CALIBRATION => {
                let probe = *Probe::ALL
                    .get(self.byte()? as usize)
                    .ok_or_else(|| self.bad("unknown probe"))?;
                let mode = Mode::from_u8(self.byte()?).ok_or_else(|| self.bad("unknown mode"))?;
                Def::Calibration {
                    probe,
                    mode,
                    mean_ns: self.f64()?,
                    sd_ns: self.f64()?,
                    min_ns: self.f64()?,
                    samples: self.u32()?,
                    tick: self.u64()?,
                }
            }
            code::REGION => {
                let id = self.u32()?;
                let kind = RegionKind::from_u8(self.byte()?)
                    .ok_or_else(|| self.bad("unknown region kind"))?;
                Def::Region {
                    id,
                    kind,
                    name: self.str()?,
                    file: self.str()?,
                    line: self.u32()?,
                }
            }
            code::LOCATION => Def::Location {
                thread: self.u32()?,
                name: self.str()?,
                os_tid: self.u32()?,
            },
            code::GROUP => {
                let id = self.u64()?;
                let n = self.len()?;
                let members = (0..n).map(|_| self.u32()).collect::<Result<_, _>>()?;
                Def::Group { id, members }
            }
            code::METRIC => Def::Metric {
                id: self.u32()?,
                name: self.str()?,
                unit: self.str()?,
            },
            code::PROPERTY => Def::Property {
                key: self.str()?,
                value: self.str()?,
            },
            code::END => Def::End {
                unix_ns: self.u64()?,
            },
            code::MODULE => Def::Module {
                base: self.u64()?,
                start: self.u64()?,
                end: self.u64()?,
                path: self.str()?,
            },
            code::CODE_ADDRESS => Def::CodeAddress {
                region: self.u32()?,
                addr: self.u64()?,
            },
            code::ENTRY => Def::Entry {
                region: self.u32()?,
                entry: *Entry::ALL
                    .get(self.byte()? as usize)
                    .ok_or_else(|| self.bad("unknown entry"))?,
            },
            code::CLOCK_OFFSET => Def::ClockOffset {
                reference: self.u32()?,
                local_ns: self.u64()?,
                offset_ns: varint::unzigzag(self.u64()?),
                rtt_ns: self.u64()?,
            },
            code::SUMMARY => {
                let thread = self.u32()?;
                let bytes = self.u64()?;
                let syncs = self.u64()?;
                let n = self.len()?;
                let collectives = (0..n)
                    .map(|_| Ok((self.u64()?, self.u64()?)))
                    .collect::<Result<_, Error>>()?;
                Summary {
                    bytes,
                    syncs,
                    collectives,
                }
                .def(thread)
            }
            code::UNRECORDED => Def::Unrecorded {
                reason: self.str()?,
                threads: self.u64()?,
                events: self.u64()?,
                bytes: self.u64()?,
            },
            code::CALLS => Def::Calls {
                thread: self.u32()?,
                region: self.u32()?,
                calls: self.u64()?,
            },
            code::HOOK_SKIPPED_IN_RUN => Def::HookSkippedInRun {
                thread: self.u32()?,
                tick: self.u64()?,
                calls: self.u64()?,
                decoys: self.u64()?,
                ps: self.u64()?,
            },
            code::SPEED_IN_RUN => Def::SpeedInRun {
                thread: self.u32()?,
                tick: self.u64()?,
                samples: self.u64()?,
                ticks: self.u64()?,
            },
            _ => return Err(self.bad("unknown definition code")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_defs() -> Vec<Def> {
        vec![
            Def::Process(ProcessInfo {
                rank: 2,
                ranks: 4,
                pid: 1234,
                host: "node-1".into(),
                program: "/bin/app".into(),
                args: vec!["-n".into(), "10".into()],
                start_unix_ns: 1_700_000_000_000_000_000,
                mode: Mode::Both,
                version: "0.1.0".into(),
            }),
            Def::Clock {
                source: ClockSource::Tsc,
                nominal_hz: 2.1e9,
            },
            Def::ClockSync {
                tick: 99,
                mono_ns: 100,
                unix_ns: 101,
            },
            Def::Calibration {
                probe: Probe::Enter,
                mode: Mode::Trace,
                mean_ns: 7.5,
                sd_ns: 0.25,
                min_ns: 7.0,
                samples: 20,
                tick: 12_345,
            },
            Def::Region {
                id: 7,
                kind: RegionKind::Barrier,
                name: "wait ünïcode".into(),
                file: "src/x.rs".into(),
                line: 42,
            },
            Def::Location {
                thread: 1,
                name: "worker".into(),
                os_tid: 4321,
            },
            Def::Group {
                id: 5,
                members: vec![0, 1, 3],
            },
            Def::Metric {
                id: 1,
                name: "bytes".into(),
                unit: "B".into(),
            },
            Def::Property {
                key: "throttled".into(),
                value: "f".into(),
            },
            Def::End { unix_ns: 5 },
            Def::Module {
                base: 0x5555_0000_0000,
                start: 0x5555_0000_1000,
                end: 0x5555_0000_9000,
                path: "/usr/bin/app".into(),
            },
            Def::CodeAddress {
                region: 9,
                addr: 0x5555_0000_1234,
            },
            Def::Entry {
                region: 9,
                entry: Entry::Preserving,
            },
            Def::ClockOffset {
                reference: 0,
                local_ns: 123_456_789,
                offset_ns: -4_200,
                rtt_ns: 3_100,
            },
            Summary {
                bytes: 1 << 40,
                syncs: 17,
                collectives: vec![(0, 5), (1 << 63, 300)],
            }
            .def(3),
            Def::Unrecorded {
                reason: "cannot create an event file: Too many open files".into(),
                threads: 283,
                events: 1 << 33,
                bytes: 0,
            },
            Def::Calls {
                thread: 3,
                region: 9,
                calls: 1 << 40,
            },
            Def::HookSkippedInRun {
                thread: 3,
                tick: 1 << 50,
                calls: 1 << 20,
                decoys: 1 << 17,
                ps: 2_750,
            },
            Def::SpeedInRun {
                thread: 2,
                tick: 1 << 45,
                samples: 32,
                ticks: 11_200,
            },
        ]
    }

    #[test]
    fn end_records_decode() {
        let mut buf = [0u8; END_RECORDS_LEN];
        let n = encode_end(u64::MAX, 1 << 40, 7, &mut buf);
        assert_eq!(
            Def::decode_all(&buf[..n]).unwrap(),
            [
                Def::ClockSync {
                    tick: u64::MAX,
                    mono_ns: 1 << 40,
                    unix_ns: 7
                },
                Def::End { unix_ns: 7 }
            ]
        );
    }

    #[test]
    fn round_trip() {
        let defs = sample_defs();
        let mut buf = Vec::new();
        for d in &defs {
            d.encode(&mut buf);
        }
        assert_eq!(Def::decode_all(&buf).unwrap(), defs);
        for cut in 0..buf.len() {
            let _ = Def::decode_all(&buf[..cut]);
        }
    }
}
