//! Settings of the interposition library (beyond the runtime's own), read
//! once from the environment.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `PARALLAX_PTHREAD` | which POSIX-thread calls are recorded: `off`, `app` (made by the application), `all` | `app` |
//! | `PARALLAX_FILTER_INCLUDE` | compiler-instrumented functions to measure: comma-separated name patterns (`*`, `?`) | all |
//! | `PARALLAX_FILTER_EXCLUDE` | functions not to measure, likewise | none |
//! | `PARALLAX_FILTER_FILE` | a file of `include PATTERN` and `exclude PATTERN` lines (`#` comments) | none |
//! | `PARALLAX_THROTTLE` | `CALLS:MICROSECONDS`: stop measuring a function once a thread called it that often at less than that per call; `off` | `100000:10` |
//! | `PARALLAX_EXCLUDE_PROGRAMS` | comma-separated program names never measured (launchers are built in) | none |

use std::sync::OnceLock;

use crate::filter::Filter;

/// The library's settings.
#[derive(Debug)]
pub(crate) struct Settings {
    pub pthread: u8,
    pub filter: Filter,
    /// Calls (a power of two) at which throttling is first considered; 0
    /// for never.
    pub throttle_calls: u32,
    /// A function is throttled below this time per call, ns.
    pub throttle_ns: u64,
    /// Problems with the settings, reported once by the first user.
    pub problems: Vec<String>,
}

pub(crate) fn get() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        let s = from_lookup(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()));
        if !s.problems.is_empty() {
            parallax::failsafe::tell_once(
                parallax::failsafe::Cause::Config,
                format_args!("{}", s.problems.join("; ")),
            );
        }
        s
    })
}

pub(crate) fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Settings {
    let mut problems = Vec::new();
    let pthread = match get("PARALLAX_PTHREAD").as_deref().map(str::trim) {
        None | Some("app") | Some("") => 1,
        Some("off") | Some("0") => 0,
        Some("all") => 2,
        Some(v) => {
            problems.push(format!(
                "PARALLAX_PTHREAD={v:?} is not valid: expected off, app or all; using app"
            ));
            1
        }
    };
    let mut filter = Filter::default();
    let list = |v: Option<String>| -> Vec<String> {
        v.unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    filter.include.extend(list(get("PARALLAX_FILTER_INCLUDE")));
    filter.exclude.extend(list(get("PARALLAX_FILTER_EXCLUDE")));
    if let Some(path) = get("PARALLAX_FILTER_FILE").filter(|p| !p.is_empty()) {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                if let Err(e) = filter.add_file(&text) {
                    problems.push(format!("PARALLAX_FILTER_FILE {path}: {e}"));
                }
            }
            Err(e) => problems.push(format!("cannot read PARALLAX_FILTER_FILE {path}: {e}")),
        }
    }
    let (mut throttle_calls, mut throttle_ns) = (100_000u32, 10_000u64);
    if let Some(v) = get("PARALLAX_THROTTLE") {
        let v = v.trim();
        if v == "off" || v == "0" {
            throttle_calls = 0;
        } else {
            let parsed = v.split_once(':').and_then(|(c, us)| {
                Some((
                    c.trim().parse::<u32>().ok()?,
                    us.trim().parse::<f64>().ok()?,
                ))
            });
            match parsed {
                Some((c, us)) if c > 0 && us >= 0.0 => {
                    throttle_calls = c;
                    throttle_ns = (us * 1000.0) as u64;
                }
                _ => problems.push(format!(
                    "PARALLAX_THROTTLE={v:?} is not valid: expected CALLS:MICROSECONDS or off; \
                     using 100000:10"
                )),
            }
        }
    }
    if throttle_calls > 0 {
        throttle_calls = throttle_calls
            .checked_next_power_of_two()
            .unwrap_or(1 << 31);
    }
    Settings {
        pthread,
        filter,
        throttle_calls,
        throttle_ns,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(vars: &[(&str, &str)]) -> Settings {
        from_lookup(|k| vars.iter().find(|v| v.0 == k).map(|v| v.1.to_string()))
    }

    #[test]
    fn defaults_and_values() {
        let d = s(&[]);
        assert_eq!(d.pthread, 1);
        assert_eq!((d.throttle_calls, d.throttle_ns), (131_072, 10_000));
        assert!(d.problems.is_empty());
        let v = s(&[
            ("PARALLAX_PTHREAD", "all"),
            ("PARALLAX_THROTTLE", "1000:2.5"),
            ("PARALLAX_FILTER_EXCLUDE", "tiny*, helper"),
        ]);
        assert_eq!(v.pthread, 2);
        assert_eq!((v.throttle_calls, v.throttle_ns), (1024, 2500));
        assert!(!v.filter.wants("tiny_add", "tiny_add"));
        assert!(!v.filter.wants("helper", "helper"));
        assert!(v.filter.wants("main", "main"));
        assert_eq!(s(&[("PARALLAX_THROTTLE", "off")]).throttle_calls, 0);
        let bad = s(&[("PARALLAX_THROTTLE", "x"), ("PARALLAX_PTHREAD", "some")]);
        assert_eq!(bad.problems.len(), 2);
    }
}
