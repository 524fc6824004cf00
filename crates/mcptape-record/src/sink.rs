//! Where records go: a transcript file, one line per record, flushed as written.
//!
//! The sink owns the recording's monotonic clock: every record's `tUs` is read
//! under the sink's lock, so the file's record order is its time order.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mcptape_transcript::time::{TimeError, format_rfc3339_us};
use mcptape_transcript::{
    Direction, Event, Header, HttpMeta, Record, Redaction, Redactor, ServerSpec, TranscriptWriter,
    Transport,
};

use mcptape_wire::protocol::{self, Observation, RevisionDetector};

use crate::error::{RecordError, RecordErrorKind};
use crate::scan::Scanned;

/// A transcript being written: header first, then one flushed line per record.
///
/// Thread-safe (`&self` methods); writes are synchronous and unbuffered beyond
/// one record, so a crash loses at most the record being written.
pub struct TranscriptSink {
    inner: Mutex<Inner>,
    started: Instant,
    path: PathBuf,
    /// What the recorder redacts in the records it writes
    /// ([`TranscriptSink::redacting`]); `None` writes them as given.
    redactor: Option<Redactor>,
}

struct Inner {
    out: TranscriptWriter<Box<dyn Write + Send>>,
    failed: Option<std::io::Error>,
    /// The one revision detector (`mcptape_wire::protocol`), fed every message.
    revision: RevisionDetector,
    /// Whether a client message went to the detector: only an answer to one
    /// (an `initialize` or `server/discover` request) can settle the
    /// revision from a server message, so until then server messages skip
    /// the detector (and its UTF-8 check of the whole line).
    client_observed: bool,
    last_t_us: u64,
}

