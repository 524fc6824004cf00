//! `resources/read` result model and its strict parser (MCP spec revision
//! 2026-07-28, `schema.ts`: `ReadResourceResult extends CacheableResult {
//! contents: (TextResourceContents | BlobResourceContents)[] }`, with
//! `ResourceContents { uri: string; mimeType?: string; _meta?: MetaObject }`,
//! `TextResourceContents { text: string }`, `BlobResourceContents { blob: string /* @format byte */ }`,
//! `Result { _meta?; resultType: "complete" | "input_required" | string; [key: string]: unknown }`,
//! `CacheableResult { ttlMs: number /* @minimum 0 */; cacheScope: "public" | "private" }`;
//! read from `schema/2026-07-28/schema.ts` in the `modelcontextprotocol/modelcontextprotocol`
//! repository, commit `2f32ceca`).
//!
//! Read peers of 2025-06-18 and 2025-11-25 too: no `resultType` (treated as
//! `"complete"`, flagged [`ReadResourceResult::legacy_result_type`]), no
//! `ttlMs`/`cacheScope`.
//!
//! Rules of [`parse_read_result`], each with its own [`ContentsErrorKind`]:
//! * an entry with neither `text` nor `blob`, or with both, is an error (never "text wins");
//! * `uri` missing or not a string is an error;
//! * `blob` must be canonical padded standard base64 (RFC 4648 §4): the error
//!   carries the byte offset of the first bad character in the input.
//!   [`parse_read_result_lenient`] also accepts whitespace, the URL-safe
//!   alphabet and missing padding, and reports each as a [`Leniency`];
//! * `contents: []` parses (zero entries; see [`ReadResourceResult::is_empty`]);
//! * a negative `ttlMs` is treated as 0 (the sent value is kept in
//!   [`ReadResourceResult::ttl_ms_negative`]); an unknown `cacheScope` is an error;
//! * every entry is returned in order, whatever its shape and uri;
//! * unknown fields and `_meta` are preserved: parse → [`to_json`](ReadResourceResult::to_json) → parse gives an equal value;
//! * duplicate keys, lone surrogate escapes (`\ud800`), bad UTF-8 and the
//!   [`limits`](crate::limits) are rejected by [`json::check`] with their offset.

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::codec::base64::{self as codec_b64, Base64Error, Path};
use crate::error::{JsonError, JsonErrorKind};
use crate::json;

/// A JSON object (`{ [key: string]: unknown }` in `schema.ts`), key order preserved.
pub type JsonObject = Map<String, Value>;

/// `Result.resultType` (2026-07-28): how the client should read the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultType {
    /// `"complete"`: the final answer.
    Complete,
    /// `"input_required"`: the server needs input before it can answer.
    InputRequired,
    /// Any other string (the schema allows `string` for forward compatibility).
    Other(String),
}

impl ResultType {
    /// The wire string, e.g. `"complete"`.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }

    fn from_wire(s: String) -> Self {
        match s.as_str() {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            _ => ResultType::Other(s),
        }
    }
}

/// As the wire string ([`ResultType::as_str`]).
impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// `CacheableResult.cacheScope` (2026-07-28 "Caching"): who may share a cached copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// `"public"`: no user-specific data; shared caches may serve it across users.
    Public,
    /// `"private"`: reuse only within the same authorization context.
    Private,
}

