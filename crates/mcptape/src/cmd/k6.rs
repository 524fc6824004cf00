//! `mcptape export k6 TRANSCRIPT [-o FILE] [--parallel N] [--deadline 800ms] [--timeout 5s]
//! [--rate R/s] [--turn-rate R/s] [--duration 30s] [--slo ...]` and
//! `mcptape import k6 FILE... --out DIR`, `mcptape export har TRANSCRIPT [-o FILE]` and
//! `mcptape import har FILE -o TRANSCRIPT [--no-redact]`: flags in, `mcptape_export` does the work.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_export::k6::import::K6Import;
use mcptape_export::k6::script::{MAX_DURATION_S, ScriptOptions};
use mcptape_export::k6::{export_file, slo};
use mcptape_replay::latency::MAX_DELAY_US;

use mcptape_replay::config;

/// `mcptape export FORMAT`.
#[derive(Debug, clap::Subcommand)]
pub enum ExportCommand {
    /// Write a k6 (>= 1.0) script that replays a Streamable HTTP recording: the handshake as
    /// recorded, then every recorded request in the recorded mix (tagged method, mcp_name) as
    /// single requests, and its resources/read requests as parallel-read turns.
    K6(ExportK6Args),
    /// Write a HAR 1.2 log of a Streamable HTTP recording: one entry per HTTP exchange
    /// (redacted headers, bodies, SSE streams as text/event-stream content, timings).
    Har(ExportHarArgs),
}

/// `mcptape import FORMAT`.
#[derive(Debug, clap::Subcommand)]
pub enum ImportCommand {
    /// Merge k6 `--out json=FILE` outputs (one per segment or machine; .gz too) into
    /// report.json, latency.hlog, latency.svg and report.html, as `mcptape bench --out`
    /// writes them.
    K6(ImportK6Args),
    /// Turn a HAR (a browser's, a proxy's, or `export har`'s) of an MCP session into a
    /// transcript for check, serve and bench; entries that are not MCP are skipped and counted.
    Har(ImportHarArgs),
}

/// Arguments of `mcptape export har`.
#[derive(Debug, clap::Args)]
pub struct ExportHarArgs {
    /// A Streamable HTTP transcript (`mcptape record --listen`, `crawl --url`).
    pub transcript: PathBuf,
    /// Write the HAR here (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Arguments of `mcptape import har`.
#[derive(Debug, clap::Args)]
pub struct ImportHarArgs {
    /// A HAR 1.1/1.2 file.
    pub file: PathBuf,
    /// Write the transcript here.
    #[arg(short = 'o', long = "output", value_name = "TRANSCRIPT")]
    pub output: PathBuf,
    /// Keep header values and URL credentials as the HAR has them (default: redacted as
    /// `mcptape record` does).
    #[arg(long)]
    pub no_redact: bool,
}

/// Arguments of `mcptape export k6`.
#[derive(Debug, clap::Args)]
pub struct ExportK6Args {
    /// A Streamable HTTP transcript (`mcptape record --listen`, `crawl --url`).
    pub transcript: PathBuf,
    /// Write the script here (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub turn: crate::cmd::bench::TurnArgs,
    /// Single requests per second (scenario `reads`, constant-arrival-rate; every recorded
    /// method, in the recorded mix).
    #[arg(long, value_name = "R/s", default_value = "20/s")]
    pub rate: String,
    /// Turns per second (scenario `turns`); 0/s: no turn scenario.
    #[arg(long, value_name = "R/s", default_value = "5/s")]
    pub turn_rate: String,
    /// Duration of each scenario (1s .. 3600s). k6's own --vus/--iterations/--duration
    /// replace the scenarios.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30s",
        allow_hyphen_values = true
    )]
    pub duration: String,
    /// VUs allocated before the start, per scenario.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub pre_vus: u32,
    /// Most VUs per scenario (arrivals beyond them are k6's dropped_iterations).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_vus: u32,
    /// SLO gates as k6 thresholds, e.g. 'read.p99<50ms,turn.p99<800ms,errors<1%'
    /// (errors: reads whose outcome differs from the recording's).
    #[arg(long, value_name = "SPEC")]
    pub slo: Option<String>,
}

