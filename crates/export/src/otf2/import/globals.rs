//! An archive's global definitions as read, and the Parallax definitions
//! made of them.

use std::borrow::Cow;
use std::collections::HashMap;

use parallax_model::defs::{ClockSource, Def, Mode, Probe, ProcessInfo};
use parallax_model::experiment::CLOCK_PROPERTY;
use parallax_model::region::RegionKind;

use super::kinds::{region_kind, thread_name};
use super::{ImportOptions, Program, MARK_BASE};
use crate::otf2::export::{ATTRIBUTES, EVENT_PARAMS};
use crate::otf2::libotf2::consts as f;
use crate::otf2::libotf2::{
    Attribute, ClockProperties, Comm, GlobalDefs, Group, Location, LocationGroup, LocationRef,
    MetricClass, MetricMember, Parameter, Region, SystemTreeNode,
};

/// A group's definition, its members kept.
pub(super) struct GroupDef {
    kind: u8,
    paradigm: u8,
    members: Vec<u64>,
}

/// The global definitions that the import uses.
#[derive(Default)]
pub(super) struct Globals {
    strings: HashMap<u32, String>,
    clock: Option<ClockProperties>,
    tree: HashMap<u32, SystemTreeNode>,
    pub(super) loc_groups: Vec<LocationGroup>,
    locations: Vec<Location>,
    regions: Vec<Region>,
    groups: HashMap<u32, GroupDef>,
    comms: Vec<Comm>,
    metric_members: HashMap<u32, MetricMember>,
    metric_classes: HashMap<u32, Vec<u32>>,
    params: HashMap<u32, u32>,
    attrs: HashMap<u32, u32>,
}

impl GlobalDefs for Globals {
    fn string(&mut self, id: u32, s: Cow<'_, str>) {
        self.strings.insert(id, s.into_owned());
    }
    fn clock_properties(&mut self, c: ClockProperties) {
        self.clock = Some(c);
    }
    fn system_tree_node(&mut self, n: SystemTreeNode) {
        self.tree.insert(n.id, n);
    }
    fn location_group(&mut self, g: LocationGroup) {
        self.loc_groups.push(g);
    }
    fn location(&mut self, l: Location) {
        self.locations.push(l);
    }
    fn region(&mut self, r: Region) {
        self.regions.push(r);
    }
    fn group(&mut self, g: Group<'_>) {
        let def = GroupDef {
            kind: g.kind,
            paradigm: g.paradigm,
            members: g.members.to_vec(),
        };
        self.groups.insert(g.id, def);
    }
    fn comm(&mut self, c: Comm) {
        self.comms.push(c);
    }
    fn metric_member(&mut self, m: MetricMember) {
        self.metric_members.insert(m.id, m);
    }
    fn metric_class(&mut self, c: MetricClass<'_>) {
        self.metric_classes.insert(c.id, c.members.to_vec());
    }
    fn parameter(&mut self, p: Parameter) {
        self.params.insert(p.id, p.name);
    }
    fn attribute(&mut self, a: Attribute) {
        self.attrs.insert(a.id, a.name);
    }
}

/// A location that becomes a Parallax thread.
#[derive(Clone, Copy)]
pub(super) struct Thread {
    pub(super) loc: LocationRef,
    pub(super) rank: u32,
    pub(super) thread: u32,
}

/// What a parameter means to the import.
#[derive(Clone, Copy)]
pub(super) enum Param {
    /// One of `EVENT_PARAMS`.
    Event(usize),
    /// A mark.
    Mark(u32),
}

/// The archive's clock as Parallax sees it.
pub(super) struct Clock {
    /// ns since the Unix epoch at the trace's start, or 0.
    unix0: u64,
    /// The trace's length in ns.
    pub(super) span_ns: u64,
}

impl Clock {
    /// The end of the trace, ns since the Unix epoch, or 0.
    fn end_unix_ns(&self) -> u64 {
        if self.unix0 > 0 {
            self.unix0 + self.span_ns
        } else {
            0
        }
    }
}

/// What the events' reader needs of the definitions.
pub(super) struct EventMaps {
    pub(super) params: HashMap<u32, Param>,
    /// Each metric class's members and their value types.
    pub(super) metric_classes: HashMap<u32, Vec<(u32, u8)>>,
    /// The refs of the `ATTRIBUTES`, in order.
    pub(super) attrs: Vec<Option<u32>>,
}

