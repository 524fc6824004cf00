//! The exported k6 script against the live peers on 127.0.0.1: server-everything
//! over streamableHttp (2025-11-25, sessions, SSE answers) and the Python SDK
//! server over HTTP in both eras (2026-07-28 stateless with JSON answers,
//! 2025-11-25 with sessions). Real k6 and real servers (`scripts/install-peers.sh`).

#[path = "k6_support/mod.rs"]
mod k6s;

use k6s::*;

/// Exports `transcript`, runs it with k6 against `url`, imports the output.
fn run_live(transcript: &str, url: &str, rate: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.js");
    export(transcript, &script, &[rate, &["--duration", "3s"]].concat());
    let out = dir.path().join("out.json");
    let out_arg = format!("json={}", out.display());
    let o = run_k6(&mut k6_run(&script, url, &["--out", &out_arg]));
    assert!(
        o.status.success(),
        "k6 against {url}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    import(&[out], &dir.path().join("report"))
}

/// Every answer had the request's id and the class the recording had: no
/// handshake failed, every read was answered as recorded.
fn assert_answers_as_recorded(r: &serde_json::Value, what: &str) {
    assert_eq!(r["k6"]["handshakeFailures"], 0, "{what}: {r:#}");
    assert!(r["single"]["count"].as_u64().unwrap() > 0, "{what}: {r:#}");
    assert!(r["turns"].as_u64().unwrap() > 0, "{what}: {r:#}");
    assert_eq!(
        r["k6"]["unexpectedShare"].as_f64(),
        Some(0.0),
        "{what}: {r:#}"
    );
}

#[test]
fn exported_script_runs_against_live_server_everything_over_streamable_http() {
    let p = peers();
    let (_g, port) = start_everything_http(&p);
    let r = run_live(
        "everything-http.jsonl",
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--rate", "10/s", "--turn-rate", "2/s", "--deadline", "5s"],
    );
    assert_answers_as_recorded(&r, "server-everything");
    // The recording's one error answer (a missing document) came back, classified as bench does.
    assert!(
        r["errors"]["invalid-params (-32602, no data.uri)"]
            .as_u64()
            .unwrap()
            > 0,
        "{r:#}"
    );
    assert_eq!(r["transcript"], "everything-http.jsonl");
}

#[test]
fn exported_script_runs_against_the_python_sdk_server_in_both_eras() {
    let p = peers();
    let (_g, port) = start_py_http(&p);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let rate = [
        "--rate",
        "5/s",
        "--turn-rate",
        "1/s",
        "--parallel",
        "2",
        "--deadline",
        "5s",
    ];
    let stateless = run_live("py-http-2026-07-28.jsonl", &url, &rate);
    assert_answers_as_recorded(&stateless, "python 2026-07-28");
    let session = run_live("py-http-2025-11-25.jsonl", &url, &rate);
    assert_answers_as_recorded(&session, "python 2025-11-25");
    for r in [&stateless, &session] {
        assert_eq!(r["parallel"], 2);
        assert!(
            r["errors"]["not-found (-32602 + data.uri)"]
                .as_u64()
                .unwrap()
                > 0,
            "{r:#}"
        );
    }
}
