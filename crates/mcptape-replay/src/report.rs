//! Latency summaries: quantiles from an HdrHistogram (µs), the prediction of
//! an N-read turn from the single-read distribution, the HdrHistogram
//! interval log (`.hlog`) and a hand-written SVG percentile plot.

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2Serializer};
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

/// One named histogram for the interval log.
pub struct Tagged<'a> {
    /// Tag written in the log (`single`, `turn`, `server-achieved`...).
    pub tag: &'a str,
    /// The histogram, µs.
    pub hist: &'a Histogram<u64>,
    /// Interval start, seconds since the run began.
    pub start_s: f64,
    /// Interval length, seconds.
    pub duration_s: f64,
}

/// Writes an HdrHistogram interval log (V2 compressed histograms, the format
/// of the Java `HistogramLogWriter`, mergeable across machines; max values
/// divided by 1000 so the `max` column reads in ms).
///
/// # Errors
/// A message if serialization fails.
pub fn write_hlog(entries: &[Tagged<'_>], comment: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut ser = V2Serializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        b.add_comment(comment).with_max_value_divisor(1000.0);
        let mut w = b
            .begin_log_with(&mut out, &mut ser)
            .map_err(|e| e.to_string())?;
        for e in entries {
            let tag = Tag::new(e.tag).ok_or_else(|| format!("bad tag {:?}", e.tag))?;
            w.write_histogram(
                e.hist,
                std::time::Duration::from_secs_f64(e.start_s.max(0.0)),
                std::time::Duration::from_secs_f64(e.duration_s.max(0.0)),
                Some(tag),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(out)
}

/// Reads every interval histogram of an `.hlog` and merges them (optionally
/// only those tagged `tag`).
///
/// # Errors
/// A message naming the entry index that failed, or "no histogram" if the log
/// has none.
pub fn merge_hlog_tagged(bytes: &[u8], tag: Option<&str>) -> Result<Histogram<u64>, String> {
    let mut total = new_hist();
    let mut de = Deserializer::new();
    let mut n = 0;
    for (i, entry) in IntervalLogIterator::new(bytes).enumerate() {
        let entry = entry.map_err(|e| match e {
            hdrhistogram::serialization::interval_log::LogIteratorError::ParseError { offset } => {
                format!("entry {i}: not an HdrHistogram interval log line at byte {offset}")
            }
        })?;
        if let LogEntry::Interval(ilh) = entry {
            if let Some(t) = tag
                && ilh.tag().map(|x| x.as_str()) != Some(t)
            {
                continue;
            }
            let raw = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                ilh.encoded_histogram(),
            )
            .map_err(|e| format!("entry {i}: base64: {e}"))?;
            let h: Histogram<u64> = de
                .deserialize(&mut &raw[..])
                .map_err(|e| format!("entry {i}: histogram: {e}"))?;
            total
                .add(&h)
                .map_err(|e| format!("entry {i}: cannot merge this histogram: {e}"))?;
            n += 1;
        }
    }
    if n == 0 {
        return Err("no histogram in the log".into());
    }
    Ok(total)
}

/// [`merge_hlog_tagged`] over every tag except `turn` (so the log of a bench
/// run gives the single-read distribution... or whatever the only tag is).
///
/// # Errors
/// See [`merge_hlog_tagged`].
pub fn merge_hlog(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    merge_hlog_tagged(bytes, Some("single")).or_else(|_| merge_hlog_tagged(bytes, None))
}

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

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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

    #[test]
    fn hlog_round_trip_merges_the_tagged_histograms() {
        let mut a = new_hist();
        let mut b = new_hist();
        for v in [1_000u64, 2_000, 3_000] {
            a.record(v).unwrap();
        }
        b.record(50_000).unwrap();
        let log = write_hlog(
            &[
                Tagged {
                    tag: "single",
                    hist: &a,
                    start_s: 0.0,
                    duration_s: 1.0,
                },
                Tagged {
                    tag: "turn",
                    hist: &b,
                    start_s: 1.0,
                    duration_s: 1.0,
                },
            ],
            "test",
        )
        .unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("Tag=single,"), "{text}");
        let single = merge_hlog(&log).unwrap();
        assert_eq!(single.len(), 3);
        assert_eq!(single.max(), a.max());
        let all = merge_hlog_tagged(&log, None).unwrap();
        assert_eq!(all.len(), 4);
        assert!(merge_hlog(b"#just a comment\n").is_err());
    }

    /// The fresh-user report saw `entry 0: ParseError { offset: 0 }`.
    #[test]
    fn hlog_parse_error_is_human_text() {
        let e = merge_hlog_tagged(b"Tag=single,abc\n", None).unwrap_err();
        assert!(!e.contains("ParseError"), "{e}");
        assert_eq!(
            e,
            "entry 0: not an HdrHistogram interval log line at byte 0"
        );
    }

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

fn ms(us: u64) -> String {
    format!("{:.3} ms", us as f64 / 1000.0)
}

/// `ms(us)`, or `n/a` when the histogram behind it is empty (`count` 0):
/// an empty histogram has no p50, not a p50 of 0.
fn ms_or_na(count: u64, us: u64) -> String {
    if count == 0 { "n/a".into() } else { ms(us) }
}

fn ms_f(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
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

    /// The human table printed by `mcptape bench`.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "mcptape bench  {}", self.transcript);
        let _ = writeln!(
            s,
            "target: {}   latency: {}   seed: {}",
            self.target,
            self.latency.as_deref().unwrap_or("(live target)"),
            self.seed
        );
        let _ = writeln!(s);
        let q = &self.single;
        let _ = writeln!(s, "single reads ({}, n={})", self.load, q.count);
        if self.single_cut {
            let _ = writeln!(
                s,
                "  phase stopped at --max-phase {} after {} of {} reads",
                ms(self.max_phase_ms * 1000),
                q.count,
                self.reads_asked
            );
        }
        let _ = writeln!(
            s,
            "  {:>12} {:>12} {:>12} {:>12} {:>12}  {:>12}",
            "p50", "p90", "p99", "p99.9", "max", "throughput"
        );
        let _ = writeln!(
            s,
            "  {:>12} {:>12} {:>12} {:>12} {:>12}  {:>10.1}/s",
            ms_or_na(q.count, q.p50_us),
            ms_or_na(q.count, q.p90_us),
            ms_or_na(q.count, q.p99_us),
            ms_or_na(q.count, q.p999_us),
            ms_or_na(q.count, q.max_us),
            self.throughput_per_s
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{}-read turns (n={}, deadline {}, timeout {})",
            self.parallel,
            self.turns,
            ms(self.deadline_us),
            ms(self.timeout_us)
        );
        if self.turns_cut {
            let _ = writeln!(
                s,
                "  phase stopped at --max-phase {} after {} of {} turns",
                ms(self.max_phase_ms * 1000),
                self.turns,
                self.turns_asked
            );
        }
        let _ = writeln!(
            s,
            "  {:>6} {:>12} {:>18} {:>12}",
            "",
            "measured",
            format!("predicted F^{}", self.parallel),
            "difference"
        );
        for p in &self.prediction {
            let _ = writeln!(
                s,
                "  {:>6} {:>12} {:>18} {:>12}",
                format!("p{}", p.q * 100.0),
                ms(p.measured_us),
                ms(p.predicted_us),
                format!("{:+.3} ms", p.difference_us as f64 / 1000.0)
            );
        }
        // The F^N p99 needs the single-read quantile at 0.99^(1/N); with
        // fewer than 10 single reads above it, it is the sample's top values.
        let above =
            self.single.count as f64 * (1.0 - 0.99f64.powf(1.0 / f64::from(self.parallel.max(1))));
        if !self.prediction.is_empty() && above < 10.0 {
            let _ = writeln!(
                s,
                "  (the predicted p99 rests on {above:.1} single reads above the {:.2}th percentile: noisy; run more --reads)",
                100.0 * 0.99f64.powf(1.0 / f64::from(self.parallel.max(1)))
            );
        }
        if self.prediction.is_empty() {
            // No prediction without single reads; the measured turn time may exist.
            let t = &self.turn;
            for (q, us) in [("p50", t.p50_us), ("p99", t.p99_us)] {
                let _ = writeln!(
                    s,
                    "  {:>6} {:>12} {:>18} {:>12}",
                    q,
                    ms_or_na(t.count, us),
                    "n/a",
                    "n/a"
                );
            }
        }
        let _ = writeln!(
            s,
            "  turns hitting the deadline: {} ({:.2}%; predicted {})",
            self.turns_hit_deadline,
            self.deadline_share * 100.0,
            self.predicted_deadline_share
                .map_or("n/a".into(), |p| format!("{:.2}%", p * 100.0))
        );
        let _ = writeln!(
            s,
            "  cancellations sent: {}   late responses after cancel: {}   abandoned at timeout: {}",
            self.cancellations, self.late_responses, self.abandoned
        );
        let recorded = if self.recorded_read_errors > 0 {
            format!(
                " (as recorded: {} of the {} recorded reads {} an error answer, replayed each cycle)",
                self.recorded_read_errors,
                self.recorded_reads,
                if self.recorded_read_errors == 1 {
                    "is"
                } else {
                    "are"
                }
            )
        } else {
            String::new()
        };
        if self.errors.is_empty() {
            let _ = writeln!(s, "  errors: none{recorded}");
        } else {
            let list: Vec<String> = self
                .errors
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            let _ = writeln!(s, "  errors by class{recorded}: {}", list.join(", "));
        }
        let _ = writeln!(
            s,
            "  error answers are timed like results and count in p50/p99; timeouts and closed connections do not"
        );
        if let Some(sv) = &self.server {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "server-side delay (embedded serve, {} replies)",
                sv.achieved.count
            );
            let _ = writeln!(s, "  {:<36} {:>12} {:>12} {:>12}", "", "p50", "p99", "max");
            let _ = writeln!(
                s,
                "  {:<36} {:>12} {:>12} {:>12}",
                format!("model {}", sv.model),
                sv.model_p50_us.map_or("-".into(), ms_f),
                sv.model_p99_us.map_or("-".into(), ms_f),
                "-"
            );
            for (name, q) in [
                ("scheduled (drawn)", &sv.intended),
                ("achieved", &sv.achieved),
                ("achieved - scheduled", &sv.lateness),
            ] {
                let _ = writeln!(
                    s,
                    "  {:<36} {:>12} {:>12} {:>12}",
                    name,
                    ms_or_na(q.count, q.p50_us),
                    ms_or_na(q.count, q.p99_us),
                    ms_or_na(q.count, q.max_us)
                );
            }
            let _ = writeln!(
                s,
                "  requests {}  matched {}  unmatched {}  rejected uri {}  cancelled {}  stalled {}  injected errors {}",
                sv.requests,
                sv.matched,
                sv.unmatched,
                sv.rejected_uri,
                sv.cancelled,
                sv.stalled,
                sv.injected_errors
            );
        }
        s
    }
}
