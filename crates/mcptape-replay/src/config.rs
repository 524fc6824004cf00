//! Validation of `bench` and `verify` settings before a run, so a long run never starts on a
//! setting that makes it meaningless. Settings arrive as typed by a person (durations such as
//! `800ms`, a rate such as `200/s`); errors name the setting by its command-line flag
//! (`--deadline 0ms must be longer than 0: …`) and give the value as typed.

use std::fmt;
use std::path::Path;

use tokio::time::Duration;

use mcptape_report::run::{MAX_IN_FLIGHT, MAX_PARALLEL};

use crate::latency::{MAX_DELAY_US, MAX_SPEC_LEN, SpecErrorKind, parse_duration_capped_us};

/// Most entries of `--mix METHOD=W,…` and of `--methods`: 32.
pub const MAX_MIX_ENTRIES: usize = 32;

/// Highest open-loop rate accepted (`--rate`), reads per second: 1,000,000.
pub const MAX_RATE_PER_S: f64 = 1_000_000.0;

/// Which rule a setting broke. `#[non_exhaustive]`: new rules may be added.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigErrorKind {
    /// A duration did not parse or is above its limit (the parser's reason).
    Duration(SpecErrorKind),
    /// A spec parsed on its own (`--latency`, `--fault`, a bare duration:
    /// [`crate::latency::LatencyModel::parse`], [`crate::latency::FaultSpec::parse`],
    /// [`crate::latency::parse_duration_us`]) is wrong at [`ConfigError::offset`]; the
    /// [`flag`](ConfigError::flag) is empty.
    Spec(SpecErrorKind),
    /// `--rate` is not a number followed by `/s`.
    BadRate,
    /// `--rate` is a bare number: a rate carries its unit (`200/s`, not `200`), as durations do.
    RateWithoutUnit,
    /// `--rate` is not in (0, [`MAX_RATE_PER_S`]].
    RateOutOfRange,
    /// `--deadline` is 0: every turn would be cancelled at once.
    ZeroDeadline,
    /// `--timeout` is 0: it bounds every read and the handshake.
    ZeroTimeout,
    /// `--timeout` is shorter than `--deadline` (the other value, as typed, is carried).
    TimeoutBelowDeadline(String),
    /// `--max-phase` is 0.
    ZeroMaxPhase,
    /// `--reads 0` and `--turns 0`.
    NothingToMeasure,
    /// `--parallel` outside 1..=[`MAX_PARALLEL`].
    ParallelOutOfRange,
    /// `--concurrency` outside 1..=[`MAX_PARALLEL`].
    ConcurrencyOutOfRange,
    /// `--max-in-flight` outside 1..=[`MAX_IN_FLIGHT`].
    MaxInFlightOutOfRange,
    /// `--out` exists and is not a directory.
    OutNotADirectory,
    /// `--out` cannot be created (the I/O error's text).
    OutNotCreatable(String),
    /// `--out` is not writable (the I/O error's text).
    OutNotWritable(String),
    /// `--ignore` does not start with `/` (RFC 6901 §3).
    PointerNoSlash,
    /// `--ignore` has a `~` not followed by `0` or `1` (RFC 6901 §3).
    PointerBadEscape,
    /// `--mix` item `index` (from 0) is not `METHOD=WEIGHT` (nor the whole of `recorded` or
    /// `uniform`).
    MixItem(usize),
    /// `--mix` item `index` (from 0) has a weight that is not a finite number > 0.
    MixWeight(usize),
    /// `--mix` or `--methods` has more than [`MAX_MIX_ENTRIES`] items (the
    /// count given).
    TooManyMethods(usize),
    /// `--methods` item `index` (from 0) is empty.
    EmptyMethod(usize),
}

/// A rejected setting: the flag it came from ([`flag`](Self::flag), e.g. `--deadline`), the
/// value as typed ([`value`](Self::value)), where in it ([`offset`](Self::offset), for a spec)
/// and the rule ([`kind`](Self::kind)). The one error of a setting typed by a person: a
/// `--latency`/`--fault` spec parsed on its own is one too ([`ConfigErrorKind::Spec`]; Display
/// `invalid spec "fixed:x" at byte 6: bad duration "x" (…)`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    flag: &'static str,
    value: String,
    offset: Option<usize>,
    kind: ConfigErrorKind,
}

