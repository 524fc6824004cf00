//! `mcptape serve --listen` (Streamable HTTP, both protocol eras) on the
//! shipped real recordings, driven by the real Python SDK client and by
//! `mcptape bench --target-url`. Needs the peers (`scripts/install-peers.sh`).

#[path = "record_support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

fn serve_http(transcript: &str, latency: &str) -> (Guard, u16) {
    serve_listen(&corpus_transcript(transcript), latency)
}

/// py_client.py `args` against `target`; its summary.
fn py_client(args: &[&str], target: &[String]) -> serde_json::Value {
    let mut cmd = py_client_cmd(&peers(), args);
    cmd.args(target);
    run_json(&mut cmd, Duration::from_secs(120))
}

/// `--url http://127.0.0.1:PORT/mcp`.
fn url_arg(port: u16) -> [String; 2] {
    ["--url".into(), format!("http://127.0.0.1:{port}/mcp")]
}

#[test]
fn serve_over_http_with_sessions_answers_the_python_client_as_over_stdio() {
    let (_g, port) = serve_http("everything-stdio.jsonl", "fixed:1ms");
    let over_http = py_client(&EVERYTHING_CLIENT_ARGS, &url_arg(port));
    let stdio_target = vec![
        "--".to_owned(),
        mcptape().display().to_string(),
        "serve".into(),
        corpus_transcript("everything-stdio.jsonl")
            .display()
            .to_string(),
        "--latency".into(),
        "fixed:1ms".into(),
    ];
    let over_stdio = py_client(&EVERYTHING_CLIENT_ARGS, &stdio_target);
    assert_eq!(over_http, over_stdio);
    assert_eq!(over_http["protocolVersion"], "2025-11-25");
    assert_eq!(over_http["reads"].as_array().unwrap().len(), 11);
}

#[test]
fn serve_over_http_speaks_2026_07_28_without_sessions() {
    let (_g, port) = serve_http("py-stdio-2026-07-28.jsonl", "fixed:1ms");
    let s = py_client(&py_server_client_args("auto"), &url_arg(port));
    assert_eq!(s["protocolVersion"], "2026-07-28");
    assert_eq!(s["reads"].as_array().unwrap().len(), 8);
    assert_eq!(s["missing"]["code"], -32602);
}

/// Sends `req` to 127.0.0.1:`port` (a `Host: 127.0.0.1` line gets the port,
/// as the loopback guard requires); the whole response.
fn raw_http(port: u16, req: &str) -> String {
    let req = req.replacen(
        "Host: 127.0.0.1\r\n",
        &format!("Host: 127.0.0.1:{port}\r\n"),
        1,
    );
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// A JSON `POST PATH` request with the extra `headers` (each ending in CRLF).
fn post_request(path: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn the_older_era_requires_the_session_header_and_get_is_405() {
    let (_g, port) = serve_http("everything-stdio.jsonl", "fixed:0");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#;
    let post = |extra: &str| post_request("/mcp", extra, body);
    assert!(raw_http(port, &post("")).starts_with("HTTP/1.1 400"));
    assert!(raw_http(port, &post("Mcp-Session-Id: nope\r\n")).starts_with("HTTP/1.1 404"));
    let get = "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n";
    assert!(raw_http(port, get).starts_with("HTTP/1.1 405"));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let r = raw_http(port, &post_request("/mcp", "", init));
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let sid = r
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("no session header: {r}"))
        .trim()
        .to_owned();
    let r = raw_http(port, &post(&format!("Mcp-Session-Id: {sid}\r\n")));
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(r.contains("demo://resource/static/document/"), "{r}");
}

#[test]
fn bench_over_http_closes_the_streams_of_stragglers_at_the_deadline() {
    let (_g, port) = serve_http("py-stdio-2026-07-28.jsonl", "fixed:50ms");
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let args = [
        "--target-url",
        url.as_str(),
        "--reads",
        "5",
        "--turns",
        "3",
        "--parallel",
        "2",
        "--deadline",
        "10ms",
        "--timeout",
        "3s",
    ];
    let transcript = corpus_transcript("py-stdio-2026-07-28.jsonl");
    let (o, _) = run_bench(&transcript, &args, Some(dir.path()));
    // No turn read beat the 10 ms deadline: the report is written, and bench
    // exits 1 saying the turn phase completed no read.
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "2-read turns: 3 asked for, 3 run, no read in them answered before the deadline"
        ),
        "{err}"
    );
    let r = read_json(&dir.path().join("report.json"));
    assert_eq!(r["single"]["count"], 5);
    assert!(r["single"]["p50Us"].as_u64().unwrap() >= 50_000, "{r}");
    assert_eq!(r["turnsHitDeadline"], 3);
    assert_eq!(r["cancellations"], 6);
    // 2026-07-28: cancelling closes the request's stream, so no late answer can come.
    assert_eq!(r["lateResponses"], 0);
    assert_eq!(r["abandoned"], 6);
    assert!(r["server"].is_null());
}

