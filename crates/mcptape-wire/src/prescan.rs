//! A pass over a long line's bytes as they arrive, while they are in cache: the
//! line's end (the first `\n`) and its long plain strings, so the envelope scan
//! of the whole line ([`scan_envelope_hinted`](crate::envelope::scan_envelope_hinted))
//! skips them instead of reading a 160 MB blob back from memory.
//!
//! A reader of newline-delimited JSON (MCP 2025-11-25 and 2026-07-28, Basic ›
//! Transports › stdio) searches every byte for `\n` anyway; [`LinePrescan::feed`]
//! does that search with the lexer's string kernel, which stops at `"`, `\` and
//! every byte below 0x20 (so at `\n`) and says whether a non-ASCII byte came
//! before the stop. Between two `"` it keeps the string's range when no stop byte
//! and no non-ASCII byte lies inside it and it is at least [`HINT_MIN_BYTES`] long:
//! such a string is valid JSON text (RFC 8259 §7: no escape, no control byte;
//! §8.1: ASCII is UTF-8) and ends at that `"`, whatever the grammar around it.
//!
//! **Sound whatever the bytes.** The pass does not parse: it tracks "inside a
//! string" from the quotes and escapes it sees, and a line that is not JSON can
//! fool that tracking. It cannot make a wrong hint: a kept range starts and ends
//! with `"` and holds no `"`, `\`, control or non-ASCII byte, which is all the
//! envelope scan takes from it (a string token starting at that `"` ends at the
//! range's end, unescaped and valid); the scan uses a range only where its own
//! grammar is at a string's opening quote, and ignores hints made for a line of
//! another length. Same results as [`scan_envelope`](crate::envelope::scan_envelope),
//! tested on every split of corpus and mutated lines.

use crate::lex::{KnownString, LONG_STRING_BYTES};
use crate::stop;

/// Shortest string (quotes included) a [`LinePrescan`] keeps: 4 KiB, the
/// length from which the envelope scan keeps its own validated strings.
/// Shorter ones cost less to search again than to keep.
pub const HINT_MIN_BYTES: usize = LONG_STRING_BYTES;

/// The long plain strings of one line, found by [`LinePrescan`] (opaque):
/// byte ranges into the line (quotes included), in order. Handed to
/// [`scan_envelope_hinted`](crate::envelope::scan_envelope_hinted) with the same
/// line's bytes; for a line of another length they are not used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlainStrings {
    /// The length of the line the ranges are into.
    pub(crate) line_len: usize,
    /// The strings, in line order (never escaped).
    pub(crate) strings: Vec<KnownString>,
}

impl PlainStrings {
    /// How many strings are kept.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// The bytes the kept strings cover (quotes included): what the envelope
    /// scan does not read again.
    pub fn covered_bytes(&self) -> usize {
        self.strings.iter().map(|k| k.end - k.start).sum()
    }

    /// The ranges, for the scan of a line of `line_len` bytes (none for another length).
    pub(crate) fn for_line(&self, line_len: usize) -> Vec<KnownString> {
        if line_len == self.line_len {
            self.strings.clone()
        } else {
            Vec::new()
        }
    }
}

/// The pass over one line, fed its bytes in order, in pieces of any size
/// (see the module docs). Memory: one range per kept string (at most one per
/// [`HINT_MIN_BYTES`] of the line).
#[derive(Debug, Clone, Default)]
pub struct LinePrescan {
    /// Bytes fed so far (offsets are from the line's first byte).
    fed: usize,
    /// Inside a string (after an opening `"`), as far as the pass can tell.
    in_string: bool,
    /// Offset of that string's opening `"`.
    start: usize,
    /// No `\`, control or non-ASCII byte in that string so far.
    plain: bool,
    /// The last piece ended with a `\` inside a string: the next byte is escaped.
    escape_next: bool,
    strings: Vec<KnownString>,
}

impl LinePrescan {
    /// A pass at the start of a line.
    pub fn new() -> Self {
        LinePrescan::default()
    }

    /// Bytes fed so far.
    pub fn fed(&self) -> usize {
        self.fed
    }

