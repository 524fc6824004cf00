//! stdio framing and SSE parsing: rules, limits, and split-point independence.

use mcptape_transport::error::{FrameErrorKind, SseErrorKind};
use mcptape_transport::fuzzing;
use mcptape_transport::sse::{MAX_EVENT_BYTES, SseEvent, SseParser, SsePayload};
use mcptape_transport::stdio::{Frame, LineFramer, MAX_LINE_BYTES};
use proptest::prelude::*;

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn frames(limit: usize, chunks: &[&[u8]]) -> Vec<Frame> {
    let mut f = LineFramer::new(limit);
    let mut out: Vec<Frame> = chunks.iter().flat_map(|c| f.push(c)).collect();
    out.extend(f.finish());
    out
}

/// `parse` gives the same result for `input` in one piece as for every two-way split
/// of it, and for `input[..short]` as for every three-way split of that prefix.
fn assert_split_independent<T: PartialEq + std::fmt::Debug>(
    input: &[u8],
    short: usize,
    parse: impl Fn(&[&[u8]]) -> T,
) {
    let want = parse(&[input]);
    for i in 0..=input.len() {
        assert_eq!(parse(&[&input[..i], &input[i..]]), want, "split {i}");
    }
    let short = &input[..short];
    let want = parse(&[short]);
    for i in 0..=short.len() {
        for j in i..=short.len() {
            assert_eq!(
                parse(&[&short[..i], &short[i..j], &short[j..]]),
                want,
                "split {i},{j}"
            );
        }
    }
}

fn msg(s: &str) -> Frame {
    Frame::Message(s.as_bytes().to_vec())
}

fn noise(b: &[u8]) -> Frame {
    Frame::Noise(b.to_vec())
}

