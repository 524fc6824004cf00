//! `report.html` of `mcptape bench --out DIR`: one self-contained page (inline CSS and SVG, no
//! script, no network fetch) with the run's parameters and seed, the latency percentile
//! spectrum (HdrHistogram style), the turn-completion CDF measured vs predicted with the
//! deadline marked, latency over time per interval (when the report has intervals), errors by
//! class, the embedded server's lateness against the model, and the SLO verdict (when present).
//!
//! Every string that comes from the transcript, the target or the report (paths, URIs, error
//! classes, model specs) is HTML-escaped ([`html_escape`]): a transcript path or URI holding
//! `<script>` renders as text.
//!
//! Element ids the browser test (and anyone scraping the page) relies on: `table#params`,
//! `svg#spectrum`, `svg#cdf`, `svg#intervals` (only with interval data), `table#errors`,
//! `table#methods` (rows `tr.by-method`, `tr.by-name`; with per-method figures),
//! `table#server` (only with server figures), `section#slo` (only with an SLO), `section#regression` (only with `--baseline`), `table#extra`
//! (report members this page has no dedicated view for).

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde_json::Value;

use crate::run::BenchResult;
use crate::stats::{BenchReport, Quantiles};

/// Chart width and height, CSS px.
const W: f64 = 820.0;
const H: f64 = 420.0;
/// Plot margins: left, right, top, bottom, px.
const ML: f64 = 70.0;
const MR: f64 = 190.0;
const MT: f64 = 36.0;
const MB: f64 = 50.0;
/// Highest percentile on the spectrum: 99.99 % (4 nines).
const MAX_NINES: f64 = 4.0;
/// Points per curve.
const POINTS: usize = 240;

/// Curve colours: single read, turn, prediction.
const C_SINGLE: &str = "#1f77b4";
const C_TURN: &str = "#d62728";
const C_PRED: &str = "#2ca02c";
const C_DEADLINE: &str = "#9467bd";

/// Report members rendered by a dedicated view (the rest go to `table#extra`).
const KNOWN: [&str; 40] = [
    "mix",
    "byMethod",
    "byTool",
    "byPrompt",
    "byUri",
    "skippedTools",
    "transcript",
    "target",
    "latency",
    "seed",
    "load",
    "parallel",
    "deadlineUs",
    "timeoutUs",
    "single",
    "throughputPerS",
    "readsAsked",
    "turnsAsked",
    "singleCut",
    "turnsCut",
    "maxPhaseMs",
    "targetClosed",
    "turnReads",
    "recordedReads",
    "recordedReadErrors",
    "turn",
    "prediction",
    "turns",
    "turnsHitDeadline",
    "deadlineShare",
    "predictedDeadlineShare",
    "cancellations",
    "lateResponses",
    "abandoned",
    "errors",
    "server",
    "slo",
    "regression",
    "intervals",
    "errorClasses",
];

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A round tick step for an axis spanning `span`, about `n` ticks: 1, 2 or 5 × 10^k.
pub fn nice_step(span: f64, n: u32) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / f64::from(n.max(1));
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Formats a tick value with no more decimals than its step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

/// µs → `12.345 ms`.
fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

/// `x` of percentile `q` on the spectrum's axis: log10(1 / (1 − q)) over [0, 4 nines].
fn x_of_q(q: f64) -> f64 {
    let nines = (1.0 / (1.0 - q).max(10f64.powf(-MAX_NINES))).log10();
    ML + (nines / MAX_NINES).clamp(0.0, 1.0) * (W - ML - MR)
}

/// Appends to `s` the x grid lines and tick labels every `xstep` from 0 to `x_top` (axis
/// units, passed as `(x_top, xstep)`), then the axis title `label` (plain text, not escaped).
/// `x_of` maps an axis value to its SVG x (px); `(pw, ph)` is the plot area's width and
/// height (px).
fn x_axis(
    s: &mut String,
    (x_top, xstep): (f64, f64),
    x_of: &dyn Fn(f64) -> f64,
    (pw, ph): (f64, f64),
    label: &str,
) {
    let mut v = 0.0;
    while v <= x_top * (1.0 + 1e-9) {
        let x = x_of(v);
        let _ = writeln!(
            s,
            r#"<line class="grid" x1="{x:.1}" y1="{MT}" x2="{x:.1}" y2="{:.1}"/><text class="xtick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            MT + ph,
            MT + ph + 18.0,
            tick_label(v, xstep)
        );
        v += xstep;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
        ML + pw / 2.0,
        H - 10.0
    );
}

