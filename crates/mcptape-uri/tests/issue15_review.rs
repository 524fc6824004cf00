//! Regression tests for the issue 15 review: a fragment or query value that is a traversal, the
//! fullwidth `．．／` (NFKC `../`), and Windows alternate data streams, misplaced drive letters
//! and DOS device names.

use mcptape_uri::template::Template;
use mcptape_uri::{PathStyle, Root, SanitizeErrorKind, folds_to_dot_or_separator};

fn win_err(uri: &str) -> (SanitizeErrorKind, usize) {
    let root = Root::with_style("file:///C:/proj/", PathStyle::Windows).unwrap();
    let e = root.resolve(uri).unwrap_err();
    (e.kind(), e.offset())
}

fn traversal(template: &str, uri: &str) -> Vec<(String, String)> {
    let t = Template::parse(template).unwrap();
    assert_eq!(t.match_uri(uri), None, "{template} ~ {uri}");
    t.traversal_rejections(uri)
}

#[test]
fn fragment_dot_dot_is_no_match() {
    assert_eq!(
        traversal("file://docs/x{#frag}", "file://docs/x#../../etc"),
        [("frag".to_owned(), "../../etc".to_owned())]
    );
    // A fragment that is no path trick still matches, `/` and all.
    let t = Template::parse("file://docs/x{#frag}").unwrap();
    assert_eq!(
        t.match_uri("file://docs/x#sec/2").unwrap().get_str("frag"),
        Some("sec/2")
    );
}

#[test]
fn query_encoded_dot_dot_slash_is_no_match() {
    assert_eq!(
        traversal(
            "file:///read{?path}",
            "file:///read?path=..%2F..%2Fetc%2Fpasswd"
        ),
        [("path".to_owned(), "../../etc/passwd".to_owned())]
    );
    assert_eq!(
        traversal("file:///read{?path}", "file:///read?path=%2Fetc%2Fpasswd"),
        [("path".to_owned(), "/etc/passwd".to_owned())]
    );
    assert_eq!(
        traversal(
            "file:///read?a=1{&path}",
            "file:///read?a=1&path=a%2F..%2F..%2Fb"
        ),
        [("path".to_owned(), "a/../../b".to_owned())]
    );
    let t = Template::parse("file:///read{?path}").unwrap();
    assert_eq!(
        t.match_uri("file:///read?path=a%2Fb.txt")
            .unwrap()
            .get_str("path"),
        Some("a/b.txt")
    );
}

#[test]
fn fullwidth_dot_dot_slash_is_no_match_for_every_operator() {
    for (tpl, uri) in [
        (
            "file://docs/{name}",
            "file://docs/%EF%BC%8E%EF%BC%8E%EF%BC%8F",
        ),
        (
            "file://docs/{+path}",
            "file://docs/%EF%BC%8E%EF%BC%8E%EF%BC%8Fetc",
        ),
        (
            "file://docs/x{?path}",
            "file://docs/x?path=%EF%BC%8E%EF%BC%8E%EF%BC%8F",
        ),
        ("file://docs/x{#frag}", "file://docs/x#%EF%BC%8E%EF%BC%8E"),
    ] {
        let why = traversal(tpl, uri);
        assert_eq!(why.len(), 1, "{tpl} ~ {uri}: {why:?}");
        assert!(why[0].1.starts_with("．．"), "{why:?}");
    }
}

#[test]
fn fullwidth_dot_dot_slash_is_refused_in_every_style() {
    let uri = "file:///srv/%EF%BC%8E%EF%BC%8E%EF%BC%8Fetc/passwd";
    for style in [PathStyle::Posix, PathStyle::Windows] {
        let root = Root::with_style("file:///srv/", style).unwrap();
        let e = root.resolve(uri).unwrap_err();
        assert_eq!(
            (e.kind(), e.offset()),
            (SanitizeErrorKind::CompatibilityDotOrSeparator, 12),
            "{style:?}"
        );
    }
    // Raw (not percent-encoded) too, and the fullwidth reverse solidus and the two-dot leader.
    let root = Root::new("file:///srv/").unwrap();
    for uri in ["file:///srv/．．／x", "file:///srv/a＼b", "file:///srv/‥/x"] {
        assert_eq!(
            root.resolve(uri).unwrap_err().kind(),
            SanitizeErrorKind::CompatibilityDotOrSeparator,
            "{uri}"
        );
    }
    // Other non-ASCII stays accepted.
    assert_eq!(
        root.resolve("file:///srv/%C3%BC%E2%80%A2.txt")
            .unwrap()
            .as_str(),
        "/srv/ü•.txt"
    );
}

