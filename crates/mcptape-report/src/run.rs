//! The measured figures of one bench run ([`BenchResult`]: HdrHistograms in µs and counters,
//! per method and per tool / prompt / URI in [`KeyStats`]), the few run settings a report
//! states ([`RunSettings`]), the labels of the error classes ([`error_class`],
//! [`TIMEOUT_CLASS`]…) and the limits that bound the figures. `mcptape-replay`'s bench fills a
//! [`BenchResult`]; `mcptape-export`'s k6 import builds one from k6's output; both turn it into
//! a [`BenchReport`] with [`BenchResult::report`].

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use mcptape_wire::classify::{ReadErrorClass, classify_read_error};
use mcptape_wire::envelope::ErrorObject;
use mcptape_wire::protocol::method;

use crate::stats::{BenchReport, new_hist};

/// The settings of a bench run that its report states or that decide what its figures mean
/// (the censoring bounds, reads per turn). `mcptape-replay`'s `BenchConfig` converts into it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// Parallel-read turns asked for.
    pub turns: u64,
    /// Reads per turn (1..=[`MAX_PARALLEL`]).
    pub parallel: u32,
    /// Turn deadline, µs: the censoring bound of reads inside turns.
    pub deadline_us: u64,
    /// Per-read timeout, µs: the censoring bound of single reads.
    pub timeout_us: u64,
    /// Single-read load.
    pub load: Load,
    /// Wall-clock bound on each phase, ms.
    pub max_phase_ms: u64,
    /// Requests of one phase in flight at most.
    pub max_in_flight: u32,
    /// `--validate`: the contents of each result were checked and the check timed
    /// ([`BenchResult::validation`]).
    pub validate: bool,
}

impl Default for RunSettings {
    /// The defaults of `mcptape bench`: 300 turns of 4, deadline 800 ms, timeout 5 s, closed
    /// loop of 1, 25 s phases, [`DEFAULT_MAX_IN_FLIGHT`], no `--validate`.
    fn default() -> Self {
        RunSettings {
            turns: 300,
            parallel: 4,
            deadline_us: 800_000,
            timeout_us: 5_000_000,
            load: Load::Closed { concurrency: 1 },
            max_phase_ms: 25_000,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            validate: false,
        }
    }
}

/// Largest `--parallel`: 1024 reads per turn.
pub const MAX_PARALLEL: u32 = 1024;
/// Largest number of reads or turns in one run: 10,000,000.
pub const MAX_COUNT: u64 = 10_000_000;

/// Default `--max-in-flight`: at most 1024 requests of a phase awaiting an answer (or, for
/// cancelled turn stragglers, their timeout) at once. An open-loop send finding the cap full
/// waits for a slot and leaves late (its latency still counts from the intended send time).
pub const DEFAULT_MAX_IN_FLIGHT: u32 = 1024;

/// Largest `--max-in-flight`: 65,536 (memory stays bounded: one pending entry per request).
pub const MAX_IN_FLIGHT: u32 = 65_536;

/// An open-loop send leaving more than this after its intended time counts as late
/// ([`crate::stats::SendRate::sent_late`]): 1 ms, in µs.
pub const LATE_SEND_US: u64 = 1_000;

/// Most error classes kept apart in one phase (each with its own latency histogram); further
/// classes (a server inventing codes) are counted under [`OTHER_CLASSES`]: 32.
pub const MAX_ERROR_CLASSES: usize = 32;

/// The class label of error answers beyond [`MAX_ERROR_CLASSES`].
pub const OTHER_CLASSES: &str = "other (more classes)";

/// Most abandonment times kept in [`BenchResult::abandoned_after_us`]: 100,000 (the counters
/// keep counting past it).
pub const MAX_ABANDONED_SAMPLES: usize = 100_000;

/// The class label of reads with no answer within `--timeout` (censored at the timeout).
pub const TIMEOUT_CLASS: &str = "timeout";

