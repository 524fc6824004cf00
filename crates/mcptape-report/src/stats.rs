//! Latency statistics of a bench run, independent of how they are shown: quantiles from an
//! HdrHistogram (µs), the prediction of an N-read turn from the single-read distribution
//! (F(t)^N), and the counters of [`BenchReport`]. Rendering (the human table, `.hlog`, SVG) is
//! in [`crate::render`].

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest value a latency histogram tracks: 3,600 s in µs; larger values are
/// saturated to it.
pub const HIST_MAX_US: u64 = 3_600_000_000;

/// Significant decimal digits kept by every latency histogram (3: 0.1% error).
pub const HIST_SIGFIG: u8 = 3;

/// A new latency histogram (µs, 1 µs .. [`HIST_MAX_US`], 3 significant digits).
pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, HIST_SIGFIG).expect("constant bounds are valid")
}

/// Quantiles of one latency histogram, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quantiles {
    /// Number of values.
    pub count: u64,
    /// Median, µs.
    pub p50_us: u64,
    /// 90th percentile, µs.
    pub p90_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// 99.9th percentile, µs.
    pub p999_us: u64,
    /// Largest value, µs.
    pub max_us: u64,
    /// Mean, µs.
    pub mean_us: f64,
    /// Present when some values are right-censored (a read timed out: its latency is only known
    /// to be ≥ the bound): which quantiles fall in the censored region and the bound. A censored
    /// quantile prints as `> 5000 ms`; its `*_us` value is the bound's histogram bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub censored: Option<Censored>,
}

/// Which quantiles of a [`Quantiles`] are censored (fall at or above [`bound_us`](Self::bound_us),
/// where the timed-out reads were recorded), and how many values are censored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Censored {
    /// The censoring bound, µs: a censored value is known only to be ≥ it (bench: the
    /// `--timeout` for single reads, the deadline for turn reads). Quantiles are flagged from
    /// the smallest value actually recorded for a timed-out read (open loop: from the intended
    /// send time, so ≥ the timeout).
    pub bound_us: u64,
    /// Values censored at or above the bound (timed-out reads).
    pub count: u64,
    /// p50 is in the censored region.
    pub p50: bool,
    /// p90 is in the censored region.
    pub p90: bool,
    /// p99 is in the censored region.
    pub p99: bool,
    /// p99.9 is in the censored region.
    pub p999: bool,
    /// max is in the censored region.
    pub max: bool,
}

impl Quantiles {
    /// Summarizes `h` (all zeros when it is empty).
    pub fn of(h: &Histogram<u64>) -> Quantiles {
        if h.is_empty() {
            return Quantiles::default();
        }
        Quantiles {
            count: h.len(),
            p50_us: h.value_at_quantile(0.50),
            p90_us: h.value_at_quantile(0.90),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
            mean_us: h.mean(),
            censored: None,
        }
    }

    /// [`Quantiles::of`] a histogram holding `censored_count` right-censored values recorded at
    /// `bound_us` or above (timed-out reads): a quantile whose value is in the bound's bucket or
    /// above is flagged censored. `bound_us` `None` or `censored_count` 0: as [`Quantiles::of`].
    pub fn of_censored(
        h: &Histogram<u64>,
        bound_us: Option<u64>,
        censored_count: u64,
    ) -> Quantiles {
        let mut q = Quantiles::of(h);
        let Some(bound) = bound_us.filter(|_| censored_count > 0 && !h.is_empty()) else {
            return q;
        };
        let low = h.lowest_equivalent(bound);
        let at = |v: u64| v >= low;
        q.censored = Some(Censored {
            bound_us: bound,
            count: censored_count,
            p50: at(q.p50_us),
            p90: at(q.p90_us),
            p99: at(q.p99_us),
            p999: at(q.p999_us),
            max: at(q.max_us),
        });
        q
    }
}

