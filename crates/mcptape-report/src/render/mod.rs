//! Rendering of bench statistics ([`crate::stats`]): the human [`table`], the HdrHistogram
//! interval log ([`hlog`]), the SVG percentile plot ([`svg`]) and the self-contained HTML
//! report ([`html`]). Each renderer takes the computed [`BenchReport`] (and, for the
//! histogram-based ones, the [`BenchResult`]) and returns bytes or text; none does I/O.

pub mod hlog;
pub mod html;
pub mod method_table;
pub mod svg;
pub mod table;

pub use hlog::{Tagged, bench_hlog, merge_hlog, merge_hlog_tagged, write_hlog};
pub use html::bench_html;
pub use svg::{Curve, bench_svg, percentile_svg};

use std::path::Path;

use crate::bench::BenchResult;
use crate::error::{ReplayError, ReplayErrorKind};
use crate::stats::BenchReport;

/// Files [`write_bench_out`] writes into its directory.
pub const BENCH_OUT_FILES: [&str; 4] =
    ["report.json", "latency.hlog", "latency.svg", "report.html"];

/// Writes the outputs of a bench run into `dir` (created if missing): `report.json` (the
/// [`BenchReport`], camelCase JSON), `latency.hlog` ([`bench_hlog`]), `latency.svg`
/// ([`bench_svg`]) and `report.html` ([`bench_html`]: one self-contained page).
///
/// # Errors
/// [`ReplayErrorKind::Io`] when the directory or a file cannot be written;
/// [`ReplayErrorKind::Render`] when the report or the log cannot be serialized.
pub fn write_bench_out(
    dir: &Path,
    report: &BenchReport,
    res: &BenchResult,
) -> Result<(), ReplayError> {
    let render = |e: String| ReplayError::new(ReplayErrorKind::Render(e));
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(report).map_err(|e| render(e.to_string()))?;
    std::fs::write(dir.join(BENCH_OUT_FILES[0]), json)?;
    std::fs::write(
        dir.join(BENCH_OUT_FILES[1]),
        bench_hlog(report, res).map_err(render)?,
    )?;
    std::fs::write(dir.join(BENCH_OUT_FILES[2]), bench_svg(report, res))?;
    std::fs::write(dir.join(BENCH_OUT_FILES[3]), bench_html(report, res))?;
    Ok(())
}
