//! Streamable HTTP client pieces for both protocol eras.
//!
//! Sources: MCP 2025-06-18 and 2025-11-25, Basic › Transports › Streamable HTTP
//! (`initialize`, `Mcp-Session-Id` assigned on the `initialize` response and sent
//! on every later request, `MCP-Protocol-Version` after initialization, GET
//! stream, DELETE to end the session); MCP 2026-07-28 (draft), Basic ›
//! Transports › Streamable HTTP › Request Metadata (no session;
//! `MCP-Protocol-Version` on every POST; `Mcp-Method` on every request and
//! notification; `Mcp-Name` = `params.name` for `tools/call`/`prompts/get` and
//! `params.uri` for `resources/read`, Base64-encoded as `=?base64?…?=` when not
//! a plain visible-ASCII value; `server/discover` instead of `initialize`).
//!
//! Every POST carries `Accept: application/json, text/event-stream`. A reply is
//! a JSON body ([`ReplyItem::Json`], byte-exact), an SSE stream (one
//! [`ReplyItem::Event`] per event, parsed by [`crate::sse::SseParser`]),
//! `202 Accepted` with no body, or anything else ([`ReplyItem::Other`]). HTTP
//! error statuses are not errors here: the caller sees the status and the body
//! (often a JSON-RPC error).

use std::collections::VecDeque;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::sse::{MAX_EVENT_BYTES, SseEvent, SseParser};

/// Largest non-SSE response body read into memory: 256 MiB. (A 2 MB blob is
/// ~2.7 MB of base64; a 64 MiB message fits.)
pub const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Header names (lowercase) and the era model, from the one protocol model
/// ([`mcptape_wire::protocol`]): `MCP-Protocol-Version` (2025-06-18 and
/// later), `Mcp-Session-Id` (2025-03-26 … 2025-11-25), `Mcp-Method` and
/// `Mcp-Name` (2026-07-28).
pub use mcptape_wire::protocol::Era;
pub use mcptape_wire::protocol::header::{
    METHOD as HEADER_METHOD, NAME as HEADER_NAME, PROTOCOL_VERSION as HEADER_PROTOCOL_VERSION,
    SESSION_ID as HEADER_SESSION_ID,
};
use mcptape_wire::protocol::method;

/// An HTTP exchange failed (no usable response).
#[derive(Debug, thiserror::Error)]
#[error("HTTP exchange {exchange}: {kind}")]
pub struct HttpError {
    /// What went wrong.
    pub kind: HttpErrorKind,
    /// Number of the exchange (request/response pair) on this client, from 0.
    pub exchange: u64,
}

/// Kind of an [`HttpError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// The endpoint URL is not a valid absolute `http://` URI.
    #[error("invalid endpoint URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// A header name or value could not be sent.
    #[error("invalid header {name:?}")]
    InvalidHeader {
        /// The header name.
        name: String,
    },
    /// Connecting failed (refused, unreachable…): the endpoint is not there.
    /// The text is the error and its sources, e.g. `client error (Connect):
    /// tcp connect error: Connection refused (os error 111)`.
    #[error("request failed: {0}")]
    Request(String),
    /// The request was sent but the connection closed (or was reset) before
    /// the response head came, e.g. hyper's `IncompleteMessage` when a server
    /// drops the connection. Only this exchange failed; the endpoint may
    /// answer the next one.
    #[error("the connection was dropped before the response: {0}")]
    Dropped(String),
    /// Reading the response body failed.
    #[error("reading the response body failed: {0}")]
    Body(String),
    /// A non-SSE body is larger than the limit ([`MAX_BODY_BYTES`] by default,
    /// see [`HttpClient::set_max_body_bytes`]).
    #[error("response body larger than {limit} bytes")]
    BodyTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The SSE stream could not be parsed further.
    #[error("SSE: {0}")]
    Sse(#[from] crate::error::SseError),
}

