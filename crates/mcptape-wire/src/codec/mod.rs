//! Codec paths for `resources/read` responses: `scalar`, `simd`, `fused`,
//! behind one dispatch point per operation ([`decode_read_result`] /
//! [`Decoder::decode`] for whole responses, [`base64::decode`] /
//! [`base64::encode`] for single blobs).
//!
//! Input of [`decode_read_result`]: the bytes of one complete JSON-RPC 2.0
//! response to `resources/read` (MCP spec revision 2026-07-28, "Resources" →
//! "Reading Resources"; also 2025-06-18 / 2025-11-25, whose `ReadResourceResult`
//! has the same `contents` shape):
//!
//! ```json
//! {"jsonrpc":"2.0","id":8,"result":{"contents":[
//!   {"uri":"file:///repo/a.png","mimeType":"image/png","blob":"iVBORw0KGgo="}]}}
//! ```
//!
//! Output: a [`DecodedReadResult`], the `contents` entries in order, each with
//! `uri`, optional `mimeType`, and either the `text` (TextResourceContents) or
//! the decoded `blob` bytes (BlobResourceContents). All strings and blob bytes
//! live in two arenas that a [`Decoder`] reuses across responses, so a 160 MB
//! directory read does not allocate (or page-fault) per response.
//!
//! The rules every path enforces (and the differential tests prove they agree
//! on, accept and reject alike):
//! * strict RFC 8259 JSON: no trailing commas, comments, NaN, leading zeros,
//!   raw control characters in strings, invalid UTF-8, lone UTF-16 surrogates
//!   in `\u` escapes, numbers that overflow `f64`, bytes after the value;
//! * no object anywhere may repeat a key (compared after unescaping);
//! * nesting at most [`MAX_NESTING_DEPTH`] arrays/objects;
//! * top level: an object with `"jsonrpc": "2.0"`, `id` (string or number) and
//!   a `result` object holding a `contents` array of objects; other members are
//!   validated and skipped;
//! * each entry: `uri` (string, required), `mimeType` (string, optional), and
//!   exactly one of `text` / `blob` (strings); `blob` is strict padded standard
//!   base64 (RFC 4648 §4) — see [`base64`]; JSON escapes inside a blob are
//!   unescaped first (e.g. `\/` from encoders that escape slashes).
//!
//! Errors: [`CodecError`] — kind, byte offset into the response, and the index
//! of the `contents` entry. Every path reports the same error for the same
//! input: the fast paths only decide accept/reject and, when they reject, the
//! error is produced by the reference scan (the fused parser with the scalar
//! kernel) — errors are the cold path.

pub mod base64;
pub(crate) mod fused;
#[doc(hidden)]
pub mod fuzzing;
pub mod kernel;
pub mod payload;
pub(crate) mod serde_path;
#[cfg(test)]
mod tests;

pub use kernel::Kernel;
#[doc(hidden)]
pub use serde_path::decode_with_deserializer;

use std::ops::Range;

/// Deepest nesting of arrays/objects accepted anywhere in a response (the
/// top-level object is depth 1): the wire layer's one limit,
/// [`crate::limits::MAX_NESTING_DEPTH`]. One more → [`CodecErrorKind::TooDeep`].
pub use crate::limits::MAX_NESTING_DEPTH;

/// Which implementation decodes a whole `resources/read` response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CodecPath {
    /// `serde_json` + the `base64` crate's standard engine (the reference).
    #[default]
    Scalar,
    /// `sonic-rs` (SIMD JSON) + `base64-simd` (runtime-detected SIMD); only with the
    /// crate's `sonic` feature (the benches and fuzz targets turn it on).
    #[cfg(feature = "sonic")]
    Simd,
    /// One hand-written pass: validates the JSON and base64-decodes each `blob`
    /// straight from the input into the output arena ([`Kernel::detect`]).
    Fused,
}

impl CodecPath {
    /// Every path compiled in, for differential tests and benches.
    #[cfg(feature = "sonic")]
    pub const ALL: &'static [CodecPath] = &[CodecPath::Scalar, CodecPath::Simd, CodecPath::Fused];
    /// Every path compiled in, for differential tests and benches (`Simd` needs the `sonic`
    /// feature).
    #[cfg(not(feature = "sonic"))]
    pub const ALL: &'static [CodecPath] = &[CodecPath::Scalar, CodecPath::Fused];

