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
//! The client is the one session of [`mcptape_transport::session`] (the one
//! bench and verify use): it allocates and matches ids, runs the handshake
//! with its era fallback, and, since mcptape declares no client
//! capabilities, answers every server-to-client request except `ping` with
//! JSON-RPC error `-32601` (method not found) — `roots/list`,
//! `sampling/createMessage`, `elicitation/create` — and `ping` with an empty
//! result. Crawl only decides what to send, and records every wire event
//! ([`mcptape_transport::session::Observer`]). A last line the server writes
//! without a newline before it exits is still recorded and answers its request.
//!
//! Over Streamable HTTP, the 2025-11-25 era carries `Mcp-Session-Id` and
//! `MCP-Protocol-Version` after `initialize` and ends with `DELETE`; the
//! 2026-07-28 era sends no session, and each request carries the
//! `MCP-Protocol-Version`, `Mcp-Method` and (for `resources/read`) `Mcp-Name`
//! headers plus the `_meta` envelope keys.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcptape_transcript::{Direction, Event, HttpMeta, HttpNote, Redactor};
use mcptape_transport::child::{SIGTERM_GRACE, STDIN_CLOSE_GRACE, StdioChild};
use mcptape_transport::framed::{FramedReader, MAX_LINE_BYTES};
use mcptape_transport::http::{HttpClient, ReplyItem};
use mcptape_transport::session::{
    Handshake, Observer, Outcome, Session, SessionError, SessionErrorKind, WireEvent,
};
use mcptape_transport::stdio::Frame;
use mcptape_uri::parts::Parts;
use mcptape_uri::template::{Template, TemplateErrorKind, Vars};
use mcptape_wire::protocol::{self, Era, Implementation, Revision, method};
use serde_json::{Value, json};

use crate::error::{Position, RecordError, RecordErrorKind};
use crate::http::MAX_HTTP_BODY_BYTES;
use crate::sink::TranscriptSink;

/// How long closing waits for the session's tasks (stdio: the server's last
/// output, until its end of stream): the stdio shutdown sequence
/// ([`STDIN_CLOSE_GRACE`] + [`SIGTERM_GRACE`]) plus 1 s.
const CLOSE_WAIT: Duration =
    Duration::from_secs(STDIN_CLOSE_GRACE.as_secs() + SIGTERM_GRACE.as_secs() + 1);

/// The protocol revision the handshake-era `initialize` asks for by default
/// (`mcptape_wire::protocol::FALLBACK_REVISION`; a `&'static str` for clap).
pub const DEFAULT_PROTOCOL: &str = protocol::FALLBACK_REVISION.as_str();

/// The modern revision that uses `server/discover` instead of `initialize`
/// (`mcptape_wire::protocol::STATELESS_SINCE`).
pub const MODERN_PROTOCOL: &str = protocol::STATELESS_SINCE.as_str();

/// The protocol revisions `--protocol` accepts: 2025-06-18 and 2025-11-25
/// (`initialize`, spec "Lifecycle") and 2026-07-28 (`server/discover`)
/// ([`protocol::CLIENT_REVISIONS`]).
pub const KNOWN_PROTOCOLS: &[&str] = &protocol::CLIENT_REVISIONS;

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

/// The `initialize` version used after a failed `server/discover` probe
/// (`mcptape_wire::protocol::FALLBACK_REVISION`).
pub const FALLBACK_HANDSHAKE_VERSION: &str = protocol::FALLBACK_REVISION.as_str();

/// `_meta` keys of the client capabilities and client info in 2026-07-28 requests.
pub use mcptape_wire::protocol::meta::{
    CLIENT_CAPABILITIES as META_CLIENT_CAPABILITIES, CLIENT_INFO as META_CLIENT_INFO,
};

/// Most `resources/list` (or `resources/templates/list`) pages followed (a
/// server returning a `nextCursor` forever would otherwise never end the crawl).
pub const MAX_LIST_PAGES: usize = 10_000;

/// Most concrete URIs one `--expand` may produce (product of the value lists).
pub const MAX_EXPANSIONS: usize = 10_000;

/// Default time a crawl request may take, in ms.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 30_000;

