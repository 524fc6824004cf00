//! `mcptape import k6`: k6 `--out json=FILE` outputs → mcptape's bench report.
//!
//! k6's JSON output (Grafana k6 docs › Results output › JSON) is NDJSON: one
//! `{"type":"Metric","metric":NAME,"data":{…}}` line when a metric first
//! appears, then one `{"type":"Point","metric":NAME,"data":{"time":RFC3339,
//! "value":NUMBER,"tags":{…}}}` line per sample. A `.gz` output (k6 writes one
//! for `--out json=FILE.gz`) is read through gzip (RFC 1952), recognized by
//! its magic bytes, whatever the file is called.
//!
//! Each file is one execution segment or one machine of the same run
//! (k6-operator writes one per pod). The points of every file go into one set
//! of HdrHistograms (µs, [`mcptape_report::stats::new_hist`]: the settings of
//! `mcptape bench`), so merging is exact: importing two files gives the
//! histograms of importing their concatenation. k6 Trend values are ms
//! (floats); they are rounded to the nearest µs, and values above
//! [`mcptape_report::stats::HIST_MAX_US`] are saturated to it (as in bench).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read as _};
use std::path::Path;

use hdrhistogram::Histogram;
use mcptape_report::render::html::{PageHead, report_html};
use mcptape_report::render::{bench_hlog, bench_svg};
use mcptape_report::run::{
    BenchResult, KeyStats, Load, MAX_KEYS_PER_METHOD, MAX_METHODS, OTHER_KEYS, RunSettings,
    TIMEOUT_CLASS, error_class,
};
use mcptape_report::stats::{BenchReport, HIST_MAX_US, PhaseCounters, new_hist};
use mcptape_wire::envelope::ErrorObject;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{ExportError, ExportErrorKind};
use crate::k6::{
    METRIC_ERRORS, METRIC_HANDSHAKE_FAILED, METRIC_READ, METRIC_TURN, METRIC_TURN_DEADLINE,
    METRIC_TURN_READ, METRIC_UNEXPECTED,
};

/// Most k6 output files one import merges (k6-operator parallelism is far below).
pub const MAX_FILES: usize = 4096;
/// Longest k6 output line, bytes (a point line is a few hundred bytes; 1 MiB).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What one k6 output file held.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSummary {
    /// The file as given.
    pub path: String,
    /// Lines read.
    pub lines: u64,
    /// `mcp_read` points (single reads answered).
    pub reads: u64,
    /// `mcp_turn` points (turns run).
    pub turns: u64,
    /// k6's `dropped_iterations` (arrivals with no free VU), summed.
    pub dropped_iterations: u64,
    /// Highest `vus` gauge value seen.
    pub vus_peak: u64,
    /// Highest `vus_max` gauge value seen.
    pub vus_max: u64,
    /// k6's `iterations` counter, summed.
    pub iterations: u64,
}

/// The k6-specific part of the import report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct K6Summary {
    /// One entry per file, in the order given.
    pub files: Vec<FileSummary>,
    /// `dropped_iterations` over all files: the open model's arrivals k6 could
    /// not start (no free VU): load asked for and not sent.
    pub dropped_iterations: u64,
    /// Sum over files of each file's highest `vus`.
    pub vus_peak: u64,
    /// Sum over files of each file's highest `vus_max`.
    pub vus_max: u64,
    /// `iterations` over all files.
    pub iterations: u64,
    /// Handshakes that failed (`mcp_handshake_failed`).
    pub handshake_failures: u64,
    /// Share of reads whose outcome differed from the recording (`mcp_unexpected`), 0..1.
    pub unexpected_share: Option<f64>,
}

/// `report.json` of `mcptape import k6`: the fields of `mcptape bench`'s
/// report, then `k6`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct K6Report {
    /// The bench report fields (single reads, turns, F(t)^N prediction, errors by class).
    #[serde(flatten)]
    pub bench: BenchReport,
    /// k6's own figures.
    pub k6: K6Summary,
}

