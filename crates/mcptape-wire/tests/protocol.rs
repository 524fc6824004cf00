//! The protocol model: revision order, era boundary, the revision detector on
//! real transcripts, JSON Pointer escaping (RFC 6901).

use std::path::PathBuf;

use mcptape_wire::envelope;
use mcptape_wire::protocol::{
    self, Detected, Direction, Era, Implementation, JsonPointer, Observation, Revision,
    RevisionDetector, RevisionSource, detect_revision, error_code, escape_token, header, meta,
    method, unescape_token,
};
use serde_json::Value;

// --- revisions --------------------------------------------------------------

#[test]
fn known_revisions_order_by_date() {
    let k = Revision::KNOWN;
    for w in k.windows(2) {
        assert!(w[0] < w[1], "{} < {}", w[0], w[1]);
        assert!(w[0].as_str() < w[1].as_str());
    }
    assert_eq!(k[0].as_str(), "2024-11-05");
    assert_eq!(k[4].as_str(), "2026-07-28");
    assert_eq!(Revision::LATEST, Revision::V2026_07_28);
}

#[test]
fn new_normalises_known_strings_and_keeps_unknown_ones() {
    assert_eq!(Revision::new("2025-06-18"), Revision::V2025_06_18);
    assert!(matches!(Revision::new("2025-06-18"), Revision::V2025_06_18));
    assert!(matches!(Revision::new("2025-09-01"), Revision::Other(ref s) if s == "2025-09-01"));
    assert_eq!(
        "2025-11-25".parse::<Revision>().unwrap(),
        Revision::V2025_11_25
    );
    // A hand-built Other of a known string equals the variant.
    assert_eq!(Revision::Other("2025-06-18".into()), Revision::V2025_06_18);
    assert!(Revision::Other("2025-06-18".into()).is_known());
    assert!(!Revision::new("2025-09-01").is_known());
}

#[test]
fn unknown_revisions_compare_sanely() {
    let between = Revision::new("2025-09-01");
    assert!(Revision::V2025_06_18 < between && between < Revision::V2025_11_25);
    let future = Revision::new("2027-01-01");
    assert!(future > Revision::V2026_07_28);
    let draft = Revision::new("DRAFT-2026-v1");
    assert!(draft > future, "a draft orders after every date");
    for junk in ["1.0", "", "latest", "2025-6-18", "2025-06-1x"] {
        let j = Revision::new(junk);
        assert!(
            j < Revision::V2024_11_05,
            "{junk:?} orders before every date"
        );
    }
    // Total order is consistent with equality.
    let mut v = vec![
        draft.clone(),
        Revision::new("1.0"),
        future.clone(),
        between.clone(),
    ];
    v.extend(Revision::KNOWN);
    v.sort();
    let names: Vec<&str> = v.iter().map(Revision::as_str).collect();
    assert_eq!(
        names,
        [
            "1.0",
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-09-01",
            "2025-11-25",
            "2026-07-28",
            "2027-01-01",
            "DRAFT-2026-v1"
        ]
    );
}

#[test]
fn revision_serializes_as_its_wire_string() {
    assert_eq!(
        serde_json::to_string(&Revision::V2025_11_25).unwrap(),
        "\"2025-11-25\""
    );
    let r: Revision = serde_json::from_str("\"2026-07-28\"").unwrap();
    assert_eq!(r, Revision::V2026_07_28);
    assert_eq!(Revision::new("x").to_string(), "x");
}

// --- eras -------------------------------------------------------------------

