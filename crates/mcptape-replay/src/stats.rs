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
        }
    }
}

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
    /// Reads abandoned at the timeout.
    pub abandoned: u64,
    /// Errors by class.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// The embedded server's own figures (model vs achieved delay), if known.
    pub server: Option<crate::serve::ServeSummary>,
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
