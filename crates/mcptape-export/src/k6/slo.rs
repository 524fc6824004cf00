//! `--slo` gates as k6 `thresholds`.
//!
//! The grammar is the one `mcptape bench --slo` evaluates: [`mcptape_report::slo`] parses it
//! (`read.STAT<DURATION`, `turn.STAT<DURATION`, `errors<PERCENT%`; STAT `pNN`, `max`, `mean`;
//! `<` or `<=`; at most [`MAX_SLO_ITEMS`] items). Here each parsed item becomes a k6 threshold
//! expression (Grafana k6 docs › Using k6 › Thresholds: `p(99)<50`, `max<=800`, `rate<0.01`):
//! Trends in ms, `errors` as a 0..1 rate of `mcp_unexpected` (reads whose outcome differs
//! from the recorded one, or that got no answer).

use std::collections::BTreeMap;

use mcptape_report::slo::{self, Bound, Metric, Stat};

use crate::error::{ExportError, ExportErrorKind};
use crate::k6::{METRIC_READ, METRIC_TURN, METRIC_UNEXPECTED};

/// Most items one `--slo` takes (the shared grammar's limit).
pub use mcptape_report::slo::MAX_SLO_ITEMS;

/// k6 `thresholds`: metric name → threshold expressions (values in ms for
/// the Trends, a 0..1 rate for `errors`).
pub type Thresholds = BTreeMap<String, Vec<String>>;

/// A number the way a threshold writes it: no trailing zeros, no exponent.
fn num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".into()
    } else {
        s.to_owned()
    }
}

/// Parses `spec` ([`mcptape_report::slo::parse`]) into k6 thresholds.
///
/// # Errors
/// [`ExportErrorKind::BadSlo`] naming the item (the whole spec for a spec-wide error) and the
/// reason: unknown metric or statistic, no `<`/`<=`, a duration without unit or not > 0, a
/// percentage outside 0..100, more than [`MAX_SLO_ITEMS`] items or
/// [`slo::MAX_SLO_SPEC_BYTES`] bytes.
pub fn thresholds(spec: &str) -> Result<Thresholds, ExportError> {
    let items = slo::parse(spec).map_err(|e| {
        ExportError::new(ExportErrorKind::BadSlo {
            item: e.item,
            reason: e.kind.to_string(),
        })
    })?;
    let mut out = Thresholds::new();
    for it in items {
        let op = it.op.as_str();
        match it.bound {
            Bound::Errors { percent } => out
                .entry(METRIC_UNEXPECTED.to_owned())
                .or_default()
                .push(format!("rate{op}{}", num(percent / 100.0))),
            Bound::Latency {
                metric,
                stat,
                limit_us,
            } => {
                let metric = match metric {
                    Metric::Read => METRIC_READ,
                    Metric::Turn => METRIC_TURN,
                };
                let stat = match stat {
                    Stat::Percentile(50.0) => "med".to_owned(),
                    Stat::Percentile(q) => format!("p({})", num(q)),
                    Stat::Mean => "avg".to_owned(),
                    Stat::Max => "max".to_owned(),
                };
                out.entry(metric.to_owned())
                    .or_default()
                    .push(format!("{stat}{op}{}", num(limit_us / 1000.0)));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_slo_example_becomes_three_k6_thresholds() {
        let t = thresholds("read.p99<50ms,turn.p99<800ms,errors<1%").unwrap();
        assert_eq!(t["mcp_read"], vec!["p(99)<50"]);
        assert_eq!(t["mcp_turn"], vec!["p(99)<800"]);
        assert_eq!(t["mcp_unexpected"], vec!["rate<0.01"]);
    }

    #[test]
    fn statistics_units_and_operators_map_to_k6_syntax() {
        let t = thresholds("read.p50<=500us, read.p99.9<1.5s,read.max<2s,turn.mean<10ms").unwrap();
        assert_eq!(t["mcp_read"], vec!["med<=0.5", "p(99.9)<1500", "max<2000"]);
        assert_eq!(t["mcp_turn"], vec!["avg<10"]);
    }

    #[test]
    fn malformed_items_are_refused_with_the_item() {
        for bad_item in [
            "read.p99>50ms",
            "read.p99<50",
            "read.p99<0ms",
            "write.p99<5ms",
            "read.p100<5ms",
            "read.q99<5ms",
            "errors<1",
            "errors<101%",
            "read<5ms",
        ] {
            let e = thresholds(bad_item).unwrap_err();
            match e.kind {
                ExportErrorKind::BadSlo { item, .. } => assert_eq!(item, bad_item),
                k => panic!("{bad_item}: {k:?}"),
            }
        }
    }

    #[test]
    fn slo_item_count_limit_at_and_past() {
        let at = vec!["read.p99<5ms"; MAX_SLO_ITEMS].join(",");
        assert_eq!(thresholds(&at).unwrap()["mcp_read"].len(), MAX_SLO_ITEMS);
        let past = vec!["read.p99<5ms"; MAX_SLO_ITEMS + 1].join(",");
        assert!(matches!(
            thresholds(&past).unwrap_err().kind,
            ExportErrorKind::BadSlo { .. }
        ));
    }
}
