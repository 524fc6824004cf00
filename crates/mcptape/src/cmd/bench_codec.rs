//! `mcptape bench-codec`: a one-run look at the codec paths (scalar / SIMD / fused) on a
//! generated `resources/read` response, without criterion. The harness, its limits and the
//! table are [`mcptape_benches::bench_codec`]; this file parses the flags and prints.

use mcptape_benches::bench_codec;
use mcptape_wire::codec::payload;
use std::process::ExitCode;

/// Arguments of `mcptape bench-codec`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Raw bytes of each blob before base64 (default: the seeds' PNG,
    /// 1,834,208 bytes → 2,445,612 base64 characters). --entries × the base64
    /// of --size is limited to 512 MiB.
    #[arg(long, default_value_t = payload::SEED_PNG_BYTES)]
    pub size: usize,
    /// Blob entries in the one response (40 with `--size 3000000` is the
    /// seeds' 160 MB directory read).
    #[arg(long, default_value_t = 1)]
    pub entries: usize,
    /// Timed iterations per row; the rows of a group run round-robin (each
    /// once per iteration) so machine load hits them alike. The median is
    /// reported; one warm-up round is not counted. At most 10000.
    #[arg(long, default_value_t = 15)]
    pub iters: usize,
}

/// Runs `mcptape bench-codec`: [`bench_codec::run`], then prints its table.
///
/// Errors: the [`bench_codec::validate`] errors (checked before allocating); a path failing
/// to decode the generated response or blob (a bug, reported with the codec error).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::warn_if_debug_build("bench-codec");
    let report = bench_codec::run(args.size, args.entries, args.iters)?;
    super::print_stdout(&report.to_string())?;
    Ok(ExitCode::SUCCESS)
}
