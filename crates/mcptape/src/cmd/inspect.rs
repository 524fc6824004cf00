//! `mcptape inspect FILE`: print every `resources/read` result entry of a file
//! of newline-delimited JSON-RPC messages (a captured stdio stream) or of an
//! mcptape transcript (the output of `record` and `crawl`, every file in
//! `corpus/transcripts/`).
//!
//! Input: a file whose first line is a transcript header (a JSON object with
//! `mcptapeTranscript`) is read through [`mcptape_transcript::reader`]
//! (lenient: a malformed record line is reported and skipped, a cut last line
//! is reported), and inspect runs on the `msg` of its message records; line
//! numbers are then transcript line numbers (the header is line 1) and byte
//! offsets in message errors count from the start of the record's `msg`. In a
//! transcript only client→server requests and server→client answers are
//! paired. Any other file is read as one JSON-RPC message or batch per line.
//!
//! Pairing: when the file holds `resources/read` requests, responses are
//! matched to them by id (exactly: `1` and `"1"` differ); otherwise every
//! response whose `result` has `contents` is taken as a read result. Per
//! entry it prints uri, mimeType (declared or `(none)`), shape (text/blob),
//! decoded size in bytes, for blobs the base64 length and padding count, and
//! the sniffed media type against the declared one (mismatch flagged). Error
//! responses are classified ([`mcptape_wire::classify`]). Bad lines are
//! reported with their line number and byte offset; nothing here panics on
//! untrusted input.
//!
//! Exit status: 0 when every line and result parsed; 1 when any did not, or
//! when the file holds no JSON-RPC message at all (an empty file, blank lines
//! only, a header-only transcript: `no messages` on stderr). A file with
//! messages but no `resources/read` result is not an error (exit 0), but it
//! says so on stdout and stderr (`no resources/read result`).

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_transcript::Direction;
use mcptape_transcript::reader::{self as transcript_reader, ReadOptions};
use mcptape_wire::b64;
use mcptape_wire::classify::classify_read_error;
use mcptape_wire::error::WireError;
use mcptape_wire::jsonrpc::{self, ErrorResponse, Frame, Message, RequestId, Response};
use mcptape_wire::media::{self, MediaMatch};
use mcptape_wire::resources::{
    self, ContentsError, Leniency, ReadResourceResult, ResourceContents,
};

/// Arguments of `mcptape inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// File of newline-delimited JSON-RPC messages (one message or batch per
    /// line), or an mcptape transcript (detected by its header line; its
    /// message records are inspected, numbered by transcript line).
    pub file: PathBuf,
    /// Accept lenient base64 in `blob` (whitespace, URL-safe alphabet, missing
    /// padding) and report what was accepted, instead of rejecting it.
    #[arg(long)]
    pub lenient: bool,
}

#[derive(Default)]
struct Totals {
    messages: usize,
    bad_lines: usize,
    results: usize,
    entries: usize,
    bad_results: usize,
    errors: usize,
    mismatches: usize,
}

/// Runs `mcptape inspect`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let data =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let out = inspect(&data, args.lenient);
    print!("{}", out.text);
    if out.messages == 0 {
        eprintln!(
            "mcptape inspect: no messages in {}: nothing to inspect",
            args.file.display()
        );
        return Ok(ExitCode::from(1));
    }
    if out.results == 0 {
        eprintln!(
            "mcptape inspect: no resources/read result in {} ({} messages)",
            args.file.display(),
            out.messages
        );
    }
    Ok(if out.clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Report text, whether everything parsed, and the message and read-result
/// (result or error response) counts.
struct Report {
    text: String,
    clean: bool,
    messages: usize,
    results: usize,
}

/// One JSON-RPC message or batch to inspect: its line number in the file,
/// its bytes, and (in a transcript) who sent it.
struct Input<'a> {
    number: usize,
    bytes: &'a [u8],
    dir: Option<Direction>,
}

struct Line<'a> {
    number: usize,
    bytes: &'a [u8],
    dir: Option<Direction>,
    frame: Result<Frame, WireError>,
}