/// JSON-RPC "method not found" (JSON-RPC 2.0 §5.1), the answer to server requests.
pub use mcptape_wire::protocol::error_code::METHOD_NOT_FOUND;

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
    /// The RFC 6570 template (all four levels: `{var}`, `{+var}`, `{/var}`, `{?var}`…).
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

    /// Every concrete URI: the template expanded with each combination of
    /// values by [`mcptape_uri::template::Template::expand`] (RFC 6570, all
    /// four levels; in `{+var}` a `%XX` passes through, §3.2.3).
    ///
    /// Errors: [`RecordErrorKind::Expand`] for a template RFC 6570 rejects
    /// (an unterminated `{`…), a variable with no values given, or more than
    /// [`MAX_EXPANSIONS`] combinations.
    pub fn uris(&self) -> Result<Vec<String>, RecordError> {
        let err = |m: String| RecordError::new(RecordErrorKind::Expand(m));
        let template = Template::parse(&self.template).map_err(|e| {
            err(match e.kind() {
                TemplateErrorKind::UnclosedExpression => {
                    format!(
                        "--expand: unterminated `{{` in template `{}`",
                        self.template
                    )
                }
                k => format!(
                    "--expand: template `{}` is not RFC 6570: {k} at byte {}",
                    self.template,
                    e.offset()
                ),
            })
        })?;
        for name in template.var_names() {
            if !self.vars.iter().any(|(k, _)| k == name) {
                return Err(err(format!(
                    "--expand: no values given for `{name}` of `{}`",
                    self.template
                )));
            }
        }
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
            let mut vars = Vars::new();
            for ((k, vals), &i) in self.vars.iter().zip(&idx) {
                vars.insert(k.as_str(), vals[i].as_str());
            }
            out.push(
                template
                    .expand(&vars)
                    .map_err(|e| err(format!("--expand: {}: {e}", self.template)))?,
            );
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
        /// It was answered with an error (its code in [`ReadOutcome::error_code`]).
        error: bool,
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
    /// The server's handshake result advertised no `resources` capability
    /// (MCP 2025-11-25 "Resources" §Capabilities): nothing was listed or
    /// read; the lists it does offer were recorded instead.
    pub no_resources: bool,
    /// `tools/list` and `prompts/list` (every page) of a server without the
    /// `resources` capability: (method, items listed), for each it advertises.
    pub other_lists: Vec<(String, usize)>,
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
/// server goes away, [`RecordErrorKind::Io`] if reading from it fails (a read
/// error is not taken for its end), [`RecordErrorKind::Protocol`] if the
/// handshake fails or a list reply is malformed; each with the crawl step
/// ([`Position::Step`]).
pub async fn crawl(
    opts: CrawlOptions,
    sink: Arc<TranscriptSink>,
    mut progress: impl FnMut(CrawlProgress),
) -> Result<CrawlReport, RecordError> {
    check_options(&opts)?;
    let recorder = Arc::new(Recorder {
        sink: sink.clone(),
        redactor: opts.redactor.clone(),
        heads: Mutex::default(),
    });
    let mut conn = match &opts.target {
        CrawlTarget::Command(argv) => Conn::stdio(argv, recorder)?,
        CrawlTarget::Url(url) => {
            let mut client = http_client(url)?;
            client.set_max_body_bytes(MAX_HTTP_BODY_BYTES);
            Conn {
                session: Session::http(client, Some(recorder)),
                child: None,
                stderr: None,
            }
        }
    };
    let result = crawl_on(&conn.session, &opts, &mut progress).await;
    let closed = conn.close(&sink).await;
    let report = result?;
    closed?;
    Ok(report)
}

async fn crawl_on(
    session: &Session,
    opts: &CrawlOptions,
    progress: &mut impl FnMut(CrawlProgress),
) -> Result<CrawlReport, RecordError> {
    let mut c = Crawler {
        session,
        last_id: 0,
        modern: None,
        timeout: opts.request_timeout,
        report: CrawlReport::default(),
        capabilities: Value::Null,
    };
    c.handshake(&opts.protocol).await?;
    progress(CrawlProgress::Handshake {
        version: c.report.protocol_version.clone(),
    });
    let result = crawl_steps(&mut c, opts, progress).await;
    c.report.answered_server_requests = session.answered_server_requests();
    result.map(|()| c.report)
}

async fn crawl_steps(
    c: &mut Crawler<'_>,
    opts: &CrawlOptions,
    progress: &mut impl FnMut(CrawlProgress),
) -> Result<(), RecordError> {
    if c.capabilities.get("resources").is_none_or(Value::is_null) {
        // No `resources` capability (server-filesystem): a resources/list
        // would be "Method not found". Record what it does offer instead.
        c.report.no_resources = true;
        for (m, key) in [
            (method::TOOLS_LIST, "tools"),
            (method::PROMPTS_LIST, "prompts"),
        ] {
            if c.capabilities.get(key).is_none_or(Value::is_null) {
                continue;
            }
            let mut cursor: Option<String> = None;
            let (mut items, mut pages) = (0, 0);
            loop {
                let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
                let page = c
                    .call(m, params)
                    .await?
                    .map_err(|e| c.protocol(format!("{m} failed: {e}")))?;
                pages += 1;
                items += array_items(&page, key).count();
                cursor = next_cursor(&page);
                if cursor.is_none() || pages >= MAX_LIST_PAGES {
                    break;
                }
            }
            c.report.other_lists.push((m.to_owned(), items));
        }
        return Ok(());
    }

    // resources/list, every page.
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    loop {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let page = c
            .call(method::RESOURCES_LIST, params)
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
        cursor = next_cursor(&page);
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
        let Ok(page) = c.call(method::RESOURCES_TEMPLATES_LIST, params).await? else {
            break;
        };
        pages += 1;
        for t in array_items(&page, "resourceTemplates") {
            if let Some(u) = t.get("uriTemplate").and_then(Value::as_str) {
                c.report.templates.push(u.to_owned());
            }
        }
        cursor = next_cursor(&page);
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
            .call(method::RESOURCES_READ, Some(json!({ "uri": uri })))
            .await?;
        let outcome = read_outcome(&uri, &reply);
        let error = outcome.error_code.is_some();
        c.report.reads.push(outcome);
        progress(CrawlProgress::Read { uri, error });
    }
    Ok(())
}

/// A list page's `nextCursor` string, if any (MCP "Utilities" › "Pagination").
fn next_cursor(page: &Value) -> Option<String> {
    page.get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The elements of the array member `key` of `v`; none when it is missing or
/// not an array.
fn array_items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// A URI next to `first` that should not exist (`.../mcptape-does-not-exist`).
pub fn missing_uri_for(first: Option<&str>) -> String {
    const LEAF: &str = "mcptape-does-not-exist";
    let Some(u) = first else {
        return format!("file:///{LEAF}");
    };
    // `scheme://authority` and the path after it ([`Parts`]); a URI without an authority is
    // all path.
    let (head, path) = match Parts::parse(u) {
        Some(Parts {
            scheme,
            authority: Some(a),
            path,
        }) => (&u[..scheme.len() + 3 + a.len()], path),
        _ => ("", u),
    };
    match path.rfind('/') {
        Some(j) => format!("{head}{}/{LEAF}", &path[..j]),
        None => format!("{head}{path}/{LEAF}"),
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
            for c in array_items(result, "contents") {
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

/// The crawl's side of the one client session: what crawl sends (the
/// session does ids, matching, the handshake, server requests).
struct Crawler<'a> {
    session: &'a Session,
    /// Id of the last request sent (the crawl step of an error).
    last_id: u64,
    /// `Some(version)` once a 2026-07-28 discovery succeeded: requests carry the `_meta` envelope.
    modern: Option<String>,
    timeout: Duration,
    report: CrawlReport,
    /// The server's `capabilities` from the handshake result (`null` if none).
    capabilities: Value,
}

impl Crawler<'_> {
    fn protocol(&self, msg: String) -> RecordError {
        RecordError::new(RecordErrorKind::Protocol(msg)).at(Position::Step(self.last_id))
    }

    /// The 2026-07-28 `_meta` envelope of every request.
    fn envelope(version: &str) -> Value {
        protocol::request_meta(&Revision::new(version), &Implementation::mcptape())
    }

    fn initialize_params(version: &str) -> Value {
        protocol::initialize_params(&Revision::new(version), &Implementation::mcptape())
    }

    async fn handshake(&mut self, protocol: &str) -> Result<(), RecordError> {
        let plan = if Era::of(protocol) == Era::Stateless {
            Handshake {
                discover: Some(json!({ "_meta": Self::envelope(protocol) })),
                version: Some(Revision::new(protocol)),
                initialize: Self::initialize_params(FALLBACK_HANDSHAKE_VERSION),
                timeout: self.timeout,
            }
        } else {
            Handshake {
                discover: None,
                version: None,
                initialize: Self::initialize_params(protocol),
                timeout: self.timeout,
            }
        };
        let hs = self
            .session
            .handshake(&plan)
            .await
            .map_err(|e| self.session_error(e))?;
        if hs.method == method::SERVER_DISCOVER {
            self.modern = Some(protocol.to_owned());
        }
        self.capabilities = hs
            .result
            .get("capabilities")
            .cloned()
            .unwrap_or(Value::Null);
        self.report.fell_back = hs.fell_back;
        self.report.protocol_version = hs
            .protocol_version
            .map(|v| v.as_str().to_owned())
            .unwrap_or_default();
        Ok(())
    }

    fn session_error(&mut self, e: SessionError) -> RecordError {
        self.last_id = e.id;
        let step = Position::Step(e.id);
        let SessionError { kind, method, .. } = e;
        match kind {
            SessionErrorKind::Closed(None) => {
                RecordError::new(RecordErrorKind::Closed { method }).at(step)
            }
            // A read (or transport) error is not the server's end of output.
            SessionErrorKind::Closed(Some(why)) => {
                RecordError::io("server connection", std::io::Error::other(why)).at(step)
            }
            SessionErrorKind::Timeout { ms } => {
                RecordError::new(RecordErrorKind::Timeout { method, ms }).at(step)
            }
            SessionErrorKind::Refused(err) => {
                RecordError::new(RecordErrorKind::Protocol(format!("{method} failed: {err}")))
                    .at(step)
            }
            other => {
                RecordError::new(RecordErrorKind::Protocol(format!("{method}: {other}"))).at(step)
            }
        }
    }

    async fn call(&mut self, method: &str, params: Option<Value>) -> Result<Reply, RecordError> {
        let params = match &self.modern {
            Some(v) => {
                let mut p = params.unwrap_or_else(|| json!({}));
                if let Some(obj) = p.as_object_mut() {
                    obj.insert("_meta".to_owned(), Self::envelope(v));
                }
                p
            }
            None => params.unwrap_or(Value::Null),
        };
        let (outcome, mut msg) = self
            .session
            .call(method, &params, self.timeout)
            .await
            .map_err(|e| self.session_error(e))?;
        self.last_id += 1;
        Ok(match outcome {
            Outcome::Ok => Ok(msg
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null)),
            _ => Err(msg.get_mut("error").map(Value::take).unwrap_or(Value::Null)),
        })
    }
}

/// Writes the transcript from the session's wire events: every message
/// byte-exact, HTTP requests before they are sent (headers redacted), each
/// reply item as it arrives.
struct Recorder {
    sink: Arc<TranscriptSink>,
    redactor: Redactor,
    /// Response heads (status, headers) waiting for their first body item.
    heads: Mutex<HashMap<u64, HttpMeta>>,
}

impl Recorder {
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
            ..HttpMeta::default()
        }
    }

    fn heads(&self) -> std::sync::MutexGuard<'_, HashMap<u64, HttpMeta>> {
        self.heads.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn http_note(&self, dir: Direction, http: HttpMeta, note: HttpNote) {
        self.sink.record(Event::Http {
            dir,
            http,
            note,
            detail: None,
        });
    }
}

