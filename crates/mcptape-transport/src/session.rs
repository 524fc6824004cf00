//! The one MCP client session that `crawl`, `bench` and `verify` drive; they
//! differ only in what they send.
//!
//! * **Ids**: requests get integer ids from 1; replies are matched by the id's
//!   raw JSON text (`1` and `"1"` are different ids, JSON-RPC 2.0 §4), read
//!   with the one wire reader ([`mcptape_wire::envelope::parse_message`]),
//!   or, for [`Session::request_raw`], from the envelope alone
//!   ([`mcptape_wire::envelope::scan_envelope`], equally strict, no body
//!   parsed: the hot path for 160 MB replies); a message that is not
//!   JSON-RPC 2.0 is counted ([`Session::invalid_messages`]), a line that
//!   is not JSON too ([`Session::noise_lines`]), never guessed at.
//! * **Handshake with era fallback** ([`Session::handshake`]): a 2026-07-28
//!   `server/discover` probe (MCP 2026-07-28, Basic › Lifecycle › Discovery)
//!   that falls back to `initialize` + `notifications/initialized` (MCP
//!   2025-11-25, Basic › Lifecycle › Initialization) when the server answers
//!   with an error or does not list the revision, as the official SDK clients do.
//! * **Server-to-client requests** are answered at once: `ping` with an empty
//!   result (MCP 2025-11-25, Basic › Utilities › Ping), anything else
//!   (`roots/list`, `sampling/createMessage`, `elicitation/create`…) with
//!   `-32601` Method not found, since mcptape declares no client capability.
//! * **Cancellation per transport** ([`Session::cancel`]): on a line stream
//!   (stdio) a `notifications/cancelled` with the `requestId` (MCP 2025-11-25,
//!   Basic › Utilities › Cancellation); over Streamable HTTP the request's
//!   POST is aborted (its stream closed, the 2026-07-28 way) and, in the
//!   2025 session era, the notification is POSTed too.
//!
//! Two transports: a newline-delimited stream ([`Session::over`], e.g. a stdio
//! child's stdout/stdin, read with [`LineReader`]) and Streamable
//! HTTP ([`Session::http`], over [`HttpClient`], both eras: handshake POSTs
//! and notifications go out in order, requests concurrently). An
//! [`Observer`] sees every byte sent and received, before it is sent or as it
//! arrives (the recorder of `crawl` writes its transcript from it).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcptape_wire::envelope::{self, EnvelopeKind};
use mcptape_wire::envelope::{ErrorObject, Message, Notification, Request, RequestId};
use mcptape_wire::prescan::PlainStrings;
use mcptape_wire::protocol::error_code::METHOD_NOT_FOUND;
use mcptape_wire::protocol::{Revision, header, method, supported_versions};
use mcptape_wire::reply::{CancelledParams, ElicitDecline, EmptyResult, NoRoots};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

#[cfg(test)]
use crate::framed::{FramedReader, MAX_LINE_BYTES};
use crate::framed::{Line, LineReader};
use crate::http::{Era, HttpClient, HttpError, ReplyItem};
use crate::sse::SsePayload;
use crate::stdio::Frame;

/// How much of an HTTP error response's body is kept to say what it was
/// ([`Outcome::Http`]), bytes.
pub const HTTP_ERROR_BODY_SHOWN: usize = 200;

/// Most `input_required` rounds one request is retried through (MCP
/// 2026-07-28, Basic › Patterns › Multi Round-Trip Requests): past it the
/// request ends as [`Outcome::InputRequired`].
pub const MAX_INPUT_ROUNDS: u32 = 8;

/// Outcome of one request as the client saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A `result` arrived (after any `input_required` rounds, see
    /// [`Session::input_rounds`]).
    Ok,
    /// An `error` arrived.
    Error(ErrorObject),
    /// The connection closed first (stdio end of stream, a read error, an
    /// HTTP connect failure, or an HTTP exchange that ended without the answer
    /// and without an error status).
    Closed,
    /// An HTTP error status (4xx/5xx) ended the request's exchange without a
    /// JSON-RPC answer to it: the status and the first
    /// [`HTTP_ERROR_BODY_SHOWN`] bytes of the body (lossy UTF-8). The session
    /// goes on. The answer's message is a JSON-RPC error with code `0` and
    /// this text, for callers that keep messages.
    Http {
        /// HTTP status, 400..=599.
        status: u16,
        /// The first bytes of the body.
        body: String,
    },
    /// The request's own HTTP connection was dropped before its answer (the
    /// server closed or reset it: hyper's `IncompleteMessage`, a body cut
    /// short); the transport's text. The session goes on.
    Dropped(String),
    /// A 2026-07-28 `input_required` result mcptape could not complete: it
    /// asks for input mcptape cannot give (sampling: mcptape declares no client
    /// capability), or still asks after [`MAX_INPUT_ROUNDS`] rounds. The
    /// answer's message is that last result.
    InputRequired(String),
}

/// For people: `error -32601 "Method not found"` (with ` data {…}` when
/// present), `a result`, `the connection closed`, `HTTP 500 from the
/// target: <body>`, `the connection was dropped: …`, `input_required: …`.
impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Ok => f.write_str("a result"),
            Outcome::Error(e) => write!(f, "error {e}"),
            Outcome::Closed => f.write_str("the connection closed"),
            Outcome::Http { status, body } if body.is_empty() => {
                write!(f, "HTTP {status} from the target (empty body)")
            }
            Outcome::Http { status, body } => write!(f, "HTTP {status} from the target: {body}"),
            Outcome::Dropped(why) => write!(f, "the connection was dropped: {why}"),
            Outcome::InputRequired(why) => write!(f, "input_required: {why}"),
        }
    }
}

/// How a session cancels a request ([`Session::cancel`], [`Session::cancellation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancellation {
    /// The request's response stream is closed (its POST aborted): 2026-07-28
    /// Streamable HTTP, where no `notifications/cancelled` is sent.
    CloseStream,
    /// `notifications/cancelled` with the `requestId` (stdio; 2025 session-era
    /// HTTP, where the POST is aborted too).
    Notification,
}

impl Cancellation {
    /// `"close-stream"` or `"notification"`, as reports say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Cancellation::CloseStream => "close-stream",
            Cancellation::Notification => "notification",
        }
    }
}

/// What a request's receiver gets: the outcome and the whole reply message
/// (`Value::Null` when [`Outcome::Closed`]).
pub type Answer = (Outcome, Value);

/// What a [`Session::request_raw`] receiver gets: the outcome, read from the
/// reply's envelope ([`mcptape_wire::envelope::scan_envelope`]: kind, id,
/// `error` object) without parsing its body, and the reply line's bytes as
/// received (moved, not copied, on a line stream). `line` is empty when
/// [`Outcome::Closed`] or [`Outcome::Dropped`]; for an answer the session
/// made up (an HTTP error status) it is that message's JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct RawAnswer {
    /// How the request ended.
    pub outcome: Outcome,
    /// The reply message's bytes (one JSON-RPC message, no `\n`).
    pub line: Vec<u8>,
}

/// Longest line a line-stream session keeps: the wire's message limit,
/// [`mcptape_wire::limits::MAX_MESSAGE_BYTES`] (256 MiB), so the seed's
/// 160 MB directory read is a message; a longer line is counted
/// ([`Session::too_long_lines`]) and dropped.
pub const SESSION_MAX_LINE_BYTES: usize = mcptape_wire::limits::MAX_MESSAGE_BYTES;

/// A pending request's receiver: a whole message, or the raw line.
enum Tx {
    Value(oneshot::Sender<Answer>),
    /// The receiver, and whether it wants the line's bytes.
    Raw(oneshot::Sender<RawAnswer>, bool),
}

impl Tx {
    /// Sends `outcome` with the message `msg` (serialized for a raw receiver).
    fn send(self, outcome: Outcome, msg: Value) {
        match self {
            Tx::Value(tx) => {
                let _ = tx.send((outcome, msg));
            }
            Tx::Raw(tx, _) => {
                let line = if msg.is_null() {
                    Vec::new()
                } else {
                    msg.to_string().into_bytes()
                };
                let _ = tx.send(RawAnswer { outcome, line });
            }
        }
    }

