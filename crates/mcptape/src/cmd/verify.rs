//! `mcptape verify TRANSCRIPT --target-cmd 'CMD' | --target-url URL [--ignore JSONPOINTER...]`:
//! replay the recorded requests against a live server and diff each response semantically
//! against the recording (key order ignored, `id` ignored, `--ignore` pointers skipped).
//! Exit status 1 on any difference or unanswered request.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use mcptape_replay::bench::Client;
use mcptape_replay::error::record_label;
use mcptape_replay::latency::MAX_DELAY_US;
use tokio::time::Duration;

use crate::cmd::bench::{
    StderrTail, end_target, flag_duration_us, interrupted, keep_stderr_tail, spawn_target,
    target_gone,
};
use crate::cmd::serve::load_tape_noting_cut;
use mcptape_transport::child::StdioChild;

/// Arguments of `mcptape verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The recording to replay and compare against.
    pub transcript: PathBuf,
    /// A live stdio server command (run with `sh -c`).
    #[arg(
        long,
        value_name = "CMD",
        required_unless_present = "target_url",
        conflicts_with = "target_url"
    )]
    pub target_cmd: Option<String>,
    /// A live Streamable HTTP endpoint (loopback).
    #[arg(long, value_name = "URL")]
    pub target_url: Option<String>,
    /// JSON Pointer (RFC 6901) of a volatile member to ignore, `*` matching one segment
    /// (repeatable), e.g. /result/serverInfo/version or /result/contents/*/text.
    #[arg(long, value_name = "JSONPOINTER")]
    pub ignore: Vec<String>,
    /// Time (> 0, at most 60s) to wait for each response.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mcptape verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rt = super::runtime()?;
    let r = rt.block_on(run_async(args));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    r
}

async fn run_async(args: Args) -> anyhow::Result<ExitCode> {
    let (tape, cut) = load_tape_noting_cut(&args.transcript)?;
    let timeout =
        Duration::from_micros(flag_duration_us("--timeout", &args.timeout, MAX_DELAY_US)?);
    anyhow::ensure!(
        !timeout.is_zero(),
        "--timeout {} must be longer than 0",
        args.timeout
    );
    if let Some(c) = &cut {
        eprintln!("mcptape verify: warning: {c}");
    }
    for p in &args.ignore {
        anyhow::ensure!(
            p.is_empty() || p.starts_with('/'),
            "--ignore {p:?}: a JSON Pointer starts with '/'"
        );
        // RFC 6901 §3: `~` is only ever `~0` (for `~`) or `~1` (for `/`).
        let bad_escape = p
            .match_indices('~')
            .any(|(i, _)| !matches!(p.as_bytes().get(i + 1), Some(b'0' | b'1')));
        anyhow::ensure!(
            !bad_escape,
            "--ignore {p:?}: '~' must be followed by 0 or 1 in a JSON Pointer (RFC 6901: ~0 is '~', ~1 is '/')"
        );
    }
    let mut child = None;
    // The session future borrows `child` and is dropped when the select ends,
    // so the target's process group is ended on every exit path.
    let r = tokio::select! {
        r = session(&args, &tape, cut.as_deref(), timeout, &mut child) => r,
        code = interrupted("verify") => Ok(code),
    };
    end_target(&mut child).await;
    r
}

/// The part of `mcptape verify` that runs with a target; it sets `child` as
/// soon as the stdio target is started, for the caller to end.
async fn session(
    args: &Args,
    tape: &mcptape_replay::tape::Tape,
    cut: Option<&str>,
    timeout: Duration,
    child: &mut Option<StdioChild>,
) -> anyhow::Result<ExitCode> {
    let stderr_tail: StderrTail = Arc::default();
    let mut bridge_error = None;
    let client = if let Some(url) = &args.target_url {
        let (stream, err) =
            mcptape_replay::http::bridge_reporting(url, tape.protocol_version.as_deref())?;
        bridge_error = Some(err);
        let (r, w) = tokio::io::split(stream);
        Client::over(r, w)
    } else {
        let c = args.target_cmd.as_deref().unwrap_or_default();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c").arg(c);
        let ch = child.insert(spawn_target(cmd)?);
        let (Some(stdin), Some(stdout)) = (ch.stdin.take(), ch.stdout.take()) else {
            anyhow::bail!("target has no stdin/stdout pipes");
        };
        if let Some(err) = ch.stderr.take() {
            keep_stderr_tail(err, stderr_tail.clone());
        }
        Client::over(stdout, stdin)
    };
    let client = Arc::new(client);
    let rep = mcptape_replay::verify::verify(client.clone(), tape, &args.ignore, timeout).await?;
    let gone = if rep.closed_at.is_some() {
        target_gone(child, &stderr_tail, bridge_error.as_ref()).await
    } else {
        String::new()
    };
    if let Ok(c) = Arc::try_unwrap(client) {
        c.close(Duration::from_secs(2)).await;
    }
    end_target(child).await;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        for d in &rep.differences {
            println!(
                "{} {}: {}: recorded {} live {}",
                record_label(d.record),
                d.method,
                d.pointer,
                d.expected
                    .as_ref()
                    .map_or("(absent)".into(), |v| v.to_string()),
                d.actual
                    .as_ref()
                    .map_or("(absent)".into(), |v| v.to_string()),
            );
        }
        for r in &rep.unanswered {
            println!("{}: no response within {}", record_label(*r), args.timeout);
        }
        if !rep.not_recorded.is_empty() {
            println!(
                "{} request(s) have no recorded answer to compare with ({})",
                rep.not_recorded.len(),
                rep.not_recorded
                    .iter()
                    .map(|r| record_label(*r))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        println!(
            "verify: {} request(s), {} response(s) compared, {} difference(s), {} unanswered",
            rep.requests,
            rep.compared,
            rep.differences.len(),
            rep.unanswered.len()
        );
    }
    let mut failures = rep.failures();
    if let Some(c) = cut {
        failures.push(format!("the transcript was cut: {c}"));
    }
    for f in &failures {
        eprintln!("mcptape verify: {f}");
    }
    if !gone.is_empty() {
        eprintln!("mcptape verify: {}", gone.trim_start_matches([';', ' ']));
    }
    Ok(
        if rep.differences.is_empty() && rep.unanswered.is_empty() && failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}