/// How a response body is shaped, from its status and `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyKind {
    /// `application/json`: one JSON value.
    Json,
    /// `text/event-stream`: SSE events.
    Sse,
    /// No body expected (`202 Accepted`, `204`), or an empty body.
    Empty,
    /// Any other content type (given, lowercase, parameters stripped).
    Other(String),
}

impl BodyKind {
    /// The body shape of a response with `status` and `Content-Type` header
    /// value `content_type` (parameters such as `charset` ignored, compared
    /// case-insensitively): `202`/`204` and no (or an empty) type →
    /// [`BodyKind::Empty`]; `application/json` → [`BodyKind::Json`];
    /// `text/event-stream` → [`BodyKind::Sse`] (MCP 2025-11-25 › Transports ›
    /// Streamable HTTP › Sending Messages to the Server); anything else →
    /// [`BodyKind::Other`].
    pub fn of(status: u16, content_type: Option<&str>) -> BodyKind {
        let content_type = content_type.map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        match content_type.as_deref() {
            _ if status == 202 || status == 204 => BodyKind::Empty,
            Some("application/json") => BodyKind::Json,
            Some("text/event-stream") => BodyKind::Sse,
            None | Some("") => BodyKind::Empty,
            Some(other) => BodyKind::Other(other.to_owned()),
        }
    }
}

/// One item of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyItem {
    /// A whole `application/json` body, exactly as received (UTF-8).
    Json(String),
    /// One SSE event (data may be a JSON-RPC message or a heartbeat; see
    /// [`SseEvent::payload`]).
    Event(SseEvent),
    /// A body of another content type, or a JSON body that is not UTF-8.
    Other(Vec<u8>),
}

/// What a response says before its body, and what this client sent for it: the part an
/// [`HttpResponse`] (body read item by item) and the [`HttpReply`] it is collected into share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// Number of this exchange on the client, from 0.
    pub exchange: u64,
    /// HTTP status code.
    pub status: u16,
    /// Response headers (lowercase names, map order).
    pub headers: Vec<(String, String)>,
    /// The headers this client sent (lowercase names).
    pub request_headers: Vec<(String, String)>,
    /// Body shape.
    pub kind: BodyKind,
}

impl ResponseHead {
    /// The value of response header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// A response whose body is read item by item ([`HttpResponse::next_item`]),
/// so each SSE event can be timed as it arrives.
#[derive(Debug)]
pub struct HttpResponse {
    /// Status, headers, body shape.
    pub head: ResponseHead,
    body: Incoming,
    max_body: usize,
    sse: SseParser,
    queued: VecDeque<SseEvent>,
    done: bool,
    discarded: bool,
}

impl HttpResponse {
    /// Whether the SSE stream ended in the middle of an event, which was
    /// discarded as the WHATWG rules require (known once `next_item` returned `None`).
    pub fn discarded_partial_event(&self) -> bool {
        self.discarded
    }

