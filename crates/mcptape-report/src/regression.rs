//! The latency regression gate of `mcptape bench --baseline PATH` (issue 25): this run's
//! latencies against a baseline run's, per quantile (p50, p90, p99) with a seeded bootstrap
//! confidence interval of the relative difference, plus a Mann–Whitney rank test on the whole
//! distribution; the verdict (criterion-style lines, JSON, JUnit testcases, an HTML section).
//!
//! Pure: no IO, no clock. Inputs are latency distributions ([`Dist`], from an HdrHistogram or a
//! slice of values, µs) and a seed; the binary reads the baseline's `latency.hlog` and passes
//! its histograms here.
//!
//! # Method
//! - **Quantile**: nearest rank, the value of 0-based rank `ceil(q·n) − 1` of the sorted values
//!   ([`Dist::quantile`]), the same definition on both sides.
//! - **Bootstrap**: each resample draws `n` values with replacement from the recorded ones and
//!   takes its quantile. The k-th smallest of `n` indices drawn uniformly from `0..n` is
//!   `⌊n·U₍ₖ₎⌋`, where `U₍ₖ₎ ~ Beta(k, n − k + 1)` is the k-th order statistic of `n` uniform
//!   variates, so one Beta draw per resample gives the resample's quantile exactly as the full
//!   resample would, in O(log n) instead of O(n) ([`bootstrap_quantile`]; the equivalence is a
//!   unit test). Baseline and this run are resampled independently; the interval is the
//!   percentile interval of `q*_new / q*_base − 1` over [`RESAMPLES`] resamples, two-sided at
//!   the confidence.
//! - **Verdict per quantile** ([`Verdict`]): `regressed` when the whole interval is above
//!   `+noise`, `improved` when it is below `−noise`, else `no change`; a quantile censored on
//!   both sides (timeouts) is `censored` (nothing can be said). The gate fails
//!   ([`GateVerdict::Regressed`]) when any compared quantile regressed.
//! - **Rank test** ([`mann_whitney`]): Mann–Whitney U of this run against the baseline with the
//!   normal approximation, tie correction and continuity correction, two-sided and one-sided
//!   p-values, and the probability of superiority `P(new > base) + ½·P(new = base)`. It says
//!   whether the distribution as a whole moved; it is reported beside the quantiles and does not
//!   decide the gate (a p99-only regression leaves the ranks nearly unchanged).

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use rand::SeedableRng;
use rand_distr::Distribution;
use serde::{Deserialize, Serialize};

use crate::render::junit::{Failure, TestCase, TestSuite, document};

/// The quantiles compared: p50, p90, p99.
pub const QUANTILES: [f64; 3] = [0.50, 0.90, 0.99];

/// Default `--noise`: a change whose interval stays within ±5 % is no change.
pub const DEFAULT_NOISE: f64 = 0.05;

/// Largest `--noise`: 100 %.
pub const MAX_NOISE: f64 = 1.0;

/// Default `--confidence`: 0.95 (a two-sided 95 % interval).
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// Smallest `--confidence`: 0.5.
pub const MIN_CONFIDENCE: f64 = 0.5;

/// Largest `--confidence`: 0.999 (each tail of the interval is then 5 of [`RESAMPLES`]
/// resamples).
pub const MAX_CONFIDENCE: f64 = 0.999;

/// Bootstrap resamples per compared quantile: 10,000.
pub const RESAMPLES: u32 = 10_000;

/// Why a `--noise` or `--confidence` value was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{flag} {value}: {kind}")]
pub struct RegressionError {
    /// The flag (`--noise`, `--confidence`).
    pub flag: &'static str,
    /// The value as typed.
    pub value: String,
    /// What is wrong.
    pub kind: RegressionErrorKind,
}

/// What is wrong with a gate setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RegressionErrorKind {
    /// Not a number (`--noise`: a number and `%`, e.g. `5%`).
    #[error("not {0}")]
    Syntax(&'static str),
    /// `--noise` above [`MAX_NOISE`] (or negative).
    #[error("must be 0%..=100%")]
    NoiseOutOfRange,
    /// `--confidence` outside [`MIN_CONFIDENCE`]..=[`MAX_CONFIDENCE`].
    #[error("must be {MIN_CONFIDENCE}..={MAX_CONFIDENCE}")]
    ConfidenceOutOfRange,
}

/// Parses `--noise` (`5%`, `2.5%`, `0%`) into a fraction (0.05).
///
/// # Errors
/// [`RegressionErrorKind::Syntax`] without the `%` or not a number;
/// [`RegressionErrorKind::NoiseOutOfRange`] outside 0 %..=100 % ([`MAX_NOISE`]).
pub fn parse_noise(s: &str) -> Result<f64, RegressionError> {
    let err = |kind| RegressionError {
        flag: "--noise",
        value: s.to_owned(),
        kind,
    };
    let pct: f64 = s
        .trim()
        .strip_suffix('%')
        .and_then(|n| n.trim().parse().ok())
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| err(RegressionErrorKind::Syntax("a percentage such as 5%")))?;
    let f = pct / 100.0;
    if !(0.0..=MAX_NOISE).contains(&f) {
        return Err(err(RegressionErrorKind::NoiseOutOfRange));
    }
    Ok(f)
}

