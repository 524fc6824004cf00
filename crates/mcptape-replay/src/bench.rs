//! `bench`: mcptape as the recorded client. Sends the recorded requests
//! (every method but the handshake by default, [`BenchConfig::methods`]; in the
//! recorded order or weighted, [`Mix`]; each with its recorded params) to a
//! target over the one client session of
//! `mcptape-transport` ([`Client`]: a line stream, or Streamable HTTP with
//! [`connect_http`]) and measures, in HdrHistograms (µs):
//!
//! - single requests, by method and by tool name / prompt name / URI
//!   ([`BenchResult::by_method`], [`BenchResult::by_key`]), closed-loop (`concurrency` in flight) or open-loop (`rate`
//!   per second, latency measured from each request's *intended* send time, so
//!   coordinated omission is corrected as wrk2 does);
//! - parallel-read turns (recorded `resources/read` only): `parallel` reads at once; the turn ends when all
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

use mcptape_wire::protocol::{self, method};

use crate::config::{ConfigError, ConfigErrorKind, MAX_MIX_ENTRIES, duration_us, parse_rate};
use crate::error::{ReplayError, ReplayErrorKind};
use crate::latency::MAX_DELAY_US;
use crate::schedule::{TimerMode, sleep_until_precise};
use crate::tape::Tape;
use mcptape_report::run::{
    BenchResult, DEFAULT_MAX_IN_FLIGHT, INVALID_CONTENTS_CLASS, KeyStats, LATE_SEND_US, Load,
    MAX_ABANDONED_SAMPLES, MAX_COUNT, MAX_ERROR_CLASSES, MAX_IN_FLIGHT, MAX_KEYS_PER_METHOD,
    MAX_METHODS, MAX_PARALLEL, MAX_PHASE_US, NOISE_CLASS, OTHER_CLASSES, OTHER_KEYS, RunSettings,
    TIMEOUT_CLASS, TOO_LONG_CLASS, error_class,
};
use mcptape_report::stats::new_hist;

/// Slots of one cycle of a weighted [`Mix`]: 1,000 (weights are honoured to 0.1%; a uniform
/// mix has one slot per method).
pub const MIX_CYCLE: usize = 1_000;

/// `--methods reads`: only the recorded `resources/read` (the behaviour before every method
/// was replayed).
pub const READS_ONLY: &str = "reads";

/// The methods bench never replays: the handshake (sent once, before the run).
pub const NOT_REPLAYED: [&str; 2] = method::HANDSHAKES;

/// In which proportion the single phase sends each method.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum Mix {
    /// The recorded requests in their recorded order, cycled (default).
    #[default]
    Recorded,
    /// Every replayed method equally often.
    Uniform,
    /// Each named method in proportion to its weight (> 0); an unnamed replayed method is not
    /// sent.
    Weighted(Vec<(String, f64)>),
}

impl Mix {
    /// Parses `--mix`: `recorded`, `uniform` or `METHOD=W,…` (W a finite number > 0, at most
    /// [`MAX_MIX_ENTRIES`] items).
    ///
    /// # Errors
    /// [`ConfigErrorKind::MixItem`], [`ConfigErrorKind::MixWeight`] (with the item's index),
    /// [`ConfigErrorKind::TooManyMethods`].
    pub fn parse(s: &str) -> Result<Mix, ConfigError> {
        match s.trim() {
            "recorded" => return Ok(Mix::Recorded),
            "uniform" => return Ok(Mix::Uniform),
            _ => {}
        }
        let e = |kind| ConfigError::new("--mix", s, kind);
        let items: Vec<&str> = s.split(',').collect();
        if items.len() > MAX_MIX_ENTRIES {
            return Err(e(ConfigErrorKind::TooManyMethods(items.len())));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let (m, w) = item
                .split_once('=')
                .filter(|(m, _)| !m.trim().is_empty())
                .ok_or_else(|| e(ConfigErrorKind::MixItem(i)))?;
            let w: f64 = w
                .trim()
                .parse()
                .ok()
                .filter(|w: &f64| w.is_finite() && *w > 0.0)
                .ok_or_else(|| e(ConfigErrorKind::MixWeight(i)))?;
            out.push((m.trim().to_owned(), w));
        }
        Ok(Mix::Weighted(out))
    }

    /// The mix as `--mix` takes it.
    pub fn label(&self) -> String {
        match self {
            Mix::Recorded => "recorded".into(),
            Mix::Uniform => "uniform".into(),
            Mix::Weighted(w) => w
                .iter()
                .map(|(m, w)| format!("{m}={w}"))
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// Which `tools/call` a live target may get.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum ToolPolicy {
    /// Every recorded call (the embedded server: it only replays answers).
    #[default]
    All,
    /// A live target: the tools a recorded `tools/list` marks `readOnlyHint: true`
    /// ([`Tape::read_only_tools`]) and these names (`--allow-tool`; `*`: every tool).
    ReadOnlyAnd(Vec<String>),
}

/// One recorded request the single phase replays.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Its method.
    pub method: String,
    /// Its recorded params, sent as recorded.
    pub params: Value,
    /// Tool name (`tools/call`), prompt name (`prompts/get`) or URI (`resources/read`), if any.
    pub key: Option<String>,
    /// The recorded JSON-RPC error code, `None` for a recorded result (or no recorded answer).
    pub recorded_code: Option<i64>,
    /// The recording holds an answer to it; `false` when it lost it (a transcript cut by a
    /// crash before the reply) or the server never answered: the answer it gets (the embedded
    /// `serve` synthesizes one) is compared with nothing, counted as
    /// [`PhaseCounters::no_recorded_answer`](mcptape_report::stats::PhaseCounters::no_recorded_answer),
    /// never as answered otherwise than recorded.
    pub recorded: bool,
}

/// What the single phase sends, in which order ([`plan`]).
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The replayed requests, in recorded order.
    pub requests: Vec<Planned>,
    /// One cycle of the send order: indices into `requests` (recorded mix), or, weighted,
    /// (method index, its rank among that method's slots of the cycle).
    cycle: Vec<(usize, u64)>,
    /// Weighted: per method, its requests' indices and its slots per cycle.
    per_method: Vec<(Vec<usize>, u64)>,
    /// Tools recorded in a `tools/call` that [`ToolPolicy`] kept from a live target
    /// (sorted, once each).
    pub skipped_tools: Vec<String>,
}

impl Plan {
    /// The request sent `i`-th (cycled; weighted: the method by the mix, then that method's
    /// requests in recorded order). `None` when nothing is planned.
    pub fn pick(&self, i: u64) -> Option<&Planned> {
        if self.cycle.is_empty() {
            return None;
        }
        let n = self.cycle.len() as u64;
        let (slot, rank) = self.cycle[(i % n) as usize];
        if self.per_method.is_empty() {
            return self.requests.get(slot);
        }
        let (reqs, per_cycle) = &self.per_method[slot];
        let k = (i / n) * per_cycle + rank;
        self.requests.get(reqs[(k % reqs.len() as u64) as usize])
    }
}

/// Parses `--methods`: comma-separated method names (`reads`: [`READS_ONLY`]), at most
/// [`MAX_MIX_ENTRIES`].
///
/// # Errors
/// [`ConfigErrorKind::EmptyMethod`] (with its index), [`ConfigErrorKind::TooManyMethods`].
pub fn parse_methods(s: &str) -> Result<Vec<String>, ConfigError> {
    let items: Vec<String> = s.split(',').map(|m| m.trim().to_owned()).collect();
    let e = |kind| ConfigError::new("--methods", s, kind);
    if items.len() > MAX_MIX_ENTRIES {
        return Err(e(ConfigErrorKind::TooManyMethods(items.len())));
    }
    if let Some(i) = items.iter().position(String::is_empty) {
        return Err(e(ConfigErrorKind::EmptyMethod(i)));
    }
    Ok(items)
}

/// The tool name, prompt name or URI of a request: what its rows are keyed by.
pub fn request_key(method_name: &str, params: &Value) -> Option<String> {
    let field = match method_name {
        method::TOOLS_CALL | method::PROMPTS_GET => "name",
        method::RESOURCES_READ => "uri",
        _ => return None,
    };
    params.get(field)?.as_str().map(str::to_owned)
}

/// Whether `tape` holds an answer to `method` with `params`, and its JSON-RPC error code when
/// that answer is an error with exactly these params (`None` for a result).
fn recorded_answer(tape: &Tape, method: &str, params: &Value) -> (bool, Option<i64>) {
    match tape.lookup(method, params) {
        crate::tape::Match::Exact(e) => (true, e.error_code),
        crate::tape::Match::ByMethod(_) => (true, None),
        _ => (false, None),
    }
}