    /// The next item of the body; `None` at its end.
    ///
    /// # Errors
    /// [`HttpErrorKind::Body`], [`HttpErrorKind::BodyTooLarge`], [`HttpErrorKind::Sse`].
    pub async fn next_item(&mut self) -> Option<Result<ReplyItem, HttpError>> {
        if let Some(e) = self.queued.pop_front() {
            return Some(Ok(ReplyItem::Event(e)));
        }
        if self.done {
            return None;
        }
        let err = |kind| HttpError {
            kind,
            exchange: self.head.exchange,
        };
        match self.head.kind {
            BodyKind::Sse => loop {
                let frame = match self.body.frame().await {
                    None => {
                        self.done = true;
                        self.discarded = self.sse.finish();
                        return None;
                    }
                    Some(Err(e)) => {
                        self.done = true;
                        return Some(Err(err(HttpErrorKind::Body(error_chain(&e)))));
                    }
                    Some(Ok(f)) => f,
                };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let mut out = Vec::new();
                let res = self.sse.push(&data, &mut out);
                self.queued.extend(out);
                if let Err(e) = res {
                    self.done = true;
                    self.queued.clear();
                    return Some(Err(err(HttpErrorKind::Sse(e))));
                }
                if let Some(e) = self.queued.pop_front() {
                    return Some(Ok(ReplyItem::Event(e)));
                }
            },
            _ => {
                self.done = true;
                let mut buf = Vec::new();
                while let Some(frame) = self.body.frame().await {
                    let frame = match frame {
                        Ok(f) => f,
                        Err(e) => return Some(Err(err(HttpErrorKind::Body(error_chain(&e))))),
                    };
                    if let Ok(d) = frame.into_data() {
                        if buf.len() + d.len() > self.max_body {
                            return Some(Err(err(HttpErrorKind::BodyTooLarge {
                                limit: self.max_body,
                            })));
                        }
                        buf.extend_from_slice(&d);
                    }
                }
                if buf.is_empty() {
                    return None;
                }
                Some(Ok(match (&self.head.kind, String::from_utf8(buf)) {
                    (BodyKind::Json, Ok(s)) => ReplyItem::Json(s),
                    (_, Ok(s)) => ReplyItem::Other(s.into_bytes()),
                    (_, Err(e)) => ReplyItem::Other(e.into_bytes()),
                }))
            }
        }
    }

    /// Reads the rest of the body into an [`HttpReply`].
    ///
    /// # Errors
    /// As [`HttpResponse::next_item`].
    pub async fn collect(mut self) -> Result<HttpReply, HttpError> {
        let mut items = Vec::new();
        while let Some(item) = self.next_item().await {
            items.push(item?);
        }
        Ok(HttpReply {
            head: self.head,
            items,
        })
    }
}

/// A whole reply (see [`HttpResponse::collect`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    /// Status, headers, body shape.
    pub head: ResponseHead,
    /// Body items in arrival order.
    pub items: Vec<ReplyItem>,
}

impl HttpReply {
    /// The JSON-RPC messages of the reply, byte-exact: the JSON body, or the
    /// data of every SSE event that is a JSON-RPC message (heartbeats and
    /// priming events skipped).
    pub fn messages(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter_map(|i| match i {
                ReplyItem::Json(s) => Some(s.as_str()),
                ReplyItem::Event(e) => match e.payload() {
                    crate::sse::SsePayload::JsonRpc(s) => Some(s),
                    crate::sse::SsePayload::Other(_) => None,
                },
                ReplyItem::Other(_) => None,
            })
            .collect()
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A Streamable HTTP client for one MCP endpoint.
///
/// Era handling: with no protocol version set (or a 2025 revision) it behaves
/// as a 2025-era client: it keeps the `Mcp-Session-Id` the server assigns and
/// sends it back, and after [`HttpClient::post`] of `initialize` it adopts the
/// negotiated `result.protocolVersion` for the `MCP-Protocol-Version` header.
/// With a 2026-07-28-or-later version ([`HttpClient::set_protocol_version`]) it
/// sends `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` on every POST and
/// never a session id.
#[derive(Debug, Clone)]
pub struct HttpClient {
    client: Client<HttpConnector, Full<Bytes>>,
    url: Uri,
    protocol_version: Option<String>,
    session_id: Option<String>,
    extra: Vec<(String, String)>,
    exchanges: u64,
    max_body: usize,
}

#[derive(serde::Deserialize)]
struct ReqProbe {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<ParamsProbe>,
}

#[derive(serde::Deserialize)]
struct ParamsProbe {
    #[serde(default)]
    name: Option<serde_json::Value>,
    #[serde(default)]
    uri: Option<serde_json::Value>,
}

impl HttpClient {
    /// A client for the MCP endpoint `url` (`http://host:port/path`; plain HTTP only).
    ///
    /// # Errors
    /// [`HttpErrorKind::InvalidUrl`].
    pub fn new(url: &str) -> Result<Self, HttpError> {
        let bad = |reason: &str| HttpError {
            kind: HttpErrorKind::InvalidUrl {
                url: url.to_owned(),
                reason: reason.to_owned(),
            },
            exchange: 0,
        };
        let uri: Uri = url
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| bad(&e.to_string()))?;
        if uri.scheme_str() != Some("http") || uri.host().is_none() {
            return Err(bad("expected an absolute http:// URL"));
        }
        Ok(Self {
            client: Client::builder(TokioExecutor::new()).build_http(),
            url: uri,
            protocol_version: None,
            session_id: None,
            extra: Vec::new(),
            exchanges: 0,
            max_body: MAX_BODY_BYTES,
        })
    }

    /// Sets the protocol revision sent in `MCP-Protocol-Version` (and, for
    /// 2026-07-28 and later, selects the stateless era).
    pub fn set_protocol_version(&mut self, version: impl Into<String>) {
        self.protocol_version = Some(version.into());
    }

    /// Stops sending `MCP-Protocol-Version` and returns to the session era
    /// (e.g. after a failed 2026-07-28 `server/discover` probe, before falling
    /// back to `initialize`).
    pub fn clear_protocol_version(&mut self) {
        self.protocol_version = None;
    }

    /// The protocol revision currently sent, if any.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// The era the client currently speaks.
    pub fn era(&self) -> Era {
        self.protocol_version
            .as_deref()
            .map_or(Era::Session, Era::of)
    }

    /// The session id assigned by the server (2025 era), if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Forgets the session (e.g. after a `404` that ended it).
    pub fn clear_session(&mut self) {
        self.session_id = None;
    }

    /// Adds a header sent on every request (e.g. `Authorization`).
    pub fn add_header(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.extra.push((name.into(), value.into()));
    }

    /// Sets the largest non-SSE body read (default [`MAX_BODY_BYTES`]) and the
    /// largest SSE event (default [`MAX_EVENT_BYTES`]) to `bytes`.
    pub fn set_max_body_bytes(&mut self, bytes: usize) {
        self.max_body = bytes;
    }

    /// Number of exchanges started so far.
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }

