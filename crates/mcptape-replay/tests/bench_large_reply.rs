//! Issue 12, "large replies at memory speed": `serve` and `bench` in-process over a duplex pipe
//! on a transcript whose one read answers ~20 MB of base64 (the seed's directory read, scaled
//! down). No timing is asserted: only that every read is answered, none times out, and
//! `--validate` tells a corrupted blob apart.

use crate::common;

use std::sync::Arc;

use common::{closed_cfg, duplex_client, instant_server, recorded_reply};
use mcptape_replay::bench;
use mcptape_replay::serve::Server;
use mcptape_replay::tape::Tape;
use mcptape_report::run::{BenchResult, INVALID_CONTENTS_CLASS};
use tokio::time::Duration;

/// A session transcript (initialize, initialized, one `resources/read`) whose reply holds
/// `entries` blobs of `bytes` bytes each (base64: 4/3 of that), the last one with `corrupt`
/// put in the middle of its base64 text when given. The reply's `result` holds an `"id"`
/// member of its own, and a text entry quoting `"id":`.
fn transcript(entries: usize, bytes: usize, corrupt: Option<&str>) -> Vec<u8> {
    let mut t = String::new();
    t.push_str(r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#);
    t.push('\n');
    t.push_str(r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}}"#);
    t.push('\n');
    t.push_str(r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"t","version":"1"}}}}"#);
    t.push('\n');
    t.push_str(r#"{"tUs":3,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/initialized"}}"#);
    t.push('\n');
    t.push_str(r#"{"tUs":4,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///mockups/"}}}"#);
    t.push('\n');
    t.push_str(r#"{"tUs":5,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"id":"not-the-id","contents":[{"uri":"file:///mockups/readme.txt","mimeType":"text/plain","text":"\"id\": 99"}"#);
    // base64 of `bytes` bytes: "QUJD" is "ABC".
    let mut blob = "QUJD".repeat(bytes / 3);
    for i in 0..entries {
        if i + 1 == entries
            && let Some(c) = corrupt
        {
            let mid = blob.len() / 2;
            blob.replace_range(mid..mid + c.len(), c);
        }
        t.push_str(&format!(
            r#",{{"uri":"file:///mockups/m{i}.png","mimeType":"image/png","blob":"{blob}"}}"#
        ));
    }
    t.push_str("]}}}\n");
    t.into_bytes()
}

fn tape(bytes: &[u8]) -> Tape {
    let t = mcptape_transcript::reader::read(bytes).unwrap();
    Tape::from_transcript(&t).unwrap()
}

async fn run(srv: &Arc<Server>, reads: u64, turns: u64, validate: bool) -> BenchResult {
    let mut c = closed_cfg(reads, turns, 2, 120_000_000);
    c.deadline_us = 120_000_000;
    c.validate = validate;
    let client = duplex_client(srv, Duration::from_secs(30)).await;
    bench::run(client, srv.tape(), &c, &|_| {}).await.unwrap()
}

/// Regression (issue 12): the client framed replies at 64 MiB and parsed each fully; the
/// directory read timed out. A ~20 MB reply (5 entries × 4 MB of base64) is answered every
/// time, with and without `--validate`, with no timeout, error, or unknown id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_20_mb_reply_is_answered_every_time_with_no_timeout() {
    let bytes = transcript(5, 3_000_000, None);
    assert!(bytes.len() > 20_000_000, "{}", bytes.len());
    let srv = instant_server(tape(&bytes));
    for validate in [false, true] {
        let r = run(&srv, 3, 1, validate).await;
        let (s, t) = (&r.single_phase, &r.turn_phase);
        assert_eq!((s.sent, s.answered_ok, s.timed_out), (3, 3, 0), "{s:?}");
        assert_eq!((t.sent, t.answered_ok, t.timed_out), (2, 2, 0), "{t:?}");
        assert_eq!(r.single.len(), 3);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(r.unexpected, (0, 0));
        assert_eq!(r.abandoned, 0);
        assert!(!r.target_closed);
        // Every result validated once (3 single + 2 turn reads), nothing without the flag.
        assert_eq!(r.validation.len(), if validate { 5 } else { 0 });
    }
}

/// `--validate` counts a blob the fused decoder rejects (a `*` inside the base64: still valid
/// JSON, so the envelope is fine and the read is answered) as its own error class, with its
/// latency; without the flag the same reads are answered ok.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_counts_a_corrupted_blob_as_its_own_error_class() {
    let bytes = transcript(2, 3_000_000, Some("Q*JD"));
    let srv = instant_server(tape(&bytes));
    let plain = run(&srv, 2, 1, false).await;
    assert_eq!(plain.single_phase.answered_ok, 2);
    assert!(plain.errors.is_empty(), "{:?}", plain.errors);

    let r = run(&srv, 2, 1, true).await;
    let (s, t) = (&r.single_phase, &r.turn_phase);
    assert_eq!((s.sent, s.answered_ok, s.timed_out), (2, 0, 0), "{s:?}");
    assert_eq!(s.error_answers.get(INVALID_CONTENTS_CLASS), Some(&2));
    assert_eq!(t.error_answers.get(INVALID_CONTENTS_CLASS), Some(&2));
    assert_eq!(r.errors.get(INVALID_CONTENTS_CLASS), Some(&4));
    assert_eq!(r.single_by_class[INVALID_CONTENTS_CLASS].len(), 2);
    assert_eq!(r.single.len(), 2, "the rejected reads keep their latency");
    assert_eq!(r.validation.len(), 4);
    let report = r.report(
        &{
            let mut c = closed_cfg(2, 1, 2, 120_000_000);
            c.validate = true;
            c
        },
        "t",
        "embedded",
        None,
        1,
        None,
    );
    assert_eq!(report.validation.map(|q| q.count), Some(4));
    assert!(
        report.table().contains("contents validation"),
        "{}",
        report.table()
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["validation"]["count"], 4);
}

