//! `serve --metrics ADDR`: live numbers of a serve session for Prometheus, exposed at
//! `GET /metrics` in the OpenMetrics 1.0 text format (which Prometheus scrapes natively; content
//! type `application/openmetrics-text; version=1.0.0`), built with the official Rust client
//! `prometheus-client`.
//!
//! Metrics (all prefixed `mcptape_serve_`):
//! - `requests_total{method, outcome}` (counter): requests, counted once when their answer is
//!   decided, by JSON-RPC method and [`Outcome`]. `method` is the method as sent when the spec
//!   (2026-07-28 and the 2025 revisions) names it or the recording holds it, else `other`
//!   (at most [`MAX_METHOD_LABELS`] distinct values: a client cannot grow the label set);
//!   a message the strict parser refused counts under `method="(invalid)"`.
//! - `delay_seconds` (histogram): served delay, request read → reply written, s.
//! - `lateness_seconds` (histogram): served − scheduled delay per reply, s (the timer's error).
//! - `synthesized_total{method}` (counter): answers built for requests the recording has no
//!   answer for (ping, housekeeping, not-found reads, the other era's handshake).
//! - `cancelled_total` (counter): pending answers cancelled before they were sent.
//! - `sessions_opened_total` (counter), `sessions_live` (gauge): stdio sessions, and
//!   Streamable HTTP `Mcp-Session-Id` sessions (2025-11-25 "Transports" §Session Management);
//!   stateless 2026-07-28 HTTP opens none.
//! - `in_flight` (gauge): requests read whose reply is not yet written (waiting on the latency
//!   model, or stalled by a fault until the client gives up).
//!
//! The histogram count of `delay_seconds` is the number of replies written, the same figure as
//! `serve --stats`' `achieved.count`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry, Unit};
use tokio::net::TcpListener;

use mcptape_transport::origin::LoopbackGuard;
use mcptape_wire::protocol::method;

use crate::error::{ReplayError, ReplayErrorKind};

/// Most distinct `method` label values ([`ServeMetrics`]): the spec's methods first, then the
/// recording's own, in order, up to this many; any other method counts as `other`.
pub const MAX_METHOD_LABELS: usize = 64;

/// The `method` label of a method that is neither a spec method nor a recorded one (or came
/// past [`MAX_METHOD_LABELS`]).
pub const OTHER_METHOD: &str = "other";

/// The `method` label of a message the strict JSON-RPC parser refused (it has no method).
pub const INVALID_METHOD: &str = "(invalid)";

/// Path of the metrics endpoint.
pub const METRICS_PATH: &str = "/metrics";

/// Content type of the exposition: OpenMetrics 1.0 text (what `prometheus-client` writes).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Buckets of `delay_seconds`: 100 µs × 2ⁿ, n = 0..20 (100 µs … 52 s), then `+Inf`.
pub const DELAY_BUCKETS: (f64, f64, u16) = (0.000_1, 2.0, 20);

/// Buckets of `lateness_seconds`: 10 µs × 2ⁿ, n = 0..20 (10 µs … 5.2 s), then `+Inf`.
pub const LATENESS_BUCKETS: (f64, f64, u16) = (0.000_01, 2.0, 20);

/// The spec's request methods (MCP 2025-06-18 … 2026-07-28) that always get their own label.
const SPEC_METHODS: [&str; 17] = [
    method::INITIALIZE,
    method::SERVER_DISCOVER,
    method::PING,
    method::RESOURCES_READ,
    method::RESOURCES_LIST,
    method::RESOURCES_TEMPLATES_LIST,
    method::RESOURCES_SUBSCRIBE,
    method::RESOURCES_UNSUBSCRIBE,
    method::LOGGING_SET_LEVEL,
    method::TOOLS_CALL,
    method::TOOLS_LIST,
    method::PROMPTS_GET,
    method::PROMPTS_LIST,
    method::COMPLETION_COMPLETE,
    method::SAMPLING_CREATE_MESSAGE,
    method::ROOTS_LIST,
    method::ELICITATION_CREATE,
];

