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
use mcptape_replay::latency::{LatencyModel, MAX_DELAY_US, parse_duration_capped_us};
use mcptape_replay::report::{Curve, Tagged, percentile_svg, write_hlog};
use mcptape_replay::serve::ServeSummary;
use mcptape_transport::child::StdioChild;
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

/// Parses the duration flag `flag` (e.g. `--max-phase`) into µs, at most
/// `max_us`; the error names the flag, the value as typed, and the limit in
/// the unit typed (`--max-phase 3601s: 3601s is above the limit: at most 3600s`).
pub(crate) fn flag_duration_us(flag: &str, s: &str, max_us: u64) -> anyhow::Result<u64> {
    parse_duration_capped_us(s, max_us).map_err(|e| anyhow::anyhow!("{flag} {s}: {}", e.kind))
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
    let cfg = BenchConfig {
        reads: args.reads,
        turns: args.turns,
        parallel: args.parallel,
        deadline_us: flag_duration_us("--deadline", &args.deadline, MAX_DELAY_US)?,
        timeout_us: flag_duration_us("--timeout", &args.timeout, MAX_DELAY_US)?,
        load: match &args.rate {
            Some(r) => Load::Open {
                per_s: parse_rate(r)?,
            },
            None => Load::Closed {
                concurrency: args.concurrency,
            },
        },
        max_phase: Duration::from_micros(flag_duration_us(
            "--max-phase",
            &args.max_phase,
            bench::MAX_PHASE_US,
        )?),
    };
    anyhow::ensure!(
        cfg.deadline_us > 0,
        "--deadline {} must be longer than 0: every turn would be cancelled at once",
        args.deadline
    );
    anyhow::ensure!(
        cfg.timeout_us > 0,
        "--timeout {} must be longer than 0: it bounds every read and the handshake",
        args.timeout
    );
    anyhow::ensure!(
        cfg.timeout_us >= cfg.deadline_us,
        "--timeout {} is shorter than --deadline {}: a straggler is abandoned at the timeout only after the turn cancelled it at the deadline",
        args.timeout,
        args.deadline
    );
    anyhow::ensure!(
        !cfg.max_phase.is_zero(),
        "--max-phase {} must be longer than 0",
        args.max_phase
    );
    anyhow::ensure!(
        cfg.reads > 0 || cfg.turns > 0,
        "--reads 0 and --turns 0: nothing to measure"
    );
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
    if let Some(dir) = &args.out {
        check_out_dir(dir)?;
    }
    let mut child = None;
    // The session future borrows `child`; it is dropped when the select ends,
    // so the target's process group is ended on every exit path: success, an
    // error (`?`/`bail!`), a timeout, or SIGINT/SIGTERM/SIGHUP to mcptape.
    let r = tokio::select! {
        r = session(&args, cfg, tape, &mut child) => r,
        code = interrupted("bench") => Ok(code),
    };
    end_target(&mut child).await;
    r
}

