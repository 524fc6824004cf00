//! `serve`: mcptape as the recorded server. A request is matched to a
//! recorded one by method and params (not by id) and answered with the
//! recorded `result`/`error` under the request's own id, after a delay drawn
//! from the latency model; faults are injected from the same seeded schedule.
//!
//! Every `resources/read` uri first goes through [`mcptape_uri::Root::resolve`];
//! a rejected uri is answered `-32602` with `data.uri` (MCP 2026-07-28
//! "Resources" §Error handling, SEP-2164), never with an empty `contents`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::{Duration, Instant};

use crate::error::{ReplayError, ReplayErrorKind};
use crate::latency::{Fault, FaultSpec, LatencyModel};
use crate::lines::{FramedReader, MAX_LINE_BYTES};
use crate::report::{Quantiles, new_hist};
use crate::schedule::{Scheduler, TimerMode, sleep_until_precise};
use crate::tape::{Match, Tape};
use mcptape_transport::stdio::Frame;
use mcptape_wire::error::WireErrorKind;
use mcptape_wire::jsonrpc::{self, Message, RequestId};

/// JSON-RPC 2.0 §5.1 "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 §5.1 "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0 §5.1 "Method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC 2.0 §5.1 "Invalid params"; MCP 2026-07-28 resource not found.
pub const INVALID_PARAMS: i64 = -32602;

/// What the server does with one incoming message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// Send this message after `delay_us`.
    Reply {
        /// The request's id (the reply carries it).
        id: Value,
        /// The full JSON-RPC response, serialized: for a recorded reply, the
        /// recorded bytes exactly, with only the `id` value replaced.
        body: String,
        /// Server-side delay, µs.
        delay_us: u64,
        /// Answer in a `text/event-stream` body (HTTP), as the recorded server did.
        sse: bool,
        /// HTTP status to answer with (Streamable HTTP): the recorded one for a
        /// recorded 4xx reply, 400 for an invalid message; `None` is 200.
        status: Option<u16>,
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
}

/// Counters and delay histograms of a serve session.
#[derive(Debug)]
pub struct ServeStats {
    /// Requests received.
    pub requests: u64,
    /// Requests answered with a recorded reply (exact or handshake match).
    pub matched: u64,
    /// Requests that matched no recording.
    pub unmatched: u64,
    /// `resources/read` uris rejected by the root.
    pub rejected_uri: u64,
    /// Pending answers cancelled by `notifications/cancelled`.
    pub cancelled: u64,
    /// Stall faults injected.
    pub stalled: u64,
    /// Error faults injected.
    pub injected_errors: u64,
    /// Drop-connection faults injected.
    pub dropped: u64,
    /// Messages refused by the strict parser (answered -32700 or -32600).
    pub invalid: u64,
    /// `ping` requests answered `{}` without a recorded answer.
    pub pinged: u64,
    /// Delays the schedule asked for, µs.
    pub intended: Histogram<u64>,
    /// Delays achieved: request line read → reply written and flushed, µs.
    pub achieved: Histogram<u64>,
    /// achieved − intended per reply, µs (0 when early, which cannot happen).
    pub lateness: Histogram<u64>,
}

impl Default for ServeStats {
    fn default() -> Self {
        ServeStats {
            requests: 0,
            matched: 0,
            unmatched: 0,
            rejected_uri: 0,
            cancelled: 0,
            stalled: 0,
            injected_errors: 0,
            dropped: 0,
            invalid: 0,
            pinged: 0,
            intended: new_hist(),
            achieved: new_hist(),
            lateness: new_hist(),
        }
    }
}

