//! One message of a frame as the rules read it: the one envelope scan
//! (`mcptape_wire::envelope::scan_frame`) and typed reads from its ranges,
//! borrowed from the line (no `serde_json::Value` of the message; a small
//! member is decoded into a `Value` only on the rare paths that print or
//! compare it whole: handshake results, `ttlMs`, `cacheScope`, `_meta`).

use std::borrow::Cow;
use std::ops::Range;

use mcptape_wire::envelope::{Envelope, EnvelopeKind, ErrorObject, IdText};
use serde_json::Value;

/// One message (a single frame, or one batch element) and the bytes of the
/// whole frame its ranges point into.
pub(super) struct Msg<'a, 'e> {
    pub(super) input: &'a str,
    pub(super) env: &'e Envelope,
}

impl<'a> Msg<'a, '_> {
    fn bytes(&self, r: &Option<Range<usize>>) -> Option<&'a [u8]> {
        self.raw(r).map(str::as_bytes)
    }

    /// A member's raw JSON text (its range starts and ends on a token
    /// boundary: no UTF-8 check of the text again).
    pub(super) fn raw(&self, r: &Option<Range<usize>>) -> Option<&'a str> {
        self.input.get(r.clone()?)
    }

    /// A member that is a string, decoded (borrowed when it has no escape);
    /// `None` when absent or of another type (what `Value::as_str` gives).
    pub(super) fn str_member(&self, r: &Option<Range<usize>>) -> Option<Cow<'a, str>> {
        decode_string_token(self.raw(r)?)
    }

    /// A member parsed into a `Value` (small members, rare paths).
    pub(super) fn value(&self, r: &Option<Range<usize>>) -> Option<Value> {
        mcptape_wire::json::value_from_slice(self.bytes(r)?).ok()
    }

    pub(super) fn kind(&self) -> EnvelopeKind {
        self.env.kind
    }

    /// The method (requests and notifications).
    pub(super) fn method(&self) -> Option<Cow<'a, str>> {
        self.str_member(&self.env.method)
    }

    /// The top-level id, as an exact key (its raw text).
    pub(super) fn id(&self) -> Option<IdKey> {
        IdKey::from_token(self.raw(&self.env.id_range)?)
    }

    /// `result` is an object (the rules of results read only objects).
    pub(super) fn result_is_object(&self) -> bool {
        self.bytes(&self.env.result).and_then(|b| b.first()) == Some(&b'{')
    }

    /// `error.message`, decoded (an error response's message is a string).
    pub(super) fn error_message(&self) -> Option<Cow<'a, str>> {
        let e = self.env.error.as_ref()?;
        decode_string_token(self.input.get(e.message.clone())?)
    }

    /// The `error` member as the wire's [`ErrorObject`] (`data` parsed).
    pub(super) fn error_object(&self) -> Option<ErrorObject> {
        self.env.error_object(self.input.as_bytes())
    }

    /// `params._meta` as a `Value` (rare: 2026-07-28 requests).
    pub(super) fn meta(&self) -> Option<Value> {
        self.value(&self.env.members.params_meta)
    }
}

/// A strict JSON string token (quotes included) decoded: borrowed when it
/// has no escape. `None` for any other token.
pub(crate) fn decode_string_token(t: &str) -> Option<Cow<'_, str>> {
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    if !has_backslash(inner.as_bytes()) {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(t).ok().map(Cow::Owned)
}

/// Whether `b` holds a backslash: eight bytes at a time for text of at
/// most [`SHORT_TEXT_BYTES`] bytes (the methods and uris the rules decode
/// per message, where `memchr`'s setup costs more than its search; core's
/// `contains` is byte-wise), `memchr`'s SIMD search for longer text.
fn has_backslash(b: &[u8]) -> bool {
    if b.len() > SHORT_TEXT_BYTES {
        return memchr::memchr(b'\\', b).is_some();
    }
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        // A zero byte where `b` holds a backslash; the test below is set
        // exactly when some byte is zero.
        let x = u64::from_le_bytes(word) ^ (ONES * u64::from(b'\\'));
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return true;
        }
    }
    words.remainder().contains(&b'\\')
}

/// Longest text [`has_backslash`] searches a word at a time (64 bytes).
const SHORT_TEXT_BYTES: usize = 64;

