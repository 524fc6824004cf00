//! Differential tests: every path agrees with every other on every input,
//! accept and reject alike (kind, byte offset, entry), plus named regression
//! cases with their exact expected errors.

use super::base64::{self as b64, Base64Error, Path};
use super::fuzzing::{base64_differential, json_differential};
use super::payload::{self, PayloadEntry, Rng};
use super::*;

const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn decode_all(data: &[u8]) -> Result<DecodedReadResult, CodecError> {
    json_differential(data);
    decode_read_result(CodecPath::Fused, data)
}

fn err_of(data: &[u8]) -> CodecError {
    decode_all(data).expect_err("must be rejected")
}

#[test]
fn base64_every_length_0_to_256_random_valid_and_corrupted() {
    let mut rng = Rng::new(7);
    let junk: &[u8] = b"=\"\\ \n\t-_.!*\x00\x7f\x80\xff\xc3\xa9";
    for n in 0..=256usize {
        // Valid encodings of random bytes.
        let mut bytes = vec![0u8; n];
        rng.fill(&mut bytes);
        let enc = b64::encode(Path::Scalar, &bytes);
        base64_differential(enc.as_bytes());
        assert_eq!(b64::decode(Path::Simd, enc.as_bytes()).unwrap(), bytes);
        // Random strings of length n over alphabet + '=' (mostly invalid).
        for _ in 0..4 {
            let s: Vec<u8> = (0..n)
                .map(|_| {
                    if rng.below(16) == 0 {
                        b'='
                    } else {
                        ALPHA[rng.below(64)]
                    }
                })
                .collect();
            base64_differential(&s);
        }
        // Corruptions of the valid encoding: replace, insert, delete, set trailing bits.
        let e = enc.as_bytes();
        for _ in 0..6 {
            let mut c = e.to_vec();
            match rng.below(4) {
                0 if !c.is_empty() => {
                    let i = rng.below(c.len());
                    c[i] = junk[rng.below(junk.len())];
                }
                1 => {
                    let i = rng.below(c.len() + 1);
                    c.insert(i, junk[rng.below(junk.len())]);
                }
                2 if !c.is_empty() => {
                    c.remove(rng.below(c.len()));
                }
                _ => {
                    if let Some(p) = c.iter().position(|&b| b == b'=')
                        && p > 0
                    {
                        c[p - 1] = ALPHA[rng.below(64)];
                    }
                }
            }
            base64_differential(&c);
        }
    }
}

#[test]
fn base64_blob_error_offsets_are_response_offsets() {
    let json =
        br#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"a:b","blob":"AAAA!AAA"}]}}"#;
    let e = err_of(json);
    let at = json.windows(8).position(|w| w == b"AAAA!AAA").unwrap();
    assert_eq!(
        e,
        CodecError {
            kind: CodecErrorKind::Base64(Base64Error::InvalidByte {
                offset: 4,
                byte: b'!'
            }),
            offset: at + 4,
            entry: Some(0),
        }
    );
}

fn small_entries(rng: &mut Rng) -> Vec<PayloadEntry> {
    let texts = [
        "",
        "plain",
        "quote \" back \\ slash / nl \n tab \t",
        "é 📈 \u{1}",
        "\u{7f}\u{ffff}",
    ];
    (0..rng.below(4))
        .map(|i| {
            let uri = format!(
                "file:///r/{i}?q={}",
                ["a", "ü", "\"x\"", "\\"][rng.below(4)]
            );
            if rng.below(2) == 0 {
                PayloadEntry::Text {
                    uri,
                    mime_type: "text/markdown".into(),
                    text: texts[rng.below(texts.len())].into(),
                }
            } else {
                let mut bytes = vec![0u8; rng.below(80)];
                rng.fill(&mut bytes);
                PayloadEntry::Blob {
                    uri,
                    mime_type: "image/png".into(),
                    bytes,
                }
            }
        })
        .collect()
}

