//! `serve`: mcptape as the recorded server. A request is matched to a
//! recorded one by method and params (not by id) and answered with the
//! recorded `result`/`error` under the request's own id, after a delay drawn
//! from the latency model; faults are injected from the same seeded schedule.
//!
//! Every `resources/read` uri first goes through [`mcptape_uri::Root::resolve`];
//! a rejected uri is answered `-32602` with `data.uri` (MCP 2026-07-28
//! "Resources" §Error handling, SEP-2164), never with an empty `contents`.
//!
//! ## Requests the recording has no answer for ([`Unrecorded`], `--unrecorded`)
//! With [`Unrecorded::Answer`] (the default) the protocol housekeeping the
//! recorded server's capabilities imply is answered as the spec defines it
//! (MCP 2025-11-25 "Utilities", "Server Features"), and every such answer is
//! counted per method in [`ServeSummary::synthesized`]:
//! * `ping` → `{}` (answered under either policy: the receiver MUST reply);
//! * `logging/setLevel` → `{}` when `logging` is advertised;
//! * `resources/subscribe`/`unsubscribe` → `{}` when `resources.subscribe` is true;
//! * a list never recorded → an empty page (`{"resources": []}`,
//!   `{"resourceTemplates": []}`, `{"tools": []}`, `{"prompts": []}`) when its
//!   capability is advertised; `completion/complete` → no values when
//!   `completions` is (2026-07-28 recordings add `ttlMs: 0`,
//!   `cacheScope: "private"` (SEP-2549) and `resultType: "complete"`);
//! * a `resources/read` of a uri never recorded → "Resource not found" with
//!   `data.uri`, code -32602 (2026-07-28, SEP-2164), or -32002 when the
//!   recording's revision (the detector's) is of the session era and the
//!   recording holds no not-found error of its own (its code wins);
//! * notifications are accepted silently;
//! * the other era's handshake is answered from the recorded one, counted in
//!   [`ServeSummary::adapted`]: a 2026-07-28 recording answers `initialize`
//!   (protocolVersion = the client's 2025 revision when known, capabilities
//!   and serverInfo from the recorded `server/discover` result), a 2025
//!   recording answers `server/discover` (from its `initialize` result).
//!   Replies of the recording's own era stay byte-exact.
//!
//! Anything else unrecorded is -32601 (Method not found).
//! [`Unrecorded::Error`] keeps the strict behavior: only `ping` is answered,
//! any other unrecorded method is -32601, an unrecorded read -32602 "no
//! recorded response".
//!
//! ## Ids
//! Ids are compared and echoed as the raw JSON text the client sent
//! ([`Incoming::id_text`]): `"1"` and `1` are different requests, an integer
//! past `u64` (`18446744073709551616`) comes back digit for digit.

use std::collections::{BTreeMap, HashMap};
use std::io::{IoSlice, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use crate::error::{ReplayError, ReplayErrorKind};
use crate::latency::{Fault, FaultSpec, LatencyModel};
use crate::metrics::{Outcome, ServeMetrics};
use crate::schedule::{Scheduler, Ticket, Timer, TimerMode, deadline_after};
use crate::tape::{Match, SharedText, Tape, split_at_id};
use mcptape_report::server::{Precision, ServeSummary};
use mcptape_report::stats::{Quantiles, new_hist};
use mcptape_transport::framed::{FramedReader, MAX_LINE_BYTES};
use mcptape_transport::stdio::Frame;
use mcptape_uri::parts::Parts;
use mcptape_wire::envelope::{self, ErrorObject, Message, RequestId};
use mcptape_wire::error::WireErrorKind;

/// JSON-RPC 2.0 §5.1 error codes (`-32700` Parse error, `-32600` Invalid
/// Request, `-32601` Method not found, `-32602` Invalid params — also MCP
/// 2026-07-28 resource not found), from [`mcptape_wire::protocol`].
pub use mcptape_wire::protocol::error_code::{
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
};
use mcptape_wire::protocol::{self, Era, method};
use mcptape_wire::reply::{
    CompleteResult, DiscoverResult, EmptyList, EmptyResult, InitializeResult, ServerInfoMeta,
    StatelessResult,
};

/// JSON-RPC code of a not-found resource before MCP 2026-07-28
/// (2025-11-25 "Resources" §Error Handling: `-32002`).
pub use mcptape_wire::protocol::error_code::LEGACY_RESOURCE_NOT_FOUND;

/// `_meta` key of the server's identity in a 2026-07-28 `server/discover` result,
/// from [`mcptape_wire::protocol::meta`].
pub use mcptape_wire::protocol::meta::SERVER_INFO as META_SERVER_INFO;

/// What `serve` does with a request the recording has no answer for (module
/// docs, "Requests the recording has no answer for").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Unrecorded {
    /// Answer the housekeeping the recorded capabilities imply, as the spec defines it.
    #[default]
    Answer,
    /// Strict: only `ping` is answered; anything else unrecorded is an error.
    Error,
}

impl Unrecorded {
    /// `"answer"` or `"error"`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Unrecorded> {
        match s {
            "answer" => Some(Unrecorded::Answer),
            "error" => Some(Unrecorded::Error),
            _ => None,
        }
    }
}

/// One incoming message and the raw JSON text of its ids, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The message (strict parse; its ids are their raw text too).
    pub message: Message,
    /// A request's `id` exactly as sent (`7`, `"7"`, `18446744073709551616`).
    pub id_text: Option<String>,
    /// A `notifications/cancelled`'s `params.requestId` exactly as sent.
    pub cancel_text: Option<String>,
}

/// A reply's bytes as pieces, for a vectored write without a per-request
/// copy: the recorded message before its `id` value, the id's JSON text as
/// the client sent it, the recorded message after the id. The recorded
/// message is shared ([`SharedText`]: with the tape, and with the transcript
/// file's bytes when the tape was built by [`Tape::served`])
/// between every answer that carries it, so answering a 160 MB recorded
/// `resources/read` allocates only the id text.
/// A synthesized reply is one piece (the whole text) and an empty id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyBytes {
    /// The message the id goes into (recorded bytes, or a whole synthesized reply).
    text: SharedText,
    /// The byte range of `text` the id replaces (empty at the end for a whole reply).
    id_at: Range<usize>,
    /// The id's JSON text, as sent (`7`, `"7"`).
    id_text: Box<str>,
}

impl ReplyBytes {
    /// `text` with the bytes at `id_at` replaced by `id_text`.
    ///
    /// `None` when `id_at` is not a range of `text` on `char` boundaries.
    pub fn spliced(text: SharedText, id_at: Range<usize>, id_text: &str) -> Option<ReplyBytes> {
        let b = text.bytes();
        b.get(id_at.clone())?;
        // On `char` boundaries: not inside a multi-byte sequence at either end.
        let boundary = |at: usize| b.get(at).is_none_or(|&c| (c as i8) >= -0x40);
        if !(boundary(id_at.start) && boundary(id_at.end)) {
            return None;
        }
        Some(ReplyBytes {
            text,
            id_at,
            id_text: id_text.into(),
        })
    }

    /// A reply that is `text` as it is (one piece; moved, not copied).
    pub fn whole(text: String) -> ReplyBytes {
        let n = text.len();
        ReplyBytes {
            text: SharedText::from(text),
            id_at: n..n,
            id_text: "".into(),
        }
    }

    /// The three pieces in order: before the id, the id, after the id.
    pub fn pieces(&self) -> [&[u8]; 3] {
        let b = self.text.bytes();
        [
            &b[..self.id_at.start],
            self.id_text.as_bytes(),
            &b[self.id_at.end..],
        ]
    }

    /// The pieces and a final `"\n"` (the stdio line end) as [`IoSlice`]s,
    /// for [`write_all_vectored`].
    pub fn line_slices(&self) -> [IoSlice<'_>; 4] {
        let [a, b, c] = self.pieces();
        [
            IoSlice::new(a),
            IoSlice::new(b),
            IoSlice::new(c),
            IoSlice::new(b"\n"),
        ]
    }

    /// Length of the reply in bytes (no line end).
    pub fn len(&self) -> usize {
        self.text.bytes().len() - self.id_at.len() + self.id_text.len()
    }

    /// The reply has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The reply as one string (a copy: for HTTP bodies and tests, not the
    /// stdio hot path).
    pub fn to_text(&self) -> String {
        let text = self.text.as_str();
        let mut out = String::with_capacity(self.len());
        out.push_str(text.get(..self.id_at.start).unwrap_or_default());
        out.push_str(&self.id_text);
        out.push_str(text.get(self.id_at.end..).unwrap_or_default());
        out
    }
}

impl std::fmt::Display for ReplyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Writes every byte of `bufs`, in order, with [`Write::write_vectored`]
/// (one `writev(2)` of all pieces where the writer takes them), looping on
/// partial writes with [`IoSlice::advance_slices`]. `bufs` is consumed
/// (advanced past what was written).
///
/// # Errors
/// The writer's error ([`std::io::ErrorKind::Interrupted`] is retried);
/// [`std::io::ErrorKind::WriteZero`] when it accepts 0 bytes with bytes left.
pub fn write_all_vectored(w: &mut impl Write, mut bufs: &mut [IoSlice<'_>]) -> std::io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        let wrote = w.write_vectored(bufs);
        advance_past(&mut bufs, wrote)?;
    }
    Ok(())
}

/// Replies at least this long (1 MiB) whose recorded bytes are a range of a mapped transcript
/// ([`SharedText::file_range`]) go into a pipe with `splice(2)` ([`write_line_to_file`]).
/// Shorter ones are one `writev(2)` (a system call fewer).
pub const SPLICE_FROM_BYTES: usize = 1024 * 1024;

/// Writes `body` and its `\n` into `out` (blocking): the recorded bytes after the id, when
/// they are a range of a mapped transcript and the reply is at least [`SPLICE_FROM_BYTES`],
/// are moved from the file into the pipe `out` with `splice(2)` (Linux; the page cache's
/// pages themselves: no copy out of the map, no pipe page allocated and freed per write), the
/// head (before the id, the id) and the line end written around them. When `out` is not a
/// pipe (`EINVAL`) or the call is refused, the bytes not moved are written from the map as
/// [`write_all_vectored`] does; either way the same bytes, in order.
///
/// # Errors
/// The write's or the splice's error; [`std::io::ErrorKind::WriteZero`] as
/// [`write_all_vectored`].
pub fn write_line_to_file(
    out: &mut std::fs::File,
    body: &ReplyBytes,
) -> std::io::Result<LineWrite> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if body.len() >= SPLICE_FROM_BYTES
        && let Some((file, at)) = body.text.file_range()
    {
        let [head, id, tail] = body.pieces();
        write_all_vectored(out, &mut [IoSlice::new(head), IoSlice::new(id)])?;
        let (moved, refused) = splice_from_file(file, at + body.id_at.end as u64, tail.len(), out)?;
        write_all_vectored(
            out,
            &mut [IoSlice::new(&tail[moved..]), IoSlice::new(b"\n")],
        )?;
        return Ok(match refused {
            None => LineWrite::Spliced,
            Some(why) => LineWrite::SpliceFallback(why),
        });
    }
    write_all_vectored(out, &mut body.line_slices()).map(|()| LineWrite::Written)
}

/// How [`write_line_to_file`] wrote a reply: counted in the serve summary
/// (`ServeSummary::spliced`, `ServeSummary::splice_fallbacks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineWrite {
    /// Written from memory (`writev(2)`): shorter than [`SPLICE_FROM_BYTES`], or not a range
    /// of a mapped transcript.
    Written,
    /// Its recorded bytes after the id moved from the mapped file into the pipe by `splice(2)`.
    Spliced,
    /// `splice(2)` was asked and refused, the bytes it did not move written from the map
    /// instead (the same bytes). Why: `EINVAL` (the output is not a pipe: a regular file,
    /// `/dev/null`), `ENOSYS`, `EAGAIN`, `EOVERFLOW` (an offset past `i64`), or
    /// [`IoRefusal::FileEndedEarly`] (the transcript was shortened under the map).
    SpliceFallback(IoRefusal),
}

/// Why serve wrote a reply another way than it asked (a refused `splice(2)`), or could not
/// grow its stdout pipe (a refused `fcntl(F_SETPIPE_SZ)`): the key of the per-reason counts
/// of its summary (`ServeSummary::splice_fallbacks`, `ServeSummary::pipe_size_refused`).
///
/// Display (the summary's key): the `errno`'s name as nix's [`Errno`](nix::errno::Errno)
/// spells it (`EINVAL`, `EPERM`), `file ended early`, `unsupported`. Ordered by that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoRefusal {
    /// The call failed with this `errno` (its text: [`Errno::desc`](nix::errno::Errno::desc)).
    Errno(nix::errno::Errno),
    /// `splice(2)` moved nothing before the range's end: the file is shorter than the map.
    FileEndedEarly,
    /// An error with no `errno` (the call does not exist here: `F_SETPIPE_SZ` off Linux).
    Unsupported,
}

