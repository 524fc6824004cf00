//! The Streamable HTTP recording proxy:
//! `mcptape record -o FILE --listen 127.0.0.1:PORT --upstream URL`.
//!
//! A reverse proxy (MCP spec 2025-11-25 and 2026-07-28, "Transports"
//! §Streamable HTTP): every request the client sends to the listen address is
//! forwarded to the upstream authority with the same method, path, query,
//! headers (hop-by-hop headers dropped; `Host` kept as the client sent it, so
//! a server's DNS-rebinding checks see what they would see directly) and body;
//! the response comes back the same way. Bodies pass through unchanged and
//! event streams are forwarded frame by frame as they arrive (a GET stream
//! may stay open for the whole session).
//!
//! What is recorded, per HTTP exchange `n` (numbered from 0 in arrival order):
//! * the request body as a `c2s` message record with [`HttpMeta`] `exchange`,
//!   `method` and the request headers (redacted unless `--no-redact`);
//! * a JSON response body as one `s2c` message record with `status` and the
//!   response headers; an event-stream response as one `s2c` message record
//!   **per SSE event**, each with its `sseEventId` (status and headers on the
//!   first one);
//! * a request or response without a body (a GET opening a stream, a DELETE,
//!   a `202 Accepted`) as an `http` record ([`Event::Http`]) with
//!   [`HttpNote::NoBody`], the method, status and headers, and the request
//!   path (query redacted) in `detail`;
//! * an SSE event with empty data (a priming event) as [`HttpNote::EmptyEvent`]
//!   with its `sseEventId`;
//! * a body or event that is not exactly one JSON value (a heartbeat, JSON
//!   with whitespace around it) as `noise`, bytes unaltered;
//! * the end of every event stream as an `http` record saying why:
//!   [`HttpNote::ServerClosedStream`], [`HttpNote::ClientClosedStream`] (how a
//!   client cancels over Streamable HTTP), [`HttpNote::StreamBroken`] or
//!   [`HttpNote::StreamOpenAtShutdown`]; failures as
//!   [`HttpNote::RequestFailed`], [`HttpNote::UpstreamFailed`],
//!   [`HttpNote::ResponseFailed`], [`HttpNote::SseUnparsable`].
//!
//! Buffering is bounded: request bodies and JSON response bodies up to
//! [`MAX_HTTP_BODY_BYTES`] (a larger request gets `413`), event streams one
//! frame at a time (events parsed up to `mcptape_transport::sse::MAX_EVENT_BYTES`) with a channel of [`STREAM_CHANNEL_FRAMES`] frames.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcptape_transcript::redact::{BodyRedaction, withheld_body_line};
use mcptape_transcript::{Direction, Event, HttpMeta, HttpNote, Redactor};
use tokio::net::TcpListener;

use crate::error::{RecordError, RecordErrorKind};
use crate::sink::TranscriptSink;
use mcptape_transport::http::BodyKind;
use mcptape_transport::sse::{MAX_EVENT_BYTES, SseParser};

/// Largest request body, and largest non-stream response body, the proxy
/// buffers, in bytes (64 MiB). A larger request is answered `413`.
pub const MAX_HTTP_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Time open event streams get to record their end when the proxy stops, in ms.
pub const SHUTDOWN_GRACE_MS: u64 = 2000;

/// Frames of an event stream held between upstream and client (back-pressure beyond).
pub const STREAM_CHANNEL_FRAMES: usize = 16;

/// Where the proxy forwards to: `http://HOST:PORT` (TLS is not supported).
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `host:port` (or `host`) of the upstream server.
    pub authority: String,
    /// The URL as given (for the transcript header, redacted there; print
    /// it through [`Redactor::url`]).
    pub url: String,
}

