//! `--timer-priority` (issue 13): the scheduling policy of the timer thread
//! that writes delayed replies is asked for as flagged and reported as got,
//! in `serve --stats` (`timerPolicy`) and in the bench report.

use crate::record_support as support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::*;

const CORPUS: &str = "corpus/transcripts/everything-stdio.jsonl";

/// `mcptape bench CORPUS ARGS...` (`--out OUT` last when given) within 120 s: its output.
fn bench(args: &[&str], out: Option<&Path>) -> std::process::Output {
    run_bench(&repo_root().join(CORPUS), args, out).0
}

/// [`bench`] with `--out` a new temp dir; the run must succeed: (the dir, the output).
fn bench_ok(args: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let o = bench(args, Some(dir.path()));
    assert_success(&o, "bench");
    (dir, o)
}

/// `serve --stats F --timer-priority P` with stdin closed at once: (output, stats JSON).
fn serve_stats(priority: &str) -> (std::process::Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let mut cmd = Command::new(mcptape());
    cmd.arg("serve")
        .arg(repo_root().join(CORPUS))
        .args([
            "--latency",
            "fixed:1ms",
            "--timer-priority",
            priority,
            "--stats",
        ])
        .arg(&stats);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    (o, json_or_null(&stats))
}

#[test]
fn serve_timer_priority_normal_is_reported_as_sched_other_in_stats() {
    let (o, stats) = serve_stats("normal");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stats["timerPolicy"],
        "SCHED_OTHER (--timer-priority normal)"
    );
}

/// `realtime` either gets SCHED_FIFO (and says so) or refuses to serve,
/// naming the OS's refusal; it never runs at the normal policy unsaid.
#[test]
fn serve_timer_priority_realtime_gets_fifo_or_refuses_to_start() {
    let (o, stats) = serve_stats("realtime");
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        assert_eq!(stats["timerPolicy"], "SCHED_FIFO priority 1", "{err}");
    } else {
        assert!(
            err.contains("--timer-priority realtime: SCHED_OTHER (SCHED_FIFO refused"),
            "{err}"
        );
        assert!(stats.is_null(), "no stats after a refused start: {stats}");
    }
}

/// `auto` reports what it got, one of the two documented forms, in the bench
/// report's server section (human text and JSON agree).
#[test]
fn bench_reports_the_embedded_servers_timer_policy() {
    let (dir, o) = bench_ok(&["--reads", "5", "--turns", "1", "--latency", "fixed:1ms"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let report = read_json(&dir.path().join("report.json"));
    let policy = report["server"]["timerPolicy"].as_str().unwrap().to_owned();
    assert!(
        policy == "SCHED_FIFO priority 1"
            || policy.starts_with("SCHED_OTHER (SCHED_FIFO refused: "),
        "{policy}"
    );
    assert!(
        stdout.contains(&format!("timer thread: {policy}")),
        "{stdout}"
    );

    // And `normal` is passed through to the embedded child.
    let (_dir, o) = bench_ok(&words(
        "--reads 5 --turns 1 --latency fixed:1ms --timer-priority normal",
    ));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("timer thread: SCHED_OTHER (--timer-priority normal)"),
        "{stdout}"
    );
}

/// Regression (found while merging logs): a single read's send time was taken after the
/// request was queued, so a bench thread preempted in between measured a 1 ms reply as 2 µs.
/// No reply comes before the model's delay: every latency of a `fixed:2ms` run is ≥ 2 ms.
#[test]
fn bench_single_reads_are_never_faster_than_a_fixed_model() {
    let (dir, _) = bench_ok(&["--reads", "200", "--turns", "20", "--latency", "fixed:2ms"]);
    let log = std::fs::read(dir.path().join("latency.hlog")).unwrap();
    let read = mcptape_report::render::hlog::read_hlog(&log).unwrap();
    let mut seen = 0;
    for t in &read.tags {
        if t.tag.starts_with("single") || t.tag.starts_with("turn") {
            assert!(t.hist.min() >= 2000, "{}: min {} µs", t.tag, t.hist.min());
            seen += t.hist.len();
        }
    }
    assert!(seen >= 220, "{seen}");
}

/// Fresh-user report (session 3): the main job's output wrapped on a 120-column terminal (lines
/// of up to 153 columns), and with `--turns 0` it still printed a predicted deadline share.
/// Issue 28: within 80 columns, the target line too.
#[test]
fn bench_output_stays_within_80_columns_and_says_no_turn_prediction_without_turns() {
    for args in [
        &["--reads", "100", "--turns", "20", "--latency", "fixed:1ms"][..],
        &[
            "--reads",
            "60",
            "--turns",
            "0",
            "--latency",
            "fixed:1ms",
            "--fault",
            "error=-32603@5%",
        ][..],
    ] {
        let o = bench(args, None);
        let stdout = String::from_utf8_lossy(&o.stdout);
        for line in stdout.lines() {
            assert!(
                line.chars().count() <= 80,
                "{args:?}: {} columns: {line}",
                line.chars().count()
            );
        }
        let turns = args[3] != "0";
        assert_eq!(
            stdout.contains("turns hitting the deadline"),
            turns,
            "{args:?}: {stdout}"
        );
        // One screen: 40 lines for the reads and turns, plus the by-method section (three
        // methods and at most MAX_NAME_ROWS = 5 URIs, each with its error line).
        assert!(stdout.lines().count() <= 60, "{args:?}: {stdout}");
    }
}
