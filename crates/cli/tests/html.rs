//! The HTML report opened in headless Chromium (Debian's /usr/bin/chromium,
//! no network): no console error, no request outside the file, every view
//! present and working when clicked, screenshots of each; and the SVG
//! charts written beside it.

mod cdp;
mod common;
mod synth;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use cdp::Browser;
use common::{parallax, stderr, tmp};

fn demo(dir: &Path, threads: &str) {
    let o = parallax()
        .args([
            "demo",
            "--no-db",
            "--iterations",
            "8",
            "--threads",
            threads,
            "--out",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

fn html(args: &[&str], cwd: &Path) -> String {
    let o = parallax()
        .arg("html")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stderr(&o)
}

fn browser() -> Browser {
    let bin = cdp::chromium()
        .expect("chromium is installed by scripts/setup.sh (apt-get install chromium)");
    Browser::launch(&bin, 1400, 900).expect("start chromium")
}

/// Opens `file`, waits until the page is drawn, and checks that nothing
/// went wrong and nothing was fetched.
fn open(b: &mut Browser, file: &Path) -> f64 {
    b.open(file).unwrap();
    let ready = b
        .wait_for("window.pxReady", Duration::from_secs(30))
        .unwrap();
    assert_clean(b);
    ready.as_f64().unwrap()
}

fn assert_clean(b: &Browser) {
    let errors = b.errors();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    let outside: Vec<String> = b
        .requests()
        .into_iter()
        .filter(|u| !u.starts_with("file://") && !u.starts_with("data:"))
        .collect();
    assert!(outside.is_empty(), "the page asked for {outside:?}");
}

fn click(b: &mut Browser, id: &str) {
    let ok = b
        .eval(&format!(
            "(() => {{ const e = document.getElementById('{id}'); if (!e) return false; e.click(); return true; }})()"
        ))
        .unwrap();
    assert_eq!(ok, json!(true), "no element #{id}");
}

fn count(b: &mut Browser, selector: &str) -> u64 {
    b.eval(&format!("document.querySelectorAll('{selector}').length"))
        .unwrap()
        .as_u64()
        .unwrap()
}

fn text(b: &mut Browser, expr: &str) -> String {
    b.eval(expr).unwrap().as_str().unwrap_or("").to_string()
}

fn shot(b: &mut Browser, dir: &Path, name: &str) {
    // Let the view's drawing finish before the picture.
    b.eval("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
        .unwrap();
    let p = dir.join(format!("{name}.png"));
    b.screenshot(&p).unwrap();
    let png = std::fs::read(&p).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 5_000,
        "{}",
        p.display()
    );
}

/// A mouse click at (x, y) of the page, as a person would make it.
fn mouse_click(b: &mut Browser, x: f64, y: f64) {
    for t in ["mousePressed", "mouseReleased"] {
        b.call(
            "Input.dispatchMouseEvent",
            json!({"type": t, "x": x, "y": y, "button": "left", "clickCount": 1}),
        )
        .unwrap();
    }
}

fn canvas_box(b: &mut Browser, selector: &str) -> (f64, f64, f64, f64) {
    let v: Value = b
        .eval(&format!(
            "(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }})()"
        ))
        .unwrap();
    let f = |i: usize| v[i].as_f64().unwrap();
    (f(0), f(1), f(2), f(3))
}

#[test]
fn demo_report_views_work_in_chromium() {
    let d = tmp("html-demo");
    let (a, b2) = (d.join("run-a"), d.join("run-b"));
    demo(&a, "3");
    demo(&b2, "2");
    let findings = d.join("findings.json");
    std::fs::write(
        &findings,
        r#"{"findings":[{"pattern":"wait_at_barrier","severity_s":0.004,"rank":0,"thread":1,"region":"compute","culprits":[{"rank":0,"thread":3}]}]}"#,
    )
    .unwrap();
    let out = d.join("report.html");
    let svg = d.join("svg");
    // From the workspace root, so that the demo's source file is readable
    // and the finding shows its lines.
    let ws = common::workspace();
    let msg = html(
        &[
            a.to_str().unwrap(),
            b2.to_str().unwrap(),
            "--compensated",
            b2.to_str().unwrap(),
            "--findings",
            findings.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
        &ws,
    );
    assert!(msg.contains("wrote"), "{msg}");
    for f in [
        "timeline.svg",
        "profile.svg",
        "load-balance.svg",
        "scaling.svg",
    ] {
        let s = std::fs::read_to_string(svg.join(f)).unwrap();
        assert!(
            s.starts_with("<svg") && s.trim_end().ends_with("</svg>"),
            "{f}"
        );
    }

    let shots = d.join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let mut b = browser();
    open(&mut b, &out);
    assert!(
        text(&mut b, "document.getElementById('view-summary').innerText")
            .contains("Heaviest regions")
    );
    shot(&mut b, &shots, "summary");

    // Profile: the flat table and the call tree, sorted and searched.
    click(&mut b, "nav-profile");
    assert!(count(&mut b, "#view-profile table.flat tbody tr") >= 5);
    assert!(count(&mut b, "#view-profile table.tree tbody tr") >= 3);
    let comp_cols = text(
        &mut b,
        "document.querySelector('#view-profile table.flat thead').innerText",
    );
    assert!(comp_cols.contains("compensated"), "{comp_cols}");
    b.eval("(() => { const s = pxState.views.profile.search; s.value = 'compute'; s.dispatchEvent(new Event('input')); })()").unwrap();
    assert_eq!(count(&mut b, "#view-profile table.flat tbody tr"), 1);
    assert!(count(&mut b, "#view-profile table.tree mark") >= 1);
    b.eval("(() => { const s = pxState.views.profile.search; s.value = ''; s.dispatchEvent(new Event('input')); })()").unwrap();
    let first = |b: &mut Browser| {
        text(
            b,
            "document.querySelector('#view-profile table.flat tbody tr td').innerText",
        )
    };
    let before = first(&mut b);
    // Twice: by name ascending, then descending.
    for _ in 0..2 {
        b.eval("document.querySelector('#view-profile table.flat th[data-key=name]').click()")
            .unwrap();
    }
    assert_ne!(
        first(&mut b),
        before,
        "sorting by name changes the first row"
    );
    b.eval("(() => { const s = pxState.views.profile.select; s.value = '1'; s.dispatchEvent(new Event('change')); })()").unwrap();
    assert!(count(&mut b, "#view-profile table.flat tbody tr") >= 3);
    shot(&mut b, &shots, "profile");

    // Timeline: measured and compensated, zoom to single visits, click one.
    click(&mut b, "nav-timeline");
    assert_eq!(count(&mut b, "#view-timeline canvas"), 2);
    let drawn = |b: &mut Browser| {
        b.eval("pxState.timelines[0].drawn")
            .unwrap()
            .as_u64()
            .unwrap()
    };
    let width = |b: &mut Browser| {
        b.eval("pxState.timelines[0].view.t1 - pxState.timelines[0].view.t0")
            .unwrap()
            .as_f64()
            .unwrap()
    };
    // "all" shows the longer of the two runs whole, also after a zoom.
    click(&mut b, "tl-in");
    click(&mut b, "tl-all");
    let longest = b
        .eval("Math.max(...pxState.timelines.map(t => t.t.span))")
        .unwrap()
        .as_f64()
        .unwrap();
    assert_eq!(width(&mut b), longest);
    let n0 = drawn(&mut b);
    let before = width(&mut b);
    click(&mut b, "tl-in");
    b.wait_for(
        &format!("pxState.timelines[0].drawn > {n0}"),
        Duration::from_secs(10),
    )
    .unwrap();
    let span = width(&mut b);
    assert!(
        (span / before - 0.5).abs() < 1e-6,
        "zoomed in: {span} of {before}"
    );
    assert_eq!(text(&mut b, "pxState.timelines[0].mode"), "visits");
    // The middle half of the measured run: the two runs shown are separate
    // demo runs, and the longer may be the second, whose middle can fall
    // after the first's end.
    let n1 = drawn(&mut b);
    b.eval(
        "(() => { const t = pxState.timelines[0]; t.setView(t.t.span / 4, 3 * t.t.span / 4); })()",
    )
    .unwrap();
    b.wait_for(
        &format!("pxState.timelines[0].drawn > {n1}"),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(text(&mut b, "pxState.timelines[0].mode"), "visits");
    let (x, y, w, _) = canvas_box(&mut b, "#view-timeline canvas");
    // Second row (a worker), in the middle of the view.
    let row_y = b.eval("(() => { const L = pxState.timelines[0].rowsLayout(); return L.top + 1.5 * L.rowH; })()").unwrap().as_f64().unwrap();
    mouse_click(&mut b, x + w / 2.0, y + row_y * 900.0 / 900.0);
    let info = text(&mut b, "pxState.timelines[0].info.textContent");
    assert!(
        info.contains("duration") || info.contains("mostly"),
        "{info}"
    );
    shot(&mut b, &shots, "timeline");

    click(&mut b, "nav-comm");
    assert!(
        text(&mut b, "document.getElementById('view-comm').innerText").contains("communication")
    );
    click(&mut b, "nav-balance");
    assert_eq!(count(&mut b, "#view-balance canvas"), 1);
    assert!(
        text(&mut b, "document.getElementById('view-balance').innerText").contains("imbalance")
    );
    shot(&mut b, &shots, "balance");
    click(&mut b, "nav-concurrency");
    assert!(text(
        &mut b,
        "document.getElementById('view-concurrency').innerText"
    )
    .contains("CEFF"));
    shot(&mut b, &shots, "concurrency");

    // A finding leads to its place in the timeline and in the source.
    click(&mut b, "nav-findings");
    assert_eq!(count(&mut b, "#view-findings table.findings tbody tr"), 1);
    b.eval("document.querySelector('#view-findings table.findings tbody tr').click()")
        .unwrap();
    assert_eq!(text(&mut b, "pxState.current"), "timeline");
    assert_eq!(
        b.eval("pxState.timelines[0].highlight.row").unwrap(),
        json!(1)
    );
    // The region's line is marked, with the function around it.
    let src = text(
        &mut b,
        "(document.querySelector('#view-findings pre.src') || {}).textContent || ''",
    );
    assert!(src.contains("fn compute("), "source: {src}");
    assert_eq!(count(&mut b, "#view-findings pre.src b"), 1);
    shot(&mut b, &shots, "finding");

    click(&mut b, "nav-runs");
    assert!(count(&mut b, "#view-runs table.compare tbody tr") >= 5);
    assert_eq!(count(&mut b, "#view-runs svg#scaling circle"), 2);
    shot(&mut b, &shots, "runs");
    assert_clean(&b);
    eprintln!("screenshots in {}", shots.display());
}

#[test]
fn a_thousand_ranks_with_messages_stay_readable() {
    let d = tmp("html-wide");
    let exp = d.join("wide");
    let events = synth::mpi_like(&exp, 1000, 20);
    assert_eq!(events, 1000 * (20 * synth::EVENTS_PER_ITERATION + 2));
    let out = d.join("wide.html");
    html(&[exp.to_str().unwrap(), "-o", out.to_str().unwrap()], &d);
    let mut b = browser();
    open(&mut b, &out);
    click(&mut b, "nav-timeline");
    // 1000 rows do not fit: locations share rows, each labelled by range.
    let layout = b.eval("pxState.timelines[0].rowsLayout()").unwrap();
    assert!(layout["group"].as_u64().unwrap() > 1, "{layout}");
    assert!(layout["rowH"].as_f64().unwrap() >= 4.0, "{layout}");
    assert!(text(&mut b, "pxState.timelines[0].mode").starts_with("level"));
    // Messages are drawn as arrows.
    assert_eq!(
        b.eval("pxState.timelines[0].t.narrows").unwrap(),
        json!(20_000)
    );
    shot(&mut b, &d, "wide-timeline");
    // Zoomed in far enough, single visits of every location are drawn.
    b.eval("pxState.timelines[0].setView(100000, 130000)")
        .unwrap();
    b.wait_for(
        "pxState.timelines[0].mode === 'visits'",
        Duration::from_secs(20),
    )
    .unwrap();
    shot(&mut b, &d, "wide-zoomed");
    // Ten of them, one row each.
    b.eval("(() => { const i = document.getElementById('tl-rows'); i.value = '100-109'; i.dispatchEvent(new Event('change')); })()").unwrap();
    let layout = b.eval("pxState.timelines[0].rowsLayout()").unwrap();
    assert_eq!(
        (layout["group"].as_u64(), layout["shown"].as_u64()),
        (Some(1), Some(10)),
        "{layout}"
    );
    shot(&mut b, &d, "wide-ten");
    // Without --findings the bottleneck analysis ran: every receive
    // waits for a late sender, and a finding leads to its row.
    click(&mut b, "nav-findings");
    assert!(count(&mut b, "#view-findings table.findings tbody tr") >= 10);
    assert!(
        text(&mut b, "document.getElementById('view-findings').innerText").contains("late_sender")
    );
    b.eval("document.querySelector('#view-findings table.findings tbody tr').click()")
        .unwrap();
    assert_eq!(text(&mut b, "pxState.current"), "timeline");
    assert!(b
        .eval("pxState.timelines[0].highlight.row")
        .unwrap()
        .is_u64());
    assert!(text(
        &mut b,
        "document.querySelector('#view-findings p.hint').textContent"
    )
    .contains("MPI_Recv"));
    click(&mut b, "nav-comm");
    assert_eq!(count(&mut b, "#view-comm canvas"), 1);
    let pairs = b.eval("MEAS.matrix.cells.length").unwrap();
    assert_eq!(pairs, json!(1000));
    click(&mut b, "nav-balance");
    shot(&mut b, &d, "wide-balance");
    assert_clean(&b);
}

#[test]
fn bad_findings_file_is_a_clear_error() {
    let d = tmp("html-bad");
    let exp = d.join("e");
    synth::mpi_like(&exp, 2, 3);
    let f = d.join("f.json");
    std::fs::write(&f, "{not json").unwrap();
    let o = parallax()
        .args([
            "html",
            exp.to_str().unwrap(),
            "--findings",
            f.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("f.json"), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_parallax"))
        .args(["html", d.join("nothing").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read the experiment"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn text_report_fits_100_columns_plain_in_a_pipe_coloured_when_asked() {
    let d = tmp("report-width");
    let exp = d.join("wide");
    synth::mpi_like(&exp, 300, 5);
    let plain = parallax()
        .args(["report", "--total-only"])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(plain.status.success(), "{}", stderr(&plain));
    let text = common::stdout(&plain);
    // 300 locations' concurrency histogram wraps instead of running on.
    assert!(
        text.contains("Concurrency CEFF") && text.contains("MPI_Barrier"),
        "{text}"
    );
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(!text.contains('\x1b'), "colour in a pipe");
    let forced = parallax()
        .args(["report", "--total-only"])
        .arg(&exp)
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    let coloured = common::stdout(&forced);
    assert!(coloured.contains("\x1b[1mFlat profile"), "{coloured}");
    // Without the escapes it is the same text.
    let stripped: String = {
        let mut out = String::new();
        let mut it = coloured.chars().peekable();
        while let Some(c) = it.next() {
            if c == '\x1b' {
                for c in it.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    assert_eq!(stripped, text);
}

#[test]
fn a_profile_without_trace_shows_every_view_but_the_timeline() {
    let d = tmp("html-profile");
    let exp = d.join("p");
    let o = parallax()
        .args([
            "demo",
            "--no-db",
            "--mode",
            "profile",
            "--iterations",
            "4",
            "--out",
        ])
        .arg(&exp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("p.html");
    html(&[exp.to_str().unwrap(), "-o", out.to_str().unwrap()], &d);
    let mut b = browser();
    open(&mut b, &out);
    for v in [
        "profile",
        "timeline",
        "comm",
        "balance",
        "concurrency",
        "findings",
        "runs",
    ] {
        click(&mut b, &format!("nav-{v}"));
        let shown = text(
            &mut b,
            &format!("document.getElementById('view-{v}').innerText"),
        );
        assert!(!shown.trim().is_empty(), "{v} is empty");
    }
    assert!(
        text(&mut b, "document.getElementById('view-timeline').innerText")
            .contains("no event trace")
    );
    assert!(count(&mut b, "#view-profile table.flat tbody tr") >= 5);
    assert_clean(&b);
}