impl std::fmt::Debug for TranscriptSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptSink")
            .field("path", &self.path)
            .finish_non_exhaustive()
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
        let (file, path) = create_file(path, OnExisting::Keep)?;
        Self::with_writer(Box::new(file), &path, transport, server)
    }

    /// [`TranscriptSink::create`] with `redaction` (what the recorder
    /// redacted: names, pointers, argv positions) in the header.
    ///
    /// Errors: as [`TranscriptSink::create`].
    pub fn create_redacted(
        path: &Path,
        transport: Transport,
        server: ServerSpec,
        redaction: Redaction,
    ) -> Result<Self, RecordError> {
        Self::create_redacted_with(path, transport, server, redaction, OnExisting::Keep)
    }

    /// [`TranscriptSink::create_redacted`], saying what happens to an
    /// existing transcript at `path` ([`OnExisting`]).
    ///
    /// Errors: as [`TranscriptSink::create`].
    pub fn create_redacted_with(
        path: &Path,
        transport: Transport,
        server: ServerSpec,
        redaction: Redaction,
        existing: OnExisting,
    ) -> Result<Self, RecordError> {
        let (file, path) = create_file(path, existing)?;
        Self::with_header(Box::new(file), &path, transport, server, Some(redaction))
    }

    /// The file the records go to: the path asked for, or a numbered
    /// sibling when another recorder holds it ([`MAX_OUTPUT_SUFFIX`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the header to `out` and returns a sink writing records to it.
    /// `path` is only used in error messages.
    ///
    /// Errors: [`RecordErrorKind::Transcript`] if the header cannot be written.
    pub fn with_writer(
        out: Box<dyn Write + Send>,
        path: &Path,
        transport: Transport,
        server: ServerSpec,
    ) -> Result<Self, RecordError> {
        Self::with_header(out, path, transport, server, None)
    }

    fn with_header(
        out: Box<dyn Write + Send>,
        path: &Path,
        transport: Transport,
        server: ServerSpec,
        redaction: Option<Redaction>,
    ) -> Result<Self, RecordError> {
        let started = Instant::now();
        let header = Header {
            mcptape_transcript: mcptape_transcript::FORMAT_VERSION,
            mcptape_version: env!("CARGO_PKG_VERSION").to_owned(),
            transport,
            server,
            started_at: rfc3339_utc(SystemTime::now()).map_err(|e| {
                RecordError::new(RecordErrorKind::Io {
                    what: "system clock",
                    source: std::io::Error::other(e),
                })
            })?,
            protocol_version: None,
            redaction,
        };
        let out = TranscriptWriter::new(out, &header).map_err(|source| {
            RecordError::new(RecordErrorKind::Transcript {
                path: path.to_owned(),
                source,
            })
        })?;
        Ok(TranscriptSink {
            inner: Mutex::new(Inner {
                out,
                failed: None,
                revision: RevisionDetector::new(),
                client_observed: false,
                last_t_us: 0,
            }),
            started,
            path: path.to_owned(),
            redactor: None,
        })
    }

    /// This sink redacting what it writes with `redactor` (share it, or a
    /// clone of it, with whatever redacted the header, so the values
    /// redacted there are known here):
    /// * `stderr` and `noise` lines and `http` details through
    ///   [`Redactor::text`] (secrets seen elsewhere, credential patterns,
    ///   machine directories);
    /// * stdio messages ([`TranscriptSink::record_message_at`]) through
    ///   [`Redactor::message_json`]: a message it alters is recorded
    ///   re-serialized, its record listing the pointers
    ///   (`redactedPointers`); any other stays byte-exact. HTTP bodies are
    ///   redacted by the HTTP proxy before they get here.
    pub fn redacting(mut self, redactor: Redactor) -> Self {
        self.redactor = Some(redactor);
        self
    }

    /// Microseconds since the recording started (monotonic clock).
    pub fn now_us(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Appends one record stamped with the current time and flushes it.
    ///
    /// A write failure is remembered (see [`TranscriptSink::finish`]) and later
    /// records are dropped ([`TranscriptSink::has_failed`]: the stdio proxy
    /// then ends the session rather than pass on bytes it cannot record).
    pub fn record(&self, event: Event) {
        self.record_at(None, event);
    }

    /// Appends one record stamped `t_us` (µs since start, taken when the
    /// event happened), or the current time when `None`. A time earlier than
    /// the last record's is raised to it, so the file's `tUs` never go back.
    pub fn record_at(&self, t_us: Option<u64>, mut event: Event) {
        if let Some(r) = &self.redactor {
            let text = |l: &mut String| {
                if let std::borrow::Cow::Owned(t) = r.text(l) {
                    *l = t;
                }
            };
            match &mut event {
                Event::Stderr { line } | Event::Noise { line, .. } => text(line),
                Event::Http {
                    detail: Some(d), ..
                } => text(d),
                _ => {}
            }
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.failed.is_some() {
            return;
        }
        let t_us = t_us.unwrap_or_else(|| self.now_us()).max(inner.last_t_us);
        inner.last_t_us = t_us;
        let record = Record { t_us, event };
        if let Err(e) = inner.out.write(&record) {
            inner.failed = Some(e);
        }
    }

    /// Records a message line; `bytes` is one line without its terminator.
    ///
    /// Exactly one JSON value → [`Event::Message`] (byte-exact); anything else
    /// (a banner, JSON with surrounding whitespace) → [`Event::Noise`] (lossy
    /// UTF-8). When the message settles the protocol revision (an `initialize`
    /// result, or the first request carrying the `_meta` protocol version:
    /// [`RevisionDetector`] precedence step 1), also records an
    /// [`Event::Protocol`] record with it, right after the message.
    pub fn record_line(&self, dir: Direction, bytes: &[u8], http: Option<HttpMeta>) {
        self.record_line_at(None, dir, bytes, http);
    }

    /// [`TranscriptSink::record_line`] stamped `t_us` (see [`TranscriptSink::record_at`]).
    pub fn record_line_at(
        &self,
        t_us: Option<u64>,
        dir: Direction,
        bytes: &[u8],
        http: Option<HttpMeta>,
    ) {
        self.record_line_with(t_us, dir, bytes, http, Vec::new());
    }

    /// [`TranscriptSink::record_line_at`] of a message the recorder altered,
    /// its record listing `redacted_pointers`.
    fn record_line_with(
        &self,
        t_us: Option<u64>,
        dir: Direction,
        bytes: &[u8],
        http: Option<HttpMeta>,
        redacted_pointers: Vec<String>,
    ) {
        let text = std::str::from_utf8(bytes).ok();
        let msg = text.and_then(|s| Record::message(0, dir, s).ok());
        let Some(Record {
            event: Event::Message { msg, .. },
            ..
        }) = msg
        else {
            self.record_at(
                t_us,
                Event::Noise {
                    dir,
                    line: String::from_utf8_lossy(bytes).into_owned(),
                },
            );
            return;
        };
        let settled = {
            let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.client_observed |= dir == Direction::C2s;
            inner.revision.observe(Observation::Json(
                protocol::Direction::from_client(dir == Direction::C2s),
                msg.get(),
            ))
        };
        self.record_at(
            t_us,
            Event::Message {
                dir,
                msg,
                http,
                redacted_pointers,
            },
        );
        if let Some(d) = settled {
            self.record_at(
                t_us,
                Event::Protocol {
                    version: d.revision.as_str().to_owned(),
                },
            );
        }
    }

    /// Records a stdio message line whose bytes the line framer already found
    /// to be exactly one JSON value (so UTF-8) (`mcptape_transport::stdio::FrameRef::Message`),
    /// stamped `t_us` (see [`TranscriptSink::record_at`]); the record is on its
    /// way to the file (`writev(2)` in pieces of at most
    /// [`TRANSCRIPT_WRITE_BYTES`], in the page cache, which survives a
    /// SIGKILL of mcptape) when this returns.
    ///
    /// The hot path of the stdio proxy: `json` is not parsed again (the
    /// record line is written from its bytes, [`TranscriptWriter::write_raw_message`]),
    /// and the revision detector sees it only until the revision is settled
    /// and only if it can matter (a client message naming `initialize`,
    /// `discover` or `protocolVersion`, or holding a `\u` escape that could
    /// spell them; a server message only once a client message went to the
    /// detector, and then the detector pre-filters it itself).
    /// As [`TranscriptSink::record_line`], a settling message is followed by an
    /// [`Event::Protocol`] record.
    pub fn record_message_at(&self, t_us: Option<u64>, dir: Direction, json: &[u8]) {
        self.record_scanned_message_at(t_us, dir, json, None);
    }

    /// [`TranscriptSink::record_message_at`] with what the proxy's one scan
    /// of the line found (`crate::scan::Scanned`): the client-message
    /// pre-filter's answer, and whether the line holds a `\r` (if not, the
    /// record is written without looking for one). `None` finds both out
    /// here (four `memmem` scans, one `memchr2`). Server messages ignore
    /// the pre-filter answer.
    pub(crate) fn record_scanned_message_at(
        &self,
        t_us: Option<u64>,
        dir: Direction,
        json: &[u8],
        scanned: Option<Scanned>,
    ) {
        if let Some(r) = &self.redactor
            && let Some((text, pointers)) = r.message_json_from(dir == Direction::C2s, json)
        {
            self.record_line_with(t_us, dir, text.as_bytes(), None, pointers);
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.failed.is_some() {
            return;
        }
        let can_settle = |client_observed| match (dir, scanned) {
            (Direction::C2s, Some(s)) => s.may_settle,
            _ => may_settle(dir, json, client_observed),
        };
        let settled = if inner.revision.settled().is_none() && can_settle(inner.client_observed) {
            inner.client_observed |= dir == Direction::C2s;
            let text = std::str::from_utf8(json).ok();
            text.and_then(|text| {
                inner.revision.observe(Observation::Json(
                    protocol::Direction::from_client(dir == Direction::C2s),
                    text,
                ))
            })
        } else {
            None
        };
        let t_us = t_us.unwrap_or_else(|| self.now_us()).max(inner.last_t_us);
        inner.last_t_us = t_us;
        let written = match scanned {
            Some(s) if !s.line_break => inner
                .out
                .write_raw_message_without_line_break(t_us, dir, json),
            _ => inner.out.write_raw_message(t_us, dir, json),
        };
        if let Err(e) = written {
            inner.failed = Some(e);
            return;
        }
        if let Some(d) = settled {
            let record = Record {
                t_us,
                event: Event::Protocol {
                    version: d.revision.as_str().to_owned(),
                },
            };
            if let Err(e) = inner.out.write(&record) {
                inner.failed = Some(e);
            }
        }
    }

    /// Number of records written so far (the header not counted).
    pub fn records(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .out
            .records_written()
    }

    /// Whether a transcript write has failed: nothing is recorded after it, and
    /// the stdio proxy then stops forwarding and ends the session, so that no
    /// line reaches a peer unrecorded. The error itself is
    /// [`TranscriptSink::finish`]'s.
    pub fn has_failed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .failed
            .is_some()
    }

    /// Reports the first write failure, if any; else the number of records written.
    ///
    /// Errors: [`RecordErrorKind::Transcript`] with the first IO error met.
    pub fn finish(&self) -> Result<u64, RecordError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(source) = inner.failed.take() {
            return Err(RecordError::new(RecordErrorKind::Transcript {
                path: self.path.clone(),
                source,
            }));
        }
        Ok(inner.out.records_written())
    }
}