/// The class label of reads answered with a result whose `contents` the fused strict decoder
/// rejects (`--validate`, `mcptape_replay::bench::validate_contents`).
pub const INVALID_CONTENTS_CLASS: &str = "invalid contents (--validate)";

/// The class label of lines from a line-stream target that are not one JSON value (a reply cut
/// short or corrupted, a banner on stdout): they answer nothing, so their reads time out.
pub const NOISE_CLASS: &str = "line from the target that is not JSON";

/// The class label of lines from a line-stream target longer than
/// `mcptape_transport::session::SESSION_MAX_LINE_BYTES` (dropped unread).
pub const TOO_LONG_CLASS: &str = "line from the target over the line limit";

/// Most methods kept apart in [`BenchResult::by_method`]: 32; further methods are counted
/// under [`OTHER_KEYS`].
pub const MAX_METHODS: usize = 32;

/// Most tool names / prompt names / URIs kept apart per method in [`BenchResult::by_key`]:
/// 256; further ones are counted under [`OTHER_KEYS`].
pub const MAX_KEYS_PER_METHOD: usize = 256;

/// The label of the methods beyond [`MAX_METHODS`], or of the keys beyond
/// [`MAX_KEYS_PER_METHOD`] of one method.
pub const OTHER_KEYS: &str = "(others)";

/// The stats of `name` in `map`, made while fewer than `cap` names are kept, else those of
/// [`OTHER_KEYS`] (made if missing): a session cannot grow the report past `cap` rows per map
/// ([`MAX_METHODS`], [`MAX_KEYS_PER_METHOD`]). The one accumulator of bench and of a k6 import.
pub fn key_stats<'m>(
    map: &'m mut BTreeMap<String, KeyStats>,
    name: &str,
    cap: usize,
) -> &'m mut KeyStats {
    let name = if map.contains_key(name) || map.len() < cap {
        name
    } else {
        OTHER_KEYS
    };
    map.entry(name.to_owned()).or_default()
}

/// Figures of one method, or of one tool / prompt / URI of a method, in the single phase.
#[derive(Debug, Clone)]
pub struct KeyStats {
    /// Latency of every request answered (result or error) and timed out (censored at the
    /// timeout), µs, from its (intended) first send: `input_required` rounds included.
    pub all: Histogram<u64>,
    /// Requests sent.
    pub sent: u64,
    /// Answered with a result.
    pub ok: u64,
    /// Error answers by class ([`error_class`]), and [`TIMEOUT_CLASS`].
    pub errors: BTreeMap<String, u64>,
    /// Lost with the connection (not a latency).
    pub closed: u64,
    /// Answered otherwise than recorded: an error answer where a result was recorded, a
    /// result where an error was, another error code.
    pub not_as_recorded: u64,
    /// Sent with no recorded answer to compare with (the recording lost or never had it),
    /// whatever the outcome; never in `not_as_recorded`.
    pub no_recorded_answer: u64,
}

impl Default for KeyStats {
    fn default() -> Self {
        Self::new()
    }
}

impl KeyStats {
    /// Empty figures (an empty histogram, every counter 0).
    pub fn new() -> Self {
        KeyStats {
            all: new_hist(),
            sent: 0,
            ok: 0,
            errors: BTreeMap::new(),
            closed: 0,
            not_as_recorded: 0,
            no_recorded_answer: 0,
        }
    }
}

/// Largest `--max-phase` (wall-clock bound of one phase): 1 h, in µs. Longer
/// than `mcptape_replay::latency::MAX_DELAY_US` so a closed-loop run can measure a
/// p99.9 over 10,000+ reads; rejected above (`SpecErrorKind::DelayTooLarge`).
pub const MAX_PHASE_US: u64 = 3_600_000_000;

/// Open- or closed-loop single reads (the two loads there are: exhaustive).
#[derive(Debug, Clone, Copy, PartialEq)]
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

