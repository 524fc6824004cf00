//! The files of `bench --out DIR`: the report and its renderings ([`mcptape_report::render`])
//! written into one directory.

use std::path::Path;

use mcptape_report::render::{BENCH_OUT_FILES, bench_hlog, bench_html, bench_svg};
use mcptape_report::run::BenchResult;
use mcptape_report::stats::BenchReport;

use crate::error::{ReplayError, ReplayErrorKind};

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
        bench_hlog(report, res).map_err(|e| render(e.to_string()))?,
    )?;
    std::fs::write(dir.join(BENCH_OUT_FILES[2]), bench_svg(report, res))?;
    std::fs::write(dir.join(BENCH_OUT_FILES[3]), bench_html(report, res))?;
    Ok(())
}
