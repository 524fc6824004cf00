//! The MCP protocol model: revisions, eras, method names, `_meta` keys, error
//! codes, handshake params, HTTP header names, JSON Pointer helpers, and the
//! one revision detector. In the manner of rmcp's `model` module: every piece
//! of protocol knowledge the other crates need lives here, once.
//!
//! Sources: MCP specification revisions 2024-11-05, 2025-03-26, 2025-06-18,
//! 2025-11-25 and 2026-07-28 (`schema.ts` and "Basic" › "Lifecycle",
//! "Versioning", "Transports"); JSON-RPC 2.0 §5.1 (error codes); RFC 6901
//! (JSON Pointer).
//!
//! Sans-IO: pure functions over strings and parsed messages.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::envelope::{Message, RequestId};

// ---------------------------------------------------------------------------
// Revisions and eras
// ---------------------------------------------------------------------------

/// An MCP protocol revision: the `YYYY-MM-DD` string sent as
/// `protocolVersion` (MCP 2025-11-25 "Basic" › "Versioning").
///
/// Revisions order by date. [`Revision::Other`] holds any other string a peer
/// sent; it is compared sanely against the known ones:
/// * a `YYYY-MM-DD` string orders by its date among the known revisions
///   (`Other("2025-09-01")` sits between 2025-06-18 and 2025-11-25);
/// * a `DRAFT-…` name (the spec's draft revision) orders after every date;
/// * anything else (`"1.0"`, `""`) orders before every date.
///
/// Equality, hashing and ordering all use that key, so `Other("2025-06-18")`
/// equals [`Revision::V2025_06_18`]; [`Revision::new`] always returns the
/// known variant for a known string.
#[derive(Debug, Clone)]
pub enum Revision {
    /// MCP 2024-11-05: `initialize`, HTTP+SSE transport (no Streamable HTTP).
    V2024_11_05,
    /// MCP 2025-03-26: `initialize`, Streamable HTTP with `Mcp-Session-Id`.
    V2025_03_26,
    /// MCP 2025-06-18: adds the `MCP-Protocol-Version` HTTP header.
    V2025_06_18,
    /// MCP 2025-11-25: last revision of the session era; not-found is -32002.
    V2025_11_25,
    /// MCP 2026-07-28: stateless (`server/discover`, no session, `_meta`
    /// protocol version on every request, `Mcp-Method`/`Mcp-Name` headers,
    /// `resultType`, `ttlMs`/`cacheScope`, not-found is -32602 with `data.uri`).
    V2026_07_28,
    /// Any other string a peer sent, kept as sent.
    Other(String),
}

impl Revision {
    /// The known revisions, oldest first.
    pub const KNOWN: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The newest known revision (2026-07-28), mcptape's target.
    pub const LATEST: Revision = Revision::V2026_07_28;

    /// A revision from its wire string: the known variant for a known
    /// string, else [`Revision::Other`] with the string as sent. Never fails.
    pub fn new(s: impl Into<String>) -> Revision {
        let s = s.into();
        match Revision::known(&s) {
            Some(r) => r,
            None => Revision::Other(s),
        }
    }

    /// The known revision spelled `s`, or `None`.
    pub fn known(s: &str) -> Option<Revision> {
        Revision::KNOWN.into_iter().find(|r| r.as_str() == s)
    }

    /// The wire string (`"2025-11-25"`). `const`, so a known revision can give
    /// a `&'static str` constant: `const V: &str = Revision::V2025_11_25.as_str();`.
    pub const fn as_str(&self) -> &str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
            Revision::Other(s) => s.as_str(),
        }
    }

    /// True for a revision this crate knows (not [`Revision::Other`], after
    /// normalisation: `Other("2025-06-18")` counts as known).
    pub fn is_known(&self) -> bool {
        Revision::known(self.as_str()).is_some()
    }

    /// The era of this revision ([`Era::of`]).
    pub fn era(&self) -> Era {
        Era::of(self.as_str())
    }

    /// True for the stateless era: 2026-07-28 and later ([`Era::of`]).
    pub fn is_stateless_era(&self) -> bool {
        self.era() == Era::Stateless
    }

    /// Compatibility spelling of [`Revision::V2025_06_18`] (older mcptape-check API).
    #[doc(hidden)]
    pub fn v2025_06_18() -> Revision {
        Revision::V2025_06_18
    }
    /// Compatibility spelling of [`Revision::V2025_11_25`] (older mcptape-check API).
    #[doc(hidden)]
    pub fn v2025_11_25() -> Revision {
        Revision::V2025_11_25
    }
    /// Compatibility spelling of [`Revision::V2026_07_28`] (older mcptape-check API).
    #[doc(hidden)]
    pub fn v2026_07_28() -> Revision {
        Revision::V2026_07_28
    }
}

