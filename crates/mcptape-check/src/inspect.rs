//! The `mcptape inspect` report: every `resources/read` result entry of a file
//! of newline-delimited JSON-RPC messages (a captured stdio stream) or of an
//! mcptape transcript, as a serializable value ([`InspectReport`], serde
//! camelCase) with a text rendering ([`InspectReport::text`]).
//!
//! Input: a file whose first line is a transcript header (a JSON object with
//! `mcptapeTranscript`) is read through [`mcptape_transcript::reader`]
//! (lenient: a malformed record line is reported and skipped, a cut last line
//! is reported, a stdio transcript that ends without an `exit` record is
//! noted as [`Item::NoExitRecord`], which is not a bad line), and inspect
//! runs on the `msg` of its message records; line
//! numbers are then transcript line numbers (the header is line 1, numbered by
//! [`reader::record_lines`], the helper the check engine uses too) and byte
//! offsets in message errors count from the start of the record's `msg`. In a
//! transcript only client→server requests and server→client answers are
//! paired. Any other file is read as one JSON-RPC message or batch per line.
//!
//! Pairing: when the file holds `resources/read` requests, responses are
//! matched by id (exactly: `1` and `"1"` differ) to the last read request
//! with that id before them (a request answered is remembered among the
//! [`MAX_ANSWERED_READS_KEPT`] answered last, for a second answer); otherwise every
//! response whose `result` has `contents` is taken as a read result. Per
//! entry: uri, mimeType, shape (text/blob), decoded size in bytes, for blobs
//! the base64 length and padding count (RFC 4648 §4 arithmetic,
//! [`mcptape_wire::b64`]), and the sniffed media type against the declared one.
//! Error responses are classified ([`mcptape_wire::classify`]). Nothing here
//! panics on untrusted input; this module does no IO.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::ops::ControlFlow;

use hashbrown::HashTable;
use std::fmt::Write as _;

use mcptape_transcript::Direction;

use crate::engine::{Line, Prep, Prepared, ReadPre};
use mcptape_transcript::reader::{self, ReadOptions};
use mcptape_wire::b64;
use mcptape_wire::classify::{ReadErrorClass, classify_read_error};
use mcptape_wire::codec::{self, Member, base64};
use mcptape_wire::envelope::{self, Envelope, EnvelopeKind, ErrorObject, RequestId, Scanned};
use mcptape_wire::error::WireError;
use mcptape_wire::media::{self, MediaMatch};
use mcptape_wire::read_summary::{self, Payload, ReadSummary};
use mcptape_wire::resources::{
    self, ContentsError, Leniency, ReadResourceResult, ResourceContents, Shape,
};
use serde::Serialize;

/// What was inspected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptSource {
    /// `mcptapeTranscript` format version of the header.
    pub format: u32,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Records read (after the header).
    pub records: usize,
    /// Of them, message records.
    pub message_records: usize,
}

/// One `contents` entry of a read result; its strings are `String`s (or,
/// inside the streamed report, borrowed from the message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryReport<S = String> {
    /// The entry's `uri`.
    pub uri: S,
    /// `true` when a request was paired and its uri differs from the entry's.
    pub uri_differs: bool,
    /// Declared `mimeType`, if any.
    pub mime_type: Option<S>,
    /// `text` or `blob`.
    pub shape: &'static str,
    /// Decoded size in bytes (UTF-8 length of `text`, decoded `blob` length).
    pub decoded_bytes: usize,
    /// Blobs only: base64 length in characters, `4 * ceil(n / 3)`.
    pub encoded_chars: Option<u64>,
    /// Blobs only: `=` padding characters (0, 1 or 2).
    pub padding: Option<u8>,
    /// Blobs only: the sniffed type (`None`: no known signature).
    pub sniffed: Option<&'static str>,
    /// Blobs only: sniffed vs declared (`match`, `mismatch`, ...).
    pub media: Option<&'static str>,
    /// Blobs only: the type a host should use when none was declared.
    pub defaulted_to: Option<S>,
    /// Text only: the text is a `data:…;base64,` URI (binary belongs in blob).
    pub data_uri_in_text: bool,
}

/// One line of the report, in file-line order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
#[non_exhaustive]
pub enum Item {
    /// A line that is not a JSON-RPC message, a bad transcript record, a cut tail
    /// or a bad batch element.
    BadLine {
        /// 1-based line number.
        line: usize,
        /// Why (with byte offsets where the parser gives them).
        reason: String,
    },
    /// A read result that parsed.
    ReadResult {
        /// 1-based line number.
        line: usize,
        /// The response id, as JSON text.
        id: String,
        /// The uri of the paired request, if any.
        requested: Option<String>,
        /// `resultType` as on the wire (or `complete` when absent).
        result_type: String,
        /// `true` when `resultType` was absent (legacy peer).
        legacy_result_type: bool,
        /// `ttlMs` in ms (a negative value is treated as 0).
        ttl_ms: Option<u64>,
        /// The negative `ttlMs` sent, if it was clamped.
        ttl_ms_negative: Option<i64>,
        /// `cacheScope`.
        cache_scope: Option<&'static str>,
        /// Lenient base64 accepted (`--lenient`): `(entry index, uri, what)`.
        leniencies: Vec<(usize, String, String)>,
        /// The entries in order.
        entries: Vec<EntryReport>,
    },
    /// A read result that did not parse.
    InvalidResult {
        /// 1-based line number.
        line: usize,
        /// The response id, as JSON text.
        id: String,
        /// The uri of the paired request, if any.
        requested: Option<String>,
        /// The parser's error (kind, entry, offset).
        error: String,
    },
    /// An error response to a read.
    ErrorResponse {
        /// 1-based line number.
        line: usize,
        /// The response id as JSON text (`(none)` for a null id).
        id: String,
        /// The uri of the paired request, if any.
        requested: Option<String>,
        /// JSON-RPC error code.
        code: i64,
        /// Error message.
        message: String,
        /// The class ([`mcptape_wire::classify::ReadErrorClass`]) as text.
        class: String,
        /// What a host should do.
        host_action: &'static str,
    },
    /// A stdio transcript whose last line is a whole record but no `exit`
    /// record ([`reader::NO_EXIT_RECORD`]): the recorder was killed on a line
    /// boundary (or the file was cut there). Not a bad line: every record is
    /// complete; only the server's exit status is unknown. A cut last line is
    /// a [`Item::BadLine`] instead.
    NoExitRecord {
        /// 1-based line number of the last record (1 for a header-only file).
        line: usize,
        /// [`reader::NO_EXIT_RECORD`] and what it means.
        reason: String,
    },
    /// A `resources/read` request without a response in the file.
    Unanswered {
        /// 1-based line number of the request.
        line: usize,
        /// Its id, as JSON text.
        id: String,
        /// Its uri, if any.
        uri: Option<String>,
    },
}

/// Counts over the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InspectSummary {
    /// Lines (plain files) or message records (transcripts) inspected.
    pub units: usize,
    /// JSON-RPC messages (batch elements count one each).
    pub messages: usize,
    /// Read results that parsed.
    pub results: usize,
    /// Their entries.
    pub entries: usize,
    /// Error responses to reads.
    pub errors: usize,
    /// Bad lines (including bad batch elements and transcript records).
    pub bad_lines: usize,
    /// Read results that did not parse.
    pub bad_results: usize,
    /// Blobs whose sniffed type disagrees with the declared one.
    pub mismatches: usize,
}

/// The report of [`inspect`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InspectReport {
    /// Set for an mcptape transcript; `None` for a plain file of lines.
    pub transcript: Option<TranscriptSource>,
    /// A transcript whose header could not be read: the error (nothing else is set).
    pub bad_transcript: Option<String>,
    /// `true` when responses were paired to `resources/read` requests by id.
    pub paired: bool,
    /// Report lines in file order.
    pub items: Vec<Item>,
    /// Counts.
    pub summary: InspectSummary,
}

impl InspectReport {
    /// `true` when every line and result parsed (the CLI exits 0).
    pub fn clean(&self) -> bool {
        self.bad_transcript.is_none()
            && self.summary.bad_lines == 0
            && self.summary.bad_results == 0
    }

    /// Read answers: parsed results, bad results and error responses.
    pub fn read_answers(&self) -> usize {
        self.summary.results + self.summary.errors + self.summary.bad_results
    }

    /// The report as text for people (what `mcptape inspect` prints).
    pub fn text(&self) -> String {
        let mut o = String::new();
        if let Some(e) = &self.bad_transcript {
            let _ = writeln!(o, "source: mcptape transcript\nbad transcript: {e}");
            return o;
        }
        self.text_head(&mut o);
        for item in &self.items {
            render_item(&mut o, item);
        }
        self.text_tail(&mut o);
        o
    }

    /// The lines of [`Self::text`] before the items.
    fn text_head(&self, o: &mut String) {
        if let Some(t) = &self.transcript {
            let _ = writeln!(
                o,
                "source: mcptape transcript (format {}, transport {}, {} records, {} message records); \
                 line numbers are transcript lines, byte offsets in message errors count from the start of the record's msg",
                t.format, t.transport, t.records, t.message_records
            );
        }
        let _ = writeln!(
            o,
            "pairing: {}",
            if self.paired {
                "responses to resources/read requests by id"
            } else {
                "none (no resources/read requests): every result with `contents` is a read result"
            }
        );
    }

    /// The lines of [`Self::text`] after the items.
    fn text_tail(&self, o: &mut String) {
        let s = &self.summary;
        if s.messages == 0 {
            let _ = writeln!(o, "no messages: nothing to inspect");
        } else if self.read_answers() == 0 {
            let _ = writeln!(
                o,
                "no resources/read result in this file ({} messages)",
                s.messages
            );
        }
        let unit = if self.transcript.is_some() {
            "message records"
        } else {
            "lines"
        };
        let _ = writeln!(
            o,
            "summary: {} {unit}, {} messages, {} read results ({} entries), {} error responses, {} bad lines, {} bad results, {} media mismatches",
            s.units,
            s.messages,
            s.results,
            s.entries,
            s.errors,
            s.bad_lines,
            s.bad_results,
            s.mismatches
        );
    }
}

/// ` (requested URI)` when a request was paired, nothing otherwise.
struct Requested<'a>(Option<&'a String>);

impl std::fmt::Display for Requested<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(u) => write!(f, " (requested {u})"),
            None => Ok(()),
        }
    }
}

fn render_item(o: &mut String, item: &Item) {
    match item {
        Item::BadLine { line, reason } => {
            let _ = writeln!(o, "line {line}: {reason}");
        }
        Item::InvalidResult {
            line,
            id,
            requested,
            error,
        } => {
            let req = Requested(requested.as_ref());
            let _ = writeln!(
                o,
                "line {line}: id {id}{req}: invalid resources/read result: {error}"
            );
        }
        Item::ErrorResponse {
            line,
            id,
            requested,
            code,
            message,
            class,
            host_action,
        } => render_error(
            o,
            &ErrorHead {
                line: *line,
                id,
                requested: requested.as_deref(),
                code: *code,
                message,
                host_action,
            },
            class,
        ),
        Item::NoExitRecord { line, reason } => {
            let _ = writeln!(o, "line {line}: {reason}");
        }
        Item::Unanswered { line, id, uri } => {
            let _ = writeln!(
                o,
                "line {line}: resources/read id {id} ({}) has no response in this file",
                uri.as_deref().unwrap_or("(no uri)")
            );
        }
        Item::ReadResult {
            line,
            id,
            requested,
            result_type,
            legacy_result_type,
            ttl_ms,
            ttl_ms_negative,
            cache_scope,
            leniencies,
            entries,
        } => render_read(
            o,
            &ReadHead {
                line: *line,
                id,
                requested: requested.as_deref(),
                result_type,
                legacy_result_type: *legacy_result_type,
                ttl_ms: *ttl_ms,
                ttl_ms_negative: *ttl_ms_negative,
                cache_scope: *cache_scope,
            },
            leniencies,
            entries,
        ),
    }
}

/// The fields of an error response's report line ([`render_error`]) but
/// its class.
struct ErrorHead<'a> {
    line: usize,
    id: &'a str,
    requested: Option<&'a str>,
    code: i64,
    message: &'a str,
    host_action: &'static str,
}

/// `line {line}: id {id}` and, when the request is known, ` (requested {uri})`:
/// how a response's report line starts.
fn push_line_id(o: &mut String, line: usize, id: &str, requested: Option<&str>) {
    o.push_str("line ");
    push_num(o, line);
    o.push_str(": id ");
    o.push_str(id);
    if let Some(u) = requested {
        o.push_str(" (requested ");
        o.push_str(u);
        o.push(')');
    }
}

/// `line {line}: id {id}{req}: error {code} {message:?} -> {class}: {host_action}`,
/// in pieces (a long transcript's error responses: no formatter but for
/// the class).
fn render_error(o: &mut String, h: &ErrorHead<'_>, class: &dyn std::fmt::Display) {
    push_line_id(o, h.line, h.id, h.requested);
    o.push_str(": error ");
    push_num(o, h.code);
    o.push(' ');
    crate::engine::push_debug_str(o, h.message);
    o.push_str(" -> ");
    let _ = write!(o, "{class}");
    o.push_str(": ");
    o.push_str(h.host_action);
    o.push('\n');
}

