//! Real clients against `mcptape serve` on EVERY shipped recording
//! (corpus/transcripts), over stdio and over Streamable HTTP (`--listen`,
//! for the HTTP recordings and the stdio ones alike), in both protocol eras:
//! the MCP Inspector CLI (`resources/list`, then `resources/read --uri U` of
//! listed resources: one Node start per call, so every one only on the richest
//! recordings, one of each kind on the others) and the official TypeScript SDK client
//! (tests/data/ts_sdk_client.mjs). Every listed resource the recording read
//! is answered with the recorded result; one it never read gets a
//! "Resource not found" error. Loopback only; every child is time-bounded.
//! Needs the peers (`scripts/install-peers.sh`).

use crate::record_support as support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mcptape_replay::tape::{Match, Tape};
use serde_json::{Value, json};
use support::*;

fn tape(path: &Path) -> Tape {
    Tape::from_transcript(&read_transcript(path)).unwrap()
}

/// The recorded `result` of a read of `uri`, if the recording read it successfully.
fn recorded_read(t: &Tape, uri: &str) -> Option<Value> {
    match t.lookup("resources/read", &json!({ "uri": uri })) {
        Match::Exact(e) => e.reply.get("result").cloned(),
        _ => None,
    }
}

/// The Inspector CLI with `args`; (exit ok, stdout JSON or text, stderr).
fn inspector(p: &Peers, dir: &Path, args: &[String]) -> (bool, String, String) {
    let mut cmd = Command::new(&p.node);
    cmd.arg(p.inspector())
        .arg("--cli")
        .args(args)
        .env("MCP_CATALOG_PATH", dir.join("catalog.json"))
        .current_dir(dir);
    let (out, _) = run_bounded(&mut cmd, Duration::from_secs(90));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// How the Inspector reaches the server: a target (`-- CMD...` or a URL).
fn stdio_target(path: &Path) -> Vec<String> {
    vec![
        "--".into(),
        mcptape().display().to_string(),
        "serve".into(),
        path.display().to_string(),
        "--latency".into(),
        "fixed:0".into(),
    ]
}

/// Which listed resources [`inspect_all`] reads.
#[derive(Clone, Copy, PartialEq)]
enum Reads {
    /// Every listed resource.
    Every,
    /// The first listed resource the recording read and the first it never read (one
    /// Inspector start each). Every read of every recording, over stdio and over HTTP, is
    /// also made by the TypeScript SDK client, its contents compared with the recorded ones
    /// (`typescript_sdk_client_lists_and_reads_every_recording_over_stdio_and_http`), and by
    /// the Python SDK client in both eras (serve_python_client.rs); the Inspector reads every
    /// resource of everything-stdio over stdio and of everything-http over HTTP (three CLIs).
    FirstOfEachKind,
}

/// Lists then reads the listed resources (`reads`) through the Inspector; checks
/// each answer against the recording. Returns the number of reads answered
/// with recorded content.
fn inspect_all(
    p: &Peers,
    path: &Path,
    target: &dyn Fn(&[&str]) -> Vec<String>,
    reads: Reads,
) -> usize {
    let t = tape(path);
    let dir = tempfile::tempdir().unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let (ok, out, err) = inspector(p, dir.path(), &target(&["--method", "resources/list"]));
    assert!(ok, "{name}: resources/list failed: {out}\n{err}");
    let listed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: {e}: {out}"));
    let uris: Vec<String> = listed["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: {listed}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect();
    assert!(!uris.is_empty(), "{name}: nothing listed");
    let mut recorded = 0;
    let mut unrecorded = 0;
    for uri in &uris {
        let was_read = recorded_read(&t, uri).is_some();
        if reads == Reads::FirstOfEachKind && (if was_read { recorded } else { unrecorded }) > 0 {
            continue;
        }
        let (ok, out, err) = inspector(
            p,
            dir.path(),
            &target(&["--method", "resources/read", "--uri", uri]),
        );
        match recorded_read(&t, uri) {
            Some(result) => {
                assert!(ok, "{name}: read {uri} failed: {out}\n{err}");
                let printed: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(printed["contents"], result["contents"], "{name}: {uri}");
                recorded += 1;
            }
            None => {
                let text = format!("{out}{err}");
                assert!(
                    text.contains("Resource not found") || text.contains("not found"),
                    "{name}: unrecorded read {uri}: {text}"
                );
                unrecorded += 1;
            }
        }
    }
    assert!(
        recorded > 0,
        "{name}: no listed resource was answered from the recording"
    );
    recorded
}

#[test]
fn inspector_cli_lists_every_recording_over_stdio_and_reads_every_resource_of_everything_stdio() {
    let p = peers();
    for path in corpus_transcripts() {
        let reads = if path.ends_with("everything-stdio.jsonl") {
            Reads::Every
        } else {
            Reads::FirstOfEachKind
        };
        let target = |call: &[&str]| {
            let mut v: Vec<String> = call.iter().map(|s| (*s).to_owned()).collect();
            v.extend(stdio_target(&path));
            v
        };
        inspect_all(&p, &path, &target, reads);
    }
}

#[test]
fn inspector_cli_lists_every_recording_over_http_and_reads_one_resource_of_each_kind() {
    let p = peers();
    for path in corpus_transcripts() {
        let (_serve, port) = serve_listen(&path, "fixed:0");
        let url = format!("http://127.0.0.1:{port}/mcp");
        let target = |call: &[&str]| {
            let mut v = vec![url.clone(), "--transport".to_owned(), "http".to_owned()];
            v.extend(call.iter().map(|s| (*s).to_owned()));
            v
        };
        inspect_all(&p, &path, &target, Reads::FirstOfEachKind);
    }
}

/// tests/data/ts_sdk_client.mjs against `target`; its summary.
fn ts_client(p: &Peers, target: &[String]) -> Value {
    let mut cmd = Command::new(&p.node);
    cmd.arg(repo_root().join("crates/mcptape/tests/data/ts_sdk_client.mjs"))
        .args(target)
        .env("MCPTAPE_NPM_PREFIX", &p.npm);
    run_json(&mut cmd, Duration::from_secs(120))
}

fn check_ts_summary(path: &Path, s: &Value) {
    let t = tape(path);
    let name = path.display();
    let reads = s["reads"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: {s}"));
    assert_eq!(
        s["listed"].as_u64(),
        Some(reads.len() as u64),
        "{name}: {s}"
    );
    let mut recorded = 0;
    for r in reads {
        let uri = r["uri"].as_str().unwrap();
        if let Some(result) = recorded_read(&t, uri) {
            assert_eq!(r["ok"], json!(true), "{name}: {r}");
            // The recorded contents, as the SDK client parsed them.
            assert_eq!(r["contents"], result["contents"], "{name}: {uri}");
            recorded += 1;
        } else {
            assert_eq!(r["ok"], json!(false), "{name}: {r}");
            assert!(
                [json!(-32602), json!(-32002)].contains(&r["code"]),
                "{name}: {r}"
            );
        }
    }
    assert!(recorded > 0, "{name}: {s}");
}

#[test]
fn typescript_sdk_client_lists_and_reads_every_recording_over_stdio_and_http() {
    let p = peers();
    let sdk = p
        .npm
        .join("node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "TypeScript SDK missing: run scripts/install-peers.sh"
    );
    for path in corpus_transcripts() {
        let s = ts_client(&p, &stdio_target(&path));
        check_ts_summary(&path, &s);
        let (_serve, port) = serve_listen(&path, "fixed:0");
        let s = ts_client(
            &p,
            &["--url".into(), format!("http://127.0.0.1:{port}/mcp")],
        );
        check_ts_summary(&path, &s);
    }
}

/// Issue 23: three Inspector CLIs at once against one `serve --listen` at
/// the default (recorded) latency, each listing and reading every resource
/// (every Inspector call is its own session numbering its ids from 0): all
/// three get every recorded read answered with the recorded contents.
#[test]
fn three_inspector_clis_at_once_against_one_serve_all_get_the_recorded_contents() {
    let p = peers();
    let path = corpus_transcript("everything-http.jsonl");
    let (_serve, port) = serve_listen(&path, "recorded");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let counts: Vec<usize> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let target = |call: &[&str]| {
                        let mut v = vec![url.clone(), "--transport".to_owned(), "http".to_owned()];
                        v.extend(call.iter().map(|s| (*s).to_owned()));
                        v
                    };
                    inspect_all(&p, &path, &target, Reads::Every)
                })
            })
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(counts.len(), 3);
    assert!(
        counts.iter().all(|&n| n > 0 && n == counts[0]),
        "{counts:?}"
    );
}
