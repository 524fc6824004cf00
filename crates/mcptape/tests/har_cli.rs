//! `mcptape export har` / `mcptape import har` on the shipped Streamable HTTP
//! recordings: the imported transcript has the original's messages, `check`
//! finds the same findings in it, and `mcptape serve --listen` on it answers
//! the real Python SDK client exactly as the recorded server did; and a HAR
//! saved by headless Chromium (DevTools protocol, through playwright-core's
//! `recordHar`) of a page POSTing to `mcptape serve --listen` imports and
//! checks. Needs the peers (`scripts/install-peers.sh`): the Python client,
//! Node 22, Debian's `chromium` and the pinned playwright-core.

use crate::record_support as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

const HTTP_RECORDINGS: [&str; 4] = [
    "crawl-everything-http-2026-07-28-fallback.jsonl",
    "everything-http.jsonl",
    "py-http-2025-11-25.jsonl",
    "py-http-2026-07-28.jsonl",
];

/// `export har` then `import har` of a corpus recording into `dir`; the imported path.
fn round_trip(dir: &Path, name: &str) -> PathBuf {
    let har = dir.join(name.replace(".jsonl", ".har"));
    let out = dir.join(name);
    let mut cmd = Command::new(mcptape());
    cmd.args(["export", "har"])
        .arg(corpus_transcript(name))
        .arg("-o")
        .arg(&har);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut cmd = Command::new(mcptape());
    cmd.args(["import", "har"]).arg(&har).arg("-o").arg(&out);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("MCP entries"), "{err}");
    assert!(!err.contains("skipped"), "{name}: {err}");
    out
}

/// `check --format json` findings without their record and line (the derived
/// `protocol` record may sit one place earlier), and the file's summary.
fn findings(path: &Path) -> (serde_json::Value, Vec<serde_json::Value>) {
    let mut cmd = Command::new(mcptape());
    cmd.args(["check", "--format", "json"]).arg(path);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    let f = &v["files"][0];
    let summary = serde_json::json!({
        "revision": f["revision"], "revisionSource": f["revisionSource"],
        "records": f["records"], "messages": f["messages"], "summary": v["summary"],
        "exit": o.status.code(),
    });
    let list = f["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let mut x = x.clone();
            let m = x.as_object_mut().unwrap();
            m.remove("record");
            m.remove("line");
            m.remove("file");
            x
        })
        .collect();
    (summary, list)
}

#[test]
fn imported_har_of_every_http_recording_has_its_messages_and_check_findings() {
    let dir = tempfile::tempdir().unwrap();
    let mut total_findings = 0;
    for name in HTTP_RECORDINGS {
        let imported = round_trip(dir.path(), name);
        let original = read_transcript(&corpus_transcript(name));
        let back = read_transcript(&imported);
        let m =
            |t: &mcptape_transcript::Transcript| -> Vec<(mcptape_transcript::Direction, String)> {
                t.messages().map(|(_, _, d, m)| (d, m.to_owned())).collect()
            };
        assert_eq!(m(&back), m(&original), "{name}");
        let (want_sum, want) = findings(&corpus_transcript(name));
        let (got_sum, got) = findings(&imported);
        assert_eq!(got_sum, want_sum, "{name}");
        assert_eq!(got, want, "{name}");
        total_findings += want.len();
    }
    // The corpus has at least one finding per recording (error-id-null,
    // textlike-mimetype-as-blob, blob-over-size-threshold twice; check's rules grow):
    // the comparison compared something.
    assert!(total_findings >= 4, "{total_findings} findings");
}

#[test]
fn serve_on_an_imported_har_answers_the_python_client_as_the_recorded_server_did() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("everything-http.jsonl", everything_two_template_args()),
        ("py-http-2025-11-25.jsonl", py_server_client_args("legacy")),
        ("py-http-2026-07-28.jsonl", py_server_client_args("auto")),
    ] {
        let imported = round_trip(dir.path(), name);
        let (_serve, serve_port) = serve_listen(&imported, "fixed:1ms");
        let out = dir.path().join(format!("replayed-{name}"));
        let (mut rec, rec_port) = record_listen(
            &out,
            &format!("http://127.0.0.1:{serve_port}/mcp"),
            Stdio::null(),
        );
        let mut cmd = py_client_cmd(&peers(), &args);
        cmd.args(["--url", &format!("http://127.0.0.1:{rec_port}/mcp")]);
        run_json(&mut cmd, Duration::from_secs(120));
        terminate(&mut rec);
        assert_same_responses(name, &read_transcript(&out));
    }
}