/// The frame of a chart: title, axes box, y ticks (round values) and labels; returns the SVG
/// opening and the y mapping's top value (the y axis runs 0..top).
fn frame(id: &str, title: &str, y_top: f64, y_step: f64, y_label: &str, y_fmt_pct: bool) -> String {
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg id="{id}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{t}">"#,
        t = html_escape(title)
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text class="title" x="{ML}" y="22">{}</text>"#,
        html_escape(title)
    );
    let mut v = 0.0;
    while v <= y_top * (1.0 + 1e-9) {
        let y = MT + ph - v / y_top * ph;
        let _ = writeln!(
            s,
            r##"<line class="grid" x1="{ML}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="ytick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            ML + pw,
            ML - 6.0,
            y + 4.0,
            if y_fmt_pct {
                format!("{}%", tick_label(v * 100.0, y_step * 100.0))
            } else {
                tick_label(v, y_step)
            }
        );
        v += y_step;
    }
    let _ = writeln!(
        s,
        r#"<text x="16" y="{c:.1}" transform="rotate(-90 16 {c:.1})" text-anchor="middle">{}</text>"#,
        html_escape(y_label),
        c = MT + ph / 2.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    s
}

/// The legend entry `deadline 800.000 ms` (dashed, [`C_DEADLINE`]) in legend row `i` of `s`;
/// `deadline_us` in µs.
fn deadline_legend(s: &mut String, i: usize, deadline_us: u64) {
    let label = format!("deadline {}", ms(deadline_us as f64));
    legend(s, i, &label, C_DEADLINE, true);
}

/// A legend entry at row `i`.
fn legend(s: &mut String, i: usize, label: &str, color: &str, dashed: bool) {
    let lx = W - MR + 14.0;
    let ly = MT + 16.0 + i as f64 * 20.0;
    let _ = writeln!(
        s,
        r#"<g class="legend"><line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="3"{}/><text x="{}" y="{}">{}</text></g>"#,
        lx + 22.0,
        if dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        },
        lx + 28.0,
        ly + 4.0,
        html_escape(label)
    );
}

fn polyline(s: &mut String, class: &str, color: &str, dashed: bool, pts: &[(f64, f64)]) {
    let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        s,
        r#"<polyline class="curve {class}" fill="none" stroke="{color}" stroke-width="2"{} points="{}"/>"#,
        if dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        },
        p.join(" ")
    );
}

/// Percentiles sampled evenly on the nines axis, 0 .. 99.99 %.
fn spectrum_qs() -> Vec<f64> {
    (0..=POINTS)
        .map(|i| 1.0 - 10f64.powf(-(i as f64) / POINTS as f64 * MAX_NINES))
        .collect()
}

