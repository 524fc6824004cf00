//! Latency models (`--latency`) and fault specs (`--fault`), parsed from the
//! command-line strings of `mcptape serve` and `mcptape bench`.
//!
//! A model gives the *server-side* delay of one response in microseconds (µs),
//! measured from the moment the request line was read to the moment the
//! response is written. Grammar:
//!
//! | spec | meaning |
//! |---|---|
//! | `recorded` | each response's own recorded delay (`t_us` of the reply − `t_us` of the request) |
//! | `fixed:12ms` | every response after exactly 12 ms |
//! | `lognormal:p50=12ms,p99=40ms` | log-normal with that median and 99th percentile |
//! | `scale:2.0` | recorded delay × 2.0 |
//! | `empirical:FILE` | draws from an HdrHistogram interval log (`.hlog`, µs) of an earlier run |
//!
//! Durations accept `us`/`µs`, `ms` and `s` suffixes with an optional fraction
//! (`1.5ms`).

use crate::config::ConfigError;
use std::fmt;

use hdrhistogram::Histogram;
use rand::Rng;
use rand_distr::Distribution;

/// Largest delay a model may produce or name: 60 s, in µs. Longer than any
/// client timeout worth testing; a spec naming more is rejected
/// ([`SpecErrorKind::DelayTooLarge`]) and a log-normal draw above it is capped
/// at it (the cap is documented, not silent: [`LatencyModel::sample_us`]).
pub const MAX_DELAY_US: u64 = 60_000_000;

/// Largest `scale:` factor: 1000.
pub const MAX_SCALE: f64 = 1000.0;

/// Largest spec string accepted, in bytes.
pub const MAX_SPEC_LEN: usize = 4096;

/// z-score of the 99th percentile of the standard normal distribution.
pub const Z_P99: f64 = 2.326_347_874_040_840_8;

/// What was wrong with a spec.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// The model or fault name is not one of the known ones.
    #[error("unknown name {0:?}")]
    UnknownName(String),
    /// A duration was not `<number>(us|µs|ms|s)`.
    #[error("bad duration {0:?} (expected e.g. 12ms, 800us, 1.5s)")]
    BadDuration(String),
    /// A number (factor, percentage, error code) did not parse.
    #[error("bad number {0:?}")]
    BadNumber(String),
    /// A duration above its limit ([`MAX_DELAY_US`] for a model's delay and
    /// most flags): `given` is the duration as typed, `limit_us` the limit in
    /// µs, shown in the unit of `given` (`61s` → "at most 60s").
    #[error("{given} is above the limit: at most {}", in_unit_of(.given, *.limit_us))]
    DelayTooLarge {
        /// The duration as typed (e.g. `61s`).
        given: String,
        /// The limit, µs.
        limit_us: u64,
    },
    /// `scale:` factor negative, not finite or above [`MAX_SCALE`].
    #[error("scale factor {0} is outside 0..={MAX_SCALE}")]
    ScaleOutOfRange(f64),
    /// `lognormal:` with p99 not strictly above p50, or p50 of zero.
    #[error("lognormal needs 0 < p50 < p99")]
    LogNormalOrder,
    /// A required key (`p50=`, `p99=`) is missing.
    #[error("missing key {0}")]
    MissingKey(&'static str),
    /// A percentage outside 0..=100, or fault shares adding up to more than 100%.
    #[error("percentage {0} is outside 0..=100%")]
    PercentOutOfRange(f64),
    /// The spec is longer than [`MAX_SPEC_LEN`].
    #[error("spec is longer than {MAX_SPEC_LEN} bytes")]
    TooLong,
    /// `empirical:FILE` could not be read or holds no histogram.
    #[error("empirical log: {0}")]
    Empirical(String),
}

/// `limit_us` written in the unit `given` was typed in: `60s`, `60000ms`,
/// `60000000µs` (a bare `0` counts as µs).
fn in_unit_of(given: &str, limit_us: u64) -> String {
    let t = given.trim();
    let v = limit_us as f64;
    if t.ends_with("ms") {
        format!("{}ms", v / 1_000.0)
    } else if t.ends_with("us") || t.ends_with("µs") || !t.ends_with('s') {
        format!("{limit_us}µs")
    } else {
        format!("{}s", v / 1_000_000.0)
    }
}

