//! `serve --listen`: the recorded server over MCP Streamable HTTP (one POST per
//! JSON-RPC message, answered with `application/json`).
//!
//! Both protocol eras: when the tape's handshake is `initialize` (2025-06-18,
//! 2025-11-25) the `initialize` answer carries an `Mcp-Session-Id` header that
//! every later request must repeat (400 without it, 404 for an unknown one,
//! `DELETE` ends the session — 2025-11-25 "Transports" §Session Management);
//! for a 2026-07-28 tape (`server/discover`) there are no sessions. `GET`
//! (server-initiated stream) is answered 405. Faults: a stall never answers
//! (the client's timeout or disconnect ends it), drop-connection closes the
//! TCP connection without a response.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

use mcptape_wire::protocol::{Era, method};

use crate::error::{ReplayError, ReplayErrorKind};
use crate::lines::MAX_LINE_BYTES;
use crate::schedule::sleep_until_precise;
use crate::serve::{Answer, Server, parse_incoming};

/// Session header of the 2025-03-26 … 2025-11-25 Streamable HTTP transport
/// (`Mcp-Session-Id`, [`mcptape_wire::protocol::header::SESSION_ID`]).
pub use mcptape_wire::protocol::header::SESSION_ID as SESSION_HEADER;

/// Largest request body accepted, bytes (same as a stdio line).
pub const MAX_BODY_BYTES: usize = MAX_LINE_BYTES;

struct HttpState {
    server: Arc<Server>,
    sessions: bool,
    live: Mutex<HashSet<String>>,
    pending: Mutex<HashMap<String, oneshot::Sender<()>>>,
    next_session: Mutex<u64>,
    next_event: Mutex<u64>,
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

fn resp(status: StatusCode, body: Option<&Value>, session: Option<&str>) -> Response<Full<Bytes>> {
    let mut b = Response::builder().status(status);
    if body.is_some() {
        b = b.header("content-type", "application/json");
    }
    if let Some(s) = session {
        b = b.header(SESSION_HEADER, s);
    }
    let bytes = body
        .map(|v| Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
        .unwrap_or_default();
    b.body(Full::new(bytes))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// A `200 application/json` response with `body` as is.
fn json_resp(body: String, session: Option<&str>) -> Response<Full<Bytes>> {
    let mut b = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json");
    if let Some(s) = session {
        b = b.header(SESSION_HEADER, s);
    }
    b.body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// One SSE event carrying `msg` (`text/event-stream`, WHATWG HTML §9.2),
/// as the recorded server answered this request.
fn sse_resp(msg: &str, session: Option<&str>, st: &HttpState) -> Response<Full<Bytes>> {
    let n = {
        let mut g = st.next_event.lock().unwrap_or_else(|p| p.into_inner());
        *g += 1;
        *g
    };
    let body = format!("id: mcptape-{n}\nevent: message\ndata: {msg}\n\n");
    let mut b = Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache");
    if let Some(s) = session {
        b = b.header(SESSION_HEADER, s);
    }
    b.body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// The answer to a request with a missing, unknown or ended session: the
/// recorded server's own rejection if the tape has one, else 400 (missing)
/// / 404 (unknown), per 2025-11-25 "Transports" §Session Management.
fn session_rejected(st: &HttpState, missing: bool) -> Response<Full<Bytes>> {
    match &st.server.tape().session_rejection {
        Some(r) => resp(
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
            Some(&r.body),
            None,
        ),
        None if missing => resp(StatusCode::BAD_REQUEST, None, None),
        None => resp(StatusCode::NOT_FOUND, None, None),
    }
}

async fn handle(
    st: Arc<HttpState>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, DropConnection> {
    let received = Instant::now();
    let session = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
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
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(resp(StatusCode::PAYLOAD_TOO_LARGE, None, None)),
    };
    // The strict parser (mcptape_wire::jsonrpc): an invalid message is
    // answered 400 with its JSON-RPC 2.0 §5 error body, never matched.
    let msg = match parse_incoming(&body) {
        Ok(m) => m,
        Err(err) => {
            st.server.record_invalid();
            return Ok(resp(StatusCode::BAD_REQUEST, Some(&err), None));
        }
    };
    let method = msg.method().unwrap_or("");
    let is_init = method == method::INITIALIZE;
    let mut new_session = None;
    if st.sessions {
        if is_init {
            let mut n = st.next_session.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            let id = format!("mcptape-{:016x}", *n ^ 0x9e37_79b9_7f4a_7c15);
            st.live
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id.clone());
            new_session = Some(id);
        } else if method != method::SERVER_DISCOVER {
            // `server/discover` is stateless (2026-07-28): answered as
            // recorded, with or without a session.
            match &session {
                None => return Ok(session_rejected(&st, true)),
                Some(s)
                    if !st
                        .live
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .contains(s) =>
                {
                    return Ok(session_rejected(&st, false));
                }
                Some(_) => {}
            }
        }
    }
    match st.server.decide(&msg) {
        Answer::Reply {
            id,
            body,
            delay_us,
            sse,
            status,
        } => {
            let key = id.to_string();
            let (tx, rx) = oneshot::channel();
            st.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.clone(), tx);
            let cancelled = tokio::select! {
                _ = sleep_until_precise(received + Duration::from_micros(delay_us), st.server.timer()) => false,
                _ = rx => true,
            };
            st.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&key);
            if cancelled {
                st.server.record_cancel();
                return Err(DropConnection); // the request's stream is closed unanswered
            }
            st.server
                .record_delay(delay_us, received.elapsed().as_micros() as u64);
            if let Some(code) = status.and_then(|c| StatusCode::from_u16(c).ok()) {
                // A recorded rejection (e.g. 400 to `server/discover`): no
                // session is opened by it.
                let mut r = json_resp(body, None);
                *r.status_mut() = code;
                return Ok(r);
            }
            if sse {
                return Ok(sse_resp(&body, new_session.as_deref(), &st));
            }
            Ok(json_resp(body, new_session.as_deref()))
        }
        Answer::Cancel(key) => {
            if let Some(tx) = st
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&key)
            {
                let _ = tx.send(());
            }
            Ok(resp(StatusCode::ACCEPTED, None, None))
        }
        Answer::Nothing => Ok(resp(StatusCode::ACCEPTED, None, None)),
        Answer::Stall => std::future::pending().await,
        Answer::Drop => Err(DropConnection),
    }
}

/// Serves Streamable HTTP on `listener` until `shutdown` completes.
///
/// # Errors
/// [`ReplayErrorKind::Io`] when accepting fails.
pub async fn serve_http(
    server: Arc<Server>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ReplayError> {
    // Sessions when the recorded server opened one: an `initialize` answered
    // with a result (also after a rejected `server/discover`, the fallback).
    let sessions = server
        .tape()
        .exchanges
        .iter()
        .any(|e| e.request.method == method::INITIALIZE && e.reply.get("result").is_some());
    let st = Arc::new(HttpState {
        server,
        sessions,
        live: Mutex::new(HashSet::new()),
        pending: Mutex::new(HashMap::new()),
        next_session: Mutex::new(0),
        next_event: Mutex::new(0),
    });
    tokio::pin!(shutdown);
    loop {
        let (sock, _) = tokio::select! {
            r = listener.accept() => r.map_err(|e| ReplayError::new(ReplayErrorKind::Io(e)))?,
            _ = &mut shutdown => return Ok(()),
        };
        let _ = sock.set_nodelay(true);
        let st = st.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| handle(st.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(sock), svc)
                .await;
        });
    }
}

