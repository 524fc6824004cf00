//! `serve --listen`: the recorded server over MCP Streamable HTTP (one POST per
//! JSON-RPC message, answered with `application/json`, or with a
//! `text/event-stream` when the recorded server answered with one or sent
//! messages before the reply — 2025-11-25 "Transports" §Streamable HTTP).
//!
//! An event stream is written as its events fall due, at the times the stdio
//! path writes the same messages (`serve::outgoing_in_order`): each interim
//! message recorded before the reply (progress with the client's token, a
//! server request, a log message) at its own offset from the request, scaled
//! to the drawn delay, then the reply at the drawn delay, then the stream
//! ends; a reply with nothing before it is one whole body. The status line
//! and headers go when the first event is due: a request cancelled before
//! then (JSON or stream alike) is answered with an event stream holding no
//! event, one cancelled later has its stream cut off (the connection closed)
//! before the reply.
//!
//! Both protocol eras: when the tape's handshake is `initialize` (2025-06-18,
//! 2025-11-25) the `initialize` answer carries an `Mcp-Session-Id` header that
//! every later request must repeat (400 without it, 404 for an unknown one,
//! `DELETE` ends the session — 2025-11-25 "Transports" §Session Management);
//! for a 2026-07-28 tape (`server/discover`) there are no sessions. A tape
//! with neither handshake answered whose server rejected session-less
//! requests (a 2025 server driven by a 2026-07-28 client) keeps that
//! rejection: every session-less request gets it, as recorded. `GET`
//! (server-initiated stream) is answered 405. Faults: a stall never answers
//! (the client's timeout or disconnect ends it), drop-connection closes the
//! TCP connection without a response.
//!
//! Sessions: ids are 128 bits from the OS CSPRNG, in hex. A request without
//! one gets the recording's own rejection of that case (else 400); an
//! unknown or ended one gets the recording's rejection of a stale session
//! (else 404 with a `-32001 "Session not found"` body, as the TypeScript SDK
//! servers answer) — never a rejection recorded for another reason.
//!
//! Requests belong to their scope (`Scope`): the session for 2025-era
//! HTTP, the HTTP request itself for 2026-07-28 stateless HTTP (and for a
//! session-less request of a session tape). Pending answers are keyed by
//! scope and raw id, so two clients that both number their ids from 0 never
//! touch each other's requests, and a `notifications/cancelled` reaches only
//! its own session's request. A pending answer is counted cancelled only
//! when a cancel came for it: that notification, or its stream closed by the
//! client (the handler's future dropped before the answer).
//!
//! DNS rebinding (2025-11-25 "Transports" §Security Warning): every request
//! first passes [`mcptape_transport::origin::LoopbackGuard`]; a foreign
//! `Origin` or a `Host` other than the bound loopback address is answered 403.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::time::Instant;

use mcptape_wire::envelope::{ErrorObject, Message, RequestId};
use mcptape_wire::protocol::method;

use crate::error::{ReplayError, ReplayErrorKind};
use crate::metrics::InFlight;
use crate::schedule::{TimerMode, deadline_after, sleep_until_precise};
use crate::serve::{Answer, InterimOut, Server, parse_incoming_raw};
use mcptape_transport::framed::MAX_LINE_BYTES;
use mcptape_transport::listen;
use mcptape_transport::origin::LoopbackGuard;

/// Session header of the 2025-03-26 … 2025-11-25 Streamable HTTP transport
/// (`Mcp-Session-Id`, [`mcptape_wire::protocol::header::SESSION_ID`]).
pub use mcptape_wire::protocol::header::SESSION_ID as SESSION_HEADER;

/// Largest request body accepted, bytes (same as a stdio line).
pub const MAX_BODY_BYTES: usize = MAX_LINE_BYTES;

/// A response body: whole ([`Full`]), or an event stream whose events are
/// written as they fall due ([`sse_body`]); its error closes the connection
/// mid-body (a cancelled stream).
type HttpBody = UnsyncBoxBody<Bytes, DropConnection>;