/// Parses a duration such as `12ms`, `800us`, `800µs`, `1.5s`, `0` into µs.
///
/// # Errors
/// [`SpecErrorKind::BadDuration`] for anything else, [`SpecErrorKind::DelayTooLarge`]
/// above [`MAX_DELAY_US`] (60 s).
pub fn parse_duration_us(s: &str) -> Result<u64, ConfigError> {
    parse_duration_capped_us(s, MAX_DELAY_US)
}

/// Like [`parse_duration_us`] with the limit `max_us` (µs) instead of
/// [`MAX_DELAY_US`], for a bound that may be longer (e.g. `bench --max-phase`,
/// [`mcptape_report::run::MAX_PHASE_US`]).
///
/// # Errors
/// [`SpecErrorKind::BadDuration`] for anything but `<number>(us|µs|ms|s)` or
/// `0`, [`SpecErrorKind::DelayTooLarge`] above `max_us`.
pub fn parse_duration_capped_us(s: &str, max_us: u64) -> Result<u64, ConfigError> {
    let bad = || ConfigError::spec(s, 0, SpecErrorKind::BadDuration(s.to_owned()));
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("µs") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1_000.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1_000_000.0)
    } else if t == "0" {
        ("0", 1.0)
    } else {
        return Err(bad());
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let us = v * mult;
    if !us.is_finite() || us < 0.0 {
        return Err(bad());
    }
    if us > max_us as f64 {
        return Err(ConfigError::spec(
            s,
            0,
            SpecErrorKind::DelayTooLarge {
                given: t.chars().take(64).collect(),
                limit_us: max_us,
            },
        ));
    }
    Ok(us.round() as u64)
}

/// A server-side latency model (see the module docs for the grammar).
#[derive(Clone)]
#[non_exhaustive]
pub enum LatencyModel {
    /// Each response's recorded delay.
    Recorded,
    /// Every response after `delay_us` µs.
    Fixed {
        /// The delay, µs.
        delay_us: u64,
    },
    /// Log-normal with the given median and 99th percentile (µs):
    /// `mu = ln p50`, `sigma = (ln p99 − ln p50) / z(0.99)`.
    LogNormal {
        /// Median, µs.
        p50_us: u64,
        /// 99th percentile, µs.
        p99_us: u64,
        /// The distribution (of µs values).
        dist: rand_distr::LogNormal<f64>,
    },
    /// Recorded delay × `factor`.
    Scale {
        /// Multiplier, 0..=[`MAX_SCALE`].
        factor: f64,
    },
    /// Draws from a histogram of µs values read from an `.hlog` file (all
    /// intervals merged); a request whose method has its own tag in the log
    /// (`method-tools-call`… of a bench run, [`mcptape_report::render::hlog::method_tag`])
    /// draws from that tag instead.
    Empirical {
        /// Where it came from.
        path: String,
        /// The merged histogram, µs.
        hist: Box<Histogram<u64>>,
        /// Per-method histograms, by `.hlog` tag (`method-tools-call`), µs; empty
        /// for a log without method tags.
        by_method: std::collections::BTreeMap<String, Histogram<u64>>,
    },
}

impl fmt::Debug for LatencyModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for LatencyModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LatencyModel::Recorded => write!(f, "recorded"),
            LatencyModel::Fixed { delay_us } => write!(f, "fixed:{}", fmt_us(*delay_us)),
            LatencyModel::LogNormal { p50_us, p99_us, .. } => {
                write!(
                    f,
                    "lognormal:p50={},p99={}",
                    fmt_us(*p50_us),
                    fmt_us(*p99_us)
                )
            }
            LatencyModel::Scale { factor } => write!(f, "scale:{factor}"),
            LatencyModel::Empirical { path, .. } => write!(f, "empirical:{path}"),
        }
    }
}

