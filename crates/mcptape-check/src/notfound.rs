//! Which resources/read error responses are a "resource not found", decided
//! by the code (MCP 2026-07-28 server/resources#error-handling, SEP-2164:
//! -32602 Invalid Params with `data.uri`; 2025-06-18 / 2025-11-25: -32002),
//! and which only *say* so in their message (a guess, reported by the
//! labelled warning `not-found-guessed-from-message`, never mapped to the
//! not-found rules).

use mcptape_wire::envelope::ErrorObject;

use crate::wireview;

/// How a resources/read error object reads as "resource not found".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotFound {
    /// By code: -32602 with a `data.uri` member (SEP-2164).
    InvalidParams,
    /// By code: the legacy -32002 (2025-06-18 / 2025-11-25).
    Legacy,
    /// Only by message text: this code (another code, or -32602 without
    /// `data.uri`) with a message that says the resource was not found.
    Guessed(i64),
}

/// JSON-RPC -32602 Invalid Params (JSON-RPC 2.0 §5.1).
const INVALID_PARAMS: i64 = -32602;

/// Classifies a resources/read `error` object: by code first
/// ([`wireview::not_found`], which reads `mcptape_wire::classify`), then a
/// message that says "not found" under a code that does not is
/// [`NotFound::Guessed`]. `None` when it is not a not-found answer at all (a
/// malformed-uri -32602, an internal error whose message says nothing of the
/// kind, a missing or non-integer code).
pub(crate) fn classify(err: &ErrorObject) -> Option<NotFound> {
    let code = err.code;
    Some(match wireview::not_found(err)? {
        wireview::NotFound::Legacy => NotFound::Legacy,
        wireview::NotFound::InvalidParams if has_data_uri(err) => NotFound::InvalidParams,
        wireview::NotFound::InvalidParams => NotFound::Guessed(INVALID_PARAMS),
        wireview::NotFound::OtherCode(_) => NotFound::Guessed(code),
    })
}

/// Whether the error carries a `data.uri` member (of any type: a non-string
/// one is reported by `not-found-data-uri`).
fn has_data_uri(err: &ErrorObject) -> bool {
    err.data.as_ref().and_then(|d| d.get("uri")).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn code_decides_and_message_only_guesses() {
        let c = |v: Value| {
            classify(&ErrorObject {
                code: v["code"].as_i64().unwrap(),
                message: v["message"].as_str().unwrap().to_owned(),
                data: v.get("data").cloned(),
            })
        };
        assert_eq!(
            c(json!({"code": -32602, "message": "x", "data": {"uri": "file:///a"}})),
            Some(NotFound::InvalidParams)
        );
        assert_eq!(
            c(json!({"code": -32002, "message": "gone"})),
            Some(NotFound::Legacy)
        );
        assert_eq!(
            c(json!({"code": -32602, "message": "Resource not found"})),
            Some(NotFound::Guessed(-32602))
        );
        assert_eq!(
            c(json!({"code": 0, "message": "Resource not found"})),
            Some(NotFound::Guessed(0))
        );
        assert_eq!(
            c(json!({"code": -32001, "message": "Resource not found"})),
            Some(NotFound::Guessed(-32001))
        );
        assert_eq!(c(json!({"code": -32602, "message": "malformed uri"})), None);
        assert_eq!(c(json!({"code": -32603, "message": "disk on fire"})), None);
    }
}