    /// The headers [`HttpClient::send`] would send with `msg` now (lowercase
    /// names, in sending order): `content-type`, `accept`, then
    /// `mcp-protocol-version` if a version is set, then `mcp-method`/`mcp-name`
    /// (stateless era) or `mcp-session-id` (session era, once assigned), then
    /// the headers of [`HttpClient::add_header`]. A recorder uses it to record
    /// the request before sending it.
    pub fn post_headers(&self, msg: &str) -> Vec<(String, String)> {
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        if let Some(v) = &self.protocol_version {
            headers.push((HEADER_PROTOCOL_VERSION.to_owned(), v.clone()));
        }
        match self.era() {
            Era::Stateless => {
                if let Ok(p) = serde_json::from_str::<ReqProbe>(msg) {
                    if let Some(m) = &p.method {
                        headers.push((HEADER_METHOD.to_owned(), m.clone()));
                    }
                    if let Some(name) = mcp_name(p.method.as_deref(), p.params.as_ref()) {
                        headers.push((HEADER_NAME.to_owned(), encode_header_value(&name)));
                    }
                }
            }
            Era::Session => {
                if let Some(s) = &self.session_id {
                    headers.push((HEADER_SESSION_ID.to_owned(), s.clone()));
                }
            }
        }
        headers.extend(self.extra.iter().cloned());
        headers
    }

    /// POSTs one JSON-RPC message and returns the response with its body
    /// unread. Records a session id the server assigns (2025 era). There is no
    /// built-in timeout: wrap the call (and the body reads) in
    /// `tokio::time::timeout`. In the 2025 era, `send` does not look at the
    /// body, so after an `initialize` sent this way call
    /// [`HttpClient::set_protocol_version`] with the negotiated revision (or use
    /// [`HttpClient::post`], which does it).
    ///
    /// # Errors
    /// [`HttpErrorKind::InvalidHeader`], [`HttpErrorKind::Request`].
    pub async fn send(&mut self, msg: &str) -> Result<HttpResponse, HttpError> {
        let headers = self.post_headers(msg);
        self.request(
            Method::POST,
            headers,
            Bytes::copy_from_slice(msg.as_bytes()),
        )
        .await
    }

