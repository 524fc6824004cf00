//! The one async framed reader: newline-delimited JSON-RPC over an async byte
//! stream (MCP 2025-11-25 and 2026-07-28, Basic › Transports › stdio), the
//! IO shell around the sans-IO [`LineFramer`], which owns the framing rules
//! (cut at `\n`, strip one `\r`, classify each line, bounded buffer).
//!
//! Two rules every caller gets for free:
//! * **end of stream calls [`LineFramer::finish`]**, so a last line without a
//!   trailing newline is still delivered as a frame;
//! * **a read error is an error, not end of stream**: [`FramedReader::next`]
//!   and [`FramedReader::read_chunk`] return it as a [`FramedReadError`]
//!   (with the stream byte offset it happened at). After an error the reader
//!   delivers the unterminated line it held (if any) and then reports the end.
//!
//! [`LineReader`] is the same framing without the classification, for a
//! client's hot path: owned lines cut with `memchr`, at most one copy of a
//! line's bytes (the kernel's), no JSON parse (the session scans the
//! envelope itself), and buffer reuse for long lines ([`LineReader::recycle`]).
//! It follows the same two rules; [`Line::into_frame`] gives what
//! [`FramedReader`] gives for the same line (tested for every read split).
//!
//! SSE bodies are framed by [`crate::sse::SseParser`] inside
//! [`crate::http::HttpResponse::next_item`], which already follows the same
//! two rules (the WHATWG rules discard a partial event at the end).

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

use mcptape_wire::prescan::{LinePrescan, PlainStrings};

use crate::FrameError;
pub use crate::stdio::MAX_LINE_BYTES;
use crate::stdio::{Frame, LineFramer};

/// Bytes read from the stream per `read` call: 64 KiB.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Reading the underlying stream failed (the error is not taken for end of stream).
#[derive(Debug, thiserror::Error)]
#[error("read failed at stream byte offset {offset}: {source}")]
pub struct FramedReadError {
    /// Bytes read from the stream before the error.
    pub offset: u64,
    /// The I/O error of the read (never [`std::io::ErrorKind::Interrupted`],
    /// which is retried).
    #[source]
    pub source: std::io::Error,
}

/// Frames read from an async stream ([`FramedReader::next`] one at a time, or
/// [`FramedReader::read_chunk`] chunk by chunk for a proxy that forwards the
/// raw bytes).
#[derive(Debug)]
pub struct FramedReader<R> {
    r: R,
    framer: LineFramer,
    queue: VecDeque<Frame>,
    chunk: Vec<u8>,
    offset: u64,
    done: bool,
}

impl<R: AsyncRead + Unpin> FramedReader<R> {
    /// Frames `r` keeping lines of up to `max_line_bytes` (usually
    /// [`MAX_LINE_BYTES`]; a longer line is a [`Frame::TooLong`] and the
    /// stream goes on).
    pub fn new(r: R, max_line_bytes: usize) -> Self {
        FramedReader {
            r,
            framer: LineFramer::new(max_line_bytes),
            queue: VecDeque::new(),
            chunk: vec![0; READ_CHUNK_BYTES],
            offset: 0,
            done: false,
        }
    }

    /// Bytes read from the stream so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next frame: a message line, a noise line (not exactly one JSON
    /// value), or a too-long marker; `None` at end of stream (an
    /// unterminated last line is framed first).
    ///
    /// # Errors
    /// [`FramedReadError`] when a read fails; the next call then returns the
    /// unterminated line held (if any), then `None`.
    pub async fn next(&mut self) -> Result<Option<Frame>, FramedReadError> {
        loop {
            if let Some(f) = self.queue.pop_front() {
                return Ok(Some(f));
            }
            if self.done {
                return Ok(None);
            }
            let mut frames = Vec::new();
            match self.read_chunk(&mut frames).await {
                Ok(_) => self.queue.extend(frames),
                Err(e) => {
                    self.finish(&mut frames);
                    self.queue.extend(frames);
                    return Err(e);
                }
            }
        }
    }

