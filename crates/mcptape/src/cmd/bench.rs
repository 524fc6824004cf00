//! `mcptape bench TRANSCRIPT [--target embedded | --target-cmd 'CMD' | --target-url URL]
//! [--latency MODEL] [--parallel N] [--deadline 800ms] [--timeout 5s] [--reads N] [--turns N]
//! [--concurrency C | --rate R/s] [--seed N] [--out DIR]`: play the recorded client against a
//! target and report single-read and parallel-read-turn latency (HdrHistogram, µs) with the
//! F(t)^N prediction beside the measured turn percentiles.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use mcptape_replay::bench::{self, BenchConfig, Client, Load};
use mcptape_replay::latency::{LatencyModel, parse_duration_us};
use mcptape_replay::report::{Curve, Tagged, percentile_svg, write_hlog};
use mcptape_replay::serve::ServeSummary;
use tokio::io::AsyncWriteExt;
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
    /// Turn deadline: stragglers get notifications/cancelled then.
    #[arg(long, value_name = "DURATION", default_value = "800ms")]
    pub deadline: String,
    /// Per-read timeout: an unanswered read is abandoned then.
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
    /// Wall-clock bound of each phase (single reads, turns).
    #[arg(long, value_name = "DURATION", default_value = "25s")]
    pub max_phase: String,
    /// Write report.json, latency.hlog (HdrHistogram interval log) and latency.svg here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn parse_rate(s: &str) -> anyhow::Result<f64> {
    let n = s.trim().trim_end_matches("/s");
    let r: f64 = n
        .parse()
        .with_context(|| format!("--rate {s:?}: expected e.g. 200/s"))?;
    anyhow::ensure!(
        r.is_finite() && r > 0.0 && r <= 1_000_000.0,
        "--rate {s:?} must be in (0, 1000000]/s"
    );
    Ok(r)
}

/// Runs `mcptape bench`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let r = rt.block_on(run_async(args));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    r
}