/// The latency percentile spectrum (HdrHistogram style): x = percentile on a log scale of
/// 1/(1−q) with ticks 50 %, 90 %, 99 %, 99.9 %, 99.99 %; y = latency, ms, round ticks. Curves:
/// single reads, N-read turns, and the F(t)^N prediction from the single reads (dashed); the
/// deadline as a horizontal line. Empty histograms draw no curve.
pub fn spectrum_svg(report: &BenchReport, res: &BenchResult) -> String {
    let n = report.parallel.max(1);
    let top_us = [&res.single, &res.turn]
        .iter()
        .filter(|h| !h.is_empty())
        .map(|h| h.value_at_quantile(1.0 - 10f64.powf(-MAX_NINES)) as f64)
        .fold(0.0f64, f64::max);
    // The prediction is drawn from the single phase's reads (a turn is reads).
    let empty = crate::stats::new_hist();
    let basis = res.turn_basis().unwrap_or(&empty);
    let pred_top = if basis.is_empty() {
        0.0
    } else {
        basis
            .value_at_quantile((1.0 - 10f64.powf(-MAX_NINES)).powf(1.0 / f64::from(n)))
            .min(report.deadline_us) as f64
    };
    let span_ms = (top_us.max(pred_top) / 1000.0).max(0.001) * 1.08;
    let step = nice_step(span_ms, 6);
    let y_top = (span_ms / step).ceil() * step;
    let ph = H - MT - MB;
    let y_of = |us: f64| MT + ph - (us / 1000.0 / y_top).min(1.0) * ph;
    let mut s = frame(
        "spectrum",
        &format!("Latency by percentile: single reads, {n}-read turns, F(t)^{n}"),
        y_top,
        step,
        "latency (ms)",
        false,
    );
    for (q, lbl) in [
        (0.0, "0%"),
        (0.5, "50%"),
        (0.9, "90%"),
        (0.99, "99%"),
        (0.999, "99.9%"),
        (0.9999, "99.99%"),
    ] {
        let x = x_of_q(q);
        let _ = writeln!(
            s,
            r#"<line class="grid" x1="{x:.1}" y1="{MT}" x2="{x:.1}" y2="{:.1}"/><text class="xtick" x="{x:.1}" y="{:.1}" text-anchor="middle">{lbl}</text>"#,
            MT + ph,
            MT + ph + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">percentile (log scale of 1/(1−q))</text>"#,
        ML + (W - ML - MR) / 2.0,
        H - 10.0
    );
    let qs = spectrum_qs();
    let curve = |h: &Histogram<u64>, pow: f64, cap: u64| -> Vec<(f64, f64)> {
        qs.iter()
            .map(|&q| {
                (
                    x_of_q(q),
                    y_of(h.value_at_quantile(q.powf(1.0 / pow)).min(cap) as f64),
                )
            })
            .collect()
    };
    let mut row = 0;
    if !res.single.is_empty() {
        polyline(
            &mut s,
            "single",
            C_SINGLE,
            false,
            &curve(&res.single, 1.0, u64::MAX),
        );
        legend(&mut s, row, "single read", C_SINGLE, false);
        row += 1;
    }
    if !res.turn.is_empty() {
        polyline(
            &mut s,
            "turn",
            C_TURN,
            false,
            &curve(&res.turn, 1.0, u64::MAX),
        );
        legend(&mut s, row, &format!("{n}-read turn"), C_TURN, false);
        row += 1;
    }
    if !basis.is_empty() && n > 1 {
        polyline(
            &mut s,
            "predicted",
            C_PRED,
            true,
            &curve(basis, f64::from(n), report.deadline_us),
        );
        legend(&mut s, row, &format!("predicted F(t)^{n}"), C_PRED, true);
        row += 1;
    }
    if report.deadline_us as f64 / 1000.0 <= y_top {
        let y = y_of(report.deadline_us as f64);
        let _ = writeln!(
            s,
            r#"<line class="deadline" x1="{ML}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{C_DEADLINE}" stroke-dasharray="2 3"/>"#,
            W - MR
        );
        deadline_legend(&mut s, row, report.deadline_us);
    }
    s.push_str("</svg>\n");
    s
}

/// Share of `h`'s values at or below `t_us`, 0..1 (0 for an empty histogram).
fn cdf_at(h: &Histogram<u64>, t_us: u64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.count_between(0, t_us) as f64 / h.len() as f64
    }
}

/// The turn-completion CDF: share of turns complete by time t, measured (from the turn
/// histogram) vs predicted (F_single(t)^N), the deadline as a vertical line; x = ms, round
/// ticks, y = 0..100 %.
pub fn cdf_svg(report: &BenchReport, res: &BenchResult) -> String {
    let n = report.parallel.max(1);
    // The x axis spans the data (the turns' max, the prediction's 99.99 %), and the deadline
    // only when it is near: a deadline far past every turn is marked at the right edge
    // instead of squashing the curves against 0.
    // The prediction is drawn from the single phase's reads (a turn is reads).
    let empty = crate::stats::new_hist();
    let basis = res.turn_basis().unwrap_or(&empty);
    let pred_hi = if basis.is_empty() {
        0
    } else {
        basis
            .value_at_quantile((1.0 - 10f64.powf(-MAX_NINES)).powf(1.0 / f64::from(n)))
            .min(report.deadline_us)
    };
    let data_hi = res.turn.max().max(pred_hi) as f64;
    let hi_us = if (report.deadline_us as f64) <= data_hi * 3.0 || data_hi == 0.0 {
        data_hi.max(report.deadline_us as f64)
    } else {
        data_hi
    };
    let span_ms = (hi_us / 1000.0).max(0.001) * 1.05;
    let xstep = nice_step(span_ms, 8);
    let x_top = (span_ms / xstep).ceil() * xstep;
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let x_of = |t_ms: f64| ML + (t_ms / x_top).clamp(0.0, 1.0) * pw;
    let y_of = |f: f64| MT + ph - f.clamp(0.0, 1.0) * ph;
    let mut s = frame(
        "cdf",
        &format!("Turn completion ({n} reads): measured vs predicted"),
        1.0,
        0.25,
        "turns complete",
        true,
    );
    let x_title = "time since the turn began (ms)";
    x_axis(&mut s, (x_top, xstep), &x_of, (pw, ph), x_title);
    let ts: Vec<f64> = (0..=POINTS)
        .map(|i| x_top * i as f64 / POINTS as f64)
        .collect();
    let mut row = 0;
    if !res.turn.is_empty() {
        let pts: Vec<(f64, f64)> = ts
            .iter()
            .map(|&t| (x_of(t), y_of(cdf_at(&res.turn, (t * 1000.0) as u64))))
            .collect();
        polyline(&mut s, "turn", C_TURN, false, &pts);
        legend(&mut s, row, "measured", C_TURN, false);
        row += 1;
    }
    if !basis.is_empty() {
        let pts: Vec<(f64, f64)> = ts
            .iter()
            .map(|&t| {
                let us = (t * 1000.0) as u64;
                // A turn ends at the deadline at the latest.
                let f = if us >= report.deadline_us {
                    1.0
                } else {
                    cdf_at(basis, us).powi(n as i32)
                };
                (x_of(t), y_of(f))
            })
            .collect();
        polyline(&mut s, "predicted", C_PRED, true, &pts);
        legend(&mut s, row, &format!("predicted F(t)^{n}"), C_PRED, true);
        row += 1;
    }
    let deadline_ms = report.deadline_us as f64 / 1000.0;
    if deadline_ms <= x_top {
        let x = x_of(deadline_ms);
        let _ = writeln!(
            s,
            r#"<line class="deadline" x1="{x:.1}" y1="{MT}" x2="{x:.1}" y2="{:.1}" stroke="{C_DEADLINE}" stroke-width="2" stroke-dasharray="2 3"/>"#,
            MT + ph
        );
    } else {
        let _ = writeln!(
            s,
            r#"<text class="deadline" x="{:.1}" y="{:.1}" text-anchor="end" fill="{C_DEADLINE}">deadline at {} (off scale) →</text>"#,
            ML + pw - 6.0,
            MT + ph - 8.0,
            ms(report.deadline_us as f64)
        );
    }
    deadline_legend(&mut s, row, report.deadline_us);
    s.push_str("</svg>\n");
    s
}

