//! Which locations a view shows: all, or those the user named by rank or
//! by rank and thread.

use std::fmt;

/// Which locations to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// (rank, thread) pairs; a thread of `None` selects every thread of the
    /// rank. Empty selects every location.
    pub locations: Vec<(u32, Option<u32>)>,
}

/// A selection that cannot be used: a location that does not parse, or
/// one the experiment does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSelection(pub String);

impl fmt::Display for BadSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadSelection {}

impl Selection {
    /// Whether location (`rank`, `thread`) is selected.
    pub fn contains(&self, rank: u32, thread: u32) -> bool {
        self.locations.is_empty()
            || self
                .locations
                .iter()
                .any(|&(r, t)| r == rank && t.is_none_or(|t| t == thread))
    }

    /// Parses `R:T` or `R` and adds it.
    pub fn add(&mut self, s: &str) -> Result<(), BadSelection> {
        let bad = || {
            BadSelection(format!(
                "`{s}` is not a location: write RANK:THREAD (e.g. 0:1) or RANK"
            ))
        };
        let (r, t) = match s.split_once(':') {
            Some((r, t)) => (r, Some(t)),
            None => (s, None),
        };
        let r: u32 = r.trim().parse().map_err(|_| bad())?;
        let t = match t {
            Some(t) => Some(t.trim().parse::<u32>().map_err(|_| bad())?),
            None => None,
        };
        self.locations.push((r, t));
        Ok(())
    }

    /// Fails naming the first location of the selection that `have` (the
    /// (rank, thread) pairs of an experiment's locations) lacks.
    pub fn check(&self, have: &[(u32, u32)]) -> Result<(), BadSelection> {
        for &(r, t) in &self.locations {
            if !have
                .iter()
                .any(|&(hr, ht)| hr == r && t.is_none_or(|t| t == ht))
            {
                let what = match t {
                    Some(t) => format!("location {r}:{t}"),
                    None => format!("rank {r}"),
                };
                return Err(BadSelection(format!("the experiment has no {what}")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_parses() {
        let mut s = Selection::default();
        s.add("1:2").unwrap();
        s.add("3").unwrap();
        assert!(s.add("x").is_err());
        assert!(s.contains(1, 2) && !s.contains(1, 3) && s.contains(3, 9));
    }

    #[test]
    fn missing_locations_are_named() {
        let mut s = Selection::default();
        s.add("1:2").unwrap();
        assert_eq!(s.check(&[(1, 2), (1, 3)]), Ok(()));
        let e = s.check(&[(1, 3)]).unwrap_err();
        assert_eq!(e.to_string(), "the experiment has no location 1:2");
        s.add("4").unwrap();
        let e = s.check(&[(1, 2)]).unwrap_err();
        assert_eq!(e.to_string(), "the experiment has no rank 4");
    }
}
