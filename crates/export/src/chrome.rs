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
use parallax_model::experiment::Experiment;

use crate::stream::{self, FlowEnd, Flows};
use crate::{Error, Selection, Summary};

/// What every Chrome trace written here starts with.
const HEAD: &[u8] = b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";

/// A Chrome trace, recognised by its first bytes.
const KIND: parallax_output::file::Kind =
    parallax_output::file::Kind::starting_with("a Chrome trace", &[HEAD]);

/// Writes a Chrome trace.
pub fn export(exp: &Experiment, sel: &Selection, out: &Path) -> Result<Summary, Error> {
    let locs = stream::locations(exp, sel)?;
    let mut w = crate::create(out, KIND)?;
    let io = |e| Error::io(out, e);
    let mut summary = Summary::default();
    w.write_all(HEAD).map_err(io)?;
    let mut first = true;
    let mut sep = |w: &mut dyn Write| -> std::io::Result<()> {
        if !first {
            w.write_all(b",\n")?;
        }
        first = false;
        Ok(())
    };
    let mut named = std::collections::HashSet::new();
    for l in &locs {
        if named.insert(l.rank) {
            let name = match &l.p.info {
                Some(i) => format!("rank {}: {}", l.rank, i.program),
                None => format!("rank {}", l.rank),
            };
            sep(&mut w).map_err(io)?;
            write!(
                w,
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":{}}}}}",
                l.rank,
                js(&name)
            )
            .map_err(io)?;
        }
        let tname = if l.name.is_empty() {
            format!("thread {}", l.thread)
        } else {
            format!("thread {} ({})", l.thread, l.name)
        };
        sep(&mut w).map_err(io)?;
        write!(
            w,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
            l.rank,
            l.thread,
            js(&tname)
        )
        .map_err(io)?;
    }
    let mut flows = Flows::default();
    for l in &locs {
        let p = l.p;
        let mut names: HashMap<u32, (String, &'static str)> = HashMap::new();
        let (pid, tid) = (l.rank, l.thread);
        let (n, warn) = stream::for_each_event(exp, l, |t, e| {
            let ts = Ts(t);
            let r = (|| -> std::io::Result<()> {
                match e.kind {
                    EventKind::Enter { region } => {
                        let (name, cat) = names.entry(region).or_insert_with(|| {
                            let kind = p.regions.get(&region).map_or("region", |r| r.kind.name());
                            (js(&stream::region_name(p, region)), kind)
                        });
                        sep(&mut w)?;
                        write!(
                            w,
                            "{{\"ph\":\"B\",\"name\":{name},\"cat\":\"{cat}\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}"
                        )
                    }
                    EventKind::Leave { .. } => {
                        sep(&mut w)?;
                        write!(
                            w,
                            "{{\"ph\":\"E\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}"
                        )
                    }
                    EventKind::FlushBegin => {
                        sep(&mut w)?;
                        write!(w, "{{\"ph\":\"B\",\"name\":\"parallax flush\",\"cat\":\"runtime\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}")
                    }
                    EventKind::FlushEnd => {
                        sep(&mut w)?;
                        write!(
                            w,
                            "{{\"ph\":\"E\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}"
                        )
                    }
                    EventKind::Metric { metric, value } => {
                        let name = p
                            .metrics
                            .get(&metric)
                            .map_or_else(|| format!("metric {metric}"), |m| m.0.clone());
                        sep(&mut w)?;
                        write!(
                            w,
                            "{{\"ph\":\"C\",\"name\":{},\"ts\":{ts},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"value\":{value}}}}}",
                            js(&name)
                        )
                    }
                    ref k => {
                        let name = match k {
                            EventKind::Mark { mark, .. } => stream::region_name(p, *mark),
                            _ => k.name().to_string(),
                        };
                        let args: Vec<String> = stream::args(k)
                            .into_iter()
                            .map(|(a, v)| format!("\"{a}\":{v}"))
                            .collect();
                        let args = match k {
                            EventKind::Metric { value, .. } | EventKind::Mark { value, .. } => {
                                format!("\"value\":{value}")
                            }
                            _ => args.join(","),
                        };
                        sep(&mut w)?;
                        write!(
                            w,
                            "{{\"ph\":\"i\",\"s\":\"t\",\"name\":{},\"cat\":\"event\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}",
                            js(&name)
                        )?;
                        if let Some(f) = flows.of(l.rank, k) {
                            let (ph, id) = match f {
                                FlowEnd::Start(id) => ("s", id),
                                FlowEnd::End(id) => ("f", id),
                            };
                            sep(&mut w)?;
                            write!(
                                w,
                                "{{\"ph\":\"{ph}\",\"id\":{id},\"name\":\"{}\",\"cat\":\"flow\",\"bp\":\"e\",\"ts\":{ts},\"pid\":{pid},\"tid\":{tid}}}",
                                flow_name(k)
                            )?;
                        }
                        Ok(())
                    }
                }
            })();
            r.map_err(|e| Error::io(out, e))
        })?;
        summary.events += n;
        if let Some(wn) = warn {
            summary.warnings.push(wn);
        }
    }
    w.write_all(b"\n]}\n").map_err(io)?;
    crate::finish(w, out)?;
    Ok(summary)
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
