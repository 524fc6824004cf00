//! Wire limits, each tested at the limit and one past it.

use mcptape_wire::error::{JsonErrorKind, WireErrorKind};
use mcptape_wire::json::check;
use mcptape_wire::limits::{MAX_MESSAGE_BYTES, MAX_NESTING_DEPTH, check_message_size};
use mcptape_wire::resources::{ContentsErrorKind, parse_read_result};

#[test]
fn max_message_bytes_allows_the_seed_160_mb_directory_read() {
    assert_eq!(MAX_MESSAGE_BYTES, 268_435_456);
    // 40 x 3 MB base64 plus generous JSON overhead
    assert!(check_message_size(160_000_000 + 1_000_000).is_ok());
}

#[test]
fn message_size_at_limit_passes() {
    assert!(check_message_size(MAX_MESSAGE_BYTES).is_ok());
    // end to end: a MAX-byte input gets past the size check (and fails on its content, at byte 0)
    let at_limit = vec![0u8; MAX_MESSAGE_BYTES];
    let e = check(&at_limit).unwrap_err();
    assert_eq!(
        e.kind(),
        &JsonErrorKind::Syntax {
            expected: "a value"
        }
    );
    assert_eq!(e.offset(), 0);
}

#[test]
fn message_size_one_past_limit_rejected() {
    let e = check_message_size(MAX_MESSAGE_BYTES + 1).unwrap_err();
    assert_eq!(
        e.kind(),
        &JsonErrorKind::MessageTooLarge {
            len: MAX_MESSAGE_BYTES + 1,
            max: MAX_MESSAGE_BYTES
        }
    );
    assert_eq!(e.offset(), MAX_MESSAGE_BYTES);
    let past = vec![0u8; MAX_MESSAGE_BYTES + 1];
    let e = mcptape_wire::envelope::parse(&past).unwrap_err();
    assert!(matches!(
        e.kind(),
        WireErrorKind::Json(JsonErrorKind::MessageTooLarge { .. })
    ));
    let e = parse_read_result(&past).unwrap_err();
    assert!(matches!(
        e.kind(),
        ContentsErrorKind::Json(JsonErrorKind::MessageTooLarge { .. })
    ));
}

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn nesting_depth_at_limit_passes() {
    assert_eq!(MAX_NESTING_DEPTH, 64);
    assert!(check(nested_arrays(MAX_NESTING_DEPTH).as_bytes()).is_ok());
}

#[test]
fn nesting_depth_one_past_limit_rejected() {
    let e = check(nested_arrays(MAX_NESTING_DEPTH + 1).as_bytes()).unwrap_err();
    assert_eq!(
        e.kind(),
        &JsonErrorKind::NestingTooDeep {
            max: MAX_NESTING_DEPTH
        }
    );
    assert_eq!(e.offset(), MAX_NESTING_DEPTH);
}

/// A read result whose entry `_meta` nests objects so the whole value is `depth` levels deep.
fn result_with_depth(depth: usize) -> String {
    // levels: result(1) contents(2) entry(3) _meta(4) then nested objects
    let inner = depth - 4;
    format!(
        r#"{{"contents":[{{"uri":"a","text":"x","_meta":{}{}}}]}}"#,
        r#"{"k":"#.repeat(inner) + "{",
        "}".repeat(inner + 1)
    )
}

#[test]
fn read_result_nesting_at_limit_parses() {
    let r = parse_read_result(result_with_depth(MAX_NESTING_DEPTH).as_bytes()).unwrap();
    assert_eq!(r.contents.len(), 1);
}

#[test]
fn read_result_nesting_one_past_limit_rejected() {
    let input = result_with_depth(MAX_NESTING_DEPTH + 1);
    let e = parse_read_result(input.as_bytes()).unwrap_err();
    assert_eq!(
        e.kind(),
        &ContentsErrorKind::Json(JsonErrorKind::NestingTooDeep {
            max: MAX_NESTING_DEPTH
        })
    );
    assert_eq!(e.offset(), Some(input.rfind('{').unwrap()));
}
