//! `mcptape inspect FILE`: print every `resources/read` result entry of a file
//! of newline-delimited JSON-RPC messages (a captured stdio stream).
//!
//! Pairing: when the file holds `resources/read` requests, responses are
//! matched to them by id (exactly: `1` and `"1"` differ); otherwise every
//! response whose `result` has `contents` is taken as a read result. Per
//! entry it prints uri, mimeType (declared or `(none)`), shape (text/blob),
//! decoded size in bytes, for blobs the base64 length and padding count, and
//! the sniffed media type against the declared one (mismatch flagged). Error
//! responses are classified ([`mcptape_wire::classify`]). Bad lines are
//! reported with their line number and byte offset; nothing here panics on
//! untrusted input. Exit status: 0 when every line and result parsed, 1 when
//! any did not.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_wire::b64;
use mcptape_wire::classify::{ReadErrorClass, classify_read_error};
use mcptape_wire::error::WireError;
use mcptape_wire::jsonrpc::{self, ErrorResponse, Frame, Message, RequestId, Response};
use mcptape_wire::media::{self, MediaMatch};
use mcptape_wire::resources::{
    self, ContentsError, Leniency, ReadResourceResult, ResourceContents,
};

/// Arguments of `mcptape inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// File of newline-delimited JSON-RPC messages (one message or batch per line).
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
    Ok(if out.clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Report text and whether everything parsed.
struct Report {
    text: String,
    clean: bool,
}

struct Line<'a> {
    number: usize,
    bytes: &'a [u8],
    frame: Result<Frame, WireError>,
}

fn inspect(data: &[u8], lenient: bool) -> Report {
    let mut o = String::new();
    let mut t = Totals::default();
    let lines: Vec<Line<'_>> = data
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
        .map(|(i, bytes)| Line {
            number: i + 1,
            bytes,
            frame: jsonrpc::parse(bytes),
        })
        .collect();

    // resources/read requests by id: (line, requested uri)
    let mut requests: HashMap<RequestId, (usize, Option<String>)> = HashMap::new();
    for l in &lines {
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
        for m in messages(&l.frame) {
            t.messages += 1;
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
    let _ = writeln!(
        o,
        "summary: {} lines, {} messages, {} read results ({} entries), {} error responses, {} bad lines, {} bad results, {} media mismatches",
        lines.len(),
        t.messages,
        t.results,
        t.entries,
        t.errors,
        t.bad_lines,
        t.bad_results,
        t.mismatches
    );
    Report {
        text: o,
        clean: t.bad_lines == 0 && t.bad_results == 0,
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
            "  lenient: contents[{}] ({}): accepted {:?}",
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
    let what = match &class {
        ReadErrorClass::NotFound { uri, legacy } => format!(
            "NotFound uri={uri}{}",
            if *legacy { " (legacy -32002)" } else { "" }
        ),
        ReadErrorClass::InvalidParams => "InvalidParams".to_owned(),
        ReadErrorClass::Internal => "Internal".to_owned(),
        ReadErrorClass::MethodNotFound => "MethodNotFound".to_owned(),
        ReadErrorClass::Other { code } => format!("Other code={code}"),
        _ => format!("{class:?}"),
    };
    let _ = writeln!(
        o,
        "line {line}: id {id}{req}: error {} {:?} -> {what}: {}",
        e.error.code,
        e.error.message,
        class.host_action()
    );
}
