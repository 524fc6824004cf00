//! SSE events of Streamable HTTP responses whose data is not JSON-RPC (a JSON
//! heartbeat such as `data: {"type":"ping"}`): rule `sse-event-not-jsonrpc`,
//! a warning, and the record is skipped, as the transport's own SSE parser
//! does (`mcptape_transport::sse::SsePayload::Other`).

use std::collections::HashSet;

use mcptape_transcript::reader::RecordRef;
use mcptape_transcript::{Direction, Event, Header, HttpMeta, Transport};
use mcptape_wire::envelope::is_json_rpc;

use super::{Cx, Place};
use crate::rules;

/// The HTTP exchanges whose response is an event stream
/// (`content-type: text/event-stream` on any record of the exchange).
#[derive(Debug, Default)]
pub(super) struct SseStreams {
    exchanges: HashSet<u64>,
}

impl SseStreams {
    /// Notes the record's HTTP metadata (no message is parsed): an
    /// exchange is an event stream when any of its server records says so.
    pub(super) fn see(&mut self, r: &RecordRef<'_>) {
        let meta = match (r.message(), r.owned_event()) {
            (Some((Direction::S2c, _, Some(h))), _) => h,
            (
                None,
                Some(Event::Http {
                    dir: Direction::S2c,
                    http,
                    ..
                }),
            ) => http,
            _ => return,
        };
        if is_event_stream(meta) {
            self.exchanges.insert(meta.exchange);
        }
    }

    fn carried(&self, h: &HttpMeta) -> bool {
        h.sse_event_id.is_some() || self.exchanges.contains(&h.exchange)
    }
}

fn is_event_stream(h: &HttpMeta) -> bool {
    h.headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("content-type")
            && v.trim_start()
                .get(..17)
                .is_some_and(|e| e.eq_ignore_ascii_case("text/event-stream"))
    })
}

/// Fires `sse-event-not-jsonrpc` and returns `true` (skip the record) when
/// the record is a server->client SSE event of an HTTP transcript whose data
/// is not a JSON-RPC message.
pub(super) fn skip_non_jsonrpc_event(
    cx: &mut Cx<'_>,
    streams: &SseStreams,
    header: &Header,
    place: Place,
    dir: Direction,
    raw: &str,
    http: Option<&HttpMeta>,
) -> bool {
    let Some(h) = http else { return false };
    if header.transport != Transport::Http
        || dir != Direction::S2c
        || !streams.carried(h)
        || is_json_rpc(raw)
    {
        return false;
    }
    let mut shown: String = raw.chars().take(80).collect();
    if raw.chars().count() > 80 {
        shown.push('…');
    }
    cx.push(
        rules::SSE_EVENT_NOT_JSONRPC,
        place,
        None,
        String::new(),
        format!(
            "SSE event data in HTTP exchange {}{} is not a JSON-RPC message (a heartbeat?), skipped: {shown:?}",
            h.exchange,
            h.sse_event_id
                .as_deref()
                .map_or_else(String::new, |id| format!(" (event id {id:?})"))
        ),
    );
    true
}
