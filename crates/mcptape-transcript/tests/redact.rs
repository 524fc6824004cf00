//! Redaction: deny-by-default headers, session pseudonyms, JSON pointers,
//! argv credentials and machine paths (issue 15, "No secret kept").

use mcptape_transcript::redact::{
    ArgvRedaction, HeaderTreatment, MAX_PSEUDONYMS, MAX_REDACT_RULES, REDACTED, RedactRuleError,
    RedactRules, Redactor, fold_path,
};
use mcptape_transcript::{
    Direction, Header, HttpMeta, Record, Redaction, ServerSpec, Transport, reader,
    writer::TranscriptWriter,
};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

fn rules(redact: &[&str], keep: &[&str], ptr: &[&str]) -> RedactRules {
    RedactRules {
        redact_headers: s(redact),
        keep_headers: s(keep),
        json_pointers: s(ptr),
    }
}

const CWD: Option<&str> = Some("/work/main");
const HOME: Option<&str> = Some("/root");

/// `line` split at white space: an argv of words without spaces in them.
fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

/// The argv `line` (split by [`words`]) through a default [`Redactor`] with [`CWD`] and [`HOME`].
fn redact_words(line: &str) -> ArgvRedaction {
    Redactor::new().argv(&words(line), CWD, HOME)
}

#[test]
fn mcp_auth_header_is_redacted() {
    let r = Redactor::new();
    assert_eq!(r.header_value("Mcp-Auth", "s3cr3t-value"), REDACTED);
    assert_eq!(r.header_value("mcp-auth", "s3cr3t-value"), REDACTED);
}

#[test]
fn x_upstream_token_header_is_redacted() {
    let r = Redactor::new();
    let mut hs = vec![
        ("X-Upstream-Token".to_owned(), "tok_live_123".to_owned()),
        ("content-type".to_owned(), "application/json".to_owned()),
        ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
    ];
    r.headers(&mut hs);
    assert_eq!(hs[0].1, REDACTED);
    assert_eq!(hs[1].1, "application/json");
    assert_eq!(hs[2].1, "2025-11-25");
}

#[test]
fn every_credential_word_redacts_a_header_in_any_case() {
    let r = Redactor::new();
    for name in [
        "X-AUTH-Thing",
        "x-github-token",
        "X-Api-Key",
        "x-client-secret",
        "Set-Cookie",
        "X-Session",
        "X-Password",
        "X-Amz-Signature",
        "X-Passcode",
        "X-Pin",
        "X-Otp",
        "X-License",
        "X-Client-Cert",
        "X-Pw",
        "X-Sid",
    ] {
        assert_eq!(r.header_value(name, "v4lue"), REDACTED, "{name}");
    }
    for name in [
        "accept",
        "last-event-id",
        "user-agent",
        "keep-alive",
        "host",
    ] {
        assert_eq!(r.header_value(name, "v4lue"), "v4lue", "{name}");
    }
}

#[test]
fn www_authenticate_keeps_its_scheme() {
    let r = Redactor::new();
    assert_eq!(
        r.header_value(
            "WWW-Authenticate",
            "Bearer resource_metadata=\"https://h/.well-known\""
        ),
        "Bearer [redacted]"
    );
}

#[test]
fn mcp_session_id_becomes_a_stable_pseudonym() {
    let r = Redactor::new();
    assert_eq!(
        r.header_treatment("Mcp-Session-Id"),
        HeaderTreatment::Pseudonym
    );
    let a = "9c004f8f-87f5-4973-a34e-23ec3c10e446";
    let b = "64d44094-8c00-4f03-bdb9-8e41f64d06c4";
    assert_eq!(r.header_value("mcp-session-id", a), "[redacted:1]");
    // A clone (another connection of the same transcript) shares pseudonyms.
    let r2 = r.clone();
    assert_eq!(r2.header_value("Mcp-Session-Id", a), "[redacted:1]");
    assert_eq!(r2.header_value("Mcp-Session-Id", b), "[redacted:2]");
    assert_eq!(r.header_value("mcp-session-id", a), "[redacted:1]");
    // A new transcript starts again at 1.
    assert_eq!(
        Redactor::new().header_value("mcp-session-id", b),
        "[redacted:1]"
    );
}

