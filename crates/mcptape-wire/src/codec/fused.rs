//! The fused path: one hand-written pass that validates a `resources/read`
//! response (strict RFC 8259 JSON plus the schema rules in the module docs of
//! [`super`]) and base64-decodes each `blob` straight from the input into the
//! blob arena. The base64 alphabet has no `"` or `\`, so the kernel runs over
//! the rest of the input and stops in front of the closing quote by itself.
//!
//! This is also the reference scan: every path's error comes from here.

use super::base64::{DECODE_TABLE, first_error};
use super::kernel::{Kernel, decode_prefix};
use super::{
    Body, CodecError, CodecErrorKind, DecodedReadResult, EntrySpan, JsonType, MAX_NESTING_DEPTH,
    Member, ScannedEntry,
};
use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

/// Byte classes for string scanning: 1 = stops a plain run (`"`, `\`, < 0x20).
const STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Objects with more keys than this switch duplicate detection from a linear
/// scan to a hash set (keeps hostile inputs with many keys linear).
const LINEAR_KEY_SCAN: usize = 16;

/// Parses `input`; on success `out` holds the entries, on error `out` is empty.
pub(super) fn parse(
    input: &[u8],
    kernel: Kernel,
    out: &mut DecodedReadResult,
) -> Result<(), CodecError> {
    out.clear();
    let mut p = Parser {
        input,
        pos: 0,
        kernel,
        out,
        entry: None,
        keys: Vec::new(),
        key_spans: Vec::new(),
        scratch: Vec::new(),
        scratch_map: Vec::new(),
        sbuf: Vec::new(),
    };
    let r = p.response();
    if r.is_err() {
        p.out.clear();
    }
    r
}

/// Validates any strict JSON value (the generic grammar, no schema): the one
/// scanner behind [`crate::json::check`]. Errors as the decoder reports them.
pub(crate) fn check_json(input: &[u8]) -> Result<(), CodecError> {
    let mut arena = DecodedReadResult::default();
    let mut p = Parser {
        input,
        pos: 0,
        kernel: Kernel::Scalar,
        out: &mut arena,
        entry: None,
        keys: Vec::new(),
        key_spans: Vec::new(),
        scratch: Vec::new(),
        scratch_map: Vec::new(),
        sbuf: Vec::new(),
    };
    p.ws();
    p.value(1)?;
    p.ws();
    if p.pos != input.len() {
        return Err(p.err(CodecErrorKind::TrailingCharacters, p.pos));
    }
    Ok(())
}

/// Nesting depth of a `contents` entry in a single response
/// (response 1, `result` 2, `contents` 3, entry 4).
const ENTRY_DEPTH: usize = 4;

/// See [`super::scan_contents`]; on error `out` holds the entries before it.
pub(super) fn scan_contents<'a>(
    input: &'a [u8],
    out: &mut Vec<ScannedEntry<'a>>,
) -> Result<(), CodecError> {
    let end = contents_array(input, out)?;
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

/// A message's `result.contents` array found by [`scan_message`]: its byte
/// range in the message and its entries (offsets relative to the range's start,
/// as [`super::scan_contents`] gives them on that range).
pub(super) type FoundContents<'a> = (Range<usize>, Vec<ScannedEntry<'a>>);

/// See [`super::scan_message`].
pub(super) fn scan_message(input: &[u8]) -> Result<Option<FoundContents<'_>>, CodecError> {
    let mut arena = DecodedReadResult::default();
    let mut p = Parser {
        input,
        pos: 0,
        kernel: Kernel::Scalar,
        out: &mut arena,
        entry: None,
        keys: Vec::new(),
        key_spans: Vec::new(),
        scratch: Vec::new(),
        scratch_map: Vec::new(),
        sbuf: Vec::new(),
    };
    let mut found = None;
    p.ws();
    if p.peek() == Some(b'{') {
        p.message_object(false, 1, &mut found)?;
    } else {
        p.value(1)?;
    }
    p.ws();
    if p.pos != input.len() {
        return Err(p.err(CodecErrorKind::TrailingCharacters, p.pos));
    }
    Ok(found)
}