/// How a request was answered: the `outcome` label of `mcptape_serve_requests_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// With a recorded reply (`recorded`).
    Recorded,
    /// With an answer built for it: ping, housekeeping, a not-found read, the other era's
    /// handshake (`synthesized`).
    Synthesized,
    /// With an error because the recording has no answer (`not_recorded`).
    NotRecorded,
    /// With an error because its `resources/read` uri is outside the roots or missing
    /// (`rejected`).
    Rejected,
    /// With an injected error fault (`injected_error`).
    InjectedError,
    /// Never: a stall fault (`stall`).
    Stall,
    /// By closing the connection: a drop-connection fault (`drop`).
    Drop,
    /// By replaying the recorded server's crash (`crash`).
    Crash,
    /// With -32700/-32600: the strict parser refused the message (`invalid`).
    Invalid,
}

impl Outcome {
    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Recorded => "recorded",
            Outcome::Synthesized => "synthesized",
            Outcome::NotRecorded => "not_recorded",
            Outcome::Rejected => "rejected",
            Outcome::InjectedError => "injected_error",
            Outcome::Stall => "stall",
            Outcome::Drop => "drop",
            Outcome::Crash => "crash",
            Outcome::Invalid => "invalid",
        }
    }
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), std::fmt::Error> {
        use std::fmt::Write as _;
        encoder.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: Arc<String>,
    outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct MethodLabel {
    method: Arc<String>,
}

/// The metrics of one serve process (module docs): updated by the [`crate::serve::Server`]
/// it is attached to ([`crate::serve::Server::with_metrics`]) and by the transports, read by
/// [`ServeMetrics::encode`] and [`serve_metrics`].
pub struct ServeMetrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    synthesized: Family<MethodLabel, Counter>,
    delay: Histogram,
    lateness: Histogram,
    cancelled: Counter,
    sessions_opened: Counter,
    sessions_live: Gauge,
    in_flight: Gauge<i64, std::sync::atomic::AtomicI64>,
    /// The `method` label values, shared (a count costs no allocation).
    labelled: HashMap<String, Arc<String>>,
    other: Arc<String>,
    invalid: Arc<String>,
}

/// Registers a handle of `metric` as `name` and gives the metric back (both count into one
/// value).
fn register<M: Metric + Clone>(registry: &mut Registry, name: &str, help: &str, metric: M) -> M {
    registry.register(name, help, metric.clone());
    metric
}

/// A histogram of seconds with exponential `(start, factor, count)` buckets, registered as
/// `name` (`_seconds` appended).
fn register_seconds(
    registry: &mut Registry,
    name: &str,
    help: &str,
    (start, factor, count): (f64, f64, u16),
) -> Histogram {
    let h = Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        start, factor, count,
    ));
    registry.register_with_unit(name, help, Unit::Seconds, h.clone());
    h
}

impl std::fmt::Debug for ServeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeMetrics")
            .field("labelled", &self.labelled.len())
            .finish_non_exhaustive()
    }
}

