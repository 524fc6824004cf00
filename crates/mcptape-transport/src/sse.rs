//! Server-Sent Events parsing (sans-IO), per the WHATWG HTML Living Standard
//! §9.2 "Server-sent events", "Parsing an event stream" and "Interpreting an
//! event stream":
//!
//! * the stream is UTF-8; one leading U+FEFF BOM is ignored; invalid bytes
//!   decode to U+FFFD;
//! * lines end with `\r\n`, `\n` or a bare `\r` (a `\r\n` split across reads is
//!   one line end);
//! * an empty line dispatches the event; a line starting with `:` is a comment;
//! * `field:value` (one space after the colon removed), or `field` alone with
//!   an empty value; fields `event`, `data` (lines joined with `\n`), `id`
//!   (ignored if it contains U+0000; persists across events), `retry` (only
//!   ASCII digits; sets the reconnection time); other fields are ignored;
//! * an event whose data buffer is empty is not dispatched; the type defaults
//!   to `message`; an unterminated event at the end of the stream is discarded.
//!
//! MCP Streamable HTTP (2025-06-18 … 2026-07-28, Basic › Transports) carries one
//! JSON-RPC message per event's `data`; other payloads (empty priming events,
//! heartbeats) are classified by [`SseEvent::payload`] and are not errors.

use crate::error::{SseError, SseErrorKind};

/// Default limit, in bytes, on each line of the stream and on the data of one
/// event (decoded UTF-8, `\n` joiners included): 64 MiB.
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// Event type: the last `event:` value, or `message` when none was given.
    pub event: String,
    /// The `data:` lines joined with `\n` (no trailing `\n`).
    pub data: String,
    /// The last event ID string at dispatch (set by an `id:` line of this or
    /// an earlier event); `None` if empty.
    pub id: Option<String>,
    /// Reconnection time in ms set by a `retry:` line since the previous
    /// dispatch, if any.
    pub retry: Option<u64>,
}

/// What an event's `data` holds, for MCP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SsePayload<'a> {
    /// A JSON-RPC message (an object with `"jsonrpc"`) or batch (a non-empty
    /// array of such objects): the data, byte-exact.
    JsonRpc(&'a str),
    /// Anything else (empty priming event, heartbeat, non-JSON): reported, not fatal.
    Other(&'a str),
}

impl SseEvent {
    /// Classifies [`SseEvent::data`] as a JSON-RPC message or something else.
    pub fn payload(&self) -> SsePayload<'_> {
        if is_json_rpc(&self.data) {
            SsePayload::JsonRpc(&self.data)
        } else {
            SsePayload::Other(&self.data)
        }
    }
}

/// `true` if `text` is a JSON-RPC 2.0 message or batch; see
/// [`mcptape_wire::envelope::is_json_rpc`] (re-exported here).
pub use mcptape_wire::envelope::is_json_rpc;

