//! The error type of `mcptape-record`.

use std::path::PathBuf;

/// An error from a recording proxy or a crawl.
///
/// Carries what went wrong ([`RecordErrorKind`]) and, where one applies, the
/// transcript record number (0 = header, 1 = first record) or the HTTP
/// exchange number it happened at.
#[derive(Debug, thiserror::Error)]
#[error("{kind}{}", position.map(|p| format!(" (at {p})")).unwrap_or_default())]
pub struct RecordError {
    kind: RecordErrorKind,
    position: Option<Position>,
}

/// Where an error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Position {
    /// Transcript record number (0 = header line, 1 = first record).
    Record(u64),
    /// HTTP exchange number (from 0).
    Exchange(u64),
    /// Crawl step number (from 0: the handshake request).
    Step(u64),
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Record(n) => write!(f, "transcript record {n}"),
            Position::Exchange(n) => write!(f, "HTTP exchange {n}"),
            Position::Step(n) => write!(f, "crawl step {n}"),
        }
    }
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordErrorKind {
    /// The transcript file could not be created or written.
    #[error("transcript {path}: {source}")]
    Transcript {
        /// The transcript path.
        path: PathBuf,
        /// The underlying IO error.
        source: std::io::Error,
    },
    /// The server command could not be started (not found, not executable, ...).
    #[error("cannot start server `{program}`: {source}")]
    Spawn {
        /// argv\[0\] of the server command.
        program: String,
        /// The underlying IO error.
        source: std::io::Error,
    },
    /// The server command was empty.
    #[error("no server command given")]
    EmptyCommand,
    /// An IO error on one of the proxied streams or sockets.
    #[error("{what}: {source}")]
    Io {
        /// Which stream or socket (`client stdin`, `server stdout`, `listen socket`, ...).
        what: &'static str,
        /// The underlying IO error.
        source: std::io::Error,
    },
    /// The upstream URL is not an `http://host:port/path` URL mcptape can proxy to.
    #[error("unsupported upstream URL `{url}`: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// An HTTP-level failure talking to the upstream server.
    #[error("HTTP: {0}")]
    Http(String),
    /// The transcript file and every numbered sibling up to
    /// [`crate::sink::MAX_OUTPUT_SUFFIX`] hold recordings (kept) or are held
    /// by other recorders.
    #[error(
        "transcript {path}: it and its numbered siblings .1 to .{tried} all hold recordings or are being written by other recorders (--overwrite replaces one no recorder holds)"
    )]
    OutputHeld {
        /// The path asked for.
        path: std::path::PathBuf,
        /// How many numbered siblings were tried.
        tried: u32,
    },
    /// The peer broke the MCP protocol in a way the crawl cannot continue past.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The server did not answer a crawl request within the time limit.
    #[error("timed out after {ms} ms waiting for `{method}`")]
    Timeout {
        /// The request method.
        method: String,
        /// The limit that ran out, in ms.
        ms: u64,
    },
    /// A malformed `--expand` template or assignment, or too many expansions
    /// (see [`crate::crawl::Expansion`]); the message names the argument.
    #[error("{0}")]
    Expand(String),
    /// A listen address that is not loopback: mcptape listens on 127.0.0.1 or
    /// ::1 only (the recording proxy forwards, and with `--no-redact` stores,
    /// credentials). See [`crate::http::check_loopback`].
    #[error("--listen must be a loopback address (127.0.0.1 or ::1), got {addr}")]
    NotLoopback {
        /// The address as given.
        addr: std::net::SocketAddr,
    },
    /// A protocol revision the crawl does not know (see
    /// [`crate::crawl::KNOWN_PROTOCOLS`]).
    #[error(
        "unknown protocol revision `{version}`: use one of 2025-06-18, 2025-11-25 (initialize) or 2026-07-28 (server/discover)"
    )]
    UnknownProtocol {
        /// The revision as given.
        version: String,
    },
    /// The server ended (exited or closed its output) before the crawl was complete.
    #[error("server closed the connection during `{method}`")]
    Closed {
        /// The request in flight.
        method: String,
    },
}

impl RecordError {
    /// Builds an error of `kind` with no position.
    pub fn new(kind: RecordErrorKind) -> Self {
        RecordError {
            kind,
            position: None,
        }
    }

    /// Attaches a position.
    pub fn at(mut self, position: Position) -> Self {
        self.position = Some(position);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &RecordErrorKind {
        &self.kind
    }

    /// Where it went wrong, if known.
    pub fn position(&self) -> Option<Position> {
        self.position
    }

    pub(crate) fn io(what: &'static str, source: std::io::Error) -> Self {
        RecordError::new(RecordErrorKind::Io { what, source })
    }
}

impl From<RecordErrorKind> for RecordError {
    fn from(kind: RecordErrorKind) -> Self {
        RecordError::new(kind)
    }
}