impl ConfigError {
    pub(crate) fn new(flag: &'static str, value: impl Into<String>, kind: ConfigErrorKind) -> Self {
        Self {
            flag,
            value: value.into(),
            offset: None,
            kind,
        }
    }

    /// A [`ConfigErrorKind::Spec`] at byte `offset` of `spec` (kept up to [`MAX_SPEC_LEN`]
    /// bytes).
    pub(crate) fn spec(spec: &str, offset: usize, kind: SpecErrorKind) -> Self {
        let mut cut = spec.len().min(MAX_SPEC_LEN);
        while !spec.is_char_boundary(cut) {
            cut -= 1;
        }
        Self {
            flag: "",
            value: spec[..cut].to_owned(),
            offset: Some(offset),
            kind: ConfigErrorKind::Spec(kind),
        }
    }

    /// Byte offset in [`value`](Self::value) of the part that failed, for a
    /// [`ConfigErrorKind::Spec`].
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The spec's reason, for [`ConfigErrorKind::Spec`] and [`ConfigErrorKind::Duration`].
    pub fn spec_kind(&self) -> Option<&SpecErrorKind> {
        match &self.kind {
            ConfigErrorKind::Spec(k) | ConfigErrorKind::Duration(k) => Some(k),
            _ => None,
        }
    }

    /// The spec's reason of an error from a spec or duration parser (always one of the two
    /// kinds [`spec_kind`](Self::spec_kind) answers for).
    pub(crate) fn into_spec_kind(self) -> SpecErrorKind {
        match self.kind {
            ConfigErrorKind::Spec(k) | ConfigErrorKind::Duration(k) => k,
            _ => SpecErrorKind::BadDuration(self.value),
        }
    }

    /// The flag of the setting, e.g. `--deadline`.
    pub fn flag(&self) -> &'static str {
        self.flag
    }

    /// The value as typed, e.g. `0ms`.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The rule broken.
    pub fn kind(&self) -> &ConfigErrorKind {
        &self.kind
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (flag, v) = (self.flag, &self.value);
        match &self.kind {
            ConfigErrorKind::Duration(k) => write!(f, "{flag} {v}: {k}"),
            ConfigErrorKind::Spec(k) => write!(
                f,
                "invalid spec {v:?} at byte {}: {k}",
                self.offset.unwrap_or(0)
            ),
            ConfigErrorKind::BadRate => write!(f, "{flag} {v:?}: expected e.g. 200/s"),
            ConfigErrorKind::RateWithoutUnit => write!(
                f,
                "{flag} {v:?}: a rate needs its unit, per second: {}/s",
                v.trim()
            ),
            ConfigErrorKind::MixItem(i) => write!(
                f,
                "{flag} {v:?}: item {} is not METHOD=WEIGHT (or give recorded or uniform)",
                i + 1
            ),
            ConfigErrorKind::MixWeight(i) => write!(
                f,
                "{flag} {v:?}: the weight of item {} must be a finite number > 0",
                i + 1
            ),
            ConfigErrorKind::TooManyMethods(n) => {
                write!(f, "{flag} {v:?}: {n} items, at most {}", MAX_MIX_ENTRIES)
            }
            ConfigErrorKind::EmptyMethod(i) => {
                write!(f, "{flag} {v:?}: item {} is empty", i + 1)
            }
            ConfigErrorKind::RateOutOfRange => {
                write!(f, "{flag} {v:?} must be in (0, {MAX_RATE_PER_S}]/s")
            }
            ConfigErrorKind::ZeroDeadline => write!(
                f,
                "{flag} {v} must be longer than 0: every turn would be cancelled at once"
            ),
            ConfigErrorKind::ZeroTimeout => write!(
                f,
                "{flag} {v} must be longer than 0: it bounds every read and the handshake"
            ),
            ConfigErrorKind::TimeoutBelowDeadline(deadline) => write!(
                f,
                "{flag} {v} is shorter than --deadline {deadline}: a straggler is abandoned at the timeout only after the turn cancelled it at the deadline"
            ),
            ConfigErrorKind::ZeroMaxPhase => write!(f, "{flag} {v} must be longer than 0"),
            ConfigErrorKind::NothingToMeasure => {
                write!(f, "--reads 0 and --turns 0: nothing to measure")
            }
            ConfigErrorKind::ParallelOutOfRange | ConfigErrorKind::ConcurrencyOutOfRange => {
                write!(f, "{flag} must be 1..={MAX_PARALLEL}")
            }
            ConfigErrorKind::MaxInFlightOutOfRange => {
                write!(f, "{flag} {v} must be 1..={MAX_IN_FLIGHT}")
            }
            ConfigErrorKind::OutNotADirectory => write!(
                f,
                "{flag} {v}: exists and is not a directory (--out names a directory for report.json, latency.hlog, latency.svg, report.html)"
            ),
            ConfigErrorKind::OutNotCreatable(e) => {
                write!(f, "{flag} {v}: cannot create the directory: {e}")
            }
            ConfigErrorKind::OutNotWritable(e) => {
                write!(f, "{flag} {v}: directory is not writable: {e}")
            }
            ConfigErrorKind::PointerNoSlash => {
                write!(f, "{flag} {v:?}: a JSON Pointer starts with '/'")
            }
            ConfigErrorKind::PointerBadEscape => write!(
                f,
                "{flag} {v:?}: '~' must be followed by 0 or 1 in a JSON Pointer (RFC 6901: ~0 is '~', ~1 is '/')"
            ),
        }
    }
}

