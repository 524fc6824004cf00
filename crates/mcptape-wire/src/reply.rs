//! The replies a server writes, as typed values (in the manner of rmcp's
//! `model`): the JSON-RPC envelope is the one of [`envelope`](crate::envelope)
//! ([`Message::Response`], [`Message::Error`], the id written as its raw text,
//! so `18446744073709551616` and `"\u0041b"` go back byte for byte), and the
//! bodies a recorded server never said but `mcptape serve` must answer with
//! are the types below.
//!
//! Every type serializes its members in the order given (`"jsonrpc"`, `"id"`,
//! then `"result"` or `"error"`; `"code"`, `"message"`, `"data"`), with
//! optional members left out when absent, so a reply is the same bytes on
//! every run: replays are compared byte for byte.
//!
//! Sources: JSON-RPC 2.0 §5 (response object), §5.1 (error object); MCP
//! 2025-11-25 `schema.ts` (`EmptyResult`, `ListResourcesResult`,
//! `ListResourceTemplatesResult`, `ListToolsResult`, `ListPromptsResult`,
//! `CompleteResult`, `InitializeResult`); MCP 2026-07-28 `schema.ts`
//! (`DiscoverResult`, `Result.resultType`, `CacheableResult.ttlMs` /
//! `cacheScope`, resource not found as `-32602` with `data.uri`, SEP-2164).
//!
//! A not-found reply to a 2026-07-28 `resources/read`, as `serve` writes it:
//!
//! ```
//! use mcptape_wire::envelope::{ErrorObject, Message, RequestId};
//! use mcptape_wire::protocol::error_code::INVALID_PARAMS;
//!
//! let id = RequestId::from_json("18446744073709551616").unwrap();
//! let m = Message::error(Some(id), ErrorObject::resource_not_found(INVALID_PARAMS, "file:///missing.txt"));
//! assert_eq!(
//!     m.to_json(),
//!     r#"{"jsonrpc":"2.0","id":18446744073709551616,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"file:///missing.txt"}}}"#
//! );
//! ```

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::envelope::{ErrorObject, ErrorResponse, Message, RequestId, Response};
use crate::protocol::{Revision, error_code, meta, method, to_value};
use crate::resources::{CacheScope, ResultType};

/// `message` of a not-found `resources/read` error, the spec's wording (MCP
/// 2025-11-25 "Server Features" › "Resources" › "Error Handling"; 2026-07-28
/// keeps it with code `-32602`). Hosts classify by code and `data.uri`,
/// never by this text ([`classify`](crate::classify)).
pub const RESOURCE_NOT_FOUND_MESSAGE: &str = "Resource not found";

/// `message` of the Streamable HTTP rejection of a request without a session
/// ([`error_code::SESSION_REQUIRED`], HTTP 400), as the TypeScript SDK words it.
pub const SESSION_REQUIRED_MESSAGE: &str = "Bad Request: No valid session ID provided";

/// `message` of the Streamable HTTP rejection of an unknown or ended session
/// ([`error_code::SESSION_NOT_FOUND`], HTTP 404), as the TypeScript SDK words it.
pub const SESSION_NOT_FOUND_MESSAGE: &str = "Session not found";

impl Message {
    /// A result response (MCP `JSONRPCResultResponse`, JSON-RPC 2.0 §5):
    /// `{"jsonrpc":"2.0","id":<id as sent>,"result":<result>}`.
    pub fn result(id: RequestId, result: &impl Serialize) -> Message {
        Message::Response(Response {
            id,
            result: to_value(result),
        })
    }

    /// An error response (MCP `JSONRPCErrorResponse`, JSON-RPC 2.0 §5):
    /// `{"jsonrpc":"2.0","id":<id as sent, or null>,"error":{…}}`. `id` is
    /// `None` when the request's id could not be read (§5: then `null`).
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Message {
        Message::Error(ErrorResponse { id, error })
    }
}