impl Upstream {
    /// Parses an `http://host[:port][/path]` URL; the path is not used (requests
    /// keep their own path, so point the client at `http://LISTEN/<same path>`).
    ///
    /// Errors: [`RecordErrorKind::Url`] for another scheme, an empty host, or
    /// userinfo; the error's URL has its credentials redacted ([`Redactor::url`]).
    pub fn parse(url: &str) -> Result<Self, RecordError> {
        let bad = |reason| {
            RecordError::new(RecordErrorKind::Url {
                url: Redactor::new().url(url).into_owned(),
                reason,
            })
        };
        let uri: Uri = url.parse().map_err(|_| bad("not a URI"))?;
        if uri.scheme_str() != Some("http") {
            return Err(bad("only http:// upstreams are supported"));
        }
        let authority = uri.authority().ok_or_else(|| bad("no host"))?;
        if authority.as_str().contains('@') {
            return Err(bad("userinfo in the upstream URL is not supported"));
        }
        Ok(Upstream {
            authority: authority.as_str().to_owned(),
            url: url.to_owned(),
        })
    }
}

type ProxyBody = BoxBody<Bytes, Infallible>;

struct Shared {
    sink: Arc<TranscriptSink>,
    upstream: Upstream,
    client: Client<HttpConnector, Full<Bytes>>,
    redactor: Redactor,
    exchanges: AtomicU64,
    /// Largest buffered body, in bytes.
    body_limit: usize,
    /// Turns `true` when the proxy stops; open event streams then end.
    shutdown: tokio::sync::watch::Receiver<bool>,
    /// Tasks forwarding event streams.
    streams: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// DNS-rebinding guard: foreign `Origin`/`Host` get 403 (not recorded, not forwarded).
    guard: mcptape_transport::origin::LoopbackGuard,
}

/// A bound, not yet running, HTTP recording proxy.
pub struct HttpProxy {
    listener: TcpListener,
    shared: Arc<Shared>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for HttpProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProxy")
            .field("local_addr", &self.listener.local_addr().ok())
            .finish_non_exhaustive()
    }
}

/// Accepts `listen` only if it is a loopback address (127.0.0.0/8 or ::1).
///
/// Errors: [`RecordErrorKind::NotLoopback`] otherwise.
pub fn check_loopback(listen: SocketAddr) -> Result<(), RecordError> {
    if listen.ip().is_loopback() {
        Ok(())
    } else {
        Err(RecordError::new(RecordErrorKind::NotLoopback {
            addr: listen,
        }))
    }
}

impl HttpProxy {
    /// Binds `listen` (port 0 picks a free port; see [`HttpProxy::local_addr`]).
    ///
    /// Errors: [`RecordErrorKind::NotLoopback`] if `listen` is not a loopback
    /// address ([`check_loopback`]), [`RecordErrorKind::Io`] if it cannot be bound.
    pub async fn bind(
        listen: SocketAddr,
        upstream: Upstream,
        sink: Arc<TranscriptSink>,
        redactor: Redactor,
    ) -> Result<Self, RecordError> {
        Self::bind_with_body_limit(listen, upstream, sink, redactor, MAX_HTTP_BODY_BYTES).await
    }

