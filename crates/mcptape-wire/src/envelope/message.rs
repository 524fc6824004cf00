//! The owned typed view of one message ([`Message`]) and the request id
//! ([`RequestId`], the id's raw JSON text), decoded on demand from the
//! ranges of [`scan_envelope`](super::scan_envelope) (MCP 2026-07-28
//! `schema.ts`, "JSON-RPC": `JSONRPCRequest`, `JSONRPCNotification`,
//! `JSONRPCResultResponse`, `JSONRPCErrorResponse`), and the same types as
//! values to write (`Serialize`: `"jsonrpc": "2.0"` first, the id as sent).

use std::cmp::Ordering;
use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{WireError, WireErrorKind};

/// A JSON-RPC request id (MCP `RequestId = string | number`) as its raw JSON
/// text, exactly as sent: `7`, `"req-7"`, `18446744073709551616`.
///
/// JSON-RPC 2.0 §4 sets no range on an integer id, so an id past `u64` is an
/// id like any other and is written back byte for byte. Ids compare by
/// their text: `"1"` (string) and `1` (number) are different ids, and so are
/// `"a"` and `"\u0061"` (a peer echoes the id it was sent). An integer id
/// has integer form (`-?[0-9]+`, no fraction, no exponent; `-0` is refused
/// as serde_json and JavaScript read it as a float). [`Display`](fmt::Display)
/// is the raw text. Ordering: integers (by value) before strings (by text).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RequestId(IdText);

/// The raw text of an id ([`RequestId`]; `mcptape check` keys its request
/// table by it too): text of at most [`IdText::INLINE`] bytes is held in
/// place (the ids peers send, counters and short strings: no allocation and
/// no free per message), longer text on the heap. Compared and hashed by
/// its bytes (as `str` hashes them).
#[derive(Clone)]
pub enum IdText {
    /// Text of at most [`IdText::INLINE`] bytes: `buf[..len]`.
    Inline {
        /// Bytes used.
        len: u8,
        /// The text, then zeros.
        buf: [u8; IdText::INLINE],
    },
    /// Longer text.
    Heap(Box<str>),
}

impl IdText {
    /// Bytes held in place: 22 (the enum stays 24 bytes, a boxed `str` and
    /// its tag).
    pub const INLINE: usize = 22;

    /// `s`, in place when it fits.
    pub fn new(s: &str) -> IdText {
        if s.len() <= Self::INLINE {
            let mut buf = [0u8; Self::INLINE];
            buf[..s.len()].copy_from_slice(s.as_bytes());
            // At most INLINE (22) bytes: fits a u8.
            IdText::Inline {
                len: s.len() as u8,
                buf,
            }
        } else {
            IdText::Heap(s.into())
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match self {
            IdText::Inline { len, buf } => {
                // Built from a `&str` cut at its length: always UTF-8.
                std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or_default()
            }
            IdText::Heap(s) => s,
        }
    }

    /// The text's bytes (what comparing and hashing read: no UTF-8 check).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            IdText::Inline { len, buf } => buf.get(..usize::from(*len)).unwrap_or_default(),
            IdText::Heap(s) => s.as_bytes(),
        }
    }
}

impl PartialEq for IdText {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for IdText {}

impl std::hash::Hash for IdText {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // As `str` hashes: the bytes, then 0xff (a prefix hashes apart).
        h.write(self.as_bytes());
        h.write_u8(0xff);
    }
}

impl fmt::Debug for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

impl std::ops::Deref for IdText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({})", &*self.0)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Ord for RequestId {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_string(), other.is_string()) {
            (false, true) => Ordering::Less,
            (true, false) => Ordering::Greater,
            (true, true) => (*self.0).cmp(&*other.0),
            (false, false) => {
                let neg = |t: &str| t.starts_with('-');
                let (a, b) = (&*self.0, &*other.0);
                let by_magnitude = |x: &str, y: &str| {
                    let (x, y) = (x.trim_start_matches('-'), y.trim_start_matches('-'));
                    x.len().cmp(&y.len()).then_with(|| x.cmp(y))
                };
                match (neg(a), neg(b)) {
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    (false, false) => by_magnitude(a, b),
                    (true, true) => by_magnitude(b, a),
                }
            }
        }
    }
}

