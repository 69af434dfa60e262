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
