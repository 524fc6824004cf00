//! `mcptape uri match` refuses traversal values and `mcptape uri resolve --windows`
//! (issue 15 bug reports), through the real binary.

#[path = "record_support/mod.rs"]
mod support;

/// `mcptape uri ARGS...`: (exit code, stdout, stderr).
fn mcptape(args: &[&str]) -> (i32, String, String) {
    support::mcptape_text(&[&["uri"], args].concat())
}

/// `mcptape uri resolve --windows --root ROOT URI`.
fn resolve_windows(root: &str, uri: &str) -> (i32, String, String) {
    mcptape(&["resolve", "--windows", "--root", root, uri])
}

#[test]
fn match_dot_dot_encoded_slash_is_no_match() {
    let (code, out, err) = mcptape(&[
        "match",
        "file://docs/{name}",
        "file://docs/..%2F..%2Fetc%2Fpasswd",
    ]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            "no match: the URI fits the template, but name=\"../../etc/passwd\" decodes to a path traversal (see `mcptape uri match --help`)\n"
        )
    );
    // A URI that does not fit the template at all says only that.
    let (code, _, err) = mcptape(&["match", "file://docs/{name}", "http://elsewhere/x"]);
    assert_eq!((code, err.as_str()), (1, "no match\n"));
    let (code, out, _) = mcptape(&["match", "file://docs/{name}", "file://docs/My%20File.txt"]);
    assert_eq!((code, out.as_str()), (0, "name=My File.txt\n"));
}

#[test]
fn match_help_says_traversal_values_are_no_match() {
    let (code, out, _) = mcptape(&["match", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("is no match"), "{out}");
    assert!(out.contains("..%2F..%2Fetc%2Fpasswd"), "{out}");
}

#[test]
fn resolve_windows_drive_path_without_leading_slash() {
    let (code, out, err) = resolve_windows(
        "file:///c:/Users/dev/",
        "file:///C:/Users/dev/My%20Proj/a.rs",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "uri: file:///C:/Users/dev/My%20Proj/a.rs\npath: C:/Users/dev/My Proj/a.rs\nrelative: My Proj/a.rs\n"
    );
    // Without --windows: the POSIX reading, as before.
    let (code, out, _) = mcptape(&[
        "resolve",
        "--root",
        "file:///C:/Users/dev/",
        "file:///C:/Users/dev/a.rs",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("path: /C:/Users/dev/a.rs\n"), "{out}");
}

#[test]
fn resolve_windows_refuses_backslash_traversal_and_unc() {
    let (code, _, err) = resolve_windows(
        "file:///C:/Users/dev/",
        r"file:///C:/Users/dev/..\..\Windows\win.ini",
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("rejected: the uri at byte ")
            && err.contains("after removing dot segments"),
        "{err}"
    );
    let (code, _, err) = resolve_windows("file:///C:/Users/dev/", "file://server/share/a.rs");
    assert_eq!(code, 1);
    assert!(
        err.starts_with(r"rejected: the uri at byte 7: a UNC path (\\server\share"),
        "{err}"
    );
}
