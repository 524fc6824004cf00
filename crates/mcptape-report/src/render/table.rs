//! The human table printed by `mcptape bench` ([`BenchReport::table`]).

use std::fmt::Write as _;

use crate::run::TIMEOUT_CLASS;
use crate::stats::{BenchReport, Censored, PhaseCounters, Quantiles};

fn ms(us: u64) -> String {
    format!("{:.3} ms", us as f64 / 1000.0)
}

/// `ms(us)`, or `n/a` when the histogram behind it is empty (`count` 0):
/// an empty histogram has no p50, not a p50 of 0.
fn ms_or_na(count: u64, us: u64) -> String {
    if count == 0 { "n/a".into() } else { ms(us) }
}

/// A quantile of `q` in milliseconds without the unit (the header says `ms`): `n/a` when
/// empty, `> 5000` when censored at a 5 s timeout, else `12.639`.
pub(crate) fn cell(q: &Quantiles, us: u64, censored: impl Fn(&Censored) -> bool) -> String {
    match &q.censored {
        _ if q.count == 0 => "n/a".into(),
        Some(c) if censored(c) => format!("> {:.0}", c.bound_us as f64 / 1000.0),
        _ => format!("{:.3}", us as f64 / 1000.0),
    }
}

/// Widest view name in the latency table. A longer class name is shown as its name and code
/// (`invalid-params (-32602, no data.uri)` → `invalid-params -32602`), else cut with `…`; the
/// full name is in the `errors by class` line.
const VIEW_WIDTH: usize = 24;

/// `name` as a row label of at most [`VIEW_WIDTH`] characters.
pub(crate) fn view_label(name: &str) -> String {
    if name.chars().count() <= VIEW_WIDTH {
        return name.to_owned();
    }
    let short = match name.split_once(" (") {
        Some((head, rest)) => {
            let code = rest.split([',', ' ', ')', '+']).next().unwrap_or("");
            format!("{head} {code}").trim_end().to_owned()
        }
        None => name.to_owned(),
    };
    if short.chars().count() <= VIEW_WIDTH {
        short
    } else {
        short.chars().take(VIEW_WIDTH - 1).chain(['…']).collect()
    }
}

/// Widest line of the human table, in columns: the rows fit it, and a free-text line longer
/// than it (a warning, the errors by class, the send rate, the server's engine-time and
/// precision lines of [`crate::server::ServeSummary::precision_lines`]) is wrapped at spaces.
/// The main job's table fits it whole (issue 28: it was 94 columns wide).
const WRAP_COLUMNS: usize = 80;

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays
/// whole), the first keeping `text`'s leading spaces, the lines after it starting with `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let body = text.trim_start_matches(' ');
    let mut out = String::new();
    let mut line = text[..text.len() - body.len()].to_owned();
    // No word on `line` yet.
    let mut fresh = true;
    for word in body.split(' ') {
        if fresh && word.is_empty() {
            continue;
        }
        if !fresh && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_owned();
            fresh = true;
            if word.is_empty() {
                continue;
            }
        } else if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    out.push_str(&line);
    out
}

/// The header of the latency rows: 79 columns with the rows under it.
fn row_header() -> String {
    format!(
        "  {:<24} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "latency (ms)", "n", "p50", "p90", "p99", "p99.9", "max"
    )
}

/// One latency row: the view, its count, and its quantiles in ms ([`cell`]), within
/// [`WRAP_COLUMNS`] up to 9999.999 ms.
fn row(name: &str, q: &Quantiles) -> String {
    format!(
        "  {:<24} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8}",
        view_label(name),
        q.count,
        cell(q, q.p50_us, |c| c.p50),
        cell(q, q.p90_us, |c| c.p90),
        cell(q, q.p99_us, |c| c.p99),
        cell(q, q.p999_us, |c| c.p999),
        cell(q, q.max_us, |c| c.max)
    )
}

/// When `cut`, appends `  phase stopped at --max-phase 2000.000 ms after 40 of 100 reads`
/// and a newline to `s`: a phase cut at `max_phase_ms` (ms) after `done` of `asked` `unit`s.
fn write_cut(s: &mut String, cut: bool, max_phase_ms: u64, done: u64, asked: u64, unit: &str) {
    if cut {
        let _ = writeln!(
            s,
            "  phase stopped at --max-phase {} after {done} of {asked} {unit}",
            ms(max_phase_ms * 1000)
        );
    }
}