impl K6Report {
    /// What titles `report.html` for k6 (`k6 run: T (imported by mcptape)`) and its `k6`
    /// section: output files, iterations, VUs, dropped iterations, handshake failures, reads
    /// unlike the recording.
    pub fn page_head(&self) -> PageHead {
        let k = &self.k6;
        let name = std::path::Path::new(&self.bench.transcript)
            .file_name()
            .map_or("transcript unknown (no mcp_plan point)".to_owned(), |f| {
                f.to_string_lossy().into_owned()
            });
        let files: Vec<&str> = k.files.iter().map(|f| f.path.as_str()).collect();
        let mut rows = vec![
            (
                "output files".to_owned(),
                format!("{}: {}", files.len(), files.join(", ")),
            ),
            ("iterations".to_owned(), k.iterations.to_string()),
            (
                "VUs".to_owned(),
                format!("peak {} (max allocated {})", k.vus_peak, k.vus_max),
            ),
            (
                "dropped iterations".to_owned(),
                format!(
                    "{} (arrivals k6 could not start: load asked for and not sent)",
                    k.dropped_iterations
                ),
            ),
            (
                "handshake failures".to_owned(),
                k.handshake_failures.to_string(),
            ),
        ];
        if let Some(u) = k.unexpected_share {
            rows.push((
                "reads unlike the recording".to_owned(),
                format!("{:.2}%", u * 100.0),
            ));
        }
        PageHead {
            title: format!("k6 run: {name} (imported by mcptape)"),
            driver: Some(("k6".to_owned(), rows)),
        }
    }

    /// The human table: bench's, then the k6 figures.
    pub fn table(&self) -> String {
        let k = &self.k6;
        let bench = self.bench.table();
        // bench's first line names bench; this report is an import of k6 outputs.
        let rest = bench.split_once('\n').map_or("", |(_, r)| r);
        let files: Vec<&str> = k.files.iter().map(|f| f.path.as_str()).collect();
        let run = if self.bench.transcript.is_empty() {
            "k6 run: no mcp_plan point, transcript unknown".to_owned()
        } else {
            format!("k6 run replaying {}", self.bench.transcript)
        };
        let mut s = format!("{}\n{rest}", import_heading(&files, &run));
        s.push_str(&format!(
            "\nk6: {} file(s), iterations {}, dropped iterations {}, VUs peak {} (max allocated {}), handshake failures {}{}\n",
            k.files.len(),
            k.iterations,
            k.dropped_iterations,
            k.vus_peak,
            k.vus_max,
            k.handshake_failures,
            k.unexpected_share.map_or(String::new(), |u| format!(
                ", reads unlike the recording {:.2}%",
                u * 100.0
            ))
        ));
        s
    }
}

