//! Every rule of the catalogue has `corpus/violations/<rule>.jsonl`, and that
//! file fires exactly its rule, at the record, line, id and JSON pointer
//! listed here. Near misses (`tests/data/pass/*.jsonl`) fire no rule.

use crate::support::repo;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mcptape_check::{Options, RULES, Revision, Severity, SpecChoice, check_bytes, check_paths};

fn violation(id: &str) -> PathBuf {
    repo().join("corpus/violations").join(format!("{id}.jsonl"))
}

fn check_file(path: &Path) -> mcptape_check::FileReport {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    check_bytes(&path.display().to_string(), &bytes, &Options::default())
}

/// (rule, line, request id as JSON, pointer) of the one finding each
/// violation file must produce.
#[rustfmt::skip]
const EXPECTED: &[(&str, usize, Option<&str>, &str)] = &[
    ("transcript-unreadable", 1, None, ""),
    ("transcript-truncated", 4, None, ""),
    ("recording-no-exit", 3, None, ""),
    ("record-time-beyond-limit", 2, None, ""),
    ("record-time-backwards", 3, None, ""),
    ("stdio-non-jsonrpc-line", 2, None, ""),
    ("stdio-embedded-newline", 3, None, ""),
    ("message-not-jsonrpc", 2, None, ""),
    ("jsonrpc-batch-removed", 2, None, ""),
    ("read-result-malformed", 3, Some("1"), "/result/contents"),
    ("contents-neither-text-nor-blob", 3, Some("1"), "/result/contents/0"),
    ("contents-text-and-blob", 3, Some("1"), "/result/contents/0"),
    ("contents-missing-uri", 3, Some("1"), "/result/contents/0"),
    ("blob-not-canonical-base64", 3, Some("1"), "/result/contents/0/blob"),
    ("read-empty-contents", 5, Some("2"), "/result/contents"),
    ("not-found-code", 3, Some("1"), "/error/code"),
    ("not-found-data-uri", 3, Some("1"), "/error/data/uri"),
    ("not-found-guessed-from-message", 3, Some("1"), "/error/message"),
    ("error-id-missing", 3, Some("1"), ""),
    ("sse-event-not-jsonrpc", 3, None, ""),
    ("result-missing-resultType", 3, Some("1"), "/result"),
    ("result-missing-cache-hints", 3, Some("1"), "/result"),
    ("cache-hints-invalid", 3, Some("1"), "/result/ttlMs"),
    ("mimetype-sniff-mismatch", 3, Some("1"), "/result/contents/0/mimeType"),
    ("textlike-mimetype-as-blob", 3, Some("1"), "/result/contents/0/blob"),
    ("data-uri-in-text", 3, Some("1"), "/result/contents/0/text"),
    ("blob-over-size-threshold", 3, Some("1"), "/result/contents/0/blob"),
    ("request-unanswered", 2, Some("1"), "/id"),
    ("request-answered-twice", 4, Some("1"), "/id"),
    ("request-id-reused", 4, Some("1"), "/id"),
    ("response-unknown-id", 4, Some("99"), "/id"),
    ("error-id-null", 3, Some("1"), "/id"),
    ("response-after-cancel", 4, Some("1"), "/id"),
    ("ids-differ-only-in-type", 4, Some("\"1\""), "/id"),
    ("protocol-version-not-offered", 3, Some("1"), "/result/protocolVersion"),
    ("http-protocol-version-mismatch", 2, Some("1"), "/params/_meta/io.modelcontextprotocol~1protocolVersion"),
];

#[test]
fn every_rule_has_an_expectation_and_a_violation_file() {
    let expected: BTreeSet<&str> = EXPECTED.iter().map(|e| e.0).collect();
    let rules: BTreeSet<&str> = RULES.iter().map(|r| r.id).collect();
    assert_eq!(expected, rules);
    for r in RULES {
        assert!(
            violation(r.id).is_file(),
            "missing corpus/violations/{}.jsonl",
            r.id
        );
    }
}

#[test]
fn every_violation_file_is_named_after_a_rule() {
    for entry in std::fs::read_dir(repo().join("corpus/violations")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "jsonl") {
            let stem = p.file_stem().unwrap().to_str().unwrap();
            assert!(
                mcptape_check::rule(stem).is_some(),
                "{stem}.jsonl names no rule"
            );
        }
    }
}