impl IoRefusal {
    /// The refusal of the I/O error `e`: its `errno`, else [`IoRefusal::Unsupported`].
    pub fn of(e: &std::io::Error) -> IoRefusal {
        e.raw_os_error().map_or(IoRefusal::Unsupported, |code| {
            IoRefusal::Errno(nix::errno::Errno::from_raw(code))
        })
    }
}

impl std::fmt::Display for IoRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoRefusal::Errno(e) => write!(f, "{e:?}"),
            IoRefusal::FileEndedEarly => f.write_str("file ended early"),
            IoRefusal::Unsupported => f.write_str("unsupported"),
        }
    }
}

impl Ord for IoRefusal {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for IoRefusal {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Moves up to `len` bytes of `file` from byte `at` into the pipe `out` with `splice(2)`;
/// returns how many it moved before it was done or refused, and why it was refused (`EINVAL`:
/// `out` is not a pipe; `ENOSYS`, `EAGAIN`; [`IoRefusal::FileEndedEarly`]; an offset past
/// `i64`: `EOVERFLOW`), the caller writing the rest.
///
/// # Errors
/// Any other error of `splice(2)` (`EPIPE`: the reader is gone).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn splice_from_file(
    file: &std::fs::File,
    at: u64,
    len: usize,
    out: &std::fs::File,
) -> std::io::Result<(usize, Option<IoRefusal>)> {
    use nix::errno::Errno;
    use nix::fcntl::{SpliceFFlags, splice};
    let Ok(mut off) = i64::try_from(at) else {
        return Ok((0, Some(IoRefusal::Errno(Errno::EOVERFLOW))));
    };
    let mut moved = 0;
    while moved < len {
        match splice(
            file,
            Some(&mut off),
            out,
            None,
            len - moved,
            SpliceFFlags::SPLICE_F_MORE,
        ) {
            Ok(0) => return Ok((moved, Some(IoRefusal::FileEndedEarly))),
            Ok(n) => moved += n,
            Err(Errno::EINTR) => {}
            Err(e @ (Errno::EINVAL | Errno::ENOSYS | Errno::EAGAIN)) => {
                return Ok((moved, Some(IoRefusal::Errno(e))));
            }
            Err(e) => return Err(std::io::Error::from(e)),
        }
    }
    Ok((moved, None))
}

/// Advances `bufs` past the bytes one vectored write took (`wrote`): `Ok` to
/// write again (also after [`std::io::ErrorKind::Interrupted`]), the error
/// to stop on, [`std::io::ErrorKind::WriteZero`] when the writer took 0 bytes.
/// The one loop step of [`write_all_vectored`] and [`write_line_async`].
fn advance_past(
    bufs: &mut &mut [IoSlice<'_>],
    wrote: std::io::Result<usize>,
) -> std::io::Result<()> {
    match wrote {
        Ok(0) => Err(std::io::Error::new(
            std::io::ErrorKind::WriteZero,
            "failed to write whole reply",
        )),
        Ok(n) => {
            IoSlice::advance_slices(bufs, n);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(()),
        Err(e) => Err(e),
    }
}

/// Replies up to this size (bytes, line end included) are joined into one
/// buffer for an async writer without vectored writes, so they still go out
/// in one write; larger ones are written piece by piece (no copy): 64 KiB.
pub const JOIN_BELOW_BYTES: usize = 64 * 1024;

/// [`write_all_vectored`] for a tokio writer: vectored writes when the
/// writer has them, else one joined buffer below [`JOIN_BELOW_BYTES`] and
/// the pieces in order above it.
///
/// # Errors
/// The writer's error; [`std::io::ErrorKind::WriteZero`] as [`write_all_vectored`].
pub async fn write_line_async<W: AsyncWrite + Unpin>(
    w: &mut W,
    body: &ReplyBytes,
) -> std::io::Result<()> {
    if !w.is_write_vectored() && body.len() < JOIN_BELOW_BYTES {
        let mut line = Vec::with_capacity(body.len() + 1);
        for p in body.pieces() {
            line.extend_from_slice(p);
        }
        line.push(b'\n');
        return w.write_all(&line).await;
    }
    let mut slices = body.line_slices();
    let mut bufs: &mut [IoSlice<'_>] = &mut slices;
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        let wrote = w.write_vectored(bufs).await;
        advance_past(&mut bufs, wrote)?;
    }
    Ok(())
}

/// What the server does with one incoming message. `B` is the reply body:
/// a `String` from [`Server::decide_bytes`], [`Server::decide`] and
/// [`Server::decide_incoming`]; [`ReplyBytes`] (pieces, no per-request
/// copy of a recorded reply) from [`Server::decide_bytes_in_pieces`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answer<B = String> {
    /// Send this message after `delay_us`.
    Reply {
        /// The request's id (the reply carries it).
        id: Value,
        /// The full JSON-RPC response, serialized: for a recorded reply, the
        /// recorded bytes exactly, with only the `id` value replaced.
        body: B,
        /// Server-side delay, µs.
        delay_us: u64,
        /// Answer in a `text/event-stream` body (HTTP), as the recorded server did.
        sse: bool,
        /// HTTP status to answer with (Streamable HTTP): the recorded one for a
        /// recorded 4xx reply, 400 for an invalid message; `None` is 200.
        status: Option<u16>,
        /// The id's raw JSON text as the client sent it (`null` when none):
        /// the key cancellation and pending answers use.
        id_text: String,
        /// What else the recorded server said after this request
        /// ([`crate::tape::Exchange::interim`]), in recorded order; empty
        /// for a reply the recording does not hold.
        interim: Vec<InterimOut>,
    },
    /// Never answer (stall fault).
    Stall,
    /// Close the connection (drop-connection fault).
    Drop,
    /// A notification or response: nothing to send.
    Nothing,
    /// `notifications/cancelled`: abort the pending answer to this request id
    /// (canonical JSON text of the id).
    Cancel(String),
    /// The recorded server died on this request ([`crate::tape::Tape::crash`]):
    /// stdio ends the stream (EOF) and `serve` exits with the recorded code;
    /// HTTP closes the request's stream unanswered.
    Crash {
        /// The recorded exit code, if it exited.
        code: Option<i32>,
        /// The recorded signal, if a signal killed it.
        signal: Option<i32>,
        /// When the server died, µs after this request (the recorded gap):
        /// answers due before then still go out.
        after_us: u64,
    },
}

/// A server-to-client message `serve` sends around a reply
/// ([`crate::tape::Exchange::interim`] made ready for one request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterimOut {
    /// Due this long after the request was read, µs: the recorded offset,
    /// scaled to the drawn delay when it came before the reply (so it stays
    /// before it), else the drawn delay plus how long after the reply it came.
    pub due_us: u64,
    /// Recorded before the reply (sent before it, in the same HTTP response
    /// stream when the reply is an SSE one).
    pub before_reply: bool,
    /// The message: a server request under an id of `serve`'s own
    /// (`"mcptape-s2c-N"`), a `notifications/progress` with the client's own
    /// `progressToken`, anything else byte-exact as recorded.
    pub text: String,
}

impl Answer<ReplyBytes> {
    /// The same answer with its reply body joined into one `String`.
    pub fn joined(self) -> Answer {
        match self {
            Answer::Reply {
                id,
                body,
                delay_us,
                sse,
                status,
                id_text,
                interim,
            } => Answer::Reply {
                id,
                body: body.to_text(),
                delay_us,
                sse,
                status,
                id_text,
                interim,
            },
            Answer::Stall => Answer::Stall,
            Answer::Drop => Answer::Drop,
            Answer::Nothing => Answer::Nothing,
            Answer::Cancel(k) => Answer::Cancel(k),
            Answer::Crash {
                code,
                signal,
                after_us,
            } => Answer::Crash {
                code,
                signal,
                after_us,
            },
        }
    }
}

/// Counters of a serve session, under the [`Server`]'s lock; read out through
/// [`Server::summary`] ([`ServeSummary`] is the public view).
#[derive(Debug, Default)]
struct ServeStats {
    /// Requests received.
    requests: u64,
    /// Requests answered with the recorded crash.
    crashed: u64,
    /// Requests answered with a recorded reply (exact or handshake match).
    matched: u64,
    /// Requests that matched no recording.
    unmatched: u64,
    /// `resources/read` uris rejected by the root.
    rejected_uri: u64,
    /// Pending answers cancelled by `notifications/cancelled`.
    cancelled: u64,
    /// Stall faults injected.
    stalled: u64,
    /// Error faults injected.
    injected_errors: u64,
    /// Drop-connection faults injected.
    dropped: u64,
    /// Messages refused by the strict parser (answered -32700 or -32600).
    invalid: u64,
    /// `ping` requests answered `{}` without a recorded answer.
    pinged: u64,
    /// Answers synthesized for unrecorded requests, per method ([`Unrecorded`]).
    synthesized: BTreeMap<String, u64>,
    /// Handshakes of the other era answered from the recorded one.
    adapted: u64,
    /// Refused `fcntl(F_SETPIPE_SZ)` on the stdout pipe, per reason (its `errno`).
    pipe_size_refused: BTreeMap<IoRefusal, u64>,
}

/// The delays of the replies sent, kept apart from [`ServeStats`] under their own lock: the
/// timer thread records into it after every write, and must never wait for the reader (which
/// holds the counters' lock while deciding; a preempted reader would delay every later
/// deadline). Read out through [`Server::summary`].
#[derive(Debug)]
struct ReplyTimes {
    /// Delays the schedule asked for, µs.
    intended: Histogram<u64>,
    /// Delays achieved: request line read → reply written and flushed, µs.
    achieved: Histogram<u64>,
    /// achieved − intended per reply, µs (0 when early, which cannot happen).
    lateness: Histogram<u64>,
    /// Engine time of replies scheduled with no delay: request line read →
    /// reply bytes written, µs (all replies at `fixed:0ms`).
    engine: Histogram<u64>,
    /// Engine work per reply: match + encode (line read → reply queued) plus
    /// the write itself, µs; the timer's wait excluded.
    work: Histogram<u64>,
    /// Replies spliced from the mapped transcript ([`LineWrite::Spliced`]): counted here, by
    /// the thread that wrote them, never under the reader's lock.
    spliced: u64,
    /// Replies whose splice was refused and written instead, per reason ([`LineWrite::SpliceFallback`]).
    splice_fallbacks: BTreeMap<IoRefusal, u64>,
}

impl Default for ReplyTimes {
    fn default() -> Self {
        ReplyTimes {
            intended: new_hist(),
            achieved: new_hist(),
            lateness: new_hist(),
            engine: new_hist(),
            work: new_hist(),
            spliced: 0,
            splice_fallbacks: BTreeMap::new(),
        }
    }
}

/// The recorded server: tape, schedule, roots, stats.
pub struct Server {
    tape: Tape,
    sched: Mutex<Scheduler>,
    roots: Vec<mcptape_uri::Root>,
    stats: Mutex<ServeStats>,
    replies: Mutex<ReplyTimes>,
    timer: TimerMode,
    /// The policy for requests the recording has no answer for.
    unrecorded: Unrecorded,
    /// `serve --metrics`: live counters, when asked for ([`Server::with_metrics`]).
    metrics: Option<Arc<ServeMetrics>>,
    /// The recorded server's capabilities (handshake result), `{}` if none.
    caps: Value,
    /// The recording is of the 2026-07-28 (stateless) era.
    stateless: bool,
    /// Code of a synthesized not-found read (module docs).
    not_found_code: i64,
    /// The roots came from `--root`: every read uri must resolve under one.
    /// Otherwise they were inferred from the recorded `file:` uris, and only
    /// `file:` uris are checked against them.
    explicit_roots: bool,
    /// Number of the next server request `serve` sends (`"mcptape-s2c-N"`).
    next_server_request: std::sync::atomic::AtomicU64,
}

/// `uri`'s scheme is `file` (RFC 8089; schemes are case-insensitive, RFC 3986 §3.1).
fn is_file_uri(uri: &str) -> bool {
    uri.get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
}

/// Why `serve` refused a `resources/read` uri ([`Server::check_uri`]): it answers
/// `-32602` with `data.uri` and this reason (MCP 2026-07-28, `resources/read` errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UriRejected {
    /// No root is configured to resolve it against.
    #[error("no root configured")]
    NoRoot,
    /// Every root rejected it: each root's reason, in root order, joined by `; `.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    EveryRoot(Vec<mcptape_uri::SanitizeError>),
}

