//! The rule catalogue: every conformance rule `mcptape check` runs, with its
//! stable id, severity, one-line summary, source (spec revision + section, SEP
//! or seed) and the long text `mcptape explain RULE` prints.
//!
//! Rule ids are stable: they are what `--allow RULE` names, what
//! `corpus/violations/<id>.jsonl` is called, and what the JUnit test case
//! names. A rule is never renamed; a retired rule keeps its id reserved.

use std::fmt;

use serde::Serialize;

/// How bad a finding is. Any unallowed [`Severity::Error`] finding makes
/// `mcptape check` exit non-zero; warnings never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Advice (a SHOULD of the spec or a seed's recommendation).
    Warning,
    /// A violation of a MUST of the spec revision in force.
    Error,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One conformance rule of the catalogue ([`RULES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id, kebab-case (`contents-text-and-blob`).
    pub id: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// One-line description.
    pub summary: &'static str,
    /// Where the rule comes from: spec revision and section, SEP, RFC or seed.
    pub source: &'static str,
    /// Which protocol revisions the rule applies to, in words (`all`, `2026-07-28`).
    pub revisions: &'static str,
    /// The long explanation printed by `mcptape explain RULE`: what fires it,
    /// why it matters, how to fix it.
    pub explain: &'static str,
}

macro_rules! rules {
    ($( $konst:ident = { id: $id:literal, severity: $sev:ident, summary: $summary:literal,
        source: $source:literal, revisions: $revs:literal, explain: $explain:literal $(,)? } )*) => {
        $(
            #[doc = concat!("`", $id, "` — ", $summary)]
            pub const $konst: &Rule = &Rule {
                id: $id,
                severity: Severity::$sev,
                summary: $summary,
                source: $source,
                revisions: $revs,
                explain: $explain,
            };
        )*
        /// Every rule, in catalogue order (the order of `mcptape explain --list`
        /// and of the JUnit test cases).
        pub const RULES: &[&Rule] = &[$($konst),*];
    };
}

rules! {
    TRANSCRIPT_UNREADABLE = {
        id: "transcript-unreadable", severity: Error,
        summary: "the file is not an mcptape transcript (bad or missing header, or a record line that is not a record)",
        source: "mcptape transcript format v1 (crates/mcptape-transcript)",
        revisions: "all",
        explain: "The transcript reader refused the file: the first line is not a valid header, or a \
complete line is not a valid record. No other rule can run on it. Re-record the session, or fix the \
hand-made file so that every line follows the format documented in crates/mcptape-transcript/src/lib.rs.",
    }
    TRANSCRIPT_TRUNCATED = {
        id: "transcript-truncated", severity: Warning,
        summary: "the transcript ends in a cut line (the recorder crashed or was killed); the partial record was dropped",
        source: "mcptape transcript format v1 (crash-tolerant reader)",
        revisions: "all",
        explain: "The last line of the file has no line terminator and does not parse: the recorder \
stopped mid-write. Every complete record was kept and checked; the dropped bytes were not. Requests \
whose answers were in the dropped part may also fire request-unanswered.",
    }
    RECORDING_NO_EXIT = {
        id: "recording-no-exit", severity: Warning,
        summary: "recording ended without an exit record (the stdio recorder was killed on a line boundary, or the file was cut there)",
        source: "mcptape transcript format v1 (the stdio recorder writes an exit record last, once the server has exited)",
        revisions: "all (stdio transcripts; HTTP recordings have no exit record by design)",
        explain: "`mcptape record` (stdio) writes an `exit` record as the last line, with the server's \
exit code or signal, once the server has exited and every line is recorded. A stdio transcript \
whose last line is a whole record but not an exit record was ended from outside: the recorder was \
killed (SIGKILL, the OOM killer) or the file was cut on a line boundary (or it was made by hand). \
The recorder writes each line into the transcript before it forwards it, so the records are \
complete up to the kill: nothing the client or the server received is missing. What is unknown is \
how the session ended: the server's exit status, and whether answers were still on the way (open \
requests also fire request-unanswered). A file cut mid-line fires transcript-truncated instead, and \
one whose last line is unreadable fires transcript-unreadable alone (that line may be the exit record). \
Re-record the session to get a complete ending, or keep the file knowing its end is unknown.",
    }
    RECORD_TIME_BEYOND_LIMIT = {
        id: "record-time-beyond-limit", severity: Error,
        summary: "a record stamped with a `tUs` beyond mcptape_transcript::MAX_RECORDED_T_US (30 days): not a recording time",
        source: "mcptape transcript format v1 (`tUs`: microseconds since the recording started, monotonic clock); mcptape_transcript::MAX_RECORDED_T_US",
        revisions: "all",
        explain: "Every record's `tUs` counts microseconds from the start of the recording. \
`mcptape record` sessions last seconds to hours; a stamp past 30 days \
(mcptape_transcript::MAX_RECORDED_T_US, 2592000000000 µs) is a corrupt or hand-edited value \
(18446744073709551615 is u64::MAX, 584,942 years). `mcptape serve` replays the recorded gap between a \
request and its answer (latency model `recorded`), so it refuses such a transcript rather than \
wait that long. Fires once per record, naming its `tUs` and the limit. Fix the stamp (the records \
around it say when it happened) or re-record the session.",
    }
    RECORD_TIME_BACKWARDS = {
        id: "record-time-backwards", severity: Error,
        summary: "a record stamped with a `tUs` earlier than the record above it: time runs backwards (a response before its request, a progress notification after its reply)",
        source: "mcptape transcript format v1 (`tUs` from one monotonic clock; the recorder stamps under its sink's lock and never writes a time earlier than the last record's)",
        revisions: "all",
        explain: "`mcptape record` and `mcptape crawl` stamp every record from one monotonic clock \
and raise a stamp earlier than the last record's to it (under the transcript sink's lock), and the \
HAR import sorts by time, so a file they wrote never goes back in time: one that does was edited \
or merged by hand. It is not what happened on the wire: a response stamped before its request \
implies a negative server delay, and `mcptape serve` sends each message at its own recorded time, \
so a progress notification stamped after its reply goes after it over stdio and is not sent over \
HTTP (the stream ends with the reply). Fires on each record stamped before the record above it, \
naming that record and both times.",
    }
    STDIO_NON_JSONRPC_LINE = {
        id: "stdio-non-jsonrpc-line", severity: Error,
        summary: "a line on the server's stdout (or client's stdin) that is not a JSON-RPC message",
        source: "MCP 2025-06-18 / 2025-11-25 / 2026-07-28 basic/transports#stdio",
        revisions: "all",
        explain: "On the stdio transport the server MUST NOT write anything to its stdout that is not a \
valid MCP message, and the client MUST NOT write anything to the server's stdin that is not one. A \
banner, a log line or a progress bar on stdout corrupts the stream for strict clients. Log to stderr \
instead (stderr lines are recorded separately and never fire this rule).",
    }
    STDIO_EMBEDDED_NEWLINE = {
        id: "stdio-embedded-newline", severity: Error,
        summary: "a stdio message that contains a line break (pretty-printed JSON or a raw CR inside the message)",
        source: "MCP 2026-07-28 basic/transports#stdio (messages are newline-delimited and MUST NOT contain embedded newlines); seed resources-read-response",
        revisions: "all",
        explain: "stdio frames messages by newline, so a message must be a single line. Fires on a \
message record of a stdio transcript whose bytes contain CR or LF, and on a run of consecutive \
non-JSON stdout lines that together form one JSON value (a pretty-printed message split over \
several lines). Serialize messages compactly; base64 blobs never need line breaks.",
    }
    MESSAGE_NOT_JSONRPC = {
        id: "message-not-jsonrpc", severity: Error,
        summary: "a JSON value that is not a valid JSON-RPC 2.0 message (request, notification, response, error or batch)",
        source: "JSON-RPC 2.0 §4–§6; MCP basic#messages",
        revisions: "all",
        explain: "The message parsed as JSON but the strict envelope parser (mcptape-wire envelope::scan_frame) \
refused it: a missing or wrong `jsonrpc` member, `\"id\": null` on a request, both `result` and \
`error`, an id that is neither string nor integer, a duplicate key. The parser's reason is in the \
finding. No pairing or result rule runs on such a message.",
    }
    JSONRPC_BATCH_REMOVED = {
        id: "jsonrpc-batch-removed", severity: Error,
        summary: "a JSON-RPC batch (an array of messages) in a revision that has none (2025-06-18 and later)",
        source: "MCP 2025-06-18 changelog (\"Remove support for JSON-RPC batching\"); 2025-06-18 / 2025-11-25 / 2026-07-28 basic/transports (one JSON-RPC request, notification or response per stdio line or POST body); JSON-RPC 2.0 §6",
        revisions: "2025-06-18 and later (2025-03-26 allowed batches)",
        explain: "A message record (a stdio line, an HTTP body, an SSE event) holds a JSON array of \
messages: a JSON-RPC 2.0 batch. MCP 2025-03-26 let peers send batches and required them to receive \
them; 2025-06-18 removed batching, and every later revision carries exactly one request, \
notification or response per stdio line and per POST body. A peer of those revisions may refuse \
the batch outright (`mcptape serve` answers one with -32600 `batches are not supported`), so the \
requests in it go unanswered. Fires once per batch record (pointer empty), whatever its elements; \
each element is still checked as a message (a bad one also fires message-not-jsonrpc). Send the \
messages one at a time, or negotiate 2025-03-26 if the peer really batches.",
    }
    SSE_EVENT_NOT_JSONRPC = {
        id: "sse-event-not-jsonrpc", severity: Warning,
        summary: "an SSE event of a Streamable HTTP response whose data is not a JSON-RPC message (a JSON heartbeat): skipped",
        source: "MCP 2025-06-18 / 2025-11-25 / 2026-07-28 basic/transports#streamable-http (each event's data is one JSON-RPC message); WHATWG HTML §9.2 server-sent events",
        revisions: "all",
        explain: "Over Streamable HTTP, a server->client record that came from an event stream (the \
exchange's response is text/event-stream, or the record carries an SSE event id) holds data that is \
not a JSON-RPC 2.0 message or batch: no `\"jsonrpc\": \"2.0\"` member, e.g. a keep-alive \
`data: {\"type\":\"ping\"}`. The transport's own SSE parser (mcptape-transport sse::SsePayload::Other) \
reports such events and skips them, and so does check: a warning, not message-not-jsonrpc. Send \
keep-alives as SSE comments (`: ping`), which no client mistakes for a message.",
    }
    READ_RESULT_MALFORMED = {
        id: "read-result-malformed", severity: Error,
        summary: "a resources/read result whose `contents` is missing or not an array, or an entry that is not an object / has a non-string field",
        source: "MCP 2026-07-28 schema.ts ReadResourceResult, TextResourceContents, BlobResourceContents",
        revisions: "all",
        explain: "ReadResourceResult.contents is a required array of TextResourceContents | \
BlobResourceContents objects; `text`, `blob`, `uri` and `mimeType` are strings. A client cannot \
interpret anything else. The pointer names the offending member.",
    }
    CONTENTS_NEITHER_TEXT_NOR_BLOB = {
        id: "contents-neither-text-nor-blob", severity: Error,
        summary: "a contents entry with neither `text` nor `blob`",
        source: "MCP 2026-07-28 schema.ts TextResourceContents | BlobResourceContents; seed binary-contents-qa",
        revisions: "all",
        explain: "Every entry of a resources/read `contents` array carries exactly one payload field: \
`text` (characters) or `blob` (base64 bytes). An entry with neither is not an empty document, it is \
a server bug; a host that turns it into \"\" hides the bug behind a model that appears to have read \
the document. Return the payload, or a JSON-RPC error if there is none.",
    }
    CONTENTS_TEXT_AND_BLOB = {
        id: "contents-text-and-blob", severity: Error,
        summary: "a contents entry with both `text` and `blob`",
        source: "MCP 2026-07-28 schema.ts TextResourceContents | BlobResourceContents; seed binary-contents-qa",
        revisions: "all",
        explain: "`text` and `blob` are alternatives, never options on one object. Clients disagree on \
which one wins (an untagged decoder silently drops one of them), so the same bytes mean different \
things to different hosts. The MCP conformance suite's JSON-schema check accepts such an entry \
(the schema has no `not`); mcptape does not. Send one entry per representation.",
    }
    CONTENTS_MISSING_URI = {
        id: "contents-missing-uri", severity: Error,
        summary: "a contents entry without a string `uri`",
        source: "MCP 2026-07-28 schema.ts ResourceContents.uri (required)",
        revisions: "all",
        explain: "Every contents entry repeats the uri of what it holds (it may differ from the \
requested uri when one read expands into several entries). Without it a host cannot attribute the \
payload. Fires when `uri` is absent or not a string.",
    }
    BLOB_NOT_CANONICAL_BASE64 = {
        id: "blob-not-canonical-base64", severity: Error,
        summary: "a `blob` that is not canonical standard base64 with padding",
        source: "MCP 2026-07-28 schema.ts BlobResourceContents.blob (format: byte); RFC 4648 §4, §3.5 (canonical encoding)",
        revisions: "all",
        explain: "`blob` is standard base64 (`A-Z a-z 0-9 + /`) with `=` padding only at the end and \
zero trailing bits: length a multiple of 4. URL-safe characters, whitespace or CRLF inside, missing \
padding, `=` in the middle or non-zero pad bits (`Zh==`) are decoded differently (or refused) by \
different clients. The finding gives the byte offset of the first bad character within the blob as recorded (from the \
byte after its opening quote, JSON escapes counted as written) and shows that character as recorded \
(`\\u00e9`, not the byte it unescapes to).",
    }
    READ_EMPTY_CONTENTS = {
        id: "read-empty-contents", severity: Error,
        summary: "a resources/read answered with an empty `contents` array instead of an error",
        source: "MCP 2026-07-28 server/resources#error-handling (SEP-2164: servers MUST NOT return an empty contents array for a missing resource); seed resources-primitive-lesson",
        revisions: "all",
        explain: "An empty `contents` array cannot say whether the resource exists and is blank or does \
not exist at all, so absence is an error-shaped answer: JSON-RPC -32602 with `data.uri` (or legacy \
-32002). A transcript cannot prove the resource was missing, and it does not need to: an existing \
blank resource is one entry with `\"text\": \"\"`, so ANY `contents: []` answer is either a missing \
resource answered wrongly or a blank resource answered ambiguously. mcptape therefore fires on every \
empty contents (stricter than the conformance suite's sep-2164-no-empty-contents, which only reads a \
URI it knows is missing). The finding says whether the uri was seen in a resources/list result.",
    }
    NOT_FOUND_CODE = {
        id: "not-found-code", severity: Error,
        summary: "a resource-not-found error with the legacy code -32002 under 2026-07-28",
        source: "MCP 2026-07-28 server/resources#error-handling (SEP-2164: -32602 Invalid Params); 2025-06-18/2025-11-25 used -32002",
        revisions: "all (-32002 is accepted as legacy before 2026-07-28)",
        explain: "Under 2026-07-28 a resources/read for a URI that does not exist MUST be answered with \
JSON-RPC error -32602 and `data.uri`; -32002 (from the implementation-defined server-error range, \
never formally reserved) is the older revisions' code and is an error there. Before 2026-07-28, \
-32002 is accepted. The code decides what is a not-found (-32602 with `data.uri`, or -32002): an \
error that only says \"not found\" in its message under another code (e.g. -32603, which tells \
hosts to retry) fires the labelled warning not-found-guessed-from-message instead.",
    }
    NOT_FOUND_DATA_URI = {
        id: "not-found-data-uri", severity: Error,
        summary: "a legacy -32002 not-found without `data.uri` (2026-07-28), or a not-found whose `data.uri` differs from the requested uri",
        source: "MCP 2026-07-28 server/resources#error-handling (SEP-2164: data.uri names the requested uri)",
        revisions: "missing: 2026-07-28; differing: all",
        explain: "The not-found error carries `data: { uri }` naming exactly what the client asked for, \
so a host that issued several reads can tell which one failed. Fires under 2026-07-28 when a \
-32002 not-found has no string `data.uri`, and under any revision when `data.uri` is present but \
differs from the request's `params.uri`. A -32602 without `data.uri` is not a not-found by code (it \
may be a malformed uri); when its message says not found, not-found-guessed-from-message warns.",
    }
    NOT_FOUND_GUESSED_FROM_MESSAGE = {
        id: "not-found-guessed-from-message", severity: Warning,
        summary: "a resources/read error whose message says \"not found\" but whose code and data do not (a guess from the message text)",
        source: "MCP 2026-07-28 server/resources#error-handling (SEP-2164: -32602 with data.uri); 2025-06-18/2025-11-25 -32002",
        revisions: "all",
        explain: "The code decides whether an error is a resource-not-found: -32602 with `data.uri`, \
or the legacy -32002. An error whose message reads like a not-found (\"Resource not found\", \
\"does not exist\", ...) under another code, or under -32602 without `data.uri`, is only a guess \
from the text: mcptape does not apply not-found-code or not-found-data-uri to it, and says so \
with this warning. A host cannot read the message either: if the resource is missing, answer \
-32602 with `data: { uri }`; if it is another failure, say which in the message.",
    }
    RESULT_MISSING_RESULT_TYPE = {
        id: "result-missing-resultType", severity: Error,
        summary: "a 2026-07-28 server result without `resultType`",
        source: "MCP 2026-07-28 schema.ts Result.resultType (servers implementing this revision MUST include it); seed resources-read-response",
        revisions: "2026-07-28",
        explain: "From 2026-07-28 every result a server returns carries `resultType` (\"complete\" for \
an ordinary answer, \"input_required\" for a multi-round one). A client talking to an older server \
treats a missing value as \"complete\", so the omission is silent but wrong for a server that \
negotiated 2026-07-28.",
    }
    RESULT_MISSING_CACHE_HINTS = {
        id: "result-missing-cache-hints", severity: Error,
        summary: "a 2026-07-28 cacheable result (resources/read, the list methods) without `ttlMs` and `cacheScope`",
        source: "MCP 2026-07-28 SEP-2549 caching hints (tools/list, prompts/list, resources/list, resources/templates/list, resources/read, server/discover)",
        revisions: "2026-07-28",
        explain: "Complete results of the cacheable methods MUST carry `ttlMs` (integer ms, >= 0: how \
long the answer stays fresh) and `cacheScope` (\"public\" or \"private\": who may share a cached \
copy). Without them a client cannot tell a shared changelog from one user's private note. The \
finding names which of the two is missing.",
    }
    CACHE_HINTS_INVALID = {
        id: "cache-hints-invalid", severity: Error,
        summary: "`ttlMs` that is not a non-negative integer, or `cacheScope` that is not \"public\" / \"private\"",
        source: "MCP 2026-07-28 SEP-2549 (ttlMs: integer minimum 0; cacheScope: \"public\" | \"private\")",
        revisions: "all (wherever the fields are present)",
        explain: "A present cache hint must be valid: `ttlMs` an integer >= 0 (ms), `cacheScope` exactly \
\"public\" or \"private\". An unknown scope must not be guessed (guessing \"public\" leaks private data \
through shared caches).",
    }
    MIMETYPE_SNIFF_MISMATCH = {
        id: "mimetype-sniff-mismatch", severity: Warning,
        summary: "a blob whose declared `mimeType` disagrees with the type sniffed from its bytes",
        source: "seed binary-contents-qa (mimeType is a declaration, not a guarantee); WHATWG MIME Sniffing §7",
        revisions: "all",
        explain: "The decoded blob starts with the signature of another type (a JPEG declared as \
image/png). A host that trusts the label hands the wrong type to a renderer or a model provider. \
Only fires when the bytes have a recognised signature; unrecognised bytes are not judged.",
    }
    TEXTLIKE_MIMETYPE_AS_BLOB = {
        id: "textlike-mimetype-as-blob", severity: Warning,
        summary: "text (a text-like mimeType whose bytes are valid UTF-8) shipped base64-encoded as `blob`",
        source: "seed binary-contents-qa (base64-encoding text makes it opaque and a third larger)",
        revisions: "all",
        explain: "The entry declares a text-like type (text/*, application/json, +json, +xml, \
application/xml, application/javascript, ...) and its decoded bytes are valid UTF-8: it has a \
faithful text representation and should travel in `text`. Text in an unknown legacy encoding (not \
valid UTF-8) is honest as a blob and does not fire.",
    }
    DATA_URI_IN_TEXT = {
        id: "data-uri-in-text", severity: Warning,
        summary: "a `data:` URI shipped in `text` instead of the bytes in `blob`",
        source: "seed resources-read-response (sending a data URI inside text works by accident in some hosts and nowhere else)",
        revisions: "all",
        explain: "The `text` of an entry is a `data:...;base64,...` URI: binary smuggled through the \
text shape. Decode it and send the bytes as `blob` with the right `mimeType`.",
    }
    BLOB_OVER_SIZE_THRESHOLD = {
        id: "blob-over-size-threshold", severity: Warning,
        summary: "a blob larger than the size threshold (default 1 MiB decoded): publish a derived resource",
        source: "seed binary-contents-qa / resources-read-response (a 1,834,208-byte PNG is 2,445,612 base64 chars; large blobs should be a derived resource or an https:// pointer)",
        revisions: "all",
        explain: "The whole blob travels base64-encoded in one JSON string (4 chars per 3 bytes) and \
both sides hold it in memory; raw PDF or PNG bytes are rarely usable by a model anyway. Publish a \
narrower derived resource (extracted text, a thumbnail, a page range) or a pointer. The threshold is \
--blob-threshold BYTES (default mcptape_check::DEFAULT_BLOB_THRESHOLD_BYTES).",
    }
    REQUEST_UNANSWERED = {
        id: "request-unanswered", severity: Error,
        summary: "a request that got no response and was not cancelled",
        source: "JSON-RPC 2.0 §4.1 (the server MUST reply to every request); MCP basic/lifecycle#timeouts, basic/utilities/cancellation",
        revisions: "all",
        explain: "Every request is answered exactly once, or cancelled with notifications/cancelled \
by its sender (over Streamable HTTP a client also cancels by closing the request's event stream, \
which the HTTP recorder notes as an `http` record with note `clientClosedStream`). A request \
still open at the end of the transcript means the peer dropped it or the recording ended before the \
answer (a killed server: see the exit record; a killed recorder: transcript-truncated or \
recording-no-exit). Fires on the request's record.",
    }
    REQUEST_ANSWERED_TWICE = {
        id: "request-answered-twice", severity: Error,
        summary: "a second response to a request that was already answered",
        source: "JSON-RPC 2.0 §5 (one Response object per request)",
        revisions: "all",
        explain: "A request gets exactly one response. A second one (same id, after the first) is \
either a server bug or an id collision; the client will treat it as unknown. Fires on the second \
response.",
    }
    REQUEST_ID_REUSED = {
        id: "request-id-reused", severity: Error,
        summary: "a request sent with the id of an earlier request of the same sender, already answered, in one stdio session",
        source: "MCP 2025-06-18 / 2025-11-25 basic#requests (the request ID MUST NOT have been previously used by the requestor within the same session)",
        revisions: "all",
        explain: "JSON-RPC lets a sender reuse an id once its request is answered; MCP does not: within a session each request of a sender has an id it never used before, so a late or duplicated response (a retry, a response after cancel) can never be taken for the answer to a newer request. Checked over stdio, where the transcript is one session (one server process); an HTTP transcript holds many sessions and stateless requests, and ids legitimately repeat across them. Reuse is seen within the last MAX_ANSWERED_KEYS_KEPT (65,536) answered requests, the most check remembers. An id sent again while its first request is still open fires request-unanswered on the first instead. Fires on the second request.",
    }
    RESPONSE_UNKNOWN_ID = {
        id: "response-unknown-id", severity: Error,
        summary: "a response whose id matches no request sent by the other side",
        source: "JSON-RPC 2.0 §5 (id MUST be the same as the request's); MCP basic#responses",
        revisions: "all",
        explain: "A response must answer a request the other peer sent with exactly that id (same \
type and value). An error response with `\"id\": null` (a request that could not be parsed) does not \
fire. A response whose id matches a request only after changing its type fires \
ids-differ-only-in-type instead.",
    }
    ERROR_ID_NULL = {
        id: "error-id-null", severity: Error,
        summary: "an error response with `\"id\": null` to a request whose id was readable (HTTP: the request of the same exchange; stdio: the only open request)",
        source: "JSON-RPC 2.0 §5 (id MUST be Null only if the request id could not be detected, i.e. Parse error / Invalid Request); MCP 2026-07-28 schema.ts JSONRPCErrorResponse.id",
        revisions: "all",
        explain: "A null id tells the client its request could not even be parsed, so it cannot tell \
which request failed. Over Streamable HTTP the answer travels on the request's own exchange, so \
mcptape pairs a null-id error with the one request POSTed in that exchange: if that request was a \
valid JSON-RPC request with an id, the server should have echoed the id. Over stdio it is paired \
as an error-id-missing error is: with the request when exactly one request of the other side is \
open; with several open it fires unpaired (none can be told apart); with none open it is the \
legitimate answer to an unreadable line and does not fire. A paired request counts as \
answered (it does not also fire request-unanswered). Seen live: server-everything answers every \
2026-07-28 request (no initialize) with `{\"id\":null,\"error\":{\"code\":-32000,...}}` and HTTP 400.",
    }
    ERROR_ID_MISSING = {
        id: "error-id-missing", severity: Error,
        summary: "an error response with no `id` member (HTTP: paired with the request of the same exchange)",
        source: "JSON-RPC 2.0 §5 (id is REQUIRED in a response; Null when the request id could not be read); MCP 2026-07-28 schema.ts JSONRPCErrorResponse.id",
        revisions: "all",
        explain: "A response without `id` cannot be matched to any request, and JSON-RPC requires the \
member (`null` when the request could not be read). Over Streamable HTTP the answer travels on the \
request's own exchange, so mcptape pairs the id-less error with the one open request POSTed in that \
exchange and counts it answered (no request-unanswered). Elsewhere it is paired only when exactly \
one request of the other side is open. Seen live: server-everything answers a request without a \
valid session with HTTP 400 `{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"Bad Request: \
No valid session ID provided\"}}`.",
    }
    RESPONSE_AFTER_CANCEL = {
        id: "response-after-cancel", severity: Warning,
        summary: "a response to a request its sender had already cancelled with notifications/cancelled",
        source: "MCP basic/utilities/cancellation (the receiver SHOULD not send a response after cancellation; the sender SHOULD ignore it)",
        revisions: "all",
        explain: "Cancellation races the answer, so a late response is expected now and then (the \
seeds' host cancels stragglers at 800 ms); a client must ignore it. Frequent late responses mean the \
server does not stop work on cancel.",
    }
    IDS_DIFFER_ONLY_IN_TYPE = {
        id: "ids-differ-only-in-type", severity: Error,
        summary: "two request ids of one sender, or a request and its response, that differ only in type (\"1\" vs 1)",
        source: "JSON-RPC 2.0 §4 (id is a String or Number and the response echoes it exactly); MCP basic#requests",
        revisions: "all",
        explain: "`\"1\"` and `1` are different ids. A sender that uses both in one session, or a \
responder that echoes an id with another type, breaks every client that normalises ids (JavaScript \
maps, loose comparisons) and every one that does not. Keep ids of one type and echo them byte for \
byte.",
    }
    PROTOCOL_VERSION_NOT_OFFERED = {
        id: "protocol-version-not-offered", severity: Error,
        summary: "a session that runs on a protocol version the other side did not offer",
        source: "MCP 2025-06-18 / 2025-11-25 basic/lifecycle#version-negotiation; 2026-07-28 server/discover (supportedVersions) and _meta io.modelcontextprotocol/protocolVersion",
        revisions: "all",
        explain: "initialize era: the server answered initialize with a protocolVersion other than the \
one the client offered, and the client went on with the session instead of disconnecting. \
2026-07-28: a request's `_meta[\"io.modelcontextprotocol/protocolVersion\"]` is not among the \
`supportedVersions` the server listed in its server/discover result.",
    }
    HTTP_PROTOCOL_VERSION_MISMATCH = {
        id: "http-protocol-version-mismatch", severity: Error,
        summary: "over Streamable HTTP, the MCP-Protocol-Version header differs from the request body's protocol version (2026-07-28)",
        source: "MCP 2026-07-28 schema.ts RequestMetaObject io.modelcontextprotocol/protocolVersion (MUST match the MCP-Protocol-Version header, else 400); basic/transports#streamable-http",
        revisions: "2026-07-28",
        explain: "A 2026-07-28 request over HTTP states its revision twice: the MCP-Protocol-Version \
header and `params._meta[\"io.modelcontextprotocol/protocolVersion\"]`. They MUST be equal (a missing \
header counts as a mismatch), and a server MUST reject a mismatch with 400 Bad Request. Fires on the \
request record; the finding says whether the server rejected it.",
    }
}

/// The rule with this id, if any.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.id == id)
}
