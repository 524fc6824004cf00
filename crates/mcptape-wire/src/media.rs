//! Media type of a decoded blob: sniffed magic bytes (the `infer` crate)
//! against the declared `mimeType`.
//!
//! `mimeType` is a declaration, not a guarantee (MCP 2026-07-28 "Resources":
//! `ResourceContents.mimeType?: string`, "if known"). A host that forwards
//! `image/png` to a provider should check the bytes first: JPEG bytes
//! declared `image/png` are a [`MediaMatch::Mismatch`]. A blob without a
//! `mimeType` stays bytes (no implicit UTF-8 decoding); the type a host falls
//! back to, `application/octet-stream`, is marked
//! [`defaulted`](MediaVerdict::defaulted).

/// The type a host assumes for a blob with no `mimeType`.
pub const DEFAULT_BLOB_MIME_TYPE: &str = "application/octet-stream";

/// Sniffs the media type from the first bytes (magic numbers) of decoded
/// content, e.g. `Some("image/png")` for `\x89PNG\r\n\x1a\n...`; `None` when
/// no known signature matches (plain text, random bytes, empty input).
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    infer::get(bytes).map(|t| t.mime_type())
}

/// How the declared type compares with the sniffed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaMatch {
    /// Declared and sniffed types agree (essence compared case-insensitively,
    /// parameters such as `; charset=` ignored).
    Match,
    /// Declared and sniffed types differ: do not forward under the declared type.
    Mismatch,
    /// A type was declared but the bytes have no known signature: unverified.
    Unverified,
    /// No type was declared; the sniffed type (if any) is all there is.
    Undeclared,
}

impl MediaMatch {
    /// Short label: `match`, `MISMATCH`, `unverified`, `undeclared`.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaMatch::Match => "match",
            MediaMatch::Mismatch => "MISMATCH",
            MediaMatch::Unverified => "unverified",
            MediaMatch::Undeclared => "undeclared",
        }
    }
}

/// Declared vs sniffed media type of one blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaVerdict {
    /// The declared `mimeType`, if any.
    pub declared: Option<String>,
    /// The sniffed type, if the bytes have a known signature.
    pub sniffed: Option<&'static str>,
    /// The type a host should use: the declared one, else [`DEFAULT_BLOB_MIME_TYPE`].
    pub effective: String,
    /// `true` when [`effective`](Self::effective) is the default, not a declaration.
    pub defaulted: bool,
    /// The comparison.
    pub status: MediaMatch,
}

/// A media type's essence as [`verdict`] compares it with the sniffed type:
/// before any `;` parameter, trimmed, in lower case (`" Image/PNG; q=1"` is
/// `image/png`; RFC 9110 §8.3.1: type and subtype are case-insensitive).
pub fn essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// How a blob's declared `mimeType` compares with the type `sniffed` from
/// its bytes ([`sniff`]): [`verdict`]'s status, without its strings.
pub fn status(declared: Option<&str>, sniffed: Option<&str>) -> MediaMatch {
    match (declared, sniffed) {
        (None, _) => MediaMatch::Undeclared,
        (Some(_), None) => MediaMatch::Unverified,
        (Some(d), Some(s)) if essence(d) == s => MediaMatch::Match,
        (Some(_), Some(_)) => MediaMatch::Mismatch,
    }
}

/// Compares a blob's declared `mimeType` with the type sniffed from its decoded `bytes`.
pub fn verdict(declared: Option<&str>, bytes: &[u8]) -> MediaVerdict {
    let sniffed = sniff(bytes);
    let status = status(declared, sniffed);
    MediaVerdict {
        declared: declared.map(str::to_owned),
        sniffed,
        effective: declared.unwrap_or(DEFAULT_BLOB_MIME_TYPE).to_owned(),
        defaulted: declared.is_none(),
        status,
    }
}

