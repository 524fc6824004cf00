//! A matched value that decodes to a path traversal is no match (bug report
//! of issue 15: `file://docs/{name}` matched `..%2F..%2Fetc%2Fpasswd` as
//! `name=../../etc/passwd`).

use mcptape_uri::template::Template;

fn matched(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    Template::parse(template).unwrap().match_uri(uri).map(|v| {
        v.iter()
            .map(|(k, v)| (k.to_owned(), format!("{v:?}")))
            .collect()
    })
}

fn one(template: &str, uri: &str) -> Option<String> {
    let t = Template::parse(template).unwrap();
    let vars = t.match_uri(uri)?;
    let name = t.var_names().next().unwrap().to_owned();
    vars.get_str(&name).map(str::to_owned)
}

/// Every URI in `uris` is no match for `template`.
fn assert_no_match(template: &str, uris: &[&str]) {
    for uri in uris {
        assert_eq!(matched(template, uri), None, "{template} ~ {uri}");
    }
}

/// `uri` matches `template` with its one variable decoded to `want`.
fn assert_one(template: &str, uri: &str, want: &str) {
    assert_eq!(
        one(template, uri).as_deref(),
        Some(want),
        "{template} ~ {uri}"
    );
}

#[test]
fn match_dot_dot_encoded_slash_is_no_match() {
    assert_no_match(
        "file://docs/{name}",
        &[
            "file://docs/..%2F..%2Fetc%2Fpasswd",
            "file://docs/a%2Fb",
            "file://docs/a%5Cb",
        ],
    );
    // The near miss still matches, decoded.
    assert_one(
        "file://docs/{name}",
        "file://docs/My%20File.txt",
        "My File.txt",
    );
}

#[test]
fn match_value_decoding_to_dot_or_dot_dot_is_no_match() {
    assert_no_match(
        "file://docs/{name}",
        &[
            "file://docs/..",
            "file://docs/%2e%2e",
            "file://docs/.%2E",
            "file://docs/.",
            "file://docs/%2e",
        ],
    );
    // Dots inside a name are an ordinary name; dots and spaces only are not (Windows drops
    // trailing dots and spaces: `...` and `.. ` open `.` and `..`).
    assert_one("file://docs/{name}", "file://docs/a..b", "a..b");
    assert_no_match(
        "file://docs/{name}",
        &["file://docs/...", "file://docs/..%20", "file://docs/.%20."],
    );
    // Every operator: `{/x}` and `{?x}` too.
    assert_no_match("file://docs{/name}", &["file://docs/%2E%2E"]);
    assert_no_match("file://docs{?name}", &["file://docs?name=.."]);
}

#[test]
fn match_reserved_value_with_dot_dot_segment_is_no_match() {
    assert_no_match(
        "file:///{+path}",
        &[
            "file:///a/../../etc/passwd",
            "file:///a/%2e%2e/b",
            "file:///a/./b",
        ],
    );
    assert_one("file:///{+path}", "file:///a/b..c/d", "a/b..c/d");
}

/// A query value is not a path segment: a decoded `/` is data there.
#[test]
fn match_query_value_may_hold_an_encoded_slash() {
    assert_one("file://docs/x{?q}", "file://docs/x?q=a%2Fb", "a/b");
}

/// Fresh-user report (session 3): `uri match` passed values `uri resolve` refuses.
#[test]
fn match_refuses_what_resolve_refuses_absolute_drive_control_double_encoding() {
    // `{+path}` starting with `/` is an absolute path: joined to a root, it replaces it.
    assert_no_match(
        "file://docs/{+path}",
        &[
            "file://docs//etc/passwd",
            "file://docs/%5Cwindows",
            "file://docs/a//b",
            "file://docs/C:%5Cwindows",
            "file://docs/C:/windows",
            "file://docs/a/..%00/b",
            "file://docs/a/b%252e%252e",
        ],
    );
    assert_no_match(
        "file://docs/{name}",
        &[
            "file://docs/a%00b",
            "file://docs/a%0Ab",
            "file://docs/%252e%252e%252F",
            "file://docs/c:secret",
        ],
    );
    // Near misses still match.
    assert_one("file://docs/{+path}", "file://docs/a/b/", "a/b/");
    assert_one(
        "file://docs/{+path}",
        "file://docs/src/lib.rs",
        "src/lib.rs",
    );
    assert_one("file://docs/{name}", "file://docs/100%25", "100%");
    assert_one("file://docs/{name}", "file://docs/ab%3Ac", "ab:c");
}
