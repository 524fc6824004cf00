//! `mcptape verify` replays a shipped real recording against the real server
//! it was recorded from and diffs semantically. Needs the peers
//! (`scripts/install-peers.sh`); fails without them.

#[path = "record_support/mod.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use support::*;

fn verify(transcript: &str, target_cmd: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut cmd = Command::new(mcptape());
    cmd.arg("verify")
        .arg(repo_root().join("corpus/transcripts").join(transcript))
        .arg("--target-cmd")
        .arg(target_cmd)
        .arg("--json")
        .args(extra);
    let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

fn sh_quote(p: &std::path::Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn verify_passes_against_the_live_python_server_in_both_eras() {
    let p = peers();
    let cmd = format!(
        "{} {} stdio",
        sh_quote(&p.python),
        sh_quote(&p.script("py_server.py"))
    );
    for t in ["py-stdio-2025-11-25.jsonl", "py-stdio-2026-07-28.jsonl"] {
        let (code, rep) = verify(t, &cmd, &[]);
        assert_eq!(rep["differences"], serde_json::json!([]), "{t}");
        assert_eq!(rep["unanswered"], serde_json::json!([]), "{t}");
        assert!(rep["compared"].as_u64().unwrap() >= 10, "{t}: {rep}");
        assert_eq!(code, 0, "{t}");
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
    let t = read_transcript(&repo_root().join("corpus/transcripts/everything-stdio.jsonl"));
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
        sh_quote(&repo_root().join("corpus/transcripts/everything-stdio.jsonl"))
    );
    let (code, rep) = verify("py-stdio-2025-11-25.jsonl", &cmd, &[]);
    assert_eq!(code, 1);
    assert!(!rep["differences"].as_array().unwrap().is_empty());
}

#[test]
fn verify_over_streamable_http_passes_against_the_live_python_server_in_both_eras() {
    let p = peers();
    let port = free_port();
    let _server = start_py_http(&p, port);
    for t in ["py-stdio-2025-11-25.jsonl", "py-stdio-2026-07-28.jsonl"] {
        let mut cmd = Command::new(mcptape());
        cmd.arg("verify")
            .arg(repo_root().join("corpus/transcripts").join(t))
            .args([
                "--target-url",
                &format!("http://127.0.0.1:{port}/mcp"),
                "--json",
            ]);
        let (o, _) = run_bounded(&mut cmd, Duration::from_secs(120));
        let rep: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(rep["differences"], serde_json::json!([]), "{t}");
        assert_eq!(rep["unanswered"], serde_json::json!([]), "{t}");
        assert!(rep["compared"].as_u64().unwrap() >= 10, "{t}: {rep}");
        assert!(o.status.success(), "{t}");
    }
}
