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
    /// What the recorder redacted or rewrote (policy, header names, JSON
    /// pointers, argv positions; never a value). Absent in transcripts
    /// written before redaction was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redaction: Option<Redaction>,
}

/// The `redaction` member of the transcript [`Header`]: what was redacted,
/// by name and position, never by value (see [`crate::redact`]).
///
/// On disk (camelCase): `{"enabled":true,"headerWords":["auth",…],
/// "pseudonymHeaders":["mcp-session-id"],"jsonPointers":["/params/x"],
/// "argvValues":[3],"argvPaths":[0,1]}`; empty lists are left out.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Redaction {
    /// `false` when recorded with `--no-redact` (credentials kept; paths
    /// in `server.command` are still folded).
    pub enabled: bool,
    /// A header whose name contains one of these words (ASCII
    /// case-insensitive) had its value replaced by `[redacted]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_words: Vec<String>,
    /// Header names redacted by `--redact-header` (lowercase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact_headers: Vec<String>,
    /// Header names kept in the clear by `--keep-header` (lowercase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep_headers: Vec<String>,
    /// Header names whose values were replaced by a per-transcript
    /// pseudonym `[redacted:N]` (`mcp-session-id`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pseudonym_headers: Vec<String>,
    /// RFC 6901 pointers (`--redact-json`) whose values in message bodies
    /// were replaced by pseudonyms `"[redacted:N]"`; each altered message's record lists
    /// the ones that matched in [`HttpMeta::redacted_pointers`] (HTTP) or
    /// its `redactedPointers` (stdio, [`Event::Message`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json_pointers: Vec<String>,
    /// 0-based positions in `server.command` whose credential value was
    /// replaced by `[redacted]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv_values: Vec<usize>,
    /// 0-based positions in `server.command` where an absolute path was
    /// made relative to the working directory or folded to `~`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv_paths: Vec<usize>,
}

impl Redaction {
    /// This record with the argv positions of `argv` (from
    /// [`crate::redact::Redactor::argv`]).
    pub fn with_argv(mut self, argv: &crate::redact::ArgvRedaction) -> Redaction {
        self.argv_values = argv.redacted.clone();
        self.argv_paths = argv.paths.clone();
        self
    }
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
    /// `--redact-json` pointers (RFC 6901) that matched in this message: when
    /// not empty, the message was altered (values replaced by pseudonyms `"[redacted:N]"`
    /// and the body re-serialized), so it is not byte-exact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted_pointers: Vec<String>,
}

/// What an [`Event::Http`] record notes (`note` on disk, camelCase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum HttpNote {
    /// `noBody`: a request (`c2s`: GET, DELETE) or a response (`s2c`: `202`,
    /// `204`, an error status with an empty body) without a body.
    NoBody,
    /// `emptyEvent`: an SSE event whose data is empty (a priming event that only
    /// carries an `id` for resumption); the id is in `http.sseEventId`.
    EmptyEvent,
    /// `serverClosedStream`: the server ended the event stream.
    ServerClosedStream,
    /// `clientClosedStream`: the client closed the event stream before the
    /// server ended it; over Streamable HTTP this cancels the requests the
    /// stream was carrying (2026-07-28 › Cancellation).
    ClientClosedStream,
    /// `streamBroken`: the upstream connection failed mid-stream.
    StreamBroken,
    /// `streamOpenAtShutdown`: the stream was still open when the recorder stopped.
    StreamOpenAtShutdown,
    /// `sseUnparsable`: the stream's events could not be parsed further (an
    /// event over the limit); bytes were still passed through, not recorded.
    SseUnparsable,
    /// `requestFailed`: the request body could not be read (or was over the
    /// recorder's limit); `detail` says why.
    RequestFailed,
    /// `upstreamFailed`: the server could not be reached; `detail` says why.
    UpstreamFailed,
    /// `responseFailed`: the response body could not be read (or was over the
    /// recorder's limit); `detail` says why.
    ResponseFailed,
}

