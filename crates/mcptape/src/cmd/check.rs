//! `mcptape check` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape check`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape check`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape check` is not implemented yet")
}
