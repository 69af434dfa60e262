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

/// Where to click on the first timeline to hit a visit of location row
/// `row`, from the page's own data: the middle of the visible part of the
/// visit with the widest part in view (page coordinates), and the names of
/// the regions visited there (the click names the innermost).
fn visit_to_click(b: &mut Browser, row: usize) -> (f64, f64, Vec<String>) {
    let v: Value = b
        .eval(&format!(
            "(() => {{
              const tl = pxState.timelines[0], L = tl.rowsLayout(), v = tl.view, row = {row};
              const lists = [tl.long, ...tl.tiles].filter(x => x);
              let best = null;
              for (const u of lists) for (let i = 0; i < u.n; i++) {{
                if (u.cols[4][i] !== row) continue;
                const a = Math.max(u.cols[0][i], v.t0), e = Math.min(u.cols[0][i] + u.cols[1][i], v.t1);
                if (e > a && (!best || e - a > best.w)) best = {{ w: e - a, t: (a + e) / 2 }};
              }}
              if (!best) return null;
              const names = [];
              for (const u of lists) for (let i = 0; i < u.n; i++) {{
                const a = u.cols[0][i], e = a + u.cols[1][i];
                if (u.cols[4][i] === row && a <= best.t && best.t <= e) names.push(tl.d.regions[u.cols[2][i]].name);
              }}
              const r = tl.canvas.getBoundingClientRect();
              return {{ x: r.left + (best.t - v.t0) / (v.t1 - v.t0) * r.width,
                        y: r.top + (L.top + (tl.slot(L, row) + 0.5) * L.rowH) * r.height / tl.canvas.height,
                        px: best.w / (v.t1 - v.t0) * r.width, names }};
            }})()"
        ))
        .unwrap();
    assert!(!v.is_null(), "no visit of row {row} in view");
    // Wide enough that a click cannot miss it by rounding.
    assert!(v["px"].as_f64().unwrap() >= 4.0, "{v}");
    let names = v["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    (v["x"].as_f64().unwrap(), v["y"].as_f64().unwrap(), names)
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
    // A click on a visit of the second row (a worker), chosen from the
    // page's data: the middle of the visit with the widest part in view.
    let target = visit_to_click(&mut b, 1);
    mouse_click(&mut b, target.0, target.1);
    let info = text(&mut b, "pxState.timelines[0].info.textContent");
    assert!(info.contains("duration"), "{info}");
    assert!(
        target.2.iter().any(|n| info.contains(&format!(": {n} ("))),
        "{info} names none of {:?}",
        target.2
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

/// The texts of the first column of the flat profile.
fn flat_names(b: &mut Browser) -> Vec<String> {
    click(b, "nav-profile");
    b.eval("[...document.querySelectorAll('#view-profile table.flat tbody tr td:first-child')].map(e => e.textContent)")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn names_that_are_markup_show_literally_and_the_page_works() {
    let d = tmp("html-markup");
    let exp = d.join("e");
    let names = [
        "<!--<script>",
        "</script><script>window.pwned = 1</script>",
        "a&amp;b <b>bold</b> ]]> \u{2028}",
    ];
    let regions: Vec<(&str, &str, u32)> = names.iter().map(|n| (*n, "", 0)).collect();
    synth::named_regions(&exp, &regions, "<!--", "<script>", 3);
    let out = d.join("e.html");
    let title = "<!--<script>title</script>";
    html(
        &[
            exp.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--no-analysis",
            "--title",
            title,
        ],
        &d,
    );
    let mut b = browser();
    // The page gets drawn: nothing in it ended its script early.
    open(&mut b, &out);
    assert_eq!(b.eval("typeof window.pwned").unwrap(), json!("undefined"));
    assert_eq!(text(&mut b, "document.title"), title);
    assert_eq!(
        text(&mut b, "document.querySelector('header h1').textContent"),
        title
    );
    let shown = flat_names(&mut b);
    for n in names {
        let n = n.replace('\u{2028}', "\\u{2028}");
        assert!(shown.contains(&n), "{n:?} not in {shown:?}");
    }
    assert_eq!(count(&mut b, "#view-profile table b"), 0);
    click(&mut b, "nav-timeline");
    assert_eq!(
        text(&mut b, "pxState.timelines[0].t.labels[0]"),
        "rank 0 thread 0 (<!--)"
    );
    assert!(text(
        &mut b,
        "document.querySelector('#view-timeline .legend').textContent"
    )
    .contains(names[0]));
    click(&mut b, "nav-summary");
    assert!(text(&mut b, "document.getElementById('view-summary').innerText").contains("<script>"));
    assert_clean(&b);
}

#[test]
fn control_characters_in_names_are_inert() {
    let d = tmp("html-control");
    let exp = d.join("e");
    let names = [
        ("esc\x1b[2Jred", "esc\\x1b[2Jred"),
        ("rtl\u{202e}gnp.exe", "rtl\\u{202e}gnp.exe"),
        ("two\nlines\r", "two\\x0alines\\x0d"),
        ("bell\x07\x00nul\u{85}", "bell\\x07\\x00nul\\x85"),
        ("tab\tstays", "tab\tstays"),
    ];
    let regions: Vec<(&str, &str, u32)> = names.iter().map(|n| (n.0, "", 0)).collect();
    synth::named_regions(&exp, &regions, "th\x1b]0;x\x07", "prog", 3);
    let out = d.join("e.html");
    let svg = d.join("svg");
    html(
        &[
            exp.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--no-analysis",
            "--svg",
            svg.to_str().unwrap(),
        ],
        &d,
    );
    let mut b = browser();
    open(&mut b, &out);
    let shown = flat_names(&mut b);
    for (_, inert) in names {
        assert!(
            shown.contains(&inert.to_string()),
            "{inert:?} not in {shown:?}"
        );
    }
    click(&mut b, "nav-timeline");
    assert_eq!(
        text(&mut b, "pxState.timelines[0].t.labels[0]"),
        "rank 0 thread 0 (th\\x1b]0;x\\x07)"
    );
    // Nothing the page shows holds a control character but tabs and the
    // page's own line breaks.
    let all = text(
        &mut b,
        "(() => { const c = document.body.cloneNode(true); c.querySelectorAll('script').forEach(s => s.remove()); return c.textContent; })()",
    );
    let bad: Vec<char> = all
        .chars()
        .filter(|&c| (c.is_control() && c != '\t' && c != '\n') || c == '\u{202e}')
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
    assert_clean(&b);
    // The SVG charts too: XML allows no control characters but tab and
    // line breaks.
    let profile = std::fs::read_to_string(svg.join("profile.svg")).unwrap();
    assert!(profile.contains("esc\\x1b[2Jred"), "{profile}");
    assert!(
        !profile
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}'),
        "{profile}"
    );
}

/// Runs `parallax html ARGS`, failing if it takes more than a minute.
fn html_within_a_minute(args: &[&str]) -> String {
    let mut child = parallax()
        .arg("html")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            assert!(st.success(), "{err}");
            return err;
        }
        if std::time::Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("parallax html {args:?} did not finish in a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn source_lines_come_only_from_regular_source_files() {
    let d = tmp("html-source");
    // A file a crafted experiment may name, without a source extension.
    let secret = d.join("shadow");
    std::fs::write(
        &secret,
        "root:$6$SECRETHASH:19000:0:99999:7:::\n".repeat(20),
    )
    .unwrap();
    let link = d.join("evil.c");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    // Reading a FIFO waits for a writer: it must not even be opened so.
    let fifo = d.join("pipe.c");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let good = d.join("kernel.c");
    let lines: String = (1..=30).map(|i| format!("int line_{i};\n")).collect();
    std::fs::write(&good, lines).unwrap();
    let p = |x: &std::path::Path| x.to_str().unwrap().to_string();
    let (secret_s, link_s, fifo_s, good_s) = (p(&secret), p(&link), p(&fifo), p(&good));
    let regions = [
        ("fifo_region", fifo_s.as_str(), 1),
        ("secret_region", secret_s.as_str(), 3),
        ("link_region", link_s.as_str(), 3),
        ("zero_region", "/dev/zero", 1),
        ("good_region", good_s.as_str(), 10),
    ];
    let exp = d.join("e");
    synth::named_regions(&exp, &regions, "main", "prog", 2);
    let findings: Vec<Value> = regions
        .iter()
        .map(|r| json!({"pattern": "wait_at_barrier", "severity_s": 0.001, "rank": 0, "thread": 0, "region": r.0}))
        .collect();
    let ffile = d.join("findings.json");
    std::fs::write(&ffile, json!({ "findings": findings }).to_string()).unwrap();
    let out = d.join("e.html");
    html_within_a_minute(&[
        exp.to_str().unwrap(),
        "--findings",
        ffile.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(!page.contains("SECRETHASH"), "the secret is in the page");
    assert!(page.contains("int line_10;"));
    let mut b = browser();
    open(&mut b, &out);
    click(&mut b, "nav-findings");
    let mut why = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        b.eval(&format!(
            "[...document.querySelectorAll('#view-findings table.findings tbody tr')].find(tr => tr.textContent.includes('{}')).click()",
            r.0
        ))
        .unwrap();
        click(&mut b, "nav-findings");
        let note = text(
            &mut b,
            "(document.querySelector('#view-findings .source-note') || {}).textContent || ''",
        );
        let src = text(
            &mut b,
            "(document.querySelector('#view-findings pre.src') || {}).textContent || ''",
        );
        if i == 4 {
            assert!(
                src.contains("int line_10;") && note.is_empty(),
                "{src} {note}"
            );
        } else {
            assert!(
                src.is_empty() && note.contains("is not embedded"),
                "{}: {note}",
                r.0
            );
            why.push(note);
        }
    }
    assert!(why[0].contains("not a regular file"), "{}", why[0]);
    assert!(why[1].contains("not a source file"), "{}", why[1]);
    assert!(why[2].contains("which is not a source file"), "{}", why[2]);
    assert!(why[3].contains("not a source file"), "{}", why[3]);
    assert_clean(&b);
}

/// Peak resident memory (KiB) of `parallax ARGS`, which must succeed,
/// measured so that it holds only what the command keeps: on one CPU (the
/// analysis runs one worker per CPU, and how many chunks are in flight
/// then depends on how the workers interleave) and with the allocator
/// returning freed pages at once (mimalloc otherwise keeps a varying
/// number of them committed).
// `wait4` reaps the child, with its resource usage.
#[allow(clippy::zombie_processes)]
fn peak_rss_kib(args: &[&str], stderr_to: &Path) -> u64 {
    use std::os::unix::process::CommandExt;
    let mut cmd = parallax();
    cmd.env("MIMALLOC_PURGE_DELAY", "0");
    // SAFETY: only an async-signal-safe system call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let mut cpus: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut cpus);
            match libc::sched_setaffinity(0, std::mem::size_of_val(&cpus), &cpus) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let child = cmd
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(stderr_to).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    let err = std::fs::read_to_string(stderr_to).unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{err}"
    );
    usage.ru_maxrss as u64
}

#[test]
fn memory_and_page_size_do_not_grow_with_the_trace() {
    let d = tmp("html-memory");
    let mut figures = Vec::new();
    for iterations in [2_500, 50_000] {
        let exp = d.join(format!("e{iterations}"));
        let events = synth::mpi_like(&exp, 4, iterations);
        let out = d.join(format!("e{iterations}.html"));
        let rss = peak_rss_kib(
            &[
                "html",
                exp.to_str().unwrap(),
                "--no-analysis",
                "--max-visits",
                "10000",
                "-o",
                out.to_str().unwrap(),
            ],
            &d.join("stderr"),
        );
        let size = std::fs::metadata(&out).unwrap().len();
        eprintln!("{events} events: peak RSS {rss} KiB, page {size} bytes");
        figures.push((events, rss, size));
        std::fs::remove_dir_all(&exp).unwrap();
    }
    let ((e0, rss0, size0), (e1, rss1, size1)) = (figures[0], figures[1]);
    assert!(e1 >= 19 * e0);
    // Twenty times the events: the same memory and page, within a few
    // percent (page layout).
    assert!(rss1 <= rss0 + rss0 / 10, "{rss0} KiB then {rss1} KiB");
    assert!(
        size1 <= size0 + size0 / 10,
        "{size0} bytes then {size1} bytes"
    );
}

#[test]
fn a_summarized_trace_says_what_it_holds_and_zooms_to_single_visits_within_it() {
    let d = tmp("html-summarized");
    let exp = d.join("e");
    // 80 008 events, 32 004 visits over 168 ms.
    synth::mpi_like(&exp, 4, 2_000);
    let out = d.join("e.html");
    let msg = html(
        &[
            exp.to_str().unwrap(),
            "--no-analysis",
            "--max-visits",
            "4000",
            "-o",
            out.to_str().unwrap(),
        ],
        &d,
    );
    assert!(msg.contains("single visits for 0.000000 s to"), "{msg}");
    let mut b = browser();
    open(&mut b, &out);
    assert!(
        text(&mut b, "document.getElementById('view-summary').innerText")
            .contains("single visits of")
    );
    click(&mut b, "nav-timeline");
    let note = text(&mut b, "document.getElementById('tl-detail').textContent");
    assert!(
        note.contains("--window") && note.contains("of 32,004 visits"),
        "{note}"
    );
    let detail = b.eval("pxState.timelines[0].detail").unwrap();
    let (t0, t1) = (
        detail["t0"].as_f64().unwrap(),
        detail["t1"].as_f64().unwrap(),
    );
    let span = b
        .eval("pxState.timelines[0].t.span")
        .unwrap()
        .as_f64()
        .unwrap();
    assert!(t0 == 0.0 && t1 > 0.05 * span && t1 < 0.5 * span, "{detail}");
    assert!(detail["kept"].as_u64().unwrap() <= 4000, "{detail}");
    // Within the detail: single visits, and a click names one.
    let zoom = |b: &mut Browser, a: f64, e: f64, mode: &str| {
        let n = b
            .eval("pxState.timelines[0].drawn")
            .unwrap()
            .as_u64()
            .unwrap();
        b.eval(&format!("pxState.timelines[0].setView({a}, {e})"))
            .unwrap();
        b.wait_for(
            &format!("pxState.timelines[0].drawn > {n}"),
            Duration::from_secs(10),
        )
        .unwrap();
        let m = text(b, "pxState.timelines[0].mode");
        assert!(m.starts_with(mode), "{m} at {a}..{e}");
    };
    zoom(&mut b, 0.4 * t1, 0.45 * t1, "visits");
    let target = visit_to_click(&mut b, 2);
    mouse_click(&mut b, target.0, target.1);
    let info = text(&mut b, "pxState.timelines[0].info.textContent");
    assert!(info.contains("duration"), "{info}");
    // Across its end: visits on one side, the summary on the other.
    zoom(&mut b, t1 - 100_000.0, t1 + 100_000.0, "visits and summary");
    shot(&mut b, &d, "summarized-edge");
    // Past it, zoomed as far: the summary, and a click says how to see
    // single visits there.
    let a = 0.8 * span;
    zoom(&mut b, a, a + 50_000.0, "level");
    let (x, y) = {
        let v = b
            .eval("(() => { const tl = pxState.timelines[0], L = tl.rowsLayout(), r = tl.canvas.getBoundingClientRect(); return [r.left + r.width / 2, r.top + (L.top + 0.5 * L.rowH) * r.height / tl.canvas.height]; })()")
            .unwrap();
        (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
    };
    mouse_click(&mut b, x, y);
    let info = text(&mut b, "pxState.timelines[0].info.textContent");
    assert!(
        info.contains("mostly") && info.contains("--window"),
        "{info}"
    );
    // More changes between busy and waiting than the page follows: an
    // estimate, and the page says so.
    click(&mut b, "nav-concurrency");
    assert_eq!(count(&mut b, "#conc-estimate"), 1);
    assert_clean(&b);

    // A window asked for: its single visits, and the timeline opens there.
    let out = d.join("w.html");
    html(
        &[
            exp.to_str().unwrap(),
            "--no-analysis",
            "--window",
            "100ms..101ms",
            "-o",
            out.to_str().unwrap(),
        ],
        &d,
    );
    open(&mut b, &out);
    click(&mut b, "nav-timeline");
    b.wait_for(
        "pxState.timelines[0].mode === 'visits'",
        Duration::from_secs(10),
    )
    .unwrap();
    let view = b
        .eval("[pxState.timelines[0].view.t0, pxState.timelines[0].view.t1]")
        .unwrap();
    assert_eq!(view, json!([100_000_000, 101_000_000]));
    assert!(
        text(&mut b, "document.getElementById('tl-detail').textContent")
            .contains("window asked for")
    );
    assert_clean(&b);
}
