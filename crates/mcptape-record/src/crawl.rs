//! `mcptape crawl`: mcptape as the client of a real MCP server.
//!
//! Sequence (one request at a time, every message recorded byte-exact):
//! 1. handshake — `initialize` + `notifications/initialized` (spec 2025-11-25,
//!    "Lifecycle"), or for `--protocol 2026-07-28` a `server/discover` probe
//!    (spec 2026-07-28, "Lifecycle" §Discovery) falling back to `initialize`
//!    at [`FALLBACK_HANDSHAKE_VERSION`] when the server answers with an error
//!    (as the official SDK clients do);
//! 2. `resources/list` following every `nextCursor` (spec "Pagination");
//! 3. `resources/templates/list`, also paginated;
//! 4. `resources/read` of every listed resource, then of every template
//!    expansion given with `--expand`;
//! 5. one `resources/read` of a URI that does not exist.
//!
//! mcptape declares no client capabilities, so it answers every
//! server-to-client request except `ping` with JSON-RPC error `-32601`
//! (method not found) — `roots/list`, `sampling/createMessage`,
//! `elicitation/create` — and `ping` with an empty result.
//!
//! Over Streamable HTTP, the 2025-11-25 era carries `Mcp-Session-Id` and
//! `MCP-Protocol-Version` after `initialize` and ends with `DELETE`; the
//! 2026-07-28 era sends no session, and each request carries the
//! `MCP-Protocol-Version`, `Mcp-Method` and (for `resources/read`) `Mcp-Name`
//! headers plus the `_meta` envelope keys.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mcptape_transcript::{Direction, Event, HttpMeta, HttpNote, Redactor};
use mcptape_transport::child::StdioChild;
use mcptape_transport::http::{HttpClient, HttpError, ReplyItem};
use mcptape_transport::sse::SsePayload;
use mcptape_transport::stdio::{FrameRef, LineFramer, MAX_LINE_BYTES};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;

use crate::error::{Position, RecordError, RecordErrorKind};
use crate::http::MAX_HTTP_BODY_BYTES;
use crate::sink::{META_PROTOCOL_VERSION, TranscriptSink};
use crate::stdio::CHUNK_BYTES;

/// The protocol revision the handshake-era `initialize` asks for by default.
pub const DEFAULT_PROTOCOL: &str = "2025-11-25";

/// The modern revision that uses `server/discover` instead of `initialize`.
pub const MODERN_PROTOCOL: &str = "2026-07-28";

/// The protocol revisions `--protocol` accepts: 2025-06-18 and 2025-11-25
/// (`initialize`, spec "Lifecycle") and 2026-07-28 (`server/discover`).
pub const KNOWN_PROTOCOLS: &[&str] = &["2025-06-18", "2025-11-25", MODERN_PROTOCOL];

/// Accepts `version` only if it is one of [`KNOWN_PROTOCOLS`].
///
/// Errors: [`RecordErrorKind::UnknownProtocol`] otherwise.
pub fn check_protocol(version: &str) -> Result<(), RecordError> {
    if KNOWN_PROTOCOLS.contains(&version) {
        Ok(())
    } else {
        Err(RecordError::new(RecordErrorKind::UnknownProtocol {
            version: version.to_owned(),
        }))
    }
}

/// The `initialize` version used after a failed `server/discover` probe.
pub const FALLBACK_HANDSHAKE_VERSION: &str = "2025-11-25";

/// `_meta` key of the client capabilities in 2026-07-28 requests.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// `_meta` key of the client info in 2026-07-28 requests.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// Most `resources/list` (or `resources/templates/list`) pages followed (a
/// server returning a `nextCursor` forever would otherwise never end the crawl).
pub const MAX_LIST_PAGES: usize = 10_000;

/// Most concrete URIs one `--expand` may produce (product of the value lists).
pub const MAX_EXPANSIONS: usize = 10_000;

/// Default time a crawl request may take, in ms.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 30_000;

/// JSON-RPC "method not found" (JSON-RPC 2.0 §5.1).
pub const METHOD_NOT_FOUND: i64 = -32601;

/// What to crawl.
#[derive(Debug, Clone)]
pub enum CrawlTarget {
    /// A stdio server: argv.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint URL (`http://` only).
    Url(String),
}

/// A template and the values to expand it with (`--expand 'TEMPLATE' var=v1,v2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// The RFC 6570 template (levels 1–2: `{var}`, `{+var}`).
    pub template: String,
    /// Each variable with its values; the crawl reads the product of all lists.
    pub vars: Vec<(String, Vec<String>)>,
}

