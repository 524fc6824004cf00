//! `mcptape merge`: several HdrHistogram interval logs (`latency.hlog` of `mcptape bench --out`,
//! from several runs or machines) into one report: per tag, the histograms of every input added
//! together (HdrHistogram's `add`), so each merged count is the sum of the inputs' counts; the
//! counters (sends, error answers, timeouts, cancellations) summed; one merged `.hlog`.
//!
//! Where the counters and settings come from: a `.hlog` holds histograms only, so `bench` writes
//! its settings and counters into the log's header as one comment line `#[mcptape: {JSON}]`
//! ([`HlogMeta`]; other HdrHistogram readers skip `#` lines). A log without that line is refused
//! ([`MergeErrorKind::NoCounters`]): its counters and settings are unknown.
//!
//! Settings are checked, never silently merged: a different `--timeout` or turn deadline (the
//! censoring bounds), reads per turn or histogram range / precision is an error
//! ([`MergeErrorKind::Mismatch`]); a different latency model, load, transcript or target, a
//! partial run, a tag missing from an input and the same run given twice (same `#[StartTime: …]`
//! and header) are per-input warnings in the report and the table. The same file given twice is
//! an error ([`MergeErrorKind::SameFile`]).
//!
//! Each input's counters are checked against its own histograms before anything is added
//! ([`MergeErrorKind::Counters`]): bench records every answered or timed-out single read in tag
//! `single` (so `sent` = its count + `closed`; a partial run: at least), the answered ones also
//! in `single-ok`, the error answers in `single-err-<class>` and the timeouts in
//! `single-err-timeout`; every turn in `turn`; every turn read answered or cut at the deadline
//! in `turn-reads` (the ok ones also in `turn-reads-ok`). A log cut at a line boundary or an
//! edited header fails here, naming the tag and both numbers.
//!
//! `--out DIR` never writes over an input: `mcptape_replay::merge::write_merge_out` refuses when `DIR/latency.hlog`
//! or `DIR/report.json` is a file the merge read ([`MergeErrorKind::OutOverwritesInput`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::render::hlog::{
    HistSettings, HlogMeta, HlogRead, HlogReadError, TagCensor, Tagged, read_hlog, timeout_tag,
    write_hlog_at,
};
use crate::stats::{PhaseCounters, Quantiles};

/// Largest `.hlog` file `mcptape_replay::merge::merge_files` reads: 256 MiB.
pub const MAX_LOG_FILE_BYTES: u64 = 256 << 20;

/// Most logs one merge takes: 1,000.
pub const MAX_INPUTS: usize = 1_000;

/// Files `mcptape_replay::merge::write_merge_out` writes into its directory.
pub const MERGE_OUT_FILES: [&str; 2] = ["report.json", "latency.hlog"];

/// The sentence the report and the table carry about counts.
pub const COUNT_RULE: &str =
    "every merged count is the sum of the inputs' counts (checked for each tag)";

/// Why a merge failed: which input (its path or name; `None` for the merge as a whole) and what.
#[derive(Debug, thiserror::Error)]
#[error("{}{kind}", input.as_ref().map(|i| format!("{i}: ")).unwrap_or_default())]
pub struct MergeError {
    /// The input's name (path as given), when the error concerns one.
    pub input: Option<String>,
    /// What went wrong.
    pub kind: MergeErrorKind,
}

/// What went wrong in a merge.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeErrorKind {
    /// No input log.
    #[error("no input log")]
    NoInputs,
    /// More inputs than [`MAX_INPUTS`].
    #[error("{n} input logs, more than the limit of {limit}")]
    TooManyInputs {
        /// Inputs given.
        n: usize,
        /// [`MAX_INPUTS`].
        limit: usize,
    },
    /// A file could not be read (or the output written).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An input is a FIFO, socket, device or directory: refused at once, unread
    /// (the one file-opening policy, `mcptape_transcript::file::open_regular`).
    #[error("not a regular file (FIFO, socket or device)")]
    NotRegularFile,
    /// A file larger than its limit ([`MAX_LOG_FILE_BYTES`]).
    #[error("{file} is {bytes} bytes, above the limit of {limit} bytes")]
    FileTooLarge {
        /// Which file (`the log`).
        file: String,
        /// Its size, bytes.
        bytes: u64,
        /// The limit, bytes.
        limit: u64,
    },
    /// The log is malformed, cut short or over a limit, at a line ([`read_hlog`]).
    #[error("{0}")]
    Log(#[from] HlogReadError),
    /// The log has no `#[mcptape: …]` header: its counters and settings are unknown.
    #[error(
        "no counters: the log has no #[mcptape: …] header line (written by mcptape bench): its counters and settings are unknown"
    )]
    NoCounters,
    /// A setting that decides what the values mean differs from the first input's.
    #[error("{setting} is {found}, the first input ({first_input}) has {first}: refusing to merge")]
    Mismatch {
        /// The setting (`--timeout`, `turn deadline`, `histogram settings`).
        setting: &'static str,
        /// The first input's value.
        first: String,
        /// This input's value.
        found: String,
        /// The first input's name.
        first_input: String,
    },
    /// A count or counter sum does not fit in 64 bits (or a histogram saturated).
    #[error("{0}: the sum does not fit in 64 bits")]
    Overflow(String),
    /// The merged histogram or the report could not be serialized.
    #[error("writing the merged log: {0}")]
    Render(String),
    /// A counter of the `#[mcptape: …]` header disagrees with the input's own
    /// histograms: a log cut at a line boundary or an edited header.
    #[error("tag {tag:?}: header says {header}, the histograms hold {found}: a cut or edited log")]
    Counters {
        /// The tag whose count was checked (`single`, `single-ok`, `turn`, `turn-reads`…).
        tag: String,
        /// What the header says, with its number (`100 single reads sent`).
        header: String,
        /// Values in the histograms.
        found: u64,
    },
    /// The same file (canonicalized path) given twice.
    #[error(
        "the same file as input [{first}] ({first_input}): refusing to merge a run with itself"
    )]
    SameFile {
        /// The earlier input's position, from 1.
        first: usize,
        /// The earlier input's name.
        first_input: String,
    },
    /// `--out DIR` would write over a file the merge reads (an input log).
    #[error("--out {out}: {file} is the input {input}: refusing to write over it")]
    OutOverwritesInput {
        /// The output directory as given.
        out: String,
        /// The output file (`latency.hlog`, `report.json`).
        file: &'static str,
        /// The input file, as read.
        input: String,
    },
    /// `--out` names an existing file that is not a directory.
    #[error("--out {0}: is a file, not a directory")]
    OutIsFile(String),
}

