//! Criterion bench of the one JSON-RPC reader, `mcptape_wire::envelope::scan_envelope`
//! (one strict pass: kind, id, member ranges; string bodies skipped with `memchr`), beside
//! `serde_json::Value` and `sonic_rs::Value`, and its typed view (`envelope::parse_message`:
//! the scan, then `params`/`result` decoded as `serde_json::Value` from their ranges), on the
//! request and reply shapes of the corpus (issue 22):
//!
//! * `request`: a `resources/read` request of `corpus/transcripts/everything-stdio.jsonl`
//!   (117 bytes);
//! * `text_reply`: a document read's text reply from the same recording (1,752 bytes);
//! * `blob_reply`: the seeds' 2.4 MB PNG as one blob reply
//!   (`mcptape_wire::codec::payload::seed_png_response`, 2,445,798 bytes).
//!
//! IDs `envelope/READER/SHAPE_BYTESB`; throughput in bytes of the message.
//! Run: `cargo bench -p mcptape-benches --bench envelope`; CI: `-- --test`.

#![allow(missing_docs)] // criterion_group! generates an undocumented fn

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use std::hint::black_box;
use std::time::Duration;

/// The `msg` of record `line` (1-based) of the shipped stdio recording.
fn corpus_msg(line: usize) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/transcripts/everything-stdio.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("the shipped recording");
    let record: serde_json::Value =
        serde_json::from_str(text.lines().nth(line - 1).expect("line")).expect("a record");
    serde_json::to_vec(&record["msg"]).expect("msg")
}

fn shapes() -> Vec<(&'static str, Vec<u8>)> {
    let request = corpus_msg(20);
    let text_reply = corpus_msg(21);
    assert!(request.windows(13).any(|w| w == b"resources/rea"));
    assert!(text_reply.windows(8).any(|w| w == b"\"text\":\""));
    vec![
        ("request", request),
        ("text_reply", text_reply),
        (
            "blob_reply",
            mcptape_wire::codec::payload::seed_png_response(),
        ),
    ]
}

fn envelope(c: &mut Criterion) {
    let mut g = c.benchmark_group("envelope");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1200));
    g.sampling_mode(SamplingMode::Flat);
    for (shape, msg) in shapes() {
        let name = format!("{shape}_{}B", msg.len());
        assert!(
            mcptape_wire::envelope::scan_envelope(&msg).is_ok(),
            "{name}"
        );
        g.throughput(Throughput::Bytes(msg.len() as u64));
        g.bench_with_input(BenchmarkId::new("scan_envelope", &name), &msg, |b, m| {
            b.iter(|| black_box(mcptape_wire::envelope::scan_envelope(black_box(m))))
        });
        g.bench_with_input(BenchmarkId::new("serde_json_value", &name), &msg, |b, m| {
            b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(black_box(m))))
        });
        g.bench_with_input(BenchmarkId::new("sonic_rs_value", &name), &msg, |b, m| {
            b.iter(|| black_box(sonic_rs::from_slice::<sonic_rs::Value>(black_box(m))))
        });
        g.bench_with_input(BenchmarkId::new("typed_view", &name), &msg, |b, m| {
            b.iter(|| black_box(mcptape_wire::envelope::parse_message(black_box(m))))
        });
    }
    g.finish();
}

criterion_group!(benches, envelope);
criterion_main!(benches);
