//! Which compiler-instrumented functions are measured: include and exclude
//! lists of name patterns.
//!
//! A function is measured if the include list is empty or one of its
//! patterns matches, and no exclude pattern matches. Patterns are matched
//! against the demangled name and the symbol; `*` matches any run of
//! characters, `?` one character, everything else itself.

/// Include and exclude patterns.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl Filter {
    /// Adds the rules of a filter file: `include PATTERN` or
    /// `exclude PATTERN` per line, `#` comments, blank lines.
    pub fn add_file(&mut self, text: &str) -> Result<(), String> {
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (word, pattern) = line
                .split_once(char::is_whitespace)
                .map(|(w, p)| (w, p.trim()))
                .unwrap_or((line, ""));
            if pattern.is_empty() {
                return Err(format!("line {}: a pattern is missing", n + 1));
            }
            match word.to_ascii_lowercase().as_str() {
                "include" => self.include.push(pattern.to_string()),
                "exclude" => self.exclude.push(pattern.to_string()),
                w => {
                    return Err(format!(
                        "line {}: {w:?} is neither include nor exclude",
                        n + 1
                    ))
                }
            }
        }
        Ok(())
    }

    /// Whether the function `name` (demangled) with symbol `symbol` is
    /// measured.
    pub fn wants(&self, name: &str, symbol: &str) -> bool {
        let m = |p: &String| {
            glob(p.as_bytes(), name.as_bytes()) || glob(p.as_bytes(), symbol.as_bytes())
        };
        (self.include.is_empty() || self.include.iter().any(m)) && !self.exclude.iter().any(m)
    }
}

/// Whether `text` matches `pattern` as a whole.
pub(crate) fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matching with one backtrack point (the last `*`).
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        for (p, t, want) in [
            ("*", "", true),
            ("a*c", "abbbc", true),
            ("a*c", "abbbd", false),
            ("?x", "ax", true),
            ("?x", "x", false),
            ("ns::*::get*", "ns::Foo::get_value(int)", true),
            ("*_MOD_*", "__grid_MOD_step", true),
            ("a**b", "ab", true),
            ("abc", "abcd", false),
        ] {
            assert_eq!(glob(p.as_bytes(), t.as_bytes()), want, "{p} {t}");
        }
    }

    #[test]
    fn include_then_exclude() {
        let mut f = Filter::default();
        assert!(f.wants("anything", "x"));
        f.add_file("# comment\ninclude solver_*\n\nexclude *_tiny  # trailing\n")
            .unwrap();
        assert!(f.wants("solver_step", "solver_step"));
        assert!(!f.wants("solver_tiny", "solver_tiny"));
        assert!(!f.wants("main", "main"));
        assert!(f.wants("ns::solve()", "solver_x"), "symbol matches");
        assert!(f.add_file("keep x").is_err());
        assert!(f.add_file("include").is_err());
    }
}