/// Parses `--confidence` (`0.95`).
///
/// # Errors
/// [`RegressionErrorKind::Syntax`] when not a number; [`RegressionErrorKind::ConfidenceOutOfRange`]
/// outside [`MIN_CONFIDENCE`]..=[`MAX_CONFIDENCE`].
pub fn parse_confidence(s: &str) -> Result<f64, RegressionError> {
    let err = |kind| RegressionError {
        flag: "--confidence",
        value: s.to_owned(),
        kind,
    };
    let c: f64 = s
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| err(RegressionErrorKind::Syntax("a number such as 0.95")))?;
    if !(MIN_CONFIDENCE..=MAX_CONFIDENCE).contains(&c) {
        return Err(err(RegressionErrorKind::ConfidenceOutOfRange));
    }
    Ok(c)
}

/// A latency distribution: its distinct values ascending with their cumulative counts (µs), and
/// where its right-censored values (timeouts) start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dist {
    values: Vec<u64>,
    /// `cum[i]`: values ≤ `values[i]`.
    cum: Vec<u64>,
    censored_from: Option<u64>,
}

impl Dist {
    /// The recorded values of an HdrHistogram (each bucket at its highest equivalent value, as
    /// `value_at_quantile` reports it).
    pub fn from_hist(h: &Histogram<u64>) -> Dist {
        let mut d = Dist::default();
        let mut total = 0u64;
        for v in h.iter_recorded() {
            total += v.count_at_value();
            d.values.push(v.value_iterated_to());
            d.cum.push(total);
        }
        d
    }

    /// The values of a slice (any order).
    pub fn from_values(vals: &[u64]) -> Dist {
        let mut sorted = vals.to_vec();
        sorted.sort_unstable();
        let mut d = Dist::default();
        for (i, v) in sorted.iter().enumerate() {
            if d.values.last() == Some(v) {
                if let Some(c) = d.cum.last_mut() {
                    *c = i as u64 + 1;
                }
            } else {
                d.values.push(*v);
                d.cum.push(i as u64 + 1);
            }
        }
        d
    }

    /// The same distribution whose values at or above `from_us` are right-censored (timed-out
    /// reads, recorded at the timeout or later: their latency is only known to be ≥ it).
    pub fn censored_from(mut self, from_us: Option<u64>) -> Dist {
        self.censored_from = from_us;
        self
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    /// No value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of 0-based rank `r` (clamped to the last), µs; 0 when empty.
    pub fn at_rank(&self, r: u64) -> u64 {
        let i = self.cum.partition_point(|&c| c <= r);
        self.values
            .get(i)
            .or(self.values.last())
            .copied()
            .unwrap_or(0)
    }

    /// The nearest-rank quantile `q` (0..=1): the value of rank `ceil(q·n) − 1`; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        self.at_rank(quantile_rank(q, self.len()))
    }

    /// `v` lies in the censored region (at or above where censored values start).
    fn is_censored(&self, v: u64) -> bool {
        self.censored_from.is_some_and(|from| v >= from)
    }
}

/// 0-based nearest rank of quantile `q` among `n` values: `ceil(q·n) − 1`, within `0..n`.
fn quantile_rank(q: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let r = (q.clamp(0.0, 1.0) * n as f64).ceil() as u64;
    r.saturating_sub(1).min(n - 1)
}

/// One bootstrap replicate of `d`'s quantile `q`: the quantile of `n` values drawn from `d` with
/// replacement, drawn through the order statistic (`U₍ₖ₎ ~ Beta(k, n − k + 1)`, rank
/// `⌊n·U₍ₖ₎⌋`), exactly distributed as the full resample's. `d` must not be empty (0 then).
pub fn bootstrap_quantile<R: rand::Rng + ?Sized>(d: &Dist, q: f64, rng: &mut R) -> u64 {
    let n = d.len();
    if n == 0 {
        return 0;
    }
    let k = quantile_rank(q, n) + 1; // 1-based order statistic
    let u = match rand_distr::Beta::new(k as f64, (n - k + 1) as f64) {
        Ok(b) => b.sample(rng),
        Err(_) => 0.5,
    };
    d.at_rank(((u * n as f64) as u64).min(n - 1))
}

/// A two-sided interval of a relative change (0.1 = +10 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// The percentile bootstrap interval of `quantile_q(new) / quantile_q(base) − 1` at
/// `confidence` (two-sided) over `resamples` resamples of each side, drawn from `rng`.
/// Both distributions must hold values (an empty one gives the interval [0, 0]).
pub fn bootstrap_change<R: rand::Rng + ?Sized>(
    base: &Dist,
    new: &Dist,
    q: f64,
    confidence: f64,
    resamples: u32,
    rng: &mut R,
) -> Interval {
    if base.is_empty() || new.is_empty() || resamples == 0 {
        return Interval {
            low: 0.0,
            high: 0.0,
        };
    }
    let mut changes: Vec<f64> = (0..resamples)
        .map(|_| {
            let b = bootstrap_quantile(base, q, rng).max(1) as f64;
            let n = bootstrap_quantile(new, q, rng) as f64;
            n / b - 1.0
        })
        .collect();
    changes.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let b = changes.len();
    let lo = ((tail * b as f64).floor() as usize).min(b - 1);
    let hi = (((1.0 - tail) * b as f64).ceil() as usize)
        .saturating_sub(1)
        .clamp(lo, b - 1);
    Interval {
        low: changes[lo],
        high: changes[hi],
    }
}

/// The Mann–Whitney U test of this run against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RankTest {
    /// U of this run: pairs (base, new) with new > base, plus half the tied pairs.
    pub u: f64,
    /// Standardized U (tie and continuity corrected; > 0: this run ranks higher, slower).
    pub z: f64,
    /// Two-sided p-value (normal approximation).
    pub p: f64,
    /// One-sided p-value of "this run is stochastically slower".
    pub p_slower: f64,
    /// Probability of superiority `U / (n_base · n_new)`: 0.5 for the same distribution.
    pub prob_slower: f64,
}

