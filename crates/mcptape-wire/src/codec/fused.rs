//! The fused path: one hand-written pass that validates a `resources/read`
//! response (strict RFC 8259 JSON plus the schema rules in the module docs of
//! [`super`]) and base64-decodes each `blob` straight from the input into the
//! blob arena. The base64 alphabet has no `"` or `\`, so the kernel runs over
//! the rest of the input and stops in front of the closing quote by itself.
//!
//! The JSON grammar (strings, escapes, numbers, literals, duplicate keys,
//! depth) is the crate's one lexer, [`crate::lex`]; this module adds the
//! schema and the blob decoding, and names the lexer's errors as
//! [`CodecErrorKind`]s.
//!
//! This is also the reference scan: every path's error comes from here.

use super::base64::{DECODE_TABLE, first_error};
use super::kernel::{Kernel, decode_prefix};
use super::{
    Body, CodecError, CodecErrorKind, DecodedReadResult, EntryShape, EntrySpan, JsonType, Member,
    ScannedEntry,
};
use crate::envelope::EntrySpans;
use crate::lex::{self, Expected, Host, LexError, LexErrorKind, Lexer, Sink, StringSink, VecSink};
use std::ops::Range;

/// Parses `input`; on success `out` holds the entries, on error `out` is empty.
pub(super) fn parse(
    input: &[u8],
    kernel: Kernel,
    out: &mut DecodedReadResult,
) -> Result<(), CodecError> {
    out.clear();
    let mut p = Parser::new(input, kernel, out);
    let r = p.response();
    if r.is_err() {
        p.out.clear();
    }
    r
}

/// Validates any strict JSON value (the generic grammar, no schema): the one
/// scanner behind [`crate::json::check`]. Errors as the decoder reports them.
pub(crate) fn check_json(input: &[u8]) -> Result<(), CodecError> {
    let mut lx = Lexer::new(input);
    lx.ws();
    lx.value(1)
        .and_then(|()| lx.end())
        .map_err(|e| codec_error(input, e, None))
}

/// [`check_json`] of text known to be UTF-8 (its strings' UTF-8 is not
/// checked again): the one scanner behind [`crate::json::check_str`].
pub(crate) fn check_json_str(input: &str) -> Result<(), CodecError> {
    let mut lx = Lexer::new_str(input);
    lx.ws();
    lx.value(1)
        .and_then(|()| lx.end())
        .map_err(|e| codec_error(input.as_bytes(), e, None))
}

/// Nesting depth of a `contents` entry in a single response
/// (response 1, `result` 2, `contents` 3, entry 4).
const ENTRY_DEPTH: usize = 4;

/// See [`super::scan_contents`]; on error `out` holds the entries before it.
pub(super) fn scan_contents<'a>(
    input: &'a [u8],
    text: Option<&'a str>,
    out: &mut Vec<ScannedEntry<'a>>,
) -> Result<(), CodecError> {
    let end = contents_array(input, text, Vec::new(), false, out)?;
    trailing(input, end)
}

/// See [`super::scan_contents_shape`]: [`scan_contents`] with each entry's
/// shape only, walked on the bare lexer (no decoder arenas: `serve` asks it
/// of every recorded read result); on error `out` holds the entries before
/// it. `validated`: `input` is strict JSON an earlier scan of the same bytes
/// validated ([`Lexer::set_validated`]).
pub(super) fn scan_contents_shape<'a>(
    input: &'a [u8],
    text: Option<&'a str>,
    known: Vec<crate::lex::KnownString>,
    validated: bool,
    out: &mut Vec<EntryShape>,
) -> Result<(), CodecError> {
    let mut lx = contents_lexer(input, text, known);
    if validated {
        lx.set_validated();
    }
    lx.ws();
    if lx.peek() != Some(b'[') {
        return Err(not_an_array(&lx));
    }
    // The entry being read, for the error's `entry`.
    let mut at = None;
    lex::array(&mut lx, ENTRY_DEPTH - 1, |lx| {
        at = Some(out.len());
        out.push(shape_entry(lx)?);
        at = None;
        Ok(())
    })
    .map_err(|e| codec_error(input, e, at))?;
    trailing(input, lx.pos)
}