/// The JSON summary `serve --stats FILE` writes on exit (read by `bench`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServeSummary {
    /// Latency model spec.
    pub model: String,
    /// The model's analytic p50, µs (if it has one).
    pub model_p50_us: Option<f64>,
    /// The model's analytic p99, µs.
    pub model_p99_us: Option<f64>,
    /// Requests received.
    pub requests: u64,
    /// Requests answered from the recording.
    pub matched: u64,
    /// Requests that matched no recording.
    pub unmatched: u64,
    /// Rejected `resources/read` uris.
    pub rejected_uri: u64,
    /// Answers cancelled before they were sent.
    pub cancelled: u64,
    /// Stall faults.
    pub stalled: u64,
    /// Error faults.
    pub injected_errors: u64,
    /// Drop-connection faults.
    pub dropped: u64,
    /// Messages refused by the strict JSON-RPC parser (answered -32700/-32600).
    #[serde(default)]
    pub invalid: u64,
    /// `ping` requests answered `{}` without a recorded answer.
    #[serde(default)]
    pub pinged: u64,
    /// Scheduled delays, µs.
    pub intended: Quantiles,
    /// Achieved delays, µs.
    pub achieved: Quantiles,
    /// Achieved − scheduled, µs (the timer's accuracy).
    pub lateness: Quantiles,
}

/// The recorded server: tape, schedule, roots, stats.
pub struct Server {
    tape: Tape,
    sched: Mutex<Scheduler>,
    roots: Vec<mcptape_uri::Root>,
    stats: Mutex<ServeStats>,
    timer: TimerMode,
}