/// Mann–Whitney U of `new` against `base` with the normal approximation, the tie correction of
/// the variance (`Σ(t³ − t) / (N(N − 1))` over groups of equal values) and a continuity
/// correction of ½. `None` when either side is empty or every value is the same (no ranks to
/// compare).
pub fn mann_whitney(base: &Dist, new: &Dist) -> Option<RankTest> {
    let (n1, n2) = (base.len() as f64, new.len() as f64);
    if base.is_empty() || new.is_empty() {
        return None;
    }
    let count = |d: &Dist, i: usize| d.cum[i] - if i == 0 { 0 } else { d.cum[i - 1] };
    let (mut i, mut j) = (0usize, 0usize);
    let (mut rank_before, mut rank_sum_new, mut ties) = (0f64, 0f64, 0f64);
    while i < base.values.len() || j < new.values.len() {
        let vb = base.values.get(i).copied().unwrap_or(u64::MAX);
        let vn = new.values.get(j).copied().unwrap_or(u64::MAX);
        let v = vb.min(vn);
        let a = if vb == v && i < base.values.len() {
            i += 1;
            count(base, i - 1) as f64
        } else {
            0.0
        };
        let b = if vn == v && j < new.values.len() {
            j += 1;
            count(new, j - 1) as f64
        } else {
            0.0
        };
        let t = a + b;
        rank_sum_new += b * (rank_before + (t + 1.0) / 2.0);
        ties += t * t * t - t;
        rank_before += t;
    }
    let n = n1 + n2;
    let u = rank_sum_new - n2 * (n2 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 || !var.is_finite() {
        return None;
    }
    let sd = var.sqrt();
    let d = u - mean;
    let z = if d.abs() <= 0.5 {
        0.0
    } else {
        (d - 0.5 * d.signum()) / sd
    };
    let upper = |z: f64| 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
    Some(RankTest {
        u,
        z,
        p: (2.0 * upper(z.abs())).min(1.0),
        p_slower: upper((d - 0.5) / sd),
        prob_slower: u / (n1 * n2),
    })
}

/// The verdict on one quantile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The whole interval is above `+noise`: slower.
    Regressed,
    /// The whole interval is below `−noise`: faster.
    Improved,
    /// The interval reaches into ±noise.
    NoChange,
    /// The quantile is censored (timeouts) on both sides: unknown.
    Censored,
}

impl Verdict {
    /// `regressed`, `improved`, `no change`, `censored`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::NoChange => "no change",
            Verdict::Censored => "censored",
        }
    }
}

/// The verdict of an interval against the noise threshold (a fraction, 0.05 = 5 %).
pub fn verdict_of(ci: Interval, noise: f64) -> Verdict {
    if ci.low > noise {
        Verdict::Regressed
    } else if ci.high < -noise {
        Verdict::Improved
    } else {
        Verdict::NoChange
    }
}

/// One compared quantile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuantileChange {
    /// The quantile (0.5, 0.9, 0.99).
    pub q: f64,
    /// The baseline's value, µs.
    pub baseline_us: u64,
    /// This run's value, µs.
    pub us: u64,
    /// Relative change `us / baselineUs − 1` (0.231 = +23.1 %).
    pub change: f64,
    /// The bootstrap interval of the change.
    pub interval: Interval,
    /// The verdict.
    pub verdict: Verdict,
    /// Either side's quantile falls among censored values (timeouts): the value is a lower
    /// bound there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub censored: bool,
}

/// One compared series (single reads, turns, one method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    /// `read` (every single-phase request), `turn`, or a method (`tools/call`).
    pub name: String,
    /// Values in the baseline.
    pub baseline_count: u64,
    /// Values in this run.
    pub count: u64,
    /// p50, p90, p99.
    pub quantiles: Vec<QuantileChange>,
    /// The rank test on the whole distribution (`None`: every value equal).
    pub rank_test: Option<RankTest>,
}

/// The settings of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// `--noise`, a fraction (0.05).
    pub noise: f64,
    /// `--confidence` (0.95).
    pub confidence: f64,
    /// Bootstrap resamples per quantile ([`RESAMPLES`]).
    pub resamples: u32,
    /// Seed of the bootstrap.
    pub seed: u64,
}

impl Default for Settings {
    /// [`DEFAULT_NOISE`], [`DEFAULT_CONFIDENCE`], [`RESAMPLES`], seed 1.
    fn default() -> Self {
        Settings {
            noise: DEFAULT_NOISE,
            confidence: DEFAULT_CONFIDENCE,
            resamples: RESAMPLES,
            seed: 1,
        }
    }
}

/// Compares one series, quantile by quantile ([`QUANTILES`]), drawing its bootstrap from `rng`.
pub fn compare_series<R: rand::Rng + ?Sized>(
    name: &str,
    base: &Dist,
    new: &Dist,
    settings: &Settings,
    rng: &mut R,
) -> Series {
    let quantiles = QUANTILES
        .iter()
        .map(|&q| {
            let (b, n) = (base.quantile(q), new.quantile(q));
            let interval =
                bootstrap_change(base, new, q, settings.confidence, settings.resamples, rng);
            let (cb, cn) = (base.is_censored(b), new.is_censored(n));
            QuantileChange {
                q,
                baseline_us: b,
                us: n,
                change: n as f64 / b.max(1) as f64 - 1.0,
                interval,
                verdict: if cb && cn {
                    Verdict::Censored
                } else {
                    verdict_of(interval, settings.noise)
                },
                censored: cb || cn,
            }
        })
        .collect();
    Series {
        name: name.to_owned(),
        baseline_count: base.len(),
        count: new.len(),
        quantiles,
        rank_test: mann_whitney(base, new),
    }
}