/// One `contents` entry at the lexer's position for [`scan_contents_shape`]:
/// validated and skipped, noting only its type and the types of its `text`
/// and `blob`.
fn shape_entry(lx: &mut Lexer<'_>) -> Result<EntryShape, LexError> {
    let mut e = EntryShape {
        found: value_type(lx),
        text: None,
        blob: None,
    };
    if e.found != JsonType::Object {
        lx.value(ENTRY_DEPTH)?;
        return Ok(e);
    }
    lex::object(lx, ENTRY_DEPTH, |lx, key, _| {
        let found = lx.peek().and_then(JsonType::of_first_byte);
        match key {
            b"text" => e.text = found,
            b"blob" => e.blob = found,
            _ => {}
        }
        lx.value(ENTRY_DEPTH + 1)
    })?;
    Ok(e)
}

/// The JSON type of the value at the lexer's position (`null` at the end or
/// at a byte no value starts with: the value's scan then fails).
fn value_type(lx: &Lexer<'_>) -> JsonType {
    lx.peek()
        .and_then(JsonType::of_first_byte)
        .unwrap_or(JsonType::Null)
}

/// The lexer of a `contents` array `input` (`text`: the same, known to be
/// UTF-8), told the strings `known` an earlier scan of it validated.
fn contents_lexer<'a>(
    input: &'a [u8],
    text: Option<&'a str>,
    known: Vec<crate::lex::KnownString>,
) -> Lexer<'a> {
    let lx = match text {
        Some(t) => Lexer::new_str(t),
        None => Lexer::new(input),
    };
    if known.is_empty() {
        lx
    } else {
        lx.with_known(known)
    }
}

/// The error of a `contents` value that is not an array, at the lexer's
/// position (after whitespace): [`CodecErrorKind::WrongType`], or
/// [`CodecErrorKind::UnexpectedEnd`] at the end of the input.
fn not_an_array(lx: &Lexer<'_>) -> CodecError {
    let kind = match lx.peek() {
        None => CodecErrorKind::UnexpectedEnd,
        Some(_) => CodecErrorKind::WrongType {
            field: "contents",
            expected: "an array",
        },
    };
    CodecError {
        kind,
        offset: lx.pos,
        entry: None,
    }
}

/// Whitespace from `end` to the end of `input`, else
/// [`CodecErrorKind::TrailingCharacters`] at the first other byte.
fn trailing(input: &[u8], end: usize) -> Result<(), CodecError> {
    let mut p = end;
    while p < input.len() && matches!(input[p], b' ' | b'\t' | b'\n' | b'\r') {
        p += 1;
    }
    if p != input.len() {
        return Err(CodecError {
            kind: CodecErrorKind::TrailingCharacters,
            offset: p,
            entry: None,
        });
    }
    Ok(())
}

/// [`scan_contents`] of text known to be UTF-8 that an earlier strict scan
/// of the same bytes accepted (see [`super::scan_result_contents`]): its
/// strings of at least 4 KiB (`known`) are not searched again, and its
/// objects are not checked for repeated keys again
/// ([`Lexer::keys_checked`]).
pub(super) fn scan_contents_known<'a>(
    input: &'a str,
    known: Vec<crate::lex::KnownString>,
    out: &mut Vec<ScannedEntry<'a>>,
) -> Result<(), CodecError> {
    let end = contents_array(input.as_bytes(), Some(input), known, true, out)?;
    trailing(input.as_bytes(), end)
}

