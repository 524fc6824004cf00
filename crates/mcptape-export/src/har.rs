//! HAR 1.2 (HTTP Archive) export of a Streamable HTTP recording; the import
//! is [`crate::har_import`].
//!
//! Source: HAR 1.2 spec (Jan Odvarko, <http://www.softwareishard.com/blog/har-12-spec/>;
//! W3C Web Performance WG draft "HTTP Archive (HAR) format"). Custom fields
//! start with `_` (HAR 1.2 › Custom Fields); mcptape adds `log._mcptape`
//! ([`LogExtra`]) and `entries[]._mcptape` ([`EntryExtra`]) so that a HAR it
//! wrote imports back to the same records with the same µs times, while a
//! browser's or proxy's HAR without them imports too.
//!
//! One HTTP exchange of the recording (`http.exchange`) is one entry:
//!
//! * `request`: `method`, `url` (the header's `server.url`), `headers[]` as
//!   recorded (already redacted by the recorder), `postData` = the JSON-RPC
//!   body byte-exact (`mimeType` from the request's `content-type`).
//! * `response`: the first `s2c` record of the exchange gives `status` and
//!   `headers[]`; an event stream (`content-type: text/event-stream`, or SSE
//!   records) becomes `content.text` of `mimeType` `text/event-stream`: per
//!   event an `id:` line (when recorded), one `data:` line, a blank line; a
//!   JSON body is the message byte-exact; no body (`202`) is empty text.
//! * `startedDateTime` = header `startedAt` + the request record's `tUs`
//!   (RFC 3339 UTC, µs digits); `timings`: `send` 0, `wait` = first `s2c`
//!   record − request (ms), `receive` = last `s2c` record − first (ms);
//!   `time` their sum.
//!
//! Not carried into the HAR: `protocol`, `noise`, `stderr` and `exit`
//! records (the import derives `protocol` records from the handshake).

use std::path::Path;

use mcptape_transcript::{Direction, Event, HttpMeta, HttpNote, Redaction, Transcript};
use serde::{Deserialize, Serialize};

use crate::error::{ExportError, ExportErrorKind};

/// `log.version` written: `1.2`.
pub const HAR_VERSION: &str = "1.2";

/// `log.creator.name` written: `mcptape`.
pub const CREATOR_NAME: &str = "mcptape";

/// The HTTP version written for every request and response: the recorder
/// speaks HTTP/1.1 (hyper) and records no version.
pub const HTTP_VERSION: &str = "HTTP/1.1";

/// The media type of an SSE response (WHATWG HTML › Server-sent events).
pub const EVENT_STREAM: &str = "text/event-stream";

/// A HAR document: `{"log": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Har {
    /// The log.
    pub log: Log,
}

/// `log`: version, creator, entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Log {
    /// HAR version (`1.2`; importers also see `1.1`).
    pub version: String,
    /// The program that wrote the log.
    pub creator: Creator,
    /// The browser (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<Creator>,
    /// Pages (optional; mcptape writes none, browsers do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<serde_json::Value>>,
    /// One per HTTP request, in request order.
    pub entries: Vec<Entry>,
    /// A comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// mcptape's log extras (custom field `_mcptape`).
    #[serde(rename = "_mcptape", default, skip_serializing_if = "Option::is_none")]
    pub mcptape: Option<LogExtra>,
}

/// `log.creator` / `log.browser`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Creator {
    /// Name (`mcptape`, `Playwright`, `WebInspector`).
    pub name: String,
    /// Version.
    pub version: String,
}

/// `log._mcptape`: the transcript header's fields a HAR has no place for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogExtra {
    /// The transcript header's `startedAt` (RFC 3339 UTC): `tUs` 0.
    pub started_at: String,
    /// The header's `protocolVersion`, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The header's `redaction` record, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redaction: Option<Redaction>,
}