/// The gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateVerdict {
    /// No compared quantile regressed (no change, improvements, censored).
    Pass,
    /// At least one compared quantile regressed beyond the noise.
    Regressed,
}

/// The `regression` member of report.json: the comparison of this run with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Regression {
    /// The baseline as given (`--baseline`).
    pub baseline: String,
    /// The settings.
    pub settings: Settings,
    /// The verdict.
    pub verdict: GateVerdict,
    /// Quantiles that regressed (`read p99`).
    pub regressed: Vec<String>,
    /// The compared series.
    pub series: Vec<Series>,
    /// What was not compared, and why (`turn: 4 reads per turn, baseline 8`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<String>,
}

/// One series to compare: its name and the two distributions.
pub struct Pair<'a> {
    /// `read`, `turn`, or a method.
    pub name: &'a str,
    /// The baseline's values.
    pub base: &'a Dist,
    /// This run's values.
    pub new: &'a Dist,
}

/// Compares every pair with one bootstrap generator seeded from `settings.seed` (same inputs,
/// same seed: the same intervals). A pair with an empty side is listed in `not_compared`.
pub fn compare(baseline: &str, pairs: &[Pair<'_>], settings: Settings) -> Regression {
    let mut rng = rand::rngs::StdRng::seed_from_u64(settings.seed);
    let mut series = Vec::new();
    let mut not_compared = Vec::new();
    for p in pairs {
        if p.base.is_empty() || p.new.is_empty() {
            not_compared.push(format!(
                "{}: no values ({} in the baseline, {} in this run)",
                p.name,
                p.base.len(),
                p.new.len()
            ));
            continue;
        }
        series.push(compare_series(p.name, p.base, p.new, &settings, &mut rng));
    }
    let regressed: Vec<String> = series
        .iter()
        .flat_map(|s| {
            s.quantiles
                .iter()
                .filter(|q| q.verdict == Verdict::Regressed)
                .map(|q| format!("{} {}", s.name, q_name(q.q)))
        })
        .collect();
    Regression {
        baseline: baseline.to_owned(),
        settings,
        verdict: if regressed.is_empty() {
            GateVerdict::Pass
        } else {
            GateVerdict::Regressed
        },
        regressed,
        series,
        not_compared,
    }
}

/// `p50`, `p90`, `p99`, `p99.9`.
pub fn q_name(q: f64) -> String {
    let pct = format!("{:.1}", q * 100.0);
    format!("p{}", pct.trim_end_matches(".0"))
}

/// `+23.1 %`.
fn pct(f: f64) -> String {
    format!("{:+.1} %", f * 100.0)
}

/// The criterion-style lines of a comparison, one per quantile
/// (`read p99  +23.1 % [+18.0 %, +29.4 %]  regressed`) and one per rank test, after a header
/// naming the baseline and the settings and before the verdict line.
pub fn text(r: &Regression) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nregression gate against {} (noise ±{:.1} %, confidence {}, {} bootstrap resamples, seed {})",
        r.baseline,
        r.settings.noise * 100.0,
        r.settings.confidence,
        r.settings.resamples,
        r.settings.seed
    );
    let width = r.series.iter().map(|s| s.name.len() + 6).max().unwrap_or(8);
    for se in &r.series {
        for q in &se.quantiles {
            let label = format!("{} {}", se.name, q_name(q.q));
            let _ = writeln!(
                s,
                "  {label:<width$}  {:>9} [{}, {}]  {}{}",
                pct(q.change),
                pct(q.interval.low),
                pct(q.interval.high),
                q.verdict.as_str(),
                if q.censored && q.verdict != Verdict::Censored {
                    " (censored: a bound)"
                } else {
                    ""
                }
            );
        }
        if let Some(t) = &se.rank_test {
            let label = format!("{} ranks", se.name);
            let _ = writeln!(
                s,
                "  {label:<width$}  P(slower) {:.3}, p = {:.2e}  {}",
                t.prob_slower,
                t.p,
                rank_word(t, r.settings.confidence)
            );
        }
    }
    for n in &r.not_compared {
        let _ = writeln!(s, "  not compared: {n}");
    }
    let _ = writeln!(
        s,
        "regression gate: {}",
        match r.verdict {
            GateVerdict::Pass => "pass".to_owned(),
            GateVerdict::Regressed => format!("REGRESSED ({})", r.regressed.join(", ")),
        }
    );
    s
}

/// `shifted slower`, `shifted faster` or `no shift` at `confidence` (two-sided).
fn rank_word(t: &RankTest, confidence: f64) -> &'static str {
    if t.p >= 1.0 - confidence {
        "no shift"
    } else if t.z > 0.0 {
        "shifted slower"
    } else {
        "shifted faster"
    }
}

/// The JUnit `<testsuite name="mcptape bench regression">` of a comparison: one
/// `<testcase classname="mcptape.regression" name="read p99">` per compared quantile, a
/// regressed one holding `<failure type="regression" message="+23.1 % [+18.0 %, +29.4 %]"/>`,
/// the others the same line in `<system-out>`.
pub fn junit_suite(r: &Regression) -> TestSuite {
    let mut cases = Vec::new();
    for se in &r.series {
        for q in &se.quantiles {
            let msg = format!(
                "{} [{}, {}] {}: {} µs, baseline {} µs",
                pct(q.change),
                pct(q.interval.low),
                pct(q.interval.high),
                q.verdict.as_str(),
                q.us,
                q.baseline_us
            );
            let case = TestCase::new("mcptape.regression", format!("{} {}", se.name, q_name(q.q)));
            cases.push(if q.verdict == Verdict::Regressed {
                TestCase {
                    failure: Some(Failure::new("regression", msg)),
                    ..case
                }
            } else {
                TestCase {
                    system_out: Some(msg),
                    ..case
                }
            });
        }
    }
    TestSuite {
        name: "mcptape bench regression".into(),
        properties: Vec::new(),
        cases,
    }
}

