//! `serve --listen` in-process (Streamable HTTP on a loopback port): the
//! DNS-rebinding guard answers a foreign `Origin` or `Host` 403; an unknown or
//! stale `Mcp-Session-Id` gets the recording's own answer to that case (else
//! 404), never a rejection recorded for another reason; session ids are
//! random 128-bit hex.

use crate::common;

use common::{corpus, instant_server, post_raw as post, serve_on_loopback, tape_of};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Serves `path` on a loopback port, extra origins `allowed`; the port.
async fn listen(path: &str, allowed: &[&str]) -> u16 {
    serve_on_loopback(instant_server(tape_of(path)), allowed)
        .await
        .port()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#;

fn status(r: &str) -> &str {
    r.get(9..12).unwrap_or("")
}

fn session_of(r: &str) -> String {
    r.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("no session id: {r}"))
        .trim()
        .to_owned()
}

#[tokio::test]
async fn foreign_origin_is_403() {
    let port = listen(
        &corpus("everything-http.jsonl"),
        &["https://inspector.example"],
    )
    .await;
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    for origin in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.example",
    ] {
        let r = post(port, &format!("{host}Origin: {origin}\r\n"), INIT).await;
        assert_eq!(status(&r), "403", "{origin}: {r}");
        assert!(r.contains("foreign Origin"), "{r}");
    }
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1",
        "https://[::1]:9",
        "https://inspector.example",
    ] {
        let r = post(port, &format!("{host}Origin: {origin}\r\n"), INIT).await;
        assert_eq!(status(&r), "200", "{origin}: {r}");
    }
    // No Origin at all (non-browser clients): accepted.
    assert_eq!(status(&post(port, &host, INIT).await), "200");
}

#[tokio::test]
async fn host_not_loopback_is_403() {
    let port = listen(&corpus("everything-http.jsonl"), &[]).await;
    for host in [
        "evil.example.com".to_owned(),
        format!("evil.example.com:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "localhost".to_owned(),
    ] {
        let r = post(port, &format!("Host: {host}\r\n"), INIT).await;
        assert_eq!(status(&r), "403", "{host}: {r}");
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let r = post(port, &format!("Host: {host}\r\n"), INIT).await;
        assert_eq!(status(&r), "200", "{host}: {r}");
    }
}

#[tokio::test]
async fn stale_session_gets_the_recorded_404() {
    // server-everything's recording shows no stale-session exchange: 404 with
    // the SDK's -32001 body, not the 400 it recorded for a missing session.
    let port = listen(&corpus("everything-http.jsonl"), &[]).await;
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let r = post(port, &format!("{host}Mcp-Session-Id: 0123\r\n"), LIST).await;
    assert_eq!(status(&r), "404", "{r}");
    assert!(
        r.contains("-32001") && r.contains("Session not found"),
        "{r}"
    );
    // mcptape's own rejection echoes the readable id (JSON-RPC 2.0 §5), which
    // its own check rule error-id-null asks of a server.
    assert!(
        r.contains(r#""id":2"#) && !r.contains(r#""id":null"#),
        "{r}"
    );
    // A session opened, ended by DELETE, then used again: 404 as well.
    let sid = session_of(&post(port, &host, INIT).await);
    let r = post(port, &format!("{host}Mcp-Session-Id: {sid}\r\n"), LIST).await;
    assert_eq!(status(&r), "200", "{r}");
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    s.write_all(
        format!("DELETE /mcp HTTP/1.1\r\n{host}Mcp-Session-Id: {sid}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert_eq!(status(&out), "200", "{out}");
    let r = post(port, &format!("{host}Mcp-Session-Id: {sid}\r\n"), LIST).await;
    assert_eq!(status(&r), "404", "{r}");

    // The fallback recording holds a 400 -32000 rejection of `server/discover`:
    // a stale session never gets that one.
    let port = listen(
        &corpus("crawl-everything-http-2026-07-28-fallback.jsonl"),
        &[],
    )
    .await;
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let r = post(port, &format!("{host}Mcp-Session-Id: 0123\r\n"), LIST).await;
    assert_eq!(status(&r), "404", "{r}");
    assert!(!r.contains("Server not initialized"), "{r}");

    // A recording that shows its own answer to a stale session: that one.
    let port = listen(&data("http-stale-session-404.jsonl"), &[]).await;
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let r = post(port, &format!("{host}Mcp-Session-Id: 0123\r\n"), LIST).await;
    assert_eq!(status(&r), "404", "{r}");
    assert!(r.contains("Session not found (recorded)"), "{r}");
    let r = post(port, &host, LIST).await;
    assert_eq!(status(&r), "400", "{r}");
    assert!(r.contains("No valid session ID provided"), "{r}");
}

#[tokio::test]
async fn session_ids_are_128_random_bits_in_hex() {
    let port = listen(&corpus("everything-http.jsonl"), &[]).await;
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let a = session_of(&post(port, &host, INIT).await);
    let b = session_of(&post(port, &host, INIT).await);
    for s in [&a, &b] {
        assert_eq!(s.len(), 32, "{s}");
        assert!(s.bytes().all(|c| c.is_ascii_hexdigit()), "{s}");
    }
    assert_ne!(a, b);
    // Not a counter: the two differ in more than their last digits.
    let differing = a.bytes().zip(b.bytes()).filter(|(x, y)| x != y).count();
    assert!(differing > 4, "{a} {b}");
}
