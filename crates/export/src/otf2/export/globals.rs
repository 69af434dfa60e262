//! The global definitions of an exported archive: clock, strings, system
//! tree, locations, regions, groups, communicators, the one-sided window,
//! metrics, parameters and attributes, in that order.

use std::collections::HashMap;

use parallax_model::experiment::Experiment;

use super::{loc_ref, Defs, EventTotals, ATTRIBUTES};
use crate::otf2::libotf2::consts as c;
use crate::otf2::libotf2::{
    Attribute, ClockProperties, Comm, GlobalDefWriter, Group, Location, LocationGroup, MetricClass,
    MetricMember, Otf2Error, Parameter, Region, StringRef, SystemTreeNode,
};
use crate::Error;
use parallax_view::trace::Loc;

/// A process's location group.
struct RankGroup {
    rank: u32,
    name: StringRef,
    /// Its host's system tree node.
    node: u32,
}

/// A Parallax communicator's OTF2 comm.
struct CommName {
    comm: u64,
    id: u32,
    name: StringRef,
}

/// A parameter and its name.
struct ParamName {
    name: String,
    id: u32,
    string: StringRef,
}

/// The string refs of the definitions' names, interned before any is
/// written.
struct Names {
    machine: StringRef,
    node_class: StringRef,
    hosts: Vec<StringRef>,
    rank_groups: Vec<RankGroup>,
    locations: Vec<StringRef>,
    mpi_locations: StringRef,
    pthread_locations: StringRef,
    comms: Vec<CommName>,
    /// The thread contingent of each process.
    thread_comms: Vec<StringRef>,
    window: StringRef,
    /// Name and unit of each metric.
    metrics: Vec<(StringRef, StringRef)>,
    params: Vec<ParamName>,
    attributes: Vec<StringRef>,
    empty: StringRef,
}

/// A Parallax communicator's comm definition.
struct CommGroup {
    id: u32,
    name: StringRef,
    group: u32,
}

/// The groups the communicators use.
struct GroupRefs {
    /// Each process's thread group, by process index.
    threads: Vec<u32>,
    comms: Vec<CommGroup>,
}

/// Writes the global definitions.
pub(super) fn write(
    gw: &mut GlobalDefWriter,
    exp: &Experiment,
    locs: &[Loc],
    totals: &EventTotals,
    defs: &mut Defs,
) -> Result<(), Error> {
    let realtime = exp
        .processes
        .iter()
        .filter_map(|p| p.info.as_ref().map(|i| i.start_unix_ns))
        .filter(|&t| t > 0)
        .min()
        .unwrap_or(c::UNDEFINED_U64);
    let clock = ClockProperties {
        resolution: 1_000_000_000,
        offset: 0,
        length: totals.max_t + 1,
        realtime,
    };
    gw.clock_properties(&clock)
        .map_err(|e| e.during("clock properties"))?;
    // Names first, so that every string exists before it is referenced.
    let names = intern(exp, locs, defs);
    for (i, s) in defs.strings.list.iter().enumerate() {
        gw.string(i as u32, s).map_err(|e| e.during("string"))?;
    }
    write_system(gw, locs, totals, &names)?;
    write_regions(gw, defs)?;
    let groups = write_groups(gw, exp, locs, defs, &names)?;
    write_comms(gw, defs, &names, &groups)?;
    write_values(gw, &names)
}

/// Interns every name of the definitions, in the order of the records.
fn intern(exp: &Experiment, locs: &[Loc], defs: &mut Defs) -> Names {
    let s = &mut defs.strings;
    let machine = s.get("machine");
    let node_class = s.get("node");
    let (hosts, proc_node) = hosts(exp);
    let hosts = hosts.iter().map(|h| s.get(h)).collect();
    let rank_groups = exp
        .processes
        .iter()
        .map(|p| RankGroup {
            rank: p.rank,
            name: s.get(&format!("rank {}", p.rank)),
            node: proc_node[&p.rank],
        })
        .collect();
    let locations = locs.iter().map(|l| s.get(&l.thread_name())).collect();
    let mpi_locations = s.get("MPI locations");
    let pthread_locations = s.get("pthread locations");
    let mut comms: Vec<(u64, u32)> = defs.comms.iter().map(|(&c, &r)| (c, r)).collect();
    comms.sort_by_key(|x| x.1);
    let comms = comms
        .into_iter()
        .map(|(comm, id)| CommName {
            comm,
            id,
            name: s.get(&format!("comm {comm}")),
        })
        .collect();
    let thread_comms = exp
        .processes
        .iter()
        .map(|p| s.get(&format!("threads of rank {}", p.rank)))
        .collect();
    let window = s.get("parallax one-sided window");
    let metrics = defs
        .metric_names
        .iter()
        .map(|m| (s.get(&m.name), s.get(&m.unit)))
        .collect();
    let mut params: Vec<(&String, u32)> = defs.params.iter().map(|(k, &v)| (k, v)).collect();
    params.sort_by_key(|x| x.1);
    let params = params
        .into_iter()
        .map(|(name, id)| ParamName {
            name: name.clone(),
            id,
            string: s.get(name),
        })
        .collect();
    let attributes = ATTRIBUTES.iter().map(|a| s.get(a)).collect();
    let empty = s.get("");
    Names {
        machine,
        node_class,
        hosts,
        rank_groups,
        locations,
        mpi_locations,
        pthread_locations,
        comms,
        thread_comms,
        window,
        metrics,
        params,
        attributes,
        empty,
    }
}

