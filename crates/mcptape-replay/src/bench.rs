//! `bench`: mcptape as the recorded client. Sends the recorded
//! `resources/read` requests to a target over the one client session of
//! `mcptape-transport` ([`Client`]: a line stream, or Streamable HTTP with
//! [`connect_http`]) and measures, in HdrHistograms (µs):
//!
//! - single reads, closed-loop (`concurrency` in flight) or open-loop (`rate`
//!   per second, latency measured from each request's *intended* send time, so
//!   coordinated omission is corrected as wrk2 does);
//! - parallel-read turns: `parallel` reads at once; the turn ends when all
//!   have answered or at the deadline, when every straggler is cancelled the
//!   way of the transport (stdio: `notifications/cancelled` with its
//!   `requestId`, MCP 2025-11-25 "Cancellation"; HTTP: its POST aborted, see
//!   [`mcptape_transport::session`]); a read still unanswered at the timeout
//!   is abandoned.
//!   Responses arriving after their cancellation are counted as late and
//!   otherwise ignored.
//!
//! Every loop is bounded in count (`reads`, `turns`) and in time
//! (`max_duration`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use hdrhistogram::Histogram;
use serde_json::Value;
use tokio::time::{Duration, Instant};

use mcptape_wire::classify::{ReadErrorClass, classify_read_error};
use mcptape_wire::jsonrpc::ErrorObject;
use mcptape_wire::protocol::{self, method};

use crate::error::{ReplayError, ReplayErrorKind};
use crate::report::new_hist;
use crate::tape::Tape;

/// Largest `--parallel`: 1024 reads per turn.
pub const MAX_PARALLEL: u32 = 1024;
/// Largest number of reads or turns in one run: 10,000,000.
pub const MAX_COUNT: u64 = 10_000_000;

/// Largest `--max-phase` (wall-clock bound of one phase): 1 h, in µs. Longer
/// than [`crate::latency::MAX_DELAY_US`] so a closed-loop run can measure a
/// p99.9 over 10,000+ reads; rejected above (`SpecErrorKind::DelayTooLarge`).
pub const MAX_PHASE_US: u64 = 3_600_000_000;

/// The client: the one MCP client session of `mcptape-transport` (id
/// matching by raw id text, handshake with era fallback, server requests
/// answered, cancellation per transport). `Client::over(r, w)` for a line
/// stream, `Client::http(client, None)` for Streamable HTTP.
pub use mcptape_transport::session::{Outcome, Session as Client};

/// A [`Client`] for the Streamable HTTP endpoint `url` (both eras; requests
/// POSTed concurrently, cancellation by aborting the POST). A stateless-era
/// `protocol_version` (2026-07-28 or later, e.g. the tape's) is sent from the
/// first request; otherwise the handshake negotiates it.
///
/// # Errors
/// [`ReplayErrorKind::Http`] for a URL the client rejects.
pub fn connect_http(url: &str, protocol_version: Option<&str>) -> Result<Client, ReplayError> {
    let mut http = mcptape_transport::http::HttpClient::new(url)
        .map_err(|e| ReplayError::new(ReplayErrorKind::Http(e.to_string())))?;
    if let Some(v) = protocol_version
        && protocol::Era::of(v) == protocol::Era::Stateless
    {
        http.set_protocol_version(v);
    }
    Ok(Client::http(http, None))
}

/// Open- or closed-loop single reads.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Load {
    /// `concurrency` reads in flight at all times.
    Closed {
        /// Reads in flight (≥ 1).
        concurrency: u32,
    },
    /// One read every 1/`per_s` seconds regardless of answers; latency from
    /// the intended send time.
    Open {
        /// Reads per second.
        per_s: f64,
    },
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Single reads to send.
    pub reads: u64,
    /// Parallel-read turns to run.
    pub turns: u64,
    /// Reads per turn (1..=[`MAX_PARALLEL`]).
    pub parallel: u32,
    /// Turn deadline: stragglers are cancelled then, µs.
    pub deadline_us: u64,
    /// Per-read timeout: a read unanswered then is abandoned, µs.
    pub timeout_us: u64,
    /// Single-read load.
    pub load: Load,
    /// Wall-clock bound on each phase; a phase stops early when it passes.
    pub max_phase: Duration,
}

