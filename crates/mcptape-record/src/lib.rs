//! Recording proxies and crawl: how mcptape gets real MCP transcripts.
//!
//! * [`stdio`] — `mcptape record -o FILE -- CMD ARGS...`: a transparent stdio
//!   proxy a host launches in place of the server (MCP spec 2025-11-25,
//!   "Transports" §stdio).
//! * [`http`] — `mcptape record -o FILE --listen ADDR --upstream URL`: a
//!   Streamable HTTP reverse proxy recording every POST/GET/DELETE exchange
//!   and each SSE event as its own message record (spec 2025-11-25 and
//!   2026-07-28, "Transports" §Streamable HTTP).
//! * [`crawl`] — `mcptape crawl`: mcptape as the client; handshake, list every
//!   resource following `nextCursor`, read each, expand templates, read one
//!   URI that does not exist.
//! * [`sink`] — the transcript being written (one flushed line per record,
//!   µs timestamps from a monotonic clock).
//!
//! Errors are [`RecordError`] with a [`RecordErrorKind`].

pub mod crawl;
pub mod error;
mod forward;
pub mod http;
mod scan;
pub mod sink;
pub mod stdio;

pub use error::{Position, RecordError, RecordErrorKind};
pub use sink::{OnExisting, TranscriptSink};
