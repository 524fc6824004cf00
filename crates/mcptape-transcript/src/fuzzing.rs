//! Fuzz entry points (called by the one-line targets in `fuzz/`). Not a public API.

use crate::model::{Direction, Header, HttpMeta, HttpNote, Record, ServerSpec, Transport};
use crate::reader::{ReadOptions, read, read_with};
use crate::writer::TranscriptWriter;

/// Fuzz target `transcript_read`.
///
/// 1. [`read`] (strict and lenient) on arbitrary bytes must not panic.
/// 2. A valid transcript built from `data` and cut at a data-chosen byte must
///    read back as exactly the records whose line was complete, and report the
///    dropped bytes of a partial last line.
pub fn transcript_read(data: &[u8]) {
    let _ = read_with(data, ReadOptions::lenient());
    // One strict read (it used to run twice per input, once for nothing).
    if let Ok(t) = read(data) {
        // Whatever reads must write back and read back to the same records.
        let mut w = TranscriptWriter::new(Vec::new(), &t.header).expect("Vec write");
        for r in &t.records {
            w.write(r).expect("Vec write");
        }
        let again = read(w.get_ref()).expect("rewritten transcript reads");
        assert_eq!(again.records, t.records);
        assert_eq!(again.header, t.header);
        assert!(again.dropped.is_none());
    }
    truncation_roundtrip(data);
}

/// Builds records from `data`, writes them, cuts at a point chosen by the
/// first two bytes, and checks the reader keeps exactly the complete ones.
pub fn truncation_roundtrip(data: &[u8]) {
    let (cut_sel, body) = match data {
        [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]) as usize, rest),
        _ => return,
    };
    // The same header for every input: built once.
    static HEADER: std::sync::LazyLock<Header> = std::sync::LazyLock::new(|| {
        Header::new(
            Transport::Stdio,
            ServerSpec {
                command: Some(vec!["server".to_owned()]),
                url: None,
            },
            "2026-11-30T00:00:00Z",
        )
    });
    let mut w = TranscriptWriter::new(Vec::new(), &HEADER).expect("Vec write");
    let header_end = w.get_ref().len();
    let mut records = Vec::new();
    let mut ends = Vec::new(); // offset of each record's '\n'
    for (i, chunk) in body.split(|&b| b == 0xff).enumerate() {
        let t = i as u64 * 7;
        let (sel, rest) = match chunk {
            [s, rest @ ..] => (*s, rest),
            [] => (0, chunk),
        };
        let text = String::from_utf8_lossy(rest);
        let r = match sel % 7 {
            0 => {
                // A message: a JSON string holding the text, sometimes pretty.
                let mut json = serde_json::to_string(&text).expect("string serializes");
                if sel & 0x80 != 0 {
                    json = format!("[\n{json}\n]");
                }
                Record::message(t, Direction::C2s, &json).expect("valid JSON")
            }
            1 => Record::http_message(
                t,
                Direction::S2c,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                HttpMeta {
                    exchange: i as u64,
                    method: Some("POST".to_owned()),
                    status: Some(200),
                    headers: vec![("x-h".to_owned(), text.clone().into_owned())],
                    sse_event_id: Some(text.clone().into_owned()),
                    redacted_pointers: Vec::new(),
                },
            )
            .expect("valid JSON"),
            2 => Record::noise(t, Direction::S2c, rest),
            3 => Record::stderr(t, rest),
            4 => Record::protocol(t, text.into_owned()),
            5 => Record::http(
                t,
                if sel & 0x40 != 0 {
                    Direction::C2s
                } else {
                    Direction::S2c
                },
                HttpMeta {
                    exchange: i as u64,
                    method: Some("GET".to_owned()),
                    status: (sel & 0x20 != 0).then_some(202),
                    headers: vec![("x-h".to_owned(), text.clone().into_owned())],
                    sse_event_id: None,
                    redacted_pointers: Vec::new(),
                },
                [
                    HttpNote::NoBody,
                    HttpNote::EmptyEvent,
                    HttpNote::ServerClosedStream,
                    HttpNote::ClientClosedStream,
                    HttpNote::StreamBroken,
                    HttpNote::StreamOpenAtShutdown,
                    HttpNote::SseUnparsable,
                    HttpNote::RequestFailed,
                    HttpNote::UpstreamFailed,
                    HttpNote::ResponseFailed,
                ][usize::from(sel) % 10],
                (sel & 0x10 != 0).then(|| text.clone().into_owned()),
            ),
            _ => Record::exit(t, Some(i32::from(sel)), None),
        };
        w.write(&r).expect("Vec write");
        ends.push(w.get_ref().len() - 1);
        records.push(r);
    }
    let bytes = w.into_inner();
    let cut = cut_sel % (bytes.len() + 1);
    let got = read(&bytes[..cut]);
    if cut < header_end {
        assert!(got.is_err(), "a cut header must be an error");
        return;
    }
    let got = got.expect("a cut valid transcript reads");
    let complete = ends.iter().filter(|&&e| e < cut).count();
    assert_eq!(got.records[..complete], records[..complete]);
    let line_start = if complete == 0 {
        header_end
    } else {
        ends[complete - 1] + 1
    };
    if got.records.len() == complete + 1 {
        // Cut right before the '\n' of the next record: kept whole.
        assert_eq!(cut, ends[complete]);
        assert_eq!(got.records[complete], records[complete]);
        assert!(got.dropped.is_none());
    } else {
        assert_eq!(got.records.len(), complete);
        match &got.dropped {
            Some(d) => {
                assert_eq!(d.offset, line_start);
                assert_eq!(d.bytes, cut - line_start);
            }
            None => assert_eq!(cut, line_start),
        }
    }
}
