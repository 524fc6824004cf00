//! `mcptape record` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape record`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape record`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape record` is not implemented yet")
}
