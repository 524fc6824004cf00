//! `mcptape bench TRANSCRIPT [--target embedded | --target-cmd 'CMD' | --target-url URL]
//! [--latency MODEL] [--parallel N] [--deadline 800ms] [--timeout 5s] [--reads N] [--turns N]
//! [--concurrency C | --rate R/s] [--seed N] [--out DIR]`: play the recorded client against a
//! target and report single-read and parallel-read-turn latency (HdrHistogram, µs) with the
//! F(t)^N prediction beside the measured turn percentiles.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mcptape_replay::bench::{self, BenchConfig, Client};
use mcptape_replay::config::{BenchSettings, check_out_dir};
use mcptape_replay::latency::LatencyModel;
use mcptape_replay::render::{BENCH_OUT_FILES, write_bench_out};
use mcptape_replay::target::{self, TargetSpec};
use tokio::time::Duration;

use crate::cmd::serve::load_tape;

/// The built-in target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// `mcptape serve` on the same transcript, started as a child over stdio.
    Embedded,
}

/// Arguments of `mcptape bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript whose recorded client is played (its resources/read requests, cycled).
    pub transcript: PathBuf,
    /// Built-in target (default): `mcptape serve` on the same transcript as a stdio child.
    #[arg(long, value_enum, default_value = "embedded", conflicts_with_all = ["target_cmd", "target_url"])]
    pub target: Target,
    /// A live stdio server command (run with `sh -c`).
    #[arg(long, value_name = "CMD", conflicts_with = "target_url")]
    pub target_cmd: Option<String>,
    /// A live Streamable HTTP endpoint (loopback), e.g. http://127.0.0.1:3001/mcp.
    #[arg(long, value_name = "URL")]
    pub target_url: Option<String>,
    /// Latency model of the embedded server.
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "lognormal:p50=12ms,p99=40ms"
    )]
    pub latency: String,
    /// Fault injection of the embedded server (see `mcptape serve --fault`).
    #[arg(long, value_name = "SPEC")]
    pub fault: Vec<String>,
    /// Reads issued at once per turn.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub parallel: u32,
    /// Turn deadline (> 0, at most 60s): stragglers get notifications/cancelled then.
    #[arg(long, value_name = "DURATION", default_value = "800ms")]
    pub deadline: String,
    /// Per-read timeout (> 0, at most 60s): an unanswered read is abandoned then. It also
    /// bounds each handshake request (initialize / server/discover).
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub timeout: String,
    /// Single reads to send.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub reads: u64,
    /// Parallel-read turns to run.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub turns: u64,
    /// Closed loop: single reads in flight at once.
    #[arg(long, value_name = "C", default_value_t = 1, conflicts_with = "rate")]
    pub concurrency: u32,
    /// Open loop: single reads per second (e.g. 200/s), latency from the intended send time.
    #[arg(long, value_name = "R/s")]
    pub rate: Option<String>,
    /// Seed of the embedded server's schedule.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Wall-clock bound (> 0, at most 3600s) of each phase (single reads, turns); a phase
    /// cut by it says so.
    #[arg(long, value_name = "DURATION", default_value = "25s")]
    pub max_phase: String,
    /// Directory to write report.json, latency.hlog (HdrHistogram interval log) and
    /// latency.svg to (created if missing; checked writable before the run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Parses the duration flag `flag` (e.g. `--max-phase`) into µs, at most `max_us`; the error
/// names the flag, the value as typed, and the limit in the unit typed (`--max-phase 3601s:
/// 3601s is above the limit: at most 3600s`). See [`mcptape_replay::config::duration_us`].
pub(crate) fn flag_duration_us(flag: &'static str, s: &str, max_us: u64) -> anyhow::Result<u64> {
    Ok(mcptape_replay::config::duration_us(flag, s, max_us)?)
}

/// Runs `mcptape bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rt = super::runtime()?;
    let r = rt.block_on(run_async(args));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    r
}