/// Default roots: per `scheme://authority` ([`Parts`]), the longest common directory of
/// the recorded `resources/read` uris (`file:///project/a.md` and
/// `file:///project/img/b.png` give `file:///project/`).
pub fn default_roots(uris: &[&str]) -> Vec<String> {
    let mut roots: Vec<(String, Vec<String>)> = Vec::new();
    for uri in uris {
        let Some(Parts {
            scheme,
            authority: Some(auth),
            path,
        }) = Parts::parse(uri)
        else {
            continue;
        };
        let base = format!("{scheme}://{auth}");
        // directory segments of the path (the last segment is the name)
        let mut segs: Vec<String> = path.split('/').skip(1).map(str::to_owned).collect();
        segs.pop();
        match roots.iter_mut().find(|(b, _)| *b == base) {
            Some((_, common)) => {
                let n = common.iter().zip(&segs).take_while(|(a, b)| a == b).count();
                common.truncate(n);
            }
            None => roots.push((base, segs)),
        }
    }
    roots
        .into_iter()
        .map(|(base, segs)| {
            let mut s = base;
            s.push('/');
            for seg in segs {
                s.push_str(&seg);
                s.push('/');
            }
            s
        })
        .collect()
}

impl Server {
    /// A server for `tape`. `roots`: the `--root` URIs, which every read uri
    /// must resolve under; when empty, one root per `file://authority/` of
    /// the recorded `file:` read uris ([`default_roots`]), which guard
    /// `file:` uris only (a `demo://` uri never recorded is "Resource not
    /// found", not a sanitizer rejection).
    ///
    /// # Errors
    /// [`ReplayErrorKind::Root`] when a root is rejected by `mcptape_uri`.
    pub fn new(
        tape: Tape,
        model: LatencyModel,
        faults: FaultSpec,
        seed: u64,
        roots: &[String],
    ) -> Result<Server, ReplayError> {
        let mut names: Vec<String> = roots.to_vec();
        let explicit_roots = !names.is_empty();
        if names.is_empty() {
            // Inferred only from `file:` uris: a server's own schemes
            // (`demo://`, `docs://`) name no directory to confine.
            // Each uri once, in recorded order (a repeated read adds nothing).
            let mut seen = std::collections::HashSet::new();
            let uris: Vec<&str> = tape
                .client
                .iter()
                .filter(|r| r.method == method::RESOURCES_READ && r.id.is_some())
                .filter_map(|r| r.params.get("uri").and_then(Value::as_str))
                .filter(|u| is_file_uri(u) && seen.insert(*u))
                .collect();
            names = default_roots(&uris);
        }
        let roots = names
            .iter()
            .map(|n| {
                mcptape_uri::Root::new(n)
                    .map_err(|e| ReplayError::new(ReplayErrorKind::Root(format!("{n}: {e}"))))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let caps = tape
            .exchanges
            .iter()
            .filter(|e| method::HANDSHAKES.contains(&tape.request(e).method.as_str()))
            .find_map(|e| e.reply.get("result")?.get("capabilities").cloned())
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        let stateless = tape
            .protocol_version
            .as_deref()
            .is_some_and(|v| Era::of(v) == Era::Stateless);
        let recorded_code = tape
            .exchanges
            .iter()
            .filter(|e| tape.request(e).method == method::RESOURCES_READ)
            .filter_map(|e| e.error_code)
            .find(|c| [INVALID_PARAMS, LEGACY_RESOURCE_NOT_FOUND].contains(c));
        let not_found_code = recorded_code.unwrap_or(match (stateless, &tape.protocol_version) {
            (false, Some(_)) => LEGACY_RESOURCE_NOT_FOUND,
            _ => INVALID_PARAMS,
        });
        Ok(Server {
            explicit_roots,
            next_server_request: std::sync::atomic::AtomicU64::new(0),
            unrecorded: Unrecorded::default(),
            caps,
            stateless,
            not_found_code,
            sched: Mutex::new(Scheduler::new(model, faults, seed)),
            roots,
            tape,
            stats: Mutex::new(ServeStats::default()),
            replies: Mutex::new(ReplyTimes::default()),
            timer: TimerMode::Precise,
            metrics: None,
        })
    }

    /// Keeps `metrics` up to date ([`crate::metrics`], `serve --metrics`): every request's
    /// outcome, every reply's delay, sessions, requests in flight.
    pub fn with_metrics(mut self, metrics: Arc<ServeMetrics>) -> Server {
        self.metrics = Some(metrics);
        self
    }

    /// The metrics this server keeps, if any ([`Server::with_metrics`]).
    pub fn metrics(&self) -> Option<&Arc<ServeMetrics>> {
        self.metrics.as_ref()
    }

    /// The recorded request methods, each once, in recorded order (the `method` labels of
    /// [`ServeMetrics::new`]).
    pub fn recorded_methods(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.tape
            .exchanges
            .iter()
            .map(|e| self.tape.request(e).method.as_str())
            .filter(|m| seen.insert(*m))
            .collect()
    }

    fn count(&self, method: &str, outcome: Outcome) {
        if let Some(m) = &self.metrics {
            m.request(method, outcome);
        }
    }

    /// Uses `timer` for the delays ([`TimerMode::Virtual`] under a paused
    /// tokio clock in tests).
    pub fn with_timer(mut self, timer: TimerMode) -> Server {
        self.timer = timer;
        self
    }

    /// Uses `policy` for requests the recording has no answer for.
    pub fn with_unrecorded(mut self, policy: Unrecorded) -> Server {
        self.unrecorded = policy;
        self
    }

    /// The policy for requests the recording has no answer for.
    pub fn unrecorded(&self) -> Unrecorded {
        self.unrecorded
    }

    /// The timer mode in use.
    pub fn timer(&self) -> TimerMode {
        self.timer
    }

    /// The roots `resources/read` uris are resolved against.
    pub fn roots(&self) -> Vec<String> {
        self.roots.iter().map(|r| r.to_uri()).collect()
    }

    /// The tape being served.
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, ServeStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn replies(&self) -> std::sync::MutexGuard<'_, ReplyTimes> {
        self.replies.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks a `resources/read` uri against the roots. Without `--root`, a uri whose scheme
    /// is not `file` is not checked (`Ok`).
    ///
    /// # Errors
    /// [`UriRejected::EveryRoot`] with each root's [`mcptape_uri::SanitizeError`] (rule and
    /// byte offset) when every root rejects it; [`UriRejected::NoRoot`] when none is configured.
    pub fn check_uri(&self, uri: &str) -> Result<(), UriRejected> {
        if !self.explicit_roots && !is_file_uri(uri) {
            // No `--root`: the sanitizer guards the recording's `file:`
            // root only; another scheme's uri is matched (or not found) as
            // recorded.
            return Ok(());
        }
        let mut reasons = Vec::new();
        for r in &self.roots {
            match r.resolve(uri) {
                Ok(_) => return Ok(()),
                Err(e) => reasons.push(e),
            }
        }
        if reasons.is_empty() {
            return Err(UriRejected::NoRoot);
        }
        Err(UriRejected::EveryRoot(reasons))
    }

    /// Decides the answer to the bytes of one incoming message (one stdio
    /// line, one HTTP body): [`parse_incoming_raw`], then
    /// [`Server::decide_incoming`]; an invalid message is answered with its
    /// JSON-RPC 2.0 §5 error at once.
    pub fn decide_bytes(&self, bytes: &[u8]) -> Answer {
        self.decide_bytes_in_pieces(bytes).joined()
    }

    /// [`Server::decide_bytes`] with the reply body as [`ReplyBytes`]: a
    /// recorded reply is not copied, only its id is new (the stdio server's
    /// path; write it with [`write_all_vectored`] or [`write_line_async`]).
    pub fn decide_bytes_in_pieces(&self, bytes: &[u8]) -> Answer<ReplyBytes> {
        match parse_incoming_raw(bytes) {
            Ok(m) => {
                self.decide_message(&m.message, m.id_text.as_deref(), m.cancel_text.as_deref())
            }
            Err(err) => {
                let mut s = self.stats();
                s.requests += 1;
                s.invalid += 1;
                drop(s);
                self.count("", Outcome::Invalid);
                match reply(&err.response(), 0) {
                    Answer::Reply {
                        id,
                        body,
                        delay_us,
                        sse,
                        id_text,
                        ..
                    } => Answer::Reply {
                        id,
                        body,
                        delay_us,
                        sse,
                        status: Some(400),
                        id_text,
                        interim: Vec::new(),
                    },
                    other => other,
                }
            }
        }
    }

    /// Decides the answer to one message read by the strict wire parser
    /// (no I/O, no clock); ids are taken as their canonical JSON text. See
    /// [`Server::decide_incoming`].
    pub fn decide(&self, msg: &Message) -> Answer {
        let id_text = msg.id().map(ToString::to_string);
        let cancel_text = cancel_request_id(msg).map(|r| r.to_string());
        self.decide_message(msg, id_text.as_deref(), cancel_text.as_deref())
            .joined()
    }

    /// Decides the answer to one incoming message (no I/O, no clock).
    /// Requests are matched against the tape (answered under the id as the
    /// client sent it); unrecorded ones per [`Unrecorded`];
    /// `notifications/cancelled` cancels the pending answer to its
    /// `requestId`; other notifications and the client's responses get nothing.
    pub fn decide_incoming(&self, inc: &Incoming) -> Answer {
        self.decide_message(
            &inc.message,
            inc.id_text.as_deref(),
            inc.cancel_text.as_deref(),
        )
        .joined()
    }

    fn decide_message(
        &self,
        msg: &Message,
        id_text: Option<&str>,
        cancel: Option<&str>,
    ) -> Answer<ReplyBytes> {
        let req = match msg {
            Message::Request(r) => r,
            Message::Notification(n) => {
                if n.method == method::NOTIFICATIONS_CANCELLED
                    && let Some(key) = cancel
                {
                    return Answer::Cancel(key.to_owned());
                }
                return Answer::Nothing;
            }
            _ => return Answer::Nothing,
        };
        let method = req.method.as_str();
        let own_text;
        let id_text = match id_text {
            Some(t) => t,
            None => {
                own_text = req.id.to_string();
                &own_text
            }
        };
        let params = req.params.clone().unwrap_or(Value::Null);
        self.stats().requests += 1;
        let m = self.tape.lookup(method, &params);
        if matches!(m, Match::NoParams | Match::NoMethod)
            && let Some(c) = self.tape.crash_for(method, &params)
        {
            self.stats().crashed += 1;
            self.count(method, Outcome::Crash);
            return Answer::Crash {
                code: c.code,
                signal: c.signal,
                after_us: c.after_us,
            };
        }
        let answer = self.unrecorded == Unrecorded::Answer;
        // The other era's handshake, answered from the recorded one.
        let adapted = match (&m, answer) {
            (Match::NoMethod, true) => self.cross_era(method, &params),
            _ => None,
        };
        let recorded_delay = match (&m, &adapted) {
            (Match::Exact(e) | Match::ByMethod(e), _) => Some(e.delay_us),
            (_, Some((_, e))) => Some(e.delay_us),
            _ => None,
        };
        let plan = self
            .sched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .plan_for(recorded_delay, Some(method));
        // A synthesized reply's id: the request's, as its raw text (built only
        // for those: a recorded reply gets `id_text` spliced into its bytes).
        let id = || RequestId::from_json(id_text).unwrap_or_else(|_| req.id.clone());
        let out = |msg: Message| reply_with_id(&msg, id_text, plan.delay_us);
        // An error answering this request with `{"method"}` as its data.
        let method_error = |code: i64, text: &str| {
            let data = ErrorData::method(method);
            Message::error(Some(id()), ErrorObject::with_data(code, text, &data))
        };
        // Faults are for the session's work, not its handshake: the draw is
        // still consumed so the schedule stays the same.
        let fault = if crate::tape::HANDSHAKE_METHODS.contains(&method) {
            None
        } else {
            plan.fault
        };
        match fault {
            Some(Fault::Stall) => {
                self.stats().stalled += 1;
                self.count(method, Outcome::Stall);
                return Answer::Stall;
            }
            Some(Fault::DropConnection) => {
                self.stats().dropped += 1;
                self.count(method, Outcome::Drop);
                return Answer::Drop;
            }
            Some(Fault::Error { code }) => {
                self.stats().injected_errors += 1;
                self.count(method, Outcome::InjectedError);
                return out(method_error(code, "mcptape serve: injected fault"));
            }
            _ => {}
        }
        let uri = params.get("uri").and_then(Value::as_str);
        if method == method::RESOURCES_READ {
            let Some(uri) = uri else {
                self.stats().unmatched += 1;
                self.count(method, Outcome::Rejected);
                return out(method_error(
                    INVALID_PARAMS,
                    "mcptape serve: resources/read without a string params.uri",
                ));
            };
            if let Err(reason) = self.check_uri(uri).map_err(|e| e.to_string()) {
                self.stats().rejected_uri += 1;
                self.count(method, Outcome::Rejected);
                return out(Message::error(
                    Some(id()),
                    ErrorObject::with_data(
                        INVALID_PARAMS,
                        format!("mcptape serve: uri {uri} rejected: {reason}"),
                        &ErrorData {
                            uri: Some(uri),
                            reason: Some(&reason),
                            ..ErrorData::default()
                        },
                    ),
                ));
            }
        }
        if let Some((result, _)) = adapted {
            let mut s = self.stats();
            s.adapted += 1;
            *s.synthesized.entry(method.to_owned()).or_default() += 1;
            drop(s);
            if let Some(m) = &self.metrics {
                m.synthesized(method);
            }
            self.count(method, Outcome::Synthesized);
            return out(Message::Response(envelope::Response { id: id(), result }));
        }
        let msg = match m {
            Match::Exact(e) | Match::ByMethod(e) => {
                self.stats().matched += 1;
                self.count(method, Outcome::Recorded);
                let body = match self.encoded_reply(e, id_text) {
                    Some(b) => b,
                    None => ReplyBytes::whole(splice_text(&self.full_reply(e), id_text)),
                };
                return Answer::Reply {
                    id: id_value(id_text),
                    body,
                    delay_us: plan.delay_us,
                    sse: e.sse,
                    status: e.status.filter(|s| *s != 200),
                    id_text: id_text.to_owned(),
                    interim: self.interim_for(e, &params, plan.delay_us),
                };
            }
            // A read of a uri never recorded: "Resource not found".
            Match::NoParams | Match::NoMethod
                if answer && method == method::RESOURCES_READ && uri.is_some() =>
            {
                self.synthesized(method);
                let uri = uri.unwrap_or_default(); // `Some`: the guard
                Message::error(
                    Some(id()),
                    ErrorObject::resource_not_found(self.not_found_code, uri),
                )
            }
            Match::NoParams => {
                self.stats().unmatched += 1;
                self.count(method, Outcome::NotRecorded);
                let text = match uri {
                    Some(u) => format!("mcptape serve: no recorded response for {method} uri={u}"),
                    None => format!(
                        "mcptape serve: no recorded response for {method} with these params"
                    ),
                };
                let data = ErrorData {
                    params: Some(&params),
                    uri,
                    ..ErrorData::method(method)
                };
                Message::error(
                    Some(id()),
                    ErrorObject::with_data(INVALID_PARAMS, text, &data),
                )
            }
            // MCP base protocol, "Utilities / Ping": the receiver MUST answer
            // promptly with an empty result, recorded or not.
            Match::NoMethod if method == method::PING => {
                self.stats().pinged += 1;
                self.synthesized(method);
                Message::result(id(), &EmptyResult {})
            }
            Match::NoMethod if answer && self.housekeeping(method).is_some() => {
                self.synthesized(method);
                let result = self.housekeeping(method).unwrap_or_default();
                Message::Response(envelope::Response { id: id(), result })
            }
            Match::NoMethod => {
                self.stats().unmatched += 1;
                self.count(method, Outcome::NotRecorded);
                let data = ErrorData {
                    uri,
                    ..ErrorData::method(method)
                };
                Message::error(
                    Some(id()),
                    ErrorObject::with_data(
                        METHOD_NOT_FOUND,
                        format!("mcptape serve: method {method} was not recorded"),
                        &data,
                    ),
                )
            }
        };
        out(msg)
    }

    /// The interim messages of exchange `e` ready for a request with
    /// `params` answered after `delay_us` ([`InterimOut`]). A recorded
    /// `notifications/progress` goes only to a request carrying
    /// `_meta.progressToken`, with that token (MCP 2025-11-25 "Utilities /
    /// Progress"); a server request gets an id of serve's own.
    fn interim_for(
        &self,
        e: &crate::tape::Exchange,
        params: &Value,
        delay_us: u64,
    ) -> Vec<InterimOut> {
        if e.interim.is_empty() {
            return Vec::new();
        }
        let token = params.get("_meta").and_then(|m| m.get("progressToken"));
        let mut out = Vec::with_capacity(e.interim.len());
        for m in &e.interim {
            let before_reply = m.after_us <= e.delay_us;
            let due_us = if before_reply {
                // Scaled to the drawn delay (u128: no overflow), so it stays before the reply.
                (u128::from(m.after_us) * u128::from(delay_us) / u128::from(e.delay_us.max(1)))
                    as u64
            } else {
                delay_us.saturating_add(m.after_us - e.delay_us)
            };
            let text = if m.progress {
                let Some(token) = token else { continue };
                let Ok(mut v) = mcptape_wire::json::value_from_slice(
                    crate::tape::mask_lone_surrogates(&m.text).as_bytes(),
                ) else {
                    continue;
                };
                if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
                    p.insert("progressToken".to_owned(), token.clone());
                }
                v.to_string()
            } else if m.request {
                let n = self.next_server_request.fetch_add(1, Ordering::Relaxed);
                match splice_id(&m.text, &Value::String(format!("mcptape-s2c-{n}"))) {
                    Some(t) => t,
                    None => continue,
                }
            } else {
                m.text.to_string()
            };
            out.push(InterimOut {
                due_us,
                before_reply,
                text,
            });
        }
        out
    }

    fn synthesized(&self, method: &str) {
        *self
            .stats()
            .synthesized
            .entry(method.to_owned())
            .or_default() += 1;
        if let Some(m) = &self.metrics {
            m.synthesized(method);
        }
        self.count(method, Outcome::Synthesized);
    }

    /// The spec's answer to an unrecorded housekeeping request the recorded
    /// capabilities imply (module docs), or `None`.
    pub fn housekeeping(&self, method: &str) -> Option<Value> {
        let cap = |k: &str| self.caps.get(k).is_some_and(|v| !v.is_null());
        let body = match method {
            method::LOGGING_SET_LEVEL if cap("logging") => Housekeeping::Empty(EmptyResult {}),
            method::RESOURCES_SUBSCRIBE | method::RESOURCES_UNSUBSCRIBE
                if self.caps["resources"]["subscribe"].as_bool() == Some(true) =>
            {
                Housekeeping::Empty(EmptyResult {})
            }
            method::RESOURCES_LIST | method::RESOURCES_TEMPLATES_LIST if cap("resources") => {
                Housekeeping::List(EmptyList::of(method)?)
            }
            method::TOOLS_LIST if cap("tools") => Housekeeping::List(EmptyList::Tools),
            method::PROMPTS_LIST if cap("prompts") => Housekeeping::List(EmptyList::Prompts),
            method::COMPLETION_COMPLETE if cap("completions") => {
                Housekeeping::Complete(CompleteResult::none())
            }
            _ => return None,
        };
        let result = if self.stateless {
            StatelessResult::complete_uncached(body, method)
        } else {
            StatelessResult::session(body)
        };
        serde_json::to_value(result).ok()
    }

    /// The other era's handshake result built from the recorded one, and
    /// the recorded exchange it came from (module docs).
    fn cross_era(&self, method: &str, params: &Value) -> Option<(Value, &crate::tape::Exchange)> {
        let recorded = |m: &str| {
            self.tape
                .exchanges
                .iter()
                .find(|e| self.tape.request(e).method == m && e.reply.get("result").is_some())
        };
        match method {
            method::INITIALIZE => {
                let e = recorded(method::SERVER_DISCOVER)?;
                let d = &e.reply["result"];
                let supported = protocol::supported_versions(d).unwrap_or_default();
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = protocol::initialize_answer_revision(asked, &supported);
                let info = d
                    .get("serverInfo")
                    .or_else(|| d.get("_meta")?.get(META_SERVER_INFO))
                    .cloned()
                    .or_else(|| serde_json::to_value(protocol::Implementation::mcptape()).ok())?;
                let r = InitializeResult {
                    protocol_version: version,
                    capabilities: recorded_capabilities(d),
                    server_info: info,
                    instructions: d.get("instructions").cloned(),
                };
                Some((serde_json::to_value(r).ok()?, e))
            }
            method::SERVER_DISCOVER => {
                let e = recorded(method::INITIALIZE)?;
                let i = &e.reply["result"];
                let version = protocol::HandshakeResult::of(i)
                    .revision()
                    .unwrap_or(protocol::FALLBACK_REVISION);
                let r = DiscoverResult {
                    supported_versions: vec![version],
                    capabilities: recorded_capabilities(i),
                    meta: i.get("serverInfo").map(|info| ServerInfoMeta {
                        server_info: info.clone(),
                    }),
                    instructions: i.get("instructions").cloned(),
                };
                // A 2026-07-28 result: `resultType`, and `ttlMs`/`cacheScope`
                // (`server/discover` is one of the six cacheable methods).
                let r = StatelessResult::complete_uncached(r, method::SERVER_DISCOVER);
                Some((serde_json::to_value(r).ok()?, e))
            }
            _ => None,
        }
    }

    /// The whole recorded reply of `e` as a value: [`Exchange::reply`](crate::tape::Exchange::reply),
    /// or, when the tape holds a successful reply as its envelope only
    /// ([`ReplyBodies::Served`](crate::tape::ReplyBodies::Served)), the value of its recorded
    /// bytes (the reply answered by re-encoding: its bytes have no `id` to splice).
    fn full_reply<'a>(&self, e: &'a crate::tape::Exchange) -> std::borrow::Cow<'a, Value> {
        match self.tape.bodies {
            crate::tape::ReplyBodies::Kept => std::borrow::Cow::Borrowed(&e.reply),
            _ => match crate::tape::reply_value(&e.reply_raw) {
                Some(v) => std::borrow::Cow::Owned(v),
                None => std::borrow::Cow::Borrowed(&e.reply),
            },
        }
    }

    /// The recorded reply of exchange `e` with `id_text` (raw JSON) spliced
    /// in where its recorded id sits ([`Exchange::reply_id`](crate::tape::Exchange::reply_id),
    /// found when the tape was built): no copy, no parse.
    fn encoded_reply(&self, e: &crate::tape::Exchange, id_text: &str) -> Option<ReplyBytes> {
        ReplyBytes::spliced(e.reply_raw.clone(), e.reply_id.clone()?, id_text)
    }

    /// Records one sent reply's scheduled and achieved delay (µs).
    pub fn record_delay(&self, intended_us: u64, achieved_us: u64) {
        let mut s = self.replies();
        s.intended.saturating_record(intended_us.max(1));
        s.achieved.saturating_record(achieved_us.max(1));
        s.lateness
            .saturating_record(achieved_us.saturating_sub(intended_us).max(1));
        drop(s);
        if let Some(m) = &self.metrics {
            m.reply(intended_us, achieved_us);
        }
    }

    /// Records one sent reply: scheduled and achieved delay and the
    /// engine's own work on it (match + encode + write), µs.
    pub fn record_reply(&self, intended_us: u64, achieved_us: u64, work_us: u64) {
        let mut s = self.replies();
        s.intended.saturating_record(intended_us.max(1));
        s.achieved.saturating_record(achieved_us.max(1));
        s.lateness
            .saturating_record(achieved_us.saturating_sub(intended_us).max(1));
        s.work.saturating_record(work_us.max(1));
        if intended_us == 0 {
            s.engine.saturating_record(achieved_us.max(1));
        }
        drop(s);
        if let Some(m) = &self.metrics {
            m.reply(intended_us, achieved_us);
        }
    }

    /// Counts one message refused by the strict parser (HTTP bodies, which
    /// are parsed before the session check), or refused unread: a stdio line or an HTTP
    /// body past the size limit, a body broken off (each answered -32700).
    pub fn record_invalid(&self) {
        let mut s = self.stats();
        s.requests += 1;
        s.invalid += 1;
        drop(s);
        self.count("", Outcome::Invalid);
    }

    /// Counts how one reply was written into a file ([`write_line_to_file`]): spliced, or
    /// written after a refused splice (per reason); nothing for a plain write.
    ///
    /// Takes the replies' lock (the timer thread's, as [`Server::record_reply`]), never the
    /// counters' one, and only for a long reply.
    pub fn record_line_write(&self, w: LineWrite) {
        match w {
            LineWrite::Written => {}
            LineWrite::Spliced => self.replies().spliced += 1,
            LineWrite::SpliceFallback(why) => {
                *self.replies().splice_fallbacks.entry(why).or_default() += 1;
            }
        }
    }

    /// Counts one refused `fcntl(F_SETPIPE_SZ)` on the pipe replies go into (the pipe keeps
    /// its size: [`mcptape_transport::child::PIPE_BYTES`]), by the error's name (`EPERM`).
    pub fn record_pipe_size_refused(&self, e: &std::io::Error) {
        *self
            .stats()
            .pipe_size_refused
            .entry(IoRefusal::of(e))
            .or_default() += 1;
    }

    /// Counts one cancelled pending answer.
    pub fn record_cancel(&self) {
        self.stats().cancelled += 1;
        if let Some(m) = &self.metrics {
            m.cancelled();
        }
    }

    /// The summary so far.
    pub fn summary(&self) -> ServeSummary {
        let r = self.replies();
        let s = self.stats();
        let sched = self.sched.lock().unwrap_or_else(|p| p.into_inner());
        let model = sched.model();
        let lateness = Quantiles::of(&r.lateness);
        let model_p50 = model
            .quantile_us(0.5)
            .unwrap_or(r.intended.value_at_quantile(0.5) as f64);
        let work = Quantiles::of(&r.work);
        ServeSummary {
            model: model.to_string(),
            model_p50_us: model.quantile_us(0.5),
            model_p99_us: model.quantile_us(0.99),
            requests: s.requests,
            matched: s.matched,
            unmatched: s.unmatched,
            rejected_uri: s.rejected_uri,
            cancelled: s.cancelled,
            stalled: s.stalled,
            injected_errors: s.injected_errors,
            dropped: s.dropped,
            crashed: s.crashed,
            invalid: s.invalid,
            pinged: s.pinged,
            synthesized: s.synthesized.clone(),
            adapted: s.adapted,
            spliced: r.spliced,
            splice_fallbacks: by_reason(&r.splice_fallbacks),
            pipe_size_refused: by_reason(&s.pipe_size_refused),
            batches_skipped: self.tape().batches_skipped() as u64,
            intended: Quantiles::of(&r.intended),
            achieved: Quantiles::of(&r.achieved),
            lateness,
            engine: Quantiles::of(&r.engine),
            work,
            capacity_per_s: (work.count > 0 && work.mean_us > 0.0).then(|| 1e6 / work.mean_us),
            precision: Precision::judge(model_p50, lateness.p99_us, lateness.count),
            timer_policy: (self.timer == TimerMode::Precise)
                .then(crate::schedule::TimerThread::policy)
                .flatten()
                .map(|p| p.description.clone()),
        }
    }
}

