//! The exported k6 script against the live peers on 127.0.0.1: server-everything
//! over streamableHttp (2025-11-25, sessions, SSE answers) and the Python SDK
//! server over HTTP in both eras (2026-07-28 stateless with JSON answers,
//! 2025-11-25 with sessions). Real k6 and real servers (`scripts/install-peers.sh`).

use crate::k6_support as k6s;

use k6s::*;

/// Exports `transcript`, runs it with k6 against `url`, imports the output.
fn run_live(transcript: &str, url: &str, rate: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.js");
    export(transcript, &script, &[rate, &["--duration", "3s"]].concat());
    let out = dir.path().join("out.json");
    let out_arg = format!("json={}", out.display());
    let o = run_k6(&mut k6_run(&script, url, &["--out", &out_arg]));
    assert!(
        o.status.success(),
        "k6 against {url}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    import(&[out], &dir.path().join("report"))
}

/// Every answer had the request's id and the class the recording had: no
/// handshake failed, every read was answered as recorded.
fn assert_answers_as_recorded(r: &serde_json::Value, what: &str) {
    assert_eq!(r["k6"]["handshakeFailures"], 0, "{what}: {r:#}");
    assert!(r["single"]["count"].as_u64().unwrap() > 0, "{what}: {r:#}");
    assert!(r["turns"].as_u64().unwrap() > 0, "{what}: {r:#}");
    assert_eq!(
        r["k6"]["unexpectedShare"].as_f64(),
        Some(0.0),
        "{what}: {r:#}"
    );
}

#[test]
fn exported_script_runs_against_live_server_everything_over_streamable_http() {
    let (_g, port) = everything_http();
    let r = run_live(
        "everything-http.jsonl",
        &format!("http://127.0.0.1:{port}/mcp"),
        &["--rate", "10/s", "--turn-rate", "2/s", "--deadline", "5s"],
    );
    assert_answers_as_recorded(&r, "server-everything");
    // The recording's one error answer (a missing document) came back, classified as bench does.
    assert!(
        r["errors"]["invalid-params (-32602, no data.uri)"]
            .as_u64()
            .unwrap()
            > 0,
        "{r:#}"
    );
    assert_eq!(r["transcript"], "everything-http.jsonl");
}

#[test]
fn exported_script_runs_against_the_python_sdk_server_in_both_eras() {
    let p = peers();
    let (_g, port) = start_py_http(&p);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let rate = [
        "--rate",
        "5/s",
        "--turn-rate",
        "1/s",
        "--parallel",
        "2",
        "--deadline",
        "5s",
    ];
    let stateless = run_live("py-http-2026-07-28.jsonl", &url, &rate);
    assert_answers_as_recorded(&stateless, "python 2026-07-28");
    let session = run_live("py-http-2025-11-25.jsonl", &url, &rate);
    assert_answers_as_recorded(&session, "python 2025-11-25");
    for r in [&stateless, &session] {
        assert_eq!(r["parallel"], 2);
        assert!(
            r["errors"]["not-found (-32602 + data.uri)"]
                .as_u64()
                .unwrap()
                > 0,
            "{r:#}"
        );
    }
}

/// `sent`, `ok`, `error answers` and `timed out` of one phase of report.json: sent must be
/// the sum of the others (and of `closed`); returns (sent, closed).
fn phase_adds_up(r: &serde_json::Value, phase: &str) -> (u64, u64) {
    let c = &r[phase];
    let n = |k: &str| {
        c[k].as_u64()
            .unwrap_or_else(|| panic!("{phase}.{k}: {r:#}"))
    };
    let errs = error_answers(c);
    let sent = n("sent");
    assert!(sent > 0, "{phase}: nothing sent: {r:#}");
    assert_eq!(
        sent,
        n("answeredOk") + errs + n("timedOut") + n("closed"),
        "{phase}: {c:#}"
    );
    (sent, n("closed"))
}

/// Fresh-user report: `import k6` of a real run against server-everything printed
/// `single reads: none sent` and `sent 0 ok 0 error answers 0 timed out 0` over 113 reads,
/// a heading `mcptape bench  rec-http.jsonl`, and a wrote-line without report.html.
#[test]
fn import_k6_counters_add_up_to_the_samples() {
    let (_g, port) = everything_http();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.js");
    export(
        "everything-http.jsonl",
        &script,
        &["--rate", "10/s", "--turn-rate", "2/s", "--duration", "3s"],
    );
    let out = dir.path().join("OUT.json.gz");
    let out_arg = format!("json={}", out.display());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = run_k6(&mut k6_run(&script, &url, &["--out", &out_arg]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report_dir = dir.path().join("k6r");
    let o = std::process::Command::new(mcptape())
        .args(["import", "k6"])
        .arg(&out)
        .arg("--out")
        .arg(&report_dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report_dir.join("report.json")).unwrap()).unwrap();

    let (sent, closed) = phase_adds_up(&r, "singlePhase");
    assert_eq!(
        r["single"]["count"].as_u64().unwrap(),
        sent - closed,
        "{r:#}"
    );
    let (turn_sent, turn_closed) = phase_adds_up(&r, "turnPhase");
    assert_eq!(
        turn_sent,
        r["turns"].as_u64().unwrap() * r["parallel"].as_u64().unwrap(),
        "{r:#}"
    );
    assert_eq!(
        r["turnReadsAll"]["count"].as_u64().unwrap(),
        turn_sent - turn_closed,
        "{r:#}"
    );
    // The recording's error answer came back: not every read answered ok; k6 marked it as
    // recorded (mcp_unexpected 0), so the headline counts it answered as recorded, as bench's
    // does (issue 25), with the numbers of report.json.
    let c = &r["singlePhase"];
    let (ok, recorded) = (
        c["answeredOk"].as_u64().unwrap(),
        c["errorsAsRecorded"].as_u64().unwrap(),
    );
    assert!(ok < sent, "{r:#}\n{table}");
    assert!(recorded > 0, "{r:#}\n{table}");
    assert!(
        table.contains(&format!(
            "answered as recorded{}: {ok} results, {recorded} recorded errors",
            if ok + recorded == sent {
                String::new()
            } else {
                format!(" ({:.1} %)", (ok + recorded) as f64 * 100.0 / sent as f64)
            }
        )),
        "{table}"
    );
    assert!(table.contains("  answered ok "), "{table}");
    assert!(!table.contains("none sent"), "{table}");

    let first = table.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "mcptape import k6  {}  (k6 run replaying everything-http.jsonl)",
            out.display()
        )
    );
    assert!(
        table.trim_end().ends_with(&format!(
            "wrote {}/report.json, latency.hlog, latency.svg, report.html",
            report_dir.display()
        )),
        "{table}"
    );
    for f in ["report.json", "latency.hlog", "latency.svg", "report.html"] {
        assert!(report_dir.join(f).is_file(), "{f}");
    }
    let help = std::process::Command::new(mcptape())
        .args(["import", "k6", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("report.html"));
}

/// Issue 23: the stock exported script at 20 VUs at once (k6's own `--vus 20`:
/// every VU its own MCP session, numbering its ids as the script does) against
/// one `serve --listen` at the recorded latency: no read ends as EOF (closed
/// connection), no handshake fails, every answer is of the recorded class.
#[test]
fn exported_script_at_20_vus_against_serve_loses_no_read_as_eof() {
    let (_serve, url) = serve_http_url("everything-http.jsonl", "recorded");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.js");
    export("everything-http.jsonl", &script, &["--duration", "3s"]);
    let out = dir.path().join("out.json");
    let out_arg = format!("json={}", out.display());
    let o = run_k6(&mut k6_run(
        &script,
        &url,
        &["--vus", "20", "--duration", "4s", "--out", &out_arg],
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = import(&[out], &dir.path().join("report"));
    assert_eq!(r["k6"]["handshakeFailures"], 0, "{r:#}");
    assert!(
        r["k6"]["vusPeak"].as_u64().unwrap_or(0) >= 20,
        "{:#}",
        r["k6"]
    );
    let (sent, closed) = phase_adds_up(&r, "singlePhase");
    assert!(sent > 20, "{r:#}");
    assert_eq!(closed, 0, "{r:#}");
    assert_eq!(r["k6"]["unexpectedShare"].as_f64(), Some(0.0), "{r:#}");
}

/// k6's own `http_reqs` points of the single-request scenario (`reads`), by their `name` tag
/// (the script names each request by its method), handshakes left out, from a k6 JSON output.
fn k6_requests_by_method(out: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let text = std::fs::read_to_string(out).unwrap();
    let mut n = std::collections::BTreeMap::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let tags = &v["data"]["tags"];
        // Each VU's handshake is sent in the scenario too: not a replayed request.
        let handshake = ["initialize", "notifications/initialized", "server/discover"]
            .contains(&tags["name"].as_str().unwrap_or(""));
        if v["type"] == "Point"
            && v["metric"] == "http_reqs"
            && tags["scenario"] == "reads"
            && !handshake
        {
            *n.entry(tags["name"].as_str().unwrap().to_owned())
                .or_insert(0) += v["data"]["value"].as_f64().unwrap() as u64;
        }
    }
    n
}

/// Issue 27: the k6 round trip per method. `export k6` of a recording that reads, calls tools
/// and gets a prompt (the Python SDK server over Streamable HTTP) writes the recorded mix of
/// every method with a `method` and `mcp_name` tag; real k6 runs it against `serve --listen`;
/// `import k6` reads it back per method and per tool, and its per-method counts equal k6's
/// own `http_reqs` counts of those requests.
#[test]
fn k6_round_trip_per_method_counts_equal_k6s_own() {
    let transcript = "py-tools-http-2025-11-25.jsonl";
    let (_serve, url) = serve_http_url(transcript, "fixed:1ms");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.js");
    export(
        transcript,
        &script,
        &["--rate", "40/s", "--turn-rate", "0/s", "--duration", "2s"],
    );
    let js = std::fs::read_to_string(&script).unwrap();
    assert!(
        js.contains("\"requests\": ["),
        "the plan's every-method list"
    );
    let out = dir.path().join("out.json");
    let out_arg = format!("json={}", out.display());
    let o = run_k6(&mut k6_run(&script, &url, &["--out", &out_arg]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = import(std::slice::from_ref(&out), &dir.path().join("report"));
    assert_eq!(r["k6"]["handshakeFailures"], 0, "{r:#}");
    assert_eq!(r["k6"]["unexpectedShare"].as_f64(), Some(0.0), "{r:#}");

    let k6_own = k6_requests_by_method(&out);
    let imported: std::collections::BTreeMap<String, u64> = r["byMethod"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["method"].as_str().unwrap().to_owned(),
                m["sent"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(imported, k6_own, "{r:#}");
    for m in [
        "tools/call",
        "prompts/get",
        "resources/read",
        "resources/list",
    ] {
        assert!(
            imported.get(m).copied().unwrap_or(0) > 0,
            "{m}: {imported:?}"
        );
    }
    // The recorded mix: per cycle 2 reads + 1 missing read, 2 add calls, 1 review.
    assert_eq!(
        r["mix"],
        "recorded (prompts/get=1,prompts/list=1,resources/list=1,resources/read=3,resources/templates/list=1,tools/call=2,tools/list=1)"
    );
    let tools: Vec<&str> = r["byTool"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["add"]);
    assert_eq!(r["byTool"][0]["sent"], imported["tools/call"]);
    assert_eq!(r["byTool"][0]["ok"], imported["tools/call"]);
    assert_eq!(r["byPrompt"][0]["name"], "review");
    // The .hlog has the same per-method counts.
    let hlog = std::fs::read(dir.path().join("report/latency.hlog")).unwrap();
    let h = mcptape_report::render::merge_hlog_tagged(&hlog, Some("method-tools-call")).unwrap();
    assert_eq!(h.len(), imported["tools/call"]);
}