/// `bytes` as a whole body.
fn full(bytes: impl Into<Bytes>) -> HttpBody {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// Whose request a pending answer is: the state of one client never keys on
/// the id alone (2025-11-25 "Transports" §Session Management: ids are unique
/// per session, not per server).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Scope {
    /// 2025-era HTTP: the `Mcp-Session-Id` the request carried (or was given).
    Session(String),
    /// 2026-07-28 stateless HTTP, or a session-less request: the HTTP request
    /// itself (numbered from 0); only closing its stream cancels it.
    Request(u64),
}

/// Pending answers by (scope, raw id text): each entry's number (unique per
/// request) and the sender that cancels it.
type PendingMap = HashMap<(Scope, String), Vec<(u64, oneshot::Sender<()>)>>;

struct HttpState {
    server: Arc<Server>,
    sessions: bool,
    live: Mutex<HashSet<String>>,
    pending: Mutex<PendingMap>,
    next_request: AtomicU64,
    next_event: Mutex<u64>,
    guard: LoopbackGuard,
}

impl HttpState {
    fn pending(&self) -> std::sync::MutexGuard<'_, PendingMap> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Cancels every pending answer to `id` in `scope`; how many there were.
    fn cancel(&self, scope: &Scope, id: &str) -> usize {
        let Some(waiting) = self.pending().remove(&(scope.clone(), id.to_owned())) else {
            return 0;
        };
        let n = waiting.len();
        for (_, tx) in waiting {
            let _ = tx.send(());
        }
        n
    }
}

/// A pending answer's place in [`HttpState::pending`]: removed when the
/// answer is sent, cancelled or its stream is closed (the handler's future
/// dropped); in the last two cases the reply is counted cancelled, once.
struct PendingAnswer {
    st: Arc<HttpState>,
    key: (Scope, String),
    n: u64,
    answered: bool,
}

impl Drop for PendingAnswer {
    fn drop(&mut self) {
        let mut g = self.st.pending();
        if let Some(v) = g.get_mut(&self.key) {
            v.retain(|(n, _)| *n != self.n);
            if v.is_empty() {
                g.remove(&self.key);
            }
        }
        drop(g);
        if !self.answered {
            self.st.server.record_cancel();
        }
    }
}

/// Bytes of randomness in a session id (128 bits).
pub const SESSION_ID_BYTES: usize = 16;

/// A new session id: [`SESSION_ID_BYTES`] from the OS CSPRNG, as lowercase
/// hex (32 characters, visible ASCII as 2025-11-25 "Transports" requires).
///
/// # Errors
/// [`ReplayErrorKind::Io`] when the OS has no randomness to give.
pub fn new_session_id() -> Result<String, ReplayError> {
    use rand::TryRngCore;
    let mut b = [0u8; SESSION_ID_BYTES];
    rand::rngs::OsRng
        .try_fill_bytes(&mut b)
        .map_err(|e| ReplayError::new(ReplayErrorKind::Io(std::io::Error::other(e))))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Error making a connection fail (drop-connection fault).
#[derive(Debug)]
struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("drop-connection fault")
    }
}

impl std::error::Error for DropConnection {}

