//! `bench --out DIR` writes `report.html`; the page is rendered in a real browser (headless
//! Chromium, Debian's `chromium`, installed by scripts/install-peers.sh): the DOM Chromium built
//! has the charts and tables, nothing was logged to the console (no script error, no CSP
//! violation: the page is self-contained), and a screenshot is kept in
//! `target/artifacts/report.png` (CI uploads it).

use crate::record_support as support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::*;

/// The Chromium binary: `$MCPTAPE_CHROMIUM`, else /usr/bin/chromium. A missing browser fails
/// the test (run scripts/install-peers.sh), it is never skipped.
fn chromium() -> PathBuf {
    let p = std::env::var_os("MCPTAPE_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        p.exists(),
        "{} is missing: run scripts/install-peers.sh (installs Debian's chromium)",
        p.display()
    );
    p
}

/// Runs headless Chromium on `page` with `extra` (`--dump-dom`, `--screenshot=…`); returns
/// (stdout, stderr). Console messages go to stderr (`--enable-logging=stderr --v=0`).
fn headless(page: &Path, profile: &Path, extra: &[String]) -> (String, String) {
    let mut cmd = Command::new(chromium());
    cmd.args(words("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage --enable-logging=stderr --v=0 --window-size=1280,2000"))
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    // A hung Chromium fails the test in run_bounded (killed and waited first).
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(90));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Lines of Chromium's stderr that report something the page logged or threw.
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

/// The `<svg id="{id}"` element of `dom`, up to its `</svg>`.
fn svg_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no svg#{id} in the DOM:\n{dom}"));
    let end = dom[start..].find("</svg>").expect("svg not closed") + start;
    &dom[start..end]
}

#[test]
fn bench_report_html_renders_in_headless_chromium_with_charts_and_no_console_errors() {
    let tmp = tempfile::tempdir().unwrap();
    // The transcript's file name carries markup: the page must show it as text.
    let evil = tmp.path().join("evil<img src=x onerror=alert(1)>.jsonl");
    std::fs::copy(corpus_transcript("everything-stdio.jsonl"), &evil).unwrap();
    let out = tmp.path().join("out");
    let (o, _) = run_bench(
        &evil,
        &["--latency", "fixed:2ms", "--reads", "50", "--turns", "20"],
        Some(&out),
    );
    assert_success(&o, "bench");
    let page = out.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no script, no external reference of any kind.
    assert!(!html.contains("<script"), "page has a script");
    assert!(!html.contains("src=\"http"), "page fetches");
    assert!(!html.contains("<link"), "page links a stylesheet");
    assert!(html.contains("evil&lt;img src=x onerror=alert(1)&gt;.jsonl"));

    let profile = tmp.path().join("profile");
    let (dom, stderr) = headless(&page, &profile, &["--dump-dom".to_owned()]);
    assert!(
        console_errors(&stderr).is_empty(),
        "console: {:?}",
        console_errors(&stderr)
    );
    // The DOM Chromium parsed: the charts with their curves, the tables.
    let spectrum = svg_of(&dom, "spectrum");
    assert_eq!(spectrum.matches("<polyline").count(), 3, "{spectrum}");
    for tick in [">50%<", ">90%<", ">99%<", ">99.9%<", ">99.99%<"] {
        assert!(spectrum.contains(tick), "spectrum tick {tick}");
    }
    let cdf = svg_of(&dom, "cdf");
    assert_eq!(cdf.matches("<polyline").count(), 2, "{cdf}");
    assert!(cdf.contains("class=\"deadline\""));
    assert!(cdf.contains("deadline 800.000 ms"));
    assert_has_all(&dom, &["<table id=\"params\">", "<th>seed</th><td>1</td>"]);
    assert!(dom.contains("<th>latency model</th><td>fixed:2ms</td>"));
    assert!(dom.contains("<table id=\"errors\">"));
    // The embedded server's lateness against the model.
    assert!(dom.contains("<table id=\"server\">"));
    assert!(dom.contains("lateness (achieved − scheduled)"));
    // The markup in the file name became text, not an element.
    assert!(
        !dom.contains("<img"),
        "an <img> element was parsed from the transcript name"
    );
    assert!(dom.contains("evil&lt;img src=x onerror=alert(1)&gt;.jsonl"));

    let shot = tmp.path().join("report.png");
    let (_, stderr) = headless(
        &page,
        &profile,
        &[format!("--screenshot={}", shot.display())],
    );
    assert!(console_errors(&stderr).is_empty(), "{stderr}");
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot: {e}\n{stderr}"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // 1280 × 2000 (IHDR width and height, big-endian).
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1280);
    assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 2000);
    let artifacts = repo_root().join("target/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("report.png"), &png).unwrap();
}

/// The console check is not blind: a page that throws and logs an error is caught.
#[test]
fn console_check_catches_a_page_that_throws() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>x</p><script>console.error('broken page'); undefinedFn();</script></body></html>",
    )
    .unwrap();
    let (dom, stderr) = headless(
        &page,
        &tmp.path().join("profile"),
        &["--dump-dom".to_owned()],
    );
    assert!(dom.contains("<p>x</p>"), "{dom}");
    let errs = console_errors(&stderr);
    assert!(errs.iter().any(|l| l.contains("broken page")), "{stderr}");
    assert!(errs.iter().any(|l| l.contains("Uncaught")), "{stderr}");
}