#[test]
fn stdio_banner_crlf_utf8_and_tail() {
    let input = data("stdio_banner_crlf_utf8_batchless_tail.bin");
    let want = vec![
        noise(b"Starting server on stdio..."),
        msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"s\":\"\u{e9}\u{20ac}\u{1f600}\"}}"),
        noise(b""),
        noise(br#"{"jsonrpc":"2.0","method":"notifications/message"}{"jsonrpc":"2.0","id":2,"result":{}}"#),
        noise(br#"  {"jsonrpc":"2.0","id":3,"result":{}}"#),
        noise(b"\xff\xfe not utf8"),
        noise(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\r"),
        msg(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
    ];
    assert_eq!(frames(MAX_LINE_BYTES, &[&input]), want);
}

#[test]
fn stdio_every_two_and_three_way_split_gives_same_frames() {
    // three-way splits on a shorter prefix (the first 4 lines), all pairs
    assert_split_independent(
        &data("stdio_banner_crlf_utf8_batchless_tail.bin"),
        150,
        |c| frames(MAX_LINE_BYTES, c),
    );
}

#[test]
fn stdio_byte_at_a_time_gives_same_frames() {
    let input = data("stdio_banner_crlf_utf8_batchless_tail.bin");
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(
        frames(MAX_LINE_BYTES, &chunks),
        frames(MAX_LINE_BYTES, &[&input])
    );
}

#[test]
fn stdio_line_at_limit_is_kept_one_past_is_too_long() {
    let limit = 16;
    let at = br#"{"a":"0123456"}"#; // 15 bytes
    let at: Vec<u8> = [&at[..], b" "].concat(); // 16 bytes (noise: trailing space)
    let past: Vec<u8> = [&at[..], b"x"].concat();
    for (term, name) in [(&b"\n"[..], "LF"), (b"\r\n", "CRLF")] {
        let mut s = at.clone();
        s.extend_from_slice(term);
        s.extend_from_slice(&past);
        s.extend_from_slice(term);
        s.extend_from_slice(b"1\n");
        let want = vec![
            Frame::Noise(at.clone()),
            Frame::TooLong(mcptape_transport::FrameError {
                kind: FrameErrorKind::LineTooLong { len: 17, limit },
                line: 2,
                offset: (at.len() + term.len()) as u64,
            }),
            msg("1"),
        ];
        for i in 0..=s.len() {
            for j in i..=s.len() {
                assert_eq!(
                    frames(limit, &[&s[..i], &s[i..j], &s[j..]]),
                    want,
                    "{name} split {i},{j}"
                );
            }
        }
    }
}

#[test]
fn stdio_too_long_unterminated_tail_reported_at_finish() {
    let s = b"12\nabcdefghij\r";
    for i in 0..=s.len() {
        let got = frames(4, &[&s[..i], &s[i..]]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], msg("12"));
        match &got[1] {
            Frame::TooLong(e) => {
                assert_eq!(e.kind, FrameErrorKind::LineTooLong { len: 10, limit: 4 });
                assert_eq!((e.line, e.offset), (2, 3));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn stdio_unterminated_tail_one_past_limit_is_too_long() {
    // Regression (found by the fuzz property): the buffer keeps limit + 1 bytes
    // for a trailing '\r'; an unterminated tail of limit + 1 bytes must not
    // come out as a frame at `finish`.
    assert_eq!(frames(4, &[b"abcd"]), vec![noise(b"abcd")]);
    assert_eq!(frames(4, &[b"abcd\r"]), vec![noise(b"abcd")]);
    match &frames(4, &[b"abcde"])[..] {
        [Frame::TooLong(e)] => assert_eq!(e.kind, FrameErrorKind::LineTooLong { len: 5, limit: 4 }),
        other => panic!("{other:?}"),
    }
}

#[test]
fn stdio_sixteen_megabyte_line_works() {
    const { assert!(MAX_LINE_BYTES >= 16 * 1024 * 1024) };
    let payload = "a".repeat(16 * 1024 * 1024);
    let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"text\":\"{payload}\"}}}}\n");
    let mut f = LineFramer::new(MAX_LINE_BYTES);
    let mut out = Vec::new();
    for c in line.as_bytes().chunks(64 * 1024) {
        out.extend(f.push(c));
    }
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].as_message().map(str::len), Some(line.len() - 1));
    assert_eq!(f.pending_bytes(), 0);
}

#[test]
fn stdio_max_line_bytes_at_limit_and_one_past() {
    // A JSON string of exactly MAX_LINE_BYTES bytes, then one a byte longer.
    let mut at = vec![b'a'; MAX_LINE_BYTES];
    at[0] = b'"';
    at[MAX_LINE_BYTES - 1] = b'"';
    let mut f = LineFramer::new(MAX_LINE_BYTES);
    let mut out = Vec::new();
    for c in at.chunks(1 << 20) {
        out.extend(f.push(c));
    }
    out.extend(f.push(b"\r\n"));
    assert!(matches!(&out[..], [Frame::Message(m)] if m.len() == MAX_LINE_BYTES));
    drop(out);
    at.insert(1, b'a');
    let mut out = Vec::new();
    for c in at.chunks(1 << 20) {
        out.extend(f.push(c));
    }
    out.extend(f.push(b"\n"));
    match &out[..] {
        [Frame::TooLong(e)] => {
            assert_eq!(
                e.kind,
                FrameErrorKind::LineTooLong {
                    len: MAX_LINE_BYTES + 1,
                    limit: MAX_LINE_BYTES
                }
            );
            assert_eq!((e.line, e.offset), (2, MAX_LINE_BYTES as u64 + 2));
        }
        other => panic!("{:?}", other.len()),
    }
}

#[test]
fn sse_max_event_bytes_at_limit_and_one_past() {
    // one data line of exactly MAX_EVENT_BYTES bytes ("data:" + payload)
    let mut line = b"data:".to_vec();
    line.resize(MAX_EVENT_BYTES, b'x');
    let mut p = SseParser::default();
    let mut ev = Vec::new();
    for c in line.chunks(1 << 20) {
        p.push(c, &mut ev).unwrap();
    }
    p.push(b"\n\n", &mut ev).unwrap();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].data.len(), MAX_EVENT_BYTES - 5);
    line.push(b'x');
    let mut p = SseParser::default();
    let mut ev = Vec::new();
    let mut err = None;
    for c in line.chunks(1 << 20).chain([&b"\n\n"[..]]) {
        if let Err(e) = p.push(c, &mut ev) {
            err = Some(e);
            break;
        }
    }
    assert_eq!(
        err.unwrap().kind,
        SseErrorKind::EventTooLarge {
            limit: MAX_EVENT_BYTES
        }
    );
    assert!(ev.is_empty());
}

#[test]
fn sse_whatwg_rules_mixed_line_ends() {
    let input = data("sse_whatwg_rules_mixed_line_ends.txt");
    let mut p = SseParser::default();
    let mut ev = Vec::new();
    p.push(&input, &mut ev).unwrap();
    let e = |event: &str, data: &str, id: Option<&str>, retry| SseEvent {
        event: event.into(),
        data: data.into(),
        id: id.map(Into::into),
        retry,
    };
    let json = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_eq!(
        ev,
        vec![
            e("message", "first event", Some("1"), None),
            e("message", "second event", None, None),
            e("message", " third event", None, None),
            e(
                "notification",
                "{\"jsonrpc\":\"2.0\",\n\"method\":\"notifications/progress\"}",
                None,
                Some(1500)
            ),
            e("message", "ping", None, None),
            e("message", "", None, None),
            e("message", "\n", None, None),
            e("message", json, None, None),
        ]
    );
    assert!(p.finish(), "the unterminated last event is discarded");
    assert_eq!(p.comments(), 2);
    assert_eq!(p.reconnection_ms(), Some(1500));
    assert!(matches!(ev[3].payload(), SsePayload::JsonRpc(_)));
    assert_eq!(ev[4].payload(), SsePayload::Other("ping"));
    assert_eq!(ev[5].payload(), SsePayload::Other(""));
    assert_eq!(ev[7].payload(), SsePayload::JsonRpc(json));
}

fn sse_all(
    limit: usize,
    chunks: &[&[u8]],
) -> (Vec<SseEvent>, Option<mcptape_transport::SseError>, bool) {
    let mut p = SseParser::new(limit);
    let mut ev = Vec::new();
    for c in chunks {
        if let Err(e) = p.push(c, &mut ev) {
            return (ev, Some(e), false);
        }
    }
    let pending = p.finish();
    (ev, None, pending)
}

#[test]
fn sse_every_two_and_three_way_split_gives_same_events() {
    assert_split_independent(&data("sse_whatwg_rules_mixed_line_ends.txt"), 120, |c| {
        sse_all(MAX_EVENT_BYTES, c)
    });
}

#[test]
fn sse_crlf_split_across_reads_is_one_line_end() {
    // "\r" | "\n\r\n": if the split \r\n were two line ends the first event
    // would be dispatched with an extra blank line in between: same events here,
    // but the data line count must not change.
    let (ev, _, _) = sse_all(1024, &[b"data: a\r", b"\ndata: b\r\n\r\n"]);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].data, "a\nb");
}