impl Expansion {
    /// Parses `var=v1,v2` assignments for `template`.
    ///
    /// Errors: [`RecordErrorKind::Expand`] for an assignment without `=` or
    /// with an empty variable name.
    pub fn parse(template: &str, assignments: &[String]) -> Result<Self, RecordError> {
        let mut vars = Vec::new();
        for a in assignments {
            let (k, v) = a.split_once('=').ok_or_else(|| {
                RecordError::new(RecordErrorKind::Expand(format!(
                    "--expand assignment `{a}` is not var=v1,v2"
                )))
            })?;
            if k.is_empty() {
                return Err(RecordError::new(RecordErrorKind::Expand(format!(
                    "--expand assignment `{a}` has no name"
                ))));
            }
            vars.push((k.to_owned(), v.split(',').map(str::to_owned).collect()));
        }
        Ok(Expansion {
            template: template.to_owned(),
            vars,
        })
    }

    /// Every concrete URI: the template expanded with each combination of values.
    ///
    /// Errors: [`RecordErrorKind::Expand`] for an unterminated `{`, an
    /// operator other than none or `+`, a variable with no values given, or
    /// more than [`MAX_EXPANSIONS`] combinations.
    pub fn uris(&self) -> Result<Vec<String>, RecordError> {
        let err = |m: String| RecordError::new(RecordErrorKind::Expand(m));
        let mut total: usize = 1;
        for (_, vals) in &self.vars {
            total = total.saturating_mul(vals.len());
        }
        if total > MAX_EXPANSIONS {
            return Err(err(format!(
                "--expand gives {total} URIs, more than MAX_EXPANSIONS ({MAX_EXPANSIONS})"
            )));
        }
        let mut out = Vec::with_capacity(total);
        let mut idx = vec![0usize; self.vars.len()];
        loop {
            let pick: Vec<(&str, &str)> = self
                .vars
                .iter()
                .zip(&idx)
                .map(|((k, vals), &i)| (k.as_str(), vals[i].as_str()))
                .collect();
            out.push(expand_one(&self.template, &pick).map_err(|m| err(format!("--expand: {m}")))?);
            // odometer
            let mut k = self.vars.len();
            loop {
                if k == 0 {
                    return Ok(out);
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < self.vars[k].1.len() {
                    break;
                }
                idx[k] = 0;
            }
        }
    }
}

/// RFC 6570 §3.2.2 (simple) and §3.2.3 (reserved) expansion of one template.
fn expand_one(template: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let j = after
            .find('}')
            .ok_or_else(|| format!("unterminated `{{` in template `{template}`"))?;
        let expr = &after[..j];
        let (reserved, names) = match expr.strip_prefix('+') {
            Some(n) => (true, n),
            None if expr.starts_with(['#', '.', '/', ';', '?', '&']) => {
                return Err(format!(
                    "operator `{}` in `{template}`: only {{var}} and {{+var}} are supported by --expand",
                    &expr[..1]
                ));
            }
            None => (false, expr),
        };
        let mut first = true;
        for name in names.split(',') {
            let value = vars
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("no values given for `{name}` of `{template}`"))?;
            if !first {
                out.push(',');
            }
            first = false;
            for b in value.bytes() {
                let unreserved =
                    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
                let reserved_ok = reserved && b":/?#[]@!$&'()*+,;=".contains(&b);
                if unreserved || reserved_ok {
                    out.push(b as char);
                } else {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Options of a crawl.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// The server.
    pub target: CrawlTarget,
    /// Requested protocol revision ([`DEFAULT_PROTOCOL`], or [`MODERN_PROTOCOL`] for discovery).
    pub protocol: String,
    /// Template expansions to read after the listed resources.
    pub expand: Vec<Expansion>,
    /// The URI to read that should not exist (default: derived from the first listed URI).
    pub missing_uri: Option<String>,
    /// Per-request time limit.
    pub request_timeout: Duration,
    /// Redaction of recorded HTTP headers.
    pub redactor: Redactor,
}

/// Progress of a crawl, for a progress bar.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CrawlProgress {
    /// The handshake completed at this protocol revision.
    Handshake {
        /// The negotiated revision.
        version: String,
    },
    /// Listing finished: this many reads are planned (listed + expansions + 1 missing).
    Planned {
        /// Total reads.
        reads: u64,
    },
    /// One read finished.
    Read {
        /// The URI read.
        uri: String,
    },
}

/// The outcome of one `resources/read`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOutcome {
    /// The URI requested.
    pub uri: String,
    /// Number of `TextResourceContents` entries in the result.
    pub text: usize,
    /// Number of `BlobResourceContents` entries in the result.
    pub blob: usize,
    /// Total base64 characters over the blob entries.
    pub blob_base64_chars: usize,
    /// The JSON-RPC error code, if the read failed.
    pub error_code: Option<i64>,
}

/// What a crawl did.
#[derive(Debug, Clone, Default)]
pub struct CrawlReport {
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// Whether `server/discover` was tried and failed, so `initialize` was used.
    pub fell_back: bool,
    /// URIs from `resources/list`, in order, over all pages.
    pub listed: Vec<String>,
    /// Number of `resources/list` pages.
    pub pages: usize,
    /// `uriTemplate`s from `resources/templates/list`.
    pub templates: Vec<String>,
    /// Every read, the listed ones first, then expansions, then the missing URI.
    pub reads: Vec<ReadOutcome>,
    /// Server-to-client requests answered (method names).
    pub answered_server_requests: Vec<String>,
}

/// A JSON-RPC reply: the `result` or the `error` object.
type Reply = Result<Value, Value>;

/// Runs a crawl, recording into `sink`.
///
/// Errors: [`RecordErrorKind::UnknownProtocol`] if [`CrawlOptions::protocol`]
/// is not one of [`KNOWN_PROTOCOLS`] (nothing is started then),
/// [`RecordErrorKind::Spawn`] / [`RecordErrorKind::Url`] if the server
/// cannot be reached, [`RecordErrorKind::Timeout`] if a request takes longer
/// than [`CrawlOptions::request_timeout`], [`RecordErrorKind::Closed`] if the
/// server goes away, [`RecordErrorKind::Protocol`] if the handshake fails or a
/// list reply is malformed; each with the crawl step ([`Position::Step`]).
pub async fn crawl(
    opts: CrawlOptions,
    sink: Arc<TranscriptSink>,
    mut progress: impl FnMut(CrawlProgress),
) -> Result<CrawlReport, RecordError> {
    check_options(&opts)?;
    let mut conn = match &opts.target {
        CrawlTarget::Command(argv) => Conn::Stdio(StdioConn::start(argv, sink.clone())?),
        CrawlTarget::Url(url) => Conn::Http(HttpConn::new(url, sink.clone(), opts.redactor)?),
    };
    let result = crawl_on(&mut conn, &opts, &mut progress).await;
    let closed = conn.close(&sink).await;
    let report = result?;
    closed?;
    Ok(report)
}

async fn crawl_on(
    conn: &mut Conn,
    opts: &CrawlOptions,
    progress: &mut impl FnMut(CrawlProgress),
) -> Result<CrawlReport, RecordError> {
    let mut c = Client {
        conn,
        next_id: 1,
        modern: None,
        timeout: opts.request_timeout,
        report: CrawlReport::default(),
    };
    c.handshake(&opts.protocol).await?;
    progress(CrawlProgress::Handshake {
        version: c.report.protocol_version.clone(),
    });

    // resources/list, every page.
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    loop {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let page = c
            .call("resources/list", params)
            .await?
            .map_err(|e| c.protocol(format!("resources/list failed: {e}")))?;
        c.report.pages += 1;
        let resources = page
            .get("resources")
            .and_then(Value::as_array)
            .ok_or_else(|| c.protocol("resources/list result has no `resources` array".into()))?;
        for r in resources {
            let uri = r
                .get("uri")
                .and_then(Value::as_str)
                .ok_or_else(|| c.protocol("a listed resource has no `uri` string".into()))?;
            c.report.listed.push(uri.to_owned());
        }
        cursor = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match &cursor {
            None => break,
            Some(cur) if !seen.insert(cur.clone()) => {
                return Err(c.protocol(format!("resources/list repeated nextCursor `{cur}`")));
            }
            Some(_) if c.report.pages >= MAX_LIST_PAGES => {
                return Err(c.protocol(format!(
                    "more than MAX_LIST_PAGES ({MAX_LIST_PAGES}) resources/list pages"
                )));
            }
            Some(_) => {}
        }
    }

    // resources/templates/list, every page (a server without templates may answer an error).
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let Ok(page) = c.call("resources/templates/list", params).await? else {
            break;
        };
        pages += 1;
        for t in page
            .get("resourceTemplates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(u) = t.get("uriTemplate").and_then(Value::as_str) {
                c.report.templates.push(u.to_owned());
            }
        }
        cursor = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if cursor.is_none() || pages >= MAX_LIST_PAGES {
            break;
        }
    }

    let mut uris = c.report.listed.clone();
    for e in &opts.expand {
        uris.extend(e.uris()?);
    }
    let missing = opts
        .missing_uri
        .clone()
        .unwrap_or_else(|| missing_uri_for(c.report.listed.first().map(String::as_str)));
    uris.push(missing);
    progress(CrawlProgress::Planned {
        reads: uris.len() as u64,
    });
    for uri in uris {
        let reply = c
            .call("resources/read", Some(json!({ "uri": uri })))
            .await?;
        let outcome = read_outcome(&uri, &reply);
        c.report.reads.push(outcome);
        progress(CrawlProgress::Read { uri });
    }
    Ok(c.report)
}

