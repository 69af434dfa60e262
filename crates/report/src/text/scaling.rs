//! Scalability of runs of one program at different sizes (`parallax
//! scaling`) as text: each run's efficiency, overall and per region.

use std::fmt::Write as _;

use parallax_analysis::bottleneck::scaling::ScalePoint;
use parallax_output::text::inert;

/// The runs `pts`, each with its `top` least efficient regions.
pub fn text(pts: &[ScalePoint], top: usize) -> String {
    let mut s = String::from(
        "Scalability against the smallest run (E = p0·T0 / (p·T); weak: T0 / T; ideal 1)\n",
    );
    for p in pts {
        let _ = writeln!(
            s,
            "\n{:>4} PEs  {:>10.3} s  E {:>5.2}  weak E {:>5.2}  {}",
            p.pes,
            p.wall_s,
            p.efficiency,
            p.weak_efficiency,
            inert(&p.name)
        );
        let mut regs: Vec<_> = p.regions.iter().collect();
        regs.sort_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(b.0)));
        for (r, e) in regs.into_iter().take(top) {
            let _ = writeln!(s, "      {:<40} E {e:>5.2}", inert(r));
        }
    }
    s
}