/// Connects a newline-delimited JSON-RPC stream to a Streamable HTTP endpoint
/// (client side, via [`mcptape_transport::http::HttpClient`]). Returns the
/// stream end to hand to [`crate::bench::Client::over`]: every line written
/// to it is POSTed (`initialize`/`server/discover` inline, so the session id
/// is known before anything else goes out; everything else concurrently) and
/// every JSON-RPC message of every reply comes back as a line.
///
/// Cancellation: a `notifications/cancelled` aborts the in-flight POST of its
/// `requestId` (the request's stream is closed, the 2026-07-28 way) and, in
/// the session era, is also POSTed.
///
/// # Errors
/// [`ReplayErrorKind::Http`] for a URL the client rejects.
pub fn bridge(
    url: &str,
    protocol_version: Option<&str>,
) -> Result<tokio::io::DuplexStream, ReplayError> {
    bridge_reporting(url, protocol_version).map(|(s, _)| s)
}

/// A transport error for people: the transport renders hyper's connect
/// error with `Debug` (`…Os { code: 111, kind: ConnectionRefused, message:
/// "Connection refused" }))`); this keeps the text before it and the OS
/// message: `HTTP exchange 0: request failed: Connection refused (os error 111)`.
pub fn human_transport_error(text: &str) -> String {
    let Some(at) = text.find("message: \"") else {
        return text.to_owned();
    };
    let rest = &text[at + "message: \"".len()..];
    let msg = rest.split('"').next().unwrap_or(rest);
    let code = text
        .find("code: ")
        .map(|c| &text[c + "code: ".len()..])
        .and_then(|c| c.split(|ch: char| !ch.is_ascii_digit()).next())
        .filter(|c| !c.is_empty());
    let head = text
        .find("request failed: ")
        .map_or(text, |i| &text[..i + "request failed: ".len()]);
    match code {
        Some(c) => format!("{head}{msg} (os error {c})"),
        None => format!("{head}{msg}"),
    }
}

