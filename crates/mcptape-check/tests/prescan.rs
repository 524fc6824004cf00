//! The one-pass path (`reader::read_borrowed_with` + `codec::scan_message`,
//! taken for the writer's canonical message lines) gives exactly the findings
//! of the serde path (taken for any other line shape).

use mcptape_check::{Options, check_bytes};

const HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z","protocolVersion":"2025-11-25"}"#;

fn transcript(envelope: &str) -> String {
    let req = r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///d/"}}"#;
    // A PNG declared as JPEG, a blob that is not base64, an entry without uri, a `_meta` after contents.
    let resp = r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///d/a.jpg","mimeType":"image/jpeg","blob":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="},{"uri":"file:///d/b","mimeType":"image/png","blob":"not base64!"},{"text":"x"}],"_meta":{"k":1}}}"#;
    format!(
        "{HEADER}\n{}\n{}\n",
        envelope.replace("T", "1").replace("MSG", req),
        envelope.replace("T", "2").replace("MSG", resp)
    )
}

#[test]
fn canonical_lines_give_the_serde_path_findings() {
    let canonical = transcript(r#"{"tUs":T,"kind":"message","dir":"DIR","msg":MSG}"#);
    let spaced = transcript(r#"{ "tUs": T, "kind": "message", "dir": "DIR", "msg": MSG }"#);
    let fix = |t: String| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        lines[1] = lines[1].replace("DIR", "c2s");
        lines[2] = lines[2].replace("DIR", "s2c");
        lines.join("\n") + "\n"
    };
    let (canonical, spaced) = (fix(canonical), fix(spaced));
    let a = check_bytes("t.jsonl", canonical.as_bytes(), &Options::default());
    let b = check_bytes("t.jsonl", spaced.as_bytes(), &Options::default());
    let rules = |r: &mcptape_check::FileReport| {
        r.findings
            .iter()
            .map(|f| (f.rule, f.line, f.pointer.clone(), f.message.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(rules(&a), rules(&b));
    assert_eq!(a.messages, 2);
    let ids: Vec<&str> = a.findings.iter().map(|f| f.rule).collect();
    assert!(ids.len() >= 3, "{ids:?}");
    assert!(
        a.findings
            .iter()
            .any(|f| f.pointer == "/result/contents/1/blob"),
        "{:?}",
        rules(&a)
    );
}