/// Latency over time from the report's `intervals` member (an array of objects): x = the
/// interval's `startS` (or its index), one curve per numeric member named `…Us` (µs, drawn in
/// ms). `None` when there is no such member or no numeric series.
pub fn intervals_svg(intervals: &Value) -> Option<String> {
    let rows = intervals.as_array()?;
    if rows.is_empty() {
        return None;
    }
    let mut series: Vec<String> = Vec::new();
    for r in rows {
        if let Some(o) = r.as_object() {
            for (k, v) in o {
                if k.ends_with("Us") && v.is_number() && !series.contains(k) {
                    series.push(k.clone());
                }
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    let xs: Vec<f64> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| r.get("startS").and_then(Value::as_f64).unwrap_or(i as f64))
        .collect();
    let x_hi = xs.iter().copied().fold(0.0f64, f64::max).max(1.0);
    let y_hi = rows
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|o| series.iter().filter_map(|k| o.get(k)?.as_f64()))
        .fold(0.0f64, f64::max)
        / 1000.0;
    let ystep = nice_step(y_hi.max(0.001) * 1.08, 6);
    let y_top = (y_hi.max(0.001) * 1.08 / ystep).ceil() * ystep;
    let xstep = nice_step(x_hi, 8);
    let x_top = (x_hi / xstep).ceil() * xstep;
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let x_of = |x: f64| ML + (x / x_top).clamp(0.0, 1.0) * pw;
    let y_of = |ms: f64| MT + ph - (ms / y_top).clamp(0.0, 1.0) * ph;
    let mut s = frame(
        "intervals",
        "Latency over time, per interval",
        y_top,
        ystep,
        "latency (ms)",
        false,
    );
    let x_title = "time since the run began (s)";
    x_axis(&mut s, (x_top, xstep), &x_of, (pw, ph), x_title);
    let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    ];
    for (i, k) in series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .zip(&xs)
            .filter_map(|(r, &x)| Some((x_of(x), y_of(r.get(k)?.as_f64()? / 1000.0))))
            .collect();
        let c = palette[i % palette.len()];
        polyline(&mut s, "interval", c, false, &pts);
        legend(&mut s, i, k, c, false);
    }
    s.push_str("</svg>\n");
    Some(s)
}

fn row(s: &mut String, k: &str, v: &str) {
    let _ = writeln!(
        s,
        "<tr><th>{}</th><td>{}</td></tr>",
        html_escape(k),
        html_escape(v)
    );
}