/// The entries of the `contents` array `input` (starting at byte `base` of
/// the message) built from the ranges its envelope scan recorded
/// ([`EntrySpans`], into the message): what [`scan_contents_known`] gives on
/// the same array, without lexing it again. The ranges were lexed as strict
/// JSON strings, those other than `text` without escapes. `None` when a
/// recorded range does not lie inside `input` as a string token (the spans
/// are not of this array): the caller lexes the array instead.
pub(super) fn contents_from_spans<'a>(
    input: &'a str,
    base: usize,
    spans: &[EntrySpans],
) -> Option<Vec<ScannedEntry<'a>>> {
    // A recorded string token's range, relative to `input`: `Ok(None)` when
    // the member was absent, `Err(())` when the range is not a token of `input`.
    let rel = |r: &Option<Range<usize>>| -> Result<Option<(usize, usize)>, ()> {
        let Some(r) = r else { return Ok(None) };
        let (start, end) = (r.start.checked_sub(base), r.end.checked_sub(base));
        match (start, end) {
            (Some(start), Some(end)) if start + 2 <= end && end <= input.len() => {
                Ok(Some((start, end)))
            }
            _ => Err(()),
        }
    };
    // The string (no escape) between the quotes of the token at `start..end`.
    let plain = |r: &Option<Range<usize>>| -> Result<Member<'a>, ()> {
        Ok(match rel(r)? {
            Some((start, end)) => Member::Str {
                offset: start,
                value: std::borrow::Cow::Borrowed(input.get(start + 1..end - 1).ok_or(())?),
            },
            None => Member::Absent,
        })
    };
    let entry = |index: usize, s: &EntrySpans| -> Result<ScannedEntry<'a>, ()> {
        let mut e = ScannedEntry {
            index,
            offset: s.start.checked_sub(base).ok_or(())?,
            found: JsonType::Object,
            uri: plain(&s.uri)?,
            mime_type: plain(&s.mime_type)?,
            text: match rel(&s.text)? {
                Some((start, end)) => Member::Raw {
                    offset: start,
                    token: &input.as_bytes()[start..end],
                },
                None => Member::Absent,
            },
            blob: plain(&s.blob)?,
            blob_check: None,
            blob_recorded: None,
        };
        let blob_end = rel(&s.blob)?.map_or(0, |(_, end)| end);
        Parser::check_entry_blob(&mut e, input.as_bytes(), blob_end);
        Ok(e)
    };
    spans
        .iter()
        .enumerate()
        .map(|(index, s)| entry(index, s))
        .collect::<Result<Vec<_>, ()>>()
        .ok()
}

/// A message's `result.contents` array found by [`scan_message`]: its byte
/// range in the message and its entries (offsets relative to the range's start,
/// as [`super::scan_contents`] gives them on that range).
pub(super) type FoundContents<'a> = (Range<usize>, Vec<ScannedEntry<'a>>);

/// See [`super::scan_message`].
pub(super) fn scan_message(input: &[u8]) -> Result<Option<FoundContents<'_>>, CodecError> {
    let mut arena = DecodedReadResult::default();
    let mut p = Parser::new(input, Kernel::Scalar, &mut arena);
    let mut found = None;
    p.lx.ws();
    if p.lx.peek() == Some(b'{') {
        p.message_object(false, 1, &mut found)?;
    } else {
        p.skip(1)?;
    }
    let r = p.lx.end();
    p.lex(r)?;
    Ok(found)
}

/// The `contents` array at the start of `input` (`[`), scanned entry by entry
/// into `out`; returns the offset just past its `]` (the rest is not read).
/// `text` is `input` when it is known to be UTF-8; `known` the strings an
/// earlier scan of `input` validated ([`Lexer::with_known`]); `keys_checked`
/// when that scan also refused repeated keys ([`Lexer::keys_checked`]).
fn contents_array<'a>(
    input: &'a [u8],
    text: Option<&'a str>,
    known: Vec<crate::lex::KnownString>,
    keys_checked: bool,
    out: &mut Vec<ScannedEntry<'a>>,
) -> Result<usize, CodecError> {
    let mut arena = DecodedReadResult::default();
    let mut lx = contents_lexer(input, text, known);
    if keys_checked {
        lx = lx.keys_checked();
    }
    let mut p = Parser::with_lexer(lx, Kernel::Scalar, &mut arena);
    p.lx.ws();
    if p.lx.peek() != Some(b'[') {
        return Err(not_an_array(&p.lx));
    }
    lex::array(&mut p, ENTRY_DEPTH - 1, |p| {
        p.entry = Some(out.len());
        let e = p.scan_entry(out.len())?;
        out.push(e);
        p.entry = None;
        Ok(())
    })?;
    Ok(p.lx.pos)
}