/// The JUnit XML of `slo.xml` with the SLO suite ([`crate::slo::junit_suite`] of `slo`; none
/// when `slo` is empty, without `--slo`) and the regression suite ([`junit_suite`]) side by
/// side under one `<testsuites name="mcptape bench">` ([`document`]), whose totals are the sums.
pub fn junit_xml(slo: &[crate::slo::SloCheck], r: &Regression) -> String {
    let slo_suite = (!slo.is_empty()).then(|| crate::slo::junit_suite(slo));
    let suites: Vec<TestSuite> = slo_suite.into_iter().chain([junit_suite(r)]).collect();
    document("mcptape bench", &suites)
}

/// The `section#regression` of report.html: the verdict and one row per compared quantile
/// (`tr.regressed` for a regression), then the rank tests.
pub fn html_section(r: &Regression) -> String {
    let e = crate::render::html::html_escape;
    let mut s = String::from(
        "<section id=\"regression\"><h2>Regression gate</h2>\n<style>tr.regressed td{background:#fde2e2}tr.improved td{background:#e2f5e2}</style>\n",
    );
    let (class, word) = match r.verdict {
        GateVerdict::Pass => ("pass", "PASS".to_owned()),
        GateVerdict::Regressed => ("fail", format!("REGRESSED: {}", r.regressed.join(", "))),
    };
    let _ = writeln!(s, "<p class=\"verdict {class}\">{}</p>", e(&word));
    let _ = writeln!(
        s,
        "<p class=\"muted\">against {}: noise ±{:.1} %, confidence {}, {} bootstrap resamples (seed {})</p>",
        e(&r.baseline),
        r.settings.noise * 100.0,
        r.settings.confidence,
        r.settings.resamples,
        r.settings.seed
    );
    s.push_str("<table class=\"regression\"><tr><th>series</th><th>quantile</th><th>baseline</th><th>this run</th><th>change</th><th>interval</th><th>verdict</th></tr>\n");
    for se in &r.series {
        for q in &se.quantiles {
            let _ = writeln!(
                s,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{:.3} ms</td><td>{:.3} ms</td><td>{}</td><td>[{}, {}]</td><td>{}</td></tr>",
                q.verdict.as_str().replace(' ', "-"),
                e(&se.name),
                q_name(q.q),
                q.baseline_us as f64 / 1000.0,
                q.us as f64 / 1000.0,
                pct(q.change),
                pct(q.interval.low),
                pct(q.interval.high),
                q.verdict.as_str()
            );
        }
    }
    s.push_str("</table>\n<ul class=\"ranks\">\n");
    for se in &r.series {
        if let Some(t) = &se.rank_test {
            let _ = writeln!(
                s,
                "<li>{}: Mann–Whitney P(slower) {:.3}, p = {:.2e}, {}</li>",
                e(&se.name),
                t.prob_slower,
                t.p,
                rank_word(t, r.settings.confidence)
            );
        }
    }
    for n in &r.not_compared {
        let _ = writeln!(s, "<li>not compared: {}</li>", e(n));
    }
    s.push_str("</ul></section>\n");
    s
}

/// What must match between a baseline and this run for a comparison to mean anything: the
/// transcript (as named), the embedded server's latency model, the load and the read timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunIdentity {
    /// Transcript path(s) as the report names them.
    pub transcript: String,
    /// Latency model of the embedded server (`None`: a live target).
    pub latency: Option<String>,
    /// Load of the single phase (`closed-loop, concurrency 1`).
    pub load: String,
    /// `--timeout`, µs.
    pub timeout_us: u64,
}

/// Whether two reports' transcript lists (`a.jsonl, dir/b.jsonl`, as [`RunIdentity::transcript`]
/// and `HlogMeta::transcript` name them) name the same files: compared by file name, so
/// `corpus/t.jsonl`, `./corpus/t.jsonl` and `/home/ci/repo/corpus/t.jsonl` (a baseline made in
/// another checkout or on another runner) are the same transcript.
pub fn same_transcripts(a: &str, b: &str) -> bool {
    let names = |s: &str| -> Vec<String> {
        s.split(", ")
            .map(|p| {
                std::path::Path::new(p)
                    .file_name()
                    .map_or_else(|| p.to_owned(), |f| f.to_string_lossy().into_owned())
            })
            .collect()
    };
    names(a) == names(b)
}