/// Parses the duration setting of `flag` (e.g. `--max-phase`, value `25s`) into µs, at most
/// `max_us`.
///
/// # Errors
/// [`ConfigErrorKind::Duration`] with the parser's reason (bad syntax, above the limit; the
/// message gives the limit in the unit typed: `--max-phase 3601s: 3601s is above the limit: at
/// most 3600s`).
pub fn duration_us(flag: &'static str, s: &str, max_us: u64) -> Result<u64, ConfigError> {
    parse_duration_capped_us(s, max_us)
        .map_err(|e| ConfigError::new(flag, s, ConfigErrorKind::Duration(e.into_spec_kind())))
}

/// Parses an open-loop rate `R/s`, reads per second, in (0, [`MAX_RATE_PER_S`]]. The unit is
/// required: one spelling for rates across the commands (`bench --rate`, `export k6 --rate`).
///
/// # Errors
/// [`ConfigErrorKind::RateWithoutUnit`] (`200`), [`ConfigErrorKind::BadRate`],
/// [`ConfigErrorKind::RateOutOfRange`] (flag `--rate`).
pub fn parse_rate(s: &str) -> Result<f64, ConfigError> {
    let Some(n) = s.trim().strip_suffix("/s") else {
        let kind = if s.trim().parse::<f64>().is_ok() {
            ConfigErrorKind::RateWithoutUnit
        } else {
            ConfigErrorKind::BadRate
        };
        return Err(ConfigError::new("--rate", s, kind));
    };
    let r: f64 = n
        .parse()
        .map_err(|_| ConfigError::new("--rate", s, ConfigErrorKind::BadRate))?;
    if !(r.is_finite() && r > 0.0 && r <= MAX_RATE_PER_S) {
        return Err(ConfigError::new(
            "--rate",
            s,
            ConfigErrorKind::RateOutOfRange,
        ));
    }
    Ok(r)
}

