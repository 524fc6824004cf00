//! Baselines: the round trip on corpus/violations (write, check with it:
//! pass), a fixed finding (a violation file removed: reported fixed), a new
//! finding (a violation file added: fails, named), counts, the file format's
//! errors and size limit, and the shipped `corpus/check-baseline.json`.

use crate::support::repo;

use std::path::Path;

use mcptape_check::baseline::{self, BASELINE_FORMAT, MAX_BASELINE_BYTES};
use mcptape_check::{Baseline, BaselineErrorKind, Options, Report, check_paths};

/// A temp dir holding a copy of corpus/violations as `v/`.
fn violations_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("v");
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(repo().join("corpus/violations")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            std::fs::copy(&p, dst.join(p.file_name().unwrap())).unwrap();
        }
    }
    tmp
}

fn check(dir: &Path) -> Report {
    check_paths(&[dir.join("v")], &Options::default()).unwrap()
}

#[test]
fn baseline_round_trip_on_violations_passes_and_rewrites_identically() {
    let tmp = violations_copy();
    let base = tmp.path();
    let mut report = check(base);
    assert!(!report.passed());
    let failing = report.summary.errors;
    let b = Baseline::from_report(&report, Some(base));
    assert_eq!(b.mcptape_baseline, BASELINE_FORMAT);
    assert_eq!(b.total(), failing);
    assert!(b.findings.windows(2).all(|w| w[0] < w[1]), "sorted, unique");
    assert!(b.findings.iter().all(|e| e.file.starts_with("v/")));
    let file = base.join("baseline.json");
    b.write(&file).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"mcptapeBaseline\": 2"), "{text}");
    let read = Baseline::read(&file).unwrap();
    assert_eq!(read, b);
    assert_eq!(read.to_json(), text);

    let outcome = baseline::apply(&mut report, &read, Some(base));
    assert!(report.passed());
    assert_eq!(report.summary.errors, 0);
    assert_eq!(report.summary.allowed, failing);
    assert!(outcome.new.is_empty());
    assert!(outcome.fixed.is_empty());
    assert_eq!(outcome.baselined.len(), failing);
}

#[test]
fn baseline_reports_removed_violation_as_fixed() {
    let tmp = violations_copy();
    let base = tmp.path();
    let b = Baseline::from_report(&check(base), Some(base));
    std::fs::remove_file(base.join("v/not-found-code.jsonl")).unwrap();
    let mut report = check(base);
    let outcome = baseline::apply(&mut report, &b, Some(base));
    assert!(report.passed());
    assert!(outcome.new.is_empty());
    assert!(!outcome.fixed.is_empty());
    for e in &outcome.fixed {
        assert_eq!(e.file, "v/not-found-code.jsonl");
        assert!(e.count >= 1);
    }
    assert!(outcome.fixed.iter().any(|e| e.rule == "not-found-code"));
}

#[test]
fn baseline_fails_on_added_violation_and_names_it() {
    let tmp = violations_copy();
    let base = tmp.path();
    let b = Baseline::from_report(&check(base), Some(base));
    std::fs::copy(
        base.join("v/contents-text-and-blob.jsonl"),
        base.join("v/new-server.jsonl"),
    )
    .unwrap();
    let mut report = check(base);
    let outcome = baseline::apply(&mut report, &b, Some(base));
    assert!(!report.passed());
    let new = outcome.new_findings(&report);
    assert!(!new.is_empty());
    assert!(
        new.iter().all(|f| f.file.ends_with("v/new-server.jsonl")),
        "{new:?}"
    );
    assert!(new.iter().any(|f| f.rule == "contents-text-and-blob"));
    assert_eq!(report.summary.errors, new.len());
    assert!(outcome.fixed.is_empty());
}

#[test]
fn baseline_count_above_occurrences_is_partly_fixed_and_below_is_new() {
    let tmp = violations_copy();
    let base = tmp.path();
    let mut b = Baseline::from_report(&check(base), Some(base));
    let i = b
        .findings
        .iter()
        .position(|e| e.rule == "not-found-code")
        .unwrap();
    let n = b.findings[i].count;
    b.findings[i].count = n + 2;
    let mut report = check(base);
    let outcome = baseline::apply(&mut report, &b, Some(base));
    assert!(report.passed());
    assert_eq!(outcome.fixed.len(), 1);
    assert_eq!(outcome.fixed[0].count, 2);
    assert_eq!(outcome.fixed[0].rule, "not-found-code");

    // The entry removed: its findings are new.
    b.findings.remove(i);
    let mut report = check(base);
    let outcome = baseline::apply(&mut report, &b, Some(base));
    assert_eq!(outcome.new.len(), n);
    assert!(
        outcome
            .new_findings(&report)
            .iter()
            .all(|f| f.rule == "not-found-code")
    );
}

#[test]
fn baseline_leaves_out_warnings_and_allowed_findings() {
    let tmp = violations_copy();
    let base = tmp.path();
    let opts = Options {
        allow: ["not-found-code".to_owned()].into(),
        ..Options::default()
    };
    let report = check_paths(&[base.join("v")], &opts).unwrap();
    let b = Baseline::from_report(&report, Some(base));
    assert!(!b.findings.iter().any(|e| e.rule == "not-found-code"));
    assert!(!b.findings.iter().any(|e| e.rule == "response-after-cancel"));
    assert_eq!(b.total(), report.summary.errors);
}