/// Default roots: per `scheme://authority`, the longest common directory of
/// the recorded `resources/read` uris (`file:///project/a.md` and
/// `file:///project/img/b.png` give `file:///project/`).
pub fn default_roots(uris: &[&str]) -> Vec<String> {
    let mut roots: Vec<(String, Vec<String>)> = Vec::new();
    for uri in uris {
        let Some((scheme, rest)) = uri.split_once("://") else {
            continue;
        };
        let rest = rest.split(['?', '#']).next().unwrap_or("");
        let (auth, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
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
    /// A server for `tape`. `roots`: the `--root` URIs; when empty, one root
    /// per `scheme://authority/` of the recorded `resources/read` uris.
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
        if names.is_empty() {
            let reads = tape.reads();
            let uris: Vec<&str> = reads
                .iter()
                .filter_map(|p| p.get("uri").and_then(Value::as_str))
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
        Ok(Server {
            tape,
            sched: Mutex::new(Scheduler::new(model, faults, seed)),
            roots,
            stats: Mutex::new(ServeStats::default()),
            timer: TimerMode::Precise,
        })
    }

    /// Uses `timer` for the delays ([`TimerMode::Virtual`] under a paused
    /// tokio clock in tests).
    pub fn with_timer(mut self, timer: TimerMode) -> Server {
        self.timer = timer;
        self
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

    /// Checks a `resources/read` uri against the roots; `Err(reason)` when
    /// every root rejects it.
    pub fn check_uri(&self, uri: &str) -> Result<(), String> {
        let mut reasons = Vec::new();
        for r in &self.roots {
            match r.resolve(uri) {
                Ok(_) => return Ok(()),
                Err(e) => reasons.push(e.to_string()),
            }
        }
        if reasons.is_empty() {
            return Err("no root configured".into());
        }
        Err(reasons.join("; "))
    }

    /// Decides the answer to the bytes of one incoming message (one stdio
    /// line, one HTTP body): [`parse_incoming`], then [`Server::decide`]; an
    /// invalid message is answered with its JSON-RPC 2.0 §5 error at once.
    pub fn decide_bytes(&self, bytes: &[u8]) -> Answer {
        match parse_incoming(bytes) {
            Ok(m) => self.decide(&m),
            Err(err) => {
                let mut s = self.stats();
                s.requests += 1;
                s.invalid += 1;
                drop(s);
                match self.reply_now(err) {
                    Answer::Reply {
                        id,
                        body,
                        delay_us,
                        sse,
                        ..
                    } => Answer::Reply {
                        id,
                        body,
                        delay_us,
                        sse,
                        status: Some(400),
                    },
                    other => other,
                }
            }
        }
    }

    /// Decides the answer to one message read by the strict wire parser
    /// (no I/O, no clock). Requests are matched against the tape;
    /// `notifications/cancelled` cancels the pending answer to its
    /// `requestId`; other notifications and the client's responses get nothing.
    pub fn decide(&self, msg: &Message) -> Answer {
        let req = match msg {
            Message::Request(r) => r,
            Message::Notification(n) => {
                if n.method == "notifications/cancelled"
                    && let Some(rid) = n.params.as_ref().and_then(|p| p.get("requestId"))
                    && let Ok(rid) = RequestId::from_value(rid)
                {
                    return Answer::Cancel(rid.to_string());
                }
                return Answer::Nothing;
            }
            _ => return Answer::Nothing,
        };
        let method = req.method.as_str();
        let id = req.id.to_value();
        let params = req.params.clone().unwrap_or(Value::Null);
        self.stats().requests += 1;
        let m = self.tape.lookup(method, &params);
        let recorded_delay = match &m {
            Match::Exact(e) | Match::ByMethod(e) => Some(e.delay_us),
            _ => None,
        };
        let plan = self
            .sched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .plan(recorded_delay);
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
                return Answer::Stall;
            }
            Some(Fault::DropConnection) => {
                self.stats().dropped += 1;
                return Answer::Drop;
            }
            Some(Fault::Error { code }) => {
                self.stats().injected_errors += 1;
                let msg = error_msg(
                    id,
                    code,
                    "mcptape serve: injected fault",
                    json!({"method": method}),
                );
                return reply(msg, plan.delay_us);
            }
            _ => {}
        }
        let uri = params.get("uri").and_then(Value::as_str);
        if method == "resources/read" {
            let Some(uri) = uri else {
                self.stats().unmatched += 1;
                let msg = error_msg(
                    id,
                    INVALID_PARAMS,
                    "mcptape serve: resources/read without a string params.uri",
                    json!({"method": method}),
                );
                return reply(msg, plan.delay_us);
            };
            if let Err(reason) = self.check_uri(uri) {
                self.stats().rejected_uri += 1;
                let msg = error_msg(
                    id,
                    INVALID_PARAMS,
                    &format!("mcptape serve: uri {uri} rejected: {reason}"),
                    json!({"uri": uri, "reason": reason}),
                );
                return reply(msg, plan.delay_us);
            }
        }
        let msg = match m {
            Match::Exact(e) | Match::ByMethod(e) => {
                self.stats().matched += 1;
                let body = match splice_id(&e.reply_raw, &id) {
                    Some(b) => b,
                    None => {
                        let mut reply = e.reply.clone();
                        if let Value::Object(o) = &mut reply {
                            o.insert("id".into(), id.clone());
                        }
                        reply.to_string()
                    }
                };
                return Answer::Reply {
                    id,
                    body,
                    delay_us: plan.delay_us,
                    sse: e.sse,
                    status: e.status.filter(|s| *s != 200),
                };
            }
            Match::NoParams => {
                self.stats().unmatched += 1;
                let text = match uri {
                    Some(u) => format!("mcptape serve: no recorded response for {method} uri={u}"),
                    None => format!(
                        "mcptape serve: no recorded response for {method} with these params"
                    ),
                };
                let mut data = json!({"method": method, "params": params});
                if let Some(u) = uri {
                    data["uri"] = Value::String(u.to_owned());
                }
                error_msg(id, INVALID_PARAMS, &text, data)
            }
            // MCP base protocol, "Utilities / Ping": the receiver MUST answer
            // promptly with an empty result, recorded or not.
            Match::NoMethod if method == "ping" => {
                self.stats().pinged += 1;
                json!({"jsonrpc": "2.0", "id": id, "result": {}})
            }
            Match::NoMethod => {
                self.stats().unmatched += 1;
                let mut data = json!({"method": method});
                if let Some(u) = uri {
                    data["uri"] = Value::String(u.to_owned());
                }
                error_msg(
                    id,
                    METHOD_NOT_FOUND,
                    &format!("mcptape serve: method {method} was not recorded"),
                    data,
                )
            }
        };
        reply(msg, plan.delay_us)
    }

    fn reply_now(&self, msg: Value) -> Answer {
        reply(msg, 0)
    }

    /// Records one sent reply's scheduled and achieved delay (µs).
    pub fn record_delay(&self, intended_us: u64, achieved_us: u64) {
        let mut s = self.stats();
        s.intended.saturating_record(intended_us.max(1));
        s.achieved.saturating_record(achieved_us.max(1));
        s.lateness
            .saturating_record(achieved_us.saturating_sub(intended_us).max(1));
    }

    /// Counts one message refused by the strict parser (HTTP bodies, which
    /// are parsed before the session check).
    pub fn record_invalid(&self) {
        let mut s = self.stats();
        s.requests += 1;
        s.invalid += 1;
    }

    /// Counts one cancelled pending answer.
    pub fn record_cancel(&self) {
        self.stats().cancelled += 1;
    }

    /// The summary so far.
    pub fn summary(&self) -> ServeSummary {
        let s = self.stats();
        let sched = self.sched.lock().unwrap_or_else(|p| p.into_inner());
        let model = sched.model();
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
            invalid: s.invalid,
            pinged: s.pinged,
            intended: Quantiles::of(&s.intended),
            achieved: Quantiles::of(&s.achieved),
            lateness: Quantiles::of(&s.lateness),
        }
    }
}

