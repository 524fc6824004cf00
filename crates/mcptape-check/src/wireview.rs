//! The one place the rules call into `mcptape-wire`: the strict envelope
//! parser, base64 canonical decoding, media sniffing and the read-error
//! classes. Keeping it here means a rule never re-implements a parser.

use mcptape_wire::classify::{LEGACY_RESOURCE_NOT_FOUND, ReadErrorClass, classify_read_error};
use mcptape_wire::codec::base64;
use mcptape_wire::jsonrpc::{self, ErrorObject, Frame};
use mcptape_wire::media::{self, MediaMatch};
use serde_json::Value;

/// Result of the strict envelope check of one record's bytes.
pub(crate) enum Envelope {
    /// Valid; for a batch, the indexes of bad elements and why.
    Ok(Vec<(usize, String)>),
    /// The whole record is not a JSON-RPC message.
    Bad(String),
}

/// `mcptape_wire::jsonrpc::parse` on the record's bytes.
pub(crate) fn envelope(raw: &[u8]) -> Envelope {
    match jsonrpc::parse(raw) {
        Ok(Frame::Single(_)) => Envelope::Ok(Vec::new()),
        Ok(Frame::Batch(items)) => Envelope::Ok(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.as_ref().err().map(|e| (i, e.to_string())))
                .collect(),
        ),
        Err(e) => Envelope::Bad(e.to_string()),
        #[allow(unreachable_patterns)]
        Ok(_) => Envelope::Bad("unknown frame shape".to_owned()),
    }
}

/// A blob that is not canonical base64: byte offset (within the blob string)
/// of the first bad character, and why.
pub(crate) struct BadBase64 {
    pub(crate) offset: usize,
    pub(crate) reason: String,
}

/// Decodes a `blob` strictly: standard alphabet, `=` padding only at the
/// end, length a multiple of 4, zero trailing bits (RFC 4648 §4, §3.5).
pub(crate) fn decode_blob(b64: &str) -> Result<Vec<u8>, BadBase64> {
    base64::decode(base64::Path::Simd, b64.as_bytes()).map_err(|e| BadBase64 {
        offset: e.offset(),
        reason: e.to_string(),
    })
}

/// The type sniffed from `bytes` (`mcptape_wire::media::verdict`) when it
/// has a recognised signature and disagrees with `declared`. The rule's own
/// policy on top: `application/octet-stream` claims nothing, and common
/// aliases (`image/jpg`) name the sniffed type.
pub(crate) fn sniff_mismatch(declared: &str, bytes: &[u8]) -> Option<&'static str> {
    let v = media::verdict(Some(declared), bytes);
    if v.status != MediaMatch::Mismatch {
        return None;
    }
    let sniffed = v.sniffed?;
    let essence = declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == media::DEFAULT_BLOB_MIME_TYPE || local::alias(&essence) == Some(sniffed) {
        None
    } else {
        Some(sniffed)
    }
}

/// True for media types with a faithful text representation.
pub(crate) fn is_textlike(mime: &str) -> bool {
    local::is_textlike(mime)
}

/// True when a `text` payload is a `data:` URI.
pub(crate) fn text_is_data_uri(text: &str) -> bool {
    media::text_is_data_uri(text)
}

/// How a resources/read error response reads as "resource not found".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotFound {
    /// -32602 with `data.uri`, or -32602 whose message says not found (SEP-2164).
    InvalidParams,
    /// -32002 (2025-06-18 / 2025-11-25).
    Legacy,
    /// Another code whose message says the resource was not found.
    OtherCode(i64),
}

/// Classifies a resources/read `error` object
/// (`mcptape_wire::classify::classify_read_error`, by code and `data.uri`),
/// then, for the answers it cannot call not-found, by message: -32602
/// without `data.uri` or another code whose message says the resource was
/// not found. `None` when it is not a not-found answer (a malformed-uri
/// -32602, an internal error, ...).
pub(crate) fn not_found(err: &Value) -> Option<NotFound> {
    let code = err.get("code")?.as_i64()?;
    let message = err.get("message").and_then(Value::as_str).unwrap_or("");
    let obj = ErrorObject {
        code,
        message: message.to_owned(),
        data: err.get("data").cloned(),
    };
    let says = says_not_found(message);
    match classify_read_error(&obj) {
        ReadErrorClass::NotFound { legacy: true, .. } => Some(NotFound::Legacy),
        ReadErrorClass::NotFound { legacy: false, .. } => Some(NotFound::InvalidParams),
        _ if code == LEGACY_RESOURCE_NOT_FOUND => Some(NotFound::Legacy),
        ReadErrorClass::InvalidParams if says => Some(NotFound::InvalidParams),
        ReadErrorClass::InvalidParams => None,
        _ if says => Some(NotFound::OtherCode(code)),
        _ => None,
    }
}

/// Whether an error message says a resource does not exist.
fn says_not_found(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "not found",
        "unknown resource",
        "does not exist",
        "no such resource",
        "no resource",
    ]
    .iter()
    .any(|p| m.contains(p))
}

mod local {
    //! Rule policy that is not parsing: media-type aliases and what counts as text-like.
    pub(super) fn alias(essence: &str) -> Option<&'static str> {
        match essence {
            "image/jpg" | "image/pjpeg" => Some("image/jpeg"),
            "application/x-pdf" => Some("application/pdf"),
            "application/x-gzip" => Some("application/gzip"),
            "application/x-zip-compressed" => Some("application/zip"),
            _ => None,
        }
    }

    pub(super) fn is_textlike(mime: &str) -> bool {
        let e = mime
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        e.starts_with("text/")
            || e.ends_with("+json")
            || e.ends_with("+xml")
            || matches!(
                e.as_str(),
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/ecmascript"
                    | "application/yaml"
                    | "application/x-yaml"
                    | "application/toml"
                    | "application/sql"
                    | "application/x-sh"
            )
    }
}
