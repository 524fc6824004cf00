//! `export`, `import` and `merge` on a FIFO input fail at once (issue 15 review): each used to
//! block forever in the open of a FIFO with no writer. Each command runs with a 10 s limit in
//! the harness (`run_bounded` kills it and fails the test), so a hang fails the test instead of
//! hanging CI. The refusal is the one file-opening policy's (`mcptape_transcript::file::open_regular`),
//! as `inspect`, `serve`, `bench`, `check` and `verify` already report it.
#![cfg(unix)]

use crate::record_support as support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Longest a refusal may take before the test fails (it takes milliseconds; a hang is forever).
const LIMIT: Duration = Duration::from_secs(10);

fn fifo(dir: &Path) -> PathBuf {
    let p = dir.join("ff");
    support::mkfifo(&p);
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

/// Exit 2 with `PATH: not a regular file (FIFO, socket or device)` on stderr; `Err` names what
/// differed.
fn refused(args: &[&str]) -> Result<(), String> {
    let (code, err, path) = run_on_fifo(args);
    let want = format!("{path}: not a regular file (FIFO, socket or device)");
    if code == 2 && err.contains(&want) {
        Ok(())
    } else {
        Err(format!("exit {code}, stderr: {err}"))
    }
}

/// Runs every case of `cases` (name, command line split at white space; `{STDIO}` and `{HTTP}`
/// stand for the shipped stdio and HTTP recordings) and fails naming each case that was not
/// refused.
fn assert_each_refused(cases: &[(&str, &str)]) {
    let (stdio, http) = (in_repo(STDIO_T), in_repo(HTTP_T));
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|(name, args)| {
            let args: Vec<String> = args
                .split_whitespace()
                .map(|a| a.replace("{STDIO}", &stdio).replace("{HTTP}", &http))
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            refused(&args)
                .err()
                .map(|e| format!("{name} {args:?}: {e}"))
        })
        .collect();
    assert!(failed.is_empty(), "not refused:\n{}", failed.join("\n"));
}

/// A FIFO given as a command's positional input.
#[test]
fn positional_fifo_inputs_fail_at_once() {
    assert_each_refused(&[
        ("export_k6_on_fifo", "export k6 {FIFO} -o {DIR}/out.js"),
        ("export_har_on_fifo", "export har {FIFO}"),
        ("import_har_on_fifo", "import har {FIFO} -o {DIR}/t.jsonl"),
        ("import_k6_on_fifo", "import k6 {FIFO} --out {DIR}/k6"),
        ("merge_same_fifo_twice", "merge {FIFO} {FIFO} --out {DIR}/d"),
    ]);
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

const STDIO_T: &str = "corpus/transcripts/everything-stdio.jsonl";
const HTTP_T: &str = "corpus/transcripts/everything-http.jsonl";

fn in_repo(rel: &str) -> String {
    support::repo_root().join(rel).to_str().unwrap().to_owned()
}

/// A FIFO given to a flag (input or output) rather than as a positional input; the harness's
/// limit is the hang guard (the refusal comes before any signal could be needed: before the fix
/// each of these blocked in open(2), deaf to SIGINT and SIGTERM).
#[test]
fn fifo_given_to_a_flag_fails_at_once() {
    assert_each_refused(&[
        // Regression (issue 28): `bench --latency empirical:FIFO` blocked in open(2) and
        // ignored SIGINT and SIGTERM.
        (
            "bench_latency_empirical_fifo",
            "bench {STDIO} --latency empirical:{FIFO}",
        ),
        (
            "serve_latency_empirical_fifo",
            "serve {STDIO} --latency empirical:{FIFO}",
        ),
        ("serve_stats_fifo", "serve {STDIO} --stats {FIFO}"),
        ("check_baseline_fifo", "check {STDIO} --baseline {FIFO}"),
        (
            "check_write_baseline_fifo",
            "check {STDIO} --write-baseline {FIFO}",
        ),
        ("check_output_fifo", "check {STDIO} -o {FIFO}"),
        ("export_k6_output_fifo", "export k6 {HTTP} -o {FIFO}"),
        ("record_output_fifo", "record -o {FIFO} -- true"),
        (
            "record_listen_output_fifo",
            "record -o {FIFO} --listen 127.0.0.1:0 --upstream http://127.0.0.1:1/mcp",
        ),
        ("crawl_output_fifo", "crawl -o {FIFO} -- true"),
        (
            "crawl_url_output_fifo",
            "crawl -o {FIFO} --url http://127.0.0.1:1/mcp",
        ),
    ]);
}

/// Runs `mcptape ARGS --out DIR` where `DIR/file` is a FIFO: exit 2, the FIFO named as an
/// `--out` that is not a regular file.
fn assert_out_dir_fifo_refused(args: &[String], file: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    support::mkfifo(&out.join(file));
    let (o, _) = support::run_bounded(
        Command::new(support::mcptape())
            .args(args)
            .arg("--out")
            .arg(&out),
        LIMIT,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{file}: {err}");
    let want = format!(
        "--out {}: not a regular file (FIFO, socket or device): refusing to write to it",
        out.join(file).display()
    );
    assert!(err.contains(&want), "{file}: {err}");
}

/// Regression (issue 28, found while listing the cases): `bench --slo … --out DIR` with a FIFO
/// at `DIR/slo.xml` ran the whole measurement, then blocked in open(2), deaf to SIGTERM.
#[test]
fn bench_out_dir_holding_a_fifo_slo_xml_fails_at_once() {
    let args = [
        "bench",
        &in_repo(STDIO_T),
        "--latency",
        "fixed:1ms",
        "--slo",
        "read.p99<50ms",
    ];
    assert_out_dir_fifo_refused(&args.map(String::from), "slo.xml");
}

/// Regression (issue 28, found while listing the cases): `merge --out DIR` with a FIFO at
/// `DIR/report.json` blocked in open(2) until a reader came; `bench --out` and `import k6
/// --out` already refused it.
#[test]
fn merge_out_dir_holding_a_fifo_fails_at_once() {
    let args = [
        "merge".to_owned(),
        in_repo("corpus/fuzz/hlog_read/bench-run.hlog"),
    ];
    for file in ["report.json", "latency.hlog"] {
        assert_out_dir_fifo_refused(&args, file);
    }
}