/// The first transport error of a [`bridge_reporting`] bridge (e.g.
/// `HTTP: client error (Connect): Connection refused`), once there is one.
pub type BridgeError = Arc<Mutex<Option<String>>>;

/// [`bridge`], and the bridge's first transport error: on a transport error
/// (connection refused, reset...) the bridge records it and closes the
/// stream at once, so the client sees the target close instead of waiting
/// out its timeouts. HTTP error statuses are not transport errors: their
/// JSON-RPC bodies are passed back as usual.
///
/// # Errors
/// [`ReplayErrorKind::Http`] for a URL the client rejects.
pub fn bridge_reporting(
    url: &str,
    protocol_version: Option<&str>,
) -> Result<(tokio::io::DuplexStream, BridgeError), ReplayError> {
    use mcptape_transport::http::HttpClient;
    use tokio::io::AsyncWriteExt;
    let mut http =
        HttpClient::new(url).map_err(|e| ReplayError::new(ReplayErrorKind::Http(e.to_string())))?;
    if let Some(v) = protocol_version
        && Era::of(v) == Era::Stateless
    {
        http.set_protocol_version(v);
    }
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let failed: BridgeError = Arc::default();
    let failed2 = failed.clone();
    tokio::spawn(async move {
        let failed = failed2;
        let fail = |failed: &BridgeError, e: &dyn std::fmt::Display| {
            let mut g = failed.lock().unwrap_or_else(|p| p.into_inner());
            if g.is_none() {
                *g = Some(format!("HTTP: {}", human_transport_error(&e.to_string())));
            }
        };
        let (r, mut w) = tokio::io::split(ours);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            while let Some(b) = rx.recv().await {
                if w.write_all(&b).await.is_err() {
                    break;
                }
            }
        });
        let inflight: Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>> = Arc::default();
        let mut r = crate::lines::FramedReader::new(r, MAX_LINE_BYTES);
        while let Ok(Some(frame)) = r.next().await {
            let mcptape_transport::stdio::Frame::Message(buf) = frame else {
                continue;
            };
            let line = String::from_utf8_lossy(&buf).into_owned();
            // Our own client wrote this line; read it with the wire parser.
            let msg = mcptape_wire::jsonrpc::parse_message(&buf).ok();
            let method = msg
                .as_ref()
                .and_then(|m| m.method())
                .unwrap_or("")
                .to_owned();
            let id = msg.as_ref().and_then(|m| m.id()).map(ToString::to_string);
            if method == method::NOTIFICATIONS_CANCELLED {
                let rid = match &msg {
                    Some(mcptape_wire::jsonrpc::Message::Notification(n)) => n
                        .params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(|r| mcptape_wire::jsonrpc::RequestId::from_value(r).ok()),
                    _ => None,
                };
                if let Some(rid) = rid
                    && let Some(h) = inflight
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .remove(&rid.to_string())
                {
                    h.abort();
                }
                if http.era() == Era::Stateless {
                    continue;
                }
            }
            let send_back =
                |tx: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
                 reply: &mcptape_transport::http::HttpReply| {
                    for m in reply.messages() {
                        let mut b = m.as_bytes().to_vec();
                        b.push(b'\n');
                        let _ = tx.send(b);
                    }
                };
            if failed.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                break; // a concurrent POST hit a transport error: the target is gone
            }
            if method::HANDSHAKES.contains(&method.as_str()) {
                match http.post(&line).await {
                    Ok(reply) => send_back(&tx, &reply),
                    Err(e) => {
                        fail(&failed, &e);
                        break;
                    }
                }
                continue;
            }
            let mut c = http.clone();
            let tx2 = tx.clone();
            let inf = inflight.clone();
            let key = id.clone();
            let failed3 = failed.clone();
            let h = tokio::spawn(async move {
                match c.post(&line).await {
                    Ok(reply) => send_back(&tx2, &reply),
                    Err(e) => fail(&failed3, &e),
                }
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
        // Closing: abort the POSTs still in flight so the stream ends now.
        for (_, h) in inflight.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            h.abort();
        }
        drop(tx);
        let _ = writer.await;
    });
    Ok((theirs, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fresh-user report saw hyper's `Debug` text in `verify`/`bench` errors.
    #[test]
    fn connection_refused_is_human_text() {
        let raw = r#"HTTP exchange 0: request failed: hyper_util::client::legacy::Error(Connect, ConnectError("tcp connect error", 127.0.0.1:1, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" }))"#;
        assert_eq!(
            human_transport_error(raw),
            "HTTP exchange 0: request failed: Connection refused (os error 111)"
        );
        assert_eq!(human_transport_error("plain text"), "plain text");
    }
}
