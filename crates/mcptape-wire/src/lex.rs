//! The wire crate's one strict JSON lexer (RFC 8259), sans-IO: whitespace,
//! strings and their escapes, numbers, literals, the object and array
//! walkers with duplicate-key detection, and the nesting limit.
//!
//! Two scanners sit on it and keep their own error vocabularies:
//! * the fused `resources/read` decoder ([`crate::codec`]'s `fused` module,
//!   also behind [`crate::json::check`]) maps a [`LexError`] to a
//!   [`CodecError`](crate::codec::CodecError);
//! * the envelope scanner ([`crate::envelope::scan_envelope`]) maps it to a
//!   [`WireError`](crate::error::WireError) with a
//!   [`JsonErrorKind`](crate::error::JsonErrorKind).
//!
//! Both give a [`Host`] (their state plus a [`Lexer`]) to the walkers
//! [`object()`] and [`array()`], which call back once per member / element;
//! whatever a callback does not look at it skips with [`Lexer::value`].
//!
//! The grammar (each rule an error with the byte offset where it starts):
//! * no raw control byte in a string (RFC 8259 §7), only §7's escapes, no
//!   lone UTF-16 surrogate escape (§8.2), valid UTF-8 (§8.1);
//! * numbers by the §6 grammar, finite as `f64`;
//! * no object repeats a key, compared after unescaping (§4: names SHOULD be
//!   unique; the wire makes it a MUST);
//! * at most [`MAX_NESTING_DEPTH`] nested arrays/objects (§9 lets a parser
//!   set the limit).

use std::borrow::Cow;
use std::collections::HashSet;

use smallvec::SmallVec;

use crate::limits::MAX_NESTING_DEPTH;
use crate::stop;

/// What the lexer wanted where it found another byte
/// ([`LexErrorKind::Unexpected`]); each scanner names it its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    /// The start of a value (RFC 8259 §3), or a literal's next letter.
    Value,
    /// A member name: a string (§4).
    Key,
    /// The name separator `:` (§4).
    Colon,
    /// The value separator `,` or the end of an object `}` (§4).
    CommaOrBrace,
    /// The value separator `,` or the end of an array `]` (§5).
    CommaOrBracket,
    /// Nothing but whitespace after the value (§2).
    EndOfInput,
}

/// What the lexer rejected ([`LexError`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LexErrorKind {
    /// The input ended inside a value (offset: the input's length).
    End,
    /// A byte other than the one the grammar allows here (offset: that byte).
    Unexpected(Expected),
    /// A number off the RFC 8259 §6 grammar (offset: where a digit was needed).
    InvalidNumber,
    /// A number whose value is not a finite `f64`, e.g. `1e400` (offset: its
    /// first byte).
    NumberOutOfRange,
    /// A raw byte below 0x20 inside a string (§7; offset: that byte).
    ControlCharacter,
    /// A string byte that is not UTF-8 (§8.1; offset: the first bad byte).
    InvalidUtf8,
    /// A `\` escape that is not one of §7's, or a `\u` with a non-hex digit
    /// (offset: the escape's `\`).
    InvalidEscape,
    /// A `\uD800`–`\uDFFF` escape not forming a surrogate pair (§8.2; offset:
    /// the first escape's `\`).
    LoneSurrogate {
        /// The first escape's code unit.
        code_unit: u16,
    },
    /// A container nested deeper than [`MAX_NESTING_DEPTH`] (offset: its
    /// `{` / `[`).
    TooDeep,
    /// An object repeats a key (offset: the second key's `"`).
    DuplicateKey {
        /// The key, unescaped (lossy UTF-8).
        key: String,
    },
}

/// A lexer error: what, and the byte offset into the lexer's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LexError {
    /// What was rejected.
    pub(crate) kind: LexErrorKind,
    /// Byte offset into the input (see each [`LexErrorKind`]).
    pub(crate) offset: usize,
}

/// Objects with more keys than this check duplicates with a hash set; below
/// it, a linear scan (MCP objects have few keys; hostile ones stay linear).
const LINEAR_KEYS: usize = 16;

/// Keys the key stack ([`Lexer`]'s duplicate check) holds in place, without
/// a heap allocation per scan: 16 (a JSON-RPC message's objects, nested,
/// hold fewer; a deeper or wider walk spills to the heap).
const KEY_STACK_INLINE: usize = 16;

/// Bytes the unescape buffer of a string reserves up front (64 KiB, or the
/// rest of the input when shorter): a string with escapes is decoded
/// without growing the buffer by doubling from nothing on every scan.
const STRING_BUFFER_BYTES: usize = 64 << 10;

/// Where [`Lexer::string_into`] puts a string's unescaped bytes.
pub(crate) trait Sink {
    /// A plain run (UTF-8 checked) that starts at input offset `at`.
    fn run(&mut self, s: &str, at: usize);
    /// One character unescaped from the escape whose `\` is at input offset `at`.
    fn ch(&mut self, c: char, at: usize);
    /// `true` when the sink needs each byte's input offset (the per-byte
    /// decoding path; otherwise runs are batched).
    fn wants_positions(&self) -> bool {
        false
    }
}

/// A [`Sink`] appending the unescaped bytes to a `Vec<u8>`.
pub(crate) struct VecSink<'v>(pub(crate) &'v mut Vec<u8>);

impl Sink for VecSink<'_> {
    fn run(&mut self, s: &str, _: usize) {
        self.0.extend_from_slice(s.as_bytes());
    }
    fn ch(&mut self, c: char, _: usize) {
        let mut b = [0u8; 4];
        self.0.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }
}

/// A [`Sink`] appending the unescaped string to a `String`.
pub(crate) struct StringSink<'v>(pub(crate) &'v mut String);

impl Sink for StringSink<'_> {
    fn run(&mut self, s: &str, _: usize) {
        self.0.push_str(s);
    }
    fn ch(&mut self, c: char, _: usize) {
        self.0.push(c);
    }
}

/// A scanner's state around a [`Lexer`]: what the walkers [`object()`] and
/// [`array()`] call back into, and how a [`LexError`] becomes its error.
pub(crate) trait Host<'a> {
    /// The scanner's error type.
    type Error;
    /// The lexer (its input and position).
    fn lexer(&mut self) -> &mut Lexer<'a>;
    /// `e` in the scanner's vocabulary (same offset, context added).
    fn lex_error(&self, e: LexError) -> Self::Error;
}

