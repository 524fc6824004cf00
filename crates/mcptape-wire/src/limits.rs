//! Named wire limits, each with its own error variant
//! ([`JsonErrorKind::MessageTooLarge`], [`JsonErrorKind::NestingTooDeep`]).
//!
//! Both are checked by the strict JSON scanner ([`json::check`](crate::json::check))
//! *before* serde sees the bytes, so no parser recursion or allocation
//! happens past them.

use crate::error::{JsonError, JsonErrorKind};

/// Largest message the wire layer parses, in bytes: 256 MiB (268,435,456 bytes).
///
/// Sized for the seed's worst case, a directory read of 40 design mockups at
/// 3 MB each: 120 MB on disk, 160,000,000 bytes of base64 plus JSON overhead,
/// which must still parse. Longer input fails with
/// [`JsonErrorKind::MessageTooLarge`] at offset `MAX_MESSAGE_BYTES`.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// Deepest nesting of arrays and objects the wire layer parses, in levels (the
/// top-level value is level 1): 64.
///
/// Kept below serde_json's own recursion limit (128 levels, which fails
/// *at* 128) so that our limit, with its own error and offset, is the one a
/// peer hits. An MCP `resources/read` response needs 5 levels plus whatever
/// `_meta` carries. Deeper input fails with [`JsonErrorKind::NestingTooDeep`].
pub const MAX_NESTING_DEPTH: usize = 64;

/// Checks a message length (bytes) against [`MAX_MESSAGE_BYTES`].
///
/// Errors: [`JsonErrorKind::MessageTooLarge`] at offset `MAX_MESSAGE_BYTES`.
pub fn check_message_size(len: usize) -> Result<(), JsonError> {
    if len > MAX_MESSAGE_BYTES {
        return Err(JsonError::new(
            JsonErrorKind::MessageTooLarge {
                len,
                max: MAX_MESSAGE_BYTES,
            },
            MAX_MESSAGE_BYTES,
        ));
    }
    Ok(())
}

/// Checks a nesting level (1 = top-level value) against [`MAX_NESTING_DEPTH`];
/// `offset` is the byte offset of the `[`/`{` that opens the level.
///
/// Errors: [`JsonErrorKind::NestingTooDeep`] at `offset`.
pub fn check_nesting_depth(depth: usize, offset: usize) -> Result<(), JsonError> {
    if depth > MAX_NESTING_DEPTH {
        return Err(JsonError::new(
            JsonErrorKind::NestingTooDeep {
                max: MAX_NESTING_DEPTH,
            },
            offset,
        ));
    }
    Ok(())
}