async fn run_async(args: Args) -> anyhow::Result<ExitCode> {
    let tape = load_tape(&args.transcript)?;
    let cfg = BenchSettings {
        reads: args.reads,
        turns: args.turns,
        parallel: args.parallel,
        concurrency: args.concurrency,
        rate: args.rate.as_deref(),
        deadline: &args.deadline,
        timeout: &args.timeout,
        max_phase: &args.max_phase,
    }
    .validate()?;
    if let Some(dir) = &args.out {
        check_out_dir(dir)?;
    }
    let mut target = target::Target::new();
    // The session future borrows `target`; it is dropped when the select ends, so the
    // target's process group is ended on every exit path: success, an error, a timeout, or
    // SIGINT/SIGTERM/SIGHUP to mcptape.
    let r = tokio::select! {
        r = session(&args, cfg, tape, &mut target) => r,
        sig = target::interrupted() => Ok(stopped("bench", sig)),
    };
    target.end().await;
    r
}

/// Prints `mcptape CMD: SIGNAL: stopping the target` and gives the exit status 128 + signal.
pub(crate) fn stopped(cmd: &str, sig: target::Signal) -> ExitCode {
    eprintln!("mcptape {cmd}: {}: stopping the target", sig.name);
    ExitCode::from(sig.exit_code)
}

/// The part of `mcptape bench` that runs with a target; `target` is started here and ended
/// by the caller.
async fn session(
    args: &Args,
    cfg: BenchConfig,
    tape: mcptape_replay::tape::Tape,
    target: &mut target::Target,
) -> anyhow::Result<ExitCode> {
    let transcript = args.transcript.display().to_string();
    let stats_path = target::serve_stats_path();
    let (spec, target_name, latency) = if let Some(url) = &args.target_url {
        (
            TargetSpec::Url(url.clone()),
            format!("{url} (Streamable HTTP)"),
            None,
        )
    } else if let Some(c) = &args.target_cmd {
        (TargetSpec::Shell(c.clone()), format!("`{c}` (stdio)"), None)
    } else {
        LatencyModel::parse(&args.latency)?; // fail here, not in the child
        crate::cmd::serve::parse_faults(&args.fault)?;
        let program = std::env::current_exe().context("locating the mcptape binary")?;
        let mut a: Vec<std::ffi::OsString> = vec![
            "serve".into(),
            args.transcript.clone().into(),
            "--stdio".into(),
            "--latency".into(),
            args.latency.clone().into(),
            "--seed".into(),
            args.seed.to_string().into(),
            "--stats".into(),
            stats_path.clone().into(),
        ];
        for f in &args.fault {
            a.extend(["--fault".into(), f.into()]);
        }
        (
            TargetSpec::Program { program, args: a },
            "embedded `mcptape serve` child (stdio)".to_owned(),
            Some(args.latency.clone()),
        )
    };
    let (r, w) = target.start(&spec, tape.protocol_version.as_deref())?;
    let client = Arc::new(Client::over(r, w));
    if let Err(e) = bench::handshake(&client, &tape, Duration::from_micros(cfg.timeout_us)).await {
        let why = target.gone_reason().await;
        anyhow::bail!("handshake with the target: {e}{why}");
    }

    let total = cfg.reads + cfg.turns;
    let pb = if std::io::stderr().is_terminal() {
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template("{spinner} {bar:40} {pos}/{len} reads+turns {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb
    } else {
        ProgressBar::hidden()
    };
    let pb2 = pb.clone();
    let res = bench::run(client.clone(), &tape, &cfg, &move |n| pb2.inc(n)).await?;
    pb.finish_and_clear();
    let gone = if res.target_closed {
        target.gone_reason().await
    } else {
        String::new()
    };

    // Close the session: the embedded server writes its --stats on exit.
    if let Ok(c) = Arc::try_unwrap(client) {
        c.close(Duration::from_secs(2)).await;
    }
    target.end().await;
    let server = target::take_serve_stats(&stats_path);

    let report = res.report(&cfg, &transcript, &target_name, latency, args.seed, server);
    print!("{}", report.table());
    if let Some(dir) = &args.out {
        write_bench_out(dir, &report, &res)
            .with_context(|| format!("writing {}", dir.display()))?;
        println!("\nwrote {}/{}", dir.display(), BENCH_OUT_FILES.join(", "));
    }
    let failures = report.failures();
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for f in &failures {
        eprintln!("mcptape bench: no measurement: {f}");
    }
    if !gone.is_empty() {
        eprintln!("mcptape bench: {}", gone.trim_start_matches([';', ' ']));
    }
    Ok(ExitCode::from(1))
}
