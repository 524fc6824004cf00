//! `mcptape bench --target-url` against real HTTP servers on 127.0.0.1: an
//! HTTP error status said at once, a dropped connection counted while the run
//! goes on (`mcptape serve --listen --fault drop-connection`), and the way a
//! straggler is cancelled per era (issue 14, "bench and verify against real
//! servers"). Bounded time, loopback only.

use crate::record_support as support;

use crate::http_support;

use std::process::Command;

use support::*;

/// `mcptape serve T --listen 127.0.0.1:PORT --latency L EXTRA...` on a free port.
fn serve_listen_with(transcript: &str, latency: &str, extra: &[&str]) -> (Guard, u16) {
    let port = free_port();
    let mut cmd = Command::new(mcptape());
    cmd.arg("serve")
        .arg(corpus_transcript(transcript))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--latency",
            latency,
        ])
        .args(extra);
    (spawn_listening(&mut cmd, port), port)
}

/// `mcptape bench TRANSCRIPT --target-url URL ARGS... --out DIR`: exit code,
/// stderr, report.json (Null when none was written).
fn bench(transcript: &str, url: &str, args: &[&str]) -> (Option<i32>, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["--target-url", url];
    all.extend_from_slice(args);
    let (o, _) = run_bench(&corpus_transcript(transcript), &all, Some(dir.path()));
    let report = json_or_null(&dir.path().join("report.json"));
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        report,
    )
}

#[test]
fn http_500_is_said_at_once() {
    let server = http_support::Http500::start("boom: database down");
    let url = server.url();
    let (code, err, r) = bench(
        "everything-http.jsonl",
        &url,
        &[
            "--reads",
            "5",
            "--turns",
            "2",
            "--parallel",
            "2",
            "--timeout",
            "10s",
            // Reads only: the server below counts the reads it saw.
            "--methods",
            "reads",
        ],
    );
    // 9 reads, each answered 500, none waited out (abandoned at the timeout).
    assert_eq!(r["errors"]["http-500"], 9, "{r} {err}");
    assert_eq!(r["abandoned"], 0, "{r}");
    assert_eq!(r["targetClosed"], false, "{r}");
    assert_eq!(code, Some(1), "no read got a result: {err}");
    assert!(
        server.reads() >= 9,
        "the server saw {} reads",
        server.reads()
    );
}

#[test]
fn dropped_connection_is_counted_and_the_run_goes_on() {
    let (_g, port) = serve_listen_with(
        "everything-http.jsonl",
        "fixed:1ms",
        &["--fault", "drop-connection@30%", "--seed", "7"],
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (_, err, r) = bench(
        "everything-http.jsonl",
        &url,
        &[
            "--reads",
            "40",
            "--turns",
            "5",
            "--parallel",
            "2",
            "--timeout",
            "3s",
        ],
    );
    let dropped = r["errors"]["connection-dropped"].as_u64().unwrap_or(0);
    assert!(dropped >= 1, "no dropped read counted: {r} {err}");
    assert!(dropped < 50, "{r}");
    assert_eq!(r["targetClosed"], false, "the run went on: {r} {err}");
    assert_eq!(r["turns"], 5, "every turn ran: {r}");
    let answered = r["single"]["count"].as_u64().unwrap();
    assert!(answered >= 10, "reads after the first drop answered: {r}");
    assert!(!err.contains("IncompleteMessage"), "{err}");
}

#[test]
fn stateless_http_straggler_is_cancelled_by_closing_the_stream() {
    let args = [
        "--reads",
        "2",
        "--turns",
        "2",
        "--parallel",
        "2",
        "--deadline",
        "10ms",
        "--timeout",
        "2s",
    ];
    // Serves TRANSCRIPT at a fixed 200 ms and benches it with `args`.
    let bench_cancelling = |transcript: &str| {
        let (_g, port) = serve_listen_with(transcript, "fixed:200ms", &[]);
        bench(transcript, &format!("http://127.0.0.1:{port}/mcp"), &args)
    };
    // 2026-07-28: no session; the straggler's stream is closed.
    let (_, err, r) = bench_cancelling("py-stdio-2026-07-28.jsonl");
    assert_eq!(r["cancellation"], "close-stream", "{r} {err}");
    assert_eq!(r["cancellations"], 4, "{r}");
    assert_eq!(
        r["lateResponses"], 0,
        "a closed stream brings no late answer: {r}"
    );
    // 2025 session era: notifications/cancelled is POSTed (the POST aborted too).
    let (_, err, r) = bench_cancelling("everything-http.jsonl");
    assert_eq!(r["cancellation"], "notification", "{r} {err}");
    assert_eq!(r["cancellations"], 4, "{r}");
}
