//! Text wrapped at the reports' width, at word boundaries.

use std::fmt::Write as _;

/// Width of the text reports, in columns.
pub const WIDTH: usize = 100;

/// `head` then `items` separated by commas, wrapped at [`WIDTH`] with
/// continuation lines indented by `indent`.
pub fn wrap(s: &mut String, head: &str, items: &[String], indent: usize) {
    wrap_separated(s, head, items, ",", indent);
}

/// `head` then `items`, each but the last followed by `sep`, wrapped at
/// [`WIDTH`] with continuation lines indented by `indent`.
pub fn wrap_separated(s: &mut String, head: &str, items: &[String], sep: &str, indent: usize) {
    let n = items.len();
    let pieces: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            if i + 1 < n {
                format!("{it}{sep}")
            } else {
                it.clone()
            }
        })
        .collect();
    wrap_words(s, head, &pieces, indent);
}

/// `head` then `words` separated by spaces, wrapped at [`WIDTH`] with
/// continuation lines indented by `indent`; a word longer than a line
/// stands alone on its line.
pub fn wrap_words(s: &mut String, head: &str, words: &[String], indent: usize) {
    let mut line = head.to_string();
    for w in words {
        let len = line.chars().count();
        if len > indent && len + 1 + w.chars().count() > WIDTH {
            let _ = writeln!(s, "{line}");
            line = " ".repeat(indent - 1);
        }
        line.push(' ');
        line.push_str(w);
    }
    let _ = writeln!(s, "{line}");
}