/// Formats µs as the shortest of `Nus`, `N.NNNms`, trimmed (`12ms`, `1.5ms`, `800us`).
pub fn fmt_us(us: u64) -> String {
    if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else if us < 1000 {
        format!("{us}us")
    } else {
        let s = format!("{:.3}", us as f64 / 1000.0);
        format!("{}ms", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// Reads the regular file `path` through the one file-opening policy
/// ([`mcptape_transcript::file::read_regular`]): a FIFO, socket or device fails at once (`not a
/// regular file (FIFO, socket or device)`) instead of blocking the open until a writer comes.
fn read_regular(path: &str) -> std::io::Result<Vec<u8>> {
    use mcptape_transcript::file::FileErrorKind;
    mcptape_transcript::file::read_regular(path.as_ref()).map_err(|e| match e.into_kind() {
        FileErrorKind::IsDirectory => std::io::Error::other("is a directory, not an .hlog file"),
        FileErrorKind::Io(io) => io,
        _ => std::io::Error::other("not a regular file (FIFO, socket or device)"),
    })
}

/// Refuses a `--latency` or `--fault` spec longer than [`MAX_SPEC_LEN`] before it is read.
fn check_spec_len(spec: &str) -> Result<(), ConfigError> {
    if spec.len() > MAX_SPEC_LEN {
        return Err(ConfigError::spec(
            spec,
            MAX_SPEC_LEN,
            SpecErrorKind::TooLong,
        ));
    }
    Ok(())
}

impl LatencyModel {
    /// Parses a `--latency` spec. `empirical:FILE` reads FILE (an HdrHistogram
    /// interval log as written by `mcptape bench --out`; a regular file: a FIFO, socket or
    /// device is refused at once).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the failing part.
    pub fn parse(spec: &str) -> Result<LatencyModel, ConfigError> {
        check_spec_len(spec)?;
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (spec, None),
        };
        let off = name.len() + 1;
        let err = |offset: usize, kind| ConfigError::spec(spec, offset, kind);
        match (name, rest) {
            ("recorded", None) => Ok(LatencyModel::Recorded),
            ("fixed", Some(d)) => {
                let delay_us = parse_duration_us(d).map_err(|e| err(off, e.into_spec_kind()))?;
                Ok(LatencyModel::Fixed { delay_us })
            }
            ("scale", Some(x)) => {
                let factor: f64 = x
                    .trim()
                    .parse()
                    .map_err(|_| err(off, SpecErrorKind::BadNumber(x.to_owned())))?;
                if !factor.is_finite() || !(0.0..=MAX_SCALE).contains(&factor) {
                    return Err(err(off, SpecErrorKind::ScaleOutOfRange(factor)));
                }
                Ok(LatencyModel::Scale { factor })
            }
            ("lognormal", Some(kv)) => {
                let (mut p50, mut p99) = (None, None);
                let mut pos = off;
                for part in kv.split(',') {
                    let (k, v) = part
                        .split_once('=')
                        .ok_or_else(|| err(pos, SpecErrorKind::UnknownName(part.to_owned())))?;
                    let d = parse_duration_us(v)
                        .map_err(|e| err(pos + k.len() + 1, e.into_spec_kind()))?;
                    match k.trim() {
                        "p50" => p50 = Some(d),
                        "p99" => p99 = Some(d),
                        other => {
                            return Err(err(pos, SpecErrorKind::UnknownName(other.to_owned())));
                        }
                    }
                    pos += part.len() + 1;
                }
                let p50_us = p50.ok_or_else(|| err(off, SpecErrorKind::MissingKey("p50")))?;
                let p99_us = p99.ok_or_else(|| err(off, SpecErrorKind::MissingKey("p99")))?;
                LatencyModel::lognormal(p50_us, p99_us).map_err(|k| err(off, k))
            }
            ("empirical", Some(path)) => {
                let bytes = read_regular(path)
                    .map_err(|e| err(off, SpecErrorKind::Empirical(format!("{path}: {e}"))))?;
                let hist = mcptape_report::render::merge_hlog(&bytes)
                    .map_err(|e| err(off, SpecErrorKind::Empirical(format!("{path}: {e}"))))?;
                // The method tags of a bench log: each method keeps its own distribution.
                let by_method = mcptape_report::render::hlog::read_hlog(&bytes)
                    .map(|r| {
                        r.tags
                            .into_iter()
                            .filter(|t| t.tag.starts_with("method-") && !t.hist.is_empty())
                            .map(|t| (t.tag, t.hist))
                            .collect()
                    })
                    .unwrap_or_default();
                Ok(LatencyModel::Empirical {
                    path: path.to_owned(),
                    hist: Box::new(hist),
                    by_method,
                })
            }
            _ => Err(err(0, SpecErrorKind::UnknownName(name.to_owned()))),
        }
    }

    /// A log-normal model from its median and 99th percentile, µs.
    ///
    /// # Errors
    /// [`SpecErrorKind::LogNormalOrder`] unless `0 < p50_us < p99_us`.
    pub fn lognormal(p50_us: u64, p99_us: u64) -> Result<LatencyModel, SpecErrorKind> {
        if p50_us == 0 || p99_us <= p50_us {
            return Err(SpecErrorKind::LogNormalOrder);
        }
        let mu = (p50_us as f64).ln();
        let sigma = ((p99_us as f64).ln() - mu) / Z_P99;
        let dist =
            rand_distr::LogNormal::new(mu, sigma).map_err(|_| SpecErrorKind::LogNormalOrder)?;
        Ok(LatencyModel::LogNormal {
            p50_us,
            p99_us,
            dist,
        })
    }

    /// Draws one delay in µs. `recorded_us` is the response's recorded delay
    /// (`None` when the transcript has none: treated as 0 by `recorded` and
    /// `scale`). Results are capped at [`MAX_DELAY_US`]. Consumes exactly one
    /// random draw for `lognormal` and `empirical`, none otherwise, so a seed
    /// gives the same schedule.
    pub fn sample_us<R: Rng + ?Sized>(&self, rng: &mut R, recorded_us: Option<u64>) -> u64 {
        self.sample_us_for(rng, recorded_us, None)
    }

    /// [`sample_us`](Self::sample_us) for a request of `method`: `empirical` draws from the
    /// log's tag of that method when it has one ([`mcptape_report::render::hlog::method_tag`]), else
    /// from the whole log. `recorded` is per response already (each exchange's own delay).
    pub fn sample_us_for<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        recorded_us: Option<u64>,
        method: Option<&str>,
    ) -> u64 {
        let v = match self {
            LatencyModel::Recorded => recorded_us.unwrap_or(0),
            LatencyModel::Fixed { delay_us } => *delay_us,
            LatencyModel::LogNormal { dist, .. } => {
                let x = dist.sample(rng);
                if x.is_finite() && x >= 0.0 {
                    x.min(MAX_DELAY_US as f64).round() as u64
                } else {
                    MAX_DELAY_US
                }
            }
            LatencyModel::Scale { factor } => (recorded_us.unwrap_or(0) as f64 * factor)
                .min(MAX_DELAY_US as f64)
                .round() as u64,
            LatencyModel::Empirical {
                hist, by_method, ..
            } => {
                let q: f64 = rng.random();
                let own = method
                    .and_then(|m| by_method.get(&mcptape_report::render::hlog::method_tag(m)));
                own.unwrap_or(hist).value_at_quantile(q)
            }
        };
        v.min(MAX_DELAY_US)
    }

    /// The model's own `q`-quantile (0..=1) in µs, where it has one without
    /// the transcript: `fixed`, `lognormal`, `empirical`. `None` for
    /// `recorded` and `scale` (their quantiles come from the recorded delays).
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        match self {
            LatencyModel::Fixed { delay_us } => Some(*delay_us as f64),
            LatencyModel::LogNormal { p50_us, p99_us, .. } => {
                let mu = (*p50_us as f64).ln();
                let sigma = ((*p99_us as f64).ln() - mu) / Z_P99;
                Some((mu + sigma * inverse_normal_cdf(q)).exp())
            }
            LatencyModel::Empirical { hist, .. } => Some(hist.value_at_quantile(q) as f64),
            LatencyModel::Recorded | LatencyModel::Scale { .. } => None,
        }
    }
}