/// Counters of one bench phase (single reads, or the reads inside turns), named for what they
/// count. Invariants: a partition of `sent`,
/// `ok + errorAnswers (sum) + noRecordedAnswer + timedOut + closed == sent`;
/// `lateResponses + abandoned == cancellationsSent` once the phase is drained (≤ in a partial
/// report); `lateResponses ≤ cancellationsSent` always.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseCounters {
    /// Requests sent.
    pub sent: u64,
    /// Answered with a result (to a request the recording holds an answer to).
    pub answered_ok: u64,
    /// Answered with a JSON-RPC error (to a request the recording holds an answer to), by
    /// class ([`crate::run::error_class`]).
    pub error_answers: std::collections::BTreeMap<String, u64>,
    /// Of the error answers, those answered as recorded: a read whose recording is an error
    /// answer, answered with the recorded error code (an injected fault, another code, a
    /// timeout or a lost read on such a request is not counted here).
    #[serde(default)]
    pub errors_as_recorded: u64,
    /// Answered (with a result or an error) although the recording holds no answer to the
    /// request (the transcript was cut before it, or the server never answered): the answer
    /// (the embedded `serve` synthesizes one, e.g. a not-found read) is compared with nothing,
    /// so it is neither "as recorded" nor "otherwise than recorded". Its own class: not also
    /// in `answeredOk` or `errorAnswers` (such a request timed out or lost with the connection
    /// counts in `timedOut` or `closed`). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub no_recorded_answer: u64,
    /// Not answered in time: single reads, within `--timeout`; turn reads, by the turn
    /// deadline (the stragglers).
    pub timed_out: u64,
    /// Lost with the connection (the target closed it).
    pub closed: u64,
    /// Cancellations sent (`notifications/cancelled`, or the POST aborted): single reads at the
    /// timeout, turn stragglers at the deadline.
    pub cancellations_sent: u64,
    /// Of the cancelled requests, those answered afterwards (tagged, ignored).
    pub late_responses: u64,
    /// Of the cancelled requests, those with no answer at all by their `--timeout`.
    pub abandoned: u64,
    /// Most requests of this phase in flight at once.
    pub max_in_flight: u64,
}

/// `true` for 0: a count written only when it is not (a report or interval log without such
/// requests stays as it was before the count existed).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PhaseCounters {
    /// Error answers of all classes.
    pub fn error_answers_total(&self) -> u64 {
        self.error_answers.values().sum()
    }

    /// Share of sent requests answered with a result, 0..1 (`None` when nothing was sent).
    pub fn success_ratio(&self) -> Option<f64> {
        (self.sent > 0).then(|| self.answered_ok as f64 / self.sent as f64)
    }
}

/// The latency view of one error class of the single-read phase (or `timeout`, censored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorClassView {
    /// Class label (`internal (-32603)`, `not-found (-32602 + data.uri)`, `timeout`).
    pub class: String,
    /// Reads of this class.
    pub count: u64,
    /// Their latency, µs (timeouts: censored at the timeout).
    pub latency: Quantiles,
}

/// The open-loop generator check (k6's `dropped_iterations`, wrk2's schedule): asked vs achieved
/// send rate, and how many sends left late or never left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendRate {
    /// Asked rate (`--rate`), sends per second.
    pub asked_per_s: f64,
    /// Achieved rate: sent / the time from the first intended send to the last send, per second.
    pub achieved_per_s: f64,
    /// Sends scheduled before the phase ended (at most `--reads`).
    pub scheduled: u64,
    /// Sent.
    pub sent: u64,
    /// Sent more than [`crate::run::LATE_SEND_US`] after their intended time (the client
    /// could not keep up, or `--max-in-flight` was full).
    pub sent_late: u64,
    /// Scheduled but never sent (the phase ended first): k6's `dropped_iterations`.
    pub dropped: u64,
    /// (sent late + dropped) / scheduled, 0..1; a warning is printed above
    /// [`LATE_OR_DROPPED_WARN`].
    pub late_or_dropped_share: f64,
}

/// Share of late or dropped sends above which `bench` warns that the asked rate was not
/// offered: 1 %.
pub const LATE_OR_DROPPED_WARN: f64 = 0.01;