impl ErrorObject {
    /// `{"code":code,"message":message}`, no `data` (JSON-RPC 2.0 §5.1).
    pub fn new(code: i64, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `{"code":code,"message":message,"data":data}` (JSON-RPC 2.0 §5.1:
    /// `data` is defined by the sender).
    pub fn with_data(code: i64, message: impl Into<String>, data: &impl Serialize) -> ErrorObject {
        ErrorObject {
            code,
            message: message.into(),
            data: Some(to_value(data)),
        }
    }

    /// The not-found error of a `resources/read` for `uri`:
    /// `{"code":code,"message":"Resource not found","data":{"uri":uri}}`.
    /// `code` is [`error_code::INVALID_PARAMS`] (`-32602`) since MCP
    /// 2026-07-28 (SEP-2164), [`error_code::LEGACY_RESOURCE_NOT_FOUND`]
    /// (`-32002`) in 2025-11-25 and earlier, or whatever code the recorded
    /// server used.
    pub fn resource_not_found(code: i64, uri: &str) -> ErrorObject {
        ErrorObject::with_data(code, RESOURCE_NOT_FOUND_MESSAGE, &NotFoundData { uri })
    }

    /// The HTTP 400 answer to a Streamable HTTP request without a session id
    /// where one is required: `{"code":-32000,"message":"Bad Request: No
    /// valid session ID provided"}` (MCP 2025-11-25 "Transports" › "Session
    /// Management"; code and wording of the TypeScript SDK).
    pub fn session_required() -> ErrorObject {
        ErrorObject::new(error_code::SESSION_REQUIRED, SESSION_REQUIRED_MESSAGE)
    }

    /// The HTTP 404 answer to a Streamable HTTP request whose session id the
    /// server does not know: `{"code":-32001,"message":"Session not found"}`
    /// (MCP 2025-11-25 "Transports" › "Session Management": the server MUST
    /// answer 404; code and wording of the TypeScript SDK).
    pub fn session_not_found() -> ErrorObject {
        ErrorObject::new(error_code::SESSION_NOT_FOUND, SESSION_NOT_FOUND_MESSAGE)
    }
}

/// `error.data` of a not-found `resources/read` (MCP 2026-07-28 `schema.ts`,
/// SEP-2164): `{"uri":"file:///missing.txt"}`, the uri as the client asked
/// for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotFoundData<'a> {
    /// The requested uri.
    pub uri: &'a str,
}

/// `EmptyResult` (MCP 2025-11-25 `schema.ts`): `{}`, the result of `ping`,
/// `logging/setLevel`, `resources/subscribe` and `resources/unsubscribe`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EmptyResult {}

/// An empty first page of one of the list results (MCP 2025-11-25
/// `schema.ts`): `{"<member>":[]}`, no `nextCursor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmptyList {
    /// `ListResourcesResult`: `{"resources":[]}` (`resources/list`).
    Resources,
    /// `ListResourceTemplatesResult`: `{"resourceTemplates":[]}` (`resources/templates/list`).
    ResourceTemplates,
    /// `ListToolsResult`: `{"tools":[]}` (`tools/list`).
    Tools,
    /// `ListPromptsResult`: `{"prompts":[]}` (`prompts/list`).
    Prompts,
}

impl EmptyList {
    /// The list result of `method` ([`method::RESOURCES_LIST`],
    /// [`method::RESOURCES_TEMPLATES_LIST`], [`method::TOOLS_LIST`],
    /// [`method::PROMPTS_LIST`]), `None` for any other method.
    pub fn of(method: &str) -> Option<EmptyList> {
        match method {
            method::RESOURCES_LIST => Some(EmptyList::Resources),
            method::RESOURCES_TEMPLATES_LIST => Some(EmptyList::ResourceTemplates),
            method::TOOLS_LIST => Some(EmptyList::Tools),
            method::PROMPTS_LIST => Some(EmptyList::Prompts),
            _ => None,
        }
    }

    /// The member holding the page: `"resources"`, `"resourceTemplates"`,
    /// `"tools"` or `"prompts"`.
    pub fn member(self) -> &'static str {
        match self {
            EmptyList::Resources => "resources",
            EmptyList::ResourceTemplates => "resourceTemplates",
            EmptyList::Tools => "tools",
            EmptyList::Prompts => "prompts",
        }
    }
}

impl Serialize for EmptyList {
    /// `{"<member>":[]}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let none: [Value; 0] = [];
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.member(), &none)?;
        m.end()
    }
}

/// `CompleteResult` (MCP 2025-11-25 `schema.ts`, `completion/complete`):
/// `{"completion":{"values":[…],"total"?:n,"hasMore"?:bool}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completion.
    pub completion: Completion,
}

/// `CompleteResult.completion`: at most 100 values, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The completion values (the spec caps them at 100 items).
    pub values: Vec<String>,
    /// The number of options available, when known (may exceed `values.len()`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more options exist beyond `values`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl CompleteResult {
    /// No completion: `{"completion":{"values":[],"hasMore":false}}`.
    pub fn none() -> CompleteResult {
        CompleteResult {
            completion: Completion {
                values: Vec::new(),
                total: None,
                has_more: Some(false),
            },
        }
    }
}

