//! `mcptape_check::inspect`: the report is a value (camelCase JSON) and its
//! text is what the CLI prints.

use mcptape_check::inspect::{Item, inspect};

const LINES: &str = concat!(
    r#"{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file:///repo/a.png"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///repo/b"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":8,"result":{"contents":[{"uri":"file:///repo/a.png","mimeType":"image/png","blob":"iVBORw0KGgo="}]}}"#,
    "\n",
);

#[test]
fn report_pairs_sizes_and_unanswered() {
    let r = inspect(LINES.as_bytes(), false);
    assert!(r.paired);
    assert_eq!(r.summary.results, 1);
    assert_eq!(r.summary.entries, 1);
    let Item::ReadResult { line, entries, .. } = &r.items[0] else {
        panic!("{:?}", r.items[0]);
    };
    assert_eq!(*line, 3);
    assert_eq!(entries[0].decoded_bytes, 8);
    assert_eq!(entries[0].encoded_chars, Some(12));
    assert_eq!(entries[0].padding, Some(1));
    assert_eq!(entries[0].sniffed, Some("image/png"));
    assert_eq!(
        r.items[1],
        Item::Unanswered {
            line: 2,
            id: "9".to_owned(),
            uri: Some("file:///repo/b".to_owned())
        }
    );
    assert!(r.clean());
}

#[test]
fn report_serializes_camel_case() {
    let r = inspect(LINES.as_bytes(), false);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["summary"]["badLines"], 0);
    assert_eq!(v["items"][0]["kind"], "readResult");
    assert_eq!(v["items"][0]["entries"][0]["encodedChars"], 12);
    assert_eq!(v["items"][0]["entries"][0]["mimeType"], "image/png");
}

/// The unanswered scan is a set lookup: 20,000 requests with 19,999 answers
/// leave exactly the one unanswered (the old scan was quadratic).
#[test]
fn many_requests_one_unanswered() {
    let mut s = String::new();
    for i in 0..20_000 {
        s.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"resources/read\",\"params\":{{\"uri\":\"file:///{i}\"}}}}\n"
        ));
    }
    for i in 1..20_000 {
        s.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"contents\":[]}}}}\n"
        ));
    }
    let r = inspect(s.as_bytes(), false);
    let unanswered: Vec<_> = r
        .items
        .iter()
        .filter(|i| matches!(i, Item::Unanswered { .. }))
        .collect();
    assert_eq!(unanswered.len(), 1);
    assert!(matches!(unanswered[0], Item::Unanswered { line: 1, .. }));
}

/// A transcript inspected as a stream from a file (two passes, a line of
/// 1 MiB or more scanned once) prints the same bytes as the report built in
/// memory, text and JSON: a bad record between messages, a read answered
/// with a 1.2 MB blob, a stderr record, a request left unanswered, a bad
/// record after the last message and a cut last line, in that order.
#[test]
fn streamed_inspect_of_a_file_is_byte_identical_to_the_report_in_memory() {
    let blob = "iVBORw0KGgo".to_owned() + &"A".repeat(1_200_000) + "=";
    let lines = [
        r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#.to_owned(),
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file:///a.png"}}}"#.to_owned(),
        "not a record".to_owned(),
        format!(
            r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":8,"result":{{"contents":[{{"uri":"file:///a.png","mimeType":"image/png","blob":"{blob}"}}]}}}}}}"#
        ),
        r#"{"tUs":3,"kind":"stderr","line":"hello"}"#.to_owned(),
        r#"{"tUs":4,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///b"}}}"#.to_owned(),
        "{}".to_owned(),
    ];
    let mut text = lines.join("\n");
    text.push_str("\n{\"tUs\":5,\"kind\":\"mess");
    let whole = assert_streamed_is_the_report_in_memory(&text);
    assert_eq!(whole.summary.results, 1);
    assert_eq!(whole.summary.bad_lines, 3);
}