/// The scalar fields of a read result's report line ([`render_read`]).
struct ReadHead<'a> {
    line: usize,
    id: &'a str,
    requested: Option<&'a str>,
    result_type: &'a str,
    legacy_result_type: bool,
    ttl_ms: Option<u64>,
    ttl_ms_negative: Option<i64>,
    cache_scope: Option<&'static str>,
}

/// What [`Pass::input`] reports: an item, or a read result read as a
/// summary, borrowed from the message and the read request (printed as
/// text without a copy; made an [`Item`] where one is kept or serialized).
enum Out<'a> {
    Item(Item),
    Read {
        head: ReadHead<'a>,
        entries: Vec<EntryReport<&'a str>>,
    },
    /// An error response ([`Item::ErrorResponse`]), borrowed from the
    /// message and the read request, its class as classified.
    Error {
        head: ErrorHead<'a>,
        class: ReadErrorClass,
    },
}

impl From<Item> for Out<'_> {
    fn from(item: Item) -> Self {
        Out::Item(item)
    }
}

impl Out<'_> {
    /// The owned item.
    fn into_item(self) -> Item {
        match self {
            Out::Item(item) => item,
            Out::Error { head, class } => Item::ErrorResponse {
                line: head.line,
                id: head.id.to_owned(),
                requested: head.requested.map(str::to_owned),
                code: head.code,
                message: head.message.to_owned(),
                class: class.to_string(),
                host_action: head.host_action,
            },
            Out::Read { head, entries } => Item::ReadResult {
                line: head.line,
                id: head.id.to_owned(),
                requested: head.requested.map(str::to_owned),
                result_type: head.result_type.to_owned(),
                legacy_result_type: head.legacy_result_type,
                ttl_ms: head.ttl_ms,
                ttl_ms_negative: head.ttl_ms_negative,
                cache_scope: head.cache_scope,
                leniencies: Vec::new(),
                entries: entries
                    .into_iter()
                    .map(|e| EntryReport {
                        uri: e.uri.to_owned(),
                        uri_differs: e.uri_differs,
                        mime_type: e.mime_type.map(str::to_owned),
                        shape: e.shape,
                        decoded_bytes: e.decoded_bytes,
                        encoded_chars: e.encoded_chars,
                        padding: e.padding,
                        sniffed: e.sniffed,
                        media: e.media,
                        defaulted_to: e.defaulted_to.map(str::to_owned),
                        data_uri_in_text: e.data_uri_in_text,
                    })
                    .collect(),
            },
        }
    }
}

/// A read result's lines ([`Item::ReadResult`]), from borrowed fields.
fn render_read<S: AsRef<str>>(
    o: &mut String,
    h: &ReadHead<'_>,
    leniencies: &[(usize, String, String)],
    entries: &[EntryReport<S>],
) {
    // The hot line of a big report: pieces pushed, no formatter.
    push_line_id(o, h.line, h.id, h.requested);
    o.push_str(": resources/read result, ");
    push_num(o, entries.len());
    o.push_str(if entries.len() == 1 {
        " entry, resultType "
    } else {
        " entries, resultType "
    });
    o.push_str(h.result_type);
    if h.legacy_result_type {
        o.push_str(" (absent: legacy peer, assumed complete)");
    }
    if let Some(ttl) = h.ttl_ms {
        o.push_str(", ttlMs ");
        push_num(o, ttl);
        if let Some(neg) = h.ttl_ms_negative {
            let _ = write!(o, " (sent {neg}, treated as 0)");
        }
    }
    if let Some(c) = h.cache_scope {
        let _ = write!(o, ", cacheScope {c}");
    }
    o.push('\n');
    if entries.is_empty() {
        let _ = writeln!(
            o,
            "  empty: contents [] (the resource answered with zero entries; not a not-found)"
        );
    }
    for (i, uri, what) in leniencies {
        let _ = writeln!(o, "  lenient: contents[{i}] ({uri}): accepted {what}");
    }
    for (i, e) in entries.iter().enumerate() {
        render_entry(o, i, e);
    }
}

/// `n` in decimal, pushed to `o` (the hot lines of [`render_entry`]):
/// `itoa`'s digits, the same as `Display`'s.
fn push_num(o: &mut String, n: impl itoa::Integer) {
    o.push_str(itoa::Buffer::new().format(n));
}

fn render_entry<S: AsRef<str>>(o: &mut String, i: usize, e: &EntryReport<S>) {
    let mime = e.mime_type.as_ref().map_or("(none)", AsRef::as_ref);
    o.push_str("  [");
    push_num(o, i);
    o.push_str("] uri       ");
    o.push_str(e.uri.as_ref());
    o.push('\n');
    if e.uri_differs {
        o.push_str("      note      entry uri differs from the requested uri\n");
    }
    o.push_str("      mimeType  ");
    o.push_str(mime);
    o.push_str("\n      shape     ");
    o.push_str(e.shape);
    o.push_str("\n      decoded   ");
    push_num(o, e.decoded_bytes);
    o.push_str(" bytes\n");
    if let (Some(chars), Some(pad)) = (e.encoded_chars, e.padding) {
        o.push_str("      encoded   ");
        push_num(o, chars);
        o.push_str(" chars base64, padding ");
        push_num(o, u64::from(pad));
        o.push('\n');
    }
    if let Some(status) = e.media {
        o.push_str("      sniffed   ");
        o.push_str(e.sniffed.unwrap_or("(unknown)"));
        o.push_str(" vs declared ");
        o.push_str(mime);
        o.push_str(": ");
        o.push_str(status);
        if let Some(d) = &e.defaulted_to {
            o.push_str("; bytes kept as bytes, ");
            o.push_str(d.as_ref());
            o.push_str(" (defaulted)");
        }
        o.push('\n');
    }
    if e.data_uri_in_text {
        o.push_str("      warning   text holds a data:...;base64, URI (binary belongs in blob)\n");
    }
}

/// One JSON-RPC message or batch to inspect: its line number in the file,
/// its bytes, (in a transcript) who sent it, and its [`Skeleton`] when the
/// wire's one-pass scan found a clean `result.contents`.
struct Input<'a> {
    number: usize,
    bytes: &'a [u8],
    /// [`Self::bytes`] as text when known to be UTF-8 (a transcript's
    /// `msg`), so no slice of it is checked again.
    text: Option<&'a str>,
    dir: Option<Direction>,
    skel: Option<Skeleton>,
    /// The envelope scan of [`Self::bytes`] when the reader made it
    /// (`None`: made where it is used).
    scanned: Option<Result<Scanned, WireError>>,
    /// The read summary of a single message as the framing made it
    /// ([`ReadPre::of`]: `Some(None)`, it has none), `None` when it did
    /// not (made where it is used).
    read: Option<Option<ReadPre<'a>>>,
}

/// Decoded bytes of a blob that are sniffed for its media type (4 KiB): every
/// signature [`media::sniff`] knows sits in the first bytes, so a 3 MB blob
/// is never decoded whole.
pub const SNIFF_PREFIX_BYTES: usize = 4096;

/// Base64 characters decoding to [`SNIFF_PREFIX_BYTES`] (rounded up to a
/// whole 4-character quantum, RFC 4648 §4).
const SNIFF_PREFIX_CHARS: usize = SNIFF_PREFIX_BYTES.div_ceil(3) * 4;

/// The media type sniffed from the first [`SNIFF_PREFIX_CHARS`] characters
/// of base64 text `b64` decoded ([`media::sniff`] of at most
/// [`SNIFF_PREFIX_BYTES`] bytes): `Some(None)` when no signature matches,
/// `None` when those characters do not decode.
pub(crate) fn sniff_blob_head(b64: &str) -> Option<Option<&'static str>> {
    let k = b64.len().min(SNIFF_PREFIX_CHARS);
    let head = base64::decode(base64::Path::Simd, b64.as_bytes().get(..k)?).ok()?;
    Some(media::sniff(&head[..head.len().min(SNIFF_PREFIX_BYTES)]))
}

/// What inspect keeps of a `blob` it never decodes: the decoded size (base64
/// arithmetic on the validated length) and the first decoded bytes.
struct BlobFacts {
    decoded: usize,
    prefix: Vec<u8>,
}

/// A message whose `result.contents` the wire's scanner
/// ([`codec::scan_message`]) read cleanly (every blob strict base64,
/// validated in place): the message with each blob's characters cut out (a
/// few hundred bytes, parsed as before for the envelope, pairing and the
/// result's small members) and, per entry, the facts of its blob. A message
/// the scan does not accept has no skeleton and is parsed whole, so every
/// error (and its offset into the line) is the parser's own.
struct Skeleton {
    /// The message with its blobs cut out; empty when nothing was cut (the
    /// skeleton is the message itself: [`Skeleton::text`]), so a text reply
    /// is not held twice.
    bytes: Vec<u8>,
    blobs: Vec<Option<BlobFacts>>,
}

impl Skeleton {
    /// The skeleton's text: [`Self::bytes`], or `line` (the message it was
    /// made of) when no blob was cut.
    fn text<'a>(&'a self, line: &'a [u8]) -> &'a [u8] {
        if self.bytes.is_empty() {
            line
        } else {
            &self.bytes
        }
    }

    #[cfg(test)]
    fn of(line: &[u8]) -> Option<Skeleton> {
        Skeleton::scan(line).ok().flatten()
    }

    /// The wire's one scan of the message (`Err` when it is not strict JSON)
    /// and, from that same scan, its skeleton when it has one.
    fn scan(line: &[u8]) -> Result<Option<Skeleton>, codec::CodecError> {
        let m = codec::scan_message(line)?;
        Ok(Skeleton::from_scan(line, m))
    }

    fn from_scan(line: &[u8], m: codec::ScannedMessage<'_>) -> Option<Skeleton> {
        let range = m.contents?;
        let mut blobs = Vec::with_capacity(m.entries.len());
        let mut cuts = Vec::new();
        for e in &m.entries {
            if !e.issues().is_empty() {
                return None;
            }
            match (&e.blob, &e.blob_check) {
                (
                    Member::Str {
                        offset,
                        value: std::borrow::Cow::Borrowed(v),
                    },
                    Some(Ok(n)),
                ) => {
                    let start = range.start.checked_add(*offset)?.checked_add(1)?;
                    let end = start.checked_add(v.len())?;
                    if line.get(start..end)? != v.as_bytes() {
                        return None;
                    }
                    let k = v.len().min(SNIFF_PREFIX_CHARS);
                    let prefix = base64::decode(base64::Path::Simd, &v.as_bytes()[..k]).ok()?;
                    cuts.push(start..end);
                    blobs.push(Some(BlobFacts {
                        decoded: *n,
                        prefix,
                    }));
                }
                (Member::Absent, None) => blobs.push(None),
                // An escaped blob: the cold path parses it whole.
                _ => return None,
            }
        }
        if cuts.is_empty() {
            return Some(Skeleton {
                bytes: Vec::new(),
                blobs,
            });
        }
        let cut: usize = cuts.iter().map(|r| r.len()).sum();
        let mut bytes = Vec::with_capacity(line.len() - cut);
        let mut at = 0;
        for r in cuts {
            bytes.extend_from_slice(line.get(at..r.start)?);
            at = r.end;
        }
        bytes.extend_from_slice(line.get(at..)?);
        Some(Skeleton { bytes, blobs })
    }
}

/// Inspects the bytes of one file (see the module docs). `lenient` accepts
/// lenient base64 in `blob` and reports what was accepted. Never fails: bad
/// input becomes [`Item::BadLine`] / [`Item::InvalidResult`] items or
/// [`InspectReport::bad_transcript`].
pub fn inspect(data: &[u8], lenient: bool) -> InspectReport {
    if crate::input::is_transcript(data) {
        return inspect_transcript(data, lenient);
    }
    let inputs = data
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| l.iter().any(|b| !b.is_ascii_whitespace()))
        .map(|(i, bytes)| Input {
            number: i + 1,
            bytes,
            text: None,
            dir: None,
            skel: Skeleton::scan(bytes).ok().flatten(),
            scanned: None,
            read: None,
        })
        .collect();
    inspect_messages(None, inputs, Vec::new(), lenient)
}

fn inspect_transcript(data: &[u8], lenient: bool) -> InspectReport {
    // Message records borrow from `data`; each canonical message line is
    // scanned once (its skeleton kept, keyed by the address of its text).
    let mut skels: Vec<(usize, Option<Skeleton>)> = Vec::new();
    let t = match reader::read_borrowed_with(data, ReadOptions::lenient(), |m| {
        let Ok(skel) = Skeleton::scan(m.as_bytes()) else {
            return false;
        };
        skels.push((m.as_ptr() as usize, skel));
        true
    }) {
        Ok(t) => t,
        Err(e) => {
            return InspectReport {
                transcript: None,
                bad_transcript: Some(e.to_string()),
                paired: false,
                items: Vec::new(),
                summary: InspectSummary::default(),
            };
        }
    };
    let lines = reader::lines_of_records(&t.skipped, t.records.len());
    skels.sort_by_key(|(k, _)| *k);
    let inputs: Vec<Input<'_>> = t
        .records
        .iter()
        .zip(&lines)
        .filter_map(|(r, &number)| {
            r.msg().map(|msg| Input {
                number,
                bytes: msg.as_bytes(),
                text: Some(msg),
                dir: r.dir(),
                skel: skels
                    .binary_search_by_key(&(msg.as_ptr() as usize), |(k, _)| *k)
                    .ok()
                    .and_then(|i| skels[i].1.take()),
                scanned: None,
                read: None,
            })
        })
        .collect();
    let mut bad = Vec::new();
    for e in &t.skipped {
        bad.push((e.line, format!("bad transcript record: {}", e.kind)));
    }
    if let Some(d) = &t.dropped {
        bad.push((
            d.line,
            format!(
                "last line cut ({} bytes, no newline), dropped: {}",
                d.bytes, d.reason
            ),
        ));
    }
    // As check's `recording-no-exit` (never with a cut tail, reported above).
    let no_exit = crate::engine::ended_without_exit_record(&t).then(|| Item::NoExitRecord {
        line: lines.last().copied().unwrap_or(1),
        reason: crate::engine::no_exit_message(t.records.len()),
    });
    let source = TranscriptSource {
        format: t.header.mcptape_transcript,
        transport: match t.header.transport {
            mcptape_transcript::Transport::Stdio => "stdio",
            mcptape_transcript::Transport::Http => "http",
        },
        records: t.records.len(),
        message_records: inputs.len(),
    };
    let mut report = inspect_messages(Some(source), inputs, bad, lenient);
    report.items.extend(no_exit);
    report
}

