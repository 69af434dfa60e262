//! The comparison of two revisions of a program (`parallax compare`) as
//! text: each figure in A and B, and whether it changed beyond the noise.

use std::fmt::Write as _;

use parallax_analysis::bottleneck::scaling::Comparison;
use parallax_output::text::inert;

/// The comparison `c` of `runs_a` runs of A with `runs_b` runs of B.
pub fn text(c: &Comparison, runs_a: usize, runs_b: usize) -> String {
    let mut s = format!(
        "Revision comparison ({runs_a} run(s) of A, {runs_b} of B; changes within {:.1}% are \
         noise)\n\n",
        100.0 * c.noise
    );
    for x in &c.changes {
        let verdict = match (x.significant, x.relative < 0.0) {
            (false, _) => "same",
            (true, true) => "faster",
            (true, false) => "slower",
        };
        let _ = writeln!(
            s,
            "  {:<40} A {:>10.3} s  B {:>10.3} s  {:>+7.1}%  {verdict}",
            inert(&x.what),
            x.a_s,
            x.b_s,
            100.0 * x.relative
        );
    }
    s
}