/// Per-reason counts keyed by the reason's text ([`IoRefusal`]'s Display), as the summary
/// holds them.
fn by_reason(counts: &BTreeMap<IoRefusal, u64>) -> BTreeMap<String, u64> {
    counts.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

/// Why an incoming message is refused, and the JSON-RPC 2.0 §5 error response it is answered
/// with ([`IncomingError::response`]). Display: `parse error: expected value at byte 0` (the
/// wire error names its byte offset), `invalid request: batches are not supported`.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingError {
    /// The id echoed in the response: the request's own when it is itself valid (a string or
    /// an `i64` integer) and the message is JSON, else `None` (`"id": null`).
    pub id: Option<RequestId>,
    /// What is wrong.
    pub kind: IncomingErrorKind,
}

/// What is wrong with an incoming message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum IncomingErrorKind {
    /// A batch (JSON-RPC 2.0 §6; MCP 2025-06-18 and later do not allow batches): `-32600`.
    Batch,
    /// Not strict JSON (syntax, duplicate key, lone surrogate, size or depth limit): `-32700`
    /// Parse error. The wire error carries its byte offset.
    Parse(mcptape_wire::error::WireError),
    /// Strict JSON but not a valid JSON-RPC 2.0 envelope: `-32600` Invalid Request. The wire
    /// error carries its byte offset, when known.
    Invalid(mcptape_wire::error::WireError),
}