    /// Sends `outcome` with the message `msg` parsed from `bytes`.
    fn send_parsed(self, outcome: Outcome, msg: &Message, bytes: &[u8]) {
        match self {
            Tx::Value(tx) => {
                let _ = tx.send((outcome, msg.to_value()));
            }
            Tx::Raw(tx, keep) => {
                let line = if keep { bytes.to_vec() } else { Vec::new() };
                let _ = tx.send(RawAnswer { outcome, line });
            }
        }
    }
}

/// A session call failed.
#[derive(Debug, thiserror::Error)]
#[error("{method} (request id {id}): {kind}")]
pub struct SessionError {
    /// What went wrong.
    pub kind: SessionErrorKind,
    /// The method of the request.
    pub method: String,
    /// The id the request was sent with.
    pub id: u64,
}

/// Kind of a [`SessionError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionErrorKind {
    /// The connection closed before the answer came; the transport error
    /// that closed it, if any (a read error, an HTTP failure).
    #[error("the connection closed before the answer{}", .0.as_ref().map(|e| format!(" ({e})")).unwrap_or_default())]
    Closed(Option<String>),
    /// No answer within the time given, in ms (a `notifications/cancelled`
    /// was sent for the request).
    #[error("no answer in {ms} ms")]
    Timeout {
        /// The time limit, ms.
        ms: u64,
    },
    /// A handshake request was answered with an error.
    #[error("answered error {0}")]
    Refused(ErrorObject),
    /// The `initialize` result has no `protocolVersion` string (MCP
    /// 2025-11-25, Basic › Lifecycle › Version Negotiation).
    #[error("the initialize result has no protocolVersion string")]
    NoProtocolVersion,
    /// A handshake request got an HTTP error status, or its connection was
    /// dropped, or an unfinished `input_required` ([`Outcome`]'s text).
    #[error("{0}")]
    Failed(Outcome),
}

