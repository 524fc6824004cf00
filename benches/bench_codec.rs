//! The `bench-codec` harness: a one-run look at the codec paths (scalar / SIMD / fused)
//! on a generated `resources/read` response, without criterion. [`run`] times each path
//! round-robin ([`measure`]) and returns a [`CodecReport`] whose `Display` is the table the CLI
//! prints: each path's median throughput in GB/s (10^9 bytes per second of input) and its ratio
//! to `memcpy` of the same buffer, plus the CPU features detected and used. The criterion
//! benches (`cargo bench -p mcptape-benches`) are the careful measurement; this is the quick one.
//!
//! Limits (checked by [`validate`] before anything is allocated): [`MAX_BENCH_CODEC_BYTES`] on
//! the base64 text of all blobs together (`--entries` × 4·⌈`--size`/3⌉) and
//! [`MAX_BENCH_CODEC_ITERS`] on `--iters`.

use mcptape_wire::codec::base64::{self as b64, Path};
use mcptape_wire::codec::{self, CodecPath, Decoder, Kernel, payload};
use std::hint::black_box;
use std::time::Instant;

/// Most base64 bytes (characters) `bench-codec` generates: the `blob` text of
/// all entries together, `--entries` × 4·⌈`--size`/3⌉ (RFC 4648 §4), at most
/// 512 MiB. The seeds' directory read (40 × 3,000,000 bytes → 160,000,000
/// base64 bytes) fits three times over. Peak memory is about 6 times the
/// base64 bytes (the response, one decoded arena per codec path, the `memcpy`
/// copy): 915 MB max RSS measured for the directory read (`--size 3000000
/// --entries 40 --iters 1`), so about 3 GB at the limit. One byte more →
/// [`BenchCodecArgsError::TooLarge`].
pub const MAX_BENCH_CODEC_BYTES: usize = 512 * 1024 * 1024;

/// Most timed iterations per row (`--iters`): each row keeps one f64 (8
/// bytes) per iteration. One more → [`BenchCodecArgsError::TooManyIters`].
pub const MAX_BENCH_CODEC_ITERS: usize = 10_000;

/// Arguments of `bench-codec` that cannot run, found by [`validate`]
/// before anything is allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BenchCodecArgsError {
    /// `--size`, `--entries` or `--iters` is 0 (`flag` names which, without `--`).
    Zero {
        /// The flag, e.g. `"size"`.
        flag: &'static str,
    },
    /// `--entries` × 4·⌈`--size`/3⌉ base64 bytes exceed [`MAX_BENCH_CODEC_BYTES`].
    TooLarge {
        /// `--entries`.
        entries: usize,
        /// `--size` in bytes.
        size: usize,
        /// The base64 bytes needed; `None` when the product overflows `usize`.
        base64_bytes: Option<usize>,
    },
    /// `--iters` exceeds [`MAX_BENCH_CODEC_ITERS`].
    TooManyIters {
        /// `--iters`.
        iters: usize,
    },
}

impl std::fmt::Display for BenchCodecArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Zero { flag } => write!(f, "--{flag} must be at least 1"),
            Self::TooLarge {
                entries,
                size,
                base64_bytes,
            } => {
                write!(
                    f,
                    "--entries {entries} x --size {size} bytes would generate "
                )?;
                match base64_bytes {
                    Some(n) => write!(f, "{n} bytes of base64")?,
                    None => f.write_str("more base64 than fits in memory")?,
                }
                write!(
                    f,
                    "; the limit is {MAX_BENCH_CODEC_BYTES} bytes (512 MiB) of base64 in total \
                     (the seeds' directory read, --entries 40 --size 3000000, is 160000000)"
                )
            }
            Self::TooManyIters { iters } => write!(
                f,
                "--iters {iters} is over the limit of {MAX_BENCH_CODEC_ITERS} iterations"
            ),
        }
    }
}

impl std::error::Error for BenchCodecArgsError {}

