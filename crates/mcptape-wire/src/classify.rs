//! What a host should do with a JSON-RPC error response to `resources/read`.
//!
//! Classification uses the error `code` and, for not-found, `data.uri` —
//! never the `message` text.
//!
//! | code | condition | class | what a host should do |
//! |---|---|---|---|
//! | -32602 | `data.uri` is a string | [`NotFound`](ReadErrorClass::NotFound) `{ legacy: false }` | drop the attachment and tell the user (retrying will not help); optionally re-list and offer the closest match |
//! | -32002 | `data.uri` is a string | [`NotFound`](ReadErrorClass::NotFound) `{ legacy: true }` | same; the peer predates 2026-07-28 (a 2026-07-28 server must not emit -32002) |
//! | -32602 | no `data.uri` | [`InvalidParams`](ReadErrorClass::InvalidParams) | a client bug (malformed URI, unserved scheme): surface loudly |
//! | -32603 | | [`Internal`](ReadErrorClass::Internal) | backend failure: retry with backoff, the document probably exists |
//! | -32601 | | [`MethodNotFound`](ReadErrorClass::MethodNotFound) | the server does not serve resources: stop reading from it |
//! | anything else (0, -32001, -32002 without `data.uri`, ...) | | [`Other`](ReadErrorClass::Other) `{ code }` | report the raw code; do not guess |
//!
//! Sources: MCP 2026-07-28 `schema.ts` ("-32002 (resource not found,
//! 2025-11-25 and earlier; replaced by -32602)"), SEP-2164, JSON-RPC 2.0 §5.1.
//! Not-found is an error, never `contents: []` (an empty result is
//! [`ReadOutcome::Empty`]).

use serde_json::Value;

use crate::envelope::ErrorObject;
use crate::resources::ReadResourceResult;

/// The codes this module classifies, defined in [`protocol::error_code`](crate::protocol::error_code).
pub use crate::protocol::error_code::{
    INTERNAL_ERROR, INVALID_PARAMS, LEGACY_RESOURCE_NOT_FOUND, METHOD_NOT_FOUND,
};

/// The class of an error response to `resources/read` (see the module table).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadErrorClass {
    /// The resource does not exist: drop the attachment, tell the user.
    NotFound {
        /// `data.uri` as sent by the server.
        uri: String,
        /// `true` for the pre-2026-07-28 code -32002.
        legacy: bool,
    },
    /// -32602 without `data.uri`: malformed request; surface loudly.
    InvalidParams,
    /// -32603: backend failure; retry with backoff.
    Internal,
    /// -32601: resources not served.
    MethodNotFound,
    /// Any other code, kept raw.
    Other {
        /// The error code as sent.
        code: i64,
    },
}

impl ReadErrorClass {
    /// What a host should do, in a few words.
    pub fn host_action(&self) -> &'static str {
        match self {
            ReadErrorClass::NotFound { .. } => "drop the attachment and tell the user",
            ReadErrorClass::InvalidParams => "client bug: surface loudly",
            ReadErrorClass::Internal => "retry with backoff",
            ReadErrorClass::MethodNotFound => "server does not serve resources",
            ReadErrorClass::Other { .. } => "unknown code: report it raw",
        }
    }
}

/// For people: `NotFound uri=docs://gone` (with ` (legacy -32002)` for the
/// pre-2026-07-28 code), `InvalidParams`, `Internal`, `MethodNotFound`,
/// `Other code=-32001`.
impl std::fmt::Display for ReadErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadErrorClass::NotFound { uri, legacy } => {
                write!(f, "NotFound uri={uri}")?;
                if *legacy {
                    f.write_str(" (legacy -32002)")?;
                }
                Ok(())
            }
            ReadErrorClass::InvalidParams => f.write_str("InvalidParams"),
            ReadErrorClass::Internal => f.write_str("Internal"),
            ReadErrorClass::MethodNotFound => f.write_str("MethodNotFound"),
            ReadErrorClass::Other { code } => write!(f, "Other code={code}"),
        }
    }
}

fn data_uri(err: &ErrorObject) -> Option<&str> {
    match &err.data {
        Some(Value::Object(m)) => m.get("uri").and_then(Value::as_str),
        _ => None,
    }
}

/// Classifies the `error` of a response to `resources/read` by code and
/// `data.uri` (never by message text). See the module table.
pub fn classify_read_error(err: &ErrorObject) -> ReadErrorClass {
    match (err.code, data_uri(err)) {
        (INVALID_PARAMS, Some(uri)) => ReadErrorClass::NotFound {
            uri: uri.to_owned(),
            legacy: false,
        },
        (LEGACY_RESOURCE_NOT_FOUND, Some(uri)) => ReadErrorClass::NotFound {
            uri: uri.to_owned(),
            legacy: true,
        },
        (INVALID_PARAMS, None) => ReadErrorClass::InvalidParams,
        (INTERNAL_ERROR, _) => ReadErrorClass::Internal,
        (METHOD_NOT_FOUND, _) => ReadErrorClass::MethodNotFound,
        (code, _) => ReadErrorClass::Other { code },
    }
}

/// The outcome of one `resources/read`, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    /// A result with this many entries (at least one).
    Entries(usize),
    /// `contents: []`: the resource answered with zero entries. Distinct from not-found.
    Empty,
    /// An error response, classified.
    Error(ReadErrorClass),
}

/// The outcome of a read from its parsed result or its error object.
pub fn read_outcome(answer: Result<&ReadResourceResult, &ErrorObject>) -> ReadOutcome {
    match answer {
        Ok(r) if r.is_empty() => ReadOutcome::Empty,
        Ok(r) => ReadOutcome::Entries(r.contents.len()),
        Err(e) => ReadOutcome::Error(classify_read_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_error_class_display_is_for_people() {
        let shown = |c: ReadErrorClass| c.to_string();
        assert_eq!(
            shown(ReadErrorClass::NotFound {
                uri: "docs://old".into(),
                legacy: true
            }),
            "NotFound uri=docs://old (legacy -32002)"
        );
        assert_eq!(
            shown(ReadErrorClass::NotFound {
                uri: "docs://gone".into(),
                legacy: false
            }),
            "NotFound uri=docs://gone"
        );
        assert_eq!(shown(ReadErrorClass::InvalidParams), "InvalidParams");
        assert_eq!(shown(ReadErrorClass::Internal), "Internal");
        assert_eq!(shown(ReadErrorClass::MethodNotFound), "MethodNotFound");
        assert_eq!(
            shown(ReadErrorClass::Other { code: -32001 }),
            "Other code=-32001"
        );
    }
}
