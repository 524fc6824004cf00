//! Throughput (bytes/s) of the sans-IO parsers: stdio framing (one 16 MiB line
//! in 64 KiB reads; 10,000 small messages in 64 KiB reads) and SSE parsing
//! (10,000 events).

// criterion_group! generates an undocumented pub fn.
#![allow(missing_docs)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcptape_transport::sse::SseParser;
use mcptape_transport::stdio::{FrameRef, LineFramer, MAX_LINE_BYTES};

const READ_BYTES: usize = 64 * 1024;

fn big_line() -> Vec<u8> {
    let payload = "A".repeat(16 * 1024 * 1024);
    format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"contents\":[{{\"uri\":\"file:///big\",\"blob\":\"{payload}\"}}]}}}}\n").into_bytes()
}

fn small_lines() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..10_000 {
        v.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"resources/read\",\"params\":{{\"uri\":\"file:///docs/{i}.md\"}}}}\n")
                .as_bytes(),
        );
    }
    v
}

fn frame(input: &[u8]) -> usize {
    let mut f = LineFramer::new(MAX_LINE_BYTES);
    let mut n = 0;
    for c in input.chunks(READ_BYTES) {
        f.push_with(c, |fr| {
            if let FrameRef::Message(m) = fr {
                n += m.len();
            }
        });
    }
    n
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("stdio_framing");
    g.sample_size(10);
    let big = big_line();
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("one_16MiB_line", |b| b.iter(|| frame(&big)));
    let small = small_lines();
    g.throughput(Throughput::Bytes(small.len() as u64));
    g.bench_function("10000_messages", |b| b.iter(|| frame(&small)));
    g.finish();

    let mut g = c.benchmark_group("sse_events");
    g.sample_size(10);
    let mut stream = Vec::new();
    for i in 0..10_000 {
        stream.extend_from_slice(
            format!("event: message\nid: {i}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n\n").as_bytes(),
        );
    }
    g.throughput(Throughput::Bytes(stream.len() as u64));
    g.bench_function("10000_events", |b| {
        b.iter(|| {
            let mut p = SseParser::default();
            let mut ev = Vec::with_capacity(10_000);
            for c in stream.chunks(READ_BYTES) {
                p.push(c, &mut ev).expect("within limits");
            }
            ev.len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