/// Measured figures of one bench run.
#[derive(Debug)]
pub struct BenchResult {
    /// Single-read latency, µs.
    pub single: Histogram<u64>,
    /// Turn completion time (all answered, or the deadline), µs.
    pub turn: Histogram<u64>,
    /// Latency of the reads inside turns that answered before the deadline, µs.
    pub turn_reads: Histogram<u64>,
    /// Single reads sent.
    pub reads_sent: u64,
    /// Wall time of the single-read phase, s.
    pub single_elapsed_s: f64,
    /// Wall time of the turn phase, s.
    pub turn_elapsed_s: f64,
    /// Turns run.
    pub turns: u64,
    /// Turns that reached the deadline with stragglers.
    pub turns_hit_deadline: u64,
    /// `notifications/cancelled` sent (turn stragglers and timed-out single reads).
    pub cancellations: u64,
    /// Responses that came after their cancellation (tagged, ignored).
    pub late_responses: u64,
    /// Reads abandoned at the timeout with no answer at all.
    pub abandoned: u64,
    /// For every abandoned read, how long after its send it was abandoned, µs.
    pub abandoned_after_us: Vec<u64>,
    /// Errors by class: JSON-RPC error code classes, `timeout`, `closed`.
    pub errors: BTreeMap<String, u64>,
    /// Responses with unknown ids, server requests refused.
    pub unexpected: (u64, u64),
    /// Single reads asked for (`reads`, at most [`MAX_COUNT`]).
    pub reads_asked: u64,
    /// Turns asked for (`turns`, at most [`MAX_COUNT`]).
    pub turns_asked: u64,
    /// The single-read phase stopped at `max_phase` before sending every read.
    pub single_cut: bool,
    /// The turn phase stopped at `max_phase` before running every turn.
    pub turns_cut: bool,
    /// The target closed the connection during the run.
    pub target_closed: bool,
    /// Throughput window of the single-read phase, s: closed loop, first send
    /// → last completion; open loop, the larger of that and sent / rate (the
    /// time the offered load took to offer), so a short run does not report
    /// more than the offered rate.
    pub single_window_s: f64,
    /// Recorded `resources/read` exchanges in the transcript.
    pub recorded_reads: u64,
    /// Of those, how many were recorded as error answers (replayed as such).
    pub recorded_read_errors: u64,
}

impl BenchResult {
    fn new() -> Self {
        BenchResult {
            single: new_hist(),
            turn: new_hist(),
            turn_reads: new_hist(),
            reads_sent: 0,
            single_elapsed_s: 0.0,
            turn_elapsed_s: 0.0,
            turns: 0,
            turns_hit_deadline: 0,
            cancellations: 0,
            late_responses: 0,
            abandoned: 0,
            abandoned_after_us: Vec::new(),
            errors: BTreeMap::new(),
            unexpected: (0, 0),
            reads_asked: 0,
            turns_asked: 0,
            single_cut: false,
            turns_cut: false,
            target_closed: false,
            single_window_s: 0.0,
            recorded_reads: 0,
            recorded_read_errors: 0,
        }
    }

    /// Single reads answered per second of the single-read phase: answered /
    /// [`single_window_s`](Self::single_window_s); 0 when nothing answered.
    pub fn throughput_per_s(&self) -> f64 {
        if self.single_window_s > 0.0 {
            self.single.len() as f64 / self.single_window_s
        } else {
            0.0
        }
    }
}