/// A lexer error as the codec names it (same offset), in contents entry `entry`.
fn codec_error(input: &[u8], e: LexError, entry: Option<usize>) -> CodecError {
    let kind = match e.kind {
        LexErrorKind::End => CodecErrorKind::UnexpectedEnd,
        LexErrorKind::Unexpected(Expected::EndOfInput) => CodecErrorKind::TrailingCharacters,
        LexErrorKind::Unexpected(_) => CodecErrorKind::UnexpectedByte {
            byte: input.get(e.offset).copied().unwrap_or(0),
        },
        LexErrorKind::InvalidNumber => CodecErrorKind::InvalidNumber,
        LexErrorKind::NumberOutOfRange => CodecErrorKind::NumberOutOfRange,
        LexErrorKind::ControlCharacter => CodecErrorKind::ControlCharacterInString,
        LexErrorKind::InvalidUtf8 => CodecErrorKind::InvalidUtf8,
        LexErrorKind::InvalidEscape => CodecErrorKind::InvalidEscape,
        LexErrorKind::LoneSurrogate { .. } => CodecErrorKind::LoneSurrogate,
        LexErrorKind::TooDeep => CodecErrorKind::TooDeep,
        LexErrorKind::DuplicateKey { key } => CodecErrorKind::DuplicateKey { key },
    };
    CodecError {
        kind,
        offset: e.offset,
        entry,
    }
}

struct Parser<'a, 'o> {
    lx: Lexer<'a>,
    kernel: Kernel,
    out: &'o mut DecodedReadResult,
    entry: Option<usize>,
    scratch: Vec<u8>,
    scratch_map: Vec<usize>,
}

impl<'a> Host<'a> for Parser<'a, '_> {
    type Error = CodecError;
    fn lexer(&mut self) -> &mut Lexer<'a> {
        &mut self.lx
    }
    fn lex_error(&self, e: LexError) -> CodecError {
        codec_error(self.lx.input, e, self.entry)
    }
}

/// Unescaped bytes plus, for each, the input offset it came from.
struct MappedSink<'v> {
    bytes: &'v mut Vec<u8>,
    map: &'v mut Vec<usize>,
}
impl Sink for MappedSink<'_> {
    fn wants_positions(&self) -> bool {
        true
    }
    fn run(&mut self, s: &str, at: usize) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.map.extend(at..at + s.len());
    }
    fn ch(&mut self, c: char, at: usize) {
        let mut b = [0u8; 4];
        let enc = c.encode_utf8(&mut b);
        self.bytes.extend_from_slice(enc.as_bytes());
        self.map.extend(std::iter::repeat_n(at, enc.len()));
    }
}

#[derive(Clone, Copy)]
enum Field {
    JsonRpc,
    Id,
    Result,
    Contents,
    Uri,
    MimeType,
    Text,
    Blob,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Result,
    Entry,
}

impl<'a, 'o> Parser<'a, 'o> {
    fn new(input: &'a [u8], kernel: Kernel, out: &'o mut DecodedReadResult) -> Self {
        Self::with_lexer(Lexer::new(input), kernel, out)
    }

    /// A parser over `lx`'s input, from its position (a lexer built once:
    /// one is a few hundred bytes, moved rather than replaced).
    fn with_lexer(lx: Lexer<'a>, kernel: Kernel, out: &'o mut DecodedReadResult) -> Self {
        Parser {
            lx,
            kernel,
            out,
            entry: None,
            scratch: Vec::new(),
            scratch_map: Vec::new(),
        }
    }
}

