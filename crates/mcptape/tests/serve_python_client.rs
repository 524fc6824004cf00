//! `mcptape serve` on the shipped real recordings answers the real Python SDK
//! client (corpus/servers/py_client.py, official `mcp` SDK) exactly as the
//! recorded server did: the client runs with the arguments the recording was
//! made with, through `mcptape record` wrapped around `mcptape serve`, and
//! every response in that new transcript is byte-identical to the original's.
//! Needs the peers (`scripts/install-peers.sh`); fails without them.

#[path = "record_support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use mcptape_transcript::{Direction, Event, Transcript};
use support::*;

/// The responses (s2c messages with an id and no method), byte-exact, in order.
fn responses(t: &Transcript) -> Vec<String> {
    t.records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Message {
                dir: Direction::S2c,
                msg,
                ..
            } => {
                let v: serde_json::Value = serde_json::from_str(msg.get()).unwrap();
                (v.get("id").is_some() && v.get("method").is_none()).then(|| msg.get().to_owned())
            }
            _ => None,
        })
        .collect()
}

/// Runs py_client.py `client_args` against `mcptape serve TRANSCRIPT` through
/// `mcptape record`; returns the client's stdout summary and the new transcript.
fn replay_with_python_client(
    transcript: &str,
    client_args: &[&str],
) -> (serde_json::Value, Transcript) {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replayed.jsonl");
    let original = repo_root().join("corpus/transcripts").join(transcript);
    let mut cmd = Command::new(&p.python);
    cmd.arg(p.script("py_client.py"))
        .args(client_args)
        .arg("--")
        .arg(mcptape())
        .arg("record")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(mcptape())
        .arg("serve")
        .arg(&original)
        .args(["--latency", "fixed:1ms"]);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    assert!(
        o.status.success(),
        "py_client failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("client summary JSON");
    (summary, read_transcript(&out))
}

fn assert_same_responses(transcript: &str, replayed: &Transcript) {
    let original = read_transcript(&repo_root().join("corpus/transcripts").join(transcript));
    let want = responses(&original);
    let got = responses(replayed);
    assert!(
        want.len() >= 10,
        "{transcript}: only {} recorded responses",
        want.len()
    );
    assert_eq!(got.len(), want.len(), "{transcript}: response count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g == w,
            "{transcript}: response {i} differs:\n got  {:.300}\n want {:.300}",
            g,
            w
        );
    }
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
        let args = [
            "--mode",
            mode,
            "--reads",
            "100",
            "--template",
            "mcptape://items/42",
            "--template",
            "mcptape://bytes/300",
        ];
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
    let args = [
        "--mode",
        "legacy",
        "--reads",
        "100",
        "--template",
        "mcptape://items/42",
        "--template",
        "mcptape://bytes/300",
    ];
    let mut cmd = Command::new(&p.python);
    cmd.arg(p.script("py_client.py"))
        .args(args)
        .arg("--")
        .arg(mcptape())
        .args(["record", "-o"])
        .arg(&fresh)
        .arg("--")
        .arg(&p.python)
        .arg(p.script("py_server.py"))
        .arg("stdio");
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let live: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Now the same client against `mcptape serve` on that recording.
    let mut cmd = Command::new(&p.python);
    cmd.arg(p.script("py_client.py"))
        .args(args)
        .arg("--")
        .arg(mcptape())
        .arg("serve")
        .arg(&fresh)
        .args(["--latency", "fixed:1ms"]);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let replayed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(replayed, live);
    assert!(live["reads"].as_array().unwrap().len() >= 8);
}