/// Whether `json` can settle the protocol revision: a server message once a
/// client message went to the detector (`client_observed`: the detector
/// pre-filters server messages itself, and none can settle before a client
/// request it answers was observed); a client message only if it names
/// `initialize` or `discover` (`server/discover`, also as `server\/discover`)
/// or carries `protocolVersion` (the 2026-07-28 request `_meta` key), or
/// holds a `\u` escape that could spell one of them.
fn may_settle(dir: Direction, json: &[u8], client_observed: bool) -> bool {
    use memchr::memmem;
    if dir == Direction::S2c {
        return client_observed;
    }
    [
        b"initialize".as_slice(),
        b"discover",
        b"protocolVersion",
        b"\\u",
    ]
    .iter()
    .any(|n| memmem::find(json, n).is_some())
}

/// Request `_meta` key carrying the protocol revision on every 2026-07-28
/// request: [`protocol::meta::PROTOCOL_VERSION`].
pub use mcptape_wire::protocol::meta::PROTOCOL_VERSION as META_PROTOCOL_VERSION;

/// Formats `t` as RFC 3339 UTC with milliseconds (`2026-11-30T00:46:25.123Z`); a time
/// before the Unix epoch counts as the epoch.
///
/// # Errors
/// [`TimeError::OutOfRange`] for a time past the year 9999.
pub fn rfc3339_utc(t: SystemTime) -> Result<String, TimeError> {
    let us = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_micros();
    format_rfc3339_us(i64::try_from(us).unwrap_or(i64::MAX), 3)
}

