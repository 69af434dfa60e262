//! The bottleneck report (`parallax analyze`) as text: the findings with
//! their causes and hints, root causes, the critical path and load balance.

use std::fmt::Write as _;

use parallax_analysis::bottleneck::{profiles, Balance, Finding, Report, Where};
use parallax_output::text::{inert, inert_lines};

use super::fmt;
use super::wrap::{wrap, wrap_separated, wrap_words, WIDTH};

/// `part` over `whole`, 0 for an empty whole.
pub fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

/// The load-balance rows, most computation first: an overloaded location
/// heads the table.
pub fn balance_rows(r: &Report) -> Vec<&Balance> {
    let mut v: Vec<&Balance> = r.balance.iter().collect();
    v.sort_by(|a, b| {
        b.computation_s
            .total_cmp(&a.computation_s)
            .then(a.at.cmp(&b.at))
    });
    v
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

/// The line that ends a table cut to `top` of `total` rows.
fn more(s: &mut String, total: usize, top: usize, what: &str) {
    if total > top {
        let _ = writeln!(s, "  … {} more {what} (--top N shows more)", total - top);
    }
}

/// `text` with every line longer than 100 columns wrapped at word
/// boundaries, continuation lines indented under the line's first word.
fn fit_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.chars().count() <= WIDTH {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let mut words = line.split_whitespace().map(str::to_string);
        let head = format!("{}{}", " ".repeat(lead), words.next().unwrap_or_default());
        let rest: Vec<String> = words.collect();
        wrap_words(&mut out, &head, &rest, lead + 5);
    }
    out
}

/// The report as text, each table cut to `top` rows.
pub fn text(r: &Report, top: usize) -> String {
    let mut s = String::new();
    if r.from_profiles {
        let _ = writeln!(
            s,
            "Bottleneck analysis from profiles only (the run has no trace), {} finding(s)",
            r.findings.len()
        );
        wrap(
            &mut s,
            "Not analysed (they need a trace; measure with --mode trace or both):",
            &profiles::NEED_TRACE
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>(),
            4,
        );
    } else {
        let _ = writeln!(
            s,
            "Bottleneck analysis: {} events, wall time {}, {} finding(s)",
            r.events,
            ms(r.wall_s),
            r.findings.len()
        );
    }
    if r.findings.is_empty() {
        let _ = writeln!(s, "\nNo bottleneck above the detection thresholds.");
    }
    for (i, f) in r.findings.iter().take(top).enumerate() {
        finding(&mut s, r, i, f);
    }
    if r.findings.len() > top {
        let _ = writeln!(s);
        more(&mut s, r.findings.len(), top, "findings");
    }
    causes(&mut s, r, top);
    balance(&mut s, r, top);
    imbalance(&mut s, r, top);
    if let Some(l) = r.locality {
        let _ = writeln!(s, "One-sided accesses to the own rank: {:.1}%", 100.0 * l);
    }
    if !r.from_profiles {
        let _ = writeln!(
            s,
            "Waiting without a remote cause (uncontrollable): {}, {:.1}% of the {} locations' \
             measured time",
            ms(r.uncontrollable_s),
            100.0 * share(r.uncontrollable_s, r.measured_s),
            r.balance.len()
        );
    }
    if r.unmatched > 0 {
        let _ = writeln!(
            s,
            "Dependencies whose partner was not recorded: {}",
            r.unmatched
        );
    }
    for w in &r.warnings {
        let _ = writeln!(s, "warning: {}", inert(w));
    }
    // Names reach the hints too: what is left of a name's control
    // characters is made visible here.
    fit_lines(&inert_lines(&s))
}

/// The label of location `at`.
fn label(r: &Report, at: Where) -> String {
    r.names.label(at.rank, at.thread)
}