/// The position in one input, plus the lexer's reusable buffers.
pub(crate) struct Lexer<'a> {
    /// The whole input (offsets are into it).
    pub(crate) input: &'a [u8],
    /// The next byte to read.
    pub(crate) pos: usize,
    /// The keys of the objects being walked, innermost last (a stack of
    /// ranges: an unescaped key's into `input`, an escaped one's, unescaped,
    /// into `key_bytes`).
    keys: SmallVec<[KeyAt; KEY_STACK_INLINE]>,
    /// The unescaped bytes of the escaped keys on `keys`.
    key_bytes: Vec<u8>,
    /// Unescaped string bytes on [`Self::string_into`]'s fast path.
    sbuf: Vec<u8>,
    /// The input as `&str` when it is known to be UTF-8 ([`Self::new_str`]):
    /// strings are then only checked for control bytes, and borrowed
    /// without a second UTF-8 check.
    text: Option<&'a str>,
    /// The strings of at least `long_min` bytes that [`Self::string`]
    /// validated, in input order, when recording ([`Self::record_long_into`]).
    long: Option<Vec<KnownString>>,
    /// See `long`.
    long_min: usize,
    /// Strings validated by an earlier scan of the same bytes, in input
    /// order ([`Self::with_known`]): [`Self::string`] and
    /// [`Self::string_cow`] take their end from here instead of searching.
    known: Vec<KnownString>,
    /// The first entry of `known` not yet behind the position.
    known_next: usize,
    /// The offset of the first `\n` or `\r` [`Self::ws`] skipped.
    pub(crate) line_break: Option<usize>,
    /// The input's objects were checked for repeated keys by an earlier
    /// scan of the same bytes ([`Self::keys_checked`]): [`Self::key`] keeps
    /// no key stack.
    keys_checked: bool,
    /// The input is strict JSON an earlier scan validated
    /// ([`Self::set_validated`]): strings are skipped to their closing quote
    /// unchecked and keys are not checked for duplicates.
    validated: bool,
}

/// Where a key on the duplicate check's stack lies ([`Lexer`]'s `keys`):
/// `start..end` of the input, or of the unescaped key bytes when `unescaped`.
#[derive(Debug, Clone, Copy)]
struct KeyAt {
    start: usize,
    end: usize,
    unescaped: bool,
}

/// String tokens at least this long (4 KiB, quotes included) that a scan
/// validated are kept as ranges ([`KnownString`]): a later scan of the same
/// bytes (the contents scan after the envelope scan) skips them instead of
/// searching a 160 MB blob again. Shorter ones cost less to search again
/// than to keep.
pub(crate) const LONG_STRING_BYTES: usize = 4096;

/// A string token a scan validated: its byte range (quotes included) and
/// whether it holds an escape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KnownString {
    /// Offset of the opening `"`.
    pub(crate) start: usize,
    /// Offset just past the closing `"`.
    pub(crate) end: usize,
    /// Whether the string holds a `\` escape.
    pub(crate) escaped: bool,
}

impl<'a> Host<'a> for Lexer<'a> {
    type Error = LexError;
    fn lexer(&mut self) -> &mut Lexer<'a> {
        self
    }
    fn lex_error(&self, e: LexError) -> LexError {
        e
    }
}

