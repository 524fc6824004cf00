//! Strict JSON (RFC 8259) pre-check, run before serde_json sees the bytes.
//!
//! serde_json is lenient where a wire checker must not be: it keeps the last
//! of two duplicate keys, and it reports positions as line/column. [`check`]
//! walks the input once with the wire's one strict scanner (the fused
//! `resources/read` decoder's grammar, entered with no schema) and rejects,
//! with a byte offset:
//!
//! * input longer than [`MAX_MESSAGE_BYTES`](crate::limits::MAX_MESSAGE_BYTES),
//! * nesting deeper than [`MAX_NESTING_DEPTH`](crate::limits::MAX_NESTING_DEPTH),
//! * invalid UTF-8 (RFC 8259 §8.1),
//! * a duplicate key in any object (RFC 8259 §4),
//! * a lone surrogate escape such as `\ud800` (RFC 8259 §8.2),
//! * any other grammar violation.
//!
//! After it passes, serde_json does the typed parsing.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{JsonError, JsonErrorKind};
use crate::limits;

/// `input` (one JSON text, RFC 8259) as a [`serde_json::Value`], every
/// object key read as a key.
///
/// `serde_json::from_slice::<Value>` with the workspace's `raw_value`
/// feature reads an object whose first key is serde_json's private token
/// `$serde_json::private::RawValue` as a `RawValue` instead: a request with
/// `"params":{"$serde_json::private::RawValue":"x"}` failed to decode, and
/// `{"…RawValue":2}` too (found by the `envelope_vs_jsonrpc` campaign run,
/// 2026-12-03). Numbers, strings and nesting are serde_json's own (same
/// values, same recursion limit of 128).
///
/// Errors: serde_json's, for text that is not one JSON value.
pub fn value_from_slice(input: &[u8]) -> Result<serde_json::Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(input);
    let v = serde::de::DeserializeSeed::deserialize(PlainValue, &mut de)?;
    de.end()?;
    Ok(v)
}

/// Builds a [`serde_json::Value`] as `Value`'s own visitor does, without its
/// private-token members ([`value_from_slice`]).
struct PlainValue;

impl<'de> serde::de::DeserializeSeed<'de> for PlainValue {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PlainValue {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<serde_json::Value, E> {
        Ok(b.into())
    }
    fn visit_i64<E>(self, n: i64) -> Result<serde_json::Value, E> {
        Ok(n.into())
    }
    fn visit_u64<E>(self, n: u64) -> Result<serde_json::Value, E> {
        Ok(n.into())
    }
    fn visit_f64<E>(self, n: f64) -> Result<serde_json::Value, E> {
        Ok(serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, s: &str) -> Result<serde_json::Value, E> {
        Ok(s.into())
    }
    fn visit_string<E>(self, s: String) -> Result<serde_json::Value, E> {
        Ok(s.into())
    }
    fn visit_unit<E>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> Result<serde_json::Value, A::Error> {
        let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0));
        while let Some(v) = a.next_element_seed(PlainValue)? {
            out.push(v);
        }
        Ok(out.into())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<serde_json::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(k) = a.next_key::<String>()? {
            let v = a.next_value_seed(PlainValue)?;
            out.insert(k, v);
        }
        Ok(out.into())
    }
}

/// Checks that `input` is one strict JSON value (RFC 8259) within the wire
/// limits and returns it as `&str`.
///
/// Errors: [`JsonError`] with [`JsonErrorKind::MessageTooLarge`],
/// [`NestingTooDeep`](JsonErrorKind::NestingTooDeep),
/// [`InvalidUtf8`](JsonErrorKind::InvalidUtf8),
/// [`DuplicateKey`](JsonErrorKind::DuplicateKey),
/// [`LoneSurrogate`](JsonErrorKind::LoneSurrogate) or
/// [`Syntax`](JsonErrorKind::Syntax), each at the byte offset where the problem starts.
pub fn check(input: &[u8]) -> Result<&str, JsonError> {
    limits::check_message_size(input.len())?;
    crate::codec::fused::check_json(input).map_err(|e| json_error(input, &e))?;
    // Strings were checked as UTF-8 while scanning and everything outside
    // them is ASCII, so this cannot fail; it only converts.
    std::str::from_utf8(input)
        .map_err(|e| JsonError::new(JsonErrorKind::InvalidUtf8, e.valid_up_to()))
}

/// [`check`] of text already known to be UTF-8 (a `&str`): the same
/// verdict and the same errors at the same byte offsets, without checking
/// its UTF-8 again (RFC 8259 §8.1 holds for any `&str`).
///
/// Errors: as [`check`], never [`InvalidUtf8`](JsonErrorKind::InvalidUtf8).
pub fn check_str(input: &str) -> Result<(), JsonError> {
    limits::check_message_size(input.len())?;
    crate::codec::fused::check_json_str(input).map_err(|e| json_error(input.as_bytes(), &e))
}

