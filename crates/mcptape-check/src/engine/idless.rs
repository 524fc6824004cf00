//! Error responses with no `id` member (JSON-RPC 2.0 §5: `id` is REQUIRED in
//! a response): rule `error-id-missing`. Over Streamable HTTP such an error
//! answers the request of its own exchange (server-everything's HTTP 400
//! "No valid session ID provided"), so it is paired with it; elsewhere it is
//! paired only when exactly one request of the other side is open.

use mcptape_transcript::{Direction, HttpMeta};
use serde_json::{Map, Value};

use super::{Cx, Place, State, error_message_suffix, requester_of};
use crate::rules;

impl State {
    /// `o` is a response object with `error` and no `id`.
    pub(super) fn error_without_id(
        &mut self,
        cx: &mut Cx<'_>,
        place: Place,
        dir: Direction,
        http: Option<&HttpMeta>,
        o: &Map<String, Value>,
        prefix: &str,
    ) {
        let requester = requester_of(dir);
        let exchange = http.map(|h| h.exchange);
        let text = error_message_suffix(o);
        let where_ = exchange.map_or_else(String::new, |x| format!(" in HTTP exchange {x}"));
        match self.answer_only_open(requester, |p| exchange.is_none() || p.exchange == exchange) {
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
}