impl<'a> Lexer<'a> {
    /// A lexer at offset 0 of `input`.
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Lexer {
            input,
            pos: 0,
            keys: SmallVec::new(),
            key_bytes: Vec::new(),
            sbuf: Vec::new(),
            text: None,
            long: None,
            long_min: LONG_STRING_BYTES,
            known: Vec::new(),
            known_next: 0,
            line_break: None,
            keys_checked: false,
            validated: false,
        }
    }

    /// A lexer at offset 0 of `input`, known to be UTF-8: the scan does not
    /// check the UTF-8 of its strings again (RFC 8259 §8.1 holds already).
    pub(crate) fn new_str(input: &'a str) -> Self {
        Lexer {
            text: Some(input),
            ..Lexer::new(input.as_bytes())
        }
    }

    /// Records the string tokens of at least `min` bytes
    /// ([`LONG_STRING_BYTES`] in the envelope scan) that [`Self::string`]
    /// validates from now on ([`Self::take_long`]), into `buf` (emptied
    /// first; its capacity kept from an earlier scan).
    pub(crate) fn record_long_into(&mut self, min: usize, mut buf: Vec<KnownString>) {
        buf.clear();
        self.long = Some(buf);
        self.long_min = min;
    }

    /// The strings recorded since [`Self::record_long_into`], in input order.
    pub(crate) fn take_long(&mut self) -> Vec<KnownString> {
        self.long.take().unwrap_or_default()
    }

    /// This lexer, told the strings an earlier scan of the same input
    /// validated (`known`, in input order; offsets into this input). An
    /// entry whose first and last bytes are not `"` is ignored.
    pub(crate) fn with_known(mut self, known: Vec<KnownString>) -> Self {
        self.set_known(known);
        self
    }

    /// [`Self::with_known`] in place (the lexer not moved).
    pub(crate) fn set_known(&mut self, known: Vec<KnownString>) {
        self.known = known;
        self.known_next = 0;
    }

    /// This lexer, told that an earlier strict scan of the same input (the
    /// envelope scan of the message it lies in) found no object repeating a
    /// key: objects are walked without the duplicate check (no key stack, no
    /// comparisons). Only for bytes such a scan accepted: on other input a
    /// repeated key would pass.
    #[inline]
    pub(crate) fn keys_checked(mut self) -> Self {
        self.keys_checked = true;
        self
    }

    /// Tells this lexer that its whole input is strict JSON an earlier scan
    /// of the same bytes validated (a message's envelope scan): a string is
    /// then skipped with `memchr2` to its closing `"` (the byte after each
    /// `\\` passed over), nothing in it checked, and keys are not checked for
    /// duplicates. On input that is not valid the walk still ends without a
    /// panic, with an error or a wrong reading.
    pub(crate) fn set_validated(&mut self) {
        self.validated = true;
    }

    /// [`Self::string`] of validated input ([`Self::set_validated`]).
    fn skip_validated_string(&mut self) -> Result<bool, LexError> {
        let mut p = self.pos + 1;
        let mut escaped = false;
        loop {
            let rest = self.input.get(p..).unwrap_or_default();
            match memchr::memchr2(b'"', b'\\', rest) {
                None => return Err(self.err(LexErrorKind::End, self.input.len())),
                Some(n) if rest[n] == b'"' => {
                    self.pos = p + n + 1;
                    return Ok(escaped);
                }
                Some(n) => {
                    escaped = true;
                    p += n + 2;
                }
            }
        }
    }

    /// The known string starting at the position, if any (see
    /// [`Self::with_known`]).
    #[inline]
    pub(crate) fn known_here(&mut self) -> Option<KnownString> {
        if self.known_next >= self.known.len() {
            return None;
        }
        while self
            .known
            .get(self.known_next)
            .is_some_and(|k| k.start < self.pos)
        {
            self.known_next += 1;
        }
        let k = self.known.get(self.known_next)?;
        (k.start == self.pos
            && k.end > k.start + 1
            && self.input.get(k.start) == Some(&b'"')
            && self.input.get(k.end - 1) == Some(&b'"'))
        .then(|| k.clone())
    }

    /// An error of `kind` at byte `offset`.
    pub(crate) fn err(&self, kind: LexErrorKind, offset: usize) -> LexError {
        LexError { kind, offset }
    }

    /// The byte at the position, `None` at the end.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    /// Skips RFC 8259 §2 whitespace (space, tab, LF, CR); the first LF or
    /// CR is noted ([`Self::line_break`]).
    #[inline]
    pub(crate) fn ws(&mut self) {
        // Inline only the test: compact JSON has no whitespace.
        if let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.ws_run();
        }
    }

    /// The whitespace run at the position ([`Self::ws`]).
    fn ws_run(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' => {}
                b'\n' | b'\r' => {
                    if self.line_break.is_none() {
                        self.line_break = Some(self.pos);
                    }
                }
                _ => return,
            }
            self.pos += 1;
        }
    }

    /// "Found something other than `expected`" at the position:
    /// [`LexErrorKind::End`] at the end of input, else
    /// [`LexErrorKind::Unexpected`].
    pub(crate) fn unexpected(&self, expected: Expected) -> LexError {
        match self.peek() {
            None => self.err(LexErrorKind::End, self.pos),
            Some(_) => self.err(LexErrorKind::Unexpected(expected), self.pos),
        }
    }

    /// Whitespace, then the end of input; else
    /// [`Expected::EndOfInput`] at the first other byte.
    pub(crate) fn end(&mut self) -> Result<(), LexError> {
        self.ws();
        if self.pos != self.input.len() {
            return Err(self.err(LexErrorKind::Unexpected(Expected::EndOfInput), self.pos));
        }
        Ok(())
    }

    /// Any JSON value at the position, validated and skipped; a container
    /// here is at nesting `depth` (the root is 1).
    pub(crate) fn value(&mut self, depth: usize) -> Result<(), LexError> {
        match self.peek() {
            Some(b'{') => object(self, depth, |lx, _, _| lx.value(depth + 1)),
            Some(b'[') => array(self, depth, |lx| lx.value(depth + 1)),
            Some(b'"') => self.string().map(drop),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            _ => Err(self.unexpected(Expected::Value)),
        }
    }

    /// The literal `lit` (`true`, `false`, `null`) at the position.
    fn literal(&mut self, lit: &[u8]) -> Result<(), LexError> {
        for &want in lit {
            if self.peek() != Some(want) {
                return Err(self.unexpected(Expected::Value));
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// An RFC 8259 §6 number at the position; its value must be a finite
    /// `f64`. Errors: [`LexErrorKind::InvalidNumber`] where a digit was
    /// needed, [`LexErrorKind::NumberOutOfRange`] at the number's start.
    pub(crate) fn number(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let digits = |lx: &mut Self| {
            let s = lx.pos;
            while let Some(b'0'..=b'9') = lx.peek() {
                lx.pos += 1;
            }
            lx.pos - s
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.err(LexErrorKind::InvalidNumber, self.pos)),
        }
        let mut plain = true;
        if self.peek() == Some(b'.') {
            plain = false;
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.err(LexErrorKind::InvalidNumber, self.pos));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            plain = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.err(LexErrorKind::InvalidNumber, self.pos));
            }
        }
        // An integer of up to 308 digits is finite; anything else is parsed.
        if !plain || self.pos - start > 300 {
            let finite = std::str::from_utf8(&self.input[start..self.pos])
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_finite);
            if !finite {
                return Err(self.err(LexErrorKind::NumberOutOfRange, start));
            }
        }
        Ok(())
    }

    /// A string at the position (its `"`), validated in place and skipped:
    /// one pass of the string kernel ([`stop::find_stop`]) to each `"` / `\\`
    /// / control byte, a UTF-8 check only of runs holding non-ASCII bytes
    /// ([`Self::run_to_stop`]), nothing copied. Returns whether it had an
    /// escape.
    #[inline]
    pub(crate) fn string(&mut self) -> Result<bool, LexError> {
        match self.short_plain() {
            Some(_) => Ok(false),
            None => self.string_long(),
        }
    }

    /// A short plain string at the position (its `"`; a key, an id, a
    /// method name): its closing quote is the first stop of the next 32
    /// bytes ([`stop::head_stop`]), with no UTF-8 left to check and nothing to record
    /// ([`Self::record_long_into`]). Its bytes between the quotes, the position
    /// moved past it; `None` (the position kept) for any other string:
    /// [`Self::string_long`] reads it.
    #[inline]
    fn short_plain(&mut self) -> Option<&'a [u8]> {
        if self.validated || self.known_next < self.known.len() {
            return None;
        }
        let first = self.pos + 1;
        let input = self.input;
        let rest = input.get(first..)?;
        let st = stop::head_stop(rest)?;
        if rest.get(st.at) == Some(&b'"')
            && (!st.non_ascii || self.text.is_some())
            && st.at + 2 < self.long_min
        {
            self.pos = first + st.at + 1;
            return rest.get(..st.at);
        }
        None
    }

    /// [`Self::string`] past its short plain case.
    #[inline(never)]
    fn string_long(&mut self) -> Result<bool, LexError> {
        if let Some(k) = self.known_here() {
            self.pos = k.end;
            // Kept as if searched: a hinted scan keeps what a plain one keeps.
            if let Some(long) = &mut self.long
                && k.end - k.start >= self.long_min
            {
                long.push(k.clone());
            }
            return Ok(k.escaped);
        }
        if self.validated {
            return self.skip_validated_string();
        }
        let start = self.pos;
        let input = self.input;
        let first = start + 1;
        // Block by block: every stop of a 64-byte block taken from its
        // mask, a one-letter escape passed over without a new search.
        let mut p = first;
        let mut escaped = false;
        'blocks: while let Some((mut stops, high)) =
            stop::block64(input.get(p..).unwrap_or_default())
        {
            if high != 0 && self.text.is_none() {
                // Runs with non-ASCII bytes need their UTF-8 checked: the
                // per-run path goes on from here (a block boundary after
                // ASCII bytes only, or just after an escape).
                break;
            }
            while stops != 0 {
                let k = stops.trailing_zeros() as usize;
                let q = p + k;
                match input[q] {
                    b'"' => {
                        self.pos = q + 1;
                        self.keep_long(start, escaped);
                        return Ok(escaped);
                    }
                    b'\\' => {
                        escaped = true;
                        if let Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') =
                            input.get(q + 1)
                        {
                            if k + 2 >= stop::BLOCK {
                                p = q + 2;
                                continue 'blocks;
                            }
                            // The `\` and the escaped byte (itself a stop
                            // when it is `"` or `\`) are passed over.
                            stops &= u64::MAX << (k + 2);
                            continue;
                        }
                        self.pos = q;
                        self.escape()?;
                        p = self.pos;
                        continue 'blocks;
                    }
                    _ => return Err(self.err(LexErrorKind::ControlCharacter, q)),
                }
            }
            p += stop::BLOCK;
        }
        self.string_from(start, p, escaped)
    }

    /// Records the string token from `start` to the position when it is
    /// long enough ([`Self::record_long_into`]).
    #[inline]
    fn keep_long(&mut self, start: usize, escaped: bool) {
        if let Some(long) = &mut self.long
            && self.pos - start >= self.long_min
        {
            long.push(KnownString {
                start,
                end: self.pos,
                escaped,
            });
        }
    }

    /// The rest of [`Self::string`] from byte `p` (the start of a plain
    /// run, after ASCII bytes or an escape) of the string whose `"` is at
    /// `start`, run by run ([`Self::run_to_stop`]); `escaped` tells whether
    /// an escape came before `p`.
    fn string_from(
        &mut self,
        start: usize,
        mut p: usize,
        mut escaped: bool,
    ) -> Result<bool, LexError> {
        loop {
            p = self.run_to_stop(p)?;
            match self.input.get(p) {
                None => return Err(self.err(LexErrorKind::End, self.input.len())),
                Some(b'"') => {
                    self.pos = p + 1;
                    self.keep_long(start, escaped);
                    return Ok(escaped);
                }
                _ => {}
            }
            escaped = true;
            // The one-letter escapes inline (the skip path's common case).
            if let Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') =
                self.input.get(p + 1)
            {
                p += 2;
                continue;
            }
            self.pos = p;
            self.escape()?;
            p = self.pos;
        }
    }

    /// The plain run of string bytes from input offset `p` checked, in one
    /// pass ([`stop::find_stop`]): returns the offset of the `"` or `\\`
    /// ending it, or the input's length. Errors, the first problem left to
    /// right: [`LexErrorKind::InvalidUtf8`] at the first bad byte (checked
    /// only when the run holds a non-ASCII byte and the input is not known
    /// UTF-8), [`LexErrorKind::ControlCharacter`] at a raw byte below 0x20.
    #[inline]
    fn run_to_stop(&self, p: usize) -> Result<usize, LexError> {
        let rest = &self.input[p..];
        let st = stop::find_stop(rest);
        if st.non_ascii
            && self.text.is_none()
            && let Err(e) = std::str::from_utf8(&rest[..st.at])
        {
            return Err(self.err(LexErrorKind::InvalidUtf8, p + e.valid_up_to()));
        }
        if rest.get(st.at).is_some_and(|&b| b < 0x20) {
            return Err(self.err(LexErrorKind::ControlCharacter, p + st.at));
        }
        Ok(p + st.at)
    }

    /// A string at the position (its `"`), validated: borrowed from the input
    /// when it has no escape (one pass of the string kernel; a UTF-8 check
    /// only when it holds non-ASCII bytes and the input is not known UTF-8),
    /// else unescaped ([`Self::string_into`]). Errors as [`Self::string`]
    /// gives them.
    pub(crate) fn string_cow(&mut self) -> Result<Cow<'a, str>, LexError> {
        let start = self.pos + 1;
        let input = self.input;
        if let Some(k) = self.known_here()
            && !k.escaped
            && let Some(s) = match self.text {
                Some(t) => t.get(start..k.end - 1),
                None => std::str::from_utf8(&input[start..k.end - 1]).ok(),
            }
        {
            self.pos = k.end;
            return Ok(Cow::Borrowed(s));
        }
        let rest = &input[start..];
        let (st, ascii) = stop::ascii_run(rest);
        if rest.get(st.at) == Some(&b'"')
            && let Some(s) = match (ascii, self.text) {
                (Some(s), _) => Some(s),
                (None, Some(t)) => t.get(start..start + st.at),
                (None, None) => std::str::from_utf8(&rest[..st.at]).ok(),
            }
        {
            self.pos = start + st.at + 1;
            return Ok(Cow::Borrowed(s));
        }
        let mut v = String::new();
        self.string_into(&mut StringSink(&mut v))?;
        Ok(Cow::Owned(v))
    }

    /// A string at the position (its `"`), validated and unescaped into
    /// `sink`; errors as [`Self::string`] gives them.
    ///
    /// Fast path (sinks without positions): unescape into a buffer with no
    /// per-run UTF-8 check, then check the whole string once (runs end at
    /// ASCII `"`/`\` and escapes produce whole characters, so the
    /// concatenation is valid iff every run is). On anything irregular the
    /// per-run path re-reads from the opening quote and reports the first
    /// error left to right.
    pub(crate) fn string_into(&mut self, sink: &mut impl Sink) -> Result<(), LexError> {
        let start = self.pos;
        if !sink.wants_positions()
            && self.string_fast()
            && let Ok(s) = std::str::from_utf8(&self.sbuf)
        {
            sink.run(s, start + 1);
            return Ok(());
        }
        self.pos = start;
        self.string_runs(sink)
    }

    /// See [`Self::string_into`]; `false` means "take the per-run path".
    fn string_fast(&mut self) -> bool {
        self.sbuf.clear();
        // Room for a string up to 64 KiB (or the rest of the input) at once,
        // instead of growing by doubling from nothing on every scan.
        let room = (self.input.len() - self.pos).min(STRING_BUFFER_BYTES);
        self.sbuf.reserve(room);
        let mut p = self.pos + 1;
        loop {
            let rest = &self.input[p..];
            let n = stop::find_stop(rest).at;
            match rest.get(n) {
                Some(b'"' | b'\\') => {}
                _ => return false,
            }
            self.sbuf.extend_from_slice(&rest[..n]);
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

    /// The per-run decoding path of [`Self::string_into`] (each run and
    /// each escape handed to `sink` with its input offset).
    fn string_runs(&mut self, sink: &mut impl Sink) -> Result<(), LexError> {
        self.pos += 1;
        loop {
            let run_start = self.pos;
            let rest = &self.input[run_start..];
            let n = stop::find_stop(rest).at;
            match std::str::from_utf8(&rest[..n]) {
                Ok(t) => sink.run(t, run_start),
                Err(e) => {
                    return Err(self.err(LexErrorKind::InvalidUtf8, run_start + e.valid_up_to()));
                }
            }
            self.pos = run_start + n;
            match self.peek() {
                None => return Err(self.err(LexErrorKind::End, self.pos)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let at = self.pos;
                    let c = self.escape()?;
                    sink.ch(c, at);
                }
                Some(_) => return Err(self.err(LexErrorKind::ControlCharacter, self.pos)),
            }
        }
    }

    /// One escape at the position (its `\`), decoded; the position moves
    /// past it. Errors point at the `\` ([`LexErrorKind::InvalidEscape`],
    /// [`LexErrorKind::LoneSurrogate`]), or are [`LexErrorKind::End`] at the
    /// input's length.
    fn escape(&mut self) -> Result<char, LexError> {
        let at = self.pos;
        let Some(&b) = self.input.get(at + 1) else {
            return Err(self.err(LexErrorKind::End, self.input.len()));
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
                let lone = |lx: &Self| lx.err(LexErrorKind::LoneSurrogate { code_unit: hi }, at);
                match hi {
                    0xD800..=0xDBFF => {
                        if self.input.get(self.pos) != Some(&b'\\')
                            || self.input.get(self.pos + 1) != Some(&b'u')
                        {
                            return Err(lone(self));
                        }
                        self.pos += 2;
                        let lo = self.hex4(self.pos - 2)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err(lone(self));
                        }
                        let cp =
                            0x10000 + ((u32::from(hi) - 0xD800) << 10) + (u32::from(lo) - 0xDC00);
                        char::from_u32(cp).ok_or_else(|| lone(self))?
                    }
                    0xDC00..=0xDFFF => return Err(lone(self)),
                    _ => char::from_u32(u32::from(hi))
                        .ok_or_else(|| self.err(LexErrorKind::InvalidEscape, at))?,
                }
            }
            _ => return Err(self.err(LexErrorKind::InvalidEscape, at)),
        };
        Ok(c)
    }

    /// Four hex digits at the position, read one by one; errors point at
    /// the escape's `\` (`at`), or are [`LexErrorKind::End`] when the input
    /// ends before a bad digit.
    fn hex4(&mut self, at: usize) -> Result<u16, LexError> {
        let mut v = 0u16;
        for _ in 0..4 {
            let Some(&b) = self.input.get(self.pos) else {
                return Err(self.err(LexErrorKind::End, self.input.len()));
            };
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err(self.err(LexErrorKind::InvalidEscape, at)),
            };
            v = v * 16 + u16::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// The bytes of a key on the stack.
    #[inline]
    fn key_at(&self, k: KeyAt) -> &[u8] {
        let from = if k.unescaped {
            &self.key_bytes[..]
        } else {
            self.input
        };
        from.get(k.start..k.end).unwrap_or_default()
    }

    /// Whether `key` (its token at input offset `at`) repeats a key of the
    /// object whose keys start at `base` on the stack (`big` once it has
    /// more than [`LINEAR_KEYS`]); a new key is added.
    // The `Cow` tells a key borrowed from the input (kept as an input range)
    // from an unescaped one (copied to `key_bytes`), and feeds the hash set.
    #[allow(clippy::ptr_arg)]
    fn repeated(
        &mut self,
        base: usize,
        big: &mut Option<HashSet<Cow<'a, [u8]>>>,
        key: &Cow<'a, [u8]>,
        at: usize,
    ) -> bool {
        if let Some(set) = big {
            return !set.insert(key.clone());
        }
        let seen = self.keys.get(base..).unwrap_or_default();
        let dup = seen
            .iter()
            .any(|&k| k.end - k.start == key.len() && self.key_at(k) == &key[..]);
        if dup {
            return true;
        }
        if seen.len() >= LINEAR_KEYS {
            let input = self.input;
            let mut set: HashSet<Cow<'a, [u8]>> = seen
                .iter()
                .map(|&k| match k.unescaped {
                    false => Cow::Borrowed(input.get(k.start..k.end).unwrap_or_default()),
                    true => Cow::Owned(self.key_at(k).to_vec()),
                })
                .collect();
            set.insert(key.clone());
            *big = Some(set);
            return false;
        }
        let k = match key {
            Cow::Borrowed(_) => KeyAt {
                start: at + 1,
                end: at + 1 + key.len(),
                unescaped: false,
            },
            Cow::Owned(v) => {
                let start = self.key_bytes.len();
                self.key_bytes.extend_from_slice(v);
                KeyAt {
                    start,
                    end: self.key_bytes.len(),
                    unescaped: true,
                }
            }
        };
        self.keys.push(k);
        false
    }

    /// One member key at the position (its `"`), checked against the keys of
    /// the object whose keys start at `base` on the stack (`big` once it has
    /// more than [`LINEAR_KEYS`]), then `:` and whitespace. Returns the key
    /// (unescaped) and its offset. Errors: [`LexErrorKind::DuplicateKey`] at
    /// the second key's `"`, string and syntax errors.
    fn key(
        &mut self,
        base: usize,
        big: &mut Option<HashSet<Cow<'a, [u8]>>>,
    ) -> Result<(Cow<'a, [u8]>, usize), LexError> {
        let (key, at) = self.key_token()?;
        if !(self.keys_checked || self.validated) && self.repeated(base, big, &key, at) {
            return Err(duplicate_key(&key, at));
        }
        self.colon()?;
        Ok((key, at))
    }

    /// The key token at the position (its `"`), read and unescaped: the key
    /// and its offset, the position after its closing `"`. Errors: string
    /// and syntax errors.
    #[inline(always)]
    fn key_token(&mut self) -> Result<(Cow<'a, [u8]>, usize), LexError> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected(Expected::Key));
        }
        let at = self.pos;
        let key: Cow<'a, [u8]> = if let Some(k) = self.short_plain() {
            Cow::Borrowed(k)
        } else if self.string_long()? {
            let end = self.pos;
            let mut v = Vec::new();
            self.pos = at;
            // Validated just above: it cannot fail.
            self.string_into(&mut VecSink(&mut v))?;
            debug_assert_eq!(self.pos, end);
            Cow::Owned(v)
        } else {
            Cow::Borrowed(&self.input[at + 1..self.pos - 1])
        };
        Ok((key, at))
    }

    /// The `:` after a member key, with the whitespace around it. Errors:
    /// [`Expected::Colon`] (or the end of input) at the first other byte.
    #[inline(always)]
    pub(crate) fn colon(&mut self) -> Result<(), LexError> {
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected(Expected::Colon));
        }
        self.pos += 1;
        self.ws();
        Ok(())
    }
}

