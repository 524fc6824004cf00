//! `mcptape crawl` against each real server (server-everything and the Python
//! SDK server, stdio and Streamable HTTP, both protocol eras): every listed
//! resource is read, at least one blob, exactly one not-found error.

use crate::record_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mcptape_transcript::{Direction, Transcript, Transport};
use record_support::*;

/// `mcptape crawl -o OUT --json`, to which the test adds its arguments.
fn crawl_command(out: &Path) -> Command {
    let mut cmd = Command::new(mcptape());
    cmd.arg("crawl").arg("-o").arg(out).arg("--json");
    cmd
}

/// Runs `mcptape crawl -o T --json ARGS...` and returns the transcript and the JSON report.
fn crawl(out: &Path, args: &[String]) -> (Transcript, serde_json::Value) {
    let report = run_json(crawl_command(out).args(args), Duration::from_secs(90));
    (read_transcript(out), report)
}

/// The transcript holds a successful read of every listed URI, at least one
/// blob read and exactly one error, the not-found on `missing`.
fn assert_complete_crawl(t: &Transcript, missing: &str, not_found_code: i64) -> Reads {
    let listed = listed_uris(t);
    assert!(!listed.is_empty());
    let reads = Reads::of(t);
    let ok = reads.ok_uris();
    for uri in &listed {
        assert!(
            ok.contains(uri),
            "listed {uri} was not read successfully: {reads:?}"
        );
    }
    assert!(reads.blob_reads() >= 1, "a blob read: {reads:?}");
    assert_eq!(reads.errors(), vec![(missing.to_owned(), not_found_code)]);
    reads
}

/// `flags` (split at white space: none has a space) then `server` (`-- CMD...` or
/// nothing), as owned arguments.
/// Crawls `server` with `flags` into `t.jsonl` of a new temp dir: the dir (keep it alive while
/// the transcript is used), the transcript and the report.
fn crawl_fresh(
    flags: &str,
    server: Vec<String>,
) -> (tempfile::TempDir, Transcript, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let (t, report) = crawl(&dir.path().join("t.jsonl"), &with_server(flags, server));
    (dir, t, report)
}

fn with_server(flags: &str, server: Vec<String>) -> Vec<String> {
    let mut args: Vec<String> = flags.split_whitespace().map(str::to_owned).collect();
    args.extend(server);
    args
}

fn everything_stdio(p: &Peers) -> Vec<String> {
    vec![
        "--".into(),
        p.node.display().to_string(),
        p.server_everything().display().to_string(),
        "stdio".into(),
    ]
}

fn py_stdio(p: &Peers) -> Vec<String> {
    vec![
        "--".into(),
        p.python.display().to_string(),
        p.script("py_server.py").display().to_string(),
        "stdio".into(),
    ]
}

const EVERYTHING_MISSING: &str = "demo://resource/static/document/mcptape-does-not-exist";
const PY_MISSING: &str = "mcptape://docs/mcptape-does-not-exist";

#[test]
fn crawl_everything_stdio_reads_every_listed_resource_and_template_blobs() {
    let (_dir, t, report) = crawl_fresh(
        "--expand demo://resource/dynamic/blob/{resourceId} resourceId=1,2",
        everything_stdio(&peers()),
    );
    assert_eq!(t.header.transport, Transport::Stdio);
    assert_eq!(t.protocol_version(), Some("2025-11-25"));
    let reads = assert_complete_crawl(&t, EVERYTHING_MISSING, -32602);
    assert_eq!(reads.reads.len(), 7 + 2 + 1);
    assert_eq!(reads.blob_reads(), 2);
    assert_eq!(report["templates"].as_array().unwrap().len(), 2);
    assert_eq!(
        exit_of(&t).0,
        Some(0),
        "server-everything exits when its stdin closes"
    );
}

#[test]
fn crawl_everything_stdio_2026_falls_back_to_initialize() {
    let (_dir, t, report) = crawl_fresh(
        "--protocol 2026-07-28 --expand demo://resource/dynamic/blob/{resourceId} resourceId=3",
        everything_stdio(&peers()),
    );
    assert_eq!(report["fellBack"], true);
    let c2s = messages(&t, Direction::C2s);
    assert_eq!(c2s[0]["method"], "server/discover");
    let s2c = messages(&t, Direction::S2c);
    let discover_reply = s2c.iter().find(|m| m["id"] == c2s[0]["id"]).unwrap();
    assert_eq!(
        discover_reply["error"]["code"], -32601,
        "server-everything does not know server/discover"
    );
    assert_eq!(c2s[1]["method"], "initialize");
    assert_eq!(t.protocol_version(), Some("2025-11-25"));
    assert_complete_crawl(&t, EVERYTHING_MISSING, -32602);
}