/// The good envelopes of a frame's scan, in order (nothing allocated).
fn envelopes<E>(frame: &Result<Scanned, E>) -> impl Iterator<Item = &Envelope> {
    let (single, batch): (&[Envelope], &[Result<Envelope, WireError>]) = match frame {
        Ok(Scanned::Single(m)) => (std::slice::from_ref(m), &[]),
        Ok(Scanned::Batch(items)) => (&[], items),
        Err(_) => (&[], &[]),
    };
    single
        .iter()
        .chain(batch.iter().filter_map(|r| r.as_ref().ok()))
}

/// One message scanned where it is used (the one envelope scan, no `Value`
/// of any member): its skeleton's text when it has one (the whole message
/// when that does not scan: the skeleton is then dropped). The scan's
/// ranges point into [`input_text`].
fn parse_input(i: &mut Input<'_>) -> Result<Scanned, WireError> {
    if let Some(s) = i.scanned.take() {
        return s;
    }
    if let Some(sk) = &i.skel {
        let scanned = envelope::scan_frame(sk.text(i.bytes));
        if scanned.is_ok() {
            return scanned;
        }
        i.skel = None;
    }
    envelope::scan_frame(i.bytes)
}

/// The text [`parse_input`] scanned.
fn input_text<'a>(i: &'a Input<'_>) -> &'a [u8] {
    i.skel.as_ref().map_or(i.bytes, |sk| sk.text(i.bytes))
}

/// Most answered `resources/read` requests inspect remembers, 65,536 (as
/// check's [`crate::engine::MAX_ANSWERED_KEYS_KEPT`]): a second answer to
/// one of them is still paired with it. Past that the request answered
/// longest ago is forgotten, so memory is bounded by the open requests, not
/// by the length of the session; a late second answer to a forgotten request
/// is then not a read result (when the file holds read requests: pairing).
pub const MAX_ANSWERED_READS_KEPT: usize = 1 << 16;

/// Index entries of [`Reads`]' answered ring (current and stale) at which
/// the stale ones are dropped: twice [`MAX_ANSWERED_READS_KEPT`] (at most one
/// window is current).
const READS_STALE_PRUNE_AT: usize = 2 * MAX_ANSWERED_READS_KEPT;

/// One `resources/read` request ([`Reads`]): its id (and the id's hash),
/// its line and its requested uri.
struct Read {
    hash: u64,
    id: RequestId,
    line: usize,
    /// Requests noted before it (the order of the requests of one batch line).
    seq: u64,
    uri: Option<Box<str>>,
}

/// The `resources/read` requests met so far, by id: the open (unanswered)
/// ones and the answered ones that still stand, those answered within the
/// last [`MAX_ANSWERED_READS_KEPT`] answers (a request sent again with an id
/// in use replaces the one before, as a later request with that id is the
/// one its answers pair with). One answered earlier is forgotten: never
/// found again.
///
/// The open requests sit in a small table; answer generation `g` (from 1)
/// in slot `(g - 1) % MAX_ANSWERED_READS_KEPT` of a ring, until the answer
/// [`MAX_ANSWERED_READS_KEPT`] later takes the slot (the request is then
/// forgotten) or the request is sent or answered again (it leaves the
/// slot). An index of slot numbers by hash finds an answered request; the
/// entry of a forgotten one is left in place (its lookups compare the id:
/// it never matches) and dropped by the next prune (at
/// [`READS_STALE_PRUNE_AT`] entries). Memory: the open requests, the ring
/// (at most [`MAX_ANSWERED_READS_KEPT`] requests) and at most
/// [`READS_STALE_PRUNE_AT`] index entries of 8 bytes; an answer writes the
/// next ring slot, not a random bucket of a table of every request kept
/// (issue 22: that table's cache misses and sweeps were 16 % of `inspect`
/// on many small reads).
#[derive(Default)]
struct Reads {
    /// foldhash's quality hasher, seeded per process (ids are untrusted
    /// input), as check's request table ([`crate::engine`]).
    hasher: foldhash::quality::RandomState,
    /// The open requests, each under its id's hash (kept in the entry).
    open: HashTable<Read>,
    /// The answered requests that stand, by answer generation.
    ring: Vec<Option<Read>>,
    /// The ring slots holding a request, by its hash.
    index: crate::engine::RingIndex,
    /// The last answer generation handed out.
    generation: u64,
    /// Requests noted so far.
    noted: u64,
}

// The ring's slot numbers fit the index's `u32`.
const _: () = assert!(MAX_ANSWERED_READS_KEPT <= u32::MAX as usize);

impl crate::engine::Hashed for Read {
    fn hash(&self) -> u64 {
        self.hash
    }
}

impl Reads {
    fn hash(&self, id: &RequestId) -> u64 {
        self.hasher.hash_one(id)
    }

    /// Takes the answered request with `id` (of hash `hash`) out of the
    /// ring, if it stands.
    fn take_answered(&mut self, hash: u64, id: &RequestId) -> Option<Read> {
        self.index.take(&mut self.ring, hash, |r| r.id == *id)
    }

    /// Notes a request with `id` at `line`, replacing one with the same id
    /// (standing or forgotten).
    fn note(&mut self, id: &RequestId, line: usize, uri: Option<Box<str>>) {
        let hash = self.hash(id);
        let seq = self.noted;
        self.noted += 1;
        if let Some(r) = self.open.find_mut(hash, |r| r.id == *id) {
            r.line = line;
            r.seq = seq;
            r.uri = uri;
            return;
        }
        let read = match self.take_answered(hash, id) {
            Some(mut r) => {
                r.line = line;
                r.seq = seq;
                r.uri = uri;
                r
            }
            None => Read {
                hash,
                id: id.clone(),
                line,
                seq,
                uri,
            },
        };
        self.open.insert_unique(hash, read, |r| r.hash);
    }

    /// The standing request with `id`.
    fn get(&self, id: &RequestId) -> Option<&Read> {
        if self.open.is_empty() && self.index.is_empty() {
            return None;
        }
        let hash = self.hash(id);
        if let Some(r) = self.open.find(hash, |r| r.id == *id) {
            return Some(r);
        }
        self.index.get(&self.ring, hash, |r| r.id == *id)
    }

    /// Marks the standing request with `id` answered (again): it stands
    /// until [`MAX_ANSWERED_READS_KEPT`] answers later.
    fn answer(&mut self, id: &RequestId) {
        if self.open.is_empty() && self.index.is_empty() {
            return;
        }
        let hash = self.hash(id);
        let read = match self.open.find_entry(hash, |r| r.id == *id) {
            Ok(e) => e.remove().0,
            Err(_) => match self.take_answered(hash, id) {
                Some(r) => r,
                None => return,
            },
        };
        self.generation += 1;
        let slot = ((self.generation - 1) % MAX_ANSWERED_READS_KEPT as u64) as usize;
        // The request answered `MAX_ANSWERED_READS_KEPT` answers ago, if it
        // still sits there, is forgotten (its index entry goes stale).
        if slot == self.ring.len() {
            self.ring.push(Some(read));
        } else if let Some(s) = self.ring.get_mut(slot) {
            *s = Some(read);
        }
        // `slot` < MAX_ANSWERED_READS_KEPT, which fits a `u32` (asserted
        // above).
        self.index
            .insert(&self.ring, hash, slot as u32, READS_STALE_PRUNE_AT);
    }

    /// How many requests stand (open, and answered ones kept).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.open.len() + self.ring.iter().filter(|r| r.is_some()).count()
    }

    /// The open requests in the order they were noted (line order, and in a
    /// batch line the batch's order, never the table's): (id, line,
    /// requested uri).
    fn open(&self) -> Vec<(&RequestId, usize, Option<&str>)> {
        let mut open: Vec<_> = self.open.iter().collect();
        open.sort_by_key(|r| r.seq);
        open.into_iter()
            .map(|r| (&r.id, r.line, r.uri.as_deref()))
            .collect()
    }
}

/// Whether the method of envelope `e` (scanned from `text`) is
/// `resources/read`: its token compared as sent, unescaped only when it
/// holds an escape (what [`Envelope::method_str`] answers, without a UTF-8
/// check and a decode per request).
fn is_read_method(e: &Envelope, text: &[u8]) -> bool {
    const TOKEN: &[u8] = br#""resources/read""#;
    let Some(token) = e.method.clone().and_then(|r| text.get(r)) else {
        return false;
    };
    token == TOKEN
        || (token.contains(&b'\\') && e.method_str(text).as_deref() == Some("resources/read"))
}

/// Notes the `resources/read` requests of one frame (what a client may
/// send) in `reads`, at `line`, with their requested uris; `utf8` is `text`
/// when known to be UTF-8 (no slice of it checked again).
fn note_read_requests(
    reads: &mut Reads,
    frame: &Result<Scanned, WireError>,
    text: &[u8],
    utf8: Option<&str>,
    line: usize,
) {
    for e in envelopes(frame) {
        if e.kind == EnvelopeKind::Request
            && is_read_method(e, text)
            && let Some(id) = &e.id
        {
            let uri = e
                .members
                .params_uri
                .clone()
                .and_then(|r| match utf8 {
                    Some(u) => u.get(r),
                    None => text.get(r).and_then(|t| std::str::from_utf8(t).ok()),
                })
                .and_then(crate::engine::decode_string_token)
                .map(|u| Box::from(u.as_ref()));
            reads.note(id, line, uri);
        }
    }
}

/// The first pass: whether one input holds a `resources/read` request (a
/// client may send), which makes the report pair responses by id.
fn has_read_request(l: &mut Input<'_>) -> bool {
    if l.dir == Some(Direction::S2c) {
        return false;
    }
    let frame = parse_input(l);
    let text = input_text(l);
    envelopes(&frame)
        .any(|e| e.kind == EnvelopeKind::Request && e.id.is_some() && is_read_method(e, text))
}

/// What the second pass knows and counts: the read requests met so far
/// (noted as they come, forgotten once answered past the last
/// [`MAX_ANSWERED_READS_KEPT`]).
struct Pass {
    reads: Reads,
    paired: bool,
    s: InspectSummary,
    lenient: bool,
}

impl Pass {
    /// The items of one input (after the bad lines before it); its read
    /// requests (what a client may send) are noted first.
    fn input<E>(
        &mut self,
        l: &mut Input<'_>,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut slot = l.scanned.take();
        self.input_lent(l, &mut slot, emit)
    }

    /// [`Pass::input`] of `l` whose scan the framing made into `slot` (its
    /// framed line's): read where it lies and left there, so the framing
    /// scans a later line over its buffers. Taken and dropped on this
    /// thread, its `contents` spans were freed into the framing thread's
    /// malloc arena, under the arena's lock, which both threads then waited
    /// on; moved out and back, it was copied four times a line. `None`:
    /// scanned here.
    fn input_lent<E>(
        &mut self,
        l: &mut Input<'_>,
        slot: &mut Option<Result<Scanned, WireError>>,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let read = l.read.take();
        if let Some(frame) = slot.as_ref() {
            return self.scanned_input(l, frame, read, emit);
        }
        let frame = parse_input(l);
        self.scanned_input(l, &frame, read, emit)
    }

