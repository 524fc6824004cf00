//! Reading transcripts, crash-tolerant.
//!
//! Rules (format version [`crate::FORMAT_VERSION`]):
//! * Line 1 must be a valid [`Header`] of a supported format version, ended by `\n`
//!   — otherwise [`ErrorKind::Empty`], [`ErrorKind::TruncatedHeader`],
//!   [`ErrorKind::Header`] or [`ErrorKind::UnsupportedVersion`].
//! * Every later line ended by `\n` must be a valid record. A malformed complete
//!   line is an error carrying its 1-based line number and byte offset
//!   ([`read`]); with [`ReadOptions::lenient`] it is skipped and listed in
//!   [`Transcript::skipped`] instead.
//! * The last line, if it has no `\n` (the writer crashed mid-write), is kept when
//!   it parses as a whole record (the crash hit just before the `\n`); otherwise it
//!   is dropped and reported in [`Transcript::dropped`] with its byte count. Since
//!   every record is one JSON object, no proper prefix of a record line parses, so
//!   a cut file reads back as exactly its complete records.
//! * Nothing here panics on any input (property-tested and fuzzed).

use std::io::BufRead;

use crate::model::{FORMAT_VERSION, Header, Record};
use crate::ondisk::OnDisk;

/// Longest line the streaming [`Reader`] accepts by default: 256 MiB. A record
/// line holds one message; a 64 MiB stdio message escaped as `msgText` stays
/// well below this. [`read`] has no such limit (its input is already in memory).
pub const MAX_RECORD_LINE_BYTES: usize = 256 * 1024 * 1024;

/// A transcript read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// The header line.
    pub header: Header,
    /// Every complete record, in file order.
    pub records: Vec<Record>,
    /// The unterminated tail that was dropped, if the file was cut mid-line.
    pub dropped: Option<Dropped>,
    /// Malformed complete lines skipped in lenient mode (always empty in strict mode).
    pub skipped: Vec<TranscriptError>,
}

impl Transcript {
    /// The negotiated protocol revision: the last [`crate::Event::Protocol`]
    /// record if there is one, else [`Header::protocol_version`].
    pub fn protocol_version(&self) -> Option<&str> {
        self.records
            .iter()
            .rev()
            .find_map(|r| match &r.event {
                crate::Event::Protocol { version } => Some(version.as_str()),
                _ => None,
            })
            .or(self.header.protocol_version.as_deref())
    }
}

impl Transcript {
    /// The message records in order, as `(record index, time µs, direction, exact JSON)`.
    pub fn messages(&self) -> impl Iterator<Item = (usize, u64, crate::Direction, &str)> + '_ {
        self.records
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match &r.event {
                crate::Event::Message { dir, msg, .. } => Some((i, r.t_us, *dir, msg.get())),
                _ => None,
            })
    }
}

/// The unterminated last line of a cut file, which was not a whole record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Byte offset of the dropped line's first byte.
    pub offset: usize,
    /// Number of bytes dropped (to the end of the input).
    pub bytes: usize,
    /// 1-based line number of the dropped line.
    pub line: usize,
    /// Why the line could not be kept (parser message).
    pub reason: String,
}

/// Options for [`read_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Skip malformed complete record lines (reported in [`Transcript::skipped`])
    /// instead of failing. The header is never optional.
    pub lenient: bool,
}

impl ReadOptions {
    /// Strict reading (the default).
    pub fn strict() -> Self {
        Self { lenient: false }
    }

    /// Lenient reading: malformed complete record lines are skipped and listed.
    pub fn lenient() -> Self {
        Self { lenient: true }
    }
}

/// A transcript could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transcript line {line} (byte offset {offset}): {kind}")]
pub struct TranscriptError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub offset: usize,
}

