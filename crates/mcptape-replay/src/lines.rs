//! Newline-delimited JSON-RPC over an async byte stream (MCP stdio transport,
//! 2025-11-25 "Transports" §stdio): the async shell around the sans-IO
//! [`mcptape_transport::stdio::LineFramer`], which owns the framing rules
//! (cut at `\n`, strip one `\r`, classify each line, bounded buffer).

use std::collections::VecDeque;

use mcptape_transport::stdio::{Frame, LineFramer};
use tokio::io::{AsyncRead, AsyncReadExt};

pub use mcptape_transport::stdio::MAX_LINE_BYTES;

/// Bytes read from the stream per `read` call (64 KiB).
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Frames read from an async stream, one at a time.
#[derive(Debug)]
pub struct FramedReader<R> {
    r: R,
    framer: LineFramer,
    queue: VecDeque<Frame>,
    chunk: Vec<u8>,
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
            done: false,
        }
    }

    /// The next frame: a message line, a noise line (not exactly one JSON
    /// value), or a too-long marker; `None` at end of stream (an
    /// unterminated last line is still framed).
    ///
    /// # Errors
    /// The reader's I/O error.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            if let Some(f) = self.queue.pop_front() {
                return Ok(Some(f));
            }
            if self.done {
                return Ok(None);
            }
            let n = self.r.read(&mut self.chunk).await?;
            if n == 0 {
                self.done = true;
                if let Some(f) = self.framer.finish() {
                    self.queue.push_back(f);
                }
                continue;
            }
            let queue = &mut self.queue;
            self.framer
                .push_with(&self.chunk[..n], |f| queue.push_back(f.to_owned_frame()));
        }
    }
}

#[cfg(test)]
mod tests {
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
}
