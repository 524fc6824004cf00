//! The HdrHistogram interval log (`.hlog`): V2 compressed histograms, the format of the Java
//! `HistogramLogWriter`, mergeable across machines. Writing ([`write_hlog`], [`bench_hlog`]) and
//! reading back ([`merge_hlog_tagged`], [`merge_hlog`]).

use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};

use crate::bench::BenchResult;
use crate::stats::{BenchReport, new_hist};

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

/// Writes an HdrHistogram interval log in the standard log format V2: `#[StartTime: …]`,
/// `#[BaseTime: …]`, the legend line, then one line per entry with its `Tag=`, start, length,
/// max (µs / 1000, so it reads in ms) and the V2 deflate-compressed histogram in base64
/// (`HISTFAAA…`), as the Java `HistogramLogWriter` writes and Python `hdrh.log` reads.
///
/// # Errors
/// A message if serialization fails.
pub fn write_hlog(entries: &[Tagged<'_>], comment: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    {
        let mut b = IntervalLogWriterBuilder::new();
        let now = std::time::SystemTime::now();
        b.add_comment(comment)
            .with_start_time(now)
            .with_base_time(now)
            .with_max_value_divisor(1000.0);
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

/// The `.hlog` of a bench run (`latency.hlog` of `mcptape bench --out`): three intervals tagged
/// `single` (from 0 s, the single-read phase), `turn` and `turn-reads` (from the end of the
/// single-read phase, the turn phase), values in µs.
///
/// # Errors
/// A message if serialization fails.
pub fn bench_hlog(report: &BenchReport, res: &BenchResult) -> Result<Vec<u8>, String> {
    // One tag per error class of the single reads: `single-err-internal-32603`,
    // `single-err-timeout` (tags hold no ',', ' ' or '=').
    let class_tags: Vec<(String, &Histogram<u64>)> = res
        .single_by_class
        .iter()
        .map(|(class, h)| (format!("single-err-{}", tag_text(class)), h))
        .collect();
    write_hlog(
        &[
            Tagged {
                tag: "single",
                hist: &res.single,
                start_s: 0.0,
                duration_s: res.single_elapsed_s,
            },
            Tagged {
                tag: "turn",
                hist: &res.turn,
                start_s: res.single_elapsed_s,
                duration_s: res.turn_elapsed_s,
            },
            Tagged {
                tag: "turn-reads",
                hist: &res.turn_reads,
                start_s: res.single_elapsed_s,
                duration_s: res.turn_elapsed_s,
            },
            Tagged {
                tag: "single-ok",
                hist: &res.single_ok,
                start_s: 0.0,
                duration_s: res.single_elapsed_s,
            },
            Tagged {
                tag: "turn-reads-ok",
                hist: &res.turn_reads_ok,
                start_s: res.single_elapsed_s,
                duration_s: res.turn_elapsed_s,
            },
        ]
        .into_iter()
        .chain(class_tags.iter().map(|(tag, h)| Tagged {
            tag,
            hist: h,
            start_s: 0.0,
            duration_s: res.single_elapsed_s,
        }))
        .filter(|t| !t.hist.is_empty() || matches!(t.tag, "single" | "turn" | "turn-reads"))
        .collect::<Vec<_>>(),
        &format!("mcptape bench {} (values in µs)", report.transcript),
    )
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
}