/// Where a revision string sorts: (class, text). Class 0: not a date and not a
/// draft; 1: `YYYY-MM-DD` (text order is date order); 2: `DRAFT-…`.
fn sort_key(s: &str) -> (u8, &str) {
    let b = s.as_bytes();
    let is_date = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if is_date {
        (1, s)
    } else if s.starts_with("DRAFT") {
        (2, s)
    } else {
        (0, s)
    }
}

impl PartialEq for Revision {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}
impl Eq for Revision {}
impl Hash for Revision {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}
impl PartialOrd for Revision {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Revision {
    fn cmp(&self, other: &Self) -> Ordering {
        sort_key(self.as_str()).cmp(&sort_key(other.as_str()))
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Revision {
    type Err = std::convert::Infallible;
    /// Never fails: see [`Revision::new`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Revision::new(s))
    }
}

impl From<&str> for Revision {
    fn from(s: &str) -> Self {
        Revision::new(s)
    }
}

impl Serialize for Revision {
    /// As the wire string.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Revision {
    /// From a JSON string ([`Revision::new`]).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Revision::new)
    }
}

/// The first revision of the stateless era (MCP 2026-07-28: SEP-2164,
/// SEP-2549, `server/discover`).
pub const STATELESS_SINCE: Revision = Revision::V2026_07_28;

/// The first revision without JSON-RPC batches: MCP 2025-03-26 allowed a message to be a JSON-RPC
/// batch (JSON-RPC 2.0 §6, an array of messages); 2025-06-18 removed them ("Remove support for
/// JSON-RPC batching", its changelog; its stdio and Streamable HTTP transports carry one
/// JSON-RPC request, notification or response per line or POST body), and no later revision has
/// them. `mcptape check` fires `jsonrpc-batch-removed` on a batch at this revision or later.
pub const BATCHES_REMOVED_IN: Revision = Revision::V2025_06_18;

/// The revision of the session-era `initialize` mcptape sends by default, and
/// after a `server/discover` probe fails (the fallback of MCP 2026-07-28
/// "Basic" › "Lifecycle" › "Backward compatibility").
pub const FALLBACK_REVISION: Revision = Revision::V2025_11_25;

/// The protocol era of a revision: how a client starts and what HTTP carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize` + `notifications/initialized`
    /// (MCP 2025-11-25 "Lifecycle"), optional `Mcp-Session-Id`, GET stream.
    Session,
    /// 2026-07-28 and later: no `initialize`, no session; stateless
    /// `server/discover`, the revision in every request's `_meta`,
    /// `Mcp-Method`/`Mcp-Name` headers (MCP 2026-07-28 "Transports").
    Stateless,
}

impl Era {
    /// The era of a revision string. THE era-boundary rule: `version` is
    /// stateless iff it orders at or after [`STATELESS_SINCE`] in the
    /// [`Revision`] order (dates by date, `DRAFT-…` after every date, any
    /// other string before every date).
    pub fn of(version: &str) -> Era {
        if sort_key(version) >= sort_key(STATELESS_SINCE.as_str()) {
            Era::Stateless
        } else {
            Era::Session
        }
    }

    /// The request that opens a conversation in this era:
    /// [`method::INITIALIZE`] or [`method::SERVER_DISCOVER`].
    pub fn handshake_method(self) -> &'static str {
        match self {
            Era::Session => method::INITIALIZE,
            Era::Stateless => method::SERVER_DISCOVER,
        }
    }
}

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