#[test]
fn crawl_python_server_stdio_both_eras() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    for era in ["2025-11-25", "2026-07-28"] {
        let args = with_server(
            &format!("--protocol {era} --expand mcptape://items/{{id}} id=1,two"),
            py_stdio(&p),
        );
        let (t, report) = crawl(&dir.path().join(format!("{era}.jsonl")), &args);
        assert_eq!(report["fellBack"], false);
        assert_eq!(t.protocol_version(), Some(era));
        let reads = assert_complete_crawl(&t, PY_MISSING, -32602);
        assert_eq!(reads.reads.len(), 6 + 2 + 1);
        assert_eq!(reads.blob_reads(), 3, "pixel.png, large.png, ramp.bin");
        let large = report_read(&report, "mcptape://blobs/large.png");
        assert_eq!(
            large["blobBase64Chars"], 2_798_784,
            "the 2,099,087-byte PNG, base64"
        );
        // The not-found error carries the URI (spec 2026-07-28; the SDK sends it in both eras).
        let s2c = messages(&t, Direction::S2c);
        assert!(s2c.iter().any(|m| m["error"]["data"]["uri"] == PY_MISSING));
        if era == "2026-07-28" {
            let c2s = messages(&t, Direction::C2s);
            assert_eq!(c2s[0]["method"], "server/discover");
            assert!(c2s.iter().all(|m| m["method"] != "initialize"));
            assert!(c2s[1]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == era);
        }
    }
}

#[test]
fn crawl_http_servers_both_eras() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let (_se, se_port) = start_everything_http(&p);
    let (_py, py_port) = start_py_http(&p);

    let se_url = format!("http://127.0.0.1:{se_port}/mcp");
    let args = with_server(
        &format!(
            "--url {se_url} --expand demo://resource/dynamic/blob/{{resourceId}} resourceId=1"
        ),
        vec![],
    );
    let (t, _) = crawl(&dir.path().join("se.jsonl"), &args);
    assert_eq!(t.header.transport, Transport::Http);
    assert_complete_crawl(&t, EVERYTHING_MISSING, -32602);
    assert!(t.records.iter().any(|r| matches!(&r.event, mcptape_transcript::Event::Message { http: Some(h), .. } if h.sse_event_id.is_some())));

    let py_url = format!("http://127.0.0.1:{py_port}/mcp");
    for era in ["2025-11-25", "2026-07-28"] {
        let args = with_server(&format!("--url {py_url} --protocol {era}"), vec![]);
        let (t, _) = crawl(&dir.path().join(format!("py-{era}.jsonl")), &args);
        assert_eq!(t.protocol_version(), Some(era));
        let reads = assert_complete_crawl(&t, PY_MISSING, -32602);
        assert_eq!(reads.blob_reads(), 3);
        let c2s_headers: Vec<Vec<(String, String)>> = t
            .records
            .iter()
            .filter_map(|r| match &r.event {
                mcptape_transcript::Event::Message {
                    dir: Direction::C2s,
                    http: Some(h),
                    ..
                } => Some(h.headers.clone()),
                _ => None,
            })
            .collect();
        let has = |hs: &Vec<(String, String)>, k: &str| hs.iter().any(|(n, _)| n == k);
        if era == "2026-07-28" {
            assert!(
                c2s_headers
                    .iter()
                    .all(|h| has(h, "mcp-method") && has(h, "mcp-protocol-version"))
            );
            assert!(
                c2s_headers.iter().all(|h| !has(h, "mcp-session-id")),
                "no session in 2026-07-28"
            );
        } else {
            assert!(
                c2s_headers.iter().skip(1).all(|h| has(h, "mcp-session-id")),
                "session after initialize"
            );
        }
    }
}

