//! `bench-codec`: a one-run look at the codec paths (scalar / SIMD / fused) on a generated
//! `resources/read` response, without criterion. The harness, its limits and the table are
//! [`mcptape_benches::bench_codec`]; this file parses the flags and prints.
//!
//! A binary of `benches/`, not a subcommand of `mcptape`, so the shipped binary does not link
//! the bench harness (issue 24): `cargo run --release -p mcptape-benches --bin bench-codec`.
//! Exit codes as mcptape's: 0 ok, 2 could not run (bad arguments, a write error of stdout).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;
use mcptape_benches::bench_codec;
use mcptape_wire::codec::payload;

/// Arguments of `bench-codec`.
#[derive(Debug, Parser)]
#[command(
    name = "bench-codec",
    about = "One-run table of the scalar / SIMD / fused resources/read decode paths in GB/s against memcpy"
)]
struct Args {
    /// Raw bytes of each blob before base64 (default: the seeds' PNG, 1,834,208 bytes →
    /// 2,445,612 base64 characters). --entries × the base64 of --size is limited to 512 MiB.
    #[arg(long, default_value_t = payload::SEED_PNG_BYTES)]
    size: usize,
    /// Blob entries in the one response (40 with `--size 3000000` is the seeds' 160 MB
    /// directory read).
    #[arg(long, default_value_t = 1)]
    entries: usize,
    /// Timed iterations per row; the rows of a group run round-robin (each once per
    /// iteration) so machine load hits them alike. The median is reported; one warm-up round
    /// is not counted. At most 10000.
    #[arg(long, default_value_t = 15)]
    iters: usize,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            // --help, --version: clap's own text on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or_default();
            eprintln!("bench-codec: {}", first.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "bench-codec: warning: a debug build (no optimizations) measures ~100x slower; use `cargo run --release -p mcptape-benches --bin bench-codec`"
        );
    }
    let report = match bench_codec::run(args.size, args.entries, args.iters) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench-codec: error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    match write!(out, "{report}").and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-codec: error: writing to stdout: {e}");
            ExitCode::from(2)
        }
    }
}