/// Method names (MCP 2026-07-28 `schema.ts`; `initialize` and
/// `notifications/initialized` are session-era, 2025-11-25 "Lifecycle").
pub mod method {
    /// Session-era handshake request (MCP 2025-11-25 "Lifecycle").
    pub const INITIALIZE: &str = "initialize";
    /// Sent by the client after the `initialize` result (2025-11-25 "Lifecycle").
    pub const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
    /// Stateless-era discovery request (MCP 2026-07-28 "Lifecycle").
    pub const SERVER_DISCOVER: &str = "server/discover";
    /// Liveness check, either direction (MCP "Utilities" › "Ping").
    pub const PING: &str = "ping";
    /// Cancellation of an in-flight request, `params.requestId` (MCP "Utilities" › "Cancellation").
    pub const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
    /// Progress of a request, `params.progressToken` (MCP "Utilities" › "Progress").
    pub const NOTIFICATIONS_PROGRESS: &str = "notifications/progress";
    /// Read a resource by `params.uri` (MCP "Server Features" › "Resources").
    pub const RESOURCES_READ: &str = "resources/read";
    /// List resources, paginated by `cursor`/`nextCursor`.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// List resource templates (RFC 6570 `uriTemplate`), paginated.
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// Subscribe to one resource's updates.
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// Unsubscribe from one resource's updates.
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// A subscribed resource changed, `params.uri`.
    pub const NOTIFICATIONS_RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// The resource list changed.
    pub const NOTIFICATIONS_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// Set the server's log level (MCP "Utilities" › "Logging").
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// A log message from the server.
    pub const NOTIFICATIONS_MESSAGE: &str = "notifications/message";
    /// Call a tool, `params.name` (also the `Mcp-Name` header, 2026-07-28).
    pub const TOOLS_CALL: &str = "tools/call";
    /// List tools.
    pub const TOOLS_LIST: &str = "tools/list";
    /// Get a prompt, `params.name` (also the `Mcp-Name` header, 2026-07-28).
    pub const PROMPTS_GET: &str = "prompts/get";
    /// List prompts.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// Argument completion.
    pub const COMPLETION_COMPLETE: &str = "completion/complete";
    /// Server-to-client: sampling request.
    pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
    /// Server-to-client: list the client's roots.
    pub const ROOTS_LIST: &str = "roots/list";
    /// Server-to-client: elicitation request.
    pub const ELICITATION_CREATE: &str = "elicitation/create";

    /// The requests that open a conversation in either era.
    pub const HANDSHAKES: [&str; 2] = [INITIALIZE, SERVER_DISCOVER];

    /// The methods whose complete 2026-07-28 results carry `ttlMs` and
    /// `cacheScope` (MCP 2026-07-28, SEP-2549: "one of the six methods").
    pub const CACHEABLE: [&str; 6] = [
        TOOLS_LIST,
        PROMPTS_LIST,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ,
        SERVER_DISCOVER,
    ];
}

