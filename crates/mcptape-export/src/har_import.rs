//! HAR 1.1/1.2 import: a browser's, a proxy's or `mcptape export har`'s log of
//! an MCP Streamable HTTP session → an mcptape transcript that `check`,
//! `serve` and `bench` read.
//!
//! Which entries are MCP: the URL (without fragment) of the first `POST`
//! whose body is JSON-RPC 2.0 (a JSON object with `"jsonrpc":"2.0"` or a
//! non-empty array of them; JSON-RPC 2.0 §4, §6) is the MCP endpoint; an
//! entry to that URL is MCP when it is such a `POST`, a `GET` (the 2025-era
//! server stream) or a `DELETE` (end of session). Every other entry (the page,
//! scripts, `OPTIONS` preflights, other URLs) is skipped and listed in
//! [`Imported::skipped`].
//!
//! Per MCP entry, `exchange` = its ordinal among MCP entries (or
//! `_mcptape.exchange`):
//!
//! * request → a `c2s` message record with the body byte-exact and
//!   [`HttpMeta`] (method, headers redacted as the recorder would), or an
//!   `http` `noBody` record (`GET`, `DELETE`);
//! * response → `s2c` records, the first with `status` and headers: a
//!   `text/event-stream` content gives one record per SSE event (a message,
//!   or `emptyEvent` for empty data, `sseEventId` from `id:`), then
//!   `serverClosedStream`; a JSON body one message record; no body a `noBody`
//!   record; status 0 (no response) an `upstreamFailed` record with the
//!   entry's `comment`;
//! * a body that is not exactly one JSON value (whitespace around it, not
//!   JSON-RPC) becomes a `noise` record, as the recorder does;
//! * times (µs from the log's earliest MCP `startedDateTime`, or
//!   `log._mcptape.startedAt`): the request at `startedDateTime`, the first
//!   response record after `blocked + dns + connect + send + wait`, the last
//!   at the end of `receive`, events in between evenly; the exact µs times
//!   of `entries[]._mcptape` when present (`mcptape export har`);
//! * a `protocol` record after the handshake answer (`initialize` result's
//!   `protocolVersion`; `server/discover`: the request's
//!   `io.modelcontextprotocol/protocolVersion` when the result lists it in
//!   `supportedVersions`). Sources: MCP 2025-11-25 and 2026-07-28, Basic ›
//!   Transports › Streamable HTTP; Lifecycle.

use std::path::Path;

use base64::Engine as _;
use mcptape_transcript::redact::Redactor;
use mcptape_transcript::writer::TranscriptWriter;
use mcptape_transcript::{
    Direction, Event, Header, HttpMeta, HttpNote, Record, ServerSpec, Transport,
};
use mcptape_transport::sse::{SseParser, is_json_rpc};
use mcptape_wire::protocol::{self, method};
use serde_json::Value;

use crate::error::{ExportError, ExportErrorKind};
use crate::har::{EVENT_STREAM, Entry, Har, NameValue, rfc3339_from_us};
use crate::k6::import::rfc3339_us;

/// Most entries a HAR may hold: 100 000 (a browser session of an hour is a
/// few thousand).
pub const MAX_ENTRIES: usize = 100_000;

/// Why an entry was not imported.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// An `OPTIONS` request (a CORS preflight).
    Preflight,
    /// A JSON-RPC `POST` to a URL other than the MCP endpoint's.
    OtherUrl,
    /// Not an MCP request (a page, a script, a `POST` without a JSON-RPC body).
    NotMcp,
}

/// An entry that was not imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// 0-based index in `log.entries`.
    pub entry: usize,
    /// Its method.
    pub method: String,
    /// Its URL.
    pub url: String,
    /// Why.
    pub reason: SkipReason,
}

/// Options of [`import`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Redact header values and URL credentials as `mcptape record` does
    /// (default `true`); `false` keeps them (unless the HAR's
    /// `log._mcptape.redaction` says it was already redacted, values are the
    /// browser's own: cookies, `Authorization`).
    pub redact: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { redact: true }
    }
}