    /// [`HttpClient::send`] and read the whole body. After an `initialize`
    /// reply carrying `result.protocolVersion`, adopts that version for the
    /// `MCP-Protocol-Version` header (2025 era, MCP 2025-06-18 › Transports ›
    /// Protocol Version Header).
    ///
    /// # Errors
    /// As [`HttpClient::send`] and [`HttpResponse::collect`].
    pub async fn post(&mut self, msg: &str) -> Result<HttpReply, HttpError> {
        let is_initialize = serde_json::from_str::<ReqProbe>(msg)
            .is_ok_and(|p| p.method.as_deref() == Some(method::INITIALIZE));
        let reply = self.send(msg).await?.collect().await?;
        if is_initialize {
            #[derive(serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct InitResult {
                protocol_version: String,
            }
            #[derive(serde::Deserialize)]
            struct Resp {
                result: InitResult,
            }
            for m in reply.messages() {
                if let Ok(r) = serde_json::from_str::<Resp>(m) {
                    self.protocol_version = Some(r.result.protocol_version);
                }
            }
        }
        Ok(reply)
    }

    /// Opens the 2025-era GET stream for server-initiated messages.
    ///
    /// # Errors
    /// As [`HttpClient::send`].
    pub async fn get_stream(&mut self) -> Result<HttpResponse, HttpError> {
        let mut headers = vec![("accept".to_owned(), "text/event-stream".to_owned())];
        if let Some(v) = &self.protocol_version {
            headers.push((HEADER_PROTOCOL_VERSION.to_owned(), v.clone()));
        }
        if let Some(s) = &self.session_id {
            headers.push((HEADER_SESSION_ID.to_owned(), s.clone()));
        }
        headers.extend(self.extra.iter().cloned());
        self.request(Method::GET, headers, Bytes::new()).await
    }

    /// Ends the 2025-era session with `DELETE`; returns the status (`405` when
    /// the server does not allow clients to end sessions). Does nothing and
    /// returns `None` without a session.
    ///
    /// # Errors
    /// As [`HttpClient::send`].
    pub async fn delete_session(&mut self) -> Result<Option<u16>, HttpError> {
        let Some(s) = self.session_id.clone() else {
            return Ok(None);
        };
        let mut headers = vec![(HEADER_SESSION_ID.to_owned(), s)];
        if let Some(v) = &self.protocol_version {
            headers.push((HEADER_PROTOCOL_VERSION.to_owned(), v.clone()));
        }
        headers.extend(self.extra.iter().cloned());
        let resp = self.request(Method::DELETE, headers, Bytes::new()).await?;
        let status = resp.head.status;
        let _ = resp.collect().await;
        self.session_id = None;
        Ok(Some(status))
    }

    async fn request(
        &mut self,
        method: Method,
        headers: Vec<(String, String)>,
        body: Bytes,
    ) -> Result<HttpResponse, HttpError> {
        let exchange = self.exchanges;
        self.exchanges += 1;
        let err = |kind| HttpError { kind, exchange };
        let mut req = Request::builder().method(method).uri(self.url.clone());
        for (n, v) in &headers {
            let name = HeaderName::from_bytes(n.as_bytes())
                .map_err(|_| err(HttpErrorKind::InvalidHeader { name: n.clone() }))?;
            let value = HeaderValue::from_str(v)
                .map_err(|_| err(HttpErrorKind::InvalidHeader { name: n.clone() }))?;
            req = req.header(name, value);
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| err(HttpErrorKind::Request(e.to_string())))?;
        let resp = self.client.request(req).await.map_err(|e| {
            let text = error_chain(&e);
            err(if e.is_connect() {
                HttpErrorKind::Request(text)
            } else {
                HttpErrorKind::Dropped(text)
            })
        })?;
        let status = resp.status().as_u16();
        let resp_headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        if self.era() == Era::Session
            && let Some(sid) = find_header(&resp_headers, HEADER_SESSION_ID)
        {
            self.session_id = Some(sid.to_owned());
        }
        let kind = BodyKind::of(status, find_header(&resp_headers, "content-type"));
        Ok(HttpResponse {
            head: ResponseHead {
                exchange,
                status,
                headers: resp_headers,
                request_headers: headers,
                kind,
            },
            body: resp.into_body(),
            max_body: self.max_body,
            sse: SseParser::new(if self.max_body == MAX_BODY_BYTES {
                MAX_EVENT_BYTES
            } else {
                self.max_body
            }),
            queued: VecDeque::new(),
            done: false,
            discarded: false,
        })
    }
}

