//! `--slo` gates: the one grammar that `mcptape bench --slo` evaluates against a
//! [`BenchReport`] and `mcptape k6 --slo` turns into k6 `thresholds`.
//!
//! Syntax: comma-separated items, at most [`MAX_SLO_ITEMS`], the whole spec at most
//! [`MAX_SLO_SPEC_BYTES`] bytes:
//! - `read.STAT<DURATION`, `turn.STAT<DURATION`: STAT is `p50`, `p90`, `p99`, `p99.9` (any
//!   `pNN` with 0 < NN < 100), `max` or `mean`; DURATION a number > 0 with its unit `us`
//!   (`µs`), `ms` or `s`; the operator `<` or `<=`.
//! - `errors<PERCENT%`: a percentage in 0..=100.
//!
//! Example: `read.p99<50ms,turn.p99<800ms,errors<1%`. The k6 mapping (Grafana k6 docs ›
//! Using k6 › Thresholds: `p(99)<50`, `max<=800`, `rate<0.01`) is in `mcptape-export`.
//!
//! Evaluation ([`evaluate`]) against a [`BenchReport`] (µs):
//! - `read` is the `single` view: every single request (every replayed method since issue 27;
//!   `bench --methods reads` for reads only), error answers included, timed-out requests
//!   right-censored at the `--timeout`.
//! - `turn` is the `turn` view: the completion time of each parallel-read turn (a turn that
//!   hits the deadline counts at the deadline).
//! - `errors` is the share of reads sent in both phases (single reads and reads inside turns)
//!   whose outcome differs from the recorded one or that got no answer: reads not answered
//!   with a result (error answers, timeouts — turn reads: stragglers at the deadline — and
//!   reads lost with the connection) less the error answers answered as recorded
//!   (`expectedErrorAnswers`: a read whose recording is an error answer, answered with the
//!   recorded code; an injected fault, another code, a timeout or a lost read on such a
//!   request counts against the gate). The k6 `mcp_unexpected` rate means the same.
//! - **Censoring rule**: a censored quantile is known only to be ≥ the censor point
//!   (`censored.boundUs`). Against a bound above the censor point its true value may or may
//!   not be below it; against a bound at or below, it is not. Either way a censored quantile
//!   FAILS a `<`/`<=` item (measured prints `> B ms`): a gate never passes on a value it does
//!   not know. A `mean` over a view holding censored values is a lower bound and fails the
//!   same way.
//! - An item over an empty view (no read, no turn, nothing sent) fails with `no reads` /
//!   `no turns` / `nothing sent`: never a silent pass.
//! - Only the statistics the report holds are evaluable (`p50`, `p90`, `p99`, `p99.9`, `max`,
//!   `mean`): [`check_evaluable`] refuses others before a run.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::render::junit::{Failure, TestCase, TestSuite, document};
use crate::stats::{BenchReport, Quantiles};

/// Most items one `--slo` takes.
pub const MAX_SLO_ITEMS: usize = 32;

/// Longest `--slo` spec, bytes.
pub const MAX_SLO_SPEC_BYTES: usize = 4096;

/// File name of the JUnit XML that `mcptape bench --slo … --out DIR` writes beside
/// `report.json`.
pub const JUNIT_FILE: &str = "slo.xml";

/// An `--slo` spec or item that was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--slo {item:?}: {kind}")]
pub struct SloError {
    /// What is wrong.
    pub kind: SloErrorKind,
    /// The item as typed (the whole spec for [`SloErrorKind::TooManyItems`] and
    /// [`SloErrorKind::TooLong`]).
    pub item: String,
    /// Index of the item in the spec (from 0; 0 for whole-spec errors).
    pub index: usize,
}