/// The single phase's requests from `tape`: every recorded request with an id whose method
/// is in `methods` (`None`: every method but [`NOT_REPLAYED`]; [`READS_ONLY`] stands for
/// `resources/read`), the `tools/call` of tools `tools` does not allow left out (listed in
/// [`Plan::skipped_tools`]), ordered by `mix`.
///
/// # Errors
/// [`ReplayErrorKind::UnrecordedMethod`] when `methods` or the weights of `mix` name a method
/// the tape has no request of; [`ReplayErrorKind::NoRequests`] when nothing is left to send
/// (with what was recorded and what was asked).
pub fn plan(
    tape: &Tape,
    methods: Option<&[String]>,
    mix: &Mix,
    tools: &ToolPolicy,
) -> Result<Plan, ReplayError> {
    let wanted = |m: &str| match methods {
        None => !NOT_REPLAYED.contains(&m),
        Some(list) => list
            .iter()
            .any(|x| x == m || (x == READS_ONLY && m == method::RESOURCES_READ)),
    };
    let read_only = match tools {
        ToolPolicy::All => Default::default(),
        ToolPolicy::ReadOnlyAnd(_) => tape.read_only_tools(),
    };
    let allowed = |name: &str| match tools {
        ToolPolicy::All => true,
        ToolPolicy::ReadOnlyAnd(allow) => {
            read_only.contains(name) || allow.iter().any(|a| a == "*" || a == name)
        }
    };
    // A named method never recorded (a typo) is refused, not silently left out.
    let named = methods
        .into_iter()
        .flatten()
        .filter(|m| m.as_str() != READS_ONLY)
        .chain(match mix {
            Mix::Weighted(w) => w.iter().map(|(m, _)| m).collect::<Vec<_>>(),
            _ => Vec::new(),
        });
    for m in named {
        if !tape.client.iter().any(|r| r.id.is_some() && r.method == *m) {
            return Err(no_requests(tape, methods, &[]).with_unrecorded(m));
        }
    }
    let mut p = Plan::default();
    let mut skipped = std::collections::BTreeSet::new();
    for r in tape.client.iter().filter(|r| r.id.is_some()) {
        if !wanted(&r.method) {
            continue;
        }
        let key = request_key(&r.method, &r.params);
        if r.method == method::TOOLS_CALL && !allowed(key.as_deref().unwrap_or("")) {
            skipped.insert(key.unwrap_or_default());
            continue;
        }
        let (recorded, recorded_code) = recorded_answer(tape, &r.method, &r.params);
        p.requests.push(Planned {
            method: r.method.to_string(),
            params: Value::clone(&r.params),
            key,
            recorded_code,
            recorded,
        });
    }
    p.skipped_tools = skipped.into_iter().collect();
    let weights: Vec<(String, f64)> = match mix {
        Mix::Recorded => {
            p.cycle = (0..p.requests.len()).map(|i| (i, 0)).collect();
            return if p.requests.is_empty() {
                Err(no_requests(tape, methods, &p.skipped_tools))
            } else {
                Ok(p)
            };
        }
        Mix::Uniform => {
            let mut seen: Vec<String> = Vec::new();
            for r in &p.requests {
                if !seen.contains(&r.method) {
                    seen.push(r.method.clone());
                }
            }
            seen.into_iter().map(|m| (m, 1.0)).collect()
        }
        Mix::Weighted(w) => w.clone(),
    };
    // Methods of the mix that have requests, with their share of a cycle's slots
    // (largest remainder), then interleaved smoothly (weighted round robin).
    let weights: Vec<(Vec<usize>, f64)> = weights
        .iter()
        .filter_map(|(m, w)| {
            let reqs: Vec<usize> = (0..p.requests.len())
                .filter(|&i| p.requests[i].method == *m)
                .collect();
            (!reqs.is_empty()).then_some((reqs, *w))
        })
        .collect();
    if weights.is_empty() {
        return Err(no_requests(tape, methods, &p.skipped_tools));
    }
    // Uniform: one slot per method (exact); weighted: MIX_CYCLE slots.
    let cycle = if *mix == Mix::Uniform {
        weights.len()
    } else {
        MIX_CYCLE
    };
    let total: f64 = weights.iter().map(|w| w.1).sum();
    let mut slots: Vec<u64> = weights
        .iter()
        .map(|w| (w.1 / total * cycle as f64).floor() as u64)
        .collect();
    let mut left = cycle as u64 - slots.iter().sum::<u64>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = weights[a].1 / total * cycle as f64;
        let fb = weights[b].1 / total * cycle as f64;
        (fb - fb.floor()).total_cmp(&(fa - fa.floor()))
    });
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        slots[i] += 1;
        left -= 1;
    }
    let mut current = vec![0i64; slots.len()];
    let mut used = vec![0u64; slots.len()];
    for _ in 0..cycle {
        let mut best = usize::MAX;
        for (i, &n) in slots.iter().enumerate() {
            if n == 0 {
                continue;
            }
            current[i] += n as i64;
            if best == usize::MAX || current[i] > current[best] {
                best = i;
            }
        }
        current[best] -= cycle as i64;
        p.cycle.push((best, used[best]));
        used[best] += 1;
    }
    p.per_method = weights
        .into_iter()
        .zip(slots)
        .map(|((r, _), n)| (r, n))
        .collect();
    Ok(p)
}

impl ReplayError {
    /// `self` (a [`ReplayErrorKind::NoRequests`]) as [`ReplayErrorKind::UnrecordedMethod`]
    /// of `method`.
    fn with_unrecorded(self, method: &str) -> ReplayError {
        match self.kind {
            ReplayErrorKind::NoRequests { recorded, .. } => {
                ReplayError::new(ReplayErrorKind::UnrecordedMethod {
                    method: method.to_owned(),
                    recorded,
                })
            }
            _ => self,
        }
    }
}

fn no_requests(tape: &Tape, methods: Option<&[String]>, skipped: &[String]) -> ReplayError {
    let mut recorded: Vec<&str> = tape
        .client
        .iter()
        .filter(|r| r.id.is_some() && !NOT_REPLAYED.contains(&r.method.as_str()))
        .map(|r| r.method.as_str())
        .collect();
    recorded.sort_unstable();
    recorded.dedup();
    ReplayError::new(ReplayErrorKind::NoRequests {
        recorded: if recorded.is_empty() {
            "no request but the handshake".into()
        } else {
            recorded.join(", ")
        },
        asked: methods.map_or("every method".into(), |m| m.join(",")),
        skipped_tools: skipped.join(", "),
    })
}

/// Checks one `resources/read` reply (the bytes of the JSON-RPC message) with the fused strict
/// decoder ([`mcptape_wire::codec::scan_message`]: strict JSON, every `contents` entry's rules,
/// each `blob` validated as base64 in place, never decoded; MCP 2026-07-28
/// `ReadResourceResult`, `TextResourceContents` / `BlobResourceContents`).
///
/// # Errors
/// [`ReplayErrorKind::ContentsDecode`] (the decoder's error, with its byte offset),
/// [`ReplayErrorKind::NoContents`], or [`ReplayErrorKind::ContentsEntry`] for the first rule an
/// entry breaks (entry index, byte offset).
pub fn validate_contents(line: &[u8]) -> Result<(), ReplayError> {
    let m = mcptape_wire::codec::scan_message(line)
        .map_err(|e| ReplayError::new(ReplayErrorKind::ContentsDecode(e)))?;
    if m.contents.is_none() {
        return Err(ReplayError::new(ReplayErrorKind::NoContents));
    }
    for e in &m.entries {
        if let Some((kind, offset)) = e.issues().into_iter().next() {
            return Err(ReplayError::new(ReplayErrorKind::ContentsEntry {
                index: e.index,
                kind,
                offset,
            }));
        }
    }
    Ok(())
}