/// Whether the first line is an mcptape transcript header (an object with a
/// `mcptapeTranscript` member; the reader then checks the whole header).
fn is_transcript(data: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "mcptapeTranscript")]
        mcptape_transcript: Option<serde::de::IgnoredAny>,
    }
    let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Probe>(first).is_ok_and(|p| p.mcptape_transcript.is_some())
}

fn inspect(data: &[u8], lenient: bool) -> Report {
    if is_transcript(data) {
        return inspect_transcript(data, lenient);
    }
    let inputs = data
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
        .map(|(i, bytes)| Input {
            number: i + 1,
            bytes,
            dir: None,
        })
        .collect();
    inspect_messages(String::new(), "lines", inputs, Vec::new(), lenient)
}

/// Reads a transcript (leniently) and inspects the `msg` of its message records.
fn inspect_transcript(data: &[u8], lenient: bool) -> Report {
    let t = match transcript_reader::read_with(data, ReadOptions::lenient()) {
        Ok(t) => t,
        Err(e) => {
            return Report {
                text: format!("source: mcptape transcript\nbad transcript: {e}\n"),
                clean: false,
                messages: 0,
                results: 0,
            };
        }
    };
    // Every line after the header is a record, a skipped line or the dropped tail.
    let skipped: HashSet<usize> = t.skipped.iter().map(|e| e.line).collect();
    let mut inputs = Vec::new();
    let mut line = 1;
    for r in &t.records {
        line += 1;
        while skipped.contains(&line) {
            line += 1;
        }
        if let Some(msg) = r.msg() {
            inputs.push(Input {
                number: line,
                bytes: msg.as_bytes(),
                dir: r.dir(),
            });
        }
    }
    let mut bad = Vec::new();
    for e in &t.skipped {
        bad.push((e.line, format!("bad transcript record: {}", e.kind)));
    }
    if let Some(d) = &t.dropped {
        bad.push((
            d.line,
            format!(
                "last line cut ({} bytes, no newline), dropped: {}",
                d.bytes, d.reason
            ),
        ));
    }
    let transport = match t.header.transport {
        mcptape_transcript::Transport::Stdio => "stdio",
        mcptape_transcript::Transport::Http => "http",
    };
    let source = format!(
        "source: mcptape transcript (format {}, transport {transport}, {} records, {} message records); \
         line numbers are transcript lines, byte offsets in message errors count from the start of the record's msg\n",
        t.header.mcptape_transcript,
        t.records.len(),
        inputs.len()
    );
    inspect_messages(source, "message records", inputs, bad, lenient)
}

