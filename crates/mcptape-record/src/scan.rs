//! One pass over each proxied chunk, while it is in cache: the end of the
//! line (`\n`), whether the line is exactly one JSON value (RFC 8259), and,
//! for client lines, whether it can settle the protocol revision.
//!
//! The stdio proxy used to make six passes over every line after it was
//! complete (the line framer's `memchr`, serde_json's validation and its
//! UTF-8 check, four `memmem` scans of the revision pre-filter), each over
//! 16 MiB that no longer fit in any cache. [`LineScan`] is fed the bytes of
//! each read as they arrive and keeps its state between reads, so a line is
//! scanned once, 1 MiB at a time.
//!
//! **Same verdicts as the framer.** A line [`LineScan`] accepts is one that
//! `mcptape_transport::stdio::is_exact_json` (serde_json, `&RawValue`, nothing
//! around the value) accepts: the grammar of RFC 8259 §2–§7 with serde_json's
//! leniencies (escapes `\uXXXX` are checked for four hex digits only, no
//! nesting limit), valid UTF-8 (RFC 3629 §4) in strings, no raw control
//! character in a string, no whitespace before the value or after it (the one
//! trailing `\r` the framer strips aside). A line it does not accept is
//! handed to `is_exact_json` by the caller, so a disagreement could only
//! cost time, never change a frame (tested on every split of a corpus, and
//! on every one-byte mutation of it, against serde_json).

use memchr::memmem;

/// Longest string (raw bytes between the quotes) whose bytes the revision
/// pre-filter looks at: a method name or a `_meta` key that can settle the
/// revision is at most 39 raw bytes (`io.modelcontextprotocol\/protocolVersion`);
/// escapes other than `\u` (flagged on their own) at most halve the length, so
/// a longer string cannot decode to one of them.
pub(crate) const SETTLE_STRING_BYTES: usize = 128;

/// Needles of the revision pre-filter (see `sink::may_settle`): a client
/// message can settle the revision only if one of its short strings holds one
/// of them, or it holds a `\u` escape.
const SETTLE_NEEDLES: [&[u8]; 3] = [b"initialize", b"discover", b"protocolVersion"];

/// A UTF-8 lead byte's sequence (RFC 3629 §4, Table 3-7 of Unicode): how many
/// continuation bytes follow, and the range `lo..=hi` of the first of them
/// (narrower than `0x80..=0xBF` after `E0`, `ED`, `F0`, `F4`: no overlong
/// form, no surrogate, nothing past U+10FFFF). `None`: not a lead byte.
const fn utf8_lead(b: u8) -> Option<(u8, u8, u8)> {
    Some(match b {
        0xC2..=0xDF => (1, 0x80, 0xBF),
        0xE0 => (2, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF),
        0xED => (2, 0x80, 0x9F),
        0xF0 => (3, 0x90, 0xBF),
        0xF1..=0xF3 => (3, 0x80, 0xBF),
        0xF4 => (3, 0x80, 0x8F),
        _ => return None,
    })
}

/// Where the scanner is in the JSON grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Before the top-level value: no whitespace allowed.
    Start,
    /// A value is expected (after `:` or `,` in an array).
    Value,
    /// After `[`: a value or `]`.
    ArrFirst,
    /// After `{`: a key or `}`.
    ObjFirst,
    /// After `,` in an object: a key.
    ObjKey,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    After,
    /// Inside a string (`key`: an object key).
    Str { key: bool },
    /// After `\` in a string.
    Esc { key: bool },
    /// Inside `\uXXXX`, `left` hex digits to go.
    Hex { key: bool, left: u8 },
    /// Inside a UTF-8 sequence: `need` continuation bytes, the next in `lo..=hi`.
    Utf8 { key: bool, need: u8, lo: u8, hi: u8 },
    /// Inside a number.
    Num(Num),
    /// Inside `true`/`false`/`null`: `word[at..]` to go.
    Lit { word: &'static [u8], at: u8 },
    /// The top-level value is complete.
    Done,
    /// Done, then one `\r` (the framer strips it if the `\n` follows).
    DoneCr,
    /// Not accepted (the caller asks serde_json).
    Bad,
}

/// Number states (RFC 8259 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

impl Num {
    /// Whether the number may end here.
    fn terminal(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }
}

/// What the scan found out about a line that is exactly one JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Whether, as a client message, it can settle the protocol revision
    /// (only when the scanner was asked to watch for it, else `false`).
    pub(crate) may_settle: bool,
    /// Whether it holds a `\r` (whitespace between tokens; the one trailing
    /// `\r` the framer strips is not part of the line). It never holds `\n`.
    pub(crate) line_break: bool,
}

