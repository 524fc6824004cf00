//! `verify`: replays the recorded client's requests against a live server and
//! diffs each response against the recorded one semantically — object key
//! order ignored, the `id` member ignored (ids are reassigned), and any JSON
//! Pointer (RFC 6901) given to ignore skipped, with `*` matching any one
//! segment (`/result/contents/*/text`).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::time::Duration;

use mcptape_wire::protocol::{escape_token, method};

use crate::bench::{Client, Outcome};
use crate::error::ReplayError;
use crate::tape::Tape;

/// Largest number of differences listed per response (the rest are counted).
pub const MAX_DIFFS_PER_RESPONSE: usize = 50;

/// Bytes of the first line that is not JSON kept by [`FirstNoise`] (the rest is cut, at a
/// character boundary, and marked with `…`): 200.
pub const MAX_NOISE_SAMPLE_BYTES: usize = 200;

/// An [`Observer`](mcptape_transport::session::Observer) of a line-stream session that keeps
/// the first line the target wrote that is not one JSON value (a banner, an echo, a log line
/// on stdout), at most [`MAX_NOISE_SAMPLE_BYTES`] of it, so `verify` can show what the target
/// said instead of only "no response". Blank lines are not kept.
#[derive(Debug, Default)]
pub struct FirstNoise(std::sync::Mutex<Option<String>>);

impl FirstNoise {
    /// The first non-JSON line seen, if any (lossy UTF-8, cut at [`MAX_NOISE_SAMPLE_BYTES`]).
    pub fn first(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A client session over a stdio target's two ends ([`crate::target::Target::start`]),
    /// observed by `self`.
    pub fn session(
        self: &Arc<Self>,
        r: crate::target::TargetReader,
        w: crate::target::TargetWriter,
    ) -> Client {
        let observer: Arc<dyn mcptape_transport::session::Observer> = self.clone();
        Client::over_observed(r, w, Some(observer))
    }
}

impl mcptape_transport::session::Observer for FirstNoise {
    fn observe(&self, event: mcptape_transport::session::WireEvent<'_>) {
        use mcptape_transport::session::WireEvent;
        use mcptape_transport::stdio::Frame;
        let WireEvent::LineIn(Frame::Noise(b)) = event else {
            return;
        };
        if b.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let mut first = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(noise_sample(b));
        }
    }
}

/// `line` as lossy UTF-8, cut to at most [`MAX_NOISE_SAMPLE_BYTES`] bytes (at a character
/// boundary) with `…` appended when cut.
fn noise_sample(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    if text.len() <= MAX_NOISE_SAMPLE_BYTES {
        return text.into_owned();
    }
    let mut end = MAX_NOISE_SAMPLE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Where a verify run is, for a progress display ([`verify`]'s `progress` callback).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// Request number `n` (1-based) of `of` is sent: its record index and method.
    Sent {
        /// 1-based position among the requests.
        n: usize,
        /// Requests in the recording.
        of: usize,
        /// Transcript record index.
        record: usize,
        /// Its method.
        method: &'a str,
    },
    /// That request got no answer within the per-request timeout.
    Unanswered {
        /// Transcript record index.
        record: usize,
        /// Its method.
        method: &'a str,
    },
}

/// One difference between a recorded and a live response.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    /// Transcript record index of the recorded request.
    pub record: usize,
    /// Its method.
    pub method: String,
    /// JSON Pointer (RFC 6901) of the differing member in the response message.
    pub pointer: String,
    /// The recorded value (`None`: absent in the recording).
    pub expected: Option<Value>,
    /// The live value (`None`: absent in the live response).
    pub actual: Option<Value>,
}

/// True when `pointer` is `ignore` or lies under it (`*` in `ignore` matches
/// any one segment).
pub fn ignored(pointer: &str, ignore: &str) -> bool {
    let p: Vec<&str> = pointer.split('/').skip(1).collect();
    let i: Vec<&str> = ignore.split('/').skip(1).collect();
    if ignore.is_empty() {
        return true;
    }
    i.len() <= p.len() && i.iter().zip(&p).all(|(a, b)| *a == "*" || a == b)
}

