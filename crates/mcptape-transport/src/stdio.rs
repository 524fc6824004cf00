//! Newline-delimited JSON-RPC framing for the MCP stdio transport (sans-IO).
//!
//! Source: MCP 2025-11-25 and 2026-07-28, Basic › Transports › stdio: messages
//! are delimited by newlines and MUST NOT contain embedded newlines. This framer
//! cuts a byte stream at `\n`, strips one trailing `\r`, and classifies each line:
//!
//! * exactly one JSON value (RFC 8259), nothing around it → [`Frame::Message`];
//! * anything else (a banner, a blank line, invalid UTF-8, JSON with whitespace
//!   around it) → [`Frame::Noise`] with the exact bytes; the session goes on;
//! * a line longer than the limit → [`Frame::TooLong`] (its bytes are not kept;
//!   memory stays bounded by the limit).
//!
//! The output depends only on the concatenated input, never on how it was split
//! into chunks (exhaustively tested on small inputs, property-tested and fuzzed).

use serde_json::value::RawValue;

use crate::error::FrameError;

/// Default longest stdio line kept as a frame: 64 MiB (bytes, `\n` and one
/// trailing `\r` excluded). 16 MB messages fit with room to spare.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One line cut from the stream, borrowed (see [`LineFramer::push_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameRef<'a> {
    /// Exactly one JSON value: the line's exact bytes (valid UTF-8).
    Message(&'a [u8]),
    /// A line that is not exactly one JSON value; exact bytes.
    Noise(&'a [u8]),
    /// A line over the limit; its bytes were discarded.
    TooLong(FrameError),
}

/// One line cut from the stream, owned (see [`LineFramer::push`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Exactly one JSON value: the line's exact bytes (valid UTF-8), without
    /// the `\n` and one trailing `\r`.
    Message(Vec<u8>),
    /// A line that is not exactly one JSON value (banner, blank line, invalid
    /// UTF-8, whitespace around JSON); exact bytes.
    Noise(Vec<u8>),
    /// A line over the limit ([`crate::FrameErrorKind::LineTooLong`]); its bytes were
    /// discarded, the framer continues with the next line.
    TooLong(FrameError),
}

impl Frame {
    /// The message text, if this is a [`Frame::Message`].
    pub fn as_message(&self) -> Option<&str> {
        match self {
            // A Message is valid UTF-8 by construction.
            Frame::Message(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }
}

impl FrameRef<'_> {
    /// An owned copy.
    pub fn to_owned_frame(&self) -> Frame {
        match *self {
            FrameRef::Message(b) => Frame::Message(b.to_vec()),
            FrameRef::Noise(b) => Frame::Noise(b.to_vec()),
            FrameRef::TooLong(e) => Frame::TooLong(e),
        }
    }
}

/// `true` if `line` is exactly one JSON value with nothing around it.
pub fn is_exact_json(line: &[u8]) -> bool {
    match serde_json::from_slice::<&RawValue>(line) {
        Ok(v) => v.get().len() == line.len(),
        Err(_) => false,
    }
}

/// Incremental line framer with a bounded buffer (at most `max_line_bytes + 1`
/// bytes held).
#[derive(Debug, Clone)]
pub struct LineFramer {
    buf: Vec<u8>,
    max: usize,
    /// Length so far of the current line, once it passed the limit.
    overflow: Option<usize>,
    /// 1-based number of the line being read.
    line: u64,
    /// Stream offset of the current line's first byte.
    line_start: u64,
    /// Bytes consumed so far.
    consumed: u64,
}

impl LineFramer {
    /// A framer that keeps lines of up to `max_line_bytes` bytes (usually
    /// [`MAX_LINE_BYTES`]).
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            buf: Vec::new(),
            max: max_line_bytes,
            overflow: None,
            line: 1,
            line_start: 0,
            consumed: 0,
        }
    }

    /// Feeds a chunk; returns the frames it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Frame> {
        let mut out = Vec::new();
        self.push_with(chunk, |f| out.push(f.to_owned_frame()));
        out
    }

    /// Ends the stream: an unterminated last line becomes a frame.
    pub fn finish(&mut self) -> Option<Frame> {
        let mut out = None;
        self.finish_with(|f| out = Some(f.to_owned_frame()));
        out
    }

    /// Feeds a chunk, calling `emit` with each completed frame (borrowed: a
    /// line contained in `chunk` is not copied).
    pub fn push_with(&mut self, mut chunk: &[u8], mut emit: impl FnMut(FrameRef<'_>)) {
        while let Some(i) = memchr::memchr(b'\n', chunk) {
            let head = &chunk[..i];
            self.consumed += i as u64 + 1;
            if let Some(n) = self.overflow.take() {
                let len = n + head.len();
                let len = if head.last() == Some(&b'\r')
                    || (head.is_empty() && self.buf.last() == Some(&b'\r'))
                {
                    len - 1
                } else {
                    len
                };
                self.buf.clear();
                emit(self.too_long(len));
            } else if self.buf.is_empty() {
                let line = strip_cr(head);
                if line.len() > self.max {
                    emit(self.too_long(line.len()));
                } else {
                    emit(classify(line));
                }
            } else {
                self.buf.extend_from_slice(head);
                let n = strip_cr(&self.buf).len();
                if n > self.max {
                    let e = self.too_long(n);
                    emit(e);
                } else {
                    emit(classify(&self.buf[..n]));
                }
                self.buf.clear();
            }
            self.line += 1;
            self.line_start = self.consumed;
            chunk = &chunk[i + 1..];
        }
        self.consumed += chunk.len() as u64;
        self.hold(chunk);
    }

    /// Ends the stream, calling `emit` for an unterminated last line.
    pub fn finish_with(&mut self, emit: impl FnOnce(FrameRef<'_>)) {
        if let Some(n) = self.overflow.take() {
            let n = if self.buf.last() == Some(&b'\r') {
                n - 1
            } else {
                n
            };
            self.buf.clear();
            emit(self.too_long(n));
        } else if !self.buf.is_empty() {
            // The buffer may hold max + 1 bytes (room for a '\r' to strip).
            let n = strip_cr(&self.buf).len();
            if n > self.max {
                emit(self.too_long(n));
            } else {
                emit(classify(&self.buf[..n]));
            }
            self.buf.clear();
        } else {
            return;
        }
        self.line += 1;
        self.line_start = self.consumed;
    }

    /// Bytes of an incomplete line currently held.
    pub fn pending_bytes(&self) -> usize {
        self.buf.len()
    }

    fn too_long(&self, len: usize) -> FrameRef<'static> {
        FrameRef::TooLong(FrameError::line_too_long(
            len,
            self.max,
            self.line,
            self.line_start,
        ))
    }

    fn hold(&mut self, rest: &[u8]) {
        if rest.is_empty() {
            return;
        }
        if let Some(n) = self.overflow.as_mut() {
            *n += rest.len();
            // keep only the last byte, to know whether the line ends in '\r'
            self.buf.clear();
            self.buf.push(rest[rest.len() - 1]);
        } else if self.buf.len() + rest.len() > self.max.saturating_add(1) {
            // +1: a trailing '\r' may still be stripped.
            self.overflow = Some(self.buf.len() + rest.len());
            self.buf.clear();
            self.buf.push(rest[rest.len() - 1]);
        } else {
            self.buf.extend_from_slice(rest);
        }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn classify(line: &[u8]) -> FrameRef<'_> {
    if is_exact_json(line) {
        FrameRef::Message(line)
    } else {
        FrameRef::Noise(line)
    }
}