/// `true` when `text` holds a `data:` URI with base64 payload
/// (`data:[<mediatype>][;base64],...`, RFC 2397): binary smuggled into a
/// `text` entry that belongs in `blob`. Leading whitespace is ignored; the
/// scheme and `;base64` are case-insensitive.
pub fn text_is_data_uri(text: &str) -> bool {
    let t = text.trim_start().as_bytes();
    if t.len() < 5 || !t[..5].eq_ignore_ascii_case(b"data:") {
        return false;
    }
    let Some(comma) = t.iter().position(|&c| c == b',') else {
        return false;
    };
    let head = &t[..comma];
    head.len() >= 12 && head[head.len() - 7..].eq_ignore_ascii_case(b";base64")
}

/// `false` when the JSON string token `token` (quotes and escapes as sent,
/// a validated strict string: [`crate::codec::Member::Raw`]) cannot decode
/// to a text [`text_is_data_uri`] accepts, read from its first raw bytes
/// without unescaping it; `true` when it may (then decode and ask
/// [`text_is_data_uri`]). Raw spaces are skipped (the only whitespace a
/// strict string holds unescaped); an escape or a non-ASCII byte among the
/// next five bytes may be whitespace or a letter of `data:`, so it answers
/// `true`; otherwise those five bytes are the text's first five characters.
pub fn token_may_be_data_uri(token: &[u8]) -> bool {
    let inner = token
        .strip_prefix(b"\"")
        .and_then(|t| t.strip_suffix(b"\""))
        .unwrap_or(token);
    let start = inner.iter().position(|&b| b != b' ').unwrap_or(inner.len());
    let Some(head) = inner[start..].get(..5) else {
        // Fewer than five bytes left: the text after its spaces is shorter
        // than `data:` (unescaping never lengthens a string).
        return false;
    };
    head.iter().any(|&b| b == b'\\' || !b.is_ascii()) || head.eq_ignore_ascii_case(b"data:")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The raw pre-test never says `false` for a token whose decoded text
    /// is a data URI, and says `false` for plain texts that are not.
    #[test]
    fn token_may_be_data_uri_never_misses_a_decoded_data_uri() {
        for (token, may) in [
            (r#""data:image/png;base64,AA==""#, true),
            (r#""  DATA:image/png;base64,AA==""#, true),
            (r#""\u0064ata:image/png;base64,AA==""#, true),
            (r#""\n\tdata:image/png;base64,AA==""#, true),
            (r#""\u00a0data:image/png;base64,AA==""#, true),
            ("\"\u{a0}data:image/png;base64,AA==\"", true),
            (r#""d\u0061ta:image/png;base64,AA==""#, true),
            (r#""data\u003aimage/png;base64,AA==""#, true),
            (r#""hello, world""#, false),
            (r#""  # Title\n\ndata:x;base64,AA==""#, false),
            (r#""data""#, false),
            (r#""    ""#, false),
            (r#""""#, false),
        ] {
            assert_eq!(token_may_be_data_uri(token.as_bytes()), may, "{token}");
            let text: String = serde_json::from_str(token).unwrap();
            if text_is_data_uri(&text) {
                assert!(token_may_be_data_uri(token.as_bytes()), "{token}");
            }
        }
    }

    /// `status` of the sniffed type is the status `verdict` gives, for each
    /// of its four outcomes.
    #[test]
    fn status_is_the_verdicts_status() {
        let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let cases: [(Option<&str>, &[u8], MediaMatch); 5] = [
            (None, png, MediaMatch::Undeclared),
            (Some("text/plain"), b"hello", MediaMatch::Unverified),
            (Some(" Image/PNG; q=1"), png, MediaMatch::Match),
            (Some("image/jpeg"), png, MediaMatch::Mismatch),
            (Some("image/png"), b"", MediaMatch::Unverified),
        ];
        for (declared, bytes, want) in cases {
            assert_eq!(status(declared, sniff(bytes)), want, "{declared:?}");
            assert_eq!(verdict(declared, bytes).status, want, "{declared:?}");
        }
    }
}