fn resp(status: StatusCode, body: Option<String>, session: Option<&str>) -> Response<HttpBody> {
    let mut b = Response::builder().status(status);
    if body.is_some() {
        b = b.header("content-type", "application/json");
    }
    if let Some(s) = session {
        b = b.header(SESSION_HEADER, s);
    }
    let bytes = body.map(Bytes::from).unwrap_or_default();
    b.body(full(bytes))
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// The whole request body when it is at most `limit` bytes
/// ([`MAX_BODY_BYTES`] when serving; a parameter so the limit is tested
/// cheaply). A longer body is answered `413 Payload Too Large` (RFC 9110
/// §15.5.14) with a JSON-RPC 2.0 §5.1 `-32700` (Parse error) body, `"id":
/// null`, naming the limit in bytes: what `serve` over stdio answers for a
/// line over its limit. A body that fails to arrive (the connection breaks
/// mid-body) is answered `400 Bad Request` with the same kind of body.
///
/// # Errors
/// The refusal response, as above.
async fn collect_body<B>(body: B, limit: usize) -> Result<Bytes, Response<HttpBody>>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, limit).collect().await {
        Ok(b) => Ok(b.to_bytes()),
        Err(e) => {
            let (status, what) = if e.is::<http_body_util::LengthLimitError>() {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("request body is longer than the limit of {limit} bytes"),
                )
            } else {
                (
                    StatusCode::BAD_REQUEST,
                    format!("request body could not be read: {e}"),
                )
            };
            let msg = Message::error(
                None,
                ErrorObject::new(
                    crate::serve::PARSE_ERROR,
                    format!("mcptape serve: parse error: {what}"),
                ),
            );
            Err(resp(status, Some(msg.to_json()), None))
        }
    }
}

