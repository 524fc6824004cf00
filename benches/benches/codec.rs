//! Criterion benches of the codec paths (IDs `path/impl`, parameter = payload).
//! Run: `cargo bench -p mcptape-benches --bench codec`; CI: `-- --test`.

#![allow(missing_docs)] // criterion_group! generates an undocumented fn

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use mcptape_benches::{Payload, directory, mixed, png};
use mcptape_wire::codec::base64::{self as b64, Path};
use mcptape_wire::codec::{
    CodecPath, DecodedReadResult, Decoder, Kernel, decode_with_deserializer,
};
use std::hint::black_box;
use std::time::Duration;

fn memcpy_row(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    src: &[u8],
) {
    let mut dst = vec![0u8; src.len()];
    g.bench_with_input(
        BenchmarkId::new("memcpy/copy_from_slice", name),
        src,
        |b, s| {
            b.iter(|| {
                dst.copy_from_slice(black_box(s));
                black_box(&dst);
            })
        },
    );
}

fn tune(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, bytes: usize) {
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(if bytes > 50_000_000 {
        2500
    } else {
        1200
    }));
    g.sampling_mode(SamplingMode::Flat);
}

fn payloads() -> Vec<Payload> {
    vec![png(), directory(), mixed()]
}

/// Bench ID `path/impl` of a base64 path: the library behind it.
fn base64_bench_id(path: Path) -> String {
    let lib = if path == Path::Scalar {
        "base64"
    } else {
        "base64-simd"
    };
    format!("{}/{lib}", path.name())
}

fn benches(c: &mut Criterion) {
    let all = payloads();

    let mut g = c.benchmark_group("base64_decode");
    for p in all.iter().filter(|p| !p.base64.is_empty()) {
        tune(&mut g, p.base64.len());
        memcpy_row(&mut g, p.name, &p.base64);
        let mut out = Vec::with_capacity(p.raw.len() + 64);
        for path in Path::ALL {
            let id = base64_bench_id(path);
            g.bench_with_input(BenchmarkId::new(id, p.name), &p.base64, |b, s| {
                b.iter(|| {
                    out.clear();
                    b64::decode_append(path, black_box(s), &mut out).unwrap();
                    black_box(&out);
                })
            });
        }
        for k in Kernel::available() {
            g.bench_with_input(
                BenchmarkId::new(format!("fused/{}", k.name()), p.name),
                &p.base64,
                |b, s| {
                    b.iter(|| {
                        out.clear();
                        let n = k.decode_prefix(black_box(s), &mut out);
                        black_box((n, &out));
                    })
                },
            );
        }
    }
    g.finish();

    let mut g = c.benchmark_group("base64_encode");
    for p in all.iter().filter(|p| !p.raw.is_empty()) {
        tune(&mut g, p.raw.len());
        memcpy_row(&mut g, p.name, &p.raw);
        let mut out = String::with_capacity(p.base64.len() + 64);
        for path in Path::ALL {
            let id = base64_bench_id(path);
            g.bench_with_input(BenchmarkId::new(id, p.name), &p.raw, |b, s| {
                b.iter(|| {
                    out.clear();
                    b64::encode_append(path, black_box(s), &mut out);
                    black_box(&out);
                })
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("json_parse");
    for p in &all {
        tune(&mut g, p.response.len());
        memcpy_row(&mut g, p.name, &p.response);
        let mut out = DecodedReadResult::default();
        g.bench_with_input(
            BenchmarkId::new("scalar/serde_json", p.name),
            &p.response,
            |b, s| {
                b.iter(|| {
                    let mut de = serde_json::Deserializer::from_slice(black_box(s));
                    decode_with_deserializer(&mut de, s, Path::Scalar, &mut out, false).unwrap();
                    de.end().unwrap();
                    black_box(&out);
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("simd/sonic-rs", p.name),
            &p.response,
            |b, s| {
                b.iter(|| {
                    let mut de = sonic_rs::Deserializer::from_slice(black_box(s));
                    decode_with_deserializer(&mut de, s, Path::Simd, &mut out, false).unwrap();
                    de.end().unwrap();
                    black_box(&out);
                })
            },
        );
        // simd-json parses in place: the copy into its mutable buffer is included.
        let mut buf = p.response.clone();
        g.bench_with_input(
            BenchmarkId::new("simd/simd-json(+copy)", p.name),
            &p.response,
            |b, s| {
                b.iter(|| {
                    buf.copy_from_slice(black_box(s));
                    let mut de = simd_json::Deserializer::from_slice(&mut buf).unwrap();
                    decode_with_deserializer(&mut de, s, Path::Simd, &mut out, false).unwrap();
                    black_box(&out);
                })
            },
        );
    }
    g.finish();

    let mut g = c.benchmark_group("read_result_decode");
    for p in &all {
        tune(&mut g, p.response.len());
        memcpy_row(&mut g, p.name, &p.response);
        let rows: Vec<(String, Decoder)> = vec![
            (
                "scalar/serde_json+base64".into(),
                Decoder::new(CodecPath::Scalar),
            ),
            (
                "simd/sonic-rs+base64-simd".into(),
                Decoder::new(CodecPath::Simd),
            ),
        ]
        .into_iter()
        .chain(Kernel::available().into_iter().map(|k| {
            (
                format!("fused/{}", k.name()),
                Decoder::with_kernel(CodecPath::Fused, k),
            )
        }))
        .collect();
        for (id, mut dec) in rows {
            g.bench_with_input(BenchmarkId::new(id, p.name), &p.response, |b, s| {
                b.iter(|| {
                    let r = dec.decode(black_box(s)).unwrap();
                    black_box(r.blob_bytes());
                })
            });
        }
    }
    g.finish();
}

criterion_group!(codec, benches);
criterion_main!(codec);
