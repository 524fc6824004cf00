//! A borrowed summary of a `resources/read` result (MCP 2026-07-28
//! `ReadResourceResult`): per entry its `uri`, `mimeType`, shape and decoded
//! size, and the raw payload (the `text` token as sent, the `blob` base64
//! text), read in one walk of the crate's lexer without building a `Value`,
//! a `String` of any payload or a decoded blob. For `mcptape inspect`, which
//! needs sizes and kinds, never the bytes.
//!
//! [`summarize_scanned_read_result`] answers only for the common, valid
//! shape; for anything else (a rule violation, a shape it leaves to the
//! parser) it answers `None` and the caller parses with
//! [`crate::resources::parse_scanned_read_result`], whose errors (kind,
//! entry, offset) are the report's. Where it answers, it agrees with that
//! parser: the same `resultType`, `ttlMs`, `cacheScope`, entries, uris,
//! media types, shapes and decoded sizes.

use std::borrow::Cow;

use crate::codec::base64::{self, Path};
use crate::lex::{self, LexErrorKind, Lexer};
use crate::resources::{CacheScope, Shape};

/// Nesting depth of the `result` object in a single JSON-RPC message (the
/// message is 1), as the envelope scan counts it.
const RESULT_DEPTH: usize = 2;

/// The summary of a `resources/read` result ([module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSummary<'a> {
    /// `resultType` as on the wire (unescaped); `None` when absent (a
    /// pre-2026-07-28 peer: `"complete"` is assumed).
    pub result_type: Option<Cow<'a, str>>,
    /// `ttlMs` in ms (only a plain non-negative integer is summarized).
    pub ttl_ms: Option<u64>,
    /// `cacheScope`.
    pub cache_scope: Option<CacheScope>,
    /// The `contents` entries in order.
    pub entries: Vec<EntrySummary<'a>>,
}

/// One `contents` entry of a [`ReadSummary`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySummary<'a> {
    /// `uri`, unescaped (borrowed when it has no escape).
    pub uri: Cow<'a, str>,
    /// `mimeType`, unescaped, when present.
    pub mime_type: Option<Cow<'a, str>>,
    /// The payload.
    pub payload: Payload<'a>,
}

/// The payload of an [`EntrySummary`], never decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload<'a> {
    /// `text`: its JSON string token as sent (quotes and escapes) and the
    /// UTF-8 length in bytes of the string it holds.
    Text {
        /// The validated string token, opening to closing quote.
        token: &'a [u8],
        /// UTF-8 length of the unescaped text, in bytes.
        decoded_len: usize,
    },
    /// `blob`: its base64 text (strict padded standard base64, RFC 4648 §4,
    /// validated in place; a blob written with escapes is not summarized)
    /// and the number of bytes it decodes to.
    Blob {
        /// The base64 characters, without quotes.
        base64: &'a str,
        /// Decoded length in bytes (`len / 4 * 3 - padding`).
        decoded_len: usize,
    },
}

impl Payload<'_> {
    /// Text or blob.
    pub fn shape(&self) -> Shape {
        match self {
            Payload::Text { .. } => Shape::Text,
            Payload::Blob { .. } => Shape::Blob,
        }
    }

    /// Decoded size in bytes (UTF-8 length of the text, decoded blob length).
    pub fn decoded_len(&self) -> usize {
        match *self {
            Payload::Text { decoded_len, .. } | Payload::Blob { decoded_len, .. } => decoded_len,
        }
    }
}

/// The summary of the `result` value `text` of a single response that the
/// envelope scan ([`crate::envelope::scan_frame`]) accepted, or `None` when
/// [`crate::resources::parse_scanned_read_result`] rejects it or it has a
/// shape left to that parser: a `ttlMs` that is not a plain non-negative
/// integer fitting `u64`, a `blob` written with escapes. One walk of the
/// lexer over `text`; only `uri`, `mimeType` and `resultType` are unescaped
/// (borrowed when they hold no escape); a `text` string, validated by the
/// envelope scan, is skipped with its decoded length counted, not
/// validated again. Only for such a value: on other text a `text` with a
/// raw control byte or bad UTF-8 would be summarized.
pub fn summarize_scanned_read_result(text: &str) -> Option<ReadSummary<'_>> {
    summarize(Lexer::new_str(text))
}

