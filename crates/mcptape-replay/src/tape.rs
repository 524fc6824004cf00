//! A transcript turned into what replay needs: the recorded requests (for
//! `bench`/`verify`, playing the client) and the recorded request → reply
//! exchanges (for `serve`, playing the server), matched by method and params.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::{Arc, Mutex};

use mcptape_transcript::reader::{RecordRef, Transcript, TranscriptRef};
use mcptape_transcript::{Direction, Event};
use mcptape_wire::envelope::{self, EnvelopeKind};
use mcptape_wire::envelope::{Message, RequestId};
use mcptape_wire::protocol::{self, Observation, RevisionSource, method};
use serde_json::{Map, Value};

use crate::error::{ReplayError, ReplayErrorKind};

/// Methods answered by method alone when their params do not match exactly:
/// their params carry the client's identity (`clientInfo`, capabilities), not
/// a question (MCP 2025-11-25 "Lifecycle"; 2026-07-28 `server/discover`).
pub const HANDSHAKE_METHODS: [&str; 3] =
    [method::INITIALIZE, method::SERVER_DISCOVER, method::PING];

/// Largest number of recorded messages a tape built from a parsed
/// transcript holds ([`Tape::from_transcript`], [`Tape::from_transcript_ref`]:
/// `verify` and the exports, which keep values): 20,000,000. Past it,
/// [`ReplayErrorKind::TooManyMessages`]. The served tape ([`Tape::served`])
/// has no message cap: it is bounded by [`MAX_TAPE_INDEX_BYTES`].
pub const MAX_TAPE_MESSAGES: usize = 20_000_000;

/// Largest index a served tape ([`Tape::served`]) builds: 4 GiB, counted as
/// [`Tape::index_bytes`] (per client message its struct, per exchange its
/// struct and its place in the two lookup lists, per interim message its
/// struct, per distinct method its bytes, per distinct `params` text its
/// bytes and a value). The replies themselves are ranges of the
/// transcript's bytes and count nothing here (an error reply keeps its code
/// only, [`Exchange::error_code`]): memory follows the number of messages,
/// not the size of the file (`serve` held about 110 bytes a message at its
/// first answer, allocator, lookup tables and mapped pages included: 63 MB
/// on the 500,000-message transcript of benches/README.md, 539 MB on the
/// 5,000,000-message one). Past it, [`ReplayErrorKind::TapeTooLarge`].
pub const MAX_TAPE_INDEX_BYTES: usize = 4 << 30;

/// Transcript files at least this big (64 MiB) are memory-mapped by
/// [`TapeBytes::of_file`] instead of read: a served tape's replies are ranges
/// of the map, and the pages behind the line being indexed are released as
/// the index is built, so the process holds the index and the replies it
/// serves, not the file.
pub const TAPE_MAP_MIN_BYTES: u64 = 64 << 20;

/// How often the pages of a mapped transcript behind the line being indexed
/// are released ([`Tape::served`]): every 8 MiB (as `mcptape check` does).
const RELEASE_STEP_BYTES: usize = 8 << 20;

/// Page size assumed for releasing mapped pages (4 KiB; a larger real page
/// only makes a release cover less).
const PAGE_BYTES: usize = 4096;

/// One message from the recorded client.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Record index in the transcript (from 0, header excluded).
    pub record: usize,
    /// Microseconds since the recording started.
    pub t_us: u64,
    /// JSON-RPC `method`, shared by every request of the tape with that
    /// method (one allocation per distinct method, not per message).
    pub method: Method,
    /// JSON-RPC `params` as recorded (`Value::Null` if absent), shared:
    /// requests whose `params` text is byte-identical (a client repeating a
    /// question) hold one value.
    pub params: Arc<Value>,
    /// JSON-RPC `id` as its recorded JSON text (`7`, `"a-1"`: the token,
    /// quotes included; in a served tape a range of the transcript's bytes);
    /// `None` for a notification.
    pub id: Option<SharedText>,
}

/// A JSON-RPC method name ([`RecordedRequest::method`]), shared: cloning
/// it is a reference count, and a tape's builder gives every request of one
/// method the same text. Reads as a `&str` ([`Deref`], [`Method::as_str`]),
/// compares with `str`/`&str`/`String`, and hashes as its `str` (so a map
/// keyed by it is looked up by `&str`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Method(Arc<str>);

impl Method {
    /// The method name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The address of the shared text: equal for two clones of one
    /// `Method` (what the tape's index groups by before comparing text).
    fn addr(&self) -> usize {
        self.0.as_ptr() as usize
    }
}

impl From<&str> for Method {
    /// A copy of `name`.
    fn from(name: &str) -> Method {
        Method(Arc::from(name))
    }
}

impl Deref for Method {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Method {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Method {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Method {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Method {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Method {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A recorded request and the server's recorded reply to it.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request: its index in [`Tape::client`] ([`Tape::request`] reads it).
    pub request: usize,
    /// The whole recorded reply message (`result` or `error` member inside).
    /// In a served tape ([`ReplyBodies::Served`]) a reply is `Value::Null`
    /// (its bytes are [`Exchange::reply_raw`], an error's code
    /// [`Exchange::error_code`]; one `null` shared by all of them), except
    /// the replies to a handshake (`initialize`, `server/discover`) and to
    /// `tools/list`, which are whole.
    pub reply: Arc<Value>,
    /// The recorded reply's `error.code` when it is an error reply
    /// (JSON-RPC 2.0 §5.1: an integer, `i64` by the one reader's rule),
    /// `None` for a result; in every tape.
    pub error_code: Option<i64>,
    /// The same message, byte-exact as recorded (shared: `serve` writes it
    /// from here without a copy; in a tape built by [`Tape::served`], a
    /// range of the transcript's own bytes).
    pub reply_raw: SharedText,
    /// The byte range in [`Exchange::reply_raw`] of the reply's top-level
    /// `id` token, as the one reader found it
    /// ([`mcptape_wire::envelope::Envelope::id_range`]): `serve` writes the
    /// recorded bytes around it and the live id in its place. `None` when
    /// the reply has no id (a null-id error) or no bytes kept.
    pub reply_id: Option<Range<usize>>,
    /// Length of the recorded reply message in bytes (`bench` sizes its
    /// receive buffer from it).
    pub reply_bytes: usize,
    /// Recorded server delay: reply `t_us` − request `t_us`, µs.
    pub delay_us: u64,
    /// Streamable HTTP recordings: the reply came in a `text/event-stream`
    /// body (served the same way by `serve --listen`).
    pub sse: bool,
    /// Streamable HTTP recordings: the HTTP status the reply came with
    /// (e.g. 400 for a rejected `server/discover`); `None` for stdio.
    pub status: Option<u16>,
    /// What else the server said after this request and before the client's
    /// next one (in a Streamable HTTP recording: in the same HTTP exchange),
    /// in recorded order: notifications (`notifications/message`,
    /// `notifications/progress`, `…/list_changed`, `…/resources/updated`)
    /// and server requests (`roots/list`, `sampling/createMessage`,
    /// `elicitation/create`). `serve` replays them where they were recorded,
    /// relative to this request (MCP 2025-11-25 "Base Protocol" §Messages).
    pub interim: Vec<Interim>,
}

/// A recorded crash ([`Tape::crash`]): the server exited (or was killed)
/// while `request` waited for an answer that never came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCrash {
    /// The first request left unanswered (index into [`Tape::client`]).
    pub request: usize,
    /// The exit code, if it exited.
    pub code: Option<i32>,
    /// The signal number, if a signal killed it (or, beside `code`, was forwarded to it by
    /// the recorder before it exited: [`mcptape_transcript::Event::Exit`]).
    pub signal: Option<i32>,
    /// When it died, µs after `request` was sent (the exit record's `tUs`
    /// minus the request's): answers due before then are still sent.
    pub after_us: u64,
}

/// One server-to-client message recorded after a request ([`Exchange::interim`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interim {
    /// When the server sent it, µs after the request (the record's `tUs`
    /// minus the request's); past [`Exchange::delay_us`] when it followed the reply.
    pub after_us: u64,
    /// The message, byte-exact as recorded.
    pub text: SharedText,
    /// A server request (it has an `id`; `serve` sends it under an id of its own).
    pub request: bool,
    /// A `notifications/progress` (`serve` sends it only to a request that
    /// carries a `_meta.progressToken`, with that token).
    pub progress: bool,
}

/// A recorded HTTP-level rejection: a JSON-RPC error with no id that the
/// server sent with a 4xx status (e.g. server-everything's 400 "No valid
/// session ID provided"). `serve --listen` answers unknown sessions this way.
#[derive(Debug, Clone)]
pub struct HttpRejection {
    /// HTTP status code.
    pub status: u16,
    /// The JSON-RPC error message as recorded.
    pub body: Value,
}

/// What a [`Tape`] keeps of each recorded reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReplyBodies {
    /// Every reply whole, as a value and byte-exact: what `serve` (playing
    /// the server), `verify` and the exports need.
    #[default]
    Kept,
    /// Every reply byte-exact ([`Exchange::reply_raw`]: what `serve` writes),
    /// but as a value ([`Exchange::reply`]) only the replies to a handshake
    /// (`initialize`, `server/discover`: what `serve` reads of a reply, for
    /// capabilities and the other era's handshake) and to `tools/list`
    /// (`bench` reads each tool's `readOnlyHint`), and an error reply
    /// without an id (an HTTP rejection); any other reply is scanned, not
    /// built ([`mcptape_wire::envelope::scan_envelope`]: as strict as the
    /// parser), and kept as `Value::Null`, its bytes, its id's range
    /// ([`Exchange::reply_id`]) and, for an error, its code
    /// ([`Exchange::error_code`]: what `serve` and `bench` read of one) only. What `serve` plays and `bench`'s
    /// recorded client sends ([`Tape::served`]); not for `verify` or the
    /// exports (they compare values).
    Served,
}

/// The bytes of one transcript file that a served tape's texts are ranges
/// of ([`SharedText`]): read into memory, or memory-mapped
/// ([`TapeBytes::of_file`], [`TAPE_MAP_MIN_BYTES`]). A text is checked as
/// UTF-8 where it is read as `&str` (its line was checked when the tape was
/// built); `serve` writes replies from the bytes ([`SharedText::bytes`]).
pub struct TapeBytes(Backing);

/// Where a [`TapeBytes`] keeps its bytes.
enum Backing {
    /// A string (UTF-8 known).
    Text(String),
    /// Bytes read from a file.
    Bytes(Vec<u8>),
    /// A read-only map of a file, and the file (`serve` splices long replies from it:
    /// [`SharedText::file_range`]).
    Mapped(memmap2::Mmap, std::fs::File),
}

impl TapeBytes {
    /// The bytes of the regular file `file` (`len`: its length from its
    /// metadata): mapped when at least [`TAPE_MAP_MIN_BYTES`] (and the map
    /// succeeds), else read into memory.
    ///
    /// A mapped transcript must not be truncated while it is served: the
    /// pages lost would fault (`SIGBUS`), memmap2's caveat; the `mcptape`
    /// binary then exits 2 with a message instead of dying silently.
    /// `serve` plays finished recordings; the recorder appends to a file, it
    /// never rewrites one in place.
    ///
    /// # Errors
    /// The read's I/O error.
    pub fn of_file(file: std::fs::File, len: u64) -> std::io::Result<TapeBytes> {
        TapeBytes::of_file_mapped_from(file, len, TAPE_MAP_MIN_BYTES)
    }

    /// [`TapeBytes::of_file`] mapping files of `map_min` bytes or more.
    pub(crate) fn of_file_mapped_from(
        mut file: std::fs::File,
        len: u64,
        map_min: u64,
    ) -> std::io::Result<TapeBytes> {
        use std::io::Read;
        if len >= map_min {
            // SAFETY: the map is read-only and private; see the doc comment
            // for the one caveat (a truncation by another process while
            // serving), the same one `mcptape check` accepts.
            #[allow(unsafe_code)]
            let map = unsafe { memmap2::MmapOptions::new().map(&file) };
            if let Ok(map) = map {
                let _ = map.advise(memmap2::Advice::Sequential);
                return Ok(TapeBytes(Backing::Mapped(map, file)));
            }
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        Ok(TapeBytes::from(bytes))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Backing::Text(s) => s.as_bytes(),
            Backing::Bytes(b) => b,
            Backing::Mapped(m, _) => m,
        }
    }

    /// The bytes are memory-mapped.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Backing::Mapped(..))
    }

    /// The text at `at`, `None` when it is not a UTF-8 range of the bytes.
    fn str_at(&self, at: Range<usize>) -> Option<&str> {
        match &self.0 {
            Backing::Text(s) => s.get(at),
            _ => std::str::from_utf8(self.as_bytes().get(at)?).ok(),
        }
    }

    /// Drops all of this process's pages of a mapped file: each is read
    /// again from the page cache where a text of it is read later. For a
    /// process that keeps a served tape ([`Tape::served`], whose pass leaves
    /// the pages of its last 8 MiB and of any longer line resident) but
    /// reads few of its bytes: `bench`'s client sends the recorded requests
    /// and reads of a reply only its length ([`Exchange::reply_bytes`]) and
    /// error code ([`Exchange::error_code`]), never its bytes. Nothing for
    /// bytes in memory.
    pub fn release(&self) {
        if let Backing::Mapped(map, _) = &self.0 {
            // SAFETY: as `release_before`, for the whole map.
            #[allow(unsafe_code)]
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }

    /// Drops this process's pages of a mapped file before byte `upto`
    /// (rounded down to a page): they are read again from the page cache if
    /// a reply there is served. Nothing for bytes in memory.
    fn release_before(&self, upto: usize) {
        if let Backing::Mapped(map, _) = &self.0 {
            let upto = upto / PAGE_BYTES * PAGE_BYTES;
            if upto > 0 {
                // SAFETY: `MADV_DONTNEED` on a read-only file mapping only
                // drops this process's page table entries for `0..upto`; a
                // later read of those bytes faults them in again from the
                // page cache with the same contents (the file is not
                // truncated: see `of_file`).
                #[allow(unsafe_code)]
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, upto)
                };
            }
        }
    }
}

impl Default for TapeBytes {
    fn default() -> TapeBytes {
        TapeBytes(Backing::Text(String::new()))
    }
}

impl From<String> for TapeBytes {
    /// The string itself (moved, not copied).
    fn from(text: String) -> TapeBytes {
        TapeBytes(Backing::Text(text))
    }
}

impl From<Vec<u8>> for TapeBytes {
    /// The bytes themselves (moved, not copied): a string when they are UTF-8.
    fn from(bytes: Vec<u8>) -> TapeBytes {
        match String::from_utf8(bytes) {
            Ok(s) => TapeBytes(Backing::Text(s)),
            Err(e) => TapeBytes(Backing::Bytes(e.into_bytes())),
        }
    }
}

