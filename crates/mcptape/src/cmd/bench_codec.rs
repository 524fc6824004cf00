//! `mcptape bench_codec` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape bench_codec`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape bench_codec`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape bench_codec` is not implemented yet")
}