    /// [`HttpProxy::bind`] with a body limit other than [`MAX_HTTP_BODY_BYTES`]
    /// (bytes; requests over it get `413`, JSON responses over it `502`).
    ///
    /// Errors: as [`HttpProxy::bind`].
    pub async fn bind_with_body_limit(
        listen: SocketAddr,
        upstream: Upstream,
        sink: Arc<TranscriptSink>,
        redactor: Redactor,
        body_limit: usize,
    ) -> Result<Self, RecordError> {
        check_loopback(listen)?;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| RecordError::io("listen socket", e))?;
        let bound = listener
            .local_addr()
            .map_err(|e| RecordError::io("listen socket", e))?;
        let client = Client::builder(TokioExecutor::new()).build_http();
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            sink,
            upstream,
            client,
            redactor,
            exchanges: AtomicU64::new(0),
            body_limit,
            shutdown,
            streams: std::sync::Mutex::new(Vec::new()),
            guard: mcptape_transport::origin::LoopbackGuard::new(bound, &[]),
        });
        Ok(HttpProxy {
            listener,
            shared,
            stop,
        })
    }

    /// The bound address.
    ///
    /// Errors: [`RecordErrorKind::Io`] from the socket.
    pub fn local_addr(&self) -> Result<SocketAddr, RecordError> {
        self.listener
            .local_addr()
            .map_err(|e| RecordError::io("listen socket", e))
    }

    /// Also accepts these `Origin`s (`record --allow-origin`); loopback
    /// origins are always accepted ([`mcptape_transport::origin`]).
    pub fn allow_origins(&mut self, origins: &[String]) {
        if let (Some(shared), Ok(addr)) =
            (Arc::get_mut(&mut self.shared), self.listener.local_addr())
        {
            shared.guard = mcptape_transport::origin::LoopbackGuard::new(addr, origins);
        }
    }

    /// Number of HTTP exchanges proxied so far.
    pub fn exchanges(&self) -> u64 {
        self.shared.exchanges.load(Ordering::Relaxed)
    }

    /// Serves until `shutdown` resolves; open connections are then dropped.
    ///
    /// Errors: [`RecordErrorKind::Io`] if accepting fails.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<u64, RecordError> {
        tokio::pin!(shutdown);
        let mut conns = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                // Out of descriptors: waited out, the open connections served on.
                accepted = mcptape_transport::listen::accept(&self.listener) => {
                    let stream = accepted.map_err(|e| RecordError::io("listen socket", e))?;
                    let _ = stream.set_nodelay(true);
                    let shared = self.shared.clone();
                    conns.spawn(async move {
                        let svc = hyper::service::service_fn(move |req| {
                            let shared = shared.clone();
                            async move { Ok::<_, Infallible>(handle(shared, req).await) }
                        });
                        // A client that stalls before its headers are in is disconnected.
                        let _ = mcptape_transport::listen::http1()
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    });
                }
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
            }
        }
        // End open event streams (each records why it ended), then drop the connections.
        let _ = self.stop.send(true);
        let streams = std::mem::take(
            &mut *self
                .shared
                .streams
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        let _ = tokio::time::timeout(
            std::time::Duration::from_millis(SHUTDOWN_GRACE_MS),
            futures::future::join_all(streams),
        )
        .await;
        conns.abort_all();
        // Wait for the aborted connections to be dropped: an exchange still waiting for
        // its answer records how it ended (`Unanswered`) before the transcript is finished.
        while conns.join_next().await.is_some() {}
        Ok(self.exchanges())
    }
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
    )
}

fn header_pairs(headers: &HeaderMap, redactor: &Redactor) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    redactor.headers(&mut v);
    v
}

fn text_response(status: StatusCode, msg: &str) -> Response<ProxyBody> {
    let mut r = Response::new(Full::new(Bytes::from(msg.to_owned())).boxed());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    r
}

/// Records a body (request, JSON response or SSE event data) as one message
/// record, or as noise when it is not exactly one JSON value (bytes unaltered).
/// When a `--redact-json` pointer matches, the redacted re-serialization is
/// recorded instead and `meta.redactedPointers` names the pointers; when
/// pointers are set but the body does not parse as JSON (a UTF-8 BOM,
/// UTF-16), a `noise` record saying it was withheld takes its place
/// ([`mcptape_transcript::redact::withheld_body_line`]), never the bytes.
fn record_body(
    sink: &TranscriptSink,
    redactor: &Redactor,
    dir: Direction,
    body: &[u8],
    mut meta: HttpMeta,
) {
    match redactor.body_from(dir == Direction::C2s, body) {
        BodyRedaction::Redacted { text, pointers } => {
            meta.redacted_pointers = pointers;
            sink.record_line(dir, text.as_bytes(), Some(meta));
        }
        BodyRedaction::NotJson { reason } => sink.record(Event::Noise {
            dir,
            line: withheld_body_line(meta.exchange, body.len(), &reason),
        }),
        _ => sink.record_line(dir, body, Some(meta)),
    }
}