/// One thing that crossed the wire, shown to an [`Observer`].
#[derive(Debug)]
#[non_exhaustive]
pub enum WireEvent<'a> {
    /// A line about to be written to a line stream (without its `\n`).
    LineOut(&'a [u8]),
    /// A frame read from a line stream (message, noise, or too-long marker).
    LineIn(&'a Frame),
    /// An HTTP POST about to be sent: its headers (lowercase names) and body.
    PostSent {
        /// Exchange number on this session, from the client's count at start.
        exchange: u64,
        /// The headers that are sent.
        headers: &'a [(String, String)],
        /// The JSON-RPC message.
        body: &'a str,
    },
    /// The status and headers of a POST's response, before its body.
    PostHead {
        /// Exchange number.
        exchange: u64,
        /// HTTP status.
        status: u16,
        /// Response headers (lowercase names).
        headers: &'a [(String, String)],
    },
    /// One body item of a POST's response (JSON body, SSE event, other body).
    PostItem {
        /// Exchange number.
        exchange: u64,
        /// The item.
        item: &'a ReplyItem,
    },
    /// The session stopped reading a POST's response (its end, or the
    /// request's answer arrived): `items` body items were seen.
    PostEnd {
        /// Exchange number.
        exchange: u64,
        /// Body items seen.
        items: usize,
    },
    /// A `DELETE` ending the 2025-era session, about to be sent.
    DeleteSent {
        /// Exchange number.
        exchange: u64,
        /// The headers sent (`mcp-session-id`, `mcp-protocol-version`).
        headers: &'a [(String, String)],
    },
    /// The status answering the `DELETE`.
    DeleteStatus {
        /// Exchange number.
        exchange: u64,
        /// HTTP status.
        status: u16,
    },
}

/// Sees every [`WireEvent`] of a session, synchronously, in wire order per
/// direction (a recorder writes its transcript from them).
pub trait Observer: Send + Sync {
    /// Called for each event, before the bytes are sent or right after they arrived.
    fn observe(&self, event: WireEvent<'_>);
}

/// How to open the session ([`Session::handshake`]).
#[derive(Debug, Clone)]
pub struct Handshake {
    /// `server/discover` params to try first (2026-07-28 era); `None` starts
    /// with `initialize`.
    pub discover: Option<Value>,
    /// The revision the discovery asks for: sent as `MCP-Protocol-Version`
    /// during the probe over HTTP, and the probe counts as successful only
    /// if the result's `supportedVersions` lists it. `None`: any result counts.
    pub version: Option<Revision>,
    /// `initialize` params: the handshake itself, or the fallback after a
    /// failed discovery.
    pub initialize: Value,
    /// Time limit of each handshake request.
    pub timeout: Duration,
}

/// How the handshake went.
#[derive(Debug, Clone, PartialEq)]
pub struct Handshook {
    /// `"server/discover"` or `"initialize"`: the request that opened the session.
    pub method: &'static str,
    /// The revision in use: the discovered one, or `initialize`'s negotiated
    /// `protocolVersion`. `None` after a discovery with no [`Handshake::version`].
    pub protocol_version: Option<Revision>,
    /// `server/discover` was tried and failed, so `initialize` was used.
    pub fell_back: bool,
    /// The `result` of the request that opened the session.
    pub result: Value,
}

/// A request that may get `input_required` and be retried with a new id.
struct Retriable {
    method: String,
    params: Value,
    rounds: u32,
    /// Key of the id [`Session::request`] returned.
    first: String,
}

#[derive(Default)]
struct State {
    pending: HashMap<String, Tx>,
    /// Requests whose method allows `input_required`, by current key.
    retriable: HashMap<String, Retriable>,
    /// First key → current key of a retried request.
    alias: HashMap<String, String>,
    input_rounds: u64,
    dropped: u64,
    /// 2026-07-28 Streamable HTTP: cancellation closes the stream.
    close_stream: bool,
    /// A Streamable HTTP session.
    http: bool,
    /// Cancelled requests still awaited (key → true once a late answer came).
    cancelled: HashMap<String, bool>,
    late: u64,
    unknown: u64,
    server_requests: u64,
    answered: Vec<String>,
    invalid: u64,
    noise: u64,
    too_long: u64,
    closed: bool,
    transport_error: Option<String>,
}

impl State {
    /// An answer for `key` that nothing awaits: late (after its
    /// cancellation, counted once) or unknown.
    fn count_unawaited(&mut self, key: &str) {
        if let Some(seen) = self.cancelled.get_mut(key) {
            if !*seen {
                *seen = true;
                self.late += 1;
            }
        } else {
            self.unknown += 1;
        }
    }
}

enum Out {
    /// A message, `\n`-terminated; its method (requests and notifications)
    /// and id key (requests).
    Msg {
        bytes: Vec<u8>,
        method: Option<String>,
        id: Option<String>,
    },
    /// `notifications/cancelled` for request `id` (key), `\n`-terminated.
    Cancel { bytes: Vec<u8>, id: String },
    /// Set or clear the HTTP `MCP-Protocol-Version` (and era).
    SetVersion(Option<String>),
    /// End the session: stdio closes the stream, HTTP sends `DELETE`.
    Close(oneshot::Sender<()>),
}

struct Shared {
    next_id: AtomicU64,
    state: Mutex<State>,
    observer: Option<Arc<dyn Observer>>,
    out: mpsc::WeakUnboundedSender<Out>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn observe(&self, e: WireEvent<'_>) {
        if let Some(o) = &self.observer {
            o.observe(e);
        }
    }

    fn send(&self, out: Out) {
        if let Some(tx) = self.out.upgrade() {
            let _ = tx.send(out);
        }
    }

    /// Handles one received message; returns the id key it answered, if any.
    ///
    /// Hot path: the envelope is scanned ([`envelope::scan_envelope`], one
    /// strict pass that skips string bodies) and an answer to a
    /// [`Session::request_raw`] request is delivered with its bytes, never
    /// parsed further. Everything else (requests from the server, answers to
    /// [`Session::request`], `input_required` results, lines the scan
    /// rejects) take the typed view of the same scan ([`envelope::Envelope::message`]);
    /// what the scan rejects is counted as invalid.
    ///
    /// `unclassified`: a line-stream line not yet known to be JSON; when the
    /// scan rejects it and it is not one JSON value either (a banner, a reply
    /// cut short or corrupted), it is counted as noise
    /// ([`Session::noise_lines`]), never taken for an answer.
    ///
    /// `hints`: the line's long plain strings found as it arrived ([`LineReader::take_hints`]):
    /// the scan is [`envelope::scan_envelope_hinted`], as strict, without searching them
    /// again.
    ///
    /// Returns the id key answered, if any, and the line's buffer when it was owned and
    /// nothing kept it (for [`LineReader::recycle`]).
    fn dispatch(
        &self,
        bytes: Cow<'_, [u8]>,
        unclassified: bool,
        hints: Option<&PlainStrings>,
    ) -> (Option<String>, Option<Vec<u8>>) {
        let scanned = match hints {
            Some(h) => envelope::scan_envelope_hinted(&bytes, h),
            None => envelope::scan_envelope(&bytes),
        };
        if scanned.is_err() && unclassified && !crate::stdio::is_exact_json(&bytes) {
            self.lock().noise += 1;
            return (None, owned(bytes));
        }
        if let Ok(env) = &scanned
            && matches!(env.kind, EnvelopeKind::Response | EnvelopeKind::Error)
            && let Some(key) = env.id.as_ref().map(ToString::to_string)
            && !(env.kind == EnvelopeKind::Response
                && env.result_type(&bytes).as_deref() == Some(INPUT_REQUIRED))
        {
            let outcome = match env.kind {
                EnvelopeKind::Response => Some(Outcome::Ok),
                _ => env.error_object(&bytes).map(Outcome::Error),
            };
            let mut s = self.lock();
            if let Some(outcome) = outcome
                && matches!(s.pending.get(&key), Some(Tx::Raw(..)))
                && let Some(Tx::Raw(tx, keep)) = s.pending.remove(&key)
            {
                if let Some(re) = s.retriable.remove(&key) {
                    s.alias.remove(&re.first);
                }
                drop(s);
                let (line, back) = if keep {
                    (bytes.into_owned(), None)
                } else {
                    (Vec::new(), owned(bytes))
                };
                let _ = tx.send(RawAnswer { outcome, line });
                return (Some(key), back);
            }
            if !s.pending.contains_key(&key) {
                // Late or unknown: nothing waits for the body.
                s.count_unawaited(&key);
                return (None, owned(bytes));
            }
        }
        let answered = self.dispatch_parsed(&bytes, scanned);
        (answered, owned(bytes))
    }

    /// [`Self::dispatch`] through the typed view of its scan (`scanned`, of `bytes`).
    fn dispatch_parsed(
        &self,
        bytes: &[u8],
        scanned: Result<envelope::Envelope, mcptape_wire::error::WireError>,
    ) -> Option<String> {
        let msg = match scanned.and_then(|env| env.message(bytes)) {
            Ok(m) => m,
            Err(_) => {
                self.lock().invalid += 1;
                return None;
            }
        };
        let (key, outcome) = match &msg {
            Message::Request(r) => {
                let answer = answer_server_request(&r.id, &r.method);
                {
                    let mut s = self.lock();
                    s.server_requests += 1;
                    s.answered.push(r.method.clone());
                }
                self.send(Out::Msg {
                    bytes: line(&answer.to_json()),
                    method: None,
                    id: None,
                });
                return None;
            }
            Message::Notification(_) => return None,
            Message::Response(r) => (Some(r.id.to_string()), Outcome::Ok),
            Message::Error(e) => (
                e.id.as_ref().map(ToString::to_string),
                Outcome::Error(e.error.clone()),
            ),
        };
        let mut s = self.lock();
        let Some(key) = key else {
            s.unknown += 1; // an error for no id: nothing to pair it with
            return None;
        };
        if outcome == Outcome::Ok
            && s.pending.contains_key(&key)
            && let Message::Response(r) = &msg
            && r.result.get("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED)
            && let Some(mut re) = s.retriable.remove(&key)
        {
            let Some(tx) = s.pending.remove(&key) else {
                return Some(key);
            };
            let retry = if re.rounds >= MAX_INPUT_ROUNDS {
                Err(format!(
                    "still input_required after {MAX_INPUT_ROUNDS} rounds (MAX_INPUT_ROUNDS)"
                ))
            } else {
                retry_params(&re.params, &r.result)
            };
            match retry {
                Err(why) => {
                    s.alias.remove(&re.first);
                    drop(s);
                    tx.send_parsed(Outcome::InputRequired(why), &msg, bytes);
                }
                Ok(params) => {
                    // MCP 2026-07-28, Multi Round-Trip Requests: the original
                    // request again, with a new id, `inputResponses` and the
                    // `requestState` echoed.
                    let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                    let new_key = id_key(id);
                    re.rounds += 1;
                    s.input_rounds += 1;
                    s.pending.insert(new_key.clone(), tx);
                    s.alias.insert(re.first.clone(), new_key.clone());
                    let bytes = line(&message(&re.method, Some(id), &params));
                    let method = re.method.clone();
                    re.params = params;
                    s.retriable.insert(new_key.clone(), re);
                    drop(s);
                    self.send(Out::Msg {
                        bytes,
                        method: Some(method),
                        id: Some(new_key),
                    });
                }
            }
            return Some(key);
        }
        if let Some(tx) = s.pending.remove(&key) {
            if let Some(re) = s.retriable.remove(&key) {
                s.alias.remove(&re.first);
            }
            drop(s);
            tx.send_parsed(outcome, &msg, bytes);
            return Some(key);
        }
        s.count_unawaited(&key);
        None
    }

    /// Removes pending request `key` (and its retry bookkeeping).
    fn take_pending(&self, key: &str) -> Option<Tx> {
        let mut s = self.lock();
        let tx = s.pending.remove(key)?;
        if let Some(re) = s.retriable.remove(key) {
            s.alias.remove(&re.first);
        }
        Some(tx)
    }

    /// The HTTP connection of request `key` was dropped before its answer.
    fn exchange_dropped(&self, key: &str, why: String) {
        self.lock().dropped += 1;
        if let Some(tx) = self.take_pending(key) {
            tx.send(Outcome::Dropped(why), Value::Null);
        }
    }

    /// The HTTP exchange of request `key` ended without its answer; `body`:
    /// the first bytes of the body when `status` is an error.
    fn exchange_unanswered(&self, key: &str, status: u16, body: &[u8]) {
        let Some(tx) = self.take_pending(key) else {
            return;
        };
        if status >= 400 {
            // A non-JSON-RPC HTTP error (e.g. 500, or 400 for an unknown
            // session) answers the request at once.
            let outcome = Outcome::Http {
                status,
                body: String::from_utf8_lossy(body).trim().to_owned(),
            };
            let error = ErrorObject::new(0, outcome.to_string());
            let msg = Message::error(RequestId::from_json(key).ok(), error);
            tx.send(outcome, msg.to_value());
        } else {
            tx.send(Outcome::Closed, Value::Null);
        }
    }

    /// The connection is gone: every pending request gets [`Outcome::Closed`].
    fn close_all(&self, error: Option<String>) {
        let mut s = self.lock();
        s.closed = true;
        if s.transport_error.is_none() {
            s.transport_error = error;
        }
        s.retriable.clear();
        s.alias.clear();
        for (_, tx) in s.pending.drain() {
            tx.send(Outcome::Closed, Value::Null);
        }
    }

    /// One line read from a line stream: shown to the observer as the
    /// [`Frame`] it is (classified only when there is an observer), then
    /// dispatched. Blank lines are skipped; a too-long line and a line that
    /// is not JSON are counted ([`Session::too_long_lines`],
    /// [`Session::noise_lines`]).
    ///
    /// `hints`: the line's plain strings ([`LineReader::take_hints`]), for the envelope scan.
    fn line_in(&self, line: Line, hints: Option<&PlainStrings>) -> Option<Vec<u8>> {
        let unclassified = self.observer.is_none();
        let bytes = match (&self.observer, line) {
            (_, Line::TooLong(e)) => {
                self.observe(WireEvent::LineIn(&Frame::TooLong(e)));
                self.lock().too_long += 1;
                return None;
            }
            (Some(_), line) => {
                let frame = line.into_frame();
                self.observe(WireEvent::LineIn(&frame));
                match frame {
                    Frame::Message(b) => b,
                    Frame::Noise(b) => {
                        if !b.iter().all(u8::is_ascii_whitespace) {
                            self.lock().noise += 1;
                        }
                        return Some(b);
                    }
                    Frame::TooLong(_) => return None,
                }
            }
            (None, Line::Bytes(b)) => b,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Some(bytes);
        }
        self.dispatch(Cow::Owned(bytes), unclassified, hints).1
    }

    /// The current key of the request first sent as `id`.
    fn current_key(&self, id: u64) -> String {
        let key = id_key(id);
        self.lock().alias.get(&key).cloned().unwrap_or(key)
    }
}

/// `resultType` of an MRTR interim result (MCP 2026-07-28, Basic › Patterns ›
/// Multi Round-Trip Requests).
pub const INPUT_REQUIRED: &str = "input_required";

/// Methods whose result may be `input_required` (SEP-2322: `tools/call`,
/// `prompts/get`, `resources/read`).
const RETRIABLE: [&str; 3] = [
    method::RESOURCES_READ,
    method::TOOLS_CALL,
    method::PROMPTS_GET,
];

fn id_key(id: u64) -> String {
    RequestId::number(i64::try_from(id).unwrap_or(i64::MAX)).to_string()
}

/// What mcptape answers to one input request of an `input_required` result:
/// `elicitation/create` → `{"action": "decline"}`, `roots/list` → `{"roots":
/// []}` (no roots). Anything else (`sampling/createMessage`) has no answer a
/// client without capabilities can give.
fn input_response(m: &str) -> Option<Value> {
    let answer = match m {
        method::ELICITATION_CREATE => serde_json::to_value(ElicitDecline::default()),
        method::ROOTS_LIST => serde_json::to_value(NoRoots::default()),
        _ => return None,
    };
    answer.ok()
}

/// The params of the retry of a request with `params` answered by the
/// `input_required` `result`: `params` plus `inputResponses` (one answer per
/// `inputRequests` key, [`input_response`]) and `requestState` echoed
/// verbatim when present. Errs naming what cannot be answered.
fn retry_params(params: &Value, result: &Value) -> Result<Value, String> {
    let mut out = match params {
        Value::Object(m) => m.clone(),
        Value::Null => serde_json::Map::new(),
        _ => return Err("the request's params are not an object".into()),
    };
    out.remove("inputResponses");
    out.remove("requestState");
    if let Some(reqs) = result.get("inputRequests") {
        let Some(reqs) = reqs.as_object() else {
            return Err("inputRequests is not an object".into());
        };
        let mut answers = serde_json::Map::new();
        for (k, r) in reqs {
            let m = r.get("method").and_then(Value::as_str).unwrap_or("");
            let a = input_response(m)
                .ok_or_else(|| format!("asks for {m:?} (key {k:?}), which mcptape cannot give"))?;
            answers.insert(k.clone(), a);
        }
        out.insert("inputResponses".into(), Value::Object(answers));
    }
    match result.get("requestState") {
        Some(st @ Value::String(_)) => {
            out.insert("requestState".into(), st.clone());
        }
        Some(_) => return Err("requestState is not a string".into()),
        None if result.get("inputRequests").is_none() => {
            return Err("neither inputRequests nor requestState".into());
        }
        None => {}
    }
    Ok(Value::Object(out))
}

/// The answer mcptape gives to a server-to-client request: `ping` → `{}`,
/// anything else → `-32601` (no client capability was declared).
fn answer_server_request(id: &RequestId, method: &str) -> Message {
    if method == method::PING {
        Message::result(id.clone(), &EmptyResult {})
    } else {
        Message::error(
            Some(id.clone()),
            ErrorObject::new(
                METHOD_NOT_FOUND,
                format!("Method not found: mcptape declared no client capability for `{method}`"),
            ),
        )
    }
}

/// The buffer of an owned line.
fn owned(bytes: Cow<'_, [u8]>) -> Option<Vec<u8>> {
    match bytes {
        Cow::Owned(b) => Some(b),
        Cow::Borrowed(_) => None,
    }
}

fn line(text: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(text.len() + 1);
    b.extend_from_slice(text.as_bytes());
    b.push(b'\n');
    b
}

/// A request (`id` given) or notification of `method` as one line of JSON
/// text: `{"jsonrpc":"2.0","id"?,"method","params"?}`, `params` left out when
/// null (JSON-RPC 2.0 §4: "MAY be omitted").
fn message(method: &str, id: Option<u64>, params: &Value) -> String {
    let method = method.to_owned();
    let params = (!params.is_null()).then(|| params.clone());
    match id {
        Some(id) => Message::Request(Request {
            id: RequestId::from(id),
            method,
            params,
        }),
        None => Message::Notification(Notification { method, params }),
    }
    .to_json()
}

/// One MCP client session (see the module docs). Cheap to share behind an
/// `Arc`: every method takes `&self`.
pub struct Session {
    out: mpsc::UnboundedSender<Out>,
    shared: Arc<Shared>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Line buffers given back to a line-stream reader ([`Session::recycle`]).
    lines_back: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("next_id", &self.shared.next_id)
            .finish_non_exhaustive()
    }
}

impl Session {
    fn start(observer: Option<Arc<dyn Observer>>) -> (Self, mpsc::UnboundedReceiver<Out>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            state: Mutex::default(),
            observer,
            out: tx.downgrade(),
        });
        (
            Session {
                out: tx,
                shared,
                tasks: Mutex::default(),
                lines_back: None,
            },
            rx,
        )
    }

    /// A session over a newline-delimited stream: `r` from the server (read
    /// by [`LineReader`] with [`SESSION_MAX_LINE_BYTES`]), `w` to it. Starts a
    /// reader and a writer task (needs a tokio runtime).
    pub fn over<R, W>(r: R, w: W) -> Session
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::over_observed(r, w, None)
    }

    /// [`Session::over`] with an [`Observer`] of every line sent and frame read.
    pub fn over_observed<R, W>(r: R, w: W, observer: Option<Arc<dyn Observer>>) -> Session
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (mut s, mut rx) = Self::start(observer);
        let (back_tx, mut back_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        s.lines_back = Some(back_tx);
        let sh = s.shared.clone();
        let writer = tokio::spawn(async move {
            let mut w = w;
            while let Some(o) = rx.recv().await {
                let bytes = match o {
                    Out::Msg { bytes, .. } | Out::Cancel { bytes, .. } => bytes,
                    Out::SetVersion(_) => continue,
                    Out::Close(ack) => {
                        let _ = w.shutdown().await;
                        let _ = ack.send(());
                        return;
                    }
                };
                sh.observe(WireEvent::LineOut(&bytes[..bytes.len() - 1]));
                if let Err(e) = async {
                    w.write_all(&bytes).await?;
                    w.flush().await
                }
                .await
                {
                    let mut st = sh.lock();
                    if st.transport_error.is_none() {
                        st.transport_error = Some(format!("write failed: {e}"));
                    }
                    break;
                }
            }
            let _ = w.shutdown().await;
        });
        let sh = s.shared.clone();
        let reader = tokio::spawn(async move {
            let mut r = LineReader::new(r, SESSION_MAX_LINE_BYTES);
            let mut error = None;
            loop {
                // A buffer given back is taken at once, even mid-line (`next` is cancel-safe).
                let next = tokio::select! {
                    biased;
                    Some(buf) = back_rx.recv() => {
                        r.recycle(buf);
                        continue;
                    }
                    next = r.next() => next,
                };
                match next {
                    Ok(Some(line)) => {
                        let hints = r.take_hints();
                        if let Some(buf) = sh.line_in(line, hints.as_ref()) {
                            r.recycle(buf);
                        }
                    }
                    Ok(None) => break,
                    // Not end of stream: remembered; the reader then yields
                    // the line it held and ends.
                    Err(e) => error = Some(e.to_string()),
                }
            }
            sh.close_all(error);
        });
        s.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend([writer, reader]);
        s
    }

    /// A session over Streamable HTTP with `client` (both eras; see
    /// [`HttpClient`]). `initialize`, `server/discover` and notifications
    /// are POSTed in order, one at a time; other requests and answers
    /// concurrently. A transport error (connection refused, reset…) closes the
    /// session at once ([`Session::transport_error`]); HTTP error statuses do
    /// not: a JSON-RPC body answers its request, and an error status without
    /// one answers it with error code `0`, message `HTTP <status>`.
    ///
    /// An HTTP error status with no JSON-RPC answer for the request answers it
    /// at once as [`Outcome::Http`]; a request whose connection is dropped
    /// ([`HttpErrorKind::Dropped`](crate::http::HttpErrorKind::Dropped), a body
    /// cut short) ends as [`Outcome::Dropped`] and the session goes on; only a
    /// connect failure (or another transport error) closes the session.
    pub fn http(client: HttpClient, observer: Option<Arc<dyn Observer>>) -> Session {
        let (s, rx) = Self::start(observer);
        {
            let mut st = s.shared.lock();
            st.http = true;
            st.close_stream = client.era() == Era::Stateless;
        }
        let driver = tokio::spawn(http_driver(client, rx, s.shared.clone()));
        s.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(driver);
        s
    }

    /// Sends a request with the next integer id; returns the id and a
    /// receiver for its [`Answer`] (at once [`Outcome::Closed`] on a closed session).
    ///
    /// A `resources/read`, `tools/call` or `prompts/get` answered with an
    /// `input_required` result (MCP 2026-07-28, Basic › Patterns › Multi
    /// Round-Trip Requests) is retried at once with a new id, the original
    /// params, `inputResponses` and the echoed `requestState`, up to
    /// [`MAX_INPUT_ROUNDS`] times; the receiver gets only the final answer, so
    /// the rounds are one request to the caller, who keeps using the first
    /// id ([`Session::cancel`], [`Session::abandon`] follow the retry).
    pub fn request(&self, method: &str, params: &Value) -> (u64, oneshot::Receiver<Answer>) {
        let (tx, rx) = oneshot::channel();
        (self.request_with(method, params, Tx::Value(tx)), rx)
    }

    fn request_with(&self, method: &str, params: &Value, tx: Tx) -> u64 {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let key = id_key(id);
        {
            let mut s = self.shared.lock();
            if s.closed {
                drop(s);
                tx.send(Outcome::Closed, Value::Null);
                return id;
            }
            s.pending.insert(key.clone(), tx);
            if RETRIABLE.contains(&method) {
                s.retriable.insert(
                    key.clone(),
                    Retriable {
                        method: method.to_owned(),
                        params: params.clone(),
                        rounds: 0,
                        first: key.clone(),
                    },
                );
            }
        }
        let _ = self.out.send(Out::Msg {
            bytes: line(&message(method, Some(id), params)),
            method: Some(method.to_owned()),
            id: Some(key),
        });
        id
    }

    /// [`Session::request`] whose answer is delivered as a [`RawAnswer`]:
    /// the outcome from the reply's envelope and the reply's bytes, with no
    /// `serde_json::Value` of its body built (a 160 MB `resources/read`
    /// reply costs one scan of its bytes). Same ids, `input_required`
    /// retries, cancellation and counters as [`Session::request`].
    ///
    /// `keep_line`: deliver the reply's bytes in [`RawAnswer::line`]; when false the line is
    /// left empty and a line-stream session reads the next long reply into the same buffer
    /// ([`LineReader::recycle`]: no fresh pages to fault in).
    pub fn request_raw(
        &self,
        method: &str,
        params: &Value,
        keep_line: bool,
    ) -> (u64, oneshot::Receiver<RawAnswer>) {
        let (tx, rx) = oneshot::channel();
        (
            self.request_with(method, params, Tx::Raw(tx, keep_line)),
            rx,
        )
    }

    /// Gives back the bytes of a [`RawAnswer::line`] once done with them: a line-stream
    /// session reads a later long reply into the same buffer ([`LineReader::recycle`]: its
    /// pages are already faulted in). Nothing over HTTP.
    pub fn recycle(&self, line: Vec<u8>) {
        if let Some(tx) = &self.lines_back
            && line.capacity() > 0
        {
            let _ = tx.send(line);
        }
    }

    /// Sends a request and waits up to `timeout` for its answer; on timeout
    /// the request is cancelled ([`Session::cancel`]).
    ///
    /// # Errors
    /// [`SessionErrorKind::Closed`], [`SessionErrorKind::Timeout`]. An error
    /// answer is not an error here: it is [`Outcome::Error`].
    pub async fn call(
        &self,
        method: &str,
        params: &Value,
        timeout: Duration,
    ) -> Result<Answer, SessionError> {
        let (id, rx) = self.request(method, params);
        let err = |kind| SessionError {
            kind,
            method: method.to_owned(),
            id,
        };
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok((Outcome::Closed, _)) | Err(_)) => {
                Err(err(SessionErrorKind::Closed(self.transport_error())))
            }
            Ok(Ok(answer)) => Ok(answer),
            Err(_) => {
                self.cancel(id, "mcptape: timeout");
                self.abandon(id);
                Err(err(SessionErrorKind::Timeout {
                    ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                }))
            }
        }
    }

    /// Sends a notification (`params` omitted when null).
    pub fn notify(&self, method: &str, params: &Value) {
        let _ = self.out.send(Out::Msg {
            bytes: line(&message(method, None, params)),
            method: Some(method.to_owned()),
            id: None,
        });
    }

    /// Sets (`Some`) or clears the `MCP-Protocol-Version` an HTTP session
    /// sends (a 2026-07-28-or-later revision selects the stateless era);
    /// applied in order with the messages. Nothing on a line stream.
    pub fn set_protocol_version(&self, version: Option<&str>) {
        {
            let mut s = self.shared.lock();
            if s.http {
                s.close_stream = version.is_some_and(|v| Era::of(v) == Era::Stateless);
            }
        }
        let _ = self.out.send(Out::SetVersion(version.map(str::to_owned)));
    }

    /// Opens the session: `server/discover` first when
    /// [`Handshake::discover`] is given, falling back to `initialize` (then
    /// `notifications/initialized`) when it is answered with an error or its
    /// `supportedVersions` lacks [`Handshake::version`]. Over HTTP the
    /// negotiated revision is sent as `MCP-Protocol-Version` afterwards.
    ///
    /// # Errors
    /// [`SessionErrorKind::Closed`], [`SessionErrorKind::Timeout`];
    /// [`SessionErrorKind::Refused`] when `initialize` is answered with an
    /// error; [`SessionErrorKind::NoProtocolVersion`].
    pub async fn handshake(&self, hs: &Handshake) -> Result<Handshook, SessionError> {
        let mut fell_back = false;
        if let Some(params) = &hs.discover {
            if let Some(v) = &hs.version {
                self.set_protocol_version(Some(v.as_str()));
            }
            let (outcome, msg) = self
                .call(method::SERVER_DISCOVER, params, hs.timeout)
                .await?;
            if outcome == Outcome::Ok {
                let result = msg.get("result").cloned().unwrap_or(Value::Null);
                let listed = match &hs.version {
                    None => true,
                    Some(v) => supported_versions(&result).is_some_and(|l| l.contains(v)),
                };
                if listed {
                    return Ok(Handshook {
                        method: method::SERVER_DISCOVER,
                        protocol_version: hs.version.clone(),
                        fell_back: false,
                        result,
                    });
                }
            }
            self.set_protocol_version(None);
            fell_back = true;
        }
        let (id, rx) = self.request(method::INITIALIZE, &hs.initialize);
        let err = |kind| SessionError {
            kind,
            method: method::INITIALIZE.to_owned(),
            id,
        };
        let msg = match tokio::time::timeout(hs.timeout, rx).await {
            Ok(Ok((Outcome::Ok, msg))) => msg,
            Ok(Ok((Outcome::Error(e), _))) => return Err(err(SessionErrorKind::Refused(e))),
            Ok(Ok((
                o @ (Outcome::Http { .. } | Outcome::Dropped(_) | Outcome::InputRequired(_)),
                _,
            ))) => {
                return Err(err(SessionErrorKind::Failed(o)));
            }
            Ok(_) => return Err(err(SessionErrorKind::Closed(self.transport_error()))),
            Err(_) => {
                self.cancel(id, "mcptape: timeout");
                self.abandon(id);
                return Err(err(SessionErrorKind::Timeout {
                    ms: u64::try_from(hs.timeout.as_millis()).unwrap_or(u64::MAX),
                }));
            }
        };
        let result = msg.get("result").cloned().unwrap_or(Value::Null);
        let version = mcptape_wire::protocol::HandshakeResult::of(&result)
            .revision()
            .ok_or_else(|| err(SessionErrorKind::NoProtocolVersion))?;
        self.set_protocol_version(Some(version.as_str()));
        self.notify(method::NOTIFICATIONS_INITIALIZED, &Value::Null);
        Ok(Handshook {
            method: method::INITIALIZE,
            protocol_version: Some(version),
            fell_back,
            result,
        })
    }

    /// Cancels request `id` the way of the transport (see the module docs)
    /// and moves it from pending to cancelled (a later answer is counted as
    /// late). Returns false, sending nothing, when its answer already arrived
    /// (that answer is then counted as late).
    ///
    /// A request retried after `input_required` is cancelled under its
    /// current id.
    pub fn cancel(&self, id: u64, reason: &str) -> bool {
        let key = self.shared.current_key(id);
        {
            let mut s = self.shared.lock();
            if s.pending.remove(&key).is_none() {
                s.late += 1;
                return false;
            }
            // The alias stays until `abandon`, which follows it too.
            s.retriable.remove(&key);
            s.cancelled.insert(key.clone(), false);
        }
        let current = RequestId::from_json(&key).unwrap_or_else(|_| RequestId::from(id));
        let params = serde_json::to_value(CancelledParams {
            request_id: &current,
            reason,
        })
        .unwrap_or(Value::Null);
        let bytes = line(&message(method::NOTIFICATIONS_CANCELLED, None, &params));
        let _ = self.out.send(Out::Cancel { bytes, id: key });
        true
    }

    /// Stops waiting for cancelled request `id`; returns true if it never answered.
    pub fn abandon(&self, id: u64) -> bool {
        let key = id_key(id);
        let key = self.shared.lock().alias.remove(&key).unwrap_or(key);
        self.shared
            .lock()
            .cancelled
            .remove(&key)
            .is_some_and(|seen| !seen)
    }

    /// True once the connection is gone (stdio end of stream or read error,
    /// HTTP transport error, [`Session::close`]).
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }

    /// The transport error that closed (or disturbed) the session, if any:
    /// a read or write failure, an HTTP transport error.
    pub fn transport_error(&self) -> Option<String> {
        self.shared.lock().transport_error.clone()
    }

    /// How [`Session::cancel`] cancels now: [`Cancellation::CloseStream`] on
    /// 2026-07-28 Streamable HTTP, [`Cancellation::Notification`] on a line
    /// stream and on 2025 session-era HTTP.
    pub fn cancellation(&self) -> Cancellation {
        if self.shared.lock().close_stream {
            Cancellation::CloseStream
        } else {
            Cancellation::Notification
        }
    }

    /// `input_required` results answered by a retry (one per extra round).
    pub fn input_rounds(&self) -> u64 {
        self.shared.lock().input_rounds
    }

    /// HTTP exchanges whose connection was dropped before their answer
    /// ([`Outcome::Dropped`]).
    pub fn dropped_connections(&self) -> u64 {
        self.shared.lock().dropped
    }

    /// Messages from the server that the strict parser
    /// ([`mcptape_wire::envelope::parse_message`]) rejected (not JSON-RPC 2.0:
    /// `"id": 1.5`, duplicate keys, a batch...); they answer nothing.
    pub fn invalid_messages(&self) -> u64 {
        self.shared.lock().invalid
    }

    /// Lines from a line-stream server that are not one JSON value (a
    /// banner on stdout, a reply cut short or corrupted): they answer
    /// nothing. Blank lines are not counted.
    pub fn noise_lines(&self) -> u64 {
        self.shared.lock().noise
    }

    /// Lines from a line-stream server longer than [`SESSION_MAX_LINE_BYTES`]
    /// (dropped unread: they answer nothing).
    pub fn too_long_lines(&self) -> u64 {
        self.shared.lock().too_long
    }

    /// Responses that arrived after their request was cancelled.
    pub fn late_responses(&self) -> u64 {
        self.shared.lock().late
    }

    /// Responses whose id matched nothing sent, and server requests answered.
    pub fn unexpected(&self) -> (u64, u64) {
        let s = self.shared.lock();
        (s.unknown, s.server_requests)
    }

    /// Methods of the server-to-client requests answered, in order.
    pub fn answered_server_requests(&self) -> Vec<String> {
        self.shared.lock().answered.clone()
    }

    /// Ends the session: a line stream is closed (the server sees end of
    /// input), an HTTP 2025-era session is ended with `DELETE`; then waits
    /// up to `wait` for the session's tasks (a stdio reader ends at the
    /// server's end of stream).
    pub async fn close(&self, wait: Duration) {
        let (tx, rx) = oneshot::channel();
        if self.out.send(Out::Close(tx)).is_ok() {
            let _ = tokio::time::timeout(wait, rx).await;
        }
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        for t in tasks {
            let _ = tokio::time::timeout(wait, t).await;
        }
        self.shared.close_all(None);
    }
}