#[test]
fn each_violation_fires_exactly_its_rule_once_at_the_expected_place() {
    for &(id, line, req_id, pointer) in EXPECTED {
        let report = check_file(&violation(id));
        let fired: Vec<&str> = report.findings.iter().map(|f| f.rule).collect();
        assert_eq!(fired, vec![id], "{id}.jsonl fired {fired:?}");
        let f = &report.findings[0];
        let rule = mcptape_check::rule(id).unwrap();
        assert_eq!(f.severity, rule.severity, "{id}");
        assert_eq!(f.line, line, "{id}: line");
        assert_eq!(f.record, line - 1, "{id}: record");
        assert_eq!(f.request_id.as_deref(), req_id, "{id}: request id");
        assert_eq!(f.pointer, pointer, "{id}: pointer");
        assert!(!f.message.is_empty());
        assert!(f.file.ends_with(&format!("{id}.jsonl")));
        assert_eq!(f.is_failure(), rule.severity == Severity::Error, "{id}");
    }
}

#[test]
fn near_misses_fire_no_rule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pass");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        let report = check_file(&p);
        assert!(
            report.findings.is_empty(),
            "{}: {:#?}",
            p.display(),
            report.findings
        );
        assert!(report.messages > 0, "{}", p.display());
        n += 1;
    }
    assert!(n >= 20, "only {n} near-miss files");
}

#[test]
fn the_violations_directory_fails_and_counts_every_rule() {
    let report = check_paths(&[repo().join("corpus/violations")], &Options::default()).unwrap();
    assert_eq!(report.files.len(), RULES.len());
    assert!(!report.passed());
    let errors = RULES
        .iter()
        .filter(|r| r.severity == Severity::Error)
        .count();
    let warnings = RULES.len() - errors;
    assert_eq!(report.summary.errors, errors);
    assert_eq!(report.summary.warnings, warnings);
    for r in RULES {
        assert_eq!(report.count(r), 1, "{}", r.id);
    }
}

#[test]
fn allowing_every_error_rule_passes_the_violations_directory() {
    let opts = Options {
        allow: RULES
            .iter()
            .filter(|r| r.severity == Severity::Error)
            .map(|r| r.id.to_owned())
            .collect(),
        ..Options::default()
    };
    let report = check_paths(&[repo().join("corpus/violations")], &opts).unwrap();
    assert!(report.passed());
    assert_eq!(report.summary.errors, 0);
    assert_eq!(report.summary.allowed, opts.allow.len());
}

/// Error rules allowed on `corpus/transcripts` (CI passes them with
/// `--allow`); each allowed finding is named and explained in corpus/README.md.
const ALLOWED_IN_CORPUS: &[&str] = &["error-id-null"];

#[test]
fn real_recordings_have_no_error_finding_beyond_those_explained_in_the_readme() {
    let dir = repo().join("corpus/transcripts");
    let report = check_paths(&[dir], &Options::default()).unwrap();
    assert!(!report.files.is_empty());
    let readme = std::fs::read_to_string(repo().join("corpus/README.md")).unwrap();
    let allowed_section = readme
        .split("### Allowed error findings")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .expect("corpus/README.md has an \"Allowed error findings\" section");
    for f in report.files.iter().flat_map(|f| &f.findings) {
        if !f.is_failure() {
            continue;
        }
        assert!(ALLOWED_IN_CORPUS.contains(&f.rule), "not allowed: {f:#?}");
        let name = Path::new(&f.file).file_name().unwrap().to_str().unwrap();
        let row = allowed_section
            .lines()
            .find(|l| l.contains(&format!("`{}`", f.rule)) && l.contains(name))
            .unwrap_or_else(|| panic!("corpus/README.md does not explain {} in {name}", f.rule));
        assert!(
            row.contains(&format!("| {} (line {}) |", f.record, f.line)),
            "README row for {name} names another record: {row}"
        );
    }
}