#[test]
fn era_boundary_for_each_revision() {
    let want = [
        (Revision::V2024_11_05, Era::Session),
        (Revision::V2025_03_26, Era::Session),
        (Revision::V2025_06_18, Era::Session),
        (Revision::V2025_11_25, Era::Session),
        (Revision::V2026_07_28, Era::Stateless),
    ];
    for (r, era) in want {
        assert_eq!(r.era(), era, "{r}");
        assert_eq!(Era::of(r.as_str()), era, "{r}");
        assert_eq!(r.is_stateless_era(), era == Era::Stateless);
    }
    assert_eq!(Era::of("2026-07-27"), Era::Session);
    assert_eq!(Era::of("2026-07-29"), Era::Stateless);
    assert_eq!(Era::of("2027-01-01"), Era::Stateless);
    assert_eq!(Era::of("DRAFT-2026-v1"), Era::Stateless);
    // Not a date: before every date, so the session era (a plain string
    // comparison would put "latest" after "2026-07-28").
    assert_eq!(Era::of("latest"), Era::Session);
    assert_eq!(Era::of(""), Era::Session);
    assert_eq!(protocol::STATELESS_SINCE.era(), Era::Stateless);
    assert_eq!(protocol::FALLBACK_REVISION.era(), Era::Session);
    assert_eq!(Era::Session.handshake_method(), "initialize");
    assert_eq!(Era::Stateless.handshake_method(), "server/discover");
}

// --- names and params -------------------------------------------------------

#[test]
fn names_and_codes_match_the_spec() {
    assert_eq!(error_code::PARSE_ERROR, -32700);
    assert_eq!(error_code::INVALID_REQUEST, -32600);
    assert_eq!(error_code::METHOD_NOT_FOUND, -32601);
    assert_eq!(error_code::INVALID_PARAMS, -32602);
    assert_eq!(error_code::INTERNAL_ERROR, -32603);
    assert_eq!(error_code::LEGACY_RESOURCE_NOT_FOUND, -32002);
    assert_eq!(mcptape_wire::classify::METHOD_NOT_FOUND, -32601);
    assert_eq!(header::PROTOCOL_VERSION, "mcp-protocol-version");
    assert_eq!(header::SESSION_ID, "mcp-session-id");
    assert_eq!(method::RESOURCES_TEMPLATES_LIST, "resources/templates/list");
    assert_eq!(method::NOTIFICATIONS_CANCELLED, "notifications/cancelled");
    assert_eq!(
        meta::PROTOCOL_VERSION,
        "io.modelcontextprotocol/protocolVersion"
    );
}

#[test]
fn handshake_params_are_what_crawl_recorded() {
    // The first line of crawl-everything-stdio.jsonl / crawl-py-stdio-2026-07-28.jsonl.
    let client = Implementation {
        name: "mcptape".into(),
        version: "0.1.0".into(),
    };
    let init = protocol::initialize_params(&Revision::V2025_11_25, &client);
    let recorded = first_c2s(&corpus("crawl-everything-stdio.jsonl"));
    assert_eq!(recorded["method"], "initialize");
    assert_eq!(init, recorded["params"]);
    // The same text, member order included (value equality ignores order).
    assert_eq!(
        init.to_string(),
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcptape","version":"0.1.0"}}"#
    );
    assert_eq!(init.to_string(), recorded["params"].to_string());
    let m = protocol::request_meta(&Revision::V2026_07_28, &client);
    let recorded = first_c2s(&corpus("crawl-py-stdio-2026-07-28.jsonl"));
    assert_eq!(recorded["method"], "server/discover");
    assert_eq!(m, recorded["params"]["_meta"]);
    assert_eq!(m.to_string(), recorded["params"]["_meta"].to_string());
    assert_eq!(Implementation::mcptape().name, "mcptape");
}

#[test]
fn supported_versions_reads_the_discover_result() {
    let r = serde_json::json!({"supportedVersions": ["2026-07-28", 3, "2025-11-25"]});
    assert_eq!(
        protocol::supported_versions(&r),
        Some(vec![Revision::V2026_07_28, Revision::V2025_11_25])
    );
    assert_eq!(protocol::supported_versions(&serde_json::json!({})), None);
}

// --- JSON Pointer (RFC 6901) --------------------------------------------------