/// Inverse of the standard normal CDF (Acklam's rational approximation,
/// relative error below 1.2e-9). `p` is clamped into (0, 1).
pub fn inverse_normal_cdf(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-15, 1.0 - 1e-15);
    let plow = 0.02425;
    if p < plow {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - plow {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

/// One injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Never answer this request (exercises the client's timeout).
    Stall,
    /// Answer with a JSON-RPC error of this code instead of the recorded reply.
    Error {
        /// JSON-RPC error code, e.g. -32603 (Internal error, JSON-RPC 2.0 §5.1).
        code: i64,
    },
    /// Close the connection (stdio: end the session; HTTP: close the TCP connection).
    DropConnection,
}

/// Fault shares from `--fault` (each in parts per million of requests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultSpec {
    /// Share of requests that stall, ppm.
    pub stall_ppm: u32,
    /// Error code and share of requests answered with it, ppm.
    pub error: Option<(i64, u32)>,
    /// Share of requests that drop the connection, ppm.
    pub drop_ppm: u32,
}

fn parse_percent_ppm(spec: &str, offset: usize, p: &str) -> Result<u32, ConfigError> {
    let num = p
        .trim()
        .strip_suffix('%')
        .ok_or_else(|| ConfigError::spec(spec, offset, SpecErrorKind::BadNumber(p.to_owned())))?;
    let v: f64 = num
        .parse()
        .map_err(|_| ConfigError::spec(spec, offset, SpecErrorKind::BadNumber(p.to_owned())))?;
    if !v.is_finite() || !(0.0..=100.0).contains(&v) {
        return Err(ConfigError::spec(
            spec,
            offset,
            SpecErrorKind::PercentOutOfRange(v),
        ));
    }
    Ok((v * 10_000.0).round() as u32)
}

