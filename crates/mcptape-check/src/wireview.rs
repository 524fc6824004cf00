//! The one place the rules call into `mcptape-wire`: the strict envelope
//! parser, base64 canonical decoding, media sniffing and the read-error
//! classes. Keeping it here means a rule never re-implements a parser.

use mcptape_wire::classify::{LEGACY_RESOURCE_NOT_FOUND, ReadErrorClass, classify_read_error};
use mcptape_wire::codec::{self, ScannedEntry, base64};
use mcptape_wire::envelope::{ErrorObject, Scanned};
use mcptape_wire::error::WireError;
use mcptape_wire::media;

/// Result of the strict envelope check of one record's bytes.
pub(crate) enum Envelope {
    /// Valid; for a batch, the indexes of bad elements and why.
    Ok(Vec<(usize, String)>),
    /// The whole record is not a JSON-RPC message.
    Bad(String),
}

/// The envelope verdict of a frame's one scan
/// (`mcptape_wire::envelope::scan_frame`: the envelope rules, one strict
/// pass, no `Value` of any member). An id is a string or an integer literal
/// of any size, kept as its raw text.
pub(crate) fn envelope_of(scanned: &Result<Scanned, WireError>) -> Envelope {
    match scanned {
        Ok(Scanned::Batch(items)) => Envelope::Ok(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.as_ref().err().map(|e| (i, e.to_string())))
                .collect(),
        ),
        Ok(Scanned::Single(_)) => Envelope::Ok(Vec::new()),
        Err(e) => Envelope::Bad(e.to_string()),
    }
}

/// Byte offset of the first `\n` or `\r` in `raw`, whose envelope scan is
/// `scanned`: noted by that scan for a single message (a strict message
/// holds one only between tokens, where the scan passed), else a SIMD search.
pub(crate) fn line_break(raw: &[u8], scanned: &Result<Scanned, WireError>) -> Option<usize> {
    match scanned {
        Ok(Scanned::Single(e)) => e.members.line_break,
        _ => mcptape_wire::json::find_line_break(raw),
    }
}

fn first_byte(raw: &str) -> Option<u8> {
    raw.bytes().find(|b| !b.is_ascii_whitespace())
}

/// The wire's strict scan of one raw `contents` value
/// (`mcptape_wire::codec::scan_contents_str`: a `&str`'s UTF-8 is not
/// checked again).
pub(crate) fn scan_contents(raw: &str) -> Result<Vec<ScannedEntry<'_>>, codec::CodecError> {
    codec::scan_contents_str(raw)
}

/// [`scan_contents`] of `raw`, the `result.contents` range of `message`
/// whose envelope scan is `env` (`mcptape_wire::codec::scan_result_contents`:
/// the long strings that scan validated are not searched again).
pub(crate) fn scan_result_contents<'a>(
    message: &'a str,
    env: &mcptape_wire::envelope::Envelope,
    raw: &'a str,
) -> Result<Vec<ScannedEntry<'a>>, codec::CodecError> {
    codec::scan_result_contents(message, env).unwrap_or_else(|| scan_contents(raw))
}

/// The JSON type of a raw value, for messages (`an array`, `a number`, ...).
pub(crate) fn raw_type(raw: &str) -> &'static str {
    first_byte(raw)
        .and_then(codec::JsonType::of_first_byte)
        .map_or("not JSON", codec::JsonType::with_article)
}

/// Base64 characters of a blob [`BlobHead`] decodes: 4,096, the first 3,072
/// bytes, more than any signature needs.
pub(crate) const BLOB_HEAD_CHARS: usize = 4096;

/// What the blob rules need from a valid blob, decoded once: its first
/// bytes (for sniffing) and, when those are the whole blob (a blob of at
/// most [`BLOB_HEAD_CHARS`] characters, a multiple of 4), whether it decoded;
/// a longer blob is decoded whole only when asked ([`Self::decodes_to_utf8`],
/// a text-like declared type).
pub(crate) struct BlobHead<'a> {
    b64: &'a str,
    /// The first decoded bytes (empty when they do not decode).
    pub(crate) bytes: Vec<u8>,
    /// `Some(decoded)` when `bytes` is the whole blob's decoding.
    whole: Option<bool>,
}

impl<'a> BlobHead<'a> {
    /// Decodes the first [`BLOB_HEAD_CHARS`] (rounded down to a multiple of
    /// 4) characters of `b64`.
    pub(crate) fn new(b64: &'a str) -> BlobHead<'a> {
        let n = b64.len().min(BLOB_HEAD_CHARS) / 4 * 4;
        let head = base64::decode(base64::Path::Simd, &b64.as_bytes()[..n]);
        let whole = (n == b64.len()).then_some(head.is_ok());
        BlobHead {
            b64,
            bytes: head.unwrap_or_default(),
            whole,
        }
    }

    /// Whether the blob decodes to UTF-8 text: from the bytes already
    /// decoded when they are the whole blob, else by decoding it whole.
    pub(crate) fn decodes_to_utf8(&self) -> bool {
        match self.whole {
            Some(decoded) => decoded && std::str::from_utf8(&self.bytes).is_ok(),
            None => base64::decode(base64::Path::Simd, self.b64.as_bytes())
                .is_ok_and(|bytes| std::str::from_utf8(&bytes).is_ok()),
        }
    }
}

/// The type sniffed from `bytes` ([`media::sniff`], the type behind
/// `mcptape_wire::media::verdict`) when it has a recognised signature and
/// disagrees with the declared type of essence `essence` ([`essence`]).
/// The rule's own policy on top: `application/octet-stream` claims nothing,
/// and common aliases (`image/jpg`) name the sniffed type. The same answer as
/// a [`media::verdict`] of [`media::MediaMatch::Mismatch`] with the policy applied,
/// without the verdict's two owned strings per blob.
pub(crate) fn sniff_mismatch(essence: &str, bytes: &[u8]) -> Option<&'static str> {
    let sniffed = media::sniff(bytes)?;
    if essence == sniffed
        || essence == media::DEFAULT_BLOB_MIME_TYPE
        || local::alias(essence) == Some(sniffed)
    {
        None
    } else {
        Some(sniffed)
    }
}

