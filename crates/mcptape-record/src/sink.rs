//! Where records go: a transcript file, one line per record, flushed as written.
//!
//! The sink owns the recording's monotonic clock: every record's `tUs` is read
//! under the sink's lock, so the file's record order is its time order.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mcptape_transcript::{Direction, Event, Header, HttpMeta, ServerSpec, Transport};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::{RecordError, RecordErrorKind};

/// A transcript being written: header first, then one flushed line per record.
///
/// Thread-safe (`&self` methods); writes are synchronous and unbuffered beyond
/// one record, so a crash loses at most the record being written.
pub struct TranscriptSink {
    inner: Mutex<Inner>,
    started: Instant,
    path: PathBuf,
}

struct Inner {
    out: Box<dyn Write + Send>,
    records: u64,
    failed: Option<std::io::Error>,
    protocol_seen: bool,
}

impl std::fmt::Debug for TranscriptSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptSink")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Wire shape of a record line (see `mcptape_transcript` crate docs).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    t_us: u64,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    dir: Option<Direction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    msg: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    http: Option<&'a HttpMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
}

impl<'a> Line<'a> {
    fn of(t_us: u64, event: &'a Event) -> Option<Line<'a>> {
        let mut l = Line {
            t_us,
            kind: "",
            dir: None,
            msg: None,
            http: None,
            line: None,
            version: None,
            code: None,
            signal: None,
        };
        match event {
            Event::Message { dir, msg, http } => {
                l.kind = "message";
                l.dir = Some(*dir);
                l.msg = Some(msg);
                l.http = http.as_ref();
            }
            Event::Noise { dir, line } => {
                l.kind = "noise";
                l.dir = Some(*dir);
                l.line = Some(line);
            }
            Event::Stderr { line } => {
                l.kind = "stderr";
                l.line = Some(line);
            }
            Event::Protocol { version } => {
                l.kind = "protocol";
                l.version = Some(version);
            }
            Event::Exit { code, signal } => {
                l.kind = "exit";
                l.code = *code;
                l.signal = *signal;
            }
            _ => return None,
        }
        Some(l)
    }
}

impl TranscriptSink {
    /// Creates (truncates) `path` and writes the header line.
    ///
    /// Errors: [`RecordErrorKind::Transcript`] if the file cannot be created or written.
    pub fn create(
        path: &Path,
        transport: Transport,
        server: ServerSpec,
    ) -> Result<Self, RecordError> {
        let file = std::fs::File::create(path).map_err(|source| {
            RecordError::new(RecordErrorKind::Transcript {
                path: path.to_owned(),
                source,
            })
        })?;
        Self::with_writer(Box::new(file), path, transport, server)
    }

    /// Writes the header to `out` and returns a sink writing records to it.
    /// `path` is only used in error messages.
    ///
    /// Errors: [`RecordErrorKind::Transcript`] if the header cannot be written.
    pub fn with_writer(
        mut out: Box<dyn Write + Send>,
        path: &Path,
        transport: Transport,
        server: ServerSpec,
    ) -> Result<Self, RecordError> {
        let started = Instant::now();
        let header = Header {
            mcptape_transcript: mcptape_transcript::FORMAT_VERSION,
            mcptape_version: env!("CARGO_PKG_VERSION").to_owned(),
            transport,
            server,
            started_at: rfc3339_utc(SystemTime::now()),
            protocol_version: None,
        };
        let mut line = serde_json::to_vec(&header).expect("header serializes");
        line.push(b'\n');
        out.write_all(&line)
            .and_then(|()| out.flush())
            .map_err(|source| {
                RecordError::new(RecordErrorKind::Transcript {
                    path: path.to_owned(),
                    source,
                })
            })?;
        Ok(TranscriptSink {
            inner: Mutex::new(Inner {
                out,
                records: 0,
                failed: None,
                protocol_seen: false,
            }),
            started,
            path: path.to_owned(),
        })
    }