/// What is wrong with an `--slo` item.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SloErrorKind {
    /// More than [`MAX_SLO_ITEMS`] items (the count given).
    #[error("{0} items: at most {MAX_SLO_ITEMS}")]
    TooManyItems(usize),
    /// The spec is longer than [`MAX_SLO_SPEC_BYTES`] (the length given).
    #[error("{0} bytes: at most {MAX_SLO_SPEC_BYTES}")]
    TooLong(usize),
    /// The spec has no item.
    #[error("no item (read.p99<50ms, turn.p99<800ms, errors<1%)")]
    Empty,
    /// No `<` or `<=`.
    #[error("expected `<` or `<=` (read.p99<50ms, errors<1%)")]
    NoOperator,
    /// The left side is not `read.STAT`, `turn.STAT` or `errors`.
    #[error("the metric is read, turn or errors (read.STAT, turn.STAT, errors)")]
    UnknownMetric,
    /// The statistic is not `pNN` (0 < NN < 100), `max` or `mean`.
    #[error("the statistic is p50, p90, p99, p99.9 (any pNN), max or mean")]
    UnknownStatistic,
    /// The bound is not a duration > 0 with its unit.
    #[error("the bound is a duration > 0 with its unit: 500us, 50ms, 1.5s")]
    BadDuration,
    /// `errors` bound is not a percentage in 0..=100.
    #[error("errors takes a percentage in 0..100 (errors<1%)")]
    BadPercent,
    /// The statistic is valid but the bench report does not hold it (only p50, p90, p99,
    /// p99.9, max, mean).
    #[error("bench reports p50, p90, p99, p99.9, max and mean only")]
    NotInReport,
}

/// Which distribution an item bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Single reads (`read.*`).
    Read,
    /// Parallel-read turns (`turn.*`).
    Turn,
}

/// The statistic of a latency item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// A percentile, 0 < p < 100 (`p99` → 99.0, `p99.9` → 99.9).
    Percentile(f64),
    /// The largest value.
    Max,
    /// The mean.
    Mean,
}

/// `<` or `<=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Strictly below.
    Lt,
    /// At or below.
    Le,
}

impl Op {
    /// `<` / `<=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
        }
    }

    fn holds(self, measured: f64, limit: f64) -> bool {
        match self {
            Op::Lt => measured < limit,
            Op::Le => measured <= limit,
        }
    }
}

/// What one item bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// A latency statistic of `metric` below `limit_us` (µs, > 0, finite).
    Latency {
        /// The distribution.
        metric: Metric,
        /// The statistic.
        stat: Stat,
        /// The limit, µs.
        limit_us: f64,
    },
    /// The share of reads not answered with a result below `percent` (0..=100).
    Errors {
        /// The limit, %.
        percent: f64,
    },
}

/// One parsed `--slo` item.
#[derive(Debug, Clone, PartialEq)]
pub struct SloItem {
    /// The item as typed (trimmed), e.g. `read.p99<50ms`.
    pub text: String,
    /// What it bounds.
    pub bound: Bound,
    /// The operator.
    pub op: Op,
}

/// The verdict of one item, as `report.json` holds it (`slo: [{item, limit, measured, pass}]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SloCheck {
    /// The item as typed (`read.p99<50ms`).
    pub item: String,
    /// The limit with its operator (`< 50 ms`, `< 1 %`).
    pub limit: String,
    /// The measured value (`1.234 ms`, `> 5000 ms` when censored, `0.00 %`, `no reads`).
    pub measured: String,
    /// The item holds.
    pub pass: bool,
}

fn err(kind: SloErrorKind, item: &str, index: usize) -> SloError {
    SloError {
        kind,
        item: item.to_owned(),
        index,
    }
}

/// Parses `spec` (see the module doc).
///
/// # Errors
/// [`SloError`] naming the item and its index: [`SloErrorKind::TooLong`],
/// [`SloErrorKind::TooManyItems`], [`SloErrorKind::Empty`], [`SloErrorKind::NoOperator`],
/// [`SloErrorKind::UnknownMetric`], [`SloErrorKind::UnknownStatistic`],
/// [`SloErrorKind::BadDuration`], [`SloErrorKind::BadPercent`].
pub fn parse(spec: &str) -> Result<Vec<SloItem>, SloError> {
    if spec.len() > MAX_SLO_SPEC_BYTES {
        return Err(err(SloErrorKind::TooLong(spec.len()), spec, 0));
    }
    let items: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.len() > MAX_SLO_ITEMS {
        return Err(err(SloErrorKind::TooManyItems(items.len()), spec, 0));
    }
    if items.is_empty() {
        return Err(err(SloErrorKind::Empty, spec, 0));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_item(item).map_err(|k| err(k, item, i)))
        .collect()
}