/// Walks the object at the host's position (its `{`), at nesting `depth`:
/// for each member, the key is read and checked for duplicates, then
/// `member(host, key, key_offset)` runs with the position at the value, which
/// it must consume. Errors: the lexer's ([`LexErrorKind::TooDeep`] at the
/// `{`, key and separator errors) through [`Host::lex_error`], and
/// `member`'s.
pub(crate) fn object<'a, H: Host<'a>>(
    h: &mut H,
    depth: usize,
    mut member: impl FnMut(&mut H, &[u8], usize) -> Result<(), H::Error>,
) -> Result<(), H::Error> {
    let base = h.lexer().keys.len();
    let mut big = None;
    container(h, depth, b'}', Expected::CommaOrBrace, |h| {
        let r = h.lexer().key(base, &mut big);
        let (key, at) = r.map_err(|e| h.lex_error(e))?;
        member(h, &key, at)
    })?;
    let lx = h.lexer();
    lx.keys.truncate(base);
    if base == 0 {
        lx.key_bytes.clear();
    }
    Ok(())
}

/// [`object()`] whose keys the lexer does not check for repeats: `member`
/// runs with the position just after the key (its closing `"`) and must,
/// in the order of [`object()`]'s own walk, tell a repeated key
/// ([`duplicate_key`]: [`LexErrorKind::DuplicateKey`] at the second key's
/// `"`), then read the `:` ([`Lexer::colon`]), then consume the value. For
/// a caller that keeps every key it is given anyway (the envelope scan's
/// top level: six known members, each in its own slot), the key stack's
/// work per member is saved.
pub(crate) fn object_checked_by_caller<'a, H: Host<'a>>(
    h: &mut H,
    depth: usize,
    mut member: impl FnMut(&mut H, &[u8], usize) -> Result<(), H::Error>,
) -> Result<(), H::Error> {
    container(h, depth, b'}', Expected::CommaOrBrace, |h| {
        let r = h.lexer().key_token();
        let (key, at) = r.map_err(|e| h.lex_error(e))?;
        member(h, &key, at)
    })
}