/// The scanner's error as a [`JsonError`] (same offset). One grammar, two
/// vocabularies: the codec's kinds name the token, these name the RFC rule.
fn json_error(input: &[u8], e: &crate::codec::CodecError) -> JsonError {
    use crate::codec::CodecErrorKind as C;
    let kind = match &e.kind {
        C::DuplicateKey { key } => JsonErrorKind::DuplicateKey { key: key.clone() },
        C::LoneSurrogate => JsonErrorKind::LoneSurrogate {
            code_unit: input
                .get(e.offset + 2..e.offset + 6)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u16::from_str_radix(h, 16).ok())
                .unwrap_or(0),
        },
        C::InvalidUtf8 => JsonErrorKind::InvalidUtf8,
        C::TooDeep => JsonErrorKind::NestingTooDeep {
            max: limits::MAX_NESTING_DEPTH,
        },
        C::NumberOutOfRange => JsonErrorKind::NumberOutOfRange,
        C::UnexpectedEnd => JsonErrorKind::Syntax {
            expected: "more input",
        },
        C::TrailingCharacters => JsonErrorKind::Syntax {
            expected: "end of input",
        },
        C::InvalidNumber => JsonErrorKind::Syntax {
            expected: "a digit",
        },
        C::ControlCharacterInString => JsonErrorKind::Syntax {
            expected: "no raw control character in a string",
        },
        C::InvalidEscape => JsonErrorKind::Syntax {
            expected: "a valid escape",
        },
        // `UnexpectedByte` (and any kind the grammar adds later).
        _ => JsonErrorKind::Syntax {
            expected: "a value",
        },
    };
    JsonError::new(kind, e.offset)
}

/// Byte offset of the first `\n` or `\r` in `bytes` (`memchr2`, SIMD): the
/// stdio framing test (MCP stdio transport: messages MUST NOT contain
/// embedded newlines) at memory speed.
pub fn find_line_break(bytes: &[u8]) -> Option<usize> {
    memchr::memchr2(b'\n', b'\r', bytes)
}

/// Byte offset of `part` inside `base` (both borrowed from the same input).
pub(crate) fn offset_in(base: &str, part: &str) -> usize {
    (part.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize)
}

