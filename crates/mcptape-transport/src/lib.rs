//! MCP transports.
//!
//! * [`stdio`] — newline-delimited framing of the stdio transport (sans-IO,
//!   fuzzed): [`stdio::LineFramer`].
//! * [`sse`] — Server-Sent Events parsing (sans-IO, fuzzed): [`sse::SseParser`].
//! * [`http`] — Streamable HTTP client for the 2025-06-18/2025-11-25 era
//!   (`initialize`, `Mcp-Session-Id`) and the 2026-07-28 era (no session;
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`; `server/discover`).
//! * [`origin`] — the DNS-rebinding guard (`Origin`/`Host` check) of the
//!   loopback listeners `serve --listen` and `record --listen` (sans-IO).
//! * [`child`] — spawning a stdio server process and ending it gracefully.
//! * [`framed`] — the one async framed reader over [`stdio::LineFramer`]
//!   (delivers an unterminated last line at EOF; a read error is an error).
//! * [`session`] — the one MCP client session (id matching, handshake with
//!   era fallback, answering server requests, cancellation per transport)
//!   over a line stream or Streamable HTTP, used by crawl, bench and verify.
//!
//! [`child`], [`framed`], [`http`] and [`session`] are the IO shell (tokio, hyper), behind the
//! default cargo feature `io`; without it the crate is its sans-IO parsers (`mcptape-export`
//! uses [`sse`] so).
//!
//! Framing a stdio stream that arrives in arbitrary chunks: a message cut across two
//! reads comes out whole, a server's banner line is [`stdio::Frame::Noise`], not a message:
//!
//! ```
//! use mcptape_transport::stdio::{Frame, LineFramer, MAX_LINE_BYTES};
//!
//! let mut framer = LineFramer::new(MAX_LINE_BYTES);
//! let mut frames = framer.push(b"server v1 ready\n{\"jsonrpc\":\"2.0\",\"id\":1,");
//! frames.extend(framer.push(b"\"result\":{}}\r\n"));
//! assert_eq!(frames.len(), 2);
//! assert!(matches!(&frames[0], Frame::Noise(b) if b == b"server v1 ready"));
//! assert_eq!(frames[1].as_message(), Some(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
//! assert_eq!(framer.finish(), None);
//! ```

#[cfg(feature = "io")]
pub mod child;
pub mod error;
#[cfg(feature = "io")]
pub mod framed;
#[cfg(feature = "io")]
pub mod http;
#[cfg(feature = "io")]
pub mod listen;
pub mod origin;
#[cfg(feature = "io")]
pub mod session;
pub mod sse;
pub mod stdio;

#[doc(hidden)]
pub mod fuzzing;

pub use error::{FrameError, FrameErrorKind, SseError, SseErrorKind};
