//! Found by a fresh-user trial: a transcript whose answer is stamped `tUs` u64::MAX
//! (18446744073709551615) was served, and `serve` (latency `recorded`, the default)
//! scheduled the answer from it: the client got no answer for a minute (the latency cap),
//! and the stamp was never reported. `serve` now refuses the transcript at load, naming the
//! record and the limit (`MAX_RECORDED_T_US`), and exits.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::record_support as support;

const HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["hand-made"]},"startedAt":"2026-12-05T00:00:00Z"}"#;

/// A 2025-11-25 session: initialize, then tools/list answered at `tUs` u64::MAX.
fn transcript() -> String {
    [
        HEADER,
        r#"{"tUs":100,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}"#,
        r#"{"tUs":200,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}"#,
        r#"{"tUs":300,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
        r#"{"tUs":400,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#,
        r#"{"tUs":18446744073709551615,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}}"#,
        r#"{"tUs":600,"kind":"exit","code":0}"#,
        "",
    ]
    .join("\n")
}

#[test]
fn serve_refuses_a_transcript_whose_answer_is_stamped_u64_max() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("time-u64-max.jsonl");
    std::fs::write(&path, transcript()).unwrap();

    let mut child = Command::new(support::mcptape())
        .arg("serve")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A client that asks and keeps stdin open (the old serve answered initialize and
    // waited on the recorded delay, never ending): a refused load ends serve on its own.
    // Writes may fail once serve has exited: not the point.
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "\n"
        )
        .as_bytes(),
    );
    let _ = stdin.flush();
    // A generous bound, polled: the refusal takes milliseconds.
    let out = support::Guard(child).output_within(
        "serve of a transcript stamped u64::MAX (stdin kept open)",
        Duration::from_secs(30),
    );
    drop(stdin);
    let stderr = support::stderr_text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{:?}; stderr:\n{stderr}",
        out.status
    );
    assert!(
        stderr.contains(
            "record 5 (line 6): tUs 18446744073709551615 µs is beyond MAX_RECORDED_T_US \
             (2592000000000 µs, 30 days)"
        ) && stderr.contains("record-time-beyond-limit"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "{}", support::stdout_text(&out));
}