/// An unsigned integer id, e.g. a client's request counter (`u64::MAX`
/// included: ids are integer literals of any size, kept as text).
impl From<u64> for RequestId {
    fn from(n: u64) -> Self {
        RequestId(IdText::new(&n.to_string()))
    }
}

impl PartialOrd for RequestId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl RequestId {
    /// An integer id, e.g. `7`.
    pub fn number(n: i64) -> Self {
        RequestId(IdText::new(&n.to_string()))
    }

    /// A string id, e.g. `req-7` (written `"req-7"`, JSON-escaped).
    pub fn string(s: &str) -> Self {
        RequestId(IdText::new(&Value::String(s.to_owned()).to_string()))
    }

    /// The id of a token the envelope scan validated (a string token,
    /// quotes included, or an integer literal).
    pub(crate) fn from_token(token: &[u8]) -> Self {
        // A short ASCII token (counters, short string ids) is held in place
        // as it lies: ASCII is UTF-8, no further check.
        if token.len() <= IdText::INLINE && token.is_ascii() {
            let mut buf = [0u8; IdText::INLINE];
            buf[..token.len()].copy_from_slice(token);
            // At most INLINE (22) bytes: fits a u8.
            return RequestId(IdText::Inline {
                len: token.len() as u8,
                buf,
            });
        }
        // The lexer validated the token: `from_utf8` is the check that
        // passes (no `Cow` or replacement scan); lossy only as the fallback.
        match std::str::from_utf8(token) {
            Ok(t) => RequestId(IdText::new(t)),
            Err(_) => RequestId(IdText::new(&String::from_utf8_lossy(token))),
        }
    }

    /// Reads an id from its JSON text (surrounding JSON whitespace allowed).
    ///
    /// Errors: [`WireErrorKind::NullRequestId`] for `null`,
    /// [`WireErrorKind::InvalidId`] for anything else that is not one
    /// strict JSON string token or integer literal (a float, `-0`, a
    /// boolean, an array, an object, broken text). The errors carry no offset.
    pub fn from_json(text: &str) -> Result<Self, WireError> {
        let t = text.trim_matches([' ', '\t', '\r', '\n']);
        match t.as_bytes().first() {
            Some(b'n') if t == "null" => Err(WireError::new(WireErrorKind::NullRequestId, None)),
            Some(b'"') if super::is_string_token(t.as_bytes()) => Ok(RequestId(IdText::new(t))),
            Some(b'-' | b'0'..=b'9') if super::is_integer_literal(t.as_bytes()) => {
                Ok(RequestId(IdText::new(t)))
            }
            _ => Err(WireError::new(WireErrorKind::InvalidId, None)),
        }
    }

    /// The id's JSON text as sent, e.g. `7` or `"7"`.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// `true` for a string id.
    pub fn is_string(&self) -> bool {
        self.0.starts_with('"')
    }

    /// An integer id in `i64` range as that integer; `None` for a string id
    /// or an integer past `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_string() {
            return None;
        }
        self.0.parse().ok()
    }

    /// A string id's text, unescaped; `None` for an integer id.
    pub fn as_str(&self) -> Option<std::borrow::Cow<'_, str>> {
        if !self.is_string() {
            return None;
        }
        super::decode_string(self.0.as_bytes())
    }

    /// The id as a JSON value (`7` or `"7"`). An integer past `u64` has no
    /// exact `serde_json::Value` (this build has no arbitrary precision): it
    /// comes out as the nearest `f64`; write the id with its `Serialize`
    /// (raw text) or [`as_json`](Self::as_json) where it must stay exact.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// Reads an id from a JSON value: a string, or an integer (`i64` or
    /// `u64`). Errors: [`WireErrorKind::NullRequestId`] for `null`,
    /// [`WireErrorKind::InvalidId`] for floats, booleans, arrays and
    /// objects. The errors carry no offset.
    pub fn from_value(v: &Value) -> Result<Self, WireError> {
        match v {
            Value::String(s) => Ok(RequestId::string(s)),
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                Ok(RequestId(IdText::new(&n.to_string())))
            }
            Value::Null => Err(WireError::new(WireErrorKind::NullRequestId, None)),
            _ => Err(WireError::new(WireErrorKind::InvalidId, None)),
        }
    }
}

