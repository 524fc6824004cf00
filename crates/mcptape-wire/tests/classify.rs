//! Error classification of `resources/read` error responses, one test per code.
//! Inputs: `tests/data/errors/<case>.jsonl` (one JSON-RPC message each).

use mcptape_wire::classify::{ReadErrorClass, classify_read_error};
use mcptape_wire::envelope::{Message, parse_message};

macro_rules! class {
    ($name:literal) => {{
        let line = include_str!(concat!("data/errors/", $name, ".jsonl"));
        match parse_message(line.trim_end().as_bytes()).unwrap() {
            Message::Error(e) => classify_read_error(&e.error),
            m => panic!("not an error response: {m:?}"),
        }
    }};
}

#[test]
fn not_found_2026_is_32602_with_data_uri() {
    assert_eq!(
        class!("not_found_2026_with_data_uri"),
        ReadErrorClass::NotFound {
            uri: "docs://team/platform/policy/on-call-escalation".into(),
            legacy: false
        }
    );
}

#[test]
fn not_found_legacy_32002_flagged_legacy() {
    assert_eq!(
        class!("not_found_legacy_32002"),
        ReadErrorClass::NotFound {
            uri: "docs://team/platform/policy/on-call-escalation".into(),
            legacy: true
        }
    );
}

#[test]
fn legacy_32002_without_data_uri_kept_raw() {
    assert_eq!(
        class!("legacy_32002_without_data_uri"),
        ReadErrorClass::Other { code: -32002 }
    );
}

#[test]
fn invalid_params_without_uri() {
    assert_eq!(
        class!("invalid_params_without_uri"),
        ReadErrorClass::InvalidParams
    );
}

#[test]
fn internal_error_retry_with_backoff() {
    let c = class!("internal_error");
    assert_eq!(c, ReadErrorClass::Internal);
    assert_eq!(c.host_action(), "retry with backoff");
}

#[test]
fn method_not_found() {
    assert_eq!(class!("method_not_found"), ReadErrorClass::MethodNotFound);
}

#[test]
fn code_zero_never_guessed_from_message() {
    assert_eq!(
        class!("code_zero_with_not_found_message"),
        ReadErrorClass::Other { code: 0 }
    );
}

#[test]
fn code_32001_never_guessed_from_message() {
    assert_eq!(
        class!("code_32001_with_not_found_message"),
        ReadErrorClass::Other { code: -32001 }
    );
}
