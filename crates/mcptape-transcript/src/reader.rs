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
//!   it parses as a whole record (the crash hit just before the `\n`). When it is
//!   a cut record ([`is_cut_record`]: an incomplete JSON value, or valid UTF-8 up
//!   to an incomplete UTF-8 sequence at its very end) it is dropped and reported
//!   in [`Transcript::dropped`] with its byte count. Since every record is one
//!   JSON object, no proper prefix of a record line parses, so a cut file reads
//!   back as exactly its complete records. Any other unterminated last line (an
//!   invalid byte inside it, a complete value that is not a record) is a
//!   malformed line like a complete one: an error, or skipped when lenient.
//! * Nothing here panics on any input (property-tested and fuzzed).

use std::io::BufRead;

use serde_json::value::RawValue;

use crate::model::{Direction, Event, FORMAT_VERSION, Header, HttpMeta, Record};
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

/// The words `mcptape check` and `inspect` use for [`Ending::NoExitRecord`].
pub const NO_EXIT_RECORD: &str = "recording ended without an exit record";

/// How a recording ended, as far as the file shows ([`Transcript::ending`],
/// [`TranscriptRef::ending`]). The stdio recorder writes an `exit` record last,
/// when the server has exited and every forwarded line is recorded; HTTP
/// recordings have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending<'a> {
    /// The last `exit` record, at 0-based record index `record`.
    Exit {
        /// Index of the record in [`Transcript::records`].
        record: usize,
        /// The server's exit code, if it exited normally.
        code: Option<i32>,
        /// The signal that ended the server, if one did: the one that killed it, or, beside
        /// `code`, the one the recorder forwarded to it before it exited ([`Event::Exit`]).
        signal: Option<i32>,
    },
    /// No `exit` record ([`NO_EXIT_RECORD`]): the recorder was killed (or the
    /// file was cut or made by hand). `dropped` is the cut last line, when the
    /// end came mid-record; `None` when it came on a line boundary.
    NoExitRecord {
        /// The dropped unterminated tail, if any.
        dropped: Option<&'a Dropped>,
    },
}

fn ending_of<'a>(
    exits: impl DoubleEndedIterator<Item = (usize, Option<&'a Event>)>,
    dropped: Option<&'a Dropped>,
) -> Ending<'a> {
    exits
        .rev()
        .find_map(|(record, e)| match e {
            Some(Event::Exit { code, signal }) => Some(Ending::Exit {
                record,
                code: *code,
                signal: *signal,
            }),
            _ => None,
        })
        .unwrap_or(Ending::NoExitRecord { dropped })
}

impl Transcript {
    /// Whether an `exit` record was seen (the last one), else what was dropped.
    pub fn ending(&self) -> Ending<'_> {
        ending_of(
            self.records.iter().map(|r| Some(&r.event)).enumerate(),
            self.dropped.as_ref(),
        )
    }
}

impl TranscriptRef<'_> {
    /// Whether an `exit` record was seen (the last one), else what was dropped.
    pub fn ending(&self) -> Ending<'_> {
        ending_of(
            self.records.iter().map(RecordRef::owned_event).enumerate(),
            self.dropped.as_ref(),
        )
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
    /// The input starts with a UTF-8 byte order mark (`EF BB BF`), as some
    /// editors save files: a transcript is JSON Lines, UTF-8 without a BOM
    /// (RFC 8259 §8.1: implementations MUST NOT add one).
    #[error(
        "the file starts with a UTF-8 byte order mark (EF BB BF): a transcript is UTF-8 without one (RFC 8259 §8.1); remove the first 3 bytes"
    )]
    ByteOrderMark,
    /// The header's `startedAt` is not an RFC 3339 date-time with an offset
    /// (`2026-11-30T00:00:00Z`; the writer always writes one, and `export har`
    /// dates every entry from it).
    #[error("header startedAt {0:?} is not an RFC 3339 date-time (RFC 3339 §5.6)")]
    StartedAt(String),
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
    let (header, records, dropped, skipped) = read_lines(bytes, opts, parse_record)?;
    Ok(Transcript {
        header,
        records,
        dropped,
        skipped,
    })
}

