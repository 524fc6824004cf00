//! The fuzz entry points run on a few inputs (the corpus under `tests/data/contents`).

use mcptape_wire::fuzzing::{contents_parse, jsonrpc_parse};

const CASES: &[&str] = &[
    include_str!("data/contents/mixed_text_and_blob.json"),
    include_str!("data/contents/unknown_fields_and_meta.json"),
    include_str!("data/contents/negative_ttl.json"),
    include_str!("data/contents/missing_result_type.json"),
    include_str!("data/contents/blob_lenient_whitespace_url_safe_unpadded.json"),
    include_str!("data/contents/lone_surrogate_in_text.json"),
    include_str!("data/contents/both_text_and_blob.json"),
];

#[test]
fn contents_parse_accepts_and_round_trips_corpus() {
    for c in CASES {
        contents_parse(c.as_bytes());
    }
    // truncations of every case never panic
    for c in CASES {
        for cut in 0..c.len() {
            contents_parse(&c.as_bytes()[..cut]);
        }
    }
}

#[test]
fn jsonrpc_parse_round_trips() {
    for c in CASES {
        let line = format!(r#"{{"jsonrpc":"2.0","id":"x","result":{}}}"#, c.trim());
        jsonrpc_parse(line.as_bytes());
    }
    jsonrpc_parse(b"\xff\xfe");
    jsonrpc_parse(b"[[[[");
}

// `contents_structured` is exercised by the unit test in `src/fuzzing.rs`
// (it needs `arbitrary`, a dev-dependency, without the crate feature).