/// Report label of an error response to `resources/read`, by its class from
/// [`mcptape_wire::classify::classify_read_error`] (code and `data.uri`,
/// never the message).
pub fn error_class(err: &ErrorObject) -> String {
    match classify_read_error(err) {
        ReadErrorClass::NotFound { legacy: false, .. } => "not-found (-32602 + data.uri)".into(),
        ReadErrorClass::NotFound { legacy: true, .. } => {
            "not-found, legacy (-32002 + data.uri)".into()
        }
        ReadErrorClass::InvalidParams => "invalid-params (-32602, no data.uri)".into(),
        ReadErrorClass::Internal => "internal (-32603)".into(),
        ReadErrorClass::MethodNotFound => "method-not-found (-32601)".into(),
        ReadErrorClass::Other { code } => format!("other ({code})"),
        _ => format!("other ({})", err.code),
    }
}

/// `initialize` params of the fallback when the transcript recorded none
/// (MCP 2025-11-25 "Lifecycle": `protocolVersion`, `capabilities`, `clientInfo`).
pub fn fallback_initialize_params() -> Value {
    protocol::initialize_params(
        &protocol::FALLBACK_REVISION,
        &protocol::Implementation::mcptape(),
    )
}

/// Opens the session as the recorded client did: the recorded `initialize`
/// (then `notifications/initialized`) or `server/discover`, waiting up to
/// `timeout` for each answer. When `server/discover` is answered with an
/// error (a pre-2026-07-28 server), falls back to `initialize` as real
/// clients and `mcptape crawl` do ([`Client::handshake`]): the recorded
/// `initialize` params if the transcript has them, else
/// [`fallback_initialize_params`].
///
/// # Errors
/// [`ReplayErrorKind::NoHandshake`], [`ReplayErrorKind::Handshake`] (no
/// answer in time, or an error answer), [`ReplayErrorKind::Closed`] (the
/// target closed the connection first).
pub async fn handshake(client: &Client, tape: &Tape, timeout: Duration) -> Result<(), ReplayError> {
    use mcptape_transport::session::Handshake;
    let hs = tape
        .handshake()
        .ok_or_else(|| ReplayError::new(ReplayErrorKind::NoHandshake))?;
    let recorded_initialize = || {
        tape.client
            .iter()
            .find(|r| r.method == method::INITIALIZE && r.id.is_some())
            .map_or_else(fallback_initialize_params, |r| r.params.clone())
    };
    let plan = match hs.method.as_str() {
        method::SERVER_DISCOVER => Handshake {
            discover: Some(hs.params.clone()),
            version: None,
            initialize: recorded_initialize(),
            timeout,
        },
        method::INITIALIZE => Handshake {
            discover: None,
            version: None,
            initialize: hs.params.clone(),
            timeout,
        },
        // A tape whose first request is `ping`: send it, no session to open.
        other => {
            return match client.call(other, &hs.params, timeout).await {
                Ok((Outcome::Ok, _)) => Ok(()),
                Ok((o, _)) => Err(ReplayError::new(ReplayErrorKind::Handshake(format!(
                    "{other} answered {o}"
                )))),
                Err(e) => Err(handshake_error(e, timeout)),
            };
        }
    };
    client
        .handshake(&plan)
        .await
        .map(|_| ())
        .map_err(|e| handshake_error(e, timeout))
}

fn handshake_error(e: mcptape_transport::session::SessionError, timeout: Duration) -> ReplayError {
    use mcptape_transport::session::{SessionError, SessionErrorKind};
    let text = e.to_string();
    let SessionError { kind, method, .. } = e;
    ReplayError::new(match kind {
        SessionErrorKind::Closed(_) => ReplayErrorKind::Closed,
        SessionErrorKind::Timeout { .. } => ReplayErrorKind::Handshake(format!(
            "{method} got no answer in {} ms (the handshake is bounded by --timeout)",
            timeout.as_millis()
        )),
        SessionErrorKind::Refused(err) => {
            ReplayErrorKind::Handshake(format!("{method} answered {}", Outcome::Error(err)))
        }
        _ => ReplayErrorKind::Handshake(text),
    })
}

fn count_err(errors: &Mutex<BTreeMap<String, u64>>, class: String) {
    *errors
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(class)
        .or_insert(0) += 1;
}