/// Predicted `q`-quantile (µs) of the completion time of a turn of `n`
/// independent reads drawn from the single-read distribution `single`: the
/// maximum of `n` reads has CDF F(t)^n, so its q-quantile is the single-read
/// quantile at q^(1/n). A turn never lasts past its deadline, so the result
/// is capped at `deadline_us`. `None` when `single` is empty or `n` is 0.
pub fn predict_turn_quantile_us(
    single: &Histogram<u64>,
    n: u32,
    q: f64,
    deadline_us: u64,
) -> Option<u64> {
    if single.is_empty() || n == 0 {
        return None;
    }
    let qs = q.clamp(0.0, 1.0).powf(1.0 / f64::from(n));
    Some(single.value_at_quantile(qs).min(deadline_us))
}

/// Predicted share of turns of `n` reads that hit the deadline:
/// 1 − F(deadline)^n, F taken from `single`.
pub fn predict_deadline_share(single: &Histogram<u64>, n: u32, deadline_us: u64) -> Option<f64> {
    if single.is_empty() {
        return None;
    }
    let below = single.count_between(0, deadline_us) as f64 / single.len() as f64;
    Some(1.0 - below.powi(n as i32))
}

/// One measured-vs-predicted turn percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Predicted {
    /// Quantile, 0..1 (0.5, 0.99).
    pub q: f64,
    /// Measured turn completion time at `q`, µs.
    pub measured_us: u64,
    /// Predicted from the single-read distribution, F(t)^N, µs.
    pub predicted_us: u64,
    /// measured − predicted, µs.
    pub difference_us: i64,
}