    /// Feeds the next bytes of the line. Returns the offset in `piece` of the
    /// first `\n` (the line ends before it; the bytes from it on were not
    /// taken: start a new pass for the next line), or `None` when `piece`
    /// holds none (every `\n` is found: an escape never hides one).
    pub fn feed(&mut self, piece: &[u8]) -> Option<usize> {
        let mut i = 0;
        if self.escape_next && !piece.is_empty() {
            self.escape_next = false;
            if piece[0] != b'\n' {
                i = 1;
            }
        }
        while i < piece.len() {
            let st = stop::find_stop(&piece[i..]);
            if st.non_ascii {
                self.plain = false;
            }
            let p = i + st.at;
            let Some(&b) = piece.get(p) else { break };
            match b {
                b'\n' => {
                    self.fed += p;
                    return Some(p);
                }
                b'"' if self.in_string => {
                    let end = self.fed + p + 1;
                    if self.plain && end - self.start >= HINT_MIN_BYTES {
                        self.strings.push(KnownString {
                            start: self.start,
                            end,
                            escaped: false,
                        });
                    }
                    self.in_string = false;
                }
                b'"' => {
                    self.in_string = true;
                    self.start = self.fed + p;
                    self.plain = true;
                }
                b'\\' if self.in_string => {
                    self.plain = false;
                    match piece.get(p + 1) {
                        // Not skipped: it ends the line.
                        Some(b'\n') => i = p + 1,
                        Some(_) => i = p + 2,
                        None => {
                            self.escape_next = true;
                            i = p + 1;
                        }
                    }
                    continue;
                }
                // A control byte in a string (invalid: that string is not kept),
                // or a `\` outside one (invalid JSON; the scan says so).
                _ => self.plain = false,
            }
            i = p + 1;
        }
        self.fed += piece.len();
        None
    }

    /// The strings kept, for the line of `line_len` bytes (the bytes fed before
    /// its `\n`, less a stripped trailing `\r`).
    pub fn finish(self, line_len: usize) -> PlainStrings {
        let mut strings = self.strings;
        strings.retain(|k| k.end <= line_len);
        PlainStrings { line_len, strings }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{scan_envelope, scan_envelope_hinted};
    use crate::fuzzing::blob_reply;

    /// The pass over `line` in pieces cut at `cuts`; checks the `\n` it
    /// reports against memchr.
    fn prescan(line: &[u8], cuts: &[usize]) -> (PlainStrings, Option<usize>) {
        let mut ps = LinePrescan::new();
        let mut at = 0;
        let mut nl = None;
        for &c in cuts.iter().chain(std::iter::once(&line.len())) {
            let c = c.clamp(at, line.len());
            if let Some(i) = ps.feed(&line[at..c]) {
                nl = Some(at + i);
                break;
            }
            at = c;
        }
        assert_eq!(nl, memchr::memchr(b'\n', line), "{cuts:?}");
        let len = nl.unwrap_or(line.len());
        (ps.finish(len), nl)
    }

    /// Every kept range starts and ends with `"` and holds no stop or
    /// non-ASCII byte (what makes a hint sound).
    fn assert_sound(line: &[u8], h: &PlainStrings) {
        for k in &h.strings {
            assert!(k.end - k.start >= HINT_MIN_BYTES);
            assert_eq!(line[k.start], b'"');
            assert_eq!(line[k.end - 1], b'"');
            let inner = &line[k.start + 1..k.end - 1];
            assert!(
                inner
                    .iter()
                    .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\'),
                "range {}..{}",
                k.start,
                k.end
            );
        }
    }

    #[test]
    fn a_blob_reply_split_at_every_boundary_near_its_strings_keeps_the_same_hints() {
        let line = blob_reply(&[8192, 100, 4096, 12_000]);
        let (whole, _) = prescan(&line, &[]);
        assert_eq!(whole.len(), 3, "the 100-byte blob is too short to keep");
        assert_sound(&line, &whole);
        let env = scan_envelope(&line).unwrap();
        assert_eq!(scan_envelope_hinted(&line, &whole).unwrap(), env);
        // Cuts at and around every quote, backslash and kept string's ends.
        let mut points: Vec<usize> = line
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'"')
            .map(|(i, _)| i)
            .collect();
        points.extend(whole.strings.iter().flat_map(|k| [k.start, k.end]));
        for &p in &points {
            for c in p.saturating_sub(2)..=p + 2 {
                let (h, nl) = prescan(&line, &[c]);
                assert_eq!(nl, None);
                assert_eq!(h, whole, "cut at {c}");
            }
        }
    }

