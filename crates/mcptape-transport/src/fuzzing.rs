//! Fuzz entry points (called by the one-line targets in `fuzz/`). Not a public API.

use crate::sse::{SseEvent, SseParser};
use crate::stdio::{Frame, LineFramer};

/// Splits `data` into the fuzz payload and up to 8 split points chosen by its
/// first byte(s): byte 0 = number of splits `k` (mod 9), bytes 1..=k = split
/// positions (scaled to the payload length).
fn split(data: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    let (k, rest) = match data {
        [k, rest @ ..] => (usize::from(*k % 9), rest),
        [] => return (vec![], data),
    };
    let k = k.min(rest.len());
    let (sel, payload) = rest.split_at(k);
    let mut cuts: Vec<usize> = sel
        .iter()
        .map(|&b| usize::from(b) * payload.len() / 255)
        .collect();
    cuts.sort_unstable();
    let mut parts = Vec::new();
    let mut prev = 0;
    for c in cuts {
        parts.push(&payload[prev..c]);
        prev = c;
    }
    parts.push(&payload[prev..]);
    (parts, payload)
}

/// Fuzz target `stdio_framing`: framing the payload in one read and in
/// data-chosen pieces gives the same frames (small limit, so `TooLong` is
/// exercised too); every `Message` frame is exact JSON, every frame's bytes
/// are bytes of the input.
pub fn stdio_framing(data: &[u8]) {
    let (parts, payload) = split(data);
    let limit = 64;
    let run = |chunks: &[&[u8]]| {
        let mut f = LineFramer::new(limit);
        let mut out = Vec::new();
        for c in chunks {
            out.extend(f.push(c));
        }
        out.extend(f.finish());
        out
    };
    let whole = run(&[payload]);
    let pieces = run(&parts);
    assert_eq!(whole, pieces);
    for f in &whole {
        match f {
            Frame::Message(b) => {
                assert!(crate::stdio::is_exact_json(b));
                assert!(b.len() <= limit);
            }
            Frame::Noise(b) => assert!(b.len() <= limit),
            Frame::TooLong(e) => assert!(e.offset as usize <= payload.len()),
        }
    }
}

/// Fuzz target `sse_events`: parsing the payload in one read and in
/// data-chosen pieces gives the same events, the same error and the same
/// `finish` result (small limit, so the size error is exercised too).
pub fn sse_events(data: &[u8]) {
    let (parts, payload) = split(data);
    let run = |chunks: &[&[u8]]| {
        let mut p = SseParser::new(256);
        let mut events: Vec<SseEvent> = Vec::new();
        let mut err = None;
        for c in chunks {
            if let Err(e) = p.push(c, &mut events) {
                err = Some(e);
                break;
            }
        }
        let pending = err.is_none() && p.finish();
        (
            events,
            err,
            pending,
            p.last_event_id().to_owned(),
            p.reconnection_ms(),
        )
    };
    let whole = run(&[payload]);
    let pieces = run(&parts);
    assert_eq!(whole, pieces);
    for e in &whole.0 {
        // line ends never leak into fields
        assert!(!e.data.contains('\r') && !e.event.contains(['\r', '\n']));
        let _ = e.payload();
    }
}
