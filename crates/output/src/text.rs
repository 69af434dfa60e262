//! Untrusted strings made inert.
//!
//! Names recorded by a measured program (regions, threads, the program and
//! its arguments) and tags given by people may hold any character. Printed
//! raw, an escape sequence would recolour the terminal, set its title or
//! clear it, a newline would break a table, and a NUL or ESC makes an XML
//! file malformed. Every text renderer passes such strings through
//! [`inert`] (or [`inert_lines`] for a block of text whose own line breaks
//! are meant), and every XML writer through [`xml`].

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a reader as it is: C0 and C1 controls, DEL,
/// the line and paragraph separators, and the bidirectional marks,
/// overrides and isolates (which reorder what follows them on screen).
pub fn is_inert(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn inert_keeping(s: &str, keep_newline: bool) -> Cow<'_, str> {
    let needs = |c: char| is_inert(c) && !(keep_newline && c == '\n');
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` with every control character written visibly (`\x1b`, `\n`, `\t`,
/// `\u{9b}`, `\u{202e}`): one line of plain text whatever `s` holds.
/// Applying it twice gives the same as once.
pub fn inert(s: &str) -> Cow<'_, str> {
    inert_keeping(s, false)
}

/// [`inert`] for a block of text: its line breaks stay, every other
/// control character is written visibly.
pub fn inert_lines(s: &str) -> Cow<'_, str> {
    inert_keeping(s, true)
}

/// `s` as XML 1.0 character data or an attribute value: made [`inert`]
/// (no character XML forbids is left: every C0 control but tab, newline and
/// carriage return is forbidden, and these three are written visibly as
/// well), with `< > & " '` and the non-characters U+FFFE and U+FFFF
/// escaped.
pub fn xml(s: &str) -> String {
    let s = inert(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\u{fffe}' | '\u{ffff}' => escape(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_and_plain_text_stays() {
        assert!(matches!(inert("MPI_Send"), Cow::Borrowed("MPI_Send")));
        assert_eq!(inert("a\x1b]0;t\x07b"), "a\\x1b]0;t\\x07b");
        assert_eq!(inert("x\ny\tz\r\0"), "x\\ny\\tz\\r\\x00");
        assert_eq!(inert("\u{9b}31m\u{7f}"), "\\u{9b}31m\\x7f");
        assert_eq!(inert("abc\u{202e}def"), "abc\\u{202e}def");
        assert_eq!(inert("Ωmega ü"), "Ωmega ü");
        let twice = inert("a\x1b[2J");
        assert_eq!(inert(&twice), twice);
        assert_eq!(inert_lines("a\nb\x1b"), "a\nb\\x1b");
    }

    #[test]
    fn xml_escapes_markup_and_what_xml_forbids() {
        assert_eq!(
            xml("<a & 'b'>\"c\""),
            "&lt;a &amp; &#39;b&#39;&gt;&quot;c&quot;"
        );
        assert_eq!(xml("a\0b\x1bc\u{ffff}"), "a\\x00b\\x1bc\\u{ffff}");
        for c in (0u32..0x20).chain([0x7f, 0xfffe, 0xffff]) {
            let s = xml(&format!("x{}y", char::from_u32(c).unwrap()));
            assert!(
                s.chars()
                    .all(|c| c >= ' ' && !matches!(c, '\u{7f}' | '\u{fffe}' | '\u{ffff}')),
                "{c:#x}: {s:?}"
            );
        }
    }
}