/// The distinct hosts in process order, and each rank's system tree node
/// (1 + its host's index).
fn hosts(exp: &Experiment) -> (Vec<String>, HashMap<u32, u32>) {
    let mut hosts: Vec<String> = Vec::new();
    let mut proc_node: HashMap<u32, u32> = HashMap::new();
    for p in &exp.processes {
        let h = p
            .info
            .as_ref()
            .map_or("localhost".to_string(), |i| i.host.clone());
        let i = match hosts.iter().position(|x| *x == h) {
            Some(i) => i,
            None => {
                hosts.push(h);
                hosts.len() - 1
            }
        };
        proc_node.insert(p.rank, i as u32 + 1);
    }
    (hosts, proc_node)
}

/// The system tree (`machine` > one node per host), the location groups
/// (one per rank) and the locations.
fn write_system(
    gw: &mut GlobalDefWriter,
    locs: &[Loc],
    totals: &EventTotals,
    names: &Names,
) -> Result<(), Error> {
    let tree = |e: Otf2Error| e.during("system tree node");
    let machine = SystemTreeNode {
        id: 0,
        name: names.machine,
        class: names.machine,
        parent: c::UNDEFINED_U32,
    };
    gw.system_tree_node(&machine).map_err(tree)?;
    for (i, &name) in names.hosts.iter().enumerate() {
        let node = SystemTreeNode {
            id: i as u32 + 1,
            name,
            class: names.node_class,
            parent: 0,
        };
        gw.system_tree_node(&node).map_err(tree)?;
    }
    for g in &names.rank_groups {
        let group = LocationGroup {
            id: g.rank,
            name: g.name,
            kind: c::LOCATION_GROUP_TYPE_PROCESS,
            parent: g.node,
            creating_group: c::UNDEFINED_U32,
        };
        gw.location_group(&group)
            .map_err(|e| e.during("location group"))?;
    }
    for (i, l) in locs.iter().enumerate() {
        let location = Location {
            id: loc_ref(l),
            name: names.locations[i],
            kind: c::LOCATION_TYPE_CPU_THREAD,
            events: totals.counts[i],
            group: l.rank,
        };
        gw.location(&location).map_err(|e| e.during("location"))?;
    }
    Ok(())
}

fn write_regions(gw: &mut GlobalDefWriter, defs: &Defs) -> Result<(), Error> {
    for (i, r) in defs.regions.iter().enumerate() {
        let region = Region {
            id: i as u32,
            name: r.name,
            canonical_name: r.name,
            description: r.description,
            role: r.role,
            paradigm: r.paradigm,
            flags: 0,
            file: r.file,
            begin_line: r.line,
            end_line: r.line,
        };
        gw.region(&region).map_err(|e| e.during("region"))?;
    }
    Ok(())
}

/// A group of communicator members.
fn write_group(
    gw: &mut GlobalDefWriter,
    id: u32,
    name: StringRef,
    kind: u8,
    paradigm: u8,
    members: &[u64],
) -> Result<(), Error> {
    let group = Group {
        id,
        name,
        kind,
        paradigm,
        flags: 0,
        members,
    };
    gw.group(&group).map_err(|e| e.during("group"))
}

/// Groups: the MPI locations (first location of each rank, in rank order)
/// and communicator groups of ranks; the pthread locations and one group
/// per process of its threads.
fn write_groups(
    gw: &mut GlobalDefWriter,
    exp: &Experiment,
    locs: &[Loc],
    defs: &Defs,
    names: &Names,
) -> Result<GroupRefs, Error> {
    let ranks: Vec<u32> = exp.processes.iter().map(|p| p.rank).collect();
    let mut first_loc: Vec<(u32, u64)> = Vec::new();
    for l in locs {
        if !first_loc.iter().any(|x| x.0 == l.rank) {
            first_loc.push((l.rank, loc_ref(l)));
        }
    }
    for &r in &ranks {
        if !first_loc.iter().any(|x| x.0 == r) {
            first_loc.push((r, (r as u64) << 32));
        }
    }
    first_loc.sort();
    let rank_index: HashMap<u32, u64> = first_loc
        .iter()
        .enumerate()
        .map(|(i, x)| (x.0, i as u64))
        .collect();
    let mpi_members: Vec<u64> = first_loc.iter().map(|x| x.1).collect();
    let (comm_locations, comm_group) = (c::GROUP_TYPE_COMM_LOCATIONS, c::GROUP_TYPE_COMM_GROUP);
    let name = names.mpi_locations;
    write_group(gw, 0, name, comm_locations, c::PARADIGM_MPI, &mpi_members)?;
    let all_threads: Vec<u64> = locs.iter().map(loc_ref).collect();
    let name = names.pthread_locations;
    write_group(
        gw,
        1,
        name,
        comm_locations,
        c::PARADIGM_PTHREAD,
        &all_threads,
    )?;
    let mut next_group = 2u32;
    let mut refs = GroupRefs {
        threads: Vec::new(),
        comms: Vec::new(),
    };
    for cn in &names.comms {
        let (members, paradigm) = comm_members(cn.comm, exp, locs, defs, &rank_index);
        write_group(gw, next_group, cn.name, comm_group, paradigm, &members)?;
        refs.comms.push(CommGroup {
            id: cn.id,
            name: cn.name,
            group: next_group,
        });
        next_group += 1;
    }
    for (pi, p) in exp.processes.iter().enumerate() {
        let members: Vec<u64> = locs
            .iter()
            .enumerate()
            .filter(|(_, l)| l.rank == p.rank)
            .map(|(i, _)| i as u64)
            .collect();
        let name = names.thread_comms[pi];
        write_group(
            gw,
            next_group,
            name,
            comm_group,
            c::PARADIGM_PTHREAD,
            &members,
        )?;
        refs.threads.push(next_group);
        next_group += 1;
    }
    Ok(refs)
}