/// Runs the single-read phase then the turn phase against an open session.
/// `progress` is told of each finished read or turn.
///
/// # Errors
/// [`ReplayErrorKind::NoReads`] when the tape has no recorded read,
/// [`ReplayErrorKind::ParallelOutOfRange`] unless 1 ≤ `parallel` ≤ [`MAX_PARALLEL`].
pub async fn run(
    client: Arc<Client>,
    tape: &Tape,
    cfg: &BenchConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BenchResult, ReplayError> {
    let reads = Arc::new(tape.reads());
    if reads.is_empty() {
        return Err(ReplayError::new(ReplayErrorKind::NoReads));
    }
    if cfg.parallel == 0 || cfg.parallel > MAX_PARALLEL {
        return Err(ReplayError::new(ReplayErrorKind::ParallelOutOfRange(
            cfg.parallel,
        )));
    }
    let mut res = BenchResult::new();
    let timeout = Duration::from_micros(cfg.timeout_us);
    let errors: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let single: Arc<Mutex<Histogram<u64>>> = Arc::new(Mutex::new(new_hist()));
    let abandoned: Arc<Mutex<Vec<u64>>> = Arc::default();
    let cancels = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));

    // One read: send at `intended` (already reached), wait up to the timeout.
    let one_read = {
        let (client, errors, single, abandoned, cancels) = (
            client.clone(),
            errors.clone(),
            single.clone(),
            abandoned.clone(),
            cancels.clone(),
        );
        move |params: Value, intended: Instant| {
            let (client, errors, single, abandoned, cancels) = (
                client.clone(),
                errors.clone(),
                single.clone(),
                abandoned.clone(),
                cancels.clone(),
            );
            async move {
                let sent_at = Instant::now();
                let (id, rx) = client.request(method::RESOURCES_READ, &params);
                match tokio::time::timeout_at(sent_at + timeout, rx).await {
                    Ok(Ok((o, _))) => {
                        let us = intended.elapsed().as_micros() as u64;
                        // A closed connection is an error, not a latency.
                        if o != Outcome::Closed {
                            single
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .saturating_record(us.max(1));
                        }
                        match o {
                            Outcome::Ok => {}
                            Outcome::Error(e) => count_err(&errors, error_class(&e)),
                            Outcome::Closed => count_err(&errors, "closed".into()),
                        }
                    }
                    Ok(Err(_)) => count_err(&errors, "closed".into()),
                    Err(_) => {
                        if client.cancel(id, "mcptape bench: timeout") {
                            cancels.fetch_add(1, Ordering::Relaxed);
                        }
                        if client.abandon(id) {
                            abandoned
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(sent_at.elapsed().as_micros() as u64);
                        }
                        count_err(&errors, "timeout".into());
                    }
                }
            }
        }
    };

    res.recorded_reads = tape
        .exchanges
        .iter()
        .filter(|e| e.request.method == method::RESOURCES_READ)
        .count() as u64;
    res.recorded_read_errors = tape
        .exchanges
        .iter()
        .filter(|e| e.request.method == method::RESOURCES_READ && e.reply.get("error").is_some())
        .count() as u64;

    // Phase 1: single reads.
    let n_reads = cfg.reads.min(MAX_COUNT);
    res.reads_asked = n_reads;
    res.turns_asked = cfg.turns.min(MAX_COUNT);
    let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let start = Instant::now();
    let stop_at = start + cfg.max_phase;
    match cfg.load {
        Load::Closed { concurrency } => {
            let next = Arc::new(AtomicU64::new(0));
            let mut workers = FuturesUnordered::new();
            for _ in 0..concurrency.max(1) {
                let (next, reads, one_read, sent, client, cut) = (
                    next.clone(),
                    reads.clone(),
                    one_read.clone(),
                    sent.clone(),
                    client.clone(),
                    cut.clone(),
                );
                workers.push(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n_reads || client.is_closed() {
                            break;
                        }
                        if Instant::now() >= stop_at {
                            cut.store(true, Ordering::Relaxed);
                            break;
                        }
                        sent.fetch_add(1, Ordering::Relaxed);
                        let p = reads[(i % reads.len() as u64) as usize].clone();
                        one_read(p, Instant::now()).await;
                        progress(1);
                    }
                });
            }
            while workers.next().await.is_some() {}
        }
        Load::Open { per_s } => {
            let period = Duration::from_secs_f64(1.0 / per_s.max(1e-3));
            let mut inflight = FuturesUnordered::new();
            for i in 0..n_reads {
                let intended = start + period.mul_f64(i as f64);
                if client.is_closed() {
                    break;
                }
                if intended >= stop_at {
                    cut.store(true, Ordering::Relaxed);
                    break;
                }
                // Drain finished reads while waiting for the next send time.
                loop {
                    tokio::select! {
                        _ = tokio::time::sleep_until(intended) => break,
                        Some(()) = inflight.next(), if !inflight.is_empty() => progress(1),
                    }
                }
                sent.fetch_add(1, Ordering::Relaxed);
                let p = reads[(i % reads.len() as u64) as usize].clone();
                inflight.push(one_read(p, intended));
            }
            while inflight.next().await.is_some() {
                progress(1);
            }
        }
    }
    res.single_elapsed_s = start.elapsed().as_secs_f64();
    res.reads_sent = sent.load(Ordering::Relaxed);
    res.single_cut = cut.load(Ordering::Relaxed);
    res.single_window_s = match cfg.load {
        Load::Closed { .. } => res.single_elapsed_s,
        // Open loop: `start` is the first intended send; n sends at rate R
        // take n / R to offer, whatever the last latency.
        Load::Open { per_s } => res
            .single_elapsed_s
            .max(res.reads_sent as f64 / per_s.max(1e-3)),
    };

    // Phase 2: parallel-read turns.
    let deadline = Duration::from_micros(cfg.deadline_us);
    let parallel = cfg.parallel as usize;
    let start2 = Instant::now();
    let stop2 = start2 + cfg.max_phase;
    let mut background = FuturesUnordered::new();
    let mut k = 0usize;
    for _ in 0..cfg.turns.min(MAX_COUNT) {
        if client.is_closed() {
            break;
        }
        if Instant::now() >= stop2 {
            res.turns_cut = true;
            break;
        }
        let t0 = Instant::now();
        let mut waiting = FuturesUnordered::new();
        let mut open_ids = Vec::with_capacity(parallel);
        for _ in 0..parallel {
            let p = &reads[k % reads.len()];
            k += 1;
            let (id, rx) = client.request(method::RESOURCES_READ, p);
            open_ids.push(id);
            waiting.push(async move { (id, rx.await) });
        }
        let turn_deadline = t0 + deadline;
        let mut answered = Vec::new();
        loop {
            tokio::select! {
                biased;
                r = waiting.next() => match r {
                    Some((id, out)) => {
                        answered.push(id);
                        if !matches!(out, Ok((Outcome::Closed, _)) | Err(_)) {
                            res.turn_reads.saturating_record((t0.elapsed().as_micros() as u64).max(1));
                        }
                        match out {
                            Ok((Outcome::Ok, _)) => {}
                            Ok((Outcome::Error(e), _)) => count_err(&errors, error_class(&e)),
                            Ok((Outcome::Closed, _)) | Err(_) => count_err(&errors, "closed".into()),
                        }
                    }
                    None => break,
                },
                _ = tokio::time::sleep_until(turn_deadline) => break,
            }
        }
        if client.is_closed() {
            break; // the target went away mid-turn: no turn time to report
        }
        let took = t0.elapsed().min(deadline);
        res.turn.saturating_record((took.as_micros() as u64).max(1));
        res.turns += 1;
        let stragglers: Vec<u64> = open_ids
            .into_iter()
            .filter(|id| !answered.contains(id))
            .collect();
        if !stragglers.is_empty() {
            res.turns_hit_deadline += 1;
            for id in stragglers {
                if !client.cancel(id, "mcptape bench: turn deadline") {
                    continue;
                }
                cancels.fetch_add(1, Ordering::Relaxed);
                let (client, abandoned) = (client.clone(), abandoned.clone());
                let abandon_at = t0 + timeout;
                background.push(async move {
                    tokio::time::sleep_until(abandon_at).await;
                    if client.abandon(id) {
                        abandoned
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(t0.elapsed().as_micros() as u64);
                    }
                });
            }
        }
        drop(waiting);
        // Reap abandon timers that are due without blocking the next turn.
        while let Some(Some(())) = futures::FutureExt::now_or_never(background.next()) {}
        progress(1);
    }
    res.turn_elapsed_s = start2.elapsed().as_secs_f64();
    // Wait (bounded by the timeout) for the straggler timers, so late
    // responses and abandonments are all counted.
    while background.next().await.is_some() {}

    res.single = std::mem::replace(
        &mut *single.lock().unwrap_or_else(|p| p.into_inner()),
        new_hist(),
    );
    res.errors = std::mem::take(&mut *errors.lock().unwrap_or_else(|p| p.into_inner()));
    res.abandoned_after_us =
        std::mem::take(&mut *abandoned.lock().unwrap_or_else(|p| p.into_inner()));
    res.abandoned = res.abandoned_after_us.len() as u64;
    res.cancellations = cancels.load(Ordering::Relaxed);
    res.late_responses = client.late_responses();
    res.unexpected = client.unexpected();
    let invalid = client.invalid_messages();
    if invalid > 0 {
        res.errors.insert(
            "invalid message from the target (not JSON-RPC 2.0)".into(),
            invalid,
        );
    }
    res.target_closed = client.is_closed();
    Ok(res)
}