/// Records a buffered request or response body: a `noBody` note (with `detail`) when it is
/// empty, else [`record_body`]. `false` once the transcript cannot be written
/// ([`TranscriptSink::has_failed`]).
fn record_buffered(
    shared: &Shared,
    dir: Direction,
    body: &[u8],
    meta: HttpMeta,
    detail: Option<String>,
) -> bool {
    if body.is_empty() {
        note(&shared.sink, dir, meta, HttpNote::NoBody, detail);
    } else {
        record_body(&shared.sink, &shared.redactor, dir, body, meta);
    }
    !shared.sink.has_failed()
}

/// Records an [`Event::Http`].
fn note(
    sink: &TranscriptSink,
    dir: Direction,
    http: HttpMeta,
    note: HttpNote,
    detail: Option<String>,
) {
    sink.record(Event::Http {
        dir,
        http,
        note,
        detail,
    });
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<ProxyBody> {
    // DNS rebinding (MCP 2025-11-25 "Transports" §Security Warning): checked
    // before anything is recorded or forwarded.
    let text = |n: header::HeaderName| {
        req.headers()
            .get(n)
            .map(|v| v.to_str().unwrap_or("").to_owned())
    };
    if let Err(e) = shared.guard.check(
        text(header::ORIGIN).as_deref(),
        text(header::HOST).as_deref(),
    ) {
        return text_response(StatusCode::FORBIDDEN, &format!("mcptape record: {e}"));
    }
    let n = shared.exchanges.fetch_add(1, Ordering::Relaxed);
    let mut unanswered = Unanswered {
        sink: shared.sink.clone(),
        meta: Some(HttpMeta {
            exchange: n,
            method: Some(req.method().as_str().to_owned()),
            ..HttpMeta::default()
        }),
    };
    let response = exchange(&shared, n, req).await;
    unanswered.meta = None;
    response
}

/// Records the end of an exchange whose handler was dropped before it returned: the
/// client closed the connection while the upstream had not answered yet (hyper then
/// drops the handler), or the recorder stopped. Without it such an exchange would
/// have a `c2s` record and no `s2c` one; with it, the `s2c` record says how it ended
/// (`clientClosedStream`, with a `detail`), and nothing was passed on.
struct Unanswered {
    sink: Arc<TranscriptSink>,
    /// `None` once the handler returned (it recorded the end itself).
    meta: Option<HttpMeta>,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some(meta) = self.meta.take() {
            note(
                &self.sink,
                Direction::S2c,
                meta,
                HttpNote::ClientClosedStream,
                Some(
                    "the connection closed (or the recorder stopped) before the answer; nothing was passed on"
                        .to_owned(),
                ),
            );
        }
    }
}