/// The `contents` array at the start of `input` (`[`), scanned entry by entry
/// into `out`; returns the offset just past its `]` (the rest is not read).
fn contents_array<'a>(
    input: &'a [u8],
    out: &mut Vec<ScannedEntry<'a>>,
) -> Result<usize, CodecError> {
    let mut arena = DecodedReadResult::default();
    let mut p = Parser {
        input,
        pos: 0,
        kernel: Kernel::Scalar,
        out: &mut arena,
        entry: None,
        keys: Vec::new(),
        key_spans: Vec::new(),
        scratch: Vec::new(),
        scratch_map: Vec::new(),
        sbuf: Vec::new(),
    };
    p.ws();
    if p.peek() != Some(b'[') {
        return Err(p.wrong_type("contents", "an array"));
    }
    p.pos += 1;
    p.ws();
    if p.peek() == Some(b']') {
        p.pos += 1;
    } else {
        loop {
            p.ws();
            p.entry = Some(out.len());
            let e = p.scan_entry(out.len())?;
            out.push(e);
            p.entry = None;
            p.ws();
            match p.peek() {
                Some(b',') => p.pos += 1,
                Some(b']') => {
                    p.pos += 1;
                    break;
                }
                _ => return Err(p.unexpected()),
            }
        }
    }
    Ok(p.pos)
}

struct Parser<'a, 'o> {
    input: &'a [u8],
    pos: usize,
    kernel: Kernel,
    out: &'o mut DecodedReadResult,
    entry: Option<usize>,
    /// Unescaped keys of the objects being parsed (a stack).
    keys: Vec<u8>,
    key_spans: Vec<Range<usize>>,
    scratch: Vec<u8>,
    scratch_map: Vec<usize>,
    /// Unescaped string bytes on the fast path.
    sbuf: Vec<u8>,
}

/// Where string bytes go.
trait Sink {
    /// A plain (already UTF-8 checked) run starting at input offset `at`.
    fn run(&mut self, s: &str, at: usize);
    /// One unescaped character from the escape at input offset `at`.
    fn ch(&mut self, c: char, at: usize);
    /// `true` when the sink needs per-byte input offsets (slow path only).
    fn wants_positions(&self) -> bool {
        false
    }
    /// `false` when the sink drops the bytes (validation only: no copy).
    fn wants_bytes(&self) -> bool {
        true
    }
}

struct NullSink;
impl Sink for NullSink {
    fn run(&mut self, _: &str, _: usize) {}
    fn ch(&mut self, _: char, _: usize) {}
    fn wants_bytes(&self) -> bool {
        false
    }
}

struct VecSink<'v>(&'v mut Vec<u8>);
impl Sink for VecSink<'_> {
    fn run(&mut self, s: &str, _: usize) {
        self.0.extend_from_slice(s.as_bytes());
    }
    fn ch(&mut self, c: char, _: usize) {
        let mut b = [0u8; 4];
        self.0.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }
}

struct StringSink<'v>(&'v mut String);
impl Sink for StringSink<'_> {
    fn run(&mut self, s: &str, _: usize) {
        self.0.push_str(s);
    }
    fn ch(&mut self, c: char, _: usize) {
        self.0.push(c);
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
    Other,
}