impl ServeMetrics {
    /// New metrics whose `method` label names the spec's methods and then `recorded_methods`
    /// (the recording's own, e.g. `tools/call`, `x/custom`), at most [`MAX_METHOD_LABELS`] in
    /// all; other methods count as [`OTHER_METHOD`].
    pub fn new<'m>(recorded_methods: impl IntoIterator<Item = &'m str>) -> ServeMetrics {
        let mut labelled: HashMap<String, Arc<String>> = SPEC_METHODS
            .iter()
            .map(|m| ((*m).to_owned(), Arc::new((*m).to_owned())))
            .collect();
        for m in recorded_methods {
            if labelled.len() >= MAX_METHOD_LABELS {
                break;
            }
            labelled
                .entry(m.to_owned())
                .or_insert_with(|| Arc::new(m.to_owned()));
        }
        let mut r = Registry::with_prefix("mcptape_serve");
        ServeMetrics {
            requests: register(
                &mut r,
                "requests",
                "Requests by JSON-RPC method and how they were answered, counted when decided",
                Family::default(),
            ),
            delay: register_seconds(
                &mut r,
                "delay",
                "Served delay of each reply written: request read to reply written",
                DELAY_BUCKETS,
            ),
            lateness: register_seconds(
                &mut r,
                "lateness",
                "Served minus scheduled delay of each reply written (the replay timer's error)",
                LATENESS_BUCKETS,
            ),
            synthesized: register(
                &mut r,
                "synthesized",
                "Answers built for requests the recording has no answer for, by method",
                Family::default(),
            ),
            cancelled: register(
                &mut r,
                "cancelled",
                "Pending answers cancelled before they were sent",
                Counter::default(),
            ),
            sessions_opened: register(
                &mut r,
                "sessions_opened",
                "Sessions opened (a stdio stream, or an HTTP Mcp-Session-Id)",
                Counter::default(),
            ),
            sessions_live: register(
                &mut r,
                "sessions_live",
                "Sessions open now",
                Gauge::default(),
            ),
            in_flight: register(
                &mut r,
                "in_flight",
                "Requests read whose reply is not yet written",
                Gauge::default(),
            ),
            registry: r,
            labelled,
            other: Arc::new(OTHER_METHOD.to_owned()),
            invalid: Arc::new(INVALID_METHOD.to_owned()),
        }
    }

    /// The `method` label of `m`: itself when labelled, else [`OTHER_METHOD`].
    pub fn method_label(&self, m: &str) -> &str {
        self.label(m).as_str()
    }

    fn label(&self, m: &str) -> &Arc<String> {
        self.labelled.get(m).unwrap_or(&self.other)
    }

    /// Counts one request of `method` answered with `outcome`.
    pub fn request(&self, method: &str, outcome: Outcome) {
        let method = if outcome == Outcome::Invalid {
            &self.invalid
        } else {
            self.label(method)
        };
        self.requests
            .get_or_create(&RequestLabels {
                method: method.clone(),
                outcome,
            })
            .inc();
    }

    /// Counts one synthesized answer to `method`.
    pub fn synthesized(&self, method: &str) {
        self.synthesized
            .get_or_create(&MethodLabel {
                method: self.label(method).clone(),
            })
            .inc();
    }

    /// Observes one reply written: its scheduled and served delay, µs.
    pub fn reply(&self, intended_us: u64, achieved_us: u64) {
        self.delay.observe(achieved_us as f64 / 1e6);
        self.lateness
            .observe(achieved_us.saturating_sub(intended_us) as f64 / 1e6);
    }

    /// Counts one cancelled pending answer.
    pub fn cancelled(&self) {
        self.cancelled.inc();
    }

    /// Counts a session opened; [`SessionGuard`]'s drop counts it closed.
    pub fn session(self: &Arc<Self>) -> SessionGuard {
        self.sessions_opened.inc();
        self.sessions_live.inc();
        SessionGuard(self.clone())
    }

    /// Counts an HTTP session opened (it ends with [`ServeMetrics::session_closed`]: the
    /// client's `DELETE`).
    pub fn session_opened(&self) {
        self.sessions_opened.inc();
        self.sessions_live.inc();
    }

    /// Counts an HTTP session ended by the client.
    pub fn session_closed(&self) {
        self.sessions_live.dec();
    }

    /// Counts a request in flight until the guard is dropped (reply written, cancelled,
    /// connection gone).
    pub fn in_flight(self: &Arc<Self>) -> InFlight {
        self.in_flight.inc();
        InFlight(self.clone())
    }

    /// The exposition: every metric in the OpenMetrics text format, ending `# EOF`.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// A session counted live until dropped ([`ServeMetrics::session`]).
#[derive(Debug)]
pub struct SessionGuard(Arc<ServeMetrics>);

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.0.sessions_live.dec();
    }
}

/// A request counted in flight until dropped ([`ServeMetrics::in_flight`]).
#[derive(Debug)]
pub struct InFlight(Arc<ServeMetrics>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

/// Serves `GET /metrics` ([`ServeMetrics::encode`]) on `listener` until `shutdown`
/// completes; any other path is 404, any other method 405, and a request whose `Host` is not
/// the bound address or whose `Origin` is not loopback is 403 ([`LoopbackGuard`], as
/// `serve --listen`).
///
/// # Errors
/// [`ReplayErrorKind::Io`] when the bound address is unknown or accepting fails.
pub async fn serve_metrics(
    metrics: Arc<ServeMetrics>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ReplayError> {
    let io = |e| ReplayError::new(ReplayErrorKind::Io(e));
    let bound = listener.local_addr().map_err(io)?;
    let guard = Arc::new(LoopbackGuard::new(bound, &[]));
    tokio::pin!(shutdown);
    loop {
        let sock = tokio::select! {
            r = mcptape_transport::listen::accept(&listener) => r.map_err(io)?,
            _ = &mut shutdown => return Ok(()),
        };
        let (metrics, guard) = (metrics.clone(), guard.clone());
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let r = answer(&metrics, &guard, &req);
                async move { Ok::<_, std::convert::Infallible>(r) }
            });
            let _ = mcptape_transport::listen::http1()
                .serve_connection(TokioIo::new(sock), svc)
                .await;
        });
    }
}