/// A request id, exactly: its type and its raw text as sent (a string's
/// characters between its quotes, escapes kept; an integer's digits, of any
/// size: JSON-RPC 2.0 §4 sets no range). Ids pair by this key, as
/// `mcptape_wire::envelope::RequestId` compares them (a peer echoes the id
/// it was sent): `1` and `"1"` differ (in type only), `"a"` and `"\u0061"`
/// differ, `1.0` is not an id (the envelope refuses it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct IdKey {
    pub(super) is_string: bool,
    pub(super) text: IdText,
}

impl IdKey {
    /// The key of an id token (a string token or an integer literal, as the
    /// envelope reads ids); `None` for any other token.
    pub(super) fn from_token(t: &str) -> Option<IdKey> {
        if let Some(inner) = t.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            return Some(IdKey {
                is_string: true,
                text: IdText::new(inner),
            });
        }
        is_integer_literal(t).then(|| IdKey {
            is_string: false,
            text: IdText::new(t),
        })
    }

    /// The key of a number that is not an integer literal (`1.0`, `-0`:
    /// `notifications/cancelled`'s `requestId` may be anything), as
    /// `serde_json` prints it: no request id matches it.
    pub(super) fn of_number(token: &str) -> Option<IdKey> {
        match serde_json::from_str::<Value>(token).ok()? {
            Value::Number(n) => Some(IdKey {
                is_string: false,
                text: IdText::new(&n.to_string()),
            }),
            _ => None,
        }
    }

    pub(super) fn other_type(&self) -> IdKey {
        IdKey {
            is_string: !self.is_string,
            text: self.text.clone(),
        }
    }

    /// The id as JSON text, as the message carried it (`7`, `"abc"`).
    pub(super) fn json(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for IdKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_string {
            write!(f, "\"{}\"", self.text.as_str())
        } else {
            f.write_str(self.text.as_str())
        }
    }
}

impl super::findings::Text for IdKey {
    fn put(&self, out: &mut Vec<u8>) {
        if self.is_string {
            out.push(b'"');
            out.extend_from_slice(self.text.as_bytes());
            out.push(b'"');
        } else {
            out.extend_from_slice(self.text.as_bytes());
        }
    }
}

/// `-?(0|[1-9][0-9]*)` but `-0`: an integer id token (JSON-RPC 2.0 §4).
fn is_integer_literal(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t).as_bytes();
    !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1)
        && t != "-0"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `has_backslash` answers what `memchr` answers: every length up to
    /// past [`SHORT_TEXT_BYTES`], a backslash at every place or none, beside
    /// bytes one bit away from it (`\\` is 0x5c).
    #[test]
    fn has_backslash_is_memchrs_answer() {
        for len in 0..=SHORT_TEXT_BYTES + 9 {
            for fill in [b'a', 0x5d, 0x5b, 0xdc, 0x1c, 0x00, 0xff, 0x7c] {
                let mut b = vec![fill; len];
                assert_eq!(has_backslash(&b), memchr::memchr(b'\\', &b).is_some());
                for at in 0..len {
                    b[at] = b'\\';
                    assert!(has_backslash(&b), "{len} {at}");
                    b[at] = fill;
                }
            }
        }
    }

    #[test]
    fn id_keys_print_the_id_as_sent() {
        for t in [
            r#""abc""#,
            r#""a\"b""#,
            r#""\u0041\n""#,
            r#""é\u00e9""#,
            "7",
            "-3",
            "18446744073709551616",
            r#""a string id longer than twenty-two bytes""#,
        ] {
            assert_eq!(IdKey::from_token(t).unwrap().json(), t);
        }
    }

    #[test]
    fn id_keys_of_other_tokens_are_none() {
        for t in ["1.0", "1e2", "-0", "01", "null", "true", "{}"] {
            assert!(IdKey::from_token(t).is_none(), "{t}");
        }
        assert_ne!(IdKey::from_token("1"), IdKey::from_token(r#""1""#));
        assert_ne!(
            IdKey::from_token(r#""\u0031""#),
            IdKey::from_token(r#""1""#)
        );
        assert_eq!(IdKey::of_number("1.0").unwrap().json(), "1.0");
    }
}
