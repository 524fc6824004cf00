//! `mcptape verify` replays a shipped real recording against the real server
//! it was recorded from and diffs semantically. Needs the peers
//! (`scripts/install-peers.sh`); fails without them.

use crate::record_support as support;

use std::process::Command;
use std::time::Duration;

use support::*;

fn verify(transcript: &str, target_cmd: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    verify_path(&corpus_transcript(transcript), target_cmd, extra)
}

fn verify_path(
    transcript: &std::path::Path,
    target_cmd: &str,
    extra: &[&str],
) -> (i32, serde_json::Value) {
    let mut cmd = Command::new(mcptape());
    cmd.arg("verify")
        .arg(transcript)
        .arg("--target-cmd")
        .arg(target_cmd)
        .args(extra);
    verify_json(&mut cmd)
}

/// [`verify`] with the text report: (exit code, stdout, stderr).
fn verify_text(transcript: &str, target_cmd: &str, extra: &[&str]) -> (i32, String, String) {
    let t = corpus_transcript(transcript);
    let mut args = vec![t.to_str().unwrap(), "--target-cmd", target_cmd];
    args.extend(extra);
    let (rc, out, err, _) = verify_raw(&args);
    (rc, out, err)
}

/// Runs `mcptape verify ... --json` (within 120 s): its exit code and JSON report.
fn verify_json(cmd: &mut Command) -> (i32, serde_json::Value) {
    let (o, _) = run_bounded(cmd.arg("--json"), Duration::from_secs(120));
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// `"'python' 'py_server.py' stdio"`: the live Python SDK server as a `--target-cmd`.
fn py_server_cmd(p: &Peers) -> String {
    format!(
        "{} {} stdio",
        sh_quote(&p.python),
        sh_quote(&p.script("py_server.py"))
    )
}

/// Records the Python SDK client against the live py_server (stdio) through
/// `mcptape record`, as scripts/record-corpus.sh does, into `dir`: the
/// recording matches the server as it is now.
fn record_py(p: &Peers, dir: &std::path::Path, mode: &str) -> std::path::PathBuf {
    let out = dir.join(format!("py-{mode}.jsonl"));
    record_py_server(p, mode, &out);
    out
}

#[test]
fn verify_passes_against_the_live_python_server_in_both_eras() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let cmd = py_server_cmd(&p);
    for mode in ["legacy", "auto"] {
        let t = record_py(&p, dir.path(), mode);
        let (code, rep) = verify_path(&t, &cmd, &[]);
        assert_eq!(rep["differences"], serde_json::json!([]), "{mode}");
        assert_eq!(rep["unanswered"], serde_json::json!([]), "{mode}");
        assert!(rep["compared"].as_u64().unwrap() >= 10, "{mode}: {rep}");
        assert_eq!(code, 0, "{mode}");
        // `--json` is camelCase like every mcptape JSON output (it was snake_case).
        assert_eq!(rep["notRecorded"], serde_json::json!([]), "{mode}: {rep}");
        assert!(rep["closedAt"].is_null(), "{mode}: {rep}");
        assert!(rep.get("not_recorded").is_none(), "{mode}: {rep}");
        assert!(rep.get("closed_at").is_none(), "{mode}: {rep}");
    }
}

#[test]
fn verify_against_server_everything_differs_only_in_its_clock_stamped_resources() {
    let p = peers();
    let cmd = format!(
        "{} {} stdio",
        sh_quote(&p.node),
        sh_quote(&p.server_everything())
    );
    let (code, rep) = verify("everything-stdio.jsonl", &cmd, &[]);
    assert_eq!(
        code, 1,
        "server-everything's dynamic resources embed the time: {rep}"
    );
    let diffs = rep["differences"].as_array().unwrap();
    assert_eq!(diffs.len(), 4, "{rep}");
    // Every difference is the text/blob of a demo://resource/dynamic/ read.
    let t = read_transcript(&corpus_transcript("everything-stdio.jsonl"));
    for d in diffs {
        let rec = d["record"].as_u64().unwrap() as usize;
        let msg: serde_json::Value = serde_json::from_str(t.records[rec].msg().unwrap()).unwrap();
        let uri = msg["params"]["uri"].as_str().unwrap();
        assert!(uri.starts_with("demo://resource/dynamic/"), "{uri}: {d}");
        let ptr = d["pointer"].as_str().unwrap();
        assert!(
            ptr == "/result/contents/0/text" || ptr == "/result/contents/0/blob",
            "{ptr}"
        );
    }
    // Ignoring those volatile paths, the rest of the recording verifies.
    let (code, rep) = verify(
        "everything-stdio.jsonl",
        &cmd,
        &[
            "--ignore",
            "/result/contents/*/text",
            "--ignore",
            "/result/contents/*/blob",
        ],
    );
    assert_eq!(rep["differences"], serde_json::json!([]));
    assert_eq!(code, 0);
}