/// An error and its sources for people, joined with `: ` (a source whose text
/// the previous one already ends with is skipped): `client error (Connect):
/// tcp connect error: Connection refused (os error 111)`.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !out.ends_with(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        src = s.source();
    }
    out
}

/// The `Mcp-Name` value for a request: `params.name` of `tools/call` and
/// `prompts/get`, `params.uri` of `resources/read` (MCP 2026-07-28 ›
/// Streamable HTTP › Standard Request Headers).
fn mcp_name(method: Option<&str>, params: Option<&ParamsProbe>) -> Option<String> {
    let p = params?;
    let v = match method? {
        method::TOOLS_CALL | method::PROMPTS_GET => p.name.as_ref()?,
        method::RESOURCES_READ => p.uri.as_ref()?,
        _ => return None,
    };
    v.as_str().map(str::to_owned)
}

/// Encodes a header value per MCP 2026-07-28 › Streamable HTTP › Value
/// Encoding: plain when it is visible ASCII/space/tab without leading or
/// trailing whitespace and does not look like the sentinel; otherwise
/// `=?base64?{standard Base64 of the UTF-8}?=`.
pub fn encode_header_value(value: &str) -> String {
    let header_safe = value
        .bytes()
        .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = header_safe && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_kind_from_status_and_content_type() {
        assert_eq!(
            BodyKind::of(200, Some("Text/Event-Stream; charset=utf-8")),
            BodyKind::Sse
        );
        assert_eq!(BodyKind::of(200, Some("application/json")), BodyKind::Json);
        assert_eq!(BodyKind::of(202, Some("application/json")), BodyKind::Empty);
        assert_eq!(BodyKind::of(200, None), BodyKind::Empty);
        assert_eq!(
            BodyKind::of(400, Some("text/plain")),
            BodyKind::Other("text/plain".to_owned())
        );
    }

    #[test]
    fn post_headers_per_era_and_after_clearing_the_version() {
        let read = r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///a b/ü.md"}}"#;
        let mut c = HttpClient::new("http://127.0.0.1:1/mcp").unwrap();
        let names = |h: &[(String, String)]| h.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&c.post_headers(read)), ["content-type", "accept"]);
        c.set_protocol_version("2026-07-28");
        let h = c.post_headers(read);
        assert_eq!(
            h[2..],
            [
                ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
                ("mcp-method".to_owned(), "resources/read".to_owned()),
                (
                    "mcp-name".to_owned(),
                    format!(
                        "=?base64?{}?=",
                        base64::engine::general_purpose::STANDARD.encode("file:///a b/ü.md")
                    )
                ),
            ]
        );
        c.clear_protocol_version();
        assert_eq!(c.era(), Era::Session);
        assert_eq!(names(&c.post_headers(read)), ["content-type", "accept"]);
        c.set_protocol_version("2025-11-25");
        c.add_header("authorization", "Bearer x");
        assert_eq!(
            names(&c.post_headers(read)),
            [
                "content-type",
                "accept",
                "mcp-protocol-version",
                "authorization"
            ]
        );
    }
}