    /// [`Pass::input`] of input `l`, scanned into `frame`, with the read
    /// summary the framing made of it (`read`).
    fn scanned_input<E>(
        &mut self,
        l: &Input<'_>,
        frame: &Result<Scanned, WireError>,
        mut read: Option<Option<ReadPre<'_>>>,
        emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let number = l.number;
        let answers = l.dir != Some(Direction::C2s);
        let text = input_text(l);
        let s = &mut self.s;
        let f = match frame {
            Ok(f) => f,
            Err(e) => {
                s.bad_lines += 1;
                return emit(
                    Item::BadLine {
                        line: number,
                        reason: bad_message_reason(number, l.bytes, e),
                    }
                    .into(),
                );
            }
        };
        if self.paired && l.dir != Some(Direction::S2c) {
            // The message's text is the bytes scanned unless a skeleton was.
            let utf8 = l.text.filter(|_| l.skel.is_none());
            note_read_requests(&mut self.reads, frame, text, utf8, number);
        }
        if let Scanned::Batch(elems) = f {
            for e in elems.iter().filter_map(|r| r.as_ref().err()) {
                s.bad_lines += 1;
                emit(
                    Item::BadLine {
                        line: number,
                        reason: format!("bad batch element: {e}"),
                    }
                    .into(),
                )?;
            }
        }
        let single = matches!(f, Scanned::Single(_));
        for m in envelopes(frame) {
            s.messages += 1;
            if !answers {
                continue;
            }
            match m.kind {
                EnvelopeKind::Response => {
                    let Some(id) = &m.id else { continue };
                    let requested = self.reads.get(id);
                    let is_read = if self.paired {
                        requested.is_some()
                    } else {
                        m.members.result_contents.is_some()
                    };
                    if !is_read {
                        continue;
                    }
                    let lenient = self.lenient;
                    // The common case: a single valid result read as a
                    // summary (no payload decoded or copied), reported
                    // borrowed; anything else is parsed below, its errors
                    // the parser's. The request is marked answered after
                    // the report that borrows its uri.
                    if single
                        && !lenient
                        && l.skel.is_none()
                        && let Some((sum, sniffs)) = match (read.take(), l.text) {
                            // As the framing made it.
                            (Some(pre), _) => pre.map(|p| (p.summary, Some(p.sniffs))),
                            // The message as text: the long strings its
                            // envelope scan validated are not searched again.
                            (None, Some(t)) => {
                                read_summary::summarize_result_of(t, m).map(|s| (s, None))
                            }
                            (None, None) => m
                                .result
                                .clone()
                                .and_then(|r| result_text(l, r))
                                .and_then(read_summary::summarize_scanned_read_result)
                                .map(|s| (s, None)),
                        }
                        && let Some(out) = summary_out(
                            s,
                            number,
                            id,
                            requested.and_then(|r| r.uri.as_deref()),
                            &sum,
                            sniffs.as_deref(),
                        )
                    {
                        emit(out)?;
                        self.reads.answer(id);
                        continue;
                    }
                    let requested_uri = requested.and_then(|r| r.uri.as_deref().map(str::to_owned));
                    self.reads.answer(id);
                    let r = ScannedResponse {
                        id,
                        result: m.result.clone().and_then(|r| text.get(r)),
                    };
                    let (parsed, blobs) = match &l.skel {
                        Some(sk) => match parse_result(sk.text(l.bytes), &r, single, lenient) {
                            Ok(x) => (Ok(x), Some(&sk.blobs)),
                            Err(_) => (parse_result(l.bytes, &r, single, lenient), None),
                        },
                        None => (parse_result(l.bytes, &r, single, lenient), None),
                    };
                    emit(
                        result_item(
                            s,
                            number,
                            id,
                            requested_uri,
                            parsed,
                            blobs.map(Vec::as_slice),
                        )
                        .into(),
                    )?;
                }
                EnvelopeKind::Error => {
                    let requested = m.id.as_ref().and_then(|id| self.reads.get(id));
                    if self.paired && requested.is_none() {
                        continue;
                    }
                    let Some(error) = m.error_object(text) else {
                        continue;
                    };
                    let requested_uri = requested.and_then(|r| r.uri.as_deref().map(str::to_owned));
                    if let Some(id) = &m.id {
                        self.reads.answer(id);
                    }
                    s.errors += 1;
                    emit(error_out(
                        number,
                        m.id.as_ref(),
                        &error,
                        requested_uri.as_deref(),
                    ))?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The requests no response answered, in line order.
    fn unanswered<E>(&self, emit: &mut dyn FnMut(Out<'_>) -> Result<(), E>) -> Result<(), E> {
        for (id, line, uri) in self.reads.open() {
            emit(
                Item::Unanswered {
                    line,
                    id: id.to_string(),
                    uri: uri.map(str::to_owned),
                }
                .into(),
            )?;
        }
        Ok(())
    }
}

fn inspect_messages(
    transcript: Option<TranscriptSource>,
    inputs: Vec<Input<'_>>,
    mut bad: Vec<(usize, String)>,
    lenient: bool,
) -> InspectReport {
    let mut items = Vec::new();
    let mut push = |out: Out<'_>| -> Result<(), std::convert::Infallible> {
        items.push(out.into_item());
        Ok(())
    };
    bad.sort_by_key(|(line, _)| *line);
    let mut bad = bad.into_iter().peekable();
    // Each message is parsed where it is used, never held: a first pass
    // over what a client may send finds whether a resources/read request is
    // there, the second reads every message (a request is small; a reply is
    // parsed once).
    let mut inputs = inputs;
    let paired = inputs.iter_mut().any(has_read_request);
    let mut pass = Pass {
        paired,
        reads: Reads::default(),
        s: InspectSummary {
            units: inputs.len(),
            ..InspectSummary::default()
        },
        lenient,
    };
    for l in &mut inputs {
        while let Some((line, reason)) = bad.next_if(|(n, _)| *n < l.number) {
            pass.s.bad_lines += 1;
            let _ = push(Item::BadLine { line, reason }.into());
        }
        let _ = pass.input(l, &mut push);
    }
    let _ = pass.unanswered(&mut push);
    for (line, reason) in bad {
        pass.s.bad_lines += 1;
        let _ = push(Item::BadLine { line, reason }.into());
    }
    InspectReport {
        transcript,
        bad_transcript: None,
        paired: pass.paired,
        items,
        summary: pass.s,
    }
}

/// Parses the result strictly or leniently; error offsets count from the
/// start of the input line in every case (single message or batch element).
/// A response as [`parse_result`] reads it: its id and the raw `result`
/// of the text its envelope was scanned from.
struct ScannedResponse<'a> {
    id: &'a RequestId,
    result: Option<&'a [u8]>,
}

fn parse_result(
    line: &[u8],
    r: &ScannedResponse<'_>,
    single: bool,
    lenient: bool,
) -> Result<(ReadResourceResult, Vec<Leniency>), ContentsError> {
    if single && !lenient {
        // The envelope scan already found the `result` value in `line`:
        // parsed where it sits, offsets moved by its position (the same
        // report as parsing the whole message, without reading the envelope
        // twice more).
        // That scan read it as strict JSON (the wire's one lexer), so it is
        // not checked again.
        if let Some((base, bytes)) = r.result.and_then(|b| span_in(line, b))
            && let Ok(text) = simdutf8::basic::from_utf8(bytes)
        {
            return resources::parse_scanned_read_result(text)
                .map(|x| (x, Vec::new()))
                .map_err(|e| e.offset_by(base));
        }
        return resources::parse_read_response(line).map(|x| (x, Vec::new()));
    }
    // Offsets into the input line (issue 15): the `result` member is parsed
    // where it sits in the line, its offsets moved by its position.
    if let Some((base, bytes)) = crate::input::result_span(line, single, r.id) {
        let parsed = if lenient {
            resources::parse_read_result_lenient(bytes)
        } else {
            resources::parse_read_result(bytes).map(|x| (x, Vec::new()))
        };
        return parsed.map_err(|e| e.offset_by(base));
    }
    let bytes = r
        .result
        .and_then(|b| mcptape_wire::json::value_from_slice(b).ok())
        .and_then(|v| serde_json::to_vec(&v).ok())
        .unwrap_or_default();
    if lenient {
        resources::parse_read_result_lenient(&bytes)
    } else {
        resources::parse_read_result(&bytes).map(|x| (x, Vec::new()))
    }
}

/// `part` as `(byte offset, bytes)` in `whole` when it is a slice of it.
fn span_in<'a>(whole: &'a [u8], part: &'a [u8]) -> Option<(usize, &'a [u8])> {
    let base = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (base.checked_add(part.len())? <= whole.len()).then_some((base, part))
}

/// The `range` of an input's text (no skeleton) as `&str`.
fn result_text<'a>(l: &Input<'a>, range: std::ops::Range<usize>) -> Option<&'a str> {
    match l.text {
        Some(t) => t.get(range),
        None => simdutf8::basic::from_utf8(l.bytes.get(range)?).ok(),
    }
}

/// An entry's report before its payload's facts: uri, mimeType, shape and
/// decoded size.
fn entry_head<S: AsRef<str>>(
    requested: Option<&str>,
    uri: S,
    mime_type: Option<S>,
    shape: Shape,
    decoded_bytes: usize,
) -> EntryReport<S> {
    EntryReport {
        uri_differs: requested.is_some_and(|u| u != uri.as_ref()),
        uri,
        mime_type,
        shape: shape.as_str(),
        decoded_bytes,
        encoded_chars: None,
        padding: None,
        sniffed: None,
        media: None,
        defaulted_to: None,
        data_uri_in_text: false,
    }
}

/// A blob entry's facts: its decoded size `n` (base64 arithmetic) and the
/// media verdict of its type sniffed from its first decoded bytes
/// (`sniffed`, [`media::sniff`]); `default` gives the
/// type a host should use when none was declared
/// ([`media::DEFAULT_BLOB_MIME_TYPE`]).
fn blob_facts<S: AsRef<str>>(
    s: &mut InspectSummary,
    e: &mut EntryReport<S>,
    n: usize,
    sniffed: Option<&'static str>,
    default: impl FnOnce() -> S,
) {
    e.decoded_bytes = n;
    let n = n as u64;
    e.encoded_chars = Some(b64::encoded_len(n));
    e.padding = Some(b64::padding_len(n));
    // The verdict's status and sniffed type (`media::verdict` without its
    // two strings per blob).
    let declared = e.mime_type.as_ref().map(AsRef::as_ref);
    let status = media::status(declared, sniffed);
    if status == MediaMatch::Mismatch {
        s.mismatches += 1;
    }
    let defaulted = declared.is_none();
    e.sniffed = sniffed;
    e.media = Some(status.as_str());
    // Defaulted: none was declared, so the effective type is the default.
    e.defaulted_to = defaulted.then(default);
}

/// A read result read as a summary ([`ReadSummary`], always valid), as
/// [`Out::Read`]: borrowed from the message and from `requested`. `None`
/// (nothing counted) when a blob's first characters do not decode, which
/// the summary's validation rules out (the caller parses the result).
fn summary_out<'a>(
    s: &mut InspectSummary,
    line: usize,
    id: &'a RequestId,
    requested: Option<&'a str>,
    sum: &'a ReadSummary<'a>,
    sniffs: Option<&[Option<Option<&'static str>>]>,
) -> Option<Out<'a>> {
    let mut counts = InspectSummary::default();
    let mut entries = Vec::with_capacity(sum.entries.len());
    for (i, c) in sum.entries.iter().enumerate() {
        let mut e = entry_head(
            requested,
            c.uri.as_ref(),
            c.mime_type.as_deref(),
            c.payload.shape(),
            c.payload.decoded_len(),
        );
        match c.payload {
            Payload::Blob {
                base64: b,
                decoded_len,
            } => {
                // As the framing sniffed it ([`ReadPre::sniffs`]), else here.
                let sniffed = match sniffs.and_then(|s| s.get(i)) {
                    Some(s) => *s,
                    None => sniff_blob_head(b),
                }?;
                blob_facts(&mut counts, &mut e, decoded_len, sniffed, || {
                    media::DEFAULT_BLOB_MIME_TYPE
                });
            }
            Payload::Text { token, .. } => {
                e.data_uri_in_text = media::token_may_be_data_uri(token)
                    && Member::Raw { offset: 0, token }
                        .decode()
                        .is_some_and(|t| media::text_is_data_uri(&t));
            }
        }
        entries.push(e);
    }
    s.results += 1;
    s.entries += entries.len();
    s.mismatches += counts.mismatches;
    Some(Out::Read {
        head: ReadHead {
            line,
            id: id.as_json(),
            requested,
            result_type: sum.result_type.as_deref().unwrap_or("complete"),
            legacy_result_type: sum.result_type.is_none(),
            ttl_ms: sum.ttl_ms,
            ttl_ms_negative: None,
            cache_scope: sum.cache_scope.map(|c| c.as_str()),
        },
        entries,
    })
}

fn result_item(
    s: &mut InspectSummary,
    line: usize,
    id: &RequestId,
    requested: Option<String>,
    parsed: Result<(ReadResourceResult, Vec<Leniency>), ContentsError>,
    blobs: Option<&[Option<BlobFacts>]>,
) -> Item {
    let (result, leniencies) = match parsed {
        Ok(x) => x,
        Err(e) => {
            s.bad_results += 1;
            return Item::InvalidResult {
                line,
                id: id.to_string(),
                requested,
                error: e.to_string(),
            };
        }
    };
    s.results += 1;
    s.entries += result.contents.len();
    let entries = result
        .contents
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut e = entry_head(
                requested.as_deref(),
                c.uri().to_owned(),
                c.mime_type().map(str::to_owned),
                c.shape(),
                c.decoded_len(),
            );
            match c {
                ResourceContents::Blob(b) => {
                    let facts = blobs.and_then(|f| f.get(i)).and_then(Option::as_ref);
                    let (n, head) = match facts {
                        Some(f) => (f.decoded, f.prefix.as_slice()),
                        None => (b.bytes.len(), b.bytes.as_slice()),
                    };
                    let sniffed = media::sniff(&head[..head.len().min(SNIFF_PREFIX_BYTES)]);
                    blob_facts(s, &mut e, n, sniffed, || {
                        media::DEFAULT_BLOB_MIME_TYPE.to_owned()
                    });
                }
                ResourceContents::Text(t) => {
                    e.data_uri_in_text = media::text_is_data_uri(&t.text);
                }
            }
            e
        })
        .collect();
    Item::ReadResult {
        line,
        id: id.to_string(),
        requested,
        result_type: result.result_type.as_str().to_owned(),
        legacy_result_type: result.legacy_result_type,
        ttl_ms: result.ttl_ms,
        ttl_ms_negative: result.ttl_ms_negative,
        cache_scope: result.cache_scope.map(|c| c.as_str()),
        leniencies: leniencies
            .into_iter()
            .map(|l| (l.index, l.uri, l.kind.to_string()))
            .collect(),
        entries,
    }
}

