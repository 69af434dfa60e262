//! Formatting of times, sizes and tables for the terminal. Names and
//! table cells are made inert ([`parallax_output::text::inert`]): what an
//! experiment or a database holds never reaches the terminal as control
//! characters, and a newline in a name never breaks a table.

use parallax_output::text::inert;

/// A duration in ns, with a unit that keeps three significant digits.
pub fn ns(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} us", v / 1e3)
    } else {
        format!("{v:.1} ns")
    }
}

/// A count with thousands separators.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `s` made inert and cut to `w` characters, with an ellipsis where cut.
pub fn fit(s: &str, w: usize) -> String {
    let s = inert(s);
    if s.chars().count() <= w {
        s.into_owned()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// UTC date and time of now, as `YYYYMMDD-HHMMSS`.
pub fn timestamp_for_name() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// A Unix time in seconds as `YYYY-MM-DD HH:MM` (UTC).
pub fn date_time(unix_s: i64) -> String {
    let (y, m, d) = civil_from_days(unix_s.div_euclid(86_400));
    let s = unix_s.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", s / 3600, s / 60 % 60)
}

/// A table at most `width` columns wide: numbers right-aligned, text
/// left-aligned, the last column cut to what is left.
pub fn table(cols: &[String], rows: &[Vec<String>], width: usize) -> String {
    let inert_row =
        |r: &[String]| -> Vec<String> { r.iter().map(|c| inert(c).into_owned()).collect() };
    let cols = &inert_row(cols);
    let rows: &Vec<Vec<String>> = &rows.iter().map(|r| inert_row(r)).collect();
    let n = cols.len();
    let numeric: Vec<bool> = (0..n)
        .map(|i| {
            rows.iter().all(|r| {
                r.get(i).is_none_or(|c| {
                    c.is_empty() || c == "-" || c.starts_with(|ch: char| ch.is_ascii_digit())
                })
            })
        })
        .collect();
    let mut w: Vec<usize> = cols.iter().map(|c| c.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count().min(40));
        }
    }
    let used: usize = w[..n.saturating_sub(1)]
        .iter()
        .map(|x| x + 2)
        .sum::<usize>()
        + 2;
    if let Some(last) = w.last_mut() {
        *last = (*last).min(width.saturating_sub(used).max(8));
    }
    let line = |cells: &mut dyn Iterator<Item = &String>| {
        let mut s = String::from(" ");
        for (i, c) in cells.enumerate().take(n) {
            let c = fit(c, w[i]);
            if i + 1 == n && !numeric[i] {
                s.push_str(&format!(" {c}"));
            } else if numeric[i] {
                s.push_str(&format!(" {c:>width$}", width = w[i]));
            } else {
                s.push_str(&format!(" {c:<width$}", width = w[i]));
            }
            if i + 1 < n {
                s.push(' ');
            }
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = line(&mut cols.iter());
    for r in rows {
        out.push_str(&line(&mut r.iter()));
    }
    out
}

/// Days since 1970-01-01 to a proleptic Gregorian date.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ns(12.34), "12.3 ns");
        assert_eq!(ns(1_234_567.0), "1.235 ms");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_778), (2026, 11, 21));
        assert_eq!(date_time(86_400 + 3_660), "1970-01-02 01:01");
        let t = table(
            &["n".into(), "name".into()],
            &[vec!["12".into(), "a very long name".into()]],
            12,
        );
        assert_eq!(t, "   n  name\n  12  a very …\n");
    }
}