/// Finding `f`, ranked `i` from 0.
fn finding(s: &mut String, r: &Report, i: usize, f: &Finding) {
    let name = |at: Where| label(r, at);
    let _ = writeln!(
        s,
        "\n{:>2}. {} {} ({:.1}% of wall) at {} in {}",
        i + 1,
        f.pattern.name(),
        ms(f.severity_s),
        100.0 * share(f.severity_s, r.wall_s),
        name(f.at),
        fmt::fit(&f.region, 40)
    );
    if f.path.len() > 1 {
        let path: Vec<String> = f.path.iter().map(|x| inert(x).into_owned()).collect();
        wrap_separated(s, "    path:", &path, " >", 10);
    }
    if let Some(src) = &f.source {
        let _ = writeln!(s, "    source: {}", inert(src));
    }
    if !f.culprits.is_empty() {
        let c: Vec<String> = f
            .culprits
            .iter()
            .map(|c| format!("{} ({})", name(c.at), ms(c.severity_s)))
            .collect();
        wrap(s, "    caused by:", &c, 15);
    }
    if let Some(d) = &f.detection {
        let exp = d
            .expected_s
            .map_or(String::new(), |e| format!(", expected {}", ms(e)));
        let _ = writeln!(
            s,
            "    detected by: {} (mean {} per visit{exp}), {} instance(s)",
            d.method,
            ms(d.mean_s),
            f.instances
        );
    }
    let words: Vec<String> = f.hint.split_whitespace().map(str::to_string).collect();
    wrap_words(s, "    hint:", &words, 10);
}

/// Root causes (delay costs) and the critical path.
fn causes(s: &mut String, r: &Report, top: usize) {
    let name = |at: Where| label(r, at);
    if !r.delays.is_empty() {
        let _ = writeln!(
            s,
            "\nRoot causes (delay costs: computation that made others wait):"
        );
        for d in r.delays.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<28} {:<24} direct {:>12}  propagated {:>12}",
                fmt::fit(&name(d.at), 28),
                fmt::fit(&d.region, 24),
                ms(d.direct_s),
                ms(d.propagated_s)
            );
        }
        more(s, r.delays.len(), top, "root causes");
    }
    if !r.critical_path.is_empty() {
        let _ = writeln!(s, "\nCritical path ({}):", ms(r.critical_path_s));
        for p in r.critical_path.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<40} {:>12} {:>6.1}%",
                fmt::fit(&p.region, 40),
                ms(p.time_s),
                100.0 * p.share
            );
        }
        more(s, r.critical_path.len(), top, "regions");
    }
}

/// The load balance of the locations.
fn balance(s: &mut String, r: &Report, top: usize) {
    let name = |at: Where| label(r, at);
    let _ = writeln!(
        s,
        "\nLoad balance (most computation first; shares of each location's measured time):"
    );
    let _ = writeln!(
        s,
        "  {:<28} {:>12} {:>18} {:>18} {:>18}",
        "location", "measured", "computation", "communication", "synchronization"
    );
    let part = |v: f64, b: &Balance| format!("{} {:>3.0}%", ms(v), 100.0 * share(v, b.measured_s));
    let rows = balance_rows(r);
    for b in rows.iter().take(top) {
        let _ = writeln!(
            s,
            "  {:<28} {:>12} {:>18} {:>18} {:>18}",
            fmt::fit(&name(b.at), 28),
            ms(b.measured_s),
            part(b.computation_s, b),
            part(b.communication_s, b),
            part(b.synchronization_s, b)
        );
    }
    more(s, rows.len(), top, "locations");
}

/// Imbalance of regions across locations and of blocks between collectives.
fn imbalance(s: &mut String, r: &Report, top: usize) {
    let name = |at: Where| label(r, at);
    let imb: Vec<_> = r.regions.iter().filter(|x| x.max_s > x.mean_s).collect();
    if !imb.is_empty() {
        let _ = writeln!(
            s,
            "\nRegions across the locations that run them (max − mean, max/mean):"
        );
        for x in imb.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:<32} {:>12} {:>6.2} of {:>3} locations, slowest {}",
                fmt::fit(&x.region, 32),
                ms(x.max_s - x.mean_s),
                share(x.max_s, x.mean_s),
                x.locations,
                name(x.max_at)
            );
        }
        more(s, imb.len(), top, "regions");
    }
    let blocks: Vec<_> = r.blocks.iter().filter(|b| b.imbalance_s > 0.0).collect();
    if !blocks.is_empty() {
        let _ = writeln!(
            s,
            "\nBlocks between collectives (sum over blocks of max − mean work):"
        );
        for b in blocks.iter().take(top) {
            let worst = b
                .worst
                .map_or(String::new(), |w| format!(", mostly {}", name(w)));
            let _ = writeln!(
                s,
                "  {}: {} blocks, imbalance {}{worst}",
                b.name,
                b.blocks,
                ms(b.imbalance_s)
            );
        }
        more(s, blocks.len(), top, "communicators");
    }
}