impl CacheScope {
    /// The wire string, `"public"` or `"private"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// As the wire string, `"public"` or `"private"`.
impl Serialize for CacheScope {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// `TextResourceContents` (2026-07-28 `schema.ts`): an entry whose payload is `text`.
#[derive(Debug, Clone, PartialEq)]
pub struct TextResourceContents {
    /// `uri` — the URI this entry came from (may differ from the requested one).
    pub uri: String,
    /// `mimeType`, when declared.
    pub mime_type: Option<String>,
    /// `text` — the document as Unicode text (escapes decoded).
    pub text: String,
    /// `_meta`, when present.
    pub meta: Option<JsonObject>,
    /// Every other member (e.g. `name`, `title`), preserved in order.
    pub extra: JsonObject,
}

/// `BlobResourceContents` (2026-07-28 `schema.ts`): an entry whose payload is
/// `blob`, base64 on the wire, held here as the decoded bytes.
///
/// Canonical base64 is a bijection, so [`blob_base64`](Self::blob_base64)
/// gives back exactly the string a strict parse accepted. A blob without a
/// `mimeType` stays bytes: nothing here decodes it as UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub struct BlobResourceContents {
    /// `uri` — the URI this entry came from.
    pub uri: String,
    /// `mimeType`, when declared.
    pub mime_type: Option<String>,
    /// The decoded `blob` bytes.
    pub bytes: Vec<u8>,
    /// `_meta`, when present.
    pub meta: Option<JsonObject>,
    /// Every other member, preserved in order.
    pub extra: JsonObject,
}

impl BlobResourceContents {
    /// The `blob` string: canonical padded standard base64 of [`bytes`](Self::bytes)
    /// (`4 * ceil(n / 3)` characters, see [`b64::encoded_len`](crate::b64::encoded_len)).
    pub fn blob_base64(&self) -> String {
        codec_b64::encode(Path::Scalar, &self.bytes)
    }
}

/// One entry of `contents`, discriminated by which payload member it has
/// (explicitly: an entry with both or neither is a parse error).
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    /// Has `text`.
    Text(TextResourceContents),
    /// Has `blob`.
    Blob(BlobResourceContents),
}

/// The payload shape of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `text`.
    Text,
    /// `blob`.
    Blob,
}

impl Shape {
    /// `"text"` or `"blob"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Text => "text",
            Shape::Blob => "blob",
        }
    }
}

impl ResourceContents {
    /// The entry's `uri`.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }

    /// The declared `mimeType`, if any.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }

    /// The entry's `_meta`, if any.
    pub fn meta(&self) -> Option<&JsonObject> {
        match self {
            ResourceContents::Text(t) => t.meta.as_ref(),
            ResourceContents::Blob(b) => b.meta.as_ref(),
        }
    }

    /// Text or blob.
    pub fn shape(&self) -> Shape {
        match self {
            ResourceContents::Text(_) => Shape::Text,
            ResourceContents::Blob(_) => Shape::Blob,
        }
    }

    /// Decoded payload size in bytes: UTF-8 length of `text`, or decoded `blob` length.
    pub fn decoded_len(&self) -> usize {
        match self {
            ResourceContents::Text(t) => t.text.len(),
            ResourceContents::Blob(b) => b.bytes.len(),
        }
    }
}

/// `ReadResourceResult` (2026-07-28 `schema.ts`, "resources/read").
#[derive(Debug, Clone, PartialEq)]
pub struct ReadResourceResult {
    /// `contents`, every entry in wire order.
    pub contents: Vec<ResourceContents>,
    /// `resultType`; [`ResultType::Complete`] when absent (see [`legacy_result_type`](Self::legacy_result_type)).
    pub result_type: ResultType,
    /// `true` when `resultType` was absent (a pre-2026-07-28 peer) and
    /// `"complete"` was assumed, as the spec's `Result` doc requires.
    pub legacy_result_type: bool,
    /// `ttlMs` in ms, when present; a negative value is clamped to `Some(0)`.
    pub ttl_ms: Option<u64>,
    /// The negative `ttlMs` the peer sent, when it was clamped to 0 (kept so
    /// serialization gives back what was read).
    pub ttl_ms_negative: Option<i64>,
    /// `cacheScope`, when present.
    pub cache_scope: Option<CacheScope>,
    /// `_meta`, when present.
    pub meta: Option<JsonObject>,
    /// Every other member of the result, preserved in order.
    pub extra: JsonObject,
}

impl ReadResourceResult {
    /// A `"complete"` result holding `contents`, with no cache hints, `_meta` or extra members.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        Self {
            contents,
            result_type: ResultType::Complete,
            legacy_result_type: false,
            ttl_ms: None,
            ttl_ms_negative: None,
            cache_scope: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// `true` for `contents: []`: the resource exists and returned zero entries.
    /// This is *not* not-found (2026-07-28: not-found is error -32602 with
    /// `data.uri`; see [`classify`](crate::classify)).
    pub fn is_empty(&self) -> bool {
        self.contents.is_empty()
    }