impl IncomingError {
    /// The JSON-RPC error code it maps to: `-32700` ([`IncomingErrorKind::Parse`]) or
    /// `-32600`.
    pub fn code(&self) -> i64 {
        match self.kind {
            IncomingErrorKind::Parse(_) => PARSE_ERROR,
            _ => INVALID_REQUEST,
        }
    }

    /// Byte offset into the message of what is wrong, when known.
    pub fn offset(&self) -> Option<usize> {
        match &self.kind {
            IncomingErrorKind::Parse(e) | IncomingErrorKind::Invalid(e) => e.offset(),
            _ => None,
        }
    }

    /// The error response to send back: `{"jsonrpc":"2.0","id":…,"error":{"code",
    /// "message":"mcptape serve: <Display>","data":{"reason","offset"}}}` (`offset` when known;
    /// `reason` is `batch` for a batch, else the wire error's kind), the id as sent (`null`
    /// when it could not be read). Write it with [`Message::to_json`].
    pub fn response(&self) -> Message {
        let reason = match &self.kind {
            IncomingErrorKind::Parse(e) | IncomingErrorKind::Invalid(e) => e.kind().to_string(),
            IncomingErrorKind::Batch => "batch".to_owned(),
        };
        let data = ErrorData {
            reason: Some(&reason),
            offset: self.offset(),
            ..ErrorData::default()
        };
        Message::error(
            self.id.clone(),
            ErrorObject::with_data(self.code(), format!("mcptape serve: {self}"), &data),
        )
    }
}

impl std::fmt::Display for IncomingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            IncomingErrorKind::Batch => f.write_str("invalid request: batches are not supported"),
            IncomingErrorKind::Parse(e) => write!(f, "parse error: {e}"),
            IncomingErrorKind::Invalid(e) => write!(f, "invalid request: {e}"),
        }
    }
}

impl std::error::Error for IncomingError {}

/// Reads the bytes of one incoming message with the one strict reader
/// [`mcptape_wire::envelope::parse`] (strict JSON: duplicate keys rejected;
/// `"jsonrpc": "2.0"`; ids are strings or integer literals kept as their
/// raw text, never `null`).
///
/// # Errors
/// [`IncomingError`], whose [`response`](IncomingError::response) is the JSON-RPC 2.0 §5 error
/// response to send back:
/// - `-32700` Parse error, `"id": null`, when the bytes are not strict JSON
///   (syntax, duplicate key, lone surrogate, size or depth limit);
/// - `-32600` Invalid Request for an envelope error, or a batch (JSON-RPC 2.0
///   §6; MCP 2025-06-18 and later do not allow batches). The `id` is echoed
///   when it is itself valid (a string or an `i64` integer), else `null`.
///
/// The error's `data` carries `{"reason", "offset"}` (byte offset into the
/// message, when known).
pub fn parse_incoming(bytes: &[u8]) -> Result<Message, IncomingError> {
    let e = match envelope::parse(bytes) {
        Ok(envelope::Frame::Single(m)) => return Ok(m),
        Ok(envelope::Frame::Batch(_)) => {
            return Err(IncomingError {
                id: None,
                kind: IncomingErrorKind::Batch,
            });
        }
        Err(e) => invalid_utf8_first(bytes, e),
    };
    let id = match e.kind() {
        WireErrorKind::Json(_) | WireErrorKind::NullRequestId | WireErrorKind::InvalidId => None,
        _ => mcptape_wire::json::value_from_slice(bytes)
            .ok()
            .and_then(|v| v.get("id").and_then(|i| RequestId::from_value(i).ok())),
    };
    let kind = match e.kind() {
        WireErrorKind::Json(_) => IncomingErrorKind::Parse(e),
        _ => IncomingErrorKind::Invalid(e),
    };
    Err(IncomingError { id, kind })
}

/// The parse error `e` of `bytes`, or `invalid UTF-8 at byte N` when a JSON syntax error was
/// found at or after the first byte that is not UTF-8 (RFC 8259 §8.1): the strict reader checks
/// UTF-8 inside strings, so a byte such as 0xFF outside one (a client line starting with it) was
/// "expected a value at byte 0". Stdio and HTTP `serve` both answer through
/// [`parse_incoming_raw`] → here, so both say the same.
fn invalid_utf8_first(
    bytes: &[u8],
    e: mcptape_wire::error::WireError,
) -> mcptape_wire::error::WireError {
    use mcptape_wire::error::{JsonError, JsonErrorKind, WireError};
    let syntax_at = match e.kind() {
        WireErrorKind::Json(JsonErrorKind::Syntax { .. }) => e.offset(),
        _ => None,
    };
    match (syntax_at, std::str::from_utf8(bytes)) {
        (Some(at), Err(u)) if u.valid_up_to() <= at => {
            WireError::from(JsonError::new(JsonErrorKind::InvalidUtf8, u.valid_up_to()))
        }
        _ => e,
    }
}

/// The `requestId` of a `notifications/cancelled` (a valid id), if any.
fn cancel_request_id(msg: &Message) -> Option<RequestId> {
    match msg {
        Message::Notification(n) if n.method == method::NOTIFICATIONS_CANCELLED => n
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|r| RequestId::from_value(r).ok()),
        _ => None,
    }
}

/// [`parse_incoming`], keeping the raw JSON text of the ids as sent
/// ([`Incoming`]): one scan by the one reader
/// ([`mcptape_wire::envelope::scan_envelope`], which keeps every id as its
/// raw text, an integer past `u64` included), then the typed view from its
/// ranges.
///
/// # Errors
/// As [`parse_incoming`].
pub fn parse_incoming_raw(bytes: &[u8]) -> Result<Incoming, IncomingError> {
    let env = match envelope::scan_frame(bytes) {
        Ok(envelope::Scanned::Single(env)) => env,
        // A batch, or not one strict JSON-RPC message: the error as
        // `parse_incoming` words it (off the hot path).
        _ => {
            return Err(match parse_incoming(bytes) {
                Err(e) => e,
                Ok(_) => IncomingError {
                    id: None,
                    kind: IncomingErrorKind::Invalid(mcptape_wire::error::WireError::new(
                        WireErrorKind::UnknownShape,
                        Some(0),
                    )),
                },
            });
        }
    };
    let message = env.message(bytes).map_err(|e| IncomingError {
        id: None,
        kind: IncomingErrorKind::Invalid(e),
    })?;
    Ok(Incoming {
        id_text: env.id.as_ref().map(|i| i.as_json().to_owned()),
        cancel_text: env.cancel_request_id(bytes).map(|r| r.as_json().to_owned()),
        message,
    })
}

/// The id text as a JSON value (an integer past `u64` becomes a float
/// approximation; the reply bytes carry the exact text).
fn id_value(id_text: &str) -> Value {
    serde_json::from_str(id_text).unwrap_or(Value::Null)
}

/// `msg` (a recorded reply as a value) serialized with its top-level `id`
/// set to the raw JSON `id_text`.
fn splice_text(msg: &Value, id_text: &str) -> String {
    let mut msg = msg.clone();
    // A non-null stand-in, so the id member is found (an `Option` reads `null` as absent).
    if let Value::Object(o) = &mut msg {
        o.insert("id".to_owned(), Value::from(0));
    }
    let body = msg.to_string();
    match split_at_id(&body) {
        Some((h, t)) => format!("{h}{id_text}{t}"),
        None => body,
    }
}

/// An [`Answer::Reply`] carrying `msg` (serialized, its id as sent) to the
/// request whose raw id is `id_text`, after `delay_us`.
fn reply_with_id(msg: &Message, id_text: &str, delay_us: u64) -> Answer<ReplyBytes> {
    Answer::Reply {
        id: id_value(id_text),
        body: ReplyBytes::whole(msg.to_json()),
        delay_us,
        sse: false,
        status: None,
        id_text: id_text.to_owned(),
        interim: Vec::new(),
    }
}

/// An [`Answer::Reply`] carrying `msg` (serialized, its id as sent; `null`
/// when it has none) after `delay_us`.
fn reply(msg: &Message, delay_us: u64) -> Answer<ReplyBytes> {
    let id = msg.id();
    Answer::Reply {
        id_text: id.map_or("null", RequestId::as_json).to_owned(),
        id: id.map_or(Value::Null, RequestId::to_value),
        body: ReplyBytes::whole(msg.to_json()),
        delay_us,
        sse: false,
        status: None,
        interim: Vec::new(),
    }
}

/// `raw` (one recorded JSON-RPC message) with the value of its top-level
/// `id` member replaced by `id`, every other byte kept — so a reply keeps the
/// recorded server's own string escaping and member order. `None` when `raw`
/// is not an object with an `id`.
pub fn splice_id(raw: &str, id: &Value) -> Option<String> {
    let (head, tail) = split_at_id(raw)?;
    Some(format!("{head}{id}{tail}"))
}

/// `error.data` of serve's own errors (not the spec's: mcptape's account of
/// what was asked and why it was refused), members in this order, each left
/// out when absent: `{"method","params","uri","reason","offset"}`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorData<'a> {
    /// The request's method.
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    /// The request's params (`null` when it had none).
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    /// The request's `params.uri`.
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<&'a str>,
    /// Why the request was refused (a wire error kind, a root rejection, `batch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    /// Byte offset into the message of what is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<usize>,
}

impl<'a> ErrorData<'a> {
    /// `{"method": method}`.
    fn method(method: &'a str) -> ErrorData<'a> {
        ErrorData {
            method: Some(method),
            ..ErrorData::default()
        }
    }
}

/// The body of an answer to unrecorded housekeeping ([`Server::housekeeping`]).
enum Housekeeping {
    /// `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`.
    Empty(EmptyResult),
    /// An empty first page of a list.
    List(EmptyList),
    /// `completion/complete` with no value.
    Complete(CompleteResult),
}

impl Serialize for Housekeeping {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Housekeeping::Empty(r) => r.serialize(s),
            Housekeeping::List(r) => r.serialize(s),
            Housekeeping::Complete(r) => r.serialize(s),
        }
    }
}