impl HttpNote {
    /// The on-disk name (`noBody`, `clientClosedStream`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            HttpNote::NoBody => "noBody",
            HttpNote::EmptyEvent => "emptyEvent",
            HttpNote::ServerClosedStream => "serverClosedStream",
            HttpNote::ClientClosedStream => "clientClosedStream",
            HttpNote::StreamBroken => "streamBroken",
            HttpNote::StreamOpenAtShutdown => "streamOpenAtShutdown",
            HttpNote::SseUnparsable => "sseUnparsable",
            HttpNote::RequestFailed => "requestFailed",
            HttpNote::UpstreamFailed => "upstreamFailed",
            HttpNote::ResponseFailed => "responseFailed",
        }
    }
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
        /// stdio recordings: the RFC 6901 pointers whose values the recorder
        /// redacted in this message (`--redact-json`, the default
        /// credential-argument rule, or a secret seen elsewhere in the
        /// transcript; see [`crate::redact::Redactor::message_json`]). When not
        /// empty the message was re-serialized, so it is not byte-exact.
        /// `redactedPointers` on disk; HTTP records keep theirs in
        /// [`HttpMeta::redacted_pointers`].
        redacted_pointers: Vec<String>,
    },
    /// A line on the server's stdout that is not JSON (a banner); kept as text.
    Noise {
        /// Who sent it (normally `s2c`).
        dir: Direction,
        /// The line without its line terminator (lossy UTF-8 if it was not UTF-8).
        line: String,
    },
    /// An HTTP event without a JSON-RPC body (Streamable HTTP recordings
    /// only): a request without a body (a GET opening the 2025-era stream, a
    /// DELETE ending the session), a response without a body (`202 Accepted`),
    /// an SSE event with empty data (a priming event: only an `id`), the end of
    /// an event stream and why, or a failed exchange. Sources: MCP 2025-11-25
    /// and 2026-07-28, Basic › Transports › Streamable HTTP (cancellation by
    /// closing the stream: 2026-07-28 › Cancellation).
    Http {
        /// `c2s` for the request side, `s2c` for the response side.
        dir: Direction,
        /// Exchange number, method, status (response side) and redacted headers;
        /// `sseEventId` for [`HttpNote::EmptyEvent`].
        http: HttpMeta,
        /// What happened.
        note: HttpNote,
        /// A human-readable detail (an error text), when there is one.
        detail: Option<String>,
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
        /// Signal number, if it was killed by a signal; beside `code`, the signal the
        /// recorder received and forwarded to the server (2 for a Ctrl-C of `mcptape record`)
        /// before it exited by itself: the session was stopped, not ended by the server.
        signal: Option<i32>,
    },
}

/// Why [`Record::message`] refused a message: the bytes are not exactly one
/// JSON value (RFC 8259). Such a line belongs in an [`Event::Noise`] record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// Not valid JSON; `column` is the 1-based column (in chars) serde_json reported.
    #[error("message is not valid JSON at column {column}: {reason}")]
    NotJson {
        /// 1-based column of the error.
        column: usize,
        /// serde_json's description.
        reason: String,
    },
    /// Valid JSON with whitespace before or after the value: a `RawValue`
    /// holds only the value, so the bytes could not be kept exactly.
    #[error("message has {leading} bytes of whitespace before and {trailing} after the JSON value")]
    SurroundingWhitespace {
        /// Whitespace bytes before the value.
        leading: usize,
        /// Whitespace bytes after the value.
        trailing: usize,
    },
}

impl Record {
    /// A [`Event::Message`] record from the message text exactly as it crossed the
    /// wire (no line terminator), without HTTP details.
    ///
    /// # Errors
    /// [`MessageError::NotJson`] if `raw_json` is not one JSON value;
    /// [`MessageError::SurroundingWhitespace`] if it has whitespace around the
    /// value (the bytes could not be kept exactly). Record such a line with
    /// [`Record::noise`] instead.
    pub fn message(t_us: u64, dir: Direction, raw_json: &str) -> Result<Record, MessageError> {
        Ok(Record {
            t_us,
            event: Event::Message {
                dir,
                msg: exact_raw(raw_json)?,
                http: None,
                redacted_pointers: Vec::new(),
            },
        })
    }

    /// Like [`Record::message`], with HTTP details (Streamable HTTP recordings).
    ///
    /// # Errors
    /// As [`Record::message`].
    pub fn http_message(
        t_us: u64,
        dir: Direction,
        raw_json: &str,
        http: HttpMeta,
    ) -> Result<Record, MessageError> {
        let mut r = Record::message(t_us, dir, raw_json)?;
        if let Event::Message { http: h, .. } = &mut r.event {
            *h = Some(http);
        }
        Ok(r)
    }