/// RFC 6901 §5's example document: each member name with its pointer.
#[test]
fn pointer_escaping_per_rfc_6901_examples() {
    let cases = [
        ("foo", "/foo"),
        ("", "/"),
        ("a/b", "/a~1b"),
        ("c%d", "/c%d"),
        ("e^f", "/e^f"),
        ("g|h", "/g|h"),
        ("i\\j", "/i\\j"),
        ("k\"l", "/k\"l"),
        (" ", "/ "),
        ("m~n", "/m~0n"),
    ];
    for (name, ptr) in cases {
        assert_eq!(JsonPointer::root().key(name).as_str(), ptr, "{name:?}");
        assert_eq!(JsonPointer::tokens(ptr), Some(vec![name.to_owned()]));
    }
    // §4: `~01` is `~1` unescaped, not `/` (order of replacement).
    assert_eq!(escape_token("~1"), "~01");
    assert_eq!(unescape_token("~01").unwrap(), "~1");
    assert_eq!(unescape_token("~2"), None);
    assert_eq!(unescape_token("a~"), None);
    assert_eq!(JsonPointer::tokens(""), Some(vec![]));
    assert_eq!(JsonPointer::tokens("foo"), None);
    assert_eq!(
        JsonPointer::root()
            .key("result")
            .key("contents")
            .index(3)
            .key("blob")
            .to_string(),
        "/result/contents/3/blob"
    );
    assert_eq!(
        JsonPointer::root()
            .key("params")
            .key("_meta")
            .key(meta::PROTOCOL_VERSION)
            .as_str(),
        "/params/_meta/io.modelcontextprotocol~1protocolVersion"
    );
    assert_eq!(JsonPointer::root().as_str(), "");
}

// --- the detector -------------------------------------------------------------

/// A corpus transcript as (observation kind, dir, text) items.
enum Item {
    Msg(Direction, String),
    Proto(String),
    Other,
}

fn corpus(name: &str) -> Vec<Item> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/transcripts")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines()
        .skip(1)
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            match v["kind"].as_str() {
                Some("message") => {
                    let dir = match v["dir"].as_str() {
                        Some("c2s") => Direction::C2s,
                        _ => Direction::S2c,
                    };
                    Item::Msg(dir, v["msg"].to_string())
                }
                Some("protocol") => Item::Proto(v["version"].as_str().unwrap().to_owned()),
                _ => Item::Other,
            }
        })
        .collect()
}

fn first_c2s(items: &[Item]) -> Value {
    items
        .iter()
        .find_map(|i| match i {
            Item::Msg(Direction::C2s, t) => Some(serde_json::from_str(t).unwrap()),
            _ => None,
        })
        .unwrap()
}

fn messages_only(items: &[Item]) -> impl Iterator<Item = Observation<'_>> {
    items.iter().filter_map(|i| match i {
        Item::Msg(d, t) => Some(Observation::Json(*d, t)),
        _ => None,
    })
}

fn det(r: Revision, source: RevisionSource) -> Detected {
    Detected {
        revision: r,
        source,
    }
}

#[test]
fn detector_on_every_corpus_transcript() {
    use RevisionSource::*;
    let want = [
        // discover probe rejected over HTTP (no JSON reply) → initialize wins.
        (
            "crawl-everything-http-2026-07-28-fallback.jsonl",
            Revision::V2025_11_25,
            Initialize,
        ),
        (
            "crawl-everything-stdio.jsonl",
            Revision::V2025_11_25,
            Initialize,
        ),
        (
            "crawl-py-stdio-2026-07-28.jsonl",
            Revision::V2026_07_28,
            RequestMeta,
        ),
        ("everything-http.jsonl", Revision::V2025_11_25, Initialize),
        ("everything-stdio.jsonl", Revision::V2025_11_25, Initialize),
        (
            "py-http-2025-11-25.jsonl",
            Revision::V2025_11_25,
            Initialize,
        ),
        (
            "py-http-2026-07-28.jsonl",
            Revision::V2026_07_28,
            RequestMeta,
        ),
        (
            "py-stdio-2025-11-25.jsonl",
            Revision::V2025_11_25,
            Initialize,
        ),
        (
            "py-stdio-2026-07-28.jsonl",
            Revision::V2026_07_28,
            RequestMeta,
        ),
    ];
    for (name, rev, source) in want {
        let items = corpus(name);
        assert_eq!(
            detect_revision(messages_only(&items), Some("1999-01-01")),
            det(rev, source),
            "{name}"
        );
    }
}

