//! JSON-RPC 2.0 envelope as MCP uses it (JSON-RPC 2.0 specification §4–§6;
//! MCP 2026-07-28 `schema.ts`, "JSON-RPC": `JSONRPCRequest`,
//! `JSONRPCNotification`, `JSONRPCResultResponse`, `JSONRPCErrorResponse`).
//!
//! [`parse`] takes the bytes of one message (one stdio line, one HTTP body,
//! one SSE `data`) and returns a [`Frame`]: one [`Message`], or a batch (a
//! JSON array) whose elements are parsed one by one so a bad element does not
//! hide the good ones.
//!
//! Rules enforced, each with its own [`WireErrorKind`]:
//! * the bytes are strict JSON within the [`limits`](crate::limits)
//!   (duplicate keys, lone surrogates rejected: see [`json::check`]);
//! * `"jsonrpc": "2.0"` is present;
//! * only a *missing* `id` makes a notification; `"id": null` on a request is
//!   an Invalid Request ([`WireErrorKind::NullRequestId`]);
//! * an id is a string or an integer in `i64` range, kept exactly: `"1"` and
//!   `1` are different ids, and `1.0` is rejected (no float round trip);
//! * a message has exactly one of `method` / `result` / `error`;
//! * `params` is an object or an array;
//! * no member outside the JSON-RPC 2.0 set.

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{WireError, WireErrorKind};
use crate::json;

/// A JSON-RPC request id (MCP `RequestId = string | number`), kept exactly as sent.
///
/// `Number` holds integers in `i64` range only; `"1"` (string) and `1`
/// (number) are different ids. [`Display`](fmt::Display) renders the JSON
/// form: `1` vs `"1"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id, e.g. `7`.
    Number(i64),
    /// A string id, e.g. `"req-7"`.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{}", Value::String(s.clone())),
        }
    }
}

impl RequestId {
    /// The id as a JSON value (`7` or `"7"`).
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }

    /// Reads an id from a JSON value. Errors: [`WireErrorKind::NullRequestId`]
    /// for `null`, [`WireErrorKind::InvalidId`] for floats, integers outside
    /// `i64`, booleans, arrays and objects. The errors carry no offset.
    pub fn from_value(v: &Value) -> Result<Self, WireError> {
        match v {
            Value::String(s) => Ok(RequestId::String(s.clone())),
            Value::Number(n) => n
                .as_i64()
                .map(RequestId::Number)
                .ok_or_else(|| WireError::new(WireErrorKind::InvalidId, None)),
            Value::Null => Err(WireError::new(WireErrorKind::NullRequestId, None)),
            _ => Err(WireError::new(WireErrorKind::InvalidId, None)),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
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
    /// The `result` member, any JSON value (for `resources/read`, parse it
    /// with [`resources::parse_read_result`](crate::resources::parse_read_result)).
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

    /// The message as a JSON value, with `"jsonrpc": "2.0"` first.
    pub fn to_value(&self) -> Value {
        // Serializing string-keyed maps of `Value`s cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The message as compact JSON text (one line, suitable for stdio framing).
    /// [`parse`] of this text gives back an equal message.
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

/// Parses the bytes of one JSON-RPC message or batch.
///
/// Errors ([`WireError`], with byte offset): any [`JsonErrorKind`](crate::error::JsonErrorKind)
/// from the strict JSON check (size and depth limits, duplicate keys, lone
/// surrogates, syntax), [`WireErrorKind::NotAnObject`], [`WireErrorKind::EmptyBatch`],
/// or the envelope errors of a single message. Inside a batch, element errors
/// are returned in place (with their index), not as the overall result.
pub fn parse(bytes: &[u8]) -> Result<Frame, WireError> {
    let (text, root, items) = frame_root(bytes)?;
    if let Some(items) = items {
        let out = items
            .into_iter()
            .enumerate()
            .map(|(i, raw)| message_at(text, raw, true).map_err(|e| e.with_index(i)))
            .collect();
        return Ok(Frame::Batch(out));
    }
    message_at(text, root, true).map(Frame::Single)
}

/// A checked frame: its text, its root value, and a batch's elements.
type FrameRoot<'a> = (&'a str, &'a RawValue, Option<Vec<&'a RawValue>>);

/// The strict-JSON-checked text of a frame, its root value and, for a batch,
/// its (non-empty) elements. Errors: as [`parse`] before any message is read
/// (strict JSON errors, [`WireErrorKind::NotAnObject`] at offset 0,
/// [`WireErrorKind::EmptyBatch`] at the `[`).
fn frame_root(bytes: &[u8]) -> Result<FrameRoot<'_>, WireError> {
    let text = json::check(bytes)?;
    let root: &RawValue = serde_json::from_str(text.trim_start_matches([' ', '\t', '\r', '\n']))
        .map_err(|_| WireError::new(WireErrorKind::NotAnObject, Some(0)))?;
    let items = json::elements(root);
    if items.as_ref().is_some_and(Vec::is_empty) {
        return Err(WireError::new(
            WireErrorKind::EmptyBatch,
            Some(json::offset_in(text, root.get())),
        ));
    }
    Ok((text, root, items))
}

/// Validates `bytes` exactly as [`parse`] does (same rules, same errors) but
/// builds no `serde_json::Value` of a response's `result`: a 160 MB
/// `resources/read` response costs a scan, not a copy. Returns one entry per
/// message (one for a single message, one per batch element), `Err` for an
/// element that is not a valid message.
///
/// Errors: as [`parse`] for the whole frame.
pub fn validate(bytes: &[u8]) -> Result<Vec<Result<(), WireError>>, WireError> {
    let (text, root, items) = frame_root(bytes)?;
    if let Some(items) = items {
        return Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, raw)| {
                message_at(text, raw, false)
                    .map(drop)
                    .map_err(|e| e.with_index(i))
            })
            .collect());
    }
    message_at(text, root, false).map(|_| vec![Ok(())])
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

