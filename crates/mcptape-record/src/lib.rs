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
//!
//! What both proxies do with each line, shown on the [`sink`] alone: every forwarded line
//! becomes one flushed record before it goes on, so a transcript cut by a crash keeps
//! every complete record and reads back strictly:
//!
//! ```
//! use mcptape_record::TranscriptSink;
//! use mcptape_transcript::{Direction, Event, ServerSpec, Transport};
//!
//! let dir = std::env::temp_dir().join(format!("mcptape-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("t.jsonl");
//! let server = ServerSpec { command: Some(vec!["server".into()]), url: None };
//! let sink = TranscriptSink::create(&path, Transport::Stdio, server).unwrap();
//! let read = br#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///a"}}"#;
//! let reply = br#"{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"file:///a","text":"hi"}]}}"#;
//! sink.record_line(Direction::C2s, read, None);
//! sink.record_line(Direction::S2c, reply, None);
//! assert_eq!(sink.finish().unwrap(), 2);
//!
//! let t = mcptape_transcript::read(&std::fs::read(&path).unwrap()).unwrap();
//! assert_eq!(t.records.len(), 2);
//! assert!(t.dropped.is_none());
//! assert!(matches!(&t.records[1].event, Event::Message { dir: Direction::S2c, .. }));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

pub mod crawl;
pub mod error;
mod forward;
pub mod http;
mod scan;
pub mod sink;
pub mod stdio;

pub use error::{Position, RecordError, RecordErrorKind};
pub use sink::{OnExisting, TranscriptSink};