/// Reads the bytes of one incoming message with the strict parser
/// [`mcptape_wire::jsonrpc::parse`] (strict JSON: duplicate keys rejected;
/// `"jsonrpc": "2.0"`; ids are strings or `i64` integers, never `null`).
///
/// # Errors
/// The JSON-RPC 2.0 §5 error response to send back, as a JSON value:
/// - `-32700` Parse error, `"id": null`, when the bytes are not strict JSON
///   (syntax, duplicate key, lone surrogate, size or depth limit);
/// - `-32600` Invalid Request for an envelope error, or a batch (JSON-RPC 2.0
///   §6; MCP 2025-06-18 and later do not allow batches). The `id` is echoed
///   when it is itself valid (a string or an `i64` integer), else `null`.
///
/// The error's `data` carries `{"reason", "offset"}` (byte offset into the
/// message, when known).
pub fn parse_incoming(bytes: &[u8]) -> Result<Message, Value> {
    let e = match jsonrpc::parse(bytes) {
        Ok(jsonrpc::Frame::Single(m)) => return Ok(m),
        Ok(jsonrpc::Frame::Batch(_)) => {
            return Err(error_msg(
                Value::Null,
                INVALID_REQUEST,
                "mcptape serve: invalid request: batches are not supported",
                json!({"reason": "batch"}),
            ));
        }
        Err(e) => e,
    };
    let id = match e.kind() {
        WireErrorKind::Json(_) | WireErrorKind::NullRequestId | WireErrorKind::InvalidId => {
            Value::Null
        }
        _ => serde_json::from_slice::<Value>(bytes)
            .ok()
            .and_then(|v| v.get("id").and_then(|i| RequestId::from_value(i).ok()))
            .map_or(Value::Null, |i| i.to_value()),
    };
    let (code, what) = match e.kind() {
        WireErrorKind::Json(_) => (PARSE_ERROR, "parse error"),
        _ => (INVALID_REQUEST, "invalid request"),
    };
    let mut data = json!({"reason": e.kind().to_string()});
    if let Some(off) = e.offset() {
        data["offset"] = json!(off);
    }
    Err(error_msg(
        id,
        code,
        &format!("mcptape serve: {what}: {e}"),
        data,
    ))
}

/// An [`Answer::Reply`] carrying `msg` (serialized) after `delay_us`.
fn reply(msg: Value, delay_us: u64) -> Answer {
    Answer::Reply {
        id: msg.get("id").cloned().unwrap_or(Value::Null),
        body: msg.to_string(),
        delay_us,
        sse: false,
        status: None,
    }
}

/// `raw` (one recorded JSON-RPC message) with the value of its top-level
/// `id` member replaced by `id`, every other byte kept — so a reply keeps the
/// recorded server's own string escaping and member order. `None` when `raw`
/// is not an object with an `id`.
pub fn splice_id(raw: &str, id: &Value) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct IdProbe<'a> {
        #[serde(borrow)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    // A derived struct also accepts a JSON array (fields by position): objects only.
    if !raw.trim_start().starts_with('{') {
        return None;
    }
    let probe: IdProbe<'_> = serde_json::from_str(raw).ok()?;
    let old = probe.id?.get();
    // `old` borrows from `raw`: its offset is the distance between the two.
    let start = (old.as_ptr() as usize).checked_sub(raw.as_ptr() as usize)?;
    let end = start.checked_add(old.len())?;
    let (head, tail) = (raw.get(..start)?, raw.get(end..)?);
    Some(format!("{head}{id}{tail}"))
}

