//! Rule behaviour beyond one file per rule: revision dependence, revision
//! detection, limits (at the limit and one past), batches, multi-line
//! messages, id pairing corner cases.

use crate::support::repo;

use std::path::{Path, PathBuf};

use mcptape_check::{
    FileReport, MAX_ANSWERED_KEYS_KEPT, MAX_DIR_DEPTH, MAX_SPLIT_MESSAGE_LINES, Options, Revision,
    RevisionSource, SpecChoice, check_bytes, check_paths, collect_transcripts,
};

fn data(rel: &str) -> Vec<u8> {
    let p = if rel.starts_with("corpus/") {
        repo().join(rel)
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(rel)
    };
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `bytes` checked as `t.jsonl` with the default options (the revision detected).
fn check_default(bytes: &[u8]) -> FileReport {
    check_bytes("t.jsonl", bytes, &Options::default())
}

fn rules_fired(bytes: &[u8], opts: &Options) -> Vec<&'static str> {
    check_bytes("t.jsonl", bytes, opts)
        .findings
        .iter()
        .map(|f| f.rule)
        .collect()
}

fn spec(rev: Revision) -> Options {
    Options {
        spec: SpecChoice::Fixed(rev),
        ..Options::default()
    }
}

/// The rules `bytes` fires when checked against `rev`.
fn fired_under(bytes: &[u8], rev: Revision) -> Vec<&'static str> {
    rules_fired(bytes, &spec(rev))
}

const STDIO_HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#;

/// The exit record `mcptape record` writes last (without it a stdio
/// transcript fires recording-no-exit).
fn exit_record(t_us: usize) -> String {
    format!("{{\"tUs\":{t_us},\"kind\":\"exit\",\"code\":0}}\n")
}

/// A stdio transcript from (dir, message JSON) pairs, header without
/// revision, ended by an exit record.
fn transcript(msgs: &[(&str, &str)]) -> Vec<u8> {
    let mut s = String::from(STDIO_HEADER);
    s.push('\n');
    for (i, (dir, m)) in msgs.iter().enumerate() {
        s.push_str(&format!(
            r#"{{"tUs":{},"kind":"message","dir":"{dir}","msg":{m}}}"#,
            i + 1
        ));
        s.push('\n');
    }
    s.push_str(&exit_record(msgs.len() + 1));
    s.into_bytes()
}

/// `resources/read` of `file:///a` with id 1, the request most cases answer.
const READ_A: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}"#;

/// A stdio transcript of one client request and the server's answer.
fn exchange(request: &str, response: &str) -> Vec<u8> {
    transcript(&[("c2s", request), ("s2c", response)])
}

/// Each finding as (rule, JSON Pointer).
fn rules_and_pointers(r: &FileReport) -> Vec<(&'static str, &str)> {
    r.findings
        .iter()
        .map(|f| (f.rule, f.pointer.as_str()))
        .collect()
}

/// `bytes` fires nothing under each of `older` and exactly `rules` under 2026-07-28.
fn assert_fires_only_from_2026(bytes: &[u8], older: &[Revision], rules: &[&str]) {
    for rev in older {
        assert!(fired_under(bytes, rev.clone()).is_empty(), "{rev:?}");
    }
    assert_eq!(fired_under(bytes, Revision::v2026_07_28()), rules);
}

#[test]
fn legacy_not_found_code_is_accepted_before_2026_and_an_error_from_2026() {
    assert_fires_only_from_2026(
        &data("pass/legacy-32002-under-2025-11-25.jsonl"),
        &[Revision::v2025_06_18(), Revision::v2025_11_25()],
        &["not-found-code"],
    );
}

#[test]
fn missing_data_uri_is_an_error_only_from_2026() {
    assert_fires_only_from_2026(
        &exchange(
            READ_A,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found"}}"#,
        ),
        &[Revision::v2025_11_25()],
        &["not-found-code", "not-found-data-uri"],
    );
}

#[test]
fn data_uri_naming_another_uri_fires_in_every_revision() {
    let t = exchange(
        READ_A,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///b"}}}"#,
    );
    let r = check_bytes("t.jsonl", &t, &spec(Revision::v2025_11_25()));
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].rule, "not-found-data-uri");
    assert_eq!(r.findings[0].pointer, "/error/data/uri");
    assert_eq!(
        fired_under(&t, Revision::v2026_07_28()),
        vec!["not-found-code", "not-found-data-uri"]
    );
}