impl std::fmt::Debug for TapeBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TapeBytes({} bytes{})",
            self.as_bytes().len(),
            if self.is_mapped() { ", mapped" } else { "" }
        )
    }
}

/// Text shared without a copy: a range of one transcript's bytes
/// ([`TapeBytes`]: a file read once or mapped, each recorded reply a range
/// of it: [`Tape::served`]) or a string of its own. Cloning shares the
/// text; it reads as a `&str` ([`Deref`]; checked as UTF-8 on each read
/// unless it is a range of a string) and as bytes ([`SharedText::bytes`],
/// never checked: what `serve` writes). Compared, hashed and printed as
/// that `&str`.
#[derive(Clone, Default)]
pub struct SharedText {
    /// The bytes the text is a range of.
    buf: Arc<TapeBytes>,
    /// The text's byte range in `buf` (UTF-8).
    at: Range<usize>,
}

impl SharedText {
    /// `part` as a range of `buf`, sharing it (no copy); `None` when `part`
    /// is not a sub-slice of `buf`'s bytes (by address).
    pub fn within(buf: &Arc<TapeBytes>, part: &[u8]) -> Option<SharedText> {
        let all = buf.as_bytes();
        let start = (part.as_ptr() as usize).checked_sub(all.as_ptr() as usize)?;
        let end = start.checked_add(part.len())?;
        all.get(start..end)?;
        Some(SharedText {
            buf: buf.clone(),
            at: start..end,
        })
    }

    /// The text (`""` if its bytes are not UTF-8, which a tape never keeps).
    pub fn as_str(&self) -> &str {
        self.buf.str_at(self.at.clone()).unwrap_or_default()
    }

    /// The text's bytes, not checked as UTF-8 (the hot path of `serve`).
    pub fn bytes(&self) -> &[u8] {
        self.buf.as_bytes().get(self.at.clone()).unwrap_or_default()
    }

    /// The file the text's bytes are mapped from and the text's offset in it (bytes), when
    /// they are a range of a mapped transcript ([`TapeBytes::of_file`]): `serve` moves a long
    /// reply from there into a pipe with `splice(2)` instead of copying it out of the map.
    /// `None` for bytes in memory.
    pub fn file_range(&self) -> Option<(&std::fs::File, u64)> {
        match &self.buf.0 {
            Backing::Mapped(_, file) => Some((file, self.at.start as u64)),
            _ => None,
        }
    }
}

impl Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedText {
    /// `text` itself (moved into the shared bytes, not copied).
    fn from(text: String) -> SharedText {
        let n = text.len();
        SharedText {
            buf: Arc::new(TapeBytes::from(text)),
            at: 0..n,
        }
    }
}

impl From<&str> for SharedText {
    /// A copy of `text`.
    fn from(text: &str) -> SharedText {
        SharedText::from(text.to_owned())
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &SharedText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

impl std::hash::Hash for SharedText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::fmt::Debug for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The replayable content of one transcript.
#[derive(Debug)]
pub struct Tape {
    /// Every client message in order (requests and notifications).
    pub client: Vec<RecordedRequest>,
    /// Every request that got a recorded reply, in request order.
    pub exchanges: Vec<Exchange>,
    /// Negotiated protocol revision, if the transcript says.
    pub protocol_version: Option<String>,
    /// What the tape keeps of the replies ([`ReplyBodies::Kept`] unless
    /// built by [`Tape::from_transcript_ref`] with another [`ReplyBodies`],
    /// or by [`Tape::served`]: [`ReplyBodies::Served`]).
    pub bodies: ReplyBodies,
    /// The first recorded rejection of a request that carried no
    /// `Mcp-Session-Id` (HTTP recordings; e.g. server-everything's 400 "No
    /// valid session ID provided"), if any. A null-id error answering a
    /// handshake (`server/discover` refused by a 2025 server) is not one.
    pub session_rejection: Option<HttpRejection>,
    /// The first recorded rejection of a request whose `Mcp-Session-Id` the
    /// server did not know (unknown or ended session: 404 per 2025-11-25
    /// "Transports" §Session Management), if any.
    pub stale_session_rejection: Option<HttpRejection>,
    /// The recorded server's crash, if it died with a request unanswered
    /// (an exit record while a request it was sent had no reply and was not
    /// cancelled): `serve` replays it when that request comes again.
    pub crash: Option<RecordedCrash>,
    /// Index: method → normalized params as canonical JSON → exchange indexes.
    by_key: ByKey,
    /// Index: method → exchange indexes.
    by_method: HashMap<Method, Vec<usize>>,
    /// Per key, how many times it was served (to cycle through repeats).
    cursor: Mutex<HashMap<(String, String), usize>>,
    /// Recorded pseudonyms (`[redacted:N]`) → the value the client sent
    /// where one was first matched ([`Tape::lookup`]).
    pseudonyms: Mutex<HashMap<String, Value>>,
    /// The recorded JSON-RPC batches (message records that are a JSON
    /// array), not served ([`SkippedBatch`]): the first
    /// [`MAX_BATCHES_NOTED`], in transcript order.
    pub batches: Vec<SkippedBatch>,
    /// Batches past the first [`MAX_BATCHES_NOTED`]: counted, not kept.
    pub batches_more: usize,
    /// The client's requests inside recorded batches, all of them (past the cap too): never
    /// replayed (`verify` says how many it did not send).
    pub batched_requests: usize,
    /// What the index takes, as [`MAX_TAPE_INDEX_BYTES`] counts it.
    index_bytes: usize,
}

/// Most [`SkippedBatch`]es a tape keeps ([`Tape::batches`]), so a transcript of
/// thousands of batches warns in 10 lines and one count; the rest are counted
/// in [`Tape::batches_more`].
pub const MAX_BATCHES_NOTED: usize = 10;

/// A recorded message that is a JSON-RPC batch (JSON-RPC 2.0 §6: an array of
/// messages). MCP 2025-03-26 allowed batches; 2025-06-18 removed them, and
/// 2026-07-28 (the target revision) has none: `serve` refuses an incoming
/// batch (`-32600`) and answers one message at a time, so a recorded batch
/// can never be asked for. The tape is built without it: its requests are
/// not served, and the requests its responses answer are taken as answered
/// (not as left unanswered by a crash). `mcptape check` reads the same line
/// as the batch's elements, each checked as a message.
///
/// Display: `line 5: record 4 is a JSON-RPC batch of 3 messages from the client (2
/// requests): not served (batches are in MCP 2025-03-26 only; serve answers one
/// message at a time)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedBatch {
    /// 1-based transcript line of the batch (the header is line 1; one record a line).
    pub line: usize,
    /// The batch's record index (from 0, header excluded; `record N` in
    /// messages is index + 1, as [`crate::error::record_label`] says).
    pub record: usize,
    /// Who sent it.
    pub dir: Direction,
    /// Its elements, good or not.
    pub elements: usize,
    /// Its elements that are requests (a `method` and an `id`).
    pub requests: usize,
    /// Its elements that are notifications (a `method`, no `id`).
    pub notifications: usize,
    /// Its elements that are responses (a `result` or an `error`).
    pub responses: usize,
}

impl std::fmt::Display for SkippedBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let parts: Vec<String> = [
            (self.requests, "request"),
            (self.notifications, "notification"),
            (self.responses, "response"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| plural(n, what))
        .collect();
        write!(
            f,
            "line {}: record {} is a JSON-RPC batch of {} from the {} ({}): \
             not served (batches are in MCP 2025-03-26 only; serve answers one message at a time)",
            self.line,
            self.record + 1,
            plural(self.elements, "message"),
            match self.dir {
                Direction::C2s => "client",
                Direction::S2c => "server",
            },
            if parts.is_empty() {
                "no valid message".to_owned()
            } else {
                parts.join(", ")
            },
        )
    }
}

/// The exact-match index of a tape: method → canonical params → exchange
/// indexes in recorded order (two levels, so a lookup borrows its key).
type ByKey = HashMap<Method, HashMap<String, Vec<usize>>>;

/// Params with `_meta` removed and `null`/absent turned into `{}`: the part
/// of a request that asks the question (`_meta` carries progress tokens and
/// tracing that differ per client, MCP 2025-11-25 "`_meta`").
pub fn normalize_params(params: &Value) -> Value {
    match params {
        Value::Null => Value::Object(Map::new()),
        Value::Object(m) => {
            let mut m = m.clone();
            m.remove("_meta");
            Value::Object(m)
        }
        other => other.clone(),
    }
}

/// Whether the recorded value `rec` matches the live value `live`, a
/// redaction marker in `rec` matching any value (and `[redacted]` inside a
/// recorded string any text at its place): a pseudonym only the value
/// `bound` (or `new`, bindings made by this match) gives it, or, unbound,
/// a value no other pseudonym is bound to (then bound in `new`).
fn redacted_match(
    rec: &Value,
    live: &Value,
    bound: &HashMap<String, Value>,
    new: &mut Vec<(String, Value)>,
) -> bool {
    match (rec, live) {
        (Value::String(s), _) if mcptape_transcript::redact::is_redaction_marker(s) => {
            if s == mcptape_transcript::redact::REDACTED {
                return true;
            }
            let known = bound
                .get(s)
                .or_else(|| new.iter().find(|(k, _)| k == s).map(|(_, v)| v));
            match known {
                Some(v) => v == live,
                None => {
                    let taken =
                        bound.values().any(|v| v == live) || new.iter().any(|(_, v)| v == live);
                    if !taken {
                        new.push((s.clone(), live.clone()));
                    }
                    !taken
                }
            }
        }
        // A secret the recorder replaced inside a string (`"hi [redacted]"`): any text there.
        (Value::String(s), Value::String(l))
            if s.contains(mcptape_transcript::redact::REDACTED) =>
        {
            let mut parts = s.split(mcptape_transcript::redact::REDACTED);
            let first = parts.next().unwrap_or_default();
            let Some(mut rest) = l.strip_prefix(first) else {
                return false;
            };
            let parts: Vec<&str> = parts.collect();
            for (i, part) in parts.iter().enumerate() {
                if i + 1 == parts.len() {
                    return rest.ends_with(part);
                }
                match rest.find(part) {
                    Some(at) => rest = &rest[at + part.len()..],
                    None => return false,
                }
            }
            true
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| redacted_match(x, y, bound, new)))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| redacted_match(x, y, bound, new))
        }
        _ => rec == live,
    }
}

/// Canonical JSON text of `v`: object keys sorted at every level, so two
/// values equal up to key order give the same string.
pub fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// Key pairing a request with its reply: the id (as JSON text), and for
/// Streamable HTTP recordings also the HTTP exchange number — a reply travels
/// in the response to the POST that carried its request, and ids repeat
/// across the sessions of one recording.
/// A server message as a JSON value, moving (not copying) its `result`.
fn message_value(m: Message) -> Value {
    let mut o = Map::new();
    o.insert("jsonrpc".to_owned(), Value::from("2.0"));
    match m {
        Message::Response(r) => {
            o.insert("id".to_owned(), id_value(&r.id));
            o.insert("result".to_owned(), r.result);
        }
        other => return other.to_value(),
    }
    Value::Object(o)
}

/// A recorded reply's bytes as the value a tape with [`ReplyBodies::Kept`]
/// holds ([`Exchange::reply`]): lone surrogates masked, the strict parse;
/// `None` when they are not one JSON-RPC message.
pub(crate) fn reply_value(raw: &str) -> Option<Value> {
    let masked = mask_lone_surrogates(raw);
    envelope::parse_message(masked.as_bytes())
        .ok()
        .map(message_value)
}

/// The recorded revision by the one detector ([`protocol::detect_revision`]:
/// handshake messages first, then `header_version`, then `protocol` records);
/// `None` when nothing in the transcript says.
fn detected_revision<'a>(
    obs: impl Iterator<Item = Observation<'a>>,
    header_version: Option<&str>,
) -> Option<String> {
    let d = protocol::detect_revision(obs, header_version);
    (d.source != RevisionSource::Assumed).then(|| d.revision.as_str().to_owned())
}

/// A message's text as the revision detector reads it.
fn json_observation(dir: Direction, msg: &str) -> Observation<'_> {
    Observation::Json(protocol::Direction::from_client(dir == Direction::C2s), msg)
}

/// What the revision detector reads of one record: a message's text, a
/// `protocol` record's revision.
fn event_observation(e: &Event) -> Option<Observation<'_>> {
    match e {
        Event::Message { dir, msg, .. } => Some(json_observation(*dir, msg.get())),
        Event::Protocol { version } => Some(Observation::ProtocolRecord(version)),
        _ => None,
    }
}

/// Prefix of the string that stands, while a recorded message is read, for
/// an integer id past `i64` (`18446744073709551616`: legal JSON-RPC 2.0 §4,
/// which sets no range): `"mcptape:integer-id:18446744073709551616"`. The
/// digits stay in it, so each such request still pairs with its own reply;
/// the recorded bytes themselves are replayed unchanged.
pub const BIG_ID_PREFIX: &str = "mcptape:integer-id:";

/// A recorded id as the tape's JSON value: an integer in `i64`/`u64` range
/// or a string as itself, an integer past that (no exact
/// `serde_json::Value`) as its [`BIG_ID_PREFIX`] string.
fn id_value(id: &RequestId) -> Value {
    match id.to_value() {
        Value::Number(n) if n.is_f64() => Value::String(format!("{BIG_ID_PREFIX}{id}")),
        v => v,
    }
}

/// The key pairing a request with its reply ([`pair_key`]): the id compared
/// as a JSON value, and for Streamable HTTP recordings also the HTTP
/// exchange number — a reply travels in the response to the POST that
/// carried its request, and ids repeat across the sessions of one recording.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PairKey {
    /// The HTTP exchange number (Streamable HTTP recordings), else `None`.
    exchange: Option<u64>,
    /// The id.
    id: PairId,
}

/// A request id as [`PairKey`] compares it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PairId {
    /// An integer literal in `i64` range (the grammar allows one spelling
    /// of each: no leading zero, no `-0`, so equal values are equal texts).
    Int(i64),
    /// Any other id by its canonical JSON text: an integer past `i64` by
    /// its digits, a string without an escape as its token (quotes
    /// included), a string with one as its value re-encoded (`"\u0041"` is `"A"`).
    Text(Box<str>),
}

/// The key pairing a request with its reply ([`PairKey`]); no allocation
/// for an integer id.
fn pair_key(id: &RequestId, http: Option<&mcptape_transcript::HttpMeta>) -> PairKey {
    let raw = id.as_json();
    let id = match raw.parse::<i64>() {
        // Not a string token (it would start with `"`): the integer literal itself.
        Ok(n) => PairId::Int(n),
        // The id's raw text is its canonical text when it is an integer literal
        // or a string without an escape; any other string is compared by its
        // value (`"\u0041"` is `"A"`).
        Err(_) if raw.starts_with('"') && raw.contains('\\') => {
            PairId::Text(id.to_value().to_string().into_boxed_str())
        }
        Err(_) => PairId::Text(raw.into()),
    };
    PairKey {
        exchange: http.map(|h| h.exchange),
        id,
    }
}