/// A media type's essence (`mcptape_wire::media::essence`: before `;`,
/// trimmed, lower case), what [`sniff_mismatch`] and [`is_textlike`] read
/// (made once per blob).
pub(crate) fn essence(mime: &str) -> String {
    media::essence(mime)
}

/// True for media types of essence `essence` ([`essence`]) with a faithful
/// text representation.
pub(crate) fn is_textlike(essence: &str) -> bool {
    local::is_textlike(essence)
}

/// True when a `text` payload is a `data:` URI.
pub(crate) fn text_is_data_uri(text: &str) -> bool {
    media::text_is_data_uri(text)
}

/// `false` when an undecoded `text` token cannot hold a data URI
/// (`mcptape_wire::media::token_may_be_data_uri`).
pub(crate) fn text_may_be_data_uri(token: &[u8]) -> bool {
    media::token_may_be_data_uri(token)
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
pub(crate) fn not_found(err: &ErrorObject) -> Option<NotFound> {
    let code = err.code;
    let message = err.message.as_str();
    let says = says_not_found(message);
    match classify_read_error(err) {
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

    pub(super) fn is_textlike(e: &str) -> bool {
        e.starts_with("text/")
            || e.ends_with("+json")
            || e.ends_with("+xml")
            || matches!(
                e,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule before `sniff_mismatch` read the type itself: the media
    /// verdict, then the policy.
    fn by_verdict(declared: &str, bytes: &[u8]) -> Option<&'static str> {
        let v = media::verdict(Some(declared), bytes);
        if v.status != media::MediaMatch::Mismatch {
            return None;
        }
        let sniffed = v.sniffed?;
        let essence = media::essence(declared);
        (essence != media::DEFAULT_BLOB_MIME_TYPE && local::alias(&essence) != Some(sniffed))
            .then_some(sniffed)
    }

    #[test]
    fn sniff_mismatch_agrees_with_the_media_verdict() {
        let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let jpeg: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0";
        let cases: [(&str, &[u8], Option<&str>); 9] = [
            ("image/jpeg", png, Some("image/png")),
            ("image/png", png, None),
            (" IMAGE/PNG ; q=1", png, None),
            ("application/octet-stream", png, None),
            ("image/jpg", jpeg, None),
            ("image/jpg", png, Some("image/png")),
            ("text/plain", png, Some("image/png")),
            ("text/plain", b"hello", None),
            ("image/png", b"", None),
        ];
        for (declared, bytes, want) in cases {
            assert_eq!(
                sniff_mismatch(&essence(declared), bytes),
                want,
                "{declared}"
            );
            assert_eq!(by_verdict(declared, bytes), want, "{declared}");
        }
    }

    /// A blob within the head (at most 4,096 characters, a multiple of 4) is
    /// decoded once; one past it, its UTF-8 test decodes it whole.
    #[test]
    fn blob_head_at_the_head_limit_and_one_past() {
        let whole = |b64: &str| {
            base64::decode(base64::Path::Simd, b64.as_bytes())
                .is_ok_and(|b| std::str::from_utf8(&b).is_ok())
        };
        // "AAAA" decodes to three NUL bytes (UTF-8); "w4Ej" to 0xC3 0x81 0x23
        // ("Á#", UTF-8); "/w==" to 0xFF (not UTF-8).
        let at = "AAAA".repeat(BLOB_HEAD_CHARS / 4);
        let head = BlobHead::new(&at);
        assert_eq!(head.whole, Some(true));
        assert_eq!(head.bytes.len(), BLOB_HEAD_CHARS / 4 * 3);
        assert!(head.decodes_to_utf8());
        let past_bad = format!("{at}/w==");
        let head = BlobHead::new(&past_bad);
        assert_eq!(
            (head.whole, head.bytes.len()),
            (None, BLOB_HEAD_CHARS / 4 * 3)
        );
        assert!(!head.decodes_to_utf8());
        let past_good = format!("{at}w4Ej");
        assert!(BlobHead::new(&past_good).decodes_to_utf8());
        for b64 in [
            "",
            "/w==",
            "w4Ej",
            "QUJD",
            "QUI=",
            "QUJ",
            "Q",
            "@@@@",
            at.as_str(),
            past_bad.as_str(),
        ] {
            let head = BlobHead::new(b64);
            assert_eq!(head.decodes_to_utf8(), whole(b64), "{b64:.8}");
            let n = b64.len().min(BLOB_HEAD_CHARS) / 4 * 4;
            let prefix =
                base64::decode(base64::Path::Simd, &b64.as_bytes()[..n]).unwrap_or_default();
            assert_eq!(head.bytes, prefix, "{b64:.8}");
        }
    }
}