/// `_meta` keys (MCP 2026-07-28 "Basic" › "`_meta`"; reverse-DNS prefix
/// `io.modelcontextprotocol/` is reserved for the spec).
pub mod meta {
    /// The member holding request/result metadata: `params._meta`, `result._meta`.
    pub const KEY: &str = "_meta";
    /// The revision of this request, on every 2026-07-28 request
    /// (MCP 2026-07-28 "Basic" › "Versioning").
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's `Implementation` (name, version) on every 2026-07-28 request.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The client's capabilities on every 2026-07-28 request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The progress token of a request (`params._meta.progressToken`, all revisions).
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// The server's `Implementation` in a 2026-07-28 `server/discover`
    /// result's `_meta` (`result._meta["io.modelcontextprotocol/serverInfo"]`).
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

/// JSON-RPC and MCP error codes (JSON-RPC 2.0 §5.1; MCP 2026-07-28 `schema.ts`).
pub mod error_code {
    /// Invalid JSON was received (JSON-RPC 2.0 §5.1).
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid Request object (JSON-RPC 2.0 §5.1).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist / is not available (JSON-RPC 2.0 §5.1).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (JSON-RPC 2.0 §5.1). Since MCP 2026-07-28
    /// also resource-not-found, with `data.uri` (SEP-2164).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error (JSON-RPC 2.0 §5.1).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Resource not found in MCP 2025-11-25 and earlier (`schema.ts`
    /// "-32002 (resource not found, 2025-11-25 and earlier; replaced by -32602)").
    pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;
    /// Streamable HTTP: a request without a session id where the server
    /// requires one, answered with HTTP 400 (MCP 2025-03-26 … 2025-11-25
    /// "Transports" › "Session Management"; the code is the TypeScript SDK's,
    /// from the implementation-defined server-error range of JSON-RPC 2.0 §5.1).
    pub const SESSION_REQUIRED: i64 = -32000;
    /// Streamable HTTP: a session id the server does not know (unknown or
    /// ended), answered with HTTP 404 (same sources as [`SESSION_REQUIRED`]).
    pub const SESSION_NOT_FOUND: i64 = -32001;
}

/// Streamable HTTP header names, lowercase (HTTP field names are
/// case-insensitive, RFC 9110 §5.1; `hyper` wants lowercase). The spec's
/// spelling is in each doc.
pub mod header {
    /// `MCP-Protocol-Version`: the negotiated revision on every request after
    /// initialization (MCP 2025-06-18 "Transports"), on every POST in 2026-07-28.
    pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    /// `Mcp-Session-Id`: assigned on the `initialize` response, sent on every
    /// later request (MCP 2025-03-26 … 2025-11-25 "Transports" › "Session Management").
    pub const SESSION_ID: &str = "mcp-session-id";
    /// `Mcp-Method`: the JSON-RPC method on every request/notification POST (MCP 2026-07-28).
    pub const METHOD: &str = "mcp-method";
    /// `Mcp-Name`: `params.name` of `tools/call`/`prompts/get`, `params.uri`
    /// of `resources/read` (MCP 2026-07-28 "Transports").
    pub const NAME: &str = "mcp-name";
}

// ---------------------------------------------------------------------------
// Handshake params
// ---------------------------------------------------------------------------

/// An MCP `Implementation` (`clientInfo` / `serverInfo`: name and version;
/// MCP 2025-11-25 `schema.ts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name, e.g. `"mcptape"`.
    pub name: String,
    /// Version string, e.g. `"0.1.0"`.
    pub version: String,
}

impl Implementation {
    /// mcptape itself: `{"name":"mcptape","version":<workspace version>}`.
    pub fn mcptape() -> Implementation {
        Implementation {
            name: "mcptape".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The `params` of a session-era `initialize` request:
/// `{"protocolVersion", "capabilities": {}, "clientInfo"}` (MCP 2025-11-25
/// "Lifecycle" › "Initialization"). mcptape declares no client capability, so
/// it answers server-to-client requests other than `ping` with
/// [`error_code::METHOD_NOT_FOUND`].
pub fn initialize_params(revision: &Revision, client: &Implementation) -> Value {
    to_value(&InitializeParams {
        protocol_version: revision,
        capabilities: NoCapabilities {},
        client_info: client,
    })
}

/// `InitializeRequest.params` (MCP 2025-11-25 `schema.ts`), as mcptape sends it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams<'a> {
    protocol_version: &'a Revision,
    capabilities: NoCapabilities,
    client_info: &'a Implementation,
}

/// `ClientCapabilities` with no capability declared: `{}`.
#[derive(Serialize)]
struct NoCapabilities {}

/// The `_meta` of a 2026-07-28 request ([`request_meta`]): keys from [`meta`].
struct RequestMeta<'a> {
    revision: &'a Revision,
    client: &'a Implementation,
}

impl Serialize for RequestMeta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry(meta::PROTOCOL_VERSION, self.revision)?;
        m.serialize_entry(meta::CLIENT_INFO, self.client)?;
        m.serialize_entry(meta::CLIENT_CAPABILITIES, &NoCapabilities {})?;
        m.end()
    }
}