/// The JSON report of `mcptape bench --out DIR` (`report.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchReport {
    /// `--validate`: time the fused strict decoder took to check each result's `contents`, µs
    /// (apart from the read latencies); `None` without `--validate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Quantiles>,
    /// Transcript path.
    pub transcript: String,
    /// Target description (`embedded mcptape serve (stdio)`, a command, a URL).
    pub target: String,
    /// Latency model given to the embedded server (`None` for live targets).
    pub latency: Option<String>,
    /// Seed.
    pub seed: u64,
    /// Load of the single-read phase (`closed-loop concurrency 1`, `open-loop 200/s`).
    pub load: String,
    /// Reads per turn.
    pub parallel: u32,
    /// Turn deadline, µs.
    pub deadline_us: u64,
    /// Read timeout, µs.
    pub timeout_us: u64,
    /// Single-read latency, µs.
    pub single: Quantiles,
    /// Single reads answered per second (answered / window; open loop: the
    /// window is at least sent / rate).
    pub throughput_per_s: f64,
    /// Single reads asked for (`--reads`).
    #[serde(default)]
    pub reads_asked: u64,
    /// Turns asked for (`--turns`).
    #[serde(default)]
    pub turns_asked: u64,
    /// The single-read phase stopped at `--max-phase` before sending every read.
    #[serde(default)]
    pub single_cut: bool,
    /// The turn phase stopped at `--max-phase` before running every turn.
    #[serde(default)]
    pub turns_cut: bool,
    /// The `--max-phase` bound, ms.
    #[serde(default)]
    pub max_phase_ms: u64,
    /// The target closed the connection during the run.
    #[serde(default)]
    pub target_closed: bool,
    /// Reads inside turns that were answered before the deadline.
    #[serde(default)]
    pub turn_reads: u64,
    /// Recorded `resources/read` exchanges in the transcript.
    #[serde(default)]
    pub recorded_reads: u64,
    /// Of those, recorded error answers (replayed as errors each cycle).
    #[serde(default)]
    pub recorded_read_errors: u64,
    /// Error answers received in both phases that were answered as recorded: the read's
    /// recording is an error answer and the answer carries the recorded code (the recorded
    /// not-found, replayed each cycle). An injected fault, a timeout or a lost read on such a
    /// request is not among them. Not counted by the `errors<N%` SLO.
    #[serde(default)]
    pub expected_error_answers: u64,
    /// Turn completion time, µs.
    pub turn: Quantiles,
    /// Measured vs predicted turn p50 and p99.
    pub prediction: Vec<Predicted>,
    /// Turns run.
    pub turns: u64,
    /// Turns that hit the deadline.
    pub turns_hit_deadline: u64,
    /// Share of turns that hit the deadline, 0..1.
    pub deadline_share: f64,
    /// Predicted share, 1 − F(deadline)^N.
    pub predicted_deadline_share: Option<f64>,
    /// `notifications/cancelled` sent.
    pub cancellations: u64,
    /// Responses after cancellation (tagged, ignored).
    pub late_responses: u64,
    /// How stragglers were cancelled: `"close-stream"` (2026-07-28 Streamable HTTP) or
    /// `"notification"` (`notifications/cancelled`: stdio, 2025 session-era HTTP).
    pub cancellation: String,
    /// `input_required` rounds retried; a read and its retries are one read in every figure.
    pub input_rounds: u64,
    /// Reads abandoned at the timeout.
    pub abandoned: u64,
    /// Errors by class.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// The embedded server's own figures (model vs achieved delay), if known.
    pub server: Option<crate::server::ServeSummary>,
    /// The run was interrupted (SIGINT/SIGTERM): the figures cover what ran until then.
    #[serde(default)]
    pub partial: bool,
    /// Single reads answered with a result, µs (the `single` view holds every read: error
    /// answers, and timeouts censored at the timeout).
    #[serde(default)]
    pub single_ok: Quantiles,
    /// Reads inside turns answered with a result before the deadline, µs.
    #[serde(default)]
    pub turn_reads_ok: Quantiles,
    /// Every read inside turns, µs: stragglers censored at the deadline.
    #[serde(default)]
    pub turn_reads_all: Quantiles,
    /// Single reads by error class (error answers, `timeout`): count and latency.
    #[serde(default)]
    pub error_classes: Vec<ErrorClassView>,
    /// Counters of the single-read phase.
    #[serde(default)]
    pub single_phase: PhaseCounters,
    /// Counters of the reads inside turns.
    #[serde(default)]
    pub turn_phase: PhaseCounters,
    /// Open loop only: asked vs achieved send rate, late and dropped sends.
    #[serde(default)]
    pub send_rate: Option<SendRate>,
    /// The `--max-in-flight` cap.
    #[serde(default)]
    pub max_in_flight: u32,
    /// Warnings printed under the table (rate not offered, ...).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// `--slo` verdicts, one per item ([`crate::slo::evaluate`]); omitted when no `--slo`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo: Vec<crate::slo::SloCheck>,
    /// The single phase's mix (`--mix`: `recorded`, `uniform`, `METHOD=W,…`).
    #[serde(default)]
    pub mix: String,
    /// The single phase by method (`resources/read`, `tools/call`, `prompts/get`, …).
    #[serde(default)]
    pub by_method: Vec<MethodView>,
    /// The `tools/call` of the single phase by tool name.
    #[serde(default)]
    pub by_tool: Vec<MethodView>,
    /// The `prompts/get` of the single phase by prompt name.
    #[serde(default)]
    pub by_prompt: Vec<MethodView>,
    /// The `resources/read` of the single phase by URI.
    #[serde(default)]
    pub by_uri: Vec<MethodView>,
    /// Recorded tools not called on a live target (no `readOnlyHint: true` in the recorded
    /// `tools/list`, not named by `--allow-tool`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_tools: Vec<String>,
    /// `--baseline`: the regression gate's comparison with the baseline run
    /// ([`crate::regression`]); absent without a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<crate::regression::Regression>,
    /// The run over time: one entry per interval of each phase, single requests then turn
    /// reads ([`crate::series`]; the same intervals as the `single` and `turn-reads` lines of
    /// `latency.hlog`). Over a phase, the entries' `sent`, `ok`, `errors` (by class, with
    /// `timeout`) and `closed` add up to its counters (`singlePhase`, `turnPhase`). Absent
    /// when the driver keeps none (a k6 import).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_series: Vec<crate::series::TimeSeriesPoint>,
    /// When, where and by which build the run was made; filled by the binary (the report
    /// crate reads no clock and no host name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
    /// `--fault` specs given to the embedded server (`stall=0.5%`, `error=-32603@1%`): the
    /// latencies and errors include injected faults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