impl Observer for Recorder {
    fn observe(&self, event: WireEvent<'_>) {
        match event {
            WireEvent::LineOut(line) => self.sink.record_line(Direction::C2s, line, None),
            WireEvent::LineIn(Frame::Message(l) | Frame::Noise(l)) => {
                self.sink.record_line(Direction::S2c, l, None);
            }
            WireEvent::LineIn(Frame::TooLong(e)) => self.sink.record(Event::Noise {
                dir: Direction::S2c,
                line: format!("<mcptape: {e}; not recorded>"),
            }),
            WireEvent::PostSent {
                exchange,
                headers,
                body,
            } => {
                let meta = self.meta(exchange, "POST", None, headers);
                self.sink
                    .record_line(Direction::C2s, body.as_bytes(), Some(meta));
            }
            WireEvent::PostHead {
                exchange,
                status,
                headers,
            } => {
                let meta = self.meta(exchange, "POST", Some(status), headers);
                self.heads().insert(exchange, meta);
            }
            WireEvent::PostItem { exchange, item } => {
                let mut m = self.heads().remove(&exchange).unwrap_or_else(|| HttpMeta {
                    exchange,
                    method: Some("POST".into()),
                    ..HttpMeta::default()
                });
                let data: &[u8] = match item {
                    ReplyItem::Json(s) => s.as_bytes(),
                    ReplyItem::Other(b) => b,
                    ReplyItem::Event(ev) => {
                        m.sse_event_id = ev.id.clone();
                        if ev.data.is_empty() {
                            self.http_note(Direction::S2c, m, HttpNote::EmptyEvent);
                            return;
                        }
                        ev.data.as_bytes()
                    }
                };
                self.sink.record_line(Direction::S2c, data, Some(m));
            }
            WireEvent::PostEnd { exchange, .. } => {
                // A head still waiting: the response had no body.
                if let Some(m) = self.heads().remove(&exchange) {
                    self.http_note(Direction::S2c, m, HttpNote::NoBody);
                }
            }
            WireEvent::DeleteSent { exchange, headers } => {
                let meta = self.meta(exchange, "DELETE", None, headers);
                self.http_note(Direction::C2s, meta, HttpNote::NoBody);
            }
            WireEvent::DeleteStatus { exchange, status } => {
                let meta = self.meta(exchange, "DELETE", Some(status), &[]);
                self.http_note(Direction::S2c, meta, HttpNote::NoBody);
            }
            _ => {}
        }
    }
}

