//! Folded stacks and SVG flame graphs from call-path profiles.
//!
//! A folded line is a call path, frames joined by `;`, a space, and the
//! path's exclusive time in integer nanoseconds: the input of every flame
//! graph tool. Without `--merged` each location's paths sit below a root
//! frame naming the location; with it, paths are summed over the selected
//! locations.
//!
//! Every line spells out its whole path, so the output grows with the
//! square of the depth of a call tree: frames deeper than [`MAX_DEPTH`]
//! are not shown; their time is counted in one frame `…` below the
//! deepest frame shown.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use parallax_analysis::profile::ExperimentProfile;
use parallax_model::experiment::Experiment;

use crate::table::{selected_profiles, Frames};
use crate::{Error, Format, Options, Summary};

/// Frames of a call path shown at most (the location's frame included).
pub const MAX_DEPTH: usize = 256;

/// Writes folded stacks or an SVG flame graph.
pub fn export(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
    out: &Path,
) -> Result<Summary, Error> {
    let lines = folded_lines(exp, prof, opts)?;
    let mut w = crate::create(out)?;
    let io = |e| Error::io(out, e);
    if opts.format == Format::Svg {
        let mut o = inferno::flamegraph::Options::default();
        o.title = format!("Parallax: {}", exp.dir.display());
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
    w.flush().map_err(io)?;
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
    let mut lines: BTreeMap<String, f64> = BTreeMap::new();
    for (of, rows) in selected_profiles(exp, prof, opts)? {
        let label = of.map(|g| frame(&g.label));
        // Frames of the region's own path shown: one fewer below a label.
        let shown = MAX_DEPTH - label.is_some() as usize;
        let mut frames = Frames::default();
        for r in &rows {
            frames.visit(r);
            let all = frames.all();
            let (path, deeper) = if all.len() > shown {
                (&all[..shown - 1], true)
            } else {
                (all, false)
            };
            let mut line = String::new();
            if let Some(l) = &label {
                line.push_str(l);
            }
            for f in path {
                if !line.is_empty() {
                    line.push(';');
                }
                line.push_str(&frame(f));
            }
            if deeper {
                line.push_str(";…");
            }
            *lines.entry(line).or_insert(0.0) += r.times.exclusive;
        }
    }
    Ok(lines
        .into_iter()
        .filter(|(_, v)| v.round() >= 1.0)
        .map(|(p, v)| format!("{p} {}", v.round() as u64))
        .collect())
}

/// A frame name that cannot break the folded syntax.
fn frame(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            ';' => ':',
            '\n' | '\r' | '\t' => ' ',
            c => c,
        })
        .collect()
}