/// `result.capabilities` of a recorded handshake result, `{}` when it has none.
fn recorded_capabilities(result: &Value) -> Value {
    result
        .get("capabilities")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()))
}

/// One reply ready to go out (or interim messages only, when not `reply`).
struct Outgoing {
    /// Interim messages written first, each a line, in order.
    pre: Vec<String>,
    /// The reply, written as its pieces and `\n`.
    body: ReplyBytes,
    /// `body` is the request's reply (its timing is recorded); else it is
    /// one more interim message.
    reply: bool,
    /// When its request line was read.
    received: Instant,
    /// Scheduled delay, µs.
    intended_us: u64,
    /// Engine work before the wait (line read → reply queued), µs.
    decide_us: u64,
}

/// A blocking file (the process's stdout) written directly by the timer
/// thread: one `writev(2)` of the line's pieces where the pipe takes them.
struct FileSink {
    file: Mutex<std::fs::File>,
    /// The first failed write's error: no later reply can reach the client.
    error: Mutex<Option<std::io::Error>>,
    /// Told at the first failed write, so that the read loop ends the session
    /// ([`Out::write_failed`]) instead of reading requests it cannot answer.
    failed: tokio::sync::Notify,
}

/// Where a session's replies go.
#[derive(Clone)]
enum Out {
    /// To the session's tokio writer task (any `AsyncWrite`).
    Chan(mpsc::UnboundedSender<Outgoing>),
    /// Straight into a blocking file, from whichever thread fires.
    File(Arc<FileSink>),
}

impl Out {
    fn deliver(&self, server: &Server, o: Outgoing) {
        match self {
            Out::Chan(tx) => {
                let _ = tx.send(o);
            }
            Out::File(sink) => {
                let t0 = Instant::now();
                let mut f = sink.file.lock().unwrap_or_else(|p| p.into_inner());
                let r = o
                    .pre
                    .iter()
                    .try_for_each(|l| {
                        write_all_vectored(
                            &mut *f,
                            &mut [IoSlice::new(l.as_bytes()), IoSlice::new(b"\n")],
                        )
                    })
                    .and_then(|()| write_line_to_file(&mut f, &o.body));
                drop(f);
                let done = Instant::now();
                if let Ok(w) = r {
                    server.record_line_write(w);
                }
                match r {
                    Ok(_) if !o.reply => {}
                    Ok(_) => server.record_reply(
                        o.intended_us,
                        (done - o.received).as_micros() as u64,
                        o.decide_us + (done - t0).as_micros() as u64,
                    ),
                    Err(e) => {
                        let mut g = sink.error.lock().unwrap_or_else(|p| p.into_inner());
                        if g.is_none() {
                            *g = Some(e);
                            // A permit if the read loop is not waiting right now.
                            sink.failed.notify_one();
                        }
                    }
                }
            }
        }
    }

    /// Ends when a reply could not be written (the file's first failed write); never for a
    /// writer task's channel (its errors end the session by themselves). Holds the file's
    /// sink, not `self`: the channel closes when the session drops its `Out`.
    fn write_failed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let sink = match self {
            Out::File(sink) => Some(sink.clone()),
            Out::Chan(_) => None,
        };
        async move {
            match sink {
                Some(sink) => sink.failed.notified().await,
                None => std::future::pending().await,
            }
        }
    }
}

/// The answers of one session waiting on the timer.
/// A scheduled reply's ticket and its claim flag ([`Pending`]).
type Claimed = (Ticket, Arc<AtomicBool>);

#[derive(Default)]
struct Pending {
    /// Request id (JSON text) → tickets of its scheduled replies, each with its claim flag:
    /// whichever of the timer job and a cancellation sets it first decides whether the reply
    /// goes out. The job claims with one atomic swap, so it writes the reply without taking
    /// this map's lock (the reader holds it while scheduling, and a preempted reader must not
    /// delay a deadline: priority inversion under a `SCHED_FIFO` timer thread).
    by_id: Mutex<HashMap<String, Vec<Claimed>>>,
    /// Scheduled replies whose job has not finished (or been cancelled).
    inflight: AtomicUsize,
    /// Signalled when `inflight` drops to 0.
    drained: Notify,
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Claimed>>> {
        self.by_id.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Removes `ticket` of `key` from the map once its job ran (the reply was written, or a
    /// cancellation claimed it first).
    fn forget(&self, key: &str, ticket: Ticket) {
        let mut g = self.lock();
        let Some(v) = g.get_mut(key) else {
            return;
        };
        if let Some(i) = v.iter().position(|(t, _)| *t == ticket) {
            v.swap_remove(i);
        }
        if v.is_empty() {
            g.remove(key);
        }
    }

    fn done(&self, n: usize) {
        if n > 0 && self.inflight.fetch_sub(n, Ordering::AcqRel) == n {
            self.drained.notify_one();
        }
    }

    /// Cancels every scheduled reply of `key` (all when `None`); the
    /// number of keys that had one.
    fn cancel(&self, timer: &Timer, key: Option<&str>) -> usize {
        let taken: Vec<Vec<Claimed>> = {
            let mut g = self.lock();
            match key {
                Some(k) => g.remove(k).into_iter().collect(),
                None => g.drain().map(|(_, v)| v).collect(),
            }
        };
        // Claimed here: a job already popped but not yet writing will not write.
        for (_, claim) in taken.iter().flatten() {
            claim.store(true, Ordering::Release);
        }
        let removed = taken
            .iter()
            .flatten()
            .filter(|(t, _)| timer.cancel(*t))
            .count();
        self.done(removed);
        taken.len()
    }

    async fn wait_drained(&self) {
        while self.inflight.load(Ordering::Acquire) > 0 {
            self.drained.notified().await;
        }
    }
}

/// The writes of one answer on a line stream, each with its deadline, in
/// the order they must go out: the interim messages recorded before the
/// reply at their due times, the reply at `received` + `delay_us`, those
/// recorded after it later. Messages due no later than the write before
/// them join that write (as its leading lines), so equal deadlines never
/// reorder them.
fn outgoing_in_order(
    received: Instant,
    delay_us: u64,
    decide_us: u64,
    body: ReplyBytes,
    interim: Vec<InterimOut>,
) -> Vec<(Instant, Outgoing)> {
    let mut out: Vec<(Instant, Outgoing)> = Vec::with_capacity(interim.len() + 1);
    let mut push =
        |due: Instant, body: ReplyBytes, reply: bool, intended_us: u64| match out.last_mut() {
            Some((last, o)) if due <= *last && !o.reply => {
                let prev = std::mem::replace(&mut o.body, body);
                o.pre.push(prev.to_text());
                o.reply = reply;
                o.intended_us = intended_us;
            }
            _ => out.push((
                due,
                Outgoing {
                    pre: Vec::new(),
                    body,
                    reply,
                    received,
                    intended_us,
                    decide_us,
                },
            )),
        };
    let deadline = deadline_after(received, delay_us);
    let mut body = Some(body);
    for m in interim {
        if !m.before_reply
            && let Some(b) = body.take()
        {
            push(deadline, b, true, delay_us);
        }
        let due = deadline_after(received, m.due_us);
        let due = if m.before_reply {
            due.min(deadline)
        } else {
            due
        };
        push(due, ReplyBytes::whole(m.text), false, m.due_us);
    }
    if let Some(b) = body {
        push(deadline, b, true, delay_us);
    }
    out
}

/// How a stream session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEnd {
    /// The client closed its side; pending answers were sent first.
    Eof,
    /// A drop-connection fault closed it.
    Dropped,
    /// The recording's crash was replayed ([`Answer::Crash`]): nothing more
    /// was read; the answers due before the recorded death were sent, the
    /// rest never are.
    Crashed {
        /// The recorded exit code, if it exited.
        code: Option<i32>,
        /// The recorded signal, if a signal killed it.
        signal: Option<i32>,
    },
    /// The client closed its end of the replies' stream (a write failed with `EPIPE`): the
    /// session ended there, the pending answers dropped, nothing more read (a peer that hung
    /// up, as a closed pipe ends any Unix filter).
    ClientGone,
}

/// Serves newline-delimited JSON-RPC (MCP stdio transport) on `r`/`w` until
/// the client closes `r` (pending non-stalled answers are sent first) or a
/// drop-connection fault fires. Each answer is due at its absolute deadline,
/// request line read + drawn delay ([`deadline_after`]); the session's
/// [`Timer`] (the process's timer thread, or the virtual timer) hands it to
/// a writer task that writes and flushes `w`. For the lowest latency on a
/// real file descriptor use [`serve_stream_to_file`].
///
/// # Errors
/// [`ReplayErrorKind::Io`] from the streams. A line that is not JSON, or is
/// longer than [`MAX_LINE_BYTES`], is answered `-32700` (Parse error) and the
/// session goes on.
pub async fn serve_stream<R, W>(server: Arc<Server>, r: R, w: W) -> Result<StreamEnd, ReplayError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();
    let srv = server.clone();
    let writer = tokio::spawn(async move {
        let mut w = w;
        while let Some(o) = rx.recv().await {
            let t0 = Instant::now();
            for l in &o.pre {
                w.write_all(l.as_bytes()).await?;
                w.write_all(b"\n").await?;
            }
            write_line_async(&mut w, &o.body).await?;
            w.flush().await?;
            if !o.reply {
                continue;
            }
            let done = Instant::now();
            srv.record_reply(
                o.intended_us,
                (done - o.received).as_micros() as u64,
                o.decide_us + (done - t0).as_micros() as u64,
            );
        }
        w.shutdown().await.ok();
        Ok::<(), std::io::Error>(())
    });
    let end = serve_lines(server, r, Out::Chan(tx)).await;
    let wrote = writer
        .await
        .map_err(|e| ReplayError::new(ReplayErrorKind::Io(std::io::Error::other(e))))?;
    let end = end?;
    wrote?;
    Ok(end)
}

/// [`serve_stream`] writing replies straight into `out` (a blocking file
/// descriptor, e.g. a duplicate of stdout) from the thread whose deadline
/// fired — for [`TimerMode::Precise`], the timer thread itself, one
/// `writev(2)` of the line's pieces (recorded bytes around the id, the id,
/// `\n`; no per-request copy) where the pipe takes them; no
/// runtime hop between the deadline and the bytes. A full pipe blocks the
/// timer thread until the client reads.
///
/// A failed write ends the session at once (nothing more is read): the client closed its end
/// (`EPIPE`) is [`StreamEnd::ClientGone`], any other error the error.
///
/// # Errors
/// [`ReplayErrorKind::Io`] from reading `r` or the first failed write to `out` (not `EPIPE`).
pub async fn serve_stream_to_file<R>(
    server: Arc<Server>,
    r: R,
    out: std::fs::File,
) -> Result<StreamEnd, ReplayError>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let sink = Arc::new(FileSink {
        file: Mutex::new(out),
        error: Mutex::new(None),
        failed: tokio::sync::Notify::new(),
    });
    let end = serve_lines(server, r, Out::File(sink.clone())).await?;
    let err = sink.error.lock().unwrap_or_else(|p| p.into_inner()).take();
    match err {
        Some(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(StreamEnd::ClientGone),
        Some(e) => Err(ReplayError::new(ReplayErrorKind::Io(std::io::Error::new(
            e.kind(),
            format!("writing the replies: {e}"),
        )))),
        None => Ok(end),
    }
}

/// Serves the process's stdin/stdout: stdin read through epoll when it is a
/// pipe (tokio's blocking stdin otherwise), replies written by
/// [`serve_stream_to_file`] into a duplicate of the stdout descriptor.
///
/// # Errors
/// [`ReplayErrorKind::Io`] when stdout cannot be duplicated, or from the session.
pub async fn serve_stdio(server: Arc<Server>) -> Result<StreamEnd, ReplayError> {
    use std::os::fd::AsFd;
    let io = |e| ReplayError::new(ReplayErrorKind::Io(e));
    let out = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned().map_err(io)?);
    // A 1 MiB pipe: the timer thread's write(2) does not block on a client that lets a few
    // replies pile up (a blocked write delays every later deadline). Asked of a pipe only (a
    // file or a terminal has no size to grow); a refusal is counted in the summary.
    let is_pipe = {
        use std::os::unix::fs::FileTypeExt as _;
        out.metadata().is_ok_and(|m| m.file_type().is_fifo())
    };
    if is_pipe && let Err(e) = mcptape_transport::child::try_grow_pipe(&out) {
        server.record_pipe_size_refused(&e);
    }
    let pipe = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok());
    match pipe {
        Some(p) => serve_stream_to_file(server, p, out).await,
        None => serve_stream_to_file(server, tokio::io::stdin(), out).await,
    }
}

