//! `resources/read` contents parser: one test per rule and per small input
//! named in issue 2. Inputs live in `tests/data/contents/<case>.json`.

use mcptape_wire::codec::base64::Base64Error;
use mcptape_wire::error::JsonErrorKind;
use mcptape_wire::resources::{
    CacheScope, ContentsError, ContentsErrorKind, LeniencyKind, ReadResourceResult,
    ResourceContents, ResultType, Shape, parse_read_response, parse_read_result,
    parse_read_result_lenient,
};

macro_rules! case {
    ($name:literal) => {
        include_str!(concat!("data/contents/", $name, ".json"))
    };
}

fn ok(input: &str) -> ReadResourceResult {
    let r = parse_read_result(input.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    // every accepted input round-trips
    let again = parse_read_result(r.to_json().as_bytes()).unwrap();
    assert_eq!(r, again);
    r
}

/// Absolute offset of `needle` in `input` plus `delta`.
fn at(input: &str, needle: &str, delta: usize) -> usize {
    input.find(needle).unwrap() + delta
}

fn blob_error(input: &str) -> (Base64Error, usize) {
    let e = parse_read_result(input.as_bytes()).unwrap_err();
    assert_eq!(e.index(), Some(0));
    assert_eq!(e.uri(), Some("file:///x.bin"));
    match e.kind() {
        ContentsErrorKind::InvalidBase64(b) => (b.clone(), e.offset().unwrap()),
        k => panic!("expected InvalidBase64, got {k:?}"),
    }
}

/// `r` is an error of `kind`, at byte `offset` of the input.
fn assert_rejected<T: std::fmt::Debug>(
    r: Result<T, ContentsError>,
    kind: ContentsErrorKind,
    offset: usize,
) {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), &kind);
    assert_eq!(e.offset(), Some(offset));
}

/// The strict parser rejects `input` with `kind` at the offset of `needle` plus `delta`.
fn assert_strict_rejects(input: &str, kind: ContentsErrorKind, needle: &str, delta: usize) {
    assert_rejected(
        parse_read_result(input.as_bytes()),
        kind,
        at(input, needle, delta),
    );
}

/// `input` fails with `want` (entry 0, `file:///x.bin`) at the offset of `needle`
/// plus `delta`.
fn assert_blob_error(input: &str, want: Base64Error, needle: &str, delta: usize) {
    let (b, off) = blob_error(input);
    assert_eq!(b, want);
    assert_eq!(off, at(input, needle, delta));
}

