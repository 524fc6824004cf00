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
    transcript_answered_at("18446744073709551615")
}

/// A 2025-11-25 session: initialize, then tools/list (at `tUs` 400) answered at `tUs` `reply_us`.
fn transcript_answered_at(reply_us: &str) -> String {
    let reply = format!(
        r#"{{"tUs":{reply_us},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":2,"result":{{"tools":[]}}}}}}"#
    );
    [
        HEADER,
        r#"{"tUs":100,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}"#,
        r#"{"tUs":200,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}"#,
        r#"{"tUs":300,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
        r#"{"tUs":400,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#,
        &reply,
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
    let stderr = support::stderr_of_exit(&out, 2);
    assert!(
        stderr.contains(
            "record 5 (line 6): tUs 18446744073709551615 µs is beyond MAX_RECORDED_T_US \
             (2592000000000 µs, 30 days)"
        ) && stderr.contains("record-time-beyond-limit"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "{}", support::stdout_text(&out));
}

/// Found with the trial above: a recorded server delay longer than the latency cap
/// (`MAX_DELAY_US`, 60 s) was replayed capped at it without a word. A delay at the cap is
/// replayed as recorded and says nothing; one µs past it is said at load (how many, the
/// longest, its request's record).
#[test]
fn serve_says_a_recorded_delay_past_max_delay_us_is_replayed_capped() {
    let dir = tempfile::tempdir().unwrap();
    let stderr_of = |reply_us: u64| {
        let path = dir.path().join(format!("delay-{reply_us}.jsonl"));
        std::fs::write(&path, transcript_answered_at(&reply_us.to_string())).unwrap();
        // stdin closed: serve loads, says what it says, and ends.
        let (out, _) = support::run_bounded(
            Command::new(support::mcptape()).arg("serve").arg(&path),
            Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(0), "{}", support::stderr_text(&out));
        support::stderr_text(&out)
    };
    let cap = mcptape_replay::latency::MAX_DELAY_US;
    assert_eq!(cap, 60_000_000);
    let at = stderr_of(400 + cap);
    assert!(!at.contains("MAX_DELAY_US"), "{at}");
    let past = stderr_of(400 + cap + 1);
    assert!(
        past.contains(
            "delay-60000401.jsonl: 1 recorded server delay above MAX_DELAY_US (60000000 µs) \
             under latency recorded: replayed capped at it; the longest, 60000001 µs, answers \
             tools/list at record 4 (line 5)"
        ),
        "{past}"
    );
}