    /// Short name used in bench IDs (`scalar`, `simd`, `fused`).
    pub fn name(self) -> &'static str {
        match self {
            CodecPath::Scalar => "scalar",
            #[cfg(feature = "sonic")]
            CodecPath::Simd => "simd",
            CodecPath::Fused => "fused",
        }
    }
}

/// A rejected response: what went wrong, where (byte offset into the response
/// bytes), and in which `contents` entry (0-based), if inside one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}{}", entry.map(|e| format!(" (contents entry {e})")).unwrap_or_default())]
pub struct CodecError {
    /// What went wrong.
    pub kind: CodecErrorKind,
    /// Byte offset into the response where it was detected.
    pub offset: usize,
    /// Index of the `contents` entry being parsed, if any.
    pub entry: Option<usize>,
}

/// What went wrong in a `resources/read` response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecErrorKind {
    /// The input ended inside a value.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A byte that cannot start or continue the expected JSON token.
    #[error("unexpected byte 0x{byte:02x}")]
    UnexpectedByte {
        /// The byte found.
        byte: u8,
    },
    /// Non-whitespace after the top-level value.
    #[error("trailing characters after the response")]
    TrailingCharacters,
    /// A number that does not follow the RFC 8259 §6 grammar.
    #[error("invalid number")]
    InvalidNumber,
    /// A number whose value overflows `f64` (e.g. `1e400`).
    #[error("number out of range")]
    NumberOutOfRange,
    /// A raw byte below 0x20 inside a string (RFC 8259 §7 requires escaping).
    #[error("control character in string")]
    ControlCharacterInString,
    /// A `\` escape that is not one of RFC 8259 §7's.
    #[error("invalid escape")]
    InvalidEscape,
    /// A `\uD800`–`\uDFFF` escape not forming a surrogate pair.
    #[error("lone UTF-16 surrogate")]
    LoneSurrogate,
    /// Bytes that are not UTF-8 (RFC 8259 §8.1).
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// Nesting deeper than [`MAX_NESTING_DEPTH`].
    #[error("nesting deeper than {MAX_NESTING_DEPTH}")]
    TooDeep,
    /// An object repeats a key (after unescaping).
    #[error("duplicate key {key:?}")]
    DuplicateKey {
        /// The repeated key.
        key: String,
    },
    /// A member has the wrong JSON type.
    #[error("`{field}` must be {expected}")]
    WrongType {
        /// The member (`response`, `jsonrpc`, `id`, `result`, `contents`,
        /// `contents[]`, `uri`, `mimeType`, `text`, `blob`).
        field: &'static str,
        /// The expected type.
        expected: &'static str,
    },
    /// A required member is missing (offset: the closing `}`).
    #[error("missing `{field}`")]
    MissingField {
        /// The member (`jsonrpc`, `id`, `result`, `contents`, `uri`).
        field: &'static str,
    },
    /// `jsonrpc` is a string other than `"2.0"` (JSON-RPC 2.0 §5).
    #[error("`jsonrpc` must be \"2.0\"")]
    WrongJsonRpcVersion,
    /// An entry has both `text` and `blob` (offset: the second of the keys).
    #[error("entry has both `text` and `blob`")]
    BothTextAndBlob,
    /// An entry has neither `text` nor `blob` (offset: the closing `}`).
    #[error("entry has neither `text` nor `blob`")]
    NeitherTextNorBlob,
    /// The `blob` string is not strict base64; the inner offset counts bytes
    /// of the (unescaped) blob text, the outer one bytes of the response.
    #[error("bad blob base64: {0}")]
    Base64(base64::Base64Error),
    /// A fast path rejected a response the reference scan accepts. This is a
    /// bug the differential tests exist to catch; it is reported, never hidden.
    #[error("path `{path}` rejected a response the reference accepts: {detail}")]
    PathDisagreement {
        /// The path that rejected.
        path: &'static str,
        /// Its own error message.
        detail: String,
    },
}