/// The result of [`import`].
#[derive(Debug, Clone)]
pub struct Imported {
    /// The transcript header (transport `http`, the MCP URL).
    pub header: Header,
    /// The records, in time order.
    pub records: Vec<Record>,
    /// Entries in the log.
    pub entries: usize,
    /// MCP entries imported.
    pub imported: usize,
    /// Entries skipped, with why.
    pub skipped: Vec<Skipped>,
    /// Things imported with less than the HAR could have said (an entry's
    /// content not saved by the browser), one line each with the entry index.
    pub warnings: Vec<String>,
}

impl Imported {
    /// The transcript file bytes (JSON Lines, header first).
    ///
    /// # Errors
    /// [`ExportErrorKind::Io`] if writing into memory fails (serialization).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ExportError> {
        let io = |e: std::io::Error| ExportError::new(ExportErrorKind::Io(e.to_string()));
        let mut w = TranscriptWriter::new(Vec::new(), &self.header).map_err(io)?;
        for r in &self.records {
            w.write(r).map_err(io)?;
        }
        Ok(w.into_inner())
    }
}

/// The URL without its fragment.
fn endpoint(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

fn pairs(h: &[NameValue]) -> Vec<(String, String)> {
    h.iter()
        .filter(|nv| !nv.name.starts_with(':')) // HTTP/2 pseudo-headers
        .map(|nv| (nv.name.clone(), nv.value.clone()))
        .collect()
}

fn request_body(e: &Entry) -> Option<&str> {
    e.request
        .post_data
        .as_ref()
        .and_then(|p| p.text.as_deref())
        .filter(|t| !t.is_empty())
}

fn is_rpc_post(e: &Entry) -> bool {
    e.request.method.eq_ignore_ascii_case("POST") && request_body(e).is_some_and(is_json_rpc)
}

/// Largest HAR timing read, ms (exclusive): about 31 years, far past any
/// recording; a larger (or negative other than −1, or non-finite) timing is
/// [`ExportErrorKind::HarBadTime`].
pub const MAX_TIMING_MS: f64 = 1e12;

/// A timing (ms) as µs: −1 (and absent) is 0.
fn timing_us(entry: usize, what: &'static str, v: Option<f64>) -> Result<u64, ExportError> {
    match v {
        None | Some(-1.0) => Ok(0),
        Some(x) if x.is_finite() && (0.0..MAX_TIMING_MS).contains(&x) => {
            Ok((x * 1000.0).round() as u64)
        }
        Some(x) => Err(ExportError::new(ExportErrorKind::HarBadTime {
            entry,
            what,
            value: x.to_string(),
        })),
    }
}

/// WHATWG Encoding's windows-1252 ("latin1", "iso-8859-1" labels) code
/// points of bytes 0x80..=0x9F; the other bytes are their own code point.
const WINDOWS_1252_80_9F: [char; 32] = [
    '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}', '\u{8F}',
    '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}', '\u{178}',
];

/// The byte a windows-1252 decoder turned into `c`, if any.
fn windows_1252_byte(c: char) -> Option<u8> {
    if let Some(i) = WINDOWS_1252_80_9F.iter().position(|&w| w == c) {
        return Some(0x80 + i as u8);
    }
    let b = u8::try_from(u32::from(c)).ok()?;
    (!(0x80..=0x9F).contains(&b)).then_some(b)
}

/// `text` re-read as UTF-8 when a HAR writer decoded UTF-8 body bytes as
/// windows-1252 (WHATWG Encoding's `latin1`; Chromium through Playwright does
/// for a `Content-Type` without `charset`): every char maps back to one byte,
/// one byte is 0x80 or above, the bytes are as many as the response's
/// `Content-Length`, and they are UTF-8. Then the text is unambiguous (a UTF-8
/// text with a non-ASCII char has more bytes than chars); otherwise `None`,
/// the text is kept as the HAR has it.
fn undo_windows_1252(text: &str, content_length: Option<usize>) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    for c in text.chars() {
        bytes.push(windows_1252_byte(c)?);
    }
    if bytes.is_ascii() || content_length != Some(bytes.len()) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The response body text, decoded; `None` when the HAR did not keep it.
fn content_text(i: usize, e: &Entry) -> Result<Option<String>, ExportError> {
    let c = &e.response.content;
    let Some(text) = &c.text else {
        return Ok(None);
    };
    match c.encoding.as_deref() {
        None | Some("") => Ok(Some(text.clone())),
        Some(enc) if enc.eq_ignore_ascii_case("base64") => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|err| {
                    ExportError::new(ExportErrorKind::HarBadContent {
                        entry: i,
                        reason: format!("base64: {err}"),
                    })
                })?;
            String::from_utf8(bytes).map(Some).map_err(|err| {
                ExportError::new(ExportErrorKind::HarBadContent {
                    entry: i,
                    reason: format!("not UTF-8 at byte {}", err.utf8_error().valid_up_to()),
                })
            })
        }
        Some(other) => Err(ExportError::new(ExportErrorKind::HarBadContent {
            entry: i,
            reason: format!("encoding {other:?} (only base64 is defined)"),
        })),
    }
}

