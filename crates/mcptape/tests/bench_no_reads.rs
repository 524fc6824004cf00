//! `mcptape bench` on a transcript with nothing to replay names the file, as every other bench
//! error does, and starts nothing; a transcript with no recorded `resources/read` but other
//! requests is benched (issue 27).

use crate::record_support as support;

use support::*;

/// Regression (new-user report): `bench trunc.jsonl` said `error: transcript has no recorded
/// resources/read request` without the file name.
#[test]
fn regression_bench_names_the_transcript_that_has_no_recorded_read() {
    let full = std::fs::read_to_string(corpus_transcript("everything-stdio.jsonl")).unwrap();
    // The header and the handshake only: whole records, none a resources/read.
    let head: String = full
        .split_inclusive('\n')
        .take_while(|l| !l.contains("\"resources/"))
        .collect();
    assert_has(&head, "\"initialize\"");
    let dir = tempfile::tempdir().unwrap();
    let trunc = dir.path().join("trunc.jsonl");
    std::fs::write(&trunc, head).unwrap();
    let out = dir.path().join("out");
    let (o, _) = run_bench(&trunc, &["--reads", "1", "--turns", "0"], Some(&out));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_has(
        &stderr,
        &format!(
            "error: {}: no recorded request to bench: asked every method; recorded no request but the handshake",
            trunc.display()
        ),
    );
    assert!(!out.join("report.json").exists(), "ran anyway");
}

/// Issue 27: a recording with tool calls and prompts but no `resources/read` is benched (it
/// was refused: "no recorded read"): the single phase replays its requests, no turn is run.
#[test]
fn bench_runs_a_recording_with_no_read() {
    let full =
        std::fs::read_to_string(corpus_transcript("py-tools-stdio-2026-07-28.jsonl")).unwrap();
    // Every record but the resources/read requests and their replies (ids of the reads).
    let mut read_ids = Vec::new();
    let mut kept = String::new();
    for line in full.split_inclusive('\n') {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let msg = &v["msg"];
        if msg["method"] == "resources/read" {
            read_ids.push(msg["id"].clone());
            continue;
        }
        if v["dir"] == "s2c" && msg.get("method").is_none() && read_ids.contains(&msg["id"]) {
            continue;
        }
        kept.push_str(line);
    }
    assert_eq!(read_ids.len(), 3);
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("no-reads.jsonl");
    std::fs::write(&t, kept).unwrap();
    let out = dir.path().join("out");
    let (o, _) = run_bench(
        &t,
        &["--reads", "16", "--turns", "3", "--latency", "fixed:1ms"],
        Some(&out),
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let methods: Vec<(&str, u64)> = report["byMethod"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["method"].as_str().unwrap(), m["ok"].as_u64().unwrap()))
        .collect();
    // 8 requests recorded: resources/list, templates/list, tools/list, prompts/list, 3 calls,
    // 1 prompt; two cycles.
    assert_eq!(
        methods,
        [
            ("prompts/get", 2),
            ("prompts/list", 2),
            ("resources/list", 2),
            ("resources/templates/list", 2),
            ("tools/call", 6),
            ("tools/list", 2),
        ]
    );
    assert_eq!(report["turns"], 0, "no read: no parallel-read turn");
    assert_eq!(report["turnPhase"]["sent"], 0);
}