/// The JSON type of a value (RFC 8259 §3), as the scanner saw its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` / `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// The type of the value starting with byte `b` (`None` for a byte no value starts with).
    pub fn of_first_byte(b: u8) -> Option<JsonType> {
        Some(match b {
            b'n' => JsonType::Null,
            b't' | b'f' => JsonType::Boolean,
            b'-' | b'0'..=b'9' => JsonType::Number,
            b'"' => JsonType::String,
            b'[' => JsonType::Array,
            b'{' => JsonType::Object,
            _ => return None,
        })
    }

    /// For messages: `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`.
    pub fn with_article(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "a boolean",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        }
    }
}

/// One member of a scanned `contents` entry (`uri`, `mimeType`, `text`, `blob`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Member<'a> {
    /// Not in the entry.
    #[default]
    Absent,
    /// A string: its unescaped value (borrowed from the input when it has no
    /// escape) and the byte offset of its opening quote in the input.
    Str {
        /// Byte offset of the opening `"` in the scanned input.
        offset: usize,
        /// The unescaped value.
        value: std::borrow::Cow<'a, str>,
    },
    /// A string left undecoded (`text`: its value is only read by the rare
    /// rule that looks at it, so a document's escapes are not unescaped into
    /// an owned `String` on every scan): its JSON token, quotes and escapes
    /// as sent, already validated (strict RFC 8259 §7 string, UTF-8 §8.1, no
    /// lone surrogate). [`Member::decode`] gives the value.
    Raw {
        /// Byte offset of the opening `"` in the scanned input.
        offset: usize,
        /// The string token, from its opening to its closing `"`.
        token: &'a [u8],
    },
    /// Another JSON type, at byte `offset`.
    Other {
        /// Byte offset of the value in the scanned input.
        offset: usize,
        /// Its type.
        found: JsonType,
    },
}

impl<'a> Member<'a> {
    /// The string value, when the member is a decoded string
    /// ([`Member::Str`]); `None` for [`Member::Raw`] (use [`Member::decode`])
    /// and for other types.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Member::Str { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The string value of [`Member::Str`] or [`Member::Raw`] (unescaped
    /// now: borrowed when the token has no escape); `None` for other types.
    pub fn decode(&self) -> Option<std::borrow::Cow<'a, str>> {
        match self {
            Member::Str { value, .. } => Some(value.clone()),
            // Validated by the scan that made it: decoding cannot fail.
            Member::Raw { token, .. } => crate::lex::Lexer::new(token).string_cow().ok(),
            _ => None,
        }
    }

    /// `true` unless [`Member::Absent`].
    pub fn is_present(&self) -> bool {
        !matches!(self, Member::Absent)
    }
}

/// One entry of a `contents` array as [`scan_contents`] saw it: every member
/// the rules look at, and the in-place base64 verdict of `blob` (no decoded
/// copy: the decoded size follows from [`crate::b64::decoded_len`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedEntry<'a> {
    /// 0-based index in `contents` (→ JSON Pointer `/result/contents/{index}`).
    pub index: usize,
    /// Byte offset of the entry's value in the scanned input.
    pub offset: usize,
    /// The entry's JSON type ([`JsonType::Object`] for a well-formed entry; for
    /// any other type every member is [`Member::Absent`]).
    pub found: JsonType,
    /// `uri`.
    pub uri: Member<'a>,
    /// `mimeType`.
    pub mime_type: Member<'a>,
    /// `text`: [`Member::Raw`] when a string (validated, not unescaped).
    pub text: Member<'a>,
    /// `blob` (the base64 text, unescaped).
    pub blob: Member<'a>,
    /// When `blob` is a string: `Ok(decoded bytes)` for strict padded standard
    /// base64 (RFC 4648 §4), else the error (offsets inside the unescaped blob
    /// text) and its absolute byte offset in the scanned input.
    pub blob_check: Option<Result<usize, (base64::Base64Error, usize)>>,
    /// When `blob` is a string that is not strict base64 (`blob_check` is
    /// an error): its text as recorded, between its quotes (JSON escapes as
    /// written), which [`ScannedEntry::blob_error_as_recorded`] points into.
    /// `None` otherwise (a valid blob is not read as text twice).
    pub blob_recorded: Option<&'a str>,
}

