//! `mcptape check PATH... [--spec REV|auto] [--format human|json|junit] [--allow RULE...] [--output FILE]`:
//! run the conformance rules of `mcptape-check` over transcripts.
//!
//! Exit status: 0 when no unallowed error-severity finding fired, 1 when one
//! did, 2 when the check could not run (unreadable path, unknown rule id).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mcptape_check::{Format, Options, Revision, SpecChoice, output};

/// `--spec` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Spec {
    /// Detect from the handshake (initialize result, request `_meta`, header).
    Auto,
    /// MCP 2025-06-18.
    #[value(name = "2025-06-18")]
    V2025_06_18,
    /// MCP 2025-11-25.
    #[value(name = "2025-11-25")]
    V2025_11_25,
    /// MCP 2026-07-28.
    #[value(name = "2026-07-28")]
    V2026_07_28,
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// One line per finding, for people.
    Human,
    /// The JSON report.
    Json,
    /// JUnit XML (one test case per transcript and rule).
    Junit,
}

/// Arguments of `mcptape check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript files, or directories searched recursively for `*.jsonl`.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Protocol revision the revision-dependent rules use.
    #[arg(long, value_enum, default_value = "auto")]
    pub spec: Spec,
    /// Report format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// A rule whose findings are reported but do not fail the check (repeatable).
    #[arg(long = "allow", value_name = "RULE", num_args = 1..)]
    pub allow: Vec<String>,
    /// Write the report to FILE (parent directories are created) instead of stdout;
    /// a one-line summary still goes to stderr.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Blobs larger than this many decoded bytes fire `blob-over-size-threshold`.
    #[arg(long, value_name = "BYTES", default_value_t = mcptape_check::DEFAULT_BLOB_THRESHOLD_BYTES)]
    pub blob_threshold: u64,
}

/// Runs `mcptape check`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let spec = match args.spec {
        Spec::Auto => SpecChoice::Auto,
        Spec::V2025_06_18 => SpecChoice::Fixed(Revision::v2025_06_18()),
        Spec::V2025_11_25 => SpecChoice::Fixed(Revision::v2025_11_25()),
        Spec::V2026_07_28 => SpecChoice::Fixed(Revision::v2026_07_28()),
    };
    let opts = Options {
        spec,
        allow: args.allow.iter().cloned().collect::<BTreeSet<_>>(),
        blob_threshold_bytes: args.blob_threshold,
    };
    let report = mcptape_check::check_paths(&args.paths, &opts)?;
    let format = match args.format {
        FormatArg::Human => Format::Human,
        FormatArg::Json => Format::Json,
        FormatArg::Junit => Format::Junit,
    };
    let text = output::render(&report, format);
    match &args.output {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
            let s = report.summary;
            eprintln!(
                "mcptape check: {}: {} file(s), {} error(s), {} warning(s), {} allowed; report in {}",
                if report.passed() { "PASS" } else { "FAIL" },
                s.files,
                s.errors,
                s.warnings,
                s.allowed,
                path.display()
            );
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
