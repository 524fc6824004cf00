//! `mcptape uri expand|match|resolve` end to end through the real binary.

use crate::record_support as support;

use support::{assert_has, assert_has_all, words};

/// `mcptape uri ARGS...`: (exit code, stdout, stderr).
fn mcptape(args: &[&str]) -> (i32, String, String) {
    support::mcptape_text(&[&["uri"], args].concat())
}

/// `mcptape uri resolve --root ROOT [--dir DIR] URI`.
fn resolve(root: &str, dir: Option<&str>, uri: &str) -> (i32, String, String) {
    let mut args = vec!["resolve", "--root", root];
    if let Some(dir) = dir {
        args.extend(["--dir", dir]);
    }
    args.push(uri);
    mcptape(&args)
}

/// `mcptape uri match TEMPLATE URI`.
fn uri_match(template: &str, uri: &str) -> (i32, String, String) {
    mcptape(&["match", template, uri])
}

/// `mcptape uri expand TEMPLATE VAR=VALUE...`.
fn expand(template: &str, vars: &[&str]) -> (i32, String, String) {
    let mut args = vec!["expand", template];
    args.extend(vars);
    mcptape(&args)
}

#[test]
fn uri_expand_prints_the_expansion() {
    let (code, out, _) = expand("file:///docs/{+path}{?q}", &["path=a b/c.txt", "q=ü"]);
    assert_eq!(code, 0);
    assert_eq!(out, "file:///docs/a%20b/c.txt?q=%C3%BC\n");
}

#[test]
fn uri_expand_repeated_variable_is_a_list() {
    let (code, out, _) = expand("{/list*}", &["list=red", "list=green"]);
    assert_eq!((code, out.as_str()), (0, "/red/green\n"));
}

#[test]
fn uri_expand_bad_template_names_the_kind() {
    let (code, out, err) = expand("file:///{name", &["name=x"]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "rejected: the template at byte 8: a `{` has no closing `}` (RFC 6570 §2.2)\n"
    );
}

#[test]
fn uri_match_prints_decoded_vars() {
    assert_eq!(
        uri_match("file:///p/{name}", "file:///p/My%20File.txt"),
        (0, "name=My File.txt\n".to_owned(), String::new())
    );
    assert_eq!(
        uri_match("file:///p/{name}", "file:///p/%ZZ"),
        (1, String::new(), "no match\n".to_owned())
    );
}

#[test]
fn uri_resolve_prints_uri_path_and_relative() {
    let (code, out, _) = resolve(
        "file:///srv/allowed/",
        None,
        "file://localhost/srv/allowed/x/%2e%2e/My%20File.txt",
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "uri: file:///srv/allowed/My%20File.txt\npath: /srv/allowed/My File.txt\nrelative: My File.txt\n"
    );
}

#[test]
fn uri_resolve_rejection_exits_nonzero_with_the_kind() {
    let (code, out, err) = resolve("file:///srv/allowed/", None, "file:///srv/allowed_evil/x");
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "rejected: the uri at byte 12: after removing dot segments (RFC 3986 §5.2.4) \
         the path is not inside the root by whole segments (`..` past the root, or a sibling name)\n"
    );
    let (code, _, err) = resolve("file:///srv/allowed/", None, "file:///srv/allowed/%252e");
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "rejected: the uri at byte 20: double encoding: after decoding once, \
             a % still encodes a byte (e.g. %252e)\n"
        )
    );
}

#[test]
fn uri_resolve_with_dir_rejects_a_symlink_escape() {
    let tmp = tempfile::tempdir().unwrap();
    let allowed = tmp.path().join("allowed");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::write(allowed.join("a.txt"), "12345").unwrap();
    std::fs::write(tmp.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink("../secret.txt", allowed.join("link")).unwrap();
    let dir = allowed.to_str().unwrap();
    let (code, out, _) = resolve("file:///r/", Some(dir), "file:///r/a.txt");
    assert_eq!(code, 0);
    assert!(out.ends_with("bytes: 5\n"), "{out}");
    let (code, _, err) = resolve("file:///r/", Some(dir), "file:///r/link");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "rejected: opening {dir}/link: a symlink on the path leads outside the root directory\n"
        )
    );
}

/// The fresh-user report: `--dir` on a directory printed `bytes: 4096` (the
/// inode size) as if it were a readable resource.
#[test]
fn uri_resolve_with_dir_on_a_directory_says_directory_not_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("sub")).unwrap();
    let dir = tmp.path().to_str().unwrap();
    let (code, out, err) = resolve("file:///r/", Some(dir), "file:///r/sub/");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "uri: file:///r/sub\npath: /r/sub\nrelative: sub\nkind: directory\n"
    );
}

/// The fresh-user report: `%2fetc` was rejected as `EmptySegment` and
/// `a%2Fb` was accepted as the two segments `a/b`. An encoded separator is
/// now its own kind.
#[test]
fn uri_resolve_encoded_slash_is_rejected_as_encoded_separator() {
    for (uri, offset) in [
        ("file:///srv/project/%2fetc", 20),
        ("file:///srv/project/a%2Fb", 21),
        ("file:///srv/project/a%5cb", 21),
    ] {
        let (code, out, err) = resolve("file:///srv/project/", None, uri);
        assert_eq!((code, out.as_str()), (1, ""), "{uri}");
        assert_eq!(
            err,
            format!(
                "rejected: the uri at byte {offset}: an encoded path separator \
                 (%2F or %5C): decoded, it would split or join segments\n"
            ),
            "{uri}"
        );
    }
}

