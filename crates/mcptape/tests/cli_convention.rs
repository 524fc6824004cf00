//! One CLI convention across the commands: `--allow RULE` takes one rule per flag, duration
//! flags read `5s`/`800ms`/`250us` through one parser, caps are stated in `--help` and refused
//! past them (the cap in the message), network errors are words (no Rust debug structs), and a
//! debug build says so on stderr before it measures.

#[path = "record_support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use support::*;

fn run(args: &[&str]) -> Output {
    let mut cmd = Command::new(mcptape());
    cmd.args(args).current_dir(repo_root());
    run_bounded(&mut cmd, Duration::from_secs(60)).0
}

/// `mcptape SUB -o OUT ARGS...` as [`run`] runs it, `args` split at white space.
fn run_out(sub: &str, out: &Path, args: &str) -> Output {
    let mut all = vec![sub, "-o", out.to_str().unwrap()];
    all.extend(args.split_whitespace());
    run(&all)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Regression: `--allow RULE...` took every following word as a rule, so the path after it
/// was swallowed and `check` had nothing to check.
#[test]
fn allow_then_a_path_checks_the_path() {
    let o = run(&["check", "--allow", "error-id-null", "corpus/transcripts"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let last = stdout(&o).lines().last().unwrap_or_default().to_owned();
    assert!(last.starts_with("PASS: "), "{last}");
    // Two rules take two flags; both rule names are checked as rules, the path as a path.
    let o = run(&[
        "check",
        "--allow",
        "error-id-null",
        "--allow",
        "no-such-rule",
        "corpus/transcripts",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("no-such-rule"), "{}", stderr(&o));
}

#[test]
fn record_grace_takes_250us_and_refuses_a_bare_number_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let o = run_out("record", &t, "--grace 250us --term-grace 250us -- true");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(t.exists());
    let t2 = tmp.path().join("t2.jsonl");
    let o = run_out("record", &t2, "--grace 250 -- true");
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("--grace 250"), "{e}");
    // Refused before the transcript file is created.
    assert!(!t2.exists());
}

#[test]
fn crawl_timeout_is_a_duration_capped_at_60s_with_the_cap_in_the_message() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let o = run_out("crawl", &t, "--timeout 61s --url http://127.0.0.1:1/mcp");
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("--timeout 61s") && e.contains("at most 60s"),
        "{e}"
    );
    assert!(!t.exists());
    // The old integer flag is gone.
    let o = run_out("crawl", &t, "--timeout-ms 100");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--timeout-ms"), "{}", stderr(&o));
}

#[test]
fn bench_caps_are_in_help_and_refused_past_them_with_the_cap_in_the_message() {
    let help = stdout(&run(&["bench", "--help"]));
    assert!(help.contains("1..=1024"), "{help}");
    assert!(help.contains("at most 10000000"), "{help}");
    let t = "corpus/transcripts/everything-stdio.jsonl";
    let o = run(&["bench", t, "--parallel", "1025"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--parallel") && stderr(&o).contains("1024"));
    let o = run(&["bench", t, "--concurrency", "1025"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--concurrency") && stderr(&o).contains("1024"));
    // Regression: --reads past MAX_COUNT ran, silently clamped to it.
    let o = run(&["bench", t, "--reads", "10000001"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--reads 10000001") && e.contains("at most 10000000"),
        "{e}"
    );
    assert_eq!(stdout(&o), "", "refused before any run");
}

#[test]
fn root_help_states_the_duration_and_timeout_conventions() {
    let help = stdout(&run(&["--help"]));
    assert!(help.contains("5s, 800ms, 250us"), "{help}");
    assert!(help.contains("bench 5s"), "{help}");
    assert!(help.contains("never clamped"), "{help}");
}

/// Regression: a crawl to a closed port printed hyper's debug struct.
#[test]
fn crawl_to_a_closed_port_says_connection_refused_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t.jsonl");
    let port = free_port(); // bound then released: nothing listens there
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = run_out("crawl", &t, &format!("--url {url}"));
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(e.to_lowercase().contains("connection refused"), "{e}");
    for debug in ["{", "Error {", "kind:", "Os {", "ConnectError(", "Some("] {
        assert!(!e.contains(debug), "debug text {debug:?} in: {e}");
    }
}

#[test]
fn debug_build_warning_is_printed_by_bench_bench_codec_and_serve() {
    let runs = [
        run(&["bench-codec", "--size", "3000", "--iters", "1"]),
        run(&[
            "bench",
            "corpus/transcripts/everything-stdio.jsonl",
            "--parallel",
            "0",
        ]),
        run(&["serve", "no/such/transcript.jsonl"]),
    ];
    for o in &runs {
        let e = stderr(o);
        // The tests are built in the binary's profile: a debug test run has a debug binary.
        assert_eq!(
            e.contains("is a debug build (no optimizations)"),
            cfg!(debug_assertions),
            "{e}"
        );
    }
    // A command that does not measure does not warn.
    let o = run(&["uri", "expand", "file:///{a}", "a=x"]);
    assert!(!stderr(&o).contains("debug build"), "{}", stderr(&o));
}