impl Globals {
    pub(super) fn s(&self, r: u32) -> String {
        self.strings.get(&r).cloned().unwrap_or_default()
    }

    /// Orders location groups and locations by ref, as ranks and threads
    /// are numbered.
    pub(super) fn sort(&mut self) {
        self.loc_groups.sort_by_key(|g| (g.id, g.name, g.parent));
        self.locations
            .sort_by_key(|l| (l.id, l.name, l.kind, l.group));
    }

    /// The locations that hold a thread's events: rank = its group's
    /// position, thread = its position in the group.
    pub(super) fn threads(&self) -> Vec<Thread> {
        let rank_of: HashMap<u32, u32> = self
            .loc_groups
            .iter()
            .enumerate()
            .map(|(i, lg)| (lg.id, i as u32))
            .collect();
        let mut threads = Vec::new();
        let mut per_rank: HashMap<u32, u32> = HashMap::new();
        for l in &self.locations {
            if l.kind == 3 {
                continue; // metric locations hold no events of a thread
            }
            let Some(&rank) = rank_of.get(&l.group) else {
                continue;
            };
            let th = per_rank.entry(rank).or_insert(0);
            threads.push(Thread {
                loc: l.id,
                rank,
                thread: *th,
            });
            *th += 1;
        }
        threads
    }

    /// The clock definitions of every process, and the clock.
    pub(super) fn clock(&self) -> (Vec<Def>, Clock) {
        let c = self.clock.unwrap_or(ClockProperties {
            resolution: 1_000_000_000,
            offset: 0,
            length: 0,
            realtime: f::UNDEFINED_U64,
        });
        let res = if c.resolution == 0 {
            1_000_000_000
        } else {
            c.resolution
        };
        let base_ns = 1_000_000_000u64;
        let unix0 = if c.realtime == f::UNDEFINED_U64 {
            0
        } else {
            c.realtime
        };
        let clock = Clock {
            unix0,
            span_ns: (c.length as f64 * 1e9 / res as f64) as u64,
        };
        let mut defs = vec![
            Def::Clock {
                source: ClockSource::Monotonic,
                nominal_hz: res as f64,
            },
            Def::ClockSync {
                tick: c.offset,
                mono_ns: base_ns,
                unix_ns: unix0,
            },
        ];
        if c.length > 0 {
            defs.push(Def::ClockSync {
                tick: c.offset + c.length,
                mono_ns: base_ns + clock.span_ns,
                unix_ns: clock.end_unix_ns(),
            });
        }
        (defs, clock)
    }

    /// The definitions every process shares after the clock's:
    /// calibrations, regions, marks, metrics and communicators.
    pub(super) fn common_defs(
        &self,
        threads: &[Thread],
        opts: &ImportOptions,
        defs: &mut Vec<Def>,
    ) -> EventMaps {
        if let Some(c) = opts.probe_cost_ns {
            for probe in [Probe::Enter, Probe::Leave, Probe::Event] {
                defs.push(Def::Calibration {
                    probe,
                    mode: Mode::Trace,
                    mean_ns: c,
                    sd_ns: 0.0,
                    min_ns: c,
                    samples: 1,
                    tick: 0,
                });
            }
        }
        for r in &self.regions {
            let name = self.s(r.name);
            let kind = region_kind(&name, &self.s(r.description), r.role, r.paradigm);
            defs.push(Def::Region {
                id: r.id,
                kind,
                name,
                file: if r.file == f::UNDEFINED_U32 {
                    String::new()
                } else {
                    self.s(r.file)
                },
                line: r.begin_line,
            });
        }
        let params = self.params(defs);
        for (&m, member) in &self.metric_members {
            defs.push(Def::Metric {
                id: m,
                name: self.s(member.name),
                unit: self.s(member.unit),
            });
        }
        self.comm_groups(threads, defs);
        let metric_classes = self
            .metric_classes
            .iter()
            .map(|(&c, ms)| {
                let typed = ms
                    .iter()
                    .map(|m| {
                        let ty = self
                            .metric_members
                            .get(m)
                            .map_or(f::TYPE_INT64, |x| x.value_type);
                        (*m, ty)
                    })
                    .collect();
                (c, typed)
            })
            .collect();
        let attrs = ATTRIBUTES.iter().map(|a| self.attribute(a)).collect();
        EventMaps {
            params,
            metric_classes,
            attrs,
        }
    }