/// `text` (JSON) with every lone surrogate escape (`\ud800`–`\udfff` not
/// part of a high+low pair, RFC 8259 §8.2) inside a string replaced by
/// `\ufffd`: the same length, so byte offsets stay valid. Borrowed when
/// there is none (the usual case). For reading a recording's structure
/// only: the recorded bytes themselves are replayed unchanged.
pub fn mask_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    // No `\u` at all (SIMD search), no surrogate escape: the usual case
    // costs one pass at memory speed, not a byte-by-byte walk.
    if memchr::memmem::find(b, b"\\u").is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    let hex = |at: usize| -> Option<u16> {
        let h = b.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let unit = |at: usize| -> Option<u16> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut in_str) = (0usize, false);
    while i < b.len() {
        match b[i] {
            b'"' => {
                in_str = !in_str;
                i += 1;
            }
            b'\\' if in_str => match unit(i) {
                Some(0xd800..=0xdbff)
                    if unit(i + 6).is_some_and(|lo| (0xdc00..=0xdfff).contains(&lo)) =>
                {
                    i += 12;
                }
                Some(0xd800..=0xdfff) => {
                    let o = out.get_or_insert_with(|| b.to_vec());
                    o[i..i + 6].copy_from_slice(b"\\ufffd");
                    i += 6;
                }
                Some(_) => i += 6,
                None => i += 2,
            },
            _ => i += 1,
        }
    }
    match out {
        // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
        Some(o) => {
            std::borrow::Cow::Owned(String::from_utf8(o).unwrap_or_else(|_| text.to_owned()))
        }
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// How an incoming request was matched.
#[derive(Debug, Clone)]
pub enum Match<'a> {
    /// Same method and params as a recorded request.
    Exact(&'a Exchange),
    /// A handshake method ([`HANDSHAKE_METHODS`]) answered by method alone.
    ByMethod(&'a Exchange),
    /// The method was recorded, but never with these params.
    NoParams,
    /// The method was never recorded.
    NoMethod,
}

impl Tape {
    /// Builds the tape from a transcript: pairs each `c2s` request with the
    /// first `s2c` reply carrying the same `id` (ids compared as JSON values).
    ///
    /// # Errors
    /// [`ReplayErrorKind::BadRecord`] when a message record is not a
    /// JSON-RPC 2.0 message or batch (a batch is not an error: noted in
    /// [`Tape::batches`], not served), [`ReplayErrorKind::TooManyMessages`]
    /// past [`MAX_TAPE_MESSAGES`].
    pub fn from_transcript(t: &Transcript) -> Result<Tape, ReplayError> {
        Tape::from_transcript_limited(t, MAX_TAPE_MESSAGES)
    }

    /// [`Tape::from_transcript`] with a message limit of `max_messages`
    /// (at most [`MAX_TAPE_MESSAGES`]; for tests of the limit).
    ///
    /// # Errors
    /// As [`Tape::from_transcript`], with `max_messages` as the limit.
    pub fn from_transcript_limited(
        t: &Transcript,
        max_messages: usize,
    ) -> Result<Tape, ReplayError> {
        let msgs = t
            .records
            .iter()
            .enumerate()
            .filter_map(|(i, rec)| match &rec.event {
                Event::Message { dir, msg, http, .. } => Some(Ok(MessageRecord {
                    index: i,
                    t_us: rec.t_us,
                    dir: *dir,
                    msg: Cow::Borrowed(msg.get()),
                    http: http.as_ref().map(Cow::Borrowed),
                    scanned: None,
                })),
                _ => None,
            });
        let revision = detected_revision(
            t.records.iter().filter_map(|r| event_observation(&r.event)),
            t.header.protocol_version.as_deref(),
        );
        let exit = t
            .records
            .iter()
            .enumerate()
            .find_map(|(i, r)| match r.event {
                Event::Exit { code, signal } => Some((code, signal, r.t_us, i)),
                _ => None,
            });
        let limits = Limits {
            messages: max_messages.min(MAX_TAPE_MESSAGES),
            index_bytes: usize::MAX,
        };
        build(msgs, limits, ReplyBodies::Kept, None, None, move || {
            (revision, exit)
        })
    }

    /// The tape of a transcript read by
    /// [`read_borrowed`](mcptape_transcript::reader::read_borrowed) (message
    /// records borrowed from the file's bytes), the replies kept as
    /// [`ReplyBodies`] says: [`ReplyBodies::Kept`] gives the tape of
    /// [`Tape::from_transcript`] (each reply's bytes a copy), while
    /// [`ReplyBodies::Served`] builds only the replies `serve` and `bench`
    /// read as values; [`Tape::served`] keeps the bytes as ranges of the file.
    ///
    /// # Errors
    /// As [`Tape::from_transcript`].
    pub fn from_transcript_ref(
        t: &TranscriptRef<'_>,
        bodies: ReplyBodies,
    ) -> Result<Tape, ReplayError> {
        let msgs = t.records.iter().enumerate().filter_map(|(i, rec)| {
            let (dir, msg, http) = rec.message()?;
            let t_us = match rec {
                RecordRef::Message { t_us, .. } => *t_us,
                RecordRef::Owned(r) => r.t_us,
            };
            Some(Ok(MessageRecord {
                index: i,
                t_us,
                dir,
                msg: Cow::Borrowed(msg),
                http: http.map(Cow::Borrowed),
                scanned: None,
            }))
        });
        let revision = detected_revision(
            t.records.iter().filter_map(|r| match r {
                RecordRef::Message { dir, msg, .. } => Some(json_observation(*dir, msg)),
                RecordRef::Owned(o) => event_observation(&o.event),
            }),
            t.header.protocol_version.as_deref(),
        );
        let exit = t.records.iter().enumerate().find_map(|(i, r)| match r {
            RecordRef::Owned(o) => match o.event {
                Event::Exit { code, signal } => Some((code, signal, o.t_us, i)),
                _ => None,
            },
            _ => None,
        });
        let limits = Limits {
            messages: MAX_TAPE_MESSAGES,
            index_bytes: usize::MAX,
        };
        build(msgs, limits, bodies, None, None, move || (revision, exit))
    }

    /// The tape `serve` plays ([`ReplyBodies::Served`]) of the transcript
    /// whose whole bytes are `bytes` (a file read once or mapped:
    /// [`TapeBytes::of_file`]), built in one streamed pass over its lines:
    /// each line read by the transcript reader
    /// ([`mcptape_transcript::reader::parse_record_line`], strict) and each
    /// message scanned once by the one reader
    /// ([`mcptape_wire::envelope::scan_envelope_str`]); no record list, no
    /// value per reply. Every kept reply ([`Exchange::reply_raw`]) and
    /// interim message is a range of `bytes`, never a copy, with its id's
    /// range ([`Exchange::reply_id`]) and an error's code
    /// ([`Exchange::error_code`]); as values only what
    /// [`ReplyBodies::Served`] says. Each request's method is shared by all
    /// of its method's requests, its id a range of `bytes`, and each
    /// exchange refers to its request by index ([`Tape::request`]).
    /// Requests, pairing, revision, delays, crash and
    /// matching are those of [`Tape::from_transcript`]. Of a mapped file
    /// the pages behind the line being read are released as the pass goes
    /// ([`TAPE_MAP_MIN_BYTES`]): memory is the index
    /// ([`MAX_TAPE_INDEX_BYTES`]) and the replies served, not the file.
    ///
    /// # Errors
    /// [`ReplayErrorKind::Transcript`] for a transcript the reader refuses
    /// (its line and byte offset; an unterminated last line is not an
    /// error: [`ServedTape::dropped`]); [`ReplayErrorKind::BadRecord`] as
    /// [`Tape::from_transcript`]; [`ReplayErrorKind::TapeTooLarge`] past
    /// [`MAX_TAPE_INDEX_BYTES`].
    pub fn served(bytes: &Arc<TapeBytes>) -> Result<ServedTape, ReplayError> {
        Tape::served_limited(bytes, MAX_TAPE_INDEX_BYTES)
    }

    /// [`Tape::served`] with an index of at most `max_index_bytes` (for
    /// tests of the limit; [`MAX_TAPE_INDEX_BYTES`] is the one `serve` uses).
    ///
    /// # Errors
    /// As [`Tape::served`], with `max_index_bytes` as the limit.
    pub fn served_limited(
        bytes: &Arc<TapeBytes>,
        max_index_bytes: usize,
    ) -> Result<ServedTape, ReplayError> {
        use mcptape_transcript::reader::{ErrorKind, TranscriptError};
        let all = bytes.as_bytes();
        let header_error = |kind| {
            ReplayError::new(ReplayErrorKind::Transcript(TranscriptError {
                kind,
                line: 1,
                offset: 0,
            }))
        };
        if all.is_empty() {
            return Err(header_error(ErrorKind::Empty));
        }
        let n = memchr::memchr(b'\n', all)
            .ok_or_else(|| header_error(ErrorKind::TruncatedHeader { bytes: all.len() }))?;
        let header = mcptape_transcript::reader::parse_header_line(&all[..n])
            .map_err(|e| ReplayError::new(ReplayErrorKind::Transcript(e)))?;
        let side = std::cell::RefCell::new(LineSide::default());
        let lines = ServedLines {
            bytes,
            all,
            pos: n + 1,
            line_no: 1,
            record: 0,
            released: 0,
            side: &side,
        };
        let limits = Limits {
            messages: usize::MAX,
            index_bytes: max_index_bytes,
        };
        let hint = header.protocol_version.clone();
        let mut bad_contents = Vec::new();
        let mut bad_contents_more = 0;
        let found = Some((&mut bad_contents, &mut bad_contents_more));
        let tape = build(
            lines,
            limits,
            ReplyBodies::Served,
            Some(bytes),
            found,
            || {
                let s = side.borrow();
                let d = s.detector.clone().finish(hint.as_deref());
                let revision =
                    (d.source != RevisionSource::Assumed).then(|| d.revision.as_str().to_owned());
                (revision, s.exit)
            },
        )?;
        let dropped = side.borrow_mut().dropped.take();
        Ok(ServedTape {
            tape,
            dropped,
            bad_contents,
            bad_contents_more,
        })
    }

    /// One tape answering from the union of the exchanges of `tapes`, in
    /// order (the first tape's first): several recordings of one server —
    /// the TypeScript SDK v2 records a `server/discover` probe and then the
    /// session as two transcripts — served together. The revision, the
    /// recorded HTTP rejections and the crash are the first tape's that has
    /// one. `None` for no tape. Every tape must keep the same [`ReplyBodies`]
    /// (the first one's is kept).
    pub fn union(tapes: Vec<Tape>) -> Option<Tape> {
        let mut it = tapes.into_iter();
        let mut all = it.next()?;
        // One tape is its own union: its indexes are already built.
        let mut reindex = false;
        for t in it {
            let offset = all.client.len();
            all.client.extend(t.client);
            all.exchanges
                .extend(t.exchanges.into_iter().map(|e| Exchange {
                    request: e.request + offset,
                    ..e
                }));
            all.index_bytes = all.index_bytes.saturating_add(t.index_bytes);
            all.batches_more += t.batches_more;
            all.batched_requests += t.batched_requests;
            all.batches.extend(t.batches);
            reindex = true;
            all.protocol_version = all.protocol_version.or(t.protocol_version);
            all.session_rejection = all.session_rejection.or(t.session_rejection);
            all.stale_session_rejection = all.stale_session_rejection.or(t.stale_session_rejection);
            all.crash = all.crash.or(t.crash.map(|c| RecordedCrash {
                request: c.request + offset,
                ..c
            }));
        }
        if reindex {
            (all.by_key, all.by_method) = index_exchanges(&all.client, &all.exchanges);
        }
        Some(all)
    }

    /// The recorded crash ([`Tape::crash`]) when `method` + `params` is the
    /// request the server died on (params compared as [`Tape::lookup`] does).
    pub fn crash_for(&self, method: &str, params: &Value) -> Option<&RecordedCrash> {
        let c = self.crash.as_ref()?;
        let r = self.client.get(c.request)?;
        (r.method == method
            && canonical(&normalize_params(&r.params)) == canonical(&normalize_params(params)))
        .then_some(c)
    }

    /// Finds the recorded reply for `method` + `params`. Repeated identical
    /// requests are answered with the recorded repeats in order, cycling.
    ///
    /// A value the recorder redacted (`[redacted]`, or a pseudonym
    /// `[redacted:N]`: `mcptape_transcript::redact::Redactor::message_json`)
    /// matches any value at its place when no recorded request matches
    /// exactly. A pseudonym is bound to the first value it matched, so two
    /// different recorded secrets stay apart: `[redacted:1]` then matches
    /// only that value, and no other pseudonym matches it.
    pub fn lookup(&self, method: &str, params: &Value) -> Match<'_> {
        let normalized = normalize_params(params);
        let mut key = (method.to_owned(), canonical(&normalized));
        let list_of = |k: &(String, String)| self.by_key.get(k.0.as_str())?.get(&k.1);
        if list_of(&key).is_none()
            && let Some(k) = self.redacted_key(method, &normalized)
        {
            key = k;
        }
        if let Some(list) = list_of(&key) {
            let mut cur = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
            let c = cur.entry(key).or_insert(0);
            let e = &self.exchanges[list[*c % list.len()]];
            *c += 1;
            return Match::Exact(e);
        }
        match self.by_method.get(method) {
            Some(list) if HANDSHAKE_METHODS.contains(&method) => {
                Match::ByMethod(&self.exchanges[list[0]])
            }
            Some(_) => Match::NoParams,
            None => Match::NoMethod,
        }
    }

    /// The key of the first recorded `method` request whose redacted values
    /// match `params` (normalized), binding its pseudonyms.
    fn redacted_key(&self, method: &str, params: &Value) -> Option<(String, String)> {
        let list = self.by_method.get(method)?;
        let mut bound = self.pseudonyms.lock().unwrap_or_else(|p| p.into_inner());
        // A repeat of a request (the same shared params) gives the same answer.
        let mut seen = std::collections::HashSet::new();
        for &i in list {
            let params_of = &self.request(&self.exchanges[i]).params;
            if !seen.insert(Arc::as_ptr(params_of)) {
                continue;
            }
            let recorded = normalize_params(params_of);
            let mut new = Vec::new();
            if redacted_match(&recorded, params, &bound, &mut new) {
                bound.extend(new);
                return Some((method.to_owned(), canonical(&recorded)));
            }
        }
        None
    }

    /// The recorded `resources/read` requests (in order), as `params` values.
    pub fn reads(&self) -> Vec<Value> {
        self.client
            .iter()
            .filter(|r| r.method == method::RESOURCES_READ && r.id.is_some())
            .map(|r| Value::clone(&r.params))
            .collect()
    }

    /// What the tape's index takes, in bytes, as [`MAX_TAPE_INDEX_BYTES`]
    /// counts it: counted for every tape (only [`Tape::served`] is held to
    /// the limit); a [`Tape::union`]'s is the sum of its tapes'.
    pub fn index_bytes(&self) -> usize {
        self.index_bytes
    }

    /// The recorded JSON-RPC batches skipped when the tape was built, all of them: the ones
    /// kept in [`Tape::batches`] plus [`Tape::batches_more`]. A count of message records that
    /// are a JSON array (JSON-RPC 2.0 §6; MCP 2025-03-26 only), never served nor replayed.
    pub fn batches_skipped(&self) -> usize {
        self.batches.len() + self.batches_more
    }

    /// The names of the tools a recorded `tools/list` result marks
    /// `annotations.readOnlyHint: true` (MCP 2025-06-18 and later, "Tools":
    /// tool annotations). A hint, not a guarantee: `bench` against a live
    /// target calls only these unless the user names others.
    pub fn read_only_tools(&self) -> std::collections::BTreeSet<String> {
        self.exchanges
            .iter()
            .filter(|e| self.request(e).method == method::TOOLS_LIST)
            .filter_map(|e| e.reply.pointer("/result/tools")?.as_array())
            .flatten()
            .filter(|t| t.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true)))
            .filter_map(|t| Some(t.get("name")?.as_str()?.to_owned()))
            .collect()
    }

    /// The recorded handshake: the first `initialize` or `server/discover`
    /// request, and whether `notifications/initialized` followed it.
    pub fn handshake(&self) -> Option<&RecordedRequest> {
        self.client
            .iter()
            .find(|r| r.id.is_some() && method::HANDSHAKES.contains(&r.method.as_str()))
    }

    /// The request of `e`, an exchange of this tape ([`Exchange::request`]).
    ///
    /// # Panics
    /// When `e` is not an exchange of this tape and its request index is
    /// past [`Tape::client`] (a tape's own exchanges always index it).
    pub fn request(&self, e: &Exchange) -> &RecordedRequest {
        &self.client[e.request]
    }

    /// Recorded server delays of every exchange, µs.
    pub fn recorded_delays_us(&self) -> Vec<u64> {
        self.exchanges.iter().map(|e| e.delay_us).collect()
    }
}