/// A `blob` that is not strict base64 ([`ScannedEntry::blob_check`]), said
/// in terms of the blob **as recorded**: the JSON string between its quotes,
/// escapes as written (`\ud83d\ude00` is 12 bytes there, 4 once unescaped).
///
/// [`RecordedBase64Error::offset`] is a byte offset into that recorded text,
/// counted from the first byte after the opening quote; with the finding's
/// line and JSON Pointer (`/result/contents/0/blob`) it is found in the file
/// as written. A blob without escapes reads the same either way, and its
/// display is the [`base64::Base64Error`]'s own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedBase64Error<'a> {
    /// The error on the unescaped base64 text (its offsets count unescaped bytes).
    pub error: base64::Base64Error,
    /// Byte offset of the error in the blob as recorded (for
    /// [`base64::Base64Error::InvalidLength`]: the recorded length).
    pub offset: usize,
    /// For [`base64::Base64Error::InvalidByte`]: the offending character as
    /// recorded: a JSON escape (`\u00e9`, a surrogate pair `\ud83d\ude00`,
    /// `\n`) or the UTF-8 character itself.
    pub character: Option<&'a str>,
    /// Whether the recorded blob holds JSON escapes (then offsets differ).
    pub escaped: bool,
}

impl std::fmt::Display for RecordedBase64Error<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use base64::Base64Error as E;
        if !self.escaped {
            return self.error.fmt(f);
        }
        let at = self.offset;
        match (&self.error, self.character) {
            (E::InvalidByte { byte, .. }, Some(c)) => write!(
                f,
                "invalid base64 character `{c}` at offset {at} of the blob as recorded (byte 0x{byte:02x} once unescaped)"
            ),
            (E::InvalidLength { len }, _) => write!(
                f,
                "invalid base64 length {len} once unescaped (not a multiple of 4; {at} bytes as recorded)"
            ),
            (E::TrailingBits { .. }, _) => write!(
                f,
                "non-canonical base64: trailing bits set at offset {at} of the blob as recorded"
            ),
            (E::InvalidPadding { .. }, _) => write!(
                f,
                "invalid base64 padding at offset {at} of the blob as recorded"
            ),
            (e, _) => write!(f, "{e} (offset {at} of the blob as recorded)"),
        }
    }
}

/// The character of the JSON string text `raw` (between quotes) that starts
/// at byte `at`, as written: an escape (a `\u` high surrogate with the low
/// one after it is one character) or one UTF-8 character.
pub(crate) fn recorded_char_at(raw: &str, at: usize) -> Option<&str> {
    let rest = raw.get(at..)?;
    let b = rest.as_bytes();
    let len = match (b.first()?, b.get(1)) {
        (b'\\', Some(b'u')) => {
            let hi = rest
                .get(2..6)
                .and_then(|h| u16::from_str_radix(h, 16).ok())
                .unwrap_or(0);
            if (0xD800..=0xDBFF).contains(&hi) && rest.get(6..8) == Some("\\u") {
                12
            } else {
                6
            }
        }
        (b'\\', Some(_)) => 2,
        _ => rest.chars().next()?.len_utf8(),
    };
    rest.get(..len)
}