/// Header, records, dropped tail and skipped lines of a whole transcript.
type Lines<T> = (Header, Vec<T>, Option<Dropped>, Vec<TranscriptError>);

/// The one line loop of [`read_with`] and [`read_borrowed`]: `memchr` finds
/// each `\n`, `parse` turns the line (without it) into a record.
fn read_lines<'a, T>(
    bytes: &'a [u8],
    opts: ReadOptions,
    parse: impl Fn(&'a [u8], usize, usize) -> Result<T, TranscriptError>,
) -> Result<Lines<T>, TranscriptError> {
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
                match parse(&rest[..n], line_no, pos) {
                    Ok(r) => records.push(r),
                    Err(e) if opts.lenient => skipped.push(e),
                    Err(e) => return Err(e),
                }
                pos += n + 1;
            }
            None => {
                match parse(rest, line_no, pos) {
                    Ok(r) => records.push(r),
                    Err(e) if is_cut_record(rest) => {
                        dropped = Some(Dropped {
                            offset: pos,
                            bytes: rest.len(),
                            line: line_no,
                            reason: e.kind.to_string(),
                        })
                    }
                    Err(e) if opts.lenient => skipped.push(e),
                    Err(e) => return Err(e),
                }
                pos = bytes.len();
            }
        }
    }
    Ok((header, records, dropped, skipped))
}

/// A record of [`read_borrowed`]: a message record whose `msg` is borrowed
/// from the input (no copy of a 160 MB message), or any other record as
/// [`read`] gives it.
#[derive(Debug, Clone)]
pub enum RecordRef<'a> {
    /// A `kind: "message"` record with a `msg` member, borrowed.
    Message {
        /// Microseconds since the recording started.
        t_us: u64,
        /// Who sent it.
        dir: Direction,
        /// The message, byte-exact, borrowed from the input: one JSON value,
        /// checked by serde_json, or on the canonical fast path of
        /// [`read_borrowed_with`] by the caller's strict scanner.
        msg: &'a str,
        /// HTTP details for Streamable HTTP recordings.
        http: Option<HttpMeta>,
    },
    /// Any other record (including a message written as `msgText`).
    Owned(Record),
}

impl RecordRef<'_> {
    /// The record's `tUs`: microseconds since the recording started, as
    /// written (any `u64`; see [`crate::MAX_RECORDED_T_US`]).
    pub fn t_us(&self) -> u64 {
        match self {
            RecordRef::Message { t_us, .. } => *t_us,
            RecordRef::Owned(r) => r.t_us,
        }
    }

    /// The message JSON, for message records.
    pub fn msg(&self) -> Option<&str> {
        match self {
            RecordRef::Message { msg, .. } => Some(msg),
            RecordRef::Owned(r) => r.msg(),
        }
    }

    /// The direction of a message, noise or HTTP record.
    pub fn dir(&self) -> Option<Direction> {
        match self {
            RecordRef::Message { dir, .. } => Some(*dir),
            RecordRef::Owned(r) => r.dir(),
        }
    }

    /// The message as `(dir, exact JSON, http)`, for message records.
    pub fn message(&self) -> Option<(Direction, &str, Option<&HttpMeta>)> {
        match self {
            RecordRef::Message { dir, msg, http, .. } => Some((*dir, *msg, http.as_ref())),
            RecordRef::Owned(Record {
                event: Event::Message { dir, msg, http, .. },
                ..
            }) => Some((*dir, msg.get(), http.as_ref())),
            RecordRef::Owned(_) => None,
        }
    }

    /// The event of a record that is not a borrowed message.
    pub fn owned_event(&self) -> Option<&Event> {
        match self {
            RecordRef::Message { .. } => None,
            RecordRef::Owned(r) => Some(&r.event),
        }
    }
}