/// A URI next to `first` that should not exist (`.../mcptape-does-not-exist`).
pub fn missing_uri_for(first: Option<&str>) -> String {
    const LEAF: &str = "mcptape-does-not-exist";
    let Some(u) = first else {
        return format!("file:///{LEAF}");
    };
    let after_scheme = u.find("://").map(|i| i + 3).unwrap_or(0);
    match u[after_scheme..].rfind('/') {
        Some(j) => format!("{}/{LEAF}", &u[..after_scheme + j]),
        None => format!("{u}/{LEAF}"),
    }
}

fn read_outcome(uri: &str, reply: &Reply) -> ReadOutcome {
    let mut o = ReadOutcome {
        uri: uri.to_owned(),
        text: 0,
        blob: 0,
        blob_base64_chars: 0,
        error_code: None,
    };
    match reply {
        Ok(result) => {
            for c in result
                .get("contents")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(b) = c.get("blob").and_then(Value::as_str) {
                    o.blob += 1;
                    o.blob_base64_chars += b.len();
                } else if c.get("text").is_some() {
                    o.text += 1;
                }
            }
        }
        Err(e) => o.error_code = Some(e.get("code").and_then(Value::as_i64).unwrap_or(0)),
    }
    o
}

struct Client<'a> {
    conn: &'a mut Conn,
    next_id: u64,
    /// `Some(version)` once a 2026-07-28 discovery succeeded: requests carry the `_meta` envelope.
    modern: Option<String>,
    timeout: Duration,
    report: CrawlReport,
}