/// One `s2c` item of a response, before times are given.
enum Item {
    Msg(String, Option<String>),
    Empty(Option<String>),
    Noise(String),
}

/// A record with its sort key: (µs, entry order, order within the entry).
type Keyed = (u64, usize, usize, Record);

/// Imports a HAR document (see the module doc).
///
/// # Errors
/// [`ExportErrorKind::NotHar`], [`ExportErrorKind::HarVersion`],
/// [`ExportErrorKind::HarTooManyEntries`] (more than [`MAX_ENTRIES`]),
/// [`ExportErrorKind::HarBadTime`], [`ExportErrorKind::HarBadContent`],
/// [`ExportErrorKind::HarBadSse`] (each with the entry index),
/// [`ExportErrorKind::HarNoMcp`].
pub fn import(bytes: &[u8], opts: &ImportOptions) -> Result<Imported, ExportError> {
    let har: Har = serde_json::from_slice(bytes)
        .map_err(|e| ExportError::new(ExportErrorKind::NotHar(e.to_string())))?;
    import_har(&har, opts)
}

/// [`import`] of a parsed log.
///
/// # Errors
/// As [`import`], except [`ExportErrorKind::NotHar`].
pub fn import_har(har: &Har, opts: &ImportOptions) -> Result<Imported, ExportError> {
    let log = &har.log;
    if !matches!(log.version.as_str(), "1.1" | "1.2") {
        return Err(ExportError::new(ExportErrorKind::HarVersion(
            log.version.clone(),
        )));
    }
    let n = log.entries.len();
    if n > MAX_ENTRIES {
        return Err(ExportError::new(ExportErrorKind::HarTooManyEntries {
            count: n,
            max: MAX_ENTRIES,
        }));
    }
    let Some(mcp_url) = log
        .entries
        .iter()
        .find(|e| is_rpc_post(e))
        .map(|e| endpoint(&e.request.url).to_owned())
    else {
        return Err(ExportError::new(ExportErrorKind::HarNoMcp { entries: n }));
    };
    let redactor = match &log.mcptape {
        Some(x) if x.redaction.as_ref().is_some_and(|r| !r.enabled) => Redactor::disabled(),
        _ if !opts.redact => Redactor::disabled(),
        _ => Redactor::new(),
    };

    let mut skipped = Vec::new();
    let mut mcp = Vec::new();
    for (i, e) in log.entries.iter().enumerate() {
        let m = e.request.method.to_ascii_uppercase();
        let same = endpoint(&e.request.url) == mcp_url;
        let reason = if m == "OPTIONS" {
            Some(SkipReason::Preflight)
        } else if is_rpc_post(e) {
            (!same).then_some(SkipReason::OtherUrl)
        } else if same && (m == "GET" || m == "DELETE") {
            None
        } else {
            Some(SkipReason::NotMcp)
        };
        match reason {
            Some(reason) => skipped.push(Skipped {
                entry: i,
                method: e.request.method.clone(),
                url: e.request.url.clone(),
                reason,
            }),
            None => mcp.push(i),
        }
    }

    // Entry start times, µs since the epoch.
    let mut starts = Vec::with_capacity(mcp.len());
    for &i in &mcp {
        let s = &log.entries[i].started_date_time;
        let us = rfc3339_us(s).map_err(|_| {
            ExportError::new(ExportErrorKind::HarBadTime {
                entry: i,
                what: "startedDateTime",
                value: s.clone(),
            })
        })?;
        starts.push(us);
    }
    let (origin, started_at) = match &log.mcptape {
        Some(x) => {
            let o = rfc3339_us(&x.started_at).map_err(|_| {
                ExportError::new(ExportErrorKind::HarBadTime {
                    entry: 0,
                    what: "log._mcptape.startedAt",
                    value: x.started_at.clone(),
                })
            })?;
            (o, x.started_at.clone())
        }
        None => {
            let o = starts.iter().copied().min().unwrap_or(0);
            (o, rfc3339_from_us(o)?.replacen(".000000Z", "Z", 1))
        }
    };

    let mut keyed: Vec<Keyed> = Vec::new();
    let mut warnings = Vec::new();
    for (ord, (&i, &start)) in mcp.iter().zip(&starts).enumerate() {
        let e = &log.entries[i];
        let rel = u64::try_from(start - origin).map_err(|_| {
            ExportError::new(ExportErrorKind::HarBadTime {
                entry: i,
                what: "startedDateTime (before log._mcptape.startedAt)",
                value: e.started_date_time.clone(),
            })
        })?;
        entry_records(i, ord, rel, e, &redactor, &mut keyed, &mut warnings)?;
    }
    keyed.sort_by_key(|k| (k.0, k.1, k.2));
    let records = with_protocol_records(keyed.into_iter().map(|k| k.3).collect());

    let mut header = Header::new(
        Transport::Http,
        ServerSpec {
            command: None,
            url: Some(redactor.url(&mcp_url).into_owned()),
        },
        started_at,
    );
    header.protocol_version = log
        .mcptape
        .as_ref()
        .and_then(|x| x.protocol_version.clone());
    header.redaction = match &log.mcptape {
        Some(x) if x.redaction.is_some() => x.redaction.clone(),
        _ => Some(redactor.summary()),
    };
    Ok(Imported {
        header,
        records,
        entries: n,
        imported: mcp.len(),
        skipped,
        warnings,
    })
}

