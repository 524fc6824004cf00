//! The one place the rules call into `mcptape-wire`: the strict envelope
//! parser, base64 canonical decoding, media sniffing and the read-error
//! classes. Keeping it here means a rule never re-implements a parser.

use mcptape_wire::jsonrpc::{self, Frame};
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
    local::decode_canonical(b64.as_bytes())
}

/// The type sniffed from `bytes` when it has a recognised signature and
/// disagrees with `declared` (parameters and case ignored).
pub(crate) fn sniff_mismatch(declared: &str, bytes: &[u8]) -> Option<&'static str> {
    let sniffed = local::sniff(bytes)?;
    let essence = declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/octet-stream"
        || essence == sniffed
        || local::alias(&essence) == Some(sniffed)
    {
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
    local::text_is_data_uri(text)
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

/// Classifies a resources/read `error` object; `None` when it is not a
/// not-found answer (a malformed-uri -32602 without `data.uri`, an internal
/// error, ...).
pub(crate) fn not_found(err: &Value) -> Option<NotFound> {
    let code = err.get("code")?.as_i64()?;
    let message = err.get("message").and_then(Value::as_str).unwrap_or("");
    let has_data_uri = err.get("data").and_then(|d| d.get("uri")).is_some();
    let says = says_not_found(message);
    match code {
        -32002 => Some(NotFound::Legacy),
        -32602 if has_data_uri || says => Some(NotFound::InvalidParams),
        -32602 => None,
        c if says => Some(NotFound::OtherCode(c)),
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
    //! Stand-ins until the corresponding `mcptape-wire` modules land.
    use super::BadBase64;

    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    fn val(c: u8) -> Option<u8> {
        ALPHABET.iter().position(|&a| a == c).map(|p| p as u8)
    }

    pub(super) fn decode_canonical(s: &[u8]) -> Result<Vec<u8>, BadBase64> {
        let bad = |offset: usize, reason: &str| BadBase64 {
            offset,
            reason: reason.to_owned(),
        };
        let pad = s.iter().rev().take_while(|&&c| c == b'=').count();
        let body = &s[..s.len() - pad];
        if let Some(p) = body.iter().position(|&c| val(c).is_none()) {
            return Err(bad(
                p,
                &format!("byte {:?} is not in the standard alphabet", s[p] as char),
            ));
        }
        if !s.len().is_multiple_of(4) {
            return Err(bad(
                s.len(),
                "length is not a multiple of 4 (missing padding)",
            ));
        }
        if pad > 2 {
            return Err(bad(body.len(), "more than two padding characters"));
        }
        let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
        for chunk in body.chunks(4) {
            let v: Vec<u8> = chunk.iter().map(|&c| val(c).unwrap_or(0)).collect();
            let n = v.iter().fold(0u32, |acc, &x| (acc << 6) | u32::from(x)) << (6 * (4 - v.len()));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            let keep = v.len() * 6 / 8;
            out.extend_from_slice(&bytes[..keep]);
            if v.len() < 4 {
                let total_bits = v.len() * 6;
                let used = keep * 8;
                let mask = (1u32 << (total_bits - used)) - 1;
                if u32::from(*v.last().unwrap_or(&0)) & mask != 0 {
                    return Err(bad(
                        body.len() - 1,
                        "non-zero trailing bits (not canonical)",
                    ));
                }
            }
        }
        Ok(out)
    }

    pub(super) fn sniff(b: &[u8]) -> Option<&'static str> {
        let sigs: [(&[u8], &'static str); 8] = [
            (b"\x89PNG\r\n\x1a\n", "image/png"),
            (b"\xff\xd8\xff", "image/jpeg"),
            (b"GIF87a", "image/gif"),
            (b"GIF89a", "image/gif"),
            (b"%PDF-", "application/pdf"),
            (b"PK\x03\x04", "application/zip"),
            (b"\x1f\x8b\x08", "application/gzip"),
            (b"\x00\x00\x01\x00", "image/x-icon"),
        ];
        if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
            return Some("image/webp");
        }
        sigs.iter().find(|(s, _)| b.starts_with(s)).map(|(_, t)| *t)
    }

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

    /// `data:[<mediatype>][;base64],<data>` (RFC 2397 §3): the part before
    /// the comma has no whitespace and is empty, a media type, or parameters.
    pub(super) fn text_is_data_uri(t: &str) -> bool {
        let t = t.trim();
        if !t.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:")) {
            return false;
        }
        let Some(comma) = t.find(',') else {
            return false;
        };
        let meta = &t[5..comma];
        !meta.chars().any(char::is_whitespace)
            && (meta.is_empty() || meta.starts_with(';') || meta.contains('/'))
    }
}