/// What mcptape's client answers to a server's `elicitation/create`
/// (MCP 2025-11-25 `schema.ts` `ElicitResult`, "Client Features" ›
/// "Elicitation"): `{"action":"decline"}`. mcptape declares no client
/// capability and never asks a person, so it declines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ElicitDecline {
    /// Always `"decline"`.
    action: Decline,
}

/// The `"decline"` of [`ElicitDecline`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
enum Decline {
    #[default]
    #[serde(rename = "decline")]
    Decline,
}

/// What mcptape's client answers to a server's `roots/list` (MCP 2025-11-25
/// `schema.ts` `ListRootsResult`, "Client Features" › "Roots"): `{"roots":[]}`,
/// no roots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NoRoots {
    /// Always empty.
    roots: [(); 0],
}

/// `CancelledNotification.params` (MCP 2025-11-25 `schema.ts`, "Utilities" ›
/// "Cancellation"), as mcptape's client sends it:
/// `{"requestId":<id as sent>,"reason":"deadline"}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams<'a> {
    /// The id of the request given up on, written as the raw text it was sent with.
    pub request_id: &'a RequestId,
    /// Why, for logs (e.g. `"deadline"`).
    pub reason: &'a str,
}

/// `InitializeResult` (MCP 2025-11-25 `schema.ts`, "Lifecycle" ›
/// "Initialization"): `{"protocolVersion","capabilities","serverInfo",
/// "instructions"?}`. `capabilities`, `serverInfo` and `instructions` are
/// values as a recorded server sent them (a `serverInfo` keeps its `title`,
/// `icons`, … beyond [`Implementation`](crate::protocol::Implementation)).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server answers with.
    pub protocol_version: Revision,
    /// `ServerCapabilities`, e.g. `{"resources":{"subscribe":true}}`.
    pub capabilities: Value,
    /// `Implementation`: `{"name","version"}` and any more members.
    pub server_info: Value,
    /// Usage hints for the client's model (a string in the spec), when sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Value>,
}

/// `DiscoverResult` (MCP 2026-07-28 `schema.ts`, "Lifecycle", the stateless
/// `server/discover`): `{"supportedVersions","capabilities","_meta"?,
/// "instructions"?}`, the server's identity in
/// `_meta["io.modelcontextprotocol/serverInfo"]` ([`meta::SERVER_INFO`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The revisions the server speaks, e.g. `["2025-11-25"]`.
    pub supported_versions: Vec<Revision>,
    /// `ServerCapabilities`, as a recorded server sent them.
    pub capabilities: Value,
    /// `_meta`, when the server's identity is known.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<ServerInfoMeta>,
    /// Usage hints for the client's model (a string in the spec), when sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Value>,
}

/// A result `_meta` carrying only the server's `Implementation`:
/// `{"io.modelcontextprotocol/serverInfo":{…}}` ([`meta::SERVER_INFO`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfoMeta {
    /// The server's `Implementation` as sent (`name`, `version`, …).
    pub server_info: Value,
}

impl Serialize for ServerInfoMeta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(meta::SERVER_INFO, &self.server_info)?;
        m.end()
    }
}

/// A result body `T` with the members the stateless era (MCP 2026-07-28)
/// adds after it: `ttlMs` and `cacheScope` (`CacheableResult`, on the six
/// [`method::CACHEABLE`] results), then `resultType` (`Result`, on every
/// result). Absent members are left out, so a session-era result is `T`
/// alone. `T` must serialize as an object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatelessResult<T> {
    /// The method's own members.
    #[serde(flatten)]
    pub body: T,
    /// `ttlMs`: how long a client may cache the result, ms (`@minimum 0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `cacheScope`: who may share a cached copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `resultType`, e.g. `"complete"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
}

impl<T> StatelessResult<T> {
    /// `body` with no stateless-era member: what a session-era server writes.
    pub fn session(body: T) -> StatelessResult<T> {
        StatelessResult {
            body,
            ttl_ms: None,
            cache_scope: None,
            result_type: None,
        }
    }

    /// `body` as a complete, uncacheable 2026-07-28 result of `method`:
    /// `"resultType":"complete"`, and for a [`method::CACHEABLE`] method
    /// `"ttlMs":0,"cacheScope":"private"` before it (nobody may reuse an
    /// answer the recorded server never gave).
    pub fn complete_uncached(body: T, method: &str) -> StatelessResult<T> {
        let cacheable = method::CACHEABLE.contains(&method);
        StatelessResult {
            body,
            ttl_ms: cacheable.then_some(0),
            cache_scope: cacheable.then_some(CacheScope::Private),
            result_type: Some(ResultType::Complete),
        }
    }
}