#[test]
fn verify_fails_when_the_target_serves_a_different_recording() {
    let cmd = format!(
        "{} serve {} --latency fixed:0",
        sh_quote(&mcptape()),
        sh_quote(&corpus_transcript("everything-stdio.jsonl"))
    );
    let (code, rep) = verify("py-stdio-2025-11-25.jsonl", &cmd, &[]);
    assert_eq!(code, 1);
    assert!(!rep["differences"].as_array().unwrap().is_empty());
}

#[test]
fn verify_over_streamable_http_passes_against_the_live_python_server_in_both_eras() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = start_py_http(&p);
    for mode in ["legacy", "auto"] {
        // Recorded over stdio, verified over Streamable HTTP: the same server either way.
        let t = record_py(&p, dir.path(), mode);
        let mut cmd = Command::new(mcptape());
        cmd.arg("verify")
            .arg(&t)
            .args(["--target-url", &format!("http://127.0.0.1:{port}/mcp")]);
        let (code, rep) = verify_json(&mut cmd);
        assert_eq!(rep["differences"], serde_json::json!([]), "{mode}");
        assert_eq!(rep["unanswered"], serde_json::json!([]), "{mode}");
        assert!(rep["compared"].as_u64().unwrap() >= 10, "{mode}: {rep}");
        assert_eq!(code, 0, "{mode}");
    }
}

#[test]
fn verify_reports_the_difference_when_the_server_changed_since_the_recording() {
    // A recording whose templates/list lacks one template the server now has
    // must fail verify at exactly that pointer.
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let t = record_py(&p, dir.path(), "legacy");
    let text = std::fs::read_to_string(&t).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let i = lines
        .iter()
        .position(|l| l.contains("\"resourceTemplates\""))
        .expect("a templates/list reply");
    let mut rec: serde_json::Value = serde_json::from_str(&lines[i]).unwrap();
    let templates = rec["msg"]["result"]["resourceTemplates"]
        .as_array_mut()
        .unwrap();
    let n = templates.len();
    templates.pop();
    lines[i] = rec.to_string();
    let edited = dir.path().join("edited.jsonl");
    std::fs::write(&edited, lines.join("\n") + "\n").unwrap();
    let cmd = py_server_cmd(&p);
    let (code, rep) = verify_path(&edited, &cmd, &[]);
    assert_eq!(code, 1);
    let d = rep["differences"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{rep}");
    assert_eq!(
        d[0]["pointer"],
        format!("/result/resourceTemplates/{}", n - 1)
    );
    assert!(d[0]["expected"].is_null());
}

fn verify_raw(args: &[&str]) -> (i32, String, String, Duration) {
    let mut cmd = Command::new(mcptape());
    cmd.arg("verify").args(args);
    let (o, took) = run_bounded(&mut cmd, Duration::from_secs(60));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        took,
    )
}