/// `96 of 100 answered ok (96.0 %)`; when some reads are recorded error answers replayed
/// with their recorded code (a recording's own not-found read), those count as answered as
/// recorded: `300 of 300 answered as recorded: 275 results, 25 recorded errors` (with the
/// share when not all were: `290 of 300 answered as recorded (96.7 %): …`), so a replay that
/// reproduces the recording does not read as an error rate.
pub(crate) fn success_line(c: &PhaseCounters) -> String {
    let (ok, sent, recorded) = (c.answered_ok, c.sent, c.errors_as_recorded);
    if sent == 0 {
        return "none sent".into();
    }
    let pct = |n: u64| n as f64 * 100.0 / sent as f64;
    // Answers to requests the recording has no answer to were made up (by the embedded
    // `serve`): said apart, never as ok.
    let none = match c.no_recorded_answer {
        0 => String::new(),
        n => format!(", {n} with no recorded answer"),
    };
    if recorded == 0 {
        return format!("{ok} of {sent} answered ok ({:.1} %){none}", pct(ok));
    }
    let as_recorded = ok + recorded;
    let share = if as_recorded == sent {
        String::new()
    } else {
        format!(" ({:.1} %)", pct(as_recorded))
    };
    format!(
        "{as_recorded} of {sent} answered as recorded{share}: {ok} results, {recorded} recorded errors{none}"
    )
}

/// Widest phase headline kept on one line (`head: outcome`), in columns; a longer one puts
/// the outcome on its own indented line.
const HEADLINE_WIDTH: usize = 80;

/// Appends `head: outcome` and a newline to `s`, or `head:` and `  outcome` on two lines when
/// one would be wider than [`HEADLINE_WIDTH`].
fn headline(s: &mut String, head: &str, outcome: &str) {
    if head.chars().count() + 2 + outcome.chars().count() <= HEADLINE_WIDTH {
        let _ = writeln!(s, "{head}: {outcome}");
    } else {
        let _ = writeln!(s, "{head}:\n  {outcome}");
    }
}

/// `sent N  ok N  error answers N  timed out N` and, on a second line, the cancellations; with
/// `cancel_by` (the turn phase), how they were sent: `cancellations sent 0 (by notification)`.
fn counters_line(c: &PhaseCounters, cancel_by: Option<&str>) -> String {
    let mut s = format!(
        "sent {}  ok {}  error answers {}  timed out {}",
        c.sent,
        c.answered_ok,
        c.error_answers_total(),
        c.timed_out
    );
    if c.closed > 0 {
        let _ = write!(s, "  closed {}", c.closed);
    }
    // A second line, so the table stays within WRAP_COLUMNS.
    let by = cancel_by.map_or(String::new(), |m| format!(" (by {m})"));
    let _ = write!(
        s,
        "\n    cancellations sent {}{by}  late after cancel {}  abandoned {}",
        c.cancellations_sent, c.late_responses, c.abandoned
    );
    if c.no_recorded_answer > 0 {
        let _ = write!(
            s,
            "\n    no recorded answer {} (answered, compared with nothing: not in ok or error answers)",
            c.no_recorded_answer
        );
    }
    s
}