/// The client: the one MCP client session of `mcptape-transport` (id
/// matching by raw id text, handshake with era fallback, server requests
/// answered, cancellation per transport). `Client::over(r, w)` for a line
/// stream, `Client::http(client, None)` for Streamable HTTP.
pub use mcptape_transport::session::{Outcome, RawAnswer, Session as Client};

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
    /// Wall-clock bound on each phase; a phase stops sending when it passes and drains within
    /// one `timeout_us` after it.
    pub max_phase: Duration,
    /// Requests of one phase in flight at most (1..=[`MAX_IN_FLIGHT`], default
    /// [`DEFAULT_MAX_IN_FLIGHT`]).
    pub max_in_flight: u32,
    /// `--validate`: check each result's `contents` with the fused strict decoder
    /// ([`validate_contents`]) after its latency is taken, timing the check apart
    /// ([`BenchResult::validation`]); a rejected one counts as [`INVALID_CONTENTS_CLASS`].
    /// The check runs on the client's thread: in a closed loop it delays the next send, in
    /// an open loop it may make sends late.
    pub validate: bool,
    /// How an open-loop send waits for its intended time: [`TimerMode::Precise`] (default) on
    /// the process's timer thread (tens of µs; tokio's own timer wakes on 1 ms ticks, and a
    /// send up to 1 ms late would count its lateness as the server's latency, which is
    /// measured from the intended time), [`TimerMode::Virtual`] on tokio's timer for tests on
    /// a paused clock.
    pub pacing: TimerMode,
    /// Methods the single phase replays (`--methods`): `None` every recorded method but the
    /// handshake; [`READS_ONLY`] stands for `resources/read`.
    pub methods: Option<Vec<String>>,
    /// Proportion of each method in the single phase (`--mix`).
    pub mix: Mix,
    /// Which `tools/call` are replayed (`--allow-tool`; a live target).
    pub tools: ToolPolicy,
    /// Live counts of the run for a status line (`bench`'s progress off a terminal), updated
    /// as reads are sent and end; `None`: not kept.
    pub live: Option<Arc<LiveCounts>>,
}

/// The counts of a running bench, readable while it runs ([`BenchConfig::live`]): the phase
/// and its requests sent, answered with a result, and ended otherwise (error answers, timed
/// out, closed). Each phase starts again from 0.
#[derive(Debug, Default)]
pub struct LiveCounts {
    /// 0 before the single phase, 1 single requests, 2 parallel-read turns.
    pub phase: std::sync::atomic::AtomicU8,
    /// Requests sent in this phase.
    pub sent: AtomicU64,
    /// Requests answered with a result.
    pub ok: AtomicU64,
    /// Requests answered with an error, timed out or closed.
    pub errors: AtomicU64,
}

impl LiveCounts {
    /// Phase 1: single requests.
    pub const SINGLE: u8 = 1;
    /// Phase 2: parallel-read turns.
    pub const TURNS: u8 = 2;

    /// Stores `phase` and the counts of `c`.
    fn publish(&self, phase: u8, c: &mcptape_report::stats::PhaseCounters) {
        self.phase.store(phase, Ordering::Relaxed);
        self.sent.store(c.sent, Ordering::Relaxed);
        self.ok.store(c.answered_ok, Ordering::Relaxed);
        self.errors.store(
            c.error_answers_total() + c.timed_out + c.closed,
            Ordering::Relaxed,
        );
    }
}

impl Default for BenchConfig {
    /// 300 reads, 300 turns of 4, deadline 800 ms, timeout 5 s, closed loop of 1, 25 s phases,
    /// [`DEFAULT_MAX_IN_FLIGHT`]: the defaults of `mcptape bench`.
    fn default() -> Self {
        BenchConfig {
            reads: 300,
            turns: 300,
            parallel: 4,
            deadline_us: 800_000,
            timeout_us: 5_000_000,
            load: Load::Closed { concurrency: 1 },
            max_phase: Duration::from_secs(25),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            validate: false,
            pacing: TimerMode::Precise,
            methods: None,
            mix: Mix::Recorded,
            tools: ToolPolicy::All,
            live: None,
        }
    }
}

impl From<&BenchConfig> for RunSettings {
    /// The settings of `cfg` a report states (`max_phase` in whole ms).
    fn from(cfg: &BenchConfig) -> RunSettings {
        RunSettings {
            turns: cfg.turns,
            parallel: cfg.parallel,
            deadline_us: cfg.deadline_us,
            timeout_us: cfg.timeout_us,
            load: cfg.load,
            max_phase_ms: cfg.max_phase.as_millis() as u64,
            max_in_flight: cfg.max_in_flight,
            validate: cfg.validate,
        }
    }
}

/// The settings of `mcptape bench`, as typed.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchSettings<'a> {
    /// Single reads to send (`--reads`).
    pub reads: u64,
    /// Parallel-read turns to run (`--turns`).
    pub turns: u64,
    /// Reads per turn (`--parallel`), 1..=[`MAX_PARALLEL`].
    pub parallel: u32,
    /// Closed loop: reads in flight (`--concurrency`), 1..=[`MAX_PARALLEL`]; ignored with a rate.
    pub concurrency: u32,
    /// Open loop: reads per second (`--rate`, e.g. `200/s`).
    pub rate: Option<&'a str>,
    /// Turn deadline (`--deadline`), > 0, at most [`MAX_DELAY_US`].
    pub deadline: &'a str,
    /// Per-read timeout (`--timeout`), > 0, at most [`MAX_DELAY_US`], not below the deadline.
    pub timeout: &'a str,
    /// Wall-clock bound of each phase (`--max-phase`), > 0, at most [`MAX_PHASE_US`].
    pub max_phase: &'a str,
    /// Requests of a phase in flight at most (`--max-in-flight`), 1..=[`MAX_IN_FLIGHT`]
    /// (default [`mcptape_report::run::DEFAULT_MAX_IN_FLIGHT`]).
    pub max_in_flight: u32,
    /// Check each result's contents with the fused strict decoder (`--validate`), timed apart.
    pub validate: bool,
}