fn parse_item(item: &str) -> Result<SloItem, SloErrorKind> {
    let (lhs, op, rhs) = if let Some((l, r)) = item.split_once("<=") {
        (l, Op::Le, r)
    } else if let Some((l, r)) = item.split_once('<') {
        (l, Op::Lt, r)
    } else {
        return Err(SloErrorKind::NoOperator);
    };
    let (lhs, rhs) = (lhs.trim(), rhs.trim());
    let bound = if lhs == "errors" {
        let p: f64 = rhs
            .strip_suffix('%')
            .and_then(|p| p.trim().parse().ok())
            .ok_or(SloErrorKind::BadPercent)?;
        if !(0.0..=100.0).contains(&p) {
            return Err(SloErrorKind::BadPercent);
        }
        Bound::Errors { percent: p }
    } else {
        let (metric, stat) = lhs.split_once('.').ok_or(SloErrorKind::UnknownMetric)?;
        let metric = match metric {
            "read" => Metric::Read,
            "turn" => Metric::Turn,
            _ => return Err(SloErrorKind::UnknownMetric),
        };
        let stat = match stat {
            "max" => Stat::Max,
            "mean" => Stat::Mean,
            s => match s.strip_prefix('p').map(str::parse::<f64>) {
                Some(Ok(q)) if q > 0.0 && q < 100.0 => Stat::Percentile(q),
                _ => return Err(SloErrorKind::UnknownStatistic),
            },
        };
        let limit_us = parse_us(rhs).ok_or(SloErrorKind::BadDuration)?;
        Bound::Latency {
            metric,
            stat,
            limit_us,
        }
    };
    Ok(SloItem {
        text: item.to_owned(),
        bound,
        op,
    })
}

/// `500us` / `50ms` / `1.5s` → µs (> 0 and finite), else `None`.
fn parse_us(s: &str) -> Option<f64> {
    let (n, mult) = if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e6)
    } else {
        return None;
    };
    let v: f64 = n.trim().parse().ok()?;
    let us = v * mult;
    (us.is_finite() && us > 0.0).then_some(us)
}

/// Refuses items whose statistic a [`BenchReport`] does not hold (`read.p95`): bench checks
/// this before a run.
///
/// # Errors
/// [`SloErrorKind::NotInReport`] naming the item.
pub fn check_evaluable(items: &[SloItem]) -> Result<(), SloError> {
    for (i, it) in items.iter().enumerate() {
        if let Bound::Latency {
            stat: Stat::Percentile(p),
            ..
        } = it.bound
            && report_quantile(&Quantiles::default(), p).is_none()
        {
            return Err(err(SloErrorKind::NotInReport, &it.text, i));
        }
    }
    Ok(())
}

/// (value µs, censored) of percentile `p` in `q`, if the report holds it.
fn report_quantile(q: &Quantiles, p: f64) -> Option<(u64, bool)> {
    let c = q.censored;
    let flag = |f: fn(&crate::stats::Censored) -> bool| c.as_ref().is_some_and(f);
    if p == 50.0 {
        Some((q.p50_us, flag(|c| c.p50)))
    } else if p == 90.0 {
        Some((q.p90_us, flag(|c| c.p90)))
    } else if p == 99.0 {
        Some((q.p99_us, flag(|c| c.p99)))
    } else if p == 99.9 {
        Some((q.p999_us, flag(|c| c.p999)))
    } else {
        None
    }
}

/// `1234.5` µs → `1.234 ms`.
fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

/// Evaluates `items` against `report` (rules in the module doc), in item order.
pub fn evaluate(items: &[SloItem], report: &BenchReport) -> Vec<SloCheck> {
    items.iter().map(|it| evaluate_one(it, report)).collect()
}

