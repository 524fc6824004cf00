//! Rendering of bench statistics ([`crate::stats`]): the human [`table`], the HdrHistogram
//! interval log ([`hlog`]), the SVG percentile plot ([`svg`]) and the self-contained HTML
//! report ([`html`]); the XML escaper and JUnit writer ([`junit`]). Each renderer takes the computed [`BenchReport`](crate::stats::BenchReport) (and, for the
//! histogram-based ones, the [`BenchResult`](crate::run::BenchResult)) and returns bytes or text; none does I/O.

pub mod hlog;
pub mod html;
pub mod junit;
pub mod method_table;
pub mod svg;
pub mod table;

pub use hlog::{Tagged, bench_hlog, merge_hlog, merge_hlog_tagged, write_hlog};
pub use html::bench_html;
pub use svg::{Curve, bench_svg, percentile_svg};

/// Files `bench --out DIR` writes into its directory (`mcptape_replay::bench_out`): the
/// [`BenchReport`](crate::stats::BenchReport) as JSON, [`bench_hlog`], [`bench_svg`],
/// [`bench_html`].
pub const BENCH_OUT_FILES: [&str; 4] =
    ["report.json", "latency.hlog", "latency.svg", "report.html"];
