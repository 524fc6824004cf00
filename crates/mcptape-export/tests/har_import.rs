//! `har_import::import` on HARs as browsers and proxies write them (no
//! `_mcptape` fields): which entries are MCP, SSE and base64 content, times
//! from `startedDateTime` + `timings`, redaction, and every error with its
//! entry index; the entry limit at [`MAX_ENTRIES`] and one past it.

use mcptape_export::ExportErrorKind;
use mcptape_export::har::{Content, Entry, Har};
use mcptape_export::har_import::{ImportOptions, MAX_ENTRIES, SkipReason, import, import_har};
use mcptape_transcript::{Direction, Event, HttpNote, reader};
use serde_json::{Value, json};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;
const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#;
const LIST_OK: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"resources":[]}}"#;
const NOTE: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;

fn entry(
    method: &str,
    url: &str,
    started: &str,
    body: Option<&str>,
    status: u16,
    ct: &str,
    text: &str,
) -> Value {
    let mut req = json!({
        "method": method, "url": url, "httpVersion": "http/1.1", "cookies": [],
        "headers": [{"name": "Content-Type", "value": "application/json"},
                    {"name": "Authorization", "value": "Bearer s3cret"},
                    {"name": "Cookie", "value": "sid=abc"}],
        "queryString": [], "headersSize": -1, "bodySize": body.map_or(0, str::len)
    });
    if let Some(b) = body {
        req["postData"] = json!({"mimeType": "application/json", "text": b});
    }
    json!({
        "startedDateTime": started, "time": 10.5,
        "request": req,
        "response": {"status": status, "statusText": "", "httpVersion": "http/1.1", "cookies": [],
            "headers": [{"name": "content-type", "value": ct}, {"name": "mcp-session-id", "value": "abc-123"}],
            "content": {"size": text.len(), "mimeType": ct, "text": text},
            "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": 99},
        "cache": {}, "timings": {"blocked": 0.5, "dns": -1, "connect": -1, "ssl": -1, "send": 0.25, "wait": 4.25, "receive": 5.5},
        "_initiator": {"type": "script"}
    })
}

/// The page the browser loaded first: `GET http://127.0.0.1:9000/` at
/// 10:00:00.000, 200 `text/html` with `text` as its body.
fn page_entry(text: &str) -> Value {
    entry(
        "GET",
        "http://127.0.0.1:9000/",
        "2026-12-01T10:00:00.000Z",
        None,
        200,
        "text/html",
        text,
    )
}

/// The `initialize` POST to [`MCP`] at 10:00:00.100, answered 200 with `ct`
/// and `text`.
fn init_entry(ct: &str, text: &str) -> Value {
    entry(
        "POST",
        MCP,
        "2026-12-01T10:00:00.100Z",
        Some(INIT),
        200,
        ct,
        text,
    )
}

fn har(entries: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
        "pages": [{"startedDateTime": "2026-12-01T10:00:00.000Z", "id": "page_1", "title": "t", "pageTimings": {}}],
        "entries": entries}}))
    .unwrap()
}

const MCP: &str = "http://127.0.0.1:9000/mcp";

fn browser_session() -> Vec<Value> {
    let sse = format!(
        "event: message\nid: 7\ndata: {NOTE}\n\n: keep-alive comment\n\nid: 8\ndata: {LIST_OK}\n\n"
    );
    vec![
        page_entry("<html></html>"),
        entry(
            "OPTIONS",
            MCP,
            "2026-12-01T10:00:00.050Z",
            None,
            204,
            "text/plain",
            "",
        ),
        init_entry("application/json", INIT_OK),
        entry(
            "POST",
            MCP,
            "2026-12-01T10:00:00.200Z",
            Some(LIST),
            200,
            "text/event-stream",
            &sse,
        ),
        entry(
            "POST",
            "http://127.0.0.1:9001/other",
            "2026-12-01T10:00:00.250Z",
            Some(LIST),
            200,
            "application/json",
            LIST_OK,
        ),
        entry(
            "GET",
            MCP,
            "2026-12-01T10:00:00.300Z",
            None,
            405,
            "text/plain",
            "",
        ),
        entry(
            "GET",
            "http://127.0.0.1:9000/favicon.ico",
            "2026-12-01T10:00:00.400Z",
            None,
            404,
            "text/plain",
            "",
        ),
    ]
}