    /// Reads one chunk, appends the frames it completed to `frames`, and
    /// returns the chunk's raw bytes (for forwarding them unchanged); `None`
    /// at end of stream, after appending the unterminated last line (if any).
    /// Frames queued by [`FramedReader::next`] are appended first.
    ///
    /// Cancel-safe: if the future is dropped before it completes, no byte is
    /// lost (`AsyncRead::read` is cancel-safe and frames are cut only after a
    /// read completed).
    ///
    /// # Errors
    /// [`FramedReadError`] when the read fails (`Interrupted` is retried).
    /// Nothing is appended then; call [`FramedReader::finish`] to get the
    /// unterminated line held.
    pub async fn read_chunk(
        &mut self,
        frames: &mut Vec<Frame>,
    ) -> Result<Option<&[u8]>, FramedReadError> {
        frames.extend(self.queue.drain(..));
        if self.done {
            return Ok(None);
        }
        let n = loop {
            match self.r.read(&mut self.chunk).await {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(FramedReadError {
                        offset: self.offset,
                        source,
                    });
                }
            }
        };
        if n == 0 {
            self.finish(frames);
            return Ok(None);
        }
        self.offset += n as u64;
        self.framer
            .push_with(&self.chunk[..n], |f| frames.push(f.to_owned_frame()));
        Ok(Some(&self.chunk[..n]))
    }

    /// Ends the stream here (EOF, a read error, or the caller stops reading):
    /// appends the unterminated last line (if any) to `frames`. Later reads
    /// return end of stream.
    pub fn finish(&mut self, frames: &mut Vec<Frame>) {
        if !self.done {
            self.done = true;
            if let Some(f) = self.framer.finish() {
                frames.push(f);
            }
        }
    }
}

/// One line of a [`LineReader`], not classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The line's exact bytes, without the `\n` and one trailing `\r`
    /// (any bytes: a message, a banner, a blank line, invalid UTF-8).
    Bytes(Vec<u8>),
    /// A line over the limit ([`FrameErrorKind::LineTooLong`](crate::FrameErrorKind::LineTooLong),
    /// with its 1-based line number and the stream offset of its first byte);
    /// its bytes were discarded and the stream goes on.
    TooLong(FrameError),
}

impl Line {
    /// The [`Frame`] [`FramedReader`] gives for the same line (a message is
    /// exactly one JSON value, [`crate::stdio::is_exact_json`]); the bytes
    /// are moved, not copied.
    pub fn into_frame(self) -> Frame {
        match self {
            Line::Bytes(b) if crate::stdio::is_exact_json(&b) => Frame::Message(b),
            Line::Bytes(b) => Frame::Noise(b),
            Line::TooLong(e) => Frame::TooLong(e),
        }
    }
}

/// Largest single read of a [`LineReader`] holding a long line: 16 MiB
/// (it reads [`READ_CHUNK_BYTES`] at first, then up to an eighth of the line
/// held, so a 160 MB line takes few `read` calls where the stream gives more
/// than a pipe buffer per call).
pub const MAX_READ_BYTES: usize = 16 * 1024 * 1024;

/// A [`LineReader`] line held past this many bytes (64 KiB, one first read) is searched for
/// its end by [`LinePrescan`] instead of `memchr`: the same one pass over each read's bytes
/// while they are in cache, which also keeps the line's long plain strings
/// ([`LineReader::take_hints`]) so the envelope scan of the whole line does not read a
/// 160 MB blob back from memory. Shorter lines keep `memchr` (no work for hints they would
/// not need).
pub const PRESCAN_FROM_BYTES: usize = READ_CHUNK_BYTES;