#[test]
fn text_entry_from_seed() {
    let input = case!("text_entry");
    let r = ok(input);
    assert_eq!(r.contents.len(), 1);
    let ResourceContents::Text(t) = &r.contents[0] else {
        panic!()
    };
    assert_eq!(t.uri, "docs://onboarding/engineering");
    assert_eq!(t.mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(
        t.text,
        "# Engineering onboarding\n\nWelcome. Your first week...\n"
    );
    assert_eq!(t.extra["name"], "engineering-onboarding");
    assert_eq!(t.extra["title"], "Engineering onboarding");
}

#[test]
fn mixed_text_and_blob_entries_from_seed() {
    let r = ok(case!("mixed_text_and_blob"));
    assert_eq!(r.result_type, ResultType::Complete);
    assert!(!r.legacy_result_type);
    let shapes: Vec<Shape> = r.contents.iter().map(ResourceContents::shape).collect();
    assert_eq!(shapes, [Shape::Text, Shape::Blob]);
    let ResourceContents::Blob(b) = &r.contents[1] else {
        panic!()
    };
    assert_eq!(b.uri, "file:///srv/reports/q3-chart.png");
    assert_eq!(b.bytes.len(), 70);
    assert_eq!(&b.bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(b.blob_base64().starts_with("iVBORw0KGgo"));
}

#[test]
fn neither_text_nor_blob_is_error() {
    let input = case!("neither_text_nor_blob");
    let e = parse_read_result(input.as_bytes()).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::NeitherTextNorBlob);
    assert_eq!(e.index(), Some(1));
    assert_eq!(e.uri(), Some("docs://b"));
    assert_eq!(e.offset(), Some(at(input, r#"{"uri":"docs://b""#, 0)));
}

#[test]
fn both_text_and_blob_is_error_never_text_wins() {
    let e = parse_read_result(case!("both_text_and_blob").as_bytes()).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::BothTextAndBlob);
    assert_eq!(e.index(), Some(0));
    assert_eq!(e.uri(), Some("docs://a"));
}

#[test]
fn missing_uri_is_error() {
    let e = parse_read_result(case!("missing_uri").as_bytes()).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::MissingUri);
    assert_eq!(e.index(), Some(0));
    assert_eq!(e.uri(), None);
}

#[test]
fn uri_not_string_is_error() {
    assert_strict_rejects(
        case!("uri_not_string"),
        ContentsErrorKind::UriNotString,
        "42",
        0,
    );
}

#[test]
fn blob_url_safe_alphabet_rejected() {
    assert_blob_error(
        case!("blob_url_safe_alphabet"),
        Base64Error::InvalidByte {
            offset: 0,
            byte: b'-',
        },
        "-_8=",
        0,
    );
}

#[test]
fn blob_missing_padding_aa_rejected() {
    // the first bad "character" is the missing padding right after "AA"
    assert_blob_error(
        case!("blob_missing_padding"),
        Base64Error::InvalidLength { len: 2 },
        "\"AA\"",
        3,
    );
}

#[test]
fn blob_nonzero_trailing_bits_zh_rejected() {
    assert_blob_error(
        case!("blob_nonzero_trailing_bits"),
        Base64Error::TrailingBits { offset: 1 },
        "Zh==",
        1,
    );
}

#[test]
fn blob_padding_in_middle_zmg_rejected() {
    assert_blob_error(
        case!("blob_padding_in_middle"),
        Base64Error::InvalidPadding { offset: 3 },
        "Zm=g",
        3,
    );
}

#[test]
fn blob_invalid_char_star_rejected() {
    assert_blob_error(
        case!("blob_invalid_char"),
        Base64Error::InvalidByte {
            offset: 4,
            byte: b'*',
        },
        "*",
        0,
    );
}

#[test]
fn blob_crlf_inside_rejected_at_escape() {
    // the JSON escape `\r` starts at its backslash
    assert_blob_error(
        case!("blob_crlf_inside"),
        Base64Error::InvalidByte {
            offset: 4,
            byte: b'\r',
        },
        "\\r\\n",
        0,
    );
}

#[test]
fn blob_lenient_mode_reports_what_it_accepted() {
    let input = case!("blob_lenient_whitespace_url_safe_unpadded");
    assert!(parse_read_result(input.as_bytes()).is_err());
    let (r, report) = parse_read_result_lenient(input.as_bytes()).unwrap();
    let ResourceContents::Blob(b) = &r.contents[0] else {
        panic!()
    };
    assert_eq!(b.bytes, b"hello \xfb\xff");
    let kinds: Vec<&LeniencyKind> = report.iter().map(|l| &l.kind).collect();
    assert_eq!(
        kinds,
        [
            &LeniencyKind::StrippedWhitespace { count: 3 },
            &LeniencyKind::UrlSafeAlphabet { count: 2 },
            &LeniencyKind::AddedPadding { count: 1 },
        ]
    );
    assert!(
        report
            .iter()
            .all(|l| l.index == 0 && l.uri == "file:///x.bin")
    );
    // serialized canonically, accepted by the strict parser
    assert!(r.to_json().contains("\"aGVsbG8g+/8=\""));
    assert_eq!(parse_read_result(r.to_json().as_bytes()).unwrap(), r);
}

#[test]
fn blob_lenient_mode_on_strict_input_reports_nothing() {
    let (_, report) = parse_read_result_lenient(case!("mixed_text_and_blob").as_bytes()).unwrap();
    assert!(report.is_empty());
}

#[test]
fn blob_lenient_mode_still_rejects_trailing_bits() {
    let input = case!("blob_nonzero_trailing_bits");
    assert_rejected(
        parse_read_result_lenient(input.as_bytes()),
        ContentsErrorKind::InvalidBase64(Base64Error::TrailingBits { offset: 1 }),
        at(input, "Zh==", 1),
    );
}

#[test]
fn empty_contents_is_empty_not_not_found() {
    let r = ok(case!("empty_contents"));
    assert!(r.is_empty());
    assert_eq!(r.contents.len(), 0);
    assert_eq!(r.ttl_ms, Some(60_000));
    assert_eq!(r.cache_scope, Some(CacheScope::Public));
    assert_eq!(
        mcptape_wire::classify::read_outcome(Ok(&r)),
        mcptape_wire::classify::ReadOutcome::Empty
    );
}

#[test]
fn missing_result_type_means_complete_legacy() {
    let r = ok(case!("missing_result_type"));
    assert_eq!(r.result_type, ResultType::Complete);
    assert!(r.legacy_result_type);
    assert!(!r.to_json().contains("resultType"));
}

#[test]
fn negative_ttl_treated_as_zero() {
    let r = ok(case!("negative_ttl"));
    assert_eq!(r.ttl_ms, Some(0));
    assert_eq!(r.ttl_ms_negative, Some(-5));
    assert_eq!(r.cache_scope, Some(CacheScope::Private));
}

#[test]
fn ttl_not_integer_is_error() {
    assert_strict_rejects(
        case!("ttl_not_integer"),
        ContentsErrorKind::InvalidTtl,
        "1.5",
        0,
    );
}

#[test]
fn unknown_cache_scope_is_error() {
    assert_strict_rejects(
        case!("unknown_cache_scope"),
        ContentsErrorKind::UnknownCacheScope {
            value: "shared".into(),
        },
        "\"shared\"",
        0,
    );
}

#[test]
fn input_required_without_contents_is_reported_as_such() {
    let e = parse_read_result(case!("input_required_without_contents").as_bytes()).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::InputRequired);
}

#[test]
fn directory_read_returns_every_entry_in_order() {
    let r = ok(case!("directory_read_in_order"));
    let uris: Vec<&str> = r.contents.iter().map(ResourceContents::uri).collect();
    assert_eq!(
        uris,
        [
            "file:///repo/src/main.rs",
            "file:///repo/src/logo.png",
            "file:///repo/src/util.rs"
        ]
    );
    let shapes: Vec<Shape> = r.contents.iter().map(ResourceContents::shape).collect();
    assert_eq!(shapes, [Shape::Text, Shape::Blob, Shape::Text]);
    assert_eq!(r.contents[2].mime_type(), None);
}

#[test]
fn unknown_fields_and_meta_preserved_round_trip() {
    let input = case!("unknown_fields_and_meta");
    let r = ok(input);
    assert_eq!(
        r.meta.as_ref().unwrap()["io.modelcontextprotocol/serverInfo"]["name"],
        "s"
    );
    assert_eq!(r.extra["futureField"]["a"][1], 2.5);
    let ResourceContents::Text(t) = &r.contents[0] else {
        panic!()
    };
    assert_eq!(t.meta.as_ref().unwrap()["com.example/etag"], "abc");
    assert_eq!(t.extra["annotations"]["priority"], 0.5);
    assert_eq!(t.extra["size"], 1);
    // parse -> serialize -> parse -> serialize is a fixed point
    let once = r.to_json();
    let twice = parse_read_result(once.as_bytes()).unwrap().to_json();
    assert_eq!(once, twice);
    let v1: serde_json::Value = serde_json::from_str(input).unwrap();
    let v2: serde_json::Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v1, v2, "no member lost or changed");
}

