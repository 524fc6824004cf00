//! `mcptape serve` on the shipped real recordings answers the real Python SDK
//! client (corpus/servers/py_client.py, official `mcp` SDK) exactly as the
//! recorded server did: the client runs with the arguments the recording was
//! made with, through `mcptape record` wrapped around `mcptape serve`, and
//! every response in that new transcript is byte-identical to the original's.
//! Needs the peers (`scripts/install-peers.sh`); fails without them.

use crate::record_support as support;

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

/// Every shipped recording, in both eras of the Python SDK client (`legacy`:
/// `initialize`; `auto`: `server/discover`, falling back), over stdio and
/// over `serve --listen`: the client lists, reads every listed resource and
/// a missing one. Reads are answered from the recording; the missing one is
/// a not-found error; a 2026-07-28 recording speaks 2025 to an `initialize`
/// client (adapted handshake) and the other way round.
#[test]
fn the_python_sdk_client_in_both_eras_reads_every_recording_over_stdio_and_http() {
    let p = peers();
    // The tool sessions read 2 of their listed resources (issue 27: they are for the
    // tools and prompts; bench_e2e replays them).
    let paths: Vec<_> = corpus_transcripts()
        .into_iter()
        .filter(|path| {
            !path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .contains("-tools-")
        })
        .collect();
    // One `serve --listen` per recording, all up at once for the one batch below.
    let listening: Vec<_> = paths
        .iter()
        .map(|path| serve_listen(path, "fixed:0"))
        .collect();
    // Every session is its own client (its own handshake) in one Python process
    // (py_client.py --batch): 40 sessions, one SDK import. Per recording and mode,
    // the stdio session then the HTTP one.
    let mut jobs = Vec::new();
    for (path, (_, port)) in paths.iter().zip(&listening) {
        for mode in ["legacy", "auto"] {
            let args = ["--mode", mode, "--reads", "100"].map(String::from);
            let mut stdio = args.to_vec();
            stdio.extend(["--".into(), mcptape().display().to_string(), "serve".into()]);
            stdio.extend([
                path.display().to_string(),
                "--latency".into(),
                "fixed:0".into(),
            ]);
            let mut http = args.to_vec();
            http.extend(["--url".into(), format!("http://127.0.0.1:{port}/mcp")]);
            jobs.push(stdio);
            jobs.push(http);
        }
    }
    let summaries = py_client_batch(&p, &jobs);
    assert_eq!(summaries.len(), paths.len() * 4);
    let mut each = summaries.chunks(2);
    for path in &paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for mode in ["legacy", "auto"] {
            let [over_stdio, over_http] = each.next().unwrap() else {
                unreachable!("chunks of 2")
            };
            for s in [over_stdio, over_http] {
                let listed = s["listed"].as_array().unwrap().len();
                assert!(listed > 0, "{name} {mode}: {s}");
                assert_eq!(
                    s["reads"].as_array().unwrap().len(),
                    listed,
                    "{name} {mode}: {s}"
                );
                let code = s["missing"]["code"].as_i64();
                assert!(
                    matches!(code, Some(-32602 | -32002)),
                    "{name} {mode}: {}",
                    s["missing"]
                );
                if mode == "legacy" {
                    let v = s["protocolVersion"].as_str().unwrap_or("");
                    assert!(v.starts_with("2025-"), "{name} {mode}: {v}");
                }
            }
            assert_eq!(over_stdio["reads"], over_http["reads"], "{name} {mode}");
        }
    }
}