impl Client<'_> {
    fn protocol(&self, msg: String) -> RecordError {
        RecordError::new(RecordErrorKind::Protocol(msg))
            .at(Position::Step(self.next_id.saturating_sub(1)))
    }

    fn envelope(version: &str) -> Value {
        json!({
            META_PROTOCOL_VERSION: version,
            META_CLIENT_INFO: { "name": "mcptape", "version": env!("CARGO_PKG_VERSION") },
            META_CLIENT_CAPABILITIES: {},
        })
    }

    async fn handshake(&mut self, protocol: &str) -> Result<(), RecordError> {
        if protocol == MODERN_PROTOCOL {
            let params = json!({ "_meta": Self::envelope(protocol) });
            self.conn.set_protocol_version(Some(protocol));
            let reply = self.call_raw("server/discover", Some(params)).await?;
            if let Ok(result) = reply {
                let supported: Vec<&str> = result
                    .get("supportedVersions")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if supported.contains(&protocol) {
                    self.modern = Some(protocol.to_owned());
                    self.report.protocol_version = protocol.to_owned();
                    return Ok(());
                }
            }
            self.conn.set_protocol_version(None);
            self.report.fell_back = true;
            return self.initialize(FALLBACK_HANDSHAKE_VERSION).await;
        }
        self.initialize(protocol).await
    }

    async fn initialize(&mut self, version: &str) -> Result<(), RecordError> {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": "mcptape", "version": env!("CARGO_PKG_VERSION") },
        });
        let result = self
            .call_raw("initialize", Some(params))
            .await?
            .map_err(|e| self.protocol(format!("initialize failed: {e}")))?;
        let negotiated = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| self.protocol("initialize result has no protocolVersion".into()))?
            .to_owned();
        self.conn.set_protocol_version(Some(&negotiated));
        self.report.protocol_version = negotiated;
        let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        self.conn
            .notify(
                &note.to_string(),
                "notifications/initialized",
                &mut self.report,
            )
            .await
    }

    async fn call(&mut self, method: &str, params: Option<Value>) -> Result<Reply, RecordError> {
        let params = match &self.modern {
            Some(v) => {
                let mut p = params.unwrap_or_else(|| json!({}));
                if let Some(obj) = p.as_object_mut() {
                    obj.insert("_meta".to_owned(), Self::envelope(v));
                }
                Some(p)
            }
            None => params,
        };
        self.call_raw(method, params).await
    }

    async fn call_raw(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Reply, RecordError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if let Some(p) = params {
            msg["params"] = p;
        }
        let line = msg.to_string();
        let fut = self.conn.request(&line, id, method, &mut self.report);
        match tokio::time::timeout(self.timeout, fut).await {
            Ok(r) => r.map_err(|e| e.at(Position::Step(id))),
            Err(_) => Err(RecordError::new(RecordErrorKind::Timeout {
                method: method.to_owned(),
                ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            })
            .at(Position::Step(id))),
        }
    }
}