    /// The result as compact JSON (the `result` member of the response).
    /// Parsing it again with [`parse_read_result`] gives an equal value.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let (uri, mime, meta, extra) = match self {
            ResourceContents::Text(t) => (&t.uri, &t.mime_type, &t.meta, &t.extra),
            ResourceContents::Blob(b) => (&b.uri, &b.mime_type, &b.meta, &b.extra),
        };
        m.serialize_entry("uri", uri)?;
        if let Some(mt) = mime {
            m.serialize_entry("mimeType", mt)?;
        }
        match self {
            ResourceContents::Text(t) => m.serialize_entry("text", &t.text)?,
            ResourceContents::Blob(b) => m.serialize_entry("blob", &b.blob_base64())?,
        }
        if let Some(meta) = meta {
            m.serialize_entry("_meta", meta)?;
        }
        for (k, v) in extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for ReadResourceResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("contents", &self.contents)?;
        if !self.legacy_result_type {
            m.serialize_entry("resultType", self.result_type.as_str())?;
        }
        match (self.ttl_ms_negative, self.ttl_ms) {
            (Some(neg), _) => m.serialize_entry("ttlMs", &neg)?,
            (None, Some(t)) => m.serialize_entry("ttlMs", &t)?,
            (None, None) => {}
        }
        if let Some(c) = self.cache_scope {
            m.serialize_entry("cacheScope", c.as_str())?;
        }
        if let Some(meta) = &self.meta {
            m.serialize_entry("_meta", meta)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Why a `resources/read` result was rejected. Reported inside a
/// [`ContentsError`] with the entry index, uri and byte offset where they apply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentsErrorKind {
    /// Not strict JSON or over a limit (duplicate key, lone surrogate,
    /// syntax, size, depth); the offset is where it starts.
    Json(JsonErrorKind),
    /// The result (or the message) is not a JSON object.
    NotAnObject,
    /// [`parse_read_response`]: the message has no `result` member.
    NotAResponse,
    /// No `contents` member.
    MissingContents,
    /// No `contents` and `resultType` is `"input_required"`: not a read answer yet.
    InputRequired,
    /// `contents` is not an array.
    ContentsNotArray,
    /// An entry of `contents` is not an object.
    EntryNotObject,
    /// An entry has neither `text` nor `blob` (a server bug, never an empty document).
    NeitherTextNorBlob,
    /// An entry has both `text` and `blob` (never "text wins").
    BothTextAndBlob,
    /// An entry has no `uri`.
    MissingUri,
    /// An entry's `uri` is not a string.
    UriNotString,
    /// A member that must be a string is not (`field` names it: `text`,
    /// `blob`, `mimeType`, `resultType`, `cacheScope`).
    NotAString {
        /// The member name as on the wire.
        field: &'static str,
    },
    /// `_meta` (of the result or an entry) is not an object.
    MetaNotObject,
    /// `blob` is not canonical padded standard base64 (RFC 4648 §4). The
    /// inner error's offset is relative to the decoded blob string (in
    /// lenient mode: to the normalized string); the [`ContentsError::offset`]
    /// is always absolute in the input.
    InvalidBase64(Base64Error),
    /// `ttlMs` is not an integer (e.g. `1.5`, `"60"`).
    InvalidTtl,
    /// `cacheScope` is a string other than `"public"` / `"private"`.
    UnknownCacheScope {
        /// The value sent.
        value: String,
    },
}