#[test]
fn crawl_answers_a_server_request_it_declared_no_capability_for_with_method_not_found() {
    // Reading mcptape://ask/roots makes the Python SDK server send roots/list to the client.
    let flags = "--expand mcptape://ask/{what} what=roots";
    let (_dir, t, report) = crawl_fresh(flags, py_stdio(&peers()));
    assert_eq!(
        report["answeredServerRequests"],
        serde_json::json!(["roots/list"])
    );
    let s2c = messages(&t, Direction::S2c);
    let c2s = messages(&t, Direction::C2s);
    let ask = s2c
        .iter()
        .find(|m| m["method"] == "roots/list")
        .expect("the server asked for roots");
    let answer = c2s
        .iter()
        .find(|m| m["id"] == ask["id"] && m.get("method").is_none())
        .expect("mcptape answered");
    assert_eq!(answer["error"]["code"], -32601);
    assert!(answer.get("result").is_none());
    let read = c2s
        .iter()
        .find(|m| m["params"]["uri"] == "mcptape://ask/roots")
        .unwrap();
    let reply = s2c
        .iter()
        .find(|m| m["id"] == read["id"] && m.get("method").is_none())
        .unwrap();
    let text = reply["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("roots/list failed: code -32601"), "{text}");
}

/// Runs `mcptape crawl -o OUT ARGS...` expecting it to refuse its arguments:
/// exit code 2, `message` on stderr, and no output file left behind.
fn assert_crawl_refused(args: &[&str], message: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("refused.jsonl");
    let o = run_mcptape_out("crawl", &out, args, Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
    assert!(!out.exists(), "{args:?}: no output file is left behind");
}

/// Fresh-user report bug 15: `crawl --protocol 1999-01-01` was accepted and
/// sent as `protocolVersion`. Only the known revisions are accepted.
#[test]
fn crawl_unknown_protocol_revision_is_refused_before_the_server_starts() {
    let msg = "unknown protocol revision `1999-01-01`: use one of 2025-06-18, 2025-11-25 (initialize) or 2026-07-28 (server/discover)";
    assert_crawl_refused(&["--protocol", "1999-01-01", "--", "true"], msg);
    assert_crawl_refused(
        &[
            "--protocol",
            "1999-01-01",
            "--url",
            "http://127.0.0.1:1/mcp",
        ],
        msg,
    );
    // The three known revisions pass validation: the failure is then the spawn.
    for known in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.jsonl");
        let o = run_mcptape_out(
            "crawl",
            &out,
            &[
                "--protocol",
                known,
                "--",
                "/nonexistent/mcptape-test-server",
            ],
            Duration::from_secs(20),
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{known}: {stderr}");
        assert!(
            stderr.contains("cannot start server `/nonexistent/mcptape-test-server`"),
            "{known}: {stderr}"
        );
    }
}

/// Fresh-user report bug 16: a rejected URL or template left a header-only
/// (or partly written) output file. Arguments are checked first.
#[test]
fn crawl_rejected_url_or_template_leaves_no_output_file() {
    assert_crawl_refused(
        &["--url", "https://127.0.0.1:1/mcp"],
        "unsupported upstream URL `https://127.0.0.1:1/mcp`: only absolute http:// URLs are supported",
    );
    assert_crawl_refused(
        &["--expand", "demo://r/{id", "id=1", "--", "true"],
        "mcptape: error: --expand: unterminated `{` in template `demo://r/{id`",
    );
}

/// Regression (issue 11): crawl's own line loop never called the framer's
/// `finish`, so a server's last reply written without a newline before it
/// exited never reached the transcript, and the crawl failed with "closed".
/// A real child process (a Python script) writes its not-found answer with no
/// trailing newline and exits.
#[test]
fn crawl_records_a_last_reply_without_trailing_newline_from_a_server_that_exits() {
    let p = peers();
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/server_last_reply_without_newline.py");
    let args = vec![
        "--".to_owned(),
        p.python.display().to_string(),
        script.display().to_string(),
    ];
    let (t, report) = crawl(&dir.path().join("t.jsonl"), &args);
    let missing = "test://docs/mcptape-does-not-exist";
    assert_eq!(
        report["reads"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    let reads = Reads::of(&t);
    assert_eq!(reads.ok_uris(), vec!["test://docs/a.txt".to_owned()]);
    assert_eq!(reads.errors(), vec![(missing.to_owned(), -32002)]);
    let last = messages(&t, Direction::S2c)
        .pop()
        .expect("server messages recorded");
    assert_eq!(last["error"]["data"]["uri"], missing);
    assert_eq!(exit_of(&t), (Some(0), None));
}

/// The value of a credential-named variable of crawl's environment, printed by the server on
/// stderr, is redacted in the transcript as `record` redacts it (before, crawl's redactor did
/// not know the environment's values and stored the line as printed).
#[test]
fn crawl_redacts_the_value_of_a_credential_named_variable_the_server_prints() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let mut cmd = crawl_command(&out);
    cmd.args(["--", "sh", "-c"])
        .arg(r#"echo "config: $LEAKY_API_TOKEN" >&2; exec "$0" serve "$1""#)
        .arg(mcptape())
        .arg(corpus_transcript("everything-stdio.jsonl"))
        .env("LEAKY_API_TOKEN", "CRAWLENVSECRET5e");
    run_json(&mut cmd, Duration::from_secs(90));
    let t = read_transcript(&out);
    let config: Vec<&str> = stderr_lines(&t)
        .into_iter()
        .filter(|l| l.starts_with("config:"))
        .collect();
    assert_eq!(config, ["config: [redacted]"]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("CRAWLENVSECRET5e"),
        "the secret is elsewhere in {}",
        out.display()
    );
}

/// True once process `pid` is gone (or a zombie: dead, waiting to be reaped by whoever
/// adopted it).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Regression (issue 28): `crawl -- SERVER` killed with SIGTERM or SIGINT left the server
/// running (ppid 1), where bench, verify and record end theirs. The "server" here is a launcher
/// that forks the real process (`sh -c 'sleep … & wait'`) and never answers, so the crawl is
/// still in its handshake when the signal comes; the forked process must go too.
#[test]
fn crawl_killed_by_sigterm_or_sigint_leaves_no_server_process() {
    for (sig, code) in [("-TERM", 143), ("-INT", 130)] {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("pid");
        let t = tmp.path().join("t.jsonl");
        let script = format!("sleep 300 & echo $! > {}; wait", sh_quote(&pidfile));
        let child = Command::new(mcptape())
            .args([
                "crawl",
                "-o",
                t.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &script,
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut g = Guard(child);
        let pid = || {
            std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
        };
        wait_until("the server never started", Duration::from_secs(30), || {
            pid().is_some()
        });
        let server = pid().unwrap();
        let status = kill_and_wait(&mut g, sig);
        assert_eq!(status.code(), Some(code), "kill {sig}");
        wait_until(
            &format!("kill {sig}: the server {server} is still running"),
            Duration::from_secs(20),
            || process_gone(server),
        );
        // The records so far are kept.
        assert!(
            std::fs::read_to_string(&t)
                .unwrap()
                .contains("mcptapeTranscript")
        );
    }
}

/// Issue 23: `crawl` of a server without the `resources` capability (the
/// reference server-filesystem, from npm) records what it offers — the
/// handshake, `tools/list` — and exits 0 with a note, not 2 with "Method not
/// found"; no `resources/*` request is sent.
#[test]
fn crawl_of_server_filesystem_records_its_lists_and_exits_0() {
    let p = peers();
    let server = std::env::var_os("MCPTAPE_SERVER_FILESYSTEM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            repo_root().join(
                ".tools/npm-fs/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
            )
        });
    assert!(
        server.is_file(),
        "server-filesystem missing: run scripts/install-peers.sh"
    );
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.md"), "# A\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fs.jsonl");
    let mut cmd = crawl_command(&out);
    cmd.arg("--").arg(&p.node).arg(&server).arg(root.path());
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(90));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("advertises no `resources` capability"),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["noResources"], true, "{report}");
    let lists = report["otherLists"].as_array().unwrap();
    let tools = lists
        .iter()
        .find(|l| l["method"] == "tools/list")
        .unwrap_or_else(|| panic!("{report}"));
    assert!(tools["listed"].as_u64().unwrap() > 0, "{report}");
    let sent = client_methods(&read_transcript(&out));
    assert!(sent.contains(&"tools/list".to_owned()), "{sent:?}");
    assert!(
        !sent.iter().any(|m| m.starts_with("resources/")),
        "{sent:?}"
    );
}