/// A transcript read by [`read_borrowed`]: as [`Transcript`], with message
/// records borrowing from the input.
#[derive(Debug, Clone)]
pub struct TranscriptRef<'a> {
    /// The header line.
    pub header: Header,
    /// Every complete record, in file order.
    pub records: Vec<RecordRef<'a>>,
    /// The unterminated tail that was dropped, if the file was cut mid-line.
    pub dropped: Option<Dropped>,
    /// Malformed complete lines skipped in lenient mode.
    pub skipped: Vec<TranscriptError>,
}

/// Reads a whole transcript like [`read_with`] (same rules, same errors, same
/// records), but a message record's `msg` is borrowed from `bytes` instead of
/// copied: a transcript costs its own size in memory, not twice. Each line is
/// scanned once by serde_json (the message skipped as a raw value, at memory
/// speed); a line that is not a plain message record goes through
/// [`read_with`]'s parser.
///
/// # Errors
/// As [`read_with`].
pub fn read_borrowed(
    bytes: &[u8],
    opts: ReadOptions,
) -> Result<TranscriptRef<'_>, TranscriptError> {
    read_borrowed_with(bytes, opts, |_| false)
}

/// [`read_borrowed`] with a fast path for the writer's canonical message line
/// without `http` (`{"tUs":N,"kind":"message","dir":"c2s"|"s2c","msg":MSG}`,
/// the member order [`crate::writer`] writes): the envelope is matched byte
/// by byte, MSG is checked as UTF-8 and handed to `validate`, which must
/// return `true` only when MSG is one strict JSON value (RFC 8259; the caller
/// scans it with its own strict scanner, e.g. `mcptape_wire::codec::scan_message`,
/// and may keep what it learnt). On `false`, or for any other line, the line
/// takes [`read_borrowed`]'s serde path, with the same records and errors: so
/// a 160 MB message is read once, by the caller's scanner, and never by serde.
///
/// # Errors
/// As [`read_with`].
pub fn read_borrowed_with<'a>(
    bytes: &'a [u8],
    opts: ReadOptions,
    mut validate: impl FnMut(&'a str) -> bool,
) -> Result<TranscriptRef<'a>, TranscriptError> {
    let parse = std::cell::RefCell::new(|line: &'a [u8], line_no: usize, offset: usize| {
        parse_record_line(line, line_no, offset, &mut validate)
    });
    let (header, records, dropped, skipped) =
        read_lines(bytes, opts, |l, n, o| (parse.borrow_mut())(l, n, o))?;
    Ok(TranscriptRef {
        header,
        records,
        dropped,
        skipped,
    })
}

/// Parses one record line (without its `\n`) as [`read_borrowed_with`] does,
/// for a caller that streams the lines itself (`mcptape check` reads a
/// transcript line by line, holding one line at a time): the writer's
/// canonical message line is matched byte by byte and its `msg` handed to
/// `validate` (see [`read_borrowed_with`]); any other line, or a `msg`
/// `validate` refuses, takes the serde path. `line_no` (1-based) and
/// `offset` (of the line's first byte) are what an error carries.
///
/// # Errors
/// As a malformed line of [`read_with`]: [`ErrorKind::EmptyLine`],
/// [`ErrorKind::InvalidUtf8`], [`ErrorKind::Record`], [`ErrorKind::Fields`].
pub fn parse_record_line<'a>(
    line: &'a [u8],
    line_no: usize,
    offset: usize,
    validate: impl FnMut(&'a str) -> bool,
) -> Result<RecordRef<'a>, TranscriptError> {
    if let Some((t_us, dir, msg)) = canonical_valid(line, validate) {
        return Ok(RecordRef::Message {
            t_us,
            dir,
            msg,
            http: None,
        });
    }
    parse_record_ref(line, line_no, offset)
}

/// [`parse_record_line`] written into `out` (whatever record or error it
/// held is dropped): the record of a canonical message line is built where
/// it lies, not returned and copied in (a caller that keeps its framed
/// lines in place, `mcptape check`'s pipeline, moves no record per line).
/// `out` ends as `parse_record_line` of the same arguments returns.
pub fn parse_record_line_into<'a>(
    line: &'a [u8],
    line_no: usize,
    offset: usize,
    validate: impl FnMut(&'a str) -> bool,
    out: &mut Result<RecordRef<'a>, TranscriptError>,
) {
    match canonical_valid(line, validate) {
        Some((t_us, dir, msg)) => {
            *out = Ok(RecordRef::Message {
                t_us,
                dir,
                msg,
                http: None,
            });
        }
        None => *out = parse_record_ref(line, line_no, offset),
    }
}