impl fmt::Display for ContentsErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(k) => write!(f, "{k}"),
            Self::NotAnObject => f.write_str("not a JSON object"),
            Self::NotAResponse => f.write_str("message has no result member"),
            Self::MissingContents => f.write_str("missing contents"),
            Self::InputRequired => f.write_str("resultType is input_required (no contents yet)"),
            Self::ContentsNotArray => f.write_str("contents is not an array"),
            Self::EntryNotObject => f.write_str("contents entry is not an object"),
            Self::NeitherTextNorBlob => f.write_str("entry has neither text nor blob"),
            Self::BothTextAndBlob => f.write_str("entry has both text and blob"),
            Self::MissingUri => f.write_str("entry has no uri"),
            Self::UriNotString => f.write_str("uri is not a string"),
            Self::NotAString { field } => write!(f, "{field} is not a string"),
            Self::MetaNotObject => f.write_str("_meta is not an object"),
            Self::InvalidBase64(e) => write!(f, "blob: {e}"),
            Self::InvalidTtl => f.write_str("ttlMs is not an integer"),
            Self::UnknownCacheScope { value } => write!(f, "unknown cacheScope {value:?}"),
        }
    }
}

/// A rejected `resources/read` result: kind, entry index, uri, byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentsError {
    kind: ContentsErrorKind,
    index: Option<usize>,
    uri: Option<String>,
    offset: Option<usize>,
    /// For [`ContentsErrorKind::InvalidBase64`] in a blob with JSON escapes: the error said of
    /// the blob as recorded ([`crate::codec::RecordedBase64Error`]'s display), which the
    /// display shows instead of the kind's (whose character and offset are unescaped).
    recorded: Option<String>,
}

impl ContentsError {
    fn new(kind: ContentsErrorKind, offset: usize) -> Self {
        Self {
            kind,
            index: None,
            uri: None,
            offset: Some(offset),
            recorded: None,
        }
    }

    /// For a bad base64 `blob` that holds JSON escapes, the error said of the blob as recorded,
    /// as `mcptape check` says it ([`crate::codec::RecordedBase64Error`]: `invalid base64
    /// character `\u00e9` at offset 0 of the blob as recorded (byte 0xc3 once unescaped)`);
    /// `None` for any other error, and for a blob without escapes (the kind's display says it
    /// as recorded already).
    pub fn base64_as_recorded(&self) -> Option<&str> {
        self.recorded.as_deref()
    }

    fn at_entry(mut self, index: usize, uri: Option<&str>) -> Self {
        self.index = Some(index);
        self.uri = uri.map(str::to_owned);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ContentsErrorKind {
        &self.kind
    }

    /// Index (0-based) of the `contents` entry, when the error is in one.
    pub fn index(&self) -> Option<usize> {
        self.index
    }

    /// The entry's `uri`, when the error is in an entry whose uri was read.
    pub fn uri(&self) -> Option<&str> {
        self.uri.as_deref()
    }

    /// Byte offset into the input where the problem starts (for a bad blob:
    /// the first bad character; inside a JSON escape, its backslash).
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The same error with its offset moved by `base` bytes: for a `result`
    /// parsed on its own ([`parse_read_result`]) that sits at byte `base` of
    /// a larger input (a transcript line, a batch), so the offset counts from
    /// the start of that input.
    #[must_use]
    pub fn offset_by(mut self, base: usize) -> Self {
        self.offset = self.offset.map(|o| o.saturating_add(base));
        self
    }
}

impl From<JsonError> for ContentsError {
    fn from(e: JsonError) -> Self {
        Self::new(ContentsErrorKind::Json(e.kind().clone()), e.offset())
    }
}

impl fmt::Display for ContentsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.recorded {
            Some(r) => write!(f, "blob: {r}")?,
            None => write!(f, "{}", self.kind)?,
        }
        if let Some(i) = self.index {
            write!(f, " in contents[{i}]")?;
        }
        if let Some(u) = &self.uri {
            write!(f, " (uri {u:?})")?;
        }
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ContentsError {}

/// What lenient base64 decoding accepted in one blob (see [`parse_read_result_lenient`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeniencyKind {
    /// ASCII whitespace (space, tab, CR, LF) removed; `count` characters.
    StrippedWhitespace {
        /// Number of whitespace characters removed.
        count: usize,
    },
    /// URL-safe alphabet (`-`, `_`, RFC 4648 §5) mapped to `+`, `/`; `count` characters.
    UrlSafeAlphabet {
        /// Number of `-`/`_` characters mapped.
        count: usize,
    },
    /// Missing `=` padding added; `count` characters (1 or 2).
    AddedPadding {
        /// Number of `=` added.
        count: usize,
    },
}