impl FaultSpec {
    /// Parses a comma-separated list of `stall=P%`, `error=CODE@P%`,
    /// `drop-connection@P%` (e.g. `stall=0.5%,error=-32603@1%`). May be
    /// called once per `--fault` flag and the results [`merged`](Self::merge).
    ///
    /// # Errors
    /// A [`ConfigError`] naming the failing part; shares adding up past 100% are
    /// [`SpecErrorKind::PercentOutOfRange`].
    pub fn parse(spec: &str) -> Result<FaultSpec, ConfigError> {
        check_spec_len(spec)?;
        let err = |offset: usize, kind| ConfigError::spec(spec, offset, kind);
        let mut out = FaultSpec::default();
        let mut pos = 0;
        for part in spec.split(',') {
            if let Some(p) = part
                .strip_prefix("stall=")
                .or_else(|| part.strip_prefix("stall@"))
            {
                out.stall_ppm = parse_percent_ppm(spec, pos + 6, p)?;
            } else if let Some(rest) = part.strip_prefix("error=") {
                let (code, p) = rest
                    .split_once('@')
                    .ok_or_else(|| err(pos + 6, SpecErrorKind::BadNumber(rest.to_owned())))?;
                let code: i64 = code
                    .trim()
                    .parse()
                    .map_err(|_| err(pos + 6, SpecErrorKind::BadNumber(code.to_owned())))?;
                out.error = Some((
                    code,
                    parse_percent_ppm(spec, pos + 7 + rest.len() - p.len(), p)?,
                ));
            } else if let Some(p) = part
                .strip_prefix("drop-connection@")
                .or_else(|| part.strip_prefix("drop-connection="))
            {
                out.drop_ppm = parse_percent_ppm(spec, pos + 16, p)?;
            } else {
                return Err(err(pos, SpecErrorKind::UnknownName(part.to_owned())));
            }
            pos += part.len() + 1;
        }
        out.check(spec)?;
        Ok(out)
    }

    /// Merges `other` into `self` (later flags win per fault kind).
    ///
    /// # Errors
    /// [`SpecErrorKind::PercentOutOfRange`] when the shares add up past 100%.
    pub fn merge(&mut self, other: FaultSpec) -> Result<(), ConfigError> {
        if other.stall_ppm > 0 {
            self.stall_ppm = other.stall_ppm;
        }
        if other.error.is_some() {
            self.error = other.error;
        }
        if other.drop_ppm > 0 {
            self.drop_ppm = other.drop_ppm;
        }
        self.check("(merged --fault flags)")
    }

    fn check(&self, spec: &str) -> Result<(), ConfigError> {
        let total = u64::from(self.stall_ppm)
            + u64::from(self.drop_ppm)
            + u64::from(self.error.map_or(0, |e| e.1));
        if total > 1_000_000 {
            return Err(ConfigError::spec(
                spec,
                0,
                SpecErrorKind::PercentOutOfRange(total as f64 / 10_000.0),
            ));
        }
        Ok(())
    }