#[test]
fn pseudonyms_stop_at_the_limit_and_stay_redacted() {
    let r = Redactor::new();
    for i in 0..MAX_PSEUDONYMS {
        assert_eq!(
            r.header_value("mcp-session-id", &format!("s{i}")),
            format!("[redacted:{}]", i + 1)
        );
    }
    // One past the limit: still redacted, no longer numbered.
    assert_eq!(r.header_value("mcp-session-id", "one-more"), REDACTED);
    // Values seen before keep their pseudonym.
    assert_eq!(r.header_value("mcp-session-id", "s0"), "[redacted:1]");
}

#[test]
fn keep_header_and_redact_header_override_the_default() {
    let r = Redactor::with_rules(&rules(
        &["X-Tenant"],
        &["mcp-session-id", "X-Request-Key"],
        &[],
    ))
    .unwrap();
    assert_eq!(r.header_value("x-tenant", "acme"), REDACTED);
    assert_eq!(r.header_value("Mcp-Session-Id", "abc"), "abc");
    assert_eq!(r.header_value("x-request-key", "k1"), "k1");
    assert_eq!(
        r.header_value("Authorization", "Bearer t"),
        "Bearer [redacted]"
    );
    let sum = r.summary();
    assert_eq!(sum.redact_headers, s(&["x-tenant"]));
    assert_eq!(sum.keep_headers, s(&["mcp-session-id", "x-request-key"]));
    assert!(sum.pseudonym_headers.is_empty());
}

#[test]
fn header_rules_are_checked() {
    assert_eq!(
        Redactor::with_rules(&rules(&["X-A"], &["x-a"], &[])),
        Err(RedactRuleError::RedactedAndKept { name: "x-a".into() })
    );
    assert_eq!(
        Redactor::with_rules(&rules(&["ok", "bad name"], &[], &[])),
        Err(RedactRuleError::InvalidHeaderName {
            index: 1,
            name: "bad name".into()
        })
    );
    assert!(matches!(
        Redactor::with_rules(&rules(&[""], &[], &[])),
        Err(RedactRuleError::InvalidHeaderName { index: 0, .. })
    ));
}

#[test]
fn rule_count_limit_at_and_one_past() {
    let names: Vec<String> = (0..MAX_REDACT_RULES).map(|i| format!("x-h{i}")).collect();
    let at = RedactRules {
        redact_headers: names.clone(),
        ..RedactRules::default()
    };
    assert!(Redactor::with_rules(&at).is_ok());
    let past = RedactRules {
        redact_headers: names,
        json_pointers: s(&["/a"]),
        ..RedactRules::default()
    };
    assert_eq!(
        Redactor::with_rules(&past),
        Err(RedactRuleError::TooManyRules {
            count: MAX_REDACT_RULES + 1,
            max: MAX_REDACT_RULES
        })
    );
}