async fn run_async(args: Args) -> anyhow::Result<ExitCode> {
    let tape = load_tape(&args.transcript)?;
    let cfg = BenchConfig {
        reads: args.reads,
        turns: args.turns,
        parallel: args.parallel,
        deadline_us: parse_duration_us(&args.deadline)?,
        timeout_us: parse_duration_us(&args.timeout)?,
        load: match &args.rate {
            Some(r) => Load::Open {
                per_s: parse_rate(r)?,
            },
            None => Load::Closed {
                concurrency: args.concurrency,
            },
        },
        max_phase: Duration::from_micros(parse_duration_us(&args.max_phase)?),
    };
    anyhow::ensure!(
        (1..=bench::MAX_PARALLEL).contains(&cfg.parallel),
        "--parallel must be 1..={}",
        bench::MAX_PARALLEL
    );
    anyhow::ensure!(
        (1..=bench::MAX_PARALLEL).contains(&args.concurrency),
        "--concurrency must be 1..={}",
        bench::MAX_PARALLEL
    );
    let transcript = args.transcript.display().to_string();
    let tmp = tempfile_path()?;
    let mut child = None;
    let (client, target, latency) = if let Some(url) = &args.target_url {
        let stream = mcptape_replay::http::bridge(url, tape.protocol_version.as_deref())?;
        let (r, w) = tokio::io::split(stream);
        (Client::over(r, w), format!("{url} (Streamable HTTP)"), None)
    } else {
        let cmd = if let Some(c) = &args.target_cmd {
            let mut cmd = tokio::process::Command::new("sh");
            cmd.arg("-c").arg(c);
            cmd
        } else {
            LatencyModel::parse(&args.latency)?; // fail here, not in the child
            crate::cmd::serve::parse_faults(&args.fault)?;
            let exe = std::env::current_exe().context("locating the mcptape binary")?;
            let mut cmd = tokio::process::Command::new(exe);
            cmd.arg("serve").arg(&args.transcript).arg("--stdio");
            cmd.arg("--latency")
                .arg(&args.latency)
                .arg("--seed")
                .arg(args.seed.to_string());
            cmd.arg("--stats").arg(&tmp);
            for f in &args.fault {
                cmd.arg("--fault").arg(f);
            }
            cmd
        };
        let mut ch = mcptape_transport::child::spawn_command(cmd).context("starting the target")?;
        let (Some(stdin), Some(stdout)) = (ch.stdin.take(), ch.stdout.take()) else {
            anyhow::bail!("target has no stdin/stdout pipes");
        };
        if let Some(mut err) = ch.stderr.take() {
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut err, &mut tokio::io::sink()).await;
            });
        }
        child = Some(ch);
        match &args.target_cmd {
            Some(c) => (Client::over(stdout, stdin), format!("`{c}` (stdio)"), None),
            None => (
                Client::over(stdout, stdin),
                "embedded `mcptape serve` child (stdio)".to_owned(),
                Some(args.latency.clone()),
            ),
        }
    };
    let client = Arc::new(client);
    bench::handshake(&client, &tape, Duration::from_micros(cfg.timeout_us))
        .await
        .context("handshake with the target")?;

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

    // Close the session: the embedded server writes its --stats on exit.
    if let Ok(c) = Arc::try_unwrap(client) {
        c.close(Duration::from_secs(2)).await;
    }
    if let Some(mut ch) = child {
        let _ = ch.shutdown().await;
    }
    let server: Option<ServeSummary> = std::fs::read(&tmp)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let _ = std::fs::remove_file(&tmp);

    let report = res.report(&cfg, &transcript, &target, latency, args.seed, server);
    print!("{}", report.table());
    if let Some(dir) = &args.out {
        write_out(dir, &report, &res).await?;
        println!(
            "\nwrote {}/report.json, latency.hlog, latency.svg",
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn tempfile_path() -> anyhow::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(std::env::temp_dir().join(format!(
        "mcptape-serve-stats-{}-{nanos}.json",
        std::process::id()
    )))
}

async fn write_out(
    dir: &Path,
    report: &mcptape_replay::report::BenchReport,
    res: &bench::BenchResult,
) -> anyhow::Result<()> {
    tokio::fs::create_dir_all(dir)
        .await
        .with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_vec_pretty(report)?;
    tokio::fs::write(dir.join("report.json"), json).await?;
    let hlog = write_hlog(
        &[
            Tagged {
                tag: "single",
                hist: &res.single,
                start_s: 0.0,
                duration_s: res.single_elapsed_s,
            },
            Tagged {
                tag: "turn",
                hist: &res.turn,
                start_s: res.single_elapsed_s,
                duration_s: res.turn_elapsed_s,
            },
            Tagged {
                tag: "turn-reads",
                hist: &res.turn_reads,
                start_s: res.single_elapsed_s,
                duration_s: res.turn_elapsed_s,
            },
        ],
        &format!("mcptape bench {} (values in µs)", report.transcript),
    )
    .map_err(anyhow::Error::msg)?;
    let mut f = tokio::fs::File::create(dir.join("latency.hlog")).await?;
    f.write_all(&hlog).await?;
    f.flush().await?;
    let title = format!(
        "{}: single reads vs {}-read turns ({})",
        Path::new(&report.transcript)
            .file_name()
            .map_or(report.transcript.clone(), |f| f
                .to_string_lossy()
                .into_owned()),
        report.parallel,
        report.latency.as_deref().unwrap_or("live target")
    );
    let turn_label = format!("{}-read turn", report.parallel);
    let pred_label = format!("predicted F^{}", report.parallel);
    let svg = percentile_svg(
        &title,
        &[
            Curve {
                label: "single read",
                hist: &res.single,
                color: "#1f77b4",
                power: 1,
            },
            Curve {
                label: &turn_label,
                hist: &res.turn,
                color: "#d62728",
                power: 1,
            },
            Curve {
                label: &pred_label,
                hist: &res.single,
                color: "#2ca02c",
                power: report.parallel,
            },
        ],
    );
    tokio::fs::write(dir.join("latency.svg"), svg).await?;
    Ok(())
}
