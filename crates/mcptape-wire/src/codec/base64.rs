//! Strict standard base64 (RFC 4648 §4, padded, canonical trailing bits),
//! one dispatch point per operation.

use base64::Engine as _;

/// Which implementation runs an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Path {
    /// The `base64` crate's standard engine (always compiled, the reference).
    #[default]
    Scalar,
}

/// Why a base64 string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Base64Error {
    /// A byte outside `A-Z a-z 0-9 + /`, or `=` before the end. `offset` is the
    /// byte offset into the base64 text.
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
    /// Padding in the wrong place or amount.
    #[error("invalid base64 padding at offset {offset}")]
    InvalidPadding {
        /// Byte offset where padding went wrong.
        offset: usize,
    },
}

/// Decodes strict standard base64 with `path`. Errors: [`Base64Error`].
pub fn decode(path: Path, input: &[u8]) -> Result<Vec<u8>, Base64Error> {
    match path {
        Path::Scalar => decode_scalar(input),
    }
}

/// Encodes bytes as standard padded base64 with `path`.
pub fn encode(path: Path, input: &[u8]) -> String {
    match path {
        Path::Scalar => base64::engine::general_purpose::STANDARD.encode(input),
    }
}

fn decode_scalar(input: &[u8]) -> Result<Vec<u8>, Base64Error> {
    base64::engine::general_purpose::STANDARD
        .decode(input)
        .map_err(|e| match e {
            base64::DecodeError::InvalidByte(offset, byte) => {
                if byte == b'=' {
                    Base64Error::InvalidPadding { offset }
                } else {
                    Base64Error::InvalidByte { offset, byte }
                }
            }
            base64::DecodeError::InvalidLength(len) => Base64Error::InvalidLength { len },
            base64::DecodeError::InvalidLastSymbol(offset, _) => {
                Base64Error::TrailingBits { offset }
            }
            base64::DecodeError::InvalidPadding => Base64Error::InvalidPadding {
                offset: input.iter().position(|&b| b == b'=').unwrap_or(input.len()),
            },
        })
}