/// Semantic differences between `expected` and `actual` (pointers from the
/// message root), skipping `ignore` pointers.
pub fn diff(
    expected: &Value,
    actual: &Value,
    ignore: &[String],
) -> Vec<(String, Option<Value>, Option<Value>)> {
    let mut out = Vec::new();
    walk(
        String::new(),
        Some(expected),
        Some(actual),
        ignore,
        &mut out,
    );
    out
}

fn walk(
    ptr: String,
    e: Option<&Value>,
    a: Option<&Value>,
    ignore: &[String],
    out: &mut Vec<(String, Option<Value>, Option<Value>)>,
) {
    if !ptr.is_empty() && ignore.iter().any(|i| ignored(&ptr, i)) {
        return;
    }
    match (e, a) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for (k, v) in x {
                walk(
                    format!("{ptr}/{}", escape_token(k)),
                    Some(v),
                    y.get(k),
                    ignore,
                    out,
                );
            }
            for (k, v) in y {
                if !x.contains_key(k) {
                    walk(
                        format!("{ptr}/{}", escape_token(k)),
                        None,
                        Some(v),
                        ignore,
                        out,
                    );
                }
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(format!("{ptr}/{i}"), x.get(i), y.get(i), ignore, out);
            }
        }
        (Some(x), Some(y)) if x == y => {}
        (None, None) => {}
        (x, y) => out.push((ptr, x.cloned(), y.cloned())),
    }
}

/// A request that got no JSON-RPC answer but an HTTP failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedRequest {
    /// Transcript record index of the recorded request.
    pub record: usize,
    /// Its method.
    pub method: String,
    /// What happened: `HTTP 500 from the target: <first bytes of the body>`, `the connection
    /// was dropped: …` ([`Outcome`]'s text).
    pub why: String,
}

/// Result of a verify run.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// Requests replayed.
    pub requests: usize,
    /// Responses compared.
    pub compared: usize,
    /// Differences found (at most [`MAX_DIFFS_PER_RESPONSE`] per response).
    pub differences: Vec<Difference>,
    /// Requests the target answered with an HTTP error status and no JSON-RPC answer, or
    /// whose connection it dropped (said at once, not waited out; the run goes on).
    pub failed: Vec<FailedRequest>,
    /// Requests that got no response (record indexes): none within the timeout, or the
    /// connection closed while it waited (that one is also [`closed_at`](Self::closed_at)).
    pub unanswered: Vec<usize>,
    /// Differences found but not listed (past [`MAX_DIFFS_PER_RESPONSE`] in a response).
    pub omitted: usize,
    /// Requests answered live whose recorded answer is missing from the
    /// transcript (record indexes): nothing to compare them with.
    pub not_recorded: Vec<usize>,
    /// The target closed the connection; the record index of the request
    /// that was waiting (the requests after it were not sent).
    pub closed_at: Option<usize>,
    /// The run's overall bound (`verify --max-time`) ran out: the record index of the request
    /// that was waiting or next (it and the requests after it were not compared).
    pub out_of_time_at: Option<usize>,
    /// Requests not sent because the overall bound ran out.
    pub not_sent: usize,
    /// Lines from a line-stream target that are not one JSON value (they answer nothing;
    /// [`Client::noise_lines`]). Blank lines are not counted.
    pub noise_lines: u64,
    /// The first of those lines ([`FirstNoise`], set by the caller that observed the session).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_noise_line: Option<String>,
    /// Recorded JSON-RPC batches (message records that are a JSON array; MCP 2025-03-26 only)
    /// skipped, never replayed: a count of batches ([`Tape::batches_skipped`]).
    pub batches_skipped: usize,
    /// The client's requests inside those batches, not sent: a count of requests
    /// ([`Tape::batched_requests`]).
    pub batched_requests_not_sent: usize,
}

