//! The HdrHistogram interval log (`.hlog`): V2 compressed histograms, the format of the Java
//! `HistogramLogWriter`, mergeable across machines. Writing ([`write_hlog`], [`write_hlog_at`],
//! [`bench_hlog`]) and reading back ([`merge_hlog_tagged`], [`merge_hlog`], and line by line with
//! limits and line numbers, [`read_hlog`], for `mcptape merge`).
//!
//! A bench log also carries what a `.hlog` alone lacks — the run's settings (timeout, deadline,
//! latency model) and counters (sends, error answers, timeouts, cancellations) — in one header
//! comment line `#[mcptape: {JSON}]` ([`HlogMeta`], [`HLOG_META_PREFIX`]). Other readers skip it:
//! the Java `HistogramLogReader` and Python `hdrh.log.HistogramLogReader` only interpret the
//! `#[StartTime: ` and `#[BaseTime: ` comments.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};

use crate::run::BenchResult;
use crate::stats::{BenchReport, new_hist};

/// Why an interval log could not be written ([`write_hlog`], [`write_hlog_at`], [`bench_hlog`],
/// [`HlogMeta::comment`]) or merged from its bytes ([`merge_hlog_tagged`], [`merge_hlog`]): what,
/// and at which entry — writing, the index into the entries given; merging, the index of the
/// log's entry (`#[StartTime: …]`, `#[BaseTime: …]` and interval lines, from 0); `None` for the
/// log as a whole. Shown as `entry N: …`. ([`read_hlog`], the strict reader of untrusted logs,
/// has its own [`HlogReadError`] with line numbers.)
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{kind}", entry.map(|i| format!("entry {i}: ")).unwrap_or_default())]
pub struct HlogError {
    /// The entry (see the type's docs), `None` for the log as a whole.
    pub entry: Option<usize>,
    /// What went wrong.
    pub kind: HlogErrorKind,
}

impl HlogError {
    fn at(entry: usize, kind: HlogErrorKind) -> HlogError {
        HlogError {
            entry: Some(entry),
            kind,
        }
    }

    fn whole(kind: HlogErrorKind) -> HlogError {
        HlogError { entry: None, kind }
    }
}

/// What went wrong writing or merging an interval log ([`HlogError`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HlogErrorKind {
    /// A tag that is empty or holds `,`, ` ` or `=` (HdrHistogram log format V2 cannot hold it).
    #[error("bad tag {0:?}: a tag is not empty and holds no ',', ' ' or '='")]
    BadTag(String),
    /// The HdrHistogram log writer failed (the V2 deflate serializer or the header): its
    /// message.
    #[error("{0}")]
    Write(String),
    /// The `#[mcptape: …]` header's JSON could not be written: serde_json's message.
    #[error("#[mcptape: …] header: {0}")]
    Meta(String),
    /// Not an HdrHistogram interval log line, at this byte offset of the log.
    #[error("not an HdrHistogram interval log line at byte {offset}")]
    Syntax {
        /// Byte offset in the log.
        offset: usize,
    },
    /// The histogram field is not base64.
    #[error("base64: {0}")]
    Base64(String),
    /// The histogram is not a V2 HdrHistogram encoding.
    #[error("histogram: {0}")]
    Histogram(String),
    /// The histogram does not fit into the merged one (1 µs ..= [`HIST_MAX_US`](crate::stats::HIST_MAX_US)).
    #[error("cannot merge this histogram: {0}")]
    Add(String),
    /// The log holds no interval histogram (of the tag asked for).
    #[error("no histogram in the log")]
    NoHistogram,
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

impl<'a> Tagged<'a> {
    /// The entry of `tag` holding `hist` over the interval that starts `start_s` seconds after
    /// the run began and lasts `duration_s` seconds.
    pub fn new(tag: &'a str, hist: &'a Histogram<u64>, start_s: f64, duration_s: f64) -> Self {
        Tagged {
            tag,
            hist,
            start_s,
            duration_s,
        }
    }
}

/// Writes an HdrHistogram interval log in the standard log format V2: `#[StartTime: …]`,
/// `#[BaseTime: …]`, the legend line, then one line per entry with its `Tag=`, start, length,
/// max (µs / 1000, so it reads in ms) and the V2 deflate-compressed histogram in base64
/// (`HISTFAAA…`), as the Java `HistogramLogWriter` writes and Python `hdrh.log` reads.
///
/// # Errors
/// As [`write_hlog_at`].
pub fn write_hlog(entries: &[Tagged<'_>], comment: &str) -> Result<Vec<u8>, HlogError> {
    write_hlog_at(entries, &[comment], std::time::SystemTime::now())
}

/// [`write_hlog`] with several header comments (each written as `#TEXT`; a `\n` in one starts
/// another comment line) and an explicit `#[StartTime: …]` / `#[BaseTime: …]` `start`: the
/// entries' `start_s` are seconds after it.
///
/// # Errors
/// [`HlogErrorKind::BadTag`] (with the entry's index) for a tag that is empty or holds `,`, ` `
/// or `=`; [`HlogErrorKind::Write`] when the writer fails.
pub fn write_hlog_at(
    entries: &[Tagged<'_>],
    comments: &[&str],
    start: std::time::SystemTime,
) -> Result<Vec<u8>, HlogError> {
    let mut out = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        for c in comments {
            b.add_comment(c);
        }
        b.with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1000.0);
        let mut w = b
            .begin_log_with(&mut out, &mut ser)
            .map_err(|e| HlogError::whole(HlogErrorKind::Write(e.to_string())))?;
        // An auto-resizing histogram (a time-series interval's) is written with the settings of
        // every other mcptape histogram ([`crate::stats::new_hist`]), as readers require one
        // range per log: copied into one scratch histogram, line by line.
        let mut scratch: Option<Histogram<u64>> = None;
        for (i, e) in entries.iter().enumerate() {
            let tag = Tag::new(e.tag)
                .ok_or_else(|| HlogError::at(i, HlogErrorKind::BadTag(e.tag.to_owned())))?;
            let hist = if e.hist.is_auto_resize() {
                let h = scratch.get_or_insert_with(crate::stats::new_hist);
                h.reset();
                h.add(e.hist)
                    .map_err(|x| HlogError::at(i, HlogErrorKind::Write(x.to_string())))?;
                &*h
            } else {
                e.hist
            };
            w.write_histogram(
                hist,
                std::time::Duration::from_secs_f64(e.start_s.max(0.0)),
                std::time::Duration::from_secs_f64(e.duration_s.max(0.0)),
                Some(tag),
            )
            .map_err(|e| HlogError::at(i, HlogErrorKind::Write(e.to_string())))?;
        }
    }
    // The legend line of the Java `HistogramLogWriter` (the crate's writer leaves it out),
    // after the `#` header lines.
    let at = out
        .split_inclusive(|&b| b == b'\n')
        .take_while(|l| l.starts_with(b"#"))
        .map(<[u8]>::len)
        .sum::<usize>();
    out.splice(at..at, HLOG_LEGEND.bytes());
    Ok(out)
}