/// The writer's canonical message line ([`canonical_message`]) whose msg
/// is UTF-8 and accepted by `validate` ([`parse_record_line`]): its `tUs`,
/// direction and msg; `None` for any other line (the serde path's).
#[inline]
fn canonical_valid<'a>(
    line: &'a [u8],
    mut validate: impl FnMut(&'a str) -> bool,
) -> Option<(u64, Direction, &'a str)> {
    // simdutf8's `basic` check: the same answer as `std::str::from_utf8`
    // (valid or not; the slow path reports where), at SIMD speed.
    let (t_us, dir, msg) = canonical_message(line)?;
    let msg = simdutf8::basic::from_utf8(msg).ok()?;
    validate(msg).then_some((t_us, dir, msg))
}

/// Parses the header line (line 1, without its `\n`) as [`read`] does, for a
/// caller that streams the lines itself ([`parse_record_line`]). An empty
/// input and a header without `\n` are the caller's to report
/// ([`ErrorKind::Empty`], [`ErrorKind::TruncatedHeader`]).
///
/// # Errors
/// [`ErrorKind::UnsupportedVersion`], [`ErrorKind::Header`] or
/// [`ErrorKind::StartedAt`], at line 1.
pub fn parse_header_line(line: &[u8]) -> Result<Header, TranscriptError> {
    parse_header(line)
}

/// The direction of the writer's canonical message line
/// (`{"tUs":…,"kind":"message","dir":…,"msg":…}`, without its `\n`), read
/// from its first bytes, the message unread; `None` for any other line.
/// [`parse_record_line`] gives such a line as a message of this direction,
/// or an error (its serde path refuses a repeated `kind` or `dir`).
pub fn canonical_message_dir(line: &[u8]) -> Option<Direction> {
    canonical_message(line).map(|(_, dir, _)| dir)
}

/// Splits the writer's canonical message line without `http` into
/// `(tUs, dir, msg bytes)`; `None` for any other shape. Only the envelope is
/// matched: the msg bytes are not validated here.
fn canonical_message(line: &[u8]) -> Option<(u64, Direction, &[u8])> {
    let rest = line.strip_prefix(b"{\"tUs\":")?;
    // The digits and their value in one pass; `None` past 20 digits or
    // past `u64::MAX` (as `str::parse` refuses it): 19 digits cannot
    // overflow, only a 20th is checked.
    let mut digits = 0;
    let mut t_us = 0u64;
    while let Some(&b) = rest.get(digits) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        t_us = match digits {
            0..19 => t_us * 10 + u64::from(d),
            19 => t_us.checked_mul(10)?.checked_add(u64::from(d))?,
            _ => return None,
        };
        digits += 1;
    }
    if digits == 0 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let rest = rest[digits..].strip_prefix(b",\"kind\":\"message\",\"dir\":\"")?;
    let (dir, rest) = if let Some(r) = rest.strip_prefix(b"c2s\",\"msg\":") {
        (Direction::C2s, r)
    } else {
        (Direction::S2c, rest.strip_prefix(b"s2c\",\"msg\":")?)
    };
    let msg = rest.strip_suffix(b"}")?;
    let json_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let end = msg.iter().rposition(|b| !json_ws(b))? + 1;
    let start = msg.iter().position(|b| !json_ws(b))?;
    Some((t_us, dir, &msg[start..end]))
}

