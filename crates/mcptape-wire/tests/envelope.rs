//! JSON-RPC 2.0 envelope (the one reader, `mcptape_wire::envelope`): one test per rule of
//! issue 2, the id as raw text (issue 22).

use mcptape_wire::envelope::{Frame, Message, RequestId, parse, parse_message, scan_envelope};
use mcptape_wire::error::{JsonErrorKind, WireErrorKind};

fn msg(s: &str) -> Message {
    parse_message(s.as_bytes()).unwrap()
}

fn err_kind(s: &str) -> WireErrorKind {
    parse(s.as_bytes()).unwrap_err().kind().clone()
}

/// Parsing `$json` fails with an error kind matching `$kind`.
macro_rules! assert_kind {
    ($json:expr, $kind:pat) => {{
        let kind = err_kind($json);
        assert!(matches!(kind, $kind), "{}: {kind:?}", $json);
    }};
}

#[test]
fn request_with_integer_id() {
    let m =
        msg(r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"docs://a"}}"#);
    let Message::Request(r) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(r.id, RequestId::number(7));
    assert_eq!(r.method, "resources/read");
    assert_eq!(r.params.as_ref().unwrap()["uri"], "docs://a");
    assert_eq!(m.method(), Some("resources/read"));
    assert_eq!(m.id(), Some(&RequestId::number(7)));
}

#[test]
fn string_id_and_integer_id_are_different() {
    let a = msg(r#"{"jsonrpc":"2.0","id":"1","method":"m"}"#);
    let b = msg(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#);
    assert_eq!(a.id(), Some(&RequestId::string("1")));
    assert_eq!(b.id(), Some(&RequestId::number(1)));
    assert_ne!(a.id(), b.id());
    assert_eq!(a.id().unwrap().to_string(), "\"1\"");
    assert_eq!(b.id().unwrap().to_string(), "1");
}

#[test]
fn float_id_rejected_no_float_round_trip() {
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#),
        WireErrorKind::InvalidId
    );
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#),
        WireErrorKind::InvalidId
    );
}

#[test]
fn large_integer_id_kept_exactly() {
    let m = msg(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}"#);
    assert_eq!(m.id(), Some(&RequestId::number(9_007_199_254_740_993)));
    assert!(m.to_json().contains("9007199254740993"));
}

/// JSON-RPC 2.0 §4 sets no range on an integer id: one past `u64` is an id,
/// kept as its text from the scan to the written reply (issue 22).
#[test]
fn id_past_u64_is_raw_text_end_to_end() {
    let s = r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#;
    let e = scan_envelope(s.as_bytes()).unwrap();
    let id = e.id.clone().unwrap();
    assert_eq!(id.as_json(), "18446744073709551616");
    assert_eq!(&s[e.id_range.clone().unwrap()], "18446744073709551616");
    assert_eq!(id.as_i64(), None);
    let m = msg(s);
    assert_eq!(m.to_json(), s);
    let reply = Message::Response(mcptape_wire::envelope::Response {
        id,
        result: serde_json::json!({}),
    });
    assert_eq!(
        reply.to_json(),
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}"#
    );
    let e = scan_envelope(br#"{"jsonrpc":"2.0","id":-92233720368547758080,"result":{}}"#).unwrap();
    assert_eq!(e.id.unwrap().as_json(), "-92233720368547758080");
}

#[test]
fn negative_zero_and_exponent_ids_rejected() {
    for s in [
        r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1e2,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
    ] {
        assert_eq!(err_kind(s), WireErrorKind::InvalidId, "{s}");
    }
}

