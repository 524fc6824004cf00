//! `recording-no-exit` (check) and `Item::NoExitRecord` (inspect): a stdio
//! transcript whose last line is a whole record but not an exit record says
//! "recording ended without an exit record"; an HTTP recording (no exit
//! record by design), a cut tail (transcript-truncated) and a transcript with
//! an exit record do not.

use crate::support::repo;

use mcptape_check::inspect::{Item, inspect};
use mcptape_check::{Options, Severity, check_bytes};
use mcptape_transcript::reader::NO_EXIT_RECORD;

fn read(rel: &str) -> Vec<u8> {
    let p = repo().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn rules(bytes: &[u8]) -> Vec<&'static str> {
    check_bytes("t.jsonl", bytes, &Options::default())
        .findings
        .iter()
        .map(|f| f.rule)
        .collect()
}

fn no_exit_items(bytes: &[u8]) -> Vec<(usize, String)> {
    inspect(bytes, false)
        .items
        .into_iter()
        .filter_map(|i| match i {
            Item::NoExitRecord { line, reason } => Some((line, reason)),
            _ => None,
        })
        .collect()
}

const VIOLATION: &str = "corpus/violations/recording-no-exit.jsonl";

#[test]
fn recording_no_exit_violation_warns_in_check_and_inspect_at_the_last_record() {
    let bytes = read(VIOLATION);
    let r = check_bytes("t.jsonl", &bytes, &Options::default());
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.rule, "recording-no-exit");
    assert_eq!(f.severity, Severity::Warning);
    assert!(!f.is_failure());
    assert_eq!((f.record, f.line), (2, 3));
    assert!(f.message.starts_with(NO_EXIT_RECORD), "{}", f.message);
    assert!(f.message.contains("2 whole records"), "{}", f.message);

    let report = inspect(&bytes, false);
    assert_eq!(
        no_exit_items(&bytes),
        vec![(3, f.message.clone())],
        "inspect says what check says"
    );
    // Not a bad line: the read result is whole and the file is clean.
    assert!(report.clean());
    assert_eq!(report.summary.bad_lines, 0);
    assert_eq!(report.summary.results, 1);
    assert!(
        report
            .text()
            .contains(&format!("line 3: {NO_EXIT_RECORD} (")),
        "{}",
        report.text()
    );
    assert!(matches!(
        report.items.last(),
        Some(Item::NoExitRecord { .. })
    ));
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(v["items"][1]["kind"], "noExitRecord");
}

#[test]
fn the_same_file_with_an_exit_record_says_nothing() {
    let mut bytes = read(VIOLATION);
    bytes.extend_from_slice(b"{\"tUs\":99500,\"kind\":\"exit\",\"code\":0}\n");
    assert!(rules(&bytes).is_empty(), "{:?}", rules(&bytes));
    assert!(no_exit_items(&bytes).is_empty());
    // Killed by a signal, but the recorder saw the end: still an exit record.
    let mut killed = read(VIOLATION);
    killed.extend_from_slice(b"{\"tUs\":99500,\"kind\":\"exit\",\"signal\":9}\n");
    assert!(rules(&killed).is_empty());
    assert!(no_exit_items(&killed).is_empty());
    assert!(!inspect(&killed, false).text().contains(NO_EXIT_RECORD));
}