fn parse_record_ref(
    line: &[u8],
    line_no: usize,
    offset: usize,
) -> Result<RecordRef<'_>, TranscriptError> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum MessageKind {
        Message,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct MessageLine<'a> {
        t_us: u64,
        #[allow(dead_code)]
        kind: MessageKind,
        dir: Direction,
        #[serde(borrow)]
        msg: &'a RawValue,
        #[serde(default)]
        http: Option<HttpMeta>,
    }
    if let Ok(text) = std::str::from_utf8(line)
        && let Ok(m) = serde_json::from_str::<MessageLine<'_>>(text)
    {
        return Ok(RecordRef::Message {
            t_us: m.t_us,
            dir: m.dir,
            msg: m.msg.get(),
            http: m.http,
        });
    }
    parse_record(line, line_no, offset).map(RecordRef::Owned)
}

/// Whether `line`, the unterminated last line of a transcript that did not
/// parse as a record, is a record cut by a crash (to be dropped and reported
/// as [`Dropped`]) rather than a malformed line: either valid UTF-8 up to an
/// incomplete UTF-8 sequence at its very end (the cut fell inside a
/// multi-byte character, RFC 3629 §3), or valid UTF-8 whose JSON value is
/// incomplete (the input ends inside it, RFC 8259 §2). An invalid byte
/// anywhere else, or a complete JSON value that is not a record, is not a cut:
/// [`ErrorKind::InvalidUtf8`] (with the bytes before it) or
/// [`ErrorKind::Record`] / [`ErrorKind::Fields`] as for a complete line.
pub fn is_cut_record(line: &[u8]) -> bool {
    match std::str::from_utf8(line) {
        // `error_len() == None`: the input ended inside a sequence.
        Err(e) => e.error_len().is_none(),
        Ok(text) => serde_json::from_str::<serde::de::IgnoredAny>(text)
            .err()
            .is_some_and(|e| e.is_eof()),
    }
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', b)
}

/// The 1-based file line number of every record of `t`, in order: records fill
/// the lines after the header (line 1) that were not skipped as malformed
/// ([`Transcript::skipped`]). The one line-numbering rule shared by `check`
/// and `inspect`.
pub fn record_lines(t: &Transcript) -> Vec<usize> {
    lines_of_records(&t.skipped, t.records.len())
}