    #[test]
    fn newline_after_the_line_at_every_cut_is_found_where_memchr_finds_it() {
        let mut line = blob_reply(&[5000]);
        let len = line.len();
        line.extend_from_slice(b"\r\n{\"next\":1}\n");
        for c in len.saturating_sub(3)..=len + 3 {
            let (h, nl) = prescan(&line, &[c]);
            assert_eq!(nl, Some(len + 1));
            assert_eq!(h.line_len, len + 1);
            assert_eq!(h.len(), 1);
        }
    }

    #[test]
    fn an_escape_before_the_newline_does_not_hide_it() {
        for line in [&b"{\"a\":\"x\\\n\"}"[..], b"\"\\", b"\\\n", b"\"ab\\\\\"\n"] {
            for c in 0..=line.len() {
                let _ = prescan(line, &[c]);
            }
        }
    }

    #[test]
    fn strings_with_an_escape_a_control_byte_or_non_ascii_are_not_kept() {
        let long = "A".repeat(HINT_MIN_BYTES);
        for inner in [
            format!("{long}\\n{long}"),
            format!("{long}\u{1}{long}"),
            format!("{long}é{long}"),
            format!("{long}\\\"{long}"),
        ] {
            let line = format!(r#"{{"a":"{inner}","b":"{long}"}}"#).into_bytes();
            for c in [0, 7, HINT_MIN_BYTES, HINT_MIN_BYTES + 6, HINT_MIN_BYTES + 8] {
                let (h, _) = prescan(&line, &[c]);
                assert_sound(&line, &h);
                assert_eq!(h.len(), 1, "only \"b\" is plain");
                assert_eq!(
                    scan_envelope_hinted(&line, &h).map_err(|e| e.to_string()),
                    scan_envelope(&line).map_err(|e| e.to_string())
                );
            }
        }
    }

    #[test]
    fn hints_for_a_line_of_another_length_are_not_used() {
        let line = blob_reply(&[8192]);
        let (h, _) = prescan(&line, &[]);
        assert_eq!(h.len(), 1);
        // The same string one byte shorter: a hint used there would skip its end.
        let k = h.strings[0].clone();
        let mut other = line.clone();
        other.remove(k.start + 1);
        other[k.end - 3] = b'"';
        assert_eq!(h.for_line(other.len()), Vec::new());
        assert_eq!(
            scan_envelope_hinted(&other, &h).map_err(|e| e.to_string()),
            scan_envelope(&other).map_err(|e| e.to_string())
        );
    }

    /// Every one-byte change of a reply (to each byte that matters to the
    /// pass or the grammar), split in three: the hinted scan gives what the
    /// plain scan gives, and every hint is sound.
    #[test]
    fn mutated_replies_scan_the_same_with_and_without_hints() {
        let line = blob_reply(&[4200, 4096]);
        let quotes: Vec<usize> = (0..line.len())
            .filter(|&i| matches!(line[i], b'"' | b'{' | b'}' | b':' | b','))
            .chain([200, 4400, line.len() / 2])
            .collect();
        for &i in &quotes {
            for to in [b'"', b'\\', b'\n', 0x01, 0xC3, 0xFF, b'A', b' '] {
                let mut m = line.clone();
                m[i] = to;
                for cut in [i.saturating_sub(1), i, i + 1] {
                    let (h, nl) = prescan(&m, &[cut, cut + 4096]);
                    assert_sound(&m, &h);
                    let l = &m[..nl.unwrap_or(m.len())];
                    assert_eq!(
                        scan_envelope_hinted(l, &h).map_err(|e| e.to_string()),
                        scan_envelope(l).map_err(|e| e.to_string()),
                        "byte {i} to {to:#x}, cut {cut}"
                    );
                }
            }
        }
    }
}