/// The [`Item::ErrorResponse`] of an error response, borrowed ([`Out::Error`]).
fn error_out<'a>(
    line: usize,
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
    requested: Option<&'a str>,
) -> Out<'a> {
    let class = classify_read_error(error);
    Out::Error {
        head: ErrorHead {
            line,
            id: id.map_or("(none)", RequestId::as_json),
            requested,
            code: error.code,
            message: &error.message,
            host_action: class.host_action(),
        },
        class,
    }
}

/// Lines at least this long (1 MiB) met by the first pass of
/// [`inspect_stream`] have their scan kept for the main pass (a big read is
/// scanned once); shorter ones are scanned again, so what is kept is at most
/// the file's size over this many scans (each a few hundred bytes: blobs cut).
const KEEP_SCAN_MIN_LINE_BYTES: usize = 1 << 20;

/// Bytes of report text `mcptape inspect` of a transcript file
/// ([`crate::inspect_file_streamed`]) holds in memory (1 MiB) before
/// it appends them to its anonymous temporary file: the report's items wait
/// there until the counts that head the report are known (without one, the
/// file is read once more instead).
pub const REPORT_SPILL_CHUNK_BYTES: usize = 1 << 20;

/// [`inspect`] of a transcript read as a stream of lines (`open` gives them
/// from the start; called twice, or three times: a first pass reads up to the first
/// resources/read request, which settles whether responses pair by id, the
/// main pass reports, noting the read requests as it meets them), its
/// report written to `out` as text ([`InspectReport::text`]) or pretty JSON,
/// the same bytes as the whole report's. The items are written as they are
/// made to a spill ([`REPORT_SPILL_CHUNK_BYTES`] in memory, the rest in an
/// anonymous temporary file) and copied to `out` after the report's head,
/// whose counts are known only at the end. Memory: one line, the open read
/// requests (for pairing by id), at most [`MAX_ANSWERED_READS_KEPT`]
/// answered ones and one chunk of report, never the file or the items.
/// When the temporary file cannot be created or written (TMPDIR missing,
/// read-only or full) the main pass goes on counting only, and a third
/// pass writes the items straight to `out` after the head: the same bytes.
/// Returns the report without its items (for the exit status).
///
/// `source` says what the input holds: a transcript (a first line with
/// `mcptapeTranscript`; a header that does not read is reported as [`inspect`]
/// reports it) or plain JSON-RPC lines.
///
/// # Errors
/// The I/O errors of `open`, of reading and of writing; the temporary
/// file's error (naming the temporary directory and TMPDIR) only when
/// `open` then fails, before anything is written.
pub(crate) fn inspect_stream<S: crate::engine::LineSource>(
    source: Source,
    open: &mut dyn FnMut() -> std::io::Result<S>,
    lenient: bool,
    json: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<InspectReport> {
    let spill = Spill::new(REPORT_SPILL_CHUNK_BYTES);
    match source {
        Source::Transcript => inspect_stream_spilling(open, lenient, json, out, spill),
        Source::Plain => inspect_plain_stream_spilling(open, lenient, json, out, spill),
    }
}

/// What a streamed input holds, told from its first line ([`crate::input::is_transcript`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// An mcptape transcript: its message records are inspected.
    Transcript,
    /// Plain JSON-RPC lines (no transcript header), each line an input, as [`inspect`] reads
    /// them: streamed since a 542 MB file of 1,000,000 messages took 1.56 GB in memory.
    Plain,
}

/// [`inspect_stream`] with the items spilled to `spill` (its chunk size, and
/// in tests its failure).
fn inspect_stream_spilling<S: crate::engine::LineSource>(
    open: &mut dyn FnMut() -> std::io::Result<S>,
    lenient: bool,
    json: bool,
    out: &mut dyn std::io::Write,
    mut spill: Spill,
) -> std::io::Result<InspectReport> {
    let mut report = InspectReport {
        transcript: None,
        bad_transcript: None,
        paired: false,
        items: Vec::new(),
        summary: InspectSummary::default(),
    };
    let mut lines = open()?;
    let header = match lines.advance()? {
        None => Err(reader::TranscriptError {
            kind: reader::ErrorKind::Empty,
            line: 1,
            offset: 0,
        }),
        Some(false) => Err(reader::TranscriptError {
            kind: reader::ErrorKind::TruncatedHeader {
                bytes: lines.line().len(),
            },
            line: 1,
            offset: 0,
        }),
        Some(true) => reader::parse_header_line(lines.line()),
    };
    let header = match header {
        Ok(h) => h,
        Err(e) => {
            report.bad_transcript = Some(e.to_string());
            write_whole(&report, json, out)?;
            return Ok(report);
        }
    };
    // First pass, up to the first read request: whether responses pair by
    // id. The scan of a line of `KEEP_SCAN_MIN_LINE_BYTES` or more is kept
    // for the main pass (a 160 MB read is scanned once).
    let mut paired = false;
    let mut kept: HashMap<usize, Option<Option<Skeleton>>> = HashMap::new();
    while !paired && lines.advance()?.is_some() {
        // A line over the limit is not read (the main pass reports it).
        if lines.over_limit().is_some() {
            continue;
        }
        let (line, line_no) = (lines.line(), lines.line_no());
        let mut scanned = None;
        let Ok(r) = reader::parse_record_line(line, line_no, lines.offset(), |m| {
            if line.len() < KEEP_SCAN_MIN_LINE_BYTES {
                return crate::engine::scan_strict(m, &mut scanned);
            }
            let scan = Skeleton::scan(m.as_bytes()).ok();
            let ok = scan.is_some();
            kept.insert(line_no, scan);
            ok
        }) else {
            continue;
        };
        if let Some(msg) = r.msg() {
            paired = has_read_request(&mut Input {
                number: line_no,
                bytes: msg.as_bytes(),
                text: Some(msg),
                dir: r.dir(),
                skel: None,
                scanned,
                read: None,
            });
        }
    }
    drop(lines);
    let stdio = header.transport == mcptape_transcript::Transport::Stdio;
    let fresh = || Pass {
        paired,
        reads: Reads::default(),
        s: InspectSummary::default(),
        lenient,
    };
    let mut pass = fresh();
    let (records, message_records) = report_pass(open()?, &mut kept, &mut pass, stdio, &mut |o| {
        spill.out(o, json)
    })?;
    // The temporary file failed: the items are made again by a second pass
    // and written straight to `out` (the input is opened again before the
    // head is written: when it cannot be, nothing is written).
    let again = match spill.failed.take() {
        Some(e) => Some(open().map_err(|again| no_second_pass(&e, &again))?),
        None => None,
    };
    report.transcript = Some(TranscriptSource {
        format: header.mcptape_transcript,
        transport: match header.transport {
            mcptape_transcript::Transport::Stdio => "stdio",
            mcptape_transcript::Transport::Http => "http",
        },
        records,
        message_records,
    });
    report.paired = paired;
    report.summary = InspectSummary {
        units: message_records,
        ..pass.s
    };
    // Its read requests (up to `MAX_ANSWERED_READS_KEPT` answered ones) are
    // not held through a second pass.
    drop(pass);
    let items = spill.items;
    write_around_items(&report, json, items, out, |out| {
        items_to(spill, again, &mut kept, fresh(), stdio, json, out)
    })?;
    Ok(report)
}

/// Writes `report` (its counts known, its items not held) as text or pretty JSON, with
/// `items` items written where they go by `write_items`; flushes `out`.
fn write_around_items(
    report: &InspectReport,
    json: bool,
    items: usize,
    out: &mut dyn std::io::Write,
    write_items: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if json {
        // The report without items, pretty, split where its items go.
        let whole = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
        let at = whole
            .find(JSON_NO_ITEMS)
            .ok_or_else(|| std::io::Error::other("the JSON report has no items member"))?
            + JSON_NO_ITEMS.len()
            - 1;
        out.write_all(&whole.as_bytes()[..at])?;
        write_items(out)?;
        if items > 0 {
            out.write_all(b"\n  ")?;
        }
        out.write_all(&whole.as_bytes()[at..])?;
        out.write_all(b"\n")?;
    } else {
        let mut o = String::new();
        report.text_head(&mut o);
        out.write_all(o.as_bytes())?;
        write_items(out)?;
        o.clear();
        report.text_tail(&mut o);
        out.write_all(o.as_bytes())?;
    }
    out.flush()
}

/// Why line `number` (its `bytes`) is not a JSON-RPC message: `bad JSON-RPC message: ` and the
/// scan's error `e`, but for line 1 opening with a UTF-8 byte order mark (`EF BB BF`, as some
/// editors save files), which the scan reports as an unexpected byte 0: the BOM named
/// (JSON text exchanged between systems is UTF-8 without one, RFC 8259 §8.1).
fn bad_message_reason(number: usize, bytes: &[u8], e: &WireError) -> String {
    if number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
        return "bad JSON-RPC message: the file starts with a UTF-8 byte order mark (EF BB BF): \
                JSON text is UTF-8 without one (RFC 8259 §8.1); remove the first 3 bytes"
            .to_owned();
    }
    format!("bad JSON-RPC message: {e}")
}

/// Whether a line of a plain JSON-RPC file is blank (white space only): not an input.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Line `number` of a plain JSON-RPC file as [`inspect`] reads it: no direction, its
/// [`Skeleton`] when the one-pass scan finds a clean `result.contents`.
fn plain_input(number: usize, bytes: &[u8]) -> Input<'_> {
    Input {
        number,
        bytes,
        text: None,
        dir: None,
        skel: Skeleton::scan(bytes).ok().flatten(),
        scanned: None,
        read: None,
    }
}

/// [`inspect_stream`] of plain JSON-RPC lines ([`Source::Plain`]), the items spilled to
/// `spill`: the report [`inspect`] makes of the same bytes, written as it is read; memory is
/// one line, the open read requests and one chunk of report, not the file.
fn inspect_plain_stream_spilling<S: crate::engine::LineSource>(
    open: &mut dyn FnMut() -> std::io::Result<S>,
    lenient: bool,
    json: bool,
    out: &mut dyn std::io::Write,
    mut spill: Spill,
) -> std::io::Result<InspectReport> {
    // First pass, up to the first read request: whether responses pair by id.
    let mut paired = false;
    let mut lines = open()?;
    while !paired && lines.advance()?.is_some() {
        // A line not held whole (past the limit) is no message (the main pass says so).
        if lines.over_limit().is_none() && !is_blank(lines.line()) {
            paired = has_read_request(&mut plain_input(lines.line_no(), lines.line()));
        }
    }
    drop(lines);
    let fresh = || Pass {
        paired,
        reads: Reads::default(),
        s: InspectSummary::default(),
        lenient,
    };
    let mut pass = fresh();
    let units = plain_pass(open()?, &mut pass, &mut |o| spill.out(o, json))?;
    let again = match spill.failed.take() {
        Some(e) => Some(open().map_err(|again| no_second_pass(&e, &again))?),
        None => None,
    };
    let report = InspectReport {
        transcript: None,
        bad_transcript: None,
        paired,
        items: Vec::new(),
        summary: InspectSummary { units, ..pass.s },
    };
    drop(pass);
    let items = spill.items;
    write_around_items(&report, json, items, out, |out| {
        let Some(lines) = again else {
            return spill.copy_to(out);
        };
        write_direct(spill.chunk, json, out, |emit| {
            plain_pass(lines, &mut fresh(), emit).map(drop)
        })
    })?;
    Ok(report)
}