impl<'a> ScannedEntry<'a> {
    /// The blob's base64 error said in terms of the blob as recorded
    /// ([`RecordedBase64Error`]); `None` when the blob is valid or not a string.
    pub fn blob_error_as_recorded(&self) -> Option<RecordedBase64Error<'a>> {
        let Some(Err((error, _))) = &self.blob_check else {
            return None;
        };
        let recorded = self.blob_recorded.unwrap_or("");
        let unescaped = match &self.blob {
            Member::Str { value, .. } => value.len(),
            _ => recorded.len(),
        };
        let escaped = recorded.len() != unescaped;
        let rel = error.offset();
        let offset = if escaped {
            crate::json::raw_offset_of(recorded, rel)
        } else {
            rel
        };
        let character = match error {
            base64::Base64Error::InvalidByte { .. } => recorded_char_at(recorded, offset),
            _ => None,
        };
        Some(RecordedBase64Error {
            error: error.clone(),
            offset,
            character,
            escaped,
        })
    }

    /// The entry's rule violations as the wire's error kinds
    /// ([`ContentsErrorKind`](crate::resources::ContentsErrorKind)) with the
    /// byte offset each applies to, in this order: not an object; `uri`
    /// missing / not a string; `text`, `blob`, `mimeType` not strings; both or
    /// neither of `text` / `blob`; bad base64. Consumers (`mcptape check`) map
    /// kinds to their rules; they never re-derive them.
    pub fn issues(&self) -> Vec<(crate::resources::ContentsErrorKind, usize)> {
        use crate::resources::ContentsErrorKind as K;
        let mut out = Vec::new();
        if self.found != JsonType::Object {
            out.push((K::EntryNotObject, self.offset));
            return out;
        }
        match &self.uri {
            Member::Absent => out.push((K::MissingUri, self.offset)),
            Member::Other { offset, .. } => out.push((K::UriNotString, *offset)),
            Member::Str { .. } | Member::Raw { .. } => {}
        }
        for (field, m) in [
            ("text", &self.text),
            ("blob", &self.blob),
            ("mimeType", &self.mime_type),
        ] {
            if let Member::Other { offset, .. } = m {
                out.push((K::NotAString { field }, *offset));
            }
        }
        match (self.text.is_present(), self.blob.is_present()) {
            (true, true) => out.push((K::BothTextAndBlob, self.offset)),
            (false, false) => out.push((K::NeitherTextNorBlob, self.offset)),
            _ => {}
        }
        if let Some(Err((e, at))) = &self.blob_check {
            out.push((K::InvalidBase64(e.clone()), *at));
        }
        out
    }
}

/// Scans one `contents` array (the raw JSON value of `result.contents`)
/// strictly and yields every entry with its members, in order, without
/// stopping at an entry's rule violation ([`ScannedEntry::issues`]). `blob`s
/// are validated in place ([`base64::validate`], SIMD), never decoded.
///
/// This is the fused scanner (same string, escape, surrogate, number,
/// duplicate-key and depth rules as [`decode_read_result`]) entered at the
/// `contents` level. Offsets are into `input`.
///
/// Errors: [`CodecError`] when `input` is not strict JSON, or
/// [`CodecErrorKind::WrongType`] (`contents`) when it is not an array.
pub fn scan_contents(input: &[u8]) -> Result<Vec<ScannedEntry<'_>>, CodecError> {
    let mut out = Vec::new();
    fused::scan_contents(input, None, &mut out)?;
    Ok(out)
}

/// [`scan_contents`] of a value already known to be UTF-8 (a `&str`): the
/// same entries and errors, without checking the UTF-8 of its strings again.
pub fn scan_contents_str(input: &str) -> Result<Vec<ScannedEntry<'_>>, CodecError> {
    let mut out = Vec::new();
    fused::scan_contents(input.as_bytes(), Some(input), &mut out)?;
    Ok(out)
}

/// [`scan_contents_str`] of the `result.contents` array of `message`,
/// whose envelope scan is `env` ([`crate::envelope::scan_envelope_str`]):
/// the same entries and errors (offsets relative to the array's start, as
/// [`scan_contents_str`] gives them on that range), with the strings of at
/// least 4 KiB the envelope scan validated taken as they are, not searched
/// again ([`Members::long_strings`](crate::envelope::Members::long_strings)).
/// `None` when `env` has no `result.contents` range inside `message`.
///
/// `env` must be the scan of `message`: ranges from a scan of another
/// message of the same length are taken as they are.
pub fn scan_result_contents<'a>(
    message: &'a str,
    env: &crate::envelope::Envelope,
) -> Option<Result<Vec<ScannedEntry<'a>>, CodecError>> {
    let members = &env.members;
    if let (Some(spans), Some(range)) = (&members.contents_entries, &members.result_contents)
        && members.long_strings.scanned(message.len())
        && let Some(raw) = message.get(range.clone())
        && let Some(entries) = fused::contents_from_spans(raw, range.start, spans)
    {
        return Some(Ok(entries));
    }
    let (raw, known) = members
        .long_strings
        .of(message, members.result_contents.clone())?;
    let mut out = Vec::new();
    Some(fused::scan_contents_known(raw, known, &mut out).map(|()| out))
}

