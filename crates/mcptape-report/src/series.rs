//! A bench phase over time: per interval, requests sent, answered ok, errors by class, lost with
//! the connection, in flight at the interval's end, and the latency of what ended in it
//! ([`PhaseSeries`], filled by the IO side with elapsed times in µs); the report's
//! `timeSeries` ([`TimeSeriesPoint`]) and the `.hlog`'s interval lines are made from it.
//!
//! An event lands in the interval holding its time since the phase began: a send at its send
//! time, an answer, timeout or loss at the time it ended (its latency recorded there, as an
//! HdrHistogram interval log does). Intervals start [`TIME_SERIES_START_INTERVAL_US`] long; a
//! phase longer than [`MAX_TIME_SERIES_INTERVALS`] of them has its intervals merged in pairs
//! (the length doubles) as often as needed, so a 1 h phase keeps at most that many.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::run::TIMEOUT_CLASS;
use crate::stats::{HIST_MAX_US, HIST_SIGFIG, Quantiles};

/// Length of a phase's first intervals: 100 ms, in µs.
pub const TIME_SERIES_START_INTERVAL_US: u64 = 100_000;

/// Most intervals one phase keeps: 120. An event past the last one merges the intervals in
/// pairs and doubles their length (again while needed): 120 intervals stay 120, a 121st makes
/// 61 of twice the length.
pub const MAX_TIME_SERIES_INTERVALS: usize = 120;

/// What ended or left in one interval of a phase.
#[derive(Debug, Clone)]
pub struct IntervalFigures {
    /// Requests sent.
    pub sent: u64,
    /// Answered with a result.
    pub ok: u64,
    /// Error answers by class ([`crate::run::error_class`]…) and [`TIMEOUT_CLASS`] (not
    /// answered in time).
    pub errors: BTreeMap<String, u64>,
    /// Of [`errors`](Self::errors), the error answers that were the recorded ones (the
    /// recording's own not-found read, replayed), by class.
    pub as_recorded: BTreeMap<String, u64>,
    /// Of [`errors`](Self::errors), the error answers to requests the recording has no answer
    /// to (compared with nothing: neither as recorded nor otherwise), by class.
    pub no_recorded: BTreeMap<String, u64>,
    /// Lost with the connection (no latency).
    pub closed: u64,
    /// Latency of every answer and timeout that ended in the interval, µs (timeouts at the
    /// time they were given up: censored).
    pub latency: Histogram<u64>,
    /// Timeouts in [`latency`](Self::latency).
    pub censored: u64,
}

impl IntervalFigures {
    fn new() -> Self {
        IntervalFigures {
            sent: 0,
            ok: 0,
            errors: BTreeMap::new(),
            as_recorded: BTreeMap::new(),
            no_recorded: BTreeMap::new(),
            closed: 0,
            // Auto-resizing from a small range: an interval holds a few buckets' worth of
            // values, not the 188 KB of a full-range histogram.
            latency: Histogram::new(HIST_SIGFIG).expect("constant precision is valid"),
            censored: 0,
        }
    }

    /// Records `latency_us` (clamped to 1..=[`HIST_MAX_US`], as bench's histograms hold it);
    /// the histogram grows to hold it.
    fn record(&mut self, latency_us: u64) {
        let v = latency_us.clamp(1, HIST_MAX_US);
        if self.latency.record(v).is_err() {
            self.latency.saturating_record(v);
        }
    }

    fn ended(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>() + self.closed
    }

