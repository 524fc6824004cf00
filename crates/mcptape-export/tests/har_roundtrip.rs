//! `har::export` then `har_import::import` on every shipped Streamable HTTP
//! recording (corpus/transcripts/*http*.jsonl): the same messages (bytes,
//! directions, order), the same records but the derived `protocol` ones, and
//! a HAR 1.2 log whose fields say what the recording said.

use std::path::{Path, PathBuf};

use mcptape_export::har::{self, Har};
use mcptape_export::har_import::{ImportOptions, import};
use mcptape_export::k6::import::rfc3339_us;
use mcptape_transcript::{Direction, Event, HttpNote, Transcript, reader};

fn http_transcripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/transcripts");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.contains("http") && n.ends_with(".jsonl")
        })
        .collect();
    v.sort();
    assert!(
        v.len() >= 4,
        "expected the 4 shipped HTTP recordings, found {v:?}"
    );
    v
}

fn read(p: &Path) -> Transcript {
    reader::read(&std::fs::read(p).unwrap()).unwrap()
}

/// The HTTP recording whose file name ends with `name`, read.
fn http_transcript(name: &str) -> Transcript {
    let p = http_transcripts()
        .into_iter()
        .find(|p| p.ends_with(name))
        .unwrap();
    read(&p)
}

fn round_trip(t: &Transcript) -> (Har, Transcript) {
    let har = har::export(t).unwrap();
    let json = serde_json::to_vec_pretty(&har).unwrap();
    let imp = import(&json, &ImportOptions::default()).unwrap();
    assert!(imp.skipped.is_empty(), "{:?}", imp.skipped);
    let back = reader::read(&imp.to_bytes().unwrap()).unwrap();
    (har, back)
}

fn messages(t: &Transcript) -> Vec<(Direction, String)> {
    t.messages().map(|(_, _, d, m)| (d, m.to_owned())).collect()
}

#[test]
fn export_then_import_gives_the_same_messages_for_every_http_recording() {
    for p in http_transcripts() {
        let t = read(&p);
        let (_, back) = round_trip(&t);
        let (want, got) = (messages(&t), messages(&back));
        assert!(want.len() >= 20, "{}: {} messages", p.display(), want.len());
        assert_eq!(got.len(), want.len(), "{}", p.display());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(g == w, "{}: message {i} differs", p.display());
        }
        assert_eq!(back.header, t.header, "{}", p.display());
    }
}

#[test]
fn export_then_import_keeps_every_record_but_the_protocol_ones_with_its_time() {
    for p in http_transcripts() {
        let t = read(&p);
        let (_, back) = round_trip(&t);
        let strip = |t: &Transcript| -> Vec<_> {
            t.records
                .iter()
                .filter(|r| !matches!(r.event, Event::Protocol { .. }))
                .cloned()
                .collect()
        };
        assert_eq!(strip(&back), strip(&t), "{}", p.display());
        // The revision is derived from the handshake answer.
        assert_eq!(
            back.protocol_version(),
            t.protocol_version(),
            "{}",
            p.display()
        );
    }
}