/// The shape of one entry of a `contents` array as [`scan_contents_shape`]
/// saw it (the entries in order: the index in the list is the index in
/// `contents`): its type and the types of its `text` and `blob` members, which is
/// all the text-XOR-blob rule reads (MCP 2026-07-28 `ReadResourceResult`:
/// an entry is `TextResourceContents` or `BlobResourceContents`). Nothing is
/// unescaped and no blob is checked as base64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryShape {
    /// The entry's JSON type ([`JsonType::Object`] for a well-formed entry; for
    /// any other type `text` and `blob` are `None`).
    pub found: JsonType,
    /// The JSON type of `text`; `None` when absent.
    pub text: Option<JsonType>,
    /// The JSON type of `blob`; `None` when absent.
    pub blob: Option<JsonType>,
}

impl EntryShape {
    /// `true` when the entry is an object with exactly one of `text` and
    /// `blob`, a string: [`ScannedEntry::issues`] of the same entry then holds
    /// none of `EntryNotObject`, `NotAString` (`text` / `blob`),
    /// `BothTextAndBlob` and `NeitherTextNorBlob`
    /// ([`ContentsErrorKind`](crate::resources::ContentsErrorKind)).
    pub fn text_xor_blob(&self) -> bool {
        self.found == JsonType::Object
            && matches!(
                (self.text, self.blob),
                (Some(JsonType::String), None) | (None, Some(JsonType::String))
            )
    }
}

/// [`scan_contents`] reporting each entry's shape only ([`EntryShape`]):
/// the same strict JSON rules and errors (the same scanner), but `uri` and
/// `mimeType` are skipped like any other member and a `blob` is not checked
/// as base64, so it costs one validating pass over the text. For a start-up
/// that asks of every recorded read result whether some entry breaks the
/// text-XOR-blob rule before reading that entry's members
/// ([`scan_contents`]).
///
/// Errors: as [`scan_contents`].
pub fn scan_contents_shape(input: &[u8]) -> Result<Vec<EntryShape>, CodecError> {
    let mut out = Vec::new();
    fused::scan_contents_shape(input, None, Vec::new(), false, &mut out)?;
    Ok(out)
}

/// [`scan_contents_shape`] of the `result.contents` array of `message`,
/// whose envelope scan is `env` ([`crate::envelope::scan_envelope_str`]).
/// That scan validated the array (strict JSON), so it is not validated
/// again: strings are skipped to their closing quote (`memchr`; the strings
/// of at least 4 KiB the scan kept are not even searched) and keys are not
/// checked for duplicates. `serve` asks it of every recorded read result at
/// start-up. `None` when `env` has no `result.contents` range inside
/// `message`. The shapes are written to `out` (cleared first; reused across
/// messages, no allocation per message); on an error it holds those of the
/// entries before it.
///
/// `env` must be the scan of `message`: from a scan of a message of another
/// length the array is validated as [`scan_contents_shape`] does; on other
/// bytes of the same length the shapes may be wrong, never a panic.
pub fn scan_result_contents_shape(
    message: &str,
    env: &crate::envelope::Envelope,
    out: &mut Vec<EntryShape>,
) -> Option<Result<(), CodecError>> {
    out.clear();
    let members = &env.members;
    let (raw, known) = members
        .long_strings
        .of(message, members.result_contents.clone())?;
    let validated = members.long_strings.scanned(message.len());
    Some(fused::scan_contents_shape(
        raw.as_bytes(),
        Some(raw),
        known,
        validated,
        out,
    ))
}

/// A JSON-RPC message scanned by [`scan_message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedMessage<'a> {
    /// Byte range in the message of the `result.contents` array (`[` to `]`),
    /// when the root is an object whose `result` member is an object whose
    /// `contents` member is an array.
    pub contents: Option<std::ops::Range<usize>>,
    /// The entries of that array, as [`scan_contents`] gives them on the
    /// range (offsets relative to its start). Empty when `contents` is `None`.
    pub entries: Vec<ScannedEntry<'a>>,
}