/// Lines read from an async stream into owned buffers with at most one copy
/// of a line's bytes (the kernel's, into the line's own buffer): the hot
/// path of a client reading replies of hundreds of MB. Lines are cut at
/// `\n` with `memchr`, one trailing `\r` is stripped, and nothing is
/// classified (no JSON parse): the caller decides what a line is
/// ([`Line::into_frame`] gives what [`FramedReader`] would).
///
/// Same two rules as [`FramedReader`]: end of stream delivers an
/// unterminated last line; a read error is an error ([`FramedReadError`]),
/// after which the held line (if any) is delivered, then the end.
///
/// Memory: the line being read, plus at most one read's worth of the next;
/// a line past the limit is counted, not kept. A line past [`PRESCAN_FROM_BYTES`] is searched
/// by [`LinePrescan`] (its hints: one range per plain string of 4 KiB or more).
#[derive(Debug)]
pub struct LineReader<R> {
    r: R,
    buf: Vec<u8>,
    /// Offset in `buf` of the current line's first byte.
    start: usize,
    /// Bytes of `buf` already searched for `\n`.
    scanned: usize,
    max: usize,
    /// A line past the limit: its length so far (bytes dropped, not in
    /// `buf`) and whether its last dropped byte was `\r`.
    overflow: Option<(usize, bool)>,
    /// 1-based number of the line being read.
    line: u64,
    /// Stream offset of `buf[0]`.
    buf_offset: u64,
    offset: u64,
    done: bool,
    /// A buffer given back ([`LineReader::recycle`]) for the next long line.
    spare: Option<Vec<u8>>,
    /// The pass over the current line, once it is long ([`PRESCAN_FROM_BYTES`]).
    prescan: Option<LinePrescan>,
    /// The hints of the line [`LineReader::next`] delivered last ([`LineReader::take_hints`]).
    hints: Option<PlainStrings>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Reads `r` keeping lines of up to `max_line_bytes` (`\n` and one
    /// trailing `\r` excluded); a longer line is a [`Line::TooLong`].
    pub fn new(r: R, max_line_bytes: usize) -> Self {
        LineReader {
            r,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            max: max_line_bytes,
            overflow: None,
            line: 1,
            buf_offset: 0,
            offset: 0,
            done: false,
            spare: None,
            prescan: None,
            hints: None,
        }
    }

    /// The long plain strings of the line [`LineReader::next`] delivered last, found as it
    /// arrived ([`LinePrescan`]), for
    /// [`scan_envelope_hinted`](mcptape_wire::envelope::scan_envelope_hinted) of that line;
    /// `None` for a line under [`PRESCAN_FROM_BYTES`], a too-long line, or once taken. A
    /// later `next` drops them.
    pub fn take_hints(&mut self) -> Option<PlainStrings> {
        self.hints.take()
    }

    /// Bytes read from the stream so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Gives back the buffer of a delivered line that is no longer needed: the next long line
    /// is read into it, so its pages (already faulted in) are reused instead of a fresh
    /// allocation faulting in 40,000 pages for 160 MB. At most one buffer is kept (the
    /// largest), so memory stays at most the longest line kept plus the line being read.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        buf.clear();
        let held = self.buf.len() - self.start;
        if buf.capacity() > self.buf.capacity() && held <= READ_CHUNK_BYTES {
            // Read into it from now on: the few bytes held (the start of the next line) move
            // over. Midway through a long line it waits as the spare instead (no big copy).
            buf.extend_from_slice(&self.buf[self.start..]);
            self.scanned -= self.start;
            self.buf_offset += self.start as u64;
            self.start = 0;
            let small = std::mem::replace(&mut self.buf, buf);
            self.recycle(small);
        } else if buf.capacity() > self.spare.as_ref().map_or(READ_CHUNK_BYTES, Vec::capacity) {
            self.spare = Some(buf);
        }
    }

    fn too_long(&self, len: usize, line_start: u64) -> Line {
        Line::TooLong(FrameError::line_too_long(
            len, self.max, self.line, line_start,
        ))
    }

    /// Stream offset of the current line's first byte.
    fn line_start(&self) -> u64 {
        match self.overflow {
            Some((n, _)) => self.buf_offset + self.start as u64 - n as u64,
            None => self.buf_offset + self.start as u64,
        }
    }

