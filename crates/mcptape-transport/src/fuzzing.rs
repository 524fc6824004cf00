//! Fuzz entry points (called by the one-line targets in `fuzz/`). Not a public API.

use crate::sse::{SseEvent, SseParser};
use crate::stdio::{FrameRef, LineFramer};

/// Splits `data` into the fuzz payload and up to 8 split points chosen by its
/// first byte(s): byte 0 = number of splits `k` (mod 9), bytes 1..=k = split
/// positions (scaled to the payload length). The pieces are returned as their
/// end offsets in the payload (the last is `payload.len()`), on the stack: a
/// fuzz input costs no allocation for its split.
fn split(data: &[u8]) -> (Cuts, &[u8]) {
    let mut cuts = Cuts {
        ends: [0; 9],
        len: 0,
    };
    let (k, rest) = match data {
        [k, rest @ ..] => (usize::from(*k % 9), rest),
        [] => {
            cuts.len = 1;
            return (cuts, data);
        }
    };
    let k = k.min(rest.len());
    let (sel, payload) = rest.split_at(k);
    for (i, &b) in sel.iter().enumerate() {
        cuts.ends[i] = usize::from(b) * payload.len() / 255;
    }
    cuts.ends[..k].sort_unstable();
    cuts.ends[k] = payload.len();
    cuts.len = k + 1;
    (cuts, payload)
}

/// The pieces of a payload: piece `i` ends at `ends[i]` (sorted; the last is
/// the payload's length) and starts where the one before ends.
struct Cuts {
    ends: [usize; 9],
    len: usize,
}

impl Cuts {
    fn pieces<'a>(&'a self, payload: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        let ends = &self.ends[..self.len];
        ends.iter()
            .enumerate()
            .map(move |(i, &e)| &payload[if i == 0 { 0 } else { ends[i - 1] }..e])
    }
}

/// The frames of one framing run, written flat (kind, length, bytes) into one
/// buffer (two allocations per run, not one per frame and per chunk): two runs
/// gave the same frames exactly when their logs are equal.
#[derive(Debug, PartialEq, Eq, Default)]
struct FrameLog {
    bytes: Vec<u8>,
    errors: Vec<crate::error::FrameError>,
}

impl FrameLog {
    fn push(&mut self, f: FrameRef<'_>) {
        let (tag, b): (u8, &[u8]) = match f {
            FrameRef::Message(b) => (b'M', b),
            FrameRef::Noise(b) => (b'N', b),
            FrameRef::TooLong(e) => {
                self.errors.push(e);
                (b'T', &[])
            }
        };
        self.bytes.push(tag);
        self.bytes
            .extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.bytes.extend_from_slice(b);
    }
}

/// Fuzz target `stdio_framing`: framing the payload in one read and in
/// data-chosen pieces gives the same frames (small limit, so `TooLong` is
/// exercised too); every `Message` frame is non-empty with no JSON whitespace at
/// either end, every frame is within the limit, every error's offset inside the
/// payload. (The framer classifies a line as `Message` by
/// [`is_exact_json`](crate::stdio::is_exact_json) itself: asserting that again
/// re-parsed every message with serde_json for a check that could not fail.)
pub fn stdio_framing(data: &[u8]) {
    let (cuts, payload) = split(data);
    let limit = 64;
    let mut whole = FrameLog::default();
    {
        let mut f = LineFramer::new(limit);
        let mut check = |fr: FrameRef<'_>| {
            match fr {
                FrameRef::Message(b) => {
                    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
                    assert!(!b.first().is_none_or(ws) && !b.last().is_none_or(ws));
                    assert!(b.len() <= limit);
                }
                FrameRef::Noise(b) => assert!(b.len() <= limit),
                FrameRef::TooLong(e) => assert!(e.offset as usize <= payload.len()),
            }
            whole.push(fr);
        };
        f.push_with(payload, &mut check);
        f.finish_with(&mut check);
    }
    let mut pieces = FrameLog::default();
    let mut f = LineFramer::new(limit);
    for c in cuts.pieces(payload) {
        f.push_with(c, |fr| pieces.push(fr));
    }
    f.finish_with(|fr| pieces.push(fr));
    assert_eq!(whole, pieces);
}

/// Fuzz target `sse_events`: parsing the payload in one read and in
/// data-chosen pieces gives the same events, the same error and the same
/// `finish` result (small limit, so the size error is exercised too).
pub fn sse_events(data: &[u8]) {
    let (cuts, payload) = split(data);
    let run = |chunks: &mut dyn Iterator<Item = &[u8]>| {
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
    let whole = run(&mut std::iter::once(payload));
    let pieces = run(&mut cuts.pieces(payload));
    assert_eq!(whole, pieces);
    for e in &whole.0 {
        // line ends never leak into fields
        assert!(!e.data.contains('\r') && !e.event.contains(['\r', '\n']));
        let _ = e.payload();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_pieces_are_the_payload_in_order_at_the_chosen_points() {
        let data = [3u8, 255, 0, 128, b'a', b'b', b'c', b'd', b'e'];
        let (cuts, payload) = split(&data);
        assert_eq!(payload, b"abcde");
        let pieces: Vec<&[u8]> = cuts.pieces(payload).collect();
        // cuts 255 → 5, 0 → 0, 128 → 2, sorted: 0, 2, 5
        assert_eq!(pieces, [&b""[..], b"ab", b"cde", b""]);
        let (cuts, payload) = split(&[]);
        assert_eq!(cuts.pieces(payload).collect::<Vec<_>>(), [&b""[..]]);
    }

    #[test]
    fn frame_log_tells_frames_apart() {
        let log = |frames: &[FrameRef<'_>]| {
            let mut l = FrameLog::default();
            for f in frames {
                l.push(*f);
            }
            l
        };
        use FrameRef::{Message, Noise};
        assert_ne!(log(&[Noise(b"ab")]), log(&[Noise(b"a"), Noise(b"b")]));
        assert_ne!(log(&[Noise(b"1")]), log(&[Message(b"1")]));
        assert_eq!(
            log(&[Message(b"1"), Noise(b"")]),
            log(&[Message(b"1"), Noise(b"")])
        );
    }
}