/// The answer mcptape gives to a server-to-client request: `ping` → `{}`,
/// anything else → `-32601` (no client capability was declared).
fn answer_server_request(msg: &Value) -> Option<(String, Value)> {
    let method = msg.get("method")?.as_str()?;
    let id = msg.get("id")?;
    let reply = if method == "ping" {
        json!({ "jsonrpc": "2.0", "id": id, "result": {} })
    } else {
        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": METHOD_NOT_FOUND, "message": format!("Method not found: mcptape crawl declared no capability for `{method}`") } })
    };
    Some((method.to_owned(), reply))
}

/// Is `msg` the reply to request `id`? Returns the reply if so.
fn as_reply_to(msg: &Value, id: u64) -> Option<Reply> {
    if msg.get("method").is_some() || msg.get("id").and_then(Value::as_u64) != Some(id) {
        return None;
    }
    if let Some(e) = msg.get("error") {
        return Some(Err(e.clone()));
    }
    Some(Ok(msg.get("result").cloned().unwrap_or(Value::Null)))
}

enum Conn {
    Stdio(StdioConn),
    Http(HttpConn),
}

impl Conn {
    /// Sets (`Some`) or clears the `MCP-Protocol-Version` the HTTP client sends
    /// (a 2026-07-28 version also selects the stateless-era headers).
    fn set_protocol_version(&mut self, version: Option<&str>) {
        if let Conn::Http(h) = self {
            match version {
                Some(v) => h.client.set_protocol_version(v),
                None => h.client.clear_protocol_version(),
            }
        }
    }

    async fn request(
        &mut self,
        line: &str,
        id: u64,
        method: &str,
        report: &mut CrawlReport,
    ) -> Result<Reply, RecordError> {
        match self {
            Conn::Stdio(s) => s.request(line, id, method, report).await,
            Conn::Http(h) => h.request(line, id, method, report).await,
        }
    }

    async fn notify(
        &mut self,
        line: &str,
        method: &str,
        report: &mut CrawlReport,
    ) -> Result<(), RecordError> {
        match self {
            Conn::Stdio(s) => s.send(line).await,
            Conn::Http(h) => {
                let _ = method;
                h.post(line, None, report).await.map(|_| ())
            }
        }
    }

    async fn close(&mut self, sink: &TranscriptSink) -> Result<(), RecordError> {
        match self {
            Conn::Stdio(s) => s.close(sink).await,
            Conn::Http(h) => h.close().await,
        }
    }
}

// ---------------------------------------------------------------- stdio

struct StdioConn {
    child: StdioChild,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
    sink: Arc<TranscriptSink>,
}