/// The error of `key` (unescaped) repeated at offset `at` (its `"`), as
/// [`object()`]'s check gives it.
pub(crate) fn duplicate_key(key: &[u8], at: usize) -> LexError {
    LexError {
        kind: LexErrorKind::DuplicateKey {
            key: String::from_utf8_lossy(key).into_owned(),
        },
        offset: at,
    }
}

/// Walks the array at the host's position (its `[`), at nesting `depth`:
/// `item(host)` runs with the position at each element (after whitespace),
/// which it must consume. Errors: the lexer's ([`LexErrorKind::TooDeep`] at
/// the `[`, separator errors) through [`Host::lex_error`], and `item`'s.
pub(crate) fn array<'a, H: Host<'a>>(
    h: &mut H,
    depth: usize,
    item: impl FnMut(&mut H) -> Result<(), H::Error>,
) -> Result<(), H::Error> {
    container(h, depth, b']', Expected::CommaOrBracket, item)
}

/// The walk shared by [`object()`] and [`array()`]: the depth check at the
/// opening byte, the empty container, then `item` (after whitespace) and
/// `,` until `close`; a bad separator is [`LexErrorKind::Unexpected`]
/// (`sep`).
fn container<'a, H: Host<'a>>(
    h: &mut H,
    depth: usize,
    close: u8,
    sep: Expected,
    mut item: impl FnMut(&mut H) -> Result<(), H::Error>,
) -> Result<(), H::Error> {
    let lx = h.lexer();
    if depth > MAX_NESTING_DEPTH {
        let e = lx.err(LexErrorKind::TooDeep, lx.pos);
        return Err(h.lex_error(e));
    }
    lx.pos += 1;
    lx.ws();
    if lx.peek() == Some(close) {
        lx.pos += 1;
        return Ok(());
    }
    loop {
        h.lexer().ws();
        item(h)?;
        let lx = h.lexer();
        lx.ws();
        match lx.peek() {
            Some(b',') => lx.pos += 1,
            Some(b) if b == close => {
                lx.pos += 1;
                return Ok(());
            }
            _ => {
                let e = lx.unexpected(sep);
                return Err(h.lex_error(e));
            }
        }
    }
}

