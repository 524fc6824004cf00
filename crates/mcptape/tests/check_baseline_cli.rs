//! `mcptape check --write-baseline / --baseline` as CI runs them: exit codes
//! and the stderr verdict naming new and fixed findings, on a temp copy of
//! corpus/violations (paths relative to the working directory).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mcptape(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcptape"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run mcptape")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn violations_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("v")).unwrap();
    for e in std::fs::read_dir(repo().join("corpus/violations")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            std::fs::copy(&p, tmp.path().join("v").join(p.file_name().unwrap())).unwrap();
        }
    }
    tmp
}

#[test]
fn baseline_cli_round_trip_fixed_and_new() {
    let tmp = violations_copy();
    let d = tmp.path();
    assert_eq!(mcptape(d, &["check", "v"]).status.code(), Some(1));

    let o = mcptape(d, &["check", "v", "--write-baseline", "ci/baseline.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrote baseline ci/baseline.json"));
    let text = std::fs::read_to_string(d.join("ci/baseline.json")).unwrap();
    assert!(
        text.contains("\"file\": \"v/not-found-code.jsonl\""),
        "{text}"
    );

    let o = mcptape(d, &["check", "v", "--baseline", "ci/baseline.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(", 0 new, 0 fixed"), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .last()
            .unwrap()
            .starts_with("PASS: ")
    );

    std::fs::remove_file(d.join("v/not-found-code.jsonl")).unwrap();
    let o = mcptape(d, &["check", "v", "--baseline", "ci/baseline.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.lines().any(|l| l.contains("fixed (no longer occurs")
            && l.contains("v/not-found-code.jsonl: not-found-code")),
        "{e}"
    );

    std::fs::copy(
        d.join("v/contents-text-and-blob.jsonl"),
        d.join("v/new-server.jsonl"),
    )
    .unwrap();
    let o = mcptape(
        d,
        &[
            "check",
            "v",
            "--baseline",
            "ci/baseline.json",
            "--format",
            "sarif",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.lines()
            .any(|l| l.starts_with("  new: v/new-server.jsonl:")
                && l.contains("contents-text-and-blob")),
        "{e}"
    );
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let new: Vec<&serde_json::Value> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["baselineState"] == "new" && r["level"] == "error")
        .collect();
    assert!(!new.is_empty());
    for r in new {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "v/new-server.jsonl"
        );
    }
}

#[test]
fn baseline_cli_bad_file_exits_2() {
    let tmp = violations_copy();
    let d = tmp.path();
    std::fs::write(d.join("b.json"), r#"{"mcptapeBaseline":7,"findings":[]}"#).unwrap();
    let o = mcptape(d, &["check", "v", "--baseline", "b.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("mcptapeBaseline is 7"),
        "{}",
        stderr(&o)
    );
    let o = mcptape(d, &["check", "v", "--baseline", "missing.json"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn corpus_baseline_and_allow_both_pass_the_real_recordings() {
    let root = repo();
    let o = mcptape(
        &root,
        &[
            "check",
            "corpus/transcripts",
            "--baseline",
            "corpus/check-baseline.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = mcptape(
        &root,
        &["check", "corpus/transcripts", "--allow", "error-id-null"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
