//! Replay of recorded MCP transcripts (the main job of mcptape).
//!
//! - [`serve`]: mcptape as the recorded server — requests matched by method
//!   and params, answered with the recorded reply under the request's own id,
//!   after a delay from a [`latency::LatencyModel`], with seeded
//!   [faults](latency::FaultSpec).
//! - [`bench`](mod@bench): mcptape as the recorded client — single-read latency and
//!   parallel-read turns with cancellation at a deadline, in HdrHistograms (µs).
//! - [`bench_run`]: one `bench` run as a library call: the target's lifecycle (the embedded
//!   server child and its stats over a pipe), signals, the report, SLOs, the regression gate
//!   and the verdict.
//! - [`verify`]: replays recorded requests against a live server and diffs the
//!   responses semantically.
//! - [`bench_out`]: the files of `bench --out DIR` (the report and its renderings).
//! - [`merge`](mod@merge): the file side of `mcptape merge` (reading the logs within their
//!   limits, writing the merged report and log).
//! - [`metrics`]: `serve --metrics`, the live counters and histograms of a serve session in
//!   the Prometheus (OpenMetrics) text format.
//! - [`config`]: validation of bench and verify settings before a run.
//! - [`target`]: the target process lifecycle that `bench` and `verify` share (a stdio child in
//!   its own process group, or a Streamable HTTP bridge; its stderr tail; ending it).
//!
//! The IO shell of mcptape: tokio, processes, sockets, clocks. JSON is parsed
//! with `serde_json`; the transcript with `mcptape_transcript::reader`. The figures of a run,
//! its SLOs, merging and every rendering are sans-IO, in `mcptape-report`.
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
pub mod bench_out;
pub mod bench_run;
pub mod config;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod latency;
pub mod merge;
pub mod metrics;
pub mod schedule;
pub mod serve;
pub mod tape;
pub mod target;
pub mod verify;

pub use error::{ReplayError, ReplayErrorKind};
