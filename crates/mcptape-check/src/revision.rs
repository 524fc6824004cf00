//! Protocol revisions and how a transcript's revision is decided.

use std::fmt;

use serde::Serialize;

/// An MCP protocol revision, a `YYYY-MM-DD` date string as sent on the wire
/// (`2025-06-18`, `2025-11-25`, `2026-07-28`). Revisions order by date.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Revision(String);

impl Revision {
    /// MCP 2025-06-18 (initialize, -32002 not-found, sessions).
    pub fn v2025_06_18() -> Revision {
        Revision("2025-06-18".to_owned())
    }
    /// MCP 2025-11-25 (initialize, -32002 not-found, sessions).
    pub fn v2025_11_25() -> Revision {
        Revision("2025-11-25".to_owned())
    }
    /// MCP 2026-07-28: `resultType`, `ttlMs`/`cacheScope`, not-found = -32602
    /// with `data.uri`, `server/discover`, per-request `_meta` protocol version.
    pub fn v2026_07_28() -> Revision {
        Revision(STATELESS_ERA.to_owned())
    }

    /// A revision from its wire string. Any string is kept (a peer may
    /// negotiate a revision this crate does not know); only the ordering
    /// against 2026-07-28 matters to the rules.
    pub fn new(s: impl Into<String>) -> Revision {
        Revision(s.into())
    }

    /// The wire string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for 2026-07-28 and later (strings that sort at or after
    /// `2026-07-28`; a `DRAFT-...` name counts as later).
    pub fn is_stateless_era(&self) -> bool {
        self.0.as_str() >= STATELESS_ERA || self.0.starts_with("DRAFT")
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The first revision of the stateless era (SEP-2164, SEP-2549, server/discover).
pub const STATELESS_ERA: &str = "2026-07-28";

/// `--spec`: a fixed revision, or detect it from the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecChoice {
    /// Detect from the handshake (see [`RevisionSource`] for the order).
    Auto,
    /// Use this revision whatever the transcript says.
    Fixed(Revision),
}

/// Where a transcript's revision came from, in the order `--spec auto` tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevisionSource {
    /// Given with `--spec`.
    CommandLine,
    /// The server's `initialize` result `protocolVersion`.
    Initialize,
    /// The first `_meta["io.modelcontextprotocol/protocolVersion"]` of a
    /// client request (the revision chosen from `server/discover`'s
    /// `supportedVersions`, or sent inline).
    RequestMeta,
    /// The transcript header's `protocolVersion`.
    Header,
    /// A `protocol` record of the transcript.
    ProtocolRecord,
    /// Nothing said: mcptape's target revision 2026-07-28 was assumed.
    Assumed,
}

impl RevisionSource {
    /// Kebab-case name (`initialize`, `request-meta`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RevisionSource::CommandLine => "command-line",
            RevisionSource::Initialize => "initialize",
            RevisionSource::RequestMeta => "request-meta",
            RevisionSource::Header => "header",
            RevisionSource::ProtocolRecord => "protocol-record",
            RevisionSource::Assumed => "assumed",
        }
    }
}

impl fmt::Display for RevisionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