/// Most numbered siblings tried when the transcript file is held by another
/// recorder (`T.jsonl` → `T.1.jsonl` … `T.99.jsonl`).
pub const MAX_OUTPUT_SUFFIX: u32 = 99;

/// `path` with the number `n` before its extension (`t.jsonl`, 2 →
/// `t.2.jsonl`; `t` → `t.2`); `path` itself for 0.
pub fn numbered_output(path: &Path, n: u32) -> PathBuf {
    if n == 0 {
        return path.to_owned();
    }
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{n}"),
    };
    path.with_file_name(name)
}

/// What the recorder does with a transcript already at its output path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnExisting {
    /// Keep it (nothing recorded is ever lost): a non-empty regular file is
    /// left as it is and the records go to the first free numbered sibling.
    #[default]
    Keep,
    /// Replace it (`record --overwrite`), unless another recorder holds it.
    Overwrite,
}

/// Opens the transcript file at `path` for this recorder alone: an
/// exclusive advisory lock (`flock(2)`, held while the file is open) taken
/// before anything is truncated, so a second recorder started on the same
/// `-o` never truncates the first one's records. A held file, or (with
/// [`OnExisting::Keep`]) an existing non-empty one, is passed over for the
/// first free numbered sibling ([`numbered_output`], up to
/// [`MAX_OUTPUT_SUFFIX`]): the TypeScript SDK v2 starts the server command
/// twice, a probe and then the session, one after the other, and both
/// recordings are kept. Returns the file and the path it is at.
///
/// Errors: [`RecordErrorKind::Transcript`] with the path that cannot be
/// opened, locked or truncated; [`RecordErrorKind::OutputHeld`] when `path`
/// and every numbered sibling are taken.
fn create_file(path: &Path, existing: OnExisting) -> Result<(PiecewiseFile, PathBuf), RecordError> {
    let err = |p: &Path, source| {
        RecordError::new(RecordErrorKind::Transcript {
            path: p.to_owned(),
            source,
        })
    };
    for n in 0..=MAX_OUTPUT_SUFFIX {
        let p = numbered_output(path, n);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&p)
            .map_err(|e| err(&p, e))?;
        match file.try_lock() {
            Ok(()) => {
                let meta = file.metadata().map_err(|e| err(&p, e))?;
                if existing == OnExisting::Keep && meta.is_file() && meta.len() > 0 {
                    // A recording already there: kept, not truncated.
                    continue;
                }
                if meta.is_file() {
                    file.set_len(0).map_err(|e| err(&p, e))?;
                }
                return Ok((PiecewiseFile(file), p));
            }
            Err(std::fs::TryLockError::WouldBlock) => continue,
            Err(std::fs::TryLockError::Error(e)) => return Err(err(&p, e)),
        }
    }
    Err(RecordError::new(RecordErrorKind::OutputHeld {
        path: path.to_owned(),
        tried: MAX_OUTPUT_SUFFIX,
    }))
}