/// `value` as a JSON value (key order kept). The params above and the
/// bodies of [`reply`](crate::reply) serialize to string-keyed objects,
/// strings, numbers and recorded values, which cannot fail; a caller's own
/// `Serialize` that refuses gives `null`.
pub(crate) fn to_value(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The `_meta` object a 2026-07-28 client puts on every request (and on
/// `server/discover`): protocol version, client info, client capabilities
/// (MCP 2026-07-28 "Basic" › "Versioning"; keys in [`meta`]).
pub fn request_meta(revision: &Revision, client: &Implementation) -> Value {
    to_value(&RequestMeta { revision, client })
}

/// The revisions mcptape's client asks for (`record`/`crawl` `--protocol`):
/// 2025-06-18 and 2025-11-25 (`initialize`, spec "Lifecycle") and
/// 2026-07-28 (`server/discover`), as wire strings (`&'static str` for clap).
pub const CLIENT_REVISIONS: [&str; 3] = [
    Revision::V2025_06_18.as_str(),
    FALLBACK_REVISION.as_str(),
    STATELESS_SINCE.as_str(),
];

/// A handshake result as mcptape reads it, the one accessor for it: an
/// `InitializeResult` (`initialize`, every revision: `protocolVersion`) or a
/// `DiscoverResult` (`server/discover`, MCP 2026-07-28 "Lifecycle":
/// `supportedVersions`). Borrowed from the result value; members of the
/// wrong type read as absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeResult<'a> {
    result: Option<&'a serde_json::Map<String, Value>>,
}

impl<'a> HandshakeResult<'a> {
    /// The view of `result` (the `result` member of the reply; a non-object
    /// has no members).
    pub fn of(result: &'a Value) -> Self {
        HandshakeResult {
            result: result.as_object(),
        }
    }

    /// The view of a `result` object's members.
    pub fn of_object(result: &'a serde_json::Map<String, Value>) -> Self {
        HandshakeResult {
            result: Some(result),
        }
    }

    /// `InitializeResult.protocolVersion`, when a string.
    pub fn protocol_version(&self) -> Option<&'a str> {
        self.result?.get("protocolVersion")?.as_str()
    }

    /// `InitializeResult.protocolVersion` as a [`Revision`].
    pub fn revision(&self) -> Option<Revision> {
        self.protocol_version().map(Revision::new)
    }

    /// `DiscoverResult.supportedVersions` in the order sent, non-strings
    /// skipped; `None` when missing or not an array.
    pub fn supported_versions(&self) -> Option<Vec<Revision>> {
        let list = self.result?.get("supportedVersions")?.as_array()?;
        Some(
            list.iter()
                .filter_map(Value::as_str)
                .map(Revision::new)
                .collect(),
        )
    }
}

/// The era rule of a recorded server answering the other era's handshake
/// (MCP 2026-07-28 "Lifecycle" › "Backward compatibility"): the revision an
/// `initialize` asking for `asked` is answered with when the server's
/// `server/discover` listed `supported`. `asked` when it is a session-era
/// revision that is known or listed; else the newest session-era revision
/// listed; else [`FALLBACK_REVISION`].
pub fn initialize_answer_revision(asked: Option<&str>, supported: &[Revision]) -> Revision {
    match asked {
        Some(a)
            if Era::of(a) == Era::Session
                && (Revision::new(a).is_known() || supported.iter().any(|r| r.as_str() == a)) =>
        {
            Revision::new(a)
        }
        _ => supported
            .iter()
            .filter(|r| r.era() == Era::Session)
            .max()
            .unwrap_or(&FALLBACK_REVISION)
            .clone(),
    }
}

/// The `supportedVersions` of a `server/discover` result (MCP 2026-07-28
/// "Lifecycle"), in the order sent; non-strings skipped. `None` when the
/// member is missing or not an array.
pub fn supported_versions(discover_result: &Value) -> Option<Vec<Revision>> {
    HandshakeResult::of(discover_result).supported_versions()
}

// ---------------------------------------------------------------------------
// JSON Pointer (RFC 6901)
// ---------------------------------------------------------------------------

