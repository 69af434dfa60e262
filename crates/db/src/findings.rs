//! Findings of the bottleneck analysis in the database and in findings
//! files: reading what `parallax analyze --json` writes, the short JSON
//! form the database keeps and shows, and the `findings` table.
//!
//! The table keeps a finding's pattern, severity, location, region and
//! culprits; its call path, detection, hint and source are not stored.

use rusqlite::params;
use serde_json::{json, Value};

use parallax_view::finding::{Culprit, Detection, Finding, Pattern, Where};

use crate::{Db, Error, Result};

/// Longest findings file read (`parallax analyze --json` writes a few
/// kilobytes per finding).
pub const FINDINGS_MAX_BYTES: u64 = 256 << 20;

/// The findings of a file written by `parallax analyze --json` (a regular
/// file of at most [`FINDINGS_MAX_BYTES`]).
pub fn read_file(path: &std::path::Path) -> std::result::Result<Vec<Finding>, String> {
    let text =
        parallax_model::file::read_text(path, FINDINGS_MAX_BYTES).map_err(|e| e.to_string())?;
    parse_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Findings from `{"findings": [...]}` (or a bare array); entries without
/// a known pattern or without a location (rank and thread) are skipped,
/// never a panic.
pub fn parse_json(text: &str) -> std::result::Result<Vec<Finding>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let list = match &v {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("findings") {
            Some(Value::Array(a)) => a,
            _ => return Err("no \"findings\" array".into()),
        },
        _ => return Err("neither an object nor an array".into()),
    };
    Ok(list.iter().filter_map(finding_of).collect())
}

fn u32_of(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64)
        .and_then(|x| u32::try_from(x).ok())
}