/// Writes the raw text (an id past `u64` stays exact in JSON text).
impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match RawValue::from_string(self.0.to_string()) {
            Ok(raw) => raw.serialize(s),
            Err(_) => s.serialize_str(&self.0),
        }
    }
}

/// A request: has `method` and a non-null `id` (MCP `JSONRPCRequest`).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id, echoed by the response.
    pub id: RequestId,
    /// The method name, e.g. `"resources/read"`.
    pub method: String,
    /// `params`, an object or an array, when present.
    pub params: Option<Value>,
}

/// A notification: has `method` and no `id` key at all (MCP `JSONRPCNotification`).
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `"notifications/cancelled"`.
    pub method: String,
    /// `params`, an object or an array, when present.
    pub params: Option<Value>,
}

/// A successful response (MCP `JSONRPCResultResponse`).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The `result` member, any JSON value (for `resources/read`, parse its
    /// bytes with [`resources::parse_read_result`](crate::resources::parse_read_result)).
    pub result: Value,
}

/// The `error` member of an error response (MCP `Error`, JSON-RPC 2.0 §5.1).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// The error code, e.g. -32602 (Invalid params). Must be an integer on the wire.
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Sender-defined details, e.g. `{"uri": "..."}` for a not-found read.
    pub data: Option<Value>,
}

/// For people: `-32601 "Method not found"`, then ` data {…}` (compact JSON)
/// when `data` is present, e.g.
/// `-32602 "Resource not found" data {"uri":"docs://gone"}`. The message is
/// quoted with Rust string escapes, so control characters a peer sent stay
/// visible.
impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.code, self.message)?;
        if let Some(data) = &self.data {
            write!(f, " data {data}")?;
        }
        Ok(())
    }
}

/// An error response (MCP `JSONRPCErrorResponse`). `id` is `None` when the
/// member is missing or `null` (JSON-RPC 2.0 §5: the request id could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, if known.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

/// One JSON-RPC 2.0 message, discriminated explicitly by its members.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// `method` + `id`.
    Request(Request),
    /// `method`, no `id` key.
    Notification(Notification),
    /// `result` + `id`.
    Response(Response),
    /// `error` (+ `id` when known).
    Error(ErrorResponse),
}

/// What one input held: a single message or a batch (JSON-RPC 2.0 §6).
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A single message (a JSON object).
    Single(Message),
    /// A JSON array: one result per element, in order. Each element error
    /// carries its [`index`](WireError::index) and byte offset.
    Batch(Vec<Result<Message, WireError>>),
}

impl Message {
    /// The method of a request or notification; `None` for responses.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The id of a request, response, or error response (when known).
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Response(r) => Some(&r.id),
            Message::Error(e) => e.id.as_ref(),
            Message::Notification(_) => None,
        }
    }

    /// The message as a JSON value, with `"jsonrpc": "2.0"` first (an id
    /// past `u64` becomes an `f64` here: see [`RequestId::to_value`]).
    pub fn to_value(&self) -> Value {
        // Serializing string-keyed maps of `Value`s cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The message as compact JSON text (one line, suitable for stdio
    /// framing; the id as sent). [`parse_message`](super::parse_message) of
    /// this text gives back an equal message.
    pub fn to_json(&self) -> String {
        // Serializing string-keyed maps of `Value`s cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Message::Request(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                m.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("result", &r.result)?;
            }
            Message::Error(e) => {
                m.serialize_entry("id", &e.id)?;
                m.serialize_entry("error", &e.error)?;
            }
        }
        m.end()
    }
}