    /// Microseconds since the recording started (monotonic clock).
    pub fn now_us(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Appends one record stamped with the current time and flushes it.
    ///
    /// A write failure is remembered (see [`TranscriptSink::finish`]) and later
    /// records are dropped: the proxy keeps passing bytes through even when the
    /// disk is full, and reports the failure at the end.
    pub fn record(&self, event: Event) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.failed.is_some() {
            return;
        }
        let t_us = self.now_us();
        let Some(line) = Line::of(t_us, &event) else {
            return;
        };
        let mut bytes = match serde_json::to_vec(&line) {
            Ok(b) => b,
            Err(e) => {
                inner.failed = Some(std::io::Error::other(e));
                return;
            }
        };
        bytes.push(b'\n');
        let r = inner.out.write_all(&bytes).and_then(|()| inner.out.flush());
        match r {
            Ok(()) => inner.records += 1,
            Err(e) => inner.failed = Some(e),
        }
    }

    /// Records a message line; `bytes` is one line without its terminator.
    ///
    /// JSON → [`Event::Message`] (byte-exact, surrounding whitespace excepted);
    /// anything else → [`Event::Noise`] (lossy UTF-8). On the first
    /// `initialize` result or `server/discover` result seen, also records an
    /// [`Event::Protocol`] record with the negotiated version.
    pub fn record_line(&self, dir: Direction, bytes: &[u8], http: Option<HttpMeta>) {
        match std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| serde_json::from_str::<&RawValue>(s).ok())
        {
            Some(raw) => {
                let version = if dir == Direction::S2c {
                    protocol_version_of(raw.get())
                } else {
                    None
                };
                self.record(Event::Message {
                    dir,
                    msg: raw.to_owned(),
                    http,
                });
                if let Some(version) = version {
                    let first = {
                        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
                        !std::mem::replace(&mut inner.protocol_seen, true)
                    };
                    if first {
                        self.record(Event::Protocol { version });
                    }
                }
            }
            None => self.record(Event::Noise {
                dir,
                line: String::from_utf8_lossy(bytes).into_owned(),
            }),
        }
    }

    /// Number of records written so far (the header not counted).
    pub fn records(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).records
    }

    /// Flushes and reports the first write failure, if any.
    ///
    /// Errors: [`RecordErrorKind::Transcript`] with the first IO error met.
    pub fn finish(&self) -> Result<u64, RecordError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let flushed = inner.out.flush();
        if let Some(source) = inner.failed.take() {
            return Err(RecordError::new(RecordErrorKind::Transcript {
                path: self.path.clone(),
                source,
            }));
        }
        flushed.map_err(|source| {
            RecordError::new(RecordErrorKind::Transcript {
                path: self.path.clone(),
                source,
            })
        })?;
        Ok(inner.records)
    }
}

/// The `protocolVersion` of an `initialize` or `server/discover` result, if `msg` is one.
fn protocol_version_of(msg: &str) -> Option<String> {
    // Cheap pre-filter: most messages are not handshake results.
    if !msg.contains("\"protocolVersion\"") {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Reply {
        result: Option<ResultPart>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ResultPart {
        protocol_version: Option<String>,
        supported_versions: Option<Vec<String>>,
    }
    let reply: Reply = serde_json::from_str(msg).ok()?;
    let result = reply.result?;
    result
        .protocol_version
        .or_else(|| result.supported_versions.and_then(|v| v.into_iter().next()))
}

/// Formats `t` as RFC 3339 UTC with milliseconds (`2026-11-30T00:46:25.123Z`).
pub fn rfc3339_utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2026-11-30T00:46:25.123Z
        let t = UNIX_EPOCH + Duration::from_millis(1_795_999_585_123);
        assert_eq!(rfc3339_utc(t), "2026-11-30T00:46:25.123Z");
        // leap day 2024-02-29T12:00:00Z = 1709208000
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(1_709_208_000)),
            "2024-02-29T12:00:00.000Z"
        );
    }

    #[test]
    fn protocol_version_from_initialize_and_discover() {
        assert_eq!(
            protocol_version_of(
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#
            )
            .as_deref(),
            Some("2025-11-25")
        );
        assert_eq!(
            protocol_version_of(r#"{"jsonrpc":"2.0","id":0,"result":{"tools":[]}}"#),
            None
        );
        assert_eq!(
            protocol_version_of(r#"{"method":"x","params":{"protocolVersion":"1"}}"#),
            None
        );
    }
}
