//! `mcptape check --write-baseline / --baseline` as CI runs them: exit codes
//! and the stderr verdict naming new and fixed findings, on a temp copy of
//! corpus/violations (paths in the baseline relative to its own directory, matched however
//! the transcripts' paths are spelled and from any working directory).

use std::path::PathBuf;

use crate::record_support::{mcptape_in as mcptape, repo_root as repo, stderr_text as stderr};

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
    // Relative to the baseline file's directory, ci/.
    assert!(
        text.contains("\"file\": \"../v/not-found-code.jsonl\""),
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

/// Regression: from another directory, `check /abs/corpus/transcripts --baseline
/// /abs/corpus/check-baseline.json` said `0 of 1 expected finding(s) still occur, 1 new, 1 fixed`
/// (exit 1): entries were matched by the path as spelled, relative to the working directory.
#[test]
fn check_baseline_matches_whatever_the_path_spelling() {
    let tmp = violations_copy();
    let d = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(d.join("elsewhere")).unwrap();
    let o = mcptape(&d, &["check", "v", "--write-baseline", "ci/baseline.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read_to_string(d.join("ci/baseline.json")).unwrap();
    let abs_v = d.join("v").display().to_string();
    let abs_b = d.join("ci/baseline.json").display().to_string();
    let total = serde_json::from_str::<serde_json::Value>(&written).unwrap()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["count"].as_u64().unwrap())
        .sum::<u64>();
    assert!(total >= 10, "{written}");
    let verdict = format!("{total} of {total} expected finding(s) still occur, 0 new, 0 fixed");
    let runs: [(PathBuf, Vec<&str>); 6] = [
        (d.clone(), vec!["v", "ci/baseline.json"]),
        (d.clone(), vec!["./v/", "./ci/../ci/baseline.json"]),
        (d.clone(), vec![&abs_v, &abs_b]),
        (d.join("elsewhere"), vec![&abs_v, &abs_b]),
        (d.join("elsewhere"), vec!["../v", "../ci/baseline.json"]),
        (d.join("ci"), vec!["../v/", "baseline.json"]),
    ];
    for (cwd, a) in &runs {
        let o = mcptape(cwd, &["check", a[0], "--baseline", a[1]]);
        assert_eq!(o.status.code(), Some(0), "{a:?} in {cwd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&verdict), "{a:?}: {}", stderr(&o));
    }
    // --write-baseline writes the same file whatever the spelling and the directory.
    for (cwd, a) in &runs {
        let o = mcptape(cwd, &["check", a[0], "--write-baseline", a[1]]);
        assert_eq!(o.status.code(), Some(0), "{a:?}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(d.join("ci/baseline.json")).unwrap(),
            written,
            "{a:?} in {cwd:?}"
        );
    }
}

/// The shipped corpus/check-baseline.json (format 2, paths relative to corpus/) matches the
/// repository's recordings from a directory outside the repository, absolute paths.
#[test]
fn check_shipped_baseline_matches_from_another_directory() {
    let root = repo().canonicalize().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let o = mcptape(
        tmp.path(),
        &[
            "check",
            &root.join("corpus/transcripts").display().to_string(),
            "--baseline",
            &root
                .join("corpus/check-baseline.json")
                .display()
                .to_string(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 1 expected finding(s) still occur, 0 new, 0 fixed"),
        "{}",
        stderr(&o)
    );
}

/// A format-1 baseline (paths relative to the working directory, never released) is refused
/// with the version it has and the one this mcptape reads, exit 2.
#[test]
fn check_baseline_format_1_is_refused() {
    let tmp = violations_copy();
    let d = tmp.path();
    let o = mcptape(d, &["check", "v", "--write-baseline", "ci/baseline.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v2 = std::fs::read_to_string(d.join("ci/baseline.json")).unwrap();
    let v1 = v2
        .replace("\"mcptapeBaseline\": 2", "\"mcptapeBaseline\": 1")
        .replace("\"../v/", "\"v/");
    assert_ne!(v1, v2);
    std::fs::write(d.join("ci/old.json"), &v1).unwrap();
    let o = mcptape(d, &["check", "./v", "--baseline", "ci/old.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mcptapeBaseline is 1, this mcptape reads 2"),
        "{}",
        stderr(&o)
    );
}

/// A stdio transcript of `n` results to ids 0..n no request sent (`n` × response-unknown-id)
/// and the exit record.
fn unknown_ids(n: usize) -> String {
    let mut s = String::from(
        r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-11-30T00:00:00Z"}"#,
    );
    s.push('\n');
    for i in 0..n {
        s.push_str(&format!(
            r#"{{"tUs":{},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":{i},"result":{{}}}}}}"#,
            i + 1
        ));
        s.push('\n');
    }
    s.push_str(&format!(r#"{{"tUs":{},"kind":"exit","code":0}}"#, n + 1));
    s.push('\n');
    s
}

/// Regression (fresh-user trial, 2026-12-05): with `--baseline`, `--max-per-rule` counted the
/// hidden findings of a rule as "allowed" when its first finding was (new failures among
/// them), and the baseline's `new:` lines on stderr were not capped (99,991 lines). A rule's
/// expected and new findings are capped and counted apart, on stdout and on stderr.
#[test]
fn max_per_rule_with_a_baseline_counts_new_and_expected_findings_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("t.jsonl"), unknown_ids(3)).unwrap();
    let o = mcptape(d, &["check", "t.jsonl", "--write-baseline", "b.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(d.join("t.jsonl"), unknown_ids(10)).unwrap();
    let o = mcptape(
        d,
        &[
            "check",
            "t.jsonl",
            "--baseline",
            "b.json",
            "--max-per-rule",
            "2",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let shown = |allowed: bool| {
        out.lines()
            .filter(|l| l.contains("error[response-unknown-id] no request"))
            .filter(|l| l.ends_with(", allowed)") == allowed)
            .count()
    };
    assert_eq!((shown(true), shown(false)), (2, 2), "{out}");
    let more: Vec<&str> = out.lines().filter(|l| l.contains(" not shown ")).collect();
    assert_eq!(
        more,
        [
            "  t.jsonl: 1 more error[response-unknown-id] finding(s), allowed, not shown (--max-per-rule 2)",
            "  t.jsonl: 5 more error[response-unknown-id] finding(s) not shown (--max-per-rule 2)",
        ],
        "{out}"
    );
    assert_eq!(
        out.lines().last(),
        Some("FAIL: 1 file(s), 7 error(s), 0 warning(s), 3 allowed")
    );
    let e = stderr(&o);
    assert!(
        e.contains("3 of 3 expected finding(s) still occur, 7 new, 0 fixed"),
        "{e}"
    );
    let new: Vec<&str> = e.lines().filter(|l| l.starts_with("  new: ")).collect();
    assert_eq!(new.len(), 3, "{e}");
    assert_eq!(
        new[2],
        "  new: t.jsonl: 5 more response-unknown-id finding(s) not shown (--max-per-rule 2)"
    );
}
