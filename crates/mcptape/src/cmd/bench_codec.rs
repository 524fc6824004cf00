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
    /// Timed iterations per row; the rows of a group run round-robin (each
    /// once per iteration) so machine load hits them alike. The median is
    /// reported; one warm-up round is not counted.
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

/// A row to time: its label, bytes per call, and the work (owning its output).
type Job<'a> = (&'static str, String, usize, Box<dyn FnMut() + 'a>);

/// Times every job round-robin — iteration `i` runs each job once, in turn —
/// so load from other processes hits all rows alike; one warm-up round is not
/// counted. Returns each job's median.
fn measure(iters: usize, jobs: Vec<Job<'_>>) -> Vec<Row> {
    let mut jobs = jobs;
    let mut times = vec![Vec::with_capacity(iters); jobs.len()];
    for round in 0..=iters {
        for (j, job) in jobs.iter_mut().enumerate() {
            let s = Instant::now();
            (job.3)();
            if round > 0 {
                times[j].push(s.elapsed().as_secs_f64());
            }
        }
    }
    jobs.into_iter()
        .zip(times)
        .map(|((group, id, bytes, _), mut t)| {
            t.sort_by(f64::total_cmp);
            Row {
                group,
                id,
                bytes,
                median_s: t[t.len() / 2],
            }
        })
        .collect()
}

fn memcpy_job<'a>(group: &'static str, src: &'a [u8]) -> Job<'a> {
    let mut dst = vec![0u8; src.len()];
    (
        group,
        "memcpy/copy_from_slice".into(),
        src.len(),
        Box::new(move || {
            dst.copy_from_slice(black_box(src));
            black_box(&dst);
        }),
    )
}

fn lib_name(path: Path) -> &'static str {
    if path == Path::Scalar {
        "base64"
    } else {
        "base64-simd"
    }
}

/// Runs `mcptape bench-codec`.
///
/// Errors: `--entries`, `--size` or `--iters` of 0; a path failing to decode
/// the generated response or blob (a bug, reported with the codec error).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    ensure!(
        args.entries > 0 && args.size > 0 && args.iters > 0,
        "--size, --entries and --iters must be > 0"
    );
    let response = payload::blob_response(args.entries, args.size);
    let raw = payload::png_like(args.size, 0x5EED);
    let text = b64::encode(Path::Simd, &raw).into_bytes();
    for path in Path::ALL {
        let back = b64::decode(path, &text).with_context(|| format!("base64 {path:?}"))?;
        ensure!(back == raw, "base64 {path:?} round trip differs");
    }

    // base64_decode: one blob's base64 text.
    let mut jobs: Vec<Job<'_>> = vec![memcpy_job("base64_decode", &text)];
    for path in Path::ALL {
        let mut out = Vec::with_capacity(raw.len() + 64);
        let text = &text;
        jobs.push((
            "base64_decode",
            format!("{}/{}", path.name(), lib_name(path)),
            text.len(),
            Box::new(move || {
                out.clear();
                black_box(b64::decode_append(path, black_box(text), &mut out).is_ok());
            }),
        ));
    }
    for k in Kernel::available() {
        let mut out = Vec::with_capacity(raw.len() + 64);
        let text = &text;
        jobs.push((
            "base64_decode",
            format!("fused/{}", k.name()),
            text.len(),
            Box::new(move || {
                out.clear();
                black_box(k.decode_prefix(black_box(text), &mut out));
            }),
        ));
    }
    let mut rows = measure(args.iters, jobs);

    // base64_encode: one blob's raw bytes.
    let mut jobs: Vec<Job<'_>> = vec![memcpy_job("base64_encode", &raw)];
    for path in Path::ALL {
        let mut s = String::with_capacity(text.len() + 64);
        let raw = &raw;
        jobs.push((
            "base64_encode",
            format!("{}/{}", path.name(), lib_name(path)),
            raw.len(),
            Box::new(move || {
                s.clear();
                b64::encode_append(path, black_box(raw), &mut s);
                black_box(&s);
            }),
        ));
    }
    rows.extend(measure(args.iters, jobs));

    // read_result_decode: the whole response, one reused Decoder per path.
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
    let mut jobs: Vec<Job<'_>> = vec![memcpy_job("read_result_decode", &response)];
    for (id, mut dec) in decoders {
        let got = dec
            .decode(&response)
            .with_context(|| format!("{id} rejected the generated response"))?
            .blob_bytes();
        ensure!(got == args.size * args.entries, "{id} decoded {got} bytes");
        let response = &response;
        jobs.push((
            "read_result_decode",
            id,
            response.len(),
            Box::new(move || {
                let r = dec.decode(black_box(response)).map(|r| r.blob_bytes());
                black_box(r.ok());
            }),
        ));
    }
    rows.extend(measure(args.iters, jobs));

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
