//! Header and record types of the transcript format (format version [`FORMAT_VERSION`]).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Version of the transcript format written in [`Header::mcptape_transcript`].
pub const FORMAT_VERSION: u32 = 1;

/// First line of every transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// Transcript format version; this crate writes [`FORMAT_VERSION`].
    pub mcptape_transcript: u32,
    /// Version of the mcptape that wrote the file (`CARGO_PKG_VERSION`).
    pub mcptape_version: String,
    /// How the session was carried.
    pub transport: Transport,
    /// The server that was recorded.
    pub server: ServerSpec,
    /// Wall-clock start of the recording, RFC 3339 UTC (`2026-11-30T00:46:25.123Z`).
    pub started_at: String,
    /// Protocol revision negotiated in the handshake, when known at header
    /// time; otherwise a later [`Event::Protocol`] record carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

/// The transport a transcript was recorded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Newline-delimited JSON-RPC over a child's stdin/stdout (MCP "stdio" transport).
    Stdio,
    /// MCP Streamable HTTP (2025-06-18, 2025-11-25 or 2026-07-28 era).
    Http,
}

/// The recorded server: a command line (stdio) or a URL (HTTP).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerSpec {
    /// argv of the server process, for stdio recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Upstream URL, for HTTP recordings (credentials redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Direction of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// Client (host) to server.
    #[serde(rename = "c2s")]
    C2s,
    /// Server to client.
    #[serde(rename = "s2c")]
    S2c,
}

/// HTTP details of a message record (Streamable HTTP recordings only).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpMeta {
    /// Number of the HTTP exchange (request/response pair) this message belongs to, from 0.
    pub exchange: u64,
    /// Request method (`POST`, `GET`, `DELETE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Response status code, on `s2c` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Headers as `[name, value]` pairs in wire order, redacted (see [`crate::redact`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// SSE `id:` of the event that carried this message, if it came in an event stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse_event_id: Option<String>,
}

/// One transcript line after the header: a time and an event.
#[derive(Debug, Clone)]
pub struct Record {
    /// Microseconds since the recording started (monotonic).
    pub t_us: u64,
    /// What happened.
    pub event: Event,
}

/// What a record holds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A JSON-RPC message (or batch), byte-exact.
    Message {
        /// Who sent it.
        dir: Direction,
        /// The message bytes exactly as sent (one JSON value, no trailing newline).
        msg: Box<RawValue>,
        /// HTTP details for Streamable HTTP recordings.
        http: Option<HttpMeta>,
    },
    /// A line on the server's stdout that is not JSON (a banner); kept as text.
    Noise {
        /// Who sent it (normally `s2c`).
        dir: Direction,
        /// The line without its line terminator (lossy UTF-8 if it was not UTF-8).
        line: String,
    },
    /// A line the server wrote to stderr.
    Stderr {
        /// The line without its line terminator (lossy UTF-8).
        line: String,
    },
    /// The negotiated protocol revision, once the handshake revealed it.
    Protocol {
        /// e.g. `2025-11-25`, `2026-07-28`.
        version: String,
    },
    /// The server process ended.
    Exit {
        /// Exit code, if it exited normally.
        code: Option<i32>,
        /// Signal number, if it was killed by a signal.
        signal: Option<i32>,
    },
}
