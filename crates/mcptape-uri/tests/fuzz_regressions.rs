//! Regression tests for inputs the `uri_sanitize` fuzz target found (`fuzz/run.sh`); each input
//! is a file under `tests/data/fuzz_regressions/` named after the case, in the fuzz target's
//! format `root \n uri`.

use mcptape_uri::Root;
use mcptape_uri::fuzzing::{Violation, check_sanitize, split_sanitize_input};

/// Asserts the case's input passes `check_sanitize`; a violation fails with its first 400
/// characters (the URIs in these cases are kilobytes long).
fn assert_clean(name: &str) {
    let got = check(name).map_err(|e| e.to_string().chars().take(400).collect::<String>());
    assert_eq!(got, Ok(()), "{name}");
}

fn check(name: &str) -> Result<(), Violation> {
    let path = format!(
        "{}/tests/data/fuzz_regressions/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (root, uri) = split_sanitize_input(&data);
    let root = Root::new(std::str::from_utf8(root).unwrap()).unwrap();
    let uri = std::str::from_utf8(uri).unwrap();
    check_sanitize(&root, uri, &|u| root.resolve(u))
}

/// Found by `uri_sanitize` after 17 s (718,060 execs): a URI under `MAX_URI_BYTES` whose
/// canonical `to_uri()` is longer than `MAX_URI_BYTES` (each raw `[` becomes `%5B`, three bytes),
/// so `resolve(p.to_uri())` fails with `TooLong` and the accepted path is not a fixed point.
/// Root `file:///`, URI `file:///` + 1400 × `[` (1408 bytes; canonical form 4208 bytes).
#[test]
fn uri_sanitize_canonical_uri_exceeds_max_uri_bytes_minimal() {
    assert_clean("uri_sanitize_canonical_uri_exceeds_max_uri_bytes_minimal");
}

/// The same case as libFuzzer wrote it (root `file:/`, `[` runs around `..bar` segments).
#[test]
fn uri_sanitize_canonical_uri_exceeds_max_uri_bytes_libfuzzer() {
    assert_clean("uri_sanitize_canonical_uri_exceeds_max_uri_bytes_libfuzzer");
}

/// The same bug through non-ASCII (RFC 3987 `ucschar`, accepted raw): `é` is 2 bytes raw and
/// `%C3%A9` (6 bytes) in `to_uri()`. Root `file:///`, URI `file:///` + 700 × `é` (1408 bytes;
/// canonical form 4208 bytes). libFuzzer's fork mode found this shape too (10 min, 5 crashes,
/// all `TooLong` on the canonical form).
#[test]
fn uri_sanitize_canonical_uri_exceeds_max_uri_bytes_non_ascii() {
    assert_clean("uri_sanitize_canonical_uri_exceeds_max_uri_bytes_non_ascii");
}

/// Found by CI's `uri_template` fuzz step (10 s, 2,858 execs): `x:{/a*}{?b*}{+c}{#d}` expanded
/// with `c` holding `%2e%2e` matched back with the whole tail in `a`, decoded to `..`; expanding
/// that gives `..` where the URI had `%2e%2e`. Equal URIs under RFC 3986 §6.2.2.2 (a triplet of
/// an unreserved character and the character are the same), so the round trip now compares
/// under that normalization. The input is the committed seed of the same name.
#[test]
fn uri_template_pct_encoded_dot_in_exploded_path_round_trips_up_to_normalization() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/fuzz/uri_template/regression-pct-encoded-dot-in-exploded-path"
    );
    let data = std::fs::read(path).unwrap();
    mcptape_uri::fuzzing::uri_template(&data);
}

/// Found by CI's 10 s `uri_sanitize` run on the merge of the Windows style byte (issue 29):
/// style byte `0x01` (Windows), root `file:///` (the whole filesystem, no drive), URI
/// `file:///C:/`. The input is in the fuzz target's format with its style byte.
#[test]
fn uri_sanitize_windows_root_file_slash_with_drive_uri() {
    let path = format!(
        "{}/tests/data/fuzz_regressions/uri_sanitize_windows_root_file_slash_with_drive_uri",
        env!("CARGO_MANIFEST_DIR")
    );
    let data = std::fs::read(&path).unwrap();
    let (style, root, uri) = mcptape_uri::fuzzing::sanitize_input(&data);
    let root = Root::with_style(std::str::from_utf8(root).unwrap(), style).unwrap();
    let uri = std::str::from_utf8(uri).unwrap();
    assert_eq!(check_sanitize(&root, uri, &|u| root.resolve(u)), Ok(()));
}