/// The records of MCP entry `i` (ordinal `ord`), starting `rel` µs after the origin.
fn entry_records(
    i: usize,
    ord: usize,
    rel: u64,
    e: &Entry,
    redactor: &Redactor,
    out: &mut Vec<Keyed>,
    warnings: &mut Vec<String>,
) -> Result<(), ExportError> {
    let extra = e.mcptape.as_ref();
    let exchange = extra.map_or(ord as u64, |x| x.exchange);
    let method = e.request.method.to_ascii_uppercase();
    let mut seq = 0usize;
    let mut push = |t: u64, r: Record, out: &mut Vec<Keyed>| {
        out.push((t, i, seq, r));
        seq += 1;
    };

    // Request.
    let req_t = extra.map_or(rel, |x| x.request_us);
    let mut req_headers = pairs(&e.request.headers);
    redactor.headers(&mut req_headers);
    let req_meta = HttpMeta {
        exchange,
        method: Some(method.clone()),
        headers: req_headers,
        ..HttpMeta::default()
    };
    match request_body(e) {
        Some(body) => match Record::http_message(req_t, Direction::C2s, body, req_meta.clone()) {
            Ok(r) => push(req_t, r, out),
            Err(_) => push(
                req_t,
                Record::noise(req_t, Direction::C2s, body.as_bytes()),
                out,
            ),
        },
        None => {
            let note = extra
                .and_then(|x| x.request_note)
                .unwrap_or(HttpNote::NoBody);
            let detail = extra.and_then(|x| x.request_detail.clone());
            push(
                req_t,
                Record::http(req_t, Direction::C2s, req_meta, note, detail),
                out,
            );
        }
    }

    // Response items.
    let status = e.response.status;
    let mut text = content_text(i, e)?;
    let content_length = e
        .response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| h.value.trim().parse::<usize>().ok());
    if let Some(fixed) = text
        .as_deref()
        .and_then(|t| undo_windows_1252(t, content_length))
    {
        warnings.push(format!(
            "entry {i}: the HAR writer decoded the {} response bytes as windows-1252/Latin-1 (no charset): re-read as UTF-8 (JSON and event streams are UTF-8: RFC 8259 §8.1, WHATWG HTML §9.2)",
            fixed.len()
        ));
        text = Some(fixed);
    }
    let ct = e
        .response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| h.value.as_str())
        .unwrap_or(&e.response.content.mime_type)
        .trim_start()
        .to_ascii_lowercase();
    let sse = ct.starts_with(EVENT_STREAM)
        || e.response
            .content
            .mime_type
            .to_ascii_lowercase()
            .starts_with(EVENT_STREAM);
    if text.is_none() && e.response.content.size > 0 {
        warnings.push(format!(
            "entry {i}: the HAR has no text for its {} response bytes ({method} {}): imported without them",
            e.response.content.size, e.request.url
        ));
    }
    let mut items = Vec::new();
    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
        if sse {
            let mut p = SseParser::new(mcptape_transport::sse::MAX_EVENT_BYTES);
            let mut evs = Vec::new();
            p.push(text.as_bytes(), &mut evs).map_err(|err| {
                ExportError::new(ExportErrorKind::HarBadSse {
                    entry: i,
                    reason: err.to_string(),
                })
            })?;
            if p.finish() {
                warnings.push(format!(
                    "entry {i}: the event stream ends inside an event: that event was dropped"
                ));
            }
            for ev in evs {
                items.push(if ev.data.is_empty() {
                    Item::Empty(ev.id)
                } else if is_json_rpc(&ev.data) {
                    Item::Msg(ev.data, ev.id)
                } else {
                    Item::Noise(ev.data)
                });
            }
        } else if is_json_rpc(text) {
            items.push(Item::Msg(text.to_owned(), None));
        } else {
            items.push(Item::Noise(text.to_owned()));
        }
    }

    // Response times.
    let t = &e.timings;
    let pre = timing_us(i, "timings.blocked", t.blocked)?
        + timing_us(i, "timings.dns", t.dns)?
        + timing_us(i, "timings.connect", t.connect)?
        + timing_us(i, "timings.send", Some(t.send))?;
    let first = rel + pre + timing_us(i, "timings.wait", Some(t.wait))?;
    let last = first + timing_us(i, "timings.receive", Some(t.receive))?;
    let n_items = items.len();
    let exact = extra.filter(|x| x.events_us.len() == n_items);
    let item_t = |k: usize| -> u64 {
        if let Some(x) = exact {
            return x.events_us[k];
        }
        if n_items < 2 {
            first
        } else {
            first + (last - first) * k as u64 / (n_items as u64 - 1)
        }
    };
    let mut resp_headers = pairs(&e.response.headers);
    redactor.headers(&mut resp_headers);
    let mut first_meta = Some(HttpMeta {
        exchange,
        method: Some(method.clone()),
        status: (status != 0).then_some(status),
        headers: resp_headers,
        ..HttpMeta::default()
    });
    let plain = HttpMeta {
        exchange,
        method: Some(method.clone()),
        ..HttpMeta::default()
    };
    let mut meta = || first_meta.take().unwrap_or_else(|| plain.clone());

    let end_note = extra.and_then(|x| x.end);
    for (k, item) in items.into_iter().enumerate() {
        let tk = item_t(k);
        let r = match item {
            Item::Msg(data, id) => {
                let mut m = meta();
                m.sse_event_id = id;
                match Record::http_message(tk, Direction::S2c, &data, m) {
                    Ok(r) => r,
                    Err(_) => Record::noise(tk, Direction::S2c, data.as_bytes()),
                }
            }
            Item::Empty(id) => {
                let mut m = meta();
                m.sse_event_id = id;
                Record::http(tk, Direction::S2c, m, HttpNote::EmptyEvent, None)
            }
            Item::Noise(data) => Record::noise(tk, Direction::S2c, data.as_bytes()),
        };
        push(tk, r, out);
    }
    let end_t = extra.and_then(|x| x.end_us).unwrap_or(last);
    if status == 0 {
        let note = end_note.unwrap_or(HttpNote::UpstreamFailed);
        push(
            end_t,
            Record::http(end_t, Direction::S2c, meta(), note, e.comment.clone()),
            out,
        );
    } else if let Some(note) = end_note {
        let detail = e.comment.clone();
        push(
            end_t,
            Record::http(end_t, Direction::S2c, meta(), note, detail),
            out,
        );
    } else if sse && extra.is_none() {
        push(
            end_t,
            Record::http(
                end_t,
                Direction::S2c,
                meta(),
                HttpNote::ServerClosedStream,
                None,
            ),
            out,
        );
    } else if n_items == 0 {
        push(
            first,
            Record::http(first, Direction::S2c, meta(), HttpNote::NoBody, None),
            out,
        );
    }
    Ok(())
}