/// As `mcptape bench` runs it: the client plays the recorded client from the served tape (the
/// replies ranges of the file's bytes, [`Tape::served`]) with its receive buffer sized from the
/// recorded read and faulted in first ([`bench::warm_receive_buffer`]: the read's recorded
/// bytes + 1 for the line end), against a server on the full tape; every read is answered ok,
/// validated byte-exact contents included. A tape whose reads are small gets no buffer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_tape_with_a_warm_buffer_reads_the_20_mb_reply_every_time() {
    use mcptape_replay::tape::TapeBytes;
    let bytes = transcript(5, 3_000_000, None);
    let srv = instant_server(tape(&bytes));
    let light = Tape::served(&Arc::new(TapeBytes::from(bytes.clone())))
        .unwrap()
        .tape;
    let recorded = recorded_reply(srv.tape(), "resources/read").len();
    assert!(recorded > 20_000_000, "{recorded}");
    let client = duplex_client(&srv, Duration::from_secs(30)).await;
    assert_eq!(bench::warm_receive_buffer(&client, &light), recorded + 1);
    let mut c = closed_cfg(3, 1, 2, 120_000_000);
    c.deadline_us = 120_000_000;
    c.validate = true;
    let r = bench::run(client.clone(), &light, &c, &|_| {})
        .await
        .unwrap();
    let (s, t) = (&r.single_phase, &r.turn_phase);
    assert_eq!((s.sent, s.answered_ok, s.timed_out), (3, 3, 0), "{s:?}");
    assert_eq!((t.sent, t.answered_ok, t.timed_out), (2, 2, 0), "{t:?}");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.recorded_reads, 1);
    assert_eq!(r.validation.len(), 5);

    let small = transcript(1, 3_000, None);
    let small_srv = instant_server(tape(&small));
    let small_client = duplex_client(&small_srv, Duration::from_secs(30)).await;
    assert_eq!(
        bench::warm_receive_buffer(&small_client, small_srv.tape()),
        0
    );
}
