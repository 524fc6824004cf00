//! Regression tests for a fresh user's reports on `check` and `inspect`: an
//! unterminated last line with an invalid byte, record numbers after a
//! skipped line, a blob's base64 error said as recorded.

use std::path::Path;

use mcptape_check::{Options, check_bytes};

const STDIO: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#;
const REQ: &str = r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}}"#;

/// The header, `REQ`, then `tail` as given (its own `\n` or none).
fn transcript(tail: &[u8]) -> Vec<u8> {
    let mut t = format!("{STDIO}\n{REQ}\n").into_bytes();
    t.extend_from_slice(tail);
    t
}

fn summary(r: &mcptape_check::FileReport) -> Vec<(&'static str, usize, usize)> {
    r.findings
        .iter()
        .map(|f| (f.rule, f.record, f.line))
        .collect()
}

/// An invalid byte inside an unterminated last line is not a cut record: the
/// same error as with its `\n`, with the line's byte offset and the valid bytes.
#[test]
fn unterminated_last_line_with_invalid_utf8_is_unreadable_not_truncated() {
    let line: &[u8] = b"{\"tUs\":3,\"kind\":\"stderr\",\"line\":\"a\xffb\"}";
    let with_nl = check_bytes(
        "t.jsonl",
        &transcript(&[line, b"\n"].concat()),
        &Options::default(),
    );
    let without = check_bytes("t.jsonl", &transcript(line), &Options::default());
    let offset = STDIO.len() + 1 + REQ.len() + 1;
    for r in [&with_nl, &without] {
        let f = r
            .findings
            .iter()
            .find(|f| f.rule == "transcript-unreadable")
            .expect("transcript-unreadable");
        assert_eq!((f.record, f.line), (2, 3));
        assert_eq!(
            f.message,
            format!(
                "record line skipped: transcript line 3 (byte offset {offset}): invalid UTF-8 after 34 bytes of the line"
            )
        );
        assert!(r.failures() > 0);
        assert!(!r.findings.iter().any(|f| f.rule == "transcript-truncated"));
    }
    assert_eq!(summary(&with_nl), summary(&without));
}

/// A cut inside a multi-byte character, or inside a JSON value, is still a
/// cut record: dropped and said (`transcript-truncated`, a warning).
#[test]
fn unterminated_last_line_cut_mid_character_or_value_is_truncated() {
    for tail in [
        &b"{\"tUs\":3,\"kind\":\"stderr\",\"line\":\"a\xe2\x82"[..],
        b"{\"tUs\":3,\"kind\":\"stderr\",\"line\":\"a",
        b"{\"tUs\":3,\"kind\":\"stder",
    ] {
        let r = check_bytes("t.jsonl", &transcript(tail), &Options::default());
        // The request's answer was in the dropped part (record 1), then the cut.
        assert_eq!(
            summary(&r),
            [("request-unanswered", 1, 2), ("transcript-truncated", 2, 3)]
        );
        let f = &r.findings[1];
        assert!(
            f.message
                .contains(&format!("{} bytes) has no line terminator", tail.len())),
            "{}",
            f.message
        );
        assert_eq!(
            r.failures(),
            1,
            "request-unanswered only: {:?}",
            summary(&r)
        );
    }
}

/// A complete value that is not a record, unterminated, is unreadable too.
#[test]
fn unterminated_last_line_complete_but_not_a_record_is_unreadable() {
    let r = check_bytes("t.jsonl", &transcript(b"[1,2]"), &Options::default());
    assert!(
        r.findings
            .iter()
            .any(|f| (f.rule, f.record, f.line) == ("transcript-unreadable", 2, 3))
    );
}

/// Record `n` is line `n + 1`, read or skipped; findings come out in line order.
#[test]
fn record_numbers_after_skipped_lines_follow_the_file_lines() {
    let req2 = r#"{"tUs":2,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}}"#;
    let unknown =
        r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":9,"result":{}}}"#;
    let t = format!("{STDIO}\n{REQ}\ngarbage1\ngarbage2\n{req2}\ngarbage3\n{unknown}\n");
    let r = check_bytes("t.jsonl", t.as_bytes(), &Options::default());
    assert_eq!(
        summary(&r),
        [
            ("request-unanswered", 1, 2),
            ("transcript-unreadable", 2, 3),
            ("transcript-unreadable", 3, 4),
            ("request-unanswered", 4, 5),
            ("transcript-unreadable", 5, 6),
            ("response-unknown-id", 6, 7),
            ("recording-no-exit", 6, 7),
        ]
    );
    for f in &r.findings {
        assert_eq!(f.record + 1, f.line, "{f:?}");
    }
    // Whole records read: the two requests and the response.
    assert_eq!(r.records, 3);
}

/// A blob's bad character behind a JSON escape is said as recorded, at its
/// offset in the blob as recorded.
#[test]
fn blob_base64_error_behind_a_json_escape_is_said_as_recorded() {
    let answer = |blob: &str| {
        format!(
            r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"file:///a","mimeType":"image/png","blob":"{blob}"}}]}}}}}}"#
        )
    };
    let cases = [
        (
            r"iVBO\ud83d\ude00Rw0K",
            "blob is not canonical base64 at byte 4: invalid base64 character `\\ud83d\\ude00` at offset 4 of the blob as recorded (byte 0xf0 once unescaped)",
        ),
        (
            r"iV\u0042O\u00e9Rw0K",
            "blob is not canonical base64 at byte 9: invalid base64 character `\\u00e9` at offset 9 of the blob as recorded (byte 0xc3 once unescaped)",
        ),
        (
            r"iV\/BO*AA",
            "blob is not canonical base64 at byte 6: invalid base64 character `*` at offset 6 of the blob as recorded (byte 0x2a once unescaped)",
        ),
        // No escape: the message as before (offsets agree).
        (
            "iVBO*AAA",
            "blob is not canonical base64 at byte 4: invalid base64 byte 0x2a at offset 4",
        ),
    ];
    for (blob, want) in cases {
        let t = format!("{STDIO}\n{REQ}\n{}\n", answer(blob));
        let r = check_bytes("t.jsonl", t.as_bytes(), &Options::default());
        let f = r
            .findings
            .iter()
            .find(|f| f.rule == "blob-not-canonical-base64")
            .unwrap_or_else(|| panic!("{blob}: {:?}", summary(&r)));
        assert_eq!(f.message, format!("entry \"file:///a\": {want}"), "{blob}");
        assert_eq!(f.pointer, "/result/contents/0/blob");
    }
}