/// Checks `--size`, `--entries` and `--iters` without allocating anything and
/// returns the base64 bytes (characters) of all blobs together:
/// `entries` × 4·⌈`size`/3⌉.
///
/// # Errors
/// [`BenchCodecArgsError::Zero`] for a 0, [`BenchCodecArgsError::TooLarge`]
/// past [`MAX_BENCH_CODEC_BYTES`] (or on overflow),
/// [`BenchCodecArgsError::TooManyIters`] past [`MAX_BENCH_CODEC_ITERS`].
pub fn validate(size: usize, entries: usize, iters: usize) -> Result<usize, BenchCodecArgsError> {
    for (flag, v) in [("size", size), ("entries", entries), ("iters", iters)] {
        if v == 0 {
            return Err(BenchCodecArgsError::Zero { flag });
        }
    }
    if iters > MAX_BENCH_CODEC_ITERS {
        return Err(BenchCodecArgsError::TooManyIters { iters });
    }
    let base64_bytes = size
        .div_ceil(3)
        .checked_mul(4)
        .and_then(|per_entry| per_entry.checked_mul(entries));
    match base64_bytes {
        Some(n) if n <= MAX_BENCH_CODEC_BYTES => Ok(n),
        _ => Err(BenchCodecArgsError::TooLarge {
            entries,
            size,
            base64_bytes,
        }),
    }
}

/// Why [`run`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BenchCodecError {
    /// The arguments cannot run ([`validate`]).
    Args(BenchCodecArgsError),
    /// A codec path decoded the generated input wrongly or rejected it (a bug in that path).
    Wrong {
        /// The path, e.g. `base64 path simd` or `fused/avx2`.
        path: String,
        /// What went wrong (the codec error, or the byte counts).
        detail: String,
    },
}

impl std::fmt::Display for BenchCodecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Args(e) => e.fmt(f),
            Self::Wrong { path, detail } => write!(f, "{path}: {detail}"),
        }
    }
}

impl std::error::Error for BenchCodecError {}

impl From<BenchCodecArgsError> for BenchCodecError {
    fn from(e: BenchCodecArgsError) -> Self {
        Self::Args(e)
    }
}

/// The result of [`run`]: the arguments, the generated response's size and every row.
#[derive(Debug, Clone, PartialEq)]
pub struct CodecReport {
    /// Raw bytes of each blob (`--size`).
    pub size: usize,
    /// Blob entries in the response (`--entries`).
    pub entries: usize,
    /// Timed iterations per row (`--iters`).
    pub iters: usize,
    /// Bytes of the generated `resources/read` response.
    pub response_len: usize,
    /// The rows, grouped: `base64_decode`, `base64_encode`, `read_result_decode`, each starting
    /// with its `memcpy` row.
    pub rows: Vec<Row>,
}

/// One table row: group, `path/impl`, bytes per iteration, median seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Group: `base64_decode`, `base64_encode` or `read_result_decode`.
    pub group: &'static str,
    /// `path/impl`, e.g. `fused/avx2` or `memcpy/copy_from_slice`.
    pub id: String,
    /// Input bytes one call reads.
    pub bytes: usize,
    /// Median seconds per call.
    pub median_s: f64,
}

/// A row to time: its label, bytes per call, and the work (owning its output).
pub type Job<'a> = (&'static str, String, usize, Box<dyn FnMut() + 'a>);

/// Times every job round-robin — iteration `i` runs each job once, in turn —
/// so load from other processes hits all rows alike; one warm-up round is not
/// counted. Returns each job's median (`NaN` for `iters` 0, which [`validate`] rejects).
pub fn measure(iters: usize, jobs: Vec<Job<'_>>) -> Vec<Row> {
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
                // `iters` ≥ 1 ([`validate`]); 0 iterations have no median.
                median_s: t.get(t.len() / 2).copied().unwrap_or(f64::NAN),
            }
        })
        .collect()
}