/// Fresh-user report bug 6: a transcript cut inside the initialize answer
/// compares nothing; that is a failure, and the cut is named.
#[test]
fn verify_fails_when_the_transcript_is_cut_and_nothing_is_compared() {
    let full = corpus_transcript("everything-stdio.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, &std::fs::read(&full).unwrap()[..2000]).unwrap();
    let serve = format!("{} serve {}", sh_quote(&mcptape()), sh_quote(&full));
    let (rc, _, err, _) = verify_raw(&[cut.to_str().unwrap(), "--target-cmd", &serve]);
    assert_eq!(rc, 1, "{err}");
    assert_has_all(&err, &["is cut and was dropped", "no response compared"]);
}

/// Fresh-user report bug 7: a target that exits is reported with its exit
/// status at once, not as one "no response" per request.
#[test]
fn verify_reports_a_target_that_exits_with_its_status() {
    let t = corpus_transcript("everything-stdio.jsonl");
    // Each request may wait 60 s (the cap), as long as the run's bound: a run that waited
    // out one timeout fails in run_bounded, with no clock read here.
    let (rc, out, err, _) = verify_raw(&[
        t.to_str().unwrap(),
        "--target-cmd",
        "echo gone >&2; exit 7",
        "--timeout",
        "60s",
    ]);
    // Could not run: exit 2 (issue 25), not 1 ("differences found").
    assert_eq!(rc, 2);
    assert_has_all(
        &err,
        &[
            "target exited with exit status: 7",
            "(stderr: gone)",
            "the target closed the connection",
        ],
    );
    assert!(!out.contains("no response within"), "{out}");
}

/// Fresh-user report bug 7 over HTTP: connection refused is said at once.
#[test]
fn verify_reports_connection_refused_at_once() {
    let t = corpus_transcript("everything-http.jsonl");
    let port = free_port(); // nothing listens there
    let url = format!("http://127.0.0.1:{port}/mcp");
    // As above: a 60 s timeout waited out would end the run past run_bounded's 60 s.
    let (rc, _, err, _) = verify_raw(&[
        t.to_str().unwrap(),
        "--target-url",
        &url,
        "--timeout",
        "60s",
    ]);
    assert_eq!(rc, 2);
    assert_has(&err, "HTTP: ");
}

/// `mcptape verify everything-stdio.jsonl --target-cmd cat EXTRA...` refuses its
/// arguments: exit code 2 and `message` on stderr.
fn assert_verify_refuses(extra: &[&str], message: &str) {
    let t = corpus_transcript("everything-stdio.jsonl");
    let mut args = vec![t.to_str().unwrap(), "--target-cmd", "cat"];
    args.extend(extra);
    let (rc, _, err, _) = verify_raw(&args);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains(message), "{err}");
}

/// Fresh-user report bug 12.
#[test]
fn verify_rejects_timeout_zero() {
    assert_verify_refuses(&["--timeout", "0ms"], "--timeout 0ms must be longer than 0");
}

/// Fresh-user report bug 22: `~2` is not an RFC 6901 escape.
#[test]
fn verify_rejects_an_invalid_json_pointer_escape() {
    assert_verify_refuses(
        &["--ignore", "/result/~2bad"],
        "'~' must be followed by 0 or 1",
    );
}

/// Regression (new-user report): `verify T --target-cmd false` printed `1 request(s), 0
/// response(s) compared, 0 difference(s), 0 unanswered` though the target closed while record
/// 1 waited: that request is unanswered.
#[test]
fn regression_a_request_the_target_closed_on_counts_as_unanswered() {
    let t = corpus_transcript("everything-stdio.jsonl");
    let (rc, out, err, _) = verify_raw(&[t.to_str().unwrap(), "--target-cmd", "false"]);
    assert_eq!(rc, 2, "{out}\n{err}");
    assert_has_all(
        &out,
        &[
            "verify: 1 request(s), 0 response(s) compared, 0 difference(s), 1 unanswered",
            "record 1 (line 2): no response: the target closed the connection",
        ],
    );
    assert_has(
        &err,
        "the target closed the connection while record 1 (line 2) waited",
    );
    // The JSON report says the same: record index 0 closed on and unanswered.
    let (rc, rep) = verify("everything-stdio.jsonl", "false", &[]);
    assert_eq!(rc, 2, "{rep}");
    assert_eq!(rep["closedAt"], 0, "{rep}");
    assert_eq!(rep["unanswered"], serde_json::json!([0]), "{rep}");
    assert_eq!(rep["requests"], 1, "{rep}");
}

/// Regression (issue 28): against a target that never answers, verify waited 12 requests × 10 s
/// with no overall bound. `--max-time` bounds the whole run: the request waiting when it runs
/// out is unanswered, the rest are not sent, and the run fails saying so.
#[test]
fn verify_max_time_bounds_a_target_that_never_answers() {
    let (target, extra) = ("cat > /dev/null", words("--timeout 10s --max-time 1s"));
    let (rc, out, err) = verify_text("everything-stdio.jsonl", target, &extra);
    assert_eq!(rc, 1, "{out}\n{err}");
    assert_has_all(
        &out,
        &[
            "record 1 (line 2): no response before --max-time 1s",
            "not sent (--max-time 1s)",
        ],
    );
    assert_has(
        &err,
        "stopped at the overall time bound (--max-time) while record 1 (line 2) waited",
    );
    let (rc, rep) = verify("everything-stdio.jsonl", target, &extra);
    assert_eq!(rc, 1, "{rep}");
    assert_eq!(rep["outOfTimeAt"], 0, "{rep}");
    assert_eq!(rep["requests"], 1, "{rep}");
    assert!(rep["notSent"].as_u64().unwrap() > 0, "{rep}");
}

