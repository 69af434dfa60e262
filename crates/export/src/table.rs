//! Call-path profiles as tables (CSV, JSON records) and as a Hatchet
//! literal tree.
//!
//! One row per (location, call path), or per call path with `--merged`.
//! Columns: `rank`, `thread`, `location`, `depth`, `path` (frames joined
//! by `;`), `region`, `kind`, `category`, `count`, `inclusive_ns`,
//! `exclusive_ns`, `min_ns`, `max_ns`, `mean_ns`, `sd_ns`, `locations`,
//! `id` (the row's number in the file, from 0) and `parent` (the row
//! number of its parent; empty at the top). `pandas.read_csv(path)` and
//! `pandas.read_json(path)` read them in one call; merged rows have empty
//! (null) rank and thread. Text cells that a spreadsheet would take for a
//! formula are written as text (see [`csv`]).
//!
//! Every row's `path` repeats the frames above it, which would make the
//! file quadratic in the depth of the call tree: a path deeper than
//! [`PATH_FRAMES`] frames shows its outermost and innermost frames with
//! `…` between them (`id` and `parent` give the whole tree), and a frame
//! shows at most [`FRAME_BYTES`] bytes of its name. Rows are
//! written as they are made, and the Hatchet tree as it is walked, without
//! recursion.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use parallax_model::experiment::{shortened, Experiment};
use parallax_model::region::RegionKind;
use parallax_view::profile::{ExperimentProfile, PathRow};
use serde_json::json;

use crate::{Error, Format, Options, Summary};

use parallax_output::file::Kind;

/// The first line of a CSV profile.
const CSV_HEADER: &str = "rank,thread,location,depth,path,region,kind,category,count,inclusive_ns,exclusive_ns,min_ns,max_ns,mean_ns,sd_ns,locations,id,parent";

fn kind(format: Format) -> Kind {
    const CSV: &[&[u8]] = &[CSV_HEADER.as_bytes()];
    // Records' keys come sorted (or in the order written).
    const JSON: &[&[u8]] = &[b"[\n{\"category\":", b"[\n{\"rank\":", b"[\n]"];
    match format {
        Format::Csv => Kind::starting_with("a CSV profile", CSV),
        Format::Json => Kind::starting_with("a JSON profile", JSON),
        _ => Kind::recognised_by("a Hatchet tree", is_hatchet),
    }
}

/// A Hatchet literal: an array whose first node, after any nesting of
/// first children, has a frame (or an empty array).
fn is_hatchet(head: &[u8]) -> bool {
    let text: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let Some(mut rest) = text.strip_prefix(b"[") else {
        return false;
    };
    while let Some(r) = rest.strip_prefix(b"{\"children\":[") {
        rest = r;
    }
    rest.is_empty() || rest.starts_with(b"{\"frame\":") || rest.starts_with(b"]")
}

/// Frames shown in a row's `path` at most.
pub const PATH_FRAMES: usize = 64;

/// Bytes of a region name shown in a `path` (or a folded line) at most.
pub const FRAME_BYTES: usize = 256;

/// The location a group of call paths belongs to.
pub struct GroupOf {
    /// A label for people: `rank 0 thread 1 (worker)`.
    pub label: String,
    /// Rank, thread and thread name.
    pub rank: u32,
    /// Thread number.
    pub thread: u32,
    /// Thread name, may be empty.
    pub name: String,
}

/// A group of call paths in tree order (see [`PathRow`]): one location's
/// (with its location), or merged over the selected locations (`None`).
pub type Group = (Option<GroupOf>, Vec<PathRow>);

/// The call paths of the selected locations: one group per location, or
/// one merged group with `--merged`.
pub fn selected_profiles(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
) -> Result<Vec<Group>, Error> {
    // Fails for a selection naming no location.
    let locs = parallax_view::trace::selected(exp, &opts.selection)?;
    if opts.merged {
        let rows = prof.paths_where(exp, |l| opts.selection.contains(l.rank, l.thread));
        return Ok(vec![(None, rows)]);
    }
    let mut groups = Vec::new();
    for (i, l) in prof.locations.iter().enumerate() {
        if !opts.selection.contains(l.rank, l.thread) {
            continue;
        }
        let label = locs
            .iter()
            .find(|x| x.rank == l.rank && x.thread == l.thread)
            .map(|x| x.label())
            .unwrap_or_else(|| format!("rank {} thread {}", l.rank, l.thread));
        let of = GroupOf {
            label,
            rank: l.rank,
            thread: l.thread,
            name: l.name.clone(),
        };
        groups.push((Some(of), prof.paths_location(exp, i)));
    }
    Ok(groups)
}