/// One exchange, numbered `n`, after the DNS-rebinding check: the request recorded and
/// forwarded, the answer recorded and passed on (see [`HttpProxy`]).
async fn exchange(shared: &Arc<Shared>, n: u64, req: Request<Incoming>) -> Response<ProxyBody> {
    let (parts, body) = req.into_parts();
    let method = parts.method.clone();
    let path_q = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "/".to_owned());
    // The path as recorded: token-like query parameters redacted (unless --no-redact).
    let full = format!("http://{}{}", shared.upstream.authority, path_q);
    let shown = shared
        .redactor
        .url(&full)
        .trim_start_matches("http://")
        .trim_start_matches(shared.upstream.authority.as_str())
        .to_owned();
    let req_meta = HttpMeta {
        exchange: n,
        method: Some(method.as_str().to_owned()),
        status: None,
        headers: header_pairs(&parts.headers, &shared.redactor),
        sse_event_id: None,
        redacted_pointers: Vec::new(),
    };
    let body = tokio::time::timeout(
        mcptape_transport::listen::BODY_READ_TIMEOUT,
        Limited::new(body, shared.body_limit).collect(),
    );
    let body = match body.await {
        Ok(Ok(b)) => b.to_bytes(),
        // Stalled mid-body: 408, recorded as a failed request, not forwarded.
        Err(_) => {
            note(
                &shared.sink,
                Direction::C2s,
                req_meta,
                HttpNote::RequestFailed,
                Some(format!(
                    "{shown}: the client sent no more of the body for {} s",
                    mcptape_transport::listen::BODY_READ_TIMEOUT.as_secs()
                )),
            );
            return text_response(
                StatusCode::REQUEST_TIMEOUT,
                "mcptape: the request body did not arrive in time",
            );
        }
        Ok(Err(e)) => {
            let too_big = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            note(
                &shared.sink,
                Direction::C2s,
                req_meta,
                HttpNote::RequestFailed,
                Some(format!("{shown}: {e}")),
            );
            return if too_big {
                text_response(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "mcptape: request body exceeds the proxy's limit of {MAX_HTTP_BODY_BYTES} bytes (MAX_HTTP_BODY_BYTES)"
                    ),
                )
            } else {
                text_response(
                    StatusCode::BAD_REQUEST,
                    "mcptape: could not read the request body",
                )
            };
        }
    };
    if !record_buffered(shared, Direction::C2s, &body, req_meta, Some(shown)) {
        return transcript_failed();
    }

    // Forward.
    let uri: Uri = match format!("http://{}{}", shared.upstream.authority, path_q).parse() {
        Ok(u) => u,
        Err(_) => return text_response(StatusCode::BAD_REQUEST, "mcptape: bad request path"),
    };
    let mut up = Request::new(Full::new(body));
    *up.method_mut() = method.clone();
    *up.uri_mut() = uri;
    // `Host` names the upstream (set by the client from the URI), not this
    // proxy: a loopback upstream that checks it against DNS rebinding
    // accepts the forwarded request. The client's own Host is recorded.
    for (k, v) in parts.headers.iter() {
        if !is_hop_by_hop(k) && k != header::HOST {
            up.headers_mut().append(k.clone(), v.clone());
        }
    }
    let resp = match shared.client.request(up).await {
        Ok(r) => r,
        Err(e) => {
            let meta = HttpMeta {
                exchange: n,
                method: Some(method.as_str().to_owned()),
                ..HttpMeta::default()
            };
            note(
                &shared.sink,
                Direction::S2c,
                meta,
                HttpNote::UpstreamFailed,
                Some(e.to_string()),
            );
            return text_response(StatusCode::BAD_GATEWAY, "mcptape: upstream unreachable");
        }
    };
    let (rparts, rbody) = resp.into_parts();
    let status = rparts.status.as_u16();
    let resp_meta = HttpMeta {
        exchange: n,
        method: Some(method.as_str().to_owned()),
        status: Some(status),
        headers: header_pairs(&rparts.headers, &shared.redactor),
        sse_event_id: None,
        redacted_pointers: Vec::new(),
    };
    let content_type = rparts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let is_stream = BodyKind::of(status, content_type) == BodyKind::Sse;
    let mut out = Response::new(Full::new(Bytes::new()).boxed());
    *out.status_mut() = rparts.status;
    for (k, v) in rparts.headers.iter() {
        if !is_hop_by_hop(k) {
            out.headers_mut().append(k.clone(), v.clone());
        }
    }

    if is_stream {
        let (tx, rx) =
            tokio::sync::mpsc::channel::<Result<Frame<Bytes>, Infallible>>(STREAM_CHANNEL_FRAMES);
        let sink = shared.sink.clone();
        let redactor = shared.redactor.clone();
        let mut shutdown = shared.shutdown.clone();
        let task = tokio::spawn(async move {
            let mut rbody = rbody;
            let mut parser = SseParser::new(MAX_EVENT_BYTES);
            let mut parsing = true;
            let mut items = Vec::new();
            let mut first = Some(resp_meta);
            let bare = HttpMeta {
                exchange: n,
                method: Some(method.as_str().to_owned()),
                ..HttpMeta::default()
            };
            let ended = loop {
                let frame = tokio::select! {
                    f = rbody.frame() => f,
                    _ = tx.closed() => break HttpNote::ClientClosedStream,
                    _ = shutdown.wait_for(|stop| *stop) => break HttpNote::StreamOpenAtShutdown,
                };
                let Some(frame) = frame else {
                    break HttpNote::ServerClosedStream;
                };
                let Ok(frame) = frame else {
                    break HttpNote::StreamBroken;
                };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if parsing && let Err(e) = parser.push(&data, &mut items) {
                    // Keep forwarding; stop recording this stream's events.
                    parsing = false;
                    note(
                        &sink,
                        Direction::S2c,
                        bare.clone(),
                        HttpNote::SseUnparsable,
                        Some(e.to_string()),
                    );
                }
                for ev in items.drain(..) {
                    let mut meta = first.take().unwrap_or_else(|| bare.clone());
                    meta.sse_event_id = ev.id;
                    if ev.data.is_empty() {
                        // A priming event (an id for resumption, no message).
                        note(&sink, Direction::S2c, meta, HttpNote::EmptyEvent, None);
                    } else {
                        record_body(&sink, &redactor, Direction::S2c, ev.data.as_bytes(), meta);
                    }
                }
                if sink.has_failed() {
                    // These events may not be in the transcript: not passed on, the
                    // stream ends (the note below is not recorded either).
                    break HttpNote::StreamBroken;
                }
                if tx.send(Ok(Frame::data(data))).await.is_err() {
                    break HttpNote::ClientClosedStream;
                }
            };
            parser.finish();
            // Dropping `rbody` closes the upstream stream. The status and
            // headers go on this record if no event carried them.
            note(&sink, Direction::S2c, first.unwrap_or(bare), ended, None);
        });
        {
            let mut streams = shared.streams.lock().unwrap_or_else(|p| p.into_inner());
            streams.retain(|t| !t.is_finished());
            streams.push(task);
        }
        let body =
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) });
        *out.body_mut() = BodyExt::boxed(StreamBody::new(body));
        return out;
    }

    let rbytes = match Limited::new(rbody, shared.body_limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            note(
                &shared.sink,
                Direction::S2c,
                resp_meta,
                HttpNote::ResponseFailed,
                Some(e.to_string()),
            );
            return text_response(
                StatusCode::BAD_GATEWAY,
                "mcptape: upstream response body failed or too large",
            );
        }
    };
    if !record_buffered(shared, Direction::S2c, &rbytes, resp_meta, None) {
        return transcript_failed();
    }
    *out.body_mut() = Full::new(rbytes).boxed();
    out
}