impl Load {
    /// The report's `load` text: `closed-loop, concurrency 1` or `open-loop 200/s, from
    /// intended send time` (the regression gate compares it with a baseline's).
    pub fn text(&self) -> String {
        match *self {
            Load::Closed { concurrency } => format!("closed-loop, concurrency {concurrency}"),
            Load::Open { per_s } => format!("open-loop {per_s}/s, from intended send time"),
        }
    }
}

/// Measured figures of one bench run.
#[derive(Debug)]
pub struct BenchResult {
    /// Latency of every single read, µs: answered with a result or an error, and timed out
    /// (recorded at its timeout: right-censored, see
    /// [`single_censored_from_us`](Self::single_censored_from_us)). Reads lost with the
    /// connection are not in it.
    pub single: Histogram<u64>,
    /// Latency of the single reads answered with a result, µs.
    pub single_ok: Histogram<u64>,
    /// Latency of the single reads by error class ([`error_class`], and [`TIMEOUT_CLASS`]
    /// censored), µs.
    pub single_by_class: BTreeMap<String, Histogram<u64>>,
    /// Smallest latency recorded for a timed-out single read (the censoring bound), µs.
    pub single_censored_from_us: Option<u64>,
    /// Latency of the reads inside turns answered with a result before the deadline, µs.
    pub turn_reads_ok: Histogram<u64>,
    /// Counters of the single-read phase.
    pub single_phase: crate::stats::PhaseCounters,
    /// Counters of the reads inside turns.
    pub turn_phase: crate::stats::PhaseCounters,
    /// Open loop: asked vs achieved send rate, late and dropped sends.
    pub send_rate: Option<crate::stats::SendRate>,
    /// The run was interrupted (`run_until`'s stop resolved): a partial result.
    pub partial: bool,
    /// Turn completion time (all answered, or the deadline), µs.
    pub turn: Histogram<u64>,
    /// `--validate`: time the fused strict decoder took to check each result's `contents`
    /// (both phases), µs; empty without `--validate`.
    pub validation: Histogram<u64>,
    /// Latency of every read inside turns, µs: answered (result or error) before the
    /// deadline, and stragglers recorded at the deadline (censored).
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
    /// How stragglers were cancelled: `"close-stream"` (2026-07-28 Streamable HTTP: the
    /// request's response stream closed, no `notifications/cancelled`) or `"notification"`
    /// (stdio, 2025 session-era HTTP), from `mcptape_replay::bench::Client::cancellation`.
    pub cancellation: &'static str,
    /// `input_required` rounds retried (MCP 2026-07-28 Multi Round-Trip Requests): each read
    /// and its retries count as one read, timed from its first request.
    pub input_rounds: u64,
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
    /// Error answers received in both phases that were answered as recorded: the read's
    /// recording is an error answer (reads are cycled in order: sent read `i` is recorded read
    /// `i mod n`) and the answer carries the recorded JSON-RPC code. An injected fault (another
    /// code), a timeout or a lost read on such a request is not among them. The `errors<N%`
    /// SLO does not count these many.
    pub expected_error_answers: u64,
    /// The single phase by method (at most [`MAX_METHODS`], then [`OTHER_KEYS`]).
    pub by_method: BTreeMap<String, KeyStats>,
    /// The single phase by method, then tool name / prompt name / URI (at most
    /// [`MAX_KEYS_PER_METHOD`] per method, then [`OTHER_KEYS`]).
    pub by_key: BTreeMap<String, BTreeMap<String, KeyStats>>,
    /// Recorded tools not called (`mcptape_replay::bench::ToolPolicy`: a live target, no `readOnlyHint`, not
    /// allowed).
    pub skipped_tools: Vec<String>,
    /// The mix the single phase was sent in (`mcptape_replay::bench::Mix::label`).
    pub mix: String,
    /// The single phase over time ([`crate::series`]); empty when the driver keeps none (a k6
    /// import).
    pub single_series: crate::series::PhaseSeries,
    /// The reads inside turns over time, from the turn phase's start.
    pub turn_series: crate::series::PhaseSeries,
}

