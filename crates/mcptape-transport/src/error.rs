//! Errors of the transport parsers and clients.

/// A stdio line could not be framed (the session goes on with the next line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stdio line {line} (stream byte offset {offset}): {kind}")]
pub struct FrameError {
    /// What went wrong.
    pub kind: FrameErrorKind,
    /// 1-based line number in the stream.
    pub line: u64,
    /// Stream byte offset of the line's first byte.
    pub offset: u64,
}

impl FrameError {
    /// Line `line` (1-based), starting at stream byte offset `offset`, is
    /// `len` bytes long (terminator and one `\r` excluded), over `limit`
    /// ([`FrameErrorKind::LineTooLong`]).
    pub fn line_too_long(len: usize, limit: usize, line: u64, offset: u64) -> FrameError {
        FrameError {
            kind: FrameErrorKind::LineTooLong { len, limit },
            line,
            offset,
        }
    }
}

/// Kind of a [`FrameError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameErrorKind {
    /// The line is longer than the framer's limit
    /// ([`crate::stdio::MAX_LINE_BYTES`] by default).
    #[error("line of {len} bytes is longer than the limit of {limit} bytes")]
    LineTooLong {
        /// Length of the line in bytes (terminator and one `\r` excluded).
        len: usize,
        /// The limit in bytes.
        limit: usize,
    },
}

/// An SSE stream could not be parsed further (fatal for that stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("SSE line {line} (stream byte offset {offset}): {kind}")]
pub struct SseError {
    /// What went wrong.
    pub kind: SseErrorKind,
    /// 1-based line number in the stream.
    pub line: u64,
    /// Stream byte offset of the line's first byte.
    pub offset: u64,
}

/// Kind of an [`SseError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseErrorKind {
    /// A line, or the data of one event (decoded UTF-8), is longer than the parser's limit
    /// ([`crate::sse::MAX_EVENT_BYTES`] by default).
    #[error("event larger than the limit of {limit} bytes")]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}
