//! Report formats, validated by parsing them back: JUnit XML with roxmltree,
//! JSON with serde_json, the human lines by their fixed layout.

use std::path::{Path, PathBuf};

use mcptape_check::output::{self, Format};
use mcptape_check::{Options, RULES, Report, Severity, check_bytes, check_paths};

fn violations_report(opts: &Options) -> Report {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/violations");
    check_paths(&[dir], opts).unwrap()
}

#[test]
fn junit_parses_back_with_one_case_per_file_and_rule() {
    let report = violations_report(&Options::default());
    let xml = output::render(&report, Format::Junit);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let errors = RULES
        .iter()
        .filter(|r| r.severity == Severity::Error)
        .count();
    assert_eq!(
        root.attribute("tests"),
        Some((RULES.len() * RULES.len()).to_string().as_str())
    );
    assert_eq!(
        root.attribute("failures"),
        Some(errors.to_string().as_str())
    );

    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), RULES.len());
    for suite in suites {
        let file = suite.attribute("name").unwrap();
        let rule_id = Path::new(file).file_stem().unwrap().to_str().unwrap();
        let rule = mcptape_check::rule(rule_id).unwrap();
        let cases: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), RULES.len());
        let failed: Vec<&str> = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .map(|c| c.attribute("name").unwrap())
            .collect();
        let with_out: Vec<&str> = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("system-out")))
            .map(|c| c.attribute("name").unwrap())
            .collect();
        match rule.severity {
            Severity::Error => {
                assert_eq!(failed, vec![rule_id], "{file}");
                assert!(with_out.is_empty(), "{file}");
                assert_eq!(suite.attribute("failures"), Some("1"));
                let failure = cases
                    .iter()
                    .find_map(|c| c.children().find(|n| n.has_tag_name("failure")))
                    .unwrap();
                assert_eq!(failure.attribute("type"), Some(rule_id));
                let text = failure.text().unwrap();
                assert!(text.contains(&format!(": error[{rule_id}] ")), "{text}");
            }
            Severity::Warning => {
                assert!(failed.is_empty(), "{file}");
                assert_eq!(with_out, vec![rule_id], "{file}");
                assert_eq!(suite.attribute("failures"), Some("0"));
            }
        }
        let props: Vec<(&str, &str)> = suite
            .descendants()
            .filter(|n| n.has_tag_name("property"))
            .map(|n| (n.attribute("name").unwrap(), n.attribute("value").unwrap()))
            .collect();
        assert_eq!(props[0].0, "revision");
        assert_eq!(props[1].0, "revisionSource");
    }
}

#[test]
fn junit_marks_allowed_errors_skipped_not_failed() {
    let opts = Options {
        allow: ["request-unanswered".to_owned()].into(),
        ..Options::default()
    };
    let report = violations_report(&opts);
    let xml = output::render(&report, Format::Junit);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("testsuite")
                && n.attribute("name")
                    .unwrap()
                    .ends_with("request-unanswered.jsonl")
        })
        .unwrap();
    assert_eq!(suite.attribute("failures"), Some("0"));
    assert_eq!(suite.attribute("skipped"), Some("1"));
    let case = suite
        .children()
        .find(|n| n.attribute("name") == Some("request-unanswered"))
        .unwrap();
    assert!(case.children().any(|n| n.has_tag_name("skipped")));
    assert!(case.children().any(|n| n.has_tag_name("system-out")));
}

#[test]
fn junit_escapes_file_names_and_messages() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus/violations/stdio-non-jsonrpc-line.jsonl"),
    )
    .unwrap();
    let name = "we<ird> & \"quoted\" 'name'\u{1}.jsonl";
    let fr = check_bytes(name, &bytes, &Options::default());
    let report = Report::new(vec![fr], vec![]);
    let xml = output::render(&report, Format::Junit);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(
        suite.attribute("name"),
        Some("we<ird> & \"quoted\" 'name'\\u{1}.jsonl")
    );
}

#[test]
fn json_parses_back_to_the_same_summary_and_findings() {
    let report = violations_report(&Options::default());
    let text = output::render(&report, Format::Json);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["summary"]["files"], RULES.len());
    assert_eq!(v["summary"]["errors"], report.summary.errors);
    assert_eq!(v["summary"]["warnings"], report.summary.warnings);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), RULES.len());
    let f = files
        .iter()
        .find(|f| {
            f["file"]
                .as_str()
                .unwrap()
                .ends_with("ids-differ-only-in-type.jsonl")
        })
        .unwrap();
    let finding = &f["findings"][0];
    assert_eq!(finding["rule"], "ids-differ-only-in-type");
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["allowed"], false);
    assert_eq!(finding["record"], 3);
    assert_eq!(finding["line"], 4);
    assert_eq!(finding["requestId"], "\"1\"");
    assert_eq!(finding["pointer"], "/id");
    assert_eq!(f["revision"], "2025-11-25");
    assert_eq!(f["revisionSource"], "header");
}

#[test]
fn human_lines_name_file_line_severity_rule_id_and_pointer() {
    let report = violations_report(&Options::default());
    let text = output::render(&report, Format::Human);
    let line = text
        .lines()
        .find(|l| l.contains("[blob-not-canonical-base64]"))
        .unwrap();
    let file: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/violations/blob-not-canonical-base64.jsonl");
    assert!(
        line.trim_start().starts_with(&format!(
            "{}:3: error[blob-not-canonical-base64] ",
            file.display()
        )),
        "{line}"
    );
    assert!(
        line.ends_with("(record 2, id 1, at /result/contents/0/blob)"),
        "{line}"
    );
    let last = text.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "FAIL: {} file(s), {} error(s), {} warning(s), 0 allowed",
            RULES.len(),
            report.summary.errors,
            report.summary.warnings
        )
    );
}

