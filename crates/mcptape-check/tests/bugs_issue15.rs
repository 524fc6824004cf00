//! Regression tests for the bug reports of issue 15 that concern `check`
//! (not-found by message, id-less error, SSE JSON heartbeat, positional
//! array header, directory symlink loop).

use crate::support::repo;

use mcptape_check::{Options, Severity, check_bytes, check_paths, collect};

fn check_violation(id: &str) -> mcptape_check::FileReport {
    let p = repo().join("corpus/violations").join(format!("{id}.jsonl"));
    let bytes = std::fs::read(&p).unwrap();
    check_bytes(&p.display().to_string(), &bytes, &Options::default())
}

/// Checks `corpus/violations/ID.jsonl`, asserting its one finding is rule `ID` at `severity`.
fn check_only(id: &str, severity: Severity) -> mcptape_check::FileReport {
    let r = check_violation(id);
    assert_eq!(rules(&r), [id]);
    assert_eq!(r.findings[0].severity, severity, "{id}");
    r
}

/// Checks a transcript of `header` then `lines`, each line ended by `\n`.
fn check_lines(header: &str, lines: &[&str]) -> mcptape_check::FileReport {
    let mut t = format!("{header}\n");
    for line in lines {
        t.push_str(line);
        t.push('\n');
    }
    check_bytes("t.jsonl", t.as_bytes(), &Options::default())
}

fn rules(r: &mcptape_check::FileReport) -> Vec<&'static str> {
    r.findings.iter().map(|f| f.rule).collect()
}

const STDIO_2026: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2026-07-28"}"#;
const HTTP_2025: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"http","server":{"url":"http://127.0.0.1:1/mcp"},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#;

fn read_answered_by(error: &str) -> Vec<u8> {
    format!(
        "{STDIO_2026}\n{}\n{}\n{}\n",
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}}"#,
        format_args!(
            r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"error":{error}}}}}"#
        ),
        r#"{"tUs":3,"kind":"exit","code":0}"#
    )
    .into_bytes()
}

/// Checks a read of `file:///a` answered by the JSON-RPC `error` object.
fn check_answered_by(error: &str) -> mcptape_check::FileReport {
    check_bytes("t.jsonl", &read_answered_by(error), &Options::default())
}

#[test]
fn not_found_by_message_is_a_labelled_warning() {
    let r = check_only("not-found-guessed-from-message", Severity::Warning);
    let f = &r.findings[0];
    assert!(!f.is_failure());
    assert_eq!(f.pointer, "/error/message");
    assert!(f.message.contains("guessed"), "{}", f.message);
    // Each message-only shape of the bug report: code 0, -32001, and -32602
    // without data.uri under 2026-07-28. None maps to the not-found rules.
    for err in [
        r#"{"code":0,"message":"Resource not found"}"#,
        r#"{"code":-32001,"message":"Resource not found"}"#,
        r#"{"code":-32602,"message":"Resource not found"}"#,
    ] {
        let r = check_answered_by(err);
        assert_eq!(rules(&r), ["not-found-guessed-from-message"], "{err}");
        assert!(r.findings[0].message.contains(if err.contains("32602") {
            "without data.uri"
        } else {
            "code"
        }));
    }
    // The code decides: -32602 with data.uri is a not-found, checked as one
    // (here data.uri names another uri).
    let r = check_answered_by(r#"{"code":-32602,"message":"nope","data":{"uri":"file:///b"}}"#);
    assert_eq!(rules(&r), ["not-found-data-uri"]);
    // A -32602 that says nothing of the kind is not a not-found at all.
    let r = check_answered_by(r#"{"code":-32602,"message":"malformed uri"}"#);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn error_without_id_is_paired_not_unanswered() {
    let r = check_only("error-id-missing", Severity::Error);
    let f = &r.findings[0];
    assert_eq!(f.request_id.as_deref(), Some("1"));
    assert_eq!(f.line, 3);
    assert!(f.message.contains("HTTP exchange 0"), "{}", f.message);
    assert!(f.message.contains("No valid session ID provided"));

    // Over HTTP the error pairs with its own exchange's request only: the
    // request of exchange 1 stays unanswered.
    let r = check_lines(
        HTTP_2025,
        &[
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"},"http":{"exchange":0,"method":"POST"}}"#,
            r#"{"tUs":2,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"ping"},"http":{"exchange":1,"method":"POST"}}"#,
            r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request"}},"http":{"exchange":0,"method":"POST","status":400}}"#,
        ],
    );
    assert_eq!(rules(&r), ["request-unanswered", "error-id-missing"]);
    assert_eq!(r.findings[0].request_id.as_deref(), Some("2"));
    assert_eq!(r.findings[1].request_id.as_deref(), Some("1"));

    // On stdio with two open requests it cannot be paired: an id-less error
    // is reported as such (and both requests stay open).
    let r = check_lines(
        STDIO_2026,
        &[
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
            r#"{"tUs":2,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"ping"}}"#,
            r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","error":{"code":-32000,"message":"x"}}}"#,
        ],
    );
    let missing: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.rule == "error-id-missing")
        .collect();
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].request_id, None);
    assert!(missing[0].message.contains("2 open requests"));
}

