//! `mcptape verify TRANSCRIPT --target-cmd 'CMD' | --target-url URL [--ignore JSONPOINTER...]`:
//! replay the recorded requests against a live server and diff each response semantically
//! against the recording (key order ignored, `id` ignored, `--ignore` pointers skipped).
//! Exit status 1 on any difference or unanswered request; 2 when it could not run (bad flags,
//! unreadable transcript, a target that closed the connection before answering anything).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use mcptape_replay::config::{check_ignore_pointer, verify_timeout};
use mcptape_replay::error::record_label;
use mcptape_replay::target::{self, Target, TargetSpec};
use mcptape_replay::verify::{FirstNoise, Progress};
use tokio::time::Duration;

use crate::cmd::bench::stopped;
use crate::cmd::serve::load_tape_noting_cut;

/// Cap of `--max-time`: one hour, µs.
pub const MAX_VERIFY_TIME_US: u64 = 3_600_000_000;

/// Arguments of `mcptape verify`: a live target is required (`--target-cmd` unless
/// `--target-url`).
#[derive(Debug, clap::Args)]
#[command(mut_arg("target_cmd", |a| a.required_unless_present("target_url")))]
pub struct Args {
    /// The recording to replay and compare against.
    pub transcript: PathBuf,
    #[command(flatten)]
    pub live: super::TargetArgs,
    /// JSON Pointer (RFC 6901) of a volatile member to ignore, `*` matching one segment
    /// (repeatable), e.g. /result/serverInfo/version or /result/contents/*/text.
    #[arg(long, value_name = "JSONPOINTER")]
    pub ignore: Vec<String>,
    /// Time (> 0, at most 60s) to wait for each response.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        allow_hyphen_values = true
    )]
    pub timeout: String,
    /// Bound of the whole run (> 0, at most 3600s): when it runs out, the request waiting is
    /// counted unanswered, the rest are not sent, and the run fails saying so.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "60s",
        allow_hyphen_values = true
    )]
    pub max_time: String,
    #[command(flatten)]
    pub report: super::FormatArgs,
}

/// Runs `mcptape verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::block_on(run_async(args))
}

async fn run_async(args: Args) -> anyhow::Result<ExitCode> {
    // Verify replays against this machine only: refused before anything starts.
    args.live.check_loopback()?;
    let (tape, cut) = load_tape_noting_cut(&args.transcript)?;
    let timeout = verify_timeout(&args.timeout)?;
    let max_time = super::flag_duration_above_0("--max-time", &args.max_time, MAX_VERIFY_TIME_US)?;
    if let Some(c) = &cut {
        eprintln!("mcptape verify: warning: {c}");
    }
    for n in crate::cmd::serve::batch_notes(&args.transcript, &tape) {
        eprintln!("mcptape verify: warning: {n}");
    }
    for p in &args.ignore {
        check_ignore_pointer(p)?;
    }
    let mut target = Target::new();
    // The session future borrows `target` and is dropped when the select ends,
    // so the target's process group is ended on every exit path.
    let r = tokio::select! {
        r = session(&args, &tape, cut.as_deref(), (timeout, max_time), &mut target) => r,
        sig = target::interrupted() => Ok(stopped("verify", sig)),
    };
    target.end().await;
    r
}

