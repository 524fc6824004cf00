//! `mcptape bench-codec`: a one-run look at the codec paths (scalar / SIMD /
//! fused) on a generated `resources/read` response, without criterion. Prints
//! each path's median throughput in GB/s (10^9 bytes per second of input) and
//! its ratio to `memcpy` of the same buffer, plus the CPU features detected and
//! used. The criterion benches (`cargo bench -p mcptape-benches`) are the
//! careful measurement; this is the quick one.

use anyhow::{Context as _, ensure};
use mcptape_wire::codec::base64::{self as b64, Path};
use mcptape_wire::codec::{self, CodecPath, Decoder, Kernel, payload};
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `mcptape bench-codec`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Raw bytes of each blob before base64 (default: the seeds' PNG,
    /// 1,834,208 bytes → 2,445,612 base64 characters).
    #[arg(long, default_value_t = payload::SEED_PNG_BYTES)]
    pub size: usize,
    /// Blob entries in the one response (40 with `--size 3000000` is the
    /// seeds' 160 MB directory read).
    #[arg(long, default_value_t = 1)]
    pub entries: usize,
    /// Timed iterations per row (the median is reported; one warm-up run
    /// is not counted).
    #[arg(long, default_value_t = 15)]
    pub iters: usize,
}

/// One table row: group, `path/impl`, bytes per iteration, median seconds.
struct Row {
    group: &'static str,
    id: String,
    bytes: usize,
    median_s: f64,
}

fn median_secs(iters: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..iters)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// Runs `mcptape bench-codec`.
///
/// Errors: `--entries`, `--size` or `--iters` of 0; a path failing to decode
/// the generated response (a bug, reported with the codec error).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    ensure!(
        args.entries > 0 && args.size > 0 && args.iters > 0,
        "--size, --entries and --iters must be > 0"
    );
    let response = payload::blob_response(args.entries, args.size);
    let raw = payload::png_like(args.size, 0x5EED);
    let text = b64::encode(Path::Simd, &raw).into_bytes();
    let iters = args.iters;
    let mut rows = Vec::new();

    let memcpy = |group, src: &[u8]| {
        let mut dst = vec![0u8; src.len()];
        Row {
            group,
            id: "memcpy/copy_from_slice".into(),
            bytes: src.len(),
            median_s: median_secs(iters, || {
                dst.copy_from_slice(black_box(src));
                black_box(&dst);
            }),
        }
    };

    // base64_decode: one blob's base64 text.
    rows.push(memcpy("base64_decode", &text));
    let mut out = Vec::with_capacity(raw.len() + 64);
    for path in Path::ALL {
        let mut failed = None;
        let median_s = median_secs(iters, || {
            out.clear();
            if let Err(e) = b64::decode_append(path, black_box(&text), &mut out) {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            anyhow::bail!("base64 {} failed: {e}", path.name());
        }
        let lib = if path == Path::Scalar {
            "base64"
        } else {
            "base64-simd"
        };
        rows.push(Row {
            group: "base64_decode",
            id: format!("{}/{lib}", path.name()),
            bytes: text.len(),
            median_s,
        });
    }
    for k in Kernel::available() {
        let median_s = median_secs(iters, || {
            out.clear();
            black_box(k.decode_prefix(black_box(&text), &mut out));
        });
        rows.push(Row {
            group: "base64_decode",
            id: format!("fused/{}", k.name()),
            bytes: text.len(),
            median_s,
        });
    }

    // base64_encode: one blob's raw bytes.
    rows.push(memcpy("base64_encode", &raw));
    let mut s = String::with_capacity(text.len() + 64);
    for path in Path::ALL {
        let median_s = median_secs(iters, || {
            s.clear();
            b64::encode_append(path, black_box(&raw), &mut s);
            black_box(&s);
        });
        let lib = if path == Path::Scalar {
            "base64"
        } else {
            "base64-simd"
        };
        rows.push(Row {
            group: "base64_encode",
            id: format!("{}/{lib}", path.name()),
            bytes: raw.len(),
            median_s,
        });
    }

    // read_result_decode: the whole response, reused Decoder per path.
    rows.push(memcpy("read_result_decode", &response));
    let mut decoders: Vec<(String, Decoder)> = vec![
        (
            "scalar/serde_json+base64".into(),
            Decoder::new(CodecPath::Scalar),
        ),
        (
            "simd/sonic-rs+base64-simd".into(),
            Decoder::new(CodecPath::Simd),
        ),
    ];
    for k in Kernel::available() {
        decoders.push((
            format!("fused/{}", k.name()),
            Decoder::with_kernel(CodecPath::Fused, k),
        ));
    }
    for (id, mut dec) in decoders {
        let got = dec
            .decode(&response)
            .with_context(|| format!("{id} rejected the generated response"))?
            .blob_bytes();
        ensure!(got == args.size * args.entries, "{id} decoded {got} bytes");
        let median_s = median_secs(iters, || {
            let r = dec.decode(black_box(&response)).map(|r| r.blob_bytes());
            black_box(r.ok());
        });
        rows.push(Row {
            group: "read_result_decode",
            id,
            bytes: response.len(),
            median_s,
        });
    }

    print_report(&args, response.len(), &rows);
    Ok(ExitCode::SUCCESS)
}

fn print_report(args: &Args, response_len: usize, rows: &[Row]) {
    println!(
        "mcptape bench-codec: {} blob entr{} x {} bytes -> response {} bytes; median of {} iterations",
        args.entries,
        if args.entries == 1 { "y" } else { "ies" },
        args.size,
        response_len,
        args.iters
    );
    let detected: Vec<&str> = codec::cpu_features()
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n)
        .collect();
    let compiled = codec::compiled_features();
    println!("CPU features detected: {}", detected.join(" "));
    println!(
        "compiled for: {}",
        if compiled.is_empty() {
            "baseline x86-64 (portable build)".to_string()
        } else {
            compiled.join(" ")
        }
    );
    println!(
        "used: fused kernel {} (runtime detection); base64-simd runtime detection; sonic-rs compile-time ({})",
        Kernel::detect().name(),
        if compiled.contains(&"avx2") {
            "avx2"
        } else {
            "sse2 baseline"
        }
    );
    println!();
    println!(
        "| {:<18} | {:<26} | {:>11} | {:>10} | {:>8} |",
        "group", "path/impl", "bytes", "GB/s", "x memcpy"
    );
    println!(
        "|{:-<20}|{:-<28}|{:->13}|{:->12}|{:->10}|",
        "", "", "", "", ""
    );
    let mut memcpy_gbs = 0.0;
    for r in rows {
        let gbs = r.bytes as f64 / r.median_s / 1e9;
        if r.id.starts_with("memcpy/") {
            memcpy_gbs = gbs;
        }
        println!(
            "| {:<18} | {:<26} | {:>11} | {:>10.2} | {:>8.2} |",
            r.group,
            r.id,
            r.bytes,
            gbs,
            gbs / memcpy_gbs
        );
    }
}