/// The verdict on a line (see [`LineScan::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Exactly one JSON value (valid UTF-8).
    Json(Scanned),
    /// The scanner did not accept it; ask `is_exact_json`.
    Unknown,
}

/// Incremental scanner of one line at a time (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct LineScan {
    st: St,
    /// Open containers, `true` for an object.
    stack: Vec<bool>,
    /// Whether to compute the revision pre-filter.
    watch: bool,
    settle: bool,
    /// A `\r` between tokens was seen.
    cr: bool,
    /// Raw bytes of the current string, while it is short.
    cap: [u8; SETTLE_STRING_BYTES],
    cap_len: usize,
    cap_long: bool,
}

/// Bytes that end the plain run of a string: `"`, `\`, a control character
/// (`\n` among them) or a non-ASCII byte.
#[inline]
fn special(b: u8) -> bool {
    b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b)
}

/// Length of the prefix of `s` with no [`special`] byte: per block of
/// [`PLAIN_BLOCK`] bytes, `memchr2` (SIMD) to the next `"` or `\\`, then a
/// branch-free check of the run before it for control or non-ASCII bytes
/// (folded 64 bytes at a time, which the compiler vectorizes).
#[inline]
fn plain_prefix(s: &[u8]) -> usize {
    let mut base = 0;
    for block in s.chunks(PLAIN_BLOCK) {
        let stop = memchr::memchr2(b'"', b'\\', block).unwrap_or(block.len());
        let run = &block[..stop];
        for (j, w) in run.chunks(64).enumerate() {
            // `b - 0x20 >= 0x60` (wrapping): below 0x20 or from 0x80 on.
            let odd = w
                .iter()
                .fold(0u8, |a, &b| a | u8::from(b.wrapping_sub(0x20) >= 0x60));
            if odd != 0 {
                let k = w.iter().position(|&b| special(b)).unwrap_or(w.len());
                return base + j * 64 + k;
            }
        }
        if stop < block.len() {
            return base + stop;
        }
        base += block.len();
    }
    base
}

/// Bytes [`plain_prefix`] searches at a time (4 KiB: the run it checks
/// after `memchr2` is still in L1).
const PLAIN_BLOCK: usize = 4096;

impl LineScan {
    /// A scanner; `watch`: also compute the revision pre-filter (client lines).
    pub(crate) fn new(watch: bool) -> Self {
        LineScan {
            st: St::Start,
            stack: Vec::new(),
            watch,
            settle: false,
            cr: false,
            cap: [0; SETTLE_STRING_BYTES],
            cap_len: 0,
            cap_long: false,
        }
    }

    /// Starts the next line.
    pub(crate) fn reset(&mut self) {
        self.st = St::Start;
        self.stack.clear();
        self.settle = false;
        self.cr = false;
        self.cap_len = 0;
        self.cap_long = false;
    }

    /// The verdict on the line fed so far, up to (not including) its `\n`
    /// or the end of the stream, one trailing `\r` stripped.
    pub(crate) fn verdict(&self) -> Verdict {
        let done = match self.st {
            St::Done | St::DoneCr => true,
            St::Num(n) => n.terminal() && self.stack.is_empty(),
            _ => false,
        };
        if done {
            Verdict::Json(Scanned {
                may_settle: self.settle,
                line_break: self.cr,
            })
        } else {
            Verdict::Unknown
        }
    }

    fn cap(&mut self, bytes: &[u8]) {
        if !self.watch || self.cap_long {
            return;
        }
        let end = self.cap_len + bytes.len();
        if end > SETTLE_STRING_BYTES {
            self.cap_long = true;
        } else {
            self.cap[self.cap_len..end].copy_from_slice(bytes);
            self.cap_len = end;
        }
    }

    fn string_closed(&mut self) {
        if self.watch && !self.cap_long && !self.settle {
            let s = &self.cap[..self.cap_len];
            self.settle = SETTLE_NEEDLES.iter().any(|n| memmem::find(s, n).is_some());
        }
        self.cap_len = 0;
        self.cap_long = false;
    }

    fn value_end(&mut self) -> St {
        if self.stack.is_empty() {
            St::Done
        } else {
            St::After
        }
    }

