//! `report.html` of `mcptape bench --out DIR` (and of `mcptape import k6`, titled for k6: see
//! [`PageHead`]): one self-contained page (inline CSS and SVG, no script, no network fetch)
//! with the headline (the text table's), PARTIAL and the warnings, the latency percentile
//! spectrum (HdrHistogram style), latency (p50/p99), throughput and errors over time (from the
//! report's `timeSeries`), the parameters with the run's date, host, version and build
//! profile, the turn-completion CDF measured vs predicted with the deadline marked, the
//! per-method and per-URI tables, errors by class, the embedded server's lateness against the
//! model, and the SLO verdict (when present). Censored quantiles read `> 5000 ms` in every cell
//! (as the text table's `> 5000`); with timeouts the latency axes are logarithmic, labelled so.
//!
//! Every string that comes from the transcript, the target or the report (paths, URIs, error
//! classes, model specs) is HTML-escaped ([`html_escape`]): a transcript path or URI holding
//! `<script>` renders as text. No table cell holds raw JSON.
//!
//! Element ids the browser test (and anyone scraping the page) relies on: `p#headline`,
//! `p#partial` (a partial run), `ul#warnings`, `table#driver` (a k6 import), `table#params`,
//! `svg#spectrum`, `table#quantiles`, `svg#latency-time`, `svg#throughput-time` and
//! `svg#errors-time` (with a time series), `svg#cdf`, `table#errors`, `table#phases`,
//! `table#methods` (rows `tr.by-method`, `tr.by-name`; with per-method figures), `table#uris`
//! (with per-URI figures), `table#server` (only with server figures), `section#slo` (only with
//! an SLO), `section#regression` (only with `--baseline`), `table#extra` (report members this
//! page has no dedicated view for, flattened).

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde_json::Value;

use crate::run::BenchResult;
use crate::run::TIMEOUT_CLASS;
use crate::series::TimeSeriesPoint;
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

/// Report members rendered by a dedicated view (the rest go to `table#extra`, flattened).
const KNOWN: &[&str] = &[
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
    "errorClasses",
    "timeSeries",
    "run",
    "faults",
    "warnings",
    "partial",
    "singleOk",
    "turnReadsOk",
    "turnReadsAll",
    "singlePhase",
    "turnPhase",
    "sendRate",
    "maxInFlight",
    "expectedErrorAnswers",
];

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match (super::junit::markup_entity(c), c) {
            (Some(e), _) => o.push_str(e),
            (None, '\'') => o.push_str("&#39;"),
            (None, c) => o.push(c),
        }
    }
    o
}

/// `n` events in interval `p`, per second.
fn per_second(n: u64, p: &TimeSeriesPoint) -> f64 {
    n as f64 * 1000.0 / p.length_ms.max(1e-3)
}

/// A per-second chart over time, `svg#ID` with its title and value-axis label, whose linear
/// value axis reaches the largest of `peaks` (at least 1/s) with 8 % headroom: the SVG opened
/// with its frame and time axis, time in s → x px, value → y px.
fn per_second_chart(
    report: &BenchReport,
    (id, title, y_label): (&str, &str, &str),
    peaks: impl Iterator<Item = f64>,
) -> (
    String,
    impl Fn(f64) -> f64 + Copy,
    impl Fn(f64) -> f64 + Copy,
) {
    let ts = &report.time_series;
    let span = peaks.fold(0.0f64, f64::max).max(1.0) * 1.08;
    let step = nice_step(span, 6);
    let top = (span / step).ceil() * step;
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let (x_top, _) = time_x(ts);
    let x_of = move |x: f64| ML + (x / x_top).clamp(0.0, 1.0) * pw;
    let y_of = move |v: f64| MT + ph - (v / top).clamp(0.0, 1.0) * ph;
    let mut s = frame(id, title, top, step, y_label, false);
    time_frame(&mut s, ts, report.single_unit(), &x_of);
    (s, x_of, y_of)
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
    let ph = H - MT - MB;
    let mut ticks = Vec::new();
    let mut v = 0.0;
    while v <= y_top * (1.0 + 1e-9) {
        let label = if y_fmt_pct {
            format!("{}%", tick_label(v * 100.0, y_step * 100.0))
        } else {
            tick_label(v, y_step)
        };
        ticks.push((MT + ph - v / y_top * ph, label));
        v += y_step;
    }
    frame_ticks(id, title, &ticks, y_label)
}