#[test]
fn not_found_message_under_internal_error_code_fires_in_every_revision() {
    let t = exchange(
        READ_A,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Resource file:///a not found"}}"#,
    );
    // The code decides: a message-only not-found is a labelled guess (issue 15).
    assert_eq!(
        fired_under(&t, Revision::v2025_06_18()),
        vec!["not-found-guessed-from-message"]
    );
    assert_eq!(
        fired_under(&t, Revision::v2026_07_28()),
        vec!["not-found-guessed-from-message"]
    );
}

#[test]
fn stateless_era_result_rules_do_not_apply_to_older_revisions() {
    for id in ["result-missing-resultType", "result-missing-cache-hints"] {
        let t = data(&format!("corpus/violations/{id}.jsonl"));
        assert!(fired_under(&t, Revision::v2025_11_25()).is_empty(), "{id}");
        assert_eq!(fired_under(&t, Revision::v2026_07_28()), vec![id]);
    }
    // The same old-style result is fine for 2025-11-25 and fires both rules for 2026-07-28.
    let t = data("pass/old-revision-result-without-resultType.jsonl");
    assert_eq!(
        fired_under(&t, Revision::v2026_07_28()),
        vec!["result-missing-resultType", "result-missing-cache-hints"]
    );
}

#[test]
fn cache_hints_are_required_on_every_cacheable_method_and_no_other() {
    for m in mcptape_check::CACHEABLE_METHODS {
        let t = exchange(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":{{}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","contents":[{"uri":"file:///a","text":""}]}}"#,
        );
        assert_eq!(
            fired_under(&t, Revision::v2026_07_28()),
            vec!["result-missing-cache-hints"],
            "{m}"
        );
    }
    let t = exchange(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}"#,
    );
    assert!(fired_under(&t, Revision::v2026_07_28()).is_empty());
}

#[test]
fn unknown_cache_scope_is_invalid() {
    let t = exchange(
        READ_A,
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":1.5,"cacheScope":"shared","contents":[{"uri":"file:///a","text":"x"}]}}"#,
    );
    let r = check_bytes("t.jsonl", &t, &spec(Revision::v2026_07_28()));
    assert_eq!(
        rules_and_pointers(&r),
        vec![
            ("cache-hints-invalid", "/result/ttlMs"),
            ("cache-hints-invalid", "/result/cacheScope")
        ]
    );
}

/// The revision the rules used, and where it came from.
fn detected(bytes: &[u8], opts: &Options) -> (Revision, RevisionSource) {
    let r = check_bytes("t", bytes, opts);
    (r.revision, r.revision_source)
}

#[test]
fn revision_is_detected_from_initialize() {
    assert_eq!(
        detected(
            &data("corpus/violations/protocol-version-not-offered.jsonl"),
            &Options::default()
        ),
        (Revision::new("2025-06-18"), RevisionSource::Initialize)
    );
}

#[test]
fn revision_is_detected_from_request_meta_after_server_discover() {
    assert_eq!(
        detected(
            &data("pass/discover-then-supported-version.jsonl"),
            &Options::default()
        ),
        (Revision::v2026_07_28(), RevisionSource::RequestMeta)
    );
}

#[test]
fn revision_falls_back_to_header_then_assumed_and_command_line_wins() {
    assert_eq!(
        detected(
            &data("pass/legacy-32002-under-2025-11-25.jsonl"),
            &Options::default()
        ),
        (Revision::v2025_11_25(), RevisionSource::Header)
    );

    let t = transcript(&[(
        "c2s",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )]);
    assert_eq!(
        detected(&t, &Options::default()),
        (Revision::v2026_07_28(), RevisionSource::Assumed)
    );

    assert_eq!(
        detected(&t, &spec(Revision::v2025_06_18())),
        (Revision::v2025_06_18(), RevisionSource::CommandLine)
    );
}

#[test]
fn protocol_version_outside_discover_supported_versions_fires() {
    let bytes = data("pass/discover-then-supported-version.jsonl");
    let text = String::from_utf8(bytes).unwrap();
    // The second request now asks for a revision server/discover did not list.
    let changed = text.replacen(
        r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"hand","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"uri""#,
        r#""io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientInfo":{"name":"hand","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"uri""#,
        1,
    );
    assert_ne!(changed, text);
    let fired = rules_fired(changed.as_bytes(), &Options::default());
    // Not offered by discover, and the header (2026-07-28) no longer matches the body.
    assert_eq!(
        fired,
        vec![
            "protocol-version-not-offered",
            "http-protocol-version-mismatch"
        ]
    );
    let r = check_default(changed.as_bytes());
    assert!(
        r.findings[1]
            .message
            .ends_with("; the server accepted it (HTTP 200) instead of answering 400"),
        "{}",
        r.findings[1].message
    );
    let r = check_default(&data(
        "corpus/violations/http-protocol-version-mismatch.jsonl",
    ));
    assert!(
        r.findings[0]
            .message
            .ends_with("; the server rejected it with HTTP 400, as required")
    );
}