/// [`summarize_scanned_read_result`] of the `result` of `message`, whose
/// envelope scan is `env` ([`crate::envelope::scan_frame_str`]): the same
/// summary, with the strings of at least 4 KiB the envelope scan validated
/// taken as they are, not searched again, and its objects not checked for
/// repeated keys again (as [`crate::codec::scan_result_contents`] does). `None` also when `env`
/// has no `result` range inside `message`. `env` must be the scan of
/// `message`.
pub fn summarize_result_of<'a>(
    message: &'a str,
    env: &crate::envelope::Envelope,
) -> Option<ReadSummary<'a>> {
    let m = &env.members;
    if let Some(spans) = &m.contents_entries
        && m.long_strings.scanned(message.len())
        && let Some(summary) = from_spans(message, env, spans)
    {
        return Some(summary);
    }
    // No summary from the ranges: the walk answers (it bails where they
    // did, and a range that is not the token the scan recorded, never
    // expected, costs a second lexing instead of a wrong "no summary").
    let (text, known) = env.members.long_strings.of(message, env.result.clone())?;
    // The envelope scan refused repeated keys in it: not checked again.
    summarize(Lexer::new_str(text).with_known(known).keys_checked())
}

/// The walk of [`summarize_scanned_read_result`] with the lexer `lx` at the
/// result's start.
fn summarize(mut lx: Lexer<'_>) -> Option<ReadSummary<'_>> {
    lx.ws();
    if lx.peek() != Some(b'{') {
        return None;
    }
    let mut out = ReadSummary {
        result_type: None,
        ttl_ms: None,
        cache_scope: None,
        entries: Vec::new(),
    };
    let mut contents = false;
    lex::object(&mut lx, RESULT_DEPTH, |lx, key, _| match key {
        b"contents" => {
            contents = true;
            entries(lx, &mut out.entries)
        }
        b"resultType" => {
            out.result_type = Some(string(lx)?);
            Ok(())
        }
        b"ttlMs" => {
            out.ttl_ms = Some(plain_u64(lx)?);
            Ok(())
        }
        b"cacheScope" => {
            out.cache_scope = Some(match string(lx)?.as_ref() {
                "public" => CacheScope::Public,
                "private" => CacheScope::Private,
                _ => return Err(bail(lx)),
            });
            Ok(())
        }
        b"_meta" => object_value(lx, RESULT_DEPTH + 1),
        _ => lx.value(RESULT_DEPTH + 1),
    })
    .ok()?;
    lx.end().ok()?;
    contents.then_some(out)
}

/// [`summarize_result_of`] built from what the envelope scan of `message`
/// recorded (`env`: the ranges of `result`'s members and of its contents
/// entries' strings): the same summary, or `None` where the walk bails, with
/// nothing lexed again.
fn from_spans<'a>(
    message: &'a str,
    env: &crate::envelope::Envelope,
    spans: &[crate::envelope::EntrySpans],
) -> Option<ReadSummary<'a>> {
    let m = &env.members;
    let token = |r: &std::ops::Range<usize>| message.get(r.clone());
    // A string token's text between its quotes (recorded without escapes).
    let inner = |r: &std::ops::Range<usize>| token(r)?.get(1..r.len().checked_sub(1)?);
    let string = |r: &std::ops::Range<usize>| {
        let t = token(r)?.as_bytes();
        if t.first() != Some(&b'"') {
            return None;
        }
        crate::envelope::decode_string(t)
    };
    if let Some(r) = &m.result_meta
        && message.as_bytes().get(r.start) != Some(&b'{')
    {
        return None;
    }
    let result_type = match &m.result_result_type {
        Some(r) => Some(string(r)?),
        None => None,
    };
    let ttl_ms = match &m.result_ttl_ms {
        Some(r) => {
            let t = token(r)?;
            if !t.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(t.parse().ok()?)
        }
        None => None,
    };
    let cache_scope = match &m.result_cache_scope {
        Some(r) => Some(match string(r)?.as_ref() {
            "public" => CacheScope::Public,
            "private" => CacheScope::Private,
            _ => return None,
        }),
        None => None,
    };
    let mut entries = Vec::with_capacity(spans.len());
    for e in spans {
        let payload = match (&e.text, &e.blob) {
            (Some(r), None) => {
                let t = token(r)?.as_bytes();
                let decoded_len = if e.text_escaped {
                    skip_string(t, 0)?.1
                } else {
                    t.len().checked_sub(2)?
                };
                Payload::Text {
                    token: t,
                    decoded_len,
                }
            }
            (None, Some(r)) => blob_payload(inner(r)?)?,
            _ => return None,
        };
        entries.push(EntrySummary {
            uri: Cow::Borrowed(inner(e.uri.as_ref()?)?),
            mime_type: match &e.mime_type {
                Some(r) => Some(Cow::Borrowed(inner(r)?)),
                None => None,
            },
            payload,
        });
    }
    Some(ReadSummary {
        result_type,
        ttl_ms,
        cache_scope,
        entries,
    })
}

