//! Base64 size arithmetic for `blob` (RFC 4648 §4, padded standard base64).
//!
//! Four characters carry three bytes, so `n` bytes become
//! `encoded_len(n) = 4 * ceil(n / 3)` characters, ending in
//! `padding_len(n) = (3 - n mod 3) mod 3` `=` signs. The seed's figures:
//! a 1,834,208-byte PNG is 2,445,612 characters ending in exactly one `=`;
//! 40 mockups at 3 MB (120 MB on disk) are 160 MB of base64.

/// Base64 length in characters (= bytes on the wire, before JSON quoting) of
/// `n` bytes: `4 * ceil(n / 3)`. Saturates at `u64::MAX` for `n` above
/// `u64::MAX / 4 * 3` (no real payload is that large); see [`checked_encoded_len`].
pub const fn encoded_len(n: u64) -> u64 {
    match checked_encoded_len(n) {
        Some(v) => v,
        None => u64::MAX,
    }
}

/// `4 * ceil(n / 3)`, or `None` when it does not fit in `u64`.
pub const fn checked_encoded_len(n: u64) -> Option<u64> {
    n.div_ceil(3).checked_mul(4)
}

/// Number of `=` padding characters (0, 1 or 2) at the end of the base64 of `n` bytes.
pub const fn padding_len(n: u64) -> u8 {
    ((3 - n % 3) % 3) as u8
}

/// Decoded length in bytes of a canonical base64 string of `encoded_len`
/// characters ending in `padding` `=` signs: `encoded_len / 4 * 3 - padding`.
/// `None` when `encoded_len` is not a multiple of 4, `padding > 2`, or the
/// string is too short to hold that padding.
pub const fn decoded_len(encoded_len: u64, padding: u8) -> Option<u64> {
    if !encoded_len.is_multiple_of(4) || padding > 2 || (encoded_len == 0 && padding > 0) {
        return None;
    }
    Some(encoded_len / 4 * 3 - padding as u64)
}

/// Number of trailing `=` in a base64 string (0, 1 or 2 for valid input;
/// counts all trailing `=` otherwise).
pub fn count_padding(b64: &[u8]) -> usize {
    b64.iter().rev().take_while(|&&c| c == b'=').count()
}
