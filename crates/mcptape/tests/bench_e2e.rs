//! `mcptape bench` against `mcptape serve` over real stdio (the built binary
//! starts itself as the server child), on the shipped real recording.

use crate::hdrh_python;
use crate::record_support as support;

use std::process::Command;
use std::time::Duration;

use support::*;

/// Runs `bench` on a shipped transcript; returns (exit ok, stdout, stderr, report.json).
fn bench_on(
    transcript: &str,
    args: &[&str],
    out: &std::path::Path,
) -> (bool, String, String, serde_json::Value) {
    let (o, _) = run_bench(&repo_root().join(transcript), args, Some(out));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let report = json_or_null(&out.join("report.json"));
    (o.status.success(), stdout, stderr, report)
}

/// `bench` on the shipped recording `name` (`corpus/transcripts/NAME`) with `line` split at
/// white space, into a new temp dir, expected to succeed: (the dir, stdout, report.json).
fn bench_ok(name: &str, line: &str) -> (tempfile::TempDir, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let transcript = format!("corpus/transcripts/{name}");
    let (ok, stdout, stderr, report) = bench_on(&transcript, &words(line), dir.path());
    assert!(ok, "bench {name} {line} failed:\n{stdout}\n{stderr}");
    (dir, stdout, report)
}

/// [`bench_ok`] on everything-stdio.jsonl.
fn bench_in(line: &str) -> (tempfile::TempDir, String, serde_json::Value) {
    bench_ok("everything-stdio.jsonl", line)
}

/// `mcptape bench corpus/transcripts/everything-stdio.jsonl ARGS...` within 60 s: its output and
/// how long it took.
fn bench_stdio_run(args: &[&str]) -> (std::process::Output, Duration) {
    run_bench_within(
        &corpus_transcript("everything-stdio.jsonl"),
        args,
        None,
        Duration::from_secs(60),
    )
}

fn bench(args: &[&str], out: &std::path::Path) -> (String, serde_json::Value) {
    let (ok, stdout, stderr, report) =
        bench_on("corpus/transcripts/everything-stdio.jsonl", args, out);
    assert!(ok, "bench failed:\n{stdout}\n{stderr}");
    (stdout, report)
}

/// Runs `bench` on everything-stdio.jsonl expecting a non-zero exit.
fn bench_failing(args: &[&str], out: &std::path::Path) -> (String, String, serde_json::Value) {
    let (ok, stdout, stderr, report) =
        bench_on("corpus/transcripts/everything-stdio.jsonl", args, out);
    assert!(!ok, "bench should have failed:\n{stdout}\n{stderr}");
    (stdout, stderr, report)
}

/// [`bench_failing`] with `line` split at white space, into a new temp dir: (the dir, stdout,
/// stderr, report).
fn bench_failing_in(line: &str) -> (tempfile::TempDir, String, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr, report) = bench_failing(&words(line), dir.path());
    (dir, stdout, stderr, report)
}

#[test]
fn bench_against_serve_over_stdio_reports_single_reads_turns_and_the_prediction() {
    // Reads only (`--methods reads`): the resources/list and templates/list of the recording
    // are left out, so the counts below are the 12 recorded reads'.
    let (dir, stdout, r) =
        bench_in("--latency fixed:3ms --reads 40 --turns 20 --parallel 4 --methods reads");
    assert_eq!(r["single"]["count"], 40);
    assert_eq!(r["turns"], 20);
    assert_eq!(r["turn"]["count"], 20);
    // A 3 ms server delay cannot be answered faster.
    assert!(r["single"]["p50Us"].as_u64().unwrap() >= 3_000, "{r}");
    assert!(r["turn"]["p50Us"].as_u64().unwrap() >= 3_000, "{r}");
    assert_eq!(r["turnsHitDeadline"], 0);
    // The embedded server's own figures: handshake + 40 + 80 reads, all matched.
    let s = &r["server"];
    assert_eq!(s["requests"], 121, "{r}");
    assert_eq!(s["matched"], 121);
    assert_eq!(s["model"], "fixed:3ms");
    assert_eq!(
        s["intended"]["p50Us"].as_u64().unwrap() / 8,
        3_000 / 8,
        "{s}"
    );
    assert!(s["achieved"]["p50Us"].as_u64().unwrap() >= 3_000);
    // 12 recorded reads, one of them server-everything's recorded -32602 not-found (it sends no data.uri): 40/12 → 3 or 4, turns 80/12 → 6 or 7.
    let class = "invalid-params (-32602, no data.uri)";
    let all = r["errors"][class].as_u64().unwrap();
    assert!((9..=11).contains(&all), "{r}");
    // The turn section lists the turn phase's own (not both phases added).
    let not_found = r["turnPhase"]["errorAnswers"][class].as_u64().unwrap();
    assert!((6..=7).contains(&not_found), "{r}");
    assert_eq!(
        all,
        not_found + r["singlePhase"]["errorAnswers"][class].as_u64().unwrap(),
        "{r}"
    );
    // ... and the table says these errors are the recording's own, and how
    // errors count (fresh-user report: "errors by class ... 125" unexplained).
    assert_eq!(r["recordedReads"], 12, "{r}");
    assert_eq!(r["recordedReadErrors"], 1, "{r}");
    assert_has(
        &stdout,
        &format!(
            "errors by class: invalid-params (-32602, no data.uri): {not_found}\n    (as recorded: 1 of the 12 recorded reads is an error, replayed each cycle)"
        ),
    );
    assert_has(
        &stdout,
        "all reads = results + error answers + timeouts (censored: `> bound`);\n  answered ok = results only",
    );
    // Issue 12: the headline gives the success ratio; the recorded error is not "ok".
    assert_eq!(r["singlePhase"]["sent"], 40);
    assert_eq!(
        r["singleOk"]["count"].as_u64().unwrap(),
        40 - r["singlePhase"]["errorAnswers"]["invalid-params (-32602, no data.uri)"]
            .as_u64()
            .unwrap()
    );
    // 40 reads: 40 × (1 − 0.99^(1/4)) = 0.1 reads above the 99.75th percentile; 10 / 0.00251 = 3985.
    assert_has(
        &stdout,
        "(predicted p99 = the single reads' 99.75th percentile;\n   0.1 of 40 reads lie above it: noisy; --reads 3985 puts 10 there)",
    );
    // Both predicted percentiles are beside the measured ones.
    let pred = r["prediction"].as_array().unwrap();
    assert_eq!(pred.len(), 2);
    assert_has_all(&stdout, &["predicted F^4", "single reads"]);
    // .hlog parses back (tag "single") with the same count; the SVG has both curves.
    let hlog = std::fs::read(dir.path().join("latency.hlog")).unwrap();
    let h = mcptape_report::render::merge_hlog(&hlog).unwrap();
    assert_eq!(h.len(), 40);
    let svg = std::fs::read_to_string(dir.path().join("latency.svg")).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 3);
    assert_eq!(svg.matches("stroke-dasharray").count(), 1);
}

/// Issue 28: the README's main job, as written (no flags), prints a table whose every line fits
/// 80 columns (it was 94, then 101 with the server lines), headed by the replay's outcome
/// (the recording's own not-found read is not an error rate).
#[test]
fn main_job_table_fits_80_columns_and_its_headline_says_answered_as_recorded() {
    let (o, _) = bench_stdio_run(&[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}\n{stdout}",
            line.chars().count()
        );
    }
    assert_has(
        &stdout,
        // The single phase cycles the 14 recorded requests (resources/list, templates/list,
        // 12 reads): 21 cycles reach the not-found read (it said `single reads` and `all reads`
        // over the list calls, and the README said 275/25, the reads-only figures).
        "single requests (closed-loop, concurrency 1):\n  300 of 300 answered as recorded: 279 results, 21 recorded errors\n",
    );
    assert_has(
        &stdout,
        "  reads 1200 of 1200 answered as recorded: 1100 results, 100 recorded errors\n",
    );
    // Every section is there: the rows, the turns, the server side.
    for want in [
        "  all requests   ",
        "by method (single phase, mix recorded)",
        "  uri (resources/read), the 5 slowest by p99 of 12",
        "    … 7 more in report.json (byUri) and report.html",
        "  answered ok   ",
        "all requests = results + error answers + timeouts",
        "predicted F^4",
        "server-side delay",
    ] {
        assert_has(&stdout, want);
    }
    // The precision verdict is there; which one depends on the machine's load (a busy 2-core
    // machine makes the replay late: FLAGGED is the table telling the truth, not a failure).
    assert!(
        stdout.contains("precision ok") || stdout.contains("FLAGGED: replay lateness"),
        "{stdout}"
    );
}