/// Inspects the messages of `inputs`; `bad` are lines already found bad
/// (line number, reason), reported in line order with the others; `unit`
/// names what the summary counts (`lines` or `records`).
fn inspect_messages(
    source: String,
    unit: &str,
    inputs: Vec<Input<'_>>,
    bad: Vec<(usize, String)>,
    lenient: bool,
) -> Report {
    let mut o = source;
    let mut t = Totals::default();
    let mut bad = bad;
    bad.sort_by_key(|(line, _)| *line);
    let mut bad = bad.into_iter().peekable();
    let units = inputs.len();
    let lines: Vec<Line<'_>> = inputs
        .into_iter()
        .map(|i| Line {
            number: i.number,
            bytes: i.bytes,
            dir: i.dir,
            frame: jsonrpc::parse(i.bytes),
        })
        .collect();

    // resources/read requests by id: (line, requested uri)
    let mut requests: HashMap<RequestId, (usize, Option<String>)> = HashMap::new();
    for l in lines.iter().filter(|l| l.dir != Some(Direction::S2c)) {
        for m in messages(&l.frame) {
            if let Message::Request(r) = m
                && r.method == "resources/read"
            {
                let uri = r
                    .params
                    .as_ref()
                    .and_then(|p| p.get("uri"))
                    .and_then(|u| u.as_str())
                    .map(str::to_owned);
                requests.insert(r.id.clone(), (l.number, uri));
            }
        }
    }
    let paired = !requests.is_empty();
    let _ = writeln!(
        o,
        "pairing: {}",
        if paired {
            "responses to resources/read requests by id"
        } else {
            "none (no resources/read requests): every result with `contents` is a read result"
        }
    );
    let mut answered: Vec<RequestId> = Vec::new();

    for l in &lines {
        while let Some((n, why)) = bad.next_if(|(n, _)| *n < l.number) {
            t.bad_lines += 1;
            let _ = writeln!(o, "line {n}: {why}");
        }
        let frame = match &l.frame {
            Ok(f) => f,
            Err(e) => {
                t.bad_lines += 1;
                let _ = writeln!(o, "line {}: bad JSON-RPC message: {e}", l.number);
                continue;
            }
        };
        if let Frame::Batch(items) = frame {
            for e in items.iter().filter_map(|r| r.as_ref().err()) {
                t.bad_lines += 1;
                let _ = writeln!(o, "line {}: bad batch element: {e}", l.number);
            }
        }
        let single = matches!(frame, Frame::Single(_));
        let answers = l.dir != Some(Direction::C2s);
        for m in messages(&l.frame) {
            t.messages += 1;
            if !answers {
                continue;
            }
            match m {
                Message::Response(r) => {
                    let requested = requests.get(&r.id);
                    let is_read = if paired {
                        requested.is_some()
                    } else {
                        r.result.get("contents").is_some()
                    };
                    if !is_read {
                        continue;
                    }
                    answered.push(r.id.clone());
                    let requested_uri = requested.and_then(|(_, u)| u.as_deref());
                    let parsed = parse_result(l.bytes, r, single, lenient);
                    report_result(&mut o, &mut t, l.number, r, requested_uri, parsed);
                }
                Message::Error(e) => {
                    let requested = e.id.as_ref().and_then(|id| requests.get(id));
                    if paired && requested.is_none() {
                        continue;
                    }
                    if let Some(id) = &e.id {
                        answered.push(id.clone());
                    }
                    report_error(
                        &mut o,
                        &mut t,
                        l.number,
                        e,
                        requested.and_then(|r| r.1.as_deref()),
                    );
                }
                _ => {}
            }
        }
    }

    let mut unanswered: Vec<(&RequestId, &(usize, Option<String>))> = requests
        .iter()
        .filter(|(id, _)| !answered.contains(id))
        .collect();
    unanswered.sort_by_key(|(_, (line, _))| *line);
    for (id, (line, uri)) in unanswered {
        let _ = writeln!(
            o,
            "line {line}: resources/read id {id} ({}) has no response in this file",
            uri.as_deref().unwrap_or("(no uri)")
        );
    }
    for (line, why) in bad {
        t.bad_lines += 1;
        let _ = writeln!(o, "line {line}: {why}");
    }
    let read_answers = t.results + t.errors + t.bad_results;
    if t.messages == 0 {
        let _ = writeln!(o, "no messages: nothing to inspect");
    } else if read_answers == 0 {
        let _ = writeln!(
            o,
            "no resources/read result in this file ({} messages)",
            t.messages
        );
    }
    let _ = writeln!(
        o,
        "summary: {units} {unit}, {} messages, {} read results ({} entries), {} error responses, {} bad lines, {} bad results, {} media mismatches",
        t.messages, t.results, t.entries, t.errors, t.bad_lines, t.bad_results, t.mismatches
    );
    Report {
        text: o,
        clean: t.bad_lines == 0 && t.bad_results == 0,
        messages: t.messages,
        results: read_answers,
    }
}