/// The members of communicator `comm`'s group (indices into the MPI or
/// pthread locations) and its paradigm. A communicator used by several
/// threads of one rank only (and not defined as a group of ranks) is a
/// team of threads, such as a barrier's: its members are those threads.
fn comm_members(
    comm: u64,
    exp: &Experiment,
    locs: &[Loc],
    defs: &Defs,
    rank_index: &HashMap<u32, u64>,
) -> (Vec<u64>, u8) {
    let users = defs.comm_users.get(&comm);
    let defined = exp.processes.iter().find_map(|p| p.groups.get(&comm));
    let team = comm != 0
        && defined.is_none()
        && users
            .is_some_and(|u| u.len() > 1 && u.iter().all(|x| x.0 == u.iter().next().unwrap().0));
    if let (true, Some(u)) = (team, users) {
        let m = locs
            .iter()
            .enumerate()
            .filter(|(_, l)| u.contains(&(l.rank, l.thread)))
            .map(|(i, _)| i as u64)
            .collect();
        return (m, c::PARADIGM_PTHREAD);
    }
    let m = match defined {
        Some(m) => m
            .iter()
            .filter_map(|r| rank_index.get(r).copied())
            .collect(),
        None => (0..rank_index.len() as u64).collect(),
    };
    (m, c::PARADIGM_MPI)
}

/// Communicators: one thread contingent per process (ref = process index),
/// then the Parallax communicators; the one-sided window if used.
fn write_comms(
    gw: &mut GlobalDefWriter,
    defs: &Defs,
    names: &Names,
    groups: &GroupRefs,
) -> Result<(), Error> {
    let contingents = groups.threads.iter().enumerate();
    let parallax = groups.comms.iter().map(|c| (c.id, c.name, c.group));
    let all = contingents
        .map(|(pi, &group)| (pi as u32, names.thread_comms[pi], group))
        .chain(parallax);
    for (id, name, group) in all {
        let comm = Comm {
            id,
            name,
            group,
            parent: c::UNDEFINED_U32,
            flags: 0,
        };
        gw.comm(&comm).map_err(|e| e.during("comm"))?;
    }
    if defs.uses_rma {
        gw.rma_win(0, names.window, defs.comm_base, 0)
            .map_err(|e| e.during("rma window"))?;
    }
    Ok(())
}

/// Metrics (one class per member), parameters and attributes.
fn write_values(gw: &mut GlobalDefWriter, names: &Names) -> Result<(), Error> {
    for (i, &(name, unit)) in names.metrics.iter().enumerate() {
        let member = MetricMember {
            id: i as u32,
            name,
            description: names.empty,
            kind: c::METRIC_TYPE_USER,
            mode: c::METRIC_ABSOLUTE_POINT,
            value_type: c::TYPE_INT64,
            base: c::BASE_DECIMAL,
            exponent: 0,
            unit,
        };
        gw.metric_member(&member)
            .map_err(|e| e.during("metric member"))?;
        let class = MetricClass {
            id: i as u32,
            members: &[i as u32],
            occurrence: c::METRIC_ASYNCHRONOUS,
            recorder_kind: c::RECORDER_KIND_CPU,
        };
        gw.metric_class(&class)
            .map_err(|e| e.during("metric class"))?;
    }
    for p in &names.params {
        let kind = if p.name.starts_with("parallax:") {
            c::PARAMETER_TYPE_UINT64
        } else {
            c::PARAMETER_TYPE_INT64
        };
        let param = Parameter {
            id: p.id,
            name: p.string,
            kind,
        };
        gw.parameter(&param).map_err(|e| e.during("parameter"))?;
    }
    for (i, &name) in names.attributes.iter().enumerate() {
        let attribute = Attribute {
            id: i as u32,
            name,
            description: names.empty,
            kind: c::TYPE_UINT64,
        };
        gw.attribute(&attribute)
            .map_err(|e| e.during("attribute"))?;
    }
    Ok(())
}