/// [`frame`] with the y ticks given: each its y (px) and label.
fn frame_ticks(id: &str, title: &str, ticks: &[(f64, String)], y_label: &str) -> String {
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
    for (y, label) in ticks {
        let _ = writeln!(
            s,
            r##"<line class="grid" x1="{ML}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="ytick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            ML + pw,
            ML - 6.0,
            y + 4.0,
            html_escape(label)
        );
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
    // With timeouts (censored values) the axis is logarithmic: the body stays readable.
    let censored = report.single.censored.is_some() || report.turn_reads_all.censored.is_some();
    let lo_ms = [&res.single, &res.turn]
        .iter()
        .filter(|h| !h.is_empty())
        .map(|h| h.min() as f64 / 1000.0)
        .fold(f64::INFINITY, f64::min);
    let hi_ms = (top_us.max(pred_top) / 1000.0).max(0.001);
    let (ticks, y_ms, y_label, y_top) = latency_axis(
        if lo_ms.is_finite() { lo_ms } else { hi_ms },
        hi_ms,
        censored,
    );
    let ph = H - MT - MB;
    let y_of = |us: f64| y_ms(us / 1000.0);
    let mut s = frame_ticks(
        "spectrum",
        &format!(
            "Latency by percentile: single {}, {n}-read turns, F(t)^{n}",
            report.single_unit()
        ),
        &ticks,
        y_label,
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
        let unit = report.single_unit();
        legend(
            &mut s,
            row,
            &format!("single {}", unit.trim_end_matches('s')),
            C_SINGLE,
            false,
        );
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

/// Colours of the time charts: p50, p99, sent, ok; error classes take [`PALETTE`] in turn.
const C_P50: &str = "#1f77b4";
const C_P99: &str = "#d62728";
const C_SENT: &str = "#7f7f7f";
const C_OK: &str = "#2ca02c";
const PALETTE: [&str; 8] = [
    "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#1f77b4",
];

/// The x axis of the time charts: seconds since the run began, up to the last interval's end;
/// returns `(x_top, xstep)`.
fn time_x(ts: &[TimeSeriesPoint]) -> (f64, f64) {
    let x_hi = ts
        .iter()
        .map(|p| (p.start_ms + p.length_ms) / 1000.0)
        .fold(0.0f64, f64::max)
        .max(0.001);
    let xstep = nice_step(x_hi, 8);
    ((x_hi / xstep).ceil() * xstep, xstep)
}

/// The x axis, its title and, where the turn phase begins, a dashed line labelled with the
/// phases (`single requests | turn reads`).
fn time_frame(s: &mut String, ts: &[TimeSeriesPoint], unit: &str, x_of: &dyn Fn(f64) -> f64) {
    let (pw, ph) = (W - ML - MR, H - MT - MB);
    let (x_top, xstep) = time_x(ts);
    x_axis(
        s,
        (x_top, xstep),
        x_of,
        (pw, ph),
        "time since the run began (s)",
    );
    let _ = writeln!(
        s,
        r##"<text class="phase" x="{:.1}" y="{:.1}" fill="#555">single {unit}</text>"##,
        ML + 6.0,
        MT + 14.0
    );
    if let Some(t) = ts.iter().find(|p| p.phase == "turns") {
        let x = x_of(t.start_ms / 1000.0);
        let _ = writeln!(
            s,
            r##"<line class="phase" x1="{x:.1}" y1="{MT}" x2="{x:.1}" y2="{:.1}" stroke="#555" stroke-dasharray="4 3"/><text class="phase" x="{:.1}" y="{:.1}" fill="#555">turn reads</text>"##,
            MT + ph,
            x + 6.0,
            MT + 14.0
        );
    }
}

/// The points of one series per phase (a line never joins the single phase to the turns):
/// `f` gives a point's y value, `None` leaves it out.
fn phase_lines(
    ts: &[TimeSeriesPoint],
    f: &dyn Fn(&TimeSeriesPoint) -> Option<f64>,
    x_of: &dyn Fn(f64) -> f64,
    y_of: &dyn Fn(f64) -> f64,
) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut phase = "";
    for p in ts {
        if p.phase != phase || out.is_empty() {
            out.push(Vec::new());
            phase = &p.phase;
        }
        match f(p) {
            Some(v) => {
                let x = x_of((p.start_ms + p.length_ms / 2.0) / 1000.0);
                out.last_mut().expect("pushed above").push((x, y_of(v)));
            }
            // Nothing ended in the interval: the line breaks (no slope drawn across a gap).
            None if out.last().is_some_and(|l| !l.is_empty()) => out.push(Vec::new()),
            None => {}
        }
    }
    out.retain(|l| !l.is_empty());
    out
}

/// Draws each of `lines` as a polyline, and a lone point (a value between two gaps) as a dot.
fn draw_lines(s: &mut String, class: &str, color: &str, dashed: bool, lines: &[Vec<(f64, f64)>]) {
    for line in lines {
        if let [(x, y)] = line.as_slice() {
            let _ = writeln!(
                s,
                r#"<circle class="curve {class}" cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{color}"/>"#
            );
        } else {
            polyline(s, class, color, dashed, line);
        }
    }
}

/// A y axis: its ticks (y px, label), the value → y px mapping, its title, its top value.
type YAxis = (
    Vec<(f64, String)>,
    Box<dyn Fn(f64) -> f64>,
    &'static str,
    f64,
);

/// A latency y axis (ms) for values from `lo` to `hi` (> 0): linear from 0 with round ticks,
/// or, with `log` (a run with timeouts: censored values at 5 s would squash the body against
/// 0), logarithmic over whole decades with ticks at 1, 2 and 5 × 10^k, titled `log scale`.
fn latency_axis(lo: f64, hi: f64, log: bool) -> YAxis {
    let ph = H - MT - MB;
    if log {
        let d_lo = lo.max(1e-3).log10().floor();
        let d_hi = (hi * 1.2).log10().ceil().max(d_lo + 1.0);
        let y_of = move |ms: f64| {
            let f = (ms.max(10f64.powf(d_lo)).log10() - d_lo) / (d_hi - d_lo);
            MT + ph - f.clamp(0.0, 1.0) * ph
        };
        let mut ticks = Vec::new();
        let mut d = d_lo;
        while d <= d_hi {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powf(d);
                if v <= 10f64.powf(d_hi) * 1.0001 {
                    ticks.push((y_of(v), tick_label(v, 10f64.powf(d))));
                }
            }
            d += 1.0;
        }
        (
            ticks,
            Box::new(y_of),
            "latency (ms, log scale)",
            10f64.powf(d_hi),
        )
    } else {
        let span = hi.max(0.001) * 1.08;
        let step = nice_step(span, 6);
        let top = (span / step).ceil() * step;
        let mut ticks = Vec::new();
        let mut v = 0.0;
        while v <= top * (1.0 + 1e-9) {
            ticks.push((MT + ph - v / top * ph, tick_label(v, step)));
            v += step;
        }
        (
            ticks,
            Box::new(move |ms: f64| MT + ph - (ms / top).clamp(0.0, 1.0) * ph),
            "latency (ms)",
            top,
        )
    }
}

/// Latency over time (`svg#latency-time`): per interval of `report.time_series`, the p50 and
/// p99 of the requests that ended in it, ms. A censored quantile (timeouts) is drawn at its
/// bound as a triangle, its legend saying `> bound`. When the run has timeouts the y axis is
/// logarithmic (labelled so): the body stays readable under the 5 s censored points. `None`
/// without a time series.
pub fn latency_time_svg(report: &BenchReport) -> Option<String> {
    let ts = &report.time_series;
    let vals: Vec<f64> = ts
        .iter()
        .flat_map(|p| [p.p50_ms, p.p99_ms])
        .flatten()
        .filter(|v| *v > 0.0)
        .collect();
    if vals.is_empty() {
        return None;
    }
    let timeouts = ts
        .iter()
        .any(|p| p.p50_censored || p.p99_censored || p.errors.contains_key(TIMEOUT_CLASS));
    let hi = vals.iter().copied().fold(0.0f64, f64::max);
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let (ticks, y_of, y_label, _) = latency_axis(lo, hi, timeouts);
    let (x_top, _) = time_x(ts);
    let pw = W - ML - MR;
    let x_of = move |x: f64| ML + (x / x_top).clamp(0.0, 1.0) * pw;
    let mut s = frame_ticks(
        "latency-time",
        "Latency over time: p50 and p99 of the requests ending in each interval",
        &ticks,
        y_label,
    );
    time_frame(&mut s, ts, report.single_unit(), &x_of);
    for (class, color, get) in [
        (
            "p50",
            C_P50,
            &(|p: &TimeSeriesPoint| p.p50_ms) as &dyn Fn(&TimeSeriesPoint) -> Option<f64>,
        ),
        ("p99", C_P99, &|p: &TimeSeriesPoint| p.p99_ms),
    ] {
        draw_lines(
            &mut s,
            class,
            color,
            false,
            &phase_lines(ts, get, &x_of, &*y_of),
        );
    }
    // Censored quantiles: a triangle at the bound.
    let mut bounds: Vec<f64> = Vec::new();
    for p in ts {
        for (v, censored) in [(p.p50_ms, p.p50_censored), (p.p99_ms, p.p99_censored)] {
            if let (Some(v), true) = (v, censored) {
                let (x, y) = (x_of((p.start_ms + p.length_ms / 2.0) / 1000.0), y_of(v));
                let _ = writeln!(
                    s,
                    r#"<path class="censored" d="M{:.1},{:.1} l5,9 h-10 z" fill="{C_P99}"/>"#,
                    x,
                    y - 6.0
                );
                if !bounds.contains(&v) {
                    bounds.push(v);
                }
            }
        }
    }
    legend(&mut s, 0, "p50", C_P50, false);
    legend(&mut s, 1, "p99", C_P99, false);
    for (i, b) in bounds.iter().enumerate() {
        let ly = MT + 16.0 + (2 + i) as f64 * 20.0;
        let lx = W - MR + 14.0;
        let _ = writeln!(
            s,
            r#"<g class="legend"><path d="M{:.1},{:.1} l5,9 h-10 z" fill="{C_P99}"/><text x="{:.1}" y="{:.1}">censored: &gt; {b:.0} ms</text></g>"#,
            lx + 11.0,
            ly - 5.0,
            lx + 28.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    Some(s)
}

/// Throughput over time (`svg#throughput-time`): requests sent and answered with a result per
/// second, per interval (its count over its length). `None` without a time series.
pub fn throughput_time_svg(report: &BenchReport) -> Option<String> {
    let ts = &report.time_series;
    if ts.is_empty() {
        return None;
    }
    let (mut s, x_of, y_of) = per_second_chart(
        report,
        (
            "throughput-time",
            "Throughput over time: requests sent and answered ok per second",
            "requests per second",
        ),
        ts.iter().map(|p| per_second(p.sent.max(p.ok), p)),
    );
    let sent = phase_lines(ts, &|p| Some(per_second(p.sent, p)), &x_of, &y_of);
    draw_lines(&mut s, "sent", C_SENT, true, &sent);
    let ok = phase_lines(ts, &|p| Some(per_second(p.ok, p)), &x_of, &y_of);
    draw_lines(&mut s, "ok", C_OK, false, &ok);
    legend(&mut s, 0, "sent /s", C_SENT, true);
    legend(&mut s, 1, "answered ok /s", C_OK, false);
    s.push_str("</svg>\n");
    Some(s)
}

/// Grey of the recorded error answers in the errors chart.
const C_RECORDED: &str = "#c7c7c7";

/// Errors over time (`svg#errors-time`): per interval, the requests that ended otherwise than
/// with a result, per second, stacked: the error answers that were the recorded ones (grey, at
/// the bottom: the recording's own not-found read, replayed), then the others by class (error
/// answers, `timeout`, `closed`), class labels shortened as the text table's rows. `None`
/// without a time series or without any error.
pub fn errors_time_svg(report: &BenchReport) -> Option<String> {
    let ts = &report.time_series;
    // Not as recorded: the class's count less its recorded error answers.
    let count = |p: &TimeSeriesPoint, c: &str| {
        let n = p.errors.get(c).copied().unwrap_or(0)
            - p.errors_as_recorded
                .get(c)
                .copied()
                .unwrap_or(0)
                .min(p.errors.get(c).copied().unwrap_or(0));
        if c == "closed" { n + p.closed } else { n }
    };
    let recorded = |p: &TimeSeriesPoint| p.errors_as_recorded.values().sum::<u64>();
    let mut classes: Vec<String> = Vec::new();
    for p in ts {
        for k in p.errors.keys() {
            if !classes.contains(k) && count(p, k) > 0 {
                classes.push(k.clone());
            }
        }
    }
    if ts.iter().any(|p| p.closed > 0) && !classes.iter().any(|c| c == "closed") {
        classes.push("closed".into());
    }
    let any_recorded = ts.iter().any(|p| recorded(p) > 0);
    if classes.is_empty() && !any_recorded {
        return None;
    }
    let (mut s, x_of, y_of) = per_second_chart(
        report,
        (
            "errors-time",
            "Errors over time, stacked by class (grey: recorded error answers, as recorded)",
            "errors per second",
        ),
        ts.iter().map(|p| {
            per_second(
                recorded(p) + classes.iter().map(|c| count(p, c)).sum::<u64>(),
                p,
            )
        }),
    );
    for p in ts {
        let x0 = x_of(p.start_ms / 1000.0);
        let x1 = x_of((p.start_ms + p.length_ms) / 1000.0);
        let mut base = 0.0;
        let layers = std::iter::once((
            "recorded error answers (as recorded)".to_owned(),
            recorded(p),
            C_RECORDED,
        ))
        .chain(
            classes
                .iter()
                .enumerate()
                .map(|(i, c)| (c.clone(), count(p, c), PALETTE[i % PALETTE.len()])),
        );
        for (label, n, color) in layers {
            if n == 0 {
                continue;
            }
            let v = per_second(n, p);
            let (ya, yb) = (y_of(base), y_of(base + v));
            let _ = writeln!(
                s,
                r#"<rect class="err" x="{x0:.1}" y="{yb:.1}" width="{:.1}" height="{:.1}" fill="{color}"><title>{}: {n}</title></rect>"#,
                (x1 - x0 - 0.5).max(0.5),
                (ya - yb).max(0.5),
                html_escape(&label)
            );
            base += v;
        }
    }
    let mut row = 0;
    if any_recorded {
        legend(&mut s, row, "as recorded", C_RECORDED, false);
        row += 1;
    }
    for (i, c) in classes.iter().enumerate() {
        legend(
            &mut s,
            row + i,
            &crate::render::table::view_label(c),
            PALETTE[i % PALETTE.len()],
            false,
        );
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

/// A quantile of `q` as an HTML cell's text: `12.639 ms`, `> 5000 ms` when it falls among the
/// timed-out values (censored: the text table's `> 5000` with the unit), `n/a` when empty.
fn q_cell(q: &Quantiles, us: u64, censored: impl Fn(&crate::stats::Censored) -> bool) -> String {
    let c = crate::render::table::cell(q, us, censored);
    if c == "n/a" { c } else { format!("{c} ms") }
}

fn quantile_row(s: &mut String, name: &str, q: &Quantiles) {
    // A mean over censored values is a lower bound.
    let mean = match (&q.censored, q.count) {
        (_, 0) => "n/a".to_owned(),
        (Some(_), _) => format!("≥ {}", ms(q.mean_us)),
        (None, _) => ms(q.mean_us),
    };
    let _ = writeln!(
        s,
        "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        html_escape(name),
        q.count,
        html_escape(&q_cell(q, q.p50_us, |c| c.p50)),
        html_escape(&q_cell(q, q.p90_us, |c| c.p90)),
        html_escape(&q_cell(q, q.p99_us, |c| c.p99)),
        html_escape(&q_cell(q, q.p999_us, |c| c.p999)),
        html_escape(&q_cell(q, q.max_us, |c| c.max)),
        html_escape(&mean)
    );
}

const QUANTILE_HEAD: &str = "<tr><th></th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>";

/// The head of a per-method / per-URI table.
const METHOD_HEAD: &str = "<th>sent</th><th>ok</th><th>errors</th><th>not as recorded</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>";

/// Counts by class as one cell's text, in the classes' order: `2 internal (-32603); 1 timeout`.
fn counts_by_class(counts: &std::collections::BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(class, n)| format!("{n} {class}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One row of `table#methods` or `table#uris`: `first` (the method, or the URI) as the row
/// head, `name` (tool / prompt name) when given, then the counts and censored-aware quantiles.
fn method_row(s: &mut String, v: &crate::stats::MethodView, first: &str, name: Option<&str>) {
    let q = &v.latency;
    let errors = counts_by_class(&v.errors);
    let _ = write!(
        s,
        "<tr class=\"{}\"><th>{}</th>",
        if v.name.is_some() {
            "by-name"
        } else {
            "by-method"
        },
        html_escape(first)
    );
    if let Some(n) = name {
        let _ = write!(s, "<td>{}</td>", html_escape(n));
    }
    let _ = writeln!(
        s,
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        v.sent,
        v.ok,
        html_escape(&errors),
        html_escape(&match v.no_recorded_answer {
            0 => v.not_as_recorded.to_string(),
            n => format!("{}; {n} with no recorded answer", v.not_as_recorded),
        }),
        html_escape(&q_cell(q, q.p50_us, |c| c.p50)),
        html_escape(&q_cell(q, q.p90_us, |c| c.p90)),
        html_escape(&q_cell(q, q.p99_us, |c| c.p99)),
        html_escape(&q_cell(q, q.max_us, |c| c.max)),
    );
}

/// `table#methods` (the single phase by method, then by tool and prompt) and `table#uris` (its
/// `resources/read` by URI): sent, ok, errors by class, p50/p90/p99/max (censored: `> 5000
/// ms`), and the tools a live target was not sent; nothing when the report has no per-method
/// figures.
fn method_section(s: &mut String, report: &BenchReport) {
    if report.by_method.is_empty() && report.skipped_tools.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<h2>By method (single phase, mix {})</h2>\n<table id=\"methods\"><tr><th>method</th><th>name</th>{METHOD_HEAD}",
        html_escape(&report.mix)
    );
    for v in report
        .by_method
        .iter()
        .chain(&report.by_tool)
        .chain(&report.by_prompt)
    {
        method_row(s, v, &v.method, Some(v.name.as_deref().unwrap_or("")));
    }
    s.push_str("</table>\n");
    if !report.by_uri.is_empty() {
        let _ = writeln!(
            s,
            "<h2>By URI (resources/read of the single phase)</h2>\n<table id=\"uris\"><tr><th>uri</th>{METHOD_HEAD}"
        );
        for v in &report.by_uri {
            method_row(s, v, v.name.as_deref().unwrap_or(""), None);
        }
        s.push_str("</table>\n");
    }
    if !report.skipped_tools.is_empty() {
        let _ = writeln!(
            s,
            "<p id=\"skipped-tools\">Tools not called (live target, no readOnlyHint, not --allow-tool): {}</p>",
            html_escape(&report.skipped_tools.join(", "))
        );
    }
}

/// A JSON value as plain text for a table cell, never raw JSON: strings unquoted, numbers and
/// booleans as written, `null` empty, an array as its items' text joined by `, `, an object as
/// `key: value` pairs joined by `; `.
fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(a) => a.iter().map(json_text).collect::<Vec<_>>().join(", "),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}: {}", json_text(v)))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// Appends one `table#extra` row per scalar under `v`, keyed by its path (`a.b.0`).
fn flat_rows(s: &mut String, key: &str, v: &Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                flat_rows(s, &format!("{key}.{k}"), x);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, x) in a.iter().enumerate() {
                flat_rows(s, &format!("{key}.{i}"), x);
            }
        }
        Value::Null => {}
        other => row(s, key, &json_text(other)),
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
.verdict.partial{background:#ef6c00}.headline{font-size:15px;margin:6px 0}.headline b{font-variant-numeric:tabular-nums}\
ul.warnings{color:#8a4b00}\
.flag{color:#c62828;font-weight:600}.muted{color:#777}ul.failures{color:#c62828}";

/// What names the page and what a driver adds to it: [`bench_html`] is `mcptape bench: T`;
/// a k6 import titles it for k6 and adds its own figures (VUs, dropped iterations, handshake
/// failures) as a table.
#[derive(Debug, Clone, Default)]
pub struct PageHead {
    /// The `<title>` and `<h1>` (plain text, escaped when written).
    pub title: String,
    /// A section right after the headline: its `<h2>` and rows (plain text), in a table with
    /// the id `driver`; none when `None`.
    pub driver: Option<(String, Vec<(String, String)>)>,
}

/// `; not as recorded: 7 internal (-32603), 1 timeout` for the requests of `phase` (`single`,
/// `turns`) with counters `c` that ended otherwise than recorded: error answers by class less
/// those the time series marks as recorded, timeouts, closed. Empty when there were none or
/// the report has no time series (a k6 import: the classes cannot be told apart).
fn not_as_recorded(report: &BenchReport, phase: &str, c: &crate::stats::PhaseCounters) -> String {
    let pts: Vec<&TimeSeriesPoint> = report
        .time_series
        .iter()
        .filter(|p| p.phase == phase)
        .collect();
    if pts.is_empty() {
        return String::new();
    }
    let mut parts = Vec::new();
    for (class, n) in &c.error_answers {
        let recorded: u64 = pts
            .iter()
            .filter_map(|p| p.errors_as_recorded.get(class))
            .sum();
        // `n` holds the answers to requests with a recorded answer only (the others are
        // `noRecordedAnswer`).
        let other = n.saturating_sub(recorded);
        if other > 0 {
            parts.push(format!("{other} {class}"));
        }
    }
    let mut none = std::collections::BTreeMap::<&str, u64>::new();
    for p in &pts {
        for (class, n) in &p.errors_without_recorded_answer {
            *none.entry(class.as_str()).or_insert(0) += n;
        }
    }
    let unrecorded: Vec<String> = none.iter().map(|(k, n)| format!("{n} {k}")).collect();
    if c.timed_out > 0 {
        parts.push(format!("{} {TIMEOUT_CLASS}", c.timed_out));
    }
    if c.closed > 0 {
        parts.push(format!("{} closed", c.closed));
    }
    let unrecorded = match c.no_recorded_answer {
        0 => String::new(),
        n if unrecorded.is_empty() => {
            format!("; {n} sent with no recorded answer (compared with nothing)")
        }
        n => format!(
            "; {n} sent with no recorded answer (compared with nothing): {}",
            unrecorded.join(", ")
        ),
    };
    if parts.is_empty() {
        unrecorded
    } else {
        format!("; not as recorded: {}{unrecorded}", parts.join(", "))
    }
}

/// The file name of the report's transcript (its path when it has none).
fn transcript_name(report: &BenchReport) -> String {
    std::path::Path::new(&report.transcript)
        .file_name()
        .map_or(report.transcript.clone(), |f| {
            f.to_string_lossy().into_owned()
        })
}

/// The whole page (`report.html`), self-contained: inline CSS and SVG, no script, no external
/// reference. Titled `mcptape bench: T` ([`report_html`] with that [`PageHead`]).
pub fn bench_html(report: &BenchReport, res: &BenchResult) -> String {
    let head = PageHead {
        title: format!("mcptape bench: {}", transcript_name(report)),
        driver: None,
    };
    report_html(report, res, &head)
}

/// The page of a run under `head`'s title: the headline (the text table's: `N of M answered as
/// recorded: R results, E recorded errors`), a PARTIAL mark and the warnings, what was not a
/// measurement, the SLO and regression verdicts, the driver's section, the latency spectrum
/// and quantiles (censored cells `> 5000 ms`), latency / throughput / errors over time (with a
/// time series), the parameters (with the run's date, duration, host, mcptape version and
/// build profile when known), the turn-completion CDF, the per-method and per-URI tables,
/// errors by class and the phase counters, the embedded server's figures; every report member
/// with no view of its own in `table#extra`, flattened. Sections guard optional parts.
pub fn report_html(report: &BenchReport, res: &BenchResult, head: &PageHead) -> String {
    let json = serde_json::to_value(report).unwrap_or(Value::Null);
    let unit = report.single_unit();
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    let _ = writeln!(
        s,
        "<title>{t}</title>\n<style>{CSS}</style></head><body>\n<h1>{t}</h1>",
        t = html_escape(&head.title)
    );
    let _ = writeln!(
        s,
        "<p class=\"muted\">{} single {unit}, {} turns of {} reads, seed {}{}</p>",
        report.single_phase.sent,
        report.turns,
        report.parallel,
        report.seed,
        report
            .run
            .as_ref()
            .and_then(|r| r.started_at.as_deref())
            .map_or(String::new(), |d| format!(", {}", html_escape(d)))
    );
    // The headline: the text table's, one line per phase; then, from the time series, what
    // the requests not answered as recorded were.
    let q = &report.single;
    let others = not_as_recorded(report, "single", &report.single_phase);
    let _ = writeln!(
        s,
        "<p class=\"headline\" id=\"headline\">single {unit} ({}): <b>{}</b>{}; p50 <b>{}</b>, p99 <b>{}</b>, {:.1}/s answered</p>",
        html_escape(&report.load),
        html_escape(&crate::render::table::success_line(&report.single_phase)),
        html_escape(&others),
        html_escape(&q_cell(q, q.p50_us, |c| c.p50)),
        html_escape(&q_cell(q, q.p99_us, |c| c.p99)),
        report.throughput_per_s
    );
    if report.turns > 0 {
        let t = &report.turn;
        let _ = writeln!(
            s,
            "<p class=\"headline\">{}-read turns: reads <b>{}</b>{}; turn p50 <b>{}</b>, p99 <b>{}</b>, {} of {} hit the deadline</p>",
            report.parallel,
            html_escape(&crate::render::table::success_line(&report.turn_phase)),
            html_escape(&not_as_recorded(report, "turns", &report.turn_phase)),
            html_escape(&q_cell(t, t.p50_us, |c| c.p50)),
            html_escape(&q_cell(t, t.p99_us, |c| c.p99)),
            report.turns_hit_deadline,
            report.turns
        );
    }
    if report.partial {
        s.push_str("<p class=\"verdict partial\" id=\"partial\">PARTIAL: the run did not finish; the figures cover what ran until then</p>\n");
    }
    if !report.warnings.is_empty() {
        s.push_str("<ul class=\"warnings\" id=\"warnings\">\n");
        for w in &report.warnings {
            let _ = writeln!(s, "<li>{}</li>", html_escape(w));
        }
        s.push_str("</ul>\n");
    }
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
    if let Some((title, rows)) = &head.driver {
        let _ = writeln!(s, "<h2>{}</h2>\n<table id=\"driver\">", html_escape(title));
        for (k, v) in rows {
            row(&mut s, k, v);
        }
        s.push_str("</table>\n");
    }

    s.push_str("<h2>Latency spectrum</h2>\n");
    s.push_str(&spectrum_svg(report, res));
    s.push_str("<table id=\"quantiles\">\n");
    s.push_str(QUANTILE_HEAD);
    quantile_row(&mut s, &format!("all single {unit}"), &report.single);
    if report.single_phase.answered_ok != report.single_phase.sent
        || report.single_ok.count != report.single.count
    {
        quantile_row(&mut s, "answered ok", &report.single_ok);
        for v in &report.error_classes {
            quantile_row(&mut s, &v.class, &v.latency);
        }
    }
    quantile_row(
        &mut s,
        &format!("{}-read turn", report.parallel),
        &report.turn,
    );
    quantile_row(&mut s, "reads inside turns", &report.turn_reads_all);
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

    if let Some(svg) = latency_time_svg(report) {
        s.push_str("<h2>Over time</h2>\n");
        s.push_str(&svg);
        if let Some(t) = throughput_time_svg(report) {
            s.push_str(&t);
        }
        match errors_time_svg(report) {
            Some(e) => s.push_str(&e),
            None => s.push_str("<p id=\"errors-time\">No error in any interval.</p>\n"),
        }
    }

    s.push_str("<h2>Parameters</h2>\n<table id=\"params\">\n");
    if let Some(r) = &report.run {
        if let Some(d) = &r.started_at {
            row(&mut s, "date (UTC)", d);
        }
        row(&mut s, "duration", &format!("{:.1} s", r.duration_s));
        if let Some(h) = &r.host {
            row(&mut s, "host", h);
        }
        row(&mut s, "mcptape version", &r.mcptape_version);
        row(&mut s, "build profile", &r.build_profile);
    }
    row(&mut s, "transcript", &report.transcript);
    row(&mut s, "target", &report.target);
    row(
        &mut s,
        "latency model",
        report.latency.as_deref().unwrap_or("(live target)"),
    );
    if !report.faults.is_empty() {
        row(&mut s, "faults injected", &report.faults.join(", "));
    }
    row(&mut s, "seed", &report.seed.to_string());
    row(&mut s, "load", &report.load);
    row(&mut s, "reads per turn", &report.parallel.to_string());
    row(&mut s, "deadline", &ms(report.deadline_us as f64));
    row(&mut s, "read timeout", &ms(report.timeout_us as f64));
    row(
        &mut s,
        &format!("single {unit}"),
        &format!(
            "{} asked, {} sent, {} answered or timed out{}",
            report.reads_asked,
            report.single_phase.sent,
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
        &format!("{:.1} {unit}/s answered", report.throughput_per_s),
    );
    if let Some(r) = &report.send_rate {
        row(
            &mut s,
            "send rate",
            &format!(
                "asked {:.1}/s, achieved {:.1}/s; {} scheduled: {} sent late, {} dropped",
                r.asked_per_s, r.achieved_per_s, r.scheduled, r.sent_late, r.dropped
            ),
        );
    }
    if let Some(v) = &report.validation {
        row(
            &mut s,
            "contents validation (--validate)",
            &format!(
                "{} results: p50 {}, p99 {}, max {}",
                v.count,
                ms(v.p50_us as f64),
                ms(v.p99_us as f64),
                ms(v.max_us as f64)
            ),
        );
    }
    s.push_str("</table>\n");

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
    s.push_str("</table>\n<table id=\"phases\"><tr><th>phase</th><th>sent</th><th>ok</th><th>error answers</th><th>as recorded</th><th>timed out</th><th>closed</th><th>no recorded answer</th><th>cancellations sent</th><th>late after cancel</th><th>abandoned</th><th>most in flight</th></tr>\n");
    for (name, c) in [
        (format!("single {unit}"), &report.single_phase),
        ("reads inside turns".to_owned(), &report.turn_phase),
    ] {
        let by_class = counts_by_class(&c.error_answers);
        let _ = writeln!(
            s,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html_escape(&name),
            c.sent,
            c.answered_ok,
            c.error_answers_total(),
            if by_class.is_empty() {
                String::new()
            } else {
                format!(" ({})", html_escape(&by_class))
            },
            c.errors_as_recorded,
            c.timed_out,
            c.closed,
            c.no_recorded_answer,
            c.cancellations_sent,
            c.late_responses,
            c.abandoned,
            c.max_in_flight
        );
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
        &format!("{} (by {})", report.cancellations, report.cancellation),
    );
    row(
        &mut s,
        "late responses (after cancellation)",
        &report.late_responses.to_string(),
    );
    if report.input_rounds > 0 {
        row(
            &mut s,
            "input_required rounds retried",
            &report.input_rounds.to_string(),
        );
    }
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
        // Every request counted once, as the table says it.
        row(&mut s, "requests", &sv.requests_line());
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
        if let Some(n) = sv.io_note() {
            row(&mut s, "stdout pipe and splice", &n);
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
                flat_rows(&mut s, k, v);
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
    fn slo_renders_when_present() {
        let slo = serde_json::json!({"pass": false, "checks": [
            {"objective": "p99 < 5ms", "measured": "7ms", "pass": false},
            {"objective": "errors < 1%", "measured": "0%", "pass": true}]});
        let page = slo_section(&slo);
        assert!(page.contains("verdict fail"));
        assert_eq!(page.matches("<tr class=\"fail\">").count(), 1);
        assert_eq!(page.matches("<tr class=\"pass\">").count(), 1);
    }

    /// A run with timeouts: every censored cell reads `> 5000 ms` (escaped), never the bucket
    /// value; the latency-over-time chart has a log axis saying so; the single phase of reads
    /// and tool calls is "single requests" in the spectrum's title; partial and its warning show.
    #[test]
    fn censored_cells_read_greater_than_the_timeout_and_the_time_axis_goes_log() {
        let mut r = BenchResult::new();
        let mut series = crate::series::PhaseSeries::new();
        for i in 0..90u64 {
            r.single.record(10_000 + i).unwrap();
            series.sent(i * 1_000, 1);
            series.ok(i * 1_000 + 500, 10_000 + i);
        }
        for i in 0..10u64 {
            r.single.record(5_005_311).unwrap();
            series.sent(95_000 + i, 1);
            series.timeout(5_100_000 + i, 5_005_311);
        }
        let mut timeouts = crate::stats::new_hist();
        timeouts.record_n(5_005_311, 10).unwrap();
        r.single_by_class.insert(TIMEOUT_CLASS.into(), timeouts);
        r.single_censored_from_us = Some(5_005_311);
        r.single_phase.sent = 100;
        r.single_phase.answered_ok = 90;
        r.single_phase.timed_out = 10;
        r.single_elapsed_s = 5.2;
        r.single_series = series;
        let mut tools = crate::run::KeyStats::new();
        tools.sent = 1;
        r.by_method.insert("tools/call".into(), tools);
        r.single_cut = true;
        r.reads_asked = 200;
        let report = r.report(
            crate::run::RunSettings::default(),
            "t.jsonl",
            "embedded",
            Some("fixed:10ms".into()),
            1,
            None,
        );
        assert!(report.single.censored.unwrap().p99);
        let page = bench_html(&report, &r);
        let quantiles = &page[page.find("<table id=\"quantiles\"").unwrap()..];
        let quantiles = &quantiles[..quantiles.find("</table>").unwrap()];
        assert!(quantiles.contains("<td>&gt; 5000 ms</td>"), "{quantiles}");
        assert!(
            !page.contains("5005.311"),
            "a censored value printed as measured"
        );
        let time = &page[page.find("<svg id=\"latency-time\"").unwrap()..];
        let time = &time[..time.find("</svg>").unwrap()];
        assert!(time.contains("latency (ms, log scale)"), "{time}");
        assert!(time.contains("censored: &gt; 5000 ms"), "{time}");
        assert!(page.contains("<svg id=\"throughput-time\""));
        assert!(page.contains("<svg id=\"errors-time\""));
        assert!(page.contains("Latency by percentile: single requests,"));
        assert!(page.contains("id=\"partial\""));
        assert!(page.contains(
            "partial: the single phase stopped at --max-phase 25000 ms after 100 of 200 requests"
        ));
        // No raw JSON in a table cell.
        for cell in page.split("<td>").skip(1) {
            let cell = &cell[..cell.find("</td>").unwrap_or(cell.len())];
            assert!(!cell.starts_with('{') && !cell.starts_with('['), "{cell}");
        }
    }
}
