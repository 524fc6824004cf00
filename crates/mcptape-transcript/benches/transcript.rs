//! Throughput (bytes/s) of writing and reading transcripts: 10,000 small
//! message records, and one record holding a 16 MiB message.

// criterion_group! generates an undocumented pub fn.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcptape_transcript::{
    Direction, Header, Record, ServerSpec, TranscriptWriter, Transport, read,
};

fn header() -> Header {
    Header::new(
        Transport::Stdio,
        ServerSpec::default(),
        "2026-11-30T00:00:00Z",
    )
}

fn write(records: &[Record]) -> Vec<u8> {
    let mut w = TranscriptWriter::new(Vec::new(), &header()).expect("Vec write");
    for r in records {
        w.write(r).expect("Vec write");
    }
    w.into_inner()
}

fn bench(c: &mut Criterion) {
    let small: Vec<Record> = (0..10_000u64)
        .map(|i| {
            let m = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"resources/read\",\"params\":{{\"uri\":\"file:///docs/{i}.md\"}}}}");
            Record::message(i * 10, Direction::C2s, &m).expect("valid JSON")
        })
        .collect();
    let big_msg = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"contents\":[{{\"uri\":\"file:///big\",\"blob\":\"{}\"}}]}}}}",
        "A".repeat(16 * 1024 * 1024)
    );
    let big = vec![Record::message(1, Direction::S2c, &big_msg).expect("valid JSON")];

    let mut g = c.benchmark_group("transcript");
    g.sample_size(10);
    for (name, recs) in [("10000_records", &small), ("one_16MiB_record", &big)] {
        let bytes = write(recs);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(format!("write_{name}"), |b| b.iter(|| write(recs).len()));
        g.bench_function(format!("read_{name}"), |b| {
            b.iter(|| read(&bytes).expect("valid transcript").records.len())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