/// Validates a whole message (any strict JSON value: the fused scanner's
/// string, escape, surrogate, number, duplicate-key and depth rules) in one
/// pass and, on the way, scans its `result.contents` array the way
/// [`scan_contents`] does: `check` reads a 160 MB `resources/read` response
/// once, with every blob validated in place and never decoded.
///
/// Only the message root and its `result` are walked as objects; a batch or
/// any other value is just validated (`contents` is then `None`).
///
/// Errors: [`CodecError`] (offset into `input`) when `input` is not strict
/// JSON.
pub fn scan_message(input: &[u8]) -> Result<ScannedMessage<'_>, CodecError> {
    Ok(match fused::scan_message(input)? {
        Some((range, entries)) => ScannedMessage {
            contents: Some(range),
            entries,
        },
        None => ScannedMessage {
            contents: None,
            entries: Vec::new(),
        },
    })
}

/// How an entry's content is stored in the arenas.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    Text(Range<usize>),
    Blob(Range<usize>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct EntrySpan {
    uri: Range<usize>,
    mime_type: Option<Range<usize>>,
    body: Body,
}

/// The decoded `contents` of one `resources/read` response (MCP 2026-07-28
/// `ReadResourceResult.contents`), entries in order. Strings and blob bytes
/// are stored in two arenas that [`Decoder`] reuses.
#[derive(Debug, Clone, Default)]
pub struct DecodedReadResult {
    entries: Vec<EntrySpan>,
    strings: String,
    blobs: Vec<u8>,
}

/// One `contents` entry: `TextResourceContents` or `BlobResourceContents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The entry's `uri`.
    pub uri: &'a str,
    /// The entry's `mimeType`, if present.
    pub mime_type: Option<&'a str>,
    /// `text` or the decoded `blob` bytes.
    pub content: Content<'a>,
}

/// The payload of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content<'a> {
    /// `TextResourceContents.text`, unescaped.
    Text(&'a str),
    /// `BlobResourceContents.blob`, base64-decoded bytes.
    Blob(&'a [u8]),
}

impl DecodedReadResult {
    /// Number of `contents` entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when `contents` was empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entry `i` (0-based), if it exists.
    pub fn get(&self, i: usize) -> Option<Entry<'_>> {
        self.entries.get(i).map(|e| self.view(e))
    }

    /// The entries in `contents` order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = Entry<'_>> + '_ {
        self.entries.iter().map(|e| self.view(e))
    }

    /// Total decoded blob bytes over all entries.
    pub fn blob_bytes(&self) -> usize {
        self.blobs.len()
    }

    /// Bytes reserved by the arenas (capacity, not length) — for memory reports.
    pub fn capacity_bytes(&self) -> usize {
        self.strings.capacity()
            + self.blobs.capacity()
            + self.entries.capacity() * std::mem::size_of::<EntrySpan>()
    }

    fn view(&self, e: &EntrySpan) -> Entry<'_> {
        Entry {
            uri: &self.strings[e.uri.clone()],
            mime_type: e.mime_type.clone().map(|r| &self.strings[r]),
            content: match &e.body {
                Body::Text(r) => Content::Text(&self.strings[r.clone()]),
                Body::Blob(r) => Content::Blob(&self.blobs[r.clone()]),
            },
        }
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.strings.clear();
        self.blobs.clear();
    }

    /// Reserves blob capacity for the rest of a response: `remaining` bytes of
    /// base64 decode to at most `remaining / 4 * 3` bytes, so one exact
    /// reservation at the first blob means no regrowth (no doubling) after it.
    fn reserve_blobs_for(&mut self, remaining: usize) {
        let need = remaining / 4 * 3 + 64;
        if self.blobs.capacity() - self.blobs.len() < need {
            self.blobs.reserve_exact(need);
        }
    }
}

impl PartialEq for DecodedReadResult {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.entries().eq(other.entries())
    }
}
impl Eq for DecodedReadResult {}

/// Decodes one `resources/read` response with `path` into a fresh
/// [`DecodedReadResult`]. For repeated reads use a [`Decoder`].
///
/// Errors: [`CodecError`], identical on every path for the same input.
pub fn decode_read_result(path: CodecPath, bytes: &[u8]) -> Result<DecodedReadResult, CodecError> {
    let mut out = DecodedReadResult::default();
    decode_into(path, Kernel::detect(), bytes, &mut out)?;
    Ok(out)
}