impl MergeError {
    /// An error about the input named `input`.
    pub fn of(input: &str, kind: MergeErrorKind) -> MergeError {
        MergeError {
            input: Some(input.to_owned()),
            kind,
        }
    }
}

/// One log to merge, in memory.
#[derive(Debug, Clone)]
pub struct MergeInput {
    /// Its name in messages and in the report (the path as given).
    pub name: String,
    /// The `.hlog` bytes.
    pub log: Vec<u8>,
}

/// One input of a merge, as the report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergeInputSummary {
    /// The log's path as given.
    pub path: String,
    /// Bench runs in it (a merged log: several).
    pub runs: u64,
    /// Transcript.
    pub transcript: String,
    /// Latency model (`None`: a live target).
    pub latency: Option<String>,
    /// Seed (`None`: a merge of several seeds).
    pub seed: Option<u64>,
    /// Load of the single-read phase.
    pub load: String,
    /// `#[StartTime: …]` of the log, seconds since the Unix epoch.
    pub start_time_s: Option<f64>,
    /// Values per tag in this input.
    pub counts: BTreeMap<String, u64>,
}

/// One tag of the merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergedTag {
    /// The tag (`single`, `turn`, `turn-reads`, `single-ok`, `single-err-<class>`…).
    pub tag: String,
    /// Quantiles of the merged histogram, µs; `censored` when timed-out reads (recorded at the
    /// bound) are in it: a censored quantile reads `> bound`.
    pub latency: Quantiles,
    /// This tag's count in each input, in input order (0: the input has no such tag); their sum
    /// is `latency.count`.
    pub input_counts: Vec<u64>,
}

/// The report of `mcptape merge` (`report.json` of `merge --out DIR`), camelCase JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergeReport {
    /// [`COUNT_RULE`].
    pub count_rule: String,
    /// The inputs, in order.
    pub inputs: Vec<MergeInputSummary>,
    /// Bench runs merged (sum of the inputs' runs).
    pub runs: u64,
    /// `--timeout` of every input, µs (the censoring bound of single reads).
    pub timeout_us: u64,
    /// Turn deadline of every input, µs (the censoring bound of reads inside turns).
    pub deadline_us: u64,
    /// Reads per turn of every input (a difference is an error).
    pub parallel: u32,
    /// Histogram range and precision of every input.
    pub histogram: HistSettings,
    /// Per tag, in order of first appearance.
    pub tags: Vec<MergedTag>,
    /// Single-read phase counters, summed (`maxInFlight`: the largest).
    pub single_phase: PhaseCounters,
    /// Turn-read counters, summed (`maxInFlight`: the largest).
    pub turn_phase: PhaseCounters,
    /// Turns run.
    pub turns: u64,
    /// Turns that hit the deadline.
    pub turns_hit_deadline: u64,
    /// Share of turns that hit the deadline, 0..1.
    pub deadline_share: f64,
    /// Cancellations sent.
    pub cancellations: u64,
    /// Responses after their cancellation.
    pub late_responses: u64,
    /// Reads abandoned with no answer.
    pub abandoned: u64,
    /// Errors by class, summed.
    pub errors: BTreeMap<String, u64>,
    /// Some input was a partial (interrupted) run.
    pub partial: bool,
    /// Per-input warnings (settings that differ, tags missing, partial runs).
    pub warnings: Vec<String>,
}

/// A merge: the report and the merged `.hlog` bytes.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The report.
    pub report: MergeReport,
    /// The merged interval log: one interval per tag (from the earliest input interval start to
    /// the latest end), V2 deflate, with the summed `#[mcptape: …]` header, so merged logs merge
    /// again.
    pub hlog: Vec<u8>,
    /// The files read (`mcptape_replay::merge::merge_files`: every log),
    /// canonicalized, each with its name as given; `mcptape_replay::merge::write_merge_out` never writes over one.
    /// Empty for an in-memory [`merge`].
    pub read_files: Vec<(PathBuf, String)>,
}

/// One input after reading: its histograms and its meta.
struct Read {
    name: String,
    log: HlogRead,
    meta: HlogMeta,
}

fn read_input(input: &MergeInput) -> Result<Read, MergeError> {
    let e = |kind| MergeError::of(&input.name, kind);
    let log = read_hlog(&input.log).map_err(|x| e(MergeErrorKind::Log(x)))?;
    let Some((meta, _)) = &log.meta else {
        return Err(e(MergeErrorKind::NoCounters));
    };
    let meta = meta.clone();
    check_counters(&log, &meta).map_err(e)?;
    Ok(Read {
        name: input.name.clone(),
        log,
        meta,
    })
}

/// How [`check_counters`] names the recorded single reads and their timed-out ones.
const SINGLE_RECORDED: [&str; 2] = ["single reads answered or timed out", "timed out"];

/// How [`check_counters`] names the recorded turn reads and their cut ones.
const TURN_READS_RECORDED: [&str; 2] = ["turn reads answered or cut at the deadline", "cut"];