fn messages<E>(frame: &Result<Frame, E>) -> Vec<&Message> {
    match frame {
        Ok(Frame::Single(m)) => vec![m],
        Ok(Frame::Batch(items)) => items.iter().filter_map(|r| r.as_ref().ok()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Parses the result strictly (offsets into the line for a single message;
/// into the re-serialized result for a batch element) or leniently.
fn parse_result(
    line: &[u8],
    r: &Response,
    single: bool,
    lenient: bool,
) -> Result<(ReadResourceResult, Vec<Leniency>), ContentsError> {
    if single && !lenient {
        return resources::parse_read_response(line).map(|x| (x, Vec::new()));
    }
    let bytes = serde_json::to_vec(&r.result).unwrap_or_default();
    if lenient {
        resources::parse_read_result_lenient(&bytes)
    } else {
        resources::parse_read_result(&bytes).map(|x| (x, Vec::new()))
    }
}

fn report_result(
    o: &mut String,
    t: &mut Totals,
    line: usize,
    r: &Response,
    requested: Option<&str>,
    parsed: Result<(ReadResourceResult, Vec<Leniency>), ContentsError>,
) {
    let req = requested.map_or(String::new(), |u| format!(" (requested {u})"));
    let (result, leniencies) = match parsed {
        Ok(x) => x,
        Err(e) => {
            t.bad_results += 1;
            let _ = writeln!(
                o,
                "line {line}: id {}{req}: invalid resources/read result: {e}",
                r.id
            );
            return;
        }
    };
    t.results += 1;
    t.entries += result.contents.len();
    let mut head = format!(
        "line {line}: id {}{req}: resources/read result, {} entr{}, resultType {}",
        r.id,
        result.contents.len(),
        if result.contents.len() == 1 {
            "y"
        } else {
            "ies"
        },
        result.result_type.as_str(),
    );
    if result.legacy_result_type {
        head.push_str(" (absent: legacy peer, assumed complete)");
    }
    if let Some(ttl) = result.ttl_ms {
        let _ = write!(head, ", ttlMs {ttl}");
        if let Some(neg) = result.ttl_ms_negative {
            let _ = write!(head, " (sent {neg}, treated as 0)");
        }
    }
    if let Some(c) = result.cache_scope {
        let _ = write!(head, ", cacheScope {}", c.as_str());
    }
    let _ = writeln!(o, "{head}");
    if result.is_empty() {
        let _ = writeln!(
            o,
            "  empty: contents [] (the resource answered with zero entries; not a not-found)"
        );
    }
    for l in &leniencies {
        let _ = writeln!(
            o,
            "  lenient: contents[{}] ({}): accepted {}",
            l.index, l.uri, l.kind
        );
    }
    for (i, c) in result.contents.iter().enumerate() {
        let _ = writeln!(o, "  [{i}] uri       {}", c.uri());
        if let Some(req) = requested
            && req != c.uri()
        {
            let _ = writeln!(
                o,
                "      note      entry uri differs from the requested uri"
            );
        }
        let _ = writeln!(o, "      mimeType  {}", c.mime_type().unwrap_or("(none)"));
        let _ = writeln!(o, "      shape     {}", c.shape().as_str());
        let _ = writeln!(o, "      decoded   {} bytes", c.decoded_len());
        match c {
            ResourceContents::Blob(b) => {
                let n = b.bytes.len() as u64;
                let _ = writeln!(
                    o,
                    "      encoded   {} chars base64, padding {}",
                    b64::encoded_len(n),
                    b64::padding_len(n)
                );
                let v = media::verdict(b.mime_type.as_deref(), &b.bytes);
                if v.status == MediaMatch::Mismatch {
                    t.mismatches += 1;
                }
                let _ = writeln!(
                    o,
                    "      sniffed   {} vs declared {}: {}{}",
                    v.sniffed.unwrap_or("(unknown)"),
                    v.declared.as_deref().unwrap_or("(none)"),
                    v.status.as_str(),
                    if v.defaulted {
                        format!("; bytes kept as bytes, {} (defaulted)", v.effective)
                    } else {
                        String::new()
                    }
                );
            }
            ResourceContents::Text(tx) => {
                if media::text_is_data_uri(&tx.text) {
                    let _ = writeln!(
                        o,
                        "      warning   text holds a data:...;base64, URI (binary belongs in blob)"
                    );
                }
            }
        }
    }
}

fn report_error(
    o: &mut String,
    t: &mut Totals,
    line: usize,
    e: &ErrorResponse,
    requested: Option<&str>,
) {
    t.errors += 1;
    let id =
        e.id.as_ref()
            .map_or("(none)".to_owned(), ToString::to_string);
    let req = requested.map_or(String::new(), |u| format!(" (requested {u})"));
    let class = classify_read_error(&e.error);
    let _ = writeln!(
        o,
        "line {line}: id {id}{req}: error {} {:?} -> {class}: {}",
        e.error.code,
        e.error.message,
        class.host_action()
    );
}