/// The legend line of an HdrHistogram log (format V2), with its newline.
pub const HLOG_LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// Reads every interval histogram of an `.hlog` and merges them (optionally
/// only those tagged `tag`).
///
/// # Errors
/// [`HlogErrorKind::Syntax`], [`HlogErrorKind::Base64`], [`HlogErrorKind::Histogram`],
/// [`HlogErrorKind::Add`] with the entry's index; [`HlogErrorKind::NoHistogram`] when the log
/// has no histogram (of `tag`).
pub fn merge_hlog_tagged(bytes: &[u8], tag: Option<&str>) -> Result<Histogram<u64>, HlogError> {
    let mut total = new_hist();
    let mut de = Deserializer::new();
    let mut n = 0;
    for (i, entry) in IntervalLogIterator::new(bytes).enumerate() {
        let entry = entry.map_err(|e| match e {
            hdrhistogram::serialization::interval_log::LogIteratorError::ParseError { offset } => {
                HlogError::at(i, HlogErrorKind::Syntax { offset })
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
            .map_err(|e| HlogError::at(i, HlogErrorKind::Base64(e.to_string())))?;
            let h: Histogram<u64> = de
                .deserialize(&mut &raw[..])
                .map_err(|e| HlogError::at(i, HlogErrorKind::Histogram(e.to_string())))?;
            total
                .add(&h)
                .map_err(|e| HlogError::at(i, HlogErrorKind::Add(e.to_string())))?;
            n += 1;
        }
    }
    if n == 0 {
        return Err(HlogError::whole(HlogErrorKind::NoHistogram));
    }
    Ok(total)
}

/// [`merge_hlog_tagged`] over every tag except `turn` (so the log of a bench
/// run gives the single-read distribution... or whatever the only tag is).
///
/// # Errors
/// See [`merge_hlog_tagged`].
pub fn merge_hlog(bytes: &[u8]) -> Result<Histogram<u64>, HlogError> {
    merge_hlog_tagged(bytes, Some("single")).or_else(|_| merge_hlog_tagged(bytes, None))
}

/// The `.hlog` of a bench run (`latency.hlog` of `mcptape bench --out`): `single` (from 0 s, the
/// single-read phase) and `turn-reads` (from the end of the single-read phase), one line per
/// interval of the phase's time series ([`crate::series`], the report's `timeSeries`), `turn`
/// (the turn phase, one line), then `single-ok`, `turn-reads-ok`, one `single-err-…`
/// per error class and one [`method_tag`] per method of the single phase; values in µs.
///
/// # Errors
/// As [`write_hlog_at`] and [`HlogMeta::comment`].
pub fn bench_hlog(report: &BenchReport, res: &BenchResult) -> Result<Vec<u8>, HlogError> {
    // One tag per error class of the single reads: `single-err-internal-32603`,
    // `single-err-timeout` (tags hold no ',', ' ' or '=').
    let class_tags: Vec<(String, &Histogram<u64>)> = res
        .single_by_class
        .iter()
        .map(|(class, h)| (format!("single-err-{}", tag_text(class)), h))
        .collect();
    // One tag per method of the single phase: `method-tools-call`, `method-resources-read`.
    let method_tags: Vec<(String, &Histogram<u64>)> = res
        .by_method
        .iter()
        .map(|(m, k)| (method_tag(m), &k.all))
        .collect();
    let meta = HlogMeta::of_report(report, res.single_censored_from_us).comment()?;
    // `single` and `turn-reads`: one line per interval of the phase's time series (the
    // report's `timeSeries`), or one for the whole phase when no series was kept (a k6
    // import).
    let lines = |series: &crate::series::PhaseSeries,
                 whole: &Histogram<u64>,
                 offset_s: f64,
                 elapsed_s: f64|
     -> Vec<(f64, f64, Histogram<u64>)> {
        let spans = series.spans((elapsed_s * 1e6) as u64);
        if spans.is_empty() {
            return vec![(offset_s, elapsed_s, whole.clone())];
        }
        spans
            .into_iter()
            .map(|(a, b, f)| (offset_s + a as f64 / 1e6, (b - a) as f64 / 1e6, f.latency))
            .collect()
    };
    let single_lines = lines(&res.single_series, &res.single, 0.0, res.single_elapsed_s);
    let turn_lines = lines(
        &res.turn_series,
        &res.turn_reads,
        res.single_elapsed_s,
        res.turn_elapsed_s,
    );
    let mut entries: Vec<Tagged<'_>> = single_lines
        .iter()
        .map(|(s, d, h)| Tagged::new("single", h, *s, *d))
        .collect();
    entries.push(Tagged::new(
        "turn",
        &res.turn,
        res.single_elapsed_s,
        res.turn_elapsed_s,
    ));
    entries.extend(
        turn_lines
            .iter()
            .map(|(s, d, h)| Tagged::new("turn-reads", h, *s, *d)),
    );
    entries.extend([
        Tagged::new("single-ok", &res.single_ok, 0.0, res.single_elapsed_s),
        Tagged::new(
            "turn-reads-ok",
            &res.turn_reads_ok,
            res.single_elapsed_s,
            res.turn_elapsed_s,
        ),
    ]);
    entries.extend(
        class_tags
            .iter()
            .chain(&method_tags)
            .map(|(tag, h)| Tagged::new(tag, h, 0.0, res.single_elapsed_s))
            .filter(|t| !t.hist.is_empty()),
    );
    entries.retain(|t| !t.hist.is_empty() || matches!(t.tag, "single" | "turn" | "turn-reads"));
    write_hlog_at(
        &entries,
        &[
            &format!("mcptape bench {} (values in µs)", report.transcript),
            &meta,
        ],
        std::time::SystemTime::now(),
    )
}

/// The `.hlog` tag of one method's single-phase latencies ([`bench_hlog`]): `method-` and the
/// method as tag text (`tools/call` → `method-tools-call`).
pub fn method_tag(method: &str) -> String {
    format!("method-{}", tag_text(method))
}

/// `class` as tag text: ASCII letters, digits and `-`, others dropped, runs of `-` folded.
fn tag_text(class: &str) -> String {
    let mut out = String::new();
    for c in class.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// Start of the header comment line that carries a bench run's settings and counters
/// ([`HlogMeta`]): `#[mcptape: {JSON}]`, JSON on one line (serde_json escapes every newline).
pub const HLOG_META_PREFIX: &str = "#[mcptape: ";

/// Version of the [`HlogMeta`] JSON (`format`); a reader refuses another.
pub const HLOG_META_FORMAT: u32 = 1;

/// Longest line [`read_hlog`] accepts: 1 MiB (a V2 compressed 1 µs..3,600 s histogram of every
/// distinct latency is ~100 kB of base64).
pub const MAX_HLOG_LINE_BYTES: usize = 1 << 20;

/// Most interval lines [`read_hlog`] accepts in one log: 1,000,000 (a 5 s interval log of 10
/// tags over 5 days).
pub const MAX_HLOG_INTERVALS: usize = 1_000_000;

/// Most distinct tags [`read_hlog`] accepts in one log: 256 (each is one histogram in memory).
pub const MAX_HLOG_TAGS: usize = 256;

/// Largest decompressed V2 histogram payload (the varint counts) [`read_hlog`] decodes: 1 MiB.
/// The payload length is read from the histogram's own header before anything is allocated.
pub const MAX_HLOG_PAYLOAD_BYTES: usize = 1 << 20;

/// The limits [`read_hlog_limited`] applies; [`Default`]: the named constants
/// ([`MAX_HLOG_LINE_BYTES`], [`MAX_HLOG_INTERVALS`], [`MAX_HLOG_TAGS`], [`MAX_HLOG_PAYLOAD_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HlogLimits {
    /// Longest line, bytes.
    pub line_bytes: usize,
    /// Most interval lines.
    pub intervals: usize,
    /// Most distinct tags.
    pub tags: usize,
    /// Largest decompressed histogram payload, bytes.
    pub payload_bytes: usize,
}

impl Default for HlogLimits {
    fn default() -> Self {
        HlogLimits {
            line_bytes: MAX_HLOG_LINE_BYTES,
            intervals: MAX_HLOG_INTERVALS,
            tags: MAX_HLOG_TAGS,
            payload_bytes: MAX_HLOG_PAYLOAD_BYTES,
        }
    }
}

/// Cookie of a V2 histogram (HdrHistogram encoding, `0x1c849303 | 0x10`).
const V2_COOKIE: u32 = 0x1c84_9313;
/// Cookie of a V2 deflate-compressed histogram (`0x1c849304 | 0x10`), the `HISTF…` of a log.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// Bytes of the V2 header: cookie, payload length, normalizing offset, significant digits (4
/// each), lowest and highest trackable value, integer-to-double ratio (8 each).
const V2_HEADER_BYTES: usize = 40;

/// Censoring of one tag's values (reads that timed out, recorded at the timeout): what
/// [`crate::stats::Quantiles::of_censored`] needs, per tag of a bench log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagCensor {
    /// The censoring bound, µs: `--timeout` (tags `single`, `single-err-timeout`) or the turn
    /// deadline (tag `turn-reads`).
    pub bound_us: u64,
    /// Smallest value recorded for a censored read, µs (≥ the bound in an open loop, timed from
    /// the intended send); `None` when no value is censored.
    pub from_us: Option<u64>,
    /// Censored values in the tag's histogram.
    pub count: u64,
}

/// The settings and counters of one bench run (or of several merged ones) that the histograms
/// of its `.hlog` lack: written by [`bench_hlog`] as the header comment `#[mcptape: {JSON}]`
/// (camelCase, [`HLOG_META_FORMAT`]), read by [`read_hlog`] and summed by `mcptape merge`
/// ([`crate::merge`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HlogMeta {
    /// [`HLOG_META_FORMAT`].
    pub format: u32,
    /// Bench runs whose figures are in the log (1 for `bench`; a merge: the sum).
    pub runs: u64,
    /// Transcript path (a merge of different ones: the first and `(+N others)`).
    pub transcript: String,
    /// Target description (`embedded mcptape serve (stdio)`, a command, a URL).
    pub target: String,
    /// Latency model of the embedded server (`None` for a live target).
    pub latency: Option<String>,
    /// Seed (`None` in a merge of runs with different seeds).
    pub seed: Option<u64>,
    /// Load of the single-read phase (`closed-loop, concurrency 1`, `open-loop 200/s…`).
    pub load: String,
    /// Reads per turn.
    pub parallel: u32,
    /// `--timeout`, µs: the censoring bound of single reads.
    pub timeout_us: u64,
    /// Turn deadline, µs: the censoring bound of reads inside turns.
    pub deadline_us: u64,
    /// The run was interrupted (SIGINT/SIGTERM); a merge: any input was.
    pub partial: bool,
    /// Turns run.
    pub turns: u64,
    /// Turns that hit the deadline.
    pub turns_hit_deadline: u64,
    /// Cancellations sent (both phases).
    pub cancellations: u64,
    /// Responses after their cancellation (both phases).
    pub late_responses: u64,
    /// Reads abandoned at the timeout with no answer (both phases).
    pub abandoned: u64,
    /// Errors by class (JSON-RPC error classes, `timeout`, `closed`), both phases.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// Counters of the single-read phase.
    pub single_phase: crate::stats::PhaseCounters,
    /// Counters of the reads inside turns.
    pub turn_phase: crate::stats::PhaseCounters,
    /// Censoring per tag (`single`, `single-err-timeout`, `turn-reads`); a tag not named here
    /// holds no censored value.
    pub censored: std::collections::BTreeMap<String, TagCensor>,
    /// `--fault` specs the embedded server injected (report.json's `faults`); a merge: every
    /// input's, once each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// Why the run is partial (report.json's `partial: …` warnings without the prefix: cut at
    /// `--max-phase`, interrupted); a merge: every input's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial_reasons: Vec<String>,
}

