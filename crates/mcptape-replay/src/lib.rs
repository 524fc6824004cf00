//! Replay of recorded MCP transcripts (the main job of mcptape).
//!
//! - [`serve`]: mcptape as the recorded server — requests matched by method
//!   and params, answered with the recorded reply under the request's own id,
//!   after a delay from a [`latency::LatencyModel`], with seeded
//!   [faults](latency::FaultSpec).
//! - [`bench`](mod@bench): mcptape as the recorded client — single-read latency and
//!   parallel-read turns with cancellation at a deadline, in HdrHistograms (µs).
//! - [`verify`]: replays recorded requests against a live server and diffs the
//!   responses semantically.
//! - [`report`]: quantiles, the F(t)^N turn prediction, `.hlog` and SVG output.
//!
//! The IO shell of mcptape: tokio, processes, sockets, clocks. JSON is parsed
//! with `serde_json`; the transcript with `mcptape_transcript::reader`.

pub mod bench;
pub mod error;
pub mod http;
pub mod latency;
pub mod lines;
pub mod report;
pub mod schedule;
pub mod serve;
pub mod tape;
pub mod verify;

pub use error::{ReplayError, ReplayErrorKind};
