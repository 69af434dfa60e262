//! Standalone SVG charts (timeline overview, profile bars, load balance,
//! scaling), sized for a paper's column and readable in print.

use std::fmt::Write as _;

/// Colour of region `i` (golden-angle hues): the HTML report uses the same.
pub fn colour(i: usize) -> String {
    format!("hsl({:.0},55%,55%)", (i as f64 * 137.508) % 360.0)
}

/// Colours of the time categories, in the order of
/// [`CATEGORIES`].
pub const CATEGORY_COLOURS: [&str; 5] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#9c9c9c"];

/// The time categories, in the order charts stack them.
pub const CATEGORIES: [&str; 5] = [
    "computation",
    "communication",
    "synchronization",
    "io",
    "measurement",
];

/// `s` as XML text: markup escaped, and no character XML forbids (a
/// name's ESC or NUL would make the file malformed): see
/// [`parallax_output::text::xml`].
pub fn esc(s: &str) -> String {
    parallax_output::text::xml(s)
}

/// A duration in ns with a unit.
pub fn ns(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

fn open(w: f64, h: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
         <text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
        esc(title)
    )
}

/// Horizontal bars, one per (label, value in ns), longest first as given.
pub fn bars(title: &str, rows: &[(String, f64)]) -> String {
    let (lw, bw, rh) = (220.0, 300.0, 16.0);
    let h = 30.0 + rows.len() as f64 * rh + 10.0;
    let mut s = open(lw + bw + 100.0, h, title);
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9);
    for (i, (label, v)) in rows.iter().enumerate() {
        let y = 28.0 + i as f64 * rh;
        let w = bw * v / max;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{lw}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            lw - 6.0,
            y + 11.0,
            esc(&fit(label, 34)),
            y + 2.0,
            rh - 4.0,
            colour(i),
            lw + w + 4.0,
            y + 11.0,
            ns(*v)
        );
    }
    s + "</svg>\n"
}

/// One stacked bar per location: time per category (ns, in the order of
/// [`CATEGORIES`]).
pub fn load_balance(title: &str, rows: &[(String, [f64; 5])]) -> String {
    let (lw, bw) = (150.0, 420.0);
    let rh = if rows.len() > 60 { 4.0 } else { 14.0 };
    let h = 50.0 + rows.len() as f64 * rh + 10.0;
    let mut s = open(lw + bw + 20.0, h, title);
    let max = rows
        .iter()
        .map(|r| r.1.iter().sum::<f64>())
        .fold(0.0, f64::max)
        .max(1e-9);
    for (k, c) in CATEGORIES.iter().enumerate() {
        let x = lw + k as f64 * 90.0;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"24\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"33\">{c}</text>",
            CATEGORY_COLOURS[k],
            x + 13.0
        );
    }
    for (i, (label, v)) in rows.iter().enumerate() {
        let y = 44.0 + i as f64 * rh;
        if rh >= 10.0 {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                lw - 6.0,
                y + rh - 3.0,
                esc(&fit(label, 24))
            );
        }
        let mut x = lw;
        for (k, part) in v.iter().enumerate() {
            let w = bw * part / max;
            if w > 0.0 {
                let _ = writeln!(
                    s,
                    "<rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\"/>",
                    (rh - 1.0).max(1.0),
                    CATEGORY_COLOURS[k]
                );
            }
            x += w;
        }
    }
    s + "</svg>\n"
}

/// Wall time against size on log-log axes, with the ideal (linear
/// speedup from the smallest run) dashed.
pub fn scaling(program: &str, pts: &[(f64, f64)]) -> String {
    let (w, h, m) = (420.0, 300.0, 50.0);
    let mut s = open(w, h, &format!("Scaling of {program}"));
    let pts: Vec<(f64, f64)> = pts
        .iter()
        .copied()
        .filter(|p| p.0 > 0.0 && p.1 > 0.0)
        .collect();
    if pts.is_empty() {
        return s + "</svg>\n";
    }
    let lx = |v: f64| v.log10();
    let (x0, x1) = minmax(pts.iter().map(|p| lx(p.0)));
    let ideal: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.0, pts[0].1 * pts[0].0 / p.0))
        .collect();
    let (y0, y1) = minmax(pts.iter().chain(ideal.iter()).map(|p| lx(p.1)));
    let (x0, x1) = (x0 - 0.1, x1 + 0.1);
    let (y0, y1) = (y0 - 0.1, y1 + 0.1);
    let px = |v: f64| m + (lx(v) - x0) / (x1 - x0) * (w - 2.0 * m);
    let py = |v: f64| h - m - (lx(v) - y0) / (y1 - y0) * (h - 2.0 * m);
    let _ = writeln!(
        s,
        "<line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/><line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">locations (log)</text>\
         <text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">wall time (log)</text>",
        h - m,
        w - m,
        h - m,
        h - m,
        w / 2.0,
        h - 12.0,
        h / 2.0,
        h / 2.0
    );
    let line = |v: &[(f64, f64)], style: &str| {
        let d: Vec<String> = v
            .iter()
            .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
            .collect();
        format!(
            "<polyline fill=\"none\" {style} points=\"{}\"/>\n",
            d.join(" ")
        )
    };
    s += &line(&ideal, "stroke=\"#999\" stroke-dasharray=\"4 3\"");
    s += &line(&pts, "stroke=\"#4e79a7\" stroke-width=\"2\"");
    for p in &pts {
        let _ = writeln!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#4e79a7\"/><text x=\"{:.1}\" y=\"{:.1}\">{} · {}</text>",
            px(p.0),
            py(p.1),
            px(p.0) + 5.0,
            py(p.1) - 5.0,
            p.0,
            ns(p.1 * 1e9)
        );
    }
    s + "</svg>\n"
}