/// The contents rules agree with the strict parser of `mcptape-wire`: the
/// server message of each contents violation is rejected by
/// `resources::parse_read_response` with the matching error kind, and the
/// near misses that carry a read result parse.
#[test]
fn contents_violations_agree_with_the_wire_parser() {
    use mcptape_wire::resources::{ContentsErrorKind, parse_read_response};
    let s2c_messages = |path: &Path| -> Vec<String> {
        let t = mcptape_transcript::reader::read(&std::fs::read(path).unwrap()).unwrap();
        t.records
            .iter()
            .filter(|r| r.dir() == Some(mcptape_transcript::Direction::S2c))
            .filter_map(|r| r.msg().map(str::to_owned))
            .collect()
    };
    type KindCheck = fn(&ContentsErrorKind) -> bool;
    let cases: &[(&str, KindCheck)] = &[
        ("contents-neither-text-nor-blob", |k| {
            matches!(k, ContentsErrorKind::NeitherTextNorBlob)
        }),
        ("contents-text-and-blob", |k| {
            matches!(k, ContentsErrorKind::BothTextAndBlob)
        }),
        ("contents-missing-uri", |k| {
            matches!(k, ContentsErrorKind::MissingUri)
        }),
        ("blob-not-canonical-base64", |k| {
            matches!(k, ContentsErrorKind::InvalidBase64(_))
        }),
        ("read-result-malformed", |k| {
            matches!(k, ContentsErrorKind::ContentsNotArray)
        }),
    ];
    for (id, want) in cases {
        let msgs = s2c_messages(&violation(id));
        let e = parse_read_response(msgs.last().unwrap().as_bytes()).unwrap_err();
        assert!(want(e.kind()), "{id}: wire says {e}");
        if *id != "read-result-malformed" {
            assert_eq!(e.index(), Some(0), "{id}");
        }
    }
    for case in [
        "blank-resource-one-empty-text",
        "mixed-text-and-blob-entries",
        "octet-stream-with-png-bytes",
        "legacy-encoded-text-as-blob",
    ] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/pass")
            .join(format!("{case}.jsonl"));
        let msgs = s2c_messages(&p);
        let r = parse_read_response(msgs.last().unwrap().as_bytes())
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(!r.contents.is_empty(), "{case}");
    }
}

