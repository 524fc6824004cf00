//! Shared error types of the wire layer, each carrying a kind and a position.
//!
//! * [`JsonError`] — the input is not strict JSON (RFC 8259): syntax, invalid
//!   UTF-8, a duplicate object key, a lone surrogate escape, or one of the
//!   [`limits`](crate::limits) exceeded. Position: byte offset into the input.
//! * [`WireError`] — a JSON-RPC 2.0 envelope error (see [`envelope`](crate::envelope)).
//!   Position: byte offset into the input and, inside a batch, the element index.
//!
//! The `resources/read` contents errors live next to their parser:
//! [`ContentsError`](crate::resources::ContentsError).

use std::fmt;

/// Why bytes are not strict JSON (RFC 8259) or exceed a wire limit.
///
/// Every variant is reported inside a [`JsonError`], whose
/// [`offset`](JsonError::offset) is the byte offset into the input where the
/// problem starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input is longer than [`MAX_MESSAGE_BYTES`](crate::limits::MAX_MESSAGE_BYTES).
    /// `len` and `max` are in bytes; the offset is `max` (the first byte past the limit).
    #[error("message is {len} bytes, more than the limit of {max} bytes")]
    MessageTooLarge {
        /// Length of the input in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// An array or object opens deeper than
    /// [`MAX_NESTING_DEPTH`](crate::limits::MAX_NESTING_DEPTH) levels; the
    /// offset is the `[` or `{` that goes one level too deep.
    #[error("nesting deeper than the limit of {max} levels")]
    NestingTooDeep {
        /// The limit in levels (the top-level value counts as level 1).
        max: usize,
    },
    /// The input is not valid UTF-8 (RFC 8259 §8.1); the offset is the first invalid byte.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// The same key appears twice in one object (RFC 8259 §4 leaves this
    /// undefined; we reject it instead of "last wins"). The offset is the
    /// opening quote of the second occurrence.
    #[error("duplicate key {key:?} in object")]
    DuplicateKey {
        /// The decoded key.
        key: String,
    },
    /// A `\uD800`–`\uDFFF` escape that is not part of a valid surrogate pair
    /// (RFC 8259 §8.2: such strings cannot be decoded to Unicode text). The
    /// offset is the backslash of the offending escape.
    #[error("lone surrogate escape \\u{code_unit:04x}")]
    LoneSurrogate {
        /// The UTF-16 code unit of the lone surrogate.
        code_unit: u16,
    },
    /// A number too large for an `f64` (e.g. `1e400`; RFC 8259 §6 lets
    /// implementations limit range). The offset is the number's first byte.
    #[error("number out of range")]
    NumberOutOfRange,
    /// Any other violation of the RFC 8259 grammar; `expected` says what the
    /// parser wanted at the offset.
    #[error("JSON syntax error: expected {expected}")]
    Syntax {
        /// What the grammar expected at this point.
        expected: &'static str,
    },
}

/// Strict-JSON error: a [`JsonErrorKind`] at a byte offset into the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct JsonError {
    kind: JsonErrorKind,
    offset: usize,
}

impl JsonError {
    /// Builds an error of `kind` at byte `offset`.
    pub fn new(kind: JsonErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// What went wrong.
    pub fn kind(&self) -> &JsonErrorKind {
        &self.kind
    }

    /// Byte offset into the input where the problem starts.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

/// Why a message is not a valid JSON-RPC 2.0 message
/// (JSON-RPC 2.0 specification §4–§6; MCP 2026-07-28 `schema.ts`, "JSON-RPC").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireErrorKind {
    /// The bytes are not strict JSON or exceed a limit (JSON-RPC "Parse error", -32700).
    #[error(transparent)]
    Json(JsonErrorKind),
    /// The message is not a JSON object (nor an array of them).
    #[error("message is not a JSON object")]
    NotAnObject,
    /// A batch (JSON array) with no element: JSON-RPC 2.0 §6 makes it an Invalid Request.
    #[error("empty batch")]
    EmptyBatch,
    /// `"jsonrpc"` is missing or is not exactly `"2.0"`.
    #[error("missing or wrong \"jsonrpc\" member (must be \"2.0\")")]
    BadVersion,
    /// `"id": null` on a request: a request id is a string or an integer
    /// (MCP `RequestId = string | number`); only a *missing* id makes a notification.
    #[error("request id is null (omit \"id\" for a notification)")]
    NullRequestId,
    /// The id is neither a string nor an integer literal (e.g. `1.5`, `1.0`,
    /// `1e2`, `-0`, `true`); an integer of any size is an id, kept as its raw
    /// text (MCP `RequestId = string | number`, JSON-RPC 2.0 §4).
    #[error("id must be a string or an integer literal")]
    InvalidId,
    /// A response (`result`) without an id, or with `"id": null`.
    #[error("response has no id")]
    MissingResponseId,
    /// `"method"` is present but not a string.
    #[error("method is not a string")]
    MethodNotString,
    /// `"params"` is present but neither an object nor an array (JSON-RPC 2.0 §4.2).
    #[error("params must be an object or an array")]
    InvalidParams,
    /// The message has both `result` and `error`, or `method` together with one of them.
    #[error("message mixes {0}")]
    Ambiguous(&'static str),
    /// The message has none of `method`, `result`, `error`.
    #[error("message has no method, result or error")]
    UnknownShape,
    /// The `error` member is not an object with an integer `code` and a string `message`.
    #[error("invalid error object: {0}")]
    InvalidErrorObject(&'static str),
    /// A member JSON-RPC 2.0 does not define (e.g. `"foo"` beside `"method"`).
    #[error("unknown member {0:?}")]
    UnknownMember(String),
}

/// JSON-RPC envelope error: a [`WireErrorKind`] with its position (byte
/// offset into the input, and batch element index when inside a batch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    kind: WireErrorKind,
    offset: Option<usize>,
    index: Option<usize>,
}

impl WireError {
    /// Builds an error of `kind` at byte `offset` (if known).
    pub fn new(kind: WireErrorKind, offset: Option<usize>) -> Self {
        Self {
            kind,
            offset,
            index: None,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &WireErrorKind {
        &self.kind
    }

    /// Byte offset into the parsed input where the problem starts, when known.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// Index of the batch element (0-based) when the error is inside a batch.
    pub fn index(&self) -> Option<usize> {
        self.index
    }

    /// JSON-RPC 2.0 error code a server would answer with:
    /// -32700 (Parse error) for [`WireErrorKind::Json`], -32600 (Invalid Request) otherwise.
    pub fn jsonrpc_code(&self) -> i64 {
        match self.kind {
            WireErrorKind::Json(_) => -32700,
            _ => -32600,
        }
    }

    pub(crate) fn with_index(mut self, index: usize) -> Self {
        self.index = Some(index);
        self
    }
}

impl From<JsonError> for WireError {
    fn from(e: JsonError) -> Self {
        Self::new(WireErrorKind::Json(e.kind), Some(e.offset))
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(i) = self.index {
            write!(f, " in batch element {i}")?;
        }
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        Ok(())
    }
}

impl std::error::Error for WireError {}