#[test]
fn import_har_of_a_non_har_file_fails_with_the_file_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.har");
    std::fs::write(&bad, b"{\"log\":{\"version\":\"1.2\"}}").unwrap();
    let mut cmd = Command::new(mcptape());
    cmd.args(["import", "har"])
        .arg(&bad)
        .arg("-o")
        .arg(dir.path().join("t.jsonl"));
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("bad.har: not a HAR 1.x document: missing field `creator`"),
        "{err}"
    );
    assert!(!dir.path().join("t.jsonl").exists());
}

/// A path `scripts/install-peers.sh` writes into `.tools/env.sh` (or the
/// environment overrides). Panics — the test FAILS — when it is missing.
fn installed(key: &str) -> PathBuf {
    let p = std::env::var(key).map(PathBuf::from).unwrap_or_else(|_| {
        let env = std::fs::read_to_string(repo_root().join(".tools/env.sh")).unwrap_or_default();
        let prefix = format!("export {key}=");
        env.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|v| PathBuf::from(v.trim_matches('"')))
            .unwrap_or_else(|| panic!("{key} not in .tools/env.sh: run scripts/install-peers.sh"))
    });
    assert!(
        p.exists(),
        "{key}: {} missing: run scripts/install-peers.sh",
        p.display()
    );
    p
}

#[test]
fn a_har_saved_by_headless_chromium_against_serve_listen_imports_and_checks() {
    let (chromium, playwright) = (
        installed("MCPTAPE_CHROMIUM"),
        installed("MCPTAPE_PLAYWRIGHT_CORE"),
    );
    let node = peers().node;
    let dir = tempfile::tempdir().unwrap();
    let name = "everything-http.jsonl";
    let original = read_transcript(&corpus_transcript(name));
    // initialize, notifications/initialized, resources/list, resources/templates/list: sent
    // by the page's fetch as recorded, byte for byte.
    let sent: Vec<String> = original
        .messages()
        .filter(|(_, _, d, _)| *d == mcptape_transcript::Direction::C2s)
        .take(4)
        .map(|(_, _, _, m)| m.to_owned())
        .collect();
    let requests: Vec<serde_json::Value> = sent
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let mut h = serde_json::json!({
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
            });
            if i > 0 {
                h["mcp-protocol-version"] = "2025-11-25".into();
            }
            serde_json::json!({ "body": body, "headers": h })
        })
        .collect();
    let req_file = dir.path().join("requests.json");
    std::fs::write(&req_file, serde_json::to_vec(&requests).unwrap()).unwrap();

    // The page is served from 127.0.0.1:PAGE_PORT (a loopback Origin, which serve accepts;
    // the page's own GETs are not MCP and must be skipped by the importer).
    let port = free_port();
    let mut serve = Command::new(mcptape());
    serve.arg("serve").arg(corpus_transcript(name)).args([
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--latency",
        "fixed:1ms",
    ]);
    let _serve = spawn_listening(&mut serve, port);
    let har = dir.path().join("chromium.har");
    let mut cap = Command::new(&node);
    cap.arg(repo_root().join("crates/mcptape/tests/data/har/capture.js"))
        .arg(&playwright)
        .arg(&chromium)
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg("0")
        .arg(&req_file)
        .arg(&har)
        .env("HOME", dir.path());
    let (o, _) = run_bounded(&mut cap, Duration::from_secs(300));
    assert!(
        o.status.success(),
        "capture: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let statuses: Vec<i64> = out["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_i64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 202, 200, 200], "{out}");
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&har).unwrap()).unwrap();
    assert_eq!(saved["log"]["creator"]["name"], "Playwright");

    let imported = dir.path().join("imported.jsonl");
    let mut cmd = Command::new(mcptape());
    cmd.args(["import", "har"])
        .arg(&har)
        .arg("-o")
        .arg(&imported);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("4 MCP entries"), "{err}");
    assert!(err.contains("/app.js (not an MCP request)"), "{err}");

    let back = read_transcript(&imported);
    let c2s: Vec<String> = back
        .messages()
        .filter(|(_, _, d, _)| *d == mcptape_transcript::Direction::C2s)
        .map(|(_, _, _, m)| m.to_owned())
        .collect();
    assert_eq!(c2s, sent);
    // serve answered with the recorded responses, and the browser kept them byte for byte.
    let want = responses(&original);
    assert_eq!(responses(&back), want[..3].to_vec());

    let (sum, list) = findings(&imported);
    assert_eq!(sum["exit"], 0, "{sum} {list:?}");
    assert_eq!(sum["revision"], "2025-11-25", "{sum}");
    assert_eq!(sum["messages"], 7, "{sum}");
    assert!(list.is_empty(), "{list:?}");
}
