//! `PathStyle::Windows` (bug report of issue 15: `file:///C:/Users/dev/My%20Proj/a.rs`
//! resolved to `/C:/Users/…` and drive letters compared case-sensitively).

use mcptape_uri::{MAX_SEGMENTS, MAX_URI_BYTES, PathStyle, Root, SanitizeErrorKind as K};

fn win(root: &str) -> Root {
    Root::with_style(root, PathStyle::Windows).unwrap()
}

fn kind(root: &Root, uri: &str) -> K {
    root.resolve(uri).unwrap_err().kind()
}

#[test]
fn windows_drive_path_has_no_leading_slash() {
    let root = win("file:///C:/Users/dev/");
    let p = root.resolve("file:///C:/Users/dev/My%20Proj/a.rs").unwrap();
    assert_eq!(p.as_str(), "C:/Users/dev/My Proj/a.rs");
    assert_eq!(p.relative(), "My Proj/a.rs");
    assert_eq!(p.to_uri(), "file:///C:/Users/dev/My%20Proj/a.rs");
    // The canonical form resolves to itself.
    assert_eq!(root.resolve(&p.to_uri()).unwrap(), p);
    // The root itself, and the drive's root.
    assert_eq!(root.resolve("file:///C:/Users/dev").unwrap().relative(), "");
    let drive = win("file:///C:/").resolve("file:///C:/").unwrap();
    assert_eq!(drive.as_str(), "C:/");
    assert_eq!(drive.to_uri(), "file:///C:/");
    // POSIX mode is unchanged.
    let posix = Root::new("file:///C:/Users/dev/").unwrap();
    assert_eq!(
        posix.resolve("file:///C:/Users/dev/a.rs").unwrap().as_str(),
        "/C:/Users/dev/a.rs"
    );
}

#[test]
fn windows_drive_letter_compares_case_insensitively() {
    let root = win("file:///C:/Users/dev/");
    let p = root.resolve("file:///c:/Users/dev/a.rs").unwrap();
    assert_eq!(p.as_str(), "C:/Users/dev/a.rs");
    assert_eq!(win("file:///c:/Users/dev/"), root);
    // Only the drive letter: other segments compare exactly (a miss is a refusal, never an escape).
    assert_eq!(kind(&root, "file:///C:/users/dev/a.rs"), K::EscapesRoot);
    assert_eq!(kind(&root, "file:///D:/Users/dev/a.rs"), K::EscapesRoot);
    // In POSIX mode `c:` and `C:` differ.
    let posix = Root::new("file:///C:/Users/dev/").unwrap();
    assert_eq!(kind(&posix, "file:///c:/Users/dev/a.rs"), K::EscapesRoot);
}

#[test]
fn windows_backslash_and_encoded_backslash_are_separators() {
    let root = win("file:///C:/Users/dev/");
    for uri in [
        r"file:///C:\Users\dev\src\a.rs",
        "file:///C:%5CUsers%5Cdev%5Csrc%5Ca.rs",
        r"file:///C:/Users\dev%5csrc/a.rs",
    ] {
        let p = root.resolve(uri).unwrap();
        assert_eq!(p.as_str(), "C:/Users/dev/src/a.rs", "{uri}");
        assert_eq!(p.relative(), "src/a.rs", "{uri}");
    }
    // `%2F` stays an encoded separator; in POSIX mode `\` and `%5C` stay refused.
    assert_eq!(
        kind(&root, "file:///C:/Users/dev/a%2Fb"),
        K::EncodedSeparator
    );
    let posix = Root::new("file:///srv/").unwrap();
    assert_eq!(kind(&posix, "file:///srv/a%5Cb"), K::EncodedSeparator);
    assert_eq!(kind(&posix, r"file:///srv/a\b"), K::Backslash);
}