#[test]
fn a_browser_har_imports_its_mcp_entries_and_skips_the_rest() {
    let imp = import(&har(browser_session()), &ImportOptions::default()).unwrap();
    assert_eq!((imp.entries, imp.imported), (7, 3));
    let skipped: Vec<(usize, SkipReason)> = imp
        .skipped
        .iter()
        .map(|s| (s.entry, s.reason.clone()))
        .collect();
    assert_eq!(
        skipped,
        [
            (0, SkipReason::NotMcp),
            (1, SkipReason::Preflight),
            (4, SkipReason::OtherUrl),
            (6, SkipReason::NotMcp)
        ]
    );
    assert_eq!(imp.header.server.url.as_deref(), Some(MCP));
    assert_eq!(imp.header.started_at, "2026-12-01T10:00:00.100000Z");

    let t = reader::read(&imp.to_bytes().unwrap()).unwrap();
    let msgs: Vec<(u64, Direction, &str)> = t.messages().map(|(_, us, d, m)| (us, d, m)).collect();
    // Request at startedDateTime; the answer after blocked + send + wait (0.5 + 0.25 + 4.25 ms);
    // two SSE events spread over receive (5.5 ms).
    assert_eq!(
        msgs,
        [
            (0, Direction::C2s, INIT),
            (5_000, Direction::S2c, INIT_OK),
            (100_000, Direction::C2s, LIST),
            (105_000, Direction::S2c, NOTE),
            (110_500, Direction::S2c, LIST_OK),
        ]
    );
    // The protocol revision from the initialize result, right after it.
    assert!(matches!(&t.records[2].event, Event::Protocol { version } if version == "2025-11-25"));
    assert_eq!(t.protocol_version(), Some("2025-11-25"));
    // Exchange numbers count MCP entries; SSE ids and the stream end are kept.
    let Event::Message { http: Some(h), .. } = &t.records[4].event else {
        panic!("{:?}", t.records[4])
    };
    assert_eq!(
        (h.exchange, h.status, h.sse_event_id.as_deref()),
        (1, Some(200), Some("7"))
    );
    let Event::Message { http: Some(h), .. } = &t.records[5].event else {
        panic!()
    };
    assert_eq!(
        (h.status, h.sse_event_id.as_deref(), h.headers.len()),
        (None, Some("8"), 0)
    );
    assert!(matches!(
        &t.records[6].event,
        Event::Http {
            note: HttpNote::ServerClosedStream,
            ..
        }
    ));
    // The GET answered 405 without a body: a noBody pair in exchange 2.
    let gets: Vec<_> = t
        .records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Http {
                dir,
                http,
                note: HttpNote::NoBody,
                ..
            } => Some((*dir, http.exchange, http.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        gets,
        [(Direction::C2s, 2, None), (Direction::S2c, 2, Some(405))]
    );
}

#[test]
fn imported_headers_are_redacted_as_the_recorder_does_unless_told_not_to() {
    let bytes = har(browser_session());
    let t = reader::read(
        &import(&bytes, &ImportOptions::default())
            .unwrap()
            .to_bytes()
            .unwrap(),
    )
    .unwrap();
    let Event::Message { http: Some(h), .. } = &t.records[0].event else {
        panic!()
    };
    let get = |n: &str| {
        h.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("authorization"), Some("Bearer [redacted]"));
    assert_eq!(get("cookie"), Some("[redacted]"));
    assert_eq!(get("content-type"), Some("application/json"));
    let Event::Message { http: Some(h), .. } = &t.records[1].event else {
        panic!()
    };
    assert!(
        h.headers
            .contains(&("mcp-session-id".into(), "[redacted:1]".into()))
    );
    assert!(t.header.redaction.as_ref().unwrap().enabled);

    let kept = import(&bytes, &ImportOptions { redact: false }).unwrap();
    let Event::Message { http: Some(h), .. } = &kept.records[0].event else {
        panic!()
    };
    assert!(
        h.headers
            .contains(&("Authorization".into(), "Bearer s3cret".into()))
    );
    assert!(!kept.header.redaction.as_ref().unwrap().enabled);
}

#[test]
fn base64_content_is_decoded_and_bad_base64_names_the_entry() {
    let mut e = init_entry("application/json", "");
    use base64::Engine as _;
    e["response"]["content"]["text"] =
        json!(base64::engine::general_purpose::STANDARD.encode(INIT_OK));
    e["response"]["content"]["encoding"] = json!("base64");
    let imp = import(&har(vec![e.clone()]), &ImportOptions::default()).unwrap();
    assert_eq!(imp.records[1].msg(), Some(INIT_OK));

    e["response"]["content"]["text"] = json!("not base64!");
    let page = page_entry("x");
    let err = import(&har(vec![page, e]), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(err.kind, ExportErrorKind::HarBadContent { entry: 1, .. }),
        "{err}"
    );
}

#[test]
fn a_bad_started_date_time_names_the_entry() {
    let mut s = browser_session();
    s[3]["startedDateTime"] = json!("yesterday");
    let err = import(&har(s), &ImportOptions::default()).unwrap_err();
    assert_eq!(
        err.kind,
        ExportErrorKind::HarBadTime {
            entry: 3,
            what: "startedDateTime",
            value: "yesterday".into()
        }
    );
    let mut s = browser_session();
    s[2]["timings"]["wait"] = json!(-5.0);
    let err = import(&har(s), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(
            err.kind,
            ExportErrorKind::HarBadTime {
                entry: 2,
                what: "timings.wait",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn not_a_har_wrong_version_and_no_mcp_entry_are_errors() {
    let err = import(b"{\"entries\":[]}", &ImportOptions::default()).unwrap_err();
    assert!(matches!(err.kind, ExportErrorKind::NotHar(_)), "{err}");
    let mut v: Value = serde_json::from_slice(&har(browser_session())).unwrap();
    v["log"]["version"] = json!("2.0");
    let err = import(&serde_json::to_vec(&v).unwrap(), &ImportOptions::default()).unwrap_err();
    assert_eq!(err.kind, ExportErrorKind::HarVersion("2.0".into()));
    let page = page_entry("x");
    let err = import(&har(vec![page]), &ImportOptions::default()).unwrap_err();
    assert_eq!(err.kind, ExportErrorKind::HarNoMcp { entries: 1 });
}

#[test]
fn a_response_the_browser_did_not_keep_is_a_warning_not_a_guess() {
    let mut s = browser_session();
    s[2]["response"]["content"] = json!({"size": 120, "mimeType": "application/json"});
    let imp = import(&har(s), &ImportOptions::default()).unwrap();
    assert_eq!(imp.warnings.len(), 1);
    assert!(
        imp.warnings[0].starts_with("entry 2: the HAR has no text for its 120 response bytes"),
        "{:?}",
        imp.warnings
    );
    // The request is there; its answer is a noBody record with the status.
    assert_eq!(imp.records[0].msg(), Some(INIT));
    assert!(
        matches!(&imp.records[1].event, Event::Http { note: HttpNote::NoBody, http, .. } if http.status == Some(200))
    );
}

fn many(n: usize) -> Har {
    let mut v: Value = serde_json::from_slice(&har(browser_session())).unwrap();
    let mcp: Entry = serde_json::from_value(v["log"]["entries"][2].clone()).unwrap();
    let mut page: Entry = serde_json::from_value(v["log"]["entries"][6].clone()).unwrap();
    page.response.content = Content {
        size: 0,
        mime_type: String::new(),
        text: None,
        encoding: None,
    };
    v["log"]["entries"] = json!([]);
    let mut h: Har = serde_json::from_value(v).unwrap();
    h.log.entries = vec![page; n - 1];
    h.log.entries.push(mcp);
    h
}

#[test]
fn max_entries_is_accepted_and_one_more_is_refused() {
    let at = import_har(&many(MAX_ENTRIES), &ImportOptions::default()).unwrap();
    assert_eq!(
        (at.entries, at.imported, at.skipped.len()),
        (MAX_ENTRIES, 1, MAX_ENTRIES - 1)
    );
    let err = import_har(&many(MAX_ENTRIES + 1), &ImportOptions::default()).unwrap_err();
    assert_eq!(
        err.kind,
        ExportErrorKind::HarTooManyEntries {
            count: MAX_ENTRIES + 1,
            max: MAX_ENTRIES
        }
    );
}

/// `INIT` and an answer with non-ASCII chars, the answer's bytes decoded as
/// windows-1252 (as Chromium's HAR through Playwright's recordHar has a
/// `text/event-stream` body without `charset`: `–` E2 80 93 is `â€“`), with
/// `Content-Length` `len`.
fn latin1_session(len: Option<usize>) -> (String, Vec<u8>) {
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"Server – 2","version":"1"}}}"#;
    let sse = format!("event: message\ndata: {answer}\n\n");
    let latin1: String = sse
        .bytes()
        .map(|b| match b {
            0x80 => '\u{20AC}',
            0x93 => '\u{201C}',
            b => char::from(b),
        })
        .collect();
    let mut e = init_entry("text/event-stream", &latin1);
    if let Some(n) = len {
        e["response"]["headers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "Content-Length", "value": n.to_string()}));
    }
    (answer.to_owned(), har(vec![e]))
}

#[test]
fn regression_playwright_latin1_decoded_event_stream_is_reread_as_utf8() {
    let (answer, bytes) = latin1_session(Some(answer_sse_len()));
    let imp = import(&bytes, &ImportOptions::default()).unwrap();
    assert_eq!(imp.warnings.len(), 1, "{:?}", imp.warnings);
    assert!(imp.warnings[0].contains("Latin-1"), "{:?}", imp.warnings);
    let t = reader::read(&imp.to_bytes().unwrap()).unwrap();
    let s2c: Vec<&str> = t
        .messages()
        .filter(|m| m.2 == Direction::S2c)
        .map(|m| m.3)
        .collect();
    assert_eq!(s2c, [answer.as_str()]);
}

#[test]
fn latin1_looking_text_without_a_matching_content_length_is_kept_as_the_har_has_it() {
    for len in [None, Some(answer_sse_len() + 1)] {
        let (answer, bytes) = latin1_session(len);
        let imp = import(&bytes, &ImportOptions::default()).unwrap();
        assert!(imp.warnings.is_empty(), "{len:?}: {:?}", imp.warnings);
        let t = reader::read(&imp.to_bytes().unwrap()).unwrap();
        let s2c: Vec<String> = t
            .messages()
            .filter(|m| m.2 == Direction::S2c)
            .map(|m| m.3.to_owned())
            .collect();
        assert_eq!(s2c.len(), 1);
        assert_ne!(s2c[0], answer, "{len:?}");
        assert!(
            s2c[0].contains("Server \u{e2}\u{20AC}\u{201C} 2"),
            "{len:?}: {}",
            s2c[0]
        );
    }
}

/// Bytes of [`latin1_session`]'s event stream.
fn answer_sse_len() -> usize {
    let (answer, _) = latin1_session(None);
    format!("event: message\ndata: {answer}\n\n").len()
}

/// `import_file` counts a HAR's entries as a stream before reading it: one
/// past [`MAX_ENTRIES`] is refused with the whole count; at the limit the
/// count lets it through to the parse (whose import at the limit is
/// `max_entries_is_accepted_and_one_more_is_refused`).
#[test]
fn har_file_over_the_entry_limit_is_refused_from_a_streamed_count() {
    let tmp = tempfile::tempdir().unwrap();
    for n in [MAX_ENTRIES, MAX_ENTRIES + 1] {
        let path = tmp.path().join(format!("{n}.har"));
        let bytes = serde_json::to_vec(&many(n)).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(
            mcptape_export::har_import::count_entries(std::io::BufReader::new(&bytes[..])).unwrap(),
            Some(n)
        );
        if n > MAX_ENTRIES {
            let err = mcptape_export::har_import::import_file(&path, &ImportOptions::default())
                .unwrap_err();
            assert_eq!(
                err.kind,
                ExportErrorKind::HarTooManyEntries {
                    count: MAX_ENTRIES + 1,
                    max: MAX_ENTRIES
                }
            );
        }
    }
}