/// One message record as the tape builder reads it, borrowed.
struct MessageRecord<'a> {
    /// Record index in the transcript (from 0, header excluded).
    index: usize,
    /// Microseconds since the recording started.
    t_us: u64,
    dir: Direction,
    /// The message, byte-exact (borrowed from the transcript's bytes, or a
    /// record's own).
    msg: Cow<'a, str>,
    http: Option<std::borrow::Cow<'a, mcptape_transcript::HttpMeta>>,
    /// The message's envelope, when the reader already scanned it
    /// ([`Tape::served`]: one scan a message).
    scanned: Option<envelope::Envelope>,
}

/// A served tape ([`Tape::served`]) and the unterminated last line its
/// reader dropped, if the file was cut mid-line.
#[derive(Debug)]
pub struct ServedTape {
    /// The tape.
    pub tape: Tape,
    /// The cut last line, dropped (as [`mcptape_transcript::reader::read`] drops it).
    pub dropped: Option<mcptape_transcript::reader::Dropped>,
    /// The recorded `resources/read` results with a `contents` entry that has both `text` and
    /// `blob`, or neither: one per exchange, in transcript order, the first
    /// [`MAX_BAD_CONTENTS_NOTED`]. `serve` replays them as recorded and warns once each at load
    /// ([`BadContents`]'s Display).
    pub bad_contents: Vec<BadContents>,
    /// Such replies past the first [`MAX_BAD_CONTENTS_NOTED`]: counted, not kept (`serve` says
    /// `and N more replies with such entries`).
    pub bad_contents_more: usize,
}

/// Most [`BadContents`] a served tape keeps ([`ServedTape::bad_contents`]), so a transcript of
/// 20,000 such replies warns in 10 lines and one count, not 20,000 lines; the rest are counted
/// in [`ServedTape::bad_contents_more`].
pub const MAX_BAD_CONTENTS_NOTED: usize = 10;

/// A recorded `resources/read` result whose `contents` has an entry that is neither a
/// TextResourceContents nor a BlobResourceContents (MCP 2026-07-28 "Resources" → "Resource
/// Contents": an entry carries `text` or `blob`, never both and never neither): the first such
/// entry of the reply, and how many more it has. `mcptape check` reports the same entries
/// (rules `contents-text-and-blob`, `contents-neither-text-nor-blob`).
///
/// Display: `line 3: the recorded reply to resources/read id 7 has a contents entry with both
/// text and blob (entry 0, uri "demo://x", at /result/contents/0): replayed as recorded`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadContents {
    /// 1-based transcript line of the reply (the header is line 1; one record a line).
    pub line: usize,
    /// The reply's record index (from 0, header excluded).
    pub record: usize,
    /// The reply's `id`, its recorded JSON text (`7`, `"a-1"`).
    pub id: String,
    /// 0-based index of the first bad entry in `contents`.
    pub entry: usize,
    /// That entry's `uri`, when it is a string.
    pub uri: Option<String>,
    /// What is wrong with that entry.
    pub fault: EntryFault,
    /// Bad entries after the first in the same reply.
    pub more: usize,
}

/// What is wrong with a `contents` entry of a recorded read result ([`BadContents`]), as the
/// wire's contents scanner ([`mcptape_wire::codec::ScannedEntry::issues`]) says, the one `check`
/// gives its verdict from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryFault {
    /// Both `text` and `blob`.
    Both,
    /// Neither `text` nor `blob`.
    Neither,
    /// The entry is not a JSON object (`42`, `null`).
    NotAnObject,
    /// `text` or `blob` (the field named) is not a string (`"text": null`).
    NotAString(&'static str),
}

impl std::fmt::Display for EntryFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntryFault::Both => f.write_str("both text and blob"),
            EntryFault::Neither => f.write_str("neither text nor blob"),
            EntryFault::NotAnObject => f.write_str("no object"),
            EntryFault::NotAString(field) => write!(f, "a {field} that is not a string"),
        }
    }
}

impl std::fmt::Display for BadContents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: the recorded reply to resources/read id {} has a contents entry with {} \
             (entry {}, uri {}, at /result/contents/{})",
            self.line,
            self.id,
            self.fault,
            self.entry,
            self.uri
                .as_deref()
                .map_or_else(|| "not a string".to_owned(), |u| format!("{u:?}")),
            self.entry
        )?;
        if self.more > 0 {
            write!(f, " and {} more such entries", self.more)?;
        }
        f.write_str(
            ": replayed as recorded (an entry is TextResourceContents or BlobResourceContents)",
        )
    }
}

/// The [`BadContents`] of the `result.contents` array of `message` (whose envelope scan is
/// `env`), the reply at record `record` with id text `id`, if it has a bad entry. Serve's
/// start-up reads every recorded read result: the wire's shape-only contents scan
/// ([`mcptape_wire::codec::scan_result_contents_shape`]) clears the plain ones in one pass,
/// and only a result with an entry that breaks the text XOR blob rule is read again, in full.
/// `shapes` is a buffer reused across replies.
fn bad_contents_in(
    message: &str,
    env: &envelope::Envelope,
    record: usize,
    id: &str,
    shapes: &mut Vec<mcptape_wire::codec::EntryShape>,
) -> Option<BadContents> {
    mcptape_wire::codec::scan_result_contents_shape(message, env, shapes)?.ok()?;
    if shapes
        .iter()
        .all(mcptape_wire::codec::EntryShape::text_xor_blob)
    {
        return None;
    }
    let contents = message.get(env.members.result_contents.clone()?)?;
    bad_contents_of(contents, record, id)
}

/// The [`BadContents`] of the `contents` array `contents` (its JSON text, already validated)
/// of the reply at record `record` with id text `id`, if it has a bad entry. Scanned by the one
/// contents scanner ([`mcptape_wire::codec::scan_contents_str`]), as `check` does.
fn bad_contents_of(contents: &str, record: usize, id: &str) -> Option<BadContents> {
    use mcptape_wire::resources::ContentsErrorKind as K;
    let entries = mcptape_wire::codec::scan_contents_str(contents).ok()?;
    // The wire's own verdict on each entry.
    let mut bad = entries.iter().filter_map(|e| {
        let fault = e.issues().into_iter().find_map(|(k, _)| match k {
            K::EntryNotObject => Some(EntryFault::NotAnObject),
            K::NotAString {
                field: f @ ("text" | "blob"),
            } => Some(EntryFault::NotAString(f)),
            K::BothTextAndBlob => Some(EntryFault::Both),
            K::NeitherTextNorBlob => Some(EntryFault::Neither),
            _ => None,
        })?;
        Some((e, fault))
    });
    let (first, fault) = bad.next()?;
    Some(BadContents {
        line: record + 2,
        record,
        id: id.to_owned(),
        entry: first.index,
        uri: first.uri.decode().map(|u| u.into_owned()),
        fault,
        more: bad.count(),
    })
}

/// What the line pass of [`Tape::served`] learns beside the messages.
#[derive(Default)]
struct LineSide {
    /// The revision detector, fed until it settles.
    detector: protocol::RevisionDetector,
    /// The first exit record: (code, signal, `tUs`, record index).
    exit: Option<(Option<i32>, Option<i32>, u64, usize)>,
    /// The cut last line.
    dropped: Option<mcptape_transcript::reader::Dropped>,
}

/// The message records of a transcript's bytes, one line at a time
/// ([`Tape::served`]): other records are read for the revision and the
/// exit, and a mapped file's pages behind the line are released.
struct ServedLines<'a> {
    bytes: &'a TapeBytes,
    all: &'a [u8],
    /// Byte offset of the next line.
    pos: usize,
    /// 1-based number of the latest line read.
    line_no: usize,
    /// Index of the next record (from 0, header excluded).
    record: usize,
    /// Pages before this offset were released.
    released: usize,
    side: &'a std::cell::RefCell<LineSide>,
}

impl<'a> Iterator for ServedLines<'a> {
    type Item = Result<MessageRecord<'a>, ReplayError>;

    fn next(&mut self) -> Option<Self::Item> {
        use mcptape_transcript::reader::{Dropped, parse_record_line};
        while self.pos < self.all.len() {
            let start = self.pos;
            if start - self.released >= RELEASE_STEP_BYTES {
                self.bytes.release_before(start);
                self.released = start;
            }
            self.line_no += 1;
            let rest = &self.all[start..];
            let (line, terminated) = match memchr::memchr(b'\n', rest) {
                Some(n) => (&rest[..n], true),
                None => (rest, false),
            };
            self.pos = start + line.len() + 1;
            let mut scanned = None;
            let parsed = parse_record_line(line, self.line_no, start, |m: &'a str| {
                // Checked as UTF-8 already: its strings are not checked again.
                match envelope::scan_envelope_str(m) {
                    Ok(env) => {
                        scanned = Some(env);
                        true
                    }
                    Err(_) => false,
                }
            });
            let rec = match parsed {
                Ok(r) => r,
                // A malformed line, ended or not: only a cut record
                // (`reader::is_cut_record`) is dropped below.
                Err(e) if terminated || !mcptape_transcript::reader::is_cut_record(line) => {
                    return Some(Err(ReplayError::new(ReplayErrorKind::Transcript(e))));
                }
                Err(e) => {
                    self.side.borrow_mut().dropped = Some(Dropped {
                        offset: start,
                        bytes: line.len(),
                        line: self.line_no,
                        reason: e.kind.to_string(),
                    });
                    return None;
                }
            };
            let index = self.record;
            self.record += 1;
            let mut side = self.side.borrow_mut();
            let settled = side.detector.settled().is_some();
            match rec {
                RecordRef::Message {
                    t_us,
                    dir,
                    msg,
                    http,
                } => {
                    if !settled {
                        side.detector.observe(json_observation(dir, msg));
                    }
                    return Some(Ok(MessageRecord {
                        index,
                        t_us,
                        dir,
                        msg: Cow::Borrowed(msg),
                        http: http.map(Cow::Owned),
                        scanned,
                    }));
                }
                RecordRef::Owned(r) => {
                    if !settled && let Some(o) = event_observation(&r.event) {
                        side.detector.observe(o);
                    }
                    match r.event {
                        Event::Message { dir, msg, http, .. } => {
                            return Some(Ok(MessageRecord {
                                index,
                                t_us: r.t_us,
                                dir,
                                msg: Cow::Owned(msg.get().to_owned()),
                                http: http.map(Cow::Owned),
                                scanned: None,
                            }));
                        }
                        Event::Exit { code, signal } if side.exit.is_none() => {
                            side.exit = Some((code, signal, r.t_us, index));
                        }
                        _ => {}
                    }
                }
            }
        }
        None
    }
}

/// The server-to-client messages of a recording by the request they
/// followed ([`Exchange::interim`]), while the tape is built.
#[derive(Default)]
struct Interims {
    /// Index into the builder's `client` → its interim messages.
    by_request: HashMap<usize, Vec<Interim>>,
    /// The client's latest request.
    last: Option<usize>,
    /// Streamable HTTP: exchange number → the request its POST carried.
    by_exchange: HashMap<u64, usize>,
}

impl Interims {
    /// Request `ci` was sent (in HTTP exchange `http`, if any).
    fn follow(&mut self, ci: usize, http: Option<&mcptape_transcript::HttpMeta>) {
        self.last = Some(ci);
        if let Some(h) = http {
            self.by_exchange.insert(h.exchange, ci);
        }
    }
}

/// Files the server-to-client message `msg` (`kind`: a server request?, a
/// `notifications/progress`?) under the request it followed: the one its
/// HTTP exchange carried, else the client's latest. A message sent before
/// any request (nothing to follow) is not replayed.
fn note_interim(
    interim: &mut Interims,
    client: &[RecordedRequest],
    http: Option<&mcptape_transcript::HttpMeta>,
    t_us: u64,
    msg: &str,
    (is_request, progress): (bool, bool),
    shared: Option<&Arc<TapeBytes>>,
) {
    let ci = http
        .and_then(|h| interim.by_exchange.get(&h.exchange).copied())
        .or(interim.last);
    let Some(ci) = ci else { return };
    interim.by_request.entry(ci).or_default().push(Interim {
        after_us: t_us.saturating_sub(client[ci].t_us),
        text: shared_text(shared, msg),
        request: is_request,
        progress,
    });
}

/// The lookup indexes of a tape's exchanges: by (method, canonical params),
/// and by method, each in recorded order.
type Indexes = (ByKey, HashMap<Method, Vec<usize>>);