fn evaluate_one(it: &SloItem, r: &BenchReport) -> SloCheck {
    let op = it.op.as_str();
    let (limit, measured, pass) = match it.bound {
        Bound::Errors { percent } => {
            let limit = format!("{op} {percent} %");
            let sent = r.single_phase.sent + r.turn_phase.sent;
            let ok = r.single_phase.answered_ok + r.turn_phase.answered_ok;
            let answered_err =
                r.single_phase.error_answers_total() + r.turn_phase.error_answers_total();
            let expected = r.expected_error_answers.min(answered_err);
            let bad = sent.saturating_sub(ok).saturating_sub(expected);
            if sent == 0 {
                (limit, "nothing sent".to_owned(), false)
            } else {
                let share = bad as f64 * 100.0 / sent as f64;
                // Say what was left out: error answers answered as recorded (the recorded
                // code, for a read whose recording is an error) are not counted.
                let measured = if expected > 0 {
                    format!(
                        "{share:.2} % ({bad} of {sent}; {expected} error answers as recorded not counted)"
                    )
                } else {
                    format!("{share:.2} % ({bad} of {sent})")
                };
                (limit, measured, it.op.holds(share, percent))
            }
        }
        Bound::Latency {
            metric,
            stat,
            limit_us,
        } => {
            let limit = format!("{op} {}", ms(limit_us));
            let (q, empty) = match metric {
                Metric::Read => (&r.single, "no reads"),
                Metric::Turn => (&r.turn, "no turns"),
            };
            if q.count == 0 {
                return SloCheck {
                    item: it.text.clone(),
                    limit,
                    measured: empty.to_owned(),
                    pass: false,
                };
            }
            let value = match stat {
                Stat::Max => Some((q.max_us as f64, q.censored.is_some_and(|c| c.max))),
                Stat::Mean => Some((q.mean_us, q.censored.is_some_and(|c| c.count > 0))),
                Stat::Percentile(p) => report_quantile(q, p).map(|(v, c)| (v as f64, c)),
            };
            match value {
                None => (limit, "not in the report".to_owned(), false),
                Some((_, true)) => {
                    let bound = q.censored.map_or(0, |c| c.bound_us);
                    (limit, format!("> {}", ms(bound as f64)), false)
                }
                Some((v, false)) => (limit, ms(v), it.op.holds(v, limit_us)),
            }
        }
    };
    SloCheck {
        item: it.text.clone(),
        limit,
        measured,
        pass,
    }
}

/// The pass/fail table printed after the bench report (one line per item, then the verdict).
pub fn table(checks: &[SloCheck]) -> String {
    let w = checks
        .iter()
        .map(|c| c.item.len())
        .chain([3])
        .max()
        .unwrap_or(3);
    let mut s = format!(
        "\nSLO\n  {:<w$}  {:<14}  {:<24}  result\n",
        "item", "limit", "measured"
    );
    for c in checks {
        let _ = writeln!(
            s,
            "  {:<w$}  {:<14}  {:<24}  {}",
            c.item,
            c.limit,
            c.measured,
            if c.pass { "pass" } else { "FAIL" }
        );
    }
    let failed = checks.iter().filter(|c| !c.pass).count();
    let _ = writeln!(
        s,
        "  {}: {} of {} items hold",
        if failed == 0 { "SLO pass" } else { "SLO FAIL" },
        checks.len() - failed,
        checks.len()
    );
    s
}

/// The `<testsuite name="mcptape bench slo">` of `checks`: one
/// `<testcase classname="mcptape.slo" name=ITEM>` per item; a failed item holds
/// `<failure type="slo" message="measured M, limit L"/>`.
pub fn junit_suite(checks: &[SloCheck]) -> TestSuite {
    TestSuite {
        name: "mcptape bench slo".into(),
        properties: Vec::new(),
        cases: checks
            .iter()
            .map(|c| TestCase {
                failure: (!c.pass).then(|| {
                    Failure::new("slo", format!("measured {}, limit {}", c.measured, c.limit))
                }),
                ..TestCase::new("mcptape.slo", c.item.clone())
            })
            .collect(),
    }
}

