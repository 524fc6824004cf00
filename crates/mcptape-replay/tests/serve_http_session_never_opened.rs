//! `serve --listen` of a recording where a 2026-07-28 client drove a 2025
//! session server that never opened a session (the conformance suite with
//! `--spec-version 2026-07-28` against server-everything): every POST was
//! answered 400 "Server not initialized" with a null id. The replay gives
//! that recorded rejection, not an answer the server never gave (a
//! synthesized or "not recorded" reply with the request's id).

use crate::common;

use common::{instant_server, post_raw, serve_on_loopback, tape_of};
use serde_json::{Value, json};

const TAPE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/http-session-never-opened.jsonl"
);

/// Serves [`TAPE`] on a loopback port; the port.
async fn listen() -> u16 {
    let tape = tape_of(TAPE);
    assert!(tape.session_rejection.is_some());
    serve_on_loopback(instant_server(tape), &[]).await.port()
}

/// One POST of `body` without `Mcp-Session-Id`: (status, JSON body).
async fn post(port: u16, body: &str) -> (u16, Value) {
    let out = post_raw(port, &format!("Host: 127.0.0.1:{port}\r\n"), body).await;
    let status = out.get(9..12).unwrap_or("").parse().unwrap_or(0);
    let (_, json_body) = out.split_once("\r\n\r\n").unwrap_or(("", ""));
    let v = serde_json::from_str(json_body).unwrap_or_else(|e| panic!("{e}: {out}"));
    (status, v)
}

#[tokio::test]
async fn a_session_server_that_never_opened_a_session_replays_its_rejection() {
    let port = listen().await;
    let rejected = json!({
        "jsonrpc": "2.0",
        "error": {"code": -32000, "message": "Bad Request: Server not initialized"},
        "id": null
    });
    // The recorded request, and an unrecorded one the recorded capabilities
    // would otherwise answer: the session rejection, byte for byte.
    for body in [
        r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"t"}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#,
    ] {
        assert_eq!(post(port, body).await, (400, rejected.clone()), "{body}");
    }
    // The rejected handshake is paired with its request (tape.rs): the
    // recorded 400 and error, under the request's id.
    let (status, v) = post(
        port,
        r#"{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    )
    .await;
    assert_eq!((status, &v["error"]), (400, &rejected["error"]), "{v}");
}
