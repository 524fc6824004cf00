//! The typed replies of `mcptape_wire::reply` serialize to the exact JSON text
//! `mcptape serve` writes (member order included: replays are compared byte
//! for byte), and read back through the one reader as what they claim to be.

use std::path::PathBuf;

use mcptape_wire::classify::{ReadErrorClass, classify_read_error};
use mcptape_wire::envelope::{self, ErrorObject, Message, RequestId};
use mcptape_wire::protocol::error_code::{
    INVALID_PARAMS, LEGACY_RESOURCE_NOT_FOUND, METHOD_NOT_FOUND, SESSION_NOT_FOUND,
    SESSION_REQUIRED,
};
use mcptape_wire::protocol::{Implementation, Revision, method};
use mcptape_wire::reply::{
    CancelledParams, CompleteResult, Completion, DiscoverResult, ElicitDecline, EmptyList,
    EmptyResult, InitializeResult, NoRoots, NotFoundData, ServerInfoMeta, StatelessResult,
};
use mcptape_wire::resources::{CacheScope, ResultType};
use serde_json::Value;
use serde_json::value::RawValue;

fn text(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap()
}

/// The raw `msg` text of every message record of a corpus transcript.
fn corpus_messages(name: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        msg: Option<&'a RawValue>,
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/transcripts")
        .join(name);
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    t.lines()
        .filter_map(|l| serde_json::from_str::<Line<'_>>(l).unwrap().msg)
        .map(|m| m.get().to_owned())
        .collect()
}

/// The recorded `initialize` result of `name`, as its raw bytes.
fn recorded_initialize_result(name: &str) -> String {
    corpus_messages(name)
        .into_iter()
        .find_map(|m| {
            let env = envelope::scan_envelope(m.as_bytes()).ok()?;
            let result = &m[env.result?];
            let v: Value = serde_json::from_str(result).ok()?;
            v.get("protocolVersion")?;
            Some(result.to_owned())
        })
        .unwrap()
}

#[test]
fn not_found_for_missing_txt_is_32602_with_data_uri() {
    let m = Message::error(
        Some(RequestId::number(4)),
        ErrorObject::resource_not_found(INVALID_PARAMS, "file:///missing.txt"),
    );
    let t = m.to_json();
    assert_eq!(
        t,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"file:///missing.txt"}}}"#
    );
    // What a host makes of it: not found, 2026-07-28 code.
    let Message::Error(e) = envelope::parse_message(t.as_bytes()).unwrap() else {
        panic!("{t}")
    };
    assert_eq!(
        classify_read_error(&e.error),
        ReadErrorClass::NotFound {
            uri: "file:///missing.txt".into(),
            legacy: false
        }
    );
}

#[test]
fn not_found_legacy_32002_keeps_data_uri() {
    let e = ErrorObject::resource_not_found(LEGACY_RESOURCE_NOT_FOUND, "docs://team/gone");
    assert_eq!(
        text(&e),
        r#"{"code":-32002,"message":"Resource not found","data":{"uri":"docs://team/gone"}}"#
    );
    assert_eq!(
        classify_read_error(&e),
        ReadErrorClass::NotFound {
            uri: "docs://team/gone".into(),
            legacy: true
        }
    );
    assert_eq!(
        text(&NotFoundData {
            uri: "demo://nope/é\"x"
        }),
        r#"{"uri":"demo://nope/é\"x"}"#
    );
}