/// Tag of the single reads that timed out (`single-err-` and the [`crate::run::TIMEOUT_CLASS`]
/// as tag text).
pub fn timeout_tag() -> String {
    format!("single-err-{}", tag_text(crate::run::TIMEOUT_CLASS))
}

impl HlogMeta {
    /// The meta of one bench run from its report and the smallest latency recorded for a
    /// timed-out single read, µs (`BenchResult::single_censored_from_us`; from a `report.json`
    /// alone, the `single.censored.boundUs`).
    pub fn of_report(report: &BenchReport, single_censored_from_us: Option<u64>) -> HlogMeta {
        let timed_out = report.single_phase.timed_out;
        let single = TagCensor {
            bound_us: report.timeout_us,
            from_us: single_censored_from_us.filter(|_| timed_out > 0),
            count: timed_out,
        };
        let timeout_count = report
            .error_classes
            .iter()
            .find(|v| v.class == crate::run::TIMEOUT_CLASS)
            .map_or(0, |v| v.count);
        let turn_timed_out = report.turn_phase.timed_out;
        let censored = [
            ("single".to_owned(), single),
            (
                timeout_tag(),
                TagCensor {
                    count: timeout_count,
                    from_us: single.from_us.filter(|_| timeout_count > 0),
                    ..single
                },
            ),
            (
                "turn-reads".to_owned(),
                TagCensor {
                    bound_us: report.deadline_us.max(1),
                    from_us: (turn_timed_out > 0).then_some(report.deadline_us.max(1)),
                    count: turn_timed_out,
                },
            ),
        ]
        .into_iter()
        // Each method's timed-out requests, censored at the timeout as the single view's.
        .chain(report.by_method.iter().filter_map(|m| {
            let n = m
                .errors
                .get(crate::run::TIMEOUT_CLASS)
                .copied()
                .unwrap_or(0);
            (n > 0).then(|| {
                (
                    method_tag(&m.method),
                    TagCensor {
                        count: n,
                        from_us: single.from_us.or(Some(report.timeout_us)),
                        ..single
                    },
                )
            })
        }))
        .collect();
        HlogMeta {
            format: HLOG_META_FORMAT,
            runs: 1,
            transcript: report.transcript.clone(),
            target: report.target.clone(),
            latency: report.latency.clone(),
            seed: Some(report.seed),
            load: report.load.clone(),
            parallel: report.parallel,
            timeout_us: report.timeout_us,
            deadline_us: report.deadline_us,
            partial: report.partial,
            turns: report.turns,
            turns_hit_deadline: report.turns_hit_deadline,
            cancellations: report.cancellations,
            late_responses: report.late_responses,
            abandoned: report.abandoned,
            errors: report.errors.clone(),
            single_phase: report.single_phase.clone(),
            turn_phase: report.turn_phase.clone(),
            censored,
            faults: report.faults.clone(),
            partial_reasons: report
                .warnings
                .iter()
                .filter_map(|w| w.strip_prefix("partial: ").map(str::to_owned))
                .collect(),
        }
    }