/// `entries[]`: one HTTP exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The page it belongs to (browsers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageref: Option<String>,
    /// When the request started: ISO 8601 / RFC 3339 (`2026-12-01T22:34:22.139483Z`).
    pub started_date_time: String,
    /// Total time, ms: the sum of the non-negative `timings` (HAR: excluding `blocked` is allowed; mcptape writes none).
    pub time: f64,
    /// The request.
    pub request: Request,
    /// The response.
    pub response: Response,
    /// Cache state (mcptape writes `{}`).
    #[serde(default)]
    pub cache: serde_json::Map<String, serde_json::Value>,
    /// Phase timings, ms.
    pub timings: Timings,
    /// A comment (mcptape: the `detail` of the response side's `http` record,
    /// why an exchange failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// mcptape's entry extras (custom field `_mcptape`).
    #[serde(rename = "_mcptape", default, skip_serializing_if = "Option::is_none")]
    pub mcptape: Option<EntryExtra>,
}

/// `entries[]._mcptape`: the recording's µs times and stream end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryExtra {
    /// The recording's `http.exchange` number.
    pub exchange: u64,
    /// The request record's `tUs`.
    pub request_us: u64,
    /// The `tUs` of each `s2c` message or empty-event record, in content
    /// order (one per SSE event; one for a JSON or empty body).
    #[serde(default)]
    pub events_us: Vec<u64>,
    /// How the response ended when a record said so (`serverClosedStream`,
    /// `clientClosedStream`, `streamBroken`, `upstreamFailed`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<HttpNote>,
    /// The `tUs` of that end record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_us: Option<u64>,
    /// An `http` record's note on the request side other than `noBody`
    /// (`requestFailed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_note: Option<HttpNote>,
    /// The `detail` of the request-side `http` record (the recorder notes
    /// the request path there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_detail: Option<String>,
}

/// `name`/`value` (headers, query string, cookies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NameValue {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

/// `request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// `POST`, `GET`, `DELETE`, `OPTIONS`.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// `HTTP/1.1`, `h2`, `http/2.0`.
    pub http_version: String,
    /// Cookies (mcptape writes none: cookie headers are redacted).
    #[serde(default)]
    pub cookies: Vec<serde_json::Value>,
    /// Headers in wire order.
    #[serde(default)]
    pub headers: Vec<NameValue>,
    /// The URL's query parameters.
    #[serde(default)]
    pub query_string: Vec<NameValue>,
    /// The body, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<PostData>,
    /// Header bytes; -1: unknown.
    pub headers_size: i64,
    /// Body bytes; -1: unknown.
    pub body_size: i64,
}

/// `request.postData`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostData {
    /// Media type (`application/json`).
    #[serde(default)]
    pub mime_type: String,
    /// The body text (browsers may leave it out for large or binary bodies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// Status code; 0 when no response was received.
    pub status: u16,
    /// Reason phrase.
    #[serde(default)]
    pub status_text: String,
    /// HTTP version.
    #[serde(default)]
    pub http_version: String,
    /// Cookies.
    #[serde(default)]
    pub cookies: Vec<serde_json::Value>,
    /// Headers in wire order.
    #[serde(default)]
    pub headers: Vec<NameValue>,
    /// The body.
    pub content: Content,
    /// `Location` of a redirect, else empty.
    #[serde(rename = "redirectURL", default)]
    pub redirect_url: String,
    /// Header bytes; -1: unknown.
    #[serde(default = "minus_one")]
    pub headers_size: i64,
    /// Body bytes as transferred; -1: unknown.
    #[serde(default = "minus_one")]
    pub body_size: i64,
}

fn minus_one() -> i64 {
    -1
}