#[test]
fn blob_threshold_at_the_limit_and_one_past() {
    // The violation's blob is 1 MiB + 1 = 1,048,577 decoded bytes.
    let t = data("corpus/violations/blob-over-size-threshold.jsonl");
    let at = |n: u64| Options {
        blob_threshold_bytes: n,
        ..Options::default()
    };
    assert!(rules_fired(&t, &at(1_048_577)).is_empty());
    assert_eq!(
        rules_fired(&t, &at(1_048_576)),
        vec!["blob-over-size-threshold"]
    );
    assert_eq!(
        mcptape_check::DEFAULT_BLOB_THRESHOLD_BYTES,
        1_048_576,
        "the violation file is sized one past the default"
    );
}

/// A stdio transcript whose server prints one notification over `lines`
/// lines, ended by an exit record.
fn split_notification(lines: usize) -> Vec<u8> {
    assert!(lines >= 3);
    let mut s = String::from(STDIO_HEADER);
    s.push('\n');
    let mut body = vec![
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":["#
            .to_owned(),
    ];
    for i in 0..lines - 2 {
        body.push(format!("{i}{}", if i + 3 == lines { "" } else { "," }));
    }
    body.push("]}}".to_owned());
    for (i, l) in body.iter().enumerate() {
        s.push_str(&format!(
            r#"{{"tUs":{i},"kind":"noise","dir":"s2c","line":{}}}"#,
            serde_json::Value::String(l.clone())
        ));
        s.push('\n');
    }
    s.push_str(&exit_record(body.len()));
    s.into_bytes()
}

#[test]
fn pretty_printed_message_over_noise_lines_is_one_embedded_newline_finding() {
    let r = check_default(&split_notification(5));
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].rule, "stdio-embedded-newline");
    assert_eq!(r.findings[0].line, 2);
    assert!(r.findings[0].message.starts_with("5 lines"));
}

#[test]
fn split_message_at_the_line_limit_and_one_past() {
    let r = check_default(&split_notification(MAX_SPLIT_MESSAGE_LINES));
    let fired: Vec<_> = r.findings.iter().map(|f| f.rule).collect();
    assert_eq!(fired, vec!["stdio-embedded-newline"]);

    let r = check_default(&split_notification(MAX_SPLIT_MESSAGE_LINES + 1));
    assert!(
        r.findings
            .iter()
            .all(|f| f.rule == "stdio-non-jsonrpc-line")
    );
    assert_eq!(r.findings.len(), MAX_SPLIT_MESSAGE_LINES + 1);
}

#[test]
fn noise_over_http_is_not_a_stdio_finding() {
    let t = String::from_utf8(data("corpus/violations/stdio-non-jsonrpc-line.jsonl"))
        .unwrap()
        .replacen(r#""transport":"stdio""#, r#""transport":"http""#, 1);
    assert!(rules_fired(t.as_bytes(), &Options::default()).is_empty());
}

#[test]
fn batch_elements_are_checked_with_their_index_in_the_pointer() {
    let t = exchange(
        r#"[{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}},{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///b"}},{"jsonrpc":"2.0","id":null,"method":"ping"}]"#,
        r#"[{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"a"}]}},{"jsonrpc":"2.0","id":2,"result":{"contents":[]}}]"#,
    );
    let r = check_bytes("t", &t, &spec(Revision::v2025_11_25()));
    let got: Vec<(&str, usize, &str)> = r
        .findings
        .iter()
        .map(|f| (f.rule, f.line, f.pointer.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            // 2025-11-25 has no batches: each batch line fires once, its elements are still checked.
            ("jsonrpc-batch-removed", 2, ""),
            ("message-not-jsonrpc", 2, "/2"),
            ("jsonrpc-batch-removed", 3, ""),
            ("read-empty-contents", 3, "/1/result/contents"),
        ]
    );
    assert_eq!(r.messages, 4);
}

#[test]
fn response_id_of_the_other_type_is_a_type_clash_and_leaves_the_request_open() {
    let t = exchange(
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///a"}}"#,
        r#"{"jsonrpc":"2.0","id":"7","result":{"contents":[{"uri":"file:///a","text":"a"}]}}"#,
    );
    let r = check_bytes("t", &t, &spec(Revision::v2025_11_25()));
    let got: Vec<(&str, Option<&str>)> = r
        .findings
        .iter()
        .map(|f| (f.rule, f.request_id.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("request-unanswered", Some("7")),
            ("ids-differ-only-in-type", Some("\"7\"")),
        ]
    );
}

#[test]
fn every_contents_entry_is_judged_not_only_the_first() {
    let t = exchange(
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///d/"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///d/a","text":"a"},{"uri":"file:///d/b","text":"b","blob":"Yg=="},{"text":"c"},{"uri":"file:///d/d","blob":"-_8="}]}}"#,
    );
    let r = check_bytes("t", &t, &spec(Revision::v2025_11_25()));
    assert_eq!(
        rules_and_pointers(&r),
        vec![
            ("contents-text-and-blob", "/result/contents/1"),
            ("contents-missing-uri", "/result/contents/2"),
            ("blob-not-canonical-base64", "/result/contents/3/blob"),
        ]
    );
    assert!(
        r.findings[2].message.contains("at byte 0"),
        "{}",
        r.findings[2].message
    );
}

#[test]
fn non_canonical_base64_forms_are_each_rejected() {
    for (blob, offset) in [
        ("-_8=", 0),
        ("AA", 2),
        ("Zh==", 1),
        ("Zm=g", 3),
        ("aGVs*bG8=", 4),
        ("aGVs\r\nbG8=", 4),
    ] {
        let msg = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"file:///a","blob":{}}}]}}}}"#,
            serde_json::Value::String(blob.to_owned())
        );
        let t = exchange(READ_A, &msg);
        let r = check_bytes("t", &t, &spec(Revision::v2025_11_25()));
        assert_eq!(r.findings.len(), 1, "{blob:?}: {:?}", r.findings);
        assert_eq!(r.findings[0].rule, "blob-not-canonical-base64", "{blob:?}");
        assert!(
            r.findings[0].message.contains(&format!("at byte {offset}")),
            "{blob:?}: {}",
            r.findings[0].message
        );
    }
}