/// The one dispatch point for whole responses.
fn decode_into(
    path: CodecPath,
    kernel: Kernel,
    bytes: &[u8],
    out: &mut DecodedReadResult,
) -> Result<(), CodecError> {
    out.clear();
    let verdict = match path {
        CodecPath::Fused => return fused::parse(bytes, kernel, out),
        CodecPath::Scalar => {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            decode_with_deserializer(&mut de, bytes, base64::Path::Scalar, out, true)
                .and_then(|()| de.end())
                .map_err(|e| e.to_string())
        }
        #[cfg(feature = "sonic")]
        CodecPath::Simd => {
            let mut de = sonic_rs::Deserializer::from_slice(bytes);
            decode_with_deserializer(&mut de, bytes, base64::Path::Simd, out, true)
                .and_then(|()| de.end())
                .map_err(|e| e.to_string())
        }
    };
    verdict.map_err(|detail| {
        out.clear();
        reference_error(bytes, path, detail)
    })
}

/// The error for a response some fast path rejected: the reference scan's.
fn reference_error(bytes: &[u8], path: CodecPath, detail: String) -> CodecError {
    let mut scratch = DecodedReadResult::default();
    match fused::parse(bytes, Kernel::Scalar, &mut scratch) {
        Err(e) => e,
        Ok(()) => CodecError {
            kind: CodecErrorKind::PathDisagreement {
                path: path.name(),
                detail,
            },
            offset: 0,
            entry: None,
        },
    }
}

/// Decodes `resources/read` responses repeatedly, reusing its output arenas:
/// after the first response of a given size, later ones allocate nothing.
#[derive(Debug, Clone)]
pub struct Decoder {
    path: CodecPath,
    kernel: Kernel,
    result: DecodedReadResult,
}

impl Decoder {
    /// A decoder for `path` (the fused path uses [`Kernel::detect`]).
    pub fn new(path: CodecPath) -> Self {
        Decoder {
            path,
            kernel: Kernel::detect(),
            result: DecodedReadResult::default(),
        }
    }

    /// A fused decoder forced onto `kernel` (for tests and benches comparing
    /// kernels; an unavailable SIMD kernel falls back to scalar).
    pub fn with_kernel(path: CodecPath, kernel: Kernel) -> Self {
        Decoder {
            path,
            kernel,
            result: DecodedReadResult::default(),
        }
    }

    /// The path this decoder runs.
    pub fn path(&self) -> CodecPath {
        self.path
    }

    /// Decodes one response, replacing the previous result.
    ///
    /// Errors: [`CodecError`] (the previous result is cleared).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<&DecodedReadResult, CodecError> {
        decode_into(self.path, self.kernel, bytes, &mut self.result)?;
        Ok(&self.result)
    }

    /// The last successful result (empty after an error).
    pub fn result(&self) -> &DecodedReadResult {
        &self.result
    }
}

/// CPU features relevant to the codec, as detected at run time on this CPU
/// (`name`, detected). Names follow `is_x86_feature_detected!`.
pub fn cpu_features() -> Vec<(&'static str, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as d;
        vec![
            ("sse4.1", d!("sse4.1")),
            ("ssse3", d!("ssse3")),
            ("sse4.2", d!("sse4.2")),
            ("pclmulqdq", d!("pclmulqdq")),
            ("avx2", d!("avx2")),
            ("bmi2", d!("bmi2")),
            ("avx512f", d!("avx512f")),
            ("avx512bw", d!("avx512bw")),
            ("avx512vbmi", d!("avx512vbmi")),
        ]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

/// CPU features the binary was compiled to assume (`-C target-cpu=...`);
/// `sonic-rs` picks its SIMD at compile time from these, unlike `base64-simd`
/// and the fused kernel, which detect at run time.
pub fn compiled_features() -> Vec<&'static str> {
    let mut v = Vec::new();
    if cfg!(target_feature = "sse4.2") {
        v.push("sse4.2");
    }
    if cfg!(target_feature = "pclmulqdq") {
        v.push("pclmulqdq");
    }
    if cfg!(target_feature = "avx2") {
        v.push("avx2");
    }
    if cfg!(target_feature = "avx512f") {
        v.push("avx512f");
    }
    v
}