impl<'a> Parser<'a, '_> {
    fn err(&self, kind: CodecErrorKind, offset: usize) -> CodecError {
        CodecError {
            kind,
            offset,
            entry: self.entry,
        }
    }

    /// A lexer result with its error named as the codec names it.
    fn lex<T>(&self, r: Result<T, LexError>) -> Result<T, CodecError> {
        r.map_err(|e| self.lex_error(e))
    }

    fn peek(&self) -> Option<u8> {
        self.lx.peek()
    }

    /// Any JSON value, validated and skipped; containers get `depth`.
    fn skip(&mut self, depth: usize) -> Result<(), CodecError> {
        let r = self.lx.value(depth);
        self.lex(r)
    }

    fn wrong_type(&self, field: &'static str, expected: &'static str) -> CodecError {
        match self.peek() {
            None => self.err(CodecErrorKind::UnexpectedEnd, self.lx.pos),
            Some(_) => self.err(CodecErrorKind::WrongType { field, expected }, self.lx.pos),
        }
    }

    fn response(&mut self) -> Result<(), CodecError> {
        self.lx.ws();
        if self.peek() != Some(b'{') {
            return Err(self.wrong_type("response", "an object"));
        }
        self.object(Level::Top, 1)?;
        let r = self.lx.end();
        self.lex(r)
    }

    /// Parses a schema object at the position (`{`), dispatching known keys
    /// by `level`; every other member is validated and skipped.
    fn object(&mut self, level: Level, depth: usize) -> Result<(), CodecError> {
        // Schema state.
        let (mut seen_a, mut seen_b, mut seen_c) = (false, false, false);
        let mut uri: Option<Range<usize>> = None;
        let mut mime: Option<Range<usize>> = None;
        let mut body: Option<Body> = None;
        lex::object(self, depth, |p, key, key_at| {
            let field = match (level, key) {
                (Level::Top, b"jsonrpc") => Field::JsonRpc,
                (Level::Top, b"id") => Field::Id,
                (Level::Top, b"result") => Field::Result,
                (Level::Result, b"contents") => Field::Contents,
                (Level::Entry, b"uri") => Field::Uri,
                (Level::Entry, b"mimeType") => Field::MimeType,
                (Level::Entry, b"text") => Field::Text,
                (Level::Entry, b"blob") => Field::Blob,
                _ => Field::Other,
            };
            match field {
                Field::JsonRpc => {
                    seen_a = true;
                    if p.peek() != Some(b'"') {
                        return Err(p.wrong_type("jsonrpc", "a string"));
                    }
                    let at = p.lx.pos;
                    let mut v = std::mem::take(&mut p.scratch);
                    v.clear();
                    let r = p.lx.string_into(&mut VecSink(&mut v));
                    let ok = v == b"2.0";
                    p.scratch = v;
                    p.lex(r)?;
                    if !ok {
                        return Err(p.err(CodecErrorKind::WrongJsonRpcVersion, at));
                    }
                }
                Field::Id => {
                    seen_b = true;
                    let r = match p.peek() {
                        Some(b'"') => p.lx.string().map(drop),
                        Some(b'-' | b'0'..=b'9') => p.lx.number(),
                        _ => return Err(p.wrong_type("id", "a string or a number")),
                    };
                    p.lex(r)?;
                }
                Field::Result => {
                    seen_c = true;
                    if p.peek() != Some(b'{') {
                        return Err(p.wrong_type("result", "an object"));
                    }
                    p.object(Level::Result, depth + 1)?;
                }
                Field::Contents => {
                    seen_a = true;
                    if p.peek() != Some(b'[') {
                        return Err(p.wrong_type("contents", "an array"));
                    }
                    p.contents(depth + 1)?;
                }
                Field::Uri | Field::MimeType | Field::Text | Field::Blob => {
                    let (name, is_body) = match field {
                        Field::Uri => ("uri", false),
                        Field::MimeType => ("mimeType", false),
                        Field::Text => ("text", true),
                        _ => ("blob", true),
                    };
                    if is_body && body.is_some() {
                        return Err(p.err(CodecErrorKind::BothTextAndBlob, key_at));
                    }
                    if p.peek() != Some(b'"') {
                        return Err(p.wrong_type(name, "a string"));
                    }
                    match field {
                        Field::Uri => uri = Some(p.arena_string()?),
                        Field::MimeType => mime = Some(p.arena_string()?),
                        Field::Text => body = Some(Body::Text(p.arena_string()?)),
                        _ => body = Some(Body::Blob(p.blob()?)),
                    }
                }
                Field::Other => p.skip(depth + 1)?,
            }
            Ok(())
        })?;
        let close = self.lx.pos - 1;
        let missing = |field| CodecErrorKind::MissingField { field };
        match level {
            Level::Top => {
                for (seen, field) in [(seen_a, "jsonrpc"), (seen_b, "id"), (seen_c, "result")] {
                    if !seen {
                        return Err(self.err(missing(field), close));
                    }
                }
            }
            Level::Result => {
                if !seen_a {
                    return Err(self.err(missing("contents"), close));
                }
            }
            Level::Entry => {
                let Some(uri) = uri else {
                    return Err(self.err(missing("uri"), close));
                };
                let Some(body) = body else {
                    return Err(self.err(CodecErrorKind::NeitherTextNorBlob, close));
                };
                self.out.entries.push(EntrySpan {
                    uri,
                    mime_type: mime,
                    body,
                });
            }
        }
        Ok(())
    }

    /// An object of [`scan_message`] at the position (`{`): the message root
    /// (`in_result` false) or its `result` (true). A `result` object member of
    /// the root is entered; a `contents` array member of `result` is scanned by
    /// [`contents_array`] into `found`; every other member is validated and
    /// skipped, with the same key and depth rules.
    fn message_object(
        &mut self,
        in_result: bool,
        depth: usize,
        found: &mut Option<FoundContents<'a>>,
    ) -> Result<(), CodecError> {
        lex::object(self, depth, |p, k, _| {
            if !in_result && k == b"result" && p.peek() == Some(b'{') {
                p.message_object(true, depth + 1, found)
            } else if in_result && k == b"contents" && p.peek() == Some(b'[') {
                let start = p.lx.pos;
                let input: &'a [u8] = p.lx.input;
                let mut entries = Vec::new();
                let end = contents_array(&input[start..], None, Vec::new(), false, &mut entries)
                    .map_err(|mut e| {
                        e.offset += start;
                        e
                    })?;
                p.lx.pos = start + end;
                *found = Some((start..p.lx.pos, entries));
                Ok(())
            } else {
                p.skip(depth + 1)
            }
        })
    }

    /// One `contents` entry for [`scan_contents`]: members recorded, rule
    /// violations left to [`ScannedEntry::issues`], JSON errors returned.
    fn scan_entry(&mut self, index: usize) -> Result<ScannedEntry<'a>, CodecError> {
        let offset = self.lx.pos;
        let mut e = ScannedEntry {
            index,
            offset,
            found: value_type(&self.lx),
            uri: Member::Absent,
            mime_type: Member::Absent,
            text: Member::Absent,
            blob: Member::Absent,
            blob_check: None,
            blob_recorded: None,
        };
        // Just past the closing `"` of `blob` when it is a string.
        let mut blob_end = 0;
        if self.peek() != Some(b'{') {
            self.skip(ENTRY_DEPTH)?;
            return Ok(e);
        }
        lex::object(self, ENTRY_DEPTH, |p, key, _| {
            let slot = match key {
                b"uri" => Some(&mut e.uri),
                b"mimeType" => Some(&mut e.mime_type),
                b"text" => Some(&mut e.text),
                b"blob" => Some(&mut e.blob),
                _ => None,
            };
            match slot {
                // The text is validated, not unescaped ([`Member::Raw`]).
                Some(slot) if key == b"text" => *slot = p.scan_raw_member()?,
                Some(slot) => {
                    *slot = p.scan_member()?;
                    if key == b"blob" {
                        blob_end = p.lx.pos;
                    }
                }
                None => p.skip(ENTRY_DEPTH + 1)?,
            }
            Ok(())
        })?;
        Self::check_entry_blob(&mut e, self.lx.input, blob_end);
        Ok(e)
    }

    /// Sets `e`'s [`ScannedEntry::blob_check`] (and `blob_recorded`) when its
    /// `blob` is a string, whose token in `input` ends at `blob_end` (just
    /// past its closing `"`).
    fn check_entry_blob(e: &mut ScannedEntry<'a>, input: &'a [u8], blob_end: usize) {
        if let Member::Str { offset, value } = &e.blob {
            let check = Self::check_blob(*offset, value, || {
                // The token was validated as UTF-8 by the scan; read as
                // text only on this cold path (never a 160 MB blob's pass).
                input
                    .get(offset + 1..blob_end.saturating_sub(1))
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .unwrap_or("")
            });
            if let Err((_, _, recorded)) = &check {
                e.blob_recorded = Some(*recorded);
            }
            e.blob_check = Some(check.map_err(|(err, at, _)| (err, at)));
        }
    }

    /// A member value: a string (borrowed when it has no escape) or any other
    /// value, validated and skipped.
    fn scan_member(&mut self) -> Result<Member<'a>, CodecError> {
        let offset = self.lx.pos;
        if self.peek() != Some(b'"') {
            let found = self
                .peek()
                .and_then(JsonType::of_first_byte)
                .unwrap_or(JsonType::Null);
            self.skip(ENTRY_DEPTH + 1)?;
            return Ok(Member::Other { offset, found });
        }
        let r = self.lx.string_cow();
        let value = self.lex(r)?;
        Ok(Member::Str { offset, value })
    }

    /// A member value: a string validated and left undecoded
    /// ([`Member::Raw`]) or any other value, validated and skipped.
    fn scan_raw_member(&mut self) -> Result<Member<'a>, CodecError> {
        let offset = self.lx.pos;
        if self.peek() != Some(b'"') {
            return self.scan_member();
        }
        let r = self.lx.string();
        self.lex(r)?;
        let input: &'a [u8] = self.lx.input;
        Ok(Member::Raw {
            offset,
            token: &input[offset..self.lx.pos],
        })
    }

    /// In-place strict base64 check of a scanned `blob` whose `"` is at
    /// `offset`: `value` unescaped, `raw` as recorded (between its quotes;
    /// asked for only when the blob is refused, and given back then).
    fn check_blob(
        offset: usize,
        value: &str,
        raw: impl FnOnce() -> &'a str,
    ) -> Result<usize, (super::base64::Base64Error, usize, &'a str)> {
        use super::base64::{Base64Error, Path, validate};
        match validate(Path::Simd, value.as_bytes()) {
            Ok(()) => {
                let pad = crate::b64::count_padding(value.as_bytes()).min(2) as u8;
                Ok(crate::b64::decoded_len(value.len() as u64, pad).unwrap_or(0) as usize)
            }
            Err(e) => {
                let rel = match e {
                    Base64Error::InvalidLength { len } => len,
                    ref e => e.offset(),
                };
                // Inside the raw string (escapes count as their backslash).
                let raw = raw();
                let at = if raw.len() == value.len() {
                    offset + 1 + rel
                } else {
                    offset + 1 + crate::json::raw_offset_of(raw, rel)
                };
                Err((e, at, raw))
            }
        }
    }

    /// The `contents` array at the position (`[`, at nesting `depth`): each
    /// entry parsed as an [`Level::Entry`] object into the arena.
    fn contents(&mut self, depth: usize) -> Result<(), CodecError> {
        lex::array(self, depth, |p| {
            p.entry = Some(p.out.entries.len());
            if p.peek() != Some(b'{') {
                return Err(p.wrong_type("contents[]", "an object"));
            }
            p.object(Level::Entry, depth + 1)?;
            p.entry = None;
            Ok(())
        })
    }

    /// A string into the strings arena; returns its range there.
    fn arena_string(&mut self) -> Result<Range<usize>, CodecError> {
        let mut s = std::mem::take(&mut self.out.strings);
        let start = s.len();
        let r = self.lx.string_into(&mut StringSink(&mut s));
        let end = s.len();
        self.out.strings = s;
        self.lex(r).map(|()| start..end)
    }

    /// A `blob` string at the position (`"`): decoded into the blob arena.
    fn blob(&mut self) -> Result<Range<usize>, CodecError> {
        let s = self.lx.pos + 1;
        let input: &'a [u8] = self.lx.input;
        let rest = &input[s..];
        let start = self.out.blobs.len();
        self.out.reserve_blobs_for(rest.len());
        // Fast path: whole groups straight from the input.
        let n = decode_prefix(self.kernel, rest, &mut self.out.blobs);
        let mut j = n;
        while j < rest.len() && (DECODE_TABLE[rest[j] as usize] != 0xff || rest[j] == b'=') {
            j += 1;
        }
        if rest.get(j) == Some(&b'"') {
            let tail = &rest[n..j];
            if first_error(tail).is_some() {
                self.out.blobs.truncate(start);
                let e = first_error(&rest[..j])
                    .unwrap_or(super::base64::Base64Error::InvalidLength { len: j });
                let at = match e {
                    super::base64::Base64Error::InvalidLength { .. } => s + j,
                    ref e => s + e.offset(),
                };
                return Err(self.err(CodecErrorKind::Base64(e), at));
            }
            decode_tail(tail, &mut self.out.blobs);
            self.lx.pos = s + j + 1;
            return Ok(start..self.out.blobs.len());
        }
        // Slow path (escapes or bytes outside the alphabet): JSON string rules
        // first, then strict base64 on the unescaped text.
        self.out.blobs.truncate(start);
        let mut bytes = std::mem::take(&mut self.scratch);
        let mut map = std::mem::take(&mut self.scratch_map);
        bytes.clear();
        map.clear();
        let r = self.lx.string_into(&mut MappedSink {
            bytes: &mut bytes,
            map: &mut map,
        });
        let r = self.lex(r);
        let close = self.lx.pos.saturating_sub(1);
        let res = r.and_then(|()| match first_error(&bytes) {
            Some(e) => {
                let at = match e {
                    super::base64::Base64Error::InvalidLength { .. } => close,
                    ref e => map.get(e.offset()).copied().unwrap_or(close),
                };
                Err(self.err(CodecErrorKind::Base64(e), at))
            }
            None => {
                let n = decode_prefix(Kernel::Scalar, &bytes, &mut self.out.blobs);
                decode_tail(&bytes[n..], &mut self.out.blobs);
                Ok(start..self.out.blobs.len())
            }
        });
        self.scratch = bytes;
        self.scratch_map = map;
        res
    }
}

/// Decodes the last group of a valid base64 string (0 or 4 symbols, with
/// `=` padding); the caller checked it with `first_error`.
fn decode_tail(tail: &[u8], out: &mut Vec<u8>) {
    if tail.len() != 4 {
        return;
    }
    let v = |i: usize| u32::from(DECODE_TABLE[tail[i] as usize] & 0x3f);
    let w = (v(0) << 18) | (v(1) << 12) | (v(2) << 6) | v(3);
    let [_, a, b, c] = w.to_be_bytes();
    match (tail[2], tail[3]) {
        (b'=', _) => out.push(a),
        (_, b'=') => out.extend_from_slice(&[a, b]),
        _ => out.extend_from_slice(&[a, b, c]),
    }
}