/// [`record_lines`] from the skipped lines and the record count (for
/// [`TranscriptRef`] as for [`Transcript`]).
pub fn lines_of_records(skipped: &[TranscriptError], records: usize) -> Vec<usize> {
    let mut skipped: Vec<usize> = skipped.iter().map(|e| e.line).collect();
    skipped.sort_unstable();
    let mut skipped = skipped.into_iter().peekable();
    let mut lines = Vec::with_capacity(records);
    let mut next = 2usize;
    for _ in 0..records {
        while skipped.next_if_eq(&next).is_some() {
            next += 1;
        }
        lines.push(next);
        next += 1;
    }
    lines
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
    if line.starts_with(b"\xEF\xBB\xBF") {
        return Err(err(ErrorKind::ByteOrderMark));
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Err(err(ErrorKind::Header(
            "line 1 is blank: a transcript starts with its header line ({\"mcptapeTranscript\":1,…})"
                .into(),
        )));
    }
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
    let header = serde_json::from_slice::<Header>(line)
        .map_err(|e| err(ErrorKind::Header(e.to_string())))?;
    if crate::time::parse_rfc3339_us(&header.started_at).is_err() {
        return Err(err(ErrorKind::StartedAt(header.started_at)));
    }
    Ok(header)
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
        // A second header line (two transcripts joined by `cat`): said as such, not as
        // serde's "unknown field `mcptapeTranscript`".
        let header = text.trim_start().starts_with("{\"mcptapeTranscript\"");
        err(ErrorKind::Record {
            column: e.column(),
            reason: if header {
                "a transcript header after line 1: two transcripts joined into one file? \
                 (check each on its own)"
                    .to_owned()
            } else {
                e.to_string()
            },
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
                Err(e) if !is_cut_record(&buf) => Some(Err(e)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The canonical fast path reads `tUs` digit by digit: `u64::MAX` is
    /// read, one past it is refused as the serde path refuses it.
    #[test]
    fn canonical_message_t_us_at_u64_max_and_one_past() {
        let line = |t: &str| {
            format!(
                r#"{{"tUs":{t},"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","method":"x"}}}}"#
            )
        };
        let max = line("18446744073709551615");
        assert_eq!(
            canonical_message(max.as_bytes()).map(|m| m.0),
            Some(u64::MAX)
        );
        match parse_record_line(max.as_bytes(), 2, 0, |_| true) {
            Ok(RecordRef::Message { t_us, .. }) => assert_eq!(t_us, u64::MAX),
            other => panic!("{other:?}"),
        }
        let past = line("18446744073709551616");
        assert!(canonical_message(past.as_bytes()).is_none());
        let e = parse_record_line(past.as_bytes(), 2, 0, |_| true).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Record { .. }), "{e}");
        assert_eq!(
            canonical_message(line("0").as_bytes()).map(|m| m.0),
            Some(0)
        );
        assert!(canonical_message(line("01").as_bytes()).is_none());
        // Every length up to 22 digits, at and around the 19-digit and
        // `u64::MAX` bounds: the value `str::parse` gives, or none.
        let mut numbers: Vec<String> = (1..=22).map(|n| "9".repeat(n)).collect();
        numbers.extend((1..=22).map(|n| format!("1{}", "0".repeat(n - 1))));
        numbers.extend(
            [
                "9999999999999999999",
                "10000000000000000000",
                "18446744073709551614",
                "18446744073709551615",
                "18446744073709551616",
                "18446744073709551625",
                "19000000000000000000",
                "99999999999999999999",
                "00",
                "0123",
                "1234567",
            ]
            .map(str::to_owned),
        );
        for t in numbers {
            let want = t
                .parse::<u64>()
                .ok()
                .filter(|_| t == "0" || !t.starts_with('0'));
            assert_eq!(
                canonical_message(line(&t).as_bytes()).map(|m| m.0),
                want,
                "{t}"
            );
        }
    }

    /// `parse_record_line_into` over a slot holding any earlier record or
    /// error ends as `parse_record_line` returns, for every ordered pair of
    /// lines (canonical, serde path, refused by `validate`, malformed).
    #[test]
    fn parse_record_line_into_a_used_slot_equals_a_fresh_parse() {
        let lines: [&[u8]; 7] = [
            br#"{"tUs":5,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","method":"x"}}"#,
            br#"{"tUs":6,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}},"http":{"exchange":0}}"#,
            br#"{"tUs":7,"kind":"stderr","line":"hello"}"#,
            br#"{"tUs":8,"kind":"message","dir":"c2s","msg":[1,2]}"#,
            br#"{"tUs":8,"kind":"mess"#,
            b"not a record",
            b"",
        ];
        let validate = |m: &str| !m.starts_with('[');
        for a in lines {
            for b in lines {
                let mut slot = parse_record_line(a, 2, 0, validate);
                parse_record_line_into(b, 3, 9, validate, &mut slot);
                let fresh = parse_record_line(b, 3, 9, validate);
                assert_eq!(format!("{slot:?}"), format!("{fresh:?}"));
            }
        }
    }

    const HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#;
    const REC: &str = r#"{"tUs":1,"kind":"stderr","line":"x"}"#;

    /// The direction of a canonical message line, read without its
    /// message; other lines (another kind, `tUs` not first, a leading
    /// zero) give none.
    #[test]
    fn canonical_message_dir_reads_only_the_canonical_prefix() {
        let s2c = br#"{"tUs":12,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}"#;
        assert_eq!(canonical_message_dir(s2c), Some(Direction::S2c));
        let c2s = br#"{"tUs":0,"kind":"message","dir":"c2s","msg":not even json}"#;
        assert_eq!(canonical_message_dir(c2s), Some(Direction::C2s));
        for other in [
            REC.as_bytes(),
            br#"{"kind":"message","tUs":1,"dir":"s2c","msg":{}}"#,
            br#"{"tUs":01,"kind":"message","dir":"s2c","msg":{}}"#,
        ] {
            assert_eq!(canonical_message_dir(other), None, "{other:?}");
        }
    }

    /// Records after two consecutive malformed lines keep their file line numbers.
    #[test]
    fn record_lines_skip_malformed_lines() {
        let text = format!("{HEADER}\n{REC}\nnot json\n{{\n{REC}\n{REC}\n");
        let t = read_with(text.as_bytes(), ReadOptions::lenient()).unwrap();
        assert_eq!(t.skipped.len(), 2);
        assert_eq!(record_lines(&t), vec![2, 5, 6]);
    }

    /// The borrowed reader gives the same records, drops and skips as the owned one.
    #[test]
    fn read_borrowed_matches_read_with() {
        let msg =
            r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}"#;
        let text_msg = r#"{"tUs":4,"kind":"message","dir":"c2s","msgText":"{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}"}"#;
        let text = format!("{HEADER}\n{msg}\nbad\n{REC}\n{text_msg}\n{msg}");
        let owned = read_with(text.as_bytes(), ReadOptions::lenient()).unwrap();
        let borrowed = read_borrowed(text.as_bytes(), ReadOptions::lenient()).unwrap();
        assert_eq!(owned.skipped.len(), 1);
        assert_eq!(owned.records.len(), 4);
        assert_eq!(borrowed.records.len(), 4);
        assert!(matches!(
            borrowed.records[0],
            RecordRef::Message { t_us: 3, .. }
        ));
        assert!(matches!(borrowed.records[1], RecordRef::Owned(_)));
        assert!(matches!(borrowed.records[2], RecordRef::Owned(_)));
        assert!(matches!(
            borrowed.records[3],
            RecordRef::Message { t_us: 3, .. }
        ));
        for (o, b) in owned.records.iter().zip(&borrowed.records) {
            assert_eq!(o.msg(), b.msg());
            assert_eq!(o.dir(), b.dir());
        }
        assert_eq!(owned.skipped, borrowed.skipped);
        assert_eq!(owned.dropped, borrowed.dropped);
        assert_eq!(lines_of_records(&borrowed.skipped, 4), vec![2, 4, 5, 6]);
    }

    /// The canonical fast path hands exactly the msg text to the validator and gives the serde
    /// path's records; a rejected or non-canonical line goes through serde with the same result.
    #[test]
    fn read_borrowed_with_canonical_fast_path_matches_serde_path() {
        let msg =
            r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}"#;
        let spaced = r#"{"tUs": 5, "kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"m"}}"#;
        let bad_json = r#"{"tUs":6,"kind":"message","dir":"c2s","msg":{"jsonrpc":}"#;
        let text = format!("{HEADER}\n{msg}\n{spaced}\n{bad_json}\n{msg}\n");
        let mut seen = Vec::new();
        let fast = read_borrowed_with(text.as_bytes(), ReadOptions::lenient(), |m| {
            seen.push(m.to_owned());
            m.contains("result")
        })
        .unwrap();
        let slow = read_borrowed(text.as_bytes(), ReadOptions::lenient()).unwrap();
        assert_eq!(
            seen,
            vec![
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
                // The line's last `}` closes the record: the validator sees the cut message.
                r#"{"jsonrpc":"#.to_owned(),
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            ]
        );
        assert_eq!(fast.records.len(), 3);
        assert_eq!(slow.records.len(), 3);
        for (f, s) in fast.records.iter().zip(&slow.records) {
            assert_eq!(f.msg(), s.msg());
            assert_eq!(f.dir(), s.dir());
        }
        assert_eq!(fast.skipped, slow.skipped);
        assert_eq!(fast.skipped[0].line, 4);
    }

    #[test]
    fn record_lines_without_skips_count_from_two() {
        let text = format!("{HEADER}\n{REC}\n{REC}\n");
        let t = read(text.as_bytes()).unwrap();
        assert_eq!(record_lines(&t), vec![2, 3]);
    }
}