/// Checks the counters `meta` says against the histograms of `log` (see the module docs for what
/// bench records where; [`crate::render::hlog::bench_hlog`], `bench::finish_read`, the turn
/// loop).
fn check_counters(log: &HlogRead, meta: &HlogMeta) -> Result<(), MergeErrorKind> {
    let count = |tag: &str| log.tags.iter().find(|t| t.tag == tag).map(|t| t.hist.len());
    let bad = |tag: &str, header: String, found: u64| MergeErrorKind::Counters {
        tag: tag.to_owned(),
        header,
        found,
    };
    let (s, t) = (&meta.single_phase, &meta.turn_phase);
    let sum = |xs: &[u64]| xs.iter().fold(0u64, |a, &b| a.saturating_add(b));
    // Every answered (ok or error) or timed-out (turn reads: cut) read of a phase is in its
    // tag; a closed one is not. The tag's count.
    let all_recorded = |tag: &str, p: &PhaseCounters, [what, timed_out]: [&str; 2]| {
        let found = count(tag).unwrap_or(0);
        let (ok, errors) = (p.answered_ok, p.error_answers_total());
        let none = p.no_recorded_answer;
        let recorded = sum(&[ok, errors, none, p.timed_out]);
        if recorded != found {
            let header = format!(
                "{recorded} {what} ({ok} ok, {errors} error answers, {none} with no recorded answer, {} {timed_out})",
                p.timed_out
            );
            return Err(bad(tag, header, found));
        }
        Ok(found)
    };
    let single = all_recorded("single", s, SINGLE_RECORDED)?;
    // Sent: each one ends recorded or closed; a partial run drops the reads in flight.
    let ended = single.saturating_add(s.closed);
    if s.sent < ended || (!meta.partial && s.sent != ended) {
        let closed = if s.closed > 0 {
            format!(" ({} closed unanswered)", s.closed)
        } else {
            String::new()
        };
        return Err(bad(
            "single",
            format!("{} single reads sent{closed}", s.sent),
            single,
        ));
    }
    let tt = timeout_tag();
    let err_tags: Vec<u64> = log
        .tags
        .iter()
        .filter(|x| x.tag.starts_with("single-err-") && x.tag != tt)
        .map(|x| x.hist.len())
        .collect();
    let errs = (!err_tags.is_empty()).then(|| sum(&err_tags));
    for (tag, want, what, found) in [
        (
            "single-ok",
            s.answered_ok,
            "single reads answered ok",
            count("single-ok"),
        ),
        (
            tt.as_str(),
            s.timed_out,
            "single reads timed out",
            count(&tt),
        ),
        (
            "single-err-*",
            s.error_answers_total(),
            "single-read error answers",
            errs,
        ),
        ("turn", meta.turns, "turns run", count("turn")),
        (
            "turn-reads-ok",
            t.answered_ok,
            "turn reads answered ok",
            count("turn-reads-ok"),
        ),
    ] {
        // An empty tag is left out of a bench log: absent is 0.
        let found = found.unwrap_or(0);
        if want != found {
            return Err(bad(tag, format!("{want} {what}"), found));
        }
    }
    if meta.turns_hit_deadline > meta.turns {
        return Err(bad(
            "turn",
            format!("{} turns hit the deadline", meta.turns_hit_deadline),
            count("turn").unwrap_or(0),
        ));
    }
    let reads = all_recorded("turn-reads", t, TURN_READS_RECORDED)?;
    // Each turn read ends recorded or closed, but for the reads of the last turn of a run
    // that stopped mid-turn (target gone, interrupted): at most `parallel` per run.
    let ended = reads.saturating_add(t.closed);
    let slack = meta.runs.saturating_mul(u64::from(meta.parallel));
    if t.sent < ended || t.sent > ended.saturating_add(slack) {
        return Err(bad(
            "turn-reads",
            format!(
                "{} turn reads sent ({} closed unanswered, at most {slack} left in a last cut turn)",
                t.sent, t.closed
            ),
            reads,
        ));
    }
    Ok(())
}

fn add(what: &str, a: u64, b: u64) -> Result<u64, MergeError> {
    a.checked_add(b).ok_or_else(|| MergeError {
        input: None,
        kind: MergeErrorKind::Overflow(what.to_owned()),
    })
}

fn add_map(
    what: &str,
    into: &mut BTreeMap<String, u64>,
    from: &BTreeMap<String, u64>,
) -> Result<(), MergeError> {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_insert(0);
        *e = add(what, *e, *v)?;
    }
    Ok(())
}

fn add_phase(what: &str, a: &mut PhaseCounters, b: &PhaseCounters) -> Result<(), MergeError> {
    a.sent = add(what, a.sent, b.sent)?;
    a.answered_ok = add(what, a.answered_ok, b.answered_ok)?;
    add_map(what, &mut a.error_answers, &b.error_answers)?;
    a.errors_as_recorded = add(what, a.errors_as_recorded, b.errors_as_recorded)?;
    a.no_recorded_answer = add(what, a.no_recorded_answer, b.no_recorded_answer)?;
    a.timed_out = add(what, a.timed_out, b.timed_out)?;
    a.closed = add(what, a.closed, b.closed)?;
    a.cancellations_sent = add(what, a.cancellations_sent, b.cancellations_sent)?;
    a.late_responses = add(what, a.late_responses, b.late_responses)?;
    a.abandoned = add(what, a.abandoned, b.abandoned)?;
    a.max_in_flight = a.max_in_flight.max(b.max_in_flight);
    Ok(())
}

/// The latency model as shown: `(live target)` when there is none.
fn model(m: &Option<String>) -> &str {
    m.as_deref().unwrap_or("(live target)")
}