/// The payload of a `blob` whose base64 text (between its quotes, no
/// escape) is `b64`: `None` when it is not strict padded base64 or its
/// decoded length does not fit `usize`.
fn blob_payload(b64: &str) -> Option<Payload<'_>> {
    if base64::validate(Path::Simd, b64.as_bytes()).is_err() {
        return None;
    }
    let pad = crate::b64::count_padding(b64.as_bytes()).min(2) as u8;
    let n = crate::b64::decoded_len(b64.len() as u64, pad).and_then(|n| usize::try_from(n).ok())?;
    Some(Payload::Blob {
        base64: b64,
        decoded_len: n,
    })
}

/// "Not summarized": the walk stops (the caller parses).
fn bail(lx: &Lexer<'_>) -> lex::LexError {
    lx.err(LexErrorKind::End, lx.pos)
}

/// A string value at the position, unescaped.
fn string<'a>(lx: &mut Lexer<'a>) -> Result<Cow<'a, str>, lex::LexError> {
    if lx.peek() != Some(b'"') {
        return Err(bail(lx));
    }
    lx.string_cow()
}

/// An object value at the position (at nesting `depth`), skipped.
fn object_value(lx: &mut Lexer<'_>, depth: usize) -> Result<(), lex::LexError> {
    if lx.peek() != Some(b'{') {
        return Err(bail(lx));
    }
    lx.value(depth)
}

/// A number at the position that is a plain integer fitting `u64`
/// (serde_json reads exactly those as `u64`).
fn plain_u64(lx: &mut Lexer<'_>) -> Result<u64, lex::LexError> {
    let start = lx.pos;
    if !matches!(lx.peek(), Some(b'0'..=b'9')) {
        return Err(bail(lx));
    }
    lx.number()?;
    std::str::from_utf8(&lx.input[start..lx.pos])
        .ok()
        .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| bail(lx))
}

/// Depth of the `contents` array and of its entries.
const CONTENTS_DEPTH: usize = RESULT_DEPTH + 1;
const ENTRY_DEPTH: usize = CONTENTS_DEPTH + 1;

/// The `contents` array at the position, each entry summarized into `out`.
fn entries<'a>(lx: &mut Lexer<'a>, out: &mut Vec<EntrySummary<'a>>) -> Result<(), lex::LexError> {
    if lx.peek() != Some(b'[') {
        return Err(bail(lx));
    }
    lex::array(lx, CONTENTS_DEPTH, |lx| {
        if lx.peek() != Some(b'{') {
            return Err(bail(lx));
        }
        let (mut uri, mut mime_type, mut text, mut blob) = (None, None, None, None);
        lex::object(lx, ENTRY_DEPTH, |lx, key, _| match key {
            b"uri" => {
                uri = Some(string(lx)?);
                Ok(())
            }
            b"mimeType" => {
                mime_type = Some(string(lx)?);
                Ok(())
            }
            b"text" => {
                // The envelope scan validated the string: it is only
                // skipped here, its decoded length counted on the way.
                let start = lx.pos;
                if lx.peek() != Some(b'"') {
                    return Err(bail(lx));
                }
                let (end, len) = match lx.known_here() {
                    // A long string with no escape: its length is its span.
                    Some(k) if !k.escaped => (k.end, k.end - k.start - 2),
                    _ => skip_string(lx.input, start).ok_or_else(|| bail(lx))?,
                };
                lx.pos = end;
                text = Some((&lx.input[start..end], len));
                Ok(())
            }
            b"blob" => {
                let start = lx.pos;
                if lx.peek() != Some(b'"') || lx.string()? {
                    return Err(bail(lx));
                }
                blob = Some((start + 1)..(lx.pos - 1));
                Ok(())
            }
            b"_meta" => object_value(lx, ENTRY_DEPTH + 1),
            _ => lx.value(ENTRY_DEPTH + 1),
        })?;
        let payload = match (text, blob) {
            (Some((token, decoded_len)), None) => Payload::Text { token, decoded_len },
            (None, Some(range)) => {
                let b64 = std::str::from_utf8(&lx.input[range]).map_err(|_| bail(lx))?;
                blob_payload(b64).ok_or_else(|| bail(lx))?
            }
            _ => return Err(bail(lx)),
        };
        out.push(EntrySummary {
            uri: uri.ok_or_else(|| bail(lx))?,
            mime_type,
            payload,
        });
        Ok(())
    })
}

