//! Strict standard base64 (RFC 4648 §4: alphabet `A-Z a-z 0-9 + /`, `=` padding
//! required, canonical trailing bits), one dispatch point per operation.
//!
//! MCP `BlobResourceContents.blob` (spec revision 2026-07-28, "Resources" →
//! "Binary content") is this encoding. Every [`Path`] accepts exactly the same
//! strings and reports exactly the same [`Base64Error`] (kind and byte offset):
//! the fast paths only decide accept/reject, and on a reject the error is
//! produced by one reference scan ([`first_error`]) — errors are the cold path.

use base64::Engine as _;

/// Which implementation runs an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Path {
    /// The `base64` crate's standard engine (always compiled, the reference).
    #[default]
    Scalar,
    /// `base64-simd` (AVX2 / SSSE3 / SSE4.1 / NEON picked at run time by CPU
    /// detection, so a portable build still uses SIMD where the CPU has it).
    Simd,
}

impl Path {
    /// Every path, for differential tests and benches.
    pub const ALL: [Path; 2] = [Path::Scalar, Path::Simd];

    /// Short name used in bench IDs (`scalar`, `simd`).
    pub fn name(self) -> &'static str {
        match self {
            Path::Scalar => "scalar",
            Path::Simd => "simd",
        }
    }
}

/// Why a base64 string was rejected. Offsets are byte offsets into the base64
/// text; the error reported is the first one met by a left-to-right scan (see
/// [`first_error`] for the exact order).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Base64Error {
    /// A byte outside `A-Z a-z 0-9 + /` and not `=`. `offset` is the byte offset
    /// into the base64 text.
    #[error("invalid base64 byte 0x{byte:02x} at offset {offset}")]
    InvalidByte {
        /// Byte offset of the first bad character.
        offset: usize,
        /// The bad byte.
        byte: u8,
    },
    /// Length not a multiple of 4 (padding missing or extra characters).
    #[error("invalid base64 length {len} (not a multiple of 4)")]
    InvalidLength {
        /// Length of the base64 text in bytes.
        len: usize,
    },
    /// The last symbol has non-zero bits that the padding discards (non-canonical).
    #[error("non-canonical base64: trailing bits set at offset {offset}")]
    TrailingBits {
        /// Byte offset of the offending last symbol.
        offset: usize,
    },
    /// Padding in the wrong place or amount: `=` in the first two positions of
    /// a group, a third `=`, or any symbol after padding.
    #[error("invalid base64 padding at offset {offset}")]
    InvalidPadding {
        /// Byte offset where padding went wrong.
        offset: usize,
    },
}

impl Base64Error {
    /// The same error with its offset moved by `delta` bytes (used to report
    /// offsets into a whole JSON response rather than into one blob string).
    /// `InvalidLength` keeps its length.
    #[must_use]
    pub fn shifted(self, delta: usize) -> Self {
        match self {
            Base64Error::InvalidByte { offset, byte } => Base64Error::InvalidByte {
                offset: offset + delta,
                byte,
            },
            Base64Error::InvalidLength { len } => Base64Error::InvalidLength { len },
            Base64Error::TrailingBits { offset } => Base64Error::TrailingBits {
                offset: offset + delta,
            },
            Base64Error::InvalidPadding { offset } => Base64Error::InvalidPadding {
                offset: offset + delta,
            },
        }
    }

    /// Byte offset of the error in the base64 text (`len` for `InvalidLength`).
    pub fn offset(&self) -> usize {
        match *self {
            Base64Error::InvalidByte { offset, .. }
            | Base64Error::TrailingBits { offset }
            | Base64Error::InvalidPadding { offset } => offset,
            Base64Error::InvalidLength { len } => len,
        }
    }
}

/// Decoded value of each byte in the standard alphabet; `0xff` = not in it.
pub(crate) const DECODE_TABLE: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let alphabet = ALPHABET;
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// The standard alphabet (RFC 4648 §4, Table 1).
pub(crate) const ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Exact decoded length of `encoded_len` bytes of valid padded base64 whose
/// last group has `pad` `=` signs (0..=2). Upper bound when `pad` is 0.
pub const fn decoded_len_upper_bound(encoded_len: usize) -> usize {
    encoded_len / 4 * 3
}

/// Length of the padded standard base64 text for `n` bytes: `4 * ceil(n / 3)`
/// (RFC 4648 §4). `1_834_208` bytes → `2_445_612` characters.
pub const fn encoded_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// The reference scan that defines which error a rejected string gets. Returns
/// `None` when `input` is valid strict padded base64.
///
/// Order (left to right, first hit wins):
/// 1. a byte that is neither in the alphabet nor `=` → `InvalidByte`;
/// 2. `=` at position 0 or 1 of a 4-symbol group, a `=` after a `=` that was
///    not at position 2, or an alphabet symbol after padding → `InvalidPadding`;
/// 3. at the end: length not a multiple of 4 → `InvalidLength`;
/// 4. the symbol before the padding has bits the padding discards → `TrailingBits`.
pub fn first_error(input: &[u8]) -> Option<Base64Error> {
    let mut pad_start: Option<usize> = None;
    for (i, &b) in input.iter().enumerate() {
        if DECODE_TABLE[b as usize] != 0xff {
            if pad_start.is_some() {
                return Some(Base64Error::InvalidPadding { offset: i });
            }
        } else if b == b'=' {
            match pad_start {
                None if i % 4 >= 2 => pad_start = Some(i),
                Some(p) if p % 4 == 2 && i == p + 1 => {}
                _ => return Some(Base64Error::InvalidPadding { offset: i }),
            }
        } else {
            return Some(Base64Error::InvalidByte { offset: i, byte: b });
        }
    }
    if !input.len().is_multiple_of(4) {
        return Some(Base64Error::InvalidLength { len: input.len() });
    }
    if let Some(p) = pad_start {
        // p >= 2 here, and input[p - 1] is an alphabet symbol.
        let last = DECODE_TABLE[input[p - 1] as usize];
        let mask = if p % 4 == 2 { 0x0f } else { 0x03 };
        if last & mask != 0 {
            return Some(Base64Error::TrailingBits { offset: p - 1 });
        }
    }
    None
}

