//! Media-type sniffing against the declared `mimeType`.

use mcptape_wire::media::{DEFAULT_BLOB_MIME_TYPE, MediaMatch, sniff, text_is_data_uri, verdict};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";
const JPEG: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0";

#[test]
fn sniff_png_and_jpeg() {
    assert_eq!(sniff(PNG), Some("image/png"));
    assert_eq!(sniff(JPEG), Some("image/jpeg"));
    assert_eq!(sniff(b"# just markdown\n"), None);
    assert_eq!(sniff(b""), None);
}

#[test]
fn jpeg_bytes_declared_png_is_mismatch() {
    let v = verdict(Some("image/png"), JPEG);
    assert_eq!(v.status, MediaMatch::Mismatch);
    assert_eq!(v.sniffed, Some("image/jpeg"));
    assert_eq!(v.declared.as_deref(), Some("image/png"));
    assert!(!v.defaulted);
}

#[test]
fn png_declared_png_matches_ignoring_case_and_params() {
    assert_eq!(verdict(Some("image/png"), PNG).status, MediaMatch::Match);
    assert_eq!(
        verdict(Some("IMAGE/PNG; x=y"), PNG).status,
        MediaMatch::Match
    );
}

#[test]
fn declared_but_unknown_signature_is_unverified() {
    assert_eq!(
        verdict(Some("application/x-thing"), b"\x01\x02\x03").status,
        MediaMatch::Unverified
    );
}

#[test]
fn missing_mime_type_defaults_to_octet_stream_marked_defaulted() {
    let v = verdict(None, b"\xde\xad\xbe\xef");
    assert_eq!(v.status, MediaMatch::Undeclared);
    assert_eq!(v.effective, DEFAULT_BLOB_MIME_TYPE);
    assert_eq!(v.effective, "application/octet-stream");
    assert!(v.defaulted);
    assert_eq!(v.declared, None);
}

#[test]
fn missing_mime_type_still_reports_sniffed_type() {
    let v = verdict(None, PNG);
    assert_eq!(v.sniffed, Some("image/png"));
    assert!(v.defaulted);
}

#[test]
fn data_uri_in_text_is_flagged() {
    assert!(text_is_data_uri("data:image/png;base64,iVBORw0KGgo="));
    assert!(text_is_data_uri("  DATA:;BASE64,AAAA"));
    assert!(!text_is_data_uri("data:text/plain,hello"));
    assert!(!text_is_data_uri(
        "# notes about data:image/png;base64, URIs"
    ));
    assert!(!text_is_data_uri("data:"));
}