#[test]
fn http_recordings_have_no_exit_record_and_do_not_warn() {
    let http = String::from_utf8(read(VIOLATION)).unwrap().replacen(
        r#""transport":"stdio""#,
        r#""transport":"http""#,
        1,
    );
    assert!(http.contains(r#""transport":"http""#));
    assert!(rules(http.as_bytes()).is_empty());
    assert!(no_exit_items(http.as_bytes()).is_empty());
}

#[test]
fn a_cut_tail_is_transcript_truncated_not_recording_no_exit() {
    let bytes = read("corpus/violations/transcript-truncated.jsonl");
    assert_eq!(rules(&bytes), ["transcript-truncated"]);
    assert!(no_exit_items(&bytes).is_empty());
    let text = inspect(&bytes, false).text();
    assert!(!text.contains(NO_EXIT_RECORD), "{text}");
    assert!(text.contains("last line cut"), "{text}");
}

#[test]
fn header_only_stdio_transcript_warns_on_line_1() {
    let bytes = read("corpus/inspect/transcript-header-only.jsonl");
    let r = check_bytes("t.jsonl", &bytes, &Options::default());
    let got: Vec<_> = r
        .findings
        .iter()
        .map(|f| (f.rule, f.record, f.line))
        .collect();
    assert_eq!(got, vec![("recording-no-exit", 0, 1)]);
    assert!(r.findings[0].message.contains("0 whole records"));
    assert_eq!(no_exit_items(&bytes).len(), 1);
    assert_eq!(no_exit_items(&bytes)[0].0, 1);
}

/// A skipped (malformed) last line, here a bad exit record: the file was not
/// read through, so no recording-no-exit (the line may be the exit record):
/// the unreadable line alone is reported, at its own line number.
#[test]
fn malformed_last_line_is_unreadable_and_no_missing_exit_is_claimed() {
    let mut bytes = read(VIOLATION);
    bytes.extend_from_slice(b"{\"tUs\":\"late\",\"kind\":\"exit\"}\n");
    let r = check_bytes("t.jsonl", &bytes, &Options::default());
    let got: Vec<_> = r.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(got, vec![("transcript-unreadable", 4)]);
    assert!(no_exit_items(&bytes).is_empty());
}

/// The shipped stdio recordings end with the recorder's exit record; the
/// HTTP ones have none: no file of corpus/transcripts warns.
#[test]
fn shipped_recordings_do_not_warn() {
    let dir = repo().join("corpus/transcripts");
    let mut stdio = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let t = mcptape_transcript::reader::read(&bytes).unwrap();
        if t.header.transport == mcptape_transcript::Transport::Stdio {
            stdio += 1;
        }
        let r = check_bytes(&p.display().to_string(), &bytes, &Options::default());
        assert!(
            r.findings.iter().all(|f| f.rule != "recording-no-exit"),
            "{}",
            p.display()
        );
        assert!(no_exit_items(&bytes).is_empty(), "{}", p.display());
    }
    assert!(stdio >= 4, "{stdio} stdio recordings");
}

/// A stdio header, then `body` (lines, each ending in `\n`).
fn stdio_transcript(body: &[u8]) -> Vec<u8> {
    let mut b = br#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["srv"]},"startedAt":"2026-12-01T22:33:51.180Z"}"#.to_vec();
    b.push(b'\n');
    b.extend_from_slice(body);
    b
}

/// Fresh-user report: `check` of a stdio transcript whose line 2 (its last) is not UTF-8
/// printed `line 1: warning[recording-no-exit] … (0 whole records …: the records are complete
/// up to there …)` before the line-2 `transcript-unreadable` error. The file was not read
/// through: the unreadable last line may be the exit record, so only the error is reported
/// (check and inspect alike); an unreadable line followed by a readable last record still
/// gets recording-no-exit, after the error.
#[test]
fn regression_non_utf8_last_line_is_unreadable_not_a_missing_exit_record() {
    let bad = stdio_transcript(b"{\"tUs\":1,\"kind\":\"stderr\",\"line\":\"a\xffb\"}\n");
    let r = check_bytes("t.jsonl", &bad, &Options::default());
    let got: Vec<_> = r.findings.iter().map(|f| (f.rule, f.line)).collect();
    assert_eq!(got, vec![("transcript-unreadable", 2)], "{:?}", r.findings);
    assert!(
        r.findings[0].message.contains("invalid UTF-8"),
        "{}",
        r.findings[0].message
    );
    assert_eq!(no_exit_items(&bad), vec![]);

    let then_whole = stdio_transcript(
        b"{\"tUs\":1,\"kind\":\"stderr\",\"line\":\"a\xffb\"}\n{\"tUs\":2,\"kind\":\"stderr\",\"line\":\"ok\"}\n",
    );
    assert_eq!(
        rules(&then_whole),
        vec!["transcript-unreadable", "recording-no-exit"]
    );
    let r = check_bytes("t.jsonl", &then_whole, &Options::default());
    assert_eq!(r.findings[1].line, 3);
    assert_eq!(no_exit_items(&then_whole).len(), 1);
    assert_eq!(no_exit_items(&then_whole)[0].0, 3);
}
