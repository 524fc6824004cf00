//! `mcptape export k6 TRANSCRIPT [-o FILE] [--parallel N] [--deadline 800ms] [--timeout 5s]
//! [--rate R/s] [--turn-rate R/s] [--duration 30s] [--slo ...]` and
//! `mcptape import k6 FILE... --out DIR`: flags in, `mcptape_export::k6` does the work.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_export::k6::import::K6Import;
use mcptape_export::k6::script::{MAX_DURATION_S, ScriptOptions};
use mcptape_export::k6::{export_file, slo};
use mcptape_replay::latency::MAX_DELAY_US;

use crate::cmd::bench::flag_duration_us;

/// `mcptape export FORMAT`.
#[derive(Debug, clap::Subcommand)]
pub enum ExportCommand {
    /// Write a k6 (>= 1.0) script that replays a Streamable HTTP recording: the handshake as
    /// recorded, then its resources/read requests as single reads and parallel-read turns.
    K6(ExportK6Args),
}

/// `mcptape import FORMAT`.
#[derive(Debug, clap::Subcommand)]
pub enum ImportCommand {
    /// Merge k6 `--out json=FILE` outputs (one per segment or machine; .gz too) into
    /// report.json, latency.hlog and latency.svg, as `mcptape bench --out` writes them.
    K6(ImportK6Args),
}

/// Arguments of `mcptape export k6`.
#[derive(Debug, clap::Args)]
pub struct ExportK6Args {
    /// A Streamable HTTP transcript (`mcptape record --listen`, `crawl --url`).
    pub transcript: PathBuf,
    /// Write the script here (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Reads issued at once per turn (http.batch).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub parallel: u32,
    /// Turn deadline (> 0, at most 60s): each read of a turn times out then.
    #[arg(long, value_name = "DURATION", default_value = "800ms")]
    pub deadline: String,
    /// Single-read and handshake timeout (> 0, at most 60s).
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub timeout: String,
    /// Single reads per second (scenario `reads`, constant-arrival-rate).
    #[arg(long, value_name = "R/s", default_value = "20/s")]
    pub rate: String,
    /// Turns per second (scenario `turns`); 0/s: no turn scenario.
    #[arg(long, value_name = "R/s", default_value = "5/s")]
    pub turn_rate: String,
    /// Duration of each scenario (1s .. 3600s). k6's own --vus/--iterations/--duration
    /// replace the scenarios.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
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
    /// Directory for report.json, latency.hlog and latency.svg (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

fn parse_rate(flag: &str, s: &str) -> anyhow::Result<f64> {
    let n = s.trim().trim_end_matches("/s");
    n.parse::<f64>()
        .with_context(|| format!("{flag} {s:?}: expected e.g. 200/s"))
}

/// Runs `mcptape export ...`.
pub fn run_export(cmd: ExportCommand) -> anyhow::Result<ExitCode> {
    let ExportCommand::K6(a) = cmd;
    let duration_us = flag_duration_us("--duration", &a.duration, MAX_DURATION_S * 1_000_000)?;
    anyhow::ensure!(
        duration_us >= 1_000_000 && duration_us.is_multiple_of(1_000_000),
        "--duration {}: whole seconds, at least 1s",
        a.duration
    );
    let opts = ScriptOptions {
        transcript: String::new(),
        parallel: a.parallel,
        deadline_us: flag_duration_us("--deadline", &a.deadline, MAX_DELAY_US)?,
        timeout_us: flag_duration_us("--timeout", &a.timeout, MAX_DELAY_US)?,
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
    match &a.output {
        Some(p) => {
            std::fs::write(p, js).with_context(|| format!("writing {}", p.display()))?;
            eprintln!("wrote {}", p.display());
        }
        None => print!("{js}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `mcptape import ...`.
pub fn run_import(cmd: ImportCommand) -> anyhow::Result<ExitCode> {
    let ImportCommand::K6(a) = cmd;
    let m = K6Import::from_files(&a.files)?;
    let report = m.write_out(&a.out)?;
    print!("{}", report.table());
    println!(
        "\nwrote {}/report.json, latency.hlog, latency.svg",
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
