//! Regression tests for issue 15's input bugs of `inspect`, `serve` and
//! `bench`: a one-message batch is not a transcript, `inspect -` reads
//! stdin, a FIFO fails at once, and `--lenient` offsets count from the start
//! of the input line like strict ones.

use crate::record_support as support;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// A read answered with one text entry (a valid result).
const READ_OK: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"hi"}]}}"#;
/// A read whose blob has non-zero pad bits (refused strictly and leniently).
const READ_BAD_BLOB: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","blob":"Zh=="}]}}"#;

/// Runs `mcptape ARGS` ([`support::run_bounded`]); fails the test if it has not exited within
/// 20 s (blocked on a FIFO).
fn run_bounded(args: &[&str]) -> Output {
    support::run_bounded(
        Command::new(support::mcptape()).args(args),
        Duration::from_secs(20),
    )
    .0
}

fn inspect_json(path: &Path, lenient: bool) -> serde_json::Value {
    let p = path.to_str().unwrap();
    let mut args = vec!["inspect", "--json", p];
    if lenient {
        args.insert(1, "--lenient");
    }
    let out = run_bounded(&args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn inspect_one_element_batch_is_inspected() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("batch.jsonl");
    std::fs::write(&f, format!("[{READ_OK}]\n")).unwrap();
    let out = run_bounded(&["inspect", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = inspect_json(&f, false);
    assert!(v["transcript"].is_null(), "{v}");
    assert_eq!(v["summary"]["messages"], 1);
    assert_eq!(v["summary"]["results"], 1);
    assert_eq!(v["summary"]["entries"], 1);
}

#[test]
fn inspect_reads_stdin() {
    let mut child = Command::new(support::mcptape())
        .args(["inspect", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{READ_OK}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["results"], 1);
    assert_eq!(v["summary"]["entries"], 1);
}

#[cfg(unix)]
fn fifo(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("pipe.jsonl");
    support::mkfifo(&p);
    p
}

#[cfg(unix)]
fn assert_fails_at_once_on_fifo(cmd: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = fifo(dir.path());
    let out = run_bounded(&[cmd, p.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a regular file"), "{cmd}: {err}");
}

#[cfg(unix)]
#[test]
fn inspect_on_fifo_fails_at_once() {
    assert_fails_at_once_on_fifo("inspect");
}

#[cfg(unix)]
#[test]
fn serve_on_fifo_fails_at_once() {
    assert_fails_at_once_on_fifo("serve");
}

#[cfg(unix)]
#[test]
fn bench_on_fifo_fails_at_once() {
    assert_fails_at_once_on_fifo("bench");
}

/// The `at byte N` of the one invalid result of the report.
fn error_offset(v: &serde_json::Value) -> usize {
    let items = v["items"].as_array().unwrap();
    let e = items
        .iter()
        .find_map(|i| i["error"].as_str())
        .unwrap_or_else(|| panic!("no invalid result: {v}"));
    e.rsplit("at byte ")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no offset in {e:?}"))
}

#[test]
fn lenient_offsets_are_into_the_input_line() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single.jsonl");
    std::fs::write(&single, format!("{READ_BAD_BLOB}\n")).unwrap();
    let batch = dir.path().join("batch.jsonl");
    std::fs::write(&batch, format!("[{READ_BAD_BLOB}]\n")).unwrap();
    let strict = error_offset(&inspect_json(&single, false));
    let lenient = error_offset(&inspect_json(&single, true));
    assert_eq!(strict, lenient, "one convention for strict and lenient");
    // The offset points into the blob string of the line itself.
    let blob_at = READ_BAD_BLOB.find("Zh==").unwrap();
    assert!(
        (blob_at..blob_at + 4).contains(&strict),
        "offset {strict} is not inside the blob at {blob_at}..{}",
        blob_at + 4
    );
    // In a batch the line starts with `[`: one byte further, strict or lenient.
    assert_eq!(error_offset(&inspect_json(&batch, false)), strict + 1);
    assert_eq!(error_offset(&inspect_json(&batch, true)), strict + 1);
}