/// The string scan as it was before the string kernel: a `memchr2` to each
/// `"` / `\\`, then the run checked for raw control bytes and (unless
/// `utf8_known`) UTF-8, the first problem reported. The reference
/// [`Lexer::string`] is tested and fuzzed against
/// ([`crate::fuzzing::string_stop`]): the same `Ok(escaped)` and end, the
/// same error kind and offset. `lx` is at the string's `"`.
pub(crate) fn reference_string(lx: &mut Lexer<'_>, utf8_known: bool) -> Result<bool, LexError> {
    let mut p = lx.pos + 1;
    let mut escaped = false;
    loop {
        let rest = &lx.input[p..];
        let Some(n) = memchr::memchr2(b'"', b'\\', rest) else {
            reference_check_run(rest, p, utf8_known)?;
            return Err(lx.err(LexErrorKind::End, lx.input.len()));
        };
        reference_check_run(&rest[..n], p, utf8_known)?;
        p += n;
        if lx.input[p] == b'"' {
            lx.pos = p + 1;
            return Ok(escaped);
        }
        escaped = true;
        lx.pos = p;
        lx.escape()?;
        p = lx.pos;
    }
}

/// One run of [`reference_string`]: the first raw control byte or bad UTF-8
/// byte, whichever comes first.
fn reference_check_run(run: &[u8], at: usize, utf8_known: bool) -> Result<(), LexError> {
    let ctl = run.iter().position(|&c| c < 0x20);
    let utf8 = if utf8_known {
        None
    } else {
        std::str::from_utf8(run).err().map(|e| e.valid_up_to())
    };
    let (kind, off) = match (ctl, utf8) {
        (Some(c), Some(u)) if u < c => (LexErrorKind::InvalidUtf8, u),
        (Some(c), _) => (LexErrorKind::ControlCharacter, c),
        (None, Some(u)) => (LexErrorKind::InvalidUtf8, u),
        (None, None) => return Ok(()),
    };
    Err(LexError {
        kind,
        offset: at + off,
    })
}