impl BenchSettings<'_> {
    /// Parses and checks the settings into the [`BenchConfig`] of a run.
    ///
    /// # Errors
    /// The first rule broken, in the order: durations parse, rate parses, deadline > 0,
    /// timeout > 0, timeout ≥ deadline, max-phase > 0, reads or turns > 0, parallel and
    /// concurrency in range (see [`ConfigErrorKind`]).
    pub fn validate(&self) -> Result<BenchConfig, ConfigError> {
        let deadline_us = duration_us("--deadline", self.deadline, MAX_DELAY_US)?;
        let timeout_us = duration_us("--timeout", self.timeout, MAX_DELAY_US)?;
        let load = match self.rate {
            Some(r) => Load::Open {
                per_s: parse_rate(r)?,
            },
            None => Load::Closed {
                concurrency: self.concurrency,
            },
        };
        let max_phase_us = duration_us("--max-phase", self.max_phase, MAX_PHASE_US)?;
        if deadline_us == 0 {
            return Err(ConfigError::new(
                "--deadline",
                self.deadline,
                ConfigErrorKind::ZeroDeadline,
            ));
        }
        if timeout_us == 0 {
            return Err(ConfigError::new(
                "--timeout",
                self.timeout,
                ConfigErrorKind::ZeroTimeout,
            ));
        }
        if timeout_us < deadline_us {
            return Err(ConfigError::new(
                "--timeout",
                self.timeout,
                ConfigErrorKind::TimeoutBelowDeadline(self.deadline.to_owned()),
            ));
        }
        if max_phase_us == 0 {
            return Err(ConfigError::new(
                "--max-phase",
                self.max_phase,
                ConfigErrorKind::ZeroMaxPhase,
            ));
        }
        if self.reads == 0 && self.turns == 0 {
            return Err(ConfigError::new(
                "--reads",
                "0",
                ConfigErrorKind::NothingToMeasure,
            ));
        }
        for (flag, value, max, kind) in [
            (
                "--parallel",
                self.parallel,
                MAX_PARALLEL,
                ConfigErrorKind::ParallelOutOfRange,
            ),
            (
                "--max-in-flight",
                self.max_in_flight,
                MAX_IN_FLIGHT,
                ConfigErrorKind::MaxInFlightOutOfRange,
            ),
            (
                "--concurrency",
                self.concurrency,
                MAX_PARALLEL,
                ConfigErrorKind::ConcurrencyOutOfRange,
            ),
        ] {
            if !(1..=max).contains(&value) {
                return Err(ConfigError::new(flag, value.to_string(), kind));
            }
        }
        Ok(BenchConfig {
            reads: self.reads,
            turns: self.turns,
            parallel: self.parallel,
            deadline_us,
            timeout_us,
            load,
            max_phase: Duration::from_micros(max_phase_us),
            max_in_flight: self.max_in_flight,
            validate: self.validate,
            ..BenchConfig::default()
        })
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
            .map_or_else(fallback_initialize_params, |r| Value::clone(&r.params))
    };
    let plan = match hs.method.as_str() {
        method::SERVER_DISCOVER => Handshake {
            discover: Some(Value::clone(&hs.params)),
            version: None,
            initialize: recorded_initialize(),
            timeout,
        },
        method::INITIALIZE => Handshake {
            discover: None,
            version: None,
            initialize: Value::clone(&hs.params),
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The class label kept for `class` in `map`: itself, or [`OTHER_CLASSES`] once
/// [`MAX_ERROR_CLASSES`] other classes are kept.
fn bounded_class<V>(map: &BTreeMap<String, V>, class: String) -> String {
    if map.contains_key(&class) || map.len() < MAX_ERROR_CLASSES {
        class
    } else {
        OTHER_CLASSES.to_owned()
    }
}

/// How a read ended, for the counters.
enum Ended {
    Ok,
    /// An answer that is not a result (a JSON-RPC error, an HTTP error status...), by class.
    Error(String),
    /// The connection closed: not a latency.
    Closed,
}

/// Whether `o` is the error answer the recording holds: the read's recording is an error
/// answer with code `recorded_code` and `o` is a JSON-RPC error with that code.
fn answered_as_recorded(o: &Outcome, recorded_code: Option<i64>) -> bool {
    matches!((o, recorded_code), (Outcome::Error(e), Some(c)) if e.code == c)
}

fn ended(o: &Outcome) -> Ended {
    match o {
        Outcome::Ok => Ended::Ok,
        Outcome::Error(e) => Ended::Error(error_class(e)),
        Outcome::Closed => Ended::Closed,
        Outcome::Http { status, .. } => Ended::Error(format!("http-{status}")),
        Outcome::Dropped(_) => Ended::Error("connection-dropped".into()),
        Outcome::InputRequired(_) => Ended::Error("input-required".into()),
    }
}

/// [`validate_contents`] of `line`: accepted or not, and how long the check took, µs (wall
/// clock, ≥ 1).
fn timed_validation(line: &[u8]) -> (bool, u64) {
    let t = std::time::Instant::now();
    let ok = validate_contents(line).is_ok();
    (ok, (t.elapsed().as_micros() as u64).max(1))
}

fn count_class(map: &mut BTreeMap<String, u64>, class: String) {
    let class = bounded_class(map, class);
    *map.entry(class).or_insert(0) += 1;
}

/// What the single-read phase accumulates (shared by its concurrent reads).
struct SingleAcc {
    all: Histogram<u64>,
    ok: Histogram<u64>,
    by_class: BTreeMap<String, Histogram<u64>>,
    censored_from: Option<u64>,
    counters: mcptape_report::stats::PhaseCounters,
    abandoned_after: Vec<u64>,
    in_flight: u64,
    validation: Histogram<u64>,
    by_method: BTreeMap<String, KeyStats>,
    by_key: BTreeMap<String, BTreeMap<String, KeyStats>>,
    live: Option<Arc<LiveCounts>>,
    /// The phase over time, from [`t0`](Self::t0).
    series: mcptape_report::series::PhaseSeries,
    /// When the phase began.
    t0: Instant,
}

impl SingleAcc {
    fn new() -> Self {
        SingleAcc {
            validation: new_hist(),
            all: new_hist(),
            ok: new_hist(),
            by_class: BTreeMap::new(),
            censored_from: None,
            counters: Default::default(),
            abandoned_after: Vec::new(),
            in_flight: 0,
            by_method: BTreeMap::new(),
            by_key: BTreeMap::new(),
            live: None,
            series: Default::default(),
            t0: Instant::now(),
        }
    }

    /// µs since the phase began.
    fn at(&self) -> u64 {
        self.t0.elapsed().as_micros() as u64
    }

    /// Publishes the counters to [`BenchConfig::live`], if kept.
    fn publish(&self) {
        if let Some(l) = &self.live {
            l.publish(LiveCounts::SINGLE, &self.counters);
        }
    }

    /// Applies `f` to the stats of `p`'s method and of its key.
    fn note(&mut self, p: &Planned, f: impl Fn(&mut KeyStats)) {
        let m = if self.by_method.contains_key(&p.method) || self.by_method.len() < MAX_METHODS {
            p.method.as_str()
        } else {
            OTHER_KEYS
        };
        f(mcptape_report::run::key_stats(
            &mut self.by_method,
            m,
            MAX_METHODS,
        ));
        if let Some(k) = &p.key {
            if !self.by_key.contains_key(m) {
                self.by_key.insert(m.to_owned(), BTreeMap::new());
            }
            let keys = self.by_key.get_mut(m).expect("inserted above");
            f(mcptape_report::run::key_stats(keys, k, MAX_KEYS_PER_METHOD));
        }
    }

    fn record_class(&mut self, class: String, us: u64) {
        let class = bounded_class(&self.by_class, class);
        self.by_class
            .entry(class)
            .or_insert_with(new_hist)
            .saturating_record(us);
    }
}

/// Smallest largest-recorded-read (bytes) for which [`warm_receive_buffer`] prepares a
/// receive buffer: 1 MiB (below it, fresh pages cost little).
pub const WARM_BUFFER_MIN_BYTES: usize = 1 << 20;

/// Prepares the receive buffer of a line-stream session before the timed phases: a buffer as
/// large as the largest recorded `resources/read` reply of `tape` (+ 1 for its line end, at
/// most [`mcptape_transport::session::SESSION_MAX_LINE_BYTES`]), every page written once,
/// handed to the session ([`Client::recycle`]). The first long reply then lands in warm pages
/// as the later ones do (they reuse the buffer), instead of faulting in ~40,000 fresh pages
/// for 160 MB inside its measured latency. No extra memory in the run: it is the buffer the
/// replies are read into. Returns the bytes prepared: 0 when the largest recorded read is
/// under [`WARM_BUFFER_MIN_BYTES`]. Over Streamable HTTP the session drops the buffer: call it
/// for line streams only.
pub fn warm_receive_buffer(client: &Client, tape: &Tape) -> usize {
    let largest = tape
        .exchanges
        .iter()
        .filter(|e| tape.request(e).method == method::RESOURCES_READ)
        .map(|e| e.reply_bytes)
        .max()
        .unwrap_or(0);
    if largest < WARM_BUFFER_MIN_BYTES {
        return 0;
    }
    let n = (largest + 1).min(mcptape_transport::session::SESSION_MAX_LINE_BYTES + 1);
    #[expect(
        clippy::slow_vector_initialization,
        reason = "the point is writing every page; `vec![0; n]` maps untouched zero pages"
    )]
    let mut buf = {
        let mut b = Vec::with_capacity(n);
        b.resize(n, 0u8);
        b
    };
    buf.clear();
    client.recycle(buf);
    n
}

/// Sends one single read now; counts it sent and in flight. The send time is taken before
/// the request is queued: taken after, a thread preempted between the two (a loaded 2-core
/// machine) measured a 1 ms reply as 2 µs.
fn begin_read(
    client: &Client,
    acc: &Mutex<SingleAcc>,
    p: &Planned,
    validate: bool,
) -> (u64, tokio::sync::oneshot::Receiver<RawAnswer>, Instant) {
    // The reply's outcome from its envelope alone: no body parse on the hot path; its bytes
    // kept only to validate them (reads only: `contents` is a read's).
    let validate = validate && p.method == method::RESOURCES_READ;
    let sent_at = Instant::now();
    let (id, rx) = client.request_raw(&p.method, &p.params, validate);
    let mut a = lock(acc);
    a.note(p, |k| k.sent += 1);
    a.counters.sent += 1;
    let at = a.at();
    a.series.sent(at, 1);
    a.in_flight += 1;
    a.counters.max_in_flight = a.counters.max_in_flight.max(a.in_flight);
    a.publish();
    (id, rx, sent_at)
}