    /// The header comment text (without the leading `#`): `[mcptape: {JSON}]`.
    ///
    /// # Errors
    /// [`HlogErrorKind::Meta`] if the JSON cannot be written.
    pub fn comment(&self) -> Result<String, HlogError> {
        let json = serde_json::to_string(self)
            .map_err(|e| HlogError::whole(HlogErrorKind::Meta(e.to_string())))?;
        Ok(format!("{}{json}]", &HLOG_META_PREFIX[1..]))
    }
}

/// Lowest and highest trackable value and significant digits of a histogram: the settings every
/// histogram merged together must share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistSettings {
    /// Lowest discernible value (µs in an mcptape log: 1).
    pub lowest: u64,
    /// Highest trackable value (µs in an mcptape log: [`crate::stats::HIST_MAX_US`]).
    pub highest: u64,
    /// Significant decimal digits (mcptape: [`crate::stats::HIST_SIGFIG`]).
    pub significant_digits: u8,
}

impl std::fmt::Display for HistSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "lowest {} highest {} significant digits {}",
            self.lowest, self.highest, self.significant_digits
        )
    }
}

/// The histograms of one tag in a log, added together.
#[derive(Debug, Clone)]
pub struct TagHist {
    /// The tag (`single`, `turn`…; an interval line without `Tag=`: the empty string).
    pub tag: String,
    /// Its intervals added together (values as written: µs in an mcptape log).
    pub hist: Histogram<u64>,
    /// Interval lines with this tag.
    pub intervals: usize,
    /// Line (from 1) of its first interval.
    pub first_line: usize,
    /// Earliest interval start, seconds since the Unix epoch (`#[BaseTime: …]` + the interval's
    /// start timestamp; without a BaseTime, as Python `hdrh.log` deduces it).
    pub start_s: f64,
    /// Latest interval end, seconds since the Unix epoch.
    pub end_s: f64,
}

/// An interval log read by [`read_hlog`].
#[derive(Debug, Clone)]
pub struct HlogRead {
    /// The `#[mcptape: …]` header, if the log has one, and its line (from 1).
    pub meta: Option<(HlogMeta, usize)>,
    /// `#[StartTime: …]`, seconds since the Unix epoch.
    pub start_time_s: Option<f64>,
    /// The settings shared by every histogram of the log.
    pub settings: HistSettings,
    /// One entry per tag, in order of first appearance.
    pub tags: Vec<TagHist>,
}

/// Why [`read_hlog`] refused a log: what, and at which line (from 1; 0 for the log as a whole).
/// Shown as `line N: …`, or without a line when it concerns the log as a whole (line 0: an
/// empty file, no interval at all).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{kind}", if *line == 0 { String::new() } else { format!("line {line}: ") })]
pub struct HlogReadError {
    /// Line from 1 (0: the log as a whole).
    pub line: usize,
    /// What is wrong.
    pub kind: HlogReadErrorKind,
}

/// What [`read_hlog`] found wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HlogReadErrorKind {
    /// A line longer than [`MAX_HLOG_LINE_BYTES`].
    #[error("line of {bytes} bytes is longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The line's length, bytes.
        bytes: usize,
        /// [`MAX_HLOG_LINE_BYTES`].
        limit: usize,
    },
    /// More interval lines than [`MAX_HLOG_INTERVALS`].
    #[error("more than {limit} interval lines")]
    TooManyIntervals {
        /// [`MAX_HLOG_INTERVALS`].
        limit: usize,
    },
    /// More distinct tags than [`MAX_HLOG_TAGS`].
    #[error("more than {limit} distinct tags")]
    TooManyTags {
        /// [`MAX_HLOG_TAGS`].
        limit: usize,
    },
    /// Neither a comment, the legend, `#[StartTime: …]`/`#[BaseTime: …]` nor an interval line
    /// `[Tag=T,]START,LENGTH,MAX,HISTOGRAM` (HdrHistogram log format V2); a cut line is one.
    #[error("not an HdrHistogram interval log line (cut short?)")]
    Syntax,
    /// The histogram field is not base64.
    #[error("histogram is not base64: {0}")]
    Base64(String),
    /// The histogram is not a V2 (compressed) HdrHistogram encoding, or is cut short.
    #[error("histogram: {0}")]
    Histogram(String),
    /// The histogram's declared payload exceeds [`MAX_HLOG_PAYLOAD_BYTES`] (or, uncompressed,
    /// the bytes present).
    #[error("histogram payload of {bytes} bytes is above the limit of {limit} bytes")]
    PayloadTooLarge {
        /// Declared payload, bytes.
        bytes: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// A histogram whose range or precision differs from the log's first one.
    #[error("histogram settings ({found}) differ from the log's first histogram ({first})")]
    MixedSettings {
        /// Of the first histogram.
        first: HistSettings,
        /// Of this one.
        found: HistSettings,
    },
    /// The `#[mcptape: …]` line is not the [`HlogMeta`] JSON of [`HLOG_META_FORMAT`].
    #[error("#[mcptape: …] header: {0}")]
    Meta(String),
    /// A second `#[mcptape: …]` line.
    #[error("a second #[mcptape: …] header (the first is at line {first})")]
    DuplicateMeta {
        /// Line of the first one.
        first: usize,
    },
    /// The log holds no interval line.
    #[error("no interval histogram in the log")]
    NoHistogram,
    /// The file is empty (0 bytes, or only blank lines): no log at all (line 0).
    #[error("empty file: not an HdrHistogram interval log")]
    Empty,
}

