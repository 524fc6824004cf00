//! MCP transports.
//!
//! * [`stdio`] — newline-delimited framing of the stdio transport (sans-IO,
//!   fuzzed): [`stdio::LineFramer`].
//! * [`sse`] — Server-Sent Events parsing (sans-IO, fuzzed): [`sse::SseParser`].
//! * [`http`] — Streamable HTTP client for the 2025-06-18/2025-11-25 era
//!   (`initialize`, `Mcp-Session-Id`) and the 2026-07-28 era (no session;
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`; `server/discover`).
//! * [`child`] — spawning a stdio server process and ending it gracefully.

pub mod child;
pub mod error;
pub mod http;
pub mod sse;
pub mod stdio;

#[doc(hidden)]
pub mod fuzzing;

pub use error::{FrameError, FrameErrorKind, SseError, SseErrorKind};