/// For people: `3 whitespace characters stripped`, `2 URL-safe characters
/// (-, _) mapped to +, /`, `1 missing = padding added`.
impl fmt::Display for LeniencyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |n: &usize| if *n == 1 { "" } else { "s" };
        match self {
            LeniencyKind::StrippedWhitespace { count } => {
                write!(f, "{count} whitespace character{} stripped", s(count))
            }
            LeniencyKind::UrlSafeAlphabet { count } => write!(
                f,
                "{count} URL-safe character{} (-, _) mapped to +, /",
                s(count)
            ),
            LeniencyKind::AddedPadding { count } => {
                write!(f, "{count} missing = padding added")
            }
        }
    }
}

/// One accepted deviation, with the entry it happened in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leniency {
    /// Index (0-based) of the `contents` entry.
    pub index: usize,
    /// The entry's `uri`.
    pub uri: String,
    /// What was accepted.
    pub kind: LeniencyKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Strict,
    Lenient,
}

/// Parses the JSON of a `resources/read` `result` object strictly.
///
/// `bytes`: the `result` member's JSON (not the whole JSON-RPC message; for
/// that use [`parse_read_response`]). Errors: [`ContentsError`] (see
/// [`ContentsErrorKind`]) with byte offsets into `bytes`.
pub fn parse_read_result(bytes: &[u8]) -> Result<ReadResourceResult, ContentsError> {
    let text = json::check(bytes)?;
    let root = root_raw(text)?;
    parse_result_raw(text, root, Mode::Strict, &mut Vec::new())
}

/// [`parse_read_result`] of a `result` value that the envelope scanner
/// ([`crate::envelope::scan_frame`]) already read without error as part of
/// its message: that scan is the wire's one strict JSON lexer (the grammar
/// [`json::check`] applies, with the same
/// [`MAX_MESSAGE_BYTES`](crate::limits::MAX_MESSAGE_BYTES) and nesting
/// limits), so the check is not made a second time. For such a value: the
/// same result and the same errors as [`parse_read_result`] (offsets into
/// `text`). Only for such a value: any other text gets serde_json's reading,
/// which accepts some JSON the wire refuses (a repeated key, a lone
/// surrogate escape).
pub fn parse_scanned_read_result(text: &str) -> Result<ReadResourceResult, ContentsError> {
    let root = root_raw(text)?;
    parse_result_raw(text, root, Mode::Strict, &mut Vec::new())
}

/// Like [`parse_read_result`] but with opt-in lenient base64 in `blob`:
/// ASCII whitespace stripped, URL-safe `-`/`_` accepted, missing padding
/// added. Everything it accepted is returned as [`Leniency`] items (empty
/// when the input was strict). Non-zero trailing bits and other bad bytes are
/// still errors. Serializing the result gives canonical base64.
pub fn parse_read_result_lenient(
    bytes: &[u8],
) -> Result<(ReadResourceResult, Vec<Leniency>), ContentsError> {
    let text = json::check(bytes)?;
    let root = root_raw(text)?;
    let mut report = Vec::new();
    let r = parse_result_raw(text, root, Mode::Lenient, &mut report)?;
    Ok((r, report))
}

/// Parses a whole JSON-RPC response message (one transcript line) and
/// strictly parses its `result` as a `ReadResourceResult`; offsets are into
/// the whole message. Errors: as [`parse_read_result`], plus
/// [`ContentsErrorKind::NotAResponse`] when there is no `result` member.
/// The envelope itself is validated by [`envelope::scan_envelope`](crate::envelope::scan_envelope).
pub fn parse_read_response(bytes: &[u8]) -> Result<ReadResourceResult, ContentsError> {
    let text = json::check(bytes)?;
    let root = root_raw(text)?;
    let members =
        json::members(root).ok_or_else(|| ContentsError::new(ContentsErrorKind::NotAnObject, 0))?;
    let result = members
        .into_iter()
        .find(|(k, _)| k == "result")
        .map(|(_, v)| v)
        .ok_or_else(|| ContentsError::new(ContentsErrorKind::NotAResponse, 0))?;
    parse_result_raw(text, result, Mode::Strict, &mut Vec::new())
}