impl VerifyReport {
    /// Why this run does not pass even without a listed difference
    /// (`mcptape verify` exits non-zero when the list is not empty): the
    /// target closed the connection, or no response was compared.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(r) = self.closed_at {
            out.push(format!(
                "the target closed the connection while {} waited for its answer",
                crate::error::record_label(r)
            ));
        }
        for f in &self.failed {
            out.push(format!(
                "{} {}: {}",
                crate::error::record_label(f.record),
                f.method,
                f.why
            ));
        }
        if let Some(r) = self.out_of_time_at {
            out.push(format!(
                "stopped at the overall time bound (--max-time) while {} waited; {} request(s) not sent",
                crate::error::record_label(r),
                self.not_sent
            ));
        }
        if self.noise_lines > 0 && !self.unanswered.is_empty() {
            out.push(format!(
                "the target wrote {} line(s) that are not JSON (they answer nothing){}",
                self.noise_lines,
                self.first_noise_line
                    .as_deref()
                    .map(|l| format!("; the first: {l:?}"))
                    .unwrap_or_default()
            ));
        }
        if self.compared == 0 {
            out.push(format!(
                "no response compared ({} request(s) sent, {} without a recorded answer)",
                self.requests,
                self.not_recorded.len()
            ));
        }
        out
    }
}

/// Splits one response's differences into the listed ones (at most
/// [`MAX_DIFFS_PER_RESPONSE`]) and the count of the rest.
pub fn cap_diffs<T>(mut diffs: Vec<T>) -> (Vec<T>, usize) {
    let omitted = diffs.len().saturating_sub(MAX_DIFFS_PER_RESPONSE);
    diffs.truncate(MAX_DIFFS_PER_RESPONSE);
    (diffs, omitted)
}