#[test]
fn serve_answers_the_python_client_over_http_exactly_as_the_recorded_http_servers_did() {
    for (transcript, args) in [
        ("everything-http.jsonl", everything_two_template_args()),
        ("py-http-2025-11-25.jsonl", py_server_client_args("legacy")),
        ("py-http-2026-07-28.jsonl", py_server_client_args("auto")),
    ] {
        let (_serve, serve_port) = serve_http(transcript, "fixed:1ms");
        // Record the replay through mcptape's own HTTP recording proxy.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("replayed.jsonl");
        let (mut rec, rec_port) = record_listen(
            &out,
            &format!("http://127.0.0.1:{serve_port}/mcp"),
            Stdio::null(),
        );
        py_client(&args, &url_arg(rec_port));
        terminate(&mut rec);
        assert_same_responses(transcript, &read_transcript(&out));
    }
}

fn raw_post(port: u16, body: &str) -> String {
    raw_http(
        port,
        &post_request(
            "/mcp",
            "Accept: application/json, text/event-stream\r\n",
            body,
        ),
    )
}

/// Fresh-user report bug 2 over HTTP: an invalid message is a 400 with its
/// JSON-RPC error body, never the recorded initialize result.
#[test]
fn serve_http_answers_invalid_requests_400_with_a_jsonrpc_error() {
    let (_g, port) = serve_http("everything-http.jsonl", "fixed:0");
    #[rustfmt::skip]
    let cases = [
        (r#"{"jsonrpc":"2.0","id":null,"method":"initialize","params":{}}"#, "-32600", r#""id":null"#),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{}}"#, "-32600", r#""id":null"#),
        (r#"{"jsonrpc":"1.0","id":7,"method":"initialize","params":{}}"#, "-32600", r#""id":7"#),
        (r#"{"jsonrpc":"2.0","id":9,"id":10,"method":"initialize","params":{}}"#, "-32700", r#""id":null"#),
    ];
    for (body, code, id) in cases {
        let r = raw_post(port, body);
        assert!(r.starts_with("HTTP/1.1 400"), "{body}: {r}");
        assert!(r.contains(&format!(r#""code":{code}"#)), "{body}: {r}");
        assert!(r.contains(id), "{body}: {r}");
        assert!(!r.contains("\"result\""), "{body}: {r}");
    }
}

/// Fresh-user report bug 1 over HTTP: the recorded 400 / -32000 answer to
/// `server/discover` (recorded with `"id": null`) is replayed under the
/// request's id, then `initialize` opens a session as recorded.
#[test]
fn serve_http_replays_the_recorded_server_discover_rejection_of_the_fallback_recording() {
    let (_g, port) = serve_http("crawl-everything-http-2026-07-28-fallback.jsonl", "fixed:0");
    let r = raw_post(
        port,
        r#"{"jsonrpc":"2.0","id":41,"method":"server/discover","params":{}}"#,
    );
    assert!(r.starts_with("HTTP/1.1 400"), "{r}");
    assert!(r.contains(r#""id":41"#), "{r}");
    assert!(r.contains("-32000"), "{r}");
    let r = raw_post(
        port,
        r#"{"jsonrpc":"2.0","id":42,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    );
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(r.to_ascii_lowercase().contains("mcp-session-id:"), "{r}");
}

/// Fresh-user report bug 26: a POST to a path other than `/mcp` is 404.
#[test]
fn serve_http_other_path_is_404() {
    let (_g, port) = serve_http("everything-http.jsonl", "fixed:0");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let r = raw_http(port, &post_request("/other", "", body));
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
}

/// DNS rebinding guard of both loopback listeners: `serve --listen` and
/// `record --listen` answer a foreign `Origin` or a non-loopback `Host` 403
/// (before anything is recorded or forwarded); `--allow-origin` adds one.
#[test]
fn serve_and_record_listen_answer_a_foreign_origin_or_host_403() {
    let (_g, serve_port) = serve_http("everything-http.jsonl", "fixed:0");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let rec_port = free_port();
    let mut cmd = Command::new(mcptape());
    cmd.arg("record")
        .arg("-o")
        .arg(&out)
        .args(["--listen", &format!("127.0.0.1:{rec_port}")])
        .args(["--upstream", &format!("http://127.0.0.1:{serve_port}/mcp")])
        .args(["--allow-origin", "https://inspector.example"]);
    let _rec = spawn_listening(&mut cmd, rec_port);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    for port in [serve_port, rec_port] {
        let req = |headers: String| {
            format!(
                "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
                init.len()
            )
        };
        let host = format!("Host: 127.0.0.1:{port}\r\n");
        let r = raw_http(
            port,
            &req(format!("{host}Origin: http://evil.example.com\r\n")),
        );
        assert!(r.starts_with("HTTP/1.1 403"), "{port}: {r}");
        let r = raw_http(port, &req("Host: evil.example.com\r\n".to_owned()));
        assert!(r.starts_with("HTTP/1.1 403"), "{port}: {r}");
        let r = raw_http(
            port,
            &req(format!("{host}Origin: http://localhost:6274\r\n")),
        );
        assert!(r.starts_with("HTTP/1.1 200"), "{port}: {r}");
    }
    // --allow-origin on record: forwarded; serve without it refuses the same origin.
    let r = raw_http(
        rec_port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{rec_port}\r\nOrigin: https://inspector.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
            init.len()
        ),
    );
    // The proxy let it through; the upstream (serve, no --allow-origin) decides.
    assert!(r.starts_with("HTTP/1.1 403"), "{r}");
    assert!(r.contains("mcptape serve: foreign Origin"), "{r}");
    assert!(!r.contains("mcptape record:"), "{r}");
}