/// A `200 application/json` response with `body` as is.
fn json_resp(body: String, session: Option<&str>) -> Response<HttpBody> {
    let mut b = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json");
    if let Some(s) = session {
        b = b.header(SESSION_HEADER, s);
    }
    b.body(full(body))
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// Waits until `due`; `true` when the request was cancelled first (its
/// `cancel` receiver completed). A receiver whose sender is gone can no
/// longer cancel: it is set to `None` and the wait goes on.
async fn due_or_cancelled(
    due: Instant,
    timer: TimerMode,
    cancel: &mut Option<oneshot::Receiver<()>>,
) -> bool {
    let Some(rx) = cancel.as_mut() else {
        sleep_until_precise(due, timer).await;
        return false;
    };
    let sleep = sleep_until_precise(due, timer);
    tokio::pin!(sleep);
    let fired = tokio::select! {
        () = &mut sleep => None,
        r = rx => Some(r.is_ok()),
    };
    match fired {
        None => false,
        Some(true) => true,
        Some(false) => {
            *cancel = None;
            sleep.await;
            false
        }
    }
}

/// One event of an answer's event stream: when it is due and its message.
struct SseEvent {
    /// When it is written (never before).
    due: Instant,
    /// The message, one JSON-RPC text (the event's `data`).
    text: String,
    /// It is the request's reply (the stream's last event).
    reply: bool,
}

/// The events of an answer, in order: each interim message recorded before
/// the reply at `received` + its `due_us` (µs; never after the reply), then
/// the reply `body` at `received` + `delay_us` — the deadlines the stdio
/// path gives the same messages (`serve::outgoing_in_order`).
fn sse_events(
    received: Instant,
    delay_us: u64,
    body: String,
    interim: Vec<InterimOut>,
) -> Vec<SseEvent> {
    let deadline = deadline_after(received, delay_us);
    let mut events: Vec<SseEvent> = interim
        .into_iter()
        .filter(|m| m.before_reply)
        .map(|m| SseEvent {
            due: deadline_after(received, m.due_us).min(deadline),
            text: m.text,
            reply: false,
        })
        .collect();
    events.push(SseEvent {
        due: deadline,
        text: body,
        reply: true,
    });
    events
}

/// What an event stream holds while it is written ([`sse_body`]).
struct SseStream {
    st: Arc<HttpState>,
    /// The events not written yet, in order.
    events: std::vec::IntoIter<SseEvent>,
    /// Completed by a `notifications/cancelled` for the request.
    cancel: Option<oneshot::Receiver<()>>,
    /// The request's pending answer: dropped unanswered (the stream cancelled
    /// or closed by the client) it counts the reply cancelled.
    pending: Option<PendingAnswer>,
    /// `serve --metrics`: the request is in flight until the stream ends.
    _in_flight: Option<InFlight>,
    /// When the request was read.
    received: Instant,
    /// The reply's scheduled delay, µs.
    delay_us: u64,
}

/// A `text/event-stream` body (WHATWG HTML §9.2 "Server-sent events"): one
/// event (`id: mcptape-N`, `event: message`, `data:` the message) per entry
/// of `s.events`, each written at its due time, the reply's last; then the
/// body ends. A cancel before an event is due ends the body with an error
/// (hyper closes the connection: the stream is cut off unanswered).
fn sse_body(s: SseStream) -> HttpBody {
    let stream = futures::stream::unfold(s, |mut s| async move {
        let ev = s.events.next()?;
        if due_or_cancelled(ev.due, s.st.server.timer(), &mut s.cancel).await {
            // Nothing more is written; `pending`'s drop (with the body) counts the cancel.
            s.events = Vec::new().into_iter();
            return Some((Err(DropConnection), s));
        }
        if ev.reply {
            if let Some(mut p) = s.pending.take() {
                p.answered = true;
            }
            s.st.server
                .record_delay(s.delay_us, s.received.elapsed().as_micros() as u64);
        }
        let event = sse_event(&s.st, &ev.text);
        Some((Ok(Frame::data(event)), s))
    });
    StreamBody::new(stream).boxed_unsync()
}

/// One event of an event stream carrying the JSON-RPC message `text`: `id: mcptape-N` (N
/// counts the server's events from 1), `event: message`, `data: TEXT`, a blank line.
fn sse_event(st: &HttpState, text: &str) -> Bytes {
    let n = {
        let mut g = st.next_event.lock().unwrap_or_else(|p| p.into_inner());
        *g += 1;
        *g
    };
    Bytes::from(format!("id: mcptape-{n}\nevent: message\ndata: {text}\n\n"))
}

/// The answer to a request cancelled by `notifications/cancelled` before anything of its
/// answer was due: `200 text/event-stream` with no event, ended — the request's stream closed
/// without its response, which MCP 2025-11-25 "Transports" §Streamable HTTP allows (the
/// server "MAY close the SSE stream" and SHOULD NOT answer a cancelled request, "Cancellation").
/// Closing the connection with no response at all (what serve did) broke real clients: the
/// Python SDK's session failed on `Server disconnected without sending a response` and its
/// next call never ran.
fn cancelled_resp(session: Option<&str>) -> Response<HttpBody> {
    sse_resp(full(Bytes::new()), session)
}

/// The `200 text/event-stream` response carrying `body` ([`sse_body`]).
fn sse_resp(body: HttpBody, session: Option<&str>) -> Response<HttpBody> {
    let mut b = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache");
    if let Some(s) = session {
        b = b.header(SESSION_HEADER, s);
    }
    b.body(body)
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// The answer to a request with a missing, unknown or ended session: the
/// recorded server's own rejection if the tape has one (as recorded, its
/// `id` included), else 400 (missing) / 404 (unknown), per 2025-11-25
/// "Transports" §Session Management, whose error echoes the request's `id`
/// (JSON-RPC 2.0 §5: `null` only when the id could not be read).
fn session_rejected(st: &HttpState, missing: bool, id: Option<RequestId>) -> Response<HttpBody> {
    let tape = st.server.tape();
    let recorded = if missing {
        &tape.session_rejection
    } else {
        &tape.stale_session_rejection
    };
    match recorded {
        Some(r) => resp(
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
            Some(r.body.to_string()),
            None,
        ),
        None if missing => resp(
            StatusCode::BAD_REQUEST,
            Some(Message::error(id, ErrorObject::session_required()).to_json()),
            None,
        ),
        None => resp(
            StatusCode::NOT_FOUND,
            Some(Message::error(id, ErrorObject::session_not_found()).to_json()),
            None,
        ),
    }
}

async fn handle(
    st: Arc<HttpState>,
    req: Request<Incoming>,
) -> Result<Response<HttpBody>, DropConnection> {
    let received = Instant::now();
    let text = |n: hyper::header::HeaderName| {
        req.headers()
            .get(n)
            .map(|v| v.to_str().unwrap_or("").to_owned())
    };
    if let Err(e) = st.guard.check(
        text(hyper::header::ORIGIN).as_deref(),
        text(hyper::header::HOST).as_deref(),
    ) {
        let mut r = Response::new(full(format!("mcptape serve: {e}")));
        *r.status_mut() = StatusCode::FORBIDDEN;
        return Ok(r);
    }
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // Whether the client takes an event stream (Streamable HTTP: it MUST list both
    // `application/json` and `text/event-stream` in Accept).
    let accepts_sse = text(hyper::header::ACCEPT).is_some_and(|a| a.contains("text/event-stream"));
    if req.uri().path() != "/mcp" {
        // The endpoint is `/mcp` (printed at start); anything else is not found.
        return Ok(resp(StatusCode::NOT_FOUND, None, None));
    }
    match *req.method() {
        Method::POST => {}
        Method::DELETE if st.sessions => {
            let known = session
                .as_ref()
                .is_some_and(|s| st.live.lock().unwrap_or_else(|p| p.into_inner()).remove(s));
            if let Some(m) = st.server.metrics().filter(|_| known) {
                m.session_closed();
            }
            return Ok(resp(
                if known {
                    StatusCode::OK
                } else {
                    StatusCode::NOT_FOUND
                },
                None,
                None,
            ));
        }
        _ => return Ok(resp(StatusCode::METHOD_NOT_ALLOWED, None, None)),
    }
    let body = tokio::time::timeout(
        listen::BODY_READ_TIMEOUT,
        collect_body(req.into_body(), MAX_BODY_BYTES),
    );
    let body = match body.await {
        Ok(Ok(b)) => b,
        // Over the limit (413) or broken off (400), answered -32700: counted as invalid.
        Ok(Err(refused)) => {
            st.server.record_invalid();
            return Ok(refused);
        }
        // Stalled mid-body past listen::BODY_READ_TIMEOUT: 408, the connection closed (its
        // body unread), counted as invalid.
        Err(_) => {
            st.server.record_invalid();
            return Ok(resp(StatusCode::REQUEST_TIMEOUT, None, None));
        }
    };
    // The strict reader (mcptape_wire::envelope): an invalid message is
    // answered 400 with its JSON-RPC 2.0 §5 error body, never matched.
    let inc = match parse_incoming_raw(&body) {
        Ok(m) => m,
        Err(err) => {
            st.server.record_invalid();
            return Ok(resp(
                StatusCode::BAD_REQUEST,
                Some(err.response().to_json()),
                None,
            ));
        }
    };
    let method = inc.message.method().unwrap_or("");
    let is_init = method == method::INITIALIZE;
    let mut new_session = None;
    if st.sessions {
        if is_init {
            let Ok(id) = new_session_id() else {
                return Ok(resp(StatusCode::INTERNAL_SERVER_ERROR, None, None));
            };
            st.live
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id.clone());
            if let Some(m) = st.server.metrics() {
                m.session_opened();
            }
            new_session = Some(id);
        } else if method != method::SERVER_DISCOVER {
            // `server/discover` is stateless (2026-07-28): answered as
            // recorded, with or without a session.
            match &session {
                None => return Ok(session_rejected(&st, true, inc.message.id().cloned())),
                Some(s)
                    if !st
                        .live
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .contains(s) =>
                {
                    return Ok(session_rejected(&st, false, inc.message.id().cloned()));
                }
                Some(_) => {}
            }
        }
    }
    let scope = match (st.sessions, new_session.as_ref().or(session.as_ref())) {
        (true, Some(s)) => Scope::Session(s.clone()),
        _ => Scope::Request(st.next_request.fetch_add(1, Ordering::Relaxed)),
    };
    // `serve --metrics`: in flight until this handler returns or is dropped (a stall ends
    // when the client goes away), or for an event stream until its body ends (`SseStream`).
    let in_flight = st
        .server
        .metrics()
        .map(crate::metrics::ServeMetrics::in_flight);
    match st.server.decide_incoming(&inc) {
        Answer::Reply {
            body,
            delay_us,
            sse,
            status,
            id_text,
            interim,
            ..
        } => {
            let n = st.next_request.fetch_add(1, Ordering::Relaxed);
            let key = (scope, id_text);
            let (tx, rx) = oneshot::channel();
            st.pending().entry(key.clone()).or_default().push((n, tx));
            let mut pending = PendingAnswer {
                st: st.clone(),
                key,
                n,
                answered: false,
            };
            let mut cancel = Some(rx);
            // The messages recorded before the reply (in its response stream, or over stdio
            // before it: progress with the client's token, a server request) go first, in
            // order, each at its own time. A reply recorded as JSON is sent as an event
            // stream when it has such messages and the client takes one: a stdio recording's
            // progress reaches an HTTP client too. A recorded rejection is never a stream.
            let has_before = interim.iter().any(|m| m.before_reply);
            let code = status.and_then(|c| StatusCode::from_u16(c).ok());
            if code.is_none() && (sse || (accepts_sse && has_before)) {
                let events = sse_events(received, delay_us, body, interim);
                // The headers go with the first event: cancelled before it, the request's
                // stream ends empty (`pending`'s drop counts the cancel).
                let first = events.first().map_or(received, |e| e.due);
                if due_or_cancelled(first, st.server.timer(), &mut cancel).await {
                    return Ok(cancelled_resp(new_session.as_deref()));
                }
                if let [only] = &events[..] {
                    // The reply alone, due now: one whole body with its length, as the stream
                    // holds nothing to space out (no chunked encoding, which some readers
                    // take differently: Chromium's HAR decodes a chunked event stream
                    // without a charset as Latin-1).
                    pending.answered = true;
                    drop(pending);
                    st.server
                        .record_delay(delay_us, received.elapsed().as_micros() as u64);
                    let body = full(sse_event(&st, &only.text));
                    return Ok(sse_resp(body, new_session.as_deref()));
                }
                let body = sse_body(SseStream {
                    st: st.clone(),
                    events: events.into_iter(),
                    cancel,
                    pending: Some(pending),
                    _in_flight: in_flight,
                    received,
                    delay_us,
                });
                return Ok(sse_resp(body, new_session.as_deref()));
            }
            let due = deadline_after(received, delay_us);
            if due_or_cancelled(due, st.server.timer(), &mut cancel).await {
                // The request's stream ends empty; `pending`'s drop counts the cancel.
                return Ok(cancelled_resp(new_session.as_deref()));
            }
            pending.answered = true;
            drop(pending);
            st.server
                .record_delay(delay_us, received.elapsed().as_micros() as u64);
            if let Some(code) = code {
                // A recorded rejection (e.g. 400 to `server/discover`): no
                // session is opened by it.
                let mut r = json_resp(body, None);
                *r.status_mut() = code;
                return Ok(r);
            }
            Ok(json_resp(body, new_session.as_deref()))
        }
        Answer::Cancel(id) => {
            // Only this scope's request: another session's request with the
            // same id is not touched.
            st.cancel(&scope, &id);
            Ok(resp(StatusCode::ACCEPTED, None, None))
        }
        Answer::Nothing => Ok(resp(StatusCode::ACCEPTED, None, None)),
        Answer::Stall => std::future::pending().await,
        // The recorded server died on this request: its stream closes unanswered.
        Answer::Drop | Answer::Crash { .. } => Err(DropConnection),
    }
}

/// Serves Streamable HTTP on `listener` until `shutdown` completes, loopback
/// origins only ([`serve_http_allowing`] with no extra origin).
///
/// # Errors
/// [`ReplayErrorKind::Io`] when accepting fails.
pub async fn serve_http(
    server: Arc<Server>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ReplayError> {
    serve_http_allowing(server, listener, &[], shutdown).await
}

/// Serves Streamable HTTP on `listener` until `shutdown` completes; requests
/// whose `Origin` is not loopback nor in `allowed_origins`, or whose `Host`
/// is not the bound address, get 403 ([`LoopbackGuard`]).
///
/// # Errors
/// [`ReplayErrorKind::Io`] when accepting fails or the bound address is unknown.
pub async fn serve_http_allowing(
    server: Arc<Server>,
    listener: TcpListener,
    allowed_origins: &[String],
    shutdown: impl Future<Output = ()>,
) -> Result<(), ReplayError> {
    let bound = listener
        .local_addr()
        .map_err(|e| ReplayError::new(ReplayErrorKind::Io(e)))?;
    // Sessions when the recorded server opened one: an `initialize` answered
    // with a result (also after a rejected `server/discover`, the fallback);
    // or when it never did but rejected a request for carrying no session
    // (a 2025 server driven by a 2026-07-28 client: server-everything's 400
    // "Server not initialized" to every POST), unless it answered a
    // `server/discover` (a stateless server): that rejection is replayed
    // as recorded instead of an answer the server never gave.
    let answered = |m: &str| {
        server
            .tape()
            .exchanges
            .iter()
            .any(|e| server.tape().request(e).method == m && e.reply.get("result").is_some())
    };
    let sessions = answered(method::INITIALIZE)
        || (server.tape().session_rejection.is_some() && !answered(method::SERVER_DISCOVER));
    let st = Arc::new(HttpState {
        server,
        sessions,
        live: Mutex::new(HashSet::new()),
        pending: Mutex::new(HashMap::new()),
        next_request: AtomicU64::new(0),
        next_event: Mutex::new(0),
        guard: LoopbackGuard::new(bound, allowed_origins),
    });
    tokio::pin!(shutdown);
    loop {
        // Out of descriptors: waited out, the open connections served on (listen::accept).
        let sock = tokio::select! {
            r = listen::accept(&listener) => r.map_err(|e| ReplayError::new(ReplayErrorKind::Io(e)))?,
            _ = &mut shutdown => return Ok(()),
        };
        let _ = sock.set_nodelay(true);
        let st = st.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(st.clone(), req));
            // A client that stalls before its headers are in is disconnected
            // (listen::HEADER_READ_TIMEOUT).
            let _ = listen::http1()
                .serve_connection(TokioIo::new(sock), svc)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of a refused request, as text.
    async fn refused_body(r: Response<HttpBody>) -> (StatusCode, String) {
        let status = r.status();
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    /// A body of exactly the limit is taken whole; one byte more is answered
    /// 413 with a JSON-RPC -32700 error naming the limit (as stdio answers a
    /// line over its limit).
    #[tokio::test]
    async fn http_body_over_the_limit_gets_a_json_rpc_parse_error_with_the_413() {
        let limit = 16;
        let at = collect_body(Full::new(Bytes::from(vec![b' '; limit])), limit)
            .await
            .unwrap();
        assert_eq!(at.len(), limit);
        let past = collect_body(Full::new(Bytes::from(vec![b' '; limit + 1])), limit)
            .await
            .unwrap_err();
        assert_eq!(
            past.headers().get("content-type").unwrap(),
            "application/json"
        );
        let (status, body) = refused_body(past).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            body,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"mcptape serve: parse error: request body is longer than the limit of 16 bytes"}}"#
        );
    }

    /// The serving limit is the stdio line limit (64 MiB), named in the text.
    #[test]
    fn http_body_limit_is_the_stdio_line_limit() {
        assert_eq!(MAX_BODY_BYTES, 64 * 1024 * 1024);
    }
}