    /// A value starting with `b` (not whitespace).
    fn value(&mut self, b: u8) -> St {
        match b {
            b'"' => St::Str { key: false },
            b'{' => {
                self.stack.push(true);
                St::ObjFirst
            }
            b'[' => {
                self.stack.push(false);
                St::ArrFirst
            }
            b'-' => St::Num(Num::Minus),
            b'0' => St::Num(Num::Zero),
            b'1'..=b'9' => St::Num(Num::Int),
            b't' => St::Lit {
                word: b"true",
                at: 1,
            },
            b'f' => St::Lit {
                word: b"false",
                at: 1,
            },
            b'n' => St::Lit {
                word: b"null",
                at: 1,
            },
            _ => St::Bad,
        }
    }

    /// Feeds `bytes` (the next bytes of the current line and maybe more);
    /// returns the offset of the first `\n` in them, which ends the line (the
    /// caller reads [`LineScan::verdict`], then [`LineScan::reset`]s and
    /// feeds the rest), or `None` if the line goes on.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < bytes.len() {
            if let St::Str { key } = self.st {
                let k = plain_prefix(&bytes[i..]);
                self.cap(&bytes[i..i + k]);
                i += k;
                let Some(&b) = bytes.get(i) else { break };
                if b == b'\n' {
                    self.st = St::Bad;
                    return Some(i);
                }
                if b != b'"' {
                    self.cap(&bytes[i..=i]);
                }
                i += 1;
                self.st = match b {
                    b'"' => {
                        self.string_closed();
                        if key { St::Colon } else { self.value_end() }
                    }
                    b'\\' => St::Esc { key },
                    0x80.. => match utf8_lead(b) {
                        Some((need, lo, hi)) => St::Utf8 { key, need, lo, hi },
                        None => St::Bad,
                    },
                    _ => St::Bad,
                };
                continue;
            }
            if self.st == St::Bad {
                return memchr::memchr(b'\n', &bytes[i..]).map(|k| i + k);
            }
            let b = bytes[i];
            if b == b'\n' {
                // The line ends; a number ends with it.
                if let St::Num(n) = self.st
                    && n.terminal()
                {
                    self.st = self.value_end();
                }
                return Some(i);
            }
            let ws = matches!(b, b' ' | b'\t' | b'\r');
            self.st = match self.st {
                St::Start if ws => St::Bad,
                St::Start | St::Value => {
                    if ws {
                        St::Value
                    } else {
                        self.value(b)
                    }
                }
                St::ArrFirst => match b {
                    _ if ws => St::ArrFirst,
                    b']' => {
                        self.stack.pop();
                        self.value_end()
                    }
                    _ => self.value(b),
                },
                St::ObjFirst | St::ObjKey => match b {
                    _ if ws => self.st,
                    b'"' => St::Str { key: true },
                    b'}' if self.st == St::ObjFirst => {
                        self.stack.pop();
                        self.value_end()
                    }
                    _ => St::Bad,
                },
                St::Colon => match b {
                    _ if ws => St::Colon,
                    b':' => St::Value,
                    _ => St::Bad,
                },
                St::After => match (b, self.stack.last()) {
                    _ if ws => St::After,
                    (b',', Some(true)) => St::ObjKey,
                    (b',', Some(false)) => St::Value,
                    (b'}', Some(true)) | (b']', Some(false)) => {
                        self.stack.pop();
                        self.value_end()
                    }
                    _ => St::Bad,
                },
                St::Esc { key } => {
                    self.cap(&bytes[i..=i]);
                    match b {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => St::Str { key },
                        b'u' => {
                            self.settle |= self.watch;
                            St::Hex { key, left: 4 }
                        }
                        _ => St::Bad,
                    }
                }
                St::Hex { key, left } => {
                    self.cap(&bytes[i..=i]);
                    match (b.is_ascii_hexdigit(), left) {
                        (false, _) => St::Bad,
                        (true, 1) => St::Str { key },
                        (true, l) => St::Hex { key, left: l - 1 },
                    }
                }
                St::Utf8 { key, need, lo, hi } => {
                    self.cap(&bytes[i..=i]);
                    match ((lo..=hi).contains(&b), need) {
                        (false, _) => St::Bad,
                        (true, 1) => St::Str { key },
                        (true, n) => St::Utf8 {
                            key,
                            need: n - 1,
                            lo: 0x80,
                            hi: 0xBF,
                        },
                    }
                }
                St::Num(n) => {
                    let next = match (n, b) {
                        (Num::Minus, b'0') => Some(Num::Zero),
                        (Num::Minus, b'1'..=b'9') => Some(Num::Int),
                        (Num::Int, b'0'..=b'9') => Some(Num::Int),
                        (Num::Zero | Num::Int, b'.') => Some(Num::Dot),
                        (Num::Dot | Num::Frac, b'0'..=b'9') => Some(Num::Frac),
                        (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Some(Num::E),
                        (Num::E, b'+' | b'-') => Some(Num::ESign),
                        (Num::E | Num::ESign | Num::Exp, b'0'..=b'9') => Some(Num::Exp),
                        _ => None,
                    };
                    match next {
                        Some(n) => St::Num(n),
                        None if n.terminal() => {
                            // The number ended: `b` is read again after it.
                            self.st = self.value_end();
                            continue;
                        }
                        None => St::Bad,
                    }
                }
                St::Lit { word, at } => {
                    let at = usize::from(at);
                    if word.get(at) != Some(&b) {
                        St::Bad
                    } else if at + 1 == word.len() {
                        self.value_end()
                    } else {
                        St::Lit {
                            word,
                            at: u8::try_from(at + 1).unwrap_or(u8::MAX),
                        }
                    }
                }
                St::Done if b == b'\r' => St::DoneCr,
                St::Done | St::DoneCr | St::Bad => St::Bad,
                St::Str { .. } => unreachable!("strings are scanned above"),
            };
            // A `\r` in the line (the one after the value, `DoneCr`, is
            // stripped by the framer unless more follows, which is `Bad`).
            self.cr |= b == b'\r' && self.st != St::DoneCr;
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcptape_transport::stdio::is_exact_json;

    /// The scanner's verdict on `line` (no `\n` inside) fed in pieces of `k`.
    fn scan(line: &[u8], k: usize, watch: bool) -> Verdict {
        let mut s = LineScan::new(watch);
        for piece in line.chunks(k.max(1)) {
            assert_eq!(s.feed(piece), None);
        }
        let v = s.verdict();
        // A `\n` after the line gives the same verdict.
        let mut t = LineScan::new(watch);
        let mut with_nl = line.to_vec();
        with_nl.push(b'\n');
        assert_eq!(t.feed(&with_nl), Some(line.len()));
        assert_eq!(t.verdict(), v, "{:?}", String::from_utf8_lossy(line));
        v
    }

    /// What the framer decides for `line` (one trailing `\r` stripped).
    fn framer(line: &[u8]) -> bool {
        is_exact_json(line.strip_suffix(b"\r").unwrap_or(line))
    }

    fn corpus() -> Vec<Vec<u8>> {
        let mut lines: Vec<Vec<u8>> = [
            &br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#[..],
            br#"{"jsonrpc":"2.0","id":-0,"result":{"contents":[{"uri":"a:b","blob":"QUJD","x":[1.5e+3,-2E-1,0.25,true,false,null,{},[]]}]}}"#,
            br#"[1, 2 ,	3 ,{ "a" : "b" } ]"#,
            "\"h\u{e9}llo \u{20ac} \u{10348} \u{7ff} \u{ffff}\"".as_bytes(),
            br#""esc \" \\ \/ \b \f \n \r \t \u00e9 \uD800""#,
            b"0", b"-1", b"12.5", b"1e9", b"true", b"null", b"\"\"", b"{}", b"[]",
            b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            b"{\"a\":1}\r", b"1\r", b"\"a\"\r",
            // Not JSON, or not exactly one value:
            b"", b"\r", b" 1", b"1 ", b"{\"a\":1}\r\r", b"{\"a\":1} \r", b"01", b"1.", b"1e", b"-",
            b"tru", b"truex", b"nul", b"[1,]", b"{\"a\"}", b"{\"a\":1,}", b"{1:2}", b"[1 2]",
            b"\"a\tb\"", b"\"\\x\"", b"\"\\u12g4\"", b"\"\xc3\"", b"\"\xed\xa0\x80\"",
            b"\"\xf4\x90\x80\x80\"", b"\"\xe0\x80\x80\"", b"\"\xc0\x80\"", b"\xff", b"[1]]",
            b"]", b"{", b"[", b"\"abc", b"{\"a\":1}x", b"banner: server ready", b"1\r1",
            b"[1\r]", b"{\r\"a\":\t1 }",
        ]
        .iter()
        .map(|l| l.to_vec())
        .collect();
        // A long string with every special byte class in it.
        let mut long = b"{\"blob\":\"".to_vec();
        for i in 0..3000u32 {
            long.extend_from_slice(if i % 97 == 0 { b"\\n" } else { b"Q" });
        }
        long.extend_from_slice("\u{e9}\"}".as_bytes());
        lines.push(long);
        lines
    }

    /// Every corpus line, split in pieces of 1..=9 bytes and whole: the
    /// scanner accepts exactly the lines serde_json (the framer) accepts.
    #[test]
    fn scanner_accepts_exactly_what_the_framer_accepts_for_every_split() {
        for line in corpus() {
            let want = framer(&line);
            for k in (1..=9).chain([line.len()]) {
                let got = matches!(scan(&line, k, false), Verdict::Json(_));
                assert_eq!(
                    got,
                    want,
                    "{:?} in pieces of {k}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }

    /// Every one-byte mutation of the corpus lines (each position replaced by
    /// each byte of a set covering every scanner class): the scanner never
    /// accepts a line serde_json refuses, and accepts all it accepts.
    #[test]
    fn scanner_agrees_with_serde_json_on_every_one_byte_mutation() {
        let bytes =
            b" \t\r\"\\/{}[]:,.-+0179eEtfnlrsuabAF\x00\x1f\x7f\x80\xbf\xc2\xe0\xed\xf0\xf4\xff";
        let mut checked = 0;
        for line in corpus().into_iter().filter(|l| l.len() < 200) {
            for at in 0..line.len() {
                for &b in bytes {
                    let mut m = line.clone();
                    m[at] = b;
                    if m.contains(&b'\n') {
                        continue;
                    }
                    let got = matches!(scan(&m, 3, false), Verdict::Json(_));
                    assert_eq!(got, framer(&m), "{:?}", String::from_utf8_lossy(&m));
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// The pre-filter flags a client line naming `initialize`, `discover` or
    /// `protocolVersion` in a short string, or holding a `\u` escape; a long
    /// string holding the words does not count (nothing there can settle).
    #[test]
    fn settle_prefilter_flags_short_strings_and_unicode_escapes_only() {
        let flag = |l: &str| match scan(l.as_bytes(), 5, true) {
            Verdict::Json(s) => s.may_settle,
            Verdict::Unknown => panic!("{l}"),
        };
        assert!(flag(r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#));
        assert!(flag(r#"{"id":1,"method":"server\/discover"}"#));
        assert!(flag(
            r#"{"params":{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}"#
        ));
        assert!(flag(r#"{"method":"initi\u0061lize"}"#));
        assert!(!flag(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
        let long = format!(
            r#"{{"method":"ping","params":{{"text":"{}initialize"}}}}"#,
            "x".repeat(SETTLE_STRING_BYTES)
        );
        assert!(!flag(&long));
        let at_limit = format!(
            r#"{{"text":"{}initialize"}}"#,
            "x".repeat(SETTLE_STRING_BYTES - 10)
        );
        assert!(flag(&at_limit));
        // Not watching: never flagged.
        assert_eq!(
            scan(br#"{"method":"initialize"}"#, 4, false),
            Verdict::Json(Scanned {
                may_settle: false,
                line_break: false
            })
        );
    }

    /// `line_break` is set by a `\r` between tokens, not by the trailing
    /// `\r` the framer strips; the framer's raw-message writer needs it.
    #[test]
    fn line_break_flag_is_a_cr_inside_the_line_only() {
        let lb = |l: &[u8]| match scan(l, 2, false) {
            Verdict::Json(s) => s.line_break,
            Verdict::Unknown => panic!("{l:?}"),
        };
        assert!(!lb(b"{\"a\":[1,2]}"));
        assert!(!lb(b"{\"a\":[1,2]}\r"));
        assert!(!lb(b"12\r"));
        assert!(lb(b"{\"a\":\r1}"));
        assert!(lb(b"[1\r]\r"));
        assert!(lb(b"[1,\r2]"));
    }

    /// The run finder stops at the first special byte at every
    /// position of a word, and at none of the plain bytes.
    #[test]
    fn plain_prefix_stops_at_the_first_special_byte() {
        for b in 0u8..=255 {
            for at in 0..20 {
                let mut s = vec![b'a'; 20];
                s[at] = b;
                let want = if special(b) { at } else { 20 };
                assert_eq!(plain_prefix(&s), want, "byte {b:#x} at {at}");
            }
        }
        assert_eq!(plain_prefix(b" ~!#"), 4);
        // Across the 64-byte folds and the 4 KiB blocks.
        let n = 2 * PLAIN_BLOCK + 100;
        assert_eq!(plain_prefix(&vec![b'Q'; n]), n);
        for at in [
            0,
            63,
            64,
            65,
            PLAIN_BLOCK - 1,
            PLAIN_BLOCK,
            PLAIN_BLOCK + 64,
            n - 1,
        ] {
            for b in [b'"', b'\\', b'\n', 0x1f, 0x7f, 0x80, 0xff] {
                let mut s = vec![b'Q'; n];
                s[at] = b;
                let want = if special(b) { at } else { n };
                assert_eq!(plain_prefix(&s), want, "byte {b:#x} at {at}");
            }
        }
    }
}