/// `records` with a `protocol` record after each handshake answer that
/// reveals a revision not yet announced (see the module doc).
fn with_protocol_records(records: Vec<Record>) -> Vec<Record> {
    let mut pending: std::collections::HashMap<String, (String, Option<String>)> =
        Default::default();
    let mut current: Option<String> = None;
    let mut out = Vec::with_capacity(records.len() + 1);
    for r in records {
        let mut announce = None;
        if let Event::Message { dir, msg, .. } = &r.event
            && let Ok(v) = serde_json::from_str::<Value>(msg.get())
        {
            let id = v.get("id").map(Value::to_string);
            match (dir, id) {
                (Direction::C2s, Some(id)) => {
                    if let Some(m) = v.get("method").and_then(Value::as_str) {
                        let asked =
                            protocol::request_meta_version(v.get("params")).map(str::to_owned);
                        pending.insert(id, (m.to_owned(), asked));
                    }
                }
                (Direction::S2c, Some(id)) => {
                    if let (Some((m, asked)), Some(result)) = (pending.remove(&id), v.get("result"))
                    {
                        announce = match m.as_str() {
                            method::INITIALIZE => protocol::HandshakeResult::of(result)
                                .protocol_version()
                                .map(str::to_owned),
                            method::SERVER_DISCOVER => asked.filter(|a| {
                                protocol::HandshakeResult::of(result)
                                    .supported_versions()
                                    .is_some_and(|vs| vs.iter().any(|x| x.as_str() == a))
                            }),
                            _ => None,
                        };
                    }
                }
                _ => {}
            }
        }
        let t = r.t_us;
        out.push(r);
        if let Some(v) = announce
            && current.as_deref() != Some(v.as_str())
        {
            out.push(Record::protocol(t, v.clone()));
            current = Some(v);
        }
    }
    out
}