/// The timeline overview: one row per location, each bin coloured by the
/// region that took most of its time (`0` idle, else region index + 1).
pub fn timeline(
    title: &str,
    span_ns: f64,
    rows: &[(String, Vec<u32>)],
    regions: &[String],
) -> String {
    let (lw, tw) = (150.0, 600.0);
    let rh = if rows.len() > 80 { 3.0 } else { 14.0 };
    let h = 44.0 + rows.len() as f64 * rh + 40.0;
    let mut s = open(lw + tw + 20.0, h, title);
    let mut used: Vec<u32> = Vec::new();
    for (i, (label, bins)) in rows.iter().enumerate() {
        let y = 28.0 + i as f64 * rh;
        if rh >= 10.0 {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                lw - 6.0,
                y + rh - 3.0,
                esc(&fit(label, 24))
            );
        }
        let n = bins.len().max(1) as f64;
        let mut k = 0;
        while k < bins.len() {
            let v = bins[k];
            let mut e = k + 1;
            while e < bins.len() && bins[e] == v {
                e += 1;
            }
            if v > 0 {
                if !used.contains(&v) {
                    used.push(v);
                }
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{}\"/>",
                    lw + tw * k as f64 / n,
                    tw * (e - k) as f64 / n,
                    (rh - 1.0).max(1.0),
                    colour(v as usize - 1)
                );
            }
            k = e;
        }
    }
    let y = 28.0 + rows.len() as f64 * rh + 14.0;
    let _ = writeln!(
        s,
        "<text x=\"{lw}\" y=\"{y:.1}\">0</text><text x=\"{}\" y=\"{y:.1}\" text-anchor=\"end\">{}</text>",
        lw + tw,
        ns(span_ns)
    );
    let mut x = lw;
    for v in used.iter().take(6) {
        let name = regions.get(*v as usize - 1).map_or("", String::as_str);
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y + 8.0,
            colour(*v as usize - 1),
            x + 13.0,
            y + 17.0,
            esc(&fit(name, 14))
        );
        x += 100.0;
    }
    s + "</svg>\n"
}

fn minmax(it: impl Iterator<Item = f64>) -> (f64, f64) {
    it.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    })
}

fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        s.chars().take(w - 1).chain(std::iter::once('…')).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed_and_escaped() {
        let b = bars("t<1>", &[("a&b".into(), 2e6), ("c".into(), 1e6)]);
        assert!(b.contains("t&lt;1&gt;") && b.contains("a&amp;b") && b.ends_with("</svg>\n"));
        assert_eq!(b.matches("<rect").count(), 3);
        let hostile = bars("t\x1b[2J", &[("a\0b\x07".into(), 1.0)]);
        assert!(
            !hostile.chars().any(|c| c.is_control() && c != '\n'),
            "{hostile:?}"
        );
        let s = scaling("p", &[(1.0, 8.0), (2.0, 4.5), (4.0, 2.6)]);
        assert_eq!(s.matches("<circle").count(), 3);
        let t = timeline(
            "x",
            1e9,
            &[("r0".into(), vec![1, 1, 0, 2])],
            &["a".into(), "b".into()],
        );
        // Two runs of colour, and a legend entry each.
        assert_eq!(t.matches("<rect").count(), 1 + 2 + 2);
    }

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(
            esc("a\x1b[31mb\u{202e}c\td\u{85}\n"),
            "a\\x1b[31mb\\u{202e}c\\td\\u{85}\\n"
        );
        let b = bars("t", &[("x\x01y".into(), 1.0)]);
        assert!(!b.chars().any(|c| c.is_control() && c != '\n'), "{b}");
    }
}
