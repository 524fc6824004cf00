//! The per-method section of the human table ([`BenchReport::method_table`]): the single
//! phase by method, then by tool name, prompt name and URI, within 80 columns.

use std::fmt::Write as _;

use crate::stats::{BenchReport, Censored, MethodView, Quantiles};

/// Width of the method / name column: with the counts and four latency cells, a row is 80
/// columns.
const NAME_WIDTH: usize = 19;

/// Most rows one per-name section (tool, prompt, URI) prints: the slowest by p99; the rest
/// are counted on one line and listed in report.json (`byTool`, `byPrompt`, `byUri`) and
/// report.html.
pub const MAX_NAME_ROWS: usize = 5;

/// Width of one latency cell ([`compact_ms`]: at most 8 characters, `>` and 8 when censored).
const CELL_WIDTH: usize = 9;

/// A latency in at most 8 characters: `9.999 ms`, `99.99 ms`, `999.9 ms`, `9.999 s`,
/// `3600.0 s`.
pub fn compact_ms(us: u64) -> String {
    let ms = us as f64 / 1000.0;
    match us {
        0..10_000 => format!("{ms:.3} ms"),
        10_000..100_000 => format!("{ms:.2} ms"),
        100_000..1_000_000 => format!("{ms:.1} ms"),
        1_000_000..10_000_000 => format!("{:.3} s", ms / 1000.0),
        _ => format!("{:.1} s", ms / 1000.0),
    }
}

fn cell(q: &Quantiles, us: u64, censored: impl Fn(&Censored) -> bool) -> String {
    match &q.censored {
        _ if q.count == 0 => "n/a".into(),
        Some(c) if censored(c) => format!(">{}", compact_ms(c.bound_us)),
        _ => compact_ms(us),
    }
}

/// `name` in at most `width` characters: whole, or its start and its end around `…` (a URI's
/// end tells it apart).
fn fit(name: &str, width: usize) -> String {
    let n = name.chars().count();
    if n <= width {
        return name.to_owned();
    }
    let head = (width - 1) / 2;
    let tail = width - 1 - head;
    name.chars()
        .take(head)
        .chain(['…'])
        .chain(name.chars().skip(n - tail))
        .collect()
}

fn row(s: &mut String, label: &str, v: &MethodView) {
    let q = &v.latency;
    let errors: u64 = v.errors.values().sum();
    let _ = writeln!(
        s,
        "  {:<NAME_WIDTH$} {:>6} {:>6} {:>4} {:>CELL_WIDTH$} {:>CELL_WIDTH$} {:>CELL_WIDTH$} {:>CELL_WIDTH$}",
        fit(label, NAME_WIDTH),
        v.sent,
        v.ok,
        errors,
        cell(q, q.p50_us, |c| c.p50),
        cell(q, q.p90_us, |c| c.p90),
        cell(q, q.p99_us, |c| c.p99),
        cell(q, q.max_us, |c| c.max)
    );
    for (class, n) in &v.errors {
        let line = format!("      error {n} × {class}");
        let _ = writeln!(s, "{}", fit(&line, 80));
    }
    if v.not_as_recorded > 0 {
        let _ = writeln!(
            s,
            "      {} answered otherwise than recorded",
            v.not_as_recorded
        );
    }
    if v.no_recorded_answer > 0 {
        let _ = writeln!(
            s,
            "      {} with no recorded answer (the recording lost it or never had one)",
            v.no_recorded_answer
        );
    }
}

impl BenchReport {
    /// The single phase by method, then by tool, prompt and URI (count sent, answered ok,
    /// errors, p50/p90/p99/max; each error class on its own line), and the tools a live
    /// target was not sent. Every line at most 80 columns. Empty when the report has no
    /// per-method figures (a report from before they existed).
    pub fn method_table(&self) -> String {
        let mut s = String::new();
        if self.by_method.is_empty() && self.skipped_tools.is_empty() {
            return s;
        }
        let _ = writeln!(s, "by method (single phase, mix {})", self.mix);
        let _ = writeln!(
            s,
            "  {:<NAME_WIDTH$} {:>6} {:>6} {:>4} {:>CELL_WIDTH$} {:>CELL_WIDTH$} {:>CELL_WIDTH$} {:>CELL_WIDTH$}",
            "method", "sent", "ok", "err", "p50", "p90", "p99", "max"
        );
        for v in &self.by_method {
            row(&mut s, &v.method, v);
        }
        for (title, member, views) in [
            ("tool (tools/call)", "byTool", &self.by_tool),
            ("prompt (prompts/get)", "byPrompt", &self.by_prompt),
            ("uri (resources/read)", "byUri", &self.by_uri),
        ] {
            if views.is_empty() {
                continue;
            }
            let shown = views.len().min(MAX_NAME_ROWS);
            if shown < views.len() {
                let _ = writeln!(
                    s,
                    "  {title}, the {shown} slowest by p99 of {}",
                    views.len()
                );
            } else {
                let _ = writeln!(s, "  {title}");
            }
            // The slowest first (censored p99 counts as the slowest); ties keep report order.
            let mut order: Vec<&MethodView> = views.iter().collect();
            order.sort_by_key(|v| {
                let censored = v.latency.censored.as_ref().is_some_and(|c| c.p99);
                std::cmp::Reverse((censored, v.latency.p99_us))
            });
            for v in order.into_iter().take(shown) {
                row(&mut s, &format!("  {}", v.name.as_deref().unwrap_or("")), v);
            }
            if shown < views.len() {
                let _ = writeln!(
                    s,
                    "    … {} more in report.json ({member}) and report.html",
                    views.len() - shown
                );
            }
        }
        if !self.skipped_tools.is_empty() {
            let line = format!(
                "  tools not called (live target, no readOnlyHint, not --allow-tool): {}",
                self.skipped_tools.join(", ")
            );
            let mut w = String::new();
            for word in line.split(' ') {
                if !w.is_empty()
                    && w.rsplit('\n').next().map_or(0, |l| l.chars().count())
                        + 1
                        + word.chars().count()
                        > 80
                {
                    w.push_str("\n   ");
                } else if !w.is_empty() {
                    w.push(' ');
                }
                w.push_str(word);
            }
            let _ = writeln!(s, "{w}");
        }
        let _ = writeln!(s);
        s
    }
}