/// For every rule, the near misses (files in tests/data/pass/, which fire no
/// rule at all) that come closest to firing it.
const NEAR_MISSES: &[(&str, &[&str])] = &[
    ("transcript-unreadable", &["initialize-same-version"]),
    ("transcript-truncated", &["last-record-without-newline"]),
    (
        "recording-no-exit",
        &[
            "last-record-without-newline",
            "server-killed-by-signal-exit-record",
            "http-stream-closed-by-client-cancels",
        ],
    ),
    ("stdio-non-jsonrpc-line", &["null-id-parse-error-response"]),
    ("stdio-embedded-newline", &["mixed-text-and-blob-entries"]),
    ("message-not-jsonrpc", &["null-id-parse-error-response"]),
    ("jsonrpc-batch-removed", &["batch-under-2025-03-26"]),
    (
        "read-result-malformed",
        &["input-required-result-without-cache-hints"],
    ),
    (
        "contents-neither-text-nor-blob",
        &["blank-resource-one-empty-text"],
    ),
    ("contents-text-and-blob", &["mixed-text-and-blob-entries"]),
    ("contents-missing-uri", &["mixed-text-and-blob-entries"]),
    (
        "blob-not-canonical-base64",
        &["mixed-text-and-blob-entries", "octet-stream-with-png-bytes"],
    ),
    ("read-empty-contents", &["blank-resource-one-empty-text"]),
    (
        "not-found-code",
        &[
            "legacy-32002-under-2025-11-25",
            "internal-error-not-a-not-found",
            "not-found-32602-with-data-uri-2026",
        ],
    ),
    (
        "not-found-data-uri",
        &[
            "malformed-uri-32602-without-data-2026",
            "not-found-32602-with-data-uri-2026",
        ],
    ),
    (
        "not-found-guessed-from-message",
        &[
            "malformed-uri-32602-without-data-2026",
            "not-found-32602-with-data-uri-2026",
            "internal-error-not-a-not-found",
        ],
    ),
    (
        "error-id-missing",
        &[
            "null-id-error-in-exchange-without-request",
            "null-id-parse-error-response",
        ],
    ),
    (
        "sse-event-not-jsonrpc",
        &["sse-jsonrpc-events-after-priming"],
    ),
    (
        "result-missing-resultType",
        &[
            "old-revision-result-without-resultType",
            "new-revision-complete-result",
        ],
    ),
    (
        "result-missing-cache-hints",
        &[
            "input-required-result-without-cache-hints",
            "new-revision-complete-result",
        ],
    ),
    (
        "cache-hints-invalid",
        &[
            "new-revision-complete-result",
            "discover-then-supported-version",
        ],
    ),
    (
        "mimetype-sniff-mismatch",
        &["octet-stream-with-png-bytes", "mixed-text-and-blob-entries"],
    ),
    (
        "textlike-mimetype-as-blob",
        &["legacy-encoded-text-as-blob"],
    ),
    ("data-uri-in-text", &["data-word-in-text-not-a-uri"]),
    ("blob-over-size-threshold", &["mixed-text-and-blob-entries"]),
    (
        "request-unanswered",
        &[
            "cancelled-request-never-answered",
            "http-stream-closed-by-client-cancels",
        ],
    ),
    (
        "request-answered-twice",
        &[
            "same-id-in-another-http-session-after-answer",
            "same-id-in-concurrent-http-exchanges",
        ],
    ),
    (
        "request-id-reused",
        &[
            "same-id-in-another-http-session-after-answer",
            "ids-of-both-directions-share-a-value",
        ],
    ),
    (
        "response-unknown-id",
        &[
            "server-request-answered-by-client",
            "ids-of-both-directions-share-a-value",
        ],
    ),
    (
        "error-id-null",
        &[
            "null-id-error-in-exchange-without-request",
            "null-id-parse-error-response",
        ],
    ),
    (
        "response-after-cancel",
        &["cancelled-request-never-answered"],
    ),
    (
        "ids-differ-only-in-type",
        &[
            "same-id-in-another-http-session-after-answer",
            "ids-of-both-directions-share-a-value",
        ],
    ),
    (
        "protocol-version-not-offered",
        &[
            "initialize-other-version-client-disconnects",
            "discover-then-supported-version",
            "initialize-same-version",
        ],
    ),
    (
        "http-protocol-version-mismatch",
        &["discover-then-supported-version"],
    ),
    ("record-time-beyond-limit", &["record-time-at-the-limit"]),
    ("record-time-backwards", &["response-at-its-requests-time"]),
];

#[test]
fn every_rule_has_a_near_miss_that_does_not_fire_it() {
    let rules: BTreeSet<&str> = RULES.iter().map(|r| r.id).collect();
    let mapped: BTreeSet<&str> = NEAR_MISSES.iter().map(|e| e.0).collect();
    assert_eq!(rules, mapped);
    for (rule, cases) in NEAR_MISSES {
        for case in *cases {
            let p = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/pass")
                .join(format!("{case}.jsonl"));
            let report = check_file(&p);
            assert!(
                report.findings.iter().all(|f| f.rule != *rule),
                "{case} fires {rule}"
            );
            assert!(report.findings.is_empty(), "{case}: {:?}", report.findings);
        }
    }
}

/// `check_paths` streams each file (one line at a time, a first pass for `--spec auto`):
/// on every violation file, near miss and real recording it reports exactly what
/// `check_bytes` reports on the file held in memory, under every `--spec`.
#[test]
fn streamed_files_report_what_check_bytes_reports_in_memory() {
    let mut files = Vec::new();
    for dir in [
        "corpus/violations",
        "corpus/transcripts",
        "crates/mcptape-check/tests/data/pass",
    ] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 40, "{} files", files.len());
    for spec in [
        SpecChoice::Auto,
        SpecChoice::Fixed(Revision::v2025_06_18()),
        SpecChoice::Fixed(Revision::v2026_07_28()),
    ] {
        let opts = Options {
            spec: spec.clone(),
            ..Options::default()
        };
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let in_memory = check_bytes(&f.display().to_string(), &bytes, &opts);
            let streamed = check_paths(std::slice::from_ref(f), &opts)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert_eq!(streamed.files.len(), 1);
            assert_eq!(
                format!("{:?}", streamed.files[0]),
                format!("{in_memory:?}"),
                "{} under {spec:?}",
                f.display()
            );
        }
    }
}
