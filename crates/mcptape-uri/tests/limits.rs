//! Named sanitizer limits, each tested at the limit and one past it.

use mcptape_uri::{MAX_SEGMENTS, MAX_URI_BYTES, Root, SanitizeErrorKind};

#[test]
fn max_uri_bytes_at_the_limit_and_one_past() {
    let root = Root::new("file:///srv/allowed/").unwrap();
    let prefix = "file:///srv/allowed/";
    let at = format!("{prefix}{}", "a".repeat(MAX_URI_BYTES - prefix.len()));
    assert_eq!(at.len(), MAX_URI_BYTES);
    let p = root.resolve(&at).unwrap();
    assert_eq!(p.relative().len(), MAX_URI_BYTES - prefix.len());
    let past = format!("{at}a");
    let e = root.resolve(&past).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (SanitizeErrorKind::TooLong, MAX_URI_BYTES)
    );
}

#[test]
fn max_segments_at_the_limit_and_one_past() {
    let root = Root::new("file:///").unwrap();
    let at = format!("file://{}", "/a".repeat(MAX_SEGMENTS));
    let p = root.resolve(&at).unwrap();
    assert_eq!(p.as_str().matches('/').count(), MAX_SEGMENTS);
    let past = format!("{at}/b");
    let e = root.resolve(&past).unwrap_err();
    assert_eq!(e.kind(), SanitizeErrorKind::TooManySegments);
    assert_eq!(
        e.offset(),
        past.len() - 1,
        "offset of the first segment past the limit"
    );
}

#[test]
fn max_segments_counts_dot_segments_before_removal() {
    let root = Root::new("file:///").unwrap();
    let at = format!("file://{}", "/.".repeat(MAX_SEGMENTS));
    assert_eq!(root.resolve(&at).unwrap().as_str(), "/");
    let past = format!("{at}/.");
    assert_eq!(
        root.resolve(&past).unwrap_err().kind(),
        SanitizeErrorKind::TooManySegments
    );
}

#[test]
fn root_segments_count_towards_max_segments() {
    let root = Root::new("file:///srv/allowed/").unwrap();
    let at = format!("file:///srv/allowed{}", "/a".repeat(MAX_SEGMENTS - 2));
    assert!(root.resolve(&at).is_ok());
    let past = format!("{at}/a");
    assert_eq!(
        root.resolve(&past).unwrap_err().kind(),
        SanitizeErrorKind::TooManySegments
    );
}