impl Serialize for ErrorObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("code", &self.code)?;
        m.serialize_entry("message", &self.message)?;
        if let Some(d) = &self.data {
            m.serialize_entry("data", d)?;
        }
        m.end()
    }
}

/// `true` if `text` is a JSON-RPC 2.0 message or batch (a JSON object with
/// `"jsonrpc":"2.0"`, or a non-empty array of them), surrounding JSON
/// whitespace allowed. A quick classification (no envelope check, no strict
/// JSON rules): the SSE `data:` and HAR body test of the transport, check and
/// export crates. Source: JSON-RPC 2.0 §4, §6.
pub fn is_json_rpc(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        jsonrpc: std::borrow::Cow<'a, str>,
    }
    match text.trim_start().as_bytes().first() {
        Some(b'{') => serde_json::from_str::<Probe<'_>>(text).is_ok_and(|p| p.jsonrpc == "2.0"),
        Some(b'[') => serde_json::from_str::<Vec<Probe<'_>>>(text)
            .is_ok_and(|v| !v.is_empty() && v.iter().all(|p| p.jsonrpc == "2.0")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids of 22 bytes (`IdText::INLINE`) are held in place, one byte more
    /// on the heap; both read back as sent and compare and hash by their text.
    #[test]
    fn id_text_at_the_inline_limit_and_one_past_reads_back_as_sent() {
        use std::hash::BuildHasher;
        let at = format!("\"{}\"", "a".repeat(IdText::INLINE - 2));
        let past = format!("\"{}\"", "a".repeat(IdText::INLINE - 1));
        assert_eq!((at.len(), past.len()), (22, 23));
        assert!(matches!(IdText::new(&at), IdText::Inline { len: 22, .. }));
        assert!(matches!(IdText::new(&past), IdText::Heap(_)));
        let hasher = std::hash::RandomState::new();
        for t in [
            at.as_str(),
            past.as_str(),
            "18446744073709551616",
            "-7",
            r#""é\u00e9""#,
            "",
        ] {
            let text = IdText::new(t);
            assert_eq!((text.as_str(), text.as_bytes()), (t, t.as_bytes()));
            assert_eq!(hasher.hash_one(&text), hasher.hash_one(t), "{t}");
            if !t.is_empty() {
                let id = RequestId::from_json(t).unwrap();
                assert_eq!((id.as_json(), id.to_string()), (t, t.to_owned()));
                assert_eq!(RequestId::from_token(t.as_bytes()), id);
            }
        }
        assert_ne!(IdText::new(&at), IdText::new(&past));
        assert_ne!(RequestId::from_json("1").unwrap(), RequestId::string("1"));
        assert_eq!(RequestId::string("a").as_json(), r#""a""#);
    }

    /// The fresh-user report saw `Error(ErrorObject { code: -32601, … })`.
    #[test]
    fn error_object_display_is_code_quoted_message_and_compact_data() {
        let e = ErrorObject {
            code: -32601,
            message: "mcptape serve: method server/discover was not recorded".into(),
            data: Some(serde_json::json!({"method": "server/discover"})),
        };
        assert_eq!(
            e.to_string(),
            r#"-32601 "mcptape serve: method server/discover was not recorded" data {"method":"server/discover"}"#
        );
        let e = ErrorObject {
            code: -32603,
            message: "bad\nline".into(),
            data: None,
        };
        assert_eq!(e.to_string(), r#"-32603 "bad\nline""#);
    }

    #[test]
    fn ids_order_integers_by_value_before_strings() {
        let mut ids = [
            RequestId::string("a"),
            RequestId::number(10),
            RequestId::from_json("18446744073709551616").unwrap(),
            RequestId::number(-2),
            RequestId::number(9),
            RequestId::number(-10),
        ];
        ids.sort();
        let text: Vec<String> = ids.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            ["-10", "-2", "9", "10", "18446744073709551616", "\"a\""]
        );
    }
}
