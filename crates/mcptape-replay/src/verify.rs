//! `verify`: replays the recorded client's requests against a live server and
//! diffs each response against the recorded one semantically — object key
//! order ignored, the `id` member ignored (ids are reassigned), and any JSON
//! Pointer (RFC 6901) given to ignore skipped, with `*` matching any one
//! segment (`/result/contents/*/text`).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::time::Duration;

use mcptape_wire::protocol::method;

use crate::bench::{Client, Outcome};
use crate::error::ReplayError;
use crate::tape::Tape;

/// Largest number of differences listed per response (the rest are counted).
pub const MAX_DIFFS_PER_RESPONSE: usize = 50;

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

fn escape(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
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
                    format!("{ptr}/{}", escape(k)),
                    Some(v),
                    y.get(k),
                    ignore,
                    out,
                );
            }
            for (k, v) in y {
                if !x.contains_key(k) {
                    walk(format!("{ptr}/{}", escape(k)), None, Some(v), ignore, out);
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
/// ([`VerifyReport::closed_at`]) instead of waiting out the others.
///
/// # Errors
/// None today (a closed transport is reported in [`VerifyReport::closed_at`]);
/// the `Result` leaves room for transport errors.
pub async fn verify(
    client: Arc<Client>,
    tape: &Tape,
    ignore: &[String],
    timeout: Duration,
) -> Result<VerifyReport, ReplayError> {
    let mut ignore = ignore.to_vec();
    ignore.push("/id".into());
    let mut rep = VerifyReport::default();
    for req in &tape.client {
        if req.method == method::NOTIFICATIONS_CANCELLED {
            continue; // refers to recorded ids that no longer exist
        }
        let Some(_) = &req.id else {
            client.notify(&req.method, &req.params);
            continue;
        };
        rep.requests += 1;
        let recorded = tape
            .exchanges
            .iter()
            .find(|e| e.request.record == req.record);
        let (_, rx) = client.request(&req.method, &req.params);
        let live = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok((
                o @ (Outcome::Http { .. } | Outcome::Dropped(_) | Outcome::InputRequired(_)),
                _,
            ))) => {
                rep.failed.push(FailedRequest {
                    record: req.record,
                    method: req.method.clone(),
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
                continue;
            }
        };
        let Some(rec) = recorded else {
            rep.not_recorded.push(req.record);
            continue;
        };
        rep.compared += 1;
        let (listed, omitted) = cap_diffs(diff(&rec.reply, &live, &ignore));
        rep.omitted += omitted;
        for (pointer, expected, actual) in listed {
            rep.differences.push(Difference {
                record: req.record,
                method: req.method.clone(),
                pointer,
                expected,
                actual,
            });
        }
    }
    Ok(rep)
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