/// A JSON-RPC error response.
pub fn error_msg(id: Value, code: i64, message: &str, data: Value) -> Value {
    let mut err = json!({"code": code, "message": message});
    if !data.is_null() {
        err["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

struct Outgoing {
    bytes: Vec<u8>,
    received: Instant,
    intended_us: Option<u64>,
}

/// How a stream session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEnd {
    /// The client closed its side; pending answers were sent first.
    Eof,
    /// A drop-connection fault closed it.
    Dropped,
}

/// Serves newline-delimited JSON-RPC (MCP stdio transport) on `r`/`w` until
/// the client closes `r` (pending non-stalled answers are sent first) or a
/// drop-connection fault fires. Each answer is written when its own delay has
/// passed since its request line was read ([`sleep_until_precise`]).
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
            w.write_all(&o.bytes).await?;
            w.flush().await?;
            if let Some(intended) = o.intended_us {
                let achieved = o.received.elapsed().as_micros() as u64;
                srv.record_delay(intended, achieved);
            }
        }
        w.shutdown().await.ok();
        Ok::<(), std::io::Error>(())
    });
    let pending: Arc<Mutex<HashMap<String, AbortHandle>>> = Arc::default();
    let mut tasks = JoinSet::new();
    let mut reader = FramedReader::new(r, MAX_LINE_BYTES);
    let mut end = StreamEnd::Eof;
    loop {
        while tasks.try_join_next().is_some() {}
        let Some(frame) = reader.next().await? else {
            break;
        };
        let received = Instant::now();
        let answer = match frame {
            Frame::Message(b) => server.decide_bytes(&b),
            Frame::Noise(b) if b.iter().all(u8::is_ascii_whitespace) => continue,
            Frame::Noise(b) => server.decide_bytes(&b),
            Frame::TooLong(e) => reply(
                error_msg(
                    Value::Null,
                    PARSE_ERROR,
                    &format!("mcptape serve: parse error: {e}"),
                    Value::Null,
                ),
                0,
            ),
        };
        match answer {
            Answer::Reply {
                id, body, delay_us, ..
            } => {
                let key = id.to_string();
                let mut bytes = body.into_bytes();
                bytes.push(b'\n');
                let tx = tx.clone();
                let pend = pending.clone();
                let timer = server.timer;
                let k2 = key.clone();
                // Hold the map while spawning so the task's own removal
                // cannot run before the insertion.
                let mut g = pending.lock().unwrap_or_else(|p| p.into_inner());
                let h = tasks.spawn(async move {
                    sleep_until_precise(received + Duration::from_micros(delay_us), timer).await;
                    pend.lock().unwrap_or_else(|p| p.into_inner()).remove(&k2);
                    let _ = tx.send(Outgoing {
                        bytes,
                        received,
                        intended_us: Some(delay_us),
                    });
                });
                g.insert(key, h);
                drop(g);
            }
            Answer::Cancel(key) => {
                if let Some(h) = pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&key)
                {
                    h.abort();
                    server.record_cancel();
                }
            }
            Answer::Drop => {
                end = StreamEnd::Dropped;
                break;
            }
            Answer::Stall | Answer::Nothing => {}
        }
    }
    if end == StreamEnd::Dropped {
        tasks.abort_all();
    }
    while tasks.join_next().await.is_some() {}
    drop(tx);
    writer
        .await
        .map_err(|e| ReplayError::new(ReplayErrorKind::Io(std::io::Error::other(e))))??;
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_id_replaces_only_the_top_level_id_and_keeps_every_other_byte() {
        let raw = r#"{"result":{"id":"inner","text":"Caf\u00e9 \ud83d\ude00"}, "id" : 7 ,"jsonrpc":"2.0"}"#;
        let out = splice_id(raw, &json!("r-9")).unwrap();
        assert_eq!(
            out,
            r#"{"result":{"id":"inner","text":"Caf\u00e9 \ud83d\ude00"}, "id" : "r-9" ,"jsonrpc":"2.0"}"#
        );
        assert_eq!(splice_id(r#"{"result":{}}"#, &json!(1)), None);
        assert_eq!(splice_id("[1]", &json!(1)), None);
    }
}
