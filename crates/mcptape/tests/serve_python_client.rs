//! `mcptape serve` on the shipped real recordings answers the real Python SDK
//! client (corpus/servers/py_client.py, official `mcp` SDK) exactly as the
//! recorded server did: the client runs with the arguments the recording was
//! made with, through `mcptape record` wrapped around `mcptape serve`, and
//! every response in that new transcript is byte-identical to the original's.
//! Needs the peers (`scripts/install-peers.sh`); fails without them.

#[path = "record_support/mod.rs"]
mod support;

use std::time::Duration;

use mcptape_transcript::Transcript;
use support::*;

/// Runs py_client.py `client_args` against `mcptape serve TRANSCRIPT` through
/// `mcptape record`; returns the client's stdout summary and the new transcript.
fn replay_with_python_client(
    transcript: &str,
    client_args: &[&str],
) -> (serde_json::Value, Transcript) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replayed.jsonl");
    let mut cmd = py_client_cmd(&peers(), client_args);
    cmd.arg("--")
        .arg(mcptape())
        .arg("record")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(mcptape())
        .arg("serve")
        .arg(corpus_transcript(transcript))
        .args(["--latency", "fixed:1ms"]);
    let summary = run_json(&mut cmd, Duration::from_secs(120));
    (summary, read_transcript(&out))
}

#[test]
fn serve_answers_the_python_sdk_client_like_server_everything_did() {
    let args = EVERYTHING_CLIENT_ARGS;
    let (summary, replayed) = replay_with_python_client("everything-stdio.jsonl", &args);
    assert_same_responses("everything-stdio.jsonl", &replayed);
    // The client saw the recorded not-found error for the missing URI: -32602.
    assert_eq!(summary["missing"]["code"], serde_json::json!(-32602));
    assert_eq!(summary["reads"].as_array().unwrap().len(), 11);
}

#[test]
fn serve_answers_the_python_sdk_client_like_the_python_server_did_in_both_eras() {
    for (transcript, mode) in [
        ("py-stdio-2025-11-25.jsonl", "legacy"),
        ("py-stdio-2026-07-28.jsonl", "auto"),
    ] {
        let args = py_server_client_args(mode);
        let (summary, replayed) = replay_with_python_client(transcript, &args);
        assert_same_responses(transcript, &replayed);
        let era = transcript
            .trim_start_matches("py-stdio-")
            .trim_end_matches(".jsonl");
        assert_eq!(
            summary["protocolVersion"],
            serde_json::json!(era),
            "{transcript}"
        );
    }
}

#[test]
fn the_python_client_sees_the_same_summary_from_serve_as_from_the_live_python_server() {
    // Recorded here, from the live server as it is now (the shipped recording
    // may predate a change to corpus/servers/py_server.py).
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.jsonl");
    let live = record_py_server(&p, "legacy", &fresh);
    // Now the same client against `mcptape serve` on that recording.
    let mut cmd = py_client_cmd(&p, &py_server_client_args("legacy"));
    cmd.arg("--")
        .arg(mcptape())
        .arg("serve")
        .arg(&fresh)
        .args(["--latency", "fixed:1ms"]);
    let replayed = run_json(&mut cmd, Duration::from_secs(120));
    assert_eq!(replayed, live);
    assert!(live["reads"].as_array().unwrap().len() >= 8);
}