/// Reads an HdrHistogram interval log (log format V2, as the Java `HistogramLogWriter` and
/// [`write_hlog`] write it) line by line, as untrusted input: each interval's V2 (deflate)
/// histogram is decoded and added to its tag's; `#[mcptape: …]` ([`HlogMeta`]),
/// `#[StartTime: …]` and `#[BaseTime: …]` are kept; other `#` lines and the legend are skipped.
/// A missing newline at the end is accepted (the last line is still parsed whole, so a cut
/// histogram fails to decode).
///
/// # Errors
/// [`HlogReadError`] with the line (from 1): a line over [`MAX_HLOG_LINE_BYTES`], over
/// [`MAX_HLOG_INTERVALS`] intervals or [`MAX_HLOG_TAGS`] tags, a line that is not log syntax, a
/// histogram that is not base64 / V2 / within [`MAX_HLOG_PAYLOAD_BYTES`], histograms of
/// different settings, a bad or second `#[mcptape: …]` line, no interval at all.
pub fn read_hlog(bytes: &[u8]) -> Result<HlogRead, HlogReadError> {
    read_hlog_limited(bytes, &HlogLimits::default())
}

/// [`read_hlog`] under `limits` instead of the named constants.
///
/// # Errors
/// As [`read_hlog`], each limit from `limits`.
pub fn read_hlog_limited(bytes: &[u8], limits: &HlogLimits) -> Result<HlogRead, HlogReadError> {
    let err = |line: usize, kind: HlogReadErrorKind| HlogReadError { line, kind };
    if bytes
        .iter()
        .all(|b| matches!(b, b'\n' | b'\r' | b' ' | b'\t'))
    {
        return Err(err(0, HlogReadErrorKind::Empty));
    }
    let mut meta: Option<(HlogMeta, usize)> = None;
    let mut start_time_s = None;
    let mut base_time_s = None;
    let mut settings: Option<HistSettings> = None;
    let mut tags: Vec<TagHist> = Vec::new();
    let mut intervals = 0usize;
    let mut de = Deserializer::new();
    let mut buf = Vec::new();
    let mut inflated = Vec::new();
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    for (i, raw_line) in body.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        if raw_line.len() > limits.line_bytes {
            return Err(err(
                n,
                HlogReadErrorKind::LineTooLong {
                    bytes: raw_line.len(),
                    limit: limits.line_bytes,
                },
            ));
        }
        let line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix(HLOG_META_PREFIX.as_bytes()) {
            if let Some((_, first)) = &meta {
                return Err(err(n, HlogReadErrorKind::DuplicateMeta { first: *first }));
            }
            let json = rest
                .strip_suffix(b"]")
                .ok_or_else(|| err(n, HlogReadErrorKind::Meta("no closing `]`".into())))?;
            let m: HlogMeta = serde_json::from_slice(json)
                .map_err(|e| err(n, HlogReadErrorKind::Meta(e.to_string())))?;
            if m.format != HLOG_META_FORMAT {
                return Err(err(
                    n,
                    HlogReadErrorKind::Meta(format!(
                        "format {} (this mcptape reads format {HLOG_META_FORMAT})",
                        m.format
                    )),
                ));
            }
            meta = Some((m, n));
            continue;
        }
        buf.clear();
        buf.extend_from_slice(line);
        buf.push(b'\n');
        let mut it = IntervalLogIterator::new(&buf);
        let entry = match it.next() {
            None => continue, // a comment or the legend
            Some(Err(_)) => return Err(err(n, HlogReadErrorKind::Syntax)),
            Some(Ok(e)) => e,
        };
        let ilh = match entry {
            LogEntry::StartTime(d) => {
                start_time_s = Some(d.as_secs_f64());
                continue;
            }
            LogEntry::BaseTime(d) => {
                base_time_s = Some(d.as_secs_f64());
                continue;
            }
            LogEntry::Interval(ilh) => ilh,
        };
        intervals += 1;
        if intervals > limits.intervals {
            return Err(err(
                n,
                HlogReadErrorKind::TooManyIntervals {
                    limit: limits.intervals,
                },
            ));
        }
        let tag = ilh.tag().map_or("", |t| t.as_str());
        let at = match tags.iter().position(|t| t.tag == tag) {
            Some(at) => at,
            None if tags.len() >= limits.tags => {
                return Err(err(
                    n,
                    HlogReadErrorKind::TooManyTags { limit: limits.tags },
                ));
            }
            None => tags.len(),
        };
        let h = decode_histogram(
            ilh.encoded_histogram(),
            &mut de,
            settings,
            limits.payload_bytes,
            &mut inflated,
        )
        .map_err(|k| err(n, k))?;
        let found = HistSettings {
            lowest: h.low(),
            highest: h.high(),
            significant_digits: h.sigfig(),
        };
        settings.get_or_insert(found);
        // Timestamps: from the BaseTime; without one, as Python `hdrh.log` deduces it (relative
        // to the StartTime when more than a year before it, else absolute).
        let ts = ilh.start_timestamp().as_secs_f64();
        let base = base_time_s.unwrap_or(match start_time_s {
            Some(st) if ts < st - 365.0 * 24.0 * 3600.0 => st,
            _ => 0.0,
        });
        let (start_s, end_s) = (base + ts, base + ts + ilh.duration().as_secs_f64());
        if at == tags.len() {
            tags.push(TagHist {
                tag: tag.to_owned(),
                hist: h,
                intervals: 1,
                first_line: n,
                start_s,
                end_s,
            });
        } else {
            let t = &mut tags[at];
            t.hist.add(&h).map_err(|e| {
                err(
                    n,
                    HlogReadErrorKind::Histogram(format!("cannot add to tag {tag:?}: {e}")),
                )
            })?;
            t.intervals += 1;
            t.start_s = t.start_s.min(start_s);
            t.end_s = t.end_s.max(end_s);
        }
    }
    let Some(settings) = settings else {
        return Err(err(0, HlogReadErrorKind::NoHistogram));
    };
    Ok(HlogRead {
        meta,
        start_time_s,
        settings,
        tags,
    })
}