type Inflight = Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>>;

async fn http_driver(
    mut client: HttpClient,
    mut rx: mpsc::UnboundedReceiver<Out>,
    sh: Arc<Shared>,
) {
    let exchanges = Arc::new(AtomicU64::new(client.exchanges()));
    let inflight: Inflight = Arc::default();
    while let Some(o) = rx.recv().await {
        match o {
            Out::SetVersion(Some(v)) => client.set_protocol_version(v),
            Out::SetVersion(None) => client.clear_protocol_version(),
            Out::Close(ack) => {
                for (_, h) in inflight.lock().unwrap_or_else(|p| p.into_inner()).drain() {
                    h.abort();
                }
                delete_session(&mut client, &exchanges, &sh).await;
                let _ = ack.send(());
                break;
            }
            _ if sh.lock().closed => {} // a transport error ended the session
            Out::Cancel { bytes, id } => {
                if let Some(h) = inflight
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&id)
                {
                    h.abort(); // closes the request's stream
                }
                if client.era() == Era::Session {
                    let n = exchanges.fetch_add(1, Ordering::Relaxed);
                    post_or_close(&mut client, n, &bytes, None, &sh).await;
                }
            }
            Out::Msg { bytes, method, id } => {
                let n = exchanges.fetch_add(1, Ordering::Relaxed);
                // Notifications and handshake requests in order (the
                // session id and version they settle apply to what follows);
                // requests and answers to server requests concurrently.
                let in_order = (id.is_none() && method.is_some())
                    || method
                        .as_deref()
                        .is_some_and(|m| method::HANDSHAKES.contains(&m));
                if in_order {
                    post_or_close(&mut client, n, &bytes, id.as_deref(), &sh).await;
                    continue;
                }
                let (mut c, sh2, inf) = (client.clone(), sh.clone(), inflight.clone());
                let key = id.clone();
                let h = tokio::spawn(async move {
                    post_or_close(&mut c, n, &bytes, key.as_deref(), &sh2).await;
                    if let Some(k) = key {
                        inf.lock().unwrap_or_else(|p| p.into_inner()).remove(&k);
                    }
                });
                if let Some(k) = id {
                    inflight
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(k, h.abort_handle());
                }
            }
        }
    }
}

