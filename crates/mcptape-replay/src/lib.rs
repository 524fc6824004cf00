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
//! - [`stats`]: quantiles, the F(t)^N turn prediction and the counters of a bench run;
//!   [`render`]: the human table, the `.hlog` interval log and the SVG plot of them
//!   ([`report`] re-exports both under their former paths).
//! - [`slo`]: the `--slo` grammar (read.p99<50ms, errors<1%), its evaluation against a
//!   bench report, the pass/fail table and the JUnit XML.
//! - [`merge`](mod@merge): `mcptape merge` — several runs' `.hlog` logs (and their counters) into one
//!   report and one log.
//! - [`metrics`]: `serve --metrics`, the live counters and histograms of a serve session in
//!   the Prometheus (OpenMetrics) text format.
//! - [`config`]: validation of bench and verify settings before a run.
//! - [`target`]: the target process lifecycle that `bench` and `verify` share (a stdio child in
//!   its own process group, or a Streamable HTTP bridge; its stderr tail; ending it).
//!
//! The IO shell of mcptape: tokio, processes, sockets, clocks. JSON is parsed
//! with `serde_json`; the transcript with `mcptape_transcript::reader`.

pub mod bench;
pub mod config;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod latency;
pub mod lines;
pub mod merge;
pub mod metrics;
pub mod render;
pub mod report;
pub mod schedule;
pub mod serve;
pub mod slo;
pub mod stats;
pub mod tape;
pub mod target;
pub mod verify;

pub use error::{ReplayError, ReplayErrorKind};
