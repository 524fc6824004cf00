//! `serve` answers what a real client asks (issue 14): housekeeping the
//! recorded capabilities imply (`--unrecorded answer`, the default) or strict
//! errors (`--unrecorded error`); the other era's handshake built from the
//! recorded one; ids compared and echoed as the raw JSON text sent; a
//! recording holding a lone surrogate escape replayed byte-exact. No clock
//! involved (`decide_bytes`), except the aliasing test on the virtual timer.

use crate::common;

use std::sync::Arc;

use common::{TINY, corpus, recorded_reply, tape_of, virtual_server};
use mcptape_replay::serve::{Answer, Server, Unrecorded, serve_stream};
use serde_json::{Value, json};

const LONE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/lone-surrogate.jsonl"
);

fn server(path: &str) -> Server {
    virtual_server(tape_of(path), "fixed:0ms")
}

/// The reply body (text) of one answer.
fn body(srv: &Server, line: &str) -> String {
    match srv.decide_bytes(line.as_bytes()) {
        Answer::Reply { body, .. } => body,
        other => panic!("{line}: expected a reply, got {other:?}"),
    }
}

fn answer(srv: &Server, line: &str) -> Value {
    let b = body(srv, line);
    serde_json::from_str(&b).unwrap_or_else(|e| panic!("{b}: {e}"))
}

#[test]
fn unrecorded_ping_and_set_level_are_answered() {
    // server-everything advertises `logging`; the recording has neither call.
    let srv = server(&corpus("everything-stdio.jsonl"));
    let v = answer(&srv, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(v, json!({"jsonrpc": "2.0", "id": 5, "result": {}}));
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"debug"}}"#,
    );
    assert_eq!(v, json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
    // Never-recorded lists of advertised capabilities: empty pages.
    let v = answer(&srv, r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
    assert_eq!(v["result"], json!({"tools": []}));
    let v = answer(&srv, r#"{"jsonrpc":"2.0","id":8,"method":"prompts/list"}"#);
    assert_eq!(v["result"], json!({"prompts": []}));
    // A notification is accepted silently.
    assert_eq!(
        srv.decide_bytes(br#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#),
        Answer::Nothing
    );
    // Anything else unrecorded stays -32601.
    let v = answer(&srv, r#"{"jsonrpc":"2.0","id":9,"method":"tasks/list"}"#);
    assert_eq!(v["error"]["code"], json!(-32601));
    let s = srv.summary();
    let synth: Vec<(&str, u64)> = s
        .synthesized
        .iter()
        .map(|(m, n)| (m.as_str(), *n))
        .collect();
    assert_eq!(
        synth,
        [
            ("logging/setLevel", 1),
            ("ping", 1),
            ("prompts/list", 1),
            ("tools/list", 1)
        ]
    );
    assert_eq!((s.requests, s.matched, s.unmatched, s.pinged), (5, 0, 1, 1));
    assert!(
        s.synthesized_note().unwrap().contains("logging/setLevel 1"),
        "{:?}",
        s.synthesized_note()
    );
}

#[test]
fn unrecorded_set_level_without_the_logging_capability_is_method_not_found() {
    // The Python server advertises no `logging`.
    let srv = server(&corpus("py-stdio-2025-11-25.jsonl"));
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#,
    );
    assert_eq!(v["error"]["code"], json!(-32601));
}

#[test]
fn unrecorded_error_policy_keeps_the_strict_answers() {
    let srv = server(&corpus("everything-stdio.jsonl")).with_unrecorded(Unrecorded::Error);
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"debug"}}"#,
    );
    assert_eq!(v["error"]["code"], json!(-32601));
    assert_eq!(
        v["error"]["message"],
        json!("mcptape serve: method logging/setLevel was not recorded")
    );
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"demo://resource/never"}}"#,
    );
    assert_eq!(v["error"]["code"], json!(-32602));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no recorded response")
    );
    // ping is a MUST under either policy.
    let v = answer(&srv, r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#);
    assert_eq!(v["result"], json!({}));
    let s = srv.summary();
    assert_eq!(s.synthesized.get("logging/setLevel"), None);
    assert_eq!(s.unmatched, 2);
}

#[test]
fn unrecorded_read_is_invalid_params_with_data_uri() {
    // 2026-07-28 recording: -32602 (SEP-2164) with data.uri.
    let srv = server(&corpus("py-stdio-2026-07-28.jsonl"));
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"mcptape://docs/never-recorded.md"}}"#,
    );
    assert_eq!(v["id"], json!(3));
    assert_eq!(v["error"]["code"], json!(-32602));
    assert_eq!(v["error"]["message"], json!("Resource not found"));
    assert_eq!(
        v["error"]["data"],
        json!({"uri": "mcptape://docs/never-recorded.md"})
    );
    assert_eq!(srv.summary().synthesized.get("resources/read"), Some(&1));
}

