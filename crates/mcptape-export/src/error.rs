//! The error type of `mcptape-export`: an [`ExportErrorKind`] with the
//! position it happened at (file, 1-based line).

use std::fmt;

/// An export or import failure: what ([`ExportErrorKind`]) and where
/// (`file`, 1-based `line`; line 0 when the error is not about one line).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportError {
    /// What went wrong.
    pub kind: ExportErrorKind,
    /// The file it concerns (transcript, k6 output), when known.
    pub file: Option<String>,
    /// 1-based line in `file` (a transcript's header is line 1, record `i` is
    /// line `i + 2`); 0 when not about one line.
    pub line: usize,
}

impl ExportError {
    /// An error not tied to a file.
    pub fn new(kind: ExportErrorKind) -> Self {
        ExportError {
            kind,
            file: None,
            line: 0,
        }
    }

    /// An error at `line` of `file`.
    pub fn at(kind: ExportErrorKind, file: impl Into<String>, line: usize) -> Self {
        ExportError {
            kind,
            file: Some(file.into()),
            line,
        }
    }

    /// The same error, attributed to `file` (keeps the line).
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), 0) => write!(f, "{file}: {}", self.kind),
            (Some(file), line) => write!(f, "{file}:{line}: {}", self.kind),
            (None, 0) => write!(f, "{}", self.kind),
            (None, line) => write!(f, "line {line}: {}", self.kind),
        }
    }
}

impl std::error::Error for ExportError {}

/// What went wrong in an export or an import.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportErrorKind {
    /// The transcript could not be read as an mcptape transcript.
    #[error("not a readable mcptape transcript: {0}")]
    Transcript(String),
    /// The transcript was recorded over stdio: k6 speaks HTTP only.
    #[error(
        "the transcript was recorded over {transport}: `export k6` needs a Streamable HTTP recording (`mcptape record --listen` or `crawl --url`)"
    )]
    NotHttp {
        /// The recorded transport (`stdio`).
        transport: String,
    },
    /// The transcript header names no server URL (the script's default target).
    #[error("the transcript header has no server.url (the k6 script's default MCP_URL)")]
    NoUrl,
    /// The recording has no request to replay besides the handshake (issue 27: a recording
    /// without `resources/read` but with other requests is exported, without turns).
    #[error("the transcript has no recorded request to replay besides the handshake")]
    NoReads,
    /// The recording has no successful handshake (`initialize` or
    /// `server/discover` answered with a result), so the era is unknown.
    #[error(
        "the transcript has no handshake answered with a result (initialize or server/discover)"
    )]
    NoHandshake,
    /// A client-to-server message is not a JSON-RPC 2.0 message.
    #[error("client message is not JSON-RPC 2.0: {0}")]
    BadMessage(String),
    /// A flag value is out of its range or malformed.
    #[error("{flag} {value}: {reason}")]
    BadFlag {
        /// The flag (`--parallel`).
        flag: &'static str,
        /// The value as typed.
        value: String,
        /// Why it is refused, with the limit.
        reason: String,
    },
    /// An `--slo` item is malformed.
    #[error("--slo {item:?}: {reason}")]
    BadSlo {
        /// The item as typed (`read.p99<50ms`).
        item: String,
        /// Why it is refused and what is accepted.
        reason: String,
    },
    /// More k6 output files than [`crate::k6::import::MAX_FILES`].
    #[error("{count} k6 output files: at most {max}")]
    TooManyFiles {
        /// Files given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// `export har` got a stdio recording: HAR describes HTTP exchanges.
    #[error(
        "the transcript was recorded over {transport}: `export har` needs a Streamable HTTP recording (`mcptape record --listen` or `crawl --url`)"
    )]
    HarNotHttp {
        /// The recorded transport (`stdio`).
        transport: String,
    },
    /// The file is not a HAR document (JSON with a `log` of `version`,
    /// `creator`, `entries`); serde's reason with line and column.
    #[error("not a HAR 1.x document: {0}")]
    NotHar(String),
    /// `log.version` is not `1.1` or `1.2`.
    #[error("HAR log.version {0:?}: only 1.1 and 1.2 are read")]
    HarVersion(String),
    /// More entries than [`crate::har_import::MAX_ENTRIES`].
    #[error("{count} HAR entries: at most {max}")]
    HarTooManyEntries {
        /// Entries in the log.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// An entry's `startedDateTime` is not RFC 3339, or a timing is not a
    /// finite number (−1 allowed where HAR allows it).
    #[error("HAR entry {entry}: {what} {value:?} is not valid")]
    HarBadTime {
        /// 0-based index in `log.entries`.
        entry: usize,
        /// The field (`startedDateTime`, `timings.wait`).
        what: &'static str,
        /// The value as found.
        value: String,
    },
    /// An entry's `content.text` with `encoding: base64` is not base64
    /// (RFC 4648 §4) or not UTF-8 once decoded, or has another `encoding`.
    #[error("HAR entry {entry}: response content: {reason}")]
    HarBadContent {
        /// 0-based index in `log.entries`.
        entry: usize,
        /// Why.
        reason: String,
    },
    /// An entry's `text/event-stream` content could not be parsed (an event
    /// over the SSE parser's limit).
    #[error("HAR entry {entry}: event stream: {reason}")]
    HarBadSse {
        /// 0-based index in `log.entries`.
        entry: usize,
        /// The SSE parser's reason.
        reason: String,
    },
    /// The log has no MCP entry: no POST with a JSON-RPC 2.0 body.
    #[error("no MCP entry in the HAR ({entries} entries, none a POST with a JSON-RPC body)")]
    HarNoMcp {
        /// Entries in the log.
        entries: usize,
    },
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// An input path names a FIFO, socket or device, not a regular file: refused at once by the
    /// shared non-blocking opener ([`mcptape_transcript::file::open_regular`]) instead of blocking
    /// the open or the read forever (line 0).
    #[error("not a regular file (FIFO, socket or device)")]
    NotRegularFile,
    /// A k6 output line longer than [`crate::k6::import::MAX_LINE_BYTES`].
    #[error("line longer than {max} bytes")]
    LineTooLong {
        /// The limit, bytes.
        max: usize,
    },
    /// A k6 output line is not one JSON object of k6's `--out json` format.
    #[error("not a k6 JSON output line: {0}")]
    NotK6Json(String),
    /// A k6 output line of a `type` other than `Metric` or `Point`.
    #[error("unknown k6 output line type {0:?} (expected \"Metric\" or \"Point\")")]
    UnknownLineType(String),
    /// A point of an mcptape metric with a value that is not a finite number ≥ 0.
    #[error("metric {metric}: value {value} is not a finite number >= 0")]
    BadValue {
        /// The metric name (`mcp_read`).
        metric: String,
        /// The value as found.
        value: String,
    },
    /// A time stamp that is not RFC 3339 (`2026-12-01T22:10:00.123456789Z`).
    #[error("time {0:?} is not an RFC 3339 date-time")]
    BadTime(String),
    /// The k6 outputs hold no point of mcptape's metrics (`mcp_read`,
    /// `mcp_turn`): the script was not one `mcptape export k6` wrote, or no
    /// iteration ran.
    #[error("no mcp_read or mcp_turn point in the k6 output(s)")]
    NoPoints,
    /// The turns in the outputs were run with different `parallel` values.
    #[error("turns with different parallel values ({0} and {1}): merge runs of one script")]
    MixedParallel(u32, u32),
    /// Writing the report failed (serialization).
    #[error("writing the report: {0}")]
    Report(String),
}
