//! The HTML report: one file, no network. The page's data is JSON in a
//! `<script type="application/json">` element; bulky parts (timeline
//! visits, levels of detail, arrows) are packed columns ([`pack`]) that
//! the page inflates only when a view needs them. Script and style are
//! inline (`assets/`). The trace is read in passes whose memory does not
//! grow with its length ([`scan`]); the page holds summaries of the whole
//! run and single visits up to a number ([`Detail`]).

mod bins;
mod concurrency;
mod data;
pub mod pack;
pub mod scan;
mod source;
pub mod timeline;

use parallax_db::{CompareTable, ScalingPoint};
use parallax_model::experiment::Experiment;
use parallax_view::finding::Finding;
use serde_json::{json, Value};
use std::fmt::Write as _;

pub use data::{Built, Detail, MAX_VISITS};
pub use source::{EXTENSIONS as SOURCE_EXTENSIONS, MAX_READ as SOURCE_MAX_READ};

const CSS: &str = include_str!("assets/report.css");
const JS: &str = include_str!("assets/report.js");

/// An error building the report.
#[derive(Debug)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<parallax_model::Error> for Error {
    fn from(e: parallax_model::Error) -> Error {
        Error(e.to_string())
    }
}

impl From<parallax_export::Error> for Error {
    fn from(e: parallax_export::Error) -> Error {
        Error(e.to_string())
    }
}

/// Several runs side by side: the comparison table and, for runs of one
/// program at several sizes, the scaling series.
#[derive(Clone, Debug)]
pub struct Runs {
    /// What the table's cells are ("incl", "excl", "max").
    pub metric: String,
    /// Call paths × runs.
    pub table: CompareTable,
    /// Wall time by size.
    pub scaling: Vec<ScalingPoint>,
}

/// What goes into a report besides the experiment.
#[derive(Default)]
pub struct Options<'a> {
    /// Page title (default: the experiment directory).
    pub title: Option<String>,
    /// Findings of the bottleneck analysis.
    pub findings: Vec<Finding>,
    /// The compensated experiment, shown beside the measured one.
    pub compensated: Option<&'a Experiment>,
    /// Runs to compare.
    pub runs: Option<Runs>,
    /// How much of the trace is kept in full detail.
    pub detail: Detail,
    /// Why there are no findings, when the analysis was not run.
    pub findings_note: Option<String>,
}

/// The whole page for `exp`.
pub fn page(exp: &Experiment, opts: &Options) -> Result<(String, Built), Error> {
    let mut built = Built::default();
    let mut measured = data::experiment(exp, &opts.findings, &opts.detail, &mut built)?;
    if let Some(note) = &opts.findings_note {
        measured["findings_note"] = json!(note);
    }
    let compensated = match opts.compensated {
        Some(c) => data::experiment(c, &[], &opts.detail, &mut Built::default())?,
        None => Value::Null,
    };
    let runs = opts.runs.as_ref().map(runs_json);
    let title = opts
        .title
        .clone()
        .unwrap_or_else(|| format!("Parallax: {}", exp.dir.display()));
    let doc = json!({
        "title": title,
        "parallax": env!("CARGO_PKG_VERSION"),
        "measured": measured,
        "compensated": compensated,
        "runs": runs,
    });
    let data = script_json(&doc)?;
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head>\n<body>\n\
         <script id=\"px-data\" type=\"application/json\">{data}</script>\n\
         <script>{JS}</script>\n</body></html>\n",
        crate::svg::esc(&title)
    );
    Ok((html, built))
}

/// `v` as JSON text that is inert inside a `<script>` element: `<` could
/// end the element (`</script>`) or open a comment (`<!--`) that swallows
/// the rest of the page, so it and its companions `>` and `&` are written
/// as `\u` escapes, as are control and bidirectional-formatting characters
/// (the line and paragraph separators among them), so that the page's
/// source reads safely too. JSON has them only inside strings, where the
/// escapes mean the same.
fn script_json(v: &Value) -> Result<String, Error> {
    let text = serde_json::to_string(v).map_err(|e| Error(e.to_string()))?;
    let mut out = String::with_capacity(text.len() + text.len() / 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c if parallax_output::text::is_inert(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

fn runs_json(r: &Runs) -> Value {
    json!({
        "metric": r.metric,
        "runs": r.table.runs.iter().map(|x| json!({
            "id": x.id, "program": x.program, "ranks": x.ranks, "threads": x.threads,
            "wall_s": x.wall_s, "start_unix_ns": x.start_unix_ns, "git_revision": x.git_revision,
            "tags": x.tags, "command": x.command,
        })).collect::<Vec<_>>(),
        "rows": r.table.rows.iter().map(|(p, d, v)| json!({"path": p, "depth": d, "values": v})).collect::<Vec<_>>(),
        "scaling": r.scaling.iter().map(|s| json!({"run": s.run, "ranks": s.ranks, "threads": s.threads, "wall_s": s.wall_s})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_data_cannot_end_the_script_or_open_a_comment() {
        let hostile = "<!--<script></script><\u{2028}&amp;>\u{202e}\u{85}\x1b";
        let text = script_json(&json!({"name": hostile, "list": [hostile]})).unwrap();
        for bad in ["<", ">", "&", "\u{2028}", "\u{202e}", "\u{85}", "\x1b"] {
            assert!(!text.contains(bad), "{bad} in {text}");
        }
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["name"], json!(hostile));
        assert_eq!(back["list"][0], json!(hostile));
    }

    #[test]
    fn inline_script_and_style_cannot_end_their_elements() {
        for (what, text) in [("script", JS), ("style", CSS)] {
            let lower = text.to_ascii_lowercase();
            assert!(!lower.contains(&format!("</{what}")), "{what}");
            assert!(!lower.contains("<!--"), "{what}");
        }
    }
}
