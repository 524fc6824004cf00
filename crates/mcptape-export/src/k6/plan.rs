//! What a k6 script replays, read from a Streamable HTTP transcript.
//!
//! Sources: MCP 2025-11-25, Basic › Transports › Streamable HTTP (session
//! header `Mcp-Session-Id`, `MCP-Protocol-Version` after initialization) and
//! 2026-07-28 (stateless: no `initialize`; every request carries `_meta`
//! with the protocol version and the `MCP-Protocol-Version`, `Mcp-Method`
//! and `Mcp-Name` headers).

use mcptape_transcript::{Direction, Event, Transcript};
use mcptape_uri::parts::Parts;
use mcptape_wire::envelope::{Message, parse_message};
use serde::Serialize;
use serde_json::Value;

use crate::error::{ExportError, ExportErrorKind};

pub use mcptape_wire::protocol::Era;
use mcptape_wire::protocol::{STATELESS_SINCE, header, method};

/// One request (or notification) the script sends as recorded, with a fresh id.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// JSON-RPC method.
    pub method: String,
    /// Params exactly as recorded (with `_meta` in the stateless era); `None`
    /// when the recorded message had none.
    pub params: Option<Value>,
    /// A notification (no id, no answer expected).
    pub notification: bool,
    /// Request headers to send as recorded (lower-case names): in the
    /// stateless era `mcp-protocol-version`, `mcp-method`, `mcp-name`; in the
    /// session era none (the script sets the live session's headers).
    pub headers: Vec<(String, String)>,
    /// For reads: the `uri` param's class, a k6 tag of few values
    /// ([`uri_class`]); empty for other steps.
    pub uri_class: String,
    /// For `tools/call` and `prompts/get`: the tool or prompt name (the k6 tag
    /// `mcp_name`); empty for other steps.
    pub name: String,
    /// The recorded outcome's class (the script's own vocabulary): `ok`,
    /// `rpc:CODE`, `rpc:CODE:uri` (error with `data.uri`), `none` (no answer
    /// recorded).
    pub recorded_class: String,
}

/// Everything the script needs from the recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The recorded server URL (the default of `__ENV.MCP_URL`).
    pub url: String,
    /// The era.
    pub era: Era,
    /// The negotiated protocol revision (`2025-11-25`, `2026-07-28`).
    pub protocol_version: String,
    /// The handshake as recorded: `initialize` (+ `notifications/initialized`)
    /// or `server/discover`; may be empty in the stateless era.
    pub handshake: Vec<Step>,
    /// The recorded `resources/read` requests, in order (the turns send these).
    pub reads: Vec<Step>,
    /// Every recorded request but the handshake, in order (the single requests cycle
    /// through these: the recorded mix of methods, each with its recorded params).
    pub requests: Vec<Step>,
}

/// The class of a resource URI for tagging: `scheme://authority/first-segment`
/// (`demo://resource/static`, `mcptape://docs`), so a k6 tag keeps few values
/// however many resources are read. A URI without `//` is its scheme
/// (`urn:`); a text that is no absolute URI ([`Parts::parse`]) is `other`.
pub fn uri_class(uri: &str) -> String {
    match Parts::parse(uri) {
        Some(Parts {
            scheme,
            authority: Some(authority),
            path,
        }) => {
            let mut segs = path.split('/').skip(1);
            match (segs.next(), segs.next()) {
                (Some(first), Some(_)) if !first.is_empty() => {
                    format!("{scheme}://{authority}/{first}")
                }
                _ => format!("{scheme}://{authority}"),
            }
        }
        Some(p) => format!("{}:", p.scheme),
        None => "other".to_owned(),
    }
}

/// The script's class of a JSON-RPC answer: `ok`, `rpc:CODE`, `rpc:CODE:uri`.
fn answer_class(m: &Message) -> Option<String> {
    match m {
        Message::Response(_) => Some("ok".into()),
        Message::Error(e) => {
            let uri = e
                .error
                .data
                .as_ref()
                .and_then(|d| d.get("uri"))
                .is_some_and(Value::is_string);
            Some(format!(
                "rpc:{}{}",
                e.error.code,
                if uri { ":uri" } else { "" }
            ))
        }
        _ => None,
    }
}