/// The recorder wrote its `protocol` record right after the message that
/// revealed the revision; the streaming detector settles on that same message.
#[test]
fn detector_settles_where_the_recorder_wrote_its_protocol_record() {
    for name in [
        "crawl-everything-http-2026-07-28-fallback.jsonl",
        "crawl-everything-stdio.jsonl",
        "crawl-py-stdio-2026-07-28.jsonl",
        "everything-http.jsonl",
        "py-http-2026-07-28.jsonl",
        "py-stdio-2025-11-25.jsonl",
    ] {
        let items = corpus(name);
        let proto_at = items
            .iter()
            .position(|i| matches!(i, Item::Proto(_)))
            .unwrap();
        let Item::Proto(recorded) = &items[proto_at] else {
            unreachable!()
        };
        let mut d = RevisionDetector::new();
        let mut settled_at = None;
        for (i, it) in items.iter().enumerate() {
            if let Item::Msg(dir, t) = it
                && let Some(got) = d.observe(Observation::Json(*dir, t))
            {
                assert_eq!(got.revision.as_str(), recorded, "{name}");
                settled_at = Some(i);
                break;
            }
        }
        assert_eq!(settled_at, Some(proto_at - 1), "{name}");
    }
}

#[test]
fn typed_messages_give_the_same_answer_as_json_text() {
    for name in ["py-stdio-2025-11-25.jsonl", "py-stdio-2026-07-28.jsonl"] {
        let items = corpus(name);
        let parsed: Vec<(Direction, envelope::Message)> = items
            .iter()
            .filter_map(|i| match i {
                Item::Msg(d, t) => Some((*d, envelope::parse_message(t.as_bytes()).ok()?)),
                _ => None,
            })
            .collect();
        let typed = detect_revision(
            parsed.iter().map(|(d, m)| Observation::Message(*d, m)),
            None,
        );
        assert_eq!(
            typed,
            detect_revision(messages_only(&items), None),
            "{name}"
        );
    }
}

fn j(dir: Direction, s: &'static str) -> Observation<'static> {
    Observation::Json(dir, s)
}

const C: Direction = Direction::C2s;
const S: Direction = Direction::S2c;

#[test]
fn precedence_first_conclusive_message_wins() {
    // A meta request before the initialize result: the meta came first.
    let seq = [
        j(
            C,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        ),
        j(
            C,
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        ),
        j(
            S,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}"#,
        ),
    ];
    assert_eq!(
        detect_revision(seq, None),
        det(Revision::V2026_07_28, RevisionSource::RequestMeta)
    );
    // A result with a protocolVersion that answers no initialize is ignored.
    let seq = [
        j(
            C,
            r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}"#,
        ),
        j(
            S,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05"}}"#,
        ),
        j(
            S,
            r#"{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-06-18"}}"#,
        ),
    ];
    assert_eq!(
        detect_revision(seq, None),
        det(Revision::V2025_06_18, RevisionSource::Initialize)
    );
}

#[test]
fn precedence_discover_counts_only_when_answered_with_a_result() {
    let probe = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}"#;
    let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#;
    assert_eq!(
        detect_revision([j(C, probe), j(S, ok)], Some("2025-11-25")),
        det(Revision::V2026_07_28, RevisionSource::RequestMeta)
    );
    assert_eq!(
        detect_revision([j(C, probe), j(S, err)], Some("2025-11-25")),
        det(Revision::V2025_11_25, RevisionSource::Header)
    );
    // Unanswered probe: not evidence either; the discover meta is not conclusive
    // while streaming.
    let mut d = RevisionDetector::new();
    assert_eq!(d.observe(j(C, probe)), None);
    assert_eq!(d.observe(j(S, ok)), None);
    assert_eq!(d.finish(None).source, RevisionSource::RequestMeta);
}

#[test]
fn precedence_header_then_protocol_record_then_assumed() {
    let rec = [Observation::ProtocolRecord("2025-06-18")];
    assert_eq!(
        detect_revision(rec, Some("2025-11-25")),
        det(Revision::V2025_11_25, RevisionSource::Header)
    );
    assert_eq!(
        detect_revision(rec, None),
        det(Revision::V2025_06_18, RevisionSource::ProtocolRecord)
    );
    assert_eq!(
        detect_revision([], None),
        det(Revision::LATEST, RevisionSource::Assumed)
    );
}