#[test]
fn the_har_has_one_entry_per_exchange_with_the_recorded_times_and_sse_text() {
    let t = http_transcript("everything-http.jsonl");
    let (har, _) = round_trip(&t);
    let log = &har.log;
    assert_eq!(log.version, "1.2");
    assert_eq!(log.creator.name, "mcptape");
    // everything-http.jsonl has 16 exchanges (0..=15): 14 POSTs, a GET, a DELETE.
    assert_eq!(log.entries.len(), 16);
    let methods: Vec<&str> = log
        .entries
        .iter()
        .map(|e| e.request.method.as_str())
        .collect();
    assert_eq!(methods.iter().filter(|m| **m == "POST").count(), 14);
    assert_eq!(methods[2], "GET");
    assert_eq!(methods[15], "DELETE");

    let start = rfc3339_us(&t.header.started_at).unwrap();
    let e0 = &log.entries[0];
    // Record 0 (the initialize POST) is at tUs 6149483, its first answer record at 6243862,
    // the stream's end at 6244736.
    assert_eq!(
        rfc3339_us(&e0.started_date_time).unwrap() - start,
        6_149_483
    );
    assert_eq!(e0.timings.send, 0.0);
    assert_eq!(e0.timings.wait, 94.379);
    assert_eq!(e0.timings.receive, 0.874);
    assert_eq!(e0.time, 95.253);
    assert_eq!(e0.request.url, "http://127.0.0.1:45563/mcp");
    assert_eq!(e0.request.headers_size, -1);
    let body = e0.request.post_data.as_ref().unwrap();
    assert_eq!(body.mime_type, "application/json");
    assert_eq!(
        e0.request.body_size,
        body.text.as_ref().unwrap().len() as i64
    );
    assert!(
        body.text
            .as_ref()
            .unwrap()
            .contains(r#""method":"initialize""#)
    );

    let r = &e0.response;
    assert_eq!((r.status, r.status_text.as_str()), (200, "OK"));
    assert_eq!(r.content.mime_type, "text/event-stream");
    let text = r.content.text.as_deref().unwrap();
    assert_eq!(r.content.size, text.len() as i64);
    // The priming event (id only), then the answer.
    assert!(text.starts_with("id: ff1f8d7d-d19a-4561-b642-cf1b9e9d84dc\ndata: \n\nid: 938c2c8e-1cd3-42fc-bc1b-7a62a81a3e06\nevent: message\ndata: {\"result\":{\"protocolVersion\":\"2025-11-25\""), "{text:.300}");
    assert!(text.ends_with("\n\n"));
    // Redacted headers are carried as recorded.
    assert!(
        r.headers
            .iter()
            .any(|h| h.name == "mcp-session-id" && h.value == "[redacted:1]")
    );
    let x = e0.mcptape.as_ref().unwrap();
    assert_eq!(x.events_us, [6_243_862, 6_244_436]);
    assert_eq!(x.end, Some(HttpNote::ServerClosedStream));

    // The 202 to notifications/initialized has no body.
    let e1 = &log.entries[1];
    assert_eq!(
        (e1.response.status, e1.response.status_text.as_str()),
        (202, "Accepted")
    );
    assert_eq!(e1.response.content.size, 0);
    // The GET stream: no body either way; ended when the session was deleted.
    let e2 = &log.entries[2];
    assert!(e2.request.post_data.is_none());
    assert_eq!(e2.response.content.mime_type, "text/event-stream");
    assert_eq!(e2.response.content.size, 0);

    // The JSON written is camelCase HAR.
    let v = serde_json::to_value(&har).unwrap();
    let ent = &v["log"]["entries"][0];
    for key in [
        "startedDateTime",
        "time",
        "request",
        "response",
        "cache",
        "timings",
    ] {
        assert!(ent.get(key).is_some(), "{key}");
    }
    assert!(ent["request"].get("httpVersion").is_some());
    assert!(ent["request"].get("queryString").is_some());
    assert!(ent["response"].get("redirectURL").is_some());
    assert_eq!(ent["cache"], serde_json::json!({}));
}

#[test]
fn a_json_answer_is_the_content_byte_exact() {
    let t = http_transcript("py-http-2026-07-28.jsonl");
    let (har, _) = round_trip(&t);
    let answer = t
        .messages()
        .find(|(_, _, d, _)| *d == Direction::S2c)
        .unwrap()
        .3;
    let c = &har.log.entries[0].response.content;
    assert_eq!(c.mime_type, "application/json");
    assert_eq!(c.text.as_deref(), Some(answer));
    // The last read is answered 400 (the recorded error).
    let last = har.log.entries.last().unwrap();
    assert_eq!(
        (last.response.status, last.response.status_text.as_str()),
        (400, "Bad Request")
    );
}

#[test]
fn a_stdio_recording_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/transcripts");
    let t = read(&dir.join("everything-stdio.jsonl"));
    let e = har::export(&t).unwrap_err();
    assert!(
        matches!(&e.kind, mcptape_export::ExportErrorKind::HarNotHttp { transport } if transport == "stdio"),
        "{e}"
    );
}