#[test]
fn windows_dot_dot_backslash_traversal_is_contained() {
    let traversals = [
        r"file:///C:/Users/dev/..\..\Windows\win.ini",
        "file:///C:/Users/dev/%5C..%5C..%5CWindows",
        r"file:///C:/Users/dev/src/..%5C..\../x",
        r"file:///C:/Users/dev/..\dev2\a.rs",
        "file:///C:/Users/dev/..%5c..%5c..%5c..%5cD:%5cx",
    ];
    let root = win("file:///C:/Users/dev/");
    for uri in traversals {
        let err = root.resolve(uri).unwrap_err();
        assert!(
            // `..\D:\x` climbing to another drive: refused first as a drive letter past the
            // first segment (issue 15 review), before dot segments are removed.
            matches!(
                err.kind(),
                K::EscapesRoot | K::EmptySegment | K::DriveNotFirst
            ),
            "{uri}: {err:?}"
        );
    }
    assert_eq!(
        kind(&root, r"file:///C:/Users/dev/..\..\Windows\win.ini"),
        K::EscapesRoot
    );
    assert_eq!(
        kind(&root, "file:///C:/Users/dev/..%5c..%5c..%5c..%5cD:%5cx"),
        K::DriveNotFirst
    );
    assert_eq!(
        kind(&root, r"file:///C:/Users/dev/..\dev2\a.rs"),
        K::EscapesRoot
    );
    // `..\` that stays inside is fine.
    let p = root.resolve(r"file:///C:/Users/dev/src\..\b.rs").unwrap();
    assert_eq!(p.as_str(), "C:/Users/dev/b.rs");
    // Mixed separators: an empty segment between them is still refused.
    assert_eq!(kind(&root, r"file:///C:/Users/dev/a/\b"), K::EmptySegment);
}

#[test]
fn windows_unc_paths_are_refused() {
    let root = win("file:///C:/Users/dev/");
    assert_eq!(kind(&root, "file://server/share/a.rs"), K::UncPath);
    assert_eq!(kind(&root, r"file://server\share\a.rs"), K::UncPath);
    assert_eq!(kind(&root, "file:////server/share/a.rs"), K::UncPath);
    assert_eq!(kind(&root, "file:///%5C%5Cserver%5Cshare"), K::UncPath);
    assert_eq!(kind(&root, r"file:///\\server\share"), K::UncPath);
    let err = Root::with_style("file://server/share/", PathStyle::Windows).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (K::UncPath, 7));
    // `localhost` is not a UNC host (RFC 8089 §2).
    assert!(root.resolve("file://localhost/C:/Users/dev/a.rs").is_ok());
}

#[test]
fn windows_limits_at_the_limit_and_one_past() {
    let root = win("file:///C:/");
    // Segments: the drive counts as one.
    let at = format!("file:///C:{}", r"\a".repeat(MAX_SEGMENTS - 1));
    assert!(root.resolve(&at).is_ok());
    let past = format!(r"{at}\a");
    assert_eq!(kind(&root, &past), K::TooManySegments);
    // Bytes: a canonical URI of exactly MAX_URI_BYTES, then one more.
    let head = "file:///C:/";
    let at = format!("{head}{}", "a".repeat(MAX_URI_BYTES - head.len()));
    assert_eq!(root.resolve(&at).unwrap().to_uri().len(), MAX_URI_BYTES);
    assert_eq!(kind(&root, &format!("{at}a")), K::TooLong);
}

/// Fresh-user report (session 3): `..%20` resolved to `C:/srv/.. ` in Windows mode, which
/// Windows opens as `C:/srv/..` (trailing dots and spaces are dropped).
#[test]
fn windows_trailing_dot_or_space_segment_is_refused() {
    let root = win("file:///C:/srv/");
    for uri in [
        "file:///C:/srv/..%20",
        "file:///C:/srv/...",
        "file:///C:/srv/secret.txt.",
        "file:///C:/srv/a%20/b",
    ] {
        assert_eq!(kind(&root, uri), K::TrailingDotOrSpace, "{uri}");
    }
    // `.` and `..` are dot segments (removed, then contained), and a dot inside a name is fine.
    assert!(root.resolve("file:///C:/srv/a/../b.txt").is_ok());
    assert!(root.resolve("file:///C:/srv/a.b/c").is_ok());
    // POSIX mode keeps them: `.. ` is an ordinary file name there.
    let posix = Root::new("file:///srv/").unwrap();
    assert!(posix.resolve("file:///srv/..%20").is_ok());
}