#[cfg(test)]
mod ending_tests {
    use super::*;

    const HEADER: &str = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#;
    const MSG: &str =
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#;
    const EXIT: &str = r#"{"tUs":2,"kind":"exit","signal":9}"#;

    fn both(text: &str) -> (String, String) {
        let owned = read(text.as_bytes()).unwrap();
        let borrowed = read_borrowed(text.as_bytes(), ReadOptions::strict()).unwrap();
        (
            format!("{:?}", owned.ending()),
            format!("{:?}", borrowed.ending()),
        )
    }

    #[test]
    fn ending_is_the_last_exit_record() {
        let (a, b) = both(&format!("{HEADER}\n{MSG}\n{EXIT}\n"));
        assert_eq!(a, "Exit { record: 1, code: None, signal: Some(9) }");
        assert_eq!(a, b);
    }

    /// A kill on a line boundary: no exit record, nothing dropped.
    #[test]
    fn no_exit_record_on_a_line_boundary_drops_nothing() {
        let t = read(format!("{HEADER}\n{MSG}\n").as_bytes()).unwrap();
        assert_eq!(t.ending(), Ending::NoExitRecord { dropped: None });
        let (a, b) = both(&format!("{HEADER}\n{MSG}\n"));
        assert_eq!(a, b);
    }