fn string_of(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

/// A location's rank and thread in `v`.
fn where_of(v: &Value) -> Option<Where> {
    Some(Where {
        rank: u32_of(v.get("rank"))?,
        thread: u32_of(v.get("thread"))?,
    })
}

/// One entry of a findings file.
fn finding_of(f: &Value) -> Option<Finding> {
    let num = |k: &str| f.get(k).and_then(Value::as_f64);
    Some(Finding {
        pattern: Pattern::parse(f.get("pattern")?.as_str()?)?,
        severity_s: num("severity_s").unwrap_or(0.0),
        at: where_of(f)?,
        region: string_of(f.get("region")).unwrap_or_default(),
        path: f
            .get("path")
            .and_then(Value::as_array)
            .map(|p| p.iter().filter_map(|x| string_of(Some(x))).collect())
            .unwrap_or_default(),
        source: string_of(f.get("source")),
        instances: f.get("instances").and_then(Value::as_u64).unwrap_or(0),
        culprits: culprits_of(f.get("culprits")),
        detection: f.get("detection").and_then(detection_of),
        hint: string_of(f.get("hint")).unwrap_or_default(),
    })
}

/// Culprits as a findings file or the `culprits` column holds them; those
/// without a location are skipped.
fn culprits_of(v: Option<&Value>) -> Vec<Culprit> {
    v.and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|x| {
                    Some(Culprit {
                        at: where_of(x)?,
                        severity_s: x.get("severity_s").and_then(Value::as_f64).unwrap_or(0.0),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn detection_of(d: &Value) -> Option<Detection> {
    let method = d.get("method")?.as_str()?;
    Some(Detection {
        method: ["baseline", "deviation", "replay"]
            .into_iter()
            .find(|m| *m == method)?,
        mean_s: d.get("mean_s").and_then(Value::as_f64).unwrap_or(0.0),
        expected_s: d.get("expected_s").and_then(Value::as_f64),
    })
}

/// `s`, or nothing when it is empty (unknown).
fn known(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// The culprits' locations, as the `culprits` column keeps them.
fn culprits_json(f: &Finding) -> Value {
    f.culprits
        .iter()
        .map(|c| json!({"rank": c.at.rank, "thread": c.at.thread}))
        .collect()
}

/// The short JSON form of a finding (`parallax db show --json`, the HTML
/// report): pattern, severity, location, region, culprits' locations,
/// hint and source; what is unknown is `null`.
pub fn to_json(f: &Finding) -> Value {
    json!({
        "pattern": f.pattern.name(),
        "severity_s": f.severity_s,
        "rank": f.at.rank,
        "thread": f.at.thread,
        "region": f.known_region(),
        "culprits": culprits_json(f),
        "hint": known(&f.hint),
        "source": f.source,
    })
}

pub(crate) fn insert(
    tx: &rusqlite::Transaction<'_>,
    run: i64,
    findings: &[Finding],
) -> rusqlite::Result<()> {
    let mut st = tx.prepare(
        "INSERT OR REPLACE INTO findings (run, idx, pattern, severity_s, rank, thread, region, culprits) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for (i, f) in findings.iter().enumerate() {
        st.execute(params![
            run,
            i as i64,
            f.pattern.name(),
            f.severity_s,
            f.at.rank,
            f.at.thread,
            f.known_region(),
            culprits_json(f).to_string()
        ])?;
    }
    Ok(())
}

/// A row of the `findings` table.
type Row = (
    String,
    f64,
    Option<u32>,
    Option<u32>,
    Option<String>,
    String,
);

impl Db {
    /// Findings of a run, by rank of severity; rows of a pattern this
    /// version does not know, or without a location, are left out.
    pub fn findings(&self, id: i64) -> Result<Vec<Finding>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT pattern, severity_s, rank, thread, region, culprits FROM findings \
                 WHERE run = ?1 ORDER BY severity_s DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows: Vec<Row> = st
            .query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .and_then(|m| m.collect())
            .map_err(|e| self.err(e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(pattern, severity_s, rank, thread, region, culprits)| {
                let culprits = serde_json::from_str::<Value>(&culprits).ok();
                Some(Finding {
                    pattern: Pattern::parse(&pattern)?,
                    severity_s,
                    at: Where {
                        rank: rank?,
                        thread: thread?,
                    },
                    region: region.unwrap_or_default(),
                    path: Vec::new(),
                    source: None,
                    instances: 0,
                    culprits: culprits_of(culprits.as_ref()),
                    detection: None,
                    hint: String::new(),
                })
            })
            .collect())
    }

    /// Replaces the findings of run `id`.
    pub fn set_findings(&mut self, id: i64, findings: &[Finding]) -> Result<()> {
        self.run(id)?;
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| Error::sql(&path, e))?;
        tx.execute("DELETE FROM findings WHERE run = ?1", [id])
            .map_err(|e| Error::sql(&path, e))?;
        insert(&tx, id, findings).map_err(|e| Error::sql(&path, e))?;
        tx.commit().map_err(|e| Error::sql(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_json_is_read_as_analyze_writes_it_and_junk_is_an_error() {
        let f = parse_json(
            r#"{"findings":[{"order":1,"pattern":"late_sender","severity_s":0.5,"rank":3,"thread":0,
               "region":"MPI_Recv","source":"a.c:12","hint":"h","path":["main","MPI_Recv"],"instances":4,
               "detection":{"method":"replay","mean_s":0.1,"expected_s":null},
               "culprits":[{"rank":2,"thread":0,"severity_s":0.5},{"thread":1}]},
               {"severity_s":1,"rank":0,"thread":0},{"pattern":"x","rank":0,"thread":0},
               {"pattern":"lock_wait","rank":-1,"thread":0},{"pattern":"lock_wait","rank":1}]}"#,
        )
        .unwrap();
        assert_eq!(f.len(), 1);
        let c = Culprit {
            at: Where { rank: 2, thread: 0 },
            severity_s: 0.5,
        };
        assert_eq!(f[0].culprits, vec![c]);
        assert_eq!(
            (f[0].at, f[0].source.as_deref(), f[0].instances),
            (Where { rank: 3, thread: 0 }, Some("a.c:12"), 4)
        );
        assert_eq!(f[0].path, ["main", "MPI_Recv"]);
        assert_eq!(f[0].detection.as_ref().map(|d| d.method), Some("replay"));
        // The short form reads back as what it keeps.
        let back = parse_json(&json!([to_json(&f[0])]).to_string()).unwrap();
        let mut kept = f[0].clone();
        (kept.path, kept.instances, kept.detection) = (Vec::new(), 0, None);
        kept.culprits[0].severity_s = 0.0;
        assert_eq!(back, vec![kept]);
        for junk in ["", "{", "[1,2", "{\"findings\": 3}", "42", "null"] {
            assert!(parse_json(junk).is_err(), "{junk}");
        }
        assert_eq!(parse_json("[]").unwrap(), vec![]);
    }

    #[test]
    fn unknown_region_and_hint_are_null_in_the_short_form() {
        let f = parse_json(r#"[{"pattern":"wait_at_barrier","rank":0,"thread":1}]"#).unwrap();
        let v = to_json(&f[0]);
        assert!(v["region"].is_null() && v["hint"].is_null() && v["source"].is_null());
        assert_eq!(v["culprits"], json!([]));
    }
}