impl<'a> Parser<'a, '_> {
    fn err(&self, kind: CodecErrorKind, offset: usize) -> CodecError {
        CodecError {
            kind,
            offset,
            entry: self.entry,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Error for "found something else than expected" at the current position.
    fn unexpected(&self) -> CodecError {
        match self.peek() {
            None => self.err(CodecErrorKind::UnexpectedEnd, self.pos),
            Some(byte) => self.err(CodecErrorKind::UnexpectedByte { byte }, self.pos),
        }
    }

    fn wrong_type(&self, field: &'static str, expected: &'static str) -> CodecError {
        match self.peek() {
            None => self.err(CodecErrorKind::UnexpectedEnd, self.pos),
            Some(_) => self.err(CodecErrorKind::WrongType { field, expected }, self.pos),
        }
    }

    fn response(&mut self) -> Result<(), CodecError> {
        self.ws();
        if self.peek() != Some(b'{') {
            return Err(self.wrong_type("response", "an object"));
        }
        self.object(Level::Top, 1)?;
        self.ws();
        if self.pos != self.input.len() {
            return Err(self.err(CodecErrorKind::TrailingCharacters, self.pos));
        }
        Ok(())
    }

    /// Parses an object at `self.pos` (`{`), dispatching known keys by `level`.
    fn object(&mut self, level: Level, depth: usize) -> Result<(), CodecError> {
        if depth > MAX_NESTING_DEPTH {
            return Err(self.err(CodecErrorKind::TooDeep, self.pos));
        }
        self.pos += 1;
        let keys_base = self.keys.len();
        let spans_base = self.key_spans.len();
        let mut big: Option<HashSet<Vec<u8>>> = None;
        // Schema state.
        let (mut seen_a, mut seen_b, mut seen_c) = (false, false, false);
        let mut uri: Option<Range<usize>> = None;
        let mut mime: Option<Range<usize>> = None;
        let mut body: Option<Body> = None;

        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                let (key_at, key) = self.object_key(spans_base, &mut big)?;
                // Value.
                let field = match (level, &self.keys[key]) {
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
                        if self.peek() != Some(b'"') {
                            return Err(self.wrong_type("jsonrpc", "a string"));
                        }
                        let at = self.pos;
                        let mut v = std::mem::take(&mut self.scratch);
                        v.clear();
                        let r = self.string(&mut VecSink(&mut v));
                        let ok = v == b"2.0";
                        self.scratch = v;
                        r?;
                        if !ok {
                            return Err(self.err(CodecErrorKind::WrongJsonRpcVersion, at));
                        }
                    }
                    Field::Id => {
                        seen_b = true;
                        match self.peek() {
                            Some(b'"') => self.string(&mut NullSink)?,
                            Some(b'-' | b'0'..=b'9') => self.number()?,
                            _ => return Err(self.wrong_type("id", "a string or a number")),
                        }
                    }
                    Field::Result => {
                        seen_c = true;
                        if self.peek() != Some(b'{') {
                            return Err(self.wrong_type("result", "an object"));
                        }
                        self.object(Level::Result, depth + 1)?;
                    }
                    Field::Contents => {
                        seen_a = true;
                        if self.peek() != Some(b'[') {
                            return Err(self.wrong_type("contents", "an array"));
                        }
                        self.contents(depth + 1)?;
                    }
                    Field::Uri => {
                        if self.peek() != Some(b'"') {
                            return Err(self.wrong_type("uri", "a string"));
                        }
                        uri = Some(self.arena_string()?);
                    }
                    Field::MimeType => {
                        if self.peek() != Some(b'"') {
                            return Err(self.wrong_type("mimeType", "a string"));
                        }
                        mime = Some(self.arena_string()?);
                    }
                    Field::Text => {
                        if body.is_some() {
                            return Err(self.err(CodecErrorKind::BothTextAndBlob, key_at));
                        }
                        if self.peek() != Some(b'"') {
                            return Err(self.wrong_type("text", "a string"));
                        }
                        body = Some(Body::Text(self.arena_string()?));
                    }
                    Field::Blob => {
                        if body.is_some() {
                            return Err(self.err(CodecErrorKind::BothTextAndBlob, key_at));
                        }
                        if self.peek() != Some(b'"') {
                            return Err(self.wrong_type("blob", "a string"));
                        }
                        body = Some(Body::Blob(self.blob()?));
                    }
                    Field::Other => self.value(depth + 1)?,
                }
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.unexpected()),
                }
            }
        }
        self.keys.truncate(keys_base);
        self.key_spans.truncate(spans_base);
        let close = self.pos - 1;
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
            Level::Other => {}
        }
        Ok(())
    }

    /// One member key at `self.pos` (its `"`), unescaped onto the key stack,
    /// checked against the other keys of the object whose spans start at
    /// `spans_base` (a linear scan, then a hash set past [`LINEAR_KEY_SCAN`]
    /// keys), followed by `:`. Returns the key's offset and its range in
    /// `self.keys`. Errors: [`CodecErrorKind::DuplicateKey`] at the second
    /// key's `"`, or the string/syntax error.
    fn object_key(
        &mut self,
        spans_base: usize,
        big: &mut Option<HashSet<Vec<u8>>>,
    ) -> Result<(usize, Range<usize>), CodecError> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let key_at = self.pos;
        let kstart = self.keys.len();
        let mut keys = std::mem::take(&mut self.keys);
        let r = self.string(&mut VecSink(&mut keys));
        self.keys = keys;
        r?;
        let key = kstart..self.keys.len();
        let n_keys = self.key_spans.len() - spans_base;
        let dup = if let Some(set) = big {
            !set.insert(self.keys[key.clone()].to_vec())
        } else {
            let k = &self.keys[key.clone()];
            let d = self.key_spans[spans_base..]
                .iter()
                .any(|s| &self.keys[s.clone()] == k);
            if !d && n_keys + 1 > LINEAR_KEY_SCAN {
                let mut set: HashSet<Vec<u8>> = self.key_spans[spans_base..]
                    .iter()
                    .map(|s| self.keys[s.clone()].to_vec())
                    .collect();
                set.insert(k.to_vec());
                *big = Some(set);
            }
            d
        };
        if dup {
            let key = String::from_utf8_lossy(&self.keys[key]).into_owned();
            return Err(self.err(CodecErrorKind::DuplicateKey { key }, key_at));
        }
        self.key_spans.push(key.clone());
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected());
        }
        self.pos += 1;
        self.ws();
        Ok((key_at, key))
    }

    /// An object of [`scan_message`] at `self.pos` (`{`): the message root
    /// (`in_result` false) or its `result` (true). A `result` object member of
    /// the root is entered; a `contents` array member of `result` is scanned by
    /// [`contents_array`] into `found`; every other member is validated and
    /// skipped ([`Self::value`]), with the same key and depth rules.
    fn message_object(
        &mut self,
        in_result: bool,
        depth: usize,
        found: &mut Option<FoundContents<'a>>,
    ) -> Result<(), CodecError> {
        if depth > MAX_NESTING_DEPTH {
            return Err(self.err(CodecErrorKind::TooDeep, self.pos));
        }
        self.pos += 1;
        let keys_base = self.keys.len();
        let spans_base = self.key_spans.len();
        let mut big: Option<HashSet<Vec<u8>>> = None;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            let (_, key) = self.object_key(spans_base, &mut big)?;
            let k = &self.keys[key];
            if !in_result && k == b"result" && self.peek() == Some(b'{') {
                self.message_object(true, depth + 1, found)?;
            } else if in_result && k == b"contents" && self.peek() == Some(b'[') {
                let start = self.pos;
                let input: &'a [u8] = self.input;
                let mut entries = Vec::new();
                let end = contents_array(&input[start..], &mut entries).map_err(|mut e| {
                    e.offset += start;
                    e
                })?;
                self.pos = start + end;
                *found = Some((start..self.pos, entries));
            } else {
                self.value(depth + 1)?;
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.unexpected()),
            }
        }
        self.keys.truncate(keys_base);
        self.key_spans.truncate(spans_base);
        Ok(())
    }

    /// One `contents` entry for [`scan_contents`]: members recorded, rule
    /// violations left to [`ScannedEntry::issues`], JSON errors returned.
    fn scan_entry(&mut self, index: usize) -> Result<ScannedEntry<'a>, CodecError> {
        let offset = self.pos;
        let mut e = ScannedEntry {
            index,
            offset,
            found: self
                .peek()
                .and_then(JsonType::of_first_byte)
                .unwrap_or(JsonType::Null),
            uri: Member::Absent,
            mime_type: Member::Absent,
            text: Member::Absent,
            blob: Member::Absent,
            blob_check: None,
        };
        if self.peek() != Some(b'{') {
            self.value(ENTRY_DEPTH)?;
            return Ok(e);
        }
        if ENTRY_DEPTH > MAX_NESTING_DEPTH {
            return Err(self.err(CodecErrorKind::TooDeep, self.pos));
        }
        self.pos += 1;
        let keys_base = self.keys.len();
        let spans_base = self.key_spans.len();
        let mut big: Option<HashSet<Vec<u8>>> = None;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(e);
        }
        loop {
            self.ws();
            let (_, key) = self.object_key(spans_base, &mut big)?;
            let slot = match &self.keys[key] {
                b"uri" => Some(&mut e.uri),
                b"mimeType" => Some(&mut e.mime_type),
                b"text" => Some(&mut e.text),
                b"blob" => Some(&mut e.blob),
                _ => None,
            };
            match slot {
                Some(slot) => *slot = self.scan_member()?,
                None => self.value(ENTRY_DEPTH + 1)?,
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.unexpected()),
            }
        }
        self.keys.truncate(keys_base);
        self.key_spans.truncate(spans_base);
        if let Member::Str { offset, value } = &e.blob {
            e.blob_check = Some(self.check_blob(*offset, value));
        }
        Ok(e)
    }

    /// A member value: a string (borrowed when it has no escape) or any other
    /// value, validated and skipped.
    fn scan_member(&mut self) -> Result<Member<'a>, CodecError> {
        let offset = self.pos;
        if self.peek() != Some(b'"') {
            let found = self
                .peek()
                .and_then(JsonType::of_first_byte)
                .unwrap_or(JsonType::Null);
            self.value(ENTRY_DEPTH + 1)?;
            return Ok(Member::Other { offset, found });
        }
        let start = offset + 1;
        let input: &'a [u8] = self.input;
        let rest = &input[start..];
        if let Some(n) = memchr::memchr2(b'"', b'\\', rest)
            && rest[n] == b'"'
            && !rest[..n].iter().fold(false, |acc, &c| acc | (c < 0x20))
            && let Ok(s) = std::str::from_utf8(&rest[..n])
        {
            self.pos = start + n + 1;
            return Ok(Member::Str {
                offset,
                value: Cow::Borrowed(s),
            });
        }
        let mut v = String::new();
        self.string(&mut StringSink(&mut v))?;
        Ok(Member::Str {
            offset,
            value: Cow::Owned(v),
        })
    }

    /// In-place strict base64 check of a scanned `blob` whose `"` is at `offset`.
    fn check_blob(
        &self,
        offset: usize,
        value: &str,
    ) -> Result<usize, (super::base64::Base64Error, usize)> {
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
                let raw_end = self.pos.saturating_sub(1);
                let raw = std::str::from_utf8(&self.input[offset + 1..raw_end]).unwrap_or("");
                let at = if raw.len() == value.len() {
                    offset + 1 + rel
                } else {
                    offset + 1 + crate::json::raw_offset_of(raw, rel)
                };
                Err((e, at))
            }
        }
    }

    fn contents(&mut self, depth: usize) -> Result<(), CodecError> {
        if depth > MAX_NESTING_DEPTH {
            return Err(self.err(CodecErrorKind::TooDeep, self.pos));
        }
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            self.entry = Some(self.out.entries.len());
            if self.peek() != Some(b'{') {
                return Err(self.wrong_type("contents[]", "an object"));
            }
            self.object(Level::Entry, depth + 1)?;
            self.entry = None;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// Any JSON value, validated and skipped; containers get `depth`.
    fn value(&mut self, depth: usize) -> Result<(), CodecError> {
        match self.peek() {
            Some(b'{') => self.object(Level::Other, depth),
            Some(b'[') => {
                if depth > MAX_NESTING_DEPTH {
                    return Err(self.err(CodecErrorKind::TooDeep, self.pos));
                }
                self.pos += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    self.value(depth + 1)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(());
                        }
                        _ => return Err(self.unexpected()),
                    }
                }
            }
            Some(b'"') => self.string(&mut NullSink),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            _ => Err(self.unexpected()),
        }
    }

    fn literal(&mut self, lit: &[u8]) -> Result<(), CodecError> {
        for &want in lit {
            if self.peek() != Some(want) {
                return Err(self.unexpected());
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// RFC 8259 §6 number; its value must be a finite `f64`.
    fn number(&mut self) -> Result<(), CodecError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while let Some(b'0'..=b'9') = p.peek() {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.err(CodecErrorKind::InvalidNumber, self.pos)),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.err(CodecErrorKind::InvalidNumber, self.pos));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.err(CodecErrorKind::InvalidNumber, self.pos));
            }
        }
        let text = &self.input[start..self.pos];
        let finite = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .is_some_and(f64::is_finite);
        if !finite {
            return Err(self.err(CodecErrorKind::NumberOutOfRange, start));
        }
        Ok(())
    }

    /// A string into the strings arena; returns its range there.
    fn arena_string(&mut self) -> Result<Range<usize>, CodecError> {
        let mut s = std::mem::take(&mut self.out.strings);
        let start = s.len();
        let r = self.string(&mut StringSink(&mut s));
        let end = s.len();
        self.out.strings = s;
        r.map(|()| start..end)
    }

    /// A JSON string at `self.pos` (`"`), validated (UTF-8, escapes, control
    /// characters, surrogate pairs) and unescaped into `sink`.
    ///
    /// Fast path: unescape into `sbuf` with no per-run UTF-8 check, then check
    /// the whole string once (runs end at ASCII `"`/`\` and escapes produce
    /// whole characters, so the concatenation is valid iff every run is). On
    /// anything irregular the slow path re-parses from the opening quote and
    /// reports the first error left to right.
    fn string(&mut self, sink: &mut impl Sink) -> Result<(), CodecError> {
        let start = self.pos;
        if !sink.wants_bytes() {
            if self.string_skip() {
                return Ok(());
            }
            self.pos = start;
            return self.string_slow(sink);
        }
        if !sink.wants_positions()
            && self.string_fast()
            && let Ok(s) = std::str::from_utf8(&self.sbuf)
        {
            sink.run(s, start + 1);
            return Ok(());
        }
        self.pos = start;
        self.string_slow(sink)
    }

    /// Validation-only fast path of [`Self::string`] (the value is dropped):
    /// each run between escapes is checked in place (no control byte, UTF-8)
    /// and nothing is copied; `false` means "take the slow path" for the
    /// exact error.
    fn string_skip(&mut self) -> bool {
        let mut p = self.pos + 1;
        loop {
            let rest = &self.input[p..];
            let Some(n) = memchr::memchr2(b'"', b'\\', rest) else {
                return false;
            };
            let run = &rest[..n];
            if run.iter().fold(false, |acc, &c| acc | (c < 0x20))
                || std::str::from_utf8(run).is_err()
            {
                return false;
            }
            p += n;
            if self.input[p] == b'"' {
                self.pos = p + 1;
                return true;
            }
            self.pos = p;
            if self.escape().is_err() {
                return false;
            }
            p = self.pos;
        }
    }

    /// See [`Self::string`]; `false` means "take the slow path".
    fn string_fast(&mut self) -> bool {
        self.sbuf.clear();
        let mut p = self.pos + 1;
        loop {
            let rest = &self.input[p..];
            let Some(n) = memchr::memchr2(b'"', b'\\', rest) else {
                return false;
            };
            let run = &rest[..n];
            if run.iter().any(|&b| b < 0x20) {
                return false;
            }
            self.sbuf.extend_from_slice(run);
            p += n;
            if self.input[p] == b'"' {
                self.pos = p + 1;
                return true;
            }
            self.pos = p;
            match self.escape() {
                Ok(c) => {
                    let mut b = [0u8; 4];
                    self.sbuf
                        .extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                    p = self.pos;
                }
                Err(_) => return false,
            }
        }
    }

    fn string_slow(&mut self, sink: &mut impl Sink) -> Result<(), CodecError> {
        self.pos += 1;
        loop {
            let run_start = self.pos;
            let rest = &self.input[run_start..];
            let n = rest
                .iter()
                .position(|&b| STRING_STOP[b as usize])
                .unwrap_or(rest.len());
            let run = &rest[..n];
            match std::str::from_utf8(run) {
                Ok(t) => sink.run(t, run_start),
                Err(e) => {
                    return Err(self.err(CodecErrorKind::InvalidUtf8, run_start + e.valid_up_to()));
                }
            }
            self.pos = run_start + n;
            match self.peek() {
                None => return Err(self.err(CodecErrorKind::UnexpectedEnd, self.pos)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let at = self.pos;
                    let c = self.escape()?;
                    sink.ch(c, at);
                }
                Some(_) => {
                    return Err(self.err(CodecErrorKind::ControlCharacterInString, self.pos));
                }
            }
        }
    }

    /// One escape at `self.pos` (`\`); errors point at the `\`.
    fn escape(&mut self) -> Result<char, CodecError> {
        let at = self.pos;
        let Some(&b) = self.input.get(at + 1) else {
            return Err(self.err(CodecErrorKind::UnexpectedEnd, self.input.len()));
        };
        self.pos = at + 2;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4(at)?;
                match hi {
                    0xD800..=0xDBFF => {
                        if self.input.get(self.pos) != Some(&b'\\')
                            || self.input.get(self.pos + 1) != Some(&b'u')
                        {
                            return Err(self.err(CodecErrorKind::LoneSurrogate, at));
                        }
                        self.pos += 2;
                        let lo = self.hex4(self.pos - 2)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err(self.err(CodecErrorKind::LoneSurrogate, at));
                        }
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        char::from_u32(cp)
                            .ok_or_else(|| self.err(CodecErrorKind::LoneSurrogate, at))?
                    }
                    0xDC00..=0xDFFF => return Err(self.err(CodecErrorKind::LoneSurrogate, at)),
                    _ => char::from_u32(hi)
                        .ok_or_else(|| self.err(CodecErrorKind::InvalidEscape, at))?,
                }
            }
            _ => return Err(self.err(CodecErrorKind::InvalidEscape, at)),
        };
        Ok(c)
    }

    /// Four hex digits at `self.pos`; errors point at the escape's `\` (`at`).
    fn hex4(&mut self, at: usize) -> Result<u32, CodecError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let Some(&b) = self.input.get(self.pos) else {
                return Err(self.err(CodecErrorKind::UnexpectedEnd, self.input.len()));
            };
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err(self.err(CodecErrorKind::InvalidEscape, at)),
            };
            v = v * 16 + u32::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// A `blob` string at `self.pos` (`"`): decoded into the blob arena.
    fn blob(&mut self) -> Result<Range<usize>, CodecError> {
        let s = self.pos + 1;
        let rest = &self.input[s..];
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
            self.pos = s + j + 1;
            return Ok(start..self.out.blobs.len());
        }
        // Slow path (escapes or bytes outside the alphabet): JSON string rules
        // first, then strict base64 on the unescaped text.
        self.out.blobs.truncate(start);
        let mut bytes = std::mem::take(&mut self.scratch);
        let mut map = std::mem::take(&mut self.scratch_map);
        bytes.clear();
        map.clear();
        let r = self.string(&mut MappedSink {
            bytes: &mut bytes,
            map: &mut map,
        });
        let close = self.pos.saturating_sub(1);
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