    /// What each parameter means; a mark's region definition for each
    /// parameter not of `EVENT_PARAMS`.
    fn params(&self, defs: &mut Vec<Def>) -> HashMap<u32, Param> {
        let mut params = HashMap::new();
        for (&p, &name) in &self.params {
            let name = self.s(name);
            match EVENT_PARAMS.iter().position(|x| *x == name) {
                Some(i) => {
                    params.insert(p, Param::Event(i));
                }
                None => {
                    params.insert(p, Param::Mark(MARK_BASE + p));
                    defs.push(Def::Region {
                        id: MARK_BASE + p,
                        kind: RegionKind::Mark,
                        name,
                        file: String::new(),
                        line: 0,
                    });
                }
            }
        }
        params
    }

    /// Communicators as groups of ranks: COMM_GROUP members index the
    /// COMM_LOCATIONS group of the same paradigm.
    fn comm_groups(&self, threads: &[Thread], defs: &mut Vec<Def>) {
        for c in &self.comms {
            let Some(group) = self.groups.get(&c.group) else {
                continue;
            };
            let locs = self
                .groups
                .values()
                .find(|x| x.kind == f::GROUP_TYPE_COMM_LOCATIONS && x.paradigm == group.paradigm)
                .map(|x| x.members.clone())
                .unwrap_or_default();
            let members: Vec<u32> = match group.kind {
                f::GROUP_TYPE_COMM_GROUP => group
                    .members
                    .iter()
                    .filter_map(|&i| locs.get(i as usize))
                    .filter_map(|l| threads.iter().find(|x| x.loc == *l))
                    .map(|x| {
                        if group.paradigm == f::PARADIGM_MPI {
                            x.rank
                        } else {
                            x.thread
                        }
                    })
                    .collect(),
                f::GROUP_TYPE_COMM_SELF => Vec::new(),
                _ => continue,
            };
            defs.push(Def::Group {
                id: c.id as u64,
                members,
            });
        }
    }

    /// The ref of the attribute named `name`.
    fn attribute(&self, name: &str) -> Option<u32> {
        self.attrs
            .iter()
            .find(|(_, &n)| self.strings.get(&n).is_some_and(|s| s == name))
            .map(|(&r, _)| r)
    }

    /// The definitions of process `rank` (location group `lg`).
    pub(super) fn process_defs(
        &self,
        rank: u32,
        lg: &LocationGroup,
        threads: &[Thread],
        common: &[Def],
        clock: &Clock,
        program: &Program,
    ) -> Vec<Def> {
        let host = self
            .tree
            .get(&lg.parent)
            .map_or("unknown".to_string(), |n| self.s(n.name));
        let mut defs = vec![Def::Process(ProcessInfo {
            rank,
            ranks: self.loc_groups.len() as u32,
            pid: 0,
            host,
            program: program.name.clone(),
            args: program.args.clone(),
            start_unix_ns: clock.unix0,
            mode: Mode::Trace,
            version: env!("CARGO_PKG_VERSION").to_string(),
        })];
        defs.extend(common.iter().cloned());
        defs.push(Def::Property {
            key: "otf2.location_group".into(),
            value: self.s(lg.name),
        });
        // Times are the archive's ticks: say so where a run would name
        // its clock.
        defs.push(Def::Property {
            key: CLOCK_PROPERTY.into(),
            value: "the OTF2 archive's timer".into(),
        });
        if let Some(status) = program.exit_status {
            defs.push(Def::Property {
                key: "otf2.exit_status".into(),
                value: status.to_string(),
            });
        }
        for t in threads.iter().filter(|t| t.rank == rank) {
            let name = self
                .locations
                .iter()
                .find(|x| x.id == t.loc)
                .map_or(String::new(), |x| thread_name(&self.s(x.name)));
            defs.push(Def::Location {
                thread: t.thread,
                name,
                os_tid: 0,
            });
        }
        defs.push(Def::End {
            unix_ns: clock.end_unix_ns(),
        });
        defs
    }
}
