//! The entry rules run on the wire scanner's per-entry results
//! (`mcptape_wire::codec::scan_contents`): escapes inside a blob, batches,
//! and several issues in one entry keep their rules and JSON Pointers.

use mcptape_check::{Options, check_bytes};

const HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#;

fn check(records: &[&str]) -> Vec<(String, String)> {
    let mut t = format!("{HEADER}\n");
    for r in records {
        t.push_str(r);
        t.push('\n');
    }
    // The exit record `mcptape record` writes last (else recording-no-exit).
    t.push_str("{\"tUs\":9,\"kind\":\"exit\",\"code\":0}\n");
    check_bytes("t.jsonl", t.as_bytes(), &Options::default())
        .findings
        .into_iter()
        .map(|f| (f.rule.to_owned(), f.pointer))
        .collect()
}

const REQ: &str = r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}}"#;

/// `\/` inside a blob is unescaped before the base64 check (encoders that escape slashes).
#[test]
fn escaped_slash_in_blob_is_canonical_base64() {
    let resp = r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","mimeType":"application/octet-stream","blob":"AA\/A"}]}}}"#;
    assert_eq!(check(&[REQ, resp]), vec![]);
}

/// A bad blob in a batch element points into that element.
#[test]
fn bad_blob_in_batch_element_points_into_the_element() {
    let resp = r#"{"tUs":2,"kind":"message","dir":"s2c","msg":[{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","blob":"AB=="}]}}]}"#;
    assert_eq!(
        check(&[REQ, resp]),
        vec![
            // The header says 2025-11-25: a batch there is a finding of its own.
            ("jsonrpc-batch-removed".to_owned(), String::new()),
            (
                "blob-not-canonical-base64".to_owned(),
                "/0/result/contents/0/blob".to_owned()
            )
        ]
    );
}

/// One entry with a non-string uri and a non-string mimeType: both reported, in scanner order.
#[test]
fn several_issues_in_one_entry_each_get_their_rule() {
    let resp = r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":5,"mimeType":[],"text":"x"},"nope"]}}}"#;
    assert_eq!(
        check(&[REQ, resp]),
        vec![
            (
                "contents-missing-uri".to_owned(),
                "/result/contents/0/uri".to_owned()
            ),
            (
                "read-result-malformed".to_owned(),
                "/result/contents/0/mimeType".to_owned()
            ),
            (
                "read-result-malformed".to_owned(),
                "/result/contents/1".to_owned()
            ),
        ]
    );
}

/// `contents` that is not an array names its type.
#[test]
fn contents_not_an_array_names_its_type() {
    let resp = r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":{"uri":"x"}}}}"#;
    let f = check_bytes(
        "t.jsonl",
        format!(
            "{HEADER}\n{REQ}\n{resp}\n{}\n",
            r#"{"tUs":3,"kind":"exit","code":0}"#
        )
        .as_bytes(),
        &Options::default(),
    );
    assert_eq!(f.findings.len(), 1);
    assert_eq!(f.findings[0].pointer, "/result/contents");
    assert_eq!(f.findings[0].message, "contents is an object, not an array");
}

/// A `text` is no longer unescaped on every scan; a data URI whose first
/// characters are escapes (`\u0064` = `d`, a leading `\n`) is still found,
/// with its decoded length, and an escaped text that is no data URI is not.
#[test]
fn data_uri_in_escaped_text_is_found_without_decoding_every_text() {
    let entry = |text: &str| {
        format!(
            r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"file:///a","text":{text}}}]}}}}}}"#
        )
    };
    let header = format!("{HEADER}\n");
    for (text, fires) in [
        (r#""\u0064ata:image/png;base64,iVBORw0KGgo=""#, true),
        (r#""\n  data:image/png;base64,iVBORw0KGgo=""#, true),
        (r#""data:image/png;base64,iV\/BORw0KGgo=""#, true),
        (r#""dat\u0061 image/png;base64,iVBORw0KGgo=""#, false),
        (r#""line one\nline two \"data:x;base64,AA==\"""#, false),
    ] {
        let resp = entry(text);
        let found = check(&[REQ, &resp]);
        let want = if fires {
            vec![(
                "data-uri-in-text".to_owned(),
                "/result/contents/0/text".to_owned(),
            )]
        } else {
            vec![]
        };
        assert_eq!(found, want, "{text}");
        if fires {
            let t = format!("{header}{REQ}\n{resp}\n{{\"tUs\":9,\"kind\":\"exit\",\"code\":0}}\n");
            let r = check_bytes("t.jsonl", t.as_bytes(), &Options::default());
            let decoded: String = serde_json::from_str(text).unwrap();
            assert!(
                r.findings[0]
                    .message
                    .contains(&format!("({} chars)", decoded.len())),
                "{}",
                r.findings[0].message
            );
        }
    }
}