#[test]
fn unrecorded_read_on_a_2025_recording_without_a_recorded_not_found_is_minus_32002() {
    // lone-surrogate.jsonl: 2025-11-25, one read, no not-found of its own.
    let srv = server(LONE);
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///project/other.txt"}}"#,
    );
    assert_eq!(v["error"]["code"], json!(-32002));
    assert_eq!(
        v["error"]["data"]["uri"],
        json!("file:///project/other.txt")
    );
    // The tiny tape recorded its own not-found as -32602: that code wins.
    let srv = server(TINY);
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///project/other.md"}}"#,
    );
    assert_eq!(v["error"]["code"], json!(-32602));
}

#[test]
fn initialize_on_a_2026_recording_is_answered_from_its_server_discover() {
    let srv = server(&corpus("py-stdio-2026-07-28.jsonl"));
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    );
    let r = &v["result"];
    assert_eq!(r["protocolVersion"], json!("2025-06-18"));
    assert_eq!(r["serverInfo"]["name"], json!("mcptape-py-server"));
    assert_eq!(r["capabilities"]["resources"]["subscribe"], json!(true));
    assert_eq!(
        r["instructions"],
        json!("Resources for mcptape recordings.")
    );
    // An unknown asked version gets the newest session-era one.
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    );
    assert_eq!(v["result"]["protocolVersion"], json!("2025-11-25"));
    // The recorded era's own handshake and reads stay byte-exact.
    let recorded = recorded_reply(srv.tape(), "resources/list").to_owned();
    let b = body(
        &srv,
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
    );
    assert_eq!(b, recorded.replacen(r#""id":2"#, r#""id":1"#, 1));
    let s = srv.summary();
    assert_eq!(s.adapted, 2);
    assert_eq!(s.synthesized.get("initialize"), Some(&2));
}

#[test]
fn server_discover_on_a_2025_recording_is_answered_from_its_initialize() {
    let srv = server(&corpus("everything-stdio.jsonl"));
    let v = answer(
        &srv,
        r#"{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}"#,
    );
    let r = &v["result"];
    assert_eq!(v["id"], json!("d"));
    assert_eq!(r["supportedVersions"], json!(["2025-11-25"]));
    assert_eq!(r["capabilities"]["logging"], json!({}));
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        json!("mcp-servers/everything")
    );
    assert_eq!(srv.summary().adapted, 1);
}