/// JUnit XML of `checks` ([`JUNIT_FILE`]): `<testsuites name="mcptape bench">` around
/// [`junit_suite`], written by [`crate::render::junit::document`].
pub fn junit_xml(checks: &[SloCheck]) -> String {
    document("mcptape bench", &[junit_suite(checks)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Censored, PhaseCounters};

    fn report() -> BenchReport {
        let q = |p99: u64| Quantiles {
            count: 100,
            p50_us: 1_000,
            p90_us: 2_000,
            p99_us: p99,
            p999_us: p99 + 1,
            max_us: p99 + 2,
            mean_us: 1_100.0,
            censored: None,
        };
        let mut r = crate::run::BenchResult::new().report(
            crate::run::RunSettings::default(),
            "t.jsonl",
            "embedded",
            None,
            1,
            None,
        );
        r.single = q(40_000);
        r.turn = q(700_000);
        r.single_phase = PhaseCounters {
            sent: 100,
            answered_ok: 99,
            ..PhaseCounters::default()
        };
        r.turn_phase = PhaseCounters {
            sent: 100,
            answered_ok: 100,
            ..PhaseCounters::default()
        };
        r
    }

    #[test]
    fn the_bench_example_parses_into_three_items() {
        let items = parse("read.p99<50ms, turn.p99<800ms,errors<1%").unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[0].bound,
            Bound::Latency {
                metric: Metric::Read,
                stat: Stat::Percentile(99.0),
                limit_us: 50_000.0
            }
        );
        assert_eq!(items[1].text, "turn.p99<800ms");
        assert_eq!(items[2].bound, Bound::Errors { percent: 1.0 });
        assert_eq!(items[2].op, Op::Lt);
        let le = parse("read.max<=1.5s,turn.mean<500us").unwrap();
        assert_eq!(le[0].op, Op::Le);
        assert_eq!(
            le[1].bound,
            Bound::Latency {
                metric: Metric::Turn,
                stat: Stat::Mean,
                limit_us: 500.0
            }
        );
    }

    #[test]
    fn malformed_items_are_refused_with_their_kind_and_index() {
        for (spec, kind) in [
            ("read.p99>50ms", SloErrorKind::NoOperator),
            ("read.p99<50", SloErrorKind::BadDuration),
            ("read.p99<0ms", SloErrorKind::BadDuration),
            ("write.p99<5ms", SloErrorKind::UnknownMetric),
            ("read<5ms", SloErrorKind::UnknownMetric),
            ("read.p100<5ms", SloErrorKind::UnknownStatistic),
            ("read.q99<5ms", SloErrorKind::UnknownStatistic),
            ("errors<1", SloErrorKind::BadPercent),
            ("errors<101%", SloErrorKind::BadPercent),
            (" , ", SloErrorKind::Empty),
        ] {
            let e = parse(spec).unwrap_err();
            assert_eq!(e.kind, kind, "{spec}");
        }
        let e = parse("read.p99<5ms,turn.p99<nope").unwrap_err();
        assert_eq!((e.index, e.item.as_str()), (1, "turn.p99<nope"));
    }

    #[test]
    fn slo_item_count_limit_at_and_past() {
        let at = vec!["read.p99<5ms"; MAX_SLO_ITEMS].join(",");
        assert_eq!(parse(&at).unwrap().len(), MAX_SLO_ITEMS);
        let past = vec!["read.p99<5ms"; MAX_SLO_ITEMS + 1].join(",");
        assert_eq!(
            parse(&past).unwrap_err().kind,
            SloErrorKind::TooManyItems(MAX_SLO_ITEMS + 1)
        );
    }

    #[test]
    fn slo_spec_length_limit_at_and_past() {
        // One valid item padded with spaces to exactly the limit.
        let item = "read.p99<5ms";
        let at = format!("{item}{}", " ".repeat(MAX_SLO_SPEC_BYTES - item.len()));
        assert_eq!(at.len(), MAX_SLO_SPEC_BYTES);
        assert_eq!(parse(&at).unwrap().len(), 1);
        let past = format!("{at} ");
        assert_eq!(
            parse(&past).unwrap_err().kind,
            SloErrorKind::TooLong(MAX_SLO_SPEC_BYTES + 1)
        );
    }

    #[test]
    fn statistics_the_report_lacks_are_refused_before_a_run() {
        let ok =
            parse("read.p50<1ms,read.p90<1ms,read.p99<1ms,read.p99.9<1ms,read.max<1ms").unwrap();
        assert!(check_evaluable(&ok).is_ok());
        let p95 = parse("read.p99<1ms,turn.p95<1ms").unwrap();
        let e = check_evaluable(&p95).unwrap_err();
        assert_eq!((e.kind, e.index), (SloErrorKind::NotInReport, 1));
    }

    #[test]
    fn evaluation_passes_and_fails_on_the_measured_values() {
        let r = report();
        let items =
            parse("read.p99<50ms,turn.p99<800ms,errors<1%,read.p99<40ms,read.p99<=40ms").unwrap();
        let c = evaluate(&items, &r);
        assert_eq!(
            c.iter().map(|c| c.pass).collect::<Vec<_>>(),
            [true, true, true, false, true]
        );
        assert_eq!(c[0].measured, "40.000 ms");
        assert_eq!(c[0].limit, "< 50.000 ms");
        // 1 of 200 reads not answered with a result: 0.5 %.
        assert_eq!(c[2].measured, "0.50 % (1 of 200)");
        let strict = evaluate(&parse("errors<0.5%").unwrap(), &r);
        assert!(!strict[0].pass);
    }

    #[test]
    fn recorded_error_answers_are_not_counted_by_errors() {
        let mut r = report();
        r.turn_phase.answered_ok = 97;
        r.turn_phase
            .error_answers
            .insert("invalid-params (-32602)".into(), 3);
        // The verdict and the measured text of `spec`, its only item.
        let verdict = |r: &BenchReport, spec: &str| {
            let c = evaluate(&parse(spec).unwrap(), r);
            (c[0].pass, c[0].measured.clone())
        };
        let excused = "0.50 % (1 of 200; 3 error answers as recorded not counted)".to_owned();
        // 4 of 200 not answered with a result; the recording holds 3 of them.
        r.expected_error_answers = 3;
        assert_eq!(verdict(&r, "errors<1%"), (true, excused.clone()));
        // More expected than received: only the received ones are excused.
        r.expected_error_answers = 10;
        assert_eq!(verdict(&r, "errors<0.5%"), (false, excused));
        // None expected: all four count.
        r.expected_error_answers = 0;
        assert_eq!(
            verdict(&r, "errors<1%"),
            (false, "2.00 % (4 of 200)".to_owned())
        );
    }

    #[test]
    fn a_censored_p99_fails_even_a_bound_above_the_censor_point() {
        let mut r = report();
        r.single.p99_us = 5_000_000;
        r.single.censored = Some(Censored {
            bound_us: 5_000_000,
            count: 2,
            p99: true,
            p999: true,
            max: true,
            ..Censored::default()
        });
        let c = evaluate(
            &parse("read.p99<10s,read.p90<3ms,read.mean<1s").unwrap(),
            &r,
        );
        assert!(!c[0].pass);
        assert_eq!(c[0].measured, "> 5000.000 ms");
        // p90 is below the censored region: known, and it holds.
        assert!(c[1].pass, "{c:?}");
        // The mean over censored values is a lower bound: fails.
        assert!(!c[2].pass);
    }

    #[test]
    fn empty_views_fail_rather_than_pass() {
        let r = crate::run::BenchResult::new().report(
            crate::run::RunSettings::default(),
            "t",
            "x",
            None,
            1,
            None,
        );
        let c = evaluate(&parse("read.p99<1s,turn.max<1s,errors<100%").unwrap(), &r);
        assert_eq!(
            c.iter()
                .map(|c| (c.pass, c.measured.as_str()))
                .collect::<Vec<_>>(),
            [
                (false, "no reads"),
                (false, "no turns"),
                (false, "nothing sent")
            ]
        );
    }

    #[test]
    fn junit_xml_has_one_testcase_per_item_and_escapes_the_names() {
        let r = report();
        let c = evaluate(&parse("read.p99<50ms,read.p99<40ms").unwrap(), &r);
        let x = junit_xml(&c);
        assert_eq!(x.matches("<testcase ").count(), 2);
        assert_eq!(x.matches("<failure ").count(), 1);
        assert!(x.contains("name=\"read.p99&lt;40ms\""), "{x}");
        assert!(
            x.contains("message=\"measured 40.000 ms, limit &lt; 40.000 ms\""),
            "{x}"
        );
        assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
        let t = table(&c);
        assert!(
            t.contains("FAIL") && t.contains("SLO FAIL: 1 of 2 items hold"),
            "{t}"
        );
    }
}
