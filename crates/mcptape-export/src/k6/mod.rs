//! k6 (Grafana k6 ≥ 1.0): export a recording to a k6 script, import k6's
//! JSON output into mcptape's bench report.
//!
//! * [`plan`] — what the script replays, taken from a Streamable HTTP
//!   transcript: the handshake as recorded and the recorded `resources/read`
//!   requests, with the era (2025-era sessions, or stateless 2026-07-28).
//! * [`script`] — the JavaScript: single reads and parallel-read turns
//!   (`http.batch`, per-request timeout), custom Trends `mcp_read` and
//!   `mcp_turn`, checks on the JSON-RPC id, `constant-arrival-rate` scenarios.
//! * [`slo`] — `--slo 'read.p99<50ms,turn.p99<800ms,errors<1%'` → k6 `thresholds`.
//! * [`import`] — k6 `--out json=FILE` NDJSON (`.gz` too) from one or more
//!   segments → HdrHistograms → `report.json`, `latency.hlog`, `latency.svg`.

pub mod import;
pub mod plan;
pub mod script;
pub mod slo;

/// The custom Trend of single reads (ms, `isTime`), tagged `method`,
/// `uri_class`, `class`.
pub const METRIC_READ: &str = "mcp_read";
/// The custom Trend of turn completion times (ms), tagged `parallel`, `class`
/// (`complete` or `deadline`).
pub const METRIC_TURN: &str = "mcp_turn";
/// The custom Trend of the reads inside turns answered before the deadline (ms).
pub const METRIC_TURN_READ: &str = "mcp_turn_read";
/// Counter of reads whose outcome was not a result, tagged `class`.
pub const METRIC_ERRORS: &str = "mcp_errors";
/// Rate of reads whose outcome differs from the recorded one (the `errors` SLO).
pub const METRIC_UNEXPECTED: &str = "mcp_unexpected";
/// Counter of turns that reached the deadline.
pub const METRIC_TURN_DEADLINE: &str = "mcp_turn_deadline";
/// Counter of handshakes that failed (retried at the VU's next iteration).
pub const METRIC_HANDSHAKE_FAILED: &str = "mcp_handshake_failed";

use std::path::Path;

use crate::error::ExportError;

/// Reads the transcript at `path` and writes its k6 script
/// ([`plan::plan`] then [`script::script`]); `opts.transcript` defaults to the
/// file name.
///
/// # Errors
/// [`ExportErrorKind::Io`](crate::ExportErrorKind::Io) when the file cannot be read,
/// [`ExportErrorKind::Transcript`](crate::ExportErrorKind::Transcript) when it is not a transcript (with the
/// line), then [`plan::plan`]'s and [`script::script`]'s, all with the file.
pub fn export_file(path: &Path, opts: &script::ScriptOptions) -> Result<String, ExportError> {
    let (name, t) = crate::read_transcript_file(path)?;
    let p = plan::plan(&t).map_err(|e| e.in_file(&name))?;
    let mut opts = opts.clone();
    if opts.transcript.is_empty() {
        opts.transcript = path
            .file_name()
            .map_or(name.clone(), |f| f.to_string_lossy().into_owned());
    }
    script::script(&p, &opts).map_err(|e| e.in_file(&name))
}