#[test]
fn sse_json_heartbeat_is_a_warning() {
    let r = check_only("sse-event-not-jsonrpc", Severity::Warning);
    let f = &r.findings[0];
    assert_eq!(f.line, 3);
    assert!(f.message.contains("heartbeat"), "{}", f.message);
    // Counted as skipped: 2 messages (the ping and its answer), not 3.
    assert_eq!(r.messages, 2);

    // The same non-JSON-RPC value in a plain JSON response (no event
    // stream) is still a message-not-jsonrpc error.
    assert_plain_json_answer_is_not_jsonrpc(r#"{"type":"heartbeat"}"#);
}

/// A ping over HTTP answered by `msg` (not JSON-RPC) in a plain JSON response (no event
/// stream): a `message-not-jsonrpc` error, not the event stream's warning.
fn assert_plain_json_answer_is_not_jsonrpc(msg: &str) {
    let answer = format!(
        r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{msg},"http":{{"exchange":0,"method":"POST","status":200,"headers":[["content-type","application/json"]]}}}}"#
    );
    let r = check_lines(
        HTTP_2025,
        &[
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"},"http":{"exchange":0,"method":"POST"}}"#,
            &answer,
        ],
    );
    assert!(
        rules(&r).contains(&"message-not-jsonrpc"),
        "{msg}: {:?}",
        r.findings
    );
    assert!(
        !rules(&r).contains(&"sse-event-not-jsonrpc"),
        "{msg}: {:?}",
        r.findings
    );
}

#[test]
fn positional_array_header_is_refused() {
    let t = concat!(
        r#"[1,"0.1.0","stdio",{"command":["x"]},"2026-11-30T00:00:00Z"]"#,
        "\n",
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        "\n"
    );
    let r = check_bytes("t.jsonl", t.as_bytes(), &Options::default());
    assert_eq!(rules(&r), ["transcript-unreadable"]);
    assert_eq!(r.findings[0].line, 1);
    assert!(r.findings[0].message.contains("JSON array, not an object"));
    assert_eq!(r.messages, 0);
    assert!(r.failures() > 0);
}

#[cfg(unix)]
#[test]
fn symlink_loop_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("corpus/violations/error-id-missing.jsonl");
    std::fs::copy(&src, dir.path().join("a.jsonl")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::copy(&src, dir.path().join("sub/b.jsonl")).unwrap();
    // sub/up -> .. (a loop back to the root) and self -> self (ELOOP).
    std::os::unix::fs::symlink("..", dir.path().join("sub/up")).unwrap();
    std::os::unix::fs::symlink("self", dir.path().join("self")).unwrap();
    let c = collect(&[dir.path().to_owned()]).unwrap();
    assert_eq!(
        c.files,
        [dir.path().join("a.jsonl"), dir.path().join("sub/b.jsonl")]
    );
    assert_eq!(
        c.loops,
        [dir.path().join("self"), dir.path().join("sub/up")]
    );
    let report = check_paths(&[dir.path().to_owned()], &Options::default()).unwrap();
    assert_eq!(report.files.len(), 2);
}