#[test]
fn string_id_keeps_its_escapes() {
    let m = msg(r#"{"jsonrpc":"2.0","id":"a\u0062","method":"m"}"#);
    let id = m.id().unwrap();
    assert_eq!(id.as_json(), r#""a\u0062""#);
    assert_eq!(id.as_str().as_deref(), Some("ab"));
    assert_ne!(Some(id), Some(&RequestId::string("ab")));
}

#[test]
fn missing_id_makes_a_notification() {
    let m = msg(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    let Message::Notification(n) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(n.method, "notifications/cancelled");
    assert_eq!(m.id(), None);
}

#[test]
fn null_id_on_request_is_invalid_request() {
    let e = parse(br#"{"jsonrpc":"2.0","id":null,"method":"resources/read"}"#).unwrap_err();
    assert_eq!(e.kind(), &WireErrorKind::NullRequestId);
    assert_eq!(e.jsonrpc_code(), -32600);
    assert_eq!(e.offset(), Some(22));
}

#[test]
fn response_parses_and_keeps_result() {
    let m = msg(r#"{"jsonrpc":"2.0","id":7,"result":{"contents":[]}}"#);
    let Message::Response(r) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(r.id, RequestId::number(7));
    assert_eq!(r.result["contents"], serde_json::json!([]));
}

#[test]
fn error_response_parses() {
    let m = msg(
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"docs://x"}}}"#,
    );
    let Message::Error(e) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(e.id, Some(RequestId::number(9)));
    assert_eq!(e.error.code, -32002);
    assert_eq!(e.error.message, "Resource not found");
    assert_eq!(e.error.data.as_ref().unwrap()["uri"], "docs://x");
}

#[test]
fn error_response_with_null_id() {
    let m = msg(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    assert_eq!(m.id(), None);
}

#[test]
fn response_without_id_rejected() {
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","result":{}}"#),
        WireErrorKind::MissingResponseId
    );
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
        WireErrorKind::MissingResponseId
    );
}

#[test]
fn missing_or_wrong_version_rejected() {
    assert_eq!(
        err_kind(r#"{"id":1,"method":"m"}"#),
        WireErrorKind::BadVersion
    );
    assert_eq!(
        err_kind(r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#),
        WireErrorKind::BadVersion
    );
}

#[test]
fn result_and_error_together_rejected() {
    assert_kind!(
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
        WireErrorKind::Ambiguous(_)
    );
}

#[test]
fn params_must_be_structured() {
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#),
        WireErrorKind::InvalidParams
    );
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#),
        WireErrorKind::InvalidParams
    );
}

#[test]
fn unknown_member_rejected() {
    assert_eq!(
        err_kind(r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":1}"#),
        WireErrorKind::UnknownMember("extra".into())
    );
}

#[test]
fn error_code_must_be_integer() {
    assert_kind!(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
        WireErrorKind::InvalidErrorObject(_)
    );
}

#[test]
fn batch_is_recognised_with_per_element_results() {
    let f = parse(br#"[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"b"}]"#)
        .unwrap();
    let Frame::Batch(items) = f else { panic!() };
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].as_ref().unwrap().method(), Some("a"));
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(e.kind(), &WireErrorKind::NotAnObject);
    assert_eq!(e.index(), Some(1));
    assert_eq!(e.offset(), Some(40));
    assert_eq!(items[2].as_ref().unwrap().method(), Some("b"));
}

#[test]
fn empty_batch_rejected() {
    assert_eq!(err_kind("[]"), WireErrorKind::EmptyBatch);
}

#[test]
fn non_object_rejected() {
    assert_eq!(err_kind("42"), WireErrorKind::NotAnObject);
}

#[test]
fn duplicate_key_in_message_rejected() {
    let e = parse(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).unwrap_err();
    assert_eq!(
        e.kind(),
        &WireErrorKind::Json(JsonErrorKind::DuplicateKey { key: "id".into() })
    );
    assert_eq!(e.offset(), Some(24));
    assert_eq!(e.jsonrpc_code(), -32700);
}

#[test]
fn serialize_then_parse_is_identity() {
    for s in [
        r#"{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"n"}"#,
        r#"{"jsonrpc":"2.0","id":-3,"result":{"contents":[],"resultType":"complete"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"down","data":[1]}}"#,
    ] {
        let m = msg(s);
        let again = msg(&m.to_json());
        assert_eq!(m, again, "{s}");
        assert_eq!(m.to_json(), s);
    }
}

/// Texts the `&str` entry points must read as the byte ones do: a raw
/// control byte after non-ASCII text, a lone surrogate, a duplicate key, a
/// bad batch element, non-ASCII text and escapes, trailing bytes.
const UTF8_KNOWN_CASES: [&str; 7] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///é/ü"}}"#,
    r#"{"jsonrpc":"2.0","id":"\u00e9","result":{"contents":[{"uri":"a","text":"x\ny ☃"}]}}"#,
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"é\u{1}\"}}",
    r#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
    r#"[{"jsonrpc":"2.0","id":1,"result":{"ü":1}},{"jsonrpc":"1.0","id":2,"result":{}}]"#,
    r#"{"jsonrpc":"2.0","id":1,"result":{"ü":"ü"}} x"#,
];

/// The `&str` entry points (their UTF-8 not checked again) give what the
/// byte ones give on the same text ([`UTF8_KNOWN_CASES`]): `scan_frame_str`
/// what `scan_frame` gives and `scan_envelope_str` what `scan_envelope`
/// gives (the batch is "not an object" to both): envelopes, ranges and
/// errors with their offsets; a raw control byte after non-ASCII text is
/// refused at that byte.
#[test]
fn str_entry_points_agree_with_the_byte_ones_on_the_same_text() {
    use mcptape_wire::envelope::{scan_envelope, scan_envelope_str, scan_frame, scan_frame_str};
    for m in UTF8_KNOWN_CASES {
        assert_eq!(scan_frame_str(m), scan_frame(m.as_bytes()), "{m}");
        assert_eq!(scan_envelope_str(m), scan_envelope(m.as_bytes()), "{m}");
    }
    let ctl = UTF8_KNOWN_CASES[2];
    let at = Some(ctl.find('\u{1}').unwrap());
    assert_eq!(scan_frame_str(ctl).unwrap_err().offset(), at);
    assert_eq!(scan_envelope_str(ctl).unwrap_err().offset(), at);
    let ok = scan_envelope_str(UTF8_KNOWN_CASES[1]).unwrap();
    assert_eq!(ok.id.unwrap().as_json(), r#""\u00e9""#);
}
