//! `mcptape serve` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape serve`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape serve`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape serve` is not implemented yet")
}
