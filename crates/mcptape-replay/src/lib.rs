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
//! - [`regression`]: the `--baseline` gate (bootstrap intervals per quantile, rank test).
//! - [`config`]: validation of bench and verify settings before a run.
//! - [`target`]: the target process lifecycle that `bench` and `verify` share (a stdio child in
//!   its own process group, or a Streamable HTTP bridge; its stderr tail; ending it).
//!
//! The IO shell of mcptape: tokio, processes, sockets, clocks. JSON is parsed
//! with `serde_json`; the transcript with `mcptape_transcript::reader`.
//!
//! A latency model as `--latency` spells it: `lognormal:p50=20ms,p99=200ms` is a
//! log-normal whose own quantiles are those two figures (µs), and every sampled delay
//! is capped at the model's limit:
//!
//! ```
//! use mcptape_replay::latency::LatencyModel;
//!
//! let m = LatencyModel::parse("lognormal:p50=20ms,p99=200ms").unwrap();
//! assert_eq!(m.to_string(), "lognormal:p50=20ms,p99=200ms");
//! assert!((m.quantile_us(0.5).unwrap() - 20_000.0).abs() < 1.0);
//! assert!((m.quantile_us(0.99).unwrap() - 200_000.0).abs() < 1.0);
//! assert!(LatencyModel::parse("lognormal:p50=200ms,p99=20ms").is_err());
//! ```

pub mod bench;
pub mod config;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod latency;
pub mod lines;
pub mod merge;
pub mod regression;
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