#[test]
fn json_pointer_redacts_only_matching_messages() {
    let r = Redactor::with_rules(&rules(
        &[],
        &[],
        &["/params/arguments/password", "/a~1b/~0c"],
    ))
    .unwrap();
    assert!(r.redacts_json());
    let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"login","arguments":{"user":"u","password":"hunter2"}}}"#;
    let (text, matched) = r.json_body(body).unwrap();
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"login","arguments":{"user":"u","password":"[redacted:1]"}}}"#
    );
    assert_eq!(matched, s(&["/params/arguments/password"]));
    // No match: nothing to re-serialize.
    assert_eq!(
        r.json_body(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        None
    );
    // Not JSON: left alone.
    assert_eq!(r.json_body(b"not json"), None);
    // Escaped tokens (RFC 6901 section 4).
    let (text, matched) = r.json_body(br#"{"a/b":{"~c":1,"d":2}}"#).unwrap();
    // A second distinct value gets the next pseudonym.
    assert_eq!(text, r#"{"a/b":{"~c":"[redacted:2]","d":2}}"#);
    assert_eq!(matched, s(&["/a~1b/~0c"]));
    // Already redacted: unchanged, not re-serialized.
    assert_eq!(r.json_body(text.as_bytes()), None);
}

#[test]
fn json_pointer_applies_to_each_batch_member_and_array_indexes() {
    let r = Redactor::with_rules(&rules(&[], &[], &["/params/0", "/params/01"])).unwrap();
    let (text, matched) = r
        .json_body(br#"[{"jsonrpc":"2.0","method":"m","params":["x","y"]},{"jsonrpc":"2.0","method":"n"}]"#)
        .unwrap();
    assert_eq!(
        text,
        r#"[{"jsonrpc":"2.0","method":"m","params":["[redacted:1]","y"]},{"jsonrpc":"2.0","method":"n"}]"#
    );
    // "01" is not an array index (leading zero).
    assert_eq!(matched, s(&["/params/0"]));
}

#[test]
fn bad_json_pointers_are_refused() {
    assert!(matches!(
        Redactor::with_rules(&rules(&[], &[], &["params/x"])),
        Err(RedactRuleError::InvalidPointer {
            index: 0,
            offset: 0,
            ..
        })
    ));
    assert!(matches!(
        Redactor::with_rules(&rules(&[], &[], &["/ok", "/a~2"])),
        Err(RedactRuleError::InvalidPointer {
            index: 1,
            offset: 2,
            ..
        })
    ));
    assert_eq!(
        Redactor::with_rules(&rules(&[], &[], &[""])),
        Err(RedactRuleError::WholeMessagePointer { index: 0 })
    );
}

#[test]
fn disabled_redactor_changes_no_body_or_header() {
    let r = Redactor::disabled();
    assert!(!r.redacts_json());
    assert_eq!(r.header_value("Mcp-Session-Id", "abc"), "abc");
    assert_eq!(r.header_value("X-Upstream-Token", "t"), "t");
    assert_eq!(r.summary(), Redaction::default());
}

#[test]
fn argv_token_value_is_redacted() {
    let a = redact_words("npx -y @acme/mcp-server --token ghp_abc123 --port 3000");
    assert_eq!(
        a.argv,
        words(&format!(
            "npx -y @acme/mcp-server --token {REDACTED} --port 3000"
        ))
    );
    assert_eq!(a.redacted, vec![4]);
}

#[test]
fn argv_api_key_equals_value_is_redacted() {
    let a = redact_words("server --api-key=sk-live-1 --API_KEY=x stdio");
    assert_eq!(
        a.argv,
        words("server --api-key=[redacted] --API_KEY=[redacted] stdio")
    );
    assert_eq!(a.redacted, vec![1, 2]);
}

#[test]
fn argv_password_short_flag_is_redacted() {
    let a = redact_words("mysql-mcp -u root -p hunter2 -h db");
    assert_eq!(
        a.argv,
        words(&format!("mysql-mcp -u root -p {REDACTED} -h db"))
    );
    assert_eq!(a.redacted, vec![4]);
    // `-p=X` too; `-path` (a single-dash long flag) is not `-p`.
    let a = redact_words("x -p=pw -path /tmp/a");
    assert_eq!(a.argv, words("x -p=[redacted] -path /tmp/a"));
}

#[test]
fn argv_env_like_credential_is_redacted() {
    let a = redact_words(
        "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN=ghp_x -e GITHUB_TOOLSETS=repos \
         -e DB_PASSWORD ghcr.io/github/github-mcp-server",
    );
    assert_eq!(a.argv[5], "GITHUB_PERSONAL_ACCESS_TOKEN=[redacted]");
    assert_eq!(a.argv[7], "GITHUB_TOOLSETS=repos");
    // A bare name passes the value from the environment: nothing to redact.
    assert_eq!(a.argv[9], "DB_PASSWORD");
    assert_eq!(a.redacted, vec![5]);
}

#[test]
fn argv_header_and_url_credentials_are_redacted() {
    // Arguments with spaces in them: given one by one.
    let a = Redactor::new().argv(
        &s(&[
            "npx",
            "mcp-remote",
            "https://user:pw@mcp.example.com/sse?token=abc",
            "--header",
            "Authorization: Bearer eyJhbGciOi",
            "--header",
            "X-Trace:1",
        ]),
        CWD,
        HOME,
    );
    assert_eq!(
        a.argv[2],
        "https://[redacted]@mcp.example.com/sse?token=[redacted]"
    );
    assert_eq!(a.argv[4], "Authorization: Bearer [redacted]");
    assert_eq!(a.argv[6], "X-Trace:1");
    assert_eq!(a.redacted, vec![2, 4]);
}

#[test]
fn argv_flag_followed_by_a_flag_or_negated_keeps_the_next_argument() {
    let line = "srv --auth --verbose --no-auth stdio";
    let a = redact_words(line);
    assert_eq!(a.argv, words(line));
    assert!(a.redacted.is_empty());
}

#[test]
fn absolute_paths_are_made_relative() {
    // The shape of corpus/transcripts/everything-stdio.jsonl line 1.
    let a = redact_words(
        "/work/main/.tools/node22/node_modules/node/bin/node \
         /work/main/.tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js \
         stdio",
    );
    assert_eq!(
        a.argv,
        words(
            ".tools/node22/node_modules/node/bin/node \
             .tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio"
        )
    );
    assert_eq!(a.paths, vec![0, 1]);
    assert!(a.redacted.is_empty());
}

#[test]
fn home_paths_are_folded_to_tilde() {
    let r = Redactor::disabled(); // paths are folded even with --no-redact
    let a = r.argv(
        &words(
            "/home/dev/.venv/bin/python --config=/home/dev/proj/mcp.json /work/main \
             /work/mainline/x /usr/bin/env",
        ),
        CWD,
        Some("/home/dev/"),
    );
    assert_eq!(
        a.argv,
        words("~/.venv/bin/python --config=~/proj/mcp.json . /work/mainline/x /usr/bin/env")
    );
    assert_eq!(a.paths, vec![0, 1, 2]);
}

#[test]
fn fold_path_edge_cases() {
    assert_eq!(fold_path("/work/main/a", CWD, HOME), Some("a".into()));
    assert_eq!(fold_path("/work/main//a", CWD, HOME), Some("a".into()));
    assert_eq!(fold_path("/root", CWD, HOME), Some("~".into()));
    assert_eq!(fold_path("relative/p", CWD, HOME), None);
    // A cwd or home of `/` folds nothing (every path would be "relative").
    assert_eq!(fold_path("/etc/passwd", Some("/"), Some("/")), None);
    assert_eq!(fold_path("/etc/passwd", None, None), None);
    // cwd under home: cwd wins.
    assert_eq!(
        fold_path("/home/u/p/x", Some("/home/u/p"), Some("/home/u")),
        Some("x".into())
    );
}

#[test]
fn header_records_what_was_redacted_without_values() {
    let r = Redactor::with_rules(&rules(&["X-Tenant"], &[], &["/params/secret"])).unwrap();
    let argv = r.argv(
        &s(&["/work/main/bin/srv", "--token", "tok-9f8e", "stdio"]),
        CWD,
        HOME,
    );
    let mut header = Header::new(
        Transport::Stdio,
        ServerSpec {
            command: Some(argv.argv.clone()),
            url: None,
        },
        "2026-12-01T00:00:00Z",
    );
    header.redaction = Some(r.summary().with_argv(&argv));
    let w = TranscriptWriter::new(Vec::new(), &header).unwrap();
    let bytes = w.into_inner();
    let line = std::str::from_utf8(&bytes).unwrap();
    assert!(!line.contains("tok-9f8e"), "{line}");
    assert!(!line.contains("/work/"), "{line}");
    assert!(
        line.contains(r#""command":["bin/srv","--token","[redacted]","stdio"]"#),
        "{line}"
    );
    assert!(line.contains(r#""redactHeaders":["x-tenant"]"#), "{line}");
    assert!(
        line.contains(r#""pseudonymHeaders":["mcp-session-id"]"#),
        "{line}"
    );
    assert!(
        line.contains(r#""jsonPointers":["/params/secret"]"#),
        "{line}"
    );
    assert!(
        line.contains(r#""argvValues":[2],"argvPaths":[0]"#),
        "{line}"
    );
    let t = reader::read(&bytes).unwrap();
    assert_eq!(t.header, header);
}

#[test]
fn altered_message_record_names_its_pointers() {
    let header = Header::new(
        Transport::Http,
        ServerSpec::default(),
        "2026-12-01T00:00:00Z",
    );
    let mut w = TranscriptWriter::new(Vec::new(), &header).unwrap();
    let meta = HttpMeta {
        exchange: 0,
        method: Some("POST".into()),
        redacted_pointers: s(&["/params/secret"]),
        ..HttpMeta::default()
    };
    let rec = Record::http_message(
        5,
        Direction::C2s,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"secret":"[redacted]"}}"#,
        meta,
    )
    .unwrap();
    w.write(&rec).unwrap();
    let bytes = w.into_inner();
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(
        text.contains(r#""redactedPointers":["/params/secret"]"#),
        "{text}"
    );
    let t = reader::read(&bytes).unwrap();
    assert_eq!(t.records, vec![rec]);
}

/// Regression (fresh-user trial, 2026-12-05): a `Cookie` header was
/// redacted whole but remembered whole (`session=S; theme=dark`), so the
/// cookie value `S` alone, in a later message or a stderr line, stayed in
/// the clear. Each cookie's value is a known secret now; `dark` is shorter
/// than `MIN_ECHO_SECRET_BYTES` and is not.
#[test]
fn cookie_header_values_are_redacted_where_they_reappear() {
    let r = Redactor::new();
    let mut hs = vec![(
        "Cookie".to_owned(),
        "session=S3cr3tV4lue0123; theme=dark; pref=\"Qu0tedV4lue\"".to_owned(),
    )];
    r.headers(&mut hs);
    assert_eq!(hs[0].1, REDACTED);
    let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":{"q":"S3cr3tV4lue0123","p":"Qu0tedV4lue","style":"dark"}}}"#;
    let (text, _) = r.message_json_from(true, call).unwrap();
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":{"q":"[redacted]","p":"[redacted]","style":"dark"}}}"#
    );
    let (text, pointers) = r
        .message_json_from(
            false,
            br#"{"jsonrpc":"2.0","id":2,"result":{"text":"sid S3cr3tV4lue0123"}}"#,
        )
        .unwrap();
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":2,"result":{"text":"sid [redacted]"}}"#
    );
    assert_eq!(pointers, s(&["/result/text"]));
    assert_eq!(
        r.text("login ok S3cr3tV4lue0123, theme dark"),
        "login ok [redacted], theme dark"
    );
    let known = r.known_secrets();
    assert!(
        !known.iter().any(|k| k == "dark" || k == "theme"),
        "{known:?}"
    );
    // A `Cookie:` header argument in the server's argv, then its echo.
    let r = Redactor::new();
    let a = r.argv(
        &s(&["curl", "-H", "Cookie: session=S3cr3tV4lue0123; theme=dark"]),
        None,
        None,
    );
    assert_eq!(a.argv[2], "Cookie: [redacted]");
    assert_eq!(r.text("sent S3cr3tV4lue0123"), "sent [redacted]");
}

/// Regression (fresh-user trial, 2026-12-05): the value of a `Set-Cookie`
/// header's cookie is a known secret; its attributes (`Path`, `Domain`,
/// `Expires`, `HttpOnly`) are not, so a host name or a date elsewhere is
/// kept.
#[test]
fn set_cookie_value_is_redacted_where_it_reappears_but_not_its_attributes() {
    let r = Redactor::new();
    assert_eq!(
        r.header_value(
            "Set-Cookie",
            "sid=S3tC00kieV4lue; Path=/; HttpOnly; Domain=example.com; Expires=Wed, 21 Oct 2026 07:28:00 GMT"
        ),
        REDACTED
    );
    assert_eq!(
        r.text("client sent S3tC00kieV4lue to example.com on Wed, 21 Oct 2026 07:28:00 GMT"),
        "client sent [redacted] to example.com on Wed, 21 Oct 2026 07:28:00 GMT"
    );
    let (text, _) = r
        .message_json_from(
            true,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{"s":"S3tC00kieV4lue","path":"/"}}}"#,
        )
        .unwrap();
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{"s":"[redacted]","path":"/"}}}"#
    );
    // Kept (`--keep-header set-cookie`) or disabled: nothing is remembered.
    let kept = Redactor::with_rules(&rules(&[], &["set-cookie"], &[])).unwrap();
    assert_eq!(
        kept.header_value("Set-Cookie", "prefs=K3ptV4lue1; Path=/"),
        "prefs=K3ptV4lue1; Path=/"
    );
    assert!(kept.known_secrets().is_empty());
    let off = Redactor::disabled();
    off.header_value("Cookie", "sid=0ffC00kie12");
    assert!(off.known_secrets().is_empty());
}

proptest::proptest! {
    /// Free-text redaction never panics (any UTF-8, multibyte characters
    /// around every pattern) and never leaves a known secret in its output.
    #[test]
    fn text_never_panics_and_never_keeps_a_known_secret(
        line in "([a-zé€ /:=;\"'@?&#.\\-\\[\\]]|token|Bearer |https://|/home/u|SECRET9x){0,40}"
    ) {
        let r = Redactor::new().with_dirs(mcptape_transcript::redact::MachineDirs {
            home: s(&["/home/u"]),
            ..Default::default()
        });
        r.note("SECRET9x");
        let out = r.text(&line);
        proptest::prop_assert!(!out.contains("SECRET9x"), "{out}");
        // A line starting with the home directory has it folded.
        if line.starts_with("/home/u/") || line == "/home/u" {
            proptest::prop_assert!(out.starts_with('~'), "{out}");
        }
    }
}
