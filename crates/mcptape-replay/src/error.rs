//! Errors of the replay crate.

use std::fmt;

/// An error from building a tape, serving or benchmarking.
#[derive(Debug)]
pub struct ReplayError {
    /// What went wrong.
    pub kind: ReplayErrorKind,
    /// Transcript record index (from 0, header excluded), when it concerns one.
    pub record: Option<usize>,
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayErrorKind {
    /// A transcript message record is not a replayable JSON-RPC object.
    #[error("record is not replayable: {0}")]
    BadRecord(String),
    /// The transcript has more messages than [`crate::tape::MAX_TAPE_MESSAGES`].
    #[error("transcript has more than {0} messages")]
    TooManyMessages(usize),
    /// A served tape's index would take more than `limit` bytes
    /// ([`crate::tape::MAX_TAPE_INDEX_BYTES`], counted as
    /// [`crate::tape::Tape::index_bytes`]); the record is the message that
    /// took it past.
    #[error("the tape's index would take more than {limit} bytes (MAX_TAPE_INDEX_BYTES)")]
    TapeTooLarge {
        /// The limit, bytes.
        limit: usize,
    },
    /// A message or exit record is stamped with a `tUs` beyond
    /// [`mcptape_transcript::MAX_RECORDED_T_US`] (30 days, µs): not a
    /// recording time. Refused when the tape is built, so that `serve` never
    /// schedules a recorded delay from it (the record index is
    /// [`ReplayError::record`]).
    #[error(
        "tUs {t_us} µs is beyond MAX_RECORDED_T_US ({limit} µs, {} days): not a recording time; \
         fix the stamp (mcptape check: record-time-beyond-limit)",
        limit / 86_400_000_000
    )]
    TimeBeyondLimit {
        /// The record's `tUs`, µs.
        t_us: u64,
        /// The limit, µs ([`mcptape_transcript::MAX_RECORDED_T_US`]).
        limit: u64,
    },
    /// The transcript reader refused a line ([`crate::tape::Tape::served`]):
    /// its kind, line number and byte offset.
    #[error("{0}")]
    Transcript(mcptape_transcript::reader::TranscriptError),
    /// The transcript has no recorded `resources/read` request to bench with.
    #[error("transcript has no recorded resources/read request")]
    NoReads,
    /// Nothing left for bench's single phase to send ([`crate::bench::plan`]): no recorded
    /// request of the asked methods, or every one a tool kept from a live target.
    #[error(
        "no recorded request to bench: asked {asked}; recorded {recorded}{}",
        if skipped_tools.is_empty() { String::new() } else { format!("; tools not called (no readOnlyHint, not --allow-tool): {skipped_tools}") }
    )]
    NoRequests {
        /// The methods recorded (with an id, handshake excluded), comma-separated.
        recorded: String,
        /// The methods asked (`--methods`), or `every method`.
        asked: String,
        /// Tools left out by the live-target tool policy, comma-separated.
        skipped_tools: String,
    },
    /// `--methods` or `--mix` names a method the transcript has no request of.
    #[error("{method} is not recorded in the transcript (recorded: {recorded})")]
    UnrecordedMethod {
        /// The method named.
        method: String,
        /// The methods recorded (with an id, handshake excluded), comma-separated.
        recorded: String,
    },
    /// The transcript has no `initialize`/`server/discover` request to open a session with.
    #[error("transcript has no recorded initialize or server/discover request")]
    NoHandshake,
    /// The handshake got no answer within the timeout, or an error answer.
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// The handshake with a `bench` target failed ([`crate::bench_run::run`]): the handshake's
    /// error, then why the target went away (`; target exited with …`, or empty).
    #[error("handshake with the target: {error}{gone}")]
    TargetHandshake {
        /// The handshake's error.
        error: Box<ReplayError>,
        /// [`crate::target::Target::gone_reason`].
        gone: String,
    },
    /// The target closed the connection.
    #[error("target closed the connection")]
    Closed,
    /// `parallel` outside 1..=[`mcptape_report::run::MAX_PARALLEL`].
    #[error("parallel reads per turn {0} is outside 1..={max}", max = mcptape_report::run::MAX_PARALLEL)]
    ParallelOutOfRange(u32),
    /// An I/O error on the transport. Its message is in this one's, so it is not also the
    /// `source`: a chain printed whole (`{:#}`) says it once, not `i/o: X: X` (issue 28).
    #[error("i/o: {0}")]
    Io(std::io::Error),
    /// A `--root` URI was rejected by `mcptape_uri`.
    #[error("root: {0}")]
    Root(String),
    /// HTTP transport error.
    #[error("http: {0}")]
    Http(String),
    /// A `bench`/`verify` target URL whose host is not loopback (`127.0.0.0/8`, `::1` or
    /// `localhost`): load and fault runs reach loopback targets only
    /// ([`crate::target::check_loopback_url`]). Refused before any connection.
    #[error(
        "target URL {url:?}: host {host:?} is not loopback (127.0.0.0/8, ::1 or localhost); \
         bench and verify only reach a target on this machine"
    )]
    NotLoopback {
        /// The URL as given.
        url: String,
        /// Its host as parsed (brackets of an IPv6 literal removed).
        host: String,
    },
    /// The target program could not be started ([`crate::target::Target::start`]).
    #[error("starting the target: {0}")]
    TargetStart(#[source] std::io::Error),
    /// The started target has no stdin or stdout pipe.
    #[error("target has no stdin/stdout pipes")]
    TargetPipes,
    /// A report or histogram log could not be serialized ([`mcptape_report::render`]).
    #[error("rendering the report: {0}")]
    Render(String),
    /// `bench --validate`: the fused strict decoder rejected a `resources/read` reply (its
    /// kind and byte offset; [`crate::bench::validate_contents`]).
    #[error("{0}")]
    ContentsDecode(mcptape_wire::codec::CodecError),
    /// `bench --validate`: the reply has no `result.contents` array.
    #[error("no result.contents array")]
    NoContents,
    /// `bench --validate`: a `contents` entry breaks a rule (MCP 2026-07-28
    /// `TextResourceContents` / `BlobResourceContents`).
    #[error("contents entry {index}: {kind} at byte {offset}")]
    ContentsEntry {
        /// The entry's index in `contents` (from 0).
        index: usize,
        /// The rule it breaks.
        kind: mcptape_wire::resources::ContentsErrorKind,
        /// Byte offset into the message where it breaks it.
        offset: usize,
    },
    /// A `bench`/`verify` setting was rejected before the run ([`crate::config`]).
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
}