    /// The current line, ending before `buf[end]` (a `\n`, or the end of
    /// the stream); the bytes after `end + 1` start the next one. A line
    /// at least as long as what follows it keeps its buffer (only the rest
    /// is copied); a shorter one is copied out.
    fn take_line(&mut self, end: usize) -> Line {
        let prescan = self.prescan.take();
        let line_start = self.line_start();
        let line = &self.buf[self.start..end];
        let out = if let Some((n, last_cr)) = self.overflow.take() {
            let cr = line.last().map_or(last_cr, |&b| b == b'\r');
            self.too_long(n + line.len() - usize::from(cr), line_start)
        } else {
            let len = line.len() - usize::from(line.last() == Some(&b'\r'));
            if len > self.max {
                self.too_long(len, line_start)
            } else if self.start == 0 && len >= self.buf.len() - end {
                self.hints = prescan.map(|p| p.finish(len));
                let mut rest = self.spare.take().unwrap_or_default();
                rest.extend_from_slice(self.buf.get(end + 1..).unwrap_or_default());
                let mut line = std::mem::replace(&mut self.buf, rest);
                line.truncate(len);
                self.buf_offset += end as u64 + 1;
                self.start = 0;
                self.scanned = 0;
                self.line += 1;
                return Line::Bytes(line);
            } else {
                self.hints = prescan.map(|p| p.finish(len));
                Line::Bytes(line[..len].to_vec())
            }
        };
        self.start = (end + 1).min(self.buf.len());
        self.scanned = self.start;
        self.line += 1;
        out
    }