/// The `memcpy` row of `group`: copying `src` into a buffer of its length (the baseline).
pub fn memcpy_job<'a>(group: &'static str, src: &'a [u8]) -> Job<'a> {
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

/// Generates a response of `entries` blobs of `size` raw bytes
/// ([`payload::blob_response`]), checks every path decodes it (and one blob) correctly, then
/// times the three groups (`base64_decode` of one blob's text, `base64_encode` of its raw
/// bytes, `read_result_decode` of the whole response with one reused [`Decoder`] per path),
/// `iters` rounds each.
///
/// # Errors
/// [`BenchCodecError::Args`] from [`validate`] (before allocating anything);
/// [`BenchCodecError::Wrong`] when a path fails on the generated input (a bug).
pub fn run(size: usize, entries: usize, iters: usize) -> Result<CodecReport, BenchCodecError> {
    validate(size, entries, iters)?;
    let response = payload::blob_response(entries, size);
    let raw = payload::png_like(size, 0x5EED);
    let text = b64::encode(Path::Simd, &raw).into_bytes();
    for path in Path::ALL {
        let back = b64::decode(path, &text).map_err(|e| BenchCodecError::Wrong {
            path: format!("base64 path {}", path.name()),
            detail: e.to_string(),
        })?;
        if back != raw {
            return Err(BenchCodecError::Wrong {
                path: format!("base64 path {}", path.name()),
                detail: "round trip differs".into(),
            });
        }
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
    let mut rows = measure(iters, jobs);

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
    rows.extend(measure(iters, jobs));

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
            .map_err(|e| BenchCodecError::Wrong {
                path: id.clone(),
                detail: format!("rejected the generated response: {e}"),
            })?
            .blob_bytes();
        if got != size * entries {
            return Err(BenchCodecError::Wrong {
                path: id,
                detail: format!("decoded {got} bytes, expected {}", size * entries),
            });
        }
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
    rows.extend(measure(iters, jobs));

    Ok(CodecReport {
        size,
        entries,
        iters,
        response_len: response.len(),
        rows,
    })
}

impl std::fmt::Display for CodecReport {
    /// The table `bench-codec` prints: a header (sizes, CPU features detected,
    /// compiled and used), then one Markdown row per [`Row`] with its input GB/s (10^9 bytes
    /// per second) and ratio to the group's `memcpy` row.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "bench-codec: {} blob entr{} x {} bytes -> response {} bytes; median of {} iterations",
            self.entries,
            if self.entries == 1 { "y" } else { "ies" },
            self.size,
            self.response_len,
            self.iters
        )?;
        let detected: Vec<&str> = codec::cpu_features()
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| n)
            .collect();
        let compiled = codec::compiled_features();
        writeln!(f, "CPU features detected: {}", detected.join(" "))?;
        writeln!(
            f,
            "compiled for: {}",
            if compiled.is_empty() {
                "baseline x86-64 (portable build)".to_string()
            } else {
                compiled.join(" ")
            }
        )?;
        writeln!(
            f,
            "used: fused kernel {} (runtime detection); base64-simd runtime detection; sonic-rs compile-time ({})",
            Kernel::detect().name(),
            if compiled.contains(&"avx2") {
                "avx2"
            } else {
                "sse2 baseline"
            }
        )?;
        writeln!(
            f,
            "input bytes: what one call reads (base64_decode: the base64 text; base64_encode: the raw blob; \
         read_result_decode: the whole response); input GB/s = input bytes / median time / 10^9; \
         x memcpy = against copying the same input bytes"
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "| {:<18} | {:<26} | {:>11} | {:>10} | {:>8} |",
            "group", "path/impl", "input bytes", "input GB/s", "x memcpy"
        )?;
        writeln!(
            f,
            "|{:-<20}|{:-<28}|{:->13}|{:->12}|{:->10}|",
            "", "", "", "", ""
        )?;
        let mut memcpy_gbs = 0.0;
        for r in &self.rows {
            let gbs = r.bytes as f64 / r.median_s / 1e9;
            if r.id.starts_with("memcpy/") {
                memcpy_gbs = gbs;
            }
            writeln!(
                f,
                "| {:<18} | {:<26} | {:>11} | {:>10.2} | {:>8.2} |",
                r.group,
                r.id,
                r.bytes,
                gbs,
                gbs / memcpy_gbs
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--size` whose base64 is exactly [`MAX_BENCH_CODEC_BYTES`] for one
    /// entry: 4·⌈402,653,184/3⌉ = 536,870,912.
    const SIZE_AT_LIMIT: usize = 402_653_184;

    #[test]
    fn bench_codec_size_at_limit_is_accepted_and_one_past_rejected() {
        assert_eq!(validate(SIZE_AT_LIMIT, 1, 1), Ok(MAX_BENCH_CODEC_BYTES));
        // one raw byte more needs one more base64 quantum (4 bytes)
        assert_eq!(
            validate(SIZE_AT_LIMIT + 1, 1, 1),
            Err(BenchCodecArgsError::TooLarge {
                entries: 1,
                size: SIZE_AT_LIMIT + 1,
                base64_bytes: Some(MAX_BENCH_CODEC_BYTES + 4),
            })
        );
    }

    #[test]
    fn bench_codec_entries_at_limit_is_accepted_and_one_past_rejected() {
        // 3 raw bytes → 4 base64 bytes per entry
        let entries = MAX_BENCH_CODEC_BYTES / 4;
        assert_eq!(validate(3, entries, 1), Ok(MAX_BENCH_CODEC_BYTES));
        assert!(matches!(
            validate(3, entries + 1, 1),
            Err(BenchCodecArgsError::TooLarge {
                base64_bytes: Some(n),
                ..
            }) if n == MAX_BENCH_CODEC_BYTES + 4
        ));
    }

    #[test]
    fn bench_codec_seed_directory_read_fits() {
        assert_eq!(validate(3_000_000, 40, 15), Ok(160_000_000));
        assert_eq!(validate(1_834_208, 1, 15), Ok(2_445_612));
    }

    #[test]
    fn bench_codec_reported_cases_are_rejected_before_allocating() {
        // the fresh-user report: --size 100000000000 aborted, --entries 100000 used 23 GB
        let e = validate(100_000_000_000, 1, 15).unwrap_err();
        assert!(matches!(e, BenchCodecArgsError::TooLarge { .. }));
        assert_eq!(
            e.to_string(),
            "--entries 1 x --size 100000000000 bytes would generate 133333333336 bytes of base64; \
             the limit is 536870912 bytes (512 MiB) of base64 in total (the seeds' directory read, \
             --entries 40 --size 3000000, is 160000000)"
        );
        assert!(matches!(
            validate(mcptape_wire::codec::payload::SEED_PNG_BYTES, 100_000, 1),
            Err(BenchCodecArgsError::TooLarge { .. })
        ));
        assert!(matches!(
            validate(usize::MAX, usize::MAX, 1),
            Err(BenchCodecArgsError::TooLarge {
                base64_bytes: None,
                ..
            })
        ));
    }

    #[test]
    fn bench_codec_iters_at_limit_is_accepted_and_one_past_rejected() {
        assert_eq!(validate(3, 1, MAX_BENCH_CODEC_ITERS), Ok(4));
        assert_eq!(
            validate(3, 1, MAX_BENCH_CODEC_ITERS + 1),
            Err(BenchCodecArgsError::TooManyIters {
                iters: MAX_BENCH_CODEC_ITERS + 1
            })
        );
    }

    #[test]
    fn bench_codec_zero_arguments_name_the_flag() {
        assert_eq!(
            validate(0, 1, 1).unwrap_err().to_string(),
            "--size must be at least 1"
        );
        assert_eq!(
            validate(1, 0, 1),
            Err(BenchCodecArgsError::Zero { flag: "entries" })
        );
        assert_eq!(
            validate(1, 1, 0),
            Err(BenchCodecArgsError::Zero { flag: "iters" })
        );
    }
}
