//! Strict JSON (RFC 8259) pre-check, run before serde_json sees the bytes.
//!
//! serde_json is lenient where a wire checker must not be: it keeps the last
//! of two duplicate keys, and it reports positions as line/column. [`check`]
//! walks the input once and rejects, with a byte offset:
//!
//! * input longer than [`MAX_MESSAGE_BYTES`](crate::limits::MAX_MESSAGE_BYTES),
//! * nesting deeper than [`MAX_NESTING_DEPTH`](crate::limits::MAX_NESTING_DEPTH),
//! * invalid UTF-8 (RFC 8259 §8.1),
//! * a duplicate key in any object (RFC 8259 §4),
//! * a lone surrogate escape such as `\ud800` (RFC 8259 §8.2),
//! * any other grammar violation.
//!
//! After it passes, serde_json does the typed parsing.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{JsonError, JsonErrorKind};
use crate::limits;

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
    let mut s = Scanner {
        b: input,
        pos: 0,
        depth: 0,
    };
    s.ws();
    s.value()?;
    s.ws();
    if s.pos != s.b.len() {
        return Err(s.syntax("end of input"));
    }
    // Strings were checked as UTF-8 while scanning and everything outside
    // them is ASCII, so this cannot fail; it only converts.
    std::str::from_utf8(input)
        .map_err(|e| JsonError::new(JsonErrorKind::InvalidUtf8, e.valid_up_to()))
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Scanner<'a> {
    fn syntax(&self, expected: &'static str) -> JsonError {
        JsonError::new(JsonErrorKind::Syntax { expected }, self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: u8, what: &'static str) -> Result<(), JsonError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(what))
        }
    }

    fn value(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string(false).map(|_| ()),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.syntax("a value")),
        }
    }

    fn enter(&mut self) -> Result<(), JsonError> {
        self.depth += 1;
        limits::check_nesting_depth(self.depth, self.pos)?;
        self.pos += 1;
        Ok(())
    }

    fn object(&mut self) -> Result<(), JsonError> {
        self.enter()?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(());
        }
        let mut keys: HashSet<Cow<'a, str>> = HashSet::new();
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.syntax("a string key"));
            }
            let key_at = self.pos;
            let key = self.string(true)?.unwrap_or(Cow::Borrowed(""));
            if keys.contains(&key) {
                return Err(JsonError::new(
                    JsonErrorKind::DuplicateKey {
                        key: key.into_owned(),
                    },
                    key_at,
                ));
            }
            keys.insert(key);
            self.ws();
            self.expect(b':', "':'")?;
            self.ws();
            self.value()?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(self.syntax("',' or '}'")),
            }
        }
    }

    fn array(&mut self) -> Result<(), JsonError> {
        self.enter()?;
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.pos += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(self.syntax("',' or ']'")),
            }
        }
    }

    fn literal(&mut self, lit: &'static [u8]) -> Result<(), JsonError> {
        if self.b[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            Err(self.syntax("true, false or null"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), JsonError> {
        let start = self.pos;
        self.number_grammar()?;
        // serde_json keeps integers that fit i64/u64 and reads the rest as f64;
        // reject what would become infinite instead of letting serde fail later.
        let text = as_str(&self.b[start..self.pos]);
        if text.parse::<i64>().is_err()
            && text.parse::<u64>().is_err()
            && !text.parse::<f64>().is_ok_and(f64::is_finite)
        {
            return Err(JsonError::new(JsonErrorKind::NumberOutOfRange, start));
        }
        Ok(())
    }

    fn number_grammar(&mut self) -> Result<(), JsonError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.syntax("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.syntax("a digit after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.syntax("a digit in the exponent"));
            }
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let mut v: u16 = 0;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.syntax("four hex digits after \\u")),
            };
            v = (v << 4) | u16::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// Scans a string starting at its opening quote. With `decode`, returns
    /// the decoded text (borrowed when it has no escape).
    fn string(&mut self, decode: bool) -> Result<Option<Cow<'a, str>>, JsonError> {
        self.pos += 1;
        let start = self.pos;
        let mut out: Option<String> = None;
        loop {
            let rest = &self.b[self.pos..];
            // memchr (SIMD) finds the next quote or backslash; the branch-free
            // fold over the run in between vectorizes; only on a hit do we
            // look for the exact control character.
            let end = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            let has_control = rest[..end].iter().fold(false, |acc, &c| acc | (c < 0x20));
            let n = if has_control {
                rest[..end].iter().position(|&c| c < 0x20).unwrap_or(end)
            } else {
                end
            };
            if n == rest.len() {
                self.pos = self.b.len();
                return Err(self.syntax("closing '\"'"));
            }
            let seg = std::str::from_utf8(&rest[..n]).map_err(|e| {
                JsonError::new(JsonErrorKind::InvalidUtf8, self.pos + e.valid_up_to())
            })?;
            if let Some(o) = out.as_mut() {
                o.push_str(seg);
            }
            self.pos += n;
            match self.b[self.pos] {
                b'"' => {
                    let end = self.pos;
                    self.pos += 1;
                    if !decode {
                        return Ok(None);
                    }
                    return Ok(Some(match out {
                        Some(o) => Cow::Owned(o),
                        None => Cow::Borrowed(as_str(&self.b[start..end])),
                    }));
                }
                b'\\' => {
                    if decode && out.is_none() {
                        out = Some(as_str(&self.b[start..self.pos]).to_owned());
                    }
                    let esc_at = self.pos;
                    self.pos += 1;
                    let ch = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos += 1;
                            let ch = self.unicode_escape(esc_at)?;
                            if let Some(o) = out.as_mut() {
                                o.push(ch);
                            }
                            continue;
                        }
                        _ => return Err(self.syntax("a valid escape")),
                    };
                    self.pos += 1;
                    if let Some(o) = out.as_mut() {
                        o.push(ch);
                    }
                }
                _ => return Err(self.syntax("no raw control character in a string")),
            }
        }
    }

    /// After `\u`: reads the code unit (and its low surrogate when it is a high one).
    fn unicode_escape(&mut self, esc_at: usize) -> Result<char, JsonError> {
        let hi = self.hex4()?;
        let lone = |code_unit| JsonError::new(JsonErrorKind::LoneSurrogate { code_unit }, esc_at);
        match hi {
            0xDC00..=0xDFFF => Err(lone(hi)),
            0xD800..=0xDBFF => {
                if !self.b[self.pos..].starts_with(b"\\u") {
                    return Err(lone(hi));
                }
                let save = self.pos;
                self.pos += 2;
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    self.pos = save;
                    return Err(lone(hi));
                }
                let cp = 0x10000 + ((u32::from(hi) - 0xD800) << 10) + (u32::from(lo) - 0xDC00);
                char::from_u32(cp).ok_or_else(|| lone(hi))
            }
            _ => char::from_u32(u32::from(hi)).ok_or_else(|| lone(hi)),
        }
    }
}

/// `bytes` is a sub-slice of an input already checked as UTF-8 and cut at
/// ASCII delimiters, so it is valid UTF-8; the fallback is unreachable.
fn as_str(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
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

    #[test]
    fn lone_high_surrogate_reported_at_backslash() {
        let e = err(r#"{"t":"ab\ud800"}"#);
        assert_eq!(
            e.kind(),
            &JsonErrorKind::LoneSurrogate { code_unit: 0xd800 }
        );
        assert_eq!(e.offset(), 8);
    }

    #[test]
    fn lone_low_surrogate_rejected() {
        let e = err(r#""\udc00x""#);
        assert_eq!(
            e.kind(),
            &JsonErrorKind::LoneSurrogate { code_unit: 0xdc00 }
        );
        assert_eq!(e.offset(), 1);
    }

    #[test]
    fn high_surrogate_followed_by_non_low_rejected() {
        let e = err(r#""\ud800\u0041""#);
        assert_eq!(
            e.kind(),
            &JsonErrorKind::LoneSurrogate { code_unit: 0xd800 }
        );
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
