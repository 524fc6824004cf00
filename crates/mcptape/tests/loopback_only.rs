//! `bench --target-url` and `verify --target-url` reach loopback only (127.0.0.0/8, `[::1]`,
//! `localhost`): load and injected faults never leave the machine. A non-loopback host is
//! refused with a clear error before anything connects; `record --target-url` and `crawl --target-url`
//! (recording a remote server is legitimate) do not claim loopback in their help.

use crate::record_support as support;

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::*;

/// Generous bound for a refusal that happens before any I/O (a connection attempt to
/// TEST-NET-1 would hang until the handshake timeout instead).
const REFUSAL_LIMIT: Duration = Duration::from_secs(30);

fn run(sub: &str, url: &str) -> (Option<i32>, String) {
    let mut cmd = Command::new(mcptape());
    cmd.arg(sub)
        .arg(corpus_transcript("everything-stdio.jsonl"))
        .arg("--target-url")
        .arg(url)
        // A connection attempt would wait this long for the handshake; the refusal does not.
        .args(["--timeout", "20s"]);
    if sub == "bench" {
        cmd.args(["--reads", "1", "--turns", "0"]);
    }
    let (o, _) = run_bounded(&mut cmd, REFUSAL_LIMIT);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Regression (new-user report): `bench --target-url http://192.168.1.1/mcp` connected though
/// the help said "(loopback)"; `verify --target-url` too.
#[test]
fn regression_bench_and_verify_refuse_a_non_loopback_target_url_before_connecting() {
    for sub in ["bench", "verify"] {
        for (url, host) in [
            ("http://192.0.2.1/mcp", "192.0.2.1"),
            ("http://192.168.1.1/mcp", "192.168.1.1"),
            ("http://[2001:db8::1]:3001/mcp", "2001:db8::1"),
            ("http://localhost.example.com/mcp", "localhost.example.com"),
        ] {
            let (code, stderr) = run(sub, url);
            assert_eq!(code, Some(2), "{sub} {url}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "--target-url: target URL {url:?}: host {host:?} is not loopback \
                     (127.0.0.0/8, ::1 or localhost)"
                )),
                "{sub} {url}: {stderr}"
            );
            // Refused before the session: no transport error, no handshake.
            assert!(
                !stderr.contains("connect") && !stderr.contains("handshake"),
                "{sub} {url}: {stderr}"
            );
        }
    }
}

/// The check does not over-refuse: a loopback URL is connected to (here a listener that
/// accepts and hangs up at once, so the run then fails on the closed connection).
#[test]
fn a_loopback_target_url_is_still_connected_to() {
    for sub in ["bench", "verify"] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(AtomicBool::new(false));
        let seen2 = seen.clone();
        std::thread::spawn(move || {
            if let Ok((s, _)) = listener.accept() {
                seen2.store(true, Ordering::SeqCst);
                drop(s);
            }
        });
        let url = format!("http://127.0.0.1:{port}/mcp");
        let (code, stderr) = run(sub, &url);
        assert!(
            seen.load(Ordering::SeqCst),
            "{sub}: no connection: {stderr}"
        );
        assert_ne!(code, Some(0), "{sub}: {stderr}");
        assert!(!stderr.contains("is not loopback"), "{sub}: {stderr}");
    }
}

/// The help text of the option whose line starts at `at`: up to the next option line.
fn option_text(help: &str, at: usize) -> &str {
    let rest = &help[at..];
    let end = rest
        .match_indices('\n')
        .map(|(i, _)| i)
        .find(|&i| {
            let next = rest[i + 1..].trim_start_matches(' ');
            next.starts_with('-') || next.is_empty() || !rest[i + 1..].starts_with(' ')
        })
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn help_says_loopback_for_bench_and_verify_only() {
    let help = |args: &[&str]| {
        let (code, out, err) = mcptape_text(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    for sub in ["bench", "verify"] {
        let h = help(&[sub, "--help"]);
        let at = h.find("      --target-url ").expect("--target-url in help");
        let para = option_text(&h, at);
        assert!(
            para.contains("loopback") && para.contains("refused"),
            "{sub}: {para}"
        );
    }
    for (sub, flag) in [("record", "--target-url"), ("crawl", "--target-url")] {
        let h = help(&[sub, "--help"]);
        let at = h
            .find(&format!("      {flag} "))
            .unwrap_or_else(|| panic!("{flag} in {sub} help"));
        let para = option_text(&h, at);
        assert!(!para.contains("loopback"), "{sub} {flag}: {para}");
    }
}

/// `serve --metrics` binds loopback only: a non-loopback address is refused with exit 2 and
/// one line naming the flag, before the transcript is even read.
#[test]
fn serve_metrics_refuses_a_non_loopback_address_with_one_line() {
    for addr in ["0.0.0.0:9464", "192.0.2.1:9464", "[2001:db8::1]:9464"] {
        let mut cmd = Command::new(mcptape());
        cmd.arg("serve")
            .arg("no/such/transcript.jsonl")
            .args(["--metrics", addr]);
        let (o, _) = run_bounded(&mut cmd, REFUSAL_LIMIT);
        assert_eq!(o.status.code(), Some(2), "{addr}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.contains("debug build"))
            .collect();
        assert_eq!(
            errors,
            [format!(
                "mcptape: error: --metrics must be a loopback address (127.0.0.1, [::1]), got {addr}"
            )],
            "{stderr}"
        );
    }
}