/// The kind of a [`TranscriptError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is empty: no header.
    #[error("empty input: no header line")]
    Empty,
    /// The input ends inside the header line (no `\n` after it).
    #[error("input ends inside the header line after {bytes} bytes")]
    TruncatedHeader {
        /// Bytes of the partial header.
        bytes: usize,
    },
    /// The header line is not a valid header.
    #[error("invalid header: {0}")]
    Header(String),
    /// The header names a format version this crate does not read.
    #[error(
        "unsupported transcript format version {found} (this reader supports {FORMAT_VERSION})"
    )]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
    },
    /// The line is not valid UTF-8.
    #[error("invalid UTF-8 after {valid_up_to} bytes of the line")]
    InvalidUtf8 {
        /// Bytes of the line that are valid UTF-8.
        valid_up_to: usize,
    },
    /// An empty line (the writer never writes one).
    #[error("empty line")]
    EmptyLine,
    /// The line is not a JSON record object (syntax error or unknown/mistyped field).
    #[error("invalid record at column {column}: {reason}")]
    Record {
        /// 1-based column serde_json reported.
        column: usize,
        /// serde_json's description.
        reason: String,
    },
    /// The record's fields do not fit its `kind` (missing or extra field).
    #[error("invalid record: {0}")]
    Fields(String),
    /// A line is longer than the streaming reader's limit ([`MAX_RECORD_LINE_BYTES`] by default).
    #[error("line longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// The underlying reader failed (streaming [`Reader`] only).
    #[error("I/O error: {0}")]
    Io(String),
}

/// Reads a whole transcript strictly (see the module rules).
///
/// # Errors
/// A [`TranscriptError`] for a missing/invalid header or a malformed complete
/// record line, with its line number and byte offset.
pub fn read(bytes: &[u8]) -> Result<Transcript, TranscriptError> {
    read_with(bytes, ReadOptions::strict())
}