/// Waits for the answer of a single read sent at `sent_at` (intended at `intended`) up to
/// `timeout`, and records it: a result or an error answer at its latency from `intended`; no
/// answer in time at the latency when it was given up (≥ the timeout: censored), cancelled and
/// abandoned.
#[allow(clippy::too_many_arguments)]
async fn finish_read(
    client: Arc<Client>,
    acc: Arc<Mutex<SingleAcc>>,
    id: u64,
    rx: tokio::sync::oneshot::Receiver<RawAnswer>,
    sent_at: Instant,
    intended: Instant,
    timeout: Duration,
    validate: bool,
    p: &Planned,
) {
    let validate = validate && p.method == method::RESOURCES_READ;
    let recorded_code = p.recorded_code;
    let r = tokio::time::timeout_at(sent_at + timeout, rx).await;
    let us = (intended.elapsed().as_micros() as u64).max(1);
    // After the latency is taken, off the lock.
    let checked = match &r {
        Ok(Ok(a)) if validate && a.outcome == Outcome::Ok => Some(timed_validation(&a.line)),
        _ => None,
    };
    let mut a = lock(&acc);
    a.in_flight -= 1;
    if let Some((_, v_us)) = &checked {
        a.validation.saturating_record(*v_us);
    }
    // The reply's buffer goes back to the session (the next long reply is read into it).
    let mut recorded_error = false;
    let ended_as = match r {
        Ok(Ok(x)) => {
            if answered_as_recorded(&x.outcome, recorded_code) {
                a.counters.errors_as_recorded += 1;
                recorded_error = true;
            }
            // A result where an error was recorded, or the other way round, or another code
            // (a tool call whose recorded arguments carry an id of an earlier session): counted
            // per method, not hidden.
            let as_recorded = match (&x.outcome, recorded_code) {
                (Outcome::Ok, None) => true,
                (o, Some(_)) => answered_as_recorded(o, recorded_code),
                _ => false,
            };
            if !as_recorded && x.outcome != Outcome::Closed && p.recorded {
                a.note(p, |k| k.not_as_recorded += 1);
            }
            client.recycle(x.line);
            Ok(Ok(match (ended(&x.outcome), &checked) {
                (Ended::Ok, Some((false, _))) => Ended::Error(INVALID_CONTENTS_CLASS.to_owned()),
                (e, _) => e,
            }))
        }
        Ok(Err(_)) => Ok(Err(())),
        Err(_) => Err(()),
    };
    match ended_as {
        // An answer (a result or an error) to a request the recording has no answer to: its
        // own class, compared with nothing (neither answered ok nor an error answer), so the
        // phase's counts stay a partition of `sent`.
        Ok(Ok(Ended::Ok)) if !p.recorded => {
            a.counters.no_recorded_answer += 1;
            let at = a.at();
            a.series.ok(at, us);
            a.publish();
            a.all.saturating_record(us);
            a.note(p, |k| {
                k.no_recorded_answer += 1;
                k.all.saturating_record(us);
            });
        }
        Ok(Ok(Ended::Error(class))) if !p.recorded => {
            a.counters.no_recorded_answer += 1;
            let kept = bounded_class(&a.counters.error_answers, class);
            let at = a.at();
            a.series.error_without_recorded_answer(at, &kept, us);
            a.publish();
            a.all.saturating_record(us);
            a.note(p, |k| {
                k.no_recorded_answer += 1;
                k.all.saturating_record(us);
            });
        }
        Ok(Ok(Ended::Ok)) => {
            a.counters.answered_ok += 1;
            let at = a.at();
            a.series.ok(at, us);
            a.publish();
            a.all.saturating_record(us);
            a.ok.saturating_record(us);
            a.note(p, |k| {
                k.ok += 1;
                k.all.saturating_record(us);
            });
        }
        Ok(Ok(Ended::Error(class))) => {
            // The label the counters keep (bounded), so the series adds up to them.
            let kept = bounded_class(&a.counters.error_answers, class.clone());
            let at = a.at();
            a.series.error(at, &kept, us, recorded_error);
            count_class(&mut a.counters.error_answers, class.clone());
            a.publish();
            a.all.saturating_record(us);
            a.note(p, |k| {
                count_class(&mut k.errors, class.clone());
                k.all.saturating_record(us);
            });
            a.record_class(class, us);
        }
        // A closed connection is not a latency.
        Ok(Ok(Ended::Closed)) | Ok(Err(_)) => {
            a.counters.closed += 1;
            let at = a.at();
            a.series.closed(at);
            a.publish();
            a.note(p, |k| k.closed += 1);
        }

        Err(_) => {
            a.note(p, |k| {
                count_class(&mut k.errors, TIMEOUT_CLASS.to_owned());
                k.all.saturating_record(us);
            });
            a.counters.timed_out += 1;
            let at = a.at();
            a.series.timeout(at, us);
            a.publish();
            a.all.saturating_record(us);
            a.record_class(TIMEOUT_CLASS.to_owned(), us);
            a.censored_from = Some(a.censored_from.map_or(us, |c| c.min(us)));
            drop(a);
            let cancelled = client.cancel(id, "mcptape bench: timeout");
            let never = cancelled && client.abandon(id);
            let mut a = lock(&acc);
            if cancelled {
                a.counters.cancellations_sent += 1;
                if never {
                    a.counters.abandoned += 1;
                    if a.abandoned_after.len() < MAX_ABANDONED_SAMPLES {
                        a.abandoned_after.push(sent_at.elapsed().as_micros() as u64);
                    }
                } else {
                    a.counters.late_responses += 1;
                }
            }
        }
    }
}