/// Merges `inputs` (at least one, at most [`MAX_INPUTS`]): per tag, every input's histogram
/// added together (values µs as written; HdrHistogram `Histogram::add`), counters summed,
/// censoring carried (bound: the shared `--timeout` / deadline; from: the smallest censored
/// value of any input), and the merged `.hlog` written ([`write_hlog_at`], `#[StartTime: …]` the
/// earliest input interval start).
///
/// # Errors
/// [`MergeError`] naming the input: no or too many inputs, a malformed log (with its line), no
/// counters, a `--timeout` / deadline / histogram settings mismatch, a sum
/// overflowing 64 bits, a rendering failure.
pub fn merge(inputs: &[MergeInput]) -> Result<Merged, MergeError> {
    let whole = |kind| MergeError { input: None, kind };
    if inputs.is_empty() {
        return Err(whole(MergeErrorKind::NoInputs));
    }
    if inputs.len() > MAX_INPUTS {
        return Err(whole(MergeErrorKind::TooManyInputs {
            n: inputs.len(),
            limit: MAX_INPUTS,
        }));
    }
    // One input at a time: its histograms are added into `acc` (one per tag, in order of first
    // appearance) and dropped, so memory is one histogram per tag, not per input.
    let mut seen: Vec<Seen> = Vec::with_capacity(inputs.len());
    let mut acc: Vec<(String, Histogram<u64>)> = Vec::new();
    let mut warnings = Vec::new();
    for input in inputs {
        let r = read_input(input)?;
        if let Some(first) = seen.first() {
            check_settings(first, &r, &mut warnings)?;
        }
        if let Some(at) = seen.iter().position(|x| {
            x.start_time_s.is_some() && x.start_time_s == r.log.start_time_s && x.meta == r.meta
        }) {
            warnings.push(format!(
                "{}: input [{}] is the same run as [{}] ({}) (same StartTime and header): its counts are added twice",
                r.name,
                seen.len() + 1,
                at + 1,
                seen[at].name
            ));
        }
        let mut tags = Vec::with_capacity(r.log.tags.len());
        for t in r.log.tags {
            let at = match acc.iter().position(|(n, _)| *n == t.tag) {
                Some(at) => at,
                None => {
                    let s = r.log.settings;
                    let h = Histogram::<u64>::new_with_bounds(
                        s.lowest,
                        s.highest,
                        s.significant_digits,
                    )
                    .map_err(|e| whole(MergeErrorKind::Render(e.to_string())))?;
                    acc.push((t.tag.clone(), h));
                    acc.len() - 1
                }
            };
            acc[at].1.add(&t.hist).map_err(|e| {
                MergeError::of(
                    &r.name,
                    MergeErrorKind::Render(format!("tag {:?}: {e}", t.tag)),
                )
            })?;
            tags.push((t.tag, t.hist.len(), t.start_s, t.end_s));
        }
        if r.meta.partial && r.meta.partial_reasons.is_empty() {
            warnings.push(format!(
                "{}: a partial run (interrupted): its counts cover what ran until then",
                r.name
            ));
        }
        for why in &r.meta.partial_reasons {
            warnings.push(format!(
                "{}: a partial run: {why}; its counts cover what ran until then",
                r.name
            ));
        }
        if !r.meta.faults.is_empty() {
            warnings.push(format!(
                "{}: a faulted run (--fault {}): its latencies and errors include injected faults",
                r.name,
                r.meta.faults.join(",")
            ));
        }
        seen.push(Seen {
            name: r.name,
            meta: r.meta,
            start_time_s: r.log.start_time_s,
            settings: r.log.settings,
            tags,
        });
    }
    let first = &seen[0];
    let settings = first.settings;
    let mut tags = Vec::with_capacity(acc.len());
    let mut spans = Vec::with_capacity(acc.len());
    let mut censored_out: BTreeMap<String, TagCensor> = BTreeMap::new();
    for (name, h) in &acc {
        let mut input_counts = Vec::with_capacity(seen.len());
        let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut sum = 0u64;
        let mut censor: Option<TagCensor> = None;
        for r in &seen {
            let Some((_, n, t_start, t_end)) = r.tags.iter().find(|t| &t.0 == name) else {
                warnings.push(format!(
                    "{}: no {name:?} intervals: 0 values from this input",
                    r.name
                ));
                input_counts.push(0);
                continue;
            };
            sum = add(&format!("tag {name:?} count"), sum, *n)?;
            input_counts.push(*n);
            start = start.min(*t_start);
            end = end.max(*t_end);
            if let Some(c) = r.meta.censored.get(name) {
                let m = censor.get_or_insert(TagCensor {
                    bound_us: c.bound_us,
                    from_us: None,
                    count: 0,
                });
                m.bound_us = m.bound_us.min(c.bound_us);
                m.count = add(&format!("tag {name:?} censored count"), m.count, c.count)?;
                m.from_us = match (m.from_us, c.from_us) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        if h.len() != sum {
            return Err(whole(MergeErrorKind::Overflow(format!(
                "tag {name:?}: merged histogram holds {} values, the inputs {sum}",
                h.len()
            ))));
        }
        let latency = match censor {
            Some(c) => {
                censored_out.insert(name.clone(), c);
                let mut q = Quantiles::of_censored(h, c.from_us, c.count);
                if let Some(x) = &mut q.censored {
                    x.bound_us = x.bound_us.min(c.bound_us);
                }
                q
            }
            None => Quantiles::of(h),
        };
        tags.push(MergedTag {
            tag: name.clone(),
            latency,
            input_counts,
        });
        spans.push((start, end));
    }
    let m = summed_meta(&seen, censored_out)?;
    // The merged log: StartTime/BaseTime at the earliest interval start.
    let t0 = spans
        .iter()
        .map(|s| s.0)
        .filter(|x| x.is_finite())
        .fold(f64::INFINITY, f64::min);
    let t0 = if t0.is_finite() { t0.max(0.0) } else { 0.0 };
    let entries: Vec<Tagged<'_>> = acc
        .iter()
        .zip(&spans)
        .map(|((tag, h), (start, end))| {
            Tagged::new(tag, h, (start - t0).max(0.0), (end - start).max(0.0))
        })
        .collect();
    let names: Vec<&str> = seen.iter().map(|r| r.name.as_str()).collect();
    let mut head = format!(
        "mcptape merge of {} logs (values in µs; counts are sums of the inputs'): {}",
        seen.len(),
        names.join(", ")
    );
    if head.len() > HEAD_COMMENT_BYTES {
        let mut cut = HEAD_COMMENT_BYTES;
        while !head.is_char_boundary(cut) {
            cut -= 1;
        }
        head.truncate(cut);
        head.push('…');
    }
    let meta_line = m
        .comment()
        .map_err(|e| whole(MergeErrorKind::Render(e.to_string())))?;
    let hlog = write_hlog_at(
        &entries,
        &[&head, &meta_line],
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(t0),
    )
    .map_err(|e| whole(MergeErrorKind::Render(e.to_string())))?;
    let report = MergeReport {
        count_rule: COUNT_RULE.to_owned(),
        inputs: seen
            .iter()
            .map(|r| MergeInputSummary {
                path: r.name.clone(),
                runs: r.meta.runs,
                transcript: r.meta.transcript.clone(),
                latency: r.meta.latency.clone(),
                seed: r.meta.seed,
                load: r.meta.load.clone(),
                start_time_s: r.start_time_s,
                counts: r.tags.iter().map(|t| (t.0.clone(), t.1)).collect(),
            })
            .collect(),
        runs: m.runs,
        timeout_us: m.timeout_us,
        deadline_us: m.deadline_us,
        parallel: m.parallel,
        histogram: settings,
        tags,
        deadline_share: if m.turns > 0 {
            m.turns_hit_deadline as f64 / m.turns as f64
        } else {
            0.0
        },
        single_phase: m.single_phase,
        turn_phase: m.turn_phase,
        turns: m.turns,
        turns_hit_deadline: m.turns_hit_deadline,
        cancellations: m.cancellations,
        late_responses: m.late_responses,
        abandoned: m.abandoned,
        errors: m.errors,
        partial: m.partial,
        warnings,
    };
    Ok(Merged {
        report,
        hlog,
        read_files: Vec::new(),
    })
}

/// Longest first header comment of a merged log (the input names), bytes; cut with `…` past it.
const HEAD_COMMENT_BYTES: usize = 4096;

/// One input once its histograms are added: what the report and the checks still need.
struct Seen {
    name: String,
    meta: HlogMeta,
    start_time_s: Option<f64>,
    settings: HistSettings,
    /// (tag, values, earliest start s, latest end s), in the log's order.
    tags: Vec<(String, u64, f64, f64)>,
}

/// Refuses `r` when a setting that decides what the values mean differs from `first`'s
/// (`--timeout`, deadline, reads per turn, histogram settings); pushes a warning for the others.
fn check_settings(first: &Seen, r: &Read, warnings: &mut Vec<String>) -> Result<(), MergeError> {
    let mismatch = |setting, a: String, b: String| {
        MergeError::of(
            &r.name,
            MergeErrorKind::Mismatch {
                setting,
                first: a,
                found: b,
                first_input: first.name.clone(),
            },
        )
    };
    let us = |v: u64| format!("{v} µs");
    if r.meta.timeout_us != first.meta.timeout_us {
        return Err(mismatch(
            "--timeout (censoring bound of single reads)",
            us(first.meta.timeout_us),
            us(r.meta.timeout_us),
        ));
    }
    if r.meta.deadline_us != first.meta.deadline_us {
        return Err(mismatch(
            "turn deadline (censoring bound of turn reads)",
            us(first.meta.deadline_us),
            us(r.meta.deadline_us),
        ));
    }
    if r.meta.parallel != first.meta.parallel {
        return Err(mismatch(
            "reads per turn (--parallel)",
            first.meta.parallel.to_string(),
            r.meta.parallel.to_string(),
        ));
    }
    if r.log.settings != first.settings {
        return Err(mismatch(
            "histogram settings",
            first.settings.to_string(),
            r.log.settings.to_string(),
        ));
    }
    let differs = |what: &str, a: &str, b: &str| {
        format!(
            "{}: {what} {b:?} differs from the first input's ({}) {a:?}: merged anyway",
            r.name, first.name
        )
    };
    let (f, m) = (&first.meta, &r.meta);
    if m.latency != f.latency {
        warnings.push(differs(
            "latency model",
            model(&f.latency),
            model(&m.latency),
        ));
    }
    if m.load != f.load {
        warnings.push(differs("load", &f.load, &m.load));
    }
    if !crate::regression::same_transcripts(&m.transcript, &f.transcript) {
        warnings.push(differs("transcript", &f.transcript, &m.transcript));
    }
    if m.target != f.target {
        warnings.push(differs("target", &f.target, &m.target));
    }
    Ok(())
}

/// The [`HlogMeta`] of the merge: counters summed (checked), settings of the first input, seed
/// `None` and latency `(mixed)` when the inputs differ, `censored` as merged per tag.
fn summed_meta(
    seen: &[Seen],
    censored: BTreeMap<String, TagCensor>,
) -> Result<HlogMeta, MergeError> {
    let first = &seen[0].meta;
    let mut m = HlogMeta {
        runs: 0,
        partial: false,
        turns: 0,
        turns_hit_deadline: 0,
        cancellations: 0,
        late_responses: 0,
        abandoned: 0,
        errors: BTreeMap::new(),
        single_phase: PhaseCounters::default(),
        turn_phase: PhaseCounters::default(),
        censored,
        faults: Vec::new(),
        partial_reasons: Vec::new(),
        ..first.clone()
    };
    for r in seen {
        let x = &r.meta;
        m.runs = add("runs", m.runs, x.runs)?;
        m.turns = add("turns", m.turns, x.turns)?;
        m.turns_hit_deadline = add(
            "turns hit deadline",
            m.turns_hit_deadline,
            x.turns_hit_deadline,
        )?;
        m.cancellations = add("cancellations", m.cancellations, x.cancellations)?;
        m.late_responses = add("late responses", m.late_responses, x.late_responses)?;
        m.abandoned = add("abandoned", m.abandoned, x.abandoned)?;
        add_map("errors", &mut m.errors, &x.errors)?;
        add_phase("single-read counters", &mut m.single_phase, &x.single_phase)?;
        add_phase("turn-read counters", &mut m.turn_phase, &x.turn_phase)?;
        m.partial |= x.partial;
        for f in &x.faults {
            if !m.faults.contains(f) {
                m.faults.push(f.clone());
            }
        }
        m.partial_reasons.extend(x.partial_reasons.iter().cloned());
        if m.seed != x.seed {
            m.seed = None;
        }
        if m.latency != x.latency {
            m.latency = Some("(mixed)".into());
        }
    }
    let others = seen
        .iter()
        .filter(|r| r.meta.transcript != first.transcript)
        .count();
    if others > 0 {
        m.transcript = format!("{} (+{others} others)", first.transcript);
    }
    Ok(m)
}

/// A quantile cell in ms: `n/a` (empty), `>5000.0` (censored), else e.g. `1.234`.
fn cell(q: &Quantiles, us: u64, censored: impl Fn(&crate::stats::Censored) -> bool) -> String {
    match &q.censored {
        _ if q.count == 0 => "n/a".into(),
        Some(c) if censored(c) => format!(">{:.1}", c.bound_us as f64 / 1000.0),
        _ => format!("{:.3}", us as f64 / 1000.0),
    }
}

/// Widest tag shown in the table (longer ones are cut with `…`; the full tag is in the JSON).
const TAG_WIDTH: usize = 20;

/// Widest per-input counts cell (`40+40`); longer: `sum of N inputs`.
const INPUTS_WIDTH: usize = 12;

impl MergeReport {
    /// The one-screen table `mcptape merge` prints: the inputs, then per tag the merged count,
    /// the per-input counts it sums, p50/p90/p99/p99.9/max/mean in ms (`>B` censored at the bound
    /// B), then the summed counters and the warnings.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "mcptape merge: {} logs, {} runs; {COUNT_RULE}",
            self.inputs.len(),
            self.runs
        );
        for (i, x) in self.inputs.iter().enumerate() {
            let seed = x.seed.map_or("mixed".to_owned(), |v| v.to_string());
            let _ = writeln!(
                s,
                "  [{}] {}  seed {seed}  latency {}",
                i + 1,
                x.path,
                model(&x.latency)
            );
        }
        let _ = writeln!(
            s,
            "timeout {:.1} ms, deadline {:.1} ms, {} reads per turn; `>B`: censored (timed out, recorded at the bound B)",
            self.timeout_us as f64 / 1000.0,
            self.deadline_us as f64 / 1000.0,
            self.parallel
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "  {:<TAG_WIDTH$} {:>7} {:<INPUTS_WIDTH$} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "tag",
            "n (sum)",
            "n per input",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "mean ms"
        );
        for t in &self.tags {
            let q = &t.latency;
            let name: String = if t.tag.chars().count() > TAG_WIDTH {
                t.tag.chars().take(TAG_WIDTH - 1).chain(['…']).collect()
            } else {
                t.tag.clone()
            };
            let per: Vec<String> = t.input_counts.iter().map(u64::to_string).collect();
            let mut per = per.join("+");
            if per.chars().count() > INPUTS_WIDTH {
                per = format!("sum of {}", t.input_counts.len());
            }
            let mean = if q.count == 0 {
                "n/a".to_owned()
            } else {
                format!("{:.3}", q.mean_us / 1000.0)
            };
            let _ = writeln!(
                s,
                "  {name:<TAG_WIDTH$} {:>7} {per:<INPUTS_WIDTH$} {:>8} {:>8} {:>8} {:>8} {:>8} {mean:>8}",
                q.count,
                cell(q, q.p50_us, |c| c.p50),
                cell(q, q.p90_us, |c| c.p90),
                cell(q, q.p99_us, |c| c.p99),
                cell(q, q.p999_us, |c| c.p999),
                cell(q, q.max_us, |c| c.max),
            );
        }
        let _ = writeln!(s);
        for (name, c) in [
            ("single reads", &self.single_phase),
            ("turn reads", &self.turn_phase),
        ] {
            let _ = writeln!(
                s,
                "{name:<12}: sent {}  ok {}  error answers {}  timed out {}  closed {}  cancellations {}  late {}  abandoned {}",
                c.sent,
                c.answered_ok,
                c.error_answers_total(),
                c.timed_out,
                c.closed,
                c.cancellations_sent,
                c.late_responses,
                c.abandoned
            );
        }
        let _ = writeln!(
            s,
            "turns       : {} run, {} hit the deadline ({:.1} %)",
            self.turns,
            self.turns_hit_deadline,
            self.deadline_share * 100.0
        );
        if !self.errors.is_empty() {
            let list: Vec<String> = self
                .errors
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            let _ = writeln!(s, "errors      : {}", list.join(", "));
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::hlog::{HLOG_META_FORMAT, TagCensor, timeout_tag};
    use crate::stats::new_hist;

    /// A log with no `#[mcptape: …]` header: one `single` value of 1 ms.
    fn bare_log() -> Vec<u8> {
        let mut h = new_hist();
        h.record(1_000).unwrap();
        crate::render::hlog::write_hlog(&[Tagged::new("single", &h, 0.0, 1.0)], "no meta").unwrap()
    }

    fn meta(timeout_us: u64, seed: u64) -> HlogMeta {
        HlogMeta {
            format: HLOG_META_FORMAT,
            runs: 1,
            transcript: "t.jsonl".into(),
            target: "embedded".into(),
            latency: Some("fixed:1ms".into()),
            seed: Some(seed),
            load: "closed-loop, concurrency 1".into(),
            parallel: 4,
            timeout_us,
            deadline_us: 800_000,
            partial: false,
            turns: 3,
            turns_hit_deadline: 1,
            cancellations: 2,
            late_responses: 1,
            abandoned: 1,
            errors: [("timeout".to_owned(), 1)].into_iter().collect(),
            single_phase: PhaseCounters {
                sent: 10,
                answered_ok: 8,
                error_answers: [("internal (-32603)".to_owned(), 1)].into_iter().collect(),
                timed_out: 1,
                cancellations_sent: 1,
                abandoned: 1,
                max_in_flight: 1,
                ..Default::default()
            },
            turn_phase: PhaseCounters {
                sent: 12,
                answered_ok: 12,
                max_in_flight: 4,
                ..Default::default()
            },
            censored: [(
                "single".to_owned(),
                TagCensor {
                    bound_us: timeout_us,
                    from_us: Some(timeout_us),
                    count: 1,
                },
            )]
            .into_iter()
            .collect(),
            faults: Vec::new(),
            partial_reasons: Vec::new(),
        }
    }

    /// A bench-like log of `m` whose counters fit its histograms: single reads `values` (µs;
    /// those at or past the timeout timed out, the first of the others are the meta's error
    /// answers, the rest ok), `m.turns` turns of 5 ms, the meta's turn reads at 1 ms.
    fn log(m: &HlogMeta, values: &[u64]) -> Vec<u8> {
        let (m, hists) = fit(m, values);
        let tags: Vec<Tagged<'_>> = hists
            .iter()
            .filter(|(t, h)| !h.is_empty() || matches!(*t, "single" | "turn" | "turn-reads"))
            .map(|(tag, hist)| {
                Tagged::new(
                    tag,
                    hist,
                    if tag.starts_with("turn") { 1.0 } else { 0.0 },
                    1.0,
                )
            })
            .collect();
        write_hlog_at(
            &tags,
            &["test", &m.comment().unwrap()],
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000),
        )
        .unwrap()
    }

    /// `m` with its counters set from `values` (see [`log`]) and the histograms of each tag.
    fn fit(m: &HlogMeta, values: &[u64]) -> (HlogMeta, Vec<(&'static str, Histogram<u64>)>) {
        let mut m = m.clone();
        let (timed, answered): (Vec<u64>, Vec<u64>) =
            values.iter().partition(|&&v| v >= m.timeout_us);
        let n_err = m.single_phase.error_answers_total() as usize;
        if answered.len() < n_err {
            m.single_phase.error_answers.clear();
        }
        let n_err = m.single_phase.error_answers_total() as usize;
        let rec = |vs: &[u64]| {
            let mut h = new_hist();
            for &v in vs {
                h.record(v).unwrap();
            }
            h
        };
        let s = &mut m.single_phase;
        s.sent = values.len() as u64;
        s.answered_ok = (answered.len() - n_err) as u64;
        s.timed_out = timed.len() as u64;
        s.closed = 0;
        m.censored.insert(
            "single".into(),
            TagCensor {
                bound_us: m.timeout_us,
                from_us: timed.iter().copied().min(),
                count: timed.len() as u64,
            },
        );
        let t = &m.turn_phase;
        let turn_reads = vec![1_000; (t.answered_ok + t.timed_out) as usize];
        let turn_ok = vec![1_000; t.answered_ok as usize];
        let hists = vec![
            ("single", rec(values)),
            ("turn", rec(&vec![5_000; m.turns as usize])),
            ("single-ok", rec(&answered[n_err..])),
            ("single-err-internal-32603", rec(&answered[..n_err])),
            ("single-err-timeout", rec(&timed)),
            ("turn-reads", rec(&turn_reads)),
            ("turn-reads-ok", rec(&turn_ok)),
        ];
        (m, hists)
    }

    /// A log of `m` whose only reads are `h`'s values in tags `single` and `single-ok`, all
    /// answered ok; no turn.
    fn single_only(m: &HlogMeta, h: &Histogram<u64>) -> Vec<u8> {
        let mut m = m.clone();
        m.single_phase = PhaseCounters {
            sent: h.len(),
            answered_ok: h.len(),
            max_in_flight: 1,
            ..Default::default()
        };
        m.turn_phase = PhaseCounters::default();
        (m.turns, m.turns_hit_deadline) = (0, 0);
        m.censored.clear();
        let tag = |tag| Tagged::new(tag, h, 0.0, 1.0);
        write_hlog_at(
            &[tag("single"), tag("single-ok")],
            &[&m.comment().unwrap()],
            std::time::UNIX_EPOCH,
        )
        .unwrap()
    }

    fn input(name: &str, log: Vec<u8>) -> MergeInput {
        MergeInput {
            name: name.into(),
            log,
        }
    }

    #[test]
    fn merge_sums_counts_and_counters_and_keeps_the_censored_tail() {
        // A: 9 reads at 1 ms + one timed out at 5 s; B: 10 reads at 2 ms + one at 5 s.
        let mut a_vals = vec![1_000; 9];
        a_vals.push(5_000_000);
        let mut b_vals = vec![2_000; 10];
        b_vals.push(5_000_000);
        let m = merge(&[
            input("A", log(&meta(5_000_000, 1), &a_vals)),
            input("B", log(&meta(5_000_000, 2), &b_vals)),
        ])
        .unwrap();
        let r = &m.report;
        assert_eq!(r.runs, 2);
        let single = &r.tags[0];
        assert_eq!(single.tag, "single");
        assert_eq!(single.input_counts, vec![10, 11]);
        assert_eq!(single.latency.count, 21);
        let mut all = new_hist();
        for v in a_vals.iter().chain(&b_vals) {
            all.record(*v).unwrap();
        }
        assert_eq!(single.latency.p50_us, all.value_at_quantile(0.5));
        assert_eq!(single.latency.max_us, all.max());
        let c = single.latency.censored.unwrap();
        assert_eq!((c.bound_us, c.count), (5_000_000, 2));
        assert!(c.max && c.p99 && !c.p90 && !c.p50, "{c:?}");
        assert_eq!(r.tags[1].tag, "turn");
        assert_eq!(r.tags[1].latency.count, 6);
        assert!(r.tags[1].latency.censored.is_none());
        assert_eq!(r.single_phase.sent, 21);
        assert_eq!(r.single_phase.error_answers["internal (-32603)"], 2);
        assert_eq!(r.single_phase.max_in_flight, 1);
        assert_eq!(r.turn_phase.sent, 24);
        assert_eq!((r.turns, r.turns_hit_deadline), (6, 2));
        assert_eq!((r.cancellations, r.late_responses, r.abandoned), (4, 2, 2));
        assert_eq!(r.errors["timeout"], 2);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let table = r.table();
        assert!(
            table.contains("n (sum)") && table.contains("n per input"),
            "{table}"
        );
        assert!(table.contains("10+11"), "{table}");
        assert!(table.contains(">5000.0"), "{table}");
        // The merged log reads back with the same counts and the summed header; merging it
        // again with A adds A once more.
        let back = read_hlog(&m.hlog).unwrap();
        assert_eq!(back.tags[0].hist.len(), 21);
        let (bm, _) = back.meta.clone().unwrap();
        assert_eq!((bm.runs, bm.seed, bm.single_phase.sent), (2, None, 21));
        assert_eq!(bm.censored["single"].count, 2);
        assert_eq!(back.start_time_s, Some(1_000_000.0));
        let again = merge(&[
            input("AB", m.hlog.clone()),
            input("A", log(&meta(5_000_000, 1), &a_vals)),
        ])
        .unwrap();
        assert_eq!(again.report.tags[0].latency.count, 31);
        assert_eq!(again.report.runs, 3);
    }

    #[test]
    fn merge_refuses_a_different_timeout_naming_both_inputs() {
        let e = merge(&[
            input("A", log(&meta(5_000_000, 1), &[1_000])),
            input("B", log(&meta(1_000_000, 1), &[1_000])),
        ])
        .unwrap_err();
        assert_eq!(e.input.as_deref(), Some("B"));
        assert!(matches!(e.kind, MergeErrorKind::Mismatch { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("--timeout") && text.contains("5000000 µs") && text.contains("(A)"),
            "{text}"
        );
    }

    #[test]
    fn merge_refuses_different_histogram_settings() {
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
        h.record(1_000).unwrap();
        let m = meta(5_000_000, 1);
        let other = single_only(&m, &h);
        let e = merge(&[input("A", log(&m, &[1_000])), input("B", other)]).unwrap_err();
        assert!(e.to_string().contains("histogram settings"), "{e}");
    }

    #[test]
    fn merge_warns_per_input_for_a_different_model_and_a_missing_tag() {
        let mut b = meta(5_000_000, 2);
        b.latency = Some("fixed:2ms".into());
        let mut h = new_hist();
        h.record(1_000).unwrap();
        let b_log = single_only(&b, &h);
        let m = merge(&[
            input("A", log(&meta(5_000_000, 1), &[1_000, 2_000])),
            input("B", b_log),
        ])
        .unwrap();
        let w = &m.report.warnings;
        assert!(w[0].starts_with("B: latency model \"fixed:2ms\""), "{w:?}");
        for tag in [
            "turn",
            "turn-reads",
            "turn-reads-ok",
            "single-err-internal-32603",
        ] {
            let want = format!("B: no {tag:?} intervals: 0 values from this input");
            assert!(w.contains(&want), "{want} not in {w:?}");
        }
        assert_eq!(w.len(), 5, "{w:?}");
        let turn = m.report.tags.iter().find(|t| t.tag == "turn").unwrap();
        assert_eq!(turn.input_counts, vec![3, 0]);
    }

    #[test]
    fn merge_without_header_is_refused() {
        let e = merge(&[input("A", bare_log())]).unwrap_err();
        assert!(matches!(e.kind, MergeErrorKind::NoCounters), "{e}");
        assert_eq!(
            e.to_string(),
            "A: no counters: the log has no #[mcptape: …] header line (written by mcptape bench): its counters and settings are unknown"
        );
    }

    #[test]
    fn merge_of_nothing_is_an_error() {
        assert!(matches!(
            merge(&[]).unwrap_err().kind,
            MergeErrorKind::NoInputs
        ));
    }

    #[test]
    fn timeout_tag_is_the_bench_tag() {
        assert_eq!(timeout_tag(), "single-err-timeout");
    }

    #[test]
    fn merge_input_limit_at_and_one_past() {
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000, 1).unwrap();
        h.record(7).unwrap();
        let one = single_only(&meta(5_000_000, 1), &h);
        let mut inputs: Vec<MergeInput> = (0..MAX_INPUTS)
            .map(|i| input(&format!("in{i}"), one.clone()))
            .collect();
        let at = merge(&inputs).unwrap();
        assert_eq!(at.report.tags[0].latency.count, MAX_INPUTS as u64);
        assert_eq!(at.report.runs, MAX_INPUTS as u64);
        assert!(at.report.table().contains("sum of 1000"));
        inputs.push(input("past", one));
        let e = merge(&inputs).unwrap_err();
        assert!(
            matches!(
                e.kind,
                MergeErrorKind::TooManyInputs {
                    n: 1001,
                    limit: MAX_INPUTS
                }
            ),
            "{e}"
        );
    }

    /// The log `bytes` without its interval line of `tag`.
    fn without_tag(bytes: &[u8], tag: &str) -> Vec<u8> {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let keep: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with(&format!("Tag={tag},")))
            .collect();
        assert!(keep.len() < text.lines().count(), "no {tag} line");
        (keep.join("\n") + "\n").into_bytes()
    }

    #[test]
    fn merge_refuses_a_log_cut_at_a_line_boundary() {
        let vals = [1_000, 1_000, 2_000, 5_000_000];
        let full = log(&meta(5_000_000, 1), &vals);
        // `head -n`: the tags after `single` and `turn` gone, each line whole.
        for (tag, header) in [
            ("single-ok", "2 single reads answered ok"),
            ("single-err-timeout", "1 single reads timed out"),
            ("single-err-internal-32603", "1 single-read error answers"),
            ("turn-reads-ok", "12 turn reads answered ok"),
        ] {
            let e = merge(&[input("cut", without_tag(&full, tag))]).unwrap_err();
            assert_eq!(e.input.as_deref(), Some("cut"));
            let want_tag = if tag.starts_with("single-err-internal") {
                "single-err-*"
            } else {
                tag
            };
            assert_eq!(
                e.to_string(),
                format!(
                    "cut: tag {want_tag:?}: header says {header}, the histograms hold 0: a cut or edited log"
                )
            );
        }
        let e = merge(&[input("cut", without_tag(&full, "turn"))]).unwrap_err();
        assert!(
            e.to_string()
                .contains("tag \"turn\": header says 3 turns run, the histograms hold 0"),
            "{e}"
        );
        let e = merge(&[input("cut", without_tag(&full, "single"))]).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::Counters { tag, found: 0, .. } if tag == "single"),
            "{e}"
        );
        assert_eq!(
            merge(&[input("full", full)]).unwrap().report.tags[0]
                .latency
                .count,
            4
        );
    }

    #[test]
    fn merge_refuses_an_edited_header_sent_999() {
        let full = String::from_utf8(log(&meta(5_000_000, 1), &[1_000; 10])).unwrap();
        assert!(full.contains("\"sent\":10,"));
        let edited = full.replacen("\"sent\":10,", "\"sent\":999,", 1);
        let e = merge(&[input("ed", edited.into_bytes())]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ed: tag \"single\": header says 999 single reads sent, the histograms hold 10: a cut or edited log"
        );
        // The ok count edited: single no longer sums.
        let edited = full.replacen("\"answeredOk\":9,", "\"answeredOk\":8,", 1);
        let e = merge(&[input("ed", edited.into_bytes())]).unwrap_err();
        assert!(
            matches!(&e.kind, MergeErrorKind::Counters { tag, found: 10, .. } if tag == "single"),
            "{e}"
        );
    }

    #[test]
    fn merge_counter_check_partial_run_and_turn_reads_sent_bounds() {
        // A partial run: reads in flight at the interruption are sent but in no histogram.
        let mut m = meta(5_000_000, 1);
        m.partial = true;
        let (fitted, _) = fit(&m, &[1_000; 4]);
        let text = String::from_utf8(log(&m, &[1_000; 4])).unwrap();
        let sent = format!("\"sent\":{},", fitted.single_phase.sent);
        let more = text.replacen(&sent, "\"sent\":9,", 1);
        assert!(merge(&[input("p", more.into_bytes())]).is_ok());
        let fewer = text.replacen(&sent, "\"sent\":3,", 1);
        let e = merge(&[input("p", fewer.into_bytes())]).unwrap_err();
        assert!(
            e.to_string().contains("header says 3 single reads sent"),
            "{e}"
        );
        // Turn reads: sent is the recorded ones + closed, + at most `parallel` of a cut turn.
        for (sent, ok) in [(12, true), (16, true), (17, false), (11, false)] {
            let mut m = meta(5_000_000, 1);
            m.turn_phase.sent = sent;
            let r = merge(&[input("t", log(&m, &[1_000; 3]))]);
            assert_eq!(r.is_ok(), ok, "sent {sent}: {:?}", r.err());
        }
    }

    #[test]
    fn merge_warns_for_the_same_run_twice() {
        let a = log(&meta(5_000_000, 1), &[1_000; 3]);
        let m = merge(&[
            input("A", a.clone()),
            input("B", log(&meta(5_000_000, 2), &[1_000; 3])),
            input("A2", a),
        ])
        .unwrap();
        assert_eq!(
            m.report.warnings,
            vec![
                "A2: input [3] is the same run as [1] (A) (same StartTime and header): its counts are added twice"
            ]
        );
        assert_eq!(m.report.tags[0].input_counts, vec![3, 3, 3]);
    }

    #[test]
    fn merge_refuses_different_reads_per_turn() {
        let mut b = meta(5_000_000, 2);
        b.parallel = 2;
        let e = merge(&[
            input("A", log(&meta(5_000_000, 1), &[1_000])),
            input("B", log(&b, &[1_000])),
        ])
        .unwrap_err();
        assert_eq!(e.input.as_deref(), Some("B"));
        assert_eq!(
            e.to_string(),
            "B: reads per turn (--parallel) is 2, the first input (A) has 4: refusing to merge"
        );
    }
}
