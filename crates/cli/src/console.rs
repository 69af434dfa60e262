//! The command's own output: results on stdout, messages on stderr.
//!
//! Neither may end the command with a panic: a closed pipe on stdout
//! (`parallax report … | head`) is an error that `main` treats as a quiet
//! end, and a message that cannot be written (stderr closed or a closed
//! pipe) is dropped. Messages carry names from experiments and command
//! lines, so they are made inert ([`parallax_output::text::inert_lines`]).

use std::io::Write;

/// Writes `s` to stdout; a closed pipe comes back as an error whose cause
/// is `BrokenPipe` (see `main`).
pub fn out(s: &str) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(s.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// Writes `parallax: MESSAGE` and a newline to stderr, if it can.
pub fn note(message: &str) {
    let text = format!(
        "parallax: {}\n",
        parallax_output::text::inert_lines(message)
    );
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Writes `parallax: warning: MESSAGE` to stderr, if it can.
pub fn warn(message: &str) {
    note(&format!("warning: {message}"));
}

/// Whether `e` is, at its root, a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `v` to stdout as pretty JSON ([`json`]).
pub fn out_json<T: serde::Serialize + ?Sized>(v: &T) -> anyhow::Result<()> {
    out(&(json(v) + "\n"))
}

/// `v` as pretty JSON in which no string holds a character that a
/// terminal acts on: JSON escapes the C0 controls itself; DEL, the C1
/// controls and the bidirectional overrides are written as `\u` escapes
/// too, which every JSON reader reads back as the same string.
pub fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Inert(PrettyFormatter::new()));
    v.serialize(&mut ser)
        .expect("JSON values serialize into memory");
    String::from_utf8(buf).expect("JSON is UTF-8")
}

/// Writes `v` to `w` as compact JSON, its strings escaped as [`json`]
/// says: for output written piece by piece.
pub fn write_json<W: Write + ?Sized, T: serde::Serialize + ?Sized>(
    w: &mut W,
    v: &T,
) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Inert(CompactFormatter));
    v.serialize(&mut ser).map_err(std::io::Error::from)
}

use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

/// A formatter (pretty or compact), with string contents escaped as
/// [`json`] says.
struct Inert<F>(F);

impl<F: Formatter> Formatter for Inert<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some((i, c)) = rest.char_indices().find(|&(_, c)| {
            c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        }) {
            w.write_all(&rest.as_bytes()[..i])?;
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[i + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}