fn answer<B>(m: &ServeMetrics, guard: &LoopbackGuard, req: &Request<B>) -> Response<Full<Bytes>> {
    let header = |n: hyper::header::HeaderName| {
        req.headers()
            .get(n)
            .map(|v| v.to_str().unwrap_or("").to_owned())
    };
    let plain = |status: StatusCode, text: String| {
        let mut r = Response::new(Full::new(Bytes::from(text)));
        *r.status_mut() = status;
        r
    };
    if let Err(e) = guard.check(
        header(hyper::header::ORIGIN).as_deref(),
        header(hyper::header::HOST).as_deref(),
    ) {
        return plain(StatusCode::FORBIDDEN, format!("mcptape serve: {e}\n"));
    }
    if req.uri().path() != METRICS_PATH {
        return plain(
            StatusCode::NOT_FOUND,
            format!("mcptape serve: the metrics are at {METRICS_PATH}\n"),
        );
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, String::new());
    }
    let mut r = Response::new(Full::new(Bytes::from(m.encode())));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(CONTENT_TYPE),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_the_counters_histograms_and_gauges_with_their_values() {
        let m = Arc::new(ServeMetrics::new(["x/custom"]));
        m.request("resources/read", Outcome::Recorded);
        m.request("resources/read", Outcome::Recorded);
        m.request("x/custom", Outcome::NotRecorded);
        m.request("no/such", Outcome::NotRecorded);
        m.request("", Outcome::Invalid);
        m.synthesized("ping");
        m.reply(1_000, 1_500);
        m.reply(0, 300);
        m.cancelled();
        let s = m.session();
        let f = m.in_flight();
        let text = m.encode();
        for line in [
            "mcptape_serve_requests_total{method=\"resources/read\",outcome=\"recorded\"} 2",
            "mcptape_serve_requests_total{method=\"x/custom\",outcome=\"not_recorded\"} 1",
            "mcptape_serve_requests_total{method=\"other\",outcome=\"not_recorded\"} 1",
            "mcptape_serve_requests_total{method=\"(invalid)\",outcome=\"invalid\"} 1",
            "mcptape_serve_synthesized_total{method=\"ping\"} 1",
            "mcptape_serve_delay_seconds_count 2",
            "mcptape_serve_delay_seconds_sum 0.0018",
            "mcptape_serve_delay_seconds_bucket{le=\"0.0004\"} 1",
            "mcptape_serve_delay_seconds_bucket{le=\"0.0016\"} 2",
            "mcptape_serve_delay_seconds_bucket{le=\"+Inf\"} 2",
            "mcptape_serve_lateness_seconds_count 2",
            "mcptape_serve_cancelled_total 1",
            "mcptape_serve_sessions_opened_total 1",
            "mcptape_serve_sessions_live 1",
            "mcptape_serve_in_flight 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line:?} in:\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        drop((s, f));
        let text = m.encode();
        assert!(text.contains("mcptape_serve_sessions_live 0\n"), "{text}");
        assert!(text.contains("mcptape_serve_in_flight 0\n"), "{text}");
    }

    #[test]
    fn method_labels_stop_at_the_limit_and_the_rest_count_as_other() {
        let recorded: Vec<String> = (0..MAX_METHOD_LABELS).map(|i| format!("x/{i}")).collect();
        let m = ServeMetrics::new(recorded.iter().map(String::as_str));
        assert_eq!(m.labelled.len(), MAX_METHOD_LABELS);
        let room = MAX_METHOD_LABELS - SPEC_METHODS.len();
        // The last recorded method that fits, and the first one past the limit.
        assert_eq!(m.method_label(&recorded[room - 1]), recorded[room - 1]);
        assert_eq!(m.method_label(&recorded[room]), OTHER_METHOD);
        assert_eq!(m.method_label("resources/read"), "resources/read");
        assert_eq!(m.method_label("never/seen"), OTHER_METHOD);
    }
}