/// When, where and by which build a run was made (`report.json`'s `run`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// When the run started, RFC 3339 in UTC (`2026-12-03T09:12:45Z`); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Wall time of the run (both phases), s.
    pub duration_s: f64,
    /// Host name of the machine that drove the load; absent when unknown (a k6 import: the
    /// pods').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// mcptape's version (`0.1.0`).
    pub mcptape_version: String,
    /// Build profile of the mcptape binary: `release` or `debug` (a debug build's figures are
    /// ~100× slower).
    pub build_profile: String,
}

/// The single phase's figures of one method, or of one tool / prompt / URI of a method.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MethodView {
    /// The method.
    pub method: String,
    /// The tool name, prompt name or URI; absent in `byMethod`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Requests sent.
    pub sent: u64,
    /// Answered with a result.
    pub ok: u64,
    /// Error answers by class, and `timeout`.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// Lost with the connection.
    pub closed: u64,
    /// Answered otherwise than recorded (a result where an error was recorded, an error where
    /// a result was, another code): requests whose answer depends on the session's state
    /// (a recorded id from an earlier answer) show here.
    #[serde(default)]
    pub not_as_recorded: u64,
    /// Sent with no recorded answer to compare with ([`PhaseCounters::no_recorded_answer`]),
    /// whatever the outcome; never in `notAsRecorded`. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub no_recorded_answer: u64,
    /// Latency of every answer and timeout (censored at the timeout), µs, from the first send
    /// (`input_required` rounds included).
    pub latency: Quantiles,
}

impl BenchReport {
    /// Why this run is not a measurement (`mcptape bench` exits non-zero
    /// when the list is not empty): a phase that was asked for completed no
    /// read, or the target closed the connection. Empty for a good run.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.target_closed {
            out.push("the target closed the connection during the run".to_owned());
        }
        if self.reads_asked > 0 && self.single.count == 0 {
            out.push(format!(
                "single reads: {} asked for, none completed (all timed out, failed or were not sent)",
                self.reads_asked
            ));
        }
        if self.single_phase.sent > self.single_phase.no_recorded_answer
            && self.single_phase.answered_ok == 0
            && self.single.count > self.single_phase.no_recorded_answer
        {
            out.push(format!(
                "single reads: {} sent, none answered with a result (success 0 %)",
                self.single_phase.sent
            ));
        }
        if self.turn_phase.sent > self.turn_phase.no_recorded_answer
            && self.turn_phase.answered_ok == 0
            && self.turn_reads > self.turn_phase.no_recorded_answer
        {
            out.push(format!(
                "{}-read turns: {} reads sent, none answered with a result (success 0 %)",
                self.parallel, self.turn_phase.sent
            ));
        }
        if self.turns_asked > 0 && self.turn_reads == 0 {
            out.push(format!(
                "{}-read turns: {} asked for, {} run, no read in them answered before the deadline",
                self.parallel, self.turns_asked, self.turns
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_of_a_turn_uses_the_nth_root_quantile() {
        let mut h = new_hist();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        // q = 0.5, n = 4 → single quantile 0.5^(1/4) = 0.8409 → ~8409 µs.
        let p = predict_turn_quantile_us(&h, 4, 0.5, u64::MAX).unwrap();
        assert!((8_390..=8_430).contains(&p), "{p}");
        // n = 1 is the single-read quantile itself.
        let p1 = predict_turn_quantile_us(&h, 1, 0.5, u64::MAX).unwrap();
        assert_eq!(p1, h.value_at_quantile(0.5));
        // capped at the deadline.
        assert_eq!(predict_turn_quantile_us(&h, 4, 0.99, 800).unwrap(), 800);
        // share of turns over 5000 µs with 4 reads = 1 - 0.5^4.
        let s = predict_deadline_share(&h, 4, 5_000).unwrap();
        assert!((s - 0.9375).abs() < 0.002, "{s}");
    }
}