/// The crawled server: the session, and for stdio the child process and its
/// stderr reader.
struct Conn {
    session: Session,
    child: Option<StdioChild>,
    stderr: Option<tokio::task::JoinHandle<()>>,
}

impl Conn {
    /// Spawns the stdio server `argv` and opens a session over its pipes;
    /// its stderr lines are recorded as they come.
    fn stdio(argv: &[String], recorder: Arc<Recorder>) -> Result<Self, RecordError> {
        let mut child = crate::stdio::spawn_server(argv)?;
        let io = |what| RecordError::io("server process", std::io::Error::other(what));
        let stdin = child.stdin.take().ok_or_else(|| io("no stdin pipe"))?;
        let stdout = child.stdout.take().ok_or_else(|| io("no stdout pipe"))?;
        let stderr = child.stderr.take().ok_or_else(|| io("no stderr pipe"))?;
        let sink = recorder.sink.clone();
        let stderr = tokio::spawn(async move {
            let mut r = FramedReader::new(stderr, MAX_LINE_BYTES);
            loop {
                match r.next().await {
                    Ok(Some(Frame::Message(l) | Frame::Noise(l))) => sink.record(Event::Stderr {
                        line: String::from_utf8_lossy(&l).into_owned(),
                    }),
                    Ok(Some(Frame::TooLong(_))) => {}
                    Ok(None) => break,
                    // A read error ends stderr: the line held is delivered next, then the end.
                    Err(_) => {}
                }
            }
        });
        let session = Session::over_observed(stdout, stdin, Some(recorder as Arc<dyn Observer>));
        Ok(Conn {
            session,
            child: Some(child),
            stderr: Some(stderr),
        })
    }

