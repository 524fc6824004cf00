//! `mcptape check` and `mcptape explain` as a user runs them: exit codes,
//! formats, `--output`, `--allow`, `--spec`.

use std::process::{Command, Output};

use crate::record_support::{repo_root as repo, words};

fn mcptape(args: &[&str]) -> Output {
    crate::record_support::mcptape_in(&repo(), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn check_violations_exits_1_and_names_every_rule() {
    let o = mcptape(&["check", "corpus/violations"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = stdout(&o);
    for r in mcptape_check::RULES {
        assert!(
            text.contains(&format!("{}[{}]", r.severity, r.id)),
            "{} missing from:\n{text}",
            r.id
        );
    }
    let n = mcptape_check::RULES.len();
    assert!(
        text.lines()
            .last()
            .unwrap()
            .starts_with(&format!("FAIL: {n} file(s), "))
    );
}

#[test]
fn check_real_recordings_exits_0() {
    let o = mcptape(&["check", "corpus/transcripts", "--allow", "error-id-null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).lines().last().unwrap().starts_with("PASS: "));
}

#[test]
fn a_warning_alone_exits_0_and_an_allowed_error_exits_0() {
    let o = mcptape(&["check", "corpus/violations/response-after-cancel.jsonl"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("warning[response-after-cancel]"));

    let f = "corpus/violations/request-unanswered.jsonl";
    assert_eq!(mcptape(&["check", f]).status.code(), Some(1));
    let o = mcptape(&["check", f, "--allow", "request-unanswered"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("allowed)"), "{}", stdout(&o));
    assert!(stdout(&o).contains("PASS: 1 file(s), 0 error(s), 0 warning(s), 1 allowed"));
}

#[test]
fn unknown_allow_rule_and_missing_path_exit_2() {
    let o = mcptape(&["check", "corpus/violations", "--allow", "no-such-rule"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown rule id"));
    let o = mcptape(&["check", "corpus/does-not-exist"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn spec_flag_changes_the_verdict_on_legacy_not_found() {
    let f = "corpus/violations/not-found-code.jsonl";
    assert_eq!(mcptape(&["check", f]).status.code(), Some(1));
    assert_eq!(
        mcptape(&["check", f, "--spec", "2025-11-25"]).status.code(),
        Some(0)
    );
    assert_eq!(
        mcptape(&["check", f, "--spec", "2025-06-18"]).status.code(),
        Some(0)
    );
    assert_eq!(
        mcptape(&["check", f, "--spec", "2026-07-28"]).status.code(),
        Some(1)
    );
}

#[test]
fn junit_output_file_is_written_and_parses() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("nested/junit/check.xml");
    let o = mcptape(&[
        "check",
        "corpus/violations",
        "--format",
        "junit",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let n = mcptape_check::RULES.len();
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("FAIL: {n} file(s)")));
    let xml = std::fs::read_to_string(&out).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .count();
    assert_eq!(suites, n);
}

#[test]
fn json_output_parses() {
    let o = mcptape(&words(
        "check corpus/violations/read-empty-contents.jsonl --format json",
    ));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["files"][0]["findings"][0]["rule"], "read-empty-contents");
    assert_eq!(v["files"][0]["findings"][0]["pointer"], "/result/contents");
}

#[test]
fn explain_prints_every_rule_with_its_source() {
    for r in mcptape_check::RULES {
        let o = mcptape(&["explain", r.id]);
        assert_eq!(o.status.code(), Some(0), "{}", r.id);
        let text = stdout(&o);
        assert!(
            text.starts_with(&format!("{} ({})\n", r.id, r.severity)),
            "{text}"
        );
        assert!(text.contains(r.source));
        assert!(text.contains(r.explain));
    }
    let o = mcptape(&["explain", "--list"]);
    assert_eq!(stdout(&o).lines().count(), mcptape_check::RULES.len());
    let o = mcptape(&["explain", "no-such-rule"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The fresh-user report: the top-level help said "record, replay, check,
/// fuzz and benchmark" and users looked for a `fuzz` subcommand. The help now
/// says fuzzing runs through `fuzz/run.sh` / `cargo fuzz`, and there is no
/// `fuzz` subcommand to find.
#[test]
fn top_level_help_points_fuzzing_to_fuzz_run_sh() {
    let short = stdout(&mcptape(&["-h"]));
    assert!(
        short.starts_with(
            "Record, replay, check and benchmark MCP resources/read transcripts \
             (fuzzing is not a subcommand: run `bash fuzz/run.sh`, which drives `cargo fuzz`)."
        ),
        "{short}"
    );
    let long = stdout(&mcptape(&["--help"]));
    assert!(
        long.contains("`cargo +nightly fuzz run <target>`"),
        "{long}"
    );
    assert!(
        long.contains("`bash fuzz/run.sh [SECONDS] [TARGET...]`"),
        "{long}"
    );
    let o = mcptape(&["fuzz"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unrecognized subcommand 'fuzz'"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Regression: `check corpus/transcripts --format sarif | head -1` printed `mcptape: error:
/// Broken pipe (os error 32)` and exited 2, where human and junit ended quietly; every format
/// now ends quietly when the reader goes away (the exit status is the check's).
#[test]
fn check_sarif_into_a_closed_pipe_exits_quietly() {
    for format in ["sarif", "json", "junit", "human"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcptape"))
            .args([
                "check",
                "corpus/transcripts",
                "--baseline",
                "corpus/check-baseline.json",
                "--format",
                format,
            ])
            .current_dir(repo())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run mcptape");
        // The reader goes away before the report is written.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{format}: {e}");
        assert!(!e.contains("error"), "{format}: {e}");
    }
}

/// `check -` reads the transcript from standard input (it was refused: `-: No such file or
/// directory`, and `/dev/stdin` as not a regular file): the human lines of the file, with `-`
/// for its name, and the same exit status; in every format, beside files.
#[test]
fn check_dash_reads_stdin_as_the_file() {
    use std::io::Write as _;
    let run = |args: &[&str], input: &[u8]| -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcptape"))
            .current_dir(repo())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let feed = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().unwrap();
        feed.join().unwrap().unwrap();
        out
    };
    for name in [
        "corpus/transcripts/everything-http.jsonl",
        "corpus/violations/jsonrpc-batch-removed.jsonl",
        "corpus/violations/transcript-truncated.jsonl",
    ] {
        let bytes = std::fs::read(repo().join(name)).unwrap();
        for format in ["human", "json", "sarif", "junit"] {
            let file = mcptape(&["check", "--format", format, name]);
            let piped = run(&["check", "--format", format, "-"], &bytes);
            assert_eq!(piped.status.code(), file.status.code(), "{name} {format}");
            assert_eq!(
                stdout(&piped),
                stdout(&file).replace(name, "-"),
                "{name} {format}: {}",
                String::from_utf8_lossy(&piped.stderr)
            );
        }
    }
    // Beside a file: both checked, `-` first (paths are sorted).
    let bytes =
        std::fs::read(repo().join("corpus/violations/jsonrpc-batch-removed.jsonl")).unwrap();
    let o = run(
        &["check", "corpus/violations/request-unanswered.jsonl", "-"],
        &bytes,
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("-:2: error[jsonrpc-batch-removed]"), "{out}");
    assert!(
        out.contains("request-unanswered.jsonl:2: error[request-unanswered]"),
        "{out}"
    );
}
