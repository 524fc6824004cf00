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
//! SSE bodies are framed by [`crate::sse::SseParser`] inside
//! [`crate::http::HttpResponse::next_item`], which already follows the same
//! two rules (the WHATWG rules discard a partial event at the end).

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

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

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::*;

    #[tokio::test]
    async fn line_limit_at_and_past_and_the_stream_goes_on() {
        let data = b"{\"a\":1}\n{\"ab\":1}\n\"x\"\r\nbanner\n[1]".to_vec();
        let mut r = FramedReader::new(&data[..], 7);
        assert_eq!(
            r.next().await.unwrap(),
            Some(Frame::Message(b"{\"a\":1}".to_vec()))
        );
        assert!(matches!(r.next().await.unwrap(), Some(Frame::TooLong(_))));
        assert_eq!(
            r.next().await.unwrap(),
            Some(Frame::Message(b"\"x\"".to_vec()))
        );
        assert_eq!(
            r.next().await.unwrap(),
            Some(Frame::Noise(b"banner".to_vec()))
        );
        assert_eq!(
            r.next().await.unwrap(),
            Some(Frame::Message(b"[1]".to_vec()))
        );
        assert_eq!(r.next().await.unwrap(), None);
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
    struct FailAfter(Option<Vec<u8>>);

    impl AsyncRead for FailAfter {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            match self.0.take() {
                Some(d) => {
                    buf.put_slice(&d);
                    Poll::Ready(Ok(()))
                }
                None => Poll::Ready(Err(std::io::Error::other("device gone"))),
            }
        }
    }

    #[tokio::test]
    async fn read_error_is_an_error_not_eof_and_the_held_line_follows() {
        let mut r = FramedReader::new(FailAfter(Some(b"{\"a\":1}\n{\"b\"".to_vec())), 64);
        assert_eq!(
            r.next().await.unwrap(),
            Some(Frame::Message(b"{\"a\":1}".to_vec()))
        );
        let e = r.next().await.unwrap_err();
        assert_eq!(e.offset, 12);
        assert_eq!(e.source.to_string(), "device gone");
        // The bytes received before the error are not lost.
        assert_eq!(
            r.next().await.unwrap(),
            Some(Frame::Noise(b"{\"b\"".to_vec()))
        );
        assert_eq!(r.next().await.unwrap(), None);
    }
}