impl StdioConn {
    fn start(argv: &[String], sink: Arc<TranscriptSink>) -> Result<Self, RecordError> {
        let mut child = crate::stdio::spawn_server(argv)?;
        let io = |what| RecordError::io("server process", std::io::Error::other(what));
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().ok_or_else(|| io("no stdout pipe"))?;
        let mut stderr = child.stderr.take().ok_or_else(|| io("no stderr pipe"))?;
        let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
        let s = sink.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; CHUNK_BYTES];
            let mut framer = LineFramer::new(MAX_LINE_BYTES);
            let mut lines = Vec::new();
            loop {
                let n = match stdout.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                framer.push_with(&buf[..n], |f| match f {
                    FrameRef::Message(l) | FrameRef::Noise(l) => {
                        s.record_line(Direction::S2c, l, None);
                        lines.push(l.to_vec());
                    }
                    FrameRef::TooLong(e) => s.record(Event::Noise {
                        dir: Direction::S2c,
                        line: format!("<mcptape: {e}; not recorded>"),
                    }),
                });
                for l in lines.drain(..) {
                    if tx.send(l).await.is_err() {
                        return;
                    }
                }
            }
        });
        let s = sink.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; CHUNK_BYTES];
            let mut framer = LineFramer::new(MAX_LINE_BYTES);
            loop {
                let n = match stderr.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                framer.push_with(&buf[..n], |f| {
                    if let FrameRef::Message(l) | FrameRef::Noise(l) = f {
                        s.record(Event::Stderr {
                            line: String::from_utf8_lossy(l).into_owned(),
                        });
                    }
                });
            }
        });
        Ok(StdioConn {
            child,
            stdin,
            lines: rx,
            sink,
        })
    }

    async fn send(&mut self, line: &str) -> Result<(), RecordError> {
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            RecordError::io("server stdin", std::io::ErrorKind::BrokenPipe.into())
        })?;
        self.sink.record_line(Direction::C2s, line.as_bytes(), None);
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin
            .write_all(&bytes)
            .await
            .map_err(|e| RecordError::io("server stdin", e))?;
        stdin
            .flush()
            .await
            .map_err(|e| RecordError::io("server stdin", e))
    }

    async fn request(
        &mut self,
        line: &str,
        id: u64,
        method: &str,
        report: &mut CrawlReport,
    ) -> Result<Reply, RecordError> {
        self.send(line).await?;
        loop {
            let Some(l) = self.lines.recv().await else {
                return Err(RecordError::new(RecordErrorKind::Closed {
                    method: method.to_owned(),
                }));
            };
            let Ok(msg) = serde_json::from_slice::<Value>(&l) else {
                continue;
            };
            if let Some(reply) = as_reply_to(&msg, id) {
                return Ok(reply);
            }
            if let Some((m, answer)) = answer_server_request(&msg) {
                report.answered_server_requests.push(m);
                self.send(&answer.to_string()).await?;
            }
        }
    }

    async fn close(&mut self, sink: &TranscriptSink) -> Result<(), RecordError> {
        drop(self.stdin.take());
        let ending = self
            .child
            .shutdown()
            .await
            .map_err(|e| RecordError::io("server process", e))?;
        // Let the reader record what the server wrote last.
        while let Ok(Some(_)) =
            tokio::time::timeout(Duration::from_millis(200), self.lines.recv()).await
        {}
        sink.record(Event::Exit {
            code: ending.code(),
            signal: ending.signal(),
        });
        Ok(())
    }
}

// ---------------------------------------------------------------- HTTP

/// Crawl over Streamable HTTP with [`mcptape_transport::http::HttpClient`]
/// (session id, `MCP-Protocol-Version`, `Mcp-Method`/`Mcp-Name` per era),
/// recording every request before it is sent and every reply item as it arrives.
struct HttpConn {
    client: HttpClient,
    sink: Arc<TranscriptSink>,
    redactor: Redactor,
}

/// An HTTP client for `url`, without connecting.
///
/// Errors: [`RecordErrorKind::Url`] if `url` is not an absolute `http://` URL.
fn http_client(url: &str) -> Result<HttpClient, RecordError> {
    HttpClient::new(url).map_err(|e| {
        RecordError::new(RecordErrorKind::Url {
            url: url.to_owned(),
            reason: match e.kind {
                mcptape_transport::http::HttpErrorKind::InvalidUrl { .. } => {
                    "only absolute http:// URLs are supported"
                }
                _ => "not usable",
            },
        })
    })
}

/// Checks a crawl's options without starting or contacting the server (so a
/// caller can refuse bad arguments before it creates the transcript file):
/// the protocol revision ([`check_protocol`]), every `--expand` template and
/// its expansions ([`Expansion::uris`]), a non-empty command, an absolute
/// `http://` URL.
///
/// Errors: [`RecordErrorKind::UnknownProtocol`], those of
/// [`Expansion::uris`], [`RecordErrorKind::EmptyCommand`],
/// [`RecordErrorKind::Url`].
pub fn check_options(opts: &CrawlOptions) -> Result<(), RecordError> {
    check_protocol(&opts.protocol)?;
    for e in &opts.expand {
        e.uris()?;
    }
    match &opts.target {
        CrawlTarget::Command(argv) if argv.is_empty() => {
            Err(RecordError::new(RecordErrorKind::EmptyCommand))
        }
        CrawlTarget::Command(_) => Ok(()),
        CrawlTarget::Url(url) => http_client(url).map(|_| ()),
    }
}