/// The members of a JSON object, in order, each value kept raw (with its position).
pub(crate) struct RawMembers<'a>(pub(crate) Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for RawMembers<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = RawMembers<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    let raw: &'de RawValue = map.next_value()?;
                    v.push((k, raw));
                }
                Ok(RawMembers(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// First byte of a raw JSON value (after the checker, raw values carry no leading space).
pub(crate) fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

/// Splits an already-checked raw JSON object into its members; `None` when not an object.
pub(crate) fn members(raw: &RawValue) -> Option<Vec<(String, &RawValue)>> {
    if first_byte(raw) != b'{' {
        return None;
    }
    serde_json::from_str::<RawMembers<'_>>(raw.get())
        .ok()
        .map(|m| m.0)
}

/// Splits an already-checked raw JSON array into its elements; `None` when not an array.
pub(crate) fn elements(raw: &RawValue) -> Option<Vec<&RawValue>> {
    if first_byte(raw) != b'[' {
        return None;
    }
    serde_json::from_str::<Vec<&RawValue>>(raw.get()).ok()
}

/// Decodes an already-checked raw JSON string; `None` when not a string.
pub(crate) fn string(raw: &RawValue) -> Option<String> {
    if first_byte(raw) != b'"' {
        return None;
    }
    serde_json::from_str::<String>(raw.get()).ok()
}

/// Byte offset, inside the raw text of a JSON string *between its quotes*,
/// of the character that decodes to byte `decoded_idx` of the decoded string.
/// Escapes count as one unit: an offset into `\r` points at its backslash.
pub(crate) fn raw_offset_of(raw_inner: &str, decoded_idx: usize) -> usize {
    let b = raw_inner.as_bytes();
    let (mut r, mut d) = (0usize, 0usize);
    while r < b.len() {
        let (raw_len, dec_len) = if b[r] == b'\\' {
            match b.get(r + 1) {
                Some(b'u') => {
                    let hex = |at: usize| {
                        raw_inner
                            .get(at..at + 4)
                            .and_then(|h| u16::from_str_radix(h, 16).ok())
                            .unwrap_or(0)
                    };
                    let hi = hex(r + 2);
                    if (0xD800..=0xDBFF).contains(&hi) {
                        (12, 4)
                    } else {
                        (6, char::from_u32(u32::from(hi)).map_or(3, char::len_utf8))
                    }
                }
                _ => (2, 1),
            }
        } else {
            (1, 1)
        };
        if decoded_idx < d + dec_len {
            return r;
        }
        r += raw_len;
        d += dec_len;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> JsonError {
        check(s.as_bytes()).unwrap_err()
    }

    #[test]
    fn check_str_gives_checks_verdict_and_error_offsets() {
        for input in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"\ud800"}"#,
            "{\"a\":\"caf\u{e9}\",\"b\":[1,2.5e3,null,true]}",
            r#"{"a":1e400}"#,
            r#"{"a":[1,}"#,
            r#"{"a":1} x"#,
            "",
        ] {
            let strict = check(input.as_bytes()).map(|_| ());
            assert_eq!(check_str(input), strict, "{input:?}");
        }
        assert_eq!(check_str(r#"{"a":[1,}"#).unwrap_err().offset(), 8);
        assert!(check_str("{\"a\":\"\u{e9}\"}").is_ok());
    }

    #[test]
    fn duplicate_key_top_level_rejected_at_second_key() {
        let e = err(r#"{"a":1,"a":2}"#);
        assert_eq!(e.kind(), &JsonErrorKind::DuplicateKey { key: "a".into() });
        assert_eq!(e.offset(), 7);
    }

    #[test]
    fn duplicate_key_with_escape_is_same_key() {
        let e = err(r#"{"a":1,"\u0061":2}"#);
        assert_eq!(e.kind(), &JsonErrorKind::DuplicateKey { key: "a".into() });
    }

    #[test]
    fn same_key_in_sibling_objects_is_fine() {
        assert!(check(br#"[{"a":1},{"a":2}]"#).is_ok());
    }

    /// Asserts `input` fails with a lone surrogate `code_unit`, at `offset` when given.
    fn assert_lone_surrogate(input: &str, code_unit: u16, offset: Option<usize>) {
        let e = err(input);
        assert_eq!(e.kind(), &JsonErrorKind::LoneSurrogate { code_unit });
        if let Some(at) = offset {
            assert_eq!(e.offset(), at);
        }
    }

    #[test]
    fn lone_high_surrogate_reported_at_backslash() {
        assert_lone_surrogate(r#"{"t":"ab\ud800"}"#, 0xd800, Some(8));
    }

    #[test]
    fn lone_low_surrogate_rejected() {
        assert_lone_surrogate(r#""\udc00x""#, 0xdc00, Some(1));
    }

    #[test]
    fn high_surrogate_followed_by_non_low_rejected() {
        assert_lone_surrogate(r#""\ud800\u0041""#, 0xd800, None);
    }

    #[test]
    fn valid_surrogate_pair_passes() {
        assert!(check(br#""\ud83d\ude00""#).is_ok());
    }

    #[test]
    fn syntax_errors_have_offsets() {
        assert_eq!(err("{\"a\" 1}").offset(), 5);
        assert_eq!(err("[1,]").offset(), 3);
        assert_eq!(err("01").offset(), 1);
        assert_eq!(err("\"a\nb\"").offset(), 2);
        assert_eq!(err("{} x").offset(), 3);
    }

    #[test]
    fn number_out_of_f64_range_rejected() {
        let e = err("[1, 1e400]");
        assert_eq!(e.kind(), &JsonErrorKind::NumberOutOfRange);
        assert_eq!(e.offset(), 4);
        assert!(
            check(b"[1.7976931348623157e308, 18446744073709551615, -9223372036854775808]").is_ok()
        );
    }

    #[test]
    fn invalid_utf8_reported_at_first_bad_byte() {
        let e = check(b"\"ab\xff\"").unwrap_err();
        assert_eq!(e.kind(), &JsonErrorKind::InvalidUtf8);
        assert_eq!(e.offset(), 3);
    }

    #[test]
    fn find_line_break_finds_first_cr_or_lf() {
        assert_eq!(find_line_break(b"{\"a\":1}"), None);
        assert_eq!(find_line_break(b"{\"a\":\r\n1}"), Some(5));
        assert_eq!(find_line_break(b"ab\n"), Some(2));
    }

    #[test]
    fn raw_offset_maps_escapes() {
        // decoded "ab\r\nc": byte 2 is '\r' at raw offset 2, byte 4 'c' at raw 6.
        let raw = r"ab\r\nc";
        assert_eq!(raw_offset_of(raw, 2), 2);
        assert_eq!(raw_offset_of(raw, 3), 4);
        assert_eq!(raw_offset_of(raw, 4), 6);
        // "\u00e9" decodes to 2 bytes, then 'x'.
        assert_eq!(raw_offset_of(r"\u00e9x", 2), 6);
        assert_eq!(raw_offset_of(r"\ud83d\ude00x", 4), 12);
    }
}