/// Issue 15 review: an error response with `"id": null` over stdio was never mentioned (only
/// `request-unanswered` fired). It is paired as the id-less error is: `error-id-null` with the
/// one open request (answered, so no `request-unanswered`).
#[test]
fn stdio_error_id_null_is_paired_with_the_request() {
    let exit = r#"{"tUs":3,"kind":"exit","code":0}"#;
    let null_error = r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}}"#;
    let r = check_lines(
        STDIO_2026,
        &[
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":7,"method":"ping"}}"#,
            null_error,
            exit,
        ],
    );
    assert_eq!(rules(&r), ["error-id-null"], "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.request_id.as_deref(), Some("7"));
    assert_eq!(f.line, 3);
    assert_eq!(f.pointer, "/id");
    assert_eq!(
        f.message,
        "error response with id null, paired with ping id 7 (record 1), the only open request: \"Bad Request\""
    );

    // Two open requests: reported, paired with neither (both stay unanswered).
    let r = check_lines(
        STDIO_2026,
        &[
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"ping"}}"#,
            null_error,
            exit,
        ],
    );
    let null: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.rule == "error-id-null")
        .collect();
    assert_eq!(null.len(), 1, "{:?}", r.findings);
    assert_eq!(null[0].request_id, None);
    assert!(
        null[0]
            .message
            .contains("2 open requests, none can be paired")
    );
    assert_eq!(
        rules(&r)
            .iter()
            .filter(|&&x| x == "request-unanswered")
            .count(),
        2
    );

    // No open request: the legitimate answer to an unreadable line (JSON-RPC 2.0 §5).
    let r = check_lines(STDIO_2026, &[null_error, exit]);
    assert!(!rules(&r).contains(&"error-id-null"), "{:?}", r.findings);
}

/// Issue 15 review: `data: [{"type":"hb"}]` (a one-element batch of a heartbeat) on an SSE
/// stream was `error[message-not-jsonrpc]`, although the transport's `is_json_rpc` classes it
/// as not JSON-RPC and skips it. Check agrees: warning `sse-event-not-jsonrpc`, skipped.
#[test]
fn sse_batch_heartbeat_is_a_warning_not_message_not_jsonrpc() {
    // The transport's `mcptape_transport::sse::is_json_rpc` is this function, re-exported.
    assert!(!mcptape_wire::envelope::is_json_rpc(r#"[{"type":"hb"}]"#));
    let sse = r#""http":{"exchange":0,"method":"POST","status":200,"headers":[["content-type","text/event-stream"]]}"#;
    let r = check_lines(
        HTTP_2025,
        &[
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"},"http":{"exchange":0,"method":"POST"}}"#,
            &format!(r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":[{{"type":"hb"}}],{sse}}}"#),
            &format!(
                r#"{{"tUs":3,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"result":{{}}}},{sse}}}"#
            ),
        ],
    );
    assert_eq!(rules(&r), ["sse-event-not-jsonrpc"], "{:?}", r.findings);
    assert_eq!(r.findings[0].severity, Severity::Warning);
    assert_eq!(r.findings[0].line, 3);
    assert_eq!(r.messages, 2);

    // A mixed batch (one JSON-RPC element, one heartbeat): `is_json_rpc` is false for it too.
    let mixed = r#"[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"type":"hb"}]"#;
    assert!(!mcptape_wire::envelope::is_json_rpc(mixed));

    // Outside an event stream the same batch is still an error.
    assert_plain_json_answer_is_not_jsonrpc(r#"[{"type":"hb"}]"#);
}
