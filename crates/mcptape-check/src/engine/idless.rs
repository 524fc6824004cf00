//! Error responses with no `id` member (JSON-RPC 2.0 §5: `id` is REQUIRED in
//! a response): rule `error-id-missing`. Over Streamable HTTP such an error
//! answers the request of its own exchange (server-everything's HTTP 400
//! "No valid session ID provided"), so it is paired with it; elsewhere it is
//! paired only when exactly one request of the other side is open.
//!
//! An error response with `"id": null` outside an HTTP exchange (stdio) is
//! paired the same way: rule `error-id-null` when exactly one request is open
//! (it is answered) or when several are (none can be paired); with none open
//! it is the legitimate answer to an unreadable request (JSON-RPC 2.0 §5) and
//! nothing fires.

use super::{Cx, Seen, State, error_message_suffix, requester_of};
use crate::rules;

impl State {
    /// `m` is a response object with `error` and no `id`.
    pub(super) fn error_without_id(&mut self, cx: &mut Cx<'_>, seen: Seen<'_>) {
        let (place, dir, http, m, prefix) = (seen.place, seen.dir, seen.http, seen.m, seen.prefix);
        let requester = requester_of(dir);
        let exchange = http.map(|h| h.exchange);
        let text = error_message_suffix(m);
        let where_ = exchange.map_or_else(String::new, |x| format!(" in HTTP exchange {x}"));
        match self.answer_only_open(cx.findings, requester, |p| exchange.is_none() || p.exchange == exchange) {
            Ok((rid, method, rec)) => cx.push(
                rules::ERROR_ID_MISSING,
                place,
                Some(&rid),
                prefix.to_owned(),
                format!(
                    "error response without an id member{where_}, paired with {method} id {rid} (record {rec}){text}"
                ),
            ),
            Err(n) => cx.push(
                rules::ERROR_ID_MISSING,
                place,
                None,
                prefix.to_owned(),
                format!(
                    "error response without an id member{where_}: {n} open requests, none can be paired{text}"
                ),
            ),
        }
    }

    /// `m` is an error response with `"id": null` that no HTTP exchange
    /// attributes (stdio): paired as [`error_without_id`](Self::error_without_id)
    /// pairs, rule `error-id-null`; nothing when no request of the other
    /// side is open (JSON-RPC 2.0 §5: null answers a request whose id was
    /// unreadable).
    pub(super) fn error_id_null_unexchanged(&mut self, cx: &mut Cx<'_>, seen: Seen<'_>) {
        let (place, dir, m, prefix) = (seen.place, seen.dir, seen.m, seen.prefix);
        let requester = requester_of(dir);
        let text = error_message_suffix(m);
        match self.answer_only_open(cx.findings, requester, |_| true) {
            Ok((rid, method, rec)) => cx.push(
                rules::ERROR_ID_NULL,
                place,
                Some(&rid),
                format!("{prefix}/id"),
                format!(
                    "error response with id null, paired with {method} id {rid} (record {rec}), the only open request{text}"
                ),
            ),
            Err(0) => {}
            Err(n) => cx.push(
                rules::ERROR_ID_NULL,
                place,
                None,
                format!("{prefix}/id"),
                format!(
                    "error response with id null: {n} open requests, none can be paired{text}"
                ),
            ),
        }
    }
}
