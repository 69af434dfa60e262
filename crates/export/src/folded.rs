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

use parallax_model::experiment::{shortened, Experiment};
use parallax_view::profile::ExperimentProfile;

use crate::table::{selected_profiles, FRAME_BYTES};
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
    let mut w = crate::create(out, kind(opts.format))?;
    let io = |e| Error::io(out, e);
    if opts.format == Format::Svg {
        let mut o = inferno::flamegraph::Options::default();
        o.title = format!(
            "Parallax: {}",
            parallax_output::text::inert(&exp.dir.to_string_lossy())
        );
        o.name_type = "Region:".to_string();
        // The flame graph tool sums the counts in 64 bits: a damaged
        // profile's times could overflow it. Scaled down, the picture is
        // the same.
        let total: u128 = lines.iter().map(|l| l.1 as u128).sum();
        let mut scale = 0u32;
        while total >> scale > 1 << 53 {
            scale += 1;
        }
        o.count_name = if scale == 0 {
            "ns".to_string()
        } else {
            format!("× 2^{scale} ns")
        };
        let scaled: Vec<String> = lines
            .iter()
            .filter(|l| l.1 >> scale > 0)
            .map(|(p, v)| format!("{p} {}", v >> scale))
            .collect();
        if scaled.is_empty() {
            // inferno refuses an empty input; an empty profile is still a
            // valid (empty) flame graph.
            writeln!(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"60\"><text x=\"10\" y=\"30\">no samples</text></svg>").map_err(io)?;
        } else {
            inferno::flamegraph::from_lines(&mut o, scaled.iter().map(String::as_str), &mut w)
                .map_err(io)?;
        }
    } else {
        for (p, v) in &lines {
            writeln!(w, "{p} {v}").map_err(io)?;
        }
    }
    crate::finish(w, out)?;
    Ok(Summary {
        rows: lines.len() as u64,
        ..Summary::default()
    })
}

/// The folded lines, sorted: a path and its exclusive time in integer ns.
pub fn folded_lines(
    exp: &Experiment,
    prof: &ExperimentProfile,
    opts: &Options,
) -> Result<Vec<(String, u64)>, Error> {
    let mut lines: BTreeMap<String, f64> = BTreeMap::new();
    for (of, rows) in selected_profiles(exp, prof, opts)? {
        let label = of.map(|g| frame(&g.label));
        // Frames of the region's own path shown: one fewer below a label.
        let shown = MAX_DEPTH - label.is_some() as usize;
        // The line of the path being walked, and where each of its frames
        // ends in it: rows come in tree order, each below the last row of
        // lesser depth.
        let mut text = label.unwrap_or_default();
        let base = text.len();
        let mut ends: Vec<usize> = Vec::new();
        for r in &rows {
            let key = if r.depth < shown {
                ends.truncate(r.depth);
                text.truncate(ends.last().copied().unwrap_or(base));
                if !text.is_empty() {
                    text.push(';');
                }
                text.push_str(&frame(&r.region));
                ends.push(text.len());
                text.clone()
            } else {
                // Deeper frames are not shown: the time goes to `…` below
                // the last frame shown.
                format!("{};…", &text[..ends[shown - 2]])
            };
            *lines.entry(key).or_insert(0.0) += r.times.exclusive;
        }
    }
    Ok(lines
        .into_iter()
        .filter(|(_, v)| v.round() >= 1.0)
        // Saturating: a damaged profile's times can be anything.
        .map(|(p, v)| (p, v.round() as u64))
        .collect())
}

/// A frame name that cannot break the folded syntax, nor a terminal or an
/// SVG file, of at most [`FRAME_BYTES`] bytes: `;` separates frames, and
/// control characters are written visibly
/// ([`parallax_output::text::inert`]).
fn frame(s: &str) -> String {
    parallax_output::text::inert(&shortened(s, FRAME_BYTES)).replace(';', ":")
}
