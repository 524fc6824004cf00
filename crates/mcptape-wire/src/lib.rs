//! Sans-IO MCP wire model for `resources/read` (spec revision 2026-07-28,
//! reading 2025-06-18 and 2025-11-25 peers).
//!
//! * [`jsonrpc`] — JSON-RPC 2.0 envelope (request, notification, response, error, batch).
//! * [`resources`] — `ReadResourceResult` and the strict `contents` parser
//!   (`TextResourceContents` / `BlobResourceContents`).
//! * [`classify`] — what a host should do with an error response to `resources/read`.
//! * [`b64`] — base64 size arithmetic (`encoded_len(n) = 4 * ceil(n / 3)`).
//! * [`media`] — media-type sniffing of decoded blobs against the declared `mimeType`.
//! * [`limits`] — named limits (message size, nesting depth).
//! * [`json`] — the strict JSON pre-check (duplicate keys, lone surrogates, limits).
//! * [`error`] — shared error types ([`error::WireError`], [`error::JsonError`]).
//! * [`protocol`] — the protocol model: revisions and eras, method names, `_meta`
//!   keys, error codes, handshake params, HTTP header names, JSON Pointer, the
//!   one revision detector.
//! * [`envelope`] — a message's kind, id and member ranges in one strict
//!   pass that skips string bodies (the client's hot path for large replies).
//! * [`codec`] — the scalar / SIMD / fused decode paths behind one dispatch point.

pub mod b64;
pub mod classify;
pub mod codec;
pub mod envelope;
pub mod error;
pub mod json;
pub mod jsonrpc;
pub(crate) mod lex;
pub mod limits;
pub mod media;
pub mod protocol;
pub mod resources;

#[doc(hidden)]
pub mod fuzzing;