#[test]
fn detector_reads_batches_and_skips_garbage() {
    let seq = [
        j(C, "not json"),
        j(
            C,
            r#"[{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":7,"method":"initialize","params":{},"extra":1}]"#,
        ),
        j(
            S,
            r#"[{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-03-26"}}]"#,
        ),
    ];
    assert_eq!(
        detect_revision(seq, None),
        det(Revision::V2025_03_26, RevisionSource::Initialize)
    );
    // `1` and `"1"` are different ids.
    let seq = [
        j(C, r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#),
        j(
            S,
            r#"{"jsonrpc":"2.0","id":"1","result":{"protocolVersion":"2025-03-26"}}"#,
        ),
    ];
    assert_eq!(detect_revision(seq, None).source, RevisionSource::Assumed);
}

#[test]
fn detector_settles_once() {
    let mut d = RevisionDetector::new();
    assert!(
        d.observe(j(C, r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#))
            .is_none()
    );
    let first = d.observe(j(
        S,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}"#,
    ));
    assert_eq!(
        first,
        Some(det(Revision::V2025_06_18, RevisionSource::Initialize))
    );
    assert_eq!(
        d.observe(j(C, r#"{"jsonrpc":"2.0","id":2,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#)),
        None
    );
    assert_eq!(d.settled().unwrap().revision, Revision::V2025_06_18);
    assert_eq!(d.finish(None).revision, Revision::V2025_06_18);
}

/// `as_str` is `const`: callers can keep `&'static str` constants (clap defaults).
#[test]
fn known_revision_strings_are_constants() {
    const FALLBACK: &str = protocol::FALLBACK_REVISION.as_str();
    const STATELESS: &str = protocol::STATELESS_SINCE.as_str();
    assert_eq!(FALLBACK, "2025-11-25");
    assert_eq!(STATELESS, "2026-07-28");
}

#[test]
fn handshake_result_reads_initialize_and_discover_results() {
    use mcptape_wire::protocol::HandshakeResult;
    let init = serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}});
    let h = HandshakeResult::of(&init);
    assert_eq!(h.protocol_version(), Some("2025-06-18"));
    assert_eq!(h.revision(), Some(Revision::V2025_06_18));
    assert_eq!(h.supported_versions(), None);
    let disc = serde_json::json!({"supportedVersions": ["2026-07-28", 7, "2025-11-25"]});
    assert_eq!(
        HandshakeResult::of(&disc).supported_versions(),
        Some(vec![Revision::V2026_07_28, Revision::V2025_11_25])
    );
    assert_eq!(
        HandshakeResult::of(&serde_json::json!({"protocolVersion": 1})).protocol_version(),
        None
    );
    assert_eq!(
        HandshakeResult::of(&serde_json::json!("x")).protocol_version(),
        None
    );
}

#[test]
fn initialize_answer_revision_keeps_a_session_era_ask_else_the_newest_listed() {
    use mcptape_wire::protocol::{FALLBACK_REVISION, initialize_answer_revision};
    let listed = [Revision::V2026_07_28, Revision::V2025_06_18];
    assert_eq!(
        initialize_answer_revision(Some("2025-11-25"), &listed),
        Revision::V2025_11_25
    );
    // A stateless-era ask is not an `initialize` answer.
    assert_eq!(
        initialize_answer_revision(Some("2026-07-28"), &listed),
        Revision::V2025_06_18
    );
    assert_eq!(initialize_answer_revision(None, &[]), FALLBACK_REVISION);
}

/// `check`'s first pass leaves server messages unread while the detector
/// ignores them: before any handshake request, and once settled; not while
/// an `initialize` or a `server/discover` waits for its answer.
#[test]
fn detector_ignores_server_messages_only_while_no_handshake_waits() {
    let mut d = RevisionDetector::new();
    assert!(d.ignores_server_messages());
    let read =
        r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[],"protocolVersion":"2025-06-18"}}"#;
    assert_eq!(d.observe(j(S, read)), None);
    assert!(d.ignores_server_messages());
    d.observe(j(C, r#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#));
    assert!(!d.ignores_server_messages());
    let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18"}}"#;
    assert!(d.observe(j(S, answer)).is_some());
    assert!(d.ignores_server_messages());
    let mut d = RevisionDetector::new();
    d.observe(j(
        C,
        r#"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    ));
    assert!(!d.ignores_server_messages());
}