/// Largest single `write(2)`/`writev(2)` to the transcript file, in bytes
/// (256 KiB).
///
/// A longer record goes to the file in pieces of at most this size, all
/// under the sink's lock (records stay whole and in order). A SIGKILL
/// between two pieces leaves a cut last line, which the reader drops and
/// reports, and the stdio proxy has not forwarded that line yet (it forwards
/// a line only after its record is written). Why pieces: on Linux file
/// systems with large folios (ext4 since Linux 6.16), one 16 MiB write makes
/// the page cache ask for 2 MiB folios, and the kernel compacts memory to
/// find them (the `write(2)` then spends most of its time migrating pages).
/// Measured on the development machine (ext4, Linux 6.18, `dd` of 128 MiB
/// into a fresh file, see `benches/README.md`, issue 15): 57–87 MB/s with
/// 2 MiB and 16 MiB writes, 1.0–2.6 GB/s with 128–512 KiB writes.
pub const TRANSCRIPT_WRITE_BYTES: usize = 256 * 1024;

/// The transcript file, written in pieces of at most [`TRANSCRIPT_WRITE_BYTES`]
/// (each `write`/`write_vectored` call may take less than it was given;
/// `write_all` and the transcript writer's vectored loop write the rest).
struct PiecewiseFile(std::fs::File);

/// Most slices passed to one `writev(2)` (a record line has three).
const PIECE_SLICES: usize = 8;

impl Write for PiecewiseFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(&buf[..buf.len().min(TRANSCRIPT_WRITE_BYTES)])
    }

    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        let mut piece = [std::io::IoSlice::new(&[]); PIECE_SLICES];
        let mut room = TRANSCRIPT_WRITE_BYTES;
        let mut used = 0;
        for b in bufs.iter().filter(|b| !b.is_empty()).take(PIECE_SLICES) {
            if room == 0 {
                break;
            }
            let take = b.len().min(room);
            piece[used] = std::io::IoSlice::new(&b[..take]);
            used += 1;
            room -= take;
        }
        self.0.write_vectored(&piece[..used])
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH).unwrap(), "1970-01-01T00:00:00.000Z");
        // 2026-11-30T00:46:25.123Z
        let t = UNIX_EPOCH + Duration::from_millis(1_795_999_585_123);
        assert_eq!(rfc3339_utc(t).unwrap(), "2026-11-30T00:46:25.123Z");
        // leap day 2024-02-29T12:00:00Z = 1709208000
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH + Duration::from_secs(1_709_208_000)).unwrap(),
            "2024-02-29T12:00:00.000Z"
        );
    }
}