#[test]
fn baseline_paths_with_dot_segments_match() {
    let tmp = violations_copy();
    let base = tmp.path();
    let b = Baseline::from_report(&check(base), Some(base));
    let mut report = check_paths(&[base.join("./v/./")], &Options::default()).unwrap();
    let outcome = baseline::apply(&mut report, &b, Some(base));
    assert!(
        outcome.new.is_empty(),
        "{:?}",
        outcome.new_findings(&report)
    );
    assert!(report.passed());
}

fn parse_err(text: &str) -> BaselineErrorKind {
    Baseline::parse(Path::new("b.json"), text.as_bytes())
        .unwrap_err()
        .kind
}

/// The error of parsing a version-2 baseline whose findings are `entries` (JSON objects).
fn findings_err(entries: &[String]) -> BaselineErrorKind {
    parse_err(&format!(
        r#"{{"mcptapeBaseline":2,"findings":[{}]}}"#,
        entries.join(",")
    ))
}

#[test]
fn baseline_parse_errors_name_the_entry() {
    let entry = |rule: &str, count: usize| {
        format!(r#"{{"file":"a.jsonl","rule":"{rule}","pointer":"/id","count":{count}}}"#)
    };
    assert!(matches!(
        parse_err(r#"{"mcptapeBaseline":3,"findings":[]}"#),
        BaselineErrorKind::Version { found: 3 }
    ));
    assert!(matches!(
        findings_err(&[entry("error-id-null", 1), entry("no-such-rule", 1)]),
        BaselineErrorKind::UnknownRule { index: 1, ref rule } if rule == "no-such-rule"
    ));
    assert!(matches!(
        findings_err(&[entry("error-id-null", 0)]),
        BaselineErrorKind::ZeroCount { index: 0 }
    ));
    assert!(matches!(
        findings_err(&[entry("error-id-null", 1), entry("error-id-null", 3)]),
        BaselineErrorKind::Duplicate { index: 1 }
    ));
    assert!(matches!(
        parse_err(r#"{"mcptapeBaseline":2,"findings":[],"extra":true}"#),
        BaselineErrorKind::Json { line: 1, .. }
    ));
    assert!(matches!(
        parse_err("{\n\"mcptapeBaseline\":2,\n\"findings\": [\n"),
        BaselineErrorKind::Json { line: 4, .. }
    ));
    // Unsorted input is accepted and sorted.
    let b = Baseline::parse(
        Path::new("b.json"),
        format!(
            r#"{{"mcptapeBaseline":2,"findings":[{},{}]}}"#,
            entry("request-unanswered", 1),
            entry("error-id-null", 1)
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(b.findings[0].rule, "error-id-null");
}

#[test]
fn baseline_size_limit_at_and_one_past() {
    let doc = r#"{"mcptapeBaseline":2,"findings":[]}"#;
    let mut at = doc.as_bytes().to_vec();
    at.resize(MAX_BASELINE_BYTES, b' ');
    assert!(Baseline::parse(Path::new("b.json"), &at).is_ok());
    let mut past = at.clone();
    past.push(b' ');
    assert!(matches!(
        Baseline::parse(Path::new("b.json"), &past).unwrap_err().kind,
        BaselineErrorKind::TooLarge { len } if len == MAX_BASELINE_BYTES as u64 + 1
    ));
    // Reading a file checks its size before reading it.
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("big.json");
    std::fs::write(&f, &past).unwrap();
    assert!(matches!(
        Baseline::read(&f).unwrap_err().kind,
        BaselineErrorKind::TooLarge { .. }
    ));
    std::fs::write(&f, &at).unwrap();
    assert!(Baseline::read(&f).is_ok());
}

#[test]
fn shipped_corpus_baseline_matches_corpus_transcripts() {
    let root = repo();
    let b = Baseline::read(&root.join("corpus/check-baseline.json")).unwrap();
    assert!(b.total() >= 1);
    // Format 2: relative to the file's own directory, corpus/.
    assert_eq!(b.mcptape_baseline, BASELINE_FORMAT);
    assert!(
        b.findings
            .iter()
            .all(|e| e.file.starts_with("transcripts/"))
    );
    let corpus = Baseline::dir_of(&root.join("corpus/check-baseline.json"), &root);
    let mut report = check_paths(&[root.join("corpus/transcripts")], &Options::default()).unwrap();
    let outcome = baseline::apply(&mut report, &b, Some(&corpus));
    assert!(
        outcome.new.is_empty(),
        "new: {:?}",
        outcome.new_findings(&report)
    );
    assert!(outcome.fixed.is_empty(), "fixed: {:?}", outcome.fixed);
    assert!(report.passed());
    // The file is exactly what --write-baseline writes.
    let written = Baseline::from_report(
        &check_paths(&[root.join("corpus/transcripts")], &Options::default()).unwrap(),
        Some(&corpus),
    );
    assert_eq!(
        written.to_json(),
        std::fs::read_to_string(root.join("corpus/check-baseline.json")).unwrap()
    );
}