/// Reads the HAR at `path` (a FIFO, socket or device is refused at once) and imports it.
///
/// # Errors
/// [`ExportErrorKind::NotRegularFile`], [`ExportErrorKind::Io`], then [`import`]'s, with the file.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Imported, ExportError> {
    let name = path.display().to_string();
    // Counted first as a stream (a read buffer of memory): a HAR over the
    // entry limit is refused before it is read into memory.
    let file = crate::open_input(path, &name)?;
    let counted = count_entries(std::io::BufReader::with_capacity(COUNT_READ_BYTES, file))
        .map_err(|e| ExportError::at(ExportErrorKind::Io(e.to_string()), &name, 0))?;
    if let Some(count) = counted.filter(|&n| n > MAX_ENTRIES) {
        return Err(ExportError::new(ExportErrorKind::HarTooManyEntries {
            count,
            max: MAX_ENTRIES,
        })
        .in_file(&name));
    }
    let bytes = crate::read_input(path, &name)?;
    import(&bytes, opts).map_err(|e| e.in_file(&name))
}

/// Read buffer of [`count_entries`] in [`import_file`] (256 KiB).
const COUNT_READ_BYTES: usize = 256 << 10;

/// The number of elements of `log.entries` in the HAR read from `r`, read
/// as a stream of bytes (strings skipped whole, nothing built; memory: the
/// reader's buffer): how [`import_file`] refuses a HAR over [`MAX_ENTRIES`]
/// before reading it. `None` when the bytes hold no `log.entries` array
/// found this way (not a JSON object, a key written with escapes, ...):
/// the parse then judges the document.
///
/// # Errors
/// The reader's.
pub fn count_entries(mut r: impl std::io::BufRead) -> std::io::Result<Option<usize>> {
    // Containers open (depth) and the kind of the first four (`true`: an
    // object); `expect_key`: the next string of the object at `depth` is a key.
    let mut depth = 0usize;
    let mut objects = [false; 4];
    let mut expect_key = false;
    // The last key read at depth 1 and 2 (at most 8 bytes kept).
    let mut key = [Vec::<u8>::new(), Vec::new()];
    let (mut in_log, mut in_entries, mut found) = (false, false, false);
    let mut count = 0usize;
    // Inside a string: (escape pending, it is a key at depth 1 or 2).
    let mut string: Option<(bool, Option<usize>)> = None;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        let mut i = 0;
        while i < n {
            if let Some((escaped, key_at)) = &mut string {
                if *escaped {
                    *escaped = false;
                    if let Some(d) = key_at {
                        key[*d].push(b'\\');
                    }
                    i += 1;
                    continue;
                }
                let k = memchr::memchr2(b'"', b'\\', &buf[i..]).unwrap_or(n - i);
                if let Some(d) = key_at {
                    // Enough of a key to tell `log` and `entries` from longer ones.
                    key[*d].extend_from_slice(&buf[i..i + k.min(9)]);
                    key[*d].truncate(9);
                }
                if i + k == n {
                    i = n;
                    continue;
                }
                if buf[i + k] == b'\\' {
                    *escaped = true;
                } else {
                    string = None;
                }
                i += k + 1;
                continue;
            }
            let b = buf[i];
            i += 1;
            match b {
                b'"' => {
                    let key_at = (expect_key && (depth == 1 || depth == 2)).then(|| depth - 1);
                    if let Some(d) = key_at {
                        key[d].clear();
                    }
                    expect_key = false;
                    string = Some((false, key_at));
                }
                b'{' | b'[' => {
                    let object = b == b'{';
                    if depth == 1 && object && key[0] == b"log" {
                        in_log = true;
                    }
                    if depth == 2 && in_log && !object && key[1] == b"entries" {
                        in_entries = true;
                        found = true;
                    }
                    if depth == 3 && in_entries {
                        count += 1;
                    }
                    if let Some(o) = objects.get_mut(depth) {
                        *o = object;
                    }
                    depth += 1;
                    expect_key = object;
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    match depth {
                        2 => in_entries = false,
                        1 => in_log = false,
                        _ => {}
                    }
                    expect_key = false;
                }
                b',' => {
                    expect_key = depth >= 1 && objects.get(depth - 1).copied().unwrap_or(false);
                }
                _ => {}
            }
        }
        r.consume(n);
    }
    Ok(found.then_some(count))
}

#[cfg(test)]
mod count_tests {
    use super::count_entries;

    fn count(text: &str) -> Option<usize> {
        count_entries(std::io::BufReader::with_capacity(3, text.as_bytes())).unwrap()
    }

    /// `log.entries` counted through strings holding brackets, quotes and
    /// commas, other arrays named `entries` and a tiny read buffer; no
    /// `log.entries` is `None`.
    #[test]
    fn entries_are_counted_only_in_log_entries() {
        assert_eq!(
            count(
                r#"{"entries":[{}],"log":{"version":"1.2","x":{"entries":[{},{}]},"entries":[{"a":"}]\",{["},{"b":[{}]},{}],"pages":[]}}"#
            ),
            Some(3)
        );
        assert_eq!(count(r#"{"log":{"entries":[]}}"#), Some(0));
        assert_eq!(count(r#"{"log":{"pages":[{}]}}"#), None);
        assert_eq!(count(r#"[{"log":{"entries":[{}]}}]"#), None);
        assert_eq!(count("not json"), None);
    }
}