#[test]
fn bench_cancels_stalled_reads_at_the_deadline_and_abandons_them_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // No read completes: the report is written, then bench exits non-zero.
    let (stdout, stderr, r) = bench_failing(
        &words(
            "--latency fixed:1ms --fault stall=100% --reads 2 --turns 2 --parallel 2 --deadline 100ms --timeout 300ms",
        ),
        dir.path(),
    );
    assert_eq!(r["turnsHitDeadline"], 2);
    // 2 single reads cancelled at their timeout + 2×2 turn stragglers at the deadline.
    assert_eq!(r["cancellations"], 6);
    assert_eq!(r["abandoned"], 6);
    assert_eq!(r["lateResponses"], 0);
    // Timeouts: the 2 single reads and the 4 abandoned stragglers.
    assert_eq!(r["errors"]["timeout"], 6);
    assert_eq!(r["singlePhase"]["timedOut"], 2);
    assert_eq!(r["turnPhase"]["timedOut"], 4);
    assert_eq!(r["turnPhase"]["cancellationsSent"], 4);
    // The timed-out single reads are in the distribution, censored at 300 ms.
    assert_eq!(r["single"]["count"], 2);
    assert_eq!(r["single"]["censored"]["boundUs"], 300_000);
    // The latency cells are in ms, the unit in the header.
    assert_has_all(&stdout, &["latency (ms)", "> 300 "]);
    assert_eq!(r["server"]["stalled"], 6);
    assert!(r["turn"]["p50Us"].as_u64().unwrap() >= 100_000);
    // An empty histogram has no p50: `n/a`, never 0.000 (ms).
    assert_has(&stdout, "n/a");
    assert!(!stdout.contains(" 0.000 "), "{stdout}");
    assert_has(&stderr, "single reads: 2 sent, none answered with a result");
}

#[test]
fn bench_same_seed_same_server_schedule() {
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let args = [
        "--latency",
        "lognormal:p50=2ms,p99=6ms",
        "--reads",
        "30",
        "--turns",
        "5",
        "--seed",
        "9",
    ];
    let (_, a) = bench(&args, d1.path());
    let (_, b) = bench(&args, d2.path());
    // The drawn (scheduled) delays are the same; achieved ones depend on the machine.
    assert_eq!(a["server"]["intended"], b["server"]["intended"]);
}

#[test]
fn bench_open_loop_rate_and_an_empirical_model_from_an_earlier_runs_hlog() {
    let (d1, _, a) = bench_in("--latency fixed:2ms --rate 200/s --reads 30 --turns 5");
    assert_eq!(a["single"]["count"], 30);
    assert!(
        a["load"].as_str().unwrap().starts_with("open-loop 200/s"),
        "{a}"
    );
    // The earlier run's single-read HdrHistogram drives the server now.
    let d2 = tempfile::tempdir().unwrap();
    let model = format!("empirical:{}", d1.path().join("latency.hlog").display());
    let (_, b) = bench(
        &["--latency", &model, "--reads", "20", "--turns", "5"],
        d2.path(),
    );
    assert_eq!(b["server"]["model"], serde_json::json!(model));
    // Every drawn delay comes from the earlier distribution (all ≥ its 2 ms floor).
    assert!(
        b["server"]["intended"]["p50Us"].as_u64().unwrap() >= 2_000,
        "{b}"
    );
    assert!(b["server"]["modelP50Us"].as_f64().unwrap() >= 2_000.0);
}