/// Replays `tape`'s client messages in recorded order over `client`, one
/// request at a time, comparing each response with the recording. The `id`
/// member is always ignored; `ignore` adds more pointers.
///
/// Stops at the first request the target closes the connection on
/// ([`VerifyReport::closed_at`]) instead of waiting out the others, and when `max_time` (the
/// whole run's bound) runs out ([`VerifyReport::out_of_time_at`]): each request waits at most
/// `timeout`, and never past the overall bound. `progress` is called as each request is sent
/// and as one goes unanswered.
///
/// # Errors
/// None today (a closed transport is reported in [`VerifyReport::closed_at`]);
/// the `Result` leaves room for transport errors.
pub async fn verify(
    client: Arc<Client>,
    tape: &Tape,
    ignore: &[String],
    timeout: Duration,
    max_time: Duration,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<VerifyReport, ReplayError> {
    let mut ignore = ignore.to_vec();
    ignore.push("/id".into());
    let mut rep = VerifyReport {
        batches_skipped: tape.batches_skipped(),
        batched_requests_not_sent: tape.batched_requests,
        ..VerifyReport::default()
    };
    let end = tokio::time::Instant::now() + max_time;
    let of = tape
        .client
        .iter()
        .filter(|r| r.id.is_some() && r.method != method::NOTIFICATIONS_CANCELLED)
        .count();
    let r = verify_until(&client, tape, &ignore, timeout, end, of, progress, &mut rep).await;
    rep.noise_lines = client.noise_lines();
    r.map(|()| rep)
}

/// The loop of [`verify`], filling `rep`.
#[allow(clippy::too_many_arguments)]
async fn verify_until(
    client: &Arc<Client>,
    tape: &Tape,
    ignore: &[String],
    timeout: Duration,
    end: tokio::time::Instant,
    of: usize,
    progress: &(dyn Fn(Progress<'_>) + Sync),
    rep: &mut VerifyReport,
) -> Result<(), ReplayError> {
    for req in &tape.client {
        if req.method == method::NOTIFICATIONS_CANCELLED {
            continue; // refers to recorded ids that no longer exist
        }
        let now = tokio::time::Instant::now();
        if now >= end {
            // Out of time: nothing more is sent; the requests left are counted.
            if req.id.is_some() {
                rep.out_of_time_at.get_or_insert(req.record);
                rep.not_sent += 1;
            }
            continue;
        }
        let Some(_) = &req.id else {
            client.notify(&req.method, &req.params);
            continue;
        };
        rep.requests += 1;
        progress(Progress::Sent {
            n: rep.requests,
            of,
            record: req.record,
            method: &req.method,
        });
        let recorded = tape
            .exchanges
            .iter()
            .find(|e| tape.request(e).record == req.record);
        let (_, rx) = client.request(&req.method, &req.params);
        let wait = timeout.min(end - now);
        let live = match tokio::time::timeout(wait, rx).await {
            Ok(Ok((
                o @ (Outcome::Http { .. } | Outcome::Dropped(_) | Outcome::InputRequired(_)),
                _,
            ))) => {
                rep.failed.push(FailedRequest {
                    record: req.record,
                    method: req.method.to_string(),
                    why: o.to_string(),
                });
                continue;
            }
            Ok(Ok((o, v))) if o != Outcome::Closed => v,
            Ok(_) => {
                // Closed: this request goes unanswered, and every later one would fail at
                // once; stop here.
                rep.closed_at = Some(req.record);
                rep.unanswered.push(req.record);
                break;
            }
            Err(_) => {
                rep.unanswered.push(req.record);
                if wait < timeout {
                    rep.out_of_time_at = Some(req.record);
                } else {
                    progress(Progress::Unanswered {
                        record: req.record,
                        method: &req.method,
                    });
                }
                continue;
            }
        };
        let Some(rec) = recorded else {
            rep.not_recorded.push(req.record);
            continue;
        };
        rep.compared += 1;
        let (listed, omitted) = cap_diffs(diff(&rec.reply, &live, ignore));
        rep.omitted += omitted;
        for (pointer, expected, actual) in listed {
            rep.differences.push(Difference {
                record: req.record,
                method: req.method.to_string(),
                pointer,
                expected,
                actual,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_is_ignored_and_values_are_not() {
        let a = json!({"result": {"a": 1, "b": [1, 2]}, "id": 1});
        let b = json!({"id": 9, "result": {"b": [1, 2], "a": 1}});
        assert_eq!(diff(&a, &b, &["/id".into()]), vec![]);
        let c = json!({"id": 1, "result": {"b": [1, 3], "a": 1, "extra": true}});
        let d = diff(&a, &c, &[]);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0], ("/result/b/1".into(), Some(json!(2)), Some(json!(3))));
        assert_eq!(d[1], ("/result/extra".into(), None, Some(json!(true))));
    }

    #[test]
    fn differences_listed_per_response_at_and_past_the_limit() {
        let at: Vec<u32> = (0..MAX_DIFFS_PER_RESPONSE as u32).collect();
        assert_eq!(cap_diffs(at.clone()), (at.clone(), 0));
        let past: Vec<u32> = (0..=MAX_DIFFS_PER_RESPONSE as u32).collect();
        assert_eq!(cap_diffs(past), (at, 1));
        // A response whose 51 array members all differ.
        let a = json!({"result": (0..51).collect::<Vec<u32>>()});
        let b = json!({"result": (1..52).collect::<Vec<u32>>()});
        let (listed, omitted) = cap_diffs(diff(&a, &b, &[]));
        assert_eq!((listed.len(), omitted), (MAX_DIFFS_PER_RESPONSE, 1));
    }

    #[test]
    fn ignore_pointers_with_wildcards_and_escapes() {
        assert!(ignored(
            "/result/contents/3/text",
            "/result/contents/*/text"
        ));
        assert!(ignored("/result/serverInfo/version", "/result/serverInfo"));
        assert!(!ignored("/result/serverInfoX", "/result/serverInfo"));
        assert!(!ignored(
            "/result/contents/3/blob",
            "/result/contents/*/text"
        ));
        let a = json!({"a/b": 1});
        let b = json!({"a/b": 2});
        assert_eq!(diff(&a, &b, &[])[0].0, "/a~1b");
        assert!(diff(&a, &b, &["/a~1b".into()]).is_empty());
    }
}