/// Template errors print the rule in words, never an enum name or Rust debug formatting.
#[test]
fn uri_match_and_expand_errors_print_the_rule_in_words() {
    let (code, _, err) = expand("file:///{a:0}", &["a=x"]);
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "rejected: the template at byte 11: a prefix modifier that is not 1 to 9999 (RFC 6570 §2.4.1)\n"
        )
    );
}

#[test]
fn match_reserved_expansion_keeps_an_encoded_slash_encoded() {
    let uri = "file:///docs/a/b%2Fc.txt";
    let (code, out, _) = uri_match("file:///docs/{+path}", uri);
    assert_eq!((code, out.as_str()), (0, "path=a/b%2Fc.txt\n"));
    // The printed value expands back to the URI.
    let (code, out, _) = expand("file:///docs/{+path}", &["path=a/b%2Fc.txt"]);
    assert_eq!((code, out.as_str()), (0, "file:///docs/a/b%2Fc.txt\n"));
    // A simple `{name}` would decode `b%2Fc.txt` to `b/c.txt`: refused, with the reason.
    let (code, out, err) = uri_match("file:///docs/a/{name}", uri);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        "no match: the URI fits the template, but name=\"b/c.txt\" decodes to a path traversal (see `mcptape uri match --help`)\n"
    );
}

/// `uri match` then `uri expand` with its output gives the URI back, per operator.
#[test]
fn uri_match_output_expands_back_to_the_uri() {
    for (template, uri, printed) in [
        (
            "file:///docs/{+path}",
            "file:///docs/My%20File/%C3%BC.txt",
            "path=My%20File/%C3%BC.txt",
        ),
        (
            "file:///docs/x{#frag}",
            "file:///docs/x#a/b%2Fc",
            "frag=a/b%2Fc",
        ),
        (
            "file:///docs/{name}",
            "file:///docs/My%20File%E2%82%AC.txt",
            "name=My File€.txt",
        ),
        ("file:///docs{/name}", "file:///docs/50%25", "name=50%"),
        (
            "file:///read{?path}",
            "file:///read?path=a%2Fb%20c",
            "path=a/b c",
        ),
        ("file:///read?a=1{&q}", "file:///read?a=1&q=x%26y", "q=x&y"),
    ] {
        let (code, out, err) = uri_match(template, uri);
        assert_eq!(
            (code, out.as_str()),
            (0, format!("{printed}\n").as_str()),
            "{uri}: {err}"
        );
        let (code, out, _) = expand(template, &[printed]);
        assert_eq!(
            (code, out.as_str()),
            (0, format!("{uri}\n").as_str()),
            "{template}"
        );
    }
}

#[test]
fn uri_match_help_says_which_operators_are_decoded() {
    let (code, help, _) = mcptape(&["match", "--help"]);
    assert_eq!(code, 0);
    // Clap wraps long help: compare with whitespace collapsed.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_has_all(
        &help,
        &[
            "`{+var}` and `{#var}` values are printed as matched, NOT decoded",
            "prints `path=a/b%2Fc.txt`",
            "printed percent-decoded once",
            "gives the URI back",
        ],
    );
}

// Issue 15 bug reports: `mcptape uri match` refuses traversal values, `mcptape uri resolve
// --windows`.

/// `mcptape uri resolve --windows --root ROOT URI`.
fn resolve_windows(root: &str, uri: &str) -> (i32, String, String) {
    mcptape(&["resolve", "--windows", "--root", root, uri])
}

#[test]
fn match_dot_dot_encoded_slash_is_no_match() {
    let (code, out, err) = uri_match("file://docs/{name}", "file://docs/..%2F..%2Fetc%2Fpasswd");
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            "",
            "no match: the URI fits the template, but name=\"../../etc/passwd\" decodes to a path traversal (see `mcptape uri match --help`)\n"
        )
    );
    // A URI that does not fit the template at all says only that.
    let (code, _, err) = uri_match("file://docs/{name}", "http://elsewhere/x");
    assert_eq!((code, err.as_str()), (1, "no match\n"));
    let (code, out, _) = uri_match("file://docs/{name}", "file://docs/My%20File.txt");
    assert_eq!((code, out.as_str()), (0, "name=My File.txt\n"));
}

#[test]
fn match_help_says_traversal_values_are_no_match() {
    let (code, out, _) = mcptape(&["match", "--help"]);
    assert_eq!(code, 0);
    assert_has_all(&out, &["is no match", "..%2F..%2Fetc%2Fpasswd"]);
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
    let (code, out, _) = mcptape(&words(
        "resolve --root file:///C:/Users/dev/ file:///C:/Users/dev/a.rs",
    ));
    assert_eq!(code, 0);
    assert_has(&out, "path: /C:/Users/dev/a.rs\n");
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
    let (code, out, err) = uri_match(template, uri);
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
    let (code, out, _) = uri_match("file:///read{?path}", "file:///read?path=a%2Fb");
    assert_eq!((code, out.as_str()), (0, "path=a/b\n"));
    let (_, help, _) = mcptape(&["match", "--help"]);
    assert_has(&help, "for every operator");
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
    let (code, out, err) = mcptape(&words(
        "resolve --root file:///srv/ file:///srv/%EF%BC%8E%EF%BC%8E%EF%BC%8Fetc/passwd",
    ));
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
    assert_has(&out, "path: C:/proj/console.txt\n");
}