impl Default for BenchResult {
    fn default() -> Self {
        Self::new()
    }
}

impl BenchResult {
    /// An empty result (every histogram empty, every counter 0).
    pub fn new() -> Self {
        BenchResult {
            single_ok: new_hist(),
            single_by_class: BTreeMap::new(),
            single_censored_from_us: None,
            turn_reads_ok: new_hist(),
            single_phase: Default::default(),
            turn_phase: Default::default(),
            send_rate: None,
            partial: false,
            single: new_hist(),
            turn: new_hist(),
            validation: new_hist(),
            turn_reads: new_hist(),
            reads_sent: 0,
            single_elapsed_s: 0.0,
            turn_elapsed_s: 0.0,
            turns: 0,
            turns_hit_deadline: 0,
            cancellations: 0,
            cancellation: "notification",
            input_rounds: 0,
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
            expected_error_answers: 0,
            by_method: BTreeMap::new(),
            by_key: BTreeMap::new(),
            skipped_tools: Vec::new(),
            mix: "recorded".into(),
            single_series: Default::default(),
            turn_series: Default::default(),
        }
    }

    /// Warnings about the run: the open loop did not offer its asked rate (more than
    /// [`crate::stats::LATE_OR_DROPPED_WARN`] of the sends left late or were dropped).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(r) = &self.send_rate
            && r.late_or_dropped_share > crate::stats::LATE_OR_DROPPED_WARN
        {
            w.push(format!(
                "asked {:.0}/s, achieved {:.0}/s: {:.1}% of the {} scheduled sends left late (> {} ms) or were dropped ({} late, {} dropped): the client or --max-in-flight could not keep the rate",
                r.asked_per_s,
                r.achieved_per_s,
                r.late_or_dropped_share * 100.0,
                r.scheduled,
                LATE_SEND_US / 1000,
                r.sent_late,
                r.dropped
            ));
        }
        w
    }

    /// Single reads answered (result or error, not timed out) per second of the single-read
    /// phase: answered / [`single_window_s`](Self::single_window_s); 0 when nothing answered.
    pub fn throughput_per_s(&self) -> f64 {
        if self.single_window_s > 0.0 {
            let censored = self
                .single_by_class
                .get(TIMEOUT_CLASS)
                .map_or(0, |h| h.len());
            (self.single.len() - censored) as f64 / self.single_window_s
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

/// `q` with its censoring bound stated as `timeout_us` (every timed-out read took at least
/// that; the flags stay those of the smallest latency actually recorded for one).
fn censored_at(mut q: crate::stats::Quantiles, timeout_us: u64) -> crate::stats::Quantiles {
    if let Some(c) = &mut q.censored {
        c.bound_us = c.bound_us.min(timeout_us);
    }
    q
}

impl BenchResult {
    /// The report of this run: quantiles, the F(t)^N prediction beside the
    /// measured turn p50/p99, and the counters.
    pub fn report(
        &self,
        cfg: impl Into<RunSettings>,
        transcript: &str,
        target: &str,
        latency: Option<String>,
        seed: u64,
        server: Option<crate::server::ServeSummary>,
    ) -> BenchReport {
        let cfg: RunSettings = cfg.into();
        use crate::stats::{
            Predicted, Quantiles, predict_deadline_share, predict_turn_quantile_us,
        };
        let no_reads = new_hist();
        let reads = self.turn_basis().unwrap_or(&no_reads);
        let prediction = [0.5, 0.99]
            .iter()
            .filter_map(|&q| {
                if self.turn.is_empty() {
                    return None;
                }
                let measured_us = self.turn.value_at_quantile(q);
                let predicted_us =
                    predict_turn_quantile_us(reads, cfg.parallel, q, cfg.deadline_us)?;
                Some(Predicted {
                    q,
                    measured_us,
                    predicted_us,
                    difference_us: measured_us as i64 - predicted_us as i64,
                })
            })
            .collect();
        BenchReport {
            transcript: transcript.to_owned(),
            target: target.to_owned(),
            latency,
            seed,
            load: cfg.load.text(),
            parallel: cfg.parallel,
            deadline_us: cfg.deadline_us,
            timeout_us: cfg.timeout_us,
            single: censored_at(
                Quantiles::of_censored(
                    &self.single,
                    self.single_censored_from_us,
                    self.single_phase.timed_out,
                ),
                cfg.timeout_us,
            ),
            throughput_per_s: self.throughput_per_s(),
            reads_asked: self.reads_asked,
            turns_asked: self.turns_asked,
            single_cut: self.single_cut,
            turns_cut: self.turns_cut,
            max_phase_ms: cfg.max_phase_ms,
            target_closed: self.target_closed,
            turn_reads: self.turn_reads.len()
                - self.turn_phase.timed_out.min(self.turn_reads.len()),
            recorded_reads: self.recorded_reads,
            recorded_read_errors: self.recorded_read_errors,
            expected_error_answers: self.expected_error_answers,
            turn: Quantiles::of(&self.turn),
            prediction,
            turns: self.turns,
            turns_hit_deadline: self.turns_hit_deadline,
            deadline_share: if self.turns > 0 {
                self.turns_hit_deadline as f64 / self.turns as f64
            } else {
                0.0
            },
            predicted_deadline_share: predict_deadline_share(reads, cfg.parallel, cfg.deadline_us),
            cancellations: self.cancellations,
            late_responses: self.late_responses,
            cancellation: self.cancellation.to_owned(),
            input_rounds: self.input_rounds,
            abandoned: self.abandoned,
            errors: self.errors.clone(),
            server,
            partial: self.partial || self.single_cut || self.turns_cut,
            single_ok: Quantiles::of(&self.single_ok),
            turn_reads_ok: Quantiles::of(&self.turn_reads_ok),
            turn_reads_all: Quantiles::of_censored(
                &self.turn_reads,
                (self.turn_phase.timed_out > 0).then_some(cfg.deadline_us.max(1)),
                self.turn_phase.timed_out,
            ),
            error_classes: self
                .single_by_class
                .iter()
                .map(|(class, h)| crate::stats::ErrorClassView {
                    class: class.clone(),
                    count: h.len(),
                    latency: if class == TIMEOUT_CLASS {
                        censored_at(
                            Quantiles::of_censored(h, self.single_censored_from_us, h.len()),
                            cfg.timeout_us,
                        )
                    } else {
                        Quantiles::of(h)
                    },
                })
                .collect(),
            single_phase: self.single_phase.clone(),
            turn_phase: self.turn_phase.clone(),
            send_rate: self.send_rate,
            max_in_flight: cfg.max_in_flight,
            warnings: {
                let mut w = self.warnings();
                if self.partial {
                    w.push(
                        "partial: interrupted (SIGINT/SIGTERM) before the end: the figures cover what ran until then"
                            .to_owned(),
                    );
                }
                if self.single_cut {
                    w.push(format!(
                        "partial: the single phase stopped at --max-phase {} ms after {} of {} requests",
                        cfg.max_phase_ms, self.single_phase.sent, self.reads_asked
                    ));
                }
                if self.turns_cut {
                    w.push(format!(
                        "partial: the turn phase stopped at --max-phase {} ms after {} of {} turns",
                        cfg.max_phase_ms, self.turns, self.turns_asked
                    ));
                }
                // Turns run on reads whose recorded answer was lost are no case for it.
                if self.recorded_reads == 0 && self.turn_phase.sent == 0 && cfg.turns > 0 {
                    w.push(format!(
                        "no recorded resources/read: the {} parallel-read turns asked for were not run",
                        cfg.turns
                    ));
                }
                w
            },
            validation: cfg.validate.then(|| Quantiles::of(&self.validation)),
            slo: Vec::new(),
            mix: self.mix.clone(),
            by_method: self
                .by_method
                .iter()
                .map(|(m, k)| k.view(m, None, cfg.timeout_us))
                .collect(),
            by_tool: self.key_views(method::TOOLS_CALL, cfg.timeout_us),
            by_prompt: self.key_views(method::PROMPTS_GET, cfg.timeout_us),
            by_uri: self.key_views(method::RESOURCES_READ, cfg.timeout_us),
            skipped_tools: self.skipped_tools.clone(),
            regression: None,
            time_series: {
                let single_us = (self.single_elapsed_s * 1e6) as u64;
                let mut t = self
                    .single_series
                    .points("single", 0.0, single_us, cfg.timeout_us);
                t.extend(self.turn_series.points(
                    "turns",
                    single_us as f64 / 1000.0,
                    (self.turn_elapsed_s * 1e6) as u64,
                    cfg.deadline_us,
                ));
                t
            },
            run: None,
            faults: Vec::new(),
        }
    }

    /// What the F(t)^N turn prediction is drawn from: a turn is reads, so the single phase's
    /// `resources/read` latencies (the whole single phase for a result without per-method
    /// figures, as one from before them); `None` when the single phase sent no read.
    pub fn turn_basis(&self) -> Option<&Histogram<u64>> {
        match self.by_method.get(method::RESOURCES_READ) {
            Some(k) => Some(&k.all),
            None if self.by_method.is_empty() => Some(&self.single),
            None => None,
        }
    }

    fn key_views(&self, m: &str, timeout_us: u64) -> Vec<crate::stats::MethodView> {
        self.by_key.get(m).map_or_else(Vec::new, |keys| {
            keys.iter()
                .map(|(k, v)| v.view(m, Some(k), timeout_us))
                .collect()
        })
    }
}

impl KeyStats {
    /// The report's view of these figures (timeouts censored at `timeout_us`).
    pub fn view(&self, m: &str, name: Option<&str>, timeout_us: u64) -> crate::stats::MethodView {
        let timed_out = self.errors.get(TIMEOUT_CLASS).copied().unwrap_or(0);
        crate::stats::MethodView {
            method: m.to_owned(),
            name: name.map(str::to_owned),
            sent: self.sent,
            ok: self.ok,
            errors: self.errors.clone(),
            closed: self.closed,
            not_as_recorded: self.not_as_recorded,
            no_recorded_answer: self.no_recorded_answer,
            latency: censored_at(
                crate::stats::Quantiles::of_censored(
                    &self.all,
                    (timed_out > 0).then_some(timeout_us),
                    timed_out,
                ),
                timeout_us,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A turn is reads: its F(t)^N prediction comes from the single phase's reads, not from
    /// its tool calls (here 10 ms reads, 100 ms calls).
    #[test]
    fn turn_prediction_uses_the_single_phase_reads_only() {
        let mut res = BenchResult::new();
        let mut reads = KeyStats::new();
        reads.all.record_n(10_000, 50).unwrap();
        let mut calls = KeyStats::new();
        calls.all.record_n(100_000, 50).unwrap();
        res.single.add(&reads.all).unwrap();
        res.single.add(&calls.all).unwrap();
        res.by_method.insert("resources/read".into(), reads);
        res.by_method.insert("tools/call".into(), calls);
        res.turn.record(10_000).unwrap();
        res.turns = 1;
        let r = res.report(RunSettings::default(), "t", "x", None, 1, None);
        let p50 = r.prediction.iter().find(|p| p.q == 0.5).unwrap();
        assert!(res.single.equivalent(p50.predicted_us, 10_000), "{p50:?}");
        assert_eq!(r.predicted_deadline_share, Some(0.0));
        // No read in the single phase: no prediction.
        res.by_method.remove("resources/read");
        let r = res.report(RunSettings::default(), "t", "x", None, 1, None);
        assert!(r.prediction.is_empty());
    }
}
