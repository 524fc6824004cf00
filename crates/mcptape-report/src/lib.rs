//! The report of an mcptape bench run, sans-IO: the run's figures, SLOs, merge, and every
//! renderer. No tokio, no sockets, no clocks, no files: every function takes values or bytes
//! and returns values, bytes or text, so fuzz targets and benches call it directly.
//!
//! ```
//! use mcptape_report::run::{BenchResult, RunSettings};
//! use mcptape_report::{render, slo};
//!
//! // The figures of a run: every latency in µs, in HdrHistograms.
//! let mut res = BenchResult::new();
//! for us in [900, 1_100, 1_300, 40_000] {
//!     res.single.record(us).unwrap();
//!     res.single_ok.record(us).unwrap();
//! }
//! res.reads_sent = 4;
//! let mut report = res.report(RunSettings::default(), "t.jsonl", "embedded", None, 1, None);
//! assert_eq!(report.single.count, 4);
//! assert_eq!(report.single.p50_us, 1_100);
//!
//! // An SLO checked against it, and the table and the `.hlog` interval log of it.
//! report.slo = slo::evaluate(&slo::parse("read.p50<2ms").unwrap(), &report);
//! assert!(report.slo[0].pass);
//! assert!(report.table().contains("p50"));
//! let log = render::bench_hlog(&report, &res).unwrap();
//! let back = render::hlog::read_hlog(&log).unwrap();
//! assert_eq!(back.tags[0].hist.len(), 4);
//! ```
//!
//! - [`run`]: what a bench run measured ([`run::BenchResult`]: HdrHistograms, counters, per
//!   method and per tool / prompt / URI) and the settings its report states
//!   ([`run::RunSettings`]); [`run::BenchResult::report`] turns them into a
//!   [`stats::BenchReport`].
//! - [`stats`]: quantiles (right-censored by timeouts), the F(t)^N turn prediction, the
//!   counters and the `report.json` model ([`stats::BenchReport`]).
//! - [`series`]: a phase over time (per interval: sent, ok, errors by class, in flight,
//!   p50/p99), the report's `timeSeries`.
//! - [`server`]: what the embedded recorded server reports about its run.
//! - [`slo`]: the `--slo` grammar (`read.p99<50ms`, `errors<1%`), its evaluation against a
//!   report, the pass/fail table and the JUnit XML.
//! - [`merge`](mod@merge): several runs' `.hlog` logs (and their counters) into one report and
//!   one log, in memory.
//! - [`regression`]: the `--baseline` gate (bootstrap intervals per quantile, rank test)
//!   against a previous run's figures.
//! - [`render`]: the human table, the per-method table, the `.hlog` interval log (write and
//!   read), the SVG percentile plot and the self-contained HTML report.
//!
//! Where it sits: below the IO shell. `mcptape-replay` (serve, bench) fills a
//! [`run::BenchResult`] from a real run and writes its files; `mcptape-export` builds one from a
//! k6 run's output; `mcptape merge` reads logs and hands their bytes to [`merge::merge`].

#[doc(hidden)]
pub mod fuzzing;
pub mod merge;
pub mod regression;
pub mod render;
pub mod run;
pub mod series;
pub mod server;
pub mod slo;
pub mod stats;

/// The README's example, run as a doctest so it stays the one above.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