/// The validated JSON string token whose opening quote is at `input[at]`:
/// the offset just past its closing quote and the UTF-8 length in bytes of
/// the string it holds, counted from its escapes without unescaping (RFC
/// 8259 §7: a one-letter escape is one byte; `\uXXXX` is the UTF-8 length of
/// its code point, a surrogate pair `\uD8xx\uDCxx` four bytes). The string
/// is not validated (raw control bytes, UTF-8): it was, by the scan that
/// accepted its message. `None` when it does not end or an escape is cut
/// or a lone surrogate.
fn skip_string(input: &[u8], at: usize) -> Option<(usize, usize)> {
    if input.get(at) != Some(&b'"') {
        return None;
    }
    let mut p = at + 1;
    let mut len = 0;
    loop {
        let n = memchr::memchr2(b'"', b'\\', input.get(p..)?)?;
        len += n;
        p += n;
        if input[p] == b'"' {
            return Some((p + 1, len));
        }
        if input.get(p + 1)? != &b'u' {
            len += 1;
            p += 2;
            continue;
        }
        let cp = hex4(input.get(p + 2..p + 6)?)?;
        if (0xD800..0xDC00).contains(&cp) {
            // A high surrogate and its low one: one 4-byte character in 12 bytes.
            let low = input.get(p + 6..p + 12)?;
            if low.get(..2)? != b"\\u" || !(0xDC00..0xE000).contains(&hex4(&low[2..])?) {
                return None;
            }
            len += 4;
            p += 12;
        } else if (0xDC00..0xE000).contains(&cp) {
            return None;
        } else {
            len += char::from_u32(cp)?.len_utf8();
            p += 6;
        }
    }
}