impl BenchResult {
    /// The report of this run: quantiles, the F(t)^N prediction beside the
    /// measured turn p50/p99, and the counters.
    pub fn report(
        &self,
        cfg: &BenchConfig,
        transcript: &str,
        target: &str,
        latency: Option<String>,
        seed: u64,
        server: Option<crate::serve::ServeSummary>,
    ) -> crate::report::BenchReport {
        use crate::report::{
            Predicted, Quantiles, predict_deadline_share, predict_turn_quantile_us,
        };
        let prediction = [0.5, 0.99]
            .iter()
            .filter_map(|&q| {
                if self.turn.is_empty() {
                    return None;
                }
                let measured_us = self.turn.value_at_quantile(q);
                let predicted_us =
                    predict_turn_quantile_us(&self.single, cfg.parallel, q, cfg.deadline_us)?;
                Some(Predicted {
                    q,
                    measured_us,
                    predicted_us,
                    difference_us: measured_us as i64 - predicted_us as i64,
                })
            })
            .collect();
        crate::report::BenchReport {
            transcript: transcript.to_owned(),
            target: target.to_owned(),
            latency,
            seed,
            load: match cfg.load {
                Load::Closed { concurrency } => format!("closed-loop, concurrency {concurrency}"),
                Load::Open { per_s } => format!("open-loop {per_s}/s, from intended send time"),
            },
            parallel: cfg.parallel,
            deadline_us: cfg.deadline_us,
            timeout_us: cfg.timeout_us,
            single: Quantiles::of(&self.single),
            throughput_per_s: self.throughput_per_s(),
            reads_asked: self.reads_asked,
            turns_asked: self.turns_asked,
            single_cut: self.single_cut,
            turns_cut: self.turns_cut,
            max_phase_ms: cfg.max_phase.as_millis() as u64,
            target_closed: self.target_closed,
            turn_reads: self.turn_reads.len(),
            recorded_reads: self.recorded_reads,
            recorded_read_errors: self.recorded_read_errors,
            turn: Quantiles::of(&self.turn),
            prediction,
            turns: self.turns,
            turns_hit_deadline: self.turns_hit_deadline,
            deadline_share: if self.turns > 0 {
                self.turns_hit_deadline as f64 / self.turns as f64
            } else {
                0.0
            },
            predicted_deadline_share: predict_deadline_share(
                &self.single,
                cfg.parallel,
                cfg.deadline_us,
            ),
            cancellations: self.cancellations,
            late_responses: self.late_responses,
            abandoned: self.abandoned,
            errors: self.errors.clone(),
            server,
        }
    }
}