#[cfg(test)]
mod whitespace_tests {
    use super::*;
    use std::sync::Arc;

    /// A `Write` whose bytes stay readable after the sink took it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn memory_sink() -> (Shared, TranscriptSink) {
        let out = Shared::default();
        let sink = TranscriptSink::with_writer(
            Box::new(out.clone()),
            Path::new("mem"),
            Transport::Stdio,
            ServerSpec::default(),
        )
        .unwrap();
        (out, sink)
    }

    fn events(out: &Shared) -> Vec<Event> {
        let bytes = out.0.lock().unwrap().clone();
        mcptape_transcript::read(&bytes)
            .unwrap()
            .records
            .into_iter()
            .map(|r| r.event)
            .collect()
    }

    fn protocol_records(out: &Shared) -> Vec<(usize, String)> {
        events(out)
            .into_iter()
            .enumerate()
            .filter_map(|(i, e)| match e {
                Event::Protocol { version } => Some((i, version)),
                _ => None,
            })
            .collect()
    }

    /// The protocol record follows the `initialize` result that answers the
    /// client's `initialize`, once; a `protocolVersion` elsewhere is not one.
    #[test]
    fn protocol_record_after_the_matching_initialize_result_only() {
        let (out, sink) = memory_sink();
        let lines: [(Direction, &str); 5] = [
            (
                Direction::C2s,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            ),
            (
                Direction::S2c,
                r#"{"jsonrpc":"2.0","method":"x","params":{"protocolVersion":"1"}}"#,
            ),
            (
                Direction::S2c,
                r#"{"jsonrpc":"2.0","id":9,"result":{"protocolVersion":"2024-11-05"}}"#,
            ),
            (
                Direction::S2c,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#,
            ),
            (
                Direction::C2s,
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            ),
        ];
        for (d, l) in lines {
            sink.record_line(d, l.as_bytes(), None);
        }
        assert_eq!(protocol_records(&out), vec![(4, "2025-06-18".to_owned())]);
    }

    /// The raw hot path of the stdio proxy writes the same records as
    /// `record_line` (byte-exact messages, the protocol record after the
    /// settling `initialize` result, once), with the pre-filter of client
    /// messages letting the `initialize` request through.
    #[test]
    fn raw_message_path_writes_the_records_of_record_line() {
        let lines: [(Direction, &str); 4] = [
            (
                Direction::C2s,
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            (
                Direction::C2s,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            ),
            (
                Direction::S2c,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#,
            ),
            (Direction::S2c, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        ];
        let (typed, a) = memory_sink();
        let (raw, b) = memory_sink();
        for (d, l) in lines {
            a.record_line_at(Some(7), d, l.as_bytes(), None);
            b.record_message_at(Some(7), d, l.as_bytes());
        }
        assert_eq!(protocol_records(&raw), vec![(3, "2025-06-18".to_owned())]);
        let header_end = |o: &Shared| {
            let v = o.0.lock().unwrap().clone();
            let i = v.iter().position(|&c| c == b'\n').unwrap();
            v[i..].to_vec()
        };
        assert_eq!(header_end(&raw), header_end(&typed));
        assert_eq!(b.records(), 5);
    }

    /// The proxy's path (what its one scan found, `crate::scan`) writes the
    /// bytes of the plain raw path: with and without a `\r` between tokens
    /// (that one is written as `msgText`, as `TranscriptWriter::write` does),
    /// and the protocol record after the settling `initialize` result.
    #[test]
    fn scanned_message_path_writes_the_bytes_of_the_raw_path() {
        let lines: [(Direction, &[u8]); 5] = [
            (Direction::C2s, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            (Direction::C2s, b"{\"jsonrpc\":\"2.0\",\r\"id\":2,\"method\":\"ping\"}"),
            (
                Direction::C2s,
                br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            ),
            (
                Direction::S2c,
                br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#,
            ),
            (Direction::S2c, b"[1,\r2]"),
        ];
        let (plain, a) = memory_sink();
        let (scanned, b) = memory_sink();
        for (d, l) in lines {
            let mut scan = crate::scan::LineScan::new(d == Direction::C2s);
            assert_eq!(scan.feed(l), None);
            let crate::scan::Verdict::Json(s) = scan.verdict() else {
                panic!("{l:?}")
            };
            assert_eq!(s.line_break, l.contains(&b'\r'));
            a.record_message_at(Some(7), d, l);
            b.record_scanned_message_at(Some(7), d, l, Some(s));
        }
        let bytes = |o: &Shared| {
            let v = o.0.lock().unwrap().clone();
            let i = v.iter().position(|&c| c == b'\n').unwrap();
            v[i..].to_vec()
        };
        assert_eq!(bytes(&scanned), bytes(&plain));
        assert_eq!(
            protocol_records(&scanned),
            vec![(4, "2025-06-18".to_owned())]
        );
        assert_eq!(b.records(), 6);
    }

    /// A server message that looks like an `initialize` result but comes
    /// before any client request skips the detector on the raw path (nothing
    /// it could answer was observed) and settles nothing; the real answer to
    /// the later `initialize` request still does, once.
    #[test]
    fn server_message_before_any_client_request_settles_nothing() {
        let (out, sink) = memory_sink();
        let early = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05"}}"#;
        sink.record_message_at(Some(1), Direction::S2c, early);
        assert_eq!(protocol_records(&out), vec![]);
        sink.record_message_at(
            Some(2),
            Direction::C2s,
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        );
        sink.record_message_at(
            Some(3),
            Direction::S2c,
            br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#,
        );
        sink.record_message_at(Some(4), Direction::S2c, early);
        assert_eq!(protocol_records(&out), vec![(3, "2025-06-18".to_owned())]);
    }

    /// Issue 23: two recorders on one `-o` (the TypeScript SDK v2 starts the
    /// server command twice): the second takes `t.1.jsonl` and never
    /// truncates the first one's records, at once or one after the other;
    /// `OnExisting::Overwrite` replaces a transcript no recorder holds.
    #[test]
    fn two_recorders_on_one_output_never_truncate_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let a = TranscriptSink::create(&path, Transport::Stdio, ServerSpec::default()).unwrap();
        a.record_message_at(Some(1), Direction::C2s, b"1");
        let b = TranscriptSink::create(&path, Transport::Stdio, ServerSpec::default()).unwrap();
        assert_eq!(a.path(), path);
        assert_eq!(b.path(), dir.path().join("t.1.jsonl"));
        b.record_message_at(Some(1), Direction::C2s, b"2");
        a.record_message_at(Some(2), Direction::S2c, b"3");
        assert_eq!((a.finish().unwrap(), b.finish().unwrap()), (2, 1));
        let count = |p: &Path| {
            mcptape_transcript::read(&std::fs::read(p).unwrap())
                .unwrap()
                .records
                .len()
        };
        assert_eq!((count(&path), count(b.path())), (2, 1));
        drop((a, b));
        // One after the other (the SDK's probe, then its session): kept too.
        let c = TranscriptSink::create(&path, Transport::Stdio, ServerSpec::default()).unwrap();
        assert_eq!(c.path(), dir.path().join("t.2.jsonl"));
        drop(c);
        assert_eq!((count(&path), count(&dir.path().join("t.1.jsonl"))), (2, 1));
        // --overwrite replaces a recording no one holds.
        let d = TranscriptSink::create_redacted_with(
            &path,
            Transport::Stdio,
            ServerSpec::default(),
            Redaction::default(),
            OnExisting::Overwrite,
        )
        .unwrap();
        assert_eq!(d.path(), path);
    }

    /// [`MAX_OUTPUT_SUFFIX`] at the limit (every sibling up to .98 held: the
    /// recorder gets .99) and one past (.99 held too: `OutputHeld`).
    #[test]
    fn output_held_at_the_limit_and_one_past() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let hold = |n: u32| {
            let f = std::fs::File::create(numbered_output(&path, n)).unwrap();
            f.try_lock().unwrap();
            f
        };
        let mut held: Vec<std::fs::File> = (0..MAX_OUTPUT_SUFFIX).map(hold).collect();
        let (_, p) = create_file(&path, OnExisting::Overwrite).unwrap();
        assert_eq!(p, dir.path().join("t.99.jsonl"));
        held.push(hold(MAX_OUTPUT_SUFFIX));
        let Err(e) = create_file(&path, OnExisting::Overwrite) else {
            panic!("a free name past .{MAX_OUTPUT_SUFFIX}");
        };
        assert!(
            matches!(
                e.kind(),
                RecordErrorKind::OutputHeld {
                    tried: MAX_OUTPUT_SUFFIX,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(numbered_output(Path::new("/x/t"), 3), Path::new("/x/t.3"));
    }

    /// A record longer than [`TRANSCRIPT_WRITE_BYTES`] goes to the file in
    /// pieces and reads back whole and byte-exact, between whole neighbours.
    #[test]
    fn record_longer_than_one_write_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let sink = TranscriptSink::create(&path, Transport::Stdio, ServerSpec::default()).unwrap();
        let big = format!("\"{}\"", "b".repeat(3 * TRANSCRIPT_WRITE_BYTES + 17));
        sink.record_message_at(Some(1), Direction::C2s, b"1");
        sink.record_message_at(Some(2), Direction::S2c, big.as_bytes());
        sink.record_message_at(Some(3), Direction::C2s, b"2");
        assert_eq!(sink.finish().unwrap(), 3);
        let t = mcptape_transcript::read(&std::fs::read(&path).unwrap()).unwrap();
        assert!(t.dropped.is_none());
        let msgs: Vec<String> = t
            .records
            .iter()
            .map(|r| match &r.event {
                Event::Message { msg, .. } => msg.get().to_owned(),
                e => panic!("{e:?}"),
            })
            .collect();
        assert_eq!(msgs, vec!["1".to_owned(), big, "2".to_owned()]);
    }

    /// 2026-07-28: the `server/discover` probe does not settle the revision
    /// (it may fall back to `initialize`); the next request's `_meta` does.
    #[test]
    fn protocol_record_after_first_meta_request_not_the_discover_probe() {
        let (out, sink) = memory_sink();
        let modern = r#"{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let probe = modern
            .replace("resources/list", "server/discover")
            .replace("\"id\":2", "\"id\":1");
        sink.record_line(Direction::C2s, probe.as_bytes(), None);
        sink.record_line(
            Direction::S2c,
            br#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}"#,
            None,
        );
        assert_eq!(protocol_records(&out), vec![]);
        sink.record_line(Direction::C2s, modern.as_bytes(), None);
        assert_eq!(protocol_records(&out), vec![(3, "2026-07-28".to_owned())]);
    }

    /// Nothing recorded is ever altered: a line with whitespace around its JSON
    /// value is noise with the exact bytes (as `LineFramer` classifies it), not
    /// a trimmed message.
    #[test]
    fn line_with_whitespace_around_json_is_noise_with_exact_bytes() {
        let (out, sink) = memory_sink();
        let line = b" {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\t ";
        let mut framed = Vec::new();
        mcptape_transport::stdio::LineFramer::new(1024)
            .push_with(&[line.as_slice(), b"\n"].concat(), |f| {
                framed.push(f.to_owned_frame())
            });
        assert_eq!(
            framed,
            vec![mcptape_transport::stdio::Frame::Noise(line.to_vec())]
        );
        sink.record_line(Direction::S2c, line, None);
        sink.record_line(Direction::C2s, line, None);
        let bytes = out.0.lock().unwrap().clone();
        let t = mcptape_transcript::read(&bytes).unwrap();
        let want = std::str::from_utf8(line).unwrap().to_owned();
        assert_eq!(
            t.records
                .iter()
                .map(|r| r.event.clone())
                .collect::<Vec<_>>(),
            vec![
                Event::Noise {
                    dir: Direction::S2c,
                    line: want.clone()
                },
                Event::Noise {
                    dir: Direction::C2s,
                    line: want
                },
            ]
        );
    }
}