/// The first difference between a baseline's identity and this run's, as `what (baseline X,
/// this run Y)`; `None` when they match. Transcripts compare by file name
/// ([`same_transcripts`]).
pub fn identity_mismatch(base: &RunIdentity, cur: &RunIdentity) -> Option<String> {
    let model = |m: &Option<String>| m.clone().unwrap_or_else(|| "none (live target)".into());
    if !same_transcripts(&base.transcript, &cur.transcript) {
        return Some(format!(
            "another transcript (baseline {}, this run {})",
            base.transcript, cur.transcript
        ));
    }
    if base.latency != cur.latency {
        return Some(format!(
            "another latency model (baseline {}, this run {})",
            model(&base.latency),
            model(&cur.latency)
        ));
    }
    if base.load != cur.load {
        return Some(format!(
            "another load (baseline {}, this run {})",
            base.load, cur.load
        ));
    }
    if base.timeout_us != cur.timeout_us {
        return Some(format!(
            "another timeout (baseline {} ms, this run {} ms)",
            base.timeout_us as f64 / 1000.0,
            cur.timeout_us as f64 / 1000.0
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// `n` log-normal latencies (median `median_us`, σ 0.5), scaled by `scale`, from `rng`.
    fn lognormal(n: usize, median_us: f64, scale: f64, rng: &mut impl Rng) -> Vec<u64> {
        let d = rand_distr::LogNormal::new(median_us.ln(), 0.5).unwrap();
        (0..n)
            .map(|_| (d.sample(rng) * scale).round().max(1.0) as u64)
            .collect()
    }

    fn settings(noise: f64, resamples: u32) -> Settings {
        Settings {
            noise,
            confidence: 0.95,
            resamples,
            seed: 7,
        }
    }

    #[test]
    fn nearest_rank_quantiles_of_values_and_of_a_histogram_agree() {
        let vals: Vec<u64> = (1..=100).collect();
        let d = Dist::from_values(&vals);
        assert_eq!(
            (d.len(), d.quantile(0.5), d.quantile(0.9), d.quantile(0.99)),
            (100, 50, 90, 99)
        );
        assert_eq!((d.quantile(0.0), d.quantile(1.0)), (1, 100));
        let mut h = crate::stats::new_hist();
        for v in &vals {
            h.record(*v).unwrap();
        }
        let dh = Dist::from_hist(&h);
        assert_eq!(dh.len(), 100);
        for q in QUANTILES {
            assert_eq!(dh.quantile(q), h.value_at_quantile(q), "q {q}");
        }
        // Repeated values: ranks are counted, not distinct values.
        let d = Dist::from_values(&[5, 1, 5, 5, 9]);
        assert_eq!(
            (d.at_rank(0), d.at_rank(1), d.at_rank(3), d.at_rank(4)),
            (1, 5, 5, 9)
        );
        assert_eq!(Dist::from_values(&[]).quantile(0.5), 0);
    }

    /// The Beta shortcut draws the resample quantile with the same distribution as drawing the
    /// whole resample: frequencies of each rank agree within sampling error.
    #[test]
    fn beta_order_statistic_bootstrap_matches_a_full_resample() {
        let vals: Vec<u64> = (0..20).map(|i| 100 + i * 10).collect();
        let d = Dist::from_values(&vals);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        const DRAWS: usize = 40_000;
        for q in [0.5, 0.9] {
            let k = quantile_rank(q, 20) as usize;
            let mut full = [0usize; 20];
            let mut beta = [0usize; 20];
            for _ in 0..DRAWS {
                let mut r: Vec<u64> = (0..20).map(|_| vals[rng.random_range(0..20)]).collect();
                r.sort_unstable();
                full[((r[k] - 100) / 10) as usize] += 1;
                beta[((bootstrap_quantile(&d, q, &mut rng) - 100) / 10) as usize] += 1;
            }
            for i in 0..20 {
                let (a, b) = (full[i] as f64 / DRAWS as f64, beta[i] as f64 / DRAWS as f64);
                assert!((a - b).abs() < 0.015, "q {q} rank {i}: full {a}, beta {b}");
            }
        }
    }

    #[test]
    fn mann_whitney_matches_the_textbook_values_with_and_without_ties() {
        // By hand (as scipy.stats.mannwhitneyu(method="asymptotic") computes it): U 9, σ² =
        // 9/12·7, z = (9 − 4.5 − 0.5)/σ = 1.7457, p = erfc(z/√2) = 0.0808556.
        let t = mann_whitney(
            &Dist::from_values(&[1, 2, 3]),
            &Dist::from_values(&[4, 5, 6]),
        )
        .unwrap();
        assert_eq!(t.u, 9.0);
        assert!((t.p - 0.080_855_6).abs() < 1e-6, "{t:?}");
        assert_eq!(t.prob_slower, 1.0);
        assert!(t.z > 0.0 && t.p_slower < t.p);
        // Ties: base [1,1,2], new [1,2,2]: mid-ranks 2 (three 1s) and 5 (three 2s), rank sum of
        // new 2 + 5 + 5 = 12, U = 12 − 6 = 6; σ² = 9/12·(7 − 48/30) = 4.05,
        // z = (6 − 4.5 − 0.5)/σ = 0.4969, p = 0.6192568.
        let t = mann_whitney(
            &Dist::from_values(&[1, 1, 2]),
            &Dist::from_values(&[1, 2, 2]),
        )
        .unwrap();
        assert_eq!(t.u, 6.0);
        assert!((t.p - 0.619_256_8).abs() < 1e-6, "{t:?}");
        // Every value equal: no ranks to compare.
        assert!(mann_whitney(&Dist::from_values(&[7, 7]), &Dist::from_values(&[7])).is_none());
        assert!(mann_whitney(&Dist::from_values(&[]), &Dist::from_values(&[7])).is_none());
    }

    #[test]
    fn a_known_shift_is_found_at_every_quantile_and_by_the_ranks() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let base = Dist::from_values(&lognormal(4_000, 2_000.0, 1.0, &mut rng));
        let slower = Dist::from_values(&lognormal(4_000, 2_000.0, 1.3, &mut rng));
        let r = compare(
            "base",
            &[Pair {
                name: "read",
                base: &base,
                new: &slower,
            }],
            settings(DEFAULT_NOISE, 2_000),
        );
        assert_eq!(r.verdict, GateVerdict::Regressed);
        assert_eq!(r.regressed, ["read p50", "read p90", "read p99"]);
        for q in &r.series[0].quantiles {
            assert!(
                q.interval.low <= q.change && q.change <= q.interval.high,
                "{q:?}"
            );
            assert!((0.15..0.45).contains(&q.change), "{q:?}");
        }
        let t = r.series[0].rank_test.unwrap();
        assert!(t.p < 1e-12 && t.prob_slower > 0.6, "{t:?}");
        // The other way round it is an improvement, and the gate passes.
        let r = compare(
            "base",
            &[Pair {
                name: "read",
                base: &slower,
                new: &base,
            }],
            settings(DEFAULT_NOISE, 2_000),
        );
        assert_eq!(r.verdict, GateVerdict::Pass);
        assert!(
            r.series[0]
                .quantiles
                .iter()
                .all(|q| q.verdict == Verdict::Improved),
            "{r:?}"
        );
        assert!(text(&r).contains("regression gate: pass"));
    }

    /// Same distribution on both sides, 1,000 seeded trials, noise 0 (the interval alone
    /// decides): a 95 % two-sided interval misses 0 in about 5 % of trials; the observed rate
    /// stays at or under 8 % for each quantile, and the rank test's too. (200 values a side and
    /// 200 resamples keep the 1,000 trials cheap.)
    #[test]
    fn no_shift_is_found_at_the_stated_false_positive_rate_over_1000_trials() {
        const TRIALS: usize = 1_000;
        let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
        let mut false_pos = [0usize; 3];
        let mut rank_false_pos = 0usize;
        let mut gate_false_pos = 0usize;
        for _ in 0..TRIALS {
            let a = Dist::from_values(&lognormal(200, 2_000.0, 1.0, &mut rng));
            let b = Dist::from_values(&lognormal(200, 2_000.0, 1.0, &mut rng));
            let se = compare_series("read", &a, &b, &settings(0.0, 200), &mut rng);
            for (i, q) in se.quantiles.iter().enumerate() {
                if q.verdict != Verdict::NoChange {
                    false_pos[i] += 1;
                }
            }
            if se.rank_test.unwrap().p < 0.05 {
                rank_false_pos += 1;
            }
            // The same intervals against the default 5 % noise: what the gate would fail on.
            if se
                .quantiles
                .iter()
                .any(|q| verdict_of(q.interval, DEFAULT_NOISE) == Verdict::Regressed)
            {
                gate_false_pos += 1;
            }
        }
        eprintln!(
            "false positives of {TRIALS}: p50 {}, p90 {}, p99 {}, ranks {rank_false_pos}, gate at 5 % noise {gate_false_pos}",
            false_pos[0], false_pos[1], false_pos[2]
        );
        let bound = TRIALS * 8 / 100;
        for (i, fp) in false_pos.iter().enumerate() {
            assert!(*fp <= bound, "{}: {fp} of {TRIALS}", q_name(QUANTILES[i]));
        }
        assert!(
            rank_false_pos <= bound,
            "ranks: {rank_false_pos} of {TRIALS}"
        );
        assert!(
            gate_false_pos <= bound,
            "gate: {gate_false_pos} of {TRIALS}"
        );
    }

    #[test]
    fn same_seed_same_intervals() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let a = Dist::from_values(&lognormal(300, 1_000.0, 1.0, &mut rng));
        let b = Dist::from_values(&lognormal(300, 1_000.0, 1.1, &mut rng));
        let run = |seed| {
            compare(
                "x",
                &[Pair {
                    name: "read",
                    base: &a,
                    new: &b,
                }],
                Settings {
                    seed,
                    ..settings(DEFAULT_NOISE, 500)
                },
            )
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9).series[0].quantiles, run(10).series[0].quantiles);
    }

    #[test]
    fn quantiles_censored_on_both_sides_are_censored_not_no_change() {
        // Half the reads timed out at 5 s on both sides: p90 and p99 are censored.
        let mut v: Vec<u64> = (1..=50).map(|i| i * 100).collect();
        v.extend(std::iter::repeat_n(5_000_000, 50));
        let a = Dist::from_values(&v).censored_from(Some(5_000_000));
        let b = Dist::from_values(&v).censored_from(Some(5_000_000));
        let se = compare_series(
            "read",
            &a,
            &b,
            &settings(DEFAULT_NOISE, 200),
            &mut rand::rng(),
        );
        assert_eq!(se.quantiles[0].verdict, Verdict::NoChange);
        assert!(!se.quantiles[0].censored);
        for q in &se.quantiles[1..] {
            assert_eq!((q.verdict, q.censored), (Verdict::Censored, true), "{q:?}");
        }
        // Censored only in this run: the bound is a lower bound and a regression stands.
        let fast = Dist::from_values(&(1..=100).map(|i| i * 100).collect::<Vec<_>>());
        let se = compare_series(
            "read",
            &fast,
            &b,
            &settings(DEFAULT_NOISE, 200),
            &mut rand::rng(),
        );
        assert_eq!(se.quantiles[2].verdict, Verdict::Regressed);
        assert!(se.quantiles[2].censored);
    }

    #[test]
    fn text_lines_are_criterion_style_and_name_the_regressed_quantiles() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let a = Dist::from_values(&lognormal(2_000, 1_000.0, 1.0, &mut rng));
        let b = Dist::from_values(&lognormal(2_000, 1_000.0, 1.5, &mut rng));
        let r = compare(
            "runs/main",
            &[
                Pair {
                    name: "read",
                    base: &a,
                    new: &b,
                },
                Pair {
                    name: "turn",
                    base: &a,
                    new: &Dist::default(),
                },
            ],
            settings(DEFAULT_NOISE, 1_000),
        );
        let t = text(&r);
        let line = t
            .lines()
            .find(|l| l.trim_start().starts_with("read p99"))
            .unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        // read p99 +NN.N % [+NN.N %, +NN.N %] regressed
        assert_eq!(words.len(), 9, "{line}");
        assert!(words[2].starts_with('+') && words[3] == "%" && words[4].starts_with("[+"));
        assert_eq!(words[8], "regressed");
        assert!(t.contains("not compared: turn: no values (2000 in the baseline, 0 in this run)"));
        assert!(
            t.ends_with("regression gate: REGRESSED (read p50, read p90, read p99)\n"),
            "{t}"
        );
        let xml = junit_xml(&[], &r);
        assert!(xml.contains(
            "<testsuites name=\"mcptape bench\" tests=\"3\" failures=\"3\" errors=\"0\">"
        ));
        assert_eq!(xml.matches("<failure type=\"regression\"").count(), 3);
        let html = html_section(&r);
        assert_eq!(html.matches("<tr class=\"regressed\">").count(), 3);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["verdict"], "regressed");
        assert_eq!(json["series"][0]["quantiles"][2]["q"], 0.99);
        assert!(
            json["series"][0]["quantiles"][2]["interval"]["low"]
                .as_f64()
                .unwrap()
                > 0.05
        );
    }

    #[test]
    fn junit_xml_keeps_the_slo_suite_beside_the_regression_suite() {
        let d = Dist::from_values(&[1_000, 2_000, 3_000]);
        let r = compare(
            "b",
            &[Pair {
                name: "read",
                base: &d,
                new: &d,
            }],
            settings(DEFAULT_NOISE, 100),
        );
        let checks = [crate::slo::SloCheck {
            item: "read.p99<1ms".into(),
            limit: "1 ms".into(),
            measured: "3 ms".into(),
            pass: false,
        }];
        let xml = junit_xml(&checks, &r);
        assert!(
            xml.contains(
                "<testsuites name=\"mcptape bench\" tests=\"4\" failures=\"1\" errors=\"0\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("<testsuite name=\"mcptape bench slo\""),
            "{xml}"
        );
        assert!(
            xml.contains("<testsuite name=\"mcptape bench regression\" tests=\"3\" failures=\"0\"")
        );
        assert_eq!(xml.matches("</testsuites>").count(), 1);
        assert_eq!(xml.matches("<?xml").count(), 1);
    }

    #[test]
    fn noise_and_confidence_flags_at_and_past_their_limits() {
        assert_eq!(parse_noise("5%"), Ok(0.05));
        assert_eq!(parse_noise("0%"), Ok(0.0));
        assert_eq!(parse_noise("100%"), Ok(MAX_NOISE));
        let e = parse_noise("100.1%").unwrap_err();
        assert_eq!(e.kind, RegressionErrorKind::NoiseOutOfRange);
        assert_eq!(e.to_string(), "--noise 100.1%: must be 0%..=100%");
        assert_eq!(
            parse_noise("-1%").unwrap_err().kind,
            RegressionErrorKind::NoiseOutOfRange
        );
        assert!(matches!(
            parse_noise("5").unwrap_err().kind,
            RegressionErrorKind::Syntax(_)
        ));
        assert!(matches!(
            parse_noise("NaN%").unwrap_err().kind,
            RegressionErrorKind::Syntax(_)
        ));
        assert_eq!(parse_confidence("0.95"), Ok(0.95));
        assert_eq!(parse_confidence("0.5"), Ok(MIN_CONFIDENCE));
        assert_eq!(parse_confidence("0.999"), Ok(MAX_CONFIDENCE));
        for bad in ["0.49", "0.9991", "1"] {
            assert_eq!(
                parse_confidence(bad).unwrap_err().kind,
                RegressionErrorKind::ConfidenceOutOfRange,
                "{bad}"
            );
        }
        assert!(matches!(
            parse_confidence("95%").unwrap_err().kind,
            RegressionErrorKind::Syntax(_)
        ));
    }

    #[test]
    fn the_same_transcript_under_another_path_is_the_same_transcript() {
        assert!(same_transcripts(
            "corpus/transcripts/everything-stdio.jsonl",
            "./corpus/transcripts/everything-stdio.jsonl"
        ));
        assert!(same_transcripts(
            "a.jsonl, corpus/b.jsonl",
            "/home/ci/repo/a.jsonl, /tmp/x/b.jsonl"
        ));
        assert!(!same_transcripts("corpus/a.jsonl", "corpus/b.jsonl"));
        assert!(!same_transcripts("a.jsonl, b.jsonl", "a.jsonl"));
    }

    #[test]
    fn a_baseline_of_another_transcript_model_load_or_timeout_is_named() {
        let base = RunIdentity {
            transcript: "a.jsonl".into(),
            latency: Some("fixed:1ms".into()),
            load: "closed-loop, concurrency 1".into(),
            timeout_us: 5_000_000,
        };
        assert_eq!(identity_mismatch(&base, &base.clone()), None);
        let other = |f: &dyn Fn(&mut RunIdentity)| {
            let mut c = base.clone();
            f(&mut c);
            identity_mismatch(&base, &c).unwrap()
        };
        assert_eq!(
            other(&|c| c.transcript = "b.jsonl".into()),
            "another transcript (baseline a.jsonl, this run b.jsonl)"
        );
        assert_eq!(
            other(&|c| c.latency = None),
            "another latency model (baseline fixed:1ms, this run none (live target))"
        );
        assert!(other(&|c| c.load = "open-loop 200/s".into()).starts_with("another load"));
        assert_eq!(
            other(&|c| c.timeout_us = 1_000_000),
            "another timeout (baseline 5000 ms, this run 1000 ms)"
        );
    }
}