/// A reader that gives at most `chunk` bytes a call, counting the bytes read
/// (standard input as a pipe gives it: once, in pieces).
struct Pipe<'a> {
    data: &'a [u8],
    chunk: usize,
    read: usize,
}

impl std::io::Read for Pipe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.read += n;
        Ok(n)
    }
}

/// `inspect -` streams a transcript from a pipe: the same bytes (text and
/// JSON) as `inspect FILE` streamed, the input read once.
#[test]
fn inspect_stdin_streams_a_transcript_with_the_file_report() {
    use mcptape_check::{ReadInspected, inspect_file_streamed, inspect_read_streamed};
    let root = crate::support::repo();
    let mut files = Vec::new();
    for dir in ["corpus/transcripts", "corpus/violations"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 30);
    let mut streamed = 0;
    for path in &files {
        let data = std::fs::read(path).unwrap();
        for json in [false, true] {
            let mut want = Vec::new();
            let file = inspect_file_streamed(path, false, json, &mut want).unwrap();
            let mut pipe = Pipe {
                data: &data,
                chunk: 1000,
                read: 0,
            };
            let mut got = Vec::new();
            let read =
                inspect_read_streamed(Path::new("-"), &mut pipe, false, json, &mut got).unwrap();
            assert_eq!(pipe.read, data.len(), "{}", path.display());
            match (file, read) {
                (Some(head), ReadInspected::Streamed(h)) => {
                    assert_eq!(head.summary, h.summary);
                    assert!(
                        got == want,
                        "{} json {json}: reports differ",
                        path.display()
                    );
                    streamed += 1;
                }
                (f, r) => panic!("{}: {f:?} vs {r:?}", path.display()),
            }
        }
    }
    assert_eq!(streamed, files.len() * 2);
}

/// Not a transcript on a pipe (plain JSON-RPC lines, or nothing): streamed too, since
/// 2026-12-05 (it was given back whole to be inspected in memory: 2 GB for 542 MB of
/// lines); the report is the in-memory one's, text and JSON, the input read once.
#[test]
fn inspect_stdin_not_a_transcript_is_streamed_with_the_in_memory_report() {
    use mcptape_check::{ReadInspected, inspect::inspect, inspect_read_streamed};
    let lines = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".repeat(20_000);
    for data in [lines.as_bytes(), b""] {
        let whole = inspect(data, false);
        for json in [false, true] {
            let mut pipe = Pipe {
                data,
                chunk: 4096,
                read: 0,
            };
            let mut out = Vec::new();
            match inspect_read_streamed(Path::new("-"), &mut pipe, false, json, &mut out).unwrap() {
                ReadInspected::Streamed(h) => assert_eq!(h.summary, whole.summary),
                other => panic!("{other:?}"),
            }
            assert_eq!(pipe.read, data.len());
            let want = if json {
                serde_json::to_string_pretty(&whole).unwrap() + "\n"
            } else {
                whole.text()
            };
            assert!(String::from_utf8(out).unwrap() == want, "json {json}");
        }
    }
}

/// Regression (fresh-user trial, 2026-12-05): a request sent again with the id of a request
/// still unanswered got only `request-unanswered`, not saying the id was in use. The answer
/// goes to the first; the second is unanswered and its message names the first's record.
#[test]
fn request_sent_again_with_an_open_id_says_so_in_request_unanswered() {
    let res = r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"x"}]}}}"#;
    let exit = r#"{"tUs":4,"kind":"exit","code":0}"#;
    let t = transcript(format!("{REQ}\n{res}\n{exit}\n").as_bytes());
    let r = check_bytes("t.jsonl", &t, &Options::default());
    assert_eq!(
        summary(&r),
        vec![("request-unanswered", 2, 3)],
        "{:?}",
        r.findings
    );
    assert!(
        r.findings[0]
            .message
            .ends_with("; it was sent with the id of the request at record 1, still unanswered then (an id in use must not be sent again: the answer went to the first)"),
        "{}",
        r.findings[0].message
    );
    // Sent again after its answer: unanswered, with no such words (nothing was open), and the
    // id's reuse is its own finding (request-id-reused, stdio).
    let again = REQ.replace(r#""tUs":1,"#, r#""tUs":3,"#);
    let t = transcript(format!("{res}\n{again}\n{exit}\n").as_bytes());
    let r = check_bytes("t.jsonl", &t, &Options::default());
    let mut got = summary(&r);
    got.sort();
    assert_eq!(
        got,
        vec![("request-id-reused", 3, 4), ("request-unanswered", 3, 4)],
        "{:?}",
        r.findings
    );
    assert!(
        r.findings
            .iter()
            .all(|f| !f.message.contains("still unanswered then"))
    );
    let reused = r
        .findings
        .iter()
        .find(|f| f.rule == "request-id-reused")
        .unwrap();
    assert_eq!(
        reused.message,
        "resources/read 1 from the client reuses the id of the request at record 1, already answered (an id must not be used twice in a session)"
    );
}