/// Every character whose NFKC form (Unicode 14, Python `unicodedata`) differs from it and holds
/// `.`, `/` or `\`, and no other, over the whole code space.
#[test]
fn compat_table_is_every_nfkc_dot_or_separator() {
    const NFKC_DOT_OR_SEPARATOR: [u32; 38] = [
        0x2024, 0x2025, 0x2026, 0x2100, 0x2101, 0x2105, 0x2106, 0x2488, 0x2489, 0x248a, 0x248b,
        0x248c, 0x248d, 0x248e, 0x248f, 0x2490, 0x2491, 0x2492, 0x2493, 0x2494, 0x2495, 0x2496,
        0x2497, 0x2498, 0x2499, 0x249a, 0x249b, 0x33c2, 0x33c7, 0x33d8, 0xfe19, 0xfe30, 0xfe52,
        0xfe68, 0xff0e, 0xff0f, 0xff3c, 0x1f100,
    ];
    let refused: Vec<u32> = (0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| folds_to_dot_or_separator(c))
        .map(u32::from)
        .collect();
    let mut want = NFKC_DOT_OR_SEPARATOR.to_vec();
    want.sort_unstable();
    want.dedup();
    assert_eq!(refused, want);
    assert!(!folds_to_dot_or_separator('.') && !folds_to_dot_or_separator('/'));
}

#[test]
fn windows_alternate_data_stream_is_refused() {
    // (uri, byte offset of the refused segment)
    for (uri, at) in [
        ("file:///C:/proj/a.rs::$DATA", 16),
        ("file:///C:/proj/sub/c:x", 20),
    ] {
        let want = (SanitizeErrorKind::AlternateDataStream, at);
        assert_eq!(win_err(uri), want, "{uri}");
    }
    // Encoded, the same.
    assert_eq!(
        win_err("file:///C:/proj/a.rs%3A%3A%24DATA").0,
        SanitizeErrorKind::AlternateDataStream
    );
    // POSIX reads `:` as a plain character.
    let posix = Root::new("file:///proj/").unwrap();
    assert_eq!(
        posix
            .resolve("file:///proj/a.rs::$DATA")
            .unwrap()
            .relative(),
        "a.rs::$DATA"
    );
}

#[test]
fn windows_drive_letter_not_first_is_refused() {
    // (uri, byte offset of the refused segment); the second even where `..` would remove it
    // again.
    for (uri, at) in [
        ("file:///C:/proj/sub/C:/Windows", 20),
        ("file:///C:/proj/d:/../a.rs", 16),
    ] {
        assert_eq!(
            win_err(uri),
            (SanitizeErrorKind::DriveNotFirst, at),
            "{uri}"
        );
    }
    let root = Root::with_style("file:///C:/proj/", PathStyle::Windows).unwrap();
    assert_eq!(
        root.resolve("file:///c:/proj/a.rs").unwrap().as_str(),
        "C:/proj/a.rs"
    );
}

#[test]
fn windows_reserved_device_names_are_refused() {
    for seg in [
        "CON",
        "con",
        "aux.txt",
        "NUL",
        "nul.tar.gz",
        "Nul%20.txt",
        "COM1",
        "com9.log",
        "LPT1",
        "lpt0",
        "PRN.x",
        "COM%C2%B9",
        "CONIN$",
        "conout$.txt",
    ] {
        let uri = format!("file:///C:/proj/sub/{seg}");
        assert_eq!(
            win_err(&uri),
            (SanitizeErrorKind::ReservedDeviceName, 20),
            "{seg}"
        );
    }
    let root = Root::with_style("file:///C:/proj/", PathStyle::Windows).unwrap();
    for ok in [
        "console",
        "COM10",
        "auxiliary.txt",
        "a.con",
        "LPT",
        "nul_x",
        "CONIN",
    ] {
        let uri = format!("file:///C:/proj/{ok}");
        assert!(root.resolve(&uri).is_ok(), "{ok}");
    }
    // POSIX has no device names.
    let posix = Root::new("file:///proj/").unwrap();
    assert!(posix.resolve("file:///proj/CON").is_ok());
}

#[test]
fn new_kinds_have_names_and_explanations() {
    for (k, name) in [
        (
            SanitizeErrorKind::CompatibilityDotOrSeparator,
            "CompatibilityDotOrSeparator",
        ),
        (
            SanitizeErrorKind::AlternateDataStream,
            "AlternateDataStream",
        ),
        (SanitizeErrorKind::DriveNotFirst, "DriveNotFirst"),
        (SanitizeErrorKind::ReservedDeviceName, "ReservedDeviceName"),
    ] {
        assert_eq!(k.as_str(), name);
        assert!(k.explain().len() > 40, "{name}");
    }
}