/// The frames of the path being walked: rows come in tree order, so the
/// path of each row is its parent's plus its own region.
#[derive(Default)]
struct Frames<'a> {
    names: Vec<&'a str>,
}

impl<'a> Frames<'a> {
    /// Moves to `row`, the next row in tree order.
    fn visit(&mut self, row: &'a PathRow) {
        self.names.truncate(row.depth);
        self.names.push(&row.region);
    }

    /// The path joined by `sep`, at most [`PATH_FRAMES`] frames of at
    /// most [`FRAME_BYTES`] bytes each: the outermost and innermost halves
    /// with `…` between when deeper.
    fn joined(&self, sep: &str) -> String {
        let n = self.names.len();
        let frame = |f: &&str| shortened(f, FRAME_BYTES);
        let mut parts: Vec<String> = Vec::with_capacity(n.min(PATH_FRAMES));
        if n <= PATH_FRAMES {
            parts.extend(self.names.iter().map(frame));
        } else {
            let head = PATH_FRAMES / 2;
            let tail = PATH_FRAMES - head - 1;
            parts.extend(self.names[..head].iter().map(frame));
            parts.push("…".to_string());
            parts.extend(self.names[n - tail..].iter().map(frame));
        }
        parts.join(sep)
    }
}

/// Region kinds by name as shown, over all processes (first definition
/// wins).
fn kinds(exp: &Experiment) -> BTreeMap<String, RegionKind> {
    let mut m = BTreeMap::new();
    for p in &exp.processes {
        for (&id, r) in &p.regions {
            m.entry(p.region_name(id)).or_insert(r.kind);
        }
    }
    m
}

/// Writes a CSV, JSON or Hatchet profile.
pub fn export(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
    out: &Path,
) -> Result<Summary, Error> {
    let groups = selected_profiles(exp, prof, opts)?;
    let kinds = kinds(exp);
    let mut w = crate::create(out, kind(opts.format))?;
    let rows = match opts.format {
        Format::Csv => write_csv(&mut w, &groups, &kinds),
        Format::Json => write_json(&mut w, &groups, &kinds),
        _ => write_hatchet(&mut w, &groups, &kinds),
    }
    .map_err(|e| Error::io(out, e))?;
    crate::finish(w, out)?;
    Ok(Summary {
        rows,
        ..Summary::default()
    })
}

/// One row of a CSV or JSON profile.
struct Row<'r> {
    /// Its location (`None` when merged).
    of: Option<&'r GroupOf>,
    path: &'r PathRow,
    /// The frames down to it.
    frames: &'r Frames<'r>,
    kind: Option<&'r RegionKind>,
    /// Its number in the file, and its parent's.
    id: u64,
    parent: Option<u64>,
}

/// Calls `f` with every row of `groups` in file order; returns how many.
fn for_each_row(
    groups: &[Group],
    kinds: &BTreeMap<String, RegionKind>,
    mut f: impl FnMut(&Row) -> std::io::Result<()>,
) -> std::io::Result<u64> {
    let mut rows = 0u64;
    for (of, group) in groups {
        // A group's parents are numbered within it.
        let first = rows;
        let mut frames = Frames::default();
        for r in group {
            frames.visit(r);
            f(&Row {
                of: of.as_ref(),
                path: r,
                frames: &frames,
                kind: kinds.get(&r.region),
                id: rows,
                parent: r.parent.map(|p| first + p as u64),
            })?;
            rows += 1;
        }
    }
    Ok(rows)
}

/// Writes the rows of `groups` as CSV; returns how many.
fn write_csv(
    w: &mut impl Write,
    groups: &[Group],
    kinds: &BTreeMap<String, RegionKind>,
) -> std::io::Result<u64> {
    writeln!(w, "{CSV_HEADER}")?;
    for_each_row(groups, kinds, |row| {
        match row.of {
            Some(g) => write!(w, "{},{},{},", g.rank, g.thread, csv(&g.name))?,
            None => w.write_all(b",,,")?,
        }
        let (r, t) = (row.path, &row.path.times);
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.depth,
            csv(&row.frames.joined(";")),
            csv(&r.region),
            row.kind.map_or("", |k| k.name()),
            row.kind.map_or("", |k| k.category().name()),
            t.count,
            num(t.inclusive),
            num(t.exclusive),
            num(t.min),
            num(t.max),
            num(t.mean()),
            num(t.std_dev()),
            r.locations,
            row.id,
            row.parent.map_or(String::new(), |p| p.to_string()),
        )
    })
}