/// POSTs one message. A dropped connection (or a body cut short) ends only
/// this request ([`Outcome::Dropped`]); a connect failure or another
/// transport error closes the session.
async fn post_or_close(
    client: &mut HttpClient,
    n: u64,
    bytes: &[u8],
    id: Option<&str>,
    sh: &Shared,
) {
    use crate::http::HttpErrorKind;
    let text = std::str::from_utf8(&bytes[..bytes.len() - 1]).unwrap_or_default();
    if let Err(e) = post_one(client, n, text, id, sh).await {
        match (&e.kind, id) {
            (HttpErrorKind::Dropped(_) | HttpErrorKind::Body(_), Some(id)) => {
                sh.exchange_dropped(id, e.kind.to_string());
            }
            (HttpErrorKind::Dropped(_) | HttpErrorKind::Body(_), None) => {
                sh.lock().dropped += 1; // a notification or an answer: nothing waits
            }
            _ => sh.close_all(Some(format!("HTTP: {}", e.kind))),
        }
    }
}

async fn post_one(
    client: &mut HttpClient,
    n: u64,
    text: &str,
    id: Option<&str>,
    sh: &Shared,
) -> Result<(), HttpError> {
    let headers = client.post_headers(text);
    sh.observe(WireEvent::PostSent {
        exchange: n,
        headers: &headers,
        body: text,
    });
    let mut resp = client.send(text).await?;
    let status = resp.head.status;
    sh.observe(WireEvent::PostHead {
        exchange: n,
        status,
        headers: &resp.head.headers,
    });
    let mut items = 0;
    let mut error_body = Vec::new();
    while let Some(item) = resp.next_item().await {
        let item = item?;
        items += 1;
        if status >= 400 && error_body.len() < HTTP_ERROR_BODY_SHOWN {
            let b: &[u8] = match &item {
                ReplyItem::Json(s) => s.as_bytes(),
                ReplyItem::Event(ev) => ev.data.as_bytes(),
                ReplyItem::Other(b) => b,
            };
            error_body
                .extend_from_slice(&b[..b.len().min(HTTP_ERROR_BODY_SHOWN - error_body.len())]);
        }
        sh.observe(WireEvent::PostItem {
            exchange: n,
            item: &item,
        });
        let answered = match &item {
            ReplyItem::Json(s) => sh.dispatch(Cow::Borrowed(s.as_bytes()), false, None).0,
            ReplyItem::Event(ev) => match ev.payload() {
                SsePayload::JsonRpc(s) => sh.dispatch(Cow::Borrowed(s.as_bytes()), false, None).0,
                SsePayload::Other(_) => None,
            },
            ReplyItem::Other(_) => None,
        };
        if answered.is_some() && answered.as_deref() == id {
            break; // the request's answer: stop reading this stream
        }
    }
    sh.observe(WireEvent::PostEnd { exchange: n, items });
    if let Some(id) = id {
        sh.exchange_unanswered(id, status, &error_body);
    }
    Ok(())
}

