//! `mcptape uri match` refuses traversal values and `mcptape uri resolve --windows`
//! (issue 15 bug reports), through the real binary.

use crate::record_support as support;

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

/// `mcptape uri match TEMPLATE URI` on a value that is a traversal: exit 1, the variable named.
fn assert_traversal_no_match(template: &str, uri: &str, var: &str) {
    let (code, out, err) = mcptape(&["match", template, uri]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            format!(
                "no match: the URI fits the template, but {var} decodes to a path traversal (see `mcptape uri match --help`)\n"
            )
            .as_str()
        ),
        "{template} ~ {uri}"
    );
}

#[test]
fn match_fragment_dot_dot_is_no_match() {
    assert_traversal_no_match(
        "file://docs/x{#frag}",
        "file://docs/x#../../etc",
        "frag=\"../../etc\"",
    );
}

#[test]
fn match_query_encoded_dot_dot_slash_is_no_match() {
    assert_traversal_no_match(
        "file:///read{?path}",
        "file:///read?path=..%2F..%2Fetc%2Fpasswd",
        "path=\"../../etc/passwd\"",
    );
    // A query value that is no path trick still matches, `/` and all.
    let (code, out, _) = mcptape(&["match", "file:///read{?path}", "file:///read?path=a%2Fb"]);
    assert_eq!((code, out.as_str()), (0, "path=a/b\n"));
    let (_, help, _) = mcptape(&["match", "--help"]);
    assert!(help.contains("for every operator"), "{help}");
}

#[test]
fn match_fullwidth_dot_dot_slash_is_no_match() {
    assert_traversal_no_match(
        "file://docs/{name}",
        "file://docs/%EF%BC%8E%EF%BC%8E%EF%BC%8F",
        "name=\"．．／\"",
    );
}

#[test]
fn resolve_fullwidth_dot_dot_slash_is_refused() {
    let (code, out, err) = mcptape(&[
        "resolve",
        "--root",
        "file:///srv/",
        "file:///srv/%EF%BC%8E%EF%BC%8E%EF%BC%8Fetc/passwd",
    ]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with("rejected: the uri at byte 12: a character that Unicode NFKC folds"),
        "{err}"
    );
}

/// `uri resolve --windows` of `uri` below `file:///C:/proj/`: exit 1 and the explanation.
fn assert_windows_refused(uri: &str, offset: usize, explain_start: &str) {
    let (code, out, err) = resolve_windows("file:///C:/proj/", uri);
    assert_eq!((code, out.as_str()), (1, ""), "{uri}: {err}");
    let want = format!("rejected: the uri at byte {offset}: {explain_start}");
    assert!(err.starts_with(&want), "{uri}: {err}");
}

#[test]
fn resolve_windows_refuses_alternate_data_stream() {
    let ads = "a `:` in a segment other than the leading drive letter";
    assert_windows_refused("file:///C:/proj/a.rs::$DATA", 16, ads);
    assert_windows_refused("file:///C:/proj/sub/c:x", 20, ads);
}

#[test]
fn resolve_windows_refuses_drive_letter_not_first() {
    assert_windows_refused(
        "file:///C:/proj/sub/C:/Windows",
        20,
        "a drive letter (`C:`) that is not the first segment",
    );
}

#[test]
fn resolve_windows_refuses_dos_device_names() {
    for seg in [
        "CON",
        "aux.txt",
        "NUL",
        "COM1",
        "LPT1",
        "nul.tar.gz",
        "Com1.Log",
    ] {
        assert_windows_refused(&format!("file:///C:/proj/{seg}"), 16, "a DOS device name");
    }
    // Not a device name: resolved.
    let (code, out, _) = resolve_windows("file:///C:/proj/", "file:///C:/proj/console.txt");
    assert_eq!(code, 0);
    assert!(out.contains("path: C:/proj/console.txt\n"), "{out}");
}
