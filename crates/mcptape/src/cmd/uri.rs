//! `mcptape uri` (being written).

use std::process::ExitCode;

/// `mcptape uri` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum UriCommand {
    /// Expand an RFC 6570 template.
    Expand {},
}

/// Runs `mcptape uri`.
pub fn run(_cmd: UriCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`mcptape uri` is not implemented yet")
}