    /// The next line; `None` at end of stream (an unterminated last line is
    /// delivered first).
    ///
    /// Cancel-safe: a dropped call loses no byte (bytes are appended to the
    /// held line only once a read completed).
    ///
    /// # Errors
    /// [`FramedReadError`] when a read fails (`Interrupted` is retried); the
    /// next call returns the unterminated line held (if any), then `None`.
    pub async fn next(&mut self) -> Result<Option<Line>, FramedReadError> {
        use tokio::io::AsyncReadExt as _;
        self.hints = None;
        loop {
            let new = &self.buf[self.scanned..];
            let found = match &mut self.prescan {
                Some(p) => p.feed(new),
                None => memchr::memchr(b'\n', new),
            };
            if let Some(i) = found {
                let end = self.scanned + i;
                return Ok(Some(self.take_line(end)));
            }
            if self.done {
                if self.start < self.buf.len() || self.overflow.is_some() {
                    let end = self.buf.len();
                    let line = self.take_line(end);
                    self.buf = Vec::new();
                    self.start = 0;
                    self.scanned = 0;
                    return Ok(Some(line));
                }
                return Ok(None);
            }
            // Compact: the held partial line moves to the front.
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.buf_offset += self.start as u64;
                self.start = 0;
            }
            // Past the limit: count the bytes, keep none.
            let held = self.buf.len();
            if self.overflow.is_some() || held > self.max.saturating_add(1) {
                let (n, cr) = self.overflow.get_or_insert((0, false));
                *n += held;
                if let Some(&b) = self.buf.last() {
                    *cr = b == b'\r';
                }
                self.buf.clear();
                self.buf_offset += held as u64;
                self.prescan = None;
            }
            // A larger spare buffer takes over while the line is still short.
            if self.buf.len() <= READ_CHUNK_BYTES
                && self.spare.as_ref().map_or(0, Vec::capacity) > self.buf.capacity()
                && let Some(mut spare) = self.spare.take()
            {
                spare.extend_from_slice(&self.buf);
                self.buf = spare;
            }
            self.scanned = self.buf.len();
            // A long line: from now on searched by the prescan, which first takes the bytes
            // held (searched by memchr already: no `\n` among them).
            if self.prescan.is_none()
                && self.overflow.is_none()
                && self.buf.len() - self.start >= PRESCAN_FROM_BYTES
            {
                let mut p = LinePrescan::new();
                let nl = p.feed(&self.buf[self.start..]);
                debug_assert_eq!(nl, None);
                self.prescan = Some(p);
            }
            let want = (self.buf.len() / 8).clamp(READ_CHUNK_BYTES, MAX_READ_BYTES);
            self.buf.reserve(want);
            let n = loop {
                match self.r.read_buf(&mut self.buf).await {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(source) => {
                        self.done = true;
                        return Err(FramedReadError {
                            offset: self.offset,
                            source,
                        });
                    }
                }
            };
            if n == 0 {
                self.done = true;
            }
            self.offset += n as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::*;

    #[tokio::test]
    async fn line_limit_at_and_past_and_the_stream_goes_on() {
        let data = b"{\"a\":1}\n{\"ab\":1}\n\"x\"\r\nbanner\n[1]".to_vec();
        let mut f = frames_of(&data, 7).await;
        assert!(matches!(f.remove(1), Frame::TooLong(_)), "{f:?}");
        assert_eq!(
            f,
            [
                Frame::Message(b"{\"a\":1}".to_vec()),
                Frame::Message(b"\"x\"".to_vec()),
                Frame::Noise(b"banner".to_vec()),
                Frame::Message(b"[1]".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn last_line_without_newline_is_delivered_at_eof() {
        let data = b"{\"id\":1}\n{\"id\":2}";
        let mut r = FramedReader::new(&data[..], MAX_LINE_BYTES);
        let mut frames = Vec::new();
        let chunk = r.read_chunk(&mut frames).await.unwrap().map(<[u8]>::to_vec);
        assert_eq!(chunk.as_deref(), Some(&data[..]));
        assert_eq!(frames, vec![Frame::Message(b"{\"id\":1}".to_vec())]);
        frames.clear();
        assert!(r.read_chunk(&mut frames).await.unwrap().is_none());
        assert_eq!(frames, vec![Frame::Message(b"{\"id\":2}".to_vec())]);
        assert_eq!(r.offset(), data.len() as u64);
    }

    /// Yields `data` in one read, then fails with `EIO`-like `Other`.
    fn fail_after(data: &[u8]) -> tokio_test::io::Mock {
        tokio_test::io::Builder::new()
            .read(data)
            .read_error(std::io::Error::other("device gone"))
            .build()
    }

    /// Every `next()` of a [`FramedReader`] or [`LineReader`] up to its end: the item, or
    /// the read error's offset and message.
    macro_rules! read_to_end {
        ($reader:expr) => {{
            let mut r = $reader;
            let mut out = Vec::new();
            loop {
                match r.next().await {
                    Ok(Some(item)) => out.push(Ok(item)),
                    Ok(None) => break out,
                    Err(e) => out.push(Err((e.offset, e.source.to_string()))),
                }
            }
        }};
    }

    /// Both readers (the line reader's lines as frames): the frames before a read error, the
    /// error (not EOF) at its offset, then the bytes held before it (not lost).
    #[tokio::test]
    async fn read_error_is_an_error_not_eof_and_the_held_line_follows() {
        let data = b"{\"a\":1}\n{\"b\"";
        let want = [
            Ok(Frame::Message(b"{\"a\":1}".to_vec())),
            Err((12, "device gone".to_owned())),
            Ok(Frame::Noise(b"{\"b\"".to_vec())),
        ];
        assert_eq!(read_to_end!(FramedReader::new(fail_after(data), 64)), want);
        let lines = read_to_end!(LineReader::new(fail_after(data), 64));
        let frames: Vec<_> = lines.into_iter().map(|l| l.map(Line::into_frame)).collect();
        assert_eq!(frames, want);
    }

    /// Yields `data` in reads of the given sizes (cycled), then end of stream.
    struct Chunked {
        data: Vec<u8>,
        at: usize,
        sizes: Vec<usize>,
        k: usize,
    }

    impl AsyncRead for Chunked {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let size = self.sizes[self.k % self.sizes.len()];
            self.k += 1;
            let n = size.min(buf.remaining()).min(self.data.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.data[at..at + n]);
            self.at += n;
            Poll::Ready(Ok(()))
        }
    }

    async fn lines_of(data: &[u8], sizes: &[usize], max: usize) -> Vec<Frame> {
        let mut r = LineReader::new(
            Chunked {
                data: data.to_vec(),
                at: 0,
                sizes: sizes.to_vec(),
                k: 0,
            },
            max,
        );
        let mut out = Vec::new();
        while let Some(l) = r.next().await.unwrap() {
            out.push(l.into_frame());
        }
        assert_eq!(r.offset(), data.len() as u64);
        out
    }

    async fn frames_of(data: &[u8], max: usize) -> Vec<Frame> {
        let mut r = FramedReader::new(data, max);
        let mut out = Vec::new();
        while let Some(f) = r.next().await.unwrap() {
            out.push(f);
        }
        out
    }

    /// The line reader cuts, strips, limits (at the limit and one past it,
    /// with and without `\r`) and numbers lines exactly as [`FramedReader`]
    /// does, however the stream is split into reads.
    #[tokio::test]
    async fn line_reader_agrees_with_the_framed_reader_for_every_split() {
        let inputs: [&[u8]; 8] = [
            b"{\"a\":1}\n{\"ab\":1}\n\"x\"\r\nbanner\n[1]",
            b"1234567\n12345678\n1234567\r\n12345678\r\n\n\r\n",
            b"123456789012\r\n1\n",
            b"12345678901234567890",
            b"1234567\r",
            b"\r\r\r\r\r\r\r\r\r\n\r",
            b"",
            b"\n\n{}\n",
        ];
        for data in inputs {
            let want = frames_of(data, 7).await;
            for sizes in [
                vec![1],
                vec![2],
                vec![3, 1],
                vec![7],
                vec![8],
                vec![64],
                vec![5, 9, 1],
            ] {
                assert_eq!(
                    lines_of(data, &sizes, 7).await,
                    want,
                    "{:?} in reads of {sizes:?}",
                    String::from_utf8_lossy(data)
                );
            }
        }
    }

    /// Regression (issue 12): a multi-MB line arriving in pipe-sized reads
    /// followed by small lines in the same read is delivered whole, and the
    /// small ones after it too.
    #[tokio::test]
    async fn a_multi_mb_line_then_small_lines_in_pipe_sized_reads() {
        let big = format!("{{\"id\":1,\"b\":\"{}\"}}", "QUJD".repeat(1 << 20));
        let data = format!("{big}\n{{\"id\":2}}\r\n{{\"id\":3}}");
        let got = lines_of(data.as_bytes(), &[65_536, 4096], usize::MAX).await;
        assert_eq!(
            got,
            vec![
                Frame::Message(big.into_bytes()),
                Frame::Message(b"{\"id\":2}".to_vec()),
                Frame::Message(b"{\"id\":3}".to_vec()),
            ]
        );
    }

    /// A recycled buffer is read into next, and the lines read into it are the same.
    #[tokio::test]
    async fn a_recycled_buffer_is_reused_for_the_next_long_line() {
        let big = "x".repeat(300_000);
        let data = format!("{big}\nab\n{big}\n");
        let mut r = LineReader::new(
            Chunked {
                data: data.clone().into_bytes(),
                at: 0,
                sizes: vec![100_000],
                k: 0,
            },
            usize::MAX,
        );
        let Some(Line::Bytes(first)) = r.next().await.unwrap() else {
            panic!("a line")
        };
        assert_eq!(first, big.as_bytes());
        let ptr = first.as_ptr();
        r.recycle(first);
        assert_eq!(r.next().await.unwrap(), Some(Line::Bytes(b"ab".to_vec())));
        let Some(Line::Bytes(second)) = r.next().await.unwrap() else {
            panic!("a line")
        };
        assert_eq!(second, big.as_bytes());
        assert_eq!(second.as_ptr(), ptr, "read into the recycled buffer");
        assert_eq!(r.next().await.unwrap(), None);
    }

    /// A reply of `blobs` base64 strings of `n` bytes each (one line, no `\n`).
    fn blob_reply(blobs: usize, n: usize) -> Vec<u8> {
        mcptape_wire::fuzzing::blob_reply(&vec![n; blobs])
    }

    /// Every line of `r` with the hints delivered with it.
    async fn lines_with_hints<R: AsyncRead + Unpin>(
        mut r: LineReader<R>,
    ) -> Vec<(Line, Option<PlainStrings>)> {
        let mut out = Vec::new();
        while let Some(l) = r.next().await.unwrap() {
            out.push((l, r.take_hints()));
        }
        out
    }

    fn chunked(data: &[u8], sizes: Vec<usize>) -> Chunked {
        Chunked {
            data: data.to_vec(),
            at: 0,
            sizes,
            k: 0,
        }
    }

    /// Regression (issue 22, ninth round): a long reply whose `\n` falls at every offset
    /// around a read boundary (before, on, after it, with a `\r` before it or not) is the same
    /// line; its hints are found (three 40 KB blobs) and scan as the plain scan does; the
    /// short line after it has none.
    #[tokio::test]
    async fn a_long_reply_split_at_every_boundary_near_its_newline_keeps_line_and_hints() {
        let reply = blob_reply(3, 40_000);
        let want_env = mcptape_wire::envelope::scan_envelope(&reply).unwrap();
        for cr in [false, true] {
            let mut data = reply.clone();
            if cr {
                data.push(b'\r');
            }
            let nl = data.len();
            data.extend_from_slice(b"\n{\"id\":4}\n");
            for cut in nl - 4..=nl + 4 {
                // The first read is past PRESCAN_FROM_BYTES: the prescan takes over after it.
                let sizes = vec![70_000, cut - 70_000, 3, usize::MAX];
                let got =
                    lines_with_hints(LineReader::new(chunked(&data, sizes), usize::MAX)).await;
                assert_eq!(got.len(), 2, "cut {cut}");
                assert_eq!(got[0].0, Line::Bytes(reply.clone()), "cut {cut}, cr {cr}");
                let hints = got[0].1.as_ref().expect("hints for a long line");
                assert_eq!(hints.len(), 3);
                assert_eq!(
                    mcptape_wire::envelope::scan_envelope_hinted(&reply, hints).unwrap(),
                    want_env
                );
                assert_eq!(got[1], (Line::Bytes(b"{\"id\":4}".to_vec()), None));
            }
        }
    }

    /// A line at the limit (prescanned) is kept with its hints; one byte past it is
    /// `TooLong` with no hints, and the line after it is read as before.
    #[tokio::test]
    async fn a_prescanned_line_at_the_limit_is_kept_and_one_past_is_too_long() {
        let reply = blob_reply(2, 60_000);
        let data = [&reply[..], b"\r\n{}\n"].concat();
        let sizes = vec![65_536, 4096];
        let at =
            lines_with_hints(LineReader::new(chunked(&data, sizes.clone()), reply.len())).await;
        assert_eq!(at[0].0, Line::Bytes(reply.clone()));
        assert_eq!(at[0].1.as_ref().map(PlainStrings::len), Some(2));
        assert_eq!(at[1], (Line::Bytes(b"{}".to_vec()), None));
        let past = lines_with_hints(LineReader::new(chunked(&data, sizes), reply.len() - 1)).await;
        let framed = frames_of(&data, reply.len() - 1).await;
        match (&past[0], &framed[0]) {
            ((Line::TooLong(e), None), Frame::TooLong(want)) => assert_eq!(e, want),
            other => panic!("{other:?}"),
        }
        assert_eq!(past[1], (Line::Bytes(b"{}".to_vec()), None));
    }

    /// A long last line without `\n` is delivered at end of stream with its hints; hints
    /// not taken are dropped by the next `next` (never paired with another line).
    #[tokio::test]
    async fn a_long_last_line_at_eof_has_hints_and_stale_hints_are_dropped() {
        let reply = blob_reply(1, 100_000);
        let data = [&reply[..], b"\n", &reply[..]].concat();
        let mut r = LineReader::new(chunked(&data, vec![65_536]), usize::MAX);
        assert_eq!(r.next().await.unwrap(), Some(Line::Bytes(reply.clone())));
        // Not taken: the next line's read drops them.
        assert_eq!(r.next().await.unwrap(), Some(Line::Bytes(reply.clone())));
        assert_eq!(r.take_hints().map(|h| h.len()), Some(1));
        assert_eq!(r.take_hints(), None);
        assert_eq!(r.next().await.unwrap(), None);
        assert_eq!(r.take_hints(), None);
    }

    /// The line reader with the prescan still agrees with the framed reader on long lines
    /// of every kind (not JSON, escapes, control bytes, non-ASCII) in reads of every size.
    #[tokio::test]
    async fn prescanned_lines_agree_with_the_framed_reader() {
        let long = "A".repeat(70_000);
        let inputs = [
            format!("{{\"a\":\"{long}\\n\\\"{long}\"}}\n{{}}\n"),
            format!("banner {long}\r\n[1]\n"),
            format!("\"{long}\u{1}\"\n\"{long}é\"\n\"\\"),
            format!("{long}\\\n\\"),
        ];
        for data in inputs {
            let want = frames_of(data.as_bytes(), 200_000).await;
            for sizes in [vec![65_536], vec![70_001, 1], vec![100_000, 7, 65_536]] {
                assert_eq!(
                    lines_of(data.as_bytes(), &sizes, 200_000).await,
                    want,
                    "{sizes:?}"
                );
            }
        }
    }
}
