//! The fuzz entry points run on a few inputs (the corpus under `tests/data/contents`).

use mcptape_wire::fuzzing::{contents_parse, json_check, jsonrpc_parse};

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
fn contents_parse_survives_single_byte_mutations_of_corpus() {
    const BYTES: &[u8] = b"\"\\{}[],:=- e\xff";
    let mut runs = 0;
    for c in CASES {
        let base = c.as_bytes();
        for i in 0..base.len() {
            for &b in BYTES {
                let mut m = base.to_vec();
                m[i] = b;
                contents_parse(&m);
                jsonrpc_parse(&m);
                json_check(&m);
                runs += 1;
            }
        }
    }
    assert!(runs > 10_000, "{runs}");
}

#[test]
fn jsonrpc_parse_round_trips() {
    for c in CASES {
        let line = format!(r#"{{"jsonrpc":"2.0","id":"x","result":{}}}"#, c.trim());
        jsonrpc_parse(line.as_bytes());
    }
    jsonrpc_parse(b"\xff\xfe");
    for s in [
        "1e400",
        "-0",
        "[1,2",
        "{\"a\":1,\"a\":2}",
        "\"\\ud800\"",
        "\"\\ud83d\\ude00\"",
        " 1 ",
    ] {
        json_check(s.as_bytes());
    }
    jsonrpc_parse(b"[[[[");
}

// `contents_structured` is exercised by the unit test in `src/fuzzing.rs`
// (it needs `arbitrary`, a dev-dependency, without the crate feature).

/// Fuzz finding (contents_parse, 2026-11-30): a 37-digit integer in an unknown
/// member parses as f64; without serde_json's `float_roundtrip` the re-parse
/// of its shortest form was off by one ULP and the round trip changed the value.
#[test]
fn fuzz_huge_integer_in_unknown_member_round_trips() {
    let input = include_bytes!("data/contents/fuzz_huge_integer_in_unknown_member.json");
    contents_parse(input);
    let r = mcptape_wire::resources::parse_read_result(input).unwrap();
    // correctly rounded (Rust's `str::parse::<f64>` is), and stable on re-parse
    let exact: f64 = "1000555555555555555555555555555555555".parse().unwrap();
    assert_eq!(r.extra["`tlMs"].as_f64(), Some(exact));
}

/// The `resources_vs_codec` property on the seeds in `corpus/fuzz/resources_vs_codec`
/// and on every single-byte mutation of them.
#[test]
fn resources_vs_codec_agree_on_seeds_and_mutations() {
    use mcptape_wire::fuzzing::resources_vs_codec;
    let seeds: &[&[u8]] = &[
        include_bytes!("../../../corpus/fuzz/resources_vs_codec/two-entries.json"),
        include_bytes!("../../../corpus/fuzz/resources_vs_codec/trailing-bits.json"),
        include_bytes!("../../../corpus/fuzz/resources_vs_codec/lone-surrogate.json"),
    ];
    const BYTES: &[u8] = b"\"\\{}[],:=- e\xff";
    for s in seeds {
        resources_vs_codec(s);
        for i in 0..s.len() {
            for &b in BYTES {
                let mut m = s.to_vec();
                m[i] = b;
                resources_vs_codec(&m);
            }
        }
    }
}

/// `envelope::scan_frame` (ranges only) gives the same verdict as
/// `envelope::parse` (the scan plus the owned typed views): decoding the
/// views from the scanned ranges never fails or changes a verdict.
#[test]
fn scan_frame_agrees_with_parse() {
    use mcptape_wire::envelope::{Frame, Scanned, parse, scan_frame};
    let cases = [
        r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}"#,
        r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"1.0","id":2,"result":{}}]"#,
        r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"x":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#,
        r#"[]"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}"#,
    ];
    for c in cases {
        let p = parse(c.as_bytes());
        let v = scan_frame(c.as_bytes());
        match (p, v) {
            (Ok(Frame::Single(_)), Ok(Scanned::Single(_))) => {}
            (Ok(Frame::Batch(items)), Ok(Scanned::Batch(v))) => {
                let want: Vec<_> = items.into_iter().map(|r| r.map(drop)).collect();
                let got: Vec<_> = v.into_iter().map(|r| r.map(drop)).collect();
                assert_eq!(got, want, "{c}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{c}"),
            (p, v) => panic!("{c}: parse {p:?} vs scan_frame {v:?}"),
        }
    }
}