fn quantile_row(s: &mut String, name: &str, q: &Quantiles) {
    let _ = writeln!(
        s,
        "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        html_escape(name),
        q.count,
        ms(q.p50_us as f64),
        ms(q.p90_us as f64),
        ms(q.p99_us as f64),
        ms(q.p999_us as f64),
        ms(q.max_us as f64),
        ms(q.mean_us)
    );
}

const QUANTILE_HEAD: &str = "<tr><th></th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>";

/// `table#methods`: the single phase by method, then by tool, prompt and URI (sent, ok,
/// errors by class, p50/p90/p99/max), and the tools a live target was not sent; nothing when
/// the report has no per-method figures.
fn method_section(s: &mut String, report: &BenchReport) {
    if report.by_method.is_empty() && report.skipped_tools.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<h2>By method (single phase, mix {})</h2>\n<table id=\"methods\"><tr><th>method</th><th>name</th><th>sent</th><th>ok</th><th>errors</th><th>not as recorded</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>",
        html_escape(&report.mix)
    );
    let views = report
        .by_method
        .iter()
        .chain(&report.by_tool)
        .chain(&report.by_prompt)
        .chain(&report.by_uri);
    for v in views {
        let q = &v.latency;
        let errors = v
            .errors
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(
            s,
            "<tr class=\"{}\"><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if v.name.is_some() {
                "by-name"
            } else {
                "by-method"
            },
            html_escape(&v.method),
            html_escape(v.name.as_deref().unwrap_or("")),
            v.sent,
            v.ok,
            html_escape(&errors),
            v.not_as_recorded,
            ms(q.p50_us as f64),
            ms(q.p90_us as f64),
            ms(q.p99_us as f64),
            ms(q.max_us as f64),
        );
    }
    s.push_str("</table>\n");
    if !report.skipped_tools.is_empty() {
        let _ = writeln!(
            s,
            "<p id=\"skipped-tools\">Tools not called (live target, no readOnlyHint, not --allow-tool): {}</p>",
            html_escape(&report.skipped_tools.join(", "))
        );
    }
}