impl HttpConn {
    fn new(url: &str, sink: Arc<TranscriptSink>, redactor: Redactor) -> Result<Self, RecordError> {
        let mut client = http_client(url)?;
        client.set_max_body_bytes(MAX_HTTP_BODY_BYTES);
        Ok(HttpConn {
            client,
            sink,
            redactor,
        })
    }

    /// HTTP details of a record: `headers` redacted.
    fn meta(
        &self,
        exchange: u64,
        method: &str,
        status: Option<u16>,
        headers: &[(String, String)],
    ) -> HttpMeta {
        let mut headers = headers.to_vec();
        self.redactor.headers(&mut headers);
        HttpMeta {
            exchange,
            method: Some(method.to_owned()),
            status,
            headers,
            sse_event_id: None,
        }
    }

    fn http_error(e: HttpError) -> RecordError {
        let n = e.exchange;
        RecordError::new(RecordErrorKind::Http(e.kind.to_string())).at(Position::Exchange(n))
    }

    /// POSTs one message; returns the reply to request `id` found in the
    /// response (JSON body or SSE events), answering server requests on the way.
    async fn post(
        &mut self,
        line: &str,
        id: Option<u64>,
        report: &mut CrawlReport,
    ) -> Result<Option<Reply>, RecordError> {
        let n = self.client.exchanges();
        let meta = self.meta(n, "POST", None, &self.client.post_headers(line));
        self.sink
            .record_line(Direction::C2s, line.as_bytes(), Some(meta));
        let mut resp = self.client.send(line).await.map_err(Self::http_error)?;
        let status = resp.status;
        let mut first = Some(self.meta(n, "POST", Some(status), &resp.headers));
        let mut found: Option<Reply> = None;
        let mut any = false;
        while let Some(item) = resp.next_item().await {
            let item = item.map_err(Self::http_error)?;
            any = true;
            let mut m = first.take().unwrap_or_else(|| HttpMeta {
                exchange: n,
                method: Some("POST".into()),
                ..HttpMeta::default()
            });
            let data: &[u8] = match &item {
                ReplyItem::Json(s) => s.as_bytes(),
                ReplyItem::Other(b) => b,
                ReplyItem::Event(ev) => {
                    m.sse_event_id = ev.id.clone();
                    if ev.data.is_empty() {
                        self.sink.record(Event::Http {
                            dir: Direction::S2c,
                            http: m,
                            note: HttpNote::EmptyEvent,
                            detail: None,
                        });
                        continue;
                    }
                    ev.data.as_bytes()
                }
            };
            self.sink.record_line(Direction::S2c, data, Some(m));
            let msg = match &item {
                ReplyItem::Event(ev) => match ev.payload() {
                    SsePayload::JsonRpc(s) => serde_json::from_str::<Value>(s).ok(),
                    SsePayload::Other(_) => None,
                },
                _ => serde_json::from_slice::<Value>(data).ok(),
            };
            let Some(msg) = msg else { continue };
            if let Some(reply) = id.and_then(|id| as_reply_to(&msg, id)) {
                found = Some(reply);
                break;
            }
            if let Some((m, answer)) = answer_server_request(&msg) {
                report.answered_server_requests.push(m);
                Box::pin(self.post(&answer.to_string(), None, report)).await?;
            }
        }
        if !any {
            let meta = first.take().unwrap_or_default();
            self.sink.record(Event::Http {
                dir: Direction::S2c,
                http: meta,
                note: HttpNote::NoBody,
                detail: None,
            });
        }
        if found.is_none() && id.is_some() && status >= 400 {
            // A non-JSON-RPC HTTP error (e.g. 400 for an unknown session) answers the request.
            found = Some(Err(
                json!({ "code": 0, "message": format!("HTTP {status}") }),
            ));
        }
        Ok(found)
    }

    async fn request(
        &mut self,
        line: &str,
        id: u64,
        method: &str,
        report: &mut CrawlReport,
    ) -> Result<Reply, RecordError> {
        self.post(line, Some(id), report).await?.ok_or_else(|| {
            RecordError::new(RecordErrorKind::Closed {
                method: method.to_owned(),
            })
        })
    }

