//! `mcptape verify` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape verify`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape verify`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape verify` is not implemented yet")
}
