//! Sans-IO MCP wire model for `resources/read` (spec revision 2026-07-28,
//! reading 2025-06-18 and 2025-11-25 peers).
//!
//! * [`envelope`] — the one JSON-RPC 2.0 reader: kind, raw id, member ranges in one strict
//!   pass; typed views (request, notification, response, error, batch) on demand.
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
//! * [`reply`] — the replies a server writes as typed values (error objects, not-found
//!   data, empty results and pages, `CompleteResult`, `InitializeResult`, `DiscoverResult`,
//!   the 2026-07-28 `resultType`/`ttlMs`/`cacheScope` members) in the one envelope.
//! * [`codec`] — the scalar / SIMD / fused decode paths behind one dispatch point.
//! * [`read_summary`] — a borrowed summary of a read result (sizes, kinds, media
//!   types; payloads never decoded) for reports that need no bytes.
//!
//! Reading one `resources/read` result strictly: a `TextResourceContents` and a
//! `BlobResourceContents` (5 bytes of blob are 8 base64 characters, one `=`), and an
//! entry with neither `text` nor `blob`, which is an error naming its index and uri:
//!
//! ```
//! use mcptape_wire::resources::{parse_read_result, ContentsErrorKind, Shape};
//!
//! let ok = br#"{"contents":[
//!     {"uri":"file:///a.txt","mimeType":"text/plain","text":"hi"},
//!     {"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"aGVsbG8="}]}"#;
//! let r = parse_read_result(ok).unwrap();
//! assert_eq!(r.contents[0].shape(), Shape::Text);
//! assert_eq!(r.contents[1].decoded_len(), 5);
//! // The seeds' worked figure: 1,834,208 bytes are 2,445,612 base64 characters, one `=`.
//! assert_eq!(mcptape_wire::b64::encoded_len(1_834_208), 2_445_612);
//! assert_eq!(mcptape_wire::b64::padding_len(1_834_208), 1);
//!
//! let bad = br#"{"contents":[{"uri":"file:///a.txt"},{"uri":"file:///c","mimeType":"x/y"}]}"#;
//! let e = parse_read_result(bad).unwrap_err();
//! assert!(matches!(e.kind(), ContentsErrorKind::NeitherTextNorBlob));
//! assert_eq!((e.index(), e.uri()), (Some(0), Some("file:///a.txt")));
//! ```

pub mod b64;
pub mod classify;
pub mod codec;
pub mod envelope;
pub mod error;
pub mod json;
pub(crate) mod lex;
pub mod limits;
pub mod media;
pub mod prescan;
pub mod protocol;
pub mod read_summary;
pub mod reply;
pub mod resources;
mod stop;

#[doc(hidden)]
pub mod fuzzing;