    /// A [`Event::Noise`] record: a line that is not a JSON message. Invalid
    /// UTF-8 is replaced with U+FFFD.
    pub fn noise(t_us: u64, dir: Direction, line: &[u8]) -> Record {
        Record {
            t_us,
            event: Event::Noise {
                dir,
                line: String::from_utf8_lossy(line).into_owned(),
            },
        }
    }

    /// An [`Event::Http`] record.
    pub fn http(
        t_us: u64,
        dir: Direction,
        http: HttpMeta,
        note: HttpNote,
        detail: Option<String>,
    ) -> Record {
        Record {
            t_us,
            event: Event::Http {
                dir,
                http,
                note,
                detail,
            },
        }
    }

    /// A [`Event::Stderr`] record (invalid UTF-8 replaced with U+FFFD).
    pub fn stderr(t_us: u64, line: &[u8]) -> Record {
        Record {
            t_us,
            event: Event::Stderr {
                line: String::from_utf8_lossy(line).into_owned(),
            },
        }
    }

    /// A [`Event::Protocol`] record carrying the negotiated revision (e.g. `2026-07-28`).
    pub fn protocol(t_us: u64, version: impl Into<String>) -> Record {
        Record {
            t_us,
            event: Event::Protocol {
                version: version.into(),
            },
        }
    }

    /// An [`Event::Exit`] record.
    pub fn exit(t_us: u64, code: Option<i32>, signal: Option<i32>) -> Record {
        Record {
            t_us,
            event: Event::Exit { code, signal },
        }
    }

    /// The message bytes if this is a [`Event::Message`] record.
    pub fn msg(&self) -> Option<&str> {
        match &self.event {
            Event::Message { msg, .. } => Some(msg.get()),
            _ => None,
        }
    }

    /// The direction of a message, noise or HTTP record.
    pub fn dir(&self) -> Option<Direction> {
        match &self.event {
            Event::Message { dir, .. } | Event::Noise { dir, .. } | Event::Http { dir, .. } => {
                Some(*dir)
            }
            _ => None,
        }
    }
}

/// Parses `raw` as exactly one JSON value with no surrounding whitespace.
pub(crate) fn exact_raw(raw: &str) -> Result<Box<RawValue>, MessageError> {
    let v = RawValue::from_string(raw.to_owned()).map_err(|e| MessageError::NotJson {
        column: e.column(),
        reason: e.to_string(),
    })?;
    if v.get().len() != raw.len() {
        let leading = raw.len() - raw.trim_start().len();
        let trailing = raw.len() - v.get().len() - leading;
        return Err(MessageError::SurroundingWhitespace { leading, trailing });
    }
    Ok(v)
}

impl PartialEq for Event {
    /// Messages compare by their exact bytes.
    fn eq(&self, other: &Self) -> bool {
        use Event::*;
        match (self, other) {
            (
                Message {
                    dir,
                    msg,
                    http,
                    redacted_pointers,
                },
                Message {
                    dir: d2,
                    msg: m2,
                    http: h2,
                    redacted_pointers: r2,
                },
            ) => dir == d2 && msg.get() == m2.get() && http == h2 && redacted_pointers == r2,
            (Noise { dir, line }, Noise { dir: d2, line: l2 }) => dir == d2 && line == l2,
            (Stderr { line }, Stderr { line: l2 }) => line == l2,
            (
                Http {
                    dir,
                    http,
                    note,
                    detail,
                },
                Http {
                    dir: d2,
                    http: h2,
                    note: n2,
                    detail: x2,
                },
            ) => dir == d2 && http == h2 && note == n2 && detail == x2,
            (Protocol { version }, Protocol { version: v2 }) => version == v2,
            (
                Exit { code, signal },
                Exit {
                    code: c2,
                    signal: s2,
                },
            ) => code == c2 && signal == s2,
            _ => false,
        }
    }
}

impl Eq for Event {}

impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        self.t_us == other.t_us && self.event == other.event
    }
}

impl Eq for Record {}

impl Header {
    /// A header for a new recording: [`FORMAT_VERSION`], this crate's version,
    /// no protocol version yet. `started_at` is RFC 3339 UTC (the caller owns the clock).
    pub fn new(transport: Transport, server: ServerSpec, started_at: impl Into<String>) -> Header {
        Header {
            mcptape_transcript: FORMAT_VERSION,
            mcptape_version: env!("CARGO_PKG_VERSION").to_owned(),
            transport,
            server,
            started_at: started_at.into(),
            protocol_version: None,
            redaction: None,
        }
    }
}