/// For the fuzz target: [`Lexer::string`], [`Lexer::string_cow`] and
/// [`reference_string`] from every `"` of `input` (as bytes, and as text
/// when it is UTF-8) agree on the result and the end.
pub(crate) fn strings_agree_with_reference(input: &[u8]) {
    let text = std::str::from_utf8(input).ok();
    for at in memchr::memchr_iter(b'"', input) {
        let mk = |utf8: bool| {
            let mut lx = match (utf8, text) {
                (true, Some(t)) => Lexer::new_str(t),
                _ => Lexer::new(input),
            };
            lx.pos = at;
            lx
        };
        for utf8 in [false, true] {
            if utf8 && text.is_none() {
                continue;
            }
            let mut want_lx = mk(utf8);
            let want = reference_string(&mut want_lx, utf8).map(|e| (e, want_lx.pos));
            let mut lx = mk(utf8);
            let got = lx.string().map(|e| (e, lx.pos));
            assert_eq!(got, want, "string() from {at} (utf8 {utf8})");
            let mut lx = mk(utf8);
            let cow = lx.string_cow().map(|_| lx.pos);
            assert_eq!(
                cow,
                want.clone().map(|(_, end)| end),
                "string_cow() from {at}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One whole value, as both scanners enter the lexer.
    fn lex(input: &[u8]) -> Result<(), LexError> {
        let mut lx = Lexer::new(input);
        lx.ws();
        lx.value(1)?;
        lx.end()
    }

    fn err(input: &[u8]) -> (LexErrorKind, usize) {
        let e = lex(input).unwrap_err();
        (e.kind, e.offset)
    }

    /// An object with `n` distinct keys `k0`…, then `extra` members.
    fn object_with_keys(n: usize, extra: &str) -> String {
        let mut s = String::from("{");
        for i in 0..n {
            s.push_str(&format!("\"k{i}\":{i},"));
        }
        s.push_str(extra);
        s.push('}');
        s
    }

    #[test]
    fn escaped_key_repeating_a_plain_key_is_a_duplicate_and_sibling_objects_keep_their_own_keys() {
        let dup = br#"{"a":1,"\u0061":2}"#;
        assert_eq!(
            err(dup),
            (LexErrorKind::DuplicateKey { key: "a".into() }, 7)
        );
        let dup = br#"{"\u0061":1,"a":2}"#;
        assert_eq!(
            err(dup),
            (LexErrorKind::DuplicateKey { key: "a".into() }, 12)
        );
        let dup = br#"{"x":{"\u0062":1,"c":{"\u0062":0}},"y":{"b":2,"\u0062":3}}"#;
        let at = dup.windows(8).rposition(|w| w == br#""\u0062""#).unwrap();
        assert_eq!(
            err(dup),
            (LexErrorKind::DuplicateKey { key: "b".into() }, at)
        );
        assert_eq!(
            lex(br#"{"x":{"\u0062":1},"y":{"b":2},"\u0062":{"b":{}}}"#),
            Ok(())
        );
    }

    /// Escapes, escaped quotes, control bytes and non-ASCII bytes at every
    /// offset around the 64-byte blocks of the string walk: the same result
    /// and end as the reference scan.
    #[test]
    fn string_walk_agrees_with_the_reference_around_block_boundaries() {
        for tail in [
            &b"\\n"[..],
            b"\\\"",
            b"\\\\",
            b"\\u0041",
            b"\\ud83d\\ude00",
            b"\\x",
            b"\\u12",
            b"\x01",
            "\u{e9}".as_bytes(),
            b"\xff",
            b"\\",
        ] {
            for at in 0..140 {
                let mut input = vec![b'"'];
                input.extend(std::iter::repeat_n(b'a', at));
                input.extend_from_slice(tail);
                input.extend(std::iter::repeat_n(b'b', 70));
                input.push(b'"');
                strings_agree_with_reference(&input);
                // Ended right after the tail: the input runs out inside it.
                strings_agree_with_reference(&input[..1 + at + tail.len()]);
            }
        }
    }

    #[test]
    fn duplicate_keys_found_below_at_and_past_the_linear_scan_limit() {
        for n in [
            1,
            LINEAR_KEYS - 1,
            LINEAR_KEYS,
            LINEAR_KEYS + 1,
            3 * LINEAR_KEYS,
        ] {
            let ok = object_with_keys(n, "\"last\":0");
            assert_eq!(lex(ok.as_bytes()), Ok(()), "{n} keys");
            let dup = object_with_keys(n, "\"k0\":0");
            let at = dup.rfind("\"k0\"").unwrap();
            assert_eq!(
                err(dup.as_bytes()),
                (LexErrorKind::DuplicateKey { key: "k0".into() }, at),
                "{n} keys"
            );
        }
        // Keys are per object: siblings and nested objects may reuse them.
        assert_eq!(lex(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#), Ok(()));
    }

    #[test]
    fn escaped_key_is_compared_unescaped() {
        assert_eq!(
            err(br#"{"ab":1,"a\u0062":2}"#),
            (LexErrorKind::DuplicateKey { key: "ab".into() }, 8)
        );
        assert_eq!(
            err(br#"{"\u00e9":1,"\u00E9":2}"#),
            (LexErrorKind::DuplicateKey { key: "é".into() }, 12)
        );
    }

    #[test]
    fn unicode_escape_reads_its_hex_digits_one_by_one() {
        // A bad digit is the escape's error, at its `\`, even near the end.
        assert_eq!(err(br#""\u1Z"#), (LexErrorKind::InvalidEscape, 1));
        assert_eq!(err(br#""\u12"#), (LexErrorKind::End, 5));
        assert_eq!(err(br#""\"#), (LexErrorKind::End, 2));
        assert_eq!(err(br#""\x""#), (LexErrorKind::InvalidEscape, 1));
        // The low half's digits: its own `\`.
        assert_eq!(err(br#""\ud83d\uZe00""#), (LexErrorKind::InvalidEscape, 7));
        assert_eq!(
            err(br#""\ud83d\u0041""#),
            (LexErrorKind::LoneSurrogate { code_unit: 0xd83d }, 1)
        );
        assert_eq!(
            err(br#""\ud83d""#),
            (LexErrorKind::LoneSurrogate { code_unit: 0xd83d }, 1)
        );
        assert_eq!(
            err(br#""a\udc00""#),
            (LexErrorKind::LoneSurrogate { code_unit: 0xdc00 }, 2)
        );
        assert_eq!(lex(br#""\ud83d\ude00\u00e9\n\/""#), Ok(()));
    }

    #[test]
    fn string_runs_report_the_first_problem() {
        // Broken UTF-8 before a control byte, and the other way round.
        assert_eq!(err(b"\"ab\xc3\x01\""), (LexErrorKind::InvalidUtf8, 3));
        assert_eq!(err(b"\"ab\x01\xc3\""), (LexErrorKind::ControlCharacter, 3));
        assert_eq!(err(b"\"ab\xff"), (LexErrorKind::InvalidUtf8, 3));
        assert_eq!(err(b"\"abc"), (LexErrorKind::End, 4));
        // DEL (0x7f) and non-ASCII UTF-8 are plain string bytes.
        assert_eq!(lex("\"\x7f caf\u{e9} \u{1F600}\"".as_bytes()), Ok(()));
    }

    /// A `&str` input (UTF-8 known) looks for control bytes only: a run
    /// with non-ASCII characters and no control byte passes, one with both
    /// reports the control byte at its offset, as the byte entry point does.
    #[test]
    fn known_utf8_runs_with_non_ascii_report_only_control_bytes() {
        let lex_str = |t: &str| {
            let mut lx = Lexer::new_str(t);
            lx.string().map(|escaped| (escaped, lx.pos))
        };
        let plain = "\"caf\u{e9} \u{2013} \u{1F600}\"";
        assert_eq!(lex_str(plain), Ok((false, plain.len())));
        let escaped = "\"\u{e9}\\n\u{2013}\"";
        assert_eq!(lex_str(escaped), Ok((true, escaped.len())));
        for t in ["\"\u{e9}\u{1}\"", "\"\u{e9}\\n\u{2013}\u{1f}x\""] {
            let at = t.find(|c: char| c < ' ').unwrap();
            let want = LexError {
                kind: LexErrorKind::ControlCharacter,
                offset: at,
            };
            assert_eq!(lex_str(t), Err(want.clone()), "{t:?}");
            assert_eq!(
                Lexer::new(t.as_bytes()).string(),
                Err(want),
                "{t:?} as bytes"
            );
        }
    }

    #[test]
    fn string_into_decodes_what_string_validates() {
        let s = br#""a\tb\u00e9\ud83d\ude00\/""#;
        let mut lx = Lexer::new(s);
        assert_eq!(lx.string(), Ok(true));
        assert_eq!(lx.pos, s.len());
        for positions in [false, true] {
            struct Per<'v>(&'v mut Vec<u8>, bool);
            impl Sink for Per<'_> {
                fn run(&mut self, s: &str, _: usize) {
                    self.0.extend_from_slice(s.as_bytes());
                }
                fn ch(&mut self, c: char, _: usize) {
                    self.0.extend_from_slice(c.to_string().as_bytes());
                }
                fn wants_positions(&self) -> bool {
                    self.1
                }
            }
            let mut out = Vec::new();
            let mut lx = Lexer::new(s);
            assert_eq!(lx.string_into(&mut Per(&mut out, positions)), Ok(()));
            assert_eq!(lx.pos, s.len());
            assert_eq!(out, "a\tb\u{e9}\u{1F600}/".as_bytes());
        }
    }

    #[test]
    fn integers_skip_the_float_parse_up_to_300_bytes_and_overflow_past_308_digits() {
        for digits in [300, 301, 308] {
            let n = "9".repeat(digits);
            assert_eq!(lex(n.as_bytes()), Ok(()), "{digits} digits");
        }
        let n = format!("[1,{}]", "9".repeat(309));
        assert_eq!(err(n.as_bytes()), (LexErrorKind::NumberOutOfRange, 3));
        assert_eq!(err(b"[1e309]"), (LexErrorKind::NumberOutOfRange, 1));
        assert_eq!(err(b"-"), (LexErrorKind::InvalidNumber, 1));
        assert_eq!(err(b"1."), (LexErrorKind::InvalidNumber, 2));
        assert_eq!(err(b"1e+"), (LexErrorKind::InvalidNumber, 3));
        assert_eq!(
            err(b"01"),
            (LexErrorKind::Unexpected(Expected::EndOfInput), 1)
        );
    }

    #[test]
    fn nesting_limit_at_and_one_past() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(lex(nest(MAX_NESTING_DEPTH).as_bytes()), Ok(()));
        assert_eq!(
            err(nest(MAX_NESTING_DEPTH + 1).as_bytes()),
            (LexErrorKind::TooDeep, MAX_NESTING_DEPTH)
        );
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert_eq!(lex(objects(MAX_NESTING_DEPTH).as_bytes()), Ok(()));
        assert_eq!(
            err(objects(MAX_NESTING_DEPTH + 1).as_bytes()),
            (LexErrorKind::TooDeep, 5 * MAX_NESTING_DEPTH)
        );
    }

    #[test]
    fn separators_say_what_was_expected() {
        assert_eq!(
            err(b"[1 2]"),
            (LexErrorKind::Unexpected(Expected::CommaOrBracket), 3)
        );
        assert_eq!(
            err(br#"{"a":1 "b""#),
            (LexErrorKind::Unexpected(Expected::CommaOrBrace), 7)
        );
        assert_eq!(
            err(br#"{"a" 1}"#),
            (LexErrorKind::Unexpected(Expected::Colon), 5)
        );
        assert_eq!(
            err(br#"{"a":1,}"#),
            (LexErrorKind::Unexpected(Expected::Key), 7)
        );
        assert_eq!(err(b"[1,]"), (LexErrorKind::Unexpected(Expected::Value), 3));
        assert_eq!(err(b"tru"), (LexErrorKind::End, 3));
        assert_eq!(err(b"nul1"), (LexErrorKind::Unexpected(Expected::Value), 3));
        assert_eq!(
            err(b"{} x"),
            (LexErrorKind::Unexpected(Expected::EndOfInput), 3)
        );
        assert_eq!(err(b" \t\r\n"), (LexErrorKind::End, 4));
    }

    /// The string scan (kernel, one pass) against the scan before it
    /// (`memchr2`, then each run checked): the same end, escape flag, error
    /// kind and offset from every `"` of inputs made of the classes that
    /// matter — quotes, escapes good and bad, control bytes, valid and
    /// broken UTF-8 — at every length and alignment of the SIMD steps.
    #[test]
    fn string_scan_agrees_with_the_memchr2_reference_on_pseudo_random_strings() {
        let pieces: &[&[u8]] = &[
            b"\"",
            b"\\n",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\x",
            b"\\u12",
            b"\x01",
            b"\x1f",
            b"\n",
            "\u{e9}".as_bytes(),
            "\u{1F600}".as_bytes(),
            b"\xc3",
            b"\xff",
            b"\x7f",
            b"abcdefghijklmnopqrstuvwxyz0123456789",
            b"QUJDRA==",
        ];
        let mut next = crate::stop::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..1500 {
            let mut s = b"\"".to_vec();
            for _ in 0..next() % 24 {
                let p = pieces[(next() % pieces.len() as u64) as usize];
                // Plain runs are the common case: repeat them.
                let times = if p.len() > 8 { 1 + next() % 6 } else { 1 };
                for _ in 0..times {
                    s.extend_from_slice(p);
                }
            }
            strings_agree_with_reference(&s);
        }
        for t in [
            &b"\"ab\xc3\x01\""[..],
            b"\"ab\x01\xc3\"",
            b"\"ab\xff",
            b"\"abc",
            b"\"\\u1Z\"",
        ] {
            strings_agree_with_reference(t);
        }
    }

    #[test]
    fn line_break_is_noted_where_whitespace_holds_it() {
        let mut lx = Lexer::new(b"{\"a\": [1,\t2 ,\r\n3]}\n");
        lx.value(1).unwrap();
        lx.end().unwrap();
        assert_eq!(lx.line_break, Some(13));
        let mut lx = Lexer::new(b" {\"a\":\"x y\"} ");
        lx.ws();
        lx.value(1).unwrap();
        lx.end().unwrap();
        assert_eq!(lx.line_break, None);
    }

    /// Strings recorded by one scan are skipped by a scan told them: the
    /// same ends and escape flags, and a recorded range whose ends are not
    /// quotes is ignored (the string is searched).
    /// On validated input (`set_validated`) a string is skipped to the same
    /// end with the same escape flag as the checking scan gives, escaped
    /// quotes and backslash runs included; a cut string is an error, not a
    /// panic.
    #[test]
    fn validated_strings_end_where_the_checking_scan_ends_them() {
        for input in [
            r#""""#,
            r#""abc""#,
            r#""a\"b""#,
            r#""a\\""#,
            r#""\\\"\u0041""#,
            "\"é\\n\"",
        ] {
            let mut checked = Lexer::new(input.as_bytes());
            let mut trusted = Lexer::new(input.as_bytes());
            trusted.set_validated();
            assert_eq!(trusted.string(), checked.string(), "{input}");
            assert_eq!((trusted.pos, checked.pos), (input.len(), input.len()));
        }
        for cut in [&br#""ab\"#[..], br#""ab"#, br#""ab\""#] {
            let mut lx = Lexer::new(cut);
            lx.set_validated();
            assert_eq!(lx.string().unwrap_err().kind, LexErrorKind::End, "{cut:?}");
        }
    }

    #[test]
    fn known_strings_are_skipped_with_the_recorded_end_and_escape_flag() {
        let input = br#"["aaaa","b\nb","c"]"#;
        let mut lx = Lexer::new(input);
        lx.record_long_into(4, Vec::new());
        lx.value(1).unwrap();
        let long = lx.take_long();
        assert_eq!(
            long,
            vec![
                KnownString {
                    start: 1,
                    end: 7,
                    escaped: false
                },
                KnownString {
                    start: 8,
                    end: 14,
                    escaped: true
                },
            ]
        );
        let mut lx = Lexer::new(input).with_known(long);
        lx.pos = 8;
        assert_eq!(lx.string(), Ok(true));
        assert_eq!(lx.pos, 14);
        lx.pos = 1;
        assert_eq!(lx.string_cow(), Ok(Cow::Borrowed("aaaa")));
        assert_eq!(lx.pos, 7);
        let wrong = vec![KnownString {
            start: 1,
            end: 5,
            escaped: false,
        }];
        let mut lx = Lexer::new(input).with_known(wrong);
        lx.pos = 1;
        assert_eq!(lx.string(), Ok(false));
        assert_eq!(lx.pos, 7);
    }
}
