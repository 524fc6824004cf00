//! `mcptape inspect` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape inspect`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape inspect` is not implemented yet")
}