/// Reads a whole transcript with options.
///
/// # Errors
/// As [`read`]; in lenient mode only header errors are returned.
pub fn read_with(bytes: &[u8], opts: ReadOptions) -> Result<Transcript, TranscriptError> {
    let (header, mut pos) = read_header(bytes)?;
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    let mut dropped = None;
    let mut line_no = 1usize;
    while pos < bytes.len() {
        line_no += 1;
        let rest = &bytes[pos..];
        match memchr_nl(rest) {
            Some(n) => {
                match parse_record(&rest[..n], line_no, pos) {
                    Ok(r) => records.push(r),
                    Err(e) if opts.lenient => skipped.push(e),
                    Err(e) => return Err(e),
                }
                pos += n + 1;
            }
            None => {
                match parse_record(rest, line_no, pos) {
                    Ok(r) => records.push(r),
                    Err(e) => {
                        dropped = Some(Dropped {
                            offset: pos,
                            bytes: rest.len(),
                            line: line_no,
                            reason: e.kind.to_string(),
                        })
                    }
                }
                pos = bytes.len();
            }
        }
    }
    Ok(Transcript {
        header,
        records,
        dropped,
        skipped,
    })
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

fn read_header(bytes: &[u8]) -> Result<(Header, usize), TranscriptError> {
    let err = |kind| TranscriptError {
        kind,
        line: 1,
        offset: 0,
    };
    if bytes.is_empty() {
        return Err(err(ErrorKind::Empty));
    }
    let n =
        memchr_nl(bytes).ok_or_else(|| err(ErrorKind::TruncatedHeader { bytes: bytes.len() }))?;
    Ok((parse_header(&bytes[..n])?, n + 1))
}

fn parse_header(line: &[u8]) -> Result<Header, TranscriptError> {
    let err = |kind| TranscriptError {
        kind,
        line: 1,
        offset: 0,
    };
    // Check the version first so a newer format gets a clear error.
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Version {
        mcptape_transcript: u32,
    }
    match serde_json::from_slice::<Version>(line) {
        Ok(v) if v.mcptape_transcript != FORMAT_VERSION => {
            return Err(err(ErrorKind::UnsupportedVersion {
                found: v.mcptape_transcript,
            }));
        }
        _ => {}
    }
    serde_json::from_slice::<Header>(line).map_err(|e| err(ErrorKind::Header(e.to_string())))
}

/// Parses one record line (without its `\n`).
fn parse_record(line: &[u8], line_no: usize, offset: usize) -> Result<Record, TranscriptError> {
    let err = |kind| TranscriptError {
        kind,
        line: line_no,
        offset,
    };
    if line.is_empty() {
        return Err(err(ErrorKind::EmptyLine));
    }
    let text = std::str::from_utf8(line).map_err(|e| {
        err(ErrorKind::InvalidUtf8 {
            valid_up_to: e.valid_up_to(),
        })
    })?;
    let od: OnDisk = serde_json::from_str(text).map_err(|e| {
        err(ErrorKind::Record {
            column: e.column(),
            reason: e.to_string(),
        })
    })?;
    od.into_record()
        .map_err(|e| err(ErrorKind::Fields(e.to_string())))
}

/// Streaming reader over a [`BufRead`]: reads the header in [`Reader::new`],
/// then yields records one at a time (an [`Iterator`] of
/// `Result<Record, TranscriptError>`). Same rules as [`read`] (strict); after the
/// iterator ends, [`Reader::dropped`] reports an unterminated tail. Lines longer
/// than the limit ([`MAX_RECORD_LINE_BYTES`] by default) are an error
/// ([`ErrorKind::LineTooLong`]) and end the iteration.
#[derive(Debug)]
pub struct Reader<R> {
    r: R,
    header: Header,
    max_line: usize,
    line_no: usize,
    offset: usize,
    dropped: Option<Dropped>,
    done: bool,
}

impl<R: BufRead> Reader<R> {
    /// Reads the header with the default line limit.
    ///
    /// # Errors
    /// As [`read`] for the header; [`ErrorKind::Io`] on read errors.
    pub fn new(r: R) -> Result<Self, TranscriptError> {
        Self::with_max_line(r, MAX_RECORD_LINE_BYTES)
    }

    /// Reads the header; lines longer than `max_line_bytes` (without `\n`) are an error.
    ///
    /// # Errors
    /// As [`Reader::new`], plus [`ErrorKind::LineTooLong`].
    pub fn with_max_line(mut r: R, max_line_bytes: usize) -> Result<Self, TranscriptError> {
        let mut buf = Vec::new();
        let terminated =
            read_line(&mut r, &mut buf, max_line_bytes).map_err(|kind| TranscriptError {
                kind,
                line: 1,
                offset: 0,
            })?;
        let header = match terminated {
            false if buf.is_empty() => {
                return Err(TranscriptError {
                    kind: ErrorKind::Empty,
                    line: 1,
                    offset: 0,
                });
            }
            false => {
                return Err(TranscriptError {
                    kind: ErrorKind::TruncatedHeader { bytes: buf.len() },
                    line: 1,
                    offset: 0,
                });
            }
            true => parse_header(&buf)?,
        };
        Ok(Self {
            r,
            header,
            max_line: max_line_bytes,
            line_no: 1,
            offset: buf.len() + 1,
            dropped: None,
            done: false,
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The dropped unterminated tail, once iteration has reached the end.
    pub fn dropped(&self) -> Option<&Dropped> {
        self.dropped.as_ref()
    }
}

/// Reads one line into `buf` (without `\n`); returns whether it ended with `\n`.
fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>, max: usize) -> Result<bool, ErrorKind> {
    buf.clear();
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ErrorKind::Io(e.to_string())),
        };
        if avail.is_empty() {
            return Ok(false);
        }
        let (take, found) = match memchr_nl(avail) {
            Some(n) => (n, true),
            None => (avail.len(), false),
        };
        if buf.len() + take > max {
            return Err(ErrorKind::LineTooLong { limit: max });
        }
        buf.extend_from_slice(&avail[..take]);
        r.consume(take + usize::from(found));
        if found {
            return Ok(true);
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, TranscriptError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.line_no += 1;
        let mut buf = Vec::new();
        let terminated = match read_line(&mut self.r, &mut buf, self.max_line) {
            Ok(t) => t,
            Err(kind) => {
                self.done = true;
                return Some(Err(TranscriptError {
                    kind,
                    line: self.line_no,
                    offset: self.offset,
                }));
            }
        };
        let offset = self.offset;
        self.offset += buf.len() + usize::from(terminated);
        if !terminated {
            self.done = true;
            if buf.is_empty() {
                return None;
            }
            return match parse_record(&buf, self.line_no, offset) {
                Ok(r) => Some(Ok(r)),
                Err(e) => {
                    self.dropped = Some(Dropped {
                        offset,
                        bytes: buf.len(),
                        line: self.line_no,
                        reason: e.kind.to_string(),
                    });
                    None
                }
            };
        }
        let res = parse_record(&buf, self.line_no, offset);
        if res.is_err() {
            self.done = true;
        }
        Some(res)
    }
}
