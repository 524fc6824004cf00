//! `mcptape crawl` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape crawl`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape crawl`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape crawl` is not implemented yet")
}