/// Checks before a run that the output directory `dir` (flag `--out`) is, or can be made, a
/// writable directory, so a long run is not lost at the end. Creates it if missing; probes it
/// by writing and removing an empty `.mcptape-write-probe-PID` file.
///
/// # Errors
/// [`ConfigErrorKind::OutNotADirectory`], [`ConfigErrorKind::OutNotCreatable`],
/// [`ConfigErrorKind::OutNotWritable`].
pub fn check_out_dir(dir: &Path) -> Result<(), ConfigError> {
    let err = |kind| ConfigError::new("--out", dir.display().to_string(), kind);
    if dir.exists() && !dir.is_dir() {
        return Err(err(ConfigErrorKind::OutNotADirectory));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| err(ConfigErrorKind::OutNotCreatable(e.to_string())))?;
    let probe = dir.join(format!(".mcptape-write-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| err(ConfigErrorKind::OutNotWritable(e.to_string())))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks a `verify --ignore` JSON Pointer (RFC 6901 §3): empty (the whole document) or
/// starting with `/`, and every `~` followed by `0` or `1`. (`*` as a whole segment is
/// `verify`'s own wildcard and needs no escape.)
///
/// # Errors
/// [`ConfigErrorKind::PointerNoSlash`], [`ConfigErrorKind::PointerBadEscape`] (flag `--ignore`).
pub fn check_ignore_pointer(p: &str) -> Result<(), ConfigError> {
    if !(p.is_empty() || p.starts_with('/')) {
        return Err(ConfigError::new(
            "--ignore",
            p,
            ConfigErrorKind::PointerNoSlash,
        ));
    }
    let bad_escape = p
        .match_indices('~')
        .any(|(i, _)| !matches!(p.as_bytes().get(i + 1), Some(b'0' | b'1')));
    if bad_escape {
        return Err(ConfigError::new(
            "--ignore",
            p,
            ConfigErrorKind::PointerBadEscape,
        ));
    }
    Ok(())
}

/// Checks `verify`'s per-response timeout (flag `--timeout`): > 0, at most [`MAX_DELAY_US`].
///
/// # Errors
/// [`ConfigErrorKind::Duration`], [`ConfigErrorKind::ZeroTimeout`] (whose message here reads
/// `--timeout 0ms must be longer than 0: …`).
pub fn verify_timeout(s: &str) -> Result<Duration, ConfigError> {
    let us = duration_us("--timeout", s, MAX_DELAY_US)?;
    if us == 0 {
        return Err(ConfigError::new(
            "--timeout",
            s,
            ConfigErrorKind::ZeroTimeout,
        ));
    }
    Ok(Duration::from_micros(us))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BenchSettings;
    use mcptape_report::run::Load;

    fn settings() -> BenchSettings<'static> {
        BenchSettings {
            reads: 300,
            turns: 300,
            parallel: 4,
            concurrency: 1,
            rate: None,
            deadline: "800ms",
            timeout: "5s",
            max_phase: "25s",
            max_in_flight: mcptape_report::run::DEFAULT_MAX_IN_FLIGHT,
            validate: false,
        }
    }

    #[test]
    fn defaults_validate_into_microseconds() {
        let c = settings().validate().unwrap();
        assert_eq!(c.deadline_us, 800_000);
        assert_eq!(c.timeout_us, 5_000_000);
        assert_eq!(c.max_phase, Duration::from_secs(25));
        assert!(matches!(c.load, Load::Closed { concurrency: 1 }));
    }

    #[test]
    fn timeout_equal_to_deadline_is_accepted_one_below_is_not() {
        let mut s = settings();
        s.timeout = "800ms";
        assert!(s.validate().is_ok());
        s.timeout = "799999us";
        let e = s.validate().unwrap_err();
        assert_eq!(
            e.kind(),
            &ConfigErrorKind::TimeoutBelowDeadline("800ms".into())
        );
        assert!(
            e.to_string()
                .starts_with("--timeout 799999us is shorter than --deadline 800ms"),
            "{e}"
        );
    }

    /// Sets one count flag to `max` (accepted), `max + 1` (refused: `kind`, `message`) and 0
    /// (refused: `kind`).
    fn assert_count_limit(
        set: fn(&mut BenchSettings<'static>, u32),
        max: u32,
        kind: ConfigErrorKind,
        message: &str,
    ) {
        let mut s = settings();
        set(&mut s, max);
        assert!(s.validate().is_ok());
        let e = refused(|s| set(s, max + 1));
        assert_eq!(e.kind(), &kind);
        assert_eq!(e.to_string(), message);
        assert_eq!(refused(|s| set(s, 0)).kind(), &kind);
    }

    /// The error of the default [`settings`] changed by `change`.
    fn refused(change: impl FnOnce(&mut BenchSettings<'static>)) -> ConfigError {
        let mut s = settings();
        change(&mut s);
        s.validate().unwrap_err()
    }

    #[test]
    fn parallel_at_the_limit_is_accepted_one_past_is_not() {
        assert_count_limit(
            |s, v| s.parallel = v,
            MAX_PARALLEL,
            ConfigErrorKind::ParallelOutOfRange,
            "--parallel must be 1..=1024",
        );
    }

    #[test]
    fn concurrency_at_the_limit_is_accepted_one_past_is_not() {
        assert_count_limit(
            |s, v| s.concurrency = v,
            MAX_PARALLEL,
            ConfigErrorKind::ConcurrencyOutOfRange,
            "--concurrency must be 1..=1024",
        );
    }

    #[test]
    fn max_in_flight_at_the_limit_is_accepted_one_past_is_not() {
        let mut s = settings();
        s.max_in_flight = MAX_IN_FLIGHT;
        assert_eq!(s.validate().unwrap().max_in_flight, 65_536);
        assert_count_limit(
            |s, v| s.max_in_flight = v,
            MAX_IN_FLIGHT,
            ConfigErrorKind::MaxInFlightOutOfRange,
            "--max-in-flight 65537 must be 1..=65536",
        );
    }

    #[test]
    fn zero_durations_and_nothing_to_measure_are_rejected() {
        let e = refused(|s| s.deadline = "0ms");
        assert_eq!(e.kind(), &ConfigErrorKind::ZeroDeadline);
        let e = refused(|s| s.timeout = "0");
        assert_eq!(e.kind(), &ConfigErrorKind::ZeroTimeout);
        assert!(
            e.to_string()
                .starts_with("--timeout 0 must be longer than 0")
        );
        let e = refused(|s| s.max_phase = "0s");
        assert_eq!(e.kind(), &ConfigErrorKind::ZeroMaxPhase);
        let e = refused(|s| (s.reads, s.turns) = (0, 0));
        assert_eq!(e.to_string(), "--reads 0 and --turns 0: nothing to measure");
    }

    #[test]
    fn rate_at_the_limit_is_accepted_one_past_is_not() {
        assert_eq!(parse_rate("200/s").unwrap(), 200.0);
        // The unit is required, and the error says so (issue 25).
        let e = parse_rate("200").unwrap_err();
        assert_eq!(e.kind(), &ConfigErrorKind::RateWithoutUnit);
        assert_eq!(
            e.to_string(),
            "--rate \"200\": a rate needs its unit, per second: 200/s"
        );
        assert_eq!(
            parse_rate("200/m").unwrap_err().kind(),
            &ConfigErrorKind::BadRate
        );
        assert_eq!(parse_rate("1000000/s").unwrap(), MAX_RATE_PER_S);
        assert_eq!(
            parse_rate("1000001/s").unwrap_err().kind(),
            &ConfigErrorKind::RateOutOfRange
        );
        assert_eq!(
            parse_rate("0/s").unwrap_err().kind(),
            &ConfigErrorKind::RateOutOfRange
        );
        assert_eq!(
            parse_rate("fast").unwrap_err().kind(),
            &ConfigErrorKind::BadRate
        );
    }

    #[test]
    fn ignore_pointer_rules_follow_rfc_6901() {
        assert!(check_ignore_pointer("").is_ok());
        assert!(check_ignore_pointer("/result/contents/*/text").is_ok());
        assert!(check_ignore_pointer("/a~0b/c~1d").is_ok());
        assert_eq!(
            check_ignore_pointer("result").unwrap_err().kind(),
            &ConfigErrorKind::PointerNoSlash
        );
        let e = check_ignore_pointer("/a~2").unwrap_err();
        assert_eq!(e.kind(), &ConfigErrorKind::PointerBadEscape);
        assert!(
            e.to_string().contains("'~' must be followed by 0 or 1"),
            "{e}"
        );
        assert_eq!(
            check_ignore_pointer("/a~").unwrap_err().kind(),
            &ConfigErrorKind::PointerBadEscape
        );
    }

    #[test]
    fn out_dir_that_is_a_file_is_rejected() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        let e = check_out_dir(&f).unwrap_err();
        assert_eq!(e.kind(), &ConfigErrorKind::OutNotADirectory);
        assert!(e.to_string().contains("is not a directory"), "{e}");
        let d = tmp.path().join("new/sub");
        check_out_dir(&d).unwrap();
        assert!(d.is_dir());
    }
}