/// Escapes one reference token (RFC 6901 §4): `~` → `~0`, then `/` → `~1`.
/// Borrowed when nothing needs escaping.
pub fn escape_token(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// Unescapes one reference token (RFC 6901 §4): `~1` → `/`, then `~0` → `~`.
/// `None` for a `~` not followed by `0` or `1` (not a valid pointer).
pub fn unescape_token(token: &str) -> Option<Cow<'_, str>> {
    if !token.contains('~') {
        return Some(Cow::Borrowed(token));
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(Cow::Owned(out))
}

/// A JSON Pointer (RFC 6901) built token by token, e.g.
/// `JsonPointer::root().key("result").key("contents").index(3).key("blob")`
/// is `/result/contents/3/blob`. The root pointer is the empty string (§5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct JsonPointer(String);

impl JsonPointer {
    /// The whole document: `""`.
    pub fn root() -> JsonPointer {
        JsonPointer(String::new())
    }

    /// Appends an object member name, escaped (RFC 6901 §4).
    pub fn key(mut self, name: &str) -> JsonPointer {
        self.push_key(name);
        self
    }

    /// Appends an array index (RFC 6901 §4: decimal, no leading zeros).
    pub fn index(mut self, i: usize) -> JsonPointer {
        self.push_index(i);
        self
    }

    /// In-place [`JsonPointer::key`].
    pub fn push_key(&mut self, name: &str) {
        self.0.push('/');
        self.0.push_str(&escape_token(name));
    }

    /// In-place [`JsonPointer::index`].
    pub fn push_index(&mut self, i: usize) {
        use std::fmt::Write as _;
        let _ = write!(self.0, "/{i}");
    }

    /// Parses pointer text into its unescaped tokens (`""` → no tokens).
    /// `None` if `text` is neither empty nor starts with `/`, or holds a bad
    /// `~` escape (RFC 6901 §3).
    pub fn tokens(text: &str) -> Option<Vec<String>> {
        if text.is_empty() {
            return Some(Vec::new());
        }
        let rest = text.strip_prefix('/')?;
        rest.split('/')
            .map(|t| unescape_token(t).map(Cow::into_owned))
            .collect()
    }

    /// The pointer text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The pointer text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// ---------------------------------------------------------------------------
// The revision detector
// ---------------------------------------------------------------------------

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server (a transcript's `c2s`).
    C2s,
    /// Server to client (a transcript's `s2c`).
    S2c,
}

impl Direction {
    /// [`Direction::C2s`] if `client` sent it, else [`Direction::S2c`] (for
    /// callers with their own direction type:
    /// `Direction::from_client(dir == transcript::Direction::C2s)`).
    pub fn from_client(client: bool) -> Direction {
        if client {
            Direction::C2s
        } else {
            Direction::S2c
        }
    }
}

/// Where a revision came from. Kebab-case names (`request-meta`) in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RevisionSource {
    /// Fixed by the caller (e.g. `mcptape check --spec`); never returned by
    /// the detector.
    CommandLine,
    /// The server's `initialize` result `protocolVersion`, answering a client
    /// `initialize` (MCP 2025-11-25 "Lifecycle" › "Version Negotiation").
    Initialize,
    /// A client request's `_meta["io.modelcontextprotocol/protocolVersion"]`
    /// (MCP 2026-07-28 "Basic" › "Versioning").
    RequestMeta,
    /// The hint the caller passed (a transcript header's `protocolVersion`).
    Header,
    /// A recorded `protocol` event (a transcript's `protocol` record).
    ProtocolRecord,
    /// Nothing said: [`Revision::LATEST`] was assumed.
    Assumed,
}

impl RevisionSource {
    /// Kebab-case name (`initialize`, `request-meta`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RevisionSource::CommandLine => "command-line",
            RevisionSource::Initialize => "initialize",
            RevisionSource::RequestMeta => "request-meta",
            RevisionSource::Header => "header",
            RevisionSource::ProtocolRecord => "protocol-record",
            RevisionSource::Assumed => "assumed",
        }
    }
}

impl fmt::Display for RevisionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A detected revision and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The revision.
    pub revision: Revision,
    /// Its source.
    pub source: RevisionSource,
}