#[test]
fn bench_rejects_parallel_past_the_limit() {
    let (o, _) = bench_stdio_run(&["--parallel", "1025"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--parallel must be 1..=1024"));
}

#[test]
fn bench_stops_when_a_drop_connection_fault_closes_the_stdio_session() {
    let (_dir, _, stderr, r) =
        bench_failing_in("--latency fixed:1ms --fault drop-connection@100% --reads 50 --turns 10");
    // The handshake is exempt from faults; the first read drops the session.
    assert_eq!(r["errors"]["closed"], 1, "{r}");
    assert_eq!(r["single"]["count"], 0);
    assert_eq!(r["turns"], 0);
    assert_eq!(r["server"]["dropped"], 1);
    assert_has_all(
        &stderr,
        &[
            "the target closed the connection during the run",
            "target exited with exit status: 3",
        ],
    );
}

#[test]
fn bench_falls_back_from_server_discover_to_initialize_on_the_shipped_fallback_recording() {
    let (_dir, _, r) = bench_ok(
        "crawl-everything-http-2026-07-28-fallback.jsonl",
        "--latency fixed:1ms --reads 5 --turns 2",
    );
    assert_eq!(r["single"]["count"], 5, "{r}");
    // server/discover (its recorded -32000 rejection) + initialize + 5 + 2×4 reads.
    assert_eq!(r["server"]["requests"], 2 + 5 + 8, "{r}");
    assert_eq!(r["server"]["unmatched"], 0, "{r}");
}

#[test]
fn bench_cut_transcript_warning_reaches_the_report_and_a_stale_slo_xml_is_removed() {
    // A transcript cut mid-line (the last 25 bytes of the shipped recording gone): the reader
    // drops the cut line and says so on stderr; report.json's warnings must say it too.
    let dir = tempfile::tempdir().unwrap();
    let full =
        std::fs::read(repo_root().join("corpus/transcripts/everything-stdio.jsonl")).unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, &full[..full.len() - 25]).unwrap();
    let out = dir.path().join("out");
    let run = |args: &[&str]| {
        let (o, _) = run_bench(&cut, args, Some(&out));
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{stderr}");
        (stderr, json_or_null(&out.join("report.json")))
    };
    let (stderr, r) = run(&words(
        "--latency fixed:1ms --reads 20 --turns 2 --slo read.p99<60s",
    ));
    assert_has(&stderr, "is cut and was dropped");
    let warnings = r["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("is cut and was dropped")),
        "{r}"
    );
    assert!(
        out.join("slo.xml").is_file(),
        "the --slo run writes slo.xml"
    );
    // The same --out again without --slo: the earlier run's verdict is removed, not left
    // beside this run's report.
    let (stderr, _) = run(&["--latency", "fixed:1ms", "--reads", "20", "--turns", "2"]);
    assert!(
        !out.join("slo.xml").exists(),
        "stale slo.xml kept: {stderr}"
    );
    assert_has(&stderr, "slo.xml of an earlier run");
}

/// Fresh-user report: on a transcript cut by a crash before the reply to its not-found read,
/// `bench` counted the answers the embedded `serve` synthesized for that read as "answered
/// otherwise than recorded", and the server line `requests 41  matched 39  unmatched 0` did not
/// add up. Now the requests with no recorded answer are counted apart (per phase, per method,
/// never as not-as-recorded) and the server line names every part: matched + synthesized +
/// unmatched + ... = requests, in the table, report.json and report.html.
/// everything-stdio.jsonl cut `bytes` into its line `line` (1-based), in `dir`.
fn cut_inside_line(dir: &std::path::Path, line: usize, bytes: usize) -> std::path::PathBuf {
    let full =
        std::fs::read(repo_root().join("corpus/transcripts/everything-stdio.jsonl")).unwrap();
    let start = full
        .split_inclusive(|&b| b == b'\n')
        .take(line - 1)
        .map(<[u8]>::len)
        .sum::<usize>();
    let cut = dir.join("cut.jsonl");
    std::fs::write(&cut, &full[..start + bytes]).unwrap();
    cut
}

/// Runs `bench` on `cut` into `dir/out`, expected to succeed: (stdout, report.json, out dir).
fn bench_cut(
    cut: &std::path::Path,
    args: &str,
    dir: &std::path::Path,
) -> (String, serde_json::Value, std::path::PathBuf) {
    let out = dir.join("out");
    let (o, _) = run_bench(cut, &words(args), Some(&out));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (stdout, json_or_null(&out.join("report.json")), out)
}

/// The phase's counts add up to `sent`, each request in one class.
fn assert_partition(c: &serde_json::Value) {
    let n = |k: &str| c[k].as_u64().unwrap_or(0);
    let errors = error_answers(c);
    let classes = n("answeredOk") + errors + n("noRecordedAnswer") + n("timedOut") + n("closed");
    assert_eq!(classes, n("sent"), "{c}");
}

#[test]
fn regression_bench_cut_inside_line_9_synthesized_results_are_not_answered_ok() {
    let dir = tempfile::tempdir().unwrap();
    // Cut inside the recorded resources/list reply: every answer is synthesized.
    let cut = cut_inside_line(dir.path(), 9, 100);
    let (stdout, r, out) = bench_cut(&cut, "--latency fixed:1ms --reads 10 --turns 2", dir.path());
    let single = &r["singlePhase"];
    assert_eq!(single["sent"], 10, "{r}");
    assert_eq!(single["answeredOk"], 0, "{r}");
    assert_eq!(single["noRecordedAnswer"], 10, "{r}");
    assert_partition(single);
    assert_has(
        &stdout,
        "0 of 10 answered ok (0.0 %), 10 with no recorded answer\n",
    );
    assert!(!stdout.contains("100.0 %"), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<th>no recorded answer</th>"), "report.html");
    let hlog = std::fs::read_to_string(out.join("latency.hlog")).unwrap();
    assert!(hlog.contains(r#""answeredOk":0"#), "{hlog}");
    assert!(hlog.contains(r#""noRecordedAnswer":10"#), "{hlog}");
}

#[test]
fn regression_bench_cut_inside_line_13_runs_the_turns_and_does_not_warn_they_were_not() {
    let dir = tempfile::tempdir().unwrap();
    // Cut inside the first read's reply: the reads are there, their answers are not.
    let cut = cut_inside_line(dir.path(), 13, 60);
    let (stdout, r, _) = bench_cut(
        &cut,
        "--latency fixed:1ms --reads 14 --turns 2 --parallel 4",
        dir.path(),
    );
    let turn = &r["turnPhase"];
    assert_eq!(turn["sent"], 8, "{r}");
    assert_eq!(turn["noRecordedAnswer"], 8, "{r}");
    assert_eq!(turn["errorAnswers"], serde_json::json!({}), "{r}");
    assert_partition(turn);
    assert_partition(&r["singlePhase"]);
    assert!(!stdout.contains("were not run"), "{stdout}");
    assert!(!r["warnings"].to_string().contains("were not run"), "{r}");
}

#[test]
fn regression_bench_turn_section_errors_by_class_are_the_turn_phases_not_both_added() {
    let (_dir, stdout, r) = bench_in("--latency fixed:1ms --reads 24 --turns 6 --parallel 4");
    let class = "invalid-params (-32602, no data.uri)";
    let turn = r["turnPhase"]["errorAnswers"][class].as_u64().unwrap();
    let single = r["singlePhase"]["errorAnswers"][class].as_u64().unwrap();
    assert!(turn > 0 && single > 0, "{r}");
    assert_eq!(r["errors"][class].as_u64().unwrap(), turn + single, "{r}");
    let section = stdout.split("4-read turns").nth(1).unwrap();
    assert_has(section, &format!("errors by class: {class}: {turn}\n"));
}

#[test]
fn regression_bench_cut_transcript_counts_synthesized_replies_apart() {
    let dir = tempfile::tempdir().unwrap();
    let full =
        std::fs::read(repo_root().join("corpus/transcripts/everything-stdio.jsonl")).unwrap();
    // Cut 44 bytes into line 35, the recorded reply to the not-found read (id 15).
    let line35 = full
        .split_inclusive(|&b| b == b'\n')
        .take(34)
        .map(<[u8]>::len)
        .sum::<usize>();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, &full[..line35 + 44]).unwrap();
    let out = dir.path().join("out");
    let (o, _) = run_bench(
        &cut,
        &words("--latency fixed:1ms --reads 28 --turns 2"),
        Some(&out),
    );
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r = json_or_null(&out.join("report.json"));
    // Two cycles of the 14 recorded requests: the not-found read twice, with no recorded answer.
    let single = &r["singlePhase"];
    assert_eq!(single["sent"], 28, "{r}");
    assert_eq!(single["noRecordedAnswer"], 2, "{r}");
    let read = element(&r["byMethod"], "method", "resources/read");
    assert_eq!(read["notAsRecorded"], 0, "{r}");
    assert_eq!(read["noRecordedAnswer"], 2, "{r}");
    assert!(
        !stdout.contains("answered otherwise than recorded"),
        "{stdout}"
    );
    assert_has(
        &stdout,
        "      2 with no recorded answer (the recording lost it or never had one)\n",
    );
    // The server's side: every request counted once, the synthesized ones in their own term.
    let sv = &r["server"];
    let n = |k: &str| sv[k].as_u64().unwrap_or_else(|| panic!("{k}: {sv}"));
    let synthesized = n("requests") - n("matched");
    assert_eq!(sv["synthesized"]["resources/read"], synthesized, "{sv}");
    assert_eq!(
        synthesized,
        // Absent when none of the turn reads was the unanswered one.
        2 + r["turnPhase"]["noRecordedAnswer"].as_u64().unwrap_or(0),
        "{r}"
    );
    for k in [
        "unmatched",
        "rejectedUri",
        "invalid",
        "crashed",
        "stalled",
        "injectedErrors",
        "dropped",
    ] {
        assert_eq!(n(k), 0, "{k}: {sv}");
    }
    let line = format!(
        "  requests {} = matched {} + synthesized {synthesized} + unmatched 0 + rejected uri 0\n",
        n("requests"),
        n("matched")
    );
    assert_has(&stdout, &line);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains(&format!(
            "matched {} + synthesized {synthesized} +",
            n("matched")
        )),
        "report.html"
    );
    // The page's phase lines count them apart too, not as answered otherwise than recorded.
    assert!(!html.contains("; not as recorded:"), "report.html");
    assert!(html.contains("2 sent with no recorded answer (compared with nothing): 2 not-found"));
    // And so does the time series, interval by interval.
    let in_series: u64 = r["timeSeries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["phase"] == "single")
        .flat_map(|p| {
            p["errorsWithoutRecordedAnswer"]
                .as_object()
                .into_iter()
                .flatten()
        })
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert_eq!(in_series, 2, "{r}");
}

#[test]
fn bench_max_phase_cut_is_reported_in_the_table_and_the_json() {
    let (_dir, stdout, r) =
        bench_in("--latency fixed:20ms --reads 2 --turns 1000000 --max-phase 300ms");
    assert_eq!(r["turnsCut"], true, "{r}");
    assert_eq!(r["singleCut"], false, "{r}");
    assert_eq!(r["turnsAsked"], 1_000_000, "{r}");
    let turns = r["turns"].as_u64().unwrap();
    assert!((1..1_000_000).contains(&turns), "{r}");
    assert_has(
        &stdout,
        &format!("phase stopped at --max-phase 300.000 ms after {turns} of 1000000 turns"),
    );
}

#[test]
fn bench_rejects_zero_deadline_timeout_and_nothing_to_run_before_starting() {
    for (args, msg) in [
        (
            &["--deadline", "0ms"][..],
            "--deadline 0ms must be longer than 0",
        ),
        (&["--timeout", "0"][..], "--timeout 0 must be longer than 0"),
        (&["--reads", "0", "--turns", "0"][..], "nothing to measure"),
        (
            &["--timeout", "100ms", "--deadline", "800ms"][..],
            "--timeout 100ms is shorter than --deadline 800ms",
        ),
    ] {
        let (o, _) = bench_stdio_run(args);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

#[test]
fn bench_out_that_is_a_file_fails_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let (ok, stdout, stderr, _) = bench_on("corpus/transcripts/everything-stdio.jsonl", &[], &file);
    assert!(!ok);
    assert_has(&stderr, "is not a directory");
    // Nothing ran: no table on stdout.
    assert!(stdout.is_empty(), "{stdout}");
}

#[test]
fn bench_target_cmd_that_exits_is_reported_with_its_exit_status() {
    let (o, _) = bench_stdio_run(&["--target-cmd", "echo broken >&2; exit 7"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_has_all(
        &err,
        &["target exited with exit status: 7", "(stderr: broken)"],
    );
}

/// `mcptape serve` on the shipped stdio recording with `args`, stdin closed (a started session
/// would end at once with exit 0), refused before serving: exit 2, nothing on stdout; its
/// stderr.
fn serve_refused(args: &[&str]) -> String {
    let mut cmd = Command::new(mcptape());
    cmd.arg("serve")
        .arg(corpus_transcript("everything-stdio.jsonl"))
        .args(args);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    assert!(o.stdout.is_empty(), "{}", stdout_text(&o));
    refusal(&o)
}

/// Fresh-user report bug 9 (`serve --stats`): an unwritable stats file is an
/// error before the session, not after it.
#[test]
fn serve_stats_in_a_missing_directory_fails_before_serving() {
    let err = serve_refused(&["--stats", "/nonexistent-mcptape-dir/x.json"]);
    assert_has(
        &err,
        "--stats /nonexistent-mcptape-dir/x.json: cannot write this file",
    );
}

/// `serve --stats` did not count the recorded JSON-RPC batches the loader skipped (said only
/// in a warning): a transcript of a client batch and the server's batch answer (MCP
/// 2025-03-26) counts 2 in `batchesSkipped`.
#[test]
fn serve_stats_counts_the_batches_skipped_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let mut cmd = Command::new(mcptape());
    cmd.arg("serve")
        .arg(repo_root().join("crates/mcptape-check/tests/data/pass/batch-under-2025-03-26.jsonl"))
        .args(["--latency", "fixed:0ms", "--stats"])
        .arg(&stats);
    // stdin is /dev/null: the session ends at once, and the stats are written.
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    assert_success(&o, "serve --stats");
    assert_has(&stderr_text(&o), "JSON-RPC batch");
    let s = read_json(&stats);
    assert_eq!(s["batchesSkipped"], 2, "{s}");
    assert_eq!(s["requests"], 0, "{s}");
}

/// `serve --stats-fd N` (how bench takes its embedded server's stats back over a pipe): a
/// descriptor that is not open is an error before the session, as an unwritable --stats is.
#[test]
fn serve_stats_fd_that_is_not_open_fails_before_serving() {
    let err = serve_refused(&["--stats-fd", "987"]);
    assert_has(&err, "--stats-fd 987: not an open file descriptor");
}

/// Fresh-user report bug 7 (`bench --target-url`): connection refused is
/// said at once, not after the 5 s handshake timeout.
#[test]
fn bench_target_url_connection_refused_is_reported_at_once() {
    let port = free_port(); // nothing listens there
    // The handshake may wait 60 s (--timeout's cap), as long as the run's bound: waited out,
    // the run fails in run_bounded, with no clock read here.
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (o, _) = bench_stdio_run(&["--target-url", &url, "--timeout", "60s"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_has(&err, "target closed the connection; HTTP: ");
}

/// Fresh-user report bug 19: `serve` on a cut transcript warns on stderr.
#[test]
fn serve_warns_about_a_cut_transcript() {
    let full = repo_root().join("corpus/transcripts/everything-stdio.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    let bytes = std::fs::read(&full).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let mut cmd = Command::new(mcptape());
    cmd.arg("serve").arg(&cut);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_has_all(
        &err,
        &["mcptape serve: warning: ", "is cut and was dropped"],
    );
}

/// Fresh-user report: `serve` replayed a recorded read result whose contents entry had both
/// `text` and `blob` (or neither) with no word on stderr, while `check` flags it. It still
/// replays it as recorded, and says so once per exchange at load, naming the line, the entry
/// and its uri; `bench` says it too (and keeps it in report.json's warnings).
#[test]
fn regression_serve_warns_about_a_recorded_entry_with_both_text_and_blob() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("both.jsonl");
    let header = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-12-01T22:33:51.180Z"}"#;
    let read = r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"demo://x"}}"#;
    let reply = r#"{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"demo://x","text":"hi","blob":"aGk="}]}}"#;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let inited = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"s","version":"0"}}}"#;
    let mut text = format!("{header}\n");
    for (t_us, dir, msg) in [
        (1, "c2s", init),
        (2, "s2c", inited),
        (3, "c2s", read),
        (4, "s2c", reply),
    ] {
        text.push_str(&format!(
            "{{\"tUs\":{t_us},\"kind\":\"message\",\"dir\":\"{dir}\",\"msg\":{msg}}}\n"
        ));
    }
    std::fs::write(&t, text).unwrap();
    let want = format!(
        "{}: line 5: the recorded reply to resources/read id 7 has a contents entry with both text and blob (entry 0, uri \"demo://x\", at /result/contents/0): replayed as recorded",
        t.display()
    );
    let o = Command::new(mcptape())
        .arg("serve")
        .arg(&t)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            let mut stdin = c.stdin.take().unwrap();
            stdin.write_all(format!("{read}\n").as_bytes())?;
            drop(stdin);
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_has(&err, &format!("mcptape serve: warning: {want}"));
    assert_eq!(err.matches("replayed as recorded").count(), 1, "{err}");
    // Replayed byte-exact.
    assert_eq!(String::from_utf8_lossy(&o.stdout), format!("{reply}\n"));

    let (o, _) = run_bench(
        &t,
        &words("--latency fixed:1ms --reads 2 --turns 0"),
        Some(&dir.path().join("out")),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_has(&err, &format!("mcptape bench: warning: {want}"));
    let r = json_or_null(&dir.path().join("out/report.json"));
    assert!(
        r["warnings"].as_array().is_some_and(|w| w
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.contains(&want)))),
        "{r}"
    );
}

/// Whether process `pid` has ended: no /proc entry, or a zombie waiting for
/// its new parent (PID 1) to reap it (`kill -0` still succeeds on a zombie).
fn process_ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        // pid (comm) STATE …: the comm may hold spaces, so split after ')'.
        s.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X")
    })
}

/// Runs `mcptape CMD transcript --target-cmd TARGET extra…` where TARGET
/// forks `sleep 300` and writes its pid to a file; asserts the command fails
/// and that the forked grandchild is gone within 5 s of its exit.
fn assert_silent_target_tree_is_ended(subcommand: &str, target: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    let target = target.replace("PIDFILE", &pidfile.display().to_string());
    let mut cmd = Command::new(mcptape());
    cmd.arg(subcommand)
        .arg(repo_root().join("corpus/transcripts/everything-stdio.jsonl"))
        .arg("--target-cmd")
        .arg(&target)
        .args(extra);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{subcommand} should fail: {err}");
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap_or_else(|e| panic!("{}: {e}; stderr: {err}", pidfile.display()))
        .trim()
        .parse()
        .unwrap();
    let start = std::time::Instant::now();
    while !process_ended(pid) {
        if start.elapsed() > Duration::from_secs(5) {
            // Do not leave it behind for the next test run.
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("{subcommand} --target-cmd {target:?} left pid {pid} running; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fresh-user report 2, N3: a silent `--target-cmd` fails the handshake, and
/// the server the shell forked (a grandchild) is ended with the shell, not
/// left running under PID 1.
#[test]
fn bench_target_cmd_silent_grandchild_is_ended_when_the_handshake_fails() {
    assert_silent_target_tree_is_ended(
        "bench",
        "sleep 300 & echo $! > PIDFILE; wait",
        &["--reads", "1", "--turns", "1", "--timeout", "1s"],
    );
}

/// N3, the launcher variant: the shell exits at once (exit status 0) while the
/// server it forked keeps running in the target's process group.
#[test]
fn bench_target_cmd_grandchild_that_outlives_its_launcher_is_ended() {
    assert_silent_target_tree_is_ended(
        "bench",
        "sleep 300 & echo $! > PIDFILE",
        &["--reads", "1", "--turns", "1", "--timeout", "1s"],
    );
}

/// N3 for `verify`: every request goes unanswered, verify fails, and the
/// forked server is ended.
#[test]
fn verify_target_cmd_silent_grandchild_is_ended() {
    assert_silent_target_tree_is_ended(
        "verify",
        "sleep 300 & echo $! > PIDFILE; wait",
        &["--timeout", "100ms"],
    );
}

/// Fresh-user report 2, N5: a duration past its cap is rejected before the
/// run with the flag, the value as typed, and the cap in the unit typed.
#[test]
fn bench_and_verify_duration_past_the_cap_name_the_flag_and_the_cap() {
    let t = repo_root().join("corpus/transcripts/everything-stdio.jsonl");
    for (args, want) in [
        (
            vec!["bench", "--max-phase", "3601s"],
            "--max-phase 3601s: 3601s is above the limit: at most 3600s",
        ),
        (
            vec!["bench", "--max-phase", "18446744073709551s"],
            "--max-phase 18446744073709551s: 18446744073709551s is above the limit: at most 3600s",
        ),
        (
            vec!["bench", "--deadline", "60001ms"],
            "--deadline 60001ms: 60001ms is above the limit: at most 60000ms",
        ),
        (
            vec!["bench", "--timeout", "61s"],
            "--timeout 61s: 61s is above the limit: at most 60s",
        ),
        (
            vec!["verify", "--target-cmd", "true", "--timeout", "61s"],
            "--timeout 61s: 61s is above the limit: at most 60s",
        ),
    ] {
        let mut cmd = Command::new(mcptape());
        cmd.arg(args[0]).arg(&t).args(&args[1..]);
        let (o, _) = run_bounded(&mut cmd, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Issue 12: SIGINT during the measurement prints and writes the partial report (marked
/// `"partial": true`) before exiting with 130.
#[test]
fn bench_sigint_writes_a_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let child = Command::new(mcptape())
        .arg("bench")
        .arg(repo_root().join("corpus/transcripts/everything-stdio.jsonl"))
        .args(words(
            "--latency fixed:50ms --reads 100000 --turns 10 --max-phase 120s",
        ))
        .arg("--out")
        .arg(&out)
        // A status line every 200 ms (stderr is a pipe, not a terminal): the sign the
        // measurement runs.
        .env("MCPTAPE_STATUS_EVERY", "200ms")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut g = Guard(child);
    // Read stderr on a thread; wait (bounded) for the first status line of the single phase
    // with a request sent, then interrupt.
    let err = g.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead as _;
        let mut all = String::new();
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let start = std::time::Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) if l.contains("single requests: sent") && !l.contains("sent 0,") => break,
            Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                panic!("bench ended before its first status line")
            }
        }
        // The guard kills and waits bench when the test fails here.
        assert!(
            start.elapsed() <= Duration::from_secs(120),
            "no status line of the single phase within 120 s"
        );
    }
    let _ = Command::new("kill")
        .args(["-INT", &g.0.id().to_string()])
        .status();
    let o = g.output_within("bench after SIGINT", Duration::from_secs(60));
    let status = o.status;
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{stdout}\n{stderr}");
    assert_has(
        &stderr,
        "SIGINT: stopping; printing and writing the partial report",
    );
    assert_has_all(
        &stdout,
        &[
            "PARTIAL: the run did not finish",
            "partial: interrupted (SIGINT/SIGTERM)",
        ],
    );
    let r = read_json(&out.join("report.json"));
    assert_eq!(r["partial"], serde_json::json!(true));
    // Interrupted after the first status line saw a request sent, long before the 100,000.
    let sent = r["singlePhase"]["sent"].as_u64().unwrap();
    assert!((1..100_000).contains(&sent), "{r}");
    // The time series holds every request sent until the interrupt.
    let ts_sent: u64 = r["timeSeries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["sent"].as_u64().unwrap())
        .sum();
    assert_eq!(ts_sent, sent, "{r}");
}

/// Issue 12: `--fault error=-32603@100%` printed a healthy p50 and exited 0.
#[test]
fn bench_all_error_answers_is_a_0_percent_success_run_and_fails() {
    let (_dir, stdout, stderr, r) =
        bench_failing_in("--latency fixed:1ms --fault error=-32603@100% --reads 20 --turns 5");
    assert_has(&stdout, "0 of 20 answered ok (0.0 %)");
    assert_has(&stderr, "none answered with a result");
    assert_eq!(r["singleOk"]["count"], serde_json::json!(0));
    assert_eq!(r["single"]["count"], serde_json::json!(20));
    assert_eq!(
        r["singlePhase"]["errorAnswers"]["internal (-32603)"],
        serde_json::json!(20)
    );
}

/// `report[member]`'s entries as (method or name, sent, ok).
fn sent_ok(report: &serde_json::Value, member: &str, by: &str) -> Vec<(String, u64, u64)> {
    report[member]
        .as_array()
        .unwrap_or_else(|| panic!("no {member}: {report}"))
        .iter()
        .map(|v| {
            (
                v[by].as_str().unwrap().to_owned(),
                v["sent"].as_u64().unwrap(),
                v["ok"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn owned(rows: &[(&str, u64, u64)]) -> Vec<(String, u64, u64)> {
    rows.iter()
        .map(|(a, b, c)| (a.to_string(), *b, *c))
        .collect()
}

/// Issue 27: on the recording of a session that calls server-everything's tools and gets its
/// prompts, bench replays every method in the recorded mix (two cycles of its 13 requests) and
/// reports rows per method, per tool, per prompt and per URI in the table (80 columns at most),
/// report.json, the HTML page and the .hlog (read back by Python `hdrhistogram`).
#[test]
fn bench_on_a_tool_session_reports_every_method_per_tool_prompt_and_uri() {
    let (dir, stdout, report) = bench_ok(
        "everything-tools-stdio.jsonl",
        "--reads 26 --turns 2 --latency fixed:1ms",
    );
    assert_eq!(report["mix"], "recorded");
    assert_eq!(
        sent_ok(&report, "byMethod", "method"),
        owned(&[
            ("prompts/get", 4, 4),
            ("prompts/list", 2, 2),
            ("resources/list", 2, 2),
            ("resources/read", 6, 4),
            ("resources/templates/list", 2, 2),
            ("tools/call", 8, 8),
            ("tools/list", 2, 2),
        ])
    );
    assert_eq!(
        sent_ok(&report, "byTool", "name"),
        owned(&[
            ("echo", 4, 4),
            ("get-sum", 2, 2),
            ("trigger-long-running-operation", 2, 2)
        ])
    );
    assert_eq!(
        sent_ok(&report, "byPrompt", "name"),
        owned(&[("args-prompt", 2, 2), ("simple-prompt", 2, 2)])
    );
    let uris = sent_ok(&report, "byUri", "name");
    assert_eq!(uris.len(), 3, "{uris:?}");
    let missing = "demo://resource/static/document/mcptape-does-not-exist";
    assert!(uris.contains(&(missing.to_owned(), 2, 0)), "{uris:?}");
    let read_row = &report["byMethod"][3];
    assert_eq!(
        read_row["errors"]["invalid-params (-32602, no data.uri)"],
        2
    );
    assert!(read_row["latency"]["p50Us"].as_u64().unwrap() >= 1_000);
    // The turns stay reads.
    assert_eq!(report["turnPhase"]["sent"], 8);
    // The embedded replay answers as recorded (the recorded not-found included).
    for m in report["byMethod"].as_array().unwrap() {
        assert_eq!(m["notAsRecorded"], 0, "{m}");
    }

    // The table: a row per method, per tool, per prompt, per URI; within 80 columns.
    let section: String = stdout
        .split("by method (single phase, mix recorded)")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"))
        .split("\n\n")
        .next()
        .unwrap()
        .to_owned();
    for line in section.lines() {
        assert!(line.chars().count() <= 80, "{}: {line:?}", line.len());
    }
    let first = |name: &str| -> Vec<String> {
        section
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row: {section}"))
            .split_whitespace()
            .take(4)
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(first("tools/call"), ["tools/call", "8", "8", "0"]);
    assert_eq!(first("prompts/get"), ["prompts/get", "4", "4", "0"]);
    assert_eq!(first("resources/read"), ["resources/read", "6", "4", "2"]);
    assert_eq!(first("echo"), ["echo", "4", "4", "0"]);
    assert_eq!(first("get-sum"), ["get-sum", "2", "2", "0"]);
    assert_eq!(first("simple-prompt"), ["simple-prompt", "2", "2", "0"]);
    assert_has(&section, "error 2 × invalid-params (-32602, no data.uri)");

    // HTML: table#methods with a row per method and per name.
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_has(&html, "<table id=\"methods\">");
    assert_eq!(html.matches("<tr class=\"by-method\">").count(), 7);
    assert_eq!(html.matches("<tr class=\"by-name\">").count(), 3 + 2 + 3);
    assert_has(
        &html,
        "<tr class=\"by-name\"><th>tools/call</th><td>get-sum</td><td>2</td><td>2</td>",
    );

    // .hlog: one tag per method, read back by Python hdrhistogram with the report's counts.
    let (lines, out) = hdrh_python::read_log(&dir.path().join("latency.hlog"));
    // A tag's lines added up (`single` has one line per interval of the time series).
    let count = |tag: &str| {
        let n: Vec<u64> = lines
            .iter()
            .filter(|l| l.tag == tag)
            .map(|l| l.count)
            .collect();
        assert!(!n.is_empty(), "no {tag}: {out}");
        n.iter().sum::<u64>()
    };
    assert_eq!(count("method-tools-call"), 8, "{out}");
    assert_eq!(count("method-prompts-get"), 4, "{out}");
    assert_eq!(count("method-resources-read"), 6, "{out}");
    assert_eq!(count("method-resources-templates-list"), 2, "{out}");
    assert_eq!(count("single"), 26, "{out}");
    let min = lines
        .iter()
        .find(|l| l.tag == "method-tools-call")
        .unwrap()
        .min;
    assert!(min >= 1_000, "fixed:1ms server delay: {out}");
}

/// Issue 28 (a newcomer's retry): `--methods tools/call,prompts/get` sent no read, yet the table
/// said `single reads` and `all reads` over the tool calls, and the turns' prediction was a bare
/// `n/a`. The rows say `requests`, and why there is no prediction.
#[test]
fn bench_of_tool_calls_says_requests_and_why_the_turns_have_no_prediction() {
    let (dir, stdout, _) = bench_ok(
        "everything-tools-stdio.jsonl",
        "--reads 8 --turns 2 --latency fixed:1ms --methods tools/call,prompts/get",
    );
    assert_has_all(
        &stdout,
        &[
            "single requests (closed-loop, concurrency 1):",
            "8 of 8 answered ok (100.0 %)",
            "\n  all requests   ",
        ],
    );
    assert_has(
        &stdout,
        "\n  (no prediction: the single phase sent no resources/read; add it to --methods)\n",
    );
    assert!(!stdout.contains("all reads"), "{stdout}");
    // The HTML page says so too.
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert_has_all(
        &html,
        &[
            "8 single requests, 2 turns of 4 reads",
            "<th>single requests</th>",
        ],
    );
}

/// Issue 27: `--methods` and `--mix` choose what the single phase sends; `--methods reads` is
/// the reads-only bench.
#[test]
fn bench_methods_and_weighted_mix_choose_what_is_sent() {
    let (_dir, _, report) = bench_ok(
        "everything-tools-stdio.jsonl",
        "--reads 40 --turns 0 --latency fixed:1ms --methods tools/call,prompts/get --mix tools/call=3,prompts/get=1",
    );
    assert_eq!(
        sent_ok(&report, "byMethod", "method"),
        owned(&[("prompts/get", 10, 10), ("tools/call", 30, 30)])
    );
    assert_eq!(report["mix"], "tools/call=3,prompts/get=1");
    let dir = tempfile::tempdir().unwrap();
    let (ok, stdout, stderr, report) = bench_on(
        "corpus/transcripts/everything-tools-stdio.jsonl",
        &words("--reads 9 --turns 0 --latency fixed:1ms --methods reads"),
        dir.path(),
    );
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(
        sent_ok(&report, "byMethod", "method"),
        owned(&[("resources/read", 9, 6)])
    );
    assert_eq!(report["byTool"], serde_json::json!([]));
    // A mix naming no recorded method, an empty --methods item: refused before a run.
    for bad in [
        "--mix nothing/here=1",
        "--methods tools/call,",
        "--mix tools/call=0",
        "--methods resources/read,tools/cal",
        "--allow-tool echo",
    ] {
        let mut a = words("--reads 1 --turns 0");
        a.extend(words(bad));
        let (o, _) = run_bench(&corpus_transcript("everything-tools-stdio.jsonl"), &a, None);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {stderr}");
        if bad.contains("tools/cal,") || bad.ends_with("tools/cal") {
            assert_has(
                &stderr,
                "tools/cal is not recorded in the transcript (recorded: ",
            );
        }
        if bad.starts_with("--allow-tool") {
            assert_has(&stderr, "--allow-tool is for a live target");
        }
    }
}

/// Issue 27: against a live target (the real Python SDK server), a recorded `tools/call` of a
/// tool the recorded `tools/list` does not mark `readOnlyHint: true` (`bump`: it changes the
/// server's counter) is not sent, and is listed in the table, report.json and HTML; with
/// `--allow-tool bump` it is called (and answered by the real server).
#[test]
fn bench_live_target_skips_tools_without_read_only_hint_unless_allowed() {
    let p = peers();
    let cmd = format!(
        "{} {} stdio",
        p.python.display(),
        p.script("py_server.py").display()
    );
    let run = |extra: &str| {
        let dir = tempfile::tempdir().unwrap();
        // --timeout also bounds the handshake: the Python server imports for seconds on a
        // loaded machine (5 s, the default, failed once under CI-like load).
        let mut a = words("--reads 12 --turns 0 --methods tools/call,prompts/get --timeout 30s");
        a.extend(words(extra));
        a.extend(["--target-cmd", cmd.as_str()]);
        let (o, _) = run_bench(
            &corpus_transcript("py-tools-stdio-2026-07-28.jsonl"),
            &a,
            Some(dir.path()),
        );
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{stdout}\n{stderr}");
        let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        (stdout, json_or_null(&dir.path().join("report.json")), html)
    };
    // Recorded: add, bump, add, review; live: add, add, review, cycled 4 times.
    let (stdout, report, html) = run("");
    assert_eq!(sent_ok(&report, "byTool", "name"), owned(&[("add", 8, 8)]));
    assert_eq!(
        sent_ok(&report, "byPrompt", "name"),
        owned(&[("review", 4, 4)])
    );
    assert_eq!(report["skippedTools"], serde_json::json!(["bump"]));
    assert_has(
        &stdout,
        "tools not called (live target, no readOnlyHint, not --allow-tool): bump",
    );
    assert_has(&html, "<p id=\"skipped-tools\">");
    // Allowed: add, bump, add, review, cycled 3 times.
    let (_, report, _) = run("--allow-tool bump");
    assert_eq!(
        sent_ok(&report, "byTool", "name"),
        owned(&[("add", 6, 6), ("bump", 3, 3)])
    );
    assert!(report.get("skippedTools").is_none(), "{report}");
    let (_, report, _) = run("--allow-tool *");
    assert_eq!(
        sent_ok(&report, "byTool", "name"),
        owned(&[("add", 6, 6), ("bump", 3, 3)])
    );
}

/// Issue 27: `--latency recorded` is per request, so per method and per tool: the recorded
/// long-running operation (1 s in 3 progress steps) keeps its own second, echo its own delay.
#[test]
fn bench_latency_recorded_keeps_each_tools_own_delay() {
    let t = read_transcript(&corpus_transcript("everything-tools-stdio.jsonl"));
    // The recorded delay of each tools/call, by tool name: reply tUs - request tUs.
    // (`recorded` replays each exchange's own delay.)
    let mut sent = std::collections::HashMap::new();
    let mut recorded = std::collections::BTreeMap::new();
    for r in &t.records {
        if let mcptape_transcript::Event::Message { dir, msg, .. } = &r.event {
            let m: serde_json::Value = serde_json::from_str(msg.get()).unwrap();
            match dir {
                mcptape_transcript::Direction::C2s if m["method"] == "tools/call" => {
                    sent.insert(m["id"].to_string(), (m["params"]["name"].clone(), r.t_us));
                }
                mcptape_transcript::Direction::S2c => {
                    if let Some((name, t0)) = sent.remove(&m["id"].to_string()) {
                        // The smallest, for a tool called twice.
                        let d = recorded
                            .entry(name.as_str().unwrap().to_owned())
                            .or_insert(u64::MAX);
                        *d = (*d).min(r.t_us - t0);
                    }
                }
                _ => {}
            }
        }
    }
    let long = recorded["trigger-long-running-operation"];
    assert!(long >= 1_000_000, "{recorded:?}");
    let (_dir, _, report) = bench_ok(
        "everything-tools-stdio.jsonl",
        "--reads 4 --turns 0 --latency recorded --methods tools/call",
    );
    let p50 = |name: &str| {
        element(&report["byTool"], "name", name)["latency"]["p50Us"]
            .as_u64()
            .unwrap()
    };
    assert!(
        p50("trigger-long-running-operation") >= long * 999 / 1000,
        "{report}"
    );
    for tool in ["echo", "get-sum"] {
        assert!(p50(tool) >= recorded[tool] * 999 / 1000, "{tool}: {report}");
    }
}

/// Issue 27: answers of another class than recorded are counted per method and per tool, not
/// hidden: an injected -32603 on every recorded tool result.
#[test]
fn bench_counts_tool_answers_not_as_recorded_per_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (_, stdout, _, report) = bench_on(
        "corpus/transcripts/everything-tools-stdio.jsonl",
        &words(
            "--reads 4 --turns 0 --methods tools/call --fault error=-32603@100% --latency fixed:1ms",
        ),
        dir.path(),
    );
    let m = &report["byMethod"][0];
    assert_eq!(m["method"], "tools/call", "{report}");
    assert_eq!((m["sent"].as_u64(), m["ok"].as_u64()), (Some(4), Some(0)));
    assert_eq!(m["errors"]["internal (-32603)"], 4);
    assert_eq!(m["notAsRecorded"], 4);
    let echo = &report["byTool"][0];
    assert_eq!(
        (echo["name"].as_str(), echo["notAsRecorded"].as_u64()),
        (Some("echo"), Some(2))
    );
    assert_has(&stdout, "      4 answered otherwise than recorded\n");
}

/// `mcptape bench ARGS` on `transcript` with `--out` a new temp dir: (exit code, stdout,
/// stderr, report.json, the dir).
fn bench_gate(
    transcript: &str,
    args: &[&str],
) -> (
    Option<i32>,
    String,
    String,
    serde_json::Value,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let (o, _) = run_bench(&corpus_transcript(transcript), args, Some(dir.path()));
    let report = json_or_null(&dir.path().join("report.json"));
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        report,
        dir,
    )
}

/// The verdict of `name` (`read p50`) in a report's `regression` member.
fn quantile_verdict(report: &serde_json::Value, series: &str, q: f64) -> String {
    let s = element(&report["regression"]["series"], "name", series);
    let q = s["quantiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["q"].as_f64() == Some(q))
        .unwrap();
    q["verdict"].as_str().unwrap().to_owned()
}

/// Issue 25: the regression gate on a real server. The Python SDK server is benched plain, then
/// with a 20 ms delay injected into every resources/read (`PY_SERVER_READ_DELAY_MS=20`) against
/// the plain run as baseline: the gate says regressed (exit 1) in the text, report.json,
/// slo.xml and report.html; the plain server against the slow run is an improvement (exit 0).
/// The shift is far above this machine's noise; the test checks verdicts, never a time.
#[test]
fn bench_baseline_gate_catches_a_20ms_read_delay_in_the_python_sdk_server() {
    let p = peers();
    let server = |env: &str| {
        format!(
            "{env}{} {} stdio",
            p.python.display(),
            p.script("py_server.py").display()
        )
    };
    let transcript = "py-stdio-2026-07-28.jsonl";
    let run = |cmd: &str, baseline: Option<&std::path::Path>| {
        // A 30 s bound on the handshake: the SDK's imports on a loaded machine take seconds.
        let mut a = words("--reads 40 --turns 0 --methods reads --timeout 30s");
        a.extend(["--target-cmd", cmd]);
        let b = baseline.map(|b| b.display().to_string());
        if let Some(b) = &b {
            a.extend(["--baseline", b.as_str()]);
        }
        bench_gate(transcript, &a)
    };
    let (code, stdout, stderr, plain, plain_dir) = run(&server(""), None);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(plain.get("regression").is_none(), "{plain}");

    let slow_cmd = server("PY_SERVER_READ_DELAY_MS=20 ");
    let (code, stdout, stderr, slow, slow_dir) = run(&slow_cmd, Some(plain_dir.path()));
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(slow["regression"]["verdict"], "regressed", "{slow}");
    assert_eq!(
        quantile_verdict(&slow, "read", 0.5),
        "regressed",
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("read p50"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.trim_end().ends_with("  regressed"), "{line}");
    assert_has(line, " % [+");
    assert_has(&stdout, "regression gate: REGRESSED (read p50");
    assert_has(&stderr, "mcptape bench: regression against the baseline");
    // slo.xml: one testcase per compared quantile, the regressed ones failed.
    let xml = std::fs::read_to_string(slow_dir.path().join("slo.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("mcptape bench regression"))
        .unwrap_or_else(|| panic!("{xml}"));
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let names: Vec<&str> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert_eq!(names, ["read p50", "read p90", "read p99"], "{xml}");
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| c.children().any(|f| f.has_tag_name("failure")))
        .filter_map(|c| c.attribute("name"))
        .collect();
    assert!(failed.contains(&"read p50"), "{xml}");
    let html = std::fs::read_to_string(slow_dir.path().join("report.html")).unwrap();
    assert_has_all(
        &html,
        &[
            "<section id=\"regression\">",
            "<p class=\"verdict fail\">REGRESSED: read p50",
        ],
    );

    // The other way round (baseline: the slow run's report.json): the median reads as improved.
    // (The verdict is not asserted here: the p99 of 40 reads is one large.png read, and under
    // load that one read can be slower in the plain run: the gate then says so, rightly.)
    let baseline = slow_dir.path().join("report.json");
    let (code, stdout, stderr, fast, _) = run(&server(""), Some(&baseline));
    assert!(matches!(code, Some(0 | 1)), "{stdout}\n{stderr}");
    assert_eq!(quantile_verdict(&fast, "read", 0.5), "improved", "{stdout}");
}

/// Issue 25: a baseline recorded with another transcript or latency model is refused before the
/// run with exit 2 and one line naming the difference; `--baseline-any` compares anyway.
#[test]
fn bench_refuses_a_baseline_of_another_transcript_or_model_with_exit_2() {
    let (code, stdout, stderr, _, base) = bench_gate(
        "everything-stdio.jsonl",
        &words("--reads 6 --turns 0 --latency fixed:1ms"),
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let b = base.path().display().to_string();
    let errors = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| !l.starts_with("mcptape bench: warning: this mcptape is a debug build"))
            .map(str::to_owned)
            .collect()
    };
    let (code, _, stderr, report, _) = bench_gate(
        "py-stdio-2026-07-28.jsonl",
        &words(&format!(
            "--reads 6 --turns 0 --latency fixed:1ms --baseline {b}"
        )),
    );
    assert_eq!(code, Some(2), "{stderr}");
    let lines = errors(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "mcptape: error: --baseline {b}: recorded with another transcript (baseline "
        )),
        "{stderr}"
    );
    assert!(
        lines[0].ends_with("pass --baseline-any to compare anyway"),
        "{stderr}"
    );
    assert!(report.is_null(), "refused before the run: {report}");
    // Same transcript, another model.
    let (code, _, stderr, _, _) = bench_gate(
        "everything-stdio.jsonl",
        &words(&format!(
            "--reads 6 --turns 0 --latency fixed:2ms --baseline {b}"
        )),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(errors(&stderr).len(), 1, "{stderr}");
    assert_has(
        &stderr,
        "another latency model (baseline fixed:1ms, this run fixed:2ms)",
    );
    // --baseline-any: compared (whatever the verdict), exit 0 or 1, never 2.
    let (code, stdout, stderr, report, _) = bench_gate(
        "py-stdio-2026-07-28.jsonl",
        &words(&format!(
            "--reads 6 --turns 0 --latency fixed:1ms --baseline {b} --baseline-any"
        )),
    );
    assert!(matches!(code, Some(0 | 1)), "{stdout}\n{stderr}");
    assert!(
        report["regression"]["series"][0]["name"] == "read",
        "{report}"
    );
}

/// Issue 25: report.json's `timeSeries` on a real run with faults (stalls that time out,
/// injected -32603 errors): over each phase the intervals' sent, ok, closed and every error
/// class (`timeout` included) add up to the phase's counters, the last interval has nothing in
/// flight, the intervals tile the run from 0 without gaps, and a timed-out read's latency
/// reads censored (the bound, flagged), never as the latency it was recorded at.
#[test]
fn bench_time_series_adds_up_to_the_phase_counters_with_timeouts_and_errors() {
    let (_dir, _stdout, r) = bench_in(
        "--latency fixed:2ms --fault stall=4%,error=-32603@5% --reads 150 --turns 25 --deadline 150ms --timeout 300ms --seed 7",
    );
    let ts = r["timeSeries"].as_array().expect("timeSeries");
    let u = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let mut timeouts = 0;
    for (phase, counters) in [("single", "singlePhase"), ("turns", "turnPhase")] {
        let pts: Vec<&serde_json::Value> = ts.iter().filter(|p| p["phase"] == phase).collect();
        assert!(!pts.is_empty(), "no {phase} intervals");
        let c = &r[counters];
        let sum = |k: &str| pts.iter().map(|p| u(&p[k])).sum::<u64>();
        assert_eq!(sum("sent"), u(&c["sent"]), "{phase} sent");
        assert_eq!(sum("ok"), u(&c["answeredOk"]), "{phase} ok");
        assert_eq!(sum("closed"), u(&c["closed"]), "{phase} closed");
        let mut classes = std::collections::BTreeMap::<String, u64>::new();
        for p in &pts {
            for (k, v) in p["errors"].as_object().unwrap() {
                *classes.entry(k.clone()).or_default() += u(v);
            }
        }
        let timed_out = classes.remove("timeout").unwrap_or(0);
        assert_eq!(timed_out, u(&c["timedOut"]), "{phase} timeouts");
        timeouts += timed_out;
        let answers: std::collections::BTreeMap<String, u64> = c["errorAnswers"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), u(v)))
            .collect();
        assert_eq!(classes, answers, "{phase} error answers by class");
        let as_recorded: u64 = pts
            .iter()
            .flat_map(|p| p["errorsAsRecorded"].as_object().into_iter().flatten())
            .map(|(_, v)| u(v))
            .sum();
        assert_eq!(
            as_recorded,
            u(&c["errorsAsRecorded"]),
            "{phase} as recorded"
        );
        assert_eq!(u(&pts.last().unwrap()["inFlight"]), 0, "{phase}");
        // Contiguous: each interval starts where the one before ended.
        for w in pts.windows(2) {
            let end = w[0]["startMs"].as_f64().unwrap() + w[0]["lengthMs"].as_f64().unwrap();
            assert!(
                (w[1]["startMs"].as_f64().unwrap() - end).abs() < 1e-6,
                "{w:?}"
            );
        }
    }
    assert_eq!(ts[0]["startMs"], 0.0);
    assert!(
        timeouts > 0,
        "no timeout in the run: the censoring is not exercised"
    );
    assert!(u(&r["singlePhase"]["errorAnswers"]["internal (-32603)"]) > 0);
    // The recording's own not-found read, replayed: answered as recorded.
    assert!(u(&r["singlePhase"]["errorsAsRecorded"]) > 0);
    // A censored p99 reads as the bound (300 ms for single requests, the 150 ms deadline for
    // turn reads), flagged; an uncensored one is below it.
    for p in ts {
        let bound = if p["phase"] == "single" { 300.0 } else { 150.0 };
        if p["p99Censored"] == true {
            assert_eq!(p["p99Ms"].as_f64(), Some(bound), "{p}");
        } else if let Some(v) = p["p99Ms"].as_f64() {
            assert!(v < bound, "{p}");
        }
    }
    assert!(ts.iter().any(|p| p["p99Censored"] == true), "{ts:?}");
    // The page's headline says what was not answered as recorded (the injected errors and the
    // timeouts), the recorded not-found apart.
    let html = std::fs::read_to_string(_dir.path().join("report.html")).unwrap();
    let headline = html
        .lines()
        .find(|l| l.contains("id=\"headline\""))
        .unwrap();
    let c = &r["singlePhase"];
    let timeout_part = if u(&c["timedOut"]) > 0 {
        format!(", {} timeout", u(&c["timedOut"]))
    } else {
        String::new()
    };
    assert_has(
        headline,
        &format!(
            "; not as recorded: {} internal (-32603){timeout_part}",
            u(&c["errorAnswers"]["internal (-32603)"])
        ),
    );
    // The .hlog holds the same intervals: one `single` line per single-phase interval.
    let hlog = std::fs::read_to_string(_dir.path().join("latency.hlog")).unwrap();
    let single_lines = hlog
        .lines()
        .filter(|l| l.starts_with("Tag=single,"))
        .count();
    assert_eq!(
        single_lines,
        ts.iter().filter(|p| p["phase"] == "single").count()
    );
}

#[test]
fn regression_serve_bad_contents_warnings_flood_is_capped_with_one_count_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("many.jsonl");
    let header = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-12-01T22:33:51.180Z"}"#;
    let mut text = format!("{header}\n");
    // 12 replies with both text and blob: 10 warned (the limit), 2 counted.
    for id in 0..12 {
        let read = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"demo://x"}}}}"#
        );
        let reply = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"demo://x","text":"hi","blob":"aGk="}}]}}}}"#
        );
        for (dir, msg) in [("c2s", read), ("s2c", reply)] {
            text.push_str(&format!(
                "{{\"tUs\":1,\"kind\":\"message\",\"dir\":\"{dir}\",\"msg\":{msg}}}\n"
            ));
        }
    }
    std::fs::write(&t, text).unwrap();
    let o = Command::new(mcptape())
        .arg("serve")
        .arg(&t)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("has a contents entry").count(), 10, "{err}");
    assert_has(
        &err,
        &format!(
            "mcptape serve: warning: {}: and 2 more replies with such entries",
            t.display()
        ),
    );
}