/// The answer to a request once the transcript cannot be written (disk full,
/// file size limit, EIO; [`TranscriptSink::has_failed`]): 503, and nothing
/// that would be unrecorded is forwarded either way — a request is not sent
/// upstream, a response body is not passed on, an SSE stream ends. `record`
/// exits with the write error when it stops.
fn transcript_failed() -> Response<ProxyBody> {
    text_response(
        StatusCode::SERVICE_UNAVAILABLE,
        "mcptape: the transcript cannot be written; nothing is forwarded unrecorded",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcptape_transcript::{ServerSpec, Transport};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Sends one raw HTTP/1.1 request (`head`: request line and headers
    /// other than `Host`, which is the proxy's own loopback address so the
    /// DNS-rebinding guard lets it through); returns the status code.
    async fn send(addr: SocketAddr, head: &str, body: &[u8]) -> u16 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "{head}\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        s.write_all(body).await.unwrap();
        let mut resp = Vec::new();
        let _ = s.read_to_end(&mut resp).await;
        let text = String::from_utf8_lossy(&resp);
        text.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0)
    }

    /// A proxy in front of a closed port (nothing upstream: forwarded requests get 502).
    async fn proxy(limit: usize, redactor: Redactor) -> (SocketAddr, tempfile::TempDir, Running) {
        let dir = tempfile::tempdir().unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let upstream = Upstream::parse(&format!("http://{closed}/mcp")).unwrap();
        let sink = Arc::new(
            TranscriptSink::create(
                &dir.path().join("t.jsonl"),
                Transport::Http,
                ServerSpec::default(),
            )
            .unwrap(),
        );
        let p = HttpProxy::bind_with_body_limit(
            "127.0.0.1:0".parse().unwrap(),
            upstream,
            sink,
            redactor,
            limit,
        )
        .await
        .unwrap();
        let addr = p.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(p.run(async move {
            let _ = rx.await;
        }));
        (addr, dir, Running { tx, task })
    }

    /// A proxy started by [`proxy`]: its shutdown signal and its task.
    struct Running {
        tx: tokio::sync::oneshot::Sender<()>,
        task: tokio::task::JoinHandle<Result<u64, RecordError>>,
    }

    impl Running {
        /// Asks the proxy to stop and waits until its run ended (every record written).
        async fn stop(self) {
            let _ = self.tx.send(());
            self.task.await.unwrap().unwrap();
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn request_body_at_limit_is_forwarded_one_past_is_413() {
        let (addr, _dir, _stop) = proxy(64, Redactor::new()).await;
        let at = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"xxxx"}}"#;
        assert_eq!(at.len(), 64);
        assert_eq!(
            send(addr, "POST /mcp HTTP/1.1", at).await,
            502,
            "forwarded; nothing upstream"
        );
        let mut past = at.to_vec();
        past.insert(60, b'x');
        assert_eq!(send(addr, "POST /mcp HTTP/1.1", &past).await, 413);
    }

    /// Nothing recorded is ever altered: a request body with whitespace around
    /// its JSON value is recorded as noise with its exact bytes (not trimmed
    /// into a message); a body-less GET and the failed upstream are typed
    /// `http` records.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn body_with_whitespace_around_json_is_noise_with_exact_bytes() {
        let (addr, dir, stop) = proxy(MAX_HTTP_BODY_BYTES, Redactor::new()).await;
        let body = b" {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n";
        assert_eq!(send(addr, "POST /mcp HTTP/1.1", body).await, 502);
        assert_eq!(send(addr, "GET /mcp HTTP/1.1", b"").await, 502);
        stop.stop().await;
        let bytes = std::fs::read(dir.path().join("t.jsonl")).unwrap();
        let t = mcptape_transcript::read(&bytes).unwrap();
        let events: Vec<&Event> = t.records.iter().map(|r| &r.event).collect();
        assert_eq!(events.len(), 4, "{events:?}");
        assert_eq!(
            events[0],
            &Event::Noise {
                dir: Direction::C2s,
                line: std::str::from_utf8(body).unwrap().to_owned()
            }
        );
        let notes: Vec<(Direction, u64, Option<&str>, HttpNote)> = events[1..]
            .iter()
            .map(|e| match e {
                Event::Http {
                    dir, http, note, ..
                } => (*dir, http.exchange, http.method.as_deref(), *note),
                other => panic!("not an http record: {other:?}"),
            })
            .collect();
        assert_eq!(
            notes,
            vec![
                (Direction::S2c, 0, Some("POST"), HttpNote::UpstreamFailed),
                (Direction::C2s, 1, Some("GET"), HttpNote::NoBody),
                (Direction::S2c, 1, Some("GET"), HttpNote::UpstreamFailed),
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn credentials_are_redacted_by_default_and_kept_with_no_redact() {
        for (redactor, secret_kept) in [(Redactor::new(), false), (Redactor::disabled(), true)] {
            let (addr, dir, stop) = proxy(MAX_HTTP_BODY_BYTES, redactor).await;
            let head = "POST /mcp HTTP/1.1\r\nAuthorization: Bearer sekrit\r\nCookie: sid=c00kie";
            send(addr, head, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
            send(addr, "GET /mcp?access_token=tok123 HTTP/1.1", b"").await;
            stop.stop().await;
            let text = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
            assert!(text.contains(r#""method":"ping""#));
            assert_eq!(text.contains("sekrit"), secret_kept, "{text}");
            assert_eq!(text.contains("c00kie"), secret_kept, "{text}");
            assert_eq!(text.contains("tok123"), secret_kept, "{text}");
            assert_eq!(
                text.contains(mcptape_transcript::redact::REDACTED),
                !secret_kept,
                "{text}"
            );
        }
    }
}