/// Arguments of `mcptape import k6`.
#[derive(Debug, clap::Args)]
pub struct ImportK6Args {
    /// k6 JSON outputs (`k6 run --out json=FILE`), plain or gzip.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Directory for report.json, latency.hlog, latency.svg and report.html (created if
    /// missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `R/s` (the unit required, as `bench --rate`: [`mcptape_replay::config::parse_rate`]).
fn parse_rate(flag: &str, s: &str) -> anyhow::Result<f64> {
    let Some(n) = s.trim().strip_suffix("/s") else {
        anyhow::ensure!(
            s.trim().parse::<f64>().is_err(),
            "{flag} {s:?}: a rate needs its unit, per second: {}/s",
            s.trim()
        );
        anyhow::bail!("{flag} {s:?}: expected e.g. 200/s");
    };
    n.parse::<f64>()
        .with_context(|| format!("{flag} {s:?}: expected e.g. 200/s"))
}

/// Runs `mcptape export ...`.
pub fn run_export(cmd: ExportCommand) -> anyhow::Result<ExitCode> {
    let a = match cmd {
        ExportCommand::K6(a) => a,
        ExportCommand::Har(a) => return run_export_har(&a),
    };
    if let Some(out) = &a.output {
        super::refuse_overwrite("-o", out, [&a.transcript])?;
    }
    let duration_us = config::duration_us("--duration", &a.duration, MAX_DURATION_S * 1_000_000)?;
    anyhow::ensure!(
        duration_us >= 1_000_000 && duration_us.is_multiple_of(1_000_000),
        "--duration {}: whole seconds, at least 1s",
        a.duration
    );
    let opts = ScriptOptions {
        transcript: String::new(),
        parallel: a.turn.parallel,
        deadline_us: config::duration_us("--deadline", &a.turn.deadline, MAX_DELAY_US)?,
        timeout_us: config::duration_us("--timeout", &a.turn.timeout, MAX_DELAY_US)?,
        rate_per_s: parse_rate("--rate", &a.rate)?,
        turn_rate_per_s: parse_rate("--turn-rate", &a.turn_rate)?,
        duration_s: duration_us / 1_000_000,
        pre_allocated_vus: a.pre_vus,
        max_vus: a.max_vus,
        thresholds: match &a.slo {
            Some(s) => slo::thresholds(s)?,
            None => slo::Thresholds::new(),
        },
    };
    let js = export_file(&a.transcript, &opts)?;
    write_or_print(a.output.as_deref(), &js)
}

/// Writes `text` to `output` (naming it on stderr) or, without one, prints
/// it on standard output. Errors: the write's, with the path.
fn write_or_print(output: Option<&Path>, text: &str) -> anyhow::Result<ExitCode> {
    match output {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
            eprintln!("wrote {}", p.display());
        }
        None => super::print_stdout(text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `mcptape import ...`.
pub fn run_import(cmd: ImportCommand) -> anyhow::Result<ExitCode> {
    let a = match cmd {
        ImportCommand::K6(a) => a,
        ImportCommand::Har(a) => return run_import_har(&a),
    };
    for file in mcptape_report::render::BENCH_OUT_FILES {
        super::refuse_overwrite("--out", &a.out.join(file), &a.files)?;
    }
    let m = K6Import::from_files(&a.files)?;
    let report = m.write_out(&a.out)?;
    super::print_stdout(&format!(
        "{}\nwrote {}/report.json, latency.hlog, latency.svg, report.html\n",
        report.table(),
        a.out.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `mcptape export har`.
fn run_export_har(a: &ExportHarArgs) -> anyhow::Result<ExitCode> {
    if let Some(out) = &a.output {
        super::refuse_overwrite("-o", out, [&a.transcript])?;
    }
    let har = mcptape_export::har::export_file(&a.transcript)?;
    write_or_print(a.output.as_deref(), &har)
}

/// Runs `mcptape import har`.
fn run_import_har(a: &ImportHarArgs) -> anyhow::Result<ExitCode> {
    use mcptape_export::har_import::{ImportOptions, import_file};
    super::refuse_overwrite("-o", &a.output, [&a.file])?;
    let opts = ImportOptions {
        redact: !a.no_redact,
    };
    let imp = import_file(&a.file, &opts)?;
    let bytes = imp.to_bytes()?;
    std::fs::write(&a.output, bytes).with_context(|| format!("writing {}", a.output.display()))?;
    for w in &imp.warnings {
        eprintln!("warning: {w}");
    }
    if !imp.skipped.is_empty() {
        eprintln!(
            "skipped {} of {} entries (not MCP):",
            imp.skipped.len(),
            imp.entries
        );
        for s in &imp.skipped {
            let why = match s.reason {
                mcptape_export::har_import::SkipReason::Preflight => "CORS preflight",
                mcptape_export::har_import::SkipReason::OtherUrl => "JSON-RPC to another URL",
                _ => "not an MCP request",
            };
            eprintln!("  entry {}: {} {} ({why})", s.entry, s.method, s.url);
        }
    }
    let messages = imp.records.iter().filter(|r| r.msg().is_some()).count();
    eprintln!(
        "wrote {}: {} MCP entries, {} records, {} messages",
        a.output.display(),
        imp.imported,
        imp.records.len(),
        messages
    );
    Ok(ExitCode::SUCCESS)
}