/// Writes the rows of `groups` as an array of JSON records, one by one;
/// returns how many.
fn write_json(
    w: &mut impl Write,
    groups: &[Group],
    kinds: &BTreeMap<String, RegionKind>,
) -> std::io::Result<u64> {
    w.write_all(b"[")?;
    let rows = for_each_row(groups, kinds, |row| {
        let (r, t) = (row.path, &row.path.times);
        let v = json!({
            "rank": row.of.map(|g| g.rank),
            "thread": row.of.map(|g| g.thread),
            "location": row.of.map_or("", |g| g.name.as_str()),
            "depth": r.depth,
            "path": row.frames.joined(";"),
            "region": r.region,
            "kind": row.kind.map(|k| k.name()),
            "category": row.kind.map(|k| k.category().name()),
            "count": t.count,
            "inclusive_ns": t.inclusive,
            "exclusive_ns": t.exclusive,
            "min_ns": t.min,
            "max_ns": t.max,
            "mean_ns": t.mean(),
            "sd_ns": t.std_dev(),
            "locations": r.locations,
            "id": row.id,
            "parent": row.parent,
        });
        if row.id > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"\n")?;
        serde_json::to_writer(&mut *w, &v).map_err(std::io::Error::other)
    })?;
    w.write_all(b"\n]\n")?;
    Ok(rows)
}

/// Writes `groups` as a Hatchet literal: a node per location above its
/// call tree, or the merged trees; returns the number of call paths.
fn write_hatchet(
    w: &mut impl Write,
    groups: &[Group],
    kinds: &BTreeMap<String, RegionKind>,
) -> std::io::Result<u64> {
    let mut rows = 0u64;
    w.write_all(b"[")?;
    let mut first = true;
    for (of, group) in groups {
        rows += group.len() as u64;
        if !first {
            w.write_all(b",")?;
        }
        match of {
            Some(g) => {
                first = false;
                let inc: f64 = group
                    .iter()
                    .filter(|r| r.depth == 0)
                    .map(|r| r.times.inclusive)
                    .sum();
                let head = json!({
                    "frame": {"name": g.label, "type": "location"},
                    "metrics": {"time (inc)": inc, "time": 0.0, "count": 0},
                });
                write_open(w, &head)?;
                w.write_all(b",\"children\":[")?;
                hatchet_tree(w, group, kinds)?;
                w.write_all(b"]}")?;
            }
            None => {
                first = group.is_empty();
                hatchet_tree(w, group, kinds)?;
            }
        }
    }
    w.write_all(b"\n]\n")?;
    Ok(rows)
}

/// Writes a JSON object without its closing brace, so that a `children`
/// member can follow.
fn write_open(w: &mut impl Write, v: &serde_json::Value) -> std::io::Result<()> {
    let s = serde_json::to_string(v).map_err(std::io::Error::other)?;
    w.write_all(b"\n")?;
    w.write_all(&s.as_bytes()[..s.len() - 1])
}

/// Writes `rows` (tree order) as the nested nodes of Hatchet's literal
/// format, `{frame, metrics, children}` separated by commas, one node per
/// line and no indentation (which would be quadratic in the depth).
fn hatchet_tree(
    w: &mut impl Write,
    rows: &[PathRow],
    kinds: &BTreeMap<String, RegionKind>,
) -> std::io::Result<()> {
    // Per open node: whether its `children` array has been opened.
    let mut open: Vec<bool> = Vec::new();
    let close = |w: &mut dyn Write, had_children: bool| -> std::io::Result<()> {
        w.write_all(if had_children { b"]}" } else { b"}" })
    };
    for (i, r) in rows.iter().enumerate() {
        while open.len() > r.depth {
            let had = open.pop().expect("an open node");
            close(w, had)?;
        }
        match open.last_mut() {
            Some(children) if !*children => {
                *children = true;
                w.write_all(b",\"children\":[")?;
            }
            Some(_) => w.write_all(b",")?,
            None if i > 0 => w.write_all(b",")?,
            None => {}
        }
        let v = json!({
            "frame": {"name": r.region, "type": kinds.get(&r.region).map_or("region", |k| k.name())},
            "metrics": {"time (inc)": r.times.inclusive, "time": r.times.exclusive, "count": r.times.count},
        });
        write_open(w, &v)?;
        open.push(false);
    }
    while let Some(had) = open.pop() {
        close(w, had)?;
    }
    Ok(())
}

/// A text field of the CSV, quoted when needed. A spreadsheet reads a
/// cell starting with `=`, `+`, `-` or `@` (or a tab or carriage return
/// before one) as a formula: such a name gets a leading `'`, which makes
/// it text, and is quoted. Numbers are written by [`num`] and stay
/// numbers.
fn csv(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number in ns, with at most three decimals.
fn num(v: f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    format!("{r}")
}
