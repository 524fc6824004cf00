//! RFC 3339 date-times as µs since the Unix epoch: the one formatter and the one parser
//! of the workspace (the header's `startedAt`, HAR's `startedDateTime`, k6's point times),
//! both through [`jiff`].
//!
//! ```
//! use mcptape_transcript::time::{format_rfc3339_us, parse_rfc3339_us};
//!
//! let us = parse_rfc3339_us("2026-12-01T23:34:22.139483+01:00").unwrap();
//! assert_eq!(format_rfc3339_us(us, 6).unwrap(), "2026-12-01T22:34:22.139483Z");
//! assert_eq!(format_rfc3339_us(us, 3).unwrap(), "2026-12-01T22:34:22.139Z");
//! ```

use jiff::Timestamp;

/// Why a date-time could not be parsed or formatted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// The text is not an RFC 3339 date-time with an offset (`2026-12-01T22:10:00Z`,
    /// `…T22:10:00.123456789+01:00`); the text as given.
    #[error("time {0:?} is not an RFC 3339 date-time")]
    NotRfc3339(String),
    /// The instant (µs since the Unix epoch) lies outside the years -9999 to 9999 that
    /// a four-digit year can write (less about a day at either end: [`jiff::Timestamp::MAX`]).
    #[error("time {0} µs since the Unix epoch is outside the years RFC 3339 can write")]
    OutOfRange(i64),
}

/// µs since the Unix epoch as RFC 3339 UTC with `fraction_digits` digits of fraction
/// (0 to 9; `2026-12-01T22:34:22.139483Z` for 6, `2026-11-30T00:46:25.123Z` for 3);
/// the fraction is truncated, never rounded up.
///
/// # Errors
/// [`TimeError::OutOfRange`] past the year 9999 or before -9999.
pub fn format_rfc3339_us(us: i64, fraction_digits: u8) -> Result<String, TimeError> {
    let t = Timestamp::from_microsecond(us).map_err(|_| TimeError::OutOfRange(us))?;
    Ok(format!(
        "{t:.prec$}",
        prec = usize::from(fraction_digits.min(9))
    ))
}

/// An RFC 3339 date-time (`2026-12-01T22:10:00.123456789Z`, `…+01:00`; `t`/`z` in
/// lower case too) as µs since the Unix epoch; digits past the µs are truncated.
///
/// # Errors
/// [`TimeError::NotRfc3339`] for a text without a full date, time and offset.
pub fn parse_rfc3339_us(s: &str) -> Result<i64, TimeError> {
    let t: Timestamp = s.parse().map_err(|_| TimeError::NotRfc3339(s.to_owned()))?;
    Ok(t.as_microsecond())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_format_and_parse_back() {
        assert_eq!(format_rfc3339_us(0, 3).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_rfc3339_us(0, 6).unwrap(),
            "1970-01-01T00:00:00.000000Z"
        );
        let leap = parse_rfc3339_us("2024-02-29T23:59:59.999999Z").unwrap();
        assert_eq!(
            format_rfc3339_us(leap, 6).unwrap(),
            "2024-02-29T23:59:59.999999Z"
        );
        assert_eq!(
            format_rfc3339_us(leap + 1, 6).unwrap(),
            "2024-03-01T00:00:00.000000Z"
        );
        assert_eq!(
            format_rfc3339_us(leap, 3).unwrap(),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            format_rfc3339_us(-1, 6).unwrap(),
            "1969-12-31T23:59:59.999999Z"
        );
    }

    #[test]
    fn instants_past_the_last_writable_one_are_out_of_range() {
        let late = parse_rfc3339_us("9999-12-30T00:00:00Z").unwrap();
        assert_eq!(format_rfc3339_us(late, 0).unwrap(), "9999-12-30T00:00:00Z");
        let past = late + 2 * 86_400 * 1_000_000;
        assert_eq!(format_rfc3339_us(past, 6), Err(TimeError::OutOfRange(past)));
        assert_eq!(
            format_rfc3339_us(i64::MIN, 6),
            Err(TimeError::OutOfRange(i64::MIN))
        );
    }

    #[test]
    fn offsets_lower_case_and_nanoseconds_parse() {
        let upper = parse_rfc3339_us("2026-12-01T22:10:00.123456789Z").unwrap();
        assert_eq!(upper, 1_796_163_000_123_456);
        assert_eq!(
            parse_rfc3339_us("2026-12-01t23:40:00.123456z+01:30"),
            Err(TimeError::NotRfc3339(
                "2026-12-01t23:40:00.123456z+01:30".into()
            ))
        );
        assert_eq!(
            parse_rfc3339_us("2026-12-01t23:40:00.123456+01:30").unwrap(),
            upper
        );
        for bad in [
            "2026-12-01",
            "2026-02-30T00:00:00Z",
            "2026-12-01T22:10:00",
            "x",
        ] {
            assert_eq!(
                parse_rfc3339_us(bad),
                Err(TimeError::NotRfc3339(bad.to_owned())),
                "{bad}"
            );
        }
    }
}