/// Builds the [`Indexes`] of `exchanges` (whose requests are in `client`).
/// Exchanges are first grouped by the identity of their request's shared
/// method and params (one small hash per exchange); the canonical text of
/// the params is then made once per group, not per exchange. Groups that
/// come out equal (the same question in another key order, or with another
/// `_meta`; the same method of another tape of a union) are merged in
/// recorded order.
fn index_exchanges(client: &[RecordedRequest], exchanges: &[Exchange]) -> Indexes {
    // (method address, params address) → group; per group its request and exchanges.
    let mut group_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    // Per method (by name) its exchanges; the latest one's slot is reused
    // without a lookup (consecutive exchanges mostly share a method).
    let mut methods: Vec<(Method, Vec<usize>)> = Vec::new();
    let mut method_slot: HashMap<&str, usize> = HashMap::new();
    let mut last_method: Option<(usize, usize)> = None;
    for (i, e) in exchanges.iter().enumerate() {
        let r = &client[e.request];
        let at = (r.method.addr(), Arc::as_ptr(&r.params) as usize);
        match group_of.get(&at) {
            Some(&g) => groups[g].1.push(i),
            None => {
                group_of.insert(at, groups.len());
                groups.push((e.request, vec![i]));
            }
        }
        let slot = match last_method {
            Some((addr, slot)) if addr == at.0 => slot,
            _ => {
                let slot = *method_slot.entry(r.method.as_str()).or_insert_with(|| {
                    methods.push((r.method.clone(), Vec::new()));
                    methods.len() - 1
                });
                last_method = Some((at.0, slot));
                slot
            }
        };
        methods[slot].1.push(i);
    }
    let mut by_key: ByKey = HashMap::new();
    for (request, list) in groups {
        let r = &client[request];
        let canon = canonical(&normalize_params(&r.params));
        let per_method = by_key.entry(r.method.clone()).or_default();
        match per_method.get_mut(canon.as_str()) {
            Some(earlier) => {
                earlier.extend(list);
                earlier.sort_unstable();
            }
            None => {
                per_method.insert(canon, list);
            }
        }
    }
    (by_key, methods.into_iter().collect())
}

/// `msg` as a range of `shared` when it lies in it, else a copy.
fn shared_text(shared: Option<&Arc<TapeBytes>>, msg: &str) -> SharedText {
    shared
        .and_then(|b| SharedText::within(b, msg.as_bytes()))
        .unwrap_or_else(|| SharedText::from(msg))
}

/// What the builder is told after the last message: the recorded
/// revision, and the exit record (code, signal, `tUs`), if any.
/// The transcript's revision and its first exit record: (code, signal, `tUs`, record index).
type Ending = (
    Option<String>,
    Option<(Option<i32>, Option<i32>, u64, usize)>,
);

/// Refuses a record stamped with a `tUs` beyond
/// [`mcptape_transcript::MAX_RECORDED_T_US`]
/// ([`ReplayErrorKind::TimeBeyondLimit`] at `record`): the delays the tape
/// replays are differences of these stamps, so every one stays within the
/// limit.
fn check_time(t_us: u64, record: usize) -> Result<(), ReplayError> {
    if t_us > mcptape_transcript::MAX_RECORDED_T_US {
        return Err(ReplayError::new(ReplayErrorKind::TimeBeyondLimit {
            t_us,
            limit: mcptape_transcript::MAX_RECORDED_T_US,
        })
        .at_record(record));
    }
    Ok(())
}

/// The builder's limits: at most `messages` messages
/// ([`ReplayErrorKind::TooManyMessages`]), an index of at most
/// `index_bytes` ([`ReplayErrorKind::TapeTooLarge`]).
#[derive(Debug, Clone, Copy)]
struct Limits {
    messages: usize,
    index_bytes: usize,
}

/// Params values by their recorded text, while a tape is built: a request
/// repeated with the same `params` bytes shares one value (parsed once).
#[derive(Default)]
struct ParamsCache {
    by_text: HashMap<Box<[u8]>, Arc<Value>>,
    absent: Arc<Value>,
}

impl ParamsCache {
    /// The value of the params text `raw` (`None`: absent) and whether it is
    /// new (not seen before).
    fn get(&mut self, raw: Option<&[u8]>) -> Result<(Arc<Value>, bool), serde_json::Error> {
        let Some(raw) = raw else {
            return Ok((self.absent.clone(), false));
        };
        if let Some(v) = self.by_text.get(raw) {
            return Ok((v.clone(), false));
        }
        let v = Arc::new(mcptape_wire::json::value_from_slice(raw)?);
        self.by_text.insert(raw.into(), v.clone());
        Ok((v, true))
    }
}

/// The one tape builder of [`Tape::from_transcript_limited`],
/// [`Tape::from_ref`] and [`Tape::served`]: each message scanned once by
/// the one reader ([`envelope::scan_envelope`], or the scan the reader
/// already made); a kept reply's bytes are a range of `shared` when they
/// lie in it. `ending` is called after the last message.
fn build<'a>(
    msgs: impl Iterator<Item = Result<MessageRecord<'a>, ReplayError>>,
    limits: Limits,
    bodies: ReplyBodies,
    shared: Option<&Arc<TapeBytes>>,
    mut bad_contents: Option<(&mut Vec<BadContents>, &mut usize)>,
    ending: impl FnOnce() -> Ending,
) -> Result<Tape, ReplayError> {
    let max_messages = limits.messages;
    // Requests the client cancelled (pair keys): left unanswered on purpose.
    let mut cancelled: std::collections::HashSet<PairKey> = std::collections::HashSet::new();
    let mut client: Vec<RecordedRequest> = Vec::new();
    let mut exchanges: Vec<Exchange> = Vec::new();
    // The methods seen, each once (every request of one method shares its text).
    let mut methods: std::collections::HashSet<Method> = std::collections::HashSet::new();
    // The value of every successful reply a served tape keeps as bytes only.
    let null = Arc::new(Value::Null);
    let mut session_rejection = None;
    let mut stale_session_rejection = None;
    // HTTP exchange number → its POST carried an `Mcp-Session-Id`.
    let mut had_session: HashMap<u64, bool> = HashMap::new();
    // open requests: pair key → index into `client`
    let mut open: HashMap<PairKey, usize> = HashMap::new();
    // `serve`: the contents shapes of one read result (a buffer, see `bad_contents_in`).
    let mut shapes = Vec::new();
    let mut interim = Interims::default();
    let mut params_cache = ParamsCache::default();
    let mut batches = Vec::new();
    let mut batches_more = 0usize;
    let mut batched_requests = 0usize;
    let mut index_bytes = 0usize;
    let mut n = 0usize;
    // The record of the latest message (the one an index past its limit is blamed on).
    let mut last = 0usize;
    for rec in msgs {
        let MessageRecord {
            index: i,
            t_us,
            dir,
            msg,
            http,
            scanned,
        } = rec?;
        let http = http.as_deref();
        check_time(t_us, i)?;
        n += 1;
        if n > max_messages {
            return Err(
                ReplayError::new(ReplayErrorKind::TooManyMessages(max_messages)).at_record(i),
            );
        }
        if index_bytes > limits.index_bytes {
            return Err(ReplayError::new(ReplayErrorKind::TapeTooLarge {
                limit: limits.index_bytes,
            })
            .at_record(last));
        }
        last = i;
        let bad = |e: mcptape_wire::error::WireError| {
            ReplayError::new(ReplayErrorKind::BadRecord(format!(
                "not a JSON-RPC 2.0 message: {e}"
            )))
            .at_record(i)
        };
        if msg.starts_with('[') {
            // A batch: noted, not served ([`SkippedBatch`]); its responses
            // close the requests they answer.
            let masked = mask_lone_surrogates(&msg);
            let items = match envelope::scan_frame_str(&masked).map_err(bad)? {
                envelope::Scanned::Batch(items) => items,
                envelope::Scanned::Single(_) => Vec::new(),
            };
            let (mut requests, mut notifications, mut responses) = (0, 0, 0);
            for env in items.iter().flatten() {
                match env.kind {
                    EnvelopeKind::Request => requests += 1,
                    EnvelopeKind::Notification => notifications += 1,
                    // Response, Error (and any kind the wire adds: counted as answers).
                    _ => responses += 1,
                }
                match (dir, env.kind, &env.id) {
                    (Direction::C2s, EnvelopeKind::Request, _) => batched_requests += 1,
                    (Direction::S2c, EnvelopeKind::Response | EnvelopeKind::Error, Some(id)) => {
                        open.remove(&pair_key(id, http));
                    }
                    _ => {}
                }
            }
            if batches.len() < MAX_BATCHES_NOTED {
                batches.push(SkippedBatch {
                    line: i + 2,
                    record: i,
                    dir,
                    elements: items.len(),
                    requests,
                    notifications,
                    responses,
                });
            } else {
                batches_more += 1;
            }
            continue;
        }
        // A lone surrogate escape (`"x\ud800y"`, valid JSON text that
        // strict parsers refuse) is masked for reading only; the
        // recorded bytes are kept as they are. A message the reader
        // already scanned has none.
        let (masked, env) = match scanned {
            Some(env) => (Cow::Borrowed(&*msg), env),
            None => {
                let masked = mask_lone_surrogates(&msg);
                let env = envelope::scan_envelope(masked.as_bytes()).map_err(bad)?;
                (masked, env)
            }
        };
        let bytes = masked.as_bytes();
        match dir {
            Direction::C2s => {
                if let Some(h) = http {
                    let has = h
                        .headers
                        .iter()
                        .any(|(n, _)| n.eq_ignore_ascii_case(protocol::header::SESSION_ID));
                    had_session.insert(h.exchange, has);
                }
                let id = match env.kind {
                    EnvelopeKind::Request => env.id.as_ref(),
                    EnvelopeKind::Notification => {
                        if let Some(r) = env.cancel_request_id(bytes) {
                            cancelled.insert(pair_key(&r, http));
                        }
                        None
                    }
                    // A client's answer to a server request.
                    _ => continue,
                };
                let name = env.method_str(bytes).ok_or_else(|| {
                    bad(mcptape_wire::error::WireError::new(
                        mcptape_wire::error::WireErrorKind::UnknownShape,
                        Some(0),
                    ))
                })?;
                let method = match methods.get(&*name) {
                    Some(m) => m.clone(),
                    None => {
                        let m = Method::from(&*name);
                        index_bytes += name.len();
                        methods.insert(m.clone());
                        m
                    }
                };
                let raw_params = env.params.clone().and_then(|r| bytes.get(r));
                let (params, new) = params_cache.get(raw_params).map_err(|e| {
                    ReplayError::new(ReplayErrorKind::BadRecord(format!(
                        "not a JSON-RPC 2.0 message: params: {e}"
                    )))
                    .at_record(i)
                })?;
                if new {
                    index_bytes += raw_params.map_or(0, <[u8]>::len) + std::mem::size_of::<Value>();
                }
                if let Some(id) = id {
                    open.insert(pair_key(id, http), client.len());
                    interim.follow(client.len(), http);
                }
                index_bytes += std::mem::size_of::<RecordedRequest>();
                let id = env
                    .id_range
                    .clone()
                    .filter(|_| id.is_some())
                    .and_then(|r| msg.get(r))
                    .map(|t| shared_text(shared, t));
                client.push(RecordedRequest {
                    record: i,
                    t_us,
                    method,
                    params,
                    id,
                });
            }
            Direction::S2c => {
                // Kept whole: the handshake results (serve reads the capabilities and
                // answers the other era's handshake from them), the `tools/list` results
                // (bench reads each tool's `readOnlyHint` from them).
                let kept = [
                    method::INITIALIZE,
                    method::SERVER_DISCOVER,
                    method::TOOLS_LIST,
                ];
                // The key of the request this replies to, by its id.
                let by_id = env.id.as_ref().map(|id| pair_key(id, http));
                let answers = |methods: &[&str]| {
                    by_id
                        .as_ref()
                        .and_then(|k| open.get(k))
                        .is_some_and(|&ci| methods.contains(&client[ci].method.as_str()))
                };
                let (is_error, v) = match (env.kind, &env.id) {
                    // A server request or notification.
                    (EnvelopeKind::Request | EnvelopeKind::Notification, _) => {
                        let progress = env.method_str(bytes).as_deref()
                            == Some(method::NOTIFICATIONS_PROGRESS);
                        let kind = (env.kind == EnvelopeKind::Request, progress);
                        index_bytes += std::mem::size_of::<Interim>();
                        note_interim(&mut interim, &client, http, t_us, &msg, kind, shared);
                        continue;
                    }
                    // The served tape: a reply with an id is scanned, not built
                    // (the replies to a handshake and to `tools/list` are).
                    (EnvelopeKind::Response | EnvelopeKind::Error, Some(_))
                        if bodies == ReplyBodies::Served && !answers(&kept) =>
                    {
                        (env.kind == EnvelopeKind::Error, null.clone())
                    }
                    _ => {
                        let m = env.message(bytes).map_err(bad)?;
                        (matches!(m, Message::Error(_)), Arc::new(message_value(m)))
                    }
                };
                let id = env.id.as_ref();
                // A null-id 4xx error not answering a handshake: the
                // server's rejection of the session the POST named (or
                // did not name).
                let mut note_rejection = |v: &Value| {
                    if let (None, Some(h)) = (id, http)
                        && let Some(status) = h.status.filter(|s| (400..500).contains(s))
                        && is_error
                    {
                        let slot = if had_session.get(&h.exchange).copied().unwrap_or(false) {
                            &mut stale_session_rejection
                        } else {
                            &mut session_rejection
                        };
                        if slot.is_none() {
                            *slot = Some(HttpRejection {
                                status,
                                body: v.clone(),
                            });
                        }
                    }
                };
                let sse = http.is_some_and(|h| {
                    h.sse_event_id.is_some()
                        || h.headers.iter().any(|(n, v)| {
                            n.eq_ignore_ascii_case("content-type")
                                && v.starts_with("text/event-stream")
                        })
                });
                let key = match (by_id, http) {
                    (Some(k), _) => k,
                    // An error with a null (or no) id in a Streamable HTTP
                    // recording answers the request its POST carried
                    // (JSON-RPC 2.0 §5: the server could not read the id):
                    // paired with the one open request of the same exchange
                    // when that is a handshake (`server/discover` rejected
                    // by a pre-2026-07-28 server, or `initialize`). For any
                    // other method it is a session rejection, which depends
                    // on the session, not the request: `serve --listen`
                    // answers those from its own session check.
                    (None, Some(h)) if is_error => {
                        let mut same: Vec<&PairKey> = open
                            .keys()
                            .filter(|k| k.exchange == Some(h.exchange))
                            .collect();
                        match (same.pop(), same.is_empty()) {
                            (Some(k), true)
                                if open.get(k).is_some_and(|&ci| {
                                    method::HANDSHAKES.contains(&client[ci].method.as_str())
                                }) =>
                            {
                                k.clone()
                            }
                            _ => {
                                note_rejection(&v);
                                continue;
                            }
                        }
                    }
                    (None, _) => {
                        note_rejection(&v);
                        continue;
                    }
                };
                if let Some(ci) = open.remove(&key) {
                    // `serve`: a read result whose contents break the text XOR blob rule is
                    // noted (replayed as recorded, warned at load).
                    if let (Some((found, more)), EnvelopeKind::Response, Some(id)) =
                        (bad_contents.as_mut(), env.kind, env.id_range.clone())
                        && client[ci].method == method::RESOURCES_READ
                        && let Some(b) = msg
                            .get(id)
                            .and_then(|id| bad_contents_in(&masked, &env, i, id, &mut shapes))
                    {
                        if found.len() < MAX_BAD_CONTENTS_NOTED {
                            found.push(b);
                        } else {
                            **more += 1;
                        }
                    }
                    let delay_us = t_us.saturating_sub(client[ci].t_us);
                    // The exchange, and its place in the two index lists.
                    index_bytes +=
                        std::mem::size_of::<Exchange>() + 2 * std::mem::size_of::<usize>();
                    exchanges.push(Exchange {
                        request: ci,
                        error_code: env.error.as_ref().map(|e| e.code),
                        reply: v,
                        reply_raw: shared_text(shared, &msg),
                        reply_id: env.id_range.clone(),
                        reply_bytes: msg.len(),
                        delay_us,
                        sse,
                        status: http.and_then(|h| h.status),
                        interim: Vec::new(),
                    });
                }
            }
        }
    }
    if index_bytes > limits.index_bytes {
        return Err(ReplayError::new(ReplayErrorKind::TapeTooLarge {
            limit: limits.index_bytes,
        })
        .at_record(last));
    }
    let (protocol_version, exit) = ending();
    if let Some((.., exit_us, exit_record)) = exit {
        check_time(exit_us, exit_record)?;
    }
    let crash = exit.and_then(|(code, signal, exit_us, _)| {
        let request = open
            .iter()
            .filter(|(k, _)| !cancelled.contains(*k))
            .map(|(_, &ci)| ci)
            .min()?;
        Some(RecordedCrash {
            request,
            code,
            signal,
            after_us: exit_us.saturating_sub(client[request].t_us),
        })
    });
    // In request order (a stable sort: usually already in order; each
    // request has at most one exchange).
    if !exchanges.is_sorted_by_key(|e| e.request) {
        exchanges.sort_by_key(|e| e.request);
    }
    if !interim.by_request.is_empty() {
        for e in &mut exchanges {
            e.interim = interim.by_request.remove(&e.request).unwrap_or_default();
        }
    }
    let (by_key, by_method) = index_exchanges(&client, &exchanges);
    Ok(Tape {
        client,
        exchanges,
        protocol_version,
        bodies,
        session_rejection,
        stale_session_rejection,
        crash,
        by_key,
        by_method,
        cursor: Mutex::new(HashMap::new()),
        pseudonyms: Mutex::new(HashMap::new()),
        batches,
        batches_more,
        batched_requests,
        index_bytes,
    })
}