#[test]
fn unknown_allow_rule_is_an_error_not_a_silent_no_op() {
    let opts = Options {
        allow: ["no-such-rule".to_owned()].into(),
        ..Options::default()
    };
    let e = check_paths(&[repo().join("corpus/violations")], &opts).unwrap_err();
    assert!(matches!(e.kind, mcptape_check::CheckErrorKind::UnknownRule));
    assert_eq!(e.path, PathBuf::from("no-such-rule"));
}

#[test]
fn directory_depth_at_the_limit_and_one_past() {
    let tmp = tempfile::tempdir().unwrap();
    let header = format!("{STDIO_HEADER}\n");
    let mut dir = tmp.path().to_owned();
    for i in 0..MAX_DIR_DEPTH {
        dir.push(format!("{i}"));
    }
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("deep.jsonl"), &header).unwrap();
    std::fs::write(dir.join("not-a-transcript.txt"), "x").unwrap();
    let found = collect_transcripts(&[tmp.path().to_owned()]).unwrap();
    assert_eq!(found, vec![dir.join("deep.jsonl")]);

    let deeper = dir.join("one-more");
    std::fs::create_dir(&deeper).unwrap();
    std::fs::write(deeper.join("deeper.jsonl"), &header).unwrap();
    let e = collect_transcripts(&[tmp.path().to_owned()]).unwrap_err();
    assert!(matches!(e.kind, mcptape_check::CheckErrorKind::TooDeep));
}

#[test]
fn directory_without_transcripts_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let e = collect_transcripts(&[tmp.path().to_owned()]).unwrap_err();
    assert!(matches!(
        e.kind,
        mcptape_check::CheckErrorKind::NoTranscripts
    ));
}

#[test]
fn only_a_client_closed_http_stream_cancels_its_request() {
    let t = data("pass/http-stream-closed-by-client-cancels.jsonl");
    assert!(rules_fired(&t, &Options::default()).is_empty());
    // The old free-text noise wording no longer cancels anything.
    let noise = String::from_utf8(t.clone()).unwrap().replace(
        r#""kind":"http","dir":"s2c","http":{"exchange":0,"method":"POST","status":200,"headers":[["content-type","text/event-stream"]]},"note":"clientClosedStream""#,
        r#""kind":"noise","dir":"s2c","line":"HTTP 0 event stream ended: client closed the stream""#,
    );
    assert!(noise.contains("kind\":\"noise"));
    assert_eq!(
        rules_fired(noise.as_bytes(), &Options::default()),
        vec!["request-unanswered"]
    );
    let upstream = String::from_utf8(t.clone())
        .unwrap()
        .replace("\"clientClosedStream\"", "\"serverClosedStream\"");
    assert_ne!(upstream.as_bytes(), t.as_slice(), "the note was replaced");
    assert_eq!(
        rules_fired(upstream.as_bytes(), &Options::default()),
        vec!["request-unanswered"]
    );
}

