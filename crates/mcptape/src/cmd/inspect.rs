//! `mcptape inspect FILE`: flags in, report out. The report logic (pairing,
//! per-entry sizes and media sniffing, line numbering) is
//! [`mcptape_check::inspect`]; this file reads the file and prints.
//!
//! Exit status: 0 when every line and result parsed; 1 when any did not, or
//! when the file holds no JSON-RPC message at all (an empty file, blank lines
//! only, a header-only transcript: `no messages` on stderr). A file with
//! messages but no `resources/read` result is not an error (exit 0), but it
//! says so on stdout and stderr (`no resources/read result`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

/// Arguments of `mcptape inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// File of newline-delimited JSON-RPC messages (one message or batch per
    /// line), or an mcptape transcript (detected by its header line; its
    /// message records are inspected, numbered by transcript line).
    pub file: PathBuf,
    /// Accept lenient base64 in `blob` (whitespace, URL-safe alphabet, missing
    /// padding) and report what was accepted, instead of rejecting it.
    #[arg(long)]
    pub lenient: bool,
    /// Print the report as JSON (camelCase) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mcptape inspect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let data =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let report = mcptape_check::inspect::inspect(&data, args.lenient);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    if report.summary.messages == 0 {
        eprintln!(
            "mcptape inspect: no messages in {}: nothing to inspect",
            args.file.display()
        );
        return Ok(ExitCode::from(1));
    }
    if report.bad_transcript.is_none() && report.read_answers() == 0 {
        eprintln!(
            "mcptape inspect: no resources/read result in {} ({} messages)",
            args.file.display(),
            report.summary.messages
        );
    }
    Ok(if report.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