/// Reads the plan of a transcript.
///
/// The era is the one of the handshake that succeeded: an `initialize`
/// answered with a result makes it [`Era::Session`] (a recording that fell
/// back from `server/discover` to `initialize` is one); otherwise a
/// `server/discover` answered with a result, or the 2026-07-28 revision,
/// makes it [`Era::Stateless`].
///
/// # Errors
/// [`ExportErrorKind::NotHttp`] for a stdio recording, [`ExportErrorKind::NoUrl`]
/// without `server.url`, [`ExportErrorKind::BadMessage`] (with the line) for a
/// client message that is not JSON-RPC 2.0, [`ExportErrorKind::NoHandshake`],
/// [`ExportErrorKind::NoReads`].
pub fn plan(t: &Transcript) -> Result<Plan, ExportError> {
    let url = crate::http_server_url(t, |transport| ExportErrorKind::NotHttp { transport })?;

    // Client messages with their headers, and the first answer to each id.
    struct Sent {
        msg: Message,
        headers: Vec<(String, String)>,
        answer: Option<Message>,
    }
    let mut sent: Vec<Sent> = Vec::new();
    for (i, r) in t.records.iter().enumerate() {
        let Event::Message { dir, msg, http, .. } = &r.event else {
            continue;
        };
        let parsed = parse_message(msg.get().as_bytes());
        match dir {
            Direction::C2s => {
                let m = parsed.map_err(|e| {
                    ExportError::at(ExportErrorKind::BadMessage(e.to_string()), "", i + 2)
                })?;
                sent.push(Sent {
                    msg: m,
                    headers: http.as_ref().map(|h| h.headers.clone()).unwrap_or_default(),
                    answer: None,
                });
            }
            Direction::S2c => {
                // An unparsable answer stays unrecorded (`none`), as does an answer
                // to no request of ours.
                let Ok(m) = parsed else { continue };
                let Some(id) = m.id().cloned() else { continue };
                if let Some(s) = sent.iter_mut().find(|s| {
                    s.answer.is_none() && matches!(&s.msg, Message::Request(q) if q.id == id)
                }) {
                    s.answer = Some(m);
                }
            }
        }
    }
    let answered_ok = |s: &Sent, method: &str| {
        s.msg.method() == Some(method) && matches!(s.answer, Some(Message::Response(_)))
    };
    let init = sent
        .iter()
        .rposition(|s| answered_ok(s, method::INITIALIZE));
    let discover = sent
        .iter()
        .rposition(|s| answered_ok(s, method::SERVER_DISCOVER));
    let version = t.protocol_version().map(str::to_owned);
    let era = match (init, discover) {
        (Some(_), _) => Era::Session,
        (None, Some(_)) => Era::Stateless,
        (None, None) if version.as_deref().map(Era::of) == Some(Era::Stateless) => Era::Stateless,
        (None, None) => return Err(ExportError::new(ExportErrorKind::NoHandshake)),
    };
    let protocol_version = version
        .or_else(|| {
            let s = &sent[init?];
            match &s.answer {
                Some(Message::Response(r)) => {
                    mcptape_wire::protocol::HandshakeResult::of(&r.result)
                        .protocol_version()
                        .map(str::to_owned)
                }
                _ => None,
            }
        })
        .unwrap_or_else(|| STATELESS_SINCE.as_str().to_owned());

    let kept_headers = |s: &Sent, method: &str, name: Option<&str>| -> Vec<(String, String)> {
        if era == Era::Session {
            return Vec::new();
        }
        let mut h: Vec<(String, String)> = s
            .headers
            .iter()
            .filter(|(k, _)| {
                let k = k.to_ascii_lowercase();
                k == header::PROTOCOL_VERSION || k == header::METHOD || k == header::NAME
            })
            .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
            .collect();
        let has = |h: &[(String, String)], k: &str| h.iter().any(|(n, _)| n == k);
        if !has(&h, header::PROTOCOL_VERSION) {
            h.push((header::PROTOCOL_VERSION.into(), protocol_version.clone()));
        }
        if !has(&h, header::METHOD) {
            h.push((header::METHOD.into(), method.to_owned()));
        }
        if let Some(u) = name
            && !has(&h, header::NAME)
        {
            h.push((header::NAME.into(), u.to_owned()));
        }
        h
    };
    let step = |s: &Sent| -> Step {
        let (method, params, notification) = match &s.msg {
            Message::Request(r) => (r.method.clone(), r.params.clone(), false),
            Message::Notification(n) => (n.method.clone(), n.params.clone(), true),
            _ => (String::new(), None, true),
        };
        let uri = params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let name = match method.as_str() {
            method::TOOLS_CALL | method::PROMPTS_GET => params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        };
        // `Mcp-Name` (2026-07-28): the name of a tool or prompt, the URI of a read.
        let mcp_name = name.as_deref().or(uri.as_deref());
        Step {
            headers: kept_headers(s, &method, mcp_name),
            uri_class: uri.as_deref().map(uri_class).unwrap_or_default(),
            name: name.clone().unwrap_or_default(),
            recorded_class: s.answer.as_ref().and_then(answer_class).unwrap_or_else(|| {
                if notification {
                    String::new()
                } else {
                    "none".into()
                }
            }),
            method,
            params: params.filter(|p| !p.is_null()),
            notification,
        }
    };

    let mut handshake = Vec::new();
    match era {
        Era::Session => {
            let i = init.unwrap_or_default();
            handshake.push(step(&sent[i]));
            if let Some(n) = sent[i..]
                .iter()
                .find(|s| s.msg.method() == Some(method::NOTIFICATIONS_INITIALIZED))
            {
                handshake.push(step(n));
            }
        }
        Era::Stateless => {
            if let Some(i) = discover {
                handshake.push(step(&sent[i]));
            }
        }
    }
    let reads: Vec<Step> = sent
        .iter()
        .filter(|s| matches!(&s.msg, Message::Request(r) if r.method == method::RESOURCES_READ))
        .map(step)
        .collect();
    let requests: Vec<Step> = sent
        .iter()
        .filter(|s| {
            matches!(&s.msg, Message::Request(r)
                if !method::HANDSHAKES.contains(&r.method.as_str()))
        })
        .map(step)
        .collect();
    // No read is fine (the script then runs no turn); nothing at all to send is not.
    if requests.is_empty() {
        return Err(ExportError::new(ExportErrorKind::NoReads));
    }
    Ok(Plan {
        url,
        era,
        protocol_version,
        handshake,
        reads,
        requests,
    })
}