/// Parses the bytes of one JSON-RPC message; a batch is an error
/// ([`WireErrorKind::NotAnObject`] at the `[`). Errors: as [`parse`].
pub fn parse_message(bytes: &[u8]) -> Result<Message, WireError> {
    match parse(bytes)? {
        Frame::Single(m) => Ok(m),
        Frame::Batch(_) => Err(WireError::new(WireErrorKind::NotAnObject, Some(0))),
    }
}

/// One message; with `keep_result` false a response's `result` is checked to be
/// valid JSON (it already is, after [`json::check`]) but kept as `null`.
fn message_at(base: &str, raw: &RawValue, keep_result: bool) -> Result<Message, WireError> {
    let at = json::offset_in(base, raw.get());
    let members =
        json::members(raw).ok_or_else(|| WireError::new(WireErrorKind::NotAnObject, Some(at)))?;
    let mut version = None;
    let (mut id, mut method, mut params, mut result, mut error) = (None, None, None, None, None);
    for (k, v) in members {
        let slot = match k.as_str() {
            "jsonrpc" => &mut version,
            "id" => &mut id,
            "method" => &mut method,
            "params" => &mut params,
            "result" => &mut result,
            "error" => &mut error,
            _ => {
                return Err(WireError::new(WireErrorKind::UnknownMember(k), Some(at)));
            }
        };
        *slot = Some(v);
    }
    let err_at = |kind, raw: Option<&RawValue>| {
        let off = raw.map_or(at, |r| json::offset_in(base, r.get()));
        WireError::new(kind, Some(off))
    };
    let value = |raw: &RawValue| serde_json::from_str::<Value>(raw.get());
    if version.and_then(json::string).as_deref() != Some("2.0") {
        return Err(err_at(WireErrorKind::BadVersion, version));
    }
    let read_id = |raw: &RawValue| -> Result<RequestId, WireError> {
        let v = value(raw).map_err(|_| err_at(WireErrorKind::InvalidId, Some(raw)))?;
        RequestId::from_value(&v).map_err(|e| err_at(e.kind().clone(), Some(raw)))
    };
    match (method, result, error) {
        (Some(m), None, None) => {
            let method =
                json::string(m).ok_or_else(|| err_at(WireErrorKind::MethodNotString, Some(m)))?;
            let params = match params {
                None => None,
                Some(p) if matches!(json::first_byte(p), b'{' | b'[') => {
                    Some(value(p).map_err(|_| err_at(WireErrorKind::InvalidParams, Some(p)))?)
                }
                Some(p) => return Err(err_at(WireErrorKind::InvalidParams, Some(p))),
            };
            match id {
                None => Ok(Message::Notification(Notification { method, params })),
                Some(raw) => Ok(Message::Request(Request {
                    id: read_id(raw)?,
                    method,
                    params,
                })),
            }
        }
        (None, Some(r), None) => {
            if let Some(p) = params {
                return Err(err_at(
                    WireErrorKind::Ambiguous("params with result"),
                    Some(p),
                ));
            }
            let id = match id {
                None => return Err(err_at(WireErrorKind::MissingResponseId, None)),
                Some(raw) if raw.get() == "null" => {
                    return Err(err_at(WireErrorKind::MissingResponseId, Some(raw)));
                }
                Some(raw) => read_id(raw)?,
            };
            let result = if keep_result {
                value(r).map_err(|_| err_at(WireErrorKind::UnknownShape, Some(r)))?
            } else {
                Value::Null
            };
            Ok(Message::Response(Response { id, result }))
        }
        (None, None, Some(e)) => {
            if let Some(p) = params {
                return Err(err_at(
                    WireErrorKind::Ambiguous("params with error"),
                    Some(p),
                ));
            }
            let id = match id {
                None => None,
                Some(raw) if raw.get() == "null" => None,
                Some(raw) => Some(read_id(raw)?),
            };
            let error = error_object(base, e)?;
            Ok(Message::Error(ErrorResponse { id, error }))
        }
        (Some(_), _, _) => Err(err_at(
            WireErrorKind::Ambiguous("method with result or error"),
            None,
        )),
        (None, Some(_), Some(_)) => Err(err_at(WireErrorKind::Ambiguous("result and error"), None)),
        (None, None, None) => Err(err_at(WireErrorKind::UnknownShape, None)),
    }
}

