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
mod fused;
#[doc(hidden)]
pub mod fuzzing;
pub mod kernel;
pub mod payload;
mod serde_path;
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
    /// `sonic-rs` (SIMD JSON) + `base64-simd` (runtime-detected SIMD).
    Simd,
    /// One hand-written pass: validates the JSON and base64-decodes each `blob`
    /// straight from the input into the output arena ([`Kernel::detect`]).
    Fused,
}

impl CodecPath {
    /// Every path, for differential tests and benches.
    pub const ALL: [CodecPath; 3] = [CodecPath::Scalar, CodecPath::Simd, CodecPath::Fused];

    /// Short name used in bench IDs (`scalar`, `simd`, `fused`).
    pub fn name(self) -> &'static str {
        match self {
            CodecPath::Scalar => "scalar",
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