/// The report's pass over the plain JSON-RPC `lines`: every item, in order, given to `emit`;
/// the counts in `pass`. Returns the inputs (lines not blank).
fn plain_pass<S: crate::engine::LineSource>(
    mut lines: S,
    pass: &mut Pass,
    emit: &mut dyn FnMut(Out<'_>) -> std::io::Result<()>,
) -> std::io::Result<usize> {
    let mut units = 0usize;
    while lines.advance()?.is_some() {
        if let Some((len, _)) = lines.over_limit()
            && lines.line().len() < len
        {
            // Past the line limit and not held whole (standard input): said as the scan of
            // the whole line says it (`MessageTooLarge`; the two limits are one, 256 MiB).
            units += 1;
            pass.s.bad_lines += 1;
            let why = match mcptape_wire::limits::check_message_size(len) {
                Err(e) => WireError::from(e).to_string(),
                Ok(()) => format!("a line of {len} bytes, past the line limit"),
            };
            let line = lines.line_no();
            emit(
                Item::BadLine {
                    line,
                    reason: format!("bad JSON-RPC message: {why}"),
                }
                .into(),
            )?;
            continue;
        }
        if is_blank(lines.line()) {
            continue;
        }
        units += 1;
        pass.input(&mut plain_input(lines.line_no(), lines.line()), emit)?;
    }
    pass.unanswered(emit)?;
    Ok(units)
}

/// The report's pass over `lines` (from the header on): every item of the
/// report, in order, given to `emit`; the counts in `pass`. `kept` holds the
/// skeletons of long lines the first pass scanned (taken as they are met).
/// Returns the records and the message records.
fn report_pass<S: crate::engine::LineSource>(
    mut lines: S,
    kept: &mut HashMap<usize, Option<Option<Skeleton>>>,
    pass: &mut Pass,
    stdio: bool,
    emit: &mut dyn FnMut(Out<'_>) -> std::io::Result<()>,
) -> std::io::Result<(usize, usize)> {
    lines.advance()?;
    let (mut records, mut message_records) = (0usize, 0usize);
    // Bad lines since the last message (reported before the next one, or
    // after the unanswered requests at the end).
    let mut bad: Vec<(usize, String)> = Vec::new();
    let (mut saw_exit, mut dropped, mut last_record) = (false, false, None);
    // The latest line was malformed and skipped (as check's `ends_unread`:
    // it may have been the exit record, so no `NoExitRecord` is said).
    let mut ends_unread = false;
    // An error of `emit`, which ends the pass.
    let mut failed = None;
    lines.for_each_line(KEEP_SCAN_MIN_LINE_BYTES, Prep::InspectWhenAhead, &mut |l| {
        let mut skel = None;
        // What the framing made of a short line for the report, if it did.
        let mut read = None;
        // A short line: the one envelope scan (`Framed::frame`: its result
        // is read where it is used); a long one: its skeleton (blobs cut out,
        // never decoded), kept from the first pass when it met the line (the
        // first pass keeps long lines only).
        // A long line's record and (absent) scan, lent like a framed one's.
        let (long_parsed, mut long_scanned);
        let (line_no, line, len, terminated, parsed, scanned) = match l {
            Line::Framed(f) => {
                read = f.pre.take().and_then(Prepared::into_read);
                (
                    f.line_no,
                    f.line,
                    f.len,
                    f.terminated,
                    &f.parsed,
                    &mut f.scanned,
                )
            }
            Line::Long(cut) => {
                let parsed = reader::parse_record_line(cut.line, cut.line_no, cut.offset, |m| {
                    let scan = match kept.remove(&cut.line_no) {
                        Some(scan) => scan,
                        None => Skeleton::scan(m.as_bytes()).ok(),
                    };
                    match scan {
                        Some(sk) => {
                            skel = sk;
                            true
                        }
                        None => false,
                    }
                });
                long_parsed = parsed;
                long_scanned = None;
                (
                    cut.line_no,
                    cut.line,
                    cut.line.len(),
                    cut.terminated,
                    &long_parsed,
                    &mut long_scanned,
                )
            }
        };
        let r = match parsed {
            Ok(r) => r,
            // A malformed line, ended or not: only a cut record (the
            // reader's rule, `reader::is_cut_record`) is dropped below.
            Err(e)
                if terminated
                    || matches!(e.kind, reader::ErrorKind::LineTooLong { .. })
                    || !reader::is_cut_record(line) =>
            {
                let why = crate::engine::skipped_text(&e.kind, &e.kind, len);
                bad.push((e.line, format!("bad transcript record: {why}")));
                ends_unread = true;
                return ControlFlow::Continue(());
            }
            Err(e) => {
                dropped = true;
                bad.push((
                    line_no,
                    format!(
                        "last line cut ({} bytes, no newline), dropped: {}",
                        line.len(),
                        e.kind
                    ),
                ));
                return ControlFlow::Continue(());
            }
        };
        records += 1;
        ends_unread = false;
        last_record = Some(line_no);
        saw_exit |= matches!(
            r.owned_event(),
            Some(mcptape_transcript::Event::Exit { .. })
        );
        let Some(msg) = r.msg() else {
            return ControlFlow::Continue(());
        };
        message_records += 1;
        let mut emitted = || -> std::io::Result<()> {
            for (line, reason) in bad.drain(..) {
                pass.s.bad_lines += 1;
                emit(Item::BadLine { line, reason }.into())?;
            }
            let mut input = Input {
                number: line_no,
                bytes: msg.as_bytes(),
                text: Some(msg),
                dir: r.dir(),
                skel: skel.take(),
                scanned: None,
                read: read.take(),
            };
            // The framing's scan is read in its slot ([`Pass::input_lent`]).
            pass.input_lent(&mut input, scanned, emit)
        };
        match emitted() {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    pass.unanswered(emit)?;
    for (line, reason) in bad {
        pass.s.bad_lines += 1;
        emit(Item::BadLine { line, reason }.into())?;
    }
    // As check's `recording-no-exit` (never with a cut tail, reported above).
    if stdio && !dropped && !ends_unread && !saw_exit {
        emit(
            Item::NoExitRecord {
                line: last_record.unwrap_or(1),
                reason: crate::engine::no_exit_message(records),
            }
            .into(),
        )?;
    }
    Ok((records, message_records))
}

/// The `items` member of the pretty JSON of an [`InspectReport`] without
/// items (two spaces in: a member of the report object).
const JSON_NO_ITEMS: &str = "\n  \"items\": []";

/// The report's items made so far, as text or as the elements of the pretty
/// JSON report's `items` array: the last [`Spill::chunk`] bytes or fewer in
/// memory, the ones before in an anonymous temporary file.
struct Spill {
    mem: String,
    chunk: usize,
    file: Option<std::fs::File>,
    /// Items written (counted, not kept, once the file failed).
    items: usize,
    /// The temporary file's error (of its creation or of a write), once it
    /// failed: the items are dropped, to be made again by a second pass.
    failed: Option<std::io::Error>,
    /// Writes to the temporary file that succeed before one fails (a test
    /// seam: 0 fails its creation; `None`, outside tests, only the file's
    /// own errors).
    fail_at_write: Option<usize>,
    /// Writes to the temporary file so far.
    writes: usize,
    /// One item's pretty JSON before it is indented.
    json: Vec<u8>,
}

impl Spill {
    fn new(chunk: usize) -> Spill {
        Spill {
            mem: String::new(),
            chunk,
            file: None,
            items: 0,
            failed: None,
            fail_at_write: None,
            writes: 0,
            json: Vec::new(),
        }
    }

    /// Appends `item`: its text ([`InspectReport::text`]'s lines), or its
    /// pretty JSON as an element of the report's `items` array (the
    /// separator, then the item indented two levels: a JSON text holds no
    /// raw line break inside a string, so every line break is the
    /// formatter's).
    fn out(&mut self, out: Out<'_>, json: bool) -> std::io::Result<()> {
        if self.failed.is_some() {
            self.items += 1;
            return Ok(());
        }
        self.push(out, json)?;
        if self.mem.len() >= self.chunk
            && let Err(e) = self.write_file()
        {
            // Counting only from here on (the caller passes again).
            self.failed = Some(spill_error(e));
            self.mem = String::new();
            self.file = None;
        }
        Ok(())
    }

    /// Appends `mem` to the temporary file (created at the first write).
    fn write_file(&mut self) -> std::io::Result<()> {
        use std::io::Write as _;
        if self.fail_at_write == Some(self.writes) {
            return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all(self.mem.as_bytes())?;
        self.writes += 1;
        self.mem.clear();
        Ok(())
    }

    /// Appends `item` to `mem` ([`Spill::out`]'s text or JSON).
    fn push(&mut self, out: Out<'_>, json: bool) -> std::io::Result<()> {
        if json {
            self.json.clear();
            serde_json::to_writer_pretty(&mut self.json, &out.into_item())
                .map_err(std::io::Error::other)?;
            let text = std::str::from_utf8(&self.json).map_err(std::io::Error::other)?;
            self.mem
                .push_str(if self.items == 0 { "\n    " } else { ",\n    " });
            let mut lines = text.split('\n');
            if let Some(first) = lines.next() {
                self.mem.push_str(first);
            }
            for l in lines {
                self.mem.push_str("\n    ");
                self.mem.push_str(l);
            }
        } else {
            match out {
                Out::Item(item) => render_item(&mut self.mem, &item),
                Out::Read { head, entries } => render_read(&mut self.mem, &head, &[], &entries),
                Out::Error { head, class } => render_error(&mut self.mem, &head, &class),
            }
        }
        self.items += 1;
        Ok(())
    }

    /// Writes everything appended, in order, to `out`: the temporary file
    /// read back one chunk (`self.chunk` bytes, [`REPORT_SPILL_CHUNK_BYTES`])
    /// a `read`, not `std::io::copy`'s 8 KiB (for a `dyn Write` it has no
    /// faster path): 780 MB of report on 5,000,000 messages took 96,038
    /// reads.
    fn copy_to(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        if let Some(mut f) = self.file {
            f.seek(SeekFrom::Start(0)).map_err(spill_error)?;
            let mut buf = vec![0u8; self.chunk.max(1)];
            loop {
                match f.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => out.write_all(&buf[..n])?,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(spill_error(e)),
                }
            }
        }
        out.write_all(self.mem.as_bytes())
    }
}

/// An I/O error of the spill's temporary file, saying so and naming the
/// temporary directory (the caller names the transcript: the error is not
/// the transcript's).
fn spill_error(e: std::io::Error) -> std::io::Error {
    std::io::Error::new(
        e.kind(),
        format!(
            "the report's temporary file in {} (the temporary directory, TMPDIR): {e}",
            std::env::temp_dir().display()
        ),
    )
}

/// The error when the temporary file failed (`spill`, from [`spill_error`])
/// and the input cannot be opened again (`again`) for a second pass.
fn no_second_pass(spill: &std::io::Error, again: &std::io::Error) -> std::io::Error {
    std::io::Error::new(
        spill.kind(),
        format!(
            "{spill}, and the input cannot be read again ({again}): set TMPDIR to a writable directory with room"
        ),
    )
}

/// Writes the report's items to `out`: the ones `spill` holds, or, when its
/// temporary file failed, the ones of a second [`report_pass`] over `again`
/// (`pass` fresh), written as they are made ([`Spill::chunk`] at a time).
fn items_to<S: crate::engine::LineSource>(
    spill: Spill,
    again: Option<S>,
    kept: &mut HashMap<usize, Option<Option<Skeleton>>>,
    mut pass: Pass,
    stdio: bool,
    json: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let Some(lines) = again else {
        return spill.copy_to(out);
    };
    write_direct(spill.chunk, json, out, |emit| {
        report_pass(lines, kept, &mut pass, stdio, emit).map(drop)
    })
}

/// The items of a second pass (`pass` gives each to its `emit`) written straight to `out`,
/// `chunk` bytes at a time: the spill's temporary file failed.
fn write_direct(
    chunk: usize,
    json: bool,
    out: &mut dyn std::io::Write,
    pass: impl FnOnce(&mut dyn FnMut(Out<'_>) -> std::io::Result<()>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut direct = Spill::new(chunk);
    pass(&mut |o| {
        direct.push(o, json)?;
        if direct.mem.len() >= direct.chunk {
            out.write_all(direct.mem.as_bytes())?;
            direct.mem.clear();
        }
        Ok(())
    })?;
    out.write_all(direct.mem.as_bytes())
}

/// `report` (nothing to stream: a transcript whose header does not read) as
/// text or pretty JSON.
fn write_whole(
    report: &InspectReport,
    json: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, report).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
    } else {
        out.write_all(report.text().as_bytes())?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `is_read_method` answers what comparing the unescaped method
    /// answers: tokens as sent, escaped, longer, other.
    #[test]
    fn read_method_as_sent_or_escaped() {
        for (method, want) in [
            (r#""resources/read""#, true),
            (r#""resources\/read""#, true),
            (r#""\u0072esources/read""#, true),
            (r#""resources/reads""#, false),
            (r#""resources/rea""#, false),
            (r#""resources\/list""#, false),
            (r#""tools/call""#, false),
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":{method}}}"#);
            let e = envelope::scan_envelope(text.as_bytes()).expect("a request");
            assert_eq!(is_read_method(&e, text.as_bytes()), want, "{method}");
            assert_eq!(
                e.method_str(text.as_bytes()).as_deref() == Some("resources/read"),
                want,
                "{method}"
            );
        }
    }

    /// A `resources/read` request line with `id` for `file:///<uri>`.
    fn read_request(id: usize, uri: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"file:///{uri}"}}}}"#
        )
    }

    /// An empty read result line with `id`.
    fn read_answer(id: usize) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[]}}}}"#)
    }

    /// One line through [`Pass::input`] as `dir` sent it; its items.
    fn feed(pass: &mut Pass, number: usize, line: &str, dir: Direction) -> Vec<Item> {
        let mut items = Vec::new();
        let mut input = Input {
            number,
            bytes: line.as_bytes(),
            text: Some(line),
            dir: Some(dir),
            skel: None,
            scanned: None,
            read: None,
        };
        let _ = pass.input(&mut input, &mut |o| -> Result<(), ()> {
            items.push(o.into_item());
            Ok(())
        });
        items
    }

    fn paired_pass() -> Pass {
        Pass {
            reads: Reads::default(),
            paired: true,
            s: InspectSummary::default(),
            lenient: false,
        }
    }

    /// Issue 22: the second pass notes read requests as it meets them and
    /// forgets answered ones past [`MAX_ANSWERED_READS_KEPT`]: after more
    /// answered requests than that and 3 open ones it holds exactly the
    /// answered ones kept and the open ones (the old map held every read
    /// request of the file).
    #[test]
    fn inspect_holds_the_open_reads_not_every_read_of_the_file() {
        let mut pass = paired_pass();
        let answered = MAX_ANSWERED_READS_KEPT + 1000;
        let mut line = 0;
        for id in 0..answered {
            line += 1;
            assert!(feed(&mut pass, line, &read_request(id, "a"), Direction::C2s).is_empty());
            line += 1;
            let items = feed(&mut pass, line, &read_answer(id), Direction::S2c);
            assert_eq!(items.len(), 1, "answer {id}");
        }
        for id in answered..answered + 3 {
            line += 1;
            feed(&mut pass, line, &read_request(id, "open"), Direction::C2s);
        }
        assert_eq!(pass.reads.len(), MAX_ANSWERED_READS_KEPT + 3);
        assert_eq!(pass.reads.open.len(), 3);
        assert_eq!(pass.reads.ring.len(), MAX_ANSWERED_READS_KEPT);
        assert!(pass.reads.index.len() <= READS_STALE_PRUNE_AT);
        assert_eq!(pass.s.results, answered);
        let mut items = Vec::new();
        let _ = pass.unanswered(&mut |o| -> Result<(), ()> {
            items.push(o.into_item());
            Ok(())
        });
        let ids: Vec<_> = items
            .iter()
            .map(|i| match i {
                Item::Unanswered { id, .. } => id.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        let want: Vec<_> = (answered..answered + 3).map(|i| i.to_string()).collect();
        assert_eq!(ids, want);
    }

    /// A second answer to a read request is paired with it while the
    /// request is among the [`MAX_ANSWERED_READS_KEPT`] answered last, and
    /// not one answered request past that (it is forgotten).
    #[test]
    fn unanswered_reads_of_one_batch_line_in_batch_order() {
        let reads: Vec<String> = (1..=8)
            .map(|i| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"resources/read","params":{{"uri":"a://{i}"}}}}"#
                )
            })
            .collect();
        let line = format!("[{}]\n", reads.join(","));
        let r = inspect(line.as_bytes(), false);
        let ids: Vec<&str> = r
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Unanswered { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["1", "2", "3", "4", "5", "6", "7", "8"]);
    }

    #[test]
    fn second_answer_is_paired_at_max_answered_reads_kept_not_one_past() {
        for (others, paired) in [
            (MAX_ANSWERED_READS_KEPT - 1, true),
            (MAX_ANSWERED_READS_KEPT, false),
        ] {
            let mut reads = Reads::default();
            let first = RequestId::number(0);
            reads.note(&first, 1, Some("file:///first".into()));
            reads.answer(&first);
            for id in 1..=others {
                let id = RequestId::number(id as i64);
                reads.note(&id, 2, None);
                reads.answer(&id);
            }
            assert_eq!(
                reads.get(&first).is_some(),
                paired,
                "{others} answered since"
            );
            assert_eq!(reads.len(), MAX_ANSWERED_READS_KEPT);
        }
    }

    /// A read answered again (in the last slot of its window: it leaves the
    /// slot and takes it back) stands [`MAX_ANSWERED_READS_KEPT`] answers
    /// from that answer, its uri kept, and not one past.
    #[test]
    fn a_read_answered_again_stands_from_its_last_answer() {
        let mut reads = Reads::default();
        let first = RequestId::number(0);
        reads.note(&first, 1, Some("file:///first".into()));
        reads.answer(&first);
        let mut next = 1;
        let mut others = |reads: &mut Reads, n: usize| {
            for _ in 0..n {
                let id = RequestId::number(next);
                next += 1;
                reads.note(&id, 2, None);
                reads.answer(&id);
            }
        };
        others(&mut reads, MAX_ANSWERED_READS_KEPT - 1);
        assert!(reads.get(&first).is_some());
        reads.answer(&first);
        others(&mut reads, MAX_ANSWERED_READS_KEPT - 1);
        let kept = reads.get(&first).map(|r| (r.line, r.uri.as_deref()));
        assert_eq!(kept, Some((1, Some("file:///first"))));
        others(&mut reads, 1);
        assert!(reads.get(&first).is_none());
        assert_eq!(reads.len(), MAX_ANSWERED_READS_KEPT);
        assert!(reads.open().is_empty());
    }

    /// A read id sent again after its answer: each answer is paired with the
    /// request before it (its uri), and the second request, answered, is not
    /// listed as unanswered; an answer before any request with its id is not
    /// a read result.
    #[test]
    fn reused_read_id_pairs_each_answer_with_the_request_before_it() {
        let lines = [
            read_answer(7),
            read_request(7, "a"),
            read_answer(7),
            read_request(7, "b"),
            read_answer(7),
            read_request(8, "c"),
        ]
        .join("\n");
        let r = inspect(lines.as_bytes(), false);
        let got: Vec<_> = r
            .items
            .iter()
            .map(|i| match i {
                Item::ReadResult {
                    line, requested, ..
                } => (*line, "read", requested.clone()),
                Item::Unanswered { line, uri, .. } => (*line, "unanswered", uri.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            got,
            [
                (3, "read", Some("file:///a".to_owned())),
                (5, "read", Some("file:///b".to_owned())),
                (6, "unanswered", Some("file:///c".to_owned())),
            ]
        );
    }

    /// Issue 22: the report's items wait in the spill (memory, then the
    /// temporary file past a chunk) while the one main pass makes them; at
    /// every chunk size (1 byte: each item to the file; 1 MiB: all in
    /// memory) the streamed report is the whole report's text and JSON,
    /// including an empty items list.
    #[test]
    fn spilled_report_is_the_whole_report_at_every_chunk_size() {
        let full = five_item_transcript();
        let head = full.lines().next().expect("a header");
        // HTTP: no exit record is expected, so no item at all.
        let empty = format!(
            "{}\n{}\n",
            head.replace("stdio", "http"),
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","method":"ping"}}"#
        );
        for (text, items) in [(full, 5), (empty, 0)] {
            let whole = inspect(text.as_bytes(), false);
            assert_eq!(whole.items.len(), items);
            for chunk in [1, 7, REPORT_SPILL_CHUNK_BYTES] {
                for json in [false, true] {
                    let mut out = Vec::new();
                    let mut open = || -> std::io::Result<crate::engine::SliceLines<'_>> {
                        Ok(crate::engine::SliceLines::new(text.as_bytes(), None))
                    };
                    let r = inspect_stream_spilling(
                        &mut open,
                        false,
                        json,
                        &mut out,
                        Spill::new(chunk),
                    )
                    .expect("in memory");
                    assert_eq!(r.summary, whole.summary);
                    let want = if json {
                        serde_json::to_string_pretty(&whole).expect("serializes") + "\n"
                    } else {
                        whole.text()
                    };
                    assert_eq!(
                        String::from_utf8(out).expect("UTF-8"),
                        want,
                        "chunk {chunk}, json {json}"
                    );
                }
            }
        }
    }

    /// Regression (fresh-user trial, 2026-12-05): a file of plain JSON-RPC lines (no
    /// transcript header) was inspected in memory: 1.56 GB for a 542 MB file. Streamed now
    /// ([`Source::Plain`]), its report is the in-memory one's, text and JSON, at every
    /// spill chunk size and when the spill's temporary file fails (a second pass): every plain
    /// file of `corpus/inspect`, and lines made here (blank lines, a bad line, no final `\n`).
    #[test]
    fn plain_jsonrpc_streamed_is_the_in_memory_report() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/inspect");
        let mut texts: Vec<Vec<u8>> = std::fs::read_dir(dir)
            .expect("corpus/inspect")
            .map(|e| std::fs::read(e.expect("entry").path()).expect("file"))
            .filter(|b| !crate::input::is_transcript(b))
            .collect();
        assert!(texts.len() >= 5, "{}", texts.len());
        texts.push(
            [
                read_request(7, "a"),
                "  ".into(),
                read_answer(7),
                "{oops".into(),
                read_request(8, "c"),
            ]
            .join("\n")
            .into_bytes(),
        );
        for text in &texts {
            let whole = inspect(text, false);
            for json in [false, true] {
                let want = if json {
                    serde_json::to_string_pretty(&whole).expect("serializes") + "\n"
                } else {
                    whole.text()
                };
                for (chunk, fail_at_write) in [
                    (1, None),
                    (64, None),
                    (REPORT_SPILL_CHUNK_BYTES, None),
                    (1, Some(0)),
                    (16, Some(1)),
                ] {
                    let mut opened = 0;
                    let mut open = || -> std::io::Result<crate::engine::SliceLines<'_>> {
                        opened += 1;
                        Ok(crate::engine::SliceLines::new(text, None))
                    };
                    let mut spill = Spill::new(chunk);
                    spill.fail_at_write = fail_at_write;
                    let mut out = Vec::new();
                    let r = inspect_plain_stream_spilling(&mut open, false, json, &mut out, spill)
                        .expect("in memory");
                    assert_eq!(r.summary, whole.summary);
                    assert_eq!(
                        String::from_utf8(out).expect("UTF-8"),
                        want,
                        "chunk {chunk}, fail {fail_at_write:?}, json {json}"
                    );
                }
            }
        }
    }

    /// Regression (fresh-user trial, 2026-12-05): `inspect --json` wrote the fields of its
    /// items in snake case (`result_type`, `ttl_ms`, `host_action`) beside camelCase ones
    /// (`decodedBytes`): `rename_all` on an enum renames its variants only. Every member name
    /// of every report of `corpus/inspect` is camelCase now (the streamed report is the same
    /// bytes: `plain_jsonrpc_streamed_is_the_in_memory_report`).
    #[test]
    fn inspect_json_items_name_every_member_in_camel_case() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/inspect");
        let mut keys = std::collections::BTreeSet::new();
        for e in std::fs::read_dir(dir).expect("corpus/inspect") {
            let text = std::fs::read(e.expect("entry").path()).expect("file");
            let json = serde_json::to_value(inspect(&text, false)).expect("serializes");
            fn walk(v: &serde_json::Value, keys: &mut std::collections::BTreeSet<String>) {
                match v {
                    serde_json::Value::Object(m) => {
                        for (k, v) in m {
                            keys.insert(k.clone());
                            walk(v, keys);
                        }
                    }
                    serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, keys)),
                    _ => {}
                }
            }
            walk(&json, &mut keys);
        }
        for k in [
            "resultType",
            "legacyResultType",
            "ttlMs",
            "cacheScope",
            "hostAction",
        ] {
            assert!(keys.contains(k), "{k} not in {keys:?}");
        }
        let snake: Vec<&String> = keys.iter().filter(|k| k.contains('_')).collect();
        assert!(snake.is_empty(), "{snake:?}");
    }

    /// Regression (fresh-user trial): a plain JSON-RPC file saved with a UTF-8 BOM was "bad
    /// JSON-RPC message: … expected a value at byte 0"; the BOM is named on line 1, in memory
    /// and streamed alike, the lines after it are read, and a BOM-like run on a later line is
    /// the scan's own error.
    #[test]
    fn plain_file_opening_with_a_bom_names_the_bom() {
        let text = format!(
            "\u{FEFF}{}\n{}\n{}\n\u{FEFF}{}\n",
            read_request(1, "a"),
            read_request(2, "b"),
            read_answer(2),
            read_answer(1)
        );
        let whole = inspect(text.as_bytes(), false);
        let bad: Vec<(usize, &str)> = whole
            .items
            .iter()
            .filter_map(|i| match i {
                Item::BadLine { line, reason } => Some((*line, reason.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert_eq!(bad[0].0, 1);
        assert!(
            bad[0].1.contains("UTF-8 byte order mark (EF BB BF)"),
            "{}",
            bad[0].1
        );
        assert!(bad[0].1.contains("RFC 8259"), "{}", bad[0].1);
        assert_eq!(bad[1].0, 4);
        assert!(!bad[1].1.contains("byte order mark"), "{}", bad[1].1);
        assert_eq!(whole.summary.bad_lines, 2);
        assert_eq!(whole.summary.results, 1, "line 3 answers line 2");
        let mut open = || -> std::io::Result<crate::engine::SliceLines<'_>> {
            Ok(crate::engine::SliceLines::new(text.as_bytes(), None))
        };
        let mut out = Vec::new();
        let r =
            inspect_stream(Source::Plain, &mut open, false, false, &mut out).expect("in memory");
        assert_eq!(r.summary, whole.summary);
        assert_eq!(String::from_utf8(out).expect("UTF-8"), whole.text());
    }

    /// Plain JSON-RPC lines on standard input with a line past the reader's limit (a small
    /// limit through the test seam): the line at the limit is inspected, the one past it is a
    /// bad line giving its length, none of it kept, and the lines after it are inspected.
    #[test]
    fn plain_stream_line_at_the_limit_is_read_one_past_is_a_bad_line() {
        let ping = |pad: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"x":"{}"}}}}"#,
                "a".repeat(pad)
            )
        };
        let limit = read_request(7, "a").len().max(read_answer(7).len()) + 20;
        let pad = limit - ping(0).len();
        let text = |long: &str| [read_request(7, "a"), long.to_owned(), read_answer(7)].join("\n");
        let stream = |t: String| {
            let mut open = || -> std::io::Result<_> {
                Ok(
                    crate::engine::BufLines::new(std::io::BufReader::with_capacity(
                        8,
                        std::io::Cursor::new(t.clone().into_bytes()),
                    ))
                    .with_max_line(limit),
                )
            };
            let mut out = Vec::new();
            let r = inspect_stream(Source::Plain, &mut open, false, false, &mut out)
                .expect("in memory");
            (r.summary, String::from_utf8(out).expect("UTF-8"))
        };
        let (at, at_text) = stream(text(&ping(pad)));
        assert_eq!(
            (at.units, at.bad_lines, at.messages),
            (3, 0, 3),
            "{at_text}"
        );
        let (past, past_text) = stream(text(&ping(pad + 1)));
        assert_eq!(
            (past.units, past.bad_lines, past.messages),
            (3, 1, 2),
            "{past_text}"
        );
        assert!(
            past_text.contains(&format!(
                "line 2: bad JSON-RPC message: a line of {} bytes, past the line limit",
                limit + 1
            )),
            "{past_text}"
        );
        assert_eq!((past.results, at.results), (1, 1));
    }

    /// `inspect` over the pipeline writes what it writes over the plain
    /// loop, text and JSON: every transcript of the corpus (each also cut
    /// in its last record and with an unreadable line in its middle), and
    /// one with a read of over `KEEP_SCAN_MIN_LINE_BYTES` (its skeleton
    /// kept from the first pass: a line framed by stage 2).
    #[test]
    fn pipelined_inspect_equals_the_plain_loop() {
        use crate::engine::pipeline::{TEST_SHAPES, corpus_transcripts, cut_and_unreadable};
        let mut texts = Vec::new();
        for f in corpus_transcripts() {
            let whole = std::fs::read(&f).expect("corpus file");
            if crate::input::is_transcript(whole.split(|b| *b == b'\n').next().unwrap_or(&[])) {
                texts.extend(cut_and_unreadable(whole));
            }
        }
        assert!(texts.len() > 100, "{} transcripts", texts.len());
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":9,"result":{{"contents":[{{"uri":"file:///big","mimeType":"text/plain","text":"{}"}}]}}}}"#,
            "x".repeat(KEEP_SCAN_MIN_LINE_BYTES)
        );
        let big = five_item_transcript()
            + &format!(
                r#"{{"tUs":6,"kind":"message","dir":"c2s","msg":{}}}"#,
                read_request(9, "big")
            )
            + "\n"
            + &format!(r#"{{"tUs":7,"kind":"message","dir":"s2c","msg":{big}}}"#)
            + "\n";
        let big_items = inspect(big.as_bytes(), false).items.len();
        assert_eq!(big_items, 6);
        texts.push(big.into_bytes());
        for text in &texts {
            for json in [false, true] {
                let run_with = |shape: Option<crate::engine::pipeline::Shape>,
                                prep: Option<Prep>| {
                    let mut open = || -> std::io::Result<crate::engine::SliceLines<'_>> {
                        let mut s = crate::engine::SliceLines::new(text, None);
                        if let Some(prep) = prep {
                            s = s.with_prep(prep);
                        }
                        Ok(match shape {
                            Some(shape) => s.with_pipe(shape),
                            None => s,
                        })
                    };
                    let mut out = Vec::new();
                    inspect_stream(Source::Transcript, &mut open, false, json, &mut out)
                        .expect("in memory");
                    out
                };
                let run = |shape| run_with(shape, None);
                let plain = run(None);
                for shape in [TEST_SHAPES[0], TEST_SHAPES[3]] {
                    assert!(run(Some(shape)) == plain, "{shape:?} json {json}");
                }
                // What the framing computes for the report, on every line
                // or on none, changes nothing.
                for prep in [Prep::Inspect, Prep::Nothing] {
                    assert!(run_with(None, Some(prep)) == plain, "{prep:?} json {json}");
                    let shape = Some(TEST_SHAPES[1]);
                    assert!(run_with(shape, Some(prep)) == plain, "{prep:?} json {json}");
                }
            }
        }
    }

    /// A stdio transcript whose report has five items (a paired read, a
    /// bad line, a read error, an unanswered read, no exit record).
    fn five_item_transcript() -> String {
        let head = r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-11-30T00:00:00Z"}"#;
        let msg = |t: usize, dir: &str, m: &str| {
            format!(r#"{{"tUs":{t},"kind":"message","dir":"{dir}","msg":{m}}}"#)
        };
        [
            head.to_owned(),
            msg(1, "c2s", &read_request(1, "a")),
            msg(2, "s2c", r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"caf\u00e9\n"},{"uri":"file:///b","blob":"iVBORw0KGgo="}],"ttlMs":5}}"#),
            "not a record".to_owned(),
            msg(3, "c2s", &read_request(2, "c")),
            msg(4, "s2c", r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"nope","data":{"uri":"file:///c"}}}"#),
            msg(5, "c2s", &read_request(3, "d")),
        ]
        .join("\n")
            + "\n"
    }

    /// `inspect -` of a line longer than the reader's limit: reported as a
    /// bad line with the limit and its real length, none of it kept, the
    /// records after it read; the report is otherwise the one of the same
    /// transcript with a bad line there (text and JSON).
    #[test]
    fn inspect_stream_line_over_the_limit_is_a_bad_line() {
        let text = five_item_transcript();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[3], "not a record");
        let limit = lines.iter().map(|l| l.len()).max().expect("lines");
        let ping = |pad: usize| {
            format!(
                r#"{{"tUs":9,"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"x":"{}"}}}}}}"#,
                "a".repeat(pad)
            )
        };
        let long = ping(limit + 1 - ping(0).len());
        assert_eq!(long.len(), limit + 1);
        let long_text = text.replace("not a record", &long);
        for json in [false, true] {
            let stream = |t: &str, max_line: usize| {
                let mut open = || -> std::io::Result<_> {
                    Ok(
                        crate::engine::BufLines::new(std::io::BufReader::with_capacity(
                            16,
                            std::io::Cursor::new(t.as_bytes().to_vec()),
                        ))
                        .with_max_line(max_line),
                    )
                };
                let mut out = Vec::new();
                inspect_stream(Source::Transcript, &mut open, false, json, &mut out)
                    .expect("in memory");
                String::from_utf8(out).expect("UTF-8")
            };
            let bad = stream(&text, limit);
            let why = match reader::parse_record_line(b"not a record", 3, 0, |_| true) {
                Err(e) => e.kind.to_string(),
                Ok(_) => unreachable!("not a record"),
            };
            let too_long = format!(
                "line longer than the limit of {limit} bytes (the line is {} bytes)",
                limit + 1
            );
            assert!(bad.contains(&why), "{bad}");
            assert_eq!(stream(&long_text, limit), bad.replace(&why, &too_long));
            // One byte more of limit: the line is read (a ping, no item).
            assert!(!stream(&long_text, limit + 1).contains("line longer"));
        }
    }

    /// The streamed report of `text` with a spill of `chunk` bytes whose
    /// temporary file fails at write `fail_at_write`, and the times the
    /// input was opened.
    fn stream_failing(
        text: &str,
        json: bool,
        chunk: usize,
        fail_at_write: usize,
    ) -> (String, usize) {
        let mut opened = 0;
        let mut open = || -> std::io::Result<crate::engine::SliceLines<'_>> {
            opened += 1;
            Ok(crate::engine::SliceLines::new(text.as_bytes(), None))
        };
        let mut spill = Spill::new(chunk);
        spill.fail_at_write = Some(fail_at_write);
        let mut out = Vec::new();
        let r =
            inspect_stream_spilling(&mut open, false, json, &mut out, spill).expect("in memory");
        assert_eq!(r.summary, inspect(text.as_bytes(), false).summary);
        (String::from_utf8(out).expect("UTF-8"), opened)
    }

    /// TMPDIR=/nonexistent (and a full or read-only one) made `inspect`
    /// print nothing and exit 2: a temporary file that cannot be created
    /// now costs a second pass, with the same bytes, at every chunk size
    /// (items ending exactly at a chunk and one byte short of it).
    #[test]
    fn spill_failing_at_creation_passes_again_with_the_same_report() {
        let text = five_item_transcript();
        let whole = inspect(text.as_bytes(), false);
        assert_eq!(whole.items.len(), 5);
        for json in [false, true] {
            let want = if json {
                serde_json::to_string_pretty(&whole).expect("serializes") + "\n"
            } else {
                whole.text()
            };
            let mut passed_again = 0;
            for chunk in 1..=want.len() + 1 {
                let (got, opened) = stream_failing(&text, json, chunk, 0);
                assert_eq!(got, want, "chunk {chunk}, json {json}");
                // First pass, report pass, and a second one when the spill
                // reached a chunk.
                assert!(opened == 2 || opened == 3, "chunk {chunk}: opened {opened}");
                passed_again += usize::from(opened == 3);
            }
            assert!(
                passed_again > 0 && passed_again < want.len(),
                "{passed_again}"
            );
        }
    }

    /// A temporary file that fails on a later write (ENOSPC in a full
    /// TMPDIR) after one chunk was written: the written chunk is dropped
    /// and the second pass gives the same bytes.
    #[test]
    fn spill_failing_on_a_later_write_passes_again_with_the_same_report() {
        let text = five_item_transcript();
        let whole = inspect(text.as_bytes(), false);
        for json in [false, true] {
            let want = if json {
                serde_json::to_string_pretty(&whole).expect("serializes") + "\n"
            } else {
                whole.text()
            };
            for chunk in 1..=want.len() + 1 {
                let (got, _) = stream_failing(&text, json, chunk, 1);
                assert_eq!(got, want, "chunk {chunk}, json {json}");
            }
            // Each item its own chunk: the second write fails.
            assert_eq!(stream_failing(&text, json, 1, 1).1, 3);
        }
    }

    /// Input that cannot be opened again (as a pipe could not) and a
    /// temporary file that cannot be made: nothing written, and the error
    /// names the temporary directory and TMPDIR.
    #[test]
    fn spill_failing_on_input_read_once_names_the_temporary_directory() {
        let text = five_item_transcript();
        let mut opened = 0;
        let mut open = || -> std::io::Result<crate::engine::SliceLines<'_>> {
            opened += 1;
            if opened > 2 {
                return Err(std::io::Error::other("read once"));
            }
            Ok(crate::engine::SliceLines::new(text.as_bytes(), None))
        };
        let mut spill = Spill::new(1);
        spill.fail_at_write = Some(0);
        let mut out = Vec::new();
        let e = inspect_stream_spilling(&mut open, false, false, &mut out, spill)
            .expect_err("no temporary file, no second pass");
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
        let e = e.to_string();
        let dir = std::env::temp_dir().display().to_string();
        assert!(e.contains(&format!("temporary file in {dir} ")), "{e}");
        assert!(e.contains("set TMPDIR"), "{e}");
        assert!(e.contains("read once"), "{e}");
        assert!(out.is_empty());
    }

    /// A response line with one `image/png` blob of `n` decoded bytes
    /// (PNG signature, then zeros); `escape_slash` writes each `/` of the
    /// base64 as `\/` (the cold path).
    fn png_line(n: usize, escape_slash: bool) -> (Vec<u8>, String) {
        let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
        bytes.resize(n, 0xff);
        let mut b = base64::encode(base64::Path::Scalar, &bytes);
        if escape_slash {
            b = b.replace('/', "\\/");
        }
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"contents":[{{"uri":"file:///a.png","mimeType":"image/png","blob":"{b}"}}]}}}}"#
        );
        (line.into_bytes(), b)
    }

    fn only_entry(r: &InspectReport) -> &EntryReport {
        match &r.items[..] {
            [Item::ReadResult { entries, .. }] if entries.len() == 1 => &entries[0],
            other => panic!("expected one read result with one entry, got {other:?}"),
        }
    }

    #[test]
    fn big_blob_takes_the_skeleton_path_with_sizes_from_base64_arithmetic() {
        let (line, _) = png_line(10_000, false);
        let sk = Skeleton::of(&line).expect("clean blob has a skeleton");
        assert!(sk.bytes.len() < 200, "skeleton is {} bytes", sk.bytes.len());
        assert_eq!(sk.blobs.len(), 1);
        let r = inspect(&line, false);
        assert!(r.clean());
        let e = only_entry(&r);
        assert_eq!(e.decoded_bytes, 10_000);
        assert_eq!(e.encoded_chars, Some(13_336));
        assert_eq!(e.padding, Some(2));
        assert_eq!(e.sniffed, Some("image/png"));
        assert_eq!(e.media, Some("match"));
    }

    #[test]
    fn escaped_blob_takes_the_whole_parse_and_reports_the_same() {
        let (line, b64) = png_line(10_000, true);
        assert!(b64.contains("\\/"), "the blob must hold an escaped slash");
        assert!(Skeleton::of(&line).is_none());
        let (plain, _) = png_line(10_000, false);
        assert_eq!(
            only_entry(&inspect(&line, false)),
            only_entry(&inspect(&plain, false))
        );
    }

    #[test]
    fn bad_base64_keeps_the_parsers_error_offset_into_the_line() {
        let (mut line, _) = png_line(30, false);
        let at = line.windows(8).position(|w| w == b"\"blob\":\"").unwrap() + 8 + 4;
        line[at] = b'!';
        assert!(Skeleton::of(&line).is_none());
        let r = inspect(&line, false);
        match &r.items[..] {
            [Item::InvalidResult { error, .. }] => {
                assert!(error.contains(&format!("byte {at}")), "{error}");
            }
            other => panic!("expected an invalid result, got {other:?}"),
        }
    }
}