fn root_raw(text: &str) -> Result<&RawValue, ContentsError> {
    serde_json::from_str::<&RawValue>(text)
        .map_err(|_| ContentsError::new(ContentsErrorKind::NotAnObject, 0))
}

/// Reads a raw value that passed [`json::check`] into a `Value`. serde_json
/// accepts every such value (numbers are range-checked, depth is below its
/// limit); should it ever refuse one, that is an error, not a default.
fn value_of(base: &str, raw: &RawValue) -> Result<Value, ContentsError> {
    serde_json::from_str(raw.get()).map_err(|_| {
        ContentsError::new(
            ContentsErrorKind::Json(JsonErrorKind::Syntax {
                expected: "a value serde_json accepts",
            }),
            json::offset_in(base, raw.get()),
        )
    })
}

fn meta_of(base: &str, raw: &RawValue) -> Result<JsonObject, ContentsError> {
    match value_of(base, raw)? {
        Value::Object(m) => Ok(m),
        _ => Err(ContentsError::new(
            ContentsErrorKind::MetaNotObject,
            json::offset_in(base, raw.get()),
        )),
    }
}

fn string_of(base: &str, raw: &RawValue, field: &'static str) -> Result<String, ContentsError> {
    json::string(raw).ok_or_else(|| {
        ContentsError::new(
            ContentsErrorKind::NotAString { field },
            json::offset_in(base, raw.get()),
        )
    })
}

fn parse_result_raw(
    base: &str,
    raw: &RawValue,
    mode: Mode,
    report: &mut Vec<Leniency>,
) -> Result<ReadResourceResult, ContentsError> {
    let at = json::offset_in(base, raw.get());
    let members =
        json::members(raw).ok_or_else(|| ContentsError::new(ContentsErrorKind::NotAnObject, at))?;
    let mut out = ReadResourceResult::new(Vec::new());
    out.legacy_result_type = true;
    let mut contents = None;
    for (k, v) in members {
        let off = json::offset_in(base, v.get());
        match k.as_str() {
            "contents" => contents = Some(v),
            "resultType" => {
                out.result_type = ResultType::from_wire(string_of(base, v, "resultType")?);
                out.legacy_result_type = false;
            }
            "ttlMs" => {
                let n = match value_of(base, v)? {
                    Value::Number(n) => n,
                    _ => return Err(ContentsError::new(ContentsErrorKind::InvalidTtl, off)),
                };
                if let Some(u) = n.as_u64() {
                    out.ttl_ms = Some(u);
                } else if let Some(i) = n.as_i64() {
                    out.ttl_ms = Some(0);
                    out.ttl_ms_negative = Some(i);
                } else {
                    return Err(ContentsError::new(ContentsErrorKind::InvalidTtl, off));
                }
            }
            "cacheScope" => {
                out.cache_scope = Some(match string_of(base, v, "cacheScope")?.as_str() {
                    "public" => CacheScope::Public,
                    "private" => CacheScope::Private,
                    other => {
                        return Err(ContentsError::new(
                            ContentsErrorKind::UnknownCacheScope {
                                value: other.to_owned(),
                            },
                            off,
                        ));
                    }
                });
            }
            "_meta" => out.meta = Some(meta_of(base, v)?),
            _ => {
                out.extra.insert(k, value_of(base, v)?);
            }
        }
    }
    let Some(contents) = contents else {
        let kind = if out.result_type == ResultType::InputRequired {
            ContentsErrorKind::InputRequired
        } else {
            ContentsErrorKind::MissingContents
        };
        return Err(ContentsError::new(kind, at));
    };
    let entries = json::elements(contents).ok_or_else(|| {
        ContentsError::new(
            ContentsErrorKind::ContentsNotArray,
            json::offset_in(base, contents.get()),
        )
    })?;
    out.contents.reserve(entries.len());
    for (i, e) in entries.into_iter().enumerate() {
        out.contents.push(parse_entry(base, e, i, mode, report)?);
    }
    Ok(out)
}

