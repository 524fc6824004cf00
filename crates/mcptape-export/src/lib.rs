//! Export of mcptape Streamable HTTP recordings to load-testing tools, and
//! import of their results back into mcptape's own report.
//!
//! - [`k6`]: `mcptape export k6` writes a k6 (≥ 1.0 API) JavaScript script
//!   from a recording ([`k6::plan`] reads the transcript, [`k6::script`] writes
//!   the JavaScript, [`k6::slo`] turns `--slo` into k6 `thresholds`);
//!   `mcptape import k6` reads k6's `--out json=FILE` NDJSON outputs (one per
//!   execution segment or machine, `.gz` too) and merges them into the
//!   HdrHistograms, `report.json`, `.hlog` and SVG of `mcptape bench`
//!   ([`k6::import`]).
//! - A HAR exporter will sit beside it as `har`.
//!
//! IO shell: reads and writes files. The transcript is read with
//! `mcptape_transcript`, messages parsed with `mcptape_wire::jsonrpc`, and
//! statistics and rendering are `mcptape_replay::report`'s.

pub mod error;
pub mod k6;

pub use error::{ExportError, ExportErrorKind};
