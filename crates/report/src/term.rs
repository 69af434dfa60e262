//! The terminal: colour only where a person reads it, progress only for
//! steps long enough to need it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether stdout gets colour: a terminal, and `NO_COLOR` unset (or
/// `CLICOLOR_FORCE` set).
pub fn colour_stdout() -> bool {
    if std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        return true;
    }
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// ANSI styles, or nothing when colour is off.
#[derive(Clone, Copy, Debug)]
pub struct Paint {
    on: bool,
}

impl Paint {
    /// Styles for stdout.
    pub fn stdout() -> Paint {
        Paint {
            on: colour_stdout(),
        }
    }

    /// Styles if `on`, else none.
    pub fn new(on: bool) -> Paint {
        Paint { on }
    }

    /// No styles.
    pub fn plain() -> Paint {
        Paint { on: false }
    }

    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// A heading.
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }

    /// Secondary text.
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }

    /// A share of the total, coloured by weight: red from 20 %, yellow
    /// from 5 %.
    pub fn share(&self, pct: f64, s: &str) -> String {
        if pct >= 20.0 {
            self.wrap("31;1", s)
        } else if pct >= 5.0 {
            self.wrap("33", s)
        } else {
            s.to_string()
        }
    }

    /// A warning.
    pub fn warn(&self, s: &str) -> String {
        self.wrap("33;1", s)
    }
}

/// A progress indicator on stderr that shows itself only after a second
/// and only on a terminal, so quick steps and pipes stay quiet.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A step of `total` units (0 for a spinner) described by `what`.
    pub fn new(what: &str, total: u64) -> Progress {
        let bar = if total == 0 {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::new(total)
        };
        bar.set_draw_target(ProgressDrawTarget::hidden());
        let style = if total == 0 {
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
        } else {
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
        };
        if let Ok(s) = style {
            bar.set_style(s.progress_chars("=> "));
        }
        bar.set_message(what.to_string());
        let shown = bar.clone();
        // The bar appears after a second, from a thread of its own, so that
        // a step with no increments still shows it is alive; off a
        // terminal there is nothing to show, and no thread.
        if std::io::stderr().is_terminal() {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(1));
                if !shown.is_finished() {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(120));
                }
            });
        }
        Progress { bar }
    }

    /// `n` more units done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Changes the description.
    pub fn message(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// A function that changes the description to `what: ` and its
    /// argument, from any thread.
    pub fn messenger(&self, what: &str) -> impl Fn(&str) + Send + Sync + 'static {
        let (bar, what) = (self.bar.clone(), what.to_string());
        move |detail| bar.set_message(format!("{what}: {detail}"))
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paint_adds_nothing() {
        let p = Paint::plain();
        assert_eq!(p.bold("x") + &p.share(50.0, "y"), "xy");
        let c = Paint { on: true };
        assert_eq!(c.bold("x"), "\x1b[1mx\x1b[0m");
    }
}
