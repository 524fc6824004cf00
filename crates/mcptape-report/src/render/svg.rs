//! A latency-by-percentile SVG plot, written by hand (no plotting dependency).

use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;

use super::junit::xml_escape;
use crate::run::BenchResult;
use crate::stats::BenchReport;

/// One curve of the percentile plot.
pub struct Curve<'a> {
    /// Legend text.
    pub label: &'a str,
    /// The histogram, µs.
    pub hist: &'a Histogram<u64>,
    /// Stroke colour (`#1f77b4`).
    pub color: &'a str,
    /// 1: the histogram's own quantiles. N > 1: the F(t)^N prediction from
    /// it — at percentile q the histogram's quantile at q^(1/N) — drawn dashed.
    pub power: u32,
}

/// A latency-by-percentile SVG (x: percentile on the usual "nines" log scale,
/// 0 .. 99.99%; y: latency in ms, linear), written by hand.
pub fn percentile_svg(title: &str, curves: &[Curve<'_>]) -> String {
    let (w, h, ml, mr, mt, mb) = (800.0, 480.0, 70.0, 180.0, 40.0, 50.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let max_nines = 4.0; // 99.99%
    let qs: Vec<f64> = (0..=200)
        .map(|i| 1.0 - 10f64.powf(-(i as f64) / 200.0 * max_nines))
        .collect();
    let ymax_ms = curves
        .iter()
        .filter(|c| !c.hist.is_empty())
        .map(|c| c.hist.value_at_quantile(0.9999) as f64 / 1000.0)
        .fold(1.0f64, f64::max)
        * 1.1;
    let x_of = |q: f64| ml + (-(1.0 - q).max(1e-12).log10() / max_nines).min(1.0) * pw;
    let y_of = |ms: f64| mt + ph - (ms / ymax_ms).min(1.0) * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="13">{}</text>"#,
        ml,
        xml_escape(title)
    );
    for (i, lbl) in ["0%", "90%", "99%", "99.9%", "99.99%"].iter().enumerate() {
        let x = ml + i as f64 / max_nines * pw;
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{mt}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/>"##,
            mt + ph
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{lbl}</text>"#,
            mt + ph + 18.0
        );
    }
    for i in 0..=5 {
        let ms = ymax_ms * i as f64 / 5.0;
        let y = y_of(ms);
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/>"##,
            ml + pw
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{ms:.1}</text>"#,
            ml - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">percentile</text>"#,
        ml + pw / 2.0,
        h - 8.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle">latency (ms)</text>"#,
        mt + ph / 2.0,
        mt + ph / 2.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    for (ci, c) in curves.iter().enumerate() {
        if c.hist.is_empty() {
            continue;
        }
        let n = f64::from(c.power.max(1));
        let pts: Vec<String> = qs
            .iter()
            .map(|&q| q.powf(1.0 / n))
            .zip(qs.iter())
            .map(|(qv, &q)| {
                format!(
                    "{:.1},{:.1}",
                    x_of(q),
                    y_of(c.hist.value_at_quantile(qv) as f64 / 1000.0)
                )
            })
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{}" stroke-width="2"{} points="{}"/>"#,
            c.color,
            if c.power > 1 {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            },
            pts.join(" ")
        );
        let ly = mt + 16.0 + ci as f64 * 20.0;
        let lx = ml + pw + 12.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            lx + 20.0,
            c.color,
            lx + 26.0,
            ly + 4.0,
            xml_escape(c.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The percentile plot of a bench run (`latency.svg` of `mcptape bench --out`): the single
/// requests' curve (`single reads` when the phase sent reads alone,
/// [`BenchReport::single_unit`]), the measured N-read turn curve and the F(t)^N prediction from the single reads
/// (dashed). The title names the transcript's file name, N and the latency model.
pub fn bench_svg(report: &BenchReport, res: &BenchResult) -> String {
    // `single requests` when the single phase held other methods than reads.
    let unit = report.single_unit();
    let title = format!(
        "{}: single {unit} vs {}-read turns ({})",
        Path::new(&report.transcript)
            .file_name()
            .map_or(report.transcript.clone(), |f| f
                .to_string_lossy()
                .into_owned()),
        report.parallel,
        report.latency.as_deref().unwrap_or("live target")
    );
    let turn_label = format!("{}-read turn", report.parallel);
    let single_label = format!("single {}", unit.trim_end_matches('s'));
    let pred_label = format!("predicted F^{}", report.parallel);
    // The prediction is drawn from the single phase's reads (a turn is reads).
    let empty = crate::stats::new_hist();
    let basis = res.turn_basis().unwrap_or(&empty);
    percentile_svg(
        &title,
        &[
            Curve {
                label: &single_label,
                hist: &res.single,
                color: "#1f77b4",
                power: 1,
            },
            Curve {
                label: &turn_label,
                hist: &res.turn,
                color: "#d62728",
                power: 1,
            },
            Curve {
                label: &pred_label,
                hist: basis,
                color: "#2ca02c",
                power: report.parallel,
            },
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_hist;

    #[test]
    fn svg_has_one_polyline_per_non_empty_curve() {
        let mut a = new_hist();
        a.record(12_000).unwrap();
        let empty = new_hist();
        let svg = percentile_svg(
            "t <1>",
            &[
                Curve {
                    label: "single",
                    hist: &a,
                    color: "#1f77b4",
                    power: 1,
                },
                Curve {
                    label: "none",
                    hist: &empty,
                    color: "#ff7f0e",
                    power: 1,
                },
            ],
        );
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("t &lt;1&gt;"));
        assert!(svg.starts_with("<svg"));
    }
}
