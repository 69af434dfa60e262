//! Folded stacks and SVG flame graphs from call-path profiles.
//!
//! A folded line is a call path, frames joined by `;`, a space, and the
//! path's exclusive time in integer nanoseconds: the input of every flame
//! graph tool. Without `--merged` each location's paths sit below a root
//! frame naming the location; with it, paths are summed over the selected
//! locations.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use parallax_analysis::profile::ExperimentProfile;
use parallax_model::experiment::Experiment;

use crate::table::{selected_profiles, PathTimes};
use crate::{Error, Format, Options, Summary};

use parallax_output::file::Kind;

/// Folded stacks: every line a path, a space and a count.
const FOLDED: Kind = Kind::recognised_by("folded stacks", is_folded);

fn is_folded(head: &[u8]) -> bool {
    // The complete lines of the head (the last may be cut).
    let Some(end) = head.iter().rposition(|&b| b == b'\n') else {
        return false;
    };
    head[..end].split(|&b| b == b'\n').all(|l| {
        l.iter()
            .rposition(|&b| b == b' ')
            .is_some_and(|s| s > 0 && s + 1 < l.len() && l[s + 1..].iter().all(u8::is_ascii_digit))
    })
}

fn kind(format: Format) -> Kind {
    if format == Format::Svg {
        Kind::SVG
    } else {
        FOLDED
    }
}

/// Writes folded stacks or an SVG flame graph.
pub fn export(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
    out: &Path,
) -> Result<Summary, Error> {
    let lines = folded_lines(exp, prof, opts)?;
    let mut w = crate::create(out, kind(opts.format))?;
    let io = |e| Error::io(out, e);
    if opts.format == Format::Svg {
        let mut o = inferno::flamegraph::Options::default();
        o.title = format!(
            "Parallax: {}",
            parallax_output::text::inert(&exp.dir.to_string_lossy())
        );
        o.count_name = "ns".to_string();
        o.name_type = "Region:".to_string();
        if lines.is_empty() {
            // inferno refuses an empty input; an empty profile is still a
            // valid (empty) flame graph.
            writeln!(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"60\"><text x=\"10\" y=\"30\">no samples</text></svg>").map_err(io)?;
        } else {
            inferno::flamegraph::from_lines(&mut o, lines.iter().map(String::as_str), &mut w)
                .map_err(io)?;
        }
    } else {
        for l in &lines {
            writeln!(w, "{l}").map_err(io)?;
        }
    }
    crate::finish(w, out)?;
    Ok(Summary {
        rows: lines.len() as u64,
        ..Summary::default()
    })
}

/// The folded lines, sorted.
pub fn folded_lines(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
) -> Result<Vec<String>, Error> {
    let mut paths: BTreeMap<Vec<String>, f64> = BTreeMap::new();
    for (label, rows) in selected_profiles(exp, prof, opts)? {
        for PathTimes { path, times, .. } in rows {
            let mut p = Vec::with_capacity(path.len() + 1);
            if let Some(l) = &label {
                p.push(l.clone());
            }
            p.extend(path);
            *paths.entry(p).or_insert(0.0) += times.exclusive;
        }
    }
    Ok(paths
        .into_iter()
        .filter(|(_, v)| v.round() >= 1.0)
        .map(|(p, v)| {
            let frames: Vec<String> = p.iter().map(|f| frame(f)).collect();
            format!("{} {}", frames.join(";"), v.round() as u64)
        })
        .collect())
}

/// A frame name that cannot break the folded syntax, nor a terminal or an
/// SVG file: `;` separates frames, and control characters are written
/// visibly ([`parallax_output::text::inert`]).
fn frame(s: &str) -> String {
    parallax_output::text::inert(s).replace(';', ":")
}