#[test]
fn duplicate_key_in_entry_rejected_not_last_wins() {
    let input = case!("duplicate_key_in_entry");
    assert_rejected(
        parse_read_result(input.as_bytes()),
        ContentsErrorKind::Json(JsonErrorKind::DuplicateKey { key: "text".into() }),
        input.rfind("\"text\"").unwrap(),
    );
}

#[test]
fn lone_surrogate_in_text_is_error_with_position() {
    assert_strict_rejects(
        case!("lone_surrogate_in_text"),
        ContentsErrorKind::Json(JsonErrorKind::LoneSurrogate { code_unit: 0xd800 }),
        "\\ud800",
        0,
    );
}

#[test]
fn serde_json_alone_also_rejects_lone_surrogate() {
    // Our pre-check gives the byte offset; serde_json agrees it is an error.
    // (verified: serde_json 1.0 errors on both forms, without a byte offset)
    let e = serde_json::from_str::<String>(r#""\ud800""#).unwrap_err();
    assert!(e.to_string().contains("hex escape"), "{e}");
    let e = serde_json::from_str::<String>(r#""\ud800 x""#).unwrap_err();
    assert!(e.is_syntax(), "{e}");
    assert!(e.to_string().contains("hex escape"), "{e}");
}

#[test]
fn surrogate_pair_in_text_decodes() {
    let r = ok(case!("surrogate_pair_in_text"));
    let ResourceContents::Text(t) = &r.contents[0] else {
        panic!()
    };
    assert_eq!(t.text, "smile \u{1F600}");
}

#[test]
fn response_offsets_are_into_the_whole_message() {
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":8,"result":{}}}"#,
        case!("blob_invalid_char").trim()
    );
    let e = parse_read_response(line.as_bytes()).unwrap_err();
    assert_eq!(e.offset(), Some(at(&line, "*", 0)));
    let ok_line = format!(
        r#"{{"jsonrpc":"2.0","id":8,"result":{}}}"#,
        case!("mixed_text_and_blob").trim()
    );
    assert_eq!(
        parse_read_response(ok_line.as_bytes())
            .unwrap()
            .contents
            .len(),
        2
    );
}

#[test]
fn contents_not_array_and_entry_not_object() {
    let e = parse_read_result(br#"{"contents":{}}"#).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::ContentsNotArray);
    let e = parse_read_result(br#"{"contents":[{"uri":"a","text":"b"}, "x"]}"#).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::EntryNotObject);
    assert_eq!(e.index(), Some(1));
    let e = parse_read_result(br#"{"contents":[{"uri":"a","text":7}]}"#).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::NotAString { field: "text" });
    assert_eq!(e.uri(), Some("a"));
    let e = parse_read_result(br#"{"resultType":"complete"}"#).unwrap_err();
    assert_eq!(e.kind(), &ContentsErrorKind::MissingContents);
}
