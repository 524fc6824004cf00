//! Entry points for the fuzz targets in `fuzz/` (not a stable API).
//!
//! [`serve_decide`]: the recorded server's [`Server::decide_bytes`] on arbitrary bytes (one
//! stdio line or one HTTP body) must never panic, and every reply it sends must be one
//! JSON-RPC 2.0 response object (JSON-RPC 2.0 §5): `"jsonrpc": "2.0"`, exactly one of `result`
//! or `error`, and the `id` the answer names. Bytes that are not a JSON-RPC message are
//! answered at once with HTTP status 400.

use serde_json::Value;

use crate::latency::{FaultSpec, LatencyModel};
use crate::serve::{Answer, Server};
use crate::tape::Tape;

/// A small recorded session (2025-11-25): `initialize`, `resources/list`, a text read, a blob
/// read, a read answered with a JSON-RPC error, and a notification.
pub const SERVE_TRANSCRIPT: &str = concat!(
    r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-01-01T00:00:00Z"}"#,
    "\n",
    r#"{"tUs":10,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}"#,
    "\n",
    r#"{"tUs":20,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"s","version":"1"}}}}"#,
    "\n",
    r#"{"tUs":30,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#,
    "\n",
    r#"{"tUs":40,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":"l","method":"resources/list","params":{}}}"#,
    "\n",
    r#"{"tUs":50,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":"l","result":{"resources":[{"uri":"file:///p/a.md","name":"a"}]}}}"#,
    "\n",
    r#"{"tUs":60,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///p/a.md"}}}"#,
    "\n",
    r##"{"tUs":70,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"file:///p/a.md","mimeType":"text/markdown","text":"# a"}]}}}"##,
    "\n",
    r#"{"tUs":80,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///p/img/b.png"}}}"#,
    "\n",
    r#"{"tUs":90,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///p/img/b.png","mimeType":"image/png","blob":"iVBORw0KGgo="}]}}}"#,
    "\n",
    r#"{"tUs":100,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///p/missing"}}}"#,
    "\n",
    r#"{"tUs":110,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///p/missing"}}}}"#,
    "\n",
);

/// The server [`serve_decide`] runs: [`SERVE_TRANSCRIPT`], no delay, no faults, seed 1, the
/// default roots (`file:///p/`).
///
/// # Panics
/// If [`SERVE_TRANSCRIPT`] does not load (a bug in this module, caught by its unit test).
pub fn serve_server() -> Server {
    let t = mcptape_transcript::reader::read(SERVE_TRANSCRIPT.as_bytes())
        .expect("SERVE_TRANSCRIPT is a valid transcript");
    let tape = Tape::from_transcript(&t).expect("SERVE_TRANSCRIPT is replayable");
    let model = LatencyModel::parse("fixed:0ms").expect("constant model");
    Server::new(tape, model, FaultSpec::default(), 1, &[]).expect("default roots are valid")
}

/// The one [`serve_server`] every [`serve_decide`] input goes to. Building a server per input
/// (reading and indexing the tape, allocating its five reply-time HdrHistograms, ~90 KiB
/// zeroed) was most of the target's cost: 288 execs/s. Sharing it is sound for the property:
/// with no faults and `fixed:0ms` a decision does not depend on earlier ones (the scheduler's
/// random draws only pick faults and delays), and the state inputs leave behind is counters.
static SERVE_SERVER: std::sync::LazyLock<Server> = std::sync::LazyLock::new(serve_server);

/// Feeds `data` to [`Server::decide_bytes`] of the shared [`serve_server`] and checks the
/// answer (module docs). Panics on a violation, for the fuzzer to report.
pub fn serve_decide(data: &[u8]) {
    let answer = SERVE_SERVER.decide_bytes(data);
    if let Answer::Reply {
        id, body, status, ..
    } = &answer
    {
        let reply: Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("reply body is not JSON ({e}): {body}"));
        let obj = reply
            .as_object()
            .unwrap_or_else(|| panic!("reply is not an object: {body}"));
        assert_eq!(obj.get("jsonrpc"), Some(&Value::from("2.0")), "{body}");
        assert!(
            obj.contains_key("result") != obj.contains_key("error"),
            "a response has exactly one of result/error: {body}"
        );
        assert_eq!(
            obj.get("id"),
            Some(id),
            "reply id differs from the answer's: {body}"
        );
        // Whether the input is JSON matters only here, for a reply that is not a 400 (the
        // input used to be parsed into a `Value` up front, whatever the answer).
        if *status != Some(400) && serde_json::from_slice::<Value>(data).is_err() {
            panic!("not JSON must be a 400, got {status:?}: {body}");
        }
    }
    // A request that is well-formed JSON-RPC gets a reply (recorded, error or fault); the
    // server has no faults here, so never a stall or drop.
    assert!(
        !matches!(answer, Answer::Stall | Answer::Drop),
        "no faults are configured"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_decide_accepts_the_recorded_requests_and_garbage() {
        serve_decide(br#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///p/a.md"}}"#);
        serve_decide(br#"{"jsonrpc":"2.0","id":"x","method":"nope"}"#);
        serve_decide(b"not json");
        serve_decide(b"");
        serve_decide(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        );
        serve_decide(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    }

    #[test]
    fn recorded_read_is_replayed_under_the_new_id() {
        let s = serve_server();
        let a = s.decide_bytes(
            br#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///p/a.md"}}"#,
        );
        let Answer::Reply { id, body, .. } = a else {
            panic!("expected a reply, got {a:?}");
        };
        assert_eq!(id, Value::from(9));
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["result"]["contents"][0]["text"], "# a");
        assert_eq!(v["id"], 9);
    }
}