fn ms_f(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

impl BenchReport {
    /// What the single phase sent: `reads` when every request was a `resources/read` (or no
    /// method is broken down, as in a k6 import), else `requests`.
    pub fn single_unit(&self) -> &'static str {
        if self.by_method.iter().all(|m| m.method == "resources/read") {
            "reads"
        } else {
            "requests"
        }
    }

    /// The human table printed by `mcptape bench`.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "mcptape bench {}", self.transcript);
        let target = format!("target: {}", self.target);
        let model = format!(
            "latency: {}   seed: {}",
            self.latency.as_deref().unwrap_or("(live target)"),
            self.seed
        );
        if target.chars().count() + 3 + model.chars().count() <= WRAP_COLUMNS {
            let _ = writeln!(s, "{target}   {model}");
        } else {
            let _ = writeln!(s, "{target}\n{model}");
        }
        let _ = writeln!(s);
        let q = &self.single;
        let c = &self.single_phase;
        // The single phase replays every recorded method by default: its rows say `requests`
        // unless it sent reads alone (they said `all reads` over resources/list, tools/call…).
        let what = self.single_unit();
        headline(
            &mut s,
            &format!("single {what} ({})", self.load),
            &success_line(c),
        );
        let (cut, max_ms) = (self.single_cut, self.max_phase_ms);
        write_cut(&mut s, cut, max_ms, c.sent, self.reads_asked, what);
        let _ = writeln!(s, "{}", row_header());
        let _ = writeln!(s, "{}", row(&format!("all {what}"), q));
        if c.sent > 0 && (c.answered_ok != c.sent || self.single_ok.count != q.count) {
            let _ = writeln!(s, "{}", row("answered ok", &self.single_ok));
            for v in &self.error_classes {
                let _ = writeln!(s, "{}", row(&v.class, &v.latency));
            }
        }
        let _ = writeln!(
            s,
            "  throughput {:.1}/s answered;  {}",
            self.throughput_per_s,
            counters_line(c, None)
        );
        if let Some(r) = &self.send_rate {
            // Each share of the scheduled sends on its own: "N dropped (100.00%)" read as if
            // every send was dropped when most were and the rest were late.
            let pct = |n: u64| {
                if r.scheduled > 0 {
                    n as f64 * 100.0 / r.scheduled as f64
                } else {
                    0.0
                }
            };
            let line = format!(
                "  send rate: asked {:.1}/s, achieved {:.1}/s; {} scheduled: {} sent late (> 1 ms, {:.2}%), {} dropped ({:.2}%)",
                r.asked_per_s,
                r.achieved_per_s,
                r.scheduled,
                r.sent_late,
                pct(r.sent_late),
                r.dropped,
                pct(r.dropped)
            );
            let _ = writeln!(s, "{}", wrap(&line, WRAP_COLUMNS, "    "));
        }
        let _ = writeln!(s);
        s.push_str(&self.method_table());
        headline(
            &mut s,
            &format!(
                "{}-read turns (n={}, deadline {}, timeout {})",
                self.parallel,
                self.turns,
                ms(self.deadline_us),
                ms(self.timeout_us)
            ),
            &format!("reads {}", success_line(&self.turn_phase)),
        );
        let (cut, max_ms) = (self.turns_cut, self.max_phase_ms);
        write_cut(&mut s, cut, max_ms, self.turns, self.turns_asked, "turns");
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
            let q = 0.99f64.powf(1.0 / f64::from(self.parallel.max(1)));
            let _ = writeln!(
                s,
                "  (predicted p99 = the single reads' {:.2}th percentile;\n   {above:.1} of {} reads lie above it: noisy; --reads {:.0} puts 10 there)",
                100.0 * q,
                self.single.count,
                (10.0 / (1.0 - q)).ceil()
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
            if self.single.count > 0
                && self.turns > 0
                && !self.by_method.iter().any(|m| m.method == "resources/read")
            {
                // Said, not left as a bare n/a (`--methods tools/call,prompts/get`).
                let _ = writeln!(
                    s,
                    "  (no prediction: the single phase sent no resources/read; add it to --methods)"
                );
            }
        }
        if self.turns > 0 {
            let _ = writeln!(
                s,
                "  turns hitting the deadline: {} ({:.2}%; predicted {})",
                self.turns_hit_deadline,
                self.deadline_share * 100.0,
                self.predicted_deadline_share
                    .map_or("n/a".into(), |p| format!("{:.2}%", p * 100.0))
            );
        }
        let _ = writeln!(
            s,
            "  turn reads: {}",
            counters_line(&self.turn_phase, Some(&self.cancellation))
        );
        if let Some(v) = &self.validation {
            // Every result validated, single reads and turn reads together.
            let line = format!(
                "  contents validation (--validate; {} results of both phases, apart from their latency): p50 {}  p99 {}  max {}",
                v.count,
                ms(v.p50_us),
                ms(v.p99_us),
                ms(v.max_us)
            );
            let _ = writeln!(s, "{}", wrap(&line, WRAP_COLUMNS, "    "));
        }
        if self.input_rounds > 0 {
            let _ = writeln!(
                s,
                "  input_required rounds retried: {}\n    (each read and its retries counted as one read)",
                self.input_rounds
            );
        }
        let recorded = if self.recorded_read_errors > 0 {
            format!(
                " (as recorded: {} of the {} recorded reads {} an error, replayed each cycle)",
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
        // This phase's own classes (the report's `errors` add both phases), and the whole run's
        // lines that are no phase's (noise, too long, not JSON-RPC) apart.
        let phases: std::collections::BTreeSet<&String> = self
            .single_phase
            .error_answers
            .keys()
            .chain(self.turn_phase.error_answers.keys())
            .collect();
        let run_wide: Vec<String> = self
            .errors
            .iter()
            .filter(|(k, _)| {
                !phases.contains(k) && k.as_str() != TIMEOUT_CLASS && k.as_str() != "closed"
            })
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let t = &self.turn_phase;
        let mut list: Vec<String> = t
            .error_answers
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        if t.closed > 0 {
            list.push(format!("closed: {}", t.closed));
        }
        if !run_wide.is_empty() {
            let line = format!("  whole run, outside the phases: {}", run_wide.join(", "));
            let _ = writeln!(s, "{}", wrap(&line, WRAP_COLUMNS, "    "));
        }
        if list.is_empty() {
            let line = format!("  errors: none{recorded}");
            let _ = writeln!(s, "{}", wrap(&line, WRAP_COLUMNS, "    "));
        } else {
            let line = format!("  errors by class: {}", list.join(", "));
            let _ = writeln!(s, "{}", wrap(&line, WRAP_COLUMNS, "    "));
            if !recorded.is_empty() {
                let _ = writeln!(s, "   {recorded}");
            }
        }
        let _ = writeln!(
            s,
            "  all {} = results + error answers + timeouts (censored: `> bound`);\n  answered ok = results only",
            self.single_unit()
        );
        for w in &self.warnings {
            let _ = writeln!(
                s,
                "{}",
                wrap(&format!("warning: {w}"), WRAP_COLUMNS, "    ")
            );
        }
        if self.partial {
            let _ = writeln!(
                s,
                "PARTIAL: the run did not finish (the `partial:` warnings say why); the figures\n  cover what ran until then"
            );
        }
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
            // Engine time, capacity and the precision flag (serve.rs, H6).
            for line in sv.precision_lines(self.throughput_per_s) {
                // Two columns of indent before each line: wrapped two narrower.
                for l in wrap(&line, WRAP_COLUMNS - 2, "  ").lines() {
                    let _ = writeln!(s, "  {l}");
                }
            }
            // Every request counted once: matched + synthesized + ... = requests; wrapped
            // before a `+`, never inside a term.
            let mut line = String::new();
            for (i, term) in sv.requests_line().split(" + ").enumerate() {
                if i == 0 {
                    line = format!("  {term}");
                } else if line.chars().count() + 3 + term.chars().count() > WRAP_COLUMNS {
                    let _ = writeln!(s, "{line}");
                    line = format!("    + {term}");
                } else {
                    line.push_str(" + ");
                    line.push_str(term);
                }
            }
            let _ = writeln!(s, "{line}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::view_label;

    /// Regression (issue 28): the main job's headline "275 of 300 answered ok (91.7 %)" read as
    /// an 8 % error rate where the 25 were the recording's own not-found read, replayed.
    #[test]
    fn recorded_error_answers_count_as_answered_as_recorded_in_the_headline() {
        let c = |sent, answered_ok, errors_as_recorded| crate::stats::PhaseCounters {
            sent,
            answered_ok,
            errors_as_recorded,
            ..Default::default()
        };
        assert_eq!(
            super::success_line(&c(300, 275, 25)),
            "300 of 300 answered as recorded: 275 results, 25 recorded errors"
        );
        assert_eq!(
            super::success_line(&c(300, 275, 15)),
            "290 of 300 answered as recorded (96.7 %): 275 results, 15 recorded errors"
        );
        assert_eq!(
            super::success_line(&c(100, 96, 0)),
            "96 of 100 answered ok (96.0 %)"
        );
        assert_eq!(super::success_line(&c(0, 0, 0)), "none sent");
    }

    #[test]
    fn a_headline_wider_than_80_columns_puts_its_outcome_on_its_own_line() {
        let head = "h".repeat(40);
        let mut s = String::new();
        super::headline(&mut s, &head, &"o".repeat(38)); // 40 + 2 + 38 = 80: one line
        assert_eq!(s, format!("{head}: {}\n", "o".repeat(38)));
        let mut s = String::new();
        super::headline(&mut s, &head, &"o".repeat(39)); // 81: two lines
        assert_eq!(s, format!("{head}:\n  {}\n", "o".repeat(39)));
    }
    use crate::stats::Quantiles;

    #[test]
    fn wrap_breaks_long_warnings_at_spaces_within_the_width() {
        let w = super::wrap("warning: aaaa bbbb cccc dddd", 14, "  ");
        assert_eq!(w, "warning: aaaa\n  bbbb cccc\n  dddd");
        assert!(w.lines().all(|l| l.chars().count() <= 14));
        assert_eq!(super::wrap("short", 14, "  "), "short");
        // A line's own indent is kept (the `errors by class` line lost its two spaces).
        assert_eq!(
            super::wrap("  errors: aaaa  bbbb", 14, "    "),
            "  errors: aaaa\n    bbbb"
        );
        assert_eq!(super::wrap("  a  b", 14, "    "), "  a  b");
    }

    /// The report of an empty run against the embedded server at `fixed:12ms`.
    fn empty_embedded_report() -> crate::stats::BenchReport {
        crate::run::BenchResult::new().report(
            crate::run::RunSettings::default(),
            "t.jsonl",
            "embedded mcptape serve (stdio)",
            Some("fixed:12ms".into()),
            1,
            None,
        )
    }

    /// Fresh-user report: the table's heading read `mcptape bench  t.jsonl` (two spaces).
    #[test]
    fn table_heading_has_one_space_before_the_transcript() {
        let table = empty_embedded_report().table();
        assert_eq!(
            table.lines().next(),
            Some("mcptape bench t.jsonl"),
            "{table}"
        );
    }

    /// The server side of a flagged, engine-bound run at `fixed:12ms`: 3 requests, all matched.
    fn flagged_summary() -> crate::server::ServeSummary {
        use crate::server::{Precision, ServeSummary};
        let q = Quantiles {
            count: 3,
            p50_us: 12_000,
            p99_us: 12_345,
            max_us: 12_345,
            mean_us: 12_100.0,
            ..Quantiles::default()
        };
        ServeSummary {
            model: "fixed:12ms".into(),
            model_p50_us: Some(12_000.0),
            model_p99_us: Some(12_000.0),
            requests: 3,
            matched: 3,
            unmatched: 0,
            rejected_uri: 0,
            cancelled: 0,
            crashed: 0,
            stalled: 0,
            injected_errors: 0,
            dropped: 0,
            invalid: 0,
            pinged: 0,
            synthesized: Default::default(),
            adapted: 0,
            spliced: 0,
            splice_fallbacks: Default::default(),
            pipe_size_refused: Default::default(),
            batches_skipped: 0,
            intended: q,
            achieved: q,
            lateness: q,
            engine: q,
            work: q,
            capacity_per_s: Some(1_000.0),
            precision: Precision::judge(12_000.0, 12_345, 3),
            timer_policy: None,
        }
    }

    /// Fresh-user report: `requests 41  matched 39  unmatched 0` did not add up (2 synthesized
    /// answers were nowhere). The line names every part, `requests = matched + synthesized +
    /// …`, the parts sum to the requests, and it wraps before a `+` within 80 columns, at
    /// 11-digit counts too.
    #[test]
    fn server_requests_line_adds_up_and_wraps_before_a_plus() {
        let mut sv = flagged_summary();
        let big = 12_345_678_901;
        sv.synthesized.insert("resources/read".into(), big);
        sv.synthesized.insert("ping".into(), 2);
        (sv.matched, sv.unmatched, sv.rejected_uri, sv.invalid) = (big, big, big, big);
        (sv.crashed, sv.stalled, sv.injected_errors, sv.dropped) = (1, big, big, big);
        sv.requests = 8 * big + 2 + 1;
        let sum: u64 = sv.request_parts().iter().map(|&(_, n)| n).sum();
        assert_eq!(sum, sv.requests);
        assert_eq!(sv.request_parts()[1], ("synthesized", big + 2));
        let mut r = empty_embedded_report();
        r.server = Some(sv);
        let table = r.table();
        let at = table.find("  requests ").expect("the requests line");
        let lines: Vec<&str> = table[at..].lines().take_while(|l| !l.is_empty()).collect();
        assert!(lines.len() > 1, "{lines:?}");
        for (i, l) in lines.iter().enumerate() {
            assert!(l.chars().count() <= 80, "{l}");
            if i > 0 {
                assert!(l.starts_with("    + "), "{l}");
            }
        }
        assert!(
            lines[0].starts_with(&format!(
                "  requests {} = matched {big} + synthesized {}",
                8 * big + 3,
                big + 2
            )),
            "{}",
            lines[0]
        );
        assert!(
            lines.last().unwrap().ends_with("; cancelled 0"),
            "{lines:?}"
        );
    }

    /// A flagged, engine-bound run of the embedded server: its FLAGGED and
    /// ENGINE-BOUND lines (one line each in [`ServeSummary::precision_lines`])
    /// are wrapped by [`super::wrap`] within 80 columns, every word kept.
    #[test]
    fn flagged_engine_bound_server_lines_wrap_within_80_columns_with_the_same_words() {
        let sv = flagged_summary();
        let lines = sv.precision_lines(900.0);
        assert!(lines.iter().all(|l| !l.contains('\n')), "{lines:?}");
        let mut r = empty_embedded_report();
        r.throughput_per_s = 900.0;
        r.server = Some(sv);
        let table = r.table();
        for line in table.lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
        let words = |t: &str| t.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        let all = words(&table);
        for want in ["FLAGGED:", "ENGINE-BOUND:"] {
            let line = lines.iter().find(|l| l.starts_with(want)).unwrap();
            assert!(line.chars().count() > 78, "{line}: not a wrapping case");
            let w = words(line);
            assert!(
                all.windows(w.len()).any(|x| x == w),
                "{line} not in\n{table}"
            );
            // Two printed lines: the first within the width, the rest indented by 4.
            let at = table
                .lines()
                .position(|l| l.trim_start().starts_with(want))
                .unwrap();
            let next = table.lines().nth(at + 1).unwrap();
            assert!(
                next.starts_with("    ") && !next.starts_with("     "),
                "{next:?}"
            );
        }
    }

    /// Regression (issue 28): an overload run printed "9709329 dropped (100.00%)" where 97.1 %
    /// of the scheduled sends were dropped and the rest sent late; each share is of the
    /// scheduled sends, and the send-rate line wraps within 80 columns.
    #[test]
    fn send_rate_line_gives_each_share_of_the_scheduled_sends_within_80_columns() {
        let mut r = empty_embedded_report();
        r.send_rate = Some(crate::stats::SendRate {
            asked_per_s: 1_000_000.0,
            achieved_per_s: 29_067.1,
            scheduled: 10_000_000,
            sent: 290_671,
            sent_late: 290_671,
            dropped: 9_709_329,
            late_or_dropped_share: 1.0,
        });
        let table = r.table();
        let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(
                "send rate: asked 1000000.0/s, achieved 29067.1/s; 10000000 scheduled: \
                 290671 sent late (> 1 ms, 2.91%), 9709329 dropped (97.09%)"
            ),
            "{table}"
        );
        for line in table.lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
    }

    /// Fresh-user report: the error rows read `invalid-params (-3260…`, the code cut off.
    #[test]
    fn long_error_class_labels_keep_their_name_and_code() {
        assert_eq!(
            view_label("invalid-params (-32602, no data.uri)"),
            "invalid-params -32602"
        );
        assert_eq!(
            view_label("not-found (-32602 + data.uri)"),
            "not-found -32602"
        );
        assert_eq!(
            view_label("not-found, legacy (-32002 + data.uri)"),
            "not-found, legacy -32002"
        );
        assert_eq!(
            view_label("method-not-found (-32601)"),
            "method-not-found -32601"
        );
        assert_eq!(view_label("internal (-32603)"), "internal (-32603)");
        assert_eq!(view_label("answered ok"), "answered ok");
        let long = "a-class-name-without-any-code-at-all";
        assert_eq!(view_label(long).chars().count(), 24);
        assert!(view_label(long).ends_with('…'));
    }
}
