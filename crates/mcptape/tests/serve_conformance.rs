//! Round trip against a peer's test suite: the MCP conformance suite
//! (`@modelcontextprotocol/conformance server --url`) runs against the real
//! server-everything over Streamable HTTP through `mcptape record`; then the
//! suite runs again against `mcptape serve --listen` on that recording. The
//! per-scenario verdicts (each scenario's `checks.json`: check id → status)
//! must be the same. Needs the peers (`scripts/install-peers.sh`).

#[path = "record_support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

/// scenario → [(check id, status)] from a conformance `-o DIR`.
fn verdicts(dir: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        // server-<scenario>-<timestamp>: drop the timestamp (starts with the year).
        let scenario = name.split("-20").next().unwrap().to_owned();
        let checks: serde_json::Value =
            serde_json::from_slice(&std::fs::read(e.path().join("checks.json")).unwrap()).unwrap();
        let list = checks
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_owned(),
                    c["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        out.insert(scenario, list);
    }
    out
}

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
    let se_port = free_port();
    let se = start_everything_http(&p, se_port);
    let rec_port = free_port();
    let rec = Command::new(mcptape())
        .arg("record")
        .arg("-o")
        .arg(&transcript)
        .args([
            "--listen",
            &format!("127.0.0.1:{rec_port}"),
            "--upstream",
            &format!("http://127.0.0.1:{se_port}/mcp"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut rec = Guard(rec);
    wait_port(rec_port, Duration::from_secs(30));
    let live = dir.path().join("live");
    run_suite(&p, &format!("http://127.0.0.1:{rec_port}/mcp"), &live);
    // Stop the proxy with SIGTERM so it flushes the transcript.
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(rec.0.id().to_string())
        .status();
    assert!(
        wait_bounded(&mut rec.0, Duration::from_secs(20)).is_some(),
        "record did not stop"
    );
    drop(se);

    // 2. Replay it.
    let port = free_port();
    let serve = Command::new(mcptape())
        .arg("serve")
        .arg(&transcript)
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--latency",
            "fixed:0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _serve = Guard(serve);
    wait_port(port, Duration::from_secs(30));
    let replayed = dir.path().join("replayed");
    run_suite(&p, &format!("http://127.0.0.1:{port}/mcp"), &replayed);

    let a = verdicts(&live);
    let b = verdicts(&replayed);
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