/// How a transcript record index (from 0, header excluded) is named to
/// people, the way `mcptape check` names it: `record 1 (line 2)` for index 0
/// (the header is line 1; records are 1-based).
pub fn record_label(index: usize) -> String {
    format!("record {} (line {})", index + 1, index + 2)
}

impl ReplayError {
    /// An error of `kind` with no position.
    pub fn new(kind: ReplayErrorKind) -> Self {
        ReplayError { kind, record: None }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ReplayErrorKind {
        &self.kind
    }

    /// Transcript record index (from 0, header excluded), when the error concerns one.
    pub fn record(&self) -> Option<usize> {
        self.record
    }

    /// Attaches a transcript record index.
    pub fn at_record(mut self, record: usize) -> Self {
        self.record = Some(record);
        self
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.record {
            Some(r) => write!(f, "{}: {}", record_label(r), self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for ReplayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}

impl From<std::io::Error> for ReplayErrorKind {
    fn from(e: std::io::Error) -> Self {
        ReplayErrorKind::Io(e)
    }
}

impl From<std::io::Error> for ReplayError {
    fn from(e: std::io::Error) -> Self {
        ReplayError::new(ReplayErrorKind::Io(e))
    }
}

/// A read error of the framed reader (with its stream byte offset) is an
/// [`ReplayErrorKind::Io`] of the same [`std::io::ErrorKind`].
impl From<mcptape_transport::framed::FramedReadError> for ReplayError {
    fn from(e: mcptape_transport::framed::FramedReadError) -> Self {
        ReplayError::new(ReplayErrorKind::Io(std::io::Error::new(e.source.kind(), e)))
    }
}

#[cfg(test)]
mod tests {
    /// Fresh-user report bug 17: serve/verify said "record 0" for line 2.
    #[test]
    fn record_index_0_is_named_record_1_line_2_like_check() {
        assert_eq!(super::record_label(0), "record 1 (line 2)");
        let e = super::ReplayError::new(super::ReplayErrorKind::BadRecord("x".into())).at_record(0);
        assert_eq!(
            e.to_string(),
            "record 1 (line 2): record is not replayable: x"
        );
    }
}