/// Issue 22: a transcript whose read ids are reused (answered before the
/// request, sent again after the answer) pairs the same way streamed (the
/// read requests noted as the second pass meets them) as in memory: each
/// answer with the read request with its id before it.
#[test]
fn streamed_inspect_pairs_reused_read_ids_as_the_report_in_memory() {
    let msg = |t: usize, dir: &str, m: &str| {
        format!(r#"{{"tUs":{t},"kind":"message","dir":"{dir}","msg":{m}}}"#)
    };
    let read = |id: u32, uri: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///{uri}"}}}}"#
        )
    };
    let answer = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[]}}}}"#);
    let text = [
        r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"http","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#.to_owned(),
        msg(1, "s2c", &answer(7)),
        msg(2, "c2s", &read(7, "a")),
        msg(3, "s2c", &answer(7)),
        msg(4, "c2s", &read(7, "b")),
        msg(5, "s2c", &answer(7)),
        msg(6, "s2c", &answer(7)),
        msg(7, "c2s", &read(8, "c")),
    ]
    .join("\n")
        + "\n";
    let whole = assert_streamed_is_the_report_in_memory(&text);
    let got: Vec<_> = whole
        .items
        .iter()
        .map(|i| match i {
            Item::ReadResult {
                line, requested, ..
            } => (*line, requested.clone()),
            Item::Unanswered { line, uri, .. } => (*line, uri.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    let uri = |u: &str| Some(format!("file:///{u}"));
    assert_eq!(
        got,
        [(4, uri("a")), (6, uri("b")), (7, uri("b")), (8, uri("c"))]
    );
}

/// `text` written to a file and inspected streamed prints the same bytes
/// (text and JSON) as the report built in memory, which is returned.
fn assert_streamed_is_the_report_in_memory(text: &str) -> mcptape_check::inspect::InspectReport {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.jsonl");
    std::fs::write(&path, text).unwrap();
    let whole = inspect(text.as_bytes(), false);
    for json in [false, true] {
        let mut out = Vec::new();
        let head = mcptape_check::inspect_file_streamed(&path, false, json, &mut out)
            .unwrap()
            .expect("a transcript");
        assert_eq!(head.summary, whole.summary);
        let want = if json {
            serde_json::to_string_pretty(&whole).unwrap() + "\n"
        } else {
            whole.text()
        };
        assert!(
            String::from_utf8(out).unwrap() == want,
            "json {json}: the streamed report differs"
        );
    }
    whole
}

/// Regression: a bad base64 character inside a JSON-escaped blob was printed by inspect
/// unescaped (`invalid base64 byte 0xc3 at offset 0`), where check says it as recorded
/// (`RecordedBase64Error`: the escape as written, its offset in the blob as written). Inspect
/// now says what check says, in a transcript and in a plain file, strict and lenient (where the
/// escaped `\n` is stripped and the escaped `!` is the bad character); a blob without escapes
/// keeps the codec's own words.
#[test]
fn inspect_escaped_blob_error_says_the_character_as_recorded_as_check_does() {
    let header = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["x"]},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#;
    let read = r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}}"#;
    let reply = |blob: &str| {
        format!(
            r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"file:///a","mimeType":"application/octet-stream","blob":"{blob}"}}]}}}}}}"#
        )
    };
    let exit = r#"{"tUs":3,"kind":"exit","code":0}"#;
    let error_of = |data: &str, lenient: bool| match &inspect(data.as_bytes(), lenient).items[..] {
        [Item::InvalidResult { error, .. }] => error.clone(),
        other => panic!("{other:?}"),
    };
    let t = format!("{header}\n{read}\n{}\n{exit}\n", reply(r"\u00e9\u0041AA"));
    let said = "invalid base64 character `\\u00e9` at offset 0 of the blob as recorded (byte 0xc3 once unescaped)";
    assert_eq!(
        error_of(&t, false),
        format!("blob: {said} in contents[0] (uri \"file:///a\") at byte 111")
    );
    let checked = mcptape_check::check_bytes("t.jsonl", t.as_bytes(), &Default::default());
    assert!(
        checked.findings[0].message.contains(said),
        "{}",
        checked.findings[0].message
    );

    let plain = r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","blob":"AA\nAA\u0021A"}]}}"#;
    assert_eq!(
        error_of(plain, false),
        "blob: invalid base64 character `\\n` at offset 2 of the blob as recorded (byte 0x0a once unescaped) in contents[0] (uri \"file:///a\") at byte 75"
    );
    assert_eq!(
        error_of(plain, true),
        "blob: invalid base64 character `\\u0021` at offset 6 of the blob as recorded (byte 0x21 once unescaped) in contents[0] (uri \"file:///a\") at byte 79"
    );
    let unescaped =
        r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","blob":"AA!A"}]}}"#;
    assert_eq!(
        error_of(unescaped, false),
        "blob: invalid base64 byte 0x21 at offset 2 in contents[0] (uri \"file:///a\") at byte 75"
    );
}