/// One item of a conversation as the detector sees it.
#[derive(Debug, Clone, Copy)]
pub enum Observation<'a> {
    /// The JSON text of one message or batch (one stdio line, one HTTP body).
    Json(Direction, &'a str),
    /// A parsed message.
    Message(Direction, &'a Message),
    /// A recorded protocol revision (a transcript `protocol` record).
    ProtocolRecord(&'a str),
}

/// The one revision detector, fed message by message (streaming: the
/// recorder's sink) or over a whole sequence ([`detect_revision`]: check,
/// replay). Both give the same answer.
///
/// Precedence:
/// 1. **Conclusive evidence, first in message order**:
///    * a server result whose id matches a client `initialize` request →
///      its `protocolVersion` ([`RevisionSource::Initialize`]);
///    * a client request other than `initialize`/`server/discover` carrying
///      `params._meta["io.modelcontextprotocol/protocolVersion"]`
///      ([`RevisionSource::RequestMeta`]).
/// 2. The `_meta` protocol version of a `server/discover` request that was
///    answered with a result (not an error: an error means the client falls
///    back to `initialize`) ([`RevisionSource::RequestMeta`]).
/// 3. The caller's hint, e.g. the transcript header ([`RevisionSource::Header`]).
/// 4. The first `protocol` record ([`RevisionSource::ProtocolRecord`]).
/// 5. [`Revision::LATEST`] ([`RevisionSource::Assumed`]).
///
/// JSON text is read leniently (only `id`, `method`, `params._meta`,
/// `result.protocolVersion`; a batch element by element; unparsable text is
/// skipped), so a message that breaks other rules still reveals its revision.
/// Ids match exactly (`1` ≠ `"1"`).
#[derive(Debug, Clone, Default)]
pub struct RevisionDetector {
    initialize_ids: Vec<RequestId>,
    discover: Vec<(RequestId, String)>,
    discover_answered: Option<String>,
    protocol_record: Option<String>,
    settled: Option<Detected>,
}

/// What the detector reads of one message.
enum View {
    Request {
        id: Option<RequestId>,
        method: String,
        meta_version: Option<String>,
    },
    Result {
        id: RequestId,
        protocol_version: Option<String>,
    },
    Error {
        id: Option<RequestId>,
    },
}

#[derive(Deserialize)]
struct LenientMsg {
    id: Option<Value>,
    method: Option<String>,
    params: Option<LenientParams>,
    result: Option<LenientResult>,
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct LenientParams {
    #[serde(rename = "_meta")]
    meta: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LenientResult {
    protocol_version: Option<Value>,
}

impl LenientMsg {
    fn view(self) -> Option<View> {
        let id = self.id.as_ref().and_then(|v| RequestId::from_value(v).ok());
        if let Some(method) = self.method {
            let meta_version = self
                .params
                .and_then(|p| p.meta)
                .and_then(|m| m.get(meta::PROTOCOL_VERSION)?.as_str().map(str::to_owned));
            return Some(View::Request {
                id,
                method,
                meta_version,
            });
        }
        if let Some(r) = self.result {
            return Some(View::Result {
                id: id?,
                protocol_version: r
                    .protocol_version
                    .and_then(|v| v.as_str().map(str::to_owned)),
            });
        }
        self.error.map(|_| View::Error { id })
    }
}

fn lenient_views(text: &str) -> Vec<View> {
    let t = text.trim_start();
    if t.starts_with('[') {
        match serde_json::from_str::<Vec<Value>>(t) {
            Ok(items) => items
                .into_iter()
                .filter_map(|v| serde_json::from_value::<LenientMsg>(v).ok()?.view())
                .collect(),
            Err(_) => Vec::new(),
        }
    } else {
        serde_json::from_str::<LenientMsg>(t)
            .ok()
            .and_then(LenientMsg::view)
            .into_iter()
            .collect()
    }
}

fn typed_view(m: &Message) -> Option<View> {
    match m {
        Message::Request(r) => Some(View::Request {
            id: Some(r.id.clone()),
            method: r.method.clone(),
            meta_version: request_meta_version(r.params.as_ref()).map(str::to_owned),
        }),
        Message::Notification(_) => None,
        Message::Response(r) => Some(View::Result {
            id: r.id.clone(),
            protocol_version: HandshakeResult::of(&r.result)
                .protocol_version()
                .map(str::to_owned),
        }),
        Message::Error(e) => Some(View::Error { id: e.id.clone() }),
    }
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]` when it is a string.
pub fn request_meta_version(params: Option<&Value>) -> Option<&str> {
    params?
        .get(meta::KEY)?
        .get(meta::PROTOCOL_VERSION)?
        .as_str()
}

impl RevisionDetector {
    /// A detector that has seen nothing.
    pub fn new() -> RevisionDetector {
        RevisionDetector::default()
    }

    /// Whether [`Self::observe`] passes over every server-to-client message
    /// now (one changes nothing and gives `None`): the revision is settled,
    /// or no `initialize` and no `server/discover` request waits for its
    /// answer. A reader may then leave such a message unread (`check`'s
    /// first pass does not scan a 160 MB `resources/read` result).
    pub fn ignores_server_messages(&self) -> bool {
        self.settled.is_some() || (self.initialize_ids.is_empty() && self.discover.is_empty())
    }

    /// Feeds one observation. Returns the revision when this observation
    /// settled it (precedence step 1) — exactly once; later calls return
    /// `None` and change nothing.
    pub fn observe(&mut self, obs: Observation<'_>) -> Option<Detected> {
        if self.settled.is_some() {
            return None;
        }
        match obs {
            Observation::ProtocolRecord(v) => {
                if self.protocol_record.is_none() {
                    self.protocol_record = Some(v.to_owned());
                }
                None
            }
            Observation::Message(dir, m) => {
                let v = typed_view(m)?;
                self.see(dir, v)
            }
            Observation::Json(dir, text) => {
                // Cheap pre-filter: a server message matters only if it can
                // answer a handshake; most are `resources/read` results.
                if dir == Direction::S2c
                    && self.discover.is_empty()
                    && (self.initialize_ids.is_empty() || !text.contains("\"protocolVersion\""))
                {
                    return None;
                }
                let mut out = None;
                for v in lenient_views(text) {
                    if let Some(d) = self.see(dir, v) {
                        out = Some(d);
                        break;
                    }
                }
                out
            }
        }
    }

    fn see(&mut self, dir: Direction, v: View) -> Option<Detected> {
        let settled = match (dir, v) {
            (
                Direction::C2s,
                View::Request {
                    id: Some(id),
                    method,
                    meta_version,
                },
            ) => match method.as_str() {
                method::INITIALIZE => {
                    self.initialize_ids.push(id);
                    None
                }
                method::SERVER_DISCOVER => {
                    if let Some(v) = meta_version {
                        self.discover.push((id, v));
                    }
                    None
                }
                _ => meta_version.map(|v| (v, RevisionSource::RequestMeta)),
            },
            (
                Direction::S2c,
                View::Result {
                    id,
                    protocol_version,
                },
            ) => {
                if self.initialize_ids.contains(&id) {
                    protocol_version.map(|v| (v, RevisionSource::Initialize))
                } else {
                    if let Some(i) = self.discover.iter().position(|(d, _)| *d == id) {
                        let (_, v) = self.discover.swap_remove(i);
                        self.discover_answered.get_or_insert(v);
                    }
                    None
                }
            }
            (Direction::S2c, View::Error { id: Some(id) }) => {
                self.discover.retain(|(d, _)| *d != id);
                None
            }
            _ => None,
        };
        let (v, source) = settled?;
        let d = Detected {
            revision: Revision::new(v),
            source,
        };
        self.settled = Some(d.clone());
        Some(d)
    }

    /// The revision settled so far (precedence step 1), if any.
    pub fn settled(&self) -> Option<&Detected> {
        self.settled.as_ref()
    }

    /// The answer after the whole sequence, with `hint` (e.g. a transcript
    /// header's `protocolVersion`) for precedence step 3.
    pub fn finish(self, hint: Option<&str>) -> Detected {
        if let Some(d) = self.settled {
            return d;
        }
        let (revision, source) = if let Some(v) = self.discover_answered {
            (Revision::new(v), RevisionSource::RequestMeta)
        } else if let Some(v) = hint {
            (Revision::new(v), RevisionSource::Header)
        } else if let Some(v) = self.protocol_record {
            (Revision::new(v), RevisionSource::ProtocolRecord)
        } else {
            (Revision::LATEST, RevisionSource::Assumed)
        };
        Detected { revision, source }
    }
}

/// Detects the revision of a whole conversation (see [`RevisionDetector`]
/// for the precedence). Pure; stops reading at the first conclusive message.
pub fn detect_revision<'a>(
    observations: impl IntoIterator<Item = Observation<'a>>,
    hint: Option<&str>,
) -> Detected {
    let mut d = RevisionDetector::new();
    for o in observations {
        if d.observe(o).is_some() {
            break;
        }
    }
    d.finish(hint)
}