fn error_object(base: &str, raw: &RawValue) -> Result<ErrorObject, WireError> {
    let at = json::offset_in(base, raw.get());
    let bad = |what| WireError::new(WireErrorKind::InvalidErrorObject(what), Some(at));
    let members = json::members(raw).ok_or_else(|| bad("not an object"))?;
    let (mut code, mut message, mut data) = (None, None, None);
    for (k, v) in members {
        match k.as_str() {
            "code" => code = Some(v),
            "message" => message = Some(v),
            "data" => data = Some(v),
            _ => {
                return Err(WireError::new(
                    WireErrorKind::UnknownMember(k),
                    Some(json::offset_in(base, v.get())),
                ));
            }
        }
    }
    let code = code
        .and_then(|c| serde_json::from_str::<Value>(c.get()).ok())
        .and_then(|c| c.as_i64())
        .ok_or_else(|| bad("code is missing or not an integer"))?;
    let message = message
        .and_then(json::string)
        .ok_or_else(|| bad("message is missing or not a string"))?;
    let data = match data {
        None => None,
        Some(d) => Some(serde_json::from_str::<Value>(d.get()).map_err(|_| bad("data"))?),
    };
    Ok(ErrorObject {
        code,
        message,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn error_offsets_point_into_the_input() {
        let e = parse(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap_err();
        assert_eq!(e.kind(), &WireErrorKind::NullRequestId);
        assert_eq!(e.offset(), Some(22));
    }
}
