//! Round trip against a peer's test suite: the MCP conformance suite
//! (`@modelcontextprotocol/conformance server --url`) runs against the real
//! server-everything over Streamable HTTP through `mcptape record --listen`;
//! then the suite runs again against `mcptape serve --listen` on that
//! recording. The per-scenario verdicts (each scenario's `checks.json`: check
//! id → status) must be the same — for the stable suite 0.1.16 and for
//! 0.2.0-alpha.12 with `--spec-version 2026-07-28` — and the DNS-rebinding
//! scenario `localhost-host-rebinding-rejected` passes against both (the
//! loopback guard of record and serve answers the foreign Host/Origin 403).
//! Needs the peers (`scripts/install-peers.sh`).

use crate::record_support as support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

/// The stable suite (0.1.16), installed side by side by install-peers.sh.
fn stable_suite() -> PathBuf {
    let p = std::env::var("MCPTAPE_CONFORMANCE_STABLE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            repo_root().join(
                ".tools/conformance-0.1.16/node_modules/@modelcontextprotocol/conformance/dist/index.js",
            )
        });
    assert!(
        p.exists(),
        "conformance 0.1.16 missing at {}: run scripts/install-peers.sh",
        p.display()
    );
    p
}

fn run_suite(p: &Peers, suite: &Path, extra: &[&str], url: &str, out: &Path) {
    let mut cmd = Command::new(&p.node);
    cmd.arg(suite)
        .args(["server", "--url", url])
        .args(extra)
        .arg("-o")
        .arg(out);
    // The suite exits non-zero when any check fails (server-everything fails some).
    let _ = run_bounded(&mut cmd, Duration::from_secs(300));
    assert!(
        std::fs::read_dir(out).map(|d| d.count()).unwrap_or(0) >= 10,
        "the suite wrote no results to {}",
        out.display()
    );
}

type Verdicts = BTreeMap<String, Vec<(String, String)>>;

/// Records `suite extra` against the live server, replays it; (live, replayed).
fn live_and_replayed(suite: &Path, extra: &[&str]) -> (Verdicts, Verdicts) {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("conformance.jsonl");

    // 1. Record the suite against the live server.
    let (se, se_port) = start_everything_http(&p);
    let (mut rec, rec_port) = record_listen(
        &transcript,
        &format!("http://127.0.0.1:{se_port}/mcp"),
        Stdio::null(),
    );
    let live = dir.path().join("live");
    run_suite(
        &p,
        suite,
        extra,
        &format!("http://127.0.0.1:{rec_port}/mcp"),
        &live,
    );
    // Stop the proxy with SIGTERM so it flushes the transcript.
    terminate(&mut rec);
    drop(se);

    // 2. Replay it.
    let (_serve, port) = serve_listen(&transcript, "fixed:0");
    let replayed = dir.path().join("replayed");
    run_suite(
        &p,
        suite,
        extra,
        &format!("http://127.0.0.1:{port}/mcp"),
        &replayed,
    );
    (conformance_verdicts(&live), conformance_verdicts(&replayed))
}

fn assert_same(a: &Verdicts, b: &Verdicts) {
    for (scenario, checks) in a {
        assert_eq!(
            Some(checks),
            b.get(scenario),
            "scenario {scenario}: live vs replayed verdicts"
        );
    }
    assert_eq!(a.len(), b.len());
}

/// The status of check `id` in any scenario.
fn status_of<'a>(v: &'a Verdicts, id: &str) -> Option<&'a str> {
    v.values()
        .flatten()
        .find(|(c, _)| c == id)
        .map(|(_, s)| s.as_str())
}

#[test]
fn conformance_verdicts_against_serve_equal_those_against_the_recorded_server() {
    let p = peers();
    let (a, b) = live_and_replayed(&p.conformance(), &[]);
    assert!(a.len() >= 25, "{} scenarios", a.len());
    let passed = a.values().flatten().filter(|(_, s)| s == "SUCCESS").count();
    assert!(passed >= 30, "only {passed} checks passed live");
    assert_same(&a, &b);
    assert_eq!(
        status_of(&b, "localhost-host-rebinding-rejected"),
        Some("SUCCESS")
    );
}

#[test]
fn conformance_0_1_16_verdicts_against_serve_equal_the_live_ones() {
    let (a, b) = live_and_replayed(&stable_suite(), &[]);
    assert!(a.len() >= 10, "{} scenarios", a.len());
    assert_same(&a, &b);
    if let Some(s) = status_of(&a, "localhost-host-rebinding-rejected") {
        assert_eq!(s, "SUCCESS", "live");
        assert_eq!(
            status_of(&b, "localhost-host-rebinding-rejected"),
            Some("SUCCESS")
        );
    }
}

#[test]
fn conformance_alpha_2026_07_28_verdicts_against_serve_equal_the_live_ones() {
    let p = peers();
    let (a, b) = live_and_replayed(&p.conformance(), &["--spec-version", "2026-07-28"]);
    assert!(a.len() >= 10, "{} scenarios", a.len());
    assert_same(&a, &b);
    assert_eq!(
        status_of(&a, "localhost-host-rebinding-rejected"),
        Some("SUCCESS")
    );
    assert_eq!(
        status_of(&b, "localhost-host-rebinding-rejected"),
        Some("SUCCESS")
    );
}