/// Untrusted input never panics: every 7th prefix of every small violation
/// and near-miss file, and each of them with bytes overwritten (a fixed LCG
/// picks positions and values), goes through the fuzz entry point
/// (`fuzzing::check_transcript`: no panic, findings well-formed, reports render).
#[test]
fn cut_and_corrupted_transcripts_never_panic() {
    let mut files = Vec::new();
    for dir in [
        repo().join("corpus/violations"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pass"),
    ] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "jsonl") {
                let b = std::fs::read(&p).unwrap();
                if b.len() < 4096 {
                    files.push(b);
                }
            }
        }
    }
    assert!(files.len() > 40);
    let mut seed: u64 = 0x6d63_7074_6170_6521;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let mut checked = 0usize;
    for b in &files {
        for cut in (0..=b.len()).step_by(7) {
            mcptape_check::fuzzing::check_transcript(&b[..cut]);
            checked += 1;
        }
        for _ in 0..40 {
            let mut m = b.clone();
            for _ in 0..3 {
                let at = (next() as usize) % m.len();
                const BYTES: &[u8] = b"{}[]\",:\n\r\\0aZ=-_\xff";
                m[at] = BYTES[(next() as usize) % BYTES.len()];
            }
            mcptape_check::fuzzing::check_transcript(&m);
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked}");
}

/// A `ping` request with id `i` (c2s).
fn ping(i: usize) -> (&'static str, String) {
    (
        "c2s",
        format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#),
    )
}

/// An empty result for id `i` (s2c).
fn pong(i: usize) -> (&'static str, String) {
    (
        "s2c",
        format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{}}}}"#),
    )
}

/// `n` pings (ids 0..n), each answered.
fn pings_answered(n: usize) -> Vec<(&'static str, String)> {
    (0..n).flat_map(|i| [ping(i), pong(i)]).collect()
}

/// The transcript of `msgs`.
fn transcript_of(msgs: &[(&'static str, String)]) -> Vec<u8> {
    let refs: Vec<(&str, &str)> = msgs.iter().map(|(d, m)| (*d, m.as_str())).collect();
    transcript(&refs)
}

/// `n` requests (ids 0..n) each answered, then a second answer to id 0.
fn answered_then_answered_again(n: usize) -> Vec<u8> {
    let mut msgs = pings_answered(n);
    msgs.push(pong(0));
    transcript_of(&msgs)
}

/// At the limit every answered request is remembered: a second answer to
/// the first is `request-answered-twice`. One past it the first is forgotten
/// (memory stays bounded by the open requests): the second answer is
/// `response-unknown-id`, and its message says why.
#[test]
fn answered_requests_are_remembered_up_to_the_limit_and_forgotten_one_past() {
    let at = check_default(&answered_then_answered_again(MAX_ANSWERED_KEYS_KEPT));
    let last = at.findings.last().expect("a finding");
    assert_eq!(last.rule, "request-answered-twice");
    assert_eq!(last.record, 2 * MAX_ANSWERED_KEYS_KEPT + 1);
    assert_eq!(last.message, "request 0 (record 1) was already answered");

    let past = check_default(&answered_then_answered_again(MAX_ANSWERED_KEYS_KEPT + 1));
    let last = past.findings.last().expect("a finding");
    assert_eq!(last.rule, "response-unknown-id");
    assert_eq!(last.record, 2 * (MAX_ANSWERED_KEYS_KEPT + 1) + 1);
    assert_eq!(
        last.message,
        "no request with id 0 was sent by the other side (or it was answered before the last 65536 answered requests, the most check remembers)"
    );
    assert!(
        past.findings
            .iter()
            .all(|f| f.rule != "request-answered-twice"),
        "{:?}",
        past.findings.first()
    );
}

/// A key asked again before it is forgotten is remembered from its last
/// answer: the answer leaving the window (the key's first) forgets nothing,
/// so a late duplicate is `request-answered-twice` naming the second
/// request, and an unknown id's message does not say anything was forgotten.
#[test]
fn a_key_asked_again_before_it_is_forgotten_is_remembered_from_its_last_answer() {
    let mut msgs = pings_answered(MAX_ANSWERED_KEYS_KEPT);
    // Asked again while still remembered, answered: the answer that leaves
    // the window now is the key's first one, which no longer stands.
    msgs.extend([ping(0), pong(0), pong(0), pong(1 << 40)]);
    let r = check_default(&transcript_of(&msgs));
    let n = 2 * MAX_ANSWERED_KEYS_KEPT;
    let last: Vec<(&str, usize, &str)> = r
        .findings
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(|f| (f.rule, f.record, f.message.as_str()))
        .collect();
    let twice = format!("request 0 (record {}) was already answered", n + 1);
    assert_eq!(
        last,
        vec![
            ("request-answered-twice", n + 3, twice.as_str()),
            (
                "response-unknown-id",
                n + 4,
                "no request with id 1099511627776 was sent by the other side"
            ),
        ]
    );
}

/// A `resources/read` request whose integer id is past `u64` (2^64), and
/// its answer: (direction, message) records for [`transcript`].
const READ_PAST_U64: (&str, &str) = (
    "c2s",
    r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"resources/read","params":{"uri":"file:///a"}}"#,
);
const READ_PAST_U64_ANSWER: (&str, &str) = (
    "s2c",
    r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{"contents":[{"uri":"file:///a","text":"x"}]}}"#,
);

