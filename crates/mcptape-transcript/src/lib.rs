//! The mcptape transcript format: JSON Lines, sans-IO.
//!
//! A transcript is one header line followed by one record per line:
//!
//! ```text
//! {"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["npx","server-everything"]},"startedAt":"2026-11-30T00:00:00Z"}
//! {"tUs":1520,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}
//! {"tUs":9120,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}
//! {"tUs":9150,"kind":"noise","dir":"s2c","line":"Starting server..."}
//! {"tUs":9200,"kind":"stderr","line":"server started"}
//! {"tUs":9300,"kind":"protocol","version":"2025-11-25"}
//! {"tUs":9400,"kind":"http","dir":"c2s","http":{"exchange":4,"method":"GET","headers":[["accept","text/event-stream"]]},"note":"noBody"}
//! {"tUs":9500,"kind":"http","dir":"s2c","http":{"exchange":4,"method":"GET","status":200},"note":"clientClosedStream"}
//! {"tUs":9900,"kind":"exit","code":0}
//! ```
//!
//! * `tUs` — microseconds since the recording started (monotonic clock).
//! * `kind` — `message` | `noise` | `stderr` | `http` | `protocol` | `exit`.
//! * `code`, `signal` — of an `exit` record: how the server ended; `signal` alone when a
//!   signal killed it, beside `code` when the recorder forwarded that signal (a Ctrl-C of
//!   `mcptape record`: `{"kind":"exit","code":0,"signal":2}`) and the server then exited.
//! * `msg` — the JSON-RPC message **byte-exact** as it crossed the wire
//!   (kept as [`serde_json::value::RawValue`], never re-serialized). A message
//!   whose JSON contains a line break (a pretty-printed HTTP body) is written as
//!   the JSON string `msgText` instead, so every record stays on one line; the
//!   reader turns either form into the same [`Event::Message`].
//! * `http` — for Streamable HTTP: [`HttpMeta`] (exchange number, method,
//!   status, redacted headers, SSE event id; `redactedPointers` when a
//!   `--redact-json` pointer matched and the message was re-serialized).
//! * `redactedPointers` — on a stdio message record the recorder altered
//!   (a `--redact-json` pointer, a credential-named tool argument, a secret
//!   seen elsewhere in the transcript): the RFC 6901 pointers of the values
//!   replaced; the message was re-serialized, so it is not byte-exact.
//! * The header's optional `redaction` member ([`Redaction`]) says what the
//!   recorder redacted — header-name words and rules, pseudonymized headers,
//!   JSON pointers, argv positions — never a value; `server.command` holds
//!   paths relative to the recording's working directory (or under `~`).
//! * A stdout line that is not JSON (a banner) is a `noise` record, not a message.
//!   So is a line with whitespace around its JSON value: nothing recorded is
//!   ever altered, and a message record holds exactly the line's bytes.
//! * `http` records ([`Event::Http`], Streamable HTTP only) note what carries
//!   no JSON-RPC body: `dir`, `http` ([`HttpMeta`]), `note` ([`HttpNote`]:
//!   `noBody` for a GET opening a stream, a DELETE or a `202 Accepted`;
//!   `emptyEvent` for an SSE priming event; `serverClosedStream`,
//!   `clientClosedStream`, `streamBroken`, `streamOpenAtShutdown` for how an
//!   event stream ended; `sseUnparsable`, `requestFailed`, `upstreamFailed`,
//!   `responseFailed` for failures) and an optional free-text `detail`. A
//!   `clientClosedStream` is how a client cancels over Streamable HTTP.
//!
//! Modules: [`model`] (header and record types), [`writer`] (flushes every
//! record), [`reader`] (crash-tolerant: keeps every complete record of a cut
//! file and reports the dropped bytes), [`redact`] (credential redaction,
//! machine-path folding), [`time`] (RFC 3339 date-times such as the header's `startedAt`).
//!
//! ```
//! use mcptape_transcript::{Direction, Header, Record, ServerSpec, Transport};
//! use mcptape_transcript::{reader, writer::TranscriptWriter};
//!
//! let header = Header::new(Transport::Stdio, ServerSpec::default(), "2026-11-30T00:00:00Z");
//! let mut w = TranscriptWriter::new(Vec::new(), &header).unwrap();
//! w.write(&Record::message(1520, Direction::C2s, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap()).unwrap();
//! let bytes = w.into_inner();
//! let header_len = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
//! let t = reader::read(&bytes[..bytes.len() - 5]).unwrap(); // cut mid-line
//! assert!(t.records.is_empty());
//! assert_eq!(t.dropped.unwrap().bytes, bytes.len() - 5 - header_len);
//! ```
//!
//! With the cargo feature `fs` (off by default), the `file` module is the workspace's one file-opening
//! policy (non-blocking open, regular files only, `same_file`): the only IO in the crate.

#[cfg(feature = "fs")]
pub mod file;
pub mod model;
mod ondisk;
pub mod reader;
pub mod redact;
pub mod time;
pub mod writer;

#[doc(hidden)]
pub mod fuzzing;

pub use model::*;
pub use reader::{Ending, Transcript, TranscriptError, read};
pub use redact::Redactor;
pub use writer::TranscriptWriter;

/// The largest `tUs` a real recording can carry: 30 days, in µs
/// (2,592,000,000,000). `mcptape record` stamps records from a monotonic clock
/// started with the recording, and its sessions last seconds to hours (the
/// shipped corpus' longest is 7.1 s); a proxy left running for weeks still
/// fits. A larger stamp is not a recording time but a corrupt or hand-edited
/// value (`18446744073709551615`, `u64::MAX`, is 584,942 years): `mcptape check`
/// reports it (rule `record-time-beyond-limit`) and `mcptape serve` refuses the
/// transcript rather than wait that long to replay a recorded delay
/// (`mcptape_replay::error::ReplayErrorKind::TimeBeyondLimit`). The reader
/// accepts any `u64`, so that both can name the record.
pub const MAX_RECORDED_T_US: u64 = 30 * 86_400 * 1_000_000;