/// Inflates `input` into `out` (cleared first), growing it geometrically up to `limit` bytes
/// of room; returns the last status (`StreamEnd` when the stream ended, otherwise it was cut
/// short or needs more than `limit`). `flate2`'s `decompress_vec` zero-fills the room it is
/// given, so reserving `limit` (1 MiB) up front cost a 1 MiB memset per histogram line: 40 % of
/// the `hlog_read` fuzz target's time.
fn inflate_bounded(
    z: &mut flate2::Decompress,
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<flate2::Status, flate2::DecompressError> {
    out.clear();
    out.shrink_to(limit); // a reused buffer gives no more room than `limit`
    loop {
        let want = (2 * out.len()).max(4096).min(limit.max(1));
        if out.capacity() < want {
            out.reserve_exact(want - out.len());
        }
        let (in0, out0) = (z.total_in(), z.total_out());
        let consumed = usize::try_from(in0).unwrap_or(input.len()).min(input.len());
        let status = z.decompress_vec(&input[consumed..], out, flate2::FlushDecompress::None)?;
        let stuck = z.total_in() == in0 && z.total_out() == out0;
        if status == flate2::Status::StreamEnd || out.len() >= limit || stuck {
            return Ok(status);
        }
    }
}

/// Decodes one base64 V2 (deflate) histogram after checking it whole: the compressed length it
/// declares is the bytes present, the deflate stream is complete (zlib end and checksum: a cut
/// line fails here), the V2 payload it declares is at most `max_payload` bytes and is the bytes
/// inflated, and, when `expected` is given, its settings are those — all before the histogram's
/// counts are allocated. `inflated` is a reused buffer.
fn decode_histogram(
    b64: &str,
    de: &mut Deserializer,
    expected: Option<HistSettings>,
    max_payload: usize,
    inflated: &mut Vec<u8>,
) -> Result<Histogram<u64>, HlogReadErrorKind> {
    let raw = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64)
        .map_err(|e| HlogReadErrorKind::Base64(e.to_string()))?;
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let be64 = |b: &[u8]| u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let bad = |m: &str| HlogReadErrorKind::Histogram(m.to_owned());
    if raw.len() < 8 {
        return Err(bad("cut short (under 8 bytes)"));
    }
    let cap = V2_HEADER_BYTES + max_payload;
    let v2: &[u8] = match be32(&raw) {
        V2_COMPRESSED_COOKIE => {
            let len = be32(&raw[4..]) as usize;
            if raw.len() - 8 != len {
                return Err(HlogReadErrorKind::Histogram(format!(
                    "declares {len} compressed bytes, holds {} (cut short?)",
                    raw.len() - 8
                )));
            }
            let mut z = flate2::Decompress::new(true);
            let status = inflate_bounded(&mut z, &raw[8..], inflated, cap + 1)
                .map_err(|e| HlogReadErrorKind::Histogram(format!("deflate stream: {e}")))?;
            if status != flate2::Status::StreamEnd {
                if inflated.len() > cap {
                    return Err(HlogReadErrorKind::PayloadTooLarge {
                        bytes: inflated.len().saturating_sub(V2_HEADER_BYTES) as u64,
                        limit: max_payload as u64,
                    });
                }
                return Err(bad("deflate stream cut short"));
            }
            if z.total_in() != len as u64 {
                return Err(bad("bytes after the end of the deflate stream"));
            }
            &inflated[..]
        }
        V2_COOKIE => &raw,
        c => {
            return Err(HlogReadErrorKind::Histogram(format!(
                "cookie {c:#010x} is not a V2 HdrHistogram encoding"
            )));
        }
    };
    if v2.len() < V2_HEADER_BYTES {
        return Err(bad("V2 header cut short"));
    }
    if be32(v2) != V2_COOKIE {
        return Err(bad("compressed payload is not a V2 histogram"));
    }
    let payload = u64::from(be32(&v2[4..]));
    if payload > max_payload as u64 {
        return Err(HlogReadErrorKind::PayloadTooLarge {
            bytes: payload,
            limit: max_payload as u64,
        });
    }
    if payload != (v2.len() - V2_HEADER_BYTES) as u64 {
        return Err(HlogReadErrorKind::Histogram(format!(
            "declares a payload of {payload} bytes, holds {} (cut short?)",
            v2.len() - V2_HEADER_BYTES
        )));
    }
    let found = HistSettings {
        lowest: be64(&v2[16..]),
        highest: be64(&v2[24..]),
        significant_digits: u8::try_from(be32(&v2[12..])).unwrap_or(u8::MAX),
    };
    if let Some(first) = expected
        && first != found
    {
        return Err(HlogReadErrorKind::MixedSettings { first, found });
    }
    de.deserialize(&mut &v2[..])
        .map_err(|e| HlogReadErrorKind::Histogram(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

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
                Tagged::new("single", &a, 0.0, 1.0),
                Tagged::new("turn", &b, 1.0, 1.0),
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
        assert_eq!(
            merge_hlog(b"#just a comment\n").unwrap_err().kind,
            HlogErrorKind::NoHistogram
        );
    }

    /// A tag the V2 log format cannot hold is refused with its entry's index, never written.
    #[test]
    fn write_hlog_refuses_a_bad_tag_naming_its_entry() {
        let mut h = new_hist();
        h.record(1_000).unwrap();
        let entry = |tag| Tagged::new(tag, &h, 0.0, 1.0);
        let e = write_hlog(&[entry("single"), entry("bad tag")], "test").unwrap_err();
        assert_eq!(
            e,
            HlogError {
                entry: Some(1),
                kind: HlogErrorKind::BadTag("bad tag".into())
            }
        );
        assert_eq!(
            e.to_string(),
            "entry 1: bad tag \"bad tag\": a tag is not empty and holds no ',', ' ' or '='"
        );
    }

    /// The fresh-user report saw `entry 0: ParseError { offset: 0 }`.
    #[test]
    fn hlog_parse_error_is_human_text() {
        let e = merge_hlog_tagged(b"Tag=single,abc\n", None).unwrap_err();
        assert_eq!(
            e,
            HlogError {
                entry: Some(0),
                kind: HlogErrorKind::Syntax { offset: 0 }
            }
        );
        assert_eq!(
            e.to_string(),
            "entry 0: not an HdrHistogram interval log line at byte 0"
        );
    }

    fn one(values: &[u64]) -> Histogram<u64> {
        let mut h = new_hist();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    fn log_of(entries: &[(&str, &Histogram<u64>)], comments: &[&str]) -> Vec<u8> {
        let tagged: Vec<Tagged<'_>> = entries
            .iter()
            .enumerate()
            .map(|(i, (tag, hist))| Tagged::new(tag, hist, i as f64, 1.0))
            .collect();
        write_hlog_at(
            &tagged,
            comments,
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000),
        )
        .unwrap()
    }

    fn test_meta() -> HlogMeta {
        let report: BenchReport = serde_json::from_value(serde_json::json!({
            "transcript": "t.jsonl", "target": "x", "latency": "fixed:1ms", "seed": 7, "load": "l",
            "parallel": 4, "deadlineUs": 800000, "timeoutUs": 5000000,
            "single": {"count": 0, "p50Us": 0, "p90Us": 0, "p99Us": 0, "p999Us": 0, "maxUs": 0, "meanUs": 0.0},
            "throughputPerS": 0.0,
            "turn": {"count": 0, "p50Us": 0, "p90Us": 0, "p99Us": 0, "p999Us": 0, "maxUs": 0, "meanUs": 0.0},
            "prediction": [], "turns": 2, "turnsHitDeadline": 1, "deadlineShare": 0.5,
            "predictedDeadlineShare": null, "cancellations": 3, "lateResponses": 1,
            "cancellation": "notification", "inputRounds": 0, "abandoned": 2,
            "errors": {"timeout": 2}, "server": null,
            "singlePhase": {"sent": 10, "answeredOk": 8, "errorAnswers": {}, "timedOut": 2,
                "closed": 0, "cancellationsSent": 2, "lateResponses": 0, "abandoned": 2, "maxInFlight": 1},
            "turnPhase": {"sent": 8, "answeredOk": 7, "errorAnswers": {}, "timedOut": 1,
                "closed": 0, "cancellationsSent": 1, "lateResponses": 1, "abandoned": 0, "maxInFlight": 4},
            "errorClasses": [{"class": "timeout", "count": 2, "latency": {"count": 2, "p50Us": 5000000,
                "p90Us": 5000000, "p99Us": 5000000, "p999Us": 5000000, "maxUs": 5000000, "meanUs": 5000000.0}}]
        }))
        .unwrap();
        HlogMeta::of_report(&report, Some(5_001_000))
    }

    #[test]
    fn meta_of_a_report_carries_counters_and_the_censoring_of_three_tags() {
        let m = test_meta();
        assert_eq!(
            (m.runs, m.seed, m.timeout_us, m.deadline_us),
            (1, Some(7), 5_000_000, 800_000)
        );
        assert_eq!(m.single_phase.timed_out, 2);
        let c = |t: &str| m.censored[t];
        assert_eq!(
            c("single"),
            TagCensor {
                bound_us: 5_000_000,
                from_us: Some(5_001_000),
                count: 2
            }
        );
        assert_eq!(c("single-err-timeout").count, 2);
        assert_eq!(
            c("turn-reads"),
            TagCensor {
                bound_us: 800_000,
                from_us: Some(800_000),
                count: 1
            }
        );
        let line = m.comment().unwrap();
        assert!(line.starts_with("[mcptape: {") && line.ends_with("}]") && !line.contains('\n'));
    }

    #[test]
    fn read_hlog_keeps_meta_times_and_tags_with_their_lines() {
        let m = test_meta();
        let a = one(&[1_000, 2_000]);
        let b = one(&[9_000]);
        let log = log_of(
            &[("single", &a), ("turn", &b), ("single", &a)],
            &["a comment", &m.comment().unwrap()],
        );
        let r = read_hlog(&log).unwrap();
        // Lines: comment, meta, StartTime, BaseTime, MaxValueDivisor, legend, then the intervals.
        assert_eq!(r.meta, Some((m, 2)));
        assert_eq!(r.start_time_s, Some(1_700_000_000.0));
        assert_eq!(r.settings.highest, crate::stats::HIST_MAX_US);
        assert_eq!(r.tags.len(), 2);
        let s = &r.tags[0];
        assert_eq!(
            (s.tag.as_str(), s.hist.len(), s.intervals, s.first_line),
            ("single", 4, 2, 7)
        );
        assert_eq!((s.start_s, s.end_s), (1_700_000_000.0, 1_700_000_003.0));
        assert_eq!(r.tags[1].hist.max(), b.max());
        // Without the final newline, the same.
        let cut = read_hlog(log.strip_suffix(b"\n").unwrap()).unwrap();
        assert_eq!(cut.tags[0].hist.len(), 4);
    }

    /// Regression (issue 12, merge): every cut of an interval line — a log copied while being
    /// written — is an error at that line, never a panic or a silently shorter histogram.
    #[test]
    fn read_hlog_every_cut_of_an_interval_line_is_an_error_at_that_line() {
        let a = one(&[1_000, 2_000, 3_000, 70_000]);
        let log = log_of(&[("single", &a), ("turn", &a)], &["c"]);
        let text = String::from_utf8(log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let last = lines.len();
        let head = lines[..last - 1].join("\n") + "\n";
        let full = lines[last - 1];
        assert!(full.starts_with("Tag=turn,"), "{full}");
        for cut in 1..full.len() {
            let bytes = format!("{head}{}", &full[..cut]);
            let e = read_hlog(bytes.as_bytes()).unwrap_err();
            assert_eq!(e.line, last, "cut at {cut}: {e}");
        }
        assert_eq!(
            read_hlog(format!("{head}{full}").as_bytes())
                .unwrap()
                .tags
                .len(),
            2
        );
        let e = read_hlog(format!("{head}Tag=turn,0.000").as_bytes()).unwrap_err();
        assert_eq!(e.kind, HlogReadErrorKind::Syntax);
        assert_eq!(
            e.to_string(),
            format!("line {last}: not an HdrHistogram interval log line (cut short?)")
        );
    }

    #[test]
    fn read_hlog_line_limit_at_and_one_past() {
        let a = one(&[1_000]);
        let body = log_of(&[("single", &a)], &[]);
        let at = format!("#{}\n", "x".repeat(MAX_HLOG_LINE_BYTES - 1));
        let mut ok = at.into_bytes();
        ok.extend_from_slice(&body);
        assert_eq!(read_hlog(&ok).unwrap().tags.len(), 1);
        let past = format!("#{}\n", "x".repeat(MAX_HLOG_LINE_BYTES));
        let mut bad = past.into_bytes();
        bad.extend_from_slice(&body);
        assert_eq!(
            read_hlog(&bad).unwrap_err(),
            HlogReadError {
                line: 1,
                kind: HlogReadErrorKind::LineTooLong {
                    bytes: MAX_HLOG_LINE_BYTES + 1,
                    limit: MAX_HLOG_LINE_BYTES
                }
            }
        );
    }

    #[test]
    fn read_hlog_tag_limit_at_and_one_past() {
        let mut small = Histogram::<u64>::new_with_bounds(1, 1_000, 1).unwrap();
        small.record(5).unwrap();
        let names: Vec<String> = (0..=MAX_HLOG_TAGS).map(|i| format!("t{i}")).collect();
        let entries: Vec<(&str, &Histogram<u64>)> =
            names.iter().map(|n| (n.as_str(), &small)).collect();
        let at = log_of(&entries[..MAX_HLOG_TAGS], &[]);
        assert_eq!(read_hlog(&at).unwrap().tags.len(), MAX_HLOG_TAGS);
        let past = log_of(&entries, &[]);
        let e = read_hlog(&past).unwrap_err();
        // Header: StartTime, BaseTime, MaxValueDivisor, legend; the 257th interval is line 4 + 257.
        assert_eq!(e.line, 4 + MAX_HLOG_TAGS + 1);
        assert_eq!(
            e.kind,
            HlogReadErrorKind::TooManyTags {
                limit: MAX_HLOG_TAGS
            }
        );
    }

    #[test]
    fn read_hlog_interval_limit_at_and_one_past() {
        assert_eq!(HlogLimits::default().intervals, MAX_HLOG_INTERVALS);
        let a = one(&[1_000]);
        let limits = HlogLimits {
            intervals: 3,
            ..HlogLimits::default()
        };
        let at = log_of(&[("single", &a), ("single", &a), ("turn", &a)], &[]);
        assert_eq!(
            read_hlog_limited(&at, &limits).unwrap().tags[0].hist.len(),
            2
        );
        let past = log_of(
            &[("single", &a), ("single", &a), ("turn", &a), ("turn", &a)],
            &[],
        );
        let e = read_hlog_limited(&past, &limits).unwrap_err();
        assert_eq!(
            (e.line, e.kind),
            (8, HlogReadErrorKind::TooManyIntervals { limit: 3 })
        );
    }

    /// A V2 histogram (1 µs..HIST_MAX_US, 3 digits) whose payload is `payload` zero bytes,
    /// deflated, as a log line.
    fn zero_payload_line(payload: usize) -> String {
        use std::io::Write as _;
        let mut v2 = Vec::new();
        v2.extend_from_slice(&V2_COOKIE.to_be_bytes());
        v2.extend_from_slice(&(payload as u32).to_be_bytes());
        v2.extend_from_slice(&0u32.to_be_bytes());
        v2.extend_from_slice(&3u32.to_be_bytes());
        v2.extend_from_slice(&1u64.to_be_bytes());
        v2.extend_from_slice(&crate::stats::HIST_MAX_US.to_be_bytes());
        v2.extend_from_slice(&1.0f64.to_be_bytes());
        v2.resize(V2_HEADER_BYTES + payload, 0);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&v2).unwrap();
        let z = z.finish().unwrap();
        let mut raw = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        raw.extend_from_slice(&(z.len() as u32).to_be_bytes());
        raw.extend_from_slice(&z);
        format!(
            "Tag=single,0.000,1.000,0.000,{}\n",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, raw)
        )
    }

    /// A small deflate stream inflates into a buffer the size of its output, not of the 1 MiB
    /// limit (whose zero-filling was 40 % of the `hlog_read` fuzz target's time), and a stream
    /// past the limit or cut short is told apart from a complete one.
    #[test]
    fn inflate_buffer_grows_with_the_output_not_to_the_limit() {
        use std::io::Write;
        let deflate = |data: &[u8]| {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let limit = MAX_HLOG_PAYLOAD_BYTES + 1;
        let small = deflate(&[7u8; 100]);
        let mut out = Vec::new();
        let status =
            inflate_bounded(&mut flate2::Decompress::new(true), &small, &mut out, limit).unwrap();
        assert_eq!(status, flate2::Status::StreamEnd);
        assert_eq!(out, vec![7u8; 100]);
        assert!(out.capacity() <= 4096, "capacity {}", out.capacity());
        // 100 KiB: grown geometrically, all of it.
        let big: Vec<u8> = (0..100 * 1024).map(|i| (i % 251) as u8).collect();
        let status = inflate_bounded(
            &mut flate2::Decompress::new(true),
            &deflate(&big),
            &mut out,
            limit,
        )
        .unwrap();
        assert_eq!(status, flate2::Status::StreamEnd);
        assert_eq!(out, big);
        // Past the limit: stops with the room full, no stream end.
        let status = inflate_bounded(
            &mut flate2::Decompress::new(true),
            &deflate(&big),
            &mut out,
            1000,
        )
        .unwrap();
        assert_ne!(status, flate2::Status::StreamEnd);
        assert!(out.len() >= 1000);
        // Cut short: no stream end either, and it returns.
        let cut = deflate(&big);
        let status = inflate_bounded(
            &mut flate2::Decompress::new(true),
            &cut[..cut.len() / 2],
            &mut out,
            limit,
        )
        .unwrap();
        assert_ne!(status, flate2::Status::StreamEnd);
    }

    #[test]
    fn read_hlog_payload_limit_at_and_one_past() {
        let at = read_hlog(zero_payload_line(MAX_HLOG_PAYLOAD_BYTES).as_bytes()).unwrap();
        assert_eq!(at.tags[0].hist.len(), 0);
        let e = read_hlog(zero_payload_line(MAX_HLOG_PAYLOAD_BYTES + 1).as_bytes()).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            matches!(e.kind, HlogReadErrorKind::PayloadTooLarge { .. }),
            "{e}"
        );
    }

    #[test]
    fn read_hlog_refuses_mixed_settings_and_bad_meta() {
        let a = one(&[1_000]);
        let mut coarse =
            Histogram::<u64>::new_with_bounds(1, crate::stats::HIST_MAX_US, 2).unwrap();
        coarse.record(1_000).unwrap();
        let e = read_hlog(&log_of(&[("single", &a), ("turn", &coarse)], &[])).unwrap_err();
        assert_eq!(e.line, 6);
        assert!(
            matches!(e.kind, HlogReadErrorKind::MixedSettings { .. }),
            "{e}"
        );
        let meta = test_meta().comment().unwrap();
        let e = read_hlog(&log_of(&[("single", &a)], &[&meta, &meta])).unwrap_err();
        assert_eq!(e.kind, HlogReadErrorKind::DuplicateMeta { first: 1 });
        let e = read_hlog(&log_of(&[("single", &a)], &["[mcptape: {\"format\": 1}]"])).unwrap_err();
        assert!(matches!(e.kind, HlogReadErrorKind::Meta(_)), "{e}");
        let two = meta.replace("\"format\":1", "\"format\":2");
        let e = read_hlog(&log_of(&[("single", &a)], &[&two])).unwrap_err();
        assert!(e.to_string().contains("format 2"), "{e}");
        assert_eq!(
            read_hlog(b"#only\n").unwrap_err().kind,
            HlogReadErrorKind::NoHistogram
        );
    }

    #[test]
    fn read_hlog_of_an_empty_file_says_empty_file_without_line_0() {
        for empty in [&b""[..], b"\n", b"\r\n\n"] {
            let e = read_hlog(empty).unwrap_err();
            assert_eq!((e.line, &e.kind), (0, &HlogReadErrorKind::Empty));
            assert_eq!(
                e.to_string(),
                "empty file: not an HdrHistogram interval log"
            );
        }
        let e = read_hlog(b"#only\n").unwrap_err();
        assert_eq!(e.to_string(), "no interval histogram in the log");
        assert!(
            read_hlog(b"x\n")
                .unwrap_err()
                .to_string()
                .starts_with("line 1: ")
        );
    }
}
