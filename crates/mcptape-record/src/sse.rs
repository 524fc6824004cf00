//! Minimal incremental `text/event-stream` parser for the HTTP recorder
//! (HTML Living Standard, "Server-sent events" §9.2.6 "Interpreting an event
//! stream"). The proxy forwards the raw bytes unchanged; this parser only
//! observes them to cut one record per event.
//!
//! Handles `\n`, `\r\n` and bare `\r` line ends (also a `\r\n` split across
//! chunks), comments (`:`), `id:` (ignored when it contains NUL), `retry:`,
//! multi-line `data:` joined with `\n`, one leading space after the colon
//! stripped, events without an `event:` field, a UTF-8 BOM at the start.

/// Largest event (sum of its `data` lines) the parser keeps, in bytes (64 MiB).
/// A longer event is reported as [`SseItem::Oversize`].
pub const MAX_SSE_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Largest single line the parser buffers, in bytes (64 MiB + 64).
pub const MAX_SSE_LINE_BYTES: usize = MAX_SSE_EVENT_BYTES + 64;

/// One dispatched item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// An event with a non-empty data buffer.
    Event {
        /// The `event:` type, if given.
        event: Option<String>,
        /// The data lines joined with `\n`.
        data: Vec<u8>,
        /// The last event ID in effect (the `id:` field persists across events).
        id: Option<String>,
    },
    /// An event or line past [`MAX_SSE_EVENT_BYTES`] / [`MAX_SSE_LINE_BYTES`]; its bytes were not kept.
    Oversize(usize),
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    line_over: Option<usize>,
    after_cr: bool,
    started: bool,
    data: Vec<u8>,
    has_data: bool,
    data_over: Option<usize>,
    event: Option<String>,
    last_id: Option<String>,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `chunk`; dispatched items are appended to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) {
        let mut rest = chunk;
        if !self.started && !rest.is_empty() {
            // A BOM may be split across chunks; only handle it whole in the first chunk.
            self.started = true;
            rest = rest.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(rest);
        }
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(i) => {
                    self.append_line(&rest[..i]);
                    self.after_cr = rest[i] == b'\r';
                    self.end_line(out);
                    rest = &rest[i + 1..];
                }
                None => {
                    self.append_line(rest);
                    rest = &[];
                }
            }
        }
    }

    /// Ends the stream: an incomplete event is discarded, as the standard says.
    pub fn finish(&mut self) {
        self.line.clear();
        self.data.clear();
    }

    fn append_line(&mut self, bytes: &[u8]) {
        if let Some(n) = self.line_over.as_mut() {
            *n += bytes.len();
        } else if self.line.len() + bytes.len() > MAX_SSE_LINE_BYTES {
            self.line_over = Some(self.line.len() + bytes.len());
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self, out: &mut Vec<SseItem>) {
        if let Some(n) = self.line_over.take() {
            self.data_over = Some(self.data_over.unwrap_or(0) + n);
            return;
        }
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
        } else if line[0] != b':' {
            let (field, value) = match memchr::memchr(b':', &line) {
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (&line[..], &[][..]),
            };
            match field {
                b"data" => {
                    if self.data_over.is_some()
                        || self.data.len() + value.len() + 1 > MAX_SSE_EVENT_BYTES
                    {
                        let n = self.data.len() + value.len();
                        self.data_over = Some(self.data_over.unwrap_or(0) + n);
                        self.data = Vec::new();
                    } else {
                        if self.has_data {
                            self.data.push(b'\n');
                        }
                        self.data.extend_from_slice(value);
                    }
                    self.has_data = true;
                }
                b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
                b"id" if !value.contains(&0) => {
                    self.last_id = Some(String::from_utf8_lossy(value).into_owned())
                }
                _ => {} // `retry:` and unknown fields do not change what is recorded
            }
        }
        self.line = line;
        self.line.clear();
    }

    fn dispatch(&mut self, out: &mut Vec<SseItem>) {
        let event = self.event.take();
        if let Some(n) = self.data_over.take() {
            out.push(SseItem::Oversize(n));
        } else if self.has_data {
            out.push(SseItem::Event {
                event,
                data: std::mem::take(&mut self.data),
                id: self.last_id.clone(),
            });
        }
        self.has_data = false;
        self.data.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<SseItem> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out);
        }
        out
    }

    fn ev(data: &str, id: Option<&str>, event: Option<&str>) -> SseItem {
        SseItem::Event {
            event: event.map(str::to_owned),
            data: data.as_bytes().to_vec(),
            id: id.map(str::to_owned),
        }
    }

    #[test]
    fn every_line_end_and_split_point() {
        let input: &[u8] = b": comment\r\nretry: 10\rid: 7\ndata: {\"a\":1}\r\ndata:second\r\r\nevent: message\ndata: x\n\ndata: no-id-change\n\n";
        let want = vec![
            ev("{\"a\":1}\nsecond", Some("7"), None),
            ev("x", Some("7"), Some("message")),
            ev("no-id-change", Some("7"), None),
        ];
        assert_eq!(parse(&[input]), want);
        for i in 0..=input.len() {
            assert_eq!(parse(&[&input[..i], &input[i..]]), want, "split at {i}");
        }
    }

    #[test]
    fn id_with_nul_is_ignored_and_event_without_data_not_dispatched() {
        assert_eq!(
            parse(&[b"id: a\0b\ndata\n\nid: 3\n\n"]),
            vec![ev("", None, None)]
        );
    }
}
