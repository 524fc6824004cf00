//! Transcript writer/reader/redaction tests.

use std::io::Cursor;

use mcptape_transcript::reader::{self, ErrorKind, MAX_RECORD_LINE_BYTES, ReadOptions, Reader};
use mcptape_transcript::redact::{REDACTED, Redactor};
use mcptape_transcript::{
    Direction, Event, Header, HttpMeta, HttpNote, MessageError, Record, ServerSpec,
    TranscriptWriter, Transport, fuzzing,
};
use proptest::prelude::*;

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn header() -> Header {
    Header::new(
        Transport::Stdio,
        ServerSpec {
            command: Some(vec!["node".into(), "server-everything".into()]),
            url: None,
        },
        "2026-11-30T00:00:00Z",
    )
}

#[test]
fn every_kind_reads_with_exact_messages() {
    let t = reader::read(&data("every_kind.jsonl")).unwrap();
    assert_eq!(t.header.mcptape_transcript, 1);
    assert_eq!(t.header.transport, Transport::Stdio);
    assert_eq!(t.records.len(), 6);
    assert_eq!(
        t.records[0].msg(),
        Some(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
    );
    assert_eq!(t.records[0].t_us, 1520);
    assert_eq!(t.records[1].dir(), Some(Direction::S2c));
    assert_eq!(
        t.records[2].event,
        Event::Noise {
            dir: Direction::S2c,
            line: "Starting server...".into()
        }
    );
    assert_eq!(
        t.records[3].event,
        Event::Stderr {
            line: "server started".into()
        }
    );
    assert_eq!(t.protocol_version(), Some("2025-11-25"));
    assert_eq!(
        t.records[5].event,
        Event::Exit {
            code: None,
            signal: Some(9)
        }
    );
    assert!(t.dropped.is_none());
}

#[test]
fn every_kind_rewrites_byte_identical() {
    let bytes = data("every_kind.jsonl");
    let t = reader::read(&bytes).unwrap();
    let mut w = TranscriptWriter::new(Vec::new(), &t.header).unwrap();
    for r in &t.records {
        w.write(r).unwrap();
    }
    // `"code":null` is not written back (absent == null), everything else is identical.
    let expected = String::from_utf8(bytes)
        .unwrap()
        .replace(r#""code":null,"#, "");
    assert_eq!(String::from_utf8(w.into_inner()).unwrap(), expected);
}

#[test]
fn message_whitespace_inside_is_kept_byte_exact() {
    let raw = r#"{ "jsonrpc" : "2.0", "id" : 1.50e0, "result" : { "s" : "\u00e9" } }"#;
    let mut w = TranscriptWriter::new(Vec::new(), &header()).unwrap();
    w.write(&Record::message(3, Direction::S2c, raw).unwrap())
        .unwrap();
    let t = reader::read(w.get_ref()).unwrap();
    assert_eq!(t.records[0].msg(), Some(raw));
}

#[test]
fn pretty_http_body_msgtext_reads_as_message() {
    let t = reader::read(&data("pretty_http_body_msgtext.jsonl")).unwrap();
    assert_eq!(
        t.records[0].msg(),
        Some("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}")
    );
    match &t.records[0].event {
        Event::Message { http: Some(h), .. } => {
            assert_eq!(h.status, Some(200));
            assert_eq!(h.headers[0].1, "application/json");
        }
        other => panic!("not an HTTP message: {other:?}"),
    }
    // and writing it back keeps it on one line with the same bytes
    let mut w = TranscriptWriter::new(Vec::new(), &t.header).unwrap();
    w.write(&t.records[0]).unwrap();
    assert_eq!(
        w.get_ref().as_slice(),
        data("pretty_http_body_msgtext.jsonl")
    );
}

#[test]
fn record_message_rejects_non_json_and_surrounding_whitespace() {
    assert!(matches!(
        Record::message(0, Direction::S2c, "Server started on stdio"),
        Err(MessageError::NotJson { column: 1, .. })
    ));
    assert_eq!(
        Record::message(0, Direction::S2c, " {} \t").unwrap_err(),
        MessageError::SurroundingWhitespace {
            leading: 1,
            trailing: 2
        }
    );
    assert!(Record::message(0, Direction::S2c, "").is_err());
}

#[test]
fn crash_cut_mid_record_keeps_complete_records() {
    let bytes = data("crash_cut_mid_record.jsonl");
    let t = reader::read(&bytes).unwrap();
    assert_eq!(t.records.len(), 2);
    let d = t.dropped.unwrap();
    let tail = br#"{"tUs":9900,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"meth"#;
    assert_eq!(d.bytes, tail.len());
    assert_eq!(d.offset, bytes.len() - tail.len());
    assert_eq!(d.line, 4);
}

#[test]
fn cut_just_before_newline_keeps_last_record() {
    let bytes = data("every_kind.jsonl");
    let t = reader::read(&bytes[..bytes.len() - 1]).unwrap();
    assert_eq!(t.records.len(), 6);
    assert!(t.dropped.is_none());
}

#[test]
fn malformed_middle_line_is_error_with_position() {
    let bytes = data("malformed_middle_line.jsonl");
    let e = reader::read(&bytes).unwrap_err();
    assert_eq!(e.line, 3);
    let header_and_first = bytes
        .split(|&b| b == b'\n')
        .take(2)
        .map(|l| l.len() + 1)
        .sum::<usize>();
    assert_eq!(e.offset, header_and_first);
    assert!(matches!(e.kind, ErrorKind::Record { .. }), "{e}");
}

#[test]
fn malformed_middle_line_lenient_skips_and_reports() {
    let t =
        reader::read_with(&data("malformed_middle_line.jsonl"), ReadOptions::lenient()).unwrap();
    assert_eq!(t.records.len(), 2);
    assert_eq!(t.skipped.len(), 1);
    assert_eq!(t.skipped[0].line, 3);
}

#[test]
fn future_format_version_is_unsupported() {
    let e = reader::read(&data("future_format_version.jsonl")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnsupportedVersion { found: 2 });
}

/// Regression (fresh-user trial, 2026-12-05): two transcripts joined by `cat` were refused at
/// the second header as "unknown field `mcptapeTranscript`".
#[test]
fn two_transcripts_joined_say_so_at_the_second_header() {
    let one = data("every_kind.jsonl");
    let lines = one.iter().filter(|&&b| b == b'\n').count();
    let joined = [one.clone(), one].concat();
    let e = reader::read(&joined).unwrap_err();
    assert_eq!(e.line, lines + 1);
    match &e.kind {
        ErrorKind::Record { reason, .. } => {
            assert!(
                reason.starts_with("a transcript header after line 1"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Regression (fresh-user trial): a transcript saved by an editor with a UTF-8 byte order mark
/// was refused as "invalid header: expected value at line 1 column 1", naming no BOM.
#[test]
fn transcript_with_a_byte_order_mark_is_refused_naming_the_bom() {
    let plain = data("every_kind.jsonl");
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&plain);
    let e = reader::read(&bom).unwrap_err();
    assert_eq!(
        (e.kind.clone(), e.line, e.offset),
        (ErrorKind::ByteOrderMark, 1, 0)
    );
    assert!(e.to_string().contains("byte order mark (EF BB BF)"), "{e}");
    // The streaming reader says the same; without the BOM the file reads.
    let e = Reader::new(Cursor::new(bom)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::ByteOrderMark);
    assert!(reader::read(&plain).is_ok());
}

#[test]
fn header_errors() {
    assert_eq!(reader::read(b"").unwrap_err().kind, ErrorKind::Empty);
    assert_eq!(
        reader::read(b"{\"mcptapeTranscript\":1").unwrap_err().kind,
        ErrorKind::TruncatedHeader { bytes: 22 }
    );
    assert!(matches!(
        reader::read(b"hello\n").unwrap_err().kind,
        ErrorKind::Header(_)
    ));
    // Regression (fresh-user trial): a blank or `\r`-only first line said "EOF while parsing a
    // value at line 1 column 1".
    for blank in [&b"\n"[..], b"\r\n", b" \t\r\n{\"tUs\":0}\n"] {
        let e = reader::read(blank).unwrap_err();
        assert!(
            matches!(&e.kind, ErrorKind::Header(m) if m.starts_with("line 1 is blank")),
            "{e}"
        );
    }
}

/// `check` passed a header with `startedAt: "not a date"` that `export har` then refused: the
/// reader refuses it (line 1), whatever reads the file next.
#[test]
fn header_started_at_not_a_date_is_refused_at_line_1() {
    let h = |t: &str| {
        format!(
            "{{\"mcptapeTranscript\":1,\"mcptapeVersion\":\"0.1.0\",\"transport\":\"stdio\",\"server\":{{}},\"startedAt\":\"{t}\"}}\n"
        )
    };
    for bad in [
        "not a date",
        "2026-11-30T00:00",
        "2026-11-30",
        "2026-13-01T00:00:00Z",
    ] {
        let e = reader::read(h(bad).as_bytes()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::StartedAt(bad.to_owned()), "{bad}");
        assert_eq!(e.line, 1);
    }
    for good in ["2026-11-30T00:00:00Z", "2026-11-30T01:00:00.123456+01:00"] {
        let t = reader::read(h(good).as_bytes()).unwrap();
        assert_eq!(t.header.started_at, good);
    }
}

#[test]
fn field_checks_per_kind() {
    let h = String::from_utf8(data("every_kind.jsonl")).unwrap();
    let h = h.lines().next().unwrap();
    for (line, want) in [
        (
            r#"{"tUs":1,"kind":"message","dir":"c2s"}"#,
            "`msg` is required",
        ),
        (
            r#"{"tUs":1,"kind":"stderr","line":"x","dir":"s2c"}"#,
            "`dir` is not allowed",
        ),
        (r#"{"tUs":1,"kind":"protocol"}"#, "`version` is required"),
        (
            r#"{"tUs":1,"kind":"noise","line":"x"}"#,
            "`dir` is required",
        ),
        (
            r#"{"tUs":1,"kind":"exit","line":"x"}"#,
            "`line` is not allowed",
        ),
        (
            r#"{"tUs":1,"kind":"message","dir":"c2s","msgText":" 1"}"#,
            "whitespace",
        ),
    ] {
        let e = reader::read(format!("{h}\n{line}\n").as_bytes()).unwrap_err();
        assert!(e.to_string().contains(want), "{line}: {e}");
        assert_eq!(e.line, 2);
    }
    for (line, want) in [
        (r#"{"tUs":-1,"kind":"exit"}"#, "invalid value"),
        (r#"{"tUs":1,"kind":"bogus"}"#, "unknown variant"),
        (r#"{"tUs":1,"kind":"exit","extra":1}"#, "unknown field"),
    ] {
        let e = reader::read(format!("{h}\n{line}\n").as_bytes()).unwrap_err();
        assert!(e.to_string().contains(want), "{line}: {e}");
    }
    let e = reader::read(format!("{h}\n\n").as_bytes()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::EmptyLine);
    let mut bad = format!("{h}\n").into_bytes();
    bad.extend_from_slice(b"{\"tUs\":1,\"kind\":\"stderr\",\"line\":\"\xff\"}\n");
    assert!(matches!(
        reader::read(&bad).unwrap_err().kind,
        ErrorKind::InvalidUtf8 { valid_up_to: 33 }
    ));
}

#[test]
fn writer_flushes_every_record() {
    struct CountFlush(Vec<u8>, usize);
    impl std::io::Write for CountFlush {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.1 += 1;
            Ok(())
        }
    }
    let mut w = TranscriptWriter::new(CountFlush(Vec::new(), 0), &header()).unwrap();
    assert_eq!(w.get_ref().1, 1);
    w.write(&Record::stderr(1, b"a")).unwrap();
    w.write(&Record::exit(2, Some(0), None)).unwrap();
    assert_eq!(w.get_ref().1, 3);
    assert_eq!(w.records_written(), 2);
    assert_eq!(w.bytes_written() as usize, w.get_ref().0.len());
}

#[test]
fn protocol_version_from_header_when_no_record() {
    let mut h = header();
    h.protocol_version = Some("2026-07-28".into());
    let w = TranscriptWriter::new(Vec::new(), &h).unwrap();
    let t = reader::read(w.get_ref()).unwrap();
    assert_eq!(t.protocol_version(), Some("2026-07-28"));
}

#[test]
fn streaming_reader_matches_read() {
    let bytes = data("crash_cut_mid_record.jsonl");
    let whole = reader::read(&bytes).unwrap();
    let mut r = Reader::new(Cursor::new(&bytes)).unwrap();
    assert_eq!(r.header(), &whole.header);
    let recs: Vec<Record> = r.by_ref().map(Result::unwrap).collect();
    assert_eq!(recs, whole.records);
    assert_eq!(r.dropped(), whole.dropped.as_ref());
    // malformed middle line: error, then the iteration ends
    let mut r = Reader::new(Cursor::new(data("malformed_middle_line.jsonl"))).unwrap();
    assert!(r.next().unwrap().is_ok());
    assert_eq!(r.next().unwrap().unwrap_err().line, 3);
    assert!(r.next().is_none());
}

#[test]
fn streaming_reader_line_limit_at_and_past() {
    let mut w = TranscriptWriter::new(Vec::new(), &header()).unwrap();
    w.write(&Record::stderr(1, b"0123456789")).unwrap();
    let bytes = w.into_inner();
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let longest = lines[0].len().max(lines[1].len());
    let r = Reader::with_max_line(Cursor::new(&bytes), longest).unwrap();
    assert_eq!(r.map(Result::unwrap).count(), 1);
    let r = Reader::with_max_line(Cursor::new(&bytes), longest - 1);
    let err = match r {
        Err(e) => e,
        Ok(mut r) => r.next().unwrap().unwrap_err(),
    };
    assert_eq!(err.kind, ErrorKind::LineTooLong { limit: longest - 1 });
    assert_eq!(MAX_RECORD_LINE_BYTES, 256 * 1024 * 1024);
}

#[test]
fn every_cut_point_reads_back_complete_records() {
    // The fuzz property, run for every cut of a 5-record transcript.
    let mut body = Vec::new();
    for (sel, text) in [
        (0u8, "abc"),
        (1, "é"),
        (2, "banner"),
        (3, "err"),
        (4, "2026-07-28"),
        (5, ""),
        (0x80, "x"),
    ] {
        body.push(sel);
        body.extend_from_slice(text.as_bytes());
        body.push(0xff);
    }
    let total = {
        let mut d = vec![0, 0];
        d.extend_from_slice(&body);
        // any cut value larger than the file leaves it whole
        fuzzing::truncation_roundtrip(&d);
        4096
    };
    for cut in 0..total as u16 {
        let mut d = cut.to_le_bytes().to_vec();
        d.extend_from_slice(&body);
        fuzzing::truncation_roundtrip(&d);
    }
}

/// `every_kind.jsonl` with the byte at `flip` (mod its length) set to `byte`, cut to
/// `min(cut, length) + extra` bytes.
fn corrupted(flip: usize, byte: u8, cut: usize, extra: usize) -> Vec<u8> {
    let mut b = data("every_kind.jsonl");
    let i = flip % b.len();
    b[i] = byte;
    b.truncate(cut.min(b.len()) + extra);
    b
}

proptest! {
    #[test]
    fn read_never_panics(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzzing::transcript_read(&data);
    }

    #[test]
    fn read_never_panics_on_near_valid(cut in 0usize..400, flip in 0usize..400, byte in any::<u8>()) {
        let b = corrupted(flip, byte, cut, 200);
        fuzzing::transcript_read(&b);
    }

    #[test]
    fn streaming_reader_agrees_with_read(cut in 0usize..700, flip in 0usize..700, byte in any::<u8>()) {
        let b = corrupted(flip, byte, cut, 0);
        let whole = reader::read(&b);
        match Reader::new(Cursor::new(&b)) {
            Err(e) => prop_assert_eq!(Err(e), whole.map(|_| ())),
            Ok(mut r) => {
                let mut recs = Vec::new();
                let mut err = None;
                for item in r.by_ref() {
                    match item {
                        Ok(rec) => recs.push(rec),
                        Err(e) => err = Some(e),
                    }
                }
                match whole {
                    Ok(t) => {
                        prop_assert_eq!(err, None);
                        prop_assert_eq!(recs, t.records);
                        prop_assert_eq!(r.dropped(), t.dropped.as_ref());
                    }
                    Err(e) => prop_assert_eq!(err, Some(e)),
                }
            }
        }
    }

    #[test]
    fn message_roundtrip_any_string(s in ".*", t_us in any::<u64>()) {
        let json = serde_json::to_string(&s).unwrap();
        let r = Record::message(t_us, Direction::C2s, &json).unwrap();
        let mut w = TranscriptWriter::new(Vec::new(), &header()).unwrap();
        w.write(&r).unwrap();
        let t = reader::read(w.get_ref()).unwrap();
        prop_assert_eq!(&t.records, &vec![r]);
    }
}

#[test]
fn redacts_credential_headers_by_default() {
    let r = Redactor::default();
    assert!(r.enabled);
    assert_eq!(
        r.header_value("Authorization", "Bearer abc.def"),
        "Bearer [redacted]"
    );
    assert_eq!(
        r.header_value("proxy-authorization", "Basic Zm9vOmJhcg=="),
        "Basic [redacted]"
    );
    assert_eq!(r.header_value("authorization", "tokenonly"), REDACTED);
    assert_eq!(r.header_value("Cookie", "a=b; c=d"), REDACTED);
    assert_eq!(r.header_value("SET-COOKIE", "sid=1; HttpOnly"), REDACTED);
    assert_eq!(
        r.header_value("Content-Type", "application/json"),
        "application/json"
    );
    // Deny-by-default: "session" is a credential word; the session id is
    // kept only as a per-transcript pseudonym (see redact.rs).
    assert_eq!(r.header_value("Mcp-Session-Id", "abc"), "[redacted:1]");
    // (name, value, value after redaction)
    let headers = [
        ("cookie", "x=y", REDACTED),
        ("accept", "text/event-stream", "text/event-stream"),
        ("Authorization", "Bearer t", "Bearer [redacted]"),
    ];
    let mut hs: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v, _)| (n.to_string(), v.to_string()))
        .collect();
    r.headers(&mut hs);
    let got: Vec<&str> = hs.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(got, headers.map(|(_, _, want)| want));
}

#[test]
fn redacts_token_like_query_parameters_and_userinfo() {
    let r = Redactor::new();
    // (url, url after redaction)
    for (url, want) in [
        (
            "https://h.example/mcp?token=s3cr3t&x=1&API_KEY=k#frag",
            "https://h.example/mcp?token=[redacted]&x=1&API_KEY=[redacted]#frag",
        ),
        (
            "http://user:pw@127.0.0.1:3000/mcp?code=abc&state=s",
            "http://[redacted]@127.0.0.1:3000/mcp?code=[redacted]&state=s",
        ),
        (
            "/mcp?access%5Ftoken=zz&sig=1",
            "/mcp?access%5Ftoken=[redacted]&sig=[redacted]",
        ),
        ("http://127.0.0.1:3000/mcp", "http://127.0.0.1:3000/mcp"),
        ("http://h/p?keys=1&monkey=2", "http://h/p?keys=1&monkey=2"),
        // userinfo-looking '@' in the path is not userinfo
        ("http://h/a@b", "http://h/a@b"),
    ] {
        assert_eq!(r.url(url), want, "{url}");
    }
}

#[test]
fn no_redact_changes_nothing() {
    let r = Redactor::disabled();
    assert_eq!(r.header_value("Authorization", "Bearer abc"), "Bearer abc");
    assert_eq!(r.url("http://u:p@h/?token=t"), "http://u:p@h/?token=t");
    let mut hs = vec![("Cookie".to_string(), "a=b".to_string())];
    r.headers(&mut hs);
    assert_eq!(hs[0].1, "a=b");
}

#[test]
fn http_meta_roundtrip() {
    let meta = HttpMeta {
        exchange: 3,
        method: Some("POST".into()),
        status: Some(200),
        headers: vec![("mcp-session-id".into(), "abc".into())],
        sse_event_id: Some("ev-1".into()),
        redacted_pointers: Vec::new(),
    };
    let r = Record::http_message(
        9,
        Direction::S2c,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        meta,
    )
    .unwrap();
    let mut w = TranscriptWriter::new(Vec::new(), &header()).unwrap();
    w.write(&r).unwrap();
    let text = String::from_utf8(w.get_ref().clone()).unwrap();
    assert!(text.ends_with(
        "{\"tUs\":9,\"kind\":\"message\",\"dir\":\"s2c\",\"msg\":{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},\"http\":{\"exchange\":3,\"method\":\"POST\",\"status\":200,\"headers\":[[\"mcp-session-id\",\"abc\"]],\"sseEventId\":\"ev-1\"}}\n"
    ), "{text}");
    assert_eq!(reader::read(w.get_ref()).unwrap().records, vec![r]);
}

#[test]
fn shipped_corpus_transcripts_read_strictly() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/transcripts");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let t = reader::read(&std::fs::read(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(t.dropped.is_none(), "{}", path.display());
            assert!(!t.records.is_empty(), "{}", path.display());
            n += 1;
        }
    }
    assert!(n >= 1, "no transcripts in {dir}");
}

#[test]
fn real_recording_cut_anywhere_reads_back_complete_records() {
    // corpus/transcripts/everything-stdio.jsonl (recorded from server-everything),
    // cut at every byte of its first 8 KiB and every 61st byte after.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/transcripts/everything-stdio.jsonl"
    );
    let bytes = std::fs::read(path).unwrap();
    let full = reader::read(&bytes).unwrap();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' && i >= header_end)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ends.len(), full.records.len());
    let cuts = (0..bytes.len().min(8192)).chain((8192..bytes.len()).step_by(61));
    for cut in cuts {
        let got = reader::read(&bytes[..cut]);
        if cut < header_end {
            assert!(got.is_err(), "cut {cut}");
            continue;
        }
        let got = got.unwrap();
        let complete = ends.iter().filter(|&&e| e < cut).count();
        let kept_whole_tail = usize::from(ends.get(complete) == Some(&cut));
        assert_eq!(
            got.records[..],
            full.records[..complete + kept_whole_tail],
            "cut {cut}"
        );
        let start = if complete == 0 {
            header_end
        } else {
            ends[complete - 1] + 1
        };
        let dropped = got.dropped.map_or(0, |d| d.bytes);
        assert_eq!(
            dropped,
            if kept_whole_tail == 1 { 0 } else { cut - start },
            "cut {cut}"
        );
    }
    // the message view: every message record with its exact bytes
    let msgs: Vec<_> = full.messages().collect();
    assert!(
        msgs.iter()
            .any(|m| m.2 == Direction::C2s && m.3.contains("\"initialize\""))
    );
    assert!(msgs.iter().all(|m| full.records[m.0].msg() == Some(m.3)));
}

#[test]
fn http_events_read_typed_and_rewrite_byte_identical() {
    let bytes = data("http_events.jsonl");
    let t = reader::read(&bytes).unwrap();
    assert_eq!(t.records.len(), 5);
    assert_eq!(
        t.records[0].event,
        Event::Http {
            dir: Direction::C2s,
            http: HttpMeta {
                exchange: 1,
                method: Some("GET".into()),
                status: None,
                headers: vec![("accept".into(), "text/event-stream".into())],
                sse_event_id: None,
                redacted_pointers: Vec::new(),
            },
            note: HttpNote::NoBody,
            detail: None,
        }
    );
    let Event::Http { http, note, .. } = &t.records[1].event else {
        panic!("not http: {:?}", t.records[1]);
    };
    assert_eq!(*note, HttpNote::EmptyEvent);
    assert_eq!(http.sse_event_id.as_deref(), Some("0"));
    assert_eq!(t.records[2].dir(), Some(Direction::S2c));
    let Event::Http { http, note, .. } = &t.records[3].event else {
        panic!("not http: {:?}", t.records[3]);
    };
    assert_eq!((*note, http.exchange), (HttpNote::ClientClosedStream, 1));
    assert_eq!(note.as_str(), "clientClosedStream");
    let Event::Http { note, detail, .. } = &t.records[4].event else {
        panic!("not http: {:?}", t.records[4]);
    };
    assert_eq!(*note, HttpNote::UpstreamFailed);
    assert_eq!(detail.as_deref(), Some("connection refused"));
    let mut w = TranscriptWriter::new(Vec::new(), &t.header).unwrap();
    for r in &t.records {
        w.write(r).unwrap();
    }
    assert_eq!(w.into_inner(), bytes);
}

#[test]
fn http_event_field_checks() {
    let h = String::from_utf8(data("http_events.jsonl")).unwrap();
    let h = h.lines().next().unwrap();
    for (line, want) in [
        (
            r#"{"tUs":1,"kind":"http","dir":"c2s","note":"noBody"}"#,
            "`http` is required",
        ),
        (
            r#"{"tUs":1,"kind":"http","dir":"c2s","http":{"exchange":0}}"#,
            "`note` is required",
        ),
        (
            r#"{"tUs":1,"kind":"http","http":{"exchange":0},"note":"noBody"}"#,
            "`dir` is required",
        ),
        (
            r#"{"tUs":1,"kind":"http","dir":"c2s","http":{"exchange":0},"note":"noBody","line":"x"}"#,
            "`line` is not allowed",
        ),
        (
            r#"{"tUs":1,"kind":"noise","dir":"s2c","line":"x","note":"noBody"}"#,
            "`note` is not allowed",
        ),
        (
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":1,"detail":"x"}"#,
            "`detail` is not allowed",
        ),
        (
            r#"{"tUs":1,"kind":"http","dir":"c2s","http":{"exchange":0},"note":"bogus"}"#,
            "unknown variant",
        ),
    ] {
        let e = reader::read(format!("{h}\n{line}\n").as_bytes()).unwrap_err();
        assert!(e.to_string().contains(want), "{line}: {e}");
        assert_eq!(e.line, 2);
    }
}
