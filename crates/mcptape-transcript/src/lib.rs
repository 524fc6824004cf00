//! The mcptape transcript format: JSON Lines, sans-IO.
//!
//! A transcript is one header line followed by one record per line:
//!
//! ```text
//! {"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["npx","server-everything"]},"startedAt":"2026-11-30T00:00:00Z"}
//! {"tUs":1520,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}
//! {"tUs":9120,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}
//! {"tUs":9200,"kind":"stderr","line":"server started"}
//! {"tUs":9900,"kind":"exit","code":0}
//! ```
//!
//! * `tUs` — microseconds since the recording started (monotonic clock).
//! * `msg` — the JSON-RPC message **byte-exact** as it crossed the wire
//!   (kept as [`serde_json::value::RawValue`], never re-serialized).
//!
//! Modules: [`model`] (header and record types), [`writer`] (flushes every
//! record), [`reader`] (crash-tolerant: keeps every complete record of a cut
//! file and reports the dropped bytes), [`redact`] (credential redaction).

pub mod model;
pub mod reader;
pub mod redact;
pub mod writer;

pub use model::*;