fn parse_entry(
    base: &str,
    raw: &RawValue,
    index: usize,
    mode: Mode,
    report: &mut Vec<Leniency>,
) -> Result<ResourceContents, ContentsError> {
    let at = json::offset_in(base, raw.get());
    let members = json::members(raw).ok_or_else(|| {
        ContentsError::new(ContentsErrorKind::EntryNotObject, at).at_entry(index, None)
    })?;
    let (mut uri, mut mime, mut text, mut blob, mut meta) = (None, None, None, None, None);
    let mut extra = JsonObject::new();
    for (k, v) in members {
        match k.as_str() {
            "uri" => uri = Some(v),
            "mimeType" => mime = Some(v),
            "text" => text = Some(v),
            "blob" => blob = Some(v),
            "_meta" => meta = Some(v),
            _ => {
                let v = value_of(base, v).map_err(|e| e.at_entry(index, None))?;
                extra.insert(k, v);
            }
        }
    }
    let uri = match uri {
        None => {
            return Err(ContentsError::new(ContentsErrorKind::MissingUri, at).at_entry(index, None));
        }
        Some(u) => json::string(u).ok_or_else(|| {
            ContentsError::new(
                ContentsErrorKind::UriNotString,
                json::offset_in(base, u.get()),
            )
            .at_entry(index, None)
        })?,
    };
    let in_entry = |e: ContentsError| e.at_entry(index, Some(&uri));
    let mime_type = mime
        .map(|m| string_of(base, m, "mimeType"))
        .transpose()
        .map_err(in_entry)?;
    let meta = meta
        .map(|m| meta_of(base, m))
        .transpose()
        .map_err(in_entry)?;
    match (text, blob) {
        (Some(_), Some(_)) => Err(in_entry(ContentsError::new(
            ContentsErrorKind::BothTextAndBlob,
            at,
        ))),
        (None, None) => Err(in_entry(ContentsError::new(
            ContentsErrorKind::NeitherTextNorBlob,
            at,
        ))),
        (Some(t), None) => Ok(ResourceContents::Text(TextResourceContents {
            text: string_of(base, t, "text").map_err(in_entry)?,
            uri,
            mime_type,
            meta,
            extra,
        })),
        (None, Some(b)) => {
            let bytes = decode_blob(base, b, mode)
                .map_err(in_entry)
                .map(|(bytes, kinds)| {
                    report.extend(kinds.into_iter().map(|kind| Leniency {
                        index,
                        uri: uri.clone(),
                        kind,
                    }));
                    bytes
                })?;
            Ok(ResourceContents::Blob(BlobResourceContents {
                uri,
                mime_type,
                bytes,
                meta,
                extra,
            }))
        }
    }
}

/// Relative offset of a codec error inside the base64 text.
fn b64_offset(e: &Base64Error) -> usize {
    match *e {
        Base64Error::InvalidByte { offset, .. }
        | Base64Error::TrailingBits { offset }
        | Base64Error::InvalidPadding { offset } => offset,
        Base64Error::InvalidLength { len } => len,
    }
}