    /// Ends the session (stdio: stdin closed, the server ended with the
    /// stdio shutdown sequence, its last output recorded, then its exit;
    /// HTTP: `DELETE` of a 2025-era session).
    async fn close(&mut self, sink: &TranscriptSink) -> Result<(), RecordError> {
        let Some(mut child) = self.child.take() else {
            self.session.close(CLOSE_WAIT).await;
            return Ok(());
        };
        let (_, ending) = tokio::join!(self.session.close(CLOSE_WAIT), child.shutdown());
        let ending = ending.map_err(|e| RecordError::io("server process", e))?;
        if let Some(h) = self.stderr.take() {
            let _ = tokio::time::timeout(Duration::from_millis(200), h).await;
        }
        sink.record(Event::Exit {
            code: ending.code(),
            signal: ending.signal(),
        });
        Ok(())
    }
}

/// A crawl dropped before [`Conn::close`] (its caller stopped it on SIGINT/SIGTERM, or
/// panicked) leaves no server behind: the stdio child leads its own process group, so the
/// whole group gets SIGKILL here (the child's own kill-on-drop reaches the leader only, not a
/// server a launcher such as `sh -c` or `npx` forked).
impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_ref() {
            let _ = child.kill_group();
        }
    }
}

/// An HTTP client for `url`, without connecting.
///
/// Errors: [`RecordErrorKind::Url`] if `url` is not an absolute `http://`
/// URL; the error's URL has its credentials redacted ([`Redactor::url`]).
fn http_client(url: &str) -> Result<HttpClient, RecordError> {
    HttpClient::new(url).map_err(|e| {
        RecordError::new(RecordErrorKind::Url {
            url: Redactor::new().url(url).into_owned(),
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

    /// RFC 6570 §3.2.3: reserved expansion passes a pct-encoded triplet
    /// through; the old crawl-only expander re-encoded it (`%2F` → `%252F`).
    #[test]
    fn expand_reserved_passes_pct_encoded_triplets_through() {
        let r = Expansion::parse("file:///{+path}", &["path=a%2Fb/c d".into()]).unwrap();
        assert_eq!(r.uris().unwrap(), vec!["file:///a%2Fb/c%20d"]);
        // Simple expansion encodes the `%` itself (§3.2.2).
        let s = Expansion::parse("file:///{path}", &["path=a%2Fb".into()]).unwrap();
        assert_eq!(s.uris().unwrap(), vec!["file:///a%252Fb"]);
    }

    #[test]
    fn expand_every_operator_and_rejects_malformed_and_missing() {
        let q = Expansion::parse("x://r{?q,n}", &["q=a b".into(), "n=1".into()]).unwrap();
        assert_eq!(q.uris().unwrap(), vec!["x://r?q=a%20b&n=1"]);
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

    /// The `&'static str` revisions (clap defaults) are the protocol module's.
    #[test]
    fn revision_literals_are_the_protocol_modules() {
        assert_eq!(DEFAULT_PROTOCOL, protocol::FALLBACK_REVISION.as_str());
        assert_eq!(
            FALLBACK_HANDSHAKE_VERSION,
            protocol::FALLBACK_REVISION.as_str()
        );
        assert_eq!(MODERN_PROTOCOL, protocol::STATELESS_SINCE.as_str());
        for v in KNOWN_PROTOCOLS {
            assert!(Revision::new(*v).is_known(), "{v}");
        }
        assert_eq!(Era::of(MODERN_PROTOCOL), Era::Stateless);
        assert_eq!(Era::of(DEFAULT_PROTOCOL), Era::Session);
    }

    #[test]
    fn missing_uri_is_a_sibling_of_the_first_listed() {
        for (first, missing) in [
            (
                "demo://resource/static/document/a.md",
                "demo://resource/static/document/mcptape-does-not-exist",
            ),
            (
                "mcptape://docs/readme.md",
                "mcptape://docs/mcptape-does-not-exist",
            ),
            ("test://x", "test://x/mcptape-does-not-exist"),
            ("file:///a.txt", "file:///mcptape-does-not-exist"),
        ] {
            assert_eq!(
                missing_uri_for(Some(first)),
                missing,
                "first listed {first}"
            );
        }
        assert_eq!(missing_uri_for(None), "file:///mcptape-does-not-exist");
    }

    /// Regression (issue 11): crawl's old line loop took a read error for the
    /// server's end of output and reported "closed". The server's stdout
    /// answers `initialize` (its last line without a newline), then the read
    /// fails: the crawl reports the read error.
    #[tokio::test]
    async fn crawl_read_error_is_reported_as_io_not_as_the_server_closing() {
        // `resources` advertised, so the crawl's next request is a `resources/list`.
        let init = br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"t","version":"1"}}}"#;
        let session = Session::over(
            // The reply, then a read error like a broken device's.
            tokio_test::io::Builder::new()
                .read(init)
                .read_error(std::io::Error::other("EIO"))
                .build(),
            tokio::io::sink(),
        );
        let opts = CrawlOptions {
            target: CrawlTarget::Command(vec!["unused".into()]),
            protocol: DEFAULT_PROTOCOL.into(),
            expand: Vec::new(),
            missing_uri: None,
            request_timeout: Duration::from_secs(5),
            redactor: Redactor::default(),
        };
        let mut versions = Vec::new();
        let err = crawl_on(&session, &opts, &mut |p| {
            if let CrawlProgress::Handshake { version } = p {
                versions.push(version);
            }
        })
        .await
        .unwrap_err();
        assert_eq!(
            versions,
            ["2025-11-25"],
            "the unterminated reply still answered"
        );
        match err.kind() {
            RecordErrorKind::Io { what, source } => {
                assert_eq!(*what, "server connection");
                assert!(source.to_string().contains("EIO"), "{source}");
            }
            k => panic!("expected the read error, got {k:?}"),
        }
    }
}