/// A JSON value as short text (strings unquoted).
fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The SLO section from the report's `slo` member, whatever its exact shape: an overall
/// verdict from a boolean `pass`/`passed`/`ok` member (or, failing that, from every check's),
/// and one table row per check of an array member (`checks`, `results`, `objectives`).
fn slo_section(slo: &Value) -> String {
    let mut s = String::from("<section id=\"slo\"><h2>SLO</h2>\n");
    let verdict_of = |v: &Value| {
        ["pass", "passed", "ok", "met"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_bool))
    };
    let checks: Vec<&Value> = ["checks", "results", "objectives"]
        .iter()
        .find_map(|k| slo.get(*k).and_then(Value::as_array))
        .map(|a| a.iter().collect())
        .or_else(|| slo.as_array().map(|a| a.iter().collect()))
        .unwrap_or_default();
    let overall = verdict_of(slo).or_else(|| {
        let vs: Vec<bool> = checks.iter().filter_map(|c| verdict_of(c)).collect();
        (!vs.is_empty()).then(|| vs.iter().all(|b| *b))
    });
    match overall {
        Some(true) => s.push_str("<p class=\"verdict pass\">PASS</p>\n"),
        Some(false) => s.push_str("<p class=\"verdict fail\">FAIL</p>\n"),
        None => {}
    }
    if !checks.is_empty() {
        let mut cols: Vec<String> = Vec::new();
        for c in &checks {
            if let Some(o) = c.as_object() {
                for k in o.keys() {
                    if !cols.contains(k) {
                        cols.push(k.clone());
                    }
                }
            }
        }
        s.push_str("<table class=\"slo\"><tr>");
        for c in &cols {
            let _ = write!(s, "<th>{}</th>", html_escape(c));
        }
        s.push_str("</tr>\n");
        for c in &checks {
            let cls = match verdict_of(c) {
                Some(true) => " class=\"pass\"",
                Some(false) => " class=\"fail\"",
                None => "",
            };
            let _ = write!(s, "<tr{cls}>");
            for k in &cols {
                let _ = write!(
                    s,
                    "<td>{}</td>",
                    html_escape(&c.get(k).map(json_text).unwrap_or_default())
                );
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    } else if let Some(o) = slo.as_object() {
        s.push_str("<table class=\"slo\">\n");
        for (k, v) in o {
            row(&mut s, k, &json_text(v));
        }
        s.push_str("</table>\n");
    }
    s.push_str("</section>\n");
    s
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f5f5f5;font-weight:600}td{font-variant-numeric:tabular-nums}\
.chart{display:block;margin:8px 0;max-width:100%;height:auto;font-family:sans-serif;font-size:12px}\
.chart .title{font-size:13px;font-weight:600}.chart .grid{stroke:#e6e6e6}\
.verdict{display:inline-block;padding:4px 12px;border-radius:4px;font-weight:700;color:white}\
.verdict.pass,tr.pass td:first-child{background:#2e7d32;color:white}.verdict.fail,tr.fail td:first-child{background:#c62828;color:white}\
.flag{color:#c62828;font-weight:600}.muted{color:#777}ul.failures{color:#c62828}";

/// The whole page (`report.html`), self-contained: inline CSS and SVG, no script, no external
/// reference. Sections guard optional report parts: no server figures, no intervals, no SLO →
/// no section.
pub fn bench_html(report: &BenchReport, res: &BenchResult) -> String {
    let json = serde_json::to_value(report).unwrap_or(Value::Null);
    let name = std::path::Path::new(&report.transcript)
        .file_name()
        .map_or(report.transcript.clone(), |f| {
            f.to_string_lossy().into_owned()
        });
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    let _ = writeln!(
        s,
        "<title>mcptape bench: {}</title>\n<style>{CSS}</style></head><body>",
        html_escape(&name)
    );
    let _ = writeln!(s, "<h1>mcptape bench: {}</h1>", html_escape(&name));
    let _ = writeln!(
        s,
        "<p class=\"muted\">{} single {}, {} turns of {} reads, seed {}</p>",
        report.single.count,
        report.single_unit(),
        report.turns,
        report.parallel,
        report.seed
    );
    let failures = report.failures();
    if !failures.is_empty() {
        s.push_str("<p class=\"verdict fail\">NOT A MEASUREMENT</p><ul class=\"failures\">\n");
        for f in &failures {
            let _ = writeln!(s, "<li>{}</li>", html_escape(f));
        }
        s.push_str("</ul>\n");
    }
    if let Some(slo) = json.get("slo").filter(|v| !v.is_null()) {
        s.push_str(&slo_section(slo));
    }
    if let Some(r) = &report.regression {
        s.push_str(&crate::regression::html_section(r));
    }

    s.push_str("<h2>Parameters</h2>\n<table id=\"params\">\n");
    row(&mut s, "transcript", &report.transcript);
    row(&mut s, "target", &report.target);
    row(
        &mut s,
        "latency model",
        report.latency.as_deref().unwrap_or("(live target)"),
    );
    row(&mut s, "seed", &report.seed.to_string());
    row(&mut s, "load", &report.load);
    row(&mut s, "reads per turn", &report.parallel.to_string());
    row(&mut s, "deadline", &ms(report.deadline_us as f64));
    row(&mut s, "read timeout", &ms(report.timeout_us as f64));
    row(
        &mut s,
        &format!("single {}", report.single_unit()),
        &format!(
            "{} asked, {} answered{}",
            report.reads_asked,
            report.single.count,
            if report.single_cut {
                " (cut at --max-phase)"
            } else {
                ""
            }
        ),
    );
    row(
        &mut s,
        "turns",
        &format!(
            "{} asked, {} run{}",
            report.turns_asked,
            report.turns,
            if report.turns_cut {
                " (cut at --max-phase)"
            } else {
                ""
            }
        ),
    );
    row(&mut s, "max phase", &format!("{} ms", report.max_phase_ms));
    row(
        &mut s,
        "recorded reads",
        &format!(
            "{} ({} recorded as errors)",
            report.recorded_reads, report.recorded_read_errors
        ),
    );
    row(
        &mut s,
        "throughput",
        &format!("{:.1} reads/s", report.throughput_per_s),
    );
    s.push_str("</table>\n");

    s.push_str("<h2>Latency spectrum</h2>\n");
    s.push_str(&spectrum_svg(report, res));
    s.push_str("<table id=\"quantiles\">\n");
    s.push_str(QUANTILE_HEAD);
    quantile_row(&mut s, "single read", &report.single);
    quantile_row(
        &mut s,
        &format!("{}-read turn", report.parallel),
        &report.turn,
    );
    s.push_str("</table>\n");
    if !report.prediction.is_empty() {
        s.push_str("<table id=\"prediction\"><tr><th>turn percentile</th><th>measured</th><th>predicted F(t)^N</th><th>difference</th></tr>\n");
        for p in &report.prediction {
            let _ = writeln!(
                s,
                "<tr><td>p{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                p.q * 100.0,
                ms(p.measured_us as f64),
                ms(p.predicted_us as f64),
                ms(p.difference_us as f64)
            );
        }
        s.push_str("</table>\n");
    }

    s.push_str("<h2>Turn completion</h2>\n");
    s.push_str(&cdf_svg(report, res));
    let _ = writeln!(
        s,
        "<p>{} of {} turns hit the deadline ({:.2}%); predicted {}.</p>",
        report.turns_hit_deadline,
        report.turns,
        report.deadline_share * 100.0,
        report
            .predicted_deadline_share
            .map_or("n/a".to_owned(), |p| format!("{:.2}%", p * 100.0))
    );

    if let Some(svg) = json.get("intervals").and_then(intervals_svg) {
        s.push_str("<h2>Latency over time</h2>\n");
        s.push_str(&svg);
    }

    method_section(&mut s, report);

    s.push_str(
        "<h2>Errors by class</h2>\n<table id=\"errors\"><tr><th>class</th><th>count</th></tr>\n",
    );
    if report.errors.is_empty() {
        s.push_str("<tr><td class=\"muted\">(none)</td><td>0</td></tr>\n");
    }
    for (k, v) in &report.errors {
        let _ = writeln!(s, "<tr><td>{}</td><td>{v}</td></tr>", html_escape(k));
    }
    if let Some(o) = json.get("errorClasses").and_then(Value::as_object) {
        for (k, v) in o {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td></tr>",
                html_escape(k),
                html_escape(&json_text(v))
            );
        }
    }
    s.push_str("</table>\n<table id=\"cancellation\">\n");
    row(
        &mut s,
        "abandoned at the timeout",
        &report.abandoned.to_string(),
    );
    row(
        &mut s,
        "notifications/cancelled sent",
        &report.cancellations.to_string(),
    );
    row(
        &mut s,
        "late responses (after cancellation)",
        &report.late_responses.to_string(),
    );
    row(
        &mut s,
        "target closed the connection",
        if report.target_closed { "yes" } else { "no" },
    );
    s.push_str("</table>\n");

    if let Some(sv) = &report.server {
        s.push_str("<h2>Replay against the model (embedded server)</h2>\n");
        let p = &sv.precision;
        if p.machine_bound {
            let _ = writeln!(
                s,
                "<p class=\"flag\">{}</p>",
                html_escape(&p.note().unwrap_or_default())
            );
        } else {
            let _ = writeln!(
                s,
                "<p>Lateness p99 {} is within the limit {} (2 % of the model's p50 + 0.2 ms): the figures describe the model, not the machine.</p>",
                ms(p.lateness_p99_us as f64),
                ms(p.limit_us)
            );
        }
        s.push_str("<table id=\"server\">\n");
        s.push_str(QUANTILE_HEAD);
        quantile_row(&mut s, "scheduled delay", &sv.intended);
        quantile_row(&mut s, "achieved delay", &sv.achieved);
        quantile_row(&mut s, "lateness (achieved − scheduled)", &sv.lateness);
        quantile_row(&mut s, "engine work per reply", &sv.work);
        s.push_str("</table>\n<table id=\"server-counts\">\n");
        row(&mut s, "model", &sv.model);
        row(
            &mut s,
            "model p50 / p99",
            &format!(
                "{} / {}",
                sv.model_p50_us.map_or("n/a".into(), ms),
                sv.model_p99_us.map_or("n/a".into(), ms)
            ),
        );
        row(
            &mut s,
            "requests",
            &format!(
                "{} ({} matched, {} unmatched, {} rejected uri, {} invalid)",
                sv.requests, sv.matched, sv.unmatched, sv.rejected_uri, sv.invalid
            ),
        );
        row(
            &mut s,
            "faults",
            &format!(
                "{} stalled, {} errors injected, {} dropped, {} cancelled",
                sv.stalled, sv.injected_errors, sv.dropped, sv.cancelled
            ),
        );
        if let Some(c) = sv.capacity_per_s {
            row(
                &mut s,
                "engine capacity",
                &format!("{c:.0} replies/s (one core)"),
            );
        }
        if let Some(n) = sv.synthesized_note() {
            row(&mut s, "synthesized", &n);
        }
        s.push_str("</table>\n");
    }

    if let Some(o) = json.as_object() {
        let extra: Vec<(&String, &Value)> = o
            .iter()
            .filter(|(k, v)| !KNOWN.contains(&k.as_str()) && !v.is_null())
            .collect();
        if !extra.is_empty() {
            s.push_str("<h2>Other figures</h2>\n<table id=\"extra\">\n");
            for (k, v) in extra {
                row(&mut s, k, &json_text(v));
            }
            s.push_str("</table>\n");
        }
    }
    s.push_str("<p class=\"muted\">Written by mcptape; the same figures are in report.json and latency.hlog.</p>\n</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report computed the way `bench` computes it ([`BenchResult::report`]).
    fn report(transcript: &str) -> BenchReport {
        let cfg = crate::run::RunSettings::default();
        result().report(
            cfg,
            transcript,
            "embedded mcptape serve (stdio)",
            Some("fixed:3ms".into()),
            42,
            None,
        )
    }

    fn result() -> BenchResult {
        let mut r = BenchResult::new();
        for v in 1..=1000u64 {
            r.single.record(v * 10).unwrap();
            r.turn.record(v * 20).unwrap();
        }
        r
    }

    #[test]
    fn nice_steps_are_1_2_5_times_a_power_of_ten() {
        assert_eq!(nice_step(10.0, 5), 2.0);
        assert_eq!(nice_step(7.3, 6), 2.0);
        assert_eq!(nice_step(0.9, 6), 0.2);
        assert_eq!(nice_step(3600.0, 8), 500.0);
        assert_eq!(nice_step(0.0, 5), 1.0);
    }

    #[test]
    fn percentile_axis_is_log_of_one_over_one_minus_q() {
        let pw = W - ML - MR;
        assert!((x_of_q(0.0) - ML).abs() < 1e-9);
        assert!((x_of_q(0.9) - (ML + pw / 4.0)).abs() < 1e-6);
        assert!((x_of_q(0.99) - (ML + pw / 2.0)).abs() < 1e-6);
        assert!((x_of_q(0.9999) - (ML + pw)).abs() < 1e-6);
        // 50 % sits at log10(2)/4 of the width.
        assert!((x_of_q(0.5) - (ML + 2f64.log10() / 4.0 * pw)).abs() < 1e-6);
    }

    #[test]
    fn script_in_a_transcript_path_and_an_error_class_renders_inert() {
        let mut r = report("/tmp/<script>alert(1)</script>.jsonl");
        r.errors
            .insert("mcp://x/<script>alert(2)</script>\"'".into(), 3);
        let page = bench_html(&r, &result());
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("mcp://x/&lt;script&gt;alert(2)&lt;/script&gt;&quot;&#39;"));
    }

    #[test]
    fn page_is_self_contained_and_has_every_chart() {
        let page = bench_html(&report("a.jsonl"), &result());
        for id in [
            "<svg id=\"spectrum\"",
            "<svg id=\"cdf\"",
            "<table id=\"params\"",
            "<table id=\"errors\"",
        ] {
            assert!(page.contains(id), "{id}");
        }
        assert!(!page.contains("http://") || !page.contains("src=\"http"));
        assert!(!page.contains("href="));
        assert!(!page.contains("<script"));
        // three curves on the spectrum (single, turn, prediction), two on the CDF.
        let spectrum = &page[page.find("<svg id=\"spectrum\"").unwrap()..];
        let spectrum = &spectrum[..spectrum.find("</svg>").unwrap()];
        assert_eq!(spectrum.matches("<polyline").count(), 3);
        let cdf = &page[page.find("<svg id=\"cdf\"").unwrap()..];
        let cdf = &cdf[..cdf.find("</svg>").unwrap()];
        assert_eq!(cdf.matches("<polyline").count(), 2);
        assert!(cdf.contains("deadline 800.000 ms"));
        // no server figures, no intervals, no SLO: no section.
        assert!(!page.contains("id=\"server\""));
        assert!(!page.contains("id=\"intervals\""));
        assert!(!page.contains("id=\"slo\""));
    }

    #[test]
    fn slo_and_intervals_render_when_present() {
        let slo = serde_json::json!({"pass": false, "checks": [
            {"objective": "p99 < 5ms", "measured": "7ms", "pass": false},
            {"objective": "errors < 1%", "measured": "0%", "pass": true}]});
        let page = slo_section(&slo);
        assert!(page.contains("verdict fail"));
        assert_eq!(page.matches("<tr class=\"fail\">").count(), 1);
        assert_eq!(page.matches("<tr class=\"pass\">").count(), 1);
        let iv = serde_json::json!([
            {"startS": 0.0, "p50Us": 3000, "p99Us": 4000},
            {"startS": 1.0, "p50Us": 3100, "p99Us": 5000}]);
        let svg = intervals_svg(&iv).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(intervals_svg(&serde_json::json!([])).is_none());
        assert!(intervals_svg(&serde_json::json!([{"n": 1}])).is_none());
    }
}