fn decode_blob(
    base: &str,
    raw: &RawValue,
    mode: Mode,
) -> Result<(Vec<u8>, Vec<LeniencyKind>), ContentsError> {
    let text = raw.get();
    let at = json::offset_in(base, text);
    if json::first_byte(raw) != b'"' {
        return Err(ContentsError::new(
            ContentsErrorKind::NotAString { field: "blob" },
            at,
        ));
    }
    let inner = &text[1..text.len() - 1];
    let inner_at = at + 1;
    let decoded_string;
    let b64: &[u8] = if inner.contains('\\') {
        decoded_string = json::string(raw).unwrap_or_default();
        decoded_string.as_bytes()
    } else {
        inner.as_bytes()
    };
    // Absolute input offset of byte `i` of the decoded blob string.
    let escaped = b64.len() != inner.len() || inner.contains('\\');
    let abs = |i: usize| {
        if escaped {
            inner_at + json::raw_offset_of(inner, i)
        } else {
            inner_at + i
        }
    };
    let fail = |e: Base64Error, rel: usize| {
        // Escaped: said as recorded too (an offset into `inner`, the escape as written), as
        // check says it. A lenient length error counts the normalised text: left as it is.
        let recorded = (escaped
            && (mode == Mode::Strict || !matches!(e, Base64Error::InvalidLength { .. })))
        .then(|| {
            let offset = json::raw_offset_of(inner, rel);
            crate::codec::RecordedBase64Error {
                character: match e {
                    Base64Error::InvalidByte { .. } => {
                        crate::codec::recorded_char_at(inner, offset)
                    }
                    _ => None,
                },
                error: e.clone(),
                offset,
                escaped: true,
            }
            .to_string()
        });
        let mut err = ContentsError::new(ContentsErrorKind::InvalidBase64(e), abs(rel));
        err.recorded = recorded;
        err
    };
    if mode == Mode::Strict {
        return codec_b64::decode(Path::Scalar, b64)
            .map(|v| (v, Vec::new()))
            .map_err(|e| {
                let rel = b64_offset(&e);
                fail(e, rel)
            });
    }
    // Lenient: normalise, remembering where each kept byte came from.
    let mut norm = Vec::with_capacity(b64.len() + 2);
    let mut origin = Vec::with_capacity(b64.len());
    let (mut ws, mut url) = (0usize, 0usize);
    for (i, &c) in b64.iter().enumerate() {
        let c = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                ws += 1;
                continue;
            }
            b'-' => {
                url += 1;
                b'+'
            }
            b'_' => {
                url += 1;
                b'/'
            }
            c => c,
        };
        norm.push(c);
        origin.push(i);
    }
    let mut pad = 0;
    if !norm.contains(&b'=') && matches!(norm.len() % 4, 2 | 3) {
        pad = 4 - norm.len() % 4;
        norm.resize(norm.len() + pad, b'=');
    }
    let bytes = codec_b64::decode(Path::Scalar, &norm).map_err(|e| {
        let rel = origin.get(b64_offset(&e)).copied().unwrap_or(b64.len());
        fail(e, rel)
    })?;
    let mut kinds = Vec::new();
    if ws > 0 {
        kinds.push(LeniencyKind::StrippedWhitespace { count: ws });
    }
    if url > 0 {
        kinds.push(LeniencyKind::UrlSafeAlphabet { count: url });
    }
    if pad > 0 {
        kinds.push(LeniencyKind::AddedPadding { count: pad });
    }
    Ok((bytes, kinds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanned_read_result_is_parse_read_result_for_strict_json() {
        for input in [
            r#"{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"hi"}]}"#,
            r#"{"contents":[{"uri":"file:///b","blob":"aGk="}],"ttlMs":-5,"cacheScope":"public"}"#,
            r#"{"contents":[{"uri":"file:///c","blob":"aGk"}]}"#,
            r#"{"contents":[{"text":"no uri"}]}"#,
            r#"{"contents":{}}"#,
            r#"{"resultType":"complete"}"#,
            r#"{"contents":[],"cacheScope":"nowhere"}"#,
            "[]",
        ] {
            assert_eq!(
                parse_scanned_read_result(input),
                parse_read_result(input.as_bytes()),
                "{input}"
            );
        }
        let e = parse_scanned_read_result(r#"{"contents":[{"text":"no uri"}]}"#).unwrap_err();
        assert_eq!(e.offset(), Some(13));
    }

    /// The fresh-user report saw `accepted StrippedWhitespace { count: 3 }`.
    #[test]
    fn leniency_kind_display_is_for_people() {
        assert_eq!(
            LeniencyKind::StrippedWhitespace { count: 3 }.to_string(),
            "3 whitespace characters stripped"
        );
        assert_eq!(
            LeniencyKind::UrlSafeAlphabet { count: 1 }.to_string(),
            "1 URL-safe character (-, _) mapped to +, /"
        );
        assert_eq!(
            LeniencyKind::AddedPadding { count: 2 }.to_string(),
            "2 missing = padding added"
        );
    }
}
