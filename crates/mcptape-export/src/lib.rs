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
//! - [`har`]: `mcptape export har` writes a HAR 1.2 log of a Streamable HTTP
//!   recording (requests, redacted headers, bodies, SSE streams as
//!   `text/event-stream` content, timings from the recording's µs);
//!   [`har_import`]: `mcptape import har` turns a browser's, a proxy's or that
//!   HAR back into a transcript.
//!
//! IO shell: reads and writes files. The transcript is read with
//! `mcptape_transcript`, messages parsed with `mcptape_wire::envelope`, and
//! statistics and rendering are `mcptape_report`'s.
//!
//! `--slo` as the k6 script's `thresholds` (Trends in ms, errors as a 0..1 rate):
//!
//! ```
//! use mcptape_export::k6::{slo::thresholds, METRIC_READ, METRIC_UNEXPECTED};
//!
//! let t = thresholds("read.p99<50ms,errors<1%").unwrap();
//! assert_eq!(t[METRIC_READ], ["p(99)<50"]);
//! assert_eq!(t[METRIC_UNEXPECTED], ["rate<0.01"]);
//! assert!(thresholds("read.p99<50").is_err()); // a duration needs its unit
//! ```

pub mod error;
pub mod har;
pub mod har_import;
pub mod k6;

pub use error::{ExportError, ExportErrorKind};

/// Reads and parses the transcript at `path` (strictly, as
/// `mcptape_transcript::reader::read`); the file name for errors, and the
/// transcript.
///
/// # Errors
/// [`ExportErrorKind::NotRegularFile`] for a FIFO, socket or device (refused at once),
/// [`ExportErrorKind::Io`] when the file cannot be read (line 0),
/// [`ExportErrorKind::Transcript`] when it is not a transcript (with the line).
pub(crate) fn read_transcript_file(
    path: &std::path::Path,
) -> Result<(String, mcptape_transcript::Transcript), ExportError> {
    let name = path.display().to_string();
    let bytes = read_input(path, &name)?;
    let t = mcptape_transcript::reader::read(&bytes).map_err(|e| {
        ExportError::at(
            ExportErrorKind::Transcript(e.kind.to_string()),
            &name,
            e.line,
        )
    })?;
    Ok((name, t))
}

/// Opens an input file (a transcript, a HAR, a k6 output) through the shared non-blocking
/// opener ([`mcptape_transcript::file::open_regular`], as `mcptape check`, `inspect`, `serve` and
/// `bench` read theirs): a FIFO, socket or device fails at once instead of blocking the open or
/// the first read forever. `name` is the file as errors name it.
///
/// # Errors
/// [`ExportErrorKind::NotRegularFile`] for a FIFO, socket or device; [`ExportErrorKind::Io`]
/// when it cannot be opened (or is a directory). Both at line 0 of `name`.
pub(crate) fn open_input(path: &std::path::Path, name: &str) -> Result<std::fs::File, ExportError> {
    use mcptape_transcript::file::FileErrorKind;
    let (file, _) = mcptape_transcript::file::open_regular(path).map_err(|e| {
        let kind = match e.into_kind() {
            FileErrorKind::IsDirectory => ExportErrorKind::Io("is a directory, not a file".into()),
            FileErrorKind::Io(io) => ExportErrorKind::Io(io.to_string()),
            _ => ExportErrorKind::NotRegularFile,
        };
        ExportError::at(kind, name, 0)
    })?;
    Ok(file)
}

/// [`open_input`], then the whole file.
///
/// # Errors
/// As [`open_input`]; [`ExportErrorKind::Io`] when the read fails.
pub(crate) fn read_input(path: &std::path::Path, name: &str) -> Result<Vec<u8>, ExportError> {
    use std::io::Read as _;
    let mut file = open_input(path, name)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| ExportError::at(ExportErrorKind::Io(e.to_string()), name, 0))?;
    Ok(bytes)
}

/// The recorded server URL of a Streamable HTTP transcript.
///
/// # Errors
/// `not_http(transport)` (the transport in lower case, `stdio`) for another
/// transport; [`ExportErrorKind::NoUrl`] without `server.url`.
pub(crate) fn http_server_url(
    t: &mcptape_transcript::Transcript,
    not_http: fn(String) -> ExportErrorKind,
) -> Result<String, ExportError> {
    if t.header.transport != mcptape_transcript::Transport::Http {
        let transport = format!("{:?}", t.header.transport).to_lowercase();
        return Err(ExportError::new(not_http(transport)));
    }
    t.header
        .server
        .url
        .clone()
        .ok_or_else(|| ExportError::new(ExportErrorKind::NoUrl))
}