/// Four hex digits as a number.
fn hex4(h: &[u8]) -> Option<u32> {
    if h.len() != 4 {
        return None;
    }
    h.iter()
        .try_fold(0u32, |acc, &b| Some(acc * 16 + char::from(b).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{ResourceContents, parse_scanned_read_result};

    /// [`skip_string`] of a whole token: the decoded length, `None` unless
    /// the token is one string.
    fn unescaped_len(token: &[u8]) -> Option<usize> {
        match skip_string(token, 0)? {
            (end, len) if end == token.len() => Some(len),
            _ => None,
        }
    }

    /// Results the summary answers for (valid, common shapes).
    const COMMON_SHAPES: &[&str] = &[
        r#"{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"hi"}]}"#,
        r#"{"contents":[{"uri":"file:///b","blob":"aGk="}],"ttlMs":5,"cacheScope":"public"}"#,
        r#"{"contents":[],"resultType":"complete"}"#,
        r#"{"resultType":"input_required","contents":[{"uri":"x","text":""}]}"#,
        r#"{"resultType":"\u0063omplete","contents":[{"uri":"x","text":""}]}"#,
        r#" { "contents" : [ { "uri" : "a\"b" , "text" : "\n\u00e9\u20ac\ud83d\ude00\\" } ] } "#,
        r#"{"contents":[{"uri":"u","name":"n","title":[1,{"a":2}],"_meta":{"k":1},"blob":""}],"_meta":{},"x":1e5}"#,
        r#"{"contents":[{"\u0075ri":"u","text":"data:image/png;base64,AA=="}],"cacheScope":"private","ttlMs":0}"#,
        r#"{"contents":[{"uri":"u","mimeType":"image/png","blob":"iVBORw0KGgo="},{"uri":"v","text":"t"}]}"#,
    ];

    /// Results the summary leaves to the parser (violations, rare shapes).
    const LEFT_TO_THE_PARSER: &[&str] = &[
        "[]",
        r#"{"resultType":"complete"}"#,
        r#"{"contents":{}}"#,
        r#"{"contents":[1]}"#,
        r#"{"contents":[{"text":"no uri"}]}"#,
        r#"{"contents":[{"uri":1,"text":""}]}"#,
        r#"{"contents":[{"uri":"u","mimeType":2,"text":""}]}"#,
        r#"{"contents":[{"uri":"u"}]}"#,
        r#"{"contents":[{"uri":"u","text":"","blob":""}]}"#,
        r#"{"contents":[{"uri":"u","text":1}]}"#,
        r#"{"contents":[{"uri":"u","blob":"aGk"}]}"#,
        r#"{"contents":[{"uri":"u","blob":"aGl="}]}"#,
        r#"{"contents":[{"uri":"u","blob":"aG\u0073="}]}"#,
        r#"{"contents":[{"uri":"u","blob":"","_meta":[]}]}"#,
        r#"{"contents":[],"_meta":1}"#,
        r#"{"contents":[],"resultType":7}"#,
        r#"{"contents":[],"ttlMs":-5}"#,
        r#"{"contents":[],"ttlMs":1.5}"#,
        r#"{"contents":[],"ttlMs":18446744073709551616}"#,
        r#"{"contents":[],"ttlMs":"5"}"#,
        r#"{"contents":[],"cacheScope":"nowhere"}"#,
        r#"{"contents":[]} x"#,
    ];

    /// Where the summary answers, it is the parser's result; where the
    /// parser refuses, it does not answer.
    fn agrees(input: &str) -> bool {
        let parsed = parse_scanned_read_result(input);
        let Some(s) = summarize_scanned_read_result(input) else {
            return false;
        };
        let r = parsed
            .unwrap_or_else(|e| panic!("summarized a result the parser refuses: {input}: {e}"));
        assert_eq!(
            s.result_type.as_deref().unwrap_or("complete"),
            r.result_type.as_str(),
            "{input}"
        );
        assert_eq!(s.result_type.is_none(), r.legacy_result_type, "{input}");
        assert_eq!(s.ttl_ms, r.ttl_ms, "{input}");
        assert_eq!(s.cache_scope, r.cache_scope, "{input}");
        assert_eq!(s.entries.len(), r.contents.len(), "{input}");
        for (e, c) in s.entries.iter().zip(&r.contents) {
            assert_eq!(e.uri, c.uri(), "{input}");
            assert_eq!(e.mime_type.as_deref(), c.mime_type(), "{input}");
            assert_eq!(e.payload.shape(), c.shape(), "{input}");
            assert_eq!(e.payload.decoded_len(), c.decoded_len(), "{input}");
            if let (Payload::Blob { base64, .. }, ResourceContents::Blob(b)) = (&e.payload, c) {
                assert_eq!(*base64, b.blob_base64(), "{input}");
            }
        }
        true
    }

    #[test]
    fn read_summary_is_the_parsers_result_for_the_common_shapes() {
        for input in COMMON_SHAPES {
            assert!(agrees(input), "not summarized: {input}");
        }
    }

    /// Every rule violation, and each shape left to the parser, is not
    /// summarized (the parser reports or reads it).
    #[test]
    fn read_summary_leaves_violations_and_rare_shapes_to_the_parser() {
        for input in LEFT_TO_THE_PARSER {
            assert!(!agrees(input), "summarized: {input}");
        }
    }

    /// The results of both tests above, each the `result` of a message: the
    /// summary built from the envelope scan's ranges (`contents_entries`,
    /// when recorded) is the walk's summary of the result text, and both
    /// answer `None` for the same results.
    #[test]
    fn summary_from_the_envelope_scans_ranges_is_the_walks() {
        let (mut messages, mut from_ranges) = (0, 0);
        for result in COMMON_SHAPES.iter().chain(LEFT_TO_THE_PARSER) {
            let message = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#);
            // `{..} x` is no message.
            let Ok(env) = crate::envelope::scan_envelope_str(&message) else {
                continue;
            };
            messages += 1;
            from_ranges += usize::from(env.members.contents_entries.is_some());
            let range = env.result.clone().unwrap();
            assert_eq!(
                summarize_result_of(&message, &env),
                summarize_scanned_read_result(&message[range]),
                "{result}"
            );
        }
        // Not from the ranges (10): no object or no array (`[]`, no
        // `contents`, `{}`, `[1]`), a member of another type (uri, mimeType,
        // text), an escaped uri or blob, an entry `_meta` that is an array.
        assert_eq!((messages, from_ranges), (30, 20), "counts");
    }

    /// A recorded range that is no token of the message (never expected:
    /// here moved by hand past its end) is answered by the walk, not by "no
    /// summary".
    #[test]
    fn summary_with_a_range_outside_the_message_falls_back_to_the_walk() {
        let message =
            r#"{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"a://x","text":"hi"}]}}"#;
        let mut env = crate::envelope::scan_envelope_str(message).unwrap();
        let spans = env
            .members
            .contents_entries
            .as_mut()
            .expect("ranges recorded");
        assert_eq!(&message[spans[0].uri.clone().unwrap()], r#""a://x""#);
        spans[0].uri = Some(message.len() + 1..message.len() + 8);
        let spans = env.members.contents_entries.as_ref().unwrap();
        assert_eq!(from_spans(message, &env, spans), None);
        let summary = summarize_result_of(message, &env);
        assert_eq!(
            summary,
            summarize_scanned_read_result(&message[env.result.clone().unwrap()])
        );
        assert_eq!(summary.unwrap().entries[0].uri, "a://x");
    }

    /// The counted length is the decoded string's, on every escape form.
    #[test]
    fn unescaped_len_counts_every_escape_form() {
        for token in [
            r#""""#,
            r#""plain""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\u0041\u00e9\u0800\uffff\ud83d\ude00é€😀""#,
            r#""a\u0000b""#,
        ] {
            let decoded: String = serde_json::from_str(token).expect("a string token");
            assert_eq!(
                unescaped_len(token.as_bytes()),
                Some(decoded.len()),
                "{token}"
            );
        }
        for bad in [
            r#""\ud83d""#,
            r#""\ude00x""#,
            r#""\u12""#,
            "no quotes",
            r#""unterminated"#,
            r#""a"b""#,
        ] {
            assert_eq!(unescaped_len(bad.as_bytes()), None, "{bad}");
        }
    }

    /// A read reply with a 6 KiB text, a 6 KiB escaped text and a 8 KiB
    /// blob: the summary from the envelope scan's long strings (taken as
    /// they are) is the summary of the result text alone, and the parser's.
    #[test]
    fn summary_of_a_message_given_its_scans_long_strings_agrees() {
        let plain = "é".repeat(3 * 1024);
        let escaped = "a\\n\\u00e9".repeat(600);
        let blob = "QUJD".repeat(2 * 1024);
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"contents":[{{"uri":"file:///a","text":"{plain}"}},{{"uri":"file:///b","mimeType":"text/plain","text":"{escaped}"}},{{"uri":"file:///c","blob":"{blob}"}}]}}}}"#
        );
        let env = crate::envelope::scan_envelope_str(&message).unwrap();
        let range = env.result.clone().unwrap();
        let known = env.members.long_strings.within(message.len(), &range);
        assert_eq!(known.len(), 3, "the three payloads are long strings");
        assert_eq!(
            known.iter().map(|k| k.escaped).collect::<Vec<_>>(),
            [false, true, false]
        );
        let of_message = summarize_result_of(&message, &env).unwrap();
        let of_result = summarize_scanned_read_result(&message[range.clone()]).unwrap();
        assert_eq!(of_message, of_result);
        let lens: Vec<usize> = of_message
            .entries
            .iter()
            .map(|e| e.payload.decoded_len())
            .collect();
        assert_eq!(lens, [plain.len(), "a\né".len() * 600, 6 * 1024]);
        assert!(agrees(&message[range]));
        // Another message's length: its long strings are not used.
        assert!(
            env.members
                .long_strings
                .within(message.len() + 1, &(0..message.len()))
                .is_empty()
        );
    }
}
