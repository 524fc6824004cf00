//! `mcptape bench` (being written).

use std::process::ExitCode;

/// Arguments of `mcptape bench`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `mcptape bench`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape bench` is not implemented yet")
}
