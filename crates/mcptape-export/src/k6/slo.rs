//! `--slo` gates as k6 `thresholds`.
//!
//! Syntax (the one `mcptape bench --slo` documents): comma-separated items
//! `read.STAT<DURATION`, `turn.STAT<DURATION` (STAT: `p50`, `p90`, `p95`,
//! `p99`, `p99.9`, `max`, `mean`; DURATION: `us`, `ms`, `s`; `<` or `<=`)
//! and `errors<PERCENT%` (share of reads whose outcome differs from the
//! recorded one, or that got no answer). k6 threshold expressions: Grafana
//! k6 docs › Using k6 › Thresholds (`p(99)<50`, `max<=800`, `rate<0.01`).

use std::collections::BTreeMap;

use crate::error::{ExportError, ExportErrorKind};
use crate::k6::{METRIC_READ, METRIC_TURN, METRIC_UNEXPECTED};

/// Most items one `--slo` takes.
pub const MAX_SLO_ITEMS: usize = 32;

/// k6 `thresholds`: metric name → threshold expressions (values in ms for
/// the Trends, a 0..1 rate for `errors`).
pub type Thresholds = BTreeMap<String, Vec<String>>;

fn bad(item: &str, reason: impl Into<String>) -> ExportError {
    ExportError::new(ExportErrorKind::BadSlo {
        item: item.to_owned(),
        reason: reason.into(),
    })
}

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

/// Parses `spec` into k6 thresholds.
///
/// # Errors
/// [`ExportErrorKind::BadSlo`] naming the item: unknown metric or statistic,
/// no `<`/`<=`, a duration without unit or not > 0, a percentage outside
/// 0..100, more than [`MAX_SLO_ITEMS`] items.
pub fn thresholds(spec: &str) -> Result<Thresholds, ExportError> {
    let mut out = Thresholds::new();
    let items: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if items.len() > MAX_SLO_ITEMS {
        return Err(bad(
            spec,
            format!("{} items: at most {MAX_SLO_ITEMS}", items.len()),
        ));
    }
    for item in items {
        let (lhs, op, rhs) = if let Some((l, r)) = item.split_once("<=") {
            (l, "<=", r)
        } else if let Some((l, r)) = item.split_once('<') {
            (l, "<", r)
        } else {
            return Err(bad(item, "expected `<` or `<=` (read.p99<50ms, errors<1%)"));
        };
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        if lhs == "errors" {
            let Some(p) = rhs.strip_suffix('%') else {
                return Err(bad(item, "errors takes a percentage (errors<1%)"));
            };
            let p: f64 = p
                .trim()
                .parse()
                .map_err(|_| bad(item, "errors takes a percentage (errors<1%)"))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(bad(item, "the percentage must be in 0..100"));
            }
            out.entry(METRIC_UNEXPECTED.to_owned())
                .or_default()
                .push(format!("rate{op}{}", num(p / 100.0)));
            continue;
        }
        let Some((metric, stat)) = lhs.split_once('.') else {
            return Err(bad(item, "expected read.STAT, turn.STAT or errors"));
        };
        let metric = match metric {
            "read" => METRIC_READ,
            "turn" => METRIC_TURN,
            _ => return Err(bad(item, "the metric is read, turn or errors")),
        };
        let stat = match stat {
            "p50" => "med".to_owned(),
            "mean" => "avg".to_owned(),
            "max" => "max".to_owned(),
            s => match s.strip_prefix('p').map(str::parse::<f64>) {
                Some(Ok(q)) if q > 0.0 && q < 100.0 => format!("p({})", num(q)),
                _ => {
                    return Err(bad(
                        item,
                        "the statistic is p50, p90, p99, p99.9 (any pNN), max or mean",
                    ));
                }
            },
        };
        let us = parse_us(rhs).ok_or_else(|| {
            bad(
                item,
                "the bound is a duration > 0 with its unit: 500us, 50ms, 1.5s",
            )
        })?;
        out.entry(metric.to_owned())
            .or_default()
            .push(format!("{stat}{op}{}", num(us / 1000.0)));
    }
    Ok(out)
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
    (v.is_finite() && v > 0.0).then_some(v * mult)
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