/// Ends a 2025-era session with `DELETE` (nothing without a session).
async fn delete_session(client: &mut HttpClient, exchanges: &AtomicU64, sh: &Shared) {
    let Some(sid) = client.session_id().map(str::to_owned) else {
        return;
    };
    let n = exchanges.fetch_add(1, Ordering::Relaxed);
    let mut headers = vec![(header::SESSION_ID.to_owned(), sid)];
    if let Some(v) = client.protocol_version() {
        headers.push((header::PROTOCOL_VERSION.to_owned(), v.to_owned()));
    }
    sh.observe(WireEvent::DeleteSent {
        exchange: n,
        headers: &headers,
    });
    if let Ok(Some(status)) = client.delete_session().await {
        sh.observe(WireEvent::DeleteStatus {
            exchange: n,
            status,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The server side of a duplex: lines the session wrote, and a writer to answer.
    fn pair() -> (
        Session,
        FramedReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) {
        let (a, b) = tokio::io::duplex(1 << 16);
        let (ar, aw) = tokio::io::split(a);
        let (br, bw) = tokio::io::split(b);
        (
            Session::over(ar, aw),
            FramedReader::new(br, MAX_LINE_BYTES),
            bw,
        )
    }

    async fn next_msg(r: &mut FramedReader<impl AsyncRead + Unpin>) -> Value {
        match r.next().await.unwrap() {
            Some(Frame::Message(b)) => serde_json::from_slice(&b).unwrap(),
            other => panic!("expected a message, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn ids_match_as_raw_json_text_string_one_is_not_number_one() {
        let (s, mut r, mut w) = pair();
        let (id, rx) = s.request("resources/read", &json!({"uri": "x://a"}));
        assert_eq!(id, 1);
        let sent = next_msg(&mut r).await;
        assert_eq!(sent["id"], json!(1));
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":[]}}\n")
            .await
            .unwrap();
        let (o, msg) = rx.await.unwrap();
        assert_eq!(o, Outcome::Ok);
        assert_eq!(msg["result"], json!({"contents": []}));
        assert_eq!(
            s.unexpected(),
            (1, 0),
            "the string id \"1\" answered nothing"
        );
    }

    #[tokio::test]
    async fn server_requests_get_method_not_found_except_ping() {
        let (s, mut r, mut w) = pair();
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n")
            .await
            .unwrap();
        let a = next_msg(&mut r).await;
        assert_eq!(a["id"], json!(7));
        assert_eq!(a["error"]["code"], json!(METHOD_NOT_FOUND));
        let p = next_msg(&mut r).await;
        assert_eq!(
            (p["id"].clone(), p["result"].clone()),
            (json!("p"), json!({}))
        );
        assert_eq!(s.answered_server_requests(), ["roots/list", "ping"]);
        assert_eq!(s.unexpected(), (0, 2));
    }

    #[tokio::test]
    async fn cancel_on_a_line_stream_sends_notifications_cancelled_and_counts_late() {
        let (s, mut r, mut w) = pair();
        let (id, _rx) = s.request("resources/read", &json!({"uri": "x://slow"}));
        let _ = next_msg(&mut r).await;
        assert!(s.cancel(id, "deadline"));
        let c = next_msg(&mut r).await;
        assert_eq!(c["method"], json!("notifications/cancelled"));
        assert_eq!(c["params"], json!({"requestId": 1, "reason": "deadline"}));
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .unwrap();
        // The late answer is counted once the reader saw it.
        for _ in 0..100 {
            if s.late_responses() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(s.late_responses(), 1);
        assert!(!s.abandon(id), "it did answer, late");
    }

    #[tokio::test]
    async fn handshake_falls_back_from_discover_to_initialize_for_a_2025_peer() {
        let (s, mut r, mut w) = pair();
        let server = tokio::spawn(async move {
            let d = next_msg(&mut r).await;
            assert_eq!(d["method"], json!("server/discover"));
            w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n").await.unwrap();
            let i = next_msg(&mut r).await;
            assert_eq!(i["method"], json!("initialize"));
            assert_eq!(i["id"], json!(2));
            w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"serverInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n").await.unwrap();
            let n = next_msg(&mut r).await;
            assert_eq!(
                n,
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            );
        });
        let hs = s
            .handshake(&Handshake {
                discover: Some(json!({})),
                version: Some(Revision::V2026_07_28),
                initialize: json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
                timeout: Duration::from_secs(5),
            })
            .await
            .unwrap();
        assert_eq!(hs.method, "initialize");
        assert!(hs.fell_back);
        assert_eq!(hs.protocol_version, Some(Revision::V2025_06_18));
        server.await.unwrap();
    }

    /// MCP 2026-07-28 Multi Round-Trip Requests: an `input_required` result is
    /// retried with a new id, `inputResponses` and the echoed `requestState`;
    /// the caller sees one request and one answer, and cancels by the first id.
    #[tokio::test]
    async fn input_required_and_its_retry_are_one_read() {
        let (s, mut r, mut w) = pair();
        let (id, rx) = s.request("resources/read", &json!({"uri": "x://a"}));
        assert_eq!(next_msg(&mut r).await["id"], json!(1));
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{\"ok\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"sure?\"}}},\"requestState\":\"st-1\"}}\n")
            .await
            .unwrap();
        let retry = next_msg(&mut r).await;
        assert_eq!(retry["id"], json!(2), "a new id");
        assert_eq!(retry["method"], json!("resources/read"));
        assert_eq!(
            retry["params"],
            json!({"uri": "x://a", "inputResponses": {"ok": {"action": "decline"}}, "requestState": "st-1"})
        );
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":\"complete\",\"contents\":[]}}\n")
            .await
            .unwrap();
        let (o, msg) = rx.await.unwrap();
        assert_eq!(o, Outcome::Ok);
        assert_eq!(msg["id"], json!(2));
        assert_eq!(s.input_rounds(), 1);
        assert_eq!(s.unexpected(), (0, 0));

        // A second read stuck in its retry is cancelled under the retry's id.
        let (id2, _rx2) = s.request("resources/read", &json!({"uri": "x://b"}));
        assert_eq!(id2, 3);
        let _ = next_msg(&mut r).await;
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"resultType\":\"input_required\",\"requestState\":\"st-2\"}}\n")
            .await
            .unwrap();
        assert_eq!(next_msg(&mut r).await["id"], json!(4));
        assert!(s.cancel(id2, "deadline"));
        let c = next_msg(&mut r).await;
        assert_eq!(c["params"]["requestId"], json!(4));
        assert!(s.abandon(id2));
        assert_ne!(id, id2);
    }

    /// Input mcptape cannot give (sampling) ends the request, said as such.
    #[tokio::test]
    async fn input_required_for_sampling_is_an_unfinished_read() {
        let (s, mut r, mut w) = pair();
        let (_, rx) = s.request("resources/read", &json!({"uri": "x://a"}));
        let _ = next_msg(&mut r).await;
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{\"k\":{\"method\":\"sampling/createMessage\",\"params\":{}}}}}\n")
            .await
            .unwrap();
        let (o, _) = rx.await.unwrap();
        match o {
            Outcome::InputRequired(why) => assert!(why.contains("sampling/createMessage"), "{why}"),
            o => panic!("expected InputRequired, got {o:?}"),
        }
        assert_eq!(s.input_rounds(), 0);
    }

    /// A reader that fails after its data: the session is closed with the
    /// error, not as if the server had ended its output.
    #[tokio::test]
    async fn read_error_closes_the_session_as_an_error_not_as_eof() {
        // The reply to id 1 has no trailing newline and is followed by a read error.
        let r = tokio_test::io::Builder::new()
            .read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}")
            .read_error(std::io::Error::other("EIO"))
            .build();
        let s = Session::over(r, tokio::io::sink());
        let a = s.call("ping", &Value::Null, Duration::from_secs(5)).await;
        assert_eq!(
            a.unwrap().0,
            Outcome::Ok,
            "the held last line still answers"
        );
        let e = s
            .call("ping", &Value::Null, Duration::from_secs(5))
            .await
            .unwrap_err();
        match e.kind {
            SessionErrorKind::Closed(Some(why)) => assert!(why.contains("EIO"), "{why}"),
            k => panic!("expected Closed with the read error, got {k:?}"),
        }
    }

    /// Regression (issue 12): a multi-MB reply whose `result` holds its own
    /// `"id"` members answers the raw request by its top-level id, with the
    /// bytes as sent; an error answer carries its code; a corrupted line
    /// answers nothing and is counted.
    /// Regression (issue 22, ninth round): long replies scanned with their prescan hints are
    /// checked as strictly as before: a 200 KB blob with a raw control byte or an invalid
    /// UTF-8 byte inside is not an answer (counted as noise), one with escapes is.
    #[tokio::test]
    async fn long_corrupted_replies_are_not_answers_with_prescan_hints() {
        let (s, mut r, mut w) = pair();
        let mut rxs = Vec::new();
        for _ in 0..3 {
            rxs.push(
                s.request_raw("resources/read", &json!({"uri": "x://big"}), false)
                    .1,
            );
            let _ = next_msg(&mut r).await;
        }
        let half = "QUJD".repeat(25_000);
        let reply = move |id: u64, middle: &[u8]| {
            let mut l = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"x://big","blob":"{half}"#
            )
            .into_bytes();
            l.extend_from_slice(middle);
            l.extend_from_slice(format!(r#"{half}"}}]}}}}"#).as_bytes());
            l.push(b'\n');
            l
        };
        let server = tokio::spawn(async move {
            w.write_all(&reply(1, b"\x01")).await.unwrap();
            w.write_all(&reply(2, b"\xff")).await.unwrap();
            w.write_all(&reply(3, b"\\n\\u00e9")).await.unwrap();
            w
        });
        let a3 = rxs.pop().unwrap().await.unwrap();
        let _w = server.await.unwrap();
        assert_eq!(a3.outcome, Outcome::Ok);
        assert_eq!(s.noise_lines(), 2, "the corrupted replies are not messages");
        for mut rx in rxs {
            assert!(rx.try_recv().is_err(), "still unanswered");
        }
    }

    #[tokio::test]
    async fn raw_requests_are_answered_from_the_envelope_of_large_replies() {
        let (s, mut r, mut w) = pair();
        let (id1, rx1) = s.request_raw("resources/read", &json!({"uri": "x://big"}), true);
        let (id2, rx2) = s.request_raw("resources/read", &json!({"uri": "x://gone"}), false);
        let (_, rx3) = s.request_raw("resources/read", &json!({"uri": "x://bad"}), true);
        assert_eq!((id1, id2), (1, 2));
        for _ in 0..3 {
            let _ = next_msg(&mut r).await;
        }
        let blob = "QUJD".repeat(1 << 20);
        let big = format!(
            r#"{{"jsonrpc":"2.0","result":{{"id":2,"contents":[{{"uri":"x://big","text":"\"id\":3","blob":"{blob}"}}]}},"id":1}}"#
        );
        // Request 3's reply with a raw control byte inside its blob.
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"contents":[{{"uri":"x://bad","blob":"QU{}JD"}}]}}}}"#,
            '\u{1}'
        );
        let server = tokio::spawn(async move {
            w.write_all(big.as_bytes()).await.unwrap();
            w.write_all(b"\n").await.unwrap();
            w.write_all(bad.as_bytes()).await.unwrap();
            w.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"Resource not found\",\"data\":{\"uri\":\"x://gone\"}}}\n")
                .await
                .unwrap();
            (w, big)
        });
        let a1 = rx1.await.unwrap();
        let a2 = rx2.await.unwrap();
        let (_w, big) = server.await.unwrap();
        assert_eq!(a1.outcome, Outcome::Ok);
        assert_eq!(a1.line, big.as_bytes());
        assert!(a2.line.is_empty(), "not kept");
        match a2.outcome {
            Outcome::Error(e) => {
                assert_eq!(e.code, -32602);
                assert_eq!(e.data, Some(json!({"uri": "x://gone"})));
            }
            o => panic!("expected an error, got {o:?}"),
        }
        assert_eq!(s.noise_lines(), 1, "the corrupted reply is not a message");
        assert_eq!(s.unexpected(), (0, 0));
        let mut rx3 = rx3;
        assert!(rx3.try_recv().is_err(), "request 3 is still unanswered");
    }
}