    /// A kill mid-record: no exit record, and the cut line is what was dropped.
    #[test]
    fn no_exit_record_mid_record_names_the_dropped_tail() {
        let text = format!("{HEADER}\n{MSG}\n{}", &MSG[..20]);
        let t = read(text.as_bytes()).unwrap();
        match t.ending() {
            Ending::NoExitRecord { dropped: Some(d) } => {
                assert_eq!((d.line, d.bytes), (3, 20));
            }
            other => panic!("{other:?}"),
        }
    }

    /// An invalid byte inside the unterminated last line is a malformed line
    /// (an error strictly, skipped leniently), not a cut: only an incomplete
    /// sequence at the very end, or an incomplete value, is dropped.
    #[test]
    fn unterminated_last_line_with_invalid_utf8_is_malformed_not_cut() {
        let bad = format!("{HEADER}\n{MSG}\n").into_bytes();
        let invalid = [
            &bad[..],
            b"{\"tUs\":2,\"kind\":\"stderr\",\"line\":\"a\xffb\"}",
        ]
        .concat();
        let e = read(&invalid).unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.offset, bad.len());
        assert_eq!(e.kind, ErrorKind::InvalidUtf8 { valid_up_to: 34 });
        let t = read_with(&invalid, ReadOptions::lenient()).unwrap();
        assert_eq!(
            (t.records.len(), t.dropped.as_ref(), t.skipped.len()),
            (1, None, 1)
        );
        let mut r = Reader::new(&invalid[..]).unwrap();
        assert!(r.next().unwrap().is_ok());
        assert_eq!(
            r.next().unwrap().unwrap_err().kind,
            ErrorKind::InvalidUtf8 { valid_up_to: 34 }
        );
        assert!(r.next().is_none());
        assert_eq!(r.dropped(), None);

        let cut_char = [
            &bad[..],
            b"{\"tUs\":2,\"kind\":\"stderr\",\"line\":\"a\xe2\x82",
        ]
        .concat();
        let cut_value = [&bad[..], b"{\"tUs\":2,\"kind\":\"std"].concat();
        for cut in [cut_char, cut_value] {
            let t = read(&cut).unwrap();
            let d = t.dropped.expect("a cut record is dropped");
            assert_eq!(
                (d.line, d.offset, d.bytes),
                (3, bad.len(), cut.len() - bad.len())
            );
            let mut r = Reader::new(&cut[..]).unwrap();
            assert!(r.next().unwrap().is_ok());
            assert!(r.next().is_none());
            assert_eq!(r.dropped().map(|d| d.bytes), Some(cut.len() - bad.len()));
        }
        assert!(is_cut_record(b"{\"a\":\"\xe2\x82"));
        assert!(is_cut_record(b"{\"a\":tr"));
        assert!(!is_cut_record(b"{\"a\":\"\xff\"}"));
        assert!(!is_cut_record(b"{\"a\":1}x"));
        assert!(!is_cut_record(b"\xff{\"a\":\"\xe2\x82"));
    }
}