    /// Ends a 2025-era session with `DELETE` (nothing without a session).
    async fn close(&mut self) -> Result<(), RecordError> {
        let Some(sid) = self.client.session_id().map(str::to_owned) else {
            return Ok(());
        };
        let n = self.client.exchanges();
        let mut headers = vec![(mcptape_transport::http::HEADER_SESSION_ID.to_owned(), sid)];
        if let Some(v) = self.client.protocol_version() {
            headers.push((
                mcptape_transport::http::HEADER_PROTOCOL_VERSION.to_owned(),
                v.to_owned(),
            ));
        }
        let meta = self.meta(n, "DELETE", None, &headers);
        self.sink.record(Event::Http {
            dir: Direction::C2s,
            http: meta,
            note: HttpNote::NoBody,
            detail: None,
        });
        if let Ok(Some(status)) = self.client.delete_session().await {
            let meta = self.meta(n, "DELETE", Some(status), &[]);
            self.sink.record(Event::Http {
                dir: Direction::S2c,
                http: meta,
                note: HttpNote::NoBody,
                detail: None,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_product_and_encoding() {
        let e = Expansion::parse(
            "demo://r/{kind}/{id}",
            &["kind=text,blob".into(), "id=1,a b".into()],
        )
        .unwrap();
        assert_eq!(
            e.uris().unwrap(),
            vec![
                "demo://r/text/1",
                "demo://r/text/a%20b",
                "demo://r/blob/1",
                "demo://r/blob/a%20b"
            ]
        );
        let r = Expansion::parse("file:///{+path}", &["path=a/b c".into()]).unwrap();
        assert_eq!(r.uris().unwrap(), vec!["file:///a/b%20c"]);
    }

    #[test]
    fn expand_rejects_unsupported_and_missing() {
        assert!(
            Expansion::parse("x://{?q}", &["q=1".into()])
                .unwrap()
                .uris()
                .is_err()
        );
        assert!(Expansion::parse("x://{a}", &[]).unwrap().uris().is_err());
        assert!(
            Expansion::parse("x://{a", &["a=1".into()])
                .unwrap()
                .uris()
                .is_err()
        );
        assert!(Expansion::parse("x://{a}", &["novalue".into()]).is_err());
    }

    #[test]
    fn expansions_at_limit_and_one_past() {
        let vals: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let at = Expansion::parse(
            "x://{a}/{b}",
            &[
                format!("a={}", vals.join(",")),
                format!("b={}", vals.join(",")),
            ],
        )
        .unwrap();
        assert_eq!(at.uris().unwrap().len(), MAX_EXPANSIONS);
        let past = Expansion::parse(
            "x://{a}/{b}/{c}",
            &[
                format!("a={}", vals.join(",")),
                format!("b={}", vals.join(",")),
                "c=1,2".into(),
            ],
        )
        .unwrap();
        assert!(past.uris().is_err());
    }

    #[test]
    fn missing_uri_is_a_sibling_of_the_first_listed() {
        assert_eq!(
            missing_uri_for(Some("demo://resource/static/document/a.md")),
            "demo://resource/static/document/mcptape-does-not-exist"
        );
        assert_eq!(
            missing_uri_for(Some("mcptape://docs/readme.md")),
            "mcptape://docs/mcptape-does-not-exist"
        );
        assert_eq!(
            missing_uri_for(Some("test://x")),
            "test://x/mcptape-does-not-exist"
        );
        assert_eq!(
            missing_uri_for(Some("file:///a.txt")),
            "file:///mcptape-does-not-exist"
        );
        assert_eq!(missing_uri_for(None), "file:///mcptape-does-not-exist");
    }

    #[test]
    fn server_requests_get_method_not_found_except_ping() {
        let (m, a) =
            answer_server_request(&json!({"jsonrpc":"2.0","id":7,"method":"roots/list"})).unwrap();
        assert_eq!(m, "roots/list");
        assert_eq!(a["error"]["code"], json!(METHOD_NOT_FOUND));
        assert_eq!(a["id"], json!(7));
        let (_, p) =
            answer_server_request(&json!({"jsonrpc":"2.0","id":"p","method":"ping"})).unwrap();
        assert_eq!(p["result"], json!({}));
        assert!(
            answer_server_request(&json!({"jsonrpc":"2.0","method":"notifications/x"})).is_none()
        );
    }
}
