//! `mcptape_check::inspect`: the report is a value (camelCase JSON) and its
//! text is what the CLI prints.

use mcptape_check::inspect::{Item, inspect};

const LINES: &str = concat!(
    r#"{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"file:///repo/a.png"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///repo/b"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":8,"result":{"contents":[{"uri":"file:///repo/a.png","mimeType":"image/png","blob":"iVBORw0KGgo="}]}}"#,
    "\n",
);

#[test]
fn report_pairs_sizes_and_unanswered() {
    let r = inspect(LINES.as_bytes(), false);
    assert!(r.paired);
    assert_eq!(r.summary.results, 1);
    assert_eq!(r.summary.entries, 1);
    let Item::ReadResult { line, entries, .. } = &r.items[0] else {
        panic!("{:?}", r.items[0]);
    };
    assert_eq!(*line, 3);
    assert_eq!(entries[0].decoded_bytes, 8);
    assert_eq!(entries[0].encoded_chars, Some(12));
    assert_eq!(entries[0].padding, Some(1));
    assert_eq!(entries[0].sniffed, Some("image/png"));
    assert_eq!(
        r.items[1],
        Item::Unanswered {
            line: 2,
            id: "9".to_owned(),
            uri: Some("file:///repo/b".to_owned())
        }
    );
    assert!(r.clean());
}

#[test]
fn report_serializes_camel_case() {
    let r = inspect(LINES.as_bytes(), false);
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["summary"]["badLines"], 0);
    assert_eq!(v["items"][0]["kind"], "readResult");
    assert_eq!(v["items"][0]["entries"][0]["encodedChars"], 12);
    assert_eq!(v["items"][0]["entries"][0]["mimeType"], "image/png");
}

/// The unanswered scan is a set lookup: 20,000 requests with 19,999 answers
/// leave exactly the one unanswered (the old scan was quadratic).
#[test]
fn many_requests_one_unanswered() {
    let mut s = String::new();
    for i in 0..20_000 {
        s.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"resources/read\",\"params\":{{\"uri\":\"file:///{i}\"}}}}\n"
        ));
    }
    for i in 1..20_000 {
        s.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"contents\":[]}}}}\n"
        ));
    }
    let r = inspect(s.as_bytes(), false);
    let unanswered: Vec<_> = r
        .items
        .iter()
        .filter(|i| matches!(i, Item::Unanswered { .. }))
        .collect();
    assert_eq!(unanswered.len(), 1);
    assert!(matches!(unanswered[0], Item::Unanswered { line: 1, .. }));
}