    /// Picks the fault (if any) for one request from a uniform draw `u` in
    /// 0..1_000_000 (ppm): stall first, then error, then drop.
    pub fn pick(&self, u_ppm: u32) -> Option<Fault> {
        let mut edge = self.stall_ppm;
        if u_ppm < edge {
            return Some(Fault::Stall);
        }
        if let Some((code, ppm)) = self.error {
            edge += ppm;
            if u_ppm < edge {
                return Some(Fault::Error { code });
            }
        }
        edge += self.drop_ppm;
        if u_ppm < edge {
            return Some(Fault::DropConnection);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec error kind of a parse that must fail.
    fn spec_err<T: std::fmt::Debug>(parsed: Result<T, ConfigError>) -> SpecErrorKind {
        parsed.unwrap_err().spec_kind().cloned().unwrap()
    }

    #[test]
    fn duration_units() {
        assert_eq!(parse_duration_us("12ms").unwrap(), 12_000);
        assert_eq!(parse_duration_us("1.5ms").unwrap(), 1_500);
        assert_eq!(parse_duration_us("800us").unwrap(), 800);
        assert_eq!(parse_duration_us("800µs").unwrap(), 800);
        assert_eq!(parse_duration_us("5s").unwrap(), 5_000_000);
        assert_eq!(parse_duration_us("0").unwrap(), 0);
        assert!(parse_duration_us("12").is_err());
        assert!(parse_duration_us("-1ms").is_err());
        assert!(parse_duration_us("ms").is_err());
    }

    #[test]
    fn delay_limit_at_and_past() {
        assert_eq!(parse_duration_us("60s").unwrap(), MAX_DELAY_US);
        let e = parse_duration_us("60.000001s").unwrap_err();
        assert_eq!(
            e.spec_kind().cloned().unwrap(),
            SpecErrorKind::DelayTooLarge {
                given: "60.000001s".into(),
                limit_us: MAX_DELAY_US
            }
        );
        assert_eq!(
            e.spec_kind().cloned().unwrap().to_string(),
            "60.000001s is above the limit: at most 60s"
        );
    }

    /// Fresh-user report 2, N5: the limit is shown in the unit typed, and a
    /// huge value is shown as typed, not saturated.
    #[test]
    fn delay_limit_error_uses_the_unit_typed_and_the_value_as_typed() {
        let e = parse_duration_us("60001ms").unwrap_err();
        assert_eq!(
            e.spec_kind().cloned().unwrap().to_string(),
            "60001ms is above the limit: at most 60000ms"
        );
        let e = parse_duration_us("60000001us").unwrap_err();
        assert_eq!(
            e.spec_kind().cloned().unwrap().to_string(),
            "60000001us is above the limit: at most 60000000µs"
        );
        let e = parse_duration_us("18446744073709551s").unwrap_err();
        assert_eq!(
            e.spec_kind().cloned().unwrap().to_string(),
            "18446744073709551s is above the limit: at most 60s"
        );
        assert_eq!(
            parse_duration_capped_us("3600s", 3_600_000_000).unwrap(),
            3_600_000_000
        );
        let e = parse_duration_capped_us("3600.001s", 3_600_000_000).unwrap_err();
        assert_eq!(
            e.spec_kind().cloned().unwrap().to_string(),
            "3600.001s is above the limit: at most 3600s"
        );
    }

    #[test]
    fn spec_length_limit_at_and_past() {
        let at = format!("fixed:{}ms", "0".repeat(MAX_SPEC_LEN - 8));
        assert_eq!(at.len(), MAX_SPEC_LEN);
        assert!(matches!(
            LatencyModel::parse(&at),
            Ok(LatencyModel::Fixed { delay_us: 0 })
        ));
        let past = format!("fixed:{}ms", "0".repeat(MAX_SPEC_LEN - 7));
        assert_eq!(spec_err(LatencyModel::parse(&past)), SpecErrorKind::TooLong);
    }

    #[test]
    fn models_parse_and_print() {
        for s in [
            "recorded",
            "fixed:12ms",
            "lognormal:p50=12ms,p99=40ms",
            "scale:2",
        ] {
            assert_eq!(LatencyModel::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            spec_err(LatencyModel::parse("lognormal:p50=40ms,p99=12ms")),
            SpecErrorKind::LogNormalOrder
        );
        assert_eq!(
            spec_err(LatencyModel::parse("lognormal:p50=12ms")),
            SpecErrorKind::MissingKey("p99")
        );
        assert_eq!(
            spec_err(LatencyModel::parse("scale:1000.5")),
            SpecErrorKind::ScaleOutOfRange(1000.5)
        );
        assert!(matches!(
            spec_err(LatencyModel::parse("gaussian:1ms")),
            SpecErrorKind::UnknownName(_)
        ));
    }

    #[test]
    fn lognormal_quantiles_match_its_parameters() {
        let m = LatencyModel::parse("lognormal:p50=12ms,p99=40ms").unwrap();
        assert!((m.quantile_us(0.5).unwrap() - 12_000.0).abs() < 0.01);
        assert!((m.quantile_us(0.99).unwrap() - 40_000.0).abs() < 0.5);
        // 20k draws: empirical median within 3% of 12 ms.
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut v: Vec<u64> = (0..20_000).map(|_| m.sample_us(&mut rng, None)).collect();
        v.sort_unstable();
        let med = v[10_000] as f64;
        assert!((med - 12_000.0).abs() < 360.0, "median {med}");
        let p99 = v[19_800] as f64;
        assert!((p99 - 40_000.0).abs() < 2_400.0, "p99 {p99}");
    }

    #[test]
    fn recorded_and_scale_use_the_recorded_delay() {
        let mut rng = rand::rng();
        assert_eq!(
            LatencyModel::Recorded.sample_us(&mut rng, Some(3_456)),
            3_456
        );
        let m = LatencyModel::parse("scale:2.0").unwrap();
        assert_eq!(m.sample_us(&mut rng, Some(3_456)), 6_912);
        assert_eq!(m.sample_us(&mut rng, None), 0);
    }

    #[test]
    fn fault_specs() {
        let f = FaultSpec::parse("stall=0.5%,error=-32603@1%,drop-connection@0.1%").unwrap();
        assert_eq!(f.stall_ppm, 5_000);
        assert_eq!(
            f.error,
            Some((mcptape_wire::protocol::error_code::INTERNAL_ERROR, 10_000))
        );
        assert_eq!(f.drop_ppm, 1_000);
        assert_eq!(f.pick(0), Some(Fault::Stall));
        assert_eq!(f.pick(4_999), Some(Fault::Stall));
        assert_eq!(
            f.pick(5_000),
            Some(Fault::Error {
                code: mcptape_wire::protocol::error_code::INTERNAL_ERROR
            })
        );
        assert_eq!(
            f.pick(14_999),
            Some(Fault::Error {
                code: mcptape_wire::protocol::error_code::INTERNAL_ERROR
            })
        );
        assert_eq!(f.pick(15_000), Some(Fault::DropConnection));
        assert_eq!(f.pick(16_000), None);
        assert!(matches!(
            spec_err(FaultSpec::parse("stall=60%,drop-connection@41%")),
            SpecErrorKind::PercentOutOfRange(_)
        ));
        assert!(matches!(
            spec_err(FaultSpec::parse("stall=101%")),
            SpecErrorKind::PercentOutOfRange(_)
        ));
        assert!(matches!(
            spec_err(FaultSpec::parse("explode=1%")),
            SpecErrorKind::UnknownName(_)
        ));
    }

    /// Issue 27: `empirical:FILE` on a bench log with method tags draws each method from its
    /// own tag (a tool that took 50 ms keeps 50 ms), and a method without a tag from the log.
    #[test]
    fn empirical_draws_each_method_from_its_own_tag() {
        use mcptape_report::render::hlog::{Tagged, method_tag, write_hlog};
        use rand::SeedableRng;
        let hist_of = |us: u64| {
            let mut h = mcptape_report::stats::new_hist();
            h.record_n(us, 100).unwrap();
            h
        };
        let (single, tools) = (hist_of(1_000), hist_of(50_000));
        let tag = method_tag("tools/call");
        assert_eq!(tag, "method-tools-call");
        let log = write_hlog(
            &[
                Tagged::new("single", &single, 0.0, 1.0),
                Tagged::new(&tag, &tools, 0.0, 1.0),
            ],
            "test",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.hlog");
        std::fs::write(&path, log).unwrap();
        let m = LatencyModel::parse(&format!("empirical:{}", path.display())).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..50 {
            let t = m.sample_us_for(&mut rng, None, Some("tools/call"));
            assert!(tools.equivalent(t, 50_000), "{t}");
            let p = m.sample_us_for(&mut rng, None, Some("prompts/get"));
            assert!(single.equivalent(p, 1_000), "{p}");
            let r = m.sample_us(&mut rng, None);
            assert!(single.equivalent(r, 1_000), "{r}");
        }
    }
}
