//! Chrome's trace event format (JSON), for small traces.
//!
//! `{"traceEvents": [...], "displayTimeUnit": "ns"}` with: metadata events
//! naming each process (`pid` = rank) and thread (`tid` = thread number);
//! `B`/`E` pairs for regions; instant events (`i`) for messages, locks,
//! thread and team events, one-sided operations and marks, with their fields
//! in `args`; flow events (`s`/`f`) from each send to its receive and from
//! thread creation to thread start (and end to join); counters (`C`) for
//! metrics. Times (`ts`) are microseconds with nanosecond decimals.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use parallax_model::event::EventKind;
use parallax_model::experiment::{Experiment, Process};

use crate::fields;
use crate::{Error, Summary};
use parallax_view::deps::{FlowEnd, Flows};
use parallax_view::selection::Selection;
use parallax_view::trace::{self, Loc, Timebase};

/// What every Chrome trace written here starts with.
const HEAD: &[u8] = b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";

/// A Chrome trace, recognised by its first bytes.
const KIND: parallax_output::file::Kind =
    parallax_output::file::Kind::starting_with("a Chrome trace", &[HEAD]);

/// Writes a Chrome trace.
pub fn export(exp: &Experiment, sel: &Selection, out: &Path) -> Result<Summary, Error> {
    let locs = trace::selected(exp, sel)?;
    let io = |e| Error::io(out, e);
    let mut w = Events {
        w: crate::create(out, KIND)?,
        first: true,
    };
    w.w.write_all(HEAD).map_err(io)?;
    write_names(&mut w, exp, &locs).map_err(io)?;
    let mut summary = Summary::default();
    let mut flows = Flows::default();
    for l in &locs {
        let mut lw = LocationWriter {
            loc: l,
            p: &exp.processes[l.process],
            names: HashMap::new(),
        };
        let mut tb = Timebase::new(exp, l);
        let read = trace::try_for_each_event(l, |e| {
            lw.event(&mut w, &mut flows, tb.ns(e.time), &e.kind)
                .map_err(io)
        })?;
        summary.add_read(read);
    }
    w.w.write_all(b"\n]}\n").map_err(io)?;
    crate::finish(w.w, out)?;
    Ok(summary)
}

/// The `traceEvents` array being written: events separated by commas.
struct Events {
    w: crate::Output,
    first: bool,
}

impl Events {
    /// Where the next event goes, after the separator from the previous.
    #[inline]
    fn next(&mut self) -> std::io::Result<&mut crate::Output> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        Ok(&mut self.w)
    }
}

/// Writes the metadata events naming each process and thread.
fn write_names(w: &mut Events, exp: &Experiment, locs: &[Loc]) -> std::io::Result<()> {
    for (first, l) in trace::first_of_rank(locs) {
        if first {
            let name = match &exp.processes[l.process].info {
                Some(i) => format!("rank {}: {}", l.rank, i.program),
                None => format!("rank {}", l.rank),
            };
            write!(
                w.next()?,
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":{}}}}}",
                l.rank,
                js(&name)
            )?;
        }
        write!(
            w.next()?,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
            l.rank,
            l.thread,
            js(&l.thread_name())
        )?;
    }
    Ok(())
}

/// Writes one location's events.
struct LocationWriter<'a> {
    loc: &'a Loc,
    /// Its process.
    p: &'a Process,
    /// Per region: its name as a JSON string, and its category.
    names: HashMap<u32, (String, &'static str)>,
}

impl LocationWriter<'_> {
    /// Writes the event of `kind` at `t` ns (and the arrow it starts or
    /// ends).
    #[inline]
    fn event(
        &mut self,
        w: &mut Events,
        flows: &mut Flows,
        t: u64,
        kind: &EventKind,
    ) -> std::io::Result<()> {
        let ts = Ts(t);
        let (pid, tid) = (self.loc.rank, self.loc.thread);
        let p = self.p;
        match *kind {
            EventKind::Enter { region } => {
                let (name, cat) = self.names.entry(region).or_insert_with(|| {
                    let kind = p.regions.get(&region).map_or("region", |r| r.kind.name());
                    (js(&parallax_view::names::region_name(p, region)), kind)
                });
                write!(
                    w.next()?,
                    "{{\"ph\":\"B\",\"name\":{name},\"cat\":\"{cat}\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}"
                )
            }
            EventKind::Leave { .. } | EventKind::FlushEnd => write!(
                w.next()?,
                "{{\"ph\":\"E\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}"
            ),
            EventKind::FlushBegin => write!(
                w.next()?,
                "{{\"ph\":\"B\",\"name\":\"parallax flush\",\"cat\":\"runtime\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}"
            ),
            EventKind::Metric { metric, value } => write!(
                w.next()?,
                "{{\"ph\":\"C\",\"name\":{},\"ts\":{ts},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"value\":{value}}}}}",
                js(&fields::metric_name(p, metric))
            ),
            ref k => self.instant(w, flows, ts, k),
        }
    }

    /// Writes an instant event with its fields as `args`, and the arrow it
    /// starts or ends.
    fn instant(
        &self,
        w: &mut Events,
        flows: &mut Flows,
        ts: Ts,
        k: &EventKind,
    ) -> std::io::Result<()> {
        let (pid, tid) = (self.loc.rank, self.loc.thread);
        let (name, args) = match *k {
            // A mark's value is signed.
            EventKind::Mark { mark, value } => (
                parallax_view::names::region_name(self.p, mark),
                format!("\"value\":{value}"),
            ),
            _ => {
                let args: Vec<String> = fields::args(k)
                    .into_iter()
                    .map(|(a, v)| format!("\"{a}\":{v}"))
                    .collect();
                (k.name().to_string(), args.join(","))
            }
        };
        write!(
            w.next()?,
            "{{\"ph\":\"i\",\"s\":\"t\",\"name\":{},\"cat\":\"event\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}",
            js(&name)
        )?;
        let Some(f) = flows.of(self.loc.rank, k) else {
            return Ok(());
        };
        let (ph, id) = match f {
            FlowEnd::Start(id) => ("s", id),
            FlowEnd::End(id) => ("f", id),
        };
        write!(
            w.next()?,
            "{{\"ph\":\"{ph}\",\"id\":{id},\"name\":\"{}\",\"cat\":\"flow\",\"bp\":\"e\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}",
            flow_name(k)
        )
    }
}

/// The name of the arrow an event starts or ends.
pub(crate) fn flow_name(k: &EventKind) -> &'static str {
    match k {
        EventKind::ThreadCreate { .. } | EventKind::ThreadBegin { .. } => "thread start",
        EventKind::ThreadEnd { .. } | EventKind::ThreadJoin { .. } => "thread join",
        _ => "message",
    }
}

/// A JSON string literal.
fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Nanoseconds shown as microseconds with three decimals.
struct Ts(u64);

impl std::fmt::Display for Ts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}