/// The part of `mcptape bench` that runs with a target; it sets `child`
/// as soon as a stdio target is started, for the caller to end.
async fn session(
    args: &Args,
    cfg: BenchConfig,
    tape: mcptape_replay::tape::Tape,
    child: &mut Option<StdioChild>,
) -> anyhow::Result<ExitCode> {
    let transcript = args.transcript.display().to_string();
    let tmp = tempfile_path()?;
    let stderr_tail: StderrTail = Arc::default();
    let mut bridge_error = None;
    let (client, target, latency) = if let Some(url) = &args.target_url {
        let (stream, err) =
            mcptape_replay::http::bridge_reporting(url, tape.protocol_version.as_deref())?;
        bridge_error = Some(err);
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
        let ch = child.insert(spawn_target(cmd)?);
        let (Some(stdin), Some(stdout)) = (ch.stdin.take(), ch.stdout.take()) else {
            anyhow::bail!("target has no stdin/stdout pipes");
        };
        if let Some(err) = ch.stderr.take() {
            keep_stderr_tail(err, stderr_tail.clone());
        }
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
    if let Err(e) = bench::handshake(&client, &tape, Duration::from_micros(cfg.timeout_us)).await {
        let why = target_gone(child, &stderr_tail, bridge_error.as_ref()).await;
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
        target_gone(child, &stderr_tail, bridge_error.as_ref()).await
    } else {
        String::new()
    };

    // Close the session: the embedded server writes its --stats on exit.
    if let Ok(c) = Arc::try_unwrap(client) {
        c.close(Duration::from_secs(2)).await;
    }
    end_target(child).await;
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

/// Starts a stdio target (`sh -c CMD` or the embedded `mcptape serve`) as
/// the leader of its own process group, so [`end_target`] reaches a server
/// the shell or a launcher (`npx`, `uv run`) forked, not just the wrapper.
///
/// # Errors
/// The spawn error (`sh` or the mcptape binary not runnable).
pub(crate) fn spawn_target(mut cmd: tokio::process::Command) -> anyhow::Result<StdioChild> {
    cmd.process_group(0);
    let mut ch = mcptape_transport::child::spawn_command(cmd).context("starting the target")?;
    ch.own_group = true;
    Ok(ch)
}

/// Ends a target started by [`spawn_target`], if any is left: closes its
/// stdin, waits [`mcptape_transport::child::STDIN_CLOSE_GRACE`] (2 s), sends
/// SIGTERM to its process group, waits
/// [`mcptape_transport::child::SIGTERM_GRACE`] (2 s), then SIGKILL to the
/// group (MCP 2025-11-25 / 2026-07-28, Lifecycle › Shutdown › stdio). When
/// the leader has already exited, the rest of the group gets SIGKILL at once.
pub(crate) async fn end_target(child: &mut Option<StdioChild>) {
    let Some(mut ch) = child.take() else {
        return;
    };
    let _ = ch.shutdown().await;
    // The leader is reaped now; a server it forked that outlived it (or
    // ignored SIGTERM) may still be in the group.
    let _ = ch.kill_group();
}

/// Resolves when mcptape receives SIGINT, SIGTERM or SIGHUP (a stdio target
/// leads its own group, so it does not get the terminal's Ctrl-C itself and
/// must be ended by the caller), giving the exit status 128 + signal number.
/// Pends forever if no handler can be installed.
pub(crate) async fn interrupted(cmd: &str) -> ExitCode {
    use tokio::signal::unix::{SignalKind, signal};
    async fn one(kind: SignalKind) {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    }
    let (name, code) = tokio::select! {
        () = one(SignalKind::interrupt()) => ("SIGINT", 130),
        () = one(SignalKind::terminate()) => ("SIGTERM", 143),
        () = one(SignalKind::hangup()) => ("SIGHUP", 129),
    };
    eprintln!("mcptape {cmd}: {name}: stopping the target");
    ExitCode::from(code)
}

/// Checks before the run that `--out DIR` is (or can be made) a writable
/// directory, so a long run is not lost at the end.
fn check_out_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--out {}: exists and is not a directory (--out names a directory for report.json, latency.hlog, latency.svg)",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot create the directory", dir.display()))?;
    let probe = dir.join(format!(".mcptape-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("--out {}: directory is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The last [`STDERR_TAIL_BYTES`] of the target's stderr.
pub(crate) type StderrTail = Arc<std::sync::Mutex<Vec<u8>>>;

/// How much of a target's stderr is kept to explain its exit, bytes.
pub(crate) const STDERR_TAIL_BYTES: usize = 2048;

/// Drains `err` (so the child never blocks on a full pipe), keeping its tail.
pub(crate) fn keep_stderr_tail(mut err: tokio::process::ChildStderr, tail: StderrTail) {
    use tokio::io::AsyncReadExt;
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
            t.extend_from_slice(&buf[..n]);
            let extra = t.len().saturating_sub(STDERR_TAIL_BYTES);
            t.drain(..extra);
        }
    });
}

/// Why the target went away, for an error message: `; target exited with
/// exit status: 127 (stderr: …)` for a child, `; HTTP: …` for a URL, or
/// empty when unknown. Waits up to 1 s for a child's exit status.
pub(crate) async fn target_gone(
    child: &mut Option<StdioChild>,
    stderr_tail: &StderrTail,
    bridge_error: Option<&mcptape_replay::http::BridgeError>,
) -> String {
    let mut out = String::new();
    if let Some(e) = bridge_error.and_then(|e| e.lock().unwrap_or_else(|p| p.into_inner()).clone())
    {
        out.push_str(&format!("; {e}"));
    }
    if let Some(ch) = child.as_mut()
        && let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(1), ch.child.wait()).await
    {
        out.push_str(&format!("; target exited with {status}"));
        // Give the stderr drain a moment to read the last bytes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let tail = stderr_tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let tail = String::from_utf8_lossy(&tail);
        let tail = tail.trim();
        if !tail.is_empty() {
            out.push_str(&format!(" (stderr: {tail})"));
        }
    }
    out
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