/// Regression (issue 28): against a target that answers every line with something that is not
/// JSON, verify said only "no response within 2s"; it now counts those lines and shows the
/// first, and says each unanswered request as it happens (progress on stderr).
#[test]
fn verify_reports_the_lines_of_a_target_that_answers_with_non_json() {
    let echo = r#"while IFS= read -r l; do printf 'not json: %s\n' "$l"; done"#;
    let (rc, out, err) = verify_text("everything-stdio.jsonl", echo, &["--timeout", "200ms"]);
    assert_eq!(rc, 1, "{out}\n{err}");
    assert_has(
        &out,
        "line(s) from the target are not JSON (they answer nothing); the first: \"not json: {",
    );
    assert_has(
        &err,
        "mcptape verify: record 1 (line 2) initialize: no response within 200ms; going on",
    );
    let (rc, rep) = verify("everything-stdio.jsonl", echo, &["--timeout", "200ms"]);
    assert_eq!(rc, 1, "{rep}");
    let requests = rep["requests"].as_u64().unwrap();
    assert!(requests > 1, "{rep}");
    // Every request line was echoed back as noise (notifications too).
    assert!(rep["noiseLines"].as_u64().unwrap() >= requests, "{rep}");
    assert!(
        rep["firstNoiseLine"]
            .as_str()
            .unwrap()
            .starts_with("not json: {\"jsonrpc\""),
        "{rep}"
    );
}

/// Fresh-user report: a recorded JSON-RPC batch was said in a warning only; verify's count
/// (`15 request(s), 15 response(s) compared`) did not say that the batch's requests were never
/// sent. The summary now counts the skipped batches and their requests, and each warning says
/// what its batch held (a server batch of answers said `0 requests`). Served by `mcptape
/// serve` itself: no peer needed.
#[test]
fn verify_counts_the_recorded_batches_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    let src = corpus_transcript("everything-stdio.jsonl");
    let text = std::fs::read_to_string(&src).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let batch_c2s = r#"{"tUs":2000000,"kind":"message","dir":"c2s","msg":[{"jsonrpc":"2.0","id":901,"method":"resources/list"},{"jsonrpc":"2.0","id":902,"method":"resources/templates/list"},{"jsonrpc":"2.0","method":"notifications/x"}]}"#;
    let batch_s2c = r#"{"tUs":2000100,"kind":"message","dir":"s2c","msg":[{"jsonrpc":"2.0","id":901,"result":{"resources":[]}},{"jsonrpc":"2.0","id":902,"result":{"resourceTemplates":[]}}]}"#;
    lines.splice(7..7, [batch_c2s, batch_s2c]);
    let t = dir.path().join("batch.jsonl");
    std::fs::write(&t, lines.join("\n") + "\n").unwrap();
    let target = format!(
        "{} serve {} --latency fixed:0ms",
        sh_quote(&mcptape()),
        sh_quote(&src)
    );
    let (rc, out, err, _) = verify_raw(&[t.to_str().unwrap(), "--target-cmd", &target]);
    assert_eq!(rc, 0, "{out}\n{err}");
    assert!(
        out.contains(
            "0 unanswered; 2 recorded JSON-RPC batch(es) skipped, 2 request(s) in them not sent"
        ),
        "{out}"
    );
    assert!(
        err.contains("line 8: record 7 is a JSON-RPC batch of 3 messages from the client (2 requests, 1 notification)"),
        "{err}"
    );
    assert!(
        err.contains(
            "line 9: record 8 is a JSON-RPC batch of 2 messages from the server (2 responses)"
        ),
        "{err}"
    );
    // `--json` counts them too (it had no batch count).
    let (rc, rep) = verify_path(&t, &target, &[]);
    assert_eq!(rc, 0, "{rep}");
    assert_eq!(rep["batchesSkipped"], 2, "{rep}");
    assert_eq!(rep["batchedRequestsNotSent"], 2, "{rep}");
}