/// A transcript header (stdio, no handshake).
const HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#;

/// A transcript of a ping left unanswered (id `"open"`, one `request-unanswered`) and then `n`
/// results to ids 0..n that no request sent (`n` × `response-unknown-id`), no exit record.
fn unanswered_then_unknown_ids(n: usize) -> String {
    let mut s = format!("{HEADER}\n");
    s.push_str(
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":"open","method":"ping"}}"#,
    );
    s.push('\n');
    for i in 0..n {
        s.push_str(&format!(
            r#"{{"tUs":{},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":{i},"result":{{}}}}}}"#,
            i + 2
        ));
        s.push('\n');
    }
    s
}

/// Past [`mcptape_check::SPILL_CHUNK_FINDINGS`] findings the streamed writer
/// reads them back from sorted runs on disk: its human, JSON, JUnit and SARIF
/// reports are byte for byte [`output::render`]'s of the whole report, the request left
/// unanswered at the top (found last, reported first) and a second file
/// included, and so are the totals.
#[test]
fn streamed_report_past_the_spill_chunk_is_byte_identical_to_the_rendered_one() {
    let tmp = tempfile::tempdir().unwrap();
    let n = mcptape_check::SPILL_CHUNK_FINDINGS + 1000;
    std::fs::write(tmp.path().join("a.jsonl"), unanswered_then_unknown_ids(n)).unwrap();
    std::fs::write(tmp.path().join("b.jsonl"), format!("{HEADER}\n")).unwrap();
    let opts = Options::default();
    let paths = [tmp.path().to_owned()];
    let report = check_paths(&paths, &opts).unwrap();
    assert_eq!(
        report.count(mcptape_check::rule("response-unknown-id").unwrap()),
        n
    );
    for format in [Format::Human, Format::Json, Format::Junit, Format::Sarif] {
        let mut out = Vec::new();
        let mut files = mcptape_check::check_paths_streamed(&paths, &opts).unwrap();
        let summary = output::write_streamed(&mut files, &[], format, &mut out).unwrap();
        assert_eq!(summary, report.summary, "{format:?}");
        assert!(
            String::from_utf8(out).unwrap() == output::render(&report, format),
            "{format:?}: the streamed report differs"
        );
    }
}

/// Regression (fresh-user trial): 50,000 identical warnings of one rule on a long transcript
/// had no cap. With `--max-per-rule` ([`output::HumanOptions::max_per_rule`]) the human report
/// shows that many findings of each rule per file, then one line per rule counting the rest;
/// the summary counts every finding; the streamed writer (past the spill chunk) gives the same
/// bytes as the in-memory one; a cap of the rule's count shows every finding and no line.
#[test]
fn human_report_capped_per_rule_counts_the_findings_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let n = mcptape_check::SPILL_CHUNK_FINDINGS + 7;
    let file = tmp.path().join("a.jsonl");
    std::fs::write(&file, unanswered_then_unknown_ids(n)).unwrap();
    let opts = Options::default();
    let paths = [file.clone()];
    let report = check_paths(&paths, &opts).unwrap();
    let unknown = mcptape_check::rule("response-unknown-id").unwrap();
    assert_eq!(report.count(unknown), n);
    let shown = |text: &str, rule: &str| {
        text.lines()
            .filter(|l| l.contains(&format!("[{rule}] ")) && !l.contains(" not shown "))
            .count()
    };
    for (max, left) in [(1, n - 1), (20, n - 20), (n - 1, 1), (n, 0)] {
        let human = output::HumanOptions {
            max_per_rule: std::num::NonZeroUsize::new(max),
        };
        let mut whole = Vec::new();
        output::write_report_with(&report, Format::Human, human, &mut whole).unwrap();
        let whole = String::from_utf8(whole).unwrap();
        assert_eq!(shown(&whole, "response-unknown-id"), max, "max {max}");
        assert_eq!(shown(&whole, "request-unanswered"), 1, "max {max}");
        let more = format!(
            "  {}: {left} more error[response-unknown-id] finding(s) not shown (--max-per-rule {max})",
            file.display()
        );
        assert_eq!(
            whole.lines().filter(|l| l.contains(" not shown ")).count(),
            usize::from(left > 0),
            "max {max}"
        );
        assert_eq!(
            whole.lines().any(|l| l == more),
            left > 0,
            "max {max}: {more}"
        );
        assert_eq!(
            whole.lines().last().unwrap(),
            format!(
                "FAIL: 1 file(s), {} error(s), 1 warning(s), 0 allowed",
                n + 1
            )
        );
        let mut files = mcptape_check::check_paths_streamed(&paths, &opts).unwrap();
        let mut streamed = Vec::new();
        let summary =
            output::write_streamed_with(&mut files, &[], Format::Human, human, &mut streamed)
                .unwrap();
        assert_eq!(summary, report.summary);
        assert!(
            String::from_utf8(streamed).unwrap() == whole,
            "max {max}: streamed differs"
        );
    }
    // No cap: every finding, as before.
    let mut all = Vec::new();
    output::write_report_with(
        &report,
        Format::Human,
        output::HumanOptions::default(),
        &mut all,
    )
    .unwrap();
    assert!(String::from_utf8(all).unwrap() == output::render(&report, Format::Human));
}