#[test]
fn sse_bom_only_at_start_and_split() {
    let (ev, _, _) = sse_all(1024, &[b"\xef", b"\xbb", b"\xbfdata: x\n\n"]);
    assert_eq!(ev[0].data, "x");
    // a second BOM is not stripped: the line's field name is "\u{feff}data"
    let (ev, _, _) = sse_all(1024, &[b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n"]);
    assert!(ev.is_empty());
    // a stream shorter than a BOM
    let (ev, _, pending) = sse_all(1024, &[b"\xef\xbb"]);
    assert!(ev.is_empty() && pending);
}

#[test]
fn sse_retry_only_digits() {
    let (ev, _, _) = sse_all(
        1024,
        &[b"retry: 12x\nretry:\nretry: 99999999999999999999999\ndata: a\n\n"],
    );
    assert_eq!(ev[0].retry, None);
    let (ev, _, _) = sse_all(1024, &[b"retry:250\ndata: a\n\ndata: b\n\n"]);
    assert_eq!(ev[0].retry, Some(250));
    assert_eq!(ev[1].retry, None);
}

#[test]
fn sse_event_at_limit_is_kept_one_past_is_error() {
    // The limit applies to each line and to the event's data buffer.
    // Line 1 "data: 0123456789" is 16 bytes: at limit 16 it passes, at 15 it fails.
    let s = b"data: 0123456789\n\n";
    let (ev, err, _) = sse_all(16, &[s]);
    assert_eq!((ev.len(), err), (1, None));
    let (ev, err, _) = sse_all(15, &[s]);
    assert!(ev.is_empty());
    let err = err.unwrap();
    assert_eq!(err.kind, SseErrorKind::EventTooLarge { limit: 15 });
    assert_eq!((err.line, err.offset), (1, 0));
    // Two data lines: after line 2 the buffer holds "0123456789\n0123456789\n" (22).
    let s2 = b"data: 0123456789\ndata: 0123456789\n\n";
    let (ev, err, _) = sse_all(22, &[s2]);
    assert_eq!((ev.len(), err), (1, None));
    assert_eq!(ev[0].data, "0123456789\n0123456789");
    for i in 0..=s2.len() {
        let (ev, err, _) = sse_all(21, &[&s2[..i], &s2[i..]]);
        assert!(ev.is_empty());
        let err = err.unwrap();
        assert_eq!((err.line, err.offset), (2, 17), "split {i}");
    }
    // once failed, the parser refuses more input with the same error
    let mut p = SseParser::new(4);
    let mut v = Vec::new();
    let e1 = p.push(b"data: long\n", &mut v).unwrap_err();
    assert_eq!(p.push(b"\n", &mut v).unwrap_err(), e1);
}

#[test]
fn fuzz_entry_points_accept_seed_files() {
    for f in [
        "stdio_banner_crlf_utf8_batchless_tail.bin",
        "sse_whatwg_rules_mixed_line_ends.txt",
    ] {
        let d = data(f);
        for k in 0..9u8 {
            let mut input = vec![k, 200, 17, 90, 3, 255, 128, 1, 60];
            input.extend_from_slice(&d);
            fuzzing::stdio_framing(&input);
            fuzzing::sse_events(&input);
        }
    }
}

proptest! {
    #[test]
    fn stdio_random_splits_same_frames(
        lines in proptest::collection::vec(
            prop_oneof![
                Just(b"{\"jsonrpc\":\"2.0\",\"id\":1}".to_vec()),
                Just("\"\u{e9}\u{1f600}\"".as_bytes().to_vec()),
                proptest::collection::vec(any::<u8>(), 0..40),
            ], 0..20),
        ends in proptest::collection::vec(prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\r\r\n"[..])], 20),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut input = Vec::new();
        for (l, e) in lines.iter().zip(ends.iter()) {
            input.extend_from_slice(l);
            input.extend_from_slice(e);
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        let mut parts = Vec::new();
        let mut prev = 0;
        for c in cuts { parts.push(&input[prev..c]); prev = c; }
        parts.push(&input[prev..]);
        prop_assert_eq!(frames(24, &parts), frames(24, &[&input]));
    }

    #[test]
    fn fuzz_stdio_framing_never_fails(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        fuzzing::stdio_framing(&data);
    }

    #[test]
    fn fuzz_sse_events_never_fails(data in proptest::collection::vec(
        prop_oneof![Just(b'\r'), Just(b'\n'), Just(b':'), Just(b' '), Just(b'd'), any::<u8>()], 0..600)) {
        fuzzing::sse_events(&data);
    }

    #[test]
    fn fuzz_sse_events_field_soup(parts in proptest::collection::vec(proptest::sample::select(vec![
        &b"data: {\"jsonrpc\":\"2.0\"}"[..], b"data", b"id: 3", b"id", b"event: e",
        b"retry: 10", b": c", b"\n", b"\r", b"\r\n", b"\xef\xbb\xbf"]), 0..60),
        k in 0u8..9, sel in proptest::collection::vec(any::<u8>(), 8)) {
        let mut d = vec![k];
        d.extend_from_slice(&sel);
        for p in parts { d.extend_from_slice(p); }
        fuzzing::sse_events(&d);
    }
}

#[test]
fn mcp_name_header_value_encoding() {
    use mcptape_transport::http::encode_header_value as enc;
    // MCP 2026-07-28 › Streamable HTTP › Value Encoding examples
    assert_eq!(enc("us-west1"), "us-west1");
    assert_eq!(enc("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
    assert_eq!(enc(" padded "), "=?base64?IHBhZGRlZCA=?=");
    assert_eq!(enc("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
    assert_eq!(
        enc("=?base64?literal?="),
        "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    );
    assert_eq!(
        enc("file:///projects/myapp/config.json"),
        "file:///projects/myapp/config.json"
    );
}

#[test]
fn era_of_revision() {
    use mcptape_transport::http::Era;
    assert_eq!(Era::of("2025-06-18"), Era::Session);
    assert_eq!(Era::of("2025-11-25"), Era::Session);
    assert_eq!(Era::of("2026-07-28"), Era::Stateless);
}

#[test]
fn sse_error_offset_after_split_crlf() {
    // Regression (libFuzzer, sse_events): invalid UTF-8 grows the data buffer
    // (each byte becomes a 3-byte U+FFFD); the limit error used to be reported
    // at the next line's offset before or after the '\n' of a "\r\n" split
    // across reads, depending on the split. Now checked where the data line is
    // processed.
    let d = data("sse_error_offset_after_split_crlf.bin");
    fuzzing::sse_events(&d);
    let mut line = b"data: ".to_vec();
    line.extend_from_slice(&[0xff; 40]);
    line.extend_from_slice(b"\r\ndata: x\r\n\r\n");
    let want = sse_all(100, &[&line]);
    let err = want.1.unwrap();
    assert_eq!((err.line, err.offset), (1, 0)); // 40 x U+FFFD = 120 bytes > 100
    for i in 0..=line.len() {
        assert_eq!(sse_all(100, &[&line[..i], &line[i..]]), want, "split {i}");
    }
}

#[test]
fn sse_utf16_bom_is_not_a_bom() {
    // UTF-16 byte order marks decode (as UTF-8) to two U+FFFD at the start of
    // the first line, whose field name "\u{fffd}\u{fffd}data" is then ignored.
    for bom in [&b"\xff\xfe"[..], b"\xfe\xff"] {
        let input = [bom, b"data:1\n\ndata:2\n\n"].concat();
        for i in 0..=input.len() {
            let (ev, _, _) = sse_all(1024, &[&input[..i], &input[i..]]);
            let data: Vec<&str> = ev.iter().map(|e| e.data.as_str()).collect();
            assert_eq!(data, ["2"], "split {i}");
        }
    }
}

#[test]
fn sse_space_after_colon_is_optional() {
    // HTML §9.2.5 example: both blocks fire an event with data "test"
    let (ev, _, _) = sse_all(1024, &[b"data:test\n\ndata: test\n\n"]);
    assert_eq!(
        ev.iter().map(|e| e.data.as_str()).collect::<Vec<_>>(),
        ["test", "test"]
    );
    // only one space is removed
    let (ev, _, _) = sse_all(1024, &[b"data:  two\n\n"]);
    assert_eq!(ev[0].data, " two");
}