/// Where a sample came from: k6's `scenario` system tag (`reads`, `turns`; the
/// script's scenario names), else unknown (`default`: k6's --vus/--iterations run
/// both a single read and a turn in one iteration).
fn phase_of(p: &Point) -> Option<Phase> {
    match p.tag("scenario") {
        Some("reads") => Some(Phase::Single),
        Some("turns") => Some(Phase::Turn),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Single,
    Turn,
}

/// Outcome counts of the reads of a k6 run, from the script's samples: every
/// answered single read is an `mcp_read` point and every answered turn read an
/// `mcp_turn_read` point, tagged `class` (`ok`, `rpc:CODE[:uri]`, `http:STATUS`);
/// single reads cut at `--timeout` and reads with no HTTP response are
/// `mcp_errors` points (`class` `timeout`, `transport`); turn reads cut at the
/// deadline have no point: they are the turns × parallel reads not otherwise
/// accounted for. Merged by addition, so a merge of segments is exact.
#[derive(Debug, Clone)]
pub struct Outcomes {
    /// Single reads answered with a result, µs.
    pub single_ok: Histogram<u64>,
    /// Single reads answered otherwise (JSON-RPC error, HTTP status without an
    /// answer), by bench error class, µs.
    pub single_by_class: BTreeMap<String, Histogram<u64>>,
    /// Single reads cut at `--timeout` (`mcp_errors`, class `timeout`).
    pub single_timeouts: u64,
    /// Reads with no HTTP response (`mcp_errors`, class `transport`) of the
    /// `reads` scenario.
    pub single_transport: u64,
    /// Turn reads answered with a result before the deadline, µs.
    pub turn_reads_ok: Histogram<u64>,
    /// Turn reads answered otherwise before the deadline, by bench error class.
    pub turn_error_answers: BTreeMap<String, u64>,
    /// Reads with no HTTP response of the `turns` scenario.
    pub turn_transport: u64,
    /// Reads with no HTTP response and no `scenario` tag saying which phase
    /// (k6 --vus/--iterations): counted with the single reads, and a warning.
    pub unattributed_transport: u64,
    /// Single reads answered with the error the recording holds (an `mcp_unexpected` point of
    /// value 0 whose `class` is an error answer): bench's `errorsAsRecorded`.
    pub single_as_recorded: u64,
    /// Turn reads answered with the error the recording holds.
    pub turn_as_recorded: u64,
}

impl Default for Outcomes {
    fn default() -> Self {
        Outcomes {
            single_ok: new_hist(),
            single_by_class: BTreeMap::new(),
            single_timeouts: 0,
            single_transport: 0,
            turn_reads_ok: new_hist(),
            turn_error_answers: BTreeMap::new(),
            turn_transport: 0,
            unattributed_transport: 0,
            single_as_recorded: 0,
            turn_as_recorded: 0,
        }
    }
}

/// The `class` tag of an answered read (`ok` when it is a result), or
/// `unclassified` when the point has none.
fn answer_class(p: &Point) -> &str {
    p.tag("class").unwrap_or("unclassified")
}

/// The first line of the import's table: `mcptape import k6  FILE...  (k6 run replaying T)`.
fn import_heading(files: &[&str], run: &str) -> String {
    format!("mcptape import k6  {}  ({run})", files.join(" "))
}

/// The plan tags of the script's `mcp_plan` point.
#[derive(Debug, Clone, Default, PartialEq)]
struct PlanInfo {
    transcript: String,
    parallel: Option<u32>,
    deadline_us: Option<u64>,
    timeout_us: Option<u64>,
    load: String,
    recorded_reads: u64,
    recorded_read_errors: u64,
    /// The recorded mix of the single requests (`METHOD=N,…`).
    mix: String,
}

/// The merge of one or more k6 outputs.
#[derive(Debug, Clone)]
pub struct K6Import {
    /// Single-read latency, µs.
    pub single: Histogram<u64>,
    /// Turn completion time, µs.
    pub turn: Histogram<u64>,
    /// Reads inside turns answered before the deadline, µs.
    pub turn_reads: Histogram<u64>,
    /// Turns that hit the deadline.
    pub turns_hit_deadline: u64,
    /// Errors by class (the classes of `mcptape bench`).
    pub errors: BTreeMap<String, u64>,
    /// Per-file figures and their sums.
    pub k6: K6Summary,
    /// Outcome counts of the reads, from the samples' `class` tags.
    pub outcomes: Outcomes,
    unexpected: (u64, u64),
    plan: PlanInfo,
    parallel_seen: Option<u32>,
    read_window_us: Option<(i64, i64)>,
    turn_window_us: Option<(i64, i64)>,
    /// Single requests by their `method` tag.
    by_method: BTreeMap<String, KeyStats>,
    /// Single requests by method, then `mcp_name` (tool / prompt) or `uri_class` tag.
    by_key: BTreeMap<String, BTreeMap<String, KeyStats>>,
}

impl Default for K6Import {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: String,
    metric: String,
    #[serde(borrow)]
    data: &'a RawValue,
}

#[derive(Deserialize)]
struct Point {
    time: String,
    value: serde_json::Value,
    #[serde(default)]
    tags: Option<BTreeMap<String, serde_json::Value>>,
}

impl Point {
    fn tag(&self, k: &str) -> Option<&str> {
        self.tags.as_ref()?.get(k)?.as_str()
    }
}

/// An RFC 3339 date-time (`2026-12-01T22:10:00.123456789Z`, `…+01:00`) as µs
/// since the Unix epoch: [`mcptape_transcript::time::parse_rfc3339_us`].
///
/// # Errors
/// [`ExportErrorKind::BadTime`].
pub fn rfc3339_us(s: &str) -> Result<i64, ExportError> {
    mcptape_transcript::time::parse_rfc3339_us(s)
        .map_err(|_| ExportError::new(ExportErrorKind::BadTime(s.to_owned())))
}

fn widen(w: &mut Option<(i64, i64)>, t: i64) {
    *w = Some(match *w {
        None => (t, t),
        Some((a, b)) => (a.min(t), b.max(t)),
    });
}

/// The bench error class of the script's `class` tag.
fn bench_class(cls: &str) -> String {
    if let Some(rest) = cls.strip_prefix("rpc:") {
        let (code, uri) = match rest.strip_suffix(":uri") {
            Some(c) => (c, true),
            None => (rest, false),
        };
        if let Ok(code) = code.parse::<i64>() {
            return error_class(&ErrorObject {
                code,
                message: String::new(),
                data: uri.then(|| serde_json::json!({ "uri": "" })),
            });
        }
        return format!("other ({rest})");
    }
    match cls {
        "timeout" => "timeout".into(),
        "transport" => "transport (no HTTP response)".into(),
        c if c.starts_with("http:") => format!("HTTP {} without a JSON-RPC answer", &c[5..]),
        c => c.to_owned(),
    }
}

impl K6Import {
    /// An empty merge.
    pub fn new() -> Self {
        K6Import {
            single: new_hist(),
            turn: new_hist(),
            turn_reads: new_hist(),
            turns_hit_deadline: 0,
            errors: BTreeMap::new(),
            k6: K6Summary::default(),
            outcomes: Outcomes::default(),
            unexpected: (0, 0),
            plan: PlanInfo::default(),
            parallel_seen: None,
            read_window_us: None,
            turn_window_us: None,
            by_method: BTreeMap::new(),
            by_key: BTreeMap::new(),
        }
    }

    /// Applies `f` to the figures of `p`'s method (its `method` tag; a script from before
    /// every method was replayed sent reads only) and of its `mcp_name` or `uri_class` tag.
    fn note_method(&mut self, p: &Point, f: impl Fn(&mut KeyStats)) {
        let m = p.tag("method").unwrap_or("resources/read");
        let m = if self.by_method.contains_key(m) || self.by_method.len() < MAX_METHODS {
            m
        } else {
            OTHER_KEYS
        };
        f(mcptape_report::run::key_stats(
            &mut self.by_method,
            m,
            MAX_METHODS,
        ));
        let key = [p.tag("mcp_name"), p.tag("uri_class")]
            .into_iter()
            .flatten()
            .find(|k| !k.is_empty());
        if let Some(k) = key {
            let keys = self.by_key.entry(m.to_owned()).or_default();
            f(mcptape_report::run::key_stats(keys, k, MAX_KEYS_PER_METHOD));
        }
    }

    /// Merges the k6 outputs at `paths`.
    ///
    /// # Errors
    /// [`ExportErrorKind::TooManyFiles`] past [`MAX_FILES`], then
    /// [`K6Import::add_file`]'s.
    pub fn from_files(paths: &[impl AsRef<Path>]) -> Result<Self, ExportError> {
        if paths.len() > MAX_FILES {
            return Err(ExportError::new(ExportErrorKind::TooManyFiles {
                count: paths.len(),
                max: MAX_FILES,
            }));
        }
        let mut m = K6Import::new();
        for p in paths {
            m.add_file(p.as_ref())?;
        }
        Ok(m)
    }

    /// Merges one k6 output file (plain or gzip).
    ///
    /// # Errors
    /// [`ExportErrorKind::NotRegularFile`] for a FIFO, socket or device (at once, never
    /// blocking); [`ExportErrorKind::Io`] when it cannot be opened or read (or is corrupt
    /// gzip), then [`K6Import::add_ndjson`]'s, with the file name.
    pub fn add_file(&mut self, path: &Path) -> Result<(), ExportError> {
        let name = path.display().to_string();
        let io = |e: std::io::Error| ExportError::at(ExportErrorKind::Io(e.to_string()), &name, 0);
        let mut f = BufReader::new(crate::open_input(path, &name)?);
        let gz = f.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
        let r = if gz {
            self.add_ndjson(
                &name,
                BufReader::new(flate2::bufread::MultiGzDecoder::new(f)),
            )
        } else {
            self.add_ndjson(&name, f)
        };
        r.map_err(|e| e.in_file(&name))
    }

    /// Merges one k6 NDJSON stream, named `name` in the report.
    ///
    /// # Errors
    /// With the 1-based line: [`ExportErrorKind::LineTooLong`] past
    /// [`MAX_LINE_BYTES`], [`ExportErrorKind::NotK6Json`],
    /// [`ExportErrorKind::UnknownLineType`], [`ExportErrorKind::BadValue`],
    /// [`ExportErrorKind::BadTime`], [`ExportErrorKind::MixedParallel`];
    /// [`ExportErrorKind::Io`] for a read error.
    pub fn add_ndjson(&mut self, name: &str, mut r: impl BufRead) -> Result<(), ExportError> {
        let mut fs = FileSummary {
            path: name.to_owned(),
            ..FileSummary::default()
        };
        let mut buf = Vec::new();
        let mut line_no = 0usize;
        loop {
            buf.clear();
            let n = r
                .by_ref()
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| {
                    ExportError::at(ExportErrorKind::Io(e.to_string()), name, line_no + 1)
                })?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            if body.len() > MAX_LINE_BYTES {
                return Err(ExportError::at(
                    ExportErrorKind::LineTooLong {
                        max: MAX_LINE_BYTES,
                    },
                    name,
                    line_no,
                ));
            }
            if body.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            fs.lines += 1;
            self.line(body, &mut fs)
                .map_err(|k| ExportError::at(k, name, line_no))?;
        }
        self.k6.dropped_iterations += fs.dropped_iterations;
        self.k6.vus_peak += fs.vus_peak;
        self.k6.vus_max += fs.vus_max;
        self.k6.iterations += fs.iterations;
        self.k6.files.push(fs);
        Ok(())
    }

    fn line(&mut self, body: &[u8], fs: &mut FileSummary) -> Result<(), ExportErrorKind> {
        let l: Line<'_> =
            serde_json::from_slice(body).map_err(|e| ExportErrorKind::NotK6Json(e.to_string()))?;
        match l.kind.as_str() {
            "Metric" => return Ok(()),
            "Point" => {}
            other => return Err(ExportErrorKind::UnknownLineType(other.to_owned())),
        }
        let m = l.metric.as_str();
        let interesting = matches!(
            m,
            "dropped_iterations" | "vus" | "vus_max" | "iterations" | "mcp_plan"
        ) || m.starts_with("mcp_");
        if !interesting {
            return Ok(());
        }
        let p: Point = serde_json::from_str(l.data.get())
            .map_err(|e| ExportErrorKind::NotK6Json(format!("metric {m}: {e}")))?;
        let v = p
            .value
            .as_f64()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| ExportErrorKind::BadValue {
                metric: m.to_owned(),
                value: p.value.to_string(),
            })?;
        let t = || rfc3339_us(&p.time).map_err(|e| e.kind);
        let us = || ((v * 1000.0).round() as u64).clamp(1, HIST_MAX_US);
        match m {
            METRIC_READ => {
                self.single.saturating_record(us());
                let (us_v, cls) = (us(), answer_class(&p).to_owned());
                self.note_method(&p, |k| {
                    k.sent += 1;
                    k.all.saturating_record(us_v);
                    if cls == "ok" {
                        k.ok += 1;
                    } else {
                        *k.errors.entry(bench_class(&cls)).or_insert(0) += 1;
                    }
                });
                match answer_class(&p) {
                    "ok" => self.outcomes.single_ok.saturating_record(us()),
                    c => self
                        .outcomes
                        .single_by_class
                        .entry(bench_class(c))
                        .or_insert_with(new_hist)
                        .saturating_record(us()),
                }
                widen(&mut self.read_window_us, t()?);
                fs.reads += 1;
            }
            METRIC_TURN => {
                if let Some(n) = p.tag("parallel").and_then(|s| s.parse::<u32>().ok()) {
                    match self.parallel_seen {
                        Some(seen) if seen != n => {
                            return Err(ExportErrorKind::MixedParallel(seen, n));
                        }
                        _ => self.parallel_seen = Some(n),
                    }
                }
                if p.tag("class") == Some("deadline") {
                    self.turns_hit_deadline += 1;
                }
                self.turn.saturating_record(us());
                widen(&mut self.turn_window_us, t()?);
                fs.turns += 1;
            }
            METRIC_TURN_READ => {
                self.turn_reads.saturating_record(us());
                match answer_class(&p) {
                    "ok" => self.outcomes.turn_reads_ok.saturating_record(us()),
                    c => {
                        *self
                            .outcomes
                            .turn_error_answers
                            .entry(bench_class(c))
                            .or_insert(0) += 1;
                    }
                }
            }
            METRIC_ERRORS => {
                let raw = p.tag("class").unwrap_or("unclassified");
                // A single request with no answer (cut at --timeout, no HTTP response): sent,
                // and an error of its method.
                if matches!(raw, "timeout" | "transport") && phase_of(&p) != Some(Phase::Turn) {
                    let (n, cls) = (v as u64, bench_class(raw));
                    self.note_method(&p, |k| {
                        k.sent += n;
                        *k.errors.entry(cls.clone()).or_insert(0) += n;
                    });
                }
                let o = &mut self.outcomes;
                match (raw, phase_of(&p)) {
                    // Only single reads time out: a turn read cut at the deadline is `deadline`,
                    // which the script does not count as an error.
                    ("timeout", _) => o.single_timeouts += v as u64,
                    ("transport", Some(Phase::Single)) => o.single_transport += v as u64,
                    ("transport", Some(Phase::Turn)) => o.turn_transport += v as u64,
                    ("transport", None) => o.unattributed_transport += v as u64,
                    // Answered: counted from its mcp_read / mcp_turn_read point.
                    _ => {}
                }
                let cls = bench_class(raw);
                *self.errors.entry(cls).or_insert(0) += v as u64;
            }
            METRIC_UNEXPECTED => {
                self.unexpected.1 += 1;
                if v != 0.0 {
                    self.unexpected.0 += 1;
                } else if !matches!(
                    answer_class(&p),
                    "ok" | "timeout" | "transport" | "deadline" | "unclassified"
                ) {
                    // An error answer, as recorded (the recording's own not-found read).
                    match phase_of(&p) {
                        Some(Phase::Turn) => self.outcomes.turn_as_recorded += 1,
                        _ => self.outcomes.single_as_recorded += 1,
                    }
                }
            }
            METRIC_HANDSHAKE_FAILED => self.k6.handshake_failures += v as u64,
            METRIC_TURN_DEADLINE => {}
            "mcp_plan" => {
                let ms_us = |k: &str| {
                    p.tag(k)
                        .and_then(|s| s.parse::<f64>().ok())
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .map(|x| (x * 1000.0).round() as u64)
                };
                let num = |k: &str| p.tag(k).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
                self.plan = PlanInfo {
                    transcript: p.tag("transcript").unwrap_or("").to_owned(),
                    parallel: p.tag("parallel").and_then(|s| s.parse().ok()),
                    deadline_us: ms_us("deadline_ms"),
                    timeout_us: ms_us("timeout_ms"),
                    load: p.tag("load").unwrap_or("").to_owned(),
                    recorded_reads: num("recorded_reads"),
                    recorded_read_errors: num("recorded_read_errors"),
                    mix: p.tag("mix").unwrap_or("").to_owned(),
                };
            }
            "dropped_iterations" => fs.dropped_iterations += v as u64,
            "iterations" => fs.iterations += v as u64,
            "vus" => fs.vus_peak = fs.vus_peak.max(v as u64),
            "vus_max" => fs.vus_max = fs.vus_max.max(v as u64),
            _ => {}
        }
        Ok(())
    }

    /// Reads per second over all files: single reads / (last − first read
    /// point), 0 with fewer than two.
    pub fn throughput_per_s(&self) -> f64 {
        match self.read_window_us {
            Some((a, b)) if b > a => self.single.len() as f64 / ((b - a) as f64 / 1e6),
            _ => 0.0,
        }
    }

    /// The report: bench's figures from the merged histograms (quantiles,
    /// measured vs F(t)^N predicted turn p50/p99, deadline share, errors by
    /// class) and the k6 figures.
    ///
    /// # Errors
    /// [`ExportErrorKind::NoPoints`] when no `mcp_read` or `mcp_turn` point was read.
    pub fn report(&self) -> Result<K6Report, ExportError> {
        self.report_and_result().map(|(r, _)| r)
    }

    /// [`K6Import::report`] and the bench result it was computed from (for
    /// the `.hlog` and SVG renderers of `mcptape_report::render`).
    fn report_and_result(&self) -> Result<(K6Report, BenchResult), ExportError> {
        if self.single.is_empty() && self.turn.is_empty() {
            return Err(ExportError::new(ExportErrorKind::NoPoints));
        }
        let parallel = self.parallel_seen.or(self.plan.parallel).unwrap_or(1);
        let deadline_us = self.plan.deadline_us.unwrap_or(HIST_MAX_US);
        let timeout_us = self.plan.timeout_us.unwrap_or(0);
        let span = |w: Option<(i64, i64)>| w.map_or(0.0, |(a, b)| (b - a) as f64 / 1e6);
        let single_s = span(self.read_window_us);
        let turn_s = span(self.turn_window_us);
        let (phases, warnings) = self.phase_counters(parallel);
        let (single_phase, turn_phase) = phases;
        // Timed-out single reads are in bench's latency views at their timeout (censored),
        // turn stragglers at the deadline: all reads = results + error answers + timeouts.
        let cut_us = if timeout_us > 0 {
            timeout_us
        } else {
            HIST_MAX_US
        };
        let mut single = self.single.clone();
        let mut single_by_class = self.outcomes.single_by_class.clone();
        if single_phase.timed_out > 0 {
            let _ = single.record_n(cut_us.min(HIST_MAX_US), single_phase.timed_out);
            let mut h = new_hist();
            let _ = h.record_n(cut_us.min(HIST_MAX_US), single_phase.timed_out);
            single_by_class.insert(TIMEOUT_CLASS.to_owned(), h);
        }
        let mut turn_reads = self.turn_reads.clone();
        if turn_phase.timed_out > 0 {
            let _ = turn_reads.record_n(deadline_us.clamp(1, HIST_MAX_US), turn_phase.timed_out);
        }
        let reads_sent = single_phase.sent;
        let expected_error_answers =
            single_phase.errors_as_recorded + turn_phase.errors_as_recorded;
        let res = BenchResult {
            expected_error_answers,
            single,
            single_ok: self.outcomes.single_ok.clone(),
            single_by_class,
            single_censored_from_us: (single_phase.timed_out > 0).then_some(cut_us),
            turn_reads_ok: self.outcomes.turn_reads_ok.clone(),
            single_phase,
            turn_phase,
            turn: self.turn.clone(),
            turn_reads,
            reads_sent,
            single_elapsed_s: single_s,
            turn_elapsed_s: turn_s,
            turns: self.turn.len(),
            turns_hit_deadline: self.turns_hit_deadline,
            cancellations: 0,
            late_responses: 0,
            abandoned: self.errors.get("timeout").copied().unwrap_or(0),
            abandoned_after_us: Vec::new(),
            errors: self.errors.clone(),
            unexpected: (0, 0),
            reads_asked: reads_sent,
            turns_asked: self.turn.len(),
            single_cut: false,
            turns_cut: false,
            target_closed: false,
            single_window_s: single_s,
            recorded_reads: self.plan.recorded_reads,
            recorded_read_errors: self.plan.recorded_read_errors,
            by_method: self.by_method.clone(),
            by_key: self.by_key.clone(),
            mix: if self.plan.mix.is_empty() {
                "recorded".into()
            } else {
                format!("recorded ({})", self.plan.mix)
            },
            ..BenchResult::default()
        };
        let cfg = RunSettings {
            turns: self.turn.len(),
            parallel,
            deadline_us,
            timeout_us,
            load: Load::Open {
                per_s: self.throughput_per_s(),
            },
            max_phase_ms: 0,
            ..RunSettings::default()
        };
        let files: Vec<&str> = self.k6.files.iter().map(|f| f.path.as_str()).collect();
        let mut bench = res.report(
            cfg,
            &self.plan.transcript,
            &format!("k6 ({} output file(s): {})", files.len(), files.join(", ")),
            None,
            0,
            None,
        );
        bench.load = if self.plan.load.is_empty() {
            "k6 (no mcp_plan point: load unknown)".into()
        } else {
            self.plan.load.clone()
        };
        bench.throughput_per_s = self.throughput_per_s();
        bench.warnings.extend(warnings);
        let mut k6 = self.k6.clone();
        k6.unexpected_share =
            (self.unexpected.1 > 0).then(|| self.unexpected.0 as f64 / self.unexpected.1 as f64);
        Ok((K6Report { bench, k6 }, res))
    }

    /// Single-read and turn-read counters of bench ([`PhaseCounters`]) from the
    /// outcome counts ([`Outcomes`]), for turns of `parallel` reads, and the
    /// warnings about them. Single reads: sent = answered (`mcp_read` points) +
    /// timed out + no HTTP response. Turn reads: sent = turns × `parallel`; those
    /// neither answered nor without a response hit the deadline (the script
    /// records no point for them).
    fn phase_counters(&self, parallel: u32) -> ((PhaseCounters, PhaseCounters), Vec<String>) {
        let o = &self.outcomes;
        let mut warnings = Vec::new();
        let by_class = |m: &BTreeMap<String, Histogram<u64>>| -> BTreeMap<String, u64> {
            m.iter().map(|(k, h)| (k.clone(), h.len())).collect()
        };
        let closed = o.single_transport + o.unattributed_transport;
        if o.unattributed_transport > 0 {
            warnings.push(format!(
                "{} reads had no HTTP response and no k6 scenario tag: counted as single reads",
                o.unattributed_transport
            ));
        }
        let single = PhaseCounters {
            sent: self.single.len() + o.single_timeouts + closed,
            answered_ok: o.single_ok.len(),
            error_answers: by_class(&o.single_by_class),
            timed_out: o.single_timeouts,
            closed,
            errors_as_recorded: o.single_as_recorded,
            ..PhaseCounters::default()
        };
        let sent = self.turn.len() * u64::from(parallel);
        let errs: u64 = o.turn_error_answers.values().sum();
        let accounted = o.turn_reads_ok.len() + errs + o.turn_transport;
        if accounted > sent {
            warnings.push(format!(
                "{accounted} turn reads answered or failed, more than the {} turns × {parallel} reads sent: the outputs do not hold every turn's point",
                self.turn.len()
            ));
        }
        let turn = PhaseCounters {
            sent: sent.max(accounted),
            answered_ok: o.turn_reads_ok.len(),
            error_answers: o.turn_error_answers.clone(),
            timed_out: sent.saturating_sub(accounted),
            closed: o.turn_transport,
            errors_as_recorded: o.turn_as_recorded,
            ..PhaseCounters::default()
        };
        ((single, turn), warnings)
    }

    /// Writes `report.json`, `latency.hlog`, `latency.svg` and `report.html`
    /// into `dir` (created if missing), as `mcptape bench --out` does.
    ///
    /// # Errors
    /// [`K6Import::report`]'s, [`ExportErrorKind::Io`] for a file,
    /// [`ExportErrorKind::Report`] for serialization.
    pub fn write_out(&self, dir: &Path) -> Result<K6Report, ExportError> {
        let (report, res) = self.report_and_result()?;
        let io = |what: &str, e: std::io::Error| {
            ExportError::at(
                ExportErrorKind::Io(format!("{what}: {e}")),
                dir.display().to_string(),
                0,
            )
        };
        std::fs::create_dir_all(dir).map_err(|e| io("creating the directory", e))?;
        let json = serde_json::to_vec_pretty(&report)
            .map_err(|e| ExportError::new(ExportErrorKind::Report(e.to_string())))?;
        std::fs::write(dir.join("report.json"), json).map_err(|e| io("report.json", e))?;
        let hlog = bench_hlog(&report.bench, &res)
            .map_err(|e| ExportError::new(ExportErrorKind::Report(e.to_string())))?;
        std::fs::write(dir.join("latency.hlog"), hlog).map_err(|e| io("latency.hlog", e))?;
        let svg = bench_svg(&report.bench, &res);
        std::fs::write(dir.join("latency.svg"), svg).map_err(|e| io("latency.svg", e))?;
        let html = report_html(&report.bench, &res, &report.page_head());
        std::fs::write(dir.join("report.html"), html).map_err(|e| io("report.html", e))?;
        Ok(report)
    }
}