/// Regression: an integer id past `u64` (`18446744073709551616`: legal
/// JSON-RPC 2.0 §4, which sets no range) was `message-not-jsonrpc`. Its text
/// is now the id end to end: the request pairs with its own answer, the
/// neighbouring `…617` is a different id (`response-unknown-id`, printed
/// exactly, not as a rounded float), and the string `"18446744073709551616"`
/// differs only in type.
#[test]
fn integer_ids_past_u64_are_raw_text_end_to_end() {
    let bytes = transcript(&[
        READ_PAST_U64,
        READ_PAST_U64_ANSWER,
        (
            "s2c",
            r#"{"jsonrpc":"2.0","id":18446744073709551617,"result":{"contents":[]}}"#,
        ),
        (
            "c2s",
            r#"{"jsonrpc":"2.0","id":"18446744073709551616","method":"ping"}"#,
        ),
        (
            "s2c",
            r#"{"jsonrpc":"2.0","id":"18446744073709551616","result":{}}"#,
        ),
    ]);
    let r = check_bytes("t.jsonl", &bytes, &spec(Revision::v2025_11_25()));
    assert_eq!(r.messages, 5);
    let got: Vec<(&str, Option<&str>, &str)> = r
        .findings
        .iter()
        .map(|f| (f.rule, f.request_id.as_deref(), f.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "response-unknown-id",
                Some("18446744073709551617"),
                "no request with id 18446744073709551617 was sent by the other side"
            ),
            (
                "ids-differ-only-in-type",
                Some("\"18446744073709551616\""),
                "request id \"18446744073709551616\" differs only in type from request id 18446744073709551616 (resources/read, record 1)"
            ),
        ]
    );
}

/// The (rule, request id, message) of every finding of `bytes` under 2025-11-25.
fn findings_of(bytes: &[u8]) -> Vec<(&'static str, Option<String>, String)> {
    check_bytes("t.jsonl", bytes, &spec(Revision::v2025_11_25()))
        .findings
        .into_iter()
        .map(|f| (f.rule, f.request_id, f.message))
        .collect()
}

/// Regression (issue 22): `notifications/cancelled` names a request id past
/// `u64` by its digits (it was read as a rounded float and cancelled
/// nothing): the late answer is `response-after-cancel`, printed exactly.
#[test]
fn cancel_of_an_id_past_u64_cancels_that_request() {
    let bytes = transcript(&[
        READ_PAST_U64,
        (
            "c2s",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":18446744073709551616}}"#,
        ),
        READ_PAST_U64_ANSWER,
    ]);
    assert_eq!(
        findings_of(&bytes),
        vec![(
            "response-after-cancel",
            Some("18446744073709551616".to_owned()),
            "response to resources/read 18446744073709551616 (record 1) after its sender cancelled it"
                .to_owned()
        )]
    );
}