/// `response.content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    /// Decoded body bytes.
    pub size: i64,
    /// Media type.
    #[serde(default)]
    pub mime_type: String,
    /// The body text (decoded; base64 when `encoding` is `base64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `base64` when `text` is base64 (RFC 4648 §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `timings`, ms; -1 where a phase does not apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timings {
    /// Queued before sending (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<f64>,
    /// DNS (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<f64>,
    /// TCP (+TLS) connect (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<f64>,
    /// Sending the request.
    #[serde(default)]
    pub send: f64,
    /// Waiting for the first response byte.
    #[serde(default)]
    pub wait: f64,
    /// Reading the response.
    #[serde(default)]
    pub receive: f64,
    /// TLS, included in `connect` (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl: Option<f64>,
}

/// The reason phrase of `status` (RFC 9110 §15), `""` for codes without one here.
pub fn status_text(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// µs since the Unix epoch as RFC 3339 UTC with six fraction digits
/// (`2026-12-01T22:34:22.139483Z`): [`mcptape_transcript::time::format_rfc3339_us`].
///
/// # Errors
/// [`ExportErrorKind::BadTime`] (the µs as text) for an instant past the year 9999.
pub fn rfc3339_from_us(us: i64) -> Result<String, ExportError> {
    mcptape_transcript::time::format_rfc3339_us(us, 6)
        .map_err(|_| ExportError::new(ExportErrorKind::BadTime(us.to_string())))
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn name_values(h: &[(String, String)]) -> Vec<NameValue> {
    h.iter()
        .map(|(n, v)| NameValue {
            name: n.clone(),
            value: v.clone(),
        })
        .collect()
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The `name=value` pairs after `?` in `url`, as written (no percent-decoding).
pub fn query_string(url: &str) -> Vec<NameValue> {
    let Some((_, q)) = url.split_once('?') else {
        return Vec::new();
    };
    let q = q.split('#').next().unwrap_or("");
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (n, v) = p.split_once('=').unwrap_or((p, ""));
            NameValue {
                name: n.to_owned(),
                value: v.to_owned(),
            }
        })
        .collect()
}

/// One `s2c` item of an exchange, in record order.
enum Item<'a> {
    /// A message (`sse` when it came in an event: its id, if any).
    Msg(&'a str, Option<&'a str>, bool),
    /// An SSE event with empty data.
    Empty(Option<&'a str>),
}

/// What the records of one exchange say.
#[derive(Default)]
struct Exchange<'a> {
    request_us: Option<u64>,
    method: Option<String>,
    req_headers: Vec<(String, String)>,
    body: Option<&'a str>,
    request_note: Option<HttpNote>,
    request_detail: Option<String>,
    status: Option<u16>,
    resp_headers: Vec<(String, String)>,
    first_s2c_us: Option<u64>,
    last_s2c_us: Option<u64>,
    items: Vec<(u64, Item<'a>)>,
    end: Option<(u64, HttpNote)>,
    detail: Option<String>,
}

impl<'a> Exchange<'a> {
    fn response_meta(&mut self, t_us: u64, h: &HttpMeta) {
        if self.status.is_none() {
            self.status = h.status;
        }
        if self.resp_headers.is_empty() && !h.headers.is_empty() {
            self.resp_headers = h.headers.clone();
        }
        self.first_s2c_us.get_or_insert(t_us);
        self.last_s2c_us = Some(t_us);
        if self.method.is_none() {
            self.method = h.method.clone();
        }
    }
}

/// The HAR log of a Streamable HTTP transcript (see the module doc for the mapping).
///
/// # Errors
/// [`ExportErrorKind::HarNotHttp`] for a stdio recording,
/// [`ExportErrorKind::NoUrl`] without `server.url`,
/// [`ExportErrorKind::BadTime`] when `startedAt` is not RFC 3339.
pub fn export(t: &Transcript) -> Result<Har, ExportError> {
    let url = crate::http_server_url(t, |transport| ExportErrorKind::HarNotHttp { transport })?;
    let start_us = crate::k6::import::rfc3339_us(&t.header.started_at)?;
    let mut xs: std::collections::BTreeMap<u64, Exchange<'_>> = Default::default();
    for r in &t.records {
        match &r.event {
            Event::Message {
                dir,
                msg,
                http: Some(h),
                ..
            } => {
                let x = xs.entry(h.exchange).or_default();
                match dir {
                    Direction::C2s => {
                        x.request_us.get_or_insert(r.t_us);
                        x.method = h.method.clone();
                        x.req_headers = h.headers.clone();
                        x.body = Some(msg.get());
                    }
                    Direction::S2c => {
                        x.response_meta(r.t_us, h);
                        x.items.push((
                            r.t_us,
                            Item::Msg(
                                msg.get(),
                                h.sse_event_id.as_deref(),
                                h.sse_event_id.is_some(),
                            ),
                        ));
                    }
                }
            }
            Event::Http {
                dir,
                http: h,
                note,
                detail,
            } => {
                let x = xs.entry(h.exchange).or_default();
                match dir {
                    Direction::C2s => {
                        x.request_us.get_or_insert(r.t_us);
                        x.method = h.method.clone();
                        if !h.headers.is_empty() {
                            x.req_headers = h.headers.clone();
                        }
                        if *note != HttpNote::NoBody {
                            x.request_note = Some(*note);
                        }
                        x.request_detail = detail.clone();
                    }
                    Direction::S2c => {
                        x.response_meta(r.t_us, h);
                        match note {
                            HttpNote::EmptyEvent => x
                                .items
                                .push((r.t_us, Item::Empty(h.sse_event_id.as_deref()))),
                            HttpNote::NoBody => {}
                            other => x.end = Some((r.t_us, *other)),
                        }
                        if detail.is_some() {
                            x.detail = detail.clone();
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut entries = Vec::with_capacity(xs.len());
    for (n, x) in xs {
        let req_us = x.request_us.or(x.first_s2c_us).unwrap_or_default();
        let method = x.method.clone().unwrap_or_else(|| "POST".to_owned());
        let post_data = x.body.map(|b| PostData {
            mime_type: header(&x.req_headers, "content-type")
                .unwrap_or("application/json")
                .to_owned(),
            text: Some(b.to_owned()),
        });
        let ct = header(&x.resp_headers, "content-type").map(str::to_owned);
        let sse = ct.as_deref().is_some_and(|c| {
            c.trim_start()
                .to_ascii_lowercase()
                .starts_with(EVENT_STREAM)
        }) || x
            .items
            .iter()
            .any(|(_, i)| matches!(i, Item::Empty(_) | Item::Msg(_, _, true)))
            || x.items.len() > 1;
        let mut text = String::new();
        for (_, i) in &x.items {
            match i {
                Item::Msg(m, id, _) if sse => {
                    if let Some(id) = id {
                        text.push_str("id: ");
                        text.push_str(id);
                        text.push('\n');
                    }
                    text.push_str("event: message\n");
                    // A message with line breaks (a pretty-printed body) takes
                    // one `data:` line per line; the parser joins them with `\n`.
                    for line in m.split('\n') {
                        text.push_str("data: ");
                        text.push_str(line);
                        text.push('\n');
                    }
                    text.push('\n');
                }
                Item::Msg(m, _, _) => text.push_str(m),
                Item::Empty(id) => {
                    if let Some(id) = id {
                        text.push_str("id: ");
                        text.push_str(id);
                        text.push('\n');
                    }
                    text.push_str("data: \n\n");
                }
            }
        }
        let mime = if sse {
            ct.clone().unwrap_or_else(|| EVENT_STREAM.to_owned())
        } else {
            ct.clone().unwrap_or_else(|| {
                if text.is_empty() {
                    ""
                } else {
                    "application/json"
                }
                .to_owned()
            })
        };
        let end_us = x.end.map(|(t, _)| t);
        let last = end_us.max(x.last_s2c_us).unwrap_or(req_us).max(req_us);
        let first = x.first_s2c_us.unwrap_or(last).max(req_us);
        let wait_us = first - req_us;
        let receive_us = last - first;
        let status = x.status.unwrap_or(0);
        let body_len = text.len() as i64;
        entries.push(Entry {
            pageref: None,
            started_date_time: rfc3339_from_us(start_us + req_us as i64)?,
            time: ms(wait_us + receive_us),
            request: Request {
                method,
                url: url.clone(),
                http_version: HTTP_VERSION.to_owned(),
                cookies: Vec::new(),
                headers: name_values(&x.req_headers),
                query_string: query_string(&url),
                body_size: x.body.map_or(0, |b| b.len() as i64),
                post_data,
                headers_size: -1,
            },
            response: Response {
                status,
                status_text: status_text(status).to_owned(),
                http_version: HTTP_VERSION.to_owned(),
                cookies: Vec::new(),
                headers: name_values(&x.resp_headers),
                content: Content {
                    size: body_len,
                    mime_type: mime,
                    text: Some(text),
                    encoding: None,
                },
                redirect_url: header(&x.resp_headers, "location").unwrap_or("").to_owned(),
                headers_size: -1,
                body_size: if sse { -1 } else { body_len },
            },
            cache: Default::default(),
            timings: Timings {
                blocked: None,
                dns: None,
                connect: None,
                send: 0.0,
                wait: ms(wait_us),
                receive: ms(receive_us),
                ssl: None,
            },
            comment: x.detail.clone(),
            mcptape: Some(EntryExtra {
                exchange: n,
                request_us: req_us,
                events_us: x.items.iter().map(|(t, _)| *t).collect(),
                end: x.end.map(|(_, e)| e),
                end_us,
                request_note: x.request_note,
                request_detail: x.request_detail.clone(),
            }),
        });
    }
    Ok(Har {
        log: Log {
            version: HAR_VERSION.to_owned(),
            creator: Creator {
                name: CREATOR_NAME.to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            browser: None,
            pages: None,
            entries,
            comment: None,
            mcptape: Some(LogExtra {
                started_at: t.header.started_at.clone(),
                protocol_version: t.header.protocol_version.clone(),
                redaction: t.header.redaction.clone(),
            }),
        },
    })
}

/// Reads the transcript at `path` and returns its HAR log as pretty JSON
/// (with a final newline).
///
/// # Errors
/// [`ExportErrorKind::Io`], [`ExportErrorKind::Transcript`] (with the line),
/// then [`export`]'s, all with the file.
pub fn export_file(path: &Path) -> Result<String, ExportError> {
    let (name, t) = crate::read_transcript_file(path)?;
    let har = export(&t).map_err(|e| e.in_file(&name))?;
    let mut s = serde_json::to_string_pretty(&har)
        .map_err(|e| ExportError::at(ExportErrorKind::Report(e.to_string()), &name, 0))?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_from_us_known_instants() {
        assert_eq!(rfc3339_from_us(0).unwrap(), "1970-01-01T00:00:00.000000Z");
        let us = crate::k6::import::rfc3339_us("2026-12-01T22:34:22.139483Z").unwrap();
        assert_eq!(rfc3339_from_us(us).unwrap(), "2026-12-01T22:34:22.139483Z");
        let leap = crate::k6::import::rfc3339_us("2024-02-29T23:59:59.999999Z").unwrap();
        assert_eq!(
            rfc3339_from_us(leap).unwrap(),
            "2024-02-29T23:59:59.999999Z"
        );
        assert_eq!(
            rfc3339_from_us(leap + 1).unwrap(),
            "2024-03-01T00:00:00.000000Z"
        );
    }

    #[test]
    fn query_string_split_as_written() {
        assert!(query_string("http://h/mcp").is_empty());
        let q = query_string("http://h/mcp?a=1&b=%20&c#frag");
        let pairs: Vec<_> = q
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(pairs, [("a", "1"), ("b", "%20"), ("c", "")]);
    }
}
