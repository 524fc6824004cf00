//! Round trip against a peer's test suite: the MCP conformance suite
//! (`@modelcontextprotocol/conformance server --url`) runs against the real
//! server-everything over Streamable HTTP through `mcptape record`; then the
//! suite runs again against `mcptape serve --listen` on that recording. The
//! per-scenario verdicts (each scenario's `checks.json`: check id → status)
//! must be the same. Needs the peers (`scripts/install-peers.sh`).

#[path = "record_support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

fn run_suite(p: &Peers, url: &str, out: &Path) {
    let mut cmd = Command::new(&p.node);
    cmd.arg(p.conformance())
        .args(["server", "--url", url, "-o"])
        .arg(out);
    // The suite exits non-zero when any check fails (server-everything fails some).
    let _ = run_bounded(&mut cmd, Duration::from_secs(300));
    assert!(
        std::fs::read_dir(out).map(|d| d.count()).unwrap_or(0) >= 20,
        "the suite wrote no results to {}",
        out.display()
    );
}

#[test]
fn conformance_verdicts_against_serve_equal_those_against_the_recorded_server() {
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
    run_suite(&p, &format!("http://127.0.0.1:{rec_port}/mcp"), &live);
    // Stop the proxy with SIGTERM so it flushes the transcript.
    terminate(&mut rec);
    drop(se);

    // 2. Replay it.
    let (_serve, port) = serve_listen(&transcript, "fixed:0");
    let replayed = dir.path().join("replayed");
    run_suite(&p, &format!("http://127.0.0.1:{port}/mcp"), &replayed);

    let a = conformance_verdicts(&live);
    let b = conformance_verdicts(&replayed);
    assert!(a.len() >= 25, "{} scenarios", a.len());
    let passed = a.values().flatten().filter(|(_, s)| s == "SUCCESS").count();
    assert!(passed >= 30, "only {passed} checks passed live");
    for (scenario, checks) in &a {
        assert_eq!(
            Some(checks),
            b.get(scenario),
            "scenario {scenario}: live vs replayed verdicts"
        );
    }
    assert_eq!(a.len(), b.len());
}
