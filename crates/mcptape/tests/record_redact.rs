//! `mcptape record` redaction flags and the argv it stores (issue 15, "No
//! secret kept"): credential values and machine paths never reach the header.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn mcptape() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcptape"))
}

/// A new temp dir and the transcript path `t.jsonl` in it (not created).
fn temp_out() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    (dir, out)
}

/// `o`'s stderr contains `text`.
fn assert_stderr_has(o: &Output, text: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(text), "{err}");
}

/// `mcptape record -o OUT`, the caller adds the rest.
fn record_to(out: &Path) -> Command {
    let mut cmd = mcptape();
    cmd.args(["record", "-o"]).arg(out);
    cmd
}

/// `mcptape record -o OUT --listen 127.0.0.1:0 --upstream http://127.0.0.1:9/mcp EXTRA...`
/// (nothing listens on port 9) run to completion.
fn record_listen(out: &Path, extra: &[&str]) -> Output {
    record_to(out)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:9/mcp",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn stdio_record_header_has_no_argv_token_and_no_absolute_cwd_path() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let script = dir.path().join("srv.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let status = record_to(&out)
        .current_dir(dir.path())
        .arg("--")
        .arg("/bin/sh")
        .arg(&script)
        .args(["--token", "tok-abc123", "API_KEY=sk-live-9", "stdio"])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let header = text.lines().next().unwrap();
    assert!(!header.contains("tok-abc123"), "{header}");
    assert!(!header.contains("sk-live-9"), "{header}");
    let dir_s = dir.path().canonicalize().unwrap();
    assert!(!header.contains(dir_s.to_str().unwrap()), "{header}");
    assert!(
        header.contains(
            r#""command":["/bin/sh","srv.sh","--token","[redacted]","API_KEY=[redacted]","stdio"]"#
        ),
        "{header}"
    );
    assert!(
        header.contains(r#""redaction":{"enabled":true,"argvValues":[3,4],"argvPaths":[1]}"#),
        "{header}"
    );
}

#[test]
fn bad_redact_json_pointer_is_refused_before_the_transcript_is_created() {
    let (_dir, out) = temp_out();
    let o = record_listen(&out, &["--redact-json", "params/password"]);
    assert!(!o.status.success());
    assert_stderr_has(&o, "a JSON Pointer starts with '/'");
    assert!(!out.exists());
}

#[test]
fn redact_header_needs_listen_and_conflicts_with_no_redact() {
    let (_dir, out) = temp_out();
    let o = record_to(&out)
        .args(["--redact-header", "X-Tenant", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "clap usage error");
    let o = record_listen(&out, &["--no-redact", "--keep-header", "x-a"]);
    assert_eq!(o.status.code(), Some(2), "clap usage error");
    assert!(!out.exists());
}