/// Regression (issue 22): an id past `u64` inside a batch is its digits too
/// (the masking stopgap only reached single messages): the batch's request
/// pairs with its answer: no pairing rule fires (only `jsonrpc-batch-removed`, once per batch
/// line: the transcript is 2025-11-25, which has no batches).
#[test]
fn batch_element_id_past_u64_pairs_by_its_digits() {
    let bytes = transcript(&[
        (
            "c2s",
            r#"[{"jsonrpc":"2.0","id":99999999999999999999999,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        ),
        (
            "s2c",
            r#"[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":99999999999999999999999,"result":{}}]"#,
        ),
    ]);
    let rules: Vec<_> = findings_of(&bytes)
        .into_iter()
        .map(|f| (f.0, f.1))
        .collect();
    assert_eq!(
        rules,
        vec![
            ("jsonrpc-batch-removed", None),
            ("jsonrpc-batch-removed", None)
        ]
    );
}

/// Ids pair by type and raw text (issue 22): `1` and `"1"` differ only in
/// type, `1.0` is not an id (the envelope refuses it), and `"\u0061"` does
/// not answer `"a"` (a peer echoes the id as it was sent; it is printed as
/// sent).
#[test]
fn ids_pair_by_raw_text_1_string_1_1_0_and_escaped_strings_do_not_pair() {
    let bytes = transcript(&[
        ("c2s", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        ("s2c", r#"{"jsonrpc":"2.0","id":"1","result":{}}"#),
        ("s2c", r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#),
        ("c2s", r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
        ("s2c", r#"{"jsonrpc":"2.0","id":"\u0061","result":{}}"#),
    ]);
    let got = findings_of(&bytes);
    let rules: Vec<_> = got.iter().map(|f| (f.0, f.1.as_deref())).collect();
    assert_eq!(
        rules,
        vec![
            ("request-unanswered", Some("1")),
            ("ids-differ-only-in-type", Some("\"1\"")),
            ("message-not-jsonrpc", None),
            ("request-unanswered", Some("\"a\"")),
            ("response-unknown-id", Some("\"\\u0061\"")),
        ],
        "{got:?}"
    );
    assert_eq!(
        got[1].2,
        "response id \"1\" differs only in type from request id 1 (ping, record 1)"
    );
}

/// A JSON-RPC batch is allowed up to 2025-03-26 and fires `jsonrpc-batch-removed` (once per
/// batch line, pointer empty, an error) from 2025-06-18 on (MCP 2025-06-18 removed batching),
/// whichever peer sent it; a revision detected from the handshake counts the same way.
#[test]
fn jsonrpc_batch_fires_from_2025_06_18_on_not_under_2025_03_26() {
    let batch = exchange(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        r#"[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]"#,
    );
    for rev in Revision::KNOWN {
        let want: &[&str] = if rev < Revision::V2025_06_18 {
            &[]
        } else {
            &["jsonrpc-batch-removed", "jsonrpc-batch-removed"]
        };
        // (2026-07-28 also wants `resultType` in each ping result: not this rule's business.)
        let got: Vec<&str> = fired_under(&batch, rev.clone())
            .into_iter()
            .filter(|r| *r != "result-missing-resultType")
            .collect();
        assert_eq!(got, want, "{rev}");
    }
    let r = check_bytes("t", &batch, &spec(Revision::V2025_06_18));
    let f = &r.findings[1];
    assert_eq!((f.line, f.pointer.as_str()), (3, ""));
    assert_eq!(f.severity, mcptape_check::Severity::Error);
    assert_eq!(
        f.message,
        "the server sent a JSON-RPC batch of 2 messages; revision 2025-06-18 has no batches (removed in 2025-06-18)"
    );

    // Detected: the handshake settles 2025-03-26 (no finding) or 2025-06-18 (one per batch).
    let handshake = |v: &str| {
        transcript(&[
            (
                "c2s",
                &format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
                ),
            ),
            (
                "s2c",
                &format!(
                    r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{v}","capabilities":{{}},"serverInfo":{{"name":"s","version":"1"}}}}}}"#
                ),
            ),
            ("c2s", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            ("s2c", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        ])
    };
    assert_eq!(
        rules_fired(&handshake("2025-03-26"), &Options::default()),
        Vec::<&str>::new()
    );
    let r = check_default(&handshake("2025-06-18"));
    assert_eq!(rules_and_pointers(&r), vec![("jsonrpc-batch-removed", "")]);
    assert_eq!(r.findings[0].line, 4);
    assert_eq!(
        r.findings[0].message,
        "the client sent a JSON-RPC batch of 1 message; revision 2025-06-18 has no batches (removed in 2025-06-18)"
    );
}

/// A stdio transcript of `(tUs, dir, message)` records, then an exit record at `exit_us`.
fn timed(records: &[(u64, &str, &str)], exit_us: u64) -> Vec<u8> {
    let mut s = String::from(STDIO_HEADER);
    s.push('\n');
    for (t, dir, m) in records {
        s.push_str(&format!(
            r#"{{"tUs":{t},"kind":"message","dir":"{dir}","msg":{m}}}"#
        ));
        s.push('\n');
    }
    s.push_str(&format!(
        "{{\"tUs\":{exit_us},\"kind\":\"exit\",\"code\":0}}\n"
    ));
    s.into_bytes()
}

/// 2025-11-25 (the timed transcripts' header names no revision): no result rule of
/// 2026-07-28 fires on their answers.
fn old() -> Options {
    spec(Revision::v2025_11_25())
}

const READ_A_ANSWER: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"x"}]}}"#;

/// Found by a fresh-user trial: a `tUs` of u64::MAX (or any past 30 days) passed check
/// silently, and serve (latency `recorded`) waited on it. At
/// `MAX_RECORDED_T_US` nothing fires; one past it fires once per record so stamped
/// (the exit record too), naming the time and the limit.
#[test]
fn record_time_at_max_recorded_t_us_passes_one_past_and_u64_max_fire() {
    let max = mcptape_transcript::MAX_RECORDED_T_US;
    assert_eq!(max, 30 * 86_400 * 1_000_000);
    let at = timed(
        &[(max - 1, "c2s", READ_A), (max, "s2c", READ_A_ANSWER)],
        max,
    );
    assert_eq!(rules_fired(&at, &old()), Vec::<&str>::new());

    let past = timed(
        &[(max - 1, "c2s", READ_A), (max + 1, "s2c", READ_A_ANSWER)],
        max + 1,
    );
    let r = check_bytes("t.jsonl", &past, &old());
    let got: Vec<_> = r
        .findings
        .iter()
        .map(|f| (f.rule, f.record, f.line, f.severity))
        .collect();
    let e = mcptape_check::Severity::Error;
    assert_eq!(
        got,
        vec![
            ("record-time-beyond-limit", 2, 3, e),
            ("record-time-beyond-limit", 3, 4, e)
        ]
    );
    assert_eq!(
        r.findings[0].message,
        "stamped tUs 2592000000001 µs, beyond MAX_RECORDED_T_US (2592000000000 µs, 30 days since the recording started)"
    );

    // u64::MAX on the answer (the trial's case): the reader keeps it, check names it.
    let huge = timed(&[(5, "c2s", READ_A), (u64::MAX, "s2c", READ_A_ANSWER)], 9);
    let r = check_bytes("t.jsonl", &huge, &old());
    assert_eq!(
        rules_and_pointers(&r),
        vec![("record-time-beyond-limit", "")]
    );
    assert_eq!(r.findings[0].record, 2);
    assert!(
        r.findings[0].message.contains("18446744073709551615"),
        "{}",
        r.findings[0].message
    );
}

/// Found by fresh-user trials: a response stamped before its own request, and progress
/// notifications stamped after their reply (which `serve` then sent after it over stdio and
/// not at all over HTTP), passed check. The recorder never writes a record stamped before the
/// one above it (it stamps under its sink's lock and raises a time earlier than the last
/// record's), so each such record fires an error naming the record above and both times; a
/// record at the very time of the one above fires nothing.
#[test]
fn record_stamped_before_the_record_above_it_fires_naming_both_times() {
    let r = check_bytes(
        "t.jsonl",
        &timed(&[(400, "c2s", READ_A), (50, "s2c", READ_A_ANSWER)], 500),
        &old(),
    );
    assert_eq!(rules_and_pointers(&r), vec![("record-time-backwards", "")]);
    let f = &r.findings[0];
    assert_eq!((f.record, f.line), (2, 3));
    assert_eq!(f.severity, mcptape_check::Severity::Error);
    assert_eq!(
        f.message,
        "stamped tUs 50 µs, 350 µs before the record above it (record 1, tUs 400 µs)"
    );
    // One µs before: fires; the same µs: does not.
    let one_before = timed(&[(400, "c2s", READ_A), (399, "s2c", READ_A_ANSWER)], 500);
    assert_eq!(
        rules_fired(&one_before, &old()),
        vec!["record-time-backwards"]
    );
    let same = timed(&[(400, "c2s", READ_A), (400, "s2c", READ_A_ANSWER)], 500);
    assert_eq!(rules_fired(&same, &old()), Vec::<&str>::new());
    // The trial's file: progress stamped after the reply, out of order among themselves;
    // the exit record before the last message. One finding per step back.
    let progress = |n: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"p","progress":{n}}}}}"#
        )
    };
    let (p1, p2, p3) = (progress(1), progress(2), progress(3));
    let shuffled = timed(
        &[
            (100, "c2s", READ_A),
            (2_100_000, "s2c", &p1),
            (1_100_000, "s2c", &p2),
            (600_000, "s2c", &p3),
            (1_600_000, "s2c", READ_A_ANSWER),
        ],
        1_500_000,
    );
    let r = check_bytes("t.jsonl", &shuffled, &old());
    assert_eq!(
        r.findings
            .iter()
            .map(|f| (f.rule, f.record))
            .collect::<Vec<_>>(),
        vec![
            ("record-time-backwards", 3),
            ("record-time-backwards", 4),
            ("record-time-backwards", 6)
        ],
        "{:?}",
        r.findings
    );
}