/// The part of `mcptape verify` that runs with a target; `target` is started here and ended
/// by the caller.
async fn session(
    args: &Args,
    tape: &mcptape_replay::tape::Tape,
    cut: Option<&str>,
    (timeout, max_time): (Duration, Duration),
    target: &mut Target,
) -> anyhow::Result<ExitCode> {
    // A stdio target's session is observed for the first line that is not JSON, so a target
    // that answers with something else is shown, not only waited out.
    let noise = Arc::new(FirstNoise::default());
    let client = match (&args.live.target_url, &args.live.target_cmd) {
        (Some(url), _) => target.connect(
            &TargetSpec::Url(url.clone()),
            tape.protocol_version.as_deref(),
        )?,
        (None, c) => {
            let spec = TargetSpec::Shell(c.clone().unwrap_or_default());
            let (r, w) = target.start(&spec, tape.protocol_version.as_deref())?;
            Arc::new(noise.session(r, w))
        }
    };
    let bar = super::progress::bar(0, "{spinner} verify {pos}/{len} {msg} {elapsed}");
    let timeout_text = args.timeout.clone();
    // Off a terminal: a status line every 10 s (requests sent of all, unanswered).
    let counts = Arc::new([
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    ]);
    let live = counts.clone();
    let _status = super::progress::StatusLines::start("verify", move || {
        use std::sync::atomic::Ordering::Relaxed;
        format!(
            "requests: sent {} of {}, unanswered {}",
            live[0].load(Relaxed),
            live[1].load(Relaxed),
            live[2].load(Relaxed)
        )
    })?;
    let progress = move |p: Progress<'_>| match p {
        Progress::Sent { n, of, method, .. } => {
            use std::sync::atomic::Ordering::Relaxed;
            counts[0].store(n, Relaxed);
            counts[1].store(of, Relaxed);
            bar.set_length(of as u64);
            bar.set_position(n as u64);
            bar.set_message(method.to_owned());
        }
        Progress::Unanswered { record, method } => {
            counts[2].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            bar.suspend(|| {
                eprintln!(
                    "mcptape verify: {} {method}: no response within {timeout_text}; going on",
                    record_label(record)
                );
            })
        }
        _ => {}
    };
    let rep = mcptape_replay::verify::verify(
        client.clone(),
        tape,
        &args.ignore,
        timeout,
        max_time,
        &progress,
    )
    .await;
    let mut rep = rep?;
    rep.first_noise_line = noise.first();
    let gone = if rep.closed_at.is_some() {
        target.gone_reason().await
    } else {
        String::new()
    };
    if let Ok(c) = Arc::try_unwrap(client) {
        c.close(Duration::from_secs(2)).await;
    }
    target.end().await;
    let mut text = String::new();
    if args.report.json() {
        text = format!("{}\n", serde_json::to_string_pretty(&rep)?);
    } else {
        use std::fmt::Write as _;
        for d in &rep.differences {
            let _ = writeln!(
                text,
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
            if rep.closed_at == Some(*r) {
                let _ = writeln!(
                    text,
                    "{}: no response: the target closed the connection",
                    record_label(*r)
                );
            } else if rep.out_of_time_at == Some(*r) {
                let _ = writeln!(
                    text,
                    "{}: no response before --max-time {}",
                    record_label(*r),
                    args.max_time
                );
            } else {
                let _ = writeln!(
                    text,
                    "{}: no response within {}",
                    record_label(*r),
                    args.timeout
                );
            }
        }
        if rep.noise_lines > 0 {
            let _ = writeln!(
                text,
                "{} line(s) from the target are not JSON (they answer nothing){}",
                rep.noise_lines,
                rep.first_noise_line
                    .as_deref()
                    .map(|l| format!("; the first: {l:?}"))
                    .unwrap_or_default()
            );
        }
        if !rep.not_recorded.is_empty() {
            let _ = writeln!(
                text,
                "{} request(s) have no recorded answer to compare with ({})",
                rep.not_recorded.len(),
                rep.not_recorded
                    .iter()
                    .map(|r| record_label(*r))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        // Recorded batches are never replayed: said in the count, not only in the warnings.
        let batches = rep.batches_skipped;
        let _ = writeln!(
            text,
            "verify: {} request(s), {} response(s) compared, {} difference(s), {} unanswered{}{}",
            rep.requests,
            rep.compared,
            rep.differences.len(),
            rep.unanswered.len(),
            if rep.not_sent > 0 {
                format!(", {} not sent (--max-time {})", rep.not_sent, args.max_time)
            } else {
                String::new()
            },
            if batches > 0 {
                format!(
                    "; {batches} recorded JSON-RPC batch(es) skipped, {} request(s) in them not sent",
                    rep.batched_requests_not_sent
                )
            } else {
                String::new()
            }
        );
    }
    super::print_stdout(&text)?;
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
    // Could not run (exit 2), not "differences found" (exit 1): the target went away before it
    // answered anything (a command that fails to start or exits at once, a URL where nothing
    // listens). The lines above say why.
    anyhow::ensure!(
        !(rep.compared == 0 && rep.not_recorded.is_empty() && rep.closed_at.is_some()),
        "verify could not run: the target closed the connection before answering any request"
    );
    Ok(
        if rep.differences.is_empty() && rep.unanswered.is_empty() && failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}