/// Snippets spliced into valid responses to make them (mostly) invalid.
const SPLICES: &[&[u8]] = &[
    b"\"",
    b"\\",
    b",",
    b":",
    b"{",
    b"}",
    b"[",
    b"]",
    b" ",
    b"\n",
    b"\x00",
    b"\x1f",
    b"\x80",
    b"\xc3",
    b"\xff",
    b"=",
    b"!",
    b"\\u0041",
    b"\\ud800",
    b"\\udc00",
    b"\\ud83d\\udcc8",
    b"\\/",
    b"\\x",
    b"1e400",
    b"-0",
    b"01",
    b"1.",
    b"true",
    b"nul",
    b"\"uri\":\"x\",",
    b"\"blob\":\"\",",
    b"\"text\":\"t\",",
    b",\"a\":1,\"a\":2",
    b"\"jsonrpc\":\"2.0\",",
    b"/*c*/",
];

#[test]
fn json_generated_responses_all_paths_agree_valid_and_mutated() {
    let mut rng = Rng::new(42);
    let mut rejects = 0;
    let mut accepts = 0;
    for case in 0..400 {
        let entries = small_entries(&mut rng);
        let good = payload::response(case, &entries);
        let r = decode_all(&good).expect("generated response is valid");
        assert_eq!(r.len(), entries.len());
        for (got, want) in r.entries().zip(&entries) {
            match (got.content, want) {
                (Content::Text(t), PayloadEntry::Text { text, uri, .. }) => {
                    assert_eq!(t, text);
                    assert_eq!(got.uri, uri);
                }
                (Content::Blob(b), PayloadEntry::Blob { bytes, uri, .. }) => {
                    assert_eq!(b, &bytes[..]);
                    assert_eq!(got.uri, uri);
                }
                _ => panic!("entry shape changed"),
            }
        }
        // Mutations.
        for _ in 0..8 {
            let mut m = good.clone();
            match rng.below(4) {
                0 => {
                    let i = rng.below(m.len() + 1);
                    let s = SPLICES[rng.below(SPLICES.len())];
                    m.splice(i..i, s.iter().copied());
                }
                1 => {
                    let i = rng.below(m.len());
                    m[i] = SPLICES[rng.below(SPLICES.len())][0];
                }
                2 => m.truncate(rng.below(m.len())),
                _ => {
                    let i = rng.below(m.len());
                    m.remove(i);
                }
            }
            if decodes_with_paths_agreeing(&m, &"") {
                accepts += 1;
            } else {
                rejects += 1;
            }
        }
    }
    assert!(
        rejects > 1500 && accepts > 50,
        "rejects {rejects} accepts {accepts}"
    );
}

#[test]
fn json_every_truncation_of_a_small_response_is_rejected_identically() {
    let entries = vec![
        PayloadEntry::Text {
            uri: "file:///a.md".into(),
            mime_type: "text/markdown".into(),
            text: "é\n\"x\"".into(),
        },
        PayloadEntry::Blob {
            uri: "file:///b.png".into(),
            mime_type: "image/png".into(),
            bytes: vec![1, 2, 3, 4, 5],
        },
    ];
    let good = payload::response(3, &entries);
    for n in 0..good.len() {
        let e = err_of(&good[..n]);
        assert!(e.offset <= n, "{e} for prefix {n}");
    }
}

/// Whether `data` decodes; a rejection must never be the decode paths disagreeing
/// ([`CodecErrorKind::PathDisagreement`]), `what` naming the input in that failure.
fn decodes_with_paths_agreeing(data: &[u8], what: &dyn std::fmt::Display) -> bool {
    match decode_all(data) {
        Ok(_) => true,
        Err(e) => {
            assert!(
                !matches!(e.kind, CodecErrorKind::PathDisagreement { .. }),
                "{e}: {what}"
            );
            false
        }
    }
}

macro_rules! case {
    ($name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/codec/",
            $name,
            ".json"
        ))
    };
}

fn find(data: &[u8], needle: &str) -> usize {
    data.windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .unwrap_or_else(|| panic!("{needle:?} not in case file"))
}