/// [`run_until`] with no interruption.
///
/// # Errors
/// See [`run_until`].
pub async fn run(
    client: Arc<Client>,
    tape: &Tape,
    cfg: &BenchConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<BenchResult, ReplayError> {
    run_until(client, tape, cfg, progress, std::future::pending()).await
}

/// Runs the single-read phase, drains it, then the turn phase, against an open session.
/// `progress` is told of each finished read or turn. When `stop` resolves (SIGINT), the
/// running phase is dropped where it is and the result so far is returned with
/// [`BenchResult::partial`] set.
///
/// Bounds: each phase stops sending at `cfg.max_phase` and has drained one `cfg.timeout_us`
/// after it at the latest (every read is bounded by the timeout); at most
/// `cfg.max_in_flight` requests of a phase are in flight at once.
///
/// # Errors
/// [`ReplayErrorKind::NoRequests`] when [`plan`] leaves nothing to send,
/// [`ReplayErrorKind::ParallelOutOfRange`] unless 1 ≤ `parallel` ≤ [`MAX_PARALLEL`].
pub async fn run_until(
    client: Arc<Client>,
    tape: &Tape,
    cfg: &BenchConfig,
    progress: &(dyn Fn(u64) + Sync),
    stop: impl std::future::Future<Output = ()>,
) -> Result<BenchResult, ReplayError> {
    let plan = plan(tape, cfg.methods.as_deref(), &cfg.mix, &cfg.tools)?;
    // The parallel-read turns stay `resources/read` (none recorded: no turns).
    let reads = Arc::new(tape.reads());
    // Of each read: whether the recording answered it, and its recorded JSON-RPC error code
    // (`None` for a recorded result).
    let recorded_codes: Arc<Vec<(bool, Option<i64>)>> = Arc::new(
        reads
            .iter()
            .map(|p| recorded_answer(tape, method::RESOURCES_READ, p))
            .collect(),
    );
    if cfg.parallel == 0 || cfg.parallel > MAX_PARALLEL {
        return Err(ReplayError::new(ReplayErrorKind::ParallelOutOfRange(
            cfg.parallel,
        )));
    }
    let cap = cfg.max_in_flight.clamp(1, MAX_IN_FLIGHT) as usize;
    let mut stop = std::pin::pin!(stop);
    let mut res = BenchResult::new();
    let timeout = Duration::from_micros(cfg.timeout_us);
    let acc = Arc::new(Mutex::new(SingleAcc {
        live: cfg.live.clone(),
        ..SingleAcc::new()
    }));

    res.recorded_reads = tape
        .exchanges
        .iter()
        .filter(|e| tape.request(e).method == method::RESOURCES_READ)
        .count() as u64;
    res.recorded_read_errors = tape
        .exchanges
        .iter()
        .filter(|e| tape.request(e).method == method::RESOURCES_READ && e.error_code.is_some())
        .count() as u64;

    // Phase 1: single reads.
    let n_reads = cfg.reads.min(MAX_COUNT);
    res.reads_asked = n_reads;
    // No recorded read: no parallel-read turn to run (said in the report's warnings).
    res.turns_asked = if reads.is_empty() {
        0
    } else {
        cfg.turns.min(MAX_COUNT)
    };
    let mut cut = false;
    let mut rate = None;
    let start = Instant::now();
    lock(&acc).t0 = start;
    let stop_at = start + cfg.max_phase;
    let phase1 = async {
        match cfg.load {
            Load::Closed { concurrency } => {
                let next = AtomicU64::new(0);
                let cut = std::sync::atomic::AtomicBool::new(false);
                let mut workers = FuturesUnordered::new();
                for _ in 0..concurrency.clamp(1, cap as u32) {
                    workers.push(async {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= n_reads || client.is_closed() {
                                break;
                            }
                            if Instant::now() >= stop_at {
                                cut.store(true, Ordering::Relaxed);
                                break;
                            }
                            let Some(p) = plan.pick(i) else { break };
                            let (id, rx, sent_at) = begin_read(&client, &acc, p, cfg.validate);
                            finish_read(
                                client.clone(),
                                acc.clone(),
                                id,
                                rx,
                                sent_at,
                                sent_at,
                                timeout,
                                cfg.validate,
                                p,
                            )
                            .await;
                            progress(1);
                        }
                    });
                }
                while workers.next().await.is_some() {}
                (cut.load(Ordering::Relaxed), None)
            }
            Load::Open { per_s } => {
                let period = Duration::from_secs_f64(1.0 / per_s.max(1e-3));
                let mut inflight = FuturesUnordered::new();
                let (mut cut, mut sent, mut sent_late) = (false, 0u64, 0u64);
                let mut last_send = start;
                'sends: for i in 0..n_reads {
                    let intended = start + period.mul_f64(i as f64);
                    if client.is_closed() {
                        break;
                    }
                    if intended >= stop_at || Instant::now() >= stop_at {
                        cut = true;
                        break;
                    }
                    // Wait for the send time and a free slot, reaping finished reads.
                    loop {
                        let due = Instant::now() >= intended;
                        if due && inflight.len() < cap {
                            break;
                        }
                        tokio::select! {
                            () = sleep_until_precise(intended, cfg.pacing), if !due => {}
                            Some(()) = inflight.next(), if !inflight.is_empty() => progress(1),
                            () = tokio::time::sleep_until(stop_at) => {
                                cut = true;
                                break 'sends;
                            }
                        }
                    }
                    let Some(p) = plan.pick(i) else { break };
                    let (id, rx, sent_at) = begin_read(&client, &acc, p, cfg.validate);
                    sent += 1;
                    last_send = sent_at;
                    if (sent_at - intended).as_micros() as u64 > LATE_SEND_US {
                        sent_late += 1;
                    }
                    inflight.push(finish_read(
                        client.clone(),
                        acc.clone(),
                        id,
                        rx,
                        sent_at,
                        intended,
                        timeout,
                        cfg.validate,
                        p,
                    ));
                    // Poll the new read and reap those done, without waiting.
                    while let Some(Some(())) = futures::FutureExt::now_or_never(inflight.next()) {
                        progress(1);
                    }
                }
                while inflight.next().await.is_some() {
                    progress(1);
                }
                let scheduled = if cut {
                    let in_window = (cfg.max_phase.as_secs_f64() * per_s).ceil() as u64;
                    in_window.min(n_reads).max(sent)
                } else {
                    sent
                };
                let window = (last_send - start + period).as_secs_f64();
                let dropped = scheduled - sent;
                let r = mcptape_report::stats::SendRate {
                    asked_per_s: per_s,
                    achieved_per_s: if sent > 0 { sent as f64 / window } else { 0.0 },
                    scheduled,
                    sent,
                    sent_late,
                    dropped,
                    late_or_dropped_share: if scheduled > 0 {
                        (sent_late + dropped) as f64 / scheduled as f64
                    } else {
                        0.0
                    },
                };
                (cut, Some(r))
            }
        }
    };
    let interrupted = tokio::select! {
        biased;
        () = &mut stop => true,
        (c, r) = phase1 => {
            cut = c;
            rate = r;
            false
        }
    };
    res.partial = interrupted;
    res.single_elapsed_s = start.elapsed().as_secs_f64();
    res.single_cut = cut;
    res.send_rate = rate;
    {
        let mut a = lock(&acc);
        res.single = std::mem::replace(&mut a.all, new_hist());
        res.single_ok = std::mem::replace(&mut a.ok, new_hist());
        res.single_by_class = std::mem::take(&mut a.by_class);
        res.single_censored_from_us = a.censored_from;
        res.single_phase = std::mem::take(&mut a.counters);
        res.abandoned_after_us = std::mem::take(&mut a.abandoned_after);
        res.validation = std::mem::replace(&mut a.validation, new_hist());
        res.by_method = std::mem::take(&mut a.by_method);
        res.by_key = std::mem::take(&mut a.by_key);
        res.single_series = std::mem::take(&mut a.series);
        res.single_series
            .extend_to((res.single_elapsed_s * 1e6) as u64);
    }
    res.skipped_tools = plan.skipped_tools.clone();
    res.mix = cfg.mix.label();
    res.reads_sent = res.single_phase.sent;
    res.single_window_s = match cfg.load {
        Load::Closed { .. } => res.single_elapsed_s,
        // Open loop: `start` is the first intended send; n sends at rate R
        // take n / R to offer, whatever the last latency.
        Load::Open { per_s } => res
            .single_elapsed_s
            .max(res.reads_sent as f64 / per_s.max(1e-3)),
    };

    // Phase 2: parallel-read turns (the single-read phase is drained: no shared backlog).
    let start2 = Instant::now();
    if !res.partial && !reads.is_empty() {
        let interrupted = tokio::select! {
            biased;
            () = &mut stop => true,
            () = turn_phase(&client, &reads, &recorded_codes, cfg, cap, start2, &mut res, progress) => false,
        };
        res.partial = interrupted;
    }
    res.turn_elapsed_s = start2.elapsed().as_secs_f64();
    if res.turns > 0 {
        res.turn_series.extend_to((res.turn_elapsed_s * 1e6) as u64);
    }

    // Totals over both phases.
    let (s, t) = (&res.single_phase, &res.turn_phase);
    let mut errors = BTreeMap::new();
    for (k, v) in s.error_answers.iter().chain(&t.error_answers) {
        *errors.entry(k.clone()).or_insert(0) += v;
    }
    if s.timed_out + t.abandoned > 0 {
        errors.insert(TIMEOUT_CLASS.to_owned(), s.timed_out + t.abandoned);
    }
    if s.closed + t.closed > 0 {
        errors.insert("closed".to_owned(), s.closed + t.closed);
    }
    res.cancellations = s.cancellations_sent + t.cancellations_sent;
    res.late_responses = s.late_responses + t.late_responses;
    res.cancellation = client.cancellation().as_str();
    res.input_rounds = client.input_rounds();
    res.abandoned = s.abandoned + t.abandoned;
    res.errors = errors;
    res.unexpected = client.unexpected();
    res.expected_error_answers = s.errors_as_recorded + t.errors_as_recorded;
    for (class, n) in [
        (NOISE_CLASS, client.noise_lines()),
        (TOO_LONG_CLASS, client.too_long_lines()),
    ] {
        if n > 0 {
            res.errors.insert(class.into(), n);
        }
    }
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