    fn absorb(&mut self, o: &IntervalFigures) {
        self.sent += o.sent;
        self.ok += o.ok;
        for (k, v) in &o.errors {
            *self.errors.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &o.as_recorded {
            *self.as_recorded.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &o.no_recorded {
            *self.no_recorded.entry(k.clone()).or_insert(0) += v;
        }
        self.closed += o.closed;
        // Both auto-resize: adding cannot fail for want of range.
        let _ = self.latency.add(&o.latency);
        self.censored += o.censored;
    }
}

/// One phase's figures per interval, from its start.
#[derive(Debug, Clone)]
pub struct PhaseSeries {
    interval_us: u64,
    intervals: Vec<IntervalFigures>,
}

impl Default for PhaseSeries {
    fn default() -> Self {
        Self::new()
    }
}

impl PhaseSeries {
    /// No interval yet, [`TIME_SERIES_START_INTERVAL_US`] long.
    pub fn new() -> Self {
        PhaseSeries {
            interval_us: TIME_SERIES_START_INTERVAL_US,
            intervals: Vec::new(),
        }
    }

    /// Length of each interval, µs.
    pub fn interval_us(&self) -> u64 {
        self.interval_us
    }

    /// The intervals so far, from the phase's start.
    pub fn intervals(&self) -> &[IntervalFigures] {
        &self.intervals
    }

    /// The interval holding `at_us` (µs since the phase began), made (with the empty ones
    /// before it) if missing, after merging pairs while it would be past
    /// [`MAX_TIME_SERIES_INTERVALS`].
    fn slot(&mut self, at_us: u64) -> &mut IntervalFigures {
        let mut i = (at_us / self.interval_us) as usize;
        while i >= MAX_TIME_SERIES_INTERVALS {
            self.coarsen();
            i = (at_us / self.interval_us) as usize;
        }
        while self.intervals.len() <= i {
            self.intervals.push(IntervalFigures::new());
        }
        &mut self.intervals[i]
    }

    /// Merges the intervals in pairs; the length doubles.
    fn coarsen(&mut self) {
        let old = std::mem::take(&mut self.intervals);
        for pair in old.chunks(2) {
            let mut a = pair[0].clone();
            if let Some(b) = pair.get(1) {
                a.absorb(b);
            }
            self.intervals.push(a);
        }
        self.interval_us = self.interval_us.saturating_mul(2);
    }

    /// Makes the intervals up to `end_us` (the phase's length, µs): the quiet ones at its end
    /// are intervals too.
    pub fn extend_to(&mut self, end_us: u64) {
        if end_us > 0 {
            self.slot(end_us - 1);
        }
    }

    /// `n` requests sent at `at_us`.
    pub fn sent(&mut self, at_us: u64, n: u64) {
        self.slot(at_us).sent += n;
    }

    /// A result at `at_us` after `latency_us`.
    pub fn ok(&mut self, at_us: u64, latency_us: u64) {
        let s = self.slot(at_us);
        s.ok += 1;
        s.record(latency_us);
    }

    /// An error answer of `class` at `at_us` after `latency_us`; `as_recorded` when it is the
    /// error the recording holds for the request (same code).
    pub fn error(&mut self, at_us: u64, class: &str, latency_us: u64, as_recorded: bool) {
        let s = self.slot(at_us);
        *s.errors.entry(class.to_owned()).or_insert(0) += 1;
        if as_recorded {
            *s.as_recorded.entry(class.to_owned()).or_insert(0) += 1;
        }
        s.record(latency_us);
    }

    /// [`error`](Self::error) of a request the recording has no answer to: counted apart
    /// ([`TimeSeriesPoint::errors_without_recorded_answer`]).
    pub fn error_without_recorded_answer(&mut self, at_us: u64, class: &str, latency_us: u64) {
        self.error(at_us, class, latency_us, false);
        let s = self.slot(at_us);
        *s.no_recorded.entry(class.to_owned()).or_insert(0) += 1;
    }

    /// A request given up at `at_us` with no answer, recorded at `latency_us` (≥ the censoring
    /// bound): class [`TIMEOUT_CLASS`].
    pub fn timeout(&mut self, at_us: u64, latency_us: u64) {
        let s = self.slot(at_us);
        *s.errors.entry(TIMEOUT_CLASS.to_owned()).or_insert(0) += 1;
        s.record(latency_us);
        s.censored += 1;
    }

    /// A request lost with the connection at `at_us`.
    pub fn closed(&mut self, at_us: u64) {
        self.slot(at_us).closed += 1;
    }

    /// The intervals as the report states them, with their bounds (µs from the phase's start):
    /// the last one runs to `end_us`, and one shorter than half an interval is folded into the
    /// one before it (so no sliver reads as a rate spike).
    pub fn spans(&self, end_us: u64) -> Vec<(u64, u64, IntervalFigures)> {
        let len = self.interval_us;
        let mut out: Vec<(u64, u64, IntervalFigures)> = Vec::with_capacity(self.intervals.len());
        let n = self.intervals.len();
        for (i, f) in self.intervals.iter().enumerate() {
            let start = i as u64 * len;
            let end = if i + 1 == n {
                end_us.clamp(start + 1, start + len)
            } else {
                start + len
            };
            match out.last_mut() {
                Some(prev) if i + 1 == n && end - start < len / 2 => {
                    prev.1 = end;
                    prev.2.absorb(f);
                }
                _ => out.push((start, end, f.clone())),
            }
        }
        out
    }

    /// The report's points of this phase: `phase` (`single`, `turns`), starting `offset_ms`
    /// after the run began, ending `end_us` after the phase began, timeouts censored at
    /// `bound_us` (`--timeout` for single requests, the deadline for turn reads).
    pub fn points(
        &self,
        phase: &str,
        offset_ms: f64,
        end_us: u64,
        bound_us: u64,
    ) -> Vec<TimeSeriesPoint> {
        let mut in_flight = 0u64;
        self.spans(end_us)
            .into_iter()
            .map(|(start, end, f)| {
                in_flight = (in_flight + f.sent).saturating_sub(f.ended());
                let q = Quantiles::of_censored(&f.latency, Some(bound_us.max(1)), f.censored);
                let c = q.censored.unwrap_or_default();
                let at = |us: u64, censored: bool| {
                    (q.count > 0).then(|| {
                        if censored {
                            c.bound_us as f64 / 1000.0
                        } else {
                            us as f64 / 1000.0
                        }
                    })
                };
                TimeSeriesPoint {
                    phase: phase.to_owned(),
                    // Rounded to the µs: the sum of two ms values in f64 printed as
                    // `32824.138999999996`.
                    start_ms: ((offset_ms + start as f64 / 1000.0) * 1000.0).round() / 1000.0,
                    length_ms: (end - start) as f64 / 1000.0,
                    sent: f.sent,
                    ok: f.ok,
                    errors: f.errors,
                    errors_as_recorded: f.as_recorded,
                    errors_without_recorded_answer: f.no_recorded,
                    closed: f.closed,
                    in_flight,
                    p50_ms: at(q.p50_us, c.p50),
                    p99_ms: at(q.p99_us, c.p99),
                    p50_censored: c.p50,
                    p99_censored: c.p99,
                }
            })
            .collect()
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One interval of a phase in `report.json`'s `timeSeries`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeSeriesPoint {
    /// `single` (the single requests) or `turns` (the reads inside parallel-read turns).
    pub phase: String,
    /// Start of the interval, ms since the run began, to the µs (the turn phase's intervals
    /// start where the single phase ended).
    pub start_ms: f64,
    /// Length of the interval, ms (the last one of a phase runs to its end: 0.5 to 1.5
    /// intervals).
    pub length_ms: f64,
    /// Requests sent in it.
    pub sent: u64,
    /// Requests answered with a result in it.
    pub ok: u64,
    /// Requests that ended in it otherwise: error answers by class, and `timeout` (given up
    /// at `--timeout`, or a turn read at the deadline).
    pub errors: BTreeMap<String, u64>,
    /// Of `errors`, the error answers that were the recorded ones (the recording's own
    /// not-found read, replayed with its code), by class; over a phase they add up to its
    /// `errorsAsRecorded`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_as_recorded: BTreeMap<String, u64>,
    /// Of `errors`, the error answers to requests the recording has no answer to (a transcript
    /// cut before the reply: the embedded `serve` synthesizes one), by class: compared with
    /// nothing, neither as recorded nor otherwise. Absent when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_without_recorded_answer: BTreeMap<String, u64>,
    /// Requests lost with the connection in it.
    #[serde(default)]
    pub closed: u64,
    /// Requests of the phase sent and not yet ended at the interval's end.
    pub in_flight: u64,
    /// Median latency of the requests that ended in it (answers and timeouts), ms; absent when
    /// none ended. When censored ([`p50_censored`](Self::p50_censored)), the censoring bound:
    /// the median is known only to be above it.
    #[serde(default)]
    pub p50_ms: Option<f64>,
    /// 99th percentile, ms, as [`p50_ms`](Self::p50_ms).
    #[serde(default)]
    pub p99_ms: Option<f64>,
    /// The median falls among timeouts: `p50Ms` is the bound it lies above (`> 5000 ms`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub p50_censored: bool,
    /// The p99 falls among timeouts: `p99Ms` is the bound it lies above.
    #[serde(default, skip_serializing_if = "is_false")]
    pub p99_censored: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_interval_limit_nothing_merges_and_one_past_it_merges_pairs() {
        let len = TIME_SERIES_START_INTERVAL_US;
        let mut s = PhaseSeries::new();
        let last = MAX_TIME_SERIES_INTERVALS as u64 - 1;
        s.sent(0, 1);
        s.sent(last * len, 1);
        assert_eq!(s.intervals().len(), MAX_TIME_SERIES_INTERVALS);
        assert_eq!(s.interval_us(), len);
        s.sent((last + 1) * len, 1);
        assert_eq!(s.interval_us(), 2 * len);
        assert_eq!(s.intervals().len(), MAX_TIME_SERIES_INTERVALS / 2 + 1);
        let sent: u64 = s.intervals().iter().map(|f| f.sent).sum();
        assert_eq!(sent, 3);
        assert_eq!(s.intervals()[0].sent, 1);
        assert_eq!(s.intervals()[MAX_TIME_SERIES_INTERVALS / 2 - 1].sent, 1);
        assert_eq!(s.intervals()[MAX_TIME_SERIES_INTERVALS / 2].sent, 1);
    }

    #[test]
    fn a_timeout_is_an_error_class_and_its_latency_reads_censored() {
        let mut s = PhaseSeries::new();
        s.sent(0, 2);
        s.ok(10_000, 10_000);
        s.timeout(50_000, 5_005_311);
        let p = s.points("single", 0.0, 60_000, 5_000_000);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].errors[TIMEOUT_CLASS], 1);
        assert!(p[0].p99_censored);
        assert_eq!(p[0].p99_ms, Some(5000.0));
        assert!(!p[0].p50_censored);
        assert_eq!(p[0].in_flight, 0);
    }

    #[test]
    fn a_tail_shorter_than_half_an_interval_joins_the_one_before() {
        let len = TIME_SERIES_START_INTERVAL_US;
        let mut s = PhaseSeries::new();
        s.sent(0, 1);
        s.ok(len + len / 4, 5);
        s.extend_to(len + len / 4 + 1);
        let p = s.points("single", 0.0, len + len / 4 + 1, 5_000_000);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].length_ms, (len + len / 4 + 1) as f64 / 1000.0);
        assert_eq!((p[0].sent, p[0].ok, p[0].in_flight), (1, 1, 0));
        // Half an interval or more stays its own.
        let p = s.points("single", 0.0, len + len / 2, 5_000_000);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].in_flight, 1);
    }
}