#[test]
fn ids_past_u64_are_echoed_exactly() {
    let srv = server(TINY);
    for id in [
        "18446744073709551616",
        "-18446744073709551617",
        "123456789012345678901234567890",
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///project/a.md"}}}}"#
        );
        let Answer::Reply { body, id_text, .. } = srv.decide_bytes(line.as_bytes()) else {
            panic!("no reply to {line}");
        };
        assert_eq!(id_text, id);
        assert!(body.contains(&format!(r#""id":{id},"#)), "{body}");
        assert!(body.contains("# A\\n"), "{body}");
        // Unrecorded and synthesized answers too.
        let b = body_of(
            &srv,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
        );
        assert_eq!(b, format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    }
    // A fraction or exponent is still an invalid id.
    let b = body_of(&srv, r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#);
    assert!(b.contains("-32600"), "{b}");
    assert_eq!(srv.summary().matched, 3);
}

fn body_of(srv: &Server, line: &str) -> String {
    body(srv, line)
}

/// Over a stream on the virtual clock: requests `"1"` and `1` both pending
/// (10 ms delay), a cancel of `1` (number) cancels only that one; `"1"` is answered.
#[tokio::test(start_paused = true)]
async fn string_one_and_number_one_do_not_alias() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let srv = Arc::new(virtual_server(tape_of(TINY), "fixed:10ms"));
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, mut bw) = tokio::io::split(b);
    let task = tokio::spawn(serve_stream(srv.clone(), ar, aw));
    let read = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///project/a.md"}}}}"#
        ) + "\n"
    };
    bw.write_all(read(r#""1""#).as_bytes()).await.unwrap();
    bw.write_all(read("1").as_bytes()).await.unwrap();
    bw.write_all(read("18446744073709551616").as_bytes())
        .await
        .unwrap();
    bw.write_all(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n",
    )
    .await
    .unwrap();
    bw.shutdown().await.unwrap();
    let mut lines = BufReader::new(br).lines();
    let mut ids = Vec::new();
    while let Some(l) = lines.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&l).unwrap();
        assert!(v["result"]["contents"].is_array(), "{l}");
        ids.push(
            l.split(r#""id":"#)
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap()
                .to_owned(),
        );
    }
    task.await.unwrap().unwrap();
    assert_eq!(ids, [r#""1""#, "18446744073709551616"]);
    assert_eq!(srv.summary().cancelled, 1);
}

#[test]
fn lone_surrogate_recording_replays_byte_exact() {
    let text = std::fs::read_to_string(LONE).unwrap();
    // The recorded reply, as its bytes stand in the file.
    let recorded = text
        .lines()
        .nth(4)
        .unwrap()
        .split_once(r#""msg":"#)
        .unwrap()
        .1
        .strip_suffix('}')
        .unwrap()
        .to_owned();
    assert!(recorded.contains(r#""x\ud800y \ud83d\ude00 \udc00""#));
    assert!(
        serde_json::from_str::<Value>(&recorded).is_err(),
        "serde_json refuses it"
    );
    let srv = server(LONE);
    let b = body(
        &srv,
        r#"{"jsonrpc":"2.0","id":"r-7","method":"resources/read","params":{"uri":"file:///project/odd.txt"}}"#,
    );
    assert_eq!(b, recorded.replacen(r#""id":2"#, r#""id":"r-7""#, 1));
    assert_eq!(srv.summary().matched, 1);
}

/// Synthesized replies are built from `mcptape_wire::reply` values; their
/// bytes (member order included) are what serve wrote when they were `json!`
/// literals, so replays of them compare byte for byte across versions.
#[test]
fn synthesized_replies_keep_their_bytes_member_order_included() {
    let stateless = server(&corpus("py-stdio-2026-07-28.jsonl"));
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":6,"result":{"tools":[],"ttlMs":0,"cacheScope":"private","resultType":"complete"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"resources/subscribe","params":{"uri":"file:///missing.txt"}}"#,
            r#"{"jsonrpc":"2.0","id":10,"result":{"resultType":"complete"}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"demo://nope/é\"x"}}"#,
            r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"demo://nope/é\"x"}}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":16,"method":"made/up","params":{"uri":"x://y"}}"#,
            r#"{"jsonrpc":"2.0","id":16,"error":{"code":-32601,"message":"mcptape serve: method made/up was not recorded","data":{"method":"made/up","uri":"x://y"}}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":21,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#,
            r#"{"jsonrpc":"2.0","id":21,"result":{"protocolVersion":"2025-11-25","capabilities":{"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}},"serverInfo":{"name":"mcptape-py-server","version":"1.0.0"},"instructions":"Resources for mcptape recordings."}}"#,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"mcptape serve: invalid request: batches are not supported","data":{"reason":"batch"}}}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":25,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":25,"error":{"code":-32600,"message":"mcptape serve: invalid request: method is not a string at byte 34","data":{"reason":"method is not a string","offset":34}}}"#,
        ),
    ];
    for (line, want) in cases {
        assert_eq!(body(&stateless, line), want, "{line}");
    }
    let session = server(&corpus("py-stdio-2025-11-25.jsonl"));
    // Built from the recorded `initialize`; a 2026-07-28 result all the same, so it ends with
    // `ttlMs`/`cacheScope` (`server/discover` is cacheable) and `resultType` (it had none).
    let cases = [(
        r#"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2025-11-25"],"capabilities":{"prompts":{"listChanged":false},"resources":{"listChanged":false,"subscribe":false},"tools":{"listChanged":false}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcptape-py-server","version":"1.0.0"}},"instructions":"Resources for mcptape recordings.","ttlMs":0,"cacheScope":"private","resultType":"complete"}}"#,
    )];
    for (line, want) in cases {
        assert_eq!(body(&session, line), want, "{line}");
    }
    // A recorded method, params never recorded (none at all): `"params":null`.
    let tools = server(&corpus("everything-tools-stdio.jsonl"));
    assert_eq!(
        body(
            &tools,
            r#"{"jsonrpc":"2.0","id":"q\"\u00e9","method":"tools/call"}"#
        ),
        r#"{"jsonrpc":"2.0","id":"q\"\u00e9","error":{"code":-32602,"message":"mcptape serve: no recorded response for tools/call with these params","data":{"method":"tools/call","params":null}}}"#
    );
}