/// The reference error for an input some fast path rejected. Never panics: if
/// the reference scan finds nothing (a disagreement the differential tests
/// exist to catch), the fast path's own verdict is kept as `InvalidByte` at 0.
fn reference_error(input: &[u8]) -> Base64Error {
    first_error(input).unwrap_or(Base64Error::InvalidByte {
        offset: 0,
        byte: input.first().copied().unwrap_or(0),
    })
}

/// Checks that `input` is strict padded standard base64 (RFC 4648 §4, zero
/// trailing bits) without decoding it: the in-place validation `check` and
/// `inspect` use on 160 MB reads (the decoded size then follows from
/// [`b64::decoded_len`](crate::b64::decoded_len)). One dispatch point:
/// [`Path::Simd`] runs `base64_simd`'s check, [`Path::Scalar`] the reference scan.
///
/// Errors: [`Base64Error`], identical on both paths (kind and offset).
pub fn validate(path: Path, input: &[u8]) -> Result<(), Base64Error> {
    let ok = match path {
        Path::Scalar => first_error(input).is_none(),
        Path::Simd => base64_simd::STANDARD.check(input).is_ok(),
    };
    if ok {
        Ok(())
    } else {
        Err(reference_error(input))
    }
}

/// Decodes strict standard base64 with `path` into a fresh `Vec`.
///
/// Errors: [`Base64Error`], identical on every path (kind and offset).
pub fn decode(path: Path, input: &[u8]) -> Result<Vec<u8>, Base64Error> {
    let mut out = Vec::new();
    decode_append(path, input, &mut out)?;
    Ok(out)
}

/// Decodes strict standard base64 with `path`, appending the bytes to `out`
/// (no intermediate buffer). On error `out` is left at its old length.
///
/// Errors: [`Base64Error`], identical on every path (kind and offset).
pub fn decode_append(path: Path, input: &[u8], out: &mut Vec<u8>) -> Result<(), Base64Error> {
    let old = out.len();
    let ok = match path {
        Path::Scalar => base64::engine::general_purpose::STANDARD
            .decode_vec(input, out)
            .is_ok(),
        Path::Simd => base64_simd::STANDARD.decode_append(input, out).is_ok(),
    };
    if ok {
        Ok(())
    } else {
        out.truncate(old);
        Err(reference_error(input))
    }
}

/// Encodes bytes as standard padded base64 with `path` (`encoded_len(n)` chars).
pub fn encode(path: Path, input: &[u8]) -> String {
    let mut out = String::new();
    encode_append(path, input, &mut out);
    out
}

/// Encodes bytes as standard padded base64 with `path`, appending to `out`.
pub fn encode_append(path: Path, input: &[u8], out: &mut String) {
    match path {
        Path::Scalar => base64::engine::general_purpose::STANDARD.encode_string(input, out),
        Path::Simd => base64_simd::STANDARD.encode_append(input, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_png_size_arithmetic() {
        // resources-read-response seed: 1,834,208 bytes → 2,445,612 chars, one '='.
        assert_eq!(encoded_len(1_834_208), 2_445_612);
        let data = vec![7u8; 1_834_208];
        for path in Path::ALL {
            let s = encode(path, &data);
            assert_eq!(s.len(), 2_445_612);
            assert!(s.ends_with("=") && !s.ends_with("=="));
            assert_eq!(decode(path, s.as_bytes()).unwrap(), data);
        }
    }

    #[test]
    fn error_kinds_and_offsets() {
        let cases: &[(&[u8], Option<Base64Error>)] = &[
            (b"", None),
            (b"AA==", None),
            (b"AAA=", None),
            (b"AAAA", None),
            (b"AB==", Some(Base64Error::TrailingBits { offset: 1 })),
            (b"AAB=", Some(Base64Error::TrailingBits { offset: 2 })),
            (b"A===", Some(Base64Error::InvalidPadding { offset: 1 })),
            (b"====", Some(Base64Error::InvalidPadding { offset: 0 })),
            (b"AA=A", Some(Base64Error::InvalidPadding { offset: 3 })),
            (b"AA==AAAA", Some(Base64Error::InvalidPadding { offset: 4 })),
            (b"AAA==", Some(Base64Error::InvalidPadding { offset: 4 })),
            (b"AA=", Some(Base64Error::InvalidLength { len: 3 })),
            (b"AAAAA", Some(Base64Error::InvalidLength { len: 5 })),
            (
                b"AA!A",
                Some(Base64Error::InvalidByte {
                    offset: 2,
                    byte: b'!',
                }),
            ),
            (
                b"AAAA\nAAA",
                Some(Base64Error::InvalidByte {
                    offset: 4,
                    byte: b'\n',
                }),
            ),
            (
                b"AA-_",
                Some(Base64Error::InvalidByte {
                    offset: 2,
                    byte: b'-',
                }),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                &first_error(input),
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
            for path in Path::ALL {
                let got = decode(path, input).err();
                assert_eq!(&got, want, "{path:?} {:?}", String::from_utf8_lossy(input));
                // The in-place check (no decode) gives the same verdict on every path.
                let checked = validate(path, input).err();
                assert_eq!(
                    &checked,
                    want,
                    "validate {path:?} {:?}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}