/// Incremental SSE parser.
#[derive(Debug, Clone)]
pub struct SseParser {
    max: usize,
    /// Bytes of the current line (without terminator).
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a leading `\n` is part of that line end.
    after_cr: bool,
    /// Still at the stream start: BOM not yet ruled out (bytes held in `line`).
    at_start: bool,
    data: String,
    event_type: String,
    last_event_id: String,
    retry: Option<u64>,
    reconnection_ms: Option<u64>,
    /// Set once a limit was exceeded; the parser then refuses more input.
    failed: Option<SseError>,
    line_no: u64,
    line_start: u64,
    consumed: u64,
    comments: u64,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Default for SseParser {
    fn default() -> Self {
        Self::new(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    /// A parser whose lines and event data may each hold up to
    /// `max_event_bytes` bytes (usually [`MAX_EVENT_BYTES`]).
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max: max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            data: String::new(),
            event_type: String::new(),
            last_event_id: String::new(),
            retry: None,
            reconnection_ms: None,
            failed: None,
            line_no: 1,
            line_start: 0,
            consumed: 0,
            comments: 0,
        }
    }

    /// Feeds a chunk; appends the events it completed to `events`.
    ///
    /// # Errors
    /// [`SseErrorKind::EventTooLarge`] when a line or an event's data passes the
    /// limit (reported at that line, whatever the read boundaries); the events completed before that point are in `events`, and every
    /// later call returns the same error.
    pub fn push(&mut self, chunk: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let mut chunk = chunk;
        if self.at_start {
            // Hold up to 3 bytes until we know whether the stream starts with a BOM.
            let need = BOM.len() - self.line.len();
            let take = need.min(chunk.len());
            self.line.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            self.consumed += take as u64;
            if !BOM.starts_with(&self.line) {
                self.at_start = false;
                let held = std::mem::take(&mut self.line);
                self.consumed -= held.len() as u64;
                self.feed(&held, events)?;
            } else if self.line.len() == BOM.len() {
                self.at_start = false;
                self.line.clear();
                self.line_start = self.consumed;
            } else {
                return Ok(());
            }
        }
        self.feed(chunk, events)
    }

    /// Convenience: [`SseParser::push`] into a new vector.
    ///
    /// # Errors
    /// As [`SseParser::push`] (events completed before the error are lost; use
    /// `push` to keep them).
    pub fn push_vec(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut v = Vec::new();
        self.push(chunk, &mut v)?;
        Ok(v)
    }

    /// Ends the stream. Returns `true` if an incomplete event (or line) was
    /// discarded, as the standard requires.
    pub fn finish(&mut self) -> bool {
        let pending = !self.line.is_empty()
            || !self.data.is_empty()
            || !self.event_type.is_empty()
            || self.retry.is_some();
        self.line.clear();
        self.data.clear();
        self.event_type.clear();
        self.retry = None;
        pending
    }

    /// The stream's reconnection time in ms, as last set by a `retry:` field.
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    /// The last event ID string (empty if never set).
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Number of comment lines seen (`:` heartbeats).
    pub fn comments(&self) -> u64 {
        self.comments
    }

    fn fail(&mut self) -> SseError {
        let e = SseError {
            kind: SseErrorKind::EventTooLarge { limit: self.max },
            line: self.line_no,
            offset: self.line_start,
        };
        self.failed = Some(e);
        e
    }

    fn feed(&mut self, mut chunk: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
                self.consumed += 1;
                self.line_start = self.consumed;
            }
        }
        while let Some(i) = memchr::memchr2(b'\n', b'\r', chunk) {
            let head = &chunk[..i];
            if self.line.len() + head.len() > self.max {
                return Err(self.fail());
            }
            self.consumed += i as u64 + 1;
            let mut skip = i + 1;
            if chunk[i] == b'\r' {
                if i + 1 < chunk.len() {
                    if chunk[i + 1] == b'\n' {
                        skip += 1;
                        self.consumed += 1;
                    }
                } else {
                    self.after_cr = true;
                }
            }
            let within = if self.line.is_empty() {
                self.process_line(head, events)
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                let within = self.process_line(&line, events);
                line.clear();
                self.line = line;
                within
            };
            if !within {
                return Err(self.fail());
            }
            self.line_no += 1;
            self.line_start = self.consumed;
            chunk = &chunk[skip..];
        }
        if self.line.len() + chunk.len() > self.max {
            return Err(self.fail());
        }
        self.consumed += chunk.len() as u64;
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    /// Interprets one line; `false` if the data buffer passed the limit.
    fn process_line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) -> bool {
        if line.is_empty() {
            self.dispatch(events);
            return true;
        }
        if line[0] == b':' {
            self.comments += 1;
            return true;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
                // Checked here, where the line is processed, so the error does
                // not depend on how the stream was split into reads.
                if self.data.len() > self.max {
                    return false;
                }
            }
            // An id containing U+0000 is ignored.
            b"id" if !value.contains(&0) => {
                self.last_event_id = String::from_utf8_lossy(value).into_owned();
            }
            // Only ASCII digits; values past u64::MAX ms (585 million years) are
            // ignored like any other unusable retry value.
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()) {
                    self.retry = Some(ms);
                    self.reconnection_ms = Some(ms);
                }
            }
            _ => {}
        }
        true
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        let retry = self.retry.take();
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        let event = if self.event_type.is_empty() {
            "message".to_owned()
        } else {
            std::mem::take(&mut self.event_type)
        };
        events.push(SseEvent {
            event,
            data,
            id: (!self.last_event_id.is_empty()).then(|| self.last_event_id.clone()),
            retry,
        });
    }
}