/// The read loop shared by the stream servers: frames lines, decides each,
/// schedules the replies on the session's timer, handles cancellation and
/// the drop fault, and waits for the pending replies at EOF.
async fn serve_lines<R>(server: Arc<Server>, r: R, out: Out) -> Result<StreamEnd, ReplayError>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let timer = Timer::for_mode(server.timer);
    let pending = Arc::new(Pending::default());
    let mut reader = FramedReader::new(r, MAX_LINE_BYTES);
    let mut end = StreamEnd::Eof;
    let mut crash_at = None;
    // `serve --metrics`: this stream is a session while it is read; a stalled request stays
    // in flight until the session ends.
    let _session = server.metrics().map(ServeMetrics::session);
    let mut stalled = Vec::new();
    let mut write_failed = false;
    // One waiter for the whole session (registered once, not per line).
    let failed = out.write_failed();
    tokio::pin!(failed);
    let result = loop {
        let next = tokio::select! {
            // A line already buffered is taken without looking at the other branch.
            biased;
            next = reader.next() => next,
            () = &mut failed => {
                write_failed = true;
                break Ok(());
            }
        };
        let frame = match next {
            Ok(Some(f)) => f,
            Ok(None) => break Ok(()),
            // The message keeps the stream offset of the failed read.
            Err(e) => {
                break Err(ReplayError::new(ReplayErrorKind::Io(std::io::Error::new(
                    e.source.kind(),
                    e.to_string(),
                ))));
            }
        };
        let received = Instant::now();
        let answer = match frame {
            Frame::Message(b) => server.decide_bytes_in_pieces(&b),
            Frame::Noise(b) if b.iter().all(u8::is_ascii_whitespace) => continue,
            Frame::Noise(b) => server.decide_bytes_in_pieces(&b),
            Frame::TooLong(e) => {
                // Refused as the strict parser refuses a message: counted (it was not).
                server.record_invalid();
                reply(
                    &Message::error(
                        None,
                        ErrorObject::new(PARSE_ERROR, format!("mcptape serve: parse error: {e}")),
                    ),
                    0,
                )
            }
        };
        match answer {
            Answer::Reply {
                body,
                delay_us,
                id_text,
                interim,
                ..
            } => {
                let decide_us = received.elapsed().as_micros() as u64;
                for (deadline, o) in outgoing_in_order(received, delay_us, decide_us, body, interim)
                {
                    // Already due on the real clock: no timer hop.
                    if server.timer == TimerMode::Precise && Instant::now() >= deadline {
                        out.deliver(&server, o);
                        continue;
                    }
                    let key = id_text.clone();
                    let (p, out, srv, k) =
                        (pending.clone(), out.clone(), server.clone(), key.clone());
                    // In flight until the job runs or is cancelled (the closure dropped).
                    let in_flight = o
                        .reply
                        .then(|| server.metrics().map(ServeMetrics::in_flight))
                        .flatten();
                    let claim = Arc::new(AtomicBool::new(false));
                    let mine = claim.clone();
                    // Hold the map while scheduling so the job's own removal
                    // cannot run before the insertion (the job takes the lock
                    // only after writing).
                    let mut g = pending.lock();
                    pending.inflight.fetch_add(1, Ordering::AcqRel);
                    let t = timer.schedule(
                        deadline,
                        Box::new(move |ticket| {
                            if !mine.swap(true, Ordering::AcqRel) {
                                out.deliver(&srv, o);
                            }
                            drop(in_flight);
                            p.forget(&k, ticket);
                            p.done(1);
                        }),
                    );
                    g.entry(key).or_default().push((t, claim));
                }
            }
            Answer::Cancel(key) => {
                if pending.cancel(&timer, Some(&key)) > 0 {
                    server.record_cancel();
                }
            }
            Answer::Drop => {
                end = StreamEnd::Dropped;
                break Ok(());
            }
            Answer::Crash {
                code,
                signal,
                after_us,
            } => {
                // Nothing more is read; answers due before the recorded death
                // still go out, the rest never do.
                end = StreamEnd::Crashed { code, signal };
                crash_at = Some(deadline_after(received, after_us));
                break Ok(());
            }
            Answer::Stall => stalled.extend(server.metrics().map(ServeMetrics::in_flight)),
            Answer::Nothing => {}
        }
    };
    if let Some(at) = crash_at {
        crate::schedule::sleep_until_precise(at, server.timer).await;
    }
    if end != StreamEnd::Eof || result.is_err() || write_failed {
        pending.cancel(&timer, None);
    }
    pending.wait_drained().await;
    drop(timer);
    drop(out);
    result?;
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The tape of `tests/data/tiny-two-reads.jsonl` (two recorded reads).
    fn tiny_tape() -> Tape {
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tiny-two-reads.jsonl"
        ))
        .unwrap();
        Tape::from_transcript(&mcptape_transcript::reader::read(&bytes).unwrap()).unwrap()
    }

    /// A server on `tape` that answers at once (`fixed:0ms`, no faults, seed 1, no roots).
    fn zero_latency_server(tape: Tape) -> Server {
        Server::new(
            tape,
            LatencyModel::parse("fixed:0ms").unwrap(),
            FaultSpec::default(),
            1,
            &[],
        )
        .unwrap()
    }

    /// A recorded reply of `blob` base64 bytes as a range of a mapped transcript file (the
    /// file's bytes: a header line, then the reply), spliced with the id `"r-7"`.
    fn mapped_reply(blob: usize) -> (ReplyBytes, tempfile::NamedTempFile) {
        use std::io::Write as _;
        let head = r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///m","blob":""#;
        let reply = format!("{head}{}\"}}]}}}}", "Q".repeat(blob));
        let mut f = tempfile::NamedTempFile::new().unwrap();
        writeln!(f, "{{\"mcptapeTranscript\":1}}").unwrap();
        f.write_all(reply.as_bytes()).unwrap();
        f.flush().unwrap();
        let file = std::fs::File::open(f.path()).unwrap();
        let len = file.metadata().unwrap().len();
        let bytes = Arc::new(crate::tape::TapeBytes::of_file_mapped_from(file, len, 0).unwrap());
        assert!(bytes.is_mapped());
        let all = bytes.as_bytes();
        let text = SharedText::within(&bytes, &all[all.len() - reply.len()..]).unwrap();
        assert!(text.file_range().is_some());
        let id_at = reply.find(":1,").unwrap() + 1;
        let body = ReplyBytes::spliced(text, id_at..id_at + 1, r#""r-7""#).unwrap();
        (body, f)
    }

    /// Regression (issue 22, ninth round): a reply spliced from the mapped transcript into a
    /// pipe is byte for byte the reply written from memory, at `SPLICE_FROM_BYTES` (spliced),
    /// one under it (written), and at 3 MiB through a 64 KiB pipe (many splices).
    #[test]
    fn a_reply_spliced_from_the_mapped_file_into_a_pipe_is_the_written_reply() {
        use std::io::Read as _;
        let empty = mapped_reply(0).0.len();
        for blob in [
            SPLICE_FROM_BYTES - empty,
            SPLICE_FROM_BYTES - empty - 1,
            3 << 20,
        ] {
            let (body, _file) = mapped_reply(blob);
            let (r, w) = nix::unistd::pipe().unwrap();
            let reader = std::thread::spawn(move || {
                let mut got = Vec::new();
                std::fs::File::from(r).read_to_end(&mut got).unwrap();
                got
            });
            let mut out = std::fs::File::from(w);
            let how = write_line_to_file(&mut out, &body).unwrap();
            drop(out);
            let got = reader.join().unwrap();
            let spliced = body.len() >= SPLICE_FROM_BYTES;
            assert_eq!(
                how,
                if spliced {
                    LineWrite::Spliced
                } else {
                    LineWrite::Written
                },
                "blob {blob}"
            );
            let want = format!("{}\n", body.to_text());
            assert!(want.contains(r#""id":"r-7","result""#));
            assert_eq!(got.len(), want.len(), "blob {blob}");
            assert!(got == want.as_bytes(), "blob {blob}");
        }
    }

    /// Into something that is not a pipe (a regular file: `splice(2)` refuses with `EINVAL`)
    /// the reply is written from the map instead: the same bytes.
    #[test]
    fn a_long_mapped_reply_into_a_regular_file_is_written_whole() {
        use std::io::{Read as _, Seek as _};
        let (body, _file) = mapped_reply(2 << 20);
        let mut out = tempfile::tempfile().unwrap();
        let how = write_line_to_file(&mut out, &body).unwrap();
        assert_eq!(
            how,
            LineWrite::SpliceFallback(IoRefusal::Errno(nix::errno::Errno::EINVAL))
        );
        out.rewind().unwrap();
        let mut got = String::new();
        out.read_to_string(&mut got).unwrap();
        assert_eq!(got, format!("{}\n", body.to_text()));
    }

    /// Serve's summary counts how long replies went out (they were not counted): spliced,
    /// written after a refused splice (per reason: stdout a regular file is `EINVAL`), and a
    /// refused `F_SETPIPE_SZ` by its errno (`EPERM`: the user's pipe quota; `EBADF`: not a
    /// pipe); `io_note` says them on serve's exit, nothing when nothing was refused.
    #[test]
    fn splice_fallbacks_and_pipe_size_refusals_are_counted_in_the_summary() {
        let server = zero_latency_server(tiny_tape());
        assert_eq!(server.summary().io_note(), None);

        let (body, _file) = mapped_reply(2 << 20);
        let mut file = tempfile::tempfile().unwrap();
        for _ in 0..2 {
            server.record_line_write(write_line_to_file(&mut file, &body).unwrap());
        }
        let (r, w) = nix::unistd::pipe().unwrap();
        let drain = std::thread::spawn(move || {
            std::io::copy(&mut std::fs::File::from(r), &mut std::io::sink()).unwrap()
        });
        let mut pipe = std::fs::File::from(w);
        server.record_line_write(write_line_to_file(&mut pipe, &body).unwrap());
        drop(pipe);
        drain.join().unwrap();
        server.record_line_write(LineWrite::Written);
        server.record_pipe_size_refused(&std::io::Error::from_raw_os_error(libc_eperm()));
        server
            .record_pipe_size_refused(&mcptape_transport::child::try_grow_pipe(&file).unwrap_err());

        let s = server.summary();
        assert_eq!(s.spliced, 1);
        assert_eq!(
            s.splice_fallbacks,
            BTreeMap::from([("EINVAL".to_owned(), 2)])
        );
        assert_eq!(
            s.pipe_size_refused,
            BTreeMap::from([("EBADF".to_owned(), 1), ("EPERM".to_owned(), 1)])
        );
        assert_eq!(
            s.io_note().unwrap(),
            "stdout pipe not grown to 1 MiB (F_SETPIPE_SZ refused: EBADF 1, EPERM 1); \
             splice refused, written instead: EINVAL 2 (of 3 replies of 1 MiB or more)"
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["spliced"], json!(1));
        assert_eq!(json["spliceFallbacks"], json!({"EINVAL": 2}));
        assert_eq!(json["pipeSizeRefused"], json!({"EBADF": 1, "EPERM": 1}));
    }

    /// The reason keys are nix's `errno` names, every `errno` (the hand-written table said
    /// `other` past its 7 names), one key type for both counts, ordered by name.
    #[test]
    fn io_refusal_names_any_errno_as_nix_spells_it() {
        use nix::errno::Errno;
        let enospc = std::io::Error::from_raw_os_error(Errno::ENOSPC as i32);
        assert_eq!(IoRefusal::of(&enospc).to_string(), "ENOSPC");
        let custom = std::io::Error::new(std::io::ErrorKind::Unsupported, "no F_SETPIPE_SZ");
        assert_eq!(IoRefusal::of(&custom), IoRefusal::Unsupported);
        assert_eq!(IoRefusal::Unsupported.to_string(), "unsupported");
        assert_eq!(IoRefusal::FileEndedEarly.to_string(), "file ended early");
        let counts = BTreeMap::from([
            (IoRefusal::FileEndedEarly, 1),
            (IoRefusal::Errno(Errno::EPERM), 2),
            (IoRefusal::Errno(Errno::EAGAIN), 3),
        ]);
        assert_eq!(
            by_reason(&counts).into_iter().collect::<Vec<_>>(),
            [
                ("EAGAIN".to_owned(), 3),
                ("EPERM".to_owned(), 2),
                ("file ended early".to_owned(), 1)
            ]
        );
    }

    /// `EPERM` as the OS numbers it (1 on Linux).
    fn libc_eperm() -> i32 {
        nix::errno::Errno::EPERM as i32
    }

    #[test]
    fn incoming_error_kind_maps_to_its_json_rpc_code_id_and_offset() {
        let e = parse_incoming(b"{\"jsonrpc\":\"2.0\",").unwrap_err();
        assert!(matches!(e.kind, IncomingErrorKind::Parse(_)), "{e:?}");
        assert_eq!((e.code(), e.id.as_ref()), (PARSE_ERROR, None));
        let r = e.response().to_value();
        assert_eq!(r["id"], Value::Null);
        assert_eq!(r["error"]["code"], json!(PARSE_ERROR));
        assert_eq!(r["error"]["data"]["offset"], json!(e.offset().unwrap()));
        assert_eq!(r["error"]["message"], json!(format!("mcptape serve: {e}")));
        assert!(e.to_string().starts_with("parse error: "), "{e}");

        // A valid id is echoed with an envelope error.
        let e = parse_incoming(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#).unwrap_err();
        assert!(matches!(e.kind, IncomingErrorKind::Invalid(_)), "{e:?}");
        assert_eq!(e.code(), INVALID_REQUEST);
        assert_eq!(e.response().to_value()["id"], json!(7));
        assert!(e.to_string().starts_with("invalid request: "), "{e}");

        let e = parse_incoming(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(e.kind, IncomingErrorKind::Batch);
        let r = e.response().to_value();
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(INVALID_REQUEST))
        );
        assert_eq!(r["error"]["data"], json!({"reason": "batch"}));
        assert_eq!(
            r["error"]["message"],
            json!("mcptape serve: invalid request: batches are not supported")
        );
    }

    #[test]
    fn splice_id_replaces_only_the_top_level_id_and_keeps_every_other_byte() {
        let raw = r#"{"result":{"id":"inner","text":"Caf\u00e9 \ud83d\ude00"}, "id" : 7 ,"jsonrpc":"2.0"}"#;
        let out = splice_id(raw, &json!("r-9")).unwrap();
        assert_eq!(
            out,
            r#"{"result":{"id":"inner","text":"Caf\u00e9 \ud83d\ude00"}, "id" : "r-9" ,"jsonrpc":"2.0"}"#
        );
        assert_eq!(splice_id(r#"{"result":{}}"#, &json!(1)), None);
    }

    /// A writer taking at most `per_call` bytes per call, across slice
    /// boundaries, failing once with `Interrupted` first.
    struct Trickle {
        out: Vec<u8>,
        per_call: usize,
        calls: usize,
        interrupted: bool,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.write_vectored(&[IoSlice::new(buf)])
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
            self.calls += 1;
            if !self.interrupted {
                self.interrupted = true;
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let mut left = self.per_call;
            for b in bufs {
                let n = b.len().min(left);
                self.out.extend_from_slice(&b[..n]);
                left -= n;
                if left == 0 {
                    break;
                }
            }
            Ok(self.per_call - left)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The same as [`Trickle`] for tokio, without vectored writes (the
    /// default `poll_write_vectored` writes the first non-empty slice).
    struct AsyncTrickle {
        out: Vec<u8>,
        per_call: usize,
        calls: usize,
    }

    impl AsyncWrite for AsyncTrickle {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let n = buf.len().min(self.per_call);
            self.calls += 1;
            self.out.extend_from_slice(&buf[..n]);
            std::task::Poll::Ready(Ok(n))
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// A recorded reply, its pieces under a new id, and the bytes
    /// `splice_id` gives for it plus the line end.
    fn recorded_pieces(blob_len: usize) -> (ReplyBytes, Vec<u8>) {
        let raw = format!(
            r#"{{"jsonrpc":"2.0","id":"old-7","result":{{"contents":[{{"uri":"file:///p/a.png","blob":"{}","id":3}}]}}}}"#,
            "QUJD".repeat(blob_len / 4)
        );
        let (h, t) = split_at_id(&raw).unwrap();
        let id_at = h.len()..raw.len() - t.len();
        let body =
            ReplyBytes::spliced(SharedText::from(raw.as_str()), id_at, r#""r-12345""#).unwrap();
        let mut want = splice_id(&raw, &json!("r-12345")).unwrap().into_bytes();
        want.push(b'\n');
        (body, want)
    }

    #[test]
    fn vectored_write_of_the_pieces_gives_exactly_the_spliced_bytes() {
        for (blob_len, per_call) in [(0, 1), (8, 1), (8, 3), (4096, 7), (4096, 1 << 20)] {
            let (body, want) = recorded_pieces(blob_len);
            assert_eq!(body.len() + 1, want.len());
            assert_eq!(body.to_text().as_bytes(), &want[..want.len() - 1]);
            assert_eq!(body.to_string(), body.to_text());
            let mut w = Trickle {
                out: Vec::new(),
                per_call,
                calls: 0,
                interrupted: false,
            };
            write_all_vectored(&mut w, &mut body.line_slices()).unwrap();
            assert_eq!(w.out, want, "blob {blob_len}, {per_call} bytes per call");
            // One interrupted call, then ceil(len / per_call) writes.
            assert_eq!(w.calls, 1 + want.len().div_ceil(per_call));
        }
    }

    #[test]
    fn vectored_write_of_a_whole_reply_and_a_writer_taking_nothing() {
        let body = ReplyBytes::whole(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned());
        assert_eq!(body.pieces()[1], b"");
        let mut out = Vec::new();
        write_all_vectored(&mut out, &mut body.line_slices()).unwrap();
        assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        // A writer that takes 0 bytes: WriteZero, not a loop.
        let mut full: &mut [u8] = &mut [];
        let e = write_all_vectored(&mut full, &mut body.line_slices()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WriteZero);
        // A range off the text is refused.
        assert_eq!(ReplyBytes::spliced(SharedText::from("{}"), 1..3, "1"), None);
    }

    #[tokio::test]
    async fn async_write_of_the_pieces_gives_exactly_the_spliced_bytes() {
        // Small: joined into one write. Large: the pieces in order, few bytes per call.
        for (blob_len, per_call) in [(8, 1 << 20), (8, 5), (JOIN_BELOW_BYTES, 4093)] {
            let (body, want) = recorded_pieces(blob_len);
            let mut w = AsyncTrickle {
                out: Vec::new(),
                per_call,
                calls: 0,
            };
            write_line_async(&mut w, &body).await.unwrap();
            assert_eq!(w.out, want, "blob {blob_len}, {per_call} bytes per call");
            if want.len() <= per_call {
                assert_eq!(w.calls, 1, "a small reply is one write");
            }
        }
    }

    /// The stdio server's pieces and the joined body of the public
    /// `decide_bytes` are the same bytes: the recorded reply, byte-exact,
    /// under the client's id.
    #[test]
    fn recorded_reply_in_pieces_is_the_joined_body_byte_for_byte() {
        let tape = tiny_tape();
        let raw = tape
            .exchanges
            .iter()
            .find(|e| tape.request(e).method == method::RESOURCES_READ)
            .unwrap()
            .reply_raw
            .clone();
        let uri = tape.reads()[0]["uri"].as_str().unwrap().to_owned();
        let server = zero_latency_server(tape);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":18446744073709551616,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        );
        let Answer::Reply { body: pieces, .. } = server.decide_bytes_in_pieces(line.as_bytes())
        else {
            panic!("expected a reply");
        };
        let Answer::Reply { body: joined, .. } = server.decide_bytes(line.as_bytes()) else {
            panic!("expected a reply");
        };
        let (h, t) = split_at_id(&raw).unwrap();
        assert_eq!(joined, format!("{h}18446744073709551616{t}"));
        assert_eq!(pieces.pieces()[1], b"18446744073709551616");
        let mut out = Vec::new();
        write_all_vectored(&mut out, &mut pieces.line_slices()).unwrap();
        assert_eq!(out, format!("{joined}\n").into_bytes());
    }

    /// A served tape ([`Tape::served`]) of a recording whose ids lie past
    /// `u64` and `i64` answers each recorded request, sent again with its
    /// recorded id, with the recorded reply byte for byte (written from the
    /// file's bytes with the id spliced where the one reader found it), and
    /// under another id past `u64` with only the id's digits changed; a
    /// cancellation names such an id by its raw text.
    #[test]
    fn served_tape_answers_ids_past_u64_byte_identical_to_the_recording() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ids-past-u64.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        let bytes = Arc::new(crate::tape::TapeBytes::from(text.clone()));
        let tape = Tape::served(&bytes).unwrap().tape;
        // The recorded messages, by direction, as their exact text.
        let msgs: Vec<(&str, &str)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let dir = if l.contains(r#""dir":"c2s""#) {
                    "c2s"
                } else {
                    "s2c"
                };
                let at = l.find(r#""msg":"#).unwrap() + 6;
                (dir, &l[at..l.len() - 1])
            })
            .collect();
        let server = zero_latency_server(tape);
        let mut answered = 0;
        for pair in msgs.windows(2) {
            let [("c2s", request), ("s2c", reply)] = pair else {
                continue;
            };
            let Answer::Reply { body, id_text, .. } =
                server.decide_bytes_in_pieces(request.as_bytes())
            else {
                panic!("{request}: expected a reply");
            };
            let mut out = Vec::new();
            write_all_vectored(&mut out, &mut body.line_slices()).unwrap();
            assert_eq!(out, format!("{reply}\n").into_bytes(), "{request}");
            let other = request.replacen(&id_text, "36893488147419103232", 1);
            let Answer::Reply { body, .. } = server.decide_bytes(other.as_bytes()) else {
                panic!("{other}: expected a reply");
            };
            assert_eq!(body, reply.replacen(&id_text, "36893488147419103232", 1));
            answered += 1;
        }
        // initialize and the three reads.
        assert_eq!(answered, 4);
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":-9223372036854775809}}"#;
        let inc = parse_incoming_raw(cancel.as_bytes()).unwrap();
        assert_eq!(inc.cancel_text.as_deref(), Some("-9223372036854775809"));
        assert_eq!(inc.id_text, None);
    }

    /// serde_json's `Value` reads an object keyed by its private raw-value
    /// token as a `RawValue`: such params made `serve` answer "message has no
    /// method, result or error" with a null id. They are ordinary members now
    /// (`mcptape_wire::json::value_from_slice`).
    #[test]
    fn params_keyed_by_serde_json_private_raw_value_token_are_an_ordinary_member() {
        let key = "$serde_json::private::RawValue";
        for (params, members) in [
            (
                r#"{"$serde_json::private::RawValue":"x"}"#,
                vec![(key, json!("x"))],
            ),
            (
                r#"{"$serde_json::private::RawValue":2,"uri":"a://b"}"#,
                vec![(key, json!(2)), ("uri", json!("a://b"))],
            ),
        ] {
            assert!(serde_json::from_str::<Value>(params).is_err(), "{params}");
            let req = format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{params}}}"#
            );
            let inc = parse_incoming_raw(req.as_bytes()).unwrap();
            assert_eq!(inc.id_text.as_deref(), Some("3"));
            let Message::Request(r) = &inc.message else {
                panic!("{req}: a request")
            };
            assert_eq!(r.method, "resources/read");
            let got: Vec<(&str, Value)> = r
                .params
                .as_ref()
                .and_then(Value::as_object)
                .unwrap()
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            assert_eq!(got, members, "{req}");
        }
    }

    /// `serve`'s tape ([`ReplyBodies::Served`](crate::tape::ReplyBodies::Served), replies
    /// shared with the file's text) answers every recorded request of every corpus transcript
    /// with the same bytes as a server on the full tape, and an unrecorded `initialize` or
    /// `server/discover` (the other era's handshake, built from the recorded result) the same.
    #[test]
    fn served_tape_answers_every_recorded_request_like_the_full_tape() {
        let paths = crate::tape::tests::corpus_transcripts();
        let server = zero_latency_server;
        let mut answered = 0;
        for path in &paths {
            let (_, full, served) = crate::tape::tests::full_and_served(path);
            let mut lines: Vec<String> = full
                .exchanges
                .iter()
                .map(|e| {
                    let r = full.request(e);
                    json!({"jsonrpc": "2.0", "id": "x-1", "method": r.method.as_str(),
                        "params": r.params.as_ref()})
                    .to_string()
                })
                .collect();
            for m in [method::INITIALIZE, method::SERVER_DISCOVER] {
                lines.push(
                    json!({"jsonrpc": "2.0", "id": 9, "method": m, "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "c", "version": "1"}}})
                    .to_string(),
                );
            }
            let (a, b) = (server(full), server(served));
            for line in &lines {
                assert_eq!(
                    a.decide_bytes(line.as_bytes()),
                    b.decide_bytes(line.as_bytes()),
                    "{}: {line}",
                    path.display()
                );
                answered += 1;
            }
            assert_eq!(a.summary().matched, b.summary().matched);
        }
        assert!(answered > 20, "{answered}");
    }

    #[test]
    fn split_at_id_gives_the_bytes_around_the_id_for_pre_encoding() {
        let raw = r#"{"jsonrpc":"2.0","id":"old-7","result":{"t":"\u00e9"}}"#;
        let (head, tail) = split_at_id(raw).unwrap();
        assert_eq!(head, r#"{"jsonrpc":"2.0","id":"#);
        assert_eq!(tail, r#","result":{"t":"\u00e9"}}"#);
        assert_eq!(split_at_id(r#"{"id":1}"#), Some((r#"{"id":"#, "}")));
        assert_eq!(split_at_id("not json"), None);
        assert_eq!(splice_id("[1]", &json!(1)), None);
    }
}