fn assert_err(data: &[u8], kind: CodecErrorKind, offset: usize, entry: Option<usize>) {
    assert_eq!(
        err_of(data),
        CodecError {
            kind,
            offset,
            entry
        }
    );
}

/// A test named after its case file (`tests/data/codec/NAME.json`): decoding it fails with
/// `kind` at the first byte of `needle` in the file (plus `skip` bytes), in `entry`.
macro_rules! err_case {
    ($name:ident: $kind:expr, at $needle:expr $(, + $skip:literal)?, entry $entry:expr) => {
        #[test]
        fn $name() {
            let d = include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/codec/",
                stringify!($name),
                ".json"
            ));
            assert_err(d, $kind, find(d, $needle) $(+ $skip)?, $entry);
        }
    };
}

err_case!(
    duplicate_key_after_unescaping: CodecErrorKind::DuplicateKey { key: "uri".into() },
    at r#""\u0075ri""#, entry Some(0)
);
err_case!(lone_high_surrogate_in_text: CodecErrorKind::LoneSurrogate, at r"\ud800", entry Some(0));
err_case!(lone_low_surrogate_in_uri: CodecErrorKind::LoneSurrogate, at r"\udc00", entry Some(0));
err_case!(both_text_and_blob: CodecErrorKind::BothTextAndBlob, at r#""text""#, entry Some(0));
err_case!(neither_text_nor_blob: CodecErrorKind::NeitherTextNorBlob, at r#"}]"#, entry Some(0));
err_case!(
    blob_trailing_bits: CodecErrorKind::Base64(Base64Error::TrailingBits { offset: 1 }),
    at "QR==", + 1, entry Some(0)
);
err_case!(
    blob_missing_padding: CodecErrorKind::Base64(Base64Error::InvalidLength { len: 2 }),
    at r#"QQ""#, + 2, entry Some(0)
);
err_case!(number_out_of_range: CodecErrorKind::NumberOutOfRange, at "1e400", entry Some(0));
err_case!(
    raw_control_char_in_text: CodecErrorKind::ControlCharacterInString,
    at "\t", entry Some(0)
);
err_case!(wrong_jsonrpc_version: CodecErrorKind::WrongJsonRpcVersion, at r#""1.0""#, entry None);
err_case!(missing_uri: CodecErrorKind::MissingField { field: "uri" }, at "}]", entry Some(0));
err_case!(
    duplicate_key_in_result: CodecErrorKind::DuplicateKey { key: "resultType".into() },
    at r#""resultType":"complete"}"#, entry None
);

#[test]
fn escapes_in_uri_and_text() {
    let r = decode_all(case!("escapes_in_uri_and_text")).unwrap();
    let e = r.get(0).unwrap();
    assert_eq!(e.uri, "file:///a/b 📈");
    assert_eq!(e.mime_type, Some("text/plain"));
    assert_eq!(e.content, Content::Text("line\nnext \"q\" é"));
}

#[test]
fn blob_with_escaped_slash() {
    // Encoders that escape `/` (e.g. PHP's json_encode) are read correctly.
    let r = decode_all(case!("blob_with_escaped_slash")).unwrap();
    let want = b64::decode(Path::Scalar, b"iVBORw0KGgo/AA==").unwrap();
    assert_eq!(r.get(0).unwrap().content, Content::Blob(&want));
}

#[test]
fn trailing_characters() {
    let d = case!("trailing_characters");
    assert_err(d, CodecErrorKind::TrailingCharacters, d.len() - 1, None);
}

fn nested(depth_of_innermost: usize) -> Vec<u8> {
    // Top object (1) → result (2) → contents (3) → entry (4) → "_meta" value (5...).
    let extra = depth_of_innermost - 4;
    let mut s = String::from(
        r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"a:b","text":"x","_meta":"#,
    );
    s.push_str(&"[".repeat(extra));
    s.push_str(&"]".repeat(extra));
    s.push_str("}]}}");
    s.into_bytes()
}

#[test]
fn nesting_at_the_limit_is_accepted() {
    assert_eq!(decode_all(&nested(MAX_NESTING_DEPTH)).unwrap().len(), 1);
}

#[test]
fn nesting_one_past_the_limit_is_rejected() {
    let d = nested(MAX_NESTING_DEPTH + 1);
    let at = find(&d, r#""_meta":"#) + 8 + MAX_NESTING_DEPTH - 4;
    assert_err(&d, CodecErrorKind::TooDeep, at, Some(0));
}

#[test]
fn deep_nesting_far_past_serde_json_recursion_limit_is_rejected_identically() {
    let d = nested(1000);
    assert_eq!(err_of(&d).kind, CodecErrorKind::TooDeep);
}

#[test]
fn many_keys_duplicate_detected_past_linear_scan() {
    let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[],"_meta":{"#);
    for i in 0..40 {
        s.push_str(&format!(r#""k{i}":{i},"#));
    }
    s.push_str(r#""k7":0}}}"#);
    let d = s.into_bytes();
    let at = find(&d, r#""k7":0"#);
    assert_err(
        &d,
        CodecErrorKind::DuplicateKey { key: "k7".into() },
        at,
        None,
    );
}

#[test]
fn decoder_reuses_its_arenas_across_responses() {
    let d = payload::blob_response(3, 100_000);
    for &path in CodecPath::ALL {
        let mut dec = Decoder::new(path);
        let cap1 = dec.decode(&d).unwrap().capacity_bytes();
        let ptr1 = dec.result().get(0).map(|e| e.uri.as_ptr());
        for _ in 0..3 {
            let r = dec.decode(&d).unwrap();
            assert_eq!(r.len(), 3);
            assert_eq!(r.blob_bytes(), 300_000);
            assert_eq!(r.capacity_bytes(), cap1, "{path:?} arenas grew");
        }
        assert_eq!(
            dec.result().get(0).map(|e| e.uri.as_ptr()),
            ptr1,
            "{path:?} strings moved"
        );
        // Blob arena sized once, within 3/4 of the input + 64 bytes.
        assert!(
            dec.result().blobs.capacity() <= d.len() / 4 * 3 + 64,
            "{path:?}"
        );
    }
}

#[test]
fn seed_png_response_decodes_to_the_png_on_every_path() {
    let d = payload::seed_png_response();
    let want = payload::png_like(payload::SEED_PNG_BYTES, 0x5EED);
    let blob_at = find(&d, r#""blob":""#) + 8;
    let end = blob_at + d[blob_at..].iter().position(|&b| b == b'"').unwrap();
    assert_eq!(end - blob_at, 2_445_612);
    for r in CodecPath::ALL.iter().map(|&p| decode_read_result(p, &d)) {
        let r = r.unwrap();
        assert_eq!(r.get(0).unwrap().content, Content::Blob(&want));
        assert_eq!(r.get(0).unwrap().mime_type, Some("image/png"));
    }
}

#[test]
fn decoder_error_clears_the_result_and_the_next_response_decodes() {
    let good = payload::blob_response(2, 1000);
    let bad = case!("blob_trailing_bits");
    for &path in CodecPath::ALL {
        let mut dec = Decoder::new(path);
        assert_eq!(dec.decode(&good).unwrap().len(), 2);
        let e = dec.decode(bad).unwrap_err();
        assert_eq!(
            e.kind,
            CodecErrorKind::Base64(Base64Error::TrailingBits { offset: 1 }),
            "{path:?}"
        );
        assert!(dec.result().is_empty(), "{path:?}");
        assert_eq!(dec.decode(&good).unwrap().blob_bytes(), 2000, "{path:?}");
    }
}

#[test]
fn json_random_token_soup_all_paths_agree() {
    // Random sequences of JSON tokens and schema keys: mostly malformed, some
    // valid; every path must give the same result or the same error.
    const TOKENS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\"",
        "\"jsonrpc\"",
        "\"2.0\"",
        "\"id\"",
        "1",
        "\"result\"",
        "\"contents\"",
        "\"uri\"",
        "\"a:b\"",
        "\"mimeType\"",
        "\"text\"",
        "\"blob\"",
        "\"QQ==\"",
        "\"QR==\"",
        "\"\\u00e9\"",
        "\"\\ud800\"",
        "\"x\\\"y\"",
        "true",
        "null",
        "-0.5e3",
        "1e999",
        "01",
        "\"\\/\"",
        "\"\t\"",
    ];
    let mut rng = Rng::new(99);
    let prefix = r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"#;
    let (mut ok, mut err) = (0, 0);
    for _ in 0..3000 {
        let mut s = if rng.below(2) == 0 {
            prefix.to_string()
        } else {
            String::new()
        };
        for _ in 0..rng.below(24) {
            s.push_str(TOKENS[rng.below(TOKENS.len())]);
        }
        if rng.below(2) == 0 {
            s.push_str(r#""uri":"u","text":"t"}]}}"#);
        }
        if decodes_with_paths_agreeing(s.as_bytes(), &s) {
            ok += 1;
        } else {
            err += 1;
        }
    }
    assert!(ok > 20 && err > 2000, "ok {ok} err {err}");
}

/// `scan_contents` yields every entry with its members and keeps going past
/// an entry's rule violations; its issues are the wire's error kinds with offsets.
#[test]
fn scan_contents_reports_every_entry_and_its_issues() {
    use super::{JsonType, Member, scan_contents};
    use crate::codec::base64::Base64Error;
    use crate::resources::ContentsErrorKind as K;
    let input = br#"[{"uri":"file:///a.png","mimeType":"image/png","blob":"iVBORw0KGgo="},{"uri":1,"text":"x","blob":"AA=="},7,{"text":"a\/b"},{"uri":"u","blob":"AB=="},{"uri":"v"}]"#;
    let entries = scan_contents(input).unwrap();
    assert_eq!(entries.len(), 6);
    assert_eq!(entries[0].uri.as_str(), Some("file:///a.png"));
    assert_eq!(entries[0].blob_check, Some(Ok(8)));
    assert!(entries[0].issues().is_empty());
    let at = |needle: &str| find(input, needle);
    assert_eq!(
        entries[1].issues(),
        vec![
            (K::UriNotString, at("1,\"text")),
            (K::BothTextAndBlob, at("{\"uri\":1"))
        ]
    );
    assert_eq!(entries[2].found, JsonType::Number);
    assert_eq!(entries[2].issues(), vec![(K::EntryNotObject, at("7,"))]);
    // `text` is validated, not unescaped: its token as sent, decoded on demand.
    assert_eq!(
        entries[3].text,
        Member::Raw {
            offset: at("\"a\\/b\""),
            token: br#""a\/b""#
        }
    );
    assert_eq!(entries[3].text.as_str(), None);
    assert_eq!(entries[3].text.decode().as_deref(), Some("a/b"));
    assert_eq!(entries[0].uri.decode().as_deref(), Some("file:///a.png"));
    assert_eq!(entries[5].mime_type.decode(), None);
    assert_eq!(entries[3].issues(), vec![(K::MissingUri, at("{\"text\""))]);
    assert_eq!(
        entries[4].issues(),
        vec![(
            K::InvalidBase64(Base64Error::TrailingBits { offset: 1 }),
            at("AB==") + 1
        )]
    );
    assert_eq!(
        entries[5].issues(),
        vec![(K::NeitherTextNorBlob, at("{\"uri\":\"v\""))]
    );
    assert!(matches!(entries[5].mime_type, Member::Absent));
}

/// JSON errors inside `contents` are the fused decoder's errors at the same offsets.
#[test]
fn scan_contents_json_errors_match_the_decoder() {
    use super::scan_contents;
    for (contents, kind) in [
        (
            r#"[{"uri":"a","uri":"b","text":""}]"#,
            CodecErrorKind::DuplicateKey { key: "uri".into() },
        ),
        (
            r#"[{"uri":"a","text":"\ud800"}]"#,
            CodecErrorKind::LoneSurrogate,
        ),
        (
            r#"[{"uri":"a","text":""} x]"#,
            CodecErrorKind::UnexpectedByte { byte: b'x' },
        ),
    ] {
        let prefix = r#"{"jsonrpc":"2.0","id":1,"result":{"contents":"#;
        let whole = format!("{prefix}{contents}}}}}");
        let d = err_of(whole.as_bytes());
        let s = scan_contents(contents.as_bytes()).unwrap_err();
        assert_eq!(s.kind, kind);
        assert_eq!(d.kind, kind);
        assert_eq!(s.offset + prefix.len(), d.offset, "{contents}");
    }
    assert!(matches!(
        scan_contents(b"{}").unwrap_err().kind,
        CodecErrorKind::WrongType {
            field: "contents",
            ..
        }
    ));
}

/// `scan_message` validates the whole message once and gives the entries of
/// `result.contents` exactly as `scan_contents` gives them on that range.
#[test]
fn scan_message_gives_scan_contents_entries_of_the_contents_range() {
    let msg = r#"{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"file:///a.png","mimeType":"image/png","blob":"iVBORw0KGgo="},{"uri":"file:///b","text":"hi"}],"_meta":{}}}"#;
    let m = super::scan_message(msg.as_bytes()).unwrap();
    let range = m.contents.clone().unwrap();
    assert_eq!(
        &msg[range.clone()],
        &msg[msg.find('[').unwrap()..msg.find("],").unwrap() + 1]
    );
    let direct = super::scan_contents(msg[range].as_bytes()).unwrap();
    assert_eq!(m.entries, direct);
    assert_eq!(m.entries.len(), 2);
    assert_eq!(m.entries[0].blob_check, Some(Ok(8)));
}

/// Outside `result.contents` the message scan is the strict grammar: a
/// duplicate key, trailing bytes or a bad escape anywhere is an error with its
/// offset in the message; a batch or a result without contents has no range.
#[test]
fn scan_message_rejects_non_strict_json_with_offsets() {
    let dup = r#"{"id":1,"id":2}"#;
    assert_eq!(super::scan_message(dup.as_bytes()).unwrap_err().offset, 8);
    let trailing = r#"{"id":1} x"#;
    assert_eq!(
        super::scan_message(trailing.as_bytes()).unwrap_err().offset,
        9
    );
    let bad_in_contents = r#"{"result":{"contents":[{"uri":"a","text":"\q"}]}}"#;
    let e = super::scan_message(bad_in_contents.as_bytes()).unwrap_err();
    assert_eq!(e.offset, bad_in_contents.find('\\').unwrap());
    let batch = r#"[{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}]"#;
    assert_eq!(
        super::scan_message(batch.as_bytes()).unwrap().contents,
        None
    );
    let no_contents = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
    assert_eq!(
        super::scan_message(no_contents.as_bytes())
            .unwrap()
            .contents,
        None
    );
}

/// `scan_contents_str` (a `&str`: its UTF-8 not checked again) gives what
/// `scan_contents` gives on the same bytes, entries and errors alike.
#[test]
fn scan_contents_str_agrees_with_scan_contents_on_the_same_text() {
    for c in [
        r#"[{"uri":"file:///é","mimeType":"text/plain","text":"ü\n☃ \u00e9"},{"uri":"b","blob":"QUJD"}]"#,
        "[{\"uri\":\"a\",\"text\":\"é\u{1f}\"}]",
        r#"[{"uri":"a","text":"\udc00"}]"#,
        r#"[{"uri":"é","uri":"b","text":""}]"#,
        r#"[{"uri":"a","text":"é"}] x"#,
        r#"{"uri":"a"}"#,
    ] {
        assert_eq!(
            super::scan_contents_str(c),
            super::scan_contents(c.as_bytes()),
            "{c}"
        );
    }
    let ctl = "[{\"uri\":\"a\",\"text\":\"é\u{1f}\"}]";
    let e = super::scan_contents_str(ctl).unwrap_err();
    assert_eq!(e.kind, CodecErrorKind::ControlCharacterInString);
    assert_eq!(e.offset, ctl.find('\u{1f}').unwrap());
}

/// A blob's base64 error is said as recorded: the offset in the blob string
/// as written (escapes counted as written) and the offending character as
/// written (a surrogate pair is one character), the unescaped byte beside it.
#[test]
fn blob_base64_error_behind_a_json_escape_is_said_as_recorded() {
    let scan = |blob: &str| {
        let input = format!(r#"[{{"uri":"a","blob":"{blob}"}}]"#);
        let entries = scan_contents(input.as_bytes()).unwrap();
        let e = entries[0].blob_error_as_recorded().unwrap();
        (
            e.offset,
            e.character.map(str::to_owned),
            e.escaped,
            e.to_string(),
        )
    };
    assert_eq!(
        scan(r"iVBO\ud83d\ude00Rw0K"),
        (
            4,
            Some(r"\ud83d\ude00".to_owned()),
            true,
            r"invalid base64 character `\ud83d\ude00` at offset 4 of the blob as recorded (byte 0xf0 once unescaped)".to_owned()
        )
    );
    assert_eq!(scan(r"A\/B\n").1.as_deref(), Some(r"\n"));
    assert_eq!(scan(r"A\/B\n").0, 4);
    // Only the length is wrong: said once unescaped, with the recorded length.
    assert_eq!(
        scan(r"A\/BCD").3,
        "invalid base64 length 5 once unescaped (not a multiple of 4; 6 bytes as recorded)"
    );
    // No escape: the base64 error itself, offsets alike.
    let (offset, ch, escaped, text) = scan("iVBO*AAA");
    assert_eq!((offset, ch.as_deref(), escaped), (4, Some("*"), false));
    assert_eq!(text, "invalid base64 byte 0x2a at offset 4");
    // A valid blob has no error.
    let input = r#"[{"uri":"a","blob":"\/w==" }]"#;
    assert_eq!(
        scan_contents(input.as_bytes()).unwrap()[0].blob_error_as_recorded(),
        None
    );
}

/// `scan_contents_shape` says an entry is plainly text XOR blob exactly when
/// `scan_contents` finds none of the four shape faults in it (not an object,
/// `text` / `blob` not a string, both, neither): quotes, backslashes and
/// escaped keys in strings, `text` and `blob` nested under `_meta`, and
/// entries that are not objects included (serve's start-up prefilter cases).
#[test]
fn scan_contents_shape_text_xor_blob_agrees_with_scan_contents_issues() {
    use super::{JsonType as J, scan_contents, scan_contents_shape};
    use crate::resources::ContentsErrorKind as K;
    let cases: [(&str, &[bool]); 13] = [
        (r#"[{"uri":"a","text":"x"}]"#, &[true]),
        (
            r#"[{"uri":"a","blob":"aGk="},{"uri":"b","text":"\"text\":\\"}]"#,
            &[true, true],
        ),
        (
            r#"[{"uri":"a","text":"x","_meta":{"blob":1,"text":[2]}}]"#,
            &[true],
        ),
        (r#"[]"#, &[]),
        (r#"[{"uri":"a","text":"x","blob":"aGk="}]"#, &[false]),
        (r#"[{"uri":"a"}]"#, &[false]),
        (r#"[{"uri":"a","_meta":{"text":"x"}}]"#, &[false]),
        // An escaped key is the same key to the scanner.
        (r#"[{"uri":"a","te\u0078t":"x"}]"#, &[true]),
        (
            r#"[{"uri":"a\\","text":"x\\\""}, "not an object", [1]]"#,
            &[true, false, false],
        ),
        (r#"[{"uri":"a","text":null}]"#, &[false]),
        (r#"[{"uri":"a","blob" : 7}]"#, &[false]),
        (r#"[42]"#, &[false]),
        (r#"[{"uri":"a","text":"x"}, null]"#, &[true, false]),
    ];
    for (c, plain) in cases {
        let shapes = scan_contents_shape(c.as_bytes()).unwrap();
        let got: Vec<bool> = shapes.iter().map(|s| s.text_xor_blob()).collect();
        assert_eq!(got, plain, "{c}");
        let entries = scan_contents(c.as_bytes()).unwrap();
        assert_eq!(shapes.len(), entries.len(), "{c}");
        for (s, e) in shapes.iter().zip(&entries) {
            assert_eq!(s.found, e.found, "{c}");
            let fault = e.issues().into_iter().any(|(k, _)| {
                matches!(
                    k,
                    K::EntryNotObject
                        | K::NotAString {
                            field: "text" | "blob"
                        }
                        | K::BothTextAndBlob
                        | K::NeitherTextNorBlob
                )
            });
            assert_eq!(s.text_xor_blob(), !fault, "{c} entry {}", e.index);
        }
    }
    let shape = |c: &str| scan_contents_shape(c.as_bytes()).unwrap()[0];
    let null_text = shape(r#"[{"uri":"a","text":null}]"#);
    assert_eq!((null_text.text, null_text.blob), (Some(J::Null), None));
    let number_blob = shape(r#"[{"uri":"a","blob" : 7}]"#);
    assert_eq!(
        (number_blob.text, number_blob.blob),
        (None, Some(J::Number))
    );
    let both = shape(r#"[{"uri":"a","text":"x","blob":"aGk="}]"#);
    assert_eq!((both.text, both.blob), (Some(J::String), Some(J::String)));
    let not_object = shape(r#"[42]"#);
    assert_eq!(
        (not_object.found, not_object.text, not_object.blob),
        (J::Number, None, None)
    );
}

/// The shape scan is the contents scan's grammar: the same errors at the
/// same offsets (a bad escape, a duplicate key, trailing bytes, not an
/// array), and a bad base64 blob is no error to it (shape only).
#[test]
fn scan_contents_shape_errors_match_scan_contents() {
    for c in [
        r#"[{"uri":"a","text":"\q"}]"#,
        r#"[{"uri":"a","text":"x","text":"y"}]"#,
        r#"[{"uri":"a","text":"x"}] x"#,
        r#"{"uri":"a"}"#,
        r#"[{"uri":"a","text":"x"}"#,
    ] {
        assert_eq!(
            super::scan_contents_shape(c.as_bytes()).unwrap_err(),
            super::scan_contents(c.as_bytes()).unwrap_err(),
            "{c}"
        );
    }
    let bad_base64 = r#"[{"uri":"a","blob":"a!=="}]"#;
    assert!(super::scan_contents_shape(bad_base64.as_bytes()).unwrap()[0].text_xor_blob());
}

/// `scan_result_contents_shape` of a message gives what
/// `scan_contents_shape` gives on its `result.contents` range (the shapes
/// left from an earlier message cleared), a text past the 4 KiB the
/// envelope scan keeps (skipped, not searched again) included; `None` for a
/// message without `result.contents`.
#[test]
fn scan_result_contents_shape_agrees_with_scan_contents_shape_of_the_range() {
    let long = "é".repeat(3000);
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"a","text":"{long}"}},{{"uri":"b","text":"x","blob":"QQ=="}}]}}}}"#
    );
    let env = crate::envelope::scan_envelope_str(&msg).unwrap();
    assert!(!env.members.long_strings.strings.is_empty());
    let range = env.members.result_contents.clone().unwrap();
    let mut shapes = vec![super::scan_contents_shape(b"[1]").unwrap()[0]];
    super::scan_result_contents_shape(&msg, &env, &mut shapes)
        .unwrap()
        .unwrap();
    assert_eq!(
        shapes,
        super::scan_contents_shape(msg[range].as_bytes()).unwrap()
    );
    let plain: Vec<bool> = shapes.iter().map(|s| s.text_xor_blob()).collect();
    assert_eq!(plain, [true, false]);
    let no_contents = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
    let env = crate::envelope::scan_envelope_str(no_contents).unwrap();
    assert_eq!(
        super::scan_result_contents_shape(no_contents, &env, &mut shapes),
        None
    );
    assert!(shapes.is_empty());
}