#[test]
fn error_object_without_data_has_no_data_member() {
    let e = ErrorObject::new(METHOD_NOT_FOUND, "Method not found");
    assert_eq!(e.data, None);
    assert_eq!(text(&e), r#"{"code":-32601,"message":"Method not found"}"#);
    let e = ErrorObject::with_data(METHOD_NOT_FOUND, "m", &NotFoundData { uri: "x://y" });
    assert_eq!(
        text(&e),
        r#"{"code":-32601,"message":"m","data":{"uri":"x://y"}}"#
    );
}

/// The two Streamable HTTP session rejections serve writes when the
/// recording has none of its own (400 and 404).
#[test]
fn session_rejections_are_null_id_errors_32000_and_32001() {
    assert_eq!((SESSION_REQUIRED, SESSION_NOT_FOUND), (-32000, -32001));
    assert_eq!(
        Message::error(None, ErrorObject::session_required()).to_json(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#
    );
    assert_eq!(
        Message::error(None, ErrorObject::session_not_found()).to_json(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#
    );
}

#[test]
fn reply_ids_are_written_as_sent_past_u64_and_with_escapes() {
    let big = RequestId::from_json("18446744073709551616").unwrap();
    assert_eq!(
        Message::result(big, &EmptyResult {}).to_json(),
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}"#
    );
    let escaped = RequestId::from_json(r#""\u0041b""#).unwrap();
    assert_eq!(
        Message::result(escaped, &EmptyResult {}).to_json(),
        r#"{"jsonrpc":"2.0","id":"\u0041b","result":{}}"#
    );
}

#[test]
fn empty_lists_are_one_empty_member_named_by_the_method() {
    let cases = [
        (method::RESOURCES_LIST, r#"{"resources":[]}"#),
        (
            method::RESOURCES_TEMPLATES_LIST,
            r#"{"resourceTemplates":[]}"#,
        ),
        (method::TOOLS_LIST, r#"{"tools":[]}"#),
        (method::PROMPTS_LIST, r#"{"prompts":[]}"#),
    ];
    for (m, want) in cases {
        let list = EmptyList::of(m).unwrap();
        assert_eq!(text(&list), want, "{m}");
    }
    assert_eq!(EmptyList::of(method::RESOURCES_READ), None);
    assert_eq!(EmptyList::of("resources/List"), None);
}

#[test]
fn complete_result_none_and_with_total() {
    assert_eq!(
        text(&CompleteResult::none()),
        r#"{"completion":{"values":[],"hasMore":false}}"#
    );
    let r = CompleteResult {
        completion: Completion {
            values: vec!["python".into(), "pytorch".into()],
            total: Some(10),
            has_more: Some(true),
        },
    };
    assert_eq!(
        text(&r),
        r#"{"completion":{"values":["python","pytorch"],"total":10,"hasMore":true}}"#
    );
}

/// The `initialize` result of everything-stdio.jsonl (server-everything 2.0.0):
/// its `serverInfo` keeps `title`, and the four members in the spec's order
/// give back the recorded bytes.
#[test]
fn initialize_result_echoes_recorded_server_info_of_everything_stdio() {
    let raw = recorded_initialize_result("everything-stdio.jsonl");
    let rec: Value = serde_json::from_str(&raw).unwrap();
    let mut r = InitializeResult {
        protocol_version: Revision::V2025_11_25,
        capabilities: rec["capabilities"].clone(),
        server_info: rec["serverInfo"].clone(),
        instructions: None,
    };
    assert_eq!(
        text(&r),
        concat!(
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"#,
            r#""prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"#,
            r#""logging":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}},"#,
            r#""completions":{}},"serverInfo":{"name":"mcp-servers/everything","#,
            r#""title":"Everything Reference Server","version":"2.0.0"}}"#
        )
    );
    r.instructions = Some(rec["instructions"].clone());
    assert_eq!(text(&r), raw);
}

#[test]
fn initialize_result_with_mcptape_as_server_info() {
    let r = InitializeResult {
        protocol_version: Revision::V2025_06_18,
        capabilities: serde_json::json!({}),
        server_info: serde_json::to_value(Implementation {
            name: "mcptape".into(),
            version: "0.1.0".into(),
        })
        .unwrap(),
        instructions: None,
    };
    assert_eq!(
        text(&r),
        r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mcptape","version":"0.1.0"}}"#
    );
}

#[test]
fn discover_result_puts_server_info_in_meta_before_instructions() {
    let r = DiscoverResult {
        supported_versions: vec![Revision::V2025_11_25],
        capabilities: serde_json::json!({"resources": {"subscribe": true}}),
        meta: Some(ServerInfoMeta {
            server_info: serde_json::json!({"name": "tiny", "version": "1"}),
        }),
        instructions: Some(Value::String("Read docs:// first.".into())),
    };
    assert_eq!(
        text(&r),
        concat!(
            r#"{"supportedVersions":["2025-11-25"],"capabilities":{"resources":{"subscribe":true}},"#,
            r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tiny","version":"1"}},"#,
            r#""instructions":"Read docs:// first."}"#
        )
    );
    let bare = DiscoverResult {
        supported_versions: vec![Revision::V2026_07_28, Revision::V2025_11_25],
        capabilities: serde_json::json!({}),
        meta: None,
        instructions: None,
    };
    assert_eq!(
        text(&bare),
        r#"{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{}}"#
    );
}

#[test]
fn stateless_result_members_follow_the_body() {
    assert_eq!(
        text(&StatelessResult::complete_uncached(
            EmptyList::Tools,
            method::TOOLS_LIST
        )),
        r#"{"tools":[],"ttlMs":0,"cacheScope":"private","resultType":"complete"}"#
    );
    // Not one of the six cacheable methods: `resultType` only.
    assert_eq!(
        text(&StatelessResult::complete_uncached(
            CompleteResult::none(),
            method::COMPLETION_COMPLETE
        )),
        r#"{"completion":{"values":[],"hasMore":false},"resultType":"complete"}"#
    );
    assert_eq!(
        text(&StatelessResult::complete_uncached(
            EmptyResult {},
            method::LOGGING_SET_LEVEL
        )),
        r#"{"resultType":"complete"}"#
    );
    assert_eq!(
        text(&StatelessResult::session(EmptyList::Prompts)),
        r#"{"prompts":[]}"#
    );
    let r = StatelessResult {
        body: EmptyList::Resources,
        ttl_ms: Some(60_000),
        cache_scope: Some(CacheScope::Public),
        result_type: Some(ResultType::InputRequired),
    };
    assert_eq!(
        text(&r),
        r#"{"resources":[],"ttlMs":60000,"cacheScope":"public","resultType":"input_required"}"#
    );
}

#[test]
fn client_answers_and_cancel_params_are_the_spec_shapes_with_the_id_as_sent() {
    assert_eq!(text(&ElicitDecline::default()), r#"{"action":"decline"}"#);
    assert_eq!(text(&NoRoots::default()), r#"{"roots":[]}"#);
    for raw in ["18446744073709551616", r#""\u0041b""#, "-3"] {
        let id = RequestId::from_json(raw).unwrap();
        let params = CancelledParams {
            request_id: &id,
            reason: "deadline",
        };
        assert_eq!(
            text(&params),
            format!(r#"{{"requestId":{raw},"reason":"deadline"}}"#)
        );
    }
}
