//! `export`, `import` and `merge` on a FIFO input fail at once (issue 15 review): each used to
//! block forever in the open of a FIFO with no writer. Each command runs with a 10 s limit in
//! the harness (`run_bounded` kills it and fails the test), so a hang fails the test instead of
//! hanging CI. The refusal is the shared non-blocking opener's (`mcptape_uri::fs::open_nonblocking`),
//! as `inspect`, `serve`, `bench`, `check` and `verify` already report it.
#![cfg(unix)]

#[path = "record_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Longest a refusal may take before the test fails (it takes milliseconds; a hang is forever).
const LIMIT: Duration = Duration::from_secs(10);

fn fifo(dir: &Path) -> PathBuf {
    let p = dir.join("ff");
    let st = Command::new("mkfifo").arg(&p).status().unwrap();
    assert!(st.success(), "mkfifo");
    p
}

/// Runs `mcptape ARGS` (a `{FIFO}` arg is replaced by a fresh FIFO, `{DIR}` by the temp dir),
/// bounded; returns (exit code, stderr, the FIFO path).
fn run_on_fifo(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = fifo(dir.path());
    let fifo_s = p.to_str().unwrap().to_owned();
    let d = dir.path().to_str().unwrap().to_owned();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{FIFO}", &fifo_s).replace("{DIR}", &d))
        .collect();
    let (out, _) = support::run_bounded(Command::new(support::mcptape()).args(&args), LIMIT);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        fifo_s,
    )
}

/// Exit 2 with `PATH: not a regular file (FIFO, socket or device)` on stderr.
fn assert_refused(args: &[&str]) {
    let (code, err, path) = run_on_fifo(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(
        err.contains(&format!(
            "{path}: not a regular file (FIFO, socket or device)"
        )),
        "{args:?}: {err}"
    );
}

#[test]
fn export_k6_on_fifo_fails_at_once() {
    assert_refused(&["export", "k6", "{FIFO}", "-o", "{DIR}/out.js"]);
}

#[test]
fn export_har_on_fifo_fails_at_once() {
    assert_refused(&["export", "har", "{FIFO}"]);
}

#[test]
fn import_har_on_fifo_fails_at_once() {
    assert_refused(&["import", "har", "{FIFO}", "-o", "{DIR}/t.jsonl"]);
}

#[test]
fn import_k6_on_fifo_fails_at_once() {
    assert_refused(&["import", "k6", "{FIFO}", "--out", "{DIR}/k6"]);
}

#[test]
fn merge_same_fifo_twice_fails_at_once() {
    assert_refused(&["merge", "{FIFO}", "{FIFO}", "--out", "{DIR}/d"]);
}

/// A regular file still goes through: the refusal is for FIFOs, not for every input (the HAR
/// here has no MCP entry, so the import fails on its content, not on the open).
#[test]
fn import_har_on_regular_file_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let har = dir.path().join("empty.har");
    std::fs::write(
        &har,
        r#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[]}}"#,
    )
    .unwrap();
    let (out, _) = support::run_bounded(
        Command::new(support::mcptape()).args([
            "import",
            "har",
            har.to_str().unwrap(),
            "-o",
            dir.path().join("t.jsonl").to_str().unwrap(),
        ]),
        LIMIT,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no MCP entry in the HAR (0 entries"), "{err}");
    assert!(!err.contains("not a regular file"), "{err}");
}
