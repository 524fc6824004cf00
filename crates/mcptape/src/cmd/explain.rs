//! `mcptape explain` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape explain`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape explain`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape explain` is not implemented yet")
}