/// `raw` (one JSON-RPC message) split around the value of its top-level
/// `id` member: `(before, after)`, so `before + id + after` is the message
/// with another id. `None` when `raw` is not a JSON object with an `id`.
pub fn split_at_id(raw: &str) -> Option<(&str, &str)> {
    #[derive(serde::Deserialize)]
    struct IdProbe<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    // A derived struct also accepts a JSON array (fields by position): objects only.
    if !raw.trim_start().starts_with('{') {
        return None;
    }
    // Lone surrogate escapes masked (same length): a recorded reply holding
    // one is still split, and its own bytes are kept.
    let masked = mask_lone_surrogates(raw);
    let probe: IdProbe<'_> = serde_json::from_str(&masked).ok()?;
    let old = probe.id?.get();
    // `old` borrows from `masked`: its offset is the distance between the two.
    let start = (old.as_ptr() as usize).checked_sub(masked.as_ptr() as usize)?;
    let end = start.checked_add(old.len())?;
    Some((raw.get(..start)?, raw.get(end..)?))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::ReplayErrorKind;

    /// Text without `\u` is handed back borrowed (the fast path); a lone
    /// surrogate escape is masked in place, a high+low pair and an escaped
    /// backslash before `u` are not.
    #[test]
    fn lone_surrogates_are_masked_and_text_without_unicode_escapes_is_borrowed() {
        let plain = r#"{"a":"no escapes here \n \" \\"}"#;
        assert!(matches!(
            mask_lone_surrogates(plain),
            std::borrow::Cow::Borrowed(t) if t == plain
        ));
        assert_eq!(
            mask_lone_surrogates(r#"{"a":"x\ud800y"}"#),
            r#"{"a":"x\ufffdy"}"#
        );
        let pair = r#"{"a":"\ud83d\ude00"}"#;
        assert_eq!(mask_lone_surrogates(pair), pair);
        let escaped = r#"{"a":"\\ud800"}"#;
        assert_eq!(mask_lone_surrogates(escaped), escaped);
    }

    /// The transcripts of `corpus/transcripts` (at least 9), sorted.
    pub(crate) fn corpus_transcripts() -> Vec<std::path::PathBuf> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/transcripts");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        paths.sort();
        assert!(paths.len() >= 9, "corpus transcripts: {paths:?}");
        paths
    }

    /// The transcript at `path` as bytes, its full tape
    /// ([`Tape::from_transcript`]) and its served tape ([`Tape::served`]
    /// over the bytes, [`ReplyBodies::Served`]).
    pub(crate) fn full_and_served(path: &std::path::Path) -> (Arc<TapeBytes>, Tape, Tape) {
        let text = Arc::new(TapeBytes::from(std::fs::read(path).unwrap()));
        let full = mcptape_transcript::reader::read(text.as_bytes()).unwrap();
        let full = Tape::from_transcript(&full).unwrap();
        let served = Tape::served(&text).unwrap();
        assert!(served.dropped.is_none());
        (text, full, served.tape)
    }

    /// Two recorded `tools/call`s whose secrets the recorder redacted to
    /// different pseudonyms, answered differently: a client's first secret
    /// binds the first, its second secret the second, and neither then
    /// matches the other's place; `[redacted]` inside a string matches any
    /// text there.
    #[test]
    fn redacted_values_match_any_value_and_pseudonyms_keep_two_secrets_apart() {
        let text = [
            r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-12-02T00:00:00Z"}"#,
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"pw":"[redacted:1]"}}},"redactedPointers":["/params/arguments/pw"]}"#,
            r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"who":"alice"}}}"#,
            r#"{"tUs":3,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"login","arguments":{"pw":"[redacted:2]"}}},"redactedPointers":["/params/arguments/pw"]}"#,
            r#"{"tUs":4,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"who":"bob"}}}"#,
            r#"{"tUs":5,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"say","arguments":{"q":"hi [redacted]!"}}},"redactedPointers":["/params/arguments/q"]}"#,
            r#"{"tUs":6,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":3,"result":{"said":true}}}"#,
            "",
        ]
        .join("\n");
        let t = mcptape_transcript::reader::read(text.as_bytes()).unwrap();
        let tape = Tape::from_transcript(&t).unwrap();
        let who = |pw: &str| match tape.lookup(
            "tools/call",
            &serde_json::json!({"name":"login","arguments":{"pw":pw}}),
        ) {
            Match::Exact(e) => e.reply["result"]["who"].as_str().unwrap().to_owned(),
            other => panic!("{pw}: {other:?}"),
        };
        assert_eq!(who("alice-secret"), "alice");
        assert_eq!(who("bob-secret"), "bob");
        assert_eq!(who("alice-secret"), "alice");
        assert_eq!(who("bob-secret"), "bob");
        // A third secret: both pseudonyms are taken.
        assert!(matches!(
            tape.lookup(
                "tools/call",
                &serde_json::json!({"name":"login","arguments":{"pw":"eve"}})
            ),
            Match::NoParams
        ));
        let say = |q: &str| {
            tape.lookup(
                "tools/call",
                &serde_json::json!({"name":"say","arguments":{"q":q}}),
            )
        };
        assert!(matches!(say("hi s3cret!"), Match::Exact(_)));
        assert!(matches!(say("hi !"), Match::Exact(_)));
        assert!(matches!(say("hello s3cret!"), Match::NoParams));
        assert!(matches!(say("hi s3cret"), Match::NoParams));
    }

    fn tiny() -> Transcript {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tiny-two-reads.jsonl"
        ))
        .unwrap();
        mcptape_transcript::reader::read(&bytes).unwrap()
    }

    /// A stdio transcript of `lines` (records after the header, each ended by `\n`).
    fn transcript_of(lines: &[&str]) -> String {
        let mut text = String::from(
            r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-12-03T00:00:00Z"}"#,
        );
        for l in lines {
            text.push('\n');
            text.push_str(l);
        }
        text.push('\n');
        text
    }

    /// A served tape's transcript from `lines` (records after a stdio header).
    fn served_of(lines: &[&str]) -> Tape {
        Tape::served(&Arc::new(TapeBytes::from(transcript_of(lines))))
            .unwrap()
            .tape
    }

    /// Fresh-user trial: an answer stamped `tUs` u64::MAX made `serve` (latency `recorded`)
    /// schedule a delay from it. Every path that builds a tape refuses a message or exit
    /// record one past `MAX_RECORDED_T_US`, naming the record and the limit, and builds
    /// the tape with every stamp at the limit.
    #[test]
    fn regression_tape_refuses_a_time_one_past_max_recorded_t_us_and_builds_at_it() {
        let max = mcptape_transcript::MAX_RECORDED_T_US;
        let lines = |reply_us: u64, exit_us: u64| {
            vec![
                r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#.to_owned(),
                format!(r#"{{"tUs":{reply_us},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"result":{{"tools":[]}}}}}}"#),
                format!(r#"{{"tUs":{exit_us},"kind":"exit","code":0}}"#),
            ]
        };
        // Each path's tape of `lines`, or its error as (record, t_us, limit, message).
        let build = |lines: Vec<String>| {
            let text = transcript_of(&lines.iter().map(String::as_str).collect::<Vec<_>>());
            let served = Tape::served(&Arc::new(TapeBytes::from(text.clone()))).map(|t| t.tape);
            let strict =
                Tape::from_transcript(&mcptape_transcript::reader::read(text.as_bytes()).unwrap());
            let borrowed = Tape::from_transcript_ref(
                &mcptape_transcript::reader::read_borrowed(
                    text.as_bytes(),
                    mcptape_transcript::reader::ReadOptions::strict(),
                )
                .unwrap(),
                ReplyBodies::Kept,
            );
            [served, strict, borrowed].map(|r| {
                r.map_err(|e| match e.kind {
                    ReplayErrorKind::TimeBeyondLimit { t_us, limit } => {
                        (e.record, t_us, limit, e.to_string())
                    }
                    ref other => panic!("{other:?}"),
                })
            })
        };
        for t in build(lines(max, max)) {
            let t = t.unwrap();
            assert_eq!(t.exchanges[0].delay_us, max - 1);
        }
        for e in build(lines(max + 1, max)) {
            let (record, t_us, limit, text) = e.unwrap_err();
            assert_eq!((record, t_us, limit), (Some(1), max + 1, max));
            assert_eq!(
                text,
                "record 2 (line 3): tUs 2592000000001 µs is beyond MAX_RECORDED_T_US \
                 (2592000000000 µs, 30 days): not a recording time; fix the stamp \
                 (mcptape check: record-time-beyond-limit)"
            );
        }
        for e in build(lines(2, max + 1)) {
            assert_eq!(e.unwrap_err().0, Some(2));
        }
        for e in build(lines(u64::MAX, 3)) {
            assert_eq!(e.unwrap_err().1, u64::MAX);
        }
    }

    /// Fresh-user report: a JSON-RPC batch line made `serve` refuse the whole transcript. The
    /// tape loads (served and strict paths alike): each batch is noted (line, record, sender,
    /// elements, requests), its requests are not served, and a request answered inside a
    /// server batch is closed (not taken for one a crash left unanswered); the single
    /// exchanges around it are served.
    #[test]
    fn regression_serve_batch_line_is_noted_and_not_served_not_a_refusal() {
        let lines = [
            r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://1"}}}"#,
            r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}}"#,
            r#"{"tUs":3,"kind":"message","dir":"c2s","msg":[{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://2"}},{"jsonrpc":"2.0","method":"notifications/x"}]}"#,
            r#"{"tUs":4,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"method":"tools/list"}}"#,
            r#"{"tUs":5,"kind":"message","dir":"s2c","msg":[{"jsonrpc":"2.0","id":2,"result":{"contents":[]}},{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}]}"#,
            r#"{"tUs":6,"kind":"exit","code":0}"#,
        ];
        let text = transcript_of(&lines);
        let served = Tape::served(&Arc::new(TapeBytes::from(text.clone())))
            .unwrap()
            .tape;
        let strict =
            Tape::from_transcript(&mcptape_transcript::reader::read(text.as_bytes()).unwrap())
                .unwrap();
        for tape in [&served, &strict] {
            assert_eq!(
                tape.batches,
                [
                    SkippedBatch {
                        line: 4,
                        record: 2,
                        dir: Direction::C2s,
                        elements: 2,
                        requests: 1,
                        notifications: 1,
                        responses: 0,
                    },
                    SkippedBatch {
                        line: 6,
                        record: 4,
                        dir: Direction::S2c,
                        elements: 2,
                        requests: 0,
                        notifications: 0,
                        responses: 2,
                    },
                ]
            );
            assert_eq!(tape.batches_more, 0);
            assert_eq!(tape.batched_requests, 1);
            // What was skipped, by kind (a server batch of answers said `0 requests`).
            assert_eq!(
                tape.batches[0].to_string(),
                "line 4: record 3 is a JSON-RPC batch of 2 messages from the client (1 request, \
                 1 notification): not served (batches are in MCP 2025-03-26 only; serve answers \
                 one message at a time)"
            );
            assert_eq!(
                tape.batches[1].to_string(),
                "line 6: record 5 is a JSON-RPC batch of 2 messages from the server (2 responses): \
                 not served (batches are in MCP 2025-03-26 only; serve answers one message at a time)"
            );
            // Served: the single read; not the batch's read; tools/list was asked alone
            // but answered in a batch: recorded, not replayable, and no crash.
            let methods: Vec<&str> = tape.client.iter().map(|r| r.method.as_str()).collect();
            assert_eq!(methods, ["resources/read", "tools/list"]);
            assert_eq!(tape.exchanges.len(), 1);
            assert_eq!(tape.request(&tape.exchanges[0]).params["uri"], "a://1");
            assert!(tape.crash.is_none());
        }
    }

    /// More batches than [`MAX_BATCHES_NOTED`]: the first ones kept, the rest counted.
    #[test]
    fn regression_serve_batch_notes_are_capped_at_the_limit_and_one_past() {
        let batch = r#"{"tUs":1,"kind":"message","dir":"c2s","msg":[{"jsonrpc":"2.0","method":"notifications/x"}]}"#;
        for (n, kept, more) in [
            (MAX_BATCHES_NOTED, MAX_BATCHES_NOTED, 0),
            (MAX_BATCHES_NOTED + 1, MAX_BATCHES_NOTED, 1),
        ] {
            let tape = served_of(&vec![batch; n]);
            assert_eq!((tape.batches.len(), tape.batches_more), (kept, more));
            // Notifications only: no request was batched.
            assert_eq!(tape.batched_requests, 0);
            assert_eq!(tape.batches[kept - 1].line, kept + 1);
        }
    }

    /// Fresh-user report: `serve` replayed a recorded read result whose contents entry had
    /// both `text` and `blob`, or neither, without a word. The served tape notes each such
    /// exchange once (its reply's line, id, first bad entry and uri, and how many more), keeps
    /// the reply byte-exact, and notes nothing for good entries, an error reply or another
    /// method.
    #[test]
    fn regression_serve_notes_read_results_with_both_or_neither_text_and_blob() {
        let req = |id: u32, uri: &str| {
            format!(
                r#"{{"tUs":1,"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}}}"#
            )
        };
        let reply = |id: u32, result: &str| {
            format!(
                r#"{{"tUs":2,"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":{id},"result":{result}}}}}"#
            )
        };
        let both = reply(
            7,
            r#"{"contents":[{"uri":"demo://x","text":"hi","blob":"aGk="}]}"#,
        );
        let lines = [
            req(7, "demo://x"),
            both.clone(),
            req(8, "demo://y"),
            // Entry 0 is fine; 1 has neither, 2 both.
            reply(
                8,
                r#"{"contents":[{"uri":"demo://y","text":"a"},{"uri":"demo://y/1"},{"uri":"demo://y/2","text":"b","blob":"Yg=="}]}"#,
            ),
            req(9, "demo://z"),
            reply(9, r#"{"contents":[{"uri":"demo://z","blob":"aGk="}]}"#),
            req(10, "demo://w"),
            r#"{"tUs":3,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"nope"}}}"#.to_owned(),
            r#"{"tUs":4,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"t"}}}"#.to_owned(),
            reply(11, r#"{"contents":[{"uri":"demo://t"}]}"#),
        ];
        let mut text = String::from(
            r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-12-03T00:00:00Z"}"#,
        );
        for l in &lines {
            text.push('\n');
            text.push_str(l);
        }
        text.push('\n');
        let served = Tape::served(&Arc::new(TapeBytes::from(text))).unwrap();
        let want = vec![
            BadContents {
                line: 3,
                record: 1,
                id: "7".into(),
                entry: 0,
                uri: Some("demo://x".into()),
                fault: EntryFault::Both,
                more: 0,
            },
            BadContents {
                line: 5,
                record: 3,
                id: "8".into(),
                entry: 1,
                uri: Some("demo://y/1".into()),
                fault: EntryFault::Neither,
                more: 1,
            },
        ];
        assert_eq!(served.bad_contents, want);
        assert_eq!(
            served.bad_contents[0].to_string(),
            "line 3: the recorded reply to resources/read id 7 has a contents entry with both text \
             and blob (entry 0, uri \"demo://x\", at /result/contents/0): replayed as recorded (an \
             entry is TextResourceContents or BlobResourceContents)"
        );
        assert!(
            served.bad_contents[1]
                .to_string()
                .contains("neither text nor blob (entry 1, uri \"demo://y/1\", at /result/contents/1) and 1 more such entries: replayed as recorded"),
            "{}",
            served.bad_contents[1]
        );
        // Replayed as recorded: the reply's bytes are the line's.
        let e = &served.tape.exchanges[0];
        assert!(
            both.contains(e.reply_raw.as_str()),
            "{}",
            e.reply_raw.as_str()
        );
        assert_eq!(served.tape.exchanges.len(), 5);
    }

    /// The [`BadContents`] of `contents` as serve's start-up finds it: in the read result
    /// `{"jsonrpc":"2.0","id":1,"result":{"contents":…}}`, through the wire's shape-only scan.
    fn bad_contents_at_load(contents: &str) -> Option<BadContents> {
        let msg = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"contents":{contents}}}}}"#);
        let env = envelope::scan_envelope_str(&msg).unwrap();
        bad_contents_in(&msg, &env, 0, "1", &mut Vec::new())
    }

    /// The start-up's shape-only scan never hides what the full scanner finds: escaped keys,
    /// quotes and backslashes in strings, nested objects and arrays, and non-object entries
    /// included (the shape cases themselves: the wire's
    /// `scan_contents_shape_text_xor_blob_agrees_with_scan_contents_issues`).
    #[test]
    fn shape_scan_at_load_agrees_with_the_contents_scanner() {
        let cases = [
            (r#"[{"uri":"a","text":"x"}]"#, None),
            (
                r#"[{"uri":"a","blob":"aGk="},{"uri":"b","text":"\"text\":\\"}]"#,
                None,
            ),
            (
                r#"[{"uri":"a","text":"x","_meta":{"blob":1,"text":[2]}}]"#,
                None,
            ),
            (r#"[]"#, None),
            (
                r#"[{"uri":"a","text":"x","blob":"aGk="}]"#,
                Some(EntryFault::Both),
            ),
            (r#"[{"uri":"a"}]"#, Some(EntryFault::Neither)),
            (
                r#"[{"uri":"a","_meta":{"text":"x"}}]"#,
                Some(EntryFault::Neither),
            ),
            // An escaped key is the same key to the reader.
            (r#"[{"uri":"a","te\u0078t":"x"}]"#, None),
            (
                r#"[{"uri":"a\\","text":"x\\\""}, "not an object", [1]]"#,
                Some(EntryFault::NotAnObject),
            ),
        ];
        for (c, verdict) in cases {
            assert_eq!(bad_contents_of(c, 0, "1").map(|b| b.fault), verdict, "{c}");
            assert_eq!(bad_contents_at_load(c), bad_contents_of(c, 0, "1"), "{c}");
        }
    }

    #[test]
    fn regression_serve_warns_about_text_null_and_entries_that_are_not_objects() {
        let cases = [
            (
                r#"[{"uri":"a","text":null}]"#,
                EntryFault::NotAString("text"),
                0,
            ),
            (
                r#"[{"uri":"a","blob" : 7}]"#,
                EntryFault::NotAString("blob"),
                0,
            ),
            (r#"[42]"#, EntryFault::NotAnObject, 0),
            (
                r#"[{"uri":"a","text":"x"}, null]"#,
                EntryFault::NotAnObject,
                1,
            ),
        ];
        for (c, fault, entry) in cases {
            let b = bad_contents_at_load(c).unwrap_or_else(|| panic!("{c}"));
            assert_eq!((b.fault, b.entry), (fault, entry), "{c}");
        }
        let b = bad_contents_of(r#"[{"uri":"a","text":null}]"#, 0, "1").unwrap();
        assert!(
            b.to_string()
                .contains("has a contents entry with a text that is not a string (entry 0"),
            "{b}"
        );
    }

    /// A transcript of `n` read exchanges whose replies all have an entry with both text and
    /// blob, served.
    fn served_with_bad_replies(n: usize) -> ServedTape {
        let mut text = String::from(
            r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{},"startedAt":"2026-12-03T00:00:00Z"}"#,
        );
        for id in 0..n {
            text.push_str(&format!(
                "\n{{\"tUs\":1,\"kind\":\"message\",\"dir\":\"c2s\",\"msg\":{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/read\",\"params\":{{\"uri\":\"demo://x\"}}}}}}"
            ));
            text.push_str(&format!(
                "\n{{\"tUs\":2,\"kind\":\"message\",\"dir\":\"s2c\",\"msg\":{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"contents\":[{{\"uri\":\"demo://x\",\"text\":\"a\",\"blob\":\"YQ==\"}}]}}}}}}"
            ));
        }
        text.push('\n');
        Tape::served(&Arc::new(TapeBytes::from(text))).unwrap()
    }

    #[test]
    fn regression_serve_bad_contents_warnings_are_capped_at_the_limit_and_one_past() {
        let at = served_with_bad_replies(MAX_BAD_CONTENTS_NOTED);
        assert_eq!(
            (at.bad_contents.len(), at.bad_contents_more),
            (MAX_BAD_CONTENTS_NOTED, 0)
        );
        let past = served_with_bad_replies(MAX_BAD_CONTENTS_NOTED + 1);
        assert_eq!(
            (past.bad_contents.len(), past.bad_contents_more),
            (MAX_BAD_CONTENTS_NOTED, 1)
        );
        // The first ones are kept, in transcript order.
        assert_eq!(past.bad_contents[0].id, "0");
        assert_eq!(past.bad_contents[MAX_BAD_CONTENTS_NOTED - 1].id, "9");
    }

    /// Replies pair with their requests by the id's JSON value ([`PairKey`]):
    /// `1` and `"1"` apart, `"\u0041"` with `"A"`, an integer past `i64`
    /// by its digits, whatever order the replies come in; each exchange's
    /// request is the one its reply answered.
    #[test]
    fn served_tape_pairs_replies_by_id_value_integer_string_escaped_and_past_i64() {
        let req = |t: u64, id: &str, uri: &str| {
            format!(
                r#"{{"tUs":{t},"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}}}"#
            )
        };
        let reply = |t: u64, id: &str| {
            format!(
                r#"{{"tUs":{t},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":{id},"result":{{}}}}}}"#
            )
        };
        let lines = [
            req(10, "1", "a://int"),
            req(20, r#""1""#, "a://string"),
            req(30, r#""\u0041""#, "a://escaped"),
            req(40, "9223372036854775808", "a://past-i64"),
            reply(1_040, "9223372036854775808"),
            reply(2_030, r#""A""#),
            reply(3_020, r#""1""#),
            reply(4_010, "1"),
        ];
        let tape = served_of(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let got: Vec<(String, String, u64)> = tape
            .exchanges
            .iter()
            .map(|e| {
                let r = tape.request(e);
                let uri = r.params["uri"].as_str().unwrap().to_owned();
                (r.id.as_ref().unwrap().to_string(), uri, e.delay_us)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("1".to_owned(), "a://int".to_owned(), 4_000),
                (r#""1""#.to_owned(), "a://string".to_owned(), 3_000),
                (r#""\u0041""#.to_owned(), "a://escaped".to_owned(), 2_000),
                (
                    "9223372036854775808".to_owned(),
                    "a://past-i64".to_owned(),
                    1_000
                ),
            ]
        );
        // Every request shares the one `resources/read` text.
        let m = &tape.client[0].method;
        assert!(tape.client.iter().all(|r| Arc::ptr_eq(&r.method.0, &m.0)));
        assert_eq!(m, "resources/read");
    }

    /// The union of two tapes keeps each exchange pointing at its own
    /// request (the second tape's indexes moved past the first's client
    /// messages) and looks up both tapes' exchanges, repeats cycling in order.
    #[test]
    fn union_keeps_each_exchange_pointing_at_its_own_request() {
        let read = |t: u64, id: u64, uri: &str, text: &str| {
            [
                format!(
                    r#"{{"tUs":{t},"kind":"message","dir":"c2s","msg":{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}}}"#
                ),
                format!(
                    r#"{{"tUs":{},"kind":"message","dir":"s2c","msg":{{"jsonrpc":"2.0","id":{id},"result":{{"t":"{text}"}}}}}}"#,
                    t + 5
                ),
            ]
        };
        let a = [read(1, 1, "a://x", "first x"), read(10, 2, "a://y", "y")].concat();
        let b = [read(1, 1, "a://x", "second x")].concat();
        let (a, b) = (
            served_of(&a.iter().map(String::as_str).collect::<Vec<_>>()),
            served_of(&b.iter().map(String::as_str).collect::<Vec<_>>()),
        );
        let both = Tape::union(vec![a, b]).unwrap();
        assert_eq!(both.exchanges.len(), 3);
        let requests: Vec<(usize, u64)> = both
            .exchanges
            .iter()
            .map(|e| (e.request, both.request(e).t_us))
            .collect();
        assert_eq!(requests, [(0, 1), (1, 10), (2, 1)]);
        let text = |m: Match<'_>| match m {
            Match::Exact(e) => reply_value(&e.reply_raw).unwrap()["result"]["t"].clone(),
            other => panic!("{other:?}"),
        };
        let x = serde_json::json!({"uri": "a://x"});
        assert_eq!(text(both.lookup("resources/read", &x)), "first x");
        assert_eq!(text(both.lookup("resources/read", &x)), "second x");
        assert_eq!(text(both.lookup("resources/read", &x)), "first x");
    }

    #[test]
    fn message_limit_at_and_past() {
        // tiny-two-reads.jsonl holds 9 messages.
        let t = tiny();
        let tape = Tape::from_transcript_limited(&t, 9).unwrap();
        assert_eq!(tape.exchanges.len(), 4);
        let e = Tape::from_transcript_limited(&t, 8).unwrap_err();
        assert!(matches!(e.kind, ReplayErrorKind::TooManyMessages(8)));
        assert_eq!(e.record, Some(8));
    }

    #[test]
    fn pairs_replies_by_id_and_records_their_delay() {
        let tape = Tape::from_transcript(&tiny()).unwrap();
        let delays: Vec<u64> = tape.exchanges.iter().map(|e| e.delay_us).collect();
        assert_eq!(delays, vec![2_000, 12_000, 40_000, 1_000]);
        assert_eq!(tape.reads().len(), 3);
        assert_eq!(tape.handshake().unwrap().method, "initialize");
        // `_meta` is not part of the match; key order is not either.
        assert!(matches!(
            tape.lookup(
                "resources/read",
                &serde_json::json!({"_meta": {"x": 1}, "uri": "file:///project/img/b.png"})
            ),
            Match::Exact(_)
        ));
        assert!(matches!(
            tape.lookup("initialize", &serde_json::json!({"other": true})),
            Match::ByMethod(_)
        ));
        assert!(matches!(
            tape.lookup("resources/read", &serde_json::json!({"uri": "file:///x"})),
            Match::NoParams
        ));
        assert!(matches!(
            tape.lookup("tools/list", &Value::Null),
            Match::NoMethod
        ));
    }

    /// A transcript whose one reply has a member outside JSON-RPC 2.0
    /// (`"extra": true`, record 1).
    const EXTRA_MEMBER_REPLY: &str = concat!(
        r#"{"mcptapeTranscript":1,"mcptapeVersion":"0.1.0","transport":"stdio","server":{"command":["x"]},"startedAt":"2026-11-30T00:00:00.000Z"}"#,
        "\n",
        r#"{"tUs":1,"kind":"message","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        "\n",
        r#"{"tUs":2,"kind":"message","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{},"extra":true}}"#,
        "\n",
    );

    /// The revision comes from wire's one detector: tiny-two-reads.jsonl has no
    /// `protocol` record and no header version, but its `initialize` result says.
    #[test]
    fn tape_revision_comes_from_the_initialize_result() {
        let tape = Tape::from_transcript(&tiny()).unwrap();
        assert_eq!(tape.protocol_version.as_deref(), Some("2025-11-25"));
    }

    /// Messages are read with the strict JSON-RPC model: a member outside
    /// JSON-RPC 2.0 is a bad record, reported with its record index.
    #[test]
    fn tape_rejects_a_non_json_rpc_message_with_its_record_index() {
        let text = EXTRA_MEMBER_REPLY;
        let t = mcptape_transcript::reader::read(text.as_bytes()).unwrap();
        let e = Tape::from_transcript(&t).unwrap_err();
        assert!(
            matches!(&e.kind, ReplayErrorKind::BadRecord(m) if m.contains("extra")),
            "{e:?}"
        );
        assert_eq!(e.record, Some(1));
    }

    /// What `bench` reads of a tape, as comparable text: every client
    /// message, the handshake, the reads, the revision, and per exchange the
    /// request, delay, transport details and the reply's error code, if any.
    fn client_view(t: &Tape) -> String {
        let exchanges: Vec<String> = t
            .exchanges
            .iter()
            .map(|e| {
                format!(
                    "{:?} {} {} {} {:?} err={:?}",
                    t.request(e),
                    e.delay_us,
                    e.reply_bytes,
                    e.sse,
                    e.status,
                    e.error_code,
                )
            })
            .collect();
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{exchanges:#?}",
            t.client,
            t.handshake(),
            t.reads(),
            t.protocol_version,
            t.session_rejection,
            t.stale_session_rejection,
        )
    }

    /// With bodies kept, the borrowed read gives the full tape itself
    /// (requests, handshake, pairing, delays, replies byte-exact), on every
    /// transcript of the corpus.
    #[test]
    fn borrowed_read_with_bodies_kept_is_the_full_tape_on_every_corpus_transcript() {
        for path in &corpus_transcripts() {
            let bytes = std::fs::read(path).unwrap();
            let full = mcptape_transcript::reader::read(&bytes).unwrap();
            let full = Tape::from_transcript(&full).unwrap();
            let borrowed = mcptape_transcript::reader::read_borrowed(
                &bytes,
                mcptape_transcript::reader::ReadOptions::strict(),
            )
            .unwrap();
            let kept = Tape::from_transcript_ref(&borrowed, ReplyBodies::Kept).unwrap();
            let name = path.display();
            assert!(!full.client.is_empty(), "{name}");
            assert!(!full.reads().is_empty(), "{name}");
            assert_eq!(full.bodies, ReplyBodies::Kept);
            assert_eq!(kept.exchanges.len(), full.exchanges.len(), "{name}");
            for (k, f) in kept.exchanges.iter().zip(&full.exchanges) {
                assert_eq!(k.reply, f.reply, "{name}");
                assert_eq!(k.reply_raw, f.reply_raw, "{name}");
            }
            assert_eq!(client_view(&kept), client_view(&full), "{name}");
        }
    }

    /// The served tape ([`ReplyBodies::Served`], built over the file's own
    /// text) holds, on every corpus transcript, the full tape's requests and
    /// every reply byte-exact, each a range of the file's text (no copy);
    /// as values, the replies to a handshake and to `tools/list` and a
    /// null-id error whole, any other reply `null` (the read-only tools bench
    /// finds are the full tape's); every error's code as the full tape's;
    /// each reply's id range holds its recorded id.
    #[test]
    fn served_tape_shares_the_file_and_keeps_every_reply_byte_exact_on_every_corpus_transcript() {
        let paths = corpus_transcripts();
        let (mut bodies_not_built, mut errors) = (0, 0);
        for path in &paths {
            let name = path.display();
            let (text, full, served) = full_and_served(path);
            assert_eq!(served.bodies, ReplyBodies::Served);
            assert_eq!(client_view(&served), client_view(&full), "{name}");
            assert_eq!(served.read_only_tools(), full.read_only_tools(), "{name}");
            assert_eq!(served.exchanges.len(), full.exchanges.len(), "{name}");
            let all = text.as_bytes();
            let file = all.as_ptr() as usize..all.as_ptr() as usize + all.len();
            for (s, f) in served.exchanges.iter().zip(&full.exchanges) {
                assert_eq!(s.reply_raw, f.reply_raw, "{name}");
                assert_eq!(s.reply_bytes, f.reply_bytes, "{name}");
                // The id's range, found by the one reader, holds the recorded id.
                if let Some(at) = s.reply_id.clone() {
                    assert_eq!(
                        &s.reply_raw.bytes()[at],
                        f.reply["id"].to_string().as_bytes(),
                        "{name}"
                    );
                } else {
                    assert!(f.reply["id"].is_null(), "{name}");
                }
                assert!(
                    file.contains(&(s.reply_raw.as_ptr() as usize)),
                    "{name}: a copy"
                );
                // Every error's code, in both tapes (what serve and bench read of one).
                let code = f.reply.pointer("/error/code").and_then(Value::as_i64);
                assert_eq!((s.error_code, f.error_code), (code, code), "{name}");
                errors += usize::from(code.is_some());
                // Whole: what serve reads (handshakes, a null-id error) and
                // what bench reads (`tools/list`'s `readOnlyHint`).
                let whole = (code.is_some() && s.reply_id.is_none())
                    || [
                        method::INITIALIZE,
                        method::SERVER_DISCOVER,
                        method::TOOLS_LIST,
                    ]
                    .contains(&full.request(f).method.as_str());
                if whole {
                    assert_eq!(s.reply, f.reply, "{name}");
                } else {
                    assert_eq!(*s.reply, Value::Null, "{name}");
                    assert_eq!(
                        reply_value(&s.reply_raw).as_ref(),
                        Some(&*f.reply),
                        "{name}"
                    );
                    bodies_not_built += 1;
                }
            }
            let rejection = |t: &Tape| {
                let r = |r: &Option<HttpRejection>| r.as_ref().map(|r| (r.status, r.body.clone()));
                (r(&t.session_rejection), r(&t.stale_session_rejection))
            };
            assert_eq!(rejection(&served), rejection(&full), "{name}");
        }
        assert!(bodies_not_built > 0);
        assert!(errors > 0);
    }

    /// The served tape's index is bounded ([`MAX_TAPE_INDEX_BYTES`]): a
    /// transcript whose index takes exactly the limit is served, one byte
    /// less is refused with [`ReplayErrorKind::TapeTooLarge`] at the message
    /// that took it past (the last one here).
    #[test]
    fn served_tape_over_the_index_limit_is_refused_at_the_limit_and_one_past() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tiny-two-reads.jsonl"
        );
        let bytes = Arc::new(TapeBytes::from(std::fs::read(path).unwrap()));
        let need = Tape::served(&bytes).unwrap().tape.index_bytes();
        // 4 exchanges and 5 client messages: at least their structs.
        assert!(
            need > 4 * std::mem::size_of::<Exchange>() + 5 * std::mem::size_of::<RecordedRequest>(),
            "{need}"
        );
        let at = Tape::served_limited(&bytes, need).unwrap();
        assert_eq!(at.tape.index_bytes(), need);
        assert_eq!(at.tape.exchanges.len(), 4);
        let e = Tape::served_limited(&bytes, need - 1).unwrap_err();
        assert!(
            matches!(e.kind, ReplayErrorKind::TapeTooLarge { limit } if limit == need - 1),
            "{e:?}"
        );
        assert_eq!(e.record, Some(8));
        assert!(e.to_string().contains("MAX_TAPE_INDEX_BYTES"), "{e}");
    }

    /// tests/data/tiny-two-reads.jsonl (its path) mapped into memory
    /// ([`TapeBytes::of_file`] past its threshold, here 0).
    fn mapped_tiny_two_reads() -> (&'static str, Arc<TapeBytes>) {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tiny-two-reads.jsonl"
        );
        let file = std::fs::File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        let mapped = TapeBytes::of_file_mapped_from(file, len, 0).unwrap();
        (path, Arc::new(mapped))
    }

    /// A transcript mapped into memory ([`TapeBytes::of_file`] past its
    /// threshold, here 0) is served like one read: the same requests and
    /// replies, each reply a range of the map.
    #[test]
    fn served_tape_of_a_mapped_file_keeps_every_reply_as_a_range_of_the_map() {
        let (path, mapped) = mapped_tiny_two_reads();
        assert!(mapped.is_mapped(), "{mapped:?}");
        let read = Arc::new(TapeBytes::from(std::fs::read(path).unwrap()));
        assert!(!read.is_mapped());
        let (m, r) = (
            Tape::served(&mapped).unwrap().tape,
            Tape::served(&read).unwrap().tape,
        );
        assert_eq!(client_view(&m), client_view(&r));
        let map = mapped.as_bytes().as_ptr_range();
        for (a, b) in m.exchanges.iter().zip(&r.exchanges) {
            assert_eq!(a.reply_raw, b.reply_raw);
            assert_eq!(a.reply_id, b.reply_id);
            assert!(map.contains(&a.reply_raw.bytes().as_ptr()), "a copy");
        }
    }

    /// The resident size in kB (`Rss:` of /proc/self/smaps) of this process's
    /// mapping holding address `at`.
    #[cfg(target_os = "linux")]
    fn mapping_rss_kb(at: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = head.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = (a..b).contains(&at);
            } else if inside && let Some(kb) = line.strip_prefix("Rss:") {
                return kb.trim().trim_end_matches("kB").trim().parse().unwrap();
            }
        }
        panic!("no mapping holds {at:#x}");
    }

    /// `bench`'s client keeps a served tape of a mapped transcript but never
    /// reads a reply's bytes: [`TapeBytes::release`] leaves none of the
    /// map's pages resident (the pass left the whole file resident: it is
    /// under the 8 MiB release step), and the replies read afterwards are
    /// still byte-exact (faulted in again from the file).
    #[cfg(target_os = "linux")]
    #[test]
    fn regression_bench_client_keeps_no_page_of_the_recorded_replies() {
        let (path, mapped) = mapped_tiny_two_reads();
        let at = mapped.as_bytes().as_ptr() as usize;
        let tape = Tape::served(&mapped).unwrap().tape;
        assert_ne!(mapping_rss_kb(at), 0, "the pass read the whole file");
        mapped.release();
        assert_eq!(mapping_rss_kb(at), 0);
        let read = Arc::new(TapeBytes::from(std::fs::read(path).unwrap()));
        let want = Tape::served(&read).unwrap().tape;
        assert_eq!(tape.exchanges.len(), want.exchanges.len());
        assert_eq!(tape.exchanges.len(), 4);
        for (a, b) in tape.exchanges.iter().zip(&want.exchanges) {
            assert_eq!(a.reply_raw, b.reply_raw);
        }
    }

    /// The served tape's reader is the transcript reader's: a cut last line
    /// is dropped with the same note, a bad line in the middle is refused
    /// at its line.
    #[test]
    fn served_tape_drops_a_cut_last_line_and_refuses_a_bad_one_like_the_reader() {
        use mcptape_transcript::reader::{ErrorKind, ReadOptions, read_borrowed};
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tiny-two-reads.jsonl"
        );
        let whole = std::fs::read(path).unwrap();
        let cut = whole[..whole.len() - 20].to_vec();
        let served = Tape::served(&Arc::new(TapeBytes::from(cut.clone()))).unwrap();
        let read = read_borrowed(&cut, ReadOptions::strict()).unwrap();
        let d = served.dropped.as_ref().unwrap();
        let want = read.dropped.as_ref().unwrap();
        assert_eq!(
            (d.offset, d.bytes, d.line, &d.reason),
            (want.offset, want.bytes, want.line, &want.reason)
        );
        assert_eq!(served.tape.exchanges.len(), 3);
        let mut bad = whole.clone();
        let second_line = memchr::memchr(b'\n', &bad).unwrap() + 1;
        bad[second_line] = b'x';
        let e = Tape::served(&Arc::new(TapeBytes::from(bad))).unwrap_err();
        match e.kind {
            ReplayErrorKind::Transcript(t) => {
                assert_eq!((t.line, t.offset), (2, second_line));
                assert!(matches!(t.kind, ErrorKind::Record { .. }), "{t:?}");
            }
            other => panic!("{other:?}"),
        }
        let e = Tape::served(&Arc::new(TapeBytes::default())).unwrap_err();
        assert!(matches!(
            e.kind,
            ReplayErrorKind::Transcript(t) if t.kind == ErrorKind::Empty
        ));
    }

    /// Text shared with a string is a range of it; text that is not in it is refused.
    #[test]
    fn shared_text_is_a_range_of_its_string_or_refused() {
        let buf = Arc::new(TapeBytes::from("héllo world".to_owned()));
        let w = SharedText::within(&buf, &buf.as_bytes()[7..]).unwrap();
        assert_eq!(w.as_str(), "world");
        assert_eq!(w, SharedText::from("world"));
        assert_eq!(Arc::strong_count(&buf), 2);
        let elsewhere = "world".to_owned();
        assert!(SharedText::within(&buf, elsewhere.as_bytes()).is_none());
        assert_eq!(SharedText::default().as_str(), "");
        assert_eq!(format!("{w} {w:?}"), "world \"world\"");
    }

    /// The tape of a borrowed read with the served bodies refuses a
    /// malformed successful reply as the full tape does (the envelope scan
    /// is as strict as the parser), at the same record.
    #[test]
    fn client_tape_rejects_a_non_json_rpc_reply_at_its_record_like_the_full_tape() {
        let text = EXTRA_MEMBER_REPLY;
        let t = mcptape_transcript::reader::read_borrowed(
            text.as_bytes(),
            mcptape_transcript::reader::ReadOptions::strict(),
        )
        .unwrap();
        let e = Tape::from_transcript_ref(&t, ReplyBodies::Served).unwrap_err();
        assert!(matches!(&e.kind, ReplayErrorKind::BadRecord(_)), "{e:?}");
        assert_eq!(e.record, Some(1));
    }

    #[test]
    fn default_roots_are_the_common_directory_per_scheme_and_authority() {
        let r = crate::serve::default_roots(&[
            "file:///project/a.md",
            "file:///project/img/b.png",
            "demo://resource/static/document/x.md",
            "demo://resource/dynamic/text/1",
            "mcptape://items/42",
        ]);
        assert_eq!(
            r,
            vec!["file:///project/", "demo://resource/", "mcptape://items/"]
        );
    }
}