/// The turn phase: `cfg.turns` turns of `cfg.parallel` reads, each ending when all answered or
/// at the deadline (stragglers cancelled, then abandoned at the timeout). Stops starting turns
/// at `cfg.max_phase` after `start`; keeps at most `cap` reads (with the cancelled stragglers
/// still awaited) in flight; returns once every straggler is settled (≤ one timeout after the
/// last turn).
#[allow(clippy::too_many_arguments)]
async fn turn_phase(
    client: &Arc<Client>,
    reads: &[Value],
    recorded_codes: &[(bool, Option<i64>)],
    cfg: &BenchConfig,
    cap: usize,
    start: Instant,
    res: &mut BenchResult,
    progress: &(dyn Fn(u64) + Sync),
) {
    let deadline = Duration::from_micros(cfg.deadline_us);
    let timeout = Duration::from_micros(cfg.timeout_us);
    let parallel = cfg.parallel as usize;
    let stop2 = start + cfg.max_phase;
    // Settled stragglers: Some(true) abandoned, Some(false) answered late.
    let mut background = FuturesUnordered::new();
    let settle = |res: &mut BenchResult, abandoned: Option<(bool, u64)>| {
        if let Some((never, after_us)) = abandoned {
            if never {
                res.turn_phase.abandoned += 1;
                if res.abandoned_after_us.len() < MAX_ABANDONED_SAMPLES {
                    res.abandoned_after_us.push(after_us);
                }
            } else {
                res.turn_phase.late_responses += 1;
            }
        }
    };
    let mut k = 0usize;
    for _ in 0..cfg.turns.min(MAX_COUNT) {
        if client.is_closed() {
            break;
        }
        // Keep the stragglers still awaited plus this turn under the in-flight cap.
        while background.len() + parallel > cap {
            match background.next().await {
                Some(r) => settle(res, r),
                None => break,
            }
        }
        if Instant::now() >= stop2 {
            res.turns_cut = true;
            break;
        }
        let t0 = Instant::now();
        let mut waiting = FuturesUnordered::new();
        let mut open_ids = Vec::with_capacity(parallel);
        for _ in 0..parallel {
            let j = k % reads.len();
            k += 1;
            let (id, rx) = client.request_raw(method::RESOURCES_READ, &reads[j], cfg.validate);
            open_ids.push(id);
            let (recorded, code) = recorded_codes[j];
            waiting.push(async move { (id, (recorded, code), rx.await) });
        }
        res.turn_phase.sent += parallel as u64;
        let since = |t: Instant| (t - start).as_micros() as u64;
        res.turn_series.sent(since(t0), parallel as u64);
        res.turn_phase.max_in_flight = res
            .turn_phase
            .max_in_flight
            .max((parallel + background.len()) as u64);
        let turn_deadline = t0 + deadline;
        let mut answered = Vec::new();
        // `--validate`: results checked once the turn is over (checking inside it would delay
        // the answers still arriving), with their latency.
        let mut to_check: Vec<(u64, Vec<u8>)> = Vec::new();
        loop {
            tokio::select! {
                biased;
                r = waiting.next() => match r {
                    Some((id, (recorded, code), out)) => {
                        answered.push(id);
                        let us = (t0.elapsed().as_micros() as u64).max(1);
                        let at = since(Instant::now());
                        let c = &mut res.turn_phase;
                        let recorded_error =
                            matches!(&out, Ok(a) if answered_as_recorded(&a.outcome, code));
                        if recorded_error {
                            c.errors_as_recorded += 1;
                        }
                        match out.map(|a| (ended(&a.outcome), a.line)) {
                            // No recorded answer: its own class (see `finish_read`).
                            Ok((Ended::Ok, line)) if !recorded => {
                                client.recycle(line);
                                c.no_recorded_answer += 1;
                                res.turn_series.ok(at, us);
                                res.turn_reads.saturating_record(us);
                            }
                            Ok((Ended::Error(class), _)) if !recorded => {
                                c.no_recorded_answer += 1;
                                let kept = bounded_class(&c.error_answers, class);
                                res.turn_series.error_without_recorded_answer(at, &kept, us);
                                res.turn_reads.saturating_record(us);
                            }
                            Ok((Ended::Ok, line)) if cfg.validate => to_check.push((us, line)),
                            Ok((Ended::Ok, _)) => {
                                c.answered_ok += 1;
                                res.turn_series.ok(at, us);
                                res.turn_reads.saturating_record(us);
                                res.turn_reads_ok.saturating_record(us);
                            }
                            Ok((Ended::Error(class), _)) => {
                                let kept = bounded_class(&c.error_answers, class.clone());
                                res.turn_series.error(at, &kept, us, recorded_error);
                                count_class(&mut c.error_answers, class);
                                res.turn_reads.saturating_record(us);
                            }
                            Ok((Ended::Closed, _)) | Err(_) => {
                                c.closed += 1;
                                res.turn_series.closed(at);
                            }
                        }
                    }
                    None => break,
                },
                () = tokio::time::sleep_until(turn_deadline) => break,
            }
        }
        let took = t0.elapsed().min(deadline);
        for (us, line) in to_check.drain(..) {
            let (ok, v_us) = timed_validation(&line);
            client.recycle(line);
            res.validation.saturating_record(v_us);
            let c = &mut res.turn_phase;
            let at = since(Instant::now());
            res.turn_reads.saturating_record(us);
            if ok {
                c.answered_ok += 1;
                res.turn_series.ok(at, us);
                res.turn_reads_ok.saturating_record(us);
            } else {
                let class = INVALID_CONTENTS_CLASS.to_owned();
                let kept = bounded_class(&c.error_answers, class.clone());
                res.turn_series.error(at, &kept, us, false);
                count_class(&mut c.error_answers, class);
            }
        }
        if client.is_closed() {
            break; // the target went away mid-turn: no turn time to report
        }
        res.turn.saturating_record((took.as_micros() as u64).max(1));
        res.turns += 1;
        let stragglers: Vec<u64> = open_ids
            .into_iter()
            .filter(|id| !answered.contains(id))
            .collect();
        if !stragglers.is_empty() {
            res.turns_hit_deadline += 1;
            for id in stragglers {
                // Not answered by the deadline: censored at it.
                res.turn_phase.timed_out += 1;
                res.turn_series
                    .timeout(since(Instant::now()), cfg.deadline_us.max(1));
                res.turn_reads.saturating_record(cfg.deadline_us.max(1));
                if !client.cancel(id, "mcptape bench: turn deadline") {
                    continue; // answered just at the deadline: nothing to cancel
                }
                res.turn_phase.cancellations_sent += 1;
                let client = client.clone();
                let abandon_at = t0 + timeout;
                background.push(async move {
                    tokio::time::sleep_until(abandon_at).await;
                    Some((client.abandon(id), t0.elapsed().as_micros() as u64))
                });
            }
        }
        drop(waiting);
        // Reap abandon timers that are due without blocking the next turn.
        while let Some(Some(r)) = futures::FutureExt::now_or_never(background.next()) {
            settle(res, r);
        }
        if let Some(l) = &cfg.live {
            l.publish(LiveCounts::TURNS, &res.turn_phase);
        }
        progress(1);
    }
    // Drain (bounded by the timeout): every straggler answered late or abandoned.
    while let Some(r) = background.next().await {
        settle(res, r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcptape_wire::envelope::ErrorObject;

    fn err(code: i64) -> Outcome {
        Outcome::Error(ErrorObject {
            code,
            message: "x".into(),
            data: None,
        })
    }

    fn corpus_tape(name: &str) -> Tape {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/transcripts/");
        let bytes = std::fs::read(format!("{path}{name}")).unwrap();
        Tape::from_transcript(&mcptape_transcript::reader::read(&bytes).unwrap()).unwrap()
    }

    fn methods_of(p: &Plan, n: u64) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for i in 0..n {
            *m.entry(p.pick(i).unwrap().method.clone()).or_insert(0) += 1;
        }
        m
    }

    /// The recorded mix replays every recorded request but the handshake, in recorded order,
    /// cycled, each keyed by its tool / prompt name or URI.
    #[test]
    fn plan_recorded_mix_replays_every_method_in_recorded_order() {
        let tape = corpus_tape("py-tools-stdio-2026-07-28.jsonl");
        let p = plan(&tape, None, &Mix::Recorded, &ToolPolicy::All).unwrap();
        let order: Vec<(&str, Option<&str>)> = p
            .requests
            .iter()
            .map(|r| (r.method.as_str(), r.key.as_deref()))
            .collect();
        assert_eq!(
            order,
            [
                ("resources/list", None),
                ("resources/templates/list", None),
                ("resources/read", Some("mcptape://docs/readme.md")),
                ("resources/read", Some("mcptape://docs/notes.txt")),
                (
                    "resources/read",
                    Some("mcptape://docs/mcptape-does-not-exist")
                ),
                ("tools/list", None),
                ("prompts/list", None),
                ("tools/call", Some("add")),
                ("tools/call", Some("bump")),
                ("tools/call", Some("add")),
                ("prompts/get", Some("review")),
            ]
        );
        assert_eq!(p.pick(11).unwrap().method, "resources/list");
        assert_eq!(p.requests[4].recorded_code, Some(-32602));
        assert!(p.skipped_tools.is_empty());
    }

    /// The plan of `--methods METHOD` alone, the recorded mix, every tool.
    fn plan_of_methods(tape: &Tape, method: &str) -> Result<Plan, ReplayError> {
        plan(
            tape,
            Some(&[method.into()]),
            &Mix::Recorded,
            &ToolPolicy::All,
        )
    }

    /// `reads` is today's behaviour; a weighted mix sends each method in its share (exactly,
    /// per cycle of 1,000) and cycles each method's own requests in order.
    #[test]
    fn plan_reads_only_and_weighted_mix() {
        let tape = corpus_tape("py-tools-stdio-2026-07-28.jsonl");
        let reads = plan_of_methods(&tape, "reads").unwrap();
        assert_eq!(reads.requests.len(), 3);
        assert!(reads.requests.iter().all(|r| r.method == "resources/read"));
        let mix = Mix::parse("tools/call=3,prompts/get=1").unwrap();
        let p = plan(&tape, None, &mix, &ToolPolicy::All).unwrap();
        let counts = methods_of(&p, 2_000);
        assert_eq!(
            counts,
            BTreeMap::from([("prompts/get".into(), 500), ("tools/call".into(), 1_500)])
        );
        let tools: Vec<&str> = (0..8)
            .filter_map(|i| p.pick(i))
            .filter(|r| r.method == "tools/call")
            .map(|r| r.key.as_deref().unwrap())
            .collect();
        assert_eq!(tools, ["add", "bump", "add", "add", "bump", "add"]);
        let uniform = plan(&tape, None, &Mix::Uniform, &ToolPolicy::All).unwrap();
        let counts = methods_of(&uniform, 7_000);
        assert!(counts.values().all(|&n| n == 1_000), "{counts:?}");
        assert_eq!(counts.len(), 7);
        let err = plan_of_methods(&tape, "completion/complete").unwrap_err();
        assert_eq!(
            err.to_string(),
            "completion/complete is not recorded in the transcript (recorded: prompts/get, \
             prompts/list, resources/list, resources/read, resources/templates/list, tools/call, \
             tools/list)"
        );
        let typo = Mix::parse("tools/cal=1").unwrap();
        let err = plan(&tape, None, &typo, &ToolPolicy::All).unwrap_err();
        assert!(
            err.to_string().starts_with("tools/cal is not recorded"),
            "{err}"
        );
    }

    /// A live target gets the tools the recorded `tools/list` marks `readOnlyHint: true`, and
    /// those `--allow-tool` names; the others are listed as skipped.
    #[test]
    fn plan_live_target_calls_read_only_tools_and_allowed_ones_only() {
        let tape = corpus_tape("py-tools-stdio-2026-07-28.jsonl");
        assert_eq!(tape.read_only_tools(), ["add".to_owned()].into());
        let tools = |p: &Plan| -> Vec<String> {
            p.requests
                .iter()
                .filter(|r| r.method == "tools/call")
                .filter_map(|r| r.key.clone())
                .collect()
        };
        let live = plan(
            &tape,
            None,
            &Mix::Recorded,
            &ToolPolicy::ReadOnlyAnd(vec![]),
        )
        .unwrap();
        assert_eq!(tools(&live), ["add", "add"]);
        assert_eq!(live.skipped_tools, ["bump"]);
        for allow in ["bump", "*"] {
            let p = plan(
                &tape,
                None,
                &Mix::Recorded,
                &ToolPolicy::ReadOnlyAnd(vec![allow.into()]),
            )
            .unwrap();
            assert_eq!(tools(&p), ["add", "bump", "add"], "{allow}");
            assert!(p.skipped_tools.is_empty());
        }
        // Only unannotated tools asked for: nothing to send, and the error says why.
        let err = plan(
            &tape,
            Some(&["tools/call".into()]),
            &Mix::Recorded,
            &ToolPolicy::ReadOnlyAnd(vec![]),
        );
        assert!(err.is_ok(), "add is read-only");
        let everything = corpus_tape("everything-tools-stdio.jsonl");
        assert!(everything.read_only_tools().contains("get-sum"));
        assert!(
            !everything
                .read_only_tools()
                .contains("toggle-simulated-logging")
        );
    }

    /// [`MAX_KEYS_PER_METHOD`] names are kept apart; the next one is counted under
    /// [`OTHER_KEYS`], as are the methods past [`MAX_METHODS`].
    #[test]
    fn keys_past_the_limit_are_counted_under_others() {
        let mut acc = SingleAcc::new();
        let call = |name: String| Planned {
            method: "tools/call".into(),
            params: Value::Null,
            key: Some(name),
            recorded_code: None,
            recorded: true,
        };
        for i in 0..MAX_KEYS_PER_METHOD {
            acc.note(&call(format!("t{i}")), |k| k.sent += 1);
        }
        assert_eq!(acc.by_key["tools/call"].len(), MAX_KEYS_PER_METHOD);
        assert!(!acc.by_key["tools/call"].contains_key(OTHER_KEYS));
        acc.note(&call("one-more".into()), |k| k.sent += 1);
        acc.note(&call("t0".into()), |k| k.sent += 1);
        let keys = &acc.by_key["tools/call"];
        assert_eq!(keys.len(), MAX_KEYS_PER_METHOD + 1);
        assert_eq!(keys[OTHER_KEYS].sent, 1);
        assert_eq!(keys["t0"].sent, 2, "a kept name keeps counting");
        assert_eq!(
            acc.by_method["tools/call"].sent,
            MAX_KEYS_PER_METHOD as u64 + 2
        );
        let mut acc = SingleAcc::new();
        for i in 0..=MAX_METHODS {
            let p = Planned {
                method: format!("m/{i}"),
                params: Value::Null,
                key: None,
                recorded_code: None,
                recorded: true,
            };
            acc.note(&p, |k| k.sent += 1);
        }
        assert_eq!(acc.by_method.len(), MAX_METHODS + 1);
        assert_eq!(acc.by_method[OTHER_KEYS].sent, 1);
        assert!(!acc.by_method.contains_key(&format!("m/{MAX_METHODS}")));
    }

    #[test]
    fn mix_parse_refuses_bad_weights_and_too_many_entries() {
        assert_eq!(Mix::parse("recorded").unwrap(), Mix::Recorded);
        assert_eq!(Mix::parse("uniform").unwrap(), Mix::Uniform);
        assert_eq!(
            Mix::parse("tools/call=3, prompts/get=0.5").unwrap(),
            Mix::Weighted(vec![
                ("tools/call".into(), 3.0),
                ("prompts/get".into(), 0.5)
            ])
        );
        for (bad, kind) in [
            ("tools/call", ConfigErrorKind::MixItem(0)),
            ("a=1,=2", ConfigErrorKind::MixItem(1)),
            ("tools/call=0", ConfigErrorKind::MixWeight(0)),
            ("a=1,tools/call=-1", ConfigErrorKind::MixWeight(1)),
            ("tools/call=x", ConfigErrorKind::MixWeight(0)),
            ("a=inf", ConfigErrorKind::MixWeight(0)),
        ] {
            let e = Mix::parse(bad).unwrap_err();
            assert_eq!(e.kind(), &kind, "{bad}");
            assert_eq!((e.flag(), e.value()), ("--mix", bad));
        }
        let at_limit: Vec<String> = (0..MAX_MIX_ENTRIES).map(|i| format!("m{i}=1")).collect();
        assert!(Mix::parse(&at_limit.join(",")).is_ok());
        let past: Vec<String> = (0..=MAX_MIX_ENTRIES).map(|i| format!("m{i}=1")).collect();
        assert_eq!(
            Mix::parse(&past.join(",")).unwrap_err().kind(),
            &ConfigErrorKind::TooManyMethods(MAX_MIX_ENTRIES + 1)
        );
        // --methods: the same limit, no empty item.
        let at_limit: Vec<String> = (0..MAX_MIX_ENTRIES).map(|i| format!("m{i}")).collect();
        assert_eq!(
            parse_methods(&at_limit.join(",")).unwrap().len(),
            MAX_MIX_ENTRIES
        );
        let past: Vec<String> = (0..=MAX_MIX_ENTRIES).map(|i| format!("m{i}")).collect();
        assert_eq!(
            parse_methods(&past.join(",")).unwrap_err().kind(),
            &ConfigErrorKind::TooManyMethods(MAX_MIX_ENTRIES + 1)
        );
        assert_eq!(
            parse_methods("tools/call,").unwrap_err().kind(),
            &ConfigErrorKind::EmptyMethod(1)
        );
        assert_eq!(
            parse_methods("reads, tools/call").unwrap(),
            ["reads", "tools/call"]
        );
    }

    /// Only an error answer with the recorded code, for a read recorded as an error, is
    /// answered as recorded (an injected -32603 on a recorded -32602 is not).
    #[test]
    fn answered_as_recorded_needs_the_recorded_code() {
        assert!(answered_as_recorded(&err(-32602), Some(-32602)));
        assert!(!answered_as_recorded(&err(-32603), Some(-32602)));
        assert!(!answered_as_recorded(&err(-32602), None));
        assert!(!answered_as_recorded(&Outcome::Ok, Some(-32602)));
        assert!(!answered_as_recorded(&Outcome::Closed, Some(-32602)));
    }
}
